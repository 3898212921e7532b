/*
 * Commands as library functions: each advisor/cmd-*.c links into a test
 * with the library alone (advisor/cmd.c holds what they print through),
 * so a command can be driven with its arguments and its output read back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advisor/cmd.h"
#include "util/strbuf.h"

extern const struct cmd_entry cmd_plan_entry;

struct captured {
	int rc;
	struct strbuf out, err;
};

/* Runs c->exec with argv, stdout and stderr going to files read back into cap. */
static void run_captured(const struct cmd_entry *c, const struct cmd_ctx *ctx, int argc,
			 char **argv, struct captured *cap)
{
	char outp[] = "/tmp/ta-test-cmd-out.XXXXXX", errp[] = "/tmp/ta-test-cmd-err.XXXXXX";
	int ofd = mkstemp(outp), efd = mkstemp(errp);
	assert_true(ofd >= 0 && efd >= 0);
	fflush(stdout);
	fflush(stderr);
	int saved_out = dup(1), saved_err = dup(2);
	dup2(ofd, 1);
	dup2(efd, 2);
	cap->rc = c->exec(ctx, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	close(ofd);
	close(efd);
	*cap = (struct captured){ .rc = cap->rc };
	assert_int_equal(strbuf_read_file(&cap->out, outp), 0);
	assert_int_equal(strbuf_read_file(&cap->err, errp), 0);
	unlink(outp);
	unlink(errp);
}

static void captured_release(struct captured *cap)
{
	strbuf_release(&cap->out);
	strbuf_release(&cap->err);
}

/* `plan --json CONFIG`: the command's own exec, its JSON on stdout. */
static void test_plan_json(void **state)
{
	char dir[] = "/tmp/ta-test-cmd.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/sweep.yaml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("name: cmd-test\nbenchmark: {kind: ebizzy}\ntopology: [1x2x1, 2x1x1]\n"
	      "noise: [{kind: none}, {kind: spin, cpus: \"0\"}]\nrepetitions: 3\n"
	      "order: sequential\n", f);
	fclose(f);

	/* As main() fills it: --db always names a path (here one with no database,
	 * so plan's estimate takes its built-in figures). */
	char db[64];
	snprintf(db, sizeof(db), "%s/none.db", dir);
	struct cmd_ctx ctx = { .json = 1, .db_path = db };
	char *argv[] = { path, NULL };
	struct captured cap;
	run_captured(&cmd_plan_entry, &ctx, 1, argv, &cap);
	assert_int_equal(cap.rc, EXIT_OK);
	assert_string_equal(strbuf_str(&cap.err), "");
	assert_non_null(strstr(cap.out.buf, "\"name\": \"cmd-test\""));
	assert_non_null(strstr(cap.out.buf, "\"key\": \"1x2x1/pin=none/noise=none\""));
	assert_non_null(strstr(cap.out.buf, "\"key\": \"2x1x1/pin=none/noise=spin\""));
	assert_non_null(strstr(cap.out.buf, "\"runs\": 12"));
	captured_release(&cap);

	/* Bad input: exit 2, the error on stderr through cmd_fail, nothing on stdout. */
	unlink(path);
	run_captured(&cmd_plan_entry, &ctx, 1, argv, &cap);
	assert_int_equal(cap.rc, EXIT_BAD_INPUT);
	assert_string_equal(strbuf_str(&cap.out), "");
	assert_true(!strncmp(cap.err.buf, "topoadvisor: error: ", 20));
	assert_non_null(strstr(cap.err.buf, path));
	captured_release(&cap);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
