/*
 * rank: the engine's decision laid out per configuration and per decision,
 * with the figures shown beside it; see rank.h.
 */
#include "rank.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rank_decisive(const struct rank_result *r)
{
	return r->verdict == DECIDE_BETTER || r->verdict == DECIDE_EQUIVALENT;
}

const struct rank_decision *rank_leading(const struct rank_result *r)
{
	if (r->best_decision)
		return r->best_decision;
	return r->baseline_decision ? NULL : r->recommended_decision;
}

void rank_options_init(struct rank_options *o)
{
	memset(o, 0, sizeof(*o));
	o->equivalence = DECIDE_DEFAULT_EQUIVALENCE;
	o->max_failure_rate = DECIDE_DEFAULT_MAX_FAILURE_RATE;
	o->objective = DECIDE_OBJECTIVE_WORST;
}

const struct rank_decision *rank_decision_at(const struct rank_result *r, size_t index)
{
	for (size_t d = 0; index != DECIDE_NONE && d < r->ndecisions; d++)
		if (r->decisions[d].index == index)
			return &r->decisions[d];
	return NULL;
}

static bool run_ok(const struct db_results_run *run)
{
	return !strcmp(run->status, "ok");
}

bool rank_run_busy(const struct db_results_run *run)
{
	return run->host_cpus > 0 && run->loadavg > run->host_cpus;
}

static void warn(struct rank_result *r, const char *kind, const char *config,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void warn(struct rank_result *r, const char *kind, const char *config,
		 const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	r->warnings = xrealloc(r->warnings, (r->nwarnings + 1) * sizeof(*r->warnings));
	r->warnings[r->nwarnings++] = (struct rank_warning){ kind, config, strbuf_detach(&sb) };
}

/* ---- the metric ------------------------------------------------------------- */

/*
 * The direction a stored metric row declares: 1 higher is better, 0 lower,
 * -1 none (not a figure of merit) or unknown (rows from before directions
 * were stored fall back on their higher_is_better column).
 */
static int metric_row_direction(const struct db_results_metric *m)
{
	if (m->dir == METRIC_DIR_HIGHER)
		return 1;
	if (m->dir == METRIC_DIR_LOWER)
		return 0;
	return m->dir == METRIC_DIR_UNKNOWN ? m->higher_is_better : -1;
}

/* Direction and unit of the metric from its stored rows (first one wins). */
static void metric_meta(const struct db_results *res, const char *metric, bool *found,
			int *hib, const char **unit)
{
	*found = false;
	*hib = -1;
	*unit = NULL;
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_metric *m = db_results_run_metric(&res->configs[i].runs[j], metric);
			if (!m)
				continue;
			*found = true;
			if (*hib < 0)
				*hib = metric_row_direction(m);
			if (!*unit)
				*unit = m->unit;
		}
}

/* Lists the metric names of the runs into sb (for "did you mean"). */
static void metric_names(const struct db_results *res, struct strbuf *sb)
{
	const char **seen = NULL;
	size_t n = 0;
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_run *run = &res->configs[i].runs[j];
			for (size_t k = 0; k < run->nmetrics; k++) {
				size_t s = 0;
				while (s < n && strcmp(seen[s], run->metrics[k].name))
					s++;
				if (s < n)
					continue;
				seen = xrealloc(seen, (n + 1) * sizeof(*seen));
				seen[n++] = run->metrics[k].name;
				strbuf_addf(sb, "%s%s", n > 1 ? ", " : "", run->metrics[k].name);
			}
		}
	free(seen);
}

/* decide_value_fn: the run's value of the metric named by ctx. */
static double metric_value(const struct db_results_run *run, void *ctx)
{
	const struct db_results_metric *m = db_results_run_metric(run, ctx);
	return m ? m->value : NAN;
}

/* ---- entries ------------------------------------------------------------------ */

/* Mean ganged exits (and per second) over successful runs; NAN without data. */
static void entry_gang(struct rank_entry *e)
{
	double sum = 0, sum_s = 0;
	size_t n = 0, n_s = 0;
	for (size_t i = 0; i < e->config->nruns; i++) {
		const struct db_results_run *run = &e->config->runs[i];
		if (!run_ok(run))
			continue;
		const struct db_results_metric *g = db_results_run_metric(run, "gang_exits");
		const struct db_results_metric *gs = db_results_run_metric(run, "gang_exits_per_s");
		if (g) {
			sum += g->value;
			n++;
		}
		if (gs) {
			sum_s += gs->value;
			n_s++;
		}
	}
	e->gang_exits = n ? sum / (double)n : NAN;
	e->gang_exits_per_s = n_s ? sum_s / (double)n_s : NAN;
}

