/* gang: ganged-exit and exit-reason counter; see gang.h. */
#include "gang.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "htab.h"

/* Per runner thread (common_pid of run_core events). */
struct runner {
	int32_t pid;		/* key */
	int32_t tgid;		/* of its last Enter or Exit */
	bool in_run;		/* between Enter and Exit */
	int64_t cedes;		/* of the current run */
	bool seed_known;	/* seed rule: pid -> tgid learned (first Enter) */
	int32_t seed_tgid;
};

struct proc_state {
	int32_t tgid;		/* key */
	int32_t pad;
	struct gang_proc p;
	bool seed_known;	/* seed rule: "tgid in stats" */
	int64_t seed_cedes;
};

/*
 * Reason key: packed so memcmp over it is exact (no padding bytes).  code
 * and vcpu are not neighbours: compared as a pair, the compiler loaded both
 * from the event in one 16-byte read of the decoder's two 8-byte stores,
 * which the CPU cannot forward (a stall on every exit, 15 % of the feed).
 */
struct reason_key {
	int64_t code;
	int32_t tgid;
	int32_t source;
	int64_t vcpu;
};

struct reason_state {
	struct reason_key k;
	uint64_t count;
};

#define REASON_CACHE 32

struct gang_counter {
	enum gang_algorithm algo;
	uint64_t events, run_core_events;
	uint64_t first_ts, last_ts;
	struct htab runners, procs, reasons;
	/* The last runner looked up: consecutive events mostly share one. */
	int32_t last_pid;
	struct runner *last_runner;
	int32_t last_tgid;
	struct proc_state *last_proc;
	/*
	 * Exit reasons seen lately, direct-mapped by code and vCPU: a guest's
	 * exits cycle through a few (reason, vCPU) pairs, and a hit spares
	 * hashing a 24-byte key per exit.  pos is the entry's index in reasons
	 * + 1 (an index survives the array's growth), 0 an empty slot.
	 */
	struct {
		struct reason_key k;
		uint32_t pos;
	} rcache[REASON_CACHE];
};

struct gang_counter *gang_new(enum gang_algorithm algo)
{
	struct gang_counter *g = xcalloc(1, sizeof(*g));
	g->algo = algo;
	htab_init(&g->runners, sizeof(struct runner), sizeof(int32_t));
	htab_init(&g->procs, sizeof(struct proc_state), sizeof(int32_t));
	/* htab_hash/htab_key_eq handle 4-byte keys and whole 8-byte words. */
	_Static_assert(sizeof(struct reason_key) % 8 == 0, "reason key must be whole words");
	htab_init(&g->reasons, sizeof(struct reason_state), sizeof(struct reason_key));
	return g;
}

void gang_free(struct gang_counter *g)
{
	if (!g)
		return;
	htab_release(&g->runners);
	htab_release(&g->procs);
	htab_release(&g->reasons);
	free(g);
}

/*
 * The look-ups below run for every event: each is an inlined check of the
 * last hit (consecutive events mostly share a runner, a process, a few
 * reasons) in front of an out-of-line table look-up.
 */
#define HOT static inline __attribute__((always_inline))

static __attribute__((noinline)) struct runner *runner_lookup(struct gang_counter *g, int32_t pid,
							      bool create)
{
	size_t s;
	struct runner *r = htab_find(&g->runners, &pid, sizeof(pid), &s);
	if (!r && create)
		r = htab_insert(&g->runners, &pid, s);
	/* A new entry may move the array: the cache is refreshed on every miss. */
	if (r) {
		g->last_pid = pid;
		g->last_runner = r;
	}
	return r;
}

HOT struct runner *runner_get(struct gang_counter *g, int32_t pid)
{
	if (g->last_runner && g->last_pid == pid)
		return g->last_runner;
	return runner_lookup(g, pid, true);
}

/*
 * The runner entry of pid if a run_core event made one, else NULL: the
 * other events only look runners up, so a vCPU thread that never ran its
 * vcore stays unknown however many exits it records (it would otherwise
 * become a runner of tgid 0 at its second one).
 */
HOT struct runner *runner_find(struct gang_counter *g, int32_t pid)
{
	if (g->last_runner && g->last_pid == pid)
		return g->last_runner;
	return runner_lookup(g, pid, false);
}

static __attribute__((noinline)) struct proc_state *proc_lookup(struct gang_counter *g,
								int32_t tgid)
{
	struct proc_state *p = htab_get(&g->procs, &tgid, sizeof(tgid));
	p->p.tgid = tgid;
	g->last_tgid = tgid;
	g->last_proc = p;
	return p;
}

HOT struct proc_state *proc_get(struct gang_counter *g, int32_t tgid)
{
	if (g->last_proc && g->last_tgid == tgid)
		return g->last_proc;
	return proc_lookup(g, tgid);
}

