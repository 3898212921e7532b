/* Unit tests for util/: JSON writer, option parser, strbuf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/json.h"
#include "util/mono.h"
#include "util/number.h"
#include "util/opts.h"
#include "util/safefile.h"
#include "util/strbuf.h"
#include "util/warn.h"

static void test_json_structure(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &sb, false);
	json_obj_begin(&w);
	json_key(&w, "a"); json_int(&w, -3);
	json_key(&w, "b"); json_arr_begin(&w);
	json_str(&w, "x"); json_bool(&w, true); json_null(&w); json_double(&w, 0.1);
	json_arr_end(&w);
	json_key(&w, "c"); json_obj_begin(&w); json_obj_end(&w);
	json_key(&w, "d"); json_double(&w, NAN);
	json_key(&w, "e"); json_raw(&w, "{\"k\":1}");
	json_key(&w, "f"); json_uint(&w, UINT64_MAX);
	json_key(&w, "g"); json_interval(&w, -0.5, 2);
	json_key(&w, "h"); json_interval(&w, 1, NAN);
	json_obj_end(&w);
	assert_string_equal(strbuf_str(&sb),
		"{\"a\":-3,\"b\":[\"x\",true,null,0.1],\"c\":{},\"d\":null,\"e\":{\"k\":1},"
		"\"f\":18446744073709551615,\"g\":[-0.5,2],\"h\":null}");
	strbuf_release(&sb);
}

static void test_json_pretty(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &sb, true);
	json_obj_begin(&w);
	json_key(&w, "a"); json_arr_begin(&w); json_int(&w, 1); json_int(&w, 2); json_arr_end(&w);
	json_key(&w, "e"); json_arr_begin(&w); json_arr_end(&w);
	json_obj_end(&w);
	assert_string_equal(strbuf_str(&sb), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": []\n}");
	strbuf_release(&sb);
}

static void test_json_escaping(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	json_escape(&sb, "q\"b\\n\n\t\x01 caf\xc3\xa9 bad\xff end \xe2\x82");
	assert_string_equal(strbuf_str(&sb),
		"\"q\\\"b\\\\n\\n\\t\\u0001 caf\xc3\xa9 bad\\ufffd end \\ufffd\\ufffd\"");
	strbuf_release(&sb);
	/* Overlong encodings and surrogates are not valid UTF-8. */
	json_escape(&sb, "\xc0\xaf\xed\xa0\x80");
	assert_string_equal(strbuf_str(&sb),
		"\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	strbuf_release(&sb);
}

