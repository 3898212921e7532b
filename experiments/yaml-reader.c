/*
 * yaml-reader: a checked YAML reader; see yaml-reader.h.
 *
 * Two passes over libyaml's document: tree_check() looks at the raw node
 * graph once (depth, tags, NULs, alias expansion), then the typed accessors
 * read what the schema asks for.
 */
#include "yaml-reader.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../util/number.h"

/* --- the loader's state and error reporting -------------------------------- */

/*
 * Keeps the YR_MAX_ERRORS errors that come first in the file: the walk
 * follows the schema, not the file, so a later error may displace one
 * found earlier.
 */
static void error_keep(struct yr_reader *L, size_t line, size_t col, char *text)
{
	struct yr_error e = { line, col, L->nfailed++, text };
	if (L->nerrors < YR_MAX_ERRORS) {
		L->errors[L->nerrors++] = e;
		return;
	}
	size_t last = 0;
	for (size_t i = 1; i < L->nerrors; i++) {
		const struct yr_error *a = &L->errors[i], *b = &L->errors[last];
		if (a->line > b->line || (a->line == b->line && a->col > b->col))
			last = i;
	}
	struct yr_error *worst = &L->errors[last];
	if (line < worst->line || (line == worst->line && col < worst->col)) {
		free(worst->text);
		*worst = e;
	} else {
		free(text);
	}
}

/*
 * Records an error at a 0-based line and column (libyaml's marks), shown
 * as people count them; returns -1.
 */
static int yr_fail_at(struct yr_reader *L, size_t line, size_t col, const char *key,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int yr_fail_at(struct yr_reader *L, size_t line, size_t col, const char *key,
		      const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s:%zu:%zu: %s: ", L->path, line + 1, col + 1,
		    *key ? key : "(document)");
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error_keep(L, line, col, strbuf_detach(&sb));
	return -1;
}

