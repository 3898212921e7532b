/*
 * race-run: a raced sweep's scheduler — the bridge between the controller
 * (which runs blocks), the database (which holds the runs and the race's
 * state) and the pure rules of race.h.
 *
 * Before each block, and after the last, it reads the primary metric of
 * every successful run, lets race_evaluate() decide, stores the
 * eliminations and the stop (schema/db-race.h, which also deletes the runs
 * they make unnecessary) and says so on stderr.  Everything it decides on
 * is in the database, so a sweep killed at any point and resumed takes the
 * same decisions.
 *
 * Decision configurations are the plan's configurations without their
 * environment factors (noise and those advisor.environment marks): all the
 * levels of one decision configuration are raced together, on the
 * objective over the levels (advisor.objective, worst case by default),
 * with advisor.equivalence as the margin.  Host references
 * (guest.host_baseline) are run in every
 * block and never raced.
 */
#ifndef TA_RACE_RUN_H
#define TA_RACE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../experiments/controller.h"
#include "../experiments/plan.h"
#include "../schema/db.h"
#include "../util/strbuf.h"
#include "race.h"

struct race_run {
	struct controller_scheduler sched;	/* hand &sched to the controller */
	const struct plan *plan;
	const char *metric;
	bool higher_is_better;
	enum race_objective objective;
	double equivalence;
	bool quiet;
	/* per plan configuration */
	size_t *decision, *env;
	int64_t *config_id;
	/* per decision configuration */
	size_t ndecisions, nenvs, baseline;
	bool *reference;
	size_t *first_config;	/* a plan configuration of each decision */
	char **names;		/* each decision's key (its configurations' without environment) */
};

/*
 * Prepares the scheduler for experiment exp_id, whose stored plan is
 * `plan` (configurations matched by key).  Fails when a stored
 * configuration is not in the plan.
 */
int race_run_init(struct race_run *rr, struct db *db, int64_t exp_id, const struct plan *plan,
		  bool quiet, struct ta_err *err);
void race_run_release(struct race_run *rr);

/*
 * Groups plan configurations into decision configurations and environment
 * levels by their records' decision and environment (written by the plan
 * from advisor.environment: the same strings `rank` groups the stored
 * configurations by).  decision and level are plan->nconfigs long; *names
 * (optional) gets each decision's key, to free with its strings.  Returns
 * the number of decisions; *nreference counts those that are host
 * references.
 */
size_t race_run_group(const struct plan *plan, size_t *decision, size_t *level, char ***names,
		      size_t *nlevels, size_t *nreference);

/*
 * The maximum (*max_out) and the expected number of runs of plan raced
 * with first_test (race_expected_runs over nsim races, seeded by the
 * plan's seed).
 */
double race_run_expected(const struct plan *plan, int first_test, int nsim, size_t *max_out);

#endif
