/* hostexec: pinned, captured, bounded commands on the host; see hostexec.h. */
#include "hostexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cpuset.h"
#include "../util/mono.h"
#include "../util/proctree.h"
#include "hostlock.h"

/* How long after it ends what a command started may take to end too. */
#define LEFTOVER_GRACE_S 1.0
/* SIGTERM first; SIGKILL this long after. */
#define KILL_GRACE_S 2.0
/* How long SIGKILLed processes get to go before they count as survivors. */
#define SURVIVOR_WAIT_S 5.0

/* One output stream: its pipe, what is kept and what was dropped. */
struct stream {
	int fd;			/* -1 once closed */
	struct strbuf *sb;	/* the head, then (once closed) the tail after it */
	struct strbuf tail;	/* past the head: a window on the last bytes */
	bool tail_whole;	/* the window starts a line (what it dropped ended one) */
	size_t *dropped, *dropped_lines;
};

static size_t count_newlines(const char *p, size_t n)
{
	size_t lines = 0;
	for (const char *end = p + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		lines++;
	return lines;
}

/* Drops the first n bytes of the tail window, counting them. */
static void tail_drop(struct stream *s, size_t n)
{
	*s->dropped += n;
	*s->dropped_lines += count_newlines(s->tail.buf, n);
	s->tail_whole = n && s->tail.buf[n - 1] == '\n';
	memmove(s->tail.buf, s->tail.buf + n, s->tail.len - n);
	s->tail.len -= n;
	s->tail.buf[s->tail.len] = '\0';
}

/*
 * Keeps the first HOSTEXEC_OUTPUT_CAP - HOSTEXEC_OUTPUT_TAIL bytes and a
 * window on the last HOSTEXEC_OUTPUT_TAIL (a result printed last, after
 * any amount of output, is kept); what falls out between is counted.
 */
static void stream_add(struct stream *s, const char *buf, size_t n)
{
	size_t head = HOSTEXEC_OUTPUT_CAP - HOSTEXEC_OUTPUT_TAIL;
	size_t keep = s->sb->len < head ? head - s->sb->len : 0;
	if (keep > n)
		keep = n;
	strbuf_add(s->sb, buf, keep);
	if (keep == n)
		return;
	strbuf_add(&s->tail, buf + keep, n - keep);
	if (s->tail.len > 2 * HOSTEXEC_OUTPUT_TAIL)
		tail_drop(s, s->tail.len - HOSTEXEC_OUTPUT_TAIL);
}

/* Reads what fd has into s; returns 0 at EOF, 1 when more may come. */
static int drain_fd(struct stream *s)
{
	char buf[65536];
	ssize_t n = read(s->fd, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	stream_add(s, buf, (size_t)n);
	return 1;
}

/*
 * Puts the tail after the head: when bytes were dropped between them, from
 * the tail's first whole line on (the line cut in two is dropped whole).
 */
static void stream_close(struct stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->tail.len > HOSTEXEC_OUTPUT_TAIL)
		tail_drop(s, s->tail.len - HOSTEXEC_OUTPUT_TAIL);
	if (*s->dropped && !s->tail_whole) {
		const char *nl = s->tail.len ? memchr(s->tail.buf, '\n', s->tail.len) : NULL;
		if (nl && (size_t)(nl - s->tail.buf) + 1 < s->tail.len)
			tail_drop(s, (size_t)(nl - s->tail.buf) + 1);
	}
	strbuf_add(s->sb, s->tail.buf ? s->tail.buf : "", s->tail.len);
	strbuf_release(&s->tail);
}

/* Reads what is left in the pipes without waiting, then closes them. */
static void drain_rest(struct stream *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (st[i].fd < 0)
			continue;
		int fl = fcntl(st[i].fd, F_GETFL);
		if (fl >= 0)
			fcntl(st[i].fd, F_SETFL, fl | O_NONBLOCK);
		for (;;) {
			errno = 0;
			if (!drain_fd(&st[i]) || errno == EAGAIN)
				break;
		}
		stream_close(&st[i]);
	}
}

/*
 * The child: its process tree, death with the controller, default signals,
 * pinned, pipes in place and no other descriptor of ours, then exec.
 */
