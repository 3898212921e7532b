/*
 * config: the sweep configuration loader; see config.h and docs/config.md.
 *
 * The YAML is loaded with libyaml's document API, then checked in two
 * passes.  The first pass (tree_check) looks at the raw node graph once:
 * nesting depth, tags, NUL characters, and how many nodes the document
 * expands to once aliases are followed, so an alias bomb is refused before
 * anything walks it.  The second pass walks the schema and fills a
 * `struct sweep_config`, stopping at the first error, which names
 * FILE:LINE:COL, the dotted key and what was expected.
 */
#include "config.h"

#include "../collectors/benchparse.h"

#include "../util/cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "../util/strbuf.h"

/* A config is a page of text; anything bigger is a mistake (or /dev/zero). */
#define CONFIG_MAX_BYTES (1024 * 1024)
/* Bounds on the node graph, generous for any real sweep. */
#define CONFIG_MAX_NODES 100000
#define CONFIG_MAX_DEPTH 64
/* Room for a dotted key path such as "noise[2].argv[3]". */
#define KEY_MAX 256
/* A factor beyond this is a typo or a generated file gone wrong: no sweep
   runs that many configurations, and duplicate checks are quadratic. */
#define CONFIG_MAX_FACTOR 1024

/* --- names ------------------------------------------------------------ */

static const char *const bench_kind_names[] = {
	[BENCH_EBIZZY] = "ebizzy", [BENCH_REDIS] = "redis",
	[BENCH_STRESS_NG] = "stress-ng", [BENCH_SYSBENCH] = "sysbench",
	[BENCH_KERNEL_BUILD] = "kernel-build", [BENCH_COMMAND] = "command", NULL
};
static const char *const noise_kind_names[] = {
	[NOISE_NONE] = "none", [NOISE_SPIN] = "spin", [NOISE_COMMAND] = "command",
	[NOISE_GUEST] = "guest", NULL
};
static const char *const domain_type_names[] = {
	[DOMAIN_AUTO] = "auto", [DOMAIN_KVM] = "kvm", [DOMAIN_QEMU] = "qemu", NULL
};
/* The host's architecture is resolved by plan; "host" is what we print. */
static const char *const arch_names[] = {
	[ARCH_HOST] = "host", [ARCH_X86_64] = "x86_64", [ARCH_PPC64] = "ppc64", NULL
};
static const char *const arch_words[] = { "x86_64", "ppc64", NULL };
static const char *const runner_names[] = {
	[RUNNER_AGENT] = "agent", [RUNNER_HOST] = "host", NULL
};
static const char *const pin_words[] = {
	[PIN_NONE] = "none", [PIN_COMPACT] = "compact", [PIN_SPREAD] = "spread", NULL
};
static const char *const order_names[] = {
	[ORDER_RANDOMIZED] = "randomized", [ORDER_SEQUENTIAL] = "sequential", NULL
};
static const char *const strategy_names[] = { [STRATEGY_FULL] = "full", NULL };
static const char *const direction_words[] = { "higher", "lower", NULL };

const char *config_bench_kind_name(enum bench_kind k) { return bench_kind_names[k]; }
const char *config_noise_kind_name(enum noise_kind k) { return noise_kind_names[k]; }
const char *config_domain_type_name(enum domain_type t) { return domain_type_names[t]; }
const char *config_arch_name(enum guest_arch a) { return arch_names[a]; }
const char *config_runner_name(enum runner_kind r) { return runner_names[r]; }

void shape_format(const struct shape *s, char *buf, size_t n)
{
	if (s->dies_given)
		snprintf(buf, n, "%dx%dx%dx%d", s->sockets, s->dies, s->cores, s->threads);
	else
		snprintf(buf, n, "%dx%dx%d", s->sockets, s->cores, s->threads);
}

int shape_vcpus(const struct shape *s)
{
	return s->sockets * s->dies * s->cores * s->threads;
}

/* --- host knobs ----------------------------------------------------------- */

/*
 * How a knob's values are checked and normalised: a set of integers, a set
 * of words (case-insensitive, stored lower-case), or a Y/N switch that
 * accepts the spellings the kernel and YAML users both use.
 */
enum knob_kind { KNOB_INTS, KNOB_WORDS_OR_INTS, KNOB_WORDS, KNOB_YN };

struct knob_def {
	const char *name;
	enum knob_kind kind;
	const char *words[4];
	int ints[6];		/* terminated by -1 */
	const char *expected;	/* for messages */
};

static const struct knob_def knob_defs[] = {
	{ "subcores_per_core", KNOB_INTS, { NULL }, { 1, 2, 4, -1 }, "1, 2 or 4" },
	{ "smt", KNOB_WORDS_OR_INTS, { "off", "on", NULL }, { 1, 2, 4, 8, -1 },
	  "off, on, 1, 2, 4 or 8" },
	{ "kvm_hv.dynamic_mt_modes", KNOB_INTS, { NULL }, { 0, 2, 4, 6, -1 }, "0, 2, 4 or 6" },
	{ "kvm_hv.target_smt_mode", KNOB_INTS, { NULL }, { 0, 1, 2, 4, 8, -1 },
	  "0, 1, 2, 4 or 8" },
	{ "kvm_hv.indep_threads_mode", KNOB_YN, { NULL }, { -1 }, "Y or N (or 1/0, true/false)" },
	{ "kvm_hv.one_vm_per_core", KNOB_YN, { NULL }, { -1 }, "Y or N (or 1/0, true/false)" },
	{ "thp", KNOB_WORDS, { "always", "madvise", "never", NULL }, { -1 },
	  "always, madvise or never" },
	{ "ksm", KNOB_INTS, { NULL }, { 0, 1, -1 }, "0 or 1" },
	{ "numa_balancing", KNOB_INTS, { NULL }, { 0, 1, -1 }, "0 or 1" },
	{ "sched_autogroup", KNOB_INTS, { NULL }, { 0, 1, -1 }, "0 or 1" },
};
#define NKNOBS (sizeof(knob_defs) / sizeof(knob_defs[0]))

static const struct knob_def *knob_find(const char *name)
{
	for (size_t i = 0; i < NKNOBS; i++)
		if (!strcmp(knob_defs[i].name, name))
			return &knob_defs[i];
	return NULL;
}

/* Parses a whole decimal (or 0x hex) integer; false on anything else. */
static bool text_to_ll(const char *s, long long *out)
{
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) ? 16 : 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* Normalises one value of knob def into buf; false if it is not allowed. */
static bool knob_normalise(const struct knob_def *def, const char *text, char *buf, size_t n)
{
	if (def->kind == KNOB_YN) {
		static const char *const yes[] = { "y", "yes", "1", "true", "on", NULL };
		static const char *const no[] = { "n", "no", "0", "false", "off", NULL };
		for (size_t i = 0; yes[i]; i++)
			if (!strcasecmp(text, yes[i])) {
				snprintf(buf, n, "Y");
				return true;
			}
		for (size_t i = 0; no[i]; i++)
			if (!strcasecmp(text, no[i])) {
				snprintf(buf, n, "N");
				return true;
			}
		return false;
	}
	if (def->kind == KNOB_WORDS || def->kind == KNOB_WORDS_OR_INTS)
		for (size_t i = 0; def->words[i]; i++)
			if (!strcasecmp(text, def->words[i])) {
				snprintf(buf, n, "%s", def->words[i]);
				return true;
			}
	if (def->kind == KNOB_INTS || def->kind == KNOB_WORDS_OR_INTS) {
		long long v;
		if (!text_to_ll(text, &v))
			return false;
		for (size_t i = 0; def->ints[i] >= 0; i++)
			if (v == def->ints[i]) {
				snprintf(buf, n, "%lld", v);
				return true;
			}
	}
	return false;
}

int config_cpuset_parse(const char *set, int *ncpus, int *max_cpu)
{
	struct cpuset cs;
	if (cpuset_parse(set, &cs, NULL) < 0)
		return -1;
	if (ncpus)
		*ncpus = (int)cs.n;
	if (max_cpu)
		*max_cpu = cpuset_last(&cs);
	cpuset_release(&cs);
	return 0;
}

/* --- the loader's state and error reporting -------------------------------- */

struct loader {
	yaml_document_t doc;
	const char *path;
	unsigned flags;
	struct ta_err *err;
};

/* Column and line as people count them (libyaml's marks are 0-based). */
static int fail_at(struct loader *L, size_t line, size_t col, const char *key,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_at(struct loader *L, size_t line, size_t col, const char *key,
		   const char *fmt, ...)
{
	char what[1536];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return err_set(L->err, EXIT_BAD_INPUT, "%s:%zu:%zu: %s: %s", L->path, line + 1, col + 1,
		       *key ? key : "(document)", what);
}

/* Fails at node n (NULL: the start of the file). */
static int fail(struct loader *L, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct loader *L, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	char what[1536];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	size_t line = n ? n->start_mark.line : 0, col = n ? n->start_mark.column : 0;
	return fail_at(L, line, col, key, "%s", what);
}

/* Appends s to the key in buf, cutting it at KEY_MAX (keys only label messages). */
static void key_append(char *buf, const char *s)
{
	size_t len = strlen(buf), add = strlen(s);
	if (add > KEY_MAX - 1 - len)
		add = KEY_MAX - 1 - len;
	memcpy(buf + len, s, add);
	buf[len + add] = '\0';
}

static void key_child(char *buf, const char *parent, const char *name)
{
	buf[0] = '\0';
	key_append(buf, parent);
	if (*parent)
		key_append(buf, ".");
	key_append(buf, name);
}

static void key_index(char *buf, const char *parent, size_t i)
{
	char idx[32];
	snprintf(idx, sizeof(idx), "[%zu]", i);
	buf[0] = '\0';
	key_append(buf, parent);
	key_append(buf, idx);
}

static yaml_node_t *node_get(struct loader *L, int index)
{
	return yaml_document_get_node(&L->doc, index);
}

static const char *scalar_text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A plain empty, ~ or null scalar: YAML's null, which no key accepts. */
static bool node_is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = scalar_text(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

/* "a mapping", "a list", "null" or the quoted scalar (shortened). */
static const char *node_describe(const yaml_node_t *n, char *buf, size_t size)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (node_is_null(n))
		return "nothing (null)";
	const char *s = scalar_text(n);
	if (strlen(s) > 40)
		snprintf(buf, size, "'%.37s...'", s);
	else
		snprintf(buf, size, "'%s'", s);
	return buf;
}

#define DESCRIBE(n) node_describe((n), (char[64]){ 0 }, 64)

/* --- did-you-mean ------------------------------------------------------- */

static size_t levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return SIZE_MAX;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The closest of words to s when it is close enough to be a typo, else NULL. */
static const char *did_you_mean(const char *s, const char *const *words)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t i = 0; words[i]; i++) {
		size_t d = levenshtein(s, words[i]);
		if (d < best_d) {
			best_d = d;
			best = words[i];
		}
	}
	size_t len = strlen(s);
	size_t limit = len <= 3 ? 1 : len <= 8 ? 2 : 3;
	return best && best_d <= limit && best_d < len ? best : NULL;
}