/* The most frequent exit reasons, as mean count per successful run. */
static void entry_exits(struct rank_entry *e)
{
	struct rank_exit_reason *acc = NULL;
	size_t n = 0, nok = 0;
	/* Per reason (acc's order): runs that timed it and their summed ns. */
	size_t *timed_runs = NULL;
	double *time_ns = NULL;
	for (size_t i = 0; i < e->config->nruns; i++) {
		const struct db_results_run *run = &e->config->runs[i];
		if (!run_ok(run))
			continue;
		nok++;
		for (size_t j = 0; j < run->nexits; j++) {
			size_t k = 0;
			while (k < n && (strcmp(acc[k].source, run->exits[j].source) ||
					 strcmp(acc[k].reason, run->exits[j].reason)))
				k++;
			if (k == n) {
				acc = xrealloc(acc, (n + 1) * sizeof(*acc));
				timed_runs = xrealloc(timed_runs, (n + 1) * sizeof(*timed_runs));
				time_ns = xrealloc(time_ns, (n + 1) * sizeof(*time_ns));
				timed_runs[n] = 0;
				time_ns[n] = 0;
				acc[n++] = (struct rank_exit_reason){ run->exits[j].source,
								      run->exits[j].reason, 0, NAN };
			}
			acc[k].mean_per_run += (double)run->exits[j].count;
			if (run->exits[j].time_pairs > 0) {
				timed_runs[k]++;
				time_ns[k] += (double)run->exits[j].time_ns;
			}
		}
	}
	for (size_t t = 0; t < RANK_TOP_EXITS && t < n; t++) {
		size_t best = t;
		for (size_t k = t + 1; k < n; k++)
			if (acc[k].mean_per_run > acc[best].mean_per_run)
				best = k;
		struct rank_exit_reason tmp = acc[t];
		acc[t] = acc[best];
		acc[best] = tmp;
		size_t tr = timed_runs[t];
		double tn = time_ns[t];
		timed_runs[t] = timed_runs[best];
		time_ns[t] = time_ns[best];
		timed_runs[best] = tr;
		time_ns[best] = tn;
		acc[t].mean_per_run /= (double)(nok ? nok : 1);
		acc[t].mean_time_s = timed_runs[t] ? time_ns[t] / 1e9 / (double)timed_runs[t] : NAN;
		e->top_exits[e->ntop_exits++] = acc[t];
	}
	free(acc);
	free(timed_runs);
	free(time_ns);
}

/* An interval of a log gain as ratios and gains, in the metric's direction. */
static void set_gain(bool hib, const struct decide_cmp *c, double *ratio, double *rlo,
		     double *rhi, double *gain, double *glo, double *ghi)
{
	double sign = hib ? 1 : -1;
	*gain = decide_gain(c->est);
	*glo = decide_gain(c->lo);
	*ghi = decide_gain(c->hi);
	if (ratio) {
		*ratio = isnan(c->est) ? NAN : exp(sign * c->est);
		*rlo = isnan(c->lo) ? NAN : exp(hib ? c->lo : -c->hi);
		*rhi = isnan(c->hi) ? NAN : exp(hib ? c->hi : -c->lo);
	}
}

static void entry_fill(struct rank_result *r, struct rank_entry *e, size_t i)
{
	const struct db_results_config *c = &r->res->configs[i];
	const struct decide_config_out *co = &r->dr.configs[i];
	memset(e, 0, sizeof(*e));
	e->config = c;
	e->index = i;
	e->level = r->sweep.configs[i].level;
	e->values = xmalloc((c->nruns + 1) * sizeof(*e->values));
	e->value_runs = xmalloc((c->nruns + 1) * sizeof(*e->value_runs));
	e->dev = xmalloc((c->nruns + 1) * sizeof(*e->dev));
	e->outlier = xmalloc((c->nruns + 1) * sizeof(*e->outlier));
	size_t n = 0;
	for (size_t k = 0; k < r->sweep.in.nruns; k++) {
		const struct decide_run *run = &r->sweep.runs[k];
		if (run->config != i)
			continue;
		if (run->status == DECIDE_RUN_OK) {
			e->value_runs[n] = r->sweep.run_of[k];
			e->dev[n] = r->dr.runs[k].dev;
			e->outlier[n] = r->dr.runs[k].outlier;
			e->values[n++] = run->value;
		} else if (!strcmp(r->sweep.run_of[k]->status, "interrupted")) {
			e->ninterrupted++;
		}
	}
	stats_summarize(e->values, n, &e->s);
	e->noutliers = co->noutliers;
	e->nfailed = co->n_failed;
	e->nboots = co->nboots;
	e->failure_rate = co->failure_rate;
	e->failing = co->failing;
	e->more_failures = co->more_failures;
	set_gain(r->higher_is_better, &co->vs_baseline, &e->ratio, &e->ratio_lo, &e->ratio_hi,
		 &e->gain, &e->gain_lo, &e->gain_hi);
	e->p_baseline = co->vs_baseline.p;
	e->p_baseline_adj = isnan(co->vs_baseline.p) ? NAN
			    : fmin(1, co->vs_baseline.p * (double)r->ncomparisons);
	e->pairs = co->vs_baseline.pairs;
	e->units = co->vs_baseline.units;
	e->set_aside = co->vs_baseline.set_aside;
	e->verdict = co->verdict;
	e->beats_baseline = co->verdict == DECIDE_BETTER;
	e->min_detectable_effect = decide_gain(co->vs_baseline.mde);
	e->needed_repetitions = co->vs_baseline.needed;
	e->composite = e->composite_lo = e->composite_hi = NAN;
	e->p_best = co->p_best;
	e->p_best_adj = co->p_best_adj;
	entry_gang(e);
	entry_exits(e);
}