static void child_exec(char *const argv[], const cpu_set_t *mask, int out_fd, int err_fd,
		       int status_fd, const struct proctree *tree, pid_t parent)
{
	int report[2] = { 0, 0 };	/* stage (0 contain, 1 pinning, 2 exec), errno */
	if (proctree_child_join(tree, 0) < 0)
		goto fail;
	/* A benchmark dies with its controller, even one killed with SIGKILL. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);	/* the controller died before PDEATHSIG was armed */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	report[0] = 1;
	if (mask && sched_setaffinity(0, sizeof(*mask), mask) < 0)
		goto fail;
	report[0] = 2;
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		goto fail;
	/* Whatever the controller or its libraries opened without O_CLOEXEC. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	execvp(argv[0], argv);
fail:
	report[1] = errno;
	if (write(status_fd, report, sizeof(report)) < 0)
		_exit(127);
	_exit(127);
}

/* Starts ending the tree: SIGTERM now, SIGKILL KILL_GRACE_S later. */
static void tree_stop(struct proctree *tree, int *stage, double *kill_at)
{
	if (*stage > 0)
		return;
	proctree_signal(tree, SIGTERM);
	*stage = 1;
	*kill_at = mono_now_s() + KILL_GRACE_S;
}

static void tree_kill(struct proctree *tree, int *stage, double *kill_at)
{
	proctree_signal(tree, SIGKILL);
	*stage = 2;
	*kill_at = mono_now_s();
}

static void close_pair(int p[2])
{
	close(p[0]);
	close(p[1]);
}

/* The three pipes (stdout, stderr, status), close-on-exec; -1 with err. */
static int make_pipes(int out[2], int errp[2], int status[2], struct ta_err *err)
{
	if (pipe2(out, O_CLOEXEC) < 0)
		return err_set(err, EXIT_FAILURE_RUN, "pipe: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC) < 0) {
		int e = errno;
		close_pair(out);
		return err_set(err, EXIT_FAILURE_RUN, "pipe: %s", strerror(e));
	}
	if (pipe2(status, O_CLOEXEC) < 0) {
		int e = errno;
		close_pair(out);
		close_pair(errp);
		return err_set(err, EXIT_FAILURE_RUN, "pipe: %s", strerror(e));
	}
	return 0;
}

/*
 * Waits for the command and its tree, reading its output, until the
 * command has ended and nothing of its tree holds the pipes — or, past the
 * timeout or a cancel, until the tree is killed.  Never blocks for longer
 * than a poll interval, so the clock and *cancel are always looked at.
 * exitfd (a pidfd of the command, or -1) wakes the poll when it ends.
 */
static void supervise(pid_t pid, int exitfd, struct proctree *tree, struct stream *st,
		      double start, int timeout_s, volatile sig_atomic_t *cancel,
		      struct hostexec_result *res, int *wstatus)
{
	int stage = 0;
	double kill_at = 0, ended_at = 0;
	bool reaped = false, checked = false;
	for (;;) {
		double now = mono_now_s();
		if (timeout_s > 0 && !res->timed_out && now - start >= timeout_s) {
			res->timed_out = true;
			tree_stop(tree, &stage, &kill_at);
		}
		if (cancel && *cancel && !res->cancelled) {
			res->cancelled = true;
			tree_stop(tree, &stage, &kill_at);
		}
		if (stage == 1 && now >= kill_at)
			tree_kill(tree, &stage, &kill_at);
		if (!reaped) {
			pid_t w = waitpid(pid, wstatus, WNOHANG);
			if (w == pid || (w < 0 && errno != EINTR)) {
				reaped = true;
				ended_at = now;
			}
		}
		int open_fds = (st[0].fd >= 0) + (st[1].fd >= 0);
		/* What it started gets a moment to finish; then it is ended, and
		 * counted as a leftover unless the command is a client tool (whose
		 * group's stragglers are ended, not held against it). */
		if (reaped && !checked && stage == 0) {
			int live = proctree_count(tree, NULL);
			if (live == 0 || now - ended_at >= LEFTOVER_GRACE_S) {
				checked = true;
				if (live && !tree->group_only)
					res->leftovers = proctree_count(tree, &res->leftover_names);
				if (live)
					tree_kill(tree, &stage, &kill_at);
			}
		}
		if (reaped && (checked || stage > 0)) {
			if (open_fds == 0)
				break;
			/* Nothing of the tree holds them: what is left is in the pipe
			 * (or held by a process that escaped a process group). */
			if (proctree_count(tree, NULL) == 0) {
				drain_rest(st, 2);
				break;
			}
		}
		if (stage == 2 && now - kill_at >= SURVIVOR_WAIT_S) {
			drain_rest(st, 2);
			break;
		}
		/* Its pipes close a moment before it can be reaped: the pidfd
		 * sees the exit at once, where the 100 ms interval added up to
		 * 100 ms to a host-runner run's window (most of a 10 ms one's). */
		struct pollfd pfd[3] = { { st[0].fd, POLLIN, 0 }, { st[1].fd, POLLIN, 0 },
					 { reaped ? -1 : exitfd, POLLIN, 0 } };
		int r = poll(pfd, 3, reaped ? 10 : 100);
		for (int i = 0; r > 0 && i < 2; i++) {
			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!drain_fd(&st[i]))
				stream_close(&st[i]);
		}
	}
}

