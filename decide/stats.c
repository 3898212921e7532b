/* stats: descriptive statistics, tests, log-scale ratios, power and the seeded RNG; see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/splitmix.h"
#include "../util/strbuf.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Arrays of at most this many are sorted by insertion. */
#define INSERTION_MAX 32

/*
 * Sorts x ascending, stably, as qsort with cmp_double does; the few units
 * of one comparison (a race's look sorts thousands of such arrays) by
 * insertion, without qsort's call per comparison.
 */
static void sort_doubles(double *x, size_t n)
{
	if (n > INSERTION_MAX) {
		qsort(x, n, sizeof(*x), cmp_double);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		double v = x[i];
		size_t j = i;
		for (; j > 0 && x[j - 1] > v; j--)
			x[j] = x[j - 1];
		x[j] = v;
	}
}

double stats_mean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

/* Two-pass variance: the one-pass formula loses everything on large means. */
double stats_stddev(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	double m = stats_mean(x, n), ss = 0;
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - m;
		ss += d * d;
	}
	return sqrt(ss / (double)(n - 1));
}

/* Median of an already sorted array, n > 0. */
static double sorted_median(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * Puts the k-th smallest of s[0..n) at s[k], the smaller ones before it
 * and the larger after (Hoare's selection, median of three pivots): the
 * same value a sort puts there, in linear time.
 */
static void select_kth(double *s, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (hi > lo + 16) {
		size_t mid = lo + (hi - lo) / 2;
		double a = s[lo], b = s[mid], c = s[hi];
		double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		size_t i = lo, j = hi;
		while (i <= j) {
			while (s[i] < pivot)
				i++;
			while (s[j] > pivot)
				j--;
			if (i <= j) {
				double t = s[i];
				s[i++] = s[j];
				s[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
	sort_doubles(s + lo, hi - lo + 1);
}

double stats_median(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double *s = xmalloc(n * sizeof(*s));
	memcpy(s, x, n * sizeof(*s));
	double m;
	if (n <= INSERTION_MAX) {
		sort_doubles(s, n);
		m = sorted_median(s, n);
	} else {
		/* Selected, not sorted: the lower middle is the largest below the upper. */
		select_kth(s, n, n / 2);
		m = s[n / 2];
		if (n % 2 == 0) {
			double below = s[0];
			for (size_t i = 1; i < n / 2; i++)
				below = fmax(below, s[i]);
			m = (below + m) / 2;
		}
	}
	free(s);
	return m;
}

void stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
	out->n = n;
	out->mean = stats_mean(x, n);
	out->median = stats_median(x, n);
	out->stddev = stats_stddev(x, n);
	out->cv = n >= 2 && out->mean != 0 ? out->stddev / fabs(out->mean) : NAN;
	out->min = out->max = n ? x[0] : NAN;
	for (size_t i = 1; i < n; i++) {
		out->min = fmin(out->min, x[i]);
		out->max = fmax(out->max, x[i]);
	}
	if (n >= 2) {
		double h = stats_t_quantile(0.975, (double)(n - 1)) * out->stddev /
			   sqrt((double)n);
		out->ci_lo = out->mean - h;
		out->ci_hi = out->mean + h;
	} else {
		out->ci_lo = out->ci_hi = NAN;
	}
}

/* ---- special functions ------------------------------------------------ */

double stats_normal_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/*
 * Acklam's rational approximation (relative error 1.15e-9), polished by one
 * Halley step on erfc, which brings it to full double precision.
 */
double stats_normal_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01,
		2.506628277459239 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838, -2.549732539343734, 4.374664141464968,
		2.938163982698783 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
		2.445134137142996, 3.754408661907416 };
	if (!(p > 0 && p < 1))
		return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
	double q, r, x;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p > 1 - 0.02425) {
		q = sqrt(-2 * log1p(-p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		     ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	double e = stats_normal_cdf(x) - p;
	double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

/* One step of the modified Lentz method: updates c and d by the
 * coefficient aa and returns the factor the fraction is multiplied by. */
static double lentz_step(double aa, double *c, double *d)
{
	const double tiny = 1e-300;
	*d = 1 + aa * *d;
	if (fabs(*d) < tiny)
		*d = tiny;
	*c = 1 + aa / *c;
	if (fabs(*c) < tiny)
		*c = tiny;
	*d = 1 / *d;
	return *d * *c;
}

/*
 * Continued fraction for the incomplete beta (modified Lentz), as in
 * Numerical Recipes 6.4; converges fast for x < (a+1)/(a+b+2).
 */
static double incbeta_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap;
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 1000; m++) {
		int m2 = 2 * m;
		h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
		double del = lentz_step(-(a + m) * (qab + m) * x /
		    ((a + m2) * (qap + m2)), &c, &d);
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double stats_incbeta(double a, double b, double x)
{
	if (!(a > 0 && b > 0) || isnan(x))
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * incbeta_cf(a, b, x) / a;
	return 1 - exp(lbt) * incbeta_cf(b, a, 1 - x) / b;
}

/* P(T > t) for t >= 0, computed directly so the far tail keeps its precision. */
static double t_upper_tail(double t, double df)
{
	return 0.5 * stats_incbeta(df / 2, 0.5, df / (df + t * t));
}

double stats_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	double tail = t_upper_tail(fabs(t), df);
	return t > 0 ? 1 - tail : tail;
}

static double t_pdf(double t, double df)
{
	return exp(lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * M_PI) -
		   (df + 1) / 2 * log1p(t * t / df));
}

/*
 * Solves P(T > t) = 1 - p for p in (1/2, 1) (stats_t_quantile's cases) by
 * Newton's method on the upper tail, safeguarded by a bracket [lo, hi] that
 * bisection falls back on.  Working on the tail (not the CDF) keeps
 * precision for p near 1.
 */
static double t_quantile_solve(double p, double df)
{
	double target = 1 - p;
	double lo = 0, hi = 1;
	while (t_upper_tail(hi, df) > target && hi < 1e300)
		hi *= 2;
	/* p > 1/2: the normal quantile, the start, is above 0 = lo. */
	double t = fmin(stats_normal_quantile(p), hi);
	for (int i = 0; i < 300; i++) {
		double f = t_upper_tail(t, df) - target;
		if (f > 0)
			lo = t;
		else
			hi = t;
		double next = t + f / t_pdf(t, df);	/* d(tail)/dt = -pdf */
		if (!(next > lo && next < hi))
			next = (lo + hi) / 2;
		if (fabs(next - t) <= 1e-15 * fabs(next) || hi - lo <= 1e-15 * hi) {
			t = next;
			break;
		}
		t = next;
	}
	return t;
}

/*
 * Solving takes ~100 incomplete-beta evaluations, and a race's simulation
 * (plan's expected runs) asks for the same few (p, df) millions of times:
 * the answers are kept in a small table per thread, the same values.
 */
#define T_QUANTILE_CACHE 4096
static _Thread_local struct { double p, df, t; } t_quantile_cache[T_QUANTILE_CACHE];

double stats_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	uint64_t bp, bd;
	memcpy(&bp, &p, sizeof(bp));
	memcpy(&bd, &df, sizeof(bd));
	uint64_t key = bp ^ (bd << 32 | bd >> 32);	/* an integer df's bits are all high */
	size_t at = (size_t)(splitmix64_next(&key) % T_QUANTILE_CACHE);
	if (t_quantile_cache[at].p == p && t_quantile_cache[at].df == df)
		return t_quantile_cache[at].t;
	double t = t_quantile_solve(p, df);
	t_quantile_cache[at].p = p;
	t_quantile_cache[at].df = df;
	t_quantile_cache[at].t = t;
	return t;
}

/* ---- tests -------------------------------------------------------------- */

void stats_welch(const double *x, size_t nx, const double *y, size_t ny,
		 struct stats_test *out)
{
	out->statistic = out->df = out->p = NAN;
	if (nx < 2 || ny < 2)
		return;
	double mx = stats_mean(x, nx), my = stats_mean(y, ny);
	double sx = stats_stddev(x, nx), sy = stats_stddev(y, ny);
	double vx = sx * sx / (double)nx, vy = sy * sy / (double)ny;
	double se2 = vx + vy;
	if (se2 == 0) {
		/* Two constant samples: identical, or as different as can be. */
		out->statistic = mx == my ? 0 : copysign(INFINITY, mx - my);
		out->p = mx == my ? 1 : 0;
		return;
	}
	double t = (mx - my) / sqrt(se2);
	double df = se2 * se2 / (vx * vx / (double)(nx - 1) + vy * vy / (double)(ny - 1));
	out->statistic = t;
	out->df = df;
	out->p = stats_incbeta(df / 2, 0.5, df / (df + t * t));
}

struct ranked {
	double v;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	return (x->v > y->v) - (x->v < y->v);
}

/* Average ranks (1-based) of x into r. */
static void rank_average(const double *x, size_t n, double *r)
{
	struct ranked *s = xmalloc(n * sizeof(*s));
	for (size_t i = 0; i < n; i++)
		s[i] = (struct ranked){ x[i], i };
	qsort(s, n, sizeof(*s), cmp_ranked);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && s[j + 1].v == s[i].v)
			j++;
		double avg = (double)(i + j + 2) / 2;	/* ranks i+1 .. j+1 */
		for (size_t k = i; k <= j; k++)
			r[s[k].i] = avg;
		i = j + 1;
	}
	free(s);
}

double stats_spearman(const double *x, const double *y, size_t n)
{
	if (n < 2)
		return NAN;
	double *rx = xmalloc(n * sizeof(*rx)), *ry = xmalloc(n * sizeof(*ry));
	rank_average(x, n, rx);
	rank_average(y, n, ry);
	double mx = stats_mean(rx, n), my = stats_mean(ry, n);
	double sxy = 0, sxx = 0, syy = 0;
	for (size_t i = 0; i < n; i++) {
		double dx = rx[i] - mx, dy = ry[i] - my;
		sxy += dx * dy;
		sxx += dx * dx;
		syy += dy * dy;
	}
	free(rx);
	free(ry);
	/* A constant sample (all ranks equal, every dx or dy exactly 0): 0 / 0, NAN. */
	return sxy / sqrt(sxx * syy);
}

double stats_min_detectable(double se, double df, double alpha, double power)
{
	if (!(df > 0))
		return NAN;	/* a NAN se makes a NAN below */
	if (isinf(df))
		return (stats_normal_quantile(1 - alpha / 2) + stats_normal_quantile(power)) * se;
	return (stats_t_quantile(1 - alpha / 2, df) + stats_t_quantile(power, df)) * se;
}

/* ---- seeded RNG ------------------------------------------------------------- */

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64_next(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** 1.0 (Blackman & Vigna). */
uint64_t stats_rng_next(struct stats_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double stats_rng_normal(struct stats_rng *r)
{
	double u = ((double)(stats_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	return stats_normal_quantile(u);
}

/* ---- trimmed means ----------------------------------------------------------- */

/* The trimmed mean, winsorized variance and their counts of a sorted sample. */
static void trimmed_sorted(const double *s, size_t n, size_t g, struct stats_location *out)
{
	size_t h = n - 2 * g;
	double sum = 0;
	for (size_t i = g; i < n - g; i++)
		sum += s[i];
	double mean = sum / (double)h;
	/* Winsorized: the g lowest become s[g], the g highest s[n-g-1]. */
	double wsum = sum + (double)g * (s[g] + s[n - g - 1]);
	double wmean = wsum / (double)n, ss = 0;
	for (size_t i = 0; i < n; i++) {
		double w = i < g ? s[g] : i >= n - g ? s[n - g - 1] : s[i];
		double d = w - wmean;
		ss += d * d;
	}
	out->n = n;
	out->trimmed = g;
	out->est = mean;
	out->se = sqrt(ss / ((double)h * (double)(h - 1)));
	out->df = (double)(h - 1);
}

static void location_undefined(struct stats_location *out, size_t n)
{
	*out = (struct stats_location){ .n = n, .est = NAN, .se = NAN, .df = NAN };
}

int stats_trimmed_location(const double *x, size_t n, double gamma, struct stats_location *out)
{
	location_undefined(out, n);
	size_t low = 0, high = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(x[i]))
			return -1;
		low += x[i] == -INFINITY;
		high += x[i] == INFINITY;
	}
	size_t g = (size_t)floor(gamma * (double)n);
	if (low > g)
		g = low;
	if (high > g)
		g = high;
	if (n < 2 || 2 * g + 2 > n)
		return -1;
	double *s = xmalloc(n * sizeof(*s));
	memcpy(s, x, n * sizeof(*s));
	sort_doubles(s, n);
	trimmed_sorted(s, n, g, out);
	free(s);
	return 0;
}

int stats_trimmed_difference(const double *x, size_t nx, const double *y, size_t ny,
			     double gamma, struct stats_location *out)
{
	struct stats_location a, b;
	location_undefined(out, nx + ny);
	for (size_t i = 0; i < nx; i++)
		if (!isfinite(x[i]))
			return -1;
	for (size_t i = 0; i < ny; i++)
		if (!isfinite(y[i]))
			return -1;
	if (stats_trimmed_location(x, nx, gamma, &a) < 0 ||
	    stats_trimmed_location(y, ny, gamma, &b) < 0)
		return -1;
	double va = a.se * a.se, vb = b.se * b.se;
	out->trimmed = a.trimmed + b.trimmed;
	out->est = a.est - b.est;
	out->se = sqrt(va + vb);
	out->df = va + vb > 0 ? (va + vb) * (va + vb) / (va * va / a.df + vb * vb / b.df)
			      : a.df + b.df;
	return 0;
}

double stats_t_p(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return 0;
	return stats_incbeta(df / 2, 0.5, df / (df + t * t));
}

double stats_f_upper(double f, double df1, double df2)
{
	if (isnan(f) || !(df1 > 0) || !(df2 > 0))
		return NAN;
	if (f <= 0)
		return 1;
	return stats_incbeta(df2 / 2, df1 / 2, df2 / (df2 + df1 * f));
}

double stats_chi2_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	double a = 2 / (9 * df), q = 1 - a + stats_normal_quantile(p) * sqrt(a);
	return df * fmax(q, 0) * fmax(q, 0) * fmax(q, 0);
}

double stats_binomial_upper(size_t k, size_t n, double p)
{
	if (k == 0)
		return 1;
	if (k > n)
		return 0;
	return stats_incbeta((double)k, (double)(n - k + 1), p);
}

/* log C(n, k) */
static double log_choose(size_t n, size_t k)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1);
}

double stats_fisher_more(size_t a, size_t n1, size_t b, size_t n2)
{
	size_t k = a + b, n = n1 + n2;
	if (a == 0 || a > n1 || b > n2)
		return 1;
	double denom = log_choose(n, k), p = 0;
	size_t hi = k < n1 ? k : n1;
	for (size_t x = a; x <= hi; x++)
		if (k - x <= n2)
			p += exp(log_choose(n1, x) + log_choose(n2, k - x) - denom);
	return p > 1 ? 1 : p;
}
