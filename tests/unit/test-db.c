/*
 * Unit tests for the SQLite store: creation, migrations (with data kept),
 * experiment records, refusal of newer schemas, file permissions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "advisor/dbread.h"
#include "experiments/hostlock.h"
#include "schema/db-fixture.h"
#include "schema/db-plan.h"
#include "schema/db-race.h"
#include "schema/db-results.h"
#include "schema/db-runs.h"
#include "schema/db.h"
#include "util/strbuf.h"

static char dir[] = "/tmp/ta-test-db.XXXXXX";

static void db_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];
	/* Remove our own scratch directory, file by file (no shell). */
	const char *suffixes[] = { "", "-wal", "-shm" };
	const char *names[] = { "fresh.db", "old.db", "exp.db", "newer.db", "perm.db", "garbage.db",
				"dir.db", "race.db", "old-ro.db", "damaged.db", "counts.db",
				"walk.db" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t j = 0; j < 3; j++) {
			snprintf(cmd, sizeof(cmd), "%s/%s%s", dir, names[i], suffixes[j]);
			unlink(cmd);
		}
	return rmdir(dir);
}

/* Every table, view and index with its SQL, for comparing two schemas. */
static char *schema_dump(struct db *db)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db->handle,
		"SELECT type, name, sql FROM sqlite_master ORDER BY type, name", -1, &st, NULL),
		SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		strbuf_addf(&sb, "%s %s %s\n", sqlite3_column_text(st, 0),
			    sqlite3_column_text(st, 1),
			    sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
	sqlite3_finalize(st);
	return strbuf_detach(&sb);
}

static int query_int(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db->handle, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void test_fresh_database(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "fresh.db");
	assert_true(db_schema_version() >= 2);
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(query_int(db, "PRAGMA foreign_keys"), 1);
	assert_int_equal(query_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE name IN "
				   "('experiments','configurations','runs','metrics',"
				   "'exit_counts','artifacts','host_journal')"), 7);
	assert_int_equal(query_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' "
				   "AND name = 'config_metric_stats'"), 1);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db->handle, "PRAGMA journal_mode", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	db_close(db);

	/* Opening again applies nothing and keeps the version. */
	db = db_open(path, false, &err);
	assert_non_null(db);
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	db_close(db);
}

static void test_missing_database_is_bad_input(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "absent.db");
	assert_null(db_open(path, false, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "No such file"));
	assert_non_null(strstr(err.msg, "--db"));
	assert_int_equal(access(path, F_OK), -1);
}

static void test_not_a_database(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "garbage.db");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not an sqlite database\n", f);
	fclose(f);
	assert_null(db_open(path, false, &err));
	assert_int_equal(err.code, EXIT_FAILURE_RUN);
	assert_non_null(strstr(err.msg, "garbage.db"));
}

/*
 * A database whose index page is damaged: a command that writes refuses
 * it up front (quick_check), a read that meets the damage says the file is
 * damaged and how to recover; a FIFO or a directory as the database is
 * refused at once, for reading and for writing (no open that blocks).
 */
