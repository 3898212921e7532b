/* rank: ranking, ties, recommendation and warnings; see rank.h and docs/advisor.md. */
#include "rank.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/knob-table.h"
#include "../util/cpuset.h"

/* ---- host knobs ---------------------------------------------------------- */

/* A knob a configuration sets and the value it stores. */
struct knob_setting {
	const struct knob *knob;	/* NULL: not in the knob table (an old or foreign DB) */
	const char *name;
	char value[64];
};

/* The knobs a configuration sets, in the sweep's order (its record's). */
static size_t config_knobs(const struct db_results_config *c, struct knob_setting *out,
			   size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < c->rec.nknobs && n < max; i++, n++) {
		out[n].knob = knob_find(c->rec.knobs[i].name);
		out[n].name = c->rec.knobs[i].name;
		snprintf(out[n].value, sizeof(out[n].value), "%s", c->rec.knobs[i].value);
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
static bool knob_is_default(const struct db_results_config *c, const struct knob_setting *k)
{
	const char *dflt = config_record_host_default(&c->rec, k->name);
	if (!dflt && k->knob)
		dflt = k->knob->kernel_default;
	if (!strcmp(k->value, "default"))
		return true;
	if (!dflt)
		return false;
	char a[64], b[64];
	knob_normalise(k->knob, k->value, a, sizeof(a));
	knob_normalise(k->knob, dflt, b, sizeof(b));
	return !strcmp(a, b);
}

/* Is `name` an environment factor under these options (noise always is)? */
static bool is_environment(const struct rank_options *o, const char *name)
{
	return config_factor_is_environment(name, o->environment, o->nenvironment);
}

/* Knobs away from their default, environment factors left out (not a choice). */
static int nondefault_knobs(const struct db_results_config *c, const struct rank_options *o)
{
	struct knob_setting k[32];
	size_t n = config_knobs(c, k, 32);
	int count = 0;
	for (size_t i = 0; i < n; i++)
		count += !is_environment(o, k[i].name) && !knob_is_default(c, &k[i]);
	return count;
}

/*
 * Values go into lines a user pastes into a root shell: anything beyond
 * [A-Za-z0-9_.,:-] (never produced by the config loader) is refused.
 */
static bool shell_safe(const char *v)
{
	if (!*v)
		return false;
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && !strchr("_.,:-", *v))
			return false;
	return true;
}

void rank_host_commands(const struct db_results_config *c, struct strbuf *out)
{
	struct knob_setting k[32];
	size_t n = config_knobs(c, k, 32);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(k[i].value, "default"))
			continue;
		if (!shell_safe(k[i].value)) {
			strbuf_addf(out, "# knob %zu: stored value is not a plain word; set it by hand\n",
				    i + 1);
			continue;
		}
		const char *canon = knob_canonical(k[i].knob, k[i].value);
		knob_host_command(k[i].knob, canon ? canon : k[i].value, out);
	}
}

/* ---- shapes and CPUs ------------------------------------------------------ */

int rank_cpuset_count(const char *const *sets, size_t n)
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

static bool pinning_explicit(const struct db_results_config *c)
{
	return c->rec.npinning_cpus > 0 && !strcmp(c->rec.pinning_policy, "explicit");
}

static int host_cpus(const struct db_results_config *c)
{
	if (pinning_explicit(c)) {
		int n = rank_cpuset_count((const char *const *)c->rec.pinning_cpus,
					  c->rec.npinning_cpus);
		if (n > 0)
			return n;
	}
	return c->rec.vcpus;
}

/* A stored cpuset fit to paste into XML, else NULL. */
static const char *xml_cpuset(const char *set)
{
	return set && rank_cpuset_count(&set, 1) > 0 ? set : NULL;
}

/* The <cpu> the guests had, as the controller recorded it (experiments/domain.h decided it). */
void rank_xml_fragment(const struct db_results_config *c, struct strbuf *out)
{
	const struct config_record *r = &c->rec;
	strbuf_addf(out, "<vcpu placement='static'>%d</vcpu>\n", r->vcpus);
	if (r->cpu_mode) {
		strbuf_addf(out, "<cpu mode='%s'%s check='none'>\n", r->cpu_mode,
			    r->cpu_model ? " match='exact'" : "");
		if (r->cpu_model)
			strbuf_addf(out, "  <model fallback='forbid'>%s</model>\n", r->cpu_model);
	} else {
		if (!r->arch)
			strbuf_addstr(out, "<!-- the guests' CPU mode was not recorded (an experiment "
				      "stored before schema 7): set it as your hosts need -->\n");
		strbuf_addstr(out, "<cpu>\n");
	}
	strbuf_addf(out, "  <topology sockets='%d' dies='%d' cores='%d' threads='%d'/>\n"
		    "</cpu>\n", r->sockets, r->dies, r->cores, r->threads);
	if (pinning_explicit(c)) {
		strbuf_addstr(out, "<cputune>\n");
		for (size_t i = 0; i < r->npinning_cpus; i++) {
			const char *set = xml_cpuset(r->pinning_cpus[i]);
			if (set)
				strbuf_addf(out, "  <vcpupin vcpu='%zu' cpuset='%s'/>\n", i, set);
			else
				strbuf_addf(out, "  <!-- vCPU %zu: stored cpuset is malformed -->\n", i);
		}
		const char *emu = r->emulator_cpus;
		if (emu && xml_cpuset(emu))
			strbuf_addf(out, "  <emulatorpin cpuset='%s'/>\n", emu);
		else if (emu)
			strbuf_addstr(out, "  <!-- emulator: stored cpuset is malformed -->\n");
		strbuf_addstr(out, "</cputune>\n");
	} else if (strcmp(r->pinning_policy, "none")) {
		strbuf_addf(out, "<!-- pinning '%s' (policy %s): the <cputune> vcpupin and "
			    "emulatorpin CPUs are chosen per host by this policy -->\n", r->pinning,
			    r->pinning_policy);
	}
}

/* ---- ranking ----------------------------------------------------------- */

static bool run_ok(const struct db_results_run *run)
{
	return !strcmp(run->status, "ok");
}

static bool run_failed(const struct db_results_run *run)
{
	return !strcmp(run->status, "failed") || !strcmp(run->status, "interrupted");
}

static void warn(struct rank_result *r, const char *kind, const char *config,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void warn(struct rank_result *r, const char *kind, const char *config,
		 const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	r->warnings = xrealloc(r->warnings, (r->nwarnings + 1) * sizeof(*r->warnings));
	r->warnings[r->nwarnings++] = (struct rank_warning){ kind, config, strbuf_detach(&sb) };
}

/*
 * The direction a stored metric row declares: 1 higher is better, 0 lower,
 * -1 none (not a figure of merit) or unknown (rows from before directions
 * were stored fall back on their higher_is_better column).
 */
static int metric_row_direction(const struct db_results_metric *m)
{
	if (m->dir == METRIC_DIR_HIGHER)
		return 1;
	if (m->dir == METRIC_DIR_LOWER)
		return 0;
	return m->dir == METRIC_DIR_UNKNOWN ? m->higher_is_better : -1;
}

/* Direction and unit of the metric from its stored rows (first one wins). */
static void metric_meta(const struct db_results *res, const char *metric, bool *found,
			int *hib, const char **unit)
{
	*found = false;
	*hib = -1;
	*unit = NULL;
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_metric *m = db_results_run_metric(&res->configs[i].runs[j], metric);
			if (!m)
				continue;
			*found = true;
			if (*hib < 0)
				*hib = metric_row_direction(m);
			if (!*unit)
				*unit = m->unit;
		}
}

