/*
 * race: a raced sweep's look after each block — which decisions to drop,
 * and whether to stop — on the engine's own comparisons; see decide.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "decide-int.h"
#include "stats.h"

const char *decide_stop_name(enum decide_stop s)
{
	switch (s) {
	case DECIDE_STOP_DECIDED: return "decided";
	case DECIDE_STOP_SINGLE: return "one survivor";
	case DECIDE_STOP_MAX: return "maximum reached";
	case DECIDE_GO_ON: break;
	}
	return "running";
}

/* ---- the stop: a group-sequential test over the race's looks -------------- */

/*
 * The error the looks may spend by information fraction t (blocks so far
 * over the race's maximum): Hwang, Shih & DeCani's family (1990),
 * alpha (1 - e^(-g t)) / (1 - e^(-g)), here with g = RACE_SPEND_GAMMA.
 * Negative g spends little early (g = -4 is close to O'Brien & Fleming's
 * boundaries), g = 1 is close to Pocock's (even spending); the value is
 * the one docs/advisor.md ("Racing") gives with its measurements.
 */
#ifndef RACE_SPEND_GAMMA
#define RACE_SPEND_GAMMA (-2.0)
#endif

static double spend(double t, double alpha)
{
	if (t <= 0)
		return 0;
	if (t >= 1)
		return alpha;
	double g = RACE_SPEND_GAMMA;
	return g == 0 ? alpha * t : alpha * -expm1(-g * t) / -expm1(-g);
}

/* Grid step on the score scale, in standard deviations of one block's increment. */
#define GS_STEP 0.25
/* The continuation region is cut at this many standard deviations of the score. */
#define GS_SPAN 8.0

/* Simpson's weight of point i of an n-point grid (n odd), times h / 3. */
static double simpson(size_t i, size_t n, double h)
{
	double w = i == 0 || i == n - 1 ? 1 : i % 2 ? 4 : 2;
	return w * h / 3;
}

/* A grid of n (odd) points over [-half, half] of step about step. */
static size_t grid_points(double half, double step, double *h)
{
	size_t n = 2 * (size_t)ceil(half / step) + 1;
	if (n < 3)
		n = 3;
	*h = 2 * half / (double)(n - 1);
	return n;
}

/* P(|S_k| >= c sqrt(I_k), no earlier crossing): masses m at points u, increment sd. */
static double crossing(const double *u, const double *m, size_t n, double bound, double sd)
{
	double p = 0;
	for (size_t i = 0; i < n; i++)
		p += m[i] * (stats_normal_cdf((-bound - u[i]) / sd) +
			     stats_normal_cdf((u[i] - bound) / sd));
	return p;
}

void decide_race_levels(int first_test, int max_blocks, double *levels)
{
	if (max_blocks < 1)
		return;
	for (int b = 0; b <= max_blocks; b++)
		levels[b] = 0;
	if (first_test < 1)
		first_test = 1;
	if (first_test > max_blocks) {
		levels[max_blocks] = DECIDE_ALPHA;
		return;
	}
	/*
	 * The score S_k = Z_k sqrt(I_k), I_k the blocks at look k, is Brownian
	 * motion under no difference: independent normal increments of
	 * variance I_k - I_(k-1).  Its sub-density on the continuation region
	 * (no look crossed yet) is carried on a grid from look to look
	 * (Armitage, McPherson & Rowe 1969; Jennison & Turnbull 2000, ch. 19),
	 * each look's symmetric bound c_k found by bisection so that the
	 * crossing probability at look k is what the spending adds there.
	 */
	double *u = NULL, *m = NULL;
	size_t n = 0;
	double spent = 0;
	for (int b = first_test; b <= max_blocks; b++) {
		double want = spend((double)b / max_blocks, DECIDE_ALPHA) - spent;
		double root = sqrt((double)b), c;
		if (b == first_test) {
			c = stats_normal_quantile(1 - want / 2);
		} else {
			double sd = 1;	/* one block's increment */
			double lo = 0, hi = GS_SPAN + 2;
			if (!(want > 0) || crossing(u, m, n, hi * root, sd) >= want)
				c = want > 0 ? hi : INFINITY;
			else {
				for (int it = 0; it < 50; it++) {
					double mid = (lo + hi) / 2;
					if (crossing(u, m, n, mid * root, sd) > want)
						lo = mid;
					else
						hi = mid;
				}
				c = (lo + hi) / 2;
			}
		}
		levels[b] = isinf(c) ? 0 : 2 * stats_normal_cdf(-c);
		spent += want;
		if (b == max_blocks)
			break;
		/* The sub-density at this look, on |s| < c sqrt(b) (cut at GS_SPAN sd). */
		double half = fmin(c, GS_SPAN) * root, h;
		size_t n2 = grid_points(half, GS_STEP, &h);
		double *u2 = xmalloc(n2 * sizeof(*u2)), *m2 = xmalloc(n2 * sizeof(*m2));
		for (size_t k = 0; k < n2; k++) {
			u2[k] = -half + (double)k * h;
			double f = 0;
			if (b == first_test) {
				f = exp(-u2[k] * u2[k] / (2 * b)) / sqrt(2 * M_PI * b);
			} else {
				/* increments of one block: variance 1 */
				for (size_t i = 0; i < n; i++) {
					double z = u2[k] - u[i];
					if (fabs(z) < 9)
						f += m[i] * exp(-z * z / 2);
				}
				f /= sqrt(2 * M_PI);
			}
			m2[k] = f * simpson(k, n2, h);
		}
		free(u);
		free(m);
		u = u2;
		m = m2;
		n = n2;
	}
	free(u);
	free(m);
}

