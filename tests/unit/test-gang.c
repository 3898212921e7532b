/*
 * Unit tests of the pure gang counter: scripted event sequences with answers
 * worked out by hand, including the multi-vcore cases where the seed's
 * per-tgid rule and the per-vcore rule disagree (DESIGN §4.3).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/gang.h"
#include "collectors/traps.h"

static uint64_t now;

static void enter(struct gang_counter *g, int pid, int tgid, int n_runnable)
{
	struct gang_event ev = { .kind = GANG_EV_RUN_CORE, .pid = pid, .ts = ++now };
	ev.u.run_core.n_runnable = n_runnable;
	ev.u.run_core.where = 0;
	ev.u.run_core.tgid = tgid;
	gang_feed(g, &ev);
}

static void leave(struct gang_counter *g, int pid, int tgid, int n_runnable)
{
	struct gang_event ev = { .kind = GANG_EV_RUN_CORE, .pid = pid, .ts = ++now };
	ev.u.run_core.n_runnable = n_runnable;
	ev.u.run_core.where = 1;
	ev.u.run_core.tgid = tgid;
	gang_feed(g, &ev);
}

static void gexit(struct gang_counter *g, int pid, int vcpu, int64_t trap, int ceded)
{
	struct gang_event ev = { .kind = GANG_EV_GUEST_EXIT, .pid = pid, .ts = ++now };
	ev.u.guest_exit.vcpu_id = vcpu;
	ev.u.guest_exit.trap = trap;
	ev.u.guest_exit.ceded = ceded;
	gang_feed(g, &ev);
}

static uint64_t reason_count(const struct gang_result *r, enum exit_source src, int64_t code,
			     int32_t tgid, int64_t vcpu)
{
	for (size_t i = 0; i < r->nreasons; i++) {
		const struct gang_reason *x = &r->reasons[i];
		if (x->source == src && x->code == code && x->tgid == tgid && x->vcpu == vcpu)
			return x->count;
	}
	return 0;
}

/* One vcore, two runs: the first has a ceded thread (forced 1), the second not. */
static void test_one_vcore(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	enter(g, 101, 100, 2);
	gexit(g, 101, 0, 0x980, 0);
	gexit(g, 101, 1, 0xc00, 1);
	leave(g, 101, 100, 2);
	enter(g, 101, 100, 2);
	gexit(g, 101, 0, 0x500, 0);
	gexit(g, 101, 1, 0x980, 0);
	leave(g, 101, 100, 2);

	struct gang_result r;
	gang_result_get(g, &r);
	assert_int_equal(r.events, 8);
	assert_int_equal(r.run_core_events, 4);
	assert_int_equal(r.nprocs, 1);
	struct gang_proc *p = gang_result_proc(&r, 100);
	assert_non_null(p);
	assert_int_equal(p->gang_exits, 1);
	assert_int_equal(p->core_runs, 2);
	assert_int_equal(p->bailouts, 0);
	assert_int_equal(p->guest_exits, 4);
	assert_int_equal(p->cedes, 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, 0x980, 100, 0), 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, 0x980, 100, 1), 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, 0xc00, 100, 1), 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, 0x500, 100, 0), 1);
	gang_result_release(&r);
	gang_free(g);
}

/*
 * One VM (tgid 100), two vcores run by threads 101 and 102 at once.  102's
 * Enter resets the seed's per-tgid cede count that 101's run still needs
 * (seed over-counts), and 102's cede is charged to 101's run (seed
 * under-counts).  Truth per vcore: run A forced 1 (no), run B forced 2 (yes),
 * run C forced 2 (yes), run D forced 1 (no).
 */
static void run_interleaved(struct gang_counter *g)
{
	/* A (101) and B (102) overlap; B's Enter comes after A's cede. */
	enter(g, 101, 100, 2);
	gexit(g, 101, 0, 0x980, 1);
	enter(g, 102, 100, 2);
	gexit(g, 101, 1, 0x980, 0);
	leave(g, 101, 100, 2);		/* truth 2-1=1 no; seed 2-0=2 yes */
	gexit(g, 102, 2, 0x500, 0);
	gexit(g, 102, 3, 0x500, 0);
	leave(g, 102, 100, 2);		/* truth 2 yes; seed 2 yes */
	/* C (101) and D (102) overlap; D's cede lands in the shared count. */
	enter(g, 101, 100, 2);
	enter(g, 102, 100, 2);
	gexit(g, 102, 2, 0xe00, 1);
	gexit(g, 101, 0, 0xe00, 0);
	gexit(g, 101, 1, 0xe00, 0);
	leave(g, 101, 100, 2);		/* truth 2 yes; seed 2-1=1 no */
	gexit(g, 102, 3, 0xe00, 0);
	leave(g, 102, 100, 2);		/* truth 2-1=1 no; seed 2-1=1 no */
}

