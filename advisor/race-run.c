/* race-run: the scheduler of a raced sweep; see race-run.h. */
#include "race-run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decide/decide.h"
#include "../decide/input.h"
#include "../schema/db-race.h"
#include "../schema/db-results.h"
#include "../util/strbuf.h"
#include "rank.h"

static int between_blocks(void *data, struct db *db, int64_t exp_id, int blocks,
			  struct ta_err *err);

int race_run_init(struct race_run *rr, struct db *db, int64_t exp_id, const struct plan *plan,
		  bool quiet, struct ta_err *err)
{
	memset(rr, 0, sizeof(*rr));
	rr->plan = plan;
	rr->quiet = quiet;
	rr->sched.between_blocks = between_blocks;
	rr->sched.data = rr;
	return 0;
}

void race_run_release(struct race_run *rr)
{
	memset(rr, 0, sizeof(*rr));
}

/* decide_value_fn: the run's value of the metric named by ctx. */
static double metric_value(const struct db_results_run *run, void *ctx)
{
	const struct db_results_metric *m = db_results_run_metric(run, ctx);
	return m ? m->value : NAN;
}

/* The stored configuration of decision d at level l (the first one there), or NULL. */
static const struct db_results_config *config_of(const struct db_results *res,
						 const struct decide_sweep *s, size_t d, size_t l)
{
	for (size_t i = 0; i < res->nconfigs; i++)
		if (s->configs[i].decision == d && s->configs[i].level == l)
			return &res->configs[i];
	return NULL;
}

/*
 * The race's stop as one line: the reason, then the decisions still in
 * the race by name (a count beyond a few): "decided (2 decisions left: A,
 * B)", "one survivor (1 decision left: A)".
 */
static void stop_line(const struct decide_sweep *s, const struct decide_race_step *st,
		      const char *stop)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "race: stopped after block %d: %s (%zu decision%s left", st->blocks,
		    stop, st->nsurvivors, st->nsurvivors == 1 ? "" : "s");
	if (st->nsurvivors && st->nsurvivors <= 4) {
		const char *sep = ": ";
		for (size_t d = 0; d < s->in.ndecisions; d++) {
			const struct decide_option *o = &s->in.decisions[d];
			bool dropped = o->host_reference || o->elim.block;
			for (size_t k = 0; k < st->nelims; k++)
				dropped |= st->elims[k].decision == d;
			if (dropped)
				continue;
			strbuf_addf(&sb, "%s%s", sep, s->keys[d]);
			sep = ", ";
		}
	}
	fprintf(stderr, "%s)\n", strbuf_str(&sb));
	strbuf_release(&sb);
}

/* Stores a race look and tells the user what it decided. */
static int record_step(const struct race_run *rr, struct db *db, int64_t exp_id,
		       const struct db_results *res, const struct decide_sweep *s,
		       const struct decide_race_step *st, struct ta_err *err)
{
	struct db_race_elim_new *el = xcalloc(res->nconfigs + 1, sizeof(*el));
	size_t nel = 0;
	for (size_t k = 0; k < st->nelims; k++) {
		const struct decide_elimination *e = &st->elims[k];
		for (size_t i = 0; i < res->nconfigs; i++) {
			if (s->configs[i].decision != e->decision)
				continue;
			const struct db_results_config *against = e->against == DECIDE_NONE ? NULL
				: config_of(res, s, e->against, s->configs[i].level);
			el[nel++] = (struct db_race_elim_new){
				.configuration_id = res->configs[i].id,
				.against_id = against ? against->id : 0,
				.p = fmin(1, fmax(0, e->p)), .ratio = e->ratio };
		}
		if (rr->quiet)
			continue;
		if (e->against == DECIDE_NONE)
			fprintf(stderr, "race: after block %d: dropped %s (its failure rate is shown "
				"above advisor.max_failure_rate, p = %.3g)\n", st->blocks,
				s->keys[e->decision], e->p);
		else
			fprintf(stderr, "race: after block %d: dropped %s (%+.1f %% against %s, "
				"p = %.3g)\n", st->blocks, s->keys[e->decision], (e->ratio - 1) * 100,
				s->keys[e->against], e->p);
	}
	const char *stop = st->stop == DECIDE_GO_ON ? NULL : decide_stop_name(st->stop);
	int rc = db_race_record(db, exp_id, st->blocks, el, nel, stop, err);
	free(el);
	if (rc == 0 && stop && !rr->quiet)
		stop_line(s, st, stop);
	return rc;
}

