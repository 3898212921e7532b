/*
 * config-factors: the sweep's factors, whose cross product the plan is —
 * topology (shapes or a generator), pinning, host knobs (values from the
 * knob table) and noise loads; see config.c.
 */
#include "config-int.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const noise_kind_names[] = {
	[NOISE_NONE] = "none", [NOISE_SPIN] = "spin", [NOISE_COMMAND] = "command",
	[NOISE_GUEST] = "guest", NULL
};

static const char *const pin_words[] = {
	[PIN_NONE] = "none", [PIN_COMPACT] = "compact", [PIN_SPREAD] = "spread", NULL
};

const char *config_noise_kind_name(enum noise_kind k) { return NAME_OF(noise_kind_names, k); }

const char *config_pin_policy_name(enum pin_policy p)
{
	return p == PIN_EXPLICIT ? "explicit" : NAME_OF(pin_words, p);
}

/* "SxCxT" or "SxDxCxT", each part 1..1024. */
static int shape_from_text(struct yr_reader *L, const yaml_node_t *n, const char *key,
			   struct shape *s)
{
	static const char expected[] = "expected a shape \"SxCxT\" or \"SxDxCxT\" "
				       "(sockets x [dies x] cores x threads, each 1..1024), got %s";
	const char *p = yr_text(n);
	long part[5];
	int nparts = 0;
	for (;;) {
		if (!isdigit((unsigned char)*p) || nparts == 4)
			return yr_fail(L, n, key, expected, YR_DESCRIBE(n));
		long v = 0;
		while (isdigit((unsigned char)*p)) {
			v = v * 10 + (*p++ - '0');
			if (v > 1024)
				return yr_fail(L, n, key, "%s: every part must be 1..1024",
					       yr_text(n));
		}
		if (v < 1)
			return yr_fail(L, n, key, "%s: every part must be 1..1024", yr_text(n));
		part[nparts++] = v;
		if (!*p)
			break;
		if (*p != 'x' && *p != 'X')
			return yr_fail(L, n, key, expected, YR_DESCRIBE(n));
		p++;
	}
	if (nparts < 3)
		return yr_fail(L, n, key, expected, YR_DESCRIBE(n));
	s->sockets = (int)part[0];
	s->dies_given = nparts == 4;
	s->dies = s->dies_given ? (int)part[1] : 1;
	s->cores = (int)part[nparts - 2];
	s->threads = (int)part[nparts - 1];
	return 0;
}

static int shape_from_map(struct yr_reader *L, const yaml_node_t *n, const char *key,
			  struct shape *s)
{
	static const char *const keys[] = { "sockets", "dies", "cores", "threads", NULL };
	if (yr_map_check(L, n, key, keys, "a shape") < 0)
		return -1;
	static const char *const required[] = { "sockets", "cores", "threads" };
	int *fields[] = { &s->sockets, &s->cores, &s->threads };
	char child[YR_KEY_MAX];
	int rc = 0;
	for (size_t i = 0; i < 3; i++) {
		yaml_node_t *v = yr_map_get(L, n, required[i]);
		yr_key_child(child, key, required[i]);
		if (!v)
			rc = yr_fail_missing(L, n, child, required[i], " (a shape needs sockets, "
				     "cores and threads; dies is optional)");
		else if (yr_get_int(L, v, child, 1, 1024, fields[i]) < 0)
			rc = -1;
	}
	yaml_node_t *v = yr_map_get(L, n, "dies");
	s->dies = 1;
	s->dies_given = v != NULL;
	yr_key_child(child, key, "dies");
	if (v && yr_get_int(L, v, child, 1, 1024, &s->dies) < 0)
		rc = -1;
	return rc;
}

