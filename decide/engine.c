/*
 * engine: verdicts against the baseline, the best, the recommendation and
 * what would settle it; see decide.h for the model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "decide-int.h"
#include "stats.h"

const char *decide_verdict_name(enum decide_verdict v)
{
	switch (v) {
	case DECIDE_BETTER: return "better";
	case DECIDE_EQUIVALENT: return "equivalent";
	case DECIDE_WORSE: return "worse";
	case DECIDE_UNDECIDED: return "undecided";
	case DECIDE_INSUFFICIENT: return "insufficient";
	case DECIDE_FAILING: return "failing";
	case DECIDE_NOT_COMPARED: break;
	}
	return "not compared";
}

const char *decide_objective_name(enum decide_objective o)
{
	return o == DECIDE_OBJECTIVE_MEAN ? "mean" : "worst";
}

void decide_settings_init(struct decide_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->objective = DECIDE_OBJECTIVE_WORST;
	s->equivalence = DECIDE_DEFAULT_EQUIVALENCE;
	s->max_failure_rate = DECIDE_DEFAULT_MAX_FAILURE_RATE;
}

bool decide_decisive(const struct decide_result *r)
{
	return r->verdict == DECIDE_BETTER || r->verdict == DECIDE_EQUIVALENT;
}

double decide_gain(double log_gain)
{
	return isnan(log_gain) ? NAN : expm1(log_gain);
}

/* A comparison with nothing in it yet. */
static void cmp_empty(struct decide_cmp *c)
{
	memset(c, 0, sizeof(*c));
	c->est = c->lo = c->hi = c->se = c->df = c->p = c->mde = c->alpha = c->bias = NAN;
	c->needed = -1;
}

/* The pairs of configurations of decisions d and ref at the levels both were measured at. */
static size_t level_pairs(const struct decide_table *t, size_t d, size_t ref, size_t *xs,
			  size_t *ys)
{
	size_t k = 0;
	for (size_t l = 0; l < t->in->nlevels; l++) {
		size_t x = decide_table_config(t, d, l), y = decide_table_config(t, ref, l);
		if (x != DECIDE_NONE && y != DECIDE_NONE) {
			xs[k] = x;
			ys[k++] = y;
		}
	}
	return k;
}

/*
 * Blocks more a comparison needs (decide_needed), or -1 (unknown) in a
 * look that wants verdicts only: the figure changes no verdict, and a
 * race's simulation (plan) spent a third of its time on it.
 */
static int needed_of(const struct decide_settings *s, const struct decide_cmp *c)
{
	return s->verdicts_only ? -1 : decide_needed(c, s->equivalence);
}

/* The fewer of two counts. */
static size_t fewer(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * The bias of the smallest of k level estimates as an estimate of the
 * smallest true level gain: E[min_i (est_i + se_i Z_i)] - min_i est_i, the
 * levels' estimates taken as their truths and independent (a parametric
 * bootstrap, integrated, not drawn: E[X] = a + int_a^inf P(X > x) dx for
 * X >= a nearly surely).  <= 0; 0 for one level; about -0.85 se for three
 * equal levels.  NAN when a level has no spread estimate.
 */
static double worst_bias(const struct decide_cmp *lv, size_t k)
{
	double lo = INFINITY, hi = -INFINITY, top = 0, m = INFINITY;
	for (size_t i = 0; i < k; i++) {
		if (!lv[i].ok || !isfinite(lv[i].est) || !(lv[i].se >= 0))
			return NAN;
		m = fmin(m, lv[i].est);
		top = fmax(top, lv[i].se);
	}
	if (k < 2 || top == 0)
		return 0;
	lo = m - 10 * top;
	hi = m + 10 * top;
	const int steps = 2000;
	double h = (hi - lo) / steps, sum = 0;
	for (int j = 0; j <= steps; j++) {
		double x = lo + h * j, surv = 1;
		for (size_t i = 0; i < k; i++)
			surv *= lv[i].se > 0 ? 0.5 * erfc((x - lv[i].est) / (lv[i].se * M_SQRT2))
					     : x < lv[i].est;
		sum += (j == 0 || j == steps ? 0.5 : 1) * surv;
	}
	return fmin(0, lo + h * sum - m);
}

/*
 * The worst objective against the baseline from the levels' comparisons
 * lv[0..k) (at alpha): the smallest level estimate, its interval from the
 * levels' lower bounds at alpha/2 and upper bounds at alpha/(2k), one
 * sided (decide.h); needed: the most any level needs.
 */
