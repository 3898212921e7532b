/*
 * Unit tests for the presentation of advisor/rank-output.c: the figure a
 * table shows beside a gain is on the gain's scale (a geometric mean, its
 * interval on the log scale, so positive like the values), the arithmetic
 * mean only when a value is not positive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "advisor/rank.h"

/* A spread throughput: the arithmetic t interval goes below 0, the log-scale one cannot. */
static void test_geometric_positive(void **state)
{
	const double v[] = { 10, 1000, 10, 1000 };
	struct rank_location loc;
	rank_location_of(v, 4, &loc);
	assert_true(loc.geometric);
	assert_float_equal(loc.mean, 100, 1e-9);	/* sqrt(10 * 1000) */
	assert_true(loc.lo > 0 && loc.lo < loc.mean && loc.hi > loc.mean);
	/* exp(mean log +- t(0.975, 3) sd/sqrt(4)), sd of the logs = 2.659... */
	double sd = log(100) / sqrt(3);
	assert_float_equal(log(loc.hi / loc.mean), 3.182446305284263 * sd / 2, 1e-6);
	assert_float_equal(log(loc.mean / loc.lo), 3.182446305284263 * sd / 2, 1e-6);
	/* The arithmetic interval of the same values is what it replaces. */
	struct stats_summary s;
	stats_summarize(v, 4, &s);
	assert_true(s.ci_lo < 0);
}

/* Equal values: the geometric mean is the value, the interval collapses. */
static void test_geometric_constant(void **state)
{
	const double v[] = { 7, 7, 7 };
	struct rank_location loc;
	rank_location_of(v, 3, &loc);
	assert_true(loc.geometric);
	assert_float_equal(loc.mean, 7, 1e-12);
	assert_float_equal(loc.lo, 7, 1e-12);
	assert_float_equal(loc.hi, 7, 1e-12);
}

/* A zero or negative value: no geometric mean; the arithmetic one, said so. */
static void test_not_positive(void **state)
{
	const double v[] = { 0, 2, 4 };
	struct rank_location loc;
	rank_location_of(v, 3, &loc);
	assert_false(loc.geometric);
	assert_float_equal(loc.mean, 2, 1e-12);
	const double w[] = { -1, 2, 5 };
	rank_location_of(w, 3, &loc);
	assert_false(loc.geometric);
	assert_float_equal(loc.mean, 2, 1e-12);
}

/* One value: a mean, no interval; none: nothing. */
static void test_few(void **state)
{
	const double v[] = { 5 };
	struct rank_location loc;
	rank_location_of(v, 1, &loc);
	assert_float_equal(loc.mean, 5, 1e-12);
	assert_true(isnan(loc.lo) && isnan(loc.hi));
	rank_location_of(v, 0, &loc);
	assert_true(isnan(loc.mean));
}

/*
 * Changes in a user's words: a lower-is-better metric's gain is shown as
 * the change of its value (a p50 latency from 36.6 to 22.4 ms fell by
 * 38.8 %, 1.63x faster), never as "+63 % (lower is better)".
 */
static void test_change_wording(void **state)
{
	(void)state;
	double fell = 36.6 / 22.4 - 1;		/* the direction-aware gain: +63.4 % */
	const struct {
		double gain, lo, hi;
		bool higher_is_better;
		const char *name, *unit;
		bool factor;
		const char *want;
	} rows[] = {
		{ 0.12, 0.081, 0.16, true, "ops", "ops/s", true, "+12.0 % [+8.1 %, +16.0 %]" },
		{ fell, NAN, NAN, false, "p50", "ms", true, "-38.8 %, 1.63x faster" },
		{ fell, NAN, NAN, false, "p50", "ms", false, "-38.8 %" },
		/* the interval's ends swap: the larger gain is the larger fall */
		{ 1.0, 0.25, 3.0, false, "lat", "us", true, "-50.0 % [-75.0 %, -20.0 %], 2.00x faster" },
		{ -0.2, NAN, NAN, false, "latency", NULL, true, "+25.0 %, 1.25x slower" },
		{ 0.25, NAN, NAN, false, "errors", NULL, true, "-20.0 %, 1.25x lower" },
		{ 0.25, NAN, NAN, false, "redis.GET.p50_ms", NULL, true, "-20.0 %, 1.25x faster" },
		{ -0.2, NAN, NAN, false, "errors", "count", true, "+25.0 %, 1.25x higher" },
		{ 0, NAN, NAN, false, "p99", "ms", true, "+0.0 %" },
		{ NAN, NAN, NAN, false, "p99", "ms", true, "n/a" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct strbuf out = STRBUF_INIT;
		rank_format_change(&out, rows[i].gain, rows[i].lo, rows[i].hi,
				   rows[i].higher_is_better, rows[i].name, rows[i].unit,
				   rows[i].factor);
		if (strcmp(strbuf_str(&out), rows[i].want))
			fail_msg("row %zu: '%s', expected '%s'", i, strbuf_str(&out), rows[i].want);
		strbuf_release(&out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometric_positive),
		cmocka_unit_test(test_change_wording),
		cmocka_unit_test(test_geometric_constant),
		cmocka_unit_test(test_not_positive),
		cmocka_unit_test(test_few),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
