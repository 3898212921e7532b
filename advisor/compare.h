/*
 * compare: the same configurations across two experiments — has the
 * measured value drifted, and does the recommendation still hold?  Pure:
 * it takes two rankings (rank.h) and returns structs; cmd-compare.c only
 * formats them.
 *
 * For every configuration both experiments have (matched by their stable
 * key), the ratio of the second's geometric mean to the first's, with a
 * Welch interval on the log scale (stats_log_welch, the ranking's own
 * test); one method gives the interval and the verdict, so they never
 * disagree.  Multiplicity over the m shared
 * configurations is controlled by Bonferroni: the interval is a
 * (1 - alpha/m) one, and
 *  - `better` / `worse`: it excludes 1 (direction-aware: better means the
 *    second experiment did better on this configuration);
 *  - `equivalent`: the (1 - 2 alpha/m) interval lies inside [1 - delta, 1 + delta]
 *    (two one-sided tests);
 *  - `undecided`: neither; `insufficient`: fewer than 2 successful runs on
 *    either side.
 * The recommendation holds when both rankings recommend the same key.
 */
#ifndef TA_COMPARE_H
#define TA_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "rank.h"

#define COMPARE_ALPHA 0.05

enum compare_verdict {
	COMPARE_INSUFFICIENT,
	COMPARE_UNDECIDED,
	COMPARE_EQUIVALENT,
	COMPARE_BETTER,
	COMPARE_WORSE,
};

struct compare_ratio {
	double ratio, lo, hi;	/* second / first (geometric means), (1 - alpha) interval */
	double p;		/* two-sided Welch p on the logs; NAN when untestable */
	enum compare_verdict verdict;
};

/*
 * Compares y (second experiment) with x (first) at level alpha (already
 * divided by the family size) and margin delta; values must be > 0.
 */
void compare_ratio(const double *x, size_t nx, const double *y, size_t ny,
		   bool higher_is_better, double alpha, double delta, struct compare_ratio *out);

struct compare_entry {
	const char *key;			/* points into the rankings */
	const struct rank_entry *first, *second;
	struct compare_ratio r;
};

struct compare_result {
	const struct rank_result *first, *second;
	double alpha, delta;
	struct compare_entry *entries;		/* shared keys, in the first's rank order */
	size_t nentries;
	const char **only_first, **only_second;	/* keys in one experiment only */
	size_t nonly_first, nonly_second;
	const char *recommended_first, *recommended_second;	/* NULL: none */
	bool recommendation_holds;
	/* the first's pick, as the second measured it (NULL when the second lacks it) */
	const struct rank_entry *first_pick_in_second;
};

/* Fails (EXIT_BAD_INPUT) when the rankings are by different metrics. */
int compare_rankings(const struct rank_result *first, const struct rank_result *second,
		     double delta, struct compare_result *out, struct ta_err *err);
void compare_result_release(struct compare_result *c);

const char *compare_verdict_name(enum compare_verdict v);

#endif
