/* db-race: a raced sweep's stored state; see db-race.h. */
#include "db-race.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"

/* Steps a prepared statement that returns no rows, then finalizes it. */
static int step_done(struct db *db, sqlite3_stmt *st, const char *what, struct ta_err *err)
{
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, what, err);
}

int db_race_start(struct db *db, int64_t exp_id, int first_test, int max_blocks,
		  struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "INSERT INTO races (experiment_id, first_test, "
				      "max_blocks) VALUES (?1, ?2, ?3)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_int(st, 2, first_test);
	sqlite3_bind_int(st, 3, max_blocks);
	return step_done(db, st, "storing the race", err);
}

int db_race_get(struct db *db, int64_t exp_id, struct db_race *out, bool *found,
		struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	*found = false;
	sqlite3_stmt *st = db_prepare(db, "SELECT first_test, max_blocks, blocks_evaluated, "
				      "stop_reason, stopped_after FROM races "
				      "WHERE experiment_id = ?1", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = true;
		out->first_test = sqlite3_column_int(st, 0);
		out->max_blocks = sqlite3_column_int(st, 1);
		out->blocks_evaluated = sqlite3_column_int(st, 2);
		out->stop_reason = db_column_strdup(st, 3);
		out->stopped_after = sqlite3_column_int(st, 4);
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading the race", err);
}

void db_race_release(struct db_race *r)
{
	free(r->stop_reason);
	memset(r, 0, sizeof(*r));
}

int db_race_values(struct db *db, int64_t exp_id, const char *metric,
		   struct db_race_value **out, size_t *n, struct ta_err *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT c.id, r.repetition, m.value FROM runs r "
		"JOIN configurations c ON c.id = r.configuration_id "
		"JOIN metrics m ON m.run_id = r.id AND m.name = ?2 "
		"WHERE c.experiment_id = ?1 AND r.status = 'ok' ORDER BY r.order_index", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
	struct db_race_value *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		v[count++] = (struct db_race_value){ sqlite3_column_int64(st, 0),
						     sqlite3_column_int(st, 1),
						     sqlite3_column_double(st, 2) };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return db_error(db, "reading the race's values", err);
	}
	*out = v;
	*n = count;
	return 0;
}

int db_eliminations_list(struct db *db, int64_t exp_id, struct db_elimination **out,
			 size_t *n, struct ta_err *err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT e.configuration_id, c.key, e.after_block, e.against_id, a.key, e.p, "
		"e.ratio FROM eliminations e "
		"JOIN configurations c ON c.id = e.configuration_id "
		"JOIN configurations a ON a.id = e.against_id "
		"WHERE c.experiment_id = ?1 ORDER BY e.after_block, c.idx", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	struct db_elimination *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		struct db_elimination *e = &v[count++];
		e->configuration_id = sqlite3_column_int64(st, 0);
		e->key = db_column_strdup(st, 1);
		e->after_block = sqlite3_column_int(st, 2);
		e->against_id = sqlite3_column_int64(st, 3);
		e->against_key = db_column_strdup(st, 4);
		e->p = sqlite3_column_double(st, 5);
		e->ratio = sqlite3_column_type(st, 6) == SQLITE_NULL ? NAN
			   : sqlite3_column_double(st, 6);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_eliminations_free(v, count);
		return db_error(db, "reading eliminations", err);
	}
	*out = v;
	*n = count;
	return 0;
}

void db_eliminations_free(struct db_elimination *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].against_key);
	}
	free(v);
}

