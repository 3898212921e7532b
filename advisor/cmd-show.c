/*
 * show: one experiment in detail — where it came from, its configurations
 * with their run counts, the hosts its runs ran on, and every failed or
 * interrupted run with its cause; for a raced experiment, the race's state
 * and every elimination; for one run through Slurm, its jobs (every
 * attempt at a block that did not give the block's result, all with -v);
 * the host's load during the runs (the busy ones, every one with -v); and
 * the engine's view of its spread: boot-to-boot against run-to-run
 * variance, what to spend next, drift over the blocks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/db-blocks.h"
#include "../schema/db-plan.h"
#include "../schema/db-race.h"
#include "../util/json.h"
#include "cmd.h"
#include "dbread.h"
#include "rank.h"

struct show_data {
	struct db_experiment exp;
	struct db_config_summary *configs;
	size_t nconfigs;
	struct db_run_problem *problems;
	size_t nproblems;
	bool raced;
	struct db_race race;
	struct db_elimination *elims;
	size_t nelims;
	bool ranked;			/* the engine could look at it (a successful run) */
	struct db_results res;
	struct rank_result rank;
	struct db_host_summary *hosts;
	size_t nhosts;
	bool distributed;
	struct db_distributed dist;
	struct db_attempt *attempts;
	size_t nattempts;
};

/* The elimination of configuration id, or NULL. */
static const struct db_elimination *elimination_of(const struct show_data *d, int64_t id)
{
	for (size_t i = 0; i < d->nelims; i++)
		if (d->elims[i].configuration_id == id)
			return &d->elims[i];
	return NULL;
}

/* Every run of d's results with a recorded load, one call each. */
static size_t load_runs(const struct show_data *d, void (*fn)(const struct db_results_config *,
							      const struct db_results_run *, void *),
			void *arg)
{
	size_t n = 0;
	for (size_t c = 0; d->ranked && c < d->res.nconfigs; c++)
		for (size_t j = 0; j < d->res.configs[c].nruns; j++) {
			const struct db_results_run *run = &d->res.configs[c].runs[j];
			if (isnan(run->loadavg))
				continue;
			n++;
			if (fn)
				fn(&d->res.configs[c], run, arg);
		}
	return n;
}

static void load_json_one(const struct db_results_config *c, const struct db_results_run *run,
			  void *arg)
{
	struct json_writer *w = arg;
	json_obj_begin(w);
	json_key(w, "run_id"); json_int(w, run->id);
	json_key(w, "key"); json_str(w, c->rec.key);
	json_key(w, "repetition"); json_int(w, run->repetition + 1);
	json_key(w, "host"); json_str(w, run->host);
	json_key(w, "loadavg"); json_double(w, run->loadavg);
	json_key(w, "host_cpus");
	if (run->host_cpus > 0)
		json_int(w, run->host_cpus);
	else
		json_null(w);
	json_key(w, "busy"); json_bool(w, rank_run_busy(run));
	json_obj_end(w);
}

struct load_text {
	struct strbuf *out;
	bool all;
	double max;
	size_t busy;
	double *values;
	size_t n;
};

static void load_text_one(const struct db_results_config *c, const struct db_results_run *run,
			  void *arg)
{
	struct load_text *t = arg;
	bool busy = rank_run_busy(run);
	t->busy += busy;
	t->max = fmax(t->max, run->loadavg);
	t->values[t->n++] = run->loadavg;
	if (!t->all && !busy)
		return;
	strbuf_addf(t->out, "  run %lld  %s  repetition %d%s%s  load %.2f", (long long)run->id,
		    c->rec.key, run->repetition + 1, run->host ? " on " : "",
		    run->host ? run->host : "", run->loadavg);
	if (run->host_cpus > 0)
		strbuf_addf(t->out, " on %d CPUs%s", run->host_cpus, busy ? ": busy" : "");
	strbuf_addch(t->out, '\n');
}

