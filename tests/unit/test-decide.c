/*
 * Unit tests of the decision engine (decide/decide.h), on its own input
 * structs: no database.  The decisions are a table, one row per boundary
 * of a rule (better, worse against undecided, equivalent against
 * undecided, failures, no baseline, lower is better, one run, all
 * eliminated, environment levels, boots); then the pieces the rows rest
 * on — paired units, the worst objective's interval, what would settle
 * it, outliers, variance components, drift — and the race's look, each
 * against values worked out by hand.  The runs are deterministic: seeded
 * draws, or offsets chosen so that a mean and spread are exact.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decide/decide.h"
#include "decide/decide-int.h"
#include "decide/input.h"
#include "decide/stats.h"

#define MAXD 8
#define MAXL 3
#define MAXB 40

/* A sweep in memory: decisions d0.., levels, runs appended block by block. */
struct sw {
	char keys[MAXD][24];
	struct decide_option opt[MAXD];
	struct decide_config cf[MAXD * MAXL];
	struct decide_run runs[MAXD * MAXL * MAXB];
	size_t nruns;
	struct decide_input in;
	struct decide_settings set;
};

static void sw_init(struct sw *s, size_t nd, size_t nl, size_t baseline, bool hib)
{
	memset(s, 0, sizeof(*s));
	for (size_t d = 0; d < nd; d++) {
		snprintf(s->keys[d], sizeof(s->keys[d]), "d%zu", d);
		s->opt[d] = (struct decide_option){ .key = s->keys[d], .host_cpus = 4 };
	}
	for (size_t c = 0; c < nd * nl; c++)
		s->cf[c] = (struct decide_config){ c / nl, c % nl };
	s->in = (struct decide_input){
		.decisions = s->opt, .ndecisions = nd, .configs = s->cf, .nconfigs = nd * nl,
		.nlevels = nl, .runs = s->runs, .baseline = baseline, .higher_is_better = hib,
		.boot_seconds = NAN, .run_seconds = NAN,
	};
	decide_settings_init(&s->set);
}

/* n runs of decision d at level l in blocks 0..n-1: mean e^(cv z), z seeded. */
static void sw_runs(struct sw *s, size_t d, size_t l, int n, double mean, double cv,
		    uint64_t seed)
{
	struct stats_rng rng;
	stats_rng_seed(&rng, seed * 131 + d * 7 + l);
	size_t c = d * s->in.nlevels + l;
	for (int b = 0; b < n; b++)
		s->runs[s->nruns++] = (struct decide_run){
			.config = c, .block = b, .order = b * 10 + (int)c, .status = DECIDE_RUN_OK,
			.value = mean * exp(cv * stats_rng_normal(&rng)), .gang = NAN };
	s->in.nruns = s->nruns;
}

/* The run of decision d, level l, block b. */
static struct decide_run *sw_run(struct sw *s, size_t d, size_t l, int b)
{
	size_t c = d * s->in.nlevels + l;
	for (size_t i = 0; i < s->nruns; i++)
		if (s->runs[i].config == c && s->runs[i].block == b)
			return &s->runs[i];
	fail_msg("no run d%zu/%zu/%d", d, l, b);
	return NULL;
}

static void sw_fail(struct sw *s, size_t d, size_t l, int b)
{
	sw_run(s, d, l, b)->status = DECIDE_RUN_FAILED;
}

/* Boots of decision d (every level): blocks grouped `per` at a time. */
static void sw_boots(struct sw *s, size_t d, int per)
{
	for (size_t i = 0; i < s->nruns; i++)
		if (s->cf[s->runs[i].config].decision == d)
			s->runs[i].boot = 1000 * (int64_t)(d + 1) + s->runs[i].block / per + 1;
}

/* ---- the table ------------------------------------------------------------- */

static void clear_winner(struct sw *s)
{
	sw_init(s, 3, 1, 0, true);
	sw_runs(s, 0, 0, 5, 100, 0.02, 1);
	sw_runs(s, 1, 0, 5, 120, 0.02, 1);
	sw_runs(s, 2, 0, 5, 101, 0.02, 1);
}

/* Shown worse, the only other: nothing beats the baseline. */
static void worse(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 5, 100, 0.01, 2);
	sw_runs(s, 1, 0, 5, 90, 0.01, 2);
}

/* The same 10 % loss under 20 % spread: not shown, undecided. */
static void worse_noisy(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 5, 100, 0.20, 2);
	sw_runs(s, 1, 0, 5, 90, 0.20, 2);
}

/* +0.2 % at CV 0.3 %, 8 blocks: shown within +-2 % (two one-sided tests). */
static void equivalent(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 8, 100, 0.003, 3);
	sw_runs(s, 1, 0, 8, 100.2, 0.003, 3);
}

/* The same at CV 3 %: the interval leaves the margin: undecided, not equivalent. */
static void equivalent_noisy(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 8, 100, 0.03, 3);
	sw_runs(s, 1, 0, 8, 100.2, 0.03, 3);
}

/* +20 %, but 3 of 8 runs failed: failing (37.5 % > 20 %), never recommended. */
static void failing(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 8, 100, 0.01, 4);
	sw_runs(s, 1, 0, 8, 120, 0.01, 4);
	sw_fail(s, 1, 0, 1);
	sw_fail(s, 1, 0, 4);
	sw_fail(s, 1, 0, 6);
}

/*
 * +20 % with 1 failure of 8 (12.5 %, allowed) against none: one failure
 * more is not shown to be more often (Fisher p = 0.5): better.
 */
static void more_failures(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 8, 100, 0.01, 4);
	sw_runs(s, 1, 0, 8, 120, 0.01, 4);
	sw_fail(s, 1, 0, 5);
}

/*
 * +20 %, 5 of 12 runs failed against none, failures allowed up to 50 %:
 * shown to fail more often (Fisher p = C(12,5) / C(24,5) = 0.0186 < 0.05):
 * never better, and settled (out of contention): keep the baseline.
 */
static void failures_shown(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 12, 100, 0.01, 4);
	sw_runs(s, 1, 0, 12, 120, 0.01, 4);
	for (int b = 0; b < 5; b++)
		sw_fail(s, 1, 0, 2 * b + 1);
	s->set.max_failure_rate = 0.5;
}

/*
 * Both fail 1 of 5, exactly advisor.max_failure_rate (20 %): allowed (the
 * maximum is not "above"), and d1's +20 % is better.
 */
static void failures_at_max(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 5, 100, 0.01, 4);
	sw_runs(s, 1, 0, 5, 120, 0.01, 4);
	sw_fail(s, 0, 0, 1);
	sw_fail(s, 1, 0, 3);
}

/*
 * Three levels, d1 +10 % at each but failing 4 of 10 at level 2 (13 %
 * pooled, under the 20 % maximum): under `worst` that level is its worst
 * case, failing there, never recommended.
 */
static void fails_at_level(struct sw *s)
{
	sw_init(s, 2, 3, 0, true);
	for (size_t l = 0; l < 3; l++) {
		sw_runs(s, 0, l, 10, 100, 0.02, 13);
		sw_runs(s, 1, l, 10, 110, 0.02, 13);
	}
	for (int b = 0; b < 4; b++)
		sw_fail(s, 1, 2, 2 * b + 1);
}

/* The same under `mean`: not failing (13 % pooled); its failures are outcomes in the objective. */
static void fails_at_level_mean(struct sw *s)
{
	fails_at_level(s);
	s->set.objective = DECIDE_OBJECTIVE_MEAN;
}

/* Under `mean`, a level d1 never succeeds at: failing (settled), not insufficient. */
static void never_at_level(struct sw *s)
{
	sw_init(s, 2, 2, 0, true);
	for (size_t l = 0; l < 2; l++) {
		sw_runs(s, 0, l, 6, 100, 0.01, 14);
		sw_runs(s, 1, l, 6, 100, 0.01, 14);
	}
	for (int b = 0; b < 6; b++)
		sw_fail(s, 1, 1, b);
	s->set.objective = DECIDE_OBJECTIVE_MEAN;
}

/*
 * +2.5 % shown better (d1), and a cheaper d2 (2 host CPUs) at +1 %, within
 * +-2 % of the baseline: d2 is within +-2 % of d1 but not better than the
 * baseline, so it is no candidate for the cost tie-break: d1.
 */
static void cheaper_not_better(struct sw *s)
{
	sw_init(s, 3, 1, 0, true);
	sw_runs(s, 0, 0, 8, 100, 0.001, 15);
	sw_runs(s, 1, 0, 8, 102.5, 0.001, 15);
	sw_runs(s, 2, 0, 8, 101, 0.001, 15);
	s->opt[2].host_cpus = 2;
}

/* The same when the baseline failed once too: better. */
static void failures_even(struct sw *s)
{
	more_failures(s);
	sw_fail(s, 0, 0, 2);
}

/* Never one successful run: failing, not "insufficient, 2 more runs". */
static void never_succeeds(struct sw *s)
{
	sw_init(s, 3, 1, 0, true);
	sw_runs(s, 0, 0, 5, 100, 0.01, 5);
	sw_runs(s, 1, 0, 5, 100, 0.01, 5);
	sw_runs(s, 2, 0, 5, 100.1, 0.002, 5);
	for (int b = 0; b < 5; b++)
		sw_fail(s, 1, 0, b);
}

/* No baseline: the best by its objective, the others shown worse. */
static void no_baseline(struct sw *s)
{
	sw_init(s, 3, 1, DECIDE_NONE, true);
	sw_runs(s, 0, 0, 5, 100, 0.01, 6);
	sw_runs(s, 1, 0, 5, 130, 0.01, 6);
	sw_runs(s, 2, 0, 5, 110, 0.01, 6);
}

/* No baseline, two within noise of each other at the top: undecided. */
static void no_baseline_close(struct sw *s)
{
	sw_init(s, 3, 1, DECIDE_NONE, true);
	sw_runs(s, 0, 0, 5, 100, 0.01, 6);
	sw_runs(s, 1, 0, 5, 130, 0.05, 6);
	sw_runs(s, 2, 0, 5, 128, 0.05, 6);
}

/* Lower is better (seconds): 20 % less time wins. */
static void lower_is_better(struct sw *s)
{
	sw_init(s, 3, 1, 0, false);
	sw_runs(s, 0, 0, 5, 100, 0.01, 7);
	sw_runs(s, 1, 0, 5, 80, 0.01, 7);
	sw_runs(s, 2, 0, 5, 120, 0.01, 7);
}

/* One run each: nothing can be tested. */
static void one_run(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 1, 100, 0.01, 8);
	sw_runs(s, 1, 0, 1, 150, 0.01, 8);
}

/* No baseline, one run each: nothing testable; the best mean, tentatively. */
static void no_baseline_one_run(struct sw *s)
{
	sw_init(s, 3, 1, DECIDE_NONE, true);
	sw_runs(s, 0, 0, 1, 100, 0.01, 8);
	sw_runs(s, 1, 0, 1, 150, 0.01, 8);
	sw_runs(s, 2, 0, 1, 120, 0.01, 8);
}

/* Two 10 % and 5 % losses at 20 % spread: both still in contention. */
static void two_in_contention(struct sw *s)
{
	sw_init(s, 3, 1, 0, true);
	sw_runs(s, 0, 0, 5, 100, 0.20, 2);
	sw_runs(s, 1, 0, 5, 90, 0.20, 2);
	sw_runs(s, 2, 0, 5, 95, 0.20, 2);
}

/*
 * A race dropped d1 and d2 against d2 and the baseline; d1's own runs
 * (5 blocks, equal to the baseline at CV 5 %) show nothing: it is
 * reported eliminated, not worse, and the verdict is no "keep it".
 */
static void all_eliminated(struct sw *s)
{
	sw_init(s, 3, 1, 0, true);
	sw_runs(s, 0, 0, 8, 100, 0.05, 9);
	sw_runs(s, 1, 0, 4, 100, 0.05, 9);
	sw_runs(s, 2, 0, 5, 80, 0.01, 9);
	s->opt[1].elim = (struct decide_stored_elim){ 4, 2, 0.001 };
	s->opt[2].elim = (struct decide_stored_elim){ 5, 0, 0.001 };
}

/* The same, with d1 also shown worse by its own runs: now nothing beats the baseline. */
static void all_eliminated_worse(struct sw *s)
{
	all_eliminated(s);
	s->nruns = 0;
	sw_runs(s, 0, 0, 8, 100, 0.01, 9);
	sw_runs(s, 1, 0, 4, 85, 0.01, 9);
	sw_runs(s, 2, 0, 5, 80, 0.01, 9);
}

/*
 * Two levels: d1 +30 % at level 0, -5 % at level 1; d2 +5 % at both.
 * `worst` picks d2, `mean` d1 (sqrt(1.3 x 0.95) = 1.11).
 */
static void levels(struct sw *s)
{
	sw_init(s, 3, 2, 0, true);
	sw_runs(s, 0, 0, 6, 100, 0.005, 10);
	sw_runs(s, 0, 1, 6, 80, 0.005, 10);
	sw_runs(s, 1, 0, 6, 130, 0.005, 10);
	sw_runs(s, 1, 1, 6, 76, 0.005, 10);
	sw_runs(s, 2, 0, 6, 105, 0.005, 10);
	sw_runs(s, 2, 1, 6, 84, 0.005, 10);
}

static void levels_mean(struct sw *s)
{
	levels(s);
	s->set.objective = DECIDE_OBJECTIVE_MEAN;
}

/*
 * A decision with one run per level has no score, but its difference to
 * the best is still estimated: the mean of its levels' log ratios (the
 * levels' d1, +30 % and -5 %, against the best, d2, at +5 % and +5 %).
 */
static void test_untestable_vs_best(void **state)
{
	(void)state;
	static struct sw s;
	levels(&s);
	for (size_t l = 0; l < 2; l++)
		for (int b = 1; b < 6; b++)
			sw_run(&s, 1, l, b)->status = DECIDE_RUN_NONE;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 2);
	assert_true(isnan(r.decisions[1].score));
	const struct decide_cmp *c = &r.decisions[1].vs_best;
	assert_false(c->ok);
	double want = (log(sw_run(&s, 1, 0, 0)->value / sw_run(&s, 2, 0, 0)->value) +
		       log(sw_run(&s, 1, 1, 0)->value / sw_run(&s, 2, 1, 0)->value)) / 2;
	assert_true(fabs(c->est - want) < 1e-12);
	decide_result_release(&r);
}

/*
 * A +10 % that holds at every level of three is better; one that does not
 * hold at the worst level is not, though its per-block minimum over
 * noisy levels would never say so about an equal one either.
 */
static void levels_gain(struct sw *s)
{
	sw_init(s, 3, 3, 0, true);
	for (size_t l = 0; l < 3; l++) {
		sw_runs(s, 0, l, 10, 100, 0.02, 11);
		sw_runs(s, 1, l, 10, 110, 0.02, 11);
		sw_runs(s, 2, l, 10, 100, 0.02, 11);
	}
}

/*
 * Boots: d1 is +8 % in runs that all share one boot per configuration
 * (guest.reuse without reuse_runs): one unit, nothing testable; it could
 * still be better, so it stays in contention.
 */
static void one_boot(struct sw *s)
{
	sw_init(s, 2, 1, 0, true);
	sw_runs(s, 0, 0, 8, 100, 0.01, 12);
	sw_runs(s, 1, 0, 8, 108, 0.01, 12);
	sw_boots(s, 0, 8);
	sw_boots(s, 1, 8);
}

/* The same with a fresh boot every 2 blocks: 4 units, better. */
static void boots_of_two(struct sw *s)
{
	one_boot(s);
	sw_boots(s, 0, 2);
	sw_boots(s, 1, 2);
}

struct row {
	const char *name;
	void (*build)(struct sw *);
	enum decide_verdict verdict;
	const char *pick;		/* NULL: none */
	const char *contention;		/* keys, comma-separated */
	const char *unsettled;		/* eliminated, not shown worse or equivalent */
	enum decide_verdict d1;		/* decision d1's verdict */
};

