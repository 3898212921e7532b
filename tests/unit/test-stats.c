/*
 * Unit tests of advisor/stats against reference values computed
 * independently.  Sources:
 *  - closed forms: Student t with 1 df is Cauchy (F = 1/2 + atan(t)/pi), with
 *    2 df F = 1/2 + t / (2 sqrt(2 + t^2)); I_x(a,1) = x^a, I_x(1,b) = 1-(1-x)^b.
 *  - t quantiles: standard tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2),
 *    same digits as R's qt().
 *  - R 4.x on the `sleep` data set (Cushny & Peebles; extra by group):
 *    t.test(extra ~ group, data = sleep)  -> t = -1.860813, df = 17.77647,
 *        p-value = 0.07939414;
 *    wilcox.test(extra ~ group, data = sleep) -> W = 25.5, p = 0.06932758;
 *    t.test(sleep$extra[1:10]) -> 95 % CI -0.5297804 2.0297804, sd 1.789010.
 *  - exact Mann-Whitney by counting: samples 1..5 vs 6..10 give U = 0 and
 *    p = 2 / C(10,5) = 2/252; 1..3 vs 4..6: p = 2 / C(6,3) = 0.1.
 *  - Holm, Spearman and modified z: worked by hand in the comments below.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "advisor/stats.h"

static const double sleep1[] = { 0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0 };
static const double sleep2[] = { 1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4 };

#define assert_close(a, b, tol) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (tol))) \
		fail_msg("%s = %.12g, expected %.12g (tol %g)", #a, a_, b_, (double)(tol)); \
} while (0)

static void test_summary(void **state)
{
	(void)state;
	struct stats_summary s;
	stats_summarize(sleep1, 10, &s);
	assert_int_equal(s.n, 10);
	assert_close(s.mean, 0.75, 1e-12);
	assert_close(s.median, 0.35, 1e-12);
	assert_close(s.stddev, 1.789010, 1e-6);
	assert_close(s.ci_lo, -0.5297804, 1e-7);
	assert_close(s.ci_hi, 2.0297804, 1e-7);
	assert_close(s.cv, 1.789010 / 0.75, 1e-5);
	assert_close(s.min, -1.6, 0);
	assert_close(s.max, 3.7, 0);

	/* One observation: a mean but no spread, no CI. */
	stats_summarize(sleep1, 1, &s);
	assert_close(s.mean, 0.7, 0);
	assert_true(isnan(s.stddev) && isnan(s.ci_lo) && isnan(s.cv));

	/* Large offset: the two-pass variance must not cancel catastrophically. */
	const double big[] = { 1e9 + 1, 1e9 + 2, 1e9 + 3 };
	assert_close(stats_stddev(big, 3), 1.0, 1e-9);
	/* Median of an even count and does not reorder its input. */
	const double four[] = { 4, 1, 3, 2 };
	assert_close(stats_median(four, 4), 2.5, 0);
	assert_close(four[0], 4, 0);
}

static void test_t_distribution(void **state)
{
	(void)state;
	/* Closed forms for 1 and 2 degrees of freedom. */
	for (double t = -30; t <= 30; t += 0.37) {
		assert_close(stats_t_cdf(t, 1), 0.5 + atan(t) / M_PI, 1e-13);
		assert_close(stats_t_cdf(t, 2), 0.5 + t / (2 * sqrt(2 + t * t)), 1e-13);
	}
	for (double p = 0.001; p < 1; p += 0.0133) {
		assert_close(stats_t_quantile(p, 1), tan(M_PI * (p - 0.5)),
			     1e-10 * fmax(1, fabs(tan(M_PI * (p - 0.5)))));
		double q2 = (2 * p - 1) / sqrt(2 * p * (1 - p));
		assert_close(stats_t_quantile(p, 2), q2, 1e-10 * fmax(1, fabs(q2)));
	}
	/* Tabled two-sided 95 % / 99 % and one-sided 95 % critical values. */
	assert_close(stats_t_quantile(0.975, 1), 12.706204736, 1e-8);
	assert_close(stats_t_quantile(0.975, 2), 4.302652730, 1e-8);
	assert_close(stats_t_quantile(0.975, 4), 2.776445105, 1e-8);
	assert_close(stats_t_quantile(0.975, 9), 2.262157163, 1e-8);
	assert_close(stats_t_quantile(0.975, 29), 2.045229642, 1e-8);
	assert_close(stats_t_quantile(0.975, 100), 1.983971519, 1e-8);
	assert_close(stats_t_quantile(0.995, 5), 4.032142984, 1e-8);
	assert_close(stats_t_quantile(0.95, 10), 1.812461123, 1e-8);
	assert_close(stats_t_quantile(0.025, 9), -2.262157163, 1e-8);
	/* Non-integer df (Welch) and the normal limit. */
	assert_close(stats_t_cdf(stats_t_quantile(0.975, 17.77647), 17.77647), 0.975, 1e-12);
	assert_close(stats_t_quantile(0.975, 1e7), 1.959963984540054, 1e-6);
	/* Far tail round trip (1 - 2^-40 is exact in a double). */
	double far = stats_t_quantile(1 - ldexp(1, -40), 3);
	assert_close(stats_t_cdf(-far, 3) / ldexp(1, -40), 1, 1e-9);
	assert_close(stats_t_quantile(0.5, 7), 0, 0);
}

