/* dispatch: a sweep across hosts through Slurm, one job per block; see dispatch.h. */
#include "dispatch.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../schema/db-blocks.h"
#include "../schema/db-race.h"
#include "../schema/db-runs.h"
#include "../util/json.h"
#include "../util/mono.h"
#include "../util/safefile.h"
#include "../util/warn.h"
#include "blockreq.h"
#include "progress.h"
#include "slurm.h"

/* sbatch failures in a row (the name not found in between) that end the sweep. */
#define SUBMIT_TRIES 3
/* Polls an ended job's result may take to appear (a shared file system's caches). */
#define RESULT_GRACE_POLLS 3
/* The largest result file read: a block's runs with their artifacts (each output at
 * most 64 MiB per stream, hostexec.h); a larger one is not a worker's. */
#define RESULT_MAX_BYTES ((uint64_t)4 << 30)
/* What is read of a job's output file: its end (progress, a failure's cause). */
#define OUTPUT_TAIL_BYTES 16384

/* The batch script: the job's arguments are the command, no shell word is ever parsed. */
static const char worker_script[] = "#!/bin/sh\n"
	"# topoadvisor: the batch script of a distributed sweep's blocks; the job's\n"
	"# arguments are the command (topoadvisor run-block REQUEST).\n"
	"exec \"$@\"\n";

enum block_state { BLK_PENDING, BLK_AWAY, BLK_DONE, BLK_GIVEN_UP, BLK_DROPPED };

enum job_state {
	JOB_SUBMITTING,		/* attempt recorded; no job id known yet */
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_ENDED,		/* Slurm says it ended: its result may still come */
	JOB_FINAL,		/* done, failed or cancelled: no longer followed */
};

struct job {
	int64_t id;		/* block_attempts.id */
	int block, attempt;
	char *name, *job_id, *node, *slurm_state;
	enum job_state state;
	double ended_at;	/* JOB_ENDED: when it was seen ending */
	double started;		/* when it was seen running (0: not yet) */
	char *reason;		/* squeue's reason for its state ("None" dropped) */
	int submit_failures;
	char *submit_error;
	char *exclude;		/* sbatch --exclude (NULL: none) */
	char *unusable;		/* why its result cannot be used: it fails, without grace */
};

struct block {
	enum block_state state;
	int attempts;		/* submitted in this session */
	int last_attempt;	/* the highest attempt number stored */
	char *node;		/* where its result came from */
	char **failed_on;	/* nodes an attempt of it failed on: not tried again */
	size_t nfailed_on;
};

/* What one host did in this session (progress). */
struct host_tally {
	char *node;
	int done, failed;
};

struct dsp {
	struct db *db;
	const struct plan *plan;
	int64_t exp_id;
	const struct executor_settings *x;
	const struct controller_opts *opts;
	struct controller_summary *sum;
	struct db_distributed d;
	char *script, *program;
	struct block *blocks;
	int nblocks;
	struct job *jobs;
	size_t njobs;
	char **seen;		/* result files already looked at */
	size_t nseen;
	struct host_tally *hosts;
	size_t nhosts;
	int evaluated;		/* blocks the race has looked after */
	bool stopped;		/* the race stopped */
	double start, block_seconds;	/* this session's start; sum of done blocks' times */
	int blocks_timed;
	int queue_failures;
	struct slurm_node *nodes;	/* the partition's, at the start (sinfo) */
	size_t nnodes;
	int usable;		/* of them, able to take a job */
	char **bad;		/* nodes given no more blocks (executor.exclude_after) */
	size_t nbad;
	bool changed;		/* something to report in the status line */
	char *last_status;	/* the status line printed last */
};

static volatile sig_atomic_t cancel_flag;

static void on_signal(int sig)
{
	cancel_flag = sig;
}

