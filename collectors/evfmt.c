/* evfmt: the decoder's event table from a trace's formats; see evfmt.h. */
#include "evfmt.h"

#include <stdio.h>
#include <string.h>

#include "../util/bcur.h"

static int span_fail(const struct bcur *s, struct ta_err *err, const char *what)
{
	return err_set(err, EXIT_BAD_INPUT,
		       "truncated or corrupted event formats: %s runs past the end of the "
		       "tracing data (at offset %llu)", what, (unsigned long long)bcur_offset(s));
}

/* Skips size_bytes-long length + that many bytes. */
static int span_skip_sized(struct bcur *s, int size_bytes, struct ta_err *err, const char *what)
{
	uint64_t n = bcur_num(s, size_bytes);
	if (!bcur_bytes(s, n))
		return span_fail(s, err, what);
	return 0;
}

int evfmt_header_part(struct bcur *s, const char *tag, const unsigned char **data, size_t *len,
		      struct ta_err *err)
{
	size_t n = strlen(tag) + 1;
	const unsigned char *t = bcur_bytes(s, n);
	if (!t)
		return span_fail(s, err, tag);
	if (memcmp(t, tag, n))
		return err_set(err, EXIT_BAD_INPUT, "corrupted event formats: no %s at offset %llu",
			       tag, (unsigned long long)(bcur_offset(s) - n));
	*len = bcur_num(s, 8);
	if (!(*data = bcur_bytes(s, *len)))
		return span_fail(s, err, tag);
	return 0;
}

int evfmt_scan(const unsigned char *p, size_t len, uint64_t base, struct evfmt_layout *out,
	       struct ta_err *err)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct bcur s = { .p = p, .len = len, .base = base };
	memset(out, 0, sizeof(*out));
	const unsigned char *m = bcur_bytes(&s, sizeof(magic));
	if (!m)
		return span_fail(&s, err, "the magic");
	if (memcmp(m, magic, sizeof(magic)))
		return err_set(err, EXIT_BAD_INPUT,
			       "corrupted tracing data: bad magic at offset %llu",
			       (unsigned long long)base);
	const char *ver = bcur_str(&s);
	const unsigned char *eb = bcur_bytes(&s, 2);
	if (!ver || !eb)
		return span_fail(&s, err, "the header");
	out->big_endian = s.big_endian = eb[0] != 0;
	out->long_size = eb[1];
	out->page_size = (uint32_t)bcur_num(&s, 4);
	if (s.bad)
		return span_fail(&s, err, "the header");
	if (out->long_size != 4 && out->long_size != 8)
		return err_set(err, EXIT_BAD_INPUT, "corrupted tracing data: long size %d "
			       "(at offset %llu)", out->long_size,
			       (unsigned long long)(base + s.pos - 5));
	if (out->page_size < 1024 || out->page_size > (1u << 20) ||
	    (out->page_size & (out->page_size - 1)))
		return err_set(err, EXIT_BAD_INPUT, "corrupted tracing data: page size %u "
			       "(at offset %llu)", out->page_size,
			       (unsigned long long)(base + s.pos - 4));

	const unsigned char *header_event;
	size_t header_event_len;
	if (evfmt_header_part(&s, "header_page", &out->header_page, &out->header_page_len,
			      err) < 0 ||
	    evfmt_header_part(&s, "header_event", &header_event, &header_event_len, err) < 0)
		return -1;

	uint64_t n = bcur_num(&s, 4);
	for (uint64_t i = 0; i < n && !s.bad; i++)
		if (span_skip_sized(&s, 8, err, "the ftrace event formats"))
			return -1;
	if (s.bad)
		return span_fail(&s, err, "the ftrace event formats");

	size_t events_start = s.pos;
	uint64_t nsys = bcur_num(&s, 4);
	for (uint64_t k = 0; k < nsys && !s.bad; k++) {
		bcur_str(&s);
		uint64_t nev = bcur_num(&s, 4);
		for (uint64_t i = 0; i < nev && !s.bad; i++)
			if (span_skip_sized(&s, 8, err, "the event formats"))
				return -1;
	}
	if (s.bad)
		return span_fail(&s, err, "the event formats");
	out->events = p + events_start;
	out->events_len = s.pos - events_start;

	if (span_skip_sized(&s, 4, err, "kallsyms") ||
	    span_skip_sized(&s, 4, err, "the printk formats"))
		return -1;
	/* Version 0.5 layouts end here; later ones (perf's 0.6, trace-cmd's 6) add the
	 * saved command lines. */
	if (strcmp(ver, "0.5")) {
		uint64_t clen = bcur_num(&s, 8);
		const unsigned char *c = bcur_bytes(&s, clen);
		if (!c)
			return span_fail(&s, err, "the saved command lines");
		out->cmdlines = (const char *)c;
		out->cmdlines_len = clen;
	}
	out->end = s.pos;
	return 0;
}