static void test_damaged_and_not_files(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "damaged.db");
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	struct db_experiment_new e = { .name = "d", .config_yaml = "x", .config_len = 1,
				       .higher_is_better = -1 };
	int64_t id;
	assert_int_equal(db_experiment_insert(db, &e, &id, &err), 0);
	assert_int_equal(sqlite3_exec(db->handle, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
				      NULL), SQLITE_OK);
	int page = query_int(db, "SELECT rootpage FROM sqlite_master WHERE name = "
				 "'sqlite_autoindex_configurations_1'");
	int size = query_int(db, "PRAGMA page_size");
	db_close(db);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(page - 1) * size, SEEK_SET), 0);
	for (int i = 0; i < size; i++)
		fputc('U', f);
	fclose(f);
	err = (struct ta_err){ 0 };
	assert_null(db_open(path, false, &err));
	assert_int_equal(err.code, EXIT_FAILURE_RUN);
	assert_non_null(strstr(err.msg, "the database file is damaged (PRAGMA quick_check: "));
	assert_non_null(strstr(err.msg, ".recover"));
	db = db_open_readonly(path, &err);
	assert_non_null(db);
	sqlite3_stmt *st = db_prepare(db, "SELECT COUNT(*) FROM configurations INDEXED BY "
				      "sqlite_autoindex_configurations_1 WHERE experiment_id = 1 "
				      "AND key > ''", &err);
	int rc = st ? sqlite3_step(st) : SQLITE_CORRUPT;
	if (st && rc != SQLITE_ROW)
		db_error(db, "reading configurations", &err);
	sqlite3_finalize(st);
	db_close(db);
	assert_int_not_equal(rc, SQLITE_ROW);
	assert_non_null(strstr(err.msg, "the database file is damaged; restore it"));

	char fifo[256];
	db_path(fifo, sizeof(fifo), "fifo.db");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(30);
	const char *bad[] = { fifo, dir };
	for (size_t i = 0; i < 2; i++) {
		err = (struct ta_err){ 0 };
		assert_null(db_open_readonly(bad[i], &err));
		assert_int_equal(err.code, EXIT_BAD_INPUT);
		assert_non_null(strstr(err.msg, "not a database file; pass --db FILE"));
		err = (struct ta_err){ 0 };
		assert_null(db_open(bad[i], true, &err));
		assert_non_null(strstr(err.msg, "not a database file"));
	}
	alarm(0);
	unlink(fifo);
}

