/*
 * Unit tests for the host lock: exclusive across processes, never waits,
 * names the holder's pid, is released when the holder dies (even by
 * SIGKILL), is 0600 and close-on-exec, and honours $TOPOADVISOR_LOCK.
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
	assert_int_equal(fscanf(f, "%ld", &pid), 1);
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
	setenv("TOPOADVISOR_LOCK", lockpath, 1);
	assert_string_equal(hostlock_path(), lockpath);
	struct hostlock lk;
	struct ta_err err = { 0 };
	assert_int_equal(hostlock_acquire(&lk, NULL, &err), 0);
	assert_string_equal(lk.path, lockpath);
	hostlock_release(&lk);
	setenv("TOPOADVISOR_LOCK", "", 1);
	assert_string_equal(hostlock_path(), HOSTLOCK_DEFAULT_PATH);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exclusive_between_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_released_when_holder_dies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_and_symlink, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
