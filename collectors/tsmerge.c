/* tsmerge: k-way merge by timestamp; see tsmerge.h. */
#include "tsmerge.h"

#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"

static bool item_less(const struct tsmerge_item *a, const struct tsmerge_item *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->tie < b->tie);
}

/* The runner-up is the smaller child of the top: kept so runs_on is two compares. */
static void bound_update(struct tsmerge *m)
{
	static const struct tsmerge_item none = { UINT64_MAX, UINT64_MAX, 0 };
	m->bound = m->n < 2 ? none
		 : m->n == 2 || item_less(&m->heap[1], &m->heap[2]) ? m->heap[1] : m->heap[2];
}

static void sift_down(struct tsmerge *m, size_t i)
{
	struct tsmerge_item x = m->heap[i];
	for (;;) {
		size_t l = 2 * i + 1, c = l;
		if (l >= m->n)
			break;
		if (l + 1 < m->n && item_less(&m->heap[l + 1], &m->heap[l]))
			c = l + 1;
		if (!item_less(&m->heap[c], &x))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	m->heap[i] = x;
}

void tsmerge_init(struct tsmerge *m)
{
	memset(m, 0, sizeof(*m));
	bound_update(m);
}

void tsmerge_release(struct tsmerge *m)
{
	free(m->heap);
	tsmerge_init(m);
}

void tsmerge_clear(struct tsmerge *m)
{
	m->n = 0;
	bound_update(m);
}

void tsmerge_push(struct tsmerge *m, uintptr_t src, uint64_t ts, uint64_t tie)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->heap = xrealloc(m->heap, m->cap * sizeof(*m->heap));
	}
	struct tsmerge_item x = { ts, tie, src };
	size_t i = m->n++;
	while (i && item_less(&x, &m->heap[(i - 1) / 2])) {
		m->heap[i] = m->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->heap[i] = x;
	bound_update(m);
}

void tsmerge_update_top(struct tsmerge *m, uint64_t ts, uint64_t tie)
{
	m->heap[0].ts = ts;
	m->heap[0].tie = tie;
	sift_down(m, 0);
	bound_update(m);
}

void tsmerge_pop(struct tsmerge *m)
{
	m->heap[0] = m->heap[--m->n];
	if (m->n)
		sift_down(m, 0);
	bound_update(m);
}
