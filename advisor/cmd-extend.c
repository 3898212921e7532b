/*
 * extend: add blocks (repetitions) to a finished experiment, run them and
 * rank again — what an `undecided` verdict asks for.  A raced experiment
 * goes on racing over the new blocks; its eliminated configurations stay
 * out.  Works from the stored config, like resume.
 */
#include <stdio.h>
#include <string.h>

#include "../experiments/config.h"
#include "../experiments/hostlock.h"
#include "cmd.h"
#include "rank.h"
#include "sweep.h"

static struct sweep_opts extend_opts;
static int extend_blocks;

static const struct option extend_options[] = {
	OPT_INT(0, "repetitions", &extend_blocks, "N",
		"blocks to add: N more runs of every configuration still in the race (required)"),
	OPT_STRING(0, "root", &extend_opts.sysfs_root, "DIR",
		   "treat DIR as / for host knobs (testing with a fake sysfs tree; with "
		   "Slurm, %n in DIR stands for each node's name)"),
	OPT_STRING(0, "executor", &extend_opts.executor, "KIND",
		   "where the runs go: local (this host), slurm or ssh (overrides executor.kind)"),
	OPT_END(),
};

/* The new ranking, as `rank` prints it. */
static int print_rank(const struct cmd_ctx *ctx, const char *which)
{
	struct ta_err err = { 0 };
	struct strbuf out = STRBUF_INIT;
	int rc = rank_load_print(ctx->db_path, which, NULL, ctx->json, &out, &err);
	if (rc == 0)
		cmd_print(&out);
	strbuf_release(&out);
	return rc < 0 ? cmd_fail(&err) : EXIT_OK;
}

static int cmd_extend_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	if (extend_blocks < 1 || extend_blocks > 1000) {
		err_set(&err, EXIT_BAD_INPUT, "extend needs --repetitions N with N in 1..1000 "
			"(the blocks to add)");
		return cmd_fail(&err);
	}
	struct sweep_stored s;
	int rc;
	if (sweep_stored_open(ctx, argv[0], extend_opts.sysfs_root, &s, &err) < 0) {
		rc = cmd_fail(&err);
	} else if (strcmp(s.e.status, "done")) {
		struct strbuf hint = STRBUF_INIT;
		cmd_hint(ctx, "resume", extend_opts.sysfs_root, &hint);
		err_set(&err, EXIT_BAD_INPUT, "experiment %lld is %s, not finished; run "
			"'%s %lld' first", (long long)s.e.id, s.e.status, hint.buf,
			(long long)s.e.id);
		strbuf_release(&hint);
		rc = cmd_fail(&err);
	} else {
		sweep_warn_host_changed(&s.e);
		/* The sweep's summary goes to stderr: stdout is for the ranking. */
		struct cmd_ctx sweep_ctx = *ctx;
		sweep_ctx.json = 0;
		rc = sweep_extend(&sweep_ctx, s.db, s.cfg, s.e.id, s.e.seed, extend_blocks,
				  &extend_opts);
		if (rc == EXIT_OK || rc == EXIT_FAILURE_RUN) {
			char id[32];
			snprintf(id, sizeof(id), "%lld", (long long)s.e.id);
			int rank_rc = print_rank(ctx, id);
			if (rc == EXIT_OK)
				rc = rank_rc;
		}
	}
	sweep_stored_release(&s);
	return rc;
}

const struct cmd_entry cmd_extend_entry = {
	.name = "extend",
	.summary = "add N blocks of runs to a finished experiment, run them and rank again",
	.args_usage = "EXP --repetitions N",
	.options = extend_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_extend_exec,
};
