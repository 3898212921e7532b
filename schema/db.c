/* db: opening, migrating and the experiment records; see db.h. */
#include "db.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <glib.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../util/mono.h"
#include "../util/safefile.h"
#include "../util/strbuf.h"

/* schema.sql, embedded at build time and NUL-terminated. */
__asm__(".section .rodata\n"
	".global ta_schema_sql\n"
	".type ta_schema_sql, @object\n"
	"ta_schema_sql:\n"
	".incbin \"schema/schema.sql\"\n"
	".byte 0\n"
	".previous\n");
extern const char ta_schema_sql[];

#define MIGRATION_MARK "-- @migration "

/*
 * Finds migration `n` in the embedded schema: sets start and len to its SQL.
 * Returns 0, or -1 when there is no such migration.
 */
static int migration_find(int n, const char **start, size_t *len)
{
	const char *p = ta_schema_sql;
	const char *found = NULL;
	while ((p = strstr(p, MIGRATION_MARK))) {
		if (p != ta_schema_sql && p[-1] != '\n') {
			p++;
			continue;
		}
		int num = atoi(p + strlen(MIGRATION_MARK));
		if (found) {
			*start = found;
			*len = (size_t)(p - found);
			return 0;
		}
		if (num == n)
			found = p;
		p++;
	}
	if (!found)
		return -1;
	*start = found;
	*len = strlen(found);
	return 0;
}

int db_schema_version(void)
{
	int n = 0;
	const char *s;
	size_t len;
	while (migration_find(n + 1, &s, &len) == 0)
		n++;
	return n;
}

/* What to do about a damaged file, for every message that says it is one. */
#define DAMAGED_HINT "; restore it from a backup, or copy what is still readable into a " \
		     "new file: sqlite3 %s .recover | sqlite3 NEW.db"

/* Whether SQLite's last error on db says the file is damaged. */
static bool damaged(struct db *db)
{
	int rc = sqlite3_extended_errcode(db->handle) & 0xff;
	return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

int db_error(struct db *db, const char *what, struct ta_err *err)
{
	if (damaged(db))
		return err_set(err, EXIT_FAILURE_RUN, "%s: %s: %s: the database file is damaged"
			       DAMAGED_HINT, db->path, what, sqlite3_errmsg(db->handle), db->path);
	return err_set(err, EXIT_FAILURE_RUN, "%s: %s: %s", db->path, what,
		       sqlite3_errmsg(db->handle));
}

sqlite3_stmt *db_prepare(struct db *db, const char *sql, struct ta_err *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->handle, sql, -1, &st, NULL) != SQLITE_OK) {
		db_error(db, "preparing a statement", err);
		return NULL;
	}
	return st;
}

char *db_column_strdup(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);
	return s ? xstrdup((const char *)s) : NULL;
}

