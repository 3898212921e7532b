/* db-results: reading an experiment whole or run by run, and fixture inserts; see db-results.h. */
#include "db-results.h"

#include <math.h>
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

/*
 * Makes room for element n of an array grown one element at a time from 0:
 * the capacity doubles at every power of two, so appending N elements
 * copies O(N) bytes, not O(N^2).
 */
static void *array_room(void *v, size_t n, size_t size)
{
	if (n & (n - 1))
		return v;
	return xrealloc(v, (n ? 2 * n : 1) * size);
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
		r->configs = array_room(r->configs, r->nconfigs, sizeof(*r->configs));
		struct db_results_config *c = &r->configs[r->nconfigs++];
		memset(c, 0, sizeof(*c));
		c->id = sqlite3_column_int64(st, 0);
		db_config_read(st, 1, &c->rec);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "reading configurations", err);
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

/*
 * Walking an experiment: three statements deliver its runs, their metrics
 * and their exit counts, each ordered by configuration, repetition and then
 * row id straight from indexes (runs(configuration_id, repetition),
 * metrics(run_id), exit_counts(run_id): no sort, nothing held), and the
 * walk merges them run by run.  One read transaction gives all three the
 * same snapshot while a sweep may be writing.  Memory stays that of the
 * current run, for 100 runs as for 100 000.
 */
struct walk {
	sqlite3_stmt *st;
	bool row;		/* st is on a row not consumed yet */
};

struct db_results_cursor {
	struct db *db;
	struct db_results *res;
	bool in_txn;		/* we began the read transaction */
	sqlite3_stmt *runs;
	struct walk metrics, exits;	/* exits.st NULL: not wanted */
	struct id_index *cidx;	/* configuration id -> config */
};

/* Columns 0-2 of the metrics and exits statements: configuration idx, repetition, run id. */
#define WALK_RUN_COLUMNS "c.idx, r.repetition, r.id, "
#define WALK_FROM \
	"FROM configurations c JOIN runs r ON r.configuration_id = c.id "

static int walk_next(struct db_results_cursor *cur, struct walk *w, struct ta_err *err)
{
	int rc = sqlite3_step(w->st);
	w->row = rc == SQLITE_ROW;
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_error(cur->db, "reading runs", err);
}

/*
 * Whether w's pending row belongs to `run` of configuration index idx,
 * skipping rows of runs the walk has passed (none in one snapshot).
 */
static int walk_at(struct db_results_cursor *cur, struct walk *w, int idx,
		   const struct db_results_run *run, bool *at, struct ta_err *err)
{
	*at = false;
	while (w->row) {
		int widx = sqlite3_column_int(w->st, 0), wrep = sqlite3_column_int(w->st, 1);
		if (widx > idx || (widx == idx && wrep > run->repetition))
			return 0;
		if (widx == idx && wrep == run->repetition &&
		    sqlite3_column_int64(w->st, 2) == run->id) {
			*at = true;
			return 0;
		}
		if (walk_next(cur, w, err) < 0)
			return -1;
	}
	return 0;
}

static int read_run_metrics(struct db_results_cursor *cur, int idx, struct db_results_run *run,
			    struct ta_err *err)
{
	sqlite3_stmt *st = cur->metrics.st;
	for (;;) {
		bool at;
		if (walk_at(cur, &cur->metrics, idx, run, &at, err) < 0)
			return -1;
		if (!at)
			return 0;
		run->metrics = array_room(run->metrics, run->nmetrics, sizeof(*run->metrics));
		struct db_results_metric *m = &run->metrics[run->nmetrics++];
		m->name = db_column_strdup(st, 3);
		m->value = sqlite3_column_double(st, 4);
		m->unit = db_column_strdup(st, 5);
		m->higher_is_better = column_int_or(st, 6, -1);
		m->dir = metric_dir_from_name((const char *)sqlite3_column_text(st, 7));
		if (walk_next(cur, &cur->metrics, err) < 0)
			return -1;
	}
}

/* One reason's rows of a run: the all-vCPU (NULL) rows and the per-vCPU rows apart. */
struct exit_acc {
	struct db_results_exit e;
	int64_t all_vcpus, per_vcpu;
	int64_t all_pairs, all_ns, vcpu_pairs, vcpu_ns;	/* times, the same way */
	bool has_all;
};

/* Most exits first, then by reason and source: the order rank and report show. */
static int cmp_exit(const void *a, const void *b)
{
	const struct db_results_exit *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	int c = strcmp(x->reason, y->reason);
	return c ? c : strcmp(x->source, y->source);
}

/*
 * A run's exit counts per source and reason.  A run may store per-vCPU
 * rows, an all-vCPU (vcpu NULL) row, or both: the NULL row is the total
 * when present, else the per-vCPU rows add up.
 */
