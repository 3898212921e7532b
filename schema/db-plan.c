/* db-plan: configurations and planned runs; see db-plan.h. */
#include "db-plan.h"

#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "db-config.h"

int db_plan_store(struct db *db, int64_t exp_id, const struct config_record *configs,
		  size_t nconfigs, const struct db_plan_run *runs, size_t nruns,
		  int64_t *config_ids_out, struct ta_err *err)
{
	sqlite3_stmt *cst = NULL, *rst = NULL;
	int64_t *ids = xcalloc(nconfigs ? nconfigs : 1, sizeof(*ids));
	int rc = -1;

	if (db_begin(db, err) < 0)
		goto out;
	cst = db_config_insert_prepare(db, err);
	rst = db_prepare(db,
		"INSERT INTO runs (configuration_id, repetition, order_index) VALUES (?,?,?)",
		err);
	if (!cst || !rst)
		goto fail;
	for (size_t i = 0; i < nconfigs; i++)
		if (db_config_insert(db, cst, exp_id, &configs[i], &ids[i], err) < 0)
			goto fail;
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
	struct strbuf sql = STRBUF_INIT;
	strbuf_addstr(&sql, "SELECT c.id, ");
	db_config_columns(&sql, "c");
	strbuf_addstr(&sql, ", COUNT(r.id), COALESCE(SUM(r.status = 'ok'), 0), "
		      "COALESCE(SUM(r.status = 'failed'), 0), "
		      "COALESCE(SUM(r.status = 'interrupted'), 0), "
		      "COALESCE(SUM(r.status IN ('planned', 'running')), 0) "
		      "FROM configurations c LEFT JOIN runs r ON r.configuration_id = c.id "
		      "WHERE c.experiment_id = ? GROUP BY c.id ORDER BY c.idx");
	sqlite3_stmt *st = db_prepare(db, strbuf_str(&sql), err);
	strbuf_release(&sql);
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
		int col = db_config_read(st, 1, &c->rec);
		c->nruns = sqlite3_column_int(st, col++);
		c->nok = sqlite3_column_int(st, col++);
		c->nfailed = sqlite3_column_int(st, col++);
		c->ninterrupted = sqlite3_column_int(st, col++);
		c->npending = sqlite3_column_int(st, col);
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
	for (size_t i = 0; i < n; i++)
		config_record_release(&v[i].rec);
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
