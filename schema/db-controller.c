/* db-controller: one running experiment per host; see db-controller.h. */
#include "db-controller.h"

#include <stdbool.h>
#include <unistd.h>

#include "../util/procgroup.h"

int db_controller_claim(struct db *db, int64_t exp_id, const char *host, struct ta_err *err)
{
	return db_controller_claim_as(db, exp_id, host, getpid(), err);
}

/* Whether the controller pid that started at `start` still lives. */
static bool controller_alive(int64_t pid, int64_t start)
{
	return pid > 0 && start > 0 &&
	       procgroup_start_time((pid_t)pid) == (unsigned long long)start;
}

int db_controller_claim_as(struct db *db, int64_t exp_id, const char *host, pid_t pid,
			   struct ta_err *err)
{
	if (db_begin(db, err) < 0)
		return -1;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT c.experiment_id, e.name, c.pid, c.pid_start FROM controllers c "
		"JOIN experiments e ON e.id = c.experiment_id "
		"WHERE c.host = ?1 AND c.experiment_id <> ?2 AND e.status = 'running' "
		"ORDER BY c.experiment_id", err);
	if (!st)
		goto fail;
	sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, exp_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!controller_alive(sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)))
			continue;
		err_set(err, EXIT_FAILURE_RUN, "experiment %lld (%s) is running on this host "
			"(%s), its controller process %lld alive; one experiment drives a host "
			"at a time: wait for it to finish, or stop it (it restores the host on "
			"SIGINT/SIGTERM) and try again", (long long)sqlite3_column_int64(st, 0),
			(const char *)sqlite3_column_text(st, 1), host,
			(long long)sqlite3_column_int64(st, 2));
		sqlite3_finalize(st);
		goto fail;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_error(db, "reading the running controllers", err);
		goto fail;
	}
	unsigned long long start = procgroup_start_time(pid);
	st = db_prepare(db, "INSERT OR REPLACE INTO controllers (experiment_id, host, pid, "
			"pid_start) VALUES (?1, ?2, ?3, ?4)", err);
	if (!st)
		goto fail;
	sqlite3_bind_int64(st, 1, exp_id);
	sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, pid);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)start);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_error(db, "recording the experiment's controller", err);
		goto fail;
	}
	return db_commit(db, err);
fail:
	db_rollback(db);
	return -1;
}