static int exec_sql(struct db *db, const char *sql, struct ta_err *err)
{
	char *msg = NULL;
	if (sqlite3_exec(db->handle, sql, NULL, NULL, &msg) != SQLITE_OK) {
		if (damaged(db))
			err_set(err, EXIT_FAILURE_RUN, "%s: %s: the database file is damaged"
				DAMAGED_HINT, db->path, msg ? msg : "SQL error", db->path);
		else
			err_set(err, EXIT_FAILURE_RUN, "%s: %s", db->path, msg ? msg : "SQL error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/*
 * A command that writes must not build on a damaged file: PRAGMA
 * quick_check walks every b-tree page (0.2 s of CPU for 100 000 runs, 117 MB;
 * integrity_check, which also compares every index with its table, costs
 * three times that).  Read-only commands skip it and report SQLITE_CORRUPT
 * when they meet it (db_error).
 */
static int check_intact(struct db *db, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "PRAGMA quick_check(3)", err);
	if (!st)
		return -1;
	struct strbuf problems = STRBUF_INIT;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* "ok", or problems, one a row, under a "*** in database main ***" line. */
		const char *text = (const char *)sqlite3_column_text(st, 0);
		for (const char *line = text; line && *line && strcmp(line, "ok");) {
			size_t n = strcspn(line, "\n");
			if (strncmp(line, "*** ", 4))
				strbuf_addf(&problems, "%s%.*s", problems.len ? "; " : "",
					    (int)n, line);
			line += n + (line[n] == '\n');
		}
	}
	if (rc != SQLITE_DONE)
		db_error(db, "checking the database", err);
	else if (problems.len)
		err_set(err, EXIT_FAILURE_RUN, "%s: the database file is damaged (PRAGMA "
			"quick_check: %s)" DAMAGED_HINT, db->path, problems.buf, db->path);
	sqlite3_finalize(st);
	int failed = rc != SQLITE_DONE || problems.len;
	strbuf_release(&problems);
	return failed ? -1 : 0;
}

/*
 * Switches a database to WAL.  The switch needs an exclusive lock, and SQLite
 * returns SQLITE_BUSY at once, without its busy handler, when another
 * connection holds a write lock while this one reads (deadlock avoidance): two
 * commands opening a new database together hit that.  So retry here, for as
 * long as the busy timeout would have waited.
 */
static int set_wal(struct db *db, struct ta_err *err)
{
	for (int waited_ms = 0;; waited_ms += 50) {
		int rc = sqlite3_exec(db->handle, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return 0;
		if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
		    waited_ms >= 10000)
			return err_set(err, EXIT_FAILURE_RUN, "%s: %s", db->path,
				       sqlite3_errmsg(db->handle));
		mono_sleep_ms(50);
	}
}

int db_begin(struct db *db, struct ta_err *err)
{
	return exec_sql(db, "BEGIN IMMEDIATE", err);
}

int db_commit(struct db *db, struct ta_err *err)
{
	return exec_sql(db, "COMMIT", err);
}

void db_rollback(struct db *db)
{
	if (!sqlite3_get_autocommit(db->handle))
		sqlite3_exec(db->handle, "ROLLBACK", NULL, NULL, NULL);
}

static int user_version(struct db *db, int *v, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "PRAGMA user_version", err);
	if (!st)
		return -1;
	int rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_error(db, "reading the schema version", err);
}

/*
 * Applies migrations (current, target], each in its own transaction.  The
 * version is read again inside each transaction: another process that
 * opened the same new file at the same moment may have applied it first.
 */
static int migrate(struct db *db, int target, struct ta_err *err)
{
	int v;
	if (user_version(db, &v, err) < 0)
		return -1;
	if (v > db_schema_version())
		return err_set(err, EXIT_FAILURE_RUN,
			       "%s: schema version %d is newer than this topoadvisor "
			       "understands (%d); use a newer topoadvisor",
			       db->path, v, db_schema_version());
	for (int n = v + 1; n <= target; n++) {
		const char *sql;
		size_t len;
		if (migration_find(n, &sql, &len) < 0)
			return err_set(err, EXIT_FAILURE_RUN, "migration %d is missing", n);
		if (db_begin(db, err) < 0 || user_version(db, &v, err) < 0) {
			db_rollback(db);
			err_prefix(err, "applying schema migration %d", n);
			return -1;
		}
		if (v >= n) {
			db_rollback(db);
			n = v;
			continue;
		}
		struct strbuf sb = STRBUF_INIT;
		strbuf_add(&sb, sql, len);
		strbuf_addf(&sb, "\nPRAGMA user_version = %d;\nCOMMIT;\n", n);
		int rc = exec_sql(db, strbuf_str(&sb), err);
		strbuf_release(&sb);
		if (rc < 0) {
			db_rollback(db);
			err_prefix(err, "applying schema migration %d", n);
			return -1;
		}
	}
	return 0;
}

/* "PATH: No such file or directory (run ...)" for a database that is not there. */
static int missing_error(const char *path, int e, struct ta_err *err)
{
	return err_set(err, err_open_code(e), "%s: %s%s", path,
		       strerror(e), e == ENOENT ? " (run 'topoadvisor run CONFIG' to create it, "
						  "or pass --db PATH)" : "");
}

