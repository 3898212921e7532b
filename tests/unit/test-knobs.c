/*
 * Unit tests for the host knob registry: validation, capability checks,
 * reading, the journalled apply in the safe order, restore (also after a
 * crashed controller) and per-thread SMT.  Every test works on a fake
 * sysfs/procfs tree in a temporary ROOT: this host has no split-core and no
 * kvm_hv, and tests must not change the real host.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/knobs.h"
#include "schema/db-journal.h"
#include "util/strbuf.h"

struct fixture {
	char root[64];
	char dbpath[96];
	struct db *db;
};

/* Creates every directory of path (relative to root) and the file. */
static void put(const char *root, const char *rel, const char *content)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

/* The file's content without the trailing newline (static buffer). */
static const char *get(const char *root, const char *rel)
{
	static char buf[256];
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return buf;
}

/* The error message contains want (else the test fails showing it). */
static void assert_msg(const struct ta_err *err, const char *want)
{
	if (!strstr(err->msg, want))
		fail_msg("error '%s' lacks '%s'", err->msg, want);
}

#define SUBCORES "sys/devices/system/cpu/subcores_per_core"
#define SMTCTL "sys/devices/system/cpu/smt/control"
#define KVM "sys/module/kvm_hv/parameters/"
#define THP "sys/kernel/mm/transparent_hugepage/enabled"

/* A POWER8-like host: every knob present, values as the kernel shows them. */
static void power8_tree(const char *root)
{
	put(root, SUBCORES, "1\n");
	put(root, SMTCTL, "on\n");
	put(root, KVM "dynamic_mt_modes", "6\n");
	put(root, KVM "target_smt_mode", "0\n");
	put(root, KVM "indep_threads_mode", "Y\n");
	put(root, KVM "one_vm_per_core", "N\n");
	put(root, THP, "always [madvise] never\n");
	put(root, "sys/kernel/mm/ksm/run", "0\n");
	put(root, "proc/sys/kernel/numa_balancing", "1\n");
	put(root, "proc/sys/kernel/sched_autogroup_enabled", "1\n");
}

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
	struct fixture *f = calloc(1, sizeof(*f));
	strcpy(f->root, "/tmp/ta-test-knobs.XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	snprintf(f->dbpath, sizeof(f->dbpath), "%s/j.db", f->root);
	struct ta_err err = { 0 };
	f->db = db_open(f->dbpath, true, &err);
	if (!f->db)
		return -1;
	power8_tree(f->root);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	db_close(f->db);
	rm_tree(f->root);
	free(f);
	return 0;
}

static size_t journal_rows(struct db *db, bool unrestored_only, struct db_journal_entry **v)
{
	struct ta_err err = { 0 };
	size_t n;
	int rc = unrestored_only ? db_journal_unrestored(db, v, &n, &err)
				 : db_journal_all(db, v, &n, &err);
	assert_int_equal(rc, 0);
	return n;
}

static void test_table_and_lookup(void **state)
{
	struct ta_err err = { 0 };
	assert_true(knob_count() >= 10);
	assert_non_null(knob_find("kvm_hv.one_vm_per_core"));
	assert_null(knob_lookup("/etc/passwd", &err));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_msg(&err, "unknown host knob '/etc/passwd'");
	assert_msg(&err, "subcores_per_core");
	/* The safe order: SMT, then split-core, generic, kvm_hv last. */
	assert_true(knob_find("smt")->order < knob_find("subcores_per_core")->order);
	assert_true(knob_find("subcores_per_core")->order < knob_find("thp")->order);
	assert_true(knob_find("thp")->order < knob_find("kvm_hv.target_smt_mode")->order);
	assert_true(knob_find("subcores_per_core")->needs_no_guests);
	assert_false(knob_find("kvm_hv.dynamic_mt_modes")->needs_no_guests);
}

/*
 * The table is consistent with itself: names unique, in apply order, every
 * spelling and the kernel default mean one of the knob's values, each
 * canonical value is its own canonical form, a typed column has a type,
 * and recommend prints a command for every knob.
 */
