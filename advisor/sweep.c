/* sweep: shared by run, resume and rerun; see sweep.h. */
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../experiments/controller.h"
#include "../experiments/hostlock.h"
#include "../experiments/plan-store.h"
#include "../experiments/plan.h"
#include "../schema/db-plan.h"
#include "../util/json.h"

int sweep_lock(const struct cmd_ctx *ctx, struct hostlock *lock, struct ta_err *err)
{
	if (hostlock_acquire(lock, NULL, err) < 0)
		return -1;
	if (lock->leftovers && !ctx->quiet)
		fprintf(stderr, "ended %d process%s left running by an earlier sweep: %s\n",
			lock->leftovers, lock->leftovers == 1 ? "" : "es",
			strbuf_str(&lock->leftover_names));
	if (lock->survivor_group)
		fprintf(stderr, "topoadvisor: warning: processes of group %d left by an earlier "
			"sweep survive SIGKILL (stuck in the kernel?); check 'ps -g %d'\n",
			lock->survivor_group, lock->survivor_group);
	return 0;
}

uint64_t sweep_random_seed(void)
{
	uint64_t seed;
	if (getrandom(&seed, sizeof(seed), 0) == (ssize_t)sizeof(seed))
		return seed >> 1;	/* SQLite integers are signed */
	return ((uint64_t)time(NULL) << 20 ^ (uint64_t)getpid()) >> 1;
}

static struct plan *expand_and_check(const struct sweep_config *cfg, uint64_t seed,
				     const struct controller_opts *copts, struct ta_err *err)
{
	struct host_facts host;
	host_facts_read(&host);
	struct plan *p = plan_expand(cfg, &host, seed, err);
	if (!p)
		return NULL;
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
	return p;
}

static int drive(const struct cmd_ctx *ctx, struct db *db, const struct plan *p,
		 int64_t exp_id, const struct controller_opts *copts)
{
	struct ta_err err = { 0 };
	struct controller_summary sum;
	if (controller_run(db, p, exp_id, copts, &sum, &err) < 0)
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
		fprintf(stderr, "experiment %lld: %zu runs this time: %zu ok, %zu failed%s\n",
			(long long)exp_id, sum.attempted, sum.ok, sum.failed,
			sum.interrupted ? "; interrupted (finish with 'topoadvisor resume')" : "");
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
	if (!hostlock_held() && sweep_lock(ctx, &lock, &err) < 0)
		return cmd_fail(&err);
	struct plan *p = expand_and_check(cfg, seed, &copts, &err);
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
	};
	int64_t exp_id;
	int rc;
	if (db_experiment_insert(db, &e, &exp_id, &err) < 0 ||
	    plan_store(db, exp_id, p, NULL, &err) < 0) {
		rc = cmd_fail(&err);
	} else {
		if (!ctx->json) {
			/* First, so a script has the id even if the sweep is interrupted. */
			printf("%lld\n", (long long)exp_id);
			fflush(stdout);
		}
		if (!ctx->quiet)
			fprintf(stderr, "experiment %lld '%s': %zu configurations, %zu runs "
				"(seed %llu)\n", (long long)exp_id, cfg->name, p->nconfigs,
				p->nruns, (unsigned long long)seed);
		rc = drive(ctx, db, p, exp_id, &copts);
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
	if (!hostlock_held() && sweep_lock(ctx, &lock, &err) < 0)
		return cmd_fail(&err);
	struct plan *p = expand_and_check(cfg, seed, &copts, &err);
	int rc = p ? drive(ctx, db, p, exp_id, &copts) : cmd_fail(&err);
	plan_free(p);
	hostlock_release(&lock);
	return rc;
}
