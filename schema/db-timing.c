/* db-timing: the timing of stored sweeps, for plan's estimate; see db-timing.h. */
#include "db-timing.h"

#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"

/* Whether the database has table `name` (run_counts came with a migration). */
static bool has_table(struct db *db, const char *name)
{
	struct ta_err ignored = { 0 };
	sqlite3_stmt *st = db_prepare(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' "
				      "AND name = ?", &ignored);
	if (!st)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	bool found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/*
 * A sample of e's ok runs: about `sample` in all, the first repetitions of
 * every configuration alike (their noise and shapes differ), read straight
 * from the indexes.
 */
static int read_runs(struct db *db, struct db_timing_experiment *e, size_t sample,
		     struct ta_err *err)
{
	sqlite3_stmt *cst = db_prepare(db, "SELECT id FROM configurations WHERE experiment_id = ?",
				       err);
	sqlite3_stmt *st = cst ? db_prepare(db,
		"SELECT json_extract(r.host_state, '$.runner') = 'host', "
		"(SELECT b.value FROM metrics b WHERE b.run_id = r.id AND b.name = 'boot_seconds' "
		"LIMIT 1), "
		"(julianday(r.finished_at) - julianday(r.started_at)) * 86400.0, w.value "
		"FROM runs r JOIN metrics w ON w.run_id = r.id AND w.name = 'benchmark_seconds' "
		"WHERE r.configuration_id = ? AND r.status = 'ok' AND r.started_at IS NOT NULL "
		"AND r.finished_at IS NOT NULL LIMIT ?", err) : NULL;
	if (!st) {
		sqlite3_finalize(cst);
		return -1;
	}
	int64_t *configs = NULL;
	size_t nconfigs = 0;
	int rc;
	sqlite3_bind_int64(cst, 1, e->id);
	while ((rc = sqlite3_step(cst)) == SQLITE_ROW) {
		configs = xrealloc(configs, (nconfigs + 1) * sizeof(*configs));
		configs[nconfigs++] = sqlite3_column_int64(cst, 0);
	}
	sqlite3_finalize(cst);
	size_t each = nconfigs ? (sample + nconfigs - 1) / nconfigs : 0;
	e->runs = xcalloc(each * nconfigs + 1, sizeof(*e->runs));
	for (size_t i = 0; i < nconfigs && rc == SQLITE_DONE; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, configs[i]);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)each);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct db_timing_run *r = &e->runs[e->nruns++];
			r->host = sqlite3_column_int(st, 0) == 1;
			r->booted = sqlite3_column_type(st, 1) != SQLITE_NULL;
			r->boot_seconds = r->booted ? sqlite3_column_double(st, 1) : 0;
			r->span = sqlite3_column_double(st, 2);
			r->window = sqlite3_column_double(st, 3);
		}
	}
	sqlite3_finalize(st);
	free(configs);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading the timing of runs", err);
}

/*
 * How many runs of e ran and failed (from run_counts when the schema keeps
 * it), and the failed runs' time: read only when there are any, since it
 * takes every run of the experiment.  A failure (a boot that timed out
 * after minutes) is no part of what the sweep costs per run or once.
 */
static int count_ran(struct db *db, bool counts, struct db_timing_experiment *e,
		     struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, counts
		? "SELECT COALESCE(SUM(k.ok + k.failed), 0), COALESCE(SUM(k.failed), 0) "
		  "FROM configurations c JOIN run_counts k ON k.configuration_id = c.id "
		  "WHERE c.experiment_id = ?"
		: "SELECT COUNT(*), COALESCE(SUM(r.status = 'failed'), 0) FROM configurations c "
		  "JOIN runs r ON r.configuration_id = c.id "
		  "WHERE c.experiment_id = ? AND r.status IN ('ok', 'failed')", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, e->id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		e->nran = (size_t)sqlite3_column_int64(st, 0);
		e->nfailed = (size_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db_error(db, "counting runs", err);
	if (!e->nfailed)
		return 0;
	st = db_prepare(db, "SELECT COALESCE(SUM((julianday(r.finished_at) - "
			"julianday(r.started_at)) * 86400.0), 0) FROM configurations c "
			"JOIN runs r ON r.configuration_id = c.id WHERE c.experiment_id = ? "
			"AND r.status = 'failed'", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, e->id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		e->failed_span = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_error(db, "reading the failed runs' time", err);
}

int db_timing_read(struct db *db, const char *hostname, size_t max_experiments, size_t sample,
		   struct db_timing *out, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	/* A sweep spread over Slurm nodes (schema 8) ran its runs side by side elsewhere. */
	sqlite3_stmt *st = db_prepare(db, has_table(db, "distributed")
		? "SELECT id, config_yaml, (julianday(finished_at) - julianday(created_at)) * 86400.0 "
		  "FROM experiments e WHERE finished_at IS NOT NULL AND "
		  "status IN ('done', 'interrupted') AND json_valid(host_facts) AND "
		  "json_extract(host_facts, '$.hostname') = ?1 AND "
		  "NOT EXISTS (SELECT 1 FROM distributed d WHERE d.experiment_id = e.id) "
		  "ORDER BY id DESC LIMIT ?2"
		: "SELECT id, config_yaml, (julianday(finished_at) - julianday(created_at)) * 86400.0 "
		  "FROM experiments WHERE finished_at IS NOT NULL AND "
		  "status IN ('done', 'interrupted') AND json_valid(host_facts) AND "
		  "json_extract(host_facts, '$.hostname') = ?1 ORDER BY id DESC LIMIT ?2", err);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, hostname, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max_experiments);
	out->v = xcalloc(max_experiments + 1, sizeof(*out->v));
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_timing_experiment *e = &out->v[out->n++];
		e->id = sqlite3_column_int64(st, 0);
		e->config_yaml = db_column_strdup(st, 1);
		e->wall = sqlite3_column_double(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_timing_release(out);
		return db_error(db, "reading experiments", err);
	}
	bool counts = has_table(db, "run_counts");
	for (size_t i = 0; i < out->n; i++)
		if (count_ran(db, counts, &out->v[i], err) < 0 ||
		    read_runs(db, &out->v[i], sample, err) < 0) {
			db_timing_release(out);
			return -1;
		}
	return 0;
}

void db_timing_release(struct db_timing *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].config_yaml);
		free(t->v[i].runs);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}
