/* gang: ganged-exit and exit-reason counter; see gang.h. */
#include "gang.h"

#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"

/*
 * A small open-addressing hash table over fixed-size entries whose first
 * ksize bytes are the key.  Entries live in one array (so a snapshot is a
 * copy); slots hold entry index + 1, 0 meaning empty.  Nothing is ever
 * deleted, which keeps probing trivial.
 */
struct htab {
	uint32_t *slots;
	size_t nslots;		/* power of two */
	char *entries;
	size_t esize, ksize;
	size_t n, alloc;
};

static void htab_init(struct htab *t, size_t esize, size_t ksize)
{
	memset(t, 0, sizeof(*t));
	t->esize = esize;
	t->ksize = ksize;
	t->nslots = 64;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
}

static void htab_release(struct htab *t)
{
	free(t->slots);
	free(t->entries);
}

/*
 * Keys are 4 bytes (a pid or tgid) or a multiple of 8 (the reason key):
 * mix whole words, not bytes; this sits on the per-event path.
 */
static inline uint64_t htab_hash(const void *key, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL * (len + 1);
	if (len == 4) {
		uint32_t k;
		memcpy(&k, key, 4);
		h ^= k;
	} else {
		for (size_t i = 0; i + 8 <= len; i += 8) {
			uint64_t k;
			memcpy(&k, (const char *)key + i, 8);
			h = (h ^ k) * 0xff51afd7ed558ccdULL;
			h ^= h >> 29;
		}
	}
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 32;
	return h;
}

static inline bool htab_key_eq(const void *a, const void *b, size_t len)
{
	if (len == 4) {
		uint32_t x, y;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		return x == y;
	}
	uint64_t diff = 0;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t x, y;
		memcpy(&x, (const char *)a + i, 8);
		memcpy(&y, (const char *)b + i, 8);
		diff |= x ^ y;
	}
	return diff == 0;
}

static void *htab_entry(const struct htab *t, size_t i)
{
	return t->entries + i * t->esize;
}

static void htab_grow(struct htab *t)
{
	size_t nslots = t->nslots * 2;
	uint32_t *slots = xcalloc(nslots, sizeof(*slots));
	for (size_t i = 0; i < t->n; i++) {
		size_t s = htab_hash(htab_entry(t, i), t->ksize) & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
}

/* Adds key at empty slot s (found by htab_get). */
static void *htab_insert(struct htab *t, const void *key, size_t s)
{
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 16;
		t->entries = xrealloc(t->entries, t->alloc * t->esize);
	}
	void *e = htab_entry(t, t->n);
	memset(e, 0, t->esize);
	memcpy(e, key, t->ksize);
	t->slots[s] = (uint32_t)(++t->n);
	if (t->n * 2 > t->nslots)
		htab_grow(t);
	return e;
}

/*
 * The entry with this key, or NULL with *slot the empty slot it would take.
 * Inlined with the caller's constant key size, so hashing and comparing
 * compile to straight-line code on the per-event path.
 */
static inline __attribute__((always_inline)) void *htab_find(const struct htab *t,
							      const void *key, size_t ksize,
							      size_t *slot)
{
	size_t s = htab_hash(key, ksize) & (t->nslots - 1);
	while (t->slots[s]) {
		void *e = htab_entry(t, t->slots[s] - 1);
		if (htab_key_eq(e, key, ksize))
			return e;
		s = (s + 1) & (t->nslots - 1);
	}
	*slot = s;
	return NULL;
}

/* The entry with this key, created zeroed (but for the key) when missing. */
static inline __attribute__((always_inline)) void *htab_get(struct htab *t, const void *key,
							     size_t ksize)
{
	size_t s = 0;	/* set by htab_find when it finds nothing */
	void *e = htab_find(t, key, ksize, &s);
	return e ? e : htab_insert(t, key, s);
}

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

/* Reason key: packed so memcmp over it is exact (no padding bytes). */
struct reason_key {
	int64_t code;
	int64_t vcpu;
	int32_t tgid;
	int32_t source;
};

struct reason_state {
	struct reason_key k;
	uint64_t count;
};

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

static struct runner *runner_get(struct gang_counter *g, int32_t pid)
{
	if (g->last_runner && g->last_pid == pid)
		return g->last_runner;
	/* A new entry may move the array: the cache is refreshed on every miss. */
	struct runner *r = htab_get(&g->runners, &pid, sizeof(pid));
	g->last_pid = pid;
	g->last_runner = r;
	return r;
}

/*
 * The runner entry of pid if a run_core event made one, else NULL: the
 * other events only look runners up, so a vCPU thread that never ran its
 * vcore stays unknown however many exits it records (it would otherwise
 * become a runner of tgid 0 at its second one).
 */
static struct runner *runner_find(struct gang_counter *g, int32_t pid)
{
	if (g->last_runner && g->last_pid == pid)
		return g->last_runner;
	size_t s;
	struct runner *r = htab_find(&g->runners, &pid, sizeof(pid), &s);
	if (r) {
		g->last_pid = pid;
		g->last_runner = r;
	}
	return r;
}

static struct proc_state *proc_get(struct gang_counter *g, int32_t tgid)
{
	if (g->last_proc && g->last_tgid == tgid)
		return g->last_proc;
	struct proc_state *p = htab_get(&g->procs, &tgid, sizeof(tgid));
	p->p.tgid = tgid;
	g->last_tgid = tgid;
	g->last_proc = p;
	return p;
}

static void reason_add(struct gang_counter *g, enum exit_source src, int64_t code,
		       int32_t tgid, int64_t vcpu)
{
	struct reason_key k = { .code = code, .vcpu = vcpu, .tgid = tgid, .source = (int32_t)src };
	struct reason_state *r = htab_get(&g->reasons, &k, sizeof(k));
	r->count++;
}

static void feed_run_core(struct gang_counter *g, const struct gang_event *ev)
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
		p->seed_known = true;
		p->seed_cedes = 0;
		if (!r->seed_known) {
			r->seed_known = true;
			r->seed_tgid = tgid;
		}
		return;
	}

	if (r->in_run && !new_runner) {
		p->p.core_runs++;
		if (g->algo == GANG_ALGO_VCORE && ev->u.run_core.n_runnable - r->cedes > 1)
			p->p.gang_exits++;
	} else {
		p->p.bailouts++;
	}
	if (g->algo == GANG_ALGO_SEED && p->seed_known &&
	    ev->u.run_core.n_runnable - p->seed_cedes > 1)
		p->p.gang_exits++;
	r->in_run = false;
	r->tgid = tgid;
}

static void feed_guest_exit(struct gang_counter *g, const struct gang_event *ev)
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
	if (r && r->seed_known && ceded) {
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
static void feed_userspace_exit(struct gang_counter *g, const struct gang_event *ev)
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

void gang_feed(struct gang_counter *g, const struct gang_event *ev)
{
	if (g->events == 0)
		g->first_ts = ev->ts;
	g->events++;
	g->last_ts = ev->ts;

	switch (ev->kind) {
	case GANG_EV_RUN_CORE:
		feed_run_core(g, ev);
		break;
	case GANG_EV_GUEST_EXIT:
		feed_guest_exit(g, ev);
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
