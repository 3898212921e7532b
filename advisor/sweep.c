/* sweep: shared by run, resume and rerun; see sweep.h. */
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../experiments/controller.h"
#include "../experiments/dispatch.h"
#include "../experiments/hostlock.h"
#include "../experiments/sshexec.h"
#include "../experiments/plan-store.h"
#include "../experiments/plan.h"
#include "../schema/db-blocks.h"
#include "../schema/db-journal.h"
#include "../schema/db-plan.h"
#include "../schema/db-race.h"
#include "../util/json.h"
#include "../util/warn.h"
#include "race-run.h"

int sweep_lock(const struct cmd_ctx *ctx, const char *root, struct hostlock *lock,
	       struct ta_err *err)
{
	if (hostlock_acquire_host(lock, root, NULL, err) < 0)
		return -1;
	if (lock->leftovers && !ctx->quiet)
		fprintf(stderr, "ended %d process%s left running by an earlier sweep: %s\n",
			lock->leftovers, lock->leftovers == 1 ? "" : "es",
			strbuf_str(&lock->leftover_names));
	if (lock->survivor_group)
		warn_emit("processes of group %d left by an earlier sweep survive SIGKILL (stuck "
			  "in the kernel?); check 'ps -g %d'", lock->survivor_group,
			  lock->survivor_group);
	if (lock->survivor_cgroup)
		warn_emit("processes of %s left by an earlier sweep survive SIGKILL (stuck in "
			  "the kernel?); check its cgroup.procs", lock->survivor_cgroup);
	if (lock->stale_instances > 0 && !ctx->quiet)
		fprintf(stderr, "removed %d trace instance%s left by an earlier sweep\n",
			lock->stale_instances, lock->stale_instances == 1 ? "" : "s");
	return 0;
}

uint64_t sweep_random_seed(void)
{
	uint64_t seed;
	if (getrandom(&seed, sizeof(seed), 0) == (ssize_t)sizeof(seed))
		return seed >> 1;	/* SQLite integers are signed */
	return ((uint64_t)time(NULL) << 20 ^ (uint64_t)getpid()) >> 1;
}

int sweep_race_first_test(const struct sweep_config *cfg)
{
	return cfg->strategy == STRATEGY_RACE ? cfg->race_first_test : 0;
}

/*
 * Whether the sweep runs through Slurm: an experiment already distributed
 * (exp_id > 0) goes on so, else --executor, else the config's
 * executor.kind.  EXIT_BAD_INPUT for an --executor that is neither.
 */
static int sweep_distributed(struct db *db, int64_t exp_id, const struct sweep_config *cfg,
			     const struct sweep_opts *so, enum executor_kind *where,
			     struct ta_err *err)
{
	enum executor_kind kind = cfg->executor.kind;
	if (so->executor && config_executor_from_name(so->executor, &kind) < 0)
		return err_set(err, EXIT_BAD_INPUT, "--executor %s: expected local, slurm or ssh",
			       so->executor);
	*where = kind;
	if (exp_id <= 0)
		return 0;
	struct db_distributed d;
	bool found;
	if (db_distributed_get(db, exp_id, &d, &found, err) < 0)
		return -1;
	enum executor_kind stored = found && d.kind && !strcmp(d.kind, "ssh") ? EXECUTOR_SSH
				    : EXECUTOR_SLURM;
	db_distributed_release(&d);
	if (found && so->executor && kind != stored)
		return err_set(err, EXIT_BAD_INPUT, "experiment %lld runs on %s; it goes on "
			       "there (drop --executor %s)", (long long)exp_id,
			       stored == EXECUTOR_SSH ? "ssh hosts" : "Slurm", so->executor);
	if (found)
		*where = stored;
	return 0;
}

/* A distributed sweep's controller does not hold this machine (hostlock_leave_host). */
static void leave_host_if_distributed(enum executor_kind where)
{
	if (where != EXECUTOR_LOCAL)
		hostlock_leave_host();
}

/*
 * The plan for this host, checked: a local sweep needs this host to carry
 * it out; a Slurm sweep's nodes check for themselves (the controller may
 * be a login node of another kind), so only what the controller needs —
 * a shared directory and a Slurm that answers — is checked here.
 */
