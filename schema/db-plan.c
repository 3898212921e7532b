/* db-plan: configurations and planned runs; see db-plan.h. */
#include "db-plan.h"

#include <stdlib.h>
#include <string.h>

#include "../model/knob-table.h"
#include "../util/strbuf.h"

/*
 * The INSERT for a configuration: the fixed columns, then each knob of the
 * knob table that has a typed column, in table order.
 */
#define CONFIG_FIXED_COLUMNS 12
static char *config_insert_sql(void)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "INSERT INTO configurations (experiment_id, idx, key, vcpus, sockets, "
		      "dies, cores, threads, pinning, noise, factors, is_baseline");
	size_t ncols = CONFIG_FIXED_COLUMNS;
	for (size_t i = 0; i < knob_count(); i++)
		if (knob_at(i)->db_column) {
			strbuf_addf(&sb, ", %s", knob_at(i)->db_column);
			ncols++;
		}
	strbuf_addstr(&sb, ") VALUES (?");
	for (size_t i = 1; i < ncols; i++)
		strbuf_addstr(&sb, ",?");
	strbuf_addch(&sb, ')');
	return strbuf_detach(&sb);
}

/* Binds the typed knob columns from position pos on (NULL: the sweep leaves it alone). */
static void bind_knob_columns(sqlite3_stmt *st, int pos, const struct db_plan_config *c)
{
	for (size_t t = 0; t < knob_count(); t++) {
		const struct knob *k = knob_at(t);
		if (!k->db_column)
			continue;
		const char *value = NULL;
		for (size_t i = 0; i < c->nknobs && !value; i++)
			if (!strcmp(c->knob_names[i], k->name))
				value = c->knob_values[i];
		if (!value)
			sqlite3_bind_null(st, pos);
		else if (k->db_type == KNOB_COLUMN_INTEGER)
			sqlite3_bind_int64(st, pos, strtoll(value, NULL, 10));
		else
			sqlite3_bind_text(st, pos, value, -1, SQLITE_TRANSIENT);
		pos++;
	}
}

int db_plan_store(struct db *db, int64_t exp_id, const struct db_plan_config *configs,
		  size_t nconfigs, const struct db_plan_run *runs, size_t nruns,
		  int64_t *config_ids_out, struct ta_err *err)
{
	sqlite3_stmt *cst = NULL, *rst = NULL;
	int64_t *ids = xcalloc(nconfigs ? nconfigs : 1, sizeof(*ids));
	int rc = -1;

	if (db_begin(db, err) < 0)
		goto out;
	char *insert = config_insert_sql();
	cst = db_prepare(db, insert, err);
	free(insert);
	rst = db_prepare(db,
		"INSERT INTO runs (configuration_id, repetition, order_index) VALUES (?,?,?)",
		err);
	if (!cst || !rst)
		goto fail;
	for (size_t i = 0; i < nconfigs; i++) {
		const struct db_plan_config *c = &configs[i];
		sqlite3_reset(cst);
		sqlite3_bind_int64(cst, 1, exp_id);
		sqlite3_bind_int64(cst, 2, (sqlite3_int64)c->idx);
		sqlite3_bind_text(cst, 3, c->key, -1, SQLITE_STATIC);
		sqlite3_bind_int(cst, 4, c->vcpus);
		sqlite3_bind_int(cst, 5, c->sockets);
		sqlite3_bind_int(cst, 6, c->dies);
		sqlite3_bind_int(cst, 7, c->cores);
		sqlite3_bind_int(cst, 8, c->threads);
		sqlite3_bind_text(cst, 9, c->pinning, -1, SQLITE_STATIC);
		sqlite3_bind_text(cst, 10, c->noise, -1, SQLITE_STATIC);
		sqlite3_bind_text(cst, 11, c->factors_json, -1, SQLITE_STATIC);
		sqlite3_bind_int(cst, 12, c->is_baseline);
		bind_knob_columns(cst, CONFIG_FIXED_COLUMNS + 1, c);
		if (sqlite3_step(cst) != SQLITE_DONE) {
			db_error(db, "storing a configuration", err);
			goto fail;
		}
		ids[i] = sqlite3_last_insert_rowid(db->handle);
	}
	for (size_t i = 0; i < nruns; i++) {
		const struct db_plan_run *r = &runs[i];
		if (r->config >= nconfigs) {
			err_set(err, EXIT_FAILURE_RUN, "storing a planned run: configuration %zu "
				"of %zu", r->config, nconfigs);
			goto fail;
		}
		sqlite3_reset(rst);
		sqlite3_bind_int64(rst, 1, ids[r->config]);
		sqlite3_bind_int(rst, 2, r->repetition);
		sqlite3_bind_int64(rst, 3, (sqlite3_int64)r->order);
		if (sqlite3_step(rst) != SQLITE_DONE) {
			db_error(db, "storing a planned run", err);
			goto fail;
		}
	}
	sqlite3_finalize(cst);
	sqlite3_finalize(rst);
	cst = rst = NULL;
	if (db_commit(db, err) < 0)
		goto fail;
	if (config_ids_out)
		memcpy(config_ids_out, ids, nconfigs * sizeof(*ids));
	rc = 0;
	goto out;
fail:
	sqlite3_finalize(cst);
	sqlite3_finalize(rst);
	db_rollback(db);
out:
	free(ids);
	return rc;
}

