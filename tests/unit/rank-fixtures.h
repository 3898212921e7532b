/*
 * rank-fixtures: builds experiment databases for the advisor tests through
 * db_open and the prepared inserts of schema/db-results (no hand-written
 * SQL), one scenario per function.  Included by tests/unit/test-rank.c,
 * which also writes them to files for the integration tests
 * (test-rank --write-fixture NAME DB).
 *
 * Values are deterministic: a configuration's runs are mean + sd * OFFSETS,
 * whose mean is 0 for 2, 3 or 5 runs and whose sample standard deviation is
 * exactly 1 for five, so a fixture states its mean and sd exactly; the
 * redis scenarios add seeded noise.
 */
#ifndef TA_RANK_FIXTURES_H
#define TA_RANK_FIXTURES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/stats.h"
#include "schema/db-results.h"
#include "util/strbuf.h"

static const double fx_offsets[] = { -0.6324555320336759, 0.6324555320336759, 0,
				     -1.2649110640673518, 1.2649110640673518 };

struct fx_config {
	const char *key;
	int sockets, cores, threads;
	const char *pinning;		/* NULL: none */
	const char *factors;		/* NULL: built from the fields */
	bool baseline;
	int subcores;			/* 0: not set */
	const char *dmt;		/* kvm_hv.dynamic_mt_modes, NULL: not set */
	double mean, sd;
	int runs;			/* successful runs, 0: 5 */
	int failed;			/* failed runs after them */
	bool has_gang;			/* false: no ganged-exit data */
	double gang_per_s;
	int64_t lost_events;		/* on repetition 0 */
	int topology_bad;		/* 1 + repetition with topology_ok = 0, 0: none */
};

/* Seconds of the synthetic benchmark window (gang_exits = per_s * window). */
#define FX_WINDOW_S 40.0

static void fx_check(int rc, const struct ta_err *err)
{
	if (rc < 0) {
		fprintf(stderr, "fixture: %s\n", err->msg);
		abort();
	}
}

static int64_t fx_experiment(struct db *db, const char *name, const char *metric, int hib,
			     const char *yaml)
{
	struct ta_err err = { 0 };
	struct db_experiment_new e = {
		.name = name, .config_yaml = yaml, .config_len = strlen(yaml),
		.config_path = "fixture.yaml", .seed = 20261129, .primary_metric = metric,
		.higher_is_better = hib,
	};
	int64_t id;
	fx_check(db_experiment_insert(db, &e, &id, &err), &err);
	return id;
}

static int64_t fx_config_add(struct db *db, int64_t exp, int idx, const struct fx_config *c)
{
	struct ta_err err = { 0 };
	struct strbuf factors = STRBUF_INIT;
	if (c->factors) {
		strbuf_addstr(&factors, c->factors);
	} else {
		strbuf_addf(&factors, "{\"topology\":\"%dx%dx%d\",\"pinning\":\"%s\","
			    "\"noise\":\"none\"", c->sockets, c->cores, c->threads,
			    c->pinning ? c->pinning : "none");
		if (c->subcores > 0)
			strbuf_addf(&factors, ",\"subcores_per_core\":%d", c->subcores);
		if (c->dmt)
			strbuf_addf(&factors, ",\"kvm_hv.dynamic_mt_modes\":%s", c->dmt);
		strbuf_addch(&factors, '}');
	}
	/* The typed knob columns, as the plan store fills them. */
	const char *knob_names[2], *knob_values[2];
	char subcores[16];
	size_t nknobs = 0;
	if (c->subcores > 0) {
		snprintf(subcores, sizeof(subcores), "%d", c->subcores);
		knob_names[nknobs] = "subcores_per_core";
		knob_values[nknobs++] = subcores;
	}
	if (c->dmt) {
		knob_names[nknobs] = "kvm_hv.dynamic_mt_modes";
		knob_values[nknobs++] = c->dmt;
	}
	struct db_plan_config fc = {
		.idx = (size_t)idx, .key = c->key, .vcpus = c->sockets * c->cores * c->threads,
		.sockets = c->sockets, .dies = 1, .cores = c->cores, .threads = c->threads,
		.pinning = c->pinning, .knob_names = knob_names, .knob_values = knob_values,
		.nknobs = nknobs, .factors_json = strbuf_str(&factors), .is_baseline = c->baseline,
	};
	int64_t id;
	fx_check(db_fixture_config_add(db, exp, &fc, &id, &err), &err);
	strbuf_release(&factors);
	return id;
}

