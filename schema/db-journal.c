/* db-journal: the host_journal table; see db-journal.h. */
#include "db-journal.h"

#include <stdlib.h>

#include "../util/strbuf.h"

#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/*
 * A journal write that sits in a caller's transaction is not on disk until
 * that transaction commits, which may be after the knob was written and the
 * process died: refuse instead of silently losing the original.
 */
static int require_autocommit(struct db *db, struct ta_err *err)
{
	if (!sqlite3_get_autocommit(db->handle))
		return err_set(err, EXIT_FAILURE_RUN,
			       "%s: host journal written inside an open transaction; "
			       "commit it first so the original value is stored before "
			       "the host is changed", db->path);
	return 0;
}

int db_journal_record(struct db *db, int64_t experiment_id, const char *knob,
		      const char *path, const char *original, const char *applied,
		      int64_t *id_out, struct ta_err *err)
{
	if (require_autocommit(db, err) < 0 || db_begin(db, err) < 0)
		return -1;
	int64_t id = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id FROM host_journal WHERE knob = ? AND path IS ? "
		"AND restored_at IS NULL ORDER BY id LIMIT 1", err);
	if (!st)
		goto fail;
	sqlite3_bind_text(st, 1, knob, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_error(db, "reading the host journal", err);
		goto fail;
	}
	if (id) {
		st = db_prepare(db, "UPDATE host_journal SET applied_value = ?, "
				"applied_at = " NOW_SQL " WHERE id = ?", err);
		if (!st)
			goto fail;
		sqlite3_bind_text(st, 1, applied, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, id);
	} else {
		st = db_prepare(db, "INSERT INTO host_journal (experiment_id, knob, path, "
				"original_value, applied_value) VALUES (?,?,?,?,?)", err);
		if (!st)
			goto fail;
		if (experiment_id > 0)
			sqlite3_bind_int64(st, 1, experiment_id);
		sqlite3_bind_text(st, 2, knob, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, path, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, original, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, applied, -1, SQLITE_STATIC);
	}
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_error(db, "writing the host journal", err);
		goto fail;
	}
	if (!id)
		id = sqlite3_last_insert_rowid(db->handle);
	if (db_commit(db, err) < 0)
		goto fail;
	if (id_out)
		*id_out = id;
	return 0;
fail:
	db_rollback(db);
	return -1;
}

static int journal_select(struct db *db, const char *sql, struct db_journal_entry **out,
			  size_t *n, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, sql, err);
	if (!st)
		return -1;
	struct db_journal_entry *v = NULL;
	size_t len = 0, alloc = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		struct db_journal_entry *e = &v[len++];
		e->id = sqlite3_column_int64(st, 0);
		e->experiment_id = sqlite3_column_int64(st, 1);
		e->knob = db_column_strdup(st, 2);
		e->path = db_column_strdup(st, 3);
		e->original_value = db_column_strdup(st, 4);
		e->applied_value = db_column_strdup(st, 5);
		e->applied_at = db_column_strdup(st, 6);
		e->restored_at = db_column_strdup(st, 7);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_journal_entries_free(v, len);
		return db_error(db, "reading the host journal", err);
	}
	*out = v;
	*n = len;
	return 0;
}

#define JOURNAL_COLUMNS "SELECT id, experiment_id, knob, path, original_value, " \
	"applied_value, applied_at, restored_at FROM host_journal "

int db_journal_unrestored(struct db *db, struct db_journal_entry **out, size_t *n,
			  struct ta_err *err)
{
	return journal_select(db, JOURNAL_COLUMNS "WHERE restored_at IS NULL ORDER BY id",
			      out, n, err);
}

int db_journal_all(struct db *db, struct db_journal_entry **out, size_t *n,
		   struct ta_err *err)
{
	return journal_select(db, JOURNAL_COLUMNS "ORDER BY id", out, n, err);
}

int db_journal_mark_restored(struct db *db, int64_t id, struct ta_err *err)
{
	if (require_autocommit(db, err) < 0)
		return -1;
	sqlite3_stmt *st = db_prepare(db, "UPDATE host_journal SET restored_at = " NOW_SQL
				      " WHERE id = ? AND restored_at IS NULL", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(db, "marking a host journal entry restored", err);
	return 0;
}

void db_journal_entries_free(struct db_journal_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].knob);
		free(v[i].path);
		free(v[i].original_value);
		free(v[i].applied_value);
		free(v[i].applied_at);
		free(v[i].restored_at);
	}
	free(v);
}
