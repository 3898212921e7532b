/*
 * parse-redis: redis-benchmark output, every form it has had.
 *
 *   -q, before 6.2      "SET: 30048.08 requests per second"
 *   -q, 6.2 and later   "SET: 68965.52 requests per second, p50=0.375 msec"
 *   --csv, before 6.2   "\"SET\",\"30048.08\""
 *   --csv, 6.2 and later  a header "\"test\",\"rps\",\"avg_latency_ms\",..."
 *                         then one row per test
 *   default (verbose)   "====== SET ======" ... then "30303.03 requests per
 *                       second" (old) or "  throughput summary: 80000.00
 *                       requests per second" and a "latency summary" table
 *
 * Progress updates ("SET: 28145.60\r" old, "SET: rps=... (overall: ...)\r"
 * new) are separate lines after splitting at "\r" and never carry
 * "requests per second", so they are skipped.  redis-benchmark reports a
 * dead server ("Could not connect to Redis at ...", "Error: ...") and
 * carries on or hangs, so such a line fails the parse even if some tests
 * finished: the run did not measure what it was asked to.
 */
#include "benchparse-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RPS " requests per second"

/* "MSET (10 keys)" -> "redis.MSET_10_keys"; false if nothing is left. */
static bool test_key(struct strbuf *key, const char *title, size_t len)
{
	strbuf_reset(key);
	strbuf_addstr(key, "redis.");
	size_t base = key->len;
	bool gap = false;
	for (size_t i = 0; i < len; i++) {
		char c = title[i];
		bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			    (c >= '0' && c <= '9') || c == '_';
		if (!keep) {
			gap = true;
			continue;
		}
		if (gap && key->len > base)
			strbuf_addch(key, '_');
		gap = false;
		strbuf_addch(key, c);
	}
	return key->len > base;
}

struct redis_state {
	const struct bp_input *in;
	struct bench_metrics tests;	/* redis.<TEST> rps, in first-seen order */
	struct strbuf title;		/* current "====== T ======" section */
	char **csv_header;		/* >= 6.2 CSV column names */
	size_t csv_ncols;
	char **latency_cols;		/* verbose >= 6.2 latency summary columns */
	size_t latency_ncols;
};

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void test_result(struct redis_state *st, struct bench_metrics *m,
			const char *title, size_t len, double rps)
{
	struct strbuf key = STRBUF_INIT;
	if (test_key(&key, title, len)) {
		bp_report(st->in, m, "redis.<test>", strbuf_str(&key), rps);
		bp_metric_set(&st->tests, strbuf_str(&key), rps, NULL, METRIC_DIR_HIGHER);
	}
	strbuf_release(&key);
}

static void test_latency(struct redis_state *st, struct bench_metrics *m, const char *title,
			 size_t len,
			 const char *stat, size_t stat_len, double ms)
{
	struct strbuf key = STRBUF_INIT;
	if (test_key(&key, title, len)) {
		strbuf_addch(&key, '.');
		strbuf_add(&key, stat, stat_len);
		strbuf_addstr(&key, "_ms");
		bp_report(st->in, m, "redis.<test>.<stat>_ms", strbuf_str(&key), ms);
	}
	strbuf_release(&key);
}

/*
 * Splits a CSV line into fields ("" quotes, "" inside for a quote).  -1 if a
 * quote never closes: a row cut short by a truncated output.
 */
static int csv_split(const char *line, char ***fields, size_t *n)
{
	size_t alloc = 8;
	*fields = xmalloc(alloc * sizeof(char *));
	*n = 0;
	const char *p = bp_skip_ws(line);
	for (;;) {
		struct strbuf f = STRBUF_INIT;
		strbuf_addstr(&f, "");
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p) {
					strbuf_release(&f);
					names_free(*fields, *n);
					*fields = NULL;
					return -1;
				}
				if (*p == '"' && p[1] == '"') {
					strbuf_addch(&f, '"');
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					strbuf_addch(&f, *p++);
				}
			}
			p = bp_skip_ws(p);
		} else {
			while (*p && *p != ',')
				strbuf_addch(&f, *p++);
		}
		if (*n == alloc) {
			alloc *= 2;
			*fields = xrealloc(*fields, alloc * sizeof(char *));
		}
		(*fields)[(*n)++] = strbuf_detach(&f);
		if (*p != ',')
			break;
		p++;
	}
	if (!bp_at_end(p)) {
		names_free(*fields, *n);
		*fields = NULL;
		return -1;
	}
	return 0;
}

