/*
 * config-dump: the validated config as canonical text, one value a line
 * (defaults filled in, values normalised): two configs that mean the same
 * dump the same, which the tests compare with; see config.h.
 */
#include "config-int.h"

#include <stdio.h>

void config_dump_argv(struct strbuf *out, const char *key, const struct argv_list *a)
{
	strbuf_addf(out, "%s: [", key);
	for (size_t i = 0; i < a->argc; i++)
		strbuf_addf(out, "%s\"%s\"", i ? ", " : "", a->argv[i]);
	strbuf_addstr(out, "]\n");
}

static void dump_ints(struct strbuf *out, const char *key, const int *v, size_t n)
{
	strbuf_addf(out, "%s: [", key);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(out, "%s%d", i ? ", " : "", v[i]);
	strbuf_addstr(out, "]\n");
}

void config_dump(const struct sweep_config *cfg, struct strbuf *out)
{
	strbuf_addf(out, "name: %s\n", cfg->name);
	if (cfg->description)
		strbuf_addf(out, "description: %s\n", cfg->description);
	strbuf_addf(out, "libvirt.uri: %s\n", cfg->uri);
	strbuf_addf(out, "libvirt.domain_type: %s\n", config_domain_type_name(cfg->domain_type));
	strbuf_addf(out, "libvirt.template: %s\n",
		    cfg->template_path ? cfg->template_path : "builtin");
	strbuf_addf(out, "libvirt.name_prefix: %s\n", cfg->name_prefix);
	strbuf_addf(out, "libvirt.arch: %s\n", config_arch_name(cfg->arch));
	strbuf_addf(out, "libvirt.memory_mib: %d\n", cfg->memory_mib);
	strbuf_addf(out, "guest.runner: %s\n", config_runner_name(cfg->runner));
	strbuf_addf(out, "guest.boot_timeout: %d\n", cfg->boot_timeout);
	for (size_t i = 0; i < cfg->nprepare; i++) {
		char key[48];
		snprintf(key, sizeof(key), "guest.prepare[%zu]", i);
		config_dump_argv(out, key, &cfg->prepare[i]);
	}
	strbuf_addf(out, "guest.reuse: %s\n", cfg->reuse_guest ? "true" : "false");
	strbuf_addf(out, "guest.reuse_runs: %d\n", cfg->reuse_runs);
	strbuf_addf(out, "guest.host_baseline: %s\n", cfg->host_baseline ? "true" : "false");
	const struct topology_spec *t = &cfg->topology;
	if (t->generated) {
		dump_ints(out, "topology.vcpus", t->vcpus, t->nvcpus);
		dump_ints(out, "topology.threads", t->threads, t->nthreads);
		if (t->sockets)
			dump_ints(out, "topology.sockets", t->sockets, t->nsockets);
	} else {
		strbuf_addstr(out, "topology: [");
		for (size_t i = 0; i < t->nshapes; i++) {
			char text[64];
			shape_format(&t->shapes[i], text, sizeof(text));
			strbuf_addf(out, "%s%s", i ? ", " : "", text);
		}
		strbuf_addstr(out, "]\n");
	}
	for (size_t i = 0; i < cfg->npinnings; i++) {
		const struct pinning *p = &cfg->pinnings[i];
		strbuf_addf(out, "pinning[%zu]: %s", i, p->name);
		if (p->policy == PIN_EXPLICIT) {
			strbuf_addstr(out, " vcpus=");
			for (size_t j = 0; j < p->nvcpu_cpus; j++)
				strbuf_addf(out, "%s%s", j ? "/" : "", p->vcpu_cpus[j]);
			if (p->emulator_cpus)
				strbuf_addf(out, " emulator=%s", p->emulator_cpus);
		}
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < cfg->nknobs; i++) {
		strbuf_addf(out, "host.%s: [", cfg->knobs[i].name);
		for (size_t j = 0; j < cfg->knobs[i].nvalues; j++)
			strbuf_addf(out, "%s%s", j ? ", " : "", cfg->knobs[i].values[j]);
		strbuf_addstr(out, "]\n");
	}
	for (size_t i = 0; i < cfg->nnoises; i++) {
		const struct noise *z = &cfg->noises[i];
		strbuf_addf(out, "noise[%zu]: %s kind=%s", i, z->name, config_noise_kind_name(z->kind));
		if (z->cpus)
			strbuf_addf(out, " cpus=%s", z->cpus);
		if (z->vcpus)
			strbuf_addf(out, " vcpus=%s", z->vcpus);
		if (z->kind == NOISE_SPIN)
			strbuf_addf(out, " threads=%d", z->threads);
		strbuf_addch(out, '\n');
		if (z->argv.argc) {
			char key[48];
			snprintf(key, sizeof(key), "noise[%zu].argv", i);
			config_dump_argv(out, key, &z->argv);
		}
	}
	const struct benchmark *b = &cfg->bench;
	strbuf_addf(out, "benchmark.kind: %s\n", bench_kind_name(b->kind));
	config_dump_argv(out, "benchmark.argv", &b->argv);
	if (b->server_argv.argc)
		config_dump_argv(out, "benchmark.server_argv", &b->server_argv);
	if (b->vcpus)
		strbuf_addf(out, "benchmark.vcpus: %s\n", b->vcpus);
	strbuf_addf(out, "benchmark.duration: %d\n", b->duration);
	strbuf_addf(out, "benchmark.timeout: %d\n", b->timeout);
	strbuf_addf(out, "benchmark.metric: %s %s%s%s\n", b->metric.name,
		    !b->metric.direction_given ? "as-parsed" :
		    b->metric.higher_is_better ? "higher" : "lower", b->metric.unit ? " " : "",
		    b->metric.unit ? b->metric.unit : "");
	if (b->parse_regex)
		strbuf_addf(out, "benchmark.parse: %s\n", b->parse_regex);
	for (size_t i = 0; i < cfg->nbaseline; i++)
		strbuf_addf(out, "baseline.%s: %s\n", cfg->baseline[i].factor,
			    cfg->baseline[i].value);
	const struct collect *c = &cfg->collect;
	strbuf_addf(out, "collect: gang_exits=%d exit_reasons=%d vcpu_stats=%d buffer_kib=%d "
		    "max_lost_fraction=%g\n", c->gang_exits, c->exit_reasons, c->vcpu_stats,
		    c->buffer_kib, c->max_lost_fraction);
	strbuf_addf(out, "repetitions: %d\n", cfg->repetitions);
	strbuf_addf(out, "order: %s\n", config_order_names[cfg->order]);
	if (cfg->seed_given)
		strbuf_addf(out, "seed: %llu\n", cfg->seed);
	strbuf_addf(out, "strategy: %s\n", config_strategy_names[cfg->strategy]);
	if (cfg->strategy == STRATEGY_RACE)
		strbuf_addf(out, "race.first_test: %d\n", cfg->race_first_test);
	strbuf_addf(out, "advisor: objective=%s equivalence=%g max_failure_rate=%g "
		    "environment=noise", config_objective_names[cfg->advisor.objective],
		    cfg->advisor.equivalence, cfg->advisor.max_failure_rate);
	for (size_t i = 0; i < cfg->advisor.nenvironment; i++)
		strbuf_addf(out, ",%s", cfg->advisor.environment[i]);
	strbuf_addch(out, '\n');
	config_executor_dump(&cfg->executor, out);
}
