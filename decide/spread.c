/*
 * spread: where the variation is — runs far from their configuration's
 * others (outliers), boot-to-boot against run-to-run variance, and a trend
 * over the blocks (drift); see decide.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "decide-int.h"
#include "stats.h"

/*
 * A run is an outlier when its log value lies more than this many pooled
 * robust standard deviations from its configuration's median: on normal
 * runs, at most 1 % of runs are flagged from 3 runs per configuration on
 * (measured by tests/bench/bench-decisions.c); a run 3x slower than its
 * configuration's others at a CV of 10 % lies 11 of them away.
 */
#define OUTLIER_K 4.5
/* Median |X - Y| of two independent N(0, 1): sqrt(2) * Phi^-1(3/4). */
#define PAIR_MEDIAN 0.9538725524

/* The raw log value of a successful run (its direction does not matter here). */
static double cell_log(const struct decide_table *t, size_t c, size_t b)
{
	double v = t->lv[c * t->nblocks + b];
	return isfinite(v) ? (t->in->higher_is_better ? v : -v) : NAN;
}

static int cmp_log(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * How many pairs (i < j) of one configuration's sorted logs s[0..m) lie at
 * most x apart.  s[j] - s[i] only grows with j and shrinks with i (rounding
 * is monotonic), so one pass of two indices counts them all.
 */
static uint64_t pairs_within(const double *s, size_t m, double x)
{
	uint64_t k = 0;
	for (size_t i = 0, j = 0; i < m; i++) {
		if (j < i + 1)
			j = i + 1;
		while (j < m && s[j] - s[i] <= x)
			j++;
		k += j - i - 1;
	}
	return k;
}

/* The largest pair distance of one configuration's sorted logs below x, or -1. */
static double pair_below(const double *s, size_t m, double x)
{
	double best = -1;
	for (size_t i = 0, j = 0; i < m; i++) {
		if (j < i + 1)
			j = i + 1;
		while (j < m && s[j] - s[i] < x)
			j++;
		if (j > i + 1)
			best = fmax(best, s[j - 1] - s[i]);
	}
	return best;
}

/*
 * The median of the pair distances over every configuration's sorted logs
 * (of pairs of them): the k-th smallest, k = pairs / 2, bisected on the
 * bits of the distance (non-negative doubles order as their bit patterns),
 * and for an even count the one before it, which is the k-th itself unless
 * fewer than k pairs lie below it.
 */
static double pair_distance_median(const double *s, const size_t *off, size_t nconfigs,
				   uint64_t pairs)
{
	uint64_t k = pairs / 2, lo = 0, hi = 0, below = 0;
	double top = 0;
	for (size_t c = 0; c < nconfigs; c++)
		if (off[c + 1] > off[c] + 1)
			top = fmax(top, s[off[c + 1] - 1] - s[off[c]]);
	memcpy(&hi, &top, sizeof(hi));
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, n = 0;
		double x;
		memcpy(&x, &mid, sizeof(x));
		for (size_t c = 0; c < nconfigs; c++)
			n += pairs_within(s + off[c], off[c + 1] - off[c], x);
		if (n > k) {
			hi = mid;
		} else {
			lo = mid + 1;
			below = n;	/* pairs at most mid < the answer apart */
		}
	}
	double x;
	memcpy(&x, &lo, sizeof(x));
	/* lo was last set to mid + 1 with below = pairs within mid: those below x. */
	if (pairs % 2 || lo == 0 || below < k)
		return x;
	double prev = -1;
	for (size_t c = 0; c < nconfigs; c++)
		prev = fmax(prev, pair_below(s + off[c], off[c + 1] - off[c], x));
	return (prev + x) / 2;
}

/*
 * The pooled robust scale of the logs: the median absolute difference of
 * two runs of one configuration, over every such pair of every
 * configuration, divided by its value for normal runs.  A few wild runs
 * move a median of many pairs little, and pooling gives configurations of
 * 3 runs a scale as good as the whole experiment's.  The median is
 * selected, not sorted out of the pairs: 5 000 runs of a configuration
 * make 12.5 M pairs (100 k runs took 20 CPU s and 4 GB that way).
 */
static double pooled_scale(const struct decide_table *t)
{
	size_t nb = t->nblocks, nc = t->in->nconfigs, n = 0;
	double *s = xmalloc(nc * nb * sizeof(*s));
	size_t *off = xmalloc((nc + 1) * sizeof(*off));
	uint64_t pairs = 0;
	for (size_t c = 0; c < nc; c++) {
		off[c] = n;
		for (size_t b = 0; b < nb; b++)
			if (!isnan(s[n] = cell_log(t, c, b)))
				n++;
		uint64_t m = n - off[c];
		qsort(s + off[c], m, sizeof(*s), cmp_log);
		pairs += m ? m * (m - 1) / 2 : 0;
	}
	off[nc] = n;
	double m = pairs ? pair_distance_median(s, off, nc, pairs) : NAN;
	free(off);
	free(s);
	return m / PAIR_MEDIAN;
}