static int csv_row(const struct bp_input *in, struct redis_state *st,
		   struct bench_metrics *m, const char *line, struct ta_err *err)
{
	char **f;
	size_t n;
	struct strbuf q = STRBUF_INIT;
	bp_quote(&q, bp_skip_ws(line), 120);
	int rc = -1;
	if (csv_split(line, &f, &n)) {
		bp_fail(in, err, "redis-benchmark --csv: malformed row %s (output cut short?)",
			strbuf_str(&q));
		goto out;
	}
	if (n >= 2 && !strcmp(f[0], "test") && !strcmp(f[1], "rps")) {
		names_free(st->csv_header, st->csv_ncols);
		st->csv_header = f;
		st->csv_ncols = n;
		strbuf_release(&q);
		return 0;
	}
	size_t want = st->csv_header ? st->csv_ncols : 2;
	if (n != want) {
		bp_fail(in, err, "redis-benchmark --csv: expected %zu fields, row %s has %zu "
			"(output cut short?)", want, strbuf_str(&q), n);
		goto free_fields;
	}
	for (size_t c = 1; c < n; c++) {
		double v;
		if (!bp_number_all(f[c], &v)) {
			bp_fail(in, err, "redis-benchmark --csv: field %zu of row %s is not a number",
				c + 1, strbuf_str(&q));
			goto free_fields;
		}
		const char *col = st->csv_header ? st->csv_header[c] : "rps";
		size_t cl = strlen(col);
		static const char lat[] = "_latency_ms";
		if (!strcmp(col, "rps"))
			test_result(st, m, f[0], strlen(f[0]), v);
		else if (cl > sizeof(lat) - 1 && !strcmp(col + cl - (sizeof(lat) - 1), lat))
			test_latency(st, m, f[0], strlen(f[0]), col, cl - (sizeof(lat) - 1), v);
	}
	rc = 0;
free_fields:
	names_free(f, n);
out:
	strbuf_release(&q);
	return rc;
}

/*
 * A line carrying "requests per second": quiet ("T: N requests per second",
 * maybe ", p50=X msec"), or verbose ("N requests per second" or
 * "throughput summary: N requests per second" under a "====== T" title).
 */
static void rps_line(struct redis_state *st, struct bench_metrics *m,
		     const char *line, const char *rps_at)
{
	const char *num = rps_at;
	while (num > line && strchr("0123456789.eE+-", num[-1]))
		num--;
	const char *p = num;
	double rps;
	if (!bp_number(&p, &rps) || p != rps_at)
		return;
	const char *title = bp_skip_ws(line);
	size_t tlen;
	if (title == num || !strncmp(title, "throughput summary:", 19)) {
		title = strbuf_str(&st->title);
		tlen = st->title.len;
	} else {
		if (num - title < 2 || num[-1] != ' ' || num[-2] != ':')
			return;
		tlen = (size_t)(num - 2 - title);
	}
	if (!tlen)
		return;
	test_result(st, m, title, tlen, rps);
	p = rps_at + strlen(RPS);
	double p50;
	if (bp_eat(&p, ", p50=") && bp_number(&p, &p50) && bp_eat(&p, " msec"))
		test_latency(st, m, title, tlen, "p50", 3, p50);
}