int db_config_summaries(struct db *db, int64_t exp_id, struct db_config_summary **out,
			size_t *n, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT c.id, c.idx, c.key, c.vcpus, c.sockets, c.dies, c.cores, c.threads, "
		"c.pinning, c.noise, c.factors, c.is_baseline, COUNT(r.id), "
		"COALESCE(SUM(r.status = 'ok'), 0), COALESCE(SUM(r.status = 'failed'), 0), "
		"COALESCE(SUM(r.status = 'interrupted'), 0), "
		"COALESCE(SUM(r.status IN ('planned', 'running')), 0) "
		"FROM configurations c LEFT JOIN runs r ON r.configuration_id = c.id "
		"WHERE c.experiment_id = ? GROUP BY c.id ORDER BY c.idx", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	struct db_config_summary *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		struct db_config_summary *c = &v[count++];
		c->id = sqlite3_column_int64(st, 0);
		c->idx = sqlite3_column_int(st, 1);
		c->key = db_column_strdup(st, 2);
		c->vcpus = sqlite3_column_int(st, 3);
		c->sockets = sqlite3_column_int(st, 4);
		c->dies = sqlite3_column_int(st, 5);
		c->cores = sqlite3_column_int(st, 6);
		c->threads = sqlite3_column_int(st, 7);
		c->pinning = db_column_strdup(st, 8);
		c->noise = db_column_strdup(st, 9);
		c->factors = db_column_strdup(st, 10);
		c->baseline = sqlite3_column_int(st, 11) != 0;
		c->nruns = sqlite3_column_int(st, 12);
		c->nok = sqlite3_column_int(st, 13);
		c->nfailed = sqlite3_column_int(st, 14);
		c->ninterrupted = sqlite3_column_int(st, 15);
		c->npending = sqlite3_column_int(st, 16);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_config_summaries_free(v, count);
		return db_error(db, "reading configurations", err);
	}
	*out = v;
	*n = count;
	return 0;
}

void db_config_summaries_free(struct db_config_summary *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].pinning);
		free(v[i].noise);
		free(v[i].factors);
	}
	free(v);
}

int db_run_problems(struct db *db, int64_t exp_id, struct db_run_problem **out,
		    size_t *n, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT r.id, c.key, r.repetition, r.status, r.error, r.host FROM runs r "
		"JOIN configurations c ON c.id = r.configuration_id "
		"WHERE c.experiment_id = ? AND r.status IN ('failed', 'interrupted') "
		"ORDER BY r.order_index", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	struct db_run_problem *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		struct db_run_problem *p = &v[count++];
		p->run_id = sqlite3_column_int64(st, 0);
		p->key = db_column_strdup(st, 1);
		p->repetition = sqlite3_column_int(st, 2);
		p->status = db_column_strdup(st, 3);
		p->error = db_column_strdup(st, 4);
		p->host = db_column_strdup(st, 5);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_run_problems_free(v, count);
		return db_error(db, "reading failed runs", err);
	}
	*out = v;
	*n = count;
	return 0;
}

void db_run_problems_free(struct db_run_problem *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].status);
		free(v[i].error);
		free(v[i].host);
	}
	free(v);
}