static const struct row rows[] = {
	{ "clear winner", clear_winner, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
	{ "worse", worse, DECIDE_EQUIVALENT, "d0", "", "", DECIDE_WORSE },
	{ "worse, noisy", worse_noisy, DECIDE_UNDECIDED, "d0", "d1", "", DECIDE_UNDECIDED },
	{ "equivalent", equivalent, DECIDE_EQUIVALENT, "d0", "", "", DECIDE_EQUIVALENT },
	{ "equivalent, noisy", equivalent_noisy, DECIDE_UNDECIDED, "d0", "d1", "",
	  DECIDE_UNDECIDED },
	{ "failing", failing, DECIDE_EQUIVALENT, "d0", "", "", DECIDE_FAILING },
	{ "one failure more", more_failures, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
	{ "failures shown", failures_shown, DECIDE_EQUIVALENT, "d0", "", "", DECIDE_UNDECIDED },
	{ "failures at the maximum", failures_at_max, DECIDE_BETTER, "d1", "", "",
	  DECIDE_BETTER },
	{ "fails at a level, worst", fails_at_level, DECIDE_EQUIVALENT, "d0", "", "",
	  DECIDE_FAILING },
	{ "never at a level, mean", never_at_level, DECIDE_EQUIVALENT, "d0", "", "",
	  DECIDE_FAILING },
	{ "cheaper, not better", cheaper_not_better, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
	{ "failures even", failures_even, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
	{ "never succeeds", never_succeeds, DECIDE_EQUIVALENT, "d0", "", "", DECIDE_FAILING },
	{ "no baseline", no_baseline, DECIDE_BETTER, "d1", "", "", DECIDE_NOT_COMPARED },
	{ "no baseline, close", no_baseline_close, DECIDE_UNDECIDED, "d1", "d2", "",
	  DECIDE_NOT_COMPARED },
	{ "lower is better", lower_is_better, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
	{ "one run", one_run, DECIDE_INSUFFICIENT, "d0", "", "", DECIDE_INSUFFICIENT },
	{ "no baseline, one run", no_baseline_one_run, DECIDE_INSUFFICIENT, "d1", "", "",
	  DECIDE_NOT_COMPARED },
	{ "two in contention", two_in_contention, DECIDE_UNDECIDED, "d0", "d1,d2", "",
	  DECIDE_UNDECIDED },
	{ "all eliminated", all_eliminated, DECIDE_UNDECIDED, "d0", "", "d1", DECIDE_UNDECIDED },
	{ "all eliminated, worse", all_eliminated_worse, DECIDE_EQUIVALENT, "d0", "", "",
	  DECIDE_WORSE },
	{ "levels, worst", levels, DECIDE_BETTER, "d2", "", "", DECIDE_WORSE },
	{ "levels, mean", levels_mean, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
	{ "levels, +10 % at each", levels_gain, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
	{ "one boot", one_boot, DECIDE_UNDECIDED, "d0", "d1", "", DECIDE_INSUFFICIENT },
	{ "boots of two", boots_of_two, DECIDE_BETTER, "d1", "", "", DECIDE_BETTER },
};

/*
 * The same sweep told differently: decisions, configurations and runs in
 * reverse order (the baseline no longer first), and with hib the metric
 * turned around (1/value, lower is better).  Nothing a user decides may
 * depend on either.
 */
static void sw_mirror(struct sw *s, bool turn)
{
	static struct sw m;
	size_t nd = s->in.ndecisions, nc = s->in.nconfigs;
	m = *s;
	for (size_t d = 0; d < nd; d++) {
		size_t e = nd - 1 - d;
		memcpy(m.keys[e], s->keys[d], sizeof(m.keys[e]));
		m.opt[e] = s->opt[d];
		m.opt[e].key = s->keys[e];	/* fixed below, once s is overwritten */
		if (s->opt[d].elim.block && s->opt[d].elim.against != DECIDE_NONE)
			m.opt[e].elim.against = nd - 1 - s->opt[d].elim.against;
	}
	/* Configuration c' = nc - 1 - c keeps its (decision, level) mapped. */
	size_t *to = calloc(nc, sizeof(*to));
	for (size_t c = 0; c < nc; c++) {
		to[c] = nc - 1 - c;
		m.cf[to[c]] = (struct decide_config){ nd - 1 - s->cf[c].decision, s->cf[c].level };
	}
	for (size_t i = 0; i < s->nruns; i++) {
		struct decide_run r = s->runs[i];
		r.config = to[r.config];
		if (turn && r.status == DECIDE_RUN_OK)
			r.value = 1 / r.value;
		m.runs[s->nruns - 1 - i] = r;
	}
	free(to);
	*s = m;
	for (size_t d = 0; d < nd; d++)
		s->opt[d].key = s->keys[d];
	s->in.decisions = s->opt;
	s->in.configs = s->cf;
	s->in.runs = s->runs;
	if (s->in.baseline != DECIDE_NONE)
		s->in.baseline = nd - 1 - s->in.baseline;
	if (turn)
		s->in.higher_is_better = !s->in.higher_is_better;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "d1,d2" from a list of decisions, in key order. */
static void keys_sorted(const struct sw *s, const size_t *v, size_t n, char *out, size_t len)
{
	const char *k[MAXD];
	for (size_t i = 0; i < n && i < MAXD; i++)
		k[i] = s->keys[v[i]];
	qsort(k, n, sizeof(k[0]), cmp_str);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t at = strlen(out);
		snprintf(out + at, len - at, "%s%s", i ? "," : "", k[i]);
	}
}

static size_t decision_of(const struct sw *s, const char *key)
{
	for (size_t d = 0; d < s->in.ndecisions; d++)
		if (!strcmp(s->keys[d], key))
			return d;
	fail_msg("no decision %s", key);
	return DECIDE_NONE;
}

/*
 * Statuses that may never contradict a verdict, whatever the row: the
 * baseline is "worse than the best" exactly when the best is shown better
 * than it (and tied with it exactly when shown equivalent); nothing
 * failing or shown to fail more often is in contention or recommended
 * better; without a baseline `better` needs something shown worse.
 */
static void check_statuses(const char *name, const char *how, const struct sw *s,
			   const struct decide_result *r)
{
	size_t b = s->in.baseline;
	if (b != DECIDE_NONE && r->baseline_testable && r->best != DECIDE_NONE && r->best != b) {
		const struct decide_decision_out *bo = &r->decisions[b];
		enum decide_verdict bv = r->decisions[r->best].verdict;
		if (bo->worse_than_best != (bv == DECIDE_BETTER) ||
		    bo->equivalent_to_best != (bv == DECIDE_EQUIVALENT))
			fail_msg("%s%s: baseline worse/tied %d/%d beside the best's verdict %s", name,
				 how, bo->worse_than_best, bo->equivalent_to_best,
				 decide_verdict_name(bv));
	}
	for (size_t i = 0; i < r->ncontention; i++) {
		const struct decide_decision_out *o = &r->decisions[r->contention[i]];
		if (o->failing || o->more_failures)
			fail_msg("%s%s: %s in contention though failing or failing more", name, how,
				 s->keys[r->contention[i]]);
	}
	if (r->verdict == DECIDE_BETTER && r->pick != DECIDE_NONE &&
	    (r->decisions[r->pick].failing || r->decisions[r->pick].more_failures))
		fail_msg("%s%s: %s recommended better though it fails", name, how, s->keys[r->pick]);
	if (b == DECIDE_NONE && r->verdict == DECIDE_BETTER) {
		bool shown = false;
		for (size_t d = 0; d < s->in.ndecisions; d++)
			shown |= r->decisions[d].worse_than_best || r->decisions[d].failing;
		if (!shown)
			fail_msg("%s%s: better without a baseline, nothing shown worse", name, how);
	}
}

static void check_row(const struct row *w, const struct sw *s, const char *how)
{
	struct decide_result r;
	assert_int_equal(decide_compute(&s->in, &s->set, &r), 0);
	char cont[64], uns[64];
	keys_sorted(s, r.contention, r.ncontention, cont, sizeof(cont));
	keys_sorted(s, r.unsettled, r.nunsettled, uns, sizeof(uns));
	const char *pick = r.pick == DECIDE_NONE ? NULL : s->keys[r.pick];
	enum decide_verdict d1 = r.decisions[decision_of(s, "d1")].verdict;
	check_statuses(w->name, how, s, &r);
	if (r.verdict != w->verdict || (pick == NULL) != (w->pick == NULL) ||
	    (pick && strcmp(pick, w->pick)) || strcmp(cont, w->contention) ||
	    strcmp(uns, w->unsettled) || d1 != w->d1)
		fail_msg("%s%s: verdict %s pick %s contention [%s] unsettled [%s] d1 %s; "
			 "expected %s %s [%s] [%s] %s", w->name, how,
			 decide_verdict_name(r.verdict), pick ? pick : "-", cont, uns,
			 decide_verdict_name(d1),
			 decide_verdict_name(w->verdict), w->pick ? w->pick : "-",
			 w->contention, w->unsettled, decide_verdict_name(w->d1));
	decide_result_release(&r);
}

/*
 * Failures at one level: under `worst` the decision is failing and names
 * the level (2); under `mean` it is not (13 % pooled), its failures are
 * outcomes in the objective (the estimate falls below the same runs
 * without them) and its pooled rate is not shown above the baseline's
 * (Fisher p = C(30,4) / C(60,4) = 0.056).
 */
static void test_fails_at_level(void **state)
{
	(void)state;
	static struct sw s;
	struct decide_result r;
	fails_at_level(&s);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].failing);
	assert_int_equal(r.decisions[1].failing_level, 2);
	assert_int_equal(r.decisions[1].verdict, DECIDE_FAILING);
	assert_true(r.configs[1 * 3 + 2].failing);
	assert_false(r.configs[1 * 3 + 0].failing);
	decide_result_release(&r);

	fails_at_level_mean(&s);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_decision_out *o = &r.decisions[1];
	assert_false(o->failing);
	assert_true(o->failing_level == DECIDE_NONE);
	assert_true(fabs(o->failures_p - 27405.0 / 487635.0) < 1e-9);
	assert_false(o->more_failures);
	assert_int_not_equal(o->verdict, DECIDE_FAILING);
	double with = o->objective.est;
	decide_result_release(&r);
	for (int b = 0; b < 4; b++)
		sw_run(&s, 1, 2, 2 * b + 1)->status = DECIDE_RUN_OK;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(with < r.decisions[1].objective.est - 0.005);
	decide_result_release(&r);
}

/* Fisher's exact test, one-sided, against sums worked out by hand. */
static void test_fisher(void **state)
{
	(void)state;
	assert_true(fabs(stats_fisher_more(5, 12, 0, 12) - 792.0 / 42504.0) < 1e-12);
	assert_true(fabs(stats_fisher_more(1, 8, 0, 8) - 0.5) < 1e-12);
	/* 2 of 5 against 1 of 5: P(X >= 2), X ~ H(10, 3, 5) = (30 + 10) / 120 */
	assert_true(fabs(stats_fisher_more(2, 5, 1, 5) - 0.5) < 1e-12);
	assert_true(fabs(stats_fisher_more(3, 5, 0, 5) - 10.0 / 120.0) < 1e-12);
	assert_true(stats_fisher_more(0, 5, 3, 5) == 1);
	assert_true(stats_fisher_more(1, 5, 1, 5) > 0.7);
}

/*
 * No baseline, four configurations measuring the same: `equivalent` among
 * them, tied, nothing recommended over the others; one of them cheaper (2
 * host CPUs): recommended, still `equivalent` (not shown better than the
 * others); one clearly ahead: `better`.  A lone configuration is better
 * than nothing: insufficient.
 */
static void test_no_baseline_ties(void **state)
{
	(void)state;
	static struct sw s;
	struct decide_result r;
	sw_init(&s, 4, 1, DECIDE_NONE, true);
	for (size_t d = 0; d < 4; d++)
		sw_runs(&s, d, 0, 10, 100, 0.005, 16);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_EQUIVALENT);
	assert_true(r.tied);
	assert_int_equal(r.ncandidates, 4);
	assert_int_equal(r.ncontention, 0);
	check_statuses("ties", "", &s, &r);
	decide_result_release(&r);
	s.opt[2].host_cpus = 2;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_EQUIVALENT);
	assert_false(r.tied);
	assert_int_equal(r.pick, 2);
	decide_result_release(&r);
	s.opt[2].host_cpus = 4;
	s.nruns = 0;
	sw_runs(&s, 0, 0, 10, 100, 0.005, 16);
	sw_runs(&s, 1, 0, 10, 100, 0.005, 16);
	sw_runs(&s, 2, 0, 10, 100, 0.005, 16);
	sw_runs(&s, 3, 0, 10, 110, 0.005, 16);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_BETTER);
	assert_false(r.tied);
	assert_int_equal(r.pick, 3);
	decide_result_release(&r);
	sw_init(&s, 1, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 16);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_INSUFFICIENT);
	assert_int_equal(r.pick, 0);
	decide_result_release(&r);
}

/*
 * The baseline is "worse than the best" only when the best's own verdict
 * against it says so: d1 +1.3 % with t = 2.91 (df 5, p = 0.034) is
 * undecided at alpha / 2 (two decisions compared with the baseline),
 * though the baseline's comparison with the best alone, at alpha / 1,
 * would exclude 0.
 */
static void test_baseline_vs_best(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	for (int b = 0; b < 6; b++) {
		double e = b % 2 ? -0.01 : 0.01;
		s.runs[s.nruns++] = (struct decide_run){ .config = 0, .block = b,
			.status = DECIDE_RUN_OK, .value = 100, .gang = NAN };
		s.runs[s.nruns++] = (struct decide_run){ .config = 1, .block = b,
			.status = DECIDE_RUN_OK, .value = 100 * exp(0.013 + e), .gang = NAN };
		s.runs[s.nruns++] = (struct decide_run){ .config = 2, .block = b,
			.status = DECIDE_RUN_OK, .value = 80 * exp(e / 2), .gang = NAN };
	}
	s.in.nruns = s.nruns;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 1);
	assert_int_equal(r.decisions[1].verdict, DECIDE_UNDECIDED);
	assert_true(r.decisions[0].vs_best.hi < 0);	/* alone it would say "worse" */
	assert_false(r.decisions[0].worse_than_best);
	assert_false(r.decisions[0].equivalent_to_best);
	decide_result_release(&r);
}

static void test_table(void **state)
{
	(void)state;
	static struct sw s;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *w = &rows[i];
		w->build(&s);
		check_row(w, &s, "");
		w->build(&s);
		sw_mirror(&s, false);
		check_row(w, &s, " (reversed order)");
		w->build(&s);
		sw_mirror(&s, true);
		check_row(w, &s, " (reversed order, metric turned around)");
	}
}

/* ---- the pieces ---------------------------------------------------------------- */

/* The gain, interval and family of the clear winner, and the verdict's agreement with them. */
static void test_clear_winner_numbers(void **state)
{
	(void)state;
	static struct sw s;
	clear_winner(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.m, 2);
	assert_true(fabs(r.objective_alpha - 0.025) < 1e-15);
	assert_true(fabs(r.level_alpha - 0.025) < 1e-15);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_true(c->ok);
	assert_int_equal(c->pairs, 5);
	assert_int_equal(c->units, 5);
	assert_int_equal(c->trimmed, 0);	/* 10 % of 5: none */
	assert_true(fabs(c->est - log(1.2)) < 0.02);
	assert_true(c->lo < c->est && c->est < c->hi && c->lo > 0);
	assert_true(fabs(c->df - 4) < 1e-12);
	assert_true(c->p < 0.025);
	assert_true(fabs(r.decisions[1].p_adj - fmin(1, 2 * c->p)) < 1e-15);
	assert_int_equal(c->needed, 0);
	assert_true(r.decisions[1].is_best);
	assert_true(r.decisions[2].worse_than_best);
	assert_false(r.decisions[2].equivalent_to_best);
	/* One level: the difference to the best is that level's paired test. */
	assert_true(r.decisions[2].vs_best.p == r.configs[2].p_best);
	assert_int_equal(r.best, 1);
	assert_int_equal(r.runs_ok, 15);
	assert_int_equal(r.runs_failed, 0);
	assert_int_equal(r.runs_total, 15);
	/* Each other configuration against the best's, a paired t test on the
	 * log values (5 blocks, nothing trimmed), adjusted for the family of
	 * the decisions tested against the baseline other than the best (d2
	 * alone: times 1); the best is not compared with itself. */
	for (size_t d = 0; d < 3; d += 2) {
		double x[5], mean = 0, ss = 0;
		for (int b = 0; b < 5; b++) {
			x[b] = log(sw_run(&s, d, 0, b)->value / sw_run(&s, 1, 0, b)->value);
			mean += x[b] / 5;
		}
		for (int b = 0; b < 5; b++)
			ss += (x[b] - mean) * (x[b] - mean);
		double p = stats_t_p(mean / sqrt(ss / 4 / 5), 4);
		assert_true(fabs(r.configs[d].p_best - p) < 1e-12);
		assert_true(fabs(r.configs[d].p_best_adj - p) < 1e-12);
	}
	assert_true(isnan(r.configs[1].p_best) && isnan(r.configs[1].p_best_adj));
	decide_result_release(&r);
}

/*
 * Blocks sharing a boot pool into one unit: paired log ratios 0.1, 0.3
 * (boot a), 0.2 (boot b), 0.4, 0.6 (boot c): units 0.2, 0.2, 0.5, mean
 * 0.3, sd sqrt(0.03) over 3 units.
 */
static void test_units(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	const double d[] = { 0.1, 0.3, 0.2, 0.4, 0.6 };
	const int64_t boot[] = { 11, 11, 12, 13, 13 };
	for (int b = 0; b < 5; b++) {
		s.runs[s.nruns++] = (struct decide_run){ .config = 0, .block = b,
			.status = DECIDE_RUN_OK, .value = 100, .boot = 20 + b, .gang = NAN };
		s.runs[s.nruns++] = (struct decide_run){ .config = 1, .block = b,
			.status = DECIDE_RUN_OK, .value = 100 * exp(d[b]), .boot = boot[b],
			.gang = NAN };
	}
	s.in.nruns = s.nruns;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_int_equal(c->pairs, 5);
	assert_int_equal(c->units, 3);
	assert_true(fabs(c->est - 0.3) < 1e-12);
	assert_true(fabs(c->se - sqrt(0.03 / 3)) < 1e-12);
	assert_true(fabs(c->df - 2) < 1e-12);
	double q = stats_t_quantile(1 - 0.05 / 2, 2);
	assert_true(fabs(c->lo - (0.3 - q * c->se)) < 1e-9);
	/* Boots shared across configurations join too: the baseline's boot 20 = d1's block 4. */
	s.runs[8].boot = 11;
	decide_result_release(&r);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.units, 2);
	assert_int_equal(r.configs[1].nboots, 3);
	decide_result_release(&r);
}

/*
 * Nothing ran: every run failed (or only a host reference ran): nothing is
 * recommended, not even the baseline, and no number of blocks is promised.
 */
static void test_nothing_ran(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 3, 100, 0.01, 3);
	sw_runs(&s, 1, 0, 3, 120, 0.01, 3);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].status = DECIDE_RUN_FAILED;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_INSUFFICIENT);
	assert_true(r.pick == DECIDE_NONE && r.leader == DECIDE_NONE);
	assert_int_equal(r.needed, 0);
	decide_result_release(&r);
	/* Only the host reference (d1) has runs. */
	s.opt[1].host_reference = true;
	for (size_t i = 3; i < s.nruns; i++)
		s.runs[i].status = DECIDE_RUN_OK;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_INSUFFICIENT);
	assert_true(r.pick == DECIDE_NONE);
	decide_result_release(&r);
}

/*
 * A noisy contender above the one shown better may be the real winner: d1
 * is +10 % and better; d2 (+19 % on average, +-25 % block to block) and
 * d3 (+24 %) are neither shown better nor separated from d1.  No decision
 * yet: the pick stays d1, the highest of them (d3) leads and what it
 * needs is what is needed.
 */
static void test_contender_over_top(void **state)
{
	(void)state;
	static const double d2[] = { 1.5, 0.9, 1.4, 0.95, 1.3 }, d3[] = { 1.7, 0.9, 1.6, 0.95, 1.3 };
	static struct sw s;
	sw_init(&s, 4, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0, 1);
	sw_runs(&s, 1, 0, 5, 110, 0.001, 1);
	sw_runs(&s, 2, 0, 5, 100, 0, 1);
	sw_runs(&s, 3, 0, 5, 100, 0, 1);
	for (int b = 0; b < 5; b++) {
		sw_run(&s, 2, 0, b)->value *= d2[b];
		sw_run(&s, 3, 0, b)->value *= d3[b];
	}
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].verdict, DECIDE_BETTER);
	assert_int_equal(r.decisions[2].verdict, DECIDE_UNDECIDED);
	assert_int_equal(r.decisions[3].verdict, DECIDE_UNDECIDED);
	assert_int_equal(r.verdict, DECIDE_UNDECIDED);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.leader, 3);
	assert_int_equal(r.needed, r.decisions[3].objective.needed);
	assert_true(r.needed > 0);
	decide_result_release(&r);
	/* d2 and d3's draws swapped: d2 leads. */
	for (int b = 0; b < 5; b++) {
		sw_run(&s, 2, 0, b)->value = 100 * d3[b];
		sw_run(&s, 3, 0, b)->value = 100 * d2[b];
	}
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.leader, 2);
	decide_result_release(&r);
}

/*
 * Failures inside replication units (d1's boots serving 2 blocks): a unit where
 * only d1 failed is its worst unit (-inf, trimmed with the best one), a unit
 * where both failed says nothing and is dropped.  Units' log ratios here:
 * {fail, 0.02, 0.04, 0.06}.
 */
static void test_failed_units(void **state)
{
	(void)state;
	static const double diff[] = { 0.1, 0.1, 0.02, 0.02, 0.04, 0.04, 0.06, 0.06 };
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 8, 100, 0, 1);
	sw_runs(&s, 1, 0, 8, 100, 0, 1);
	for (int b = 0; b < 8; b++)
		sw_run(&s, 1, 0, b)->value *= exp(diff[b]);
	/* d1's boots as stored, numbered from 1; the baseline's runs each
	 * booted their own guest (boot not recorded: 0). */
	for (int b = 0; b < 8; b++)
		sw_run(&s, 1, 0, b)->boot = 1 + b / 2;
	sw_fail(&s, 1, 0, 0);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_int_equal(c->pairs, 8);
	assert_int_equal(c->units, 4);
	assert_int_equal(c->trimmed, 1);
	assert_true(fabs(c->est - 0.03) < 1e-12);
	decide_result_release(&r);
	/* The baseline failed in that unit too: dropped, the other three kept. */
	sw_fail(&s, 0, 0, 1);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	c = &r.decisions[1].objective;
	assert_int_equal(c->units, 3);
	assert_int_equal(c->trimmed, 0);
	assert_true(fabs(c->est - 0.04) < 1e-12);
	decide_result_release(&r);
}

/*
 * What each configuration ran: successful runs and their boots (values
 * below 1, as seconds are: lower is better), a run without a value counted
 * as no outcome, and only the blocks a look covers.  Boots: d0 one per 2
 * blocks, d1 one per run, d2 one per 3 blocks.
 */