double decide_race_level(int first_test, int max_blocks, int blocks)
{
	if (max_blocks < 1)
		return DECIDE_ALPHA;
	if (first_test < 1)
		first_test = 1;
	if (blocks > max_blocks)
		blocks = max_blocks;
	if (blocks < first_test)
		blocks = first_test < max_blocks ? first_test : max_blocks;
	double *levels = xmalloc((size_t)(max_blocks + 1) * sizeof(*levels));
	decide_race_levels(first_test, max_blocks, levels);
	double a = levels[blocks];
	free(levels);
	return a;
}

/*
 * An elimination test's one-sided level: alpha over the other survivors
 * (a decision as good as the best is compared with the leader, the most
 * favourable of them: Bonferroni over them bounds the chance of dropping
 * it in one look) and over the L looks the race may take.  Repeated looks
 * at growing data are strongly correlated, so they cost far less than a
 * factor L (Pocock 1977: about L^0.6 for equally spaced looks); L^0.8
 * keeps a decision as good as the best at <= 5 % of races dropped in the
 * simulations of tests/bench/bench-engine.c (3.7 % at 20 blocks).
 */
double decide_race_alpha(size_t survivors, int looks)
{
	double others = survivors > 1 ? (double)(survivors - 1) : 1;
	double l = looks > 1 ? pow((double)looks, 0.8) : 1;
	return DECIDE_ALPHA / (others * l);
}

double decide_race_p(const struct decide_table *t, const struct decide_settings *s, size_t d,
		     size_t leader, double *ratio)
{
	size_t nl = t->in->nlevels;
	size_t *xs = xmalloc(nl * sizeof(*xs)), *ys = xmalloc(nl * sizeof(*ys));
	size_t k = 0;
	for (size_t l = 0; l < nl; l++) {
		size_t x = decide_table_config(t, d, l), y = decide_table_config(t, leader, l);
		if (x != DECIDE_NONE && y != DECIDE_NONE) {
			xs[k] = x;
			ys[k++] = y;
		}
	}
	double p = NAN;
	*ratio = NAN;
	if (k && (k == 1 || s->objective == DECIDE_OBJECTIVE_MEAN)) {
		struct decide_cmp c;
		decide_paired(t, xs, ys, k, &c);
		p = decide_cmp_p_worse(&c);
		*ratio = exp(c.est);
	} else if (k) {
		/* Worse at every level (intersection-union: each at the full level). */
		double margin = -INFINITY;
		p = 0;
		for (size_t i = 0; i < k && !isnan(p); i++) {
			struct decide_cmp c;
			decide_paired(t, &xs[i], &ys[i], 1, &c);
			p = fmax(p, decide_cmp_p_worse(&c));
			if (!c.ok)
				p = NAN;
			margin = fmax(margin, c.est);
		}
		*ratio = exp(margin);
	}
	free(xs);
	free(ys);
	return p;
}

