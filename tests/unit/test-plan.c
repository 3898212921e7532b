/*
 * Unit tests for plan expansion: the cross product, every drop rule, the
 * baseline, the randomized block order, the estimate, and storing a plan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/config.h"
#include "experiments/plan-store.h"
#include "experiments/plan.h"
#include "model/knob-table.h"
#include "schema/db-plan.h"
#include "schema/db-results.h"

static const struct host_facts x86_host = { ARCH_X86_64, 2, 2, 1, 0 };
static const struct host_facts big_ppc_host = { ARCH_PPC64, 160, 160, 8, 0 };

static struct sweep_config *parse(const char *yaml)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("test.yaml", yaml, strlen(yaml), &err);
	if (!cfg)
		fail_msg("config_parse: %s", err.msg);
	return cfg;
}

static struct plan *expand_ok(const struct sweep_config *cfg, const struct host_facts *h,
			      uint64_t seed)
{
	struct ta_err err = { 0 };
	struct plan *p = plan_expand(cfg, h, seed, &err);
	if (!p)
		fail_msg("plan_expand: %s", err.msg);
	return p;
}

static bool has_config(const struct plan *p, const char *key)
{
	for (size_t i = 0; i < p->nconfigs; i++)
		if (!strcmp(p->configs[i].rec.key, key))
			return true;
	return false;
}

static const char *dropped_reason(const struct plan *p, const char *what)
{
	for (size_t i = 0; i < p->ndropped; i++)
		if (!strcmp(p->dropped[i].what, what))
			return p->dropped[i].reason;
	return NULL;
}

#define BENCH "benchmark: {kind: stress-ng, duration: 5}\n"

static void test_cross_product_and_keys(void **state)
{
	struct sweep_config *cfg = parse(
		"name: q\n"
		"topology: [1x2x1, 1x1x2, 2x1x1]\n"
		"noise: [none, {kind: spin, cpus: '1'}]\n"
		BENCH
		"repetitions: 3\nseed: 7\n"
		"baseline: {topology: 2x1x1, noise: none}\n");
	struct plan *p = expand_ok(cfg, &x86_host, 7);
	assert_int_equal(p->nconfigs, 6);
	assert_int_equal(p->ndropped, 0);
	assert_int_equal(p->nruns, 18);
	assert_true(has_config(p, "1x2x1/pin=none/noise=none"));
	assert_true(has_config(p, "2x1x1/pin=none/noise=spin"));
	size_t baselines = 0;
	for (size_t i = 0; i < p->nconfigs; i++)
		if (p->configs[i].rec.baseline) {
			baselines++;
			assert_string_equal(p->configs[i].rec.key, "2x1x1/pin=none/noise=none");
		}
	assert_int_equal(baselines, 1);
	plan_free(p);
	config_free(cfg);
}

/* Each repetition is one block holding every configuration exactly once. */
static void test_randomized_blocks(void **state)
{
	struct sweep_config *cfg = parse(
		"name: q\ntopology: [1x2x1, 1x1x2, 2x1x1]\n"
		"noise: [none, {kind: spin, cpus: '1'}]\n" BENCH "repetitions: 4\n");
	struct plan *a = expand_ok(cfg, &x86_host, 1);
	struct plan *b = expand_ok(cfg, &x86_host, 1);
	struct plan *c = expand_ok(cfg, &x86_host, 2);
	bool identity = true, same_ab = true, same_ac = true;
	for (size_t r = 0; r < 4; r++) {
		int seen[6] = { 0 };
		for (size_t i = 0; i < 6; i++) {
			const struct plan_run *run = &a->runs[r * 6 + i];
			assert_int_equal(run->repetition, (int)r);
			assert_int_equal(run->order, r * 6 + i);
			seen[run->config]++;
			if (run->config != i)
				identity = false;
		}
		for (size_t i = 0; i < 6; i++)
			assert_int_equal(seen[i], 1);
	}
	for (size_t i = 0; i < a->nruns; i++) {
		if (a->runs[i].config != b->runs[i].config)
			same_ab = false;
		if (a->runs[i].config != c->runs[i].config)
			same_ac = false;
	}
	assert_false(identity);		/* 24 runs in plan order by chance: ~1e-11 */
	assert_true(same_ab);		/* the seed replays the order */
	assert_false(same_ac);
	plan_free(a);
	plan_free(b);
	plan_free(c);
	config_free(cfg);
}

static void test_sequential_order(void **state)
{
	struct sweep_config *cfg = parse(
		"name: q\ntopology: [1x2x1, 2x1x1]\n" BENCH "repetitions: 2\norder: sequential\n");
	struct plan *p = expand_ok(cfg, &x86_host, 99);
	size_t want[] = { 0, 1, 0, 1 };
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(p->runs[i].config, want[i]);
	plan_free(p);
	config_free(cfg);
}