static struct plan *expand_and_check(const struct sweep_config *cfg, uint64_t seed,
				     const struct controller_opts *copts, enum executor_kind where,
				     struct ta_err *err)
{
	struct host_facts host;
	host_facts_read(&host);
	struct plan *p = plan_expand(cfg, &host, seed, err);
	if (!p)
		return NULL;
	/* A pinning some shapes cannot take is run without them: say so. */
	for (size_t i = 0; i < p->ndropped; i++)
		if (p->dropped[i].pinning)
			warn_emit("%s: not run: %s ('topoadvisor plan' lists what is dropped)",
				  p->dropped[i].what, p->dropped[i].reason);
	if (where != EXECUTOR_LOCAL) {
		if (controller_check_privileges(cfg, copts, err) < 0 ||
		    (where == EXECUTOR_SLURM ? dispatch_check(&cfg->executor, err)
		     : sshexec_check(&cfg->executor, err)) < 0) {
			plan_free(p);
			return NULL;
		}
		controller_guests_describe(p);
		return p;
	}
	if (p->cross_host) {
		err_set(err, EXIT_BAD_INPUT, "%s: this sweep is for a %s host; this host is %s",
			cfg->path, config_arch_name(cfg->arch), config_arch_name(host.arch));
		plan_free(p);
		return NULL;
	}
	if (controller_check_host(p, copts, true, err) < 0) {
		plan_free(p);
		return NULL;
	}
	controller_guests_describe(p);
	return p;
}

/*
 * A sweep that cannot start while an earlier one's knob changes are still
 * in the journal (its controller was killed mid-write, say) is most likely
 * failing because of them: say how to put the host back.
 */
static int fail_check(const struct cmd_ctx *ctx, struct db *db, const struct sweep_opts *so,
		      struct ta_err *err)
{
	struct db_journal_entry *v;
	size_t n = 0;
	struct ta_err jerr = { 0 };
	if (db_journal_unrestored(db, &v, &n, &jerr) == 0) {
		db_journal_entries_free(v, n);
		size_t len = strlen(err->msg);
		struct strbuf hint = STRBUF_INIT;
		cmd_hint(ctx, "restore-host", so->sysfs_root, &hint);
		if (n)
			snprintf(err->msg + len, sizeof(err->msg) - len, "\n%zu host knob change%s "
				 "of an earlier sweep %s not restored: run '%s' first", n,
				 n == 1 ? "" : "s", n == 1 ? "is" : "are", hint.buf);
		strbuf_release(&hint);
	}
	return cmd_fail(err);
}

/* Runs the experiment's runs here or on Slurm; a raced one (a races row) through its scheduler. */
static int drive(const struct cmd_ctx *ctx, struct db *db, const struct plan *p,
		 int64_t exp_id, const struct controller_opts *copts_in, enum executor_kind where)
{
	struct ta_err err = { 0 };
	struct controller_summary sum;
	struct controller_opts copts = *copts_in;
	struct db_race race;
	bool raced;
	struct race_run rr;
	if (db_race_get(db, exp_id, &race, &raced, &err) < 0)
		return cmd_fail(&err);
	db_race_release(&race);
	if (raced) {
		if (race_run_init(&rr, db, exp_id, p, ctx->quiet > 0, &err) < 0)
			return cmd_fail(&err);
		copts.scheduler = &rr.sched;
	}
	int rc = where == EXECUTOR_SLURM
		? dispatch_run(db, p, exp_id, &p->cfg->executor, &copts, &sum, &err)
		: where == EXECUTOR_SSH
		? sshexec_run(db, p, exp_id, &p->cfg->executor, &copts, &sum, &err)
		: controller_run(db, p, exp_id, &copts, &sum, &err);
	if (raced)
		race_run_release(&rr);
	if (rc < 0)
		return cmd_fail(&err);
	if (ctx->json) {
		struct strbuf out = STRBUF_INIT;
		struct json_writer w;
		json_init(&w, &out, true);
		json_obj_begin(&w);
		json_key(&w, "experiment_id"); json_int(&w, exp_id);
		json_key(&w, "attempted"); json_uint(&w, sum.attempted);
		json_key(&w, "ok"); json_uint(&w, sum.ok);
		json_key(&w, "failed"); json_uint(&w, sum.failed);
		json_key(&w, "interrupted"); json_bool(&w, sum.interrupted);
		json_obj_end(&w);
		cmd_print(&out);
		strbuf_release(&out);
	} else if (!ctx->quiet || sum.failed || sum.interrupted) {
		struct strbuf hint = STRBUF_INIT;
		if (sum.interrupted) {
			strbuf_addstr(&hint, "; interrupted (finish it with '");
			cmd_hint(ctx, "resume", copts.sysfs_root, &hint);
			strbuf_addf(&hint, " %lld')", (long long)exp_id);
		}
		fprintf(stderr, "experiment %lld: %zu runs this time: %zu ok, %zu failed%s\n",
			(long long)exp_id, sum.attempted, sum.ok, sum.failed, strbuf_str(&hint));
		strbuf_release(&hint);
	}
	if (sum.interrupted)
		return 130;
	return sum.failed ? EXIT_FAILURE_RUN : EXIT_OK;
}