static void note(struct dsp *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct dsp *d, const char *fmt, ...)
{
	d->changed = true;
	if (d->opts->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static struct host_tally *tally(struct dsp *d, const char *node)
{
	for (size_t i = 0; i < d->nhosts; i++)
		if (!strcmp(d->hosts[i].node, node))
			return &d->hosts[i];
	d->hosts = xrealloc(d->hosts, (d->nhosts + 1) * sizeof(*d->hosts));
	d->hosts[d->nhosts] = (struct host_tally){ .node = xstrdup(node) };
	return &d->hosts[d->nhosts++];
}

/* job_progress is defined with the job output readers below. */
static void job_progress(const struct dsp *d, const struct job *j, struct strbuf *out);

/* How much of a status line is news: all of it but its " | ETA ..." tail. */
static size_t status_news_len(const char *line)
{
	const char *eta = strstr(line, " | ETA ");
	return eta ? (size_t)(eta - line) : strlen(line);
}

/*
 * One line: blocks done / running / failed, per host with the run its
 * worker is at, and an estimate of what is left; printed when it changed
 * (a job moved, or a worker reached its next run).
 */
static void status_line(struct dsp *d)
{
	if (d->opts->quiet)
		return;
	int done = 0, away = 0, given_up = 0, left = 0;
	for (int b = 0; b < d->nblocks; b++) {
		enum block_state s = d->blocks[b].state;
		done += s == BLK_DONE;
		away += s == BLK_AWAY;
		given_up += s == BLK_GIVEN_UP;
		left += s == BLK_PENDING || s == BLK_AWAY;
	}
	/* Every host with a job running shows, also before its first block is done. */
	for (size_t j = 0; j < d->njobs; j++)
		if (d->jobs[j].state == JOB_RUNNING && d->jobs[j].node)
			tally(d, d->jobs[j].node);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "blocks: %d/%d done, %d running, %d failed", done, d->nblocks, away,
		    given_up);
	for (size_t i = 0; i < d->nhosts; i++) {
		struct host_tally *h = &d->hosts[i];
		strbuf_addf(&sb, "%s %s %d done", i ? ";" : " |", h->node, h->done);
		if (h->failed)
			strbuf_addf(&sb, ", %d failed", h->failed);
		for (size_t j = 0; j < d->njobs; j++)
			if (d->jobs[j].state == JOB_RUNNING && d->jobs[j].node &&
			    !strcmp(d->jobs[j].node, h->node)) {
				strbuf_addf(&sb, ", running block %d", d->jobs[j].block + 1);
				struct strbuf at = STRBUF_INIT;
				job_progress(d, &d->jobs[j], &at);
				if (at.len)
					strbuf_addf(&sb, " at %s", strbuf_str(&at));
				strbuf_release(&at);
			}
	}
	if (d->nbad) {
		strbuf_addstr(&sb, " | excluded:");
		for (size_t i = 0; i < d->nbad; i++)
			strbuf_addf(&sb, "%s %s", i ? "," : "", d->bad[i]);
	}
	if (d->blocks_timed && left) {
		double per = d->block_seconds / d->blocks_timed;
		int hosts = d->x->max_hosts < left ? d->x->max_hosts : left;
		int avail = d->usable - (int)d->nbad;
		if (d->nnodes && avail >= 1 && avail < hosts)
			hosts = avail;
		char eta[32];
		progress_clock_format(eta, sizeof(eta), ceil((double)left / hosts) * per);
		strbuf_addf(&sb, " | ETA %s", eta);
	}
	/* The ETA alone moving is no news; what the blocks and hosts do is (the
	 * hosts follow the first '|': the news ends where " | ETA" begins). */
	size_t news = status_news_len(strbuf_str(&sb));
	if (d->changed || !d->last_status || status_news_len(d->last_status) != news ||
	    strncmp(d->last_status, sb.buf, news)) {
		fprintf(stderr, "%s\n", strbuf_str(&sb));
		free(d->last_status);
		d->last_status = strbuf_detach(&sb);
	}
	d->changed = false;
	strbuf_release(&sb);
}

static void job_release(struct job *j)
{
	free(j->name);
	free(j->job_id);
	free(j->node);
	free(j->slurm_state);
	free(j->submit_error);
	free(j->unusable);
	free(j->reason);
	free(j->exclude);
}

static void set_str(char **dst, const char *src)
{
	if (src && (!*dst || strcmp(*dst, src))) {
		free(*dst);
		*dst = xstrdup(src);
	}
}

static bool in_list(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static void list_add(char ***v, size_t *n, const char *s)
{
	if (in_list(*v, *n, s))
		return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

static void list_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static struct job *job_add(struct dsp *d, int64_t id, int block, int attempt, const char *name)
{
	d->jobs = xrealloc(d->jobs, (d->njobs + 1) * sizeof(*d->jobs));
	struct job *j = &d->jobs[d->njobs++];
	*j = (struct job){ .id = id, .block = block, .attempt = attempt, .name = xstrdup(name),
			   .state = JOB_SUBMITTING };
	return j;
}

static bool job_out(const struct job *j)
{
	return j->state != JOB_FINAL;
}

static size_t jobs_out(const struct dsp *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->njobs; i++)
		n += job_out(&d->jobs[i]);
	return n;
}

static bool seen(const struct dsp *d, const char *file)
{
	for (size_t i = 0; i < d->nseen; i++)
		if (!strcmp(d->seen[i], file))
			return true;
	return false;
}

static void mark_seen(struct dsp *d, const char *file)
{
	d->seen = xrealloc(d->seen, (d->nseen + 1) * sizeof(*d->seen));
	d->seen[d->nseen++] = xstrdup(file);
}

/* ---- set-up ----------------------------------------------------------- */

/* Tries of a Slurm tool at the start (one failure of a busy slurmctld is no answer). */
#define CHECK_TRIES 3

int dispatch_hosts(const struct executor_settings *x, struct slurm_node **nodes, size_t *n,
		   int *usable, struct ta_err *err)
{
	*nodes = NULL;
	*n = 0;
	*usable = 0;
	if (slurm_tools_check(err) < 0)
		return -1;
	int rc = -1;
	for (int t = 0; t < CHECK_TRIES && rc < 0; t++) {
		if (t)
			mono_sleep_ms(1000);
		rc = slurm_nodes(x->partition, nodes, n, err);
	}
	if (rc < 0) {
		err_prefix(err, "Slurm does not answer (is SLURM_CONF set, slurmctld up?)");
		return -1;
	}
	for (size_t i = 0; i < *n; i++)
		*usable += (*nodes)[i].usable;
	if (!*n && x->partition)
		return err_set(err, EXIT_BAD_INPUT, "partition %s has no nodes (sinfo lists "
			       "none): is executor.partition right?", x->partition);
	if (!*n)
		return err_set(err, EXIT_BAD_INPUT, "the cluster has no default partition with "
			       "nodes (sinfo lists none): set executor.partition");
	if (!*usable) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < *n && i < 8; i++)
			strbuf_addf(&sb, "%s%s %s", i ? ", " : "", (*nodes)[i].name,
				    (*nodes)[i].state);
		err_set(err, EXIT_BAD_INPUT, "no node of %s%s can take a job (%s): resume "
			"them (scontrol update nodename=... state=resume) first",
			x->partition ? "partition " : "the default partition",
			x->partition ? x->partition : "", strbuf_str(&sb));
		strbuf_release(&sb);
		return -1;
	}
	return 0;
}

int dispatch_check(const struct executor_settings *x, struct ta_err *err)
{
	if (!x->shared_dir)
		return err_set(err, EXIT_BAD_INPUT, "a Slurm sweep needs executor.shared_dir: a "
			       "directory this host and every node see under the same name "
			       "(workers write their results there); add it to the config");
	struct stat st;
	if (stat(x->shared_dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(err, EXIT_BAD_INPUT, "executor.shared_dir %s: %s; create it on "
			       "the shared file system first", x->shared_dir,
			       errno ? strerror(errno) : "not a directory");
	struct slurm_node *nodes;
	size_t nn;
	int usable;
	int rc = dispatch_hosts(x, &nodes, &nn, &usable, err);
	slurm_nodes_free(nodes, nn);
	if (rc < 0)
		return -1;
	const char *probe = "topoadvisor-probe";
	struct slurm_job *jobs;
	size_t n;
	rc = -1;
	for (int t = 0; t < CHECK_TRIES && rc < 0; t++) {
		if (t)
			mono_sleep_ms(1000);
		rc = slurm_queue(&probe, 1, &jobs, &n, err);
	}
	if (rc < 0) {
		err_prefix(err, "Slurm does not answer (is SLURM_CONF set, slurmctld up?)");
		return -1;
	}
	slurm_jobs_free(jobs, n);
	return 0;
}

/* The settings the sweep runs with, as stored in the distributed row. */
static char *settings_json(const struct executor_settings *x, const char *root)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &sb, false);
	json_obj_begin(&w);
	json_key(&w, "max_hosts"); json_int(&w, x->max_hosts);
	json_key(&w, "partition"); json_str(&w, x->partition);
	json_key(&w, "sbatch");
	json_arr_begin(&w);
	for (size_t i = 0; i < x->sbatch.argc; i++)
		json_str(&w, x->sbatch.argv[i]);
	json_arr_end(&w);
	json_key(&w, "shared_dir"); json_str(&w, x->shared_dir);
	json_key(&w, "node_dir"); json_str(&w, x->node_dir);
	json_key(&w, "max_attempts"); json_int(&w, x->max_attempts);
	json_key(&w, "exclude_after"); json_int(&w, x->exclude_after);
	json_key(&w, "poll_interval"); json_double(&w, x->poll_interval);
	json_key(&w, "root"); json_str(&w, root);
	json_obj_end(&w);
	return strbuf_detach(&sb);
}

