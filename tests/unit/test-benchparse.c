/*
 * Unit tests for collectors/benchparse: every parser on real output samples
 * (tests/fixtures/bench/, see its README for how each was made) with exact
 * expected values, then the edge cases — empty, error and truncated
 * outputs, exponents, a comma-decimal locale, CRLF, long lines, NUL bytes —
 * and the command kind's named-group regex.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collectors/benchparse.h"
#include "util/splitmix.h"
#include "util/strbuf.h"

/* ---- helpers ---- */

static void fixture_read(struct strbuf *sb, const char *rel)
{
	const char *top = getenv("TA_TOP");
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/tests/fixtures/bench/%s", top ? top : ".", rel);
	if (strbuf_read_file(sb, strbuf_str(&path)) < 0)
		fail_msg("cannot read fixture %s: %s (run from the checkout or set TA_TOP)",
			 strbuf_str(&path), strerror(errno));
	strbuf_release(&path);
}

/* Parses and expects success; the caller frees m. */
static void parse_ok(enum bench_kind kind, const char *regex, const char *out, size_t out_len,
		     const char *err_text, size_t err_len, struct bench_metrics *m)
{
	struct ta_err err = { 0 };
	memset(m, 0, sizeof(*m));
	if (benchparse_run(kind, regex, out, out_len, err_text, err_len, m, &err))
		fail_msg("unexpected parse error: %s", err.msg);
}

/* Parses and expects failure with code and a message containing needle. */
static void parse_fails(enum bench_kind kind, const char *regex, const char *out, size_t out_len,
			const char *err_text, size_t err_len, int code, const char *needle)
{
	struct ta_err err = { 0 };
	struct bench_metrics m = { 0 };
	int rc = benchparse_run(kind, regex, out, out_len, err_text, err_len, &m, &err);
	if (rc == 0)
		fail_msg("parse succeeded with %zu metrics, expected an error containing '%s'",
			 m.n, needle);
	assert_int_equal(m.n, 0);
	assert_null(m.v);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, needle))
		fail_msg("error '%s' does not contain '%s'", err.msg, needle);
}

static double metric(const struct bench_metrics *m, const char *name)
{
	const struct bench_metric *bm = bench_metrics_find(m, name);
	if (!bm)
		fail_msg("metric %s missing", name);
	return bm->value;
}

/* ---- table-driven fixture cases ---- */

struct want {
	const char *name;
	double value;
	int approx;		/* computed (mean, sum, geomean): relative 1e-12 */
};

struct fixture_case {
	const char *label;
	enum bench_kind kind;
	const char *regex;
	const char *out_file, *err_file;	/* under tests/fixtures/bench/ */
	size_t nmetrics;			/* 0: the parse must fail */
	const char *error_has;
	struct want want[14];
};

