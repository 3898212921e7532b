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

/*
 * The knobs a configuration sets, in the sweep's order: the factors JSON
 * first (it has everything), then typed columns the JSON lacks.
 */
static size_t config_knobs(const struct db_results_config *c, struct knob_setting *out,
			   size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nfactors && n < max; i++) {
		if (!(out[n].knob = knob_find(c->factors[i].name)))
			continue;
		out[n].name = c->factors[i].name;
		snprintf(out[n].value, sizeof(out[n].value), "%s", c->factors[i].value);
		n++;
	}
	for (size_t i = 0; i < c->nknob_columns && n < max; i++) {
		const struct db_results_factor *col = &c->knob_columns[i];
		if (db_results_config_factor(c, col->name))
			continue;	/* already listed from the JSON */
		out[n].knob = knob_find(col->name);
		out[n].name = col->name;
		snprintf(out[n].value, sizeof(out[n].value), "%s", col->value);
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
static bool knob_is_default(const struct db_results_config *c, const struct knob_setting *k)
{
	char key[160];
	snprintf(key, sizeof(key), "host_defaults.%s", k->name);
	const char *dflt = db_results_config_factor(c, key);
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

static int nondefault_knobs(const struct db_results_config *c)
{
	struct knob_setting k[32];
	size_t n = config_knobs(c, k, 32);
	int count = 0;
	for (size_t i = 0; i < n; i++)
		count += !knob_is_default(c, &k[i]);
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

/*
 * The pinning policy: factors.pinning_policy as the plan store writes it;
 * older or hand-made rows fall back to the pinning name.
 */
static const char *pin_policy(const struct db_results_config *c)
{
	const char *p = db_results_config_factor(c, "pinning_policy");
	if (p)
		return p;
	return c->npinning_cpus ? "explicit" : c->pinning;
}

static bool pinning_explicit(const struct db_results_config *c)
{
	return c->npinning_cpus > 0 && !strcmp(pin_policy(c), "explicit");
}

static int host_cpus(const struct db_results_config *c)
{
	if (pinning_explicit(c)) {
		int n = rank_cpuset_count((const char *const *)c->pinning_cpus, c->npinning_cpus);
		if (n > 0)
			return n;
	}
	return c->vcpus;
}

void rank_xml_fragment(const struct db_results_config *c, struct strbuf *out)
{
	strbuf_addf(out, "<vcpu placement='static'>%d</vcpu>\n", c->vcpus);
	strbuf_addf(out, "<cpu>\n  <topology sockets='%d' dies='%d' cores='%d' threads='%d'/>\n"
		    "</cpu>\n", c->sockets, c->dies, c->cores, c->threads);
	if (pinning_explicit(c)) {
		strbuf_addstr(out, "<cputune>\n");
		for (size_t i = 0; i < c->npinning_cpus; i++) {
			const char *set = c->pinning_cpus[i];
			if (rank_cpuset_count(&set, 1) > 0)
				strbuf_addf(out, "  <vcpupin vcpu='%zu' cpuset='%s'/>\n", i, set);
			else
				strbuf_addf(out, "  <!-- vCPU %zu: stored cpuset is malformed -->\n", i);
		}
		strbuf_addstr(out, "</cputune>\n");
	} else if (strcmp(pin_policy(c), "none")) {
		strbuf_addf(out, "<!-- pinning '%s' (policy %s): the <cputune> vcpupin CPUs are "
			    "chosen per host by this policy -->\n", c->pinning, pin_policy(c));
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
				*hib = m->higher_is_better;
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
	const char *runner = db_results_config_factor(c, "runner");
	return runner && !strcmp(runner, "host");
}

static void entry_fill(struct rank_entry *e, const struct db_results_config *c,
		       const char *metric)
{
	memset(e, 0, sizeof(*e));
	e->config = c;
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
	e->z = xmalloc((n + 1) * sizeof(*e->z));
	e->noutliers = stats_modified_z(e->values, n, e->z);
	e->ratio = e->ratio_lo = e->ratio_hi = NAN;
	e->gain = e->gain_lo = e->gain_hi = NAN;
	e->p_baseline = e->p_baseline_holm = NAN;
	e->composite = e->composite_lo = e->composite_hi = NAN;
	e->p_best = e->p_best_holm = e->p_best_mw = NAN;
	e->host_cpus = host_cpus(c);
	e->nondefault_knobs = nondefault_knobs(c);
	entry_gang(e);
	entry_exits(e);
}

/* The better of two means in the metric's direction. */
static bool better(double a, double b, bool hib)
{
	return hib ? a > b : a < b;
}

static int cmp_entry(const void *pa, const void *pb, void *hibp)
{
	const struct rank_entry *a = pa, *b = pb;
	bool hib = *(const bool *)hibp;
	if ((a->s.n > 0) != (b->s.n > 0))
		return a->s.n > 0 ? -1 : 1;
	if (a->s.n > 0 && a->s.mean != b->s.mean)
		return better(a->s.mean, b->s.mean, hib) ? -1 : 1;
	return a->config->idx - b->config->idx;
}

/* The host's default shape: one vCPU per socket, no pinning, noise or knob changes. */
static bool default_shape(const struct db_results_config *c)
{
	if (c->sockets != c->vcpus || c->dies != 1 || c->cores != 1 || c->threads != 1 ||
	    strcmp(pin_policy(c), "none") || strcmp(c->noise, "none"))
		return false;
	return nondefault_knobs(c) == 0;
}

static void choose_baseline(struct rank_result *r)
{
	for (size_t i = 0; i < r->nentries; i++)
		if (r->entries[i].config->is_baseline) {
			r->baseline = &r->entries[i];
			r->baseline_source = "marked";
			return;
		}
	/* Several default shapes (different vCPU counts): the first by idx. */
	const struct rank_entry *pick = NULL;
	for (size_t i = 0; i < r->nentries; i++)
		if (default_shape(r->entries[i].config) && !r->entries[i].host_reference &&
		    (!pick || r->entries[i].config->idx < pick->config->idx))
			pick = &r->entries[i];
	if (pick) {
		r->baseline = pick;
		r->baseline_source = "host default shape";
	}
}

/* Names of the metric family "<prefix>.<test>" present in successful runs. */
static size_t family_tests(const struct db_results *res, const char *prefix,
			   const char ***out)
{
	const char **v = NULL;
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
				size_t s = 0;
				while (s < n && strcmp(v[s], name))
					s++;
				if (s == n) {
					v = xrealloc(v, (n + 1) * sizeof(*v));
					v[n++] = name;
				}
			}
		}
	*out = v;
	return n;
}

/* Rows of the k test values of a configuration's successful runs that have all k. */
static double *family_rows(const struct db_results_config *c, const char **tests, size_t k,
			   size_t *nrows)
{
	double *rows = xmalloc((c->nruns * k + 1) * sizeof(*rows));
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		const struct db_results_run *run = &c->runs[i];
		if (!run_ok(run))
			continue;
		size_t j;
		for (j = 0; j < k; j++) {
			const struct db_results_metric *m = db_results_run_metric(run, tests[j]);
			if (!m)
				break;
			rows[n * k + j] = m->value;
		}
		if (j == k)
			n++;
	}
	*nrows = n;
	return rows;
}

/*
 * Multi-metric benchmarks: per-test ratios to the baseline and their
 * geometric mean (the composite), each with a bootstrap CI.  Only redis
 * is known to store one metric per test ("redis.SET", ...).
 */
static void composite_compute(struct rank_result *r, uint64_t seed)
{
	const char **tests;
	size_t k = family_tests(r->res, "redis", &tests);
	if (k < 2 || !r->baseline) {
		free(tests);
		return;
	}
	r->composite_family = "redis";
	size_t nb;
	double *base = family_rows(r->baseline->config, tests, k, &nb);
	double *col_b = xmalloc((nb + 1) * sizeof(*col_b));
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		size_t nx;
		double *rows = family_rows(e->config, tests, k, &nx);
		double *col_x = xmalloc((nx + 1) * sizeof(*col_x));
		e->tests = xcalloc(k, sizeof(*e->tests));
		e->ntests = k;
		uint64_t s = seed + (uint64_t)e->config->idx;
		e->composite = stats_bootstrap_ratio(rows, nx, base, nb, k, s,
						     &e->composite_lo, &e->composite_hi);
		for (size_t j = 0; j < k; j++) {
			for (size_t t = 0; t < nx; t++)
				col_x[t] = rows[t * k + j];
			for (size_t t = 0; t < nb; t++)
				col_b[t] = base[t * k + j];
			struct rank_test_ratio *tr = &e->tests[j];
			tr->name = tests[j];
			tr->mean = stats_mean(col_x, nx);
			tr->ratio = stats_bootstrap_ratio(col_x, nx, col_b, nb, 1, s + 7919 * (j + 1),
							  &tr->ratio_lo, &tr->ratio_hi);
			if (e == r->baseline)
				tr->ratio_lo = tr->ratio_hi = NAN;	/* itself: no interval */
		}
		if (e == r->baseline)
			e->composite_lo = e->composite_hi = NAN;
		free(col_x);
		free(rows);
	}
	free(col_b);
	free(base);
	free(tests);
}

