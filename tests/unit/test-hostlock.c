/*
 * Unit tests for the host lock: exclusive across processes, never waits,
 * names the holder's pid, is released when the holder dies (even by
 * SIGKILL), is 0600 and close-on-exec, and keeps its file in $TOPOADVISOR_LOCK; never
 * truncates, chmods or writes a file that is not a lock of ours (other
 * content, hard links, FIFOs); and ends the process groups a killed holder
 * recorded (their whole cgroup, or their process group), but not a group
 * whose id now names another process, nor a cgroup that is not ours; a
 * tree's cgroup is recorded as soon as it exists, and a leftover one with
 * sub-cgroups is ended and removed whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/hostlock.h"
#include "util/procgroup.h"
#include "util/proctree.h"

static char dir[64];
static char lockpath[128];

static int setup(void **state)
{
	strcpy(dir, "/tmp/ta-test-hostlock.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(lockpath, sizeof(lockpath), "%s/lock", dir);
	return 0;
}

static int teardown(void **state)
{
	char p[160];
	unlink(lockpath);
	snprintf(p, sizeof(p), "%s/other", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/target", dir);
	unlink(p);
	return rmdir(dir);
}

/* Runs fn in a child and returns its exit status (fn returns it). */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int try_lock_expect_busy(void)
{
	struct hostlock lk;
	struct ta_err err = { 0 };
	if (hostlock_acquire(&lk, lockpath, &err) == 0)
		return 1;
	char want[64];
	snprintf(want, sizeof(want), "process %ld holds", (long)getppid());
	if (!strstr(err.msg, want) || !strstr(err.msg, "another topoadvisor")) {
		fprintf(stderr, "unexpected message: %s\n", err.msg);
		return 2;
	}
	return 0;
}

static int try_lock_expect_free(void)
{
	struct hostlock lk;
	struct ta_err err = { 0 };
	if (hostlock_acquire(&lk, lockpath, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	hostlock_release(&lk);
	return 0;
}

static void test_exclusive_between_processes(void **state)
{
	struct hostlock lk;
	struct ta_err err = { 0 };
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	struct stat st;
	assert_int_equal(stat(lockpath, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_true(fcntl(lk.fd, F_GETFD) & FD_CLOEXEC);
	FILE *f = fopen(lockpath, "r");
	long pid = 0;
	assert_int_equal(fscanf(f, "topoadvisor host lock pid %ld", &pid), 1);
	fclose(f);
	assert_int_equal(pid, (long)getpid());

	assert_int_equal(in_child(try_lock_expect_busy), 0);
	hostlock_release(&lk);
	assert_int_equal(lk.fd, -1);
	assert_int_equal(in_child(try_lock_expect_free), 0);
}

/* A holder killed with SIGKILL leaves no stale lock behind. */
static void test_released_when_holder_dies(void **state)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct hostlock lk;
		struct ta_err err = { 0 };
		close(ready[0]);
		char ok = hostlock_acquire(&lk, lockpath, &err) == 0 ? 'y' : 'n';
		if (write(ready[1], &ok, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	char ok = 0;
	assert_int_equal(read(ready[0], &ok, 1), 1);
	close(ready[0]);
	assert_int_equal(ok, 'y');

	struct hostlock lk;
	struct ta_err err = { 0 };
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), -1);
	char want[64];
	snprintf(want, sizeof(want), "process %ld holds", (long)pid);
	assert_non_null(strstr(err.msg, want));

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	hostlock_release(&lk);
}

static void test_env_and_symlink(void **state)
{
	/* TOPOADVISOR_LOCK names the directory (made when missing). */
	setenv("TOPOADVISOR_LOCK", lockpath, 1);
	assert_string_equal(hostlock_dir(), lockpath);
	struct hostlock lk;
	struct ta_err err = { 0 };
	assert_int_equal(hostlock_acquire(&lk, NULL, &err), 0);
	char want[160];
	snprintf(want, sizeof(want), "%s/host.lock", lockpath);
	assert_string_equal(lk.path, want);
	hostlock_release(&lk);
	assert_int_equal(unlink(want), 0);
	assert_int_equal(rmdir(lockpath), 0);
	setenv("TOPOADVISOR_LOCK", "", 1);
	assert_string_equal(hostlock_dir(), HOSTLOCK_DEFAULT_DIR);
	unsetenv("TOPOADVISOR_LOCK");

	/* A symlink in place of the lock file is refused, its target untouched. */
	char target[160];
	snprintf(target, sizeof(target), "%s/target", dir);
	FILE *f = fopen(target, "w");
	fputs("keep\n", f);
	fclose(f);
	unlink(lockpath);
	assert_int_equal(symlink(target, lockpath), 0);
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), -1);
	assert_non_null(strstr(err.msg, "TOPOADVISOR_LOCK"));
	char buf[16] = "";
	f = fopen(target, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "keep\n");
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void assert_file(const char *path, const char *text, mode_t mode)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, mode);
}

