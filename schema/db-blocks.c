/* db-blocks: distributed sweeps' attempts and result files; see db-blocks.h. */
#include "db-blocks.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "../util/metricdir.h"
#include "../util/strbuf.h"

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

int db_distributed_start(struct db *db, int64_t exp_id, const struct db_distributed *d,
			 struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "INSERT INTO distributed (experiment_id, kind, tag, "
				      "work_dir, settings) VALUES (?, ?, ?, ?, ?)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_text(st, 2, d->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, d->tag, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, d->work_dir, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, d->settings, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "recording the distributed sweep", err);
}

int db_distributed_get(struct db *db, int64_t exp_id, struct db_distributed *out,
		       bool *found, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	*found = false;
	sqlite3_stmt *st = db_prepare(db, "SELECT kind, tag, work_dir, settings FROM distributed "
				      "WHERE experiment_id = ?", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = true;
		out->kind = db_column_strdup(st, 0);
		out->tag = db_column_strdup(st, 1);
		out->work_dir = db_column_strdup(st, 2);
		out->settings = db_column_strdup(st, 3);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0
		: db_error(db, "reading the distributed sweep", err);
}

long db_distributed_setting_int(const struct db_distributed *d, const char *key, long def)
{
	json_object *o = d->settings ? json_tokener_parse(d->settings) : NULL, *v;
	long r = def;
	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int))
		r = (long)json_object_get_int64(v);
	json_object_put(o);
	return r;
}

char *db_distributed_setting_str(const struct db_distributed *d, const char *key)
{
	json_object *o = d->settings ? json_tokener_parse(d->settings) : NULL, *v;
	char *r = NULL;
	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		r = xstrdup(json_object_get_string(v));
	json_object_put(o);
	return r;
}

void db_distributed_release(struct db_distributed *d)
{
	free(d->kind);
	free(d->tag);
	free(d->work_dir);
	free(d->settings);
	memset(d, 0, sizeof(*d));
}

#define ATTEMPT_COLUMNS "id, block, attempt, job_name, job_id, node, state, slurm_state, " \
	"outcome, result_file, error, submitted_at, started_at, finished_at"

static void attempt_from_row(sqlite3_stmt *st, struct db_attempt *a)
{
	a->id = sqlite3_column_int64(st, 0);
	a->block = sqlite3_column_int(st, 1);
	a->attempt = sqlite3_column_int(st, 2);
	a->job_name = db_column_strdup(st, 3);
	a->job_id = db_column_strdup(st, 4);
	a->node = db_column_strdup(st, 5);
	a->state = db_column_strdup(st, 6);
	a->slurm_state = db_column_strdup(st, 7);
	a->outcome = db_column_strdup(st, 8);
	a->result_file = db_column_strdup(st, 9);
	a->error = db_column_strdup(st, 10);
	a->submitted_at = db_column_strdup(st, 11);
	a->started_at = db_column_strdup(st, 12);
	a->finished_at = db_column_strdup(st, 13);
}

