/*
 * report: a self-contained HTML report of an experiment (ranking table,
 * charts, recommendation, the sweep's YAML) written to a file, to share or
 * archive the result of a sweep.
 */
#include <stdio.h>

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
	if (hostfx_compute(&res, r.metric, r.higher_is_better, &fx))
		r.hosts = &fx;
	struct strbuf html = STRBUF_INIT;
	report_html_render(&r, &html);
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
