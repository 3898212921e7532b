/* db-results: reading an experiment whole, and fixture inserts; see db-results.h. */
#include "db-results.h"

#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "db-config.h"
#include "db-race.h"

/* id -> object, sorted by id, for attaching child rows to their parents. */
struct id_index {
	int64_t id;
	void *ptr;
};

static int cmp_id_index(const void *a, const void *b)
{
	int64_t x = ((const struct id_index *)a)->id, y = ((const struct id_index *)b)->id;
	return (x > y) - (x < y);
}

static void *id_index_find(const struct id_index *v, size_t n, int64_t id)
{
	struct id_index key = { id, NULL };
	struct id_index *hit = bsearch(&key, v, n, sizeof(*v), cmp_id_index);
	return hit ? hit->ptr : NULL;
}

static int column_int_or(sqlite3_stmt *st, int col, int dflt)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? dflt : sqlite3_column_int(st, col);
}

static int read_configs(struct db *db, struct db_results *r, struct ta_err *err)
{
	struct strbuf sql = STRBUF_INIT;
	strbuf_addstr(&sql, "SELECT id, ");
	db_config_columns(&sql, NULL);
	strbuf_addstr(&sql, " FROM configurations WHERE experiment_id = ? ORDER BY idx");
	sqlite3_stmt *st = db_prepare(db, strbuf_str(&sql), err);
	strbuf_release(&sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->exp.id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->configs = xrealloc(r->configs, (r->nconfigs + 1) * sizeof(*r->configs));
		struct db_results_config *c = &r->configs[r->nconfigs++];
		memset(c, 0, sizeof(*c));
		c->id = sqlite3_column_int64(st, 0);
		db_config_read(st, 1, &c->rec);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading configurations", err);
}

static int read_runs(struct db *db, struct db_results *r, const struct id_index *cidx,
		     struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT r.id, r.configuration_id, r.repetition, r.order_index, r.status, "
		"r.error, r.started_at, r.finished_at, r.topology_ok, r.lost_events, r.host "
		"FROM runs r JOIN configurations c ON c.id = r.configuration_id "
		"WHERE c.experiment_id = ? ORDER BY c.idx, r.repetition", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->exp.id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_results_config *c = id_index_find(cidx, r->nconfigs,
							   sqlite3_column_int64(st, 1));
		if (!c)
			continue;
		c->runs = xrealloc(c->runs, (c->nruns + 1) * sizeof(*c->runs));
		struct db_results_run *run = &c->runs[c->nruns++];
		memset(run, 0, sizeof(*run));
		run->id = sqlite3_column_int64(st, 0);
		run->repetition = sqlite3_column_int(st, 2);
		run->order_index = sqlite3_column_int(st, 3);
		run->status = db_column_strdup(st, 4);
		run->error = db_column_strdup(st, 5);
		run->started_at = db_column_strdup(st, 6);
		run->finished_at = db_column_strdup(st, 7);
		run->topology_ok = column_int_or(st, 8, -1);
		run->lost_events = sqlite3_column_type(st, 9) == SQLITE_NULL
			? -1 : sqlite3_column_int64(st, 9);
		run->host = db_column_strdup(st, 10);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading runs", err);
}

static int read_metrics(struct db *db, struct db_results *r, const struct id_index *ridx,
			size_t nruns, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT m.run_id, m.name, m.value, m.unit, m.higher_is_better, m.direction "
		"FROM metrics m JOIN runs r ON r.id = m.run_id "
		"JOIN configurations c ON c.id = r.configuration_id "
		"WHERE c.experiment_id = ? ORDER BY m.run_id, m.id", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->exp.id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_results_run *run = id_index_find(ridx, nruns, sqlite3_column_int64(st, 0));
		if (!run)
			continue;
		run->metrics = xrealloc(run->metrics, (run->nmetrics + 1) * sizeof(*run->metrics));
		struct db_results_metric *m = &run->metrics[run->nmetrics++];
		m->name = db_column_strdup(st, 1);
		m->value = sqlite3_column_double(st, 2);
		m->unit = db_column_strdup(st, 3);
		m->higher_is_better = column_int_or(st, 4, -1);
		m->dir = metric_dir_from_name((const char *)sqlite3_column_text(st, 5));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "reading metrics", err);

	/*
	 * A run may store per-vCPU rows, an all-vCPU (NULL) row, or both: the
	 * NULL row is the total when present, else the per-vCPU rows add up.
	 */
	st = db_prepare(db,
		"SELECT x.run_id, x.source, x.reason, "
		"CASE WHEN SUM(x.vcpu IS NULL) > 0 "
		"THEN SUM(CASE WHEN x.vcpu IS NULL THEN x.count ELSE 0 END) "
		"ELSE SUM(x.count) END AS total "
		"FROM exit_counts x JOIN runs r ON r.id = x.run_id "
		"JOIN configurations c ON c.id = r.configuration_id "
		"WHERE c.experiment_id = ? GROUP BY x.run_id, x.source, x.reason "
		"ORDER BY x.run_id, total DESC, x.reason", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->exp.id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_results_run *run = id_index_find(ridx, nruns, sqlite3_column_int64(st, 0));
		if (!run)
			continue;
		run->exits = xrealloc(run->exits, (run->nexits + 1) * sizeof(*run->exits));
		struct db_results_exit *e = &run->exits[run->nexits++];
		e->source = db_column_strdup(st, 1);
		e->reason = db_column_strdup(st, 2);
		e->count = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading exit counts", err);
}

/* The race's state and each configuration's elimination (migration 6). */
static int read_race(struct db *db, struct db_results *out, struct ta_err *err)
{
	struct db_race race;
	if (db_race_get(db, out->exp.id, &race, &out->raced, err) < 0)
		return -1;
	out->race_first_test = race.first_test;
	out->race_max_blocks = race.max_blocks;
	out->race_stop_reason = race.stop_reason;
	out->race_stopped_after = race.stopped_after;
	struct db_elimination *el;
	size_t nel;
	if (db_eliminations_list(db, out->exp.id, &el, &nel, err) < 0)
		return -1;
	for (size_t k = 0; k < nel; k++) {
		struct db_results_config *c = NULL;
		const char *against = NULL;
		for (size_t i = 0; i < out->nconfigs; i++) {
			if (out->configs[i].id == el[k].configuration_id)
				c = &out->configs[i];
			if (out->configs[i].id == el[k].against_id)
				against = out->configs[i].rec.key;
		}
		if (c) {
			c->eliminated_block = el[k].after_block;
			c->eliminated_against = against;
			c->eliminated_p = el[k].p;
		}
	}
	db_eliminations_free(el, nel);
	return 0;
}

int db_results_load(struct db *db, const char *id_or_name, struct db_results *out,
		    struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	if (db_experiment_get(db, id_or_name, &out->exp, err) < 0)
		return -1;
	struct id_index *cidx = NULL, *ridx = NULL;
	size_t nruns = 0;
	int rc = -1;
	if (read_configs(db, out, err) < 0)
		goto done;
	cidx = xmalloc((out->nconfigs + 1) * sizeof(*cidx));
	for (size_t i = 0; i < out->nconfigs; i++)
		cidx[i] = (struct id_index){ out->configs[i].id, &out->configs[i] };
	qsort(cidx, out->nconfigs, sizeof(*cidx), cmp_id_index);
	if (read_runs(db, out, cidx, err) < 0 ||
	    read_race(db, out, err) < 0)
		goto done;
	for (size_t i = 0; i < out->nconfigs; i++)
		nruns += out->configs[i].nruns;
	ridx = xmalloc((nruns + 1) * sizeof(*ridx));
	nruns = 0;
	for (size_t i = 0; i < out->nconfigs; i++)
		for (size_t j = 0; j < out->configs[i].nruns; j++)
			ridx[nruns++] = (struct id_index){ out->configs[i].runs[j].id,
							   &out->configs[i].runs[j] };
	qsort(ridx, nruns, sizeof(*ridx), cmp_id_index);
	rc = read_metrics(db, out, ridx, nruns, err);
done:
	free(cidx);
	free(ridx);
	if (rc < 0)
		db_results_release(out);
	return rc;
}

static void run_clear(struct db_results_run *run)
{
	free(run->status);
	free(run->error);
	free(run->started_at);
	free(run->finished_at);
	free(run->host);
	for (size_t i = 0; i < run->nmetrics; i++) {
		free(run->metrics[i].name);
		free(run->metrics[i].unit);
	}
	free(run->metrics);
	for (size_t i = 0; i < run->nexits; i++) {
		free(run->exits[i].source);
		free(run->exits[i].reason);
	}
	free(run->exits);
}

void db_results_release(struct db_results *r)
{
	for (size_t i = 0; i < r->nconfigs; i++) {
		struct db_results_config *c = &r->configs[i];
		config_record_release(&c->rec);
		for (size_t j = 0; j < c->nruns; j++)
			run_clear(&c->runs[j]);
		free(c->runs);
	}
	free(r->configs);
	free(r->race_stop_reason);
	db_experiment_release(&r->exp);
	memset(r, 0, sizeof(*r));
}

const struct db_results_metric *db_results_run_metric(const struct db_results_run *run, const char *name)
{
	for (size_t i = 0; i < run->nmetrics; i++)
		if (!strcmp(run->metrics[i].name, name))
			return &run->metrics[i];
	return NULL;
}

/* ---- fixture inserts ---------------------------------------------------- */

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
