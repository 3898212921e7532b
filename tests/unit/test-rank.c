/*
 * Ranking and recommendation on database fixtures (tests/unit/rank-fixtures.h):
 * a clear winner, all tied, high variance, failed runs, tie-breaks, a
 * multi-metric redis sweep and the redis numbers of seeds/gang-exits-rfc.txt.
 *
 * `test-rank --write-fixture NAME DB` writes fixture NAME into DB (created)
 * and prints its experiment id, for the integration tests.
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

#include "advisor/rank.h"
#include "rank-fixtures.h"
#include "util/json.h"

struct fx_state {
	char dir[64];
	char path[96];
	struct db_results res;
	struct rank_result r;
};

static void fx_remove_db(const char *path)
{
	const char *suffixes[] = { "", "-wal", "-shm" };
	for (size_t i = 0; i < 3; i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
		unlink(p);
	}
}

/* Builds fixture `name` in a fresh temporary database, loads and ranks it. */
static struct fx_state *fx_load(const char *name, const char *metric)
{
	struct fx_state *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	snprintf(s->dir, sizeof(s->dir), "/tmp/ta-test-rank.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/fixture.db", s->dir);
	struct ta_err err = { 0 };
	struct db *db = db_open(s->path, true, &err);
	assert_non_null(db);
	int64_t id = fixture_build(db, name);
	assert_true(id > 0);
	char ids[32];
	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	assert_int_equal(db_results_load(db, ids, &s->res, &err), 0);
	db_close(db);
	if (rank_compute(&s->res, metric, &s->r, &err) < 0)
		fail_msg("rank_compute: %s", err.msg);
	return s;
}

static int fx_teardown(void **state)
{
	struct fx_state *s = *state;
	if (!s)
		return 0;
	rank_result_release(&s->r);
	db_results_release(&s->res);
	fx_remove_db(s->path);
	rmdir(s->dir);
	free(s);
	*state = NULL;
	return 0;
}

static const struct rank_entry *entry(const struct rank_result *r, const char *key)
{
	for (size_t i = 0; i < r->nentries; i++)
		if (!strcmp(r->entries[i].config->key, key))
			return &r->entries[i];
	fail_msg("no configuration %s", key);
	return NULL;
}

static size_t warnings_of(const struct rank_result *r, const char *kind)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nwarnings; i++)
		n += !strcmp(r->warnings[i].kind, kind);
	return n;
}

#define assert_close(a, b, tol) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (tol))) \
		fail_msg("%s = %.12g, expected %.12g (tol %g)", #a, a_, b_, (double)(tol)); \
} while (0)