static const struct fixture_case cases[] = {
	/* redis-benchmark 7.0, captured here (-q: progress lines, p50). */
	{ "redis 7.0 -q", BENCH_REDIS, NULL, "redis/7.0-quiet.out", NULL, 41, NULL, {
		{ "redis.PING_INLINE", 57142.86, 0 }, { "redis.PING_INLINE.p50_ms", 0.399, 0 },
		{ "redis.SET", 68965.52, 0 }, { "redis.SET.p50_ms", 0.375, 0 },
		{ "redis.LPOP", 68965.52, 0 }, { "redis.LPOP.p50_ms", 0.383, 0 },
		{ "redis.LPUSH_needed_to_benchmark_LRANGE", 76923.08, 0 },
		{ "redis.LRANGE_600_first_600_elements", 25641.03, 0 },
		{ "redis.LRANGE_600_first_600_elements.p50_ms", 1.023, 0 },
		{ "redis.MSET_10_keys", 95238.09, 0 }, { "redis.MSET_10_keys.p50_ms", 0.287, 0 },
		{ "requests_per_s", 58377.253298902004, 1 } } },
	{ "redis 7.0 -q -P 4", BENCH_REDIS, NULL, "redis/7.0-quiet-pipelined.out", NULL, 7, NULL, {
		{ "redis.SET", 333333.34, 0 }, { "redis.GET", 333333.34, 0 },
		{ "redis.MSET_10_keys", 200000.00, 0 }, { "redis.MSET_10_keys.p50_ms", 0.823, 0 },
		{ "requests_per_s", 281144.22551583993, 1 } } },
	{ "redis 7.0 --csv", BENCH_REDIS, NULL, "redis/7.0-csv.out", NULL, 141, NULL, {
		{ "redis.PING_INLINE", 76923.08, 0 }, { "redis.PING_INLINE.avg_ms", 0.327, 0 },
		{ "redis.PING_INLINE.min_ms", 0.104, 0 }, { "redis.PING_INLINE.p50_ms", 0.311, 0 },
		{ "redis.PING_INLINE.p95_ms", 0.463, 0 }, { "redis.PING_INLINE.p99_ms", 0.543, 0 },
		{ "redis.PING_INLINE.max_ms", 0.663, 0 },
		{ "redis.SADD", 100000.00, 0 },
		{ "redis.MSET_10_keys", 95238.09, 0 }, { "redis.MSET_10_keys.max_ms", 0.543, 0 },
		{ "requests_per_s", 71739.514778316676, 1 } } },
	{ "redis 7.0 verbose", BENCH_REDIS, NULL, "redis/7.0-verbose.out", NULL, 15, NULL, {
		{ "redis.SET", 80000.00, 0 }, { "redis.SET.avg_ms", 0.325, 0 },
		{ "redis.SET.min_ms", 0.096, 0 }, { "redis.SET.p99_ms", 0.671, 0 },
		{ "redis.SET.max_ms", 0.823, 0 }, { "redis.GET", 83333.34, 0 },
		{ "redis.GET.max_ms", 0.671, 0 },
		{ "requests_per_s", 81649.66135875872, 1 } } },
	/* The seed's numbers (redis before 6.2, 1 core x 2 threads). */
	{ "redis seed -q", BENCH_REDIS, NULL, "redis/seed-quiet.out", NULL, 9, NULL, {
		{ "redis.SET", 30048.08, 0 }, { "redis.GET", 31806.62, 0 },
		{ "redis.INCR", 247524.75, 0 }, { "redis.LPUSH", 30284.68, 0 },
		{ "redis.LPOP", 34036.76, 0 }, { "redis.SADD", 168634.06, 0 },
		{ "redis.SPOP", 261096.61, 0 }, { "redis.MSET_10_keys", 11107.41, 0 },
		{ "requests_per_s", 57485.779725821529, 1 } } },
	{ "redis <6.2 -q, progress", BENCH_REDIS, NULL, "redis/pre-6.2-quiet-progress.out", NULL, 9, NULL, {
		{ "redis.SET", 36231.88, 0 }, { "redis.GET", 57438.25, 0 },
		{ "redis.LPUSH", 38343.56, 0 }, { "redis.MSET_10_keys", 9922.60, 0 },
		{ "requests_per_s", 73199.216786126446, 1 } } },
	{ "redis <6.2 --csv", BENCH_REDIS, NULL, "redis/pre-6.2-csv.out", NULL, 9, NULL, {
		{ "redis.GET", 57438.25, 0 }, { "redis.SPOP", 247524.75, 0 },
		{ "redis.MSET_10_keys", 9922.60, 0 },
		{ "requests_per_s", 73199.216786126446, 1 } } },
	{ "redis no server", BENCH_REDIS, NULL, NULL, "redis/7.0-no-server.err", 0,
	  "\"Could not connect to Redis at 127.0.0.1:31190: Connection refused\"", { { 0 } } },

	/* stress-ng 0.15.06, captured here. */
	{ "stress-ng cpu", BENCH_STRESS_NG, NULL, NULL, "stress-ng/0.15-cpu.err", 2, NULL, {
		{ "stress-ng.cpu.bogo_ops_per_s", 1732.00, 0 },
		{ "bogo_ops_per_s", 1732.00, 0 } } },
	{ "stress-ng cpu+matrix", BENCH_STRESS_NG, NULL, NULL, "stress-ng/0.15-cpu-matrix.err", 3, NULL, {
		{ "stress-ng.cpu.bogo_ops_per_s", 987.28, 0 },
		{ "stress-ng.matrix.bogo_ops_per_s", 2950.85, 0 },
		{ "bogo_ops_per_s", 987.28 + 2950.85, 1 } } },
	{ "stress-ng --metrics", BENCH_STRESS_NG, NULL, NULL, "stress-ng/0.15-metrics.err", 2, NULL, {
		{ "stress-ng.cpu.bogo_ops_per_s", 1524.97, 0 } } },
	{ "stress-ng --log-brief", BENCH_STRESS_NG, NULL, NULL, "stress-ng/0.15-log-brief.err", 2, NULL, {
		{ "stress-ng.cpu.bogo_ops_per_s", 1695.71, 0 } } },
	{ "stress-ng --stdout", BENCH_STRESS_NG, NULL, "stress-ng/0.15-stdout.out", NULL, 2, NULL, {
		{ "stress-ng.cpu.bogo_ops_per_s", 1721.13, 0 } } },
	{ "stress-ng old info: prefix", BENCH_STRESS_NG, NULL, NULL, "stress-ng/old-info-prefix.err", 2, NULL, {
		{ "stress-ng.cpu.bogo_ops_per_s", 340.38, 0 }, { "bogo_ops_per_s", 340.38, 0 } } },
	{ "stress-ng bad option", BENCH_STRESS_NG, NULL, NULL, "stress-ng/0.15-bad-option.err", 0,
	  "\"stress-ng: unrecognized option '--nosuch'\"", { { 0 } } },

	/* sysbench 1.0.20, captured here. */
	{ "sysbench cpu", BENCH_SYSBENCH, NULL, "sysbench/1.0.20-cpu.out", NULL, 5, NULL, {
		{ "events_per_s", 4423.45, 0 }, { "latency_min_ms", 0.22, 0 },
		{ "latency_avg_ms", 0.23, 0 }, { "latency_max_ms", 1.31, 0 },
		{ "latency_p95_ms", 0.25, 0 } } },
	{ "sysbench memory", BENCH_SYSBENCH, NULL, "sysbench/1.0.20-memory.out", NULL, 5, NULL, {
		{ "events_per_s", 6305814.72, 0 }, { "latency_max_ms", 0.19, 0 },
		{ "latency_p95_ms", 0.00, 0 } } },
	{ "sysbench threads p99", BENCH_SYSBENCH, NULL, "sysbench/1.0.20-threads-p99.out", NULL, 5, NULL, {
		{ "events_per_s", 3210 / 2.0007, 1 }, { "latency_avg_ms", 0.62, 0 },
		{ "latency_max_ms", 8.01, 0 }, { "latency_p99_ms", 3.07, 0 } } },
	{ "sysbench histogram", BENCH_SYSBENCH, NULL, "sysbench/1.0.20-cpu-histogram.out", NULL, 5, NULL, {
		{ "events_per_s", 3648.05, 0 }, { "latency_avg_ms", 0.27, 0 },
		{ "latency_max_ms", 8.60, 0 }, { "latency_p95_ms", 0.30, 0 } } },
	{ "sysbench 0.4", BENCH_SYSBENCH, NULL, "sysbench/0.4-cpu.out", NULL, 5, NULL, {
		{ "events_per_s", 10000 / 10.0009, 1 }, { "latency_min_ms", 0.98, 0 },
		{ "latency_avg_ms", 1.00, 0 }, { "latency_max_ms", 1.38, 0 },
		{ "latency_p95_ms", 1.01, 0 } } },
	{ "sysbench unknown test", BENCH_SYSBENCH, NULL, "sysbench/1.0.20-no-such-test.out", NULL, 0,
	  "\"FATAL: Cannot find benchmark 'nosuchtest'", { { 0 } } },

	/* time in its forms; the kernel-build numbers of the seed. */
	{ "time bash", BENCH_KERNEL_BUILD, NULL, NULL, "time/bash.err", 3, NULL, {
		{ "real_s", 0.128, 0 }, { "user_s", 0.095, 0 }, { "sys_s", 0.031, 0 } } },
	{ "time -p", BENCH_KERNEL_BUILD, NULL, NULL, "time/bash-p.err", 3, NULL, {
		{ "real_s", 0.13, 0 }, { "user_s", 0.10, 0 }, { "sys_s", 0.02, 0 } } },
	{ "GNU time", BENCH_KERNEL_BUILD, NULL, NULL, "time/gnu.err", 3, NULL, {
		{ "real_s", 0.12, 0 }, { "user_s", 0.09, 0 }, { "sys_s", 0.02, 0 } } },
	{ "GNU time -v", BENCH_KERNEL_BUILD, NULL, NULL, "time/gnu-v.err", 3, NULL, {
		{ "real_s", 0.12, 0 }, { "user_s", 0.10, 0 }, { "sys_s", 0.01, 0 } } },
	{ "GNU time -p", BENCH_KERNEL_BUILD, NULL, NULL, "time/gnu-p.err", 3, NULL, {
		{ "real_s", 0.0, 0 }, { "user_s", 0.0, 0 }, { "sys_s", 0.0, 0 } } },
	{ "seed kernel build", BENCH_KERNEL_BUILD, NULL, NULL, "time/seed-no-microthreading.err", 3, NULL, {
		{ "real_s", 37 * 60 + 23.424, 1 }, { "user_s", 167 * 60 + 31.474, 1 },
		{ "sys_s", 113 * 60 + 26.195, 1 } } },
	{ "seed kernel build, dynamic_mt_modes 0", BENCH_KERNEL_BUILD, NULL, NULL,
	  "time/seed-dynamic-mt-0.err", 3, NULL, {
		{ "real_s", 30 * 60 + 49.100, 1 }, { "user_s", 144 * 60 + 22.989, 1 },
		{ "sys_s", 65 * 60 + 4.942, 1 } } },

	{ "BusyBox time", BENCH_KERNEL_BUILD, NULL, NULL, "time/busybox.err", 3, NULL, {
		{ "real_s", 0.05, 0 }, { "user_s", 0.05, 0 }, { "sys_s", 0.0, 0 } } },
	{ "BusyBox time -v", BENCH_KERNEL_BUILD, NULL, NULL, "time/busybox-v.err", 3, NULL, {
		{ "real_s", 0.06, 0 }, { "user_s", 0.05, 0 }, { "sys_s", 0.0, 0 } } },

	/* ebizzy (its printf formats; the seed's 24373 records/s). */
	{ "ebizzy", BENCH_EBIZZY, NULL, "ebizzy/0.3-default.out", NULL, 5, NULL, {
		{ "records_per_s", 24373, 0 }, { "real_s", 10.00, 0 },
		{ "user_s", 19.93, 0 }, { "sys_s", 0.02, 0 }, { "runs", 1, 0 } } },
	{ "ebizzy -vv", BENCH_EBIZZY, NULL, "ebizzy/0.3-verbose.out", NULL, 5, NULL, {
		{ "records_per_s", 24373, 0 }, { "user_s", 19.93, 0 } } },
	{ "ebizzy per-thread rates", BENCH_EBIZZY, NULL, "ebizzy/mmtests-per-thread.out", NULL, 5, NULL, {
		{ "records_per_s", 24373, 0 }, { "sys_s", 0.02, 0 }, { "runs", 1, 0 } } },
	{ "ebizzy three runs", BENCH_EBIZZY, NULL, "ebizzy/0.3-three-runs.out", NULL, 5, NULL, {
		{ "records_per_s", (25099 + 22818 + 17982) / 3.0, 1 }, { "real_s", 10.00, 1 },
		{ "user_s", (19.95 + 19.90 + 19.10) / 3, 1 }, { "sys_s", (0.01 + 0.03 + 0.80) / 3, 1 },
		{ "runs", 3, 0 } } },

	/* command: dd with \r progress on stderr; the last match counts. */
	{ "command dd", BENCH_COMMAND,
	  "(?<bytes>[0-9]+) bytes \\([^)]*\\) copied, (?<secs>[0-9.]+) s, (?<gbps>[0-9.]+) GB/s",
	  "command/dd-progress.out", "command/dd-progress.err", 3, NULL, {
		{ "bytes", 8192000000.0, 0 }, { "secs", 1.093, 0 }, { "gbps", 7.5, 0 } } },
	/* A regex on top of a kind adds its groups. */
	{ "sysbench + regex", BENCH_SYSBENCH,
	  "total number of events:[[:space:]]+(?<events>[0-9]+)$",
	  "sysbench/1.0.20-cpu.out", NULL, 6, NULL, {
		{ "events", 8851, 0 }, { "events_per_s", 4423.45, 0 } } },
};

