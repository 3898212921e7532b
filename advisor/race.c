/* race: the elimination rules of a raced sweep; see race.h. */
#include "race.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/strbuf.h"
#include "stats.h"

/* The per-block objective of every decision configuration: o[d * blocks + b], NAN if unknown. */
static double *block_objectives(const struct race_input *in)
{
	size_t nd = in->ndecisions, ne = in->nenvs, nb = (size_t)in->blocks;
	double sign = in->higher_is_better ? 1.0 : -1.0;
	double *lv = xmalloc((nd * ne * nb + 1) * sizeof(*lv));
	for (size_t i = 0; i < nd * ne * nb; i++)
		lv[i] = NAN;
	for (size_t i = 0; i < in->nobs; i++) {
		const struct race_obs *o = &in->obs[i];
		if (o->block < 0 || o->block >= in->blocks || !(o->value > 0) || !isfinite(o->value))
			continue;
		lv[(o->decision * ne + o->env) * nb + (size_t)o->block] = sign * log(o->value);
	}
	double *obj = xmalloc((nd * nb + 1) * sizeof(*obj));
	/* Levels are compared through the baseline at the same level and block. */
	size_t ref = in->baseline != RACE_NONE ? in->baseline : 0;
	for (size_t d = 0; d < nd; d++) {
		for (size_t b = 0; b < nb; b++) {
			if (ne == 1) {
				obj[d * nb + b] = lv[d * nb + b];
				continue;
			}
			double acc = in->objective == RACE_OBJECTIVE_WORST ? INFINITY : 0;
			for (size_t e = 0; e < ne && !isnan(acc); e++) {
				double r = lv[(d * ne + e) * nb + b] - lv[(ref * ne + e) * nb + b];
				if (in->objective == RACE_OBJECTIVE_WORST)
					acc = isnan(r) ? NAN : fmin(acc, r);
				else
					acc += r;
			}
			obj[d * nb + b] = in->objective == RACE_OBJECTIVE_WORST || isnan(acc)
					  ? acc : acc / (double)ne;
		}
	}
	free(lv);
	return obj;
}

/* The paired comparison of d with the best over the blocks both have. */
struct paired {
	size_t n;
	double mean;		/* of the objective differences (log ratio) */
	double p;		/* one-sided: d worse than the best; NAN: n < 2 */
	double lo90, hi90;	/* 90 % CI of the mean difference */
};

static void paired_compare(const double *od, const double *ob, size_t nb, struct paired *out)
{
	double sum = 0;
	size_t n = 0;
	for (size_t b = 0; b < nb; b++)
		if (!isnan(od[b]) && !isnan(ob[b])) {
			sum += od[b] - ob[b];
			n++;
		}
	*out = (struct paired){ .n = n, .mean = n ? sum / (double)n : NAN, .p = NAN,
				.lo90 = NAN, .hi90 = NAN };
	if (n < 2)
		return;
	double ss = 0;
	for (size_t b = 0; b < nb; b++)
		if (!isnan(od[b]) && !isnan(ob[b])) {
			double dev = od[b] - ob[b] - out->mean;
			ss += dev * dev;
		}
	double se = sqrt(ss / (double)(n - 1) / (double)n);
	if (se == 0) {
		/* Identical differences in every block: the sign decides. */
		out->p = out->mean < 0 ? 0 : 1;
		out->lo90 = out->hi90 = out->mean;
		return;
	}
	double df = (double)(n - 1);
	out->p = stats_t_cdf(out->mean / se, df);
	double q = stats_t_quantile(0.95, df);
	out->lo90 = out->mean - q * se;
	out->hi90 = out->mean + q * se;
}

static bool is_contender(const struct race_input *in, size_t d)
{
	return !(in->reference && in->reference[d]) && !(in->eliminated && in->eliminated[d]);
}

/*
 * Whether the best's lead over the baseline is already what the final
 * verdict needs: Welch on the log objectives (unpaired, as the ranking
 * tests), two-sided at alpha over the family of every comparison with the
 * baseline (Bonferroni).  Only then may the race stop on the baseline's
 * account; its paired test alone would stop races the ranking cannot
 * call.
 */
static bool baseline_beaten(const struct race_input *in, const double *obj, size_t nb,
			    size_t best)
{
	size_t family = 0;
	for (size_t d = 0; d < in->ndecisions; d++)
		if (d != in->baseline && !(in->reference && in->reference[d]))
			family++;
	double *x = xmalloc((nb + 1) * sizeof(*x)), *y = xmalloc((nb + 1) * sizeof(*y));
	size_t nx = 0, ny = 0;
	for (size_t b = 0; b < nb; b++) {
		if (!isnan(obj[in->baseline * nb + b]))
			x[nx++] = obj[in->baseline * nb + b];
		if (!isnan(obj[best * nb + b]))
			y[ny++] = obj[best * nb + b];
	}
	struct stats_test t;
	stats_welch(x, nx, y, ny, &t);
	bool beaten = !isnan(t.p) && t.statistic < 0 &&
		      t.p < in->alpha / (double)(family ? family : 1);
	free(x);
	free(y);
	return beaten;
}

