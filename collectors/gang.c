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
	_Static_assert(sizeof(struct vcpu_key) % 8 == 0, "vcpu key must be whole words");
	htab_init(&g->vcpus, sizeof(struct vcpu_state), sizeof(struct vcpu_key));
	return g;
}

void gang_free(struct gang_counter *g)
{
	if (!g)
		return;
	htab_release(&g->runners);
	htab_release(&g->procs);
	htab_release(&g->reasons);
	htab_release(&g->vcpus);
	free(g->hists);
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

/* The histogram of (source, code), made on first use: a trace has few codes. */
static uint32_t hist_index(struct gang_counter *g, int32_t source, int64_t code)
{
	for (size_t i = 0; i < g->nhists; i++)
		if (g->hists[i].source == (enum exit_source)source && g->hists[i].code == code)
			return (uint32_t)i;
	if (g->nhists == g->hists_alloc) {
		g->hists_alloc = g->hists_alloc ? 2 * g->hists_alloc : 8;
		g->hists = xrealloc(g->hists, g->hists_alloc * sizeof(*g->hists));
	}
	struct gang_time_hist *h = &g->hists[g->nhists];
	memset(h, 0, sizeof(*h));
	h->source = (enum exit_source)source;
	h->code = code;
	return (uint32_t)g->nhists++;
}

void gang_reason_miss(struct gang_counter *g, uint32_t h, const struct reason_key *k)
{
	struct reason_state *r = htab_get(&g->reasons, k, sizeof(*k));
	if (!r->count && g->timing)
		r->hist = hist_index(g, k->source, k->code);
	r->count++;
	g->rcache[h].k = *k;
	g->rcache[h].pos = (uint32_t)(((char *)r - g->reasons.entries) / sizeof(*r)) + 1;
}

void gang_expect_entries(struct gang_counter *g)
{
	g->timing = true;
}

void gang_lost(struct gang_counter *g, uint64_t until_ts)
{
	g->gen++;
	if (until_ts > g->gap_until)
		g->gap_until = until_ts;
}

void gang_time_exit(struct gang_counter *g, int32_t key_tgid, int64_t vcpu, uint64_t ts,
		    uint32_t reason_pos)
{
	struct vcpu_key k = { .vcpu = vcpu, .tgid = key_tgid };
	struct vcpu_state *v = htab_get(&g->vcpus, &k, sizeof(k));
	if (v->reason_pos)
		g->time_unmatched++;	/* exited again with no entry between */
	v->exit_ts = ts;
	v->reason_pos = reason_pos;
	v->gen = g->gen;
}

/* Quarter-octave buckets: 0-7 exact, then 4 per power of two. */
static unsigned hist_bucket(uint64_t ns)
{
	if (ns < 8)
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns);	/* >= 3 */
	unsigned b = 4 * (e - 1) + (unsigned)((ns >> (e - 2)) & 3);
	return b < GANG_HIST_BUCKETS ? b : GANG_HIST_BUCKETS - 1;
}

uint64_t gang_hist_low(unsigned b)
{
	if (b < 8)
		return b;
	unsigned e = b / 4 + 1;
	return (uint64_t)(4 + b % 4) << (e - 2);
}

uint64_t gang_hist_quantile(const struct gang_time_hist *h, uint64_t n, double q,
			    uint64_t max_ns)
{
	if (!n)
		return 0;
	uint64_t want = (uint64_t)(q * (double)n + 0.999999), seen = 0;
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < GANG_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= want) {
			uint64_t hi = b + 1 < GANG_HIST_BUCKETS ? gang_hist_low(b + 1) - 1 : max_ns;
			return hi < max_ns ? hi : max_ns;
		}
	}
	return max_ns;
}

void gang_time_entry(struct gang_counter *g, int32_t key_tgid, int64_t vcpu, uint64_t ts)
{
	struct vcpu_key k = { .vcpu = vcpu, .tgid = key_tgid };
	size_t slot;
	struct vcpu_state *v = htab_find(&g->vcpus, &k, sizeof(k), &slot);
	if (!v || !v->reason_pos) {
		g->time_unpaired++;
		return;
	}
	uint32_t pos = v->reason_pos;
	v->reason_pos = 0;
	if (v->gen != g->gen || v->exit_ts < g->gap_until) {
		g->time_gap++;
		return;
	}
	if (ts < v->exit_ts) {
		g->time_unmatched++;	/* out of order (perf.data clocks): not a time */
		return;
	}
	uint64_t d = ts - v->exit_ts;
	struct reason_state *r = htab_entry(&g->reasons, pos - 1);
	if (!r->time_pairs || d < r->time_min)
		r->time_min = d;
	if (d > r->time_max)
		r->time_max = d;
	r->time_pairs++;
	r->time_total += d;
	g->hists[r->hist].bucket[hist_bucket(d)]++;
	g->time_pairs++;
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

static int cmp_hist(const void *a, const void *b)
{
	const struct gang_time_hist *x = a, *y = b;
	CMP3(x->source, y->source);
	CMP3(x->code, y->code);
	return 0;
}

void gang_result_get(const struct gang_counter *g, struct gang_result *out)
{
	memset(out, 0, sizeof(*out));
	out->algorithm = g->algo;
	out->run_core_events = g->run_core_events;
	out->first_ts = g->first_ts;
	out->last_ts = g->last_ts;
	if (g->last_ts > g->first_ts)
		out->span_seconds = (double)(g->last_ts - g->first_ts) / 1e9;

	out->timed = g->timing;
	out->entry_events = g->entry_events;
	out->events = g->events - g->entry_events;
	out->time_pairs = g->time_pairs;
	out->time_gap = g->time_gap;
	out->time_unpaired_entries = g->time_unpaired;
	out->time_unmatched = g->time_unmatched;
	for (size_t i = 0; i < g->vcpus.n; i++)
		out->time_unmatched += ((const struct vcpu_state *)htab_entry(&g->vcpus, i))
					       ->reason_pos != 0;
	out->nhists = g->nhists;
	out->hists = xcalloc(g->nhists ? g->nhists : 1, sizeof(*out->hists));
	if (g->nhists)
		memcpy(out->hists, g->hists, g->nhists * sizeof(*out->hists));
	qsort(out->hists, out->nhists, sizeof(*out->hists), cmp_hist);

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
			.time_pairs = r->time_pairs, .time_total_ns = r->time_total,
			.time_min_ns = r->time_min, .time_max_ns = r->time_max,
		};
	}
	qsort(out->reasons, out->nreasons, sizeof(*out->reasons), cmp_reason);
}

void gang_result_release(struct gang_result *r)
{
	free(r->procs);
	free(r->reasons);
	free(r->hists);
	r->procs = NULL;
	r->reasons = NULL;
	r->hists = NULL;
	r->nprocs = r->nreasons = r->nhists = 0;
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

void gang_result_untime(struct gang_result *r, const char *why)
{
	if (!r->timed)
		return;
	snprintf(r->time_void, sizeof(r->time_void), "%s", why);
	r->time_gap += r->time_pairs;
	r->time_pairs = 0;
	for (size_t i = 0; i < r->nreasons; i++) {
		struct gang_reason *x = &r->reasons[i];
		x->time_pairs = x->time_total_ns = x->time_min_ns = x->time_max_ns = 0;
	}
	for (size_t i = 0; i < r->nhists; i++)
		memset(r->hists[i].bucket, 0, sizeof(r->hists[i].bucket));
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
