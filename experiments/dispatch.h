/*
 * dispatch: the controller of a sweep run across many hosts through Slurm
 * (executor: slurm).  The host is a block: each block (one repetition,
 * every surviving configuration once, in the stored random order) is one
 * Slurm job on one node, where `topoadvisor run-block` (worker.h) runs it
 * with the same per-run code as a local sweep.
 *
 * The loop, every executor.poll_interval seconds:
 *  - one squeue call follows every job still out (by their unique names);
 *  - the work directory is scanned for result files; the first complete
 *    result of a block is ingested in one transaction (db-blocks.h), a
 *    later one is recorded as a duplicate, never stored twice, and other
 *    jobs still out for that block are cancelled.  A file is checked
 *    before use (a regular file of at most 4 GiB; block, attempt, job name
 *    and id those of the attempt; configurations the experiment's): one
 *    that fails fails only its attempt, after its job is cancelled and
 *    seen ended; one of no attempt or another job is ignored;
 *  - a job that ended without a result (NODE_FAIL, a worker that failed,
 *    one gone from the queue), after waiting three polls for its file, is
 *    recorded failed (with the job's last output line and squeue's reason)
 *    and its block submitted again as the next attempt, up to
 *    executor.max_attempts, never to a node an attempt of it failed on
 *    while another can take it; then the block's runs are failed.  A node
 *    whose last executor.exclude_after blocks failed gets no more of the
 *    sweep (db_attempts_bad_nodes);
 *  - a race (controller_scheduler, the same one a local sweep uses) is
 *    asked to decide after block k only once blocks 1..k are all
 *    complete, in order, so its decisions do not depend on which host
 *    finished first and equal a serial race over the same blocks; blocks
 *    already out keep their configurations; when the race stops, the jobs
 *    of the blocks after it are cancelled and those blocks dropped; no
 *    block goes out more than max_hosts blocks past the last one the race
 *    looked after (a stalled block costs time, not the race's saving);
 *  - blocks are submitted (sbatch --parsable --exclusive --no-requeue
 *    --job-name=TAG-bK-aA) while fewer than executor.max_hosts are out.
 *    An sbatch that failed may still have created its job: the name is
 *    looked up before the block is submitted again, and extra jobs of one
 *    name are cancelled.
 * The Slurm tools (slurm.h) are called from six functions only —
 * dispatch_hosts, dispatch_check, poll_queue, cancel_jobs, slurm_stop_job
 * and submit — and the job output and result file names from
 * job_output_read and result_name; the block bookkeeping around them
 * (attempts, exclusions, results, the race) is the executor's own.
 * Every attempt is recorded (block_attempts) before sbatch runs, so a
 * controller killed at any point is continued by dispatch_run on the same
 * experiment (`resume`), which adopts the jobs still out and ingests the
 * results written meanwhile.  SIGINT/SIGTERM cancel the jobs out and end
 * the sweep as interrupted.  Workers never write the main database.
 */
#ifndef TA_DISPATCH_H
#define TA_DISPATCH_H

#include "../schema/db.h"
#include "config.h"
#include "controller.h"
#include "plan.h"

/*
 * Runs (or continues) experiment exp_id on Slurm with settings x; opts as
 * for controller_run (sysfs_root is handed to the workers, "%n" standing
 * for each node's name).  Returns 0 when the sweep went to its end or was
 * interrupted (see summary), -1 when it could not go on.
 */
int dispatch_run(struct db *db, const struct plan *plan, int64_t exp_id,
		 const struct executor_settings *x, const struct controller_opts *opts,
		 struct controller_summary *summary, struct ta_err *err);

/*
 * Checks up front what a Slurm sweep needs on this host: a shared_dir
 * that is a directory, Slurm's tools, a partition with a node that can
 * take a job (sinfo), and a Slurm that answers (squeue; a tool failing
 * is tried CHECK_TRIES times a second apart).  What cannot change by
 * waiting (no sbatch, no such partition, no usable node) is EXIT_BAD_INPUT.
 */
int dispatch_check(const struct executor_settings *x, struct ta_err *err);

/*
 * The nodes the sweep's partition has (sinfo) and how many of them can
 * take a job; -1 (EXIT_BAD_INPUT when waiting will not help) as for
 * dispatch_check.  `plan` uses it for the hosts a sweep will have.
 */
struct slurm_node;
int dispatch_hosts(const struct executor_settings *x, struct slurm_node **nodes, size_t *n,
		   int *usable, struct ta_err *err);

#endif
