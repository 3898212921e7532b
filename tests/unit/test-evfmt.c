/*
 * Unit tests of the event table built from a trace's tracing data, without
 * any file: the layout is assembled by hand in either byte order.  Only our
 * formats may be parsed (another system's format, even a broken one, is
 * skipped unread), kallsyms is skipped, every strict prefix of the layout
 * is refused, and saved cmdlines are looked up by pid exactly.  The format
 * parser is checked as a table of field lines (arrays, __data_loc, every
 * malformed shape), the page header's layout is enforced, and the formats
 * that crashed libtraceevent's parser (found by fuzzing) read safely.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/decode.h"
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

/* The layout build() writes, with a third system holding one format (sys, text). */
static void build_with(struct blob *o, bool be, const char *sys, const char *text)
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
	num(o, sys ? 3 : 2, 4);		/* systems */
	str(o, "sched");
	num(o, 1, 4);
	sized(o, other, 8);
	str(o, "kvm_hv");
	num(o, 1, 4);
	sized(o, run_core, 8);
	if (sys) {
		str(o, sys);
		num(o, 1, 4);
		sized(o, text, 8);
	}
	sized(o, "ffffffff81000000 T _stext\n", 4);	/* kallsyms */
	num(o, 0, 4);			/* printk */
	sized(o, cmdlines, 8);
}

static void build(struct blob *o, bool be)
{
	build_with(o, be, NULL, NULL);
}

