/*
 * Unit tests of schema/db-blocks: a worker's result file written and read
 * back whole; a block ingested once (runs stored with host and times, in
 * one transaction), a later result of it a duplicate that stores nothing,
 * another job of the same attempt never downgrading the ingested row, and
 * the database refusing a second ingested attempt whatever a caller does;
 * an incomplete result refused; a block's runs ended (interrupted, or
 * failed when given up) and an eliminated configuration's dropped; a race
 * step sparing runs away on a node; the distributed row; hosts by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "schema/db-blocks.h"
#include "schema/db-fixture.h"
#include "schema/db-plan.h"
#include "schema/db-race.h"
#include "schema/db-results.h"
#include "schema/db-runs.h"
#include "util/strbuf.h"

static void check(int rc, const struct ta_err *err)
{
	if (rc < 0)
		fail_msg("%s", err->msg);
}

/* A database with one experiment, configurations a and b, blocks 0..2 planned. */
struct fx {
	char path[80];
	struct db *db;
	int64_t exp;
	int64_t cfg[2];
	int64_t run[3][2];	/* [block][config] */
};

static struct db *make_db(const char *path, int64_t *exp, int64_t cfg[2], int64_t run[3][2],
			  int nblocks)
{
	struct ta_err err = { 0 };
	unlink(path);
	struct db *db = db_open(path, true, &err);
	check(db ? 0 : -1, &err);
	const char yaml[] = "name: b\n";
	struct db_experiment_new e = { .name = "b", .config_yaml = yaml, .config_len = 8,
				       .seed = 1, .primary_metric = "ops", .higher_is_better = 1 };
	check(db_experiment_insert(db, &e, exp, &err), &err);
	static char *const keys[] = { "a", "b" };
	for (int c = 0; c < 2; c++) {
		struct config_record pc = { .index = (size_t)c, .key = keys[c], .vcpus = 1,
					    .sockets = 1, .cores = 1, .threads = 1,
					    .baseline = c == 0 };
		check(db_fixture_config_add(db, *exp, &pc, &cfg[c], &err), &err);
	}
	for (int b = 0; b < nblocks; b++)
		for (int c = 0; c < 2; c++) {
			struct db_fixture_run r = { .repetition = b, .order_index = b * 2 + c,
						    .status = "planned", .topology_ok = -1,
						    .lost_events = -1 };
			check(db_fixture_run_add(db, cfg[c], &r, &run[b][c], &err), &err);
		}
	return db;
}

static int setup(void **state)
{
	static struct fx f;
	snprintf(f.path, sizeof(f.path), "/tmp/test-db-blocks.%d.db", (int)getpid());
	f.db = make_db(f.path, &f.exp, f.cfg, f.run, 3);
	*state = &f;
	return 0;
}

static void remove_db(const char *path)
{
	char p[128];
	for (const char *s = ""; s; s = !*s ? "-wal" : !strcmp(s, "-wal") ? "-shm" : NULL) {
		snprintf(p, sizeof(p), "%s%s", path, s);
		unlink(p);
	}
}

static int teardown(void **state)
{
	struct fx *f = *state;
	db_close(f->db);
	remove_db(f->path);
	return 0;
}

