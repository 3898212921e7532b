/*
 * bench-decisions: the error rates of the advisor's verdicts, measured on
 * simulated sweeps of known truth (tests/bench/sim.h) fed through the real
 * rank_compute, each printed next to its target (docs/advisor.md).  Exits 1
 * when a target is missed.  Run by `make bench-advisor`.
 *
 *   null          6 equal configurations, n = 5, CV 5 %: recommendation
 *                 `better` in <= 5 % of sweeps (a false win);
 *   decoy         a cheaper +10 % configuration beside a +20 % one, CV 5 %,
 *                 n = 5: the +10 % one recommended in <= 2 %;
 *   coverage      the reported ratio interval holds the true ratio in
 *                 >= 93 % of comparisons at n = 5;
 *   outliers      runs flagged on clean normal data <= 1 % at n = 3..10;
 *   underpowered  true +10 %, CV 10 %, n = 3, 6 configurations: `undecided`
 *                 (never `equivalent`) in >= 90 %.
 * Lines without a target (the harder decoy at n = 3, ties, coverage at
 * n = 3) show what the issue measured before these rules.
 */
#include <math.h>
#include <stdio.h>

#include "sim.h"

#define SWEEPS 4000

static struct ta_err err;

static void ranked(struct sim *s, struct rank_result *r)
{
	if (rank_compute(&s->res, NULL, r, &err) < 0) {
		fprintf(stderr, "rank_compute: %s\n", err.msg);
		exit(2);
	}
}

/* Six configurations of mean 100, CV 5 %, n = 5, the first the baseline. */
static bool null_rate(void)
{
	struct sim s;
	sim_init(&s, 6, 5);
	for (size_t i = 0; i < 6; i++)
		sim_config(&s, i, 4, 100, 0.05, i == 0);
	struct stats_rng rng;
	stats_rng_seed(&rng, 101);
	size_t better = 0, equivalent = 0, any_better = 0;
	for (int k = 0; k < SWEEPS; k++) {
		sim_draw(&s, 5, &rng);
		struct rank_result r;
		ranked(&s, &r);
		better += r.verdict == RANK_BETTER;
		equivalent += r.verdict == RANK_EQUIVALENT;
		for (size_t i = 0; i < r.nentries; i++)
			any_better += r.entries[i].verdict == RANK_BETTER;
		rank_result_release(&r);
	}
	sim_free(&s);
	printf("null: 6 equal configurations, n = 5, CV 5 %%, %d sweeps\n", SWEEPS);
	bool ok = sim_report("recommendation verdict better (a false win)",
			     (double)better / SWEEPS, "<=", 0.05);
	printf("  (comparisons with verdict better: %.2f %%; sweeps shown equivalent: %.2f %%)\n",
	       100.0 * (double)any_better / (5.0 * SWEEPS), 100.0 * (double)equivalent / SWEEPS);
	return ok;
}

/*
 * Baseline and three more at 100 (4 vCPUs), "cheap" +10 % on 2 vCPUs,
 * "big" +20 % on 4: the cheaper one must not win on cost.
 */
static bool decoy_rate(size_t n, double cv, bool with_target)
{
	struct sim s;
	sim_init(&s, 6, n);
	sim_config(&s, 0, 4, 100, cv, true);
	sim_config(&s, 1, 2, 110, cv, false);	/* cheap */
	sim_config(&s, 2, 4, 120, cv, false);	/* big */
	for (size_t i = 3; i < 6; i++)
		sim_config(&s, i, 4, 100, cv, false);
	struct stats_rng rng;
	stats_rng_seed(&rng, 202 + n);
	size_t cheap = 0, big = 0;
	for (int k = 0; k < SWEEPS; k++) {
		sim_draw(&s, n, &rng);
		struct rank_result r;
		ranked(&s, &r);
		const struct db_results_config *rec = r.recommended ? r.recommended->config : NULL;
		bool decisive = r.verdict == RANK_BETTER || r.verdict == RANK_EQUIVALENT;
		cheap += decisive && rec == &s.res.configs[1];
		big += decisive && rec == &s.res.configs[2];
		rank_result_release(&r);
	}
	sim_free(&s);
	printf("decoy: cheaper +10 %% beside +20 %%, n = %zu, CV %.0f %%, %d sweeps\n", n,
	       100 * cv, SWEEPS);
	bool ok = true;
	if (with_target)
		ok = sim_report("the cheaper +10 % one recommended", (double)cheap / SWEEPS, "<=",
				0.02);
	else
		printf("  the cheaper +10 %% one recommended: %.2f %% (no target; the issue "
		       "measured 18-19 %% before)\n", 100.0 * (double)cheap / SWEEPS);
	printf("  (the +20 %% one recommended: %.2f %%)\n", 100.0 * (double)big / SWEEPS);
	return ok;
}

/*
 * One configuration truly +20 % among 6 (CV 10 %, n = 3): how many of the
 * others count as tied with the best (the issue measured 4.4 of 5 when a
 * tie was "not significantly different"; now it is shown equivalence).
 */
static void ties_count(void)
{
	struct sim s;
	sim_init(&s, 6, 3);
	sim_config(&s, 0, 4, 100, 0.10, true);
	sim_config(&s, 1, 4, 120, 0.10, false);
	for (size_t i = 2; i < 6; i++)
		sim_config(&s, i, 4, 100, 0.10, false);
	struct stats_rng rng;
	stats_rng_seed(&rng, 606);
	size_t tied = 0;
	for (int k = 0; k < SWEEPS; k++) {
		sim_draw(&s, 3, &rng);
		struct rank_result r;
		ranked(&s, &r);
		for (size_t i = 0; i < r.nentries; i++)
			tied += r.entries[i].tied_with_best;
		rank_result_release(&r);
	}
	sim_free(&s);
	printf("ties: one configuration +20 %% among 6, CV 10 %%, n = 3, %d sweeps\n", SWEEPS);
	printf("  others tied with the best, per sweep: %.3f of 5 (no target; 4.4 before)\n",
	       (double)tied / SWEEPS);
}

