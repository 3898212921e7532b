/*
 * bench-kind: the one table of benchmark kinds.  Plain data and pure
 * functions over it: no I/O, includes nothing beyond util/.
 *
 * Everything the tool knows about a kind is one entry here: its name in
 * configs, keys and the DB, the argv it runs by default, its default
 * timeout, the metric it ranks by by default, every metric its parser
 * reports with unit and direction, and the server it needs (redis).  The
 * loader (experiments/config.c) takes defaults and checks `benchmark.metric`
 * against the declared metrics; the parsers (collectors/parse-*.c) take the
 * unit and direction of what they report from here; the controller starts
 * and waits for the server from here.  Adding a kind is one entry in
 * bench-kind.c and a parser in collectors/ (its line in benchparse.c's
 * dispatch table).
 *
 * Metric names may hold one or two placeholder parts, "<name>": a family
 * such as "redis.<test>" (one metric per redis test).  A part either takes
 * one of the values the table lists (redis' tests: a misspelt test is no
 * metric) or any run of [A-Za-z0-9_] (stress-ng's stressors, sysbench's
 * percentiles).
 */
#ifndef TA_BENCH_KIND_H
#define TA_BENCH_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/metricdir.h"
#include "../util/strbuf.h"

enum bench_kind {
	BENCH_EBIZZY, BENCH_REDIS, BENCH_STRESS_NG, BENCH_SYSBENCH,
	BENCH_KERNEL_BUILD, BENCH_COMMAND, BENCH_NKINDS
};

/* The names used in configs, keys, messages and the DB, indexed by kind; NULL ends. */
extern const char *const bench_kind_names[];

const char *bench_kind_name(enum bench_kind k);

/* A metric a kind's parser reports. */
struct bench_metric_spec {
	const char *name;	/* may hold "<part>" placeholders */
	const char *unit;
	enum metric_dir dir;	/* NONE: a figure, no figure of merit */
};

/* The values a placeholder part takes (NULL: any run of [A-Za-z0-9_]). */
struct bench_part {
	const char *name;	/* "<test>" */
	const char *const *values;
};

/* A server the benchmark talks to, started first in the same place. */
struct bench_server {
	const char *const *argv;	/* default benchmark.server_argv */
	const char *const *ready_argv;	/* answers once the server serves */
	const char *ready_output;	/* what ready_argv prints then */
	const char *ready_what;		/* its name in messages ("PING") */
	int ready_timeout_s;
};

struct bench_kind_info {
	/* default argv; "{d}" inside an argument is the duration in seconds */
	const char *const *argv;
	int timeout_s;			/* default timeout; 0: 3 x duration + 60 */
	const char *metric;		/* the default primary metric; NULL: the config names it */
	const struct bench_metric_spec *metrics;	/* {NULL} ends; NULL: regex groups only */
	const struct bench_part *parts;	/* {NULL} ends; may be NULL */
	const struct bench_server *server;	/* NULL: none */
	bool needs_parse_regex;		/* the config's `parse` finds the metrics */
};

const struct bench_kind_info *bench_kind_info(enum bench_kind k);

/* The declared metric whose pattern is exactly `pattern` ("redis.<test>"), or NULL. */
const struct bench_metric_spec *bench_kind_spec(enum bench_kind k, const char *pattern);

/* The declared metric `name` is (a family's member included), or NULL. */
const struct bench_metric_spec *bench_kind_metric(enum bench_kind k, const char *name);

/*
 * The kind's metric names for messages and suggestions: families with
 * listed parts expanded (redis.GET, redis.GET.p50_ms, ...), the others as
 * their pattern.  NULL-terminated; free the array and its strings.
 */
char **bench_kind_metric_names(enum bench_kind k);

/* The default argv for duration seconds, NULL-terminated; free it and its strings. */
char **bench_kind_argv(enum bench_kind k, int duration);

#endif