static void test_multi_vcore_vcore_rule(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	run_interleaved(g);
	struct gang_result r;
	gang_result_get(g, &r);
	struct gang_proc *p = gang_result_proc(&r, 100);
	assert_non_null(p);
	assert_int_equal(p->gang_exits, 2);
	assert_int_equal(p->core_runs, 4);
	assert_int_equal(p->guest_exits, 8);
	assert_int_equal(p->cedes, 2);
	assert_int_equal(r.algorithm, GANG_ALGO_VCORE);
	gang_result_release(&r);
	gang_free(g);
}

static void test_multi_vcore_seed_rule(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_SEED);
	run_interleaved(g);
	struct gang_result r;
	gang_result_get(g, &r);
	struct gang_proc *p = gang_result_proc(&r, 100);
	assert_non_null(p);
	assert_int_equal(p->gang_exits, 2);	/* B and A: right total, wrong runs */
	gang_result_release(&r);
	gang_free(g);

	/* Where the errors do not cancel: only the C/D half. */
	g = gang_new(GANG_ALGO_SEED);
	enter(g, 101, 100, 2);
	enter(g, 102, 100, 2);
	gexit(g, 102, 2, 0xe00, 1);
	gexit(g, 101, 0, 0xe00, 0);
	gexit(g, 101, 1, 0xe00, 0);
	leave(g, 101, 100, 2);
	gexit(g, 102, 3, 0xe00, 0);
	leave(g, 102, 100, 2);
	gang_result_get(g, &r);
	assert_int_equal(gang_result_proc(&r, 100)->gang_exits, 0);
	gang_result_release(&r);
	gang_free(g);

	g = gang_new(GANG_ALGO_VCORE);
	enter(g, 101, 100, 2);
	enter(g, 102, 100, 2);
	gexit(g, 102, 2, 0xe00, 1);
	gexit(g, 101, 0, 0xe00, 0);
	gexit(g, 101, 1, 0xe00, 0);
	leave(g, 101, 100, 2);
	gexit(g, 102, 3, 0xe00, 0);
	leave(g, 102, 100, 2);
	gang_result_get(g, &r);
	assert_int_equal(gang_result_proc(&r, 100)->gang_exits, 1);
	gang_result_release(&r);
	gang_free(g);
}

/* Exit with no Enter on that runner: a bail-out, never a gang exit. */
static void test_bailout(void **state)
{
	for (int algo = GANG_ALGO_VCORE; algo <= GANG_ALGO_SEED; algo++) {
		struct gang_counter *g = gang_new(algo);
		leave(g, 201, 200, 8);
		enter(g, 201, 200, 4);
		leave(g, 201, 200, 4);	/* forced 4: gang */
		leave(g, 201, 200, 4);	/* second Exit without Enter: bail-out */
		struct gang_result r;
		gang_result_get(g, &r);
		struct gang_proc *p = gang_result_proc(&r, 200);
		assert_non_null(p);
		assert_int_equal(p->bailouts, 2);
		assert_int_equal(p->core_runs, 1);
		if (algo == GANG_ALGO_VCORE)
			assert_int_equal(p->gang_exits, 1);
		else	/* the seed compares every Exit of a known tgid */
			assert_int_equal(p->gang_exits, 2);
		gang_result_release(&r);
		gang_free(g);
	}
}

