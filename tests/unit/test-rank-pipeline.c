/*
 * The advisor on a database written by the real writers, not by fixtures:
 * configs/redis-power8.yaml goes through config_load, plan_expand (for a
 * POWER host), db_plan_store and, per run, db_run_store with the metrics and
 * exit counts a sweep on POWER8 would store.  The benchmark numbers are the
 * seed's redis table (seeds/gang-exits-rfc.txt) for 1x1x2 on a whole core and
 * 1x2x1 on 2 subcores, with 0.5 % seeded noise; the other four shapes get
 * plausible numbers in between.  This checks that the reader and the ranking
 * understand what the plan store and run store really write (factors JSON,
 * typed knob columns, NULL-vCPU exit rows, failed runs).
 *
 * TA_KEEP_DB=PATH keeps a copy of the database at PATH for inspection
 * (e.g. `topoadvisor --db PATH report redis-power8 -o r.html`).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "advisor/deploy.h"
#include "advisor/rank.h"
#include "decide/stats.h"
#include "experiments/config.h"
#include "experiments/plan-store.h"
#include "experiments/plan.h"
#include "schema/db-plan.h"
#include "schema/db-results.h"
#include "schema/db-runs.h"

static const char *const tests[] = { "SET", "GET", "INCR", "LPUSH", "LPOP", "SADD", "SPOP",
				     "MSET" };
#define NTESTS 8
static const double slow[NTESTS] = {
	30048.08, 31806.62, 247524.75, 30284.68, 34036.76, 168634.06, 261096.61, 11107.41,
};
static const double fast[NTESTS] = {
	36231.88, 57438.25, 292397.66, 38343.56, 53792.36, 267379.66, 247524.75, 9922.60,
};
#define WINDOW_S 60.0

/* What a run of shape SxCxT with `subcores` stores: table, scale and ganged exits. */
struct truth {
	const char *shape;
	const char *subcores;
	const double *table;
	double scale;
	double gang_exits;
};

static const struct truth truths[] = {
	{ "1x1x2", "1", slow, 1.00, 1192893 },	/* the seed's slow case */
	{ "1x1x2", "2", slow, 1.02, 1100000 },
	{ "1x2x1", "1", slow, 1.20, 400000 },
	{ "1x2x1", "2", fast, 1.00, 0 },	/* the seed's fast case */
	{ "2x1x1", "1", slow, 1.15, 450000 },
	{ "2x1x1", "2", fast, 0.97, 0 },
};