static void run_case(void **state)
{
	const struct fixture_case *c = *state;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	if (c->out_file)
		fixture_read(&out, c->out_file);
	if (c->err_file)
		fixture_read(&err, c->err_file);
	if (!c->nmetrics) {
		parse_fails(c->kind, c->regex, out.buf, out.len, err.buf, err.len,
			    EXIT_FAILURE_RUN, c->error_has);
		goto done;
	}
	struct bench_metrics m;
	parse_ok(c->kind, c->regex, out.buf, out.len, err.buf, err.len, &m);
	if (m.n != c->nmetrics) {
		for (size_t i = 0; i < m.n; i++)
			print_message("  %s = %.17g\n", m.v[i].name, m.v[i].value);
		fail_msg("%zu metrics, expected %zu", m.n, c->nmetrics);
	}
	for (const struct want *w = c->want; w->name; w++) {
		double got = metric(&m, w->name);
		if (w->approx ? fabs(got - w->value) > 1e-12 * fabs(w->value) : got != w->value)
			fail_msg("%s = %.17g, expected %.17g", w->name, got, w->value);
	}
	for (size_t i = 0; i < m.n; i++) {
		assert_true(isfinite(m.v[i].value));
		/* Every figure a parser knows comes with its unit and direction. */
		if (!c->regex && (!m.v[i].unit || m.v[i].dir == METRIC_DIR_UNKNOWN))
			fail_msg("%s: %s has no unit or direction", c->label, m.v[i].name);
		/* ... and is a metric the kind declares, so `plan` accepts it as the metric. */
		if (!c->regex && !bench_kind_metric(c->kind, m.v[i].name))
			fail_msg("%s: %s is not declared in model/bench-kind.c", c->label,
				 m.v[i].name);
	}
	bench_metrics_release(&m);
done:
	strbuf_release(&out);
	strbuf_release(&err);
}

/* ---- edge cases ---- */

static const enum bench_kind all_kinds[] = {
	BENCH_EBIZZY, BENCH_REDIS, BENCH_STRESS_NG, BENCH_SYSBENCH, BENCH_KERNEL_BUILD,
};