/* "a, b or c" */
static void words_join(struct strbuf *sb, const char *const *words)
{
	size_t n = 0;
	while (words[n])
		n++;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, i + 1 == n ? " or " : ", ");
		strbuf_addstr(sb, words[i]);
	}
}

/* --- pass 1: the raw node graph --------------------------------------- */

struct tree_state {
	unsigned char *state;	/* per node: 0 new, 1 being expanded, 2 done */
	size_t *expanded;	/* per node: nodes it expands to, saturated */
	size_t nnodes;
};

static size_t add_sat(size_t a, size_t b)
{
	return a + b > CONFIG_MAX_NODES ? CONFIG_MAX_NODES + 1 : a + b;
}

static bool tag_is_default(const yaml_node_t *n)
{
	const char *tag = (const char *)n->tag;
	switch (n->type) {
	case YAML_SCALAR_NODE: return !strcmp(tag, YAML_STR_TAG);
	case YAML_SEQUENCE_NODE: return !strcmp(tag, YAML_SEQ_TAG);
	case YAML_MAPPING_NODE: return !strcmp(tag, YAML_MAP_TAG);
	default: return false;
	}
}

/*
 * Visits each node once (memoised), computing how many nodes it expands to
 * when aliases are followed; fails at the innermost node whose expansion
 * passes the bound, so the message points at the bomb, not the root.
 */
static int tree_check(struct loader *L, struct tree_state *T, int index, int depth,
		      const char *key, size_t *count)
{
	yaml_node_t *n = node_get(L, index);
	size_t i = (size_t)index - 1;
	if (T->state[i] == 2) {
		*count = T->expanded[i];
		return 0;
	}
	if (T->state[i] == 1)
		return fail(L, n, key, "an alias refers to a node that contains it; "
			    "remove the recursive alias");
	if (depth > CONFIG_MAX_DEPTH)
		return fail(L, n, key, "nested more than %d levels deep", CONFIG_MAX_DEPTH);
	if (!tag_is_default(n))
		return fail(L, n, key, "tags are not supported (found '%s'); remove the tag",
			    (const char *)n->tag);
	T->state[i] = 1;
	size_t total = 1, sub;
	char child[KEY_MAX];
	if (n->type == YAML_SCALAR_NODE) {
		if (strlen(scalar_text(n)) != n->data.scalar.length)
			return fail(L, n, key, "contains a NUL character");
	} else if (n->type == YAML_SEQUENCE_NODE) {
		size_t k = 0;
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++, k++) {
			key_index(child, key, k);
			if (tree_check(L, T, *it, depth + 1, child, &sub) < 0)
				return -1;
			total = add_sat(total, sub);
			if (total > CONFIG_MAX_NODES)
				break;
		}
	} else {
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = node_get(L, p->key);
			key_child(child, key, k->type == YAML_SCALAR_NODE ? scalar_text(k) : "?");
			if (tree_check(L, T, p->key, depth + 1, child, &sub) < 0)
				return -1;
			total = add_sat(total, sub);
			if (tree_check(L, T, p->value, depth + 1, child, &sub) < 0)
				return -1;
			total = add_sat(total, sub);
			if (total > CONFIG_MAX_NODES)
				break;
		}
	}
	if (total > CONFIG_MAX_NODES) {
		if (T->nnodes <= CONFIG_MAX_NODES)
			return fail(L, n, key, "aliases expand to too many nodes (more than %d); "
				    "write the values out instead", CONFIG_MAX_NODES);
		return fail(L, n, key, "too many nodes (more than %d)", CONFIG_MAX_NODES);
	}
	T->state[i] = 2;
	T->expanded[i] = total;
	*count = total;
	return 0;
}

static int tree_check_all(struct loader *L)
{
	struct tree_state T;
	T.nnodes = (size_t)(L->doc.nodes.top - L->doc.nodes.start);
	T.state = xcalloc(T.nnodes, 1);
	T.expanded = xcalloc(T.nnodes, sizeof(size_t));
	size_t count;
	int rc = tree_check(L, &T, 1, 0, "", &count);
	free(T.state);
	free(T.expanded);
	return rc;
}

/* --- pass 2: typed accessors --------------------------------------------- */

static int expect_type(struct loader *L, const yaml_node_t *n, const char *key,
		       yaml_node_type_t type, const char *what)
{
	if (n->type == type && !node_is_null(n))
		return 0;
	return fail(L, n, key, "expected %s, got %s", what, DESCRIBE(n));
}

/*
 * Checks a mapping: keys are non-empty scalars, none repeated, each one of
 * allowed (NULL-terminated; NULL allows any).  Errors point at the key.
 */
static int map_check(struct loader *L, const yaml_node_t *n, const char *key,
		     const char *const *allowed, const char *what)
{
	if (expect_type(L, n, key, YAML_MAPPING_NODE, what) < 0)
		return -1;
	char child[KEY_MAX];
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node_get(L, p->key);
		if (k->type != YAML_SCALAR_NODE || node_is_null(k))
			return fail(L, k, key, "expected a key name, got %s", DESCRIBE(k));
		const char *name = scalar_text(k);
		key_child(child, key, name);
		for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
			yaml_node_t *prev = node_get(L, q->key);
			if (!strcmp(scalar_text(prev), name))
				return fail(L, k, child, "duplicate key '%s' (first at %zu:%zu)",
					    name, prev->start_mark.line + 1,
					    prev->start_mark.column + 1);
		}
		if (!allowed)
			continue;
		size_t i;
		for (i = 0; allowed[i]; i++)
			if (!strcmp(allowed[i], name))
				break;
		if (allowed[i])
			continue;
		const char *guess = did_you_mean(name, allowed);
		if (guess)
			return fail(L, k, child, "unknown key '%s' (did you mean '%s'?)", name, guess);
		struct strbuf sb = STRBUF_INIT;
		words_join(&sb, allowed);
		fail(L, k, child, "unknown key '%s'; expected one of: %s", name, strbuf_str(&sb));
		strbuf_release(&sb);
		return -1;
	}
	return 0;
}

static yaml_node_t *map_get(struct loader *L, const yaml_node_t *n, const char *name)
{
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++)
	{
		yaml_node_t *k = node_get(L, p->key);
		if (k->type == YAML_SCALAR_NODE && !strcmp(scalar_text(k), name))
			return node_get(L, p->value);
	}
	return NULL;
}

/* The key node of name in mapping n (for messages about the key itself). */
static yaml_node_t *map_key_node(struct loader *L, const yaml_node_t *n, const char *name)
{
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++)
	{
		yaml_node_t *k = node_get(L, p->key);
		if (k->type == YAML_SCALAR_NODE && !strcmp(scalar_text(k), name))
			return k;
	}
	return NULL;
}

/* Any non-null scalar, as text (numbers keep the digits written). */
static int get_str(struct loader *L, const yaml_node_t *n, const char *key, char **out)
{
	if (n->type != YAML_SCALAR_NODE || node_is_null(n))
		return fail(L, n, key, "expected a string, got %s%s", DESCRIBE(n),
			    node_is_null(n) ? "; write \"\" for an empty string" : "");
	free(*out);
	*out = xstrdup(scalar_text(n));
	return 0;
}

/* A plain scalar: numbers and booleans written in quotes are strings. */
static int get_plain(struct loader *L, const yaml_node_t *n, const char *key,
		     const char *what, const char **out)
{
	if (n->type != YAML_SCALAR_NODE || node_is_null(n))
		return fail(L, n, key, "expected %s, got %s", what, DESCRIBE(n));
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return fail(L, n, key, "expected %s, got the quoted string %s; remove the quotes",
			    what, DESCRIBE(n));
	*out = scalar_text(n);
	return 0;
}

static int get_int(struct loader *L, const yaml_node_t *n, const char *key, long long lo,
		   long long hi, int *out)
{
	char what[96];
	snprintf(what, sizeof(what), "an integer %lld..%lld", lo, hi);
	const char *s;
	if (get_plain(L, n, key, what, &s) < 0)
		return -1;
	long long v;
	const char *p = s + (*s == '-' || *s == '+');
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			return fail(L, n, key, "expected %s, got %s", what, DESCRIBE(n));
	if (!*p || !text_to_ll(s, &v))
		return fail(L, n, key, "expected %s, got %s", what, DESCRIBE(n));
	if (v < lo || v > hi)
		return fail(L, n, key, "%s is out of range; expected %s", s, what);
	*out = (int)v;
	return 0;
}

static int get_bool(struct loader *L, const yaml_node_t *n, const char *key, bool *out)
{
	const char *s;
	if (get_plain(L, n, key, "true or false", &s) < 0)
		return -1;
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(s, "false") || !strcasecmp(s, "no")) {
		*out = false;
		return 0;
	}
	return fail(L, n, key, "expected true or false (or yes/no), got %s", DESCRIBE(n));
}