static int error_cmp(const void *a, const void *b)
{
	const struct yr_error *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Moves the recorded errors into L->err, in file order; -1 when there are any. */
static int errors_report(struct yr_reader *L)
{
	if (!L->nfailed)
		return 0;
	qsort(L->errors, L->nerrors, sizeof(L->errors[0]), error_cmp);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < L->nerrors; i++) {
		strbuf_addf(&sb, "%s%s", i ? "\n" : "", L->errors[i].text);
		free(L->errors[i].text);
	}
	if (L->nfailed > L->nerrors)
		strbuf_addf(&sb, "\n%s: %zu more errors not shown; fix these first", L->path,
			    L->nfailed - L->nerrors);
	L->nerrors = 0;
	/* A message longer than the buffer is cut at a line end, saying so. */
	size_t room = sizeof(L->err->msg) - 64;
	if (sb.len > room) {
		size_t cut = room;
		while (cut > 0 && sb.buf[cut] != '\n')
			cut--;
		sb.buf[cut] = '\0';
		sb.len = cut;
		strbuf_addf(&sb, "\n%s: more errors not shown; fix these first", L->path);
	}
	err_set(L->err, EXIT_BAD_INPUT, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

int yr_fail(struct yr_reader *L, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	size_t line = n ? n->start_mark.line : 0, col = n ? n->start_mark.column : 0;
	yr_fail_at(L, line, col, key, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

int yr_fail_missing(struct yr_reader *L, const yaml_node_t *n, const char *key,
		    const char *name, const char *fmt, ...)
{
	const char *const wanted[] = { name, NULL };
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     n->type == YAML_MAPPING_NODE && p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yr_node(L, p->key);
		if (k->type != YAML_SCALAR_NODE || !yr_did_you_mean(yr_text(k), wanted))
			continue;
		/* Only a key already reported (as unknown) stands for the missing one. */
		for (size_t i = 0; i < L->nerrors; i++)
			if (L->errors[i].line == k->start_mark.line &&
			    L->errors[i].col == k->start_mark.column)
				return -1;
	}
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	yr_fail(L, n, key, "required key missing%s", strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

/* Appends s to the key in buf, cutting it at YR_KEY_MAX (keys only label messages). */
static void key_append(char *buf, const char *s)
{
	size_t len = strlen(buf), add = strlen(s);
	if (add > YR_KEY_MAX - 1 - len)
		add = YR_KEY_MAX - 1 - len;
	memcpy(buf + len, s, add);
	buf[len + add] = '\0';
}

void yr_key_child(char *buf, const char *parent, const char *name)
{
	buf[0] = '\0';
	key_append(buf, parent);
	if (*parent)
		key_append(buf, ".");
	key_append(buf, name);
}

void yr_key_index(char *buf, const char *parent, size_t i)
{
	char idx[32];
	snprintf(idx, sizeof(idx), "[%zu]", i);
	buf[0] = '\0';
	key_append(buf, parent);
	key_append(buf, idx);
}

yaml_node_t *yr_node(struct yr_reader *L, int index)
{
	return yaml_document_get_node(&L->doc, index);
}

const char *yr_text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A plain empty, ~ or null scalar: YAML's null, which no key accepts. */
bool yr_is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = yr_text(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

/* "a mapping", "a list", "null" or the quoted scalar (shortened). */
const char *yr_describe(const yaml_node_t *n, char *buf, size_t size)
{
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (yr_is_null(n))
		return "nothing (null)";
	const char *s = yr_text(n);
	if (strlen(s) > 40)
		snprintf(buf, size, "'%.37s...'", s);
	else
		snprintf(buf, size, "'%s'", s);
	return buf;
}


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
const char *yr_did_you_mean(const char *s, const char *const *words)
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

bool yr_word_in(const char *s, const char *const *words)
{
	for (size_t i = 0; words[i]; i++)
		if (!strcmp(words[i], s))
			return true;
	return false;
}

void yr_words_join(struct strbuf *sb, const char *const *words)
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
	return a + b > YR_MAX_NODES ? YR_MAX_NODES + 1 : a + b;
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
static int tree_check(struct yr_reader *L, struct tree_state *T, int index, int depth,
		      const char *key, size_t *count)
{
	yaml_node_t *n = yr_node(L, index);
	size_t i = (size_t)index - 1;
	if (T->state[i] == 2) {
		*count = T->expanded[i];
		return 0;
	}
	if (T->state[i] == 1)
		return yr_fail(L, n, key, "an alias refers to a node that contains it; "
			    "remove the recursive alias");
	if (depth > YR_MAX_DEPTH)
		return yr_fail(L, n, key, "nested more than %d levels deep", YR_MAX_DEPTH);
	if (!tag_is_default(n))
		return yr_fail(L, n, key, "tags are not supported (found '%s'); remove the tag",
			    (const char *)n->tag);
	T->state[i] = 1;
	size_t total = 1, sub;
	char child[YR_KEY_MAX];
	if (n->type == YAML_SCALAR_NODE) {
		if (strlen(yr_text(n)) != n->data.scalar.length)
			return yr_fail(L, n, key, "contains a NUL character");
	} else if (n->type == YAML_SEQUENCE_NODE) {
		size_t k = 0;
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++, k++) {
			yr_key_index(child, key, k);
			if (tree_check(L, T, *it, depth + 1, child, &sub) < 0)
				return -1;
			total = add_sat(total, sub);
			if (total > YR_MAX_NODES)
				break;
		}
	} else {
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yr_node(L, p->key);
			yr_key_child(child, key, k->type == YAML_SCALAR_NODE ? yr_text(k) : "?");
			if (tree_check(L, T, p->key, depth + 1, child, &sub) < 0)
				return -1;
			total = add_sat(total, sub);
			if (tree_check(L, T, p->value, depth + 1, child, &sub) < 0)
				return -1;
			total = add_sat(total, sub);
			if (total > YR_MAX_NODES)
				break;
		}
	}
	if (total > YR_MAX_NODES) {
		if (T->nnodes <= YR_MAX_NODES)
			return yr_fail(L, n, key, "aliases expand to too many nodes (more than %d); "
				    "write the values out instead", YR_MAX_NODES);
		return yr_fail(L, n, key, "too many nodes (more than %d)", YR_MAX_NODES);
	}
	T->state[i] = 2;
	T->expanded[i] = total;
	*count = total;
	return 0;
}

static int tree_check_all(struct yr_reader *L)
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

int yr_expect_type(struct yr_reader *L, const yaml_node_t *n, const char *key,
		       yaml_node_type_t type, const char *what)
{
	if (n->type == type && !yr_is_null(n))
		return 0;
	return yr_fail(L, n, key, "expected %s, got %s", what, YR_DESCRIBE(n));
}

/*
 * Checks a mapping: keys are non-empty scalars, none repeated, each one of
 * allowed (NULL-terminated; NULL allows any).  Errors point at the key.
 */
int yr_map_check(struct yr_reader *L, const yaml_node_t *n, const char *key,
		 const char *const *allowed, const char *what)
{
	if (yr_expect_type(L, n, key, YAML_MAPPING_NODE, what) < 0)
		return -1;
	char child[YR_KEY_MAX];
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yr_node(L, p->key);
		if (k->type != YAML_SCALAR_NODE || yr_is_null(k)) {
			yr_fail(L, k, key, "expected a key name, got %s", YR_DESCRIBE(k));
			continue;
		}
		const char *name = yr_text(k);
		yr_key_child(child, key, name);
		bool repeated = false;
		for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p && !repeated; q++) {
			yaml_node_t *prev = yr_node(L, q->key);
			if (prev->type == YAML_SCALAR_NODE && !strcmp(yr_text(prev), name)) {
				yr_fail(L, k, child, "duplicate key '%s' (first at %zu:%zu)", name,
					prev->start_mark.line + 1, prev->start_mark.column + 1);
				repeated = true;
			}
		}
		if (repeated || !allowed)
			continue;
		size_t i;
		for (i = 0; allowed[i]; i++)
			if (!strcmp(allowed[i], name))
				break;
		if (allowed[i])
			continue;
		const char *guess = yr_did_you_mean(name, allowed);
		if (guess) {
			yr_fail(L, k, child, "unknown key '%s' (did you mean '%s'?)", name, guess);
			continue;
		}
		struct strbuf sb = STRBUF_INIT;
		yr_words_join(&sb, allowed);
		yr_fail(L, k, child, "unknown key '%s'; expected one of: %s", name, strbuf_str(&sb));
		strbuf_release(&sb);
	}
	return 0;
}

yaml_node_t *yr_map_get(struct yr_reader *L, const yaml_node_t *n, const char *name)
{
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++)
	{
		yaml_node_t *k = yr_node(L, p->key);
		if (k->type == YAML_SCALAR_NODE && !strcmp(yr_text(k), name))
			return yr_node(L, p->value);
	}
	return NULL;
}

bool yr_map_pair_first(struct yr_reader *L, const yaml_node_t *n, const yaml_node_pair_t *pair)
{
	yaml_node_t *k = yr_node(L, pair->key);
	if (k->type != YAML_SCALAR_NODE || yr_is_null(k))
		return false;
	for (const yaml_node_pair_t *q = n->data.mapping.pairs.start; q < pair; q++) {
		yaml_node_t *prev = yr_node(L, q->key);
		if (prev->type == YAML_SCALAR_NODE && !strcmp(yr_text(prev), yr_text(k)))
			return false;
	}
	return true;
}

/* The key node of name in mapping n (for messages about the key itself). */
yaml_node_t *yr_map_key(struct yr_reader *L, const yaml_node_t *n, const char *name)
{
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++)
	{
		yaml_node_t *k = yr_node(L, p->key);
		if (k->type == YAML_SCALAR_NODE && !strcmp(yr_text(k), name))
			return k;
	}
	return NULL;
}

