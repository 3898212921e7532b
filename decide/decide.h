/*
 * decide: the one statistical model of a sweep and the one decision engine.
 * Pure: no I/O, no global state.  It takes the runs of an experiment (or of
 * its first k blocks, for a race) and the advisor settings, and returns the
 * decision as a value; `run` (racing), `rank`, `recommend`, `report`,
 * `compare`, `extend` and `show` only render it.  The rules, in a user's
 * words and with their simulation figures, are in docs/advisor.md.
 *
 * The model:
 *  - A configuration is one *decision* (what a user deploys: shape,
 *    pinning, host knobs) at one *environment level* (noise, and the
 *    factors advisor.environment names).  Runs are grouped in *blocks*: a
 *    block is one repetition of every configuration, in random order, on
 *    one host; runs are also grouped in *boots*: the runs one guest boot
 *    (or host-runner session) served share it.
 *  - Every comparison of configuration x with y is *paired by block*: per
 *    block, the log ratio of x's value to y's, in the metric's direction
 *    (positive = x better); drift and host differences cancel.  Blocks whose
 *    runs share a boot with another block's are one *unit* (their log
 *    ratios averaged): boots, not runs, are then the replicates.
 *  - A failed run is an outcome: the worst one.  Its block's log ratio is
 *    -inf (+inf when y failed; both failed: a tie, 0; each side failing at
 *    some level of a `mean` average: the block is left out), and the
 *    location of the h units is their 10 % trimmed mean (DECIDE_TRIM:
 *    floor(0.1 h) units from each end, never fewer than the failures at
 *    either end), with Tukey & McLaughlin's standard error (winsorized
 *    variance, df = h - 2 trimmed - 1): failures and a few extreme runs
 *    (heavy tails) are trimmed alike.  Before that, from 10 units on, a
 *    finite unit more than 5 scaled MADs from the units' median is set
 *    aside (at most a fifth of them; decide_cmp.set_aside).  A comparison
 *    is testable with 2 units left after trimming.
 *  - A decision's objective against the baseline over the levels: `mean`
 *    averages the levels' log ratios within each block (one paired test);
 *    `worst` is the smallest level estimate (biased low: the minimum of
 *    noisy estimates; decide_cmp.bias states by how much), its interval
 *    [min of the levels' lower bounds at alpha'/2 one-sided, min of their
 *    upper bounds at alpha'/(2L) one-sided], which holds min_l theta_l
 *    with probability >= 1 - alpha'.  Never a per-block minimum of noisy
 *    values.
 *  - Verdicts from one two-sided interval at alpha', Bonferroni over the m
 *    testable decisions compared with the baseline (alpha' = alpha / m;
 *    each configuration's own interval at alpha / (m L)): equivalent
 *    (inside +-delta: two one-sided tests at alpha'/2 each; it wins over
 *    better, a gain shown under delta is no change worth making), better
 *    (above 0), worse (below 0), undecided, insufficient (fewer than 2
 *    units left after trimming), failing (a failure rate above
 *    max_failure_rate, or failures and no successful run).  Failures per
 *    level: a decision that never succeeds at some level is failing;
 *    under `worst` so is one failing above max_failure_rate at any level
 *    (its worst case), named with that level; under `mean` its failures
 *    count in the objective (the worst outcome).  Under both, its pooled
 *    rate above max_failure_rate is failing too.
 *    A decision *shown* to fail more often than the baseline (Fisher's
 *    exact test, one-sided, at the verdict's alpha; under `worst` per
 *    level, Bonferroni over them) is never better: undecided, flagged,
 *    and settled (out of contention: more runs only confirm the excess).
 *    A difference of a failure or two that the test does not show blocks
 *    nothing.
 *  - Without a baseline the best is `better` only when something was
 *    shown worse than it; tied with others (within +-delta) it is
 *    `equivalent` among them, and recommended over them only when the
 *    cost rules make it cheaper (otherwise `tied`).
 *  - A race's eliminations are a selection step, never evidence: an
 *    eliminated decision keeps the verdict its own data give.  A race's
 *    stop, and the verdict after it, are at its look's group-sequential
 *    level (decide_race_levels), never at alpha at every look.
 */
