/*
 * config: loading a sweep — reading the file, walking the schema's top
 * level (parse_root) into a `struct sweep_config`, defaults, freeing — and
 * the value readers every section shares (cpusets, commands, fractions).  The sections live by job in config-guest.c (libvirt,
 * guest), config-factors.c (topology, pinning, host knobs, noise),
 * config-bench.c (benchmark, collect), config-decide.c (baseline, advisor,
 * race), config-executor.c (executor) and config-dump.c (the canonical
 * dump); config-int.h is what they share.  Every error is recorded
 * (FILE:LINE:COL, the dotted key and what was expected) and the reader
 * reports them together; see config.h and docs/config.md.
 */
#include "config-int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "../util/cpuset.h"
#include "../util/safefile.h"

/* A config is a page of text; anything bigger is a mistake (or /dev/zero). */
#define CONFIG_MAX_BYTES (1024 * 1024)

const char *const config_order_names[] = {
	[ORDER_RANDOMIZED] = "randomized", [ORDER_SEQUENTIAL] = "sequential", NULL
};

const char *const config_strategy_names[] = {
	[STRATEGY_FULL] = "full", [STRATEGY_RACE] = "race", NULL
};

void shape_format(const struct shape *s, char *buf, size_t n)
{
	assert(s->sockets > 0 && s->dies > 0 && s->cores > 0 && s->threads > 0);
	if (s->dies_given)
		snprintf(buf, n, "%dx%dx%dx%d", s->sockets, s->dies, s->cores, s->threads);
	else
		snprintf(buf, n, "%dx%dx%d", s->sockets, s->cores, s->threads);
}

int shape_vcpus(const struct shape *s)
{
	return s->sockets * s->dies * s->cores * s->threads;
}

int config_cpuset_parse(const char *set, int *ncpus, int *max_cpu)
{
	struct cpuset cs;
	if (cpuset_parse(set, &cs, NULL) < 0)
		return -1;
	if (ncpus)
		*ncpus = (int)cs.n;
	if (max_cpu)
		*max_cpu = cpuset_last(&cs);
	cpuset_release(&cs);
	return 0;
}

/*
 * A CPU list in cpulist syntax: host CPUs, or (guest) vCPUs numbered from 0
 * inside the guest, which plan checks against each shape.
 */
static int get_cpulist(struct yr_reader *L, const yaml_node_t *n, const char *key, bool guest,
		       char **out, int *ncpus)
{
	char *s = NULL;
	if (yr_get_str(L, n, key, &s) < 0)
		return -1;
	if (config_cpuset_parse(s, ncpus, NULL) < 0) {
		free(s);
		if (guest)
			return yr_fail(L, n, key, "expected guest vCPUs like \"0-1\" or \"2,3\" "
				       "(numbered from 0 inside the guest), got %s", YR_DESCRIBE(n));
		return yr_fail(L, n, key, "expected a host cpuset like \"0-3,8\" or \"0-7,^2\" "
			    "(CPU numbers up to %d), got %s", CPUSET_MAX_CPU, YR_DESCRIBE(n));
	}
	free(*out);
	*out = s;
	return 0;
}

int config_get_cpuset(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out,
		      int *ncpus)
{
	return get_cpulist(L, n, key, false, out, ncpus);
}

int config_get_vcpus(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out,
		     int *nvcpus)
{
	return get_cpulist(L, n, key, true, out, nvcpus);
}

void config_argv_set(struct argv_list *a, const char *const *words)
{
	size_t n = 0;
	while (words[n])
		n++;
	a->argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		a->argv[i] = xstrdup(words[i]);
	a->argc = n;
}

