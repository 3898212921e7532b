/*
 * Unit tests for where a host knob exists: knob_available over the knob
 * table, as a table of cases (every knob on POWER8, POWER9 and POWER10
 * hosts with old and new kernels, an x86 host and a host whose facts are
 * unknown), the cpuinfo/osrelease parser, and knob_supported on fake roots
 * with and without those files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiments/hostprobe.h"
#include "experiments/knobs.h"
#include "model/knob-table.h"
#include "util/strbuf.h"

/* As in tests/fixtures/real/power9/cpuinfo (QEMU powernv9) and real hosts. */
#define CPUINFO_P8 "processor\t: 0\ncpu\t\t: POWER8E (raw), altivec supported\n" \
		   "clock\t\t: 3690.000000MHz\nrevision\t: 2.1 (pvr 004b 0201)\n"
#define CPUINFO_P9 "cpu\t\t: POWER9, altivec supported\nmodel\t\t: IBM PowerNV " \
		   "(emulated by qemu)\nplatform\t: PowerNV\nrevision\t: 2.0 (pvr 004e 1200)\n"
#define CPUINFO_P10 "processor\t: 0\ncpu\t\t: POWER10 (architected), altivec supported\n"
#define CPUINFO_X86 "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n" \
		    "model name\t: Intel(R) Xeon(R) CPU\ncpu cores\t: 2\n"

enum host { P8_61, P9_510, P9_61, P10_61, X86_61, UNKNOWN, NHOSTS };

static const struct {
	const char *cpuinfo, *osrelease, *machine;
} hosts[NHOSTS] = {
	[P8_61] = { CPUINFO_P8, "6.1.0-13-powerpc64le\n", "ppc64le" },
	[P9_510] = { CPUINFO_P9, "5.10.0-26-powerpc64le\n", "ppc64le" },
	[P9_61] = { CPUINFO_P9, "6.1.0\n", NULL },
	[P10_61] = { CPUINFO_P10, "6.1.55\n", "ppc64le" },
	[X86_61] = { CPUINFO_X86, "6.1.0-13-amd64\n", "x86_64" },
	[UNKNOWN] = { NULL, NULL, NULL },
};

#define OK NULL
static const struct {
	const char *knob;
	const char *why[NHOSTS];	/* OK: available */
} cases[] = {
	{ "smt", { OK, OK, OK, OK, OK, OK } },
	{ "thp", { OK, OK, OK, OK, OK, OK } },
	{ "ksm", { OK, OK, OK, OK, OK, OK } },
	{ "numa_balancing", { OK, OK, OK, OK, OK, OK } },
	{ "sched_autogroup", { OK, OK, OK, OK, OK, OK } },
	{ "subcores_per_core", { OK,
		"POWER8 only (this CPU is POWER9)", "POWER8 only (this CPU is POWER9)",
		"POWER8 only (this CPU is POWER10)", "POWER8 only (this CPU is x86_64)", OK } },
	{ "kvm_hv.dynamic_mt_modes", { OK,
		"POWER7 or POWER8 only (this CPU is POWER9)",
		"POWER7 or POWER8 only (this CPU is POWER9)",
		"POWER7 or POWER8 only (this CPU is POWER10)",
		"POWER7 or POWER8 only (this CPU is x86_64)", OK } },
	{ "kvm_hv.target_smt_mode", { OK,
		"POWER7 or POWER8 only (this CPU is POWER9)",
		"POWER7 or POWER8 only (this CPU is POWER9)",
		"POWER7 or POWER8 only (this CPU is POWER10)",
		"POWER7 or POWER8 only (this CPU is x86_64)", OK } },
	{ "kvm_hv.indep_threads_mode", { "POWER9 only (this CPU is POWER8)", OK,
		"removed in Linux 5.14 (this kernel is 6.1)",
		"POWER9 only (this CPU is POWER10)", "POWER9 only (this CPU is x86_64)", OK } },
	{ "kvm_hv.one_vm_per_core", { OK, OK,
		"on POWER9 removed in Linux 5.14 (this kernel is 6.1)",
		"only on POWER8 and older or POWER9 before Linux 5.14 (this CPU is POWER10)",
		"only on POWER8 and older or POWER9 before Linux 5.14 (this CPU is x86_64)",
		OK } },
};

static void test_every_knob_on_every_host(void **state)
{
	(void)state;
	/* Every knob of the table has its row: a new knob must say where it exists. */
	assert_int_equal(sizeof(cases) / sizeof(cases[0]), knob_count());
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct knob *k = knob_find(cases[c].knob);
		assert_non_null(k);
		for (int h = 0; h < NHOSTS; h++) {
			struct knob_host facts;
			knob_host_parse(&facts, hosts[h].cpuinfo, hosts[h].osrelease,
					hosts[h].machine);
			struct strbuf why = STRBUF_INIT;
			bool ok = knob_available(k, &facts, &why);
			const char *want = cases[c].why[h];
			if (ok != !want || (want && strcmp(why.buf, want)))
				fail_msg("%s on host %d: got %s '%s', want %s '%s'", k->name, h,
					 ok ? "available" : "refused", strbuf_str(&why),
					 want ? "refused" : "available", want ? want : "");
			strbuf_release(&why);
		}
	}
}

