/* dbread: opening the database for the commands that only read; see dbread.h. */
#include "dbread.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../experiments/hostlock.h"

struct db *dbread_open(const char *path, struct ta_err *err)
{
	struct db *db = db_open_readonly(path, err);
	if (!db || db->version == db_schema_version())
		return db;
	int version = db->version;
	db_close(db);
	if (access(path, W_OK) < 0) {
		err_set(err, EXIT_FAILURE_RUN, "%s: schema version %d is older than this "
			"topoadvisor reads (%d), and the file is not writable (%s) to upgrade it; "
			"open it once with write access, or read it with topoadvisor of its "
			"version", path, version, db_schema_version(), strerror(errno));
		return NULL;
	}
	struct hostlock lock;
	if (hostlock_acquire(&lock, NULL, err) < 0) {
		err_prefix(err, "%s: upgrading it from schema version %d to %d needs the host "
			   "lock", path, version, db_schema_version());
		return NULL;
	}
	db = db_open(path, false, err);
	hostlock_release(&lock);
	return db;
}
