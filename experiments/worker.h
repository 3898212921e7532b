/*
 * worker: one block of a distributed sweep, run on the node Slurm gave it
 * (`topoadvisor run-block`, started by the job the controller submitted).
 *
 * It runs the block with the same per-run code as a local sweep
 * (controller.h: host knobs journalled and restored, guests, noise,
 * tracing, parsing) into a database of its own on the node, then copies
 * that database atomically into the sweep's work directory as
 * block-K.attempt-A.job-J.NODE.db (schema/db-blocks.h reads it).  It never
 * opens the controller's database.
 *
 * Everything it keeps on the node lives in executor.node_dir/NODE (NODE:
 * $SLURMD_NODENAME, else the host name; made 0700 and refused unless it is
 * this user's and closed to others, node_dir writable by no one else): the
 * benchmarks' working directory run.JOB (removed after), its lock (hostlock.h: two
 * workers on one host exclude each other, while nodes that share one
 * filesystem, as a test cluster's do, never collide), and its database,
 * whose host_journal is the node's journal (only files named like ours,
 * regular and ours, are ever read as journals).  A worker killed before it
 * finished leaves its database there; the next worker on the node, holding
 * the lock, restores the knobs it journalled and ends the processes it
 * left, then removes it.
 *
 * On SIGTERM (scancel, a time limit) the current run's guests are
 * destroyed and the knobs restored before Slurm's KillWait runs out; no
 * result is written for an unfinished block.
 */
#ifndef TA_WORKER_H
#define TA_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"

struct worker_opts {
	int quiet, verbose;
};

/* What a worker did (for its exit status). */
struct worker_outcome {
	bool interrupted;	/* a signal stopped it: no result */
	size_t ok, failed;	/* runs of the block */
	char *result;		/* the result file written (free it) */
};

/*
 * Runs the block requested in file `request` (blockreq.h); its result goes
 * into the request's directory.  -1 with err when no result could be
 * written (the controller sees a job that ended without one).
 */
int worker_run_block(const char *request, const struct worker_opts *o,
		     struct worker_outcome *out, struct ta_err *err);

#endif