/* Two VMs on separate runners: counts never mix. */
static void test_two_vms(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	for (int i = 0; i < 10; i++) {
		enter(g, 301, 300, 4);
		enter(g, 401, 400, 1);
		gexit(g, 301, 0, 0x980, 0);
		gexit(g, 401, 0, 0x980, 0);
		gexit(g, 301, 1, 0x980, 1);
		gexit(g, 301, 2, 0x980, 1);
		gexit(g, 301, 3, 0x980, i % 2);
		leave(g, 401, 400, 1);		/* one thread: never ganged */
		leave(g, 301, 300, 4);		/* forced 2 on even i, 1 on odd */
	}
	struct gang_result r;
	gang_result_get(g, &r);
	assert_int_equal(r.nprocs, 2);
	assert_int_equal(r.procs[0].tgid, 300);
	assert_int_equal(r.procs[1].tgid, 400);
	assert_int_equal(r.procs[0].gang_exits, 5);
	assert_int_equal(r.procs[0].core_runs, 10);
	assert_int_equal(r.procs[0].cedes, 25);
	assert_int_equal(r.procs[1].gang_exits, 0);
	assert_int_equal(r.procs[1].guest_exits, 10);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, 0x980, 300, 3), 10);
	gang_result_release(&r);
	gang_free(g);
}

/* Negative fields (s32 sign extension): no gang, odd codes counted as is. */
static void test_negative_values(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	enter(g, 501, -5, -3);
	gexit(g, 501, -1, -1, 0);
	gexit(g, 501, 0, 0x7fffffff, 0);
	leave(g, 501, -5, -3);
	struct gang_result r;
	gang_result_get(g, &r);
	struct gang_proc *p = gang_result_proc(&r, -5);
	assert_non_null(p);
	assert_int_equal(p->gang_exits, 0);
	assert_int_equal(p->core_runs, 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, -1, -5, -1), 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, 0x7fffffff, -5, 0), 1);
	char buf[32];
	assert_string_equal(traps_format(EXIT_SRC_POWER, -1, buf, sizeof(buf)), "-0x1");
	assert_string_equal(traps_format(EXIT_SRC_POWER, 0x7fffffff, buf, sizeof(buf)),
			    "0x7fffffff");
	gang_result_release(&r);
	gang_free(g);
}

/* Guest exits from a thread never seen in run_core go to tgid 0. */
static void test_unknown_runner(void **state)
{
	/* No kvmppc_run_core at all (POWER9): the vCPU thread is the process. */
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	gexit(g, 601, 0, 0x980, 1);
	struct gang_result r;
	gang_result_get(g, &r);
	assert_null(gang_result_proc(&r, 0));
	struct gang_proc *p = gang_result_proc(&r, 601);
	assert_non_null(p);
	assert_int_equal(p->guest_exits, 1);
	assert_int_equal(r.run_core_events, 0);
	gang_result_release(&r);
	/* Once runners are known (POWER8), a thread that never ran a vcore is unknown: 0. */
	enter(g, 602, 600, 1);
	leave(g, 602, 600, 1);
	gexit(g, 601, 0, 0x980, 1);
	gang_result_get(g, &r);
	p = gang_result_proc(&r, 0);
	assert_non_null(p);
	assert_int_equal(p->guest_exits, 1);
	gang_result_release(&r);
	gang_free(g);
}

static void test_x86_reasons(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	struct gang_event ev = { .kind = GANG_EV_KVM_EXIT, .pid = 701, .tgid = 700 };
	ev.u.kvm_exit.isa = EXIT_SRC_VMX;
	ev.u.kvm_exit.vcpu_id = 1;
	for (int i = 0; i < 3; i++) {
		ev.ts = ++now;
		ev.u.kvm_exit.reason = 12;	/* HLT */
		gang_feed(g, &ev);
	}
	ev.u.kvm_exit.reason = 30;
	gang_feed(g, &ev);
	ev.u.kvm_exit.isa = EXIT_SRC_SVM;
	ev.u.kvm_exit.reason = 0x78;
	ev.u.kvm_exit.vcpu_id = GANG_VCPU_UNKNOWN;
	gang_feed(g, &ev);
	struct gang_event ue = { .kind = GANG_EV_USERSPACE_EXIT, .pid = 701, .tgid = 700 };
	ue.u.userspace_exit.reason = 2;
	ue.u.userspace_exit.vcpu_id = 1;
	gang_feed(g, &ue);

	struct gang_result r;
	gang_result_get(g, &r);
	assert_int_equal(r.run_core_events, 0);
	assert_int_equal(reason_count(&r, EXIT_SRC_VMX, 12, 700, 1), 3);
	assert_int_equal(reason_count(&r, EXIT_SRC_VMX, 30, 700, 1), 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_SVM, 0x78, 700, GANG_VCPU_UNKNOWN), 1);
	assert_int_equal(reason_count(&r, EXIT_SRC_USERSPACE, 2, 700, 1), 1);
	assert_int_equal(gang_result_proc(&r, 700)->guest_exits, 5);
	/* Sorted by source, then code. */
	assert_int_equal(r.reasons[0].source, EXIT_SRC_VMX);
	assert_int_equal(r.reasons[0].code, 12);
	gang_result_release(&r);
	gang_free(g);
}