/* One of words (exact); returns its index in *out. */
static int get_enum(struct loader *L, const yaml_node_t *n, const char *key,
		    const char *const *words, int *out)
{
	struct strbuf sb = STRBUF_INIT;
	words_join(&sb, words);
	int rc = -1;
	if (n->type != YAML_SCALAR_NODE || node_is_null(n)) {
		fail(L, n, key, "expected %s, got %s", strbuf_str(&sb), DESCRIBE(n));
		goto out;
	}
	const char *s = scalar_text(n);
	for (int i = 0; words[i]; i++)
		if (!strcmp(words[i], s)) {
			*out = i;
			rc = 0;
			goto out;
		}
	const char *guess = did_you_mean(s, words);
	if (guess)
		fail(L, n, key, "expected %s, got %s (did you mean '%s'?)", strbuf_str(&sb),
		     DESCRIBE(n), guess);
	else
		fail(L, n, key, "expected %s, got %s", strbuf_str(&sb), DESCRIBE(n));
out:
	strbuf_release(&sb);
	return rc;
}

/*
 * A name used in keys, domain names and the DB: letters, digits and the
 * extra characters in `extra`, 1..max long.
 */
static int get_name(struct loader *L, const yaml_node_t *n, const char *key, size_t max,
		    const char *extra, char **out)
{
	char *s = NULL;
	if (get_str(L, n, key, &s) < 0)
		return -1;
	size_t len = strlen(s);
	bool ok = len >= 1 && len <= max;
	for (const char *p = s; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || strchr(extra, *p);
	if (!ok) {
		free(s);
		return fail(L, n, key, "expected 1..%zu characters from A-Z a-z 0-9 %s, got %s",
			    max, extra, DESCRIBE(n));
	}
	free(*out);
	*out = s;
	return 0;
}

static int get_cpuset(struct loader *L, const yaml_node_t *n, const char *key, char **out,
		      int *ncpus)
{
	char *s = NULL;
	if (get_str(L, n, key, &s) < 0)
		return -1;
	if (config_cpuset_parse(s, ncpus, NULL) < 0) {
		free(s);
		return fail(L, n, key, "expected a host cpuset like \"0-3,8\" or \"0-7,^2\" "
			    "(CPU numbers up to %d), got %s", CPUSET_MAX_CPU, DESCRIBE(n));
	}
	free(*out);
	*out = s;
	return 0;
}

/* A command: a non-empty list of strings. */
static int get_argv(struct loader *L, const yaml_node_t *n, const char *key,
		    struct argv_list *out)
{
	if (n->type == YAML_SCALAR_NODE && !node_is_null(n))
		return fail(L, n, key, "write the command as a list: [prog, arg, ...]");
	if (expect_type(L, n, key, YAML_SEQUENCE_NODE, "a command as a list [prog, arg, ...]") < 0)
		return -1;
	size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (count == 0)
		return fail(L, n, key, "the command is empty; write it as [prog, arg, ...]");
	for (size_t i = 0; i < out->argc; i++)
		free(out->argv[i]);
	free(out->argv);
	out->argv = xcalloc(count + 1, sizeof(char *));
	out->argc = count;
	char child[KEY_MAX];
	for (size_t i = 0; i < count; i++) {
		key_index(child, key, i);
		if (get_str(L, node_get(L, n->data.sequence.items.start[i]), child,
			    &out->argv[i]) < 0)
			return -1;
	}
	if (!*out->argv[0])
		return fail(L, node_get(L, n->data.sequence.items.start[0]), key,
			    "the program name is empty");
	return 0;
}

static void argv_set(struct argv_list *a, const char *const *words)
{
	size_t n = 0;
	while (words[n])
		n++;
	a->argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		a->argv[i] = xstrdup(words[i]);
	a->argc = n;
}

static void argv_free(struct argv_list *a)
{
	for (size_t i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	a->argv = NULL;
	a->argc = 0;
}

/*
 * A factor: a list, or a single scalar/mapping standing for a one-item list.
 * Fills items (malloc'd, free it) and keys each item as key[i] for a list or
 * key itself for the single form.
 */
struct factor_items {
	yaml_node_t **nodes;
	size_t n;
	bool listed;
};

static int factor_items(struct loader *L, const yaml_node_t *n, const char *key,
			struct factor_items *f)
{
	f->nodes = NULL;
	f->n = 0;
	f->listed = n->type == YAML_SEQUENCE_NODE;
	if (node_is_null(n))
		return fail(L, n, key, "expected a value or a list of values, got %s",
			    DESCRIBE(n));
	if (!f->listed) {
		f->nodes = xmalloc(sizeof(*f->nodes));
		f->nodes[0] = (yaml_node_t *)n;
		f->n = 1;
		return 0;
	}
	f->n = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (f->n == 0)
		return fail(L, n, key, "empty factor list; give at least one value");
	if (f->n > CONFIG_MAX_FACTOR)
		return fail(L, n, key, "%zu values in one factor; at most %d", f->n,
			    CONFIG_MAX_FACTOR);
	f->nodes = xcalloc(f->n, sizeof(*f->nodes));
	for (size_t i = 0; i < f->n; i++)
		f->nodes[i] = node_get(L, n->data.sequence.items.start[i]);
	return 0;
}

static void factor_key(char *buf, const char *key, const struct factor_items *f, size_t i)
{
	if (f->listed) {
		key_index(buf, key, i);
	} else {
		buf[0] = '\0';
		key_append(buf, key);
	}
}

/* A list of distinct integers lo..hi (a scalar is a one-item list). */
static int get_int_list(struct loader *L, const yaml_node_t *n, const char *key, int lo,
			int hi, int **out, size_t *nout)
{
	struct factor_items f;
	if (factor_items(L, n, key, &f) < 0) {
		free(f.nodes);
		return -1;
	}
	int *v = xcalloc(f.n, sizeof(int));
	char child[KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		factor_key(child, key, &f, i);
		if (get_int(L, f.nodes[i], child, lo, hi, &v[i]) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (v[j] == v[i]) {
				fail(L, f.nodes[i], child, "duplicate value %d (first at %zu:%zu)",
				     v[i], f.nodes[j]->start_mark.line + 1,
				     f.nodes[j]->start_mark.column + 1);
				goto fail;
			}
	}
	free(f.nodes);
	*out = v;
	*nout = f.n;
	return 0;
fail:
	free(f.nodes);
	free(v);
	return -1;
}

/* --- sections ---------------------------------------------------------------- */

/* NULL when path is a regular file we can read, else why not. */
static const char *file_unreadable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strerror(errno);
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	close(fd);
	return why;
}

static int parse_libvirt(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "uri", "domain_type", "template", "name_prefix",
					    "arch", "memory_mib", NULL };
	if (map_check(L, n, "libvirt", keys, "a mapping (uri, domain_type, ...)") < 0)
		return -1;
	yaml_node_t *v;
	int e;
	if ((v = map_get(L, n, "uri")) && get_str(L, v, "libvirt.uri", &cfg->uri) < 0)
		return -1;
	if ((v = map_get(L, n, "domain_type"))) {
		static const char *const words[] = { "kvm", "qemu", "auto", NULL };
		static const enum domain_type types[] = { DOMAIN_KVM, DOMAIN_QEMU, DOMAIN_AUTO };
		if (get_enum(L, v, "libvirt.domain_type", words, &e) < 0)
			return -1;
		cfg->domain_type = types[e];
	}
	if ((v = map_get(L, n, "template"))) {
		char *t = NULL;
		if (get_str(L, v, "libvirt.template", &t) < 0)
			return -1;
		if (strcmp(t, "builtin") != 0) {
			/* Relative to the config file, so a sweep and its XML travel together. */
			const char *slash = strrchr(L->path, '/');
			struct strbuf sb = STRBUF_INIT;
			if (t[0] != '/' && slash) {
				strbuf_add(&sb, L->path, (size_t)(slash - L->path) + 1);
			}
			strbuf_addstr(&sb, t);
			cfg->template_path = strbuf_detach(&sb);
			const char *why = NULL;
			if (!*t)
				why = "an empty path";
			else if (L->flags & CONFIG_CHECK_FILES)
				why = file_unreadable(cfg->template_path);
			if (why) {
				fail(L, v, "libvirt.template", "cannot read '%s': %s (give a readable "
				     "domain XML file, relative to the config's directory, or builtin)",
				     cfg->template_path, why);
				free(t);
				return -1;
			}
		}
		free(t);
	}
	if ((v = map_get(L, n, "name_prefix")) &&
	    get_name(L, v, "libvirt.name_prefix", 32, "_-", &cfg->name_prefix) < 0)
		return -1;
	if ((v = map_get(L, n, "arch"))) {
		if (get_enum(L, v, "libvirt.arch", arch_words, &e) < 0)
			return -1;
		cfg->arch = e == 0 ? ARCH_X86_64 : ARCH_PPC64;
	}
	if ((v = map_get(L, n, "memory_mib")) &&
	    get_int(L, v, "libvirt.memory_mib", 64, 1048576, &cfg->memory_mib) < 0)
		return -1;
	return 0;
}

static int parse_guest(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "runner", "boot_timeout", "prepare", "reuse",
					    "host_baseline", NULL };
	if (map_check(L, n, "guest", keys, "a mapping (runner, boot_timeout, ...)") < 0)
		return -1;
	yaml_node_t *v;
	int e;
	if ((v = map_get(L, n, "runner"))) {
		if (get_enum(L, v, "guest.runner", runner_names, &e) < 0)
			return -1;
		cfg->runner = (enum runner_kind)e;
	}
	if ((v = map_get(L, n, "boot_timeout")) &&
	    get_int(L, v, "guest.boot_timeout", 1, 3600, &cfg->boot_timeout) < 0)
		return -1;
	if ((v = map_get(L, n, "prepare"))) {
		if (expect_type(L, v, "guest.prepare", YAML_SEQUENCE_NODE,
				"a list of commands, each a list [prog, arg, ...]") < 0)
			return -1;
		size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
		cfg->prepare = xcalloc(count ? count : 1, sizeof(*cfg->prepare));
		cfg->nprepare = count;
		char child[KEY_MAX];
		for (size_t i = 0; i < count; i++) {
			key_index(child, "guest.prepare", i);
			if (get_argv(L, node_get(L, v->data.sequence.items.start[i]), child,
				     &cfg->prepare[i]) < 0)
				return -1;
		}
	}
	if ((v = map_get(L, n, "reuse")) && get_bool(L, v, "guest.reuse", &cfg->reuse_guest) < 0)
		return -1;
	if ((v = map_get(L, n, "host_baseline"))) {
		if (get_bool(L, v, "guest.host_baseline", &cfg->host_baseline) < 0)
			return -1;
		if (cfg->host_baseline && cfg->runner == RUNNER_HOST)
			return fail(L, v, "guest.host_baseline", "with runner host every run is "
				    "on the host already; drop host_baseline or use runner agent");
	}
	return 0;
}