static int64_t fx_run_add(struct db *db, int64_t cid, int rep, int order, const char *status,
			  const char *error, int topology_ok, int64_t lost)
{
	struct ta_err err = { 0 };
	struct db_fixture_run r = { rep, order, status, error, topology_ok, lost };
	int64_t id;
	fx_check(db_fixture_run_add(db, cid, &r, &id, &err), &err);
	return id;
}

static void fx_metric(struct db *db, int64_t run, const char *name, double v, const char *unit,
		      int hib)
{
	struct ta_err err = { 0 };
	fx_check(db_fixture_metric_add(db, run, name, v, unit, hib, &err), &err);
}

static void fx_gang(struct db *db, int64_t run, double per_s)
{
	fx_metric(db, run, "gang_exits", per_s * FX_WINDOW_S, "exits", 0);
	fx_metric(db, run, "gang_exits_per_s", per_s, "exits/s", 0);
}

/* A single-metric configuration with its runs. */
static void fx_add(struct db *db, int64_t exp, int idx, const struct fx_config *c,
		   const char *metric, const char *unit, int hib)
{
	struct ta_err err = { 0 };
	int64_t cid = fx_config_add(db, exp, idx, c);
	int rep = 0, runs = c->runs ? c->runs : 5;
	for (; rep < runs; rep++) {
		int64_t run = fx_run_add(db, cid, rep, rep * 10 + idx, "ok", NULL,
					 rep + 1 == c->topology_bad ? 0 : 1,
					 rep == 0 ? c->lost_events : 0);
		fx_metric(db, run, metric, c->mean + c->sd * fx_offsets[rep % 5], unit, hib);
		if (c->has_gang) {
			fx_gang(db, run, c->gang_per_s);
			fx_check(db_fixture_exit_add(db, run, "kvm_hv", -1, "H_DOORBELL",
						     (int64_t)(c->gang_per_s * 30), &err), &err);
			fx_check(db_fixture_exit_add(db, run, "kvm_hv", 0, "EXTERNAL", 700, &err),
				 &err);
			fx_check(db_fixture_exit_add(db, run, "kvm_hv", 1, "EXTERNAL", 500, &err),
				 &err);
		}
	}
	for (int f = 0; f < c->failed; f++, rep++)
		fx_run_add(db, cid, rep, rep * 10 + idx, "failed",
			   "benchmark timed out after 600 s", -1, -1);
}

static const char fx_yaml[] =
	"name: fixture\nbenchmark:\n  kind: ebizzy\n  metric: {name: records_per_s}\n"
	"topology:\n  - 2x1x1\n  - 1x2x1\n  - 1x1x2\nrepetitions: 5\n"
	"description: \"<b>not bold</b> & escaped\"\n";

/* 2x1x1 (host default shape, not marked) 100; 1x2x1 150 (winner); 1x1x2 120. */
static int64_t fixture_clear_winner(struct db *db)
{
	int64_t e = fx_experiment(db, "clear-winner", "records_per_s", 1, fx_yaml);
	struct fx_config c[] = {
		{ .key = "2x1x1", .sockets = 2, .cores = 1, .threads = 1,
		  .mean = 100, .sd = 1, .has_gang = true, .gang_per_s = 900 },
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1,
		  .mean = 150, .sd = 1.5, .has_gang = true, .gang_per_s = 100 },
		{ .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2,
		  .mean = 120, .sd = 1.2, .has_gang = true, .gang_per_s = 400 },
	};
	for (int i = 0; i < 3; i++)
		fx_add(db, e, i, &c[i], "records_per_s", "records/s", 1);
	return e;
}