static void test_empty_output(void **state)
{
	for (size_t i = 0; i < sizeof(all_kinds) / sizeof(*all_kinds); i++) {
		parse_fails(all_kinds[i], NULL, "", 0, NULL, 0, EXIT_FAILURE_RUN, "no output at all");
		parse_fails(all_kinds[i], NULL, NULL, 0, " \n\r\n", 4, EXIT_FAILURE_RUN,
			    "no output at all");
	}
	parse_fails(BENCH_COMMAND, "x=(?<x>[0-9]+)", "", 0, NULL, 0, EXIT_FAILURE_RUN,
		    "no match for parse regex");
}

/* Units and directions are part of the contract the advisor ranks by. */
static void test_metric_attributes(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct bench_metrics m;
	fixture_read(&out, "redis/7.0-quiet.out");
	parse_ok(BENCH_REDIS, NULL, out.buf, out.len, NULL, 0, &m);
	const struct bench_metric *bm = bench_metrics_find(&m, "redis.SET");
	assert_string_equal(bm->unit, "requests/s");
	assert_int_equal(bm->dir, METRIC_DIR_HIGHER);
	bm = bench_metrics_find(&m, "redis.SET.p50_ms");
	assert_string_equal(bm->unit, "ms");
	assert_int_equal(bm->dir, METRIC_DIR_LOWER);
	assert_int_equal(bench_metrics_find(&m, "requests_per_s")->dir, METRIC_DIR_HIGHER);
	assert_null(bench_metrics_find(&m, "redis.SET_rps"));
	bench_metrics_release(&m);
	strbuf_release(&out);

	const char *t = "real\t1m0.500s\nuser\t0m1.000s\nsys\t0m0.250s\n";
	parse_ok(BENCH_KERNEL_BUILD, NULL, NULL, 0, t, strlen(t), &m);
	assert_string_equal(bench_metrics_find(&m, "real_s")->unit, "s");
	assert_int_equal(bench_metrics_find(&m, "real_s")->dir, METRIC_DIR_LOWER);
	assert_true(metric(&m, "real_s") == 60.5);
	bench_metrics_release(&m);

	const char *c = "took 12 ms\n";
	parse_ok(BENCH_COMMAND, "took (?<ms>[0-9]+) ms", c, strlen(c), NULL, 0, &m);
	assert_int_equal(m.v[0].dir, METRIC_DIR_UNKNOWN);
	assert_null(m.v[0].unit);
	bench_metrics_release(&m);

	fixture_read(&out, "ebizzy/0.3-default.out");
	parse_ok(BENCH_EBIZZY, NULL, out.buf, out.len, NULL, 0, &m);
	assert_string_equal(bench_metrics_find(&m, "records_per_s")->unit, "records/s");
	assert_int_equal(bench_metrics_find(&m, "records_per_s")->dir, METRIC_DIR_HIGHER);
	assert_int_equal(bench_metrics_find(&m, "sys_s")->dir, METRIC_DIR_LOWER);
	assert_int_equal(bench_metrics_find(&m, "runs")->dir, METRIC_DIR_NONE);
	bench_metrics_release(&m);
	strbuf_release(&out);
}

/* Output cut short (a killed benchmark, a full disk) never half-parses. */
static void test_truncated(void **state)
{
	struct strbuf csv = STRBUF_INIT;
	fixture_read(&csv, "redis/7.0-csv.out");
	const char *cut = strstr(csv.buf, "\"GET\",\"83333.34\",\"0.3");
	assert_non_null(cut);
	size_t len = (size_t)(cut - csv.buf) + 17;
	parse_fails(BENCH_REDIS, NULL, csv.buf, len, NULL, 0, EXIT_FAILURE_RUN,
		    "expected 8 fields, row \"\\\"GET\\\",\\\"83333.34\\\",\" has 3");
	parse_fails(BENCH_REDIS, NULL, csv.buf, (size_t)(cut - csv.buf) + 8, NULL, 0,
		    EXIT_FAILURE_RUN, "malformed row");
	strbuf_release(&csv);

	const char *eb = "24373 records/s\nreal 10.00 s\n";
	parse_fails(BENCH_EBIZZY, NULL, eb, strlen(eb), NULL, 0, EXIT_FAILURE_RUN, "cut short");
	const char *tm = "\nreal\t37m23.424s\nuser\t167m31.474s\n";
	parse_fails(BENCH_KERNEL_BUILD, NULL, NULL, 0, tm, strlen(tm), EXIT_FAILURE_RUN,
		    "not all there");

	struct strbuf sb = STRBUF_INIT;
	fixture_read(&sb, "sysbench/1.0.20-cpu.out");
	len = (size_t)(strstr(sb.buf, "Latency (ms)") - sb.buf);
	parse_fails(BENCH_SYSBENCH, NULL, sb.buf, len, NULL, 0, EXIT_FAILURE_RUN,
		    "\"Latency (ms):\" section");
	strbuf_release(&sb);

	fixture_read(&sb, "stress-ng/0.15-cpu.err");
	len = (size_t)(strstr(sb.buf, "metrc: [1738] cpu") - sb.buf);
	parse_fails(BENCH_STRESS_NG, NULL, NULL, 0, sb.buf, len, EXIT_FAILURE_RUN,
		    "no stressor row");
	strbuf_release(&sb);
}

/* The tool printing its failure instead of results: quoted in the error. */
static void test_tool_errors(void **state)
{
	const char *died = "SET: 68965.52 requests per second, p50=0.375 msec\n"
			   "Error: Server closed the connection\n";
	parse_fails(BENCH_REDIS, NULL, died, strlen(died), NULL, 0, EXIT_FAILURE_RUN,
		    "\"Error: Server closed the connection\"");
	const char *sng = "stress-ng: info:  [9] dispatching hogs: 1 cpu\n"
			  "stress-ng: fail:  [10] cpu: computation error\n"
			  "stress-ng: info:  [9] unsuccessful run completed in 1.00s\n";
	parse_fails(BENCH_STRESS_NG, NULL, NULL, 0, sng, strlen(sng), EXIT_FAILURE_RUN,
		    "stderr says \"stress-ng: fail:  [10] cpu: computation error\"");
	const char *eb = "Couldn't allocate 524288 bytes, try smaller chunks or size options\n";
	parse_fails(BENCH_EBIZZY, NULL, NULL, 0, eb, strlen(eb), EXIT_FAILURE_RUN,
		    "\"Couldn't allocate 524288 bytes");
	/* Not a failure line: the excerpt shows the first and last lines. */
	const char *junk = "hello\nworld\nbye\n";
	parse_fails(BENCH_SYSBENCH, NULL, junk, strlen(junk), NULL, 0, EXIT_FAILURE_RUN,
		    "stdout (3 lines) \"hello\" ... \"bye\"");
}