static void test_clear_winner(void **state)
{
	struct fx_state *s = *state = fx_load("clear-winner", NULL);
	const struct rank_result *r = &s->r;
	assert_string_equal(r->metric, "records_per_s");
	assert_true(r->higher_is_better);
	/* No configuration is marked: the host's default shape is the baseline. */
	assert_non_null(r->baseline);
	assert_string_equal(r->baseline->config->key, "2x1x1");
	assert_string_equal(r->baseline_source, "host default shape");
	assert_string_equal(r->entries[0].config->key, "1x2x1");
	assert_string_equal(r->entries[1].config->key, "1x1x2");
	assert_string_equal(r->entries[2].config->key, "2x1x1");
	assert_int_equal(r->entries[2].position, 3);
	const struct rank_entry *w = entry(r, "1x2x1");
	assert_true(w->is_best);
	assert_false(entry(r, "1x1x2")->tied_with_best);
	assert_true(entry(r, "1x1x2")->p_best_holm < 1e-6);
	assert_close(w->s.mean, 150, 1e-9);
	assert_close(w->s.stddev, 1.5, 1e-9);
	assert_close(w->gain, 0.5, 1e-12);
	assert_true(w->gain_lo > 0.47 && w->gain_lo < 0.5 && w->gain_hi > 0.5 && w->gain_hi < 0.53);
	assert_true(w->beats_baseline);
	assert_ptr_equal(r->recommended, w);
	assert_false(r->nothing_beats_baseline);
	/* Fewer ganged exits, more throughput: strongly negative correlation. */
	assert_string_equal(r->correlation_x, "gang_exits_per_s");
	assert_int_equal(r->spearman_n, 15);
	assert_true(r->spearman < -0.8);
	assert_close(w->gang_exits_per_s, 100, 1e-9);
	assert_close(w->gang_exits, 100 * FX_WINDOW_S, 1e-9);
	/* Exit reasons: the NULL-vCPU row, and per-vCPU rows summed. */
	assert_int_equal(w->ntop_exits, 2);
	assert_string_equal(w->top_exits[0].reason, "H_DOORBELL");
	assert_close(w->top_exits[0].mean_per_run, 3000, 1e-9);
	assert_string_equal(w->top_exits[1].reason, "EXTERNAL");
	assert_close(w->top_exits[1].mean_per_run, 1200, 1e-9);
	assert_int_equal(warnings_of(r, "few_repetitions") + warnings_of(r, "high_cv") +
			 warnings_of(r, "no_gang_data") + warnings_of(r, "failed_run"), 0);

	struct strbuf sb = STRBUF_INIT;
	rank_xml_fragment(w->config, &sb);
	assert_non_null(strstr(sb.buf, "<vcpu placement='static'>2</vcpu>"));
	assert_non_null(strstr(sb.buf, "<topology sockets='1' dies='1' cores='2' threads='1'/>"));
	assert_null(strstr(sb.buf, "cputune"));
	strbuf_reset(&sb);
	rank_host_commands(w->config, &sb);
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
}

static void test_all_tied(void **state)
{
	struct fx_state *s = *state = fx_load("all-tied", NULL);
	const struct rank_result *r = &s->r;
	assert_string_equal(r->baseline->config->key, "1x1x2");
	assert_string_equal(r->baseline_source, "marked");
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		assert_true(e->is_best || (e->tied_with_best && e->p_best_holm == 1));
		assert_false(e->beats_baseline);
	}
	assert_true(r->nothing_beats_baseline);
	assert_ptr_equal(r->recommended, r->baseline);
	assert_non_null(strstr(r->reason, "No configuration is significantly better"));
	assert_int_equal(warnings_of(r, "no_gang_data"), 1);
}

static void test_high_variance(void **state)
{
	struct fx_state *s = *state = fx_load("high-variance", NULL);
	const struct rank_result *r = &s->r;
	const struct rank_entry *hi = entry(r, "1x2x1");
	/* Ranked first by mean, but 15 % on sd 20 with n = 5 is not significant. */
	assert_int_equal(hi->position, 1);
	assert_close(hi->gain, 0.15, 1e-12);
	assert_true(hi->p_baseline_holm > 0.05);
	assert_true(hi->gain_lo < 0 && hi->gain_hi > 0.15);
	assert_true(entry(r, "2x1x1")->tied_with_best);
	assert_true(r->nothing_beats_baseline);
	assert_string_equal(r->recommended->config->key, "2x1x1");
	assert_int_equal(warnings_of(r, "high_cv"), 2);
}