int config_shape_parse(struct yr_reader *L, const yaml_node_t *n, const char *key,
		       struct shape *s)
{
	int rc;
	if (n->type == YAML_MAPPING_NODE)
		rc = shape_from_map(L, n, key, s);
	else if (n->type == YAML_SCALAR_NODE && !yr_is_null(n))
		rc = shape_from_text(L, n, key, s);
	else
		rc = yr_fail(L, n, key, "expected a shape \"SxCxT\" or a mapping {sockets, cores, "
			     "threads}, got %s", YR_DESCRIBE(n));
	s->line = (int)n->start_mark.line + 1;
	s->col = (int)n->start_mark.column + 1;
	if (rc < 0)
		return rc;
	/* Parts of up to 1024 each multiply past any int: bound the product. */
	long long vcpus = (long long)s->sockets * s->dies * s->cores * s->threads;
	if (vcpus > CONFIG_MAX_VCPUS) {
		char text[64];
		shape_format(s, text, sizeof(text));
		return yr_fail(L, n, key, "shape %s has %lld vCPUs; a guest has at most %d "
			       "(QEMU's and KVM's limit)", text, vcpus, CONFIG_MAX_VCPUS);
	}
	return 0;
}

bool config_shape_same(const struct shape *a, const struct shape *b)
{
	return a->sockets == b->sockets && a->dies == b->dies && a->cores == b->cores &&
	       a->threads == b->threads;
}

static int parse_generator(struct yr_reader *L, const yaml_node_t *n, struct topology_spec *t)
{
	static const char *const keys[] = { "vcpus", "threads", "sockets", NULL };
	static const char missing[] = " (the generator needs vcpus: [N, ...] and threads: "
				      "[T, ...])";
	if (yr_map_check(L, n, "topology", keys, "a generator {vcpus, threads, sockets}") < 0)
		return -1;
	t->generated = true;
	int rc = 0;
	yaml_node_t *v;
	if (!(v = yr_map_get(L, n, "vcpus")))
		rc = yr_fail_missing(L, n, "topology.vcpus", "vcpus", missing);
	else if (yr_get_int_list(L, v, "topology.vcpus", 1, CONFIG_MAX_VCPUS, &t->vcpus,
				 &t->nvcpus) < 0)
		rc = -1;
	if (!(v = yr_map_get(L, n, "threads")))
		rc = yr_fail_missing(L, n, "topology.threads", "threads", missing);
	else if (yr_get_int_list(L, v, "topology.threads", 1, 1024, &t->threads,
				 &t->nthreads) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "sockets")) &&
	    yr_get_int_list(L, v, "topology.sockets", 1, 1024, &t->sockets, &t->nsockets) < 0)
		rc = -1;
	return rc;
}

int config_parse_topology(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	struct topology_spec *t = &cfg->topology;
	/* A mapping is the generator unless it reads as one shape (has cores). */
	if (n->type == YAML_MAPPING_NODE &&
	    (yr_map_get(L, n, "vcpus") || !yr_map_get(L, n, "cores")))
		return parse_generator(L, n, t);
	struct yr_items f;
	if (yr_items(L, n, "topology", &f) < 0) {
		free(f.nodes);
		return -1;
	}
	t->shapes = xcalloc(f.n, sizeof(*t->shapes));
	t->nshapes = f.n;
	bool *ok = xcalloc(f.n, sizeof(*ok));
	int rc = 0;
	char child[YR_KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		yr_item_key(child, "topology", &f, i);
		if (config_shape_parse(L, f.nodes[i], child, &t->shapes[i]) < 0) {
			rc = -1;
			continue;
		}
		ok[i] = true;
		for (size_t j = 0; j < i; j++)
			if (ok[j] && config_shape_same(&t->shapes[j], &t->shapes[i])) {
				char text[64];
				shape_format(&t->shapes[i], text, sizeof(text));
				rc = yr_fail(L, f.nodes[i], child, "duplicate shape %s (first at "
					     "%d:%d)", text, t->shapes[j].line, t->shapes[j].col);
				break;
			}
	}
	free(ok);
	free(f.nodes);
	return rc;
}

/*
 * A factor whose items are told apart by name (pinning, noise): a list, or
 * one item standing for a list of one.  parse_item fills one item and
 * returns its name, NULL when it failed; a name given twice fails as
 * "duplicate WHAT 'name' (first at L:C); HINT".  Every item is read, so
 * every error is found.  *items (nitems of size bytes) is set in any case.
 */
typedef const char *named_item_parse(struct yr_reader *L, const yaml_node_t *n,
				     const char *key, void *item);