static void test_counts(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, false);
	for (size_t d = 0; d < 3; d++)
		sw_runs(&s, d, 0, 6, 0.5, 0.01, 9);
	sw_boots(&s, 0, 2);
	sw_boots(&s, 2, 3);
	sw_run(&s, 1, 0, 5)->value = 0;
	const struct { int blocks; size_t ok[3], nboots[3], none1, total, pairs2; } rows[] = {
		{ 0, { 6, 5, 6 }, { 3, 5, 2 }, 1, 18, 6 },
		{ 4, { 4, 4, 4 }, { 2, 4, 2 }, 0, 12, 4 },
		{ 3, { 3, 3, 3 }, { 2, 3, 1 }, 0, 9, 3 },
		{ 1, { 1, 1, 1 }, { 1, 1, 1 }, 0, 3, 0 },	/* the first block only: untestable */
	};
	for (size_t row = 0; row < sizeof(rows) / sizeof(*rows); row++) {
		s.set.blocks = rows[row].blocks;
		struct decide_result r;
		assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
		for (size_t c = 0; c < 3; c++) {
			assert_int_equal(r.configs[c].n_ok, rows[row].ok[c]);
			assert_int_equal(r.configs[c].nboots, rows[row].nboots[c]);
		}
		assert_int_equal(r.configs[1].n_none, rows[row].none1);
		assert_int_equal(r.runs_total, rows[row].total);
		/* The comparisons and the outlier flags see the same blocks. */
		assert_int_equal(r.decisions[2].objective.pairs, rows[row].pairs2);
		for (size_t i = 0; i < s.nruns; i++)
			if (rows[row].blocks > 0 && s.runs[i].block >= rows[row].blocks)
				assert_true(r.runs[i].dev == 0 && !r.runs[i].outlier);
		decide_result_release(&r);
	}
}

/* A failed run is the worst outcome: trimmed when few, untestable when too many. */
static void test_failures_trimmed(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 12, 100, 0.01, 13);
	sw_runs(&s, 1, 0, 12, 110, 0.01, 13);
	s.set.max_failure_rate = 0.5;
	sw_fail(&s, 0, 0, 3);	/* the baseline's: +inf in block 3 */
	sw_fail(&s, 1, 0, 7);	/* d1's: -inf in block 7 */
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_true(c->ok);
	assert_int_equal(c->pairs, 12);
	assert_int_equal(c->trimmed, 1);
	assert_int_equal(c->set_aside, 0);	/* failures are never set aside */
	assert_true(fabs(c->est - log(1.1)) < 0.01);
	assert_int_equal(r.decisions[1].verdict, DECIDE_BETTER);
	assert_int_equal(r.decisions[1].n_failed, 1);
	assert_true(fabs(r.decisions[1].failure_rate - 1.0 / 12) < 1e-12);
	assert_false(r.decisions[1].more_failures);	/* the baseline failed once too */
	assert_false(r.configs[0].more_failures);	/* never more than itself */
	decide_result_release(&r);
	/*
	 * Three of d1's: g grows to 3 of 12, still testable; 3 failures against
	 * the baseline's 1 are not shown to be more often (Fisher p =
	 * (C(12,3) C(12,1) + C(12,4)) / C(24,4) = 3135 / 10626): better.
	 */
	sw_fail(&s, 1, 0, 1);
	sw_fail(&s, 1, 0, 9);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.trimmed, 3);
	assert_true(fabs(r.decisions[1].failures_p - 3135.0 / 10626.0) < 1e-9);
	assert_true(fabs(r.configs[1].failures_p - 3135.0 / 10626.0) < 1e-9);
	assert_false(r.decisions[1].more_failures);
	assert_int_equal(r.decisions[1].verdict, DECIDE_BETTER);
	decide_result_release(&r);
	/*
	 * Seven of d1's against one: shown (p = (C(12,7) C(12,1) + C(12,8)) /
	 * C(24,8) = 0.0136 < 0.05): never better, and settled: out of
	 * contention, though too many to test (g 7 of 12).
	 */
	sw_fail(&s, 1, 0, 0);
	sw_fail(&s, 1, 0, 4);
	sw_fail(&s, 1, 0, 10);
	sw_fail(&s, 1, 0, 11);
	s.set.max_failure_rate = 0.6;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].more_failures);
	assert_true(r.configs[1].more_failures);	/* its configuration's, in rank's row */
	assert_true(fabs(r.decisions[1].failures_p - 9999.0 / 735471.0) < 1e-9);
	assert_int_equal(r.decisions[1].verdict, DECIDE_INSUFFICIENT);
	assert_int_equal(r.verdict, DECIDE_EQUIVALENT);
	assert_int_equal(r.ncontention, 0);
	decide_result_release(&r);
	/* Both failed in one block: a tie (0), no pair dropped. */
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 3, 100, 0, 14);
	sw_runs(&s, 1, 0, 3, 100 * exp(0.3), 0, 14);
	s.set.max_failure_rate = 1;
	sw_fail(&s, 0, 0, 2);
	sw_fail(&s, 1, 0, 2);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.pairs, 3);
	assert_true(fabs(r.decisions[1].objective.est - 0.2) < 1e-12);
	decide_result_release(&r);
}

/*
 * Far units: from 10 units on, a block one run made far from the others
 * (d1 3x slower in block 4, d1 3x faster in block 8) is set aside, the
 * farthest first, at most a fifth of the units; below 10 units none is.
 */
static void test_far_units(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 10, 100, 0.01, 21);
	sw_runs(&s, 1, 0, 10, 105, 0.01, 21);
	sw_run(&s, 1, 0, 4)->value /= 3;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_int_equal(c->pairs, 10);
	assert_int_equal(c->set_aside, 1);
	assert_int_equal(c->units, 9);
	assert_int_equal(c->trimmed, 0);	/* 10 % of 9 */
	assert_true(fabs(c->est - log(1.05)) < 0.01);
	assert_int_equal(r.decisions[1].verdict, DECIDE_BETTER);
	assert_true(r.runs[s.nruns - 10 + 4].outlier);	/* flagged, kept */
	assert_int_equal(r.decisions[1].n_ok, 10);
	decide_result_release(&r);
	/* Two far ones, one each way: both set aside (a fifth of 10). */
	sw_run(&s, 1, 0, 8)->value *= 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.set_aside, 2);
	assert_int_equal(r.decisions[1].objective.units, 8);
	decide_result_release(&r);
	/* A third is beyond the fifth: the 10 % trim is left to deal with it. */
	sw_run(&s, 1, 0, 1)->value /= 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.set_aside, 2);
	decide_result_release(&r);
	/* By hand, log differences 0, 0.01, .., 0.08 and 0.30: median 0.045,
	 * MAD 0.025, limit 5 * 1.4826 * 0.025 = 0.185: 0.30 is set aside (it
	 * would stay within twice the scale). */
	static const double near[] = { 0, 0.01, 0.02, 0.03, 0.30, 0.04, 0.05, 0.06, 0.07, 0.08 };
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 10, 100, 0, 1);
	sw_runs(&s, 1, 0, 10, 100, 0, 1);
	for (int b = 0; b < 10; b++)
		sw_run(&s, 1, 0, b)->value *= exp(near[b]);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.set_aside, 1);
	assert_true(fabs(r.decisions[1].objective.est - 0.04) < 1e-12);
	decide_result_release(&r);
	/* Three far ones (0.9, -0.6, 0.5; median 0.035), room for two: the
	 * farthest two go, 0.5 stays: the mean of 0 .. 0.06 and 0.5 (8 units,
	 * nothing trimmed) is 0.71 / 8. */
	static const double three[] = { 0.9, 0, 0.01, -0.6, 0.02, 0.03, 0.5, 0.04, 0.05, 0.06 };
	for (int b = 0; b < 10; b++)
		sw_run(&s, 1, 0, b)->value = 100 * exp(three[b]);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.set_aside, 2);
	assert_int_equal(r.decisions[1].objective.trimmed, 0);
	assert_true(fabs(r.decisions[1].objective.est - 0.71 / 8) < 1e-12);
	decide_result_release(&r);
	/* 9 blocks: none set aside. */
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 9, 100, 0.01, 21);
	sw_runs(&s, 1, 0, 9, 105, 0.01, 21);
	sw_run(&s, 1, 0, 4)->value /= 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.set_aside, 0);
	assert_int_equal(r.decisions[1].objective.units, 9);
	decide_result_release(&r);
}

/*
 * The worst objective's interval: lower ends at alpha/2 one-sided, upper
 * ends at alpha/(2L); the estimate the smallest level's.
 */
static void test_worst_interval(void **state)
{
	(void)state;
	static struct sw s;
	levels(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[2].objective;
	assert_true(fabs(c->est - log(84.0 / 80)) < 0.01);
	double a = r.objective_alpha;
	assert_true(fabs(a - 0.025) < 1e-15);
	/* Recompute from the per-level comparisons (the configurations' are at alpha/(mL)). */
	const struct decide_cmp *l0 = &r.configs[4].vs_baseline, *l1 = &r.configs[5].vs_baseline;
	double lo0 = l0->est - stats_t_quantile(1 - a / 2, l0->df) * l0->se;
	double lo1 = l1->est - stats_t_quantile(1 - a / 2, l1->df) * l1->se;
	double hi0 = l0->est + stats_t_quantile(1 - a / 4, l0->df) * l0->se;
	double hi1 = l1->est + stats_t_quantile(1 - a / 4, l1->df) * l1->se;
	assert_true(fabs(c->lo - fmin(lo0, lo1)) < 1e-12);
	assert_true(fabs(c->hi - fmin(hi0, hi1)) < 1e-12);
	/* Its p is the worst level's (p does not depend on alpha); its units
	 * the fewer of the levels'. */
	const struct decide_cmp *w = l0->est < l1->est ? l0 : l1;
	assert_true(c->p == w->p);
	assert_int_equal(c->units, l0->units < l1->units ? l0->units : l1->units);
	/* The configurations' own intervals are at alpha / (m L). */
	assert_true(fabs(r.level_alpha - 0.0125) < 1e-15);
	assert_true(fabs(l0->alpha - 0.0125) < 1e-15);
	assert_int_equal(r.configs[2].verdict, DECIDE_BETTER);	/* d1 at level 0 */
	assert_int_equal(r.configs[3].verdict, DECIDE_WORSE);	/* d1 at level 1 */
	decide_result_release(&r);
}

/*
 * The planning rule of docs/advisor.md, from the comparison's own figures:
 * the effect n units detect at its alpha with 80 % power, on the 65 %
 * upper bound of the units' spread, t with the trimmed units' df.
 */
static double plan_detectable(const struct decide_cmp *c, size_t n)
{
	double sd = c->se * sqrt((double)c->units) *
		    sqrt(c->df / stats_chi2_quantile(DECIDE_PLAN_SPREAD, c->df));
	double df = (double)n - 2 * floor(DECIDE_TRIM * (double)n) - 1;
	return stats_min_detectable(sd / sqrt((double)n), df, c->alpha, DECIDE_POWER);
}

/*
 * needed_repetitions is the fewest more blocks: with them the larger of the
 * two effects still to show (the estimate away from 0, or the margin away
 * from it) is detectable, with one block fewer it is not.
 */
static void assert_needed_fewest(const struct decide_cmp *c, int needed, double delta)
{
	/* Blocks per unit (boots serving several blocks): a whole number here. */
	size_t per = c->pairs / c->units;
	assert_int_equal(c->pairs, per * c->units);
	assert_true(needed > 0 && needed <= DECIDE_NEEDED_CAP);
	assert_int_equal((size_t)needed % per, 0);
	double a = fabs(c->est), e = fmax(a, log1p(delta) - a);
	size_t n = c->units + (size_t)needed / per;
	assert_true(plan_detectable(c, n) <= e);
	assert_true(plan_detectable(c, n - 1) > e);
}

/* What would settle it: the leader against the baseline, a number that grows with the spread. */
static void test_needed(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.03, 17);
	sw_runs(&s, 1, 0, 5, 108, 0.03, 17);
	sw_runs(&s, 2, 0, 5, 103, 0.03, 17);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_UNDECIDED);
	size_t lead = r.leader;
	assert_int_equal(lead, 1);
	assert_int_equal(r.needed, r.decisions[lead].objective.needed);
	assert_true(r.needed > 0 && r.needed <= DECIDE_NEEDED_CAP);
	assert_true(fabs(r.mde - decide_gain(r.decisions[lead].objective.mde)) < 1e-15);
	assert_needed_fewest(&r.decisions[lead].objective, r.needed, s.set.equivalence);
	int needed = r.needed;
	decide_result_release(&r);
	/* Boots serving 2 blocks each: units of 2 blocks, needed in blocks. */
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0.03, 17);
	sw_runs(&s, 1, 0, 6, 104, 0.03, 17);
	sw_runs(&s, 2, 0, 6, 102, 0.03, 17);
	for (size_t d = 0; d < 3; d++)
		sw_boots(&s, d, 2);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_UNDECIDED);
	assert_int_equal(r.decisions[r.leader].objective.units, 3);
	assert_needed_fewest(&r.decisions[r.leader].objective, r.needed, s.set.equivalence);
	decide_result_release(&r);
	/* Twice the spread (the same draws): more blocks. */
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.06, 17);
	sw_runs(&s, 1, 0, 5, 108, 0.06, 17);
	sw_runs(&s, 2, 0, 5, 103, 0.06, 17);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.needed > needed);
	decide_result_release(&r);
	/* An untestable leader needs what makes it testable: one more block here. */
	one_run(&s);
	sw_runs(&s, 0, 0, 2, 100, 0.01, 16);
	s.runs[2].block = 1;	/* the baseline: blocks 0 and 1 */
	s.nruns = 3;
	s.in.nruns = 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_UNDECIDED);
	assert_int_equal(r.decisions[1].verdict, DECIDE_INSUFFICIENT);
	assert_int_equal(r.needed, 1);
	decide_result_release(&r);
	/* No block in common (the baseline moved to blocks 1 and 2): two blocks of both. */
	s.runs[0].block = 2;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.pairs, 0);
	assert_int_equal(r.decisions[1].verdict, DECIDE_INSUFFICIENT);
	assert_int_equal(r.needed, 2);
	decide_result_release(&r);
}

/*
 * Without a baseline the scores are against the best mean (score 0); a
 * decision with fewer than 2 successful runs cannot be that reference.
 */
static void test_no_baseline_scores(void **state)
{
	(void)state;
	static struct sw s;
	no_baseline(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].score == 0);
	assert_true(fabs(r.decisions[0].score - log(100.0 / 130)) < 0.02);
	assert_true(fabs(r.decisions[2].score - log(110.0 / 130)) < 0.02);
	decide_result_release(&r);
	/* d1 with one run: d2 is the reference. */
	sw_init(&s, 3, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 6);
	sw_runs(&s, 1, 0, 1, 130, 0.01, 6);
	sw_runs(&s, 2, 0, 5, 110, 0.01, 6);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[2].score == 0);
	assert_true(fabs(r.decisions[0].score - log(100.0 / 110)) < 0.02);
	assert_true(isnan(r.decisions[1].score));
	decide_result_release(&r);
	/* The reference is the best mean, not the most data: d0 (+30 %, 2 runs)
	 * over d2 (+25 %, 6 runs). */
	s.nruns = 0;
	sw_runs(&s, 0, 0, 2, 130, 0.001, 6);
	sw_runs(&s, 1, 0, 6, 100, 0.001, 6);
	sw_runs(&s, 2, 0, 6, 125, 0.001, 6);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[0].score == 0);
	assert_true(fabs(r.decisions[2].score - log(125.0 / 130)) < 0.005);
	decide_result_release(&r);
	/* ... nor the least: d0 (+20 %, 2 runs) under d2 (+25 %, 6 runs). */
	s.nruns = 0;
	sw_runs(&s, 0, 0, 2, 120, 0.001, 6);
	sw_runs(&s, 1, 0, 6, 100, 0.001, 6);
	sw_runs(&s, 2, 0, 6, 125, 0.001, 6);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[2].score == 0);
	decide_result_release(&r);
	/* Two runs are enough to be the reference. */
	s.nruns = 0;
	sw_runs(&s, 0, 0, 5, 100, 0.01, 6);
	sw_runs(&s, 1, 0, 2, 130, 0.01, 6);
	sw_runs(&s, 2, 0, 5, 110, 0.01, 6);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].score == 0);
	decide_result_release(&r);
	/* The baseline missing at the second of two levels: 2 runs there first. */
	sw_init(&s, 2, 2, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 6);
	sw_runs(&s, 1, 0, 5, 110, 0.01, 6);
	sw_runs(&s, 1, 1, 5, 110, 0.01, 6);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_false(r.baseline_testable);
	assert_int_equal(r.needed, 2);
	decide_result_release(&r);
}

