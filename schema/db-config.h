/*
 * db-config: the `configurations` table and the configuration record
 * (model/config-record.h) — its one column list, the one writer of a row
 * and the one reader of it.  db-plan stores plans through it, db-results
 * and the summaries of `show` read through it, so a column is added in
 * one place.
 *
 * A row holds the record whole: typed columns (key, decision,
 * environment, the shape, pinning and noise names, arch, cpu_mode,
 * cpu_model, is_baseline, each typed knob column of the knob table) and
 * the `factors` JSON (config_record_json: everything, knobs by name,
 * pinning CPUs, runner, host defaults).  Rows stored before schema 7 have
 * no decision or environment of their own: migration 7 derived them from
 * the key and noise (the default environment), and the reader falls back
 * to the same for rows written without them.
 */
#ifndef TA_DB_CONFIG_H
#define TA_DB_CONFIG_H

#include <stdint.h>

#include "../model/config-record.h"
#include "db.h"

/* A prepared INSERT of one configuration row; sqlite3_finalize it. */
sqlite3_stmt *db_config_insert_prepare(struct db *db, struct ta_err *err);
/* Binds and steps st for record r of experiment exp_id; 0, or -1 with err. */
int db_config_insert(struct db *db, sqlite3_stmt *st, int64_t exp_id,
		     const struct config_record *r, int64_t *id_out, struct ta_err *err);

/*
 * Appends the column list the reader reads ("c.idx, c.key, ...", each with
 * the table alias `alias`) to a SELECT being built.
 */
void db_config_columns(struct strbuf *sql, const char *alias);
/*
 * Reads the record from the current row of st, starting at column col (the
 * columns db_config_columns listed).  Returns the column after them.
 */
int db_config_read(sqlite3_stmt *st, int col, struct config_record *r);

#endif
