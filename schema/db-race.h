/*
 * db-race: the stored state of a raced sweep (migration 6) — the races row,
 * the eliminations, the primary-metric values a race decides on — and the
 * planned runs extend adds.
 *
 * A race step is stored whole: its eliminations, the deletion of the runs
 * they make unnecessary and the blocks evaluated commit together, so a
 * sweep killed at any point resumes from a consistent race.
 */
#ifndef TA_DB_RACE_H
#define TA_DB_RACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct db_race {
	int first_test;
	int max_blocks;
	int blocks_evaluated;
	char *stop_reason;	/* NULL while the race goes on */
	int stopped_after;	/* blocks when it stopped; 0 while it goes on */
};

/* Marks experiment exp_id as raced (before its first run). */
int db_race_start(struct db *db, int64_t exp_id, int first_test, int max_blocks,
		  struct ta_err *err);
/* Reads the races row; *found false (and 0 returned) for a full experiment. */
int db_race_get(struct db *db, int64_t exp_id, struct db_race *out, bool *found,
		struct ta_err *err);
void db_race_release(struct db_race *r);

/* One successful run's primary-metric value. */
struct db_race_value {
	int64_t configuration_id;
	int repetition;
	double value;
};

/* Every 'ok' run's value of `metric` in experiment exp_id. */
int db_race_values(struct db *db, int64_t exp_id, const char *metric,
		   struct db_race_value **out, size_t *n, struct ta_err *err);

struct db_elimination {
	int64_t configuration_id;
	char *key;
	int after_block;
	int64_t against_id;
	char *against_key;
	double p;
	double ratio;		/* NAN when not stored */
};

/* The eliminations of experiment exp_id, by block then configuration index. */
int db_eliminations_list(struct db *db, int64_t exp_id, struct db_elimination **out,
			 size_t *n, struct ta_err *err);
void db_eliminations_free(struct db_elimination *v, size_t n);

struct db_race_elim_new {
	int64_t configuration_id, against_id;
	double p, ratio;
};

/*
 * Stores the race's look after `blocks` blocks, in one transaction: the
 * new eliminations (and the deletion of their runs not yet 'ok' from block
 * `blocks` on, except runs 'running': a block away on another host keeps
 * its configurations, db-blocks.h), blocks_evaluated, and, when stop_reason is not NULL, the
 * stop (every run still 'planned' from block `blocks` on is deleted).
 */
int db_race_record(struct db *db, int64_t exp_id, int blocks,
		   const struct db_race_elim_new *elims, size_t nelims, const char *stop_reason,
		   struct ta_err *err);

/*
 * extend: raises a race's maximum to max_blocks and clears its stop, so
 * the race goes on over the added blocks.
 */
int db_race_extend(struct db *db, int64_t exp_id, int max_blocks, struct ta_err *err);

/* A planned run extend adds. */
struct db_run_new {
	int64_t configuration_id;
	int repetition;
};

/*
 * Appends planned runs (in the order given, after every existing run) to
 * experiment exp_id in one transaction.
 */
int db_runs_append(struct db *db, int64_t exp_id, const struct db_run_new *runs, size_t n,
		   struct ta_err *err);

/* The highest repetition of any run of exp_id plus one (0 when there are none). */
int db_runs_blocks(struct db *db, int64_t exp_id, int *blocks, struct ta_err *err);

#endif