static void test_table_consistent(void **state)
{
	for (size_t i = 0; i < knob_count(); i++) {
		const struct knob *k = knob_at(i);
		assert_ptr_equal(knob_find(k->name), k);
		if (i)
			assert_true(knob_at(i - 1)->order <= k->order);
		assert_non_null(k->values);
		assert_non_null(k->values[0]);
		assert_non_null(k->rel_path);
		assert_non_null(k->why_missing);
		for (size_t v = 0; k->values[v]; v++)
			assert_ptr_equal(knob_canonical(k, k->values[v]), k->values[v]);
		for (size_t sp = 0; k->spellings && k->spellings[sp].spelling; sp++) {
			const char *c = knob_canonical(k, k->spellings[sp].spelling);
			assert_non_null(c);
			assert_string_equal(c, k->spellings[sp].canonical);
			assert_ptr_equal(knob_canonical(k, c), c);
		}
		if (k->kernel_default)
			assert_ptr_equal(knob_canonical(k, k->kernel_default), k->kernel_default);
		assert_true((k->db_column != NULL) == (k->db_type != KNOB_COLUMN_NONE));
		assert_true(k->command != KNOB_COMMAND_PPC64_CPU || k->command_option);
		struct strbuf cmd = STRBUF_INIT;
		knob_host_command(k, k->values[0], &cmd);
		assert_non_null(strstr(strbuf_str(&cmd), k->values[0]));
		strbuf_release(&cmd);
	}
	assert_ptr_equal(knob_of_kind(KNOB_SMT), knob_find("smt"));
	assert_ptr_equal(knob_of_kind(KNOB_SUBCORES), knob_find("subcores_per_core"));
	struct strbuf sb = STRBUF_INIT;
	knob_host_command(knob_find("thp"), "never", &sb);
	knob_host_command(knob_find("smt"), "off", &sb);
	assert_string_equal(strbuf_str(&sb), "echo never > /sys/kernel/mm/transparent_hugepage/"
			    "enabled\nppc64_cpu --smt=off\n");
	strbuf_release(&sb);
}

static void expect_valid(const char *name, const char *in, const char *canon)
{
	struct strbuf sb = STRBUF_INIT;
	struct ta_err err = { 0 };
	if (knob_validate(knob_find(name), in, &sb, &err) != 0)
		fail_msg("%s=%s refused: %s", name, in, err.msg);
	assert_string_equal(strbuf_str(&sb), canon);
	strbuf_release(&sb);
}

static void expect_invalid(const char *name, const char *in)
{
	struct strbuf sb = STRBUF_INIT;
	struct ta_err err = { 0 };
	if (knob_validate(knob_find(name), in, &sb, &err) == 0)
		fail_msg("%s=%s accepted as '%s'", name, in, strbuf_str(&sb));
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_msg(&err, "use ");
	strbuf_release(&sb);
}

static void test_validate(void **state)
{
	expect_valid("subcores_per_core", "4", "4");
	expect_valid("subcores_per_core", "02", "2");
	expect_invalid("subcores_per_core", "3");
	expect_invalid("subcores_per_core", "8");
	expect_valid("subcores_per_core", "0x2", "2");	/* as the config loader reads it */
	expect_invalid("subcores_per_core", "-1");
	expect_valid("smt", "on", "on");
	expect_valid("smt", "false", "off");
	expect_valid("smt", "1", "off");
	expect_valid("smt", "4", "4");
	expect_invalid("smt", "3");
	expect_invalid("smt", "forceoff");
	expect_valid("kvm_hv.one_vm_per_core", "y", "Y");
	expect_valid("kvm_hv.one_vm_per_core", "on", "Y");
	expect_valid("kvm_hv.one_vm_per_core", "no", "N");
	expect_invalid("kvm_hv.one_vm_per_core", "maybe");
	expect_valid("kvm_hv.dynamic_mt_modes", "6", "6");
	expect_invalid("kvm_hv.dynamic_mt_modes", "3");
	expect_valid("kvm_hv.target_smt_mode", "0", "0");
	expect_valid("ksm", "on", "1");
	expect_valid("numa_balancing", "0", "0");
	expect_invalid("numa_balancing", "2");
	expect_valid("thp", "never", "never");
	expect_invalid("thp", "always madvise");
	expect_invalid("thp", "");
	expect_invalid("sched_autogroup", "1; reboot");
}

