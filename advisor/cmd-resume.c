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
#include "../schema/db.h"
#include "cmd.h"
#include "sweep.h"

static struct sweep_opts resume_opts;

static const struct option resume_options[] = {
	OPT_STRING(0, "root", &resume_opts.sysfs_root, "DIR",
		   "treat DIR as / for host knobs (testing with a fake sysfs tree)"),
	OPT_END(),
};

/* Opens the DB, reads the experiment and parses its stored config. */
static int load(const struct cmd_ctx *ctx, const char *which, struct db **db,
		struct db_experiment *e, struct sweep_config **cfg, struct ta_err *err)
{
	*db = db_open(ctx->db_path, false, err);
	if (!*db)
		return -1;
	if (db_experiment_get(*db, which, e, err) < 0)
		return -1;
	char label[64];
	snprintf(label, sizeof(label), "experiment %lld (stored config)", (long long)e->id);
	*cfg = config_parse_flags(label, e->config_yaml, strlen(e->config_yaml), 0, err);
	return *cfg ? 0 : -1;
}

/* Names the host facts that differ from the experiment's, if any. */
static void warn_host_changed(const struct db_experiment *e)
{
	char *now = controller_host_facts_json();
	if (e->host_facts && strcmp(e->host_facts, now))
		fprintf(stderr, "topoadvisor: warning: this host differs from the one experiment "
			"%lld ran on:\n  then: %s\n  now:  %s\n", (long long)e->id, e->host_facts,
			now);
	free(now);
}

static int cmd_resume_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct db *db = NULL;
	struct db_experiment e = { 0 };
	struct sweep_config *cfg = NULL;
	struct hostlock lock = { .fd = -1 };
	int rc;
	if (sweep_lock(ctx, &lock, &err) < 0 || load(ctx, argv[0], &db, &e, &cfg, &err) < 0) {
		rc = cmd_fail(&err);
	} else if (e.nok == e.nruns) {
		fprintf(stderr, "experiment %lld has all %d runs; nothing to resume\n",
			(long long)e.id, e.nruns);
		rc = EXIT_OK;
	} else {
		if (!ctx->quiet)
			fprintf(stderr, "experiment %lld: %d of %d runs still to do\n",
				(long long)e.id, e.nruns - e.nok, e.nruns);
		warn_host_changed(&e);
		rc = sweep_resume(ctx, db, cfg, e.id, e.seed, &resume_opts);
	}
	config_free(cfg);
	db_experiment_release(&e);
	db_close(db);
	hostlock_release(&lock);
	return rc;
}

static int cmd_rerun_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct db *db = NULL;
	struct db_experiment e = { 0 };
	struct sweep_config *cfg = NULL;
	struct hostlock lock = { .fd = -1 };
	int rc;
	if (sweep_lock(ctx, &lock, &err) < 0 || load(ctx, argv[0], &db, &e, &cfg, &err) < 0) {
		rc = cmd_fail(&err);
	} else {
		warn_host_changed(&e);
		rc = sweep_new(ctx, db, cfg, e.id,
			       cfg->seed_given ? cfg->seed : sweep_random_seed(), &resume_opts);
	}
	config_free(cfg);
	db_experiment_release(&e);
	db_close(db);
	hostlock_release(&lock);
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
