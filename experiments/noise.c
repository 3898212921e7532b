/* noise: spin and command background loads; see noise.h. */
#include "noise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cpuset.h"
#include "../util/mono.h"
#include "../util/proctree.h"
#include "../util/strbuf.h"
#include "hostlock.h"

struct noise_load {
	enum noise_kind kind;
	struct proctree tree;	/* live once the load is started */
	pid_t *pids;
	bool *reaped;
	size_t npids;
	char *what;		/* for messages: "spin noise on CPUs 0-1" */
};

/* What a child reports through its pipe before the load runs. */
enum child_stage { STAGE_READY, STAGE_AFFINITY, STAGE_EXEC, STAGE_CONTAIN };

struct child_report {
	int stage;
	int errnum;
};

/* ---- in the child (only async-signal-safe calls until exec) ---------- */

static void child_report_send(int fd, int stage, int errnum)
{
	struct child_report r = { stage, errnum };
	ssize_t n = write(fd, &r, sizeof(r));
	(void)n;	/* the parent sees a short report as a failed start */
}

static __attribute__((noreturn)) void child_fail(int fd, int stage)
{
	child_report_send(fd, stage, errno);
	_exit(127);
}

/*
 * The load's process tree, death with the parent, default signal handling:
 * the controller may ignore or catch signals for itself; the load must not.
 */
static void child_prepare(int fd, const struct proctree *tree, pid_t pgid, pid_t parent)
{
	if (proctree_child_join(tree, pgid) < 0)
		child_fail(fd, STAGE_CONTAIN);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);	/* the parent died before PDEATHSIG was armed */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);	/* fails harmlessly for KILL/STOP/RT */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static __attribute__((noreturn)) void spin_child(int fd, const struct proctree *tree,
						  pid_t parent, const cpu_set_t *mask)
{
	child_prepare(fd, tree, tree->pgid, parent);
	if (mask && sched_setaffinity(0, sizeof(*mask), mask) < 0)
		child_fail(fd, STAGE_AFFINITY);
	child_report_send(fd, STAGE_READY, 0);
	/* Drop every inherited descriptor (the DB, the host lock, the pipe). */
	close_range(3, ~0U, 0);
	volatile unsigned long spins = 0;
	for (;;)
		spins++;
}