/* Formats of a KVM system a kernel cannot have written: a table of cases. */
static void test_formats_damage(void **state)
{
	static const struct {
		const char *sys, *text;
		int damaged;
		const char *why;
	} cases[] = {
		{ "kvm", "name: kvm_entry\nID: 7\nformat:\n", 0, "" },
		/* three bytes from kvm_exit: another event, not a damaged name */
		{ "kvm", "name: kvm_mmio\nID: 7\nformat:\n", 0, "" },
		{ "kvm", "name: kvm_exiu\nID: 7\nformat:\n", 1,
		  "the format of ID 7 is named kvm/kvm_exiu, a byte or two from kvm/kvm_exit" },
		{ "kvm", "name: kvm_userspace_exiT\nID: 7\n", 1, "from kvm/kvm_userspace_exit" },
		{ "kvn", "name: kvm_exit\nID: 7\n", 1, "named kvn/kvm_exit, a byte or two from" },
		{ "kvm", "name: kvm_\001\001it\nID: 7\n", 1, "a format of system kvm has no valid "
		  "name line ('name: kvm_\001\001it')" },
		{ "kvm", "name: kvm_pio\nID: 1x\n", 1, "the format of kvm/kvm_pio has no valid ID line" },
		{ "kvm", "name: kvm_pio\n", 1, "the format of kvm/kvm_pio has no valid ID line" },
		/* ours present (kvm_hv/kvmppc_run_core, ID 1001): a near name is another event */
		{ "kvm_hv", "name: kvmppc_run_corf\nID: 9\n", 0, "" },
		/* not a KVM system: not ours to judge */
		{ "sched", "name: sched_\001\nID: 1x\n", 0, "" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct blob o;
		struct evfmt_layout l;
		struct evfmt_table t;
		struct ta_err err;
		char why[200];
		build_with(&o, false, cases[i].sys, cases[i].text);
		assert_int_equal(evfmt_scan(o.b, o.n, 0, &l, &err), 0);
		assert_int_equal(evfmt_table_build(&l, &t, &err), 0);
		assert_int_equal(evfmt_formats_damage(&l, &t, why, sizeof(why)), cases[i].damaged);
		if (!strstr(why, cases[i].why))
			fail_msg("case %zu: '%s' lacks '%s'", i, why, cases[i].why);
	}
}

/* The IDs a file describes: its formats', and ftrace's own 1-31. */
static void test_event_ids(void **state)
{
	struct blob o;
	struct evfmt_layout l;
	struct ta_err err;
	static uint64_t known[EVFMT_ID_WORDS];
	(void)state;
	build(&o, true);
	assert_int_equal(evfmt_scan(o.b, o.n, 0, &l, &err), 0);
	evfmt_event_ids(&l, known);
	static const struct { unsigned id; bool known; } cases[] = {
		{ 0, false }, { 1, true }, { 5, true }, { 31, true }, { 32, false },
		{ 1000, false }, { 1001, true }, { 1002, false }, { 65535, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (((known[cases[i].id / 64] >> (cases[i].id % 64)) & 1) != cases[i].known)
			fail_msg("ID %u: known %d, expected %d", cases[i].id, !cases[i].known,
				 cases[i].known);
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
	struct evfmt_table t;
	assert_int_equal(evfmt_table_build(&l, &t, &err), 0);
	assert_int_equal(t.big_endian, be);
	assert_int_equal(t.commit_size, 8);
	const struct evfmt_event *rc = &t.events[EVFMT_RUN_CORE];
	assert_true(rc->present);
	assert_int_equal(rc->id, 1001);
	const struct evfmt_field *where = evfmt_event_field(rc, "where");
	assert_non_null(where);
	assert_int_equal(where->offset, 12);
	assert_int_equal(where->size, 4);
	assert_true(where->is_signed);
	assert_false(t.events[EVFMT_GUEST_EXIT].present);
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
	size_t n = strlen(cmdlines);
	char buf[32];
	assert_string_equal(evfmt_comm(cmdlines, n, 4242, buf, sizeof(buf)), "qemu-system-ppc");
	assert_string_equal(evfmt_comm(cmdlines, n, 42, buf, sizeof(buf)), "CPU 0/KVM");
	assert_string_equal(evfmt_comm(cmdlines, n, 1, buf, sizeof(buf)), "init");
	assert_string_equal(evfmt_comm(cmdlines, n, 77, buf, sizeof(buf)), "last");	/* no newline */
	assert_null(evfmt_comm(cmdlines, n, 4, buf, sizeof(buf)));	/* a prefix of 42 and 4242 */
	assert_null(evfmt_comm(cmdlines, n, 424, buf, sizeof(buf)));
	assert_null(evfmt_comm(cmdlines, n, 0, buf, sizeof(buf)));
	assert_null(evfmt_comm(NULL, 0, 1, buf, sizeof(buf)));
	/* A huge number never wraps onto a real pid. */
	static const char big[] = "18446744073709555858 x\n";
	assert_null(evfmt_comm(big, strlen(big), 4242, buf, sizeof(buf)));
}

#define COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* One field line of kvm_exit's format: 1 = parsed, -1 = refused. */
static const struct {
	const char *line;
	int rc;
	const char *name;	/* the field it must yield */
	int offset, size, is_signed;
} field_cases[] = {
	{ "\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n", 1, "exit_reason", 8, 4, 0 },
	{ "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:1;\n", 1, "comm", 8, 16, 1 },
	{ "\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:1;\n", 1, "name", 8, 4, 1 },
	{ "  field: u64 x ;  offset:8;  size:8;\n", 1, "x", 8, 8, 0 },	/* no signed: unsigned */
	{ "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\tfuture:7;\n", 1, "a", 8, 4, 1 },
	{ "\tfield:int a;\tsize:4;\tsigned:1;\n", -1, NULL, 0, 0, 0 },	/* no offset */
	{ "\tfield:int a;\toffset:8;\tsigned:1;\n", -1, NULL, 0, 0, 0 },	/* no size */
	{ "\tfield:int a\toffset:8;\tsize:4;\n", -1, NULL, 0, 0, 0 },	/* no ';' after the name */
	{ "\tfield:int a;\toffset:x;\tsize:4;\n", -1, NULL, 0, 0, 0 },
	{ "\tfield:int a;\toffset:8\tsize:4;\n", -1, NULL, 0, 0, 0 },
	{ "\tfield:int a;\toffset:-8;\tsize:4;\n", -1, NULL, 0, 0, 0 },
	{ "\tfield:int a;\toffset:65534;\tsize:4;\n", -1, NULL, 0, 0, 0 },	/* past 64 KiB */
	{ "\tfield:int a;\toffset:99999999999;\tsize:4;\n", -1, NULL, 0, 0, 0 },
	{ "\tfield:;\toffset:8;\tsize:4;\n", -1, NULL, 0, 0, 0 },	/* no name */
	{ "\tfield:int ];\toffset:8;\tsize:4;\n", -1, NULL, 0, 0, 0 },	/* ']' without '[' */
	{ "\tfield:int common_pid;\toffset:4;\tsize:4;\n", -1, NULL, 0, 0, 0 },	/* twice */
	{ "\tfield:int " "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  ";\toffset:8;\tsize:4;\n", -1, NULL, 0, 0, 0 },	/* name too long */
	{ "\tnot a field line\n", 1, NULL, 0, 0, 0 },	/* ignored */
};

static void test_field_lines(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(field_cases) / sizeof(field_cases[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "name: kvm_exit\nID: 9\nformat:\n" COMMON_FIELDS
			 "%s\nprint fmt: \"%%d\", REC->x\n", field_cases[i].line);
		struct evfmt_table t;
		struct ta_err err = { 0 };
		evfmt_table_init(&t, false, 8, 4096);
		int rc = evfmt_table_event(&t, "kvm", text, strlen(text), &err);
		if (rc != field_cases[i].rc)
			fail_msg("case %zu (%s): rc %d, want %d (%s)", i, field_cases[i].line, rc,
				 field_cases[i].rc, err.msg);
		if (rc < 0) {
			assert_int_equal(err.code, EXIT_BAD_INPUT);
			assert_non_null(strstr(err.msg, "kvm/kvm_exit"));
			continue;
		}
		const struct evfmt_event *e = &t.events[EVFMT_KVM_EXIT];
		assert_true(e->present);
		assert_int_equal(e->id, 9);
		if (!field_cases[i].name) {
			assert_int_equal(e->nfields, 2);
			continue;
		}
		const struct evfmt_field *f = evfmt_event_field(e, field_cases[i].name);
		assert_non_null(f);
		assert_int_equal(f->offset, field_cases[i].offset);
		assert_int_equal(f->size, field_cases[i].size);
		assert_int_equal(f->is_signed, field_cases[i].is_signed);
	}
}

static void test_event_lines(void **state)
{
	(void)state;
	struct evfmt_table t;
	struct ta_err err = { 0 };
	static const char no_id[] = "name: kvm_exit\nformat:\n" COMMON_FIELDS;
	static const char bad_id[] = "name: kvm_exit\nID: 12x\nformat:\n" COMMON_FIELDS;
	static const char other[] = "name: kvm_entry\nID: 12\n\tfield:garbage\n";
	static const char ours[] = "name: kvm_exit\nID: 12\nformat:\n" COMMON_FIELDS;
	static const char same_id[] = "name: kvm_userspace_exit\nID: 12\nformat:\n" COMMON_FIELDS;
	static const char again[] = "name: kvm_exit\nID: 13\nformat:\n\tfield:garbage\n";
	evfmt_table_init(&t, false, 8, 4096);
	assert_int_equal(evfmt_table_event(&t, "kvm", no_id, strlen(no_id), &err), -1);
	assert_non_null(strstr(err.msg, "ID"));
	assert_int_equal(evfmt_table_event(&t, "kvm", bad_id, strlen(bad_id), &err), -1);
	/* Not ours: not parsed beyond its name. */
	assert_int_equal(evfmt_table_event(&t, "kvm", other, strlen(other), &err), 0);
	assert_int_equal(evfmt_table_event(&t, "kvm_hv", ours, strlen(ours), &err), 0);
	assert_int_equal(evfmt_table_event(&t, "kvm", ours, strlen(ours), &err), 1);
	/* Seen again: the first format stays, the second is not read. */
	assert_int_equal(evfmt_table_event(&t, "kvm", again, strlen(again), &err), 1);
	assert_int_equal(t.events[EVFMT_KVM_EXIT].id, 12);
	/* Two of our events with one ID: records could not be told apart. */
	assert_int_equal(evfmt_table_event(&t, "kvm", same_id, strlen(same_id), &err), -1);
	assert_non_null(strstr(err.msg, "both have ID 12"));
	/* More fields than any real format has. */
	char many[8192] = "name: kvm_userspace_exit\nID: 14\nformat:\n";
	for (int i = 0; i <= EVFMT_MAX_FIELDS; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n", i, 4 * i);
	assert_int_equal(evfmt_table_event(&t, "kvm", many, strlen(many), &err), -1);
	assert_non_null(strstr(err.msg, "fields"));
}

static void test_header_page(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int rc, commit_size;
	} cases[] = {
		{ "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n", 0, 8 },
		{ "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		  "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
		  "\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n", 0, 4 },
		{ "", -1, 0 },	/* a pre-2.6.31 kernel: no page header format */
		{ "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		  "\tfield: char data;\toffset:20;\tsize:4076;\tsigned:1;\n", -1, 0 },
		{ "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		  "\tfield: local_t commit;\toffset:8;\tsize:2;\tsigned:1;\n"
		  "\tfield: char data;\toffset:10;\tsize:4076;\tsigned:1;\n", -1, 0 },
		{ "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n", -1, 0 },
		{ "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		  "\tfield: local_t commit;\toffset:8\n", -1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct evfmt_table t;
		struct ta_err err = { 0 };
		evfmt_table_init(&t, false, 8, 4096);
		int rc = evfmt_table_header_page(&t, cases[i].text, strlen(cases[i].text), &err);
		if (rc != cases[i].rc)
			fail_msg("header case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, err.msg);
		if (rc == 0)
			assert_int_equal(t.commit_size, cases[i].commit_size);
		else
			assert_int_equal(err.code, EXIT_BAD_INPUT);
	}
}

/*
 * Formats from the two perf.data inputs that crashed libtraceevent's
 * tep_parse_event (SEGV in its print-format parser, and SIGFPE on
 * "R/C->msr"): our parser never reads print formats, so the first reads and
 * decodes, the second (common_pid renamed) is refused by the decoder.
 */
static void test_libtraceevent_crashers(void **state)
{
	(void)state;
	static const char segv[] =
		"name: kvm_guest_exit\nID: 1002\nformat:\n" COMMON_FIELDS
		"\tfield:int vcpu_id;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:int trap;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\tfield:u8 ceded;\toffset:32;\tsize:1;\tsigned:0;\n\n"
		"print fmt: \"VCPU %d: trap=0x%x\", REC->vcpu_id, REC->trap, REC->LOCAL\n";
	static const char fpe[] =
		"name: kvm_guest_exit\nID: 1001\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_typ;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int trap;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\tfield:u8 ceded;\toffset:32;\tsize:1;\tsigned:0;\n\n"
		"print fmt: \"msr=0x%lx\", R/C->msr, REC->ceded\n";
	struct evfmt_table t;
	struct decoder d;
	struct ta_err err = { 0 };
	evfmt_table_init(&t, false, 8, 4096);
	t.commit_size = 8;
	assert_int_equal(evfmt_table_event(&t, "kvm_hv", segv, strlen(segv), &err), 1);
	assert_int_equal(decoder_init(&d, &t, &err), 0);
	evfmt_table_init(&t, false, 8, 4096);
	assert_int_equal(evfmt_table_event(&t, "kvm_hv", fpe, strlen(fpe), &err), 1);
	assert_int_equal(decoder_init(&d, &t, &err), -1);
	assert_non_null(strstr(err.msg, "common_pid"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_little),
		cmocka_unit_test(test_layout_big),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_field_lines),
		cmocka_unit_test(test_event_lines),
		cmocka_unit_test(test_header_page),
		cmocka_unit_test(test_libtraceevent_crashers),
		cmocka_unit_test(test_formats_damage),
		cmocka_unit_test(test_event_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