/* TOPOADVISOR_LOCK pointing at a file by mistake must not destroy it. */
static void test_foreign_file_untouched(void **state)
{
	struct hostlock lk;
	struct ta_err err = { 0 };
	write_file(lockpath, "precious notes\n", 0644);
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), -1);
	assert_non_null(strstr(err.msg, "not a topoadvisor lock file"));
	assert_non_null(strstr(err.msg, "TOPOADVISOR_LOCK"));
	assert_file(lockpath, "precious notes\n", 0644);
	/* A pid file of another daemon (a number, mode 0644) is not ours either. */
	write_file(lockpath, "4242\n", 0644);
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), -1);
	assert_file(lockpath, "4242\n", 0644);
	/* An empty file (made by touch) is taken, and its mode kept. */
	write_file(lockpath, "", 0640);
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	hostlock_release(&lk);
	struct stat st;
	assert_int_equal(stat(lockpath, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
}

/* A hard link to a file (or a second name of our own lock) is refused. */
static void test_hard_link_refused(void **state)
{
	struct hostlock lk;
	struct ta_err err = { 0 };
	char other[160];
	snprintf(other, sizeof(other), "%s/other", dir);
	write_file(other, "", 0600);
	assert_int_equal(link(other, lockpath), 0);
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), -1);
	assert_non_null(strstr(err.msg, "hard links"));
	assert_file(other, "", 0600);
	/* A FIFO would block a plain open; refused at once. */
	unlink(lockpath);
	assert_int_equal(mkfifo(lockpath, 0600), 0);
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), -1);
	assert_non_null(strstr(err.msg, "it is a FIFO (named pipe), not a file"));
}

/*
 * A holder killed with SIGKILL: the next one ends what its trees left — in
 * a cgroup also a grandchild that left the process group (setsid), which
 * is then named too — and records nothing more.
 */
static void leftover_trees_ended(enum proctree_force mode)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t holder = fork();
	assert_true(holder >= 0);
	if (holder == 0) {
		struct hostlock lk;
		struct ta_err err = { 0 };
		struct proctree tree;
		close(ready[0]);
		proctree_force_mode(mode);
		if (hostlock_acquire(&lk, lockpath, &err) < 0 || proctree_init(&tree, &err) < 0)
			_exit(1);
		/* The load holds the lock's descriptor until it execs: wait for that. */
		int exec_seen[2];
		if (pipe2(exec_seen, O_CLOEXEC) < 0)
			_exit(1);
		pid_t load = fork();
		if (load == 0) {
			close(ready[1]);
			if (proctree_child_join(&tree, 0) < 0)
				_exit(126);
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 1);
			dup2(null, 2);
			if (fork() == 0) {
				setsid();
				execlp("sleep", "sleep", "1735", (char *)NULL);
				_exit(127);
			}
			execlp("sleep", "sleep", "1733", (char *)NULL);
			_exit(127);
		}
		proctree_add(&tree, load);
		hostlock_track_tree(&tree);
		close(exec_seen[1]);
		char c;
		if (read(exec_seen[0], &c, 1) != 0)
			_exit(1);
		int cg = tree.cgroup != NULL;
		if (write(ready[1], &load, sizeof(load)) != sizeof(load) ||
		    write(ready[1], &cg, sizeof(cg)) != sizeof(cg))
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	pid_t load = 0;
	int cg = 0;
	assert_int_equal(read(ready[0], &load, sizeof(load)), sizeof(load));
	assert_int_equal(read(ready[0], &cg, sizeof(cg)), sizeof(cg));
	close(ready[0]);
	/* Both sleeps run (the grandchild's exec may still be under way). */
	for (int i = 0; i < 500 && system("pgrep -x -f 'sleep 1735' >/dev/null") != 0; i++)
		usleep(10000);
	kill(holder, SIGKILL);
	assert_int_equal(waitpid(holder, NULL, 0), holder);
	assert_true(procgroup_alive(load));	/* orphaned, still running */
	if (mode == PROCTREE_NO_CGROUP)
		assert_false(cg);

	struct hostlock lk;
	struct ta_err err = { 0 };
	int rc = hostlock_acquire(&lk, lockpath, &err);
	if (rc < 0)
		fprintf(stderr, "%s\n", err.msg);
	int escaped = system("pgrep -x -f 'sleep 1735' >/dev/null") == 0;
	kill(-load, SIGKILL);
	system("pkill -KILL -x -f 'sleep 1735'");
	assert_int_equal(rc, 0);
	assert_non_null(strstr(strbuf_str(&lk.leftover_names), "sleep"));
	assert_false(procgroup_alive(load));
	if (cg) {
		/* The whole tree, the setsid one included, and the cgroup is gone. */
		assert_int_equal(lk.leftovers, 2);
		assert_false(escaped);
	} else {
		assert_int_equal(lk.leftovers, 1);	/* only a cgroup holds the other */
	}
	hostlock_release(&lk);
	/* Ended trees are forgotten: the next holder finds nothing. */
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	assert_int_equal(lk.leftovers, 0);
	hostlock_release(&lk);
}