/* Welch of every other configuration against `ref`, Holm-corrected as one family. */
static void compare_family(struct rank_result *r, const struct rank_entry *ref,
			   bool against_best)
{
	double *p = xmalloc((r->nentries + 1) * sizeof(*p));
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		p[i] = NAN;
		if (e == ref || (against_best && e->host_reference))
			continue;
		struct stats_test t;
		stats_welch(e->values, e->s.n, ref->values, ref->s.n, &t);
		p[i] = t.p;
		if (against_best) {
			e->p_best = t.p;
			stats_mann_whitney(e->values, e->s.n, ref->values, ref->s.n, &t);
			e->p_best_mw = t.p;
		} else {
			e->p_baseline = p[i];
		}
	}
	stats_holm(p, r->nentries, p);
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		if (e == ref || (against_best && e->host_reference))
			continue;
		if (against_best) {
			e->p_best_holm = p[i];
			e->tied_with_best = !isnan(p[i]) && p[i] >= RANK_ALPHA;
		} else {
			e->p_baseline_holm = p[i];
			e->beats_baseline = !isnan(p[i]) && p[i] < RANK_ALPHA &&
					    better(e->s.mean, ref->s.mean, r->higher_is_better);
		}
	}
	free(p);
}

static void ratios_compute(struct rank_result *r, uint64_t seed)
{
	const struct rank_entry *b = r->baseline;
	if (!b || b->s.n == 0)
		return;
	for (size_t i = 0; i < r->nentries; i++) {
		struct rank_entry *e = &r->entries[i];
		if (e->s.n == 0)
			continue;
		if (e == b) {
			/* Against itself: exactly 1, and no interval to speak of. */
			e->ratio = 1;
			e->gain = 0;
			continue;
		}
		e->ratio = stats_bootstrap_ratio(e->values, e->s.n, b->values, b->s.n, 1,
						 seed + (uint64_t)e->config->idx,
						 &e->ratio_lo, &e->ratio_hi);
		if (r->higher_is_better) {
			e->gain = e->ratio - 1;
			e->gain_lo = e->ratio_lo - 1;
			e->gain_hi = e->ratio_hi - 1;
		} else {
			e->gain = 1 / e->ratio - 1;
			e->gain_lo = 1 / e->ratio_hi - 1;
			e->gain_hi = 1 / e->ratio_lo - 1;
		}
	}
}

