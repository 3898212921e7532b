/*
 * Unit tests of record decoding without any trace file: event formats are
 * parsed from text into an event table, records are built by hand in either
 * byte order, and decoder_decode must resolve the fields by name, sign-extend
 * s32/int fields, swap big-endian data and refuse records too short for
 * their format.  Also the per-CPU stats parser used for exact losses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/decode.h"
#include "collectors/tdat.h"

/* The uprobe emulation's layout: __probe_ip first, s32 fields. */
static const char uprobe_run_core[] =
	"name: kvmppc_run_core\nID: 2326\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:s32 n_runnable;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:s32 runner_vcpu;\toffset:20;\tsize:4;\tsigned:1;\n"
	"\tfield:s32 where;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:s32 tgid;\toffset:28;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"n_runnable=%d where=%d tgid=%d\", REC->n_runnable, REC->where, REC->tgid\n";

/* An old kernel's guest exit: the trap field is called "reason". */
static const char old_guest_exit[] =
	"name: kvm_guest_exit\nID: 77\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:int vcpu_id;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int reason;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:u8 ceded;\toffset:16;\tsize:1;\tsigned:0;\n\n"
	"print fmt: \"vcpu %d reason %d\", REC->vcpu_id, REC->reason\n";

static void table_with(struct evfmt_table *t, bool big_endian)
{
	struct ta_err err;
	evfmt_table_init(t, big_endian, 8, 4096);
	assert_int_equal(evfmt_table_event(t, "kvm_hv", uprobe_run_core,
					   sizeof(uprobe_run_core) - 1, &err), 1);
	assert_int_equal(evfmt_table_event(t, "kvm_hv", old_guest_exit,
					   sizeof(old_guest_exit) - 1, &err), 1);
}