/* A --db that names no file (a directory, FIFO, device) is refused before SQLite blocks on it. */
static int not_a_file_error(const char *path, const struct stat *st, struct ta_err *err)
{
	return err_set(err, EXIT_BAD_INPUT, "%s: it is %s, not a database file; pass --db "
		       "FILE", path, safefile_kind(st->st_mode));
}

/*
 * What SQLite opens beside a database: a name planted there (a symbolic
 * link, a FIFO, a file of a third user) would make it write elsewhere or
 * read changes nobody of ours made, and SQLite itself says only "unable to
 * open database file".  Each sidecar present must be a regular file of the
 * database's owner or ours.  Returns 0, or -1 with err saying which and why.
 */
static int check_sidecars(const char *path, uid_t owner, struct ta_err *err)
{
	static const char *const suffixes[] = { "-wal", "-shm", "-journal" };
	int rc = 0;
	struct strbuf name = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]) && rc == 0; i++) {
		strbuf_reset(&name);
		strbuf_addf(&name, "%s%s", path, suffixes[i]);
		struct stat lst;
		if (lstat(strbuf_str(&name), &lst) < 0)
			continue;
		if (S_ISLNK(lst.st_mode)) {
			char target[512];
			ssize_t n = readlink(strbuf_str(&name), target, sizeof(target) - 1);
			target[n > 0 ? n : 0] = '\0';
			rc = err_set(err, EXIT_BAD_INPUT, "%s: refusing to open the database: "
				     "%s is a symbolic link (to %s), and SQLite would read and "
				     "write the database's changes through it; remove it if no program you "
				     "trust made it", path, strbuf_str(&name), target);
		} else if (!S_ISREG(lst.st_mode)) {
			rc = err_set(err, EXIT_BAD_INPUT, "%s: refusing to open the database: "
				     "%s is %s, not a file; remove it", path, strbuf_str(&name),
				     safefile_kind(lst.st_mode));
		} else if (lst.st_uid != owner && lst.st_uid != geteuid()) {
			rc = err_set(err, EXIT_BAD_INPUT, "%s: refusing to open the database: "
				     "%s belongs to uid %u, neither the database's owner (uid %u) "
				     "nor us, and SQLite would take its content as the "
				     "database's; remove it if no program you trust made it",
				     path, strbuf_str(&name), (unsigned)lst.st_uid,
				     (unsigned)owner);
		}
	}
	strbuf_release(&name);
	return rc;
}

/*
 * The file --db names, when it exists: a regular file, or a symbolic link
 * that we or root made (never one of another user: with
 * fs.protected_symlinks off, a link planted in /tmp would otherwise turn a
 * file we never made into a database).  Fills *id with the file's identity
 * and real with the name to hand SQLite (the link resolved, so that SQLite
 * can open it with SQLITE_OPEN_NOFOLLOW).  Returns 0, or -1 with err set
 * (errno ENOENT when there is nothing at path).
 */
static int existing_file(const char *path, struct stat *id, struct strbuf *real,
			 struct ta_err *err)
{
	struct stat lst;
	if (lstat(path, &lst) < 0)
		return missing_error(path, errno, err);
	strbuf_reset(real);
	if (S_ISLNK(lst.st_mode)) {
		if (lst.st_uid != geteuid() && lst.st_uid != 0)
			return err_set(err, EXIT_BAD_INPUT, "%s: refusing to use it: it is a "
				       "symbolic link of another user (uid %u), and a database is "
				       "never opened through a link someone else made; pass --db "
				       "with the file's own path", path, (unsigned)lst.st_uid);
		char *resolved = realpath(path, NULL);
		if (!resolved)
			return missing_error(path, errno, err);
		strbuf_addstr(real, resolved);
		free(resolved);
		if (lstat(strbuf_str(real), &lst) < 0)
			return missing_error(path, errno, err);
	} else {
		strbuf_addstr(real, path);
	}
	if (!S_ISREG(lst.st_mode))
		return not_a_file_error(path, &lst, err);
	if (lst.st_nlink != 1)
		return err_set(err, EXIT_BAD_INPUT, "%s: refusing to use it: it has %ju more "
			       "hard link%s, whose content would change too; pass --db with a "
			       "file of its own", path, (uintmax_t)lst.st_nlink - 1,
			       lst.st_nlink == 2 ? "" : "s");
	*id = lst;
	return 0;
}

