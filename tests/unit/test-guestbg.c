/*
 * The scripts guestbg runs inside the measured guest (experiments/guestbg.h),
 * run here by the same busybox sh the test guest image carries, on the host
 * CPUs: start pins and detaches a load, reports one that cannot run with
 * its stderr, stop names a load that had ended and gets rid of one that
 * ignores SIGTERM and of the children it started.  This test process is a
 * child subreaper, so the loads' orphans are reaped here and no zombie is
 * left behind.  The real guest path is tests/integration/workloads-ebizzy.sh.
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/guestbg.h"
#include "util/strbuf.h"

static const char *busybox;

/* Runs `busybox sh -c script sh args...`, capturing stdout and stderr. */
static int sh_run(const char *script, const char *const *args, struct strbuf *out,
		  struct strbuf *err)
{
	char outf[] = "/tmp/ta-test-guestbg-out.XXXXXX", errf[] = "/tmp/ta-test-guestbg-err.XXXXXX";
	int ofd = mkstemp(outf), efd = mkstemp(errf);
	assert_true(ofd >= 0 && efd >= 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *argv[32] = { busybox, "sh", "-c", script, "sh" };
		size_t n = 5;
		for (size_t i = 0; args[i] && n < 31; i++)
			argv[n++] = args[i];
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(busybox, (char *const *)argv);
		_exit(127);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	strbuf_reset(out);
	strbuf_reset(err);
	char buf[4096];
	ssize_t r;
	lseek(ofd, 0, SEEK_SET);
	while ((r = read(ofd, buf, sizeof(buf))) > 0)
		strbuf_add(out, buf, (size_t)r);
	lseek(efd, 0, SEEK_SET);
	while ((r = read(efd, buf, sizeof(buf))) > 0)
		strbuf_add(err, buf, (size_t)r);
	close(ofd);
	close(efd);
	unlink(outf);
	unlink(errf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A process that exists and is not a zombie (reaping the zombies that are ours). */
static int running(pid_t pid)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int alive = fgets(line, sizeof(line), f) && strrchr(line, ')') &&
		    strrchr(line, ')')[2] != 'Z';
	fclose(f);
	return alive;
}

static int setup(void **state)
{
	static const char *const where[] = { "/usr/bin/busybox", "/bin/busybox", NULL };
	for (size_t i = 0; where[i] && !busybox; i++)
		if (access(where[i], X_OK) == 0)
			busybox = where[i];
	return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -1;
}

static void test_start_check_stop(void **state)
{
	if (!busybox) {
		print_message("skip: busybox is not installed (scripts/deps.sh check)\n");
		skip();
	}
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	const char *spin[] = { "0", "sh", "-c", "while :; do :; done", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, spin, &out, &err), 0);
	int pid = 0;
	char errfile[256];
	assert_int_equal(sscanf(strbuf_str(&out), "%d %255s", &pid, errfile), 2);
	assert_true(running(pid));
	assert_int_equal(getpgid(pid), pid);		/* its own process group */
	cpu_set_t mask;
	assert_int_equal(sched_getaffinity(pid, sizeof(mask), &mask), 0);
	assert_int_equal(CPU_COUNT(&mask), 1);		/* taskset -c 0 */
	assert_true(CPU_ISSET(0, &mask));
	assert_int_equal(access(errfile, F_OK), 0);

	/* A load that ignores SIGTERM and has a child of its own. */
	const char *stubborn[] = { "-", "sh", "-c", "trap '' TERM; sleep 1000 & wait; sleep 1000", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, stubborn, &out, &err), 0);
	int pid2 = 0;
	char errfile2[256];
	assert_int_equal(sscanf(strbuf_str(&out), "%d %255s", &pid2, errfile2), 2);
	assert_true(running(pid2));

	char p1[16], p2[16];
	snprintf(p1, sizeof(p1), "%d", pid);
	snprintf(p2, sizeof(p2), "%d", pid2);
	/* A third load that ends by itself: the stop names it and quotes its
	 * stderr on stdout (the check), and no load that was still running. */
	const char *brief[] = { "-", "sh", "-c", "sleep 0.6; echo gave up >&2", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, brief, &out, &err), 0);
	int pid3 = 0;
	char errfile3[256];
	assert_int_equal(sscanf(strbuf_str(&out), "%d %255s", &pid3, errfile3), 2);
	while (running(pid3))
		usleep(50000);
	char p3[16];
	snprintf(p3, sizeof(p3), "%d", pid3);

	const char *stop[] = { "3", p1, errfile, p2, errfile2, p3, errfile3, NULL };
	assert_int_equal(sh_run(GUESTBG_STOP_SCRIPT, stop, &out, &err), 0);
	char want[64];
	snprintf(want, sizeof(want), "%s: gave up", p3);
	assert_non_null(strstr(strbuf_str(&out), want));
	snprintf(want, sizeof(want), "%s:", p1);
	assert_null(strstr(strbuf_str(&out), want));
	snprintf(want, sizeof(want), "%s:", p2);
	assert_null(strstr(strbuf_str(&out), want));
	assert_false(running(pid));
	assert_false(running(pid2));
	/* Nothing of either group survives, the sleeping child included. */
	for (int tries = 0; tries < 50 && kill(-pid2, 0) == 0; tries++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep(20000);
	}
	assert_int_equal(kill(-pid2, 0), -1);
	assert_int_equal(errno, ESRCH);
	assert_int_equal(access(errfile, F_OK), -1);
	assert_int_equal(access(errfile2, F_OK), -1);
	strbuf_release(&out);
	strbuf_release(&err);
}