/* Any non-null scalar, as text (numbers keep the digits written). */
int yr_get_str(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out)
{
	if (n->type != YAML_SCALAR_NODE || yr_is_null(n))
		return yr_fail(L, n, key, "expected a string, got %s%s", YR_DESCRIBE(n),
			    yr_is_null(n) ? "; write \"\" for an empty string" : "");
	free(*out);
	*out = xstrdup(yr_text(n));
	return 0;
}

/* A plain scalar: numbers and booleans written in quotes are strings. */
int yr_get_plain(struct yr_reader *L, const yaml_node_t *n, const char *key,
		     const char *what, const char **out)
{
	if (n->type != YAML_SCALAR_NODE || yr_is_null(n))
		return yr_fail(L, n, key, "expected %s, got %s", what, YR_DESCRIBE(n));
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return yr_fail(L, n, key, "expected %s, got the quoted string %s; remove the quotes",
			    what, YR_DESCRIBE(n));
	*out = yr_text(n);
	return 0;
}

int yr_get_int(struct yr_reader *L, const yaml_node_t *n, const char *key, long long lo,
		   long long hi, int *out)
{
	char what[96];
	snprintf(what, sizeof(what), "an integer %lld..%lld", lo, hi);
	const char *s;
	if (yr_get_plain(L, n, key, what, &s) < 0)
		return -1;
	long long v;
	const char *p = s + (*s == '-' || *s == '+');
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			return yr_fail(L, n, key, "expected %s, got %s", what, YR_DESCRIBE(n));
	if (!*p || !number_parse_ll(s, &v))
		return yr_fail(L, n, key, "expected %s, got %s", what, YR_DESCRIBE(n));
	if (v < lo || v > hi)
		return yr_fail(L, n, key, "%s is out of range; expected %s", s, what);
	*out = (int)v;
	return 0;
}