/* Invalid UTF-8 becomes U+FFFD, byte by byte, and is counted: a table of cases. */
static void test_valid_utf8(void **state)
{
	static const struct { const char *in; size_t len; const char *out; size_t replaced; } cases[] = {
		{ "", 0, "", 0 },
		{ "caf\xc3\xa9 \xe2\x82\xac", 9, "caf\xc3\xa9 \xe2\x82\xac", 0 },
		{ "a\xff" "b", 3, "a\xef\xbf\xbd" "b", 1 },
		/* a sequence cut by the end, overlong, surrogate: each byte */
		{ "x\xe2\x82", 3, "x\xef\xbf\xbd\xef\xbf\xbd", 2 },
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 2 },
		{ "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3 },
		/* NUL and controls are valid UTF-8: left to the writers that escape them */
		{ "\x1b\0z", 3, "\x1b\0z", 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		size_t n = strbuf_add_valid_utf8(&sb, cases[i].in, cases[i].len);
		size_t want = strlen(cases[i].out) + (i == sizeof(cases) / sizeof(cases[0]) - 1 ? 2 : 0);
		assert_int_equal(n, cases[i].replaced);
		assert_int_equal(sb.len, want);
		assert_memory_equal(sb.buf, cases[i].out, want);
		strbuf_release(&sb);
	}
	/* The JSON writer counts what it replaces, for the note cmd.c prints. */
	size_t before = json_replaced_bytes();
	struct strbuf sb = STRBUF_INIT;
	json_escape(&sb, "ok \xff\xfe \xc3\xa9");
	assert_int_equal(json_replaced_bytes() - before, 2);
	strbuf_release(&sb);
}

static void test_json_double_round_trip(void **state)
{
	double values[] = { 1.0 / 3.0, 57438.25, 1e-300, -2.5e17 };
	for (size_t i = 0; i < 4; i++) {
		struct strbuf sb = STRBUF_INIT;
		struct json_writer w;
		json_init(&w, &sb, false);
		json_double(&w, values[i]);
		assert_true(strtod(strbuf_str(&sb), NULL) == values[i]);
		strbuf_release(&sb);
	}
}

static int o_bool, o_count, o_int;
static const char *o_str;
static const struct option table[] = {
	OPT_BOOL('a', "all", &o_bool, "all"),
	OPT_COUNT('v', "verbose", &o_count, "more"),
	OPT_INT('n', "number", &o_int, "N", "a number"),
	OPT_STRING('o', "output", &o_str, "FILE", "output file"),
	OPT_END(),
};
static const struct option *const tables[] = { table, NULL };

static void reset_opts(void)
{
	o_bool = o_count = o_int = 0;
	o_str = NULL;
}

static void test_opts_parse(void **state)
{
	struct ta_err err = { 0 };
	char *argv[] = { "x", "-vv", "--number=12", "-ofile", "y", "--all", "--", "-z", NULL };
	reset_opts();
	int n = opts_parse(tables, 8, argv, 0, &err);
	assert_int_equal(n, 3);
	assert_string_equal(argv[0], "x");
	assert_string_equal(argv[1], "y");
	assert_string_equal(argv[2], "-z");
	assert_int_equal(o_count, 2);
	assert_int_equal(o_int, 12);
	assert_string_equal(o_str, "file");
	assert_int_equal(o_bool, 1);
}

static void test_opts_stop_at_arg(void **state)
{
	struct ta_err err = { 0 };
	char *argv[] = { "-a", "cmd", "-v", "--output", "f", NULL };
	reset_opts();
	int n = opts_parse(tables, 5, argv, 1, &err);
	assert_int_equal(n, 4);
	assert_string_equal(argv[0], "cmd");
	assert_string_equal(argv[1], "-v");
	assert_int_equal(o_count, 0);
	assert_int_equal(o_bool, 1);
}

static void test_opts_errors(void **state)
{
	struct ta_err err = { 0 };
	char *a1[] = { "--nope" };
	assert_int_equal(opts_parse(tables, 1, a1, 0, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "--nope"));
	char *a2[] = { "--number", "12x" };
	assert_int_equal(opts_parse(tables, 2, a2, 0, &err), -1);
	assert_non_null(strstr(err.msg, "whole number"));
	char *a3[] = { "--output" };
	assert_int_equal(opts_parse(tables, 1, a3, 0, &err), -1);
	assert_non_null(strstr(err.msg, "requires a value"));
	char *a4[] = { "--all=1" };
	assert_int_equal(opts_parse(tables, 1, a4, 0, &err), -1);
	assert_non_null(strstr(err.msg, "takes no value"));
	char *a5[] = { "-x" };
	assert_int_equal(opts_parse(tables, 1, a5, 0, &err), -1);
	char *a6[] = { "--help" };
	assert_int_equal(opts_parse(tables, 1, a6, 0, &err), OPTS_HELP);
	char *a7[] = { "-n", "99999999999" };
	assert_int_equal(opts_parse(tables, 2, a7, 0, &err), -1);
}

static void test_opts_help_lists_every_option(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	opts_help(&sb, tables);
	assert_non_null(strstr(strbuf_str(&sb), "-a, --all"));
	assert_non_null(strstr(strbuf_str(&sb), "-n, --number N"));
	assert_non_null(strstr(strbuf_str(&sb), "-o, --output FILE"));
	strbuf_release(&sb);
}

static void test_number_parse(void **state)
{
	static const struct { const char *text; long long want; } ok[] = {
		{ "42", 42 }, { "+6", 6 }, { "-1", -1 }, { "0x4", 4 }, { "0X1f", 31 }, { "007", 7 },
		{ "9223372036854775807", 9223372036854775807LL },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		long long v = 0;
		if (!number_parse_ll(ok[i].text, &v) || v != ok[i].want)
			fail_msg("'%s' read as %lld, want %lld", ok[i].text, v, ok[i].want);
	}
	static const char *const bad[] = { "", "x", " 1", "1 ", "1x", "0x", "+", "--1", "1.5",
					   "9223372036854775808", "0xg" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		long long v = 99;
		if (number_parse_ll(bad[i], &v))
			fail_msg("'%s' accepted as %lld", bad[i], v);
		assert_true(v == 99);
	}
}

static void test_strbuf(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	assert_string_equal(strbuf_str(&sb), "");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf + sb.len - 4, "999,", 4);
	strbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	strbuf_add(&sb, "a\0b", 3);
	assert_int_equal(sb.len, 3);
	char *s = strbuf_detach(&sb);
	assert_null(sb.buf);
	free(s);
}

