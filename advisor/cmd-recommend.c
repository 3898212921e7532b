/*
 * recommend: the one shape to use, with the expected gain over the
 * baseline, the libvirt XML and host commands that apply it, and the
 * evidence and warnings a user needs to trust (or distrust) it; on a
 * sweep over several hosts, the host x configuration diagnostic too.
 */
#include "../schema/db-results.h"
#include "../util/json.h"
#include "cmd.h"
#include "hostfx.h"
#include "rank.h"

static const char *recommend_metric;

static const struct option recommend_options[] = {
	OPT_STRING(0, "metric", &recommend_metric, "M",
		   "decide by metric M (default: the experiment's primary metric)"),
	OPT_END(),
};

static int cmd_recommend_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct db_results res;
	struct rank_result r;
	if (rank_load(ctx->db_path, argv[0], recommend_metric, &res, &r, &err) < 0)
		return cmd_fail(&err);
	struct hostfx fx;
	if (hostfx_compute(&r, &fx))
		r.hosts = &fx;
	struct strbuf out = STRBUF_INIT;
	if (ctx->json) {
		struct json_writer w;
		json_init(&w, &out, true);
		rank_json_recommendation(&w, &r);
	} else {
		rank_text_recommendation(&out, &r);
	}
	cmd_print(&out);
	strbuf_release(&out);
	int rc = r.recommended ? EXIT_OK : EXIT_FAILURE_RUN;
	if (r.hosts)
		hostfx_release(&fx);
	rank_result_release(&r);
	db_results_release(&res);
	return rc;
}

const struct cmd_entry cmd_recommend_entry = {
	.name = "recommend",
	.summary = "recommend the best VM shape and host settings, with evidence",
	.args_usage = "EXP",
	.options = recommend_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_recommend_exec,
};
