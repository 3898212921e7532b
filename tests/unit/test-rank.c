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

#include "advisor/deploy.h"
#include "advisor/rank.h"
#include "advisor/report-html.h"
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
		if (!strcmp(r->entries[i].config->rec.key, key))
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
	assert_string_equal(r->baseline->config->rec.key, "2x1x1");
	assert_string_equal(r->baseline_source, "host default shape");
	assert_string_equal(r->entries[0].config->rec.key, "1x2x1");
	assert_string_equal(r->entries[1].config->rec.key, "1x1x2");
	assert_string_equal(r->entries[2].config->rec.key, "2x1x1");
	assert_int_equal(r->entries[2].position, 3);
	const struct rank_entry *w = entry(r, "1x2x1");
	assert_true(w->is_best);
	assert_false(entry(r, "1x1x2")->tied_with_best);
	assert_true(entry(r, "1x1x2")->p_best_adj < 1e-3);
	assert_close(w->s.mean, 150, 1e-9);
	assert_close(w->s.stddev, 1.5, 1e-9);
	/* The ratio of geometric means: 150/100 up to the sd's second order. */
	assert_close(w->gain, 0.5, 1e-3);
	assert_true(w->gain_lo > 0.44 && w->gain_lo < 0.5 && w->gain_hi > 0.5 && w->gain_hi < 0.56);
	assert_true(w->beats_baseline);
	assert_int_equal(w->verdict, DECIDE_BETTER);
	assert_int_equal(r->verdict, DECIDE_BETTER);
	assert_int_equal(entry(r, "2x1x1")->verdict, DECIDE_NOT_COMPARED);
	/* Bonferroni over the two comparisons with the baseline. */
	assert_int_equal(r->ncomparisons, 2);
	assert_close(r->level_alpha, 0.025, 1e-15);
	assert_close(w->p_baseline_adj, fmin(1, 2 * w->p_baseline), 1e-15);
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
	deploy_xml(w->config, &sb);
	assert_non_null(strstr(sb.buf, "<vcpu placement='static'>2</vcpu>"));
	assert_non_null(strstr(sb.buf, "<topology sockets='1' dies='1' cores='2' threads='1'/>"));
	assert_null(strstr(sb.buf, "cputune"));
	strbuf_reset(&sb);
	deploy_host_commands(r, w->config, &sb);
	assert_int_equal(sb.len, 0);
	strbuf_release(&sb);
}

static void test_all_tied(void **state)
{
	struct fx_state *s = *state = fx_load("all-tied", NULL);
	const struct rank_result *r = &s->r;
	assert_string_equal(r->baseline->config->rec.key, "1x1x2");
	assert_string_equal(r->baseline_source, "marked");
	/* Exactly equal values: ratio exactly 1, p exactly 1, shown within +-2 %. */
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		assert_true(e->is_best || (e->tied_with_best && e->p_best_adj == 1));
		assert_false(e->beats_baseline);
		if (e != r->baseline) {
			assert_int_equal(e->verdict, DECIDE_EQUIVALENT);
			assert_close(e->ratio, 1, 0);
			assert_close(e->gain, 0, 0);
			assert_close(e->p_baseline, 1, 1e-12);
		}
	}
	assert_int_equal(r->verdict, DECIDE_EQUIVALENT);
	assert_true(r->nothing_beats_baseline);
	assert_ptr_equal(r->recommended, r->baseline);
	assert_int_equal(r->ncontention, 0);
	assert_non_null(strstr(r->reason, "Nothing beats the baseline 1x1x2"));
	assert_int_equal(warnings_of(r, "no_gang_data"), 1);
}

/* 15 % on sd 20 with n = 5: neither shown better nor equivalent: undecided. */
static void test_high_variance(void **state)
{
	struct fx_state *s = *state = fx_load("high-variance", NULL);
	const struct rank_result *r = &s->r;
	const struct rank_entry *hi = entry(r, "1x2x1");
	assert_int_equal(hi->position, 1);
	assert_close(hi->gain, 0.15, 0.01);
	assert_true(hi->p_baseline_adj > 0.05);
	assert_true(hi->gain_lo < 0 && hi->gain_hi > 0.15);
	assert_int_equal(hi->verdict, DECIDE_UNDECIDED);
	assert_false(entry(r, "2x1x1")->tied_with_best);	/* not shown equivalent */
	assert_int_equal(r->verdict, DECIDE_UNDECIDED);
	/* "keep the baseline" is not claimed: it only stays until settled. */
	assert_false(r->nothing_beats_baseline);
	assert_string_equal(r->recommended->config->rec.key, "2x1x1");
	assert_int_equal(r->ncontention, 1);
	assert_string_equal(r->contention[0]->key, "1x2x1");
	/* Runs of CV ~ 18 % at n = 5 only detect large gains... */
	assert_true(r->min_detectable_effect > 0.3);
	/* ...and settling needs more runs, as many as the sample size formula says. */
	assert_true(r->needed_repetitions > 0);
	assert_int_equal(r->needed_repetitions, hi->needed_repetitions);
	assert_non_null(strstr(r->reason, "Still in contention: 1x2x1 (undecided)"));
	assert_non_null(strstr(r->reason, "--repetitions"));
	assert_int_equal(warnings_of(r, "high_cv"), 2);
}

