/*
 * guest.reuse (experiments/reuse.h): which configurations share a guest,
 * the kept-guest cache the controller uses, and the boot count `plan`
 * prints, on real expanded plans (randomized, interleaved blocks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/config.h"
#include "experiments/plan.h"
#include "experiments/reuse.h"
#include "util/strbuf.h"

static const struct host_facts x86_host = { ARCH_X86_64, 2, 2, 1, 0 };
static const struct host_facts power8_host = { ARCH_PPC64, 160, 160, 8, 0 };

struct fixture {
	struct sweep_config *cfg;
	struct plan *plan;
};

static void load(struct fixture *f, const char *yaml, const struct host_facts *h)
{
	struct ta_err err = { 0 };
	f->cfg = config_parse("reuse.yaml", yaml, strlen(yaml), &err);
	if (!f->cfg)
		fail_msg("config_parse: %s", err.msg);
	f->plan = plan_expand(f->cfg, h, 7, &err);
	if (!f->plan)
		fail_msg("plan_expand: %s", err.msg);
}

static void unload(struct fixture *f)
{
	plan_free(f->plan);
	config_free(f->cfg);
}

#define SWEEP(reuse) \
	"name: r\n" \
	"guest: {runner: agent, " reuse ", host_baseline: true}\n" \
	"topology: [1x2x1, 1x1x2, 2x1x1]\n" \
	"noise: [none, {kind: spin, vcpus: \"1\"}]\n" \
	"benchmark: {kind: stress-ng, duration: 2}\n" \
	"repetitions: 3\n"

static size_t config_of(const struct plan *p, const char *key)
{
	for (size_t i = 0; i < p->nconfigs; i++)
		if (!strcmp(p->configs[i].rec.key, key))
			return i;
	fail_msg("no configuration %s", key);
	return 0;
}

/* Same shape and pinning share a group whatever the noise; the host reference has none. */
static void test_groups(void **state)
{
	struct fixture f;
	load(&f, SWEEP("reuse: true"), &x86_host);
	const struct plan *p = f.plan;
	assert_int_equal(p->nconfigs, 8);	/* 3 shapes x 2 noise + 2 host references */
	size_t a = config_of(p, "1x2x1/pin=none/noise=none");
	size_t b = config_of(p, "1x2x1/pin=none/noise=spin");
	size_t c = config_of(p, "1x1x2/pin=none/noise=spin");
	assert_int_equal(reuse_group(p, a), reuse_group(p, b));
	assert_true(reuse_group(p, a) != reuse_group(p, c));
	assert_int_equal(reuse_group(p, config_of(p, "host/pin=none/noise=none")), REUSE_NO_GROUP);
	assert_int_equal(reuse_groups(p), 3);
	unload(&f);
}

/*
 * The interleaved order alternates shapes from run to run, yet with room
 * for every group's guest a sweep boots once per group (with reuse_runs as
 * many as its blocks); with room for one
 * it boots at every change of group; without reuse once per guest run.
 */
static void test_boots(void **state)
{
	struct fixture f;
	load(&f, SWEEP("reuse: true, reuse_runs: 3"), &x86_host);
	const struct plan *p = f.plan;
	assert_int_equal(p->nruns, 24);
	size_t guest_runs = 0, changes = 0, prev = REUSE_NO_GROUP;
	for (size_t i = 0; i < p->nruns; i++) {
		size_t g = reuse_group(p, p->runs[i].config);
		if (g == REUSE_NO_GROUP)
			continue;
		guest_runs++;
		changes += g != prev;
		prev = g;
	}
	assert_int_equal(guest_runs, 18);
	assert_true(changes > 3);	/* the order really interleaves */
	/* The first boot of block 0 starts the other two groups' with it. */
	size_t ahead = 9;
	assert_int_equal(reuse_boots(p, 3, &ahead), 3);
	assert_int_equal(ahead, 2);
	assert_int_equal(reuse_boots(p, 8, &ahead), 3);
	assert_int_equal(ahead, 2);
	/* Room for one guest: every boot evicts, none can start early. */
	assert_int_equal(reuse_boots(p, 1, &ahead), changes);
	assert_int_equal(ahead, 0);
	size_t two = reuse_boots(p, 2, &ahead);
	assert_true(two >= 3 && two <= changes);
	assert_true(ahead < two);
	unload(&f);

	/* guest.reuse_runs (default 1): a boot serves at most that many blocks. */
	load(&f, SWEEP("reuse: true"), &x86_host);
	assert_int_equal(f.cfg->reuse_runs, 1);
	assert_int_equal(reuse_boots(f.plan, 3, &ahead), 9);	/* 3 groups x 3 blocks */
	assert_int_equal(ahead, 6);	/* per block, 2 with its first */
	assert_int_equal(reuse_boots(f.plan, 3, NULL), 9);
	unload(&f);
	load(&f, SWEEP("reuse: true, reuse_runs: 2"), &x86_host);
	assert_int_equal(reuse_boots(f.plan, 3, &ahead), 6);	/* blocks 0-1, then 2 */
	assert_int_equal(ahead, 4);
	unload(&f);

	load(&f, SWEEP("reuse: false"), &x86_host);
	assert_int_equal(reuse_boots(f.plan, 3, &ahead), 18);
	assert_int_equal(ahead, 0);		/* every run boots and destroys its own */
	unload(&f);
}

