/*
 * gang-feed: the counter's per-event code (gang.h), for gang.c and for a
 * reader's hot loop that feeds events where it decodes them (perfdata.c's
 * one-pass lane): with the counter's code inlined into that loop, the
 * counting runs while the loop waits for the recording's memory, where a
 * batch handed over every 64 events ran apart from it.  A reader uses
 * only the functions named gang_*: gang_feed_inline, gang_fed, gang_rule,
 * gang_events; the structures are the counter's.
 */
#ifndef TA_GANG_FEED_H
#define TA_GANG_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "gang.h"
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
	uint64_t time_pairs, time_total, time_min, time_max;	/* ns */
	uint32_t hist;		/* index in gang_counter.hists */
	uint32_t pad;
};

/* A vCPU's exit waiting for its entry: key (process or thread, vCPU). */
struct vcpu_key {
	int64_t vcpu;
	int32_t tgid;
	int32_t pad;
};

struct vcpu_state {
	struct vcpu_key k;
	uint64_t exit_ts;
	uint32_t reason_pos;	/* the exit's reason entry + 1; 0: none waits */
	uint32_t gen;		/* gang_counter.gen at the exit */
};

#define REASON_CACHE 32

struct gang_counter {
	enum gang_algorithm algo;
	uint64_t events, run_core_events;
	uint64_t first_ts, last_ts;
	struct htab runners, procs, reasons;
	/* Exit handling time (gang.h): off unless the reader expects entries. */
	bool timing;
	uint32_t gen;			/* bumped by gang_lost */
	uint64_t gap_until;		/* exits before this may miss lost events */
	uint64_t entry_events, time_pairs, time_unmatched, time_gap, time_unpaired;
	struct htab vcpus;		/* struct vcpu_state */
	struct gang_time_hist *hists;	/* per (source, code) */
	size_t nhists, hists_alloc;
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

/*
 * The look-ups below run for every event: each is an inlined check of the
 * last hit (consecutive events mostly share a runner, a process, a few
 * reasons) in front of an out-of-line table look-up.
 */
#define GANG_HOT static inline __attribute__((always_inline))

/* Out of line: the table look-ups behind the checks of the last hit. */
__attribute__((noinline)) struct runner *gang_runner_lookup(struct gang_counter *g, int32_t pid,
							    bool create);

GANG_HOT struct runner *runner_get(struct gang_counter *g, int32_t pid)
{
	if (g->last_runner && g->last_pid == pid)
		return g->last_runner;
	return gang_runner_lookup(g, pid, true);
}

/*
 * The runner entry of pid if a run_core event made one, else NULL: the
 * other events only look runners up, so a vCPU thread that never ran its
 * vcore stays unknown however many exits it records (it would otherwise
 * become a runner of tgid 0 at its second one).
 */
GANG_HOT struct runner *runner_find(struct gang_counter *g, int32_t pid)
{
	if (g->last_runner && g->last_pid == pid)
		return g->last_runner;
	return gang_runner_lookup(g, pid, false);
}

__attribute__((noinline)) struct proc_state *gang_proc_lookup(struct gang_counter *g, int32_t tgid);

GANG_HOT struct proc_state *proc_get(struct gang_counter *g, int32_t tgid)
{
	if (g->last_proc && g->last_tgid == tgid)
		return g->last_proc;
	return gang_proc_lookup(g, tgid);
}

__attribute__((noinline)) void gang_reason_miss(struct gang_counter *g, uint32_t h,
						 const struct reason_key *k);

/* Counts an exit of a reason; returns its entry's index + 1 (for timing). */
GANG_HOT uint32_t reason_add(struct gang_counter *g, enum exit_source src, int64_t code,
			     int32_t tgid, int64_t vcpu)
{
	uint32_t h = ((uint32_t)code * 0x9e3779b1u + (uint32_t)vcpu * 0x85ebca77u +
		      (uint32_t)tgid) >> (32 - 5);
	_Static_assert(REASON_CACHE == 1 << 5, "the cache index takes 5 bits");
	if (g->rcache[h].pos && g->rcache[h].k.code == code && g->rcache[h].k.vcpu == vcpu &&
	    g->rcache[h].k.tgid == tgid && g->rcache[h].k.source == (int32_t)src) {
		((struct reason_state *)htab_entry(&g->reasons, g->rcache[h].pos - 1))->count++;
		return g->rcache[h].pos;
	}
	struct reason_key k = { .code = code, .vcpu = vcpu, .tgid = tgid, .source = (int32_t)src };
	gang_reason_miss(g, h, &k);
	return g->rcache[h].pos;
}

/* Out of line: timing runs only for recordings with entry events. */
__attribute__((noinline)) void gang_time_exit(struct gang_counter *g, int32_t key_tgid,
					      int64_t vcpu, uint64_t ts, uint32_t reason_pos);
__attribute__((noinline)) void gang_time_entry(struct gang_counter *g, int32_t key_tgid,
					       int64_t vcpu, uint64_t ts);

GANG_HOT void feed_run_core(struct gang_counter *g, const struct gang_event *ev,
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

/*
 * The process of an x86 event.  A reader that cannot tell (a trace-cmd file
 * keeps no thread groups, or a thread exited unseen) leaves tgid 0: the
 * thread itself stands in, so two VMs never merge into one process 0.
 */
GANG_HOT int32_t event_tgid(const struct gang_event *ev)
{
	return ev->tgid ? ev->tgid : ev->pid;
}

/*
 * The process of a POWER guest exit or entry: its runner's VM.  With no
 * kvmppc_run_core seen at all (POWER9/10, where each vCPU thread runs its
 * own vcore and records its own exits) the thread stands in, as on x86.
 */
GANG_HOT int32_t power_tgid(struct gang_counter *g, const struct gang_event *ev,
			    const struct runner *r)
{
	if (r)
		return r->tgid;
	return g->run_core_events ? 0 : event_tgid(ev);
}

GANG_HOT void feed_guest_exit(struct gang_counter *g, const struct gang_event *ev,
			      const enum gang_algorithm algo)
{
	struct runner *r = runner_find(g, ev->pid);
	int32_t tgid = power_tgid(g, ev, r);
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
	uint32_t pos = reason_add(g, EXIT_SRC_POWER, ev->u.guest_exit.trap, tgid,
				  ev->u.guest_exit.vcpu_id);
	if (g->timing)
		gang_time_exit(g, tgid ? tgid : ev->pid, ev->u.guest_exit.vcpu_id, ev->ts, pos);
}

/*
 * A POWER entry: recorded by the thread that runs the vcore, as the exits
 * are, so it finds its vCPU's exit under the same process (or thread).
 */
GANG_HOT void feed_guest_enter(struct gang_counter *g, const struct gang_event *ev)
{
	struct runner *r = runner_find(g, ev->pid);
	int32_t tgid = power_tgid(g, ev, r);
	gang_time_entry(g, tgid ? tgid : ev->pid, ev->u.entry.vcpu_id, ev->ts);
}


/*
 * A user-space exit whose process the reader could not tell: on POWER the
 * thread is a vCPU's runner whose kvmppc_run_core events named its process,
 * so the exit is charged there; elsewhere the thread stands in (event_tgid).
 */
GANG_HOT void feed_userspace_exit(struct gang_counter *g, const struct gang_event *ev)
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

/*
 * One event, for one rule (a constant: its branches fold).  A reader that
 * feeds events this way reports them with gang_fed, and hands over any
 * batch it holds first: the counter takes events in order.
 */
GANG_HOT void gang_feed_inline(struct gang_counter *g, const struct gang_event *ev,
			       const enum gang_algorithm algo)
{
	switch (ev->kind) {
	case GANG_EV_RUN_CORE:
		feed_run_core(g, ev, algo);
		break;
	case GANG_EV_GUEST_EXIT:
		feed_guest_exit(g, ev, algo);
		break;
	case GANG_EV_KVM_EXIT: {
		proc_get(g, event_tgid(ev))->p.guest_exits++;
		uint32_t pos = reason_add(g, ev->u.kvm_exit.isa, ev->u.kvm_exit.reason,
					  event_tgid(ev), ev->u.kvm_exit.vcpu_id);
		if (g->timing)
			gang_time_exit(g, event_tgid(ev), ev->u.kvm_exit.vcpu_id, ev->ts, pos);
		break;
	}
	case GANG_EV_USERSPACE_EXIT:
		feed_userspace_exit(g, ev);
		break;
	case GANG_EV_GUEST_ENTER:
		if (g->timing)
			feed_guest_enter(g, ev);
		g->entry_events++;
		break;
	case GANG_EV_KVM_ENTRY:
		if (g->timing)
			gang_time_entry(g, event_tgid(ev), ev->u.entry.vcpu_id, ev->ts);
		g->entry_events++;
		break;
	}
}

/* The rule a counter counts by (a reader instantiates its loop per rule). */
static inline enum gang_algorithm gang_rule(const struct gang_counter *g)
{
	return g->algo;
}

/* The events fed so far. */
static inline uint64_t gang_events(const struct gang_counter *g)
{
	return g->events;
}

/*
 * After n > 0 events were fed (with gang_feed_inline, or by gang_feed_many):
 * first_ts and last_ts are the first's and the last's.
 */
static inline void gang_fed(struct gang_counter *g, uint64_t n, uint64_t first_ts, uint64_t last_ts)
{
	if (g->events == 0)
		g->first_ts = first_ts;
	g->events += n;
	g->last_ts = last_ts;
}

#endif
