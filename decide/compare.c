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
				      .verdict = DECIDE_INSUFFICIENT };
	/* A value <= 0 (or not finite) has no finite log, which
	 * stats_trimmed_difference refuses: insufficient. */
	double *a = xmalloc(n1 * sizeof(*a)), *b = xmalloc(n2 * sizeof(*b));
	for (size_t i = 0; i < n1; i++)
		a[i] = log(first[i]);
	for (size_t i = 0; i < n2; i++)
		b[i] = log(second[i]);
	struct stats_location loc;
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
	};
	return names[s];
}

enum decide_compare_status decide_compare(bool decisive1, const char *pick1, bool decisive2,
					  const char *pick2, const struct decide_shift *shifts,
					  size_t n)
{
	if (decisive1 && decisive2 && pick1 && pick2 && strcmp(pick1, pick2))
		return DECIDE_CHANGED_WINNER;
	for (size_t i = 0; i < n; i++)
		if (shifts[i].verdict == DECIDE_BETTER || shifts[i].verdict == DECIDE_WORSE)
			return DECIDE_DRIFTED;
	return decisive1 && decisive2 && pick1 && pick2 ? DECIDE_CONSISTENT : DECIDE_INCONCLUSIVE;
}
