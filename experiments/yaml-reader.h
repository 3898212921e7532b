/*
 * yaml-reader (prefix yr_): a checked reader for YAML documents, with no
 * knowledge of what the document means.  The sweep schema (config.c) is
 * built on it.
 *
 * yr_load() first counts anchors, aliases and nodes with libyaml's event
 * parser, so that no input makes libyaml's loader (which looks anchors up
 * in a list) take long; then parses one document with the document API and
 * checks the raw node graph once: nesting depth, tags, NUL characters, and
 * how many nodes the document expands to once aliases are followed, so an
 * alias bomb is refused before anything walks it.  The accessors then read typed
 * values (strings, bounded integers, booleans, enums with did-you-mean,
 * names, lists), and every error names FILE:LINE:COLUMN, the dotted key
 * ("noise[2].argv[3]") and what was expected.
 *
 * Errors: an accessor that fails calls yr_fail() and returns -1.  yr_fail
 * records the error and the walk goes on, so that one pass finds every
 * error of a file; yr_finish() then puts them in the caller's struct ta_err
 * (EXIT_BAD_INPUT), in file order, one "FILE:LINE:COL: KEY: what" per line.
 * At most YR_MAX_ERRORS are kept (the first ones in the file) and a last
 * line counts the rest.  Errors of the YAML syntax and of the node graph
 * (yr_load) stop at the first: nothing after them can be trusted.
 */
#ifndef TA_YAML_READER_H
#define TA_YAML_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "../util/err.h"
#include "../util/strbuf.h"

/* Bounds on the node graph, generous for any real document. */
#define YR_MAX_NODES 100000
#define YR_MAX_DEPTH 64
#define YR_MAX_ANCHORS 1000
#define YR_MAX_ALIASES 10000
/* Room for a dotted key path such as "noise[2].argv[3]". */
#define YR_KEY_MAX 256
/* A list beyond this is a typo or a generated file gone wrong. */
#define YR_MAX_ITEMS 1024

/* The errors one pass reports at most. */
#define YR_MAX_ERRORS 20

struct yr_error {
	size_t line, col;	/* 0-based, as libyaml's marks */
	size_t seq;		/* order of discovery, to keep ties stable */
	char *text;
};

struct yr_reader {
	yaml_document_t doc;
	const char *path;	/* named in messages */
	struct ta_err *err;
	struct yr_error errors[YR_MAX_ERRORS];	/* the first in the file */
	size_t nerrors;		/* kept in errors[] */
	size_t nfailed;		/* reported so far, kept or not */
};

/*
 * Reads the one document of text (len bytes, UTF-8, a leading byte-order
 * mark skipped) and checks its node graph.  Refuses empty input (saying
 * `empty_hint`: what the document should hold) and a second document, with
 * the error in err.  On success the caller walks it and ends with
 * yr_finish().
 */
int yr_load(struct yr_reader *r, const char *path, const char *text, size_t len,
	    const char *empty_hint, struct ta_err *err);
/*
 * Ends the walk: 0 when nothing failed, else -1 with every recorded error
 * in the ta_err given to yr_load.  Then deletes the document.
 */
int yr_finish(struct yr_reader *r);
yaml_node_t *yr_root(struct yr_reader *r);

/* ---- errors ------------------------------------------------------------ */