void config_argv_free(struct argv_list *a)
{
	for (size_t i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	a->argv = NULL;
	a->argc = 0;
}

/* A command: a non-empty list of strings. */
int config_get_argv(struct yr_reader *L, const yaml_node_t *n, const char *key,
		    struct argv_list *out)
{
	if (n->type == YAML_SCALAR_NODE && !yr_is_null(n))
		return yr_fail(L, n, key, "write the command as a list: [prog, arg, ...]");
	if (yr_expect_type(L, n, key, YAML_SEQUENCE_NODE, "a command as a list [prog, arg, ...]") < 0)
		return -1;
	size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (count == 0)
		return yr_fail(L, n, key, "the command is empty; write it as [prog, arg, ...]");
	config_argv_free(out);
	out->argv = xcalloc(count + 1, sizeof(char *));
	out->argc = count;
	char child[YR_KEY_MAX];
	int rc = 0;
	for (size_t i = 0; i < count; i++) {
		yr_key_index(child, key, i);
		if (yr_get_str(L, yr_node(L, n->data.sequence.items.start[i]), child,
			       &out->argv[i]) < 0)
			rc = -1;
	}
	if (out->argv[0] && !*out->argv[0])
		rc = yr_fail(L, yr_node(L, n->data.sequence.items.start[0]), key,
			     "the program name is empty");
	return rc;
}

/* A decimal number lo..hi (a plain scalar), e.g. a fraction. */
int config_get_fraction(struct yr_reader *L, const yaml_node_t *v, const char *key, double lo,
			double hi, const char *what, double *out)
{
	const char *s;
	if (yr_get_plain(L, v, key, what, &s) < 0)
		return -1;
	char *end;
	errno = 0;
	double f = strtod(s, &end);
	if (errno || *end || end == s || !isfinite(f))
		return yr_fail(L, v, key, "expected %s, got %s", what, YR_DESCRIBE(v));
	if (f < lo || f > hi)
		return yr_fail(L, v, key, "%s is out of range; expected %s", s, what);
	*out = f;
	return 0;
}

static int parse_seed(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char what[] = "an unsigned 64-bit integer";
	const char *s;
	if (yr_get_plain(L, n, "seed", what, &s) < 0)
		return -1;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return yr_fail(L, n, "seed", "expected %s, got %s", what, YR_DESCRIBE(n));
	errno = 0;
	unsigned long long v = strtoull(s, NULL, 10);
	if (errno == ERANGE)
		return yr_fail(L, n, "seed", "%s is out of range; expected %s", s, what);
	cfg->seed = v;
	cfg->seed_given = true;
	return 0;
}

static void config_defaults(struct sweep_config *cfg)
{
	cfg->uri = xstrdup("qemu:///system");
	cfg->domain_type = DOMAIN_AUTO;
	cfg->name_prefix = xstrdup("ta-");
	cfg->arch = ARCH_HOST;
	cfg->memory_mib = 512;
	cfg->runner = RUNNER_AGENT;
	cfg->boot_timeout = 120;
	cfg->collect = (struct collect){ .gang_exits = true, .exit_reasons = true,
					 .vcpu_stats = true, .buffer_kib = 8192,
					 .max_lost_fraction = 0.001 };
	cfg->repetitions = 3;
	cfg->order = ORDER_RANDOMIZED;
	cfg->strategy = STRATEGY_FULL;
	cfg->race_first_test = 3;
	cfg->advisor.objective = OBJECTIVE_WORST;
	cfg->advisor.equivalence = 0.02;
	cfg->advisor.max_failure_rate = 0.2;
	cfg->reuse_runs = 1;
	config_executor_defaults(&cfg->executor);
}

/* Walks the whole schema, recording every error; -1 when there was any. */
static int parse_root(struct yr_reader *L, const yaml_node_t *root, struct sweep_config *cfg)
{
	static const char *const keys[] = { "name", "description", "libvirt", "guest",
					    "topology", "pinning", "host", "noise", "benchmark",
					    "baseline", "collect", "repetitions", "order", "seed",
					    "strategy", "race", "advisor", "executor", NULL };
	if (yr_map_check(L, root, "", keys, "a mapping with at least name, topology and "
			 "benchmark") < 0)
		return -1;
	yaml_node_t *v;
	int e;
	if (!(v = yr_map_get(L, root, "name")))
		yr_fail_missing(L, root, "name", "name", "; add e.g. name: my-sweep");
	else
		yr_get_name(L, v, "name", 64, "._-", &cfg->name);
	if ((v = yr_map_get(L, root, "description")))
		yr_get_str(L, v, "description", &cfg->description);
	if ((v = yr_map_get(L, root, "libvirt")))
		config_parse_libvirt(L, v, cfg);
	if ((v = yr_map_get(L, root, "guest")))
		config_parse_guest(L, v, cfg);
	int factors = 0;
	if (!(v = yr_map_get(L, root, "topology")))
		factors = yr_fail_missing(L, root, "topology", "topology", "; add e.g. topology: "
				  "[1x2x1, 1x1x2]");
	else if (config_parse_topology(L, v, cfg) < 0)
		factors = -1;
	if ((v = yr_map_get(L, root, "pinning"))) {
		if (config_parse_pinning(L, v, cfg) < 0)
			factors = -1;
	} else {
		cfg->pinnings = xcalloc(1, sizeof(*cfg->pinnings));
		cfg->npinnings = 1;
		cfg->pinnings[0].policy = PIN_NONE;
		cfg->pinnings[0].name = xstrdup("none");
	}
	if ((v = yr_map_get(L, root, "host")) && config_parse_host(L, v, cfg) < 0)
		factors = -1;
	if ((v = yr_map_get(L, root, "noise"))) {
		if (config_parse_noise(L, v, cfg) < 0)
			factors = -1;
	} else {
		cfg->noises = xcalloc(1, sizeof(*cfg->noises));
		cfg->nnoises = 1;
		cfg->noises[0].kind = NOISE_NONE;
		cfg->noises[0].name = xstrdup("none");
	}
	config_parse_benchmark(L, root, cfg);
	if ((v = yr_map_get(L, root, "baseline")) && factors == 0)
		config_parse_baseline(L, v, cfg);
	if ((v = yr_map_get(L, root, "collect")))
		config_parse_collect(L, v, cfg);
	if ((v = yr_map_get(L, root, "repetitions")))
		yr_get_int(L, v, "repetitions", 1, 1000, &cfg->repetitions);
	if ((v = yr_map_get(L, root, "order")) && yr_get_enum(L, v, "order", config_order_names, &e) == 0)
		cfg->order = (enum run_order)e;
	if ((v = yr_map_get(L, root, "seed")))
		parse_seed(L, v, cfg);
	if ((v = yr_map_get(L, root, "strategy")) &&
	    yr_get_enum(L, v, "strategy", config_strategy_names, &e) == 0)
		cfg->strategy = (enum strategy)e;
	if ((v = yr_map_get(L, root, "race")))
		config_parse_race(L, v, cfg);
	if ((v = yr_map_get(L, root, "advisor")) && factors == 0)
		config_parse_advisor(L, v, cfg);
	if ((v = yr_map_get(L, root, "executor")))
		config_parse_executor(L, v, cfg);
	return L->nfailed ? -1 : 0;
}

struct sweep_config *config_parse_flags(const char *path, const char *text, size_t len,
					unsigned flags, struct ta_err *err)
{
	struct yr_reader L;
	if (yr_load(&L, path, text, len, "a mapping with at least name, topology and benchmark",
		    err) < 0)
		return NULL;
	struct sweep_config *cfg = xcalloc(1, sizeof(*cfg));
	cfg->path = xstrdup(path);
	cfg->files_checked = flags & CONFIG_CHECK_FILES;
	cfg->text = xmalloc(len + 1);
	memcpy(cfg->text, text, len);
	cfg->text[len] = '\0';
	cfg->text_len = len;
	config_defaults(cfg);
	int rc = parse_root(&L, yr_root(&L), cfg);
	if (yr_finish(&L) < 0)
		rc = -1;
	if (rc < 0) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

struct sweep_config *config_parse(const char *path, const char *text, size_t len,
				  struct ta_err *err)
{
	return config_parse_flags(path, text, len, 0, err);
}

struct sweep_config *config_load(const char *path, struct ta_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	if (safefile_read_input(path, "the config", CONFIG_MAX_BYTES, &sb, err) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	struct sweep_config *cfg = config_parse_flags(path, strbuf_str(&sb), sb.len,
						      CONFIG_CHECK_FILES, err);
	strbuf_release(&sb);
	return cfg;
}

void config_free(struct sweep_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->path);
	free(cfg->text);
	for (size_t i = 0; i < cfg->advisor.nenvironment; i++)
		free(cfg->advisor.environment[i]);
	free(cfg->advisor.environment);
	config_executor_release(&cfg->executor);
	free(cfg->name);
	free(cfg->description);
	free(cfg->uri);
	free(cfg->template_path);
	free(cfg->name_prefix);
	for (size_t i = 0; i < cfg->nprepare; i++)
		config_argv_free(&cfg->prepare[i]);
	free(cfg->prepare);
	free(cfg->topology.shapes);
	free(cfg->topology.vcpus);
	free(cfg->topology.threads);
	free(cfg->topology.sockets);
	for (size_t i = 0; i < cfg->npinnings; i++) {
		struct pinning *p = &cfg->pinnings[i];
		free(p->name);
		for (size_t j = 0; j < p->nvcpu_cpus; j++)
			free(p->vcpu_cpus[j]);
		free(p->vcpu_cpus);
		free(p->emulator_cpus);
	}
	free(cfg->pinnings);
	for (size_t i = 0; i < cfg->nknobs; i++) {
		for (size_t j = 0; j < cfg->knobs[i].nvalues; j++)
			free(cfg->knobs[i].values[j]);
		free(cfg->knobs[i].values);
		free(cfg->knobs[i].name);
	}
	free(cfg->knobs);
	for (size_t i = 0; i < cfg->nnoises; i++) {
		free(cfg->noises[i].name);
		free(cfg->noises[i].cpus);
		free(cfg->noises[i].vcpus);
		config_argv_free(&cfg->noises[i].argv);
	}
	free(cfg->noises);
	struct benchmark *b = &cfg->bench;
	config_argv_free(&b->argv);
	config_argv_free(&b->server_argv);
	free(b->vcpus);
	free(b->metric.name);
	free(b->metric.unit);
	free(b->parse_regex);
	for (size_t i = 0; i < b->nparse_groups; i++)
		free(b->parse_groups[i]);
	free(b->parse_groups);
	for (size_t i = 0; i < cfg->nbaseline; i++) {
		free(cfg->baseline[i].factor);
		free(cfg->baseline[i].value);
	}
	free(cfg->baseline);
	free(cfg);
}