int db_attempts_list(struct db *db, int64_t exp_id, struct db_attempt **out, size_t *n,
		     struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT " ATTEMPT_COLUMNS " FROM block_attempts "
				      "WHERE experiment_id = ? ORDER BY block, attempt", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	struct db_attempt *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		attempt_from_row(st, &v[count++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_attempts_free(v, count);
		return db_error(db, "listing block attempts", err);
	}
	*out = v;
	*n = count;
	return 0;
}

static void db_attempt_release(struct db_attempt *a)
{
	free(a->job_name);
	free(a->job_id);
	free(a->node);
	free(a->state);
	free(a->slurm_state);
	free(a->outcome);
	free(a->result_file);
	free(a->error);
	free(a->submitted_at);
	free(a->started_at);
	free(a->finished_at);
	memset(a, 0, sizeof(*a));
}

void db_attempts_free(struct db_attempt *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		db_attempt_release(&v[i]);
	free(v);
}

/* Whether attempt a ended (done or failed) before b: by finished_at, then id. */
static bool ended_before(const struct db_attempt *a, const struct db_attempt *b)
{
	int c = strcmp(a->finished_at, b->finished_at);
	return c < 0 || (c == 0 && a->id < b->id);
}

static bool attempt_ended(const struct db_attempt *a)
{
	return a->node && a->finished_at && a->state &&
	       (!strcmp(a->state, "done") || !strcmp(a->state, "failed"));
}

size_t db_attempts_bad_nodes(const struct db_attempt *a, size_t n, int k, const char **out)
{
	size_t nout = 0;
	if (k <= 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!attempt_ended(&a[i]))
			continue;
		bool known = false;
		for (size_t o = 0; o < nout && !known; o++)
			known = !strcmp(out[o], a[i].node);
		if (known)
			continue;
		/* Its attempts that failed after its last one that was done. */
		const struct db_attempt *last_ok = NULL;
		for (size_t j = 0; j < n; j++)
			if (attempt_ended(&a[j]) && !strcmp(a[j].node, a[i].node) &&
			    !strcmp(a[j].state, "done") && (!last_ok || ended_before(last_ok, &a[j])))
				last_ok = &a[j];
		int blocks = 0;
		for (size_t j = 0; j < n; j++) {
			if (!attempt_ended(&a[j]) || strcmp(a[j].node, a[i].node) ||
			    strcmp(a[j].state, "failed") || (last_ok && ended_before(&a[j], last_ok)))
				continue;
			bool counted = false;	/* one block failing twice counts once */
			for (size_t m = 0; m < j && !counted; m++)
				counted = attempt_ended(&a[m]) && !strcmp(a[m].node, a[j].node) &&
					  !strcmp(a[m].state, "failed") && a[m].block == a[j].block &&
					  (!last_ok || !ended_before(&a[m], last_ok));
			blocks += !counted;
		}
		if (blocks >= k)
			out[nout++] = a[i].node;
	}
	return nout;
}

/* When an attempt began, as far as is known: started, else submitted. */
static const char *began(const struct db_attempt *a)
{
	return a->started_at ? a->started_at : a->submitted_at;
}

static bool killed(const struct db_attempt *a)
{
	return a->slurm_state && (!strcmp(a->slurm_state, "NODE_FAIL") ||
				  !strcmp(a->slurm_state, "OUT_OF_MEMORY"));
}

size_t db_attempts_dirty(const struct db_attempt *a, size_t n, size_t *out)
{
	size_t nout = 0;
	for (size_t i = 0; i < n; i++) {
		const struct db_attempt *k = &a[i];
		/* A job with a node ran there (a pending job has none). */
		if (!k->node || !began(k) || !killed(k))
			continue;
		bool mended = false, later_killed = false;
		for (size_t j = 0; j < n && !mended; j++) {
			const struct db_attempt *l = &a[j];
			if (j == i || !l->node || strcmp(l->node, k->node) || !began(l))
				continue;
			int c = strcmp(began(l), began(k));
			bool later = c > 0 || (c == 0 && l->id > k->id);
			mended = later && l->state && !strcmp(l->state, "done");
			later_killed |= later && killed(l);
		}
		if (!mended && !later_killed)
			out[nout++] = i;	/* the node's last killed worker */
	}
	return nout;
}

int db_attempt_insert(struct db *db, int64_t exp_id, int block, int attempt,
		      const char *job_name, int64_t *id_out, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "INSERT INTO block_attempts (experiment_id, block, "
				      "attempt, job_name) VALUES (?, ?, ?, ?)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_int(st, 2, block);
	sqlite3_bind_int(st, 3, attempt);
	sqlite3_bind_text(st, 4, job_name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "recording a block attempt", err);
	*id_out = sqlite3_last_insert_rowid(db->handle);
	return 0;
}