/*
 * Failed runs are outcomes: 1x2x1 failed 2 of 5 runs (40 % > the 20 % of
 * advisor.max_failure_rate): failing, never recommended, however fast its
 * 3 successful runs.
 */
static void test_failed_runs(void **state)
{
	struct fx_state *s = *state = fx_load("failed-runs", NULL);
	const struct rank_result *r = &s->r;
	assert_false(r->higher_is_better);
	/* Lower is better: 150 s first; the failing one (160 s) after the baseline
	 * (200 s, worse than the best): no status ranks above a better one. */
	assert_string_equal(r->entries[0].config->rec.key, "1x1x2");
	assert_string_equal(r->entries[1].config->rec.key, "2x1x1");
	assert_string_equal(r->entries[2].config->rec.key, "1x2x1");
	const struct rank_entry *f = entry(r, "1x2x1");
	assert_int_equal(f->s.n, 3);
	assert_int_equal(f->nfailed, 2);
	assert_close(f->failure_rate, 0.4, 1e-12);
	assert_true(f->failing);
	assert_int_equal(f->verdict, DECIDE_FAILING);
	assert_int_equal(f->decision->verdict, DECIDE_FAILING);
	assert_false(f->decision->in_contention);
	struct strbuf sb = STRBUF_INIT;
	rank_entry_status(&sb, r, f);
	assert_string_equal(sb.buf, "failing, 2 of 5 failed");
	strbuf_release(&sb);
	/* Lower is better: the gain interval is the inverted ratio interval. */
	const struct rank_entry *g = entry(r, "1x1x2");
	assert_close(g->s.mean, 150, 1e-9);
	assert_close(g->gain, 200.0 / 150 - 1, 2e-3);	/* 33 % faster */
	assert_true(g->ratio < 1);
	assert_close(g->gain_lo, 1 / g->ratio_hi - 1, 1e-12);
	assert_close(g->gain_hi, 1 / g->ratio_lo - 1, 1e-12);
	assert_true(g->gain_lo > 0 && g->gain_lo < g->gain && g->gain < g->gain_hi);
	assert_int_equal(g->verdict, DECIDE_BETTER);
	assert_int_equal(r->runs_total, 12);	/* 5 + (3 ok + 2 failed) + 2 */
	assert_int_equal(r->runs_failed, 2);
	assert_int_equal(warnings_of(r, "failed_run"), 2);
	assert_int_equal(warnings_of(r, "failing"), 1);
	assert_int_equal(warnings_of(r, "lost_events"), 1);
	assert_int_equal(warnings_of(r, "topology_mismatch"), 1);
	assert_int_equal(warnings_of(r, "few_repetitions"), 1);	/* 1x2x1 (3 ok) is fine */
	assert_string_equal(r->recommended->config->rec.key, "1x1x2");
	assert_int_equal(r->verdict, DECIDE_BETTER);
	/* The verdict states the failures. */
	assert_non_null(strstr(r->reason, "1x2x1: 2 of 5 runs failed (failing: never "
				       "recommended)"));
	bool few_named = false;
	for (size_t i = 0; i < r->nwarnings; i++)
		if (!strcmp(r->warnings[i].kind, "few_repetitions"))
			few_named |= !strcmp(r->warnings[i].config, "1x1x2");
	assert_true(few_named);
}

static void test_tie_break_knobs_then_gang(void **state)
{
	struct fx_state *s = *state = fx_load("tie-break", NULL);
	const struct rank_result *r = &s->r;
	/* dmt0 is best by mean; the two others are within +-2 % of it. */
	assert_string_equal(r->best->config->rec.key, "1x4x2/dmt0");
	assert_true(entry(r, "1x4x2/many")->tied_with_best);
	assert_true(entry(r, "1x4x2/plain")->tied_with_best);
	assert_int_equal(entry(r, "1x4x2/dmt0")->nondefault_knobs, 1);
	assert_int_equal(entry(r, "1x4x2/plain")->nondefault_knobs, 0);	/* 6 is the default */
	/* dmt0 loses on its non-default knob, many on (significantly) more ganged exits. */
	assert_string_equal(r->recommended->config->rec.key, "1x4x2/plain");
	assert_int_equal(r->verdict, DECIDE_BETTER);
	assert_non_null(strstr(r->reason, "of the 3 configurations within +-2 % of the top one"));
	struct strbuf sb = STRBUF_INIT;
	deploy_host_commands(r, entry(r, "1x4x2/dmt0")->config, &sb);
	assert_string_equal(strbuf_str(&sb),
			    "echo 0 > /sys/module/kvm_hv/parameters/dynamic_mt_modes\n");
	strbuf_release(&sb);
}

