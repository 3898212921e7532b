/*
 * decode: ring-buffer pages and event records into gang events.
 *
 * Shared by the offline reader (pages from a trace-cmd file, possibly from a
 * big-endian POWER host) and the live reader (pages from trace_pipe_raw).
 * Fields are resolved by name from the event formats at run time, so their
 * offsets, sizes (s32, int, u64 ...), signedness and the file's byte order
 * all come from the trace itself (DESIGN §4: never hard-code offsets).
 */
#ifndef TA_DECODE_H
#define TA_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "../util/err.h"
#include "evfmt.h"
#include "gang.h"

struct field_ref {
	int offset, size;	/* size 0: the field is absent */
	bool is_signed;
};

struct decoder {
	bool swap;			/* data byte order differs from ours */
	struct field_ref type, pid;	/* common_type, common_pid */
	int id_run_core, id_guest_exit, id_kvm_exit, id_userspace_exit;	/* -1: absent */
	struct field_ref rc_n_runnable, rc_runner_vcpu, rc_where, rc_tgid;
	struct field_ref ge_vcpu_id, ge_trap, ge_ceded;
	struct field_ref ke_reason, ke_isa, ke_vcpu;
	struct field_ref ue_reason, ue_errno, ue_vcpu;
	uint64_t malformed;		/* records too short for their fields */
};

/*
 * Resolves the fields of kvm_hv/kvmppc_run_core, kvm_hv/kvm_guest_exit,
 * kvm/kvm_exit and kvm/kvm_userspace_exit in t.  Events that are absent are
 * fine (nothing of them will be decoded); an event lacking a needed field,
 * or events disagreeing on where common_type and common_pid lie, are errors.
 */
int decoder_init(struct decoder *d, const struct evfmt_table *t, struct ta_err *err);

/* True when the trace defines at least one event the counter understands. */
bool decoder_has_events(const struct decoder *d);

/*
 * Decodes one record (data points at common_type).  Returns 1 and fills ev
 * (but ev->cpu, ev->ts and ev->tgid for x86 events: 0, they carry none) for
 * our events, 0 for other events and -1 for a record too short for its
 * fields.  A kvm_userspace_exit whose errno is negative (KVM_RUN failed, no exit took
 * place) gets that errno as its reason, not the stale exit_reason.
 */
int decoder_decode(struct decoder *d, const void *data, int size, struct gang_event *ev);

/* Reads a field of a record (sign-extended when the format says signed). */
int64_t decoder_field(const struct decoder *d, const struct field_ref *f, const void *data);

/*
 * Names the processes of r: the tgid's own name, else its runner thread's
 * (QEMU names its vCPU threads); comm_of returns NULL or "<...>" when it
 * does not know a pid.
 */
void decoder_name_procs(struct gang_result *r, const char *(*comm_of)(void *ctx, int32_t pid),
			void *ctx);

/*
 * page_reader: walks the records of one ring-buffer page (sub-buffer) in
 * either byte order, after checking the page header so a corrupted page can
 * never make it read outside the buffer it is given.  Timestamps follow
 * libtraceevent's kbuffer (and so trace-cmd).
 */
#define PAGE_READER_SLACK 64

struct page_reader {
	unsigned char *page;	/* own copy for page_reader_load: page_size + slack */
	const unsigned char *cur;	/* the page being walked */
	uint32_t page_size;
	int hdr_size;		/* timestamp + commit */
	int commit_size;
	bool big_endian;	/* the page's byte order */
	bool swap;		/* ... differs from ours */
	uint32_t data_len;	/* committed bytes after the header */
	uint32_t next;		/* offset of the next record header after the page header */
	void *ev;		/* current record's data, or NULL */
	int size;		/* its size, -1 when it would overrun the page */
	unsigned long long ts;
	uint64_t missed;	/* "missed events" markers summed over pages */
};

/* A reader of page_size-byte pages laid out as t's page header says. */
int page_reader_init(struct page_reader *r, const struct evfmt_table *t, uint32_t page_size);
void page_reader_release(struct page_reader *r);
/*
 * Loads a page (len <= page_size bytes; short input is zero padded) into the
 * reader's own copy.  Returns 1 when it holds records (r->ev is the first), 0
 * when empty and -1 when its header is corrupt.
 */
int page_reader_load(struct page_reader *r, const void *src, uint32_t len);
/*
 * As page_reader_load, but walks buf in place: buf holds page_size +
 * PAGE_READER_SLACK bytes (those past len are zeroed) and outlives the walk.
 */
int page_reader_attach(struct page_reader *r, unsigned char *buf, uint32_t len);
/* Bytes of records a page holds, from its header (buf: >= hdr_size bytes). */
uint64_t page_committed(const struct page_reader *r, const unsigned char *buf);
/* Moves to the next record of the page; false at its end. */
bool page_reader_next(struct page_reader *r);
/* Size of the current record's data; -1 if it would overrun the page. */
int page_reader_size(const struct page_reader *r);

#endif
