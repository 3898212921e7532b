/*
 * benchparse: the entry point, the helpers every parser shares (lines,
 * C-locale numbers, metrics, error excerpts) and the command kind's
 * named-group regex (PCRE2).  The per-benchmark parsers are collectors/parse-*.c.
 */
#include "benchparse-int.h"

#include <assert.h>
#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../util/mono.h"

/* ---- lines ---- */

static void text_split(struct bp_text *t, const char *s, size_t len)
{
	t->buf = xmalloc(len + 1);
	if (len)
		memcpy(t->buf, s, len);
	t->buf[len] = '\0';
	size_t alloc = 16;
	t->line = xmalloc(alloc * sizeof(*t->line));
	t->nlines = 0;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = t->buf[i];
		if (i < len && c != '\n' && c != '\r' && c != '\0')
			continue;
		t->buf[i] = '\0';
		if (i > start) {
			if (t->nlines == alloc) {
				alloc *= 2;
				t->line = xrealloc(t->line, alloc * sizeof(*t->line));
			}
			t->line[t->nlines++] = t->buf + start;
		}
		start = i + 1;
	}
}

static void text_free(struct bp_text *t)
{
	free(t->buf);
	free(t->line);
	t->buf = NULL;
	t->line = NULL;
	t->nlines = 0;
}

/* ---- numbers ---- */

static locale_t c_numeric;
static pthread_once_t c_numeric_once = PTHREAD_ONCE_INIT;

static void c_numeric_init(void)
{
	c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

bool bp_number(const char **pp, double *v)
{
	const char *p = *pp, *start = p;
	size_t digits = 0;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p))
		p++, digits++;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p))
			p++, digits++;
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		if (*q == '+' || *q == '-')
			q++;
		if (isdigit((unsigned char)*q)) {
			while (isdigit((unsigned char)*q))
				q++;
			p = q;
		}
	}
	/*
	 * The grammar above is checked by hand, so strtod_l only converts
	 * (correctly rounded) a string it can read to the end; the C locale
	 * keeps "." the decimal point whatever LC_NUMERIC is.
	 */
	pthread_once(&c_numeric_once, c_numeric_init);
	size_t n = (size_t)(p - start);
	char small[64], *copy = n < sizeof(small) ? small : xmalloc(n + 1);
	memcpy(copy, start, n);
	copy[n] = '\0';
	char *end;
	double d = c_numeric ? strtod_l(copy, &end, c_numeric) : strtod(copy, &end);
	bool ok = end == copy + n && isfinite(d);
	if (copy != small)
		free(copy);
	if (!ok)
		return false;
	*v = d;
	*pp = p;
	return true;
}

bool bp_number_all(const char *s, double *v)
{
	const char *p = bp_skip_ws(s);
	return bp_number(&p, v) && bp_at_end(p);
}

const char *bp_skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v')
		p++;
	return p;
}

bool bp_eat(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n))
		return false;
	*p += n;
	return true;
}

bool bp_at_end(const char *p)
{
	return *bp_skip_ws(p) == '\0';
}

/* ---- metrics ---- */

void bp_report(const struct bp_input *in, struct bench_metrics *m, const char *pattern,
	       const char *name, double value)
{
	const struct bench_metric_spec *spec = bench_kind_spec(in->kind, pattern);
	assert(spec);	/* a parser reports only what its kind declares */
	bp_metric_set(m, name ? name : pattern, value, spec->unit, spec->dir);
}

void bp_metric_set(struct bench_metrics *m, const char *name, double value,
		   const char *unit, enum metric_dir dir)
{
	for (size_t i = 0; i < m->n; i++) {
		if (!strcmp(m->v[i].name, name)) {
			m->v[i].value = value;
			m->v[i].unit = unit;
			m->v[i].dir = dir;
			return;
		}
	}
	if (m->n == m->alloc) {
		m->alloc = m->alloc ? 2 * m->alloc : 16;
		m->v = xrealloc(m->v, m->alloc * sizeof(*m->v));
	}
	m->v[m->n++] = (struct bench_metric){
		.name = xstrdup(name), .value = value, .unit = unit,
		.dir = dir,
	};
}

