/*
 * plan: validate a sweep and show what `run` would do — the factors, the
 * configurations, the combinations dropped and why, runs and an estimate —
 * without touching the host.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../experiments/config.h"
#include "../experiments/controller.h"
#include "../experiments/dispatch.h"
#include "../experiments/slurm.h"
#include "../experiments/plan.h"
#include "../experiments/reuse.h"
#include "../schema/db-timing.h"
#include "../util/json.h"
#include "cmd.h"
#include "plan-estimate.h"
#include "race-run.h"
#include "sweep.h"

/* Simulated races behind plan's expected number of runs of a raced sweep. */
#define PLAN_RACE_SIMULATIONS 200

struct race_estimate {
	int first_test;		/* 0: not raced */
	size_t max_runs;
	double expected_runs;
};

static void race_estimate(const struct plan *p, struct race_estimate *est)
{
	est->first_test = sweep_race_first_test(p->cfg);
	if (!est->first_test)
		return;
	est->expected_runs = race_run_expected(p, est->first_test, PLAN_RACE_SIMULATIONS,
					       &est->max_runs);
}

static const char *plan_root;
static const char *plan_executor;

static const struct option plan_options[] = {
	OPT_STRING(0, "root", &plan_root, "DIR",
		   "check host knobs under DIR instead of / (a fake sysfs tree, for tests)"),
	OPT_STRING(0, "executor", &plan_executor, "KIND",
		   "plan for local (this host), slurm or ssh (overrides executor.kind)"),
	OPT_END(),
};

/* Seconds a block's job costs on Slurm beyond its runs: scheduling, the
 * worker's start and end, the controller's poll (measured ~2-4 s here). */
#define PLAN_SLURM_JOB_OVERHEAD_SECONDS 4.0

/* How a Slurm sweep is spread: blocks, jobs at once, and the wall time. */
struct spread {
	bool slurm;
	int hosts;		/* executor.max_hosts, or the nodes that can take a job if fewer */
	int usable;		/* nodes of the partition that can take a job (sinfo) */
	int blocks;		/* the repetitions (a race's maximum) */
	double blocks_expected;	/* a race's expected blocks; else blocks */
	double runs_per_block;
	double block_seconds;	/* one block on one host, job overhead included */
	double seconds;		/* the sweep's wall time with `hosts` hosts */
};

static void spread_estimate(const struct plan *p, double one_host_seconds, size_t max_runs,
			    double expected_runs, int usable, struct spread *s)
{
	const struct sweep_config *cfg = p->cfg;
	*s = (struct spread){ .slurm = true, .hosts = cfg->executor.max_hosts,
			      .usable = usable, .blocks = cfg->repetitions };
	if (usable < s->hosts)
		s->hosts = usable;	/* the hosts that exist, not those allowed */
	s->blocks_expected = s->blocks;
	if (max_runs && expected_runs > 0)
		s->blocks_expected = s->blocks * expected_runs / (double)max_runs;
	s->runs_per_block = (double)p->nruns / s->blocks;
	s->block_seconds = one_host_seconds / s->blocks + PLAN_SLURM_JOB_OVERHEAD_SECONDS;
	/* Blocks go out max_hosts at a time; a race's blocks past its stop are not run. */
	s->seconds = ceil(s->blocks_expected / s->hosts) * s->block_seconds;
}

