/*
 * Pure parsers of the guest side: the guest's sysfs topology (as printed by
 * GUESTTOPO_SCRIPT), guest-exec requests and guest-exec-status replies, and
 * the vCPU stats window arithmetic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "collectors/guesttopo.h"
#include "collectors/vcpustats.h"
#include "experiments/agent.h"

/* What a 1x1x2 guest printed (taken from a real TCG boot). */
static const char seen_1x1x2[] =
	"cpu0 physical_package_id 0\ncpu0 die_id 0\ncpu0 core_id 0\n"
	"cpu0 thread_siblings_list 0-1\n"
	"cpu1 physical_package_id 0\ncpu1 die_id 0\ncpu1 core_id 0\n"
	"cpu1 thread_siblings_list 0-1\n";

/* 2 sockets x 2 cores x 2 threads, listed out of order, no die_id (old kernel). */
static const char seen_2x2x2[] =
	"cpu4 physical_package_id 1\ncpu4 core_id 0\ncpu4 thread_siblings_list 4-5\n"
	"cpu0 physical_package_id 0\ncpu0 core_id 0\ncpu0 thread_siblings_list 0-1\n"
	"cpu1 physical_package_id 0\ncpu1 core_id 0\ncpu1 thread_siblings_list 0-1\n"
	"cpu2 physical_package_id 0\ncpu2 core_id 1\ncpu2 thread_siblings_list 2,3\n"
	"cpu3 physical_package_id 0\ncpu3 core_id 1\ncpu3 thread_siblings_list 2,3\n"
	"cpu5 physical_package_id 1\ncpu5 core_id 0\ncpu5 thread_siblings_list 4-5\n"
	"cpu6 physical_package_id 1\ncpu6 core_id 1\ncpu6 thread_siblings_list 6-7\n"
	"cpu7 physical_package_id 1\ncpu7 core_id 1\ncpu7 thread_siblings_list 6-7";

static void test_topo_parse(void **state)
{
	struct guesttopo t;
	struct ta_err err = { 0 };
	assert_int_equal(guesttopo_parse(seen_1x1x2, &t, &err), 0);
	assert_int_equal(t.ncpus, 2);
	assert_true(t.regular);
	assert_int_equal(t.sockets, 1);
	assert_int_equal(t.cores, 1);
	assert_int_equal(t.threads, 2);
	assert_int_equal(guesttopo_compare(&t, 1, 0, 1, 2, &err), 0);
	/* The classic confusion: 2 threads of one core are not 2 cores. */
	assert_int_equal(guesttopo_compare(&t, 1, 1, 2, 1, &err), -1);
	assert_non_null(strstr(err.msg, "TOPOLOGY MISMATCH"));
	assert_non_null(strstr(err.msg, "requested 1x1x2x1"));
	assert_non_null(strstr(err.msg, "sees 1x1x1x2"));
	struct strbuf js = STRBUF_INIT;
	guesttopo_json(&t, &js);
	assert_string_equal(js.buf,
			    "{\"regular\":true,\"sockets\":1,\"dies\":1,\"cores\":1,\"threads\":2,"
			    "\"cpus\":[{\"cpu\":0,\"package\":0,\"die\":0,\"core\":0,"
			    "\"thread_siblings\":\"0-1\"},{\"cpu\":1,\"package\":0,\"die\":0,"
			    "\"core\":0,\"thread_siblings\":\"0-1\"}]}");
	strbuf_release(&js);
	guesttopo_release(&t);

	assert_int_equal(guesttopo_parse(seen_2x2x2, &t, &err), 0);
	assert_int_equal(t.ncpus, 8);
	assert_int_equal(t.cpus[0].cpu, 0);
	assert_int_equal(t.cpus[7].cpu, 7);
	assert_int_equal(t.cpus[0].die, -1);
	assert_int_equal(guesttopo_compare(&t, 2, 1, 2, 2, &err), 0);
	assert_int_equal(guesttopo_compare(&t, 1, 1, 4, 2, &err), -1);
	guesttopo_release(&t);
}

