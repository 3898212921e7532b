/*
 * Unit tests of advisor/compare: the ratio, its interval and verdict on
 * arrays with known answers, the agreement of the interval with the test,
 * and two rankings (built through the real db fixtures and rank_compute)
 * whose winner flips or holds.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* The fixture header serves several tests; this one uses only part of it. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "rank-fixtures.h"

#include "advisor/compare.h"
#include "advisor/rank.h"

static void test_ratio_verdicts(void **state)
{
	(void)state;
	const double x[] = { 100, 101, 99, 100.5, 99.5 };
	double y[5];
	struct compare_ratio r;

	/* The same values: ratio 1, a tight interval, equivalent. */
	compare_ratio(x, 5, x, 5, true, 0.05, 0.02, &r);
	assert_true(fabs(r.ratio - 1) < 1e-12);
	assert_true(r.lo < 1 && r.hi > 1);
	assert_int_equal(r.verdict, COMPARE_EQUIVALENT);
	assert_true(fabs(r.p - 1) < 1e-9);

	/* 10 % more: better when higher is better, worse when lower is. */
	for (int i = 0; i < 5; i++)
		y[i] = 1.1 * x[i];
	compare_ratio(x, 5, y, 5, true, 0.05, 0.02, &r);
	assert_true(fabs(r.ratio - 1.1) < 1e-9);
	assert_true(r.lo > 1 && r.lo < 1.1 && r.hi > 1.1);
	assert_int_equal(r.verdict, COMPARE_BETTER);
	compare_ratio(x, 5, y, 5, false, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, COMPARE_WORSE);

	/* A real 1 % difference under 10 % spread: neither shown. */
	const double wide[] = { 90, 110, 100, 85, 115 };
	for (int i = 0; i < 5; i++)
		y[i] = 1.01 * wide[i];
	compare_ratio(wide, 5, y, 5, true, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, COMPARE_UNDECIDED);

	/* One run on a side cannot be tested; a non-positive value neither. */
	compare_ratio(x, 1, y, 5, true, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, COMPARE_INSUFFICIENT);
	assert_false(isnan(r.ratio));
	const double zero[] = { 0, 1, 2 };
	compare_ratio(zero, 3, x, 5, true, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, COMPARE_INSUFFICIENT);
}

/*
 * Welch on the logs, checked by hand: x = e^{0, 0.1}, y = e^{0.3, 0.5}:
 * d = 0.35, var 0.005 and 0.02, se = sqrt(0.0025 + 0.01) = 0.1118, df = 1.6.
 */
static void test_ratio_reference(void **state)
{
	(void)state;
	const double x[] = { 1, exp(0.1) }, y[] = { exp(0.3), exp(0.5) };
	struct compare_ratio r;
	compare_ratio(x, 2, y, 2, true, 0.05, 0.02, &r);
	double se = sqrt(0.0025 + 0.01), df = 0.0125 * 0.0125 / (0.0025 * 0.0025 + 0.01 * 0.01);
	assert_true(fabs(r.ratio - exp(0.35)) < 1e-12);
	double q = stats_t_quantile(0.975, df);
	assert_true(fabs(log(r.lo) - (0.35 - q * se)) < 1e-9);
	assert_true(fabs(log(r.hi) - (0.35 + q * se)) < 1e-9);
	assert_true(fabs(r.p - 2 * stats_t_cdf(-0.35 / se, df)) < 1e-12);
}

/* The interval excludes 1 exactly when the test rejects: one method, no contradictions. */
static void test_interval_agrees_with_test(void **state)
{
	(void)state;
	struct stats_rng rng;
	stats_rng_seed(&rng, 7);
	for (int k = 0; k < 500; k++) {
		double x[6], y[6];
		double shift = 0.002 * (double)(k % 40);
		for (int i = 0; i < 6; i++) {
			x[i] = 100 * exp(0.03 * fx_normal(&rng));
			y[i] = 100 * exp(shift + 0.03 * fx_normal(&rng));
		}
		struct compare_ratio r;
		compare_ratio(x, 6, y, 6, true, 0.05, 0.02, &r);
		bool excludes = r.lo > 1 || r.hi < 1;
		if (excludes != (r.p < 0.05))
			fail_msg("sample %d: interval [%g, %g] but p = %g", k, r.lo, r.hi, r.p);
		assert_true(excludes == (r.verdict == COMPARE_BETTER || r.verdict == COMPARE_WORSE));
	}
}

struct two {
	char path[64];
	struct db_results ra, rb;
	struct rank_result a, b;
};