/*
 * Tie-break order among candidates: fewer ganged exits (only when both have
 * data), fewer host CPUs, fewer non-default knobs, then the better mean.
 */
static bool preferred(const struct rank_entry *a, const struct rank_entry *b, bool hib)
{
	double ga = isnan(a->gang_exits_per_s) ? a->gang_exits : a->gang_exits_per_s;
	double gb = isnan(b->gang_exits_per_s) ? b->gang_exits : b->gang_exits_per_s;
	if (!isnan(ga) && !isnan(gb) && ga != gb)
		return ga < gb;
	if (a->host_cpus != b->host_cpus)
		return a->host_cpus < b->host_cpus;
	if (a->nondefault_knobs != b->nondefault_knobs)
		return a->nondefault_knobs < b->nondefault_knobs;
	return better(a->s.mean, b->s.mean, hib);
}

static void recommend(struct rank_result *r)
{
	struct strbuf why = STRBUF_INIT;
	const struct rank_entry *b = r->baseline;
	bool baseline_usable = b && b->s.n >= 2;
	bool any_beats = false;
	for (size_t i = 0; i < r->nentries; i++)
		any_beats |= r->entries[i].beats_baseline && !r->entries[i].host_reference;

	if (baseline_usable && !any_beats) {
		r->recommended = b;
		r->nothing_beats_baseline = true;
		strbuf_addf(&why, "No configuration is significantly better than the baseline "
			    "%s (Holm-corrected Welch p < %.2f): keep the baseline.",
			    b->config->key, RANK_ALPHA);
		r->reason = strbuf_detach(&why);
		return;
	}
	const struct rank_entry *pick = NULL;
	size_t ncand = 0;
	for (size_t i = 0; i < r->nentries; i++) {
		const struct rank_entry *e = &r->entries[i];
		if (!(e->is_best || e->tied_with_best) || e->host_reference)
			continue;
		if (baseline_usable && !e->beats_baseline)
			continue;
		ncand++;
		if (!pick || preferred(e, pick, r->higher_is_better))
			pick = e;
	}
	if (!pick && baseline_usable) {
		/* The best itself is not significantly better: take the best that is. */
		for (size_t i = 0; i < r->nentries && !pick; i++)
			if (r->entries[i].beats_baseline && !r->entries[i].host_reference)
				pick = &r->entries[i];
		ncand = 1;
	}
	if (!pick)
		pick = r->best;
	r->recommended = pick;
	if (!pick) {
		r->reason = xstrdup("No configuration has a successful run with this metric.");
		return;
	}
	if (pick == r->best && ncand <= 1)
		strbuf_addf(&why, "%s has the best mean %s and no other configuration is tied "
			    "with it", pick->config->key, r->metric);
	else if (pick == r->best)
		strbuf_addf(&why, "%s has the best mean %s; of the %zu configurations not "
			    "significantly different from it it also wins the tie-break "
			    "(fewer ganged exits, then fewer host CPUs, then fewer non-default "
			    "host settings)", pick->config->key, r->metric, ncand);
	else
		strbuf_addf(&why, "%s is not significantly different from the best (%s, "
			    "Holm-corrected Welch p = %.3g) and wins the tie-break among %zu "
			    "such configurations (fewer ganged exits, then fewer host CPUs, "
			    "then fewer non-default host settings)", pick->config->key,
			    r->best->config->key, pick->p_best_holm, ncand);
	if (baseline_usable)
		strbuf_addf(&why, "; it is significantly better than the baseline %s "
			    "(Holm-corrected Welch p = %.3g).", b->config->key, pick->p_baseline_holm);
	else if (b)
		strbuf_addf(&why, "; the baseline %s has too few successful runs to test "
			    "against.", b->config->key);
	else
		strbuf_addstr(&why, "; there is no baseline, so no gain can be given.");
	r->reason = strbuf_detach(&why);
}

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
		const char *key = e->config->key;
		if (e->s.n == 0)
			warn(r, "no_data", key, "%s: no successful run with %s", key, r->metric);
		else if (e->s.n < RANK_MIN_REPETITIONS)
			warn(r, "few_repetitions", key, "%s: only %zu successful repetition%s "
			     "(< %d): its interval and tests are weak", key, e->s.n,
			     e->s.n == 1 ? "" : "s", RANK_MIN_REPETITIONS);
		if (e->s.cv > RANK_MAX_CV)
			warn(r, "high_cv", key, "%s: CV %.1f %% > %.0f %%: the runs vary a lot "
			     "(noisy host or benchmark)", key, 100 * e->s.cv, 100 * RANK_MAX_CV);
		/* Say how far off each outlier is: with tiny spreads |z| > 3.5 can be harmless. */
		for (size_t j = 0; j < e->s.n; j++)
			if (fabs(e->z[j]) > STATS_OUTLIER_Z)
				warn(r, "outliers", key, "%s: repetition %d is an outlier: %.6g "
				     "(%+.1f %% from the median %.6g, modified z %.2f)", key,
				     e->value_runs[j]->repetition, e->values[j],
				     100 * (e->values[j] / e->s.median - 1), e->s.median, e->z[j]);
		for (size_t j = 0; j < e->config->nruns; j++) {
			const struct db_results_run *run = &e->config->runs[j];
			if (run_failed(run))
				warn(r, "failed_run", key, "%s: repetition %d %s: %s", key,
				     run->repetition, run->status,
				     run->error ? run->error : "no error recorded");
			if (!run_ok(run))
				continue;
			if (run->lost_events > 0)
				warn(r, "lost_events", key, "%s: repetition %d lost %lld trace "
				     "events: its exit counts are lower bounds", key,
				     run->repetition, (long long)run->lost_events);
			if (run->topology_ok == 0)
				warn(r, "topology_mismatch", key, "%s: repetition %d: the guest "
				     "saw a different CPU topology than requested", key,
				     run->repetition);
		}
	}
	if (!r->gang_data)
		warn(r, "no_gang_data", NULL, "no ganged-exit data on this host: ganged exits "
		     "are not applicable (not POWER8/9 KVM HV, or not collected)");
	if (!r->baseline)
		warn(r, "no_baseline", NULL, "no baseline: no configuration is marked baseline "
		     "and none is the host's default shape (sockets = vCPUs, no pinning, "
		     "noise or host settings); ranking without ratios");
	else if (r->baseline->s.n < 2)
		warn(r, "baseline_untestable", r->baseline->config->key, "baseline %s has "
		     "fewer than 2 successful runs: nothing can be tested against it",
		     r->baseline->config->key);
}

