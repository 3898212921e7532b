/* race-run: the scheduler of a raced sweep; see race-run.h. */
#include "race-run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../schema/db-plan.h"
#include "../schema/db-race.h"
#include "../util/strbuf.h"

/* The index of str in v[0..*n), appending it when new. */
static size_t intern(char ***v, size_t *n, const char *str)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], str))
			return i;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n] = xstrdup(str);
	return (*n)++;
}

static void strings_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

size_t race_run_group(const struct plan *plan, size_t *decision, size_t *level, char ***names,
		      size_t *nlevels, size_t *nreference)
{
	char **dec = NULL, **lev = NULL;
	size_t nd = 0, nl = 0;
	*nreference = 0;
	for (size_t i = 0; i < plan->nconfigs; i++) {
		const struct config_record *r = &plan->configs[i].rec;
		size_t before = nd;
		decision[i] = intern(&dec, &nd, r->decision);
		if (nd > before && r->host_reference)
			(*nreference)++;
		level[i] = intern(&lev, &nl, r->environment);
	}
	strings_free(lev, nl);
	if (names)
		*names = dec;
	else
		strings_free(dec, nd);
	*nlevels = nl ? nl : 1;
	return nd;
}

static int between_blocks(void *data, struct db *db, int64_t exp_id, int blocks,
			  struct ta_err *err);

int race_run_init(struct race_run *rr, struct db *db, int64_t exp_id, const struct plan *plan,
		  bool quiet, struct ta_err *err)
{
	memset(rr, 0, sizeof(*rr));
	rr->plan = plan;
	rr->metric = plan->cfg->bench.metric.name;
	rr->higher_is_better = plan->cfg->bench.metric.higher_is_better;
	rr->objective = plan->cfg->advisor.objective == OBJECTIVE_MEAN ? RACE_OBJECTIVE_MEAN
			: RACE_OBJECTIVE_WORST;
	rr->equivalence = plan->cfg->advisor.equivalence;
	rr->quiet = quiet;
	size_t n = plan->nconfigs, nref;
	rr->decision = xcalloc(n, sizeof(*rr->decision));
	rr->env = xcalloc(n, sizeof(*rr->env));
	rr->config_id = xcalloc(n, sizeof(*rr->config_id));
	rr->ndecisions = race_run_group(plan, rr->decision, rr->env, &rr->names, &rr->nenvs,
					&nref);
	rr->reference = xcalloc(rr->ndecisions, sizeof(*rr->reference));
	rr->first_config = xcalloc(rr->ndecisions, sizeof(*rr->first_config));
	rr->baseline = RACE_NONE;
	for (size_t i = n; i-- > 0;) {
		rr->first_config[rr->decision[i]] = i;
		if (plan->configs[i].rec.host_reference)
			rr->reference[rr->decision[i]] = true;
		if (plan->configs[i].rec.baseline)
			rr->baseline = rr->decision[i];
	}

	struct db_config_summary *cs;
	size_t ncs;
	if (db_config_summaries(db, exp_id, &cs, &ncs, err) < 0)
		goto fail;
	int rc = 0;
	for (size_t k = 0; k < ncs && rc == 0; k++) {
		size_t i = 0;
		while (i < n && strcmp(plan->configs[i].rec.key, cs[k].rec.key))
			i++;
		if (i == n)
			rc = err_set(err, EXIT_FAILURE_RUN, "configuration %s of experiment %lld "
				     "is not in the plan this host gives for its stored config",
				     cs[k].rec.key, (long long)exp_id);
		else
			rr->config_id[i] = cs[k].id;
	}
	db_config_summaries_free(cs, ncs);
	if (rc < 0)
		goto fail;
	rr->sched.between_blocks = between_blocks;
	rr->sched.data = rr;
	return 0;
fail:
	race_run_release(rr);
	return -1;
}

void race_run_release(struct race_run *rr)
{
	free(rr->decision);
	free(rr->env);
	free(rr->config_id);
	free(rr->reference);
	free(rr->first_config);
	strings_free(rr->names, rr->ndecisions);
	memset(rr, 0, sizeof(*rr));
}

/* The plan configuration with this database id, or n when there is none. */
static size_t plan_index(const struct race_run *rr, int64_t id)
{
	size_t i = 0;
	while (i < rr->plan->nconfigs && rr->config_id[i] != id)
		i++;
	return i;
}

/* The best's configuration at the same environment level as plan configuration i. */
static size_t against_config(const struct race_run *rr, size_t best, size_t i)
{
	for (size_t j = 0; j < rr->plan->nconfigs; j++)
		if (rr->decision[j] == best && rr->env[j] == rr->env[i])
			return j;
	return rr->first_config[best];
}