static void test_tie_break_cpus(void **state)
{
	struct fx_state *s = *state = fx_load("tie-break-cpus", NULL);
	struct rank_result *r = &s->r;
	const struct rank_entry *p = entry(r, "1x4x2/pinned");
	assert_int_equal(p->host_cpus, 4);
	assert_true(p->tied_with_best);
	assert_ptr_equal(r->recommended, p);
	/* No <cpu> recorded (arch NULL: a configuration stored before schema 7):
	 * the fragment says so instead of guessing. */
	struct strbuf note = STRBUF_INIT;
	deploy_xml(p->config, &note);
	assert_non_null(strstr(note.buf, "<!-- the guests' CPU mode was not recorded"));
	assert_non_null(strstr(note.buf, "<cpu>\n  <topology"));
	strbuf_release(&note);
	/* The fragment holds what the runs used: pins, emulator pin, CPU model. */
	struct config_record *rec = (struct config_record *)&p->config->rec;
	rec->arch = xstrdup("x86_64");
	rec->cpu_mode = xstrdup("custom");
	rec->cpu_model = xstrdup("Westmere");
	struct strbuf sb = STRBUF_INIT;
	deploy_xml(p->config, &sb);
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='0' cpuset='0'/>"));
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='4' cpuset='2-3'/>"));
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='7' cpuset='3'/>"));
	assert_non_null(strstr(sb.buf, "<emulatorpin cpuset='4-5'/>"));
	assert_non_null(strstr(sb.buf, "<cpu mode='custom' match='exact' check='none'>\n"
				       "  <model fallback='forbid'>Westmere</model>\n"
				       "  <topology sockets='1' dies='1' cores='4' threads='2'/>"));
	strbuf_reset(&sb);
	free(rec->cpu_mode);
	free(rec->cpu_model);
	rec->cpu_mode = xstrdup("host-passthrough");
	rec->cpu_model = NULL;
	deploy_xml(p->config, &sb);
	assert_non_null(strstr(sb.buf, "<cpu mode='host-passthrough' check='none'>\n  <topology"));
	strbuf_release(&sb);
}

/* Ganged exits that differ by noise only do not break a tie. */
static void test_tie_break_gang_noise(void **state)
{
	struct fx_state *s = *state = fx_load("gang-noise", NULL);
	const struct rank_result *r = &s->r;
	assert_true(entry(r, "1x4x2/quiet")->tied_with_best);
	assert_string_equal(r->recommended->config->rec.key, "1x4x2/fast");
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
	deploy_host_commands(r, sub->config, &sb);
	assert_string_equal(strbuf_str(&sb), "ppc64_cpu --subcores-per-core=2\n");
	strbuf_release(&sb);

	/* The JSON carries the GET gain for scripts. */
	struct strbuf js = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &js, false);
	rank_json_recommendation(&w, r);
	assert_non_null(strstr(js.buf, "\"metric\":\"redis.GET\",\"higher_is_better\":true,"
				       "\"gain\":0.8"));
	assert_non_null(strstr(js.buf, "\"verdict\":\"better\",\"decisive\":true"));
	assert_non_null(strstr(js.buf, "\"host_commands\":[\"ppc64_cpu --subcores-per-core=2\"]"));
	strbuf_release(&js);
}

static const struct rank_test_ratio *test_of(const struct rank_entry *e, const char *name)
{
	for (size_t i = 0; i < e->ntests; i++)
		if (!strcmp(e->tests[i].name, name))
			return &e->tests[i];
	fail_msg("no test %s", name);
	return NULL;
}

