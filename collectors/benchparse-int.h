/*
 * benchparse-int: what the per-benchmark parsers (collectors/parse-*.c)
 * share.  Private to collectors/benchparse*.c and parse-*.c; the contract
 * for everyone else is benchparse.h.
 */
#ifndef TA_BENCHPARSE_INT_H
#define TA_BENCHPARSE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/strbuf.h"
#include "benchparse.h"

/*
 * A benchmark's output cut into lines: a private copy in which every "\n",
 * "\r" and NUL became a terminator, so each line is a C string.  Empty
 * lines are dropped (CRLF gives one line, not two); lines of blanks stay.
 */
struct bp_text {
	char *buf;
	char **line;
	size_t nlines;
};

/* What one parse works on: the kind, the raw texts (for excerpts) and their lines. */
struct bp_input {
	enum bench_kind kind;
	const char *out, *err;
	size_t out_len, err_len;
	struct bp_text o, e;
};

/* Per-kind parsers: add metrics to m, or fail through bp_fail*(). */
int bp_parse_ebizzy(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err);
int bp_parse_redis(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err);
int bp_parse_stress_ng(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err);
int bp_parse_sysbench(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err);
int bp_parse_time(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err);

/*
 * Reads a number in C-locale syntax at *p — [+-]digits[.digits][e[+-]digits]
 * (".5" and "5." too) — and advances *p past it.  False, *p unchanged, when
 * there is none or it is not finite.
 */
bool bp_number(const char **p, double *v);
/* A whole string (blanks around allowed) as one number. */
bool bp_number_all(const char *s, double *v);
const char *bp_skip_ws(const char *p);
/* Consumes the literal lit at *p; false (and *p unchanged) if absent. */
bool bp_eat(const char **p, const char *lit);
/* Only blanks remain. */
bool bp_at_end(const char *p);

/* Adds a metric, or replaces the value of the one already called name. */
void bp_metric_set(struct bench_metrics *m, const char *name, double value,
		   const char *unit, enum metric_dir dir);
/*
 * Reports a metric the kind declares (model/bench-kind.c), with the unit
 * and direction declared there: `pattern` is the declared name
 * ("redis.<test>"), name the metric's own (NULL: the pattern itself).
 */
void bp_report(const struct bp_input *in, struct bench_metrics *m, const char *pattern,
	       const char *name, double value);

/* Appends s quoted, at most max bytes, non-printable bytes as \xNN. */
void bp_quote(struct strbuf *sb, const char *s, size_t max);

/*
 * Fails the parse: "<what was expected>; found: <excerpt>", the excerpt
 * being the tool's error line if there is one, else the first lines of
 * stdout and stderr.  Always -1.
 */
int bp_fail(const struct bp_input *in, struct ta_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