/* "SxCxT" or "SxDxCxT", each part 1..1024. */
static int shape_from_text(struct loader *L, const yaml_node_t *n, const char *key,
			   struct shape *s)
{
	static const char expected[] = "expected a shape \"SxCxT\" or \"SxDxCxT\" "
				       "(sockets x [dies x] cores x threads, each 1..1024), got %s";
	const char *p = scalar_text(n);
	long part[5];
	int nparts = 0;
	for (;;) {
		if (!isdigit((unsigned char)*p) || nparts == 4)
			return fail(L, n, key, expected, DESCRIBE(n));
		long v = 0;
		while (isdigit((unsigned char)*p)) {
			v = v * 10 + (*p++ - '0');
			if (v > 1024)
				return fail(L, n, key, "%s: every part must be 1..1024",
					    scalar_text(n));
		}
		if (v < 1)
			return fail(L, n, key, "%s: every part must be 1..1024", scalar_text(n));
		part[nparts++] = v;
		if (!*p)
			break;
		if (*p != 'x' && *p != 'X')
			return fail(L, n, key, expected, DESCRIBE(n));
		p++;
	}
	if (nparts < 3)
		return fail(L, n, key, expected, DESCRIBE(n));
	s->sockets = (int)part[0];
	s->dies_given = nparts == 4;
	s->dies = s->dies_given ? (int)part[1] : 1;
	s->cores = (int)part[nparts - 2];
	s->threads = (int)part[nparts - 1];
	return 0;
}

static int shape_from_map(struct loader *L, const yaml_node_t *n, const char *key,
			  struct shape *s)
{
	static const char *const keys[] = { "sockets", "dies", "cores", "threads", NULL };
	if (map_check(L, n, key, keys, "a shape") < 0)
		return -1;
	static const char *const required[] = { "sockets", "cores", "threads" };
	int *fields[] = { &s->sockets, &s->cores, &s->threads };
	char child[KEY_MAX];
	for (size_t i = 0; i < 3; i++) {
		yaml_node_t *v = map_get(L, n, required[i]);
		key_child(child, key, required[i]);
		if (!v)
			return fail(L, n, child, "required key missing (a shape needs sockets, "
				    "cores and threads; dies is optional)");
		if (get_int(L, v, child, 1, 1024, fields[i]) < 0)
			return -1;
	}
	yaml_node_t *v = map_get(L, n, "dies");
	s->dies = 1;
	s->dies_given = v != NULL;
	key_child(child, key, "dies");
	if (v && get_int(L, v, child, 1, 1024, &s->dies) < 0)
		return -1;
	return 0;
}

static int shape_parse(struct loader *L, const yaml_node_t *n, const char *key,
		       struct shape *s)
{
	int rc;
	if (n->type == YAML_MAPPING_NODE)
		rc = shape_from_map(L, n, key, s);
	else if (n->type == YAML_SCALAR_NODE && !node_is_null(n))
		rc = shape_from_text(L, n, key, s);
	else
		rc = fail(L, n, key, "expected a shape \"SxCxT\" or a mapping {sockets, cores, "
			  "threads}, got %s", DESCRIBE(n));
	s->line = (int)n->start_mark.line + 1;
	s->col = (int)n->start_mark.column + 1;
	return rc;
}

static bool shape_same(const struct shape *a, const struct shape *b)
{
	return a->sockets == b->sockets && a->dies == b->dies && a->cores == b->cores &&
	       a->threads == b->threads;
}