/* Lists the metric names of successful runs into sb (for "did you mean"). */
static void metric_names(const struct db_results *res, struct strbuf *sb)
{
	const char **seen = NULL;
	size_t n = 0;
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_run *run = &res->configs[i].runs[j];
			for (size_t k = 0; k < run->nmetrics; k++) {
				size_t s = 0;
				while (s < n && strcmp(seen[s], run->metrics[k].name))
					s++;
				if (s < n)
					continue;
				seen = xrealloc(seen, (n + 1) * sizeof(*seen));
				seen[n++] = run->metrics[k].name;
				strbuf_addf(sb, "%s%s", n > 1 ? ", " : "", run->metrics[k].name);
			}
		}
	free(seen);
}

/* Mean ganged exits (and per second) over successful runs; NAN without data. */
static void entry_gang(struct rank_entry *e)
{
	double sum = 0, sum_s = 0;
	size_t n = 0, n_s = 0;
	for (size_t i = 0; i < e->config->nruns; i++) {
		const struct db_results_run *run = &e->config->runs[i];
		if (!run_ok(run))
			continue;
		const struct db_results_metric *g = db_results_run_metric(run, "gang_exits");
		const struct db_results_metric *gs = db_results_run_metric(run, "gang_exits_per_s");
		if (g) {
			sum += g->value;
			n++;
		}
		if (gs) {
			sum_s += gs->value;
			n_s++;
		}
	}
	e->gang_exits = n ? sum / (double)n : NAN;
	e->gang_exits_per_s = n_s ? sum_s / (double)n_s : NAN;
}

/* The most frequent exit reasons, as mean count per successful run. */
static void entry_exits(struct rank_entry *e)
{
	struct rank_exit_reason *acc = NULL;
	size_t n = 0, nok = 0;
	for (size_t i = 0; i < e->config->nruns; i++) {
		const struct db_results_run *run = &e->config->runs[i];
		if (!run_ok(run))
			continue;
		nok++;
		for (size_t j = 0; j < run->nexits; j++) {
			size_t k = 0;
			while (k < n && (strcmp(acc[k].source, run->exits[j].source) ||
					 strcmp(acc[k].reason, run->exits[j].reason)))
				k++;
			if (k == n) {
				acc = xrealloc(acc, (n + 1) * sizeof(*acc));
				acc[n++] = (struct rank_exit_reason){ run->exits[j].source,
								      run->exits[j].reason, 0 };
			}
			acc[k].mean_per_run += (double)run->exits[j].count;
		}
	}
	for (size_t t = 0; t < RANK_TOP_EXITS && t < n; t++) {
		size_t best = t;
		for (size_t k = t + 1; k < n; k++)
			if (acc[k].mean_per_run > acc[best].mean_per_run)
				best = k;
		struct rank_exit_reason tmp = acc[t];
		acc[t] = acc[best];
		acc[best] = tmp;
		acc[t].mean_per_run /= (double)(nok ? nok : 1);
		e->top_exits[e->ntop_exits++] = acc[t];
	}
	free(acc);
}

/* A configuration whose benchmark ran on the host (guest.host_baseline). */
static bool is_host_run(const struct db_results_config *c)
{
	return c->rec.runner && !strcmp(c->rec.runner, "host");
}


const char *rank_verdict_name(enum rank_verdict v)
{
	switch (v) {
	case RANK_BETTER: return "better";
	case RANK_EQUIVALENT: return "equivalent";
	case RANK_WORSE: return "worse";
	case RANK_UNDECIDED: return "undecided";
	case RANK_INSUFFICIENT: return "insufficient";
	case RANK_VERDICT_NONE: break;
	}
	return "not compared";
}

bool rank_decisive(const struct rank_result *r)
{
	return r->verdict == RANK_BETTER || r->verdict == RANK_EQUIVALENT;
}

const char *rank_objective_name(enum rank_objective o)
{
	return o == RANK_OBJECTIVE_MEAN ? "mean" : "worst";
}

void rank_options_init(struct rank_options *o)
{
	memset(o, 0, sizeof(*o));
	o->equivalence = RANK_DEFAULT_EQUIVALENCE;
	o->objective = RANK_OBJECTIVE_WORST;
}

static void entry_fill(struct rank_entry *e, const struct db_results_config *c,
		       const char *metric, const struct rank_options *opt)
{
	memset(e, 0, sizeof(*e));
	e->config = c;
	e->eliminated_block = c->eliminated_block;	/* stored by a race (schema/db-race.h) */
	e->values = xmalloc((c->nruns + 1) * sizeof(*e->values));
	e->value_runs = xmalloc((c->nruns + 1) * sizeof(*e->value_runs));
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		const struct db_results_run *run = &c->runs[i];
		if (run_failed(run))
			e->nfailed++;
		if (!run_ok(run))
			continue;
		const struct db_results_metric *m = db_results_run_metric(run, metric);
		if (!m)
			continue;
		e->value_runs[n] = run;
		e->values[n++] = m->value;
	}
	stats_summarize(e->values, n, &e->s);
	e->dev = xmalloc((n + 1) * sizeof(*e->dev));
	e->outlier = xmalloc((n + 1) * sizeof(*e->outlier));
	e->noutliers = stats_outliers(e->values, n, e->dev, e->outlier);
	e->ratio = e->ratio_lo = e->ratio_hi = NAN;
	e->gain = e->gain_lo = e->gain_hi = NAN;
	e->p_baseline = e->p_baseline_adj = NAN;
	e->verdict = RANK_INSUFFICIENT;
	e->min_detectable_effect = NAN;
	e->needed_repetitions = -1;
	e->composite = e->composite_lo = e->composite_hi = NAN;
	e->p_best = e->p_best_adj = NAN;
	e->host_cpus = host_cpus(c);
	e->nondefault_knobs = nondefault_knobs(c, opt);
	entry_gang(e);
	entry_exits(e);
}

/* The better of two means in the metric's direction. */
static bool better(double a, double b, bool hib)
{
	return hib ? a > b : a < b;
}

/* ---- factor roles: decisions and environment levels --------------------- */

static int cmp_entry(const void *pa, const void *pb, void *hibp)
{
	const struct rank_entry *a = pa, *b = pb;
	bool hib = *(const bool *)hibp;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if ((a->s.n > 0) != (b->s.n > 0))
		return a->s.n > 0 ? -1 : 1;
	if (a->s.n > 0 && a->s.mean != b->s.mean)
		return better(a->s.mean, b->s.mean, hib) ? -1 : 1;
	return (int)a->config->rec.index - (int)b->config->rec.index;
}

/*
 * The level index of each entry, levels in the order configurations first
 * show them: the environment level each configuration's record names.
 */
static void levels_assign(struct rank_result *r)
{
	for (size_t i = 0; i < r->nentries; i++) {
		const char *label = r->entries[i].config->rec.environment;
		size_t l = 0;
		while (l < r->nlevels && strcmp(r->levels[l], label))
			l++;
		if (l == r->nlevels) {
			r->levels = xrealloc(r->levels, (r->nlevels + 1) * sizeof(*r->levels));
			r->levels[r->nlevels++] = xstrdup(label);
		}
		r->entries[i].level = l;
	}
}

