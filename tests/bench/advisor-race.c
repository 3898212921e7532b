/*
 * bench-advisor, racing: simulated sweeps of known truth fed through the
 * real racing rules (advisor/race.h, as the sweep's scheduler calls them)
 * and the real ranking (advisor/rank.h, on the same struct db_results the
 * database reader fills), to measure
 *  - power: one configuration truly +10 % at CV 5 % among 6, raced up to
 *    20 blocks (first test after block 3): recommended, and better than the
 *    baseline, in >= 90 % of sweeps;
 *  - cost: the same sweeps run as a full design with the same maximum (20
 *    blocks of everything): the race takes the full design's decision in
 *    >= 90 % of sweeps with on average >= 2x fewer runs.
 * Each sweep draws its 20 blocks once; the race sees the prefix of the
 * survivors' values, the full design all of them, so the two are compared
 * on the same data.  Prints each rate next to its target and exits 1 when
 * one is missed.  Usage: advisor-race [SWEEPS] (default 400).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/race.h"
#include "advisor/rank.h"
#include "advisor/stats.h"
#include "schema/db-results.h"
#include "util/strbuf.h"

#define NCONF 6
#define MAX_BLOCKS 20
#define FIRST_TEST 3
#define WINNER 3		/* the truly better configuration */
#define GAIN 0.10
#define CV 0.05

static double normal(struct stats_rng *rng)
{
	double u = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	return stats_normal_quantile(u);
}

/* One sweep's measurements: v[config][block]. */
struct sweep {
	double v[NCONF][MAX_BLOCKS];
};

static void sweep_draw(struct sweep *s, struct stats_rng *rng)
{
	for (int b = 0; b < MAX_BLOCKS; b++)
		for (int c = 0; c < NCONF; c++) {
			double mean = 100 * (c == WINNER ? 1 + GAIN : 1);
			s->v[c][b] = mean * (1 + CV * normal(rng));
		}
}

/*
 * The results as the database reader would return them: configuration c
 * has its values of blocks [0, blocks[c]), config 0 is the marked baseline.
 */
static void results_build(struct db_results *r, const struct sweep *s, const int *blocks,
			  const int *eliminated_after)
{
	memset(r, 0, sizeof(*r));
	r->exp.id = 1;
	r->exp.name = xstrdup("bench");
	r->exp.status = xstrdup("done");
	r->exp.primary_metric = xstrdup("ops");
	r->exp.higher_is_better = 1;
	r->nconfigs = NCONF;
	r->configs = xcalloc(NCONF, sizeof(*r->configs));
	for (int c = 0; c < NCONF; c++) {
		struct db_results_config *k = &r->configs[c];
		char key[64];
		snprintf(key, sizeof(key), "1x%dx1/pin=none/noise=none", c + 1);
		k->id = c + 1;
		k->rec.index = c;
		k->rec.key = xstrdup(key);
		k->rec.vcpus = k->rec.cores = c + 1;
		k->rec.sockets = k->rec.dies = k->rec.threads = 1;
		k->rec.pinning = xstrdup("none");
		k->rec.noise = xstrdup("none");
		k->rec.decision = xstrdup(key);
		k->rec.environment = xstrdup("noise=none");
		k->rec.pinning_policy = xstrdup("none");
		k->rec.baseline = c == 0;
		k->eliminated_block = eliminated_after ? eliminated_after[c] : 0;
		k->nruns = (size_t)blocks[c];
		k->runs = xcalloc(k->nruns + 1, sizeof(*k->runs));
		for (int b = 0; b < blocks[c]; b++) {
			struct db_results_run *run = &k->runs[b];
			run->id = c * MAX_BLOCKS + b + 1;
			run->repetition = b;
			run->order_index = b * NCONF + c;
			run->status = xstrdup("ok");
			run->topology_ok = -1;
			run->lost_events = -1;
			run->nmetrics = 1;
			run->metrics = xcalloc(1, sizeof(*run->metrics));
			run->metrics[0].name = xstrdup("ops");
			run->metrics[0].value = s->v[c][b];
			run->metrics[0].higher_is_better = 1;
			run->metrics[0].dir = METRIC_DIR_HIGHER;
		}
	}
}