static void test_supported_reasons(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	char path[256], want[512];
	for (size_t i = 0; i < knob_count(); i++)
		if (knob_supported(knob_at(i), f->root, &err) != 0)
			fail_msg("%s: %s", knob_at(i)->name, err.msg);
	snprintf(path, sizeof(path), "%s/" SUBCORES, f->root);
	unlink(path);
	assert_int_equal(knob_supported(knob_find("subcores_per_core"), f->root, &err), -1);
	snprintf(want, sizeof(want), "subcores_per_core: %s does not exist: split-core needs "
		 "a bare-metal POWER8 host", path);
	assert_string_equal(err.msg, want);

	put(f->root, SMTCTL, "notsupported\n");
	assert_int_equal(knob_supported(knob_find("smt"), f->root, &err), -1);
	assert_msg(&err, "says 'notsupported'");
	put(f->root, SMTCTL, "forceoff\n");
	assert_int_equal(knob_supported(knob_find("smt"), f->root, &err), -1);
	assert_msg(&err, "nosmt=force");

	snprintf(path, sizeof(path), "%s/" KVM "indep_threads_mode", f->root);
	unlink(path);
	assert_int_equal(knob_supported(knob_find("kvm_hv.indep_threads_mode"), f->root, &err),
			 -1);
	assert_msg(&err, "POWER9");
}

static void test_read_normalises(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct strbuf v = STRBUF_INIT;
	assert_int_equal(knob_read(knob_find("thp"), f->root, &v, &err), 0);
	assert_string_equal(v.buf, "madvise");
	assert_int_equal(knob_read(knob_find("kvm_hv.indep_threads_mode"), f->root, &v, &err),
			 0);
	assert_string_equal(v.buf, "Y");
	/* The kernel shows subcores_per_core in hex. */
	put(f->root, SUBCORES, "a\n");
	assert_int_equal(knob_read(knob_find("subcores_per_core"), f->root, &v, &err), 0);
	assert_string_equal(v.buf, "10");
	put(f->root, THP, "always madvise never\n");
	assert_int_equal(knob_read(knob_find("thp"), f->root, &v, &err), -1);
	assert_msg(&err, "not understood");
	strbuf_release(&v);
}

static void test_apply_writes_kernel_format(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	put(f->root, SUBCORES, "1\n");
	assert_int_equal(knob_apply(knob_find("subcores_per_core"), f->root, "4", &err), 0);
	assert_string_equal(get(f->root, SUBCORES), "4");
	assert_int_equal(knob_apply(knob_find("kvm_hv.one_vm_per_core"), f->root, "on", &err), 0);
	assert_string_equal(get(f->root, KVM "one_vm_per_core"), "Y");
	/* THP's file shows all choices; the kernel takes one word, and a file
	 * under a test root then holds that word, which reads back as itself. */
	assert_int_equal(knob_apply(knob_find("thp"), f->root, "never", &err), 0);
	assert_string_equal(get(f->root, THP), "never");
	struct strbuf v = STRBUF_INIT;
	assert_int_equal(knob_read(knob_find("thp"), f->root, &v, &err), 0);
	assert_string_equal(v.buf, "never");
	/* Only a whole value in its own spelling: no other text passes for one. */
	put(f->root, THP, "Never\n");
	assert_int_equal(knob_read(knob_find("thp"), f->root, &v, &err), -1);
	assert_msg(&err, "not understood");
	put(f->root, THP, "never always\n");
	assert_int_equal(knob_read(knob_find("thp"), f->root, &v, &err), -1);
	strbuf_release(&v);
}

