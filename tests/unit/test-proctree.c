/*
 * Unit tests for process trees, with real processes, in each way the host
 * may offer containment (cgroup v2 with cgroup.kill; cgroup v2 without it,
 * freeze + kill; no usable cgroup: process group + subreaper): a child that
 * leaves its process group (setsid) and a daemon (double fork + setsid)
 * are counted, named and ended with the tree; SIGTERM reaches them too;
 * what the tree leaves is reaped here, not left as zombies; the cgroup is
 * removed.  In cgroup mode, a process that moves itself out of the tree's
 * cgroup (root may) is still counted, named and ended, and a sub-cgroup the
 * child makes is ended and removed; the cgroup is recorded before it is
 * made; waits read the clock.  The cgroup modes skip where cgroup v2 is not
 * usable (not root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/procgroup.h"
#include "util/proctree.h"

/* Unique arguments, so that the checks see only this test's sleeps. */
static char direct_arg[32], escaped_arg[32], daemon_arg[32];

static int sleeps_running(void)
{
	int n = 0;
	const char *args[] = { direct_arg, escaped_arg, daemon_arg };
	for (size_t i = 0; i < 3; i++) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "pgrep -x -f 'sleep %s' >/dev/null", args[i]);
		n += system(cmd) == 0;
	}
	return n;
}

static void kill_sleeps(void)
{
	const char *args[] = { direct_arg, escaped_arg, daemon_arg };
	for (size_t i = 0; i < 3; i++) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "pkill -KILL -x -f 'sleep %s'", args[i]);
		if (system(cmd) < 0)
			perror("system");
	}
}

/*
 * The child of the tree: it starts a process that leaves the group
 * (setsid, its parent stays) and a daemon (setsid in a grandchild whose
 * parent exits at once), then becomes a sleep itself.
 */
static void start_family(struct proctree *t)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (proctree_child_join(t, 0) < 0)
			_exit(126);
		if (fork() == 0) {
			setsid();
			execlp("sleep", "sleep", escaped_arg, (char *)NULL);
			_exit(127);
		}
		if (fork() == 0) {
			if (fork() == 0) {
				setsid();
				execlp("sleep", "sleep", daemon_arg, (char *)NULL);
				_exit(127);
			}
			_exit(0);
		}
		execlp("sleep", "sleep", direct_arg, (char *)NULL);
		_exit(127);
	}
	proctree_add(t, pid);
	for (int i = 0; i < 500 && sleeps_running() < 3; i++)
		usleep(10000);
	assert_int_equal(sleeps_running(), 3);
}

static void check_contained(enum proctree_force mode, bool term_first)
{
	proctree_force_mode(mode);
	snprintf(direct_arg, sizeof(direct_arg), "%d1", 1800 + getpid() % 100);
	snprintf(escaped_arg, sizeof(escaped_arg), "%d2", 1800 + getpid() % 100);
	snprintf(daemon_arg, sizeof(daemon_arg), "%d3", 1800 + getpid() % 100);
	struct proctree t;
	struct ta_err err = { 0 };
	assert_int_equal(proctree_init(&t, &err), 0);
	if (mode != PROCTREE_NO_CGROUP && !t.cgroup) {
		proctree_release(&t);
		proctree_force_mode(PROCTREE_AUTO);
		skip();
	}
	if (mode == PROCTREE_NO_CGROUP)
		assert_null(t.cgroup);
	char *dir = t.cgroup ? strdup(t.cgroup) : NULL;
	start_family(&t);
	pid_t child = t.children[0];

	struct strbuf who = STRBUF_INIT;
	int live = proctree_count(&t, &who);
	if (live != 3)
		fprintf(stderr, "members: %s\n", strbuf_str(&who));
	assert_int_equal(live, 3);
	assert_non_null(strstr(who.buf, "sleep("));
	strbuf_reset(&who);

	if (term_first) {
		proctree_signal(&t, SIGTERM);
		assert_true(proctree_wait_empty(&t, 10000));
		assert_int_equal(proctree_end(&t, 5000, &who), 0);
	} else {
		assert_int_equal(proctree_end(&t, 5000, &who), 3);
	}
	int left = sleeps_running();
	kill_sleeps();
	assert_int_equal(left, 0);
	/* Our own child is ours to reap; nothing else of the tree is left to. */
	assert_int_equal(waitpid(child, NULL, 0), child);
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	if (dir) {
		struct stat st;
		assert_int_equal(stat(dir, &st), -1);	/* the cgroup is removed */
	}
	free(dir);
	strbuf_release(&who);
	proctree_release(&t);
	proctree_force_mode(PROCTREE_AUTO);
}

static void test_cgroup(void **state)
{
	check_contained(PROCTREE_AUTO, false);
}

static void test_cgroup_sigterm(void **state)
{
	check_contained(PROCTREE_AUTO, true);
}

static void test_cgroup_without_kill_file(void **state)
{
	check_contained(PROCTREE_NO_KILL_FILE, false);
}

static void test_process_group(void **state)
{
	check_contained(PROCTREE_NO_CGROUP, false);
}

