/*
 * Unit tests of advisor/hostfx, the host x configuration diagnostic, on
 * sweeps of known truth: effects alike on every host (no interaction, the
 * same best), a configuration that wins on one host and loses on the other
 * (the best differs, the interaction shown), one host (no diagnostic),
 * incomplete blocks and eliminated configurations left out, effects
 * measured within blocks (a host twice as fast changes nothing).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advisor/hostfx.h"
#include "util/strbuf.h"

#define NC 3
#define NB 8

/*
 * A sweep of NC configurations x NB blocks, block b on host hosts[b],
 * value[c][b] the metric (<= 0: the run failed).
 */
struct sweep {
	struct db_results res;
	struct db_results_config configs[NC];
	struct db_results_run runs[NC][NB];
	struct db_results_metric metrics[NC][NB];
};

static void build(struct sweep *s, const char *const hosts[NB], double value[NC][NB])
{
	memset(s, 0, sizeof(*s));
	static char *const keys[NC] = { "a", "b", "c" };
	s->res.configs = s->configs;
	s->res.nconfigs = NC;
	for (int c = 0; c < NC; c++) {
		s->configs[c].rec.key = keys[c];
		s->configs[c].rec.baseline = c == 0;
		s->configs[c].runs = s->runs[c];
		s->configs[c].nruns = NB;
		for (int b = 0; b < NB; b++) {
			struct db_results_run *r = &s->runs[c][b];
			r->repetition = b;
			r->status = value[c][b] > 0 ? "ok" : "failed";
			r->host = (char *)hosts[b];
			s->metrics[c][b] = (struct db_results_metric){ .name = "ops",
								       .value = value[c][b] };
			r->metrics = &s->metrics[c][b];
			r->nmetrics = value[c][b] > 0;
		}
	}
}

static const char *const two_hosts[NB] = { "n1", "n2", "n1", "n2", "n1", "n2", "n1", "n2" };

/* A small deterministic wiggle so that blocks of one host are not identical. */
static double wiggle(int c, int b)
{
	return 1 + 0.01 * (((c * 7 + b * 3) % 5) - 2);
}

static void test_same_everywhere(void **state)
{
	(void)state;
	double v[NC][NB];
	for (int b = 0; b < NB; b++) {
		/* n2 is twice as fast: the blocks cancel it. */
		double host = b % 2 ? 2 : 1;
		v[0][b] = 100 * host * wiggle(0, b);
		v[1][b] = 110 * host * wiggle(1, b);
		v[2][b] = 90 * host * wiggle(2, b);
	}
	struct sweep s;
	build(&s, two_hosts, v);
	struct hostfx h;
	assert_true(hostfx_compute(&s.res, "ops", true, &h));
	assert_int_equal(h.nhosts, 2);
	assert_string_equal(h.hosts[0], "n1");
	assert_int_equal(h.nblocks, 8);
	assert_int_equal(h.blocks[0], 4);
	assert_false(h.best_differs);
	assert_string_equal(h.configs[h.best[0]]->rec.key, "b");
	assert_int_equal(h.df1, 2);
	assert_int_equal(h.df2, 12);
	assert_true(h.p > 0.05);
	/* b is ~10 % above the block mean on both hosts. */
	for (int i = 0; i < 2; i++)
		assert_true(fabs(exp(h.effect[1 * h.nhosts + i]) - 1.104) < 0.03);
	struct strbuf out = STRBUF_INIT;
	hostfx_text(&out, &h);
	assert_non_null(strstr(out.buf, "the same best on every host (b)"));
	assert_non_null(strstr(out.buf, "no sign that the host changes them"));
	strbuf_release(&out);
	/* Lower is better: the same data, c best. */
	hostfx_release(&h);
	assert_true(hostfx_compute(&s.res, "ops", false, &h));
	assert_string_equal(h.configs[h.best[1]]->rec.key, "c");
	hostfx_release(&h);
}