int yr_get_bool(struct yr_reader *L, const yaml_node_t *n, const char *key, bool *out)
{
	const char *s;
	if (yr_get_plain(L, n, key, "true or false", &s) < 0)
		return -1;
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(s, "false") || !strcasecmp(s, "no")) {
		*out = false;
		return 0;
	}
	return yr_fail(L, n, key, "expected true or false (or yes/no), got %s", YR_DESCRIBE(n));
}

/* One of words (exact); returns its index in *out. */
int yr_get_enum(struct yr_reader *L, const yaml_node_t *n, const char *key,
		    const char *const *words, int *out)
{
	struct strbuf sb = STRBUF_INIT;
	yr_words_join(&sb, words);
	int rc = -1;
	if (n->type != YAML_SCALAR_NODE || yr_is_null(n)) {
		yr_fail(L, n, key, "expected %s, got %s", strbuf_str(&sb), YR_DESCRIBE(n));
		goto out;
	}
	const char *s = yr_text(n);
	for (int i = 0; words[i]; i++)
		if (!strcmp(words[i], s)) {
			*out = i;
			rc = 0;
			goto out;
		}
	const char *guess = yr_did_you_mean(s, words);
	if (guess)
		yr_fail(L, n, key, "expected %s, got %s (did you mean '%s'?)", strbuf_str(&sb),
		     YR_DESCRIBE(n), guess);
	else
		yr_fail(L, n, key, "expected %s, got %s", strbuf_str(&sb), YR_DESCRIBE(n));
out:
	strbuf_release(&sb);
	return rc;
}

/*
 * A name used in keys, domain names and the DB: letters, digits and the
 * extra characters in `extra`, 1..max long.
 */