static void test_topo_irregular_and_bad(void **state)
{
	struct guesttopo t;
	struct ta_err err = { 0 };
	/* cpu2 alone on its core while the others pair up: no regular shape. */
	const char *odd = "cpu0 physical_package_id 0\ncpu0 core_id 0\n"
			  "cpu0 thread_siblings_list 0-1\n"
			  "cpu1 physical_package_id 0\ncpu1 core_id 0\n"
			  "cpu1 thread_siblings_list 0-1\n"
			  "cpu2 physical_package_id 0\ncpu2 core_id 1\n"
			  "cpu2 thread_siblings_list 2\n";
	assert_int_equal(guesttopo_parse(odd, &t, &err), 0);
	assert_false(t.regular);
	assert_int_equal(guesttopo_compare(&t, 1, 1, 3, 1, &err), -1);
	assert_non_null(strstr(err.msg, "no regular shape"));
	guesttopo_release(&t);

	assert_int_equal(guesttopo_parse("", &t, &err), -1);
	assert_non_null(strstr(err.msg, "no CPUs"));
	assert_int_equal(guesttopo_parse("garbage here\n", &t, &err), -1);
	assert_non_null(strstr(err.msg, "line 1"));
	assert_int_equal(guesttopo_parse("cpu0 core_id 0\n", &t, &err), -1);
	assert_non_null(strstr(err.msg, "cpu0 lacks"));
	assert_int_equal(guesttopo_parse("cpu0 physical_package_id 0\ncpu0 core_id 0\n"
					 "cpu0 thread_siblings_list 0-x\n", &t, &err), -1);
}

/*
 * The script itself, run by this host's /bin/sh on its own sysfs: every
 * online CPU with all four files (thread_siblings_list too, which a
 * byte-at-a-time reader gets nothing from) parses into a shape.
 */
static void test_topo_script_on_this_host(void **state)
{
	if (access("/sys/devices/system/cpu/cpu0/topology/core_id", R_OK) < 0)
		skip();
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		execl("/bin/sh", "sh", "-c", GUESTTOPO_SCRIPT, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	struct strbuf out = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd[0], buf, sizeof(buf))) > 0)
		strbuf_add(&out, buf, (size_t)n);
	close(fd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct guesttopo t;
	struct ta_err err = { 0 };
	if (guesttopo_parse(strbuf_str(&out), &t, &err) < 0)
		fail_msg("%s in:\n%s", err.msg, strbuf_str(&out));
	assert_int_equal(t.ncpus, sysconf(_SC_NPROCESSORS_ONLN));
	for (size_t i = 0; i < t.ncpus; i++)
		assert_true(t.cpus[i].siblings && t.cpus[i].nsiblings >= 1);
	assert_true(t.sockets * t.dies * t.cores * t.threads == (int)t.ncpus || !t.regular);
	guesttopo_release(&t);
	strbuf_release(&out);
}

/*
 * When agent_exec looks again: sparse while a command should still run
 * (never past its expected end), dense from just before it, slower the
 * later it runs; a command of unknown length is looked at densely first.
 */
static void test_agent_poll_schedule(void **state)
{
	static const struct { double elapsed, expect; int ms; } cases[] = {
		{ 0, 0, 10 }, { 0.04, 0, 10 }, { 0.1, 0, 25 }, { 0.4, 0, 100 }, { 1.0, 0, 200 },
		{ 60, 0, 200 },
		{ 0, 3, 10 }, { 0.1, 3, 50 }, { 0.5, 3, 250 }, { 1.0, 3, 500 }, { 2.0, 3, 500 },
		{ 2.8, 3, 150 }, { 2.94, 3, 10 }, { 2.95, 3, 10 }, { 3.05, 3, 25 }, { 3.35, 3, 100 },
		{ 10, 3, 200 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = agent_poll_delay_ms(cases[i].elapsed, cases[i].expect);
		if (got != cases[i].ms)
			fail_msg("elapsed %.2f s, expected %.0f s: %d ms, not %d", cases[i].elapsed,
				 cases[i].expect, got, cases[i].ms);
	}
	/* A 3 s benchmark is looked at 17 times while it runs (60 every 50 ms before). */
	int polls = 0;
	for (double t = 0; t < 3 - AGENT_POLL_AHEAD_S; t += agent_poll_delay_ms(t, 3) / 1000.0)
		polls++;
	assert_int_equal(polls, 17);
}

/* guest-get-vcpus: the online CPUs a reused guest still has (its re-check). */
static void test_agent_vcpus(void **state)
{
	struct ta_err err = { 0 };
	assert_int_equal(agent_vcpus_parse("{\"return\":[{\"online\":true,\"can-offline\":false,"
		"\"logical-id\":0},{\"online\":false,\"can-offline\":true,\"logical-id\":1},"
		"{\"online\":true,\"can-offline\":true,\"logical-id\":2}]}", &err), 2);
	assert_int_equal(agent_vcpus_parse("{\"return\":[]}", &err), 0);
	assert_int_equal(agent_vcpus_parse("{\"return\":{}}", &err), -1);
	assert_non_null(strstr(err.msg, "guest-get-vcpus"));
	assert_int_equal(agent_vcpus_parse("{\"error\":{\"class\":\"GenericError\"}}", &err), -1);
	assert_int_equal(agent_vcpus_parse("not json", &err), -1);
}

static void test_agent_request(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "echo \"a\\b\"", NULL };
	struct strbuf sb = STRBUF_INIT;
	agent_exec_request(&sb, argv);
	assert_string_equal(sb.buf,
			    "{\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"/bin/sh\","
			    "\"arg\":[\"-c\",\"echo \\\"a\\\\b\\\"\"],\"capture-output\":true}}");
	strbuf_release(&sb);
}

