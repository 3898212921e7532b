/*
 * Unit tests of decide/stats against reference values computed
 * independently.  Sources:
 *  - closed forms: Student t with 1 df is Cauchy (F = 1/2 + atan(t)/pi), with
 *    2 df F = 1/2 + t / (2 sqrt(2 + t^2)); I_x(a,1) = x^a, I_x(1,b) = 1-(1-x)^b.
 *  - t quantiles: standard tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2),
 *    same digits as R's qt().
 *  - R 4.x on the `sleep` data set (Cushny & Peebles; extra by group):
 *    t.test(extra ~ group, data = sleep)  -> t = -1.860813, df = 17.77647,
 *        p-value = 0.07939414;
 *    t.test(sleep$extra[1:10]) -> 95 % CI -0.5297804 2.0297804, sd 1.789010.
 *  - trimmed means (Tukey & McLaughlin, Yuen): worked by hand below; with
 *    no trimming they are the one-sample t and Welch's test.
 *  - F: F(1, 2) is the square of t with 2 df; binomial tails by hand;
 *    chi-square quantiles: tables (Wilson-Hilferty within 1 %).
 *  - Spearman: worked by hand in the comments below.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

	/* A mean of 0 has no coefficient of variation; a mean of 1 has sd / 1. */
	const double sym[] = { -1, 1 }, one[] = { 0.5, 1.5 };
	stats_summarize(sym, 2, &s);
	assert_true(isnan(s.cv));
	stats_summarize(one, 2, &s);
	assert_close(s.cv, sqrt(0.5), 1e-15);

	/* One observation: a mean but no spread, no CI. */
	stats_summarize(sleep1, 1, &s);
	assert_close(s.mean, 0.7, 0);
	assert_true(isnan(s.stddev) && isnan(s.ci_lo) && isnan(s.cv));

	/* Large offset: the two-pass variance must not cancel catastrophically. */
	const double big[] = { 1e9 + 1, 1e9 + 2, 1e9 + 3 };
	assert_close(stats_stddev(big, 3), 1.0, 1e-9);
	/* Two observations: the smallest sample with a spread, a CV and a CI
	 * ({1, 3}: sd sqrt 2, CI 2 -/+ t(0.975, 1) sqrt 2 / sqrt 2). */
	const double pair[] = { 1, 3 };
	stats_summarize(pair, 2, &s);
	assert_close(s.cv, sqrt(2) / 2, 1e-15);
	assert_close(s.ci_lo, 2 - 12.706204736, 1e-8);
	assert_close(s.ci_hi, 2 + 12.706204736, 1e-8);
	/* Median of an even count and does not reorder its input. */
	const double four[] = { 4, 1, 3, 2 };
	assert_close(stats_median(four, 4), 2.5, 0);
	assert_close(four[0], 4, 0);
}