int race_evaluate(const struct race_input *in, struct race_step *out)
{
	memset(out, 0, sizeof(*out));
	out->best = RACE_NONE;
	out->blocks = in->blocks;
	out->stop = RACE_GO_ON;
	size_t nd = in->ndecisions, nb = in->blocks > 0 ? (size_t)in->blocks : 0;
	if (!nd || !in->nenvs || in->first_test < 2 || in->blocks < 0 ||
	    (in->baseline != RACE_NONE && in->baseline >= nd))
		return -1;
	for (size_t i = 0; i < in->nobs; i++)
		if (in->obs[i].decision >= nd || in->obs[i].env >= in->nenvs)
			return -1;

	double *obj = block_objectives(in);
	double best_mean = -INFINITY;
	for (size_t d = 0; d < nd; d++) {
		if (!is_contender(in, d))
			continue;
		out->nsurvivors++;
		double sum = 0;
		size_t n = 0;
		for (size_t b = 0; b < nb; b++)
			if (!isnan(obj[d * nb + b])) {
				sum += obj[d * nb + b];
				n++;
			}
		if (n && sum / (double)n > best_mean) {
			best_mean = sum / (double)n;
			out->best = d;
		}
	}
	bool at_max = in->blocks >= in->max_blocks;
	if (out->best == RACE_NONE || in->blocks < in->first_test) {
		out->stop = at_max ? RACE_STOP_MAX : RACE_GO_ON;
		free(obj);
		return 0;
	}

	struct paired *cmp = xcalloc(nd, sizeof(*cmp));
	double *p = xmalloc(nd * sizeof(*p));
	double *adj = xmalloc(nd * sizeof(*adj));
	for (size_t d = 0; d < nd; d++) {
		p[d] = NAN;
		if (d == out->best || !is_contender(in, d))
			continue;
		paired_compare(&obj[d * nb], &obj[out->best * nb], nb, &cmp[d]);
		p[d] = cmp[d].p;
	}
	stats_holm(p, nd, adj);

	bool baseline_settled = in->baseline != RACE_NONE && in->baseline != out->best &&
				is_contender(in, in->baseline) &&
				baseline_beaten(in, obj, nb, out->best);
	double lo = log(1 - in->equivalence), hi = log(1 + in->equivalence);
	bool all_worse = true, all_equivalent = true;
	out->elims = xcalloc(nd, sizeof(*out->elims));
	for (size_t d = 0; d < nd; d++) {
		if (d == out->best || !is_contender(in, d))
			continue;
		bool worse = d == in->baseline ? baseline_settled
			     : !isnan(adj[d]) && adj[d] < in->alpha;
		bool equivalent = !isnan(cmp[d].lo90) && cmp[d].lo90 >= lo && cmp[d].hi90 <= hi;
		if (worse && d != in->baseline) {
			out->elims[out->nelims++] = (struct race_elimination){
				.decision = d, .against = out->best, .p = adj[d],
				.ratio = exp(cmp[d].mean) };
			out->nsurvivors--;
			continue;
		}
		/* A baseline shown worse is settled: it stays only as the reference. */
		all_worse = all_worse && worse;
		all_equivalent = all_equivalent && (equivalent || worse);
	}
	if (all_worse)
		out->stop = RACE_STOP_SINGLE;
	else if (all_equivalent)
		out->stop = RACE_STOP_EQUIVALENT;
	else if (at_max)
		out->stop = RACE_STOP_MAX;
	free(adj);
	free(p);
	free(cmp);
	free(obj);
	return 0;
}

void race_step_release(struct race_step *s)
{
	free(s->elims);
	memset(s, 0, sizeof(*s));
	s->best = RACE_NONE;
}

const char *race_stop_name(enum race_stop s)
{
	switch (s) {
	case RACE_STOP_SINGLE: return "one survivor";
	case RACE_STOP_EQUIVALENT: return "all equivalent";
	case RACE_STOP_MAX: return "maximum reached";
	case RACE_GO_ON: break;
	}
	return "running";
}

/* A standard normal deviate by inversion (exact enough for simulation). */
static double normal_draw(struct stats_rng *rng)
{
	double u = ((double)(stats_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0;
	return stats_normal_quantile(u);
}

double race_expected_runs(size_t ndecisions, size_t nenvs, size_t nreference, int first_test,
			  int max_blocks, double equivalence, uint64_t seed, int nsim,
			  size_t *max_out)
{
	size_t per_block = ndecisions * nenvs + nreference;
	*max_out = per_block * (size_t)(max_blocks > 0 ? max_blocks : 0);
	if (ndecisions < 2 || first_test >= max_blocks || nsim <= 0)
		return (double)*max_out;
	struct stats_rng rng;
	stats_rng_seed(&rng, seed);
	size_t cap = ndecisions * nenvs * (size_t)max_blocks;
	struct race_obs *obs = xcalloc(cap, sizeof(*obs));
	bool *elim = xcalloc(ndecisions, sizeof(*elim));
	double total = 0;
	for (int s = 0; s < nsim; s++) {
		size_t nobs = 0, runs = 0;
		memset(elim, 0, ndecisions * sizeof(*elim));
		for (int b = 0; b < max_blocks; b++) {
			runs += nreference;
			for (size_t d = 0; d < ndecisions; d++) {
				if (elim[d])
					continue;
				double mu = -0.10 * (double)d / (double)(ndecisions - 1);
				for (size_t e = 0; e < nenvs; e++) {
					obs[nobs++] = (struct race_obs){
						.decision = d, .env = e, .block = b,
						.value = 100 * exp(mu + 0.05 * normal_draw(&rng)) };
					runs++;
				}
			}
			struct race_input in = {
				.ndecisions = ndecisions, .nenvs = nenvs,
				.baseline = ndecisions / 2, .eliminated = elim, .obs = obs,
				.nobs = nobs, .blocks = b + 1, .first_test = first_test,
				.max_blocks = max_blocks, .higher_is_better = true,
				.alpha = RACE_ALPHA, .equivalence = equivalence,
			};
			struct race_step st;
			race_evaluate(&in, &st);
			for (size_t i = 0; i < st.nelims; i++)
				elim[st.elims[i].decision] = true;
			enum race_stop stop = st.stop;
			race_step_release(&st);
			if (stop != RACE_GO_ON)
				break;
		}
		total += (double)runs;
	}
	free(elim);
	free(obs);
	return total / nsim;
}