/* Three shapes with identical run values: all tied, nothing beats the marked baseline. */
static int64_t fixture_all_tied(struct db *db)
{
	int64_t e = fx_experiment(db, "all-tied", "records_per_s", 1, fx_yaml);
	struct fx_config c[] = {
		{ .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2,
		  .mean = 100, .sd = 2, .baseline = true },
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1,
		  .mean = 100, .sd = 2 },
		{ .key = "2x1x1", .sockets = 2, .cores = 1, .threads = 1,
		  .mean = 100, .sd = 2 },
	};
	for (int i = 0; i < 3; i++)
		fx_add(db, e, i, &c[i], "records_per_s", "records/s", 1);
	return e;
}

/* Means 100 vs 115 with sd 20: a 15 % "win" that is only noise. */
static int64_t fixture_high_variance(struct db *db)
{
	int64_t e = fx_experiment(db, "high-variance", "records_per_s", 1, fx_yaml);
	struct fx_config c[] = {
		{ .key = "2x1x1", .sockets = 2, .cores = 1, .threads = 1,
		  .mean = 100, .sd = 20, .baseline = true },
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1,
		  .mean = 115, .sd = 20 },
	};
	for (int i = 0; i < 2; i++)
		fx_add(db, e, i, &c[i], "records_per_s", "records/s", 1);
	return e;
}

/*
 * Lower is better (seconds).  1x2x1: 3 ok + 2 failed runs, one with lost
 * events and one topology mismatch; 1x1x2: 2 ok runs only; 2x1x1: baseline.
 */
static int64_t fixture_failed_runs(struct db *db)
{
	int64_t e = fx_experiment(db, "failed-runs", "seconds", 0, fx_yaml);
	struct fx_config c[] = {
		{ .key = "2x1x1", .sockets = 2, .cores = 1, .threads = 1,
		  .mean = 200, .sd = 2, .baseline = true },
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1,
		  .mean = 160, .sd = 1, .runs = 3, .failed = 2, .lost_events = 1234,
		  .topology_bad = 2 },
		{ .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2,
		  .mean = 150, .sd = 1, .runs = 2 },
	};
	for (int i = 0; i < 3; i++)
		fx_add(db, e, i, &c[i], "seconds", "s", 0);
	return e;
}

/*
 * A tie between three shapes 1 apart in 150 (sd 3): all tied with the best,
 * all better than the baseline.  dmt0 has the best mean but a non-default
 * knob; many has more ganged exits; plain wins (same exits, no knob).  With
 * `pin_fewer_cpus`, `pinned` (8 vCPUs on 4 explicit host CPUs) joins and
 * wins on host CPUs.
 */
static int64_t fixture_tie_break(struct db *db, bool pin_fewer_cpus)
{
	int64_t e = fx_experiment(db, pin_fewer_cpus ? "tie-break-cpus" : "tie-break",
				  "records_per_s", 1, fx_yaml);
	struct fx_config c[] = {
		{ .key = "8x1x1/base", .sockets = 8, .cores = 1, .threads = 1,
		  .mean = 100, .sd = 2, .baseline = true, .has_gang = true, .gang_per_s = 500 },
		{ .key = "1x4x2/dmt0", .sockets = 1, .cores = 4, .threads = 2,
		  .mean = 151, .sd = 3, .dmt = "0", .has_gang = true, .gang_per_s = 200 },
		{ .key = "1x4x2/many", .sockets = 1, .cores = 4, .threads = 2,
		  .mean = 150.5, .sd = 3, .has_gang = true, .gang_per_s = 900 },
		{ .key = "1x4x2/plain", .sockets = 1, .cores = 4, .threads = 2,
		  .mean = 150, .sd = 3, .dmt = "6", .has_gang = true, .gang_per_s = 200 },
		{ .key = "1x4x2/pinned", .sockets = 1, .cores = 4, .threads = 2,
		  .mean = 149.5, .sd = 3, .pinning = "pairs", .has_gang = true, .gang_per_s = 200,
		  .factors = "{\"topology\":\"1x4x2\",\"pinning\":\"pairs\",\"noise\":\"none\","
			     "\"pinning_cpus\":[\"0\",\"0\",\"1\",\"1\",\"2-3\",\"2-3\",\"3\",\"3\"]}" },
	};
	for (int i = 0; i < (pin_fewer_cpus ? 5 : 4); i++)
		fx_add(db, e, i, &c[i], "records_per_s", "records/s", 1);
	return e;
}

