/*
 * db-blocks: the stored state of a sweep run across many hosts (migration
 * 7) — the distributed row, one block_attempts row per job submitted for a
 * block, the marking of a block's runs while it is away on a node — and
 * the result files workers write: a worker's database holds the block's
 * runs and its own attempt row, read here (its artifacts copied in 1 MiB
 * pieces, never held whole) and ingested into the main database in one
 * transaction.
 *
 * A block is a repetition of the sweep (every surviving configuration
 * once) run by one job on one host.  Its first complete result is
 * ingested; a later one (a job Slurm gave up on that still finished) is
 * recorded as a duplicate and never stored twice — the database refuses a
 * second ingested attempt of a block (a unique index), whatever a caller
 * does.
 */
#ifndef TA_DB_BLOCKS_H
#define TA_DB_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db-runs.h"
#include "db.h"

struct db_distributed {
	char *kind;		/* "slurm" */
	char *tag;		/* in every job name and the work directory's name */
	char *work_dir;		/* requests, results and job output */
	char *settings;		/* JSON: the executor settings the sweep runs with */
};

/* Records that experiment exp_id runs distributed (once, before its first job). */
int db_distributed_start(struct db *db, int64_t exp_id, const struct db_distributed *d,
			 struct ta_err *err);
/* Reads it; *found false (0 returned) for a local experiment. */
int db_distributed_get(struct db *db, int64_t exp_id, struct db_distributed *out,
		       bool *found, struct ta_err *err);
void db_distributed_release(struct db_distributed *d);
/* A setting of d->settings (an integer, else def; a string, else NULL: free it). */
long db_distributed_setting_int(const struct db_distributed *d, const char *key, long def);
char *db_distributed_setting_str(const struct db_distributed *d, const char *key);

struct db_attempt {
	int64_t id;
	int block;		/* the repetition, 0-based */
	int attempt;		/* 1, 2, ... */
	char *job_name;
	char *job_id;		/* NULL until sbatch said it */
	char *node;
	char *state;		/* submitting|queued|running|done|failed|cancelled */
	char *slurm_state;	/* last seen, NULL before */
	char *outcome;		/* NULL | ingested | duplicate */
	char *result_file;
	char *error;
	char *submitted_at, *started_at, *finished_at;
};

/* Every attempt of exp_id, by block then attempt. */
int db_attempts_list(struct db *db, int64_t exp_id, struct db_attempt **out, size_t *n,
		     struct ta_err *err);
void db_attempts_free(struct db_attempt *v, size_t n);

/*
 * The nodes a sweep gives no more blocks: those whose last k attempts that
 * ended (done or failed, in the order they finished; cancelled ones do not
 * count) all failed, on k different blocks.  k 0: none.  out (room for n)
 * gets the names, pointing into a; returns how many.  Pure: the
 * controller and `show` apply the same rule to the stored attempts.
 */
size_t db_attempts_bad_nodes(const struct db_attempt *a, size_t n, int k, const char **out);

/*
 * The attempts whose worker may have left its node's host knobs changed:
 * it was killed on its node without a chance to restore them (NODE_FAIL,
 * or killed for memory), and no attempt begun there later was done (a worker restores what an earlier one left before it runs).  out
 * (room for n) gets their indexes in a; returns how many (one per node).
 */
size_t db_attempts_dirty(const struct db_attempt *a, size_t n, size_t *out);

/* A new attempt of a block, state 'submitting' (before sbatch runs). */
int db_attempt_insert(struct db *db, int64_t exp_id, int block, int attempt,
		      const char *job_name, int64_t *id_out, struct ta_err *err);

/*
 * Updates an attempt: every non-NULL field is set, NULL ones are kept.
 * started_at is set when it first becomes 'running', finished_at when it
 * first reaches done, failed or cancelled.
 */
struct db_attempt_set {
	const char *job_id, *node, *state, *slurm_state, *error;
	const char *result_file;	/* an unusable result's file (a usable one: ingest) */
};
int db_attempt_update(struct db *db, int64_t id, const struct db_attempt_set *s,
		      struct ta_err *err);

/*
 * The runs of block `block` that are away on a node: status 'running'
 * (committed at once), which also keeps a race from deleting them — a
 * block in flight keeps its configurations (db-race.h).
 */
int db_block_runs_dispatch(struct db *db, const int64_t *run_ids, size_t n,
			   struct ta_err *err);
/*
 * A block's attempt ended without a result: its runs still 'running'
 * become `status` ('interrupted' while the block will be tried again,
 * 'failed' when given up) with `error`, and the runs of configurations a
 * race eliminated at or before this block that are not 'ok' are deleted
 * (a serial race would not run them), in one transaction.  *nended: how
 * many runs it ended.
 */
int db_block_runs_end(struct db *db, int64_t exp_id, int block, const char *status,
		      const char *error, int *nended, struct ta_err *err);
/* Deletes the block's runs that are not 'ok' (a race stopped before it). */
int db_block_runs_drop(struct db *db, int64_t exp_id, int block, struct ta_err *err);

/* An artifact of a result: not read, copied from the file when ingested. */
struct db_block_artifact {
	char *name;
	int64_t src_id;		/* its row in the result file */
	int64_t len;
};

/* One run of a worker's result. */
struct db_block_run {
	char *key;		/* its configuration's key */
	int repetition;
	struct db_run_result r;	/* every pointer owned (run_id: the worker's);
				   no artifacts: those are in arts */
	struct db_block_artifact *arts;
	size_t narts;
};

/* What a worker's result file holds. */
struct db_block_result {
	char *path;		/* the file it was read from */
	int block, attempt;
	char *job_name, *job_id, *node;
	char *started_at, *finished_at;
	struct db_block_run *runs;	/* in the order they ran */
	size_t nruns;
};

/*
 * Reads a worker's result file (a database with one experiment and its
 * one block_attempts row).  Fails when it is not one, or when a run in it
 * did not end (planned, running, interrupted): an incomplete block.
 * Artifacts are not read (their names and sizes only): ingestion copies
 * them from the file in pieces, so a result is never held whole.
 */
int db_block_result_read(const char *path, struct db_block_result *out, struct ta_err *err);
void db_block_result_release(struct db_block_result *r);

/*
 * Ingests result res of attempt attempt_id (of experiment exp_id, from
 * file `path`) in one transaction: when no attempt of the block is
 * ingested yet, stores every run (matched by configuration key and
 * repetition, with the host and times it ran at) and marks the attempt
 * ingested (returns 1); else marks it a duplicate and stores no run
 * (returns 0).  DB_BLOCK_UNUSABLE when the result does not fit the
 * experiment (a configuration it does not have, an artifact that changed
 * under us): err says why, nothing changed, and only that attempt should
 * fail.  -1 on failure of the database, nothing changed.
 */
#define DB_BLOCK_UNUSABLE (-2)
int db_block_ingest(struct db *db, int64_t exp_id, int64_t attempt_id,
		    const struct db_block_result *res, const char *path, struct ta_err *err);

/* What the runs of an experiment did on one host (finished runs only). */
struct db_host_summary {
	char *host;		/* NULL: runs stored before hosts were recorded */
	int blocks;		/* distinct repetitions */
	int runs, ok, failed;
};

/* Per host, by name. */
int db_hosts_list(struct db *db, int64_t exp_id, struct db_host_summary **out, size_t *n,
		  struct ta_err *err);
void db_hosts_free(struct db_host_summary *v, size_t n);

/* Writes a consistent copy of the whole database to path (VACUUM INTO), which must not exist. */
int db_copy_to(struct db *db, const char *path, struct ta_err *err);

#endif