/* The distributed row: read, or made (a fresh tag and work directory) for a new sweep. */
static int setup_work_dir(struct dsp *d, struct ta_err *err)
{
	bool found;
	if (db_distributed_get(d->db, d->exp_id, &d->d, &found, err) < 0)
		return -1;
	if (!found) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint32_t)time(NULL) ^ (uint32_t)getpid();
		struct strbuf tag = STRBUF_INIT, dir = STRBUF_INIT;
		strbuf_addf(&tag, "ta-e%lld-%08x", (long long)d->exp_id, r);
		strbuf_addf(&dir, "%s/%s", d->x->shared_dir, strbuf_str(&tag));
		d->d.kind = xstrdup("slurm");
		d->d.tag = strbuf_detach(&tag);
		d->d.work_dir = strbuf_detach(&dir);
		d->d.settings = settings_json(d->x, d->opts->sysfs_root);
		if (mkdir(d->d.work_dir, 0700) < 0)
			return err_set(err, EXIT_FAILURE_RUN, "cannot create %s: %s", d->d.work_dir,
				       strerror(errno));
		if (db_distributed_start(d->db, d->exp_id, &d->d, err) < 0)
			return -1;
	}
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/worker.sh", d->d.work_dir);
	d->script = strbuf_detach(&sb);
	if (safefile_replace(d->script, worker_script, sizeof(worker_script) - 1, 0700, err) < 0)
		return -1;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return err_set(err, EXIT_FAILURE_RUN, "cannot tell where this topoadvisor is: %s",
			       strerror(errno));
	exe[n] = '\0';
	d->program = xstrdup(exe);
	return 0;
}

static enum job_state job_state_of(const char *db_state)
{
	if (!strcmp(db_state, "submitting"))
		return JOB_SUBMITTING;
	if (!strcmp(db_state, "queued"))
		return JOB_QUEUED;
	if (!strcmp(db_state, "running"))
		return JOB_RUNNING;
	return JOB_FINAL;
}

/*
 * What is stored: the attempts (those still out are followed again), the
 * blocks with runs still to do, and how far the race has looked.
 */
static int load_state(struct dsp *d, struct ta_err *err)
{
	if (db_runs_blocks(d->db, d->exp_id, &d->nblocks, err) < 0)
		return -1;
	d->blocks = xcalloc((size_t)d->nblocks + 1, sizeof(*d->blocks));
	for (int b = 0; b < d->nblocks; b++)
		d->blocks[b].state = BLK_DONE;
	struct db_run_todo *todo;
	size_t ntodo;
	if (db_runs_list(d->db, d->exp_id, true, &todo, &ntodo, err) < 0)
		return -1;
	for (size_t i = 0; i < ntodo; i++)
		d->blocks[todo[i].repetition].state = BLK_PENDING;
	db_runs_free(todo, ntodo);

	struct db_attempt *a;
	size_t na;
	if (db_attempts_list(d->db, d->exp_id, &a, &na, err) < 0)
		return -1;
	for (size_t i = 0; i < na; i++) {
		if (a[i].block >= d->nblocks)
			continue;
		struct block *b = &d->blocks[a[i].block];
		if (a[i].attempt > b->last_attempt)
			b->last_attempt = a[i].attempt;
		if (a[i].result_file)
			mark_seen(d, strrchr(a[i].result_file, '/') ? strrchr(a[i].result_file, '/') + 1
								   : a[i].result_file);
		if (a[i].node && a[i].state && !strcmp(a[i].state, "failed"))
			list_add(&b->failed_on, &b->nfailed_on, a[i].node);
		if (a[i].outcome && !strcmp(a[i].outcome, "ingested")) {
			b->state = BLK_DONE;
			set_str(&b->node, a[i].node);
		}
		struct job *j = job_add(d, a[i].id, a[i].block, a[i].attempt, a[i].job_name);
		j->state = a[i].outcome ? JOB_FINAL : job_state_of(a[i].state);
		set_str(&j->job_id, a[i].job_id);
		set_str(&j->node, a[i].node);
		if (j->state != JOB_FINAL && b->state != BLK_DONE)
			b->state = BLK_AWAY;
	}
	db_attempts_free(a, na);

	if (d->opts->scheduler) {
		struct db_race race;
		bool raced;
		if (db_race_get(d->db, d->exp_id, &race, &raced, err) < 0)
			return -1;
		d->evaluated = raced ? race.blocks_evaluated : 0;
		d->stopped = raced && race.stop_reason;
		db_race_release(&race);
	}
	return 0;
}

/* ---- Slurm ------------------------------------------------------------ */

static struct job *job_by_block(struct dsp *d, int block, int attempt)
{
	for (size_t i = 0; i < d->njobs; i++)
		if (d->jobs[i].block == block && d->jobs[i].attempt == attempt)
			return &d->jobs[i];
	return NULL;
}

static int job_store(struct dsp *d, struct job *j, const char *state, const char *error,
		     struct ta_err *err)
{
	struct db_attempt_set s = { .job_id = j->job_id, .node = j->node, .state = state,
				    .slurm_state = j->slurm_state, .error = error };
	return db_attempt_update(d->db, j->id, &s, err);
}

/* Cancels the jobs of the given block (all blocks: -1) still out; they become final. */
static int cancel_jobs(struct dsp *d, int block, const char *why, struct ta_err *err)
{
	const char **ids = xcalloc(d->njobs + 1, sizeof(*ids));
	const char **names = xcalloc(d->njobs + 1, sizeof(*names));
	size_t nids = 0, nnames = 0;
	int rc = 0;
	for (size_t i = 0; i < d->njobs; i++) {
		struct job *j = &d->jobs[i];
		if (!job_out(j) || (block >= 0 && j->block != block))
			continue;
		if (j->job_id)
			ids[nids++] = j->job_id;
		if (j->state == JOB_SUBMITTING)
			names[nnames++] = j->name;	/* sbatch may have made it anyway */
		j->state = JOB_FINAL;
		if (job_store(d, j, "cancelled", why, err) < 0)
			rc = -1;
	}
	struct ta_err cerr = { 0 };
	if ((nids || nnames) && slurm_cancel(ids, nids, names, nnames, &cerr) < 0 &&
	    !d->opts->quiet)
		warn_emit("%s", cerr.msg);
	free(ids);
	free(names);
	return rc;
}

/*
 * scancel job j (by id, or by name while sbatch's reply is unknown),
 * leaving it followed: squeue says when it has ended.
 */