static const char *const redis_tests[] = {
	"SET", "GET", "INCR", "LPUSH", "LPOP", "SADD", "SPOP", "MSET",
};
#define NREDIS (sizeof(redis_tests) / sizeof(redis_tests[0]))

/* Seeded N(0, 1) by Box-Muller. */
static double fx_normal(struct stats_rng *rng)
{
	double u1 = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/*
 * One redis configuration: per-test metrics redis.TEST around the given
 * means (relative noise `rel_sd`), requests_per_s = their geometric mean.
 */
static void fx_redis_config(struct db *db, int64_t exp_id, int idx, const struct fx_config *c,
			    const double *means, double rel_sd, double gang_total,
			    struct stats_rng *rng)
{
	int64_t cid = fx_config_add(db, exp_id, idx, c);
	for (int rep = 0; rep < (c->runs ? c->runs : 5); rep++) {
		int64_t run = fx_run_add(db, cid, rep, rep * 10 + idx, "ok", NULL, 1, 0);
		double logsum = 0;
		for (size_t t = 0; t < NREDIS; t++) {
			char name[32];
			snprintf(name, sizeof(name), "redis.%s", redis_tests[t]);
			double v = means[t] * (1 + rel_sd * fx_normal(rng));
			fx_metric(db, run, name, v, "requests/s", 1);
			logsum += log(v);
		}
		fx_metric(db, run, "requests_per_s", exp(logsum / NREDIS), "requests/s", 1);
		if (!isnan(gang_total)) {
			double g = gang_total * (gang_total > 0 ? 1 + 0.01 * fx_normal(rng) : 1);
			fx_metric(db, run, "gang_exits", round(g), "exits", 0);
			fx_metric(db, run, "gang_exits_per_s", round(g) / FX_WINDOW_S, "exits/s", 0);
		}
	}
}

static const char fx_redis_yaml[] =
	"name: redis-seeds\nbenchmark:\n  kind: redis\n  metric: {name: requests_per_s}\n"
	"topology:\n  - 1x1x2\n  - 1x2x1\nhost:\n  subcores_per_core: [1, 2]\n"
	"baseline: {topology: 1x1x2, subcores_per_core: 1}\nrepetitions: 5\n";

/*
 * The redis table of seeds/gang-exits-rfc.txt: a 2-vCPU VM as 1 core x 2
 * threads (ganged exits 1192893 over the run) against 2 subcores x 1 thread
 * in SMT 1 mode (0 ganged exits), 5 repetitions each with 0.5 % seeded noise
 * around the published per-test throughputs.
 */
static int64_t fixture_redis_seeds(struct db *db)
{
	static const double one_core_two_threads[NREDIS] = {
		30048.08, 31806.62, 247524.75, 30284.68, 34036.76, 168634.06, 261096.61, 11107.41,
	};
	static const double two_subcores[NREDIS] = {
		36231.88, 57438.25, 292397.66, 38343.56, 53792.36, 267379.66, 247524.75, 9922.60,
	};
	int64_t e = fx_experiment(db, "redis-seeds", "requests_per_s", 1, fx_redis_yaml);
	struct stats_rng rng;
	stats_rng_seed(&rng, 1192893);
	struct fx_config a = { .key = "1x1x2/subcores=1", .sockets = 1, .cores = 1,
			       .threads = 2, .subcores = 1, .baseline = true };
	struct fx_config b = { .key = "1x2x1/subcores=2", .sockets = 1, .cores = 2,
			       .threads = 1, .subcores = 2 };
	fx_redis_config(db, e, 0, &a, one_core_two_threads, 0.005, 1192893, &rng);
	fx_redis_config(db, e, 1, &b, two_subcores, 0.005, 0, &rng);
	return e;
}

/*
 * A multi-metric redis sweep of three shapes with no ganged-exit data (an
 * x86 host): 2x1x1 is the host default shape; 1x2x1 is better on every test
 * by 10 %, 1x1x2 worse by 5 %.
 */
static int64_t fixture_redis_multi(struct db *db)
{
	static const double base[NREDIS] = {
		100000, 110000, 150000, 100000, 105000, 120000, 140000, 30000,
	};
	double better[NREDIS], worse[NREDIS];
	for (size_t t = 0; t < NREDIS; t++) {
		better[t] = base[t] * 1.10;
		worse[t] = base[t] * 0.95;
	}
	int64_t e = fx_experiment(db, "redis-multi", "requests_per_s", 1, fx_redis_yaml);
	struct stats_rng rng;
	stats_rng_seed(&rng, 7);
	struct fx_config c[] = {
		{ .key = "2x1x1", .sockets = 2, .cores = 1, .threads = 1 },
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1 },
		{ .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2 },
	};
	fx_redis_config(db, e, 0, &c[0], base, 0.01, NAN, &rng);
	fx_redis_config(db, e, 1, &c[1], better, 0.01, NAN, &rng);
	fx_redis_config(db, e, 2, &c[2], worse, 0.01, NAN, &rng);
	return e;
}

