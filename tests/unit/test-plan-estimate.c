/*
 * Unit tests of plan's estimate (advisor/plan-estimate.h), as a table of
 * cases: built-in figures without history; a window learned only from runs
 * of the same benchmark, an overrun only from benchmarks of the same kind
 * (a command's only from the same command); each overhead learned from its
 * own kind of run once there are enough of them (a booted run that spent
 * less than its boot outside its window booted ahead), else reused and
 * booted-ahead runs from what booting runs spent beyond their boot; the
 * sweep overhead from
 * sweeps of the same runner; the timeout as an upper bound when nothing
 * says how long the benchmark takes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advisor/plan-estimate.h"

#define GUEST_EBIZZY \
	"name: g\ntopology: [1x2x1]\nbenchmark: {kind: ebizzy, argv: [ebizzy, -S, \"3\"], " \
	"duration: 3}\n"
#define GUEST_EBIZZY_5 \
	"name: g5\ntopology: [1x2x1]\nbenchmark: {kind: ebizzy, argv: [ebizzy, -S, \"5\"], " \
	"duration: 5}\n"
#define HOST_CMD \
	"name: h\nguest: {runner: host}\ntopology: [1x1x1]\nbenchmark: {kind: command, " \
	"argv: [fake-bench, \"250\"], parse: 'x (?<ops>[0-9]+)', metric: ops, duration: 1}\n"
#define HOST_CMD_OTHER \
	"name: h2\nguest: {runner: host}\ntopology: [1x1x1]\nbenchmark: {kind: command, " \
	"argv: [other-bench], parse: 'x (?<ops>[0-9]+)', metric: ops, duration: 2}\n"
#define HOST_CMD_NO_DURATION \
	"name: h0\nguest: {runner: host}\ntopology: [1x1x1]\nbenchmark: {kind: command, " \
	"argv: [fake-bench, \"250\"], parse: 'x (?<ops>[0-9]+)', metric: ops, duration: 0, " \
	"timeout: 100}\n"

/* A stored sweep: its YAML, wall time, runs that ran, and n sampled runs alike. */
struct stored {
	const char *yaml;	/* first, so { YAML, .wall = ... } reads */
	double wall;
	size_t nran;
	size_t nfailed;		/* of nran, failed, taking failed_span in all */
	double failed_span;
	size_t n;		/* sampled runs, all like this: */
	bool host, booted;
	double span, window;
	size_t nboot;		/* of them, the first nboot booted (guests) */
	double boot_span;
	double boot_s;		/* their boot_seconds */
	size_t nahead;		/* of the nboot, the last nahead took ahead_span */
	double ahead_span;
};

struct estimate_case {
	const char *what;
	const char *plan_yaml;	/* the sweep planned */
	size_t nruns, host_runs, boot_runs, ahead_runs, reused_runs;
	struct stored history[1];
	size_t nhistory;
	double seconds;		/* expected */
	bool upper_bound;
	size_t window_samples, boot_samples, reused_samples, host_samples, sweep_samples;
	size_t ahead_samples;
	bool same_benchmark;
};

