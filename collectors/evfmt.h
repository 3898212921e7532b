/*
 * evfmt: the event table (a tep_handle) a trace file needs, and nothing else.
 *
 * A trace carries the formats of every event the kernel had plus kallsyms
 * and printk formats; libtracecmd parses all of it (5.4 MB of kallsyms took
 * 84 % of the instructions on a 78 k-event file).  The decoder needs only
 * header_page and the formats of its own events (decoder_events[]), so this
 * module walks the "tracing data" layout with bounds checks, skips what is
 * not ours without parsing it, and hands only our formats to libtraceevent.
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

#include <event-parse.h>

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
 * A tep with the layout's byte order, long and page size, header_page and
 * the formats of decoder_events[] that the layout holds (others are skipped
 * unparsed).  NULL with err set when the layout is inconsistent; free with
 * tep_free().
 */
struct tep_handle *evfmt_tep(const struct evfmt_layout *l, struct ta_err *err);

/*
 * The name of pid in the saved cmdlines ("PID COMM" lines), copied into buf,
 * or NULL.  Looked up for the few processes of a result only: registering
 * thousands of lines with libtraceevent (sscanf each) cost more than reading
 * a small trace.
 */
const char *evfmt_comm(const struct evfmt_layout *l, int32_t pid, char *buf, size_t len);

/*
 * Runs evfmt_tep() once in a forked child first, killed after timeout_s
 * seconds: libtraceevent has crashed on damaged formats before, and the
 * formats parsed here come from an untrusted file.  Cheap: the child parses
 * at most four short formats.  0 when the child survived.
 */
int evfmt_sandbox(const struct evfmt_layout *l, unsigned timeout_s, struct ta_err *err);

#endif
