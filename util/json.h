/*
 * json: a small streaming JSON writer onto a strbuf.
 *
 * The writer tracks nesting and commas so callers just say what comes next:
 *
 *	json_obj_begin(w);
 *	json_key(w, "runs"); json_int(w, 12);
 *	json_key(w, "dropped"); json_arr_begin(w); ... json_arr_end(w);
 *	json_obj_end(w);
 *
 * Output is compact unless `pretty` is set (two-space indent).  Strings are
 * escaped per RFC 8259; invalid UTF-8 bytes become U+FFFD so output is always
 * valid JSON.  Non-finite doubles are written as null.
 */
#ifndef TA_JSON_H
#define TA_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"

#define JSON_MAX_DEPTH 64

struct json_writer {
	struct strbuf *out;
	bool pretty;
	int depth;
	bool first[JSON_MAX_DEPTH];	/* no element written yet at this depth */
	bool after_key;
};

void json_init(struct json_writer *w, struct strbuf *out, bool pretty);
void json_obj_begin(struct json_writer *w);
void json_obj_end(struct json_writer *w);
void json_arr_begin(struct json_writer *w);
void json_arr_end(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);
void json_str(struct json_writer *w, const char *s);	/* NULL -> null */
void json_int(struct json_writer *w, int64_t v);
void json_uint(struct json_writer *w, uint64_t v);
void json_double(struct json_writer *w, double v);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);
/* An interval [lo, hi] as a two-number array, or null when either end is
 * undefined (NaN or infinite). */
void json_interval(struct json_writer *w, double lo, double hi);
/* Inserts already-valid JSON text (e.g. a stored JSON column) as a value. */
void json_raw(struct json_writer *w, const char *json);

/* Appends s to out as a quoted, escaped JSON string. */
void json_escape(struct strbuf *out, const char *s);

/*
 * How many bytes that are not UTF-8 this process's JSON strings have had
 * replaced by U+FFFD so far (stored benchmark output is kept as written),
 * for a note where the output is printed (advisor/cmd.c).
 */
size_t json_replaced_bytes(void);

#endif
