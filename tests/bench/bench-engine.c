/*
 * bench-engine: the decision engine (decide/decide.h) on simulated sweeps
 * of known truth, in memory: every rule of the list measured on
 * truths chosen to break it, each rate printed next to its target; exits 1
 * when one is missed.  Run by `make bench-advisor` (besides the CLI
 * drivers, which run the same truths through the real commands).
 *
 * A truth: decisions x environment levels, each with a true mean; runs
 * drawn mean * exp(cv z) (z normal), optionally a fraction of runs k times
 * slower (heavy tails), a boot effect shared by the runs of one boot
 * (guest.reuse_runs blocks per boot), and failures among a configuration's
 * slowest runs.  A sweep is run as the full design (every block of
 * everything) or raced (decide_race after each block from first_test on,
 * eliminated decisions run no more), then decided by decide_compute on
 * what was run.  Everything is seeded: the figures are reproducible.
 *
 * Usage: bench-engine [SCALE] (default 1: the sweep counts below; 0.25 for
 * a quick look).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide/decide.h"
#include "decide/stats.h"

#define MAXD 200
#define MAXL 3
#define MAXB 130

struct truth {
	size_t nd, nl;
	size_t baseline;
	double mean[MAXD][MAXL];	/* log gains over 0 */
	double cv;			/* run-to-run sd of the logs */
	double slow_p, slow_factor;	/* heavy tails */
	double boot_sd;			/* boot-to-boot sd of the logs */
	int boot_blocks;		/* blocks per boot (0: a boot per run) */
	size_t failing;			/* decision whose slowest runs fail (DECIDE_NONE: none) */
	double fail_p;			/* its failure rate */
	double block_sd;		/* block-to-block sd shared by every configuration */
	double trend;			/* log change per block (drift) */
};

struct sweep {
	const struct truth *t;
	struct decide_option opt[MAXD];
	struct decide_config cf[MAXD * MAXL];
	struct decide_run *runs;
	size_t nruns, cap;
	struct decide_input in;
	double boot[MAXD * MAXL][MAXB];	/* each configuration's boot effect per block */
	int64_t boot_id[MAXD * MAXL][MAXB];
	double block[MAXB];		/* the block effect every configuration shares */
};

static struct stats_rng rng;

static double uniform(void)
{
	return ((double)(stats_rng_next(&rng) >> 11) + 0.5) / 9007199254740992.0;
}

static void sweep_init(struct sweep *s, const struct truth *t)
{
	memset(s, 0, offsetof(struct sweep, runs));
	s->t = t;
	s->nruns = 0;
	if (!s->runs) {
		s->cap = MAXD * MAXL * MAXB;
		s->runs = calloc(s->cap, sizeof(*s->runs));
	}
	for (size_t d = 0; d < t->nd; d++)
		s->opt[d] = (struct decide_option){ .key = "d", .host_cpus = 4 };
	for (size_t c = 0; c < t->nd * t->nl; c++)
		s->cf[c] = (struct decide_config){ c / t->nl, c % t->nl };
	s->in = (struct decide_input){
		.decisions = s->opt, .ndecisions = t->nd, .configs = s->cf,
		.nconfigs = t->nd * t->nl, .nlevels = t->nl, .runs = s->runs,
		.baseline = t->baseline, .higher_is_better = true, .boot_seconds = NAN,
		.run_seconds = NAN,
	};
	for (int b = 0; b < MAXB; b++)
		s->block[b] = t->block_sd * stats_rng_normal(&rng) + t->trend * b;
	/* Boots: one per decision (all its levels share the guest) per boot_blocks blocks. */
	for (size_t d = 0; d < t->nd; d++) {
		double e = 0;
		int64_t id = 0;
		for (int b = 0; b < MAXB; b++) {
			bool fresh = !t->boot_blocks || b % t->boot_blocks == 0;
			if (fresh) {
				e = t->boot_sd * stats_rng_normal(&rng);
				id = t->boot_blocks ? (int64_t)(1 + d * MAXB + (size_t)b) : 0;
			}
			for (size_t l = 0; l < t->nl; l++) {
				s->boot[d * t->nl + l][b] = e;
				s->boot_id[d * t->nl + l][b] = id;
			}
		}
	}
}

