/*
 * test-config: the sweep configuration loader against the shipped examples
 * and the fixtures in tests/fixtures/config/ (found under $TA_TOP, else the
 * current directory).  Every invalid fixture is checked for the exact
 * line and column reported and a piece of the message, so a change that
 * moves or blurs an error shows up here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/benchparse.h"
#include "experiments/config.h"
#include "experiments/yaml-reader.h"
#include "util/strbuf.h"

static const char *top(void)
{
	const char *t = getenv("TA_TOP");
	return t && *t ? t : ".";
}

/* Path of a file under the checkout; static buffer, one at a time. */
static const char *path_of(const char *rel)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s/%s", top(), rel);
	return buf;
}

static const char *fixture(const char *name)
{
	static char rel[512];
	snprintf(rel, sizeof(rel), "tests/fixtures/config/%s", name);
	return path_of(rel);
}

static struct sweep_config *load_ok(const char *path)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_load(path, &err);
	if (!cfg)
		fail_msg("%s should load: %s", path, err.msg);
	return cfg;
}

static const struct knob_factor *knob(const struct sweep_config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->nknobs; i++)
		if (!strcmp(cfg->knobs[i].name, name))
			return &cfg->knobs[i];
	fail_msg("knob %s missing", name);
	return NULL;
}

static const char *baseline(const struct sweep_config *cfg, const char *factor)
{
	for (size_t i = 0; i < cfg->nbaseline; i++)
		if (!strcmp(cfg->baseline[i].factor, factor))
			return cfg->baseline[i].value;
	return NULL;
}

static void assert_shape(const struct shape *s, const char *text)
{
	char buf[64];
	shape_format(s, buf, sizeof(buf));
	assert_string_equal(buf, text);
}

/* --- shipped examples ------------------------------------------------------ */

static void test_quickstart(void **state)
{
	struct sweep_config *cfg = load_ok(path_of("configs/quickstart.yaml"));
	assert_string_equal(cfg->name, "quickstart");
	assert_int_equal(cfg->arch, ARCH_X86_64);
	assert_int_equal(cfg->domain_type, DOMAIN_AUTO);
	assert_null(cfg->template_path);
	assert_false(cfg->topology.generated);
	assert_int_equal(cfg->topology.nshapes, 3);
	assert_shape(&cfg->topology.shapes[0], "1x2x1");
	assert_shape(&cfg->topology.shapes[1], "1x1x2");
	assert_shape(&cfg->topology.shapes[2], "2x1x1");
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(shape_vcpus(&cfg->topology.shapes[i]), 2);
	assert_int_equal(cfg->npinnings, 1);
	assert_int_equal(cfg->pinnings[0].policy, PIN_NONE);
	assert_int_equal(cfg->nnoises, 2);
	assert_int_equal(cfg->noises[0].kind, NOISE_NONE);
	assert_int_equal(cfg->noises[1].kind, NOISE_SPIN);
	assert_string_equal(cfg->noises[1].cpus, "1");
	assert_int_equal(cfg->noises[1].threads, 1);
	assert_int_equal(cfg->bench.kind, BENCH_STRESS_NG);
	assert_string_equal(cfg->bench.argv.argv[0], "stress-ng");
	assert_null(cfg->bench.argv.argv[cfg->bench.argv.argc]);
	assert_int_equal(cfg->bench.duration, 5);
	assert_int_equal(cfg->bench.timeout, 5 * 3 + 60);
	assert_string_equal(cfg->bench.metric.name, "bogo_ops_per_s");
	assert_true(cfg->bench.metric.higher_is_better);
	assert_string_equal(baseline(cfg, "topology"), "2x1x1");
	assert_string_equal(baseline(cfg, "noise"), "none");
	assert_false(cfg->collect.gang_exits);
	assert_true(cfg->collect.vcpu_stats);
	assert_int_equal(cfg->repetitions, 3);
	assert_int_equal(cfg->order, ORDER_RANDOMIZED);
	assert_int_equal(cfg->nknobs, 0);
	config_free(cfg);
}

static void test_ebizzy(void **state)
{
	struct sweep_config *cfg = load_ok(path_of("configs/ebizzy-power8.yaml"));
	assert_int_equal(cfg->arch, ARCH_PPC64);
	assert_int_equal(cfg->domain_type, DOMAIN_KVM);
	/* The seed's guest: 4 vCPUs in one core with 4 threads. */
	assert_shape(&cfg->topology.shapes[0], "1x1x4");
	for (size_t i = 0; i < cfg->topology.nshapes; i++)
		assert_int_equal(shape_vcpus(&cfg->topology.shapes[i]), 4);
	const struct knob_factor *k = knob(cfg, "subcores_per_core");
	assert_int_equal(k->nvalues, 3);
	assert_string_equal(k->values[0], "1");
	assert_string_equal(k->values[2], "4");
	k = knob(cfg, "smt");
	assert_int_equal(k->nvalues, 1);
	assert_string_equal(k->values[0], "off");
	assert_int_equal(cfg->nnoises, 3);
	assert_string_equal(cfg->noises[1].name, "spin");
	assert_int_equal(cfg->noises[1].threads, 2);	/* one per vCPU of vcpus */
	/* The seed's loads run inside the guest, on the 2 vCPUs ebizzy leaves. */
	assert_string_equal(cfg->noises[1].vcpus, "2-3");
	assert_null(cfg->noises[1].cpus);
	assert_string_equal(cfg->noises[2].name, "ping");
	assert_int_equal(cfg->noises[2].kind, NOISE_COMMAND);
	assert_string_equal(cfg->noises[2].vcpus, "2-3");
	assert_string_equal(cfg->noises[2].argv.argv[1], "-f");
	assert_string_equal(cfg->bench.vcpus, "0-1");
	assert_int_equal(cfg->bench.kind, BENCH_EBIZZY);
	assert_string_equal(cfg->bench.metric.name, "records_per_s");
	assert_true(cfg->collect.gang_exits);
	assert_string_equal(baseline(cfg, "subcores_per_core"), "1");
	assert_string_equal(baseline(cfg, "topology"), "1x1x4");
	config_free(cfg);
}

static void test_redis(void **state)
{
	struct sweep_config *cfg = load_ok(path_of("configs/redis-power8.yaml"));
	assert_int_equal(cfg->arch, ARCH_PPC64);
	assert_int_equal(cfg->topology.nshapes, 3);
	assert_shape(&cfg->topology.shapes[0], "1x1x2");
	assert_shape(&cfg->topology.shapes[1], "1x2x1");
	const struct knob_factor *k = knob(cfg, "subcores_per_core");
	assert_int_equal(k->nvalues, 2);
	assert_string_equal(knob(cfg, "smt")->values[0], "off");
	assert_int_equal(cfg->bench.kind, BENCH_REDIS);
	assert_int_equal(cfg->bench.server_argv.argc, 5);
	assert_string_equal(cfg->bench.server_argv.argv[0], "redis-server");
	assert_string_equal(cfg->bench.server_argv.argv[2], "");
	assert_string_equal(cfg->bench.metric.name, "requests_per_s");
	assert_true(cfg->bench.metric.higher_is_better);
	assert_string_equal(baseline(cfg, "topology"), "1x1x2");
	assert_string_equal(baseline(cfg, "subcores_per_core"), "1");
	config_free(cfg);
}

/* The seed studies sized for a 2-CPU TCG host (make demo runs the first). */
static void test_tcg_studies(void **state)
{
	struct sweep_config *cfg = load_ok(path_of("configs/ebizzy-tcg.yaml"));
	assert_int_equal(cfg->topology.nshapes, 1);
	assert_shape(&cfg->topology.shapes[0], "1x2x2");
	/* The decision: all four vCPUs on host CPU 0, or vCPUs 2-3 on CPU 1;
	 * the benchmark's vCPUs 0-1 stay on CPU 0 in both. */
	static const char *const cpus[2][4] = { { "0", "0", "0", "0" }, { "0", "0", "1", "1" } };
	assert_int_equal(cfg->npinnings, 2);
	for (size_t p = 0; p < 2; p++) {
		assert_int_equal(cfg->pinnings[p].policy, PIN_EXPLICIT);
		assert_int_equal(cfg->pinnings[p].nvcpu_cpus, 4);
		for (size_t v = 0; v < 4; v++)
			assert_string_equal(cfg->pinnings[p].vcpu_cpus[v], cpus[p][v]);
	}
	assert_string_equal(baseline(cfg, "pinning"), cfg->pinnings[0].name);
	assert_int_equal(cfg->advisor.objective, OBJECTIVE_MEAN);
	assert_int_equal(cfg->strategy, STRATEGY_RACE);
	assert_string_equal(cfg->bench.vcpus, "0-1");
	assert_int_equal(cfg->nnoises, 3);
	assert_null(cfg->noises[0].vcpus);
	for (size_t i = 1; i < 3; i++) {
		assert_string_equal(cfg->noises[i].vcpus, "2-3");
		assert_null(cfg->noises[i].cpus);
	}
	assert_int_equal(cfg->noises[1].kind, NOISE_SPIN);
	assert_int_equal(cfg->noises[1].threads, 2);
	assert_string_equal(cfg->noises[2].argv.argv[0], "ping");
	assert_string_equal(cfg->noises[2].argv.argv[1], "-f");
	assert_true(cfg->reuse_guest);
	assert_true(cfg->bench.metric.direction_given);
	config_free(cfg);

	cfg = load_ok(path_of("configs/redis-tcg.yaml"));
	assert_int_equal(cfg->topology.nshapes, 2);
	assert_shape(&cfg->topology.shapes[0], "1x1x2");
	assert_shape(&cfg->topology.shapes[1], "1x2x1");
	assert_string_equal(cfg->bench.metric.name, "redis.GET");
	assert_true(cfg->bench.metric.higher_is_better);
	assert_string_equal(cfg->bench.metric.unit, "requests/s");
	assert_true(cfg->reuse_guest);
	config_free(cfg);
}