static const struct estimate_case cases[] = {
	{ .what = "no history: duration + built-in overheads", .plan_yaml = GUEST_EBIZZY,
	  .nruns = 6, .boot_runs = 2, .reused_runs = 4,
	  .seconds = 6 * 3 + 2 * PLAN_BOOT_RUN_OVERHEAD_SECONDS +
		     4 * PLAN_REUSED_RUN_OVERHEAD_SECONDS },
	{ .what = "no history, host runs", .plan_yaml = HOST_CMD, .nruns = 100, .host_runs = 100,
	  .seconds = 100 * 1 + 100 * PLAN_HOST_RUN_OVERHEAD_SECONDS },
	{ .what = "no duration, no history: the timeout bounds it",
	  .plan_yaml = HOST_CMD_NO_DURATION, .nruns = 10, .host_runs = 10,
	  .seconds = 10 * 100 + 10 * PLAN_HOST_RUN_OVERHEAD_SECONDS, .upper_bound = true },
	{ .what = "the same command: its window and overhead, the sweep's rest",
	  .plan_yaml = HOST_CMD, .nruns = 100, .host_runs = 100,
	  .history = { { HOST_CMD, .wall = 2.0, .nran = 50, .n = 40, .host = true, .span = 0.03,
			 .window = 0.025 } }, .nhistory = 1,
	  /* 100 x (0.025 + 0.005) + (2.0 - 50 x 0.03) */
	  .seconds = 100 * 0.03 + 0.5, .window_samples = 40, .host_samples = 40,
	  .sweep_samples = 1, .same_benchmark = true },
	{ .what = "a failed run's time is neither a run's nor the sweep's",
	  .plan_yaml = HOST_CMD, .nruns = 100, .host_runs = 100,
	  .history = { { HOST_CMD, .wall = 302.0, .nran = 51, .nfailed = 1, .failed_span = 300,
			 .n = 40, .host = true, .span = 0.03, .window = 0.025 } }, .nhistory = 1,
	  /* as above: 100 x 0.03 + (302 - 300 - 50 x 0.03) */
	  .seconds = 100 * 0.03 + 0.5, .window_samples = 40, .host_samples = 40,
	  .sweep_samples = 1, .same_benchmark = true },
	{ .what = "no duration, but this command ran before: no longer a bound",
	  .plan_yaml = HOST_CMD_NO_DURATION, .nruns = 10, .host_runs = 10,
	  .history = { { HOST_CMD_NO_DURATION, .wall = 0.3, .nran = 10, .n = 10, .host = true,
			 .span = 0.03, .window = 0.02 } }, .nhistory = 1,
	  .seconds = 10 * 0.03 + 0, .window_samples = 10, .host_samples = 10,
	  .sweep_samples = 1, .same_benchmark = true },
	{ .what = "another command: no window, no overrun from it", .plan_yaml = HOST_CMD,
	  .nruns = 10, .host_runs = 10,
	  .history = { { HOST_CMD_OTHER, .wall = 1.0, .nran = 10, .n = 10, .host = true,
			 .span = 0.05, .window = 0.04 } }, .nhistory = 1,
	  .seconds = 10 * (1 + 0.01) + 0.5, .host_samples = 10, .sweep_samples = 1 },
	{ .what = "another ebizzy: the duration plus its overrun; boots and reuse learned",
	  .plan_yaml = GUEST_EBIZZY, .nruns = 6, .boot_runs = 2, .reused_runs = 4,
	  .history = { { GUEST_EBIZZY_5, .wall = 100, .nran = 10, .n = 10, .span = 6.5,
			 .window = 5.5, .nboot = 3, .boot_span = 15.5 } }, .nhistory = 1,
	  /* window 3 + 0.5; boot 10, reused 1; sweep 100 - 10 x mean span (9.2) = 8 */
	  .seconds = 6 * 3.5 + 2 * 10 + 4 * 1 + 8, .window_samples = 10, .boot_samples = 3,
	  .reused_samples = 7, .sweep_samples = 1, .ahead_samples = 3 },
	{ .what = "one boot stored: the boot figure stays built in", .plan_yaml = GUEST_EBIZZY,
	  .nruns = 6, .boot_runs = 2, .reused_runs = 4,
	  .history = { { GUEST_EBIZZY, .wall = 40, .nran = 5, .n = 5, .span = 4.0, .window = 3.2,
			 .nboot = 1, .boot_span = 12.2 } }, .nhistory = 1,
	  /* window 3.2 (same); reused 0.8; sweep 40 - 5 x 5.64 = 11.8 */
	  .seconds = 6 * 3.2 + 2 * PLAN_BOOT_RUN_OVERHEAD_SECONDS + 4 * 0.8 + 11.8,
	  .window_samples = 5, .reused_samples = 4, .sweep_samples = 1, .same_benchmark = true },
	{ .what = "reused and booted-ahead runs, none stored: what booting runs did beyond their boot",
	  .plan_yaml = GUEST_EBIZZY, .nruns = 6, .boot_runs = 1, .ahead_runs = 1,
	  .reused_runs = 4,
	  .history = { { GUEST_EBIZZY, .wall = 45, .nran = 4, .n = 4, .window = 3.2,
			 .nboot = 4, .boot_span = 10, .boot_s = 6 } }, .nhistory = 1,
	  /* window 3.2; boot 6.8, of it 6 the boot: 0.8 for the others; sweep 45 - 40 */
	  .seconds = 6 * 3.2 + 6.8 + 0.8 + 4 * 0.8 + 5, .window_samples = 4, .boot_samples = 4,
	  .ahead_samples = 4, .reused_samples = 4, .sweep_samples = 1, .same_benchmark = true },
	{ .what = "a booted run that spent less than its boot outside its window booted ahead",
	  .plan_yaml = GUEST_EBIZZY, .nruns = 8, .boot_runs = 2, .ahead_runs = 2,
	  .reused_runs = 4,
	  .history = { { GUEST_EBIZZY, .wall = 40, .nran = 6, .n = 6, .span = 3.3, .window = 3.2,
			 .nboot = 4, .boot_span = 10, .boot_s = 6, .nahead = 2,
			 .ahead_span = 4 } }, .nhistory = 1,
	  /* boot 6.8, ahead 0.8, reused 0.1; sweep 40 - (2 x 10 + 2 x 4 + 2 x 3.3) */
	  .seconds = 8 * 3.2 + 2 * 6.8 + 2 * 0.8 + 4 * 0.1 + 5.4, .window_samples = 6,
	  .boot_samples = 2, .ahead_samples = 2, .reused_samples = 2, .sweep_samples = 1,
	  .same_benchmark = true },
	{ .what = "a host sweep teaches a guest sweep only its host figure",
	  .plan_yaml = GUEST_EBIZZY, .nruns = 6, .boot_runs = 2, .reused_runs = 4,
	  .history = { { HOST_CMD, .wall = 2.0, .nran = 50, .n = 40, .host = true, .span = 0.03,
			 .window = 0.025 } }, .nhistory = 1,
	  .seconds = 6 * 3 + 2 * PLAN_BOOT_RUN_OVERHEAD_SECONDS +
		     4 * PLAN_REUSED_RUN_OVERHEAD_SECONDS,
	  .host_samples = 40 },
};