/* One run of configuration c in block b. */
static void sweep_run(struct sweep *s, size_t c, int b)
{
	const struct truth *t = s->t;
	size_t d = c / t->nl;
	double z = stats_rng_normal(&rng);
	double lv = t->mean[d][c % t->nl] + s->boot[c][b] + s->block[b] + t->cv * z;
	if (uniform() < t->slow_p)	/* drawn always: the same stream with and without tails */
		lv -= log(t->slow_factor);
	/* Informative failures: the slowest fail_p of its runs fail. */
	bool failed = d == t->failing && z < stats_normal_quantile(t->fail_p);
	s->runs[s->nruns++] = (struct decide_run){
		.config = c, .block = b, .boot = s->boot_id[c][b], .order = (int)s->nruns,
		.status = failed ? DECIDE_RUN_FAILED : DECIDE_RUN_OK, .value = 100 * exp(lv),
		.gang = NAN };
	s->in.nruns = s->nruns;
}

/* Runs block b of every configuration whose decision still races. */
static int sweep_block(struct sweep *s, int b)
{
	int n = 0;
	for (size_t c = 0; c < s->in.nconfigs; c++)
		if (!s->opt[s->cf[c].decision].elim.block) {
			sweep_run(s, c, b);
			n++;
		}
	return n;
}

static int sweep_full(struct sweep *s, int blocks)
{
	int n = 0;
	for (int b = 0; b < blocks; b++)
		n += sweep_block(s, b);
	return n;
}

/* Races up to max_blocks; returns the runs spent.  elim[d]: eliminated. */
static int sweep_race(struct sweep *s, const struct decide_settings *st, int first, int max)
{
	int n = 0;
	double *levels = malloc((size_t)(max + 1) * sizeof(*levels));
	decide_race_levels(first, max, levels);
	for (int b = 0; b < max; b++) {
		n += sweep_block(s, b);
		struct decide_race_step rs;
		/* A failed look is a broken bench, never a race that simply ran on. */
		if (decide_race_look(&s->in, st, b + 1, first, max, levels[b + 1], &rs) < 0)
			abort();
		for (size_t i = 0; i < rs.nelims; i++)
			s->opt[rs.elims[i].decision].elim = (struct decide_stored_elim){
				b + 1, rs.elims[i].against, rs.elims[i].p };
		enum decide_stop stop = rs.stop;
		decide_race_step_release(&rs);
		if (stop != DECIDE_GO_ON)
			break;
	}
	free(levels);
	return n;
}

/* The verdict after a race, as rank gives it: at the level of the race's last look. */
static void race_verdict(const struct sweep *s, const struct decide_settings *st, int first,
			 int max, struct decide_result *r)
{
	struct decide_settings rs = *st;
	decide_race_settings(&s->in, first, max, &rs);
	if (decide_compute(&s->in, &rs, r) < 0)
		abort();
}

static bool report(const char *what, double rate, const char *op, double target)
{
	bool ok = !strcmp(op, "<=") ? rate <= target + 1e-12 : rate >= target - 1e-12;
	printf("  %-70s %6.2f %%   target %s %5.1f %%   %s\n", what, 100 * rate, op, 100 * target,
	       ok ? "ok" : "MISSED");
	return ok;
}

static void note(const char *what, double value, const char *unit)
{
	printf("  %-70s %6.2f %s\n", what, value, unit);
}

static int scaled(int n, double scale)
{
	int k = (int)(n * scale);
	return k < 10 ? 10 : k;
}

/* A truth of nd decisions x nl levels, all equal, CV cv. */
static void truth_equal(struct truth *t, size_t nd, size_t nl, double cv)
{
	memset(t, 0, sizeof(*t));
	t->nd = nd;
	t->nl = nl;
	t->baseline = 0;
	t->cv = cv;
	t->failing = DECIDE_NONE;
}

/*
 * "Equivalent by elimination": the verdict keeps the baseline while some
 * decision was eliminated and its own data show it neither worse nor
 * equivalent.  The engine never says so (those are `unsettled`).
 */
