/* decode: pages and records to gang events; see decode.h. */
#include "decode.h"

#include <limits.h>
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
	out->shift = f->is_signed && f->size < 8 ? 64 - 8 * f->size : 0;
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

/* The bytes a record needs to hold common_pid and every field in refs. */
static int fields_end(const struct decoder *d, struct field_ref *const *refs, int n)
{
	int end = d->pid.offset + d->pid.size;
	for (int i = 0; i < n; i++)
		if (refs[i]->offset + refs[i]->size > end)
			end = refs[i]->offset + refs[i]->size;
	return end;
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
	const char *const vcpu_names[] = { "vcpu_id", NULL };
	struct field_ref *const gn_refs[] = { &d->gn_vcpu }, *const kn_refs[] = { &d->kn_vcpu };
	const bool vcpu_req[] = { false };

	if (event_resolve(t, EVFMT_RUN_CORE, &d->id_run_core, rc_names, rc_refs, rc_req,
			  err) < 0 ||
	    event_resolve(t, EVFMT_GUEST_EXIT, &d->id_guest_exit, ge_names, ge_refs, ge_req,
			  err) < 0 ||
	    event_resolve(t, EVFMT_KVM_EXIT, &d->id_kvm_exit, ke_names, ke_refs, ke_req, err) < 0 ||
	    event_resolve(t, EVFMT_USERSPACE_EXIT, &d->id_userspace_exit, ue_names, ue_refs,
			  ue_req, err) < 0 ||
	    event_resolve(t, EVFMT_GUEST_ENTER, &d->id_guest_enter, vcpu_names, gn_refs,
			  vcpu_req, err) < 0 ||
	    event_resolve(t, EVFMT_KVM_ENTRY, &d->id_kvm_entry, vcpu_names, kn_refs, vcpu_req,
			  err) < 0)
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
	d->rc_end = fields_end(d, rc_refs, 4);
	d->ge_end = fields_end(d, ge_refs, 3);
	d->ke_end = fields_end(d, ke_refs, 3);
	d->ue_end = fields_end(d, ue_refs, 3);
	d->gn_end = fields_end(d, gn_refs, 1);
	d->kn_end = fields_end(d, kn_refs, 1);
	/*
	 * The fast path's layout: fields absent (an absent event's, or an
	 * optional one) or native signed 4-byte ints, ceded an unsigned byte.
	 */
	const struct field_ref *s32[] = { &d->pid, &d->rc_n_runnable, &d->rc_runner_vcpu,
					  &d->rc_where, &d->rc_tgid, &d->ge_vcpu_id, &d->ge_trap };
	bool native = !d->swap && d->type.size == 2 &&
		      (!d->ge_ceded.size || (d->ge_ceded.size == 1 && !d->ge_ceded.shift));
	for (size_t i = 0; i < sizeof(s32) / sizeof(s32[0]); i++)
		native &= !s32[i]->size || (s32[i]->size == 4 && s32[i]->shift == 32);
	d->native_min = native ? d->type.offset + 2 : INT_MAX;
	return 0;
}

bool decoder_has_entries(const struct decoder *d)
{
	return d->id_guest_enter >= 0 || d->id_kvm_entry >= 0;
}

bool decoder_has_events(const struct decoder *d)
{
	return d->id_run_core >= 0 || d->id_guest_exit >= 0 || d->id_kvm_exit >= 0 ||
	       d->id_userspace_exit >= 0;
}

void decoder_note_malformed(uint64_t n, struct gang_result *r)
{
	if (n)
		gang_result_damage(r, "%llu records were too short for their event format",
				   (unsigned long long)n);
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
	return 0;
}

void page_reader_release(struct page_reader *r)
{
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

uint64_t page_committed(const struct page_reader *r, const unsigned char *buf)
{
	return rd_commit(r, buf + 8) & COMMIT_MASK;
}

int page_reader_attach(struct page_reader *r, const unsigned char *buf, uint32_t len)
{
	if (len > r->page_size || len < (uint32_t)r->hdr_size)
		return -1;
	r->cur = buf;
	r->ev = NULL;
	uint64_t commit = rd_commit(r, buf + 8);
	uint32_t flags = (uint32_t)commit;
	uint64_t used = commit & COMMIT_MASK;
	if (used > len - r->hdr_size)
		return -1;
	r->data_len = (uint32_t)used;
	if (flags & MISSED_EVENTS) {
		uint64_t missed = 0;
		/* The count, when stored, follows the committed data. */
		if ((flags & MISSED_STORED) && r->hdr_size + used + r->commit_size <= len)
			missed = rd_commit(r, buf + r->hdr_size + used);
		r->missed += missed > 0 && missed < (1ULL << 62) ? missed : 1;
	}
	r->ts = rd64(r, buf);
	r->next = 0;
	return page_reader_next(r) ? 1 : 0;
}