static int cmp_ref(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * Medians of more than 32 values are selected, not sorted: the same value
 * as sorting gives, for odd and even counts, many ties, sorted and reversed
 * input (a selection's worst cases), and the input left as it was.
 */
static void test_median_selected(void **state)
{
	(void)state;
	struct stats_rng rng;
	stats_rng_seed(&rng, 22);
	static double x[701], copy[701], ref[701];
	const size_t sizes[] = { 31, 32, 33, 34, 64, 101, 200, 701 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
		size_t n = sizes[k];
		for (int kind = 0; kind < 4; kind++) {
			for (size_t i = 0; i < n; i++) {
				double u = stats_rng_normal(&rng);
				x[i] = kind == 0 ? u : kind == 1 ? floor(u * 2)	/* ties */
				       : kind == 2 ? (double)i : (double)(n - i);
			}
			memcpy(copy, x, n * sizeof(*x));
			memcpy(ref, x, n * sizeof(*x));
			qsort(ref, n, sizeof(*ref), cmp_ref);
			double want = n % 2 ? ref[n / 2] : (ref[n / 2 - 1] + ref[n / 2]) / 2;
			assert_true(stats_median(x, n) == want);
			assert_memory_equal(x, copy, n * sizeof(*x));
		}
	}
	/* Many short arrays just over the cut, of few distinct values (ties on
	 * the pivot) and of many: a partition stopping one step early, or the
	 * lower middle of an even count taken from all but the first of the
	 * lower half, shows on a few of them only. */
	for (int trial = 0; trial < 4000; trial++) {
		size_t n = 33 + (size_t)(trial % 40);
		uint64_t range = trial % 80 < 40 ? 3 : 1000;
		for (size_t i = 0; i < n; i++)
			x[i] = (double)(stats_rng_next(&rng) % range);
		memcpy(ref, x, n * sizeof(*x));
		qsort(ref, n, sizeof(*ref), cmp_ref);
		double want = n % 2 ? ref[n / 2] : (ref[n / 2 - 1] + ref[n / 2]) / 2;
		if (stats_median(x, n) != want)
			fail_msg("trial %d: median of %zu values %g, sorted %g", trial, n,
				 stats_median(x, n), want);
	}
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
	/* Round trips where the normal start is far off: fractional df below 1
	 * (tails heavier than Cauchy's), far tails; the tail itself compared. */
	const double dfs[] = { 0.1, 0.3, 0.5, 1.5, 3 };
	const double ps[] = { 0.51, 0.75, 0.9, 0.99, 0.999, 1 - 1e-6, 1 - ldexp(1, -30) };
	for (size_t i = 0; i < sizeof(dfs) / sizeof(*dfs); i++)
		for (size_t j = 0; j < sizeof(ps) / sizeof(*ps); j++) {
			double q = stats_t_quantile(ps[j], dfs[i]);
			if (!(q > 0) || fabs(stats_t_cdf(-q, dfs[i]) / (1 - ps[j]) - 1) > 1e-9)
				fail_msg("df %g p %.17g: quantile %g, tail there %g", dfs[i], ps[j],
					 q, stats_t_cdf(-q, dfs[i]));
		}
	/* Infinite t (a zero standard error): all or nothing. */
	assert_close(stats_t_cdf(INFINITY, 3), 1, 0);
	assert_close(stats_t_cdf(-INFINITY, 3), 0, 0);
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
static void test_power(void **state)
{
	(void)state;
	/* Normal limit: (z(0.975) + z(0.8)) se = (1.959964 + 0.841621) * 0.1. */
	assert_close(stats_min_detectable(0.1, INFINITY, 0.05, 0.8), 0.2801585, 1e-6);
	assert_close(stats_min_detectable(0.1, 10, 0.05, 0.8),
		     (2.228138852 + 0.879057828) * 0.1, 1e-6);
	assert_true(isnan(stats_min_detectable(NAN, 10, 0.05, 0.8)));
	assert_true(isnan(stats_min_detectable(0.1, 0, 0.05, 0.8)));
	/* 1 df (Cauchy: t(p) = tan(pi (p - 1/2))): (12.706204736 + 1.3763819205) * 0.1. */
	assert_close(stats_min_detectable(0.1, 1, 0.05, 0.8),
		     (tan(M_PI * 0.475) + tan(M_PI * 0.3)) * 0.1, 1e-9);
	assert_close(stats_min_detectable(0.1, 0.5, 0.05, 0.8),
		     (stats_t_quantile(0.975, 0.5) + stats_t_quantile(0.8, 0.5)) * 0.1, 0);
	assert_true(stats_min_detectable(0.1, 0.5, 0.05, 0.8) > stats_min_detectable(0.1, 1, 0.05, 0.8));
}

/*
 * The trimmed location by hand: 1..9 and 100, 10 % trimmed: g = 1, the
 * 8 middle values average 5.5; winsorized 2,2,3,...,9,9 (mean 5.5, SS
 * 4 * 3.5^2 + 2 * 2.5^2 + 2 * 1.5^2 + 2 * 0.5^2 = 66.5); se =
 * sqrt(66.5 / (8 * 7)), df 7.  The outlier moves nothing.
 */
static void test_trimmed(void **state)
{
	(void)state;
	const double x[] = { 3, 1, 100, 2, 4, 5, 6, 7, 8, 9 };
	struct stats_location l;
	assert_int_equal(stats_trimmed_location(x, 10, 0.1, &l), 0);
	assert_int_equal(l.n, 10);
	assert_int_equal(l.trimmed, 1);
	assert_close(l.est, 5.5, 1e-12);
	assert_close(l.se, sqrt(66.5 / 56), 1e-12);
	assert_close(l.df, 7, 0);
	assert_close(x[2], 100, 0);	/* the input is not reordered */
	/* gamma 0: the one-sample t (the sleep data's first group). */
	assert_int_equal(stats_trimmed_location(sleep1, 10, 0, &l), 0);
	assert_int_equal(l.trimmed, 0);
	assert_close(l.est, 0.75, 1e-12);
	assert_close(l.se, 1.789010 / sqrt(10), 1e-6);
	assert_close(l.df, 9, 0);
	/* Below 10 values 10 % trims nothing. */
	assert_int_equal(stats_trimmed_location(x, 9, 0.1, &l), 0);
	assert_int_equal(l.trimmed, 0);
	/* Failures (-inf) are trimmed, as many from each end: {-inf, 1, 2, 3}:
	 * g = 1, the middle 1 and 2 (mean 1.5), winsorized 1, 1, 2, 2 (SS 1). */
	const double f[] = { 2, -INFINITY, 1, 3 };
	assert_int_equal(stats_trimmed_location(f, 4, 0.1, &l), 0);
	assert_int_equal(l.trimmed, 1);
	assert_close(l.est, 1.5, 1e-12);
	assert_close(l.se, sqrt(1.0 / 2), 1e-12);
	assert_close(l.df, 1, 0);
	const double up[] = { 2, INFINITY, 1, 3 };
	assert_int_equal(stats_trimmed_location(up, 4, 0.1, &l), 0);
	assert_close(l.est, 2.5, 1e-12);
	/* Too many to trim, too few values, NAN: undefined. */
	const double two[] = { -INFINITY, -INFINITY, 1, 2, 3 };
	assert_int_equal(stats_trimmed_location(two, 5, 0.1, &l), -1);
	assert_true(isnan(l.est) && isnan(l.se) && isnan(l.df));
	assert_int_equal(stats_trimmed_location(x, 1, 0.1, &l), -1);
	const double bad[] = { 1, NAN, 2 };
	assert_int_equal(stats_trimmed_location(bad, 3, 0.1, &l), -1);
	/* Two values: df 1. */
	assert_int_equal(stats_trimmed_location(x, 2, 0.1, &l), 0);
	assert_close(l.est, 2, 1e-12);
	assert_close(l.se, 1, 1e-12);
	assert_close(l.df, 1, 0);
}

/* Yuen's two-sample test without trimming is Welch's (R on the sleep data). */
static void test_trimmed_difference(void **state)
{
	(void)state;
	struct stats_location d;
	assert_int_equal(stats_trimmed_difference(sleep1, 10, sleep2, 10, 0, &d), 0);
	assert_close(d.est, 0.75 - 2.33, 1e-12);
	assert_int_equal(d.n, 20);	/* the values behind it, both samples */
	assert_close(d.est / d.se, -1.860813, 1e-6);
	assert_close(d.df, 17.77647, 1e-5);
	assert_close(stats_t_p(d.est / d.se, d.df), 0.07939414, 1e-7);
	/* Trimmed: a wild value in one sample moves its trimmed mean little. */
	double a[10], b[10];
	for (int i = 0; i < 10; i++) {
		a[i] = i;
		b[i] = i + 10;
	}
	b[4] = 1000;
	assert_int_equal(stats_trimmed_difference(b, 10, a, 10, 0.1, &d), 0);
	assert_true(d.est > 9.5 && d.est < 11);
	assert_int_equal(d.trimmed, 2);
	/* Constant samples: se 0, df the sum. */
	const double c1[] = { 1, 1, 1 }, c2[] = { 2, 2, 2 };
	assert_int_equal(stats_trimmed_difference(c2, 3, c1, 3, 0.1, &d), 0);
	assert_close(d.est, 1, 0);
	assert_close(d.se, 0, 0);
	assert_close(d.df, 4, 0);
	/* Infinite values are for paired failures only: refused here. */
	const double inf[] = { 1, INFINITY, 2 };
	assert_int_equal(stats_trimmed_difference(inf, 3, c1, 3, 0.1, &d), -1);
	assert_int_equal(stats_trimmed_difference(c1, 3, inf, 3, 0.1, &d), -1);
	assert_int_equal(stats_trimmed_difference(c1, 1, c2, 3, 0.1, &d), -1);
}

/* Tails: two-sided t, F, binomial; chi-square quantiles. */
static void test_tails(void **state)
{
	(void)state;
	/* t with 2 df: P(|T| > t) = 1 - t / sqrt(2 + t^2). */
	assert_close(stats_t_p(1, 2), 1 - 1 / sqrt(3), 1e-12);
	assert_close(stats_t_p(-1, 2), 1 - 1 / sqrt(3), 1e-12);
	assert_close(stats_t_p(INFINITY, 5), 0, 0);
	assert_true(isnan(stats_t_p(NAN, 5)) && isnan(stats_t_p(1, 0)));
	assert_true(isnan(stats_t_p(INFINITY, 0)) && isnan(stats_t_p(INFINITY, -1)));
	/* F(1, 2) = T(2)^2: P(F > f) = P(|T| > sqrt f). */
	assert_close(stats_f_upper(0.5, 1, 2), 1 - sqrt(0.5) / sqrt(2.5), 1e-12);
	assert_close(stats_f_upper(4, 1, 2), 1 - 2 / sqrt(6), 1e-12);
	assert_close(stats_f_upper(0, 3, 4), 1, 0);
	assert_true(isnan(stats_f_upper(NAN, 1, 2)) && isnan(stats_f_upper(1, 0, 2)) &&
		    isnan(stats_f_upper(1, 2, 0)));
	/* Degrees of freedom out of range are no distribution, whatever f. */
	assert_true(isnan(stats_f_upper(0, 0, 2)) && isnan(stats_f_upper(0, 2, 0)) &&
		    isnan(stats_f_upper(-1, 2, -1)));
	/* Binomial: P(X >= 2 | 3, 0.5) = 0.5; P(X >= 3 | 3, 0.2) = 0.008. */
	assert_close(stats_binomial_upper(2, 3, 0.5), 0.5, 1e-12);
	assert_close(stats_binomial_upper(3, 3, 0.2), 0.008, 1e-12);
	assert_close(stats_binomial_upper(1, 4, 0.1), 1 - pow(0.9, 4), 1e-12);
	assert_close(stats_binomial_upper(0, 4, 0.1), 1, 0);
	assert_close(stats_binomial_upper(5, 4, 0.1), 0, 0);
	/* chi-square: 9.342 (p 0.5, 10 df), 3.940 (0.05, 10), 0.5754 (0.25, 2). */
	assert_close(stats_chi2_quantile(0.5, 10), 9.342, 0.01 * 9.342);
	assert_close(stats_chi2_quantile(0.05, 10), 3.940, 0.01 * 3.940);
	assert_close(stats_chi2_quantile(0.25, 2), 0.5754, 0.03 * 0.5754);
	assert_true(stats_chi2_quantile(0.35, 4) < 4 && stats_chi2_quantile(0.65, 4) > 4);
	assert_true(isnan(stats_chi2_quantile(0, 3)) && isnan(stats_chi2_quantile(1, 3)) &&
		    isnan(stats_chi2_quantile(0.5, 0)));
}

static void test_rng(void **state)
{
	(void)state;
	struct stats_rng a, b;
	stats_rng_seed(&a, 12345);
	stats_rng_seed(&b, 12345);
	for (int i = 0; i < 100; i++)
		assert_true(stats_rng_next(&a) == stats_rng_next(&b));
	/* Normal deviates: mean 0, sd 1 (20000 draws: within 0.03). */
	double sum = 0, ss = 0;
	for (int i = 0; i < 20000; i++) {
		double z = stats_rng_normal(&a);
		sum += z;
		ss += z * z;
	}
	assert_close(sum / 20000, 0, 0.03);
	assert_close(sqrt(ss / 20000), 1, 0.03);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_median_selected),
		cmocka_unit_test(test_t_distribution),
		cmocka_unit_test(test_normal_and_beta),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_spearman),
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_trimmed),
		cmocka_unit_test(test_trimmed_difference),
		cmocka_unit_test(test_tails),
		cmocka_unit_test(test_rng),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
