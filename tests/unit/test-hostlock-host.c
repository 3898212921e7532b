/*
 * Unit tests for one lock per host (hostlock.h, db-controller.h): the host
 * a root names (its key) as a table of spellings; the lock file's path,
 * which $TOPOADVISOR_LOCK relocates; the anchor, which two controllers of
 * one root meet on whatever their $TOPOADVISOR_LOCK; the lock directory
 * refused when it is a file or others may write into it; and the
 * database's refusal of a second running experiment on one host while its
 * controller lives, as a table of cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/hostlock.h"
#include "schema/db-controller.h"
#include "schema/db.h"
#include "util/strbuf.h"

static char dir[64];

static void at(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/ta-test-hostlock-host.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char p[160];
	at(p, sizeof(p), "root");
	mkdir(p, 0755);
	at(p, sizeof(p), "root/sub");
	mkdir(p, 0755);
	at(p, sizeof(p), "root2");
	mkdir(p, 0755);
	at(p, sizeof(p), "file");
	FILE *f = fopen(p, "w");
	fputs("keep\n", f);
	fclose(f);
	char t[160];
	at(t, sizeof(t), "root");
	at(p, sizeof(p), "link");
	return symlink(t, p);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	return nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The key a directory of ours should have: root-MAJ.MIN-INODE. */
static void expected_key(const char *path, char *buf, size_t n)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	snprintf(buf, n, "root-%x.%x-%llu", major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
}

