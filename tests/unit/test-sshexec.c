/*
 * Unit tests for the SSH executor's one piece of text handed to a shell:
 * the remote command (sshexec_remote_command), as a table — plain path
 * words are quoted and joined, anything a remote shell would read (spaces,
 * quotes, ';', '$', '`', newlines, globs, an empty word) refuses the whole
 * command instead of being passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "experiments/sshexec.h"
#include "util/strbuf.h"

static void test_remote_command_table(void **state)
{
	(void)state;
	struct {
		const char *words[4];
		const char *want;	/* NULL: refused */
	} cases[] = {
		{ { "/opt/ta/bin/topoadvisor", "run-block", "-", NULL },
		  "'/opt/ta/bin/topoadvisor' 'run-block' '-'" },
		{ { "/home/lab/ta-1.2/build/topoadvisor", "-q", "run-block", NULL },
		  "'/home/lab/ta-1.2/build/topoadvisor' '-q' 'run-block'" },
		{ { "/x/a=b,c:d+e_f", NULL }, "'/x/a=b,c:d+e_f'" },
		{ { "/my dir/topoadvisor", "run-block", NULL }, NULL },
		{ { "/x/it's", NULL }, NULL },
		{ { "/x/a;reboot", NULL }, NULL },
		{ { "/x/$(id)", NULL }, NULL },
		{ { "/x/`id`", NULL }, NULL },
		{ { "/x/a\nb", NULL }, NULL },
		{ { "/x/*", NULL }, NULL },
		{ { "/x/a\"b", NULL }, NULL },
		{ { "/x/a\\b", NULL }, NULL },
		{ { "/x/topoadvisor", "", NULL }, NULL },
		{ { "/x/\xc3\xa9", NULL }, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf out = STRBUF_INIT;
		int rc = sshexec_remote_command(cases[i].words, &out);
		if (!cases[i].want) {
			if (rc != -1)
				fail_msg("case %zu: passed as %s", i, strbuf_str(&out));
		} else if (rc != 0 || strcmp(strbuf_str(&out), cases[i].want)) {
			fail_msg("case %zu: %d '%s', want '%s'", i, rc, strbuf_str(&out),
				 cases[i].want);
		}
		strbuf_release(&out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remote_command_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