static void test_generator(void **state)
{
	struct sweep_config *cfg = parse(
		"name: g\ntopology: {vcpus: [4], threads: [1, 2, 3]}\n" BENCH);
	struct plan *p = expand_ok(cfg, &x86_host, 0);
	/* threads 1: 1x4x1 2x2x1 4x1x1; threads 2: 1x2x2 2x1x2; threads 3 dropped */
	assert_int_equal(p->nconfigs, 5);
	assert_true(has_config(p, "1x4x1/pin=none/noise=none"));
	assert_true(has_config(p, "2x1x2/pin=none/noise=none"));
	assert_non_null(strstr(dropped_reason(p, "vcpus=4/threads=3"), "do not divide"));
	for (size_t i = 0; i < p->nconfigs; i++)
		assert_int_equal(p->configs[i].rec.vcpus, 4);
	plan_free(p);
	config_free(cfg);

	cfg = parse("name: g\ntopology: {vcpus: [6], threads: [2], sockets: [1, 2]}\n" BENCH);
	p = expand_ok(cfg, &x86_host, 0);
	assert_int_equal(p->nconfigs, 1);
	assert_true(has_config(p, "1x3x2/pin=none/noise=none"));
	assert_non_null(dropped_reason(p, "vcpus=6/threads=2/sockets=2"));
	plan_free(p);
	config_free(cfg);
}

static void test_ppc64_power_of_two(void **state)
{
	struct sweep_config *cfg = parse(
		"name: p\nlibvirt: {arch: ppc64}\ntopology: [1x1x3, 1x3x1, 1x1x2, 1x1x16]\n" BENCH);
	struct plan *p = expand_ok(cfg, &big_ppc_host, 0);
	assert_int_equal(p->nconfigs, 2);
	assert_non_null(strstr(dropped_reason(p, "1x1x3"), "power of two"));
	assert_non_null(strstr(dropped_reason(p, "1x1x16"), "power of two"));
	plan_free(p);
	config_free(cfg);

	/* On x86 odd thread counts are fine. */
	cfg = parse("name: p\nlibvirt: {arch: x86_64}\ntopology: [1x1x3]\n" BENCH);
	p = expand_ok(cfg, &x86_host, 0);
	assert_int_equal(p->nconfigs, 1);
	plan_free(p);
	config_free(cfg);
}

static void test_power8_threads_per_subcore(void **state)
{
	struct sweep_config *cfg = parse(
		"name: p\nlibvirt: {arch: ppc64}\ntopology: [1x1x4, 1x4x1]\n"
		"host: {subcores_per_core: [1, 2, 4], smt: [off, on]}\n" BENCH);
	struct plan *p = expand_ok(cfg, &big_ppc_host, 0);
	/* smt on is dropped everywhere; 1x1x4 only fits 1 and 2 subcores. */
	assert_int_equal(p->nconfigs, 5);
	assert_true(has_config(p, "1x1x4/pin=none/subcores_per_core=2/smt=off/noise=none"));
	assert_false(has_config(p, "1x1x4/pin=none/subcores_per_core=4/smt=off/noise=none"));
	assert_true(has_config(p, "1x4x1/pin=none/subcores_per_core=4/smt=off/noise=none"));
	const char *why = dropped_reason(p, "1x1x4/subcores_per_core=4");
	assert_non_null(why);
	assert_non_null(strstr(why, "2 threads per subcore"));
	assert_non_null(strstr(dropped_reason(p, "subcores_per_core=1/smt=on"), "smt off"));
	plan_free(p);
	config_free(cfg);
}

static void test_pinning_rules(void **state)
{
	struct sweep_config *cfg = parse(
		"name: p\ntopology: [1x2x1, 1x4x1]\n"
		"pinning: [none, compact, {name: pair, vcpus: ['0', '1']}]\n" BENCH);
	struct plan *p = expand_ok(cfg, &x86_host, 0);
	/* 1x2x1: none, compact, pair; 1x4x1: none only. */
	assert_int_equal(p->nconfigs, 4);
	assert_true(has_config(p, "1x2x1/pin=pair/noise=none"));
	assert_true(has_config(p, "1x4x1/pin=none/noise=none"));
	assert_non_null(strstr(dropped_reason(p, "1x4x1/pin=compact"), "needs 4 host CPUs"));
	assert_non_null(strstr(dropped_reason(p, "1x4x1/pin=pair"), "2 CPU sets for 4 vCPUs"));
	/* Dropped for its pinning: the run warns about each of these. */
	for (size_t i = 0; i < p->ndropped; i++)
		assert_string_equal(p->dropped[i].pinning->name,
				    strstr(p->dropped[i].what, "compact") ? "compact" : "pair");
	plan_free(p);
	config_free(cfg);
}

/*
 * A pinning no configuration can use is a mistake, not a combination to
 * skip: plan fails naming each such pinning with every reason (a pinning
 * used by some shape is only dropped for the others, above).  With nothing
 * left to run, every reason is named, not the first only.
 */