/* Another metric of a parsing kind, no direction written: the parser's stored direction decides. */
static void test_metric_direction_from_parser(void **state)
{
	const char *y = "name: t\ntopology: [1x1x1]\n"
			"benchmark: {kind: sysbench, metric: latency_avg_ms}\n";
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("m.yaml", y, strlen(y), &err);
	assert_non_null(cfg);
	assert_false(cfg->bench.metric.direction_given);
	config_free(cfg);
	y = "name: t\ntopology: [1x1x1]\n"
	    "benchmark: {kind: sysbench, metric: {name: latency_avg_ms, direction: lower}}\n";
	cfg = config_parse("m.yaml", y, strlen(y), &err);
	assert_non_null(cfg);
	assert_true(cfg->bench.metric.direction_given);
	assert_false(cfg->bench.metric.higher_is_better);
	config_free(cfg);
	y = "name: t\ntopology: [1x1x1]\nbenchmark: {kind: sysbench}\n";
	cfg = config_parse("m.yaml", y, strlen(y), &err);
	assert_non_null(cfg);
	assert_true(cfg->bench.metric.direction_given);
	config_free(cfg);
}

static void test_kernel_build(void **state)
{
	struct sweep_config *cfg = load_ok(path_of("configs/kernel-build.yaml"));
	assert_int_equal(cfg->arch, ARCH_PPC64);
	assert_int_equal(cfg->topology.nshapes, 1);
	assert_shape(&cfg->topology.shapes[0], "8x1x1");
	assert_int_equal(cfg->npinnings, 1);
	const struct pinning *p = &cfg->pinnings[0];
	assert_int_equal(p->policy, PIN_EXPLICIT);
	assert_int_equal(p->nvcpu_cpus, 8);
	assert_string_equal(p->vcpu_cpus[7], "0");
	assert_string_equal(p->emulator_cpus, "0");
	const struct knob_factor *k = knob(cfg, "kvm_hv.dynamic_mt_modes");
	assert_int_equal(k->nvalues, 2);
	assert_string_equal(k->values[0], "0");
	assert_string_equal(k->values[1], "6");
	assert_string_equal(knob(cfg, "kvm_hv.target_smt_mode")->values[0], "0");
	assert_int_equal(cfg->nnoises, 1);
	assert_int_equal(cfg->noises[0].kind, NOISE_GUEST);
	assert_string_equal(cfg->noises[0].cpus, "0");
	assert_true(cfg->noises[0].argv.argc > 0);
	assert_int_equal(cfg->bench.kind, BENCH_KERNEL_BUILD);
	assert_string_equal(cfg->bench.metric.name, "real_s");
	assert_false(cfg->bench.metric.higher_is_better);
	assert_int_equal(cfg->bench.duration, 0);
	assert_int_equal(cfg->bench.timeout, 7200);
	assert_string_equal(baseline(cfg, "kvm_hv.dynamic_mt_modes"), "6");
	config_free(cfg);
}

/* --- invalid files: exact position and message ------------------------------- */

struct bad_case {
	const char *file;
	int line, col;
	const char *key;	/* the dotted key the message names */
	const char *text;	/* a piece of what it says */
};

static const struct bad_case bad_cases[] = {
	{ "bad-unknown-top.yaml", 3, 1, "benchmrak", "did you mean 'benchmark'?" },
	{ "bad-unknown-nested.yaml", 5, 3, "benchmark.duraton", "did you mean 'duration'?" },
	{ "bad-unknown-noguess.yaml", 4, 1, "colour", "unknown key 'colour'; expected one of: name," },
	{ "bad-duplicate-key.yaml", 6, 1, "repetitions", "duplicate key 'repetitions' (first at 4:1)" },
	{ "bad-not-mapping.yaml", 1, 1, "(document)", "expected a mapping" },
	{ "bad-int-type.yaml", 4, 14, "repetitions", "expected an integer 1..1000, got 'three'" },
	{ "bad-int-quoted.yaml", 5, 13, "benchmark.duration", "quoted string '10'" },
	{ "bad-range.yaml", 5, 15, "libvirt.memory_mib", "32 is out of range; expected an integer 64..1048576" },
	{ "bad-bool.yaml", 4, 23, "collect.gang_exits", "expected true or false" },
	{ "bad-enum.yaml", 4, 8, "order", "expected randomized or sequential, got 'random'" },
	{ "bad-empty-factor.yaml", 4, 10, "pinning", "empty factor list" },
	{ "bad-missing-name.yaml", 1, 1, "name", "required key missing" },
	{ "bad-missing-kind.yaml", 3, 12, "benchmark.kind", "required key missing" },
	{ "bad-syntax.yaml", 3, 10, "YAML syntax", "did not find expected ',' or ']' (while parsing a flow sequence at 2:11)" },
	{ "bad-utf8.yaml", 2, 17, "encoding", "UTF-8 octet at byte 0xE9" },
	{ "bad-multidoc.yaml", 4, 1, "(document)", "a second YAML document" },
	{ "bad-empty.yaml", 1, 1, "(document)", "the file is empty" },
	{ "bad-tag.yaml", 4, 14, "repetitions", "tags are not supported" },
	{ "bad-shape.yaml", 2, 19, "topology[1]", "expected a shape \"SxCxT\" or \"SxDxCxT\"" },
	{ "bad-shape-range.yaml", 3, 5, "topology[0]", "every part must be 1..1024" },
	{ "bad-shape-overflow.yaml", 3, 5, "topology[0]", "shape 1024x1024x1024x1024 has 1099511627776 vCPUs; a guest has at most 1024" },
	{ "bad-shape-vcpus.yaml", 3, 5, "topology[0]", "shape 2x32x32 has 2048 vCPUs" },
	{ "bad-shape-dup.yaml", 4, 5, "topology[1]", "duplicate shape 1x2x1 (first at 3:5)" },
	{ "bad-shape-missing.yaml", 3, 5, "topology[0].cores", "required key missing" },
	{ "bad-knob-unknown.yaml", 5, 3, "host.subcore_per_core", "did you mean 'subcores_per_core'?" },
	{ "bad-knob-value.yaml", 5, 26, "host.subcores_per_core[1]", "expected 1, 2 or 4, got '3'" },
	{ "bad-knob-dup.yaml", 5, 34, "host.kvm_hv.indep_threads_mode[1]", "duplicate value Y (first at 5:31)" },
	{ "bad-prepare-string.yaml", 6, 7, "guest.prepare[0]", "write the command as a list: [prog, arg, ...]" },
	{ "bad-cpuset.yaml", 6, 18, "pinning[0].vcpus[1]", "expected a host cpuset" },
	{ "bad-pin-dup.yaml", 6, 5, "pinning[1]", "duplicate pinning 'a' (first at 5:5)" },
	{ "bad-pin-reserved.yaml", 5, 12, "pinning[0].name", "built-in policy" },
	{ "bad-noise-argv.yaml", 6, 5, "noise[1].argv", "required key missing" },
	{ "bad-noise-dup.yaml", 4, 15, "noise[1]", "duplicate noise name 'spin' (first at 4:9)" },
	{ "bad-noise-threads.yaml", 5, 21, "noise[0].threads", "only spin noise uses threads" },
	{ "bad-server-argv.yaml", 5, 3, "benchmark.server_argv", "only redis uses server_argv" },
	{ "bad-parse-syntax.yaml", 7, 10, "benchmark.parse", "unmatched closing parenthesis at offset 18" },
	{ "bad-parse-compile.yaml", 7, 10, "benchmark.parse", "missing closing parenthesis" },
	{ "bad-metric-group.yaml", 6, 11, "benchmark.metric", "'rate' is not a named group of parse (its groups: ops)" },
	{ "bad-command-no-parse.yaml", 4, 3, "benchmark.parse", "required key missing" },
	{ "bad-baseline-value.yaml", 4, 22, "baseline.topology", "2x1x1 is not in topology (1x2x1, 1x1x2)" },
	{ "bad-baseline-knob.yaml", 5, 3, "baseline.smt", "not a factor of this sweep" },
	{ "bad-seed.yaml", 4, 7, "seed", "expected an unsigned 64-bit integer, got '-1'" },
	{ "bad-seed-overflow.yaml", 4, 7, "seed", "out of range" },
	{ "bad-alias-bomb.yaml", 9, 7, "x-anchors.a4", "aliases expand to too many nodes" },
	{ "bad-recursive-alias.yaml", 2, 11, "topology[0]", "refers to a node that contains it" },
	{ "bad-undefined-alias.yaml", 4, 14, "YAML syntax", "found undefined alias" },
	{ "bad-null-name.yaml", 1, 6, "name", "expected a string, got nothing" },
	{ "bad-name-chars.yaml", 1, 7, "name", "expected 1..64 characters" },
	{ "bad-template-missing.yaml", 5, 13, "libvirt.template", "No such file or directory" },
	{ "bad-timeout.yaml", 3, 50, "benchmark.timeout", "not longer than the duration (10 s)" },
	{ "bad-generator-threads.yaml", 2, 11, "topology.threads", "required key missing" },
	{ "bad-complex-key.yaml", 4, 3, "(document)", "expected a key name, got a list" },
	{ "bad-fraction.yaml", 5, 22, "collect.max_lost_fraction", "1.5 is out of range" },
	{ "bad-argv-empty.yaml", 5, 9, "benchmark.argv", "the command is empty" },
};

