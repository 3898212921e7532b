/*
 * exits: ganged exits and exit reasons from a recording made on the host:
 * a trace-cmd trace.dat (`trace-cmd record -e kvm_hv -e kvm sleep 10`) or
 * the seed's own perf.data (`perf record -e kvm_hv:kvm_guest_exit -e
 * kvm_hv:kvmppc_run_core -a sleep 10`), told apart by their magic.
 * Replaces the seed's perf script: faster, exact about losses, and correct
 * for VMs with several vcores running at once (DESIGN §4.3);
 * `--algorithm seed` gives what the seed script gives.
 */
#include <stdio.h>

#include "../collectors/exitsum.h"
#include "../collectors/offline.h"
#include "cmd.h"

static const char *algorithm = "vcore";
static const char *buffer;

static const struct option exits_options[] = {
	OPT_STRING(0, "algorithm", &algorithm, "RULE",
		   "vcore (state per runner thread, default) or seed (the RFC's per-tgid rule)"),
	OPT_STRING('B', "buffer", &buffer, "NAME",
		   "trace-cmd buffer to read ('top' for the top level; default: the one with "
		   "kvm_hv events)"),
	OPT_END(),
};

static int cmd_exits_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct offline_opts opts = { .buffer = buffer };
	if (gang_algorithm_parse(algorithm, &opts.algorithm) < 0) {
		err_set(&err, EXIT_BAD_INPUT, "--algorithm must be 'vcore' or 'seed', not '%s'",
			algorithm);
		return cmd_fail(&err);
	}
	struct gang_result res;
	struct offline_info info;
	if (offline_analyze(argv[0], &opts, &res, &info, &err) < 0)
		return cmd_fail(&err);

	struct exitsum_meta meta = {
		.source = argv[0], .buffer = info.buffer,
		.clock = info.clock[0] ? info.clock : NULL,
	};
	struct strbuf out = STRBUF_INIT;
	if (ctx->json)
		exitsum_json(&out, &res, &meta);
	else
		exitsum_text(&out, &res, &meta, ctx->verbose);
	cmd_print(&out);
	strbuf_release(&out);
	if (info.unordered && !ctx->quiet)
		warn_emit("%llu events came after newer ones (perf.data without FINISHED_ROUND "
			  "records, or with clocks out of step); counts near them may be off",
			  (unsigned long long)info.unordered);
	gang_result_release(&res);
	return EXIT_OK;
}

const struct cmd_entry cmd_exits_entry = {
	.no_db = 1,
	.name = "exits",
	.summary = "ganged exits and exit reasons from a trace.dat or perf.data recording",
	.args_usage = "TRACE.dat|perf.data",
	.options = exits_options,
	.help = exitsum_help,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_exits_exec,
};