/* Every spelling of one host gives its key; other roots differ; non-directories fail. */
static void test_key_table(void **state)
{
	char root[160], key_root[96], key_sub[96];
	at(root, sizeof(root), "root");
	expected_key(root, key_root, sizeof(key_root));
	char sub[160];
	at(sub, sizeof(sub), "root/sub");
	expected_key(sub, key_sub, sizeof(key_sub));
	struct {
		const char *root;	/* relative to dir when it starts with '+' */
		const char *key;	/* NULL: fails */
	} cases[] = {
		{ NULL, "host" },
		{ "", "host" },
		{ "/", "host" },
		{ "//", "host" },
		{ "/.", "host" },
		{ "/tmp/..", "host" },
		{ "+root", key_root },
		{ "+root/", key_root },
		{ "+root/./sub/..", key_root },
		{ "+link", key_root },		/* a symlink to the root: the same host */
		{ "+root/sub", key_sub },	/* a directory inside it: another one */
		{ "+root/%n", key_root },	/* Slurm's per-node roots: where they are */
		{ "+root/node-%n/x", key_root },
		{ "+file", NULL },
		{ "+missing", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[200];
		const char *r = cases[i].root;
		if (r && r[0] == '+') {
			at(path, sizeof(path), r + 1);
			r = path;
		}
		struct strbuf key = STRBUF_INIT;
		struct ta_err err = { 0 };
		int rc = hostlock_key(r, &key, &err);
		if (!cases[i].key) {
			if (rc != -1)
				fail_msg("case %zu (%s): key %s, expected a failure", i, r,
					 strbuf_str(&key));
		} else if (rc != 0 || strcmp(strbuf_str(&key), cases[i].key)) {
			fail_msg("case %zu (%s): %d '%s' (%s), expected '%s'", i, r ? r : "NULL", rc,
				 strbuf_str(&key), err.msg, cases[i].key);
		}
		strbuf_release(&key);
	}
}

/* TOPOADVISOR_LOCK relocates the file; the name stays the host's. */
static void test_path_follows_env(void **state)
{
	char root[160], key[96], want[300];
	at(root, sizeof(root), "root");
	expected_key(root, key, sizeof(key));
	struct strbuf path = STRBUF_INIT;
	struct ta_err err = { 0 };
	unsetenv("TOPOADVISOR_LOCK");
	assert_int_equal(hostlock_path_for(root, &path, &err), 0);
	snprintf(want, sizeof(want), HOSTLOCK_DEFAULT_DIR "/%s.lock", key);
	assert_string_equal(strbuf_str(&path), want);
	assert_int_equal(hostlock_path_for(NULL, &path, &err), 0);
	assert_string_equal(strbuf_str(&path), HOSTLOCK_DEFAULT_DIR "/host.lock");
	setenv("TOPOADVISOR_LOCK", "/somewhere/else", 1);
	assert_int_equal(hostlock_path_for(root, &path, &err), 0);
	snprintf(want, sizeof(want), "/somewhere/else/%s.lock", key);
	assert_string_equal(strbuf_str(&path), want);
	unsetenv("TOPOADVISOR_LOCK");
	strbuf_release(&path);
}

/* In a child: tries the host lock of `root` with TOPOADVISOR_LOCK=lockdir. */
static int try_in_child(const char *root, const char *lockdir, const char *want_msg)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("TOPOADVISOR_LOCK", lockdir, 1);
		struct hostlock lk;
		struct ta_err err = { 0 };
		int rc = hostlock_acquire_host(&lk, root, NULL, &err);
		if (rc == 0)
			hostlock_release(&lk);
		if (want_msg)
			_exit(rc == -1 && strstr(err.msg, want_msg) ? 0 : 1);
		_exit(rc == 0 ? 0 : 2);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Two lock directories cannot split one root; another root is another host. */
static void test_anchor_across_lock_dirs(void **state)
{
	char root[160], alias[160], root2[160], a[160], b[160];
	at(root, sizeof(root), "root");
	at(alias, sizeof(alias), "link");
	at(root2, sizeof(root2), "root2");
	at(a, sizeof(a), "locks-a");
	at(b, sizeof(b), "locks-b");
	setenv("TOPOADVISOR_LOCK", a, 1);
	struct hostlock lk;
	struct ta_err err = { 0 };
	assert_int_equal(hostlock_acquire_host(&lk, root, NULL, &err), 0);
	char busy[64];
	snprintf(busy, sizeof(busy), "process %ld holds its lock", (long)getpid());
	/* Same root, another lock directory, another spelling: refused, us named. */
	assert_int_equal(try_in_child(root, b, busy), 0);
	assert_int_equal(try_in_child(alias, b, "being driven by another topoadvisor"), 0);
	/* Same directory: the file's own lock says so too. */
	assert_int_equal(try_in_child(root, a, "being driven by another topoadvisor"), 0);
	/* Another root is another host. */
	assert_int_equal(try_in_child(root2, b, NULL), 0);
	hostlock_release(&lk);
	assert_int_equal(try_in_child(root, b, NULL), 0);
	unsetenv("TOPOADVISOR_LOCK");
}

/* A lock directory that is a file, or that others may write into, is refused. */
static void test_lock_dir_refused(void **state)
{
	char root[160], file[160], open_dir[160];
	at(root, sizeof(root), "root");
	at(file, sizeof(file), "file");
	at(open_dir, sizeof(open_dir), "open");
	assert_int_equal(mkdir(open_dir, 0700), 0);
	assert_int_equal(chmod(open_dir, 0777), 0);
	struct {
		const char *dir;
		const char *msg;
	} cases[] = {
		{ file, "not a directory" },
		{ open_dir, "others may write into it" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("TOPOADVISOR_LOCK", cases[i].dir, 1);
		struct hostlock lk;
		struct ta_err err = { 0 };
		if (hostlock_acquire_host(&lk, root, NULL, &err) == 0)
			fail_msg("case %zu: %s taken as the lock directory", i, cases[i].dir);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("case %zu: '%s', expected '%s'", i, err.msg, cases[i].msg);
	}
	unsetenv("TOPOADVISOR_LOCK");
	FILE *f = fopen(file, "r");
	char buf[16] = "";
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "keep\n");
	/* The anchor was let go with the failure: the root can be locked. */
	struct hostlock lk;
	struct ta_err err = { 0 };
	char ok[160];
	at(ok, sizeof(ok), "locks-ok");
	setenv("TOPOADVISOR_LOCK", ok, 1);
	assert_int_equal(hostlock_acquire_host(&lk, root, NULL, &err), 0);
	hostlock_release(&lk);
	unsetenv("TOPOADVISOR_LOCK");
}

/* A second running experiment on one host: refused while its controller lives. */
static void test_controller_claim_table(void **state)
{
	char path[160];
	at(path, sizeof(path), "claims.db");
	struct ta_err err = { 0 };
	struct db *db = db_open(path, true, &err);
	assert_non_null(db);
	const char yaml[] = "name: a\n";
	struct db_experiment_new n = { .name = "first", .config_yaml = yaml,
				       .config_len = sizeof(yaml) - 1, .seed = 1 };
	int64_t first, second;
	assert_int_equal(db_experiment_insert(db, &n, &first, &err), 0);
	n.name = "second";
	assert_int_equal(db_experiment_insert(db, &n, &second, &err), 0);
	struct {
		bool holder_dies;	/* the first experiment's controller, after claiming */
		const char *status;	/* the first experiment's status */
		const char *host_first, *host_second;
		bool refused;
	} cases[] = {
		{ false, "running", "m:root-1", "m:root-1", true },
		{ true, "running", "m:root-1", "m:root-1", false },	/* crashed: stale */
		{ false, "done", "m:root-1", "m:root-1", false },	/* finished */
		{ false, "interrupted", "m:root-1", "m:root-1", false },
		{ false, "running", "m:root-1", "m:root-2", false },	/* another root */
		{ false, "running", "m:host", "n:host", false },	/* another machine */
		{ false, "running", "m:host", "m:host", true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(db_experiment_set_status(db, second, "planned", &err), 0);
		/* The first experiment's controller: a process of ours that is not us. */
		pid_t holder = fork();
		assert_true(holder >= 0);
		if (holder == 0) {
			pause();
			_exit(0);
		}
		assert_int_equal(db_controller_claim_as(db, first, cases[i].host_first, holder,
							&err), 0);
		if (cases[i].holder_dies) {
			kill(holder, SIGKILL);
			assert_int_equal(waitpid(holder, NULL, 0), holder);
		}
		assert_int_equal(db_experiment_set_status(db, first, cases[i].status, &err), 0);
		struct ta_err e = { 0 };
		int rc = db_controller_claim(db, second, cases[i].host_second, &e);
		if (cases[i].refused) {
			char want[96];
			snprintf(want, sizeof(want), "experiment %lld (first) is running",
				 (long long)first);
			char pid[48];
			snprintf(pid, sizeof(pid), "controller process %ld alive",
				 (long)holder);
			if (rc != -1 || !strstr(e.msg, want) || !strstr(e.msg, pid))
				fail_msg("case %zu: %d '%s', expected a refusal", i, rc, e.msg);
		} else if (rc != 0) {
			fail_msg("case %zu: refused: %s", i, e.msg);
		}
		/* The first experiment claiming again (resume) is never refused by itself. */
		assert_int_equal(db_controller_claim(db, first, cases[i].host_first, &err), 0);
		if (!cases[i].holder_dies) {
			kill(holder, SIGKILL);
			assert_int_equal(waitpid(holder, NULL, 0), holder);
		}
	}
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_key_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_follows_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_anchor_across_lock_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_dir_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_controller_claim_table, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