static void test_pinning_unfit(void **state)
{
	static const struct {
		const char *pinnings;
		const char *want[3];	/* substrings of the message */
		const char *not;	/* must not appear */
	} cases[] = {
		{ "[none, {name: far, vcpus: ['0', '9']}]",
		  { "test.yaml:4:17: pinning 'far' fits no configuration",
		    "pin=far: pinning 'far' uses host CPU 9; this host has CPUs 0-1", NULL },
		  "pinning 'none'" },
		{ "[none, {name: three, vcpus: ['0', '1', '1']}, {name: far, vcpus: ['0', '9']}]",
		  { "pinning 'three' fits no configuration",
		    "1x2x1/pin=three: explicit pinning 'three' lists 3 CPU sets for 2 vCPUs",
		    "\ntest.yaml:4:" }, NULL },
		/* Everything dropped: every reason, one a line. */
		{ "[{name: three, vcpus: ['0', '1', '1']}, {name: far, vcpus: ['0', '9']}]",
		  { "no configuration can run: all 2 combinations were dropped:",
		    "\n  1x2x1/pin=three: explicit pinning 'three' lists 3 CPU sets",
		    "\n  pin=far: pinning 'far' uses host CPU 9" }, "first reason" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char yaml[512];
		snprintf(yaml, sizeof(yaml), "name: p\ntopology: [1x2x1]\nnoise: [none]\n"
			 "pinning: %s\n" BENCH, cases[i].pinnings);
		struct sweep_config *cfg = parse(yaml);
		struct ta_err err = { 0 };
		struct plan *p = plan_expand(cfg, &x86_host, 0, &err);
		if (p)
			fail_msg("case %zu: planned %zu configurations", i, p->nconfigs);
		assert_int_equal(err.code, EXIT_BAD_INPUT);
		for (size_t k = 0; k < 3 && cases[i].want[k]; k++)
			if (!strstr(err.msg, cases[i].want[k]))
				fail_msg("case %zu: no '%s' in: %s", i, cases[i].want[k], err.msg);
		if (cases[i].not && strstr(err.msg, cases[i].not))
			fail_msg("case %zu: '%s' in: %s", i, cases[i].not, err.msg);
		config_free(cfg);
	}
}

/* Planning a POWER sweep on x86 skips the checks against this host's CPUs. */
static void test_cross_host(void **state)
{
	struct sweep_config *cfg = parse(
		"name: p\nlibvirt: {arch: ppc64}\ntopology: [1x8x1]\npinning: [compact]\n"
		"noise: [{kind: spin, cpus: '40'}]\n" BENCH);
	struct plan *p = expand_ok(cfg, &x86_host, 0);
	assert_true(p->cross_host);
	assert_int_equal(p->nconfigs, 1);
	plan_free(p);
	config_free(cfg);

	cfg = parse("name: p\ntopology: [1x1x1]\nnoise: [none, {kind: spin, cpus: '40'}]\n" BENCH);
	p = expand_ok(cfg, &x86_host, 0);
	assert_false(p->cross_host);
	assert_int_equal(p->nconfigs, 1);
	assert_non_null(strstr(dropped_reason(p, "noise=spin"), "host CPU 40"));
	plan_free(p);
	config_free(cfg);
}

static void expect_plan_error(const char *yaml, const char *needle)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = parse(yaml);
	struct plan *p = plan_expand(cfg, &x86_host, 0, &err);
	if (p)
		fail_msg("plan unexpectedly succeeded for:\n%s", yaml);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	if (!strstr(err.msg, needle))
		fail_msg("error '%s' lacks '%s'", err.msg, needle);
	config_free(cfg);
}

static void test_plan_errors(void **state)
{
	expect_plan_error("name: p\ntopology: [1x4x1]\npinning: [compact]\n" BENCH,
			  "no configuration can run");
	expect_plan_error("name: p\ntopology: [1x2x1, 1x1x2]\nnoise: [none, {kind: spin}]\n"
			  BENCH "baseline: {noise: none}\n", "matches 2 decisions");
}

/*
 * The baseline is matched over decision factors: naming the topology alone
 * where noise is an environment level picks one decision (its first level
 * marked), as on configs/ebizzy-tcg.yaml with {pinning: one-cpu}.
 */
static void test_baseline_decision_only(void **state)
{
	struct sweep_config *cfg = parse(
		"name: q\ntopology: [1x2x1, 1x1x2]\nnoise: [none, {kind: spin, cpus: '1'}]\n"
		BENCH "repetitions: 2\nbaseline: {topology: 1x2x1}\n");
	struct plan *p = expand_ok(cfg, &x86_host, 7);
	size_t baselines = 0;
	for (size_t i = 0; i < p->nconfigs; i++)
		if (p->configs[i].rec.baseline) {
			baselines++;
			assert_string_equal(p->configs[i].rec.decision, "1x2x1/pin=none");
		}
	assert_int_equal(baselines, 1);
	plan_free(p);
	config_free(cfg);
}