static __attribute__((noreturn)) void command_child(int fd, const struct proctree *tree,
						     pid_t parent, const cpu_set_t *mask,
						     char *const argv[])
{
	child_prepare(fd, tree, 0, parent);
	if (mask && sched_setaffinity(0, sizeof(*mask), mask) < 0)
		child_fail(fd, STAGE_AFFINITY);
	/* The command gets stdin/stdout/stderr only; the pipe is already CLOEXEC. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	execvp(argv[0], argv);
	child_fail(fd, STAGE_EXEC);
}

/* ---- in the parent ------------------------------------------------------ */


static void reap_exited(struct noise_load *nl)
{
	for (size_t i = 0; i < nl->npids; i++)
		if (!nl->reaped[i] && waitpid(nl->pids[i], NULL, WNOHANG) == nl->pids[i])
			nl->reaped[i] = true;
}

static bool all_reaped(const struct noise_load *nl)
{
	for (size_t i = 0; i < nl->npids; i++)
		if (!nl->reaped[i])
			return false;
	return true;
}

/* Waits up to ms for the tree to die and our children to be reaped. */
static bool wait_group(struct noise_load *nl, int ms)
{
	double deadline = mono_now_s() + ms / 1000.0;
	for (;;) {
		reap_exited(nl);
		if (all_reaped(nl) && proctree_count(&nl->tree, NULL) == 0)
			return true;
		if (mono_now_s() >= deadline)
			return false;
		mono_sleep_ms(10);
	}
}

static void noise_free(struct noise_load *nl)
{
	proctree_release(&nl->tree);
	free(nl->pids);
	free(nl->reaped);
	free(nl->what);
	free(nl);
}

/* Kills what is left of the load's tree and reaps; false when some survive. */
static bool end_tree(struct noise_load *nl)
{
	bool gone = proctree_end(&nl->tree, 5000, NULL) >= 0 && wait_group(nl, 5000);
	if (gone)
		hostlock_untrack_tree(&nl->tree);
	return gone;
}

int noise_stop(struct noise_load *nl, int grace_ms, struct ta_err *err)
{
	if (!nl)
		return 0;
	int rc = 0;
	if (nl->tree.pgid > 0) {
		proctree_signal(&nl->tree, SIGTERM);
		wait_group(nl, grace_ms);	/* a load that ends on SIGTERM goes now */
		if (!end_tree(nl))
			rc = err_set(err, EXIT_FAILURE_RUN,
				     "%s: processes survive SIGKILL (stuck in the kernel?); "
				     "check %s", nl->what, nl->tree.cgroup ? nl->tree.cgroup
									   : "'ps -g PGID'");
	}
	noise_free(nl);
	return rc;
}

pid_t noise_pgid(const struct noise_load *nl)
{
	return nl->tree.pgid;
}

size_t noise_pids(const struct noise_load *nl, const pid_t **pids)
{
	*pids = nl->pids;
	return nl->npids;
}

int noise_check(struct noise_load *nl, struct ta_err *err)
{
	for (size_t i = 0; i < nl->npids; i++) {
		siginfo_t info;
		memset(&info, 0, sizeof(info));
		if (nl->reaped[i] ||
		    waitid(P_PID, (id_t)nl->pids[i], &info, WEXITED | WNOHANG | WNOWAIT) < 0 ||
		    info.si_pid == 0)
			continue;
		if (info.si_code == CLD_EXITED)
			return err_set(err, EXIT_FAILURE_RUN, "%s: process %d exited with status %d",
				       nl->what, (int)nl->pids[i], info.si_status);
		return err_set(err, EXIT_FAILURE_RUN, "%s: process %d was killed by signal %d (%s)",
			       nl->what, (int)nl->pids[i], info.si_status,
			       strsignal(info.si_status));
	}
	return 0;
}

/* Every CPU of cs must be online: sched_setaffinity would silently drop the
 * others from a mask, and the load would not be where the config says. */
static int check_online(const struct cpuset *cs, const char *spec, struct ta_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct cpuset online;
	int rc = 0;
	if (strbuf_read_file(&sb, "/sys/devices/system/cpu/online") < 0) {
		strbuf_release(&sb);
		return 0;	/* no sysfs: sched_setaffinity still checks */
	}
	while (sb.len && (sb.buf[sb.len - 1] == '\n' || sb.buf[sb.len - 1] == ' '))
		sb.buf[--sb.len] = '\0';
	if (cpuset_parse(sb.buf, &online, NULL) < 0) {
		strbuf_release(&sb);
		return 0;
	}
	for (size_t i = 0; i < cs->n && rc == 0; i++) {
		bool found = false;
		for (size_t j = 0; j < online.n && !found; j++)
			found = online.cpus[j] == cs->cpus[i];
		if (!found)
			rc = err_set(err, EXIT_BAD_INPUT,
				     "noise cpus '%s': CPU %d is not online on this host "
				     "(online: %s)", spec, cs->cpus[i], sb.buf);
	}
	cpuset_release(&online);
	strbuf_release(&sb);
	return rc;
}

/* Reads a child's report: 0 when ready (or exec'd: EOF), else -1 with err. */
static int child_wait_ready(struct noise_load *nl, int fd, bool eof_is_ready,
			    const char *argv0, struct ta_err *err)
{
	struct child_report r;
	ssize_t n;
	do
		n = read(fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	if (n == 0 && eof_is_ready)
		return 0;
	if (n == (ssize_t)sizeof(r) && r.stage == STAGE_READY)
		return 0;
	if (n != (ssize_t)sizeof(r))
		return err_set(err, EXIT_FAILURE_RUN, "%s: the process died while starting",
			       nl->what);
	if (r.stage == STAGE_AFFINITY)
		return err_set(err, EXIT_FAILURE_RUN, "%s: cannot pin to the CPUs: %s",
			       nl->what, strerror(r.errnum));
	if (r.stage == STAGE_CONTAIN)
		return err_set(err, EXIT_FAILURE_RUN, "%s: cannot put it in its cgroup: %s",
			       nl->what, strerror(r.errnum));
	return err_set(err, r.errnum == ENOENT || r.errnum == EACCES ? EXIT_BAD_INPUT
								     : EXIT_FAILURE_RUN,
		       "%s: cannot execute '%s': %s%s", nl->what, argv0, strerror(r.errnum),
		       r.errnum == ENOENT ? " (is it installed and in PATH?)" : "");
}

/* Forks one child of the load; 0 when it reported ready. */
static int start_child(struct noise_load *nl, const cpu_set_t *mask, char *const argv[],
		       struct ta_err *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(err, EXIT_FAILURE_RUN, "%s: pipe: %s", nl->what, strerror(errno));
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return err_set(err, EXIT_FAILURE_RUN, "%s: fork: %s", nl->what, strerror(e));
	}
	if (pid == 0) {
		close(p[0]);
		if (nl->kind == NOISE_SPIN)
			spin_child(p[1], &nl->tree, parent, mask);
		command_child(p[1], &nl->tree, parent, mask, argv);
	}
	close(p[1]);
	bool first = nl->tree.pgid == 0;
	proctree_add(&nl->tree, pid);
	if (first)
		hostlock_track_tree(&nl->tree);	/* ended by the next holder if we die */
	nl->pids[nl->npids] = pid;
	nl->reaped[nl->npids] = false;
	nl->npids++;
	int rc = child_wait_ready(nl, p[0], nl->kind == NOISE_COMMAND, argv ? argv[0] : NULL,
				  err);
	close(p[0]);
	return rc;
}

struct noise_load *noise_start(enum noise_kind kind, const char *cpus, int threads,
			       char *const argv[], struct ta_err *err)
{
	struct noise_load *nl = xcalloc(1, sizeof(*nl));
	nl->kind = kind;
	if (kind == NOISE_NONE)
		return nl;
	if (kind == NOISE_GUEST) {
		err_set(err, EXIT_BAD_INPUT, "guest noise is started by the controller with a "
			"second guest, not as a host process");
		noise_free(nl);
		return NULL;
	}
	if (kind == NOISE_COMMAND && (!argv || !argv[0] || !argv[0][0])) {
		err_set(err, EXIT_BAD_INPUT, "noise command: empty command");
		noise_free(nl);
		return NULL;
	}
	struct cpuset cs = { NULL, 0 };
	if (cpus && (cpuset_parse(cpus, &cs, err) < 0 || check_online(&cs, cpus, err) < 0)) {
		cpuset_release(&cs);
		noise_free(nl);
		return NULL;
	}
	struct strbuf what = STRBUF_INIT;
	if (kind == NOISE_SPIN)
		strbuf_addstr(&what, "spin noise");
	else
		strbuf_addf(&what, "noise command '%s'", argv[0]);
	if (cpus) {
		strbuf_addstr(&what, " on CPUs ");
		cpuset_format(&cs, &what);
	}
	nl->what = strbuf_detach(&what);

	size_t n = 1;
	if (kind == NOISE_SPIN) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		n = threads > 0 ? (size_t)threads : cpus ? cs.n : (size_t)(online > 0 ? online : 1);
	}
	nl->pids = xcalloc(n, sizeof(*nl->pids));
	nl->reaped = xcalloc(n, sizeof(*nl->reaped));
	int rc = proctree_init(&nl->tree, err);
	for (size_t i = 0; i < n && rc == 0; i++) {
		cpu_set_t mask;
		if (cpus && kind == NOISE_SPIN) {
			CPU_ZERO(&mask);
			CPU_SET(cs.cpus[i % cs.n], &mask);
		} else if (cpus) {
			cpuset_to_mask(&cs, &mask);
		}
		rc = start_child(nl, cpus ? &mask : NULL, argv, err);
	}
	cpuset_release(&cs);
	if (rc < 0) {
		end_tree(nl);	/* nothing half-started stays behind */
		noise_free(nl);
		return NULL;
	}
	return nl;
}

struct noise_load *noise_start_config(const struct noise *n, struct ta_err *err)
{
	return noise_start(n->kind, n->cpus, n->threads, n->argv.argv, err);
}
