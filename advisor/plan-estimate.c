/* plan-estimate: a sweep's wall time from this host's stored sweeps; see plan-estimate.h. */
#include "plan-estimate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decide/stats.h"

/* A growing list of samples of one figure. */
struct samples {
	double *v;
	size_t n;
};

static void samples_add(struct samples *s, double x)
{
	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n++] = x;
}

/* The mean of s (a sweep takes the sum of its runs) with at least min samples, else the built-in figure. */
static struct plan_figure figure(struct samples *s, size_t min, double builtin)
{
	struct plan_figure f = { builtin, 0, false };
	if (s->n >= min)
		f = (struct plan_figure){ stats_mean(s->v, s->n), s->n, false };
	free(s->v);
	*s = (struct samples){ 0 };
	return f;
}

static bool argv_equal(const struct argv_list *a, const struct argv_list *b)
{
	if (a->argc != b->argc)
		return false;
	for (size_t i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], b->argv[i]))
			return false;
	return true;
}

/* Whether stored sweep s ran the same benchmark the same way as cfg will. */
static bool same_benchmark(const struct sweep_config *s, const struct sweep_config *cfg)
{
	return s->bench.kind == cfg->bench.kind && argv_equal(&s->bench.argv, &cfg->bench.argv) &&
	       s->bench.duration == cfg->bench.duration && s->runner == cfg->runner &&
	       s->arch == cfg->arch && s->domain_type == cfg->domain_type;
}

enum { KIND_HOST, KIND_BOOT, KIND_AHEAD, KIND_REUSED, NKINDS };

/* Clock steps between the mono clock of boot_seconds and the stored timestamps. */
#define BOOT_INSIDE_SLACK_S 0.05

struct learned {
	struct samples overhead[NKINDS];
	struct samples after_boot;	/* booting runs' overhead beyond their boot */
	struct samples same_window;	/* windows of runs of the same benchmark */
	struct samples excess;		/* window minus the configured duration */
	struct samples sweep;		/* wall minus runs, sweeps of the plan's runner */
	size_t experiments;
};

/* What one stored experiment teaches about a sweep of cfg. */
static void learn_experiment(const struct db_timing_experiment *e,
			     const struct sweep_config *cfg, struct learned *l)
{
	struct ta_err err = { 0 };
	char path[48];
	snprintf(path, sizeof(path), "experiment %lld", (long long)e->id);
	/* A sweep stored by an older version may no longer parse: its runs still count. */
	struct sweep_config *s = e->config_yaml
		? config_parse(path, e->config_yaml, strlen(e->config_yaml), &err) : NULL;
	bool same = s && same_benchmark(s, cfg);
	/*
	 * How far windows run past the configured duration (agent start, exit
	 * seen, output fetched) says something only for a benchmark of the
	 * same kind: a command's duration is a declaration, not its length.
	 */
	bool excess = s && s->bench.duration > 0 && s->bench.kind == cfg->bench.kind &&
		      (cfg->bench.kind != BENCH_COMMAND || argv_equal(&s->bench.argv, &cfg->bench.argv));
	bool plan_host = cfg->runner == RUNNER_HOST;
	double span = 0;
	size_t host = 0;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct db_timing_run *r = &e->runs[i];
		double over = r->span - r->window;
		int kind = r->host ? KIND_HOST : !r->booted ? KIND_REUSED
			 : over + BOOT_INSIDE_SLACK_S >= r->boot_seconds ? KIND_BOOT : KIND_AHEAD;
		samples_add(&l->overhead[kind], over > 0 ? over : 0);
		if (kind == KIND_BOOT)
			samples_add(&l->after_boot, over > r->boot_seconds ? over - r->boot_seconds : 0);
		span += r->span;
		host += r->host;
		if (r->host != plan_host)
			continue;
		if (same)
			samples_add(&l->same_window, r->window);
		if (excess)
			samples_add(&l->excess, r->window - s->bench.duration);
	}
	/* The ok runs not sampled took about as long as those sampled; failed
	 * runs took what they took, and teach nothing (a boot timing out). */
	if (e->nruns >= PLAN_ESTIMATE_MIN_SAMPLES && (2 * host > e->nruns) == plan_host) {
		double rest = e->wall - e->failed_span -
			      (double)(e->nran - e->nfailed) * span / (double)e->nruns;
		samples_add(&l->sweep, rest > 0 ? rest : 0);
	}
	l->experiments++;
	config_free(s);
}

void plan_estimate(const struct plan *p, size_t host_runs, size_t boot_runs, size_t ahead_runs,
		   size_t reused_runs, const struct db_timing *history,
		   struct plan_estimate *out)
{
	const struct sweep_config *cfg = p->cfg;
	struct learned l = { 0 };
	for (size_t i = 0; history && i < history->n; i++)
		learn_experiment(&history->v[i], cfg, &l);

	memset(out, 0, sizeof(*out));
	out->experiments = l.experiments;
	out->host_runs = host_runs;
	out->boot_runs = boot_runs;
	out->ahead_runs = ahead_runs;
	out->reused_runs = reused_runs;
	size_t min = PLAN_ESTIMATE_MIN_SAMPLES;
	out->host = figure(&l.overhead[KIND_HOST], min, PLAN_HOST_RUN_OVERHEAD_SECONDS);
	out->boot = figure(&l.overhead[KIND_BOOT], min, PLAN_BOOT_RUN_OVERHEAD_SECONDS);
	/* Without runs of their own kind: what booting runs did besides booting. */
	struct plan_figure beyond = figure(&l.after_boot, min, PLAN_REUSED_RUN_OVERHEAD_SECONDS);
	beyond.beyond_boot = beyond.samples > 0;
	out->ahead = figure(&l.overhead[KIND_AHEAD], min, 0);
	if (!out->ahead.samples)
		out->ahead = beyond;
	out->reused = figure(&l.overhead[KIND_REUSED], min, 0);
	if (!out->reused.samples)
		out->reused = beyond;
	out->sweep = figure(&l.sweep, 1, 0);	/* one sweep already sums many runs */
	struct plan_figure excess = figure(&l.excess, min, 0);
	out->window = figure(&l.same_window, min, 0);
	out->window_same_benchmark = out->window.samples > 0;
	if (!out->window_same_benchmark) {
		if (cfg->bench.duration > 0) {
			out->window = excess;
			out->window.seconds += cfg->bench.duration;
		} else {
			out->window = (struct plan_figure){ cfg->bench.timeout, 0, false };
			out->upper_bound = true;
		}
	}
	out->seconds = out->sweep.seconds + (double)p->nruns * out->window.seconds +
		       (double)host_runs * out->host.seconds + (double)boot_runs * out->boot.seconds +
		       (double)ahead_runs * out->ahead.seconds +
		       (double)reused_runs * out->reused.seconds;
}