/* Ranks experiments ea and eb of a fresh database built by `build`. */
static void rank_two(struct two *t, void (*build)(struct db *, int64_t *, int64_t *))
{
	struct ta_err err = { 0 };
	snprintf(t->path, sizeof(t->path), "/tmp/test-compare.%d.db", (int)getpid());
	unlink(t->path);
	struct db *db = db_open(t->path, true, &err);
	assert_non_null(db);
	int64_t ea, eb;
	build(db, &ea, &eb);
	char ida[24], idb[24];
	snprintf(ida, sizeof(ida), "%lld", (long long)ea);
	snprintf(idb, sizeof(idb), "%lld", (long long)eb);
	assert_int_equal(db_results_load(db, ida, &t->ra, &err), 0);
	assert_int_equal(db_results_load(db, idb, &t->rb, &err), 0);
	db_close(db);
	assert_int_equal(rank_compute(&t->ra, NULL, &t->a, &err), 0);
	assert_int_equal(rank_compute(&t->rb, NULL, &t->b, &err), 0);
}

static void release_two(struct two *t)
{
	rank_result_release(&t->a);
	rank_result_release(&t->b);
	db_results_release(&t->ra);
	db_results_release(&t->rb);
	unlink(t->path);
	char wal[80];
	snprintf(wal, sizeof(wal), "%s-wal", t->path);
	unlink(wal);
	snprintf(wal, sizeof(wal), "%s-shm", t->path);
	unlink(wal);
}

/* The clear winner twice: the same data. */
static void build_same(struct db *db, int64_t *a, int64_t *b)
{
	*a = fixture_clear_winner(db);
	*b = fixture_clear_winner(db);
}

/* The clear winner, then a rerun in which 1x1x2 won and 2x1x1 was not run. */
static void build_flipped(struct db *db, int64_t *a, int64_t *b)
{
	*a = fixture_clear_winner(db);
	*b = fx_experiment(db, "clear-winner", "records_per_s", 1, fx_yaml);
	struct fx_config c[] = {
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1, .mean = 150, .sd = 1.5 },
		{ .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2, .mean = 180, .sd = 1.8 },
		{ .key = "1x1x1", .sockets = 1, .cores = 1, .threads = 1, .mean = 90, .sd = 1 },
	};
	for (int i = 0; i < 3; i++)
		fx_add(db, *b, i, &c[i], "records_per_s", "records/s", 1);
}

static void test_recommendation_holds(void **state)
{
	(void)state;
	struct two t;
	rank_two(&t, build_same);
	struct compare_result c;
	struct ta_err err = { 0 };
	assert_int_equal(compare_rankings(&t.a, &t.b, 0.02, &c, &err), 0);
	assert_int_equal(c.nentries, 3);
	assert_int_equal(c.nonly_first + c.nonly_second, 0);
	assert_true(fabs(c.alpha - 0.05 / 3) < 1e-15);
	for (size_t i = 0; i < c.nentries; i++) {
		assert_true(fabs(c.entries[i].r.ratio - 1) < 1e-12);
		assert_int_equal(c.entries[i].r.verdict, COMPARE_EQUIVALENT);
	}
	assert_true(c.recommendation_holds);
	assert_string_equal(c.recommended_first, "1x2x1");
	compare_result_release(&c);
	release_two(&t);
}

static void test_recommendation_flipped(void **state)
{
	(void)state;
	struct two t;
	rank_two(&t, build_flipped);
	struct compare_result c;
	struct ta_err err = { 0 };
	assert_int_equal(compare_rankings(&t.a, &t.b, 0.02, &c, &err), 0);
	assert_int_equal(c.nentries, 2);
	assert_int_equal(c.nonly_first, 1);
	assert_string_equal(c.only_first[0], "2x1x1");
	assert_int_equal(c.nonly_second, 1);
	assert_string_equal(c.only_second[0], "1x1x1");
	for (size_t i = 0; i < c.nentries; i++) {
		const struct compare_entry *e = &c.entries[i];
		if (!strcmp(e->key, "1x1x2")) {
			assert_true(fabs(e->r.ratio - 1.5) < 0.01);
			assert_int_equal(e->r.verdict, COMPARE_BETTER);
		} else {
			assert_string_equal(e->key, "1x2x1");
			assert_int_equal(e->r.verdict, COMPARE_EQUIVALENT);
		}
	}
	assert_false(c.recommendation_holds);
	assert_string_equal(c.recommended_first, "1x2x1");
	assert_non_null(c.recommended_second);
	assert_string_equal(c.recommended_second, "1x1x2");
	assert_non_null(c.first_pick_in_second);
	assert_false(c.first_pick_in_second->is_best);
	compare_result_release(&c);

	/* Different metrics cannot be compared. */
	t.b.metric = "other";
	assert_int_equal(compare_rankings(&t.a, &t.b, 0.02, &c, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	t.b.metric = t.a.metric;
	release_two(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ratio_verdicts),
		cmocka_unit_test(test_ratio_reference),
		cmocka_unit_test(test_interval_agrees_with_test),
		cmocka_unit_test(test_recommendation_holds),
		cmocka_unit_test(test_recommendation_flipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