/* A topology generator of LIST values (1..n) for vcpus and threads. */
static char *generator_yaml(int n, const char *extra)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "name: g\ntopology: {vcpus: [");
	for (int i = 1; i <= n; i++)
		strbuf_addf(&sb, "%s%d", i > 1 ? ", " : "", i);
	strbuf_addstr(&sb, "], threads: [");
	for (int i = 1; i <= n; i++)
		strbuf_addf(&sb, "%s%d", i > 1 ? ", " : "", i);
	strbuf_addf(&sb, "]}\n%s" BENCH "repetitions: 1\n", extra);
	return strbuf_detach(&sb);
}

/*
 * Big sweeps: expansion is linear (256 x 256 generator values took a
 * minute when every dropped combination was looked up in a list) and
 * capped with the limit named (1024 x 1024 never ended).
 */
static void test_big_sweeps(void **state)
{
	alarm(60);	/* far more than the fraction of a second it takes */
	char *yaml = generator_yaml(256, "");
	struct sweep_config *cfg = parse(yaml);
	struct plan *p = expand_ok(cfg, &x86_host, 1);
	/* Every (v, t) with t not dividing v is dropped once, with its reason. */
	size_t divides = 0;
	for (int v = 1; v <= 256; v++)
		for (int t = 1; t <= 256; t++)
			divides += v % t == 0;
	assert_int_equal(p->ndropped, 256 * 256 - divides);
	assert_non_null(strstr(dropped_reason(p, "vcpus=7/threads=2"), "do not divide"));
	assert_true(has_config(p, "1x1x256/pin=none/noise=none"));
	plan_free(p);
	config_free(cfg);
	free(yaml);

	yaml = generator_yaml(1024, "");
	cfg = parse(yaml);
	struct ta_err err = { 0 };
	assert_null(plan_expand(cfg, &x86_host, 1, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "the topology generator makes 1048576 combinations"));
	assert_non_null(strstr(err.msg, "at most 100000"));
	config_free(cfg);
	free(yaml);

	/* 5136 shapes x 3 pinnings x 8 noise loads: beyond the cap, also named. */
	yaml = generator_yaml(256, "noise: [none, spin, {kind: spin, name: s2}, "
			      "{kind: spin, name: s3}, {kind: spin, name: s4}, {kind: spin, "
			      "name: s5}, {kind: spin, name: s6}, {kind: spin, name: s7}]\n"
			      "pinning: [none, compact, spread]\n");
	cfg = parse(yaml);
	err = (struct ta_err){ 0 };
	struct plan *big = plan_expand(cfg, &x86_host, 1, &err);
	if (big) {
		fprintf(stderr, "planned %zu configurations\n", big->nconfigs);
		plan_free(big);
	}
	assert_null(big);
	assert_non_null(strstr(err.msg, "this sweep makes 123264 combinations"));
	assert_non_null(strstr(err.msg, "(shapes x pinnings x host knob values x noise loads)"));
	config_free(cfg);
	free(yaml);
	alarm(0);
}

static void test_baseline_on_knob(void **state)
{
	struct sweep_config *cfg = parse(
		"name: p\nlibvirt: {arch: ppc64}\ntopology: [1x1x2, 1x2x1]\n"
		"host: {subcores_per_core: [1, 2]}\n" BENCH
		"baseline: {topology: 1x1x2, subcores_per_core: 1}\n");
	struct plan *p = expand_ok(cfg, &big_ppc_host, 0);
	for (size_t i = 0; i < p->nconfigs; i++)
		assert_int_equal(p->configs[i].rec.baseline,
				 !strcmp(p->configs[i].rec.key,
					 "1x1x2/pin=none/subcores_per_core=1/noise=none"));
	plan_free(p);
	config_free(cfg);
}

/* guest.host_baseline: one host reference per noise load, never the baseline. */
static void test_host_references(void **state)
{
	struct sweep_config *cfg = parse(
		"name: h\nguest: {host_baseline: true}\ntopology: [1x2x1, 2x2x1]\n"
		"pinning: [none, compact]\nhost: {ksm: [0, 1]}\n"
		"noise: [none, {kind: spin, cpus: '1'}]\n" BENCH
		"baseline: {topology: 1x2x1, pinning: compact, ksm: 1, noise: none}\n");
	struct host_facts big = { ARCH_X86_64, 8, 8, 2, 0 };
	struct plan *p = expand_ok(cfg, &big, 1);
	/* 2 shapes x 2 pinnings x 2 ksm x 2 noise = 16 guests, + 2 host references */
	assert_int_equal(p->nconfigs, 18);
	size_t hosts = 0;
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct plan_config *c = &p->configs[i];
		if (!c->rec.host_reference)
			continue;
		hosts++;
		assert_false(c->rec.baseline);
		assert_int_equal(c->rec.vcpus, 4);		/* the largest guest */
		assert_int_equal(c->shape.sockets, 4);
		assert_string_equal(c->pinning->name, "compact");	/* the baseline's */
		char *f = config_record_json_text(&c->rec);
		assert_non_null(strstr(f, "\"runner\":\"host\""));
		assert_non_null(strstr(f, "\"ksm\":\"1\""));	/* the baseline's */
		free(f);
	}
	assert_int_equal(hosts, 2);
	assert_true(has_config(p, "host/pin=compact/ksm=1/noise=none"));
	assert_true(has_config(p, "host/pin=compact/ksm=1/noise=spin"));
	assert_int_equal(p->nruns, 18 * 3);
	plan_free(p);
	config_free(cfg);
}