void decide_race_step_release(struct decide_race_step *st)
{
	free(st->elims);
	memset(st, 0, sizeof(*st));
	st->leader = DECIDE_NONE;
}

/* Contenders of the race: no host reference, not yet eliminated. */
static bool races(const struct decide_input *in, size_t d)
{
	return !in->decisions[d].host_reference && in->decisions[d].elim.block == 0;
}

/* The blocks holding an outcome (a run ok or failed) in the input. */
static int blocks_run(const struct decide_input *in)
{
	int n = 0;
	for (size_t i = 0; i < in->nruns; i++)
		if (in->runs[i].status != DECIDE_RUN_NONE && in->runs[i].block + 1 > n)
			n = in->runs[i].block + 1;
	return n;
}

void decide_race_settings(const struct decide_input *in, int first_test, int max_blocks,
			  struct decide_settings *s)
{
	int blocks = s->blocks > 0 ? s->blocks : blocks_run(in);
	s->alpha = decide_race_level(first_test, max_blocks, blocks);
}

int decide_race_look(const struct decide_input *in, const struct decide_settings *s, int blocks,
		     int first_test, int max_blocks, double level, struct decide_race_step *out)
{
	memset(out, 0, sizeof(*out));
	out->blocks = blocks;
	out->leader = DECIDE_NONE;
	if (first_test < 2 || blocks < 0)
		return -1;
	struct decide_settings look = *s;
	look.blocks = blocks;
	look.verdicts_only = true;	/* only eliminations and the stop are read */
	/* The stop's verdict at this look's group-sequential level. */
	look.alpha = level;
	struct decide_result r;
	if (decide_compute(in, &look, &r) < 0)
		return -1;
	for (size_t d = 0; d < in->ndecisions; d++)
		out->nsurvivors += races(in, d);
	out->leader = r.best;
	bool at_max = blocks >= max_blocks;
	if (blocks < first_test || r.best == DECIDE_NONE) {
		out->stop = at_max ? DECIDE_STOP_MAX : DECIDE_GO_ON;
		decide_result_release(&r);
		return 0;
	}
	struct decide_table t;
	if (!decide_table_build(in, blocks, &t)) {
		/* Not reached once decide_compute held the input; never a silent look. */
		decide_table_release(&t);
		decide_result_release(&r);
		return -1;
	}
	int looks = max_blocks - first_test + 1;
	double alpha = decide_race_alpha(out->nsurvivors, looks);
	/* An elimination's p (below alpha) times scale stays below DECIDE_ALPHA: no cap at 1. */
	double scale = DECIDE_ALPHA / alpha;
	out->elims = xcalloc(in->ndecisions, sizeof(*out->elims));
	for (size_t d = 0; d < in->ndecisions; d++) {
		if (!races(in, d) || d == r.best || d == in->baseline)
			continue;
		const struct decide_decision_out *o = &r.decisions[d];
		size_t n = o->n_ok + o->n_failed;
		double pf = stats_binomial_upper(o->n_failed, n, s->max_failure_rate);
		double ratio, p = decide_race_p(&t, s, d, r.best, &ratio);
		if (o->n_failed && pf < alpha)
			out->elims[out->nelims++] = (struct decide_elimination){
				.decision = d, .against = DECIDE_NONE, .p = pf * scale,
				.ratio = NAN };
		else if (!isnan(p) && p < alpha)
			out->elims[out->nelims++] = (struct decide_elimination){
				.decision = d, .against = r.best, .p = p * scale,
				.ratio = ratio };
	}
	decide_table_release(&t);
	out->nsurvivors -= out->nelims;

	/* The verdict on these blocks, with this look's eliminations standing. */
	struct decide_option *opts = xmalloc(in->ndecisions * sizeof(*opts));
	memcpy(opts, in->decisions, in->ndecisions * sizeof(*opts));
	for (size_t i = 0; i < out->nelims; i++) {
		const struct decide_elimination *e = &out->elims[i];
		opts[e->decision].elim = (struct decide_stored_elim){ blocks, e->against, e->p };
	}
	struct decide_input after = *in;
	after.decisions = opts;
	size_t contenders = 0;
	for (size_t d = 0; d < in->ndecisions; d++)
		contenders += races(&after, d) && d != in->baseline;
	/* Without eliminations the verdict is the one just computed. */
	int rc = 0;
	if (out->nelims) {
		decide_result_release(&r);
		rc = decide_compute(&after, &look, &r);
	}
	free(opts);
	if (rc < 0) {
		/* No look: neither its eliminations nor a stop stand. */
		free(out->elims);
		out->elims = NULL;
		out->nelims = 0;
		return -1;
	}
	if (contenders == 0 || (in->baseline == DECIDE_NONE && contenders == 1))
		out->stop = DECIDE_STOP_SINGLE;
	else if (decide_decisive(&r) && r.ncontention == 0)
		out->stop = DECIDE_STOP_DECIDED;
	else if (at_max)
		out->stop = DECIDE_STOP_MAX;
	decide_result_release(&r);
	return 0;
}