static void worst_of(const struct decide_cmp *lv, size_t k, double alpha,
		     const struct decide_settings *s, struct decide_cmp *out)
{
	bool ok = true;
	size_t worst = 0;
	for (size_t i = 0; i < k; i++) {
		ok &= lv[i].ok;
		if (!(lv[i].est >= lv[worst].est))
			worst = isnan(lv[i].est) && !isnan(lv[worst].est) ? worst : i;
	}
	*out = lv[worst];
	out->ok = ok;
	out->lo = out->hi = out->mde = NAN;
	out->needed = 0;
	for (size_t i = 0; i < k; i++) {
		out->pairs = fewer(out->pairs, lv[i].pairs);
		out->units = fewer(out->units, lv[i].units);
		int need = needed_of(s, &lv[i]);
		if (need < 0 || out->needed < 0)
			out->needed = -1;
		else if (need > out->needed)
			out->needed = need;
		if (!ok)
			continue;
		double lo = decide_cmp_lower(&lv[i], alpha / 2);
		double hi = decide_cmp_upper(&lv[i], alpha / (2 * (double)k));
		/* out's ends start as NAN, which fmin and fmax pass over. */
		out->lo = fmin(out->lo, lo);
		out->hi = fmin(out->hi, hi);
		out->mde = fmax(out->mde, lv[i].mde);
	}
	if (!ok)
		out->p = NAN;
	out->bias = ok ? worst_bias(lv, k) : NAN;
}

/*
 * The difference of two decisions' worst objectives from their levels'
 * paired differences lv[0..k) (each at alpha / k): it lies in [min, max]
 * of them, so that is its interval.  est: score difference when known.
 */
static void span_of(const struct decide_cmp *lv, size_t k, double alpha,
		    const struct decide_settings *s, double score_d, double score_ref,
		    struct decide_cmp *out)
{
	bool ok = true;
	double sum = 0, p = 0;
	out->needed = 0;
	out->pairs = out->units = SIZE_MAX;
	for (size_t i = 0; i < k; i++) {
		const struct decide_cmp *c = &lv[i];
		ok &= c->ok;
		sum += c->est;
		out->pairs = fewer(out->pairs, c->pairs);
		out->units = fewer(out->units, c->units);
		if (!c->ok)
			continue;
		out->lo = fmin(out->lo, c->lo);	/* NAN from cmp_empty at first */
		out->hi = fmax(out->hi, c->hi);
		p = fmax(p, c->p);
		int need = needed_of(s, c);
		out->needed = need > out->needed ? need : out->needed;
	}
	out->ok = ok;
	out->alpha = alpha;
	out->est = !isnan(score_d) && !isnan(score_ref) ? score_d - score_ref : sum / (double)k;
	out->p = ok ? p : NAN;
	if (!ok)
		out->lo = out->hi = NAN;
}

/*
 * Decision d against ref over the levels both were measured at, at alpha.
 * `mean`, or one level: one paired test of the levels' averaged log
 * ratios.  `worst`, against the baseline (difference false): worst_of;
 * the difference of d's and ref's worst objectives (ref the best or the
 * pick; the baseline cancels out): span_of.
 */
static void levels_cmp(const struct decide_table *t, const struct decide_settings *s, size_t d,
		       size_t ref, double alpha, bool difference, double score_d,
		       double score_ref, struct decide_cmp *out)
{
	size_t nl = t->in->nlevels;
	size_t *xs = xmalloc(nl * sizeof(*xs)), *ys = xmalloc(nl * sizeof(*ys));
	size_t k = level_pairs(t, d, ref, xs, ys);
	cmp_empty(out);
	if (k == 1 || (k > 1 && s->objective == DECIDE_OBJECTIVE_MEAN)) {
		decide_paired(t, xs, ys, k, out);
		decide_cmp_at(out, alpha);
		out->needed = needed_of(s, out);
	} else if (k > 1) {
		struct decide_cmp *lv = xcalloc(k, sizeof(*lv));
		for (size_t i = 0; i < k; i++) {
			decide_paired(t, &xs[i], &ys[i], 1, &lv[i]);
			decide_cmp_at(&lv[i], difference ? alpha / (double)k : alpha);
		}
		if (difference)
			span_of(lv, k, alpha, s, score_d, score_ref, out);
		else
			worst_of(lv, k, alpha, s, out);
		free(lv);
	}
	if (out->ok && decide_verdict_of(out, s->equivalence) != DECIDE_UNDECIDED)
		out->needed = 0;
	free(xs);
	free(ys);
}

/* d against ref by the objective (the baseline, or a reference). */
static void objective_cmp(const struct decide_table *t, const struct decide_settings *s,
			  size_t d, size_t ref, double alpha, struct decide_cmp *out)
{
	levels_cmp(t, s, d, ref, alpha, false, NAN, NAN, out);
}

/* The objective difference of d and ref (the best or the pick). */
static void difference_cmp(const struct decide_table *t, const struct decide_settings *s,
			   size_t d, size_t ref, double alpha, double score_d, double score_ref,
			   struct decide_cmp *out)
{
	levels_cmp(t, s, d, ref, alpha, true, score_d, score_ref, out);
}

