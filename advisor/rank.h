/*
 * rank: one experiment's ranking and recommendation as the commands show
 * them.  The decisions are the engine's (decide/decide.h: verdicts, ties,
 * the recommendation, what would settle it, the race); this module reads
 * the stored experiment into the engine's input (decide/input.h), runs it,
 * and lays its result out per configuration and per decision next to the
 * figures a reader wants beside them (means, intervals of the mean, ganged
 * exits, exit reasons, the tests of a multi-metric benchmark, warnings).
 * Pure apart from rank_load (rank-load.c), which reads the database; the
 * text, JSON and HTML forms are rank-output.c, rank-reason.c and
 * report-html.c, the XML and host commands deploy.h.
 */
#ifndef TA_RANK_H
#define TA_RANK_H

#include <stdbool.h>
#include <stddef.h>

#include "../decide/decide.h"
#include "../decide/input.h"
#include "../decide/stats.h"
#include "../schema/db-results.h"
#include "../util/err.h"
#include "../util/strbuf.h"

#define RANK_MIN_REPETITIONS 3
#define RANK_MAX_CV 0.05
#define RANK_TOP_EXITS 3

/* What the stored sweep says about the decision; rank_options_init gives the defaults. */
struct rank_options {
	const char *metric;		/* NULL: the experiment's primary metric */
	double equivalence;		/* delta of "equivalent", a fraction (0.02) */
	double max_failure_rate;	/* advisor.max_failure_rate */
	enum decide_objective objective;
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
	double ratio, ratio_lo, ratio_hi;	/* to the baseline */
	double gain, gain_lo, gain_hi;		/* direction-aware */
};

struct rank_exit_reason {
	const char *source, *reason;	/* point into the results */
	double mean_per_run;
	double mean_time_s;	/* handling time per run, over the runs that timed
				 * this reason's exits; NAN: none did */
};

struct rank_decision;
struct hostfx;

/* One configuration: one decision at one environment level. */
struct rank_entry {
	const struct db_results_config *config;
	size_t index;			/* the engine's configuration index */
	struct rank_decision *decision;
	size_t level;			/* index into rank_result.levels */
	size_t position;		/* 1-based; 0: no successful run with the metric */
	struct stats_summary s;
	double *values;			/* the metric per successful run */
	const struct db_results_run **value_runs;	/* the run of each value */
	double *dev;			/* robust deviation of each value (decide_run_out) */
	bool *outlier;
	size_t noutliers;
	size_t nfailed;			/* runs failed (outcomes) */
	size_t ninterrupted;		/* runs interrupted (no outcome) */
	size_t nboots;			/* distinct boots its successful runs had */
	double failure_rate;
	bool failing, more_failures;
	/* against the baseline's configuration at the same level (NAN without
	 * one, or for the baseline itself); interval at rank_result.level_alpha */
	double ratio, ratio_lo, ratio_hi;
	double gain, gain_lo, gain_hi;	/* direction-aware: +0.8 = 80 % better */
	double p_baseline, p_baseline_adj;	/* raw and Bonferroni-adjusted */
	size_t pairs, units;		/* blocks compared; independent units */
	size_t set_aside;		/* far units left out of the comparison */
	enum decide_verdict verdict;
	bool beats_baseline;		/* verdict == better */
	double min_detectable_effect;
	int needed_repetitions;		/* more blocks to settle; 0: settled; -1 unknown */
	/* composite of a multi-metric benchmark (geometric mean of the
	 * throughput tests, per run) against the baseline */
	double composite, composite_lo, composite_hi;
	struct rank_test_ratio *tests;
	size_t ntests;
	/* against the best decision's configuration at this level */
	double p_best, p_best_adj;
	bool is_best, tied_with_best;
	double gang_exits, gang_exits_per_s;	/* NAN: not applicable */
	struct rank_exit_reason top_exits[RANK_TOP_EXITS];
	size_t ntop_exits;
	bool host_reference;
	int host_cpus;
	int nondefault_knobs;
	int eliminated_block;		/* a race dropped its decision after that block; 0: no */
};

/*
 * One decision: the configurations that differ only in environment
 * factors, with the engine's verdict of its objective.
 */