static int parse_named_items(struct yr_reader *L, const yaml_node_t *n, const char *key,
			     const char *what, const char *hint, size_t size,
			     named_item_parse *parse_item, void **items, size_t *nitems)
{
	*items = NULL;
	*nitems = 0;
	struct yr_items f;
	if (yr_items(L, n, key, &f) < 0) {
		free(f.nodes);
		return -1;
	}
	char *v = xcalloc(f.n, size);
	const char **names = xcalloc(f.n, sizeof(*names));
	int rc = 0;
	char child[YR_KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		yr_item_key(child, key, &f, i);
		if (!(names[i] = parse_item(L, f.nodes[i], child, v + i * size))) {
			rc = -1;
			continue;
		}
		for (size_t j = 0; j < i; j++)
			if (names[j] && !strcmp(names[j], names[i])) {
				rc = yr_fail(L, f.nodes[i], child, "duplicate %s '%s' (first at "
					     "%zu:%zu); %s", what, names[i],
					     f.nodes[j]->start_mark.line + 1,
					     f.nodes[j]->start_mark.column + 1, hint);
				break;
			}
	}
	*items = v;
	*nitems = f.n;
	free(names);
	free(f.nodes);
	return rc;
}

static const char *const reserved_pin_names[] = { "none", "compact", "spread", NULL };

static int parse_explicit_pinning(struct yr_reader *L, const yaml_node_t *n, const char *key,
				  struct pinning *p)
{
	static const char *const keys[] = { "name", "vcpus", "emulator", NULL };
	if (yr_map_check(L, n, key, keys, "a pinning") < 0)
		return -1;
	p->policy = PIN_EXPLICIT;
	int rc = 0;
	char child[YR_KEY_MAX];
	yaml_node_t *v = yr_map_get(L, n, "name");
	yr_key_child(child, key, "name");
	if (!v) {
		rc = yr_fail_missing(L, n, child, "name", " (an explicit pinning needs a name "
			     "and vcpus: [cpuset per vCPU])");
	} else if (yr_get_name(L, v, child, 64, "._-", &p->name) < 0) {
		rc = -1;
	} else {
		for (size_t i = 0; reserved_pin_names[i]; i++)
			if (!strcmp(p->name, reserved_pin_names[i]))
				rc = yr_fail(L, v, child, "'%s' is a built-in policy; give the "
					     "explicit pinning another name", p->name);
	}
	yr_key_child(child, key, "vcpus");
	if (!(v = yr_map_get(L, n, "vcpus"))) {
		rc = yr_fail_missing(L, n, child, "vcpus", " (one host cpuset per vCPU, e.g. "
			     "vcpus: [\"0\", \"1\"])");
	} else if (yr_expect_type(L, v, child, YAML_SEQUENCE_NODE, "a list with one host "
				  "cpuset per vCPU, e.g. [\"0\", \"1\"]") < 0) {
		rc = -1;
	} else {
		size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
		if (count == 0)
			rc = yr_fail(L, v, child, "empty list; give one host cpuset per vCPU");
		p->vcpu_cpus = xcalloc(count ? count : 1, sizeof(char *));
		p->nvcpu_cpus = count;
		char item[YR_KEY_MAX];
		for (size_t i = 0; i < count; i++) {
			yr_key_index(item, child, i);
			if (config_get_cpuset(L, yr_node(L, v->data.sequence.items.start[i]), item,
				       &p->vcpu_cpus[i], NULL) < 0)
				rc = -1;
		}
	}
	yr_key_child(child, key, "emulator");
	if ((v = yr_map_get(L, n, "emulator")) &&
	    config_get_cpuset(L, v, child, &p->emulator_cpus, NULL) < 0)
		rc = -1;
	return rc;
}

static const char *parse_pinning_item(struct yr_reader *L, const yaml_node_t *n,
				      const char *key, void *item)
{
	struct pinning *p = item;
	p->line = (int)n->start_mark.line + 1;
	p->col = (int)n->start_mark.column + 1;
	if (n->type == YAML_MAPPING_NODE)
		return parse_explicit_pinning(L, n, key, p) < 0 ? NULL : p->name;
	int e;
	if (yr_get_enum(L, n, key, pin_words, &e) < 0)
		return NULL;
	p->policy = (enum pin_policy)e;
	p->name = xstrdup(pin_words[e]);
	return p->name;
}

