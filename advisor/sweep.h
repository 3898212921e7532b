/*
 * sweep: what run, resume and rerun share — expand the plan for this host,
 * check the host can carry it out, drive the controller, print the summary
 * and map it to an exit status.
 */
#ifndef TA_SWEEP_H
#define TA_SWEEP_H

#include <stdint.h>

#include "../experiments/config.h"
#include "../experiments/hostlock.h"
#include "../schema/db.h"
#include "cmd.h"

struct sweep_opts {
	const char *sysfs_root;	/* --root (tests), NULL: "/" */
};

/*
 * Takes the host lock (hostlock.h), saying on stderr what processes of an
 * earlier, killed sweep it ended.  run, resume and rerun take it before
 * they open the database, so no two controllers ever migrate one at once.
 */
int sweep_lock(const struct cmd_ctx *ctx, struct hostlock *lock, struct ta_err *err);

/* A fresh random seed (getrandom), for sweeps whose config names none. */
uint64_t sweep_random_seed(void);

/*
 * sweep_new and sweep_resume take the host lock for the sweep unless the
 * caller holds it already (and then leave it held).
 *
 * Creates a new experiment for cfg (parent_id 0 for `run`) with `seed`,
 * stores its plan and runs it.  Prints the experiment id first.
 */
int sweep_new(const struct cmd_ctx *ctx, struct db *db, const struct sweep_config *cfg,
	      int64_t parent_id, uint64_t seed, const struct sweep_opts *so);

/* Runs what experiment exp_id (whose stored config is cfg) still lacks. */
int sweep_resume(const struct cmd_ctx *ctx, struct db *db, const struct sweep_config *cfg,
		 int64_t exp_id, uint64_t seed, const struct sweep_opts *so);

#endif