static int64_t q_int(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db->handle, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char *q_text(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db->handle, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	const unsigned char *t = sqlite3_column_text(st, 0);
	char *v = t ? xstrdup((const char *)t) : NULL;
	sqlite3_finalize(st);
	return v;
}

/*
 * A worker's result file for block `block` from `node`: a database of its
 * own with the block's two runs (b failed when fail_b), metrics, an exit
 * count and an artifact, and its attempt row; copied to out with
 * db_copy_to as the worker does.
 */
static void write_result(const char *out, int block, int attempt, const char *job,
			 const char *node, const char *status_a)
{
	char path[96];
	snprintf(path, sizeof(path), "/tmp/test-db-blocks.%d.worker.db", (int)getpid());
	int64_t exp, cfg[2], run[3][2];
	struct db *w = make_db(path, &exp, cfg, run, 3);
	struct ta_err err = { 0 };
	for (int c = 0; c < 2; c++) {
		struct db_metric m[] = { { "ops", 100.0 + c + block, "ops/s", METRIC_DIR_HIGHER },
					 { "benchmark_seconds", 1.5, "s", METRIC_DIR_NONE } };
		struct db_exit_count x = { "kvm", 1, "HLT", 42, 41, 123456789 };
		struct db_artifact a = { "benchmark.stdout", "out\0put", 7 };
		struct db_run_result r = { .run_id = run[block][c],
					   .status = c == 0 ? status_a : "failed",
					   .error = c == 0 ? NULL : "exited with status 3",
					   .host_state = "{\"knobs\":{}}", .topology_ok = 1,
					   .lost_events = 0, .host = node,
					   .started_at = "2024-01-01T00:00:00.000Z",
					   .finished_at = "2024-01-01T00:00:01.000Z",
					   .metrics = m, .nmetrics = c == 0 ? 2 : 0,
					   .exits = &x, .nexits = 1, .artifacts = &a,
					   .nartifacts = 1 };
		check(db_run_store(w, &r, &err), &err);
	}
	/* A worker's database holds its block's runs only. */
	char sql[80];
	snprintf(sql, sizeof(sql), "DELETE FROM runs WHERE repetition <> %d", block);
	assert_int_equal(sqlite3_exec(w->handle, sql, NULL, NULL, NULL), SQLITE_OK);
	char name[64];
	snprintf(name, sizeof(name), "ta-e1-x-b%d-a%d", block + 1, attempt);
	int64_t id;
	check(db_attempt_insert(w, exp, block, attempt, name, &id, &err), &err);
	struct db_attempt_set s = { .job_id = job, .node = node, .state = "done" };
	check(db_attempt_update(w, id, &s, &err), &err);
	unlink(out);
	check(db_copy_to(w, out, &err), &err);
	db_close(w);
	remove_db(path);
}

static int64_t attempt(struct fx *f, int block, int n)
{
	struct ta_err err = { 0 };
	char name[64];
	snprintf(name, sizeof(name), "ta-e1-x-b%d-a%d", block + 1, n);
	int64_t id;
	check(db_attempt_insert(f->db, f->exp, block, n, name, &id, &err), &err);
	return id;
}

static void test_result_roundtrip(void **state)
{
	(void)state;
	char out[96];
	snprintf(out, sizeof(out), "/tmp/test-db-blocks.%d.result.db", (int)getpid());
	write_result(out, 1, 2, "77", "node-a", "ok");
	struct db_block_result res;
	struct ta_err err = { 0 };
	check(db_block_result_read(out, &res, &err), &err);
	assert_int_equal(res.block, 1);
	assert_int_equal(res.attempt, 2);
	assert_string_equal(res.job_name, "ta-e1-x-b2-a2");
	assert_string_equal(res.job_id, "77");
	assert_string_equal(res.node, "node-a");
	assert_int_equal(res.nruns, 2);
	const struct db_block_run *a = &res.runs[0], *b = &res.runs[1];
	assert_string_equal(a->key, "a");
	assert_int_equal(a->repetition, 1);
	assert_string_equal(a->r.status, "ok");
	assert_string_equal(a->r.host, "node-a");
	assert_string_equal(a->r.started_at, "2024-01-01T00:00:00.000Z");
	assert_int_equal(a->r.nmetrics, 2);
	assert_string_equal(a->r.metrics[0].name, "ops");
	assert_true(a->r.metrics[0].value == 101.0);
	assert_int_equal(a->r.metrics[0].dir, METRIC_DIR_HIGHER);
	assert_int_equal(a->r.metrics[1].dir, METRIC_DIR_NONE);
	assert_int_equal(a->r.nexits, 1);
	assert_int_equal(a->r.exits[0].vcpu, 1);
	assert_int_equal(a->r.exits[0].count, 42);
	/* The handling times travel with the counts (migration 11). */
	assert_int_equal(a->r.exits[0].time_pairs, 41);
	assert_int_equal(a->r.exits[0].time_ns, 123456789);
	/* Artifacts are named and sized, not read: ingestion streams them. */
	assert_int_equal(a->r.nartifacts, 0);
	assert_int_equal(a->narts, 1);
	assert_string_equal(a->arts[0].name, "benchmark.stdout");
	assert_int_equal(a->arts[0].len, 7);
	assert_string_equal(res.path, out);
	assert_int_equal(a->r.topology_ok, 1);
	assert_string_equal(b->r.status, "failed");
	assert_string_equal(b->r.error, "exited with status 3");
	db_block_result_release(&res);
	/* A copy made by VACUUM INTO is in rollback mode: readable over NFS. */
	FILE *fp = fopen(out, "rb");
	unsigned char hdr[20];
	assert_int_equal(fread(hdr, 1, 20, fp), 20);
	fclose(fp);
	assert_int_equal(hdr[18], 1);
	remove_db(out);
}

static void test_incomplete_result_refused(void **state)
{
	(void)state;
	char out[96];
	snprintf(out, sizeof(out), "/tmp/test-db-blocks.%d.result.db", (int)getpid());
	write_result(out, 0, 1, "5", "node-a", "interrupted");
	struct db_block_result res;
	struct ta_err err = { 0 };
	assert_int_equal(db_block_result_read(out, &res, &err), -1);
	assert_non_null(strstr(err.msg, "incomplete block"));
	remove_db(out);
	/* Not a result at all: a database without an attempt row. */
	char path[96];
	snprintf(path, sizeof(path), "/tmp/test-db-blocks.%d.plain.db", (int)getpid());
	int64_t exp, cfg[2], run[3][2];
	db_close(make_db(path, &exp, cfg, run, 1));
	assert_int_equal(db_block_result_read(path, &res, &err), -1);
	assert_non_null(strstr(err.msg, "not a block result"));
	remove_db(path);
}

static void test_ingest_once_then_duplicate(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	char out[96], out2[96];
	snprintf(out, sizeof(out), "/tmp/test-db-blocks.%d.r1.db", (int)getpid());
	snprintf(out2, sizeof(out2), "/tmp/test-db-blocks.%d.r2.db", (int)getpid());
	write_result(out, 1, 1, "10", "node-a", "ok");
	write_result(out2, 1, 2, "11", "node-b", "ok");
	int64_t a1 = attempt(f, 1, 1), a2 = attempt(f, 1, 2);
	int64_t ids[2] = { f->run[1][0], f->run[1][1] };
	check(db_block_runs_dispatch(f->db, ids, 2, &err), &err);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM runs WHERE status = 'running'"), 2);

	struct db_block_result res, res2;
	check(db_block_result_read(out2, &res2, &err), &err);
	check(db_block_result_read(out, &res, &err), &err);
	/* The second attempt's result comes first: it is the block's. */
	assert_int_equal(db_block_ingest(f->db, f->exp, a2, &res2, out2, &err), 1);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM runs WHERE repetition = 1 AND "
			       "host = 'node-b' AND status IN ('ok', 'failed') AND "
			       "started_at = '2024-01-01T00:00:00.000Z'"), 2);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM metrics"), 2);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM artifacts"), 2);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM artifacts WHERE content = "
			       "CAST(X'6f757400707574' AS BLOB)"), 2);
	/* The late one is a duplicate: recorded, nothing stored. */
	assert_int_equal(db_block_ingest(f->db, f->exp, a1, &res, out, &err), 0);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM metrics"), 2);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM runs WHERE host = 'node-a'"), 0);
	char *o = q_text(f->db, "SELECT group_concat(attempt || ':' || outcome || ':' || node, "
			 "' ') FROM (SELECT * FROM block_attempts ORDER BY attempt)");
	assert_string_equal(o, "1:duplicate:node-a 2:ingested:node-b");
	free(o);
	/* The ingested attempt's own second job (sbatch failed, then made it
	 * again): the row stays ingested. */
	assert_int_equal(db_block_ingest(f->db, f->exp, a2, &res, out, &err), 0);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM block_attempts WHERE outcome = "
			       "'ingested' AND attempt = 2"), 1);
	/* The database itself refuses two ingested attempts of a block. */
	assert_int_not_equal(sqlite3_exec(f->db->handle, "UPDATE block_attempts SET outcome = "
					  "'ingested' WHERE attempt = 1", NULL, NULL, NULL),
			     SQLITE_OK);
	db_block_result_release(&res);
	db_block_result_release(&res2);
	remove_db(out);
	remove_db(out2);
}

