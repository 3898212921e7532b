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

#include <string.h>

#include "../util/bcur.h"
#include "../util/err.h"
#include "evfmt.h"
#include "gang.h"

struct field_ref {
	int offset, size;	/* size 0: the field is absent */
	int shift;		/* sign extension: 64 - 8 * size when signed and shorter, else 0 */
};

struct decoder {
	bool swap;			/* data byte order differs from ours */
	struct field_ref type, pid;	/* common_type, common_pid */
	int id_run_core, id_guest_exit, id_kvm_exit, id_userspace_exit;	/* -1: absent */
	int id_guest_enter, id_kvm_entry;	/* -1: absent */
	struct field_ref rc_n_runnable, rc_runner_vcpu, rc_where, rc_tgid;
	struct field_ref ge_vcpu_id, ge_trap, ge_ceded;
	struct field_ref ke_reason, ke_isa, ke_vcpu;
	struct field_ref ue_reason, ue_errno, ue_vcpu;
	struct field_ref gn_vcpu, kn_vcpu;	/* kvm_guest_enter, kvm_entry */
	int rc_end, ge_end, ke_end, ue_end, gn_end, kn_end;	/* bytes a record of each
								 * must hold */
	int native_min;			/* the POWER events' fields are native signed 4-byte
					 * ints, ceded an unsigned byte (decoder_decode's fast
					 * path): the bytes a record needs for it to apply;
					 * INT_MAX: never */
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

/* True when it defines an entry event (kvm_entry, kvm_guest_enter): exits can be timed. */
bool decoder_has_entries(const struct decoder *d);

/* Notes n records too short for their format (skipped) as damage on r, if any. */
void decoder_note_malformed(uint64_t n, struct gang_result *r);


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
struct page_reader {
	const unsigned char *cur;	/* the page being walked */
	uint32_t page_size;
	int hdr_size;		/* timestamp + commit */
	int commit_size;
	bool big_endian;	/* the page's byte order */
	bool swap;		/* ... differs from ours */
	uint32_t data_len;	/* committed bytes after the header */
	uint32_t next;		/* offset of the next record header after the page header */
	const void *ev;		/* current record's data, or NULL */
	int size;		/* its size, -1 when it would overrun the page */
	unsigned long long ts;
	uint64_t missed;	/* "missed events" markers summed over pages */
};

/* A reader of page_size-byte pages laid out as t's page header says. */
int page_reader_init(struct page_reader *r, const struct evfmt_table *t, uint32_t page_size);
void page_reader_release(struct page_reader *r);
/*
 * Walks the page at buf in place (no copy): len <= page_size bytes, the
 * last page of a file may be short; nothing past len is read, and buf must
 * outlive the walk.  Returns 1 when it holds records (r->ev is the first),
 * 0 when empty (r->data_len 0: nothing committed) and -1 when its header is
 * corrupt or its committed data runs past len.
 */
int page_reader_attach(struct page_reader *r, const unsigned char *buf, uint32_t len);
/* Bytes of records a page holds, from its header (buf: >= hdr_size bytes). */
uint64_t page_committed(const struct page_reader *r, const unsigned char *buf);
/* Size of the current record's data; -1 if it would overrun the page. */
static inline int page_reader_size(const struct page_reader *r)
{
	return r->size;
}

/*
 * The hot path, inline so that the readers' per-record loops make no call
 * to decode a record or to move to the next: every record of a recording
 * goes through here.
 */

/* Reads a field of a record (sign-extended when the format says signed). */
static inline __attribute__((always_inline)) int64_t
decoder_field(const struct decoder *d, const struct field_ref *f, const void *data)
{
	if (!f->size)
		return 0;
	uint64_t v = bcur_load((const unsigned char *)data + f->offset, f->size, d->swap);
	return (int64_t)(v << f->shift) >> f->shift;
}

/* A native signed 4-byte field that is there. */
static inline int64_t native32(const struct field_ref *f, const unsigned char *p)
{
	int32_t v;
	memcpy(&v, p + f->offset, 4);
	return v;
}

/*
 * decoder_decode for the POWER events when their fields are native signed
 * 4-byte ints and ceded an unsigned byte (d->native_min: every real
 * kernel's and fakehv's layout on this byte order): straight loads, no
 * size, byte-order or sign choice per field, on the path every record of a
 * recording takes.  -2: not a POWER event, the general path decides.
 */
static inline __attribute__((always_inline)) int
decode_native(struct decoder *d, const unsigned char *p, int size, struct gang_event *ev)
{
	/*
	 * Every field is loaded before ev is written: ev's int stores could
	 * alias the decoder's offsets, which would be read again after each.
	 */
	uint16_t id;
	memcpy(&id, p + d->type.offset, 2);
	int32_t pid = (int32_t)native32(&d->pid, p);
	if (id == d->id_run_core) {
		if (size < d->rc_end)
			return -1;
		int64_t n_runnable = native32(&d->rc_n_runnable, p);
		int64_t runner_vcpu = d->rc_runner_vcpu.size ? native32(&d->rc_runner_vcpu, p) : 0;
		int64_t where = native32(&d->rc_where, p), tgid = native32(&d->rc_tgid, p);
		ev->kind = GANG_EV_RUN_CORE;
		ev->pid = pid;
		ev->tgid = 0;
		ev->u.run_core.n_runnable = n_runnable;
		ev->u.run_core.runner_vcpu = runner_vcpu;
		ev->u.run_core.where = where;
		ev->u.run_core.tgid = tgid;
		return 1;
	}
	if (id == d->id_guest_exit) {
		if (size < d->ge_end)
			return -1;
		int64_t vcpu = d->ge_vcpu_id.size ? native32(&d->ge_vcpu_id, p) : GANG_VCPU_UNKNOWN;
		int64_t trap = native32(&d->ge_trap, p), ceded = p[d->ge_ceded.offset];
		ev->kind = GANG_EV_GUEST_EXIT;
		ev->pid = pid;
		ev->tgid = 0;
		ev->u.guest_exit.vcpu_id = vcpu;
		ev->u.guest_exit.trap = trap;
		ev->u.guest_exit.ceded = ceded;
		return 1;
	}
	return -2;
}

/*
 * Decodes one record (data points at common_type).  Returns 1 and fills ev
 * (but ev->cpu, ev->ts and ev->tgid for x86 events: 0, they carry none) for
 * our events, 0 for other events and -1 for a record too short for its
 * fields (counted in d->malformed).  A kvm_userspace_exit whose errno is
 * negative (KVM_RUN failed, no exit took place) gets that errno as its
 * reason, not the stale exit_reason.
 */
static inline __attribute__((always_inline)) int
decoder_decode(struct decoder *d, const void *data, int size, struct gang_event *ev)
{
	if (size >= d->native_min) {
		int rc = decode_native(d, data, size, ev);
		if (rc == -1)
			goto short_record;
		if (rc == 1)
			return 1;
	}
	/* No event of ours in this trace: common_type was never resolved. */
	if (!d->type.size)
		return 0;
	if (size < d->type.offset + d->type.size)
		goto short_record;
	int id = (int)bcur_load((const unsigned char *)data + d->type.offset, d->type.size, d->swap);
	int end = id == d->id_run_core ? d->rc_end : id == d->id_guest_exit ? d->ge_end
		: id == d->id_kvm_exit ? d->ke_end : id == d->id_userspace_exit ? d->ue_end
		: id == d->id_guest_enter ? d->gn_end : id == d->id_kvm_entry ? d->kn_end : -1;
	if (end < 0)
		return 0;
	if (size < end)
		goto short_record;
	ev->pid = (int32_t)decoder_field(d, &d->pid, data);
	ev->tgid = 0;
	if (id == d->id_run_core) {
		ev->kind = GANG_EV_RUN_CORE;
		ev->u.run_core.n_runnable = decoder_field(d, &d->rc_n_runnable, data);
		ev->u.run_core.runner_vcpu = decoder_field(d, &d->rc_runner_vcpu, data);
		ev->u.run_core.where = decoder_field(d, &d->rc_where, data);
		ev->u.run_core.tgid = decoder_field(d, &d->rc_tgid, data);
	} else if (id == d->id_guest_exit) {
		ev->kind = GANG_EV_GUEST_EXIT;
		ev->u.guest_exit.vcpu_id = d->ge_vcpu_id.size ? decoder_field(d, &d->ge_vcpu_id, data)
							       : GANG_VCPU_UNKNOWN;
		ev->u.guest_exit.trap = decoder_field(d, &d->ge_trap, data);
		ev->u.guest_exit.ceded = decoder_field(d, &d->ge_ceded, data);
	} else if (id == d->id_kvm_exit) {
		ev->kind = GANG_EV_KVM_EXIT;
		ev->u.kvm_exit.reason = decoder_field(d, &d->ke_reason, data);
		/* KVM_ISA_VMX 1, KVM_ISA_SVM 2; kernels without the field are VMX-era. */
		ev->u.kvm_exit.isa = d->ke_isa.size && decoder_field(d, &d->ke_isa, data) == 2
					     ? EXIT_SRC_SVM : EXIT_SRC_VMX;
		ev->u.kvm_exit.vcpu_id = d->ke_vcpu.size ? decoder_field(d, &d->ke_vcpu, data)
							 : GANG_VCPU_UNKNOWN;
	} else if (id == d->id_guest_enter || id == d->id_kvm_entry) {
		bool power = id == d->id_guest_enter;
		const struct field_ref *f = power ? &d->gn_vcpu : &d->kn_vcpu;
		ev->kind = power ? GANG_EV_GUEST_ENTER : GANG_EV_KVM_ENTRY;
		ev->u.entry.vcpu_id = f->size ? decoder_field(d, f, data) : GANG_VCPU_UNKNOWN;
	} else {
		ev->kind = GANG_EV_USERSPACE_EXIT;
		/* KVM_RUN's return: when negative, exit_reason is left from the run before. */
		int64_t error = decoder_field(d, &d->ue_errno, data);
		ev->u.userspace_exit.reason = error < 0 ? error
						       : decoder_field(d, &d->ue_reason, data);
		ev->u.userspace_exit.vcpu_id = d->ue_vcpu.size ? decoder_field(d, &d->ue_vcpu, data)
							       : GANG_VCPU_UNKNOWN;
	}
	return 1;
short_record:
	d->malformed++;
	return -1;
}

/* The ring buffer's record types (kernel/trace/ring_buffer.c). */
#define RB_TYPE_DATA_MAX 28
#define RB_TYPE_PADDING 29
#define RB_TYPE_TIME_EXTEND 30
#define RB_TYPE_TIME_STAMP 31
#define RB_TS_SHIFT 27
/* Absolute time stamps lack the top 5 bits: they come from the running one. */
#define RB_TS_MSB (0xf8ULL << 56)

/*
 * Moves to the next data record at or after r->next, folding time extends,
 * absolute stamps and padding into r->ts as libtraceevent's kbuffer does (so
 * timestamps match trace-cmd's).  A record whose header or data would cross
 * the committed end is returned with size -1: the caller reports it.  big
 * is the page's byte order as a constant: walk() instantiates it for both,
 * so the per-record header decoding carries no byte-order test.
 */
static inline __attribute__((always_inline)) bool walk_as(struct page_reader *r, const bool big)
{
	const bool swap = bcur_swap(big);
	const unsigned char *data = r->cur + r->hdr_size;
	const uint32_t end = r->data_len;
	for (;;) {
		uint32_t off = r->next;
		if (off >= end) {
			r->ev = NULL;
			return false;
		}
		if (end - off < 4)
			goto overrun;
		uint32_t w = (uint32_t)bcur_load(data + off, 4, swap);
		uint32_t type = big ? w >> 27 : w & 31;
		uint64_t delta = big ? w & ((1u << 27) - 1) : w >> 5;
		uint32_t p = off + 4, len;
		if (type > RB_TYPE_DATA_MAX) {
			if (type == RB_TYPE_PADDING && delta == 0) {
				/* A null event: the rest of the page is unused. */
				r->ev = NULL;
				r->next = end;
				return false;
			}
			if (end - p < 4)
				goto overrun;
			uint32_t arg = (uint32_t)bcur_load(data + p, 4, swap);
			if (type == RB_TYPE_PADDING) {
				r->ts += delta;
				r->next = arg > end - p ? end : p + arg;
				continue;
			}
			delta += (uint64_t)arg << RB_TS_SHIFT;
			if (type == RB_TYPE_TIME_STAMP)
				r->ts = delta | (r->ts & RB_TS_MSB);
			else
				r->ts += delta;
			r->next = p + 4;
			continue;
		}
		if (type == 0) {
			if (end - p < 4)
				goto overrun;
			uint32_t l = (uint32_t)bcur_load(data + p, 4, swap);
			if (l < 4)
				goto overrun;
			len = ((l - 4) + 3) & ~3u;
			p += 4;
		} else {
			len = type * 4;
		}
		r->ts += delta;
		r->ev = data + p;
		r->size = len <= end - p ? (int)len : -1;
		r->next = len <= end - p ? p + len : end;
		return true;
overrun:
		r->ev = data + off;
		r->size = -1;
		r->next = end;
		return true;
	}
}

/* Moves to the next record of the page; false at its end. */
static inline bool page_reader_next(struct page_reader *r)
{
	return r->big_endian ? walk_as(r, true) : walk_as(r, false);
}

#endif