static void test_failed_runs(void **state)
{
	struct fx_state *s = *state = fx_load("failed-runs", NULL);
	const struct rank_result *r = &s->r;
	assert_false(r->higher_is_better);
	/* Lower is better: 150 s first. */
	assert_string_equal(r->entries[0].config->key, "1x1x2");
	const struct rank_entry *f = entry(r, "1x2x1");
	assert_int_equal(f->s.n, 3);	/* failed runs do not count */
	assert_int_equal(f->nfailed, 2);
	assert_close(f->s.mean, 160, 1e-9);
	assert_close(f->gain, 200.0 / 160 - 1, 1e-12);	/* 25 % faster */
	assert_int_equal(r->runs_total, 12);	/* 5 + (3 ok + 2 failed) + 2 */
	assert_int_equal(r->runs_failed, 2);
	assert_int_equal(warnings_of(r, "failed_run"), 2);
	assert_int_equal(warnings_of(r, "lost_events"), 1);
	assert_int_equal(warnings_of(r, "topology_mismatch"), 1);
	assert_int_equal(warnings_of(r, "few_repetitions"), 1);	/* 1x2x1 (3 ok) is fine */
	assert_string_equal(r->recommended->config->key, "1x1x2");
	assert_close(r->recommended->gain, 200.0 / 150 - 1, 1e-12);
	bool few_named = false;
	for (size_t i = 0; i < r->nwarnings; i++)
		if (!strcmp(r->warnings[i].kind, "few_repetitions"))
			few_named |= !strcmp(r->warnings[i].config, "1x1x2");
	assert_true(few_named);
}

static void test_tie_break_gang_then_knobs(void **state)
{
	struct fx_state *s = *state = fx_load("tie-break", NULL);
	const struct rank_result *r = &s->r;
	/* dmt0 is best by mean; all three are tied with it. */
	assert_string_equal(r->best->config->key, "1x4x2/dmt0");
	assert_true(entry(r, "1x4x2/many")->tied_with_best);
	assert_true(entry(r, "1x4x2/plain")->tied_with_best);
	assert_int_equal(entry(r, "1x4x2/dmt0")->nondefault_knobs, 1);
	assert_int_equal(entry(r, "1x4x2/plain")->nondefault_knobs, 0);	/* 6 is the default */
	/* many loses on ganged exits, dmt0 on its non-default knob. */
	assert_string_equal(r->recommended->config->key, "1x4x2/plain");
	struct strbuf sb = STRBUF_INIT;
	rank_host_commands(entry(r, "1x4x2/dmt0")->config, &sb);
	assert_string_equal(strbuf_str(&sb),
			    "echo 0 > /sys/module/kvm_hv/parameters/dynamic_mt_modes\n");
	strbuf_release(&sb);
}

static void test_tie_break_cpus(void **state)
{
	struct fx_state *s = *state = fx_load("tie-break-cpus", NULL);
	const struct rank_result *r = &s->r;
	const struct rank_entry *p = entry(r, "1x4x2/pinned");
	assert_int_equal(p->host_cpus, 4);
	assert_true(p->tied_with_best);
	assert_ptr_equal(r->recommended, p);
	struct strbuf sb = STRBUF_INIT;
	rank_xml_fragment(p->config, &sb);
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='0' cpuset='0'/>"));
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='4' cpuset='2-3'/>"));
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='7' cpuset='3'/>"));
	strbuf_release(&sb);
}