static void test_normal_and_beta(void **state)
{
	(void)state;
	assert_close(stats_normal_quantile(0.975), 1.959963984540054, 1e-13);
	assert_close(stats_normal_quantile(0.5), 0, 1e-15);
	assert_close(stats_normal_quantile(1e-10), -6.361340902404056, 1e-10);
	assert_close(stats_normal_cdf(1.959963984540054), 0.975, 1e-14);
	for (double x = 0.01; x < 1; x += 0.07) {
		assert_close(stats_incbeta(2.5, 1, x), pow(x, 2.5), 1e-14);
		assert_close(stats_incbeta(1, 3.5, x), 1 - pow(1 - x, 3.5), 1e-14);
	}
	assert_close(stats_incbeta(7.3, 7.3, 0.5), 0.5, 1e-14);
	assert_close(stats_incbeta(2, 3, 0), 0, 0);
	assert_close(stats_incbeta(2, 3, 1), 1, 0);
}

static void test_welch(void **state)
{
	(void)state;
	struct stats_test t;
	stats_welch(sleep1, 10, sleep2, 10, &t);
	assert_close(t.statistic, -1.860813, 1e-6);
	assert_close(t.df, 17.77647, 1e-5);
	assert_close(t.p, 0.07939414, 1e-8);
	/* Symmetric in its arguments except for the sign of t. */
	stats_welch(sleep2, 10, sleep1, 10, &t);
	assert_close(t.statistic, 1.860813, 1e-6);
	assert_close(t.p, 0.07939414, 1e-8);
	/* Too few observations: no test. */
	stats_welch(sleep1, 1, sleep2, 10, &t);
	assert_true(isnan(t.p));
	/* Constant samples. */
	const double a[] = { 5, 5, 5 }, b[] = { 6, 6, 6 };
	stats_welch(a, 3, b, 3, &t);
	assert_close(t.p, 0, 0);
	stats_welch(a, 3, a, 3, &t);
	assert_close(t.p, 1, 0);
}

static void test_mann_whitney(void **state)
{
	(void)state;
	struct stats_test t;
	/* sleep has ties: normal approximation with tie and continuity correction. */
	stats_mann_whitney(sleep1, 10, sleep2, 10, &t);
	assert_close(t.statistic, 25.5, 0);
	assert_false(t.exact);
	assert_close(t.p, 0.06932758, 1e-7);

	const double lo5[] = { 1, 2, 3, 4, 5 }, hi5[] = { 6, 7, 8, 9, 10 };
	stats_mann_whitney(lo5, 5, hi5, 5, &t);
	assert_true(t.exact);
	assert_close(t.statistic, 0, 0);
	assert_close(t.p, 2.0 / 252, 1e-15);
	stats_mann_whitney(hi5, 5, lo5, 5, &t);
	assert_close(t.statistic, 25, 0);
	assert_close(t.p, 2.0 / 252, 1e-15);
	stats_mann_whitney(lo5, 3, lo5 + 3, 2, &t);	/* {1,2,3} vs {4,5}: p = 2/10 */
	assert_close(t.p, 0.2, 1e-15);
	/* Interleaved: U = 2 of 4 for {1,4} vs {2,3}: the centre, p = 1. */
	const double x[] = { 1, 4 }, y[] = { 2, 3 };
	stats_mann_whitney(x, 2, y, 2, &t);
	assert_close(t.statistic, 2, 0);
	assert_close(t.p, 1, 1e-15);
}

static void test_holm(void **state)
{
	(void)state;
	/*
	 * Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04
	 * -> monotone 0.02, 0.03, 0.06, 0.06 (R: p.adjust(p, "holm")).
	 */
	const double p[] = { 0.01, 0.04, 0.03, 0.005 };
	double adj[4];
	stats_holm(p, 4, adj);
	assert_close(adj[0], 0.03, 1e-15);
	assert_close(adj[1], 0.06, 1e-15);
	assert_close(adj[2], 0.06, 1e-15);
	assert_close(adj[3], 0.02, 1e-15);
	/* Capped at 1; a NAN (untested) p is not counted in the family. */
	const double q[] = { 0.6, NAN, 0.2 };
	stats_holm(q, 3, adj);
	assert_close(adj[2], 0.4, 1e-15);
	assert_close(adj[0], 0.6, 1e-15);
	assert_true(isnan(adj[1]));
}