/*
 * A configuration's own robust scale (its pairs' median distance), from
 * OWN_SCALE_MIN successful runs on: there one wild run moves at most 4 of
 * its 10 pairs, and the median stays among the others.  NAN with fewer.
 */
#define OWN_SCALE_MIN 5

static double own_scale(const struct decide_table *t, size_t c)
{
	size_t nb = t->nblocks, n = 0;
	double *s = xmalloc((nb + 1) * sizeof(*s));
	for (size_t b = 0; b < nb; b++)
		if (!isnan(s[n] = cell_log(t, c, b)))
			n++;
	double scale = NAN;
	if (n >= OWN_SCALE_MIN) {
		qsort(s, n, sizeof(*s), cmp_log);
		size_t off[2] = { 0, n };
		scale = pair_distance_median(s, off, 1, (uint64_t)n * (n - 1) / 2) / PAIR_MEDIAN;
	}
	free(s);
	return scale;
}

/*
 * Outliers, each configuration's runs against its median and the larger of
 * its own scale and the pooled one: a configuration with a wider spread
 * than the others (a CV of 20 % among 1 % ones) is judged by its own,
 * where the pooled scale flagged nearly every run of it; a tighter one by
 * the pooled scale (its few runs' own is unsure, and too small a scale
 * flags noise).  With fewer than OWN_SCALE_MIN runs: the pooled scale.
 */
static void outliers(const struct decide_table *t, struct decide_result *r)
{
	const struct decide_input *in = t->in;
	size_t nb = t->nblocks;
	double scale = pooled_scale(t);
	r->outlier_scale = scale;
	for (size_t c = 0; c < in->nconfigs; c++) {
		double own = own_scale(t, c);
		r->configs[c].outlier_scale = own > scale ? own : scale;
	}
	double *v = xmalloc(nb * sizeof(*v));
	double *median = xmalloc(in->nconfigs * sizeof(*median));
	for (size_t c = 0; c < in->nconfigs; c++) {
		size_t n = 0;
		for (size_t b = 0; b < nb; b++)
			if (!isnan(v[n] = cell_log(t, c, b)))
				n++;
		median[c] = n >= 3 ? stats_median(v, n) : NAN;
	}
	for (size_t i = 0; i < in->nruns; i++) {
		const struct decide_run *run = &in->runs[i];
		struct decide_run_out *o = &r->runs[i];
		o->dev = 0;
		double sc = r->configs[run->config].outlier_scale;
		if ((size_t)run->block >= nb || run->status != DECIDE_RUN_OK || !(run->value > 0) ||
		    isnan(median[run->config]) || !(sc > 0))
			continue;
		o->dev = (log(run->value) - median[run->config]) / sc;
		o->outlier = fabs(o->dev) > OUTLIER_K;
		r->configs[run->config].noutliers += o->outlier;
	}
	free(median);
	free(v);
}

/* One configuration's successful runs grouped by boot: sums for the ANOVA. */
struct anova {
	double ssw, ssb, dfw, dfb, n0num;
	size_t boots, runs;
	bool shared;
};

static void anova_config(const struct decide_table *t, size_t c, struct anova *a)
{
	size_t nb = t->nblocks, n = 0;
	int64_t *id = xmalloc(nb * sizeof(*id));
	double *y = xmalloc(nb * sizeof(*y));
	for (size_t b = 0; b < nb; b++)
		if (!isnan(y[n] = cell_log(t, c, b)))
			id[n++] = t->boot[c * nb + b];
	size_t *group = xmalloc(n * sizeof(*group));
	size_t k = decide_boot_groups(id, n, group);
	double *sum = xcalloc(k, sizeof(*sum)), *ss = xcalloc(k, sizeof(*ss));
	size_t *cnt = xcalloc(k, sizeof(*cnt));
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = group[i];
		sum[j] += y[i];
		ss[j] += y[i] * y[i];
		cnt[j]++;
		total += y[i];
	}
	if (n && k) {
		double grand = total / (double)n, sumsq = 0;
		for (size_t j = 0; j < k; j++) {
			double m = sum[j] / (double)cnt[j];
			a->ssw += ss[j] - (double)cnt[j] * m * m;
			a->ssb += (double)cnt[j] * (m - grand) * (m - grand);
			a->dfw += (double)(cnt[j] - 1);
			a->shared |= cnt[j] > 1;
			sumsq += (double)(cnt[j] * cnt[j]);
		}
		a->dfb += (double)(k - 1);
		a->n0num += (double)n - sumsq / (double)n;
		a->boots += k;
		a->runs += n;
	}
	free(id);
	free(y);
	free(group);
	free(sum);
	free(ss);
	free(cnt);
}

/*
 * Boot-to-boot and run-to-run variance of the logs, one-way random
 * effects pooled over the configurations (runs nested in boots), and
 * Kalibera & Jones' optimal runs per boot from them and the costs.
 */
