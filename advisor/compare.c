/* compare: drift between two experiments; see compare.h. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "stats.h"

/* Mean and variance of log(v) over v[0..n). */
static void log_moments(const double *v, size_t n, double *mean, double *var)
{
	double s = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		s += log(v[i]);
	*mean = s / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (log(v[i]) - *mean) * (log(v[i]) - *mean);
	*var = n > 1 ? ss / (double)(n - 1) : NAN;
}

/* The Welch interval of the log difference at two-sided level a: [lo, hi]. */
static void welch_interval(double d, double se, double df, double a, double *lo, double *hi)
{
	double q = se > 0 ? stats_t_quantile(1 - a / 2, df) : 0;
	*lo = d - q * se;
	*hi = d + q * se;
}

void compare_ratio(const double *x, size_t nx, const double *y, size_t ny,
		   bool higher_is_better, double alpha, double delta, struct compare_ratio *out)
{
	*out = (struct compare_ratio){ .ratio = NAN, .lo = NAN, .hi = NAN, .p = NAN,
				       .verdict = COMPARE_INSUFFICIENT };
	for (size_t i = 0; i < nx; i++)
		if (!(x[i] > 0))
			return;
	for (size_t i = 0; i < ny; i++)
		if (!(y[i] > 0))
			return;
	if (nx && ny) {
		double mx, vx, my, vy;
		log_moments(x, nx, &mx, &vx);
		log_moments(y, ny, &my, &vy);
		out->ratio = exp(my - mx);
		if (nx < 2 || ny < 2)
			return;
		double ax = vx / (double)nx, ay = vy / (double)ny, d = my - mx;
		double se = sqrt(ax + ay);
		double df = se > 0 ? (ax + ay) * (ax + ay) /
				     (ax * ax / (double)(nx - 1) + ay * ay / (double)(ny - 1))
				   : (double)(nx + ny - 2);
		double lo, hi, elo, ehi;
		welch_interval(d, se, df, alpha, &lo, &hi);
		welch_interval(d, se, df, 2 * alpha, &elo, &ehi);
		out->lo = exp(lo);
		out->hi = exp(hi);
		out->p = se > 0 ? 2 * stats_t_cdf(-fabs(d) / se, df) : d == 0 ? 1 : 0;
		bool up = lo > 0, down = hi < 0;
		if (up || down)
			out->verdict = up == higher_is_better ? COMPARE_BETTER : COMPARE_WORSE;
		else if (elo >= log(1 - delta) && ehi <= log(1 + delta))
			out->verdict = COMPARE_EQUIVALENT;
		else
			out->verdict = COMPARE_UNDECIDED;
	}
}

static const struct rank_entry *find_key(const struct rank_result *r, const char *key)
{
	for (size_t i = 0; i < r->nentries; i++)
		if (!strcmp(r->entries[i].config->key, key))
			return &r->entries[i];
	return NULL;
}

int compare_rankings(const struct rank_result *first, const struct rank_result *second,
		     double delta, struct compare_result *out, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	if (strcmp(first->metric, second->metric) ||
	    first->higher_is_better != second->higher_is_better)
		return err_set(err, EXIT_BAD_INPUT, "experiment %lld is ranked by %s, experiment "
			       "%lld by %s; compare them by one metric (--metric)",
			       (long long)first->res->exp.id, first->metric,
			       (long long)second->res->exp.id, second->metric);
	out->first = first;
	out->second = second;
	out->delta = delta;
	out->entries = xcalloc(first->nentries + 1, sizeof(*out->entries));
	out->only_first = xcalloc(first->nentries + 1, sizeof(*out->only_first));
	out->only_second = xcalloc(second->nentries + 1, sizeof(*out->only_second));
	for (size_t i = 0; i < first->nentries; i++) {
		const struct rank_entry *a = &first->entries[i];
		const struct rank_entry *b = find_key(second, a->config->key);
		if (b)
			out->entries[out->nentries++] = (struct compare_entry){
				.key = a->config->key, .first = a, .second = b };
		else
			out->only_first[out->nonly_first++] = a->config->key;
	}
	for (size_t i = 0; i < second->nentries; i++)
		if (!find_key(first, second->entries[i].config->key))
			out->only_second[out->nonly_second++] = second->entries[i].config->key;
	out->alpha = COMPARE_ALPHA / (double)(out->nentries ? out->nentries : 1);
	for (size_t i = 0; i < out->nentries; i++) {
		struct compare_entry *c = &out->entries[i];
		compare_ratio(c->first->values, c->first->s.n, c->second->values, c->second->s.n,
			      first->higher_is_better, out->alpha, delta, &c->r);
	}
	out->recommended_first = first->recommended ? first->recommended->config->key : NULL;
	out->recommended_second = second->recommended ? second->recommended->config->key : NULL;
	out->recommendation_holds = out->recommended_first && out->recommended_second &&
				    !strcmp(out->recommended_first, out->recommended_second);
	if (out->recommended_first)
		out->first_pick_in_second = find_key(second, out->recommended_first);
	return 0;
}

void compare_result_release(struct compare_result *c)
{
	free(c->entries);
	free(c->only_first);
	free(c->only_second);
	memset(c, 0, sizeof(*c));
}

const char *compare_verdict_name(enum compare_verdict v)
{
	static const char *const names[] = {
		[COMPARE_INSUFFICIENT] = "insufficient", [COMPARE_UNDECIDED] = "undecided",
		[COMPARE_EQUIVALENT] = "equivalent", [COMPARE_BETTER] = "better",
		[COMPARE_WORSE] = "worse",
	};
	return names[v];
}
