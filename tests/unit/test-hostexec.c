/*
 * Unit tests for host commands, with real processes: the timeout holds by
 * the clock whatever the command does with its descriptors (a setsid child
 * keeping stdout open, stdout and stderr closed, SIGTERM ignored) and a
 * cancel is prompt; what a command leaves running when it ends is named
 * and ended; output beyond the cap is counted (bytes and lines), not
 * silently lost; the command inherits no descriptor of ours and reads
 * /dev/null.  The tests of containment run twice: with a cgroup per tree
 * (where this host offers cgroup v2) and in the fallback without one
 * (process group + subreaper).  A hang would be a failure, not a stuck
 * suite: every test runs under an alarm.
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
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/hostexec.h"
#include "util/mono.h"
#include "util/proctree.h"

/* The unique first argument of this test's sleeps. */
static char mark[16];

static int ours_running(void)
{
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "pgrep -f '^sleep %s' >/dev/null", mark);
	return system(cmd) == 0;
}

static int setup(void **state)
{
	snprintf(mark, sizeof(mark), "19%d", (int)(getpid() % 1000));
	alarm(120);	/* a hang fails the test instead of stalling the suite */
	return 0;
}

/* The same, with trees in the fallback mode (no cgroup: group + subreaper). */
static int setup_no_cgroup(void **state)
{
	proctree_force_mode(PROCTREE_NO_CGROUP);
	return setup(state);
}

static int teardown(void **state)
{
	alarm(0);
	proctree_force_mode(PROCTREE_AUTO);
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "pkill -KILL -f '^sleep %s'", mark);
	if (system(cmd) < 0)
		perror("system");
	return 0;
}

/* Runs `sh -c SCRIPT` ("M" in it stands for the mark) and checks nothing is left. */
static void run_sh(const char *script, int timeout_s, volatile sig_atomic_t *cancel,
		   struct hostexec_result *res)
{
	struct strbuf s = STRBUF_INIT;
	for (const char *p = script; *p; p++) {
		if (*p == 'M')
			strbuf_addstr(&s, mark);
		else
			strbuf_addch(&s, *p);
	}
	char *argv[] = { "sh", "-c", s.buf, NULL };
	struct ta_err err = { 0 };
	int rc = hostexec_run(argv, NULL, timeout_s, cancel, res, &err);
	if (rc < 0)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, 0);
	strbuf_release(&s);
	assert_false(ours_running());
	assert_false(res->survivors);
}

/* A daemon keeps stdout open after the command exits: named, ended, no wait. */
static void test_leftover_holding_stdout(void **state)
{
	struct hostexec_result res;
	double t0 = mono_now_s();
	run_sh("setsid sleep M & echo done", 0, NULL, &res);
	assert_true(mono_now_s() - t0 < 30);
	assert_int_equal(res.exit_code, 0);
	assert_false(res.timed_out);
	assert_string_equal(strbuf_str(&res.out), "done\n");
	assert_int_equal(res.leftovers, 1);
	assert_non_null(strstr(strbuf_str(&res.leftover_names), "sleep("));
	hostexec_result_release(&res);
}

/* Also one that double-forks away from its parent (a classic daemon). */
static void test_leftover_daemon(void **state)
{
	struct hostexec_result res;
	run_sh("(setsid sh -c 'sleep M' >/dev/null 2>&1 &); echo done", 0, NULL, &res);
	assert_true(res.leftovers >= 1);	/* the sleep, and its sh unless it exec'd */
	assert_non_null(strstr(strbuf_str(&res.leftover_names), "sleep("));
	hostexec_result_release(&res);
}

/*
 * A client tool (sbatch) may hand work to a daemon of its own: waited for,
 * not counted, not ended; its own process group still is, once the tool has
 * ended (promptly: not at the timeout, though the group's job holds stdout).
 */
static void test_client_daemon_is_not_ours(void **state)
{
	struct strbuf s = STRBUF_INIT;
	strbuf_addf(&s, "setsid sleep %s </dev/null >/dev/null 2>&1 & sleep %s1 & echo queued",
		    mark, mark);
	char *argv[] = { "sh", "-c", s.buf, NULL };
	struct hostexec_result res;
	struct ta_err err = { 0 };
	double t0 = mono_now_s();
	assert_int_equal(hostexec_run_client(argv, 30, &res, &err), 0);
	assert_true(mono_now_s() - t0 < 20);
	strbuf_release(&s);
	assert_false(res.timed_out);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.leftovers, 0);
	assert_string_equal(strbuf_str(&res.out), "queued\n");
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "pgrep -f '^sleep %s$' >/dev/null", mark);
	assert_int_equal(system(cmd), 0);	/* the daemon goes on */
	snprintf(cmd, sizeof(cmd), "pgrep -f '^sleep %s1$' >/dev/null", mark);
	assert_int_not_equal(system(cmd), 0);	/* its group's job did not */
	hostexec_result_release(&res);
}

/* A command that waits for what it starts leaves nothing. */
static void test_clean_command(void **state)
{
	struct hostexec_result res;
	run_sh("sleep 0.2 & wait; echo ok", 10, NULL, &res);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.leftovers, 0);
	assert_int_equal(res.leftover_names.len, 0);
	hostexec_result_release(&res);
}

