/*
 * config-decide: how the sweep decides — the baseline (factor values that
 * pick one configuration), advisor (objective, equivalence, environment
 * factors) and race (when a raced sweep tests first); see config.c.
 */
#include "config-int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* race: {first_test: N}, the blocks a raced sweep runs before its first test. */
int config_parse_race(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "first_test", NULL };
	if (yr_map_check(L, n, "race", keys, "a mapping (first_test)") < 0)
		return -1;
	if (cfg->strategy != STRATEGY_RACE)
		return yr_fail(L, n, "race", "only a raced sweep has race settings; add "
			       "strategy: race or remove race:");
	yaml_node_t *v = yr_map_get(L, n, "first_test");
	if (v && yr_get_int(L, v, "race.first_test", 2, 1000, &cfg->race_first_test) < 0)
		return -1;
	if (cfg->race_first_test > cfg->repetitions)
		return yr_fail(L, v ? v : n, "race.first_test", "%d blocks before the first test "
			       "is more than the %d repetitions (the race's maximum); lower it or "
			       "raise repetitions", cfg->race_first_test, cfg->repetitions);
	return 0;
}

const char *const config_objective_names[] = { [OBJECTIVE_WORST] = "worst",
					       [OBJECTIVE_MEAN] = "mean", NULL };

/*
 * advisor: objective, equivalence and the environment factors.  An
 * environment factor is noise, pinning or a host knob the sweep varies;
 * topology is what the advisor recommends and cannot be one.
 */
int config_parse_advisor(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "objective", "equivalence", "max_failure_rate",
					    "environment", NULL };
	if (yr_map_check(L, n, "advisor", keys, "a mapping (objective, equivalence, "
			 "max_failure_rate, environment)") < 0)
		return -1;
	struct advisor_settings *a = &cfg->advisor;
	yaml_node_t *v;
	int e, rc = 0;
	if ((v = yr_map_get(L, n, "objective"))) {
		if (yr_get_enum(L, v, "advisor.objective", config_objective_names, &e) < 0)
			rc = -1;
		else
			a->objective = (enum advisor_objective)e;
	}
	if ((v = yr_map_get(L, n, "equivalence")) &&
	    config_get_fraction(L, v, "advisor.equivalence", 0.0001, 0.5, "a fraction above 0 and at "
			 "most 0.5 (e.g. 0.02 for +-2 %)", &a->equivalence) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "max_failure_rate")) &&
	    config_get_fraction(L, v, "advisor.max_failure_rate", 0, 1, "a fraction from 0 to 1 "
				"(e.g. 0.2: a configuration failing more than 1 run in 5 is "
				"failing)", &a->max_failure_rate) < 0)
		rc = -1;
	if (!(v = yr_map_get(L, n, "environment")))
		return rc;
	struct yr_items f;
	if (yr_items(L, v, "advisor.environment", &f) < 0) {
		free(f.nodes);
		return -1;
	}
	a->environment = xcalloc(f.n + 1, sizeof(*a->environment));
	for (size_t i = 0; i < f.n; i++) {
		char key[YR_KEY_MAX];
		const char *name;
		yr_item_key(key, "advisor.environment", &f, i);
		if (yr_get_plain(L, f.nodes[i], key, "a factor name (noise, pinning or a host "
				 "knob)", &name) < 0) {
			rc = -1;
			continue;
		}
		bool known = !strcmp(name, "noise") || !strcmp(name, "pinning");
		for (size_t k = 0; k < cfg->nknobs && !known; k++)
			known = !strcmp(cfg->knobs[k].name, name);
		bool twice = false;
		for (size_t k = 0; k < a->nenvironment && !twice; k++)
			twice = !strcmp(a->environment[k], name);
		if (!known)
			rc = yr_fail(L, f.nodes[i], key, "'%s' is not a factor this sweep varies as "
				     "a condition; name noise, pinning or one of its host knobs "
				     "(topology is what the advisor chooses)", name);
		else if (twice)
			rc = yr_fail(L, f.nodes[i], key, "'%s' is listed twice", name);
		else
			a->environment[a->nenvironment++] = xstrdup(name);
	}
	free(f.nodes);
	return rc;
}

static void baseline_add(struct sweep_config *cfg, const char *factor, const char *value,
			 const yaml_node_t *n)
{
	struct baseline_item *b = &cfg->baseline[cfg->nbaseline++];
	b->factor = xstrdup(factor);
	b->value = xstrdup(value);
	b->line = (int)n->start_mark.line + 1;
	b->col = (int)n->start_mark.column + 1;
}

/* "a, b, c" of the names of a factor, for "expected one of" messages. */
static void baseline_choices(struct strbuf *sb, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", v[i]);
}