/* Per-run ganged exits/s (else per run) of every successful run of d. */
static void decision_gang(struct rank_decision *d, size_t nlevels)
{
	for (size_t l = 0; l < nlevels; l++) {
		const struct rank_entry *e = d->levels[l];
		for (size_t j = 0; e && j < e->config->nruns; j++) {
			const struct db_results_run *run = &e->config->runs[j];
			if (!run_ok(run))
				continue;
			const struct db_results_metric *g = db_results_run_metric(run, "gang_exits_per_s");
			if (!g)
				g = db_results_run_metric(run, "gang_exits");
			if (!g)
				continue;
			d->gang = xrealloc(d->gang, (d->ngang + 1) * sizeof(*d->gang));
			d->gang[d->ngang++] = g->value;
		}
	}
}

/* The decisions: configurations grouped by the decision their records name. */
static void decisions_build(struct rank_result *r)
{
	r->decisions = xcalloc(r->nentries + 1, sizeof(*r->decisions));
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		const char *key = e->config->rec.decision;
		size_t d = 0;
		while (d < r->ndecisions && strcmp(r->decisions[d].key, key))
			d++;
		if (d == r->ndecisions) {
			struct rank_decision *n = &r->decisions[r->ndecisions++];
			n->key = xstrdup(key);
			n->levels = xcalloc(r->nlevels, sizeof(*n->levels));
			n->host_reference = e->host_reference;
		}
		struct rank_decision *dec = &r->decisions[d];
		if (!dec->levels[e->level])
			dec->levels[e->level] = e;
		e->decision = dec;
	}
	for (size_t d = 0; d < r->ndecisions; d++) {
		struct rank_decision *dec = &r->decisions[d];
		for (size_t l = 0; l < r->nlevels && !dec->entry; l++)
			dec->entry = dec->levels[l];
		dec->host_cpus = dec->entry->host_cpus;
		dec->nondefault_knobs = dec->entry->nondefault_knobs;
		for (size_t l = 0; l < r->nlevels; l++)
			if (dec->levels[l] && dec->levels[l]->eliminated_block > dec->eliminated_block)
				dec->eliminated_block = dec->levels[l]->eliminated_block;
		dec->gain = dec->gain_lo = dec->gain_hi = dec->p_adj = NAN;
		dec->best_gain = dec->best_gain_lo = dec->best_gain_hi = NAN;
		dec->min_detectable_effect = NAN;
		dec->needed_repetitions = -1;
		dec->score = NAN;
		dec->verdict = RANK_INSUFFICIENT;
		decision_gang(dec, r->nlevels);
	}
}

/* Has d at least 2 runs wherever it was measured, and a measurement at all? */
static bool decision_testable(const struct rank_result *r, const struct rank_decision *d)
{
	bool any = false;
	for (size_t l = 0; l < r->nlevels; l++) {
		if (!d->levels[l])
			continue;
		if (d->levels[l]->s.n < 2)
			return false;
		any = true;
	}
	return any;
}

/* The host's default shape: one vCPU per socket, no pinning or knob changes. */
static bool default_shape(const struct db_results_config *c, const struct rank_options *o)
{
	const struct config_record *r = &c->rec;
	if (r->sockets != r->vcpus || r->dies != 1 || r->cores != 1 || r->threads != 1 ||
	    (strcmp(r->pinning_policy, "none") && !is_environment(o, "pinning")))
		return false;
	return nondefault_knobs(c, o) == 0;
}

static void choose_baseline(struct rank_result *r, const struct rank_options *o)
{
	for (size_t i = 0; i < r->nentries; i++)
		if (r->entries[i].config->rec.baseline) {
			r->baseline_decision = r->entries[i].decision;
			r->baseline_source = "marked";
			return;
		}
	/* Several default shapes (different vCPU counts): the first by idx. */
	const struct rank_entry *pick = NULL;
	for (size_t i = 0; i < r->nentries; i++)
		if (default_shape(r->entries[i].config, o) && !r->entries[i].host_reference &&
		    (!pick || r->entries[i].config->rec.index < pick->config->rec.index))
			pick = &r->entries[i];
	if (pick) {
		r->baseline_decision = pick->decision;
		r->baseline_source = "host default shape";
	}
}

/* ---- comparisons ---------------------------------------------------------- */

/* A comparison in the metric's direction, on the log scale: positive is better. */
struct cmp {
	bool ok;
	double lg, lo, hi;	/* log gain and its interval */
	double p;		/* raw two-sided p (NAN: worst of several levels) */
	double mde;		/* log-scale min detectable effect */
	int needed;		/* more runs per configuration to settle; -1: unknown */
};

static double gain_of(double lg)
{
	return expm1(lg);
}

static enum rank_verdict verdict_of(double glo, double ghi, double delta)
{
	if (isnan(glo) || isnan(ghi))
		return RANK_INSUFFICIENT;
	if (glo > -delta && ghi < delta)
		return RANK_EQUIVALENT;
	if (glo > 0)
		return RANK_BETTER;
	if (ghi < 0)
		return RANK_WORSE;
	return RANK_UNDECIDED;
}

/*
 * More runs per configuration for the interval to settle: exclude 0 (an
 * effect as large as seen) or fit inside +-delta (what is left of delta),
 * whichever needs fewer, at the same level and RANK_POWER.
 */
static int needed_more(double sd_log, double lg, double alpha, double delta, size_t have)
{
	double target = fmax(fabs(lg), log1p(delta) - fabs(lg));
	size_t n = stats_runs_needed(sd_log, target, alpha, RANK_POWER, RANK_MAX_REPETITIONS);
	if (n > RANK_MAX_REPETITIONS)
		return RANK_MAX_REPETITIONS + 1;
	return n > have ? (int)(n - have) : 1;
}

/* x against ref, direction-aware, interval at alpha. */
static void cmp_values(const double *x, size_t nx, const double *y, size_t ny, bool hib,
		       double alpha, double delta, struct cmp *c, struct stats_ratio *raw)
{
	struct stats_ratio t;
	memset(c, 0, sizeof(*c));
	c->lg = c->lo = c->hi = c->p = c->mde = NAN;
	c->needed = -1;
	c->ok = stats_log_welch(x, nx, y, ny, alpha, &t) == 0;
	if (raw)
		*raw = t;
	if (!c->ok)
		return;
	c->lg = hib ? t.log_diff : -t.log_diff;
	c->lo = hib ? log(t.lo) : -log(t.hi);
	c->hi = hib ? log(t.hi) : -log(t.lo);
	c->p = t.p;
	c->mde = stats_min_detectable(t.se, t.df, alpha, RANK_POWER);
	if (verdict_of(gain_of(c->lo), gain_of(c->hi), delta) == RANK_UNDECIDED)
		c->needed = needed_more(t.sd_log, c->lg, alpha, delta, nx < ny ? nx : ny);
	else
		c->needed = 0;
}

/*
 * The objective of decision d over reference ref across the levels both
 * were measured at: the worst level (intervals at level_alpha, so their
 * minimum is simultaneous) or the geometric mean (interval at obj_alpha).
 */