/* ---- counts and failures ------------------------------------------------- */

/* Is the run in a look over the first `blocks` blocks (0: all of them)? */
static bool in_look(const struct decide_run *run, int blocks)
{
	return blocks <= 0 || run->block < blocks;
}

/* A successful run: it ran and gave a value. */
static bool run_ok(const struct decide_run *run)
{
	return run->status == DECIDE_RUN_OK && run->value > 0;
}

/* Outcomes and boots per configuration and decision (decide_table_build checked the indices). */
static void counts(const struct decide_table *t, int blocks, struct decide_result *r)
{
	const struct decide_input *in = t->in;
	/* The OK runs' boots by configuration, in run order (one pass, not one per configuration). */
	size_t *at = xcalloc(in->nconfigs + 1, sizeof(*at));
	for (size_t i = 0; i < in->nruns; i++)
		if (in_look(&in->runs[i], blocks) && run_ok(&in->runs[i]))
			at[in->runs[i].config + 1]++;
	for (size_t c = 0; c < in->nconfigs; c++)
		at[c + 1] += at[c];
	int64_t *seen = xmalloc(in->nruns * sizeof(*seen));
	size_t *group = xmalloc(in->nruns * sizeof(*group));
	for (size_t i = 0; i < in->nruns; i++) {
		const struct decide_run *run = &in->runs[i];
		if (!in_look(run, blocks))
			continue;
		struct decide_config_out *co = &r->configs[run->config];
		if (run_ok(run)) {
			seen[at[run->config] + co->n_ok++] = run->boot > 0 ? run->boot : ~(int64_t)i;
		} else if (run->status == DECIDE_RUN_FAILED) {
			co->n_failed++;
		} else {
			co->n_none++;
		}
	}
	for (size_t c = 0; c < in->nconfigs; c++) {
		struct decide_config_out *co = &r->configs[c];
		co->nboots = decide_boot_groups(seen + at[c], co->n_ok, group);
		size_t n = co->n_ok + co->n_failed;
		co->failure_rate = n ? (double)co->n_failed / (double)n : NAN;
		r->runs_ok += co->n_ok;
		r->runs_failed += co->n_failed;
		r->runs_total += co->n_ok + co->n_failed + co->n_none;
	}
	free(seen);
	free(group);
	free(at);
	for (size_t c = 0; c < in->nconfigs; c++) {
		struct decide_decision_out *d = &r->decisions[in->configs[c].decision];
		d->n_ok += r->configs[c].n_ok;
		d->n_failed += r->configs[c].n_failed;
	}
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		size_t n = o->n_ok + o->n_failed;
		o->failure_rate = n ? (double)o->n_failed / (double)n : NAN;
	}
}

/* Failing: no successful run among its outcomes, or a failure rate above the maximum. */
static bool is_failing(size_t ok, size_t failed, double rate, double max_rate)
{
	return (failed && !ok) || rate > max_rate;
}

/*
 * Failing: a configuration by its own rate; a decision by its pooled rate,
 * or at a level: one it never succeeds at (settled, not "insufficient"),
 * and under `worst` one it fails at above the maximum (its worst case).
 */
static void failures(const struct decide_input *in, const struct decide_settings *s,
		     const struct decide_table *t, struct decide_result *r)
{
	for (size_t c = 0; c < in->nconfigs; c++) {
		struct decide_config_out *co = &r->configs[c];
		co->failing = is_failing(co->n_ok, co->n_failed, co->failure_rate,
					 s->max_failure_rate);
	}
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		o->failing = is_failing(o->n_ok, o->n_failed, o->failure_rate, s->max_failure_rate);
		o->failing_level = DECIDE_NONE;
		for (size_t l = 0; l < in->nlevels && o->failing_level == DECIDE_NONE; l++) {
			size_t c = decide_table_config(t, d, l);
			if (c == DECIDE_NONE)
				continue;
			const struct decide_config_out *co = &r->configs[c];
			if ((co->n_failed && !co->n_ok) ||
			    (s->objective == DECIDE_OBJECTIVE_WORST && co->failing))
				o->failing_level = l;
		}
		o->failing |= o->failing_level != DECIDE_NONE;
	}
}

/* The one-sided p of x failing more often than y (Fisher's exact test). */
static double failures_p(size_t x_failed, size_t x_ok, size_t y_failed, size_t y_ok)
{
	return stats_fisher_more(x_failed, x_failed + x_ok, y_failed, y_failed + y_ok);
}

/*
 * More failures than the baseline, shown at the verdicts' alphas: each
 * configuration against the baseline's at its level (level_alpha); a
 * decision pooled over its levels under `mean`, level by level under
 * `worst` (the smallest p, Bonferroni over the levels).
 */
