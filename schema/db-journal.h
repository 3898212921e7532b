/*
 * db-journal: the host_journal table — every host knob change, original
 * value first, so that a crashed controller's changes can be undone.
 *
 * The journal keeps at most one unrestored row per (knob, path): the first
 * change records the host's original value; later changes of the same knob
 * only update applied_value, so a restore writes each knob once and always
 * back to what the host had before topoadvisor touched it.
 *
 * Rows must reach the database before the knob is written, so the writers
 * refuse to run inside an open transaction (its COMMIT could come too late).
 */
#ifndef TA_DB_JOURNAL_H
#define TA_DB_JOURNAL_H

#include <stdint.h>

#include "db.h"

struct db_journal_entry {
	int64_t id;
	int64_t experiment_id;	/* 0: none */
	char *knob;		/* registry name, e.g. "kvm_hv.dynamic_mt_modes" */
	char *path;		/* the file (or directory, per-thread SMT) it was written to */
	char *original_value;
	char *applied_value;
	char *applied_at;
	char *restored_at;	/* NULL while unrestored */
};

/*
 * Records that knob at path is about to be set to `applied` while it holds
 * `original`; committed when this returns 0.  When an unrestored row for the
 * same knob and path exists, only its applied_value (and applied_at) change.
 * *id_out (may be NULL) receives the row id.
 */
int db_journal_record(struct db *db, int64_t experiment_id, const char *knob,
		      const char *path, const char *original, const char *applied,
		      int64_t *id_out, struct ta_err *err);
/* Every unrestored row, oldest first.  Free with db_journal_entries_free. */
int db_journal_unrestored(struct db *db, struct db_journal_entry **out, size_t *n,
			  struct ta_err *err);
/* Every row (restored or not), oldest first: for reports and tests. */
int db_journal_all(struct db *db, struct db_journal_entry **out, size_t *n,
		   struct ta_err *err);
/* Sets restored_at to now; committed when this returns 0. */
int db_journal_mark_restored(struct db *db, int64_t id, struct ta_err *err);
void db_journal_entries_free(struct db_journal_entry *v, size_t n);

#endif