struct rank_decision {
	const char *key;		/* points into the engine's input */
	size_t index;			/* the engine's decision index */
	struct rank_entry **levels;	/* one per level; NULL: not measured there */
	const struct rank_entry *entry;	/* the first measured level's: its shape and settings */
	bool host_reference;
	double gain, gain_lo, gain_hi;	/* objective, direction-aware, vs the baseline */
	double gain_bias;		/* of gain under `worst` (<= 0, a fraction); 0: none; NAN */
	double p_adj;
	enum decide_verdict verdict;
	double min_detectable_effect;
	int needed_repetitions;
	double best_gain, best_gain_lo, best_gain_hi;
	bool is_best, equivalent_to_best, worse_than_best;
	double score;
	int host_cpus, nondefault_knobs;
	size_t runs_ok, runs_failed;
	double failure_rate;
	bool failing, more_failures;
	size_t failing_level;		/* the level it fails at; SIZE_MAX: none (or pooled) */
	double failures_p;		/* of more failures than the baseline; NAN: not tested */
	bool in_contention;
	int needed_vs_pick;
	int eliminated_block;		/* 0: not eliminated */
	const char *eliminated_against;	/* the decision it lost to; NULL: failing */
	double eliminated_p;
};

struct rank_warning {
	const char *kind;	/* few_repetitions, high_cv, failed_run, ... (docs/advisor.md) */
	const char *config;	/* configuration key, NULL for the experiment */
	char *message;
};

struct rank_result {
	const struct db_results *res;
	struct decide_sweep sweep;	/* the engine's input */
	struct decide_result dr;	/* and its result */
	struct decide_roles roles;	/* environment factors (points into the options' copies) */
	char **environment;		/* owned copies of the roles' names */
	const char *metric;		/* points into res or the caller's string */
	const char *unit;
	bool higher_is_better;		/* the direction stored with the metric */
	bool direction_known;		/* false: none stored, higher assumed */
	double equivalence;
	double max_failure_rate;
	enum decide_objective objective;
	bool settings_unknown;		/* rank_options' */
	struct rank_entry *entries;	/* in rank order; position-0 entries last */
	size_t nentries;
	char **levels;			/* the sweep's level labels ("noise=none", ...) */
	size_t nlevels;
	struct rank_decision *decisions;	/* by objective; host references last */
	size_t ndecisions;
	size_t ncomparisons;		/* m x levels */
	double level_alpha;
	const struct rank_entry *best, *baseline;
	const struct rank_decision *best_decision, *baseline_decision;
	const char *baseline_source;	/* "marked", "host default shape" or NULL */
	const char *composite_family;	/* e.g. "redis", NULL: single metric */
	/* the recommendation */
	const struct rank_entry *recommended;	/* decisive only when verdict is better/equivalent */
	const struct rank_decision *recommended_decision;
	const struct rank_decision *leader;	/* undecided: what needed_repetitions settles */
	enum decide_verdict verdict;
	bool nothing_beats_baseline;
	const struct rank_decision **contention;
	size_t ncontention;
	const struct rank_decision **unsettled;	/* eliminated, not shown worse or equivalent */
	size_t nunsettled;
	double min_detectable_effect;
	int needed_repetitions;		/* blocks to settle the leader against the baseline */
	char *reason;			/* one paragraph: why this one (rank-reason.c) */
	/* evidence */
	const char *correlation_x;
	double spearman;
	size_t spearman_n;
	bool gang_data;
	size_t runs_total, runs_ok, runs_failed, runs_interrupted;
	struct rank_warning *warnings;
	size_t nwarnings;
	/* a sweep over several hosts: the host x configuration diagnostic
	 * (hostfx.h) rank and report show; NULL: one host, or not computed */
	const struct hostfx *hosts;
};

/*
 * Opens the database at db_path, reads experiment `exp` (id or name) into
 * res and ranks it into r (the I/O edge of this module; rank-load.c).
 */
int rank_load(const char *db_path, const char *exp, const char *metric,
	      struct db_results *res, struct rank_result *r, struct ta_err *err);
/*
 * The options stored with the experiment (res->exp.advisor: objective,
 * equivalence, max_failure_rate, environment); the defaults, with
 * settings_unknown, for one stored before they were.  o points into res.
 */
void rank_options_from_stored(const struct db_results *res, struct rank_options *o);

/* Ranks res by `metric` (NULL: primary) with default options. */
int rank_compute(const struct db_results *res, const char *metric, struct rank_result *out,
		 struct ta_err *err);