static void more_failures(const struct decide_table *t, const struct decide_settings *s,
			  struct decide_result *r)
{
	const struct decide_input *in = t->in;
	size_t b = in->baseline;
	for (size_t c = 0; c < in->nconfigs; c++) {
		struct decide_config_out *co = &r->configs[c];
		size_t bc = decide_table_config(t, b, in->configs[c].level);
		co->failures_p = NAN;
		if (bc == DECIDE_NONE || bc == c || in->configs[c].decision == b)
			continue;
		const struct decide_config_out *bo = &r->configs[bc];
		co->failures_p = failures_p(co->n_failed, co->n_ok, bo->n_failed, bo->n_ok);
		co->more_failures = co->failures_p < r->level_alpha;
	}
	const struct decide_decision_out *bd = &r->decisions[b];
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		o->failures_p = NAN;
		if (d == b)
			continue;
		if (s->objective == DECIDE_OBJECTIVE_MEAN) {
			o->failures_p = failures_p(o->n_failed, o->n_ok, bd->n_failed, bd->n_ok);
		} else {
			size_t k = 0;
			double p = 1;
			for (size_t l = 0; l < in->nlevels; l++) {
				size_t x = decide_table_config(t, d, l), y = decide_table_config(t, b, l);
				if (x == DECIDE_NONE || y == DECIDE_NONE)
					continue;
				k++;
				p = fmin(p, r->configs[x].failures_p);
			}
			o->failures_p = k ? fmin(1, p * (double)k) : NAN;
		}
		o->more_failures = o->failures_p < r->objective_alpha;
	}
}

/* The verdict a comparison's interval gives, with the failure rules on top. */
static enum decide_verdict verdict_with_failures(const struct decide_cmp *c, double delta,
						 bool failing, bool more_failures)
{
	if (failing)
		return DECIDE_FAILING;
	enum decide_verdict v = decide_verdict_of(c, delta);
	return v == DECIDE_BETTER && more_failures ? DECIDE_UNDECIDED : v;
}

/* ---- against the baseline ------------------------------------------------- */

/* Has the baseline 2 successful runs wherever it was measured (and somewhere)? */
static bool baseline_testable(const struct decide_table *t, const struct decide_result *r)
{
	size_t b = t->in->baseline;
	if (b == DECIDE_NONE)
		return false;
	bool any = false;
	for (size_t l = 0; l < t->in->nlevels; l++) {
		size_t c = decide_table_config(t, b, l);
		if (c == DECIDE_NONE)
			continue;
		if (r->configs[c].n_ok < 2)
			return false;
		any = true;
	}
	return any;
}

static bool is_candidate(const struct decide_input *in, size_t d)
{
	return d != in->baseline && !in->decisions[d].host_reference;
}

static void against_baseline(const struct decide_table *t, const struct decide_settings *s,
			     struct decide_result *r)
{
	const struct decide_input *in = t->in;
	size_t b = in->baseline, nl = in->nlevels;
	/* The family first: which decisions can be tested at all. */
	size_t m = 0;
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		if (d == b)
			continue;
		objective_cmp(t, s, d, b, DECIDE_ALPHA, &o->objective);
		o->testable = o->objective.ok;
		m += o->testable && !in->decisions[d].host_reference;
	}
	r->m = m ? m : 1;
	r->objective_alpha = DECIDE_ALPHA / (double)r->m;
	r->level_alpha = DECIDE_ALPHA / (double)(r->m * nl);
	more_failures(t, s, r);
	for (size_t c = 0; c < in->nconfigs; c++) {
		struct decide_config_out *co = &r->configs[c];
		size_t bc = decide_table_config(t, b, in->configs[c].level);
		if (in->configs[c].decision == b || bc == DECIDE_NONE) {
			co->verdict = DECIDE_NOT_COMPARED;
			continue;
		}
		decide_paired(t, &c, &bc, 1, &co->vs_baseline);
		decide_cmp_at(&co->vs_baseline, r->level_alpha);
		co->vs_baseline.needed = needed_of(s, &co->vs_baseline);
		co->verdict = verdict_with_failures(&co->vs_baseline, s->equivalence, co->failing,
						    co->more_failures);
	}
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		if (d == b) {
			o->verdict = DECIDE_NOT_COMPARED;
			o->score = 0;
			continue;
		}
		objective_cmp(t, s, d, b, r->objective_alpha, &o->objective);
		o->p_adj = isnan(o->objective.p) ? NAN : fmin(1, o->objective.p * (double)r->m);
		o->verdict = verdict_with_failures(&o->objective, s->equivalence, o->failing,
						   o->more_failures);
		o->score = o->testable ? o->objective.est : NAN;
	}
}

/* The sum of configuration c's finite log values (successful runs); k counts them. */
static double lv_sum(const struct decide_table *t, size_t c, size_t *k)
{
	double sum = 0;
	for (size_t b = 0; b < t->nblocks; b++)
		if (isfinite(t->lv[c * t->nblocks + b])) {
			sum += t->lv[c * t->nblocks + b];
			(*k)++;
		}
	return sum;
}