static void cmp_objective(const struct rank_result *r, const struct rank_decision *d,
			  const struct rank_decision *ref, double level_alpha, double obj_alpha,
			  struct cmp *out)
{
	memset(out, 0, sizeof(*out));
	out->lg = out->lo = out->hi = out->p = out->mde = NAN;
	out->needed = -1;
	struct stats_ratio *ratios = xcalloc(r->nlevels, sizeof(*ratios));
	size_t k = 0;
	bool ok = true;
	for (size_t l = 0; l < r->nlevels && ok; l++) {
		const struct rank_entry *a = d->levels[l], *b = ref->levels[l];
		if (!a || !b)
			continue;
		struct cmp c;
		cmp_values(a->values, a->s.n, b->values, b->s.n, r->higher_is_better,
			   level_alpha, r->equivalence, &c, &ratios[k]);
		if (!c.ok) {
			ok = false;
			break;
		}
		k++;
		if (r->objective == RANK_OBJECTIVE_WORST) {
			out->lg = k == 1 ? c.lg : fmin(out->lg, c.lg);
			out->lo = k == 1 ? c.lo : fmin(out->lo, c.lo);
			out->hi = k == 1 ? c.hi : fmin(out->hi, c.hi);
			out->mde = k == 1 ? c.mde : fmax(out->mde, c.mde);
			out->needed = k == 1 ? c.needed : (c.needed > out->needed ? c.needed : out->needed);
			out->p = k == 1 ? c.p : NAN;
		}
	}
	if (ok && k > 0 && r->objective == RANK_OBJECTIVE_MEAN) {
		struct stats_ratio g;
		stats_ratio_geomean(ratios, k, obj_alpha, &g);
		out->lg = r->higher_is_better ? g.log_diff : -g.log_diff;
		out->lo = r->higher_is_better ? log(g.lo) : -log(g.hi);
		out->hi = r->higher_is_better ? log(g.hi) : -log(g.lo);
		out->p = g.p;
		out->mde = stats_min_detectable(g.se, g.df, obj_alpha, RANK_POWER);
		size_t have = SIZE_MAX;
		for (size_t l = 0; l < r->nlevels; l++)
			if (d->levels[l] && d->levels[l]->s.n < have)
				have = d->levels[l]->s.n;
		out->needed = verdict_of(gain_of(out->lo), gain_of(out->hi), r->equivalence) ==
			      RANK_UNDECIDED ? needed_more(g.sd_log / sqrt((double)k), out->lg,
							   obj_alpha, r->equivalence, have) : 0;
	}
	out->ok = ok && k > 0;
	free(ratios);
}

/* Non-host decisions other than `ref` that can be tested: the Bonferroni family. */
static size_t family_size(const struct rank_result *r, const struct rank_decision *ref)
{
	size_t m = 0;
	for (size_t d = 0; d < r->ndecisions; d++)
		m += &r->decisions[d] != ref && !r->decisions[d].host_reference &&
		     decision_testable(r, &r->decisions[d]);
	return m ? m : 1;
}

static double adjust(double p, size_t m)
{
	return isnan(p) ? NAN : fmin(1, p * (double)m);
}

/*
 * An untestable decision still shows its point estimate: the objective over
 * the levels of its configurations' plain gains (no interval, no verdict).
 */
static void decision_point_gain(const struct rank_result *r, struct rank_decision *d)
{
	double sum = 0, worst = NAN;
	size_t k = 0;
	for (size_t l = 0; l < r->nlevels; l++) {
		const struct rank_entry *e = d->levels[l];
		if (!e || isnan(e->gain))
			continue;
		double lg = log1p(e->gain);
		sum += lg;
		worst = k++ ? fmin(worst, lg) : lg;
	}
	if (k)
		d->gain = expm1(r->objective == RANK_OBJECTIVE_MEAN ? sum / (double)k : worst);
}

/* Every configuration against the baseline's at its level; decisions by objective. */
static void compare_baseline(struct rank_result *r)
{
	const struct rank_decision *b = r->baseline_decision;
	size_t m = family_size(r, b);
	r->ncomparisons = m * r->nlevels;
	r->level_alpha = RANK_ALPHA / (double)r->ncomparisons;
	double obj_alpha = r->objective == RANK_OBJECTIVE_MEAN ? RANK_ALPHA / (double)m
							       : r->level_alpha;
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		const struct rank_entry *be = b->levels[e->level];
		if (e->decision == b) {
			e->verdict = RANK_VERDICT_NONE;
			if (e->s.n) {
				e->ratio = 1;
				e->gain = 0;	/* against itself: exactly, no interval */
			}
			continue;
		}
		if (!be || !e->s.n)
			continue;
		struct cmp c;
		struct stats_ratio t;
		cmp_values(e->values, e->s.n, be->values, be->s.n, r->higher_is_better,
			   r->level_alpha, r->equivalence, &c, &t);
		if (!c.ok) {
			/* Untestable: the point estimate alone, from the plain means. */
			if (e->s.mean > 0 && be->s.mean > 0) {
				e->ratio = e->s.mean / be->s.mean;
				e->gain = r->higher_is_better ? e->ratio - 1 : 1 / e->ratio - 1;
			}
			continue;
		}
		e->ratio = t.ratio;
		e->ratio_lo = t.lo;
		e->ratio_hi = t.hi;
		e->gain = gain_of(c.lg);
		e->gain_lo = gain_of(c.lo);
		e->gain_hi = gain_of(c.hi);
		e->p_baseline = c.p;
		e->p_baseline_adj = adjust(c.p, r->ncomparisons);
		e->verdict = verdict_of(e->gain_lo, e->gain_hi, r->equivalence);
		e->beats_baseline = e->verdict == RANK_BETTER;
		e->min_detectable_effect = gain_of(c.mde);
		e->needed_repetitions = c.needed;
	}
	for (size_t d = 0; d < r->ndecisions; d++) {
		struct rank_decision *dec = &r->decisions[d];
		if (dec == b) {
			dec->verdict = RANK_VERDICT_NONE;
			dec->gain = 0;
			dec->score = 0;
			continue;
		}
		struct cmp c;
		cmp_objective(r, dec, b, r->level_alpha, obj_alpha, &c);
		if (!c.ok) {
			decision_point_gain(r, dec);
			continue;
		}
		dec->score = c.lg;
		dec->gain = gain_of(c.lg);
		dec->gain_lo = gain_of(c.lo);
		dec->gain_hi = gain_of(c.hi);
		dec->p_adj = adjust(c.p, r->objective == RANK_OBJECTIVE_MEAN ? m : r->ncomparisons);
		dec->verdict = verdict_of(dec->gain_lo, dec->gain_hi, r->equivalence);
		dec->min_detectable_effect = gain_of(c.mde);
		dec->needed_repetitions = c.needed;
	}
}

/*
 * Without a testable baseline the decisions are still ordered by their
 * objective over a reference: the testable decision with the best mean at
 * the first level it shares with the others (no gains are reported).
 */
static void score_without_baseline(struct rank_result *r)
{
	const struct rank_decision *ref = NULL;
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		if (dec->host_reference || !decision_testable(r, dec))
			continue;
		if (!ref || better(dec->entry->s.mean, ref->entry->s.mean, r->higher_is_better))
			ref = dec;
	}
	if (!r->baseline_decision) {
		/* Nothing to compare with: no verdict against a baseline. */
		for (size_t i = 0; i < r->nentries; i++)
			r->entries[i].verdict = RANK_VERDICT_NONE;
		for (size_t d = 0; d < r->ndecisions; d++)
			r->decisions[d].verdict = RANK_VERDICT_NONE;
	}
	if (!ref)
		return;
	for (size_t d = 0; d < r->ndecisions; d++) {
		struct cmp c;
		cmp_objective(r, &r->decisions[d], ref, RANK_ALPHA, RANK_ALPHA, &c);
		if (c.ok)
			r->decisions[d].score = &r->decisions[d] == ref ? 0 : c.lg;
	}
}