static void test_exponents(void **state)
{
	struct bench_metrics m;
	const char *q = "SET: 3.004808e+04 requests per second\nGET: 1E5 requests per second\n";
	parse_ok(BENCH_REDIS, NULL, q, strlen(q), NULL, 0, &m);
	assert_true(metric(&m, "redis.SET") == 30048.08);
	assert_true(metric(&m, "redis.GET") == 100000.0);
	bench_metrics_release(&m);
	const char *c = "rate=2.5e-3 total=-1.25E+2 n=7.\n";
	parse_ok(BENCH_COMMAND, "rate=(?<rate>[^ ]+) total=(?<total>[^ ]+) n=(?<n>[^ ]+)$",
		 c, strlen(c), NULL, 0, &m);
	assert_true(metric(&m, "rate") == 2.5e-3);
	assert_true(metric(&m, "total") == -125.0);
	assert_true(metric(&m, "n") == 7.0);
	bench_metrics_release(&m);
	/* Out of range is not a result. */
	const char *big = "v=1e999\n";
	parse_fails(BENCH_COMMAND, "v=(?<v>.*)", big, strlen(big), NULL, 0, EXIT_FAILURE_RUN,
		    "group 'v' matched \"1e999\", which is not a number");
	const char *nan = "v=nan\n";
	parse_fails(BENCH_COMMAND, "v=(?<v>.*)", nan, strlen(nan), NULL, 0, EXIT_FAILURE_RUN,
		    "not a number");
}

/*
 * Under a comma-decimal LC_NUMERIC, strtod("30048.08") stops at the dot;
 * the parsers must not.  The locale is built into a temporary directory
 * (LOCPATH), so the host's locales stay as they are.
 */
static void test_locale_independent(void **state)
{
	char dir[] = "/tmp/ta-benchparse-locale.XXXXXX";
	if (!mkdtemp(dir))
		fail_msg("mkdtemp: %s", strerror(errno));
	char target[sizeof(dir) + 32];
	snprintf(target, sizeof(target), "%s/de_DE.UTF-8", dir);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("localedef", "localedef", "-i", "de_DE", "-f", "UTF-8", target, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	setenv("LOCPATH", dir, 1);
	const char *got = setlocale(LC_NUMERIC, "de_DE.UTF-8");
	unsetenv("LOCPATH");
	pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	if (!got) {
		print_message("skip: no de_DE locale could be built (localedef from the "
			      "locales package); parsing in a comma locale not checked\n");
		skip();
	}
	/* The locale is really active: libc's strtod now reads "1.5" as 1. */
	assert_true(strtod("1.5", NULL) == 1.0);
	struct bench_metrics m;
	const char *q = "SET: 30048.08 requests per second, p50=0.375 msec\n";
	parse_ok(BENCH_REDIS, NULL, q, strlen(q), NULL, 0, &m);
	assert_true(metric(&m, "redis.SET") == 30048.08);
	assert_true(metric(&m, "redis.SET.p50_ms") == 0.375);
	bench_metrics_release(&m);
	setlocale(LC_NUMERIC, "C");
}

/* CRLF (a Windows guest, a serial console) parses like LF. */
static void test_crlf(void **state)
{
	const char *files[] = { "sysbench/1.0.20-cpu.out", "redis/7.0-csv.out",
				"ebizzy/0.3-default.out" };
	enum bench_kind kinds[] = { BENCH_SYSBENCH, BENCH_REDIS, BENCH_EBIZZY };
	for (size_t f = 0; f < 3; f++) {
		struct strbuf lf = STRBUF_INIT, crlf = STRBUF_INIT;
		fixture_read(&lf, files[f]);
		for (size_t i = 0; i < lf.len; i++) {
			if (lf.buf[i] == '\n')
				strbuf_addch(&crlf, '\r');
			strbuf_addch(&crlf, lf.buf[i]);
		}
		struct bench_metrics a, b;
		parse_ok(kinds[f], NULL, lf.buf, lf.len, NULL, 0, &a);
		parse_ok(kinds[f], NULL, crlf.buf, crlf.len, NULL, 0, &b);
		assert_int_equal(a.n, b.n);
		for (size_t i = 0; i < a.n; i++) {
			assert_string_equal(a.v[i].name, b.v[i].name);
			assert_true(a.v[i].value == b.v[i].value);
		}
		bench_metrics_release(&a);
		bench_metrics_release(&b);
		strbuf_release(&lf);
		strbuf_release(&crlf);
	}
}

/* A 4 MiB progress line (no "\n" for minutes) before the results. */
static void test_long_lines(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 4 * 1024 * 1024 / 64; i++)
		strbuf_addstr(&sb, "SET: rps=68965.5 (overall: 68965.5) avg_msec=0.375 (overall: 0.37");
	strbuf_addstr(&sb, "\nSET: 68965.52 requests per second, p50=0.375 msec\n");
	struct bench_metrics m;
	parse_ok(BENCH_REDIS, NULL, sb.buf, sb.len, NULL, 0, &m);
	assert_int_equal(m.n, 3);
	assert_true(metric(&m, "redis.SET") == 68965.52);
	bench_metrics_release(&m);
	parse_ok(BENCH_COMMAND, "SET: (?<rps>[0-9.]+) requests", sb.buf, sb.len, NULL, 0, &m);
	assert_true(metric(&m, "rps") == 68965.52);
	bench_metrics_release(&m);
	/* A 100 000-digit number is still one number. */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "v=0.");
	for (int i = 0; i < 100000; i++)
		strbuf_addch(&sb, '0');
	strbuf_addstr(&sb, "1e100005\n");
	parse_ok(BENCH_COMMAND, "v=(?<v>[0-9.e]+)", sb.buf, sb.len, NULL, 0, &m);
	assert_true(metric(&m, "v") == 1e4);
	bench_metrics_release(&m);
	strbuf_release(&sb);
}