static void test_invalid_fixtures(void **state)
{
	size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
	assert_true(n >= 25);
	for (size_t i = 0; i < n; i++) {
		const struct bad_case *c = &bad_cases[i];
		char path[4096], want[4400];
		snprintf(path, sizeof(path), "%s", fixture(c->file));
		struct ta_err err = { 0 };
		struct sweep_config *cfg = config_load(path, &err);
		if (cfg) {
			config_free(cfg);
			fail_msg("%s loaded but should fail", c->file);
		}
		if (err.code != EXIT_BAD_INPUT)
			fail_msg("%s: exit class %d, want %d", c->file, err.code, EXIT_BAD_INPUT);
		snprintf(want, sizeof(want), "%s:%d:%d: %s: ", path, c->line, c->col, c->key);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("%s: got \"%s\", want it to start with \"%s\"", c->file, err.msg, want);
		if (!strstr(err.msg, c->text))
			fail_msg("%s: got \"%s\", want it to contain \"%s\"", c->file, err.msg, c->text);
		/* One mistake, one error: nothing reported twice in other words. */
		if (strchr(err.msg, '\n'))
			fail_msg("%s: more than one error:\n%s", c->file, err.msg);
	}
}

static void assert_parse_error(const char *yaml, const char *want);

/* A sweep without benchmark.kind is told every kind the kind table has, from the table. */
static void test_missing_kind_lists_kinds(void **state)
{
	static const char yaml[] = "name: x\ntopology: [1x1x1]\nbenchmark: {duration: 3}\n";
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("mem.yaml", yaml, sizeof(yaml) - 1, &err);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "benchmark.kind: required key missing ("));
	for (size_t k = 0; bench_kind_names[k]; k++) {
		char word[64];
		snprintf(word, sizeof(word), "%s%s", bench_kind_names[k],
			 bench_kind_names[k + 1] ? (bench_kind_names[k + 2] ? ", " : " or ") : ")");
		if (!strstr(err.msg, word))
			fail_msg("\"%s\" does not list '%s'", err.msg, bench_kind_names[k]);
	}
}