static int cmp_dist(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * The pooled outlier scale is the median distance of two OK runs' logs of
 * one configuration, over every such pair, over 0.9538725524; the engine
 * selects it without listing the pairs.  Against every pair listed and
 * sorted here, exactly: odd and even pair counts, tied values, a failed
 * run and a configuration of one run (no pairs), up to 40 runs each.
 */
static void test_outlier_scale_pairs(void **state)
{
	(void)state;
	static struct sw s;
	static double d[MAXD * MAXB * MAXB];
	const struct { int runs[4]; bool ties; double cv0; } rows[] = {
		{ { 3, 3, 3, 3 }, false, 0.05 },	/* 12 pairs: even */
		{ { 3, 2, 1, 3 }, false, 0.05 },	/* 7: odd */
		{ { 5, 4, 40, 1 }, true, 0.05 },	/* many equal distances */
		{ { 40, 40, 40, 40 }, false, 0.05 },
		{ { 2, 1, 1, 1 }, true, 0.05 },		/* one pair */
		/* the first configuration much tighter or wider than the others */
		{ { 2, 5, 5, 1 }, false, 0.001 },	/* 17 */
		{ { 3, 4, 4, 1 }, false, 0.001 },	/* 12 */
		{ { 6, 3, 3, 1 }, false, 0.2 },		/* 19 */
		{ { 5, 3, 3, 1 }, false, 0.2 },		/* 14 */
		{ { 4, 4, 4, 4 }, false, 0.1 },		/* 21 */
		{ { 4, 3, 4, 2 }, false, 0.1 },		/* 13 */
		{ { 5, 2, 3, 2 }, false, 0.02 },	/* 13 */
	};
	for (size_t row = 0; row < sizeof(rows) / sizeof(*rows); row++) {
		sw_init(&s, 4, 1, 0, true);
		for (size_t c = 0; c < 4; c++)
			sw_runs(&s, c, 0, rows[row].runs[c], 100, c ? 0.05 : rows[row].cv0, 40 + row);
		if (rows[row].ties)
			for (size_t i = 0; i < s.nruns; i++)
				s.runs[i].value = 100 + (double)(i % 3) * 5;	/* three values */
		if (rows[row].runs[2] > 1)
			sw_run(&s, 2, 0, 0)->status = DECIDE_RUN_FAILED;
		size_t n = 0;
		for (size_t i = 0; i < s.nruns; i++)
			for (size_t j = i + 1; j < s.nruns; j++)
				if (s.runs[i].config == s.runs[j].config &&
				    s.runs[i].status == DECIDE_RUN_OK && s.runs[j].status == DECIDE_RUN_OK)
					d[n++] = fabs(log(s.runs[i].value) - log(s.runs[j].value));
		qsort(d, n, sizeof(*d), cmp_dist);
		double want = (n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2) / 0.9538725524;
		struct decide_result r;
		assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
		if (r.outlier_scale != want)
			fail_msg("row %zu: scale %.17g, the pairs' median %.17g", row,
				 r.outlier_scale, want);
		decide_result_release(&r);
	}
	/* Few distinct values, many equal distances (the median one of them,
	 * 0 included: runs all alike), or all distinct; 1 to 12 runs per
	 * configuration. */
	struct stats_rng rng;
	stats_rng_seed(&rng, 77);
	static const double vals[] = { 100, 100, 103, 110, 121, 150 };
	for (int row = 0; row < 300; row++) {
		sw_init(&s, 4, 1, 0, true);
		uint64_t nv = row % 3 == 0 ? 2 : 6;	/* 100 only, or all of them */
		for (size_t c = 0; c < 4; c++) {
			int k = 1 + (int)(stats_rng_next(&rng) % 12);
			sw_runs(&s, c, 0, k, 100, 0, 1);
			for (size_t i = s.nruns - (size_t)k; i < s.nruns; i++)
				s.runs[i].value = row % 3 == 2 ? 100 * exp(0.05 * stats_rng_normal(&rng))
						  : vals[stats_rng_next(&rng) % nv];
		}
		size_t n = 0;
		for (size_t i = 0; i < s.nruns; i++)
			for (size_t j = i + 1; j < s.nruns; j++)
				if (s.runs[i].config == s.runs[j].config)
					d[n++] = fabs(log(s.runs[i].value) - log(s.runs[j].value));
		if (!n)
			continue;
		qsort(d, n, sizeof(*d), cmp_dist);
		double want = (n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2) / 0.9538725524;
		struct decide_result r;
		assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
		if (r.outlier_scale != want)
			fail_msg("few values, row %d: scale %.17g, the pairs' median %.17g", row,
				 r.outlier_scale, want);
		decide_result_release(&r);
	}
}

/* Outliers: a run 3x off its configuration's others is flagged from 3 runs on; clean runs are not. */
static void test_outliers(void **state)
{
	(void)state;
	static struct sw s;
	/* A look over blocks 0..3 does not judge the run of block 4. */
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 17);
	sw_runs(&s, 1, 0, 5, 100, 0.01, 17);
	sw_run(&s, 1, 0, 4)->value *= 3;
	s.set.blocks = 5;
	struct decide_result look;
	assert_int_equal(decide_compute(&s.in, &s.set, &look), 0);
	assert_int_equal(look.configs[1].noutliers, 1);
	decide_result_release(&look);
	s.set.blocks = 4;
	assert_int_equal(decide_compute(&s.in, &s.set, &look), 0);
	assert_int_equal(look.configs[1].noutliers, 0);
	assert_false(look.runs[9].outlier);
	decide_result_release(&look);
	sw_init(&s, 4, 1, 0, true);
	for (size_t d = 0; d < 4; d++)
		sw_runs(&s, d, 0, 3, 100, 0.05, 17);
	sw_run(&s, 2, 0, 1)->value /= 3;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	size_t flagged = 0;
	for (size_t i = 0; i < s.nruns; i++) {
		flagged += r.runs[i].outlier;
		if (r.runs[i].outlier) {
			assert_int_equal(s.runs[i].config, 2);
			assert_int_equal(s.runs[i].block, 1);
			assert_true(r.runs[i].dev < -4.5);
		}
	}
	assert_int_equal(flagged, 1);
	assert_int_equal(r.configs[2].noutliers, 1);
	assert_true(r.outlier_scale > 0.02 && r.outlier_scale < 0.2);
	decide_result_release(&r);
	/* Two runs: no median to stand on, nothing flagged. */
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 2, 100, 0.05, 17);
	sw_runs(&s, 1, 0, 2, 100, 0.05, 17);
	sw_run(&s, 1, 0, 1)->value /= 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.configs[1].noutliers, 0);
	decide_result_release(&r);
}

/*
 * Variance components, by hand: one configuration, boots {0, 0.2} and
 * {0.1, 0.3} on the log scale: within SS 0.04, df 2; between SS 0.01, df 1;
 * n0 = 2: sd_run = sqrt(0.02), sd_boot = sqrt(max(0, (0.01 - 0.02) / 2)) = 0.
 */
static void test_components(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 1, 1, DECIDE_NONE, true);
	const double y[] = { 0, 0.2, 0.1, 0.3 };
	for (int b = 0; b < 4; b++)
		s.runs[s.nruns++] = (struct decide_run){ .config = 0, .block = b,
			.status = DECIDE_RUN_OK, .value = exp(y[b]), .boot = 1 + b / 2, .gang = NAN };
	s.in.nruns = s.nruns;
	s.in.boot_seconds = 8;
	s.in.run_seconds = 2;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_components *vc = &r.components;
	assert_true(vc->shared && vc->estimable);
	assert_int_equal(vc->boots, 2);
	assert_int_equal(vc->runs, 4);
	assert_true(fabs(vc->sd_run - sqrt(0.02)) < 1e-12);
	assert_true(vc->sd_boot == 0);
	assert_true(fabs(vc->f - 0.5) < 1e-12);
	assert_true(fabs(vc->p - stats_f_upper(0.5, 1, 2)) < 1e-15);
	assert_true(isinf(vc->optimal_runs_per_boot));
	assert_int_equal(vc->advice, DECIDE_ADVICE_MORE_RUNS);
	decide_result_release(&r);
	/* Boots far apart: {0, 0.02}, {0.5, 0.52}: the boot dominates; with boots cheap, more boots. */
	const double z[] = { 0, 0.02, 0.5, 0.52 };
	for (int b = 0; b < 4; b++)
		s.runs[b].value = exp(z[b]);
	s.in.boot_seconds = 1;
	s.in.run_seconds = 10;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	/* within SS 0.0004 (df 2), between SS 0.25 (df 1), n0 2 */
	assert_true(fabs(r.components.sd_run - sqrt(0.0002)) < 1e-12);
	assert_true(fabs(r.components.sd_boot - sqrt((0.25 - 0.0002) / 2)) < 1e-12);
	assert_true(r.components.p < 0.01);
	double k = sqrt(0.1 * 0.0002 / ((0.25 - 0.0002) / 2));
	assert_true(fabs(r.components.optimal_runs_per_boot - k) < 1e-12);
	assert_int_equal(r.components.advice, DECIDE_ADVICE_MORE_BOOTS);
	decide_result_release(&r);
	/* Three boots {0, 0.2}, {0.1, 0.3}, {0.5, 0.6}: within SS 0.045 (df 3),
	 * between SS 0.22333 (df 2), n0 2; F = 0.111667 / 0.015.  Boots 13 times
	 * a run's cost: optimal sqrt(13 * 0.015 / 0.0483333) = 2.009 runs per
	 * boot, as now (2): keep. */
	const double w[] = { 0, 0.2, 0.1, 0.3, 0.5, 0.6 };
	s.nruns = 0;
	for (int b = 0; b < 6; b++)
		s.runs[s.nruns++] = (struct decide_run){ .config = 0, .block = b,
			.status = DECIDE_RUN_OK, .value = exp(w[b]), .boot = 1 + b / 2, .gang = NAN };
	s.in.nruns = s.nruns;
	s.in.boot_seconds = 13;
	s.in.run_seconds = 1;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	vc = &r.components;
	assert_true(vc->estimable);
	assert_int_equal(vc->boots, 3);
	assert_true(vc->runs_per_boot == 2);
	assert_true(fabs(vc->sd_run - sqrt(0.015)) < 1e-12);
	assert_true(fabs(vc->sd_boot - 0.219848432637882) < 1e-12);
	assert_true(fabs(vc->f - 7.444444444444446) < 1e-9);
	assert_true(vc->df1 == 2 && vc->df2 == 3);
	assert_true(fabs(vc->optimal_runs_per_boot - sqrt(13 * 0.015 / (0.22333333333333338 / 2 - 0.015) * 2)) < 1e-9);
	assert_int_equal(vc->advice, DECIDE_ADVICE_KEEP);
	decide_result_release(&r);
	/* Every run its own boot: nothing shared, nothing to separate. */
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].boot = 0;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_false(r.components.shared);
	assert_false(r.components.estimable);
	assert_int_equal(r.components.boots, 6);
	decide_result_release(&r);
}

/*
 * Block effects without a trend are not drift: 6 configurations share one
 * effect per block (no noise to speak of).  Regressing the blocks' means
 * (8 df) gives t = 0.96; counting the 60 runs as 53 df would give
 * t = 2.48, p = 0.016 -- a false drift.  Boots serving 5 blocks each leave
 * 2 units: untested.
 */
static void test_drift_blocks(void **state)
{
	(void)state;
	static const double eff[] = { 0.5, -1.2, 0.3, 1.1, -0.4, 0.9, -0.8, 1.3, 0.2, 1.0 };
	static struct sw s;
	sw_init(&s, 6, 1, 0, true);
	for (size_t d = 0; d < 6; d++)
		sw_runs(&s, d, 0, 10, 100, 0.0001, 19);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].value *= exp(0.03 * eff[s.runs[i].block]);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.drift.tested);
	assert_int_equal(r.drift.n, 60);
	assert_int_equal(r.drift.units, 10);
	assert_true(fabs(r.drift.slope - 0.0027091) < 0.0001);
	assert_true(r.drift.p > 0.3 && r.drift.p < 0.4);
	decide_result_release(&r);
	for (size_t d = 0; d < 6; d++)
		sw_boots(&s, d, 5);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_false(r.drift.tested);
	assert_int_equal(r.drift.units, 2);
	decide_result_release(&r);
}

/*
 * Drift on the fewest units it is tested on (3), by hand: two configurations
 * share block effects (0, 0.01, 0.03) on the log scale; residuals
 * (-0.01333, -0.00333, 0.01667), slope 0.015, residual SS 1/60000, 1 df:
 * se sqrt(1/120000), t = 3 sqrt 3, p = 1 - 2 atan(t) / pi = 0.1210377,
 * interval slope -/+ t(0.975, 1) se.  Then a configuration missing the
 * last block (its mean is over the two it has), no drift at all (p 1,
 * nothing to widen), and 6 blocks in boots of 2 (3 units, x = 0.5, 2.5,
 * 4.5) under an exact 1 % per block.
 */
static void test_drift_by_hand(void **state)
{
	(void)state;
	static const double g[] = { 0, 0.01, 0.03 };
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 3, 100, 0, 1);
	sw_runs(&s, 1, 0, 3, 50, 0, 1);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].value *= exp(g[s.runs[i].block]);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	double se = sqrt(1.0 / 120000);
	assert_true(r.drift.tested);
	assert_int_equal(r.drift.units, 3);
	assert_int_equal(r.drift.n, 6);
	assert_true(fabs(r.drift.slope - 0.015) < 1e-12);
	assert_true(fabs(r.drift.p - 0.121037718323677) < 1e-9);
	assert_true(fabs(r.drift.lo - (0.015 - 12.706204736 * se)) < 1e-8);
	assert_true(fabs(r.drift.hi - (0.015 + 12.706204736 * se)) < 1e-8);
	decide_result_release(&r);
	/* d1 without block 2: d0 residuals as above (0.015 per block), d1's
	 * (-0.005, 0.005) in blocks 0, 1; block means (-0.009167, 0.000833,
	 * 0.016667): slope 0.0129167. */
	sw_run(&s, 1, 0, 2)->status = DECIDE_RUN_FAILED;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.drift.n, 5);
	assert_true(fabs(r.drift.slope - (0.016666666666666667 + 0.009166666666666667) / 2) < 1e-12);
	decide_result_release(&r);
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 3, 100, 0, 1);
	sw_runs(&s, 1, 0, 3, 50, 0, 1);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.drift.tested);
	assert_true(r.drift.slope == 0 && r.drift.p == 1);
	assert_true(r.drift.lo == 0 && r.drift.hi == 0);
	decide_result_release(&r);
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0, 1);
	sw_runs(&s, 1, 0, 6, 50, 0, 1);
	sw_boots(&s, 0, 2);
	sw_boots(&s, 1, 2);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].value *= exp(0.01 * s.runs[i].block);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.drift.tested);
	assert_int_equal(r.drift.units, 3);
	assert_true(fabs(r.drift.slope - 0.01) < 1e-9);
	assert_true(r.drift.p < 1e-6);
	decide_result_release(&r);
}

/* Drift: +1 % per block in every configuration is found; pairing cancels it from the verdicts. */
static void test_drift(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 10, 100, 0.002, 18);
	sw_runs(&s, 1, 0, 10, 100, 0.002, 18);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].value *= exp(0.01 * s.runs[i].block);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.drift.tested);
	assert_int_equal(r.drift.n, 20);
	assert_int_equal(r.drift.units, 10);
	assert_true(fabs(r.drift.slope - 0.01) < 0.001);
	assert_true(r.drift.lo < r.drift.slope && r.drift.slope < r.drift.hi);
	assert_true(r.drift.p < 1e-6);
	assert_int_equal(r.decisions[1].verdict, DECIDE_EQUIVALENT);
	decide_result_release(&r);
}

/* Host references are ranked against the baseline but never the pick nor in the family. */
static void test_host_reference(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 19);
	sw_runs(&s, 1, 0, 5, 110, 0.01, 19);
	sw_runs(&s, 2, 0, 5, 150, 0.01, 19);
	s.opt[2].host_reference = true;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.m, 1);
	assert_int_equal(r.decisions[2].verdict, DECIDE_BETTER);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.best, 1);
	/* Nor compared with the best. */
	assert_true(isnan(r.configs[2].p_best));
	assert_false(r.decisions[2].vs_best.ok);
	decide_result_release(&r);
}

/* Cost decides only among decisions shown equivalent to the top: CPUs, knobs, ganged exits. */
static void test_cost(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 8, 100, 0.002, 20);
	sw_runs(&s, 1, 0, 8, 120, 0.002, 20);
	sw_runs(&s, 2, 0, 8, 120.1, 0.002, 20);
	s.opt[1].host_cpus = 2;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.top, 2);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.ncandidates, 2);
	/* The top it was preferred to is settled, not in contention. */
	assert_int_equal(r.verdict, DECIDE_BETTER);
	assert_int_equal(r.ncontention, 0);
	assert_false(r.decisions[2].in_contention);
	decide_result_release(&r);
	s.opt[1].host_cpus = 4;
	s.opt[2].nondefault_knobs = 1;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 1);
	decide_result_release(&r);
	/* Equal cost: significantly fewer ganged exits, else the better objective. */
	s.opt[2].nondefault_knobs = 0;
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].gang = s.runs[i].config == 1 ? 500 + s.runs[i].block
			       : s.runs[i].config == 2 ? 900 + s.runs[i].block : NAN;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 1);
	decide_result_release(&r);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].gang = NAN;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 2);
	decide_result_release(&r);
	/* +10 % and +20 %: not equivalent, so the cheaper +10 % never wins on cost. */
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 8, 100, 0.002, 20);
	sw_runs(&s, 1, 0, 8, 110, 0.002, 20);
	sw_runs(&s, 2, 0, 8, 120, 0.002, 20);
	s.opt[1].host_cpus = 1;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 2);
	assert_int_equal(r.ncandidates, 1);
	decide_result_release(&r);
	/* Without a baseline the same: cost among those equivalent to the best
	 * only (d0 and d1, cheaper but worse, are never candidates) ... */
	s.in.baseline = DECIDE_NONE;
	s.opt[0].host_cpus = 1;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 2);
	assert_int_equal(r.pick, 2);
	assert_int_equal(r.ncandidates, 1);
	decide_result_release(&r);
	/* ... and the cheaper of two equivalent ones picked. */
	sw_init(&s, 3, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 8, 100, 0.002, 20);
	sw_runs(&s, 1, 0, 8, 120, 0.002, 20);
	sw_runs(&s, 2, 0, 8, 120.1, 0.002, 20);
	s.opt[0].host_cpus = 1;
	s.opt[1].host_cpus = 2;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 2);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.ncandidates, 2);
	decide_result_release(&r);
}

/* Bad input is refused, not read out of bounds. */
static void test_bad_input(void **state)
{
	(void)state;
	static struct sw s;
	clear_winner(&s);
	struct decide_result r;
	s.runs[0].config = 99;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.in.baseline = 7;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.cf[1].level = 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.in.baseline = 3;	/* one past the last decision */
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.cf[1].decision = 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.cf[0].decision = 3;	/* the first configuration too */
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.cf[0].level = 1;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.cf[1].level = 1;	/* one level: 0 only */
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.in.nlevels = 0;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	clear_winner(&s);
	s.runs[2].block = -1;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), -1);
	/* A refused input leaves nothing to present: no pick, no best (not decision 0). */
	assert_true(r.pick == DECIDE_NONE && r.best == DECIDE_NONE && r.top == DECIDE_NONE &&
		    r.leader == DECIDE_NONE);
	assert_false(decide_decisive(&r));
	assert_null(r.decisions);
	struct decide_race_step st;
	clear_winner(&s);
	assert_int_equal(decide_race(&s.in, &s.set, 3, 1, 5, &st), -1);
	assert_int_equal(decide_race(&s.in, &s.set, -1, 3, 5, &st), -1);
	assert_int_equal(decide_race(&s.in, &s.set, 3, 2, 5, &st), 0);	/* 2: the least */
	decide_race_step_release(&st);
	assert_string_equal(decide_verdict_name(DECIDE_FAILING), "failing");
	assert_string_equal(decide_verdict_name(DECIDE_NOT_COMPARED), "not compared");
	assert_string_equal(decide_objective_name(DECIDE_OBJECTIVE_MEAN), "mean");
	assert_string_equal(decide_stop_name(DECIDE_STOP_DECIDED), "decided");
	assert_string_equal(decide_stop_name(DECIDE_GO_ON), "running");
}

/*
 * The distributions' edges the verdicts lean on: the normal quantile's
 * upper tail (the race's and the plan's draws, the power), the t and F
 * tails with small or fractional degrees of freedom, the smallest samples
 * a test or a correlation accepts, and the winsorized spread by hand
 * (1..10, 10 % trimmed: winsorized 2,2,3..9,9, SS 66.5, h 8).
 */