/* Baseline and one configuration truly `ratio` times it: does the interval hold it? */
static bool coverage_rate(size_t nconfigs, size_t n, bool with_target)
{
	struct sim s;
	sim_init(&s, nconfigs, n);
	sim_config(&s, 0, 4, 100, 0.05, true);
	for (size_t i = 1; i < nconfigs; i++)
		sim_config(&s, i, 4, 100 * (1 + 0.05 * (double)i), 0.05, false);
	struct stats_rng rng;
	stats_rng_seed(&rng, 303 + n * 10 + nconfigs);
	size_t held = 0, total = 0;
	for (int k = 0; k < SWEEPS; k++) {
		sim_draw(&s, n, &rng);
		struct rank_result r;
		ranked(&s, &r);
		for (size_t i = 0; i < r.nentries; i++) {
			const struct rank_entry *e = &r.entries[i];
			if (e->config->rec.baseline)
				continue;
			double truth = s.truth[e->config->rec.index].mean / s.truth[0].mean;
			held += e->ratio_lo <= truth && truth <= e->ratio_hi;
			total++;
		}
		rank_result_release(&r);
	}
	sim_free(&s);
	char what[96];
	snprintf(what, sizeof(what), "ratio interval holds the true ratio (%zu configurations, n = %zu)",
		 nconfigs, n);
	if (with_target)
		return sim_report(what, (double)held / (double)total, ">=", 0.93);
	printf("  %-66s %7.2f %%\n", what, 100.0 * (double)held / (double)total);
	return true;
}

/* Clean normal data, 6 equal configurations: how many runs get an outlier flag. */
static bool outlier_rate(void)
{
	printf("outliers: clean normal data, 6 configurations, CV 5 %%, %d sweeps per n\n",
	       SWEEPS / 4);
	bool ok = true;
	for (size_t n = 3; n <= 10; n++) {
		struct sim s;
		sim_init(&s, 6, n);
		for (size_t i = 0; i < 6; i++)
			sim_config(&s, i, 4, 100, 0.05, i == 0);
		struct stats_rng rng;
		stats_rng_seed(&rng, 404 + n);
		size_t flagged = 0, runs = 0;
		for (int k = 0; k < SWEEPS / 4; k++) {
			sim_draw(&s, n, &rng);
			struct rank_result r;
			ranked(&s, &r);
			for (size_t i = 0; i < r.nentries; i++) {
				flagged += r.entries[i].noutliers;
				runs += r.entries[i].s.n;
			}
			rank_result_release(&r);
		}
		sim_free(&s);
		char what[64];
		snprintf(what, sizeof(what), "runs flagged at n = %zu", n);
		ok &= sim_report(what, (double)flagged / (double)runs, "<=", 0.01);
	}
	return ok;
}

/* One configuration truly +10 % at CV 10 %, n = 3, among 6: too few runs to tell. */
static bool underpowered_rate(void)
{
	struct sim s;
	sim_init(&s, 6, 3);
	sim_config(&s, 0, 4, 100, 0.10, true);
	sim_config(&s, 1, 4, 110, 0.10, false);
	for (size_t i = 2; i < 6; i++)
		sim_config(&s, i, 4, 100, 0.10, false);
	struct stats_rng rng;
	stats_rng_seed(&rng, 505);
	size_t undecided = 0, equivalent = 0, better_right = 0, needed = 0;
	for (int k = 0; k < SWEEPS; k++) {
		sim_draw(&s, 3, &rng);
		struct rank_result r;
		ranked(&s, &r);
		undecided += r.verdict == RANK_UNDECIDED;
		equivalent += r.verdict == RANK_EQUIVALENT;
		better_right += r.verdict == RANK_BETTER && r.recommended->config == &s.res.configs[1];
		if (r.verdict == RANK_UNDECIDED && r.needed_repetitions > 0)
			needed++;
		rank_result_release(&r);
	}
	sim_free(&s);
	printf("underpowered: true +10 %%, CV 10 %%, n = 3, 6 configurations, %d sweeps\n", SWEEPS);
	bool ok = sim_report("verdict undecided", (double)undecided / SWEEPS, ">=", 0.90);
	ok &= sim_report("verdict equivalent (\"keep the baseline\" when it is not)",
			 (double)equivalent / SWEEPS, "<=", 0.0);
	printf("  (better with the right pick: %.2f %%; undecided sweeps naming "
	       "needed_repetitions: %.2f %%)\n", 100.0 * (double)better_right / SWEEPS,
	       100.0 * (double)needed / (double)(undecided ? undecided : 1));
	return ok;
}

int main(void)
{
	bool ok = true;
	ok &= null_rate();
	ok &= decoy_rate(5, 0.05, true);
	decoy_rate(3, 0.10, false);
	ties_count();
	printf("coverage: true ratios 1.05 .. 1.25, CV 5 %%, %d sweeps\n", SWEEPS);
	ok &= coverage_rate(2, 5, true);
	ok &= coverage_rate(6, 5, true);
	coverage_rate(2, 3, false);
	ok &= outlier_rate();
	ok &= underpowered_rate();
	printf("%s\n", ok ? "bench-decisions: every target met" : "bench-decisions: a target was missed");
	return ok ? 0 : 1;
}