int db_attempt_update(struct db *db, int64_t id, const struct db_attempt_set *s,
		      struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE block_attempts SET job_id = COALESCE(?1, job_id), "
		"node = COALESCE(?2, node), state = COALESCE(?3, state), "
		"slurm_state = COALESCE(?4, slurm_state), error = COALESCE(?5, error), "
		"result_file = COALESCE(?7, result_file), "
		"started_at = CASE WHEN ?3 = 'running' AND started_at IS NULL THEN " NOW
		" ELSE started_at END, "
		"finished_at = CASE WHEN ?3 IN ('done', 'failed', 'cancelled') AND "
		"finished_at IS NULL THEN " NOW " ELSE finished_at END WHERE id = ?6", err);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, s->job_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, s->node, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, s->state, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, s->slurm_state, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, s->error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, id);
	sqlite3_bind_text(st, 7, s->result_file, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "updating a block attempt", err);
}

int db_block_runs_dispatch(struct db *db, const int64_t *run_ids, size_t n,
			   struct ta_err *err)
{
	if (db_begin(db, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (db_run_mark_running(db, run_ids[i], err) < 0) {
			db_rollback(db);
			return -1;
		}
	if (db_commit(db, err) < 0) {
		db_rollback(db);
		return -1;
	}
	return 0;
}

/* Runs sql (binding ?1 exp_id, ?2 block, ?3 and ?4 the texts) inside the caller's transaction. */
static int block_exec(struct db *db, const char *sql, int64_t exp_id, int block,
		      const char *t3, const char *t4, const char *what, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_int(st, 2, block);
	if (t3)
		sqlite3_bind_text(st, 3, t3, -1, SQLITE_STATIC);
	if (t4)
		sqlite3_bind_text(st, 4, t4, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, what, err);
}

#define BLOCK_RUNS "configuration_id IN (SELECT id FROM configurations WHERE " \
	"experiment_id = ?1) AND repetition = ?2"

int db_block_runs_end(struct db *db, int64_t exp_id, int block, const char *status,
		      const char *error, int *nended, struct ta_err *err)
{
	if (db_begin(db, err) < 0)
		return -1;
	if (block_exec(db, "UPDATE runs SET status = ?3, error = ?4, finished_at = " NOW
		       " WHERE status = 'running' AND " BLOCK_RUNS, exp_id, block, status, error,
		       "ending a block's runs", err) < 0 ||
	    (*nended = sqlite3_changes(db->handle), 0) ||
	    block_exec(db, "DELETE FROM runs WHERE status <> 'ok' AND " BLOCK_RUNS
		       " AND configuration_id IN (SELECT configuration_id FROM eliminations "
		       "WHERE after_block <= ?2)", exp_id, block, NULL, NULL,
		       "deleting an eliminated configuration's runs", err) < 0 ||
	    db_commit(db, err) < 0) {
		db_rollback(db);
		return -1;
	}
	return 0;
}

int db_block_runs_drop(struct db *db, int64_t exp_id, int block, struct ta_err *err)
{
	if (db_begin(db, err) < 0)
		return -1;
	if (block_exec(db, "DELETE FROM runs WHERE status <> 'ok' AND " BLOCK_RUNS, exp_id, block,
		       NULL, NULL, "dropping a block's runs", err) < 0 || db_commit(db, err) < 0) {
		db_rollback(db);
		return -1;
	}
	return 0;
}

/* ---- result files -------------------------------------------------------- */

static void block_run_release(struct db_block_run *b)
{
	struct db_run_result *r = &b->r;
	free(b->key);
	free((char *)r->status);
	free((char *)r->error);
	free((char *)r->host_state);
	free((char *)r->guest_topology);
	free((char *)r->host);
	free((char *)r->started_at);
	free((char *)r->finished_at);
	for (size_t i = 0; i < r->nmetrics; i++) {
		free((char *)r->metrics[i].name);
		free((char *)r->metrics[i].unit);
	}
	free((void *)r->metrics);
	for (size_t i = 0; i < r->nexits; i++) {
		free((char *)r->exits[i].source);
		free((char *)r->exits[i].reason);
	}
	free((void *)r->exits);
	for (size_t i = 0; i < r->nartifacts; i++) {
		free((char *)r->artifacts[i].name);
		free((void *)r->artifacts[i].content);
	}
	free((void *)r->artifacts);
	for (size_t i = 0; i < b->narts; i++)
		free(b->arts[i].name);
	free(b->arts);
}

void db_block_result_release(struct db_block_result *r)
{
	free(r->path);
	free(r->job_name);
	free(r->job_id);
	free(r->node);
	free(r->started_at);
	free(r->finished_at);
	for (size_t i = 0; i < r->nruns; i++)
		block_run_release(&r->runs[i]);
	free(r->runs);
	memset(r, 0, sizeof(*r));
}

/* The run of res with the worker's id run_id, or NULL. */
static struct db_block_run *result_run(struct db_block_result *res, int64_t run_id)
{
	for (size_t i = 0; i < res->nruns; i++)
		if (res->runs[i].r.run_id == run_id)
			return &res->runs[i];
	return NULL;
}

static int read_attempt(struct db *db, struct db_block_result *out, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT block, attempt, job_name, job_id, node, "
				      "started_at, finished_at FROM block_attempts", err);
	if (!st)
		return -1;
	int rows = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && ++rows == 1) {
		out->block = sqlite3_column_int(st, 0);
		out->attempt = sqlite3_column_int(st, 1);
		out->job_name = db_column_strdup(st, 2);
		out->job_id = db_column_strdup(st, 3);
		out->node = db_column_strdup(st, 4);
		out->started_at = db_column_strdup(st, 5);
		out->finished_at = db_column_strdup(st, 6);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_error(db, "reading the result's attempt", err);
	if (rows != 1 || !out->job_name || !out->node)
		return err_set(err, EXIT_FAILURE_RUN, "%s: not a block result (%d attempt rows)",
			       db->path, rows);
	return 0;
}

static int read_runs(struct db *db, struct db_block_result *out, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT r.id, c.key, r.repetition, r.status, r.error, r.started_at, "
		"r.finished_at, r.host_state, r.guest_topology, r.topology_ok, r.lost_events, "
		"r.host FROM runs r JOIN configurations c ON c.id = r.configuration_id "
		"ORDER BY r.order_index", err);
	if (!st)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		out->runs = xrealloc(out->runs, (out->nruns + 1) * sizeof(*out->runs));
		struct db_block_run *b = &out->runs[out->nruns++];
		memset(b, 0, sizeof(*b));
		struct db_run_result *r = &b->r;
		r->run_id = sqlite3_column_int64(st, 0);
		b->key = db_column_strdup(st, 1);
		b->repetition = sqlite3_column_int(st, 2);
		r->status = db_column_strdup(st, 3);
		r->error = db_column_strdup(st, 4);
		r->started_at = db_column_strdup(st, 5);
		r->finished_at = db_column_strdup(st, 6);
		r->host_state = db_column_strdup(st, 7);
		r->guest_topology = db_column_strdup(st, 8);
		r->topology_ok = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1
				 : sqlite3_column_int(st, 9);
		r->lost_events = sqlite3_column_type(st, 10) == SQLITE_NULL ? -1
				 : sqlite3_column_int64(st, 10);
		r->host = db_column_strdup(st, 11);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading the result's runs", err);
}

