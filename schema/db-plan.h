/*
 * db-plan: storing a plan (configurations + planned runs) and reading the
 * per-configuration summary `show` prints.
 */
#ifndef TA_DB_PLAN_H
#define TA_DB_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/config-record.h"
#include "db.h"

/* One planned run. */
struct db_plan_run {
	size_t config;		/* index into the configurations stored with it */
	int repetition;		/* 0-based */
	size_t order;		/* position in the sweep, 0-based */
};

/*
 * Inserts the configurations (their records, schema/db-config.h) and one
 * 'planned' run per entry of runs (in that order) for experiment exp_id, in
 * one transaction: all or nothing.  config_ids_out (optional, nconfigs
 * long) receives the new ids.
 */
int db_plan_store(struct db *db, int64_t exp_id, const struct config_record *configs,
		  size_t nconfigs, const struct db_plan_run *runs, size_t nruns,
		  int64_t *config_ids_out, struct ta_err *err);

/* A stored configuration and how far its runs are (`show`). */
struct db_config_summary {
	int64_t id;
	struct config_record rec;
	int nruns, nok, nfailed, ninterrupted, npending;
};

struct db_run_problem {
	int64_t run_id;
	char *key;
	int repetition;
	char *status;		/* failed | interrupted */
	char *error;
	char *host;		/* where it ran (NULL: not recorded) */
};

int db_config_summaries(struct db *db, int64_t exp_id, struct db_config_summary **out,
			size_t *n, struct ta_err *err);
void db_config_summaries_free(struct db_config_summary *v, size_t n);

/* Failed and interrupted runs of an experiment, in run order. */
int db_run_problems(struct db *db, int64_t exp_id, struct db_run_problem **out,
		    size_t *n, struct ta_err *err);
void db_run_problems_free(struct db_run_problem *v, size_t n);

#endif