const struct bench_metric *bench_metrics_find(const struct bench_metrics *m,
					      const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].name, name))
			return &m->v[i];
	return NULL;
}

void bench_metrics_release(struct bench_metrics *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	m->v = NULL;
	m->n = m->alloc = 0;
}

/* ---- error excerpts ---- */

void bp_quote(struct strbuf *sb, const char *s, size_t max)
{
	size_t n = strlen(s);
	strbuf_addch(sb, '"');
	for (size_t i = 0; i < n && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			strbuf_addf(sb, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			strbuf_addf(sb, "\\x%02x", c);
		else
			strbuf_addch(sb, (char)c);
	}
	if (n > max)
		strbuf_addstr(sb, "...");
	strbuf_addch(sb, '"');
}

/* Words with which tools announce that they failed instead of measuring. */
static const char *const failure_words[] = {
	"error", "fatal", "could not", "couldn't", "cannot", "can't",
	"unrecognized", "unrecognised", "unknown", "invalid", "not found",
	"no such", "usage:", "refused", "killed", "abort", "fail",
};

static const char *failure_line(const struct bp_text *t)
{
	for (size_t w = 0; w < sizeof(failure_words) / sizeof(*failure_words); w++)
		for (size_t i = 0; i < t->nlines; i++)
			if (strcasestr(t->line[i], failure_words[w]))
				return t->line[i];
	return NULL;
}

static const char *first_nonblank(const struct bp_text *t, bool last)
{
	for (size_t k = 0; k < t->nlines; k++) {
		const char *l = t->line[last ? t->nlines - 1 - k : k];
		if (!bp_at_end(l))
			return l;
	}
	return NULL;
}

static void excerpt_stream(struct strbuf *sb, const char *name, const struct bp_text *t)
{
	const char *first = first_nonblank(t, false), *last = first_nonblank(t, true);
	if (!first) {
		strbuf_addf(sb, "%s empty", name);
		return;
	}
	strbuf_addf(sb, "%s (%zu lines) ", name, t->nlines);
	bp_quote(sb, bp_skip_ws(first), 100);
	if (last != first) {
		strbuf_addstr(sb, " ... ");
		bp_quote(sb, bp_skip_ws(last), 100);
	}
}

int bp_fail(const struct bp_input *in, struct ta_err *err, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addstr(&sb, "; found: ");
	const char *fl = failure_line(&in->e);
	const char *where = "stderr";
	if (!fl) {
		fl = failure_line(&in->o);
		where = "stdout";
	}
	if (fl) {
		strbuf_addf(&sb, "%s says ", where);
		bp_quote(&sb, bp_skip_ws(fl), 160);
	} else if (!first_nonblank(&in->o, false) && !first_nonblank(&in->e, false)) {
		strbuf_addstr(&sb, "no output at all");
	} else {
		excerpt_stream(&sb, "stdout", &in->o);
		if (first_nonblank(&in->e, false)) {
			strbuf_addstr(&sb, ", ");
			excerpt_stream(&sb, "stderr", &in->e);
		}
	}
	err_set(err, EXIT_FAILURE_RUN, "%s", strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

/* ---- command: named-group regex (PCRE2) ---- */

/*
 * Bounds, so that no pattern and no output can hang plan or a run: the
 * pattern's length and nesting, and per match attempt PCRE2's step, depth
 * and heap limits (a pattern's own (*LIMIT_MATCH=...) can only lower them).
 * A whole parse also stops after REGEX_BUDGET_S seconds of matching, for
 * the rare pattern that stays under the step limit on every one of a
 * million lines.  A nested repetition such as ((a{1,255}){1,255}){1,255}
 * is refused by the compiler ("regular expression is too large").
 */
#define REGEX_MAX_LENGTH 4096
#define REGEX_MAX_NESTING 32
#define REGEX_MATCH_LIMIT 1000000
#define REGEX_DEPTH_LIMIT 100000
#define REGEX_HEAP_LIMIT_KIB (64 * 1024)
#define REGEX_BUDGET_S 20.0

/* A user regex compiled by PCRE2, with the names of its groups. */
struct named_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
	pcre2_match_data *md;
	char **group_name;	/* [1..ngroups]; NULL for unnamed groups */
	size_t ngroups;
	bool multiline;		/* holds a newline: may match across lines */
};

static void named_regex_free(struct named_regex *nr)
{
	for (size_t i = 0; i <= nr->ngroups && nr->group_name; i++)
		free(nr->group_name[i]);
	free(nr->group_name);
	pcre2_match_data_free(nr->md);
	pcre2_match_context_free(nr->mctx);
	pcre2_code_free(nr->code);
	memset(nr, 0, sizeof(*nr));
}

static void pcre2_message(int code, char *buf, size_t n)
{
	if (pcre2_get_error_message(code, (PCRE2_UCHAR *)buf, n) < 0)
		snprintf(buf, n, "PCRE2 error %d", code);
}

/*
 * Compiles pattern: PCRE2 syntax (Perl's: \d, (?<name>...), (?P<name>...),
 * (?:...), lookaround), "^" and "$" at every line end, bytes rather than
 * UTF-8 (benchmark output need not be valid UTF-8), at least one named group.
 */
static int named_regex_compile(struct named_regex *nr, const char *pattern,
			       struct ta_err *err)
{
	memset(nr, 0, sizeof(*nr));
	size_t len = strlen(pattern);
	if (len > REGEX_MAX_LENGTH)
		return err_set(err, EXIT_BAD_INPUT, "parse regex: %zu characters long; at most %d",
			       len, REGEX_MAX_LENGTH);
	pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
	if (!cctx)
		return err_set(err, EXIT_FAILURE_RUN, "parse regex: out of memory");
	pcre2_set_max_pattern_length(cctx, REGEX_MAX_LENGTH);
	pcre2_set_parens_nest_limit(cctx, REGEX_MAX_NESTING);
	int code;
	PCRE2_SIZE at;
	nr->code = pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_MULTILINE | PCRE2_NEVER_UTF |
				 PCRE2_NEVER_UCP, &code, &at, cctx);
	pcre2_compile_context_free(cctx);
	if (!nr->code) {
		char msg[256];
		pcre2_message(code, msg, sizeof(msg));
		return err_set(err, EXIT_BAD_INPUT, "parse regex \"%s\": %s at offset %zu; write "
			       "a Perl-style regex with named groups (?<name>...) around the "
			       "numbers to keep", pattern, msg, (size_t)at);
	}
	uint32_t ncapture = 0, nnames = 0, entry = 0;
	PCRE2_SPTR table = NULL;
	pcre2_pattern_info(nr->code, PCRE2_INFO_CAPTURECOUNT, &ncapture);
	pcre2_pattern_info(nr->code, PCRE2_INFO_NAMECOUNT, &nnames);
	pcre2_pattern_info(nr->code, PCRE2_INFO_NAMEENTRYSIZE, &entry);
	pcre2_pattern_info(nr->code, PCRE2_INFO_NAMETABLE, &table);
	nr->ngroups = ncapture;
	nr->group_name = xcalloc(ncapture + 1, sizeof(char *));
	/* Each entry: the group number in two bytes, then the name, NUL-terminated. */
	for (uint32_t i = 0; i < nnames; i++) {
		PCRE2_SPTR e = table + (size_t)i * entry;
		size_t g = ((size_t)e[0] << 8) | e[1];
		if (g >= 1 && g <= ncapture)
			nr->group_name[g] = xstrdup((const char *)e + 2);
	}
	if (!nnames) {
		named_regex_free(nr);
		return err_set(err, EXIT_BAD_INPUT, "parse regex \"%s\": no named group; write "
			       "(?<name>...) around the number to keep", pattern);
	}
	nr->mctx = pcre2_match_context_create(NULL);
	nr->md = pcre2_match_data_create_from_pattern(nr->code, NULL);
	if (!nr->mctx || !nr->md) {
		named_regex_free(nr);
		return err_set(err, EXIT_FAILURE_RUN, "parse regex: out of memory");
	}
	pcre2_set_match_limit(nr->mctx, REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(nr->mctx, REGEX_DEPTH_LIMIT);
	pcre2_set_heap_limit(nr->mctx, REGEX_HEAP_LIMIT_KIB);
	nr->multiline = strchr(pattern, '\n') != NULL;
	return 0;
}

int benchparse_regex_check(const char *pattern, struct ta_err *err)
{
	struct named_regex nr;
	if (!pattern)
		return err_set(err, EXIT_BAD_INPUT, "parse regex: missing");
	if (named_regex_compile(&nr, pattern, err))
		return -1;
	named_regex_free(&nr);
	return 0;
}

int benchparse_regex_groups(const char *pattern, char ***names, size_t *n,
			    struct ta_err *err)
{
	struct named_regex nr;
	if (!pattern)
		return err_set(err, EXIT_BAD_INPUT, "parse regex: missing");
	if (named_regex_compile(&nr, pattern, err))
		return -1;
	*n = nr.ngroups;
	*names = xcalloc(nr.ngroups + 1, sizeof(char *));
	for (size_t i = 1; i <= nr.ngroups; i++)
		(*names)[i - 1] = nr.group_name[i] ? xstrdup(nr.group_name[i]) : NULL;
	named_regex_free(&nr);
	return 0;
}

/* The lines joined by "\n": one subject, line ends unified. */
static char *text_join(const struct bp_text *t, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < t->nlines; i++) {
		strbuf_addstr(&sb, t->line[i]);
		strbuf_addch(&sb, '\n');
	}
	*len = sb.len;
	return strbuf_detach(&sb);
}

/* The search of one output: where the last match is, and what stopped it. */
struct regex_search {
	const struct named_regex *nr;
	PCRE2_SIZE *last;	/* ovector of the last match: 2 * (ngroups + 1) */
	char *text;		/* the subject last refers to (owned) */
	double start;		/* mono_now_s() when the search began */
	int error;		/* a PCRE2 match error (< 0), or 0 */
	bool out_of_time;
};

/* The last of the non-overlapping matches in s, left to right, into rs->last. */
static bool match_last_in(struct regex_search *rs, const char *s, size_t len)
{
	const struct named_regex *nr = rs->nr;
	size_t nv = 2 * (nr->ngroups + 1);
	PCRE2_SIZE off = 0;
	bool found = false;
	while (off <= len) {
		int rc = pcre2_match(nr->code, (PCRE2_SPTR)s, len, off, 0, nr->md, nr->mctx);
		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0) {
			rs->error = rc;
			return false;
		}
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(nr->md);
		memcpy(rs->last, ov, nv * sizeof(*ov));
		found = true;
		/* An empty match moves on by one, or the loop would stand still. */
		off = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
	}
	return found;
}

