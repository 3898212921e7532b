/*
 * rank: ranking, verdicts and the recommendation over one experiment's
 * results.  Pure: it takes the structs schema/db-results reads and returns
 * structs; the commands (rank, recommend, report) only format them.
 *
 * The rules are documented in docs/advisor.md; the short version:
 *  - only runs with status 'ok' count; the metric is --metric or the
 *    experiment's primary metric, its direction the one stored with it;
 *  - factors have roles: decision factors (topology, pinning, host knobs)
 *    make a *decision* (what a user deploys); environment factors (noise and
 *    the factors advisor.environment names) make *levels*.  A configuration
 *    is one decision at one level;
 *  - every comparison is Welch's t on the log scale (stats_log_welch): the
 *    gain, its interval and the verdict come from one interval, Bonferroni-
 *    adjusted over the family of comparisons with the baseline;
 *  - verdicts: better (interval above 0), equivalent (inside +-delta),
 *    worse (below 0), undecided (none of these), insufficient (< 2 runs);
 *  - "tied with the best" is equivalence with the best; cost tie-breaks
 *    (fewer host CPUs, fewer non-default host settings, significantly
 *    fewer ganged exits) choose only among decisions equivalent to the top.
 */
#ifndef TA_RANK_H
#define TA_RANK_H

#include <stdbool.h>
#include <stddef.h>

#include "../schema/db-results.h"
#include "../util/err.h"
#include "../util/strbuf.h"
#include "stats.h"

#define RANK_ALPHA 0.05
#define RANK_POWER 0.8			/* of min_detectable_effect and needed_repetitions */
#define RANK_DEFAULT_EQUIVALENCE 0.02	/* advisor.equivalence */
#define RANK_MAX_REPETITIONS 1000	/* needed_repetitions beyond this: "more than" */
#define RANK_MIN_REPETITIONS 3
#define RANK_MAX_CV 0.05
#define RANK_TOP_EXITS 3

enum rank_verdict {
	RANK_VERDICT_NONE,	/* the reference itself: not compared */
	RANK_BETTER,
	RANK_EQUIVALENT,
	RANK_WORSE,
	RANK_UNDECIDED,
	RANK_INSUFFICIENT,
};
/* "better", "equivalent", "worse", "undecided", "insufficient"; NONE: "baseline". */
const char *rank_verdict_name(enum rank_verdict v);

/* advisor.objective: how a decision's ratios over the environment levels combine. */
enum rank_objective {
	RANK_OBJECTIVE_WORST,	/* the worst level's ratio (default) */
	RANK_OBJECTIVE_MEAN,	/* the geometric mean of the levels' ratios */
};
const char *rank_objective_name(enum rank_objective o);

/* What the stored sweep says about the decision; rank_options_init gives the defaults. */
struct rank_options {
	const char *metric;		/* NULL: the experiment's primary metric */
	double equivalence;		/* delta of "equivalent", a fraction (0.02) */
	enum rank_objective objective;
	/* environment factors besides noise: for the cost rules (an
	 * environment knob or pinning is no choice); the grouping into
	 * decisions and levels is the stored records' */
	const char *const *environment;
	size_t nenvironment;
	bool settings_unknown;		/* the experiment's advisor settings were not stored */
};
void rank_options_init(struct rank_options *o);

/* One metric of a multi-metric benchmark (e.g. redis.GET) against the baseline. */
struct rank_test_ratio {
	const char *name;	/* points into the results */
	bool higher_is_better;	/* as stored with the metric */
	double mean;
	double ratio, ratio_lo, ratio_hi;	/* to the baseline (log-scale Welch) */
	double gain, gain_lo, gain_hi;		/* direction-aware */
};

struct rank_exit_reason {
	const char *source, *reason;	/* point into the results */
	double mean_per_run;
};

struct rank_decision;
struct hostfx;