/* Every decision against the best: its tie is equivalence within +-delta. */
static void compare_best(struct rank_result *r)
{
	struct rank_decision *best = NULL;
	for (size_t d = 0; d < r->ndecisions; d++) {
		struct rank_decision *dec = &r->decisions[d];
		if (!dec->host_reference && !isnan(dec->score) &&
		    (!best || dec->score > best->score))
			best = dec;
	}
	if (!best)
		return;
	best->is_best = true;
	r->best_decision = best;
	size_t m = family_size(r, best);
	double level_alpha = RANK_ALPHA / (double)(m * r->nlevels);
	double obj_alpha = r->objective == RANK_OBJECTIVE_MEAN ? RANK_ALPHA / (double)m
							       : level_alpha;
	for (size_t d = 0; d < r->ndecisions; d++) {
		struct rank_decision *dec = &r->decisions[d];
		if (dec == best || dec->host_reference)
			continue;
		struct cmp c;
		cmp_objective(r, dec, best, level_alpha, obj_alpha, &c);
		if (!c.ok)
			continue;
		dec->best_gain = gain_of(c.lg);
		dec->best_gain_lo = gain_of(c.lo);
		dec->best_gain_hi = gain_of(c.hi);
		dec->equivalent_to_best = verdict_of(dec->best_gain_lo, dec->best_gain_hi,
						     r->equivalence) == RANK_EQUIVALENT;
		dec->worse_than_best = dec->best_gain_hi < 0;
	}
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		const struct rank_entry *be = best->levels[e->level];
		e->is_best = e->decision == best;
		e->tied_with_best = e->decision->equivalent_to_best;
		if (e->decision == best || e->host_reference || !be)
			continue;
		struct stats_ratio t;
		if (stats_log_welch(e->values, e->s.n, be->values, be->s.n, level_alpha, &t) == 0) {
			e->p_best = t.p;
			e->p_best_adj = adjust(t.p, m * r->nlevels);
		}
	}
}

static int cmp_decision(const void *pa, const void *pb)
{
	const struct rank_decision *a = pa, *b = pb;
	if (a->host_reference != b->host_reference)
		return a->host_reference ? 1 : -1;
	if (isnan(a->score) != isnan(b->score))
		return isnan(a->score) ? 1 : -1;
	if (!isnan(a->score) && a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return (int)a->entry->config->rec.index - (int)b->entry->config->rec.index;
}

/* Sorting moves the decisions: point the entries (and the result) at them again. */
static void decisions_sort(struct rank_result *r)
{
	const struct rank_decision *base = r->baseline_decision;
	char *base_key = base ? base->key : NULL;
	qsort(r->decisions, r->ndecisions, sizeof(*r->decisions), cmp_decision);
	r->baseline_decision = NULL;
	for (size_t d = 0; d < r->ndecisions; d++) {
		struct rank_decision *dec = &r->decisions[d];
		for (size_t l = 0; l < r->nlevels; l++)
			if (dec->levels[l])
				dec->levels[l]->decision = dec;
		if (dec->key == base_key)
			r->baseline_decision = dec;
		if (dec->is_best)
			r->best_decision = dec;
	}
}

/* ---- composite of multi-metric benchmarks --------------------------------- */

/* Names of the metric family "<prefix>.<test>" present in successful runs, with directions. */
static size_t family_tests(const struct db_results *res, const char *prefix,
			   const char ***out, bool **hib_out)
{
	const char **v = NULL;
	bool *hib = NULL;
	size_t n = 0, plen = strlen(prefix);
	for (size_t i = 0; i < res->nconfigs; i++)
		for (size_t j = 0; j < res->configs[i].nruns; j++) {
			const struct db_results_run *run = &res->configs[i].runs[j];
			if (!run_ok(run))
				continue;
			for (size_t k = 0; k < run->nmetrics; k++) {
				const char *name = run->metrics[k].name;
				if (strncmp(name, prefix, plen) || name[plen] != '.')
					continue;
				int dir = metric_row_direction(&run->metrics[k]);
				size_t s = 0;
				while (s < n && strcmp(v[s], name))
					s++;
				if (s == n && dir >= 0) {	/* figures of no merit stay out */
					v = xrealloc(v, (n + 1) * sizeof(*v));
					hib = xrealloc(hib, (n + 1) * sizeof(*hib));
					v[n] = name;
					hib[n++] = dir == 1;
				}
			}
		}
	*out = v;
	*hib_out = hib;
	return n;
}

/* The values of one metric over a configuration's successful runs. */
static double *metric_values(const struct db_results_config *c, const char *name, size_t *n)
{
	double *v = xmalloc((c->nruns + 1) * sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		const struct db_results_metric *m;
		if (run_ok(&c->runs[i]) && (m = db_results_run_metric(&c->runs[i], name)))
			v[(*n)++] = m->value;
	}
	return v;
}

/* Per successful run with every throughput test: the geometric mean of those tests. */
static double *composite_values(const struct db_results_config *c, const char **tests,
				const bool *hib, size_t k, size_t *n)
{
	double *v = xmalloc((c->nruns + 1) * sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		if (!run_ok(&c->runs[i]))
			continue;
		double logsum = 0;
		size_t used = 0;
		bool all = true;
		for (size_t j = 0; j < k && all; j++) {
			if (!hib[j])
				continue;
			const struct db_results_metric *m = db_results_run_metric(&c->runs[i], tests[j]);
			all = m && m->value > 0;
			if (all) {
				logsum += log(m->value);
				used++;
			}
		}
		if (all && used)
			v[(*n)++] = exp(logsum / (double)used);
	}
	return v;
}

/*
 * Multi-metric benchmarks: per-test ratios to the baseline (each in its own
 * direction) and the composite, the geometric mean of the throughput tests
 * only (latencies have the other direction and would cancel gains).  Only
 * redis stores one metric per test ("redis.SET", "redis.SET.p50_ms", ...).
 */
static void composite_compute(struct rank_result *r)
{
	const char **tests;
	bool *hib;
	size_t k = family_tests(r->res, "redis", &tests, &hib);
	size_t nthroughput = 0;
	for (size_t j = 0; j < k; j++)
		nthroughput += hib[j];
	const struct rank_decision *b = r->baseline_decision;
	if (nthroughput < 2 || !b) {
		free(tests);
		free(hib);
		return;
	}
	r->composite_family = "redis";
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		const struct rank_entry *be = b->levels[e->level];
		if (!be)
			continue;
		bool self = e == be;
		size_t nx, nb;
		double *cx = composite_values(e->config, tests, hib, k, &nx);
		double *cb = composite_values(be->config, tests, hib, k, &nb);
		struct stats_ratio t;
		if (self) {
			e->composite = 1;
		} else if (stats_log_welch(cx, nx, cb, nb, r->level_alpha, &t) == 0) {
			e->composite = t.ratio;
			e->composite_lo = t.lo;
			e->composite_hi = t.hi;
		}
		free(cx);
		free(cb);
		e->tests = xcalloc(k, sizeof(*e->tests));
		e->ntests = k;
		for (size_t j = 0; j < k; j++) {
			struct rank_test_ratio *tr = &e->tests[j];
			tr->name = tests[j];
			tr->higher_is_better = hib[j];
			tr->ratio = tr->ratio_lo = tr->ratio_hi = NAN;
			tr->gain = tr->gain_lo = tr->gain_hi = NAN;
			double *x = metric_values(e->config, tests[j], &nx);
			double *y = metric_values(be->config, tests[j], &nb);
			tr->mean = stats_mean(x, nx);
			struct cmp c;
			cmp_values(x, nx, y, nb, hib[j], r->level_alpha, r->equivalence, &c, &t);
			if (self) {
				tr->ratio = 1;
				tr->gain = 0;
			} else if (c.ok) {
				tr->ratio = t.ratio;
				tr->ratio_lo = t.lo;
				tr->ratio_hi = t.hi;
				tr->gain = gain_of(c.lg);
				tr->gain_lo = gain_of(c.lo);
				tr->gain_hi = gain_of(c.hi);
			}
			free(x);
			free(y);
		}
	}
	free(tests);
	free(hib);
}