/*
 * Without a testable baseline the decisions are still ordered: by their
 * objective against a reference, the decision with the best mean log value
 * among those with 2 successful runs at each level they ran.
 */
static void against_reference(const struct decide_table *t, const struct decide_settings *s,
			      struct decide_result *r)
{
	const struct decide_input *in = t->in;
	size_t ref = DECIDE_NONE;
	double best = -INFINITY;
	for (size_t d = 0; d < in->ndecisions; d++) {
		if (in->decisions[d].host_reference)
			continue;
		double sum = 0;
		size_t k = 0;
		bool enough = true;
		for (size_t l = 0; l < in->nlevels; l++) {
			size_t c = decide_table_config(t, d, l);
			if (c == DECIDE_NONE)
				continue;
			enough &= r->configs[c].n_ok >= 2;
			sum += lv_sum(t, c, &k);
		}
		if (enough && k && sum / (double)k > best) {
			best = sum / (double)k;
			ref = d;
		}
	}
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		o->verdict = in->baseline == DECIDE_NONE ? DECIDE_NOT_COMPARED : DECIDE_INSUFFICIENT;
		if (in->baseline == d)
			o->verdict = DECIDE_NOT_COMPARED;
		if (o->failing && !in->decisions[d].host_reference)
			o->verdict = DECIDE_FAILING;
		if (ref == DECIDE_NONE)
			continue;
		if (d == ref) {
			o->score = 0;
			o->testable = true;
			continue;
		}
		struct decide_cmp c;
		objective_cmp(t, s, d, ref, DECIDE_ALPHA, &c);
		o->testable = c.ok;
		o->score = c.ok ? c.est : NAN;
	}
	for (size_t c = 0; c < in->nconfigs; c++)
		r->configs[c].verdict = r->configs[c].failing && in->baseline == DECIDE_NONE
					? DECIDE_FAILING : in->baseline == DECIDE_NONE
					? DECIDE_NOT_COMPARED : DECIDE_INSUFFICIENT;
	r->m = 1;
	r->objective_alpha = DECIDE_ALPHA;
	r->level_alpha = DECIDE_ALPHA / (double)in->nlevels;
}

/* ---- the best and ties ------------------------------------------------------ */

/* May d lead or be recommended: a VM shape, not failing, not eliminated, with a score. */
static bool is_contender(const struct decide_input *in, const struct decide_result *r, size_t d)
{
	return !in->decisions[d].host_reference && !r->decisions[d].failing &&
	       in->decisions[d].elim.block == 0 && !isnan(r->decisions[d].score);
}

/* Testable decisions other than ref (host references left out): a Bonferroni family. */
static size_t family_size(const struct decide_input *in, const struct decide_result *r,
			  size_t ref)
{
	size_t m = 0;
	for (size_t d = 0; d < in->ndecisions; d++)
		m += d != ref && !in->decisions[d].host_reference && r->decisions[d].testable;
	return m ? m : 1;
}

static void against_best(const struct decide_table *t, const struct decide_settings *s,
			 struct decide_result *r)
{
	const struct decide_input *in = t->in;
	size_t best = DECIDE_NONE;
	for (size_t d = 0; d < in->ndecisions; d++)
		if (is_contender(in, r, d) &&
		    (best == DECIDE_NONE || r->decisions[d].score > r->decisions[best].score))
			best = d;
	r->best = best;
	if (best == DECIDE_NONE)
		return;
	r->decisions[best].is_best = true;
	size_t m = family_size(in, r, best);
	double alpha = DECIDE_ALPHA / (double)m;
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		if (d == best || in->decisions[d].host_reference)
			continue;
		difference_cmp(t, s, d, best, alpha, o->score, r->decisions[best].score, &o->vs_best);
		if (!o->vs_best.ok)
			continue;
		o->equivalent_to_best = decide_verdict_of(&o->vs_best, s->equivalence) ==
					DECIDE_EQUIVALENT;
		o->worse_than_best = o->vs_best.hi < 0;
		/*
		 * The baseline against the best says what the best's own verdict
		 * says (one comparison, one answer): not "worse than the best"
		 * where the best is undecided against it.
		 */
		if (d == in->baseline && r->baseline_testable) {
			enum decide_verdict bv = r->decisions[best].verdict;
			o->worse_than_best = bv == DECIDE_BETTER;
			o->equivalent_to_best = bv == DECIDE_EQUIVALENT;
		}
	}
	for (size_t c = 0; c < in->nconfigs; c++) {
		struct decide_config_out *co = &r->configs[c];
		size_t bc = decide_table_config(t, best, in->configs[c].level);
		co->p_best = co->p_best_adj = NAN;
		if (in->configs[c].decision == best || bc == DECIDE_NONE ||
		    in->decisions[in->configs[c].decision].host_reference)
			continue;
		struct decide_cmp cc;
		decide_paired(t, &c, &bc, 1, &cc);
		decide_cmp_at(&cc, alpha / (double)in->nlevels);
		co->p_best = cc.p;
		co->p_best_adj = isnan(cc.p) ? NAN : fmin(1, cc.p * (double)(m * in->nlevels));
	}
}

