/* sshexec: a sweep across hosts over ssh, one block per host; see sshexec.h. */
#include "sshexec.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../schema/db-blocks.h"
#include "../schema/db-race.h"
#include "../schema/db-runs.h"
#include "../util/mono.h"
#include "../util/safefile.h"
#include "../util/warn.h"
#include "blockreq.h"
#include "progress.h"

/* How often the controller looks at its ssh clients (ms). */
#define SSH_TICK_MS 100
/* A result larger than this fails its attempt (as dispatch.c's RESULT_MAX_BYTES). */
#define SSH_RESULT_MAX_BYTES ((uint64_t)4 << 30)
/* The tail of a failed attempt's output kept as its cause. */
#define SSH_TAIL 400

enum sblock_state { SB_PENDING, SB_AWAY, SB_DONE, SB_GIVEN_UP, SB_DROPPED };

struct sblock {
	enum sblock_state state;
	int attempts;		/* started in this session */
	int last_attempt;	/* the highest attempt number stored */
	bool *failed_on;	/* per host: an attempt of this block failed there */
};

struct shost {
	const char *name;
	pid_t pid;		/* the ssh client of its attempt; 0 when idle */
	int64_t attempt_id;
	int block, attempt;
	char *job_name;
	double started;
	int fails_in_row, done;
	bool dropped;
};

struct sx {
	struct db *db;
	const struct plan *plan;
	int64_t exp_id;
	const struct executor_settings *x;
	const struct controller_opts *opts;
	struct controller_summary *sum;
	struct db_distributed d;
	char *program, *ctl_dir;
	struct sblock *blocks;
	int nblocks;
	struct shost *hosts;
	size_t nhosts;
	int evaluated;
	bool stopped;
};

static volatile sig_atomic_t cancel_flag;

static void on_signal(int sig)
{
	cancel_flag = sig;
}

static void note(const struct sx *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const struct sx *s, const char *fmt, ...)
{
	if (s->opts->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int sshexec_remote_command(const char *const *words, struct strbuf *out)
{
	strbuf_reset(out);
	for (size_t i = 0; words[i]; i++) {
		if (!words[i][0])
			return -1;
		for (const char *c = words[i]; *c; c++)
			if (!isalnum((unsigned char)*c) && !strchr("/._+-=:,", *c))
				return -1;
		strbuf_addf(out, "%s'%s'", i ? " " : "", words[i]);
	}
	return 0;
}

int sshexec_check(const struct executor_settings *x, struct ta_err *err)
{
	if (!x->hosts.argc)
		return err_set(err, EXIT_BAD_INPUT, "an ssh sweep needs executor.hosts: the hosts "
			       "to run blocks on, as ssh names them");
	if (x->ssh_config && access(x->ssh_config, R_OK) < 0)
		return err_set(err, EXIT_BAD_INPUT, "executor.ssh_config %s: %s", x->ssh_config,
			       strerror(errno));
	const char *path = getenv("PATH");
	struct strbuf p = STRBUF_INIT;
	bool found = false;
	for (const char *s = path ? path : "/usr/bin:/bin"; s && !found;) {
		const char *e = strchr(s, ':');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		strbuf_reset(&p);
		strbuf_add(&p, s, len);
		strbuf_addstr(&p, "/ssh");
		found = len && access(strbuf_str(&p), X_OK) == 0;
		s = e ? e + 1 : NULL;
	}
	strbuf_release(&p);
	if (!found)
		return err_set(err, EXIT_BAD_INPUT, "an ssh sweep needs the ssh client (OpenSSH) "
			       "on PATH; install openssh-client");
	return 0;
}

/* The work directory: executor.shared_dir, else the database's directory. */
static int setup(struct sx *s, struct ta_err *err)
{
	bool found;
	if (db_distributed_get(s->db, s->exp_id, &s->d, &found, err) < 0)
		return -1;
	if (!found) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint32_t)time(NULL) ^ (uint32_t)getpid();
		char *dbdir = xstrdup(s->db->path);
		struct strbuf tag = STRBUF_INIT, dir = STRBUF_INIT;
		strbuf_addf(&tag, "ta-e%lld-%08x", (long long)s->exp_id, r);
		strbuf_addf(&dir, "%s/%s", s->x->shared_dir ? s->x->shared_dir : dirname(dbdir),
			    strbuf_str(&tag));
		free(dbdir);
		s->d.kind = xstrdup("ssh");
		s->d.tag = strbuf_detach(&tag);
		s->d.work_dir = strbuf_detach(&dir);
		s->d.settings = xstrdup("{}");
		if (mkdir(s->d.work_dir, 0700) < 0)
			return err_set(err, EXIT_FAILURE_RUN, "cannot create %s: %s", s->d.work_dir,
				       strerror(errno));
		if (db_distributed_start(s->db, s->exp_id, &s->d, err) < 0)
			return -1;
	}
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return err_set(err, EXIT_FAILURE_RUN, "cannot tell where this topoadvisor is: %s",
			       strerror(errno));
	exe[n] = '\0';
	/* The front program, when this is topoadvisor-core beside it. */
	size_t len = strlen(exe);
	if (len > 5 && !strcmp(exe + len - 5, "-core"))
		exe[len - 5] = '\0';
	s->program = xstrdup(exe);
	/* The control sockets: one private directory per sweep, found again by
	 * `resume` (whose ssh then reuses a killed controller's masters). */
	const char *tmp = getenv("TMPDIR");
	struct strbuf ctl = STRBUF_INIT;
	strbuf_addf(&ctl, "%s/ta-ssh-%s", tmp && *tmp == '/' ? tmp : "/tmp", s->d.tag);
	struct stat st;
	if (mkdir(ctl.buf, 0700) < 0 && (errno != EEXIST || lstat(ctl.buf, &st) < 0 ||
					 !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
					 (st.st_mode & 077))) {
		err_set(err, EXIT_FAILURE_RUN, "cannot use %s for ssh's control sockets: %s",
			ctl.buf, errno == EEXIST ? "it exists and is not a private directory of ours"
			: strerror(errno));
		strbuf_release(&ctl);
		return -1;
	}
	s->ctl_dir = strbuf_detach(&ctl);
	s->hosts = xcalloc(s->x->hosts.argc + 1, sizeof(*s->hosts));
	s->nhosts = s->x->hosts.argc;
	for (size_t i = 0; i < s->nhosts; i++)
		s->hosts[i].name = s->x->hosts.argv[i];
	return 0;
}

