/*
 * Unit tests of compare: the engine's shift of one configuration between
 * two experiments (decide_shift) on arrays with known answers, the
 * agreement of its interval with its test, the status table
 * (decide_compare), and two rankings (built through the real db fixtures
 * and rank_compute) that are consistent, drifted, changed or inconclusive.
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

static void test_shift_verdicts(void **state)
{
	(void)state;
	const double x[] = { 100, 101, 99, 100.5, 99.5 };
	double y[5];
	struct decide_shift r;

	/* The same values: ratio 1, a tight interval, equivalent. */
	decide_shift(x, 5, x, 5, true, 0.05, 0.02, &r);
	assert_true(fabs(r.ratio - 1) < 1e-12);
	assert_true(r.lo < 1 && r.hi > 1);
	assert_int_equal(r.verdict, DECIDE_EQUIVALENT);
	assert_true(fabs(r.p - 1) < 1e-9);

	/* 10 % more: better when higher is better, worse when lower is. */
	for (int i = 0; i < 5; i++)
		y[i] = 1.1 * x[i];
	decide_shift(x, 5, y, 5, true, 0.05, 0.02, &r);
	assert_true(fabs(r.ratio - 1.1) < 1e-9);
	assert_true(r.lo > 1 && r.lo < 1.1 && r.hi > 1.1);
	assert_int_equal(r.verdict, DECIDE_BETTER);
	decide_shift(x, 5, y, 5, false, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, DECIDE_WORSE);

	/* A real 1 % difference under 10 % spread: neither shown. */
	const double wide[] = { 90, 110, 100, 85, 115 };
	for (int i = 0; i < 5; i++)
		y[i] = 1.01 * wide[i];
	decide_shift(wide, 5, y, 5, true, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, DECIDE_UNDECIDED);

	/* One run on a side cannot be tested; a non-positive value neither. */
	decide_shift(x, 1, y, 5, true, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, DECIDE_INSUFFICIENT);
	const double zero[] = { 0, 1, 2 };
	decide_shift(zero, 3, x, 5, true, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, DECIDE_INSUFFICIENT);

	/* One run 3x slower among ten does not hide a 10 % shift (trimmed). */
	double a[10], b[10];
	for (int i = 0; i < 10; i++) {
		a[i] = 100 + (i % 5) - 2;
		b[i] = 1.1 * (100 + ((i + 2) % 5) - 2);
	}
	b[3] /= 3;
	decide_shift(a, 10, b, 10, true, 0.05, 0.02, &r);
	assert_int_equal(r.verdict, DECIDE_BETTER);
	assert_true(fabs(r.ratio - 1.1) < 0.01);
}

/*
 * Yuen's test by hand, without trimming (n < 10: the Welch test on the
 * logs): x = e^{0, 0.1}, y = e^{0.3, 0.5}: d = 0.35, variances 0.005 and
 * 0.02, se = sqrt(0.0025 + 0.01) = 0.1118, df = 1.6.
 */
static void test_shift_reference(void **state)
{
	(void)state;
	const double x[] = { 1, exp(0.1) }, y[] = { exp(0.3), exp(0.5) };
	struct decide_shift r;
	decide_shift(x, 2, y, 2, true, 0.05, 0.02, &r);
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
		double x[12], y[12];
		double shift = 0.002 * (double)(k % 40);
		for (int i = 0; i < 12; i++) {
			x[i] = 100 * exp(0.03 * stats_rng_normal(&rng));
			y[i] = 100 * exp(shift + 0.03 * stats_rng_normal(&rng));
		}
		struct decide_shift r;
		decide_shift(x, 12, y, 12, true, 0.05, 0.02, &r);
		bool excludes = r.lo > 1 || r.hi < 1;
		if (excludes != (r.p < 0.05))
			fail_msg("sample %d: interval [%g, %g] but p = %g", k, r.lo, r.hi, r.p);
		assert_true(excludes == (r.verdict == DECIDE_BETTER || r.verdict == DECIDE_WORSE));
	}
}

/*
 * The status and holds: a changed winner only when both decide different
 * picks and one experiment separates them; different picks neither
 * separates are tied winners (holds unknown); an undecided side never
 * holds; drift before consistency.
 */