/* ---- the recommendation ---------------------------------------------------- */

/*
 * Cost order among decisions shown equivalent: fewer host CPUs, fewer
 * non-default host settings, significantly fewer ganged exits (Welch p <
 * RANK_ALPHA over their runs), then the better objective.
 */
static bool preferred(const struct rank_decision *a, const struct rank_decision *b)
{
	if (a->host_cpus != b->host_cpus)
		return a->host_cpus < b->host_cpus;
	if (a->nondefault_knobs != b->nondefault_knobs)
		return a->nondefault_knobs < b->nondefault_knobs;
	struct stats_test t;
	stats_welch(a->gang, a->ngang, b->gang, b->ngang, &t);
	if (!isnan(t.p) && t.p < RANK_ALPHA)
		return stats_mean(a->gang, a->ngang) < stats_mean(b->gang, b->ngang);
	return a->score > b->score;
}

/* A decision the race already dropped as worse than the best is out of contention. */
static void contention_add(struct rank_result *r, const struct rank_decision *d)
{
	if (d->eliminated_block > 0)
		return;
	r->contention = xrealloc(r->contention, (r->ncontention + 1) * sizeof(*r->contention));
	r->contention[r->ncontention++] = d;
	if (!isnan(d->min_detectable_effect) &&
	    (isnan(r->min_detectable_effect) || d->min_detectable_effect > r->min_detectable_effect))
		r->min_detectable_effect = d->min_detectable_effect;
	int need = d->needed_repetitions;
	if (d->verdict == RANK_INSUFFICIENT) {
		/* Enough for a test at every level, at the least. */
		need = 0;
		for (size_t l = 0; l < r->nlevels; l++)
			if (d->levels[l] && d->levels[l]->s.n < 2 && 2 - (int)d->levels[l]->s.n > need)
				need = 2 - (int)d->levels[l]->s.n;
	}
	if (need > r->needed_repetitions)
		r->needed_repetitions = need;
}

static void why_list(struct strbuf *why, const struct rank_result *r)
{
	for (size_t i = 0; i < r->ncontention; i++)
		strbuf_addf(why, "%s%s (%s)", i ? ", " : "", r->contention[i]->key,
			    rank_verdict_name(r->contention[i]->verdict));
}

static bool only_insufficient(const struct rank_result *r)
{
	for (size_t i = 0; i < r->ncontention; i++)
		if (r->contention[i]->verdict != RANK_INSUFFICIENT)
			return false;
	return true;
}

static void why_settle(struct strbuf *why, const struct rank_result *r)
{
	if (!isnan(r->min_detectable_effect))
		strbuf_addf(why, " These runs detect gains of about %.1f %% (power %.0f %%).",
			    100 * r->min_detectable_effect, 100 * RANK_POWER);
	if (r->needed_repetitions > RANK_MAX_REPETITIONS)
		strbuf_addf(why, " More than %d further repetitions would be needed at this "
			    "spread: quieten the host or the benchmark (see the CV warnings), or "
			    "widen advisor.equivalence if a difference of +-%.0f %% does not matter "
			    "to you.", RANK_MAX_REPETITIONS, 100 * r->equivalence);
	else if (r->needed_repetitions > 0)
		strbuf_addf(why, " About %d more repetition%s of each would %s "
			    "(topoadvisor extend %s --repetitions %d).", r->needed_repetitions,
			    r->needed_repetitions == 1 ? "" : "s", only_insufficient(r)
			    ? "make them testable at least" : "settle it", r->res->exp.name,
			    r->needed_repetitions);
}

static void recommend_with_baseline(struct rank_result *r, struct strbuf *why)
{
	const struct rank_decision *b = r->baseline_decision;
	const struct rank_decision *top = NULL;
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		if (!dec->host_reference && dec->verdict == RANK_BETTER &&
		    (!top || dec->score > top->score))
			top = dec;
	}
	if (top) {
		size_t m = family_size(r, top);
		double level_alpha = RANK_ALPHA / (double)(m * r->nlevels);
		double obj_alpha = r->objective == RANK_OBJECTIVE_MEAN ? RANK_ALPHA / (double)m
								       : level_alpha;
		const struct rank_decision *pick = top;
		size_t ncand = 1;
		for (size_t d = 0; d < r->ndecisions; d++) {
			const struct rank_decision *dec = &r->decisions[d];
			if (dec == top || dec->host_reference || dec->verdict != RANK_BETTER)
				continue;
			struct cmp c;
			cmp_objective(r, dec, top, level_alpha, obj_alpha, &c);
			if (!c.ok || verdict_of(gain_of(c.lo), gain_of(c.hi), r->equivalence) !=
				     RANK_EQUIVALENT)
				continue;
			ncand++;
			if (preferred(dec, pick))
				pick = dec;
		}
		r->verdict = RANK_BETTER;
		r->recommended_decision = pick;
		strbuf_addf(why, "%s is better than the baseline %s: ", pick->key, b->key);
		rank_format_gain_ci(why, pick->gain, pick->gain_lo, pick->gain_hi);
		strbuf_addf(why, " (Welch on the log scale, Bonferroni over %zu comparisons)",
			    r->ncomparisons);
		if (ncand > 1)
			strbuf_addf(why, "; of the %zu configurations within +-%.0f %% of the top "
				    "one (%s) it costs least (fewer host CPUs, then fewer non-default "
				    "host settings, then significantly fewer ganged exits)", ncand,
				    100 * r->equivalence, top->key);
		for (size_t d = 0; d < r->ndecisions; d++) {
			const struct rank_decision *dec = &r->decisions[d];
			if (dec != pick && dec != top && dec != b && !dec->host_reference &&
			    !dec->worse_than_best && !dec->equivalent_to_best &&
			    dec->verdict != RANK_WORSE && dec->verdict != RANK_EQUIVALENT)
				contention_add(r, dec);
		}
		if (r->ncontention) {
			strbuf_addstr(why, ". Not yet shown worse than the best, and could still "
				      "be better: ");
			why_list(why, r);
		}
		strbuf_addch(why, '.');
		return;
	}
	size_t nother = 0;
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		if (dec == b || dec->host_reference)
			continue;
		nother++;
		if (dec->verdict != RANK_EQUIVALENT && dec->verdict != RANK_WORSE)
			contention_add(r, dec);
	}
	r->recommended_decision = b;
	if (!nother) {
		r->verdict = RANK_INSUFFICIENT;
		strbuf_addf(why, "Only the baseline %s was measured: nothing to compare it with.",
			    b->key);
	} else if (!r->ncontention) {
		r->verdict = RANK_EQUIVALENT;
		r->nothing_beats_baseline = true;
		strbuf_addf(why, "Nothing beats the baseline %s: every other configuration is "
			    "shown worse than it or within +-%.0f %% of it (Welch on the log "
			    "scale, Bonferroni over %zu comparisons): keep it.", b->key,
			    100 * r->equivalence, r->ncomparisons);
	} else {
		r->verdict = RANK_UNDECIDED;
		strbuf_addf(why, "Undecided: no configuration is shown better than the baseline "
			    "%s, and not every one is shown worse or within +-%.0f %% of it. Still "
			    "in contention: ", b->key, 100 * r->equivalence);
		why_list(why, r);
		strbuf_addch(why, '.');
		why_settle(why, r);
		strbuf_addstr(why, " Until then the baseline stays.");
	}
}

