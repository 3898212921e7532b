/*
 * Unit tests of the host x configuration diagnostic: the engine's rule
 * (decide/hosts.h) as a table of sweeps of known truth, and its sentence
 * (advisor/hostfx.c).  No interaction: no finding about the hosts, however
 * the leaders per host fall; an interaction shown: the finding.  Failures
 * are outcomes, blocks on two hosts and eliminated decisions are left out,
 * effects are within blocks (a host twice as fast changes nothing).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advisor/hostfx.h"
#include "decide/hosts.h"
#include "decide/stats.h"
#include "util/strbuf.h"

#define ND 3
#define NB 8
#define NL 2

/* ND decisions x NL levels x NB blocks; block b on host b % 2. */
struct sweep {
	struct decide_option opts[ND];
	struct decide_config configs[ND * NL];
	struct decide_run runs[ND * NL * NB];
	struct decide_input in;
	size_t block_host[NB];
};

/*
 * value(d, l, b): the metric (0: the run failed); the second host's blocks
 * run twice as fast (the blocks cancel it).
 */
static void build(struct sweep *s, double (*value)(int d, int l, int b, uint64_t seed),
		  uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	static const char *const keys[ND] = { "a", "b", "c" };
	for (int d = 0; d < ND; d++)
		s->opts[d].key = keys[d];
	size_t n = 0;
	for (int d = 0; d < ND; d++)
		for (int l = 0; l < NL; l++) {
			size_t c = (size_t)(d * NL + l);
			s->configs[c] = (struct decide_config){ (size_t)d, (size_t)l };
			for (int b = 0; b < NB; b++) {
				double v = value(d, l, b, seed) * (b % 2 ? 2 : 1);
				s->runs[n++] = (struct decide_run){
					.config = c, .block = b, .order = (int)n,
					.status = v > 0 ? DECIDE_RUN_OK : DECIDE_RUN_FAILED,
					.value = v, .gang = NAN };
			}
		}
	for (int b = 0; b < NB; b++)
		s->block_host[b] = (size_t)(b % 2);
	s->in = (struct decide_input){ .decisions = s->opts, .ndecisions = ND,
				       .configs = s->configs, .nconfigs = ND * NL,
				       .nlevels = NL, .runs = s->runs, .nruns = n, .baseline = 0,
				       .higher_is_better = true, .boot_seconds = NAN,
				       .run_seconds = NAN };
}

/* A seeded normal draw per cell: CV 5 %. */
static double noise(int d, int l, int b, uint64_t seed)
{
	struct stats_rng r;
	stats_rng_seed(&r, seed * 1000003u + (uint64_t)(d * 97 + l * 13 + b));
	return exp(0.05 * stats_rng_normal(&r));
}

static double equal(int d, int l, int b, uint64_t seed)
{
	return 100 * noise(d, l, b, seed);
}

/* b 10 % better everywhere: a main effect, no interaction. */
static double main_effect(int d, int l, int b, uint64_t seed)
{
	return (d == 1 ? 110 : 100) * noise(d, l, b, seed);
}

/* b +20 % on host 0, -20 % on host 1: the best differs by host. */
static double crossing(int d, int l, int b, uint64_t seed)
{
	double m = d == 1 ? (b % 2 ? 80 : 120) : d == 2 ? 105 : 100;
	return m * noise(d, l, b, seed);
}

/* As crossing, and b fails one run on host 1 (an outcome, the worst). */
static double crossing_failing(int d, int l, int b, uint64_t seed)
{
	return d == 1 && l == 0 && b == 3 ? 0 : crossing(d, l, b, seed);
}

/* The sentence hostfx prints for s. */
static void sentence(const struct sweep *s, struct strbuf *out, struct decide_hosts *d)
{
	static const char *const hosts[] = { "n1", "n2" };
	static const char *keys[ND];
	struct hostfx fx = { .metric = "ops", .hosts = (const char **)hosts, .keys = keys, .d = *d };
	for (size_t i = 0; i < d->ndecisions; i++)
		keys[i] = s->opts[d->decisions[i]].key;
	hostfx_text(out, &fx);
}