const char *const evfmt_events[EVFMT_NEVENTS][2] = {
	[EVFMT_RUN_CORE] = { "kvm_hv", "kvmppc_run_core" },
	[EVFMT_GUEST_EXIT] = { "kvm_hv", "kvm_guest_exit" },
	[EVFMT_KVM_EXIT] = { "kvm", "kvm_exit" },
	[EVFMT_USERSPACE_EXIT] = { "kvm", "kvm_userspace_exit" },
};

/* Fields past this offset cannot be in a record (a page is at most 1 MiB, a record far less). */
#define FIELD_END_MAX 65536

void evfmt_table_init(struct evfmt_table *t, bool big_endian, int long_size, uint32_t page_size)
{
	memset(t, 0, sizeof(*t));
	t->big_endian = big_endian;
	t->long_size = long_size;
	t->page_size = page_size;
}

/* One line of text at *p (before end): [line, eol); *p moves past it. */
static size_t next_line(const char **p, const char *end, const char **line)
{
	const char *nl = memchr(*p, '\n', end - *p), *eol = nl ? nl : end;
	*line = *p;
	*p = nl ? nl + 1 : end;
	return eol - *line;
}

static bool is_ident(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A decimal number of [s, s + n) after optional blanks, or -1 (none, or above INT32_MAX). */
static long long parse_uint(const char *s, size_t n, size_t *used)
{
	size_t i = 0;
	long long v = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t digits = i;
	while (i < n && s[i] >= '0' && s[i] <= '9' && v <= INT32_MAX)
		v = v * 10 + (s[i++] - '0');
	*used = i;
	return i > digits && v <= INT32_MAX ? v : -1;
}

/*
 * A field line, "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" after blanks
 * (header_page writes "field: DECL"): 1 and *f filled, 0 when the line is
 * not a field line, -1 when it is a malformed one.  The field's name is the
 * last identifier of DECL, before an array suffix ("char comm[16]").
 */
static int parse_field(const char *line, size_t len, struct evfmt_field *f)
{
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (len - i < 6 || memcmp(line + i, "field:", 6))
		return 0;
	i += 6;
	const char *decl = line + i, *semi = memchr(decl, ';', len - i);
	if (!semi)
		return -1;
	size_t dlen = semi - decl;
	while (dlen && (decl[dlen - 1] == ' ' || decl[dlen - 1] == '\t'))
		dlen--;
	if (dlen && decl[dlen - 1] == ']') {
		const char *open = NULL;
		for (size_t k = dlen; k-- > 0;)
			if (decl[k] == '[') {
				open = decl + k;
				break;
			}
		if (!open)
			return -1;
		dlen = open - decl;
	}
	size_t nstart = dlen;
	while (nstart && is_ident(decl[nstart - 1]))
		nstart--;
	if (nstart == dlen || dlen - nstart >= EVFMT_NAME_MAX)
		return -1;
	memset(f, 0, sizeof(*f));
	memcpy(f->name, decl + nstart, dlen - nstart);
	long long offset = -1, size = -1, sign = 0;
	for (i = semi - line + 1; i < len;) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		const char *key = line + i, *colon = memchr(key, ':', len - i);
		if (!colon)
			return -1;
		size_t used;
		long long v = parse_uint(colon + 1, line + len - colon - 1, &used);
		const char *after = colon + 1 + used;
		if (v < 0 || after >= line + len || *after != ';')
			return -1;
		size_t klen = colon - key;
		if (klen == 6 && !memcmp(key, "offset", 6))
			offset = v;
		else if (klen == 4 && !memcmp(key, "size", 4))
			size = v;
		else if (klen == 6 && !memcmp(key, "signed", 6))
			sign = v;
		i = after + 1 - line;
	}
	if (offset < 0 || size < 0 || offset + size > FIELD_END_MAX)
		return -1;
	f->offset = (int)offset;
	f->size = (int)size;
	f->is_signed = sign != 0;
	return 1;
}

