/*
 * compare: the same configurations across two experiments — has the
 * measured value drifted, and does the recommendation still hold?  Pure:
 * it pairs up two rankings (rank.h) by configuration key and hands them to
 * the engine's rules (decide/decide.h: decide_shift, decide_compare);
 * cmd-compare.c only formats the result.
 *
 * The m shared configurations are one family: each shift's interval is a
 * (1 - alpha/m) one (Bonferroni), so an interval and its verdict never
 * disagree.  The status: `changed winner` only when both experiments
 * decide (better or equivalent) and pick different decisions; `drifted`
 * when some configuration shifted; `consistent` when both decide the same
 * pick and nothing shifted; `inconclusive` otherwise.
 */
#ifndef TA_COMPARE_H
#define TA_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "rank.h"

#define COMPARE_ALPHA 0.05

struct compare_entry {
	const char *key;			/* points into the rankings */
	const struct rank_entry *first, *second;
	struct decide_shift r;
};

struct compare_result {
	const struct rank_result *first, *second;
	double alpha, delta;
	struct compare_entry *entries;		/* shared keys, in the first's rank order */
	size_t nentries;
	const char **only_first, **only_second;	/* keys in one experiment only */
	size_t nonly_first, nonly_second;
	const char *recommended_first, *recommended_second;	/* decision keys; NULL: none */
	enum decide_compare_status status;
	bool recommendation_holds;		/* false only for a changed winner */
	const struct compare_entry *largest;	/* the shifted configuration that moved most */
	/* the first's pick, as the second measured it (NULL when the second lacks it) */
	const struct rank_entry *first_pick_in_second;
};

/*
 * Fails (EXIT_BAD_INPUT) when the rankings are of one experiment, or by
 * different metrics.
 */
int compare_rankings(const struct rank_result *first, const struct rank_result *second,
		     double delta, struct compare_result *out, struct ta_err *err);
void compare_result_release(struct compare_result *c);

#endif