static void check_case(const struct estimate_case *c)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("plan.yaml", c->plan_yaml, strlen(c->plan_yaml),
						&err);
	if (!cfg)
		fail_msg("%s: %s", c->what, err.msg);
	struct plan p = { .cfg = cfg, .nruns = c->nruns };
	struct db_timing hist = { 0 };
	struct db_timing_experiment ex[3];
	struct db_timing_run runs[3][64];
	for (size_t i = 0; i < c->nhistory; i++) {
		const struct stored *s = &c->history[i];
		for (size_t k = 0; k < s->n; k++)
			runs[i][k] = (struct db_timing_run){
				.host = s->host, .booted = k < s->nboot,
				.boot_seconds = k < s->nboot ? s->boot_s : 0,
				.span = k + s->nahead >= s->nboot && k < s->nboot ? s->ahead_span
					: k < s->nboot ? s->boot_span : s->span,
				.window = s->window };
		ex[i] = (struct db_timing_experiment){ .id = (int64_t)i + 1,
			.config_yaml = (char *)s->yaml, .wall = s->wall, .nran = s->nran,
			.nfailed = s->nfailed, .failed_span = s->failed_span,
			.runs = runs[i], .nruns = s->n };
	}
	hist.v = ex;
	hist.n = c->nhistory;
	struct plan_estimate e;
	plan_estimate(&p, c->host_runs, c->boot_runs, c->ahead_runs, c->reused_runs, &hist, &e);
	if (fabs(e.seconds - c->seconds) > 1e-6 * (1 + c->seconds))
		fail_msg("%s: %.6f s, expected %.6f", c->what, e.seconds, c->seconds);
	assert_int_equal(e.upper_bound, c->upper_bound);
	assert_int_equal(e.experiments, c->nhistory);
	assert_int_equal(e.window_same_benchmark, c->same_benchmark);
	size_t got[] = { e.window.samples, e.boot.samples, e.reused.samples, e.host.samples,
			 e.sweep.samples, e.ahead.samples };
	size_t want[] = { c->window_samples, c->boot_samples, c->reused_samples,
			  c->host_samples, c->sweep_samples, c->ahead_samples };
	static const char *const names[] = { "window", "boot", "reused", "host", "sweep",
					     "ahead" };
	for (size_t i = 0; i < 6; i++)
		if (got[i] != want[i])
			fail_msg("%s: %s learned from %zu, expected %zu", c->what, names[i], got[i],
				 want[i]);
	config_free(cfg);
}

static void test_estimate_cases(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
}

/* A stored sweep that no longer parses still teaches its runs' overheads. */
static void test_unparsable_history(void **state)
{
	struct ta_err err = { 0 };
	struct sweep_config *cfg = config_parse("plan.yaml", GUEST_EBIZZY, strlen(GUEST_EBIZZY),
						&err);
	assert_non_null(cfg);
	struct plan p = { .cfg = cfg, .nruns = 4 };
	struct db_timing_run runs[4];
	for (size_t k = 0; k < 4; k++)
		runs[k] = (struct db_timing_run){ .span = 5, .window = 3 };
	struct db_timing_experiment ex = { .id = 1, .config_yaml = "benchmark: [not, a, map]\n",
					   .wall = 20, .nran = 4, .runs = runs, .nruns = 4 };
	struct db_timing hist = { &ex, 1 };
	struct plan_estimate e;
	plan_estimate(&p, 0, 0, 0, 4, &hist, &e);
	assert_int_equal(e.reused.samples, 4);
	assert_true(fabs(e.reused.seconds - 2) < 1e-9);
	assert_int_equal(e.window.samples, 0);
	assert_true(fabs(e.seconds - (4 * 3 + 4 * 2 + 0)) < 1e-9);
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_estimate_cases),
		cmocka_unit_test(test_unparsable_history),
	};
	return cmocka_run_group_tests_name("plan-estimate", tests, NULL, NULL);
}