static void test_ingest_skips_eliminated_and_fails_missing(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	char out[96];
	snprintf(out, sizeof(out), "/tmp/test-db-blocks.%d.r1.db", (int)getpid());
	write_result(out, 2, 1, "12", "node-a", "ok");
	struct db_block_result res;
	check(db_block_result_read(out, &res, &err), &err);
	/* b was eliminated after block 2 and its run of block 2 deleted (a
	 * resubmitted attempt left it out): the older result's run is skipped. */
	char sql[224];
	snprintf(sql, sizeof(sql), "INSERT INTO eliminations (configuration_id, after_block, "
		 "against_id, p, ratio) VALUES (%lld, 2, %lld, 0.01, 0.9); "
		 "DELETE FROM runs WHERE id = %lld", (long long)f->cfg[1], (long long)f->cfg[0],
		 (long long)f->run[2][1]);
	assert_int_equal(sqlite3_exec(f->db->handle, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(db_block_ingest(f->db, f->exp, attempt(f, 2, 1), &res, out, &err), 1);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM runs WHERE repetition = 2"), 1);
	db_block_result_release(&res);
	/* A result that lacks a run the block has: that run failed, not left pending. */
	write_result(out, 0, 1, "13", "node-a", "ok");
	check(db_block_result_read(out, &res, &err), &err);
	free(res.runs[1].key);
	res.runs[1].key = xstrdup("no-such");
	/* Unusable (only its attempt fails), not a failure of the database. */
	assert_int_equal(db_block_ingest(f->db, f->exp, attempt(f, 0, 1), &res, out, &err),
			 DB_BLOCK_UNUSABLE);
	assert_non_null(strstr(err.msg, "has no run of no-such"));
	/* ... and nothing of that transaction stayed. */
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM runs WHERE repetition = 0 AND "
			       "status = 'planned'"), 2);
	res.nruns = 1;
	assert_int_equal(db_block_ingest(f->db, f->exp, attempt(f, 0, 2), &res, out, &err), 1);
	res.nruns = 2;
	char *why = q_text(f->db, "SELECT status || ': ' || error FROM runs WHERE repetition = 0 "
			   "AND configuration_id = (SELECT id FROM configurations WHERE key = 'b')");
	assert_non_null(strstr(why, "failed: block 1: its result"));
	free(why);
	db_block_result_release(&res);
	remove_db(out);
}