/* ---- the recommendation ------------------------------------------------------ */

/* Ganged exits per second (or per run) of d's successful runs. */
static double *decision_gang(const struct decide_table *t, size_t d, int blocks, size_t *n)
{
	const struct decide_input *in = t->in;
	double *g = xmalloc(in->nruns * sizeof(*g));
	*n = 0;
	for (size_t i = 0; i < in->nruns; i++) {
		const struct decide_run *run = &in->runs[i];
		if (in->configs[run->config].decision == d && run->status == DECIDE_RUN_OK &&
		    isfinite(run->gang) && in_look(run, blocks))
			g[(*n)++] = run->gang;
	}
	return g;
}

/*
 * Cost order among decisions shown equivalent: fewer host CPUs, fewer
 * non-default host settings, significantly fewer ganged exits (Welch p <
 * alpha over their runs), then the better objective.
 */
static bool preferred(const struct decide_table *t, const struct decide_result *r, int blocks,
		      size_t a, size_t b)
{
	const struct decide_option *x = &t->in->decisions[a], *y = &t->in->decisions[b];
	if (x->host_cpus != y->host_cpus)
		return x->host_cpus < y->host_cpus;
	if (x->nondefault_knobs != y->nondefault_knobs)
		return x->nondefault_knobs < y->nondefault_knobs;
	size_t na, nb;
	double *ga = decision_gang(t, a, blocks, &na), *gb = decision_gang(t, b, blocks, &nb);
	struct stats_test w;
	stats_welch(ga, na, gb, nb, &w);
	bool decided = !isnan(w.p) && w.p < DECIDE_ALPHA;
	bool fewer = decided && stats_mean(ga, na) < stats_mean(gb, nb);
	free(ga);
	free(gb);
	if (decided)
		return fewer;
	return r->decisions[a].score > r->decisions[b].score;
}

static void list_add(size_t **v, size_t *n, size_t d)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = d;
}

/* The contender with the best score in v (insufficient ones, without a score, last). */
static size_t leading(const struct decide_result *r, const size_t *v, size_t n)
{
	size_t lead = DECIDE_NONE;
	for (size_t i = 0; i < n; i++) {
		double sc = r->decisions[v[i]].score;
		if (lead == DECIDE_NONE || (!isnan(sc) && !(r->decisions[lead].score >= sc)))
			lead = v[i];
	}
	return lead;
}

static void recommend_better(const struct decide_table *t, const struct decide_settings *s,
			     struct decide_result *r, size_t top)
{
	const struct decide_input *in = t->in;
	r->verdict = DECIDE_BETTER;
	r->top = top;
	size_t m = family_size(in, r, top);
	size_t pick = top;
	r->ncandidates = 1;
	for (size_t d = 0; d < in->ndecisions; d++) {
		if (d == top || !is_contender(in, r, d) || r->decisions[d].verdict != DECIDE_BETTER)
			continue;
		struct decide_cmp c;
		difference_cmp(t, s, d, top, DECIDE_ALPHA / (double)m, r->decisions[d].score,
			       r->decisions[top].score, &c);
		if (!c.ok || decide_verdict_of(&c, s->equivalence) != DECIDE_EQUIVALENT)
			continue;
		r->ncandidates++;
		if (preferred(t, r, s->blocks, d, pick))
			pick = d;
	}
	r->pick = r->leader = pick;
	r->needed = 0;
	r->mde = NAN;
	size_t mp = family_size(in, r, pick);
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		if (d == pick || d == top || !is_candidate(in, d) || o->failing ||
		    o->more_failures || in->decisions[d].elim.block || o->worse_than_best ||
		    o->equivalent_to_best || o->verdict == DECIDE_WORSE ||
		    o->verdict == DECIDE_EQUIVALENT)
			continue;
		o->in_contention = true;
		list_add(&r->contention, &r->ncontention, d);
		struct decide_cmp c;
		difference_cmp(t, s, d, pick, DECIDE_ALPHA / (double)mp, o->score,
			       r->decisions[pick].score, &c);
		o->needed_vs_pick = c.needed;
	}
	/*
	 * A contender with a higher objective than the top, not yet shown better
	 * than the baseline nor separated from the top, may be the real winner:
	 * no decision yet, it leads, and settling it is what is needed.
	 */
	size_t over = DECIDE_NONE;
	for (size_t i = 0; i < r->ncontention; i++) {
		size_t d = r->contention[i];
		if (r->decisions[d].score > r->decisions[top].score &&
		    (over == DECIDE_NONE || r->decisions[d].score > r->decisions[over].score))
			over = d;
	}
	if (over != DECIDE_NONE) {
		r->verdict = DECIDE_UNDECIDED;
		r->leader = over;
		r->needed = r->decisions[over].objective.needed;
		r->mde = decide_gain(r->decisions[over].objective.mde);
	}
}

