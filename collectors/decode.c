/* decode: pages and records to gang events; see decode.h. */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bcur.h"
#include "../util/strbuf.h"

/* trace-cmd's COMMIT_MASK: the high bits of commit flag missed events. */
#define COMMIT_MASK ((1u << 27) - 1)
#define MISSED_EVENTS (1u << 31)
#define MISSED_STORED (1u << 30)

static int field_from(const struct evfmt_field *f, struct field_ref *out)
{
	memset(out, 0, sizeof(*out));
	if (!f)
		return 0;
	if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
		return -1;
	out->offset = f->offset;
	out->size = f->size;
	out->is_signed = f->is_signed;
	return 0;
}

/* Resolves event `which` and its fields; names[i] NULL ends, alt names after '|'. */
static int event_resolve(const struct evfmt_table *t, int which, int *id,
			 const char *const *fields, struct field_ref *const *refs,
			 const bool *required, struct ta_err *err)
{
	const struct evfmt_event *ev = &t->events[which];
	const char *sys = evfmt_events[which][0], *name = evfmt_events[which][1];
	*id = -1;
	if (!ev->present)
		return 0;
	for (int i = 0; fields[i]; i++) {
		char alts[64];
		snprintf(alts, sizeof(alts), "%s", fields[i]);
		const struct evfmt_field *f = NULL;
		for (char *save, *a = strtok_r(alts, "|", &save); a && !f;
		     a = strtok_r(NULL, "|", &save))
			f = evfmt_event_field(ev, a);
		if (!f && required[i])
			return err_set(err, EXIT_BAD_INPUT,
				       "event %s/%s has no field '%s' (its format is not the "
				       "expected one)", sys, name, fields[i]);
		if (field_from(f, refs[i]) < 0)
			return err_set(err, EXIT_BAD_INPUT,
				       "field %s of %s/%s has an unsupported size %d", fields[i],
				       sys, name, f->size);
	}
	*id = ev->id;
	return 0;
}

int decoder_init(struct decoder *d, const struct evfmt_table *t, struct ta_err *err)
{
	memset(d, 0, sizeof(*d));
	d->swap = bcur_swap(t->big_endian);

	const char *const rc_names[] = { "n_runnable", "runner_vcpu", "where", "tgid", NULL };
	struct field_ref *const rc_refs[] = { &d->rc_n_runnable, &d->rc_runner_vcpu,
					      &d->rc_where, &d->rc_tgid };
	const bool rc_req[] = { true, false, true, true };
	/* Older kernels called the trap field "reason". */
	const char *const ge_names[] = { "vcpu_id", "trap|reason", "ceded", NULL };
	struct field_ref *const ge_refs[] = { &d->ge_vcpu_id, &d->ge_trap, &d->ge_ceded };
	const bool ge_req[] = { false, true, true };
	const char *const ke_names[] = { "exit_reason", "isa", "vcpu_id", NULL };
	struct field_ref *const ke_refs[] = { &d->ke_reason, &d->ke_isa, &d->ke_vcpu };
	const bool ke_req[] = { true, false, false };
	const char *const ue_names[] = { "reason", "errno", "vcpu_id", NULL };
	struct field_ref *const ue_refs[] = { &d->ue_reason, &d->ue_errno, &d->ue_vcpu };
	const bool ue_req[] = { true, false, false };

	if (event_resolve(t, EVFMT_RUN_CORE, &d->id_run_core, rc_names, rc_refs, rc_req,
			  err) < 0 ||
	    event_resolve(t, EVFMT_GUEST_EXIT, &d->id_guest_exit, ge_names, ge_refs, ge_req,
			  err) < 0 ||
	    event_resolve(t, EVFMT_KVM_EXIT, &d->id_kvm_exit, ke_names, ke_refs, ke_req, err) < 0 ||
	    event_resolve(t, EVFMT_USERSPACE_EXIT, &d->id_userspace_exit, ue_names, ue_refs,
			  ue_req, err) < 0)
		return -1;

	/*
	 * One record header for all events: a record's type is read before its
	 * event is known, so every event of ours must put common_type and
	 * common_pid at the same place.
	 */
	bool first = true;
	for (int i = 0; i < EVFMT_NEVENTS; i++) {
		if (!t->events[i].present)
			continue;
		struct field_ref type, pid;
		if (field_from(evfmt_event_field(&t->events[i], "common_type"), &type) < 0 ||
		    field_from(evfmt_event_field(&t->events[i], "common_pid"), &pid) < 0 ||
		    !type.size || !pid.size)
			return err_set(err, EXIT_BAD_INPUT, "the format of %s/%s lacks a valid "
				       "common_type or common_pid", evfmt_events[i][0],
				       evfmt_events[i][1]);
		if (!first && (memcmp(&type, &d->type, sizeof(type)) ||
			       memcmp(&pid, &d->pid, sizeof(pid))))
			return err_set(err, EXIT_BAD_INPUT, "the formats disagree on where "
				       "common_type and common_pid lie (%s/%s differs)",
				       evfmt_events[i][0], evfmt_events[i][1]);
		d->type = type;
		d->pid = pid;
		first = false;
	}
	return 0;
}

