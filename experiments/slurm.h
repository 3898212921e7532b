/*
 * slurm: the Slurm command-line tools a distributed sweep drives — sbatch
 * to submit, squeue to watch, scancel to stop — run with fork/exec and
 * argv arrays (hostexec.h), never through a shell, and never libslurm,
 * whose API changes with every release while the tools' output formats
 * (--parsable, squeue -o) stay.  SLURM_CONF and the rest of the Slurm
 * environment are passed on as they are.
 *
 * The parsers of the tools' output are pure and tested on their own.
 */
#ifndef TA_SLURM_H
#define TA_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"
#include "../util/strbuf.h"

/* Seconds a Slurm tool may take before it counts as failed (a frozen slurmctld). */
#define SLURM_TOOL_TIMEOUT 30

struct slurm_submit {
	const char *job_name;		/* unique: looked up by it when sbatch fails */
	const char *partition;		/* NULL: the cluster's default */
	char *const *extra;		/* more sbatch options (NULL-terminated; may be NULL) */
	const char *exclude;		/* nodes not to use (NULL: none) */
	const char *output;		/* the job's stdout and stderr (%j: the job id) */
	const char *chdir;		/* the job's working directory */
	const char *script;		/* the batch script */
	char *const *args;		/* its arguments (NULL-terminated) */
};

/*
 * sbatch --parsable --exclusive --no-requeue --job-name ... SCRIPT ARGS.
 * On success *job_id is the new job's id.  On failure (-1) err says why;
 * sbatch may still have created the job (it timed out while slurmctld was
 * slow, and slurmctld went on), so look the job up by its name before
 * submitting it again.
 */
int slurm_submit(const struct slurm_submit *s, char **job_id, struct ta_err *err);

/* One job as squeue lists it. */
struct slurm_job {
	char *id;
	char *name;
	char *state;		/* PENDING, RUNNING, COMPLETED, NODE_FAIL, ... */
	char *nodes;		/* "" while pending */
	char *reason;
};

/*
 * squeue -h -t all --name=NAMES: the jobs with these names in any state
 * slurmctld still remembers (MinJobAge), one call however many names.
 * A job ended long ago is absent: the caller treats absence of a known
 * job as its end.
 */
int slurm_queue(const char *const *names, size_t nnames, struct slurm_job **jobs,
		size_t *njobs, struct ta_err *err);
void slurm_jobs_free(struct slurm_job *v, size_t n);

/* Parses squeue -o '%i|%j|%T|%N|%r' output; -1 on a line that is not such. */
int slurm_queue_parse(const char *text, struct slurm_job **jobs, size_t *njobs,
		      struct ta_err *err);
/* The job id in sbatch --parsable output ("123" or "123;cluster"); NULL if none. */
char *slurm_submit_parse(const char *text);

/*
 * Whether a job in this state may still run or write: anything but the
 * final states (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...).
 * An unknown state counts as active.
 */
bool slurm_state_active(const char *state);

/*
 * Whether an sbatch error says the job can never be submitted as asked
 * (an unknown partition, account or QOS, a node configuration no node
 * has) rather than that slurmctld is slow or away: retrying is no use.
 */
bool slurm_error_permanent(const char *msg);

/*
 * Whether sbatch, squeue, scancel and sinfo can be run (found on PATH);
 * -1 with err naming the first missing one.
 */
int slurm_tools_check(struct ta_err *err);

/* One node as sinfo lists it. */
struct slurm_node {
	char *name;
	char *state;		/* idle, mix, alloc, down*, drain, ... */
	bool usable;		/* may take a job now or soon */
};

/*
 * sinfo --Node: the nodes of `partition` (NULL: the default partition),
 * each once.  None when the partition does not exist.
 */
int slurm_nodes(const char *partition, struct slurm_node **nodes, size_t *n,
		struct ta_err *err);
void slurm_nodes_free(struct slurm_node *v, size_t n);
/* Parses sinfo -o '%N|%t|%P' output (the default partition ends with '*'). */
int slurm_nodes_parse(const char *text, const char *partition, struct slurm_node **nodes,
		      size_t *n, struct ta_err *err);
/* Whether a node in this sinfo state (%t) takes jobs: not down, drained, failing, ... */
bool slurm_node_state_usable(const char *state);

/* scancel the jobs (ids) and, by name, jobs whose id is not known. */
int slurm_cancel(const char *const *ids, size_t nids, const char *const *names, size_t nnames,
		 struct ta_err *err);

#endif