/* One configuration: one decision at one environment level. */
struct rank_entry {
	const struct db_results_config *config;
	struct rank_decision *decision;
	size_t level;			/* index into rank_result.levels */
	size_t position;		/* 1-based; 0: no successful run with the metric */
	struct stats_summary s;
	double *values;			/* the metric per successful run */
	const struct db_results_run **value_runs;	/* the run of each value */
	double *dev;			/* studentized deviation of each value */
	bool *outlier;			/* stats_outliers' flag of each value */
	size_t noutliers;
	size_t nfailed;			/* runs failed or interrupted */
	/* against the baseline's configuration at the same level (NAN without
	 * one, or for the baseline itself); interval at rank_result.level_alpha */
	double ratio, ratio_lo, ratio_hi;
	double gain, gain_lo, gain_hi;	/* direction-aware: +0.8 = 80 % better */
	double p_baseline, p_baseline_adj;	/* raw and Bonferroni-adjusted */
	enum rank_verdict verdict;
	bool beats_baseline;		/* verdict == better */
	double min_detectable_effect;	/* gain these runs detect with RANK_POWER */
	int needed_repetitions;		/* more runs each to settle; 0: settled */
	/* composite of a multi-metric benchmark (geometric mean of the
	 * throughput tests, per run; log-scale Welch against the baseline) */
	double composite, composite_lo, composite_hi;
	struct rank_test_ratio *tests;
	size_t ntests;
	/* against the best decision's configuration at this level */
	double p_best, p_best_adj;	/* NAN for the best itself / untestable */
	bool is_best, tied_with_best;	/* tied: its decision is equivalent to the best */
	/* ganged exits: NAN when not applicable (no data for this configuration) */
	double gang_exits, gang_exits_per_s;
	struct rank_exit_reason top_exits[RANK_TOP_EXITS];
	size_t ntop_exits;
	/* guest.host_baseline: the benchmark on the host itself, shown for the
	 * virtualization overhead, never best nor recommended (no VM shape) */
	bool host_reference;
	/* tie-break inputs */
	int host_cpus;
	int nondefault_knobs;
	/* racing: the block after which this configuration was dropped as shown
	 * worse than the best (0: not eliminated); filled from the stored race */
	int eliminated_block;
};

/*
 * One decision: the configurations that differ only in environment
 * factors.  Its objective (advisor.objective over the levels) against the
 * baseline decision gives its verdict; against the best, its tie.
 */
struct rank_decision {
	char *key;			/* the configuration key without environment parts */
	struct rank_entry **levels;	/* one per level; NULL: not measured there */
	const struct rank_entry *entry;	/* the first measured level's: its shape and settings */
	bool host_reference;
	double gain, gain_lo, gain_hi;	/* objective, direction-aware, vs the baseline */
	double p_adj;			/* of the objective's test (mean objective, one level) */
	enum rank_verdict verdict;
	double min_detectable_effect;
	int needed_repetitions;
	/* against the best decision (objective gain of this one over the best) */
	double best_gain, best_gain_lo, best_gain_hi;
	bool is_best, equivalent_to_best, worse_than_best;
	double score;			/* objective log gain over the reference: the order */
	int host_cpus, nondefault_knobs;
	double *gang;			/* per-run ganged exits/s (else per run) over all levels */
	size_t ngang;
	int eliminated_block;		/* the largest of its configurations' */
};

struct rank_warning {
	const char *kind;	/* few_repetitions, high_cv, failed_run, ... (docs/advisor.md) */
	const char *config;	/* configuration key, NULL for the experiment */
	char *message;
};

struct rank_result {
	const struct db_results *res;
	const char *metric;		/* points into res or the caller's string */
	const char *unit;
	bool higher_is_better;		/* the direction stored with the metric */
	bool direction_known;		/* false: none stored, higher assumed */
	double equivalence;		/* delta */
	enum rank_objective objective;
	bool settings_unknown;		/* rank_options' */
	struct rank_entry *entries;	/* in rank order; position-0 entries last */
	size_t nentries;
	char **levels;			/* environment levels ("noise=none", ...) */
	size_t nlevels;
	struct rank_decision *decisions;	/* in objective order; host references last */
	size_t ndecisions;
	size_t ncomparisons;		/* the Bonferroni family: decisions x levels */
	double level_alpha;		/* per-comparison level of every entry's interval */
	const struct rank_entry *best;	/* best decision's first-level entry; NULL: no data */
	const struct rank_entry *baseline;	/* baseline decision's first-level entry */
	const struct rank_decision *best_decision, *baseline_decision;
	const char *baseline_source;	/* "marked", "host default shape" or NULL */
	const char *composite_family;	/* e.g. "redis", NULL: single metric */
	/* the recommendation */
	const struct rank_entry *recommended;	/* decisive only when verdict is better/equivalent */
	const struct rank_decision *recommended_decision;
	enum rank_verdict verdict;	/* better, equivalent, undecided or insufficient */
	bool nothing_beats_baseline;	/* verdict equivalent: keep the baseline */
	const struct rank_decision **contention;	/* still in contention (undecided) */
	size_t ncontention;
	double min_detectable_effect;	/* the largest over the contention */
	int needed_repetitions;		/* the most any contention comparison needs */
	char *reason;			/* one paragraph: why this one */
	/* evidence */
	const char *correlation_x;	/* "gang_exits_per_s", "gang_exits" or NULL */
	double spearman;		/* of correlation_x with the metric across runs */
	size_t spearman_n;
	bool gang_data;			/* any successful run has ganged-exit data */
	size_t runs_total, runs_ok, runs_failed;
	struct rank_warning *warnings;
	size_t nwarnings;
	/* a sweep over several hosts: the host x configuration diagnostic
	 * (hostfx.h) rank and report show; NULL: one host, or not computed */
	const struct hostfx *hosts;
};