bool decoder_has_events(const struct decoder *d)
{
	return d->id_run_core >= 0 || d->id_guest_exit >= 0 || d->id_kvm_exit >= 0 ||
	       d->id_userspace_exit >= 0;
}

/* decoder_field, inlined into decoder_decode: it runs for every field of every record. */
static inline __attribute__((always_inline)) int64_t
field_get(const struct decoder *d, const struct field_ref *f, const void *data)
{
	if (!f->size)
		return 0;
	uint64_t v = bcur_load((const unsigned char *)data + f->offset, f->size, d->swap);
	if (f->is_signed && f->size < 8) {
		int shift = 64 - 8 * f->size;
		return (int64_t)(v << shift) >> shift;
	}
	return (int64_t)v;
}

int64_t decoder_field(const struct decoder *d, const struct field_ref *f, const void *data)
{
	return field_get(d, f, data);
}

static bool fits(const struct field_ref *f, int size)
{
	return f->offset + f->size <= size;
}

int decoder_decode(struct decoder *d, const void *data, int size, struct gang_event *ev)
{
	/* No event of ours in this trace: common_type was never resolved. */
	if (!d->type.size || size < d->type.offset + d->type.size)
		return 0;
	int id = (int)bcur_load((const unsigned char *)data + d->type.offset, d->type.size, d->swap);
	if (id != d->id_run_core && id != d->id_guest_exit && id != d->id_kvm_exit &&
	    id != d->id_userspace_exit)
		return 0;
	if (!fits(&d->pid, size))
		goto short_record;
	ev->pid = (int32_t)field_get(d, &d->pid, data);
	ev->tgid = 0;
	if (id == d->id_run_core) {
		if (!fits(&d->rc_n_runnable, size) || !fits(&d->rc_runner_vcpu, size) ||
		    !fits(&d->rc_where, size) || !fits(&d->rc_tgid, size))
			goto short_record;
		ev->kind = GANG_EV_RUN_CORE;
		ev->u.run_core.n_runnable = field_get(d, &d->rc_n_runnable, data);
		ev->u.run_core.runner_vcpu = field_get(d, &d->rc_runner_vcpu, data);
		ev->u.run_core.where = field_get(d, &d->rc_where, data);
		ev->u.run_core.tgid = field_get(d, &d->rc_tgid, data);
	} else if (id == d->id_guest_exit) {
		if (!fits(&d->ge_vcpu_id, size) || !fits(&d->ge_trap, size) ||
		    !fits(&d->ge_ceded, size))
			goto short_record;
		ev->kind = GANG_EV_GUEST_EXIT;
		ev->u.guest_exit.vcpu_id = d->ge_vcpu_id.size ? field_get(d, &d->ge_vcpu_id, data)
							       : GANG_VCPU_UNKNOWN;
		ev->u.guest_exit.trap = field_get(d, &d->ge_trap, data);
		ev->u.guest_exit.ceded = field_get(d, &d->ge_ceded, data);
	} else if (id == d->id_kvm_exit) {
		if (!fits(&d->ke_reason, size) || !fits(&d->ke_isa, size) ||
		    !fits(&d->ke_vcpu, size))
			goto short_record;
		ev->kind = GANG_EV_KVM_EXIT;
		ev->u.kvm_exit.reason = field_get(d, &d->ke_reason, data);
		/* KVM_ISA_VMX 1, KVM_ISA_SVM 2; kernels without the field are VMX-era. */
		ev->u.kvm_exit.isa = d->ke_isa.size && field_get(d, &d->ke_isa, data) == 2
					     ? EXIT_SRC_SVM : EXIT_SRC_VMX;
		ev->u.kvm_exit.vcpu_id = d->ke_vcpu.size ? field_get(d, &d->ke_vcpu, data)
							 : GANG_VCPU_UNKNOWN;
	} else {
		if (!fits(&d->ue_reason, size) || !fits(&d->ue_errno, size) ||
		    !fits(&d->ue_vcpu, size))
			goto short_record;
		ev->kind = GANG_EV_USERSPACE_EXIT;
		/* KVM_RUN's return: when negative, exit_reason is left from the run before. */
		int64_t error = field_get(d, &d->ue_errno, data);
		ev->u.userspace_exit.reason = error < 0 ? error
						       : field_get(d, &d->ue_reason, data);
		ev->u.userspace_exit.vcpu_id = d->ue_vcpu.size ? field_get(d, &d->ue_vcpu, data)
							       : GANG_VCPU_UNKNOWN;
	}
	return 1;
short_record:
	d->malformed++;
	return -1;
}

