/*
 * benchparse: the entry point, the helpers every parser shares (lines,
 * C-locale numbers, metrics, error excerpts) and the command kind's
 * named-group regex.  The per-benchmark parsers are collectors/parse-*.c.
 */
#include "benchparse-int.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void bench_metrics_free(struct bench_metrics *m)
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

/* ---- command: named-group regex ---- */

/* A user regex compiled as POSIX ERE, with the names of its groups. */
struct named_regex {
	regex_t re;
	bool compiled;
	char **group_name;	/* [1..ngroups]; NULL for unnamed groups */
	size_t ngroups;
	size_t nnamed;
	bool multiline;		/* holds a newline: may match across lines */
};

static void named_regex_free(struct named_regex *nr)
{
	if (nr->compiled)
		regfree(&nr->re);
	for (size_t i = 0; i <= nr->ngroups && nr->group_name; i++)
		free(nr->group_name[i]);
	free(nr->group_name);
	memset(nr, 0, sizeof(*nr));
}

static int regex_fail(struct ta_err *err, const char *pattern, size_t at, const char *why)
{
	return err_set(err, EXIT_BAD_INPUT,
		       "parse regex \"%s\": %s at offset %zu; write POSIX ERE with "
		       "named groups (?<name>...) around the numbers to keep",
		       pattern, why, at);
}

/*
 * Copies a bracket expression "[...]" starting at pat[i] into ere and
 * returns the index just past it, or 0 if it never closes.  Inside
 * brackets "(" and "\" are plain characters, "]" right after "[" or "[^"
 * is a member, and "[:alpha:]"-style classes contain a "]" of their own.
 */
static size_t bracket_copy(const char *pat, size_t i, struct strbuf *ere)
{
	size_t j = i + 1;
	if (pat[j] == '^')
		j++;
	if (pat[j] == ']')
		j++;
	while (pat[j] && pat[j] != ']') {
		if (pat[j] == '[' && (pat[j + 1] == ':' || pat[j + 1] == '.' ||
				      pat[j + 1] == '=')) {
			char kind = pat[j + 1];
			const char *close = pat + j + 2;
			while (*close && !(close[0] == kind && close[1] == ']'))
				close++;
			if (!*close)
				return 0;
			j = (size_t)(close - pat) + 2;
			continue;
		}
		j++;
	}
	if (!pat[j])
		return 0;
	strbuf_add(ere, pat + i, j + 1 - i);
	return j + 1;
}

static bool name_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '_' ||
	       (!first && (isdigit((unsigned char)c) || c == '.' || c == '-'));
}

/*
 * Translates "(?<name>...)" / "(?P<name>...)" / "(?:...)" into plain ERE
 * groups, numbering every capturing group the way regcomp will (each
 * unescaped "(" outside brackets), and compiles the result.
 */