/*
 * Where a status puts a row, before its mean: the contenders (best, tied,
 * not separated from the best), then those shown worse than the best, then
 * those a race eliminated, then failing ones, so that no row ranks above
 * one its status says is at least as good.
 */
static int status_tier(bool failing, bool eliminated, bool worse)
{
	return failing ? 3 : eliminated ? 2 : worse ? 1 : 0;
}

static int entry_tier(const struct rank_result *r, const struct rank_entry *e)
{
	const struct decide_decision_out *x = &r->dr.decisions[r->sweep.configs[e->index].decision];
	return status_tier(e->failing || x->failing, x->elim.block > 0, x->worse_than_best);
}

static int cmp_entry(const void *pa, const void *pb, void *rp)
{
	const struct rank_entry *a = pa, *b = pb;
	const struct rank_result *r = rp;
	bool hib = r->higher_is_better;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if ((a->s.n > 0) != (b->s.n > 0))
		return a->s.n > 0 ? -1 : 1;
	int ta = entry_tier(r, a), tb = entry_tier(r, b);
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (a->s.n > 0 && a->s.mean != b->s.mean)
		return (hib ? a->s.mean > b->s.mean : a->s.mean < b->s.mean) ? -1 : 1;
	return (int)a->config->rec.index - (int)b->config->rec.index;
}

/* ---- decisions ---------------------------------------------------------------- */

static void decision_fill(struct rank_result *r, struct rank_decision *dec, size_t d)
{
	const struct decide_option *o = &r->sweep.decisions[d];
	const struct decide_decision_out *x = &r->dr.decisions[d];
	dec->key = o->key;
	dec->index = d;
	dec->levels = xcalloc(r->nlevels + 1, sizeof(*dec->levels));
	dec->host_reference = o->host_reference;
	set_gain(r->higher_is_better, &x->objective, NULL, NULL, NULL, &dec->gain, &dec->gain_lo,
		 &dec->gain_hi);
	if (d == r->sweep.in.baseline)
		dec->gain = 0;	/* against itself: exactly, no interval */
	/* gain = expm1(est): its bias from the log estimate's, to first order. */
	dec->gain_bias = d == r->sweep.in.baseline ? 0
			 : isnan(x->objective.bias) ? NAN
			 : expm1(x->objective.est) - expm1(x->objective.est - x->objective.bias);
	dec->p_adj = x->p_adj;
	dec->verdict = x->verdict;
	dec->min_detectable_effect = decide_gain(x->objective.mde);
	dec->needed_repetitions = x->objective.needed;
	set_gain(r->higher_is_better, &x->vs_best, NULL, NULL, NULL, &dec->best_gain,
		 &dec->best_gain_lo, &dec->best_gain_hi);
	dec->is_best = x->is_best;
	dec->equivalent_to_best = x->equivalent_to_best;
	dec->worse_than_best = x->worse_than_best;
	dec->score = x->score;
	dec->host_cpus = o->host_cpus;
	dec->nondefault_knobs = o->nondefault_knobs;
	dec->runs_ok = x->n_ok;
	dec->runs_failed = x->n_failed;
	dec->failure_rate = x->failure_rate;
	dec->failing = x->failing;
	dec->more_failures = x->more_failures;
	dec->failing_level = x->failing_level;
	dec->failures_p = x->failures_p;
	dec->in_contention = x->in_contention;
	dec->needed_vs_pick = x->needed_vs_pick;
	dec->eliminated_block = x->elim.block;
	dec->eliminated_against = x->elim.block && x->elim.against != DECIDE_NONE
				  ? r->sweep.decisions[x->elim.against].key : NULL;
	dec->eliminated_p = x->elim.block ? x->elim.p : NAN;
}