static void test_redis_seeds(void **state)
{
	struct fx_state *s = *state = fx_load("redis-seeds", NULL);
	const struct rank_result *r = &s->r;
	const struct rank_entry *sub = entry(r, "1x2x1/subcores=2");
	const struct rank_entry *base = entry(r, "1x1x2/subcores=1");
	assert_ptr_equal(r->baseline, base);
	assert_ptr_equal(r->recommended, sub);
	assert_true(sub->beats_baseline);
	assert_string_equal(r->composite_family, "redis");
	/* GET: 57438.25 / 31806.62 = 1.806 in the seed; 0.5 % noise on 5 runs. */
	const struct rank_test_ratio *get = NULL;
	for (size_t i = 0; i < sub->ntests; i++)
		if (!strcmp(sub->tests[i].name, "redis.GET"))
			get = &sub->tests[i];
	assert_non_null(get);
	assert_close(get->ratio, 57438.25 / 31806.62, 0.02);
	assert_true(get->ratio_lo < get->ratio && get->ratio < get->ratio_hi);
	assert_true(get->ratio_lo > 1.75 && get->ratio_hi < 1.86);
	/* Composite: geometric mean of the 8 published ratios = 1.27334 (by hand). */
	assert_close(sub->composite, 1.27334, 0.01);
	assert_close(base->gang_exits, 1192893, 1192893 * 0.05);
	assert_close(sub->gang_exits, 0, 0);	/* 0 is data, not "not applicable" */
	assert_true(r->gang_data);
	/*
	 * Runs with more ganged exits are slower; the 5 tied zeros and the
	 * random pairing within the baseline's runs bound rho to [-0.94, -0.67].
	 */
	assert_true(r->spearman <= -0.67 && r->spearman >= -0.94);
	struct strbuf sb = STRBUF_INIT;
	rank_host_commands(sub->config, &sb);
	assert_string_equal(strbuf_str(&sb), "ppc64_cpu --subcores-per-core=2\n");
	strbuf_release(&sb);

	/* The JSON carries the GET gain for scripts. */
	struct strbuf js = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &js, false);
	rank_json_recommendation(&w, r);
	assert_non_null(strstr(js.buf, "\"metric\":\"redis.GET\",\"gain\":0.8"));
	assert_non_null(strstr(js.buf, "\"host_commands\":[\"ppc64_cpu --subcores-per-core=2\"]"));
	strbuf_release(&js);
}

static void test_redis_multi(void **state)
{
	struct fx_state *s = *state = fx_load("redis-multi", NULL);
	const struct rank_result *r = &s->r;
	assert_string_equal(r->baseline->config->key, "2x1x1");
	assert_string_equal(r->composite_family, "redis");
	assert_close(entry(r, "1x2x1")->composite, 1.10, 0.01);
	assert_close(entry(r, "1x1x2")->composite, 0.95, 0.01);
	assert_close(entry(r, "2x1x1")->composite, 1, 1e-12);
	assert_true(entry(r, "1x2x1")->composite_lo > 1.05);
	assert_string_equal(r->recommended->config->key, "1x2x1");
	assert_true(isnan(entry(r, "1x2x1")->gang_exits));	/* not applicable, never 0 */
	assert_null(r->correlation_x);
	assert_int_equal(warnings_of(r, "no_gang_data"), 1);
	/* Ranking by one test with --metric. */
	struct rank_result byget;
	struct ta_err err = { 0 };
	assert_int_equal(rank_compute(&s->res, "redis.MSET", &byget, &err), 0);
	assert_string_equal(byget.entries[0].config->key, "1x2x1");
	assert_close(byget.entries[0].s.mean, 33000, 33000 * 0.02);
	rank_result_release(&byget);
}

static void test_no_baseline(void **state)
{
	struct fx_state *s = *state = fx_load("no-baseline", NULL);
	const struct rank_result *r = &s->r;
	assert_null(r->baseline);
	assert_int_equal(warnings_of(r, "no_baseline"), 1);
	assert_string_equal(r->best->config->key, "1x2x1");
	/* Tied with the best and fewer ganged exits: the tie-break picks it. */
	assert_string_equal(r->recommended->config->key, "1x1x2");
	assert_true(isnan(r->recommended->gain) && isnan(r->recommended->ratio));
	assert_false(r->nothing_beats_baseline);
	assert_non_null(strstr(r->reason, "no baseline"));
}

static void test_unknown_metric(void **state)
{
	struct fx_state *s = *state = fx_load("clear-winner", NULL);
	struct rank_result r;
	struct ta_err err = { 0 };
	assert_int_equal(rank_compute(&s->res, "nope", &r, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "records_per_s"));
}