#ifndef TA_DECIDE_H
#define TA_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DECIDE_NONE ((size_t)-1)
#define DECIDE_ALPHA 0.05
#define DECIDE_POWER 0.8		/* of min_detectable_effect and needed_repetitions */
#define DECIDE_TRIM 0.1			/* trimmed from each end of the paired units */
#define DECIDE_DEFAULT_EQUIVALENCE 0.02
#define DECIDE_DEFAULT_MAX_FAILURE_RATE 0.2
#define DECIDE_NEEDED_CAP 100		/* needed_repetitions beyond this: "more than" */
#define DECIDE_PLAN_SPREAD 0.35		/* needed_repetitions plans on the 65 % upper bound of the spread */

enum decide_verdict {
	DECIDE_NOT_COMPARED,	/* the baseline itself, or no baseline */
	DECIDE_BETTER,
	DECIDE_EQUIVALENT,
	DECIDE_WORSE,
	DECIDE_UNDECIDED,
	DECIDE_INSUFFICIENT,
	DECIDE_FAILING,
};
/* "better", ..., "failing"; NOT_COMPARED: "not compared". */
const char *decide_verdict_name(enum decide_verdict v);

enum decide_objective { DECIDE_OBJECTIVE_WORST, DECIDE_OBJECTIVE_MEAN };
const char *decide_objective_name(enum decide_objective o);

enum decide_run_status {
	DECIDE_RUN_OK,		/* value holds the metric */
	DECIDE_RUN_FAILED,	/* an outcome: the worst one */
	DECIDE_RUN_NONE,	/* planned, interrupted, or ok without the metric: no outcome */
};

struct decide_run {
	size_t config;
	int block;		/* 0-based: the repetition */
	int64_t boot;		/* runs of one guest boot share it; 0: a boot of its own */
	int order;		/* position in the run order */
	enum decide_run_status status;
	double value;		/* > 0 when OK */
	double gang;		/* ganged exits per second (tie-break); NAN: no data */
};

/* A race's stored elimination of a decision (all its configurations). */
struct decide_stored_elim {
	int block;		/* 0: not eliminated */
	size_t against;		/* decision it lost to; DECIDE_NONE: failing */
	double p;
};

struct decide_option {
	const char *key;	/* the decision's key (its configurations' without environment) */
	bool host_reference;	/* a benchmark on the host: ranked, never recommended */
	int host_cpus;		/* tie-break: fewer is cheaper */
	int nondefault_knobs;	/* tie-break: fewer is cheaper */
	struct decide_stored_elim elim;
};

struct decide_config {
	size_t decision, level;
};

struct decide_input {
	const struct decide_option *decisions;
	size_t ndecisions;
	const struct decide_config *configs;
	size_t nconfigs;
	size_t nlevels;			/* >= 1 */
	const struct decide_run *runs;
	size_t nruns;
	size_t baseline;		/* decision index, DECIDE_NONE: none */
	bool higher_is_better;
	double boot_seconds, run_seconds;	/* mean cost of a boot, of a run; NAN: unknown */
};

struct decide_settings {
	enum decide_objective objective;
	double equivalence;		/* delta, a fraction */
	double max_failure_rate;
	int blocks;			/* > 0: only blocks 0..blocks-1 (a race's look) */
	bool verdicts_only;		/* no needed blocks (-1) nor spread: a race's look */
	/*
	 * The family's error, DECIDE_ALPHA (0: the same); a race's look and the
	 * verdict after a race take the look's level (decide_race_settings).
	 */
	double alpha;
};
void decide_settings_init(struct decide_settings *s);

/*
 * One comparison of x with y (or of an objective), in the metric's
 * direction: positive = x better.  Log scale; gain = expm1(est).
 */
struct decide_cmp {
	bool ok;		/* testable: >= 2 units */
	double est, lo, hi;	/* estimate and interval at alpha */
	double se, df, p;	/* p two-sided, for est = 0 */
	double alpha;
	size_t pairs, units;	/* blocks compared; independent units (boots) */
	size_t trimmed;		/* units trimmed from each end */
	size_t set_aside;	/* far units left out (not in units) */
	double mde;		/* log-scale effect these units detect with DECIDE_POWER */
	int needed;		/* more blocks to settle; 0 settled; -1 unknown; CAP+1: more than CAP */
	double bias;		/* the estimate's bias (<= 0, log): `worst` against the
				 * baseline over levels, the minimum of noisy estimates;
				 * 0 where unbiased (one level, `mean`); NAN: unknown */
};

