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
 *    t.test(sleep$extra[1:10]) -> 95 % CI -0.5297804 2.0297804, sd 1.789010.
 *  - Grubbs' critical values: NIST/SEMATECH e-Handbook 1.3.5.17 table.
 *  - log-scale Welch: samples built so the logs have a known mean and sd
 *    (log_samples), so df, se, interval and p follow in closed form.
 *  - Holm and Spearman: worked by hand in the comments below.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "decide/stats.h"

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

/* Grubbs' two-sided 5 % critical values (Grubbs 1969 / NIST handbook table). */
static void test_outliers(void **state)
{
	(void)state;
	assert_close(stats_grubbs_critical(3, 0.05), 1.155, 0.001);
	assert_close(stats_grubbs_critical(6, 0.05), 1.887, 0.001);
	assert_close(stats_grubbs_critical(10, 0.05), 2.290, 0.001);
	assert_true(isnan(stats_grubbs_critical(2, 0.05)));
	/* Seven runs, one far off: only it is flagged, with its deviation. */
	const double x[] = { 10, 10.1, 9.9, 10, 10.05, 9.95, 30 };
	double dev[7];
	bool flag[7];
	assert_int_equal(stats_outliers(x, 7, dev, flag), 1);
	assert_true(flag[6] && !flag[0] && !flag[5]);
	assert_close(dev[6], (30 - stats_mean(x, 7)) / stats_stddev(x, 7), 1e-12);
	/* Below STATS_OUTLIER_MIN_N runs nothing is flagged, however far. */
	assert_int_equal(stats_outliers(x + 2, 5, dev, flag), 0);
	assert_true(dev[4] > 1.7);
	/* A constant sample: no deviation, no flag. */
	const double same[] = { 4, 4, 4, 4, 4, 4, 4 };
	assert_int_equal(stats_outliers(same, 7, dev, flag), 0);
	assert_close(dev[3], 0, 0);
}

/* x = c exp(sd o_i), y = exp(sd o_i): logs with known mean and sd 0.1. */
static void log_samples(double c, double sd, double *x, double *y)
{
	static const double o[] = { -0.6324555320336759, 0.6324555320336759, 0,
				    -1.2649110640673518, 1.2649110640673518 };
	for (int i = 0; i < 5; i++) {
		x[i] = c * exp(sd * o[i]);
		y[i] = exp(sd * o[i]);
	}
}

static void test_log_welch(void **state)
{
	(void)state;
	double x[5], y[5];
	struct stats_ratio r;
	/* Equal sizes and variances: df = 8, se = 0.1 sqrt(2/5); a ratio at
	 * exactly t(0.975, 8) = 2.306004135 standard errors has p = 0.05 and its
	 * 95 % interval starts at exactly 1. */
	double se = 0.1 * sqrt(2.0 / 5);
	double c = exp(2.306004135 * se);
	log_samples(c, 0.1, x, y);
	assert_int_equal(stats_log_welch(x, 5, y, 5, 0.05, &r), 0);
	assert_close(r.ratio, c, 1e-12);
	assert_close(r.df, 8, 1e-9);
	assert_close(r.se, se, 1e-12);
	assert_close(r.sd_log, 0.1, 1e-12);
	assert_close(r.p, 0.05, 1e-8);
	assert_close(r.lo, 1, 1e-8);
	assert_close(r.hi, c * c, 1e-8);
	/* The interval is symmetric on the log scale around the ratio. */
	assert_close(log(r.hi) - log(r.ratio), log(r.ratio) - log(r.lo), 1e-12);
	/* One method: p < alpha exactly when the interval excludes 1, on many samples. */
	struct stats_rng rng;
	stats_rng_seed(&rng, 99);
	for (int k = 0; k < 2000; k++) {
		double a[4], b[6];
		for (int i = 0; i < 4; i++)
			a[i] = 100 + (double)(stats_rng_below(&rng, 2001)) / 100;
		for (int i = 0; i < 6; i++)
			b[i] = 100 + (double)(stats_rng_below(&rng, 2001)) / 100 + 3;
		for (double alpha = 0.01; alpha < 0.2; alpha += 0.04) {
			assert_int_equal(stats_log_welch(a, 4, b, 6, alpha, &r), 0);
			bool excl = r.lo > 1 || r.hi < 1;
			if (fabs(r.p - alpha) > 1e-9)
				assert_true(excl == (r.p < alpha));
		}
	}
	/* Exactly equal constant samples: ratio 1, no width, p 1; different: p 0. */
	const double k1[] = { 5, 5, 5 }, k2[] = { 5, 5 }, k3[] = { 4, 4 };
	assert_int_equal(stats_log_welch(k1, 3, k2, 2, 0.05, &r), 0);
	assert_close(r.ratio, 1, 0);
	assert_close(r.lo, 1, 0);
	assert_close(r.hi, 1, 0);
	assert_close(r.p, 1, 0);
	assert_int_equal(stats_log_welch(k1, 3, k3, 2, 0.05, &r), 0);
	assert_close(r.ratio, 1.25, 1e-15);
	assert_close(r.p, 0, 0);
	/* One run, or a value not > 0: no test, every field NAN. */
	assert_int_equal(stats_log_welch(x, 1, y, 5, 0.05, &r), -1);
	assert_true(isnan(r.ratio) && isnan(r.p) && isnan(r.lo));
	const double neg[] = { 1, -1, 2 };
	assert_int_equal(stats_log_welch(neg, 3, y, 5, 0.05, &r), -1);
}