static bool equivalent_by_elimination(const struct decide_result *r)
{
	if (r->verdict != DECIDE_EQUIVALENT)
		return false;
	for (size_t d = 0; d < r->ndecisions; d++)
		if (r->decisions[d].elim.block && r->decisions[d].verdict != DECIDE_WORSE &&
		    r->decisions[d].verdict != DECIDE_EQUIVALENT &&
		    r->decisions[d].verdict != DECIDE_FAILING)
			return true;
	return false;
}

static struct sweep sw;

/* Null: all equal; full and raced; false better, equivalence by elimination, eliminations. */
static bool bench_null(size_t nl, int sweeps)
{
	struct truth t;
	truth_equal(&t, 6, nl, 0.05);
	struct decide_settings st;
	decide_settings_init(&st);
	int fb_full = 0, fb_race = 0, eq_elim = 0, elims = 0, runs_race = 0;
	for (int k = 0; k < sweeps; k++) {
		struct decide_result r;
		sweep_init(&sw, &t);
		sweep_full(&sw, 10);
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		fb_full += r.verdict == DECIDE_BETTER;
		decide_result_release(&r);
		sweep_init(&sw, &t);
		runs_race += sweep_race(&sw, &st, 3, 20);
		race_verdict(&sw, &st, 3, 20, &r);
		fb_race += r.verdict == DECIDE_BETTER;
		eq_elim += equivalent_by_elimination(&r);
		for (size_t d = 1; d < t.nd; d++)
			elims += sw.opt[d].elim.block > 0;
		decide_result_release(&r);
	}
	printf("null: 6 equal decisions x %zu level%s, CV 5 %%; full 10 blocks, raced up to 20 "
	       "(%d sweeps each)\n", nl, nl == 1 ? "" : "s", sweeps);
	bool ok = report("full design: verdict better (a false win)", (double)fb_full / sweeps,
			 "<=", 0.05);
	ok &= report("raced: verdict better (a false win)", (double)fb_race / sweeps, "<=", 0.05);
	ok &= report("raced: `equivalent` by elimination", (double)eq_elim / sweeps, "<=", 0);
	ok &= report("raced: an equal decision eliminated (per decision)",
		     (double)elims / (5.0 * sweeps), "<=", 0.05);
	note("raced: runs per sweep (full design 20 blocks: 120 per level)",
	     (double)runs_race / sweeps, "runs");
	return ok;
}

/*
 * A raced null with few decisions (the baseline and nd - 1 equal ones), up to
 * max blocks: the stop must not turn a look's chance crossing into `better`
 * (issue 33: 12 % with 2 decisions at 30 blocks when each look took 0.05).
 */
static bool bench_race_null(size_t nd, int max, int sweeps)
{
	struct truth t;
	truth_equal(&t, nd, 1, 0.05);
	struct decide_settings st;
	decide_settings_init(&st);
	int fb = 0, fb_full = 0, decisive = 0;
	double runs = 0;
	for (int k = 0; k < sweeps; k++) {
		struct decide_result r;
		sweep_init(&sw, &t);
		runs += sweep_race(&sw, &st, 3, max);
		race_verdict(&sw, &st, 3, max, &r);
		fb += r.verdict == DECIDE_BETTER;
		decisive += decide_decisive(&r);
		decide_result_release(&r);
		sweep_init(&sw, &t);
		sweep_full(&sw, max);
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		fb_full += r.verdict == DECIDE_BETTER;
		decide_result_release(&r);
	}
	printf("race-null: %zu equal decisions (the baseline one), CV 5 %%, raced up to %d blocks "
	       "(%d sweeps)\n", nd, max, sweeps);
	bool ok = report("raced: verdict better (a false win)", (double)fb / sweeps, "<=", 0.05);
	note("full design: verdict better (a false win)", 100.0 * fb_full / sweeps, "%");
	note("raced: decisive (`equivalent` here)", 100.0 * decisive / sweeps, "%");
	printf("  runs: raced %.1f, full %zu per sweep: %.2fx fewer\n", runs / sweeps,
	       nd * (size_t)max, (double)(nd * (size_t)max) * sweeps / runs);
	return ok;
}