static int cmp_decision(const void *pa, const void *pb)
{
	const struct rank_decision *a = pa, *b = pb;
	if (a->host_reference != b->host_reference)
		return a->host_reference ? 1 : -1;
	int ta = status_tier(a->failing, a->eliminated_block > 0, a->worse_than_best);
	int tb = status_tier(b->failing, b->eliminated_block > 0, b->worse_than_best);
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (isnan(a->score) != isnan(b->score))
		return isnan(a->score) ? 1 : -1;
	if (!isnan(a->score) && a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The decisions in objective order, each pointing at its entries and back. */
static void decisions_build(struct rank_result *r)
{
	r->ndecisions = r->sweep.in.ndecisions;
	r->decisions = xcalloc(r->ndecisions + 1, sizeof(*r->decisions));
	for (size_t d = 0; d < r->ndecisions; d++)
		decision_fill(r, &r->decisions[d], d);
	qsort(r->decisions, r->ndecisions, sizeof(*r->decisions), cmp_decision);
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		struct rank_decision *dec = (struct rank_decision *)rank_decision_at(
			r, r->sweep.configs[e->index].decision);
		e->decision = dec;
		if (!dec->levels[e->level])
			dec->levels[e->level] = e;
	}
	for (size_t d = 0; d < r->ndecisions; d++) {
		struct rank_decision *dec = &r->decisions[d];
		for (size_t l = 0; l < r->nlevels && !dec->entry; l++)
			dec->entry = dec->levels[l];
		for (size_t l = 0; l < r->nlevels; l++) {
			struct rank_entry *e = dec->levels[l];
			if (!e)
				continue;
			e->host_reference = dec->host_reference;
			e->is_best = dec->is_best;
			e->tied_with_best = dec->equivalent_to_best;
			e->host_cpus = dec->host_cpus;
			e->nondefault_knobs = dec->nondefault_knobs;
			e->eliminated_block = dec->eliminated_block;
		}
	}
}

/* ---- composite of multi-metric benchmarks --------------------------------- */

/* Names of the metric family "<prefix>.<test>" present in successful runs, with directions. */
static size_t family_tests(const struct db_results *res, const char *prefix,
			   const char ***out, bool **hib_out)
{
	const char **v = NULL;
	bool *hib = NULL;
	size_t n = 0, plen = strlen(prefix);
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_run *run = &res->configs[i].runs[j];
			if (!run_ok(run))
				continue;
			for (size_t k = 0; k < run->nmetrics; k++) {
				const char *name = run->metrics[k].name;
				if (strncmp(name, prefix, plen) || name[plen] != '.')
					continue;
				int dir = metric_row_direction(&run->metrics[k]);
				size_t s = 0;
				while (s < n && strcmp(v[s], name))
					s++;
				if (s == n && dir >= 0) {	/* figures of no merit stay out */
					v = xrealloc(v, (n + 1) * sizeof(*v));
					hib = xrealloc(hib, (n + 1) * sizeof(*hib));
					v[n] = name;
					hib[n++] = dir == 1;
				}
			}
		}
	*out = v;
	*hib_out = hib;
	return n;
}

struct composite_tests {
	const char **tests;
	const bool *hib;
	size_t n;
};

/* decide_value_fn: the geometric mean of a run's throughput tests (all of them present). */
static double composite_value(const struct db_results_run *run, void *ctx)
{
	const struct composite_tests *t = ctx;
	double logsum = 0;
	size_t used = 0;
	for (size_t j = 0; j < t->n; j++) {
		if (!t->hib[j])
			continue;
		const struct db_results_metric *m = db_results_run_metric(run, t->tests[j]);
		if (!m || !(m->value > 0))
			return NAN;
		logsum += log(m->value);
		used++;
	}
	return used ? exp(logsum / (double)used) : NAN;
}

/*
 * The engine on another value of the same runs: each configuration against
 * the baseline.  -1 when the engine refuses them (out empty, s released).
 */
static int engine_other(const struct rank_result *r, decide_value_fn fn, void *ctx, bool hib,
			struct decide_sweep *s, struct decide_result *out)
{
	struct decide_settings st;
	decide_settings_init(&st);
	st.objective = r->objective;
	st.equivalence = r->equivalence;
	st.max_failure_rate = r->max_failure_rate;
	decide_sweep_build(r->res, fn, ctx, hib, &r->roles, s);
	if (r->res->raced)	/* at the race's last look's level, as the primary metric */
		decide_race_settings(&s->in, r->res->race_first_test, r->res->race_max_blocks, &st);
	if (decide_compute(&s->in, &st, out) < 0) {
		decide_sweep_release(s);
		return -1;
	}
	return 0;
}

