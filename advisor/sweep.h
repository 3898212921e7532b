/*
 * sweep: what run, resume, rerun and extend share — expand the plan for
 * this host, check the host can carry it out, drive the controller (a
 * raced experiment through its scheduler, race-run.h), print the summary
 * and map it to an exit status.
 */
#ifndef TA_SWEEP_H
#define TA_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "../experiments/config.h"
#include "../experiments/hostlock.h"
#include "../schema/db.h"
#include "cmd.h"

struct sweep_opts {
	const char *sysfs_root;	/* --root (tests), NULL: "/"; for Slurm workers "%n"
				   stands for the node's name */
	const char *executor;	/* --executor: local | slurm; NULL: the config's */
};

/* The blocks a raced sweep runs before its first test; 0: not raced (strategy: full). */
int sweep_race_first_test(const struct sweep_config *cfg);

/*
 * Takes the lock of the host under root (NULL: the real host; hostlock.h:
 * one per host whatever $TOPOADVISOR_LOCK says), saying on stderr what processes of an
 * earlier, killed sweep it ended and how many of its trace instances it
 * removed (both done by hostlock_acquire()).  run, resume, rerun and
 * restore-host take it before they open the database, so no two
 * controllers ever migrate one at once.
 */
int sweep_lock(const struct cmd_ctx *ctx, const char *root, struct hostlock *lock,
	       struct ta_err *err);

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

/*
 * Adds `blocks` blocks to finished experiment exp_id (runs of every
 * configuration a race has not eliminated, in the seeded block order a
 * sweep of that many more repetitions has), lets a race go on over them,
 * and runs them.  cfg is the stored config (its repetitions is changed).
 */
int sweep_extend(const struct cmd_ctx *ctx, struct db *db, struct sweep_config *cfg,
		 int64_t exp_id, uint64_t seed, int blocks, const struct sweep_opts *so);

/* What resume, rerun and extend work on: the host lock and a stored experiment. */
struct sweep_stored {
	struct hostlock lock;
	struct db *db;
	struct db_experiment e;
	struct sweep_config *cfg;
};

/*
 * Takes the host lock, then opens the database and loads experiment
 * `which` (id or name) with its stored config (never the file on disk,
 * which may have changed since).  Release s with sweep_stored_release,
 * also on failure.
 */
int sweep_stored_open(const struct cmd_ctx *ctx, const char *which, const char *root,
		      struct sweep_stored *s, struct ta_err *err);
void sweep_stored_release(struct sweep_stored *s);

/* Warns on stderr when this host's facts differ from those stored with e. */
void sweep_warn_host_changed(const struct db_experiment *e);

#endif