static void recommend_with_baseline(const struct decide_table *t, const struct decide_settings *s,
				    struct decide_result *r)
{
	const struct decide_input *in = t->in;
	size_t top = DECIDE_NONE;
	for (size_t d = 0; d < in->ndecisions; d++)
		if (is_candidate(in, d) && is_contender(in, r, d) &&
		    r->decisions[d].verdict == DECIDE_BETTER &&
		    (top == DECIDE_NONE || r->decisions[d].score > r->decisions[top].score))
			top = d;
	if (top != DECIDE_NONE) {
		recommend_better(t, s, r, top);
		return;
	}
	r->pick = in->baseline;
	bool others = false;
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		if (!is_candidate(in, d))
			continue;
		others = true;
		/* Shown to fail more often: never better, and more runs only confirm it. */
		if (o->verdict == DECIDE_EQUIVALENT || o->verdict == DECIDE_WORSE ||
		    o->verdict == DECIDE_FAILING || o->more_failures)
			continue;
		if (in->decisions[d].elim.block) {
			list_add(&r->unsettled, &r->nunsettled, d);
		} else {
			o->in_contention = true;
			list_add(&r->contention, &r->ncontention, d);
		}
	}
	if (!others) {
		r->verdict = DECIDE_INSUFFICIENT;
		return;
	}
	if (!r->ncontention && !r->nunsettled) {
		r->verdict = DECIDE_EQUIVALENT;
		r->nothing_beats_baseline = true;
		r->needed = 0;
		return;
	}
	r->verdict = DECIDE_UNDECIDED;
	r->leader = leading(r, r->contention, r->ncontention);
	if (r->leader != DECIDE_NONE) {
		r->needed = r->decisions[r->leader].objective.needed;
		r->mde = decide_gain(r->decisions[r->leader].objective.mde);
	}
}

/*
 * Is a cheaper than b by the cost rules alone (fewer host CPUs, fewer
 * non-default host settings, significantly fewer ganged exits)?  Not by
 * the objective: among equals that is noise.
 */
static bool cheaper(const struct decide_table *t, int blocks, size_t a, size_t b)
{
	const struct decide_option *x = &t->in->decisions[a], *y = &t->in->decisions[b];
	if (x->host_cpus != y->host_cpus)
		return x->host_cpus < y->host_cpus;
	if (x->nondefault_knobs != y->nondefault_knobs)
		return x->nondefault_knobs < y->nondefault_knobs;
	size_t na, nb;
	double *ga = decision_gang(t, a, blocks, &na), *gb = decision_gang(t, b, blocks, &nb);
	struct stats_test w;
	stats_welch(ga, na, gb, nb, &w);
	bool fewer = !isnan(w.p) && w.p < DECIDE_ALPHA && stats_mean(ga, na) < stats_mean(gb, nb);
	free(ga);
	free(gb);
	return fewer;
}

/*
 * Without a baseline: the best, or the cheapest of those tied with it.
 * `better` only when something was shown worse than it (better than
 * something); tied with others it is `equivalent` among them, and
 * recommended over them only when it is cheaper than each (else `tied`:
 * any of them will do, none is a change worth making).
 */
static void recommend_without_baseline(const struct decide_table *t,
				       const struct decide_settings *s, struct decide_result *r)
{
	const struct decide_input *in = t->in;
	size_t best = r->best, pick = best;
	size_t *tied = xmalloc((in->ndecisions + 1) * sizeof(*tied)), ntied = 0;
	tied[ntied++] = best;
	for (size_t d = 0; d < in->ndecisions; d++)
		if (d != best && is_contender(in, r, d) && r->decisions[d].equivalent_to_best) {
			tied[ntied++] = d;
			if (preferred(t, r, s->blocks, d, pick))
				pick = d;
		}
	r->ncandidates = ntied;
	bool cheapest = true, shown_over = false;
	for (size_t i = 0; i < ntied; i++)
		cheapest &= tied[i] == pick || cheaper(t, s->blocks, pick, tied[i]);
	free(tied);
	r->pick = r->top = pick;
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &r->decisions[d];
		if (d == best || in->decisions[d].host_reference)
			continue;
		shown_over |= o->worse_than_best || o->failing;
		if (o->failing || in->decisions[d].elim.block || o->equivalent_to_best ||
		    o->worse_than_best)
			continue;
		o->in_contention = true;
		o->needed_vs_pick = o->vs_best.needed;
		list_add(&r->contention, &r->ncontention, d);
	}
	r->tied = ntied > 1 && !cheapest;
	if (r->ncontention)
		r->verdict = DECIDE_UNDECIDED;
	else if (ntied > 1)
		r->verdict = DECIDE_EQUIVALENT;
	else if (!shown_over)
		r->verdict = DECIDE_INSUFFICIENT;	/* nothing else measured: better than nothing */
	else
		r->verdict = DECIDE_BETTER;
	r->leader = leading(r, r->contention, r->ncontention);
	r->needed = r->leader == DECIDE_NONE ? 0 : r->decisions[r->leader].needed_vs_pick;
}