struct decide_config_out {
	size_t n_ok, n_failed, n_none;
	size_t nboots;			/* distinct boots of its OK runs */
	double failure_rate;		/* failed / (ok + failed); NAN without outcome */
	struct decide_cmp vs_baseline;	/* the baseline's configuration at the level */
	enum decide_verdict verdict;
	bool failing;
	bool more_failures;		/* shown to fail more often than the baseline's configuration */
	double failures_p;		/* of that: Fisher's exact test, one-sided; NAN: not tested */
	double p_best, p_best_adj;	/* against the best's configuration at the level */
	size_t noutliers;
	double outlier_scale;		/* its runs' robust sd (logs): its own or the pooled, the larger */
};

struct decide_run_out {
	double dev;		/* robust deviation from its configuration's median */
	bool outlier;
};

struct decide_decision_out {
	size_t n_ok, n_failed;
	double failure_rate;		/* pooled over its levels */
	bool failing;
	size_t failing_level;		/* the level it fails at (see decide.h), DECIDE_NONE: none */
	bool more_failures;		/* shown to fail more often than the baseline */
	double failures_p;		/* of that, Bonferroni over the levels under worst; NAN: not tested */
	bool testable;			/* >= 2 units against the baseline wherever both ran */
	struct decide_cmp objective;	/* against the baseline (mean: one test; worst: see above) */
	double p_adj;			/* Bonferroni over m */
	enum decide_verdict verdict;
	double score;			/* objective log gain over the reference: the order */
	struct decide_cmp vs_best;	/* objective difference to the best */
	bool is_best, equivalent_to_best, worse_than_best;
	bool in_contention;
	int needed_vs_pick;		/* contention under a better verdict: blocks to separate it */
	struct decide_stored_elim elim;
};

enum decide_advice {
	DECIDE_ADVICE_NONE,		/* boots not separable from runs, or costs unknown */
	DECIDE_ADVICE_KEEP,
	DECIDE_ADVICE_MORE_BOOTS,	/* fewer runs per boot */
	DECIDE_ADVICE_MORE_RUNS,	/* more runs per boot */
};

/* Boot-to-boot and run-to-run variance (one-way random effects, pooled over configurations). */
struct decide_components {
	bool shared;			/* some boot served several runs of one configuration */
	bool estimable;
	size_t boots, runs;
	double sd_boot, sd_run;		/* log scale (about the CV) */
	double f, df1, df2, p;		/* F test of the boot effect */
	double runs_per_boot;		/* now, on average */
	double optimal_runs_per_boot;	/* Kalibera & Jones: sqrt(c_boot / c_run * s_run^2 / s_boot^2) */
	enum decide_advice advice;
};

/*
 * A trend of the (log) metric over the blocks, configurations' means
 * removed, tested on the replication units' means (tested: 3 units or more).
 */
struct decide_drift {
	bool tested;
	double slope, lo, hi;		/* log change per block, 95 % interval */
	double p;
	size_t n;			/* runs */
	size_t units;			/* replication units (blocks, joined by shared boots) */
};

struct decide_result {
	size_t nconfigs, ndecisions, nruns, nlevels;
	struct decide_config_out *configs;
	struct decide_decision_out *decisions;
	struct decide_run_out *runs;
	size_t m;			/* comparisons with the baseline: the Bonferroni family */
	double level_alpha;		/* of every configuration's interval: alpha / (m L) */
	double objective_alpha;		/* of the decisions' objective: alpha / m */
	size_t best;			/* best objective among the contenders; DECIDE_NONE */
	size_t pick;			/* recommended (decisive) or leading for now */
	size_t leader;			/* undecided: the contender whose settling decides */
	size_t top;			/* the best objective among those shown better */
	enum decide_verdict verdict;	/* better, equivalent, undecided or insufficient */
	bool baseline_testable;
	bool nothing_beats_baseline;
	size_t ncandidates;		/* better and equivalent to the top (cost tie-break) */
	bool tied;			/* no baseline: the best is tied with others and none is
					 * cheaper (verdict equivalent: any of them will do) */
	size_t *contention;		/* decisions still in contention */
	size_t ncontention;
	size_t *unsettled;		/* eliminated, and not shown worse or equivalent on data */
	size_t nunsettled;
	double mde;			/* the leader's, gain */
	int needed;			/* blocks to settle the leader against the baseline */
	size_t runs_total, runs_ok, runs_failed;
	double outlier_scale;		/* pooled robust sd of the logs (configurations: their own) */
	struct decide_components components;
	struct decide_drift drift;
};

/*
 * A fallible call whose result must be looked at (git's pattern of a
 * checked error): an ignored -1 would present an empty result (decision 0
 * "recommended", a race that never stops) as a decision.  Every decide/
 * function that can fail carries it; the -Werror build proves each caller
 * looks.
 */