static void test_stats_edges(void **state)
{
	(void)state;
	assert_true(fabs(stats_normal_quantile(0.999) - 3.090232306167813) < 1e-12);
	assert_true(fabs(stats_normal_quantile(0.999999999999) - 7.0344869100478356) < 1e-8);
	assert_true(fabs(stats_normal_quantile(1e-12) + 7.034483825301132) < 1e-8);
	assert_true(fabs(stats_normal_quantile(0.01) + 2.3263478740408408) < 1e-12);
	assert_true(stats_normal_quantile(0) == -INFINITY);
	assert_true(stats_normal_quantile(1) == INFINITY);
	assert_true(isnan(stats_normal_quantile(1.5)));
	assert_true(fabs(stats_t_quantile(0.975, 1) - 12.706204736174698) < 1e-9);
	assert_true(fabs(stats_t_quantile(0.005, 2) + 9.924843200918280) < 1e-9);
	assert_true(stats_t_quantile(0, 5) == -INFINITY);
	assert_true(stats_t_quantile(1, 5) == INFINITY);
	assert_true(isnan(stats_t_quantile(0.5, 0)));
	assert_true(isnan(stats_t_quantile(0.975, -1)));
	assert_true(stats_t_p(0, 5) == 1);
	assert_true(stats_t_p(INFINITY, 5) == 0);
	double tp = stats_t_p(1, 0.5);
	assert_true(tp > 0.5 && tp < 1);
	/* F(1, 2) is t(2) squared: P(F > f) = 1 - sqrt(f / (f + 2)). */
	assert_true(fabs(stats_f_upper(0.5, 1, 2) - 0.5527864045000421) < 1e-12);
	assert_true(stats_f_upper(0, 1, 2) == 1);
	assert_true(isnan(stats_f_upper(0.5, 1, 0)));
	assert_true(isnan(stats_incbeta(0, 1, 0.5)));
	double c = stats_chi2_quantile(0.5, 0.5);
	assert_true(isfinite(c) && c >= 0);
	assert_true(isnan(stats_chi2_quantile(0.5, 0)));
	assert_true(stats_binomial_upper(0, 5, 0.3) == 1);
	assert_true(stats_binomial_upper(6, 5, 0.3) == 0);
	assert_true(fabs(stats_binomial_upper(5, 5, 0.3) - pow(0.3, 5)) < 1e-15);
	const double one[] = { 7 };
	assert_true(stats_median(one, 1) == 7);
	assert_true(isnan(stats_median(one, 0)));
	/* Two observations each: the smallest a test or a correlation takes. */
	const double x[] = { 1, 2 }, y[] = { 3, 5 };
	struct stats_test t;
	stats_welch(x, 2, y, 2, &t);
	assert_true(t.p > 0 && t.p < 1);
	assert_true(fabs(stats_spearman(x, y, 2) - 1) < 1e-15);
	assert_true(isnan(stats_spearman(x, y, 1)));
	const double r[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct stats_location loc;
	assert_int_equal(stats_trimmed_location(r, 10, 0.1, &loc), 0);
	assert_int_equal(loc.trimmed, 1);
	assert_true(fabs(loc.est - 5.5) < 1e-15);
	assert_true(fabs(loc.se - sqrt(66.5 / 56)) < 1e-15);
	assert_true(fabs(loc.df - 7) < 1e-15);
	/* The difference of two: estimates subtract, variances add. */
	const double r2[] = { 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	assert_int_equal(stats_trimmed_difference(r2, 10, r, 10, 0.1, &loc), 0);
	assert_true(fabs(loc.est - 10) < 1e-12);
	assert_true(fabs(loc.se - sqrt(2 * 66.5 / 56)) < 1e-12);
	assert_true(fabs(loc.df - 14) < 1e-12);
	assert_int_equal(loc.trimmed, 2);
}

/* ---- reading stored results ------------------------------------------------ */

static double ops_of(const struct db_results_run *run, void *ctx)
{
	(void)ctx;
	const struct db_results_metric *m = db_results_run_metric(run, "ops");
	return m ? m->value : NAN;
}

/*
 * A stored experiment read into the engine's input: decisions a, b, c at
 * environment levels x and y (c marked the baseline); a raced sweep's
 * eliminations per decision (the latest block of its configurations', the
 * one it lost to by key, none for a failing one); the boot and run costs
 * as the means of the runs that measured them (a boot of 0.5 s counts);
 * run outcomes (failed; ok without a value: none).
 */
static void test_sweep_build(void **state)
{
	(void)state;
	static char *keys[] = { "a-x", "a-y", "b-x", "b-y", "c-x", "c-y" };
	static char *dec[] = { "a", "a", "b", "b", "c", "c" };
	static char *env[] = { "x", "y", "x", "y", "x", "y" };
	static struct db_results_metric m[6][3];
	static struct db_results_run runs[6][2];
	static struct db_results_config cf[6];
	for (size_t i = 0; i < 6; i++) {
		cf[i] = (struct db_results_config){ .id = (int64_t)i + 1, .runs = runs[i], .nruns = 2 };
		cf[i].rec.key = keys[i];
		cf[i].rec.decision = dec[i];
		cf[i].rec.environment = env[i];
		cf[i].rec.vcpus = cf[i].rec.sockets = 4;
		cf[i].rec.dies = cf[i].rec.cores = cf[i].rec.threads = 1;
		cf[i].rec.pinning_policy = "none";
		cf[i].rec.baseline = i >= 4;
		for (int j = 0; j < 2; j++) {
			m[i][0] = (struct db_results_metric){ .name = "ops", .value = 100 + (double)i };
			m[i][1] = (struct db_results_metric){ .name = "boot_seconds",
							      .value = i == 0 ? 0.5 : 1.5 };
			m[i][2] = (struct db_results_metric){ .name = "benchmark_seconds", .value = 2 };
			runs[i][j] = (struct db_results_run){ .repetition = j, .status = "ok",
							      .metrics = m[i], .nmetrics = i < 2 ? 3 : 1 };
		}
	}
	runs[3][1].status = "failed";
	runs[2][1].nmetrics = 0;	/* ok, but no value */
	cf[0].eliminated_block = 4;
	cf[0].eliminated_against = "c-x";
	cf[0].eliminated_p = 0.02;
	cf[1].eliminated_block = 3;
	cf[1].eliminated_against = "c-y";
	cf[1].eliminated_p = 0.01;
	cf[2].eliminated_block = 2;	/* failing: against nothing */
	struct db_results res = { .configs = cf, .nconfigs = 6 };
	struct decide_sweep sw;
	decide_sweep_build(&res, ops_of, NULL, true, NULL, &sw);
	assert_int_equal(sw.in.ndecisions, 3);
	assert_int_equal(sw.in.nlevels, 2);
	assert_string_equal(sw.levels[1], "y");
	assert_int_equal(sw.in.baseline, 2);
	assert_string_equal(sw.baseline_source, "marked");
	assert_int_equal(sw.decisions[0].elim.block, 4);
	assert_int_equal(sw.decisions[0].elim.against, 2);
	assert_true(sw.decisions[0].elim.p == 0.02);
	assert_int_equal(sw.decisions[1].elim.block, 2);
	assert_int_equal(sw.decisions[1].elim.against, DECIDE_NONE);
	assert_int_equal(sw.decisions[2].elim.block, 0);
	assert_true(fabs(sw.in.boot_seconds - 1) < 1e-15);	/* (0.5 * 2 + 1.5 * 2) / 4 */
	assert_true(sw.in.run_seconds == 2);
	assert_int_equal(sw.in.nruns, 12);
	assert_int_equal(sw.runs[5].status, DECIDE_RUN_NONE);
	assert_int_equal(sw.runs[7].status, DECIDE_RUN_FAILED);
	assert_int_equal(sw.runs[6].status, DECIDE_RUN_OK);
	assert_true(sw.runs[6].value == 103 && sw.runs[6].block == 0);
	decide_sweep_release(&sw);
	/* Nothing marked: the host's default shape (one vCPU per socket,
	 * unpinned) is the baseline -- c, pinned "compact", only when pinning
	 * is an environment factor. */
	for (size_t i = 0; i < 6; i++) {
		cf[i].rec.baseline = false;
		cf[i].rec.sockets = i < 2 ? 1 : i < 4 ? 2 : 4;
		cf[i].rec.cores = 4 / cf[i].rec.sockets;
		cf[i].rec.pinning_policy = i < 4 ? "none" : "compact";
	}
	decide_sweep_build(&res, ops_of, NULL, true, NULL, &sw);
	assert_int_equal(sw.in.baseline, DECIDE_NONE);
	decide_sweep_release(&sw);
	static const char *const pin[] = { "pinning" };
	struct decide_roles roles = { pin, 1 };
	decide_sweep_build(&res, ops_of, NULL, true, &roles, &sw);
	assert_int_equal(sw.in.baseline, 2);
	assert_string_equal(sw.baseline_source, "host default shape");
	decide_sweep_release(&sw);
}

/* ---- the race ---------------------------------------------------------------- */

/* A race look over blocks 0..k-1: the eliminations and the stop. */
static void race_at(const struct sw *s, int blocks, int first, int max, struct decide_race_step *st)
{
	assert_int_equal(decide_race(&s->in, &s->set, blocks, first, max, st), 0);
}

static void test_race(void **state)
{
	(void)state;
	static struct sw s;
	struct decide_race_step st;
	/* d1 is 4x the others: at the first test d2, d3 fall against it; the baseline never. */
	sw_init(&s, 4, 1, 0, true);
	sw_runs(&s, 0, 0, 3, 100, 0.005, 21);
	sw_runs(&s, 1, 0, 3, 400, 0.005, 21);
	sw_runs(&s, 2, 0, 3, 200, 0.005, 21);
	sw_runs(&s, 3, 0, 3, 100, 0.005, 21);
	race_at(&s, 2, 3, 10, &st);	/* before the first test: nothing */
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.stop, DECIDE_GO_ON);
	assert_int_equal(st.leader, 1);
	decide_race_step_release(&st);
	race_at(&s, 3, 3, 10, &st);
	assert_int_equal(st.leader, 1);
	assert_int_equal(st.nelims, 2);
	assert_int_equal(st.elims[0].decision, 2);
	assert_int_equal(st.elims[1].decision, 3);
	assert_int_equal(st.elims[0].against, 1);
	assert_true(fabs(st.elims[0].ratio - 0.5) < 0.01);
	assert_true(st.elims[0].p < 0.05);
	assert_int_equal(st.nsurvivors, 2);
	/* d1's lead over the baseline is the verdict's already: decided. */
	assert_int_equal(st.stop, DECIDE_STOP_DECIDED);
	decide_race_step_release(&st);

	/* Equal decisions at CV 5 %: nothing falls at the first test, nothing is decided. */
	sw_init(&s, 4, 1, 0, true);
	for (size_t d = 0; d < 4; d++)
		sw_runs(&s, d, 0, 5, 100, 0.05, 22);
	race_at(&s, 3, 3, 5, &st);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.stop, DECIDE_GO_ON);
	decide_race_step_release(&st);
	race_at(&s, 5, 3, 5, &st);
	assert_int_equal(st.stop, DECIDE_STOP_MAX);
	decide_race_step_release(&st);

	/* d1 +20 % is shown better, but d2 (+13 % on average, +-25 % block to
	 * block) is neither eliminated nor separated from it: the race goes on. */
	static const double noisy[] = { 1.5, 0.9, 1.3, 0.95, 1.1 };
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0, 1);
	sw_runs(&s, 1, 0, 5, 120, 0.001, 1);
	sw_runs(&s, 2, 0, 5, 100, 0, 1);
	for (int b = 0; b < 5; b++)
		sw_run(&s, 2, 0, b)->value *= noisy[b];
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_BETTER);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.ncontention, 1);
	decide_result_release(&r);
	race_at(&s, 5, 3, 10, &st);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.stop, DECIDE_GO_ON);
	decide_race_step_release(&st);

	/* Only the baseline left beside eliminated ones: one survivor. */
	sw_init(&s, 3, 1, 0, true);
	for (size_t d = 0; d < 3; d++)
		sw_runs(&s, d, 0, 4, 100, 0.05, 23);
	s.opt[1].elim = (struct decide_stored_elim){ 3, 0, 0.01 };
	race_at(&s, 4, 3, 10, &st);
	assert_int_equal(st.stop, DECIDE_GO_ON);	/* d2 still races */
	decide_race_step_release(&st);
	s.opt[2].elim = (struct decide_stored_elim){ 4, 0, 0.01 };
	race_at(&s, 4, 3, 10, &st);
	assert_int_equal(st.stop, DECIDE_STOP_SINGLE);
	decide_race_step_release(&st);

	/* A decision that never succeeds is dropped as failing, against nothing. */
	sw_init(&s, 3, 1, 0, true);
	for (size_t d = 0; d < 3; d++)
		sw_runs(&s, d, 0, 6, 100, 0.05, 24);
	for (int b = 0; b < 6; b++)
		sw_fail(&s, 2, 0, b);
	race_at(&s, 6, 3, 10, &st);
	assert_int_equal(st.nelims, 1);
	assert_int_equal(st.elims[0].decision, 2);
	assert_int_equal(st.elims[0].against, DECIDE_NONE);
	assert_true(isnan(st.elims[0].ratio));
	/* Its p: 6 failures in 6 at the allowed rate, scaled from the look's
	 * level (3 racing, 8 looks) to the 5 % a reader compares it with. */
	double pf = stats_binomial_upper(6, 6, s.set.max_failure_rate);
	double want = fmin(1, pf * DECIDE_ALPHA / decide_race_alpha(3, 8));
	assert_true(fabs(st.elims[0].p - want) <= 1e-12 * want);
	decide_result_release(&(struct decide_result){ 0 });
	decide_race_step_release(&st);
}

/*
 * With environment levels a decision falls only when worse at every level
 * (worst objective): +30 % at one level and -5 % at the other is never
 * dropped against a +5 % everywhere, nor the other way round.
 */
static void test_race_levels(void **state)
{
	(void)state;
	static struct sw s;
	struct decide_race_step st;
	levels(&s);
	race_at(&s, 6, 3, 10, &st);
	assert_int_equal(st.nelims, 0);
	decide_race_step_release(&st);
	/* d2 dominated by d1 at both levels: dropped, against d1. */
	sw_init(&s, 3, 2, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0.005, 25);
	sw_runs(&s, 0, 1, 6, 100, 0.005, 25);
	sw_runs(&s, 1, 0, 6, 130, 0.005, 25);
	sw_runs(&s, 1, 1, 6, 120, 0.005, 25);
	sw_runs(&s, 2, 0, 6, 110, 0.005, 25);
	sw_runs(&s, 2, 1, 6, 110, 0.005, 25);
	race_at(&s, 6, 3, 10, &st);
	assert_int_equal(st.nelims, 1);
	assert_int_equal(st.elims[0].decision, 2);
	assert_int_equal(st.elims[0].against, 1);
	/* the ratio at the level where it is closest: 110 / 120 */
	assert_true(fabs(st.elims[0].ratio - 110.0 / 120) < 0.01);
	decide_race_step_release(&st);
	/* The elimination level: alpha over survivors and looks. */
	assert_true(fabs(decide_race_alpha(6, 1) - 0.01) < 1e-15);
	assert_true(fabs(decide_race_alpha(6, 18) - 0.01 / pow(18, 0.8)) < 1e-15);
	assert_true(fabs(decide_race_alpha(1, 1) - 0.05) < 1e-15);
}

/*
 * The race's objective is the verdict's: under `mean` a decision falls when
 * worse on the levels' average (140/80 against 130/130), under `worst` only
 * when worse at every level.  A decision eliminated earlier is not tested
 * again; without a baseline one contender left ends the race.
 */
static void test_race_objectives(void **state)
{
	(void)state;
	static struct sw s;
	struct decide_race_step st;
	sw_init(&s, 3, 2, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0.005, 26);
	sw_runs(&s, 0, 1, 6, 100, 0.005, 26);
	sw_runs(&s, 1, 0, 6, 130, 0.005, 26);
	sw_runs(&s, 1, 1, 6, 130, 0.005, 26);
	sw_runs(&s, 2, 0, 6, 140, 0.005, 26);
	sw_runs(&s, 2, 1, 6, 80, 0.005, 26);
	race_at(&s, 6, 3, 10, &st);
	assert_int_equal(st.nelims, 0);
	decide_race_step_release(&st);
	s.set.objective = DECIDE_OBJECTIVE_MEAN;
	race_at(&s, 6, 3, 10, &st);
	assert_int_equal(st.nelims, 1);
	assert_int_equal(st.elims[0].decision, 2);
	assert_int_equal(st.elims[0].against, 1);
	assert_true(fabs(st.elims[0].ratio - sqrt(140.0 * 80 / (130 * 130))) < 0.01);
	decide_race_step_release(&st);
	/* Stored as eliminated after block 4: the look after block 6 leaves it be. */
	s.opt[2].elim = (struct decide_stored_elim){ 4, 1, 0.001 };
	race_at(&s, 6, 3, 10, &st);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.nsurvivors, 2);
	decide_race_step_release(&st);

	/* No baseline: d0 and d1 stored as eliminated, d2 alone is left. */
	sw_init(&s, 3, 1, DECIDE_NONE, true);
	for (size_t d = 0; d < 3; d++)
		sw_runs(&s, d, 0, 4, 100, 0.05, 27);
	s.opt[0].elim = (struct decide_stored_elim){ 3, 2, 0.01 };
	race_at(&s, 4, 3, 10, &st);
	assert_int_equal(st.stop, DECIDE_GO_ON);
	decide_race_step_release(&st);
	s.opt[1].elim = (struct decide_stored_elim){ 4, 2, 0.01 };
	race_at(&s, 4, 3, 10, &st);
	assert_int_equal(st.stop, DECIDE_STOP_SINGLE);
	decide_race_step_release(&st);
}

/*
 * Runs without spread (a deterministic benchmark): a decision exactly
 * equal to another has p = 1 against it and is never eliminated by it;
 * one exactly below it falls with p = 0; more blocks are never asked for
 * a difference that zero spread already shows.
 */
static void test_zero_spread(void **state)
{
	(void)state;
	static struct sw s;
	struct decide_race_step st;
	sw_init(&s, 4, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0, 28);
	sw_runs(&s, 1, 0, 5, 120, 0, 28);
	sw_runs(&s, 2, 0, 5, 120, 0, 28);
	sw_runs(&s, 3, 0, 5, 100, 0, 28);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[3].objective.p == 1);
	assert_int_equal(r.decisions[3].verdict, DECIDE_EQUIVALENT);
	assert_true(r.decisions[1].objective.p == 0);
	assert_int_equal(r.decisions[1].verdict, DECIDE_BETTER);
	assert_true(r.decisions[2].equivalent_to_best);
	assert_int_equal(r.needed, 0);
	decide_result_release(&r);
	race_at(&s, 5, 3, 10, &st);
	assert_int_equal(st.leader, 1);
	assert_int_equal(st.nelims, 1);	/* d3 (= the baseline, below d1); d2 ties d1 */
	assert_int_equal(st.elims[0].decision, 3);
	assert_true(st.elims[0].p == 0);
	decide_race_step_release(&st);
}

/* Where the spread leaves a gain of 1 % at CV 20 % beyond any plan: "more than 100". */
static void test_needed_cap(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.2, 2);
	sw_runs(&s, 1, 0, 5, 101, 0.2, 2);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_UNDECIDED);
	assert_int_equal(r.needed, DECIDE_NEEDED_CAP + 1);
	decide_result_release(&r);
}

/* plan's estimate: the full design's count, and fewer expected when configurations differ. */
static void test_expected_runs(void **state)
{
	(void)state;
	size_t max;
	double e = decide_race_expected_runs(6, 1, 1, 3, 12, 0.02, 42, 6, &max);
	assert_int_equal(max, 84);
	assert_true(e < 84 && e > 6 * 3 + 3);
	assert_true(decide_race_expected_runs(6, 1, 1, 3, 12, 0.02, 42, 6, &max) == e);
	assert_true(decide_race_expected_runs(1, 2, 0, 3, 20, 0.02, 42, 6, &max) == 40);
	assert_true(decide_race_expected_runs(4, 1, 0, 5, 5, 0.02, 42, 6, &max) == 20);
	assert_true(decide_race_expected_runs(4, 1, 0, 3, 1, 0.02, 42, 6, &max) == 4);
	assert_int_equal(max, 4);
	/* Every simulated race runs every decision up to its first test, one
	 * simulation as well as six. */
	for (int nsim = 1; nsim <= 6; nsim += 5) {
		double e2 = decide_race_expected_runs(2, 1, 0, 3, 12, 0.02, 42, nsim, &max);
		assert_true(e2 >= 2 * 3 && e2 <= 24);
		double e6 = decide_race_expected_runs(6, 2, 0, 4, 12, 0.02, 42, nsim, &max);
		assert_true(e6 >= 12 * 4 && e6 <= 144);
	}
	/* No simulation asked for: the full design. */
	assert_true(decide_race_expected_runs(6, 1, 1, 3, 12, 0.02, 42, 0, &max) == 84);
	/* A host reference runs in every block the race runs: same draws, one more run each. */
	double e0 = decide_race_expected_runs(6, 1, 0, 3, 12, 0.02, 42, 6, &max);
	double e1 = decide_race_expected_runs(6, 1, 1, 3, 12, 0.02, 42, 6, &max);
	assert_true(e1 - e0 >= 3 && e1 - e0 <= 12);
}

