/*
 * evfmt: the event table a trace file needs, and nothing else.
 *
 * A trace carries the formats of every event the kernel had plus kallsyms
 * and printk formats; libtracecmd parses all of it (5.4 MB of kallsyms took
 * 84 % of the instructions on a 78 k-event file).  The decoder needs only
 * header_page and the fields of its own events (evfmt_events[]), so this
 * module walks the "tracing data" layout with bounds checks, skips what is
 * not ours without parsing it, and reads our formats' field lines itself.
 *
 * The tracing-data layout (trace-cmd.dat.v6(5); perf.data's HEADER_TRACING_DATA
 * feature, tools/perf/Documentation/perf.data-file-format.txt):
 *	"\027\010\104tracing" VERSION\0 endian(1) long_size(1) page_size(4)
 *	"header_page\0" size(8) data  "header_event\0" size(8) data
 *	ftrace formats: count(4) {size(8) data}
 *	event formats: nsystems(4) {name\0 count(4) {size(8) data}}
 *	kallsyms: size(4) data   printk: size(4) data
 *	saved cmdlines: size(8) data (version >= 0.6)
 * A trace-cmd v6 file starts with exactly this; a v7 file keeps the same
 * pieces in sections, which tdat.c locates and hands over as an evfmt_layout.
 */
#ifndef TA_EVFMT_H
#define TA_EVFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/bcur.h"
#include "../util/err.h"

/* Where the pieces the event table is built from lie (all inside one buffer). */
struct evfmt_layout {
	bool big_endian;
	int long_size;			/* 4 or 8 */
	uint32_t page_size;
	const unsigned char *header_page;	/* header_page format text */
	size_t header_page_len;
	const unsigned char *events;	/* nsystems(4) {name\0 count(4) {size(8) data}} */
	size_t events_len;
	const char *cmdlines;		/* "pid comm\n"..., may be NULL */
	size_t cmdlines_len;
	size_t end;			/* bytes of the layout (evfmt_scan) */
};

/*
 * Reads one `TAG\0 size(8) data` piece (header_page, header_event) at s,
 * setting *data and *len to the data in place.
 */
int evfmt_header_part(struct bcur *s, const char *tag, const unsigned char **data, size_t *len,
		      struct ta_err *err);

/*
 * Scans the tracing-data layout at p (len bytes; base is p's file offset,
 * for messages).  Every length is checked against len before it is used.
 * Fails with EXIT_BAD_INPUT, saying what is wrong and at which offset.
 */
int evfmt_scan(const unsigned char *p, size_t len, uint64_t base, struct evfmt_layout *out,
	       struct ta_err *err);

/*
 * The events a table holds, {system, name}, in the order of enum
 * evfmt_event_index: every event the decoder reads, and nothing else.
 */
enum evfmt_event_index {
	EVFMT_RUN_CORE,		/* kvm_hv/kvmppc_run_core */
	EVFMT_GUEST_EXIT,	/* kvm_hv/kvm_guest_exit */
	EVFMT_KVM_EXIT,		/* kvm/kvm_exit */
	EVFMT_USERSPACE_EXIT,	/* kvm/kvm_userspace_exit */
	EVFMT_NEVENTS
};
extern const char *const evfmt_events[EVFMT_NEVENTS][2];

#define EVFMT_MAX_FIELDS 64
#define EVFMT_NAME_MAX 64

struct evfmt_field {
	char name[EVFMT_NAME_MAX];
	int offset, size;
	bool is_signed;
};

struct evfmt_event {
	bool present;
	int id;				/* the common_type value of its records */
	int nfields;
	struct evfmt_field fields[EVFMT_MAX_FIELDS];
};

/*
 * What the decoder needs of a trace's formats: the page header's layout and
 * the fields of our events, read by our own strict parser.  Format texts
 * come from untrusted files, and libtraceevent's parser has crashed on
 * damaged ones (SEGV, SIGFPE in its print-format parsing, found by fuzzing):
 * no third-party parser ever sees them.  Only the field lines are read; the
 * print format is never needed.
 */
struct evfmt_table {
	bool big_endian;
	int long_size;			/* 4 or 8 */
	uint32_t page_size;
	int commit_size;		/* a page header's commit field: 4 or 8 bytes */
	struct evfmt_event events[EVFMT_NEVENTS];
};

/* An empty table (no page header yet, no events) of the given data layout. */
void evfmt_table_init(struct evfmt_table *t, bool big_endian, int long_size,
		      uint32_t page_size);

/*
 * Reads the ring buffer's page header format (events/header_page): its
 * timestamp, commit and data fields must be where every kernel since
 * 2.6.31 puts them.  An empty text (older kernels) is refused.
 */
int evfmt_table_header_page(struct evfmt_table *t, const char *text, size_t len,
			    struct ta_err *err);

/*
 * Adds the format text of an event of system sys when it is one of
 * evfmt_events (1), and ignores it otherwise (0, without parsing more than
 * its name line).  -1 with err set when one of ours is malformed: no name or
 * ID, a field line without offset or size, a field past 64 KiB, a duplicate
 * field or ID.  An event seen again keeps its first format.
 */
int evfmt_table_event(struct evfmt_table *t, const char *sys, const char *text, size_t len,
		      struct ta_err *err);

/* The field called name of e, or NULL. */
const struct evfmt_field *evfmt_event_field(const struct evfmt_event *e, const char *name);

/*
 * The table of a layout: its byte order, long and page size, header_page and
 * the formats of evfmt_events it holds (others are skipped unparsed).  -1
 * with err set (EXIT_BAD_INPUT) when the layout or one of our formats is
 * inconsistent.
 */
int evfmt_table_build(const struct evfmt_layout *l, struct evfmt_table *t, struct ta_err *err);

/*
 * True when the layout holds the format of an event (any system) whose ID
 * is id: perf.data's tracepoint attributes name their event by it.
 */
bool evfmt_has_event_id(const struct evfmt_layout *l, uint64_t id);

/*
 * Damage in the formats of the KVM systems (kvm, kvm_hv, or a system name a
 * byte from one), which would make their records read as some other event,
 * silently: a format whose "name:" line is not an identifier or whose
 * "ID:" line is not a number, or one named a byte or two from an event of
 * evfmt_events that t lacks ("kvm/kvm_exiu" for kvm/kvm_exit: a flipped
 * bit).  A kernel writes neither.  Returns how many formats are damaged,
 * the first described in why (len bytes; "" when none).
 */
int evfmt_formats_damage(const struct evfmt_layout *l, const struct evfmt_table *t, char *why,
			 size_t len);

/*
 * The event IDs the layout's formats describe, as a bitmap of
 * EVFMT_ID_WORDS words (a record's common_type is 16 bits), plus 1-31:
 * ftrace's own record types (kernel/trace/trace.h), whose formats trace-cmd
 * keeps in a section of their own.  A record of any other type names an
 * event the file has no format for: the file is damaged.
 */
#define EVFMT_ID_WORDS (65536 / 64)
void evfmt_event_ids(const struct evfmt_layout *l, uint64_t *known);

/*
 * The name of pid in saved cmdlines ("PID COMM" lines, text of len bytes,
 * may be NULL), copied into buf, or NULL.  Looked up for the few processes
 * of a result only: parsing thousands of lines up front cost more than
 * reading a small trace.
 */
const char *evfmt_comm(const char *text, size_t len, int32_t pid, char *buf, size_t buflen);

#endif