static void test_apply_set_order_and_journal(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct knob_journal j = { f->db, 0 };
	/* Given in the unsafe order: kvm_hv, split-core, SMT. */
	const char *names[] = { "kvm_hv.dynamic_mt_modes", "subcores_per_core", "smt" };
	const char *values[] = { "0", "2", "off" };
	if (knobs_apply_set(f->root, names, values, 3, &j, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(get(f->root, KVM "dynamic_mt_modes"), "0");
	assert_string_equal(get(f->root, SUBCORES), "2");
	assert_string_equal(get(f->root, SMTCTL), "off");
	struct db_journal_entry *v;
	size_t n = journal_rows(f->db, true, &v);
	assert_int_equal(n, 3);
	/* Journalled just before each write: ids follow the write order. */
	assert_string_equal(v[0].knob, "smt");
	assert_string_equal(v[0].original_value, "on");
	assert_string_equal(v[1].knob, "subcores_per_core");
	assert_string_equal(v[1].original_value, "1");
	assert_string_equal(v[1].applied_value, "2");
	assert_string_equal(v[2].knob, "kvm_hv.dynamic_mt_modes");
	assert_string_equal(v[2].original_value, "6");
	char want[256];
	snprintf(want, sizeof(want), "%s/" SUBCORES, f->root);
	assert_string_equal(v[1].path, want);
	db_journal_entries_free(v, n);

	/* A second change keeps the first original and writes one row per knob. */
	const char *names2[] = { "subcores_per_core", "thp" };
	const char *values2[] = { "4", "madvise" };
	assert_int_equal(knobs_apply_set(f->root, names2, values2, 2, &j, &err), 0);
	n = journal_rows(f->db, true, &v);
	assert_int_equal(n, 3);	/* thp was already madvise: not journalled */
	assert_string_equal(v[1].original_value, "1");
	assert_string_equal(v[1].applied_value, "4");
	db_journal_entries_free(v, n);

	/* Restore: reverse order, originals back, rows marked, then nothing left. */
	struct knob_restore_report r;
	assert_int_equal(knobs_restore_report(f->root, &j, &r, &err), 0);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.items[0].knob, "kvm_hv.dynamic_mt_modes");
	assert_string_equal(r.items[1].knob, "subcores_per_core");
	assert_string_equal(r.items[1].before, "4");
	assert_string_equal(r.items[2].knob, "smt");
	for (size_t i = 0; i < r.n; i++)
		assert_int_equal(r.items[i].status, KNOB_RESTORED);
	knob_restore_report_release(&r);
	assert_string_equal(get(f->root, KVM "dynamic_mt_modes"), "6");
	assert_string_equal(get(f->root, SUBCORES), "1");
	assert_string_equal(get(f->root, SMTCTL), "on");
	assert_int_equal(journal_rows(f->db, true, &v), 0);
	db_journal_entries_free(v, 0);
	n = journal_rows(f->db, false, &v);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_non_null(v[i].restored_at);
	db_journal_entries_free(v, n);
	assert_int_equal(knobs_restore_report(f->root, &j, &r, &err), 0);
	assert_int_equal(r.n, 0);
	knob_restore_report_release(&r);
}

static void test_apply_set_checks_before_writing(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct knob_journal j = { f->db, 0 };
	struct db_journal_entry *v;
	const char *names[] = { "smt", "kvm_hv.target_smt_mode" };
	const char *bad_value[] = { "off", "3" };
	assert_int_equal(knobs_apply_set(f->root, names, bad_value, 2, &j, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_string_equal(get(f->root, SMTCTL), "on");

	const char *bad_names[] = { "smt", "../../etc/shadow" };
	const char *values[] = { "off", "0" };
	assert_int_equal(knobs_apply_set(f->root, bad_names, values, 2, &j, &err), -1);
	assert_msg(&err, "unknown host knob");
	assert_string_equal(get(f->root, SMTCTL), "on");

	char path[256];
	snprintf(path, sizeof(path), "%s/" SUBCORES, f->root);
	unlink(path);
	const char *names3[] = { "smt", "subcores_per_core" };
	const char *values3[] = { "off", "2" };
	assert_int_equal(knobs_apply_set(f->root, names3, values3, 2, &j, &err), -1);
	assert_msg(&err, "bare-metal POWER8");
	assert_string_equal(get(f->root, SMTCTL), "on");
	assert_int_equal(journal_rows(f->db, false, &v), 0);
	db_journal_entries_free(v, 0);

	/* Without a journal nothing is changed at all. */
	const char *one[] = { "smt" }, *off[] = { "off" };
	assert_int_equal(knobs_apply_set(f->root, one, off, 1, NULL, &err), -1);
	assert_string_equal(get(f->root, SMTCTL), "on");
}

static void test_symlink_and_non_regular_refused(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	char link[256], target[256];
	/* A planted symlink must not redirect the write. */
	snprintf(target, sizeof(target), "%s/victim", f->root);
	put(f->root, "victim", "precious\n");
	snprintf(link, sizeof(link), "%s/" KVM "target_smt_mode", f->root);
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(knob_apply(knob_find("kvm_hv.target_smt_mode"), f->root, "2", &err), -1);
	assert_msg(&err, "symlink");
	assert_string_equal(get(f->root, "victim"), "precious");
	/* A FIFO must not block or be written. */
	snprintf(link, sizeof(link), "%s/" KVM "dynamic_mt_modes", f->root);
	unlink(link);
	assert_int_equal(mkfifo(link, 0600), 0);
	assert_int_equal(knob_apply(knob_find("kvm_hv.dynamic_mt_modes"), f->root, "2", &err),
			 -1);
	assert_msg(&err, "regular file");
}

static void test_journal_refused_in_transaction(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct knob_journal j = { f->db, 0 };
	const char *names[] = { "ksm" }, *values[] = { "1" };
	assert_int_equal(db_begin(f->db, &err), 0);
	assert_int_equal(knobs_apply_set(f->root, names, values, 1, &j, &err), -1);
	assert_msg(&err, "transaction");
	db_rollback(f->db);
	assert_string_equal(get(f->root, "sys/kernel/mm/ksm/run"), "0");
}

/*
 * A controller killed right after changing the host: the journal rows it
 * committed are all a new process needs to put everything back.
 */
static void test_restore_after_crash(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct db_experiment_new e = { .name = "crash", .config_yaml = "x", .config_len = 1,
				       .higher_is_better = -1 };
	int64_t exp_id;
	assert_int_equal(db_experiment_insert(f->db, &e, &exp_id, &err), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ta_err cerr = { 0 };
		struct db *db = db_open(f->dbpath, false, &cerr);
		struct knob_journal cj = { db, exp_id };
		const char *names[] = { "numa_balancing", "kvm_hv.one_vm_per_core" };
		const char *values[] = { "0", "on" };
		if (!db || knobs_apply_set(f->root, names, values, 2, &cj, &cerr) < 0) {
			fprintf(stderr, "child: %s\n", cerr.msg);
			_exit(3);
		}
		raise(SIGKILL);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_string_equal(get(f->root, "proc/sys/kernel/numa_balancing"), "0");
	assert_string_equal(get(f->root, KVM "one_vm_per_core"), "Y");

	struct knob_journal j = { f->db, 0 };
	struct knob_restore_report r;
	assert_int_equal(knobs_restore_report(f->root, &j, &r, &err), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.items[0].experiment_id, exp_id);
	knob_restore_report_release(&r);
	assert_string_equal(get(f->root, "proc/sys/kernel/numa_balancing"), "1");
	assert_string_equal(get(f->root, KVM "one_vm_per_core"), "N");
}

/*
 * A write cut short (here: the file size limit, as a SIGKILL mid-write would
 * cut it) leaves the knob file with its old value, never empty.
 */
static void test_interrupted_write_keeps_value(void **state)
{
	struct fixture *f = *state;
	const char *names[] = { "kvm_hv.dynamic_mt_modes", "numa_balancing" };
	const char *values[] = { "2", "0" };
	for (size_t i = 0; i < 2; i++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			signal(SIGXFSZ, SIG_IGN);
			struct rlimit none = { 0, 0 };
			setrlimit(RLIMIT_FSIZE, &none);
			struct ta_err cerr = { 0 };
			const struct knob *k = knob_find(names[i]);
			_exit(k && knob_apply(k, f->root, values[i], &cerr) < 0 ? 0 : 1);
		}
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);	/* the write failed */
	}
	assert_string_equal(get(f->root, KVM "dynamic_mt_modes"), "6");
	assert_string_equal(get(f->root, "proc/sys/kernel/numa_balancing"), "1");
	/* Without the limit the same writes go through. */
	struct ta_err err = { 0 };
	assert_int_equal(knob_apply(knob_find(names[0]), f->root, values[0], &err), 0);
	assert_string_equal(get(f->root, KVM "dynamic_mt_modes"), "2");
	/* And leave no temporary file beside the knob. */
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/" KVM, f->root);
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)))
		assert_false(de->d_name[0] == '.' && strlen(de->d_name) > 2);
	closedir(d);
}