static void test_status_table(void **state)
{
	(void)state;
	struct decide_shift still = { .verdict = DECIDE_EQUIVALENT };
	struct decide_shift moved = { .verdict = DECIDE_WORSE };
	struct decide_shift open = { .verdict = DECIDE_UNDECIDED };
#define U DECIDE_HOLDS_UNKNOWN
#define Y DECIDE_HOLDS_YES
#define N DECIDE_HOLDS_NO
	const struct {
		struct decide_compare_side a, b;
		const struct decide_shift *shift;
		enum decide_compare_status want;
		enum decide_holds holds;
	} rows[] = {
		{ { true, "a", false }, { true, "a", false }, &still, DECIDE_CONSISTENT, Y },
		/* different picks, one experiment separates them */
		{ { true, "a", true }, { true, "b", false }, &still, DECIDE_CHANGED_WINNER, N },
		{ { true, "a", false }, { true, "b", true }, &moved, DECIDE_CHANGED_WINNER, N },
		/* different picks neither separates: tied, never a changed winner */
		{ { true, "a", false }, { true, "b", false }, &still, DECIDE_TIED_WINNERS, U },
		{ { true, "a", false }, { true, "b", false }, &moved, DECIDE_DRIFTED, U },
		/* an undecided side neither confirms nor changes it */
		{ { true, "a", true }, { false, "b", true }, &still, DECIDE_INCONCLUSIVE, U },
		{ { true, "a", true }, { false, "a", true }, &still, DECIDE_INCONCLUSIVE, U },
		{ { true, "a", false }, { false, "a", false }, &moved, DECIDE_DRIFTED, U },
		{ { false, "a", true }, { true, "b", true }, &open, DECIDE_INCONCLUSIVE, U },
		{ { false, "a", true }, { false, "b", true }, &moved, DECIDE_DRIFTED, U },
		{ { true, "a", false }, { true, "a", false }, &moved, DECIDE_DRIFTED, Y },
		{ { true, NULL, true }, { true, "a", true }, &still, DECIDE_INCONCLUSIVE, U },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct decide_comparison got;
		decide_compare(&rows[i].a, &rows[i].b, rows[i].shift, 1, &got);
		if (got.status != rows[i].want || got.holds != rows[i].holds)
			fail_msg("row %zu: %s holds %d, expected %s holds %d", i,
				 decide_compare_status_name(got.status), (int)got.holds,
				 decide_compare_status_name(rows[i].want), (int)rows[i].holds);
	}
#undef U
#undef Y
#undef N
	struct decide_compare_side a = { true, "a", false };
	struct decide_comparison got;
	decide_compare(&a, &a, NULL, 0, &got);
	assert_int_equal(got.status, DECIDE_CONSISTENT);
}

/*
 * decide_separates: which decisions an experiment shows worse than its
 * pick.  Tied ones (in contention, not separated from the best) are not.
 */