/* Loads what the race decides on: eliminated decisions and the observations. */
static int load_state(struct race_run *rr, struct db *db, int64_t exp_id, bool *eliminated,
		      struct race_obs **obs, size_t *nobs, struct ta_err *err)
{
	struct db_elimination *el;
	size_t nel;
	if (db_eliminations_list(db, exp_id, &el, &nel, err) < 0)
		return -1;
	for (size_t k = 0; k < nel; k++) {
		size_t i = plan_index(rr, el[k].configuration_id);
		if (i < rr->plan->nconfigs)
			eliminated[rr->decision[i]] = true;
	}
	db_eliminations_free(el, nel);

	struct db_race_value *v;
	size_t nv;
	if (db_race_values(db, exp_id, rr->metric, &v, &nv, err) < 0)
		return -1;
	*obs = xcalloc(nv + 1, sizeof(**obs));
	*nobs = 0;
	for (size_t k = 0; k < nv; k++) {
		size_t i = plan_index(rr, v[k].configuration_id);
		if (i < rr->plan->nconfigs)
			(*obs)[(*nobs)++] = (struct race_obs){ .decision = rr->decision[i],
							       .env = rr->env[i],
							       .block = v[k].repetition,
							       .value = v[k].value };
	}
	free(v);
	return 0;
}

/* Stores a race step and tells the user what it decided. */
static int record_step(struct race_run *rr, struct db *db, int64_t exp_id,
		       const struct race_step *st, struct ta_err *err)
{
	size_t n = rr->plan->nconfigs;
	struct db_race_elim_new *el = xcalloc(n + 1, sizeof(*el));
	size_t nel = 0;
	for (size_t k = 0; k < st->nelims; k++) {
		const struct race_elimination *e = &st->elims[k];
		for (size_t i = 0; i < n; i++) {
			if (rr->decision[i] != e->decision)
				continue;
			el[nel++] = (struct db_race_elim_new){
				.configuration_id = rr->config_id[i],
				.against_id = rr->config_id[against_config(rr, st->best, i)],
				.p = fmin(1, fmax(0, e->p)), .ratio = e->ratio };
		}
		if (!rr->quiet)
			fprintf(stderr, "race: after block %d: dropped %s (%+.1f %% against %s, "
				"p = %.3g)\n", st->blocks, rr->names[e->decision],
				(e->ratio - 1) * 100, rr->names[st->best], e->p);
	}
	const char *stop = st->stop == RACE_GO_ON ? NULL : race_stop_name(st->stop);
	int rc = db_race_record(db, exp_id, st->blocks, el, nel, stop, err);
	free(el);
	if (rc == 0 && stop && !rr->quiet)
		fprintf(stderr, "race: stopped after block %d: %s (%zu configuration%s left)\n",
			st->blocks, stop, st->nsurvivors, st->nsurvivors == 1 ? "" : "s");
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
	struct race_input in = { .ndecisions = rr->ndecisions, .nenvs = rr->nenvs,
				 .baseline = rr->baseline, .reference = rr->reference,
				 .blocks = blocks, .first_test = race.first_test,
				 .max_blocks = race.max_blocks,
				 .higher_is_better = rr->higher_is_better,
				 .objective = rr->objective, .alpha = RACE_ALPHA,
				 .equivalence = rr->equivalence };
	db_race_release(&race);
	if (skip)
		return 0;
	bool *eliminated = xcalloc(rr->ndecisions, sizeof(*eliminated));
	struct race_obs *obs = NULL;
	size_t nobs = 0;
	int rc = load_state(rr, db, exp_id, eliminated, &obs, &nobs, err);
	if (rc == 0) {
		in.eliminated = eliminated;
		in.obs = obs;
		in.nobs = nobs;
		struct race_step st;
		if (race_evaluate(&in, &st) < 0)
			rc = err_set(err, EXIT_FAILURE_RUN, "experiment %lld: the stored race "
				     "cannot be evaluated (first_test %d)", (long long)exp_id,
				     in.first_test);
		else
			rc = record_step(rr, db, exp_id, &st, err);
		race_step_release(&st);
	}
	free(obs);
	free(eliminated);
	return rc;
}

double race_run_expected(const struct plan *plan, int first_test, int nsim, size_t *max_out)
{
	size_t *decision = xcalloc(plan->nconfigs + 1, sizeof(*decision));
	size_t *env = xcalloc(plan->nconfigs + 1, sizeof(*env));
	size_t nenvs, nref;
	size_t nd = race_run_group(plan, decision, env, NULL, &nenvs, &nref);
	free(decision);
	free(env);
	/* Host references are decisions of their own in the grouping, never raced. */
	return race_expected_runs(nd - nref, nenvs, nref * nenvs, first_test,
				  plan->cfg->repetitions, plan->cfg->advisor.equivalence, plan->seed,
				  nsim, max_out);
}
