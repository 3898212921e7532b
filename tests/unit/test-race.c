/*
 * Unit tests of advisor/race: which configuration falls after which block,
 * each stopping rule, environment levels under both objectives, missing
 * runs, host references and the expected-runs estimate.
 *
 * Fixtures are deterministic: a configuration's value in block b is
 * mean * exp(JITTER * wobble(d, e, b)) with a fixed wobble in [-1, 1], so
 * every paired difference has a known, small spread.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advisor/race-run.h"
#include "advisor/race.h"
#include "experiments/config.h"
#include "experiments/plan.h"

#define MAXOBS 2048

struct fixture {
	struct race_obs obs[MAXOBS];
	size_t nobs;
	bool elim[16];
	bool ref[16];
	struct race_input in;
};

/* A fixed pseudo-random wobble in [-1, 1] per cell. */
static double wobble(size_t d, size_t e, int b)
{
	return sin((double)(d * 7 + e * 13) + (double)b * 2.3 + 0.5);
}

/* Adds blocks [from, to) for decision d at level e with the given mean and jitter. */
static void add(struct fixture *f, size_t d, size_t e, double mean, double jitter, int from,
		int to)
{
	for (int b = from; b < to; b++) {
		assert_true(f->nobs < MAXOBS);
		f->obs[f->nobs++] = (struct race_obs){ .decision = d, .env = e, .block = b,
						       .value = mean * exp(jitter * wobble(d, e, b)) };
	}
}

static void setup(struct fixture *f, size_t nd, size_t ne, size_t baseline)
{
	memset(f, 0, sizeof(*f));
	f->in = (struct race_input){
		.ndecisions = nd, .nenvs = ne, .baseline = baseline, .eliminated = f->elim,
		.reference = f->ref, .obs = f->obs, .first_test = 3, .max_blocks = 20,
		.higher_is_better = true, .objective = RACE_OBJECTIVE_WORST,
		.alpha = RACE_ALPHA, .equivalence = 0.02,
	};
}

/* Evaluates after `blocks` and records the eliminations as the controller would. */
static void step(struct fixture *f, int blocks, struct race_step *st)
{
	f->in.obs = f->obs;
	f->in.nobs = f->nobs;
	f->in.blocks = blocks;
	assert_int_equal(race_evaluate(&f->in, st), 0);
	for (size_t i = 0; i < st->nelims; i++) {
		assert_false(f->elim[st->elims[i].decision]);
		f->elim[st->elims[i].decision] = true;
	}
}

/*
 * Four configurations: 0 the baseline (100), 1 the best (+10 %), 2 far
 * worse (-30 %), 3 a little worse (-2.7 %) with 3 % jitter, the others 1 %.  The far
 * one falls at the first test; the close one only later; the baseline is
 * never eliminated, and once 3 is gone and the baseline shown worse the
 * race stops with one survivor.
 */
static void test_elimination_order(void **state)
{
	(void)state;
	static struct fixture f;
	setup(&f, 4, 1, 0);
	const double mean[] = { 100, 110, 70, 107 }, jitter[] = { 0.01, 0.01, 0.01, 0.03 };
	struct race_step st;

	for (size_t d = 0; d < 4; d++)
		add(&f, d, 0, mean[d], jitter[d], 0, 2);
	step(&f, 2, &st);
	/* Before first_test: the best is known but nobody is tested. */
	assert_int_equal(st.best, 1);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.stop, RACE_GO_ON);
	race_step_release(&st);

	int fell2 = 0, fell3 = 0, stopped = 0;
	for (int b = 2; b < 20 && !stopped; b++) {
		for (size_t d = 0; d < 4; d++)
			if (!f.elim[d])
				add(&f, d, 0, mean[d], jitter[d], b, b + 1);
		step(&f, b + 1, &st);
		assert_int_equal(st.best, 1);
		for (size_t i = 0; i < st.nelims; i++) {
			assert_int_equal(st.elims[i].against, 1);
			assert_true(st.elims[i].p < RACE_ALPHA);
			assert_true(st.elims[i].ratio < 1);
			assert_int_not_equal(st.elims[i].decision, 0);	/* the baseline stays */
			if (st.elims[i].decision == 2)
				fell2 = b + 1;
			if (st.elims[i].decision == 3)
				fell3 = b + 1;
		}
		if (st.stop != RACE_GO_ON) {
			assert_int_equal(st.stop, RACE_STOP_SINGLE);
			stopped = b + 1;
			/* The best and the baseline are left. */
			assert_int_equal(st.nsurvivors, 2);
		}
		race_step_release(&st);
	}
	assert_int_equal(fell2, 3);
	assert_true(fell3 > fell2);
	print_message("far one fell after block %d, close one after %d, stop after %d\n", fell2,
		      fell3, stopped);
	assert_true(stopped >= fell3 && stopped < 20);
	assert_false(f.elim[0]);
	assert_false(f.elim[1]);
}