static void test_restore_goes_on_after_failure(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct knob_journal j = { f->db, 0 };
	const char *names[] = { "subcores_per_core", "kvm_hv.dynamic_mt_modes" };
	const char *values[] = { "4", "2" };
	assert_int_equal(knobs_apply_set(f->root, names, values, 2, &j, &err), 0);
	/* The split-core file turns into something we refuse to write. */
	char path[256];
	snprintf(path, sizeof(path), "%s/" SUBCORES, f->root);
	unlink(path);
	assert_int_equal(mkdir(path, 0755), 0);
	struct knob_restore_report r;
	assert_int_equal(knobs_restore_report(f->root, &j, &r, &err), -1);
	assert_msg(&err, "1 host knob not restored");
	assert_int_equal(r.nfailed, 1);
	assert_int_equal(r.items[0].status, KNOB_RESTORED);
	assert_int_equal(r.items[1].status, KNOB_RESTORE_FAILED);
	knob_restore_report_release(&r);
	assert_string_equal(get(f->root, KVM "dynamic_mt_modes"), "6");
	struct db_journal_entry *v;
	size_t n = journal_rows(f->db, true, &v);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].knob, "subcores_per_core");
	db_journal_entries_free(v, n);

	/* Fixed: the next restore finishes the job. */
	rmdir(path);
	put(f->root, SUBCORES, "4\n");
	assert_int_equal(knobs_restore_all(f->root, &j, &err), 0);
	assert_string_equal(get(f->root, SUBCORES), "1");

	/* An entry made under another root is reported, not touched. */
	assert_int_equal(knobs_apply_set(f->root, names, values, 1, &j, &err), 0);
	assert_int_equal(knobs_restore_report("/nonexistent-root", &j, &r, &err), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.items[0].status, KNOB_OTHER_ROOT);
	knob_restore_report_release(&r);
	assert_string_equal(get(f->root, SUBCORES), "4");
	assert_int_equal(knobs_restore_all(f->root, &j, &err), 0);
	assert_string_equal(get(f->root, SUBCORES), "1");
}