/* Every error of a file in one pass, in file order, each with FILE:LINE:COL and its key. */
static void test_several_errors(void **state)
{
	const char *path = fixture("bad-several.yaml");
	struct ta_err err = { 0 };
	assert_null(config_load(path, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	static const char *const want[] = {
		"3:1: topology: required key missing",
		"3:14: repetitions: expected an integer 1..1000, got 'many'",
		"4:7: seed: expected an unsigned 64-bit integer, got '-1'",
		"5:7: name: expected 1..64 characters",
		"8:3: benchmark.duraton: unknown key 'duraton' (did you mean 'duration'?)",
		"10:14: host.smt[1]: duplicate value off (first at 10:9)",
		"11:31: noise[0].threads: 0 is out of range",
		"12:1: seed: duplicate key 'seed' (first at 4:1)",
	};
	const char *line = err.msg;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char prefix[4200];
		snprintf(prefix, sizeof(prefix), "%s:%s", path, want[i]);
		if (strncmp(line, prefix, strlen(prefix)))
			fail_msg("error %zu: got\n%s\nwant a line starting \"%s\"", i + 1, err.msg,
				 prefix);
		const char *nl = strchr(line, '\n');
		if (i + 1 < sizeof(want) / sizeof(want[0]))
			assert_non_null(nl);
		else
			assert_null(nl);
		line = nl ? nl + 1 : line;
	}

	/* Independent mistakes in one section are all found too. */
	assert_parse_error("name: t\ntopology: [1x1x1, 0x1x1, 1x1x1]\nbenchmark: {kind: ebizzy}\n"
			   "libvirt: {memory_mib: 1, arch: sparc, uri: [x]}\n",
			   "m.yaml:2:19: topology[1]: 0x1x1: every part must be 1..1024\n"
			   "m.yaml:2:26: topology[2]: duplicate shape 1x1x1 (first at 2:12)\n"
			   "m.yaml:4:23: libvirt.memory_mib: 1 is out of range");
	assert_parse_error("name: t\ntopology: [1x1x1]\nbenchmark: {kind: ebizzy}\n"
			   "libvirt: {memory_mib: 1, arch: sparc, uri: [x]}\n",
			   "m.yaml:4:32: libvirt.arch: expected x86_64 or ppc64, got 'sparc'\n"
			   "m.yaml:4:44: libvirt.uri: expected a string, got a list");

	/* Bounded: the first YR_MAX_ERRORS in the file, then how many more. */
	struct strbuf text = STRBUF_INIT;
	strbuf_addstr(&text, "name: t\ntopology: [1x1x1]\nbenchmark: {kind: ebizzy}\n"
		      "host: {ksm: [");
	for (int i = 0; i < 30; i++)
		strbuf_addf(&text, "%sbad%d", i ? ", " : "", i);
	strbuf_addstr(&text, "]}\n");
	err = (struct ta_err){ 0 };
	assert_null(config_parse("m.yaml", text.buf, text.len, &err));
	size_t lines = 1;
	for (const char *p = err.msg; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, YR_MAX_ERRORS + 1);
	assert_non_null(strstr(err.msg, "m.yaml:4:14: host.ksm[0]: expected 0 or 1"));
	assert_non_null(strstr(err.msg, "host.ksm[19]: expected 0 or 1"));
	assert_null(strstr(err.msg, "host.ksm[20]"));
	assert_non_null(strstr(err.msg, "\nm.yaml: 10 more errors not shown; fix these first"));
	strbuf_release(&text);
}

/*
 * The parse regex is checked by the compiler the run uses (PCRE2): Perl
 * syntax passes, and what would fail every run fails plan, quickly.
 */
static void test_parse_regex(void **state)
{
	static const char head[] = "name: t\ntopology: [1x1x1]\nbenchmark: {kind: command, "
				   "argv: [./b], metric: ops, parse: ";
	struct strbuf text = STRBUF_INIT;
	strbuf_addf(&text, "%s'(?<ops>\\d+) ops/s(?= )'}\n", head);
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("r.yaml", text.buf, text.len, &err);
	if (!cfg)
		fail_msg("\\d and lookahead refused: %s", err.msg);
	assert_int_equal(cfg->bench.nparse_groups, 1);
	assert_string_equal(cfg->bench.parse_groups[0], "ops");
	struct bench_metrics m = { 0 };
	static const char out[] = "x 41 ops/s y\n";
	assert_int_equal(benchparse_run(cfg->bench.kind, cfg->bench.parse_regex, out,
					sizeof(out) - 1, NULL, 0, &m, &err), 0);
	assert_true(bench_metrics_find(&m, "ops")->value == 41);
	bench_metrics_release(&m);
	config_free(cfg);
	strbuf_reset(&text);
	strbuf_addf(&text, "%s'((a{1,255}){1,255}){1,255}(?<ops>1)'}\n", head);
	assert_parse_error(text.buf, "m.yaml:3:61: benchmark.parse: parse regex "
			   "\"((a{1,255}){1,255}){1,255}(?<ops>1)\": regular expression is too large");
	strbuf_reset(&text);
	strbuf_addf(&text, "%s'(?<ops>\\d+) (?<ops>\\d+)'}\n", head);
	assert_parse_error(text.buf, "two named subpatterns have the same name");
	strbuf_release(&text);
}

/* A UTF-8 byte-order mark is accepted, and columns on line 1 count after it. */
static void test_byte_order_mark(void **state)
{
	static const char bom[] = "\xEF\xBB\xBF";
	struct strbuf text = STRBUF_INIT;
	strbuf_addf(&text, "%sname: bom\ntopology: [1x1x1]\nbenchmark: {kind: ebizzy}\n", bom);
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("b.yaml", text.buf, text.len, &err);
	if (!cfg)
		fail_msg("a config with a byte-order mark is refused: %s", err.msg);
	assert_string_equal(cfg->name, "bom");
	/* The text is kept as read, mark included: it is what the DB stores. */
	assert_int_equal(cfg->text_len, text.len);
	config_free(cfg);
	strbuf_reset(&text);
	strbuf_addf(&text, "%sname: 'a b'\ntopology: [1x1x1]\nbenchmark: {kind: ebizzy}\n", bom);
	assert_null(config_parse("b.yaml", text.buf, text.len, &err));
	assert_true(!strncmp(err.msg, "b.yaml:1:7: name: expected 1..64 characters",
			     strlen("b.yaml:1:7: name: expected 1..64 characters")));
	/* A mark alone is an empty file; a mark in the middle is no mark. */
	assert_null(config_parse("b.yaml", bom, 3, &err));
	assert_non_null(strstr(err.msg, "b.yaml:1:1: (document): the file is empty"));
	strbuf_reset(&text);
	strbuf_addf(&text, "name: t\n%stopology: [1x1x1]\nbenchmark: {kind: ebizzy}\n", bom);
	assert_null(config_parse("b.yaml", text.buf, text.len, &err));
	assert_non_null(strstr(err.msg, "b.yaml:2:"));
	strbuf_release(&text);
}

/* The same errors come out of config_parse on the text (except the file check). */
static void test_invalid_from_memory(void **state)
{
	size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
	for (size_t i = 0; i < n; i++) {
		const struct bad_case *c = &bad_cases[i];
		if (!strcmp(c->file, "bad-template-missing.yaml"))
			continue;
		struct strbuf text = STRBUF_INIT;
		assert_int_equal(strbuf_read_file(&text, fixture(c->file)), 0);
		struct ta_err err = { 0 };
		char want[512];
		snprintf(want, sizeof(want), "mem.yaml:%d:%d: %s: ", c->line, c->col, c->key);
		struct sweep_config *cfg = config_parse("mem.yaml", strbuf_str(&text), text.len, &err);
		strbuf_release(&text);
		if (cfg) {
			config_free(cfg);
			fail_msg("%s parsed from memory but should fail", c->file);
		}
		if (strncmp(err.msg, want, strlen(want)) != 0)
			fail_msg("%s: got \"%s\", want \"%s...\"", c->file, err.msg, want);
	}
}

static void test_unreadable(void **state)
{
	struct ta_err err = { 0 };
	assert_null(config_load(fixture("no-such-file.yaml"), &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "no-such-file.yaml: cannot read the config: "
			       "No such file or directory"));
	err = (struct ta_err){ 0 };
	assert_null(config_load(path_of("tests/fixtures/config"), &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "it is a directory, not a file"));
	/* A FIFO or a device never blocks the load: refused at once. */
	char fifo[] = "/tmp/ta-test-config-fifo.XXXXXX";
	assert_non_null(mkdtemp(fifo));
	char fpath[64];
	snprintf(fpath, sizeof(fpath), "%s/f", fifo);
	assert_int_equal(mkfifo(fpath, 0600), 0);
	alarm(30);
	err = (struct ta_err){ 0 };
	assert_null(config_load(fpath, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "cannot read the config: it is a FIFO"));
	err = (struct ta_err){ 0 };
	assert_null(config_load("/dev/zero", &err));
	assert_non_null(strstr(err.msg, "it is a character device"));
	/* A template that is a FIFO or a directory is no template. */
	struct strbuf ftext = STRBUF_INIT;
	strbuf_addf(&ftext, "name: t\ntopology: [1x1x1]\nbenchmark: {kind: ebizzy}\n"
		    "libvirt: {template: %s}\n", fpath);
	err = (struct ta_err){ 0 };
	assert_null(config_parse_flags(fixture("x.yaml"), ftext.buf, ftext.len,
				       CONFIG_CHECK_FILES, &err));
	assert_non_null(strstr(err.msg, "libvirt.template: cannot read"));
	assert_non_null(strstr(err.msg, "it is a FIFO"));
	alarm(0);
	strbuf_release(&ftext);
	unlink(fpath);
	rmdir(fifo);
	struct strbuf text = STRBUF_INIT;
	strbuf_addstr(&text, "name: t\ntopology: [1x1x1]\nbenchmark: {kind: ebizzy}\n"
		      "libvirt: {template: .}\n");
	err = (struct ta_err){ 0 };
	assert_null(config_parse_flags(fixture("x.yaml"), text.buf, text.len, CONFIG_CHECK_FILES,
				       &err));
	assert_non_null(strstr(err.msg, "x.yaml:4:21: libvirt.template: cannot read"));
	assert_non_null(strstr(err.msg, "it is a directory, not a file"));
	strbuf_release(&text);
}

/* --- valid edge cases ------------------------------------------------------------ */

static void test_defaults(void **state)
{
	struct sweep_config *cfg = load_ok(fixture("ok-minimal.yaml"));
	assert_null(cfg->description);
	assert_string_equal(cfg->uri, "qemu:///system");
	assert_int_equal(cfg->domain_type, DOMAIN_AUTO);
	assert_null(cfg->template_path);
	assert_string_equal(cfg->name_prefix, "ta-");
	assert_int_equal(cfg->arch, ARCH_HOST);
	assert_int_equal(cfg->memory_mib, 512);
	assert_int_equal(cfg->runner, RUNNER_AGENT);
	assert_int_equal(cfg->boot_timeout, 120);
	assert_int_equal(cfg->nprepare, 0);
	assert_false(cfg->reuse_guest);
	assert_int_equal(cfg->npinnings, 1);
	assert_int_equal(cfg->pinnings[0].policy, PIN_NONE);
	assert_string_equal(cfg->pinnings[0].name, "none");
	assert_int_equal(cfg->pinnings[0].line, 0);
	assert_int_equal(cfg->nnoises, 1);
	assert_int_equal(cfg->noises[0].kind, NOISE_NONE);
	assert_string_equal(cfg->noises[0].name, "none");
	assert_int_equal(cfg->bench.duration, 10);
	assert_int_equal(cfg->bench.timeout, 90);
	assert_int_equal(cfg->bench.argv.argc, 3);
	assert_string_equal(cfg->bench.argv.argv[0], "ebizzy");
	assert_string_equal(cfg->bench.argv.argv[2], "10");
	assert_int_equal(cfg->bench.server_argv.argc, 0);
	assert_string_equal(cfg->bench.metric.unit, "records/s");
	assert_null(cfg->bench.parse_regex);
	assert_int_equal(cfg->nbaseline, 0);
	assert_true(cfg->collect.gang_exits && cfg->collect.exit_reasons && cfg->collect.vcpu_stats);
	assert_int_equal(cfg->collect.buffer_kib, 8192);
	assert_true(cfg->collect.max_lost_fraction > 0.00099 &&
		    cfg->collect.max_lost_fraction < 0.00101);
	assert_int_equal(cfg->repetitions, 3);
	assert_int_equal(cfg->order, ORDER_RANDOMIZED);
	assert_false(cfg->seed_given);
	assert_int_equal(cfg->strategy, STRATEGY_FULL);
	assert_true(cfg->files_checked);
	config_free(cfg);
}

/* Parses line with cfg's regex (through the benchmark parser) and checks metric `name`. */
static void assert_group(const struct sweep_config *cfg, const char *line, const char *name,
			 double want)
{
	struct bench_metrics m = { 0 };
	struct ta_err err = { 0 };
	if (benchparse_run(BENCH_COMMAND, cfg->bench.parse_regex, line, strlen(line), NULL, 0,
			   &m, &err) < 0)
		fail_msg("benchparse_run: %s", err.msg);
	const struct bench_metric *got = bench_metrics_find(&m, name);
	if (!got)
		fail_msg("no group %s", name);
	assert_true(got->value == want);
	bench_metrics_release(&m);
}

static void test_forms(void **state)
{
	struct sweep_config *cfg = load_ok(fixture("ok-forms.yaml"));
	assert_string_equal(cfg->name, "forms.v1_x");
	assert_string_equal(cfg->description, "");
	assert_int_equal(cfg->arch, ARCH_PPC64);
	assert_int_equal(cfg->domain_type, DOMAIN_QEMU);
	assert_string_equal(cfg->uri, "test:///default");
	assert_int_equal(cfg->runner, RUNNER_HOST);
	assert_true(cfg->reuse_guest);
	assert_int_equal(cfg->nprepare, 2);
	assert_string_equal(cfg->prepare[0].argv[1], "42");	/* a number as written */
	/* Shape strings and mappings, with and without dies. */
	const struct topology_spec *t = &cfg->topology;
	assert_int_equal(t->nshapes, 4);
	assert_shape(&t->shapes[0], "2x1x2");
	assert_false(t->shapes[0].dies_given);
	assert_int_equal(t->shapes[0].dies, 1);
	assert_shape(&t->shapes[1], "1x2x2x1");
	assert_true(t->shapes[1].dies_given);
	assert_int_equal(t->shapes[1].dies, 2);
	assert_int_equal(shape_vcpus(&t->shapes[1]), 4);
	assert_shape(&t->shapes[2], "1x4x1");
	assert_int_equal(t->shapes[2].line, 16);
	assert_int_equal(t->shapes[2].col, 5);
	assert_shape(&t->shapes[3], "2x2x1x1");
	/* A scalar is a one-item list. */
	assert_int_equal(cfg->npinnings, 1);
	assert_int_equal(cfg->pinnings[0].policy, PIN_SPREAD);
	assert_int_equal(cfg->nnoises, 1);
	assert_int_equal(cfg->noises[0].kind, NOISE_COMMAND);
	assert_string_equal(cfg->noises[0].name, "command");
	assert_string_equal(cfg->noises[0].cpus, "0-3,^2");
	/* Knob values normalised. */
	assert_string_equal(knob(cfg, "smt")->values[0], "on");
	assert_string_equal(knob(cfg, "subcores_per_core")->values[0], "4");
	const struct knob_factor *k = knob(cfg, "kvm_hv.indep_threads_mode");
	assert_string_equal(k->values[0], "Y");
	assert_string_equal(k->values[1], "N");
	k = knob(cfg, "kvm_hv.one_vm_per_core");
	assert_string_equal(k->values[0], "Y");
	assert_string_equal(k->values[1], "N");
	assert_string_equal(knob(cfg, "kvm_hv.dynamic_mt_modes")->values[0], "6");
	assert_string_equal(knob(cfg, "thp")->values[0], "always");
	assert_string_equal(cfg->knobs[0].name, "smt");	/* in the order written */
	/* Command benchmark: the named groups map to the right captures. */
	assert_int_equal(cfg->bench.kind, BENCH_COMMAND);
	assert_string_equal(cfg->bench.argv.argv[2], "7");
	assert_int_equal(cfg->bench.nparse_groups, 3);
	assert_null(cfg->bench.parse_groups[0]);
	assert_string_equal(cfg->bench.parse_groups[1], "ops");
	assert_string_equal(cfg->bench.parse_groups[2], "lat");
	assert_group(cfg, "sum: 12.5 (ops/s) (7)", "ops", 12.5);
	assert_group(cfg, "total: 3 (ops/s) (250)", "lat", 250);
	assert_false(cfg->bench.metric.higher_is_better);
	assert_string_equal(cfg->bench.metric.unit, "ops/s");
	/* Baseline values compared canonically. */
	assert_string_equal(baseline(cfg, "topology"), "1x4x1");
	assert_string_equal(baseline(cfg, "smt"), "on");
	assert_string_equal(baseline(cfg, "kvm_hv.indep_threads_mode"), "Y");
	assert_false(cfg->collect.gang_exits);
	assert_int_equal(cfg->collect.buffer_kib, 64);
	assert_true(cfg->collect.max_lost_fraction == 0.0);
	assert_true(cfg->seed_given);
	assert_true(cfg->seed == UINT64_MAX);
	assert_int_equal(cfg->order, ORDER_SEQUENTIAL);
	config_free(cfg);
}

static void test_generator(void **state)
{
	struct sweep_config *cfg = load_ok(fixture("ok-generator.yaml"));
	const struct topology_spec *t = &cfg->topology;
	assert_true(t->generated);
	assert_int_equal(t->nshapes, 0);
	assert_int_equal(t->nvcpus, 1);
	assert_int_equal(t->vcpus[0], 8);
	assert_int_equal(t->nthreads, 4);
	assert_int_equal(t->threads[3], 8);
	assert_int_equal(t->nsockets, 2);
	assert_string_equal(baseline(cfg, "topology"), "2x2x2");
	assert_int_equal(cfg->bench.timeout, 7200);
	assert_false(cfg->bench.metric.higher_is_better);
	config_free(cfg);

	/* Written with dies = 1, the baseline still names the shape as plan keys it. */
	static const char yaml[] = "name: g\ntopology: {vcpus: 4, threads: 2}\n"
				   "benchmark: {kind: ebizzy}\nbaseline: {topology: 2x1x1x2}\n";
	struct ta_err err = { 0 };
	cfg = config_parse("g.yaml", yaml, strlen(yaml), &err);
	assert_non_null(cfg);
	assert_string_equal(baseline(cfg, "topology"), "2x1x2");
	config_free(cfg);
}

/*
 * The template is resolved against the config's directory; it must exist
 * when loading a file, not when replaying stored text.
 */
static void test_template(void **state)
{
	struct sweep_config *cfg = load_ok(fixture("ok-template.yaml"));
	assert_non_null(cfg->template_path);
	assert_string_equal(cfg->template_path, fixture("ok-template.xml"));
	assert_int_equal(access(cfg->template_path, R_OK), 0);
	config_free(cfg);

	struct strbuf text = STRBUF_INIT;
	const char *path = fixture("bad-template-missing.yaml");
	assert_int_equal(strbuf_read_file(&text, path), 0);
	struct ta_err err = { 0 };
	cfg = config_parse(path, strbuf_str(&text), text.len, &err);
	assert_non_null(cfg);
	assert_false(cfg->files_checked);
	assert_string_equal(cfg->template_path, fixture("no-such-domain.xml"));
	config_free(cfg);
	cfg = config_parse_flags(path, strbuf_str(&text), text.len, CONFIG_CHECK_FILES, &err);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "No such file or directory"));
	strbuf_release(&text);
}