static void test_process_group_sigterm(void **state)
{
	check_contained(PROCTREE_NO_CGROUP, true);
}

/* Starts `sleep ARG` in t and returns once it runs (its exec closed a pipe). */
static pid_t start_sleep(struct proctree *t, const char *arg)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (proctree_child_join(t, 0) < 0)
			_exit(126);
		execlp("sleep", "sleep", arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	proctree_add(t, pid);
	char c;
	assert_int_equal(read(p[0], &c, 1), 0);
	close(p[0]);
	return pid;
}

/* Two trees at once: each counts only its own, in every mode. */
static void check_two_trees(enum proctree_force mode)
{
	proctree_force_mode(mode);
	struct proctree a, b;
	struct ta_err err = { 0 };
	assert_int_equal(proctree_init(&a, &err), 0);
	assert_int_equal(proctree_init(&b, &err), 0);
	snprintf(direct_arg, sizeof(direct_arg), "%d7", 1800 + getpid() % 100);
	snprintf(escaped_arg, sizeof(escaped_arg), "%d8", 1800 + getpid() % 100);
	pid_t pa = start_sleep(&a, direct_arg);
	pid_t pb = start_sleep(&b, escaped_arg);
	assert_int_equal(proctree_count(&a, NULL), 1);
	assert_int_equal(proctree_count(&b, NULL), 1);
	assert_int_equal(proctree_end(&a, 5000, NULL), 1);
	assert_int_equal(kill(pb, 0), 0);	/* b's child is untouched */
	assert_int_equal(proctree_end(&b, 5000, NULL), 1);
	assert_int_equal(waitpid(pa, NULL, 0), pa);
	assert_int_equal(waitpid(pb, NULL, 0), pb);
	proctree_release(&a);
	proctree_release(&b);
	proctree_force_mode(PROCTREE_AUTO);
}

static void test_two_trees(void **state)
{
	check_two_trees(PROCTREE_AUTO);
	check_two_trees(PROCTREE_NO_CGROUP);
}

/*
 * Where the child of a cgroup tree moves a process it starts: "up" (the
 * cgroup the tree's is made in: ours) or "sub" (a sub-cgroup it makes).
 */
static void start_mover(struct proctree *t, const char *where)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (proctree_child_join(t, 0) < 0)
			_exit(126);
		char dir[300], procs[340];
		snprintf(dir, sizeof(dir), "%s", t->cgroup);
		if (!strcmp(where, "up"))
			*strrchr(dir, '/') = '\0';
		else if (snprintf(dir, sizeof(dir), "%s/sub", t->cgroup) > 0 && mkdir(dir, 0755) < 0)
			_exit(125);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
		pid_t mover = fork();
		if (mover == 0) {
			int fd = open(procs, O_WRONLY);
			if (fd < 0 || write(fd, "0", 1) != 1)
				_exit(124);
			close(fd);
			setsid();
			execlp("sleep", "sleep", escaped_arg, (char *)NULL);
			_exit(127);
		}
		/* Becomes a sleep only once the mover runs: it was seen leaving. */
		execlp("sleep", "sleep", direct_arg, (char *)NULL);
		_exit(127);
	}
	proctree_add(t, pid);
	for (int i = 0; i < 500 && sleeps_running() < 2; i++)
		usleep(10000);
	assert_int_equal(sleeps_running(), 2);
}

/*
 * A process that moves itself out of the tree's cgroup (into ours) or into
 * a sub-cgroup the child made: counted, named, ended; the cgroup (and the
 * sub-cgroup) removed; proctree_end reports no survivor.  Also after the
 * child that started it is gone (the mover is then a stray of ours).
 */
static void check_moved(const char *where, bool child_first)
{
	snprintf(direct_arg, sizeof(direct_arg), "%d4", 1800 + getpid() % 100);
	snprintf(escaped_arg, sizeof(escaped_arg), "%d5", 1800 + getpid() % 100);
	struct proctree t;
	struct ta_err err = { 0 };
	assert_int_equal(proctree_init(&t, &err), 0);
	if (!t.cgroup) {
		proctree_release(&t);
		skip();
	}
	char *dir = strdup(t.cgroup);
	start_mover(&t, where);
	pid_t child = t.children[0];
	struct strbuf who = STRBUF_INIT;
	if (child_first) {
		kill(child, SIGKILL);
		assert_int_equal(waitpid(child, NULL, 0), child);
	}
	int live = proctree_count(&t, &who);
	if (live != 2 - child_first)
		fprintf(stderr, "members: %s\n", strbuf_str(&who));
	assert_int_equal(live, 2 - child_first);
	char name[48];
	snprintf(name, sizeof(name), "sleep(");
	assert_non_null(strstr(who.buf, name));
	strbuf_reset(&who);
	assert_int_equal(proctree_end(&t, 5000, &who), 2 - child_first);
	int left = sleeps_running();
	kill_sleeps();
	assert_int_equal(left, 0);
	if (!child_first)
		assert_int_equal(waitpid(child, NULL, 0), child);
	struct stat st;
	assert_int_equal(stat(dir, &st), -1);
	free(dir);
	strbuf_release(&who);
	proctree_release(&t);
}