/* One decision +gain at every level; raced and full: better, right pick, baseline kept. */
static bool bench_gain(size_t nl, double gain, double cv, int sweeps, double target_better,
		       double target_kept)
{
	struct truth t;
	truth_equal(&t, 6, nl, cv);
	for (size_t l = 0; l < nl; l++)
		t.mean[3][l] = log1p(gain);
	struct decide_settings st;
	decide_settings_init(&st);
	int right_race = 0, right_full = 0, kept = 0, winner_elim = 0, agree = 0;
	double runs_race = 0, runs_full = 0;
	for (int k = 0; k < sweeps; k++) {
		struct decide_result r;
		sweep_init(&sw, &t);
		runs_race += sweep_race(&sw, &st, 3, 20);
		race_verdict(&sw, &st, 3, 20, &r);
		bool rr = r.verdict == DECIDE_BETTER && r.pick == 3;
		right_race += rr;
		kept += decide_decisive(&r) && r.pick == t.baseline;
		winner_elim += sw.opt[3].elim.block > 0;
		decide_result_release(&r);
		sweep_init(&sw, &t);
		runs_full += sweep_full(&sw, 20);
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		bool rf = r.verdict == DECIDE_BETTER && r.pick == 3;
		right_full += rf;
		agree += rr == rf;
		decide_result_release(&r);
	}
	printf("gain: one decision %+.0f %% at each of %zu level%s, CV %.0f %%, raced up to 20 "
	       "blocks (%d sweeps)\n", 100 * gain, nl, nl == 1 ? "" : "s", 100 * cv, sweeps);
	bool ok = true;
	if (target_better > 0)
		ok &= report("raced: recommended `better`, the right pick", (double)right_race / sweeps,
			     ">=", target_better);
	else
		note("raced: recommended `better`, the right pick",
		     100.0 * right_race / sweeps, "%");
	ok &= report("raced: the baseline kept (decisively)", (double)kept / sweeps, "<=",
		     target_kept);
	note("raced: the better decision eliminated", 100.0 * winner_elim / sweeps, "%");
	note("full design (20 blocks): recommended `better`, the right pick",
	     100.0 * right_full / sweeps, "%");
	note("raced and full design: the same correct decision (per sweep)",
	     100.0 * agree / sweeps, "%");
	printf("  runs: raced %.1f, full %.0f per sweep: %.2fx fewer\n", runs_race / sweeps,
	       runs_full / sweeps, runs_full / runs_race);
	return ok;
}

/* Heavy tails: CV 10 %, 5 % of runs 3x slower; +10 % at n = 10, and the null. */
static bool bench_tails(int sweeps)
{
	struct decide_settings st;
	decide_settings_init(&st);
	bool ok = true;
	for (size_t nd = 2; nd <= 6; nd += nd < 3 ? 1 : 3) {
		double det[2] = { 0 };
		for (int tails = 0; tails < 2; tails++) {
			struct truth t;
			truth_equal(&t, nd, 1, 0.10);
			t.mean[nd - 1][0] = log(1.10);
			t.slow_p = tails ? 0.05 : 0;
			t.slow_factor = 3;
			for (int k = 0; k < sweeps; k++) {
				/* The same draws with and without the slow runs. */
				stats_rng_seed(&rng, 7919 * nd + (uint64_t)k);
				sweep_init(&sw, &t);
				sweep_full(&sw, 10);
				struct decide_result r;
				if (decide_compute(&sw.in, &st, &r) < 0)
					abort();
				det[tails] += r.verdict == DECIDE_BETTER && r.pick == nd - 1;
				decide_result_release(&r);
			}
		}
		printf("heavy tails: %zu decisions, CV 10 %%, 5 %% of runs 3x slower, n = 10 "
		       "(%d sweeps)\n", nd, sweeps);
		note("+10 %: detected (better, the right pick) without the slow runs",
		     100 * det[0] / sweeps, "%");
		note("+10 %: detected with them", 100 * det[1] / sweeps, "%");
		ok &= report("detection lost to the slow runs (points)",
			     (det[0] - det[1]) / sweeps, "<=", 0.10);
	}
	struct truth t;
	truth_equal(&t, 6, 1, 0.10);
	t.slow_p = 0.05;
	t.slow_factor = 3;
	int fb = 0, flagged = 0, slow_runs = 0;
	for (int k = 0; k < sweeps; k++) {
		sweep_init(&sw, &t);
		sweep_full(&sw, 10);
		struct decide_result r;
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		fb += r.verdict == DECIDE_BETTER;
		for (size_t i = 0; i < sw.nruns; i++) {
			bool slow = log(sw.runs[i].value / 100) < -log(3) / 2;
			slow_runs += slow;
			flagged += slow && r.runs[i].outlier;
		}
		decide_result_release(&r);
	}
	printf("heavy tails: all equal, 6 decisions (%d sweeps)\n", sweeps);
	ok &= report("all equal: verdict better (a false win)", (double)fb / sweeps, "<=", 0.05);
	note("slow runs flagged as outliers", 100.0 * flagged / (slow_runs ? slow_runs : 1), "%");
	return ok;
}