static int read_children(struct db *db, struct db_block_result *out, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT run_id, name, value, unit, direction "
				      "FROM metrics ORDER BY id", err);
	if (!st)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_block_run *b = result_run(out, sqlite3_column_int64(st, 0));
		if (!b)
			continue;
		struct db_run_result *r = &b->r;
		struct db_metric *m = xrealloc((void *)r->metrics, (r->nmetrics + 1) * sizeof(*m));
		r->metrics = m;
		char *dir = db_column_strdup(st, 4);
		m[r->nmetrics++] = (struct db_metric){ .name = db_column_strdup(st, 1),
						       .value = sqlite3_column_double(st, 2),
						       .unit = db_column_strdup(st, 3),
						       .dir = metric_dir_from_name(dir) };
		free(dir);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "reading the result's metrics", err);

	st = db_prepare(db, "SELECT run_id, source, vcpu, reason, count, time_pairs, time_ns "
			"FROM exit_counts ORDER BY id", err);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_block_run *b = result_run(out, sqlite3_column_int64(st, 0));
		if (!b)
			continue;
		struct db_run_result *r = &b->r;
		struct db_exit_count *x = xrealloc((void *)r->exits, (r->nexits + 1) * sizeof(*x));
		r->exits = x;
		x[r->nexits++] = (struct db_exit_count){
			.source = db_column_strdup(st, 1),
			.vcpu = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1
				: sqlite3_column_int64(st, 2),
			.reason = db_column_strdup(st, 3),
			.count = (uint64_t)sqlite3_column_int64(st, 4),
			/* NULL reads as 0: no time (db_exit_count). */
			.time_pairs = sqlite3_column_int64(st, 5),
			.time_ns = sqlite3_column_int64(st, 6) };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "reading the result's exit counts", err);

	st = db_prepare(db, "SELECT run_id, name, id, length(content) FROM artifacts "
			"ORDER BY id", err);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_block_run *b = result_run(out, sqlite3_column_int64(st, 0));
		if (!b)
			continue;
		b->arts = xrealloc(b->arts, (b->narts + 1) * sizeof(*b->arts));
		b->arts[b->narts++] = (struct db_block_artifact){ .name = db_column_strdup(st, 1),
								  .src_id = sqlite3_column_int64(st, 2),
								  .len = sqlite3_column_int64(st, 3) };
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading the result's artifacts", err);
}

