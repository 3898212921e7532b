/*
 * export: every run and metric of an experiment, tidy (one row per run x
 * metric), for R, pandas or a spreadsheet.  A run without metrics (failed,
 * interrupted, planned) still gets one row with an empty metric, so that
 * failures are not silently dropped from the analysis.  A configuration's
 * columns are its record's members (model/config-record.h: the shape,
 * pinning and its CPUs, one column per host knob, noise, arch, <cpu>), in
 * the order `plan --json` and `rank --json` write them.  Repetitions are
 * 1-based, as every command shows them.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/db-results.h"
#include "../util/json.h"
#include "cmd.h"
#include "dbread.h"

static int export_csv;

static const struct option export_options[] = {
	OPT_BOOL(0, "csv", &export_csv, "CSV with a header line (the default)"),
	OPT_END(),
};

/* Whether s is a plain decimal number ("-3.5", "1e-9"): a spreadsheet reads it as one. */
static bool csv_is_number(const char *s)
{
	bool digits = false;
	s += *s == '-' || *s == '+';
	for (; *s >= '0' && *s <= '9'; s++)
		digits = true;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			digits = true;
	if (digits && (*s == 'e' || *s == 'E')) {
		s++;
		s += *s == '-' || *s == '+';
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return digits && !*s;
}

/*
 * RFC 4180 (fields holding a comma, quote or line break quoted, quotes
 * doubled), made safe for the spreadsheet that opens it (OWASP, CSV
 * injection): a text cell starting with = + - @, a tab or a CR would be a
 * formula there (a unit "=HYPERLINK(...)"), so it gets a leading ' inside
 * quotes, unless it is a plain number ("-3" stays -3).  Control bytes
 * (ESC, BEL, CR, DEL ...; tab and newline aside, quoting carries them) and
 * bytes that are not UTF-8 become \xHH, as `show` prints them.
 */
static void csv_field(struct strbuf *out, const char *s)
{
	if (!s)
		return;
	bool formula = strchr("=+-@\t\r", *s) && *s && !csv_is_number(s);
	struct strbuf cell = STRBUF_INIT;
	strbuf_add_printable(&cell, s, strlen(s));
	if (!formula && !strpbrk(strbuf_str(&cell), ",\"\n")) {
		strbuf_addstr(out, strbuf_str(&cell));
		strbuf_release(&cell);
		return;
	}
	strbuf_addstr(out, formula ? "\"'" : "\"");
	for (const char *p = strbuf_str(&cell); *p; p++) {
		if (*p == '"')
			strbuf_addch(out, '"');
		strbuf_addch(out, *p);
	}
	strbuf_addch(out, '"');
	strbuf_release(&cell);
}

/* The columns before and after a configuration's record members. */
static const char *const head_columns[] = {
	"experiment_id", "configuration_id", "configuration", "is_baseline", NULL,
};
static const char *const run_columns[] = {
	"run_id", "repetition", "order_index", "host", "status", "error", "topology_ok",
	"lost_events", "metric", "value", "unit", "higher_is_better", NULL,
};

/* One member of a configuration record as config_record_visit gives it. */
struct member {
	const char *name;
	enum { MEMBER_TEXT, MEMBER_INT, MEMBER_LIST } kind;
	const char *text;	/* MEMBER_TEXT; NULL: none */
	long long num;
	char *const *list;
	size_t n;
};

struct members {
	struct member *v;
	size_t n;
};

static struct member *member_add(struct members *m, const char *name)
{
	m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	m->v[m->n] = (struct member){ .name = name };
	return &m->v[m->n++];
}

static void visit_text(void *data, const char *name, const char *value)
{
	struct member *f = member_add(data, name);
	f->kind = MEMBER_TEXT;
	f->text = value;
}

static void visit_integer(void *data, const char *name, long long value)
{
	struct member *f = member_add(data, name);
	f->kind = MEMBER_INT;
	f->num = value;
}

static void visit_list(void *data, const char *name, char *const *values, size_t n)
{
	struct member *f = member_add(data, name);
	f->kind = MEMBER_LIST;
	f->list = values;
	f->n = n;
}

static const struct config_record_visitor to_members = { visit_text, visit_integer, visit_list };

static const struct member *member_find(const struct members *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].name, name))
			return &m->v[i];
	return NULL;
}

/*
 * The record columns of the whole experiment: every configuration's
 * members in record order, a knob only one configuration sets placed
 * after the member that comes before it there.
 */
