/*
 * stats: the statistics the advisor rests its claims on.  Pure: no I/O, no
 * global state; every random choice comes from an explicit seed.
 *
 * Conventions: samples are arrays of doubles; NAN never appears in input
 * (callers drop absent values).  Functions that cannot produce a value (too
 * few observations) return NAN, which json_double writes as null.
 * References for each formula are in docs/advisor.md and the reference
 * values in tests/unit/test-stats.c.
 */
#ifndef TA_STATS_H
#define TA_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A fallible call whose result must be looked at (see decide.h). */
#ifndef DECIDE_MUST_CHECK
#define DECIDE_MUST_CHECK __attribute__((warn_unused_result))
#endif

struct stats_summary {
	size_t n;
	double mean, median, stddev;	/* stddev: sample (n-1); NAN for n < 2 */
	double cv;			/* stddev / |mean|; NAN when undefined */
	double ci_lo, ci_hi;		/* 95 % CI of the mean (Student t); NAN for n < 2 */
	double min, max;
};

/* n, mean, median, sample stddev, CV, 95 % t CI, min, max of x[0..n). */
void stats_summarize(const double *x, size_t n, struct stats_summary *out);
double stats_mean(const double *x, size_t n);
double stats_median(const double *x, size_t n);	/* does not reorder x */
double stats_stddev(const double *x, size_t n);

/* Special functions. */
double stats_normal_cdf(double z);
double stats_normal_quantile(double p);			/* 0 < p < 1 */
/* Regularized incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1. */
double stats_incbeta(double a, double b, double x);
double stats_t_cdf(double t, double df);
/* Inverse of stats_t_cdf: the p-quantile of Student's t with df > 0. */
double stats_t_quantile(double p, double df);

/* Welch's unequal-variance t-test, two-sided (on the values as they are). */
struct stats_test {
	double statistic;	/* t */
	double df;		/* Welch–Satterthwaite df */
	double p;		/* two-sided p-value; NAN when the test cannot run */
};
void stats_welch(const double *x, size_t nx, const double *y, size_t ny,
		 struct stats_test *out);
/* Spearman's rank correlation (average ranks for ties); NAN if undefined. */
double stats_spearman(const double *x, const double *y, size_t n);


/*
 * The smallest log-scale effect a two-sided test at alpha detects with the
 * given power, for standard error se and df: (t(1-alpha/2) + t(power)) se.
 */
double stats_min_detectable(double se, double df, double alpha, double power);
/*
 * The location of a sample by its gamma-trimmed mean, with the standard
 * error of Tukey & McLaughlin (the one-sample form of Yuen's test):
 * g = floor(gamma n) values are trimmed from each end, the rest averaged;
 * se^2 = (n - 1) s_w^2 / (h (h - 1)) with h = n - 2g and s_w^2 the sample
 * variance of the g-winsorized values; df = h - 1.  A few extreme values
 * (a run 3x slower than the others) move neither the estimate nor its
 * standard error much, and the test keeps its level on normal data.
 *
 * Infinite values are allowed: a failed run counts as the worst (-inf) or
 * best (+inf) outcome.  When one end holds more of them than g, g grows to
 * trim them all (from both ends alike), so up to g censored values leave
 * the estimate exactly as the uncensored sample's would be when they were
 * its most extreme ones.  Fails (-1, every field NAN) when fewer than 2
 * values would remain, or x holds NAN.
 */
struct stats_location {
	size_t n, trimmed;		/* values; trimmed from each end */
	double est, se, df;
};
DECIDE_MUST_CHECK int stats_trimmed_location(const double *x, size_t n, double gamma, struct stats_location *out);
/*
 * Yuen's two-sample test: the difference of the trimmed means of x and y
 * (x - y), its standard error (squared ones added) and the
 * Welch-Satterthwaite df over h - 1 each.  Finite values only.
 */
DECIDE_MUST_CHECK int stats_trimmed_difference(const double *x, size_t nx, const double *y, size_t ny,
			     double gamma, struct stats_location *out);
/* Two-sided p-value of t with df degrees of freedom (t may be infinite). */
double stats_t_p(double t, double df);
/* P(F > f) for Fisher's F with (df1, df2) degrees of freedom. */
double stats_f_upper(double f, double df1, double df2);
/*
 * The p-quantile of chi-square with df degrees of freedom, by the
 * Wilson-Hilferty approximation (within about 1 % from df = 2; a planning
 * figure, never a test).
 */
double stats_chi2_quantile(double p, double df);
/* P(X >= k) for X binomial(n, p). */
double stats_binomial_upper(size_t k, size_t n, double p);
/*
 * Fisher's exact test, one-sided: the probability of a failures or more
 * among n1 outcomes when a + b failures fall at random among n1 + n2
 * (hypergeometric upper tail).  1 when a is 0 or nothing failed.
 */
double stats_fisher_more(size_t a, size_t n1, size_t b, size_t n2);

/* The seeded RNG of the simulations and fixtures (xoshiro256** through splitmix64). */
struct stats_rng {
	uint64_t s[4];
};
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
/* A standard normal deviate (by inversion of a 53-bit uniform). */
double stats_rng_normal(struct stats_rng *r);

#endif