static double normal(struct stats_rng *rng)
{
	double u1 = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static const struct truth *truth_of(const struct plan_config *c, const struct sweep_config *cfg)
{
	char shape[32];
	shape_format(&c->shape, shape, sizeof(shape));
	const char *subcores = NULL;
	for (size_t k = 0; k < cfg->nknobs; k++)
		if (!strcmp(cfg->knobs[k].name, "subcores_per_core"))
			subcores = c->knob_values[k];
	for (size_t i = 0; i < sizeof(truths) / sizeof(truths[0]); i++)
		if (!strcmp(truths[i].shape, shape) && subcores &&
		    !strcmp(truths[i].subcores, subcores))
			return &truths[i];
	fail_msg("no truth for %s", c->rec.key);
	return NULL;
}

struct pipeline {
	char dir[64], path[96];
	struct sweep_config *cfg;
	struct plan *plan;
	const char *expect_key;		/* 1x2x1 on 2 subcores */
	const char *baseline_key;	/* 1x1x2 on 1 subcore */
	struct db_results res;
	struct rank_result r;
};

/* Stores one run as the controller would: metrics, exit counts, status. */
static void store_run(struct db *db, const struct db_run_todo *t, const struct truth *tr,
		      bool fail_it, struct stats_rng *rng)
{
	struct ta_err err = { 0 };
	struct db_metric m[NTESTS + 3];
	char names[NTESTS][32];
	size_t nm = 0;
	double logsum = 0;
	for (size_t i = 0; i < NTESTS; i++) {
		snprintf(names[i], sizeof(names[i]), "redis.%s", tests[i]);
		double v = tr->table[i] * tr->scale * (1 + 0.005 * normal(rng));
		logsum += log(v);
		m[nm++] = (struct db_metric){ names[i], v, "requests/s", 1 };
	}
	m[nm++] = (struct db_metric){ "requests_per_s", exp(logsum / NTESTS), "requests/s", 1 };
	double gang = round(tr->gang_exits * (1 + 0.01 * normal(rng)));
	m[nm++] = (struct db_metric){ "gang_exits", gang, "exits", -1 };
	m[nm++] = (struct db_metric){ "gang_exits_per_s", gang / WINDOW_S, "exits/s", -1 };
	struct db_exit_count ex[] = {
		{ "kvm_hv", -1, "H_DOORBELL", (uint64_t)(gang * 2) + 1000, -1, -1 },
		{ "kvm_hv", -1, "EXTERNAL", 50000, 50000, 2000000 },
		{ "kvm_hv", 0, "EXTERNAL", 30000, 30000, 1 },
		{ "kvm_hv", 1, "EXTERNAL", 20000, 20000, 1 },
	};
	struct db_run_result r = {
		.run_id = t->run_id, .status = "ok", .topology_ok = 1, .lost_events = 0,
		.metrics = m, .nmetrics = nm, .exits = ex, .nexits = 4,
	};
	if (fail_it) {
		r = (struct db_run_result){ .run_id = t->run_id, .status = "failed",
					    .error = "guest agent did not answer within 300 s",
					    .topology_ok = -1, .lost_events = -1 };
	}
	if (db_run_store(db, &r, &err) < 0)
		fail_msg("db_run_store: %s", err.msg);
}

static int pipeline_setup(void **state)
{
	struct pipeline *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	struct ta_err err = { 0 };
	const char *top = getenv("TA_TOP");
	char cfgpath[512];
	snprintf(cfgpath, sizeof(cfgpath), "%s/configs/redis-power8.yaml", top ? top : ".");
	p->cfg = config_load(cfgpath, &err);
	if (!p->cfg)
		fail_msg("config_load: %s", err.msg);
	struct host_facts host = { .arch = ARCH_PPC64 };	/* unknown CPUs: no host checks */
	p->plan = plan_expand(p->cfg, &host, 42, &err);
	if (!p->plan)
		fail_msg("plan_expand: %s", err.msg);
	assert_int_equal(p->plan->nconfigs, 6);

	snprintf(p->dir, sizeof(p->dir), "/tmp/ta-test-pipeline.XXXXXX");
	assert_non_null(mkdtemp(p->dir));
	snprintf(p->path, sizeof(p->path), "%s/pipeline.db", p->dir);
	struct db *db = db_open(p->path, true, &err);
	assert_non_null(db);
	struct db_experiment_new e = {
		.name = p->cfg->name, .config_yaml = p->cfg->text,
		.config_len = p->cfg->text_len, .config_path = cfgpath, .seed = 42,
		.primary_metric = p->cfg->bench.metric.name,
		.higher_is_better = p->cfg->bench.metric.higher_is_better,
	};
	int64_t exp_id;
	assert_int_equal(db_experiment_insert(db, &e, &exp_id, &err), 0);
	int64_t *ids = calloc(p->plan->nconfigs, sizeof(*ids));
	assert_int_equal(plan_store(db, exp_id, p->plan, ids, &err), 0);

	struct db_run_todo *todo;
	size_t n;
	assert_int_equal(db_runs_list(db, exp_id, false, &todo, &n, &err), 0);
	assert_int_equal(n, 30);
	struct stats_rng rng;
	stats_rng_seed(&rng, 1192893);
	for (size_t i = 0; i < n; i++) {
		size_t c = 0;
		while (ids[c] != todo[i].configuration_id)
			c++;
		const struct truth *tr = truth_of(&p->plan->configs[c], p->cfg);
		/* One failure, as sweeps have: the last repetition of 2x1x1 on 1 subcore. */
		bool fail_it = tr == &truths[4] && todo[i].repetition == 4;
		store_run(db, &todo[i], tr, fail_it, &rng);
		if (tr == &truths[3])
			p->expect_key = p->plan->configs[c].rec.key;
		if (tr == &truths[0])
			p->baseline_key = p->plan->configs[c].rec.key;
	}
	db_runs_free(todo, n);
	free(ids);
	assert_int_equal(db_results_load(db, p->cfg->name, &p->res, &err), 0);
	const char *keep = getenv("TA_KEEP_DB");
	if (keep && *keep) {
		sqlite3_stmt *st = db_prepare(db, "VACUUM INTO ?", &err);
		assert_non_null(st);
		sqlite3_bind_text(st, 1, keep, -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
	}
	db_close(db);
	if (rank_compute(&p->res, NULL, &p->r, &err) < 0)
		fail_msg("rank_compute: %s", err.msg);
	*state = p;
	return 0;
}

static int pipeline_teardown(void **state)
{
	struct pipeline *p = *state;
	rank_result_release(&p->r);
	db_results_release(&p->res);
	const char *suffixes[] = { "", "-wal", "-shm" };
	for (size_t i = 0; i < 3; i++) {
		char f[128];
		snprintf(f, sizeof(f), "%s%s", p->path, suffixes[i]);
		unlink(f);
	}
	rmdir(p->dir);
	plan_free(p->plan);
	config_free(p->cfg);
	free(p);
	return 0;
}

static void test_recommends_two_subcores(void **state)
{
	struct pipeline *p = *state;
	const struct rank_result *r = &p->r;
	assert_string_equal(r->metric, "requests_per_s");
	assert_true(r->higher_is_better);
	assert_non_null(r->baseline);
	assert_string_equal(r->baseline_source, "marked");
	assert_string_equal(r->baseline->config->rec.key, p->baseline_key);
	assert_non_null(r->recommended);
	assert_string_equal(r->recommended->config->rec.key, p->expect_key);
	assert_false(r->nothing_beats_baseline);
	const struct rank_entry *e = r->recommended;
	assert_string_equal(config_record_knob(&e->config->rec, "subcores_per_core"), "2");
	const struct rank_test_ratio *get = NULL;
	for (size_t i = 0; i < e->ntests; i++)
		if (!strcmp(e->tests[i].name, "redis.GET"))
			get = &e->tests[i];
	assert_non_null(get);
	/* 57438.25 / 31806.62 = 1.806 */
	assert_true(fabs(get->ratio - 1.806) < 0.02);
	assert_true(e->gang_exits == 0);
	assert_true(r->spearman < -0.5);
	assert_int_equal(r->runs_total, 30);
	assert_int_equal(r->runs_failed, 1);
}

static void test_commands_and_xml(void **state)
{
	struct pipeline *p = *state;
	const struct rank_entry *e = p->r.recommended;
	struct strbuf sb = STRBUF_INIT;
	deploy_host_commands(&p->r, e->config, &sb);
	assert_string_equal(strbuf_str(&sb),
			    "ppc64_cpu --subcores-per-core=2\nppc64_cpu --smt=off\n");
	strbuf_reset(&sb);
	deploy_xml(e->config, &sb);
	assert_non_null(strstr(sb.buf, "<vcpu placement='static'>2</vcpu>"));
	assert_non_null(strstr(sb.buf, "cores='2' threads='1'/>"));
	assert_null(strstr(sb.buf, "cputune"));
	assert_null(strstr(sb.buf, "pinning"));
	strbuf_release(&sb);
	/* Exit reasons: the NULL-vCPU row is the total, not added to the per-vCPU rows. */
	bool external = false;
	for (size_t i = 0; i < e->ntop_exits; i++)
		if (!strcmp(e->top_exits[i].reason, "EXTERNAL")) {
			external = true;
			assert_true(e->top_exits[i].mean_per_run == 50000);
			/* Its handling time: the NULL row's 2 ms per run, not plus 2 ns. */
			assert_true(e->top_exits[i].mean_time_s == 0.002);
		} else if (!strcmp(e->top_exits[i].reason, "H_DOORBELL")) {
			assert_true(isnan(e->top_exits[i].mean_time_s));	/* never timed */
		}
	assert_true(external);
}

static void test_warnings(void **state)
{
	struct pipeline *p = *state;
	size_t failed = 0, gang = 0;
	for (size_t i = 0; i < p->r.nwarnings; i++) {
		failed += !strcmp(p->r.warnings[i].kind, "failed_run");
		gang += !strcmp(p->r.warnings[i].kind, "no_gang_data");
		if (!strcmp(p->r.warnings[i].kind, "failed_run"))
			assert_non_null(strstr(p->r.warnings[i].message, "guest agent did not answer"));
	}
	assert_int_equal(failed, 1);
	assert_int_equal(gang, 0);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(test_recommends_two_subcores),
		cmocka_unit_test(test_commands_and_xml),
		cmocka_unit_test(test_warnings),
	};
	return cmocka_run_group_tests(t, pipeline_setup, pipeline_teardown);
}
