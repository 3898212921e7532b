/*
 * Unit tests for the host journal table access (schema/db-journal): one
 * unrestored row per knob keeping the first original, listing, marking
 * restored, and the refusal to journal inside an open transaction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema/db-journal.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	strcpy(dir, "/tmp/ta-test-journal.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/j.db", dir);
	struct ta_err err = { 0 };
	struct db *db = db_open(path, true, &err);
	*state = db;
	return db ? 0 : -1;
}

static int teardown(void **state)
{
	db_close(*state);
	char p[160];
	const char *suffixes[] = { "", "-wal", "-shm" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
		unlink(p);
	}
	return rmdir(dir);
}

static void test_record_keeps_first_original(void **state)
{
	struct db *db = *state;
	struct ta_err err = { 0 };
	int64_t a, b, c;
	assert_int_equal(db_journal_record(db, 0, "smt", "/sys/x/smt", "on", "off", &a, &err), 0);
	assert_int_equal(db_journal_record(db, 0, "ksm", "/sys/x/ksm", "0", "1", &b, &err), 0);
	/* The same knob again: same row, original kept, applied updated. */
	assert_int_equal(db_journal_record(db, 0, "smt", "/sys/x/smt", "off", "4", &c, &err), 0);
	assert_int_equal(a, c);
	assert_true(b != a);
	/* The same knob under another root is another row. */
	assert_int_equal(db_journal_record(db, 0, "smt", "/tmp/r/smt", "on", "off", &c, &err), 0);
	assert_true(c != a);

	struct db_journal_entry *v;
	size_t n;
	assert_int_equal(db_journal_unrestored(db, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].id, a);
	assert_string_equal(v[0].original_value, "on");
	assert_string_equal(v[0].applied_value, "4");
	assert_int_equal(v[0].experiment_id, 0);
	assert_null(v[0].restored_at);
	assert_non_null(v[0].applied_at);
	assert_string_equal(v[1].knob, "ksm");
	db_journal_entries_free(v, n);

	assert_int_equal(db_journal_mark_restored(db, a, &err), 0);
	assert_int_equal(db_journal_unrestored(db, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	db_journal_entries_free(v, n);
	/* After a restore the next change journals a fresh original. */
	int64_t d;
	assert_int_equal(db_journal_record(db, 0, "smt", "/sys/x/smt", "on", "off", &d, &err), 0);
	assert_true(d != a);
	assert_int_equal(db_journal_all(db, &v, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_non_null(v[0].restored_at);
	db_journal_entries_free(v, n);
}

static void test_experiment_reference(void **state)
{
	struct db *db = *state;
	struct ta_err err = { 0 };
	struct db_experiment_new e = { .name = "x", .config_yaml = "a: 1", .config_len = 4,
				       .higher_is_better = -1 };
	int64_t exp, id;
	assert_int_equal(db_experiment_insert(db, &e, &exp, &err), 0);
	assert_int_equal(db_journal_record(db, exp, "thp", "/t", "madvise", "never", &id, &err),
			 0);
	/* A journal row must point at a real experiment. */
	assert_int_equal(db_journal_record(db, exp + 100, "ksm", "/k", "0", "1", &id, &err), -1);
	struct db_journal_entry *v;
	size_t n;
	assert_int_equal(db_journal_unrestored(db, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].experiment_id, exp);
	db_journal_entries_free(v, n);
}

static void test_refused_inside_transaction(void **state)
{
	struct db *db = *state;
	struct ta_err err = { 0 };
	assert_int_equal(db_journal_record(db, 0, "smt", "/s", "on", "off", NULL, &err), 0);
	assert_int_equal(db_begin(db, &err), 0);
	assert_int_equal(db_journal_record(db, 0, "ksm", "/k", "0", "1", NULL, &err), -1);
	assert_non_null(strstr(err.msg, "open transaction"));
	assert_int_equal(db_journal_mark_restored(db, 1, &err), -1);
	db_rollback(db);
	struct db_journal_entry *v;
	size_t n;
	assert_int_equal(db_journal_unrestored(db, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	db_journal_entries_free(v, n);
	/* Marking twice is harmless. */
	assert_int_equal(db_journal_mark_restored(db, 1, &err), 0);
	assert_int_equal(db_journal_mark_restored(db, 1, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_keeps_first_original, setup, teardown),
		cmocka_unit_test_setup_teardown(test_experiment_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_inside_transaction, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
