/*
 * Unit tests of the readers' k-way merge (collectors/tsmerge.h): sources of
 * sorted timestamps, drained the way the readers drain them (the due source
 * runs on while tsmerge_runs_on says it stays first), must come out as one
 * sorted sequence with ties in tie-breaker order, whatever the number of
 * sources and however their times interleave (or do not: one source holding
 * everything, long runs, equal times).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/tsmerge.h"
#include "util/splitmix.h"

#define MAXSRC 9
#define MAXLEN 300

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)splitmix64_below(&rng, n);
}

static void check_merge(int nsrc, int spread)
{
	static uint64_t ts[MAXSRC][MAXLEN];
	int len[MAXSRC], pos[MAXSRC] = { 0 };
	for (int s = 0; s < nsrc; s++) {
		len[s] = (int)rnd(MAXLEN);
		uint64_t t = rnd(50);
		for (int i = 0; i < len[s]; i++)
			ts[s][i] = t += rnd((uint32_t)spread);	/* steps of 0: equal times */
	}
	struct tsmerge m;
	tsmerge_init(&m);
	for (int s = 0; s < nsrc; s++)
		if (len[s])
			tsmerge_push(&m, (uintptr_t)s, ts[s][0], (uint64_t)s);
	uint64_t last_ts = 0, last_src = 0;
	int total = 0;
	while (m.n) {
		int s = (int)tsmerge_top(&m);
		assert_int_equal(tsmerge_top_ts(&m), ts[s][pos[s]]);
		bool more;
		do {
			uint64_t t = ts[s][pos[s]];
			/* Sorted by (time, source): never before what came out last. */
			assert_true(t > last_ts || (t == last_ts && (uint64_t)s >= last_src) || !total);
			last_ts = t;
			last_src = (uint64_t)s;
			total++;
			more = ++pos[s] < len[s];
		} while (more && tsmerge_runs_on(&m, ts[s][pos[s]], (uint64_t)s));
		if (more)
			tsmerge_update_top(&m, ts[s][pos[s]], (uint64_t)s);
		else
			tsmerge_pop(&m);
	}
	int want = 0;
	for (int s = 0; s < nsrc; s++) {
		want += len[s];
		assert_int_equal(pos[s], len[s]);
	}
	assert_int_equal(total, want);
	tsmerge_release(&m);
}

static void test_merge_orders(void **state)
{
	(void)state;
	for (int round = 0; round < 400; round++)
		check_merge(1 + (int)rnd(MAXSRC), 1 + (int)rnd(round % 2 ? 3 : 1000));
}

/* The runner-up bound: a lone source runs to its end without a heap update. */
static void test_runs_on(void **state)
{
	(void)state;
	struct tsmerge m;
	tsmerge_init(&m);
	tsmerge_push(&m, 7, 100, 0);
	assert_true(tsmerge_runs_on(&m, UINT64_MAX - 1, 0));
	tsmerge_push(&m, 3, 50, 1);
	assert_int_equal(tsmerge_top(&m), 3);
	assert_true(tsmerge_runs_on(&m, 99, 1));
	assert_false(tsmerge_runs_on(&m, 100, 1));	/* a tie goes to the lower tie-breaker */
	assert_false(tsmerge_runs_on(&m, 101, 1));
	tsmerge_update_top(&m, 100, 1);
	assert_int_equal(tsmerge_top(&m), 7);
	assert_true(tsmerge_runs_on(&m, 100, 0));
	tsmerge_pop(&m);
	tsmerge_pop(&m);
	assert_int_equal(m.n, 0);
	tsmerge_push(&m, 1, 5, 5);
	tsmerge_clear(&m);
	assert_int_equal(m.n, 0);
	tsmerge_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_orders),
		cmocka_unit_test(test_runs_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
