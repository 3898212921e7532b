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
#include <regex.h>
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

/* Lines of s (up to and without "\n") matching the ERE pattern. */
static size_t lines_matching(const char *s, const char *pattern)
{
	regex_t re;
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0);
	size_t n = 0;
	for (const char *l = s; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char *line = strndup(l, len);
		n += regexec(&re, line, 0, NULL, 0) == 0;
		free(line);
		l += len + (nl != NULL);
	}
	regfree(&re);
	return n;
}

static void fixture_text(const char *rel, struct strbuf *sb)
{
	const char *top = getenv("TA_TOP");
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/fixtures/bench/%s", top ? top : ".", rel);
	FILE *f = fopen(path, "re");
	if (!f)
		fail_msg("cannot open %s", path);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(sb, buf, n);
	fclose(f);
}

/* ebizzy 0.3's result lines ("%u records/s", "real %5.2f s", ...), and -vv's thread lines. */
#define EBIZZY_RATE "^[0-9]+ records/s$"
/* %5.2f: at least five characters, so " 1.00" and "10.00" */
#define EBIZZY_TIMES "^(real|user|sys ) ( [0-9]|[0-9]{2,})\\.[0-9]{2} s$"
#define EBIZZY_THREAD "^\\[[0-9a-f]+\\]Thread finished, [0-9]+\\.[0-9]{6} seconds [0-9]+ records$"

/*
 * The guest image's ebizzy stand-in (experiments/guest-tools/ebizzy.c):
 * its output has the real ebizzy 0.3's lines, checked against the same
 * patterns as the fixtures captured from the real program's format, and
 * the one ebizzy parser reads it.
 */
static void test_ebizzy_standin(void **state)
{
	const char *build = getenv("TA_BUILD");
	char prog[1024];
	snprintf(prog, sizeof(prog), "%s/guest-tools/ebizzy", build ? build : "build");
	if (access(prog, X_OK))
		fail_msg("%s is missing: `make units` builds it", prog);

	struct strbuf fx = STRBUF_INIT;
	fixture_text("ebizzy/0.3-default.out", &fx);
	assert_int_equal(lines_matching(strbuf_str(&fx), EBIZZY_RATE), 1);
	assert_int_equal(lines_matching(strbuf_str(&fx), EBIZZY_TIMES), 3);
	strbuf_reset(&fx);
	fixture_text("ebizzy/0.3-verbose.out", &fx);
	assert_int_equal(lines_matching(strbuf_str(&fx), EBIZZY_THREAD), 2);
	strbuf_release(&fx);

	char *argv[] = { prog, "-t", "2", "-S", "1", "-s", "65536", "-n", "4", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	assert_int_equal(run_capture(argv, &out, &err, 30), 0);
	assert_int_equal(lines_matching(strbuf_str(&out), "."), 4);
	assert_int_equal(lines_matching(strbuf_str(&out), EBIZZY_RATE), 1);
	assert_int_equal(lines_matching(strbuf_str(&out), EBIZZY_TIMES), 3);
	struct bench_metrics m;
	parse_live(BENCH_EBIZZY, &out, &err, &m);
	positive(&m, "records_per_s");
	assert_true(positive(&m, "real_s") >= 0.99);	/* it ran for -S 1 */
	assert_true(bench_metrics_find(&m, "runs")->value == 1);
	bench_metrics_release(&m);

	/* -vv: one start and one end line per thread; the ends add up to the rate. */
	char *verbose[] = { prog, "-vv", "-t", "3", "-S", "1", "-s", "65536", "-n", "4", NULL };
	strbuf_reset(&out);
	strbuf_reset(&err);
	assert_int_equal(run_capture(verbose, &out, &err, 30), 0);
	assert_int_equal(lines_matching(strbuf_str(&out), EBIZZY_THREAD), 3);
	assert_int_equal(lines_matching(strbuf_str(&out), "^\\[[0-9a-f]+\\]Thread started$"), 3);
	assert_int_equal(lines_matching(strbuf_str(&out), "^threads 3$"), 1);
	parse_live(BENCH_EBIZZY, &out, &err, &m);
	double rate = positive(&m, "records_per_s"), real = positive(&m, "real_s");
	double sum = 0;
	for (const char *p = strbuf_str(&out); (p = strstr(p, " seconds ")); p++)
		sum += strtod(p + 9, NULL);
	assert_true(fabs(sum / real - rate) <= 0.02 * rate + 1);
	bench_metrics_release(&m);

	char *bad[] = { prog, "-t", "0", NULL };
	strbuf_reset(&out);
	strbuf_reset(&err);
	assert_int_equal(run_capture(bad, &out, &err, 30), 1);
	assert_non_null(strstr(strbuf_str(&err), "Usage:"));
	strbuf_release(&out);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress_ng),
		cmocka_unit_test(test_sysbench),
		cmocka_unit_test(test_time),
		cmocka_unit_test_teardown(test_redis, redis_stop),
		cmocka_unit_test(test_ebizzy_standin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
