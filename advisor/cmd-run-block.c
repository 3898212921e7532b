/*
 * run-block (internal): run one block of a distributed sweep on the node
 * Slurm gave it, as the job the controller submitted.  Not for users: the
 * controller (`run` with executor: slurm) writes the request and starts
 * this through sbatch.  See experiments/worker.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../experiments/worker.h"
#include "cmd.h"

static const struct option run_block_options[] = {
	OPT_END(),
};

static int cmd_run_block_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct worker_opts o = { .quiet = ctx->quiet, .verbose = ctx->verbose };
	struct worker_outcome out;
	if (worker_run_block(argv[0], &o, &out, &err) < 0)
		return cmd_fail(&err);
	if (out.interrupted) {
		fprintf(stderr, "interrupted: no result for this block\n");
		return 130;
	}
	if (!ctx->quiet)
		fprintf(stderr, "%zu runs ok, %zu failed; result: %s\n", out.ok, out.failed,
			out.result);
	free(out.result);
	return EXIT_OK;
}

const struct cmd_entry cmd_run_block_entry = {
	.no_db = 1,
	.name = "run-block",
	.summary = "(internal) run one block of a distributed sweep on this node",
	.args_usage = "REQUEST",
	.options = run_block_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_run_block_exec,
};