static void put(unsigned char *p, uint64_t v, int size, bool big)
{
	for (int i = 0; i < size; i++)
		p[big ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static void check_run_core(bool big)
{
	struct evfmt_table t;
	table_with(&t, big);
	struct decoder d;
	struct ta_err err = { 0 };
	assert_int_equal(decoder_init(&d, &t, &err), 0);
	assert_true(decoder_has_events(&d));
	assert_int_equal(d.swap, big);

	unsigned char rec[32] = { 0 };
	put(rec, 2326, 2, big);
	put(rec + 4, 4321, 4, big);
	put(rec + 16, (uint32_t)-3, 4, big);	/* n_runnable -3 */
	put(rec + 20, 7, 4, big);
	put(rec + 24, 1, 4, big);
	put(rec + 28, 999, 4, big);
	struct gang_event ev = { 0 };
	assert_int_equal(decoder_decode(&d, rec, sizeof(rec), &ev), 1);
	assert_int_equal(ev.kind, GANG_EV_RUN_CORE);
	assert_int_equal(ev.pid, 4321);
	assert_int_equal(ev.u.run_core.n_runnable, -3);
	assert_int_equal(ev.u.run_core.runner_vcpu, 7);
	assert_int_equal(ev.u.run_core.where, 1);
	assert_int_equal(ev.u.run_core.tgid, 999);

	/* Too short for tgid: refused and counted, never read past the end. */
	assert_int_equal(decoder_decode(&d, rec, 28, &ev), -1);
	assert_int_equal(d.malformed, 1);

	/* Another event id: not ours. */
	put(rec, 5, 2, big);
	assert_int_equal(decoder_decode(&d, rec, sizeof(rec), &ev), 0);

	/* The "reason" alias and an unsigned u8 ceded of 200. */
	unsigned char ge[20] = { 0 };
	put(ge, 77, 2, big);
	put(ge + 4, 4321, 4, big);
	put(ge + 8, (uint32_t)-1, 4, big);
	put(ge + 12, 0x980, 4, big);
	ge[16] = 200;
	assert_int_equal(decoder_decode(&d, ge, sizeof(ge), &ev), 1);
	assert_int_equal(ev.kind, GANG_EV_GUEST_EXIT);
	assert_int_equal(ev.u.guest_exit.vcpu_id, -1);
	assert_int_equal(ev.u.guest_exit.trap, 0x980);
	assert_int_equal(ev.u.guest_exit.ceded, 200);
}

static void test_little_endian(void **state)
{
	check_run_core(false);
}

static void test_big_endian(void **state)
{
	check_run_core(true);
}

static void test_missing_field(void **state)
{
	static const char bad[] =
		"name: kvmppc_run_core\nID: 9\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int n_runnable;\toffset:8;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"%d\", REC->n_runnable\n";
	struct evfmt_table t;
	struct decoder d;
	struct ta_err err = { 0 };
	evfmt_table_init(&t, false, 8, 4096);
	assert_int_equal(evfmt_table_event(&t, "kvm_hv", bad, sizeof(bad) - 1, &err), 1);
	assert_int_equal(decoder_init(&d, &t, &err), -1);
	assert_non_null(strstr(err.msg, "no field 'where'"));
}

/*
 * Every event's record starts with the same header: formats that put
 * common_type or common_pid elsewhere in one event are refused, since the
 * type is read before the event is known.
 */
static void test_common_fields_disagree(void **state)
{
	static const char moved[] =
		"name: kvm_guest_exit\nID: 78\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:8;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int trap;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\tfield:u8 ceded;\toffset:16;\tsize:1;\tsigned:0;\n";
	struct evfmt_table t;
	struct decoder d;
	struct ta_err err = { 0 };
	evfmt_table_init(&t, false, 8, 4096);
	assert_int_equal(evfmt_table_event(&t, "kvm_hv", uprobe_run_core,
					   sizeof(uprobe_run_core) - 1, &err), 1);
	assert_int_equal(evfmt_table_event(&t, "kvm_hv", moved, sizeof(moved) - 1, &err), 1);
	assert_int_equal(decoder_init(&d, &t, &err), -1);
	assert_non_null(strstr(err.msg, "disagree"));
}

/*
 * The real x86 formats (tests/fixtures/real/svm-*.format, print fmt cut):
 * a KVM_RUN that failed is decoded as its errno, not the stale reason the
 * kernel records with it, and x86 records leave the process unknown.
 */
static void test_x86_userspace_errno(void **state)
{
	static const char user_exit[] =
		"name: kvm_userspace_exit\nID: 1413\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:__u32 reason;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:int errno;\toffset:12;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"reason %u (%d)\", REC->reason, REC->errno\n";
	struct evfmt_table t;
	table_with(&t, false);
	struct decoder d;
	struct ta_err err = { 0 };
	assert_int_equal(evfmt_table_event(&t, "kvm", user_exit, sizeof(user_exit) - 1, &err), 1);
	assert_int_equal(decoder_init(&d, &t, &err), 0);

	unsigned char rec[16] = { 0 };
	put(rec, 1413, 2, false);
	put(rec + 4, 108, 4, false);
	put(rec + 8, 2, 4, false);		/* KVM_EXIT_IO */
	struct gang_event ev = { 0 };
	assert_int_equal(decoder_decode(&d, rec, sizeof(rec), &ev), 1);
	assert_int_equal(ev.kind, GANG_EV_USERSPACE_EXIT);
	assert_int_equal(ev.u.userspace_exit.reason, 2);
	assert_int_equal(ev.tgid, 0);	/* x86 records name no process */
	put(rec + 12, (uint32_t)-4, 4, false);	/* -EINTR: immediate_exit */
	assert_int_equal(decoder_decode(&d, rec, sizeof(rec), &ev), 1);
	assert_int_equal(ev.u.userspace_exit.reason, -4);
	/* errno is part of the format: a record without it is short. */
	assert_int_equal(decoder_decode(&d, rec, 12, &ev), -1);
}

static void test_stats_lost(void **state)
{
	assert_int_equal(tdat_stats_lost("CPU: 0\nentries: 5\noverrun: 3\ncommit overrun: 1\n"
					 "bytes: 9\ndropped events: 10\nread events: 4\n"), 14);
	assert_int_equal(tdat_stats_lost("entries: 5\noverrun: 0\n"), 0);
	assert_int_equal(tdat_stats_lost("\nBuffer: foo\n\n"), -1);
	assert_int_equal(tdat_stats_lost(NULL), -1);
	/* "commit overrun" must not be read as "overrun". */
	assert_int_equal(tdat_stats_lost("commit overrun: 2\n"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_little_endian),
		cmocka_unit_test(test_big_endian),
		cmocka_unit_test(test_missing_field),
		cmocka_unit_test(test_common_fields_disagree),
		cmocka_unit_test(test_x86_userspace_errno),
		cmocka_unit_test(test_stats_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
