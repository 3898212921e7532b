/*
 * controller: carry out an experiment's runs on this host.
 *
 * For every run still to do (in the stored order): apply the host knobs
 * (journalled first, in the safe order), start the noise load, bring up the
 * guest in the configuration's shape (or reuse it when allowed), check the
 * topology it sees, run the preparation, start the benchmark server if any,
 * start the collectors, run the benchmark, stop the collectors, read vCPU
 * statistics, parse, store the whole run in one transaction, tear down.
 * A run that fails is stored as failed with its reason and the sweep goes
 * on.  SIGINT/SIGTERM stop the sweep after cleanup: the current run is
 * marked interrupted, host knobs are restored, guests destroyed.
 *
 * The caller holds the host lock (hostlock.h) for the whole sweep, taken
 * before it stores anything, so a refused sweep leaves no experiment behind.
 */
#ifndef TA_CONTROLLER_H
#define TA_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>

#include "../schema/db.h"
#include "../util/err.h"
#include "config.h"
#include "plan.h"

/*
 * Between the blocks of a sweep (a race, advisor/race-run.h): called before
 * the first run of each block with blocks = that block's repetition (the
 * blocks before it), and once after the last run with the blocks done.  It
 * may delete runs from the database; the controller then reads again what
 * is left to do.  Returns 0, or -1 to end the sweep with err.
 */
struct controller_scheduler {
	int (*between_blocks)(void *data, struct db *db, int64_t exp_id, int blocks,
			      struct ta_err *err);
	void *data;
};

struct controller_opts {
	const char *sysfs_root;	/* where host knobs live: "/" unless testing */
	const struct controller_scheduler *scheduler;	/* NULL: run every planned run */
	const char *host;	/* the host name runs are stored with; NULL: uname's */
	int quiet;		/* no progress */
	int verbose;
};

struct controller_summary {
	size_t attempted;	/* runs started this time */
	size_t ok, failed;
	bool interrupted;	/* SIGINT/SIGTERM stopped the sweep */
};

/*
 * Runs every run of experiment exp_id that is not 'ok' (all of them for a
 * new experiment), using plan (expanded from the experiment's stored config
 * and seed) to know each configuration.  Returns 0 when the sweep went to
 * its end or was interrupted (see summary), -1 when it could not go on
 * (database failure, host lock held, knob unsupported, …).
 */
int controller_run(struct db *db, const struct plan *plan, int64_t exp_id,
		   const struct controller_opts *opts, struct controller_summary *summary,
		   struct ta_err *err);

/*
 * Checks up front that this host can run the plan: every host knob is
 * supported here (the capability check `plan` and `run` share), and the
 * runner's needs (with for_run: root for knobs, …).  Fails with a message naming the knob
 * and why, so nothing fails mid-sweep for a reason known at the start.
 */
int controller_check_host(const struct plan *plan, const struct controller_opts *opts,
			  bool for_run, struct ta_err *err);

/*
 * What of cfg needs root (host knobs, kernel tracing), checked before
 * anything else so that a user without it is told first; part of
 * controller_check_host(for_run).  EXIT_BAD_INPUT naming what needs it.
 */
int controller_check_privileges(const struct sweep_config *cfg,
				const struct controller_opts *opts, struct ta_err *err);

/* The host facts recorded with an experiment, as JSON. */
char *controller_host_facts_json(void);

/*
 * Fills each configuration record's arch, cpu_mode and cpu_model with what
 * the controller gives its guest on this host (domain_type auto resolved
 * as the sweep will resolve it; experiments/domain.h decides the <cpu>):
 * what is stored with the plan, and what `recommend` prints.  Host runs
 * get the host's architecture and no <cpu>.
 */
void controller_guests_describe(struct plan *p);

#endif