static void test_redis_multi(void **state)
{
	struct fx_state *s = *state = fx_load("redis-multi", NULL);
	const struct rank_result *r = &s->r;
	assert_string_equal(r->baseline->config->rec.key, "2x1x1");
	assert_string_equal(r->composite_family, "redis");
	/* The composite takes the throughput tests only: the p50 latencies (which
	 * fall by 1/1.1) would pull it back to 1 if taken as higher-is-better. */
	assert_close(entry(r, "1x2x1")->composite, 1.10, 0.01);
	assert_close(entry(r, "1x1x2")->composite, 0.95, 0.01);
	assert_close(entry(r, "2x1x1")->composite, 1, 1e-12);
	assert_true(entry(r, "1x2x1")->composite_lo > 1.05);
	/* Each test's gain in its own direction: latency 1/1.1 is a +10 % gain. */
	const struct rank_test_ratio *p50 = test_of(entry(r, "1x2x1"), "redis.SET.p50_ms");
	const struct rank_test_ratio *set = test_of(entry(r, "1x2x1"), "redis.SET");
	assert_false(p50->higher_is_better);
	assert_true(set->higher_is_better);
	assert_close(set->gain, 0.10, 0.02);
	/* p50 = 1e5 / throughput per run: on the log scale exactly the inverse. */
	assert_close(p50->ratio, 1 / set->ratio, 1e-9);
	assert_close(p50->gain, set->gain, 1e-9);
	assert_close(p50->gain_lo, set->gain_lo, 1e-9);
	assert_true(p50->gain_lo > 0 && p50->gain_hi > p50->gain);
	assert_string_equal(r->recommended->config->rec.key, "1x2x1");
	assert_true(isnan(entry(r, "1x2x1")->gang_exits));	/* not applicable, never 0 */
	assert_null(r->correlation_x);
	assert_int_equal(warnings_of(r, "no_gang_data"), 1);
	/* Ranking by one test with --metric. */
	struct rank_result byget;
	struct ta_err err = { 0 };
	assert_int_equal(rank_compute(&s->res, "redis.MSET", &byget, &err), 0);
	assert_string_equal(byget.entries[0].config->rec.key, "1x2x1");
	assert_close(byget.entries[0].s.mean, 33000, 33000 * 0.02);
	rank_result_release(&byget);
	/* By a latency: its stored direction, so the faster shape gains. */
	assert_int_equal(rank_compute(&s->res, "redis.GET.p50_ms", &byget, &err), 0);
	assert_false(byget.higher_is_better);
	assert_string_equal(byget.entries[0].config->rec.key, "1x2x1");
	assert_close(entry(&byget, "1x2x1")->gain, 0.10, 0.02);
	assert_string_equal(byget.recommended->config->rec.key, "1x2x1");
	rank_result_release(&byget);
}

/* A decision failing at one environment level is failing there, and says where. */
static void test_environment_failing(void **state)
{
	struct fx_state *s = *state = fx_load("environment-failing", NULL);
	const struct rank_result *r = &s->r;
	assert_int_equal(r->nlevels, 2);
	const struct rank_decision *d = NULL;
	for (size_t i = 0; i < r->ndecisions; i++)
		if (strstr(r->decisions[i].key, "1x2x1"))
			d = &r->decisions[i];
	assert_non_null(d);
	assert_true(d->failing);
	assert_true(d->failing_level < r->nlevels);
	assert_non_null(strstr(r->levels[d->failing_level], "spin"));
	assert_int_equal(d->verdict, DECIDE_FAILING);
	assert_int_equal(r->verdict, DECIDE_EQUIVALENT);
	assert_non_null(strstr(r->reason, "(failing at "));
	assert_non_null(strstr(r->reason, "2 of 8 runs there"));
	assert_int_equal(warnings_of(r, "failing_level"), 1);
}

static void test_no_baseline(void **state)
{
	struct fx_state *s = *state = fx_load("no-baseline", NULL);
	const struct rank_result *r = &s->r;
	assert_null(r->baseline);
	assert_int_equal(warnings_of(r, "no_baseline"), 1);
	assert_string_equal(r->best->config->rec.key, "1x2x1");
	/* Within +-2 % of the best and fewer ganged exits: the tie-break picks it. */
	assert_true(entry(r, "1x1x2")->tied_with_best);
	assert_string_equal(r->recommended->config->rec.key, "1x1x2");
	assert_true(isnan(r->recommended->gain) && isnan(r->recommended->ratio));
	assert_false(r->nothing_beats_baseline);
	/* Tied with the best and cheaper: recommended, `equivalent` (nothing shown better). */
	assert_int_equal(r->verdict, DECIDE_EQUIVALENT);
	assert_false(r->dr.tied);
	assert_non_null(strstr(r->reason, "costs least"));
	assert_int_equal(entry(r, "1x2x1")->verdict, DECIDE_NOT_COMPARED);	/* no baseline to test against */
	assert_non_null(strstr(r->reason, "no baseline"));
}

