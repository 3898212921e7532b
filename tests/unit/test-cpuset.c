/* Unit tests for the cpulist parser (util/cpuset): forms, errors, round trip. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "util/cpuset.h"

static void expect(const char *in, const char *canonical, size_t n, int last)
{
	struct cpuset cs;
	struct ta_err err = { 0 };
	if (cpuset_parse(in, &cs, &err) < 0)
		fail_msg("'%s' refused: %s", in, err.msg);
	struct strbuf sb = STRBUF_INIT;
	cpuset_format(&cs, &sb);
	assert_string_equal(strbuf_str(&sb), canonical);
	assert_int_equal(cs.n, n);
	assert_int_equal(cpuset_last(&cs), last);
	for (size_t i = 1; i < cs.n; i++)
		assert_true(cs.cpus[i - 1] < cs.cpus[i]);
	cpu_set_t mask;
	cpuset_to_mask(&cs, &mask);
	assert_int_equal(CPU_COUNT(&mask), (int)n);
	assert_true(CPU_ISSET(last, &mask));
	strbuf_release(&sb);
	cpuset_release(&cs);
}

static void refuse(const char *in, const char *why)
{
	struct cpuset cs = { NULL, 0 };
	struct ta_err err = { 0 };
	if (cpuset_parse(in, &cs, &err) == 0)
		fail_msg("'%s' accepted", in);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	if (!strstr(err.msg, why))
		fail_msg("'%s': message '%s' lacks '%s'", in, err.msg, why);
	assert_null(cs.cpus);
}

static void test_forms(void **state)
{
	expect("1", "1", 1, 1);
	expect("0-3,8", "0-3,8", 5, 8);
	expect("8,0-3", "0-3,8", 5, 8);
	expect("0-3,2-5", "0-5", 6, 5);	/* overlaps, as the kernel accepts */
	expect(" 4 , 6-7 ", "4,6-7", 3, 7);
	expect("5-5", "5", 1, 5);
	expect("1023", "1023", 1, 1023);
}

static void test_errors(void **state)
{
	refuse("", "expected a CPU number");
	refuse(NULL, "expected a CPU number");
	refuse("3-1", "goes down");
	refuse("-1", "expected a CPU number");
	refuse("1,", "expected a CPU number");
	refuse("0x3", "unexpected 'x'");
	refuse("1;2", "unexpected ';'");
	refuse("1024", "above 1023");
	refuse("99999999999999999999", "above");
	refuse("0-", "expected a CPU number");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