/* config_parse on the text gives exactly what config_load gives. */
static void test_parse_equals_load(void **state)
{
	static const char *const files[] = {
		"configs/quickstart.yaml", "configs/ebizzy-power8.yaml",
		"configs/redis-power8.yaml", "configs/kernel-build.yaml",
		"tests/fixtures/config/ok-minimal.yaml", "tests/fixtures/config/ok-forms.yaml",
		"tests/fixtures/config/ok-generator.yaml", "tests/fixtures/config/ok-template.yaml",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s", path_of(files[i]));
		struct sweep_config *a = load_ok(path);
		/* An exact-size copy without a terminator: nothing may read past len. */
		struct strbuf text = STRBUF_INIT;
		assert_int_equal(strbuf_read_file(&text, path), 0);
		char *copy = malloc(text.len ? text.len : 1);
		memcpy(copy, text.buf, text.len);
		struct ta_err err = { 0 };
		struct sweep_config *b = config_parse(path, copy, text.len, &err);
		if (!b)
			fail_msg("%s from memory: %s", files[i], err.msg);
		struct strbuf da = STRBUF_INIT, db = STRBUF_INIT;
		config_dump(a, &da);
		config_dump(b, &db);
		assert_string_equal(strbuf_str(&da), strbuf_str(&db));
		assert_true(da.len > 200);
		assert_int_equal(b->text_len, text.len);
		assert_memory_equal(b->text, text.buf, text.len);
		assert_int_equal(b->text[b->text_len], '\0');
		strbuf_release(&da);
		strbuf_release(&db);
		strbuf_release(&text);
		free(copy);
		config_free(a);
		config_free(b);
	}
}

