/*
 * config-bench: what each run measures — the benchmark (its kind's
 * defaults and declared metrics from model/bench-kind.c, the command
 * kind's regex) and collect (tracing, vCPU statistics); see config.c.
 */
#include "config-int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../collectors/benchparse.h"

static const char *const direction_words[] = { "higher", "lower", NULL };

static int parse_metric(struct yr_reader *L, const yaml_node_t *n, struct benchmark *b)
{
	const yaml_node_t *name_node = n;
	yaml_node_t *dir = NULL, *unit = NULL;
	if (n->type == YAML_MAPPING_NODE) {
		static const char *const keys[] = { "name", "direction", "unit", NULL };
		if (yr_map_check(L, n, "benchmark.metric", keys, "a metric") < 0)
			return -1;
		if (!(name_node = yr_map_get(L, n, "name")))
			return yr_fail_missing(L, n, "benchmark.metric.name", "name", "; give the metric's name");
		dir = yr_map_get(L, n, "direction");
		unit = yr_map_get(L, n, "unit");
	}
	const char *key = n->type == YAML_MAPPING_NODE ? "benchmark.metric.name" : "benchmark.metric";
	char *name = NULL;
	if (yr_get_str(L, name_node, key, &name) < 0)
		return -1;
	bool ok = isalpha((unsigned char)name[0]) || name[0] == '_';
	for (const char *p = name; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-';
	if (!ok || strlen(name) > 64) {
		free(name);
		return yr_fail(L, name_node, key, "expected a metric name of letters, digits, _, "
			       "- and . (starting with a letter or _), got %s", YR_DESCRIBE(name_node));
	}
	b->metric.name = name;
	/* The kind's own metric keeps its known direction and unit. */
	const struct bench_kind_info *info = bench_kind_info(b->kind);
	bool is_default = info->metric && !strcmp(info->metric, name);
	const struct bench_metric_spec *spec = bench_kind_metric(b->kind, name);
	b->metric.higher_is_better = is_default ? spec->dir == METRIC_DIR_HIGHER : true;
	/*
	 * Another metric of a parsing kind (redis.GET.p99_ms, latency_avg_ms)
	 * has the direction its parser declares, which only the run knows:
	 * the experiment then records none and ranking reads it off the
	 * stored metric rows.
	 */
	b->metric.direction_given = is_default || dir || info->needs_parse_regex;
	if (is_default)
		b->metric.unit = xstrdup(spec->unit);
	int rc = 0;
	/*
	 * A parsing kind's metric must be one its parser reports (a typo would
	 * fail every run); one given with its own direction is the user's
	 * word (a redis-benchmark command of their own, say).
	 */
	if (!info->needs_parse_regex && !spec && !dir) {
		char **names = bench_kind_metric_names(b->kind);
		const char *near = yr_did_you_mean(name, (const char *const *)names);
		struct strbuf list = STRBUF_INIT;
		for (size_t i = 0; info->metrics[i].name; i++)
			strbuf_addf(&list, "%s%s", i ? ", " : "", info->metrics[i].name);
		rc = yr_fail(L, name_node, key, "%s reports no metric '%s'%s%s%s; it reports %s "
			     "(give `direction` to name a metric of your own argv)",
			     bench_kind_name(b->kind), name, near ? " (did you mean '" : "",
			     near ? near : "", near ? "'?)" : "", strbuf_str(&list));
		strbuf_release(&list);
		for (size_t i = 0; names[i]; i++)
			free(names[i]);
		free(names);
	}
	if (dir) {
		int e;
		if (yr_get_enum(L, dir, "benchmark.metric.direction", direction_words, &e) < 0)
			rc = -1;
		else
			b->metric.higher_is_better = e == 0;
	}
	if (unit && yr_get_str(L, unit, "benchmark.metric.unit", &b->metric.unit) < 0)
		rc = -1;
	return rc;
}

/* kind command: the regex that finds the metric in the output. */
static int parse_command_regex(struct yr_reader *L, const yaml_node_t *n, struct benchmark *b,
			       bool metric_ok)
{
	yaml_node_t *v = yr_map_get(L, n, "parse");
	if (!v)
		return yr_fail_missing(L, n, "benchmark.parse", "parse", " (a regex with a "
			       "named group, e.g. '(?<ops>[0-9.]+) ops/s')");
	if (yr_get_str(L, v, "benchmark.parse", &b->parse_regex) < 0)
		return -1;
	struct ta_err rerr = { 0 };
	if (benchparse_regex_groups(b->parse_regex, &b->parse_groups, &b->nparse_groups,
				    &rerr) < 0)
		return yr_fail(L, v, "benchmark.parse", "%s", rerr.msg);
	if (!metric_ok)
		return 0;
	for (size_t i = 0; i < b->nparse_groups; i++)
		if (b->parse_groups[i] && !strcmp(b->parse_groups[i], b->metric.name))
			return 0;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < b->nparse_groups; i++)
		if (b->parse_groups[i])
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", b->parse_groups[i]);
	yr_fail(L, yr_map_get(L, n, "metric"), "benchmark.metric", "'%s' is not a named group "
		"of parse (its groups: %s)", b->metric.name, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

int config_parse_benchmark(struct yr_reader *L, const yaml_node_t *root, struct sweep_config *cfg)
{
	yaml_node_t *n = yr_map_get(L, root, "benchmark");
	if (!n)
		return yr_fail_missing(L, root, "benchmark", "benchmark", "; add e.g. benchmark: "
			       "{kind: stress-ng}");
	static const char *const keys[] = { "kind", "argv", "server_argv", "duration", "timeout",
					    "metric", "parse", "vcpus", NULL };
	if (yr_map_check(L, n, "benchmark", keys, "a mapping (kind, argv, ...)") < 0)
		return -1;
	struct benchmark *b = &cfg->bench;
	yaml_node_t *v = yr_map_get(L, n, "kind");
	int e, rc = 0;
	/* The other keys' meaning depends on the kind: without one, say no more. */
	if (!v) {
		struct strbuf kinds = STRBUF_INIT;
		yr_words_join(&kinds, bench_kind_names);	/* the kind table's, all of them */
		yr_fail_missing(L, n, "benchmark.kind", "kind", " (%s)", strbuf_str(&kinds));
		strbuf_release(&kinds);
		return -1;
	}
	if (yr_get_enum(L, v, "benchmark.kind", bench_kind_names, &e) < 0)
		return -1;
	b->kind = (enum bench_kind)e;

	if ((v = yr_map_get(L, n, "vcpus"))) {
		int nv;
		if (config_get_vcpus(L, v, "benchmark.vcpus", &b->vcpus, &nv) < 0)
			rc = -1;
		else if (cfg->runner == RUNNER_HOST)
			rc = yr_fail(L, v, "benchmark.vcpus", "guest vCPUs need the agent runner "
				     "(with runner host, pin through an explicit pinning)");
	}

	b->duration = 10;
	bool duration_ok = true;
	if ((v = yr_map_get(L, n, "duration")) &&
	    yr_get_int(L, v, "benchmark.duration", 0, 86400, &b->duration) < 0)
		rc = -1, duration_ok = false;

	const struct bench_kind_info *info = bench_kind_info(b->kind);
	if ((v = yr_map_get(L, n, "argv"))) {
		if (config_get_argv(L, v, "benchmark.argv", &b->argv) < 0)
			rc = -1;
	} else if (!info->argv) {
		rc = yr_fail_missing(L, n, "benchmark.argv", "argv", " (kind command runs "
			     "argv: [prog, arg, ...])");
	} else {
		char **argv = bench_kind_argv(b->kind, b->duration ? b->duration : 10);
		config_argv_set(&b->argv, (const char *const *)argv);
		for (size_t i = 0; argv[i]; i++)
			free(argv[i]);
		free(argv);
	}

	if ((v = yr_map_get(L, n, "server_argv"))) {
		if (!info->server)
			rc = yr_fail(L, yr_map_key(L, n, "server_argv"), "benchmark.server_argv",
				     "only redis uses server_argv");
		else if (config_get_argv(L, v, "benchmark.server_argv", &b->server_argv) < 0)
			rc = -1;
	} else if (info->server) {
		config_argv_set(&b->server_argv, info->server->argv);
	}

	b->timeout = 0;
	if ((v = yr_map_get(L, n, "timeout"))) {
		if (yr_get_int(L, v, "benchmark.timeout", 0, 604800, &b->timeout) < 0)
			rc = -1;
		else if (duration_ok && b->timeout && b->duration && b->timeout <= b->duration)
			rc = yr_fail(L, v, "benchmark.timeout", "%d s is not longer than the "
				     "duration (%d s); give more, or 0 for the default",
				     b->timeout, b->duration);
	}
	if (b->timeout == 0)
		b->timeout = info->timeout_s ? info->timeout_s : b->duration * 3 + 60;

	bool metric_ok = true;
	if ((v = yr_map_get(L, n, "metric"))) {
		if (parse_metric(L, v, b) < 0)
			rc = -1, metric_ok = false;
	} else if (!info->metric) {
		rc = yr_fail_missing(L, n, "benchmark.metric", "metric", " (kind command: name "
			     "the named group of parse that is the result)");
		metric_ok = false;
	} else {
		const struct bench_metric_spec *spec = bench_kind_metric(b->kind, info->metric);
		b->metric.name = xstrdup(info->metric);
		b->metric.unit = xstrdup(spec->unit);
		b->metric.higher_is_better = spec->dir == METRIC_DIR_HIGHER;
		b->metric.direction_given = true;
	}
	metric_ok = metric_ok && b->metric.name;

	if (info->needs_parse_regex) {
		if (parse_command_regex(L, n, b, metric_ok) < 0)
			rc = -1;
	} else if (yr_map_get(L, n, "parse")) {
		rc = yr_fail(L, yr_map_key(L, n, "parse"), "benchmark.parse", "only kind command "
			     "uses parse (the other kinds have built-in parsers)");
	}
	return rc;
}

int config_parse_collect(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "gang_exits", "exit_reasons", "vcpu_stats",
					    "buffer_kib", "max_lost_fraction", NULL };
	if (yr_map_check(L, n, "collect", keys, "a mapping (gang_exits, exit_reasons, ...)") < 0)
		return -1;
	struct collect *c = &cfg->collect;
	yaml_node_t *v;
	int rc = 0;
	if ((v = yr_map_get(L, n, "gang_exits")) &&
	    yr_get_bool(L, v, "collect.gang_exits", &c->gang_exits) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "exit_reasons")) &&
	    yr_get_bool(L, v, "collect.exit_reasons", &c->exit_reasons) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "vcpu_stats")) &&
	    yr_get_bool(L, v, "collect.vcpu_stats", &c->vcpu_stats) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "buffer_kib")) &&
	    yr_get_int(L, v, "collect.buffer_kib", 64, 4194304, &c->buffer_kib) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "max_lost_fraction")) &&
	    config_get_fraction(L, v, "collect.max_lost_fraction", 0, 1, "a fraction 0..1 (e.g. 0.001)",
			 &c->max_lost_fraction) < 0)
		rc = -1;
	return rc;
}
