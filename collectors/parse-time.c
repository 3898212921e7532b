/*
 * parse-time: elapsed/user/system seconds, as `time` in its forms and
 * ebizzy print them.
 *
 *   bash `time`          "real\t37m23.424s" / "user ..." / "sys ..." (the
 *                        seconds with a "," under a comma locale)
 *   POSIX `time -p`      "real 2243.13" (also GNU time -p)
 *   GNU /usr/bin/time    "0.09user 0.02system 0:00.12elapsed 99%CPU ..."
 *   GNU /usr/bin/time -v "User time (seconds): 0.10", "System time
 *                        (seconds): 0.01", "Elapsed (wall clock) time
 *                        (h:mm:ss or m:ss): 37:23.13"
 *   BusyBox time         "real\t0m 0.02s", "1h 2m 03s" past an hour; -v
 *                        as GNU's but elapsed "0m 0.10s"; -p as POSIX
 *   ebizzy               "24373 records/s" then "real 10.00 s",
 *                        "user 19.92 s", "sys  0.01 s"; with mmtests' patch
 *                        the summary carries per-thread rates after the total
 *
 * `time` writes to stderr, so stderr is searched first, then stdout; the
 * last complete real/user/sys block counts (a build that times its own
 * steps prints the outer total last).  ebizzy prints one summary per run
 * (per-thread lines under -vv say "records", never "records/s"); outputs
 * of several runs in a row are averaged and `runs` says how many.
 */
#include "benchparse-int.h"

#include <string.h>

/*
 * The seconds of bash's "1m2.345s".  bash prints them with the locale's
 * decimal point ("0m0,128s" under de_DE), so a comma is read as the point
 * here, where a unit follows and nothing else can be meant.
 */
static bool bash_seconds(const char **pp, double *v)
{
	const char *p = *pp, *comma = NULL;
	for (; (*p >= '0' && *p <= '9') || (*p == ',' && !comma); p++)
		if (*p == ',')
			comma = p;
	if (!comma || *p != 's')
		return bp_number(pp, v);
	struct strbuf sb = STRBUF_INIT;
	strbuf_add(&sb, *pp, (size_t)(p - *pp));
	sb.buf[comma - *pp] = '.';
	const char *q = sb.buf;
	bool ok = bp_number(&q, v) && *q == '\0';
	strbuf_release(&sb);
	if (ok)
		*pp = p;
	return ok;
}

/*
 * Seconds from "2243.13", "10.00 s" (time -p, ebizzy), "37m23.424s"
 * (bash), "0m 0.02s" and "1h 2m 03s" (BusyBox time, the guest image's).
 */
static bool duration(const char *p, double *secs)
{
	double a, m, s;
	p = bp_skip_ws(p);
	if (!bp_number(&p, &a) || a < 0)
		return false;
	if (*p == 'h') {
		p = bp_skip_ws(p + 1);
		if (!bp_number(&p, &m) || m < 0 || *p != 'm')
			return false;
		a = a * 60 + m;
	}
	if (*p == 'm') {
		p = bp_skip_ws(p + 1);
		if (!bash_seconds(&p, &s) || s < 0)
			return false;
		a = a * 60 + s;
	}
	p = bp_skip_ws(p);
	bp_eat(&p, "s");
	*secs = a;
	return bp_at_end(p);
}

/* "h:mm:ss" or "m:ss.ss": seconds; advances *pp. */
static bool clock_time(const char **pp, double *secs)
{
	const char *p = *pp;
	double v, part;
	if (!bp_number(&p, &v) || v < 0)
		return false;
	int fields = 1;
	while (*p == ':' && fields < 3) {
		p++;
		if (!bp_number(&p, &part) || part < 0)
			return false;
		v = v * 60 + part;
		fields++;
	}
	if (fields < 2)
		return false;
	*secs = v;
	*pp = p;
	return true;
}

struct times {
	double real, user, sys;
	bool has_real, has_user, has_sys;
};

static bool times_complete(const struct times *t)
{
	return t->has_real && t->has_user && t->has_sys;
}

/* "KEY<blanks>DURATION" alone on a line. */
static bool keyed_duration(const char *line, const char *key, double *v)
{
	const char *p = bp_skip_ws(line);
	size_t n = strlen(key);
	return !strncmp(p, key, n) && (p[n] == ' ' || p[n] == '\t') && duration(p + n, v);
}

/* GNU time's default line: "0.09user 0.02system 0:00.12elapsed ...". */
static bool gnu_default(const char *line, struct times *t)
{
	const char *p = bp_skip_ws(line);
	double u, s, e;
	if (!bp_number(&p, &u) || !bp_eat(&p, "user"))
		return false;
	p = bp_skip_ws(p);
	if (!bp_number(&p, &s) || !bp_eat(&p, "system"))
		return false;
	p = bp_skip_ws(p);
	if (!clock_time(&p, &e) || !bp_eat(&p, "elapsed"))
		return false;
	*t = (struct times){ e, u, s, true, true, true };
	return true;
}

