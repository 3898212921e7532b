/*
 * compare: the same configurations across two experiments — shifted, and
 * does the recommendation still hold; see decide.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "decide-int.h"
#include "stats.h"

void decide_shift(const double *first, size_t n1, const double *second, size_t n2,
		  bool higher_is_better, double alpha, double delta, struct decide_shift *out)
{
	*out = (struct decide_shift){ .ratio = NAN, .lo = NAN, .hi = NAN, .p = NAN,
				      .first_loc = NAN, .second_loc = NAN,
				      .verdict = DECIDE_INSUFFICIENT };
	/* A value <= 0 (or not finite) has no finite log, which
	 * stats_trimmed_difference refuses: insufficient. */
	double *a = xmalloc(n1 * sizeof(*a)), *b = xmalloc(n2 * sizeof(*b));
	for (size_t i = 0; i < n1; i++)
		a[i] = log(first[i]);
	for (size_t i = 0; i < n2; i++)
		b[i] = log(second[i]);
	struct stats_location loc;
	if (stats_trimmed_location(a, n1, DECIDE_TRIM, &loc) == 0)
		out->first_loc = exp(loc.est);
	if (stats_trimmed_location(b, n2, DECIDE_TRIM, &loc) == 0)
		out->second_loc = exp(loc.est);
	if (stats_trimmed_difference(b, n2, a, n1, DECIDE_TRIM, &loc) == 0) {
		struct decide_cmp c = { .ok = true, .est = loc.est, .se = loc.se, .df = loc.df };
		decide_cmp_at(&c, alpha);
		out->ratio = exp(c.est);
		out->lo = exp(c.lo);
		out->hi = exp(c.hi);
		out->p = c.p;
		/* The verdict in the metric's direction: a lower-is-better ratio turns over. */
		if (!higher_is_better) {
			c.est = -c.est;
			double lo = c.lo;
			c.lo = -c.hi;
			c.hi = -lo;
		}
		out->verdict = decide_verdict_of(&c, delta);
	}
	free(a);
	free(b);
}

const char *decide_compare_status_name(enum decide_compare_status s)
{
	static const char *const names[] = {
		[DECIDE_CONSISTENT] = "consistent", [DECIDE_DRIFTED] = "drifted",
		[DECIDE_CHANGED_WINNER] = "changed winner", [DECIDE_INCONCLUSIVE] = "inconclusive",
		[DECIDE_TIED_WINNERS] = "tied winners",
	};
	return names[s];
}

bool decide_separates(const struct decide_result *r, const struct decide_input *in,
		      size_t other)
{
	if (other == DECIDE_NONE || other >= r->ndecisions)
		return true;
	if (other == r->pick)
		return false;
	const struct decide_decision_out *o = &r->decisions[other];
	if (o->failing || o->elim.block || o->worse_than_best || o->verdict == DECIDE_WORSE ||
	    o->verdict == DECIDE_FAILING)
		return true;
	/* Beside a pick shown better than the baseline, the baseline and what
	 * is equivalent to it are shown below the pick. */
	return r->verdict == DECIDE_BETTER &&
	       (other == in->baseline || o->verdict == DECIDE_EQUIVALENT);
}

void decide_compare(const struct decide_compare_side *first,
		    const struct decide_compare_side *second, const struct decide_shift *shifts,
		    size_t n, struct decide_comparison *out)
{
	bool both = first->decisive && second->decisive && first->pick && second->pick;
	bool same = both && !strcmp(first->pick, second->pick);
	bool shifted = false;
	for (size_t i = 0; i < n; i++)
		shifted |= shifts[i].verdict == DECIDE_BETTER || shifts[i].verdict == DECIDE_WORSE;
	out->holds = same ? DECIDE_HOLDS_YES : DECIDE_HOLDS_UNKNOWN;
	if (both && !same && (first->separates || second->separates)) {
		out->status = DECIDE_CHANGED_WINNER;
		out->holds = DECIDE_HOLDS_NO;
	} else if (shifted) {
		out->status = DECIDE_DRIFTED;
	} else if (same) {
		out->status = DECIDE_CONSISTENT;
	} else {
		out->status = both ? DECIDE_TIED_WINNERS : DECIDE_INCONCLUSIVE;
	}
}