/* A v1 database with data migrates to the current schema, data kept, schema identical to a fresh one. */
static void test_migration_keeps_data(void **state)
{
	char old[256], fresh[256];
	struct ta_err err = { 0 };
	db_path(old, sizeof(old), "old.db");
	db_path(fresh, sizeof(fresh), "fresh.db");
	struct db *db = db_open_at_version(old, 1, &err);
	assert_non_null(db);
	assert_int_equal(query_int(db, "PRAGMA user_version"), 1);
	assert_int_equal(query_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view'"), 0);
	assert_int_equal(sqlite3_exec(db->handle,
		"INSERT INTO experiments (id, name, config_yaml, config_sha256, tool_version, seed) "
		"VALUES (7, 'old', 'name: old', 'x', '0.0.1', 99);"
		"INSERT INTO configurations (id, experiment_id, idx, key, vcpus, sockets, cores, "
		"threads, factors) VALUES (3, 7, 0, '1x2x1/pin=none/noise=none', 2, 1, 2, 1, '{}');"
		"INSERT INTO runs (id, configuration_id, repetition, order_index, status) "
		"VALUES (5, 3, 0, 0, 'ok'), (6, 3, 1, 1, 'ok');"
		"INSERT INTO metrics (run_id, name, value) VALUES (5, 'ops', 10), (6, 'ops', 14);"
		"INSERT INTO metrics (run_id, name, value, higher_is_better) "
		"VALUES (5, 'lat', 3, 0), (5, 'rate', 9, 1);",
		NULL, NULL, NULL), SQLITE_OK);
	db_close(db);

	db = db_open(old, false, &err);
	assert_non_null(db);
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(query_int(db, "SELECT seed FROM experiments WHERE id = 7"), 99);
	assert_int_equal(query_int(db, "SELECT COUNT(*) FROM runs WHERE configuration_id = 3"), 2);
	/* Migration 8 counts the runs stored before, and list shows them. */
	assert_int_equal(query_int(db, "SELECT ok FROM run_counts WHERE configuration_id = 3"), 2);
	struct db_experiment *list;
	size_t nlist;
	assert_int_equal(db_experiment_list(db, &list, &nlist, &err), 0);
	assert_int_equal(nlist, 1);
	assert_int_equal(list[0].nok, 2);
	assert_int_equal(list[0].nruns, 2);
	assert_int_equal(list[0].nconfigs, 1);
	db_experiments_free(list, nlist);
	/* The view added by migration 2 sees the old data: mean 12, stddev sqrt(8). */
	assert_int_equal(query_int(db, "SELECT n FROM config_metric_stats WHERE metric = 'ops'"), 2);
	assert_int_equal(query_int(db, "SELECT mean FROM config_metric_stats WHERE metric = 'ops'"), 12);
	assert_int_equal(query_int(db, "SELECT round(stddev * 1000) FROM config_metric_stats "
				   "WHERE metric = 'ops'"), 2828);
	/* Migration 3 derives the direction of old rows from higher_is_better. */
	assert_int_equal(query_int(db, "SELECT COUNT(*) FROM metrics WHERE name = 'ops' AND "
				   "direction IS NULL"), 2);
	assert_int_equal(query_int(db, "SELECT direction = 'lower' FROM run_metrics "
				   "WHERE metric = 'lat'"), 1);
	assert_int_equal(query_int(db, "SELECT direction = 'higher' FROM config_metric_stats "
				   "WHERE metric = 'rate'"), 1);
	char *migrated = schema_dump(db);
	db_close(db);

	db = db_open(fresh, true, &err);
	assert_non_null(db);
	char *created = schema_dump(db);
	db_close(db);
	assert_string_equal(migrated, created);
	free(migrated);
	free(created);
}

static void test_newer_schema_refused(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "newer.db");
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	char sql[64];
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", db_schema_version() + 1);
	assert_int_equal(sqlite3_exec(db->handle, sql, NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	assert_null(db_open(path, false, &err));
	assert_non_null(strstr(err.msg, "newer"));
}

static void test_database_not_world_accessible(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	struct stat st;
	db_path(path, sizeof(path), "perm.db");
	mode_t old = umask(0);
	struct db *db = db_open(path, true, &err);
	umask(old);
	assert_non_null(db);
	db_close(db);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0077, 0);
}

static void test_experiment_records(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "exp.db");
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	const char yaml[] = "name: a\n";
	struct db_experiment_new n = { .name = "alpha", .config_yaml = yaml,
				       .config_len = sizeof(yaml) - 1, .config_path = "a.yaml",
				       .seed = UINT64_MAX, .primary_metric = "ops",
				       .higher_is_better = 1 };
	int64_t id1, id2;
	assert_int_equal(db_experiment_insert(db, &n, &id1, &err), 0);
	n.name = "beta";
	n.parent_id = id1;
	n.higher_is_better = -1;
	assert_int_equal(db_experiment_insert(db, &n, &id2, &err), 0);
	n.name = "alpha";
	n.parent_id = 0;
	int64_t id3;
	assert_int_equal(db_experiment_insert(db, &n, &id3, &err), 0);
	assert_int_equal(db_experiment_set_status(db, id1, "done", &err), 0);

	struct db_experiment *v;
	size_t count;
	assert_int_equal(db_experiment_list(db, &v, &count, &err), 0);
	assert_int_equal(count, 3);
	assert_int_equal(v[0].id, id3);		/* newest first */
	assert_int_equal(v[2].id, id1);
	assert_string_equal(v[2].status, "done");
	assert_non_null(v[2].finished_at);
	assert_null(v[1].finished_at);
	assert_int_equal(v[1].parent_id, id1);
	assert_int_equal(v[1].higher_is_better, -1);
	assert_int_equal(v[2].seed, UINT64_MAX);	/* 64-bit seeds round-trip */
	/* sha256("name: a\n") */
	char sha[65];
	db_sha256_hex(yaml, sizeof(yaml) - 1, sha);
	assert_string_equal(v[2].config_sha256, sha);
	assert_string_equal(v[2].config_yaml, yaml);
	db_experiments_free(v, count);

	struct db_experiment e;
	assert_int_equal(db_experiment_get(db, "alpha", &e, &err), 0);
	assert_int_equal(e.id, id3);		/* by name: the newest */
	db_experiment_release(&e);
	char idbuf[32];
	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)id1);
	assert_int_equal(db_experiment_get(db, idbuf, &e, &err), 0);
	assert_string_equal(e.name, "alpha");
	db_experiment_release(&e);
	assert_int_equal(db_experiment_get(db, "gamma", &e, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "no experiment 'gamma'"));
	assert_int_equal(db_experiment_get(db, "12345", &e, &err), -1);

	/* Bad status values are refused by the schema. */
	assert_int_equal(db_experiment_set_status(db, id1, "bogus", &err), -1);
	db_close(db);
}

/*
 * A run stored the way the controller stores it reads back, through the
 * struct the advisor ranks from, with each metric's unit and direction:
 * "none" (not a figure of merit) and "unknown" stay apart.
 */
