/*
 * db-plan: storing a plan (configurations + planned runs) and reading the
 * per-configuration summary `show` prints.
 */
#ifndef TA_DB_PLAN_H
#define TA_DB_PLAN_H

#include "../experiments/plan.h"
#include "db.h"

/*
 * Inserts every configuration of the plan and one 'planned' run per
 * configuration x repetition (in plan order) for experiment exp_id, in one
 * transaction.  config_ids_out (optional, plan->nconfigs long) receives the
 * new configuration ids.
 */
int db_plan_store(struct db *db, int64_t exp_id, const struct plan *plan,
		  int64_t *config_ids_out, struct ta_err *err);

/* The factor values of one configuration as a JSON object (for the factors column). */
char *db_plan_factors_json(const struct plan *plan, const struct plan_config *c);

struct db_config_summary {
	int64_t id;
	int idx;
	char *key;
	int vcpus, sockets, dies, cores, threads;
	char *pinning;
	char *noise;
	char *factors;		/* JSON */
	bool baseline;
	int nruns, nok, nfailed, ninterrupted, npending;
};

struct db_run_problem {
	int64_t run_id;
	char *key;
	int repetition;
	char *status;		/* failed | interrupted */
	char *error;
};

int db_config_summaries(struct db *db, int64_t exp_id, struct db_config_summary **out,
			size_t *n, struct ta_err *err);
void db_config_summaries_free(struct db_config_summary *v, size_t n);

/* Failed and interrupted runs of an experiment, in run order. */
int db_run_problems(struct db *db, int64_t exp_id, struct db_run_problem **out,
		    size_t *n, struct ta_err *err);
void db_run_problems_free(struct db_run_problem *v, size_t n);

#endif
