/*
 * db-runs: the controller's view of runs — which still need doing, marking
 * one running, and storing a finished run whole (status, metrics, exit
 * counts, artifacts, host state, topology) in one transaction.
 */
#ifndef TA_DB_RUNS_H
#define TA_DB_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/metricdir.h"
#include "db.h"

struct db_run_todo {
	int64_t run_id;
	int64_t configuration_id;
	char *key;		/* the configuration's key */
	int repetition;
	int64_t order_index;
	char *status;		/* planned | running | failed | interrupted | ok */
};

/*
 * Runs of experiment exp_id in order.  With `pending_only`, only those that
 * are not 'ok' (what resume still has to do), leaving out configurations a
 * race eliminated (their failed runs stay as they are).
 */
int db_runs_list(struct db *db, int64_t exp_id, bool pending_only, struct db_run_todo **out,
		 size_t *n, struct ta_err *err);
void db_runs_free(struct db_run_todo *v, size_t n);

/* Sets status 'running' and started_at (committed at once: a crash leaves 'running'). */
int db_run_mark_running(struct db *db, int64_t run_id, struct ta_err *err);

struct db_metric {
	const char *name;
	double value;
	const char *unit;	/* NULL: none */
	enum metric_dir dir;	/* stored as metrics.direction (and higher_is_better) */
};

struct db_exit_count {
	const char *source;	/* "kvm_hv" | "kvm" */
	int64_t vcpu;		/* < 0: all vCPUs (stored as NULL) */
	const char *reason;
	uint64_t count;
	int64_t time_pairs;	/* exits timed (migration 11); <= 0: none (stored NULL) */
	int64_t time_ns;	/* their summed handling time; < 0: not timed */
};

struct db_artifact {
	const char *name;
	const void *content;
	size_t len;
};

/* Everything a finished (or failed, or interrupted) run leaves behind. */
struct db_run_result {
	int64_t run_id;
	const char *status;		/* ok | failed | interrupted */
	const char *error;		/* NULL for ok */
	const char *host_state;		/* JSON or NULL */
	const char *guest_topology;	/* JSON or NULL */
	int topology_ok;		/* 1, 0, or -1 unknown */
	int64_t lost_events;		/* < 0: unknown */
	const char *host;		/* the host it ran on (NULL: not known) */
	const char *started_at;		/* ISO-8601 UTC; NULL: as marked running (else now) */
	const char *finished_at;	/* NULL: now */
	int64_t boot;			/* runs.boot; 0: NULL */
	const struct db_metric *metrics;
	size_t nmetrics;
	const struct db_exit_count *exits;
	size_t nexits;
	const struct db_artifact *artifacts;
	size_t nartifacts;
};

/*
 * Stores r in one transaction, replacing whatever an earlier attempt at the
 * same run left (a resumed run is measured afresh).
 */
int db_run_store(struct db *db, const struct db_run_result *r, struct ta_err *err);
/*
 * The same inside a transaction the caller holds (db_begin), for storing
 * several runs together (a distributed sweep's block, schema/db-blocks.h).
 */
int db_run_store_nested(struct db *db, const struct db_run_result *r, struct ta_err *err);

/* Marks every 'running' run of the experiment 'interrupted' (after a crash). */
int db_runs_mark_stale(struct db *db, int64_t exp_id, const char *error, struct ta_err *err);

#endif