int db_block_result_read(const char *path, struct db_block_result *out, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	struct db *db = db_open_readonly(path, err);
	if (!db)
		return -1;
	out->path = xstrdup(path);
	int rc = -1;
	if (db->version != db_schema_version())
		err_set(err, EXIT_FAILURE_RUN, "%s: a result of schema version %d; this "
			"topoadvisor reads %d (run the same version on the nodes)", path,
			db->version, db_schema_version());
	else if (read_attempt(db, out, err) == 0 && read_runs(db, out, err) == 0 &&
		 read_children(db, out, err) == 0)
		rc = 0;
	for (size_t i = 0; rc == 0 && i < out->nruns; i++) {
		const char *s = out->runs[i].r.status;
		if (strcmp(s, "ok") && strcmp(s, "failed"))
			rc = err_set(err, EXIT_FAILURE_RUN, "%s: an incomplete block (run of %s "
				     "is %s)", path, out->runs[i].key, s);
		else if (out->runs[i].repetition != out->block)
			rc = err_set(err, EXIT_FAILURE_RUN, "%s: a run of repetition %d in "
				     "block %d", path, out->runs[i].repetition, out->block);
	}
	db_close(db);
	if (rc < 0)
		db_block_result_release(out);
	return rc;
}

/*
 * The first column of sql's first row (0 when it has none), sql binding
 * ?1 id, ?2 text (unbound when NULL) and ?3 n.  The small questions
 * ingestion asks: which run, whether eliminated, whether ingested.
 */
static int query_int(struct db *db, const char *sql, int64_t id, const char *text, int n,
		     int64_t *out, const char *what, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (text)
		sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, n);
	int rc = sqlite3_step(st);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_error(db, what, err);
}