static int record_elims(struct db *db, int blocks, const struct db_race_elim_new *elims,
			size_t nelims, struct ta_err *err)
{
	for (size_t i = 0; i < nelims; i++) {
		const struct db_race_elim_new *e = &elims[i];
		sqlite3_stmt *st = db_prepare(db, "INSERT INTO eliminations (configuration_id, "
					      "after_block, against_id, p, ratio) "
					      "VALUES (?1, ?2, ?3, ?4, ?5)", err);
		if (!st)
			return -1;
		sqlite3_bind_int64(st, 1, e->configuration_id);
		sqlite3_bind_int(st, 2, blocks);
		sqlite3_bind_int64(st, 3, e->against_id);
		sqlite3_bind_double(st, 4, e->p);
		if (isfinite(e->ratio))
			sqlite3_bind_double(st, 5, e->ratio);
		if (step_done(db, st, "storing an elimination", err) < 0)
			return -1;
		/* 'running': a block away on another host keeps its configurations. */
		st = db_prepare(db, "DELETE FROM runs WHERE configuration_id = ?1 AND "
				"repetition >= ?2 AND status NOT IN ('ok', 'running')", err);
		if (!st)
			return -1;
		sqlite3_bind_int64(st, 1, e->configuration_id);
		sqlite3_bind_int(st, 2, blocks);
		if (step_done(db, st, "dropping an eliminated configuration's runs", err) < 0)
			return -1;
	}
	return 0;
}

int db_race_record(struct db *db, int64_t exp_id, int blocks,
		   const struct db_race_elim_new *elims, size_t nelims, const char *stop_reason,
		   struct ta_err *err)
{
	if (db_begin(db, err) < 0)
		return -1;
	if (record_elims(db, blocks, elims, nelims, err) < 0)
		goto fail;
	sqlite3_stmt *st = db_prepare(db, "UPDATE races SET blocks_evaluated = ?2, "
				      "stop_reason = ?3, stopped_after = CASE WHEN ?3 IS NULL "
				      "THEN NULL ELSE ?2 END WHERE experiment_id = ?1", err);
	if (!st)
		goto fail;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_int(st, 2, blocks);
	sqlite3_bind_text(st, 3, stop_reason, -1, SQLITE_STATIC);
	if (step_done(db, st, "storing the race's progress", err) < 0)
		goto fail;
	if (sqlite3_changes(db->handle) != 1) {
		err_set(err, EXIT_FAILURE_RUN, "%s: experiment %lld is not raced", db->path,
			(long long)exp_id);
		goto fail;
	}
	if (stop_reason) {
		st = db_prepare(db, "DELETE FROM runs WHERE status = 'planned' AND "
				"repetition >= ?2 AND configuration_id IN "
				"(SELECT id FROM configurations WHERE experiment_id = ?1)", err);
		if (!st)
			goto fail;
		sqlite3_bind_int64(st, 1, exp_id);
		sqlite3_bind_int(st, 2, blocks);
		if (step_done(db, st, "dropping the runs a stopped race no longer needs", err) < 0)
			goto fail;
	}
	if (db_commit(db, err) < 0)
		goto fail;
	return 0;
fail:
	db_rollback(db);
	return -1;
}

int db_race_extend(struct db *db, int64_t exp_id, int max_blocks, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "UPDATE races SET max_blocks = ?2, stop_reason = NULL, "
				      "stopped_after = NULL WHERE experiment_id = ?1", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_int(st, 2, max_blocks);
	return step_done(db, st, "extending the race", err);
}

int db_runs_append(struct db *db, int64_t exp_id, const struct db_run_new *runs, size_t n,
		   struct ta_err *err)
{
	if (db_begin(db, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *st = db_prepare(db,
			"INSERT INTO runs (configuration_id, repetition, order_index) "
			"SELECT ?1, ?2, COALESCE(MAX(r.order_index), -1) + 1 FROM runs r "
			"JOIN configurations c ON c.id = r.configuration_id "
			"WHERE c.experiment_id = ?3", err);
		if (!st)
			goto fail;
		sqlite3_bind_int64(st, 1, runs[i].configuration_id);
		sqlite3_bind_int(st, 2, runs[i].repetition);
		sqlite3_bind_int64(st, 3, exp_id);
		if (step_done(db, st, "adding a run", err) < 0)
			goto fail;
	}
	if (db_commit(db, err) < 0)
		goto fail;
	return 0;
fail:
	db_rollback(db);
	return -1;
}

int db_runs_blocks(struct db *db, int64_t exp_id, int *blocks, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT COALESCE(MAX(r.repetition), -1) + 1 FROM runs r "
				      "JOIN configurations c ON c.id = r.configuration_id "
				      "WHERE c.experiment_id = ?1", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*blocks = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_error(db, "counting blocks", err);
}