static void slurm_stop_job(struct dsp *d, const struct job *j)
{
	const char *id = j->job_id, *name = j->name;
	struct ta_err cerr = { 0 };
	if (slurm_cancel(&id, id ? 1 : 0, &name, id ? 0 : 1, &cerr) < 0 && !d->opts->quiet)
		warn_emit("%s", cerr.msg);
}

/* The Slurm state a job is in now, from squeue's row for it. */
static void job_seen(struct dsp *d, struct job *j, const struct slurm_job *row)
{
	bool active = slurm_state_active(row->state);
	bool pending = !strcmp(row->state, "PENDING") || !strcmp(row->state, "CONFIGURING") ||
		       !strncmp(row->state, "REQUEUE", 7);
	set_str(&j->slurm_state, row->state);
	if (row->reason[0] && strcmp(row->reason, "None") && strcmp(row->reason, "(null)"))
		set_str(&j->reason, row->reason);
	if (row->nodes[0] && strcmp(row->nodes, "(null)"))
		set_str(&j->node, row->nodes);
	enum job_state was = j->state;
	if (!active) {
		j->state = JOB_ENDED;
		j->ended_at = mono_now_s();
	} else if (pending) {
		j->state = JOB_QUEUED;
	} else {
		j->state = JOB_RUNNING;
		if (!j->started)
			j->started = mono_now_s();
	}
	if (j->state == JOB_RUNNING && was != JOB_RUNNING)
		note(d, "block %d: running on %s (job %s, attempt %d)", j->block + 1,
		     j->node ? j->node : "?", j->job_id, j->attempt);
}

static int submit(struct dsp *d, struct job *j, struct ta_err *err);

/*
 * One squeue call for every job still out.  A job sbatch failed on is
 * adopted when squeue knows its name, and submitted again when it does
 * not; extra jobs of one name are cancelled; a job squeue no longer lists
 * has ended.  When squeue fails, nothing is concluded this time.
 */
static int poll_queue(struct dsp *d, struct ta_err *err)
{
	const char **names = xcalloc(d->njobs + 1, sizeof(*names));
	size_t nn = 0;
	for (size_t i = 0; i < d->njobs; i++)
		if (d->jobs[i].state != JOB_FINAL && d->jobs[i].state != JOB_ENDED)
			names[nn++] = d->jobs[i].name;
	struct slurm_job *rows = NULL;
	size_t nrows = 0;
	struct ta_err qerr = { 0 };
	int qrc = nn ? slurm_queue(names, nn, &rows, &nrows, &qerr) : 0;
	free(names);
	if (qrc < 0) {
		if (d->queue_failures++ % 20 == 0 && !d->opts->quiet)
			warn_emit("%s (trying again)", qerr.msg);
		return 0;
	}
	d->queue_failures = 0;
	int rc = 0;
	for (size_t i = 0; i < d->njobs && rc == 0; i++) {
		struct job *j = &d->jobs[i];
		if (j->state == JOB_FINAL || j->state == JOB_ENDED)
			continue;
		const struct slurm_job *mine = NULL;
		const char *extra[16];
		size_t nextra = 0;
		for (size_t k = 0; k < nrows; k++) {
			if (strcmp(rows[k].name, j->name))
				continue;
			if (j->job_id && !strcmp(rows[k].id, j->job_id))
				mine = &rows[k];
			else if (!j->job_id && (!mine || atoll(rows[k].id) < atoll(mine->id)))
				mine = &rows[k];
		}
		for (size_t k = 0; k < nrows; k++)
			if (!strcmp(rows[k].name, j->name) && &rows[k] != mine &&
			    slurm_state_active(rows[k].state) && nextra < 16)
				extra[nextra++] = rows[k].id;
		if (nextra) {
			struct ta_err cerr = { 0 };
			note(d, "block %d: cancelling %zu extra job%s named %s (an sbatch that "
			     "failed still submitted)", j->block + 1, nextra, nextra == 1 ? "" : "s",
			     j->name);
			slurm_cancel(extra, nextra, NULL, 0, &cerr);
		}
		if (!mine) {
			if (j->state == JOB_SUBMITTING) {
				rc = submit(d, j, err);
			} else {
				/* Gone from the queue: it ended longer ago than MinJobAge. */
				set_str(&j->slurm_state, "gone from the queue");
				j->state = JOB_ENDED;
				j->ended_at = mono_now_s();
			}
			continue;
		}
		if (!j->job_id) {
			set_str(&j->job_id, mine->id);
			note(d, "block %d: found job %s by its name after sbatch failed", j->block + 1,
			     j->job_id);
		}
		job_seen(d, j, mine);
		const char *state = j->state == JOB_QUEUED ? "queued" :
				    j->state == JOB_RUNNING ? "running" : NULL;
		rc = job_store(d, j, state, NULL, err);
	}
	slurm_jobs_free(rows, nrows);
	return rc;
}

/* ---- results ---------------------------------------------------------- */

/*
 * Parses "block-K.attempt-A.job-J.NODE.db" (K 1-based; J the job id, up
 * to the next dot, copied to job when given); false for other names.
 */
static bool result_name(const char *name, int *block, int *attempt, char *job, size_t jobsz)
{
	int k, a, n = 0;
	size_t len = strlen(name);
	if (sscanf(name, "block-%d.attempt-%d.job-%n", &k, &a, &n) != 2 || !n || k < 1 ||
	    a < 1 || len < 4 || strcmp(name + len - 3, ".db"))
		return false;
	size_t jl = strcspn(name + n, ".");
	if (!jl || name[n + jl] != '.')
		return false;
	if (job) {
		if (jl >= jobsz)
			return false;
		memcpy(job, name + n, jl);
		job[jl] = '\0';
	}
	*block = k - 1;
	*attempt = a;
	return true;
}

/*
 * The end of what the job wrote (its output file, at most its last
 * OUTPUT_TAIL_BYTES), trailing blanks cut.  Only a regular file is read —
 * opened without following a link and without blocking (a FIFO put in its
 * place), and from OUTPUT_TAIL_BYTES before its end as it is now: one
 * read of a bounded size, whatever grows the file meanwhile.
 */
static void job_output_read(const struct dsp *d, const struct job *j, struct strbuf *text)
{
	if (!j->job_id)
		return;
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "%s/%s.%s.out", d->d.work_dir, j->name, j->job_id);
	int fd = open(strbuf_str(&path), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
		      O_NOCTTY);
	strbuf_release(&path);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t from = st.st_size > OUTPUT_TAIL_BYTES ? st.st_size - OUTPUT_TAIL_BYTES : 0;
		size_t want = (size_t)(st.st_size - from);
		char *buf = xmalloc(want + 1);
		ssize_t n = want ? pread(fd, buf, want, from) : 0;
		if (n > 0)
			strbuf_add(text, buf, (size_t)n);
		free(buf);
		while (text->len && (text->buf[text->len - 1] == '\n' ||
				     text->buf[text->len - 1] == ' '))
			text->len--;
	}
	close(fd);
}