static void test_leftover_trees_ended(void **state)
{
	leftover_trees_ended(PROCTREE_AUTO);
}

static void test_leftover_groups_ended(void **state)
{
	leftover_trees_ended(PROCTREE_NO_CGROUP);
}

/* A recorded cgroup is only touched when it is one of ours, and then removed. */
static void test_leftover_cgroup_removed(void **state)
{
	struct proctree tree;
	struct ta_err err = { 0 };
	assert_int_equal(proctree_init(&tree, &err), 0);
	if (!tree.cgroup) {
		proctree_release(&tree);
		skip();
	}
	char *path = strdup(tree.cgroup);
	proctree_release(&tree);
	/* left as a killed controller leaves it: empty */
	char text[512];
	snprintf(text, sizeof(text), "topoadvisor host lock\npid 1\ncgroup %s\n"
		 "cgroup /sys/fs/cgroup\ncgroup /tmp\n", path);
	write_file(lockpath, text, 0600);
	struct hostlock lk;
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	assert_int_equal(lk.leftovers, 0);
	struct stat st;
	assert_int_equal(stat(path, &st), -1);	/* removed */
	assert_int_equal(stat("/tmp", &st), 0);
	hostlock_release(&lk);
	free(path);
}

static void read_lock(char *buf, size_t size)
{
	int fd = open(lockpath, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
}

/*
 * A tree's cgroup is in the lock as soon as proctree_init returns (it is
 * written before the cgroup is made: test-proctree checks the order), not
 * only once a child runs in it; and is forgotten once removed, also when
 * no hostlock_untrack_tree follows (a run that fails before its fork).
 */
static void test_cgroup_recorded_at_once(void **state)
{
	struct hostlock lk;
	struct ta_err err = { 0 };
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	struct proctree tree;
	assert_int_equal(proctree_init(&tree, &err), 0);
	if (!tree.cgroup) {
		proctree_release(&tree);
		hostlock_release(&lk);
		skip();
	}
	char text[4096], line[512];
	snprintf(line, sizeof(line), "\ncgroup %s\n", tree.cgroup);
	read_lock(text, sizeof(text));
	assert_non_null(strstr(text, line));
	assert_int_equal(proctree_end(&tree, 5000, NULL), 0);
	read_lock(text, sizeof(text));
	assert_null(strstr(text, "\ncgroup "));
	proctree_release(&tree);
	hostlock_release(&lk);
}

/*
 * A leftover cgroup with a sub-cgroup (a benchmark as root made one) and
 * a process in it: the next holder ends the process, removes both and
 * counts no survivor.
 */
static void test_leftover_subcgroup_removed(void **state)
{
	struct proctree tree;
	struct ta_err err = { 0 };
	assert_int_equal(proctree_init(&tree, &err), 0);
	if (!tree.cgroup) {
		proctree_release(&tree);
		skip();
	}
	char *path = strdup(tree.cgroup), sub[300], procs[320];
	proctree_release(&tree);
	snprintf(sub, sizeof(sub), "%s/made-by-a-benchmark", path);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(procs, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(1);
		close(fd);
		pause();
		_exit(0);
	}
	for (int i = 0; i < 500; i++) {
		char text[64] = "";
		int fd = open(procs, O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0)
			break;
		usleep(10000);
	}
	char text[512];
	snprintf(text, sizeof(text), "topoadvisor host lock\npid 1\ncgroup %s\n", path);
	write_file(lockpath, text, 0600);
	struct hostlock lk;
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	int leftovers = lk.leftovers;
	bool survivor = lk.survivor_cgroup != NULL;
	hostlock_release(&lk);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	struct stat st;
	bool sub_left = stat(sub, &st) == 0, left = stat(path, &st) == 0;
	rmdir(sub);
	rmdir(path);
	free(path);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(leftovers, 1);
	assert_false(survivor);
	assert_false(sub_left);
	assert_false(left);
}

/* A recorded group whose id now names a process started later is left alone. */
static void test_reused_group_id_spared(void **state)
{
	pid_t other = fork();
	assert_true(other >= 0);
	if (other == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	setpgid(other, other);
	unsigned long long start = procgroup_start_time(other);
	assert_true(start > 0);
	char text[128];
	snprintf(text, sizeof(text), "topoadvisor host lock\npid 1\ngroup %d %llu\n",
		 (int)other, start - 1);
	write_file(lockpath, text, 0600);
	struct hostlock lk;
	struct ta_err err = { 0 };
	assert_int_equal(hostlock_acquire(&lk, lockpath, &err), 0);
	assert_int_equal(lk.leftovers, 0);
	assert_int_equal(kill(other, 0), 0);
	hostlock_release(&lk);
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exclusive_between_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_released_when_holder_dies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_and_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_file_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hard_link_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftover_trees_ended, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftover_groups_ended, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftover_cgroup_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reused_group_id_spared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_recorded_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftover_subcgroup_removed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