static void test_block_runs_end_and_drop(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	int64_t ids[4] = { f->run[0][0], f->run[0][1], f->run[1][0], f->run[1][1] };
	check(db_block_runs_dispatch(f->db, ids, 4, &err), &err);
	/* b eliminated after block 1: its runs of block 1 on go, not block 0's. */
	char sql[192];
	snprintf(sql, sizeof(sql), "INSERT INTO eliminations (configuration_id, after_block, "
		 "against_id, p, ratio) VALUES (%lld, 1, %lld, 0.01, 0.9)",
		 (long long)f->cfg[1], (long long)f->cfg[0]);
	assert_int_equal(sqlite3_exec(f->db->handle, sql, NULL, NULL, NULL), SQLITE_OK);
	int n;
	check(db_block_runs_end(f->db, f->exp, 0, "interrupted", "job 5 NODE_FAIL", &n, &err),
	      &err);
	assert_int_equal(n, 2);
	check(db_block_runs_end(f->db, f->exp, 1, "failed", "no result in 3 attempts", &n, &err),
	      &err);
	assert_int_equal(n, 2);
	char *s = q_text(f->db, "SELECT group_concat(repetition || c.key || r.status, ' ') FROM "
			 "(SELECT * FROM runs ORDER BY order_index) r JOIN configurations c "
			 "ON c.id = r.configuration_id");
	assert_string_equal(s, "0ainterrupted 0binterrupted 1afailed 2aplanned 2bplanned");
	free(s);
	check(db_block_runs_drop(f->db, f->exp, 2, &err), &err);
	assert_int_equal(q_int(f->db, "SELECT COUNT(*) FROM runs WHERE repetition = 2"), 0);
}

