/* db-config: configuration rows <-> configuration records; see db-config.h. */
#include "db-config.h"

#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../model/knob-table.h"
#include "../util/strbuf.h"

/* What a column holds and where in the record. */
enum column_kind {
	COLUMN_INDEX,		/* idx: record.index */
	COLUMN_TEXT,		/* a char * member */
	COLUMN_INT,		/* an int member */
	COLUMN_BOOL,		/* a bool member, 0/1 */
	COLUMN_FACTORS,		/* factors: the record as JSON */
};

/*
 * The columns of `configurations` that hold a record, besides id and
 * experiment_id, in the order the INSERT binds and the reader reads them;
 * the typed knob columns of the knob table follow.
 */
static const struct column {
	const char *name;
	enum column_kind kind;
	size_t offset;
} columns[] = {
	{ "idx", COLUMN_INDEX, offsetof(struct config_record, index) },
	{ "key", COLUMN_TEXT, offsetof(struct config_record, key) },
	{ "decision", COLUMN_TEXT, offsetof(struct config_record, decision) },
	{ "environment", COLUMN_TEXT, offsetof(struct config_record, environment) },
	{ "vcpus", COLUMN_INT, offsetof(struct config_record, vcpus) },
	{ "sockets", COLUMN_INT, offsetof(struct config_record, sockets) },
	{ "dies", COLUMN_INT, offsetof(struct config_record, dies) },
	{ "cores", COLUMN_INT, offsetof(struct config_record, cores) },
	{ "threads", COLUMN_INT, offsetof(struct config_record, threads) },
	{ "pinning", COLUMN_TEXT, offsetof(struct config_record, pinning) },
	{ "noise", COLUMN_TEXT, offsetof(struct config_record, noise) },
	{ "arch", COLUMN_TEXT, offsetof(struct config_record, arch) },
	{ "cpu_mode", COLUMN_TEXT, offsetof(struct config_record, cpu_mode) },
	{ "cpu_model", COLUMN_TEXT, offsetof(struct config_record, cpu_model) },
	{ "is_baseline", COLUMN_BOOL, offsetof(struct config_record, baseline) },
	{ "factors", COLUMN_FACTORS, 0 },
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

/* The member column c reads into, or binds from. */
static void *member(struct config_record *r, const struct column *c)
{
	return (char *)r + c->offset;
}

static const void *member_of(const struct config_record *r, const struct column *c)
{
	return (const char *)r + c->offset;
}

/* Appends every column name with prefix, the typed knob columns last. */
static void column_names(struct strbuf *sb, const char *prefix)
{
	for (size_t i = 0; i < NCOLUMNS; i++)
		strbuf_addf(sb, "%s%s%s", i ? ", " : "", prefix, columns[i].name);
	for (size_t i = 0; i < knob_count(); i++)
		if (knob_at(i)->db_column)
			strbuf_addf(sb, ", %s%s", prefix, knob_at(i)->db_column);
}

sqlite3_stmt *db_config_insert_prepare(struct db *db, struct ta_err *err)
{
	struct strbuf sql = STRBUF_INIT;
	strbuf_addstr(&sql, "INSERT INTO configurations (experiment_id, ");
	column_names(&sql, "");
	strbuf_addstr(&sql, ") VALUES (?");
	size_t n = NCOLUMNS;
	for (size_t i = 0; i < knob_count(); i++)
		n += knob_at(i)->db_column != NULL;
	for (size_t i = 0; i < n; i++)
		strbuf_addstr(&sql, ",?");
	strbuf_addch(&sql, ')');
	sqlite3_stmt *st = db_prepare(db, strbuf_str(&sql), err);
	strbuf_release(&sql);
	return st;
}

int db_config_insert(struct db *db, sqlite3_stmt *st, int64_t exp_id,
		     const struct config_record *r, int64_t *id_out, struct ta_err *err)
{
	char *factors = config_record_json_text(r);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	int pos = 1;
	sqlite3_bind_int64(st, pos++, exp_id);
	for (size_t i = 0; i < NCOLUMNS; i++, pos++) {
		const struct column *c = &columns[i];
		switch (c->kind) {
		case COLUMN_INDEX:
			sqlite3_bind_int64(st, pos, (sqlite3_int64)r->index);
			break;
		case COLUMN_TEXT:
			sqlite3_bind_text(st, pos, *(char *const *)member_of(r, c), -1, SQLITE_STATIC);
			break;
		case COLUMN_INT:
			sqlite3_bind_int(st, pos, *(const int *)member_of(r, c));
			break;
		case COLUMN_BOOL:
			sqlite3_bind_int(st, pos, *(const bool *)member_of(r, c));
			break;
		case COLUMN_FACTORS:
			sqlite3_bind_text(st, pos, factors, -1, SQLITE_STATIC);
			break;
		}
	}
	/* The typed knob columns: NULL when the configuration leaves the knob alone. */
	for (size_t t = 0; t < knob_count(); t++) {
		const struct knob *k = knob_at(t);
		if (!k->db_column)
			continue;
		const char *value = config_record_knob(r, k->name);
		if (!value)
			sqlite3_bind_null(st, pos);
		else if (k->db_type == KNOB_COLUMN_INTEGER)
			sqlite3_bind_int64(st, pos, strtoll(value, NULL, 10));
		else
			sqlite3_bind_text(st, pos, value, -1, SQLITE_STATIC);
		pos++;
	}
	int rc = sqlite3_step(st);
	free(factors);
	if (rc != SQLITE_DONE)
		return db_error(db, "storing a configuration", err);
	if (id_out)
		*id_out = sqlite3_last_insert_rowid(db->handle);
	return 0;
}

void db_config_columns(struct strbuf *sql, const char *alias)
{
	char prefix[32] = "";
	if (alias && *alias)
		snprintf(prefix, sizeof(prefix), "%s.", alias);
	column_names(sql, prefix);
}

/* A JSON scalar as text: strings as they are, numbers and booleans as JSON writes them. */
static char *json_scalar_text(json_object *v)
{
	if (!v || json_object_is_type(v, json_type_null) ||
	    json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
		return NULL;
	return xstrdup(json_object_get_string(v));
}

static char *json_member_text(json_object *o, const char *name)
{
	json_object *v;
	return json_object_object_get_ex(o, name, &v) ? json_scalar_text(v) : NULL;
}

/*
 * The members of the factors JSON the columns do not hold: topology,
 * pinning policy and CPUs, knobs (members named like a knob of the knob
 * table, in their order), runner, noise kind, host defaults.  A row whose
 * JSON is not an object (a hand-made one) keeps only its columns.
 */
static void read_factors(const char *text, struct config_record *r)
{
	json_object *o = text ? json_tokener_parse(text) : NULL;
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return;
	}
	r->topology = json_member_text(o, "topology");
	r->pinning_policy = json_member_text(o, "pinning_policy");
	r->emulator_cpus = json_member_text(o, "emulator_cpus");
	r->runner = json_member_text(o, "runner");
	r->noise_kind = json_member_text(o, "noise_kind");
	json_object *cpus;
	if (json_object_object_get_ex(o, "pinning_cpus", &cpus) &&
	    json_object_is_type(cpus, json_type_array)) {
		size_t n = json_object_array_length(cpus);
		r->pinning_cpus = xcalloc(n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			char *v = json_scalar_text(json_object_array_get_idx(cpus, i));
			r->pinning_cpus[r->npinning_cpus++] = v ? v : xstrdup("");
		}
	}
	json_object_object_foreach(o, name, value) {
		if (!knob_find(name))
			continue;
		char *v = json_scalar_text(value);
		if (v)
			config_record_knob_add(r, name, v);
		free(v);
	}
	json_object *defaults;
	if (json_object_object_get_ex(o, "host_defaults", &defaults) &&
	    json_object_is_type(defaults, json_type_object)) {
		json_object_object_foreach(defaults, dname, dvalue) {
			char *v = json_scalar_text(dvalue);
			if (!v)
				continue;
			r->host_defaults = xrealloc(r->host_defaults, (r->nhost_defaults + 1) *
						    sizeof(*r->host_defaults));
			r->host_defaults[r->nhost_defaults++] = (struct config_setting){
				xstrdup(dname), v };
		}
	}
	json_object_put(o);
}

int db_config_read(sqlite3_stmt *st, int col, struct config_record *r)
{
	memset(r, 0, sizeof(*r));
	char *factors = NULL;
	for (size_t i = 0; i < NCOLUMNS; i++, col++) {
		const struct column *c = &columns[i];
		switch (c->kind) {
		case COLUMN_INDEX:
			r->index = (size_t)sqlite3_column_int64(st, col);
			break;
		case COLUMN_TEXT:
			*(char **)member(r, c) = db_column_strdup(st, col);
			break;
		case COLUMN_INT:
			*(int *)member(r, c) = sqlite3_column_int(st, col);
			break;
		case COLUMN_BOOL:
			*(bool *)member(r, c) = sqlite3_column_int(st, col) != 0;
			break;
		case COLUMN_FACTORS:
			factors = db_column_strdup(st, col);
			break;
		}
	}
	read_factors(factors, r);
	free(factors);
	/* Typed knob columns the JSON lacks (rows an importer wrote). */
	for (size_t t = 0; t < knob_count(); t++) {
		const struct knob *k = knob_at(t);
		if (!k->db_column)
			continue;
		if (sqlite3_column_type(st, col) != SQLITE_NULL && !config_record_knob(r, k->name))
			config_record_knob_add(r, k->name, (const char *)sqlite3_column_text(st, col));
		col++;
	}
	/* What rows without them had: the pinning's name as its policy, no environment but noise. */
	if (!r->noise)
		r->noise = xstrdup("none");
	if (!r->pinning)
		r->pinning = xstrdup("none");
	if (!r->topology) {
		struct strbuf sb = STRBUF_INIT;
		if (r->dies > 1)
			strbuf_addf(&sb, "%dx%dx%dx%d", r->sockets, r->dies, r->cores, r->threads);
		else
			strbuf_addf(&sb, "%dx%dx%d", r->sockets, r->cores, r->threads);
		r->topology = strbuf_detach(&sb);
	}
	if (!r->pinning_policy)
		r->pinning_policy = xstrdup(r->npinning_cpus ? "explicit" : r->pinning);
	if (!r->decision)
		r->decision = xstrdup(r->key ? r->key : "");
	if (!r->environment) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "noise=%s", r->noise);
		r->environment = strbuf_detach(&sb);
	}
	assert(r->key);
	return col;
}