/*
 * Multi-metric benchmarks: per-test comparisons with the baseline (each in
 * its own direction) and the composite, the geometric mean of the
 * throughput tests only (latencies have the other direction and would
 * cancel gains), all by the engine's own paired comparison.  Only redis
 * stores one metric per test ("redis.SET", "redis.SET.p50_ms", ...).
 */
static void composite_compute(struct rank_result *r)
{
	struct composite_tests ct;
	bool *hib;
	ct.n = family_tests(r->res, "redis", &ct.tests, &hib);
	ct.hib = hib;
	size_t nthroughput = 0;
	for (size_t j = 0; j < ct.n; j++)
		nthroughput += hib[j];
	if (nthroughput < 2 || r->sweep.in.baseline == DECIDE_NONE || !r->dr.baseline_testable) {
		free(ct.tests);
		free(hib);
		return;
	}
	struct decide_sweep s;
	struct decide_result x;
	/* The same runs as the primary metric's: a refusal here is not expected,
	 * and shows as no composite rather than as zeroed ratios. */
	if (engine_other(r, composite_value, &ct, true, &s, &x) < 0) {
		free(ct.tests);
		free(hib);
		return;
	}
	r->composite_family = "redis";
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		const struct decide_cmp *c = &x.configs[e->index].vs_baseline;
		double g, glo, ghi;
		bool self = r->sweep.configs[e->index].decision == r->sweep.in.baseline;
		set_gain(true, c, &e->composite, &e->composite_lo, &e->composite_hi, &g, &glo, &ghi);
		if (self)
			e->composite = 1;
		e->tests = xcalloc(ct.n + 1, sizeof(*e->tests));
		e->ntests = ct.n;
	}
	decide_result_release(&x);
	decide_sweep_release(&s);
	for (size_t j = 0; j < ct.n; j++) {
		if (engine_other(r, metric_value, (void *)ct.tests[j], hib[j], &s, &x) < 0) {
			for (size_t i = 0; i < r->nentries; i++)
				r->entries[i].tests[j] = (struct rank_test_ratio){
					.name = ct.tests[j], .higher_is_better = hib[j], .mean = NAN,
					.ratio = NAN, .ratio_lo = NAN, .ratio_hi = NAN, .gain = NAN,
					.gain_lo = NAN, .gain_hi = NAN };
			continue;
		}
		for (size_t i = 0; i < r->nentries; i++) {
			struct rank_entry *e = &r->entries[i];
			struct rank_test_ratio *tr = &e->tests[j];
			tr->name = ct.tests[j];
			tr->higher_is_better = hib[j];
			double sum = 0;
			size_t n = 0;
			for (size_t k = 0; k < s.in.nruns; k++)
				if (s.runs[k].config == e->index && s.runs[k].status == DECIDE_RUN_OK) {
					sum += s.runs[k].value;
					n++;
				}
			tr->mean = n ? sum / (double)n : NAN;
			set_gain(hib[j], &x.configs[e->index].vs_baseline, &tr->ratio, &tr->ratio_lo,
				 &tr->ratio_hi, &tr->gain, &tr->gain_lo, &tr->gain_hi);
			if (r->sweep.configs[e->index].decision == r->sweep.in.baseline) {
				tr->ratio = 1;
				tr->gain = 0;
			}
		}
		decide_result_release(&x);
		decide_sweep_release(&s);
	}
	free(ct.tests);
	free(hib);
}

/* ---- evidence and warnings ------------------------------------------------ */

/* Spearman of ganged exits per second (or per run) with the metric, across runs. */
static void evidence(struct rank_result *r)
{
	const char *names[] = { "gang_exits_per_s", "gang_exits" };
	r->spearman = NAN;
	for (size_t t = 0; t < 2 && !r->correlation_x; t++) {
		double *x = NULL, *y = NULL;
		size_t n = 0;
		for (size_t i = 0; i < r->nentries; i++) {
			const struct rank_entry *e = &r->entries[i];
			for (size_t j = 0; j < e->s.n; j++) {
				const struct db_results_metric *g = db_results_run_metric(e->value_runs[j], names[t]);
				if (!g)
					continue;
				x = xrealloc(x, (n + 1) * sizeof(*x));
				y = xrealloc(y, (n + 1) * sizeof(*y));
				x[n] = g->value;
				y[n++] = e->values[j];
			}
		}
		if (n > 0) {
			r->correlation_x = names[t];
			r->spearman = stats_spearman(x, y, n);
			r->spearman_n = n;
		}
		free(x);
		free(y);
	}
}