/* The last line the job wrote (its output file), for a failure's message. */
static void job_output_tail(const struct dsp *d, const struct job *j, struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;
	job_output_read(d, j, &text);
	size_t start = text.len;
	while (start && text.buf[start - 1] != '\n')
		start--;
	if (text.len > start)
		strbuf_addf(out, ": %.*s", (int)(text.len - start > 300 ? 300 : text.len - start),
			    text.buf + start);
	strbuf_release(&text);
}

/*
 * Where a running job's worker is: its last progress line ("[3/12] KEY
 * repetition 2 (elapsed ...)", or "...: still running after 1:00 (...)"),
 * up to its parenthesis, made printable.  Nothing before its first run.
 */
static void job_progress(const struct dsp *d, const struct job *j, struct strbuf *out)
{
	struct strbuf text = STRBUF_INIT;
	job_output_read(d, j, &text);
	size_t end = text.len;
	while (end) {
		size_t start = end;
		while (start && text.buf[start - 1] != '\n')
			start--;
		const char *line = text.buf + start;
		size_t len = end - start;
		if (len > 3 && line[0] == '[' && isdigit((unsigned char)line[1]) &&
		    memchr(line, ']', len)) {
			const char *paren = memmem(line, len, " (", 2);
			if (paren)
				len = (size_t)(paren - line);
			strbuf_add_printable(out, line, len > 200 ? 200 : len);
			break;
		}
		end = start ? start - 1 : 0;
	}
	strbuf_release(&text);
}

/* A block's first complete result arrived: other jobs for it are no longer needed. */
static int block_done(struct dsp *d, struct job *j, const struct db_block_result *res,
		      struct ta_err *err)
{
	struct block *b = &d->blocks[res->block];
	b->state = BLK_DONE;
	set_str(&b->node, res->node);
	size_t ok = 0, failed = 0;
	for (size_t i = 0; i < res->nruns; i++)
		!strcmp(res->runs[i].r.status, "ok") ? ok++ : failed++;
	d->sum->attempted += ok + failed;
	d->sum->ok += ok;
	d->sum->failed += failed;
	tally(d, res->node)->done++;
	char took[32] = "";
	if (j->started) {
		double s = mono_now_s() - j->started;
		d->block_seconds += s;
		d->blocks_timed++;
		progress_clock_format(took, sizeof(took), s);
	}
	note(d, "block %d: done on %s%s%s (job %s, attempt %d): %zu runs ok, %zu failed",
	     res->block + 1, res->node, took[0] ? " in " : "", took, res->job_id, res->attempt,
	     ok, failed);
	j->state = JOB_FINAL;
	return cancel_jobs(d, res->block, "the block's result came from another attempt", err);
}

/*
 * The attempt j's result is unusable (why): recorded with the file, and the
 * attempt fails — at once when its job has ended, else once Slurm says it
 * ended after we cancelled it, so that the block is never out twice and
 * no more than max_hosts jobs ever run.
 */
static int result_unusable(struct dsp *d, struct job *j, const char *path, const char *why,
			   struct ta_err *err)
{
	note(d, "block %d: attempt %d's result is unusable: %s", j->block + 1, j->attempt, why);
	struct db_attempt_set s = { .error = why, .result_file = path };
	if (db_attempt_update(d->db, j->id, &s, err) < 0)
		return -1;
	if (!job_out(j) || j->unusable)
		return 0;
	set_str(&j->unusable, why);
	if (j->state == JOB_ENDED)
		j->ended_at = -1e9;
	else
		slurm_stop_job(d, j);
	return 0;
}

/*
 * Why the result file `file` cannot be attempt j's (NULL when it can): a
 * regular file no larger than RESULT_MAX_BYTES, its block, attempt, job
 * name and job id those of the attempt.  (Read before it is trusted.)
 */
static const char *result_check_file(const struct dsp *d, const char *path, struct strbuf *why)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		strbuf_addf(why, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		strbuf_addf(why, "%s is not a regular file", path);
	else if ((uint64_t)st.st_size > RESULT_MAX_BYTES)
		strbuf_addf(why, "%s has %.0f MiB, more than a result may (%u MiB)", path,
			    st.st_size / 1048576.0, (unsigned)(RESULT_MAX_BYTES >> 20));
	(void)d;
	return why->len ? strbuf_str(why) : NULL;
}

static const char *result_check(const struct job *j, const char *job, int block, int attempt,
				const struct db_block_result *res, struct strbuf *why)
{
	if (res->block != block || res->attempt != attempt)
		strbuf_addf(why, "it holds block %d attempt %d, its name says block %d attempt %d",
			    res->block + 1, res->attempt, block + 1, attempt);
	else if (strcmp(res->job_name, j->name))
		strbuf_addf(why, "it is of job %s, not %s", res->job_name, j->name);
	else if (!res->job_id || strcmp(res->job_id, job))
		strbuf_addf(why, "it holds job id %s, its name says %s",
			    res->job_id ? res->job_id : "none", job);
	return why->len ? strbuf_str(why) : NULL;
}

/*
 * Reads and ingests one result file (first complete result of its block,
 * or a duplicate).  A file that is no attempt's (no such block or attempt,
 * or another job than the attempt's) is ignored; one of the attempt's job
 * that cannot be used fails that attempt only (result_unusable).
 */
static int take_result(struct dsp *d, const char *file, int block, int attempt,
		       const char *job, struct ta_err *err)
{
	mark_seen(d, file);
	struct job *j = block < d->nblocks ? job_by_block(d, block, attempt) : NULL;
	if (!j || (j->job_id && strcmp(j->job_id, job))) {
		note(d, "ignoring %s: %s", file, !j ? "no such attempt of this experiment"
		     : "not the job of that attempt");
		return 0;
	}
	struct strbuf path = STRBUF_INIT, why = STRBUF_INIT;
	strbuf_addf(&path, "%s/%s", d->d.work_dir, file);
	struct db_block_result res = { 0 };
	struct ta_err rerr = { 0 };
	int rc = 0;
	if (result_check_file(d, strbuf_str(&path), &why) ||
	    (db_block_result_read(strbuf_str(&path), &res, &rerr) < 0 &&
	     (strbuf_addstr(&why, rerr.msg), true)) ||
	    result_check(j, job, block, attempt, &res, &why)) {
		rc = result_unusable(d, j, strbuf_str(&path), strbuf_str(&why), err);
	} else if (d->blocks[block].state == BLK_DROPPED) {
		note(d, "block %d: result of attempt %d not stored: the race stopped before it",
		     block + 1, attempt);
		j->state = JOB_FINAL;
		rc = job_store(d, j, "done", "not stored: the race had stopped before this block",
			       err);
	} else {
		int ingested = db_block_ingest(d->db, d->exp_id, j->id, &res, strbuf_str(&path),
					       &rerr);
		if (ingested == DB_BLOCK_UNUSABLE)
			rc = result_unusable(d, j, strbuf_str(&path), rerr.msg, err);
		else if (ingested < 0)
			rc = err_set(err, rerr.code, "%s", rerr.msg);
		else if (ingested)
			rc = block_done(d, j, &res, err);
		else {
			note(d, "block %d: a later result from %s (job %s, attempt %d) is a duplicate: "
			     "kept in %s, not stored", block + 1, res.node, res.job_id, attempt,
			     strbuf_str(&path));
			j->state = JOB_FINAL;
		}
	}
	db_block_result_release(&res);
	strbuf_release(&why);
	strbuf_release(&path);
	return rc;
}