/*
 * rank_compute with explicit options.  Fails with EXIT_BAD_INPUT when the
 * metric is in no successful run.  The result keeps no pointer into opt.
 */
int rank_compute_opts(const struct db_results *res, const struct rank_options *opt,
		      struct rank_result *out, struct ta_err *err);
void rank_result_release(struct rank_result *r);
bool rank_decisive(const struct rank_result *r);
/*
 * What an undecided verdict may call "leading for now": the engine's best
 * objective (decide_result.best), never the pick that merely stays until
 * settled (the baseline, or a decision shown better beside a higher
 * scorer); without a baseline and with nothing testable, the pick by its
 * mean.  NULL: nothing leads.
 */
const struct rank_decision *rank_leading(const struct rank_result *r);
/* The decision with this engine index. */
const struct rank_decision *rank_decision_at(const struct rank_result *r, size_t index);

/*
 * Was the host busy during this run: its 1-minute load average at the
 * run's end above the host's online CPUs (both recorded)?  The `host_busy`
 * warning counts such runs.
 */
bool rank_run_busy(const struct db_results_run *run);

/* Builds r->reason, the recommendation's paragraph (rank-reason.c). */
void rank_reason(struct rank_result *r);

/* ---- output shared by rank, recommend and report (rank-output.c) ---------- */

struct json_writer;
/* The whole ranking as `rank --json` prints it. */
void rank_json(struct json_writer *w, const struct rank_result *r);
void rank_json_recommendation(struct json_writer *w, const struct rank_result *r);
void rank_text(struct strbuf *out, const struct rank_result *r);
void rank_text_recommendation(struct strbuf *out, const struct rank_result *r);
/* The status column: host reference, eliminated after block k, best, ... */
void rank_entry_status(struct strbuf *out, const struct rank_result *r,
		       const struct rank_entry *e);
/*
 * A configuration's figure on the scale of its gains (ratios of geometric
 * means): the geometric mean of its values and the 95 % interval of it
 * (Student t on the logs, exponentiated: as positive as the values).  The
 * arithmetic mean and its t interval, geometric false, when a value is not
 * positive.  NAN without values (lo, hi: with fewer than 2).
 */
struct rank_location {
	double mean, lo, hi;
	bool geometric;
};
void rank_location_of(const double *values, size_t n, struct rank_location *out);
/* Whether every measured configuration of r has a geometric location. */
bool rank_locations_geometric(const struct rank_result *r);
/* e's location as one table of r shows them: geometric (geo) or arithmetic for all. */
void rank_entry_location(const struct rank_entry *e, bool geo, struct rank_location *out);
/* "+80.6 %" style text of a fraction (NAN: "n/a"). */
void rank_format_gain(struct strbuf *out, double gain);
/* "+12.0 % [+8.1 %, +16.0 %]"; the gain alone when lo is NAN. */
void rank_format_gain_ci(struct strbuf *out, double gain, double lo, double hi);
/*
 * A direction-aware gain (and its interval; lo NAN: none) as the change a
 * user sees in the value: higher is better, the gain itself ("+12.0 %
 * [+8.1 %, +16.0 %]"); lower is better, the change of the value, which
 * falls when it gains ("-38.7 % [-41.0 %, -36.2 %]"), and with `factor`
 * how many times better (", 1.63x faster"; "faster" / "slower" for a time
 * -- unit s, ms, us, ns, a name ending _ms, _us ..., or with latency or time
 * -- else "lower" /
 * "higher").  name and unit may be NULL.
 */
void rank_format_change(struct strbuf *out, double gain, double lo, double hi,
			bool higher_is_better, const char *name, const char *unit, bool factor);
/* rank_format_change in r's metric's direction, with the factor. */
void rank_format_metric_change(struct strbuf *out, const struct rank_result *r, double gain,
			       double lo, double hi);
/* The boots' variance components and what to spend next, as `show` and `rank` print them. */
void rank_text_boots(struct strbuf *out, const struct rank_result *r);
void rank_json_boots(struct json_writer *w, const struct rank_result *r);

/* rank_load, then the ranking as `rank` prints it, appended to out. */
int rank_load_print(const char *db_path, const char *exp, const char *metric, bool json,
		    struct strbuf *out, struct ta_err *err);

#endif