/* Records an error at node n (NULL: the start of the file); returns -1. */
int yr_fail(struct yr_reader *L, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Records "required key missing" and the rest (printf-style) at mapping n
 * for its key `name` (key: the dotted path), unless a key of n that was
 * reported already (as unknown) is a likely misspelling of name: its "did
 * you mean" says what is wrong.  Returns -1.
 */
int yr_fail_missing(struct yr_reader *L, const yaml_node_t *n, const char *key,
		    const char *name, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Appends words (NULL-terminated) as "a, b or c", the way messages list choices. */
void yr_words_join(struct strbuf *sb, const char *const *words);

/* ---- keys and nodes ----------------------------------------------------- */

/* buf (YR_KEY_MAX) = "parent.name" (or "name" at the top); cut at YR_KEY_MAX. */
void yr_key_child(char *buf, const char *parent, const char *name);
/* buf (YR_KEY_MAX) = "parent[i]". */
void yr_key_index(char *buf, const char *parent, size_t i);

yaml_node_t *yr_node(struct yr_reader *L, int index);
/* A scalar's text. */
const char *yr_text(const yaml_node_t *n);
/* A plain empty, ~ or null scalar: YAML's null, which no key accepts. */
bool yr_is_null(const yaml_node_t *n);
/* "a mapping", "a list", "nothing (null)" or the quoted scalar (shortened). */
const char *yr_describe(const yaml_node_t *n, char *buf, size_t size);
#define YR_DESCRIBE(n) yr_describe((n), (char[64]){ 0 }, 64)

/* The closest of words (NULL-terminated) to s when close enough to be a typo, else NULL. */
const char *yr_did_you_mean(const char *s, const char *const *words);
/* Whether s is one of words (NULL-terminated), exactly. */
bool yr_word_in(const char *s, const char *const *words);

/* ---- typed accessors: 0, or -1 after yr_fail() --------------------------- */

int yr_expect_type(struct yr_reader *L, const yaml_node_t *n, const char *key,
		   yaml_node_type_t type, const char *what);
/*
 * Checks a mapping: keys are non-empty scalars, none repeated, each one of
 * allowed (NULL-terminated; NULL allows any), with a did-you-mean for an
 * unknown one; every bad key is reported, at the key.  -1 only when n is
 * not a mapping: after bad keys the caller still reads the good ones.
 */
int yr_map_check(struct yr_reader *L, const yaml_node_t *n, const char *key,
		 const char *const *allowed, const char *what);
/* The value of key name in mapping n, or NULL. */
yaml_node_t *yr_map_get(struct yr_reader *L, const yaml_node_t *n, const char *name);
/*
 * True when pair (of mapping n) has a scalar key that no earlier pair has:
 * the one yr_map_get finds.  For walking every pair after yr_map_check.
 */
bool yr_map_pair_first(struct yr_reader *L, const yaml_node_t *n, const yaml_node_pair_t *pair);
/* The key node of name in mapping n (for messages about the key itself), or NULL. */
yaml_node_t *yr_map_key(struct yr_reader *L, const yaml_node_t *n, const char *name);

/* Any non-null scalar as text (numbers keep the digits written); replaces *out. */
int yr_get_str(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out);
/* A plain (unquoted) scalar: numbers and booleans written in quotes are strings. */
int yr_get_plain(struct yr_reader *L, const yaml_node_t *n, const char *key,
		 const char *what, const char **out);
/* A plain decimal integer lo..hi. */
int yr_get_int(struct yr_reader *L, const yaml_node_t *n, const char *key, long long lo,
	       long long hi, int *out);
/* true/false or yes/no, any case. */
int yr_get_bool(struct yr_reader *L, const yaml_node_t *n, const char *key, bool *out);
/* One of words (exact); its index in *out. */
int yr_get_enum(struct yr_reader *L, const yaml_node_t *n, const char *key,
		const char *const *words, int *out);
/* 1..max characters from letters, digits and `extra`; replaces *out. */
int yr_get_name(struct yr_reader *L, const yaml_node_t *n, const char *key, size_t max,
		const char *extra, char **out);

/*
 * A list, or a single scalar/mapping standing for a one-item list (at most
 * YR_MAX_ITEMS).  Fills items->nodes (malloc'd; free it, also after a
 * failure); yr_item_key() names item i as key[i] for a list, key itself for
 * the single form.
 */
struct yr_items {
	yaml_node_t **nodes;
	size_t n;
	bool listed;
};
int yr_items(struct yr_reader *L, const yaml_node_t *n, const char *key, struct yr_items *f);
void yr_item_key(char *buf, const char *key, const struct yr_items *f, size_t i);
/* A list of distinct integers lo..hi (a scalar is a one-item list); *out malloc'd. */
int yr_get_int_list(struct yr_reader *L, const yaml_node_t *n, const char *key, int lo,
		    int hi, int **out, size_t *nout);

#endif
