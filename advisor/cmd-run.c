/*
 * run: carry out a sweep (on this host, or through Slurm on many: the
 * config's executor section, --executor) and store everything in the
 * database.  Prints the new experiment's id on stdout first, so scripts can
 * capture it; progress goes to stderr.
 */
#include <stdio.h>

#include "../experiments/config.h"
#include "../experiments/controller.h"
#include "../schema/db.h"
#include "cmd.h"
#include "sweep.h"

static struct sweep_opts run_opts;

static const struct option run_options[] = {
	OPT_STRING(0, "root", &run_opts.sysfs_root, "DIR",
		   "treat DIR as / for host knobs (testing with a fake sysfs tree; with "
		   "Slurm, %n in DIR stands for each node's name)"),
	OPT_STRING(0, "executor", &run_opts.executor, "KIND",
		   "where the runs go: local (this host), slurm or ssh (overrides executor.kind)"),
	OPT_END(),
};

static int cmd_run_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_load(argv[0], &err);
	if (!cfg)
		return cmd_fail(&err);
	/* Root first (the default lock is root's too), then the lock: nothing,
	 * not even a schema migration, happens to the database while another
	 * controller drives this host. */
	struct controller_opts copts = { .sysfs_root = run_opts.sysfs_root };
	if (controller_check_privileges(cfg, &copts, &err) < 0) {
		config_free(cfg);
		return cmd_fail(&err);
	}
	struct hostlock lock = { .fd = -1 };
	struct db *db = NULL;
	if (sweep_lock(ctx, run_opts.sysfs_root, &lock, &err) < 0 ||
	    !(db = db_open(ctx->db_path, true, &err))) {
		hostlock_release(&lock);
		config_free(cfg);
		return cmd_fail(&err);
	}
	int rc = sweep_new(ctx, db, cfg, 0, cfg->seed_given ? cfg->seed : sweep_random_seed(),
			   &run_opts);
	db_close(db);
	hostlock_release(&lock);
	config_free(cfg);
	return rc;
}

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.summary = "run a sweep (here, or on Slurm nodes) into the database; prints the experiment id",
	.args_usage = "CONFIG",
	.options = run_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_run_exec,
};