/* Stored text reaches a terminal only with its control characters escaped. */
static void test_strbuf_printable(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	static const char in[] = "ok\tline\n\033]0;t\007\033[2J\r\x7f \xc2\x9b \xc3\xa9 \xff\xfe.";
	strbuf_add_printable(&sb, in, sizeof(in) - 1);
	assert_string_equal(strbuf_str(&sb), "ok\tline\n\\x1b]0;t\\x07\\x1b[2J\\x0d\\x7f "
			    "\\xc2\\x9b \xc3\xa9 \\xff\\xfe.");
	strbuf_reset(&sb);
	strbuf_add_printable(&sb, "a\0b", 3);
	assert_string_equal(strbuf_str(&sb), "a\\x00b");
	strbuf_reset(&sb);
	/* A sequence cut by the end of the data is not read past it. */
	strbuf_add_printable(&sb, "x\xe2\x82", 3);
	assert_string_equal(strbuf_str(&sb), "x\\xe2\\x82");
	strbuf_release(&sb);
	/* JSON escapes DEL and C1 too, so a terminal showing it is safe as well. */
	json_escape(&sb, "\x7f\xc2\x9b\xc3\xa9");
	assert_string_equal(strbuf_str(&sb), "\"\\u007f\\u009b\xc3\xa9\"");
	strbuf_release(&sb);
}

/* Output rewritten with CR keeps what a terminal finally shows: a table of cases. */
static void test_strbuf_overwritten(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "" },
		{ "plain\nlines\n", "plain\nlines\n" },
		/* redis-benchmark -q: progress rewritten, then the result line */
		{ "SET: rps=1.0 (overall: 1.0)\rSET: rps=2.0 (overall: 1.5)\r"
		  "SET: 5000.00 requests per second\nGET: rps=3.0\r",
		  "SET: 5000.00 requests per second\nGET: rps=3.0" },
		{ "dos\r\nline\r\n", "dos\nline\n" },
		{ "a\rb\rc", "c" },
		{ "\r\r\n\rx\r\r\n", "\nx\n" },
		{ "no newline at end", "no newline at end" },
	};
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strbuf_reset(&sb);
		strbuf_add_overwritten(&sb, cases[i].in, strlen(cases[i].in));
		if (strcmp(strbuf_str(&sb), cases[i].out))
			fail_msg("case %zu: '%s'", i, strbuf_str(&sb));
	}
	strbuf_release(&sb);
}

static char sfdir[] = "/tmp/ta-test-safefile.XXXXXX";

static void sf_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", sfdir, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void assert_text(const char *path, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&sb, path), 0);
	assert_string_equal(strbuf_str(&sb), text);
	strbuf_release(&sb);
}