/*
 * Survivors within 0.3 % of each other under 0.5 % jitter: none shown
 * worse, all shown within +-2 %.
 */
static void test_stop_equivalent(void **state)
{
	(void)state;
	static struct fixture f;
	setup(&f, 3, 1, 0);
	struct race_step st;
	add(&f, 0, 0, 100, 0.005, 0, 3);
	add(&f, 1, 0, 100.2, 0.005, 0, 3);
	add(&f, 2, 0, 99.9, 0.005, 0, 3);
	step(&f, 3, &st);
	assert_int_equal(st.best, 1);
	assert_int_equal(st.stop, RACE_STOP_EQUIVALENT);
	assert_int_equal(st.nelims, 0);
	race_step_release(&st);

	/* The same with delta 0.1 %: not shown within it, so the race goes on. */
	f.in.equivalence = 0.001;
	step(&f, 3, &st);
	assert_int_equal(st.stop, RACE_GO_ON);
	race_step_release(&st);
	f.in.equivalence = 0.02;

	/* A baseline shown worse does not keep equivalent survivors racing. */
	setup(&f, 3, 1, 0);
	add(&f, 0, 0, 90, 0.005, 0, 4);
	add(&f, 1, 0, 100, 0.005, 0, 4);
	add(&f, 2, 0, 100, 0.005, 0, 4);
	step(&f, 4, &st);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.nsurvivors, 3);
	assert_int_equal(st.stop, RACE_STOP_EQUIVALENT);
	race_step_release(&st);
}

/* Differences of 1 % under 5 % jitter: nothing decided, the maximum ends it. */
static void test_stop_max(void **state)
{
	(void)state;
	static struct fixture f;
	setup(&f, 3, 1, 0);
	f.in.max_blocks = 4;
	struct race_step st;
	add(&f, 0, 0, 100, 0.05, 0, 3);
	add(&f, 1, 0, 101, 0.05, 0, 3);
	add(&f, 2, 0, 100.5, 0.05, 0, 3);
	step(&f, 3, &st);
	assert_int_equal(st.stop, RACE_GO_ON);
	race_step_release(&st);
	add(&f, 0, 0, 100, 0.05, 3, 4);
	add(&f, 1, 0, 101, 0.05, 3, 4);
	add(&f, 2, 0, 100.5, 0.05, 3, 4);
	step(&f, 4, &st);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.stop, RACE_STOP_MAX);
	race_step_release(&st);
}

/* The baseline best and everything else shown worse: only it is left. */
static void test_stop_single_baseline(void **state)
{
	(void)state;
	static struct fixture f;
	setup(&f, 3, 1, 2);
	struct race_step st;
	add(&f, 0, 0, 80, 0.01, 0, 3);
	add(&f, 1, 0, 75, 0.01, 0, 3);
	add(&f, 2, 0, 100, 0.01, 0, 3);
	step(&f, 3, &st);
	assert_int_equal(st.best, 2);
	assert_int_equal(st.nelims, 2);
	assert_int_equal(st.elims[0].decision, 0);
	assert_int_equal(st.elims[1].decision, 1);
	assert_int_equal(st.nsurvivors, 1);
	assert_int_equal(st.stop, RACE_STOP_SINGLE);
	race_step_release(&st);
}

/*
 * The baseline leaves the race only on the ranking's own test: a lead of
 * 3 % that is exact within every block (paired test: p = 0) under a +-10 %
 * drift from block to block is not yet shown unpaired, so the race goes
 * on; without the drift it stops.
 */
static void test_baseline_needs_verdict(void **state)
{
	(void)state;
	static struct fixture f;
	struct race_step st;
	setup(&f, 2, 1, 0);
	for (int b = 0; b < 4; b++) {
		double drift = exp(0.1 * wobble(5, 5, b));
		f.obs[f.nobs++] = (struct race_obs){ .decision = 0, .block = b, .value = 100 * drift };
		f.obs[f.nobs++] = (struct race_obs){ .decision = 1, .block = b, .value = 103 * drift };
	}
	step(&f, 4, &st);
	assert_int_equal(st.best, 1);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.stop, RACE_GO_ON);
	race_step_release(&st);

	setup(&f, 2, 1, 0);
	add(&f, 0, 0, 100, 0.005, 0, 4);
	add(&f, 1, 0, 103, 0.005, 0, 4);
	step(&f, 4, &st);
	assert_int_equal(st.nelims, 0);
	assert_int_equal(st.stop, RACE_STOP_SINGLE);
	race_step_release(&st);
}

