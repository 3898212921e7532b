/* json: streaming JSON writer; see json.h. */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(struct json_writer *w, struct strbuf *out, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pretty = pretty;
	w->first[0] = true;
}

static void newline_indent(struct json_writer *w)
{
	if (!w->pretty)
		return;
	strbuf_addch(w->out, '\n');
	for (int i = 0; i < w->depth; i++)
		strbuf_addstr(w->out, "  ");
}

/* Writes the separator a new value needs at the current position. */
static void before_value(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth])
			strbuf_addch(w->out, ',');
		newline_indent(w);
	}
	w->first[w->depth] = false;
}

static void open_scope(struct json_writer *w, char c)
{
	before_value(w);
	strbuf_addch(w->out, c);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_scope(struct json_writer *w, char c)
{
	bool empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (!empty)
		newline_indent(w);
	strbuf_addch(w->out, c);
}

void json_obj_begin(struct json_writer *w) { open_scope(w, '{'); }
void json_obj_end(struct json_writer *w) { close_scope(w, '}'); }
void json_arr_begin(struct json_writer *w) { open_scope(w, '['); }
void json_arr_end(struct json_writer *w) { close_scope(w, ']'); }

void json_key(struct json_writer *w, const char *key)
{
	before_value(w);
	json_escape(w->out, key);
	strbuf_addstr(w->out, w->pretty ? ": " : ":");
	w->after_key = true;
}

/* Bytes replaced by U+FFFD (json_replaced_bytes); one process writes its output once. */
static size_t replaced_bytes;

size_t json_replaced_bytes(void)
{
	return replaced_bytes;
}

void json_escape(struct strbuf *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	strbuf_addch(out, '"');
	while (*s) {
		unsigned char c = *s;
		switch (c) {
		case '"': strbuf_addstr(out, "\\\""); s++; continue;
		case '\\': strbuf_addstr(out, "\\\\"); s++; continue;
		case '\n': strbuf_addstr(out, "\\n"); s++; continue;
		case '\r': strbuf_addstr(out, "\\r"); s++; continue;
		case '\t': strbuf_addstr(out, "\\t"); s++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			strbuf_addf(out, "\\u%04x", c);
			s++;
			continue;
		}
		uint32_t cp;
		size_t n = strbuf_utf8_len((const char *)s, SIZE_MAX, &cp);
		if (n == 0) {
			strbuf_addstr(out, "\\ufffd");
			replaced_bytes++;
			s++;
			continue;
		}
		/* C1 controls (CSI is U+009B) act on terminals that show the JSON. */
		if (cp >= 0x80 && cp < 0xa0) {
			strbuf_addf(out, "\\u%04x", (unsigned)cp);
			s += n;
			continue;
		}
		strbuf_add(out, s, n);
		s += n;
	}
	strbuf_addch(out, '"');
}

void json_str(struct json_writer *w, const char *s)
{
	if (!s) {
		json_null(w);
		return;
	}
	before_value(w);
	json_escape(w->out, s);
}

void json_int(struct json_writer *w, int64_t v)
{
	before_value(w);
	strbuf_addf(w->out, "%" PRId64, v);
}

void json_uint(struct json_writer *w, uint64_t v)
{
	before_value(w);
	strbuf_addf(w->out, "%" PRIu64, v);
}

void json_interval(struct json_writer *w, double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi)) {
		json_null(w);
		return;
	}
	json_arr_begin(w);
	json_double(w, lo);
	json_double(w, hi);
	json_arr_end(w);
}

void json_double(struct json_writer *w, double v)
{
	before_value(w);
	if (!isfinite(v)) {
		strbuf_addstr(w->out, "null");
		return;
	}
	/* %.17g round-trips; trim to the shortest form that still does. */
	char buf[64];
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	strbuf_addstr(w->out, buf);
}

void json_bool(struct json_writer *w, bool v)
{
	before_value(w);
	strbuf_addstr(w->out, v ? "true" : "false");
}

void json_null(struct json_writer *w)
{
	before_value(w);
	strbuf_addstr(w->out, "null");
}

void json_raw(struct json_writer *w, const char *json)
{
	if (!json || !*json) {
		json_null(w);
		return;
	}
	before_value(w);
	strbuf_addstr(w->out, json);
}
