/*
 * tsmerge: the k-way merge by timestamp every trace reader needs.
 *
 * A reader has several sources whose records each come in time order (a
 * trace.dat's CPU streams, a perf.data's runs, a live session's CPU queues)
 * and must feed the gang counter in one time order.  The merge keeps the
 * sources in a min-heap keyed by (timestamp of the next record, a fixed
 * tie-breaker such as the CPU index), says which source is due and how far
 * it may run on alone: while its records stay before the runner-up's, the
 * reader feeds them without touching the heap, so a recording where one CPU
 * has most records costs almost nothing to merge.
 *
 *	tsmerge_push(&m, src, ts, tie) for each source with a record;
 *	while (m.n) {
 *		src = tsmerge_top(&m);
 *		do feed src's record, move src on
 *		while (src has one && tsmerge_runs_on(&m, its ts, tie));
 *		src has one ? tsmerge_update_top(&m, ts, tie) : tsmerge_pop(&m);
 *	}
 */
#ifndef TA_TSMERGE_H
#define TA_TSMERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* src: the caller's handle of a source, an index or a pointer (as uintptr_t). */
struct tsmerge_item {
	uint64_t ts, tie;
	uintptr_t src;
};

struct tsmerge {
	struct tsmerge_item *heap;
	size_t n, cap;
	struct tsmerge_item bound;	/* the runner-up's key (ts UINT64_MAX: none) */
};

void tsmerge_init(struct tsmerge *m);
void tsmerge_release(struct tsmerge *m);
/* Empties the merge, keeping its memory. */
void tsmerge_clear(struct tsmerge *m);
/* Adds source src, whose next record has time ts. */
void tsmerge_push(struct tsmerge *m, uintptr_t src, uint64_t ts, uint64_t tie);
/* The top source moved on: its next record has time ts. */
void tsmerge_update_top(struct tsmerge *m, uint64_t ts, uint64_t tie);
/* The top source ran out. */
void tsmerge_pop(struct tsmerge *m);

/* The due source (m->n > 0). */
static inline uintptr_t tsmerge_top(const struct tsmerge *m)
{
	return m->heap[0].src;
}

/* The due source's key. */
static inline uint64_t tsmerge_top_ts(const struct tsmerge *m)
{
	return m->heap[0].ts;
}

/* True when a record at (ts, tie) comes before the key item. */
static inline bool tsmerge_before(const struct tsmerge_item *item, uint64_t ts, uint64_t tie)
{
	return ts < item->ts || (ts == item->ts && tie < item->tie);
}

/*
 * True while the top source, now at (ts, tie), still comes before every
 * other source.  The runner-up's key moves only with push, update_top and
 * pop: a reader may copy m->bound for a stretch without them.
 */
static inline bool tsmerge_runs_on(const struct tsmerge *m, uint64_t ts, uint64_t tie)
{
	return tsmerge_before(&m->bound, ts, tie);
}

#endif
