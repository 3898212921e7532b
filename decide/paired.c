/*
 * paired: the runs as a table of blocks, and the one comparison every
 * verdict, race step and tie of the engine rests on (see decide.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "decide-int.h"
#include "stats.h"

bool decide_table_build(const struct decide_input *in, int blocks, struct decide_table *t)
{
	memset(t, 0, sizeof(*t));
	t->in = in;
	if (!in->nlevels)
		return false;
	int maxb = -1;
	for (size_t i = 0; i < in->nruns; i++) {
		const struct decide_run *r = &in->runs[i];
		if (r->config >= in->nconfigs || r->block < 0)
			return false;
		if ((blocks <= 0 || r->block < blocks) && r->block > maxb)
			maxb = r->block;
	}
	for (size_t c = 0; c < in->nconfigs; c++)
		if (in->configs[c].decision >= in->ndecisions || in->configs[c].level >= in->nlevels)
			return false;
	if (in->baseline != DECIDE_NONE && in->baseline >= in->ndecisions)
		return false;
	size_t nb = (size_t)(maxb + 1), cells = in->nconfigs * nb;
	t->nblocks = nb;
	t->lv = xmalloc(cells * sizeof(*t->lv));
	t->boot = xmalloc(cells * sizeof(*t->boot));
	for (size_t i = 0; i < cells; i++) {
		t->lv[i] = NAN;
		t->boot[i] = ~(int64_t)i;	/* a boot of its own: -i - 1 */
	}
	double sign = in->higher_is_better ? 1 : -1;
	for (size_t i = 0; i < in->nruns; i++) {
		const struct decide_run *r = &in->runs[i];
		if ((size_t)r->block >= nb)
			continue;
		size_t cell = r->config * nb + (size_t)r->block;
		if (r->status == DECIDE_RUN_OK && r->value > 0 && isfinite(r->value))
			t->lv[cell] = sign * log(r->value);
		else if (r->status == DECIDE_RUN_FAILED)
			t->lv[cell] = -INFINITY;
		else
			continue;
		if (r->boot > 0)
			t->boot[cell] = r->boot;
	}
	size_t nd = in->ndecisions, nl = in->nlevels;
	t->cfg_of = xmalloc(nd * nl * sizeof(*t->cfg_of));
	for (size_t i = 0; i < nd * nl; i++)
		t->cfg_of[i] = DECIDE_NONE;
	for (size_t c = 0; c < in->nconfigs; c++) {
		size_t *slot = &t->cfg_of[in->configs[c].decision * nl + in->configs[c].level];
		if (*slot == DECIDE_NONE)
			*slot = c;
	}
	return true;
}

void decide_table_release(struct decide_table *t)
{
	free(t->lv);
	free(t->boot);
	free(t->cfg_of);
	memset(t, 0, sizeof(*t));
}

size_t decide_table_config(const struct decide_table *t, size_t d, size_t l)
{
	return d < t->in->ndecisions && l < t->in->nlevels ? t->cfg_of[d * t->in->nlevels + l]
							     : DECIDE_NONE;
}

/* ---- units: blocks joined by shared boots ------------------------------- */