int sweep_new(const struct cmd_ctx *ctx, struct db *db, const struct sweep_config *cfg,
	      int64_t parent_id, uint64_t seed, const struct sweep_opts *so)
{
	struct ta_err err = { 0 };
	struct controller_opts copts = { .sysfs_root = so->sysfs_root, .quiet = ctx->quiet,
					 .verbose = ctx->verbose };
	struct hostlock lock = { .fd = -1 };
	enum executor_kind where = EXECUTOR_LOCAL;
	if (sweep_distributed(db, 0, cfg, so, &where, &err) < 0)
		return cmd_fail(&err);
	if (!hostlock_held() && sweep_lock(ctx, so->sysfs_root, &lock, &err) < 0)
		return cmd_fail(&err);
	leave_host_if_distributed(where);
	struct plan *p = expand_and_check(cfg, seed, &copts, where, &err);
	if (!p) {
		hostlock_release(&lock);
		return cmd_fail(&err);
	}
	char *facts = controller_host_facts_json();
	struct db_experiment_new e = {
		.name = cfg->name, .parent_id = parent_id, .config_yaml = cfg->text,
		.config_len = cfg->text_len, .config_path = cfg->path, .host_facts = facts,
		.seed = seed, .primary_metric = cfg->bench.metric.name,
		.higher_is_better = !cfg->bench.metric.direction_given ? -1
				    : cfg->bench.metric.higher_is_better,
		.objective = cfg->advisor.objective == OBJECTIVE_MEAN ? "mean" : "worst",
		.equivalence = cfg->advisor.equivalence,
		.environment = (const char *const *)cfg->advisor.environment,
		.nenvironment = cfg->advisor.nenvironment,
		.max_failure_rate = cfg->advisor.max_failure_rate,
	};
	int64_t exp_id;
	int rc;
	int first_test = sweep_race_first_test(cfg);
	if (db_experiment_insert(db, &e, &exp_id, &err) < 0 ||
	    plan_store(db, exp_id, p, NULL, &err) < 0 ||
	    (first_test && db_race_start(db, exp_id, first_test, cfg->repetitions, &err) < 0)) {
		rc = cmd_fail(&err);
	} else {
		if (!ctx->json) {
			/* First, so a script has the id even if the sweep is interrupted. */
			printf("%lld\n", (long long)exp_id);
			fflush(stdout);
		}
		if (!ctx->quiet)
			fprintf(stderr, "experiment %lld '%s': %zu configurations, %s%zu runs "
				"(seed %llu)\n", (long long)exp_id, cfg->name, p->nconfigs,
				first_test ? "raced, at most " : "", p->nruns,
				(unsigned long long)seed);
		rc = drive(ctx, db, p, exp_id, &copts, where);
	}
	free(facts);
	plan_free(p);
	hostlock_release(&lock);
	return rc;
}

int sweep_resume(const struct cmd_ctx *ctx, struct db *db, const struct sweep_config *cfg,
		 int64_t exp_id, uint64_t seed, const struct sweep_opts *so)
{
	struct ta_err err = { 0 };
	struct controller_opts copts = { .sysfs_root = so->sysfs_root, .quiet = ctx->quiet,
					 .verbose = ctx->verbose };
	struct hostlock lock = { .fd = -1 };
	enum executor_kind where = EXECUTOR_LOCAL;
	if (sweep_distributed(db, exp_id, cfg, so, &where, &err) < 0)
		return cmd_fail(&err);
	if (!hostlock_held() && sweep_lock(ctx, so->sysfs_root, &lock, &err) < 0)
		return cmd_fail(&err);
	leave_host_if_distributed(where);
	struct plan *p = expand_and_check(cfg, seed, &copts, where, &err);
	int rc = p ? drive(ctx, db, p, exp_id, &copts, where) : fail_check(ctx, db, so, &err);
	plan_free(p);
	hostlock_release(&lock);
	return rc;
}