/* kvm_hv unloaded since the change: its parameters went with it. */
static void test_restore_knob_gone(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct knob_journal j = { f->db, 0 };
	const char *names[] = { "kvm_hv.target_smt_mode", "ksm" }, *values[] = { "4", "1" };
	assert_int_equal(knobs_apply_set(f->root, names, values, 2, &j, &err), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/" KVM "target_smt_mode", f->root);
	assert_int_equal(unlink(path), 0);
	struct knob_restore_report r;
	assert_int_equal(knobs_restore_report(f->root, &j, &r, &err), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.items[0].status, KNOB_GONE);
	assert_int_equal(r.items[1].status, KNOB_RESTORED);
	knob_restore_report_release(&r);
	assert_string_equal(get(f->root, "sys/kernel/mm/ksm/run"), "0");
	/* Not recreated, and nothing left to do. */
	assert_int_equal(access(path, F_OK), -1);
	struct db_journal_entry *v;
	assert_int_equal(journal_rows(f->db, true, &v), 0);
	db_journal_entries_free(v, 0);
}

/* A restore that finds the knob already at its original writes nothing. */
static void test_restore_unchanged_is_marked(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct knob_journal j = { f->db, 0 };
	const char *names[] = { "sched_autogroup" }, *values[] = { "0" };
	assert_int_equal(knobs_apply_set(f->root, names, values, 1, &j, &err), 0);
	put(f->root, "proc/sys/kernel/sched_autogroup_enabled", "1\n");
	struct knob_restore_report r;
	assert_int_equal(knobs_restore_report(f->root, &j, &r, &err), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.items[0].status, KNOB_WAS_ORIGINAL);
	knob_restore_report_release(&r);
	struct db_journal_entry *v;
	assert_int_equal(journal_rows(f->db, true, &v), 0);
	db_journal_entries_free(v, 0);
}

/* Per-thread SMT: 2 cores x 2 threads, cpu0 without an online file (as on x86). */
static void threads_tree(const char *root, const char *online)
{
	char rel[128];
	char path[256];
	snprintf(path, sizeof(path), "%s/" SMTCTL, root);
	unlink(path);
	for (int c = 0; c < 4; c++) {
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/"
			 "thread_siblings_list", c);
		put(root, rel, c < 2 ? "0-1\n" : "2-3\n");
		if (c > 0) {
			snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/online", c);
			put(root, rel, online[c] == '1' ? "1\n" : "0\n");
		}
	}
}