int config_parse_pinning(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	void *items;
	int rc = parse_named_items(L, n, "pinning", "pinning", "names must be unique",
				   sizeof(struct pinning), parse_pinning_item, &items,
				   &cfg->npinnings);
	cfg->pinnings = items;
	return rc;
}

/* One value of knob k: its canonical text (in the knob table), or NULL after failing. */
const char *config_knob_value_get(struct yr_reader *L, const yaml_node_t *n, const char *key,
				  const struct knob *k)
{
	const char *canon = n->type == YAML_SCALAR_NODE && !yr_is_null(n)
				    ? knob_canonical(k, yr_text(n)) : NULL;
	if (!canon) {
		struct strbuf sb = STRBUF_INIT;
		knob_expected(k, &sb);
		yr_fail(L, n, key, "expected %s, got %s", strbuf_str(&sb), YR_DESCRIBE(n));
		strbuf_release(&sb);
	}
	return canon;
}

/* The values of one knob (a factor); -1 when any is bad or repeated. */
static int parse_knob_values(struct yr_reader *L, const yaml_node_t *v, const struct knob *def,
			     struct knob_factor *kf)
{
	char key[YR_KEY_MAX], child[YR_KEY_MAX];
	yr_key_child(key, "host", def->name);
	struct yr_items f;
	if (yr_items(L, v, key, &f) < 0) {
		free(f.nodes);
		return -1;
	}
	kf->values = xcalloc(f.n, sizeof(char *));
	const yaml_node_t **at = xcalloc(f.n, sizeof(*at));
	int rc = 0;
	for (size_t j = 0; j < f.n; j++) {
		yr_item_key(child, key, &f, j);
		const char *norm = config_knob_value_get(L, f.nodes[j], child, def);
		size_t m;
		for (m = 0; norm && m < kf->nvalues && strcmp(kf->values[m], norm); m++)
			;
		if (!norm) {
			rc = -1;
		} else if (m < kf->nvalues) {
			rc = yr_fail(L, f.nodes[j], child, "duplicate value %s (first at %zu:%zu)",
				     norm, at[m]->start_mark.line + 1, at[m]->start_mark.column + 1);
		} else {
			at[kf->nvalues] = f.nodes[j];
			kf->values[kf->nvalues++] = xstrdup(norm);
		}
	}
	free(at);
	free(f.nodes);
	return rc;
}

int config_parse_host(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	size_t nknobs = knob_count();
	const char **names = xcalloc(nknobs + 1, sizeof(char *));
	for (size_t i = 0; i < nknobs; i++)
		names[i] = knob_at(i)->name;
	int rc = yr_map_check(L, n, "host", names, "a mapping knob -> values");
	free(names);
	if (rc < 0)
		return -1;
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	cfg->knobs = xcalloc(count ? count : 1, sizeof(*cfg->knobs));
	for (size_t i = 0; i < count; i++) {
		yaml_node_pair_t *pair = &n->data.mapping.pairs.start[i];
		yaml_node_t *k = yr_node(L, pair->key);
		/* Unknown and repeated knobs were reported by yr_map_check. */
		const struct knob *def = yr_map_pair_first(L, n, pair)
						 ? knob_find(yr_text(k)) : NULL;
		if (!def) {
			rc = -1;
			continue;
		}
		struct knob_factor *kf = &cfg->knobs[cfg->nknobs++];
		kf->name = xstrdup(def->name);
		kf->line = (int)k->start_mark.line + 1;
		kf->col = (int)k->start_mark.column + 1;
		if (parse_knob_values(L, yr_node(L, pair->value), def, kf) < 0)
			rc = -1;
	}
	return rc;
}