static void test_rule_table(void **state)
{
	(void)state;
	const struct {
		const char *name;
		double (*value)(int, int, int, uint64_t);
		bool shown, best_differs;
		const char *said;
	} rows[] = {
		{ "all equal", equal, false, false, "no interaction shown" },
		{ "a main effect only", main_effect, false, false, "no interaction shown" },
		{ "b wins on n1, loses on n2", crossing, true, true, "a finding about the hosts" },
		{ "the same, a run of b failed", crossing_failing, true, true,
		  "a finding about the hosts" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct sweep s;
		build(&s, rows[i].value, 7);
		struct decide_hosts d;
		if (!decide_hosts_compute(&s.in, s.block_host, NB, 2, DECIDE_NONE, &d))
			fail_msg("%s: not computed", rows[i].name);
		struct strbuf out = STRBUF_INIT;
		sentence(&s, &out, &d);
		if (d.shown != rows[i].shown || d.best_differs != rows[i].best_differs ||
		    !strstr(out.buf, rows[i].said))
			fail_msg("%s: shown %d, best_differs %d, p_adj %g: %s", rows[i].name, d.shown,
				 d.best_differs, d.p_adj, out.buf);
		/* Never the finding without the interaction shown. */
		if (!d.shown && strstr(out.buf, "finding about the hosts"))
			fail_msg("%s: the finding without an interaction: %s", rows[i].name, out.buf);
		assert_int_equal(d.tests, 3);		/* 3 decision pairs x 1 host pair */
		assert_int_equal(d.nblocks, NB);
		assert_int_equal(d.blocks[0], NB / 2);
		strbuf_release(&out);
		decide_hosts_release(&d);
	}
}

/*
 * Pure noise over many seeds: the leaders per host differ in most sweeps,
 * but the finding is claimed in at most about 5 % (the family's level).
 */
static void test_null_calibrated(void **state)
{
	(void)state;
	int claimed = 0, leaders_differ = 0, n = 400;
	for (int k = 0; k < n; k++) {
		struct sweep s;
		build(&s, equal, (uint64_t)k + 100);
		struct decide_hosts d;
		assert_true(decide_hosts_compute(&s.in, s.block_host, NB, 2, DECIDE_NONE, &d));
		claimed += d.best_differs;
		leaders_differ += d.best[0] != d.best[1];
		decide_hosts_release(&d);
	}
	assert_true(leaders_differ > n / 3);
	if (claimed > n * 7 / 100)
		fail_msg("the finding on %d of %d null sweeps", claimed, n);
}

static void test_effects_and_left_out(void **state)
{
	(void)state;
	struct sweep s;
	build(&s, main_effect, 3);
	struct decide_hosts d;
	assert_true(decide_hosts_compute(&s.in, s.block_host, NB, 2, DECIDE_NONE, &d));
	/* Against the baseline a, on each host: b about +10 % (host 2's x2 cancels). */
	assert_int_equal(d.reference, 0);
	for (int h = 0; h < 2; h++) {
		assert_true(fabs(expm1(d.effect[1 * 2 + h]) - 0.10) < 0.06);
		assert_true(d.effect[0 * 2 + h] == 0);
		assert_int_equal(d.best[h], 1);
	}
	decide_hosts_release(&d);
	/* A block on neither host (its runs on two) is left out. */
	s.block_host[3] = DECIDE_NONE;
	assert_true(decide_hosts_compute(&s.in, s.block_host, NB, 2, DECIDE_NONE, &d));
	assert_int_equal(d.nblocks, NB - 1);
	assert_int_equal(d.blocks[1], NB / 2 - 1);
	decide_hosts_release(&d);
	/* An eliminated decision is left out. */
	s.opts[2].elim.block = 3;
	assert_true(decide_hosts_compute(&s.in, s.block_host, NB, 2, DECIDE_NONE, &d));
	assert_int_equal(d.ndecisions, 2);
	assert_int_equal(d.tests, 1);
	decide_hosts_release(&d);
	/* One host: no diagnostic. */
	for (int b = 0; b < NB; b++)
		s.block_host[b] = 0;
	assert_false(decide_hosts_compute(&s.in, s.block_host, NB, 2, DECIDE_NONE, &d));
}

static void test_too_few_blocks(void **state)
{
	(void)state;
	struct sweep s;
	build(&s, crossing, 5);
	/* Two blocks in all, one per host: effects, no test, no finding. */
	s.in.nruns = 0;
	for (size_t i = 0; i < ND * NL * NB; i++)
		if (s.runs[i].block < 2)
			s.runs[s.in.nruns++] = s.runs[i];
	struct decide_hosts d;
	assert_true(decide_hosts_compute(&s.in, s.block_host, 2, 2, DECIDE_NONE, &d));
	assert_int_equal(d.tests, 0);
	assert_false(d.shown);
	struct strbuf out = STRBUF_INIT;
	sentence(&s, &out, &d);
	assert_non_null(strstr(out.buf, "too few blocks per host"));
	assert_null(strstr(out.buf, "finding"));
	strbuf_release(&out);
	decide_hosts_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_table),
		cmocka_unit_test(test_null_calibrated),
		cmocka_unit_test(test_effects_and_left_out),
		cmocka_unit_test(test_too_few_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