static void test_metric_direction_round_trip(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "dir.db");
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	const char yaml[] = "name: d\n";
	struct db_experiment_new n = { .name = "d", .config_yaml = yaml,
				       .config_len = sizeof(yaml) - 1, .seed = 1,
				       .primary_metric = "redis.GET", .higher_is_better = 1 };
	int64_t eid, cid, rid;
	assert_int_equal(db_experiment_insert(db, &n, &eid, &err), 0);
	struct config_record c = { .key = "1x2x1", .vcpus = 2, .sockets = 1, .cores = 2,
				   .threads = 1 };
	assert_int_equal(db_fixture_config_add(db, eid, &c, &cid, &err), 0);
	struct db_fixture_run fr = { .topology_ok = -1, .lost_events = -1, .status = "running" };
	assert_int_equal(db_fixture_run_add(db, cid, &fr, &rid, &err), 0);
	const struct db_metric m[] = {
		{ "redis.GET", 51234.5, "requests/s", METRIC_DIR_HIGHER },
		{ "redis.GET.p99_ms", 0.911, "ms", METRIC_DIR_LOWER },
		{ "boot_seconds", 4.2, "s", METRIC_DIR_NONE },
		{ "extra", 7, NULL, METRIC_DIR_UNKNOWN },
	};
	struct db_run_result r = { .run_id = rid, .status = "ok", .topology_ok = 1,
				   .lost_events = -1, .metrics = m, .nmetrics = 4 };
	assert_int_equal(db_run_store(db, &r, &err), 0);

	struct db_results res;
	assert_int_equal(db_results_load(db, "d", &res, &err), 0);
	assert_int_equal(res.nconfigs, 1);
	assert_int_equal(res.configs[0].nruns, 1);
	const struct db_results_run *run = &res.configs[0].runs[0];
	const struct db_results_metric *got = db_results_run_metric(run, "redis.GET");
	assert_string_equal(got->unit, "requests/s");
	assert_int_equal(got->dir, METRIC_DIR_HIGHER);
	assert_int_equal(got->higher_is_better, 1);
	got = db_results_run_metric(run, "redis.GET.p99_ms");
	assert_string_equal(got->unit, "ms");
	assert_int_equal(got->dir, METRIC_DIR_LOWER);
	assert_int_equal(got->higher_is_better, 0);
	got = db_results_run_metric(run, "boot_seconds");
	assert_int_equal(got->dir, METRIC_DIR_NONE);
	assert_int_equal(got->higher_is_better, -1);
	got = db_results_run_metric(run, "extra");
	assert_null(got->unit);
	assert_int_equal(got->dir, METRIC_DIR_UNKNOWN);
	db_results_release(&res);
	db_close(db);
}