static void test_smt_per_thread(void **state)
{
	struct fixture *f = *state;
	struct ta_err err = { 0 };
	struct strbuf v = STRBUF_INIT;
	const struct knob *smt = knob_find("smt");
	struct knob_journal j = { f->db, 0 };
	threads_tree(f->root, "1111");
	assert_int_equal(knob_supported(smt, f->root, &err), 0);
	char *p = knob_path(smt, f->root);
	assert_non_null(strstr(p, "/sys/devices/system/cpu"));
	free(p);
	assert_int_equal(knob_read(smt, f->root, &v, &err), 0);
	assert_string_equal(v.buf, "on");

	const char *names[] = { "smt" }, *off[] = { "off" };
	if (knobs_apply_set(f->root, names, off, 1, &j, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu1/online"), "0");
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu2/online"), "1");
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu3/online"), "0");
	assert_int_equal(knob_read(smt, f->root, &v, &err), 0);
	assert_string_equal(v.buf, "off");
	assert_int_equal(knob_snapshot(smt, f->root, &v, &err), 0);
	assert_string_equal(v.buf, "online=0,2");
	assert_int_equal(knobs_restore_all(f->root, &j, &err), 0);
	for (int c = 1; c < 4; c++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/online", c);
		assert_string_equal(get(f->root, rel), "1");
	}

	/* An odd starting state (only cpu3 offline) comes back exactly. */
	threads_tree(f->root, "1110");
	assert_int_equal(knob_read(smt, f->root, &v, &err), 0);
	assert_string_equal(v.buf, "online=0-2");
	assert_int_equal(knobs_apply_set(f->root, names, off, 1, &j, &err), 0);
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu2/online"), "1");
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu3/online"), "0");
	const char *on[] = { "on" };
	assert_int_equal(knobs_apply_set(f->root, names, on, 1, &j, &err), 0);
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu3/online"), "1");
	assert_int_equal(knobs_restore_all(f->root, &j, &err), 0);
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu1/online"), "1");
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu2/online"), "1");
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu3/online"), "0");

	/* A kernel without CONFIG_HOTPLUG_SMT (Debian's 6.1 on POWER8) has
	 * smt/control saying "notimplemented": the online files still work. */
	threads_tree(f->root, "1111");
	put(f->root, SMTCTL, "notimplemented\n");
	assert_int_equal(knob_supported(smt, f->root, &err), 0);
	assert_int_equal(knob_read(smt, f->root, &v, &err), 0);
	assert_string_equal(v.buf, "on");
	assert_int_equal(knobs_apply_set(f->root, names, off, 1, &j, &err), 0);
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu1/online"), "0");
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu3/online"), "0");
	assert_string_equal(get(f->root, SMTCTL), "notimplemented");
	assert_int_equal(knobs_restore_all(f->root, &j, &err), 0);
	assert_string_equal(get(f->root, "sys/devices/system/cpu/cpu1/online"), "1");

	/* More threads per core than the host has. */
	threads_tree(f->root, "1111");
	const char *four[] = { "4" };
	assert_int_equal(knobs_apply_set(f->root, names, four, 1, &j, &err), -1);
	assert_msg(&err, "has 2 threads");
	strbuf_release(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_and_lookup),
		cmocka_unit_test(test_table_consistent),
		cmocka_unit_test(test_validate),
		cmocka_unit_test_setup_teardown(test_supported_reasons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_normalises, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_writes_kernel_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_set_order_and_journal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_set_checks_before_writing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_symlink_and_non_regular_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_journal_refused_in_transaction, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_restore_after_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupted_write_keeps_value, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_restore_goes_on_after_failure, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_restore_unchanged_is_marked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_knob_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smt_per_thread, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