int decide_race(const struct decide_input *in, const struct decide_settings *s, int blocks,
		int first_test, int max_blocks, struct decide_race_step *out)
{
	double level = blocks >= first_test && first_test >= 2
		       ? decide_race_level(first_test, max_blocks, blocks) : DECIDE_ALPHA;
	return decide_race_look(in, s, blocks, first_test, max_blocks, level, out);
}

double decide_race_expected_runs(size_t ndecisions, size_t nlevels, size_t nreference,
				 int first_test, int max_blocks, double equivalence, uint64_t seed,
				 int nsim, size_t *max_out)
{
	size_t per_block = ndecisions * nlevels + nreference;
	*max_out = per_block * (size_t)(max_blocks > 0 ? max_blocks : 0);
	if (ndecisions < 2 || first_test >= max_blocks || nsim <= 0)
		return (double)*max_out;
	struct stats_rng rng;
	stats_rng_seed(&rng, seed);
	size_t nconf = ndecisions * nlevels;
	struct decide_option *opts = xcalloc(ndecisions, sizeof(*opts));
	struct decide_config *confs = xcalloc(nconf, sizeof(*confs));
	struct decide_run *runs = xcalloc(nconf * (size_t)max_blocks, sizeof(*runs));
	for (size_t c = 0; c < nconf; c++)
		confs[c] = (struct decide_config){ c / nlevels, c % nlevels };
	struct decide_settings s;
	decide_settings_init(&s);
	s.equivalence = equivalence;
	struct decide_input in = {
		.decisions = opts, .ndecisions = ndecisions, .configs = confs, .nconfigs = nconf,
		.nlevels = nlevels, .runs = runs, .baseline = ndecisions / 2,
		.higher_is_better = true, .boot_seconds = NAN, .run_seconds = NAN,
	};
	double *levels = xmalloc((size_t)(max_blocks + 1) * sizeof(*levels));
	decide_race_levels(first_test, max_blocks, levels);
	double total = 0;
	bool failed = false;
	for (int k = 0; k < nsim && !failed; k++) {
		size_t nruns = 0, spent = 0;
		memset(opts, 0, ndecisions * sizeof(*opts));
		for (int b = 0; b < max_blocks; b++) {
			spent += nreference;
			for (size_t c = 0; c < nconf; c++) {
				size_t d = confs[c].decision;
				if (opts[d].elim.block)
					continue;
				double mu = -0.10 * (double)d / (double)(ndecisions - 1);
				runs[nruns++] = (struct decide_run){
					.config = c, .block = b, .status = DECIDE_RUN_OK,
					.value = 100 * exp(mu + 0.05 * stats_rng_normal(&rng)),
					.gang = NAN };
				spent++;
			}
			in.nruns = nruns;
			struct decide_race_step st;
			if (decide_race_look(&in, &s, b + 1, first_test, max_blocks,
					     levels[b + 1 < first_test ? first_test : b + 1],
					     &st) < 0) {
				decide_race_step_release(&st);
				failed = true;
				break;
			}
			for (size_t i = 0; i < st.nelims; i++)
				opts[st.elims[i].decision].elim =
					(struct decide_stored_elim){ b + 1, st.elims[i].against, st.elims[i].p };
			enum decide_stop stop = st.stop;
			decide_race_step_release(&st);
			if (stop != DECIDE_GO_ON)
				break;
		}
		total += (double)spent;
	}
	free(levels);
	free(runs);
	free(confs);
	free(opts);
	return failed ? NAN : total / nsim;
}
