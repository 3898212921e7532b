/* bench-kind: the table of benchmark kinds; see bench-kind.h and docs/config.md. */
#include "bench-kind.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bench_kind_names[] = {
	[BENCH_EBIZZY] = "ebizzy", [BENCH_REDIS] = "redis",
	[BENCH_STRESS_NG] = "stress-ng", [BENCH_SYSBENCH] = "sysbench",
	[BENCH_KERNEL_BUILD] = "kernel-build", [BENCH_COMMAND] = "command", NULL
};

/* What `time` reports (kernel-build, and ebizzy's own summary lines). */
#define TIME_METRICS \
	{ "real_s", "s", METRIC_DIR_LOWER }, \
	{ "user_s", "s", METRIC_DIR_LOWER }, \
	{ "sys_s", "s", METRIC_DIR_LOWER }

static const struct bench_metric_spec ebizzy_metrics[] = {
	{ "records_per_s", "records/s", METRIC_DIR_HIGHER },
	TIME_METRICS,
	{ "runs", "runs", METRIC_DIR_NONE },	/* summary blocks averaged */
	{ NULL, NULL, 0 },
};

/* redis-benchmark's tests, named as the parser keys them (docs: benchparse.h). */
static const char *const redis_tests[] = {
	"PING_INLINE", "PING_BULK", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH",
	"LPOP", "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN",
	"LPUSH_needed_to_benchmark_LRANGE", "LRANGE_100_first_100_elements",
	"LRANGE_300_first_300_elements", "LRANGE_500_first_450_elements",
	"LRANGE_500_first_500_elements", "LRANGE_600_first_600_elements", "MSET_10_keys",
	"XADD", NULL,
};
static const char *const redis_stats[] = { "avg", "min", "p50", "p95", "p99", "max", NULL };

static const struct bench_metric_spec redis_metrics[] = {
	{ "requests_per_s", "requests/s", METRIC_DIR_HIGHER },	/* geometric mean of the tests */
	{ "redis.<test>", "requests/s", METRIC_DIR_HIGHER },
	{ "redis.<test>.<stat>_ms", "ms", METRIC_DIR_LOWER },
	{ NULL, NULL, 0 },
};
static const struct bench_part redis_parts[] = {
	{ "<test>", redis_tests },
	{ "<stat>", redis_stats },
	{ NULL, NULL },
};

static const struct bench_metric_spec stress_ng_metrics[] = {
	{ "bogo_ops_per_s", "bogo-ops/s", METRIC_DIR_HIGHER },	/* sum over the stressors */
	{ "stress-ng.<stressor>.bogo_ops_per_s", "bogo-ops/s", METRIC_DIR_HIGHER },
	{ NULL, NULL, 0 },
};

static const struct bench_metric_spec sysbench_metrics[] = {
	{ "events_per_s", "events/s", METRIC_DIR_HIGHER },
	{ "latency_min_ms", "ms", METRIC_DIR_LOWER },
	{ "latency_avg_ms", "ms", METRIC_DIR_LOWER },
	{ "latency_max_ms", "ms", METRIC_DIR_LOWER },
	{ "latency_p<percentile>_ms", "ms", METRIC_DIR_LOWER },	/* 99.9 -> p99_9 */
	{ NULL, NULL, 0 },
};

static const struct bench_metric_spec time_metrics[] = {
	TIME_METRICS,
	{ NULL, NULL, 0 },
};

static const struct bench_server redis_server = {
	.argv = (const char *const[]){ "redis-server", "--save", "", "--appendonly", "no", NULL },
	.ready_argv = (const char *const[]){ "redis-cli", "ping", NULL },
	.ready_output = "PONG",
	.ready_what = "PING",
	.ready_timeout_s = 15,
};

static const struct bench_kind_info kinds[] = {
	[BENCH_EBIZZY] = {
		.argv = (const char *const[]){ "ebizzy", "-S", "{d}", NULL },
		.metric = "records_per_s", .metrics = ebizzy_metrics,
	},
	[BENCH_REDIS] = {
		.argv = (const char *const[]){ "redis-benchmark", "-q", "-n", "100000", "-t",
					       "set,get,incr,lpush,lpop,sadd,spop,mset", NULL },
		.metric = "requests_per_s", .metrics = redis_metrics, .parts = redis_parts,
		.server = &redis_server,
	},
	[BENCH_STRESS_NG] = {
		.argv = (const char *const[]){ "stress-ng", "--cpu", "0", "--timeout", "{d}s",
					       "--metrics-brief", NULL },
		.metric = "bogo_ops_per_s", .metrics = stress_ng_metrics,
	},
	[BENCH_SYSBENCH] = {
		.argv = (const char *const[]){ "sysbench", "cpu", "--time={d}", "run", NULL },
		.metric = "events_per_s", .metrics = sysbench_metrics,
	},
	[BENCH_KERNEL_BUILD] = {
		/* `time -p` prints the real/user/sys seconds the parser reads. */
		.argv = (const char *const[]){ "time", "-p", "make", "-C", "/root/linux", "-s",
					       "vmlinux", "-j", NULL },
		.timeout_s = 7200, .metric = "real_s", .metrics = time_metrics,
	},
	[BENCH_COMMAND] = {
		.needs_parse_regex = true,
	},
};