/* Looks at every result file of the work directory not looked at before. */
static int scan_results(struct dsp *d, struct ta_err *err)
{
	DIR *dir = opendir(d->d.work_dir);
	if (!dir)
		return err_set(err, EXIT_FAILURE_RUN, "cannot read %s: %s", d->d.work_dir,
			       strerror(errno));
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		int block, attempt;
		if (e->d_name[0] != '.' && result_name(e->d_name, &block, &attempt, NULL, 0) &&
		    !seen(d, e->d_name)) {
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xstrdup(e->d_name);
		}
	}
	closedir(dir);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		int block, attempt;
		char job[64];
		if (rc == 0 && result_name(names[i], &block, &attempt, job, sizeof(job)))
			rc = take_result(d, names[i], block, attempt, job, err);
		free(names[i]);
	}
	free(names);
	return rc;
}

/*
 * Jobs that ended without a result, RESULT_GRACE_POLLS polls on: recorded
 * failed; their block goes again as the next attempt, or, after
 * max_attempts in this session, its runs are failed.
 */
static int end_jobs(struct dsp *d, struct ta_err *err)
{
	double grace = RESULT_GRACE_POLLS * d->x->poll_interval;
	for (size_t i = 0; i < d->njobs; i++) {
		struct job *j = &d->jobs[i];
		if (j->state != JOB_ENDED || (mono_now_s() - j->ended_at < grace && !j->unusable))
			continue;
		struct strbuf why = STRBUF_INIT;
		strbuf_addf(&why, "job %s%s%s ended %s without a result", j->job_id ? j->job_id : "?",
			    j->node ? " on " : "", j->node ? j->node : "",
			    j->slurm_state ? j->slurm_state : "");
		if (j->reason)
			strbuf_addf(&why, " (Slurm: %s)", j->reason);
		if (j->unusable)
			strbuf_addf(&why, " it could use: %s", j->unusable);
		else if (j->submit_error)
			strbuf_addf(&why, ": %s", j->submit_error);
		else
			job_output_tail(d, j, &why);
		j->state = JOB_FINAL;
		if (job_store(d, j, "failed", strbuf_str(&why), err) < 0) {
			strbuf_release(&why);
			return -1;
		}
		struct block *b = &d->blocks[j->block];
		if (j->node) {
			tally(d, j->node)->failed++;
			list_add(&b->failed_on, &b->nfailed_on, j->node);
		}
		int rc = 0;
		bool other_out = false;
		for (size_t k = 0; k < d->njobs; k++)
			other_out |= d->jobs[k].block == j->block && job_out(&d->jobs[k]);
		if (b->state == BLK_AWAY && !other_out) {
			bool again = b->attempts < d->x->max_attempts;
			struct strbuf runerr = STRBUF_INIT;
			strbuf_addf(&runerr, "block %d, attempt %d: %s", j->block + 1, j->attempt,
				    strbuf_str(&why));
			if (!again)
				strbuf_addf(&runerr, " (no result in %d attempts)", b->attempts);
			int nended = 0;
			rc = db_block_runs_end(d->db, d->exp_id, j->block,
					       again ? "interrupted" : "failed", strbuf_str(&runerr),
					       &nended, err);
			if (!again) {
				d->sum->attempted += (size_t)nended;
				d->sum->failed += (size_t)nended;
			}
			b->state = again ? BLK_PENDING : BLK_GIVEN_UP;
			note(d, "block %d: %s; %s", j->block + 1, strbuf_str(&why),
			     again ? "submitting it again" : "giving up on it");
			strbuf_release(&runerr);
		}
		strbuf_release(&why);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- race ------------------------------------------------------------- */

/*
 * Ordered block racing: the race looks after block k only once blocks
 * 1..k are all complete.  When it stops, the blocks after are dropped.
 */
static int race_steps(struct dsp *d, struct ta_err *err)
{
	const struct controller_scheduler *sched = d->opts->scheduler;
	if (!sched || d->stopped)
		return 0;
	int prefix = 0;
	while (prefix < d->nblocks && (d->blocks[prefix].state == BLK_DONE ||
				       d->blocks[prefix].state == BLK_GIVEN_UP ||
				       d->blocks[prefix].state == BLK_DROPPED))
		prefix++;
	while (d->evaluated < prefix && !d->stopped) {
		int k = ++d->evaluated;
		if (sched->between_blocks(sched->data, d->db, d->exp_id, k, err) < 0)
			return -1;
		struct db_race race;
		bool raced;
		if (db_race_get(d->db, d->exp_id, &race, &raced, err) < 0)
			return -1;
		d->stopped = raced && race.stop_reason;
		int after = race.stopped_after;
		db_race_release(&race);
		if (!d->stopped)
			continue;
		for (int b = after; b < d->nblocks; b++) {
			if (d->blocks[b].state != BLK_PENDING && d->blocks[b].state != BLK_AWAY)
				continue;
			if (cancel_jobs(d, b, "the race stopped before this block", err) < 0 ||
			    db_block_runs_drop(d->db, d->exp_id, b, err) < 0)
				return -1;
			d->blocks[b].state = BLK_DROPPED;
			d->changed = true;
		}
	}
	return 0;
}

/* ---- nodes ------------------------------------------------------------ */

/*
 * The nodes given no more blocks of the sweep: by the stored attempts, a
 * node whose last executor.exclude_after blocks failed there
 * (db_attempts_bad_nodes, the rule `show` applies too).  A node newly
 * excluded is said.
 */
static int refresh_bad_nodes(struct dsp *d, struct ta_err *err)
{
	if (d->x->exclude_after <= 0)
		return 0;
	struct db_attempt *a;
	size_t na;
	if (db_attempts_list(d->db, d->exp_id, &a, &na, err) < 0)
		return -1;
	const char **out = xcalloc(na + 1, sizeof(*out));
	size_t n = db_attempts_bad_nodes(a, na, d->x->exclude_after, out);
	char **bad = NULL;
	size_t nbad = 0;
	for (size_t i = 0; i < n; i++) {
		if (!in_list(d->bad, d->nbad, out[i]))
			note(d, "node %s: excluded from this sweep: its last %d blocks failed "
			     "there (executor.exclude_after)", out[i], d->x->exclude_after);
		list_add(&bad, &nbad, out[i]);
	}
	list_free(d->bad, d->nbad);
	d->bad = bad;
	d->nbad = nbad;
	free(out);
	db_attempts_free(a, na);
	return 0;
}

/* How many of the partition's usable nodes are in neither list. */
static int nodes_left(const struct dsp *d, char *const *x1, size_t n1, char *const *x2,
		      size_t n2)
{
	int left = 0;
	for (size_t i = 0; i < d->nnodes; i++)
		left += d->nodes[i].usable && !in_list(x1, n1, d->nodes[i].name) &&
			!in_list(x2, n2, d->nodes[i].name);
	return left;
}

/*
 * sbatch --exclude for block b: the nodes excluded from the sweep and
 * those an attempt of b failed on — unless that leaves no node of the
 * partition, when b may go back to a node it failed on.  NULL: none.
 * -1 (err) when every node is excluded from the sweep.
 */
static int exclude_for(struct dsp *d, int b, char **out, struct ta_err *err)
{
	*out = NULL;
	const struct block *blk = &d->blocks[b];
	if (d->nnodes && !nodes_left(d, d->bad, d->nbad, NULL, 0)) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < d->nbad; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", d->bad[i]);
		err_set(err, EXIT_FAILURE_RUN, "every node that can take a job is excluded from "
			"this sweep, each having failed its last %d blocks (%s); see 'topoadvisor "
			"show %lld' for why, mend them, then resume", d->x->exclude_after,
			strbuf_str(&sb), (long long)d->exp_id);
		strbuf_release(&sb);
		return -1;
	}
	bool per_block = !d->nnodes || nodes_left(d, d->bad, d->nbad, blk->failed_on,
						  blk->nfailed_on) > 0;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < d->nbad; i++)
		strbuf_addf(&sb, "%s%s", sb.len ? "," : "", d->bad[i]);
	for (size_t i = 0; per_block && i < blk->nfailed_on; i++)
		if (!in_list(d->bad, d->nbad, blk->failed_on[i]))
			strbuf_addf(&sb, "%s%s", sb.len ? "," : "", blk->failed_on[i]);
	if (sb.len)
		*out = strbuf_detach(&sb);
	strbuf_release(&sb);
	return 0;
}

