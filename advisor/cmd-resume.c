/*
 * resume and rerun: carry on with a stored experiment, or run it again as
 * a new one.  Both work from the config text stored with the experiment,
 * never from the file on disk, which may have changed since.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../experiments/config.h"
#include "../experiments/controller.h"
#include "../schema/db-race.h"
#include "../schema/db-runs.h"
#include "../schema/db.h"
#include "cmd.h"
#include "sweep.h"

static struct sweep_opts resume_opts;

static const struct option resume_options[] = {
	OPT_STRING(0, "root", &resume_opts.sysfs_root, "DIR",
		   "treat DIR as / for host knobs (testing with a fake sysfs tree; with "
		   "Slurm, %n in DIR stands for each node's name)"),
	OPT_STRING(0, "executor", &resume_opts.executor, "KIND",
		   "where the runs go: local (this host), slurm or ssh (overrides executor.kind)"),
	OPT_END(),
};

/* Runs still to do, and whether a race still has a look to take (a kill after its last run). */
static int pending_work(struct db *db, int64_t exp_id, size_t *pending, bool *race_open,
			struct ta_err *err)
{
	struct db_run_todo *todo;
	struct db_race race;
	bool raced;
	if (db_runs_list(db, exp_id, true, &todo, pending, err) < 0)
		return -1;
	db_runs_free(todo, *pending);
	if (db_race_get(db, exp_id, &race, &raced, err) < 0)
		return -1;
	*race_open = raced && !race.stop_reason;
	db_race_release(&race);
	return 0;
}

static int cmd_resume_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct sweep_stored s;
	size_t pending = 0;
	bool race_open = false;
	int rc;
	if (sweep_stored_open(ctx, argv[0], resume_opts.sysfs_root, &s, &err) < 0 ||
	    pending_work(s.db, s.e.id, &pending, &race_open, &err) < 0) {
		rc = cmd_fail(&err);
	} else if (!pending && !race_open) {
		fprintf(stderr, "experiment %lld has all %d runs it needs; nothing to resume\n",
			(long long)s.e.id, s.e.nok);
		rc = EXIT_OK;
	} else {
		if (!ctx->quiet)
			fprintf(stderr, "experiment %lld: %zu of %d runs still to do%s\n",
				(long long)s.e.id, pending, s.e.nruns,
				race_open ? " (and the race goes on)" : "");
		sweep_warn_host_changed(&s.e);
		rc = sweep_resume(ctx, s.db, s.cfg, s.e.id, s.e.seed, &resume_opts);
	}
	sweep_stored_release(&s);
	return rc;
}

static int cmd_rerun_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct sweep_stored s;
	int rc;
	if (sweep_stored_open(ctx, argv[0], resume_opts.sysfs_root, &s, &err) < 0) {
		rc = cmd_fail(&err);
	} else {
		sweep_warn_host_changed(&s.e);
		rc = sweep_new(ctx, s.db, s.cfg, s.e.id,
			       s.cfg->seed_given ? s.cfg->seed : sweep_random_seed(), &resume_opts);
	}
	sweep_stored_release(&s);
	return rc;
}

const struct cmd_entry cmd_resume_entry = {
	.name = "resume",
	.summary = "run what an interrupted experiment still lacks (missing or failed runs)",
	.args_usage = "EXP",
	.options = resume_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_resume_exec,
};

const struct cmd_entry cmd_rerun_entry = {
	.name = "rerun",
	.summary = "run a stored experiment again as a new one, from its stored config",
	.args_usage = "EXP",
	.options = resume_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_rerun_exec,
};