/*
 * Whether one of our descriptors is the file id: after sqlite3_open_v2(),
 * SQLite holds the main file open, so this tells whether what it opened is
 * what we looked at, whatever was swapped under the name in between.
 * Without /proc there is nothing to compare with, and the name is trusted.
 */
static bool holding(const struct stat *id)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return true;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		struct stat st;
		if (*end || end == e->d_name || fd == dirfd(d))
			continue;
		found = fstat((int)fd, &st) == 0 && st.st_dev == id->st_dev &&
			st.st_ino == id->st_ino;
	}
	closedir(d);
	return found;
}

/*
 * Refuses a database that is not ours before anything writes to it (the
 * switch to WAL rewrites its header, migration 1 adds our tables): one with
 * tables but without ours (another application's), or an empty one with a
 * schema version of someone else.  An empty file and a database of ours of
 * any version pass.
 */
static int check_ours(struct db *db, struct ta_err *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db->handle, "SELECT name FROM sqlite_master WHERE type IN "
			       "('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
			       "ORDER BY name", -1, &st, NULL) != SQLITE_OK)
		return err_set(err, EXIT_FAILURE_RUN, "%s: %s", db->path,
			       sqlite3_errmsg(db->handle));
	struct strbuf names = STRBUF_INIT;
	bool ours = false;
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		if (!name)
			continue;
		ours |= !strcmp(name, "experiments");
		if (n++ < 8)
			strbuf_addf(&names, "%s%s", n > 1 ? ", " : "", name);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		strbuf_release(&names);
		return err_set(err, EXIT_FAILURE_RUN, "%s: %s", db->path,
			       sqlite3_errmsg(db->handle));
	}
	int v = 0;
	if (!ours && n == 0 && user_version(db, &v, err) < 0) {
		strbuf_release(&names);
		return -1;
	}
	if (n > 8)
		strbuf_addf(&names, " and %zu more", n - 8);
	if (!ours && n > 0)
		rc = err_set(err, EXIT_BAD_INPUT, "%s is an SQLite database of another "
			     "application (tables: %s), not a topoadvisor database; it was left "
			     "untouched: pass --db with a new file name", db->path,
			     strbuf_str(&names));
	else if (!ours && v != 0)
		rc = err_set(err, EXIT_BAD_INPUT, "%s is an SQLite database of another "
			     "application (no tables, user_version %d), not a topoadvisor "
			     "database; it was left untouched: pass --db with a new file name",
			     db->path, v);
	else
		rc = 0;
	strbuf_release(&names);
	return rc;
}