/*
 * Live pinning (plan->live_pin): on a host of one NUMA node a reusing
 * sweep's guests boot unpinned and take each run's pins, so one guest
 * serves every pinning of its shape; anywhere else (several nodes or
 * unknown, no reuse, the host runner, another architecture's guests) the
 * pinning stays part of the group.
 */
static void test_live_pin(void **state)
{
	static const struct {
		const char *guest;
		int nodes;
		const char *arch;	/* libvirt.arch, NULL: the host's */
		bool live;
		size_t groups, boots;
	} cases[] = {
		{ "runner: agent, reuse: true", 1, NULL, true, 2, 6 },
		{ "runner: agent, reuse: true", 0, NULL, false, 4, 12 },
		{ "runner: agent, reuse: true", 2, NULL, false, 4, 12 },
		{ "runner: agent, reuse: true, reuse_runs: 3", 1, NULL, true, 2, 2 },
		{ "runner: agent, reuse: false", 1, NULL, false, 4, 24 },
		{ "runner: host, reuse: true", 1, NULL, false, 4, 0 },
		{ "runner: agent, reuse: true", 1, "ppc64", false, 4, 12 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct host_facts h = { ARCH_X86_64, 2, 2, 1, cases[k].nodes };
		char yaml[1024];
		snprintf(yaml, sizeof(yaml), "name: r\n%s%s%s"
			 "guest: {%s}\n"
			 "topology: [1x2x1, 1x1x2]\n"
			 "pinning: [none, {name: one, vcpus: [\"0\", \"0\"]}]\n"
			 "noise: [none, {kind: spin, vcpus: \"1\"}]\n"
			 "benchmark: {kind: stress-ng, duration: 2}\n"
			 "repetitions: 3\n", cases[k].arch ? "libvirt: {arch: " : "",
			 cases[k].arch ? cases[k].arch : "", cases[k].arch ? "}\n" : "",
			 cases[k].guest);
		struct fixture f;
		load(&f, yaml, &h);
		const struct plan *p = f.plan;
		if (p->live_pin != cases[k].live || reuse_groups(p) != cases[k].groups)
			fail_msg("case %zu: live_pin %d, %zu groups", k, p->live_pin, reuse_groups(p));
		size_t a = config_of(p, "1x2x1/pin=none/noise=none");
		size_t b = config_of(p, "1x2x1/pin=one/noise=spin");
		size_t c = config_of(p, "1x1x2/pin=one/noise=spin");
		if (strstr(cases[k].guest, "agent")) {
			assert_true(reuse_group(p, a) != reuse_group(p, c));
			assert_int_equal(reuse_group(p, a) == reuse_group(p, b), cases[k].live);
		}
		size_t boots = strstr(cases[k].guest, "host") ? 0 : reuse_boots(p, 4, NULL);
		if (boots != cases[k].boots)
			fail_msg("case %zu: %zu boots, expected %zu", k, boots, cases[k].boots);
		unload(&f);
	}
}

/* reuse_runs counts blocks from the boot's own, and only with reuse. */
static void test_reuse_runs(void **state)
{
	assert_true(reuse_boot_serves(2, 2, 1));
	assert_false(reuse_boot_serves(2, 3, 1));
	assert_true(reuse_boot_serves(2, 4, 3));
	assert_false(reuse_boot_serves(2, 5, 3));
	assert_false(reuse_boot_serves(2, 1, 3));	/* an earlier block: never */
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("r.yaml", SWEEP("reuse_runs: 2"),
						strlen(SWEEP("reuse_runs: 2")), &err);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "guest.reuse_runs: counts the runs of a reused guest boot; "
				       "it needs reuse: true"));
	/* The value reaches the canonical dump (the sweep's identity) and is bounded. */
	cfg = config_parse("r.yaml", SWEEP("reuse: true, reuse_runs: 7"),
			   strlen(SWEEP("reuse: true, reuse_runs: 7")), &err);
	assert_non_null(cfg);
	assert_int_equal(cfg->reuse_runs, 7);
	struct strbuf dump = STRBUF_INIT;
	config_dump(cfg, &dump);
	assert_non_null(strstr(strbuf_str(&dump), "guest.reuse: true\nguest.reuse_runs: 7\n"));
	strbuf_release(&dump);
	config_free(cfg);
	cfg = config_parse("r.yaml", SWEEP("reuse: true, reuse_runs: 0"),
			   strlen(SWEEP("reuse: true, reuse_runs: 0")), &err);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "guest.reuse_runs: 0 is out of range"));
}

