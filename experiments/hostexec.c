/* hostexec: pinned, captured, bounded commands on the host; see hostexec.h. */
#include "hostexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cpuset.h"
#include "../util/mono.h"
#include "../util/procgroup.h"
#include "hostlock.h"

#define OUTPUT_CAP (64u << 20)

/* Appends what fd has to sb; returns 0 at EOF, 1 when more may come. */
static int drain_fd(int fd, struct strbuf *sb)
{
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	if (sb->len < OUTPUT_CAP)
		strbuf_add(sb, buf, (size_t)n);
	return 1;
}

/* The child: own process group, pinned, pipes in place, then exec. */
static void child_exec(char *const argv[], const cpu_set_t *mask, int out_fd, int err_fd,
		       int status_fd)
{
	int report[2] = { 1, 0 };	/* stage (1 pinning, 2 exec), errno */
	setpgid(0, 0);
	/* A benchmark dies with its controller, even one killed with SIGKILL. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if (mask && sched_setaffinity(0, sizeof(*mask), mask) < 0)
		goto fail;
	report[0] = 2;
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		goto fail;
	execvp(argv[0], argv);
fail:
	report[1] = errno;
	if (write(status_fd, report, sizeof(report)) < 0)
		_exit(127);
	_exit(127);
}

static void kill_group(pid_t pgid, int *stage, double *kill_at)
{
	if (*stage == 0) {
		kill(-pgid, SIGTERM);
		*stage = 1;
		*kill_at = mono_now_s() + 2.0;
	} else if (*stage == 1 && mono_now_s() >= *kill_at) {
		kill(-pgid, SIGKILL);
		*stage = 2;
	}
}

int hostexec_run(char *const argv[], const char *cpus, int timeout_s,
		 volatile sig_atomic_t *cancel, struct hostexec_result *res,
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
	int out[2], errp[2], status[2];
	if (pipe2(out, O_CLOEXEC) < 0)
		return err_set(err, EXIT_FAILURE_RUN, "pipe: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return err_set(err, EXIT_FAILURE_RUN, "pipe: %s", strerror(errno));
	}
	if (pipe2(status, O_CLOEXEC) < 0) {
		close(out[0]); close(out[1]); close(errp[0]); close(errp[1]);
		return err_set(err, EXIT_FAILURE_RUN, "pipe: %s", strerror(errno));
	}
	double start = mono_now_s();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(out[0]); close(out[1]); close(errp[0]); close(errp[1]);
		close(status[0]); close(status[1]);
		return err_set(err, EXIT_FAILURE_RUN, "fork: %s", strerror(e));
	}
	if (pid == 0)
		child_exec(argv, cpus ? &mask : NULL, out[1], errp[1], status[1]);
	setpgid(pid, pid);	/* also here: no race with the kill below */
	hostlock_track_group(pid);	/* ended by the next holder if we die */
	close(out[1]);
	close(errp[1]);
	close(status[1]);

	int report[2];
	ssize_t n;
	do
		n = read(status[0], report, sizeof(report));
	while (n < 0 && errno == EINTR);
	close(status[0]);
	if (n == (ssize_t)sizeof(report)) {
		close(out[0]);
		close(errp[0]);
		waitpid(pid, NULL, 0);
		hostlock_untrack_group(pid);
		if (report[0] == 1)
			return err_set(err, EXIT_FAILURE_RUN, "cannot pin '%s' to CPUs %s: %s",
				       argv[0], cpus, strerror(report[1]));
		return err_set(err, EXIT_FAILURE_RUN, "cannot run '%s': %s", argv[0],
			       strerror(report[1]));
	}

	struct pollfd pfd[2] = { { out[0], POLLIN, 0 }, { errp[0], POLLIN, 0 } };
	int open_fds = 2, stage = 0, wstatus = 0;
	double kill_at = 0;
	bool reaped = false;
	while (open_fds > 0 || !reaped) {
		if (timeout_s > 0 && !res->timed_out && mono_now_s() - start > timeout_s) {
			res->timed_out = true;
			kill_group(pid, &stage, &kill_at);
		}
		if (cancel && *cancel && !res->cancelled) {
			res->cancelled = true;
			kill_group(pid, &stage, &kill_at);
		}
		if (stage == 1)
			kill_group(pid, &stage, &kill_at);
		if (open_fds > 0) {
			int r = poll(pfd, 2, 100);
			for (int i = 0; r > 0 && i < 2; i++) {
				if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				if (!drain_fd(pfd[i].fd, i ? &res->errout : &res->out)) {
					close(pfd[i].fd);
					pfd[i].fd = -1;
					open_fds--;
				}
			}
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &wstatus, open_fds > 0 ? WNOHANG : 0);
			if (w == pid)
				reaped = true;
			else if (w < 0 && errno != EINTR)
				reaped = true;
		}
		/* Processes it left behind would hold the pipes open: end them. */
		if (reaped && open_fds > 0 && stage == 0)
			kill_group(pid, &stage, &kill_at);
	}
	/* Whatever the group left running dies with the run, for certain. */
	kill(-pid, SIGKILL);
	if (procgroup_wait_gone(pid, 5000))
		hostlock_untrack_group(pid);
	res->seconds = mono_now_s() - start;
	if (WIFEXITED(wstatus))
		res->exit_code = WEXITSTATUS(wstatus);
	else if (WIFSIGNALED(wstatus))
		res->signal = WTERMSIG(wstatus);
	return 0;
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