/* A NUL byte ends a line; it never hides what follows. */
static void test_nul_bytes(void **state)
{
	static const char q[] = "SET: 68965.52 requests per second\n\0garbage\0"
				"GET: 66666.67 requests per second\n";
	struct bench_metrics m;
	parse_ok(BENCH_REDIS, NULL, q, sizeof(q) - 1, NULL, 0, &m);
	assert_true(metric(&m, "redis.SET") == 68965.52);
	assert_true(metric(&m, "redis.GET") == 66666.67);
	bench_metrics_release(&m);
	parse_ok(BENCH_COMMAND, "GET: (?<get>[0-9.]+)", q, sizeof(q) - 1, NULL, 0, &m);
	assert_true(metric(&m, "get") == 66666.67);
	bench_metrics_release(&m);
	/* Inside a number it splits it: "69\0" "65.52" is not 6965.52. */
	static const char split[] = "SET: 69\0" "65.52 requests per second\n";
	parse_fails(BENCH_REDIS, NULL, split, sizeof(split) - 1, NULL, 0, EXIT_FAILURE_RUN,
		    "expected results");
}

/* bash under a comma locale, GNU time's h:mm:ss, the outer of nested times. */
static void test_time_forms(void **state)
{
	static const struct { const char *err, *out; double real, user, sys; } forms[] = {
		{ "\nreal\t0m0,128s\nuser\t0m0,095s\nsys\t0m0,031s\n", NULL, 0.128, 0.095, 0.031 },
		/* BusyBox past an hour: whole seconds. */
		{ "real\t1h 2m 03s\nuser\t2h 0m 00s\nsys\t0m 59.99s\n", NULL, 3723, 7200, 59.99 },
		{ "Command exited with non-zero status 2\n"
		  "7400.12user 812.40system 1:02:03elapsed 210%CPU (0avgtext+0avgdata 9maxresident)k\n",
		  NULL, 3723, 7400.12, 812.40 },
		{ "\tUser time (seconds): 8662.98\n\tSystem time (seconds): 3904.94\n"
		  "\tPercent of CPU this job got: 679%\n"
		  "\tElapsed (wall clock) time (h:mm:ss or m:ss): 30:49.10\n", NULL, 1849.1, 8662.98, 3904.94 },
		/* A build timing one step, then the whole: the last block counts. */
		{ "real 1.00\nuser 0.50\nsys 0.25\nreal 100.00\nuser 150.00\nsys 20.00\n", NULL,
		  100, 150, 20 },
		/* make's chatter on stdout is no time block; stderr is searched first. */
		{ "real 5.00\nuser 9.00\nsys 1.00\n", "  CC      kernel/real.o\nreal 1\nuser 2\nsys 3\n",
		  5, 9, 1 },
		{ NULL, "  CC      init/main.o\nreal 1\nuser 2\nsys 3\n", 1, 2, 3 },
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(*forms); i++) {
		struct bench_metrics m;
		const char *e = forms[i].err, *o = forms[i].out;
		parse_ok(BENCH_KERNEL_BUILD, NULL, o, o ? strlen(o) : 0, e, e ? strlen(e) : 0, &m);
		assert_int_equal(m.n, 3);
		if (fabs(metric(&m, "real_s") - forms[i].real) > 1e-9 ||
		    fabs(metric(&m, "user_s") - forms[i].user) > 1e-9 ||
		    fabs(metric(&m, "sys_s") - forms[i].sys) > 1e-9)
			fail_msg("form %zu: real %g user %g sys %g", i, metric(&m, "real_s"),
				 metric(&m, "user_s"), metric(&m, "sys_s"));
		bench_metrics_release(&m);
	}
	const char *words = "real fast\nuser friendly\nsys admin\n";
	parse_fails(BENCH_KERNEL_BUILD, NULL, words, strlen(words), NULL, 0, EXIT_FAILURE_RUN,
		    "was the benchmark run under time?");
}

/*
 * Every fixture cut at every length, and with bytes overwritten by a
 * seeded generator: no crash (the sanitizer build watches), and either
 * finite metrics or an error with a message — never both, never neither.
 */
static void check_outcome(const struct fixture_case *c, const char *out, size_t out_len,
			  const char *err_text, size_t err_len)
{
	struct ta_err err = { 0 };
	struct bench_metrics m = { 0 };
	int rc = benchparse_run(c->kind, c->regex, out, out_len, err_text, err_len, &m, &err);
	if (rc == 0) {
		assert_true(m.n > 0);
		for (size_t i = 0; i < m.n; i++) {
			assert_true(isfinite(m.v[i].value));
			assert_true(m.v[i].name[0] != '\0');
		}
	} else {
		assert_int_equal(rc, -1);
		assert_int_equal(m.n, 0);
		assert_true(err.code == EXIT_FAILURE_RUN || err.code == EXIT_BAD_INPUT);
		assert_true(strlen(err.msg) > 10);
	}
	bench_metrics_release(&m);
}

static void test_cut_and_mutated(void **state)
{
	static const char spice[] = "\0\r\n\" ,.:e-+0123456789x";
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct fixture_case *c = &cases[i];
		struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
		if (c->out_file)
			fixture_read(&out, c->out_file);
		if (c->err_file)
			fixture_read(&err, c->err_file);
		struct strbuf *target = c->out_file ? &out : &err;
		for (size_t len = 0; len <= target->len; len++) {
			if (target == &out)
				check_outcome(c, out.buf, len, err.buf, err.len);
			else
				check_outcome(c, out.buf, out.len, err.buf, len);
		}
		for (int round = 0; round < 300 && target->len; round++) {
			char *copy = xmalloc(target->len);
			memcpy(copy, target->buf, target->len);
			for (int k = 0; k < 4; k++) {
				uint64_t r = splitmix64_next(&rng);
				size_t at = (size_t)(r >> 33) % target->len;
				copy[at] = (r & 1) ? spice[(r >> 8) % (sizeof(spice) - 1)]
						   : (char)(r >> 16);
			}
			if (target == &out)
				check_outcome(c, copy, out.len, err.buf, err.len);
			else
				check_outcome(c, out.buf, out.len, copy, err.len);
			free(copy);
		}
		strbuf_release(&out);
		strbuf_release(&err);
	}
}

/* ---- command regex ---- */

