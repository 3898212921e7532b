/*
 * Unit tests of schema/db-race: the race's row, a step stored whole (its
 * eliminations delete exactly the eliminated configuration's runs from that
 * block on, a stop exactly the planned runs from that block on), the
 * pending list without eliminated configurations, and what extend uses
 * (appending runs after the others, the blocks so far, raising the maximum).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "schema/db-plan.h"
#include "schema/db-race.h"
#include "schema/db-results.h"
#include "schema/db-runs.h"

struct fx {
	char path[64];
	struct db *db;
	int64_t exp;
	int64_t cfg[3];
};

static void check(int rc, const struct ta_err *err)
{
	if (rc < 0)
		fail_msg("%s", err->msg);
}

/* Three configurations x 4 blocks in block order; blocks 0-1 ok but b's block 1 and 2 failed. */
static int setup(void **state)
{
	static struct fx f;
	struct ta_err err = { 0 };
	snprintf(f.path, sizeof(f.path), "/tmp/test-db-race.%d.db", (int)getpid());
	unlink(f.path);
	f.db = db_open(f.path, true, &err);
	check(f.db ? 0 : -1, &err);
	const char yaml[] = "name: r\n";
	struct db_experiment_new e = { .name = "r", .config_yaml = yaml, .config_len = 8,
				       .seed = 1, .primary_metric = "ops", .higher_is_better = 1 };
	check(db_experiment_insert(f.db, &e, &f.exp, &err), &err);
	static char *const keys[] = { "a", "b", "c" };
	for (int c = 0; c < 3; c++) {
		struct config_record pc = { .index = (size_t)c, .key = keys[c], .vcpus = 1,
					    .sockets = 1, .cores = 1, .threads = 1,
					    .baseline = c == 0 };
		check(db_fixture_config_add(f.db, f.exp, &pc, &f.cfg[c], &err), &err);
	}
	for (int b = 0; b < 4; b++)
		for (int c = 0; c < 3; c++) {
			struct db_fixture_run r = {
				.repetition = b, .order_index = b * 3 + c,
				.status = (b == 1 || b == 2) && c == 1 ? "failed"
					  : b < 2 ? "ok" : "planned",
				.topology_ok = -1, .lost_events = -1 };
			int64_t id;
			check(db_fixture_run_add(f.db, f.cfg[c], &r, &id, &err), &err);
			if (b < 2 && !(b == 1 && c == 1))
				check(db_fixture_metric_add(f.db, id, "ops", 100 + c, NULL,
							    METRIC_DIR_HIGHER, &err), &err);
		}
	check(db_race_start(f.db, f.exp, 2, 4, &err), &err);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	char p[80];
	unlink(f->path);
	snprintf(p, sizeof(p), "%s-wal", f->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", f->path);
	unlink(p);
	return 0;
}

/* Runs of configuration index c (any status), and those with repetition >= from. */
static size_t runs_of(struct fx *f, int c, int from)
{
	struct db_run_todo *v;
	size_t n, k = 0;
	struct ta_err err = { 0 };
	check(db_runs_list(f->db, f->exp, false, &v, &n, &err), &err);
	for (size_t i = 0; i < n; i++)
		if (v[i].configuration_id == f->cfg[c] && v[i].repetition >= from)
			k++;
	db_runs_free(v, n);
	return k;
}

static void test_race_step(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	struct db_race race;
	bool found;
	check(db_race_get(f->db, f->exp, &race, &found, &err), &err);
	assert_true(found);
	assert_int_equal(race.first_test, 2);
	assert_int_equal(race.max_blocks, 4);
	assert_int_equal(race.blocks_evaluated, 0);
	assert_null(race.stop_reason);
	db_race_release(&race);

	struct db_race_value *v;
	size_t nv;
	check(db_race_values(f->db, f->exp, "ops", &v, &nv, &err), &err);
	assert_int_equal(nv, 5);	/* the ok runs only */
	for (size_t i = 0; i < nv; i++)
		assert_true(v[i].repetition < 2 && v[i].value >= 100);
	free(v);

	/*
	 * After block 2: b falls against c; its failed block-2 run and planned
	 * block-3 run go, its failed block-1 run stays (evidence for show).
	 */
	struct db_race_elim_new el = { f->cfg[1], f->cfg[2], 0.01, 0.98 };
	check(db_race_record(f->db, f->exp, 2, &el, 1, NULL, &err), &err);
	assert_int_equal(runs_of(f, 1, 0), 2);
	assert_int_equal(runs_of(f, 1, 2), 0);
	assert_int_equal(runs_of(f, 0, 2), 2);
	assert_int_equal(runs_of(f, 2, 2), 2);
	struct db_elimination *e;
	size_t ne;
	check(db_eliminations_list(f->db, f->exp, &e, &ne, &err), &err);
	assert_int_equal(ne, 1);
	assert_string_equal(e[0].key, "b");
	assert_string_equal(e[0].against_key, "c");
	assert_int_equal(e[0].after_block, 2);
	assert_true(fabs(e[0].p - 0.01) < 1e-12 && fabs(e[0].ratio - 0.98) < 1e-12);
	db_eliminations_free(e, ne);
	/* The same elimination twice is refused, and the whole step with it. */
	assert_int_equal(db_race_record(f->db, f->exp, 3, &el, 1, "one survivor", &err), -1);
	check(db_race_get(f->db, f->exp, &race, &found, &err), &err);
	assert_int_equal(race.blocks_evaluated, 2);
	assert_null(race.stop_reason);
	db_race_release(&race);

	/* Pending: the planned runs of a and c; b's are gone or eliminated. */
	struct db_run_todo *t;
	size_t nt;
	check(db_runs_list(f->db, f->exp, true, &t, &nt, &err), &err);
	assert_int_equal(nt, 4);
	for (size_t i = 0; i < nt; i++)
		assert_int_not_equal(t[i].configuration_id, f->cfg[1]);
	db_runs_free(t, nt);

	/* A stop after block 3 drops the planned runs of block 3 on, nothing else. */
	check(db_race_record(f->db, f->exp, 3, NULL, 0, "all equivalent", &err), &err);
	assert_int_equal(runs_of(f, 0, 3), 0);
	assert_int_equal(runs_of(f, 0, 2), 1);
	check(db_race_get(f->db, f->exp, &race, &found, &err), &err);
	assert_string_equal(race.stop_reason, "all equivalent");
	assert_int_equal(race.stopped_after, 3);
	db_race_release(&race);
	int blocks;
	check(db_runs_blocks(f->db, f->exp, &blocks, &err), &err);
	assert_int_equal(blocks, 3);

	/* extend: two more blocks for a and c after every run; the race goes on. */
	struct db_run_new add[] = { { f->cfg[2], 3 }, { f->cfg[0], 3 }, { f->cfg[0], 4 },
				    { f->cfg[2], 4 } };
	check(db_runs_append(f->db, f->exp, add, 4, &err), &err);
	check(db_race_extend(f->db, f->exp, 5, &err), &err);
	check(db_runs_list(f->db, f->exp, true, &t, &nt, &err), &err);
	assert_int_equal(nt, 6);	/* block 2's planned runs of a and c, then the added */
	for (size_t i = 2; i < nt; i++) {
		assert_true(t[i].order_index > t[i - 1].order_index);
		assert_int_equal(t[i].configuration_id, add[i - 2].configuration_id);
		assert_int_equal(t[i].repetition, add[i - 2].repetition);
	}
	db_runs_free(t, nt);
	check(db_race_get(f->db, f->exp, &race, &found, &err), &err);
	assert_int_equal(race.max_blocks, 5);
	assert_null(race.stop_reason);
	db_race_release(&race);
	check(db_runs_blocks(f->db, f->exp, &blocks, &err), &err);
	assert_int_equal(blocks, 5);

	/* What rank and report read: the race and each configuration's elimination. */
	struct db_results res;
	check(db_results_load(f->db, "1", &res, &err), &err);
	assert_true(res.raced);
	assert_int_equal(res.race_max_blocks, 5);
	assert_int_equal(res.configs[1].eliminated_block, 2);
	assert_string_equal(res.configs[1].eliminated_against, "c");
	assert_int_equal(res.configs[0].eliminated_block, 0);
	db_results_release(&res);
}

/* A full experiment has no races row; recording a step for it fails. */
static void test_not_raced(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	struct db_experiment_new e = { .name = "full", .config_yaml = "name: full\n",
				       .config_len = 11, .seed = 2, .primary_metric = "ops",
				       .higher_is_better = 1 };
	int64_t id;
	check(db_experiment_insert(f->db, &e, &id, &err), &err);
	struct db_race race;
	bool found = true;
	check(db_race_get(f->db, id, &race, &found, &err), &err);
	assert_false(found);
	assert_int_equal(db_race_record(f->db, id, 2, NULL, 0, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "is not raced"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_race_step),
		cmocka_unit_test(test_not_raced),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