static void test_store_plan(void **state)
{
	char dir[] = "/tmp/ta-test-plan.XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.db", dir);
	struct ta_err err = { 0 };
	struct sweep_config *cfg = parse(
		"name: p\nlibvirt: {arch: ppc64}\ntopology: [1x1x2, 1x2x1]\n"
		"pinning: [none, {name: pair, vcpus: ['0', '8']}]\n"
		"host: {subcores_per_core: [1, 2], kvm_hv.dynamic_mt_modes: [0, 6]}\n" BENCH
		"repetitions: 2\nbaseline: {topology: 1x1x2, subcores_per_core: 1, pinning: none, "
		"kvm_hv.dynamic_mt_modes: 6}\n");
	struct plan *p = expand_ok(cfg, &big_ppc_host, 3);
	assert_int_equal(p->nconfigs, 16);
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	struct db_experiment_new e = { .name = "p", .config_yaml = cfg->text,
				       .config_len = cfg->text_len, .seed = 3,
				       .higher_is_better = 1 };
	int64_t exp;
	assert_int_equal(db_experiment_insert(db, &e, &exp, &err), 0);
	int64_t *ids = calloc(p->nconfigs, sizeof(*ids));
	assert_int_equal(plan_store(db, exp, p, ids, &err), 0);

	struct db_config_summary *v;
	size_t n;
	assert_int_equal(db_config_summaries(db, exp, &v, &n, &err), 0);
	assert_int_equal(n, 16);
	size_t baselines = 0;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].id, ids[i]);
		assert_string_equal(v[i].rec.key, p->configs[i].rec.key);
		assert_int_equal(v[i].nruns, 2);
		assert_int_equal(v[i].npending, 2);
		baselines += v[i].rec.baseline;
	}
	assert_int_equal(baselines, 1);
	db_config_summaries_free(v, n);

	/* Typed knob columns and the factors JSON. */
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db->handle,
		"SELECT COUNT(*), SUM(subcores_per_core = 2), SUM(dynamic_mt_modes = 0), "
		"SUM(json_extract(factors, '$.\"kvm_hv.dynamic_mt_modes\"') = '6'), "
		"SUM(json_extract(factors, '$.pinning_cpus[1]') = '8'), SUM(smt IS NULL) "
		"FROM configurations WHERE experiment_id = ?", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, exp);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 16);
	assert_int_equal(sqlite3_column_int(st, 1), 8);
	assert_int_equal(sqlite3_column_int(st, 2), 8);
	assert_int_equal(sqlite3_column_int(st, 3), 8);
	assert_int_equal(sqlite3_column_int(st, 4), 8);
	assert_int_equal(sqlite3_column_int(st, 5), 16);
	sqlite3_finalize(st);

	/* Runs keep the plan's order. */
	assert_int_equal(sqlite3_prepare_v2(db->handle,
		"SELECT c.idx, r.repetition FROM runs r JOIN configurations c "
		"ON c.id = r.configuration_id ORDER BY r.order_index", -1, &st, NULL), SQLITE_OK);
	for (size_t i = 0; i < p->nruns; i++) {
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(st, 0), (int)p->runs[i].config);
		assert_int_equal(sqlite3_column_int(st, 1), p->runs[i].repetition);
	}
	sqlite3_finalize(st);

	/* Storing the same plan twice fails whole: nothing half-written. */
	assert_int_equal(plan_store(db, exp, p, NULL, &err), -1);
	assert_int_equal(sqlite3_prepare_v2(db->handle, "SELECT COUNT(*) FROM runs", -1, &st,
					    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 32);
	sqlite3_finalize(st);

	free(ids);
	db_close(db);
	plan_free(p);
	config_free(cfg);
	const char *suffix[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/p.db%s", dir, suffix[i]);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * Guest vCPUs named by benchmark.vcpus and in-guest loads must exist in
 * each shape; a host reference runs them on host CPUs of those numbers.
 */
static void test_guest_vcpus(void **state)
{
	struct sweep_config *cfg = parse(
		"name: v\ntopology: [1x1x2, 1x2x2, 4x1x1]\nguest: {host_baseline: true}\n"
		"noise: [none, {kind: spin, name: far, vcpus: \"3\"}]\n"
		"benchmark: {kind: ebizzy, vcpus: \"0-1\", duration: 2}\n");
	struct plan *p = expand_ok(cfg, &x86_host, 1);
	assert_true(has_config(p, "1x1x2/pin=none/noise=none"));
	assert_false(has_config(p, "1x1x2/pin=none/noise=far"));
	assert_non_null(strstr(dropped_reason(p, "1x1x2/noise=far"),
			       "noise 'far' runs on guest vCPU 3; the shape has 2 vCPUs"));
	assert_true(has_config(p, "1x2x2/pin=none/noise=far"));
	assert_true(has_config(p, "4x1x1/pin=none/noise=far"));
	/* This host has CPUs 0-1: the host reference cannot run vCPU 3's load. */
	assert_true(has_config(p, "host/pin=none/noise=none"));
	assert_false(has_config(p, "host/pin=none/noise=far"));
	assert_non_null(strstr(dropped_reason(p, "host/noise=far"), "host CPU 3"));
	plan_free(p);
	config_free(cfg);

	cfg = parse("name: v\ntopology: [1x1x1, 1x1x2]\n"
		    "benchmark: {kind: ebizzy, vcpus: \"1\", duration: 2}\n");
	p = expand_ok(cfg, &x86_host, 1);
	assert_int_equal(p->nconfigs, 1);
	assert_non_null(strstr(dropped_reason(p, "1x1x1"),
			       "benchmark.vcpus \"1\" needs vCPU 1; the shape has 1 vCPUs"));
	plan_free(p);
	config_free(cfg);
}

/* Removes dir/NAME and its -wal/-shm files, then dir. */
static void db_files_remove(const char *dir, const char *name)
{
	char path[256];
	const char *suffix[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix[i]);
		unlink(path);
	}
	rmdir(dir);
}

static const char *column_type(struct db *db, const char *column)
{
	static char type[32];
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db->handle, "SELECT type FROM pragma_table_info("
					    "'configurations') WHERE name = ?", -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, column, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(type, sizeof(type), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return type;
}

/*
 * Every knob with a typed column comes back from the database exactly as
 * the plan wrote it (kvm_hv.indep_threads_mode read back as 0 while its
 * column was INTEGER), and each column has the type the knob table says.
 */
static void test_knob_columns_read_back(void **state)
{
	char dir[] = "/tmp/ta-test-plan.XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.db", dir);
	struct ta_err err = { 0 };
	struct sweep_config *cfg = parse(
		"name: k\nlibvirt: {arch: ppc64}\ntopology: [1x1x2]\n"
		"host: {smt: off, subcores_per_core: 2, kvm_hv.dynamic_mt_modes: 6, "
		"kvm_hv.target_smt_mode: 4, kvm_hv.indep_threads_mode: [yes, 'off'], "
		"kvm_hv.one_vm_per_core: [true, 0]}\n" BENCH "repetitions: 1\n");
	struct plan *p = expand_ok(cfg, &big_ppc_host, 1);
	assert_int_equal(p->nconfigs, 4);
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	struct db_experiment_new e = { .name = "k", .config_yaml = cfg->text,
				       .config_len = cfg->text_len, .seed = 1,
				       .higher_is_better = 1 };
	int64_t exp;
	assert_int_equal(db_experiment_insert(db, &e, &exp, &err), 0);
	assert_int_equal(plan_store(db, exp, p, NULL, &err), 0);
	for (size_t t = 0; t < knob_count(); t++) {
		const struct knob *k = knob_at(t);
		if (k->db_column)
			assert_string_equal(column_type(db, k->db_column),
					    k->db_type == KNOB_COLUMN_INTEGER ? "INTEGER" : "TEXT");
	}
	struct db_results r;
	assert_int_equal(db_results_load(db, "k", &r, &err), 0);
	assert_int_equal(r.nconfigs, p->nconfigs);
	size_t checked = 0;
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct db_results_config *c = &r.configs[i];
		assert_string_equal(c->rec.key, p->configs[i].rec.key);
		assert_int_equal(c->rec.nknobs, cfg->nknobs);
		for (size_t k = 0; k < cfg->nknobs; k++, checked++) {
			const char *want = p->configs[i].knob_values[k];
			const char *got = config_record_knob(&c->rec, cfg->knobs[k].name);
			assert_non_null(got);
			assert_string_equal(got, want);
			/* and the typed column holds the same text */
			char sql[160];
			snprintf(sql, sizeof(sql), "SELECT CAST(%s AS TEXT) FROM configurations "
				 "WHERE id = %lld", knob_find(cfg->knobs[k].name)->db_column,
				 (long long)c->id);
			sqlite3_stmt *st;
			assert_int_equal(sqlite3_prepare_v2(db->handle, sql, -1, &st, NULL), SQLITE_OK);
			assert_int_equal(sqlite3_step(st), SQLITE_ROW);
			assert_string_equal((const char *)sqlite3_column_text(st, 0), want);
			sqlite3_finalize(st);
		}
	}
	assert_int_equal(checked, 4 * 6);
	db_results_release(&r);
	db_close(db);
	plan_free(p);
	config_free(cfg);
	db_files_remove(dir, "k.db");
}

