/*
 * benchparse: turn a benchmark's output into named metrics.
 *
 * Pure functions, no I/O: the controller hands over what the benchmark
 * wrote (stdout, and stderr where a tool reports there — `time`, stress-ng)
 * as bytes + length; back comes a list of metrics or an error.  The text
 * need not be NUL-terminated and may contain NUL bytes, "\r" progress
 * updates and CRLF line ends: "\n", "\r" and NUL all end a line here, so a
 * NUL in the middle never hides the rest of the output.  Numbers are read
 * in the C locale whatever LC_NUMERIC says ("1e3", "30048.08"); NaN and
 * infinities are never accepted as results.
 *
 * Errors: -1 with err->code = EXIT_FAILURE_RUN and a message saying what was
 * expected and quoting a short excerpt of what was found (the tool's own
 * error line, e.g. "Could not connect to Redis at …", usually).  A bad
 * user regex is EXIT_BAD_INPUT.
 *
 * Metric names (declared with their units and directions in
 * model/bench-kind.c, the one table of kinds; the advisor and the DB rely
 * on them):
 *
 *   kind          name                              unit        better
 *   ------------  --------------------------------  ----------  ------
 *   ("-": METRIC_DIR_NONE, a figure that is no figure of merit)
 *   ebizzy        records_per_s                     records/s   higher
 *                 real_s, user_s, sys_s             s           lower
 *                 runs (summary blocks averaged)    runs        -
 *   redis         redis.<TEST>                      requests/s  higher
 *                 redis.<TEST>.<STAT>_ms            ms          lower
 *                   STAT: avg, min, p50, p95, p99, max (whatever the
 *                   output carries: --csv >= 6.2 has all, -q >= 6.2 p50)
 *                 requests_per_s (geometric mean    requests/s  higher
 *                   of every redis.<TEST> printed, helpers such as
 *                   "LPUSH (needed to benchmark LRANGE)" included)
 *   stress-ng     stress-ng.<stressor>.bogo_ops_per_s  bogo-ops/s  higher
 *                   (the "real time" column)
 *                 bogo_ops_per_s (sum over stressors)  bogo-ops/s  higher
 *   sysbench      events_per_s                      events/s    higher
 *                 latency_min_ms, latency_avg_ms,   ms          lower
 *                 latency_max_ms, latency_pNN_ms
 *                   (NN = the printed percentile, "99.9" -> p99_9)
 *   kernel-build  real_s, user_s, sys_s             s           lower
 *                   (from `time`: bash, POSIX -p, GNU, BusyBox)
 *   command       one per named group (?<name>…)    NULL        unknown
 *                   (the config's metric gives its group both)
 *
 * Redis test names are normalised so that they are safe in keys: every run
 * of characters other than [A-Za-z0-9_] becomes one "_", leading and
 * trailing "_" are dropped: "MSET (10 keys)" -> redis.MSET_10_keys,
 * "LRANGE_100 (first 100 elements)" -> redis.LRANGE_100_first_100_elements.
 * A test reported more than once (-l, concatenated runs) keeps its last
 * result.
 *
 * The command kind's regex is PCRE2 (Perl syntax: \d, (?<name>…),
 * (?P<name>…), (?:…), lookaround), compiled with "^"/"$" matching at line
 * ends and without UTF-8 (output is bytes).  A pattern holding a newline
 * character may span lines; any other is tried line by line.  Compiling is
 * bounded (length, nesting, and PCRE2 refuses a too large program such as
 * ((a{1,255}){1,255}){1,255}); every match attempt has PCRE2 step, depth and
 * heap limits, and a whole search a time budget, so no pattern and no
 * output can hang a run: those fail with EXIT_FAILURE_RUN saying so.
 * The LAST match in stdout counts (tools print progress first); only
 * when stdout has no match at all is stderr searched.  Each named group must
 * hold a number.  The parser cannot know a group's unit or direction (they
 * come back NULL and METRIC_DIR_UNKNOWN): the caller applies the config's
 * `metric` (name, direction, unit) to the group it names.  For
 * the other kinds a regex is optional: its groups are added to the kind's
 * metrics, replacing ones of the same name.
 */
#ifndef TA_BENCHPARSE_H
#define TA_BENCHPARSE_H

#include <stddef.h>

#include "../model/bench-kind.h"
#include "../util/err.h"
#include "../util/metricdir.h"

struct bench_metric {
	char *name;		/* owned */
	double value;		/* finite */
	const char *unit;	/* static string; NULL when unknown (as db_metric) */
	enum metric_dir dir;	/* UNKNOWN only for command groups */
};

/* Zero-initialised is empty; release with bench_metrics_release(). */
struct bench_metrics {
	struct bench_metric *v;
	size_t n, alloc;
};

/*
 * Parses one benchmark run's output.  regex_or_null is the config's
 * parse_regex (required for BENCH_COMMAND).  err_text may be NULL when
 * err_len is 0.  On success m holds at least one metric; on failure m is
 * left empty.  m must be empty or previously freed.
 */
int benchparse_run(enum bench_kind kind, const char *regex_or_null,
		   const char *out, size_t out_len,
		   const char *err_text, size_t err_len,
		   struct bench_metrics *m, struct ta_err *err);

/*
 * Checks a command regex the way benchparse_run() will use it (the same
 * compiler and limits, at least one named group), so that a config can be
 * rejected before any run.
 * -1 with EXIT_BAD_INPUT and the reason.
 */
int benchparse_regex_check(const char *pattern, struct ta_err *err);

/*
 * The same check, also giving the name of every capture group in order
 * ((*names)[i] is group i+1; NULL for an unnamed group).  The config loader
 * uses it to check that the metric is one of the named groups.  Free each
 * name and the array.
 */
int benchparse_regex_groups(const char *pattern, char ***names, size_t *n,
			    struct ta_err *err);

/* The metric called name, or NULL. */
const struct bench_metric *bench_metrics_find(const struct bench_metrics *m,
					      const char *name);
void bench_metrics_release(struct bench_metrics *m);

#endif