static int mark_outcome(struct db *db, int64_t attempt_id, const char *outcome,
			const struct db_block_result *res, const char *path, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE block_attempts SET outcome = ?, result_file = ?, "
		"node = COALESCE(node, ?), job_id = COALESCE(job_id, ?), "
		"started_at = COALESCE(started_at, ?), "
		"finished_at = COALESCE(finished_at, ?, " NOW "), "
		"state = CASE WHEN state IN ('failed', 'cancelled') THEN state ELSE 'done' END "
		"WHERE id = ?", err);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, outcome, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, res->node, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, res->job_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, res->started_at, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, res->finished_at, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, attempt_id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "recording a block's result", err);
	if (sqlite3_changes(db->handle) != 1)
		return err_set(err, EXIT_FAILURE_RUN, "block attempt %lld does not exist",
			       (long long)attempt_id);
	return 0;
}

/* The piece an artifact is copied in: what ingestion holds of it at once. */
#define ARTIFACT_CHUNK (1u << 20)

/*
 * Copies artifact a of a result (open as src) to run run_id of db, through
 * SQLite's incremental blob I/O, ARTIFACT_CHUNK bytes at a time.  -1 on
 * the database's failure; DB_BLOCK_UNUSABLE when the file's artifact is
 * not what was read before (the file changed under us).
 */
static int copy_artifact(struct db *db, struct db *src, int64_t run_id,
			 const struct db_block_artifact *a, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "INSERT INTO artifacts (run_id, name, content) "
				      "VALUES (?, ?, zeroblob(?))", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, a->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, a->len);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "storing an artifact", err);
	if (!a->len)
		return 0;
	int64_t row = sqlite3_last_insert_rowid(db->handle);
	sqlite3_blob *in = NULL, *out = NULL;
	if (sqlite3_blob_open(src->handle, "main", "artifacts", "content", a->src_id, 0,
			      &in) != SQLITE_OK || sqlite3_blob_bytes(in) != a->len) {
		sqlite3_blob_close(in);
		err_set(err, EXIT_FAILURE_RUN, "%s: artifact %s changed while it was read",
			src->path, a->name);
		return DB_BLOCK_UNUSABLE;
	}
	if (sqlite3_blob_open(db->handle, "main", "artifacts", "content", row, 1, &out) !=
	    SQLITE_OK) {
		sqlite3_blob_close(in);
		return db_error(db, "storing an artifact", err);
	}
	char *buf = xmalloc(ARTIFACT_CHUNK);
	rc = 0;
	for (int64_t off = 0; off < a->len && rc == 0; off += ARTIFACT_CHUNK) {
		int n = (int)(a->len - off < ARTIFACT_CHUNK ? a->len - off : ARTIFACT_CHUNK);
		if (sqlite3_blob_read(in, buf, n, (int)off) != SQLITE_OK) {
			err_set(err, EXIT_FAILURE_RUN, "%s: reading artifact %s: %s", src->path,
				a->name, sqlite3_errmsg(src->handle));
			rc = DB_BLOCK_UNUSABLE;
		}
		else if (sqlite3_blob_write(out, buf, n, (int)off) != SQLITE_OK)
			rc = db_error(db, "storing an artifact", err);
	}
	free(buf);
	sqlite3_blob_close(in);
	sqlite3_blob_close(out);
	return rc;
}