/* Timeouts hold whatever the command does with its descriptors and signals. */
static void check_times_out(const char *script)
{
	struct hostexec_result res;
	double t0 = mono_now_s();
	run_sh(script, 1, NULL, &res);
	double took = mono_now_s() - t0;
	assert_true(res.timed_out);
	assert_true(took >= 1 && took < 30);
	struct strbuf sb = STRBUF_INIT;
	hostexec_describe(&res, 1, &sb);
	assert_string_equal(sb.buf, "timed out after 1 s");
	strbuf_release(&sb);
	hostexec_result_release(&res);
}

static void test_timeout_setsid_child_holds_stdout(void **state)
{
	check_times_out("setsid sleep M & exec sleep M");
}

static void test_timeout_closed_descriptors(void **state)
{
	check_times_out("exec >&- 2>&-; exec sleep M");
}

static void test_timeout_sigterm_ignored(void **state)
{
	check_times_out("trap '' TERM; sleep M; sleep M");
}

static volatile sig_atomic_t cancel_flag;

static void on_alarm(int sig)
{
	cancel_flag = sig;
}

/* A cancel (the controller's SIGINT/SIGTERM) ends it promptly. */
static void test_cancel(void **state)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	cancel_flag = 0;
	struct itimerval it = { { 0, 0 }, { 0, 300000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	struct hostexec_result res;
	double t0 = mono_now_s();
	run_sh("setsid sleep M & exec >&- 2>&-; exec sleep M", 0, &cancel_flag, &res);
	assert_true(mono_now_s() - t0 < 30);
	assert_true(res.cancelled);
	sigaction(SIGALRM, &old, NULL);
	alarm(120);
	hostexec_result_release(&res);
}

/*
 * Output beyond the cap: its head and its last MiB kept (from a whole line
 * on: a result printed last survives any amount of output), what was
 * between counted in bytes and lines.
 */
static void test_output_cut(void **state)
{
	struct hostexec_result res;
	size_t total = HOSTEXEC_OUTPUT_CAP + 3000000;
	char script[160];
	snprintf(script, sizeof(script), "head -c %zu /dev/zero | tr '\\0' '\\n'; "
		 "echo 'throughput: 5 ops/s'; echo tail >&2", total);
	run_sh(script, 60, NULL, &res);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.out.len, HOSTEXEC_OUTPUT_CAP);
	const char *last = "\nthroughput: 5 ops/s\n";
	assert_memory_equal(res.out.buf + res.out.len - strlen(last), last, strlen(last));
	assert_int_equal(res.out_dropped, 3000000 + strlen(last) - 1);
	assert_int_equal(res.out_dropped_lines, 3000000 + strlen(last) - 1);	/* all "\n" */
	assert_int_equal(res.errout_dropped, 0);
	assert_string_equal(strbuf_str(&res.errout), "tail\n");
	struct strbuf sb = STRBUF_INIT;
	hostexec_describe_cut("stdout", res.out_dropped, res.out_dropped_lines, &sb);
	assert_string_equal(sb.buf, "stdout was cut at the 64 MiB limit: 2.9 MiB "
			    "(3000020 lines) were dropped before its last 1 MiB");
	strbuf_release(&sb);
	hostexec_result_release(&res);
}

/* No descriptor of ours reaches the command, whatever its flags; stdin is /dev/null. */
static void test_no_stray_descriptors(void **state)
{
	int fd = open("/dev/null", O_RDONLY);	/* no O_CLOEXEC, as a library might */
	assert_true(fd >= 0);
	int high = fcntl(fd, F_DUPFD, 50);
	assert_true(high >= 50);
	char script[160];
	snprintf(script, sizeof(script), "for n in 0 1 2 %d %d; do [ -e /proc/$$/fd/$n ] && "
		 "echo $n; done; read x || echo eof", fd, high);
	struct hostexec_result res;
	run_sh(script, 10, NULL, &res);
	close(fd);
	close(high);
	assert_string_equal(strbuf_str(&res.out), "0\n1\n2\neof\n");
	hostexec_result_release(&res);
}

/* A program that cannot be run: an error, and nothing of it left (its cgroup neither). */
static void test_cannot_run(void **state)
{
	char *argv[] = { "/nonexistent/topoadvisor-test-program", NULL };
	struct hostexec_result res;
	struct ta_err err = { 0 };
	assert_int_equal(hostexec_run(argv, NULL, 5, NULL, &res, &err), -1);
	assert_non_null(strstr(err.msg, "cannot run"));
	hostexec_result_release(&res);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_leftover_holding_stdout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftover_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_daemon_is_not_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_setsid_child_holds_stdout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_timeout_closed_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_sigterm_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_stray_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cannot_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftover_holding_stdout, setup_no_cgroup,
						teardown),
		cmocka_unit_test_setup_teardown(test_leftover_daemon, setup_no_cgroup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_command, setup_no_cgroup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_setsid_child_holds_stdout,
						setup_no_cgroup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_closed_descriptors, setup_no_cgroup,
						teardown),
		cmocka_unit_test_setup_teardown(test_timeout_sigterm_ignored, setup_no_cgroup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup_no_cgroup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