static int named_regex_compile(struct named_regex *nr, const char *pattern,
			       struct ta_err *err)
{
	struct strbuf ere = STRBUF_INIT;
	size_t alloc = 8;
	memset(nr, 0, sizeof(*nr));
	nr->group_name = xcalloc(alloc, sizeof(char *));
	size_t i = 0;
	while (pattern[i]) {
		char c = pattern[i];
		if (c == '\\') {
			if (!pattern[i + 1]) {
				regex_fail(err, pattern, i, "trailing backslash");
				goto fail;
			}
			strbuf_add(&ere, pattern + i, 2);
			i += 2;
			continue;
		}
		if (c == '[') {
			size_t next = bracket_copy(pattern, i, &ere);
			if (!next) {
				regex_fail(err, pattern, i, "unterminated [");
				goto fail;
			}
			i = next;
			continue;
		}
		if (c != '(') {
			strbuf_addch(&ere, c);
			i++;
			continue;
		}
		char *name = NULL;
		size_t at = i;
		i++;
		if (pattern[i] == '?') {
			i++;
			if (pattern[i] == 'P' && pattern[i + 1] == '<')
				i++;
			if (pattern[i] == ':') {
				i++;
			} else if (pattern[i] == '<' && name_char(pattern[i + 1], true)) {
				size_t s = ++i;
				while (name_char(pattern[i], false))
					i++;
				if (pattern[i] != '>') {
					regex_fail(err, pattern, at, "group name must be letters, digits, '_', '.' or '-' closed by '>'");
					goto fail;
				}
				name = xmalloc(i - s + 1);
				memcpy(name, pattern + s, i - s);
				name[i - s] = '\0';
				i++;
			} else {
				regex_fail(err, pattern, at, "unsupported (? group (only (?<name>...) and (?:...))");
				goto fail;
			}
		}
		if (name) {
			for (size_t g = 1; g <= nr->ngroups; g++) {
				if (nr->group_name[g] && !strcmp(nr->group_name[g], name)) {
					free(name);
					regex_fail(err, pattern, at, "group name used twice");
					goto fail;
				}
			}
			nr->nnamed++;
		}
		nr->ngroups++;
		if (nr->ngroups + 1 >= alloc) {
			nr->group_name = xrealloc(nr->group_name, 2 * alloc * sizeof(char *));
			memset(nr->group_name + alloc, 0, alloc * sizeof(char *));
			alloc *= 2;
		}
		nr->group_name[nr->ngroups] = name;
		strbuf_addch(&ere, '(');
	}
	if (!nr->nnamed) {
		regex_fail(err, pattern, i, "no named group");
		goto fail;
	}
	nr->multiline = strchr(pattern, '\n') != NULL;
	int rc = regcomp(&nr->re, strbuf_str(&ere), REG_EXTENDED | REG_NEWLINE);
	if (rc) {
		char msg[256];
		regerror(rc, &nr->re, msg, sizeof(msg));
		err_set(err, EXIT_BAD_INPUT, "parse regex \"%s\": %s", pattern, msg);
		goto fail;
	}
	nr->compiled = true;
	if (nr->re.re_nsub != nr->ngroups) {
		/* Our group count must be regcomp's, or names land on wrong groups. */
		err_set(err, EXIT_BAD_INPUT, "parse regex \"%s\": cannot number its groups "
			"(%zu seen, %zu compiled)", pattern, nr->ngroups, nr->re.re_nsub);
		goto fail;
	}
	strbuf_release(&ere);
	return 0;
fail:
	strbuf_release(&ere);
	named_regex_free(nr);
	return -1;
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

/* The lines joined by "\n": one C string for regexec, line ends unified. */
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

/* The last of the non-overlapping matches in s, left to right, into last. */
static bool match_last_in(const regex_t *re, const char *s, size_t len, size_t nm,
			  regmatch_t *pm, regmatch_t *last)
{
	size_t off = 0;
	bool found = false;
	while (off <= len) {
		int eflags = off > 0 && s[off - 1] != '\n' ? REG_NOTBOL : 0;
		if (regexec(re, s + off, nm, pm, eflags))
			break;
		for (size_t g = 0; g < nm; g++) {
			last[g] = pm[g];
			if (pm[g].rm_so >= 0) {
				last[g].rm_so += (regoff_t)off;
				last[g].rm_eo += (regoff_t)off;
			}
		}
		found = true;
		off += pm[0].rm_eo > 0 ? (size_t)pm[0].rm_eo : 1;
	}
	return found;
}

/*
 * Finds the last match in t; *text gets the string the offsets in last
 * refer to (free it).  glibc's regexec costs time in proportion to the
 * whole rest of the string on every call, so a pattern that cannot span
 * lines is tried line by line from the end: the result is usually on one
 * of the last lines, and a 35 MB output costs well under a second instead
 * of many.
 */
static bool regex_last_match(const struct named_regex *nr, const struct bp_text *t,
			     char **text, regmatch_t *last)
{
	size_t nm = nr->ngroups + 1;
	regmatch_t *pm = xmalloc(nm * sizeof(*pm));
	bool found = false;
	if (nr->multiline) {
		size_t len;
		char *s = text_join(t, &len);
		found = match_last_in(&nr->re, s, len, nm, pm, last);
		if (found)
			*text = s;
		else
			free(s);
	} else {
		for (size_t i = t->nlines; i-- > 0 && !found;) {
			found = match_last_in(&nr->re, t->line[i], strlen(t->line[i]), nm, pm, last);
			if (found)
				*text = xstrdup(t->line[i]);
		}
	}
	free(pm);
	return found;
}

static int parse_regex(const struct bp_input *in, const char *pattern,
		       struct bench_metrics *m, struct ta_err *err)
{
	struct named_regex nr;
	if (named_regex_compile(&nr, pattern, err))
		return -1;
	regmatch_t *last = xmalloc((nr.ngroups + 1) * sizeof(*last));
	char *text = NULL;
	int rc = -1;
	if (!regex_last_match(&nr, &in->o, &text, last) &&
	    !regex_last_match(&nr, &in->e, &text, last)) {
		bp_fail(in, err, "no match for parse regex \"%s\" in the output", pattern);
		goto out;
	}
	for (size_t g = 1; g <= nr.ngroups; g++) {
		const char *name = nr.group_name[g];
		if (!name)
			continue;
		if (last[g].rm_so < 0) {
			err_set(err, EXIT_FAILURE_RUN, "parse regex: group '%s' took no "
				"part in the last match; make it non-optional", name);
			goto out;
		}
		size_t n = (size_t)(last[g].rm_eo - last[g].rm_so);
		char *val = xmalloc(n + 1);
		memcpy(val, text + last[g].rm_so, n);
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
	free(text);
	free(last);
	named_regex_free(&nr);
	return rc;
}

/* ---- entry ---- */

int benchparse_run(enum bench_kind kind, const char *regex_or_null,
		   const char *out, size_t out_len,
		   const char *err_text, size_t err_len,
		   struct bench_metrics *m, struct ta_err *err)
{
	struct bp_input in = {
		.out = out ? out : "", .out_len = out ? out_len : 0,
		.err = err_text ? err_text : "", .err_len = err_text ? err_len : 0,
	};
	text_split(&in.o, in.out, in.out_len);
	text_split(&in.e, in.err, in.err_len);
	int rc;
	switch (kind) {
	case BENCH_EBIZZY:
		rc = bp_parse_ebizzy(&in, m, err);
		break;
	case BENCH_REDIS:
		rc = bp_parse_redis(&in, m, err);
		break;
	case BENCH_STRESS_NG:
		rc = bp_parse_stress_ng(&in, m, err);
		break;
	case BENCH_SYSBENCH:
		rc = bp_parse_sysbench(&in, m, err);
		break;
	case BENCH_KERNEL_BUILD:
		rc = bp_parse_time(&in, m, err);
		break;
	case BENCH_COMMAND:
		rc = regex_or_null ? 0 : err_set(err, EXIT_BAD_INPUT,
			"benchmark kind command needs a parse regex with named groups");
		break;
	default:
		rc = err_set(err, EXIT_BAD_INPUT, "unknown benchmark kind %d", (int)kind);
		break;
	}
	if (!rc && regex_or_null)
		rc = parse_regex(&in, regex_or_null, m, err);
	if (!rc && !m->n)
		rc = bp_fail(&in, err, "no metric in the output");
	if (rc)
		bench_metrics_free(m);
	text_free(&in.o);
	text_free(&in.e);
	return rc;
}
