/* compare: drift between two experiments; see compare.h. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"

/* The decision of r with this key, or NULL. */
static const struct rank_decision *find_decision(const struct rank_result *r, const char *key)
{
	for (size_t i = 0; key && i < r->ndecisions; i++)
		if (!strcmp(r->decisions[i].key, key))
			return &r->decisions[i];
	return NULL;
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
	if (first->res->exp.id == second->res->exp.id)
		return err_set(err, EXIT_BAD_INPUT, "both arguments name experiment %lld: compare "
			       "takes two experiments (a rerun, another day or host); see "
			       "'topoadvisor list'", (long long)first->res->exp.id);
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
	struct decide_shift *shifts = xcalloc(out->nentries + 1, sizeof(*shifts));
	for (size_t i = 0; i < out->nentries; i++) {
		struct compare_entry *c = &out->entries[i];
		decide_shift(c->first->values, c->first->s.n, c->second->values, c->second->s.n,
			     first->higher_is_better, out->alpha, delta, &c->r);
		shifts[i] = c->r;
		bool shifted = c->r.verdict == DECIDE_BETTER || c->r.verdict == DECIDE_WORSE;
		if (shifted && (!out->largest || fabs(log(c->r.ratio)) > fabs(log(out->largest->r.ratio))))
			out->largest = c;
	}
	const struct rank_decision *p1 = first->recommended_decision;
	const struct rank_decision *p2 = second->recommended_decision;
	out->recommended_first = p1 ? p1->key : NULL;
	out->recommended_second = p2 ? p2->key : NULL;
	out->first_pick_there = find_decision(second, out->recommended_first);
	out->second_pick_here = find_decision(first, out->recommended_second);
	struct decide_compare_side s1 = {
		.decisive = rank_decisive(first), .pick = out->recommended_first,
		.separates = decide_separates(&first->dr, &first->sweep.in, out->second_pick_here
					      ? out->second_pick_here->index : DECIDE_NONE),
	};
	struct decide_compare_side s2 = {
		.decisive = rank_decisive(second), .pick = out->recommended_second,
		.separates = decide_separates(&second->dr, &second->sweep.in, out->first_pick_there
					      ? out->first_pick_there->index : DECIDE_NONE),
	};
	struct decide_comparison cmp;
	decide_compare(&s1, &s2, shifts, out->nentries, &cmp);
	free(shifts);
	out->status = cmp.status;
	out->holds = cmp.holds;
	return 0;
}

void compare_result_release(struct compare_result *c)
{
	free(c->entries);
	free(c->only_first);
	free(c->only_second);
	memset(c, 0, sizeof(*c));
}