/* Significantly worse never beats the baseline, in either direction. */
static void test_worse_never_beats(void **state)
{
	const char *names[] = { "worse", "worse-lower" };
	for (size_t i = 0; i < 2; i++) {
		struct fx_state *s = fx_load(names[i], NULL);
		const struct rank_result *r = &s->r;
		const struct rank_entry *slow = entry(r, "1x2x1/slow");
		assert_int_equal(slow->verdict, DECIDE_WORSE);
		assert_false(slow->beats_baseline);
		assert_true(slow->gain_hi < 0);
		/* Two-sided p is tiny, yet it is not a gain. */
		assert_true(slow->p_baseline_adj < 1e-3);
		assert_int_equal(entry(r, "1x1x2/same")->verdict, DECIDE_EQUIVALENT);
		assert_int_equal(r->verdict, DECIDE_EQUIVALENT);
		assert_true(r->nothing_beats_baseline);
		assert_string_equal(r->recommended->config->rec.key, "2x1x1");
		*state = s;
		fx_teardown(state);
	}
}

/*
 * "Leading for now" names the best objective only (the engine's best),
 * never the pick that merely stays until settled: a table of fixtures,
 * the line recommend prints and the report's tentative pick.
 */
static void test_leading_is_best(void **state)
{
	static const struct {
		const char *fixture, *line, *html;
	} rows[] = {
		/* the baseline ranks third: 1x2x1 leads, the baseline stays */
		{ "baseline-third", "\nno decision yet; leading for now: 1x2x1; until then: 2x1x1 "
		  "(the baseline)\n", "no decision yet; leading for now: 1x2x1; until then: "
		  "2x1x1 (the baseline)" },
		/* the baseline second */
		{ "high-variance", "\nno decision yet; leading for now: 1x2x1; until then: 2x1x1 "
		  "(the baseline)\n", "no decision yet; leading for now: 1x2x1; until then: "
		  "2x1x1 (the baseline)" },
		/* the baseline untestable: the best by its mean is the pick */
		{ "baseline-one-run", "\nno decision yet; leading for now: 1x2x1\n",
		  "no decision yet; leading for now: 1x2x1</p>" },
		/* decisive: recommended, nothing "leads" */
		{ "clear-winner", "\nrecommended: 1x2x1\n", "<p class='pick'>1x2x1" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fx_state *s = fx_load(rows[i].fixture, NULL);
		*state = s;
		const struct rank_result *r = &s->r;
		const struct rank_decision *lead = rank_leading(r);
		assert_non_null(lead);
		assert_ptr_equal(lead, r->best_decision);
		assert_ptr_equal(lead, rank_decision_at(r, r->dr.best));
		struct strbuf sb = STRBUF_INIT;
		rank_text_recommendation(&sb, r);
		if (!strstr(sb.buf, rows[i].line))
			fail_msg("%s: no \"%s\" in:\n%s", rows[i].fixture, rows[i].line, sb.buf);
		assert_null(strstr(sb.buf, "leading for now: 2x1x1"));
		strbuf_reset(&sb);
		report_html_render(r, NULL, &sb);
		if (!strstr(sb.buf, rows[i].html))
			fail_msg("%s: no \"%s\" in the report", rows[i].fixture, rows[i].html);
		assert_null(strstr(sb.buf, "leading for now: 2x1x1"));
		strbuf_release(&sb);
		fx_teardown(state);
	}
}

static void test_baseline_one_run(void **state)
{
	struct fx_state *s = *state = fx_load("baseline-one-run", NULL);
	const struct rank_result *r = &s->r;
	assert_string_equal(r->baseline->config->rec.key, "2x1x1");
	assert_int_equal(r->baseline->s.n, 1);
	assert_int_equal(r->verdict, DECIDE_INSUFFICIENT);
	assert_false(r->nothing_beats_baseline);
	for (size_t i = 0; i < r->nentries; i++) {
		assert_false(r->entries[i].beats_baseline);
		if (&r->entries[i] != r->baseline)
			assert_int_equal(r->entries[i].verdict, DECIDE_INSUFFICIENT);
	}
	/* The leader is named, not recommended: one more baseline run settles testing. */
	assert_string_equal(r->recommended->config->rec.key, "1x2x1");
	assert_int_equal(r->needed_repetitions, 1);
	assert_non_null(strstr(r->reason, "Insufficient"));
	assert_int_equal(warnings_of(r, "baseline_untestable"), 1);
	struct strbuf sb = STRBUF_INIT;
	rank_text_recommendation(&sb, r);
	assert_non_null(strstr(sb.buf, "verdict: insufficient\nno decision yet; leading for now: "
				       "1x2x1\n"));
	assert_null(strstr(sb.buf, "recommended:"));
	strbuf_release(&sb);
}

static void test_host_reference(void **state)
{
	struct fx_state *s = *state = fx_load("host-reference", NULL);
	const struct rank_result *r = &s->r;
	const struct rank_entry *h = entry(r, "host/pin=none/noise=none");
	assert_true(h->host_reference);
	assert_false(h->is_best);
	/* Compared with the baseline (the virtualization overhead), outside the family. */
	assert_int_equal(h->verdict, DECIDE_BETTER);
	assert_int_equal(r->ncomparisons, 1);
	assert_string_equal(r->best->config->rec.key, "1x2x1");
	assert_string_equal(r->recommended->config->rec.key, "1x2x1");
	struct strbuf sb = STRBUF_INIT;
	rank_entry_status(&sb, r, h);
	assert_string_equal(sb.buf, "host reference (not a VM shape)");
	strbuf_release(&sb);
}

/* No baseline, one run each: the leader by mean is named, nothing is decided. */
static void test_single_runs(void **state)
{
	struct fx_state *s = *state = fx_load("single-runs", NULL);
	const struct rank_result *r = &s->r;
	assert_null(r->baseline);
	assert_null(r->best);
	assert_int_equal(r->verdict, DECIDE_INSUFFICIENT);
	assert_string_equal(r->recommended->config->rec.key, "1x2x1");
	assert_non_null(strstr(r->reason, "Insufficient: no configuration has 2 successful runs"));
	assert_int_equal(r->needed_repetitions, 1);
}

static void test_decoy(void **state)
{
	struct fx_state *s = *state = fx_load("decoy", NULL);
	const struct rank_result *r = &s->r;
	/* Both are better than the baseline; they are not equivalent to each
	 * other, so the cheaper +10 % shape does not win on host CPUs. */
	assert_int_equal(entry(r, "1x2x1/cheap")->verdict, DECIDE_BETTER);
	assert_int_equal(entry(r, "1x2x1/cheap")->host_cpus, 2);
	assert_false(entry(r, "1x2x1/cheap")->tied_with_best);
	assert_string_equal(r->recommended->config->rec.key, "1x4x1/big");
	fx_teardown(state);
	/* Within +-2 % of the best: now the cost decides. */
	s = *state = fx_load("decoy-equivalent", NULL);
	assert_true(entry(&s->r, "1x2x1/cheap")->tied_with_best);
	assert_string_equal(s->r.recommended->config->rec.key, "1x2x1/cheap");
	assert_int_equal(s->r.verdict, DECIDE_BETTER);
}

static void test_one_of_five(void **state)
{
	struct fx_state *s = *state = fx_load("one-of-five", NULL);
	const struct rank_result *r = &s->r;
	const struct rank_entry *lucky = entry(r, "1x2x1/lucky");
	assert_int_equal(lucky->s.n, 1);
	assert_int_equal(lucky->verdict, DECIDE_INSUFFICIENT);
	assert_false(lucky->beats_baseline);
	/* 1x1x2 is equivalent, but lucky could still beat the baseline. */
	assert_int_equal(r->verdict, DECIDE_UNDECIDED);
	assert_false(r->nothing_beats_baseline);
	assert_ptr_not_equal(r->recommended, lucky);
	assert_int_equal(r->ncontention, 1);
	assert_string_equal(r->contention[0]->key, "1x2x1/lucky");
	assert_int_equal(r->needed_repetitions, 1);
	/* Its point estimate is shown, without an interval. */
	assert_close(r->contention[0]->gain, 1.0, 0.01);
	assert_true(isnan(r->contention[0]->gain_lo));
	assert_non_null(strstr(r->reason, "would make testable 1x2x1/lucky"));
}

static void test_environment(void **state)
{
	struct fx_state *s = *state = fx_load("environment", NULL);
	const struct rank_result *r = &s->r;
	assert_int_equal(r->nlevels, 2);
	assert_string_equal(r->levels[0], "noise=none");
	assert_string_equal(r->levels[1], "noise=spin");
	assert_int_equal(r->ndecisions, 3);
	assert_string_equal(r->baseline_decision->key, "2x1x1/pin=none");
	/* Within each level against the baseline's configuration at that level. */
	assert_close(entry(r, "1x2x1/pin=none/noise=spin")->gain, 76.0 / 80 - 1, 1e-3);
	assert_int_equal(entry(r, "1x2x1/pin=none/noise=spin")->verdict, DECIDE_WORSE);
	assert_int_equal(entry(r, "1x2x1/pin=none/noise=none")->verdict, DECIDE_BETTER);
	/* 2 decisions x 2 levels compared. */
	assert_int_equal(r->ncomparisons, 4);
	/* Worst case: burst is -5 % under noise; steady +5 % everywhere. */
	assert_int_equal(r->objective, DECIDE_OBJECTIVE_WORST);
	assert_string_equal(r->recommended_decision->key, "1x1x2/pin=none");
	assert_int_equal(r->verdict, DECIDE_BETTER);
	assert_close(r->recommended_decision->gain, 0.05, 1e-3);
	/* A decision, never an environment level. */
	assert_null(strstr(r->recommended_decision->key, "noise"));
	fx_teardown(state);

	/* Unmarked: the host's default shape is the baseline decision, at every level. */
	s = *state = fx_load("environment-default", NULL);
	assert_string_equal(s->r.baseline_source, "host default shape");
	assert_string_equal(s->r.baseline_decision->key, "2x1x1/pin=none");
	assert_ptr_equal(entry(&s->r, "2x1x1/pin=none/noise=spin")->decision, s->r.baseline_decision);
	assert_string_equal(s->r.recommended_decision->key, "1x1x2/pin=none");
	fx_teardown(state);

	/* The geometric mean: sqrt(1.3 * 0.95) = 1.111 beats 1.05. */
	s = *state = fx_load("environment", NULL);
	struct rank_options o;
	rank_options_init(&o);
	o.objective = DECIDE_OBJECTIVE_MEAN;
	struct ta_err err = { 0 };
	rank_result_release(&s->r);
	assert_int_equal(rank_compute_opts(&s->res, &o, &s->r, &err), 0);
	assert_string_equal(s->r.recommended_decision->key, "1x2x1/pin=none");
	assert_close(s->r.recommended_decision->gain, sqrt(1.3 * 0.95) - 1, 2e-3);
	assert_int_equal(s->r.verdict, DECIDE_BETTER);
}

static void test_environment_knob(void **state)
{
	struct fx_state *s = *state = fx_load("environment-knob-unmarked", NULL);
	/* Unmarked, thp is a decision knob: the thp=always shape wins. */
	assert_int_equal(s->r.nlevels, 1);
	assert_string_equal(s->r.recommended->config->rec.key,
			    "1x2x1/pin=none/thp=always/noise=none");
	fx_teardown(state);
	/* The sweep marks it as environment: a condition, and 1x2x1 is 10 %
	 * worse at thp=never.  The settings come back as they were stored. */
	s = *state = fx_load("environment-knob", NULL);
	struct rank_options o;
	rank_options_from_stored(&s->res, &o);
	assert_false(o.settings_unknown);
	assert_int_equal(o.nenvironment, 1);
	assert_string_equal(o.environment[0], "thp");
	assert_true(o.equivalence == 0.02);
	struct ta_err err = { 0 };
	rank_result_release(&s->r);
	assert_int_equal(rank_compute_opts(&s->res, &o, &s->r, &err), 0);
	const struct rank_result *r = &s->r;
	assert_int_equal(r->nlevels, 2);
	assert_string_equal(r->levels[1], "noise=none/thp=never");
	assert_int_equal(r->ndecisions, 2);
	assert_string_equal(r->decisions[1].key, "1x2x1/pin=none");
	assert_int_equal(r->decisions[1].verdict, DECIDE_WORSE);
	assert_int_equal(r->verdict, DECIDE_EQUIVALENT);
	assert_string_equal(r->recommended_decision->key, "2x1x1/pin=none");
}

static void test_outliers_not_status(void **state)
{
	struct fx_state *s = *state = fx_load("outlier", NULL);
	const struct rank_result *r = &s->r;
	const struct rank_entry *e = entry(r, "1x2x1");
	assert_int_equal(e->s.n, 6);
	assert_int_equal(e->noutliers, 1);
	assert_true(e->outlier[5] && !e->outlier[0]);
	assert_int_equal(warnings_of(r, "outliers"), 1);
	/* Five runs never flag: the baseline has none. */
	assert_int_equal(entry(r, "2x1x1")->noutliers, 0);
	struct strbuf sb = STRBUF_INIT;
	rank_text(&sb, r);
	assert_null(strstr(sb.buf, "outlier,"));
	char *row = strstr(sb.buf, "\n2     1x2x1");
	if (!row)
		row = strstr(sb.buf, "\n1     1x2x1");
	assert_non_null(row);
	char *eol = strchr(row + 1, '\n');
	*eol = '\0';
	assert_null(strstr(row, "outlier"));
	strbuf_release(&sb);
}

/* Status column and JSON verdicts as users read them. */
static void test_output(void **state)
{
	struct fx_state *s = *state = fx_load("high-variance", NULL);
	struct rank_result *r = &s->r;
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &sb, false);
	rank_json_recommendation(&w, r);
	assert_non_null(strstr(sb.buf, "\"verdict\":\"undecided\",\"decisive\":false"));
	assert_non_null(strstr(sb.buf, "\"contention\":[{\"key\":\"1x2x1\",\"verdict\":\"undecided\""));
	assert_non_null(strstr(sb.buf, "\"needed_repetitions\":"));
	strbuf_reset(&sb);
	json_init(&w, &sb, false);
	rank_json(&w, r);
	assert_non_null(strstr(sb.buf, "\"key\":\"1x2x1\",\"decision\":\"1x2x1\","
				       "\"environment\":\"noise=none\""));
	assert_non_null(strstr(sb.buf, "\"verdict\":\"baseline\""));
	assert_non_null(strstr(sb.buf, "\"eliminated_block\":0"));
	strbuf_reset(&sb);
	/* A race's elimination shows in the status column. */
	struct rank_entry *hi = (struct rank_entry *)entry(r, "1x2x1");
	hi->eliminated_block = 4;
	rank_entry_status(&sb, r, hi);
	assert_string_equal(sb.buf, "eliminated after block 4");
	strbuf_release(&sb);
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
	struct config_setting knobs[] = {
		{ "kvm_hv.dynamic_mt_modes", "0; reboot" },
		{ "thp", "never" },
		{ "smt", "off" },
	};
	char *cpus[] = { "0-1", "1'/><evil" };
	struct db_results_config c = { .rec = {
		.key = "k", .vcpus = 2, .sockets = 1, .dies = 1, .cores = 1, .threads = 2,
		.topology = "1x1x2", .pinning = "mine", .pinning_policy = "explicit",
		.noise = "none", .knobs = knobs, .nknobs = 3, .pinning_cpus = cpus,
		.npinning_cpus = 2,
	} };
	struct strbuf sb = STRBUF_INIT;
	deploy_host_commands(NULL, &c, &sb);
	assert_string_equal(strbuf_str(&sb),
			    "# knob 1: stored value is not a plain word; set it by hand\n"
			    "echo never > /sys/kernel/mm/transparent_hugepage/enabled\n"
			    "ppc64_cpu --smt=off\n");
	strbuf_reset(&sb);
	deploy_xml(&c, &sb);
	assert_non_null(strstr(sb.buf, "<vcpupin vcpu='0' cpuset='0-1'/>"));
	assert_non_null(strstr(sb.buf, "vCPU 1: stored cpuset is malformed"));
	assert_null(strstr(sb.buf, "evil"));
	strbuf_release(&sb);
}

