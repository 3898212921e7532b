/* compare: drift between two experiments; see compare.h. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "stats.h"

void compare_ratio(const double *x, size_t nx, const double *y, size_t ny,
		   bool higher_is_better, double alpha, double delta, struct compare_ratio *out)
{
	*out = (struct compare_ratio){ .ratio = NAN, .lo = NAN, .hi = NAN, .p = NAN,
				       .verdict = COMPARE_INSUFFICIENT };
	double lx = 0, ly = 0;
	for (size_t i = 0; i < nx; i++) {
		if (!(x[i] > 0))
			return;
		lx += log(x[i]);
	}
	for (size_t i = 0; i < ny; i++) {
		if (!(y[i] > 0))
			return;
		ly += log(y[i]);
	}
	if (nx && ny)
		out->ratio = exp(ly / (double)ny - lx / (double)nx);
	/* The ranking's own test: Welch on the logs gives interval and p together. */
	struct stats_ratio r, eq;
	if (stats_log_welch(y, ny, x, nx, alpha, &r) < 0 ||
	    stats_log_welch(y, ny, x, nx, 2 * alpha, &eq) < 0)
		return;
	out->lo = r.lo;
	out->hi = r.hi;
	out->p = r.p;
	bool up = r.lo > 1, down = r.hi < 1;
	if (up || down)
		out->verdict = up == higher_is_better ? COMPARE_BETTER : COMPARE_WORSE;
	else if (eq.lo >= 1 - delta && eq.hi <= 1 + delta)
		out->verdict = COMPARE_EQUIVALENT;
	else
		out->verdict = COMPARE_UNDECIDED;
}

static const struct rank_entry *find_key(const struct rank_result *r, const char *key)
{
	for (size_t i = 0; i < r->nentries; i++)
		if (!strcmp(r->entries[i].config->rec.key, key))
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
		const struct rank_entry *b = find_key(second, a->config->rec.key);
		if (b)
			out->entries[out->nentries++] = (struct compare_entry){
				.key = a->config->rec.key, .first = a, .second = b };
		else
			out->only_first[out->nonly_first++] = a->config->rec.key;
	}
	for (size_t i = 0; i < second->nentries; i++)
		if (!find_key(first, second->entries[i].config->rec.key))
			out->only_second[out->nonly_second++] = second->entries[i].config->rec.key;
	out->alpha = COMPARE_ALPHA / (double)(out->nentries ? out->nentries : 1);
	for (size_t i = 0; i < out->nentries; i++) {
		struct compare_entry *c = &out->entries[i];
		compare_ratio(c->first->values, c->first->s.n, c->second->values, c->second->s.n,
			      first->higher_is_better, out->alpha, delta, &c->r);
	}
	out->recommended_first = first->recommended ? first->recommended->config->rec.key : NULL;
	out->recommended_second = second->recommended ? second->recommended->config->rec.key : NULL;
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