const struct evfmt_field *evfmt_event_field(const struct evfmt_event *e, const char *name)
{
	for (int i = 0; i < e->nfields; i++)
		if (!strcmp(e->fields[i].name, name))
			return &e->fields[i];
	return NULL;
}

/* Appends the field lines of [p, end) to e; fields named twice are an error. */
static int parse_fields(const char *p, const char *end, struct evfmt_event *e, const char *what,
			struct ta_err *err)
{
	while (p < end) {
		const char *line;
		size_t len = next_line(&p, end, &line);
		struct evfmt_field f;
		int rc = parse_field(line, len, &f);
		if (rc == 0)
			continue;
		if (rc < 0)
			return err_set(err, EXIT_BAD_INPUT, "corrupted format of %s: the field line "
				       "'%.*s' is malformed", what, (int)(len > 80 ? 80 : len), line);
		if (evfmt_event_field(e, f.name))
			return err_set(err, EXIT_BAD_INPUT, "corrupted format of %s: field '%s' "
				       "appears twice", what, f.name);
		if (e->nfields == EVFMT_MAX_FIELDS)
			return err_set(err, EXIT_BAD_INPUT, "corrupted format of %s: over %d fields",
				       what, EVFMT_MAX_FIELDS);
		e->fields[e->nfields++] = f;
	}
	return 0;
}

int evfmt_table_header_page(struct evfmt_table *t, const char *text, size_t len,
			    struct ta_err *err)
{
	if (!text || !len)
		return err_set(err, EXIT_BAD_INPUT, "the trace has no ring-buffer page header format "
			       "(a kernel before 2.6.31 wrote it): not supported");
	struct evfmt_event h = { 0 };
	if (parse_fields(text, text + len, &h, "the page header", err) < 0)
		return -1;
	const struct evfmt_field *ts = evfmt_event_field(&h, "timestamp"),
				 *commit = evfmt_event_field(&h, "commit"),
				 *data = evfmt_event_field(&h, "data");
	if (!ts || !commit || !data || ts->offset != 0 || ts->size != 8 || commit->offset != 8 ||
	    (commit->size != 4 && commit->size != 8) || data->offset != 8 + commit->size)
		return err_set(err, EXIT_BAD_INPUT, "corrupted or unknown ring-buffer page header "
			       "format: expected a u64 timestamp at 0, a 4- or 8-byte commit at 8 "
			       "and the data right after");
	t->commit_size = commit->size;
	return 0;
}

/* Which of evfmt_events sys and a format's "name: " line name, or -1. */
static int event_index(const char *sys, const char *line, size_t len)
{
	if (len < 6 || memcmp(line, "name: ", 6))
		return -1;
	for (int i = 0; i < EVFMT_NEVENTS; i++)
		if (!strcmp(sys, evfmt_events[i][0]) && strlen(evfmt_events[i][1]) == len - 6 &&
		    !memcmp(line + 6, evfmt_events[i][1], len - 6))
			return i;
	return -1;
}

int evfmt_table_event(struct evfmt_table *t, const char *sys, const char *text, size_t len,
		      struct ta_err *err)
{
	const char *p = text, *end = text + len, *line;
	size_t n = next_line(&p, end, &line);
	int which = event_index(sys, line, n);
	if (which < 0)
		return 0;
	struct evfmt_event *e = &t->events[which];
	if (e->present)
		return 1;
	char what[96];
	snprintf(what, sizeof(what), "%s/%s", sys, evfmt_events[which][1]);
	n = next_line(&p, end, &line);
	size_t used;
	long long id = n > 3 && !memcmp(line, "ID:", 3) ? parse_uint(line + 3, n - 3, &used) : -1;
	if (id < 0 || 3 + used != n)
		return err_set(err, EXIT_BAD_INPUT, "corrupted format of %s: no valid ID line", what);
	for (int i = 0; i < EVFMT_NEVENTS; i++)
		if (t->events[i].present && t->events[i].id == id)
			return err_set(err, EXIT_BAD_INPUT, "corrupted formats: %s and %s/%s both "
				       "have ID %lld", what, evfmt_events[i][0], evfmt_events[i][1],
				       id);
	struct evfmt_event parsed = { .present = true, .id = (int)id };
	if (parse_fields(p, end, &parsed, what, err) < 0)
		return -1;
	*e = parsed;
	return 1;
}

