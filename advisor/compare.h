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
 * decide (better or equivalent), pick different decisions, and one of them
 * shows the other's pick worse than its own (decide_separates); `drifted`
 * when some configuration shifted; `consistent` when both decide the same
 * pick and nothing shifted; `tied winners` when both decide different
 * picks that neither separates; `inconclusive` otherwise.  The
 * recommendation holds (yes) only when both decide the same pick, does not
 * (no) for a changed winner, and is unknown otherwise.
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
	enum decide_holds holds;
	/* each pick as the other experiment measured it (NULL: it lacks it) */
	const struct rank_decision *first_pick_there, *second_pick_here;
	const struct compare_entry *largest;	/* the shifted configuration that moved most */
};

/*
 * Fails (EXIT_BAD_INPUT) when the rankings are of one experiment, or by
 * different metrics.
 */
int compare_rankings(const struct rank_result *first, const struct rank_result *second,
		     double delta, struct compare_result *out, struct ta_err *err);
void compare_result_release(struct compare_result *c);

#endif