/* ---- edges of the rules: found by mutation testing (make mutate) -------------- */

/* Released results and race steps are empty, not dangling: nothing to free twice. */
static void test_release(void **state)
{
	(void)state;
	static struct sw s;
	clear_winner(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	decide_result_release(&r);
	assert_true(!r.configs && !r.decisions && !r.runs && !r.contention && !r.unsettled);
	assert_true(r.nconfigs == 0 && r.ndecisions == 0 && r.ncontention == 0);
	struct decide_race_step st;
	race_at(&s, 3, 2, 5, &st);
	assert_true(st.nelims > 0);
	decide_race_step_release(&st);
	assert_true(st.elims == NULL && st.nelims == 0 && st.nsurvivors == 0);
	assert_int_equal(st.leader, DECIDE_NONE);
}

/*
 * The engine reads the runs it is given and not one more: the caller's
 * array may go on.  After d1 and d2 (equivalent, d1 with fewer ganged
 * exits) comes a run of d1 with a huge gang count and value -- in no
 * block, then in block 0 -- that nothing may count.
 */
static void test_runs_end(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 8, 100, 0.002, 20);
	sw_runs(&s, 1, 0, 8, 120, 0.002, 20);
	sw_runs(&s, 2, 0, 8, 120.1, 0.002, 20);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].gang = s.runs[i].config == 1 ? 500 + s.runs[i].block
			       : s.runs[i].config == 2 ? 900 + s.runs[i].block : NAN;
	for (int block = -1; block <= 0; block++) {
		s.runs[s.nruns] = (struct decide_run){ .config = 1, .block = block,
			.status = DECIDE_RUN_OK, .value = 1e12, .gang = 1e12 };
		struct decide_result r;
		assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
		assert_int_equal(r.pick, 1);
		assert_int_equal(r.configs[1].n_ok, 8);
		assert_int_equal(r.configs[1].noutliers, 0);
		decide_result_release(&r);
	}
}

/* The failure rules hold for the first configuration as for any other (the baseline is d1). */
static void test_first_config_failing(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 1, true);
	sw_runs(&s, 0, 0, 8, 120, 0.01, 4);
	sw_runs(&s, 1, 0, 8, 100, 0.01, 4);
	for (int b = 0; b < 3; b++)
		sw_fail(&s, 0, 0, b);	/* 3 of 8: above the default 20 % */
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.configs[0].failing);
	/* 3 of 8 against none: Fisher p = C(8,3) / C(16,3) = 0.1, not shown more often. */
	assert_true(fabs(r.configs[0].failures_p - 0.1) < 1e-12);
	assert_false(r.configs[0].more_failures);
	assert_int_equal(r.configs[0].verdict, DECIDE_FAILING);
	assert_int_equal(r.decisions[0].verdict, DECIDE_FAILING);
	assert_false(r.configs[1].failing);
	decide_result_release(&r);
}

/*
 * Nothing testable, no baseline: the tentative pick is the best mean log
 * value, the first configuration's too, and with it alone successful it
 * is still a pick (one more run each needed).
 */
static void test_untestable_first(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 1, 130, 0, 1);
	sw_runs(&s, 1, 0, 1, 100, 0, 1);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.verdict, DECIDE_INSUFFICIENT);
	assert_int_equal(r.pick, 0);
	assert_int_equal(r.needed, 1);
	decide_result_release(&r);
	sw_fail(&s, 1, 0, 0);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 0);
	assert_int_equal(r.needed, 1);
	decide_result_release(&r);
	/* Means over each configuration's own runs: d1's two runs of 120 at
	 * level 0 (its single run of 50 at level 1 keeps it untestable) mean
	 * log 120, below d0's log 130; d0 ran nothing at level 1. */
	sw_init(&s, 2, 2, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 1, 130, 0, 1);
	sw_runs(&s, 1, 0, 2, 120, 0, 1);
	sw_runs(&s, 1, 1, 1, 50, 0, 1);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, DECIDE_NONE);
	assert_int_equal(r.pick, 0);
	decide_result_release(&r);
}

/*
 * Far units are set aside farthest first also when the units' median is
 * away from 0: log ratios near 0.3 and three far ones, 1.1 (0.8 away,
 * first in block order), 1.3 (1.0) and -0.6 (0.9); room for two: 1.3 and
 * -0.6 go, the mean of the other 8 is 3.2 / 8.
 */
static void test_far_units_median(void **state)
{
	(void)state;
	static const double d[] = { 1.1, 0.28, 1.3, 0.29, -0.6, 0.30, 0.31, 0.32, 0.30, 0.30 };
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 10, 100, 0, 1);
	sw_runs(&s, 1, 0, 10, 100, 0, 1);
	for (int b = 0; b < 10; b++)
		sw_run(&s, 1, 0, b)->value *= exp(d[b]);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_int_equal(c->set_aside, 2);
	assert_int_equal(c->trimmed, 0);
	assert_true(fabs(c->est - 3.2 / 8) < 1e-12);
	decide_result_release(&r);
}

/* Two better decisions with the very same runs: the earlier in input order is the top and the pick. */
static void test_top_tie(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0.01, 3);
	sw_runs(&s, 1, 0, 6, 120, 0.01, 3);
	sw_runs(&s, 2, 0, 6, 120, 0.01, 3);
	for (int b = 0; b < 6; b++)
		sw_run(&s, 2, 0, b)->value = sw_run(&s, 1, 0, b)->value;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].score == r.decisions[2].score);
	assert_int_equal(r.decisions[2].verdict, DECIDE_BETTER);
	assert_int_equal(r.top, 1);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.ncandidates, 2);
	decide_result_release(&r);
}

/* A configuration not compared (the baseline's own, the first) has an empty comparison. */
static void test_not_compared_empty(void **state)
{
	(void)state;
	static struct sw s;
	clear_winner(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.configs[0].vs_baseline;
	assert_int_equal(r.configs[0].verdict, DECIDE_NOT_COMPARED);
	assert_false(c->ok);
	assert_true(isnan(c->est) && isnan(c->lo) && isnan(c->p) && isnan(c->mde));
	assert_int_equal(c->needed, -1);
	assert_int_equal(c->pairs, 0);
	decide_result_release(&r);
}

/* Without a baseline the cheaper of two equivalent ones is picked, the first decision too. */
static void test_first_cheaper(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 8, 120, 0.002, 20);
	sw_runs(&s, 1, 0, 8, 100, 0.002, 20);
	sw_runs(&s, 2, 0, 8, 120.1, 0.002, 20);
	s.opt[0].host_cpus = 1;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 2);
	assert_true(r.decisions[0].equivalent_to_best);
	assert_int_equal(r.pick, 0);
	assert_int_equal(r.ncandidates, 2);
	decide_result_release(&r);
}

/*
 * Against the best, the family is every testable decision but the best
 * (the baseline is not tested, host references never count): d2 and d3
 * here, so each configuration's p is adjusted times 2.
 */
static void test_best_family(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 5, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.02, 1);
	sw_runs(&s, 1, 0, 5, 130, 0.02, 1);
	sw_runs(&s, 2, 0, 5, 120, 0.02, 1);
	sw_runs(&s, 3, 0, 5, 125, 0.02, 1);
	sw_runs(&s, 4, 0, 5, 500, 0.02, 1);
	s.opt[4].host_reference = true;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 1);
	for (size_t c = 2; c <= 3; c++) {
		assert_true(r.configs[c].p_best > 0 && r.configs[c].p_best < 0.5);
		assert_true(r.configs[c].p_best_adj == 2 * r.configs[c].p_best);
	}
	decide_result_release(&r);
}

/* The worst objective is untestable when any level is, the first one too. */
static void test_worst_first_level_untestable(void **state)
{
	(void)state;
	static struct sw s;
	levels(&s);
	for (int b = 1; b < 6; b++)
		sw_run(&s, 1, 0, b)->status = DECIDE_RUN_NONE;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_false(r.decisions[1].objective.ok);
	assert_false(r.decisions[1].testable);
	assert_int_equal(r.decisions[1].verdict, DECIDE_INSUFFICIENT);
	decide_result_release(&r);
}

/*
 * Two levels with exactly the same estimate: d1's log ratios {0, L} at
 * level 0 (2 blocks) and {0, 0, L, L} at level 1 (4 blocks), L = log 4;
 * both estimates L / 2.  The worst objective keeps the first such level:
 * t = 1 with 1 df there, p = 1 - 2 atan(1) / pi = 0.5 (at level 1 it
 * would be 0.5 - 1 / pi, t = sqrt 3 with 3 df).
 */
static void test_worst_tie(void **state)
{
	(void)state;
	static struct sw s;
	static const double d1[2][4] = { { 1, 4 }, { 1, 1, 4, 4 } };
	sw_init(&s, 2, 2, 0, true);
	for (size_t l = 0; l < 2; l++)
		for (int b = 0; b < (l ? 4 : 2); b++) {
			s.runs[s.nruns++] = (struct decide_run){ .config = l, .block = b,
				.status = DECIDE_RUN_OK, .value = 1, .gang = NAN };
			s.runs[s.nruns++] = (struct decide_run){ .config = 2 + l, .block = b,
				.status = DECIDE_RUN_OK, .value = d1[l][b], .gang = NAN };
		}
	s.in.nruns = s.nruns;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_true(c->ok);
	assert_true(c->est == log(4) / 2);
	assert_true(fabs(c->p - 0.5) < 1e-12);
	assert_true(fabs(r.configs[3].vs_baseline.p - (0.5 - 1 / M_PI)) < 1e-12);
	decide_result_release(&r);
}

/*
 * What settles a worst objective: the most any level needs, a level
 * already settled (d1 +30 % at level 0) needing none; in a look that
 * wants verdicts only, unknown (-1).  d1's +2 % at level 1 under 6 %
 * spread leaves it undecided.
 */
static void test_worst_needed(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 2, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0.005, 30);
	sw_runs(&s, 0, 1, 6, 100, 0.005, 30);
	sw_runs(&s, 1, 0, 6, 130, 0.005, 30);
	sw_runs(&s, 1, 1, 6, 102, 0.06, 30);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.configs[2].verdict, DECIDE_BETTER);
	assert_int_equal(r.decisions[1].verdict, DECIDE_UNDECIDED);
	int needed = r.decisions[1].objective.needed;
	assert_true(needed > 0 && needed <= DECIDE_NEEDED_CAP + 1);
	decide_result_release(&r);
	s.set.verdicts_only = true;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].verdict, DECIDE_UNDECIDED);
	assert_int_equal(r.decisions[1].objective.needed, -1);
	decide_result_release(&r);
}

/* The worst objectives' difference: its p is the largest of the levels' (each a paired test). */
static void test_span_p(void **state)
{
	(void)state;
	static struct sw s;
	levels(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 2);
	const struct decide_cmp *c = &r.decisions[1].vs_best;
	assert_true(c->ok);
	assert_true(c->p == fmax(r.configs[2].p_best, r.configs[3].p_best));
	assert_true(c->p < 1);
	decide_result_release(&r);
}

/*
 * The verdict rule on the interval [lo, hi] (log scale) and the margin
 * delta, at its boundaries: better needs lo above 0, worse hi below 0,
 * equivalent both inside (-delta, delta) as gains; no interval, nothing.
 */
static void test_verdict_rule(void **state)
{
	(void)state;
	const struct { bool ok; double lo, hi, delta; enum decide_verdict v; } rows[] = {
		{ true, 0.01, 0.05, 0.10, DECIDE_EQUIVALENT },
		{ true, -0.01, 0.01, 0.02, DECIDE_EQUIVALENT },
		{ true, 0.01, 0.05, 0.02, DECIDE_BETTER },
		{ true, 0, 0.05, 0.02, DECIDE_UNDECIDED },	/* lo at 0: not better */
		{ true, 0, 0, 0, DECIDE_UNDECIDED },		/* no margin: 0 is neither */
		{ true, -0.05, 0, 0.02, DECIDE_UNDECIDED },	/* hi at 0: not worse */
		{ true, -0.05, -0.01, 0.02, DECIDE_WORSE },
		{ true, -0.5, 0.1, 0, DECIDE_UNDECIDED },	/* lo's gain at -delta: not inside */
		{ false, 0.01, 0.05, 0.02, DECIDE_INSUFFICIENT },
		{ true, NAN, 0.05, 0.02, DECIDE_INSUFFICIENT },
		{ true, 0.01, NAN, 0.02, DECIDE_INSUFFICIENT },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		struct decide_cmp c = { .ok = rows[i].ok, .lo = rows[i].lo, .hi = rows[i].hi,
					.est = 0.02, .se = 0.01, .df = 5 };
		/* delta 0 with lo -0.5 stands for the margin exactly at lo's loss */
		double delta = rows[i].lo == -0.5 ? -expm1(-0.5) : rows[i].delta;
		enum decide_verdict v = decide_verdict_of(&c, delta);
		if (v != rows[i].v)
			fail_msg("row %zu: %s, expected %s", i, decide_verdict_name(v),
				 decide_verdict_name(rows[i].v));
	}
}

/*
 * needed_repetitions never says more than "more than the cap", also when
 * a unit is 1.5 blocks (boots serving several blocks) and the units at
 * the cap round up past it; the cap itself is reached in the sweep.
 */
static void test_needed_cap_units(void **state)
{
	(void)state;
	struct decide_cmp c = { .ok = true, .units = 10, .pairs = 15, .se = 0.02, .df = 9 };
	bool cap = false, below = false;
	for (int i = 0; i <= 1500; i++) {
		c.est = 2e-5 * i;
		decide_cmp_at(&c, 0.05);
		assert_int_equal(decide_verdict_of(&c, 0.02), DECIDE_UNDECIDED);
		int n = decide_needed(&c, 0.02);
		if (n < 0 || n > DECIDE_NEEDED_CAP + 1)
			fail_msg("est %g: needed %d", c.est, n);
		cap |= n == DECIDE_NEEDED_CAP + 1;
		below |= n > 0 && n <= DECIDE_NEEDED_CAP;
	}
	assert_true(cap && below);
}

/*
 * A boot shared by the baseline's runs of blocks 0 and 1 makes them one
 * unit, the baseline being any configuration (d1 here, configuration 1).
 */
static void test_baseline_boots(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 1, true);
	sw_runs(&s, 0, 0, 5, 110, 0.01, 5);
	sw_runs(&s, 1, 0, 5, 100, 0.01, 5);
	sw_run(&s, 1, 0, 0)->boot = 7;
	sw_run(&s, 1, 0, 1)->boot = 7;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[0].objective.pairs, 5);
	assert_int_equal(r.decisions[0].objective.units, 4);
	assert_int_equal(r.configs[1].nboots, 4);
	decide_result_release(&r);
}

/* Runs without a boot are a boot each: never one with a recorded boot (boot 1 here). */
static void test_boot_ids(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 5);
	sw_runs(&s, 1, 0, 5, 110, 0.01, 5);
	sw_run(&s, 0, 0, 1)->boot = 1;
	sw_run(&s, 0, 0, 3)->boot = 2;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.configs[0].nboots, 5);
	assert_int_equal(r.configs[1].nboots, 5);
	decide_result_release(&r);
}

/*
 * Drift by hand over units of unequal size with a run missing: d0's
 * blocks 0 and 1 share a guest, d1's blocks 3 and 4; d1 has no block 5.
 * Units {0,1} {2} {3,4} {5}: each configuration's mean removed, the
 * residuals averaged per block and then per unit, the units' means
 * regressed on their mean block (2 df: P(|T| > t) = 1 - t / sqrt(2 + t^2),
 * t(0.975, 2) = 4.302652729911275).
 */
static void test_drift_units(void **state)
{
	(void)state;
	static const double y0[6] = { 0.00, 0.02, 0.01, 0.05, 0.04, 0.08 };
	static const double y1[5] = { 0.10, 0.13, 0.09, 0.12, 0.16 };
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	for (int b = 0; b < 6; b++) {
		s.runs[s.nruns++] = (struct decide_run){ .config = 0, .block = b,
			.status = DECIDE_RUN_OK, .value = 100 * exp(y0[b]),
			.boot = b < 2 ? 50 : 60 + b, .gang = NAN };
		if (b < 5)
			s.runs[s.nruns++] = (struct decide_run){ .config = 1, .block = b,
				.status = DECIDE_RUN_OK, .value = 100 * exp(y1[b]),
				.boot = b == 3 || b == 4 ? 70 : 80 + b, .gang = NAN };
	}
	s.in.nruns = s.nruns;
	double m0 = 0, m1 = 0, e[6];
	for (int b = 0; b < 6; b++)
		m0 += y0[b] / 6;
	for (int b = 0; b < 5; b++)
		m1 += y1[b] / 5;
	for (int b = 0; b < 6; b++)
		e[b] = b < 5 ? (y0[b] - m0 + y1[b] - m1) / 2 : y0[b] - m0;
	const double ux[4] = { 0.5, 2, 3.5, 5 };
	const double uy[4] = { (e[0] + e[1]) / 2, e[2], (e[3] + e[4]) / 2, e[5] };
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
	for (int u = 0; u < 4; u++) {
		mx += ux[u] / 4;
		my += uy[u] / 4;
	}
	for (int u = 0; u < 4; u++) {
		sxx += (ux[u] - mx) * (ux[u] - mx);
		sxy += (ux[u] - mx) * (uy[u] - my);
		syy += (uy[u] - my) * (uy[u] - my);
	}
	double slope = sxy / sxx, se = sqrt((syy - slope * sxy) / 2 / sxx), t = fabs(slope / se);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_drift *dr = &r.drift;
	assert_true(dr->tested);
	assert_int_equal(dr->units, 4);
	assert_int_equal(dr->n, 11);
	assert_true(fabs(dr->slope - slope) < 1e-12);
	assert_true(fabs(dr->p - (1 - t / sqrt(2 + t * t))) < 1e-9);
	assert_true(fabs(dr->lo - (slope - 4.302652729911275 * se)) < 1e-9);
	assert_true(fabs(dr->hi - (slope + 4.302652729911275 * se)) < 1e-9);
	decide_result_release(&r);
}

/*
 * n stored configurations, each its own decision "k<i>" at level "x",
 * one successful run of 100 ops, 4 vCPUs unpinned: tests set the rest.
 */
struct stored {
	char keys[16][24];
	struct db_results_metric m[16];
	struct db_results_run runs[16];
	struct db_results_config cf[16];
	struct db_results res;
};

static void stored_init(struct stored *st, size_t n)
{
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < n; i++) {
		snprintf(st->keys[i], sizeof(st->keys[i]), "k%zu", i);
		st->cf[i] = (struct db_results_config){ .id = (int64_t)i + 1, .runs = &st->runs[i],
							.nruns = 1 };
		st->cf[i].rec.key = st->cf[i].rec.decision = st->keys[i];
		st->cf[i].rec.environment = "x";
		st->cf[i].rec.vcpus = st->cf[i].rec.sockets = 4;
		st->cf[i].rec.dies = st->cf[i].rec.cores = st->cf[i].rec.threads = 1;
		st->cf[i].rec.pinning_policy = "none";
		st->m[i] = (struct db_results_metric){ .name = "ops", .value = 100 };
		st->runs[i] = (struct db_results_run){ .status = "ok", .metrics = &st->m[i],
						       .nmetrics = 1 };
	}
	st->res = (struct db_results){ .configs = st->cf, .nconfigs = n };
}

