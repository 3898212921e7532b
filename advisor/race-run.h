/*
 * race-run: a raced sweep's scheduler — the bridge between the controller
 * (which runs blocks), the database (which holds the runs and the race's
 * state) and the engine's race look (decide/decide.h, decide_race).
 *
 * Before each block, and after the last, it reads the experiment whole,
 * builds the engine's input from it exactly as `rank` does
 * (decide/input.h: decisions and environment levels from the stored
 * factors, advisor.* from the sweep), lets decide_race() look at the
 * blocks done, stores the eliminations and the stop (schema/db-race.h,
 * which also deletes the runs they make unnecessary) and says so on
 * stderr.  Everything it decides on is in the database, so a sweep killed
 * at any point and resumed takes the same decisions.
 */
#ifndef TA_RACE_RUN_H
#define TA_RACE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../experiments/controller.h"
#include "../experiments/plan.h"
#include "../schema/db.h"

struct race_run {
	struct controller_scheduler sched;	/* hand &sched to the controller */
	const struct plan *plan;
	bool quiet;
};

/* Prepares the scheduler for experiment exp_id, whose stored plan is `plan`. */
int race_run_init(struct race_run *rr, struct db *db, int64_t exp_id, const struct plan *plan,
		  bool quiet, struct ta_err *err);
void race_run_release(struct race_run *rr);

/*
 * The maximum (*max_out) and the expected number of runs of plan raced
 * with first_test (decide_race_expected_runs, seeded by the plan's seed;
 * at most nsim races, fewer for a large plan).  NAN: the simulation
 * failed (unknown; plan says so, its JSON has null).
 */
double race_run_expected(const struct plan *plan, int first_test, int nsim, size_t *max_out);

#endif