static int baseline_topology(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg)
{
	const struct topology_spec *t = &cfg->topology;
	struct shape s;
	memset(&s, 0, sizeof(s));
	if (config_shape_parse(L, v, "baseline.topology", &s) < 0)
		return -1;
	char text[64];
	if (t->generated) {
		/* The generator makes dies-less shapes: name them the way plan keys them. */
		if (s.dies != 1)
			return yr_fail(L, v, "baseline.topology", "the generator makes shapes with "
				       "one die; write the baseline as SxCxT");
		s.dies_given = false;
		int vc = shape_vcpus(&s);
		bool ok_v = false, ok_t = false, ok_s = !t->sockets;
		for (size_t i = 0; i < t->nvcpus; i++)
			ok_v |= t->vcpus[i] == vc;
		for (size_t i = 0; i < t->nthreads; i++)
			ok_t |= t->threads[i] == s.threads;
		for (size_t i = 0; i < t->nsockets; i++)
			ok_s |= t->sockets[i] == s.sockets;
		shape_format(&s, text, sizeof(text));
		if (!ok_v || !ok_t || !ok_s)
			return yr_fail(L, v, "baseline.topology", "%s is not a shape the generator "
				       "makes (%s)", text, !ok_v ? "its vCPU count is not in vcpus" :
				       !ok_t ? "its threads are not in threads" :
				       "its sockets are not in sockets");
		baseline_add(cfg, "topology", text, v);
		return 0;
	}
	for (size_t i = 0; i < t->nshapes; i++)
		if (config_shape_same(&t->shapes[i], &s)) {
			/* Written as the topology list writes it, so plan can compare text. */
			shape_format(&t->shapes[i], text, sizeof(text));
			baseline_add(cfg, "topology", text, v);
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < t->nshapes; i++) {
		shape_format(&t->shapes[i], text, sizeof(text));
		strbuf_addf(&sb, "%s%s", i ? ", " : "", text);
	}
	shape_format(&s, text, sizeof(text));
	yr_fail(L, v, "baseline.topology", "%s is not in topology (%s)", text, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

static int baseline_named(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg,
			  const char *factor, const char *const *names, size_t n)
{
	char key[YR_KEY_MAX];
	yr_key_child(key, "baseline", factor);
	char *s = NULL;
	if (yr_get_str(L, v, key, &s) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], s)) {
			baseline_add(cfg, factor, s, v);
			free(s);
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	baseline_choices(&sb, names, n);
	yr_fail(L, v, key, "'%s' is not one of this sweep's %s values (%s)", s, factor,
		strbuf_str(&sb));
	strbuf_release(&sb);
	free(s);
	return -1;
}

static int baseline_knob(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg,
			 const char *factor)
{
	const struct knob_factor *kf = NULL;
	for (size_t j = 0; j < cfg->nknobs; j++)
		if (!strcmp(cfg->knobs[j].name, factor))
			kf = &cfg->knobs[j];
	char key[YR_KEY_MAX];
	yr_key_child(key, "baseline", factor);
	const char *norm = config_knob_value_get(L, v, key, knob_find(factor));
	if (!norm)
		return -1;
	for (size_t j = 0; j < kf->nvalues; j++)
		if (!strcmp(kf->values[j], norm)) {
			baseline_add(cfg, factor, norm, v);
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	baseline_choices(&sb, (const char *const *)kf->values, kf->nvalues);
	yr_fail(L, v, key, "%s is not one of this sweep's values (%s)", norm, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

/*
 * The baseline names values of the factors, so it is read only once they
 * read cleanly (their own errors are reported already).
 */
int config_parse_baseline(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	/* Allowed keys: the three fixed factors, then the knobs this sweep has. */
	const char **allowed = xcalloc(cfg->nknobs + 4, sizeof(char *));
	allowed[0] = "topology";
	allowed[1] = "pinning";
	allowed[2] = "noise";
	for (size_t i = 0; i < cfg->nknobs; i++)
		allowed[3 + i] = cfg->knobs[i].name;
	int rc = 0;
	if (n->type == YAML_MAPPING_NODE) {
		/* A known knob the sweep does not vary deserves a clearer word. */
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yr_node(L, p->key);
			if (k->type != YAML_SCALAR_NODE || !knob_find(yr_text(k)))
				continue;
			size_t i;
			for (i = 0; i < cfg->nknobs && strcmp(cfg->knobs[i].name, yr_text(k)); i++)
				;
			if (i == cfg->nknobs) {
				char key[YR_KEY_MAX];
				yr_key_child(key, "baseline", yr_text(k));
				rc = yr_fail(L, k, key, "'%s' is not a factor of this sweep; add it "
					     "under host: or drop it here", yr_text(k));
			}
		}
	}
	if (rc < 0 || yr_map_check(L, n, "baseline", allowed, "a mapping factor -> value") < 0) {
		free(allowed);
		return -1;
	}
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	cfg->baseline = xcalloc(count ? count : 1, sizeof(*cfg->baseline));
	for (size_t i = 0; i < count; i++) {
		yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];
		yaml_node_t *v = yr_node(L, p->value);
		if (!yr_map_pair_first(L, n, p) || !yr_word_in(yr_text(yr_node(L, p->key)),
								allowed)) {
			rc = -1;	/* reported by yr_map_check */
			continue;
		}
		const char *factor = yr_text(yr_node(L, p->key));
		if (!strcmp(factor, "topology")) {
			if (baseline_topology(L, v, cfg) < 0)
				rc = -1;
		} else if (!strcmp(factor, "pinning") || !strcmp(factor, "noise")) {
			bool pin = factor[0] == 'p';
			size_t nnames = pin ? cfg->npinnings : cfg->nnoises;
			const char **names = xcalloc(nnames + 1, sizeof(char *));
			for (size_t j = 0; j < nnames; j++)
				names[j] = pin ? cfg->pinnings[j].name : cfg->noises[j].name;
			if (baseline_named(L, v, cfg, factor, names, nnames) < 0)
				rc = -1;
			free(names);
		} else if (baseline_knob(L, v, cfg, factor) < 0) {
			rc = -1;
		}
	}
	free(allowed);
	return rc;
}