static int between_blocks(void *data, struct db *db, int64_t exp_id, int blocks,
			  struct ta_err *err)
{
	struct race_run *rr = data;
	struct db_race race;
	bool found;
	if (db_race_get(db, exp_id, &race, &found, err) < 0)
		return -1;
	bool skip = !found || race.stop_reason || blocks <= race.blocks_evaluated;
	int first_test = race.first_test, max_blocks = race.max_blocks;
	db_race_release(&race);
	if (skip)
		return 0;
	char id[32];
	snprintf(id, sizeof(id), "%lld", (long long)exp_id);
	struct db_results res;
	if (db_results_load(db, id, &res, err) < 0)
		return -1;
	/* The settings stored with the experiment: what rank will decide with. */
	struct rank_options o;
	rank_options_from_stored(&res, &o);
	struct decide_roles roles = { o.environment, o.nenvironment };
	struct decide_sweep s;
	const struct metric_spec *m = &rr->plan->cfg->bench.metric;
	decide_sweep_build(&res, metric_value, m->name, m->higher_is_better, &roles, &s);
	struct decide_settings st;
	decide_settings_init(&st);
	st.objective = o.objective;
	st.equivalence = o.equivalence;
	st.max_failure_rate = o.max_failure_rate;
	struct decide_race_step step;
	int rc;
	if (decide_race(&s.in, &st, blocks, first_test, max_blocks, &step) < 0)
		rc = err_set(err, EXIT_FAILURE_RUN, "experiment %lld: the stored race cannot be "
			     "evaluated (first_test %d)", (long long)exp_id, first_test);
	else
		rc = record_step(rr, db, exp_id, &res, &s, &step, err);
	decide_race_step_release(&step);
	decide_sweep_release(&s);
	db_results_release(&res);
	return rc;
}

/* Distinct decisions (env false) or levels (env true) of the plan; *refs: host references. */
static size_t plan_classes(const struct plan *p, bool env, size_t *refs)
{
	size_t n = 0;
	*refs = 0;
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct config_record *r = &p->configs[i].rec;
		const char *name = env ? r->environment : r->decision;
		size_t j = 0;
		while (j < i && strcmp(env ? p->configs[j].rec.environment
					   : p->configs[j].rec.decision, name))
			j++;
		if (j == i) {
			n++;
			*refs += r->host_reference;
		}
	}
	return n;
}

double race_run_expected(const struct plan *plan, int first_test, int nsim, size_t *max_out)
{
	size_t refs, unused;
	size_t nd = plan_classes(plan, false, &refs);
	size_t nl = plan_classes(plan, true, &unused);
	/* The engine per look grows with the configurations: keep plan quick. */
	size_t per = (nd ? nd : 1) * (nl ? nl : 1);
	int sims = per > 24 ? (int)fmax(20, (double)nsim * 24 / (double)per) : nsim;
	double e = decide_race_expected_runs(nd - refs, nl ? nl : 1, refs * (nl ? nl : 1),
					     first_test, plan->cfg->repetitions,
					     plan->cfg->advisor.equivalence, plan->seed, sims, max_out);
	/* The simulation runs every level of every decision; the plan may have dropped some. */
	double scale = *max_out ? (double)plan->nruns / (double)*max_out : 1;
	*max_out = plan->nruns;
	return e * scale;
}