/*
 * Finds the last match in t (rs->text, rs->last).  A pattern that cannot
 * span lines is tried line by line from the end: the result is usually on
 * one of the last lines, so a large output costs little.
 */
static bool regex_last_match(struct regex_search *rs, const struct bp_text *t)
{
	if (rs->nr->multiline) {
		size_t len;
		char *s = text_join(t, &len);
		bool found = match_last_in(rs, s, len);
		if (found)
			rs->text = s;
		else
			free(s);
		return found;
	}
	for (size_t i = t->nlines; i-- > 0;) {
		if (match_last_in(rs, t->line[i], strlen(t->line[i]))) {
			rs->text = xstrdup(t->line[i]);
			return true;
		}
		if (rs->error)
			return false;
		if ((i & 1023) == 0 && mono_now_s() - rs->start > REGEX_BUDGET_S) {
			rs->out_of_time = true;
			return false;
		}
	}
	return false;
}

/* Why a search stopped before finding a match, as a run error. */
static int regex_search_fail(const struct regex_search *rs, const char *pattern,
			     struct ta_err *err)
{
	if (rs->out_of_time)
		return err_set(err, EXIT_FAILURE_RUN, "parse regex \"%s\": matching took more "
			       "than %.0f s; simplify the pattern (nested repetition?)",
			       pattern, REGEX_BUDGET_S);
	char msg[256];
	pcre2_message(rs->error, msg, sizeof(msg));
	return err_set(err, EXIT_FAILURE_RUN, "parse regex \"%s\": %s (at most %d steps per "
		       "match); simplify the pattern (nested repetition such as (a+)+?)",
		       pattern, msg, REGEX_MATCH_LIMIT);
}