/* A kvm_userspace_exit whose reader knew no tgid (a trace-cmd file from a
 * POWER host) belongs to the process its runner thread's run_core named. */
static void test_userspace_exit_runner_tgid(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	struct gang_event ue = { .kind = GANG_EV_USERSPACE_EXIT, .pid = 94, .tgid = 0 };
	ue.u.userspace_exit.reason = 19;	/* PAPR_HCALL */
	ue.u.userspace_exit.vcpu_id = GANG_VCPU_UNKNOWN;
	for (int i = 0; i < 2; i++) {
		enter(g, 94, 94, 1);
		gexit(g, 94, 0, 0xc00, 0);
		leave(g, 94, 94, 1);
		ue.ts = ++now;
		gang_feed(g, &ue);
	}
	/* A thread no run_core named stands in for its unknown process, at
	 * every exit (a real POWER8 trace: the vCPU thread that never ran
	 * its vcore makes all the hypercalls to user space), and its guest
	 * exits before a run_core stay unknown (tgid 0) every time too. */
	ue.pid = 500;
	for (int i = 0; i < 3; i++) {
		ue.ts = ++now;
		gang_feed(g, &ue);
	}
	gexit(g, 501, 1, 0x980, 0);
	gexit(g, 501, 1, 0x980, 0);

	struct gang_result r;
	gang_result_get(g, &r);
	assert_int_equal(reason_count(&r, EXIT_SRC_USERSPACE, 19, 94, GANG_VCPU_UNKNOWN), 2);
	assert_int_equal(reason_count(&r, EXIT_SRC_USERSPACE, 19, 500, GANG_VCPU_UNKNOWN), 3);
	assert_int_equal(reason_count(&r, EXIT_SRC_USERSPACE, 19, 0, GANG_VCPU_UNKNOWN), 0);
	assert_int_equal(reason_count(&r, EXIT_SRC_POWER, 0x980, 0, 1), 2);
	assert_int_equal(gang_result_proc(&r, 0)->guest_exits, 2);
	assert_null(gang_result_proc(&r, 501));
	assert_int_equal(gang_result_proc(&r, 94)->core_runs, 2);
	assert_int_equal(gang_result_proc(&r, 94)->bailouts, 0);
	gang_result_release(&r);
	gang_free(g);
}

/* x86 events whose process the reader cannot tell (tgid 0): each thread stands in. */
static void test_x86_unknown_tgid(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	struct gang_event ev = { .kind = GANG_EV_KVM_EXIT };
	ev.u.kvm_exit.isa = EXIT_SRC_SVM;
	ev.u.kvm_exit.reason = 0x7b;
	for (int i = 0; i < 6; i++) {
		ev.pid = 801 + i % 3;
		ev.tgid = ev.pid == 803 ? 800 : 0;	/* 803's process is known */
		ev.u.kvm_exit.vcpu_id = i % 3;
		ev.ts = ++now;
		gang_feed(g, &ev);
	}
	struct gang_event ue = { .kind = GANG_EV_USERSPACE_EXIT, .pid = 801, .ts = ++now };
	ue.u.userspace_exit.reason = -4;
	ue.u.userspace_exit.vcpu_id = GANG_VCPU_UNKNOWN;
	gang_feed(g, &ue);

	struct gang_result r;
	gang_result_get(g, &r);
	assert_int_equal(r.nprocs, 3);
	assert_null(gang_result_proc(&r, 0));
	assert_int_equal(gang_result_proc(&r, 800)->guest_exits, 2);
	assert_int_equal(gang_result_proc(&r, 801)->guest_exits, 2);
	assert_int_equal(gang_result_proc(&r, 802)->guest_exits, 2);
	assert_int_equal(reason_count(&r, EXIT_SRC_SVM, 0x7b, 802, 1), 2);
	assert_int_equal(reason_count(&r, EXIT_SRC_USERSPACE, -4, 801, GANG_VCPU_UNKNOWN), 1);
	gang_result_release(&r);
	gang_free(g);
}

