/* gang: ganged-exit and exit-reason counter; see gang.h. */
#include "gang.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "htab.h"

#include "gang-feed.h"

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

struct runner *gang_runner_lookup(struct gang_counter *g, int32_t pid, bool create)
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

struct proc_state *gang_proc_lookup(struct gang_counter *g, int32_t tgid)
{
	struct proc_state *p = htab_get(&g->procs, &tgid, sizeof(tgid));
	p->p.tgid = tgid;
	g->last_tgid = tgid;
	g->last_proc = p;
	return p;
}

void gang_reason_miss(struct gang_counter *g, uint32_t h, const struct reason_key *k)
{
	struct reason_state *r = htab_get(&g->reasons, k, sizeof(*k));
	r->count++;
	g->rcache[h].k = *k;
	g->rcache[h].pos = (uint32_t)(((char *)r - g->reasons.entries) / sizeof(*r)) + 1;
}

/* The events of gang_feed_many, for one rule (a constant: its branches fold). */
static inline __attribute__((always_inline)) void
feed_many_as(struct gang_counter *g, const struct gang_event *evs, size_t n,
	     const enum gang_algorithm algo)
{
	for (const struct gang_event *ev = evs; ev < evs + n; ev++)
		gang_feed_inline(g, ev, algo);
}

void gang_feed_many(struct gang_counter *g, const struct gang_event *evs, size_t n)
{
	if (!n)
		return;
	gang_fed(g, n, evs[0].ts, evs[n - 1].ts);
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