#ifndef DECIDE_MUST_CHECK
#define DECIDE_MUST_CHECK __attribute__((warn_unused_result))
#endif

/*
 * Decides.  Fails (-1) only on input it cannot hold (an index out of
 * range, no levels); out is then empty (pick DECIDE_NONE, nothing
 * allocated): never render it.  Release with decide_result_release.
 */
DECIDE_MUST_CHECK int decide_compute(const struct decide_input *in,
				     const struct decide_settings *s, struct decide_result *out);
void decide_result_release(struct decide_result *r);
/* Is the verdict something to act on (better, equivalent)? */
bool decide_decisive(const struct decide_result *r);
/* expm1, NAN-safe: a log gain as a fraction. */
double decide_gain(double log_gain);

/* ---- comparing two experiments ------------------------------------------- */

/*
 * One configuration measured in two experiments (a rerun, another day or
 * host): the ratio of the second's to the first's, unpaired (no block is
 * shared), Yuen's trimmed two-sample test on the logs, interval at alpha.
 * verdict: better / worse (the second better or worse, in the metric's
 * direction), equivalent (inside +-delta), undecided, insufficient.
 * first_loc and second_loc are the locations the ratio is of: each side's
 * DECIDE_TRIM-trimmed mean of the logs, exponentiated (a trimmed geometric
 * mean), so that ratio = second_loc / first_loc.
 */
struct decide_shift {
	double ratio, lo, hi;	/* second / first */
	double p;
	double first_loc, second_loc;
	enum decide_verdict verdict;
};
void decide_shift(const double *first, size_t n1, const double *second, size_t n2,
		  bool higher_is_better, double alpha, double delta, struct decide_shift *out);

enum decide_compare_status {
	DECIDE_CONSISTENT,	/* both decisive, the same pick, no configuration shifted */
	DECIDE_DRIFTED,		/* some configuration shifted; no winner changed */
	DECIDE_CHANGED_WINNER,	/* both decisive, different picks, and one experiment separates them */
	DECIDE_INCONCLUSIVE,	/* otherwise: a verdict is not decisive, nothing shifted */
	DECIDE_TIED_WINNERS,	/* both decisive, different picks that neither experiment separates */
};
const char *decide_compare_status_name(enum decide_compare_status s);

/* Does the first experiment's pick hold in the second? */
enum decide_holds {
	DECIDE_HOLDS_UNKNOWN,	/* the second does not decide, or picks one tied with it */
	DECIDE_HOLDS_YES,	/* the second decides the same pick */
	DECIDE_HOLDS_NO,	/* a changed winner */
};

/* One experiment's side of a comparison. */
struct decide_compare_side {
	bool decisive;
	const char *pick;	/* its pick's decision key; NULL: none */
	bool separates;		/* it shows the other experiment's pick worse than its own
				 * (decide_separates), or lacks it */
};

struct decide_comparison {
	enum decide_compare_status status;
	enum decide_holds holds;
};

/*
 * Whether r shows decision `other` worse than its pick: failing, eliminated
 * by a race, shown worse than the best, shown worse than the baseline, the
 * baseline (or a decision equivalent to it) beside a pick shown better, or
 * not measured at all (DECIDE_NONE).  A decision not separated from the
 * pick is tied with it: two experiments picking each of two tied decisions
 * did not change the winner.
 */
bool decide_separates(const struct decide_result *r, const struct decide_input *in,
		      size_t other);

/*
 * The status and whether the recommendation holds, from the two sides and
 * the shared configurations' shifts.  A changed winner needs both
 * experiments decisive with different picks, and one of them separating
 * the picks; different picks neither separates are tied winners (holds
 * unknown).  holds is yes only when both decide the same pick.
 */
void decide_compare(const struct decide_compare_side *first,
		    const struct decide_compare_side *second, const struct decide_shift *shifts,
		    size_t n, struct decide_comparison *out);

/* ---- racing ------------------------------------------------------------- */

enum decide_stop {
	DECIDE_GO_ON,		/* run another block */
	DECIDE_STOP_DECIDED,	/* the verdict is decisive and nothing is in contention */
	DECIDE_STOP_SINGLE,	/* no contender is left beside the baseline */
	DECIDE_STOP_MAX,	/* max_blocks blocks done */
};
/* "running", "decided", "one survivor", "maximum reached". */
const char *decide_stop_name(enum decide_stop s);