/* ---- submitting ------------------------------------------------------- */

/* sbatch for job j (already recorded); a failure is retried by poll_queue. */
static int submit(struct dsp *d, struct job *j, struct ta_err *err)
{
	struct strbuf request = STRBUF_INIT, output = STRBUF_INIT;
	strbuf_addf(&request, "%s/%s.json", d->d.work_dir, j->name);
	strbuf_addf(&output, "%s/%s.%%j.out", d->d.work_dir, j->name);
	char *args[] = { d->program, "run-block", (char *)strbuf_str(&request), NULL };
	struct slurm_submit s = { .job_name = j->name, .partition = d->x->partition,
				  .exclude = j->exclude,
				  .extra = d->x->sbatch.argv, .output = strbuf_str(&output),
				  .chdir = d->d.work_dir, .script = d->script, .args = args };
	struct ta_err serr = { 0 };
	char *id = NULL;
	int rc = 0;
	if (slurm_submit(&s, &id, &serr) == 0) {
		j->job_id = id;
		j->state = JOB_QUEUED;
		j->submit_failures = 0;
		if (d->opts->verbose)
			note(d, "block %d: submitted as job %s (attempt %d)", j->block + 1, id,
			     j->attempt);
		rc = job_store(d, j, "queued", NULL, err);
	} else if (slurm_error_permanent(serr.msg)) {
		/* No job was made, and none will be: nothing to look up or retry. */
		j->state = JOB_FINAL;
		struct ta_err ignore = { 0 };
		job_store(d, j, "failed", serr.msg, &ignore);
		rc = err_set(err, EXIT_BAD_INPUT, "block %d: Slurm refused the job: %s",
			     j->block + 1, serr.msg);
	} else if (++j->submit_failures >= SUBMIT_TRIES) {
		rc = err_set(err, EXIT_FAILURE_RUN, "block %d: sbatch failed %d times: %s",
			     j->block + 1, j->submit_failures, serr.msg);
	} else {
		note(d, "block %d: %s; looking the job up by its name before trying again",
		     j->block + 1, serr.msg);
		set_str(&j->submit_error, serr.msg);
	}
	strbuf_release(&request);
	strbuf_release(&output);
	return rc;
}

/* Writes block b's request, records its next attempt, marks its runs away, submits. */
static int send_block(struct dsp *d, int b, const struct db_run_todo *todo, size_t ntodo,
		      struct ta_err *err)
{
	struct block *blk = &d->blocks[b];
	const struct sweep_config *cfg = d->plan->cfg;
	struct block_request req = { .experiment_id = d->exp_id, .name = cfg->name,
				     .seed = d->plan->seed, .config = cfg->text,
				     .primary_metric = cfg->bench.metric.name,
				     .higher_is_better = !cfg->bench.metric.direction_given ? -1
							 : cfg->bench.metric.higher_is_better,
				     .block = b, .attempt = blk->last_attempt + 1,
				     .root = (char *)d->opts->sysfs_root };
	int64_t *ids = xcalloc(ntodo + 1, sizeof(*ids));
	req.keys = xcalloc(ntodo + 1, sizeof(*req.keys));
	for (size_t i = 0; i < ntodo; i++)
		if (todo[i].repetition == b) {
			ids[req.nkeys] = todo[i].run_id;
			req.keys[req.nkeys++] = todo[i].key;
		}
	struct strbuf name = STRBUF_INIT, path = STRBUF_INIT;
	strbuf_addf(&name, "%s-b%d-a%d", d->d.tag, b + 1, req.attempt);
	strbuf_addf(&path, "%s/%s.json", d->d.work_dir, strbuf_str(&name));
	req.job_name = (char *)strbuf_str(&name);
	int64_t attempt_id;
	int rc = -1;
	if (!req.nkeys) {
		blk->state = BLK_DONE;	/* nothing left to run in it */
		rc = 0;
	} else if (blockreq_write(&req, strbuf_str(&path), err) == 0 &&
		   db_attempt_insert(d->db, d->exp_id, b, req.attempt, strbuf_str(&name),
				     &attempt_id, err) == 0 &&
		   db_block_runs_dispatch(d->db, ids, req.nkeys, err) == 0) {
		blk->last_attempt = req.attempt;
		blk->attempts++;
		blk->state = BLK_AWAY;
		d->changed = true;
		struct job *j = job_add(d, attempt_id, b, req.attempt, strbuf_str(&name));
		rc = exclude_for(d, b, &j->exclude, err);
		if (rc == 0)
			rc = submit(d, j, err);
	}
	free(ids);
	free(req.keys);
	strbuf_release(&name);
	strbuf_release(&path);
	return rc;
}