static void test_names(void **state)
{
	char buf[32];
	assert_string_equal(traps_name(EXIT_SRC_POWER, 0x980), "HV_DECREMENTER");
	assert_string_equal(traps_name(EXIT_SRC_POWER, 0x5555), "HV_RM_HARD");
	assert_string_equal(traps_name(EXIT_SRC_POWER, 0), "HANDLED_IN_KERNEL");
	assert_null(traps_name(EXIT_SRC_POWER, 0x123));
	assert_string_equal(traps_format(EXIT_SRC_POWER, 0x123, buf, sizeof(buf)), "0x123");
	assert_string_equal(traps_name(EXIT_SRC_VMX, 12), "HLT");
	assert_string_equal(traps_name(EXIT_SRC_VMX, 48), "EPT_VIOLATION");
	assert_string_equal(traps_name(EXIT_SRC_VMX, 0x80000021), "INVALID_STATE");
	assert_string_equal(traps_name(EXIT_SRC_SVM, 0x4e), "EXCP_PF");
	assert_string_equal(traps_name(EXIT_SRC_SVM, 0x400), "NPF");
	assert_string_equal(traps_name(EXIT_SRC_SVM, 0x1), "READ_CR1");
	assert_string_equal(traps_name(EXIT_SRC_USERSPACE, 6), "MMIO");
	assert_null(traps_name(EXIT_SRC_USERSPACE, 1000));
	/* Real kvm_exit records: SVM_EXIT_ERR in a 32-bit field; a failed KVM_RUN. */
	assert_string_equal(traps_name(EXIT_SRC_SVM, 0xffffffff), "ERR");
	assert_string_equal(traps_name(EXIT_SRC_SVM, -1), "ERR");
	assert_string_equal(traps_name(EXIT_SRC_USERSPACE, -4), "RESTART");
	assert_null(traps_name(EXIT_SRC_USERSPACE, -14));
	assert_string_equal(traps_format(EXIT_SRC_USERSPACE, -14, buf, sizeof(buf)), "-0xe");
	enum gang_algorithm a;
	assert_int_equal(gang_algorithm_parse("seed", &a), 0);
	assert_int_equal(a, GANG_ALGO_SEED);
	assert_int_equal(gang_algorithm_parse("vcore", &a), 0);
	assert_int_equal(a, GANG_ALGO_VCORE);
	assert_int_equal(gang_algorithm_parse("per-tgid", &a), -1);
}

/* Many runners: the tables grow and keep every count. */
static void test_many_runners(void **state)
{
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	for (int pid = 1000; pid < 3000; pid++) {
		enter(g, pid, pid / 10, 3);
		gexit(g, pid, pid % 7, 0x900 + pid % 5, 0);
		leave(g, pid, pid / 10, 3);
	}
	struct gang_result r;
	gang_result_get(g, &r);
	assert_int_equal(r.nprocs, 200);
	uint64_t gangs = 0, reasons = 0;
	for (size_t i = 0; i < r.nprocs; i++)
		gangs += r.procs[i].gang_exits;
	for (size_t i = 0; i < r.nreasons; i++)
		reasons += r.reasons[i].count;
	assert_int_equal(gangs, 2000);
	assert_int_equal(reasons, 2000);
	gang_result_release(&r);
	gang_free(g);
}

/* Damage notes join with "; " and are cut with "..." rather than overflow. */
/*
 * Exit handling time as a table of scripted cases: each step is an x86 exit
 * (X) or entry (N) of (thread, vCPU) at a time, or a loss (L, until a time);
 * the answer is the reason's timed pairs, total, min and max, and the
 * counter's untimed kinds.
 */
struct tstep {
	char op;	/* X exit, N entry, L lost (ts: until), P POWER exit, E POWER entry */
	int pid, vcpu;
	uint64_t ts;
};

struct tcase {
	const char *name;
	bool expect;		/* gang_expect_entries called */
	struct tstep steps[12];
	uint64_t pairs, total, min, max, unmatched, gap, unpaired;
};