static void record_columns(const struct db_results *res, const char ***out, size_t *nout)
{
	const char **cols = NULL;
	size_t n = 0;
	for (size_t i = 0; i < res->nconfigs; i++) {
		struct members m = { 0 };
		config_record_visit(&res->configs[i].rec, &to_members, &m);
		size_t at = 0;
		for (size_t k = 0; k < m.n; k++) {
			size_t j = 0;
			while (j < n && strcmp(cols[j], m.v[k].name))
				j++;
			if (j == n) {
				cols = xrealloc(cols, (n + 1) * sizeof(*cols));
				memmove(cols + at + 1, cols + at, (n - at) * sizeof(*cols));
				cols[at] = m.v[k].name;
				n++;
				j = at;
			}
			at = j + 1;
		}
		free(m.v);
	}
	*out = cols;
	*nout = n;
}

/* One row: a run and one of its metrics (NULL: the run has none). */
struct row {
	const struct db_results *res;
	const struct db_results_config *c;
	const struct members *members;	/* c's record */
	const struct db_results_run *run;
	const struct db_results_metric *m;
};

static void csv_member(struct strbuf *out, const struct member *f)
{
	if (!f)
		return;
	if (f->kind == MEMBER_INT) {
		strbuf_addf(out, "%lld", f->num);
	} else if (f->kind == MEMBER_TEXT) {
		csv_field(out, f->text);
	} else {
		/* cpusets hold commas, never spaces: one field, the vCPUs' sets apart */
		struct strbuf sets = STRBUF_INIT;
		for (size_t i = 0; i < f->n; i++)
			strbuf_addf(&sets, "%s%s", i ? " " : "", f->list[i]);
		csv_field(out, strbuf_str(&sets));
		strbuf_release(&sets);
	}
}

static void row_csv(struct strbuf *out, const struct row *r, const char *const *cols,
		    size_t ncols)
{
	const struct db_results_config *c = r->c;
	const struct db_results_run *run = r->run;
	strbuf_addf(out, "%lld,%lld,", (long long)r->res->exp.id, (long long)c->id);
	csv_field(out, c->rec.key);
	strbuf_addf(out, ",%d", c->rec.baseline);
	for (size_t i = 0; i < ncols; i++) {
		strbuf_addch(out, ',');
		csv_member(out, member_find(r->members, cols[i]));
	}
	strbuf_addf(out, ",%lld,%d,%d,", (long long)run->id, run->repetition + 1,
		    run->order_index);
	csv_field(out, run->host);
	strbuf_addch(out, ',');
	csv_field(out, run->status);
	strbuf_addch(out, ',');
	csv_field(out, run->error);
	strbuf_addch(out, ',');
	if (run->topology_ok >= 0)
		strbuf_addf(out, "%d", run->topology_ok);
	strbuf_addch(out, ',');
	if (run->lost_events >= 0)
		strbuf_addf(out, "%lld", (long long)run->lost_events);
	strbuf_addch(out, ',');
	if (r->m) {
		csv_field(out, r->m->name);
		strbuf_addf(out, ",%.17g,", r->m->value);
		csv_field(out, r->m->unit);
		strbuf_addch(out, ',');
		if (r->m->higher_is_better >= 0)
			strbuf_addf(out, "%d", r->m->higher_is_better);
	} else {
		strbuf_addstr(out, ",,,");
	}
	strbuf_addch(out, '\n');
}

static void json_member(struct json_writer *w, const struct member *f)
{
	if (!f) {
		json_null(w);
	} else if (f->kind == MEMBER_INT) {
		json_int(w, f->num);
	} else if (f->kind == MEMBER_TEXT) {
		json_str(w, f->text);
	} else {
		json_arr_begin(w);
		for (size_t i = 0; i < f->n; i++)
			json_str(w, f->list[i]);
		json_arr_end(w);
	}
}