static bool system_wanted(const char *sys)
{
	for (int i = 0; i < EVFMT_NEVENTS; i++)
		if (!strcmp(sys, evfmt_events[i][0]))
			return true;
	return false;
}

int evfmt_table_build(const struct evfmt_layout *l, struct evfmt_table *t, struct ta_err *err)
{
	evfmt_table_init(t, l->big_endian, l->long_size, l->page_size);
	if (evfmt_table_header_page(t, (const char *)l->header_page, l->header_page_len, err) < 0)
		return -1;
	struct bcur s = { .p = l->events, .len = l->events_len, .big_endian = l->big_endian };
	uint64_t nsys = l->events ? bcur_num(&s, 4) : 0;
	for (uint64_t k = 0; k < nsys && !s.bad; k++) {
		const char *sys = bcur_str(&s);
		uint64_t nev = bcur_num(&s, 4);
		bool ours = sys && system_wanted(sys);
		for (uint64_t i = 0; i < nev && !s.bad; i++) {
			uint64_t size = bcur_num(&s, 8);
			const unsigned char *text = bcur_bytes(&s, size);
			if (ours && text && evfmt_table_event(t, sys, (const char *)text, size, err) < 0)
				return -1;
		}
	}
	if (s.bad)
		return err_set(err, EXIT_BAD_INPUT, "truncated or corrupted event formats");
	return 0;
}

bool evfmt_has_event_id(const struct evfmt_layout *l, uint64_t id)
{
	struct bcur s = { .p = l->events, .len = l->events_len, .big_endian = l->big_endian };
	uint64_t nsys = l->events ? bcur_num(&s, 4) : 0;
	for (uint64_t k = 0; k < nsys && !s.bad; k++) {
		bcur_str(&s);
		uint64_t nev = bcur_num(&s, 4);
		for (uint64_t i = 0; i < nev && !s.bad; i++) {
			uint64_t size = bcur_num(&s, 8);
			const char *text = (const char *)bcur_bytes(&s, size), *line;
			if (!text)
				break;
			const char *p = text, *end = text + size;
			next_line(&p, end, &line);
			size_t n = next_line(&p, end, &line), used;
			if (n > 3 && !memcmp(line, "ID:", 3) &&
			    parse_uint(line + 3, n - 3, &used) == (long long)id && 3 + used == n)
				return true;
		}
	}
	return false;
}

void evfmt_event_ids(const struct evfmt_layout *l, uint64_t *known)
{
	memset(known, 0, EVFMT_ID_WORDS * sizeof(*known));
	known[0] = 0xfffffffeu;		/* 1-31 */
	struct bcur s = { .p = l->events, .len = l->events_len, .big_endian = l->big_endian };
	uint64_t nsys = l->events ? bcur_num(&s, 4) : 0;
	for (uint64_t k = 0; k < nsys && !s.bad; k++) {
		bcur_str(&s);
		uint64_t nev = bcur_num(&s, 4);
		for (uint64_t i = 0; i < nev && !s.bad; i++) {
			uint64_t size = bcur_num(&s, 8);
			const char *text = (const char *)bcur_bytes(&s, size), *line;
			if (!text)
				break;
			const char *p = text, *end = text + size;
			next_line(&p, end, &line);
			size_t n = next_line(&p, end, &line), used;
			long long id = n > 3 && !memcmp(line, "ID:", 3)
					       ? parse_uint(line + 3, n - 3, &used) : -1;
			if (id >= 0 && id < 65536 && 3 + used == n)
				known[id / 64] |= 1ull << (id % 64);
		}
	}
}

/* Whether a and b (n and m bytes) have the same length and differ in 1..most bytes. */
static bool near_miss(const char *a, size_t n, const char *b, size_t m, int most)
{
	if (n != m)
		return false;
	int diff = 0;
	for (size_t i = 0; i < n && diff <= most; i++)
		diff += a[i] != b[i];
	return diff >= 1 && diff <= most;
}