static void warnings_runs(struct rank_result *r, const struct rank_entry *e)
{
	const char *key = e->config->rec.key;
	for (size_t j = 0; j < e->s.n; j++)
		if (e->outlier[j])
			warn(r, "outliers", key, "%s: repetition %d is an outlier: %.6g (%+.1f %% "
			     "from the median, %.1f robust standard deviations; flagged, kept "
			     "in its statistics; a comparison sets its block aside when it is far "
			     "from the others)", key,
			     e->value_runs[j]->repetition + 1, e->values[j],
			     100 * expm1(e->dev[j] * r->dr.configs[e->index].outlier_scale), e->dev[j]);
	for (size_t j = 0; j < e->config->nruns; j++) {
		const struct db_results_run *run = &e->config->runs[j];
		if (!strcmp(run->status, "failed") || !strcmp(run->status, "interrupted"))
			warn(r, "failed_run", key, "%s: repetition %d %s: %s", key,
			     run->repetition + 1, run->status,
			     run->error ? run->error : "no error recorded");
		if (!run_ok(run))
			continue;
		if (run->lost_events > 0)
			warn(r, "lost_events", key, "%s: repetition %d lost %lld trace events: "
			     "its exit counts are lower bounds", key, run->repetition + 1,
			     (long long)run->lost_events);
		if (run->topology_ok == 0)
			warn(r, "topology_mismatch", key, "%s: repetition %d: the guest saw a "
			     "different CPU topology than requested", key, run->repetition + 1);
	}
}

static void warnings_collect(struct rank_result *r)
{
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		const char *key = e->config->rec.key;
		if (e->s.n == 0)
			warn(r, "no_data", key, "%s: no successful run with %s", key, r->metric);
		else if (e->s.n < RANK_MIN_REPETITIONS)
			warn(r, "few_repetitions", key, "%s: only %zu successful repetition%s "
			     "(< %d): its interval and tests are weak", key, e->s.n,
			     e->s.n == 1 ? "" : "s", RANK_MIN_REPETITIONS);
		if (e->s.cv > RANK_MAX_CV)
			warn(r, "high_cv", key, "%s: CV %.1f %% > %.0f %%: the runs vary a lot "
			     "(noisy host or benchmark)", key, 100 * e->s.cv, 100 * RANK_MAX_CV);
		if (e->failing)
			warn(r, "failing", key, "%s: %zu of %zu runs failed (%.0f %% > %.0f %%, "
			     "advisor.max_failure_rate): failing, never recommended", key, e->nfailed,
			     e->nfailed + e->s.n, 100 * e->failure_rate, 100 * r->max_failure_rate);
		warnings_runs(r, e);
	}
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		if (dec->more_failures && !dec->failing)
			warn(r, "more_failures", dec->key, "%s is shown to fail more often than "
			     "the baseline (%zu of %zu runs against %zu of %zu, p = %.2g): it is "
			     "never called better", dec->key, dec->runs_failed,
			     dec->runs_ok + dec->runs_failed, r->baseline_decision->runs_failed,
			     r->baseline_decision->runs_ok + r->baseline_decision->runs_failed,
			     dec->failures_p);
		if (dec->failing && r->nlevels > 1 && dec->failing_level < r->nlevels &&
		    !dec->host_reference) {
			const struct rank_entry *at = dec->levels[dec->failing_level];
			if (at)
				warn(r, "failing_level", dec->key, "%s fails %zu of %zu runs at %s: "
				     "failing there (objective %s), never recommended", dec->key,
				     at->nfailed, at->nfailed + at->s.n, r->levels[dec->failing_level],
				     decide_objective_name(r->objective));
		}
	}
	if (!r->direction_known)
		warn(r, "direction_unknown", NULL, "no stored direction for %s: ranked as higher "
		     "is better; check that this is right", r->metric);
	if (r->settings_unknown)
		warn(r, "settings_unknown", NULL, "this experiment was stored before its advisor "
		     "settings were, by a sweep that names some: ranked with the defaults "
		     "(objective worst, equivalence %.0f %%, environment noise); 'topoadvisor "
		     "rerun' stores them", 100 * DECIDE_DEFAULT_EQUIVALENCE);
	if (!r->gang_data)
		warn(r, "no_gang_data", NULL, "no ganged-exit data on this host: ganged exits "
		     "are not applicable (not POWER8/9 KVM HV, or not collected)");
	const struct rank_decision *b = r->baseline_decision;
	if (!b)
		warn(r, "no_baseline", NULL, "no baseline: no configuration is marked baseline "
		     "and none is the host's default shape (sockets = vCPUs, no pinning or "
		     "host settings); ranking without ratios");
	else if (!r->dr.baseline_testable)
		warn(r, "baseline_untestable", b->key, "baseline %s has fewer than 2 successful "
		     "runs: nothing can be tested against it", b->key);
	for (size_t l = 0; b && l < r->nlevels; l++)
		if (!b->levels[l])
			warn(r, "baseline_missing_level", b->key, "baseline %s was not measured at "
			     "%s: nothing is compared there", b->key, r->levels[l]);
	const struct decide_drift *dr = &r->dr.drift;
	if (dr->tested && dr->p < DECIDE_ALPHA)
		warn(r, "drift", NULL, "the runs drift over the blocks: %+.2f %% per block "
		     "[%+.2f %%, %+.2f %%] (p = %.2g); every comparison is within blocks, so the "
		     "drift cancels, but check the host", 100 * expm1(dr->slope),
		     100 * expm1(dr->lo), 100 * expm1(dr->hi), dr->p);
	size_t busy = 0, loaded = 0;
	double peak = 0;
	int cpus = 0;
	for (size_t c = 0; c < r->res->nconfigs; c++)
		for (size_t j = 0; j < r->res->configs[c].nruns; j++) {
			const struct db_results_run *run = &r->res->configs[c].runs[j];
			loaded += !isnan(run->loadavg) && run->host_cpus > 0;
			if (rank_run_busy(run)) {
				busy++;
				if (run->loadavg > peak) {
					peak = run->loadavg;
					cpus = run->host_cpus;
				}
			}
		}
	if (busy)
		warn(r, "host_busy", NULL, "the host was busy: its load average exceeded its CPUs "
		     "during %zu of %zu runs (up to %.1f on %d CPUs); other work competed with the "
		     "benchmark, which can move the values and the verdicts: rerun on a quiet host "
		     "and compare ('topoadvisor show' lists the load of every run)", busy, loaded,
		     peak, cpus);
	const struct decide_components *vc = &r->dr.components;
	if (vc->estimable && vc->p < DECIDE_ALPHA)
		warn(r, "boot_effect", NULL, "runs sharing a guest boot are alike: boot-to-boot "
		     "spread %.1f %%, run-to-run %.1f %% (F = %.2f, p = %.2g); verdicts count "
		     "boots, not runs, as replicates", 100 * vc->sd_boot, 100 * vc->sd_run, vc->f,
		     vc->p);
}