/*
 * What is stored: blocks with runs to do; attempts a killed controller
 * left away are failed and their blocks go again.
 */
static int load_state(struct sx *s, struct ta_err *err)
{
	if (db_runs_blocks(s->db, s->exp_id, &s->nblocks, err) < 0)
		return -1;
	s->blocks = xcalloc((size_t)s->nblocks + 1, sizeof(*s->blocks));
	for (int b = 0; b < s->nblocks; b++) {
		s->blocks[b].state = SB_DONE;
		s->blocks[b].failed_on = xcalloc(s->nhosts + 1, sizeof(bool));
	}
	struct db_attempt *a;
	size_t na;
	if (db_attempts_list(s->db, s->exp_id, &a, &na, err) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < na && rc == 0; i++) {
		if (a[i].block < 0 || a[i].block >= s->nblocks)
			continue;
		struct sblock *b = &s->blocks[a[i].block];
		if (a[i].attempt > b->last_attempt)
			b->last_attempt = a[i].attempt;
		bool final = a[i].outcome || !strcmp(a[i].state, "done") ||
			     !strcmp(a[i].state, "failed") || !strcmp(a[i].state, "cancelled");
		if (final)
			continue;
		const char *why = "the controller stopped during this attempt";
		struct db_attempt_set set = { .state = "failed", .error = why };
		int nended;
		rc = db_attempt_update(s->db, a[i].id, &set, err);
		if (rc == 0)
			rc = db_block_runs_end(s->db, s->exp_id, a[i].block, "interrupted", why,
					       &nended, err);
	}
	if (rc < 0) {
		db_attempts_free(a, na);
		return -1;
	}
	struct db_run_todo *todo;
	size_t ntodo;
	if (db_runs_list(s->db, s->exp_id, true, &todo, &ntodo, err) < 0) {
		db_attempts_free(a, na);
		return -1;
	}
	for (size_t i = 0; i < ntodo; i++)
		if (todo[i].repetition >= 0 && todo[i].repetition < s->nblocks)
			s->blocks[todo[i].repetition].state = SB_PENDING;
	db_runs_free(todo, ntodo);
	/* A block with a stored result is done, failed runs and all (as on Slurm). */
	for (size_t i = 0; i < na; i++)
		if (a[i].block >= 0 && a[i].block < s->nblocks && a[i].outcome &&
		    !strcmp(a[i].outcome, "ingested"))
			s->blocks[a[i].block].state = SB_DONE;
	db_attempts_free(a, na);
	if (s->opts->scheduler) {
		struct db_race race;
		bool raced;
		if (db_race_get(s->db, s->exp_id, &race, &raced, err) < 0)
			return -1;
		s->evaluated = raced ? race.blocks_evaluated : 0;
		s->stopped = raced && race.stop_reason;
		db_race_release(&race);
	}
	return 0;
}