/* The plan's runs from block `from` on, without the eliminated configurations. */
static int extend_runs(struct db *db, int64_t exp_id, const struct plan *p, int from,
		       struct db_run_new **out, size_t *n, struct ta_err *err)
{
	struct db_config_summary *cs;
	size_t ncs;
	struct db_elimination *el;
	size_t nel;
	if (db_config_summaries(db, exp_id, &cs, &ncs, err) < 0)
		return -1;
	if (db_eliminations_list(db, exp_id, &el, &nel, err) < 0) {
		db_config_summaries_free(cs, ncs);
		return -1;
	}
	int64_t *ids = xcalloc(p->nconfigs + 1, sizeof(*ids));
	for (size_t i = 0; i < p->nconfigs; i++) {
		for (size_t k = 0; k < ncs; k++)
			if (!strcmp(cs[k].rec.key, p->configs[i].rec.key))
				ids[i] = cs[k].id;
		for (size_t k = 0; k < nel; k++)
			if (el[k].configuration_id == ids[i])
				ids[i] = 0;
	}
	*out = xcalloc(p->nruns + 1, sizeof(**out));
	*n = 0;
	for (size_t r = 0; r < p->nruns; r++)
		if (p->runs[r].repetition >= from && ids[p->runs[r].config])
			(*out)[(*n)++] = (struct db_run_new){ ids[p->runs[r].config],
							      p->runs[r].repetition };
	free(ids);
	db_eliminations_free(el, nel);
	db_config_summaries_free(cs, ncs);
	return 0;
}

int sweep_extend(const struct cmd_ctx *ctx, struct db *db, struct sweep_config *cfg,
		 int64_t exp_id, uint64_t seed, int blocks, const struct sweep_opts *so)
{
	struct ta_err err = { 0 };
	struct controller_opts copts = { .sysfs_root = so->sysfs_root, .quiet = ctx->quiet,
					 .verbose = ctx->verbose };
	struct hostlock lock = { .fd = -1 };
	int from;
	enum executor_kind where = EXECUTOR_LOCAL;
	if (sweep_distributed(db, exp_id, cfg, so, &where, &err) < 0)
		return cmd_fail(&err);
	if (!hostlock_held() && sweep_lock(ctx, so->sysfs_root, &lock, &err) < 0)
		return cmd_fail(&err);
	leave_host_if_distributed(where);
	if (db_runs_blocks(db, exp_id, &from, &err) < 0) {
		hostlock_release(&lock);
		return cmd_fail(&err);
	}
	/* The same seeded block order a sweep of from + blocks repetitions has. */
	cfg->repetitions = from + blocks;
	struct plan *p = expand_and_check(cfg, seed, &copts, where, &err);
	struct db_run_new *runs = NULL;
	size_t nruns = 0;
	struct db_race race;
	bool raced = false;
	int rc;
	if (!p || extend_runs(db, exp_id, p, from, &runs, &nruns, &err) < 0 ||
	    db_race_get(db, exp_id, &race, &raced, &err) < 0 ||
	    db_runs_append(db, exp_id, runs, nruns, &err) < 0 ||
	    (raced && db_race_extend(db, exp_id, from + blocks, &err) < 0)) {
		rc = cmd_fail(&err);
	} else {
		if (!ctx->quiet)
			fprintf(stderr, "experiment %lld: %d more block%s after block %d: %zu runs%s\n",
				(long long)exp_id, blocks, blocks == 1 ? "" : "s", from, nruns,
				raced ? " (the race goes on over them)" : "");
		rc = drive(ctx, db, p, exp_id, &copts, where);
	}
	if (raced)
		db_race_release(&race);
	free(runs);
	plan_free(p);
	hostlock_release(&lock);
	return rc;
}

/*
 * Opens the database, reads experiment `which` (id or name) and parses its
 * stored config (never the file on disk, which may have changed since).
 * On failure *db may still need db_close.
 */
static int sweep_load_stored(const struct cmd_ctx *ctx, const char *which, struct db **db,
			     struct db_experiment *e, struct sweep_config **cfg,
			     struct ta_err *err)
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

int sweep_stored_open(const struct cmd_ctx *ctx, const char *which, const char *root,
		      struct sweep_stored *s, struct ta_err *err)
{
	*s = (struct sweep_stored){ .lock = { .fd = -1 } };
	/* The lock first: opening the database may migrate it (dbread.h). */
	if (sweep_lock(ctx, root, &s->lock, err) < 0)
		return -1;
	return sweep_load_stored(ctx, which, &s->db, &s->e, &s->cfg, err);
}

void sweep_stored_release(struct sweep_stored *s)
{
	config_free(s->cfg);
	db_experiment_release(&s->e);
	db_close(s->db);
	hostlock_release(&s->lock);
}

void sweep_warn_host_changed(const struct db_experiment *e)
{
	char *now = controller_host_facts_json();
	if (e->host_facts && strcmp(e->host_facts, now))
		warn_emit("this host differs from the one experiment %lld ran on:\n  then: %s\n"
			  "  now:  %s", (long long)e->id, e->host_facts, now);
	free(now);
}