/* fx_load without ranking, for fixtures rank_compute must refuse. */
static struct fx_state *fx_load_only(const char *name)
{
	struct fx_state *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	snprintf(s->dir, sizeof(s->dir), "/tmp/ta-test-rank.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->path, sizeof(s->path), "%s/fixture.db", s->dir);
	struct ta_err err = { 0 };
	struct db *db = db_open(s->path, true, &err);
	assert_non_null(db);
	assert_true(fixture_build(db, name) > 0);
	assert_int_equal(db_results_load(db, name, &s->res, &err), 0);
	db_close(db);
	return s;
}

static void test_no_successful_runs(void **state)
{
	struct fx_state *s = *state = fx_load_only("only-failed");
	struct ta_err err = { 0 };
	assert_int_equal(s->res.configs[0].nruns, 2);
	assert_int_equal(rank_compute(&s->res, NULL, &s->r, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	assert_non_null(strstr(err.msg, "no successful run yet (2 runs: 0 planned, 1 failed, "
				       "1 interrupted)"));
}

/* Stored values that would break the XML or a root shell line are not echoed. */
static void test_unsafe_stored_values(void **state)
{
	(void)state;
	struct db_results_factor f[] = {
		{ "kvm_hv.dynamic_mt_modes", "0; reboot" },
		{ "thp", "never" },
		{ "smt", "off" },
		{ "topology", "1x1x2" },
	};
	char *cpus[] = { "0-1", "1'/><evil" };
	struct db_results_config c = {
		.key = "k", .vcpus = 2, .sockets = 1, .dies = 1, .cores = 1, .threads = 2,
		.pinning = "mine", .noise = "none", .factors = f, .nfactors = 4,
		.pinning_cpus = cpus, .npinning_cpus = 2,
	};
	struct strbuf sb = STRBUF_INIT;
	rank_host_commands(&c, &sb);
	assert_string_equal(strbuf_str(&sb),
			    "# knob 1: stored value is not a plain word; set it by hand\n"
			    "echo never > /sys/kernel/mm/transparent_hugepage/enabled\n"
			    "ppc64_cpu --smt=off\n");
	strbuf_reset(&sb);
	rank_xml_fragment(&c, &sb);
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='0' cpuset='0-1'/>"));
	assert_non_null(strstr(sb.buf, "vCPU 1: stored cpuset is malformed"));
	assert_null(strstr(sb.buf, "evil"));
	strbuf_release(&sb);
}

static void test_cpuset_count(void **state)
{
	(void)state;
	const char *a[] = { "0-3,8", "8", "2" };
	assert_int_equal(rank_cpuset_count(a, 3), 5);
	const char *b[] = { "x" };
	assert_int_equal(rank_cpuset_count(b, 1), -1);
	const char *c[] = { "3-1" };
	assert_int_equal(rank_cpuset_count(c, 1), -1);
}

static int write_fixture(const char *name, const char *path)
{
	struct ta_err err = { 0 };
	struct db *db = db_open(path, true, &err);
	if (!db) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	int64_t id = fixture_build(db, name);
	db_close(db);
	if (id < 0) {
		fprintf(stderr, "no fixture '%s'\n", name);
		return 2;
	}
	printf("%lld\n", (long long)id);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--write-fixture"))
		return write_fixture(argv[2], argv[3]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_clear_winner, fx_teardown),
		cmocka_unit_test_teardown(test_all_tied, fx_teardown),
		cmocka_unit_test_teardown(test_high_variance, fx_teardown),
		cmocka_unit_test_teardown(test_failed_runs, fx_teardown),
		cmocka_unit_test_teardown(test_tie_break_gang_then_knobs, fx_teardown),
		cmocka_unit_test_teardown(test_tie_break_cpus, fx_teardown),
		cmocka_unit_test_teardown(test_redis_seeds, fx_teardown),
		cmocka_unit_test_teardown(test_redis_multi, fx_teardown),
		cmocka_unit_test_teardown(test_no_baseline, fx_teardown),
		cmocka_unit_test_teardown(test_unknown_metric, fx_teardown),
		cmocka_unit_test_teardown(test_no_successful_runs, fx_teardown),
		cmocka_unit_test(test_unsafe_stored_values),
		cmocka_unit_test(test_cpuset_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