/* A race step deletes an eliminated configuration's later runs, except those away on a node. */
static void test_race_spares_runs_away(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	check(db_race_start(f->db, f->exp, 2, 3, &err), &err);
	check(db_block_runs_dispatch(f->db, &f->run[2][1], 1, &err), &err);
	struct db_race_elim_new el = { f->cfg[1], f->cfg[0], 0.01, 0.9 };
	check(db_race_record(f->db, f->exp, 1, &el, 1, NULL, &err), &err);
	char *s = q_text(f->db, "SELECT group_concat(repetition || r.status, ' ') FROM runs r "
			 "JOIN configurations c ON c.id = r.configuration_id WHERE c.key = 'b'");
	assert_string_equal(s, "0planned 2running");
	free(s);
}

static void test_distributed_and_hosts(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	struct db_distributed d;
	bool found;
	check(db_distributed_get(f->db, f->exp, &d, &found, &err), &err);
	assert_false(found);
	struct db_distributed w = { "slurm", "ta-e1-abc", "/shared/ta-e1-abc", "{\"max_hosts\":3}" };
	check(db_distributed_start(f->db, f->exp, &w, &err), &err);
	check(db_distributed_get(f->db, f->exp, &d, &found, &err), &err);
	assert_true(found);
	assert_string_equal(d.tag, "ta-e1-abc");
	assert_string_equal(d.work_dir, "/shared/ta-e1-abc");
	db_distributed_release(&d);
	/* A tag is one sweep's. */
	assert_int_equal(db_distributed_start(f->db, f->exp, &w, &err), -1);

	const char *hosts[3][2] = { { "n2", "n2" }, { "n1", "n1" }, { "n2", "n2" } };
	for (int b = 0; b < 3; b++)
		for (int c = 0; c < 2; c++) {
			struct db_run_result r = { .run_id = f->run[b][c],
						   .status = b == 2 && c == 1 ? "failed" : "ok",
						   .topology_ok = -1, .lost_events = -1,
						   .host = hosts[b][c] };
			check(db_run_store(f->db, &r, &err), &err);
		}
	struct db_host_summary *h;
	size_t n;
	check(db_hosts_list(f->db, f->exp, &h, &n, &err), &err);
	assert_int_equal(n, 2);
	assert_string_equal(h[0].host, "n1");
	assert_int_equal(h[0].blocks, 1);
	assert_int_equal(h[0].ok, 2);
	assert_string_equal(h[1].host, "n2");
	assert_int_equal(h[1].blocks, 2);
	assert_int_equal(h[1].runs, 4);
	assert_int_equal(h[1].failed, 1);
	db_hosts_free(h, n);
}

/*
 * An artifact larger than the piece ingestion copies at a time (1 MiB) and
 * not a multiple of it arrives byte for byte: streamed, never read whole.
 */