/* A decision failing 30 % of its runs, the slowest ones, otherwise equal. */
static bool bench_failures(int sweeps)
{
	struct truth t;
	truth_equal(&t, 4, 1, 0.05);
	t.failing = 2;
	t.fail_p = 0.30;
	struct decide_settings st;
	decide_settings_init(&st);
	int fb = 0, with = 0, stated = 0;
	for (int k = 0; k < sweeps; k++) {
		sweep_init(&sw, &t);
		sweep_full(&sw, 10);
		struct decide_result r;
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		fb += r.verdict == DECIDE_BETTER && r.pick == 2;
		const struct decide_decision_out *o = &r.decisions[2];
		if (o->n_failed) {
			with++;
			stated += o->failing || o->more_failures;
		}
		decide_result_release(&r);
	}
	printf("failures: one decision fails 30 %% of its runs (its slowest), otherwise equal, "
	       "CV 5 %%, n = 10 (%d sweeps)\n", sweeps);
	bool ok = report("it is recommended `better` (survivors look faster)", (double)fb / sweeps,
			 "<=", 0.05);
	ok &= report("verdicts on it, with failures, that flag them", (double)stated /
		     (with ? with : 1), ">=", 1);
	return ok;
}

/* Boots: boot sd = run sd = 3 %, 4 blocks per boot, all equal, 12 blocks. */
static bool bench_boots(int sweeps)
{
	struct truth t;
	truth_equal(&t, 6, 1, 0.03);
	t.boot_sd = 0.03;
	t.boot_blocks = 4;
	struct decide_settings st;
	decide_settings_init(&st);
	int fb = 0, naive = 0, estimable = 0;
	double sdb = 0, sdr = 0;
	for (int k = 0; k < sweeps; k++) {
		sweep_init(&sw, &t);
		sweep_full(&sw, 12);
		struct decide_result r;
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		fb += r.verdict == DECIDE_BETTER;
		if (r.components.estimable) {
			estimable++;
			sdb += r.components.sd_boot;
			sdr += r.components.sd_run;
		}
		decide_result_release(&r);
		/* The same runs taken as independent (the boots forgotten). */
		for (size_t i = 0; i < sw.nruns; i++)
			sw.runs[i].boot = 0;
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		naive += r.verdict == DECIDE_BETTER;
		decide_result_release(&r);
	}
	printf("boots: boot sd = run sd = 3 %%, guest.reuse_runs 4, all equal, 12 blocks "
	       "(%d sweeps)\n", sweeps);
	bool ok = report("verdict better (a false win), boots as the replicates",
			 (double)fb / sweeps, "<=", 0.05);
	note("the same runs taken as independent: verdict better", 100.0 * naive / sweeps, "%");
	note("estimated boot-to-boot sd (truth 3 %)", 100 * sdb / (estimable ? estimable : 1), "%");
	note("estimated run-to-run sd (truth 3 %)", 100 * sdr / (estimable ? estimable : 1), "%");
	return ok;
}

/*
 * Drift: reported (p < 0.05) on truths without a trend -- independent runs,
 * block effects shared by every configuration, boots serving 4 blocks --
 * and found when the mean truly rises 0.5 % per block.  12 blocks, 6
 * decisions, CV 3 %, full design.
 */