/*
 * No baseline (none marked, no default shape): 1x2x1 has the better mean,
 * 1x1x2 is tied with it and has fewer ganged exits.
 */
static int64_t fixture_no_baseline(struct db *db)
{
	int64_t e = fx_experiment(db, "no-baseline", "records_per_s", 1, fx_yaml);
	struct fx_config c[] = {
		{ .key = "1x2x1", .sockets = 1, .cores = 2, .threads = 1, .mean = 150, .sd = 3,
		  .has_gang = true, .gang_per_s = 300 },
		{ .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2, .mean = 149.5, .sd = 3,
		  .has_gang = true, .gang_per_s = 100 },
	};
	for (int i = 0; i < 2; i++)
		fx_add(db, e, i, &c[i], "records_per_s", "records/s", 1);
	return e;
}

/* An experiment whose only runs failed: nothing to rank. */
static int64_t fixture_only_failed(struct db *db)
{
	int64_t e = fx_experiment(db, "only-failed", "records_per_s", 1, fx_yaml);
	struct fx_config c = { .key = "1x1x2", .sockets = 1, .cores = 1, .threads = 2 };
	int64_t cid = fx_config_add(db, e, 0, &c);
	fx_run_add(db, cid, 0, 0, "failed", "guest agent never answered", -1, -1);
	fx_run_add(db, cid, 1, 1, "interrupted", NULL, -1, -1);
	return e;
}

/* Builds fixture `name` into db; returns its experiment id, or -1 for an unknown name. */
static int64_t fixture_build(struct db *db, const char *name)
{
	if (!strcmp(name, "clear-winner"))
		return fixture_clear_winner(db);
	if (!strcmp(name, "all-tied"))
		return fixture_all_tied(db);
	if (!strcmp(name, "high-variance"))
		return fixture_high_variance(db);
	if (!strcmp(name, "failed-runs"))
		return fixture_failed_runs(db);
	if (!strcmp(name, "tie-break"))
		return fixture_tie_break(db, false);
	if (!strcmp(name, "tie-break-cpus"))
		return fixture_tie_break(db, true);
	if (!strcmp(name, "redis-seeds"))
		return fixture_redis_seeds(db);
	if (!strcmp(name, "redis-multi"))
		return fixture_redis_multi(db);
	if (!strcmp(name, "no-baseline"))
		return fixture_no_baseline(db);
	if (!strcmp(name, "only-failed"))
		return fixture_only_failed(db);
	return -1;
}

#endif