static const char *parse_noise_item(struct yr_reader *L, const yaml_node_t *n,
				    const char *key, void *item)
{
	struct noise *z = item;
	z->line = (int)n->start_mark.line + 1;
	z->col = (int)n->start_mark.column + 1;
	int e;
	if (n->type != YAML_MAPPING_NODE) {
		if (yr_get_enum(L, n, key, noise_kind_names, &e) < 0)
			return NULL;
		z->kind = (enum noise_kind)e;
		if (z->kind == NOISE_COMMAND || z->kind == NOISE_GUEST) {
			yr_fail(L, n, key, "noise '%s' needs a command: write {kind: %s, argv: "
				"[prog, arg, ...]}", noise_kind_names[e], noise_kind_names[e]);
			return NULL;
		}
		z->name = xstrdup(noise_kind_names[e]);
		z->threads = z->kind == NOISE_SPIN ? 1 : 0;
		return z->name;
	}
	static const char *const keys[] = { "kind", "name", "cpus", "vcpus", "threads", "argv",
					    NULL };
	if (yr_map_check(L, n, key, keys, "a noise load") < 0)
		return NULL;
	char child[YR_KEY_MAX];
	yaml_node_t *v = yr_map_get(L, n, "kind");
	yr_key_child(child, key, "kind");
	if (!v) {
		yr_fail_missing(L, n, child, "kind", " (none, spin, command or guest)");
		return NULL;
	}
	/* Which keys apply depends on the kind: without one, say no more. */
	if (yr_get_enum(L, v, child, noise_kind_names, &e) < 0)
		return NULL;
	z->kind = (enum noise_kind)e;
	int rc = 0;

	yr_key_child(child, key, "name");
	if ((v = yr_map_get(L, n, "name"))) {
		if (yr_get_name(L, v, child, 64, "._-", &z->name) < 0)
			rc = -1;
	} else {
		z->name = xstrdup(noise_kind_names[e]);
	}

	int ncpus = 0;
	yr_key_child(child, key, "cpus");
	if ((v = yr_map_get(L, n, "cpus"))) {
		if (z->kind == NOISE_NONE)
			rc = yr_fail(L, yr_map_key(L, n, "cpus"), child,
				     "noise kind none takes no cpus");
		else if (config_get_cpuset(L, v, child, &z->cpus, &ncpus) < 0)
			rc = -1;
	}
	yr_key_child(child, key, "vcpus");
	if ((v = yr_map_get(L, n, "vcpus"))) {
		if (z->kind != NOISE_SPIN && z->kind != NOISE_COMMAND)
			rc = yr_fail(L, yr_map_key(L, n, "vcpus"), child, "only spin and command "
				     "loads run inside the measured guest (on its vcpus)");
		else if (z->cpus)
			rc = yr_fail(L, yr_map_key(L, n, "vcpus"), child, "a load runs either on "
				     "host cpus or inside the guest on vcpus, not both");
		else if (config_get_vcpus(L, v, child, &z->vcpus, &ncpus) < 0)
			rc = -1;
	}

	yr_key_child(child, key, "threads");
	if ((v = yr_map_get(L, n, "threads"))) {
		if (z->kind != NOISE_SPIN)
			rc = yr_fail(L, yr_map_key(L, n, "threads"), child,
				     "only spin noise uses threads");
		else if (yr_get_int(L, v, child, 1, 1024, &z->threads) < 0)
			rc = -1;
	} else if (z->kind == NOISE_SPIN) {
		z->threads = ncpus ? ncpus : 1;
	}

	yr_key_child(child, key, "argv");
	v = yr_map_get(L, n, "argv");
	if (z->kind == NOISE_COMMAND || z->kind == NOISE_GUEST) {
		if (!v)
			rc = yr_fail_missing(L, n, child, "argv", " (noise %s runs argv: "
				     "[prog, arg, ...])", noise_kind_names[e]);
		else if (config_get_argv(L, v, child, &z->argv) < 0)
			rc = -1;
	} else if (v) {
		rc = yr_fail(L, yr_map_key(L, n, "argv"), child,
			     "only command and guest noise use argv");
	}
	return rc < 0 ? NULL : z->name;
}

int config_parse_noise(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	void *items;
	int rc = parse_named_items(L, n, "noise", "noise name", "give each load its own name",
				   sizeof(struct noise), parse_noise_item, &items, &cfg->nnoises);
	cfg->noises = items;
	return rc;
}