static int parse_regex(const struct bp_input *in, const char *pattern,
		       struct bench_metrics *m, struct ta_err *err)
{
	struct named_regex nr;
	if (named_regex_compile(&nr, pattern, err))
		return -1;
	struct regex_search rs = { .nr = &nr };
	rs.last = xcalloc(2 * (nr.ngroups + 1), sizeof(*rs.last));
	rs.start = mono_now_s();
	int rc = -1;
	bool found = regex_last_match(&rs, &in->o);
	if (!found && !rs.error && !rs.out_of_time)
		found = regex_last_match(&rs, &in->e);
	if (!found) {
		if (rs.error || rs.out_of_time)
			regex_search_fail(&rs, pattern, err);
		else
			bp_fail(in, err, "no match for parse regex \"%s\" in the output", pattern);
		goto out;
	}
	for (size_t g = 1; g <= nr.ngroups; g++) {
		const char *name = nr.group_name[g];
		if (!name)
			continue;
		PCRE2_SIZE so = rs.last[2 * g], eo = rs.last[2 * g + 1];
		if (so == PCRE2_UNSET) {
			err_set(err, EXIT_FAILURE_RUN, "parse regex: group '%s' took no "
				"part in the last match; make it non-optional", name);
			goto out;
		}
		size_t n = eo > so ? eo - so : 0;
		char *val = xmalloc(n + 1);
		memcpy(val, rs.text + so, n);
		val[n] = '\0';
		double v;
		if (!bp_number_all(val, &v)) {
			struct strbuf sb = STRBUF_INIT;
			bp_quote(&sb, val, 80);
			err_set(err, EXIT_FAILURE_RUN, "parse regex: group '%s' matched %s, "
				"which is not a number (expected e.g. 123, -4.5, 1e3)",
				name, strbuf_str(&sb));
			strbuf_release(&sb);
			free(val);
			goto out;
		}
		free(val);
		bp_metric_set(m, name, v, NULL, METRIC_DIR_UNKNOWN);
	}
	rc = 0;
out:
	free(rs.text);
	free(rs.last);
	named_regex_free(&nr);
	return rc;
}