/* Ranks the results; true when the winner is recommended with the verdict `better`. */
static bool decided_correctly(const struct sweep *s, const int *blocks, const int *elim)
{
	struct db_results res;
	struct rank_result r;
	struct ta_err err = { 0 };
	results_build(&res, s, blocks, elim);
	bool ok = false;
	if (rank_compute(&res, NULL, &r, &err) == 0) {
		ok = r.recommended && r.recommended->config->rec.index == WINNER &&
		     r.verdict == RANK_BETTER;
		rank_result_release(&r);
	} else {
		fprintf(stderr, "advisor-race: rank: %s\n", err.msg);
	}
	db_results_release(&res);
	return ok;
}

/* Races the sweep block by block; returns the runs it took, fills blocks and elim. */
static int race(const struct sweep *s, int *blocks, int *elim)
{
	bool eliminated[NCONF] = { false };
	struct race_obs obs[NCONF * MAX_BLOCKS];
	size_t nobs = 0;
	int runs = 0;
	memset(elim, 0, NCONF * sizeof(*elim));
	for (int b = 0; b < MAX_BLOCKS; b++) {
		for (int c = 0; c < NCONF; c++) {
			if (eliminated[c])
				continue;
			obs[nobs++] = (struct race_obs){ .decision = (size_t)c, .env = 0,
							 .block = b, .value = s->v[c][b] };
			blocks[c] = b + 1;
			runs++;
		}
		struct race_input in = {
			.ndecisions = NCONF, .nenvs = 1, .baseline = 0, .eliminated = eliminated,
			.obs = obs, .nobs = nobs, .blocks = b + 1, .first_test = FIRST_TEST,
			.max_blocks = MAX_BLOCKS, .higher_is_better = true,
			.objective = RACE_OBJECTIVE_WORST, .alpha = RACE_ALPHA,
			.equivalence = RACE_EQUIVALENCE_DEFAULT,
		};
		struct race_step st;
		if (race_evaluate(&in, &st) < 0) {
			fprintf(stderr, "advisor-race: race_evaluate refused its input\n");
			exit(2);
		}
		for (size_t i = 0; i < st.nelims; i++) {
			eliminated[st.elims[i].decision] = true;
			elim[st.elims[i].decision] = b + 1;
		}
		enum race_stop stop = st.stop;
		race_step_release(&st);
		if (stop != RACE_GO_ON)
			break;
	}
	return runs;
}

int main(int argc, char **argv)
{
	int nsweeps = argc > 1 ? atoi(argv[1]) : 400;
	if (nsweeps < 1) {
		fprintf(stderr, "usage: advisor-race [SWEEPS]\n");
		return 2;
	}
	struct stats_rng rng;
	stats_rng_seed(&rng, 20261201);
	int race_ok = 0, full_ok = 0, agree = 0;
	double race_runs = 0, full_runs = 0;
	for (int i = 0; i < nsweeps; i++) {
		struct sweep s;
		sweep_draw(&s, &rng);
		int blocks[NCONF], elim[NCONF];
		race_runs += race(&s, blocks, elim);
		bool r = decided_correctly(&s, blocks, elim);
		int all[NCONF];
		for (int c = 0; c < NCONF; c++)
			all[c] = MAX_BLOCKS;
		full_runs += NCONF * MAX_BLOCKS;
		bool f = decided_correctly(&s, all, NULL);
		race_ok += r;
		full_ok += f;
		agree += r == f;
	}
	double pr = (double)race_ok / nsweeps, pf = (double)full_ok / nsweeps;
	double saving = full_runs / race_runs;
	double pa = (double)agree / nsweeps;
	bool power_met = pr >= 0.90, same_met = pa >= 0.90, saving_met = saving >= 2.0;
	printf("racing (%d sweeps; 6 configurations, one +10 %% at CV 5 %%, up to %d blocks, "
	       "first test after %d)\n", nsweeps, MAX_BLOCKS, FIRST_TEST);
	printf("  power: raced, recommended as better  %5.1f %%   target >= 90 %%      %s\n",
	       100 * pr, power_met ? "ok" : "MISSED");
	printf("  full design, recommended as better   %5.1f %%   (reference)\n", 100 * pf);
	printf("  same decision as full (per sweep)    %5.1f %%   target >= 90 %%      %s\n",
	       100 * pa, same_met ? "ok" : "MISSED");
	printf("  runs: race %.1f, full %.0f: %.2fx fewer          target >= 2x        %s\n",
	       race_runs / nsweeps, full_runs / nsweeps, saving, saving_met ? "ok" : "MISSED");
	return power_met && same_met && saving_met ? 0 : 1;
}
