/* evfmt: the decoder's event table from a trace's formats; see evfmt.h. */
#include "evfmt.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/bcur.h"
#include "../util/strbuf.h"
#include "decode.h"

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

/* The decoder event a format text describes ("name: X\nID: N\n..."), or -1. */
static int format_wanted(const char *sys, const unsigned char *text, size_t len)
{
	if (len < 6 || memcmp(text, "name: ", 6))
		return -1;
	size_t n = 0;
	while (6 + n < len && text[6 + n] != '\n')
		n++;
	for (int i = 0; i < DECODER_NEVENTS; i++)
		if (!strcmp(sys, decoder_events[i][0]) && strlen(decoder_events[i][1]) == n &&
		    !memcmp(text + 6, decoder_events[i][1], n))
			return i;
	return -1;
}

static bool system_wanted(const char *sys)
{
	for (int i = 0; i < DECODER_NEVENTS; i++)
		if (!strcmp(sys, decoder_events[i][0]))
			return true;
	return false;
}

struct tep_handle *evfmt_tep(const struct evfmt_layout *l, struct ta_err *err)
{
	struct tep_handle *tep = tep_alloc();
	if (!tep) {
		err_set(err, EXIT_FAILURE_RUN, "out of memory for the event table");
		return NULL;
	}
	tep_set_file_bigendian(tep, l->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, l->long_size);
	tep_set_page_size(tep, (int)l->page_size);
	if (l->header_page &&
	    tep_parse_header_page(tep, (char *)l->header_page, l->header_page_len,
				  l->long_size) < 0) {
		err_set(err, EXIT_BAD_INPUT, "corrupted header_page format");
		goto fail;
	}
	struct bcur s = { .p = l->events, .len = l->events_len, .big_endian = l->big_endian };
	uint64_t nsys = l->events ? bcur_num(&s, 4) : 0;
	bool seen[DECODER_NEVENTS] = { false };
	for (uint64_t k = 0; k < nsys && !s.bad; k++) {
		const char *sys = bcur_str(&s);
		uint64_t nev = bcur_num(&s, 4);
		bool ours = sys && system_wanted(sys);
		for (uint64_t i = 0; i < nev && !s.bad; i++) {
			uint64_t size = bcur_num(&s, 8);
			const unsigned char *text = bcur_bytes(&s, size);
			int which = ours && text ? format_wanted(sys, text, size) : -1;
			if (which < 0 || seen[which])
				continue;
			seen[which] = true;
			/* A print format it cannot parse still leaves the fields usable. */
			if (tep_parse_event(tep, (const char *)text, size, sys) != 0 &&
			    !tep_find_event_by_name(tep, sys, decoder_events[which][1])) {
				err_set(err, EXIT_BAD_INPUT, "the format of %s/%s is corrupted",
					sys, decoder_events[which][1]);
				goto fail;
			}
		}
	}
	if (s.bad) {
		err_set(err, EXIT_BAD_INPUT, "truncated or corrupted event formats");
		goto fail;
	}
	return tep;
fail:
	tep_free(tep);
	return NULL;
}

const char *evfmt_comm(const struct evfmt_layout *l, int32_t pid, char *buf, size_t len)
{
	const char *p = l->cmdlines, *end = l->cmdlines ? l->cmdlines + l->cmdlines_len : NULL;
	while (p && p < end) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;
		/* "PID COMM": the number by hand, sscanf costs more than the whole read. */
		int64_t v = 0;
		const char *q = p;
		while (q < eol && *q >= '0' && *q <= '9' && v <= INT32_MAX)
			v = v * 10 + (*q++ - '0');
		if (q > p && q < eol && *q == ' ' && v == pid) {
			snprintf(buf, len, "%.*s", (int)(eol - q - 1), q + 1);
			return buf;
		}
		p = eol + 1;
	}
	return NULL;
}

int evfmt_sandbox(const struct evfmt_layout *l, unsigned timeout_s, struct ta_err *err)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return err_set(err, EXIT_FAILURE_RUN, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* SIGALRM's default action ends a child stuck in a damaged format. */
		signal(SIGALRM, SIG_DFL);
		alarm(timeout_s);
		struct ta_err e;
		struct tep_handle *tep = evfmt_tep(l, &e);
		_exit(tep ? 0 : 3);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(err, EXIT_FAILURE_RUN, "waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3))
		return 0;	/* 3: the parent's own parse reports the error */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return err_set(err, EXIT_BAD_INPUT,
			       "parsing the event formats took over %u s (they are corrupted); "
			       "re-record the trace", timeout_s);
	return err_set(err, EXIT_BAD_INPUT,
		       "corrupted event formats (parsing them crashed libtraceevent: %s %d); "
		       "re-record the trace", WIFSIGNALED(status) ? "signal" : "status",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}
