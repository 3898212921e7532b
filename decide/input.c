/* input: a stored experiment as the engine's input; see input.h. */
#include "input.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cpuset.h"
#include "../util/strbuf.h"

/* Is factor `name` a condition rather than a choice (noise always is)? */
static bool is_environment(const struct decide_roles *roles, const char *name)
{
	return config_factor_is_environment(name, roles ? roles->environment : NULL,
					    roles ? roles->nenvironment : 0);
}

/* ---- knobs and pinning ------------------------------------------------------ */

size_t decide_config_knobs(const struct db_results_config *c, const struct decide_roles *roles,
			   struct decide_knob *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < c->rec.nknobs && n < max; i++) {
		const char *name = c->rec.knobs[i].name;
		if (is_environment(roles, name))
			continue;
		out[n].knob = knob_find(name);
		out[n].name = name;
		snprintf(out[n].value, sizeof(out[n].value), "%s", c->rec.knobs[i].value);
		n++;
	}
	return n;
}

/* The table's canonical value when it knows the spelling, else lower-case text. */
static void knob_normalise(const struct knob *k, const char *v, char *buf, size_t n)
{
	const char *canon = k ? knob_canonical(k, v) : NULL;
	if (canon) {
		snprintf(buf, n, "%s", canon);
		return;
	}
	size_t i = 0;
	for (; v[i] && i + 1 < n; i++)
		buf[i] = (char)tolower((unsigned char)v[i]);
	buf[i] = '\0';
}

/* Is the knob at the host's default?  Unknown defaults count as "no". */
static bool knob_is_default(const struct db_results_config *c, const struct decide_knob *k)
{
	const char *dflt = config_record_host_default(&c->rec, k->name);
	if (!dflt && k->knob)
		dflt = k->knob->kernel_default;
	if (!strcmp(k->value, "default"))
		return true;
	if (!dflt)
		return false;
	char a[sizeof(k->value)], b[sizeof(k->value)];
	knob_normalise(k->knob, k->value, a, sizeof(a));
	knob_normalise(k->knob, dflt, b, sizeof(b));
	return !strcmp(a, b);
}

/* The decision knobs of a configuration looked at for its cost. */
#define KNOBS_MAX 32

/* Decision knobs away from their default. */
static int nondefault_knobs(const struct db_results_config *c, const struct decide_roles *roles)
{
	struct decide_knob k[KNOBS_MAX];
	size_t n = decide_config_knobs(c, roles, k, KNOBS_MAX);
	int count = 0;
	for (size_t i = 0; i < n; i++)
		count += !knob_is_default(c, &k[i]);
	return count;
}

int decide_cpuset_count(const char *const *sets, size_t n)
{
	cpu_set_t all;
	CPU_ZERO(&all);
	for (size_t i = 0; i < n; i++) {
		struct cpuset cs;
		struct ta_err err = { 0 };
		if (cpuset_parse(sets[i], &cs, &err) < 0)
			return -1;
		for (size_t j = 0; j < cs.n; j++)
			CPU_SET(cs.cpus[j], &all);
		cpuset_release(&cs);
	}
	return CPU_COUNT(&all);
}

bool decide_pinning_explicit(const struct db_results_config *c)
{
	return c->rec.npinning_cpus > 0 && !strcmp(c->rec.pinning_policy, "explicit");
}

/* Host CPUs a configuration occupies: its explicit pinning's, else its vCPUs. */
static int host_cpus(const struct db_results_config *c)
{
	if (decide_pinning_explicit(c)) {
		int n = decide_cpuset_count((const char *const *)c->rec.pinning_cpus,
					    c->rec.npinning_cpus);
		if (n > 0)
			return n;
	}
	return c->rec.vcpus;
}

/* ---- roles: decisions and levels -------------------------------------------- */

/* A configuration whose benchmark ran on the host (runner host). */
static bool host_run(const struct db_results_config *c)
{
	return c->rec.runner && !strcmp(c->rec.runner, "host");
}

/* The index of str in v[0..*n), appended (a copy) when new. */
static size_t intern(char ***v, size_t *n, const char *str)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], str))
			return i;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n] = xstrdup(str);
	return (*n)++;
}

/* The host's default shape: one vCPU per socket, no pinning, no decision knob changed. */
static bool default_shape(const struct db_results_config *c, const struct decide_roles *roles)
{
	const struct config_record *r = &c->rec;
	if (r->sockets != r->vcpus || r->dies != 1 || r->cores != 1 || r->threads != 1 ||
	    (strcmp(r->pinning_policy, "none") && !is_environment(roles, "pinning")))
		return false;
	return nondefault_knobs(c, roles) == 0;
}

static void choose_baseline(const struct db_results *res, const struct decide_roles *roles,
			    struct decide_sweep *s)
{
	s->in.baseline = DECIDE_NONE;
	for (size_t i = 0; i < res->nconfigs; i++)
		if (res->configs[i].rec.baseline) {
			s->in.baseline = s->configs[i].decision;
			s->baseline_source = "marked";
			return;
		}
	/* Several default shapes (different vCPU counts): the first by idx. */
	const struct db_results_config *pick = NULL;
	size_t at = 0;
	for (size_t i = 0; i < res->nconfigs; i++) {
		const struct db_results_config *c = &res->configs[i];
		if (default_shape(c, roles) && !s->decisions[s->configs[i].decision].host_reference &&
		    (!pick || c->rec.index < pick->rec.index)) {
			pick = c;
			at = i;
		}
	}
	if (pick) {
		s->in.baseline = s->configs[at].decision;
		s->baseline_source = "host default shape";
	}
}