/* No file is ever written through a name someone planted. */
static void test_safefile(void **state)
{
	assert_non_null(mkdtemp(sfdir));
	char victim[128], link_[128], out[128], hard[128];
	struct ta_err err = { 0 };
	sf_path(victim, sizeof(victim), "victim");
	sf_path(link_, sizeof(link_), "link");
	sf_path(out, sizeof(out), "out");
	sf_path(hard, sizeof(hard), "hard");
	write_text(victim, "precious");
	assert_int_equal(symlink(victim, link_), 0);

	/* create: never opens an existing name, symlink or not. */
	assert_int_equal(safefile_create(link_, 0600, &err), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(safefile_create(victim, 0600, &err), -1);
	assert_text(victim, "precious");
	int fd = safefile_create(out, 0600, &err);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	struct stat st;
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_mode & 0077, 0);
	unlink(out);

	/* replace: a symlink at the name is replaced, its target untouched. */
	assert_int_equal(safefile_replace(link_, "new", 3, 0644, &err), 0);
	assert_text(victim, "precious");
	assert_int_equal(lstat(link_, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_text(link_, "new");
	/* A replaced hard link leaves the other name's content alone. */
	assert_int_equal(link(victim, hard), 0);
	assert_int_equal(safefile_replace(hard, "other", 5, 0644, &err), 0);
	assert_text(victim, "precious");
	assert_text(hard, "other");
	/* Into a directory that does not exist: an error, nothing made. */
	sf_path(out, sizeof(out), "no/such");
	assert_int_equal(safefile_replace(out, "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "no/such"));

	/* open_existing: refuses symlinks, hard links, non-regular files. */
	unlink(link_);
	assert_int_equal(symlink(victim, link_), 0);
	assert_int_equal(safefile_open_existing(link_, &st, &err), -1);
	assert_non_null(strstr(err.msg, "symbolic link"));
	unlink(hard);
	assert_int_equal(link(victim, hard), 0);
	assert_int_equal(safefile_open_existing(victim, &st, &err), -1);
	assert_non_null(strstr(err.msg, "hard links"));
	unlink(hard);
	fd = safefile_open_existing(victim, &st, &err);
	assert_true(fd >= 0);
	close(fd);
	assert_text(victim, "precious");
	sf_path(out, sizeof(out), "absent");
	assert_int_equal(safefile_open_existing(out, &st, &err), -1);
	assert_int_equal(errno, ENOENT);

	unlink(link_);
	unlink(victim);
	assert_int_equal(rmdir(sfdir), 0);
}

/*
 * Output names that are not files: a character device (a /dev/null twin
 * made with mknod, so the system's is never at stake) and a link of ours to
 * it, and our own stdout through a link, are written into and stay what
 * they are; a FIFO, a directory and a socket are refused without waiting.
 */
static void test_safefile_devices(void **state)
{
	strcpy(sfdir, "/tmp/ta-test-safefile.XXXXXX");
	assert_non_null(mkdtemp(sfdir));
	char dev[128], link_[128], fifo[128], sock[128], so[128];
	struct ta_err err = { 0 };
	struct stat st;
	sf_path(dev, sizeof(dev), "null");
	sf_path(link_, sizeof(link_), "link");
	sf_path(fifo, sizeof(fifo), "fifo");
	sf_path(sock, sizeof(sock), "sock");
	sf_path(so, sizeof(so), "stdout");
	alarm(30);	/* blocking on the FIFO would be a failure, not a hang */
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		assert_int_equal(safefile_replace(dev, "x", 1, 0644, &err), 0);
		assert_int_equal(lstat(dev, &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		assert_int_equal(symlink(dev, link_), 0);
		assert_int_equal(safefile_replace(link_, "x", 1, 0644, &err), 0);
		assert_int_equal(lstat(link_, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_int_equal(lstat(dev, &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		unlink(link_);
		unlink(dev);
	} else {
		fprintf(stderr, "note: mknod not permitted here; device cases skipped\n");
	}
	/* Our stdout made a pipe: the report goes into it, the link stays. */
	int p[2];
	assert_int_equal(pipe(p), 0);
	int saved = dup(1);
	assert_int_equal(dup2(p[1], 1), 1);
	assert_int_equal(symlink("/proc/self/fd/1", so), 0);
	int rc = safefile_replace(so, "report", 6, 0644, &err);
	dup2(saved, 1);
	close(saved);
	close(p[1]);
	assert_int_equal(rc, 0);
	char buf[16] = { 0 };
	assert_int_equal(read(p[0], buf, sizeof(buf)), 6);
	assert_string_equal(buf, "report");
	close(p[0]);
	assert_int_equal(lstat(so, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	unlink(so);
	/* FIFO, directory, socket: refused, untouched. */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(safefile_replace(fifo, "x", 1, 0644, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "FIFO"));
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(safefile_replace(sfdir, "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "directory"));
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	assert_true(strlen(sock) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(safefile_replace(sock, "x", 1, 0644, &err), -1);
	assert_non_null(strstr(err.msg, "socket"));
	close(s);
	unlink(sock);

	/* In place (the host lock): what is not a file is named and never
	 * opened — our terminal would fail to open (ENXIO) without a
	 * controlling one, a FIFO would open. */
	assert_int_equal(safefile_open_existing(fifo, &st, &err), -1);
	assert_non_null(strstr(err.msg, "it is a FIFO (named pipe), not a file"));
	assert_int_equal(safefile_open_existing(sfdir, &st, &err), -1);
	assert_non_null(strstr(err.msg, "it is a directory"));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ta_err cerr = { 0 };
		struct stat cst;
		setsid();	/* no controlling terminal: opening /dev/tty fails */
		_exit(safefile_open_existing("/dev/tty", &cst, &cerr) == -1 &&
		      strstr(cerr.msg, "it is a character device, not a file") ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* Input: a FIFO, a device, a directory are refused at once. */
	const char *why = NULL;
	assert_int_equal(safefile_open_input(fifo, &why), -1);
	assert_non_null(strstr(why, "FIFO"));
	assert_int_equal(safefile_open_input("/dev/null", &why), -1);
	assert_non_null(strstr(why, "character device"));
	assert_int_equal(safefile_open_input(sfdir, &why), -1);
	assert_non_null(strstr(why, "directory"));
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(safefile_read_input(fifo, "the config", 100, &sb, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "cannot read the config: it is a FIFO"));
	unlink(fifo);
	write_text(fifo, "0123456789");
	assert_int_equal(safefile_read_input(fifo, "the config", 9, &sb, &err), -1);
	assert_non_null(strstr(err.msg, "larger than 9 bytes"));
	strbuf_reset(&sb);
	assert_int_equal(safefile_read_input(fifo, "the config", 10, &sb, &err), 0);
	assert_string_equal(sb.buf, "0123456789");
	strbuf_release(&sb);
	unlink(fifo);
	alarm(0);
	assert_int_equal(rmdir(sfdir), 0);
}

/* An empty file reads as "", not as whatever the fresh buffer held. */
static void test_strbuf_read_empty(void **state)
{
	char path[] = "/tmp/ta-test-util-empty.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&sb, path), 0);
	assert_int_equal(sb.len, 0);
	assert_string_equal(strbuf_str(&sb), "");
	strbuf_release(&sb);
	unlink(path);
}

static void capture_warning(const char *line, void *data)
{
	strbuf_addstr(data, line);
}

/* One prefix, one line each, control characters escaped, to the installed sink. */
/*
 * mono_deadline_us carries microseconds into seconds (a tv_nsec of 1e9 or
 * more makes pthread_cond_timedwait fail with EINVAL at once: a ticker
 * that spins), and a mono_cond_init variable times out on the same clock.
 */
static void test_mono_deadline(void **state)
{
	static const long cases_us[] = { 0, 1, 999999, 1000000, 1500000, 2999999, 61000001 };
	for (size_t i = 0; i < sizeof(cases_us) / sizeof(*cases_us); i++) {
		uint64_t before = mono_now_ns();
		struct timespec t = mono_deadline_us(cases_us[i]);
		uint64_t after = mono_now_ns();
		assert_true(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
		uint64_t at = (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
		assert_true(at >= before + (uint64_t)cases_us[i] * 1000);
		assert_true(at <= after + (uint64_t)cases_us[i] * 1000);
	}
	pthread_cond_t c;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	mono_cond_init(&c);
	pthread_mutex_lock(&m);
	struct timespec until = mono_deadline_us(20000);
	int rc;
	while ((rc = pthread_cond_timedwait(&c, &m, &until)) == 0)
		;
	pthread_mutex_unlock(&m);
	assert_int_equal(rc, ETIMEDOUT);
	assert_true(mono_now_ns() >= (uint64_t)until.tv_sec * 1000000000ULL + (uint64_t)until.tv_nsec);
	pthread_cond_destroy(&c);
}

static void test_warn_channel(void **state)
{
	struct strbuf got = STRBUF_INIT;
	warn_sink_set(capture_warning, &got);
	warn_emit("guest '%s' left behind", "a\033[2Jb");
	warn_emit("two\nlines\n");
	warn_sink_set(NULL, NULL);
	assert_string_equal(strbuf_str(&got),
			    "topoadvisor: warning: guest 'a\\x1b[2Jb' left behind\n"
			    "topoadvisor: warning: two\nlines\n");
	strbuf_release(&got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strbuf_overwritten),
		cmocka_unit_test(test_json_structure),
		cmocka_unit_test(test_json_pretty),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_valid_utf8),
		cmocka_unit_test(test_json_double_round_trip),
		cmocka_unit_test(test_opts_parse),
		cmocka_unit_test(test_opts_stop_at_arg),
		cmocka_unit_test(test_opts_errors),
		cmocka_unit_test(test_opts_help_lists_every_option),
		cmocka_unit_test(test_number_parse),
		cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_strbuf_printable),
		cmocka_unit_test(test_strbuf_read_empty),
		cmocka_unit_test(test_warn_channel),
		cmocka_unit_test(test_mono_deadline),
		cmocka_unit_test(test_safefile),
		cmocka_unit_test(test_safefile_devices),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