static size_t uf_find(size_t *parent, size_t i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

struct boot_cell {
	int64_t boot;
	size_t block;	/* index into the blocks compared */
};

static int cmp_boot_cell(const void *a, const void *b)
{
	const struct boot_cell *x = a, *y = b;
	return (x->boot > y->boot) - (x->boot < y->boot);
}

/*
 * Joins the compared blocks that share a boot (a guest that served runs
 * of several blocks): their log ratios are not independent.  cells holds
 * every (boot, block) the compared runs had; parent gets the components.
 * Returns whether any two were joined.
 */
static bool units_join(struct boot_cell *cells, size_t ncells, size_t *parent, size_t nblocks)
{
	for (size_t i = 0; i < nblocks; i++)
		parent[i] = i;
	/* A cell without a boot (<= 0: a boot of its own) joins nothing: only
	 * the others are sorted (none at all in a host-runner sweep). */
	size_t n = 0;
	for (size_t i = 0; i < ncells; i++)
		if (cells[i].boot > 0)
			cells[n++] = cells[i];
	ncells = n;
	qsort(cells, ncells, sizeof(*cells), cmp_boot_cell);
	bool joined = false;
	for (size_t i = 1; i < ncells; i++)
		if (cells[i].boot == cells[i - 1].boot) {
			size_t a = uf_find(parent, cells[i].block), b = uf_find(parent, cells[i - 1].block);
			if (a != b) {
				parent[a] = b;
				joined = true;
			}
		}
	return joined;
}

size_t decide_boot_groups(const int64_t *ids, size_t n, size_t *group)
{
	/* Open addressing, at most half full: boot ids are few per
	 * configuration in a reused-guest sweep but one per run without. */
	size_t cap = 2;
	while (cap < 2 * n)
		cap *= 2;
	size_t *slot = xmalloc(cap * sizeof(*slot)), k = 0;
	for (size_t i = 0; i < cap; i++)
		slot[i] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t h = (uint64_t)ids[i] * 0x9e3779b97f4a7c15u;
		size_t at = (size_t)(h >> 32) & (cap - 1);
		while (slot[at] != SIZE_MAX && ids[slot[at]] != ids[i])
			at = (at + 1) & (cap - 1);
		if (slot[at] == SIZE_MAX) {
			slot[at] = i;
			group[i] = k++;
		} else {
			group[i] = group[slot[at]];
		}
	}
	free(slot);
	return k;
}

void decide_block_units(const struct decide_table *t, size_t *parent)
{
	size_t nb = t->nblocks, nc = t->in->nconfigs, n = 0;
	struct boot_cell *cells = xmalloc(nb * nc * sizeof(*cells));
	for (size_t c = 0; c < nc; c++)
		for (size_t b = 0; b < nb; b++)
			if (!isnan(t->lv[c * nb + b]))
				cells[n++] = (struct boot_cell){ t->boot[c * nb + b], b };
	units_join(cells, n, parent, nb);
	for (size_t b = 0; b < nb; b++)
		parent[b] = uf_find(parent, b);
	free(cells);
}

/*
 * The units' values: the mean of each unit's log ratios, +-inf when a
 * failure shows in it, none (dropped) when failures show on both sides.
 * Returns how many; u gets them.
 */
static size_t units_collect(const double *v, size_t nv, size_t *parent, double *u)
{
	double *sum = xcalloc(nv, sizeof(*sum));
	size_t *cnt = xcalloc(nv, sizeof(*cnt));
	unsigned char *inf = xcalloc(nv, 1);	/* 1: -inf seen, 2: +inf seen */
	for (size_t i = 0; i < nv; i++) {
		size_t root = uf_find(parent, i);
		if (v[i] == -INFINITY)
			inf[root] |= 1;
		else if (v[i] == INFINITY)
			inf[root] |= 2;
		else
			sum[root] += v[i];
		cnt[root]++;
	}
	size_t nu = 0;
	for (size_t i = 0; i < nv; i++) {
		if (!cnt[i] || inf[i] == 3)
			continue;
		u[nu++] = inf[i] == 1 ? -INFINITY : inf[i] == 2 ? INFINITY : sum[i] / (double)cnt[i];
	}
	free(sum);
	free(cnt);
	free(inf);
	return nu;
}

/*
 * Far units, set aside: from UNIT_FAR_MIN units on, a finite unit more
 * than UNIT_FAR_K scaled MADs from the units' median is left out of the
 * comparison, the farthest first, at most a fifth of the units.  A run 3x
 * slower at a CV of 10 % lies ~8 SDs out.  Trimming alone (the far unit
 * and one good unit at the other end, or a failure's winsorizing) lost
 * 10 points of power at n = 10 when 5 % of runs were 3x slower; setting
 * the far units aside loses ~4 and keeps the level within a point
 * (tests/bench/bench-engine.c: heavy tails, coverage).  Failures are not
 * far units: they stay, as the worst outcome.  Returns how many were set
 * aside; u is compacted.
 */