static void test_agent_status(void **state)
{
	struct agent_result r = { 0 };
	struct ta_err err = { 0 };
	assert_int_equal(agent_status_parse("{\"return\":{\"exited\":false}}", &r, &err), 0);
	/* "hello\n" and "oops" in base64, as qemu-ga sends them. */
	assert_int_equal(agent_status_parse("{\"return\":{\"exitcode\":3,\"out-data\":"
					    "\"aGVsbG8K\",\"err-data\":\"b29wcw==\","
					    "\"out-truncated\":true,\"exited\":true}}",
					    &r, &err), 1);
	assert_int_equal(r.exitcode, 3);
	assert_int_equal(r.signal, 0);
	assert_string_equal(r.out, "hello\n");
	assert_int_equal(r.out_len, 6);
	assert_string_equal(r.err, "oops");
	assert_true(r.out_truncated);
	assert_false(r.err_truncated);
	/* Killed by a signal: no exitcode member. */
	assert_int_equal(agent_status_parse("{\"return\":{\"signal\":9,\"exited\":true}}", &r,
					    &err), 1);
	assert_int_equal(r.exitcode, -1);
	assert_int_equal(r.signal, 9);
	assert_string_equal(r.out, "");
	agent_result_release(&r);
	assert_int_equal(agent_status_parse("{\"error\":{\"class\":\"GenericError\"}}", &r, &err),
			 -1);
	assert_non_null(strstr(err.msg, "unexpected reply"));
	assert_int_equal(agent_status_parse("not json", &r, &err), -1);
	agent_result_release(&r);
}

static void test_vcpustats_diff(void **state)
{
	uint64_t t1[] = { 100, 200 }, d1[] = { 10, 20 };
	uint64_t t2[] = { 150, 190 }, d2[] = { 15, 40 };
	struct vcpustats a = { 2, t1, d1, true }, b = { 2, t2, d2, true }, d;
	struct ta_err err = { 0 };
	assert_int_equal(vcpustats_diff(&a, &b, &d, &err), 0);
	assert_int_equal(d.time_ns[0], 50);
	assert_int_equal(d.time_ns[1], 0);	/* went backwards: not a huge number */
	assert_int_equal(d.delay_ns[1], 20);
	vcpustats_release(&d);
	b.has_delay = false;
	assert_int_equal(vcpustats_diff(&a, &b, &d, &err), 0);
	assert_false(d.has_delay);
	assert_int_equal(d.delay_ns[0], 0);
	struct strbuf js = STRBUF_INIT;
	vcpustats_json(&d, &js);
	assert_string_equal(js.buf, "{\"has_delay\":false,\"vcpus\":[{\"time_ns\":50,\"delay_ns\":"
				    "null},{\"time_ns\":0,\"delay_ns\":null}]}");
	strbuf_release(&js);
	vcpustats_release(&d);
	b.n = 1;
	assert_int_equal(vcpustats_diff(&a, &b, &d, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topo_parse),
		cmocka_unit_test(test_topo_irregular_and_bad),
		cmocka_unit_test(test_topo_script_on_this_host),
		cmocka_unit_test(test_agent_poll_schedule),
		cmocka_unit_test(test_agent_vcpus),
		cmocka_unit_test(test_agent_request),
		cmocka_unit_test(test_agent_status),
		cmocka_unit_test(test_vcpustats_diff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