static void test_winner_changes(void **state)
{
	(void)state;
	double v[NC][NB];
	for (int b = 0; b < NB; b++) {
		bool n2 = b % 2;
		v[0][b] = 100 * wiggle(0, b);
		v[1][b] = (n2 ? 80 : 120) * wiggle(1, b);	/* wins on n1, loses on n2 */
		v[2][b] = 105 * wiggle(2, b);
	}
	struct sweep s;
	build(&s, two_hosts, v);
	struct hostfx h;
	assert_true(hostfx_compute(&s.res, "ops", true, &h));
	assert_true(h.best_differs);
	assert_string_equal(h.configs[h.best[0]]->rec.key, "b");
	assert_string_equal(h.configs[h.best[1]]->rec.key, "c");
	assert_true(h.p < 0.001);
	struct strbuf out = STRBUF_INIT;
	hostfx_text(&out, &h);
	assert_non_null(strstr(out.buf, "the best configuration differs by host"));
	assert_non_null(strstr(out.buf, "the hosts change the configurations' effects"));
	strbuf_reset(&out);
	struct json_writer w;
	json_init(&w, &out, false);
	hostfx_json(&w, &h);
	assert_non_null(strstr(out.buf, "\"best_differs\":true"));
	assert_non_null(strstr(out.buf, "{\"host\":\"n2\",\"blocks\":4,\"best\":\"c\"}"));
	strbuf_reset(&out);
	hostfx_html(&out, &h);
	assert_non_null(strstr(out.buf, "<h2 id='hosts'>"));
	strbuf_release(&out);
	hostfx_release(&h);
}

static void test_not_applicable_and_left_out(void **state)
{
	(void)state;
	double v[NC][NB];
	for (int c = 0; c < NC; c++)
		for (int b = 0; b < NB; b++)
			v[c][b] = 100 + c * 10 + b;
	static const char *const one_host[NB] = { "n1", "n1", "n1", "n1", "n1", "n1", "n1",
						  "n1" };
	struct sweep s;
	build(&s, one_host, v);
	struct hostfx h;
	assert_false(hostfx_compute(&s.res, "ops", true, &h));
	/* An unknown metric: nothing to look at. */
	build(&s, two_hosts, v);
	assert_false(hostfx_compute(&s.res, "latency", true, &h));
	/* A failed run makes its block incomplete; an eliminated configuration is left out. */
	v[2][0] = 0;
	build(&s, two_hosts, v);
	assert_true(hostfx_compute(&s.res, "ops", true, &h));
	assert_int_equal(h.nblocks, 7);
	assert_int_equal(h.blocks[0], 3);
	assert_int_equal(h.nconfigs, 3);
	hostfx_release(&h);
	s.configs[2].eliminated_block = 3;
	assert_true(hostfx_compute(&s.res, "ops", true, &h));
	assert_int_equal(h.nconfigs, 2);
	assert_int_equal(h.nblocks, 8);
	hostfx_release(&h);
	/* A block whose runs came from two hosts is not paired: left out. */
	s.runs[1][3].host = "n1";
	assert_true(hostfx_compute(&s.res, "ops", true, &h));
	assert_int_equal(h.nblocks, 7);
	hostfx_release(&h);
	/* Two blocks on two hosts: effects, but no test. */
	s.configs[2].eliminated_block = 0;
	s.runs[2][0].status = "ok";
	s.metrics[2][0].value = 120;
	s.runs[2][0].nmetrics = 1;
	for (int c = 0; c < NC; c++)
		s.configs[c].nruns = 2;
	assert_true(hostfx_compute(&s.res, "ops", true, &h));
	assert_true(isnan(h.p));
	struct strbuf out = STRBUF_INIT;
	hostfx_text(&out, &h);
	assert_non_null(strstr(out.buf, "too few blocks per host"));
	strbuf_release(&out);
	hostfx_release(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_everywhere),
		cmocka_unit_test(test_winner_changes),
		cmocka_unit_test(test_not_applicable_and_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