/*
 * Opens the database at db_path, reads experiment `exp` (id or name) into
 * res and ranks it into r (the I/O edge of this module; rank-load.c).  On
 * success the caller releases both.
 */
int rank_load(const char *db_path, const char *exp, const char *metric,
	      struct db_results *res, struct rank_result *r, struct ta_err *err);
/*
 * The options stored with the experiment (res->exp.advisor: objective,
 * equivalence, environment); the defaults, with settings_unknown, for one
 * stored before they were.  o points into res.
 */
void rank_options_from_stored(const struct db_results *res, struct rank_options *o);

/*
 * Ranks res by `metric` (NULL: the experiment's primary metric).  Fails
 * with EXIT_BAD_INPUT when there is no such metric in any successful run.
 */
int rank_compute(const struct db_results *res, const char *metric, struct rank_result *out,
		 struct ta_err *err);
/*
 * rank_compute with explicit options (rank_compute uses rank_options_init's;
 * rank_load those of the stored sweep).  The result keeps no pointer into opt.
 */
int rank_compute_opts(const struct db_results *res, const struct rank_options *opt,
		      struct rank_result *out, struct ta_err *err);
void rank_result_release(struct rank_result *r);
/* Is the recommendation a decision (better, equivalent), or only the current leader? */
bool rank_decisive(const struct rank_result *r);

/*
 * The libvirt XML fragment that gives a guest this configuration's shape as
 * the measured runs had it: <vcpu>, <cpu> (the mode and model stored with
 * the configuration) with <topology>, and <cputune> with vcpupin and
 * emulatorpin.
 */
void rank_xml_fragment(const struct db_results_config *c, struct strbuf *out);
/*
 * The host commands that apply this configuration's knobs, one per line,
 * in the order the sweep lists them; nothing when it sets no knob.
 */
void rank_host_commands(const struct db_results_config *c, struct strbuf *out);
/* Number of distinct host CPUs in a cpuset list ("0-3,8"); -1 when malformed. */
int rank_cpuset_count(const char *const *sets, size_t n);

/* ---- output shared by rank, recommend and report --------------------------- */

struct json_writer;
/* One configuration as a JSON object (keys in docs/advisor.md). */
void rank_json_entry(struct json_writer *w, const struct rank_result *r,
		     const struct rank_entry *e);
/* The warnings as a JSON array of {kind, configuration, message}. */
void rank_json_warnings(struct json_writer *w, const struct rank_result *r);
/* The whole ranking as `rank --json` prints it. */
void rank_json(struct json_writer *w, const struct rank_result *r);
/* The recommendation as `recommend --json` prints it. */
void rank_json_recommendation(struct json_writer *w, const struct rank_result *r);
/* The ranking and the recommendation as text, as `rank` and `recommend` print them. */
void rank_text(struct strbuf *out, const struct rank_result *r);
void rank_text_recommendation(struct strbuf *out, const struct rank_result *r);
/* The status column of a configuration: host reference, eliminated after
 * block k, best, tied with the best, worse than the best, ... (never outliers). */
void rank_entry_status(struct strbuf *out, const struct rank_result *r,
		       const struct rank_entry *e);
/* "+80.6 %" style text of a fraction (NAN: "n/a"). */
void rank_format_gain(struct strbuf *out, double gain);
/* "+12.0 % [+8.1 %, +16.0 %]"; the gain alone when lo is NAN. */
void rank_format_gain_ci(struct strbuf *out, double gain, double lo, double hi);

/*
 * rank_load, then the ranking as `rank` prints it (as JSON with `json`)
 * appended to out: what rank and extend print (rank-load.c).
 */
int rank_load_print(const char *db_path, const char *exp, const char *metric, bool json,
		    struct strbuf *out, struct ta_err *err);

#endif
