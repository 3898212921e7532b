/*
 * parse-stressng: stress-ng --metrics-brief (or --metrics) tables.
 *
 * stress-ng logs to stderr ("stress-ng: metrc: [PID] ..." since ~0.14,
 * "stress-ng: info:  [PID] ..." before), to stdout with --stdout, and
 * without the prefix with --log-brief; all are read.  The table is a
 * header line starting "stressor" and naming "bogo ops", a "(secs)" units
 * line, then one row per stressor: name, bogo ops, real, usr and sys
 * seconds, bogo ops/s (real time), bogo ops/s (usr+sys), and in newer
 * versions or with --metrics more columns.  The real-time rate is the
 * figure of merit (usr+sys time hides time lost to the host).
 */
#include "benchparse-int.h"

#include <ctype.h>
#include <string.h>

/* Drops "stress-ng: LEVEL: [PID] " (each part optional). */
static const char *strip_prefix(const char *line)
{
	const char *p = bp_skip_ws(line);
	if (bp_eat(&p, "stress-ng:")) {
		p = bp_skip_ws(p);
		const char *q = p;
		while (isalpha((unsigned char)*q))
			q++;
		if (q > p && *q == ':')
			p = bp_skip_ws(q + 1);
	}
	if (*p == '[') {
		const char *q = p + 1;
		while (isdigit((unsigned char)*q))
			q++;
		if (*q == ']')
			p = bp_skip_ws(q + 1);
	}
	return p;
}

/* A table row: stressor name and at least 6 numbers; rate = 5th number. */
static bool table_row(const char *p, struct strbuf *name, double *rate)
{
	size_t w = strcspn(p, " \t");
	if (!w || !isalpha((unsigned char)*p))
		return false;
	strbuf_reset(name);
	strbuf_add(name, p, w);
	p = bp_skip_ws(p + w);
	double v[6];
	for (int i = 0; i < 6; i++) {
		if (!bp_number(&p, &v[i]))
			return false;
		if (*p && *p != ' ' && *p != '\t')
			return false;
		p = bp_skip_ws(p);
	}
	*rate = v[4];
	return true;
}

static int scan(const struct bp_input *in, const struct bp_text *t, struct bench_metrics *m,
		struct bench_metrics *rates, bool *header_seen, struct ta_err *err)
{
	bool in_table = false;
	struct strbuf name = STRBUF_INIT, key = STRBUF_INIT;
	for (size_t i = 0; i < t->nlines; i++) {
		const char *p = strip_prefix(t->line[i]);
		if (!strncmp(p, "unsuccessful run completed", 26)) {
			strbuf_release(&name);
			strbuf_release(&key);
			return bp_fail(in, err, "stress-ng: a stressor failed, its rate "
				       "measures nothing");
		}
		if (!strncmp(p, "stressor", 8) && strstr(p, "bogo ops")) {
			in_table = true;
			*header_seen = true;
			continue;
		}
		if (!in_table || *p == '(')
			continue;
		double rate;
		if (!table_row(p, &name, &rate)) {
			in_table = false;
			continue;
		}
		strbuf_reset(&key);
		strbuf_addf(&key, "stress-ng.%s.bogo_ops_per_s", strbuf_str(&name));
		bp_report(in, m, "stress-ng.<stressor>.bogo_ops_per_s", strbuf_str(&key), rate);
		bp_metric_set(rates, strbuf_str(&key), rate, NULL, METRIC_DIR_HIGHER);
	}
	strbuf_release(&name);
	strbuf_release(&key);
	return 0;
}

int bp_parse_stress_ng(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err)
{
	struct bench_metrics rates = { 0 };
	bool header = false;
	int rc = scan(in, &in->e, m, &rates, &header, err);
	if (!rc)
		rc = scan(in, &in->o, m, &rates, &header, err);
	if (!rc && !rates.n)
		rc = bp_fail(in, err, header
			     ? "stress-ng: metrics table has no stressor row (output cut short?)"
			     : "stress-ng: expected a --metrics-brief table (\"stressor bogo ops "
			       "real time ...\"); was --metrics-brief given?");
	if (!rc) {
		/* Keyed by name, so a table seen in both streams is counted once. */
		double sum = 0;
		for (size_t i = 0; i < rates.n; i++)
			sum += rates.v[i].value;
		bp_report(in, m, "bogo_ops_per_s", NULL, sum);
	}
	bench_metrics_release(&rates);
	return rc;
}