/* The host's load during the runs: a summary, the busy runs (every run with -v). */
static void load_text(struct strbuf *out, const struct show_data *d, int verbose)
{
	size_t n = load_runs(d, NULL, NULL);
	if (!n)
		return;
	struct strbuf lines = STRBUF_INIT;
	struct load_text t = { &lines, verbose > 0, 0, 0, xmalloc(n * sizeof(double)), 0 };
	load_runs(d, load_text_one, &t);
	strbuf_addf(out, "\nHost load (1-minute load average at each run's end): median %.2f, "
		    "max %.2f over %zu runs; %zu above the host's CPUs%s\n",
		    stats_median(t.values, t.n), t.max, n, t.busy, t.busy && !verbose
		    ? " (listed; all runs with -v)" : verbose ? "" : " (every run with -v)");
	strbuf_add(out, lines.buf, lines.len);
	strbuf_release(&lines);
	free(t.values);
}

static void race_json(struct json_writer *w, const struct show_data *d)
{
	json_key(w, "strategy"); json_str(w, d->raced ? "race" : "full");
	json_key(w, "race");
	if (!d->raced) {
		json_null(w);
		return;
	}
	json_obj_begin(w);
	json_key(w, "first_test"); json_int(w, d->race.first_test);
	json_key(w, "max_blocks"); json_int(w, d->race.max_blocks);
	json_key(w, "blocks_evaluated"); json_int(w, d->race.blocks_evaluated);
	json_key(w, "stop_reason"); json_str(w, d->race.stop_reason);
	json_key(w, "stopped_after");
	if (d->race.stop_reason)
		json_int(w, d->race.stopped_after);
	else
		json_null(w);
	json_key(w, "eliminations");
	json_arr_begin(w);
	for (size_t i = 0; i < d->nelims; i++) {
		const struct db_elimination *e = &d->elims[i];
		json_obj_begin(w);
		json_key(w, "configuration_id"); json_int(w, e->configuration_id);
		json_key(w, "key"); json_str(w, e->key);
		json_key(w, "after_block"); json_int(w, e->after_block);
		json_key(w, "against_id");
		if (e->against_id)
			json_int(w, e->against_id);
		else
			json_null(w);
		json_key(w, "against"); json_str(w, e->against_key);
		json_key(w, "reason"); json_str(w, e->failing ? "failing" : "worse");
		json_key(w, "p"); json_double(w, e->p);
		json_key(w, "ratio"); json_double(w, e->ratio);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

static long dist_setting_int(const struct show_data *d, const char *key, long def)
{
	return db_distributed_setting_int(&d->dist, key, def);
}

static char *dist_setting_str(const struct show_data *d, const char *key)
{
	return db_distributed_setting_str(&d->dist, key);
}

/* Slurm: nodes given no more blocks (executor.exclude_after), names into d's attempts. */
static size_t dist_bad_nodes(const struct show_data *d, const char **out)
{
	return db_attempts_bad_nodes(d->attempts, d->nattempts,
				     (int)dist_setting_int(d, "exclude_after", 3), out);
}

static void hosts_json(struct json_writer *w, const struct show_data *d)
{
	json_key(w, "hosts");
	json_arr_begin(w);
	for (size_t i = 0; i < d->nhosts; i++) {
		const struct db_host_summary *h = &d->hosts[i];
		json_obj_begin(w);
		json_key(w, "host"); json_str(w, h->host);
		json_key(w, "blocks"); json_int(w, h->blocks);
		json_key(w, "runs"); json_int(w, h->runs);
		json_key(w, "ok"); json_int(w, h->ok);
		json_key(w, "failed"); json_int(w, h->failed);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_key(w, "executor");
	json_obj_begin(w);
	json_key(w, "kind"); json_str(w, d->distributed ? d->dist.kind : "local");
	if (!d->distributed) {
		json_obj_end(w);
		return;
	}
	json_key(w, "tag"); json_str(w, d->dist.tag);
	json_key(w, "work_dir"); json_str(w, d->dist.work_dir);
	json_key(w, "settings"); json_raw(w, d->dist.settings);
	{
		const char **bad = xcalloc(d->nattempts + 1, sizeof(*bad));
		size_t nbad = dist_bad_nodes(d, bad);
		json_key(w, "excluded_nodes");
		json_arr_begin(w);
		for (size_t i = 0; i < nbad; i++)
			json_str(w, bad[i]);
		json_arr_end(w);
		free(bad);
		size_t *dirty = xcalloc(d->nattempts + 1, sizeof(*dirty));
		size_t ndirty = db_attempts_dirty(d->attempts, d->nattempts, dirty);
		json_key(w, "nodes_maybe_changed");
		json_arr_begin(w);
		for (size_t i = 0; i < ndirty; i++) {
			const struct db_attempt *a = &d->attempts[dirty[i]];
			json_obj_begin(w);
			json_key(w, "node"); json_str(w, a->node);
			json_key(w, "block"); json_int(w, a->block + 1);
			json_key(w, "attempt"); json_int(w, a->attempt);
			json_key(w, "job_id"); json_str(w, a->job_id);
			json_obj_end(w);
		}
		json_arr_end(w);
		free(dirty);
	}
	json_key(w, "attempts");
	json_arr_begin(w);
	for (size_t i = 0; i < d->nattempts; i++) {
		const struct db_attempt *a = &d->attempts[i];
		json_obj_begin(w);
		json_key(w, "block"); json_int(w, a->block + 1);
		json_key(w, "attempt"); json_int(w, a->attempt);
		json_key(w, "job_name"); json_str(w, a->job_name);
		json_key(w, "job_id"); json_str(w, a->job_id);
		json_key(w, "node"); json_str(w, a->node);
		json_key(w, "state"); json_str(w, a->state);
		json_key(w, "slurm_state"); json_str(w, a->slurm_state);
		json_key(w, "outcome"); json_str(w, a->outcome);
		json_key(w, "result_file"); json_str(w, a->result_file);
		json_key(w, "error"); json_str(w, a->error);
		json_key(w, "submitted_at"); json_str(w, a->submitted_at);
		json_key(w, "started_at"); json_str(w, a->started_at);
		json_key(w, "finished_at"); json_str(w, a->finished_at);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

static void show_json(struct strbuf *out, const struct show_data *d)
{
	const struct db_experiment *e = &d->exp;
	struct json_writer w;
	json_init(&w, out, true);
	json_obj_begin(&w);
	json_key(&w, "id"); json_int(&w, e->id);
	json_key(&w, "name"); json_str(&w, e->name);
	json_key(&w, "status"); json_str(&w, e->status);
	json_key(&w, "error"); json_str(&w, e->error);
	json_key(&w, "created_at"); json_str(&w, e->created_at);
	json_key(&w, "finished_at"); json_str(&w, e->finished_at);
	json_key(&w, "parent_id");
	if (e->parent_id)
		json_int(&w, e->parent_id);
	else
		json_null(&w);
	json_key(&w, "config_path"); json_str(&w, e->config_path);
	json_key(&w, "config_sha256"); json_str(&w, e->config_sha256);
	json_key(&w, "tool_version"); json_str(&w, e->tool_version);
	json_key(&w, "seed"); json_uint(&w, e->seed);
	json_key(&w, "primary_metric"); json_str(&w, e->primary_metric);
	json_key(&w, "host_facts"); json_raw(&w, e->host_facts);
	json_key(&w, "runs"); json_int(&w, e->nruns);
	race_json(&w, d);
	if (d->ranked)
		rank_json_boots(&w, &d->rank);
	hosts_json(&w, d);
	json_key(&w, "load");
	json_arr_begin(&w);
	load_runs(d, load_json_one, &w);
	json_arr_end(&w);
	json_key(&w, "configurations");
	json_arr_begin(&w);
	for (size_t i = 0; i < d->nconfigs; i++) {
		const struct db_config_summary *c = &d->configs[i];
		json_obj_begin(&w);
		json_key(&w, "id"); json_int(&w, c->id);
		json_key(&w, "key"); json_str(&w, c->rec.key);
		json_key(&w, "baseline"); json_bool(&w, c->rec.baseline);
		json_key(&w, "decision"); json_str(&w, c->rec.decision);
		json_key(&w, "environment"); json_str(&w, c->rec.environment);
		json_key(&w, "factors");
		json_obj_begin(&w);
		config_record_json(&w, &c->rec);
		json_obj_end(&w);
		json_key(&w, "runs"); json_int(&w, c->nruns);
		json_key(&w, "ok"); json_int(&w, c->nok);
		json_key(&w, "failed"); json_int(&w, c->nfailed);
		json_key(&w, "interrupted"); json_int(&w, c->ninterrupted);
		json_key(&w, "pending"); json_int(&w, c->npending);
		const struct db_elimination *el = elimination_of(d, c->id);
		json_key(&w, "eliminated_after_block");
		if (el)
			json_int(&w, el->after_block);
		else
			json_null(&w);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_key(&w, "failures");
	json_arr_begin(&w);
	for (size_t i = 0; i < d->nproblems; i++) {
		const struct db_run_problem *p = &d->problems[i];
		json_obj_begin(&w);
		json_key(&w, "run_id"); json_int(&w, p->run_id);
		json_key(&w, "key"); json_str(&w, p->key);
		json_key(&w, "repetition"); json_int(&w, p->repetition + 1);
		json_key(&w, "status"); json_str(&w, p->status);
		json_key(&w, "error"); json_str(&w, p->error);
		json_key(&w, "host"); json_str(&w, p->host);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
}

/* Hosts, and for a Slurm sweep its jobs: every attempt that did not give its
 * block's result (all of them with -v). */
static void hosts_text(struct strbuf *out, const struct show_data *d, int verbose)
{
	if (d->nhosts) {
		strbuf_addf(out, "\nHosts (%zu):\n  %-24s %6s %5s %5s %6s\n", d->nhosts, "HOST",
			    "BLOCKS", "RUNS", "OK", "FAILED");
		for (size_t i = 0; i < d->nhosts; i++) {
			const struct db_host_summary *h = &d->hosts[i];
			strbuf_addf(out, "  %-24s %6d %5d %5d %6d\n",
				    h->host ? h->host : "(not recorded)", h->blocks, h->runs, h->ok,
				    h->failed);
		}
	}
	if (!d->distributed)
		return;
	size_t other = 0, dup = 0;
	for (size_t i = 0; i < d->nattempts; i++) {
		const char *o = d->attempts[i].outcome;
		other += !o || strcmp(o, "ingested");
		dup += o && !strcmp(o, "duplicate");
	}
	strbuf_addf(out, "\nSlurm: jobs %s-bK-aN, work directory %s\n  %zu jobs for the "
		    "blocks; %zu did not give their block's result (%zu duplicate%s)\n",
		    d->dist.tag, d->dist.work_dir, d->nattempts, other, dup,
		    dup == 1 ? "" : "s");
	for (size_t i = 0; i < d->nattempts; i++) {
		const struct db_attempt *a = &d->attempts[i];
		bool ingested = a->outcome && !strcmp(a->outcome, "ingested");
		if (ingested && !verbose)
			continue;
		strbuf_addf(out, "  block %d attempt %d: job %s on %s: %s", a->block + 1,
			    a->attempt, a->job_id ? a->job_id : "?", a->node ? a->node : "?",
			    a->state);
		if (a->slurm_state)
			strbuf_addf(out, " (%s)", a->slurm_state);
		if (a->outcome)
			strbuf_addf(out, ", result %s%s%s", a->outcome,
				    a->outcome[0] == 'd' ? " kept in " : "",
				    a->outcome[0] == 'd' ? a->result_file : "");
		if (a->error)
			strbuf_addf(out, ": %s", a->error);
		strbuf_addch(out, '\n');
	}
	const char **bad = xcalloc(d->nattempts + 1, sizeof(*bad));
	size_t nbad = dist_bad_nodes(d, bad);
	if (nbad) {
		strbuf_addf(out, "  excluded from the sweep, their last %ld blocks having failed "
			    "there (executor.exclude_after):", dist_setting_int(d, "exclude_after", 3));
		for (size_t i = 0; i < nbad; i++)
			strbuf_addf(out, "%s %s", i ? "," : "", bad[i]);
		strbuf_addch(out, '\n');
	}
	free(bad);
	size_t *dirty = xcalloc(d->nattempts + 1, sizeof(*dirty));
	size_t ndirty = db_attempts_dirty(d->attempts, d->nattempts, dirty);
	char *node_dir = ndirty ? dist_setting_str(d, "node_dir") : NULL;
	for (size_t i = 0; i < ndirty; i++) {
		const struct db_attempt *a = &d->attempts[dirty[i]];
		strbuf_addf(out, "  node %s may be left with changed host knobs: the worker of "
			    "block %d attempt %d (job %s) was killed (%s) before it restored them; "
			    "the next block there restores them, or on %s: topoadvisor --db "
			    "%s/%s/%s.job-%s.db restore-host\n", a->node, a->block + 1, a->attempt,
			    a->job_id ? a->job_id : "?", a->slurm_state, a->node,
			    node_dir ? node_dir : "NODE_DIR", a->node, a->job_name,
			    a->job_id ? a->job_id : "?");
	}
	free(node_dir);
	free(dirty);
}

static void show_text(struct strbuf *out, const struct show_data *d, const struct cmd_ctx *ctx)
{
	const struct db_experiment *e = &d->exp;
	strbuf_addf(out, "Experiment %lld '%s': %s\n", (long long)e->id, e->name, e->status);
	if (e->error)
		strbuf_addf(out, "  failed     %s\n", e->error);
	strbuf_addf(out, "  created    %s%s%s\n", e->created_at,
		    e->finished_at ? ", finished " : "", e->finished_at ? e->finished_at : "");
	if (e->parent_id)
		strbuf_addf(out, "  rerun of   experiment %lld\n", (long long)e->parent_id);
	strbuf_addf(out, "  config     %s (sha256 %.12s)\n",
		    e->config_path ? e->config_path : "(stored text)", e->config_sha256);
	strbuf_addf(out, "  metric     %s%s\n", e->primary_metric ? e->primary_metric : "?",
		    e->higher_is_better < 0 ? "" : e->higher_is_better
		    ? " (higher is better)" : " (lower is better)");
	strbuf_addf(out, "  seed       %llu\n  tool       topoadvisor %s\n",
		    (unsigned long long)e->seed, e->tool_version);
	strbuf_addf(out, "  runs       %d: %d ok, %d failed, %d interrupted, %d %s\n",
		    e->nruns, e->nok, e->nfailed, e->ninterrupted, e->nplanned + e->nrunning,
		    e->error ? "not run" : "pending");
	/* Runs a failed sweep never reached are not failures of theirs. */
	if (e->error && e->nplanned + e->nrunning) {
		strbuf_addstr(out, "             (the sweep stopped before them; fix the "
			      "cause and '");
		cmd_hint(ctx, "resume", NULL, out);
		strbuf_addf(out, " %lld' runs them)\n", (long long)e->id);
	}
	if (d->raced) {
		strbuf_addstr(out, "  strategy   race: ");
		if (d->race.stop_reason)
			strbuf_addf(out, "stopped after block %d (%s)", d->race.stopped_after,
				    d->race.stop_reason);
		else
			strbuf_addf(out, "%d blocks evaluated, going on", d->race.blocks_evaluated);
		strbuf_addf(out, "; first test after block %d, at most %d blocks; %zu "
			    "eliminated\n", d->race.first_test, d->race.max_blocks, d->nelims);
	}

	strbuf_addf(out, "\nConfigurations (%zu):\n", d->nconfigs);
	strbuf_addf(out, "  %4s  %-48s %4s %6s %11s %7s\n", "ID", "KEY", "OK", "FAILED",
		    "INTERRUPTED", "PENDING");
	for (size_t i = 0; i < d->nconfigs; i++) {
		const struct db_config_summary *c = &d->configs[i];
		const struct db_elimination *el = elimination_of(d, c->id);
		strbuf_addf(out, "  %4lld  %-48s %4d %6d %11d %7d%s", (long long)c->id,
			    c->rec.key, c->nok, c->nfailed, c->ninterrupted, c->npending,
			    c->rec.baseline ? "  [baseline]" : "");
		if (el && el->failing)
			strbuf_addf(out, "  eliminated after block %d (failing, p = %.2g)",
				    el->after_block, el->p);
		else if (el)
			strbuf_addf(out, "  eliminated after block %d (%+.1f %% against %lld, "
				    "p = %.2g)", el->after_block,
				    isfinite(el->ratio) ? (el->ratio - 1) * 100 : NAN,
				    (long long)el->against_id, el->p);
		strbuf_addch(out, '\n');
	}
	hosts_text(out, d, ctx->verbose);
	load_text(out, d, ctx->verbose);
	if (d->ranked) {
		strbuf_addch(out, '\n');
		rank_text_boots(out, &d->rank);
	}
	if (d->nproblems) {
		strbuf_addf(out, "\nFailed or interrupted runs (%zu):\n", d->nproblems);
		for (size_t i = 0; i < d->nproblems; i++) {
			const struct db_run_problem *p = &d->problems[i];
			strbuf_addf(out, "  run %lld  %s  repetition %d%s%s  %s: %s\n",
				    (long long)p->run_id, p->key, p->repetition + 1,
				    p->host ? " on " : "", p->host ? p->host : "", p->status,
				    p->error ? p->error : "(no message)");
		}
	}
}

static int cmd_show_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct show_data d = { 0 };
	int rc = EXIT_OK;
	struct db *db = dbread_open(ctx->db_path, &err);
	if (!db)
		return cmd_fail(&err);
	if (db_experiment_get(db, argv[0], &d.exp, &err) < 0 ||
	    db_config_summaries(db, d.exp.id, &d.configs, &d.nconfigs, &err) < 0 ||
	    db_run_problems(db, d.exp.id, &d.problems, &d.nproblems, &err) < 0 ||
	    db_race_get(db, d.exp.id, &d.race, &d.raced, &err) < 0 ||
	    db_eliminations_list(db, d.exp.id, &d.elims, &d.nelims, &err) < 0 ||
	    db_hosts_list(db, d.exp.id, &d.hosts, &d.nhosts, &err) < 0 ||
	    db_distributed_get(db, d.exp.id, &d.dist, &d.distributed, &err) < 0 ||
	    db_attempts_list(db, d.exp.id, &d.attempts, &d.nattempts, &err) < 0) {
		rc = cmd_fail(&err);
	} else {
		/* The engine's view needs a successful run; without one there is none. */
		struct ta_err quiet = { 0 };
		d.ranked = d.exp.nok > 0 && rank_load(ctx->db_path, argv[0], NULL, &d.res, &d.rank,
						      &quiet) == 0;
		struct strbuf out = STRBUF_INIT;
		if (ctx->json)
			show_json(&out, &d);
		else
			show_text(&out, &d, ctx);
		cmd_print(&out);
		strbuf_release(&out);
	}
	db_close(db);
	db_experiment_release(&d.exp);
	db_config_summaries_free(d.configs, d.nconfigs);
	db_run_problems_free(d.problems, d.nproblems);
	db_race_release(&d.race);
	db_eliminations_free(d.elims, d.nelims);
	if (d.ranked) {
		rank_result_release(&d.rank);
		db_results_release(&d.res);
	}
	db_hosts_free(d.hosts, d.nhosts);
	db_distributed_release(&d.dist);
	db_attempts_free(d.attempts, d.nattempts);
	return rc;
}

const struct cmd_entry cmd_show_entry = {
	.name = "show",
	.summary = "show an experiment: configurations, runs and failures",
	.args_usage = "EXP",
	.options = NULL,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_show_exec,
};