static int read_run_exits(struct db_results_cursor *cur, int idx, struct db_results_run *run,
			  struct ta_err *err)
{
	sqlite3_stmt *st = cur->exits.st;
	struct exit_acc *acc = NULL;
	size_t n = 0;
	int rc = 0;
	for (;;) {
		bool at;
		if ((rc = walk_at(cur, &cur->exits, idx, run, &at, err)) < 0 || !at)
			break;
		const char *source = (const char *)sqlite3_column_text(st, 3);
		const char *reason = (const char *)sqlite3_column_text(st, 4);
		size_t k = 0;
		while (k < n && (strcmp(acc[k].e.source, source) || strcmp(acc[k].e.reason, reason)))
			k++;
		if (k == n) {
			acc = array_room(acc, n, sizeof(*acc));
			acc[n++] = (struct exit_acc){ .e = { xstrdup(source), xstrdup(reason), 0, 0,
							     0 } };
		}
		int64_t count = sqlite3_column_int64(st, 6);
		/* NULL times (not timed) read as 0 pairs. */
		int64_t pairs = sqlite3_column_int64(st, 7), ns = sqlite3_column_int64(st, 8);
		if (sqlite3_column_type(st, 5) == SQLITE_NULL) {
			acc[k].all_vcpus += count;
			acc[k].all_pairs += pairs;
			acc[k].all_ns += ns;
			acc[k].has_all = true;
		} else {
			acc[k].per_vcpu += count;
			acc[k].vcpu_pairs += pairs;
			acc[k].vcpu_ns += ns;
		}
		if ((rc = walk_next(cur, &cur->exits, err)) < 0)
			break;
	}
	if (n) {
		run->exits = xmalloc(n * sizeof(*run->exits));
		for (size_t k = 0; k < n; k++) {
			run->exits[k] = acc[k].e;
			run->exits[k].count = acc[k].has_all ? acc[k].all_vcpus : acc[k].per_vcpu;
			run->exits[k].time_pairs = acc[k].has_all ? acc[k].all_pairs
								  : acc[k].vcpu_pairs;
			run->exits[k].time_ns = acc[k].has_all ? acc[k].all_ns : acc[k].vcpu_ns;
		}
		run->nexits = n;
		qsort(run->exits, n, sizeof(*run->exits), cmp_exit);
	}
	free(acc);
	return rc;
}

/* Prepares what the walk steps through and puts each child walk on its first row. */
static int cursor_prepare(struct db_results_cursor *cur, bool exits, struct ta_err *err)
{
	struct db *db = cur->db;
	int64_t exp = cur->res->exp.id;
	cur->runs = db_prepare(db,
		"SELECT c.idx, r.repetition, r.id, r.configuration_id, r.order_index, r.status, "
		"r.error, r.started_at, r.finished_at, r.topology_ok, r.lost_events, r.host, "
		"r.boot, CASE WHEN json_valid(r.host_state) THEN "
		"json_extract(r.host_state, '$.loadavg[0]') END, "
		"COALESCE(CASE WHEN json_valid(r.host_state) THEN "
		"json_extract(r.host_state, '$.online_cpus') END, (SELECT json_extract(e.host_facts, "
		"'$.online_cpus') FROM experiments e WHERE e.id = c.experiment_id AND "
		"json_valid(e.host_facts))) " WALK_FROM "WHERE c.experiment_id = ? "
		"ORDER BY c.idx, r.repetition", err);
	if (!cur->runs)
		return -1;
	cur->metrics.st = db_prepare(db,
		"SELECT " WALK_RUN_COLUMNS "m.name, m.value, m.unit, m.higher_is_better, "
		"m.direction " WALK_FROM "JOIN metrics m ON m.run_id = r.id "
		"WHERE c.experiment_id = ? ORDER BY c.idx, r.repetition, m.id", err);
	if (!cur->metrics.st)
		return -1;
	if (exits) {
		cur->exits.st = db_prepare(db,
			"SELECT " WALK_RUN_COLUMNS "x.source, x.reason, x.vcpu, x.count, "
			"x.time_pairs, x.time_ns " WALK_FROM "JOIN exit_counts x ON x.run_id = r.id "
			"WHERE c.experiment_id = ? ORDER BY c.idx, r.repetition, x.id", err);
		if (!cur->exits.st)
			return -1;
	}
	sqlite3_bind_int64(cur->runs, 1, exp);
	sqlite3_bind_int64(cur->metrics.st, 1, exp);
	if (walk_next(cur, &cur->metrics, err) < 0)
		return -1;
	if (exits) {
		sqlite3_bind_int64(cur->exits.st, 1, exp);
		if (walk_next(cur, &cur->exits, err) < 0)
			return -1;
	}
	return 0;
}