/* Stored race eliminations, per decision: the latest block of its configurations'. */
static void stored_eliminations(const struct db_results *res, struct decide_sweep *s)
{
	for (size_t i = 0; i < res->nconfigs; i++) {
		const struct db_results_config *c = &res->configs[i];
		struct decide_stored_elim *e = &s->decisions[s->configs[i].decision].elim;
		if (c->eliminated_block <= e->block)
			continue;
		size_t against = DECIDE_NONE;
		for (size_t j = 0; c->eliminated_against && j < res->nconfigs; j++)
			if (!strcmp(res->configs[j].rec.key, c->eliminated_against))
				against = s->configs[j].decision;
		*e = (struct decide_stored_elim){ c->eliminated_block, against, c->eliminated_p };
	}
}

/* Mean of a metric over the runs that have it; NAN when none has. */
static double metric_mean(const struct db_results *res, const char *name)
{
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_metric *m = db_results_run_metric(&res->configs[i].runs[j], name);
			if (m && m->value > 0) {
				sum += m->value;
				n++;
			}
		}
	return n ? sum / (double)n : NAN;
}

static double run_gang(const struct db_results_run *run)
{
	const struct db_results_metric *g = db_results_run_metric(run, "gang_exits_per_s");
	if (!g)
		g = db_results_run_metric(run, "gang_exits");
	return g ? g->value : NAN;
}

static void runs_build(const struct db_results *res, decide_value_fn value, void *ctx,
		       struct decide_sweep *s)
{
	size_t n = 0;
	for (size_t i = 0; i < res->nconfigs; i++)
		n += res->configs[i].nruns;
	s->runs = xcalloc(n, sizeof(*s->runs));
	s->run_of = xcalloc(n, sizeof(*s->run_of));
	size_t k = 0;
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_run *run = &res->configs[i].runs[j];
			struct decide_run *r = &s->runs[k];
			s->run_of[k++] = run;
			*r = (struct decide_run){ .config = i, .block = run->repetition,
						  .boot = run->boot, .order = run->order_index,
						  .status = DECIDE_RUN_NONE, .value = NAN,
						  .gang = NAN };
			if (!strcmp(run->status, "failed")) {
				r->status = DECIDE_RUN_FAILED;
			} else if (!strcmp(run->status, "ok")) {
				r->value = value(run, ctx);
				r->gang = run_gang(run);
				if (r->value > 0 && isfinite(r->value))
					r->status = DECIDE_RUN_OK;
			}
		}
	s->in.runs = s->runs;
	s->in.nruns = k;
}

void decide_sweep_build(const struct db_results *res, decide_value_fn value, void *ctx,
			bool higher_is_better, const struct decide_roles *roles,
			struct decide_sweep *out)
{
	memset(out, 0, sizeof(*out));
	size_t nc = res->nconfigs, nd = 0, nl = 0;
	out->configs = xcalloc(nc, sizeof(*out->configs));
	out->decisions = xcalloc(nc, sizeof(*out->decisions));
	/* A benchmark on the host is a reference only next to guests. */
	bool any_guest = false;
	for (size_t i = 0; i < nc; i++)
		any_guest |= !host_run(&res->configs[i]);
	for (size_t i = 0; i < nc; i++) {
		const struct db_results_config *c = &res->configs[i];
		size_t before = nd;
		size_t d = intern(&out->keys, &nd, c->rec.decision);
		if (nd > before)
			out->decisions[d] = (struct decide_option){
				.key = out->keys[d],
				.host_reference = c->rec.host_reference || (any_guest && host_run(c)),
				.host_cpus = host_cpus(c), .nondefault_knobs = nondefault_knobs(c, roles) };
		out->configs[i] = (struct decide_config){ d, intern(&out->levels, &nl,
								    c->rec.environment) };
	}
	out->in = (struct decide_input){
		.decisions = out->decisions, .ndecisions = nd, .configs = out->configs,
		.nconfigs = nc, .nlevels = nl ? nl : 1, .higher_is_better = higher_is_better,
		.boot_seconds = metric_mean(res, "boot_seconds"),
		.run_seconds = metric_mean(res, "benchmark_seconds"),
	};
	if (!nl)
		out->levels = xcalloc(1, sizeof(*out->levels));
	choose_baseline(res, roles, out);
	stored_eliminations(res, out);
	runs_build(res, value, ctx, out);
}

void decide_sweep_release(struct decide_sweep *s)
{
	for (size_t d = 0; d < s->in.ndecisions; d++)
		free(s->keys[d]);
	free(s->keys);
	for (size_t l = 0; s->levels && l < s->in.nlevels; l++)
		free(s->levels[l]);
	free(s->levels);
	free(s->decisions);
	free(s->configs);
	free(s->runs);
	free(s->run_of);
	memset(s, 0, sizeof(*s));
}