static void recommend(const struct decide_table *t, const struct decide_settings *s,
		      struct decide_result *r)
{
	const struct decide_input *in = t->in;
	r->verdict = DECIDE_INSUFFICIENT;
	r->pick = r->leader = r->top = DECIDE_NONE;
	r->mde = NAN;
	r->needed = 0;
	bool any = false;
	for (size_t c = 0; c < in->nconfigs; c++)
		any |= r->configs[c].n_ok > 0 && !in->decisions[in->configs[c].decision].host_reference;
	if (!any)
		return;
	if (in->baseline != DECIDE_NONE && !r->baseline_testable) {
		r->pick = r->best != DECIDE_NONE ? r->best : in->baseline;
		for (size_t l = 0; l < in->nlevels; l++) {
			size_t c = decide_table_config(t, in->baseline, l);
			if (c == DECIDE_NONE)
				continue;
			int short_of = 2 - (int)r->configs[c].n_ok;
			if (short_of > r->needed)
				r->needed = short_of;
		}
	} else if (in->baseline != DECIDE_NONE) {
		recommend_with_baseline(t, s, r);
	} else if (r->best != DECIDE_NONE) {
		recommend_without_baseline(t, s, r);
	} else {
		/* Data, but nothing testable: the best mean log value, tentatively. */
		double top = -INFINITY;
		for (size_t c = 0; c < in->nconfigs; c++) {
			if (in->decisions[in->configs[c].decision].host_reference)
				continue;
			size_t k = 0;
			double sum = lv_sum(t, c, &k);
			if (k && sum / (double)k > top) {
				top = sum / (double)k;
				r->pick = in->configs[c].decision;
			}
		}
		r->needed = 1;
	}
}

int decide_compute(const struct decide_input *in, const struct decide_settings *s,
		   struct decide_result *out)
{
	memset(out, 0, sizeof(*out));
	/* Empty, never a zeroed pick: decision 0 is a real decision. */
	out->best = out->pick = out->leader = out->top = DECIDE_NONE;
	out->verdict = DECIDE_INSUFFICIENT;
	struct decide_table t;
	if (!decide_table_build(in, s->blocks, &t)) {
		decide_table_release(&t);
		return -1;
	}
	out->nconfigs = in->nconfigs;
	out->ndecisions = in->ndecisions;
	out->nruns = in->nruns;
	out->nlevels = in->nlevels;
	out->configs = xcalloc(in->nconfigs, sizeof(*out->configs));
	out->decisions = xcalloc(in->ndecisions, sizeof(*out->decisions));
	out->runs = xcalloc(in->nruns, sizeof(*out->runs));
	out->best = out->pick = out->leader = out->top = DECIDE_NONE;
	for (size_t c = 0; c < in->nconfigs; c++) {
		cmp_empty(&out->configs[c].vs_baseline);
		out->configs[c].p_best = out->configs[c].p_best_adj = NAN;
		out->configs[c].failures_p = NAN;
		out->configs[c].outlier_scale = NAN;
	}
	for (size_t d = 0; d < in->ndecisions; d++) {
		struct decide_decision_out *o = &out->decisions[d];
		cmp_empty(&o->objective);
		cmp_empty(&o->vs_best);
		o->p_adj = o->score = o->failures_p = NAN;
		o->failing_level = DECIDE_NONE;
		o->needed_vs_pick = -1;
		o->elim = in->decisions[d].elim;
		o->verdict = DECIDE_INSUFFICIENT;
	}
	counts(&t, s->blocks, out);
	failures(in, s, &t, out);
	out->baseline_testable = baseline_testable(&t, out);
	if (out->baseline_testable)
		against_baseline(&t, s, out);
	else
		against_reference(&t, s, out);
	against_best(&t, s, out);
	recommend(&t, s, out);
	if (!s->verdicts_only)
		decide_spread(&t, out);
	decide_table_release(&t);
	return 0;
}

void decide_result_release(struct decide_result *r)
{
	free(r->configs);
	free(r->decisions);
	free(r->runs);
	free(r->contention);
	free(r->unsettled);
	memset(r, 0, sizeof(*r));
}