static const struct tcase time_cases[] = {
	{ "one pair", true, { { 'X', 7, 0, 100 }, { 'N', 7, 0, 130 } }, 1, 30, 30, 30, 0, 0, 0 },
	{ "two pairs: min, max, total", true,
	  { { 'X', 7, 0, 100 }, { 'N', 7, 0, 110 }, { 'X', 7, 0, 200 }, { 'N', 7, 0, 250 } },
	  2, 60, 10, 50, 0, 0, 0 },
	{ "entry first: unpaired", true, { { 'N', 7, 0, 90 }, { 'X', 7, 0, 100 },
					   { 'N', 7, 0, 105 } }, 1, 5, 5, 5, 0, 0, 1 },
	{ "exit, exit: the first is unmatched", true,
	  { { 'X', 7, 0, 100 }, { 'X', 7, 0, 200 }, { 'N', 7, 0, 220 } }, 1, 20, 20, 20, 1, 0, 0 },
	{ "exit at the end: unmatched", true, { { 'X', 7, 0, 100 } }, 0, 0, 0, 0, 1, 0, 0 },
	{ "vCPUs pair apart", true,
	  { { 'X', 7, 0, 100 }, { 'X', 7, 1, 101 }, { 'N', 7, 1, 103 }, { 'N', 7, 0, 140 } },
	  2, 42, 2, 40, 0, 0, 0 },
	{ "threads (VMs) pair apart", true,
	  { { 'X', 7, 0, 100 }, { 'X', 8, 0, 110 }, { 'N', 8, 0, 111 }, { 'N', 7, 0, 150 } },
	  2, 51, 1, 50, 0, 0, 0 },
	{ "loss between exit and entry: not timed", true,
	  { { 'X', 7, 0, 100 }, { 'L', 0, 0, 300 }, { 'N', 7, 0, 400 }, { 'X', 7, 0, 500 },
	    { 'N', 7, 0, 510 } }, 1, 10, 10, 10, 0, 1, 0 },
	{ "exit inside a gap's span: not timed", true,
	  { { 'L', 0, 0, 300 }, { 'X', 7, 0, 200 }, { 'N', 7, 0, 310 } }, 0, 0, 0, 0, 0, 1, 0 },
	{ "loss before the exit: timed", true,
	  { { 'L', 0, 0, 50 }, { 'X', 7, 0, 100 }, { 'N', 7, 0, 120 } }, 1, 20, 20, 20, 0, 0, 0 },
	{ "no entries expected: nothing timed", false,
	  { { 'X', 7, 0, 100 }, { 'N', 7, 0, 130 } }, 0, 0, 0, 0, 0, 0, 0 },
	{ "POWER: the runner's VM pairs across runner threads", true,
	  { { 'P', 50, 1, 100 }, { 'E', 51, 1, 160 } }, 1, 60, 60, 60, 0, 0, 0 },
};

/* The events a case feeds (losses are not events). */
static uint64_t now_fed(const struct tcase *k)
{
	uint64_t n = 0;
	for (size_t i = 0; i < 12 && k->steps[i].op; i++)
		n += k->steps[i].op != 'L';
	return n;
}

static void feed_step(struct gang_counter *g, const struct tstep *s)
{
	struct gang_event ev = { .pid = s->pid, .ts = s->ts };
	switch (s->op) {
	case 'X':
		ev.kind = GANG_EV_KVM_EXIT;
		ev.u.kvm_exit.isa = EXIT_SRC_VMX;
		ev.u.kvm_exit.reason = 12;
		ev.u.kvm_exit.vcpu_id = s->vcpu;
		break;
	case 'N':
		ev.kind = GANG_EV_KVM_ENTRY;
		ev.u.entry.vcpu_id = s->vcpu;
		break;
	case 'P':
		ev.kind = GANG_EV_GUEST_EXIT;
		ev.u.guest_exit.vcpu_id = s->vcpu;
		ev.u.guest_exit.trap = 12;
		break;
	case 'E':
		ev.kind = GANG_EV_GUEST_ENTER;
		ev.u.entry.vcpu_id = s->vcpu;
		break;
	default:
		gang_lost(g, s->ts);
		return;
	}
	gang_feed(g, &ev);
}

