/*
 * Unit tests for noise loads, with real processes: spin processes run on
 * the CPUs asked for, a command and its children are pinned and all gone
 * after stop (also when they ignore SIGTERM), loads get default signal
 * handling whatever the controller set, and a program that cannot run or a
 * bad cpuset fails cleanly with nothing left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "experiments/noise.h"
#include "util/mono.h"

/* Fields of /proc/PID/stat we check: state, pgrp and processor (field 39). */
struct pstat {
	char state;
	int pgrp;
	int processor;
};

static int read_pstat(pid_t pid, struct pstat *ps)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* Field 3 is the state; count fields after the comm up to 39. */
	int field = 2;
	char *save, *tok = strtok_r(p + 1, " ", &save);
	for (; tok; tok = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 3)
			ps->state = tok[0];
		else if (field == 5)
			ps->pgrp = atoi(tok);
		else if (field == 39) {
			ps->processor = atoi(tok);
			return 0;
		}
	}
	return -1;
}

/* A process that is gone or a zombie is dead. */
static int alive(pid_t pid)
{
	struct pstat ps;
	return read_pstat(pid, &ps) == 0 && ps.state != 'Z' && ps.state != 'X';
}

/* Live members of a process group (at most max). */
static size_t group_members(pid_t pgid, pid_t *out, size_t max)
{
	DIR *d = opendir("/proc");
	assert_non_null(d);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < max) {
		pid_t pid = atoi(de->d_name);
		struct pstat ps;
		if (pid > 0 && read_pstat(pid, &ps) == 0 && ps.pgrp == pgid && ps.state != 'Z')
			out[n++] = pid;
	}
	closedir(d);
	return n;
}

static int affinity_only(pid_t pid, int cpu)
{
	cpu_set_t set;
	if (sched_getaffinity(pid, sizeof(set), &set) < 0)
		return 0;
	return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

static int last_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? (int)n - 1 : 0;
}

/* Nothing of ours left to reap: every started process was waited for. */
static void assert_no_children(void)
{
	errno = 0;
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_spin_runs_on_requested_cpu(void **state)
{
	struct ta_err err = { 0 };
	int cpu = last_cpu();
	char cpus[16];
	snprintf(cpus, sizeof(cpus), "%d", cpu);
	struct noise_load *nl = noise_start(NOISE_SPIN, cpus, 2, NULL, &err);
	if (!nl)
		fail_msg("%s", err.msg);
	const pid_t *pids;
	assert_int_equal(noise_pids(nl, &pids), 2);
	/* Let them run, then ask the kernel where they ran. */
	mono_sleep_ms(150);
	for (size_t i = 0; i < 2; i++) {
		struct pstat ps;
		assert_int_equal(read_pstat(pids[i], &ps), 0);
		assert_int_equal(ps.processor, cpu);
		assert_int_equal(ps.pgrp, noise_pgid(nl));
		assert_true(affinity_only(pids[i], cpu));
	}
	assert_int_equal(noise_check(nl, &err), 0);
	pid_t copy[2] = { pids[0], pids[1] };
	assert_int_equal(noise_stop(nl, 2000, &err), 0);
	assert_false(alive(copy[0]));
	assert_false(alive(copy[1]));
	assert_no_children();
}

/* Default: one process per CPU of the set, each on its own CPU. */
static void test_spin_one_per_cpu(void **state)
{
	struct ta_err err = { 0 };
	int cpu = last_cpu();
	char cpus[16];
	snprintf(cpus, sizeof(cpus), "0-%d", cpu);
	struct noise_load *nl = noise_start(NOISE_SPIN, cpus, 0, NULL, &err);
	if (!nl)
		fail_msg("%s", err.msg);
	const pid_t *pids;
	assert_int_equal(noise_pids(nl, &pids), (size_t)cpu + 1);
	for (int i = 0; i <= cpu; i++)
		assert_true(affinity_only(pids[i], i));
	assert_int_equal(noise_stop(nl, 2000, &err), 0);
	assert_no_children();
}

/* The controller's own SIGTERM handling must not protect the load. */
static void test_load_gets_default_signals(void **state)
{
	struct ta_err err = { 0 };
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGTERM, &ign, &old);
	sigset_t block, oldmask;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &oldmask);
	struct noise_load *nl = noise_start(NOISE_SPIN, "0", 1, NULL, &err);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	sigaction(SIGTERM, &old, NULL);
	assert_non_null(nl);
	kill(-noise_pgid(nl), SIGTERM);
	int rc = 0;
	for (int i = 0; i < 200 && (rc = noise_check(nl, &err)) == 0; i++)
		mono_sleep_ms(10);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err.msg, "killed by signal 15"));
	assert_int_equal(noise_stop(nl, 1000, &err), 0);
	assert_no_children();
}