static bool bench_drift(int sweeps)
{
	static const struct {
		const char *what;
		double block_sd, boot_sd, trend;
		int boot_blocks;
	} cases[] = {
		{ "no trend, independent runs: drift reported", 0, 0, 0, 0 },
		{ "no trend, block effects (sd 3 %): drift reported", 0.03, 0, 0, 0 },
		{ "no trend, boots of 4 blocks (sd 3 %): drift reported", 0, 0.03, 0, 4 },
		{ "+0.5 % per block: drift reported", 0, 0, 0.005, 0 },
	};
	printf("drift: 6 equal decisions, CV 3 %%, 12 blocks, full design (%d sweeps each)\n",
	       sweeps);
	bool ok = true;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct truth t;
		truth_equal(&t, 6, 1, 0.03);
		t.block_sd = cases[i].block_sd;
		t.boot_sd = cases[i].boot_sd;
		t.boot_blocks = cases[i].boot_blocks;
		t.trend = cases[i].trend;
		struct decide_settings st;
		decide_settings_init(&st);
		int reported = 0;
		for (int k = 0; k < sweeps; k++) {
			sweep_init(&sw, &t);
			sweep_full(&sw, 12);
			struct decide_result r;
			if (decide_compute(&sw.in, &st, &r) < 0)
				abort();
			reported += r.drift.tested && r.drift.p < DECIDE_ALPHA;
			decide_result_release(&r);
		}
		if (t.trend > 0)
			ok &= report(cases[i].what, (double)reported / sweeps, ">=", 0.80);
		else
			ok &= report(cases[i].what, (double)reported / sweeps, "<=", 0.07);
	}
	return ok;
}

/* The picks of two experiments and their shared configurations' shifts: compare's status. */
static enum decide_compare_status compare_two(const struct truth *a, const struct truth *b,
					      int blocks, bool *both)
{
	struct decide_settings st;
	decide_settings_init(&st);
	static struct sweep x, y;
	struct decide_result ra, rb;
	sweep_init(&x, a);
	sweep_full(&x, blocks);
	sweep_init(&y, b);
	sweep_full(&y, blocks);
	if (decide_compute(&x.in, &st, &ra) < 0)
		abort();
	if (decide_compute(&y.in, &st, &rb) < 0)
		abort();
	size_t n = x.in.nconfigs;
	struct decide_shift *sh = calloc(n, sizeof(*sh));
	double *va = calloc(MAXB, sizeof(double)), *vb = calloc(MAXB, sizeof(double));
	for (size_t c = 0; c < n; c++) {
		size_t na = 0, nb = 0;
		for (size_t i = 0; i < x.nruns; i++)
			if (x.runs[i].config == c && x.runs[i].status == DECIDE_RUN_OK)
				va[na++] = x.runs[i].value;
		for (size_t i = 0; i < y.nruns; i++)
			if (y.runs[i].config == c && y.runs[i].status == DECIDE_RUN_OK)
				vb[nb++] = y.runs[i].value;
		decide_shift(va, na, vb, nb, true, 0.05 / (double)n, 0.02, &sh[c]);
	}
	char ka[32] = "", kb[32] = "";
	if (ra.pick != DECIDE_NONE)
		snprintf(ka, sizeof(ka), "d%zu", ra.pick);
	if (rb.pick != DECIDE_NONE)
		snprintf(kb, sizeof(kb), "d%zu", rb.pick);
	*both = decide_decisive(&ra) && decide_decisive(&rb);
	struct decide_compare_side sa = { decide_decisive(&ra), ka,
					  decide_separates(&ra, &x.in, rb.pick) };
	struct decide_compare_side sb = { decide_decisive(&rb), kb,
					  decide_separates(&rb, &y.in, ra.pick) };
	struct decide_comparison cmp;
	decide_compare(&sa, &sb, sh, n, &cmp);
	enum decide_compare_status s = cmp.status;
	free(sh);
	free(va);
	free(vb);
	decide_result_release(&ra);
	decide_result_release(&rb);
	return s;
}