/* ---- the whole ------------------------------------------------------------- */

int rank_compute(const struct db_results *res, const char *metric, struct rank_result *out,
		 struct ta_err *err)
{
	struct rank_options o;
	rank_options_init(&o);
	o.metric = metric;
	return rank_compute_opts(res, &o, out, err);
}

/* Resolves the metric and its direction; fails with a message naming what is stored. */
static int metric_choose(const struct db_results *res, const struct rank_options *opt,
			 struct rank_result *out, struct ta_err *err)
{
	const char *metric = opt->metric ? opt->metric : res->exp.primary_metric;
	struct strbuf names = STRBUF_INIT;
	int rc = 0;
	bool found;
	int hib;
	if (!metric) {
		metric_names(res, &names);
		rc = err_set(err, EXIT_BAD_INPUT, "experiment %s has no primary metric: pass "
			     "--metric (one of: %s)", res->exp.name,
			     names.len ? strbuf_str(&names) : "none stored");
	} else if (metric_meta(res, metric, &found, &hib, &out->unit), !found && !res->exp.nok) {
		rc = err_set(err, EXIT_BAD_INPUT, "experiment %s has no successful run yet (%d "
			     "runs: %d planned, %d failed, %d interrupted); see 'topoadvisor show "
			     "%s'", res->exp.name, res->exp.nruns, res->exp.nplanned +
			     res->exp.nrunning, res->exp.nfailed, res->exp.ninterrupted, res->exp.name);
	} else if (!found) {
		metric_names(res, &names);
		rc = err_set(err, EXIT_BAD_INPUT, "experiment %s has no metric '%s' (stored: %s)",
			     res->exp.name, metric, names.len ? strbuf_str(&names) : "none");
	} else {
		out->metric = metric;
		/* The experiment's direction for the primary metric when the rows have
		 * none; higher is better when nothing says. */
		if (hib < 0 && res->exp.primary_metric && !strcmp(metric, res->exp.primary_metric))
			hib = res->exp.higher_is_better;
		out->higher_is_better = hib != 0;
		out->direction_known = hib >= 0;
	}
	strbuf_release(&names);
	return rc;
}