#define UNIT_FAR_K 5.0
#define UNIT_FAR_MIN 10

static size_t set_far_units_aside(double *u, size_t *nu)
{
	size_t n = *nu;
	if (n < UNIT_FAR_MIN)
		return 0;
	double *f = xmalloc(n * sizeof(*f));
	size_t nf = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(u[i]))
			f[nf++] = u[i];
	double med = NAN, lim = NAN;
	if (nf >= UNIT_FAR_MIN) {
		med = stats_median(f, nf);
		for (size_t i = 0; i < nf; i++)
			f[i] = fabs(f[i] - med);
		lim = UNIT_FAR_K * 1.482602218505602 * stats_median(f, nf);
	}
	free(f);
	if (!(lim > 0))
		return 0;
	size_t aside = 0;
	while (aside < n / 5) {
		size_t far = n;
		for (size_t i = 0; i < n - aside; i++)
			if (isfinite(u[i]) && fabs(u[i] - med) > lim &&
			    (far == n || fabs(u[i] - med) > fabs(u[far] - med)))
				far = i;
		if (far == n)
			break;
		aside++;
		u[far] = u[n - aside];
	}
	*nu = n - aside;
	return aside;
}

void decide_paired(const struct decide_table *t, const size_t *xs, const size_t *ys, size_t n,
		   struct decide_cmp *out)
{
	memset(out, 0, sizeof(*out));
	out->est = out->lo = out->hi = out->se = out->df = out->p = out->mde = NAN;
	out->alpha = NAN;
	out->needed = -1;
	size_t nb = t->nblocks;
	if (!n || !nb)
		return;
	double *v = xmalloc(nb * sizeof(*v));
	struct boot_cell *cells = xmalloc(nb * 2 * n * sizeof(*cells));
	size_t nv = 0, ncells = 0;
	for (size_t b = 0; b < nb; b++) {
		double sum = 0;
		bool low = false, high = false, complete = true;
		for (size_t i = 0; i < n && complete; i++) {
			double a = t->lv[xs[i] * nb + b], c = t->lv[ys[i] * nb + b];
			double d = a - c;	/* -inf - -inf: both failed, a tie */
			if (isnan(a) || isnan(c)) {
				complete = false;
			} else if (isnan(d)) {
				sum += 0;
			} else if (d == -INFINITY) {
				low = true;
			} else if (d == INFINITY) {
				high = true;
			} else {
				sum += d;
			}
		}
		if (!complete || (low && high))
			continue;
		for (size_t i = 0; i < n; i++) {
			cells[ncells++] = (struct boot_cell){ t->boot[xs[i] * nb + b], nv };
			cells[ncells++] = (struct boot_cell){ t->boot[ys[i] * nb + b], nv };
		}
		v[nv++] = low ? -INFINITY : high ? INFINITY : sum / (double)n;
	}
	out->pairs = nv;
	size_t *parent = xmalloc(nv * sizeof(*parent));
	bool joined = units_join(cells, ncells, parent, nv);
	double *u = xmalloc(nv * sizeof(*u));
	/* Every block a unit of its own: the units are the blocks' values. */
	size_t nu = nv;
	if (joined)
		nu = units_collect(v, nv, parent, u);
	else
		memcpy(u, v, nv * sizeof(*u));
	out->set_aside = set_far_units_aside(u, &nu);
	out->units = nu;
	struct stats_location loc;
	if (stats_trimmed_location(u, nu, DECIDE_TRIM, &loc) == 0) {
		out->ok = true;
		out->est = loc.est;
		out->se = loc.se;
		out->df = loc.df;
		out->trimmed = loc.trimmed;
	} else {
		/* Untestable: the plain mean of the finite units, a point estimate only. */
		double sum = 0;
		size_t k = 0;
		for (size_t i = 0; i < nu; i++)
			if (isfinite(u[i])) {
				sum += u[i];
				k++;
			}
		out->est = k ? sum / (double)k : NAN;
	}
	free(u);
	free(parent);
	free(cells);
	free(v);
}

/* ---- intervals, verdicts, sample sizes ------------------------------------ */