static void attempt_file(const struct sx *s, const char *job, const char *ext,
			 struct strbuf *out)
{
	strbuf_reset(out);
	strbuf_addf(out, "%s/%s.%s", s->d.work_dir, job, ext);
}

/* Opens path for the child: a new file (never an existing one), or the request. */
static int child_fd(const char *path, bool create)
{
	struct ta_err e = { 0 };
	return create ? safefile_create(path, 0600, &e) : open(path, O_RDONLY | O_NOFOLLOW);
}

/* Starts ssh for host h with the request of its attempt; its output goes to files. */
static int start_ssh(struct sx *s, struct shost *h, struct ta_err *err)
{
	struct strbuf req = STRBUF_INIT, res = STRBUF_INIT, log = STRBUF_INIT, cmd = STRBUF_INIT,
		      ctl = STRBUF_INIT;
	attempt_file(s, h->job_name, "json", &req);
	attempt_file(s, h->job_name, "result", &res);
	attempt_file(s, h->job_name, "log", &log);
	strbuf_addf(&ctl, "ControlPath=%s/%%C", s->ctl_dir);
	const char *words[] = { s->program, "run-block", "-", NULL };
	if (sshexec_remote_command(words, &cmd) < 0) {
		err_set(err, EXIT_FAILURE_RUN, "%s cannot be named in a remote command (only "
			"letters, digits and /._+-=:, are passed to a remote shell)", s->program);
		goto fail;
	}
	const char *argv[32];
	size_t n = 0;
	argv[n++] = "ssh";
	if (s->x->ssh_config) {
		argv[n++] = "-F";
		argv[n++] = s->x->ssh_config;
	}
	const char *opts[] = { "BatchMode=yes", "ControlMaster=auto", strbuf_str(&ctl),
			       "ControlPersist=60", "ServerAliveInterval=5",
			       "ServerAliveCountMax=3", "ConnectTimeout=15", NULL };
	for (size_t i = 0; opts[i]; i++) {
		argv[n++] = "-o";
		argv[n++] = opts[i];
	}
	argv[n++] = "-T";
	argv[n++] = "--";
	argv[n++] = h->name;
	argv[n++] = strbuf_str(&cmd);
	argv[n] = NULL;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		err_set(err, EXIT_FAILURE_RUN, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		/* The client ends with us (so does its session on the host). */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		signal(SIGINT, SIG_IGN);	/* the controller decides; a ^C ends us by SIGTERM */
		/* What a host sends back is bounded while it arrives, not after. */
		struct rlimit fsize = { SSH_RESULT_MAX_BYTES + 1, SSH_RESULT_MAX_BYTES + 1 };
		setrlimit(RLIMIT_FSIZE, &fsize);
		int in = child_fd(strbuf_str(&req), false);
		int out = child_fd(strbuf_str(&res), true);
		int er = child_fd(strbuf_str(&log), true);
		if (in < 0 || out < 0 || er < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
		    dup2(er, 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execvp("ssh", (char *const *)argv);
		_exit(127);
	}
	h->pid = pid;
	h->started = mono_now_s();
	strbuf_release(&req);
	strbuf_release(&res);
	strbuf_release(&log);
	strbuf_release(&cmd);
	strbuf_release(&ctl);
	return 0;
fail:
	strbuf_release(&req);
	strbuf_release(&res);
	strbuf_release(&log);
	strbuf_release(&cmd);
	strbuf_release(&ctl);
	return -1;
}

/* The last SSH_TAIL bytes of the attempt's log, one line. */
static void log_tail(const struct sx *s, const char *job, struct strbuf *out)
{
	struct strbuf path = STRBUF_INIT;
	attempt_file(s, job, "log", &path);
	int fd = open(strbuf_str(&path), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	strbuf_release(&path);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char buf[SSH_TAIL + 1];
	off_t from = st.st_size > SSH_TAIL ? st.st_size - SSH_TAIL : 0;
	ssize_t n = pread(fd, buf, SSH_TAIL, from);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n' || (unsigned char)buf[i] < 0x20)
			buf[i] = buf[i] == '\n' ? '/' : '?';
	strbuf_addf(out, ": ...%s", buf);
}

/* The attempt on h failed (why): its block goes again, elsewhere first, or is given up. */
static int attempt_failed(struct sx *s, struct shost *h, const char *why, struct ta_err *err)
{
	struct db_attempt_set set = { .node = h->name, .state = "failed", .error = why };
	if (db_attempt_update(s->db, h->attempt_id, &set, err) < 0)
		return -1;
	struct sblock *b = &s->blocks[h->block];
	b->failed_on[h - s->hosts] = true;
	if (++h->fails_in_row >= SSH_HOST_FAILS && !h->dropped) {
		h->dropped = true;
		note(s, "host %s: %d attempts in a row failed; going on without it", h->name,
		     h->fails_in_row);
	}
	if (b->state != SB_AWAY)
		return 0;
	bool again = b->attempts < s->x->max_attempts;
	struct strbuf runerr = STRBUF_INIT;
	strbuf_addf(&runerr, "block %d, attempt %d on %s: %s", h->block + 1, h->attempt, h->name,
		    why);
	if (!again)
		strbuf_addf(&runerr, " (no result in %d attempts)", b->attempts);
	int nended = 0;
	int rc = db_block_runs_end(s->db, s->exp_id, h->block, again ? "interrupted" : "failed",
				   strbuf_str(&runerr), &nended, err);
	if (!again) {
		s->sum->attempted += (size_t)nended;
		s->sum->failed += (size_t)nended;
	}
	b->state = again ? SB_PENDING : SB_GIVEN_UP;
	note(s, "block %d: attempt %d on %s failed: %s; %s", h->block + 1, h->attempt, h->name,
	     why, again ? "trying it again" : "giving up on it");
	strbuf_release(&runerr);
	return rc;
}

/* The attempt on h ended with exit 0: its result, checked, ingested. */
static int take_result(struct sx *s, struct shost *h, struct ta_err *err)
{
	struct strbuf path = STRBUF_INIT;
	attempt_file(s, h->job_name, "result", &path);
	struct db_block_result res;
	struct ta_err rerr = { 0 };
	int rc = 0;
	struct stat st;
	if (lstat(strbuf_str(&path), &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > SSH_RESULT_MAX_BYTES) {
		char why[160];
		snprintf(why, sizeof(why), "the result sent back is not a regular file of at most "
			 "%u MiB", (unsigned)(SSH_RESULT_MAX_BYTES >> 20));
		rc = attempt_failed(s, h, why, err);
		strbuf_release(&path);
		return rc;
	}
	if (db_block_result_read(strbuf_str(&path), &res, &rerr) < 0) {
		rc = attempt_failed(s, h, rerr.msg, err);
		strbuf_release(&path);
		return rc;
	}
	if (strcmp(res.job_name, h->job_name) || res.block != h->block ||
	    res.attempt != h->attempt) {
		char why[256];
		snprintf(why, sizeof(why), "the result is of %s, block %d, attempt %d, not this one",
			 res.job_name, res.block + 1, res.attempt);
		db_block_result_release(&res);
		rc = attempt_failed(s, h, why, err);
		strbuf_release(&path);
		return rc;
	}
	struct sblock *b = &s->blocks[h->block];
	if (b->state == SB_DROPPED) {
		struct db_attempt_set set = { .node = res.node, .state = "done",
					      .error = "not stored: the race had stopped before this "
						       "block" };
		rc = db_attempt_update(s->db, h->attempt_id, &set, err);
	} else {
		struct db_attempt_set set = { .node = res.node, .state = "done" };
		struct ta_err ierr = { 0 };
		int ingested = db_attempt_update(s->db, h->attempt_id, &set, err) < 0 ? -1
			: db_block_ingest(s->db, s->exp_id, h->attempt_id, &res, strbuf_str(&path),
					  &ierr);
		if (ingested == DB_BLOCK_UNUSABLE) {
			/* A result that does not fit the experiment fails only its attempt. */
			rc = attempt_failed(s, h, ierr.msg, err);
		} else if (ingested < 0) {
			if (ierr.msg[0])
				*err = ierr;
			rc = -1;
		} else if (!ingested) {
			/* Another attempt's result is stored already: this one is kept, not stored. */
			b->state = SB_DONE;
			note(s, "block %d: a later result from %s (attempt %d) is a duplicate: kept in "
			     "%s, not stored", h->block + 1, h->name, h->attempt, strbuf_str(&path));
		} else {
			size_t ok = 0, failed = 0;
			for (size_t i = 0; i < res.nruns; i++)
				!strcmp(res.runs[i].r.status, "ok") ? ok++ : failed++;
			s->sum->attempted += ok + failed;
			s->sum->ok += ok;
			s->sum->failed += failed;
			b->state = SB_DONE;
			h->done++;
			char took[32];
			progress_clock_format(took, sizeof(took), mono_now_s() - h->started);
			note(s, "block %d: done on %s (%s) in %s, attempt %d: %zu runs ok, %zu failed",
			     h->block + 1, h->name, res.node, took, h->attempt, ok, failed);
		}
	}
	h->fails_in_row = 0;
	db_block_result_release(&res);
	strbuf_release(&path);
	return rc;
}

/* Looks at every ssh client that ended. */
static int reap(struct sx *s, struct ta_err *err)
{
	for (size_t i = 0; i < s->nhosts; i++) {
		struct shost *h = &s->hosts[i];
		int status;
		if (!h->pid || waitpid(h->pid, &status, WNOHANG) != h->pid)
			continue;
		h->pid = 0;
		int rc;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			rc = take_result(s, h, err);
		} else {
			struct strbuf why = STRBUF_INIT;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 255)
				strbuf_addf(&why, "ssh to %s failed or the connection was lost",
					    h->name);
			else if (WIFEXITED(status))
				strbuf_addf(&why, "the worker on %s exited %d without a result",
					    h->name, WEXITSTATUS(status));
			else
				strbuf_addf(&why, "ssh to %s ended by signal %d", h->name,
					    WTERMSIG(status));
			log_tail(s, h->job_name, &why);
			rc = attempt_failed(s, h, strbuf_str(&why), err);
			strbuf_release(&why);
		}
		free(h->job_name);
		h->job_name = NULL;
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Ends the ssh client of every attempt of block `block` (all: -1), recorded cancelled. */
static void cancel_attempts(struct sx *s, int block, const char *why)
{
	for (size_t i = 0; i < s->nhosts; i++) {
		struct shost *h = &s->hosts[i];
		if (!h->pid || (block >= 0 && h->block != block))
			continue;
		kill(h->pid, SIGTERM);
		waitpid(h->pid, NULL, 0);
		h->pid = 0;
		struct ta_err e = { 0 };
		struct db_attempt_set set = { .node = h->name, .state = "cancelled", .error = why };
		db_attempt_update(s->db, h->attempt_id, &set, &e);
		free(h->job_name);
		h->job_name = NULL;
	}
}

/* The race looks after block k once blocks 1..k are complete (as dispatch.c). */
static int race_steps(struct sx *s, struct ta_err *err)
{
	const struct controller_scheduler *sched = s->opts->scheduler;
	if (!sched || s->stopped)
		return 0;
	int prefix = 0;
	while (prefix < s->nblocks && (s->blocks[prefix].state == SB_DONE ||
				       s->blocks[prefix].state == SB_GIVEN_UP ||
				       s->blocks[prefix].state == SB_DROPPED))
		prefix++;
	while (s->evaluated < prefix && !s->stopped) {
		int k = ++s->evaluated;
		if (sched->between_blocks(sched->data, s->db, s->exp_id, k, err) < 0)
			return -1;
		struct db_race race;
		bool raced;
		if (db_race_get(s->db, s->exp_id, &race, &raced, err) < 0)
			return -1;
		s->stopped = raced && race.stop_reason;
		int after = race.stopped_after;
		db_race_release(&race);
		if (!s->stopped)
			continue;
		for (int b = after; b < s->nblocks; b++) {
			if (s->blocks[b].state != SB_PENDING && s->blocks[b].state != SB_AWAY)
				continue;
			cancel_attempts(s, b, "the race stopped before this block");
			if (db_block_runs_drop(s->db, s->exp_id, b, err) < 0)
				return -1;
			s->blocks[b].state = SB_DROPPED;
		}
	}
	return 0;
}

/* Writes block b's request, records its next attempt on h, marks its runs away, starts ssh. */
static int send_block(struct sx *s, int b, struct shost *h, const struct db_run_todo *todo,
		      size_t ntodo, struct ta_err *err)
{
	struct sblock *blk = &s->blocks[b];
	const struct sweep_config *cfg = s->plan->cfg;
	struct block_request req = { .experiment_id = s->exp_id, .name = cfg->name,
				     .seed = s->plan->seed, .config = cfg->text,
				     .primary_metric = cfg->bench.metric.name,
				     .higher_is_better = !cfg->bench.metric.direction_given ? -1
							 : cfg->bench.metric.higher_is_better,
				     .block = b, .attempt = blk->last_attempt + 1,
				     .root = (char *)s->opts->sysfs_root };
	int64_t *ids = xcalloc(ntodo + 1, sizeof(*ids));
	req.keys = xcalloc(ntodo + 1, sizeof(*req.keys));
	for (size_t i = 0; i < ntodo; i++)
		if (todo[i].repetition == b) {
			ids[req.nkeys] = todo[i].run_id;
			req.keys[req.nkeys++] = todo[i].key;
		}
	struct strbuf name = STRBUF_INIT, path = STRBUF_INIT;
	strbuf_addf(&name, "%s-b%d-a%d", s->d.tag, b + 1, req.attempt);
	attempt_file(s, strbuf_str(&name), "json", &path);
	req.job_name = (char *)strbuf_str(&name);
	int64_t attempt_id;
	int rc = -1;
	if (!req.nkeys) {
		blk->state = SB_DONE;
		rc = 0;
	} else if (blockreq_write(&req, strbuf_str(&path), err) == 0 &&
		   db_attempt_insert(s->db, s->exp_id, b, req.attempt, strbuf_str(&name),
				     &attempt_id, err) == 0 &&
		   db_block_runs_dispatch(s->db, ids, req.nkeys, err) == 0) {
		blk->last_attempt = req.attempt;
		blk->attempts++;
		blk->state = SB_AWAY;
		h->attempt_id = attempt_id;
		h->block = b;
		h->attempt = req.attempt;
		h->job_name = strbuf_detach(&name);
		struct db_attempt_set set = { .node = h->name, .state = "running" };
		rc = db_attempt_update(s->db, attempt_id, &set, err);
		if (rc == 0)
			rc = start_ssh(s, h, err);
		if (rc == 0 && s->opts->verbose)
			note(s, "block %d: attempt %d on %s", b + 1, req.attempt, h->name);
	}
	free(ids);
	free(req.keys);
	strbuf_release(&name);
	strbuf_release(&path);
	return rc;
}

static bool usable(const struct shost *h)
{
	return !h->dropped && !h->pid;
}

/* Gives each idle host the lowest pending block it has not failed (else any). */
static int send_blocks(struct sx *s, struct ta_err *err)
{
	struct db_run_todo *todo = NULL;
	size_t ntodo = 0;
	int rc = 0;
	/* A race runs at most one block per host past its last look. */
	int limit = s->opts->scheduler ? s->evaluated + (int)s->nhosts : s->nblocks;
	for (int b = 0; b < s->nblocks && b < limit && rc == 0 && !cancel_flag; b++) {
		if (s->blocks[b].state != SB_PENDING)
			continue;
		struct shost *pick = NULL;
		for (size_t i = 0; i < s->nhosts && !pick; i++)
			if (usable(&s->hosts[i]) && !s->blocks[b].failed_on[i])
				pick = &s->hosts[i];
		/* A host that failed it, only when no host that has not is left. */
		bool fresh_left = false;
		for (size_t i = 0; i < s->nhosts; i++)
			fresh_left |= !s->hosts[i].dropped && !s->blocks[b].failed_on[i];
		for (size_t i = 0; i < s->nhosts && !pick && !fresh_left; i++)
			if (usable(&s->hosts[i]))
				pick = &s->hosts[i];
		if (!pick)
			continue;
		if (!todo && db_runs_list(s->db, s->exp_id, true, &todo, &ntodo, err) < 0)
			return -1;
		rc = send_block(s, b, pick, todo, ntodo, err);
	}
	db_runs_free(todo, ntodo);
	return rc;
}

static bool finished(const struct sx *s)
{
	for (int b = 0; b < s->nblocks; b++)
		if (s->blocks[b].state == SB_PENDING || s->blocks[b].state == SB_AWAY)
			return false;
	return !s->opts->scheduler || s->stopped || s->evaluated >= s->nblocks;
}

static bool hosts_left(const struct sx *s)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (!s->hosts[i].dropped || s->hosts[i].pid)
			return true;
	return false;
}

/* Ends the shared connections (ssh -O exit) and removes their directory. */
static void end_masters(struct sx *s)
{
	if (!s->ctl_dir)
		return;
	struct strbuf ctl = STRBUF_INIT;
	strbuf_addf(&ctl, "ControlPath=%s/%%C", s->ctl_dir);
	for (size_t i = 0; i < s->nhosts; i++) {
		const char *argv[12];
		size_t n = 0;
		argv[n++] = "ssh";
		if (s->x->ssh_config) {
			argv[n++] = "-F";
			argv[n++] = s->x->ssh_config;
		}
		argv[n++] = "-o";
		argv[n++] = strbuf_str(&ctl);
		argv[n++] = "-O";
		argv[n++] = "exit";
		argv[n++] = "--";
		argv[n++] = s->hosts[i].name;
		argv[n] = NULL;
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				dup2(null, 2);
			}
			close_range(3, ~0U, 0);
			execvp("ssh", (char *const *)argv);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	strbuf_release(&ctl);
	/* A master removes its socket as it exits, just after `-O exit` returns. */
	for (int i = 0; i < 50 && rmdir(s->ctl_dir) < 0 && errno == ENOTEMPTY; i++)
		mono_sleep_ms(50);
}

static void sx_release(struct sx *s)
{
	for (int b = 0; b < s->nblocks; b++)
		free(s->blocks[b].failed_on);
	free(s->blocks);
	for (size_t i = 0; i < s->nhosts; i++)
		free(s->hosts[i].job_name);
	free(s->hosts);
	free(s->program);
	free(s->ctl_dir);
	db_distributed_release(&s->d);
}

int sshexec_run(struct db *db, const struct plan *plan, int64_t exp_id,
		const struct executor_settings *x, const struct controller_opts *opts,
		struct controller_summary *summary, struct ta_err *err)
{
	struct sx s = { .db = db, .plan = plan, .exp_id = exp_id, .x = x, .opts = opts,
			.sum = summary };
	memset(summary, 0, sizeof(*summary));
	cancel_flag = 0;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	int rc = -1;
	if (sshexec_check(x, err) < 0 || setup(&s, err) < 0 || load_state(&s, err) < 0 ||
	    db_experiment_set_status(db, exp_id, "running", err) < 0)
		goto out;
	if (!opts->quiet)
		fprintf(stderr, "over ssh: %d blocks on %zu hosts, one at a time each, results in "
			"%s\n", s.nblocks, s.nhosts, s.d.work_dir);
	for (;;) {
		if (reap(&s, err) < 0 || race_steps(&s, err) < 0)
			goto out;
		if (cancel_flag || finished(&s))
			break;
		if (!hosts_left(&s)) {
			err_set(err, EXIT_FAILURE_RUN, "every host failed %d attempts in a row; "
				"the blocks left are not run (see the attempts in 'topoadvisor "
				"show'; 'topoadvisor resume %lld' tries again)", SSH_HOST_FAILS,
				(long long)exp_id);
			goto out;
		}
		if (send_blocks(&s, err) < 0)
			goto out;
		if (!cancel_flag)
			mono_sleep_ms(SSH_TICK_MS);
	}
	rc = 0;
out:
	{
		char why[64] = "the controller stopped";
		if (cancel_flag) {
			snprintf(why, sizeof(why), "the controller was interrupted by signal %d",
				 (int)cancel_flag);
			summary->interrupted = true;
		}
		for (size_t i = 0; i < s.nhosts; i++) {
			struct shost *h = &s.hosts[i];
			if (!h->pid)
				continue;
			int block = h->block;
			cancel_attempts(&s, block, why);
			struct ta_err cerr = { 0 };
			int nended;
			db_block_runs_end(db, exp_id, block, "interrupted", why, &nended, &cerr);
		}
	}
	end_masters(&s);
	{
		struct ta_err serr = { 0 };
		if (rc < 0 && !summary->interrupted)
			db_experiment_fail(db, exp_id, err->msg, &serr);
		else
			db_experiment_set_status(db, exp_id, summary->interrupted ? "interrupted"
						 : "done", &serr);
	}
	sx_release(&s);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