/*
 * A configuration's decision knobs away from their defaults (its cost),
 * from a stored sweep: the host's recorded default first, else the knob
 * table's kernel default, the value "default", the table's spellings, an
 * unknown knob compared as lower-case text (its first 63 characters, as
 * stored), and an unknown default counted as not default.
 */
static void test_knob_defaults(void **state)
{
	(void)state;
	static char long_upper[71], long_lower[71];
	memset(long_upper, 'A', 70);
	memset(long_lower, 'a', 70);
	static const struct {
		const char *name, *value, *host_default;
		int nondefault;
	} rows[] = {
		{ "subcores_per_core", "1", NULL, 0 },	/* the kernel default */
		{ "subcores_per_core", "2", NULL, 1 },
		{ "subcores_per_core", "4", "4", 0 },	/* the host's default wins */
		{ "subcores_per_core", "1", "4", 1 },
		{ "ksm", "on", "1", 0 },		/* a spelling of 1 */
		{ "ksm", "0", NULL, 1 },		/* no default known */
		{ "thp", "default", NULL, 0 },
		{ "vendor.knob", "Fast", "fast", 0 },	/* unknown: text, any case */
		{ "vendor.knob", "fast", "slow", 1 },
		{ "vendor.knob", "fast", NULL, 1 },
		{ "vendor.knob", long_upper, long_lower, 0 },
	};
	enum { N = sizeof(rows) / sizeof(*rows) };
	static struct config_setting knob[N], dflt[N];
	static struct stored st;
	stored_init(&st, N);
	struct db_results_config *cf = st.cf;
	for (size_t i = 0; i < N; i++) {
		knob[i] = (struct config_setting){ (char *)rows[i].name, (char *)rows[i].value };
		cf[i].rec.knobs = &knob[i];
		cf[i].rec.nknobs = 1;
		if (rows[i].host_default) {
			dflt[i] = (struct config_setting){ (char *)rows[i].name,
							   (char *)rows[i].host_default };
			cf[i].rec.host_defaults = &dflt[i];
			cf[i].rec.nhost_defaults = 1;
		}
	}
	struct db_results res = st.res;
	struct decide_sweep sw;
	decide_sweep_build(&res, ops_of, NULL, true, NULL, &sw);
	assert_int_equal(sw.in.ndecisions, N);
	decide_sweep_release(&sw);
	/* More knobs than any table has (a damaged store): the first 32 count. */
	static struct config_setting many[40];
	static char names[40][8];
	for (size_t i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "x.k%zu", i);
		many[i] = (struct config_setting){ names[i], "on" };
	}
	cf[N - 1].rec.knobs = many;
	cf[N - 1].rec.nknobs = 40;
	cf[N - 1].rec.nhost_defaults = 0;
	decide_sweep_build(&res, ops_of, NULL, true, NULL, &sw);
	for (size_t d = 0; d < N; d++)
		if (!strcmp(sw.keys[d], st.keys[N - 1]))
			assert_int_equal(sw.decisions[d].nondefault_knobs, 32);
	decide_sweep_release(&sw);
	cf[N - 1].rec.knobs = &knob[N - 1];
	cf[N - 1].rec.nknobs = 1;
	cf[N - 1].rec.nhost_defaults = 1;
	decide_sweep_build(&res, ops_of, NULL, true, NULL, &sw);
	for (size_t d = 0; d < N; d++) {
		size_t i = (size_t)atoi(sw.keys[d] + 1);
		if (sw.decisions[d].nondefault_knobs != rows[i].nondefault)
			fail_msg("%s=%.20s (host default %.20s): %d non-default, expected %d",
				 rows[i].name, rows[i].value,
				 rows[i].host_default ? rows[i].host_default : "-",
				 sw.decisions[d].nondefault_knobs, rows[i].nondefault);
	}
	decide_sweep_release(&sw);
}

/*
 * plan's expected runs, replayed by hand: the simulated races it averages
 * (decision d's runs log-normal about 100 e^(-0.10 d / (D - 1)), sigma
 * 0.05, drawn block by block in configuration order from one stream
 * seeded once; the baseline the middle decision; a look after every block;
 * eliminated decisions run no more; a race ends at its stop; a host
 * reference's run in every block run), each look by decide_race.
 */
static double replay_expected(size_t nd, size_t nl, size_t nref, int first, int max, uint64_t seed,
			      int nsim)
{
	static struct sw s;
	sw_init(&s, nd, nl, nd / 2, true);
	struct stats_rng rng;
	stats_rng_seed(&rng, seed);
	double total = 0;
	for (int k = 0; k < nsim; k++) {
		size_t spent = 0;
		s.nruns = 0;
		for (size_t d = 0; d < nd; d++)
			s.opt[d].elim = (struct decide_stored_elim){ 0 };
		for (int b = 0; b < max; b++) {
			spent += nref;
			for (size_t c = 0; c < nd * nl; c++) {
				size_t d = c / nl;
				if (s.opt[d].elim.block)
					continue;
				double mu = -0.10 * (double)d / (double)(nd - 1);
				s.runs[s.nruns++] = (struct decide_run){ .config = c, .block = b,
					.status = DECIDE_RUN_OK, .gang = NAN,
					.value = 100 * exp(mu + 0.05 * stats_rng_normal(&rng)) };
				spent++;
			}
			s.in.nruns = s.nruns;
			struct decide_race_step st;
			race_at(&s, b + 1, first, max, &st);
			for (size_t i = 0; i < st.nelims; i++)
				s.opt[st.elims[i].decision].elim = (struct decide_stored_elim){
					b + 1, st.elims[i].against, st.elims[i].p };
			enum decide_stop stop = st.stop;
			decide_race_step_release(&st);
			if (stop != DECIDE_GO_ON)
				break;
		}
		total += (double)spent;
	}
	return total / nsim;
}

static void test_expected_runs_replayed(void **state)
{
	(void)state;
	const struct { size_t nd, nl, nref; int first, max; uint64_t seed; int nsim; } rows[] = {
		{ 4, 1, 1, 3, 12, 7, 4 },
		{ 5, 2, 0, 3, 10, 8, 4 },
		{ 3, 1, 0, 2, 15, 9, 4 },
		{ 4, 1, 0, 3, 12, 10, 1 },	/* one simulation is one race */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		size_t max;
		double e = decide_race_expected_runs(rows[i].nd, rows[i].nl, rows[i].nref,
						     rows[i].first, rows[i].max, 0.02, rows[i].seed,
						     rows[i].nsim, &max);
		double want = replay_expected(rows[i].nd, rows[i].nl, rows[i].nref, rows[i].first,
					      rows[i].max, rows[i].seed, rows[i].nsim);
		if (e != want)
			fail_msg("row %zu: expected runs %.17g, replayed %.17g", i, e, want);
		assert_true(e < (double)max);
	}
}

/*
 * p adjusted for the family is a probability: capped at 1.  d1's log
 * ratios to the baseline are +-0.05 in turn (estimate 0, p near 1) in a
 * family of 2 (d2 is testable too).
 */
static void test_p_adj_cap(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 4, 100, 0.01, 2);
	sw_runs(&s, 1, 0, 4, 100, 0, 2);
	sw_runs(&s, 2, 0, 4, 120, 0.01, 2);
	for (int b = 0; b < 4; b++)
		sw_run(&s, 1, 0, b)->value = sw_run(&s, 0, 0, b)->value * exp(b % 2 ? -0.05 : 0.05);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.m, 2);
	assert_true(r.decisions[1].objective.p > 0.5);
	assert_true(r.decisions[1].p_adj == 1);
	decide_result_release(&r);
}

/*
 * Without a baseline the reference is the best mean over all of a
 * decision's runs (d1: 120, 120 over d0: 130, 100), and nothing is
 * adjusted (a family of 1, alpha 0.05).
 */
static void test_reference_mean(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 2, 100, 0, 1);
	sw_runs(&s, 1, 0, 2, 120, 0, 1);
	sw_run(&s, 0, 0, 0)->value = 130;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].score == 0);
	assert_true(fabs(r.decisions[0].score - (log(130) + log(100)) / 2 + log(120)) < 1e-12);
	assert_int_equal(r.m, 1);
	assert_true(r.objective_alpha == DECIDE_ALPHA);
	decide_result_release(&r);
}

/*
 * Against the best with no other testable decision (d2 ran once): a
 * family of 1, nothing adjusted.
 */
static void test_best_family_empty(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.02, 1);
	sw_runs(&s, 1, 0, 5, 120, 0.02, 1);
	sw_runs(&s, 2, 0, 1, 110, 0.02, 1);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 1);
	assert_false(r.decisions[2].testable);
	assert_true(r.decisions[2].vs_best.alpha == DECIDE_ALPHA);
	assert_true(r.configs[0].p_best < 0.5);
	assert_true(r.configs[0].p_best_adj == r.configs[0].p_best);
	decide_result_release(&r);
}

/* Nothing testable, two configurations as good: the earlier one is the tentative pick. */
static void test_untestable_tie(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 1, 130, 0, 1);
	sw_runs(&s, 1, 0, 1, 130, 0, 1);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 0);
	decide_result_release(&r);
}

/*
 * Host CPUs of a stored configuration (its cost): an explicit pinning's
 * distinct CPUs, else its vCPUs (pinning CPUs recorded under another
 * policy do not count).
 */
static void test_host_cpus(void **state)
{
	(void)state;
	static char *wide[] = { "0-7", "8-15" }, *overlap[] = { "0-3", "2,8" }, *same[] = { "0-1", "1" };
	static const struct { const char *policy; char **cpus; size_t n; int vcpus, host; } rows[] = {
		{ "compact", wide, 2, 4, 4 },
		{ "explicit", overlap, 2, 2, 5 },
		{ "explicit", same, 2, 2, 2 },
		{ "explicit", NULL, 0, 3, 3 },
		{ "none", NULL, 0, 6, 6 },
	};
	enum { N = sizeof(rows) / sizeof(*rows) };
	static struct stored st;
	stored_init(&st, N);
	for (size_t i = 0; i < N; i++) {
		st.cf[i].rec.vcpus = st.cf[i].rec.sockets = rows[i].vcpus;
		st.cf[i].rec.pinning_policy = (char *)rows[i].policy;
		st.cf[i].rec.pinning_cpus = rows[i].cpus;
		st.cf[i].rec.npinning_cpus = rows[i].n;
	}
	struct db_results res = st.res;
	struct decide_sweep sw;
	decide_sweep_build(&res, ops_of, NULL, true, NULL, &sw);
	for (size_t d = 0; d < N; d++) {
		size_t i = (size_t)atoi(sw.keys[d] + 1);
		if (sw.decisions[d].host_cpus != rows[i].host)
			fail_msg("row %zu: %d host CPUs, expected %d", i, sw.decisions[d].host_cpus,
				 rows[i].host);
	}
	decide_sweep_release(&sw);
	const char *const sets[] = { "0-3", "2,8", "16" };
	assert_int_equal(decide_cpuset_count(sets, 3), 6);
	assert_int_equal(decide_cpuset_count(sets, 1), 4);
	const char *const bad[] = { "0-3", "x" };
	assert_int_equal(decide_cpuset_count(bad, 2), -1);
}

/*
 * A run without a boot is a boot of its own, never one a run recorded:
 * the baseline's block 0 (no boot) and d1's block 1 (boot 1) stay apart.
 */
static void test_own_boots(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 5);
	sw_runs(&s, 1, 0, 5, 110, 0.01, 5);
	sw_run(&s, 1, 0, 1)->boot = 1;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.units, 5);
	decide_result_release(&r);
}

/*
 * Units joined through a chain of boots: d0's blocks 0-1 (boot 10) and
 * 2-3 (boot 20), d1's blocks 1-2 (boot 30): one unit {0,1,2,3}, then
 * {4} and {5}, for the drift as for the comparisons.
 */
static void test_boot_chain(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0.01, 6);
	sw_runs(&s, 1, 0, 6, 110, 0.01, 6);
	for (int b = 0; b < 6; b++) {
		sw_run(&s, 0, 0, b)->boot = b < 2 ? 10 : b < 4 ? 20 : 40 + b;
		sw_run(&s, 1, 0, b)->boot = b == 1 || b == 2 ? 30 : 50 + b;
	}
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.units, 3);
	assert_true(r.drift.tested);
	assert_int_equal(r.drift.units, 3);
	decide_result_release(&r);
}

/*
 * A unit where only the baseline failed is d1's best outcome (+inf), trimmed
 * with the worst: d1's boots serving 2 blocks, log ratios {0.1 (baseline
 * failed in block 0), 0.02, 0.04, 0.06} by unit: the middle two, 0.05.
 */
static void test_baseline_failed_unit(void **state)
{
	(void)state;
	static const double diff[] = { 0.1, 0.1, 0.02, 0.02, 0.04, 0.04, 0.06, 0.06 };
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 8, 100, 0, 1);
	sw_runs(&s, 1, 0, 8, 100, 0, 1);
	for (int b = 0; b < 8; b++) {
		sw_run(&s, 1, 0, b)->value *= exp(diff[b]);
		sw_run(&s, 1, 0, b)->boot = 1 + b / 2;
	}
	sw_fail(&s, 0, 0, 0);
	s.set.max_failure_rate = 0.5;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_int_equal(c->units, 4);
	assert_int_equal(c->trimmed, 1);
	assert_true(fabs(c->est - 0.05) < 1e-12);
	decide_result_release(&r);
}

/*
 * No spread among most units (MAD 0): no unit is far, none set aside --
 * 10 blocks, 7 log ratios of exactly 0.05, then 0.04, 0.06 and 0.5.
 */
static void test_far_units_no_spread(void **state)
{
	(void)state;
	static const double d[] = { 0.05, 0.04, 0.05, 0.05, 0.5, 0.05, 0.06, 0.05, 0.05, 0.05 };
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 10, 100, 0, 1);
	sw_runs(&s, 1, 0, 10, 100, 0, 1);
	for (int b = 0; b < 10; b++)
		sw_run(&s, 1, 0, b)->value = 100 * exp(d[b]);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].objective.set_aside, 0);
	assert_int_equal(r.decisions[1].objective.units, 10);
	decide_result_release(&r);
}

/*
 * Only successful runs of configurations with 3 or more are judged: a
 * failed run's value (far off), and a configuration of 2 runs, get no
 * deviation and no flag.
 */
/*
 * Outlier scales per configuration: a configuration at CV 20 % among
 * three at CV 1 % (10 runs each) has none of its runs flagged (the pooled
 * scale, about 1.4 %, put most of them beyond 4.5); a run 3x slower at CV
 * 10 % is still flagged against its own scale.
 */
static void test_outlier_own_scale(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 4, 1, 0, true);
	for (size_t d = 0; d < 4; d++)
		sw_runs(&s, d, 0, 10, 100, d == 3 ? 0.2 : 0.01, 18);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.configs[3].noutliers, 0);
	assert_true(r.configs[3].outlier_scale > 5 * r.outlier_scale);
	assert_true(r.configs[0].outlier_scale == r.outlier_scale);	/* tighter: the pooled */
	decide_result_release(&r);
	sw_init(&s, 4, 1, 0, true);
	for (size_t d = 0; d < 4; d++)
		sw_runs(&s, d, 0, 10, 100, d == 3 ? 0.1 : 0.01, 18);
	sw_run(&s, 3, 0, 6)->value /= 3;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.configs[3].noutliers, 1);
	for (size_t i = 0; i < s.nruns; i++)
		assert_int_equal(r.runs[i].outlier, s.runs[i].config == 3 && s.runs[i].block == 6);
	decide_result_release(&r);
}

/*
 * The worst objective's bias: three levels with the same estimate (+10 %)
 * and standard error: the smallest of three such estimates lies E[min of
 * 3 N(0,1)] = -0.8463 se below the truth on average; one level: none.
 */
static void test_worst_bias(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 3, 0, true);
	for (size_t l = 0; l < 3; l++)
		for (int b = 0; b < 6; b++) {
			double e = b % 2 ? -0.02 : 0.02;
			s.runs[s.nruns++] = (struct decide_run){ .config = l, .block = b,
				.status = DECIDE_RUN_OK, .value = 100, .gang = NAN };
			s.runs[s.nruns++] = (struct decide_run){ .config = 3 + l, .block = b,
				.status = DECIDE_RUN_OK, .value = 110 * exp(e), .gang = NAN };
		}
	s.in.nruns = s.nruns;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_true(fabs(c->est - log(1.1)) < 1e-12);
	assert_true(c->se > 0);
	assert_true(fabs(c->bias / c->se + 0.8463) < 0.002);
	decide_result_release(&r);
	s.set.objective = DECIDE_OBJECTIVE_MEAN;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].objective.bias == 0);
	decide_result_release(&r);
}

static void test_outliers_judged(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 6, 100, 0.01, 7);
	sw_runs(&s, 1, 0, 6, 110, 0.01, 7);
	sw_runs(&s, 2, 0, 2, 120, 0.01, 7);
	sw_run(&s, 1, 0, 3)->value = 1000;
	sw_fail(&s, 1, 0, 3);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.outlier_scale > 0);
	size_t measured = 0;
	for (size_t i = 0; i < s.nruns; i++) {
		bool judged = s.runs[i].config != 2 && s.runs[i].status == DECIDE_RUN_OK;
		if (!judged && (r.runs[i].dev != 0 || r.runs[i].outlier))
			fail_msg("run %zu (configuration %zu): dev %g, not judged", i,
				 s.runs[i].config, r.runs[i].dev);
		assert_false(r.runs[i].outlier);
		measured += judged && r.runs[i].dev != 0;
	}
	assert_true(measured >= 8);	/* the others of 6 + 5 judged: not their own medians */
	assert_int_equal(r.configs[1].noutliers, 0);
	decide_result_release(&r);
}

/*
 * Variance components from one boot that served two runs: within-boot df
 * 1 is enough.  Log values 0.0, 0.1 (boot 1) and 0.3 (boot 2).
 */
static void test_components_one_shared(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 1, 1, DECIDE_NONE, true);
	const double y[] = { 0, 0.1, 0.3 };
	for (int b = 0; b < 3; b++)
		s.runs[s.nruns++] = (struct decide_run){ .config = 0, .block = b,
			.status = DECIDE_RUN_OK, .value = exp(y[b]), .boot = b < 2 ? 1 : 2, .gang = NAN };
	s.in.nruns = s.nruns;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_components *vc = &r.components;
	/* Boot means 0.05 (2 runs), 0.3; grand mean 0.4 / 3: within SS 0.005 (df 1),
	 * between SS 2 (0.05 - 0.4/3)^2 + (0.3 - 0.4/3)^2 (df 1). */
	double g = 0.4 / 3, ssb = 2 * (0.05 - g) * (0.05 - g) + (0.3 - g) * (0.3 - g);
	assert_true(vc->shared && vc->estimable);
	assert_true(vc->df1 == 1 && vc->df2 == 1);
	assert_true(fabs(vc->sd_run - sqrt(0.005)) < 1e-12);
	assert_true(fabs(vc->f - ssb / 0.005) < 1e-9);
	decide_result_release(&r);
}

/*
 * Undecided with a baseline: the leader is the contender with the best
 * score, one without a score (d1, one run) only while none has one.
 */