static void test_command_children_gone_after_stop(void **state)
{
	struct ta_err err = { 0 };
	char *argv[] = { "sh", "-c", "sleep 30 & sleep 30 & wait", NULL };
	struct noise_load *nl = noise_start(NOISE_COMMAND, "0", 0, argv, &err);
	if (!nl)
		fail_msg("%s", err.msg);
	pid_t members[8];
	size_t n = 0;
	for (int i = 0; i < 300 && (n = group_members(noise_pgid(nl), members, 8)) < 3; i++)
		mono_sleep_ms(10);
	assert_int_equal(n, 3);	/* sh and both sleeps */
	for (size_t i = 0; i < n; i++)
		assert_true(affinity_only(members[i], 0));
	assert_int_equal(noise_check(nl, &err), 0);
	assert_int_equal(noise_stop(nl, 2000, &err), 0);
	for (size_t i = 0; i < n; i++)
		if (alive(members[i]))
			fail_msg("process %d survived stop", (int)members[i]);
	assert_no_children();
}

/* A load that ignores SIGTERM (and so do its children) gets SIGKILL. */
static void test_command_ignoring_sigterm_is_killed(void **state)
{
	struct ta_err err = { 0 };
	char *argv[] = { "sh", "-c", "trap '' TERM; sleep 30 & sleep 30; wait", NULL };
	struct noise_load *nl = noise_start(NOISE_COMMAND, NULL, 0, argv, &err);
	assert_non_null(nl);
	pid_t members[8];
	size_t n = 0;
	for (int i = 0; i < 300 && (n = group_members(noise_pgid(nl), members, 8)) < 3; i++)
		mono_sleep_ms(10);
	assert_int_equal(n, 3);
	assert_int_equal(noise_stop(nl, 100, &err), 0);
	for (size_t i = 0; i < n; i++)
		assert_false(alive(members[i]));
	assert_no_children();
}

static void test_command_that_ends_is_reported(void **state)
{
	struct ta_err err = { 0 };
	char *argv[] = { "sh", "-c", "exit 3", NULL };
	struct noise cfg = { .kind = NOISE_COMMAND, .name = "ends", .argv = { argv, 3 } };
	struct noise_load *nl = noise_start_config(&cfg, &err);
	assert_non_null(nl);
	int rc = 0;
	for (int i = 0; i < 300 && (rc = noise_check(nl, &err)) == 0; i++)
		mono_sleep_ms(10);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err.msg, "exited with status 3"));
	assert_int_equal(noise_stop(nl, 1000, &err), 0);
	assert_no_children();
}

static void test_missing_program_fails_cleanly(void **state)
{
	struct ta_err err = { 0 };
	char *argv[] = { "/nonexistent/topoadvisor-noise", "x", NULL };
	assert_null(noise_start(NOISE_COMMAND, "0", 0, argv, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "cannot execute '/nonexistent/topoadvisor-noise'"));
	assert_non_null(strstr(err.msg, "No such file or directory"));
	assert_no_children();

	char *not_in_path[] = { "topoadvisor-no-such-program", NULL };
	assert_null(noise_start(NOISE_COMMAND, NULL, 0, not_in_path, &err));
	assert_non_null(strstr(err.msg, "in PATH"));
	assert_no_children();
}

static void test_bad_requests(void **state)
{
	struct ta_err err = { 0 };
	assert_null(noise_start(NOISE_SPIN, "0-x", 1, NULL, &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_null(noise_start(NOISE_SPIN, "1000", 1, NULL, &err));
	assert_non_null(strstr(err.msg, "CPU 1000 is not online"));
	assert_null(noise_start(NOISE_GUEST, NULL, 0, NULL, &err));
	assert_non_null(strstr(err.msg, "second guest"));
	char *empty[] = { NULL };
	assert_null(noise_start(NOISE_COMMAND, NULL, 0, empty, &err));
	assert_no_children();
	struct noise none_cfg = { .kind = NOISE_NONE, .name = "none" };
	struct noise_load *none = noise_start_config(&none_cfg, &err);
	assert_non_null(none);
	assert_int_equal(noise_pgid(none), 0);
	assert_int_equal(noise_check(none, &err), 0);
	assert_int_equal(noise_stop(none, 0, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spin_runs_on_requested_cpu),
		cmocka_unit_test(test_spin_one_per_cpu),
		cmocka_unit_test(test_load_gets_default_signals),
		cmocka_unit_test(test_command_children_gone_after_stop),
		cmocka_unit_test(test_command_ignoring_sigterm_is_killed),
		cmocka_unit_test(test_command_that_ends_is_reported),
		cmocka_unit_test(test_missing_program_fails_cleanly),
		cmocka_unit_test(test_bad_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