_Static_assert(sizeof(kinds) / sizeof(kinds[0]) == BENCH_NKINDS, "one entry per kind");

const char *bench_kind_name(enum bench_kind k)
{
	assert(k >= 0 && k < BENCH_NKINDS);
	return bench_kind_names[k];
}

const struct bench_kind_info *bench_kind_info(enum bench_kind k)
{
	assert(k >= 0 && k < BENCH_NKINDS);
	return &kinds[k];
}

static const struct bench_part *part_at(const struct bench_part *parts, const char *p)
{
	for (size_t i = 0; parts && parts[i].name; i++)
		if (!strncmp(p, parts[i].name, strlen(parts[i].name)))
			return &parts[i];
	return NULL;
}

static bool free_part_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* Does name match pattern, whose "<part>"s take their listed values (or any word)? */
static bool matches(const char *pattern, const char *name, const struct bench_part *parts)
{
	while (*pattern && *pattern != '<') {
		if (*pattern++ != *name++)
			return false;
	}
	if (!*pattern)
		return !*name;
	const struct bench_part *part = part_at(parts, pattern);
	const char *rest = strchr(pattern, '>') + 1;
	if (part && part->values) {
		for (size_t i = 0; part->values[i]; i++) {
			size_t n = strlen(part->values[i]);
			if (!strncmp(name, part->values[i], n) && matches(rest, name + n, parts))
				return true;
		}
		return false;
	}
	for (size_t n = 1; name[n - 1] && free_part_char(name[n - 1]); n++)
		if (matches(rest, name + n, parts))
			return true;
	return false;
}

const struct bench_metric_spec *bench_kind_spec(enum bench_kind k, const char *pattern)
{
	const struct bench_kind_info *info = bench_kind_info(k);
	for (size_t i = 0; info->metrics && info->metrics[i].name; i++)
		if (!strcmp(info->metrics[i].name, pattern))
			return &info->metrics[i];
	return NULL;
}

const struct bench_metric_spec *bench_kind_metric(enum bench_kind k, const char *name)
{
	const struct bench_kind_info *info = bench_kind_info(k);
	for (size_t i = 0; info->metrics && info->metrics[i].name; i++)
		if (matches(info->metrics[i].name, name, info->parts))
			return &info->metrics[i];
	return NULL;
}

static void names_add(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

/* Every name pattern stands for, listed parts expanded (free parts stay "<part>"). */
static void expand(const char *pattern, const struct bench_part *parts, const char *prefix,
		   char ***v, size_t *n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *lt = strchr(pattern, '<');
	const struct bench_part *part = lt ? part_at(parts, lt) : NULL;
	if (!lt) {
		strbuf_addf(&sb, "%s%s", prefix, pattern);
		names_add(v, n, strbuf_detach(&sb));
		return;
	}
	if (!part || !part->values) {
		const char *gt = strchr(lt, '>') + 1;
		strbuf_addf(&sb, "%s%.*s", prefix, (int)(gt - pattern), pattern);
		expand(gt, parts, strbuf_str(&sb), v, n);
		strbuf_release(&sb);
		return;
	}
	for (size_t i = 0; part->values[i]; i++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s%.*s%s", prefix, (int)(lt - pattern), pattern, part->values[i]);
		expand(lt + strlen(part->name), parts, strbuf_str(&sb), v, n);
	}
	strbuf_release(&sb);
}

char **bench_kind_metric_names(enum bench_kind k)
{
	const struct bench_kind_info *info = bench_kind_info(k);
	char **v = xcalloc(1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; info->metrics && info->metrics[i].name; i++)
		expand(info->metrics[i].name, info->parts, "", &v, &n);
	return v;
}

char **bench_kind_argv(enum bench_kind k, int duration)
{
	const struct bench_kind_info *info = bench_kind_info(k);
	char **v = xcalloc(1, sizeof(*v));
	size_t n = 0;
	char secs[16];
	snprintf(secs, sizeof(secs), "%d", duration);
	for (size_t i = 0; info->argv && info->argv[i]; i++) {
		struct strbuf sb = STRBUF_INIT;
		for (const char *p = info->argv[i]; *p; p++) {
			if (!strncmp(p, "{d}", 3)) {
				strbuf_addstr(&sb, secs);
				p += 2;
			} else {
				strbuf_addch(&sb, *p);
			}
		}
		strbuf_addstr(&sb, "");	/* an empty argument stays one */
		names_add(&v, &n, strbuf_detach(&sb));
	}
	return v;
}