static void test_ingest_streams_large_artifact(void **state)
{
	struct fx *f = *state;
	struct ta_err err = { 0 };
	char out[96];
	snprintf(out, sizeof(out), "/tmp/test-db-blocks.%d.big.db", (int)getpid());
	write_result(out, 1, 1, "21", "node-a", "ok");
	size_t len = (7u << 19) + 13;	/* 3.5 MiB and 13 bytes */
	unsigned char *big = xmalloc(len);
	for (size_t i = 0; i < len; i++)
		big[i] = (unsigned char)((i * 7 + i / 4093) % 251);
	struct db *w = db_open(out, false, &err);
	assert_non_null(w);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(w->handle, "UPDATE artifacts SET content = ? "
					    "WHERE id = (SELECT MIN(id) FROM artifacts)", -1, &st,
					    NULL), SQLITE_OK);
	sqlite3_bind_blob(st, 1, big, (int)len, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	db_close(w);
	struct db_block_result res;
	check(db_block_result_read(out, &res, &err), &err);
	assert_int_equal(res.runs[0].arts[0].len, (int64_t)len);
	assert_int_equal(db_block_ingest(f->db, f->exp, attempt(f, 1, 1), &res, out, &err), 1);
	assert_int_equal(sqlite3_prepare_v2(f->db->handle, "SELECT content FROM artifacts ORDER "
					    "BY length(content) DESC LIMIT 1", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_bytes(st, 0), (int)len);
	assert_memory_equal(sqlite3_column_blob(st, 0), big, len);
	sqlite3_finalize(st);
	free(big);
	db_block_result_release(&res);
	remove_db(out);
}

/*
 * The rule for a node the sweep gives up on, as a table: per case, the
 * attempts ("NODE:BLOCK:STATE:T", T its finish time, in stored order), k,
 * and the nodes it yields.
 */
static void test_bad_nodes_table(void **state)
{
	(void)state;
	static const struct {
		const char *attempts;
		int k;
		const char *want;
	} cases[] = {
		{ "fn1:0:failed:1 fn1:1:failed:2 fn1:2:failed:3", 3, "fn1" },
		{ "fn1:0:failed:1 fn1:1:failed:2", 3, "" },
		/* a success in between starts the count again */
		{ "fn1:0:failed:1 fn1:1:failed:2 fn1:3:done:3 fn1:2:failed:4", 3, "" },
		{ "fn1:3:done:1 fn1:0:failed:2 fn1:1:failed:3 fn1:2:failed:4", 3, "fn1" },
		/* one block failing twice there is one block */
		{ "fn1:0:failed:1 fn1:0:failed:2 fn1:1:failed:3", 3, "" },
		/* a cancelled attempt is not the node's failure, nor a success */
		{ "fn1:0:failed:1 fn1:1:cancelled:2 fn1:2:failed:3 fn1:3:failed:4", 3, "fn1" },
		{ "fn1:0:failed:1 fn1:1:failed:2 fn1:2:failed:3", 0, "" },
		{ "fn1:0:failed:1 fn2:0:failed:2 fn1:1:failed:3 fn2:1:done:4", 2, "fn1" },
		{ "fn1:0:failed:1 fn2:0:failed:2 fn1:1:failed:3 fn2:1:failed:4", 2, "fn1 fn2" },
		/* the order they finished in, not the order stored */
		{ "fn1:0:failed:5 fn1:1:failed:6 fn1:2:done:2 fn1:3:failed:7", 3, "fn1" },
		{ "fn1:0:failed:5 fn1:1:failed:6 fn1:2:done:9 fn1:3:failed:7", 3, "" },
		/* still out: neither */
		{ "fn1:0:failed:1 fn1:1:failed:2 fn1:2:running:", 3, "" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct db_attempt a[8];
		size_t n = 0;
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", cases[c].attempts);
		for (char *save, *tok = strtok_r(buf, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save)) {
			char *f[4] = { 0 };
			for (int i = 0; i < 4; i++)
				f[i] = strsep(&tok, ":");
			char t[32] = "";
			if (f[3] && *f[3])
				snprintf(t, sizeof(t), "2024-01-01T00:00:%02d.000Z", atoi(f[3]));
			a[n] = (struct db_attempt){ .id = (int64_t)n + 1, .node = f[0],
						    .block = atoi(f[1]), .state = f[2],
						    .finished_at = *t ? strdup(t) : NULL };
			n++;
		}
		const char *out[8];
		size_t nout = db_attempts_bad_nodes(a, n, cases[c].k, out);
		char got[64] = "";
		for (size_t i = 0; i < nout; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
				 out[i]);
		if (strcmp(got, cases[c].want))
			fail_msg("case %zu (%s, k %d): got '%s', want '%s'", c, cases[c].attempts,
				 cases[c].k, got, cases[c].want);
		for (size_t i = 0; i < n; i++)
			free(a[i].finished_at);
	}
}

/*
 * Which killed worker may have left its node's knobs changed, as a table:
 * attempts "NODE:STATE:SLURM_STATE:T" (NODE "": none, never placed; T: when
 * it was submitted),
 * and the attempts (1-based, in order) named.
 */
static void test_dirty_nodes_table(void **state)
{
	(void)state;
	static const struct {
		const char *attempts;
		const char *want;
	} cases[] = {
		{ "fn1:failed:NODE_FAIL:1", "1" },
		/* a later block done there restored it */
		{ "fn1:failed:NODE_FAIL:1 fn1:done:COMPLETED:2", "" },
		/* one done there before does not */
		{ "fn1:done:COMPLETED:1 fn1:failed:NODE_FAIL:2", "2" },
		/* a worker that ended as it should (failed, cancelled: it restored) */
		{ "fn1:failed:FAILED:1 fn2:cancelled:CANCELLED:2", "" },
		/* never placed on a node: nothing changed */
		{ ":failed:NODE_FAIL:1", "" },
		{ "fn1:failed:OUT_OF_MEMORY:1 fn2:failed:NODE_FAIL:2 fn2:done:COMPLETED:3", "1" },
		/* one line per node: its last killed worker */
		{ "fn1:failed:NODE_FAIL:1 fn1:failed:NODE_FAIL:2", "2" },
		/* another node's success mends nothing */
		{ "fn1:failed:NODE_FAIL:1 fn2:done:COMPLETED:2", "1" },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct db_attempt a[8];
		size_t n = 0;
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", cases[c].attempts);
		for (char *save, *tok = strtok_r(buf, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save)) {
			char *f[4] = { 0 };
			for (int i = 0; i < 4; i++)
				f[i] = strsep(&tok, ":");
			char t[32] = "";
			if (f[3] && *f[3])
				snprintf(t, sizeof(t), "2024-01-01T00:00:%02d.000Z", atoi(f[3]));
			a[n] = (struct db_attempt){ .id = (int64_t)n + 1,
						    .node = *f[0] ? f[0] : NULL, .state = f[1],
						    .slurm_state = f[2],
						    .submitted_at = *t ? strdup(t) : NULL };
			n++;
		}
		size_t out[8];
		size_t nout = db_attempts_dirty(a, n, out);
		char got[64] = "";
		for (size_t i = 0; i < nout; i++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%zu", i ? " " : "",
				 out[i] + 1);
		if (strcmp(got, cases[c].want))
			fail_msg("case %zu (%s): got '%s', want '%s'", c, cases[c].attempts, got,
				 cases[c].want);
		for (size_t i = 0; i < n; i++)
			free(a[i].submitted_at);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_roundtrip),
		cmocka_unit_test(test_incomplete_result_refused),
		cmocka_unit_test_setup_teardown(test_ingest_once_then_duplicate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ingest_skips_eliminated_and_fails_missing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_ingest_streams_large_artifact, setup, teardown),
		cmocka_unit_test(test_bad_nodes_table),
		cmocka_unit_test(test_dirty_nodes_table),
		cmocka_unit_test_setup_teardown(test_block_runs_end_and_drop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_race_spares_runs_away, setup, teardown),
		cmocka_unit_test_setup_teardown(test_distributed_and_hosts, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
