/*
 * db-controller: one running experiment per host in a database (migration
 * 11).  The host lock (hostlock.h) keeps two controllers of one host apart;
 * this keeps the database's record honest as well: a controller claims its
 * host for its experiment before it runs anything, and the claim is refused
 * while another experiment of the database is 'running' on that host and
 * the controller that claimed it still lives (same pid, same start time).
 * A claim whose controller is gone (crashed, killed) is stale and replaced.
 * Claims are not released: an experiment that is not 'running' holds none.
 */
#ifndef TA_DB_CONTROLLER_H
#define TA_DB_CONTROLLER_H

#include <stdint.h>
#include <sys/types.h>

#include "db.h"

/*
 * Claims `host` for experiment exp_id with this process as its controller.
 * Fails (EXIT_FAILURE_RUN) naming the running experiment and its
 * controller's pid when another experiment holds a live claim on host.
 */
int db_controller_claim(struct db *db, int64_t exp_id, const char *host, struct ta_err *err);

/* As db_controller_claim, for controller pid (tests; the claim's start time is pid's). */
int db_controller_claim_as(struct db *db, int64_t exp_id, const char *host, pid_t pid,
			   struct ta_err *err);

#endif