static void test_regex_translation(void **state)
{
	struct bench_metrics m;
	/* Escaped parens and parens in brackets are not groups. */
	const char *t = "(x) a(b)c [3] result: 42.5 of 7 :: 9\n";
	parse_ok(BENCH_COMMAND,
		 "\\(x\\) a[(]b[)]c \\[(?P<idx>[[:digit:]]+)\\] (result|res): "
		 "(?<val>[0-9.]+)(?: of (?<of>[0-9]+))? []:[]+ (?<last>[^]a-z[:space:]]+)",
		 t, strlen(t), NULL, 0, &m);
	assert_int_equal(m.n, 4);
	assert_true(metric(&m, "idx") == 3);
	assert_true(metric(&m, "val") == 42.5);
	assert_true(metric(&m, "of") == 7);
	assert_true(metric(&m, "last") == 9);
	bench_metrics_release(&m);

	/* The last match counts; anchors work per line. */
	const char *prog = "t=1\nt=2\nxt=9\nt=3\n";
	parse_ok(BENCH_COMMAND, "^t=(?<t>[0-9]+)$", prog, strlen(prog), NULL, 0, &m);
	assert_true(metric(&m, "t") == 3);
	bench_metrics_release(&m);
	/* Several matches on the last matching line: its last one. */
	const char *many = "a=1 a=2\na=3 a=4 x\nnothing here\n";
	parse_ok(BENCH_COMMAND, "a=(?<a>[0-9]+)", many, strlen(many), NULL, 0, &m);
	assert_true(metric(&m, "a") == 4);
	bench_metrics_release(&m);
	/* A pattern holding a newline may span lines. */
	const char *two = "total:\n5\ntotal:\n7\ndone\n";
	parse_ok(BENCH_COMMAND, "total:\n(?<n>[0-9]+)", two, strlen(two), NULL, 0, &m);
	assert_true(metric(&m, "n") == 7);
	bench_metrics_release(&m);
	/* Progress with "\r" only: still separate lines. */
	const char *cr = "t=1\rt=2\rt=3\r\n";
	parse_ok(BENCH_COMMAND, "^t=(?<t>[0-9]+)$", cr, strlen(cr), NULL, 0, &m);
	assert_true(metric(&m, "t") == 3);
	bench_metrics_release(&m);
	/* stdout wins over stderr; stderr only when stdout has no match. */
	const char *o = "t=5\n", *e = "t=6\n";
	parse_ok(BENCH_COMMAND, "t=(?<t>[0-9]+)", o, 4, e, 4, &m);
	assert_true(metric(&m, "t") == 5);
	bench_metrics_release(&m);
	parse_ok(BENCH_COMMAND, "t=(?<t>[0-9]+)", "none\n", 5, e, 4, &m);
	assert_true(metric(&m, "t") == 6);
	bench_metrics_release(&m);
}