/*
 * Whether block b is too far past the race's last look to go out now: a
 * race runs at most max_hosts blocks beyond the last block it looked
 * after (RACE_AHEAD).  Without the bound, a block that stalls (its node
 * died; Slurm takes SlurmdTimeout to say so) lets every later block run
 * every configuration, turning the race into a full sweep; with it, the
 * stall costs time, and at most max_hosts blocks' runs a serial race
 * might not have made.
 */
static bool past_race_bound(const struct dsp *d, int b)
{
	return d->opts->scheduler && !d->stopped && b >= d->evaluated + d->x->max_hosts;
}

/* Submits pending blocks, lowest first, while fewer than max_hosts jobs are out. */
static int send_blocks(struct dsp *d, struct ta_err *err)
{
	struct db_run_todo *todo = NULL;
	size_t ntodo = 0;
	int rc = 0;
	for (int b = 0; b < d->nblocks && rc == 0 && !cancel_flag; b++) {
		if (d->blocks[b].state != BLK_PENDING)
			continue;
		if (jobs_out(d) >= (size_t)d->x->max_hosts || past_race_bound(d, b))
			break;
		if (!todo && db_runs_list(d->db, d->exp_id, true, &todo, &ntodo, err) < 0)
			return -1;
		rc = send_block(d, b, todo, ntodo, err);
	}
	db_runs_free(todo, ntodo);
	return rc;
}

/* ---- the loop --------------------------------------------------------- */

static bool finished(const struct dsp *d)
{
	for (int b = 0; b < d->nblocks; b++)
		if (d->blocks[b].state == BLK_PENDING || d->blocks[b].state == BLK_AWAY)
			return false;
	return !d->opts->scheduler || d->stopped || d->evaluated >= d->nblocks;
}

/* Sleeps the poll interval; a signal ends the sleep early. */
static void pause_poll(const struct dsp *d)
{
	if (!cancel_flag)
		mono_sleep_ms((long)(d->x->poll_interval * 1000));
}

static void dsp_release(struct dsp *d)
{
	for (size_t i = 0; i < d->njobs; i++)
		job_release(&d->jobs[i]);
	free(d->jobs);
	for (int b = 0; b < d->nblocks; b++) {
		free(d->blocks[b].node);
		list_free(d->blocks[b].failed_on, d->blocks[b].nfailed_on);
	}
	free(d->blocks);
	list_free(d->bad, d->nbad);
	slurm_nodes_free(d->nodes, d->nnodes);
	for (size_t i = 0; i < d->nseen; i++)
		free(d->seen[i]);
	free(d->seen);
	for (size_t i = 0; i < d->nhosts; i++)
		free(d->hosts[i].node);
	free(d->hosts);
	free(d->last_status);
	free(d->script);
	free(d->program);
	db_distributed_release(&d->d);
}

int dispatch_run(struct db *db, const struct plan *plan, int64_t exp_id,
		 const struct executor_settings *x, const struct controller_opts *opts,
		 struct controller_summary *summary, struct ta_err *err)
{
	struct dsp d = { .db = db, .plan = plan, .exp_id = exp_id, .x = x, .opts = opts,
			 .sum = summary, .start = mono_now_s() };
	memset(summary, 0, sizeof(*summary));
	cancel_flag = 0;
	/* No SA_RESTART: a signal ends the poll's sleep at once. */
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	int rc = -1;
	if (dispatch_check(x, err) < 0 ||
	    dispatch_hosts(x, &d.nodes, &d.nnodes, &d.usable, err) < 0 ||
	    setup_work_dir(&d, err) < 0 || load_state(&d, err) < 0 ||
	    refresh_bad_nodes(&d, err) < 0 ||
	    db_experiment_set_status(db, exp_id, "running", err) < 0)
		goto out;
	if (!opts->quiet)
		fprintf(stderr, "on Slurm: %d blocks, at most %d at once, jobs named %s-bK-aN, "
			"work directory %s\n", d.nblocks, x->max_hosts, d.d.tag, d.d.work_dir);
	for (;;) {
		if (poll_queue(&d, err) < 0 || scan_results(&d, err) < 0 || end_jobs(&d, err) < 0 ||
		    refresh_bad_nodes(&d, err) < 0 || race_steps(&d, err) < 0)
			goto out;
		if (cancel_flag || finished(&d))
			break;
		if (send_blocks(&d, err) < 0)
			goto out;
		status_line(&d);
		pause_poll(&d);
	}
	status_line(&d);
	rc = 0;
out:
	if (cancel_flag) {
		struct ta_err cerr = { 0 };
		char why[64];
		snprintf(why, sizeof(why), "the controller was interrupted by signal %d",
			 (int)cancel_flag);
		cancel_jobs(&d, -1, why, &cerr);
		for (int b = 0; b < d.nblocks; b++) {
			int nended;
			if (d.blocks[b].state == BLK_AWAY)
				db_block_runs_end(db, exp_id, b, "interrupted", why, &nended, &cerr);
		}
		summary->interrupted = true;
	} else if (rc < 0 && jobs_out(&d) && !opts->quiet) {
		/* A job sbatch gave no id for may or may not exist. */
		size_t known = 0;
		for (size_t i = 0; i < d.njobs; i++)
			known += job_out(&d.jobs[i]) && d.jobs[i].job_id;
		size_t maybe = jobs_out(&d) - known;
		if (known)
			fprintf(stderr, "topoadvisor: %zu job%s still out; 'topoadvisor resume %lld' "
				"adopts them\n", known, known == 1 ? " is" : "s are",
				(long long)exp_id);
		if (maybe)
			fprintf(stderr, "topoadvisor: %zu submission%s failed but may have made a "
				"job; 'topoadvisor resume %lld' looks %s up by name\n", maybe,
				maybe == 1 ? "" : "s", (long long)exp_id, maybe == 1 ? "it" : "them");
	}
	{
		struct ta_err serr = { 0 };
		if (rc < 0 && !summary->interrupted)
			db_experiment_fail(db, exp_id, err->msg, &serr);
		else
			db_experiment_set_status(db, exp_id, summary->interrupted ? "interrupted"
						 : "done", &serr);
	}
	dsp_release(&d);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