/* The recommendation's fields from the engine's result. */
static void recommendation(struct rank_result *r)
{
	const struct decide_result *dr = &r->dr;
	r->verdict = dr->verdict;
	r->nothing_beats_baseline = dr->nothing_beats_baseline;
	r->recommended_decision = rank_decision_at(r, dr->pick);
	r->recommended = r->recommended_decision ? r->recommended_decision->entry : NULL;
	r->leader = rank_decision_at(r, dr->leader);
	r->min_detectable_effect = dr->mde;
	r->needed_repetitions = dr->needed;
	r->contention = xcalloc(dr->ncontention + 1, sizeof(*r->contention));
	for (size_t i = 0; i < dr->ncontention; i++)
		r->contention[r->ncontention++] = rank_decision_at(r, dr->contention[i]);
	r->unsettled = xcalloc(dr->nunsettled + 1, sizeof(*r->unsettled));
	for (size_t i = 0; i < dr->nunsettled; i++)
		r->unsettled[r->nunsettled++] = rank_decision_at(r, dr->unsettled[i]);
	rank_reason(r);
}

int rank_compute_opts(const struct db_results *res, const struct rank_options *opt,
		      struct rank_result *out, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	out->res = res;
	out->spearman = NAN;
	out->equivalence = opt->equivalence;
	out->max_failure_rate = opt->max_failure_rate;
	out->objective = opt->objective;
	out->settings_unknown = opt->settings_unknown;
	out->min_detectable_effect = NAN;
	if (metric_choose(res, opt, out, err) < 0)
		return -1;
	out->environment = xcalloc(opt->nenvironment + 1, sizeof(*out->environment));
	for (size_t i = 0; i < opt->nenvironment; i++)
		out->environment[i] = xstrdup(opt->environment[i]);
	out->roles = (struct decide_roles){ (const char *const *)out->environment,
					    opt->nenvironment };
	decide_sweep_build(res, metric_value, (void *)out->metric, out->higher_is_better,
			   &out->roles, &out->sweep);
	struct decide_settings st;
	decide_settings_init(&st);
	st.objective = opt->objective;
	st.equivalence = opt->equivalence;
	st.max_failure_rate = opt->max_failure_rate;
	/* After a race: the level of its last look (the group-sequential stop's), not 0.05. */
	if (res->raced)
		decide_race_settings(&out->sweep.in, res->race_first_test, res->race_max_blocks,
				     &st);
	if (decide_compute(&out->sweep.in, &st, &out->dr) < 0)
		return err_set(err, EXIT_FAILURE_RUN, "experiment %s: the decision engine refused "
			       "its runs (a configuration or level out of range)", res->exp.name);
	out->levels = out->sweep.levels;
	out->nlevels = out->sweep.in.nlevels;
	out->baseline_source = out->sweep.baseline_source;
	out->ncomparisons = out->dr.m * out->nlevels;
	out->level_alpha = out->dr.level_alpha;
	out->nentries = res->nconfigs;
	out->entries = xcalloc(res->nconfigs + 1, sizeof(*out->entries));
	for (size_t i = 0; i < res->nconfigs; i++) {
		entry_fill(out, &out->entries[i], i);
		out->runs_interrupted += out->entries[i].ninterrupted;
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_run *run = &res->configs[i].runs[j];
			if (run_ok(run) && (db_results_run_metric(run, "gang_exits") ||
					    db_results_run_metric(run, "gang_exits_per_s")))
				out->gang_data = true;
		}
	}
	out->runs_total = out->dr.runs_total;
	out->runs_ok = out->dr.runs_ok;
	out->runs_failed = out->dr.runs_failed;
	qsort_r(out->entries, out->nentries, sizeof(*out->entries), cmp_entry, out);
	size_t pos = 0;
	for (size_t i = 0; i < out->nentries; i++) {
		if (i == 0 || out->entries[i].level != out->entries[i - 1].level)
			pos = 0;
		out->entries[i].position = out->entries[i].s.n ? ++pos : 0;
	}
	decisions_build(out);
	out->baseline_decision = rank_decision_at(out, out->sweep.in.baseline);
	out->best_decision = rank_decision_at(out, out->dr.best);
	out->baseline = out->baseline_decision ? out->baseline_decision->entry : NULL;
	out->best = out->best_decision ? out->best_decision->entry : NULL;
	composite_compute(out);
	evidence(out);
	recommendation(out);
	warnings_collect(out);
	return 0;
}

void rank_result_release(struct rank_result *r)
{
	for (size_t i = 0; i < r->nentries; i++) {
		free(r->entries[i].values);
		free(r->entries[i].value_runs);
		free(r->entries[i].dev);
		free(r->entries[i].outlier);
		free(r->entries[i].tests);
	}
	free(r->entries);
	for (size_t d = 0; d < r->ndecisions; d++)
		free(r->decisions[d].levels);
	free(r->decisions);
	free(r->contention);
	free(r->unsettled);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i].message);
	free(r->warnings);
	free(r->reason);
	for (size_t i = 0; r->environment && r->environment[i]; i++)
		free(r->environment[i]);
	free(r->environment);
	decide_result_release(&r->dr);
	decide_sweep_release(&r->sweep);
	memset(r, 0, sizeof(*r));
}
