/*
 * plan: cross the sweep's factors, drop what cannot run, order the runs.
 * See plan.h.  Pure: host facts come in as a struct.
 */
#include "plan.h"

#include <assert.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/knob-table.h"
#include "../util/splitmix.h"
#include "../util/strbuf.h"

/* A candidate shape before the cross product. */
struct cand_shape {
	struct shape shape;
	int vcpus;
};

/*
 * What plan_expand keeps while it builds the plan, so that it is linear in
 * the combinations it makes: room in the arrays, and the dropped entries
 * already listed (a combination dropped again for the same reason).
 */
struct expansion {
	struct plan *p;
	size_t configs_cap, dropped_cap;
	GHashTable *seen;	/* "what\nreason" */
};

/* Makes room for n elements of size sz in *v, which has room for *cap. */
static void grow(void *v, size_t *cap, size_t n, size_t sz)
{
	if (n <= *cap)
		return;
	*cap = *cap ? 2 * *cap : 16;
	if (*cap < n)
		*cap = n;
	*(void **)v = xrealloc(*(void **)v, *cap * sz);
}

/* a * b, or SIZE_MAX when that overflows. */
static size_t mul_sat(size_t a, size_t b)
{
	return a && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

static bool is_power_of_two(int v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

static void add_dropped(struct expansion *x, const char *what, const char *reason,
			const struct pinning *pin)
{
	struct plan *p = x->p;
	char *key = g_strconcat(what, "\n", reason, NULL);
	if (g_hash_table_contains(x->seen, key)) {
		g_free(key);
		return;
	}
	g_hash_table_add(x->seen, key);
	grow(&p->dropped, &x->dropped_cap, p->ndropped + 1, sizeof(*p->dropped));
	p->dropped[p->ndropped].what = xstrdup(what);
	p->dropped[p->ndropped].reason = xstrdup(reason);
	p->dropped[p->ndropped].pinning = pin;
	p->ndropped++;
}

static void add_shape(struct cand_shape **v, size_t *n, size_t *cap, const struct shape *s)
{
	grow(v, cap, *n + 1, sizeof(**v));
	(*v)[*n].shape = *s;
	(*v)[*n].vcpus = s->sockets * s->dies * s->cores * s->threads;
	(*n)++;
}

/*
 * The generator: every (vcpus, threads, sockets) whose product divides
 * evenly.  Combinations that do not divide are listed as dropped so the
 * user sees why a requested thread count produced nothing.
 */
static void generate_shapes(struct expansion *x, const struct topology_spec *t,
			    struct cand_shape **out, size_t *n)
{
	char what[96], why[160];
	size_t cap = 0;
	for (size_t i = 0; i < t->nvcpus; i++) {
		int v = t->vcpus[i];
		for (size_t j = 0; j < t->nthreads; j++) {
			int th = t->threads[j];
			if (v % th) {
				snprintf(what, sizeof(what), "vcpus=%d/threads=%d", v, th);
				snprintf(why, sizeof(why),
					 "%d threads per core do not divide %d vCPUs", th, v);
				add_dropped(x, what, why, NULL);
				continue;
			}
			int per_thread = v / th;
			if (!t->nsockets) {
				for (int s = 1; s <= per_thread; s++) {
					if (per_thread % s)
						continue;
					struct shape sh = { .sockets = s, .dies = 1,
							    .cores = per_thread / s, .threads = th };
					add_shape(out, n, &cap, &sh);
				}
				continue;
			}
			for (size_t k = 0; k < t->nsockets; k++) {
				int s = t->sockets[k];
				if (per_thread % s) {
					snprintf(what, sizeof(what), "vcpus=%d/threads=%d/sockets=%d",
						 v, th, s);
					snprintf(why, sizeof(why),
						 "%d sockets x %d threads do not divide %d vCPUs",
						 s, th, v);
					add_dropped(x, what, why, NULL);
					continue;
				}
				struct shape sh = { .sockets = s, .dies = 1,
						    .cores = per_thread / s, .threads = th };
				add_shape(out, n, &cap, &sh);
			}
		}
	}
}

/* Highest CPU number of a cpuset the loader already validated. */
static int cpuset_max(const char *s)
{
	int n, max;
	return config_cpuset_parse(s, &n, &max) == 0 ? max : -1;
}

static const char *knob_value(const struct sweep_config *cfg, const char **values,
			      const char *name)
{
	for (size_t i = 0; i < cfg->nknobs; i++)
		if (!strcmp(cfg->knobs[i].name, name))
			return values[i];
	return NULL;
}

/*
 * Checks one combination; on the first rule it breaks, fills `what` with
 * the smallest set of factor values that breaks it and returns the reason;
 * *pin_fault says whether that rule is the pinning's.
 */
static const char *combination_invalid(const struct sweep_config *cfg,
				       const struct host_facts *host, bool cross,
				       const struct cand_shape *cs, const struct pinning *pin,
				       const char **knobs, const struct noise *noise,
				       struct strbuf *what, struct strbuf *why, bool *pin_fault)
{
	*pin_fault = false;
	char shape[64];
	shape_format(&cs->shape, shape, sizeof(shape));
	enum guest_arch arch = cfg->arch == ARCH_HOST ? host->arch : cfg->arch;
	int th = cs->shape.threads;

	if (arch == ARCH_PPC64 && (!is_power_of_two(th) || th > 8)) {
		strbuf_addstr(what, shape);
		strbuf_addf(why, "ppc64 (pseries) needs threads per core to be a power of two "
			    "up to 8, not %d", th);
		return strbuf_str(why);
	}

	/* Split-core: POWER8's subcores share the core's 8 threads. */
	const struct knob *subcores = knob_of_kind(KNOB_SUBCORES), *smt_knob = knob_of_kind(KNOB_SMT);
	const char *sub = knob_value(cfg, knobs, subcores->name);
	if (sub) {
		int per_sub = 8 / atoi(sub);
		if (th > per_sub) {
			strbuf_addf(what, "%s/%s=%s", shape, subcores->name, sub);
			strbuf_addf(why, "POWER8 with %s subcores per core has %d threads per "
				    "subcore; the guest asks for %d", sub, per_sub, th);
			return strbuf_str(why);
		}
		const char *smt = knob_value(cfg, knobs, smt_knob->name);
		if (smt && strcmp(smt, "off")) {
			strbuf_addf(what, "%s=%s/%s=%s", subcores->name, sub, smt_knob->name, smt);
			strbuf_addstr(why, "KVM HV on POWER8 needs the host's secondary threads "
				      "offline (smt off)");
			return strbuf_str(why);
		}
	}

	/* Guest vCPUs named for the benchmark and in-guest loads must exist in the shape. */
	int bench_max = cfg->bench.vcpus ? cpuset_max(cfg->bench.vcpus) : -1;
	if (bench_max >= cs->vcpus) {
		strbuf_addstr(what, shape);
		strbuf_addf(why, "benchmark.vcpus \"%s\" needs vCPU %d; the shape has %d vCPUs",
			    cfg->bench.vcpus, bench_max, cs->vcpus);
		return strbuf_str(why);
	}
	int load_max = noise->vcpus ? cpuset_max(noise->vcpus) : -1;
	if (load_max >= cs->vcpus) {
		strbuf_addf(what, "%s/noise=%s", shape, noise->name);
		strbuf_addf(why, "noise '%s' runs on guest vCPU %d; the shape has %d vCPUs",
			    noise->name, load_max, cs->vcpus);
		return strbuf_str(why);
	}

	if (pin->policy == PIN_EXPLICIT && pin->nvcpu_cpus != (size_t)cs->vcpus) {
		*pin_fault = true;
		strbuf_addf(what, "%s/pin=%s", shape, pin->name);
		strbuf_addf(why, "explicit pinning '%s' lists %zu CPU sets for %d vCPUs",
			    pin->name, pin->nvcpu_cpus, cs->vcpus);
		return strbuf_str(why);
	}
	if (cross || host->online_cpus <= 0)
		return NULL;

	if ((pin->policy == PIN_COMPACT || pin->policy == PIN_SPREAD) &&
	    cs->vcpus > host->online_cpus) {
		*pin_fault = true;
		strbuf_addf(what, "%s/pin=%s", shape, pin->name);
		strbuf_addf(why, "pinning '%s' needs %d host CPUs; this host has %d online",
			    pin->name, cs->vcpus, host->online_cpus);
		return strbuf_str(why);
	}
	if (pin->policy == PIN_EXPLICIT) {
		int max = -1;
		for (size_t i = 0; i < pin->nvcpu_cpus; i++) {
			int m = cpuset_max(pin->vcpu_cpus[i]);
			if (m > max)
				max = m;
		}
		int emu = pin->emulator_cpus ? cpuset_max(pin->emulator_cpus) : -1;
		if (emu > max)
			max = emu;
		if (host->possible_cpus > 0 && max >= host->possible_cpus) {
			*pin_fault = true;
			strbuf_addf(what, "pin=%s", pin->name);
			strbuf_addf(why, "pinning '%s' uses host CPU %d; this host has CPUs 0-%d",
				    pin->name, max, host->possible_cpus - 1);
			return strbuf_str(why);
		}
	}
	int noise_max = noise->cpus ? cpuset_max(noise->cpus) : -1;
	if (host->possible_cpus > 0 && noise_max >= host->possible_cpus) {
		strbuf_addf(what, "noise=%s", noise->name);
		strbuf_addf(why, "noise '%s' is pinned to host CPU %d; this host has CPUs 0-%d",
			    noise->name, noise_max, host->possible_cpus - 1);
		return strbuf_str(why);
	}
	return NULL;
}

/*
 * Appends configuration (shape, pin, knobs, noise) to the plan with its
 * record filled and named (model/config-record.h writes its key); a host
 * reference (guest.host_baseline) runs on the host, without a guest.
 */
static struct plan_config *config_add(struct expansion *x, const struct cand_shape *cs,
				      const struct pinning *pin, const char **knobs,
				      const struct noise *noise, bool host_reference)
{
	struct plan *p = x->p;
	const struct sweep_config *cfg = p->cfg;
	assert(cs->vcpus == shape_vcpus(&cs->shape) && pin && noise);
	grow(&p->configs, &x->configs_cap, p->nconfigs + 1, sizeof(*p->configs));
	struct plan_config *c = &p->configs[p->nconfigs];
	memset(c, 0, sizeof(*c));
	c->shape = cs->shape;
	c->pinning = pin;
	c->noise = noise;
	c->knob_values = xcalloc(cfg->nknobs + 1, sizeof(char *));
	memcpy(c->knob_values, knobs, cfg->nknobs * sizeof(char *));

	struct config_record *r = &c->rec;
	char shape[64];
	shape_format(&cs->shape, shape, sizeof(shape));
	r->index = p->nconfigs;
	r->topology = xstrdup(shape);
	r->vcpus = cs->vcpus;
	r->sockets = cs->shape.sockets;
	r->dies = cs->shape.dies;
	r->cores = cs->shape.cores;
	r->threads = cs->shape.threads;
	r->pinning = xstrdup(pin->name);
	r->pinning_policy = xstrdup(config_pin_policy_name(pin->policy));
	if (pin->policy == PIN_EXPLICIT) {
		r->pinning_cpus = xcalloc(pin->nvcpu_cpus + 1, sizeof(char *));
		for (size_t i = 0; i < pin->nvcpu_cpus; i++)
			r->pinning_cpus[i] = xstrdup(pin->vcpu_cpus[i]);
		r->npinning_cpus = pin->nvcpu_cpus;
		r->emulator_cpus = pin->emulator_cpus ? xstrdup(pin->emulator_cpus) : NULL;
	}
	for (size_t i = 0; i < cfg->nknobs; i++)
		config_record_knob_add(r, cfg->knobs[i].name, knobs[i]);
	r->noise = xstrdup(noise->name);
	r->noise_kind = xstrdup(config_noise_kind_name(noise->kind));
	r->host_reference = host_reference;
	r->runner = xstrdup(host_reference || cfg->runner == RUNNER_HOST ? "host" : "agent");
	config_record_name(r, (const char *const *)cfg->advisor.environment,
			   cfg->advisor.nenvironment);
	p->nconfigs++;
	return c;
}

/* True when configuration c has every factor value the baseline names. */
static bool baseline_matches(const struct sweep_config *cfg, const struct plan_config *c)
{
	if (!cfg->nbaseline)
		return false;
	for (size_t i = 0; i < cfg->nbaseline; i++) {
		const struct baseline_item *b = &cfg->baseline[i];
		const char *have;
		char shape[64];
		if (!strcmp(b->factor, "topology")) {
			shape_format(&c->shape, shape, sizeof(shape));
			have = shape;
		} else if (!strcmp(b->factor, "pinning")) {
			have = c->pinning->name;
		} else if (!strcmp(b->factor, "noise")) {
			have = c->noise->name;
		} else {
			have = knob_value(cfg, c->knob_values, b->factor);
		}
		if (!have || strcmp(have, b->value))
			return false;
	}
	return true;
}

static int mark_baseline(struct plan *p, struct ta_err *err)
{
	const struct sweep_config *cfg = p->cfg;
	if (!cfg->nbaseline)
		return 0;
	/*
	 * The baseline is a decision: configurations that differ only in
	 * environment factors (one decision at several levels) are one match,
	 * so a baseline need not name an environment level the engine ignores.
	 */
	size_t matches = 0, first = 0;
	for (size_t i = 0; i < p->nconfigs; i++) {
		const struct config_record *rec = &p->configs[i].rec;
		if (rec->host_reference || !baseline_matches(cfg, &p->configs[i]))
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !p->configs[j].rec.host_reference &&
			       !strcmp(p->configs[j].rec.decision, rec->decision) &&
			       baseline_matches(cfg, &p->configs[j]);
		if (seen)
			continue;
		if (!matches++)
			first = i;
	}
	const struct baseline_item *b = &cfg->baseline[0];
	if (matches == 0)
		return err_set(err, EXIT_BAD_INPUT,
			       "%s:%d:%d: baseline: no runnable configuration has these "
			       "values (see the dropped combinations in 'topoadvisor plan')",
			       cfg->path, b->line, b->col);
	if (matches > 1)
		return err_set(err, EXIT_BAD_INPUT,
			       "%s:%d:%d: baseline: matches %zu decisions; name more "
			       "decision factors (topology, pinning or a host knob) so it "
			       "picks one", cfg->path, b->line, b->col, matches);
	assert(!p->configs[first].rec.host_reference);
	p->configs[first].rec.baseline = true;
	return 0;
}

static void order_runs(struct plan *p)
{
	const struct sweep_config *cfg = p->cfg;
	size_t reps = (size_t)cfg->repetitions;
	p->nruns = p->nconfigs * reps;
	p->runs = xcalloc(p->nruns, sizeof(*p->runs));
	uint64_t state = p->seed;
	size_t *perm = xcalloc(p->nconfigs, sizeof(*perm));
	size_t k = 0;
	for (size_t r = 0; r < reps; r++) {
		for (size_t i = 0; i < p->nconfigs; i++)
			perm[i] = i;
		if (cfg->order == ORDER_RANDOMIZED) {
			for (size_t i = p->nconfigs; i > 1; i--) {
				size_t j = splitmix64_below(&state, i);
				size_t t = perm[i - 1];
				perm[i - 1] = perm[j];
				perm[j] = t;
			}
		}
		for (size_t i = 0; i < p->nconfigs; i++, k++) {
			p->runs[k].config = perm[i];
			p->runs[k].repetition = (int)r;
			p->runs[k].order = k;
		}
	}
	assert(k == p->nruns);
	free(perm);
}

/* Advances the mixed-radix counter over knob values; false after the last. */
static bool next_knob_combo(const struct sweep_config *cfg, size_t *idx)
{
	for (size_t i = cfg->nknobs; i-- > 0;) {
		if (++idx[i] < cfg->knobs[i].nvalues)
			return true;
		idx[i] = 0;
	}
	return false;
}

static void cross(struct expansion *x, const struct host_facts *host,
		  const struct cand_shape *shapes, size_t nshapes)
{
	struct plan *p = x->p;
	const struct sweep_config *cfg = p->cfg;
	size_t *kidx = xcalloc(cfg->nknobs + 1, sizeof(*kidx));
	const char **kval = xcalloc(cfg->nknobs + 1, sizeof(*kval));
	struct strbuf what = STRBUF_INIT, why = STRBUF_INIT;

	for (size_t s = 0; s < nshapes; s++)
	for (size_t pi = 0; pi < cfg->npinnings; pi++) {
		memset(kidx, 0, (cfg->nknobs + 1) * sizeof(*kidx));
		do {
			for (size_t k = 0; k < cfg->nknobs; k++)
				kval[k] = cfg->knobs[k].values[kidx[k]];
			for (size_t ni = 0; ni < cfg->nnoises; ni++) {
				const struct pinning *pin = &cfg->pinnings[pi];
				const struct noise *noise = &cfg->noises[ni];
				strbuf_reset(&what);
				strbuf_reset(&why);
				bool pin_fault;
				const char *reason = combination_invalid(cfg, host, p->cross_host,
									 &shapes[s], pin, kval,
									 noise, &what, &why,
									 &pin_fault);
				if (reason) {
					add_dropped(x, strbuf_str(&what), reason,
						    pin_fault ? pin : NULL);
					continue;
				}
				config_add(x, &shapes[s], pin, kval, noise, false);
			}
		} while (next_knob_combo(cfg, kidx));
	}
	strbuf_release(&what);
	strbuf_release(&why);
	free(kidx);
	free(kval);
}

/* The baseline's value of a factor, or NULL when the baseline does not name it. */
static const char *baseline_value(const struct sweep_config *cfg, const char *factor)
{
	for (size_t i = 0; i < cfg->nbaseline; i++)
		if (!strcmp(cfg->baseline[i].factor, factor))
			return cfg->baseline[i].value;
	return NULL;
}

/*
 * guest.host_baseline: one host reference per noise load, running the same
 * benchmark on the host with the baseline's (else the first) pinning and
 * knob values, sized for the largest guest.
 */
static void add_host_references(struct expansion *x, const struct host_facts *host)
{
	struct plan *p = x->p;
	const struct sweep_config *cfg = p->cfg;
	int vcpus = 0;
	for (size_t i = 0; i < p->nconfigs; i++)
		if (p->configs[i].rec.vcpus > vcpus)
			vcpus = p->configs[i].rec.vcpus;
	const struct pinning *pin = &cfg->pinnings[0];
	const char *want = baseline_value(cfg, "pinning");
	for (size_t i = 0; want && i < cfg->npinnings; i++)
		if (!strcmp(cfg->pinnings[i].name, want))
			pin = &cfg->pinnings[i];
	const char **kval = xcalloc(cfg->nknobs + 1, sizeof(*kval));
	for (size_t k = 0; k < cfg->nknobs; k++) {
		const char *b = baseline_value(cfg, cfg->knobs[k].name);
		kval[k] = cfg->knobs[k].values[0];
		for (size_t v = 0; b && v < cfg->knobs[k].nvalues; v++)
			if (!strcmp(cfg->knobs[k].values[v], b))
				kval[k] = cfg->knobs[k].values[v];
	}
	struct cand_shape cs = { .shape = { .sockets = vcpus, .dies = 1, .cores = 1,
					    .threads = 1 }, .vcpus = vcpus };
	for (size_t ni = 0; ni < cfg->nnoises; ni++) {
		/* On the host, guest vCPU numbers (benchmark.vcpus, in-guest loads) are host CPUs. */
		const struct noise *z = &cfg->noises[ni];
		int need = cfg->bench.vcpus ? cpuset_max(cfg->bench.vcpus) : -1;
		if (z->vcpus && cpuset_max(z->vcpus) > need)
			need = cpuset_max(z->vcpus);
		if (!p->cross_host && host->possible_cpus > 0 && need >= host->possible_cpus) {
			struct strbuf what = STRBUF_INIT, why = STRBUF_INIT;
			strbuf_addf(&what, "host/noise=%s", z->name);
			strbuf_addf(&why, "the host reference runs guest vCPU %d's work on host "
				    "CPU %d; this host has CPUs 0-%d", need, need,
				    host->possible_cpus - 1);
			add_dropped(x, strbuf_str(&what), strbuf_str(&why), NULL);
			strbuf_release(&what);
			strbuf_release(&why);
			continue;
		}
		config_add(x, &cs, pin, kval, z, true);
	}
	free(kval);
}

/*
 * Appends "\n  WHAT: REASON" for each dropped combination that `only`
 * (when not NULL) was dropped for, as many as fit in `room` bytes of out.
 */
static void dropped_lines(const struct plan *p, const struct pinning *only, size_t room,
			  struct strbuf *out)
{
	size_t shown = 0, total = 0;
	for (size_t i = 0; i < p->ndropped; i++) {
		const struct plan_dropped *d = &p->dropped[i];
		if (only && d->pinning != only)
			continue;
		total++;
		if (out->len + strlen(d->what) + strlen(d->reason) + 100 < room) {
			strbuf_addf(out, "\n  %s: %s", d->what, d->reason);
			shown++;
		}
	}
	if (shown < total)
		strbuf_addf(out, "\n  ... and %zu more", total - shown);
}

/* Fails naming why each combination was dropped, when none is left. */
static void nothing_runs(const struct plan *p, struct ta_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s: no configuration can run: ", p->cfg->path);
	if (!p->ndropped)
		strbuf_addstr(&sb, "the topology gives no shape");
	else
		strbuf_addf(&sb, "all %zu combinations were dropped:", p->ndropped);
	dropped_lines(p, NULL, sizeof(err->msg), &sb);
	err_set(err, EXIT_BAD_INPUT, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
}

/*
 * A pinning that fits no configuration is a mistake in the sweep (CPUs
 * this host lacks, a CPU set per vCPU for a vCPU count no shape has), not a
 * combination to skip quietly: fails naming each such pinning, where it is
 * written and every reason it was dropped for.
 */
static bool unfit_pinnings(const struct plan *p, struct ta_err *err)
{
	const struct sweep_config *cfg = p->cfg;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < cfg->npinnings; i++) {
		const struct pinning *pin = &cfg->pinnings[i];
		bool used = false;
		for (size_t c = 0; c < p->nconfigs && !used; c++)
			used = p->configs[c].pinning == pin;
		if (used)
			continue;
		strbuf_addf(&sb, "%s%s:%d:%d: pinning '%s' fits no configuration of this sweep "
			    "(fix its CPUs or remove it):", sb.len ? "\n" : "", cfg->path,
			    pin->line, pin->col, pin->name);
		dropped_lines(p, pin, sizeof(err->msg), &sb);
	}
	bool unfit = sb.len > 0;
	if (unfit)
		err_set(err, EXIT_BAD_INPUT, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
	return unfit;
}

/* Whether n combinations exceed the cap (err then says how they come about). */
static bool too_many(const struct sweep_config *cfg, const char *what, size_t n,
		     const char *how, struct ta_err *err)
{
	if (n <= PLAN_MAX_COMBINATIONS)
		return false;
	char count[32] = "more than 2^64";
	if (n != SIZE_MAX)
		snprintf(count, sizeof(count), "%zu", n);
	err_set(err, EXIT_BAD_INPUT, "%s: %s %s combinations %s; at most %d are planned: "
		"narrow the topology or the other factors, or split the sweep", cfg->path, what,
		count, how, PLAN_MAX_COMBINATIONS);
	return true;
}

struct plan *plan_expand(const struct sweep_config *cfg, const struct host_facts *host,
			 uint64_t seed, struct ta_err *err)
{
	const struct topology_spec *t = &cfg->topology;
	if (t->generated && too_many(cfg, "the topology generator makes", mul_sat(mul_sat(
			t->nvcpus, t->nthreads), t->nsockets ? t->nsockets : 1),
			"(vcpus x threads x sockets values)", err))
		return NULL;
	struct plan *p = xcalloc(1, sizeof(*p));
	p->cfg = cfg;
	p->seed = seed;
	p->cross_host = cfg->arch != ARCH_HOST && cfg->arch != host->arch;
	p->live_pin = cfg->runner == RUNNER_AGENT && cfg->reuse_guest && !p->cross_host &&
		      host->numa_nodes == 1;
	struct expansion x = { .p = p, .seen = g_hash_table_new_full(g_str_hash, g_str_equal,
								     g_free, NULL) };

	struct cand_shape *shapes = NULL;
	size_t nshapes = 0, cap = 0;
	if (t->generated)
		generate_shapes(&x, t, &shapes, &nshapes);
	else
		for (size_t i = 0; i < t->nshapes; i++)
			add_shape(&shapes, &nshapes, &cap, &t->shapes[i]);
	size_t combos = mul_sat(mul_sat(nshapes, cfg->npinnings), cfg->nnoises);
	for (size_t k = 0; k < cfg->nknobs; k++)
		combos = mul_sat(combos, cfg->knobs[k].nvalues);
	if (too_many(cfg, "this sweep makes", combos, "(shapes x pinnings x host knob values "
		     "x noise loads)", err)) {
		free(shapes);
		g_hash_table_destroy(x.seen);
		plan_free(p);
		return NULL;
	}
	cross(&x, host, shapes, nshapes);
	free(shapes);

	if (p->nconfigs == 0 || unfit_pinnings(p, err)) {
		if (p->nconfigs == 0)
			nothing_runs(p, err);
		g_hash_table_destroy(x.seen);
		plan_free(p);
		return NULL;
	}
	if (cfg->host_baseline)
		add_host_references(&x, host);
	g_hash_table_destroy(x.seen);
	if (mark_baseline(p, err) < 0) {
		plan_free(p);
		return NULL;
	}
	if (mul_sat(p->nconfigs, (size_t)cfg->repetitions) > PLAN_MAX_RUNS) {
		err_set(err, EXIT_BAD_INPUT, "%s: %zu configurations x %d repetitions make more "
			"than %d runs; plan fewer configurations or repetitions, or split the "
			"sweep", cfg->path, p->nconfigs, cfg->repetitions, PLAN_MAX_RUNS);
		plan_free(p);
		return NULL;
	}
	order_runs(p);
	return p;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nconfigs; i++) {
		config_record_release(&p->configs[i].rec);
		free(p->configs[i].knob_values);
	}
	free(p->configs);
	for (size_t i = 0; i < p->ndropped; i++) {
		free(p->dropped[i].what);
		free(p->dropped[i].reason);
	}
	free(p->dropped);
	free(p->runs);
	free(p);
}