double decide_cmp_lower(const struct decide_cmp *c, double one_sided)
{
	if (!c->ok)
		return NAN;
	return c->se > 0 ? c->est - stats_t_quantile(1 - one_sided, c->df) * c->se : c->est;
}

double decide_cmp_upper(const struct decide_cmp *c, double one_sided)
{
	if (!c->ok)
		return NAN;
	return c->se > 0 ? c->est + stats_t_quantile(1 - one_sided, c->df) * c->se : c->est;
}

double decide_cmp_p_worse(const struct decide_cmp *c)
{
	if (!c->ok)
		return NAN;
	if (c->se == 0)
		return c->est < 0 ? 0 : 1;
	return stats_t_cdf(c->est / c->se, c->df);
}

void decide_cmp_at(struct decide_cmp *c, double alpha)
{
	c->alpha = alpha;
	if (!c->ok) {
		c->lo = c->hi = c->p = c->mde = NAN;
		return;
	}
	c->lo = decide_cmp_lower(c, alpha / 2);
	c->hi = decide_cmp_upper(c, alpha / 2);
	c->p = c->se > 0 ? stats_t_p(c->est / c->se, c->df) : c->est == 0 ? 1 : 0;
	c->mde = stats_min_detectable(c->se, c->df, alpha, DECIDE_POWER);
}

enum decide_verdict decide_verdict_of(const struct decide_cmp *c, double delta)
{
	if (!c->ok || isnan(c->lo) || isnan(c->hi))
		return DECIDE_INSUFFICIENT;
	double glo = expm1(c->lo), ghi = expm1(c->hi);
	if (glo > -delta && ghi < delta)
		return DECIDE_EQUIVALENT;
	if (glo > 0)
		return DECIDE_BETTER;
	if (ghi < 0)
		return DECIDE_WORSE;
	return DECIDE_UNDECIDED;
}

/*
 * The effect n units detect at c's alpha with DECIDE_POWER (log scale),
 * planned with the 65 % upper confidence bound of the units' spread: the
 * spread of a few units is often underestimated, and a plan on it asks for
 * too few blocks (an extend that then decides too rarely).
 */
static double detectable_at(const struct decide_cmp *c, size_t n)
{
	double scale = c->se * sqrt((double)c->units) *
		       sqrt(c->df / stats_chi2_quantile(DECIDE_PLAN_SPREAD, c->df));
	double df = (double)(n - 2 * (size_t)floor(DECIDE_TRIM * (double)n) - 1);
	return stats_min_detectable(scale / sqrt((double)n), df, c->alpha, DECIDE_POWER);
}

/* Units needed for an effect `effect` (log, > 0) to show; cap + 1 beyond cap (bisection). */
static size_t units_needed(const struct decide_cmp *c, double effect, size_t cap)
{
	if (!(effect > 0) || !(c->se > 0) || detectable_at(c, cap) > effect)
		return cap + 1;
	size_t lo = c->units, hi = cap;	/* detectable_at(hi) <= effect < detectable_at(lo) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (detectable_at(c, mid) <= effect)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

int decide_needed(const struct decide_cmp *c, double delta)
{
	double per_unit = c->units ? (double)c->pairs / (double)c->units : 1;
	if (!c->ok) {
		/* Enough for a test, at the least: two units. */
		if (c->units >= 2)
			return 0;
		return (int)ceil((double)(2 - c->units) * per_unit);
	}
	if (decide_verdict_of(c, delta) != DECIDE_UNDECIDED)
		return 0;
	size_t cap = c->units + (size_t)ceil(DECIDE_NEEDED_CAP / per_unit);
	double a = fabs(c->est);
	size_t n1 = units_needed(c, a, cap), n2 = units_needed(c, log1p(delta) - a, cap);
	size_t n = n1 < n2 ? n1 : n2;
	if (n > cap)
		return DECIDE_NEEDED_CAP + 1;
	int more = (int)ceil((double)(n - c->units) * per_unit);
	return more > DECIDE_NEEDED_CAP ? DECIDE_NEEDED_CAP + 1 : more;
}