/* One fact known, the other not: only a known fact refuses. */
static void test_partial_facts(void **state)
{
	(void)state;
	const struct knob *indep = knob_find("kvm_hv.indep_threads_mode");
	const struct knob *one = knob_find("kvm_hv.one_vm_per_core");
	struct knob_host h;
	struct strbuf why = STRBUF_INIT;
	/* POWER9, kernel unknown: indep_threads_mode may be there. */
	knob_host_parse(&h, CPUINFO_P9, NULL, NULL);
	assert_true(knob_available(indep, &h, &why));
	/* Kernel 6.1, CPU unknown: indep_threads_mode is gone on every CPU, one_vm_per_core
	 * may still be a POWER8's. */
	knob_host_parse(&h, NULL, "6.1.0\n", NULL);
	assert_false(knob_available(indep, &h, &why));
	assert_string_equal(why.buf, "removed in Linux 5.14 (this kernel is 6.1)");
	assert_true(knob_available(one, &h, &why));
	/* 5.13 is the last kernel with it, 5.14 the first without. */
	knob_host_parse(&h, CPUINFO_P9, "5.13.19\n", NULL);
	assert_true(knob_available(indep, &h, &why));
	knob_host_parse(&h, CPUINFO_P9, "5.14.0-rc1\n", NULL);
	strbuf_reset(&why);
	assert_false(knob_available(indep, &h, &why));
	assert_string_equal(why.buf, "removed in Linux 5.14 (this kernel is 5.14)");
	/* Garbage is no fact. */
	knob_host_parse(&h, "junk\n", "not a version\n", NULL);
	assert_int_equal(h.cpu, KNOB_CPU_UNKNOWN);
	assert_int_equal(h.kernel, 0);
	strbuf_release(&why);
}

static void test_parse(void **state)
{
	(void)state;
	struct knob_host h;
	knob_host_parse(&h, CPUINFO_P8, "4.19.0\n", NULL);
	assert_int_equal(h.cpu, KNOB_CPU_POWER);
	assert_int_equal(h.power_gen, 8);
	assert_string_equal(h.cpu_name, "POWER8");	/* POWER8E is a POWER8 */
	assert_int_equal(h.kernel, KNOB_KV(4, 19));
	knob_host_parse(&h, CPUINFO_P10, NULL, "ppc64le");
	assert_int_equal(h.power_gen, 10);
	assert_string_equal(h.cpu_name, "POWER10");
	knob_host_parse(&h, CPUINFO_X86, NULL, NULL);
	assert_int_equal(h.cpu, KNOB_CPU_OTHER);
	assert_string_equal(h.cpu_name, "GenuineIntel");
	/* "cpu cores" and "cpu family" are not the "cpu" field. */
	knob_host_parse(&h, "cpu family\t: POWER9\ncpu cores\t: 2\n", NULL, NULL);
	assert_int_equal(h.cpu, KNOB_CPU_UNKNOWN);
}

/* ---- knob_supported on fake roots ---------------------------------------- */

static void put(const char *root, const char *rel, const char *content)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

#define KVM "sys/module/kvm_hv/parameters/"

/* Removes a tree (no shell): depth-first over directories we made. */
static void rm_tree(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		unlink(path);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char sub[1024];
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		struct stat st;
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			rm_tree(sub);
		else
			unlink(sub);
	}
	closedir(d);
	rmdir(path);
}

static int setup(void **state)
{
	static char root[64];
	strcpy(root, "/tmp/ta-knob-where.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	*state = root;
	return 0;
}

static int teardown(void **state)
{
	rm_tree(*state);
	return 0;
}

static void test_supported_on_fake_root(void **state)
{
	const char *root = *state;
	put(root, KVM "indep_threads_mode", "Y\n");
	put(root, KVM "one_vm_per_core", "N\n");
	put(root, KVM "dynamic_mt_modes", "6\n");
	const struct knob *indep = knob_find("kvm_hv.indep_threads_mode");
	const struct knob *one = knob_find("kvm_hv.one_vm_per_core");
	const struct knob *mt = knob_find("kvm_hv.dynamic_mt_modes");
	struct ta_err err = { 0 };
	/* No cpuinfo, no osrelease: the files decide, as before. */
	assert_int_equal(knob_supported(indep, root, &err), 0);
	assert_int_equal(knob_supported(mt, root, &err), 0);
	/* A POWER9 root with Linux 6.1: its own facts refuse what it cannot take. */
	put(root, "proc/cpuinfo", CPUINFO_P9);
	put(root, "proc/sys/kernel/osrelease", "6.1.0\n");
	assert_int_equal(knob_supported(indep, root, &err), -1);
	assert_string_equal(err.msg, "kvm_hv.indep_threads_mode: not on this host: removed in "
			    "Linux 5.14 (this kernel is 6.1)");
	assert_int_equal(knob_supported(one, root, &err), -1);
	assert_int_equal(knob_supported(mt, root, &err), -1);
	assert_string_equal(err.msg, "kvm_hv.dynamic_mt_modes: not on this host: POWER7 or "
			    "POWER8 only (this CPU is POWER9)");
	/* The same root on Linux 5.10 takes both kvm_hv mode knobs. */
	put(root, "proc/sys/kernel/osrelease", "5.10.0\n");
	assert_int_equal(knob_supported(indep, root, &err), 0);
	assert_int_equal(knob_supported(one, root, &err), 0);
	/* probe's view: the value, or the reason. */
	struct strbuf v = STRBUF_INIT, why = STRBUF_INIT;
	assert_int_equal(hostprobe_knob(root, indep, &v, &why), 1);
	assert_string_equal(v.buf, "Y");
	assert_int_equal(hostprobe_knob(root, mt, &v, &why), 0);
	assert_string_equal(why.buf, "POWER7 or POWER8 only (this CPU is POWER9)");
	strbuf_release(&v);
	strbuf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_knob_on_every_host),
		cmocka_unit_test(test_partial_facts),
		cmocka_unit_test(test_parse),
		cmocka_unit_test_setup_teardown(test_supported_on_fake_root, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
