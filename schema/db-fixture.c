/* db-fixture: row-by-row inserts for fixtures; see db-fixture.h. */
#include "db-fixture.h"

#include "db-plan.h"

static void bind_int_or_null(sqlite3_stmt *st, int col, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, v);
}

static int step_insert(struct db *db, sqlite3_stmt *st, const char *what, int64_t *id_out,
		       struct ta_err *err)
{
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, what, err);
	if (id_out)
		*id_out = sqlite3_last_insert_rowid(db->handle);
	return 0;
}

int db_fixture_config_add(struct db *db, int64_t experiment_id, const struct config_record *c,
			  int64_t *id_out, struct ta_err *err)
{
	struct config_record row = *c;
	row.dies = c->dies > 0 ? c->dies : 1;
	row.pinning = c->pinning ? c->pinning : "none";
	row.noise = c->noise ? c->noise : "none";
	int64_t id;
	if (db_plan_store(db, experiment_id, &row, 1, NULL, 0, &id, err) < 0)
		return -1;
	if (id_out)
		*id_out = id;
	return 0;
}

int db_fixture_run_add(struct db *db, int64_t configuration_id,
		       const struct db_fixture_run *r, int64_t *id_out, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO runs (configuration_id, repetition, order_index, status, error, "
		"started_at, finished_at, topology_ok, lost_events) VALUES "
		"(?,?,?,?,?,strftime('%Y-%m-%dT%H:%M:%fZ','now'),"
		"strftime('%Y-%m-%dT%H:%M:%fZ','now'),?,?)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, configuration_id);
	sqlite3_bind_int(st, 2, r->repetition);
	sqlite3_bind_int(st, 3, r->order_index);
	sqlite3_bind_text(st, 4, r->status ? r->status : "ok", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, r->error, -1, SQLITE_STATIC);
	bind_int_or_null(st, 6, r->topology_ok);
	bind_int_or_null(st, 7, r->lost_events);
	return step_insert(db, st, "storing a run", id_out, err);
}

int db_fixture_metric_add(struct db *db, int64_t run_id, const char *name, double value,
			  const char *unit, enum metric_dir dir, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO metrics (run_id, name, value, unit, higher_is_better, direction) "
		"VALUES (?,?,?,?,?,?)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 3, value);
	sqlite3_bind_text(st, 4, unit, -1, SQLITE_STATIC);
	bind_int_or_null(st, 5, dir == METRIC_DIR_HIGHER || dir == METRIC_DIR_LOWER
			 ? dir == METRIC_DIR_HIGHER : -1);
	sqlite3_bind_text(st, 6, metric_dir_name(dir), -1, SQLITE_STATIC);
	return step_insert(db, st, "storing a metric", NULL, err);
}

int db_fixture_exit_add(struct db *db, int64_t run_id, const char *source, int vcpu,
			const char *reason, int64_t count, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO exit_counts (run_id, source, vcpu, reason, count) "
		"VALUES (?,?,?,?,?)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
	bind_int_or_null(st, 3, vcpu);
	sqlite3_bind_text(st, 4, reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, count);
	return step_insert(db, st, "storing an exit count", NULL, err);
}