static struct db *open_common(const char *path, bool create, int target, struct ta_err *err)
{
	struct stat id;
	bool created = false;
	struct strbuf real = STRBUF_INIT;
	if (!create || lstat(path, &id) == 0 || errno != ENOENT) {
		if (existing_file(path, &id, &real, err) < 0)
			goto fail;
	} else {
		/* Made here, never through a name someone planted (safefile.h);
		 * an empty file is an empty database.  Not world-readable. */
		int fd = safefile_create(path, 0600, err);
		if (fd >= 0) {
			bool ok = fstat(fd, &id) == 0;
			close(fd);
			if (!ok) {
				err_set(err, EXIT_FAILURE_RUN, "%s: %s", path, strerror(errno));
				goto fail;
			}
			created = true;
			strbuf_addstr(&real, path);
		} else if (errno != EEXIST) {
			err_prefix(err, "creating the database");
			goto fail;
		} else {
			/* another command created it meanwhile: open theirs */
			err_clear(err);
			if (existing_file(path, &id, &real, err) < 0)
				goto fail;
		}
	}
	if (check_sidecars(strbuf_str(&real), id.st_uid, err) < 0)
		goto fail;
	struct db *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	/* Its -wal and -shm files are not world-writable (nor world-readable). */
	mode_t old = umask(077);
	int rc = sqlite3_open_v2(strbuf_str(&real), &db->handle,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
	umask(old);
	strbuf_release(&real);
	if (rc != SQLITE_OK) {
		err_set(err, EXIT_FAILURE_RUN, "%s: cannot open database: %s", path,
			db->handle ? sqlite3_errmsg(db->handle) : "out of memory");
		db_close(db);
		return NULL;
	}
	if (!holding(&id)) {
		err_set(err, EXIT_BAD_INPUT, "%s: refusing to use it: the file changed under "
			"its name while we opened it; pass --db with a name only you can change",
			path);
		db_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db->handle, 10000);
	sqlite3_extended_result_codes(db->handle, 1);
	if (check_ours(db, err) < 0) {
		if (err->code != EXIT_BAD_INPUT)
			err_prefix(err, "%s is not a usable topoadvisor database", path);
		db_close(db);
		return NULL;
	}
	if (exec_sql(db, "PRAGMA foreign_keys = ON", err) < 0 ||
	    set_wal(db, err) < 0 ||
	    exec_sql(db, "PRAGMA synchronous = NORMAL", err) < 0) {
		err_prefix(err, "%s is not a usable topoadvisor database", path);
		db_close(db);
		return NULL;
	}
	if (!created && check_intact(db, err) < 0) {
		db_close(db);
		return NULL;
	}
	if (migrate(db, target, err) < 0) {
		db_close(db);
		return NULL;
	}
	db->version = target;
	return db;
fail:
	strbuf_release(&real);
	return NULL;
}

/* Whether path-SUFFIX exists and is not empty. */
static bool sidecar_has_data(const char *path, const char *suffix)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s%s", path, suffix);
	struct stat st;
	bool has = stat(strbuf_str(&sb), &st) == 0 && st.st_size > 0;
	strbuf_release(&sb);
	return has;
}