/* Small documents from memory: rules that need no fixture file. */
static void assert_parse_error(const char *yaml, const char *want)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("m.yaml", yaml, strlen(yaml), &err);
	if (cfg) {
		config_free(cfg);
		fail_msg("parsed but should fail with \"%s\":\n%s", want, yaml);
	}
	if (!strstr(err.msg, want))
		fail_msg("got \"%s\", want \"%s\"", err.msg, want);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
}

#define HEAD "name: t\ntopology: [1x1x1]\n"

/* strategy: race and its race.first_test: defaults, values, and the rules. */
static void test_race_keys(void **state)
{
	(void)state;
	struct ta_err err = { 0 };
	const char *yaml = HEAD "benchmark: {kind: ebizzy}\nrepetitions: 10\nstrategy: race\n";
	struct sweep_config *cfg = config_parse("r.yaml", yaml, strlen(yaml), &err);
	assert_non_null(cfg);
	assert_int_equal(cfg->strategy, STRATEGY_RACE);
	assert_int_equal(cfg->race_first_test, 3);
	struct strbuf canon = STRBUF_INIT;
	config_dump(cfg, &canon);
	assert_non_null(strstr(strbuf_str(&canon), "strategy: race\nrace.first_test: 3\n"));
	strbuf_release(&canon);
	config_free(cfg);
	yaml = HEAD "benchmark: {kind: ebizzy}\nrepetitions: 10\nrace: {first_test: 5}\n"
	       "strategy: race\n";
	cfg = config_parse("r.yaml", yaml, strlen(yaml), &err);
	assert_non_null(cfg);
	assert_int_equal(cfg->race_first_test, 5);
	config_free(cfg);

	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nrace: {first_test: 4}\n",
			   "race: only a raced sweep has race settings");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nstrategy: race\nrace: {first_test: 1}\n",
			   "race.first_test: 1 is out of range");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nstrategy: race\nrace: {first_test: 4}\n",
			   "is more than the 3 repetitions");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nstrategy: race\nrace: {first: 4}\n",
			   "race.first: unknown key 'first'");
}

static void test_rules(void **state)
{
	/* A deeper bomb than the fixture is refused just as fast. */
	struct strbuf bomb = STRBUF_INIT;
	strbuf_addstr(&bomb, HEAD "benchmark: {kind: ebizzy}\nx:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 30; i++) {
		strbuf_addf(&bomb, "  a%d: &a%d [", i, i);
		for (int j = 0; j < 10; j++)
			strbuf_addf(&bomb, "%s*a%d", j ? ", " : "", i - 1);
		strbuf_addstr(&bomb, "]\n");
	}
	assert_parse_error(strbuf_str(&bomb), "m.yaml:9:7: x.a4: aliases expand to too many nodes");
	strbuf_release(&bomb);
	/* 90 000 anchors (libyaml's loader takes minutes on them) or 20 000
	 * aliases: counted and refused before the loader sees them. */
	struct strbuf many = STRBUF_INIT;
	strbuf_addstr(&many, HEAD "benchmark: {kind: ebizzy}\nx: [");
	for (int i = 0; i < 90000; i++)
		strbuf_addf(&many, "%s&a%d 1", i ? ", " : "", i);
	strbuf_addstr(&many, "]\n");
	alarm(60);
	assert_parse_error(strbuf_str(&many), "more than 1000 anchors (&a1000 is one too many)");
	strbuf_reset(&many);
	strbuf_addstr(&many, HEAD "benchmark: {kind: ebizzy}\ny: &y 1\nx: [");
	for (int i = 0; i < 20000; i++)
		strbuf_addf(&many, "%s*y", i ? ", " : "");
	strbuf_addstr(&many, "]\n");
	assert_parse_error(strbuf_str(&many), "more than 10000 aliases");
	alarm(0);
	strbuf_release(&many);

	assert_parse_error(HEAD "benchmark: {kind: command, argv: [x], parse: '(?<n>[0-9]+)'}\n",
			   "benchmark.metric: required key missing");
	assert_parse_error(HEAD "benchmark: {kind: command, metric: n, parse: '(?<n>[0-9]+)'}\n",
			   "benchmark.argv: required key missing");
	assert_parse_error(HEAD "benchmark: {kind: command, argv: [x], metric: n, parse: '[0-9]+'}\n",
			   "no named group");
	assert_parse_error(HEAD "benchmark: {kind: command, argv: [x], metric: n, "
			   "parse: '(?<n>a)(?<n>b)'}\n", "two named subpatterns have the same name");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy, parse: 'x'}\n", "only kind command uses parse");
	/* In-guest loads and benchmark pinning (guest vCPUs). */
	assert_parse_error(HEAD "benchmark: {kind: ebizzy, vcpus: \"1-0\"}\n",
			   "benchmark.vcpus: expected guest vCPUs like");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy, vcpus: 1}\nguest: {runner: host}\n",
			   "benchmark.vcpus: guest vCPUs need the agent runner");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nnoise: [{kind: spin, cpus: \"0\", vcpus: \"1\"}]\n",
			   "noise[0].vcpus: a load runs either on host cpus or inside the guest");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nnoise: [{kind: guest, argv: [x], vcpus: \"1\"}]\n",
			   "noise[0].vcpus: only spin and command loads run inside the measured guest");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nnoise: [{kind: spin, vcpus: x}]\n",
			   "noise[0].vcpus: expected guest vCPUs");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nguest: {runner: host, host_baseline: true}\n",
			   "guest.host_baseline: with runner host every run is on the host already");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy, argv: ebizzy -S 5}\n",
			   "benchmark.argv: write the command as a list");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy, metric: {direction: lower}}\n",
			   "benchmark.metric.name: required key missing");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy, metric: {name: x, direction: up}}\n",
			   "expected higher or lower, got 'up'");
	assert_parse_error(HEAD "benchmark: {kind: bizzy}\n", "(did you mean 'ebizzy'?)");
	assert_parse_error(HEAD "benchmark: ebizzy\n", "benchmark: expected a mapping");
	assert_parse_error("name: t\nbenchmark: {kind: ebizzy}\n", "m.yaml:1:1: topology: required key missing");
	assert_parse_error("name: t\ntopology: [1x1x1]\n", "m.yaml:1:1: benchmark: required key missing");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nnoise: [{kind: none, cpus: \"1\"}]\n",
			   "noise kind none takes no cpus");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nnoise: [{kind: spin, argv: [x]}]\n",
			   "only command and guest noise use argv");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nnoise: guest\n", "needs a command");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nnoise: [{cpus: \"1\"}]\n",
			   "noise[0].kind: required key missing");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\npinning: [{name: p}]\n",
			   "pinning[0].vcpus: required key missing");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\npinning: [{name: p, vcpus: \"0\"}]\n",
			   "one host cpuset per vCPU");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\npinning: [{name: p, vcpus: [\"0\"], emulator: x}]\n",
			   "pinning[0].emulator: expected a host cpuset");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\npinning: tight\n", "expected none, compact or spread");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {smt: []}\n", "host.smt: empty factor list");
	/* Spellings of one value are one value: SMT 1 is SMT off, 0x2 is 2, yes is Y. */
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {smt: [\"off\", \"1\"]}\n",
			   "m.yaml:4:21: host.smt[1]: duplicate value off (first at 4:14)");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {subcores_per_core: [2, 0x2]}\n",
			   "host.subcores_per_core[1]: duplicate value 2");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {ksm: [on, 1]}\n",
			   "host.ksm[1]: duplicate value 1");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {kvm_hv.one_vm_per_core: [yes, Y]}\n",
			   "host.kvm_hv.one_vm_per_core[1]: duplicate value Y");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {smt: [{a: 1}]}\n", "host.smt[0]: expected off, on");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {kvm_hv.dynamic_mt_modes: [1]}\n",
			   "expected 0, 2, 4 or 6, got '1'");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {thp: [sometimes]}\n",
			   "expected always, madvise or never");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nhost: {smt: [off]}\nbaseline: {smt: on}\n",
			   "baseline.smt: on is not one of this sweep's values (off)");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nbaseline: {noise: spin}\n",
			   "'spin' is not one of this sweep's noise values (none)");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nbaseline: {pinning: compact}\n",
			   "'compact' is not one of this sweep's pinning values (none)");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nbaseline: {topolgy: 1x1x1}\n",
			   "did you mean 'topology'?");
	assert_parse_error("name: t\ntopology: {vcpus: [4], threads: [1]}\nbenchmark: {kind: ebizzy}\n"
			   "baseline: {topology: 1x1x2}\n", "its vCPU count is not in vcpus");
	assert_parse_error("name: t\ntopology: {vcpus: [4], threads: [1]}\nbenchmark: {kind: ebizzy}\n"
			   "baseline: {topology: 1x2x2x1}\n", "the generator makes shapes with one die");
	assert_parse_error("name: t\ntopology: {vcpus: [2, 2], threads: [1]}\nbenchmark: {kind: ebizzy}\n",
			   "topology.vcpus[1]: duplicate value 2");
	assert_parse_error("name: t\ntopology: {vcpus: [0], threads: [1]}\nbenchmark: {kind: ebizzy}\n",
			   "topology.vcpus[0]: 0 is out of range");
	assert_parse_error("name: t\ntopology: [1x0x1]\nbenchmark: {kind: ebizzy}\n", "every part must be 1..1024");
	assert_parse_error("name: t\ntopology: [1x1x1x1x1]\nbenchmark: {kind: ebizzy}\n", "expected a shape");
	assert_parse_error("name: t\ntopology: [{sockets: 1, cores: 1, threads: 1, dies: 0}]\n"
			   "benchmark: {kind: ebizzy}\n", "topology[0].dies: 0 is out of range");
	assert_parse_error("name: t\ntopology: [{sockets: 1, cores: 1, thread: 1}]\n"
			   "benchmark: {kind: ebizzy}\n", "did you mean 'threads'?");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nlibvirt: {arch: ppc64le}\n",
			   "expected x86_64 or ppc64, got 'ppc64le' (did you mean 'ppc64'?)");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nlibvirt: {name_prefix: a.b}\n",
			   "libvirt.name_prefix: expected 1..32 characters");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nstrategy: greedy\n", "expected full");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\ndescription: \"a\\0b\"\n", "contains a NUL character");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\ncollect: {buffer_kib: 63}\n", "63 is out of range");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nguest: {boot_timeout: 3601}\n", "3601 is out of range");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nguest: {prepare: [[\"\", x]]}\n", "the program name is empty");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nrepetitions: 1.5\n", "expected an integer 1..1000, got '1.5'");
	char deep[200];
	memset(deep, '[', 70);
	memset(deep + 70, ']', 70);
	deep[140] = '\0';
	assert_parse_error(deep, "nested more than 64 levels deep");
	assert_parse_error(" \n\n", "the file is empty");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nlibvirt: {template: \"\"}\n",
			   "libvirt.template: cannot read '': an empty path");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\n---\n[\n", "YAML syntax");

	struct strbuf big = STRBUF_INIT;
	strbuf_addstr(&big, "name: t\nbenchmark: {kind: ebizzy}\ntopology: [1x1x1");
	for (int i = 2; i <= 1025; i++)
		strbuf_addf(&big, ", 1x1x%d", i);
	strbuf_addstr(&big, "]\n");
	assert_parse_error(strbuf_str(&big), "m.yaml:3:11: topology: 1025 values in one factor");
	strbuf_release(&big);
}

/* advisor: objective, equivalence and the environment factors, with their errors. */
static void test_advisor(void **state)
{
	(void)state;
	static const char ok[] = HEAD "benchmark: {kind: ebizzy}\nhost: {thp: [always, never]}\n"
		"noise: [none, {name: spin, kind: spin}]\n"
		"advisor: {objective: mean, equivalence: 0.05, max_failure_rate: 0.1, "
		"environment: [thp, pinning]}\n";
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("m.yaml", ok, strlen(ok), &err);
	if (!cfg)
		fail_msg("should parse: %s", err.msg);
	assert_int_equal(cfg->advisor.objective, OBJECTIVE_MEAN);
	assert_true(cfg->advisor.equivalence == 0.05);
	assert_true(cfg->advisor.max_failure_rate == 0.1);
	assert_int_equal(cfg->advisor.nenvironment, 2);
	assert_string_equal(cfg->advisor.environment[0], "thp");
	assert_string_equal(cfg->advisor.environment[1], "pinning");
	struct strbuf dump = STRBUF_INIT;
	config_dump(cfg, &dump);
	assert_non_null(strstr(dump.buf, "advisor: objective=mean equivalence=0.05 "
				       "max_failure_rate=0.1 environment=noise,thp,pinning\n"));
	strbuf_release(&dump);
	config_free(cfg);
	/* Defaults: worst case, +-2 %, failing above 1 run in 5, noise only. */
	static const char plain[] = HEAD "benchmark: {kind: ebizzy}\n";
	cfg = config_parse("m.yaml", plain, strlen(plain), &err);
	assert_non_null(cfg);
	assert_int_equal(cfg->advisor.objective, OBJECTIVE_WORST);
	assert_true(cfg->advisor.equivalence == 0.02);
	assert_true(cfg->advisor.max_failure_rate == 0.2);
	assert_int_equal(cfg->reuse_runs, 1);
	assert_int_equal(cfg->advisor.nenvironment, 0);
	config_free(cfg);
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {objective: best}\n",
			   "advisor.objective:");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {equivalence: 2}\n",
			   "advisor.equivalence: 2 is out of range");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {equivalence: x}\n",
			   "advisor.equivalence: expected a fraction");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {max_failure_rate: 1.5}\n",
			   "advisor.max_failure_rate: 1.5 is out of range");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {environment: [topology]}\n",
			   "advisor.environment[0]: 'topology' is not a factor this sweep varies");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {environment: thp}\n",
			   "advisor.environment: 'thp' is not a factor");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {environment: [noise, noise]}\n",
			   "'noise' is listed twice");
	assert_parse_error(HEAD "benchmark: {kind: ebizzy}\nadvisor: {delta: 1}\n", "advisor");
}