static void recommend_without_baseline(struct rank_result *r, struct strbuf *why)
{
	const struct rank_decision *best = r->best_decision;
	const struct rank_decision *pick = best;
	size_t ncand = 1;
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		if (dec->equivalent_to_best && !dec->host_reference) {
			ncand++;
			if (preferred(dec, pick))
				pick = dec;
		}
	}
	r->recommended_decision = pick;
	for (size_t d = 0; d < r->ndecisions; d++) {
		const struct rank_decision *dec = &r->decisions[d];
		if (dec != best && !dec->host_reference && !dec->equivalent_to_best &&
		    !dec->worse_than_best)
			contention_add(r, dec);
	}
	r->verdict = r->ncontention ? RANK_UNDECIDED : RANK_BETTER;
	if (pick == best)
		strbuf_addf(why, "%s has the best %s", pick->key, r->metric);
	else
		strbuf_addf(why, "%s is within +-%.0f %% of the best (%s) and costs least of the "
			    "%zu such configurations (fewer host CPUs, then fewer non-default host "
			    "settings, then significantly fewer ganged exits)", pick->key,
			    100 * r->equivalence, best->key, ncand);
	if (r->ncontention) {
		strbuf_addstr(why, "; undecided: not shown worse than the best nor within "
			      "its margin: ");
		why_list(why, r);
		strbuf_addch(why, '.');
		why_settle(why, r);
	} else {
		strbuf_addstr(why, "; every other configuration is shown worse or equivalent.");
	}
	strbuf_addstr(why, " There is no baseline, so no gain can be given.");
}

static void recommend(struct rank_result *r)
{
	struct strbuf why = STRBUF_INIT;
	const struct rank_decision *b = r->baseline_decision;
	r->verdict = RANK_INSUFFICIENT;
	r->min_detectable_effect = NAN;
	r->needed_repetitions = 0;
	bool any_data = false;
	for (size_t i = 0; i < r->nentries; i++)
		any_data |= r->entries[i].s.n > 0 && !r->entries[i].host_reference;
	if (!any_data) {
		r->reason = xstrdup("No configuration has a successful run with this metric.");
		return;
	}
	if (b && !decision_testable(r, b)) {
		/* A tentative pick only: nothing can be tested against the baseline. */
		r->recommended_decision = r->best_decision ? r->best_decision : b;
		for (size_t l = 0; l < r->nlevels; l++)
			if (b->levels[l] && 2 - (int)b->levels[l]->s.n > r->needed_repetitions)
				r->needed_repetitions = 2 - (int)b->levels[l]->s.n;
		strbuf_addf(&why, "Insufficient: the baseline %s has fewer than 2 successful "
			    "runs, so nothing can be tested against it; %s leads by its mean, "
			    "which decides nothing. Run the baseline again (topoadvisor extend "
			    "%s --repetitions %d).", b->key, r->recommended_decision->key,
			    r->res->exp.name, r->needed_repetitions > 0 ? r->needed_repetitions : 1);
	} else if (b) {
		recommend_with_baseline(r, &why);
	} else if (r->best_decision) {
		recommend_without_baseline(r, &why);
	} else {
		/* Data, but no configuration with 2 runs: the best mean, tentatively. */
		for (size_t i = 0; i < r->nentries && !r->recommended_decision; i++)
			if (r->entries[i].s.n && !r->entries[i].host_reference)
				r->recommended_decision = r->entries[i].decision;
		r->needed_repetitions = 1;
		strbuf_addf(&why, "Insufficient: no configuration has 2 successful runs to "
			    "test; %s leads by its mean, which decides nothing.",
			    r->recommended_decision ? r->recommended_decision->key : "none");
	}
	if (r->nlevels > 1)
		strbuf_addf(&why, " Over %zu environment levels, objective %s (%s).", r->nlevels,
			    rank_objective_name(r->objective), r->objective == RANK_OBJECTIVE_MEAN
			    ? "the geometric mean of the levels' ratios"
			    : "the worst level's ratio");
	r->recommended = r->recommended_decision ? r->recommended_decision->entry : NULL;
	r->reason = strbuf_detach(&why);
}

/* ---- evidence and warnings ------------------------------------------------ */

/* Spearman of ganged exits per second (or per run) with the metric, across runs. */
static void evidence(struct rank_result *r)
{
	const char *names[] = { "gang_exits_per_s", "gang_exits" };
	r->spearman = NAN;
	for (size_t t = 0; t < 2 && !r->correlation_x; t++) {
		double *x = NULL, *y = NULL;
		size_t n = 0;
		for (size_t i = 0; i < r->nentries; i++) {
			const struct rank_entry *e = &r->entries[i];
			for (size_t j = 0; j < e->s.n; j++) {
				const struct db_results_metric *g = db_results_run_metric(e->value_runs[j], names[t]);
				if (!g)
					continue;
				x = xrealloc(x, (n + 1) * sizeof(*x));
				y = xrealloc(y, (n + 1) * sizeof(*y));
				x[n] = g->value;
				y[n++] = e->values[j];
			}
		}
		if (n > 0) {
			r->correlation_x = names[t];
			r->spearman = stats_spearman(x, y, n);
			r->spearman_n = n;
		}
		free(x);
		free(y);
	}
}