static void format_duration(char *buf, size_t n, double secs)
{
	long s = (long)(secs + 0.5);
	if (secs < 10)
		snprintf(buf, n, "%.1fs", secs);
	else if (s >= 3600)
		snprintf(buf, n, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
	else if (s >= 60)
		snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(buf, n, "%lds", s);
}

static void plan_factor_lines(struct strbuf *out, const struct sweep_config *cfg)
{
	int width = 8;	/* "topology" */
	for (size_t k = 0; k < cfg->nknobs; k++)
		if ((int)strlen(cfg->knobs[k].name) > width)
			width = (int)strlen(cfg->knobs[k].name);
	strbuf_addf(out, "Factors:\n  %-*s  ", width, "topology");
	const struct topology_spec *t = &cfg->topology;
	if (t->generated) {
		strbuf_addstr(out, "generated: vcpus");
		for (size_t i = 0; i < t->nvcpus; i++)
			strbuf_addf(out, "%s%d", i ? "," : " ", t->vcpus[i]);
		strbuf_addstr(out, ", threads");
		for (size_t i = 0; i < t->nthreads; i++)
			strbuf_addf(out, "%s%d", i ? "," : " ", t->threads[i]);
		if (t->nsockets) {
			strbuf_addstr(out, ", sockets");
			for (size_t i = 0; i < t->nsockets; i++)
				strbuf_addf(out, "%s%d", i ? "," : " ", t->sockets[i]);
		}
	} else {
		for (size_t i = 0; i < t->nshapes; i++) {
			char shape[64];
			shape_format(&t->shapes[i], shape, sizeof(shape));
			strbuf_addf(out, "%s%s", i ? ", " : "", shape);
		}
	}
	strbuf_addf(out, "\n  %-*s  ", width, "pinning");
	for (size_t i = 0; i < cfg->npinnings; i++)
		strbuf_addf(out, "%s%s", i ? ", " : "", cfg->pinnings[i].name);
	for (size_t k = 0; k < cfg->nknobs; k++) {
		strbuf_addf(out, "\n  %-*s  ", width, cfg->knobs[k].name);
		for (size_t i = 0; i < cfg->knobs[k].nvalues; i++)
			strbuf_addf(out, "%s%s", i ? ", " : "", cfg->knobs[k].values[i]);
	}
	strbuf_addf(out, "\n  %-*s  ", width, "noise");
	for (size_t i = 0; i < cfg->nnoises; i++)
		strbuf_addf(out, "%s%s", i ? ", " : "", cfg->noises[i].name);
	strbuf_addch(out, '\n');
}

/* How many guests the sweep boots: one per guest run, or per reuse group with guest.reuse. */
/* The guest runs of a plan and the boots they make (all 0 for a host runner). */
struct plan_boots {
	size_t guest_runs, boots, groups, capacity;
	size_t ahead;		/* boots that start with an earlier one of their block */
};

static void plan_boots_count(const struct plan *p, struct plan_boots *b)
{
	const struct sweep_config *cfg = p->cfg;
	*b = (struct plan_boots){ 0 };
	if (cfg->runner != RUNNER_AGENT)
		return;
	for (size_t i = 0; i < p->nruns; i++)
		b->guest_runs += !p->configs[p->runs[i].config].rec.host_reference;
	b->boots = b->guest_runs;
	if (cfg->reuse_guest && b->guest_runs) {
		b->capacity = reuse_capacity(p, host_mem_available_mib());
		b->boots = reuse_boots(p, b->capacity, &b->ahead);
		b->groups = reuse_groups(p);
	}
}

/* Stored sweeps read for the estimate: the newest of this host, a sample of each. */
#define PLAN_HISTORY_EXPERIMENTS 30
#define PLAN_HISTORY_RUNS 300

/* This host's stored sweeps (in the database of --db), which the estimate learns from. */
static struct db_timing history;
static const char *history_db;	/* the database it was looked for in */

/*
 * Reads the history when the database exists; never creates, migrates or
 * fails the plan: without it the estimate uses the built-in figures.
 */
static void history_load(const char *path)
{
	struct ta_err err = { 0 };
	struct utsname u;
	history_db = path;
	if (access(path, F_OK) < 0 || uname(&u) < 0)
		return;
	struct db *db = db_open_readonly(path, &err);
	if (!db)
		return;
	db_timing_read(db, u.nodename, PLAN_HISTORY_EXPERIMENTS, PLAN_HISTORY_RUNS, &history, &err);
	db_close(db);
}

static void plan_estimate_of(const struct plan *p, const struct plan_boots *b,
			     struct plan_estimate *e)
{
	plan_estimate(p, p->nruns - b->guest_runs, b->boots - b->ahead, b->ahead,
		      b->guest_runs - b->boots, &history, e);
}

/* The sweep's estimated wall time on this host. */
static double plan_duration(const struct plan *p, const struct plan_boots *b)
{
	struct plan_estimate e;
	plan_estimate_of(p, b, &e);
	return e.seconds;
}

/* "\n  per run in a reused guest: +1.10 s (mean of 22 stored runs)" */
static void figure_text(struct strbuf *out, const char *what, const struct plan_figure *f,
			const char *sign, const char *unit)
{
	strbuf_addf(out, "\n  %s: %s%.3g s", what, sign, f->seconds);
	if (f->beyond_boot)
		strbuf_addf(out, " (what %zu stored runs that booted spent beyond their boot)",
			    f->samples);
	else if (f->samples)
		strbuf_addf(out, " (mean of %zu stored %s)", f->samples, unit);
	else
		strbuf_addstr(out, " (built in)");
}

/* The estimate and where each figure came from, one line per kind of run the sweep has. */
static void plan_estimate_text(struct strbuf *out, const struct plan *p,
			       const struct plan_estimate *e)
{
	const struct sweep_config *cfg = p->cfg;
	char dur[32];
	format_duration(dur, sizeof(dur), e->seconds);
	if (e->upper_bound)
		strbuf_addf(out, "\nEstimated duration: at most %s (the benchmark runs to "
			    "completion, bounded by its %d s timeout)", dur, cfg->bench.timeout);
	else
		strbuf_addf(out, "\nEstimated duration: %s", dur);
	if (e->experiments)
		strbuf_addf(out, ", from this host's %zu stored sweep%s in %s (built-in figures "
			    "where they tell nothing):", e->experiments,
			    e->experiments == 1 ? "" : "s", history_db);
	else
		strbuf_addf(out, ", from built-in figures (no finished sweep of this host in %s):",
			    history_db);
	if (e->window_same_benchmark)
		figure_text(out, "per run, its benchmark window", &e->window, "",
			    "runs of this benchmark");
	else if (!e->upper_bound && e->window.samples)
		strbuf_addf(out, "\n  per run, its benchmark window: %.3g s (its %d s duration and "
			    "the mean overrun of %zu stored runs of %s)", e->window.seconds,
			    cfg->bench.duration, e->window.samples, bench_kind_name(cfg->bench.kind));
	else if (!e->upper_bound)
		strbuf_addf(out, "\n  per run, its benchmark window: %d s (its duration)",
			    cfg->bench.duration);
	if (e->boot_runs)
		figure_text(out, "per run that boots its guest", &e->boot, "+", "runs");
	if (e->ahead_runs)
		figure_text(out, "per run whose guest boots with an earlier one of its block",
			    &e->ahead, "+", "runs");
	if (e->reused_runs)
		figure_text(out, "per run in a reused guest", &e->reused, "+", "runs");
	if (e->host_runs)
		figure_text(out, "per run on the host", &e->host, "+", "runs");
	if (e->sweep.samples)
		figure_text(out, "per sweep (start, end, between runs)", &e->sweep, "+", "sweeps");
	strbuf_addch(out, '\n');
}

static void plan_boots_line(struct strbuf *out, const struct plan *p,
			    const struct plan_boots *b)
{
	const struct sweep_config *cfg = p->cfg;
	size_t guest_runs = b->guest_runs;
	if (!guest_runs)
		return;
	if (!cfg->reuse_guest) {
		strbuf_addf(out, "\nGuest boots: %zu (one per guest run; guest.reuse: true boots "
			    "one per shape and pinning)", guest_runs);
		return;
	}
	size_t cap = b->capacity, boots = b->boots, groups = b->groups;
	strbuf_addf(out, "\nGuest boots: %zu for %zu guest runs if none fails (guest.reuse: "
		    "%zu group%s by %s, each boot serving at most %d block%s, up to %zu guests "
		    "kept, idle ones suspended", boots, guest_runs, groups, groups == 1 ? "" : "s",
		    p->live_pin ? "shape (each run's pinning applied live)" : "shape and pinning",
		    p->cfg->reuse_runs, p->cfg->reuse_runs == 1 ? "" : "s", cap);
	if (boots > groups)
		strbuf_addstr(out, "; more boots than groups because each serves guest.reuse_runs "
			      "blocks, host knobs that need no guests change, or memory keeps "
			      "fewer guests than groups");
	strbuf_addch(out, ')');
}

static void plan_text(struct strbuf *out, const struct plan *p, const struct spread *sp,
		      int verbose)
{
	const struct sweep_config *cfg = p->cfg;
	strbuf_addf(out, "Sweep '%s' (%s): %s, metric %s (%s)\n", cfg->name,
		    cfg->path, bench_kind_name(cfg->bench.kind), cfg->bench.metric.name,
		    !cfg->bench.metric.direction_given ? "the direction its parser declares"
		    : cfg->bench.metric.higher_is_better ? "higher is better" : "lower is better");
	if (p->cross_host)
		strbuf_addf(out, "Planning for a %s host from another architecture: checks "
			    "against this host's CPUs are skipped; run 'topoadvisor plan' on "
			    "the target host before 'run'.\n", config_arch_name(cfg->arch));
	plan_factor_lines(out, cfg);

	strbuf_addf(out, "\nConfigurations (%zu):\n", p->nconfigs);
	for (size_t i = 0; i < p->nconfigs; i++)
		strbuf_addf(out, "  %3zu  %s%s%s\n", i + 1, p->configs[i].rec.key,
			    p->configs[i].rec.baseline ? "  [baseline]" : "",
			    p->configs[i].rec.host_reference ? "  [host reference: no guest]" : "");
	if (p->ndropped) {
		strbuf_addf(out, "\nDropped combinations (%zu):\n", p->ndropped);
		for (size_t i = 0; i < p->ndropped; i++)
			strbuf_addf(out, "  %s: %s\n", p->dropped[i].what, p->dropped[i].reason);
	}

	struct plan_boots b;
	plan_boots_count(p, &b);
	strbuf_addf(out, "\n%zu configurations x %d repetitions = %zu runs, %s order",
		    p->nconfigs, cfg->repetitions, p->nruns,
		    cfg->order == ORDER_RANDOMIZED ? "randomized" : "sequential");
	if (cfg->order == ORDER_RANDOMIZED)
		strbuf_addstr(out, cfg->seed_given ? "" : " (seed chosen at run time)");
	plan_boots_line(out, p, &b);
	struct race_estimate est;
	race_estimate(p, &est);
	if (est.first_test && isnan(est.expected_runs))
		strbuf_addf(out, "\nrace: at most %zu runs; how many fewer is unknown (first test "
			    "after block %d: the race could not be simulated)", est.max_runs,
			    est.first_test);
	else if (est.first_test)
		strbuf_addf(out, "\nrace: at most %zu runs, about %.0f expected (first test after "
			    "block %d; simulated with 5 %% run-to-run spread and true differences "
			    "of 0-10 %%)", est.max_runs, est.expected_runs, est.first_test);
	struct plan_estimate e;
	plan_estimate_of(p, &b, &e);
	plan_estimate_text(out, p, &e);
	if (sp->slurm) {
		char wall[32];
		format_duration(wall, sizeof(wall), sp->seconds);
		strbuf_addf(out, "On Slurm: %d blocks (one job each, %.0f runs, ~%.0f s with the "
			    "job's start), at most %d at once (executor.max_hosts %d, %d node%s "
			    "can take a job): about %s with %d hosts%s; host knobs are checked on "
			    "the nodes\n", sp->blocks, sp->runs_per_block, sp->block_seconds,
			    sp->hosts, p->cfg->executor.max_hosts, sp->usable,
			    sp->usable == 1 ? "" : "s", wall, sp->hosts,
			    sp->blocks_expected < sp->blocks ? ", for the race's expected blocks"
			    : "");
	}
	if (verbose && (cfg->order == ORDER_SEQUENTIAL || cfg->seed_given)) {
		strbuf_addstr(out, "\nRun order:\n");
		for (size_t i = 0; i < p->nruns; i++)
			strbuf_addf(out, "  %4zu  %s  (repetition %d)\n", i + 1,
				    p->configs[p->runs[i].config].rec.key, p->runs[i].repetition + 1);
	}
}

static void plan_json(struct strbuf *out, const struct plan *p, const struct spread *sp)
{
	const struct sweep_config *cfg = p->cfg;
	struct json_writer w;
	json_init(&w, out, true);
	json_obj_begin(&w);
	json_key(&w, "name"); json_str(&w, cfg->name);
	json_key(&w, "benchmark"); json_str(&w, bench_kind_name(cfg->bench.kind));
	json_key(&w, "metric"); json_str(&w, cfg->bench.metric.name);
	json_key(&w, "higher_is_better");
	if (cfg->bench.metric.direction_given)
		json_bool(&w, cfg->bench.metric.higher_is_better);
	else
		json_null(&w);
	json_key(&w, "cross_host"); json_bool(&w, p->cross_host);
	json_key(&w, "configurations");
	json_arr_begin(&w);
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct plan_config *c = &p->configs[i];
		json_obj_begin(&w);
		json_key(&w, "key"); json_str(&w, c->rec.key);
		json_key(&w, "decision"); json_str(&w, c->rec.decision);
		json_key(&w, "environment"); json_str(&w, c->rec.environment);
		config_record_json(&w, &c->rec);
		json_key(&w, "baseline"); json_bool(&w, c->rec.baseline);
		json_key(&w, "host_reference"); json_bool(&w, c->rec.host_reference);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_key(&w, "repetitions"); json_int(&w, cfg->repetitions);
	json_key(&w, "runs"); json_uint(&w, p->nruns);
	struct race_estimate est;
	race_estimate(p, &est);
	json_key(&w, "strategy"); json_str(&w, est.first_test ? "race" : "full");
	if (est.first_test) {
		json_key(&w, "race");
		json_obj_begin(&w);
		json_key(&w, "first_test"); json_int(&w, est.first_test);
		json_key(&w, "max_runs"); json_uint(&w, est.max_runs);
		json_key(&w, "expected_runs"); json_double(&w, est.expected_runs);
		json_obj_end(&w);
	}
	struct plan_boots b;
	plan_boots_count(p, &b);
	json_key(&w, "guest_boots"); json_uint(&w, b.boots);
	json_key(&w, "live_pin"); json_bool(&w, p->live_pin);
	json_key(&w, "order");
	json_str(&w, cfg->order == ORDER_RANDOMIZED ? "randomized" : "sequential");
	json_key(&w, "seed");
	if (cfg->seed_given)
		json_uint(&w, cfg->seed);
	else
		json_null(&w);
	json_key(&w, "dropped");
	json_arr_begin(&w);
	for (size_t i = 0; i < p->ndropped; i++) {
		json_obj_begin(&w);
		json_key(&w, "what"); json_str(&w, p->dropped[i].what);
		json_key(&w, "reason"); json_str(&w, p->dropped[i].reason);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	struct plan_estimate e;
	plan_estimate_of(p, &b, &e);
	json_key(&w, "estimated_seconds"); json_double(&w, e.seconds);
	json_key(&w, "estimate_is_upper_bound"); json_bool(&w, e.upper_bound);
	json_key(&w, "estimate");
	json_obj_begin(&w);
	json_key(&w, "database"); json_str(&w, e.experiments ? history_db : NULL);
	json_key(&w, "experiments"); json_uint(&w, e.experiments);
	const struct { const char *name; const struct plan_figure *f; size_t runs; } figs[] = {
		{ "window", &e.window, p->nruns }, { "boot_run", &e.boot, e.boot_runs },
		{ "ahead_run", &e.ahead, e.ahead_runs },
		{ "reused_run", &e.reused, e.reused_runs }, { "host_run", &e.host, e.host_runs },
		{ "sweep", &e.sweep, 1 },
	};
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		json_key(&w, figs[i].name);
		json_obj_begin(&w);
		json_key(&w, "seconds"); json_double(&w, figs[i].f->seconds);
		json_key(&w, "samples"); json_uint(&w, figs[i].f->samples);
		json_key(&w, "count"); json_uint(&w, figs[i].runs);
		json_obj_end(&w);
	}
	json_key(&w, "window_same_benchmark"); json_bool(&w, e.window_same_benchmark);
	json_obj_end(&w);
	json_key(&w, "executor");
	json_obj_begin(&w);
	json_key(&w, "kind"); json_str(&w, sp->slurm ? "slurm" : "local");
	if (sp->slurm) {
		json_key(&w, "max_hosts"); json_int(&w, p->cfg->executor.max_hosts);
		json_key(&w, "hosts"); json_int(&w, sp->hosts);
		json_key(&w, "usable_nodes"); json_int(&w, sp->usable);
		json_key(&w, "blocks"); json_int(&w, sp->blocks);
		json_key(&w, "expected_blocks"); json_double(&w, sp->blocks_expected);
		json_key(&w, "block_seconds"); json_double(&w, sp->block_seconds);
		json_key(&w, "estimated_seconds"); json_double(&w, sp->seconds);
	}
	json_obj_end(&w);
	json_obj_end(&w);
}

static int cmd_plan_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_load(argv[0], &err);
	if (!cfg)
		return cmd_fail(&err);
	struct host_facts host;
	host_facts_read(&host);
	enum executor_kind kind = cfg->executor.kind;
	if (plan_executor && config_executor_from_name(plan_executor, &kind) < 0) {
		err_set(&err, EXIT_BAD_INPUT, "--executor %s: expected local, slurm or ssh",
			plan_executor);
		config_free(cfg);
		return cmd_fail(&err);
	}
	struct plan *p = plan_expand(cfg, &host, cfg->seed_given ? cfg->seed : 0, &err);
	struct controller_opts copts = { .sysfs_root = plan_root };
	/* A Slurm sweep's host knobs are the nodes', checked there. */
	if (p && !p->cross_host && kind == EXECUTOR_LOCAL &&
	    controller_check_host(p, &copts, false, &err) < 0) {
		plan_free(p);
		p = NULL;
	}
	if (!p) {
		config_free(cfg);
		return cmd_fail(&err);
	}
	controller_guests_describe(p);
	history_load(ctx->db_path);
	struct spread sp = { 0 };
	if (kind == EXECUTOR_SLURM) {
		/* What waiting will not mend (no sbatch, no such partition, no node
		 * that can take a job) is refused here as `run` would. */
		struct slurm_node *nodes;
		size_t nn;
		int usable;
		int hrc = dispatch_hosts(&cfg->executor, &nodes, &nn, &usable, &err);
		slurm_nodes_free(nodes, nn);
		if (hrc < 0) {
			plan_free(p);
			config_free(cfg);
			return cmd_fail(&err);
		}
		struct plan_boots b;
		struct race_estimate est;
		plan_boots_count(p, &b);
		race_estimate(p, &est);
		spread_estimate(p, plan_duration(p, &b), est.first_test ? est.max_runs : 0,
				est.expected_runs, usable, &sp);
	}
	struct strbuf out = STRBUF_INIT;
	if (ctx->json)
		plan_json(&out, p, &sp);
	else
		plan_text(&out, p, &sp, ctx->verbose);
	cmd_print(&out);
	strbuf_release(&out);
	db_timing_release(&history);
	history_db = NULL;
	plan_free(p);
	config_free(cfg);
	return EXIT_OK;
}

const struct cmd_entry cmd_plan_entry = {
	.name = "plan",
	.summary = "validate and expand a sweep: configurations, dropped combinations, boots, estimate",
	.args_usage = "CONFIG",
	.options = plan_options,
	.min_args = 1,
	.max_args = 1,
	.exec = cmd_plan_exec,
};