static void test_leader(void **state)
{
	(void)state;
	static struct sw s;
	two_in_contention(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.ncontention, 2);
	assert_int_equal(r.leader, r.decisions[1].score > r.decisions[2].score ? 1 : 2);
	decide_result_release(&r);
	s.nruns = 0;
	sw_runs(&s, 0, 0, 5, 100, 0.20, 2);
	sw_runs(&s, 1, 0, 1, 90, 0.20, 2);
	sw_runs(&s, 2, 0, 5, 95, 0.20, 2);
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[1].verdict, DECIDE_INSUFFICIENT);
	assert_true(r.decisions[1].in_contention && r.decisions[2].in_contention);
	assert_int_equal(r.leader, 2);
	decide_result_release(&r);
}

/*
 * What each contender needs against the pick: its difference to the pick
 * at alpha / (the pick's family), the same comparison as against the best
 * when the pick is the best; -1 for those not in contention.  d1 is +20 %
 * and better; d2 and d3 (+10 %, +5 % under 20 % spread) are in contention.
 */
static void test_needed_vs_pick(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 4, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.005, 5);
	sw_runs(&s, 1, 0, 5, 120, 0.005, 5);
	sw_runs(&s, 2, 0, 5, 110, 0.2, 5);
	sw_runs(&s, 3, 0, 5, 105, 0.2, 5);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.best, 1);
	assert_int_equal(r.ncontention, 2);
	for (size_t d = 2; d <= 3; d++) {
		assert_true(r.decisions[d].in_contention);
		assert_true(r.decisions[d].needed_vs_pick > 0);
		assert_int_equal(r.decisions[d].needed_vs_pick, r.decisions[d].vs_best.needed);
	}
	assert_int_equal(r.decisions[0].needed_vs_pick, -1);
	assert_int_equal(r.decisions[1].needed_vs_pick, -1);
	decide_result_release(&r);
}

/*
 * Without a baseline, a failing decision is never in contention, however
 * close to the best its successful runs are; settled, nothing is needed.
 * Its configuration's verdict is failing, the others' not compared; with
 * an untestable baseline (one run) all are insufficient.
 */
static void test_no_baseline_failing(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, DECIDE_NONE, true);
	sw_runs(&s, 0, 0, 8, 130, 0.01, 6);
	sw_runs(&s, 1, 0, 8, 128, 0.2, 6);
	sw_runs(&s, 2, 0, 8, 100, 0.01, 6);
	for (int b = 0; b < 3; b++)
		sw_fail(&s, 1, 0, b);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 0);
	assert_true(r.decisions[1].failing);
	assert_false(r.decisions[1].worse_than_best || r.decisions[1].equivalent_to_best);
	assert_int_equal(r.ncontention, 0);
	assert_int_equal(r.verdict, DECIDE_BETTER);
	assert_int_equal(r.pick, 0);
	assert_int_equal(r.needed, 0);
	assert_int_equal(r.configs[1].verdict, DECIDE_FAILING);
	assert_int_equal(r.configs[2].verdict, DECIDE_NOT_COMPARED);
	decide_result_release(&r);
	s.in.baseline = 2;
	for (int b = 1; b < 8; b++)
		sw_run(&s, 2, 0, b)->status = DECIDE_RUN_NONE;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_false(r.baseline_testable);
	assert_int_equal(r.configs[1].verdict, DECIDE_INSUFFICIENT);
	assert_int_equal(r.configs[0].verdict, DECIDE_INSUFFICIENT);
	decide_result_release(&r);
}

/* A successful run without a positive value is no outcome, not a failure: its block is left out. */
static void test_value_zero(void **state)
{
	(void)state;
	static struct sw s;
	clear_winner(&s);
	sw_run(&s, 1, 0, 2)->value = 0;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_int_equal(c->pairs, 4);
	assert_int_equal(c->trimmed, 0);
	assert_int_equal(r.decisions[1].n_failed, 0);
	assert_int_equal(r.configs[1].n_none, 1);
	decide_result_release(&r);
}

/*
 * Drift units are joined by the boots of the runs there are, whichever
 * configuration's: d0 has no block 3, d1's blocks 3 and 4 share a guest:
 * units {0} {1} {2} {3,4}.
 */
static void test_drift_units_missing(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 8);
	sw_runs(&s, 1, 0, 5, 110, 0.01, 8);
	sw_run(&s, 0, 0, 3)->status = DECIDE_RUN_NONE;
	sw_run(&s, 1, 0, 3)->boot = 9;
	sw_run(&s, 1, 0, 4)->boot = 9;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.drift.tested);
	assert_int_equal(r.drift.units, 4);
	decide_result_release(&r);
	/* d0 without block 1 instead: the same units. */
	sw_run(&s, 0, 0, 3)->status = DECIDE_RUN_OK;
	sw_run(&s, 0, 0, 1)->status = DECIDE_RUN_NONE;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.drift.units, 4);
	decide_result_release(&r);
}

/*
 * Units whatever order the boots join them in: d0's block 1 and d1's
 * block 0 share boot 20, d0's block 3 and d1's block 1 boot 30: {0,1,3},
 * {2}, {4}.
 */
static void test_drift_boot_order(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 9);
	sw_runs(&s, 1, 0, 5, 110, 0.01, 9);
	for (int b = 0; b < 5; b++) {
		sw_run(&s, 0, 0, b)->boot = b == 1 ? 20 : b == 3 ? 30 : 40 + b;
		sw_run(&s, 1, 0, b)->boot = b == 0 ? 20 : b == 1 ? 30 : 50 + b;
	}
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.drift.tested);
	assert_int_equal(r.drift.units, 3);
	decide_result_release(&r);
}

/*
 * A contender only as good as the top (the same estimate, exactly: d1's
 * log ratios L, L, L, L, d2's 0, 2L, 0, 2L, L = log 2) is not over it: the
 * top, shown better, stays the recommendation.
 */
static void test_contender_level_with_top(void **state)
{
	(void)state;
	static struct sw s;
	static const double d2[] = { 1, 4, 1, 4 };
	sw_init(&s, 3, 1, 0, true);
	for (int b = 0; b < 4; b++) {
		s.runs[s.nruns++] = (struct decide_run){ .config = 0, .block = b,
			.status = DECIDE_RUN_OK, .value = 1, .gang = NAN };
		s.runs[s.nruns++] = (struct decide_run){ .config = 1, .block = b,
			.status = DECIDE_RUN_OK, .value = 2, .gang = NAN };
		s.runs[s.nruns++] = (struct decide_run){ .config = 2, .block = b,
			.status = DECIDE_RUN_OK, .value = d2[b], .gang = NAN };
	}
	s.in.nruns = s.nruns;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].score == r.decisions[2].score);
	assert_int_equal(r.decisions[1].verdict, DECIDE_BETTER);
	assert_int_equal(r.decisions[2].verdict, DECIDE_UNDECIDED);
	assert_true(r.decisions[2].in_contention);
	assert_int_equal(r.verdict, DECIDE_BETTER);
	assert_int_equal(r.pick, 1);
	assert_int_equal(r.leader, 1);
	decide_result_release(&r);
}

/*
 * Fewer ganged exits decide between equivalent ones when Welch's test on
 * the runs' counts says so, on exactly those runs: d1 100..107, d2
 * 110..117 per second (t = -8.7, 14 df).
 */
static void test_gang_close(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 0, true);
	sw_runs(&s, 0, 0, 8, 100, 0.002, 20);
	sw_runs(&s, 1, 0, 8, 120, 0.002, 20);
	sw_runs(&s, 2, 0, 8, 120.1, 0.002, 20);
	for (size_t i = 0; i < s.nruns; i++)
		s.runs[i].gang = s.runs[i].config == 1 ? 100 + s.runs[i].block
			       : s.runs[i].config == 2 ? 110 + s.runs[i].block : NAN;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.ncandidates, 2);
	assert_int_equal(r.pick, 1);
	decide_result_release(&r);
	/* Their counts the other way round: d2. */
	for (size_t i = 0; i < s.nruns; i++)
		if (s.runs[i].config)
			s.runs[i].gang = 217 - s.runs[i].gang;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.pick, 2);
	decide_result_release(&r);
}

/*
 * Two levels: the difference of worst objectives is the difference of
 * the scores; each configuration's p against the best is adjusted for
 * the family (m = 1: d1) times the levels (2).
 */
static void test_span_scores(void **state)
{
	(void)state;
	static struct sw s;
	levels(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.best, 2);
	assert_true(r.decisions[1].vs_best.est == r.decisions[1].score - r.decisions[2].score);
	for (size_t c = 2; c <= 3; c++)
		assert_true(r.configs[c].p_best_adj == fmin(1, 2 * r.configs[c].p_best));
	assert_true(r.configs[2].p_best_adj < 1);
	decide_result_release(&r);
}

/*
 * More failures than a baseline configuration that has no outcome to
 * compare (no run succeeded or failed at that level): nothing is shown
 * (p = 1), and the level's lone failure blocks nothing.
 */
static void test_more_failures_no_rate(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 2, 0, true);
	sw_runs(&s, 0, 0, 5, 100, 0.01, 3);
	sw_runs(&s, 0, 1, 5, 100, 0.01, 3);
	sw_runs(&s, 1, 0, 5, 110, 0.01, 3);
	sw_runs(&s, 1, 1, 5, 110, 0.01, 3);
	for (int b = 0; b < 5; b++)
		sw_run(&s, 0, 1, b)->status = DECIDE_RUN_NONE;
	sw_fail(&s, 1, 1, 2);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(isnan(r.configs[1].failure_rate));
	assert_true(isnan(r.configs[3].failures_p));	/* the baseline is not testable */
	assert_false(r.configs[3].more_failures);
	assert_false(r.configs[2].more_failures);
	assert_false(r.decisions[1].more_failures);
	decide_result_release(&r);
}

/* Undecided, two contenders with the very same runs: the earlier leads. */
static void test_leader_tie(void **state)
{
	(void)state;
	static struct sw s;
	two_in_contention(&s);
	for (int b = 0; b < 5; b++)
		sw_run(&s, 2, 0, b)->value = sw_run(&s, 1, 0, b)->value;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.decisions[1].score == r.decisions[2].score);
	assert_int_equal(r.ncontention, 2);
	assert_int_equal(r.leader, 1);
	decide_result_release(&r);
}

/*
 * With a baseline that is not the first decision, the first decision is a
 * candidate like any: d0, equivalent to the top (d1) and cheaper, is picked.
 */
static void test_first_candidate(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 3, 1, 2, true);
	sw_runs(&s, 0, 0, 8, 120, 0.002, 20);
	sw_runs(&s, 1, 0, 8, 120.1, 0.002, 20);
	sw_runs(&s, 2, 0, 8, 100, 0.002, 20);
	s.opt[0].host_cpus = 2;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.top, 1);
	assert_int_equal(r.ncandidates, 2);
	assert_int_equal(r.pick, 0);
	decide_result_release(&r);
}

/* Nothing beats the baseline, settled: no more blocks needed. */
static void test_nothing_beats_needed(void **state)
{
	(void)state;
	static struct sw s;
	worse(&s);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_true(r.nothing_beats_baseline);
	assert_int_equal(r.needed, 0);
	decide_result_release(&r);
}

/*
 * An untestable comparison still has a point estimate: the mean of its
 * finite units.  d1 failed in 2 of 4 blocks (g = 2 of 4: untestable),
 * log ratios 0.1 and 0.3 in the others: 0.2.
 */
static void test_untestable_estimate(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 2, 1, 0, true);
	sw_runs(&s, 0, 0, 4, 100, 0, 1);
	sw_runs(&s, 1, 0, 4, 100, 0, 1);
	sw_run(&s, 1, 0, 1)->value *= exp(0.1);
	sw_run(&s, 1, 0, 3)->value *= exp(0.3);
	sw_fail(&s, 1, 0, 0);
	sw_fail(&s, 1, 0, 2);
	s.set.max_failure_rate = 1;
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	const struct decide_cmp *c = &r.decisions[1].objective;
	assert_false(c->ok);
	assert_int_equal(c->units, 4);
	assert_true(fabs(c->est - 0.2) < 1e-12);
	decide_result_release(&r);
}

/* One-sided p of "worse" (est < 0): the t tail, or all or nothing without spread. */
static void test_p_worse(void **state)
{
	(void)state;
	const struct { bool ok; double est, se, df, p; } rows[] = {
		{ true, 0.1, 0, 4, 1 },
		{ true, -0.1, 0, 4, 0 },
		{ true, 0, 0, 4, 1 },
		{ true, -0.1, 0.1, 1, 0.25 },	/* Cauchy: 1/2 + atan(-1)/pi */
		{ true, 0.1, 0.1, 2, 0.5 + 1 / (2 * sqrt(3)) },	/* 2 df: 1/2 + t / (2 sqrt(2 + t^2)) */
		{ false, -0.1, 0.1, 4, NAN },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		struct decide_cmp c = { .ok = rows[i].ok, .est = rows[i].est, .se = rows[i].se,
					.df = rows[i].df };
		double p = decide_cmp_p_worse(&c);
		if (isnan(rows[i].p) ? !isnan(p) : !(fabs(p - rows[i].p) < 1e-12))
			fail_msg("row %zu: p %.17g, expected %.17g", i, p, rows[i].p);
	}
}

/*
 * needed_repetitions can be exactly the cap (100 blocks, a block a unit),
 * more than it is CAP + 1.
 */
static void test_needed_at_cap(void **state)
{
	(void)state;
	struct decide_cmp c = { .ok = true, .units = 10, .pairs = 10, .se = 0.02, .df = 9 };
	bool at = false, over = false;
	for (int i = 0; i <= 3000; i++) {
		c.est = 1e-5 * i;
		decide_cmp_at(&c, 0.05);
		int n = decide_needed(&c, 0.02);
		assert_true(n >= 0 && n <= DECIDE_NEEDED_CAP + 1);
		at |= n == DECIDE_NEEDED_CAP;
		over |= n == DECIDE_NEEDED_CAP + 1;
	}
	assert_true(at && over);
}

/*
 * A decision shown better is a candidate beside the top when their
 * difference is shown equivalent at DECIDE_ALPHA / m, m the top's family
 * (d2 and d3 here): d2's paired log ratios to d1 (worked out here) fit
 * inside +-2 % at alpha 0.1 but not at 0.025, so d2 is not a candidate.
 */
static void test_candidate_alpha(void **state)
{
	(void)state;
	static struct sw s;
	sw_init(&s, 4, 1, 0, true);
	sw_runs(&s, 0, 0, 8, 100, 0.002, 13);
	sw_runs(&s, 1, 0, 8, 120, 0.002, 13);
	sw_runs(&s, 2, 0, 8, 120.5, 0.015, 13);
	sw_runs(&s, 3, 0, 8, 110, 0.002, 13);
	double x[8], mean = 0, ss = 0;
	for (int b = 0; b < 8; b++) {
		x[b] = log(sw_run(&s, 2, 0, b)->value) - log(sw_run(&s, 1, 0, b)->value);
		mean += x[b] / 8;
	}
	for (int b = 0; b < 8; b++)
		ss += (x[b] - mean) * (x[b] - mean);
	double se = sqrt(ss / 7 / 8);
	/* t(1 - 0.025/2, 7) = 2.8412, t(1 - 0.1/2, 7) = 1.8946 (tables) */
	bool at_025 = expm1(mean - 2.841244 * se) > -0.02 && expm1(mean + 2.841244 * se) < 0.02;
	bool at_10 = expm1(mean - 1.894579 * se) > -0.02 && expm1(mean + 1.894579 * se) < 0.02;
	assert_false(at_025);
	assert_true(at_10);
	struct decide_result r;
	assert_int_equal(decide_compute(&s.in, &s.set, &r), 0);
	assert_int_equal(r.decisions[2].verdict, DECIDE_BETTER);
	assert_true(r.decisions[3].testable);
	assert_int_equal(r.top, 1);
	assert_int_equal(r.ncandidates, 1);
	assert_int_equal(r.pick, 1);
	decide_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_fails_at_level),
		cmocka_unit_test(test_fisher),
		cmocka_unit_test(test_worst_bias),
		cmocka_unit_test(test_outlier_own_scale),
		cmocka_unit_test(test_baseline_vs_best),
		cmocka_unit_test(test_no_baseline_ties),
		cmocka_unit_test(test_clear_winner_numbers),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_failures_trimmed),
		cmocka_unit_test(test_nothing_ran),
		cmocka_unit_test(test_untestable_vs_best),
		cmocka_unit_test(test_sweep_build),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_failed_units),
		cmocka_unit_test(test_contender_over_top),
		cmocka_unit_test(test_far_units),
		cmocka_unit_test(test_worst_interval),
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_no_baseline_scores),
		cmocka_unit_test(test_outlier_scale_pairs),
		cmocka_unit_test(test_outliers),
		cmocka_unit_test(test_components),
		cmocka_unit_test(test_drift),
		cmocka_unit_test(test_drift_by_hand),
		cmocka_unit_test(test_drift_blocks),
		cmocka_unit_test(test_host_reference),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_stats_edges),
		cmocka_unit_test(test_race),
		cmocka_unit_test(test_race_levels),
		cmocka_unit_test(test_race_objectives),
		cmocka_unit_test(test_zero_spread),
		cmocka_unit_test(test_needed_cap),
		cmocka_unit_test(test_expected_runs),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_runs_end),
		cmocka_unit_test(test_first_config_failing),
		cmocka_unit_test(test_untestable_first),
		cmocka_unit_test(test_not_compared_empty),
		cmocka_unit_test(test_first_cheaper),
		cmocka_unit_test(test_best_family),
		cmocka_unit_test(test_worst_first_level_untestable),
		cmocka_unit_test(test_worst_tie),
		cmocka_unit_test(test_worst_needed),
		cmocka_unit_test(test_span_p),
		cmocka_unit_test(test_verdict_rule),
		cmocka_unit_test(test_needed_cap_units),
		cmocka_unit_test(test_baseline_boots),
		cmocka_unit_test(test_boot_ids),
		cmocka_unit_test(test_drift_units),
		cmocka_unit_test(test_knob_defaults),
		cmocka_unit_test(test_expected_runs_replayed),
		cmocka_unit_test(test_far_units_median),
		cmocka_unit_test(test_top_tie),
		cmocka_unit_test(test_p_adj_cap),
		cmocka_unit_test(test_reference_mean),
		cmocka_unit_test(test_best_family_empty),
		cmocka_unit_test(test_untestable_tie),
		cmocka_unit_test(test_host_cpus),
		cmocka_unit_test(test_own_boots),
		cmocka_unit_test(test_boot_chain),
		cmocka_unit_test(test_baseline_failed_unit),
		cmocka_unit_test(test_far_units_no_spread),
		cmocka_unit_test(test_outliers_judged),
		cmocka_unit_test(test_components_one_shared),
		cmocka_unit_test(test_leader),
		cmocka_unit_test(test_needed_vs_pick),
		cmocka_unit_test(test_no_baseline_failing),
		cmocka_unit_test(test_value_zero),
		cmocka_unit_test(test_drift_units_missing),
		cmocka_unit_test(test_drift_boot_order),
		cmocka_unit_test(test_contender_level_with_top),
		cmocka_unit_test(test_gang_close),
		cmocka_unit_test(test_span_scores),
		cmocka_unit_test(test_more_failures_no_rate),
		cmocka_unit_test(test_leader_tie),
		cmocka_unit_test(test_first_candidate),
		cmocka_unit_test(test_nothing_beats_needed),
		cmocka_unit_test(test_untestable_estimate),
		cmocka_unit_test(test_p_worse),
		cmocka_unit_test(test_needed_at_cap),
		cmocka_unit_test(test_candidate_alpha),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