static void test_separates_table(void **state)
{
	(void)state;
	struct decide_option opts[3] = { { .key = "base" }, { .key = "x" }, { .key = "y" } };
	struct decide_input in = { .decisions = opts, .ndecisions = 3, .baseline = 0 };
	struct decide_decision_out d[3];
	struct decide_result r = { .ndecisions = 3, .decisions = d, .pick = 1,
				   .verdict = DECIDE_BETTER };
	const struct {
		enum decide_verdict pick_verdict, verdict;
		bool failing, worse_than_best;
		int elim;
		size_t other;
		bool want;
	} rows[] = {
		{ DECIDE_BETTER, DECIDE_BETTER, false, false, 0, 2, false },	/* tied, in contention */
		{ DECIDE_BETTER, DECIDE_BETTER, false, true, 0, 2, true },
		{ DECIDE_BETTER, DECIDE_UNDECIDED, false, false, 0, 2, false },
		{ DECIDE_BETTER, DECIDE_EQUIVALENT, false, false, 0, 2, true },
		{ DECIDE_BETTER, DECIDE_WORSE, false, false, 0, 2, true },
		{ DECIDE_BETTER, DECIDE_BETTER, true, false, 0, 2, true },
		{ DECIDE_BETTER, DECIDE_BETTER, false, false, 4, 2, true },
		{ DECIDE_BETTER, DECIDE_NOT_COMPARED, false, false, 0, 0, true },	/* the baseline */
		{ DECIDE_EQUIVALENT, DECIDE_NOT_COMPARED, false, false, 0, 0, false },
		{ DECIDE_EQUIVALENT, DECIDE_EQUIVALENT, false, false, 0, 2, false },
		{ DECIDE_BETTER, DECIDE_BETTER, false, false, 0, 1, false },	/* the pick itself */
		{ DECIDE_BETTER, DECIDE_BETTER, false, false, 0, DECIDE_NONE, true },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(d, 0, sizeof(d));
		r.verdict = rows[i].pick_verdict;
		r.pick = rows[i].pick_verdict == DECIDE_EQUIVALENT ? 0 : 1;
		size_t o = rows[i].other == DECIDE_NONE ? 2 : rows[i].other;
		d[o].verdict = rows[i].verdict;
		d[o].failing = rows[i].failing;
		d[o].worse_than_best = rows[i].worse_than_best;
		d[o].elim.block = rows[i].elim;
		if (decide_separates(&r, &in, rows[i].other) != rows[i].want)
			fail_msg("row %zu: expected %s", i, rows[i].want ? "separated" : "tied");
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
		assert_int_equal(c.entries[i].r.verdict, DECIDE_EQUIVALENT);
	}
	assert_int_equal(c.status, DECIDE_CONSISTENT);
	assert_int_equal(c.holds, DECIDE_HOLDS_YES);
	assert_string_equal(c.recommended_first, "1x2x1");
	compare_result_release(&c);
	/* One experiment against itself is refused. */
	assert_int_equal(compare_rankings(&t.a, &t.a, 0.02, &c, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "both arguments name experiment"));
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
			assert_int_equal(e->r.verdict, DECIDE_BETTER);
		} else {
			assert_string_equal(e->key, "1x2x1");
			assert_int_equal(e->r.verdict, DECIDE_EQUIVALENT);
		}
	}
	assert_int_equal(c.status, DECIDE_CHANGED_WINNER);
	assert_int_equal(c.holds, DECIDE_HOLDS_NO);
	assert_string_equal(c.recommended_first, "1x2x1");
	assert_non_null(c.recommended_second);
	assert_string_equal(c.recommended_second, "1x1x2");
	assert_non_null(c.first_pick_there);
	assert_false(c.first_pick_there->is_best);
	assert_true(c.first_pick_there->worse_than_best);
	compare_result_release(&c);

	/* Different metrics cannot be compared. */
	t.b.metric = "other";
	assert_int_equal(compare_rankings(&t.a, &t.b, 0.02, &c, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	t.b.metric = t.a.metric;
	release_two(&t);
}

/* The clear winner, then a rerun 10 % slower everywhere: the winner holds, the levels drifted. */
static void build_drifted(struct db *db, int64_t *a, int64_t *b)
{
	*a = fixture_clear_winner(db);
	*b = fx_experiment(db, "clear-winner", "records_per_s", 1, fx_yaml);
	struct fx_config c[] = {
		{ .key = "2x1x1", .sockets = 2, .cores = 1, .threads = 1, .mean = 90, .sd = 0.9 },
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1, .mean = 135, .sd = 1.35 },
		{ .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2, .mean = 108, .sd = 1.08 },
	};
	for (int i = 0; i < 3; i++)
		fx_add(db, *b, i, &c[i], "records_per_s", "records/s", 1);
}

/* An undecided rerun names a leader, but "recommends" nothing: inconclusive, never changed. */
static void build_undecided(struct db *db, int64_t *a, int64_t *b)
{
	*a = fixture_high_variance(db);
	*b = fixture_clear_winner(db);
}

static void test_drifted_and_inconclusive(void **state)
{
	(void)state;
	struct two t;
	struct compare_result c;
	struct ta_err err = { 0 };
	rank_two(&t, build_drifted);
	assert_int_equal(compare_rankings(&t.a, &t.b, 0.02, &c, &err), 0);
	assert_int_equal(c.status, DECIDE_DRIFTED);
	assert_int_equal(c.holds, DECIDE_HOLDS_YES);
	/* MEAN1 and MEAN2 are the ratio's own locations. */
	assert_true(fabs(c.largest->r.second_loc / c.largest->r.first_loc - c.largest->r.ratio) <
		    1e-12);
	assert_non_null(c.largest);
	assert_true(fabs(c.largest->r.ratio - 0.9) < 0.01);
	compare_result_release(&c);
	release_two(&t);

	rank_two(&t, build_undecided);
	assert_int_equal(t.a.verdict, DECIDE_UNDECIDED);
	assert_int_equal(compare_rankings(&t.a, &t.b, 0.02, &c, &err), 0);
	assert_true(c.status == DECIDE_INCONCLUSIVE || c.status == DECIDE_DRIFTED);
	/* The first does not decide: the recommendation neither holds nor changed. */
	assert_int_equal(c.holds, DECIDE_HOLDS_UNKNOWN);
	compare_result_release(&c);
	/* Nor when the rerun is the undecided one. */
	assert_int_equal(compare_rankings(&t.b, &t.a, 0.02, &c, &err), 0);
	assert_int_equal(c.holds, DECIDE_HOLDS_UNKNOWN);
	compare_result_release(&c);
	release_two(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shift_verdicts),
		cmocka_unit_test(test_shift_reference),
		cmocka_unit_test(test_interval_agrees_with_test),
		cmocka_unit_test(test_status_table),
		cmocka_unit_test(test_separates_table),
		cmocka_unit_test(test_recommendation_holds),
		cmocka_unit_test(test_recommendation_flipped),
		cmocka_unit_test(test_drifted_and_inconclusive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
