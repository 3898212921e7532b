/*
 * db: the SQLite store (schema/schema.sql, embedded) and its access layer.
 *
 * db_open() opens or creates the database (a new file is made with
 * safefile_create, mode 0600), turns on WAL, foreign keys and a busy
 * timeout, and applies the migrations the file still lacks, each under a
 * transaction that checks the version again (callers that change the host
 * also hold the host lock first).  db_open_readonly() is for the commands
 * that only read.  All SQL
 * goes through prepared statements in the schema/db files; callers get plain
 * structs.  Writers group their work with db_begin()/db_commit() so that a
 * run is stored whole or not at all.
 */
#ifndef TA_DB_H
#define TA_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "../util/err.h"

struct db {
	sqlite3 *handle;
	char *path;
	int version;	/* its schema version (db_schema_version() once migrated) */
};

/* The schema version this binary writes (the number of the last migration). */
int db_schema_version(void);

/*
 * Opens path, creating it when `create` is set (else a missing file is an
 * error that says how to make one), and migrates it to db_schema_version().
 * A database newer than this binary is refused.
 */
struct db *db_open(const char *path, bool create, struct ta_err *err);
/*
 * Opens path for reading only (list, show, rank, recommend, report, export,
 * compare): SQLITE_OPEN_READONLY, so a database on read-only or full
 * storage, or in a directory we may not write, is still read (as immutable
 * when SQLite cannot make its -shm file and no unmerged -wal exists).  It
 * never migrates: a database of an older schema is returned as it is, with
 * db->version telling so (the readers need the current one; upgrading is a
 * migration, for a caller holding the host lock: advisor/dbread.h).  A newer
 * one is refused.  Failures name the real cause (permission, read-only file
 * system, unmerged -wal), not SQLite's "unable to open database file".
 */
struct db *db_open_readonly(const char *path, struct ta_err *err);
/* Test hook: opens/creates path and migrates only up to `version`. */
struct db *db_open_at_version(const char *path, int version, struct ta_err *err);
void db_close(struct db *db);

int db_begin(struct db *db, struct ta_err *err);	/* BEGIN IMMEDIATE */
int db_commit(struct db *db, struct ta_err *err);
void db_rollback(struct db *db);

/* Prepares sql or fills err with the statement and SQLite's message. */
sqlite3_stmt *db_prepare(struct db *db, const char *sql, struct ta_err *err);
/* Sets err from the handle's last error, prefixed with `what`; returns -1. */
int db_error(struct db *db, const char *what, struct ta_err *err);
/* A column as a fresh string (NULL for SQL NULL). */
char *db_column_strdup(sqlite3_stmt *st, int col);

/* ---- experiments ------------------------------------------------------ */

/*
 * How the advisor decides for an experiment: its sweep's advisor.* (docs/
 * config.md), stored with it so that rank never reads the sweep again.
 */
struct db_advisor_settings {
	bool known;		/* false: stored before schema 7 by a sweep naming `advisor` */
	char *objective;	/* "worst" | "mean" */
	double equivalence;	/* a fraction (0.02) */
	char **environment;	/* environment factors besides noise */
	size_t nenvironment;
};

struct db_experiment {
	int64_t id;
	char *name;
	char *created_at;
	char *finished_at;	/* NULL while unfinished */
	int64_t parent_id;	/* 0: none */
	char *config_yaml;
	char *config_sha256;
	char *config_path;
	char *tool_version;
	char *host_facts;	/* JSON */
	char *status;		/* planned|running|done|failed|interrupted */
	char *error;		/* why it failed as a whole, NULL if it did not */
	uint64_t seed;
	char *primary_metric;
	int higher_is_better;	/* -1 unknown */
	struct db_advisor_settings advisor;
	/* derived counts, filled by the readers below */
	int nconfigs;
	int nruns, nplanned, nrunning, nok, nfailed, ninterrupted;
};

/* Fields the caller provides for a new experiment (id and created_at are made here). */
struct db_experiment_new {
	const char *name;
	int64_t parent_id;
	const char *config_yaml;
	size_t config_len;
	const char *config_path;
	const char *host_facts;	/* JSON, NULL for "{}" */
	uint64_t seed;
	const char *primary_metric;
	int higher_is_better;	/* -1 unknown */
	/* advisor.*: objective NULL stores them unknown (only importers should) */
	const char *objective;
	double equivalence;
	const char *const *environment;
	size_t nenvironment;
};

int db_experiment_insert(struct db *db, const struct db_experiment_new *e,
			 int64_t *id_out, struct ta_err *err);
int db_experiment_set_status(struct db *db, int64_t id, const char *status,
			     struct ta_err *err);
/* Marks the experiment failed as a whole, storing why (shown by `show`). */
int db_experiment_fail(struct db *db, int64_t id, const char *cause, struct ta_err *err);
/* All experiments, newest first, with counts.  *out is an array to free with db_experiments_free. */
int db_experiment_list(struct db *db, struct db_experiment **out, size_t *n,
		       struct ta_err *err);
/* One experiment by id, or by name (the newest with that name).  Not found: EXIT_BAD_INPUT. */
int db_experiment_get(struct db *db, const char *id_or_name, struct db_experiment *out,
		      struct ta_err *err);
void db_experiment_release(struct db_experiment *e);
void db_experiments_free(struct db_experiment *v, size_t n);

/* sha256 of data as 64 lower-case hex digits (buf must hold 65 bytes). */
void db_sha256_hex(const void *data, size_t len, char *buf);

#endif