/* Why SQLite cannot read path read-only: the storage, not "unable to open". */
static void readonly_cause(const char *path, struct strbuf *why)
{
	struct strbuf dir = STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	if (!slash)
		strbuf_addstr(&dir, ".");
	else if (slash == path)
		strbuf_addstr(&dir, "/");
	else
		strbuf_add(&dir, path, (size_t)(slash - path));
	struct statvfs vfs;
	if (statvfs(strbuf_str(&dir), &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		strbuf_addf(why, "it is on a read-only file system");
	else if (access(strbuf_str(&dir), W_OK) < 0)
		strbuf_addf(why, "its directory %s is not writable for us (%s)",
			    strbuf_str(&dir), strerror(errno));
	else if (statvfs(strbuf_str(&dir), &vfs) == 0 && vfs.f_bavail == 0)
		strbuf_addf(why, "its file system is full");
	else
		strbuf_addf(why, "SQLite could not create %s-shm", path);
	strbuf_addf(why, ", and %s-wal holds changes not yet merged into it, which SQLite "
		    "reads only with write access; merge them once where it is writable "
		    "(sqlite3 %s 'PRAGMA wal_checkpoint(TRUNCATE)', or any sweep there)", path,
		    path);
	strbuf_release(&dir);
}

/* Opens path read-only; immutable: promise SQLite nobody writes it (no -shm needed). */
static int open_ro_handle(struct db *db, bool immutable)
{
	if (!immutable)
		return sqlite3_open_v2(db->path, &db->handle, SQLITE_OPEN_READONLY, NULL);
	struct strbuf uri = STRBUF_INIT;
	strbuf_addstr(&uri, "file:");
	for (const char *p = db->path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			strbuf_addf(&uri, "%%%02X", (unsigned char)*p);
		else
			strbuf_addch(&uri, *p);
	}
	strbuf_addstr(&uri, "?immutable=1");
	int rc = sqlite3_open_v2(strbuf_str(&uri), &db->handle,
				 SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	strbuf_release(&uri);
	return rc;
}

struct db *db_open_readonly(const char *path, struct ta_err *err)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		missing_error(path, errno, err);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		not_a_file_error(path, &st, err);
		return NULL;
	}
	const char *why;
	int fd = safefile_open_input(path, &why);
	if (fd < 0) {
		err_set(err, EXIT_FAILURE_RUN, "%s: cannot read the database: %s", path, why);
		return NULL;
	}
	close(fd);
	if (check_sidecars(path, st.st_uid, err) < 0)
		return NULL;
	struct db *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	int v = -1;
	/* A WAL database needs its -shm file, which read-only or full storage
	 * cannot give us.  Without unmerged changes in -wal the main file is
	 * the whole database, and reading it as immutable is exact. */
	for (int immutable = 0; immutable < 2 && v < 0; immutable++) {
		if (immutable && sidecar_has_data(path, "-wal"))
			break;
		sqlite3_close(db->handle);
		db->handle = NULL;
		struct ta_err probe = { 0 };
		if (open_ro_handle(db, immutable) == SQLITE_OK && db->handle) {
			sqlite3_busy_timeout(db->handle, 10000);
			sqlite3_extended_result_codes(db->handle, 1);
			if (user_version(db, &v, &probe) < 0)
				v = -1;
		}
		if (v < 0)
			*err = probe;
	}
	if (v < 0) {
		struct strbuf why = STRBUF_INIT;
		if (sidecar_has_data(path, "-wal"))
			readonly_cause(path, &why);
		else
			strbuf_addstr(&why, db->handle ? sqlite3_errmsg(db->handle)
						       : "out of memory");
		err_set(err, EXIT_FAILURE_RUN, "%s: cannot read the database: %s", path,
			strbuf_str(&why));
		strbuf_release(&why);
		db_close(db);
		return NULL;
	}
	db->version = v;
	if (check_ours(db, err) < 0) {
		db_close(db);
		return NULL;
	}
	if (v <= db_schema_version())
		return db;
	db_close(db);
	err_set(err, EXIT_FAILURE_RUN, "%s: schema version %d is newer than this topoadvisor "
		"understands (%d); use a newer topoadvisor", path, v, db_schema_version());
	return NULL;
}

struct db *db_open(const char *path, bool create, struct ta_err *err)
{
	return open_common(path, create, db_schema_version(), err);
}

struct db *db_open_at_version(const char *path, int version, struct ta_err *err)
{
	return open_common(path, true, version, err);
}

void db_close(struct db *db)
{
	if (!db)
		return;
	sqlite3_close(db->handle);
	free(db->path);
	free(db);
}

void db_sha256_hex(const void *data, size_t len, char *buf)
{
	gchar *hex = g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, len);
	memcpy(buf, hex, 64);
	buf[64] = '\0';
	g_free(hex);
}

/* ---- experiments ------------------------------------------------------ */