static void test_ratio_geomean(void **state)
{
	(void)state;
	double x[5], y[5], x2[5], y2[5];
	struct stats_ratio lv[2], g;
	log_samples(2, 0.1, x, y);
	log_samples(8, 0.1, x2, y2);
	assert_int_equal(stats_log_welch(x, 5, y, 5, 0.05, &lv[0]), 0);
	assert_int_equal(stats_log_welch(x2, 5, y2, 5, 0.05, &lv[1]), 0);
	assert_int_equal(stats_ratio_geomean(lv, 2, 0.05, &g), 0);
	/* sqrt(2 * 8) = 4; variances add: se = sqrt(2) se / 2; df doubles. */
	assert_close(g.ratio, 4, 1e-12);
	assert_close(g.se, sqrt(2) * lv[0].se / 2, 1e-12);
	assert_close(g.df, 16, 1e-9);
	double h = stats_t_quantile(0.975, 16) * g.se;
	assert_close(g.lo, 4 * exp(-h), 1e-12);
	lv[1].se = NAN;
	assert_int_equal(stats_ratio_geomean(lv, 2, 0.05, &g), -1);
}

static void test_power(void **state)
{
	(void)state;
	/* Normal limit: (z(0.975) + z(0.8)) se = (1.959964 + 0.841621) * 0.1. */
	assert_close(stats_min_detectable(0.1, INFINITY, 0.05, 0.8), 0.2801585, 1e-6);
	assert_close(stats_min_detectable(0.1, 10, 0.05, 0.8),
		     (2.228138852 + 0.879057828) * 0.1, 1e-6);
	/* The smallest n that detects the effect; n - 1 does not. */
	size_t n = stats_runs_needed(0.05, 0.1, 0.05, 0.8, 1000);
	assert_true(n >= 3 && n < 10);
	assert_true(stats_min_detectable(0.05 * sqrt(2.0 / (double)n), 2.0 * (double)n - 2, 0.05,
					 0.8) <= 0.1);
	assert_true(stats_min_detectable(0.05 * sqrt(2.0 / (double)(n - 1)),
					 2.0 * (double)n - 4, 0.05, 0.8) > 0.1);
	/* Smaller effects need more runs; beyond max: max + 1. */
	assert_true(stats_runs_needed(0.05, 0.02, 0.05, 0.8, 1000) > n);
	assert_int_equal(stats_runs_needed(0.05, 1e-6, 0.05, 0.8, 1000), 1001);
	assert_int_equal(stats_runs_needed(0.05, 0, 0.05, 0.8, 50), 51);
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
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_spearman),
		cmocka_unit_test(test_outliers),
		cmocka_unit_test(test_log_welch),
		cmocka_unit_test(test_ratio_geomean),
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_rng),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