static bool bench_compare(int sweeps)
{
	struct truth same, moved;
	truth_equal(&same, 4, 1, 0.05);
	same.mean[1][0] = log(1.10);
	int changed = 0, changed_null = 0;
	bool both;
	for (int k = 0; k < sweeps; k++) {
		changed += compare_two(&same, &same, 10, &both) == DECIDE_CHANGED_WINNER;
	}
	struct truth null;
	truth_equal(&null, 4, 1, 0.05);
	for (int k = 0; k < sweeps; k++)
		changed_null += compare_two(&null, &null, 10, &both) == DECIDE_CHANGED_WINNER;
	moved = same;
	moved.mean[1][0] = 0;
	moved.mean[2][0] = log(1.10);
	int detected = 0, decisive = 0;
	for (int k = 0; k < sweeps; k++) {
		enum decide_compare_status s = compare_two(&same, &moved, 10, &both);
		if (both) {
			decisive++;
			detected += s == DECIDE_CHANGED_WINNER;
		}
	}
	printf("compare: 4 decisions, CV 5 %%, 10 blocks each (%d pairs of experiments)\n", sweeps);
	bool ok = report("a rerun of the same truth (one +10 %) flags a changed winner",
			 (double)changed / sweeps, "<=", 0.05);
	ok &= report("a rerun of the same truth (all equal) flags a changed winner",
		     (double)changed_null / sweeps, "<=", 0.05);
	ok &= report("the winner moved (+10 %, both decisive): changed winner detected",
		     (double)detected / (decisive ? decisive : 1), ">=", 0.90);
	note("pairs where both decided", 100.0 * decisive / sweeps, "%");
	return ok;
}

/* extend by the number asked: undecided sweeps with a true +10 % decide? */
static bool bench_extend(size_t nd, double cv, int blocks, int sweeps, double target)
{
	struct truth t;
	truth_equal(&t, nd, 1, cv);
	t.mean[nd - 1][0] = log(1.10);
	struct decide_settings st;
	decide_settings_init(&st);
	int undecided = 0, decided = 0, right = 0, capped = 0, none = 0;
	double asked = 0;
	for (int k = 0; k < sweeps; k++) {
		sweep_init(&sw, &t);
		sweep_full(&sw, blocks);
		struct decide_result r;
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		int need = r.needed;
		bool open = r.verdict == DECIDE_UNDECIDED;
		decide_result_release(&r);
		if (!open)
			continue;
		undecided++;
		if (need <= 0) {
			none++;
			continue;
		}
		if (need > DECIDE_NEEDED_CAP) {
			capped++;
			continue;
		}
		asked += need;
		for (int b = blocks; b < blocks + need; b++)
			sweep_block(&sw, b);
		if (decide_compute(&sw.in, &st, &r) < 0)
			abort();
		decided += decide_decisive(&r);
		right += r.verdict == DECIDE_BETTER && r.pick == nd - 1;
		decide_result_release(&r);
	}
	printf("extend: %zu decisions, one +10 %%, CV %.0f %%, %d blocks, then `extend` by "
	       "needed_repetitions (%d sweeps, %d undecided)\n", nd, 100 * cv, blocks, sweeps,
	       undecided);
	double rate = (double)decided / (undecided ? undecided : 1);
	bool ok = true;
	if (target > 0)
		ok = report("undecided sweeps decided by the blocks asked for", rate, ">=", target);
	else
		note("undecided sweeps decided by the blocks asked for", 100 * rate, "%");
	note("of them, `better` with the right pick", 100.0 * right / (undecided ? undecided : 1),
	     "%");
	note("blocks asked for, on average",
	     asked / (undecided - capped - none ? undecided - capped - none : 1), "blocks");
	note("asked for none (a bug if any)", 100.0 * none / (undecided ? undecided : 1), "%");
	note("asked for more than the cap (100 blocks)",
	     100.0 * capped / (undecided ? undecided : 1), "%");
	return ok;
}

/* 200 equal decisions raced: each one's chance to be eliminated. */
static bool bench_many(int sweeps)
{
	struct truth t;
	truth_equal(&t, 200, 1, 0.05);
	struct decide_settings st;
	decide_settings_init(&st);
	int elims = 0;
	for (int k = 0; k < sweeps; k++) {
		sweep_init(&sw, &t);
		sweep_race(&sw, &st, 3, 10);
		for (size_t d = 1; d < t.nd; d++)
			elims += sw.opt[d].elim.block > 0;
	}
	printf("many: 200 equal decisions, CV 5 %%, raced up to 10 blocks (%d races)\n", sweeps);
	return report("an equal decision eliminated (per decision)",
		      (double)elims / (199.0 * sweeps), "<=", 0.05);
}