/* Verbose >= 6.2: "avg min p50 p95 p99 max" then their values. */
static bool latency_header(struct redis_state *st, const char *line)
{
	static const char *const stats[] = { "avg", "min", "p50", "p95", "p99", "max" };
	const char *p = bp_skip_ws(line);
	char **cols = NULL;
	size_t n = 0;
	while (*p) {
		size_t w = strcspn(p, " \t");
		bool known = false;
		for (size_t i = 0; i < sizeof(stats) / sizeof(*stats); i++)
			known |= w == strlen(stats[i]) && !strncmp(p, stats[i], w);
		if (!known || n == 8) {
			names_free(cols, n);
			return false;
		}
		cols = xrealloc(cols, (n + 1) * sizeof(char *));
		cols[n] = xmalloc(w + 1);
		memcpy(cols[n], p, w);
		cols[n++][w] = '\0';
		p = bp_skip_ws(p + w);
	}
	if (n < 2) {
		names_free(cols, n);
		return false;
	}
	names_free(st->latency_cols, st->latency_ncols);
	st->latency_cols = cols;
	st->latency_ncols = n;
	return true;
}

static void latency_values(struct redis_state *st, struct bench_metrics *m, const char *line)
{
	double v[8];
	const char *p = bp_skip_ws(line);
	size_t n = 0;
	while (n < st->latency_ncols && bp_number(&p, &v[n])) {
		n++;
		p = bp_skip_ws(p);
	}
	if (n == st->latency_ncols && bp_at_end(p) && st->title.len)
		for (size_t i = 0; i < n; i++)
			test_latency(st, m, st->title.buf, st->title.len, st->latency_cols[i],
				     strlen(st->latency_cols[i]), v[i]);
	names_free(st->latency_cols, st->latency_ncols);
	st->latency_cols = NULL;
	st->latency_ncols = 0;
}

static const char *dead_server_line(const struct bp_text *t)
{
	for (size_t i = 0; i < t->nlines; i++) {
		const char *l = bp_skip_ws(t->line[i]);
		if (!strncmp(l, "Could not connect to Redis", 26) ||
		    !strncmp(l, "Error: ", 7) ||
		    !strncmp(l, "All clients disconnected", 24))
			return l;
	}
	return NULL;
}

int bp_parse_redis(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err)
{
	const char *dead = dead_server_line(&in->e);
	if (!dead)
		dead = dead_server_line(&in->o);
	if (dead) {
		struct strbuf q = STRBUF_INIT;
		bp_quote(&q, dead, 160);
		err_set(err, EXIT_FAILURE_RUN, "redis-benchmark failed: %s; check that the "
			"server was up and answering before the benchmark started", strbuf_str(&q));
		strbuf_release(&q);
		return -1;
	}
	struct redis_state st = { .in = in, .title = STRBUF_INIT };
	int rc = 0;
	for (size_t i = 0; i < in->o.nlines && !rc; i++) {
		const char *line = in->o.line[i], *p = bp_skip_ws(line);
		const char *rps_at;
		if (st.latency_cols) {
			latency_values(&st, m, line);
		} else if (!strncmp(p, "======", 6)) {
			p = bp_skip_ws(p + 6);
			const char *end = strstr(p, " ======");
			strbuf_reset(&st.title);
			strbuf_add(&st.title, p, end ? (size_t)(end - p) : strlen(p));
		} else if (*p == '"') {
			rc = csv_row(in, &st, m, line, err);
		} else if ((rps_at = strstr(line, RPS))) {
			rps_line(&st, m, line, rps_at);
		} else if (st.title.len) {
			latency_header(&st, line);
		}
	}
	if (!rc && !st.tests.n)
		rc = bp_fail(in, err, "redis-benchmark: expected results such as "
			     "\"SET: 30048.08 requests per second\" (-q) or CSV rows (--csv)");
	if (!rc) {
		/* Geometric mean: a test twice as fast counts the same whichever it is. */
		double logsum = 0;
		bool zero = false;
		for (size_t i = 0; i < st.tests.n; i++) {
			if (st.tests.v[i].value <= 0)
				zero = true;
			else
				logsum += log(st.tests.v[i].value);
		}
		bp_report(in, m, "requests_per_s", NULL,
			  zero ? 0 : exp(logsum / (double)st.tests.n));
	}
	bench_metrics_release(&st.tests);
	strbuf_release(&st.title);
	names_free(st.csv_header, st.csv_ncols);
	names_free(st.latency_cols, st.latency_ncols);
	return rc;
}