/* hostexec_run and hostexec_run_client: a client runs in a group-only tree. */
static int run(char *const argv[], const char *cpus, int timeout_s,
	       volatile sig_atomic_t *cancel, bool client, struct hostexec_result *res,
	       struct ta_err *err)
{
	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	cpu_set_t mask;
	if (cpus) {
		struct cpuset cs;
		if (cpuset_parse(cpus, &cs, err) < 0)
			return -1;
		cpuset_to_mask(&cs, &mask);
		cpuset_release(&cs);
	}
	struct proctree tree;
	if (client)
		proctree_init_group(&tree);
	else if (proctree_init(&tree, err) < 0)
		return -1;
	int out[2], errp[2], status[2];
	if (make_pipes(out, errp, status, err) < 0) {
		proctree_end(&tree, 0, NULL);
		proctree_release(&tree);
		return -1;
	}
	double start = mono_now_s();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close_pair(out);
		close_pair(errp);
		close_pair(status);
		proctree_end(&tree, 0, NULL);
		proctree_release(&tree);
		return err_set(err, EXIT_FAILURE_RUN, "fork: %s", strerror(e));
	}
	if (pid == 0)
		child_exec(argv, cpus ? &mask : NULL, out[1], errp[1], status[1], &tree, parent);
	proctree_add(&tree, pid);
	hostlock_track_tree(&tree);	/* ended by the next holder if we die */
	close(out[1]);
	close(errp[1]);
	close(status[1]);

	int report[2];
	ssize_t n;
	do
		n = read(status[0], report, sizeof(report));
	while (n < 0 && errno == EINTR);
	close(status[0]);
	int wstatus = 0;
	if (n == (ssize_t)sizeof(report)) {
		close(out[0]);
		close(errp[0]);
		waitpid(pid, NULL, 0);
		if (proctree_end(&tree, 5000, NULL) >= 0)
			hostlock_untrack_tree(&tree);
		proctree_release(&tree);
		if (report[0] == 0)
			return err_set(err, EXIT_FAILURE_RUN, "cannot put '%s' in its cgroup: %s",
				       argv[0], strerror(report[1]));
		if (report[0] == 1)
			return err_set(err, EXIT_FAILURE_RUN, "cannot pin '%s' to CPUs %s: %s",
				       argv[0], cpus, strerror(report[1]));
		return err_set(err, EXIT_FAILURE_RUN, "cannot run '%s': %s", argv[0],
			       strerror(report[1]));
	}

	struct stream st[2] = {
		{ out[0], &res->out, STRBUF_INIT, false, &res->out_dropped,
		  &res->out_dropped_lines },
		{ errp[0], &res->errout, STRBUF_INIT, false, &res->errout_dropped,
		  &res->errout_dropped_lines },
	};
	int exitfd = (int)syscall(SYS_pidfd_open, pid, 0);	/* -1: polls only */
	supervise(pid, exitfd, &tree, st, start, timeout_s, cancel, res, &wstatus);
	if (exitfd >= 0)
		close(exitfd);
	/* Whatever the tree still runs dies with the run, for certain. */
	if (proctree_end(&tree, (int)(SURVIVOR_WAIT_S * 1000), NULL) >= 0)
		hostlock_untrack_tree(&tree);
	else
		res->survivors = true;
	proctree_release(&tree);
	if (waitpid(pid, &wstatus, WNOHANG) == 0)
		res->survivors = true;	/* stuck in the kernel even after SIGKILL */
	res->seconds = mono_now_s() - start;
	if (WIFEXITED(wstatus))
		res->exit_code = WEXITSTATUS(wstatus);
	else if (WIFSIGNALED(wstatus))
		res->signal = WTERMSIG(wstatus);
	return 0;
}

int hostexec_run(char *const argv[], const char *cpus, int timeout_s,
		 volatile sig_atomic_t *cancel, struct hostexec_result *res,
		 struct ta_err *err)
{
	return run(argv, cpus, timeout_s, cancel, false, res, err);
}

int hostexec_run_client(char *const argv[], int timeout_s, struct hostexec_result *res,
			struct ta_err *err)
{
	return run(argv, NULL, timeout_s, NULL, true, res, err);
}

void hostexec_result_release(struct hostexec_result *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->errout);
	strbuf_release(&res->leftover_names);
}

void hostexec_describe(const struct hostexec_result *res, int timeout_s, struct strbuf *out)
{
	if (res->cancelled)
		strbuf_addstr(out, "interrupted");
	else if (res->timed_out)
		strbuf_addf(out, "timed out after %d s", timeout_s);
	else if (res->signal)
		strbuf_addf(out, "killed by signal %d (%s)", res->signal, strsignal(res->signal));
	else
		strbuf_addf(out, "exited with status %d", res->exit_code);
}

void hostexec_describe_cut(const char *stream, size_t dropped, size_t lines, struct strbuf *out)
{
	strbuf_addf(out, "%s was cut at the %zu MiB limit: %.1f MiB (%zu line%s) were dropped "
		    "before its last %zu MiB", stream, HOSTEXEC_OUTPUT_CAP >> 20,
		    (double)dropped / (1 << 20), lines, lines == 1 ? "" : "s",
		    HOSTEXEC_OUTPUT_TAIL >> 20);
}