/* executor: the defaults, every key read, and each mistake named. */
static void test_executor(void **state)
{
	(void)state;
	static const char ok[] = HEAD "benchmark: {kind: ebizzy}\n"
		"executor: {kind: slurm, max_hosts: 8, partition: power8, shared_dir: /lab/ta,\n"
		"  node_dir: /var/tmp/ta, max_attempts: 5, poll_interval: 0.5,\n"
		"  exclude_after: 2, sbatch: [--time=02:00:00, --account=lab]}\n";
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("m.yaml", ok, strlen(ok), &err);
	if (!cfg)
		fail_msg("should parse: %s", err.msg);
	const struct executor_settings *x = &cfg->executor;
	assert_int_equal(x->kind, EXECUTOR_SLURM);
	assert_int_equal(x->max_hosts, 8);
	assert_string_equal(x->partition, "power8");
	assert_string_equal(x->shared_dir, "/lab/ta");
	assert_string_equal(x->node_dir, "/var/tmp/ta");
	assert_int_equal(x->max_attempts, 5);
	assert_int_equal(x->exclude_after, 2);
	assert_true(x->poll_interval == 0.5);
	assert_int_equal(x->sbatch.argc, 2);
	assert_string_equal(x->sbatch.argv[1], "--account=lab");
	assert_null(x->sbatch.argv[2]);
	struct strbuf dump = STRBUF_INIT;
	config_dump(cfg, &dump);
	assert_non_null(strstr(dump.buf, "executor: kind=slurm max_hosts=8 partition=power8 "
				       "shared_dir=/lab/ta node_dir=/var/tmp/ta max_attempts=5 "
				       "poll_interval=0.5 exclude_after=2\n"));
	assert_non_null(strstr(dump.buf, "executor.sbatch: [\"--time=02:00:00\", \"--account=lab\"]"));
	strbuf_release(&dump);
	config_free(cfg);
	/* ssh: the hosts as given (a user is ssh's to resolve), the ssh config. */
	static const char ssh[] = HEAD "benchmark: {kind: ebizzy}\n"
		"executor: {kind: ssh, hosts: [lab1, root@lab-2.example, lab_3],\n"
		"  ssh_config: /etc/ta/ssh.conf}\n";
	cfg = config_parse("m.yaml", ssh, strlen(ssh), &err);
	if (!cfg)
		fail_msg("should parse: %s", err.msg);
	assert_int_equal(cfg->executor.kind, EXECUTOR_SSH);
	assert_int_equal(cfg->executor.hosts.argc, 3);
	assert_string_equal(cfg->executor.hosts.argv[1], "root@lab-2.example");
	assert_string_equal(cfg->executor.ssh_config, "/etc/ta/ssh.conf");
	config_free(cfg);
	/* Defaults: this host; the Slurm settings a lab would start from. */
	static const char plain[] = HEAD "benchmark: {kind: ebizzy}\n";
	cfg = config_parse("m.yaml", plain, strlen(plain), &err);
	assert_non_null(cfg);
	assert_int_equal(cfg->executor.kind, EXECUTOR_LOCAL);
	assert_int_equal(cfg->executor.max_hosts, 4);
	assert_null(cfg->executor.shared_dir);
	assert_string_equal(cfg->executor.node_dir, "/var/lib/topoadvisor/nodes");
	assert_int_equal(cfg->executor.max_attempts, 3);
	assert_true(cfg->executor.poll_interval == 3);
	assert_int_equal(cfg->executor.exclude_after, 3);
	config_free(cfg);
	enum executor_kind k;
	assert_int_equal(config_executor_from_name("slurm", &k), 0);
	assert_int_equal(k, EXECUTOR_SLURM);
	assert_int_equal(config_executor_from_name("ssh", &k), 0);
	assert_int_equal(k, EXECUTOR_SSH);
	assert_int_equal(config_executor_from_name("sshd", &k), -1);
	assert_string_equal(config_executor_name(EXECUTOR_LOCAL), "local");

	static const struct { const char *yaml, *msg; } bad[] = {
		{ "executor: {kind: slrum}", "executor.kind: expected local, slurm or ssh, got 'slrum' "
		  "(did you mean 'slurm'?)" },
		{ "executor: {max_hosts: 0}", "executor.max_hosts: 0 is out of range" },
		/* ssh: host names only (never an ssh option), each once, and some. */
		{ "executor: {kind: ssh}", "an ssh sweep needs executor.hosts" },
		{ "executor: {kind: ssh, hosts: []}", "executor.hosts: no host given" },
		{ "executor: {hosts: [-oProxyCommand=x]}", "executor.hosts[0]: '-oProxyCommand=x' is "
		  "not a host name" },
		{ "executor: {hosts: [a, \"b c\"]}", "executor.hosts[1]: 'b c' is not a host name" },
		{ "executor: {hosts: [\"a;reboot\"]}", "'a;reboot' is not a host name" },
		{ "executor: {hosts: [u@a@b]}", "'u@a@b' is not a host name" },
		{ "executor: {hosts: [lab1, lab2, lab1]}", "executor.hosts[2]: host 'lab1' is listed twice" },
		{ "executor: {hosts: lab1}", "executor.hosts: expected a list of host names" },
		{ "executor: {ssh_config: ssh.conf}", "executor.ssh_config: 'ssh.conf' is not an "
		  "absolute path" },
		{ "executor: {shared_dir: shared}", "executor.shared_dir: 'shared' is not an "
		  "absolute path" },
		{ "executor: {node_dir: ./n}", "executor.node_dir: './n' is not an absolute path" },
		{ "executor: {max_attempts: 101}", "executor.max_attempts: 101 is out of range" },
		{ "executor: {poll_interval: 0}", "executor.poll_interval: 0 is out of range" },
		{ "executor: {partition: \"a b\"}", "executor.partition: expected 1..64" },
		{ "executor: {sbatch: --time=1}", "executor.sbatch: expected a list of sbatch options" },
		{ "executor: {sbatch: [job.sh]}", "executor.sbatch[0]: 'job.sh' is not an sbatch option" },
		{ "executor: {sbatch: [--job-name=x]}", "executor.sbatch[0]: --job-name is set by "
		  "topoadvisor" },
		{ "executor: {sbatch: [--array=1-4]}", "--array is set by topoadvisor" },
		{ "executor: {sbatch: [-Jx]}", "-J is set by topoadvisor" },
		{ "executor: {sbatch: [--output=/tmp/o]}", "--output is set by topoadvisor" },
		{ "executor: {sbatch: [--export=NONE]}", "--export is set by topoadvisor" },
		{ "executor: {nodes: 3}", "executor.nodes: unknown key 'nodes'" },
		{ "executor: slurm", "executor: expected a mapping" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, HEAD "benchmark: {kind: ebizzy}\n%s\n", bad[i].yaml);
		assert_parse_error(strbuf_str(&sb), bad[i].msg);
		strbuf_release(&sb);
	}
}