static void test_exit_times(void **state)
{
	for (size_t c = 0; c < sizeof(time_cases) / sizeof(time_cases[0]); c++) {
		const struct tcase *k = &time_cases[c];
		struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
		if (k->expect)
			gang_expect_entries(g);
		if (k->steps[0].op == 'P' || k->steps[0].op == 'E') {
			/* Runner threads 50 and 51 of VM 500 (POWER8 style). */
			enter(g, 50, 500, 1);
			leave(g, 50, 500, 1);
			enter(g, 51, 500, 1);
			leave(g, 51, 500, 1);
		}
		for (size_t i = 0; i < 12 && k->steps[i].op; i++)
			feed_step(g, &k->steps[i]);
		struct gang_result r;
		gang_result_get(g, &r);
		uint64_t pairs = 0, total = 0, min = 0, max = 0;
		for (size_t i = 0; i < r.nreasons; i++)
			if (r.reasons[i].code == 12 && r.reasons[i].time_pairs) {
				pairs += r.reasons[i].time_pairs;
				total += r.reasons[i].time_total_ns;
				if (!min || r.reasons[i].time_min_ns < min)
					min = r.reasons[i].time_min_ns;
				if (r.reasons[i].time_max_ns > max)
					max = r.reasons[i].time_max_ns;
			}
		print_message("case: %s\n", k->name);
		assert_int_equal(r.timed, k->expect);
		assert_int_equal(pairs, k->pairs);
		assert_int_equal(r.time_pairs, k->pairs);
		assert_int_equal(total, k->total);
		assert_int_equal(min, k->min);
		assert_int_equal(max, k->max);
		assert_int_equal(r.time_unmatched, k->unmatched);
		assert_int_equal(r.time_gap, k->gap);
		assert_int_equal(r.time_unpaired_entries, k->unpaired);
		/* Entries are not KVM events: events counts exits (and run_core) only. */
		assert_int_equal(r.events + r.entry_events, now_fed(k) + (k->steps[0].op == 'P' ||
									k->steps[0].op == 'E' ? 4 : 0));
		gang_result_release(&r);
		gang_free(g);
	}
	(void)state;
}

/* The quarter-octave histogram: bucket bounds and a percentile read from them. */
static void test_time_hist(void **state)
{
	struct gang_time_hist h = { 0 };
	assert_int_equal(gang_hist_low(7), 7);
	assert_int_equal(gang_hist_low(8), 8);
	assert_int_equal(gang_hist_low(9), 10);
	assert_int_equal(gang_hist_low(12), 16);
	/* 99 times of 1000 ns and one of 100000 ns: p50 in 1000's bucket [896, 1024). */
	struct gang_counter *g = gang_new(GANG_ALGO_VCORE);
	gang_expect_entries(g);
	for (int i = 0; i < 100; i++) {
		struct tstep x = { 'X', 7, 0, 1000000 * (uint64_t)(i + 1) };
		struct tstep n = { 'N', 7, 0, x.ts + (i == 99 ? 100000 : 1000) };
		feed_step(g, &x);
		feed_step(g, &n);
	}
	struct gang_result r;
	gang_result_get(g, &r);
	assert_int_equal(r.nhists, 1);
	h = r.hists[0];
	assert_int_equal(gang_hist_quantile(&h, 100, 0.5, 100000), 1023);
	assert_int_equal(gang_hist_quantile(&h, 100, 0.99, 100000), 1023);
	assert_int_equal(gang_hist_quantile(&h, 100, 1.0, 100000), 100000);
	assert_int_equal(gang_hist_quantile(&h, 0, 0.5, 100000), 0);
	gang_result_release(&r);
	gang_free(g);
	(void)state;
}

static void test_damage_notes(void **state)
{
	(void)state;
	struct gang_result r = { 0 };
	gang_result_damage(&r, "CPU %d: %d pages hold no records", 1, 3);
	gang_result_damage(&r, "time goes backwards");
	assert_string_equal(r.damage, "CPU 1: 3 pages hold no records; time goes backwards");
	for (int i = 0; i < 40; i++)
		gang_result_damage(&r, "note %d of many", i);
	assert_int_equal(strlen(r.damage), sizeof(r.damage) - 1);
	assert_string_equal(r.damage + sizeof(r.damage) - 4, "...");
	assert_non_null(strstr(r.damage, "CPU 1: 3 pages"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_vcore),
		cmocka_unit_test(test_multi_vcore_vcore_rule),
		cmocka_unit_test(test_multi_vcore_seed_rule),
		cmocka_unit_test(test_bailout),
		cmocka_unit_test(test_two_vms),
		cmocka_unit_test(test_negative_values),
		cmocka_unit_test(test_unknown_runner),
		cmocka_unit_test(test_x86_reasons),
		cmocka_unit_test(test_x86_unknown_tgid),
		cmocka_unit_test(test_userspace_exit_runner_tgid),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_many_runners),
		cmocka_unit_test(test_damage_notes),
		cmocka_unit_test(test_exit_times),
		cmocka_unit_test(test_time_hist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