static void components(const struct decide_table *t, struct decide_result *r)
{
	struct decide_components *vc = &r->components;
	struct anova a = { 0 };
	for (size_t c = 0; c < t->in->nconfigs; c++)
		anova_config(t, c, &a);
	vc->shared = a.shared;
	vc->boots = a.boots;
	vc->runs = a.runs;
	vc->runs_per_boot = a.boots ? (double)a.runs / (double)a.boots : NAN;
	vc->sd_boot = vc->sd_run = vc->f = vc->df1 = vc->df2 = vc->p = NAN;
	vc->optimal_runs_per_boot = NAN;
	vc->advice = DECIDE_ADVICE_NONE;
	if (a.dfw < 1 || a.dfb < 1)	/* dfw < 1: no boot served two runs (!shared) */
		return;
	vc->estimable = true;
	double msw = fmax(a.ssw, 0) / a.dfw, msb = a.ssb / a.dfb, n0 = a.n0num / a.dfb;
	vc->sd_run = sqrt(msw);
	vc->sd_boot = sqrt(fmax(0, (msb - msw) / n0));
	vc->df1 = a.dfb;
	vc->df2 = a.dfw;
	vc->f = msw > 0 ? msb / msw : NAN;
	vc->p = stats_f_upper(vc->f, vc->df1, vc->df2);
	double cb = t->in->boot_seconds, cr = t->in->run_seconds;
	if (!(cb > 0) || !(cr > 0))
		return;
	vc->optimal_runs_per_boot = vc->sd_boot > 0 ? sqrt(cb / cr * msw / (vc->sd_boot * vc->sd_boot))
						    : INFINITY;
	double now = vc->runs_per_boot;
	vc->advice = vc->optimal_runs_per_boot >= 1.5 * now ? DECIDE_ADVICE_MORE_RUNS
		     : vc->optimal_runs_per_boot <= now / 1.5 ? DECIDE_ADVICE_MORE_BOOTS
		     : DECIDE_ADVICE_KEEP;
}

/*
 * A linear trend over the blocks: each configuration's own mean removed,
 * the residuals averaged per block, then per replication unit (blocks
 * sharing a boot), and the units' means regressed on their mean block
 * index.  Testing units, not runs, keeps a block-to-block (or boot-to-boot)
 * effect without a trend from passing for drift.
 */
static void drift(const struct decide_table *t, struct decide_result *r)
{
	struct decide_drift *dr = &r->drift;
	size_t nb = t->nblocks, n = 0;
	dr->slope = dr->lo = dr->hi = dr->p = NAN;
	if (!nb)
		return;
	double *e = xcalloc(nb, sizeof(*e)), *ux = xcalloc(nb, sizeof(*ux));
	double *uy = xcalloc(nb, sizeof(*uy));
	size_t *cnt = xcalloc(nb, sizeof(*cnt)), *ucnt = xcalloc(nb, sizeof(*ucnt));
	size_t *parent = xmalloc(nb * sizeof(*parent));
	for (size_t c = 0; c < t->in->nconfigs; c++) {
		double sy = 0;
		size_t k = 0;
		for (size_t b = 0; b < nb; b++) {
			double y = cell_log(t, c, b);
			if (!isnan(y)) {
				sy += y;
				k++;
			}
		}
		if (k < 2)
			continue;
		for (size_t b = 0; b < nb; b++) {
			double y = cell_log(t, c, b);
			if (isnan(y))
				continue;
			e[b] += y - sy / (double)k;
			cnt[b]++;
		}
		n += k;
	}
	decide_block_units(t, parent);
	for (size_t b = 0; b < nb; b++)
		if (cnt[b]) {
			ux[parent[b]] += (double)b;
			uy[parent[b]] += e[b] / (double)cnt[b];
			ucnt[parent[b]]++;
		}
	size_t m = 0;
	double sx = 0, sy = 0;
	for (size_t u = 0; u < nb; u++)
		if (ucnt[u]) {
			ux[m] = ux[u] / (double)ucnt[u];
			uy[m] = uy[u] / (double)ucnt[u];
			sx += ux[m];
			sy += uy[m];
			m++;
		}
	dr->n = n;
	dr->units = m;
	double sxx = 0, sxy = 0, syy = 0;
	for (size_t u = 0; u < m; u++) {
		double dx = ux[u] - sx / (double)m, dy = uy[u] - sy / (double)m;
		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	if (m >= 3 && sxx > 0) {
		double df = (double)(m - 2);
		dr->slope = sxy / sxx;
		double rss = fmax(0, syy - dr->slope * sxy);
		double se = sqrt(rss / df / sxx);
		dr->tested = true;
		dr->p = se > 0 ? stats_t_p(dr->slope / se, df) : dr->slope == 0 ? 1 : 0;
		double h = stats_t_quantile(0.975, df) * se;
		dr->lo = dr->slope - h;
		dr->hi = dr->slope + h;
	}
	free(e);
	free(ux);
	free(uy);
	free(cnt);
	free(ucnt);
	free(parent);
}

void decide_spread(const struct decide_table *t, struct decide_result *r)
{
	outliers(t, r);
	components(t, r);
	drift(t, r);
}
