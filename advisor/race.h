/*
 * race: which configurations a raced sweep still runs (F-race / irace).
 *
 * A race runs the sweep block by block (a block holds every surviving
 * configuration once).  After block `first_test` and every block after it,
 * race_evaluate() looks at the results so far and
 *  - picks the current best decision configuration (highest mean objective);
 *  - tests every other survivor against it: a one-sided paired t-test on
 *    the log objective, paired by block (the repetition), Holm-corrected
 *    over the survivors tested in that block (irace's "t-test-holm");
 *  - eliminates the survivors shown worse (adjusted p < alpha), except the
 *    baseline: every verdict compares with it, so it is measured in every
 *    block the race runs;
 *  - says whether to stop: one survivor left, every survivor shown
 *    equivalent to the best (the paired 90 % CI of the ratio inside
 *    [1 - delta, 1 + delta]: two one-sided tests at alpha), or the maximum
 *    number of blocks done.  The baseline counts as a survivor until the
 *    best's lead over it is shown by the test the ranking's verdict uses
 *    (Welch on the log scale, Bonferroni over every comparison with the
 *    baseline), so a race never stops where the verdict could not be
 *    `better`.
 *
 * Environment levels (noise, factors marked environment) are raced
 * together: a decision configuration is run at every level in each block,
 * and its objective in a block is the worst (or the mean) over the levels
 * of its log ratio to the baseline at that level.  With one level the
 * baseline cancels and the objective is the log of the value.
 *
 * Pure: no I/O, no global state; the controller feeds it what the database
 * holds and stores what it returns.  The rules are in docs/advisor.md
 * ("Racing").
 */
#ifndef TA_RACE_H
#define TA_RACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RACE_NONE ((size_t)-1)
#define RACE_ALPHA 0.05
#define RACE_EQUIVALENCE_DEFAULT 0.02

enum race_objective { RACE_OBJECTIVE_WORST, RACE_OBJECTIVE_MEAN };

enum race_stop {
	RACE_GO_ON,		/* run another block */
	RACE_STOP_SINGLE,	/* every survivor but the best is shown worse */
	RACE_STOP_EQUIVALENT,	/* every survivor is equivalent to the best */
	RACE_STOP_MAX,		/* max_blocks blocks done */
};

/* One successful run: its decision configuration, environment level, block. */
struct race_obs {
	size_t decision;	/* 0..ndecisions-1 */
	size_t env;		/* 0..nenvs-1 */
	int block;		/* 0-based repetition */
	double value;		/* the primary metric; > 0 (others are ignored) */
};

struct race_input {
	size_t ndecisions, nenvs;
	size_t baseline;		/* decision index, RACE_NONE: none */
	const bool *reference;		/* [d] true: a host reference, never raced; NULL: none */
	const bool *eliminated;		/* [d] eliminated in earlier blocks; NULL: none */
	const struct race_obs *obs;
	size_t nobs;
	int blocks;			/* blocks done: only obs with block < blocks count */
	int first_test;			/* first block after which to test (>= 2) */
	int max_blocks;			/* the sweep's repetitions */
	bool higher_is_better;
	enum race_objective objective;
	double alpha;			/* RACE_ALPHA */
	double equivalence;		/* delta, e.g. 0.02 */
};

struct race_elimination {
	size_t decision;
	size_t against;		/* the best when it was eliminated */
	double p;		/* Holm-adjusted one-sided p */
	double ratio;		/* geometric-mean objective ratio to the best (< 1: worse) */
};

struct race_step {
	int blocks;			/* the blocks this step looked at */
	size_t best;			/* RACE_NONE: nothing measured yet */
	struct race_elimination *elims;	/* new eliminations, in decision order */
	size_t nelims;
	size_t nsurvivors;		/* contenders left after this step (baseline included) */
	enum race_stop stop;
};

/*
 * Evaluates the race after in->blocks blocks.  Before first_test blocks it
 * only reports the best and RACE_GO_ON (or RACE_STOP_MAX).  Returns 0, or
 * -1 on input that cannot be raced (an index out of range, first_test < 2).
 */
int race_evaluate(const struct race_input *in, struct race_step *out);
void race_step_release(struct race_step *s);

/* "one survivor", "all equivalent", "maximum reached" or "running". */
const char *race_stop_name(enum race_stop s);

/*
 * The number of runs a race of this size is expected to take, by
 * simulating `nsim` races through race_evaluate() with a seeded generator:
 * run-to-run CV 5 %, the decision configurations' true means spread evenly
 * over 0..-10 % below the best (decision 0, the baseline, in the middle).
 * runs_per_block_env is the environment levels per decision configuration.
 * Returns the mean number of runs; *max_out gets the maximum.
 */
double race_expected_runs(size_t ndecisions, size_t nenvs, size_t nreference, int first_test,
			  int max_blocks, double equivalence, uint64_t seed, int nsim,
			  size_t *max_out);

#endif