/* The interval holds the truth: normal and heavy-tailed runs, n = 3, 5, 10. */
static bool bench_coverage(int sweeps)
{
	static const int ns[] = { 3, 5, 10 };
	struct decide_settings st;
	decide_settings_init(&st);
	bool ok = true;
	printf("coverage: baseline and one decision +10 %%, CV 5 %% (%d sweeps each)\n", sweeps);
	for (int tails = 0; tails < 2; tails++)
		for (size_t i = 0; i < 3; i++) {
			struct truth t;
			truth_equal(&t, 2, 1, 0.05);
			t.mean[1][0] = log(1.10);
			t.slow_p = tails ? 0.05 : 0;
			t.slow_factor = 3;
			int held = 0;
			for (int k = 0; k < sweeps; k++) {
				sweep_init(&sw, &t);
				sweep_full(&sw, ns[i]);
				struct decide_result r;
				if (decide_compute(&sw.in, &st, &r) < 0)
					abort();
				const struct decide_cmp *c = &r.decisions[1].objective;
				held += c->lo <= log(1.10) && log(1.10) <= c->hi;
				decide_result_release(&r);
			}
			char what[96];
			snprintf(what, sizeof(what), "95 %% interval holds the true gain, n = %d%s",
				 ns[i], tails ? ", 5 % of runs 3x slower" : "");
			ok &= report(what, (double)held / sweeps, ">=", 0.93);
		}
	return ok;
}

/* argv[2]: the benches to run, by name (comma-separated); all without it. */
static const char *only;

static bool want(const char *name)
{
	if (!only)
		return true;
	size_t n = strlen(name);
	for (const char *p = only; (p = strstr(p, name)); p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1;
	if (!(scale > 0)) {
		fprintf(stderr, "usage: bench-engine [SCALE [BENCH,...]]\n");
		return 2;
	}
	only = argc > 2 ? argv[2] : NULL;
	stats_rng_seed(&rng, 20261202);
	bool ok = true;
	ok &= !want("null") || bench_null(1, scaled(400, scale));
	ok &= !want("null") || bench_null(3, scaled(200, scale));
	static const int race_max[] = { 10, 30, 50 };
	for (size_t nd = 2; nd <= 6; nd += nd == 3 ? 3 : 1)
		for (size_t i = 0; i < 3; i++)
			ok &= !want("race-null") || bench_race_null(nd, race_max[i],
								    scaled(400, scale));
	ok &= !want("gain") || bench_gain(3, 0.04, 0.03, scaled(200, scale), 0, 0.02);
	ok &= !want("gain") || bench_gain(3, 0.10, 0.05, scaled(200, scale), 0.90, 0.02);
	ok &= !want("gain") || bench_gain(1, 0.10, 0.05, scaled(400, scale), 0.90, 0.02);
	ok &= !want("tails") || bench_tails(scaled(2000, scale));
	ok &= !want("failures") || bench_failures(scaled(2000, scale));
	ok &= !want("boots") || bench_boots(scaled(1000, scale));
	ok &= !want("drift") || bench_drift(scaled(1000, scale));
	ok &= !want("compare") || bench_compare(scaled(1000, scale));
	ok &= !want("extend") || bench_extend(6, 0.05, 5, scaled(1000, scale), 0.80);
	ok &= !want("extend") || bench_extend(6, 0.05, 3, scaled(1000, scale), 0);
	ok &= !want("extend") || bench_extend(3, 0.05, 3, scaled(1000, scale), 0);
	ok &= !want("extend") || bench_extend(6, 0.10, 5, scaled(1000, scale), 0);
	ok &= !want("many") || bench_many(scaled(20, scale));
	ok &= !want("coverage") || bench_coverage(scaled(2000, scale));
	free(sw.runs);
	printf("%s\n", ok ? "bench-engine: every target met" : "bench-engine: a target was missed");
	return ok ? 0 : 1;
}