int db_experiment_insert(struct db *db, const struct db_experiment_new *e,
			 int64_t *id_out, struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO experiments (name, parent_id, config_yaml, config_sha256, "
		"config_path, tool_version, host_facts, seed, primary_metric, "
		"higher_is_better, objective, equivalence, environment, max_failure_rate) "
		"VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
	if (!st)
		return -1;
	char sha[65];
	db_sha256_hex(e->config_yaml, e->config_len, sha);
	sqlite3_bind_text(st, 1, e->name, -1, SQLITE_STATIC);
	if (e->parent_id > 0)
		sqlite3_bind_int64(st, 2, e->parent_id);
	sqlite3_bind_text(st, 3, e->config_yaml, (int)e->config_len, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, sha, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, e->config_path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, TA_VERSION, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, e->host_facts ? e->host_facts : "{}", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)e->seed);
	sqlite3_bind_text(st, 9, e->primary_metric, -1, SQLITE_STATIC);
	if (e->higher_is_better >= 0)
		sqlite3_bind_int(st, 10, e->higher_is_better);
	char *environment = NULL;
	if (e->objective) {
		json_object *env = json_object_new_array();
		for (size_t i = 0; i < e->nenvironment; i++)
			json_object_array_add(env, json_object_new_string(e->environment[i]));
		environment = xstrdup(json_object_to_json_string_ext(env, JSON_C_TO_STRING_PLAIN));
		json_object_put(env);
		sqlite3_bind_text(st, 11, e->objective, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 12, e->equivalence);
		sqlite3_bind_text(st, 13, environment, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 14, e->max_failure_rate);
	}
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	free(environment);
	if (rc != SQLITE_DONE)
		return db_error(db, "storing the experiment", err);
	*id_out = sqlite3_last_insert_rowid(db->handle);
	return 0;
}

int db_experiment_set_status(struct db *db, int64_t id, const char *status,
			     struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db,
		"UPDATE experiments SET status = ?1, error = NULL, finished_at = CASE WHEN ?1 IN "
		"('done','failed','interrupted') THEN strftime('%Y-%m-%dT%H:%M:%fZ','now') "
		"ELSE NULL END WHERE id = ?2", err);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "updating the experiment", err);
}

int db_experiment_fail(struct db *db, int64_t id, const char *cause, struct ta_err *err)
{
	if (db_experiment_set_status(db, id, "failed", err) < 0)
		return -1;
	sqlite3_stmt *st = db_prepare(db, "UPDATE experiments SET error = ? WHERE id = ?", err);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, cause, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, id);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_error(db, "storing why the experiment failed", err);
}

/*
 * An experiment with its counts: configurations, and runs by status from
 * run_counts (migration 8: kept by triggers), so that listing costs a few
 * rows per configuration, however many runs are stored.
 */
#define EXPERIMENT_COLUMNS \
	"e.id, e.name, e.created_at, e.finished_at, e.parent_id, e.config_yaml, " \
	"e.config_sha256, e.config_path, e.tool_version, e.host_facts, e.status, " \
	"e.seed, e.primary_metric, e.higher_is_better, " \
	"COUNT(c.id), " \
	"COALESCE(SUM(k.planned + k.running + k.ok + k.failed + k.interrupted), 0), " \
	"COALESCE(SUM(k.planned), 0), COALESCE(SUM(k.running), 0), " \
	"COALESCE(SUM(k.ok), 0), COALESCE(SUM(k.failed), 0), " \
	"COALESCE(SUM(k.interrupted), 0), e.error, " \
	"e.objective, e.equivalence, e.environment, e.max_failure_rate " \
	"FROM experiments e " \
	"LEFT JOIN configurations c ON c.experiment_id = e.id " \
	"LEFT JOIN run_counts k ON k.configuration_id = c.id "

/*
 * The stored advisor settings from columns col.. (objective, equivalence,
 * environment, max_failure_rate).
 */
static void advisor_from_row(sqlite3_stmt *st, int col, struct db_advisor_settings *a)
{
	a->objective = db_column_strdup(st, col);
	a->known = a->objective != NULL;
	a->equivalence = sqlite3_column_double(st, col + 1);
	const char *text = (const char *)sqlite3_column_text(st, col + 2);
	json_object *env = text ? json_tokener_parse(text) : NULL;
	if (env && json_object_is_type(env, json_type_array)) {
		size_t n = json_object_array_length(env);
		a->environment = xcalloc(n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			json_object *v = json_object_array_get_idx(env, i);
			if (json_object_is_type(v, json_type_string))
				a->environment[a->nenvironment++] = xstrdup(json_object_get_string(v));
		}
	}
	json_object_put(env);
	a->max_failure_rate = sqlite3_column_type(st, col + 3) == SQLITE_NULL ? NAN
			      : sqlite3_column_double(st, col + 3);
}