int yr_get_name(struct yr_reader *L, const yaml_node_t *n, const char *key, size_t max,
		    const char *extra, char **out)
{
	char *s = NULL;
	if (yr_get_str(L, n, key, &s) < 0)
		return -1;
	size_t len = strlen(s);
	bool ok = len >= 1 && len <= max;
	for (const char *p = s; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || strchr(extra, *p);
	if (!ok) {
		free(s);
		return yr_fail(L, n, key, "expected 1..%zu characters from A-Z a-z 0-9 %s, got %s",
			    max, extra, YR_DESCRIBE(n));
	}
	free(*out);
	*out = s;
	return 0;
}

int yr_items(struct yr_reader *L, const yaml_node_t *n, const char *key,
			struct yr_items *f)
{
	f->nodes = NULL;
	f->n = 0;
	f->listed = n->type == YAML_SEQUENCE_NODE;
	if (yr_is_null(n))
		return yr_fail(L, n, key, "expected a value or a list of values, got %s",
			    YR_DESCRIBE(n));
	if (!f->listed) {
		f->nodes = xmalloc(sizeof(*f->nodes));
		f->nodes[0] = (yaml_node_t *)n;
		f->n = 1;
		return 0;
	}
	f->n = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (f->n == 0)
		return yr_fail(L, n, key, "empty factor list; give at least one value");
	if (f->n > YR_MAX_ITEMS)
		return yr_fail(L, n, key, "%zu values in one factor; at most %d", f->n,
			    YR_MAX_ITEMS);
	f->nodes = xcalloc(f->n, sizeof(*f->nodes));
	for (size_t i = 0; i < f->n; i++)
		f->nodes[i] = yr_node(L, n->data.sequence.items.start[i]);
	return 0;
}

void yr_item_key(char *buf, const char *key, const struct yr_items *f, size_t i)
{
	if (f->listed) {
		yr_key_index(buf, key, i);
	} else {
		buf[0] = '\0';
		key_append(buf, key);
	}
}

/* A list of distinct integers lo..hi (a scalar is a one-item list). */
int yr_get_int_list(struct yr_reader *L, const yaml_node_t *n, const char *key, int lo,
			int hi, int **out, size_t *nout)
{
	struct yr_items f;
	if (yr_items(L, n, key, &f) < 0) {
		free(f.nodes);
		return -1;
	}
	int *v = xcalloc(f.n, sizeof(int));
	char child[YR_KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		yr_item_key(child, key, &f, i);
		if (yr_get_int(L, f.nodes[i], child, lo, hi, &v[i]) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (v[j] == v[i]) {
				yr_fail(L, f.nodes[i], child, "duplicate value %d (first at %zu:%zu)",
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

/* --- loading ------------------------------------------------------------------ */

/*
 * libyaml's reader errors carry a byte offset, not a mark: count lines and
 * characters up to it (everything before it decoded, so it is UTF-8).
 */
static int fail_reader(struct yr_reader *L, const yaml_parser_t *p, const char *text, size_t len)
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
		return yr_fail_at(L, line, col, "encoding", "%s at byte 0x%02X; save the "
			       "file as UTF-8 text", p->problem, (unsigned char)text[end]);
	return yr_fail_at(L, line, col, "encoding", "%s; save the file as UTF-8 text",
		       p->problem);
}

static int fail_parser(struct yr_reader *L, const yaml_parser_t *p, const char *text, size_t len)
{
	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return err_set(L->err, EXIT_FAILURE_RUN, "%s: out of memory parsing YAML",
			       L->path);
	case YAML_READER_ERROR:
		return fail_reader(L, p, text, len);
	default:
		if (p->context)
			return yr_fail_at(L, p->problem_mark.line, p->problem_mark.column,
				       "YAML syntax", "%s (%s at %zu:%zu)", p->problem,
				       p->context, p->context_mark.line + 1,
				       p->context_mark.column + 1);
		return yr_fail_at(L, p->problem_mark.line, p->problem_mark.column, "YAML syntax",
			       "%s", p->problem ? p->problem : "invalid YAML");
	}
}

/*
 * Counts anchors, aliases and nodes with libyaml's event parser (linear)
 * before its loader builds the document: the loader looks every anchor
 * and alias up in a list, so 90 000 anchors cost it minutes.  A syntax
 * error ends the count early; the loader then reports it.
 */
static int events_check(struct yr_reader *L, const char *text, size_t len)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return err_set(L->err, EXIT_FAILURE_RUN, "%s: out of memory", L->path);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	size_t anchors = 0, aliases = 0, nodes = 0;
	int rc = 0;
	yaml_event_t ev;
	while (rc == 0 && yaml_parser_parse(&p, &ev)) {
		const yaml_char_t *anchor = NULL;
		if (ev.type == YAML_SCALAR_EVENT)
			anchor = ev.data.scalar.anchor;
		else if (ev.type == YAML_SEQUENCE_START_EVENT)
			anchor = ev.data.sequence_start.anchor;
		else if (ev.type == YAML_MAPPING_START_EVENT)
			anchor = ev.data.mapping_start.anchor;
		if (ev.type == YAML_ALIAS_EVENT)
			aliases++;
		if (anchor || ev.type == YAML_ALIAS_EVENT || ev.type == YAML_SCALAR_EVENT ||
		    ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)
			nodes++;
		if (anchor && ++anchors > YR_MAX_ANCHORS)
			rc = yr_fail_at(L, ev.start_mark.line, ev.start_mark.column, "",
					"more than %d anchors (&%s is one too many); write the "
					"values out instead", YR_MAX_ANCHORS, (const char *)anchor);
		else if (aliases > YR_MAX_ALIASES)
			rc = yr_fail_at(L, ev.start_mark.line, ev.start_mark.column, "",
					"more than %d aliases; write the values out instead",
					YR_MAX_ALIASES);
		else if (nodes > YR_MAX_NODES)
			rc = yr_fail_at(L, ev.start_mark.line, ev.start_mark.column, "",
					"too many nodes (more than %d)", YR_MAX_NODES);
		bool end = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		if (end)
			break;
	}
	yaml_parser_delete(&p);
	return rc;
}

/* Parses the one document of text into L->doc; on success the caller deletes it. */
static int load_one(struct yr_reader *L, const char *text, size_t len, const char *empty_hint)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return err_set(L->err, EXIT_FAILURE_RUN, "%s: out of memory", L->path);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	/* No UTF-16 guessing: the input is UTF-8, anything else is reported. */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	int rc = -1;
	if (!yaml_parser_load(&parser, &L->doc)) {
		fail_parser(L, &parser, text, len);
		goto out;
	}
	if (!yaml_document_get_root_node(&L->doc)) {
		yaml_document_delete(&L->doc);
		yr_fail_at(L, 0, 0, "", "the file is empty; expected %s", empty_hint);
		goto out;
	}
	yaml_document_t second;
	if (!yaml_parser_load(&parser, &second)) {
		yaml_document_delete(&L->doc);
		fail_parser(L, &parser, text, len);
		goto out;
	}
	if (yaml_document_get_root_node(&second)) {
		yr_fail_at(L, second.start_mark.line, second.start_mark.column, "",
			   "a second YAML document; the file holds one document (remove the "
			   "'---' and what follows, or split the file)");
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

int yr_load(struct yr_reader *r, const char *path, const char *text, size_t len,
	    const char *empty_hint, struct ta_err *err)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->err = err;
	/* A byte-order mark says UTF-8 and nothing else; columns count after it. */
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
		text += 3;
		len -= 3;
	}
	if (events_check(r, text, len) < 0 || load_one(r, text, len, empty_hint) < 0) {
		errors_report(r);
		return -1;
	}
	if (tree_check_all(r) < 0) {
		yaml_document_delete(&r->doc);
		errors_report(r);
		return -1;
	}
	return 0;
}

int yr_finish(struct yr_reader *r)
{
	yaml_document_delete(&r->doc);
	return errors_report(r);
}

yaml_node_t *yr_root(struct yr_reader *r)
{
	return yaml_document_get_root_node(&r->doc);
}
