/*
 * parse-sysbench: sysbench 1.0 and 0.4/0.5 reports.
 *
 * Throughput, in order of preference: "events per second: N" (cpu),
 * "Total operations: N (X per second)" (memory), "transactions: N (X per
 * sec.)" (oltp), else "total number of events" / "total time" (threads,
 * mutex, which print no rate).  Latency comes from the "Latency (ms):"
 * section (1.0: "min:", "avg:", "max:", "95th percentile:") or the
 * "per-request statistics:" one (0.4/0.5: values with an "ms" suffix,
 * "approx.  95 percentile:"); only inside those sections, since "avg" also
 * appears under "Threads fairness".
 */
#include "benchparse-int.h"

#include <string.h>

/* A value with an optional unit suffix ("1.31", "0.98ms", "2.0002s"). */
static bool value_with_unit(const char *p, const char *unit, double *v)
{
	p = bp_skip_ws(p);
	if (!bp_number(&p, v))
		return false;
	bp_eat(&p, unit);
	return bp_at_end(p);
}

/* "key:   value" with the value alone after the colon. */
static bool keyed(const char *line, const char *key, const char *unit, double *v)
{
	const char *p = bp_skip_ws(line);
	return bp_eat(&p, key) && value_with_unit(p, unit, v);
}

/* "... N (X per second)" / "(X per sec.)": X. */
static bool rate_in_parens(const char *line, const char *key, double *v)
{
	const char *p = bp_skip_ws(line);
	double n;
	if (!bp_eat(&p, key))
		return false;
	p = bp_skip_ws(p);
	if (!bp_number(&p, &n))
		return false;
	p = bp_skip_ws(p);
	return bp_eat(&p, "(") && bp_number(&p, v) &&
	       (bp_eat(&p, " per second)") || bp_eat(&p, " per sec.)"));
}

/* "95th percentile:" (1.0) or "approx.  95 percentile:" (0.4): "p95". */
static bool percentile(const char *line, struct strbuf *name, double *v)
{
	const char *p = bp_skip_ws(line);
	if (bp_eat(&p, "approx."))
		p = bp_skip_ws(p);
	const char *num = p;
	double pct;
	if (!bp_number(&p, &pct))
		return false;
	size_t nlen = (size_t)(p - num);
	bp_eat(&p, "th");
	if (!bp_eat(&p, " percentile:"))
		return false;
	if (!value_with_unit(p, "ms", v))
		return false;
	strbuf_reset(name);
	strbuf_addstr(name, "latency_p");
	for (size_t i = 0; i < nlen; i++)
		strbuf_addch(name, num[i] == '.' ? '_' : num[i]);
	strbuf_addstr(name, "_ms");
	return true;
}

int bp_parse_sysbench(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err)
{
	double eps = 0, ops = 0, tps = 0, events = 0, total_time = 0, v;
	bool have_eps = false, have_ops = false, have_tps = false;
	bool have_events = false, have_time = false, in_latency = false, have_avg = false;
	struct strbuf name = STRBUF_INIT;
	for (size_t i = 0; i < in->o.nlines; i++) {
		const char *line = in->o.line[i], *p = bp_skip_ws(line);
		if (!strncmp(p, "Latency (ms):", 13) || !strncmp(p, "per-request statistics:", 23)) {
			in_latency = true;
			continue;
		}
		if (in_latency) {
			if (keyed(line, "min:", "ms", &v)) {
				bp_report(in, m, "latency_min_ms", NULL, v);
				continue;
			}
			if (keyed(line, "avg:", "ms", &v)) {
				bp_report(in, m, "latency_avg_ms", NULL, v);
				have_avg = true;
				continue;
			}
			if (keyed(line, "max:", "ms", &v)) {
				bp_report(in, m, "latency_max_ms", NULL, v);
				continue;
			}
			if (percentile(line, &name, &v)) {
				bp_report(in, m, "latency_p<percentile>_ms", strbuf_str(&name), v);
				continue;
			}
			if (keyed(line, "sum:", "ms", &v))
				continue;
			in_latency = false;
		}
		if (keyed(line, "events per second:", "", &v))
			eps = v, have_eps = true;
		else if (rate_in_parens(line, "Total operations:", &v))
			ops = v, have_ops = true;
		else if (rate_in_parens(line, "transactions:", &v))
			tps = v, have_tps = true;
		else if (keyed(line, "total number of events:", "", &v))
			events = v, have_events = true;
		else if (keyed(line, "total time:", "s", &v))
			total_time = v, have_time = true;
	}
	strbuf_release(&name);
	if (have_eps)
		v = eps;
	else if (have_ops)
		v = ops;
	else if (have_tps)
		v = tps;
	else if (have_events && have_time && total_time > 0)
		v = events / total_time;
	else
		return bp_fail(in, err, "sysbench: expected \"events per second:\" or "
			       "\"total number of events:\" with \"total time:\"");
	if (!have_avg)
		return bp_fail(in, err, "sysbench: expected a \"Latency (ms):\" section "
			       "with \"avg:\" (output cut short?)");
	bp_report(in, m, "events_per_s", NULL, v);
	return 0;
}
