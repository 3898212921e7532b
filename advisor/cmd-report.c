/*
 * report: a self-contained HTML report of an experiment (ranking table,
 * charts, recommendation, the sweep's YAML) written to a file, to share or
 * archive the result of a sweep.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../schema/db-results.h"
#include "cmd.h"
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

/* Writes data to path (mode 0644, replacing it) via a temporary file and rename. */
static int write_file(const char *path, const struct strbuf *data, struct ta_err *err)
{
	struct strbuf tmp = STRBUF_INIT;
	strbuf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(strbuf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_set(err, EXIT_FAILURE_RUN, "%s: %s", path, strerror(errno));
		strbuf_release(&tmp);
		return -1;
	}
	size_t off = 0;
	while (off < data->len) {
		ssize_t n = write(fd, data->buf + off, data->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		off += (size_t)n;
	}
	int rc = off == data->len && close(fd) == 0 ? 0 : -1;
	if (off != data->len)
		close(fd);
	if (rc == 0 && rename(strbuf_str(&tmp), path) < 0)
		rc = -1;
	if (rc < 0) {
		err_set(err, EXIT_FAILURE_RUN, "%s: %s", path, strerror(errno));
		unlink(strbuf_str(&tmp));
	}
	strbuf_release(&tmp);
	return rc;
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
	struct strbuf html = STRBUF_INIT;
	report_html_render(&r, &html);
	int rc = write_file(report_output, &html, &err);
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