/* Lower is better: the smaller values win and the larger fall. */
static void test_lower_is_better(void **state)
{
	(void)state;
	static struct fixture f;
	setup(&f, 2, 1, 0);
	f.in.higher_is_better = false;
	struct race_step st;
	add(&f, 0, 0, 100, 0.01, 0, 3);
	add(&f, 1, 0, 130, 0.01, 0, 3);
	step(&f, 3, &st);
	assert_int_equal(st.best, 0);
	assert_int_equal(st.nelims, 1);
	assert_int_equal(st.elims[0].decision, 1);
	assert_true(fabs(st.elims[0].ratio - 100.0 / 130) < 0.01);
	race_step_release(&st);
}

/*
 * Two environment levels (quiet, noisy).  Baseline 0: (100, 100); A = 1:
 * (160, 80), great when quiet and bad under noise; B = 2: (110, 102).
 * Worst case: B is best (+2 % against -22 %) and A falls; mean of the log
 * ratios: A is best (+13 % against +6 %) and B falls.  The baseline stays.
 */
static void test_environment_objectives(void **state)
{
	(void)state;
	static struct fixture f;
	const double m[3][2] = { { 100, 100 }, { 160, 80 }, { 110, 102 } };
	for (int objective = 0; objective < 2; objective++) {
		setup(&f, 3, 2, 0);
		f.in.objective = objective ? RACE_OBJECTIVE_MEAN : RACE_OBJECTIVE_WORST;
		for (size_t d = 0; d < 3; d++)
			for (size_t e = 0; e < 2; e++)
				add(&f, d, e, m[d][e], 0.01, 0, 4);
		struct race_step st;
		step(&f, 4, &st);
		size_t best = objective ? 1 : 2, loser = objective ? 2 : 1;
		assert_int_equal(st.best, best);
		assert_int_equal(st.nelims, 1);
		assert_int_equal(st.elims[0].decision, loser);
		race_step_release(&st);
	}
}

/*
 * A failed run leaves a hole: the paired test uses only the blocks both
 * have, and one pair is too few to test.
 */
static void test_missing_runs(void **state)
{
	(void)state;
	static struct fixture f;
	setup(&f, 2, 1, 0);
	struct race_step st;
	add(&f, 0, 0, 100, 0.01, 0, 3);
	add(&f, 1, 0, 50, 0.01, 2, 3);		/* blocks 0 and 1 failed */
	step(&f, 3, &st);
	assert_int_equal(st.best, 0);
	assert_int_equal(st.nelims, 0);		/* one pair: untestable */
	assert_int_equal(st.stop, RACE_GO_ON);
	race_step_release(&st);
	add(&f, 0, 0, 100, 0.01, 3, 4);
	add(&f, 1, 0, 50, 0.01, 3, 4);
	step(&f, 4, &st);
	assert_int_equal(st.nelims, 1);
	race_step_release(&st);

	/* Non-positive values (a broken parse) are ignored, not logged. */
	setup(&f, 1, 1, 0);
	f.obs[f.nobs++] = (struct race_obs){ .decision = 0, .block = 0, .value = 0 };
	step(&f, 1, &st);
	assert_int_equal(st.best, RACE_NONE);
	race_step_release(&st);
}

/* A host reference is faster than every guest but never best nor tested. */
static void test_reference_not_raced(void **state)
{
	(void)state;
	static struct fixture f;
	setup(&f, 3, 1, 0);
	f.ref[2] = true;
	struct race_step st;
	add(&f, 0, 0, 100, 0.01, 0, 3);
	add(&f, 1, 0, 70, 0.01, 0, 3);
	add(&f, 2, 0, 200, 0.01, 0, 3);
	step(&f, 3, &st);
	assert_int_equal(st.best, 0);
	assert_int_equal(st.nelims, 1);
	assert_int_equal(st.elims[0].decision, 1);
	assert_int_equal(st.stop, RACE_STOP_SINGLE);
	race_step_release(&st);
}

static void test_bad_input(void **state)
{
	(void)state;
	static struct fixture f;
	struct race_step st;
	setup(&f, 2, 1, 0);
	f.in.first_test = 1;
	assert_int_equal(race_evaluate(&f.in, &st), -1);
	race_step_release(&st);
	setup(&f, 2, 1, 5);
	assert_int_equal(race_evaluate(&f.in, &st), -1);
	race_step_release(&st);
	setup(&f, 2, 1, 0);
	f.obs[f.nobs++] = (struct race_obs){ .decision = 2, .block = 0, .value = 1 };
	f.in.nobs = f.nobs;
	assert_int_equal(race_evaluate(&f.in, &st), -1);
	race_step_release(&st);
}