/* Whether sys is a KVM system of evfmt_events, or a byte from one (a damaged name). */
static bool kvm_system(const char *sys)
{
	for (int i = 0; i < EVFMT_NEVENTS; i++)
		if (!strcmp(sys, evfmt_events[i][0]) ||
		    near_miss(sys, strlen(sys), evfmt_events[i][0], strlen(evfmt_events[i][0]), 1))
			return true;
	return false;
}

/* What is wrong with one format of a KVM system (text, size bytes), into why; false: nothing. */
static bool format_damaged(const struct evfmt_table *t, const char *sys, const char *text,
			   size_t size, char *why, size_t len)
{
	const char *p = text, *end = text + size, *line;
	size_t n = next_line(&p, end, &line);
	size_t name_len = n > 6 && !memcmp(line, "name: ", 6) ? n - 6 : 0;
	const char *name = line + 6;
	for (size_t i = 0; i < name_len; i++)
		if (!is_ident(name[i]))
			name_len = 0;
	if (!name_len) {
		snprintf(why, len, "a format of system %s has no valid name line ('%.*s')", sys,
			 (int)(n < 40 ? n : 40), line);
		return true;
	}
	n = next_line(&p, end, &line);
	size_t used;
	long long id = n > 3 && !memcmp(line, "ID:", 3) ? parse_uint(line + 3, n - 3, &used) : -1;
	if (id < 0 || 3 + used != n) {
		snprintf(why, len, "the format of %s/%.*s has no valid ID line", sys,
			 (int)name_len, name);
		return true;
	}
	for (int i = 0; i < EVFMT_NEVENTS; i++) {
		const char *s0 = evfmt_events[i][0], *n0 = evfmt_events[i][1];
		size_t sl = strlen(sys), s0l = strlen(s0), n0l = strlen(n0);
		bool same_sys = sl == s0l && !memcmp(sys, s0, sl);
		bool same_name = name_len == n0l && !memcmp(name, n0, n0l);
		int sys_diff = same_sys ? 0 : near_miss(sys, sl, s0, s0l, 1) ? 1 : 3;
		if (t->events[i].present || (same_sys && same_name) || sys_diff > 1 ||
		    !(same_name || near_miss(name, name_len, n0, n0l, 2 - sys_diff)))
			continue;
		snprintf(why, len, "the format of ID %lld is named %s/%.*s, a byte or two from "
			 "%s/%s, which the file lacks: a damaged name", id, sys, (int)name_len,
			 name, s0, n0);
		return true;
	}
	return false;
}

int evfmt_formats_damage(const struct evfmt_layout *l, const struct evfmt_table *t, char *why,
			 size_t len)
{
	int damaged = 0;
	why[0] = '\0';
	struct bcur s = { .p = l->events, .len = l->events_len, .big_endian = l->big_endian };
	uint64_t nsys = l->events ? bcur_num(&s, 4) : 0;
	for (uint64_t k = 0; k < nsys && !s.bad; k++) {
		const char *sys = bcur_str(&s);
		uint64_t nev = bcur_num(&s, 4);
		bool kvm = sys && kvm_system(sys);
		for (uint64_t i = 0; i < nev && !s.bad; i++) {
			uint64_t size = bcur_num(&s, 8);
			const char *text = (const char *)bcur_bytes(&s, size);
			if (kvm && text && format_damaged(t, sys, text, size, damaged ? NULL : why,
							  damaged ? 0 : len))
				damaged++;
		}
	}
	return damaged;
}

const char *evfmt_comm(const char *text, size_t len, int32_t pid, char *buf, size_t buflen)
{
	const char *p = text, *end = text ? text + len : NULL;
	while (p && p < end) {
		const char *line;
		size_t n = next_line(&p, end, &line);
		const char *eol = line + n;
		/* "PID COMM": the number by hand, sscanf costs more than the whole read. */
		int64_t v = 0;
		const char *q = line;
		while (q < eol && *q >= '0' && *q <= '9' && v <= INT32_MAX)
			v = v * 10 + (*q++ - '0');
		if (q > line && q < eol && *q == ' ' && v == pid) {
			snprintf(buf, buflen, "%.*s", (int)(eol - q - 1), q + 1);
			return buf;
		}
	}
	return NULL;
}