static void row_json(struct json_writer *w, const struct row *r, const char *const *cols,
		     size_t ncols)
{
	const struct db_results_config *c = r->c;
	const struct db_results_run *run = r->run;
	json_obj_begin(w);
	json_key(w, "experiment_id"); json_int(w, r->res->exp.id);
	json_key(w, "configuration_id"); json_int(w, c->id);
	json_key(w, "configuration"); json_str(w, c->rec.key);
	json_key(w, "is_baseline"); json_bool(w, c->rec.baseline);
	for (size_t i = 0; i < ncols; i++) {
		json_key(w, cols[i]);
		json_member(w, member_find(r->members, cols[i]));
	}
	json_key(w, "run_id"); json_int(w, run->id);
	json_key(w, "repetition"); json_int(w, run->repetition + 1);
	json_key(w, "order_index"); json_int(w, run->order_index);
	json_key(w, "host"); json_str(w, run->host);
	json_key(w, "status"); json_str(w, run->status);
	json_key(w, "error"); json_str(w, run->error);
	json_key(w, "topology_ok");
	if (run->topology_ok >= 0)
		json_bool(w, run->topology_ok);
	else
		json_null(w);
	json_key(w, "lost_events");
	if (run->lost_events >= 0)
		json_int(w, run->lost_events);
	else
		json_null(w);
	json_key(w, "metric"); json_str(w, r->m ? r->m->name : NULL);
	json_key(w, "value");
	if (r->m)
		json_double(w, r->m->value);
	else
		json_null(w);
	json_key(w, "unit"); json_str(w, r->m ? r->m->unit : NULL);
	json_key(w, "higher_is_better");
	if (r->m && r->m->higher_is_better >= 0)
		json_bool(w, r->m->higher_is_better);
	else
		json_null(w);
	json_obj_end(w);
}

/* Output is written out in parts of about this size, at row boundaries. */
#define EXPORT_CHUNK (256 * 1024)

/*
 * Rows are written as the runs are read (db_results_open/_next_run), and
 * the output leaves in parts: memory stays flat however big the
 * experiment, where building it whole took 142 MB for 100 k runs.
 */
static int cmd_export_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	if (export_csv && ctx->json) {
		err_set(&err, EXIT_BAD_INPUT, "export: give --csv or --json, not both");
		return cmd_fail(&err);
	}
	struct db *db = dbread_open(ctx->db_path, &err);
	if (!db)
		return cmd_fail(&err);
	struct db_results res;
	struct db_results_cursor *cur;
	if (db_results_open(db, argv[0], false, &res, &cur, &err) < 0) {
		db_close(db);
		return cmd_fail(&err);
	}
	const char **cols;
	size_t ncols;
	record_columns(&res, &cols, &ncols);
	struct members *members = xcalloc(res.nconfigs + 1, sizeof(*members));
	for (size_t i = 0; i < res.nconfigs; i++)
		config_record_visit(&res.configs[i].rec, &to_members, &members[i]);
	struct strbuf out = STRBUF_INIT;
	struct json_writer w;
	if (ctx->json) {
		json_init(&w, &out, false);
		json_arr_begin(&w);
	} else {
		for (size_t i = 0; head_columns[i]; i++)
			strbuf_addf(&out, "%s,", head_columns[i]);
		for (size_t i = 0; i < ncols; i++) {
			csv_field(&out, cols[i]);
			strbuf_addch(&out, ',');
		}
		for (size_t i = 0; run_columns[i]; i++)
			strbuf_addf(&out, "%s%s", i ? "," : "", run_columns[i]);
		strbuf_addch(&out, '\n');
	}
	struct db_results_run run;
	struct db_results_config *c;
	int rc;
	while ((rc = db_results_next_run(cur, &run, &c, &err)) > 0) {
		struct row row = { &res, c, &members[c - res.configs], &run, NULL };
		for (size_t k = 0; k == 0 || k < run.nmetrics; k++) {
			row.m = k < run.nmetrics ? &run.metrics[k] : NULL;
			if (ctx->json)
				row_json(&w, &row, cols, ncols);
			else
				row_csv(&out, &row, cols, ncols);
		}
		db_results_run_release(&run);
		if (out.len >= EXPORT_CHUNK) {
			cmd_print_data_part(&out);
			strbuf_reset(&out);
		}
	}
	db_results_cursor_close(cur);
	db_close(db);
	if (rc == 0) {
		if (ctx->json)
			json_arr_end(&w);
		cmd_print_data(&out);
	}
	strbuf_release(&out);
	for (size_t i = 0; i < res.nconfigs; i++)
		free(members[i].v);
	free(members);
	free(cols);
	db_results_release(&res);
	return rc < 0 ? cmd_fail(&err) : EXIT_OK;
}

const struct cmd_entry cmd_export_entry = {
	.name = "export",
	.summary = "export every run and metric, one row per run x metric",
	.args_usage = "EXP --csv|--json",
	.options = export_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_export_exec,
};
