/*
 * The parsers against the benchmarks installed on this machine, run for a
 * second each: the fixtures pin the formats we know, this catches a newer
 * tool version (a CI image, a guest) that prints something else.  A tool
 * that is not installed is skipped with the reason; the redis server it
 * starts is stopped by pid in the teardown, also when a check fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/benchparse.h"
#include "util/strbuf.h"

static bool tool_missing(const char *name)
{
	const char *path = getenv("PATH");
	struct strbuf dirs = STRBUF_INIT, f = STRBUF_INIT;
	strbuf_addstr(&dirs, path ? path : "/usr/bin:/bin");
	bool found = false;
	for (char *save, *d = strtok_r(dirs.buf, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		strbuf_reset(&f);
		strbuf_addf(&f, "%s/%s", d, name);
		found = access(strbuf_str(&f), X_OK) == 0;
	}
	strbuf_release(&dirs);
	strbuf_release(&f);
	if (!found)
		print_message("skip: %s is not installed (scripts/deps.sh check installs it)\n", name);
	return !found;
}

/*
 * Runs argv to completion with stdout and stderr captured; kills it after
 * timeout_s.  Returns the exit status, or -1 after a kill.
 */
static int run_capture(char *const argv[], struct strbuf *out, struct strbuf *err, int timeout_s)
{
	int po[2], pe[2];
	assert_int_equal(pipe2(po, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	struct pollfd fds[2] = { { .fd = po[0], .events = POLLIN }, { .fd = pe[0], .events = POLLIN } };
	struct strbuf *sinks[2] = { out, err };
	int open_fds = 2;
	time_t deadline = time(NULL) + timeout_s;
	bool killed = false;
	while (open_fds) {
		int left = (int)(deadline - time(NULL)), ready = 0;
		if (left > 0) {
			ready = poll(fds, 2, left * 1000);
			if (ready < 0 && errno == EINTR)
				continue;
		}
		if (ready <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			char buf[4096];
			ssize_t n = read(fds[i].fd, buf, sizeof(buf));
			if (n > 0) {
				strbuf_add(sinks[i], buf, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status;
	waitpid(pid, &status, 0);
	return killed ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void parse_live(enum bench_kind kind, const struct strbuf *out, const struct strbuf *err,
		       struct bench_metrics *m)
{
	struct ta_err e = { 0 };
	memset(m, 0, sizeof(*m));
	if (benchparse_run(kind, NULL, out->buf, out->len, err->buf, err->len, m, &e))
		fail_msg("this machine's tool output does not parse: %s\n--- stdout:\n%s\n--- stderr:\n%s",
			 e.msg, strbuf_str(out), strbuf_str(err));
}

static double positive(const struct bench_metrics *m, const char *name)
{
	const struct bench_metric *bm = bench_metrics_find(m, name);
	if (!bm)
		fail_msg("metric %s missing", name);
	if (!(bm->value > 0))
		fail_msg("metric %s = %g, expected > 0", name, bm->value);
	return bm->value;
}

static void test_stress_ng(void **state)
{
	if (tool_missing("stress-ng"))
		skip();
	char *argv[] = { "stress-ng", "--cpu", "1", "--timeout", "1s", "--metrics-brief", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	assert_int_equal(run_capture(argv, &out, &err, 30), 0);
	struct bench_metrics m;
	parse_live(BENCH_STRESS_NG, &out, &err, &m);
	assert_int_equal(m.n, 2);
	assert_true(positive(&m, "bogo_ops_per_s") == positive(&m, "stress-ng.cpu.bogo_ops_per_s"));
	bench_metrics_release(&m);
	strbuf_release(&out);
	strbuf_release(&err);
}

static void test_sysbench(void **state)
{
	if (tool_missing("sysbench"))
		skip();
	char *argv[] = { "sysbench", "cpu", "--time=1", "run", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	assert_int_equal(run_capture(argv, &out, &err, 30), 0);
	struct bench_metrics m;
	parse_live(BENCH_SYSBENCH, &out, &err, &m);
	positive(&m, "events_per_s");
	double avg = positive(&m, "latency_avg_ms"), max = positive(&m, "latency_max_ms");
	assert_true(avg <= max);
	assert_non_null(bench_metrics_find(&m, "latency_p95_ms"));
	bench_metrics_release(&m);
	strbuf_release(&out);
	strbuf_release(&err);
}

static void test_time(void **state)
{
	if (tool_missing("bash"))
		skip();
	/* A little CPU work so that user time is not always 0. */
	char *argv[] = { "bash", "-c", "time (i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done)", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	assert_int_equal(run_capture(argv, &out, &err, 30), 0);
	struct bench_metrics m;
	parse_live(BENCH_KERNEL_BUILD, &out, &err, &m);
	assert_int_equal(m.n, 3);
	positive(&m, "real_s");
	bench_metrics_release(&m);
	strbuf_release(&out);
	strbuf_release(&err);
	if (access("/usr/bin/time", X_OK) == 0) {
		char *gnu[] = { "/usr/bin/time", "-v", "sleep", "0.2", NULL };
		assert_int_equal(run_capture(gnu, &out, &err, 30), 0);
		parse_live(BENCH_KERNEL_BUILD, &out, &err, &m);
		assert_true(positive(&m, "real_s") >= 0.19);
		bench_metrics_release(&m);
		strbuf_release(&out);
		strbuf_release(&err);
	}
}

/* The redis server this test started, stopped by the teardown. */
static pid_t redis_pid = -1;

static int redis_stop(void **state)
{
	if (redis_pid > 0) {
		kill(redis_pid, SIGTERM);
		waitpid(redis_pid, NULL, 0);
		redis_pid = -1;
	}
	return 0;
}

static bool port_answers(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bool ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

static void test_redis(void **state)
{
	if (tool_missing("redis-server") || tool_missing("redis-benchmark"))
		skip();
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	int port = 0;
	for (int tries = 0; tries < 20 && !port; tries++) {
		int p = 20000 + rand() % 40000;
		if (!port_answers(p))
			port = p;
	}
	assert_true(port > 0);
	char portarg[16];
	snprintf(portarg, sizeof(portarg), "%d", port);
	redis_pid = fork();
	assert_true(redis_pid >= 0);
	if (redis_pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execlp("redis-server", "redis-server", "--port", portarg, "--bind", "127.0.0.1",
		       "--save", "", "--appendonly", "no", "--dir", "/tmp", (char *)NULL);
		_exit(127);
	}
	/* Wait until it answers: redis-benchmark without a server never exits. */
	for (int i = 0; i < 100 && !port_answers(port); i++)
		usleep(50 * 1000);
	if (!port_answers(port))
		fail_msg("redis-server on port %d did not answer within 5 s", port);
	static const char *const modes[] = { "-q", "--csv" };
	for (int k = 0; k < 2; k++) {
		char *argv[] = { "redis-benchmark", "-h", "127.0.0.1", "-p", portarg, (char *)modes[k],
				 "-n", "2000", "-t", "set,get,mset", NULL };
		struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
		assert_int_equal(run_capture(argv, &out, &err, 60), 0);
		struct bench_metrics m;
		parse_live(BENCH_REDIS, &out, &err, &m);
		double set = positive(&m, "redis.SET"), get = positive(&m, "redis.GET");
		double mset = positive(&m, "redis.MSET_10_keys");
		double gm = cbrt(set * get * mset);
		assert_true(fabs(positive(&m, "requests_per_s") - gm) <= 1e-9 * gm);
		bench_metrics_release(&m);
		strbuf_release(&out);
		strbuf_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress_ng),
		cmocka_unit_test(test_sysbench),
		cmocka_unit_test(test_time),
		cmocka_unit_test_teardown(test_redis, redis_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
