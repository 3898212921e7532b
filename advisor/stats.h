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

/* Resamples of the bootstrap CIs (documented in docs/advisor.md). */
#define STATS_BOOTSTRAP_RESAMPLES 10000
/* |modified z| above this flags an outlier (Iglewicz & Hoaglin). */
#define STATS_OUTLIER_Z 3.5

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
 * Modified z scores 0.6745 (x - median) / MAD (Iglewicz & Hoaglin 1993)
 * into z[0..n); when MAD is 0 every z is 0 except values off the median,
 * which get +-INFINITY (they differ from a constant majority).
 * Returns how many |z| > STATS_OUTLIER_Z.
 */
size_t stats_modified_z(const double *x, size_t n, double *z);

/* Welch's unequal-variance t-test, two-sided. */
struct stats_test {
	double statistic;	/* t (Welch) or U of the first sample (Mann-Whitney) */
	double df;		/* Welch–Satterthwaite df; NAN for Mann-Whitney */
	double p;		/* two-sided p-value; NAN when the test cannot run */
	bool exact;		/* Mann-Whitney: exact distribution used */
};
void stats_welch(const double *x, size_t nx, const double *y, size_t ny,
		 struct stats_test *out);
/*
 * Mann–Whitney U (Wilcoxon rank-sum), two-sided.  Exact distribution when
 * there are no ties and nx + ny <= 50; otherwise the normal approximation
 * with tie correction and continuity correction (as R's wilcox.test).
 */
void stats_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
			struct stats_test *out);

/* Holm's step-down adjustment of p[0..n) into adj[0..n) (may alias p). */
void stats_holm(const double *p, size_t n, double *adj);

/* Spearman's rank correlation (average ranks for ties); NAN if undefined. */
double stats_spearman(const double *x, const double *y, size_t n);

/* Average ranks (1-based) of x into r; returns the tie-correction sum of t^3 - t. */
double stats_rank(const double *x, size_t n, double *r);

/*
 * Seeded percentile-bootstrap 95 % CI (STATS_BOOTSTRAP_RESAMPLES resamples,
 * xoshiro256** seeded through splitmix64) of the geometric mean over k
 * columns of mean(x[:,j]) / mean(y[:,j]).  x is nx rows of k values
 * (row-major), y is ny rows; each resample draws nx rows of x and ny rows
 * of y with replacement.  k = 1 is the plain ratio of means.  Returns the
 * point estimate; lo/hi are NAN when nx or ny is 0 or a mean is not > 0.
 */
double stats_bootstrap_ratio(const double *x, size_t nx, const double *y, size_t ny,
			     size_t k, uint64_t seed, double *lo, double *hi);

/* The RNG behind the bootstrap, exposed for tests. */
struct stats_rng {
	uint64_t s[4];
};
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
/* Uniform integer in [0, n), unbiased (Lemire's method). */
uint64_t stats_rng_below(struct stats_rng *r, uint64_t n);

#endif