struct decide_elimination {
	size_t decision;
	size_t against;		/* DECIDE_NONE: eliminated as failing */
	double p;		/* adjusted one-sided p */
	double ratio;		/* objective ratio to `against` (< 1: worse); NAN when failing */
};

struct decide_race_step {
	int blocks;
	size_t leader;
	struct decide_elimination *elims;
	size_t nelims;
	size_t nsurvivors;	/* contenders left (the baseline included) */
	enum decide_stop stop;
};

/*
 * A race's look after `blocks` blocks (runs of later blocks are ignored;
 * eliminations stored in the input's decisions stand).  From block
 * first_test on, every surviving decision other than the leader (the best
 * objective) and the baseline is tested against the leader: one-sided,
 * worse at every level (mean objective: on average), at the one-sided
 * level decide_race_alpha: 0.05 over (survivors - 1) and over L^0.8, L the
 * looks from first_test to max_blocks (survivors: the decisions still
 * racing, the baseline included); the p stored is scaled back to be read
 * against 0.05.  A decision with a failed run whose failure rate is shown
 * above max_failure_rate (one-sided binomial test at the same level) is
 * eliminated as failing.  Then the stop, with this look's eliminations
 * standing: decided (decide_compute's verdict on these blocks, at this
 * look's group-sequential level decide_race_level, is decisive and nothing
 * is in contention), one survivor (no decision races beside the baseline;
 * without a baseline, one decision), or max_blocks.
 */
DECIDE_MUST_CHECK int decide_race(const struct decide_input *in, const struct decide_settings *s,
				  int blocks, int first_test, int max_blocks,
				  struct decide_race_step *out);
/*
 * decide_race with the stop's level given: levels[blocks] of
 * decide_race_levels.  Both fail (-1) on first_test < 2, blocks < 0 or an
 * input decide_compute refuses; out then holds no elimination and no stop
 * (release it all the same): never act on it.
 */
DECIDE_MUST_CHECK int decide_race_look(const struct decide_input *in,
				       const struct decide_settings *s, int blocks, int first_test,
				       int max_blocks, double level, struct decide_race_step *out);
void decide_race_step_release(struct decide_race_step *st);
/* The one-sided level of an elimination test among `survivors` over `looks` looks. */
double decide_race_alpha(size_t survivors, int looks);

/*
 * The stop is a group-sequential test: the engine's verdict at look b (the
 * blocks 1..b, b = first_test..max_blocks) is taken at a nominal level
 * below DECIDE_ALPHA, the levels chosen so that over all the looks the
 * race may take the chance of a decisive verdict crossing a boundary by
 * chance is DECIDE_ALPHA in all, to the normal approximation of the
 * looks' statistics: the error spent by look b is Hwang, Shih & DeCani's
 * alpha (e^(2t) - 1) / (e^2 - 1), t = b / max_blocks (gamma -2, between
 * Pocock and O'Brien-Fleming; the first look spends all of it up to its
 * t), the boundaries by numerical integration of the looks' joint normal
 * law.  levels[b] (max_blocks + 1 entries) gets look b's two-sided
 * nominal level, 0 before first_test (and where nothing is left to
 * spend).  With first_test 3: 0.0027 at block 3 and 0.027 at block 20 of
 * 20; 0.0010 at block 3 and 0.025 at block 50 of 50.
 */
void decide_race_levels(int first_test, int max_blocks, double *levels);
/* The level of the look after `blocks` blocks (clamped to first_test..max_blocks). */
double decide_race_level(int first_test, int max_blocks, int blocks);
/*
 * The settings of a verdict on a raced experiment: s->alpha becomes the
 * level of the look at the blocks the input holds runs of (a verdict
 * after a race is the race's own last look, never at the full design's
 * level unless the race earned it).
 */
void decide_race_settings(const struct decide_input *in, int first_test, int max_blocks,
			  struct decide_settings *s);

/*
 * The number of runs a race of this size is expected to take: nsim races
 * simulated through decide_race with a seeded generator, run-to-run CV 5 %,
 * the decisions' true means spread evenly over 0..-10 % (the baseline in
 * the middle); nreference host references run every block.  *max_out gets
 * the full design's count.  NAN when a simulated look fails (first_test
 * below 2): unknown, never the full design's count passed off as a race's.
 */
DECIDE_MUST_CHECK double decide_race_expected_runs(size_t ndecisions, size_t nlevels, size_t nreference,
				 int first_test, int max_blocks, double equivalence, uint64_t seed,
				 int nsim, size_t *max_out);

#endif