static bool comm_known(const char *c)
{
	return c && c[0] && strcmp(c, "<...>");
}

void decoder_name_procs(struct gang_result *r, const char *(*comm_of)(void *ctx, int32_t pid),
			void *ctx)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gang_proc *pr = &r->procs[i];
		const char *comm = pr->tgid > 0 ? comm_of(ctx, pr->tgid) : NULL;
		if (!comm_known(comm) && pr->runner_pid > 0)
			comm = comm_of(ctx, pr->runner_pid);
		if (comm_known(comm))
			snprintf(pr->comm, sizeof(pr->comm), "%s", comm);
	}
}

int page_reader_init(struct page_reader *r, const struct evfmt_table *t, uint32_t page_size)
{
	memset(r, 0, sizeof(*r));
	r->commit_size = t->commit_size == 4 ? 4 : 8;
	r->big_endian = t->big_endian;
	r->swap = bcur_swap(r->big_endian);
	r->hdr_size = 8 + r->commit_size;
	r->page_size = page_size;
	r->page = xcalloc(1, page_size + PAGE_READER_SLACK);
	return 0;
}

void page_reader_release(struct page_reader *r)
{
	free(r->page);
	memset(r, 0, sizeof(*r));
}

static inline uint32_t rd32(const struct page_reader *r, const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t rd64(const struct page_reader *r, const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return r->swap ? __builtin_bswap64(v) : v;
}

static uint64_t rd_commit(const struct page_reader *r, const unsigned char *p)
{
	return r->commit_size == 8 ? rd64(r, p) : rd32(r, p);
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
 * the committed end is returned with size -1: the caller reports it.
 */
static bool walk(struct page_reader *r)
{
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
		uint32_t w = rd32(r, data + off);
		uint32_t type = r->big_endian ? w >> 27 : w & 31;
		uint64_t delta = r->big_endian ? w & ((1u << 27) - 1) : w >> 5;
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
			uint32_t arg = rd32(r, data + p);
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
			uint32_t l = rd32(r, data + p);
			if (l < 4)
				goto overrun;
			len = ((l - 4) + 3) & ~3u;
			p += 4;
		} else {
			len = type * 4;
		}
		r->ts += delta;
		r->ev = (void *)(data + p);
		r->size = len <= end - p ? (int)len : -1;
		r->next = len <= end - p ? p + len : end;
		return true;
overrun:
		r->ev = (void *)(data + off);
		r->size = -1;
		r->next = end;
		return true;
	}
}

uint64_t page_committed(const struct page_reader *r, const unsigned char *buf)
{
	return rd_commit(r, buf + 8) & COMMIT_MASK;
}

int page_reader_attach(struct page_reader *r, unsigned char *buf, uint32_t len)
{
	if (len > r->page_size || len < (uint32_t)r->hdr_size)
		return -1;
	if (len < r->page_size + PAGE_READER_SLACK)
		memset(buf + len, 0, r->page_size + PAGE_READER_SLACK - len);
	r->cur = buf;
	r->ev = NULL;
	uint64_t commit = rd_commit(r, buf + 8);
	uint32_t flags = (uint32_t)commit;
	uint64_t used = commit & COMMIT_MASK;
	if (used > r->page_size - r->hdr_size)
		return -1;
	r->data_len = (uint32_t)used;
	if (flags & MISSED_EVENTS) {
		uint64_t missed = 0;
		/* The count, when stored, follows the committed data. */
		if ((flags & MISSED_STORED) &&
		    r->hdr_size + used + r->commit_size <= r->page_size)
			missed = rd_commit(r, buf + r->hdr_size + used);
		r->missed += missed > 0 && missed < (1ULL << 62) ? missed : 1;
	}
	r->ts = rd64(r, buf);
	r->next = 0;
	return walk(r) ? 1 : 0;
}

int page_reader_load(struct page_reader *r, const void *src, uint32_t len)
{
	if (len > r->page_size)
		return -1;
	memcpy(r->page, src, len);
	return page_reader_attach(r, r->page, len);
}

bool page_reader_next(struct page_reader *r)
{
	return walk(r);
}

int page_reader_size(const struct page_reader *r)
{
	return r->size;
}