/* Memory decides how many guests are kept: half of MemAvailable, at least one, at most the groups. */
static void test_capacity(void **state)
{
	struct fixture f;
	load(&f, SWEEP("reuse: true"), &x86_host);
	long per = f.cfg->memory_mib + REUSE_GUEST_OVERHEAD_MIB;
	assert_int_equal(reuse_capacity(f.plan, 0), 1);
	assert_int_equal(reuse_capacity(f.plan, per), 1);
	assert_int_equal(reuse_capacity(f.plan, 4 * per), 2);
	assert_int_equal(reuse_capacity(f.plan, 100 * per), 3);
	unload(&f);
}

/* A knob that needs no guests running (POWER8 split-core) clears the cache when it changes. */
static void test_knob_change_clears(void **state)
{
	struct fixture f;
	load(&f, "name: r\nlibvirt: {arch: ppc64}\n"
		 "guest: {runner: agent, reuse: true, reuse_runs: 3}\n"
		 "topology: [1x2x1]\nhost: {subcores_per_core: [1, 2], smt: off}\n"
		 "benchmark: {kind: stress-ng, duration: 2}\nrepetitions: 3\n", &power8_host);
	const struct plan *p = f.plan;
	assert_int_equal(reuse_groups(p), 1);
	const char *sub = NULL;
	size_t changes = 0;
	for (size_t i = 0; i < p->nruns; i++) {
		const char *v = p->configs[p->runs[i].config].knob_values[0];
		changes += !sub || strcmp(sub, v);
		sub = v;
	}
	assert_true(changes >= 2);
	size_t ahead = 9;
	assert_int_equal(reuse_boots(p, 4, &ahead), changes);
	assert_int_equal(ahead, 0);		/* one group: nothing to boot beside it */
	assert_true(reuse_knobs_clear_guests(p, NULL, p->configs[0].knob_values));
	assert_false(reuse_knobs_clear_guests(p, p->configs[0].knob_values,
					      p->configs[0].knob_values));
	unload(&f);
}

/*
 * The cache: a hit keeps the slot; a miss fills an empty slot, then evicts
 * the least recently used; a kept guest whose blocks are used up is booted
 * again in its own slot.
 */
static void test_cache(void **state)
{
	struct reuse_cache rc;
	bool hit, evict;
	reuse_cache_init(&rc, 2);
	size_t s0 = reuse_cache_take(&rc, 10, 0, 2, &hit, &evict);
	assert_false(hit);
	assert_false(evict);
	size_t s1 = reuse_cache_take(&rc, 20, 0, 2, &hit, &evict);
	assert_false(hit);
	assert_false(evict);
	assert_true(s0 != s1);
	assert_int_equal(reuse_cache_take(&rc, 10, 1, 2, &hit, &evict), s0);
	assert_true(hit);
	assert_false(evict);
	/* 20 is now the least recently used: 30 takes its slot. */
	assert_int_equal(reuse_cache_take(&rc, 30, 1, 2, &hit, &evict), s1);
	assert_false(hit);
	assert_true(evict);
	/* Group 10 booted for block 0 serves blocks 0 and 1, not 2: a fresh boot there. */
	assert_int_equal(reuse_cache_take(&rc, 10, 2, 2, &hit, &evict), s0);
	assert_false(hit);
	assert_true(evict);
	assert_int_equal(reuse_cache_take(&rc, 10, 3, 2, &hit, &evict), s0);
	assert_true(hit);
	reuse_cache_drop(&rc, s0);
	assert_int_equal(reuse_cache_take(&rc, 40, 3, 2, &hit, &evict), s0);
	assert_false(evict);

	/* A copy answers as the original would and leaves it unchanged. */
	struct reuse_cache cp;
	reuse_cache_copy(&cp, &rc);
	assert_int_equal(reuse_cache_take(&cp, 40, 3, 2, &hit, &evict), s0);
	assert_true(hit);
	assert_int_equal(reuse_cache_take(&cp, 50, 3, 2, &hit, &evict), s1);
	assert_true(evict);
	assert_int_equal(reuse_cache_take(&cp, 60, 3, 2, &hit, &evict), s0);
	assert_true(evict);
	reuse_cache_release(&cp);
	/* In the original 30 (in s1) is still kept and 40 the most recent. */
	assert_int_equal(reuse_cache_take(&rc, 30, 3, 2, &hit, &evict), s1);
	assert_false(hit);		/* booted for block 1: used up by block 3 */
	assert_true(evict);
	assert_int_equal(reuse_cache_take(&rc, 40, 3, 2, &hit, &evict), s0);
	assert_true(hit);
	reuse_cache_release(&rc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_boots),
		cmocka_unit_test(test_live_pin),
		cmocka_unit_test(test_reuse_runs),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_knob_change_clears),
		cmocka_unit_test(test_cache),
	};
	return cmocka_run_group_tests_name("reuse", tests, NULL, NULL);
}
