/*
 * sim: simulated sweeps of known truth for the advisor benchmarks
 * (the drivers in tests/bench/, run by `make bench-advisor`).  A sweep is built in
 * memory as the db_results structs the database reader fills, so the real
 * rank_compute (ranking, verdicts, recommendation) runs on it unchanged and
 * fast: no database, no copy of the decision code.
 *
 * Usage: sim_init(&s, nconfigs, max_runs) once, sim_config() for each
 * configuration (its true mean, CV and vCPUs), then per sweep sim_draw()
 * (normal runs, seeded) and rank_compute(&s.res, NULL, ...).  Every value
 * comes from the stats_rng seeded by the caller, so a rate is reproducible.
 */
#ifndef TA_BENCH_SIM_H
#define TA_BENCH_SIM_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/rank.h"
#include "advisor/stats.h"
#include "schema/db-results.h"

#define SIM_METRIC "throughput"

struct sim_truth {
	double mean, cv;
};

struct sim {
	struct db_results res;
	struct sim_truth *truth;
	struct db_results_run *runs;		/* nconfigs x max_runs */
	struct db_results_metric *metrics;	/* one per run */
	char (*keys)[32];
	size_t max_runs;
};

/* Seeded N(0, 1) by Box-Muller. */
static inline double sim_normal(struct stats_rng *rng)
{
	double u1 = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static inline void sim_init(struct sim *s, size_t nconfigs, size_t max_runs)
{
	memset(s, 0, sizeof(*s));
	s->max_runs = max_runs;
	s->truth = calloc(nconfigs, sizeof(*s->truth));
	s->res.configs = calloc(nconfigs, sizeof(*s->res.configs));
	s->res.nconfigs = nconfigs;
	s->runs = calloc(nconfigs * max_runs, sizeof(*s->runs));
	s->metrics = calloc(nconfigs * max_runs, sizeof(*s->metrics));
	s->keys = calloc(nconfigs, sizeof(*s->keys));
	if (!s->truth || !s->res.configs || !s->runs || !s->metrics || !s->keys) {
		fprintf(stderr, "sim: out of memory\n");
		abort();
	}
	struct db_experiment *x = &s->res.exp;
	x->id = 1;
	x->name = (char *)"simulated";
	x->status = (char *)"done";
	x->seed = 1;
	x->primary_metric = (char *)SIM_METRIC;
	x->higher_is_better = 1;
	x->nconfigs = (int)nconfigs;
}

/* Configuration i: a `vcpus` x 1 x 1 shape (host CPUs = vcpus) of the given truth. */
static inline void sim_config(struct sim *s, size_t i, int vcpus, double mean, double cv,
			      bool baseline)
{
	struct db_results_config *c = &s->res.configs[i];
	snprintf(s->keys[i], sizeof(s->keys[i]), "c%zu/%dvcpu", i, vcpus);
	*c = (struct db_results_config){
		.id = (int64_t)i + 1, .rec.index = (int)i, .rec.key = s->keys[i], .rec.vcpus = vcpus,
		.rec.sockets = 1, .rec.dies = 1, .rec.cores = vcpus, .rec.threads = 1,
		.rec.pinning = (char *)"none", .rec.noise = (char *)"none",
		.rec.decision = s->keys[i], .rec.environment = (char *)"noise=none",
		.rec.pinning_policy = (char *)"none", .rec.baseline = baseline,
		.runs = &s->runs[i * s->max_runs],
	};
	s->truth[i] = (struct sim_truth){ mean, cv };
}

/* Draws n successful runs of every configuration: mean (1 + cv Z), Z normal. */
static inline void sim_draw(struct sim *s, size_t n, struct stats_rng *rng)
{
	int total = 0;
	for (size_t i = 0; i < s->res.nconfigs; i++) {
		struct db_results_config *c = &s->res.configs[i];
		c->nruns = n;
		for (size_t j = 0; j < n; j++) {
			struct db_results_metric *m = &s->metrics[i * s->max_runs + j];
			*m = (struct db_results_metric){
				.name = (char *)SIM_METRIC, .unit = (char *)"ops/s",
				.higher_is_better = 1, .dir = METRIC_DIR_HIGHER,
				.value = s->truth[i].mean * (1 + s->truth[i].cv * sim_normal(rng)),
			};
			c->runs[j] = (struct db_results_run){
				.id = total + 1, .repetition = (int)j, .order_index = total,
				.status = (char *)"ok", .topology_ok = 1, .metrics = m, .nmetrics = 1,
			};
			total++;
		}
	}
	s->res.exp.nruns = s->res.exp.nok = total;
}

static inline void sim_free(struct sim *s)
{
	free(s->truth);
	free(s->res.configs);
	free(s->runs);
	free(s->metrics);
	free(s->keys);
}

/* One line of a benchmark's table; returns whether the target is met. */
static inline bool sim_report(const char *what, double rate, const char *op, double target)
{
	bool ok = !strcmp(op, "<=") ? rate <= target : rate >= target;
	printf("  %-66s %7.2f %%   target %s %5.1f %%   %s\n", what, 100 * rate, op, 100 * target,
	       ok ? "ok" : "MISSED");
	return ok;
}

#endif