static void test_cgroup_escape_up(void **state)
{
	check_moved("up", false);
}

static void test_cgroup_escape_orphaned(void **state)
{
	check_moved("up", true);
}

static void test_cgroup_subcgroup(void **state)
{
	check_moved("sub", false);
}

/* What the recorder saw: the path, and whether it existed at that moment. */
static char recorded[300];
static bool recorded_existed, forgotten;

static void recorder(const char *cgroup, bool made)
{
	struct stat st;
	if (made) {
		snprintf(recorded, sizeof(recorded), "%s", cgroup);
		recorded_existed = stat(cgroup, &st) == 0;
	} else if (!strcmp(cgroup, recorded)) {
		forgotten = stat(cgroup, &st) < 0;
	}
}

/* The recorder hears of a cgroup before it exists, and of its removal after. */
static void test_cgroup_recorded_first(void **state)
{
	proctree_set_recorder(recorder);
	recorded[0] = '\0';
	recorded_existed = forgotten = false;
	struct proctree t;
	struct ta_err err = { 0 };
	int rc = proctree_init(&t, &err);
	proctree_set_recorder(NULL);
	assert_int_equal(rc, 0);
	if (!t.cgroup) {
		proctree_release(&t);
		skip();
	}
	assert_string_equal(recorded, t.cgroup);
	assert_false(recorded_existed);
	proctree_set_recorder(recorder);
	rc = proctree_end(&t, 5000, NULL);
	proctree_set_recorder(NULL);
	assert_int_equal(rc, 0);
	assert_true(forgotten);
	proctree_release(&t);
}

/* A clock that moves 100 ms each time it is read. */
static uint64_t fake_ns;
static unsigned fake_reads;
static uint64_t fast_clock(void)
{
	fake_reads++;
	return fake_ns += 100000000ULL;
}

/*
 * The waits read the clock, not count their 10 ms sleeps: on a clock that
 * moves 100 ms per reading (a wait whose every round takes that long: a
 * busy host, a slow /proc) a 1000 ms wait ends after about 10 rounds, not
 * 100.  Nothing here depends on real time.
 */
static void test_wait_by_the_clock(void **state)
{
	proctree_force_mode(PROCTREE_NO_CGROUP);
	snprintf(direct_arg, sizeof(direct_arg), "%d6", 1800 + getpid() % 100);
	struct proctree t;
	struct ta_err err = { 0 };
	assert_int_equal(proctree_init(&t, &err), 0);
	pid_t pid = start_sleep(&t, direct_arg);
	fake_reads = 0;
	proctree_set_clock(fast_clock);
	bool empty = proctree_wait_empty(&t, 1000);
	unsigned reads = fake_reads;
	proctree_set_clock(NULL);
	assert_int_equal(proctree_end(&t, 5000, NULL), 1);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	proctree_release(&t);
	proctree_force_mode(PROCTREE_AUTO);
	assert_false(empty);
	assert_in_range(reads, 2, 12);
}

/* The same for a process group's wait (procgroup_wait_gone, which
 * procgroup_end_leftover uses): a live group, a 1000 ms wait on the fast
 * clock, about 10 readings, not 100 naps. */
static void test_group_wait_by_the_clock(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	setpgid(pid, pid);
	fake_reads = 0;
	procgroup_set_clock(fast_clock);
	bool gone = procgroup_wait_gone(pid, 1000);
	unsigned reads = fake_reads;
	procgroup_set_clock(NULL);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_false(gone);
	assert_in_range(reads, 2, 12);
}

/* Also after a failed assertion: no sleep and no cgroup of ours is left. */
static int teardown(void **state)
{
	kill_sleeps();
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rmdir /sys/fs/cgroup/topoadvisor-%d-*/sub "
		 "/sys/fs/cgroup/unified/topoadvisor-%d-*/sub /sys/fs/cgroup/topoadvisor-%d-* "
		 "/sys/fs/cgroup/unified/topoadvisor-%d-* 2>/dev/null", (int)getpid(),
		 (int)getpid(), (int)getpid(), (int)getpid());
	if (system(cmd) < 0)
		perror("system");
	proctree_force_mode(PROCTREE_AUTO);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cgroup, teardown),
		cmocka_unit_test_teardown(test_cgroup_sigterm, teardown),
		cmocka_unit_test_teardown(test_cgroup_without_kill_file, teardown),
		cmocka_unit_test_teardown(test_process_group, teardown),
		cmocka_unit_test_teardown(test_process_group_sigterm, teardown),
		cmocka_unit_test_teardown(test_two_trees, teardown),
		cmocka_unit_test_teardown(test_cgroup_escape_up, teardown),
		cmocka_unit_test_teardown(test_cgroup_escape_orphaned, teardown),
		cmocka_unit_test_teardown(test_cgroup_subcgroup, teardown),
		cmocka_unit_test_teardown(test_cgroup_recorded_first, teardown),
		cmocka_unit_test_teardown(test_wait_by_the_clock, teardown),
		cmocka_unit_test(test_group_wait_by_the_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
