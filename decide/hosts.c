/* hosts: the host x decision interaction in the engine's model; see hosts.h. */
#include "hosts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "decide-int.h"
#include "stats.h"

/* The table with every cell outside host h's blocks emptied (NAN: no outcome). */
static void host_view(const struct decide_table *t, const size_t *block_host, size_t nbh,
		      size_t h, struct decide_table *view)
{
	*view = *t;
	size_t nb = t->nblocks, cells = t->in->nconfigs * nb;
	view->lv = xmalloc((cells ? cells : 1) * sizeof(*view->lv));
	for (size_t i = 0; i < cells; i++) {
		size_t b = i % nb;
		view->lv[i] = b < nbh && block_host[b] == h ? t->lv[i] : NAN;
	}
}

/* x against y on a view: paired within blocks, over the levels both ran. */
static void pair_on(const struct decide_table *view, size_t x, size_t y, struct decide_cmp *out)
{
	size_t nl = view->in->nlevels, n = 0;
	size_t *xs = xmalloc(nl * sizeof(*xs)), *ys = xmalloc(nl * sizeof(*ys));
	for (size_t l = 0; l < nl; l++) {
		size_t cx = decide_table_config(view, x, l), cy = decide_table_config(view, y, l);
		if (cx != DECIDE_NONE && cy != DECIDE_NONE) {
			xs[n] = cx;
			ys[n++] = cy;
		}
	}
	decide_paired(view, xs, ys, n, out);
	free(xs);
	free(ys);
}

/* Two-sided p of the difference of two independent paired estimates (Yuen, Welch df). */
static double contrast_p(const struct decide_cmp *a, const struct decide_cmp *b, double *diff)
{
	*diff = a->est - b->est;
	double va = a->se * a->se, vb = b->se * b->se, v = va + vb;
	if (!(v > 0))
		return *diff == 0 ? 1 : 0;
	double df = v * v / (va * va / a->df + vb * vb / b->df);
	return stats_t_p(*diff / sqrt(v), df);
}

bool decide_hosts_compute(const struct decide_input *in, const size_t *block_host,
			  size_t nblocks, size_t nhosts, size_t reference,
			  struct decide_hosts *out)
{
	memset(out, 0, sizeof(*out));
	out->p = out->p_adj = out->diff = NAN;
	struct decide_table t;
	if (!decide_table_build(in, 0, &t))
		return false;
	out->blocks = xcalloc(nhosts + 1, sizeof(*out->blocks));
	for (size_t b = 0; b < nblocks && b < t.nblocks; b++)
		if (block_host[b] < nhosts) {
			bool any = false;
			for (size_t c = 0; c < in->nconfigs && !any; c++)
				any = !isnan(t.lv[c * t.nblocks + b]);
			out->blocks[block_host[b]] += any;
			out->nblocks += any;
		}
	out->nhosts = nhosts;
	size_t with_blocks = 0;
	for (size_t h = 0; h < nhosts; h++)
		with_blocks += out->blocks[h] > 0;
	out->decisions = xcalloc(in->ndecisions + 1, sizeof(*out->decisions));
	for (size_t d = 0; d < in->ndecisions; d++)
		if (!in->decisions[d].elim.block)
			out->decisions[out->ndecisions++] = d;
	if (with_blocks < 2 || out->ndecisions < 2) {
		decide_table_release(&t);
		decide_hosts_release(out);
		return false;
	}
	if (reference == DECIDE_NONE)
		reference = in->baseline;
	out->reference = 0;
	for (size_t i = 0; i < out->ndecisions; i++)
		if (out->decisions[i] == reference)
			out->reference = i;
	size_t nd = out->ndecisions, nh = nhosts;
	/* cmp[(i * nd + j) * nh + h]: decisions i against j on host h, i < j. */
	struct decide_cmp *cmp = xcalloc(nd * nd * nh, sizeof(*cmp));
	out->effect = xmalloc(nd * nh * sizeof(*out->effect));
	for (size_t h = 0; h < nh; h++) {
		struct decide_table view;
		host_view(&t, block_host, nblocks, h, &view);
		for (size_t i = 0; i < nd; i++)
			for (size_t j = i + 1; j < nd; j++)
				pair_on(&view, out->decisions[i], out->decisions[j],
					&cmp[(i * nd + j) * nh + h]);
		for (size_t i = 0; i < nd; i++) {
			struct decide_cmp c;
			if (i == out->reference) {
				out->effect[i * nh + h] = out->blocks[h] ? 0 : NAN;
				continue;
			}
			pair_on(&view, out->decisions[i], out->decisions[out->reference], &c);
			out->effect[i * nh + h] = c.ok ? c.est : NAN;
		}
		free(view.lv);
	}
	/* Every decision pair, every host pair: one contrast each. */
	for (size_t i = 0; i < nd; i++)
		for (size_t j = i + 1; j < nd; j++)
			for (size_t h1 = 0; h1 < nh; h1++)
				for (size_t h2 = h1 + 1; h2 < nh; h2++) {
					const struct decide_cmp *a = &cmp[(i * nd + j) * nh + h1];
					const struct decide_cmp *b = &cmp[(i * nd + j) * nh + h2];
					if (!a->ok || !b->ok)
						continue;
					out->tests++;
					double diff, p = contrast_p(a, b, &diff);
					if (!isnan(p) && !(p >= out->p)) {
						out->p = p;
						out->diff = diff;
						out->x = i;
						out->y = j;
						out->h1 = h1;
						out->h2 = h2;
					}
				}
	free(cmp);
	if (out->tests && !isnan(out->p)) {
		out->p_adj = fmin(1, out->p * (double)out->tests);
		out->shown = out->p_adj < DECIDE_ALPHA;
	}
	out->best = xmalloc(nh * sizeof(*out->best));
	bool differs = false;
	size_t first = DECIDE_NONE;
	for (size_t h = 0; h < nh; h++) {
		out->best[h] = DECIDE_NONE;
		for (size_t i = 0; i < nd; i++) {
			double e = out->effect[i * nh + h];
			if (!isnan(e) && (out->best[h] == DECIDE_NONE ||
					  e > out->effect[out->best[h] * nh + h]))
				out->best[h] = i;
		}
		if (out->best[h] == DECIDE_NONE)
			continue;
		if (first == DECIDE_NONE)
			first = out->best[h];
		differs |= out->best[h] != first;
	}
	out->best_differs = out->shown && differs;
	decide_table_release(&t);
	return true;
}

void decide_hosts_release(struct decide_hosts *h)
{
	free(h->blocks);
	free(h->decisions);
	free(h->effect);
	free(h->best);
	memset(h, 0, sizeof(*h));
}