/* Migration 4: the kvm_hv columns written under the INTEGER schema read back as Y/N. */
static void test_knob_columns_migrated(void **state)
{
	char dir[] = "/tmp/ta-test-plan.XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.db", dir);
	struct ta_err err = { 0 };
	struct db *db = db_open_at_version(path, 3, &err);
	assert_non_null(db);
	assert_string_equal(column_type(db, "indep_threads_mode"), "INTEGER");
	assert_int_equal(sqlite3_exec(db->handle,
		"INSERT INTO experiments (id, name, config_yaml, config_sha256, tool_version, seed) "
		"VALUES (1, 'm', 'name: m', 'x', '0.0.1', 1);"
		"INSERT INTO configurations (experiment_id, idx, key, vcpus, sockets, cores, threads, "
		"indep_threads_mode, one_vm_per_core, factors) VALUES "
		"(1, 0, 'a', 1, 1, 1, 1, 'Y', 0, '{}'), (1, 1, 'b', 1, 1, 1, 1, 'N', 1, '{}'), "
		"(1, 2, 'c', 1, 1, 1, 1, NULL, NULL, '{}');", NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	db = db_open(path, false, &err);
	assert_non_null(db);
	assert_string_equal(column_type(db, "indep_threads_mode"), "TEXT");
	assert_string_equal(column_type(db, "one_vm_per_core"), "TEXT");
	struct db_results r;
	assert_int_equal(db_results_load(db, "m", &r, &err), 0);
	assert_int_equal(r.nconfigs, 3);
	const char *want[3][2] = { { "Y", "N" }, { "N", "Y" }, { NULL, NULL } };
	for (size_t i = 0; i < 3; i++) {
		const char *indep = config_record_knob(&r.configs[i].rec,
						       "kvm_hv.indep_threads_mode");
		const char *one = config_record_knob(&r.configs[i].rec, "kvm_hv.one_vm_per_core");
		if (!want[i][0]) {
			assert_null(indep);
			assert_null(one);
			continue;
		}
		assert_non_null(indep);
		assert_non_null(one);
		assert_string_equal(indep, want[i][0]);
		assert_string_equal(one, want[i][1]);
	}
	db_results_release(&r);
	db_close(db);
	db_files_remove(dir, "m.db");
}

/*
 * The configuration record goes into the database and comes back whole:
 * every member (the JSON writer names them all), the key, the decision and
 * environment the plan wrote (pinning as an environment factor here), the
 * guest's arch and <cpu>.  A member added to the record but not to the
 * columns or the factors JSON fails here.
 */
static void test_record_round_trip(void **state)
{
	char dir[] = "/tmp/ta-test-plan.XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.db", dir);
	struct ta_err err = { 0 };
	struct sweep_config *cfg = parse(
		"name: r\nlibvirt: {arch: ppc64}\ntopology: [1x1x2, 1x2x1x1]\n"
		"pinning: [none, {name: pair, vcpus: ['0', '8-9'], emulator: '10'}]\n"
		"host: {subcores_per_core: [1, 2], thp: [never]}\n"
		"noise: [none, {kind: spin, cpus: '3'}]\n" BENCH
		"advisor: {environment: [pinning], objective: mean, equivalence: 0.05}\n");
	struct plan *p = expand_ok(cfg, &big_ppc_host, 3);
	assert_int_equal(p->nconfigs, 16);
	for (size_t i = 0; i < p->nconfigs; i++) {
		struct config_record *r = &p->configs[i].rec;
		r->arch = xstrdup("ppc64");
		r->cpu_mode = xstrdup("host-passthrough");
		if (i % 2)
			r->cpu_model = xstrdup("POWER8");
	}
	const struct config_record *pair = NULL;
	for (size_t i = 0; i < p->nconfigs && !pair; i++)
		if (!strcmp(p->configs[i].rec.pinning, "pair"))
			pair = &p->configs[i].rec;
	assert_non_null(pair);
	assert_string_equal(pair->key, "1x1x2/pin=pair/subcores_per_core=1/thp=never/noise=none");
	assert_string_equal(pair->decision, "1x1x2/subcores_per_core=1/thp=never");
	assert_string_equal(pair->environment, "noise=none/pinning=pair");

	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	const char *const env[] = { "pinning" };
	struct db_experiment_new e = { .name = "r", .config_yaml = cfg->text,
				       .config_len = cfg->text_len, .seed = 3,
				       .higher_is_better = 1, .objective = "mean",
				       .equivalence = 0.05, .environment = env,
				       .nenvironment = 1 };
	int64_t exp;
	assert_int_equal(db_experiment_insert(db, &e, &exp, &err), 0);
	assert_int_equal(plan_store(db, exp, p, NULL, &err), 0);
	struct db_results res;
	assert_int_equal(db_results_load(db, "r", &res, &err), 0);
	assert_true(res.exp.advisor.known);
	assert_string_equal(res.exp.advisor.objective, "mean");
	assert_true(res.exp.advisor.equivalence == 0.05);
	assert_int_equal(res.exp.advisor.nenvironment, 1);
	assert_string_equal(res.exp.advisor.environment[0], "pinning");
	assert_int_equal(res.nconfigs, p->nconfigs);
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct config_record *want = &p->configs[i].rec, *got = &res.configs[i].rec;
		char *a = config_record_json_text(want), *b = config_record_json_text(got);
		assert_string_equal(b, a);
		free(a);
		free(b);
		assert_int_equal(got->index, want->index);
		assert_string_equal(got->key, want->key);
		assert_string_equal(got->decision, want->decision);
		assert_string_equal(got->environment, want->environment);
		assert_int_equal(got->baseline, want->baseline);
	}
	db_results_release(&res);
	db_close(db);
	plan_free(p);
	config_free(cfg);
	db_files_remove(dir, "r.db");
}

