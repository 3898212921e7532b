/*
 * rank: ranking and recommendation over one experiment's results.  Pure:
 * it takes the structs schema/db-results reads and returns structs; the
 * commands (rank, recommend, report) only format them.
 *
 * The rules (baseline choice, ties, tie-breaks, warnings) are documented in
 * docs/advisor.md; the short version:
 *  - only runs with status 'ok' count; the metric is --metric or the
 *    experiment's primary metric, direction from the experiment/metric rows;
 *  - "tied with the best": Holm-corrected Welch p >= 0.05 against the best;
 *  - the recommendation is, among those tied with the best (and, when there
 *    is a baseline, significantly better than it), the one with fewer ganged
 *    exits, then fewer host CPUs, then fewer non-default host knobs; when
 *    nothing beats the baseline significantly, the baseline.
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
#define RANK_MIN_REPETITIONS 3
#define RANK_MAX_CV 0.05
#define RANK_TOP_EXITS 3

/* One metric of a multi-metric benchmark (e.g. redis.GET) against the baseline. */
struct rank_test_ratio {
	const char *name;	/* points into the results */
	double mean;
	double ratio, ratio_lo, ratio_hi;	/* mean / baseline mean, bootstrap CI */
};

struct rank_exit_reason {
	const char *source, *reason;	/* point into the results */
	double mean_per_run;
};

struct rank_entry {
	const struct db_results_config *config;
	size_t position;		/* 1-based; 0: no successful run with the metric */
	struct stats_summary s;
	double *values;			/* the metric per successful run */
	const struct db_results_run **value_runs;	/* the run of each value */
	double *z;			/* modified z of each value */
	size_t noutliers;
	size_t nfailed;			/* runs failed or interrupted */
	/* against the baseline (NAN without one, or for the baseline itself) */
	double ratio, ratio_lo, ratio_hi;
	double gain, gain_lo, gain_hi;	/* direction-aware: +0.8 = 80 % better */
	double p_baseline, p_baseline_holm;
	bool beats_baseline;		/* significantly better after Holm */
	/* composite of a multi-metric benchmark (geometric mean of test ratios) */
	double composite, composite_lo, composite_hi;
	struct rank_test_ratio *tests;
	size_t ntests;
	/* against the best */
	double p_best, p_best_holm, p_best_mw;	/* NAN for the best itself / untestable */
	bool is_best, tied_with_best;
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
	bool higher_is_better;
	struct rank_entry *entries;	/* in rank order; position-0 entries last */
	size_t nentries;
	const struct rank_entry *best;	/* NULL when nothing has data */
	const struct rank_entry *baseline;	/* NULL: none */
	const char *baseline_source;	/* "marked", "host default shape" or NULL */
	const char *composite_family;	/* e.g. "redis", NULL: single metric */
	/* the recommendation */
	const struct rank_entry *recommended;
	bool nothing_beats_baseline;
	char *reason;			/* one paragraph: why this one */
	/* evidence */
	const char *correlation_x;	/* "gang_exits_per_s", "gang_exits" or NULL */
	double spearman;		/* of correlation_x with the metric across runs */
	size_t spearman_n;
	bool gang_data;			/* any successful run has ganged-exit data */
	size_t runs_total, runs_ok, runs_failed;
	struct rank_warning *warnings;
	size_t nwarnings;
};

/*
 * Opens the database at db_path, reads experiment `exp` (id or name) into
 * res and ranks it into r (the I/O edge of this module; rank-load.c).  On
 * success the caller clears both.
 */
int rank_load(const char *db_path, const char *exp, const char *metric,
	      struct db_results *res, struct rank_result *r, struct ta_err *err);

/*
 * Ranks res by `metric` (NULL: the experiment's primary metric).  Fails
 * with EXIT_BAD_INPUT when there is no such metric in any successful run.
 */
int rank_compute(const struct db_results *res, const char *metric, struct rank_result *out,
		 struct ta_err *err);
void rank_result_release(struct rank_result *r);

/* The libvirt XML fragment that gives a guest this configuration's shape. */
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
/* "+80.6 %" style text of a fraction (NAN: "n/a"). */
void rank_format_gain(struct strbuf *out, double gain);

#endif