/* The last complete block of t in one stream; *partial if one was begun. */
static bool last_times(const struct bp_text *txt, struct times *best, bool *partial)
{
	struct times cur = { 0 }, one;
	bool found = false;
	double v;
	for (size_t i = 0; i < txt->nlines; i++) {
		const char *line = txt->line[i], *p = bp_skip_ws(line);
		if (gnu_default(line, &one)) {
			cur = one;
		} else if (keyed_duration(line, "real", &v)) {
			cur = (struct times){ .real = v, .has_real = true };
		} else if (keyed_duration(line, "user", &v)) {
			cur.user = v, cur.has_user = true;
		} else if (keyed_duration(line, "sys", &v)) {
			cur.sys = v, cur.has_sys = true;
		} else if (bp_eat(&p, "User time (seconds):") && duration(p, &v)) {
			cur = (struct times){ .user = v, .has_user = true };
		} else if (bp_eat(&p, "System time (seconds):") && duration(p, &v)) {
			cur.sys = v, cur.has_sys = true;
		} else if (bp_eat(&p, "Elapsed (wall clock) time (h:mm:ss or m:ss):")) {
			const char *q = bp_skip_ws(p);
			if ((clock_time(&q, &v) && bp_at_end(q)) || duration(p, &v))
				cur.real = v, cur.has_real = true;
		} else {
			continue;
		}
		if (times_complete(&cur)) {
			*best = cur;
			found = true;
			cur = (struct times){ 0 };
		}
	}
	*partial = cur.has_real || cur.has_user || cur.has_sys;
	return found;
}

static void times_store(const struct bp_input *in, struct bench_metrics *m, const struct times *t)
{
	bp_report(in, m, "real_s", NULL, t->real);
	bp_report(in, m, "user_s", NULL, t->user);
	bp_report(in, m, "sys_s", NULL, t->sys);
}

int bp_parse_time(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err)
{
	struct times t;
	bool partial_e = false, partial_o = false;
	if (last_times(&in->e, &t, &partial_e) || last_times(&in->o, &t, &partial_o)) {
		times_store(in, m, &t);
		return 0;
	}
	if (partial_e || partial_o)
		return bp_fail(in, err, "time: real, user and sys seconds are not all there "
			       "(output cut short?)");
	return bp_fail(in, err, "time: expected `time` output (\"real 1m2.345s\", "
		       "\"real 62.34\" or GNU time's \"...elapsed\"); was the benchmark "
		       "run under time?");
}

/*
 * "24373 records/s" alone on a line, or followed by each thread's rate
 * ("24373 records/s 12187 12186", the per-thread patch mmtests applies):
 * the first number is the total either way.
 */
static bool ebizzy_summary(const char *line, double *rate)
{
	const char *p = bp_skip_ws(line);
	double thread_rate;
	if (!bp_number(&p, rate) || !bp_eat(&p, " records/s"))
		return false;
	for (p = bp_skip_ws(p); *p; p = bp_skip_ws(p))
		if (!bp_number(&p, &thread_rate) || (*p && *p != ' ' && *p != '\t'))
			return false;
	return true;
}

int bp_parse_ebizzy(const struct bp_input *in, struct bench_metrics *m, struct ta_err *err)
{
	double sum_rate = 0, rate = 0, v;
	struct times sum = { 0 }, cur = { 0 };
	size_t runs = 0;
	bool open = false;
	for (size_t i = 0; i < in->o.nlines; i++) {
		const char *line = in->o.line[i];
		if (ebizzy_summary(line, &v)) {
			if (open)
				break;	/* a run without its times: reported below */
			rate = v;
			open = true;
			cur = (struct times){ 0 };
		} else if (!open) {
			continue;
		} else if (keyed_duration(line, "real", &v)) {
			cur.real = v, cur.has_real = true;
		} else if (keyed_duration(line, "user", &v)) {
			cur.user = v, cur.has_user = true;
		} else if (keyed_duration(line, "sys", &v)) {
			cur.sys = v, cur.has_sys = true;
		}
		if (open && times_complete(&cur)) {
			sum_rate += rate;
			sum.real += cur.real;
			sum.user += cur.user;
			sum.sys += cur.sys;
			runs++;
			open = false;
		}
	}
	if (open)
		return bp_fail(in, err, "ebizzy: \"N records/s\" without the \"real\", "
			       "\"user\" and \"sys\" lines after it (output cut short?)");
	if (!runs)
		return bp_fail(in, err, "ebizzy: expected \"N records/s\" followed by "
			       "\"real N s\", \"user N s\", \"sys N s\"");
	double n = (double)runs;
	bp_report(in, m, "records_per_s", NULL, sum_rate / n);
	struct times mean = { sum.real / n, sum.user / n, sum.sys / n, true, true, true };
	times_store(in, m, &mean);
	bp_report(in, m, "runs", NULL, n);
	return 0;
}
