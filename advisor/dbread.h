/*
 * dbread: how the commands that only read (list, show, rank, recommend,
 * report, export) open the database.
 *
 * Read-only (db_open_readonly), so storage they may not write still serves.
 * A database of an older schema must be migrated before the readers can use
 * it, and migrations happen only under the host lock (hostlock.h), so that
 * none runs under a controller that is writing the database: dbread takes
 * the lock for the upgrade, or says why it cannot (a sweep holds it, the
 * file is not writable).
 */
#ifndef TA_DBREAD_H
#define TA_DBREAD_H

#include "../schema/db.h"

/* Opens path for reading at the current schema; NULL with err saying why. */
struct db *dbread_open(const char *path, struct ta_err *err);

#endif