/*
 * Migration 7 on rows stored before: the decision is the key without its
 * noise part, the level the noise; no arch or <cpu> (not recorded); the
 * advisor settings are the defaults for a sweep that never names
 * `advisor`, unknown for one that does.
 */
static void test_record_migrated(void **state)
{
	char dir[] = "/tmp/ta-test-plan.XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/o.db", dir);
	struct ta_err err = { 0 };
	struct db *db = db_open_at_version(path, 6, &err);
	assert_non_null(db);
	assert_int_equal(sqlite3_exec(db->handle,
		"INSERT INTO experiments (id, name, config_yaml, config_sha256, tool_version, seed) "
		"VALUES (1, 'plain', 'name: plain', 'x', '0.0.1', 1), "
		"(2, 'marked', 'name: marked\nadvisor: {environment: [thp]}', 'y', '0.0.1', 1);"
		"INSERT INTO configurations (experiment_id, idx, key, vcpus, sockets, cores, threads, "
		"pinning, noise, factors) VALUES "
		"(1, 0, '1x2x1/pin=none/thp=never/noise=spin', 2, 1, 2, 1, 'none', 'spin', "
		"'{\"topology\":\"1x2x1\",\"thp\":\"never\"}'), "
		"(2, 0, 'hand-made', 1, 1, 1, 1, 'none', 'none', '{}');",
		NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	db = db_open(path, false, &err);
	assert_non_null(db);
	struct db_results r;
	assert_int_equal(db_results_load(db, "plain", &r, &err), 0);
	assert_true(r.exp.advisor.known);
	assert_string_equal(r.exp.advisor.objective, "worst");
	assert_int_equal(r.exp.advisor.nenvironment, 0);
	const struct config_record *c = &r.configs[0].rec;
	assert_string_equal(c->decision, "1x2x1/pin=none/thp=never");
	assert_string_equal(c->environment, "noise=spin");
	assert_string_equal(config_record_knob(c, "thp"), "never");
	assert_string_equal(c->pinning_policy, "none");
	assert_null(c->arch);
	assert_null(c->cpu_mode);
	db_results_release(&r);
	assert_int_equal(db_results_load(db, "marked", &r, &err), 0);
	assert_false(r.exp.advisor.known);
	assert_string_equal(r.configs[0].rec.decision, "hand-made");
	assert_string_equal(r.configs[0].rec.environment, "noise=none");
	assert_string_equal(r.configs[0].rec.topology, "1x1x1");
	db_results_release(&r);
	db_close(db);
	db_files_remove(dir, "o.db");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guest_vcpus),
		cmocka_unit_test(test_cross_product_and_keys),
		cmocka_unit_test(test_randomized_blocks),
		cmocka_unit_test(test_sequential_order),
		cmocka_unit_test(test_generator),
		cmocka_unit_test(test_ppc64_power_of_two),
		cmocka_unit_test(test_power8_threads_per_subcore),
		cmocka_unit_test(test_pinning_rules),
		cmocka_unit_test(test_pinning_unfit),
		cmocka_unit_test(test_cross_host),
		cmocka_unit_test(test_plan_errors),
		cmocka_unit_test(test_baseline_decision_only),
		cmocka_unit_test(test_big_sweeps),
		cmocka_unit_test(test_baseline_on_knob),
		cmocka_unit_test(test_host_references),
		cmocka_unit_test(test_store_plan),
		cmocka_unit_test(test_knob_columns_read_back),
		cmocka_unit_test(test_knob_columns_migrated),
		cmocka_unit_test(test_record_round_trip),
		cmocka_unit_test(test_record_migrated),
	};
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