static __attribute__((noinline)) void reason_miss(struct gang_counter *g, uint32_t h,
						  const struct reason_key *k)
{
	struct reason_state *r = htab_get(&g->reasons, k, sizeof(*k));
	r->count++;
	g->rcache[h].k = *k;
	g->rcache[h].pos = (uint32_t)(((char *)r - g->reasons.entries) / sizeof(*r)) + 1;
}

HOT void reason_add(struct gang_counter *g, enum exit_source src, int64_t code, int32_t tgid,
		    int64_t vcpu)
{
	uint32_t h = ((uint32_t)code * 0x9e3779b1u + (uint32_t)vcpu * 0x85ebca77u +
		      (uint32_t)tgid) >> (32 - 5);
	_Static_assert(REASON_CACHE == 1 << 5, "the cache index takes 5 bits");
	if (g->rcache[h].pos && g->rcache[h].k.code == code && g->rcache[h].k.vcpu == vcpu &&
	    g->rcache[h].k.tgid == tgid && g->rcache[h].k.source == (int32_t)src) {
		((struct reason_state *)htab_entry(&g->reasons, g->rcache[h].pos - 1))->count++;
		return;
	}
	struct reason_key k = { .code = code, .vcpu = vcpu, .tgid = tgid, .source = (int32_t)src };
	reason_miss(g, h, &k);
}

HOT void feed_run_core(struct gang_counter *g, const struct gang_event *ev,
		       const enum gang_algorithm algo)
{
	int32_t tgid = (int32_t)ev->u.run_core.tgid;
	bool is_exit = ev->u.run_core.where != 0;	/* as the seed: 0 Enter, else Exit */
	size_t nrunners = g->runners.n;
	struct runner *r = runner_get(g, ev->pid);
	bool new_runner = g->runners.n != nrunners;
	struct proc_state *p = proc_get(g, tgid);

	g->run_core_events++;
	p->p.runner_pid = ev->pid;
	if (!is_exit) {
		r->tgid = tgid;
		r->in_run = true;
		r->cedes = 0;
		/* Seed rule: reset the tgid's cedes; learn pid -> tgid once. */
		if (algo == GANG_ALGO_SEED) {
			p->seed_known = true;
			p->seed_cedes = 0;
			if (!r->seed_known) {
				r->seed_known = true;
				r->seed_tgid = tgid;
			}
		}
		return;
	}

	if (r->in_run && !new_runner) {
		p->p.core_runs++;
		if (algo == GANG_ALGO_VCORE && ev->u.run_core.n_runnable - r->cedes > 1)
			p->p.gang_exits++;
	} else {
		p->p.bailouts++;
	}
	if (algo == GANG_ALGO_SEED && p->seed_known &&
	    ev->u.run_core.n_runnable - p->seed_cedes > 1)
		p->p.gang_exits++;
	r->in_run = false;
	r->tgid = tgid;
}

HOT void feed_guest_exit(struct gang_counter *g, const struct gang_event *ev,
			 const enum gang_algorithm algo)
{
	struct runner *r = runner_find(g, ev->pid);
	int32_t tgid = r ? r->tgid : 0;
	bool ceded = ev->u.guest_exit.ceded != 0;
	struct proc_state *p = proc_get(g, tgid);

	p->p.guest_exits++;
	if (ceded)
		p->p.cedes++;
	if (r && r->in_run && ceded)
		r->cedes++;
	if (algo == GANG_ALGO_SEED && r && r->seed_known && ceded) {
		/* The seed adds the ceded value to the pid's first tgid. */
		struct proc_state *sp = proc_get(g, r->seed_tgid);
		sp->seed_cedes += ev->u.guest_exit.ceded;
	}
	reason_add(g, EXIT_SRC_POWER, ev->u.guest_exit.trap, tgid, ev->u.guest_exit.vcpu_id);
}

/*
 * The process of an x86 event.  A reader that cannot tell (a trace-cmd file
 * keeps no thread groups, or a thread exited unseen) leaves tgid 0: the
 * thread itself stands in, so two VMs never merge into one process 0.
 */
static int32_t event_tgid(const struct gang_event *ev)
{
	return ev->tgid ? ev->tgid : ev->pid;
}

/*
 * A user-space exit whose process the reader could not tell: on POWER the
 * thread is a vCPU's runner whose kvmppc_run_core events named its process,
 * so the exit is charged there; elsewhere the thread stands in (event_tgid).
 */
HOT void feed_userspace_exit(struct gang_counter *g, const struct gang_event *ev)
{
	int32_t tgid = event_tgid(ev);
	if (!ev->tgid && g->run_core_events) {
		struct runner *r = runner_find(g, ev->pid);
		if (r)
			tgid = r->tgid;
	}
	proc_get(g, tgid);
	reason_add(g, EXIT_SRC_USERSPACE, ev->u.userspace_exit.reason, tgid,
		   ev->u.userspace_exit.vcpu_id);
}