int rank_compute(const struct db_results *res, const char *metric, struct rank_result *out,
		 struct ta_err *err)
{
	memset(out, 0, sizeof(*out));
	out->res = res;
	out->spearman = NAN;
	if (!metric)
		metric = res->exp.primary_metric;
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
	if (res->exp.primary_metric && !strcmp(metric, res->exp.primary_metric) &&
	    res->exp.higher_is_better >= 0)
		hib = res->exp.higher_is_better;
	out->higher_is_better = hib != 0;	/* unknown: higher is better */

	out->nentries = res->nconfigs;
	out->entries = xcalloc(res->nconfigs + 1, sizeof(*out->entries));
	for (size_t i = 0; i < res->nconfigs; i++) {
		const struct db_results_config *c = &res->configs[i];
		entry_fill(&out->entries[i], c, metric);
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
	qsort_r(out->entries, out->nentries, sizeof(*out->entries), cmp_entry,
		&out->higher_is_better);
	for (size_t i = 0; i < out->nentries; i++)
		out->entries[i].position = out->entries[i].s.n ? i + 1 : 0;
	for (size_t i = 0; i < out->nentries && !out->best; i++) {
		struct rank_entry *e = &out->entries[i];
		if (e->s.n && !e->host_reference) {
			e->is_best = true;
			out->best = e;
		}
	}
	if (out->best)
		compare_family(out, out->best, true);
	choose_baseline(out);
	if (out->baseline && out->baseline->s.n >= 2)
		compare_family(out, out->baseline, false);
	ratios_compute(out, res->exp.seed);
	composite_compute(out, res->exp.seed);
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
		free(r->entries[i].z);
		free(r->entries[i].tests);
	}
	free(r->entries);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i].message);
	free(r->warnings);
	free(r->reason);
	memset(r, 0, sizeof(*r));
}