static void test_cpuset_count(void **state)
{
	(void)state;
	const char *a[] = { "0-3,8", "8", "2" };
	assert_int_equal(decide_cpuset_count(a, 3), 5);
	const char *b[] = { "x" };
	assert_int_equal(decide_cpuset_count(b, 1), -1);
	const char *c[] = { "3-1" };
	assert_int_equal(decide_cpuset_count(c, 1), -1);
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
		cmocka_unit_test_teardown(test_tie_break_knobs_then_gang, fx_teardown),
		cmocka_unit_test_teardown(test_tie_break_cpus, fx_teardown),
		cmocka_unit_test_teardown(test_tie_break_gang_noise, fx_teardown),
		cmocka_unit_test_teardown(test_worse_never_beats, fx_teardown),
		cmocka_unit_test_teardown(test_baseline_one_run, fx_teardown),
		cmocka_unit_test_teardown(test_leading_is_best, fx_teardown),
		cmocka_unit_test_teardown(test_single_runs, fx_teardown),
		cmocka_unit_test_teardown(test_host_reference, fx_teardown),
		cmocka_unit_test_teardown(test_decoy, fx_teardown),
		cmocka_unit_test_teardown(test_one_of_five, fx_teardown),
		cmocka_unit_test_teardown(test_environment, fx_teardown),
		cmocka_unit_test_teardown(test_environment_knob, fx_teardown),
		cmocka_unit_test_teardown(test_outliers_not_status, fx_teardown),
		cmocka_unit_test_teardown(test_output, fx_teardown),
		cmocka_unit_test_teardown(test_redis_seeds, fx_teardown),
		cmocka_unit_test_teardown(test_redis_multi, fx_teardown),
		cmocka_unit_test_teardown(test_no_baseline, fx_teardown),
		cmocka_unit_test_teardown(test_environment_failing, fx_teardown),
		cmocka_unit_test_teardown(test_unknown_metric, fx_teardown),
		cmocka_unit_test_teardown(test_no_successful_runs, fx_teardown),
		cmocka_unit_test(test_unsafe_stored_values),
		cmocka_unit_test(test_cpuset_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