/* ---- entry ---- */

/* Each kind's parser (model/bench-kind.c declares what it reports); NULL: the regex alone. */
static int (*const parsers[BENCH_NKINDS])(const struct bp_input *, struct bench_metrics *,
					   struct ta_err *) = {
	[BENCH_EBIZZY] = bp_parse_ebizzy,
	[BENCH_REDIS] = bp_parse_redis,
	[BENCH_STRESS_NG] = bp_parse_stress_ng,
	[BENCH_SYSBENCH] = bp_parse_sysbench,
	[BENCH_KERNEL_BUILD] = bp_parse_time,
	[BENCH_COMMAND] = NULL,
};

int benchparse_run(enum bench_kind kind, const char *regex_or_null,
		   const char *out, size_t out_len,
		   const char *err_text, size_t err_len,
		   struct bench_metrics *m, struct ta_err *err)
{
	struct bp_input in = {
		.kind = kind,
		.out = out ? out : "", .out_len = out ? out_len : 0,
		.err = err_text ? err_text : "", .err_len = err_text ? err_len : 0,
	};
	text_split(&in.o, in.out, in.out_len);
	text_split(&in.e, in.err, in.err_len);
	int rc;
	if (kind < 0 || kind >= BENCH_NKINDS)
		rc = err_set(err, EXIT_BAD_INPUT, "unknown benchmark kind %d", (int)kind);
	else if (parsers[kind])
		rc = parsers[kind](&in, m, err);
	else
		rc = regex_or_null ? 0 : err_set(err, EXIT_BAD_INPUT, "benchmark kind %s needs a "
						 "parse regex with named groups",
						 bench_kind_name(kind));
	if (!rc && regex_or_null)
		rc = parse_regex(&in, regex_or_null, m, err);
	if (!rc && !m->n)
		rc = bp_fail(&in, err, "no metric in the output");
	if (rc)
		bench_metrics_release(m);
	text_free(&in.o);
	text_free(&in.e);
	return rc;
}