static int parse_topology(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	struct topology_spec *t = &cfg->topology;
	/* A mapping is the generator unless it reads as one shape (has cores). */
	if (n->type == YAML_MAPPING_NODE &&
	    (map_get(L, n, "vcpus") || !map_get(L, n, "cores"))) {
		static const char *const keys[] = { "vcpus", "threads", "sockets", NULL };
		if (map_check(L, n, "topology", keys, "a generator {vcpus, threads, sockets}") < 0)
			return -1;
		t->generated = true;
		yaml_node_t *v = map_get(L, n, "vcpus");
		if (!v)
			return fail(L, n, "topology.vcpus", "required key missing (the generator "
				    "needs vcpus: [N, ...] and threads: [T, ...])");
		if (get_int_list(L, v, "topology.vcpus", 1, 1024, &t->vcpus, &t->nvcpus) < 0)
			return -1;
		if (!(v = map_get(L, n, "threads")))
			return fail(L, n, "topology.threads", "required key missing (the generator "
				    "needs vcpus: [N, ...] and threads: [T, ...])");
		if (get_int_list(L, v, "topology.threads", 1, 1024, &t->threads, &t->nthreads) < 0)
			return -1;
		if ((v = map_get(L, n, "sockets")) &&
		    get_int_list(L, v, "topology.sockets", 1, 1024, &t->sockets, &t->nsockets) < 0)
			return -1;
		return 0;
	}
	struct factor_items f;
	if (factor_items(L, n, "topology", &f) < 0) {
		free(f.nodes);
		return -1;
	}
	t->shapes = xcalloc(f.n, sizeof(*t->shapes));
	t->nshapes = f.n;
	char child[KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		factor_key(child, "topology", &f, i);
		if (shape_parse(L, f.nodes[i], child, &t->shapes[i]) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (shape_same(&t->shapes[j], &t->shapes[i])) {
				char text[64];
				shape_format(&t->shapes[i], text, sizeof(text));
				fail(L, f.nodes[i], child, "duplicate shape %s (first at %d:%d)", text,
				     t->shapes[j].line, t->shapes[j].col);
				goto fail;
			}
	}
	free(f.nodes);
	return 0;
fail:
	free(f.nodes);
	return -1;
}

static const char *const reserved_pin_names[] = { "none", "compact", "spread", NULL };

static int parse_pinning_item(struct loader *L, const yaml_node_t *n, const char *key,
			      struct pinning *p)
{
	p->line = (int)n->start_mark.line + 1;
	p->col = (int)n->start_mark.column + 1;
	if (n->type != YAML_MAPPING_NODE) {
		int e;
		if (get_enum(L, n, key, pin_words, &e) < 0)
			return -1;
		p->policy = (enum pin_policy)e;
		p->name = xstrdup(pin_words[e]);
		return 0;
	}
	static const char *const keys[] = { "name", "vcpus", "emulator", NULL };
	if (map_check(L, n, key, keys, "a pinning") < 0)
		return -1;
	p->policy = PIN_EXPLICIT;
	char child[KEY_MAX];
	yaml_node_t *v = map_get(L, n, "name");
	key_child(child, key, "name");
	if (!v)
		return fail(L, n, child, "required key missing (an explicit pinning needs a name "
			    "and vcpus: [cpuset per vCPU])");
	if (get_name(L, v, child, 64, "._-", &p->name) < 0)
		return -1;
	for (size_t i = 0; reserved_pin_names[i]; i++)
		if (!strcmp(p->name, reserved_pin_names[i]))
			return fail(L, v, child, "'%s' is a built-in policy; give the explicit "
				    "pinning another name", p->name);
	key_child(child, key, "vcpus");
	if (!(v = map_get(L, n, "vcpus")))
		return fail(L, n, child, "required key missing (one host cpuset per vCPU, e.g. "
			    "vcpus: [\"0\", \"1\"])");
	if (expect_type(L, v, child, YAML_SEQUENCE_NODE,
			"a list with one host cpuset per vCPU, e.g. [\"0\", \"1\"]") < 0)
		return -1;
	size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (count == 0)
		return fail(L, v, child, "empty list; give one host cpuset per vCPU");
	p->vcpu_cpus = xcalloc(count, sizeof(char *));
	p->nvcpu_cpus = count;
	char item[KEY_MAX];
	for (size_t i = 0; i < count; i++) {
		key_index(item, child, i);
		if (get_cpuset(L, node_get(L, v->data.sequence.items.start[i]), item,
			       &p->vcpu_cpus[i], NULL) < 0)
			return -1;
	}
	key_child(child, key, "emulator");
	if ((v = map_get(L, n, "emulator")) && get_cpuset(L, v, child, &p->emulator_cpus, NULL) < 0)
		return -1;
	return 0;
}

static int parse_pinning(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	struct factor_items f;
	if (factor_items(L, n, "pinning", &f) < 0) {
		free(f.nodes);
		return -1;
	}
	cfg->pinnings = xcalloc(f.n, sizeof(*cfg->pinnings));
	cfg->npinnings = f.n;
	char child[KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		factor_key(child, "pinning", &f, i);
		if (parse_pinning_item(L, f.nodes[i], child, &cfg->pinnings[i]) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(cfg->pinnings[j].name, cfg->pinnings[i].name)) {
				fail(L, f.nodes[i], child, "duplicate pinning '%s' (first at %d:%d); "
				     "names must be unique", cfg->pinnings[i].name,
				     cfg->pinnings[j].line, cfg->pinnings[j].col);
				goto fail;
			}
	}
	free(f.nodes);
	return 0;
fail:
	free(f.nodes);
	return -1;
}

static int parse_host(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	const char *names[NKNOBS + 1];
	for (size_t i = 0; i < NKNOBS; i++)
		names[i] = knob_defs[i].name;
	names[NKNOBS] = NULL;
	if (map_check(L, n, "host", names, "a mapping knob -> values") < 0)
		return -1;
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	cfg->knobs = xcalloc(count ? count : 1, sizeof(*cfg->knobs));
	char key[KEY_MAX], child[KEY_MAX];
	for (size_t i = 0; i < count; i++) {
		yaml_node_pair_t *pair = &n->data.mapping.pairs.start[i];
		yaml_node_t *k = node_get(L, pair->key), *v = node_get(L, pair->value);
		const struct knob_def *def = knob_find(scalar_text(k));
		struct knob_factor *kf = &cfg->knobs[cfg->nknobs++];
		kf->name = xstrdup(def->name);
		kf->line = (int)k->start_mark.line + 1;
		kf->col = (int)k->start_mark.column + 1;
		key_child(key, "host", def->name);
		struct factor_items f;
		if (factor_items(L, v, key, &f) < 0) {
			free(f.nodes);
			return -1;
		}
		kf->values = xcalloc(f.n, sizeof(char *));
		for (size_t j = 0; j < f.n; j++) {
			factor_key(child, key, &f, j);
			char norm[32];
			if (f.nodes[j]->type != YAML_SCALAR_NODE || node_is_null(f.nodes[j]) ||
			    !knob_normalise(def, scalar_text(f.nodes[j]), norm, sizeof(norm))) {
				fail(L, f.nodes[j], child, "expected %s, got %s", def->expected,
				     DESCRIBE(f.nodes[j]));
				free(f.nodes);
				return -1;
			}
			for (size_t m = 0; m < j; m++)
				if (!strcmp(kf->values[m], norm)) {
					fail(L, f.nodes[j], child, "duplicate value %s (first at %zu:%zu)",
					     norm, f.nodes[m]->start_mark.line + 1,
					     f.nodes[m]->start_mark.column + 1);
					free(f.nodes);
					return -1;
				}
			kf->values[kf->nvalues++] = xstrdup(norm);
		}
		free(f.nodes);
	}
	return 0;
}

static int parse_noise_item(struct loader *L, const yaml_node_t *n, const char *key,
			    struct noise *z)
{
	z->line = (int)n->start_mark.line + 1;
	z->col = (int)n->start_mark.column + 1;
	int e;
	if (n->type != YAML_MAPPING_NODE) {
		if (get_enum(L, n, key, noise_kind_names, &e) < 0)
			return -1;
		z->kind = (enum noise_kind)e;
		if (z->kind == NOISE_COMMAND || z->kind == NOISE_GUEST)
			return fail(L, n, key, "noise '%s' needs a command: write {kind: %s, argv: "
				    "[prog, arg, ...]}", noise_kind_names[e], noise_kind_names[e]);
		z->name = xstrdup(noise_kind_names[e]);
		z->threads = z->kind == NOISE_SPIN ? 1 : 0;
		return 0;
	}
	static const char *const keys[] = { "kind", "name", "cpus", "threads", "argv", NULL };
	if (map_check(L, n, key, keys, "a noise load") < 0)
		return -1;
	char child[KEY_MAX];
	yaml_node_t *v = map_get(L, n, "kind");
	key_child(child, key, "kind");
	if (!v)
		return fail(L, n, child, "required key missing (none, spin, command or guest)");
	if (get_enum(L, v, child, noise_kind_names, &e) < 0)
		return -1;
	z->kind = (enum noise_kind)e;

	key_child(child, key, "name");
	if ((v = map_get(L, n, "name"))) {
		if (get_name(L, v, child, 64, "._-", &z->name) < 0)
			return -1;
	} else {
		z->name = xstrdup(noise_kind_names[e]);
	}

	int ncpus = 0;
	key_child(child, key, "cpus");
	if ((v = map_get(L, n, "cpus"))) {
		if (z->kind == NOISE_NONE)
			return fail(L, map_key_node(L, n, "cpus"), child,
				    "noise kind none takes no cpus");
		if (get_cpuset(L, v, child, &z->cpus, &ncpus) < 0)
			return -1;
	}

	key_child(child, key, "threads");
	if ((v = map_get(L, n, "threads"))) {
		if (z->kind != NOISE_SPIN)
			return fail(L, map_key_node(L, n, "threads"), child,
				    "only spin noise uses threads");
		if (get_int(L, v, child, 1, 1024, &z->threads) < 0)
			return -1;
	} else if (z->kind == NOISE_SPIN) {
		z->threads = ncpus ? ncpus : 1;
	}

	key_child(child, key, "argv");
	v = map_get(L, n, "argv");
	if (z->kind == NOISE_COMMAND || z->kind == NOISE_GUEST) {
		if (!v)
			return fail(L, n, child, "required key missing (noise %s runs argv: "
				    "[prog, arg, ...])", noise_kind_names[e]);
		if (get_argv(L, v, child, &z->argv) < 0)
			return -1;
	} else if (v) {
		return fail(L, map_key_node(L, n, "argv"), child,
			    "only command and guest noise use argv");
	}
	return 0;
}

static int parse_noise(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	struct factor_items f;
	if (factor_items(L, n, "noise", &f) < 0) {
		free(f.nodes);
		return -1;
	}
	cfg->noises = xcalloc(f.n, sizeof(*cfg->noises));
	cfg->nnoises = f.n;
	char child[KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		factor_key(child, "noise", &f, i);
		if (parse_noise_item(L, f.nodes[i], child, &cfg->noises[i]) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(cfg->noises[j].name, cfg->noises[i].name)) {
				fail(L, f.nodes[i], child, "duplicate noise name '%s' (first at %d:%d); "
				     "give each load its own name", cfg->noises[i].name,
				     cfg->noises[j].line, cfg->noises[j].col);
				goto fail;
			}
	}
	free(f.nodes);
	return 0;
fail:
	free(f.nodes);
	return -1;
}

/* The per-kind defaults documented in docs/config.md. */
struct bench_defaults {
	const char *metric, *unit;
	bool higher;
};

static const struct bench_defaults bench_defaults[] = {
	[BENCH_EBIZZY] = { "records_per_s", "records/s", true },
	[BENCH_REDIS] = { "requests_per_s", "requests/s", true },
	[BENCH_STRESS_NG] = { "bogo_ops_per_s", "bogo-ops/s", true },
	[BENCH_SYSBENCH] = { "events_per_s", "events/s", true },
	[BENCH_KERNEL_BUILD] = { "real_s", "s", false },
	[BENCH_COMMAND] = { NULL, NULL, true },
};

/* Default argv for kind; the benchmark runs for `duration` seconds. */
static void bench_default_argv(struct benchmark *b)
{
	char secs[32], secs_s[40], time_opt[48];
	int d = b->duration ? b->duration : 10;
	snprintf(secs, sizeof(secs), "%d", d);
	snprintf(secs_s, sizeof(secs_s), "%ds", d);
	snprintf(time_opt, sizeof(time_opt), "--time=%d", d);
	switch (b->kind) {
	case BENCH_EBIZZY:
		argv_set(&b->argv, (const char *[]){ "ebizzy", "-S", secs, NULL });
		break;
	case BENCH_REDIS:
		argv_set(&b->argv, (const char *[]){ "redis-benchmark", "-q", "-n", "100000", "-t",
				"set,get,incr,lpush,lpop,sadd,spop,mset", NULL });
		break;
	case BENCH_STRESS_NG:
		argv_set(&b->argv, (const char *[]){ "stress-ng", "--cpu", "0", "--timeout", secs_s,
				"--metrics-brief", NULL });
		break;
	case BENCH_SYSBENCH:
		argv_set(&b->argv, (const char *[]){ "sysbench", "cpu", time_opt, "run", NULL });
		break;
	case BENCH_KERNEL_BUILD:
		/* `time -p` prints the real/user/sys seconds the parser reads. */
		argv_set(&b->argv, (const char *[]){ "time", "-p", "make", "-C", "/root/linux",
				"-s", "vmlinux", "-j", NULL });
		break;
	case BENCH_COMMAND:
		break;
	}
}

static int parse_metric(struct loader *L, const yaml_node_t *n, struct benchmark *b)
{
	const yaml_node_t *name_node = n;
	yaml_node_t *dir = NULL, *unit = NULL;
	if (n->type == YAML_MAPPING_NODE) {
		static const char *const keys[] = { "name", "direction", "unit", NULL };
		if (map_check(L, n, "benchmark.metric", keys, "a metric") < 0)
			return -1;
		if (!(name_node = map_get(L, n, "name")))
			return fail(L, n, "benchmark.metric.name", "required key missing");
		dir = map_get(L, n, "direction");
		unit = map_get(L, n, "unit");
	}
	const char *key = n->type == YAML_MAPPING_NODE ? "benchmark.metric.name" : "benchmark.metric";
	char *name = NULL;
	if (get_str(L, name_node, key, &name) < 0)
		return -1;
	bool ok = isalpha((unsigned char)name[0]) || name[0] == '_';
	for (const char *p = name; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '_';
	if (!ok || strlen(name) > 64) {
		free(name);
		return fail(L, name_node, key, "expected a metric name of letters, digits and _ "
			    "(not starting with a digit), got %s", DESCRIBE(name_node));
	}
	b->metric.name = name;
	/* The kind's own metric keeps its known direction and unit. */
	const struct bench_defaults *d = &bench_defaults[b->kind];
	bool is_default = d->metric && !strcmp(d->metric, name);
	b->metric.higher_is_better = is_default ? d->higher : true;
	if (is_default)
		b->metric.unit = xstrdup(d->unit);
	if (dir) {
		int e;
		if (get_enum(L, dir, "benchmark.metric.direction", direction_words, &e) < 0)
			return -1;
		b->metric.higher_is_better = e == 0;
	}
	if (unit && get_str(L, unit, "benchmark.metric.unit", &b->metric.unit) < 0)
		return -1;
	return 0;
}

static int parse_benchmark(struct loader *L, const yaml_node_t *root, struct sweep_config *cfg)
{
	yaml_node_t *n = map_get(L, root, "benchmark");
	if (!n)
		return fail(L, root, "benchmark", "required key missing; add e.g. benchmark: "
			    "{kind: stress-ng}");
	static const char *const keys[] = { "kind", "argv", "server_argv", "duration", "timeout",
					    "metric", "parse", NULL };
	if (map_check(L, n, "benchmark", keys, "a mapping (kind, argv, ...)") < 0)
		return -1;
	struct benchmark *b = &cfg->bench;
	yaml_node_t *v = map_get(L, n, "kind");
	int e;
	if (!v)
		return fail(L, n, "benchmark.kind", "required key missing (ebizzy, redis, stress-ng, "
			    "sysbench, kernel-build or command)");
	if (get_enum(L, v, "benchmark.kind", bench_kind_names, &e) < 0)
		return -1;
	b->kind = (enum bench_kind)e;

	b->duration = 10;
	if ((v = map_get(L, n, "duration")) &&
	    get_int(L, v, "benchmark.duration", 0, 86400, &b->duration) < 0)
		return -1;

	if ((v = map_get(L, n, "argv"))) {
		if (get_argv(L, v, "benchmark.argv", &b->argv) < 0)
			return -1;
	} else if (b->kind == BENCH_COMMAND) {
		return fail(L, n, "benchmark.argv", "required key missing (kind command runs argv: "
			    "[prog, arg, ...])");
	} else {
		bench_default_argv(b);
	}

	if ((v = map_get(L, n, "server_argv"))) {
		if (b->kind != BENCH_REDIS)
			return fail(L, map_key_node(L, n, "server_argv"), "benchmark.server_argv",
				    "only redis uses server_argv");
		if (get_argv(L, v, "benchmark.server_argv", &b->server_argv) < 0)
			return -1;
	} else if (b->kind == BENCH_REDIS) {
		argv_set(&b->server_argv, (const char *[]){ "redis-server", "--save", "",
				"--appendonly", "no", NULL });
	}

	b->timeout = 0;
	if ((v = map_get(L, n, "timeout"))) {
		if (get_int(L, v, "benchmark.timeout", 0, 604800, &b->timeout) < 0)
			return -1;
		if (b->timeout && b->duration && b->timeout <= b->duration)
			return fail(L, v, "benchmark.timeout", "%d s is not longer than the duration "
				    "(%d s); give more, or 0 for the default", b->timeout, b->duration);
	}
	if (b->timeout == 0)
		b->timeout = b->kind == BENCH_KERNEL_BUILD ? 7200 : b->duration * 3 + 60;

	if ((v = map_get(L, n, "metric"))) {
		if (parse_metric(L, v, b) < 0)
			return -1;
	} else if (b->kind == BENCH_COMMAND) {
		return fail(L, n, "benchmark.metric", "required key missing (kind command: name the "
			    "named group of parse that is the result)");
	} else {
		b->metric.name = xstrdup(bench_defaults[b->kind].metric);
		b->metric.unit = xstrdup(bench_defaults[b->kind].unit);
		b->metric.higher_is_better = bench_defaults[b->kind].higher;
	}

	v = map_get(L, n, "parse");
	if (b->kind != BENCH_COMMAND) {
		if (v)
			return fail(L, map_key_node(L, n, "parse"), "benchmark.parse",
				    "only kind command uses parse (the other kinds have built-in "
				    "parsers)");
		return 0;
	}
	if (!v)
		return fail(L, n, "benchmark.parse", "required key missing (a regex with a named "
			    "group, e.g. '(?<ops>[0-9.]+) ops/s')");
	if (get_str(L, v, "benchmark.parse", &b->parse_regex) < 0)
		return -1;
	struct ta_err rerr = { 0 };
	if (benchparse_regex_groups(b->parse_regex, &b->parse_groups, &b->nparse_groups,
				    &rerr) < 0)
		return fail(L, v, "benchmark.parse", "%s", rerr.msg);
	for (size_t i = 0; i < b->nparse_groups; i++)
		if (b->parse_groups[i] && !strcmp(b->parse_groups[i], b->metric.name))
			return 0;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < b->nparse_groups; i++)
		if (b->parse_groups[i])
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", b->parse_groups[i]);
	yaml_node_t *m = map_get(L, n, "metric");
	fail(L, m, "benchmark.metric", "'%s' is not a named group of parse (its groups: %s)",
	     b->metric.name, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

static int parse_collect(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "gang_exits", "exit_reasons", "vcpu_stats",
					    "buffer_kib", "max_lost_fraction", NULL };
	if (map_check(L, n, "collect", keys, "a mapping (gang_exits, exit_reasons, ...)") < 0)
		return -1;
	struct collect *c = &cfg->collect;
	yaml_node_t *v;
	if ((v = map_get(L, n, "gang_exits")) && get_bool(L, v, "collect.gang_exits",
							  &c->gang_exits) < 0)
		return -1;
	if ((v = map_get(L, n, "exit_reasons")) && get_bool(L, v, "collect.exit_reasons",
							    &c->exit_reasons) < 0)
		return -1;
	if ((v = map_get(L, n, "vcpu_stats")) && get_bool(L, v, "collect.vcpu_stats",
							  &c->vcpu_stats) < 0)
		return -1;
	if ((v = map_get(L, n, "buffer_kib")) &&
	    get_int(L, v, "collect.buffer_kib", 64, 4194304, &c->buffer_kib) < 0)
		return -1;
	if ((v = map_get(L, n, "max_lost_fraction"))) {
		const char *s;
		static const char what[] = "a fraction 0..1 (e.g. 0.001)";
		if (get_plain(L, v, "collect.max_lost_fraction", what, &s) < 0)
			return -1;
		char *end;
		errno = 0;
		double f = strtod(s, &end);
		if (errno || *end || end == s || !isfinite(f))
			return fail(L, v, "collect.max_lost_fraction", "expected %s, got %s", what,
				    DESCRIBE(v));
		if (f < 0 || f > 1)
			return fail(L, v, "collect.max_lost_fraction", "%s is out of range; "
				    "expected %s", s, what);
		c->max_lost_fraction = f;
	}
	return 0;
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

static int baseline_topology(struct loader *L, const yaml_node_t *v, struct sweep_config *cfg)
{
	const struct topology_spec *t = &cfg->topology;
	struct shape s;
	memset(&s, 0, sizeof(s));
	if (shape_parse(L, v, "baseline.topology", &s) < 0)
		return -1;
	char text[64];
	if (t->generated) {
		/* The generator makes dies-less shapes: name them the way plan keys them. */
		if (s.dies != 1)
			return fail(L, v, "baseline.topology", "the generator makes shapes with one "
				    "die; write the baseline as SxCxT");
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
			return fail(L, v, "baseline.topology", "%s is not a shape the generator "
				    "makes (%s)", text, !ok_v ? "its vCPU count is not in vcpus" :
				    !ok_t ? "its threads are not in threads" :
				    "its sockets are not in sockets");
		baseline_add(cfg, "topology", text, v);
		return 0;
	}
	for (size_t i = 0; i < t->nshapes; i++)
		if (shape_same(&t->shapes[i], &s)) {
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
	fail(L, v, "baseline.topology", "%s is not in topology (%s)", text, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

static int baseline_named(struct loader *L, const yaml_node_t *v, struct sweep_config *cfg,
			  const char *factor, const char *const *names, size_t n)
{
	char key[KEY_MAX];
	key_child(key, "baseline", factor);
	char *s = NULL;
	if (get_str(L, v, key, &s) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], s)) {
			baseline_add(cfg, factor, s, v);
			free(s);
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	baseline_choices(&sb, names, n);
	fail(L, v, key, "'%s' is not one of this sweep's %s values (%s)", s, factor,
	     strbuf_str(&sb));
	strbuf_release(&sb);
	free(s);
	return -1;
}

static int parse_baseline(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	/* Allowed keys: the three fixed factors, then the knobs this sweep has. */
	const char **allowed = xcalloc(cfg->nknobs + 4, sizeof(char *));
	allowed[0] = "topology";
	allowed[1] = "pinning";
	allowed[2] = "noise";
	for (size_t i = 0; i < cfg->nknobs; i++)
		allowed[3 + i] = cfg->knobs[i].name;
	int rc = -1;
	if (n->type == YAML_MAPPING_NODE) {
		/* A known knob the sweep does not vary deserves a clearer word. */
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = node_get(L, p->key);
			if (k->type != YAML_SCALAR_NODE || !knob_find(scalar_text(k)))
				continue;
			size_t i;
			for (i = 0; i < cfg->nknobs && strcmp(cfg->knobs[i].name, scalar_text(k)); i++)
				;
			if (i == cfg->nknobs) {
				char key[KEY_MAX];
				key_child(key, "baseline", scalar_text(k));
				fail(L, k, key, "'%s' is not a factor of this sweep; add it under "
				     "host: or drop it here", scalar_text(k));
				goto out;
			}
		}
	}
	if (map_check(L, n, "baseline", allowed, "a mapping factor -> value") < 0)
		goto out;
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	cfg->baseline = xcalloc(count ? count : 1, sizeof(*cfg->baseline));
	for (size_t i = 0; i < count; i++) {
		yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];
		const char *factor = scalar_text(node_get(L, p->key));
		yaml_node_t *v = node_get(L, p->value);
		if (!strcmp(factor, "topology")) {
			if (baseline_topology(L, v, cfg) < 0)
				goto out;
			continue;
		}
		const char **names;
		size_t nnames;
		if (!strcmp(factor, "pinning") || !strcmp(factor, "noise")) {
			bool pin = factor[0] == 'p';
			nnames = pin ? cfg->npinnings : cfg->nnoises;
			names = xcalloc(nnames, sizeof(char *));
			for (size_t j = 0; j < nnames; j++)
				names[j] = pin ? cfg->pinnings[j].name : cfg->noises[j].name;
			int r = baseline_named(L, v, cfg, factor, names, nnames);
			free(names);
			if (r < 0)
				goto out;
			continue;
		}
		const struct knob_factor *kf = NULL;
		for (size_t j = 0; j < cfg->nknobs; j++)
			if (!strcmp(cfg->knobs[j].name, factor))
				kf = &cfg->knobs[j];
		char key[KEY_MAX], norm[32];
		key_child(key, "baseline", factor);
		const struct knob_def *def = knob_find(factor);
		if (v->type != YAML_SCALAR_NODE || node_is_null(v) ||
		    !knob_normalise(def, scalar_text(v), norm, sizeof(norm))) {
			fail(L, v, key, "expected %s, got %s", def->expected, DESCRIBE(v));
			goto out;
		}
		size_t j;
		for (j = 0; j < kf->nvalues && strcmp(kf->values[j], norm); j++)
			;
		if (j == kf->nvalues) {
			struct strbuf sb = STRBUF_INIT;
			baseline_choices(&sb, (const char *const *)kf->values, kf->nvalues);
			fail(L, v, key, "%s is not one of this sweep's values (%s)", norm,
			     strbuf_str(&sb));
			strbuf_release(&sb);
			goto out;
		}
		baseline_add(cfg, factor, norm, v);
	}
	rc = 0;
out:
	free(allowed);
	return rc;
}

static int parse_seed(struct loader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char what[] = "an unsigned 64-bit integer";
	const char *s;
	if (get_plain(L, n, "seed", what, &s) < 0)
		return -1;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return fail(L, n, "seed", "expected %s, got %s", what, DESCRIBE(n));
	errno = 0;
	unsigned long long v = strtoull(s, NULL, 10);
	if (errno == ERANGE)
		return fail(L, n, "seed", "%s is out of range; expected %s", s, what);
	cfg->seed = v;
	cfg->seed_given = true;
	return 0;
}

static void config_defaults(struct sweep_config *cfg)
{
	cfg->uri = xstrdup("qemu:///system");
	cfg->domain_type = DOMAIN_AUTO;
	cfg->name_prefix = xstrdup("ta-");
	cfg->arch = ARCH_HOST;
	cfg->memory_mib = 512;
	cfg->runner = RUNNER_AGENT;
	cfg->boot_timeout = 120;
	cfg->collect = (struct collect){ .gang_exits = true, .exit_reasons = true,
					 .vcpu_stats = true, .buffer_kib = 8192,
					 .max_lost_fraction = 0.001 };
	cfg->repetitions = 3;
	cfg->order = ORDER_RANDOMIZED;
	cfg->strategy = STRATEGY_FULL;
}

static int parse_root(struct loader *L, const yaml_node_t *root, struct sweep_config *cfg)
{
	static const char *const keys[] = { "name", "description", "libvirt", "guest",
					    "topology", "pinning", "host", "noise", "benchmark",
					    "baseline", "collect", "repetitions", "order", "seed",
					    "strategy", NULL };
	if (map_check(L, root, "", keys, "a mapping with at least name, topology and "
		      "benchmark") < 0)
		return -1;
	yaml_node_t *v;
	int e;
	if (!(v = map_get(L, root, "name")))
		return fail(L, root, "name", "required key missing; add e.g. name: my-sweep");
	if (get_name(L, v, "name", 64, "._-", &cfg->name) < 0)
		return -1;
	if ((v = map_get(L, root, "description")) &&
	    get_str(L, v, "description", &cfg->description) < 0)
		return -1;
	if ((v = map_get(L, root, "libvirt")) && parse_libvirt(L, v, cfg) < 0)
		return -1;
	if ((v = map_get(L, root, "guest")) && parse_guest(L, v, cfg) < 0)
		return -1;
	if (!(v = map_get(L, root, "topology")))
		return fail(L, root, "topology", "required key missing; add e.g. topology: "
			    "[1x2x1, 1x1x2]");
	if (parse_topology(L, v, cfg) < 0)
		return -1;
	if ((v = map_get(L, root, "pinning"))) {
		if (parse_pinning(L, v, cfg) < 0)
			return -1;
	} else {
		cfg->pinnings = xcalloc(1, sizeof(*cfg->pinnings));
		cfg->npinnings = 1;
		cfg->pinnings[0].policy = PIN_NONE;
		cfg->pinnings[0].name = xstrdup("none");
	}
	if ((v = map_get(L, root, "host")) && parse_host(L, v, cfg) < 0)
		return -1;
	if ((v = map_get(L, root, "noise"))) {
		if (parse_noise(L, v, cfg) < 0)
			return -1;
	} else {
		cfg->noises = xcalloc(1, sizeof(*cfg->noises));
		cfg->nnoises = 1;
		cfg->noises[0].kind = NOISE_NONE;
		cfg->noises[0].name = xstrdup("none");
	}
	if (parse_benchmark(L, root, cfg) < 0)
		return -1;
	if ((v = map_get(L, root, "baseline")) && parse_baseline(L, v, cfg) < 0)
		return -1;
	if ((v = map_get(L, root, "collect")) && parse_collect(L, v, cfg) < 0)
		return -1;
	if ((v = map_get(L, root, "repetitions")) &&
	    get_int(L, v, "repetitions", 1, 1000, &cfg->repetitions) < 0)
		return -1;
	if ((v = map_get(L, root, "order"))) {
		if (get_enum(L, v, "order", order_names, &e) < 0)
			return -1;
		cfg->order = (enum run_order)e;
	}
	if ((v = map_get(L, root, "seed")) && parse_seed(L, v, cfg) < 0)
		return -1;
	if ((v = map_get(L, root, "strategy"))) {
		if (get_enum(L, v, "strategy", strategy_names, &e) < 0)
			return -1;
		cfg->strategy = (enum strategy)e;
	}
	return 0;
}

/* --- loading ------------------------------------------------------------------ */

/*
 * libyaml's reader errors carry a byte offset, not a mark: count lines and
 * characters up to it (everything before it decoded, so it is UTF-8).
 */
static int fail_reader(struct loader *L, const yaml_parser_t *p, const char *text, size_t len)
{
	size_t end = p->problem_offset < len ? p->problem_offset : len;
	/* A bad trailing octet: point at the character it breaks, not past it. */
	if (strstr(p->problem, "trailing") && end > 0) {
		size_t lead = end - 1;
		while (lead > 0 && ((unsigned char)text[lead] & 0xC0) == 0x80)
			lead--;
		end = lead;
	}
	size_t line = 0, col = 0;
	for (size_t i = 0; i < end; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n') {
			line++;
			col = 0;
		} else if ((c & 0xC0) != 0x80) {
			col++;
		}
	}
	if (end < len)
		return fail_at(L, line, col, "encoding", "%s at byte 0x%02X; save the "
			       "file as UTF-8 text", p->problem, (unsigned char)text[end]);
	return fail_at(L, line, col, "encoding", "%s; save the file as UTF-8 text",
		       p->problem);
}

static int fail_parser(struct loader *L, const yaml_parser_t *p, const char *text, size_t len)
{
	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return err_set(L->err, EXIT_FAILURE_RUN, "%s: out of memory parsing YAML",
			       L->path);
	case YAML_READER_ERROR:
		return fail_reader(L, p, text, len);
	default:
		if (p->context)
			return fail_at(L, p->problem_mark.line, p->problem_mark.column,
				       "YAML syntax", "%s (%s at %zu:%zu)", p->problem,
				       p->context, p->context_mark.line + 1,
				       p->context_mark.column + 1);
		return fail_at(L, p->problem_mark.line, p->problem_mark.column, "YAML syntax",
			       "%s", p->problem ? p->problem : "invalid YAML");
	}
}

/*
 * Loads the one document of text into L->doc; refuses empty input and a
 * second document.  On success the caller deletes L->doc.
 */
static int yaml_load_one(struct loader *L, const char *text, size_t len)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return err_set(L->err, EXIT_FAILURE_RUN, "%s: out of memory", L->path);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	/* No UTF-16 guessing: a config is UTF-8, anything else is reported. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	int rc = -1;
	if (!yaml_parser_load(&parser, &L->doc)) {
		fail_parser(L, &parser, text, len);
		goto out;
	}
	if (!yaml_document_get_root_node(&L->doc)) {
		yaml_document_delete(&L->doc);
		fail_at(L, 0, 0, "", "the file is empty; expected a mapping with at least name, "
			"topology and benchmark");
		goto out;
	}
	yaml_document_t second;
	if (!yaml_parser_load(&parser, &second)) {
		yaml_document_delete(&L->doc);
		fail_parser(L, &parser, text, len);
		goto out;
	}
	if (yaml_document_get_root_node(&second)) {
		fail_at(L, second.start_mark.line, second.start_mark.column, "",
			"a second YAML document; a config is one document (remove the '---' "
			"and what follows, or split the file)");
		yaml_document_delete(&second);
		yaml_document_delete(&L->doc);
		goto out;
	}
	yaml_document_delete(&second);
	rc = 0;
out:
	yaml_parser_delete(&parser);
	return rc;
}

struct sweep_config *config_parse_flags(const char *path, const char *text, size_t len,
					unsigned flags, struct ta_err *err)
{
	struct loader L = { .path = path, .flags = flags, .err = err };
	if (yaml_load_one(&L, text, len) < 0)
		return NULL;
	struct sweep_config *cfg = xcalloc(1, sizeof(*cfg));
	cfg->path = xstrdup(path);
	cfg->files_checked = flags & CONFIG_CHECK_FILES;
	cfg->text = xmalloc(len + 1);
	memcpy(cfg->text, text, len);
	cfg->text[len] = '\0';
	cfg->text_len = len;
	config_defaults(cfg);
	int rc = tree_check_all(&L);
	if (rc == 0)
		rc = parse_root(&L, yaml_document_get_root_node(&L.doc), cfg);
	yaml_document_delete(&L.doc);
	if (rc < 0) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

struct sweep_config *config_parse(const char *path, const char *text, size_t len,
				  struct ta_err *err)
{
	return config_parse_flags(path, text, len, 0, err);
}

/* Reads at most CONFIG_MAX_BYTES + 1 bytes, so a huge file is refused quickly. */
static int config_read(const char *path, struct strbuf *sb, struct ta_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(err, EXIT_BAD_INPUT, "%s: cannot read the config: %s", path,
			       strerror(errno));
	for (;;) {
		strbuf_grow(sb, 65536);
		size_t room = sb->alloc - sb->len - 1;
		ssize_t n = read(fd, sb->buf + sb->len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			close(fd);
			return err_set(err, EXIT_BAD_INPUT, "%s: cannot read the config: %s", path,
				       strerror(saved));
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
		if (sb->len > CONFIG_MAX_BYTES) {
			close(fd);
			return err_set(err, EXIT_BAD_INPUT, "%s: the config is larger than %d bytes; "
				       "is this the right file?", path, CONFIG_MAX_BYTES);
		}
	}
	close(fd);
	return 0;
}

struct sweep_config *config_load(const char *path, struct ta_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	if (config_read(path, &sb, err) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	struct sweep_config *cfg = config_parse_flags(path, strbuf_str(&sb), sb.len,
						      CONFIG_CHECK_FILES, err);
	strbuf_release(&sb);
	return cfg;
}

void config_free(struct sweep_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->path);
	free(cfg->text);
	free(cfg->name);
	free(cfg->description);
	free(cfg->uri);
	free(cfg->template_path);
	free(cfg->name_prefix);
	for (size_t i = 0; i < cfg->nprepare; i++)
		argv_free(&cfg->prepare[i]);
	free(cfg->prepare);
	free(cfg->topology.shapes);
	free(cfg->topology.vcpus);
	free(cfg->topology.threads);
	free(cfg->topology.sockets);
	for (size_t i = 0; i < cfg->npinnings; i++) {
		struct pinning *p = &cfg->pinnings[i];
		free(p->name);
		for (size_t j = 0; j < p->nvcpu_cpus; j++)
			free(p->vcpu_cpus[j]);
		free(p->vcpu_cpus);
		free(p->emulator_cpus);
	}
	free(cfg->pinnings);
	for (size_t i = 0; i < cfg->nknobs; i++) {
		for (size_t j = 0; j < cfg->knobs[i].nvalues; j++)
			free(cfg->knobs[i].values[j]);
		free(cfg->knobs[i].values);
		free(cfg->knobs[i].name);
	}
	free(cfg->knobs);
	for (size_t i = 0; i < cfg->nnoises; i++) {
		free(cfg->noises[i].name);
		free(cfg->noises[i].cpus);
		argv_free(&cfg->noises[i].argv);
	}
	free(cfg->noises);
	struct benchmark *b = &cfg->bench;
	argv_free(&b->argv);
	argv_free(&b->server_argv);
	free(b->metric.name);
	free(b->metric.unit);
	free(b->parse_regex);
	for (size_t i = 0; i < b->nparse_groups; i++)
		free(b->parse_groups[i]);
	free(b->parse_groups);
	for (size_t i = 0; i < cfg->nbaseline; i++) {
		free(cfg->baseline[i].factor);
		free(cfg->baseline[i].value);
	}
	free(cfg->baseline);
	free(cfg);
}

/* --- canonical dump ------------------------------------------------------------ */

static void dump_argv(struct strbuf *out, const char *key, const struct argv_list *a)
{
	strbuf_addf(out, "%s: [", key);
	for (size_t i = 0; i < a->argc; i++)
		strbuf_addf(out, "%s\"%s\"", i ? ", " : "", a->argv[i]);
	strbuf_addstr(out, "]\n");
}

static void dump_ints(struct strbuf *out, const char *key, const int *v, size_t n)
{
	strbuf_addf(out, "%s: [", key);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(out, "%s%d", i ? ", " : "", v[i]);
	strbuf_addstr(out, "]\n");
}

void config_dump(const struct sweep_config *cfg, struct strbuf *out)
{
	strbuf_addf(out, "name: %s\n", cfg->name);
	if (cfg->description)
		strbuf_addf(out, "description: %s\n", cfg->description);
	strbuf_addf(out, "libvirt.uri: %s\n", cfg->uri);
	strbuf_addf(out, "libvirt.domain_type: %s\n", domain_type_names[cfg->domain_type]);
	strbuf_addf(out, "libvirt.template: %s\n",
		    cfg->template_path ? cfg->template_path : "builtin");
	strbuf_addf(out, "libvirt.name_prefix: %s\n", cfg->name_prefix);
	strbuf_addf(out, "libvirt.arch: %s\n", arch_names[cfg->arch]);
	strbuf_addf(out, "libvirt.memory_mib: %d\n", cfg->memory_mib);
	strbuf_addf(out, "guest.runner: %s\n", runner_names[cfg->runner]);
	strbuf_addf(out, "guest.boot_timeout: %d\n", cfg->boot_timeout);
	for (size_t i = 0; i < cfg->nprepare; i++) {
		char key[48];
		snprintf(key, sizeof(key), "guest.prepare[%zu]", i);
		dump_argv(out, key, &cfg->prepare[i]);
	}
	strbuf_addf(out, "guest.reuse: %s\n", cfg->reuse_guest ? "true" : "false");
	strbuf_addf(out, "guest.host_baseline: %s\n", cfg->host_baseline ? "true" : "false");
	const struct topology_spec *t = &cfg->topology;
	if (t->generated) {
		dump_ints(out, "topology.vcpus", t->vcpus, t->nvcpus);
		dump_ints(out, "topology.threads", t->threads, t->nthreads);
		if (t->sockets)
			dump_ints(out, "topology.sockets", t->sockets, t->nsockets);
	} else {
		strbuf_addstr(out, "topology: [");
		for (size_t i = 0; i < t->nshapes; i++) {
			char text[64];
			shape_format(&t->shapes[i], text, sizeof(text));
			strbuf_addf(out, "%s%s", i ? ", " : "", text);
		}
		strbuf_addstr(out, "]\n");
	}
	for (size_t i = 0; i < cfg->npinnings; i++) {
		const struct pinning *p = &cfg->pinnings[i];
		strbuf_addf(out, "pinning[%zu]: %s", i, p->name);
		if (p->policy == PIN_EXPLICIT) {
			strbuf_addstr(out, " vcpus=");
			for (size_t j = 0; j < p->nvcpu_cpus; j++)
				strbuf_addf(out, "%s%s", j ? "/" : "", p->vcpu_cpus[j]);
			if (p->emulator_cpus)
				strbuf_addf(out, " emulator=%s", p->emulator_cpus);
		}
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < cfg->nknobs; i++) {
		strbuf_addf(out, "host.%s: [", cfg->knobs[i].name);
		for (size_t j = 0; j < cfg->knobs[i].nvalues; j++)
			strbuf_addf(out, "%s%s", j ? ", " : "", cfg->knobs[i].values[j]);
		strbuf_addstr(out, "]\n");
	}
	for (size_t i = 0; i < cfg->nnoises; i++) {
		const struct noise *z = &cfg->noises[i];
		strbuf_addf(out, "noise[%zu]: %s kind=%s", i, z->name, noise_kind_names[z->kind]);
		if (z->cpus)
			strbuf_addf(out, " cpus=%s", z->cpus);
		if (z->kind == NOISE_SPIN)
			strbuf_addf(out, " threads=%d", z->threads);
		strbuf_addch(out, '\n');
		if (z->argv.argc) {
			char key[48];
			snprintf(key, sizeof(key), "noise[%zu].argv", i);
			dump_argv(out, key, &z->argv);
		}
	}
	const struct benchmark *b = &cfg->bench;
	strbuf_addf(out, "benchmark.kind: %s\n", bench_kind_names[b->kind]);
	dump_argv(out, "benchmark.argv", &b->argv);
	if (b->server_argv.argc)
		dump_argv(out, "benchmark.server_argv", &b->server_argv);
	strbuf_addf(out, "benchmark.duration: %d\n", b->duration);
	strbuf_addf(out, "benchmark.timeout: %d\n", b->timeout);
	strbuf_addf(out, "benchmark.metric: %s %s%s%s\n", b->metric.name,
		    b->metric.higher_is_better ? "higher" : "lower", b->metric.unit ? " " : "",
		    b->metric.unit ? b->metric.unit : "");
	if (b->parse_regex)
		strbuf_addf(out, "benchmark.parse: %s\n", b->parse_regex);
	for (size_t i = 0; i < cfg->nbaseline; i++)
		strbuf_addf(out, "baseline.%s: %s\n", cfg->baseline[i].factor,
			    cfg->baseline[i].value);
	const struct collect *c = &cfg->collect;
	strbuf_addf(out, "collect: gang_exits=%d exit_reasons=%d vcpu_stats=%d buffer_kib=%d "
		    "max_lost_fraction=%g\n", c->gang_exits, c->exit_reasons, c->vcpu_stats,
		    c->buffer_kib, c->max_lost_fraction);
	strbuf_addf(out, "repetitions: %d\n", cfg->repetitions);
	strbuf_addf(out, "order: %s\n", order_names[cfg->order]);
	if (cfg->seed_given)
		strbuf_addf(out, "seed: %llu\n", cfg->seed);
	strbuf_addf(out, "strategy: %s\n", strategy_names[cfg->strategy]);
}