int db_block_ingest(struct db *db, int64_t exp_id, int64_t attempt_id,
		    const struct db_block_result *res, const char *path, struct ta_err *err)
{
	struct db *src = NULL;
	int failed = -1;
	if (db_begin(db, err) < 0)
		return -1;
	int64_t done;
	if (query_int(db, "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = ?1 AND "
		      "block = ?3 AND outcome = 'ingested'", exp_id, NULL, res->block, &done,
		      "reading a block's attempts", err) < 0)
		goto fail;
	if (done) {
		/* Another job of the same attempt (an sbatch that failed, then
		 * succeeded) may be the one ingested: its row keeps that outcome. */
		if (query_int(db, "SELECT outcome IS NOT NULL FROM block_attempts WHERE id = ?1",
			      attempt_id, NULL, 0, &done, "reading a block attempt", err) < 0 ||
		    (!done && mark_outcome(db, attempt_id, "duplicate", res, path, err) < 0) ||
		    db_commit(db, err) < 0)
			goto fail;
		return 0;
	}
	for (size_t i = 0; i < res->nruns; i++) {
		const struct db_block_run *b = &res->runs[i];
		struct db_run_result r = b->r;
		if (query_int(db, "SELECT r.id FROM runs r JOIN configurations c ON c.id = "
			      "r.configuration_id WHERE c.experiment_id = ?1 AND c.key = ?2 AND "
			      "r.repetition = ?3", exp_id, b->key, b->repetition, &r.run_id,
			      "finding a run", err) < 0)
			goto fail;
		if (!r.run_id) {
			/* A race eliminated it while the block was being run again: a
			 * serial race would not have run it; an older attempt's result did. */
			int64_t gone;
			if (query_int(db, "SELECT COUNT(*) FROM eliminations e JOIN configurations c "
				      "ON c.id = e.configuration_id WHERE c.experiment_id = ?1 AND "
				      "c.key = ?2 AND e.after_block <= ?3", exp_id, b->key,
				      b->repetition, &gone, "reading eliminations", err) < 0)
				goto fail;
			if (gone)
				continue;
			err_set(err, EXIT_FAILURE_RUN, "%s: experiment %lld has no run of %s in "
				"block %d", path, (long long)exp_id, b->key, b->repetition + 1);
			failed = DB_BLOCK_UNUSABLE;
			goto fail;
		}
		if (!r.host)
			r.host = res->node;
		if (db_run_store_nested(db, &r, err) < 0)
			goto fail;
		if (b->narts && !src && !(src = db_open_readonly(res->path, err))) {
			failed = DB_BLOCK_UNUSABLE;
			goto fail;
		}
		for (size_t k = 0; k < b->narts; k++) {
			int crc = copy_artifact(db, src, r.run_id, &b->arts[k], err);
			if (crc < 0) {
				failed = crc;
				goto fail;
			}
		}
	}
	/* Nothing of the block stays pending: a run its result lacks failed. */
	struct strbuf why = STRBUF_INIT;
	strbuf_addf(&why, "block %d: its result (%s) has no run of this configuration",
		    res->block + 1, path);
	int rc = block_exec(db, "UPDATE runs SET status = 'failed', error = ?3, finished_at = "
			    NOW " WHERE status IN ('planned', 'running', 'interrupted') AND "
			    BLOCK_RUNS, exp_id, res->block, strbuf_str(&why), NULL,
			    "failing the runs a result lacks", err);
	strbuf_release(&why);
	if (rc < 0 || mark_outcome(db, attempt_id, "ingested", res, path, err) < 0 ||
	    db_commit(db, err) < 0)
		goto fail;
	db_close(src);
	return 1;
fail:
	db_rollback(db);
	db_close(src);
	return failed;
}

int db_hosts_list(struct db *db, int64_t exp_id, struct db_host_summary **out, size_t *n,
		  struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT r.host, COUNT(DISTINCT r.repetition), COUNT(*), SUM(r.status = 'ok'), "
		"SUM(r.status = 'failed') FROM runs r JOIN configurations c "
		"ON c.id = r.configuration_id WHERE c.experiment_id = ? AND "
		"r.status IN ('ok', 'failed') GROUP BY r.host ORDER BY r.host", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, exp_id);
	struct db_host_summary *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		v[count++] = (struct db_host_summary){ .host = db_column_strdup(st, 0),
						       .blocks = sqlite3_column_int(st, 1),
						       .runs = sqlite3_column_int(st, 2),
						       .ok = sqlite3_column_int(st, 3),
						       .failed = sqlite3_column_int(st, 4) };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_hosts_free(v, count);
		return db_error(db, "reading runs by host", err);
	}
	*out = v;
	*n = count;
	return 0;
}

void db_hosts_free(struct db_host_summary *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].host);
	free(v);
}

int db_copy_to(struct db *db, const char *path, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "VACUUM INTO ?", err);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "copying the database", err);
}