static void test_start_failure_quotes_stderr(void **state)
{
	if (!busybox)
		skip();
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	const char *missing[] = { "-", "no-such-program-here", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, missing, &out, &err), 1);
	assert_non_null(strstr(strbuf_str(&err), "no-such-program-here"));
	assert_int_equal(out.len, 0);
	const char *badcpu[] = { "4095", "sleep", "100", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, badcpu, &out, &err), 1);
	assert_true(err.len > 0);
	strbuf_release(&out);
	strbuf_release(&err);
}

/* Processes running `sleep 4242`: what the multi-start test leaves (should be none). */
static int count_sleep_4242(void)
{
	int n = 0;
	char path[300], cmd[64];
	DIR *d = opendir("/proc");
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		int pid = atoi(e->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		size_t len = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[len] = '\0';
		size_t first = strlen(cmd);
		if (first + 1 < len && !strcmp(cmd + first + 1, "4242") && running(pid))
			n++;
	}
	closedir(d);
	return n;
}

/* One call starts a copy per CPU set; when one copy cannot run, none is left. */
static void test_start_several(void **state)
{
	if (!busybox)
		skip();
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	const char *two[] = { "0 -", "sleep", "4242", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, two, &out, &err), 0);
	int p1, p2;
	char e1[256], e2[256];
	assert_int_equal(sscanf(strbuf_str(&out), "%d %255s %d %255s", &p1, e1, &p2, e2), 4);
	assert_true(p1 != p2 && strcmp(e1, e2));
	assert_true(running(p1) && running(p2));
	assert_int_equal(count_sleep_4242(), 2);
	char s1[16], s2[16];
	snprintf(s1, sizeof(s1), "%d", p1);
	snprintf(s2, sizeof(s2), "%d", p2);
	const char *stop[] = { "5", s1, e1, s2, e2, NULL };
	assert_int_equal(sh_run(GUESTBG_STOP_SCRIPT, stop, &out, &err), 0);
	assert_int_equal(count_sleep_4242(), 0);

	const char *half[] = { "0 4095", "sleep", "4242", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, half, &out, &err), 1);
	assert_int_equal(out.len, 0);
	for (int i = 0; i < 50 && count_sleep_4242(); i++)
		usleep(20000);
	assert_int_equal(count_sleep_4242(), 0);
	strbuf_release(&out);
	strbuf_release(&err);
}

/*
 * A name busybox also has as an applet runs the PATH's program, as it would
 * from a shell: the guest image's `ping` must be iputils' (with -f).
 */
static void test_path_before_applets(void **state)
{
	if (!busybox)
		skip();
	const char *where = access("/usr/bin/sleep", X_OK) == 0 ? "/usr/bin/sleep"
			    : access("/bin/sleep", X_OK) == 0 ? "/bin/sleep" : NULL;
	if (!where) {
		print_message("skip: no sleep program besides busybox's applet\n");
		skip();
	}
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	const char *args[] = { "0", "sleep", "100", NULL };
	assert_int_equal(sh_run(GUESTBG_START_SCRIPT, args, &out, &err), 0);
	int pid = 0;
	char errfile[256], exe[256], path[64], pidtext[16];
	assert_int_equal(sscanf(strbuf_str(&out), "%d %255s", &pid, errfile), 2);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	char real[256];
	assert_non_null(realpath(where, real));
	assert_string_equal(exe, real);
	snprintf(pidtext, sizeof(pidtext), "%d", pid);
	const char *stop[] = { "5", pidtext, errfile, NULL };
	assert_int_equal(sh_run(GUESTBG_STOP_SCRIPT, stop, &out, &err), 0);
	assert_false(running(pid));
	strbuf_release(&out);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_check_stop),
		cmocka_unit_test(test_start_failure_quotes_stderr),
		cmocka_unit_test(test_path_before_applets),
		cmocka_unit_test(test_start_several),
	};
	return cmocka_run_group_tests_name("guestbg", tests, setup, NULL);
}