static void test_regex_errors(void **state)
{
	struct ta_err err = { 0 };
	assert_int_equal(benchparse_regex_check("(?<a>[0-9]+) (?<b>x)", &err), 0);
	/* Nested deeper than the compiler allows, and longer than a pattern may be. */
	struct strbuf deep = STRBUF_INIT, longer = STRBUF_INIT;
	for (int i = 0; i < 40; i++)
		strbuf_addch(&deep, '(');
	strbuf_addstr(&deep, "(?<a>1)");
	for (int i = 0; i < 40; i++)
		strbuf_addch(&deep, ')');
	strbuf_addstr(&longer, "(?<a>1)");
	for (int i = 0; i < 5000; i++)
		strbuf_addch(&longer, 'x');
	const struct { const char *re, *msg; } bad[] = {
		{ "([0-9]+)", "no named group" },
		{ "(?<a>1)(?<a>2)", "two named subpatterns have the same name" },
		{ "(?<a>[0-9]+", "parse regex \"(?<a>[0-9]+\": missing closing parenthesis at offset 11" },
		{ "(?<a>[0-9", "missing terminating ] for character class" },
		{ "(?<a b>1)", "syntax error in subpattern name" },
		{ "(?<a>1)\\", "\\ at end of pattern" },
		{ "(?<a>[[:nope:]])", "unknown POSIX class name" },
		{ "(?<a>1)\\k<b>", "reference to non-existent subpattern" },
		/* Output need not be UTF-8: a pattern cannot switch UTF mode on. */
		{ "(*UTF)(?<a>1)", "using UTF is disabled" },
		/* Nested repetition that would compile for minutes elsewhere. */
		{ "((a{1,255}){1,255}){1,255}(?<n>[0-9]+)", "regular expression is too large" },
		{ deep.buf, "parentheses are too deeply nested" },
		{ longer.buf, "5007 characters long; at most 4096" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err_clear(&err);
		assert_int_equal(benchparse_regex_check(bad[i].re, &err), -1);
		assert_int_equal(err.code, EXIT_BAD_INPUT);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("regex %s: error '%s' lacks '%s'", bad[i].re, err.msg, bad[i].msg);
	}
	parse_fails(BENCH_COMMAND, NULL, "x", 1, NULL, 0, EXIT_BAD_INPUT, "needs a parse regex");
	parse_fails(BENCH_COMMAND, "([0-9]+)", "1", 1, NULL, 0, EXIT_BAD_INPUT, "no named group");
	const char *o = "speed: fast\n";
	parse_fails(BENCH_COMMAND, "speed: (?<speed>[a-z]+)", o, strlen(o), NULL, 0,
		    EXIT_FAILURE_RUN, "group 'speed' matched \"fast\", which is not a number");
	parse_fails(BENCH_COMMAND, "speed: (?<n>[0-9]+)?(?<w>[a-z]+)", o, strlen(o), NULL, 0,
		    EXIT_FAILURE_RUN, "group 'n' took no part");
	parse_fails(BENCH_COMMAND, "rate: (?<r>[0-9]+)", o, strlen(o), NULL, 0,
		    EXIT_FAILURE_RUN, "no match for parse regex \"rate: (?<r>[0-9]+)\"");
	strbuf_release(&deep);
	strbuf_release(&longer);
}

/* The Perl syntax users write, as PCRE2 reads it. */
static void test_regex_perl_syntax(void **state)
{
	struct bench_metrics m;
	const char *o = "run 1: 10 ops in 2.5 s\nrun 2: 12 ops in 2.0 s\nsummary: n/a\n";
	parse_ok(BENCH_COMMAND, "run \\d+: (?<ops>\\d+) ops in (?P<secs>\\d+(?:\\.\\d+)?)\\s+s",
		 o, strlen(o), NULL, 0, &m);
	assert_int_equal(m.n, 2);
	assert_true(metric(&m, "ops") == 12);
	assert_true(metric(&m, "secs") == 2.0);
	bench_metrics_release(&m);
	/* Lookahead, lazy quantifiers, \b: what POSIX ERE lacked. */
	const char *l = "lat=5ms lat=7ms (warmup)\nlat=9ms lat=11ms\n";
	parse_ok(BENCH_COMMAND, "\\blat=(?<lat>\\d+?)ms(?! \\(warmup\\))", l, strlen(l), NULL, 0,
		 &m);
	assert_true(metric(&m, "lat") == 11);
	bench_metrics_release(&m);
	/* A pattern the config loader accepts runs the same way: one compiler. */
	struct ta_err err = { 0 };
	char **names;
	size_t n;
	assert_int_equal(benchparse_regex_groups("(?<ops>\\d+)(x)?(?P<rest>.*)", &names, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "ops");
	assert_null(names[1]);
	assert_string_equal(names[2], "rest");
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	/* Output that is not UTF-8 is matched as bytes. */
	const char *bytes = "\xff\xfe v=3\n";
	parse_ok(BENCH_COMMAND, "v=(?<v>\\d)", bytes, strlen(bytes), NULL, 0, &m);
	assert_true(metric(&m, "v") == 3);
	bench_metrics_release(&m);
}

/*
 * Catastrophic backtracking ends at PCRE2's step limit with a clear error,
 * whatever the pattern says about its own limits; the test's own timeout
 * is the bound on time, so nothing here is timed.
 */
static void test_regex_hostile(void **state)
{
	struct strbuf line = STRBUF_INIT;
	for (int i = 0; i < 60; i++)
		strbuf_addch(&line, 'a');
	strbuf_addstr(&line, "!\n");
	static const char *const hostile[] = {
		"^(?<a>(a|a)*)$",
		"^(?<w>(\\w+\\s?)*)$",
		"^(?<r>((a{1,255}){1,255})*)$",
		"(*LIMIT_MATCH=4000000000)(*LIMIT_DEPTH=4000000000)^(?<a>(a|aa)*)$",
	};
	for (size_t i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		struct ta_err err = { 0 };
		assert_int_equal(benchparse_regex_check(hostile[i], &err), 0);
		parse_fails(BENCH_COMMAND, hostile[i], line.buf, line.len, NULL, 0,
			    EXIT_FAILURE_RUN, "match limit exceeded (at most 1000000 steps");
	}
	/* A large output with no match is searched to the end, quickly. */
	struct strbuf big = STRBUF_INIT;
	for (int i = 0; i < 200000; i++)
		strbuf_addstr(&big, "progress 12345 of 99999 aaaaaaaaaaaaaaaaaaaaaaa\n");
	parse_fails(BENCH_COMMAND, "^done: (?<n>\\d+)$", big.buf, big.len, NULL, 0,
		    EXIT_FAILURE_RUN, "no match for parse regex");
	strbuf_release(&big);
	strbuf_release(&line);
}

/*
 * The kind table (model/bench-kind.c): each parsing kind's default metric
 * is one it declares, with a direction to rank by; default argv carry the
 * duration; families expand for suggestions and match only their listed
 * parts.
 */
static void test_kind_table(void **state)
{
	for (int k = 0; k < BENCH_NKINDS; k++) {
		const struct bench_kind_info *info = bench_kind_info(k);
		assert_true(!info->metric == info->needs_parse_regex);
		if (!info->metric)
			continue;
		const struct bench_metric_spec *s = bench_kind_metric(k, info->metric);
		assert_non_null(s);
		assert_true(s->dir == METRIC_DIR_HIGHER || s->dir == METRIC_DIR_LOWER);
		assert_non_null(info->argv);
	}
	char **argv = bench_kind_argv(BENCH_STRESS_NG, 7);
	assert_string_equal(argv[0], "stress-ng");
	assert_string_equal(argv[4], "7s");
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
	argv = bench_kind_argv(BENCH_SYSBENCH, 30);
	assert_string_equal(argv[2], "--time=30");
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
	assert_null(bench_kind_metric(BENCH_REDIS, "redis.GETT"));
	assert_null(bench_kind_metric(BENCH_REDIS, "redis.GET.p42_ms"));
	assert_null(bench_kind_metric(BENCH_REDIS, "redis."));
	assert_null(bench_kind_metric(BENCH_STRESS_NG, "stress-ng..bogo_ops_per_s"));
	assert_int_equal(bench_kind_metric(BENCH_REDIS, "redis.GET.p99_ms")->dir, METRIC_DIR_LOWER);
	assert_int_equal(bench_kind_metric(BENCH_SYSBENCH, "latency_p99_9_ms")->dir,
			 METRIC_DIR_LOWER);
	char **names = bench_kind_metric_names(BENCH_REDIS);
	size_t n = 0, get = 0, free_parts = 0;
	for (; names[n]; n++) {
		get += !strcmp(names[n], "redis.GET.p99_ms");
		free_parts += strchr(names[n], '<') != NULL;
		free(names[n]);
	}
	free(names);
	assert_int_equal(get, 1);
	assert_int_equal(free_parts, 0);
	assert_true(n > 100);
	names = bench_kind_metric_names(BENCH_STRESS_NG);
	assert_string_equal(names[1], "stress-ng.<stressor>.bogo_ops_per_s");
	for (size_t i = 0; names[i]; i++)
		free(names[i]);
	free(names);
}

int main(void)
{
	size_t ncases = sizeof(cases) / sizeof(*cases);
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_empty_output),
		cmocka_unit_test(test_metric_attributes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_tool_errors),
		cmocka_unit_test(test_exponents),
		cmocka_unit_test(test_locale_independent),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_time_forms),
		cmocka_unit_test(test_cut_and_mutated),
		cmocka_unit_test(test_regex_translation),
		cmocka_unit_test(test_regex_errors),
		cmocka_unit_test(test_regex_perl_syntax),
		cmocka_unit_test(test_regex_hostile),
		cmocka_unit_test(test_kind_table),
	};
	size_t nfixed = sizeof(fixed) / sizeof(*fixed);
	struct CMUnitTest *tests = calloc(ncases + nfixed, sizeof(*tests));
	for (size_t i = 0; i < ncases; i++)
		tests[i] = (struct CMUnitTest){ .name = cases[i].label, .test_func = run_case,
						.initial_state = (void *)&cases[i] };
	memcpy(tests + ncases, fixed, sizeof(fixed));
	int rc = _cmocka_run_group_tests("benchparse", tests, ncases + nfixed, NULL, NULL);
	free(tests);
	return rc;
}