static void warnings_collect(struct rank_result *r)
{
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		const char *key = e->config->rec.key;
		if (e->s.n == 0)
			warn(r, "no_data", key, "%s: no successful run with %s", key, r->metric);
		else if (e->s.n < RANK_MIN_REPETITIONS)
			warn(r, "few_repetitions", key, "%s: only %zu successful repetition%s "
			     "(< %d): its interval and tests are weak", key, e->s.n,
			     e->s.n == 1 ? "" : "s", RANK_MIN_REPETITIONS);
		if (e->s.cv > RANK_MAX_CV)
			warn(r, "high_cv", key, "%s: CV %.1f %% > %.0f %%: the runs vary a lot "
			     "(noisy host or benchmark)", key, 100 * e->s.cv, 100 * RANK_MAX_CV);
		for (size_t j = 0; j < e->s.n; j++)
			if (e->outlier[j])
				warn(r, "outliers", key, "%s: repetition %d is an outlier: %.6g "
				     "(%+.1f %% from the mean %.6g, %.2f standard deviations; Grubbs "
				     "at %.0f %% for %zu runs)", key, e->value_runs[j]->repetition + 1,
				     e->values[j], 100 * (e->values[j] / e->s.mean - 1), e->s.mean,
				     e->dev[j], 100 * STATS_OUTLIER_ALPHA, e->s.n);
		for (size_t j = 0; j < e->config->nruns; j++) {
			const struct db_results_run *run = &e->config->runs[j];
			if (run_failed(run))
				warn(r, "failed_run", key, "%s: repetition %d %s: %s", key,
				     run->repetition + 1, run->status,
				     run->error ? run->error : "no error recorded");
			if (!run_ok(run))
				continue;
			if (run->lost_events > 0)
				warn(r, "lost_events", key, "%s: repetition %d lost %lld trace "
				     "events: its exit counts are lower bounds", key,
				     run->repetition + 1, (long long)run->lost_events);
			if (run->topology_ok == 0)
				warn(r, "topology_mismatch", key, "%s: repetition %d: the guest "
				     "saw a different CPU topology than requested", key,
				     run->repetition + 1);
		}
	}
	if (!r->direction_known)
		warn(r, "direction_unknown", NULL, "no stored direction for %s: ranked as higher "
		     "is better; check that this is right", r->metric);
	if (r->settings_unknown)
		warn(r, "settings_unknown", NULL, "this experiment was stored before its advisor "
		     "settings were, by a sweep that names some: ranked with the defaults "
		     "(objective worst, equivalence %.0f %%, environment noise); 'topoadvisor "
		     "rerun' stores them", 100 * RANK_DEFAULT_EQUIVALENCE);
	if (!r->gang_data)
		warn(r, "no_gang_data", NULL, "no ganged-exit data on this host: ganged exits "
		     "are not applicable (not POWER8/9 KVM HV, or not collected)");
	const struct rank_decision *b = r->baseline_decision;
	if (!b)
		warn(r, "no_baseline", NULL, "no baseline: no configuration is marked baseline "
		     "and none is the host's default shape (sockets = vCPUs, no pinning or "
		     "host settings); ranking without ratios");
	else if (!decision_testable(r, b))
		warn(r, "baseline_untestable", b->key, "baseline %s has fewer than 2 successful "
		     "runs: nothing can be tested against it", b->key);
	for (size_t l = 0; b && l < r->nlevels; l++)
		if (!b->levels[l])
			warn(r, "baseline_missing_level", b->key, "baseline %s was not measured at "
			     "%s: nothing is compared there", b->key, r->levels[l]);
}

int rank_compute(const struct db_results *res, const char *metric, struct rank_result *out,
		 struct ta_err *err)
{
	struct rank_options o;
	rank_options_init(&o);
	o.metric = metric;
	return rank_compute_opts(res, &o, out, err);
}

int rank_compute_opts(const struct db_results *res, const struct rank_options *opt,
		      struct rank_result *out, struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	out->res = res;
	out->spearman = NAN;
	out->equivalence = opt->equivalence;
	out->objective = opt->objective;
	out->settings_unknown = opt->settings_unknown;
	out->level_alpha = RANK_ALPHA;
	out->min_detectable_effect = NAN;
	const char *metric = opt->metric ? opt->metric : res->exp.primary_metric;
	if (!metric) {
		struct strbuf names = STRBUF_INIT;
		metric_names(res, &names);
		err_set(err, EXIT_BAD_INPUT, "experiment %s has no primary metric: pass "
			"--metric (one of: %s)", res->exp.name,
			names.len ? strbuf_str(&names) : "none stored");
		strbuf_release(&names);
		return -1;
	}
	bool found;
	int hib;
	metric_meta(res, metric, &found, &hib, &out->unit);
	if (!found && res->exp.nok == 0)
		return err_set(err, EXIT_BAD_INPUT, "experiment %s has no successful run yet "
			       "(%d runs: %d planned, %d failed, %d interrupted); see "
			       "'topoadvisor show %s'", res->exp.name, res->exp.nruns,
			       res->exp.nplanned + res->exp.nrunning, res->exp.nfailed,
			       res->exp.ninterrupted, res->exp.name);
	if (!found) {
		struct strbuf names = STRBUF_INIT;
		metric_names(res, &names);
		err_set(err, EXIT_BAD_INPUT, "experiment %s has no metric '%s' (stored: %s)",
			res->exp.name, metric, names.len ? strbuf_str(&names) : "none");
		strbuf_release(&names);
		return -1;
	}
	out->metric = metric;
	/* The direction stored with the metric; the experiment's for the primary
	 * metric when the rows have none; higher is better when nothing says. */
	if (hib < 0 && res->exp.primary_metric && !strcmp(metric, res->exp.primary_metric))
		hib = res->exp.higher_is_better;
	out->higher_is_better = hib != 0;
	out->direction_known = hib >= 0;

	out->nentries = res->nconfigs;
	out->entries = xcalloc(res->nconfigs + 1, sizeof(*out->entries));
	for (size_t i = 0; i < res->nconfigs; i++) {
		const struct db_results_config *c = &res->configs[i];
		entry_fill(&out->entries[i], c, metric, opt);
		for (size_t j = 0; j < c->nruns; j++) {
			const struct db_results_run *run = &c->runs[j];
			out->runs_total++;
			out->runs_ok += run_ok(run);
			out->runs_failed += run_failed(run);
			if (run_ok(run) && (db_results_run_metric(run, "gang_exits") ||
					    db_results_run_metric(run, "gang_exits_per_s")))
				out->gang_data = true;
		}
	}
	/* Host references only mean something next to guests. */
	bool any_guest = false;
	for (size_t i = 0; i < out->nentries; i++)
		any_guest |= !is_host_run(out->entries[i].config);
	for (size_t i = 0; i < out->nentries; i++)
		out->entries[i].host_reference = any_guest && is_host_run(out->entries[i].config);
	levels_assign(out);
	qsort_r(out->entries, out->nentries, sizeof(*out->entries), cmp_entry,
		&out->higher_is_better);
	size_t pos = 0;
	for (size_t i = 0; i < out->nentries; i++) {
		if (i == 0 || out->entries[i].level != out->entries[i - 1].level)
			pos = 0;
		out->entries[i].position = out->entries[i].s.n ? ++pos : 0;
	}
	decisions_build(out);
	choose_baseline(out, opt);
	if (out->baseline_decision && decision_testable(out, out->baseline_decision))
		compare_baseline(out);
	else
		score_without_baseline(out);
	compare_best(out);
	decisions_sort(out);
	if (out->baseline_decision)
		out->baseline = out->baseline_decision->entry;
	if (out->best_decision)
		out->best = out->best_decision->entry;
	composite_compute(out);
	evidence(out);
	recommend(out);
	warnings_collect(out);
	return 0;
}

void rank_result_release(struct rank_result *r)
{
	for (size_t i = 0; i < r->nentries; i++) {
		free(r->entries[i].values);
		free(r->entries[i].value_runs);
		free(r->entries[i].dev);
		free(r->entries[i].outlier);
		free(r->entries[i].tests);
	}
	free(r->entries);
	for (size_t d = 0; d < r->ndecisions; d++) {
		free(r->decisions[d].key);
		free(r->decisions[d].levels);
		free(r->decisions[d].gang);
	}
	free(r->decisions);
	for (size_t l = 0; l < r->nlevels; l++)
		free(r->levels[l]);
	free(r->levels);
	free(r->contention);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i].message);
	free(r->warnings);
	free(r->reason);
	memset(r, 0, sizeof(*r));
}