/* Runs a statement without parameters or rows (BEGIN, COMMIT). */
static int exec_simple(struct db *db, const char *sql, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return -1;
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, sql, err);
}

int db_results_open(struct db *db, const char *id_or_name, bool exits, struct db_results *out,
		    struct db_results_cursor **cur_out, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	*cur_out = NULL;
	struct db_results_cursor *cur = xcalloc(1, sizeof(*cur));
	cur->db = db;
	cur->res = out;
	if (sqlite3_get_autocommit(db->handle)) {
		if (exec_simple(db, "BEGIN", err) < 0) {
			free(cur);
			return -1;
		}
		cur->in_txn = true;
	}
	if (db_experiment_get(db, id_or_name, &out->exp, err) < 0 ||
	    read_configs(db, out, err) < 0 || read_race(db, out, err) < 0 ||
	    cursor_prepare(cur, exits, err) < 0) {
		db_results_cursor_close(cur);
		db_results_release(out);
		return -1;
	}
	cur->cidx = xmalloc((out->nconfigs + 1) * sizeof(*cur->cidx));
	for (size_t i = 0; i < out->nconfigs; i++)
		cur->cidx[i] = (struct id_index){ out->configs[i].id, &out->configs[i] };
	qsort(cur->cidx, out->nconfigs, sizeof(*cur->cidx), cmp_id_index);
	*cur_out = cur;
	return 0;
}

int db_results_next_run(struct db_results_cursor *cur, struct db_results_run *run,
			struct db_results_config **config, struct ta_err *err)
{
	memset(run, 0, sizeof(*run));
	sqlite3_stmt *st = cur->runs;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return db_error(cur->db, "reading runs", err);
	int idx = sqlite3_column_int(st, 0);
	run->repetition = sqlite3_column_int(st, 1);
	run->id = sqlite3_column_int64(st, 2);
	/* the join found it: its configuration is one of the experiment's */
	*config = id_index_find(cur->cidx, cur->res->nconfigs, sqlite3_column_int64(st, 3));
	run->order_index = sqlite3_column_int(st, 4);
	run->status = db_column_strdup(st, 5);
	run->error = db_column_strdup(st, 6);
	run->started_at = db_column_strdup(st, 7);
	run->finished_at = db_column_strdup(st, 8);
	run->topology_ok = column_int_or(st, 9, -1);
	run->lost_events = sqlite3_column_type(st, 10) == SQLITE_NULL
		? -1 : sqlite3_column_int64(st, 10);
	run->host = db_column_strdup(st, 11);
	run->boot = sqlite3_column_int64(st, 12);	/* NULL: 0, unknown */
	run->loadavg = sqlite3_column_type(st, 13) == SQLITE_NULL ? NAN
		: sqlite3_column_double(st, 13);
	run->host_cpus = sqlite3_column_int(st, 14);	/* NULL: 0, unknown */
	if (read_run_metrics(cur, idx, run, err) < 0 ||
	    (cur->exits.st && read_run_exits(cur, idx, run, err) < 0)) {
		db_results_run_release(run);
		return -1;
	}
	return 1;
}

void db_results_cursor_close(struct db_results_cursor *cur)
{
	if (!cur)
		return;
	sqlite3_finalize(cur->runs);
	sqlite3_finalize(cur->metrics.st);
	sqlite3_finalize(cur->exits.st);
	if (cur->in_txn) {
		struct ta_err ignored = { 0 };
		exec_simple(cur->db, "COMMIT", &ignored);	/* read only: nothing to lose */
	}
	free(cur->cidx);
	free(cur);
}

int db_results_load(struct db *db, const char *id_or_name, struct db_results *out,
		    struct ta_err *err)
{
	struct db_results_cursor *cur;
	if (db_results_open(db, id_or_name, true, out, &cur, err) < 0)
		return -1;
	struct db_results_run run;
	struct db_results_config *c;
	int rc;
	while ((rc = db_results_next_run(cur, &run, &c, err)) > 0) {
		c->runs = array_room(c->runs, c->nruns, sizeof(*c->runs));
		c->runs[c->nruns++] = run;
	}
	db_results_cursor_close(cur);
	if (rc < 0)
		db_results_release(out);
	return rc;
}

void db_results_run_release(struct db_results_run *run)
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
	memset(run, 0, sizeof(*run));
}

void db_results_release(struct db_results *r)
{
	for (size_t i = 0; i < r->nconfigs; i++) {
		struct db_results_config *c = &r->configs[i];
		config_record_release(&c->rec);
		for (size_t j = 0; j < c->nruns; j++)
			db_results_run_release(&c->runs[j]);
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
