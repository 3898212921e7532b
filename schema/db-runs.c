/* db-runs: run bookkeeping and whole-run storage; see db-runs.h. */
#include "db-runs.h"

#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"

int db_runs_list(struct db *db, int64_t exp_id, bool pending_only, struct db_run_todo **out,
		 size_t *n, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT r.id, c.id, c.key, r.repetition, r.order_index, r.status FROM runs r "
		"JOIN configurations c ON c.id = r.configuration_id "
		"WHERE c.experiment_id = ?1 AND (?2 = 0 OR (r.status <> 'ok' AND "
		"c.id NOT IN (SELECT configuration_id FROM eliminations))) "
		"ORDER BY r.order_index", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_int(st, 2, pending_only);
	struct db_run_todo *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		struct db_run_todo *t = &v[count++];
		t->run_id = sqlite3_column_int64(st, 0);
		t->configuration_id = sqlite3_column_int64(st, 1);
		t->key = db_column_strdup(st, 2);
		t->repetition = sqlite3_column_int(st, 3);
		t->order_index = sqlite3_column_int64(st, 4);
		t->status = db_column_strdup(st, 5);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_runs_free(v, count);
		return db_error(db, "listing runs", err);
	}
	*out = v;
	*n = count;
	return 0;
}

void db_runs_free(struct db_run_todo *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].status);
	}
	free(v);
}

/* Runs one prepared statement that takes only int64 parameters ?1.. and returns no rows. */
static int exec_ids(struct db *db, const char *sql, const int64_t *ids, int nids,
		    const char *text, const char *what, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return -1;
	for (int i = 0; i < nids; i++)
		sqlite3_bind_int64(st, i + 1, ids[i]);
	if (text)
		sqlite3_bind_text(st, nids + 1, text, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, what, err);
}

int db_run_mark_running(struct db *db, int64_t run_id, struct ta_err *err)
{
	return exec_ids(db, "UPDATE runs SET status = 'running', error = NULL, "
			"started_at = strftime('%Y-%m-%dT%H:%M:%fZ','now'), finished_at = NULL "
			"WHERE id = ?1", &run_id, 1, NULL, "marking a run running", err);
}

int db_runs_mark_stale(struct db *db, int64_t exp_id, const char *error, struct ta_err *err)
{
	return exec_ids(db, "UPDATE runs SET status = 'interrupted', error = ?2, "
			"finished_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') "
			"WHERE status = 'running' AND configuration_id IN "
			"(SELECT id FROM configurations WHERE experiment_id = ?1)",
			&exp_id, 1, error, "marking stale runs", err);
}

static int store_children(struct db *db, const struct db_run_result *r, struct ta_err *err)
{
	static const char *const clear[] = {
		"DELETE FROM metrics WHERE run_id = ?1",
		"DELETE FROM exit_counts WHERE run_id = ?1",
		"DELETE FROM artifacts WHERE run_id = ?1",
	};
	for (size_t i = 0; i < 3; i++)
		if (exec_ids(db, clear[i], &r->run_id, 1, NULL, "clearing an earlier attempt",
			     err) < 0)
			return -1;

	sqlite3_stmt *st = db_prepare(db, "INSERT INTO metrics (run_id, name, value, unit, "
				      "higher_is_better, direction) VALUES (?,?,?,?,?,?)", err);
	if (!st)
		return -1;
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct db_metric *m = &r->metrics[i];
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		sqlite3_bind_int64(st, 1, r->run_id);
		sqlite3_bind_text(st, 2, m->name, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 3, m->value);
		sqlite3_bind_text(st, 4, m->unit, -1, SQLITE_STATIC);
		if (m->dir == METRIC_DIR_HIGHER || m->dir == METRIC_DIR_LOWER)
			sqlite3_bind_int(st, 5, m->dir == METRIC_DIR_HIGHER);
		sqlite3_bind_text(st, 6, metric_dir_name(m->dir), -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_error(db, "storing a metric", err);
		}
	}
	sqlite3_finalize(st);

	st = db_prepare(db, "INSERT INTO exit_counts (run_id, source, vcpu, reason, count, "
			"time_pairs, time_ns) VALUES (?,?,?,?,?,?,?)", err);
	if (!st)
		return -1;
	for (size_t i = 0; i < r->nexits; i++) {
		const struct db_exit_count *x = &r->exits[i];
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		sqlite3_bind_int64(st, 1, r->run_id);
		sqlite3_bind_text(st, 2, x->source, -1, SQLITE_STATIC);
		if (x->vcpu >= 0)
			sqlite3_bind_int64(st, 3, x->vcpu);
		sqlite3_bind_text(st, 4, x->reason, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)x->count);
		if (x->time_pairs > 0 && x->time_ns >= 0) {
			sqlite3_bind_int64(st, 6, x->time_pairs);
			sqlite3_bind_int64(st, 7, x->time_ns);
		}
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_error(db, "storing exit counts", err);
		}
	}
	sqlite3_finalize(st);

	st = db_prepare(db, "INSERT INTO artifacts (run_id, name, content) VALUES (?,?,?)", err);
	if (!st)
		return -1;
	for (size_t i = 0; i < r->nartifacts; i++) {
		const struct db_artifact *a = &r->artifacts[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, r->run_id);
		sqlite3_bind_text(st, 2, a->name, -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, 3, a->content ? a->content : "", (int)a->len, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_error(db, "storing an artifact", err);
		}
	}
	sqlite3_finalize(st);
	return 0;
}

int db_run_store_nested(struct db *db, const struct db_run_result *r, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE runs SET status = ?, error = ?, host_state = ?, guest_topology = ?, "
		"topology_ok = ?, lost_events = ?, host = ?, boot = ?, "
		"started_at = COALESCE(?, started_at, strftime('%Y-%m-%dT%H:%M:%fZ','now')), "
		"finished_at = COALESCE(?, strftime('%Y-%m-%dT%H:%M:%fZ','now')) WHERE id = ?", err);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, r->status, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, r->error, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->host_state, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, r->guest_topology, -1, SQLITE_STATIC);
	if (r->topology_ok >= 0)
		sqlite3_bind_int(st, 5, r->topology_ok);
	if (r->lost_events >= 0)
		sqlite3_bind_int64(st, 6, r->lost_events);
	sqlite3_bind_text(st, 7, r->host, -1, SQLITE_STATIC);
	if (r->boot > 0)
		sqlite3_bind_int64(st, 8, r->boot);
	sqlite3_bind_text(st, 9, r->started_at, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, r->finished_at, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 11, r->run_id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "storing the run", err);
	if (sqlite3_changes(db->handle) != 1)
		return err_set(err, EXIT_FAILURE_RUN, "%s: run %lld does not exist", db->path,
			       (long long)r->run_id);
	return store_children(db, r, err);
}

int db_run_store(struct db *db, const struct db_run_result *r, struct ta_err *err)
{
	if (db_begin(db, err) < 0)
		return -1;
	if (db_run_store_nested(db, r, err) < 0 || db_commit(db, err) < 0) {
		db_rollback(db);
		return -1;
	}
	return 0;
}
