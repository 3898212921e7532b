/*
 * Unit tests of the event table built from a trace's tracing data, without
 * any file: the layout is assembled by hand in either byte order.  Only our
 * formats may be parsed (another system's format, even a broken one, is
 * skipped unread), kallsyms is skipped, every strict prefix of the layout
 * is refused, and saved cmdlines are looked up by pid exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/evfmt.h"

static const char run_core[] =
	"name: kvmppc_run_core\nID: 1001\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:int n_runnable;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int where;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:int tgid;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"%d\", REC->where\n";
/* Not ours, and not even a format: parsing it would fail. */
static const char other[] = "name: sched_switch\nID: 5\nformat:\n\tgarbage";

struct blob {
	unsigned char b[4096];
	size_t n;
	bool be;
};

static void put(struct blob *o, const void *p, size_t n)
{
	assert_true(o->n + n <= sizeof(o->b));
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void num(struct blob *o, uint64_t v, int size)
{
	unsigned char b[8];
	for (int i = 0; i < size; i++)
		b[o->be ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
	put(o, b, size);
}

static void str(struct blob *o, const char *s)
{
	put(o, s, strlen(s) + 1);
}

static void sized(struct blob *o, const char *text, int size_bytes)
{
	num(o, strlen(text), size_bytes);
	put(o, text, strlen(text));
}

static const char cmdlines[] = "1 init\n4242 qemu-system-ppc\n42 CPU 0/KVM\n77 last";

static void build(struct blob *o, bool be)
{
	memset(o, 0, sizeof(*o));
	o->be = be;
	put(o, "\027\010\104tracing", 10);
	str(o, "0.6");
	unsigned char eb[2] = { be, 8 };
	put(o, eb, 2);
	num(o, 4096, 4);
	str(o, "header_page");
	sized(o, "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		 "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		 "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n", 8);
	str(o, "header_event");
	sized(o, "# compressed entry header\n", 8);
	num(o, 0, 4);			/* ftrace formats */
	num(o, 2, 4);			/* systems */
	str(o, "sched");
	num(o, 1, 4);
	sized(o, other, 8);
	str(o, "kvm_hv");
	num(o, 1, 4);
	sized(o, run_core, 8);
	sized(o, "ffffffff81000000 T _stext\n", 4);	/* kallsyms */
	num(o, 0, 4);			/* printk */
	sized(o, cmdlines, 8);
}

static void check_layout(bool be)
{
	struct blob o;
	struct evfmt_layout l;
	struct ta_err err;
	build(&o, be);
	assert_int_equal(evfmt_scan(o.b, o.n, 100, &l, &err), 0);
	assert_int_equal(l.big_endian, be);
	assert_int_equal(l.long_size, 8);
	assert_int_equal(l.page_size, 4096);
	assert_int_equal(l.end, o.n);
	assert_int_equal(l.cmdlines_len, strlen(cmdlines));
	struct tep_handle *tep = evfmt_tep(&l, &err);
	assert_non_null(tep);
	assert_non_null(tep_find_event_by_name(tep, "kvm_hv", "kvmppc_run_core"));
	assert_null(tep_find_event_by_name(tep, "sched", "sched_switch"));
	assert_int_equal(tep_is_file_bigendian(tep), be);
	tep_free(tep);
	/* Every strict prefix is refused, with the offset in the message. */
	for (size_t n = 0; n < o.n; n++) {
		err.msg[0] = '\0';
		assert_int_equal(evfmt_scan(o.b, n, 100, &l, &err), -1);
		assert_non_null(strstr(err.msg, "offset"));
		assert_int_equal(err.code, EXIT_BAD_INPUT);
	}
}

static void test_layout_little(void **state)
{
	(void)state;
	check_layout(false);
}

static void test_layout_big(void **state)
{
	(void)state;
	check_layout(true);
}

static void test_bad_header(void **state)
{
	(void)state;
	struct blob o;
	struct evfmt_layout l;
	struct ta_err err;
	build(&o, false);
	o.b[15] = 3;	/* long size 3 */
	assert_int_equal(evfmt_scan(o.b, o.n, 0, &l, &err), -1);
	assert_non_null(strstr(err.msg, "long size 3"));
	build(&o, false);
	o.b[16] = 0x10;	/* page size 0x1010: not a power of two */
	assert_int_equal(evfmt_scan(o.b, o.n, 0, &l, &err), -1);
	assert_non_null(strstr(err.msg, "page size"));
	build(&o, false);
	o.b[0] = 'X';
	assert_int_equal(evfmt_scan(o.b, o.n, 0, &l, &err), -1);
	assert_non_null(strstr(err.msg, "bad magic"));
}

static void test_comm(void **state)
{
	(void)state;
	struct evfmt_layout l = { .cmdlines = cmdlines, .cmdlines_len = strlen(cmdlines) };
	char buf[32];
	assert_string_equal(evfmt_comm(&l, 4242, buf, sizeof(buf)), "qemu-system-ppc");
	assert_string_equal(evfmt_comm(&l, 42, buf, sizeof(buf)), "CPU 0/KVM");
	assert_string_equal(evfmt_comm(&l, 1, buf, sizeof(buf)), "init");
	assert_string_equal(evfmt_comm(&l, 77, buf, sizeof(buf)), "last");	/* no newline */
	assert_null(evfmt_comm(&l, 4, buf, sizeof(buf)));	/* a prefix of 42 and 4242 */
	assert_null(evfmt_comm(&l, 424, buf, sizeof(buf)));
	assert_null(evfmt_comm(&l, 0, buf, sizeof(buf)));
	struct evfmt_layout none = { 0 };
	assert_null(evfmt_comm(&none, 1, buf, sizeof(buf)));
	/* A huge number never wraps onto a real pid. */
	static const char big[] = "18446744073709555858 x\n";
	struct evfmt_layout b = { .cmdlines = big, .cmdlines_len = strlen(big) };
	assert_null(evfmt_comm(&b, 4242, buf, sizeof(buf)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_little),
		cmocka_unit_test(test_layout_big),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_comm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
