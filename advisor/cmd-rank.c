/*
 * rank: the configurations of an experiment ordered by a metric, with the
 * statistics that say how sure the order is (CI, ratio to the baseline,
 * ties with the best), so that noise is never sold as a win.
 */
#include "../schema/db-results.h"
#include "../util/json.h"
#include "cmd.h"
#include "rank.h"

static const char *rank_metric;

static const struct option rank_options[] = {
	OPT_STRING(0, "metric", &rank_metric, "M",
		   "rank by metric M (default: the experiment's primary metric)"),
	OPT_END(),
};

static int cmd_rank_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct db_results res;
	struct rank_result r;
	if (rank_load(ctx->db_path, argv[0], rank_metric, &res, &r, &err) < 0)
		return cmd_fail(&err);
	struct strbuf out = STRBUF_INIT;
	if (ctx->json) {
		struct json_writer w;
		json_init(&w, &out, true);
		rank_json(&w, &r);
	} else {
		rank_text(&out, &r);
	}
	cmd_print(&out);
	strbuf_release(&out);
	rank_result_release(&r);
	db_results_release(&res);
	return EXIT_OK;
}

const struct cmd_entry cmd_rank_entry = {
	.name = "rank",
	.summary = "rank an experiment's configurations with statistics",
	.args_usage = "EXP",
	.options = rank_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_rank_exec,
};