/* The events of gang_feed_many, for one rule (a constant: its branches fold). */
HOT void feed_many_as(struct gang_counter *g, const struct gang_event *evs, size_t n,
		      const enum gang_algorithm algo)
{
	for (const struct gang_event *ev = evs; ev < evs + n; ev++) {
		switch (ev->kind) {
		case GANG_EV_RUN_CORE:
			feed_run_core(g, ev, algo);
			break;
		case GANG_EV_GUEST_EXIT:
			feed_guest_exit(g, ev, algo);
			break;
		case GANG_EV_KVM_EXIT:
			proc_get(g, event_tgid(ev))->p.guest_exits++;
			reason_add(g, ev->u.kvm_exit.isa, ev->u.kvm_exit.reason, event_tgid(ev),
				   ev->u.kvm_exit.vcpu_id);
			break;
		case GANG_EV_USERSPACE_EXIT:
			feed_userspace_exit(g, ev);
			break;
		}
	}
}

void gang_feed_many(struct gang_counter *g, const struct gang_event *evs, size_t n)
{
	if (!n)
		return;
	if (g->events == 0)
		g->first_ts = evs[0].ts;
	g->events += n;
	g->last_ts = evs[n - 1].ts;
	if (g->algo == GANG_ALGO_SEED)
		feed_many_as(g, evs, n, GANG_ALGO_SEED);
	else
		feed_many_as(g, evs, n, GANG_ALGO_VCORE);
}

void gang_feed(struct gang_counter *g, const struct gang_event *ev)
{
	gang_feed_many(g, ev, 1);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct gang_proc *x = a, *y = b;
	return (x->tgid > y->tgid) - (x->tgid < y->tgid);
}

#define CMP3(a, b) do { if ((a) != (b)) return (a) < (b) ? -1 : 1; } while (0)

static int cmp_reason(const void *a, const void *b)
{
	const struct gang_reason *x = a, *y = b;
	CMP3(x->source, y->source);
	CMP3(x->code, y->code);
	CMP3(x->tgid, y->tgid);
	CMP3(x->vcpu, y->vcpu);
	return 0;
}

void gang_result_get(const struct gang_counter *g, struct gang_result *out)
{
	memset(out, 0, sizeof(*out));
	out->algorithm = g->algo;
	out->events = g->events;
	out->run_core_events = g->run_core_events;
	out->first_ts = g->first_ts;
	out->last_ts = g->last_ts;
	if (g->last_ts > g->first_ts)
		out->span_seconds = (double)(g->last_ts - g->first_ts) / 1e9;

	out->nprocs = g->procs.n;
	out->procs = xcalloc(out->nprocs ? out->nprocs : 1, sizeof(*out->procs));
	for (size_t i = 0; i < g->procs.n; i++)
		out->procs[i] = ((const struct proc_state *)htab_entry(&g->procs, i))->p;
	qsort(out->procs, out->nprocs, sizeof(*out->procs), cmp_proc);

	out->nreasons = g->reasons.n;
	out->reasons = xcalloc(out->nreasons ? out->nreasons : 1, sizeof(*out->reasons));
	for (size_t i = 0; i < g->reasons.n; i++) {
		const struct reason_state *r = htab_entry(&g->reasons, i);
		out->reasons[i] = (struct gang_reason){
			.source = (enum exit_source)r->k.source, .code = r->k.code,
			.tgid = r->k.tgid, .vcpu = r->k.vcpu, .count = r->count,
		};
	}
	qsort(out->reasons, out->nreasons, sizeof(*out->reasons), cmp_reason);
}

void gang_result_release(struct gang_result *r)
{
	free(r->procs);
	free(r->reasons);
	r->procs = NULL;
	r->reasons = NULL;
	r->nprocs = r->nreasons = 0;
}

void gang_result_damage(struct gang_result *r, const char *fmt, ...)
{
	size_t n = strlen(r->damage), cap = sizeof(r->damage);
	if (n && n + 2 < cap) {
		memcpy(r->damage + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(r->damage + n, cap - n, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w >= cap - n)
		memcpy(r->damage + cap - 4, "...", 4);
}

struct gang_proc *gang_result_proc(struct gang_result *r, int32_t tgid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].tgid == tgid)
			return &r->procs[i];
	return NULL;
}

const char *gang_algorithm_name(enum gang_algorithm a)
{
	return a == GANG_ALGO_SEED ? "seed" : "vcore";
}

int gang_algorithm_parse(const char *s, enum gang_algorithm *out)
{
	if (!strcmp(s, "vcore"))
		*out = GANG_ALGO_VCORE;
	else if (!strcmp(s, "seed"))
		*out = GANG_ALGO_SEED;
	else
		return -1;
	return 0;
}
