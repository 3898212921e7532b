/*
 * report: a self-contained HTML report of an experiment (ranking table,
 * charts, recommendation, the sweep's YAML) written to a file, to share or
 * archive the result of a sweep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../experiments/config.h"
#include "../schema/db-results.h"
#include "../util/safefile.h"
#include "cmd.h"
#include "hostfx.h"
#include "rank.h"
#include "report-html.h"

static const char *report_output;
static const char *report_metric;

static const struct option report_options[] = {
	OPT_STRING('o', "output", &report_output, "FILE", "write the HTML report to FILE"),
	OPT_STRING(0, "metric", &report_metric, "M",
		   "report on metric M (default: the experiment's primary metric)"),
	OPT_END(),
};

/*
 * The experiment's lineage from the database: the experiment it reruns,
 * its reruns, and its blocks against its config's repetitions (extend adds
 * blocks beyond them).  Best effort: what cannot be read is left out.
 */
static void lineage_read(const char *db_path, const struct db_results *res,
			 struct report_lineage *lin, struct db_experiment **all, size_t *nall)
{
	memset(lin, 0, sizeof(*lin));
	*all = NULL;
	*nall = 0;
	lin->parent_id = res->exp.parent_id;
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++)
			if (res->configs[i].runs[j].repetition + 1 > lin->blocks)
				lin->blocks = res->configs[i].runs[j].repetition + 1;
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("stored config", res->exp.config_yaml,
						strlen(res->exp.config_yaml), &err);
	if (cfg) {
		lin->configured_blocks = cfg->repetitions;
		config_free(cfg);
	}
	struct db *db = db_open_readonly(db_path, &err);
	if (!db || db_experiment_list(db, all, nall, &err) < 0) {
		if (db)
			db_close(db);
		return;
	}
	db_close(db);
	int64_t *children = xcalloc(*nall + 1, sizeof(*children));
	for (size_t i = *nall; i-- > 0;) {	/* oldest first */
		const struct db_experiment *x = &(*all)[i];
		if (x->parent_id && x->parent_id == res->exp.id)
			children[lin->nchildren++] = x->id;
		if (x->id == lin->parent_id)
			lin->parent_name = x->name;
	}
	lin->children = children;
}

static int cmd_report_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	if (!report_output) {
		err_set(&err, EXIT_BAD_INPUT, "report: say where to write it: -o FILE.html");
		return cmd_fail(&err);
	}
	struct db_results res;
	struct rank_result r;
	if (rank_load(ctx->db_path, argv[0], report_metric, &res, &r, &err) < 0)
		return cmd_fail(&err);
	struct hostfx fx;
	if (hostfx_compute(&r, &fx))
		r.hosts = &fx;
	struct report_lineage lin;
	struct db_experiment *all;
	size_t nall;
	lineage_read(ctx->db_path, &res, &lin, &all, &nall);
	struct strbuf html = STRBUF_INIT;
	report_html_render(&r, &lin, &html);
	free((int64_t *)lin.children);
	db_experiments_free(all, nall);
	if (r.hosts)
		hostfx_release(&fx);
	int rc = safefile_replace(report_output, html.buf, html.len, 0644, &err);
	strbuf_release(&html);
	rank_result_release(&r);
	db_results_release(&res);
	if (rc < 0)
		return cmd_fail(&err);
	if (!ctx->quiet)
		fprintf(stderr, "report written to %s\n", report_output);
	return EXIT_OK;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.summary = "write a self-contained HTML report with charts",
	.args_usage = "EXP -o FILE.html",
	.options = report_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_report_exec,
};