static void test_sha256_known_answer(void **state)
{
	char sha[65];
	db_sha256_hex("abc", 3, sha);
	assert_string_equal(sha,
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* A symlink loop as --db is bad input, like a missing file. */
static void test_symlink_loop_is_bad_input(void **state)
{
	char a[256], b[256];
	struct ta_err err = { 0 };
	db_path(a, sizeof(a), "loop-a.db");
	db_path(b, sizeof(b), "loop-b.db");
	assert_int_equal(symlink(b, a), 0);
	assert_int_equal(symlink(a, b), 0);
	assert_null(db_open(a, true, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_null(db_open_readonly(a, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	unlink(a);
	unlink(b);
}

/* A new database never goes through a planted symlink (safefile.h). */
static void test_create_refuses_dangling_symlink(void **state)
{
	char path[256], target[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "planted.db");
	db_path(target, sizeof(target), "elsewhere.db");
	assert_int_equal(symlink(target, path), 0);
	/* stat() sees nothing (dangling), so this is a "new" database. */
	assert_null(db_open(path, true, &err));
	assert_int_equal(access(target, F_OK), -1);
	unlink(path);
}

/* Several processes creating one new database at once all succeed. */
static void test_concurrent_creation_migrates_once(void **state)
{
	char path[256];
	db_path(path, sizeof(path), "race.db");
	enum { N = 6 };
	pid_t pids[N];
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct ta_err err = { 0 };
			struct db *db = db_open(path, true, &err);
			if (!db)
				fprintf(stderr, "child %d: %s\n", i, err.msg);
			db_close(db);
			_exit(db ? 0 : 1);
		}
	}
	for (int i = 0; i < N; i++) {
		int status;
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	struct ta_err err = { 0 };
	struct db *db = db_open_readonly(path, &err);
	assert_non_null(db);
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	db_close(db);
}

/* Read-only opening reads what is there and cannot write. */
static void test_readonly_open(void **state)
{
	char path[300], dir[256], shm[320];
	struct ta_err err = { 0 };
	db_path(dir, sizeof(dir), "rodir");
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/t.db", dir);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	int64_t id;
	struct db_experiment_new e = { .name = "ro", .config_yaml = "x", .config_len = 1,
				       .higher_is_better = -1 };
	assert_int_equal(db_experiment_insert(db, &e, &id, &err), 0);
	db_close(db);	/* the last connection merges the WAL and removes -shm */
	assert_int_equal(access(shm, F_OK), -1);
	/* A directory we may not write (for root this still allows the -shm;
	 * hardening.sh reads one as nobody, where only immutable works). */
	assert_int_equal(chmod(dir, 0555), 0);
	db = db_open_readonly(path, &err);
	if (!db)
		fprintf(stderr, "%s\n", err.msg);
	assert_non_null(db);
	struct db_experiment got;
	assert_int_equal(db_experiment_get(db, "ro", &got, &err), 0);
	assert_int_equal(got.id, id);
	db_experiment_release(&got);
	/* Writing through a read-only handle fails. */
	assert_int_equal(db_experiment_insert(db, &e, &id, &err), -1);
	db_close(db);
	assert_int_equal(chmod(dir, 0755), 0);
	unlink(path);
	unlink(shm);
	snprintf(shm, sizeof(shm), "%s-wal", path);
	unlink(shm);
	assert_int_equal(rmdir(dir), 0);
}

/* Read-only opening never migrates; the readers' upgrade waits for the host lock. */
static void test_old_schema_upgraded_only_under_the_lock(void **state)
{
	char path[256], lockpath[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "old-ro.db");
	db_path(lockpath, sizeof(lockpath), "lock");
	setenv("TOPOADVISOR_LOCK", lockpath, 1);
	struct db *db = db_open_at_version(path, 1, &err);
	assert_non_null(db);
	db_close(db);
	db = db_open_readonly(path, &err);
	assert_non_null(db);
	assert_int_equal(db->version, 1);
	db_close(db);

	struct hostlock lk;
	assert_int_equal(hostlock_acquire(&lk, NULL, &err), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Another process: the lock is busy, so no migration happens. */
		struct ta_err e = { 0 };
		struct db *d = dbread_open(path, &e);
		_exit(!d && strstr(e.msg, "needs the host lock") &&
		      strstr(e.msg, "another topoadvisor") ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	hostlock_release(&lk);
	db = db_open_readonly(path, &err);
	assert_non_null(db);
	assert_int_equal(db->version, 1);	/* untouched while the lock was held */
	db_close(db);

	db = dbread_open(path, &err);
	assert_non_null(db);
	assert_int_equal(db->version, db_schema_version());
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	db_close(db);
	unsetenv("TOPOADVISOR_LOCK");
	char file[300];
	snprintf(file, sizeof(file), "%s/host.lock", lockpath);
	unlink(file);
	rmdir(lockpath);
}

/*
 * The counts `list` shows (run_counts, kept by triggers) equal a count of
 * the runs themselves after every way runs change: planned, running,
 * stored ok and failed, stored again by a resume, marked stale, dropped by
 * a race's elimination and stop, appended by extend, and cascaded away
 * with their experiment.
 */
static void counts_match(struct db *db, int64_t exp)
{
	struct ta_err err = { 0 };
	char id[32], sql[256];
	snprintf(id, sizeof(id), "%lld", (long long)exp);
	struct db_experiment e;
	assert_int_equal(db_experiment_get(db, id, &e, &err), 0);
	static const char *const status[] = { "planned", "running", "ok", "failed",
					      "interrupted" };
	int got[] = { e.nplanned, e.nrunning, e.nok, e.nfailed, e.ninterrupted }, all = 0;
	for (size_t i = 0; i < 5; i++) {
		snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM runs r JOIN configurations c "
			 "ON c.id = r.configuration_id WHERE c.experiment_id = %lld AND "
			 "r.status = '%s'", (long long)exp, status[i]);
		int want = query_int(db, sql);
		if (got[i] != want)
			fail_msg("%s runs: list says %d, the runs table %d", status[i], got[i], want);
		all += want;
	}
	assert_int_equal(e.nruns, all);
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM configurations WHERE experiment_id = %lld",
		 (long long)exp);
	assert_int_equal(e.nconfigs, query_int(db, sql));
	db_experiment_release(&e);
}

static void test_run_counts_follow_runs(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "counts.db");
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	const char yaml[] = "name: c\n";
	struct db_experiment_new n = { .name = "c", .config_yaml = yaml,
				       .config_len = sizeof(yaml) - 1, .seed = 1,
				       .primary_metric = "ops", .higher_is_better = 1 };
	int64_t exp, other;
	assert_int_equal(db_experiment_insert(db, &n, &exp, &err), 0);
	assert_int_equal(db_experiment_insert(db, &n, &other, &err), 0);
	counts_match(db, exp);

	static char *const keys[] = { "a", "b", "c" };
	struct config_record recs[3];
	for (int i = 0; i < 3; i++)
		recs[i] = (struct config_record){ .index = (size_t)i, .key = keys[i], .vcpus = 1,
						  .sockets = 1, .dies = 1, .cores = 1, .threads = 1,
						  .topology = "1x1x1", .pinning = "none",
						  .noise = "none", .baseline = i == 0 };
	struct db_plan_run plan[12];
	for (int i = 0; i < 12; i++)
		plan[i] = (struct db_plan_run){ (size_t)(i % 3), i / 3, (size_t)i };
	int64_t cfg[3], ocfg[3];
	assert_int_equal(db_plan_store(db, exp, recs, 3, plan, 12, cfg, &err), 0);
	assert_int_equal(db_plan_store(db, other, recs, 3, plan, 6, ocfg, &err), 0);
	assert_int_equal(db_race_start(db, exp, 2, 4, &err), 0);
	counts_match(db, exp);
	counts_match(db, other);

	struct db_run_todo *t;
	size_t nt;
	assert_int_equal(db_runs_list(db, exp, false, &t, &nt, &err), 0);
	assert_int_equal(nt, 12);
	struct db_metric m = { "ops", 100, NULL, METRIC_DIR_HIGHER };
	for (size_t i = 0; i < 7; i++) {	/* blocks 0 and 1, and a's block-2 run */
		assert_int_equal(db_run_mark_running(db, t[i].run_id, &err), 0);
		counts_match(db, exp);
		struct db_run_result r = { .run_id = t[i].run_id, .status = i == 4 ? "failed" : "ok",
					   .error = i == 4 ? "boom" : NULL, .topology_ok = -1,
					   .lost_events = -1, .metrics = &m, .nmetrics = i != 4 };
		assert_int_equal(db_run_store(db, &r, &err), 0);
		counts_match(db, exp);
	}
	/* A resume measures the failed run again. */
	struct db_run_result again = { .run_id = t[4].run_id, .status = "ok", .topology_ok = -1,
				       .lost_events = -1, .metrics = &m, .nmetrics = 1 };
	assert_int_equal(db_run_store(db, &again, &err), 0);
	counts_match(db, exp);
	/* A crash leaves one running, the next start marks it interrupted. */
	assert_int_equal(db_run_mark_running(db, t[7].run_id, &err), 0);
	assert_int_equal(db_runs_mark_stale(db, exp, "crashed", &err), 0);
	counts_match(db, exp);
	db_runs_free(t, nt);

	/* The race drops b from block 2 on, then stops after block 3. */
	struct db_race_elim_new el = { cfg[1], cfg[2], 0.01, 0.98 };
	assert_int_equal(db_race_record(db, exp, 2, &el, 1, NULL, &err), 0);
	counts_match(db, exp);
	assert_int_equal(db_race_record(db, exp, 3, NULL, 0, "one survivor", &err), 0);
	counts_match(db, exp);
	/* extend appends planned runs. */
	struct db_run_new add[] = { { cfg[0], 4 }, { cfg[2], 4 } };
	assert_int_equal(db_runs_append(db, exp, add, 2, &err), 0);
	counts_match(db, exp);
	counts_match(db, other);

	/* Deleting an experiment takes its counts with it, and only its own. */
	assert_int_equal(sqlite3_exec(db->handle, "DELETE FROM experiments WHERE id = 1",
				      NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(query_int(db, "SELECT COUNT(*) FROM run_counts"), 3);
	counts_match(db, other);
	struct db_experiment *v;
	size_t count;
	assert_int_equal(db_experiment_list(db, &v, &count, &err), 0);
	assert_int_equal(count, 1);
	assert_int_equal(v[0].nplanned, 6);
	assert_int_equal(v[0].nruns, 6);
	assert_int_equal(v[0].nconfigs, 3);
	db_experiments_free(v, count);
	db_close(db);
}

/*
 * Reading an experiment run by run (the cursor export streams through) and
 * whole (db_results_load, built on it) give every run in configuration and
 * repetition order whatever order they were stored in, each run's metrics
 * in the order they were stored, a run without metrics between two with
 * them, nothing of another experiment stored in between, and exit counts
 * summed per reason: the all-vCPU row when there is one, else the per-vCPU
 * rows, most first, ties by reason.
 */
static void test_results_walk(void **state)
{
	char path[256];
	struct ta_err err = { 0 };
	db_path(path, sizeof(path), "walk.db");
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	const char yaml[] = "name: w\n";
	struct db_experiment_new n = { .name = "w", .config_yaml = yaml,
				       .config_len = sizeof(yaml) - 1, .seed = 1,
				       .primary_metric = "zeta", .higher_is_better = 1 };
	int64_t exp[2];
	static char *const keys[] = { "a", "b" };
	struct config_record recs[2];
	for (int i = 0; i < 2; i++)
		recs[i] = (struct config_record){ .index = (size_t)i, .key = keys[i], .vcpus = 1,
						  .sockets = 1, .dies = 1, .cores = 1, .threads = 1,
						  .topology = "1x1x1", .pinning = "none",
						  .noise = "none" };
	struct db_plan_run plan[6];
	for (int i = 0; i < 6; i++)
		plan[i] = (struct db_plan_run){ (size_t)(i % 2), i / 2, (size_t)i };
	for (int e = 0; e < 2; e++) {
		assert_int_equal(db_experiment_insert(db, &n, &exp[e], &err), 0);
		assert_int_equal(db_plan_store(db, exp[e], recs, 2, plan, 6, NULL, &err), 0);
	}
	struct db_run_todo *t[2];
	size_t nt[2];
	for (int e = 0; e < 2; e++)
		assert_int_equal(db_runs_list(db, exp[e], false, &t[e], &nt[e], &err), 0);
	/* Stored last run first, alternating with the other experiment's runs. */
	for (size_t k = 6; k-- > 0;)
		for (int e = 0; e < 2; e++) {
			const struct db_run_todo *r = &t[e][k];
			double v = 100.0 * (double)exp[e] + 10.0 * r->repetition +
				   (double)(r->configuration_id % 2);
			const struct db_metric m[] = {
				{ "zeta", v, "ops", METRIC_DIR_HIGHER },
				{ "alpha", v + 1, NULL, METRIC_DIR_NONE },
				{ "mid", v + 2, "s", METRIC_DIR_LOWER },
			};
			/* Times (migration 11) sum as counts do; HLT was not timed. */
			const struct db_exit_count x[] = {
				{ "kvm_hv", 0, "EXTERNAL", 5, 4, 4000 },
				{ "kvm_hv", 1, "EXTERNAL", 7, 6, 9000 },
				{ "kvm_hv", -1, "H_DOORBELL", 100, 90, 1000000 },
				{ "kvm_hv", 0, "H_DOORBELL", 40, 40, 7 },
				{ "kvm", 0, "HLT", 12, -1, -1 },
			};
			bool none = !strcmp(r->key, "a") && r->repetition == 1;
			struct db_run_result res = {
				.run_id = r->run_id, .status = none ? "failed" : "ok",
				.error = none ? "boom" : NULL, .topology_ok = -1, .lost_events = -1,
				.metrics = m, .nmetrics = none ? 0 : 3, .exits = x,
				.nexits = none ? 0 : 5 };
			assert_int_equal(db_run_store(db, &res, &err), 0);
		}
	char id[32];
	snprintf(id, sizeof(id), "%lld", (long long)exp[0]);

	for (int exits = 0; exits < 2; exits++) {
		struct db_results res;
		struct db_results_cursor *cur;
		assert_int_equal(db_results_open(db, id, exits, &res, &cur, &err), 0);
		assert_int_equal(res.nconfigs, 2);
		assert_int_equal(res.configs[0].nruns, 0);	/* the runs come one by one */
		struct db_results_run run;
		struct db_results_config *c;
		int k = 0, rc;
		while ((rc = db_results_next_run(cur, &run, &c, &err)) > 0) {
			assert_ptr_equal(c, &res.configs[k / 3]);
			assert_int_equal(run.repetition, k % 3);
			bool none = k == 1;
			assert_string_equal(run.status, none ? "failed" : "ok");
			assert_int_equal(run.nmetrics, none ? 0 : 3);
			if (!none) {
				double v = 100.0 * (double)exp[0] + 10.0 * (k % 3) +
					   (double)(c->id % 2);
				assert_string_equal(run.metrics[0].name, "zeta");
				assert_true(run.metrics[0].value == v);
				assert_string_equal(run.metrics[1].name, "alpha");
				assert_string_equal(run.metrics[2].name, "mid");
				assert_true(run.metrics[2].value == v + 2);
			}
			assert_int_equal(run.nexits, exits && !none ? 3 : 0);
			if (exits && !none) {
				assert_string_equal(run.exits[0].reason, "H_DOORBELL");
				assert_int_equal(run.exits[0].count, 100);
				assert_int_equal(run.exits[0].time_pairs, 90);
				assert_int_equal(run.exits[0].time_ns, 1000000);
				assert_string_equal(run.exits[1].reason, "EXTERNAL");
				assert_string_equal(run.exits[1].source, "kvm_hv");
				assert_int_equal(run.exits[1].count, 12);
				assert_int_equal(run.exits[1].time_pairs, 10);
				assert_int_equal(run.exits[1].time_ns, 13000);
				assert_string_equal(run.exits[2].reason, "HLT");
				assert_int_equal(run.exits[2].count, 12);
				assert_int_equal(run.exits[2].time_pairs, 0);
			}
			db_results_run_release(&run);
			k++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(k, 6);
		db_results_cursor_close(cur);
		db_results_release(&res);
	}

	/* The whole read holds the same. */
	struct db_results all;
	assert_int_equal(db_results_load(db, id, &all, &err), 0);
	assert_int_equal(all.configs[0].nruns, 3);
	assert_int_equal(all.configs[1].nruns, 3);
	assert_int_equal(all.configs[0].runs[1].nmetrics, 0);
	assert_string_equal(all.configs[1].runs[2].metrics[1].name, "alpha");
	assert_int_equal(all.configs[1].runs[2].nexits, 3);
	assert_int_equal(all.configs[1].runs[2].exits[0].count, 100);
	db_results_release(&all);
	db_runs_free(t[0], nt[0]);
	db_runs_free(t[1], nt[1]);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_database),
		cmocka_unit_test(test_missing_database_is_bad_input),
		cmocka_unit_test(test_not_a_database),
		cmocka_unit_test(test_damaged_and_not_files),
		cmocka_unit_test(test_migration_keeps_data),
		cmocka_unit_test(test_newer_schema_refused),
		cmocka_unit_test(test_database_not_world_accessible),
		cmocka_unit_test(test_experiment_records),
		cmocka_unit_test(test_metric_direction_round_trip),
		cmocka_unit_test(test_sha256_known_answer),
		cmocka_unit_test(test_symlink_loop_is_bad_input),
		cmocka_unit_test(test_create_refuses_dangling_symlink),
		cmocka_unit_test(test_concurrent_creation_migrates_once),
		cmocka_unit_test(test_readonly_open),
		cmocka_unit_test(test_old_schema_upgraded_only_under_the_lock),
		cmocka_unit_test(test_run_counts_follow_runs),
		cmocka_unit_test(test_results_walk),
	};
	return cmocka_run_group_tests_name("db", tests, setup, teardown);
}
