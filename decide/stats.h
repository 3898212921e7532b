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

/*
 * Outlier flags (stats_outliers): none below this many runs, where no rule
 * can tell an outlier from the spread; above, Grubbs' two-sided critical
 * value at this level for the sample size.
 */
#define STATS_OUTLIER_MIN_N 6
#define STATS_OUTLIER_ALPHA 0.05

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

/*
 * Studentized deviations (x - mean) / stddev into dev[0..n) (0 when the
 * stddev is 0 or n < 2) and outlier flags into flag[0..n): with n >=
 * STATS_OUTLIER_MIN_N, |dev| above Grubbs' critical value
 * stats_grubbs_critical(n, STATS_OUTLIER_ALPHA).  On normal data each run
 * is flagged with probability at most alpha / n (under 1 % of runs for
 * n >= 6).  Returns how many are flagged.
 */
size_t stats_outliers(const double *x, size_t n, double *dev, bool *flag);
/* Grubbs' two-sided critical value: (n-1)/sqrt(n) sqrt(t^2 / (n-2+t^2)),
 * t the 1 - alpha/(2n) quantile of Student's t with n-2 df; NAN for n < 3. */
double stats_grubbs_critical(size_t n, double alpha);

/* Welch's unequal-variance t-test, two-sided (on the values as they are). */
struct stats_test {
	double statistic;	/* t */
	double df;		/* Welch–Satterthwaite df */
	double p;		/* two-sided p-value; NAN when the test cannot run */
};
void stats_welch(const double *x, size_t nx, const double *y, size_t ny,
		 struct stats_test *out);
/* Holm's step-down adjustment of p[0..n) into adj[0..n) (may alias p). */
void stats_holm(const double *p, size_t n, double *adj);

/* Spearman's rank correlation (average ranks for ties); NAN if undefined. */
double stats_spearman(const double *x, const double *y, size_t n);

/* Average ranks (1-based) of x into r; returns the tie-correction sum of t^3 - t. */
double stats_rank(const double *x, size_t n, double *r);

/*
 * The ratio of two positive samples by Welch's t on the log scale: one
 * method gives the estimate, the two-sided (1 - alpha) interval and the
 * p-value, so p < alpha exactly when the interval excludes 1.
 *   ratio = exp(mean log x - mean log y) (the ratio of geometric means),
 *   lo, hi = exp(log_diff -+ t(1 - alpha/2, df) se).
 * Fails (returns -1, every field NAN) when nx or ny < 2 or a value is not
 * > 0.  Two constant samples give a zero-width interval (p 1 when equal,
 * 0 otherwise).
 */
struct stats_ratio {
	double ratio, lo, hi;
	double log_diff, se, df;	/* on the log scale */
	double p;			/* two-sided, for ratio = 1 */
	double sd_log;			/* pooled sd of the logs (sample sizes ahead) */
};
int stats_log_welch(const double *x, size_t nx, const double *y, size_t ny, double alpha,
		    struct stats_ratio *out);
/*
 * The geometric mean of k independent ratios (environment levels): log
 * differences averaged, variances added (se = sqrt(sum se^2) / k), df by
 * Welch–Satterthwaite, interval and p as above.  Fails like stats_log_welch
 * when any input is undefined.
 */
int stats_ratio_geomean(const struct stats_ratio *r, size_t k, double alpha,
			struct stats_ratio *out);
/*
 * The smallest log-scale effect a two-sided test at alpha detects with the
 * given power, for standard error se and df: (t(1-alpha/2) + t(power)) se.
 */
double stats_min_detectable(double se, double df, double alpha, double power);
/*
 * Runs per group (two equal groups, Welch on the log scale) for an effect
 * `effect` (log scale, > 0) to be detected at alpha with the given power
 * when the logs have sd sd_log; max + 1 when even max runs do not suffice.
 */
size_t stats_runs_needed(double sd_log, double effect, double alpha, double power, size_t max);

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
int stats_trimmed_location(const double *x, size_t n, double gamma, struct stats_location *out);
/*
 * Yuen's two-sample test: the difference of the trimmed means of x and y
 * (x - y), its standard error (squared ones added) and the
 * Welch-Satterthwaite df over h - 1 each.  Finite values only.
 */
int stats_trimmed_difference(const double *x, size_t nx, const double *y, size_t ny,
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

/* The seeded RNG of the simulations and fixtures (xoshiro256** through splitmix64). */
struct stats_rng {
	uint64_t s[4];
};
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
/* Uniform integer in [0, n), unbiased (Lemire's method). */
uint64_t stats_rng_below(struct stats_rng *r, uint64_t n);
/* A standard normal deviate (by inversion of a 53-bit uniform). */
double stats_rng_normal(struct stats_rng *r);

#endif
