/*
 * export: every run and metric of an experiment, tidy (one row per run x
 * metric), for R, pandas or a spreadsheet.  A run without metrics (failed,
 * interrupted, planned) still gets one row with an empty metric, so that
 * failures are not silently dropped from the analysis.
 */
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

static const char *const columns[] = {
	"experiment_id", "configuration_id", "configuration", "is_baseline", "vcpus",
	"sockets", "dies", "cores", "threads", "pinning", "noise", "run_id", "repetition",
	"order_index", "host", "status", "error", "topology_ok", "lost_events", "metric", "value",
	"unit", "higher_is_better", NULL,
};

/* RFC 4180: quote fields holding a comma, quote or line break; double quotes. */
static void csv_field(struct strbuf *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		strbuf_addstr(out, s);
		return;
	}
	strbuf_addch(out, '"');
	for (; *s; s++) {
		if (*s == '"')
			strbuf_addch(out, '"');
		strbuf_addch(out, *s);
	}
	strbuf_addch(out, '"');
}

/* One row as text fields (NULL: empty / null); value is passed apart to keep its type. */
struct row {
	const struct db_results *res;
	const struct db_results_config *c;
	const struct db_results_run *run;
	const struct db_results_metric *m;	/* NULL: the run has no metric */
};

static void row_csv(struct strbuf *out, const struct row *r)
{
	const struct db_results_config *c = r->c;
	const struct db_results_run *run = r->run;
	strbuf_addf(out, "%lld,%lld,", (long long)r->res->exp.id, (long long)c->id);
	csv_field(out, c->key);
	strbuf_addf(out, ",%d,%d,%d,%d,%d,%d,", c->is_baseline, c->vcpus, c->sockets, c->dies,
		    c->cores, c->threads);
	csv_field(out, c->pinning);
	strbuf_addch(out, ',');
	csv_field(out, c->noise);
	strbuf_addf(out, ",%lld,%d,%d,", (long long)run->id, run->repetition, run->order_index);
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

static void row_json(struct json_writer *w, const struct row *r)
{
	const struct db_results_config *c = r->c;
	const struct db_results_run *run = r->run;
	json_obj_begin(w);
	json_key(w, "experiment_id"); json_int(w, r->res->exp.id);
	json_key(w, "configuration_id"); json_int(w, c->id);
	json_key(w, "configuration"); json_str(w, c->key);
	json_key(w, "is_baseline"); json_bool(w, c->is_baseline);
	json_key(w, "vcpus"); json_int(w, c->vcpus);
	json_key(w, "sockets"); json_int(w, c->sockets);
	json_key(w, "dies"); json_int(w, c->dies);
	json_key(w, "cores"); json_int(w, c->cores);
	json_key(w, "threads"); json_int(w, c->threads);
	json_key(w, "pinning"); json_str(w, c->pinning);
	json_key(w, "noise"); json_str(w, c->noise);
	json_key(w, "run_id"); json_int(w, run->id);
	json_key(w, "repetition"); json_int(w, run->repetition);
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
	int rc = db_results_load(db, argv[0], &res, &err);
	db_close(db);
	if (rc < 0)
		return cmd_fail(&err);
	struct strbuf out = STRBUF_INIT;
	struct json_writer w;
	if (ctx->json) {
		json_init(&w, &out, false);
		json_arr_begin(&w);
	} else {
		for (size_t i = 0; columns[i]; i++)
			strbuf_addf(&out, "%s%s", i ? "," : "", columns[i]);
		strbuf_addch(&out, '\n');
	}
	for (size_t i = 0; i < res.nconfigs; i++) {
		for (size_t j = 0; j < res.configs[i].nruns; j++) {
			const struct db_results_run *run = &res.configs[i].runs[j];
			struct row row = { &res, &res.configs[i], run, NULL };
			for (size_t k = 0; k == 0 || k < run->nmetrics; k++) {
				row.m = k < run->nmetrics ? &run->metrics[k] : NULL;
				if (ctx->json)
					row_json(&w, &row);
				else
					row_csv(&out, &row);
			}
		}
	}
	if (ctx->json)
		json_arr_end(&w);
	cmd_print_data(&out);
	strbuf_release(&out);
	db_results_release(&res);
	return EXIT_OK;
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