static void test_cpuset(void **state)
{
	int n = -1, top = -1;
	assert_int_equal(config_cpuset_parse("0-3,8", &n, &top), 0);
	assert_int_equal(n, 5);
	assert_int_equal(top, 8);
	assert_int_equal(config_cpuset_parse("0-7,^2,^7", &n, &top), 0);
	assert_int_equal(n, 6);
	assert_int_equal(top, 6);
	/* Bounded by what sched_setaffinity can pin to (cpu_set_t). */
	assert_int_equal(config_cpuset_parse("1023", &n, &top), 0);
	assert_int_equal(top, 1023);
	assert_int_equal(config_cpuset_parse("0-3,^2,2", &n, &top), 0);
	assert_int_equal(n, 4);		/* left to right, as libvirt reads it */
	static const char *const bad[] = { "", "-1", "3-1", "1,", ",1", "a", "1-", "^1", "0,^0",
					   "1024", "1 2", "1-2-3", "^1-2", NULL };
	for (size_t i = 0; bad[i]; i++)
		if (config_cpuset_parse(bad[i], NULL, NULL) == 0)
			fail_msg("cpuset '%s' accepted", bad[i]);
}

static void test_names(void **state)
{
	assert_string_equal(bench_kind_name(BENCH_KERNEL_BUILD), "kernel-build");
	assert_string_equal(bench_kind_name(BENCH_STRESS_NG), "stress-ng");
	assert_string_equal(config_noise_kind_name(NOISE_GUEST), "guest");
	assert_string_equal(config_domain_type_name(DOMAIN_QEMU), "qemu");
	assert_string_equal(config_arch_name(ARCH_PPC64), "ppc64");
	assert_string_equal(config_runner_name(RUNNER_HOST), "host");
	struct shape s = { .sockets = 2, .dies = 3, .cores = 4, .threads = 2 };
	assert_shape(&s, "2x4x2");
	s.dies_given = true;
	assert_shape(&s, "2x3x4x2");
	assert_int_equal(shape_vcpus(&s), 48);
}

/*
 * benchmark.metric must be one the kind's parser reports (model/bench-kind.c),
 * families included; a near miss gets a did-you-mean; an own direction lets
 * a metric of the user's own argv through.
 */
static void test_metric_declared(void **state)
{
	static const struct {
		const char *bench;
		const char *error;	/* NULL: accepted */
	} cases[] = {
		{ "{kind: sysbench, metric: event_per_s}", "sysbench reports no metric "
		  "'event_per_s' (did you mean 'events_per_s'?); it reports events_per_s, "
		  "latency_min_ms" },
		{ "{kind: ebizzy, metric: record_per_s}", "(did you mean 'records_per_s'?)" },
		{ "{kind: redis, metric: redis.GETT}", "(did you mean 'redis.GET'?)" },
		{ "{kind: redis, metric: redis.GET.p42_ms}", "redis reports no metric" },
		{ "{kind: stress-ng, metric: bogo_ops}", "it reports bogo_ops_per_s, "
		  "stress-ng.<stressor>.bogo_ops_per_s" },
		{ "{kind: redis, metric: redis.GET}", NULL },
		{ "{kind: redis, metric: redis.MSET_10_keys.p99_ms}", NULL },
		{ "{kind: redis, metric: {name: redis.mycommand, direction: higher}}", NULL },
		{ "{kind: stress-ng, metric: stress-ng.cpu-online.bogo_ops_per_s}", NULL },
		{ "{kind: sysbench, metric: latency_p99_9_ms}", NULL },
		{ "{kind: kernel-build, metric: user_s}", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char y[256];
		snprintf(y, sizeof(y), "name: t\ntopology: [1x1x1]\nbenchmark: %s\n",
			 cases[i].bench);
		if (cases[i].error) {
			assert_parse_error(y, cases[i].error);
			continue;
		}
		struct ta_err err = { 0 };
		struct sweep_config *cfg = config_parse("m.yaml", y, strlen(y), &err);
		if (!cfg)
			fail_msg("%s: %s", cases[i].bench, err.msg);
		config_free(cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quickstart),
		cmocka_unit_test(test_ebizzy),
		cmocka_unit_test(test_redis),
		cmocka_unit_test(test_tcg_studies),
		cmocka_unit_test(test_metric_direction_from_parser),
		cmocka_unit_test(test_metric_declared),
		cmocka_unit_test(test_kernel_build),
		cmocka_unit_test(test_invalid_fixtures),
		cmocka_unit_test(test_invalid_from_memory),
		cmocka_unit_test(test_missing_kind_lists_kinds),
		cmocka_unit_test(test_several_errors),
		cmocka_unit_test(test_byte_order_mark),
		cmocka_unit_test(test_parse_regex),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_generator),
		cmocka_unit_test(test_template),
		cmocka_unit_test(test_parse_equals_load),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_race_keys),
		cmocka_unit_test(test_advisor),
		cmocka_unit_test(test_executor),
		cmocka_unit_test(test_cpuset),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