static void test_spearman(void **state)
{
	(void)state;
	/* sum d^2 = 4 -> 1 - 6*4/(5*24) = 0.8 */
	const double x[] = { 1, 2, 3, 4, 5 }, y[] = { 2, 1, 4, 3, 5 };
	assert_close(stats_spearman(x, y, 5), 0.8, 1e-15);
	/* Ties: ranks (1, 2.5, 2.5, 4) vs (1..4): 4.5 / sqrt(4.5 * 5). */
	const double a[] = { 1, 2, 2, 3 }, b[] = { 10, 20, 30, 40 };
	assert_close(stats_spearman(a, b, 4), 4.5 / sqrt(22.5), 1e-15);
	/* Monotone decreasing, non-linear: exactly -1. */
	const double c[] = { 1, 2, 3, 4 }, d[] = { 1000, 10, 1, 0.5 };
	assert_close(stats_spearman(c, d, 4), -1, 1e-15);
	const double k[] = { 3, 3, 3 };
	assert_true(isnan(stats_spearman(k, x, 3)));
}

static void test_modified_z(void **state)
{
	(void)state;
	/* median 12, |dev| = {2,1,0,1,88}, MAD = 1: z(100) = 0.6745 * 88. */
	const double x[] = { 10, 11, 12, 13, 100 };
	double z[5];
	assert_int_equal(stats_modified_z(x, 5, z), 1);
	assert_close(z[4], 0.6745 * 88, 1e-12);
	assert_close(z[0], -1.349, 1e-12);
	const double same[] = { 4, 4, 4, 4, 9 };
	assert_int_equal(stats_modified_z(same, 5, z), 1);
	assert_true(isinf(z[4]) && z[4] > 0);
	assert_close(z[0], 0, 0);
}

static void test_bootstrap(void **state)
{
	(void)state;
	const double x[] = { 200, 210, 190, 205, 195 }, y[] = { 100, 102, 98, 101, 99 };
	double lo, hi, lo2, hi2;
	double r = stats_bootstrap_ratio(x, 5, y, 5, 1, 42, &lo, &hi);
	assert_close(r, 200.0 / 100.0, 1e-15);
	assert_true(lo < r && r < hi);
	assert_true(lo > 1.85 && hi < 2.15);
	/* Same seed, same interval; another seed, another (but close) one. */
	stats_bootstrap_ratio(x, 5, y, 5, 1, 42, &lo2, &hi2);
	assert_close(lo2, lo, 0);
	assert_close(hi2, hi, 0);
	stats_bootstrap_ratio(x, 5, y, 5, 1, 43, &lo2, &hi2);
	assert_true(lo2 != lo || hi2 != hi);
	assert_close(lo2, lo, 0.02);
	/* Constant samples: the interval collapses onto the ratio. */
	const double c1[] = { 3, 3, 3 }, c2[] = { 2, 2 };
	stats_bootstrap_ratio(c1, 3, c2, 2, 1, 1, &lo, &hi);
	assert_close(lo, 1.5, 1e-15);
	assert_close(hi, 1.5, 1e-15);
	/* k = 2 columns: geometric mean of 2 and 8 is 4. */
	const double m1[] = { 2, 8, 2, 8 }, m2[] = { 1, 1, 1, 1 };
	assert_close(stats_bootstrap_ratio(m1, 2, m2, 2, 2, 7, &lo, &hi), 4, 1e-14);
	assert_close(lo, 4, 1e-14);
	/* Non-positive means: no ratio. */
	const double neg[] = { -1, -2 };
	assert_true(isnan(stats_bootstrap_ratio(neg, 2, y, 5, 1, 1, &lo, &hi)));
}

static void test_rng(void **state)
{
	(void)state;
	struct stats_rng a, b;
	stats_rng_seed(&a, 12345);
	stats_rng_seed(&b, 12345);
	for (int i = 0; i < 100; i++)
		assert_true(stats_rng_next(&a) == stats_rng_next(&b));
	/* below(n) stays in range and hits every value about equally often. */
	size_t counts[7] = { 0 };
	for (int i = 0; i < 70000; i++) {
		uint64_t v = stats_rng_below(&a, 7);
		assert_true(v < 7);
		counts[v]++;
	}
	for (int i = 0; i < 7; i++)
		assert_true(counts[i] > 9400 && counts[i] < 10600);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_t_distribution),
		cmocka_unit_test(test_normal_and_beta),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_mann_whitney),
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_spearman),
		cmocka_unit_test(test_modified_z),
		cmocka_unit_test(test_bootstrap),
		cmocka_unit_test(test_rng),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