static void experiment_from_row(sqlite3_stmt *st, struct db_experiment *e)
{
	memset(e, 0, sizeof(*e));
	e->id = sqlite3_column_int64(st, 0);
	e->name = db_column_strdup(st, 1);
	e->created_at = db_column_strdup(st, 2);
	e->finished_at = db_column_strdup(st, 3);
	e->parent_id = sqlite3_column_int64(st, 4);
	e->config_yaml = db_column_strdup(st, 5);
	e->config_sha256 = db_column_strdup(st, 6);
	e->config_path = db_column_strdup(st, 7);
	e->tool_version = db_column_strdup(st, 8);
	e->host_facts = db_column_strdup(st, 9);
	e->status = db_column_strdup(st, 10);
	e->seed = (uint64_t)sqlite3_column_int64(st, 11);
	e->primary_metric = db_column_strdup(st, 12);
	e->higher_is_better = sqlite3_column_type(st, 13) == SQLITE_NULL
		? -1 : sqlite3_column_int(st, 13);
	e->nconfigs = sqlite3_column_int(st, 14);
	e->nruns = sqlite3_column_int(st, 15);
	e->nplanned = sqlite3_column_int(st, 16);
	e->nrunning = sqlite3_column_int(st, 17);
	e->nok = sqlite3_column_int(st, 18);
	e->nfailed = sqlite3_column_int(st, 19);
	e->ninterrupted = sqlite3_column_int(st, 20);
	e->error = db_column_strdup(st, 21);
	advisor_from_row(st, 22, &e->advisor);
}

int db_experiment_list(struct db *db, struct db_experiment **out, size_t *n,
		       struct ta_err *err)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT " EXPERIMENT_COLUMNS
				      "GROUP BY e.id ORDER BY e.id DESC", err);
	if (!st)
		return -1;
	struct db_experiment *v = NULL;
	size_t count = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (count + 1) * sizeof(*v));
		experiment_from_row(st, &v[count++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_experiments_free(v, count);
		return db_error(db, "listing experiments", err);
	}
	*out = v;
	*n = count;
	return 0;
}

int db_experiment_get(struct db *db, const char *id_or_name, struct db_experiment *out,
		      struct ta_err *err)
{
	char *end;
	long long id = strtoll(id_or_name, &end, 10);
	bool by_id = *id_or_name && !*end;
	sqlite3_stmt *st = db_prepare(db, by_id
		? "SELECT " EXPERIMENT_COLUMNS "WHERE e.id = ? GROUP BY e.id"
		: "SELECT " EXPERIMENT_COLUMNS "WHERE e.name = ? GROUP BY e.id "
		  "ORDER BY e.id DESC LIMIT 1", err);
	if (!st)
		return -1;
	if (by_id)
		sqlite3_bind_int64(st, 1, id);
	else
		sqlite3_bind_text(st, 1, id_or_name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		experiment_from_row(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return err_set(err, EXIT_BAD_INPUT,
			       "%s: no experiment '%s' (see 'topoadvisor list')",
			       db->path, id_or_name);
	return rc == SQLITE_ROW ? 0 : db_error(db, "reading the experiment", err);
}

void db_experiment_release(struct db_experiment *e)
{
	free(e->name);
	free(e->created_at);
	free(e->finished_at);
	free(e->config_yaml);
	free(e->config_sha256);
	free(e->config_path);
	free(e->tool_version);
	free(e->host_facts);
	free(e->status);
	free(e->error);
	free(e->primary_metric);
	free(e->advisor.objective);
	for (size_t i = 0; i < e->advisor.nenvironment; i++)
		free(e->advisor.environment[i]);
	free(e->advisor.environment);
	memset(e, 0, sizeof(*e));
}

void db_experiments_free(struct db_experiment *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		db_experiment_release(&v[i]);
	free(v);
}