static void test_expected_runs(void **state)
{
	(void)state;
	size_t max;
	double e = race_expected_runs(6, 1, 0, 3, 20, 0.02, 42, 100, &max);
	assert_int_equal(max, 120);
	/* At least the first three blocks, and well below the maximum. */
	assert_true(e >= 18 && e < 0.8 * 120);
	assert_true(e == race_expected_runs(6, 1, 0, 3, 20, 0.02, 42, 100, &max));
	/* Environment levels and a host reference scale every block. */
	double e2 = race_expected_runs(6, 2, 1, 3, 20, 0.02, 42, 100, &max);
	assert_int_equal(max, 13 * 20);
	assert_true(e2 >= 3 * 13 && e2 < max);
	/* Nothing to race: the maximum. */
	assert_true(race_expected_runs(1, 1, 0, 3, 20, 0.02, 42, 100, &max) == 20);
}

/*
 * A plan grouped into decisions and levels by its records (the plan wrote
 * them from advisor.environment), pinning included when it is environment.
 */
static void test_group(void **state)
{
	(void)state;
	static const char yaml[] =
		"name: g\nguest: {runner: host}\ntopology: [1x1x1, 1x2x1]\n"
		"noise: [none, {kind: spin, cpus: \"0\"}]\n"
		"benchmark: {kind: command, argv: [x], parse: 'v: (?<v>[0-9]+)', metric: v}\n";
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("g.yaml", yaml, strlen(yaml), &err);
	assert_non_null(cfg);
	struct host_facts host = { .arch = ARCH_X86_64, .online_cpus = 2, .possible_cpus = 2,
				   .threads_per_core = 1 };
	struct plan *p = plan_expand(cfg, &host, 1, &err);
	if (!p)
		fail_msg("plan: %s", err.msg);
	assert_int_equal(p->nconfigs, 4);
	size_t dec[4], lev[4], nlev, nref;
	char **names;
	size_t nd = race_run_group(p, dec, lev, &names, &nlev, &nref);
	assert_int_equal(nd, 2);
	assert_int_equal(nlev, 2);
	assert_int_equal(nref, 0);
	for (size_t i = 0; i < 4; i++) {
		assert_non_null(strstr(p->configs[i].rec.key, names[dec[i]]));
		assert_int_equal(lev[i], strstr(p->configs[i].rec.key, "noise=none") ? lev[0] : 1 - lev[0]);
		for (size_t j = 0; j < 4; j++)
			assert_true((dec[i] == dec[j]) ==
				    (p->configs[i].shape.cores == p->configs[j].shape.cores));
	}
	free(names[0]);
	free(names[1]);
	free(names);
	size_t max;
	double e = race_run_expected(p, 2, 50, &max);
	assert_int_equal(max, 4 * 3);	/* 3 repetitions by default */
	assert_true(e >= 8 && e <= 12);
	plan_free(p);
	config_free(cfg);

	/* advisor.environment [pinning]: the pinnings of a shape are one decision's levels. */
	static const char pinned[] =
		"name: g\nguest: {runner: host}\ntopology: [1x1x1, 1x2x1]\n"
		"pinning: [none, compact]\nadvisor: {environment: [pinning]}\n"
		"benchmark: {kind: command, argv: [x], parse: 'v: (?<v>[0-9]+)', metric: v}\n";
	cfg = config_parse("g.yaml", pinned, strlen(pinned), &err);
	assert_non_null(cfg);
	p = plan_expand(cfg, &host, 1, &err);
	if (!p)
		fail_msg("plan: %s", err.msg);
	assert_int_equal(p->nconfigs, 4);
	nd = race_run_group(p, dec, lev, &names, &nlev, &nref);
	assert_int_equal(nd, 2);
	assert_int_equal(nlev, 2);
	for (size_t i = 0; i < nd; i++) {
		assert_null(strstr(names[i], "pin="));
		free(names[i]);
	}
	free(names);
	for (size_t i = 0; i < 4; i++)
		assert_non_null(strstr(p->configs[i].rec.environment, "pinning="));
	plan_free(p);
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elimination_order),
		cmocka_unit_test(test_stop_equivalent),
		cmocka_unit_test(test_stop_max),
		cmocka_unit_test(test_stop_single_baseline),
		cmocka_unit_test(test_baseline_needs_verdict),
		cmocka_unit_test(test_lower_is_better),
		cmocka_unit_test(test_environment_objectives),
		cmocka_unit_test(test_missing_runs),
		cmocka_unit_test(test_reference_not_raced),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_expected_runs),
		cmocka_unit_test(test_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
