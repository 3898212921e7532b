/* tdat: trace-cmd file layout parser; see tdat.h. */
#include "tdat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "../util/strbuf.h"
#include "../util/bcur.h"
#include "evfmt.h"
#include "gang.h"

/* Option ids (trace-cmd.dat.v7(5)). */
enum {
	OPT_DONE = 0,
	OPT_CPUSTAT = 2,
	OPT_BUFFER = 3,
	OPT_TRACECLOCK = 4,
	OPT_CPUCOUNT = 8,
	OPT_STRINGS = 15,
	OPT_HEADER_INFO = 16,
	OPT_EVENT_FORMATS = 18,
	OPT_CMDLINES = 21,
	/* trace-cmd 3.1 knows 0..22; anything far past that is a damaged id. */
	OPT_ID_LIMIT = 256,
};

#define MAX_CPUS 65536
/* Decompressed sizes: options hold stats texts, the header sections formats. */
#define MAX_OPTIONS_SECTION (16u << 20)
#define MAX_FORMAT_SECTION (64u << 20)
#define MAX_OPTION_SECTIONS 4096

static int cur_fail(const struct bcur *c, struct ta_err *err, const char *what)
{
	return err_set(err, EXIT_BAD_INPUT,
		       "truncated or corrupted trace file: %s runs past the end (at offset %llu)",
		       what, (unsigned long long)bcur_offset(c));
}

static struct tdat_buffer *buffer_add(struct tdat_file *f, const char *name)
{
	f->buffers = xrealloc(f->buffers, (f->nbuffers + 1) * sizeof(*f->buffers));
	struct tdat_buffer *b = &f->buffers[f->nbuffers++];
	memset(b, 0, sizeof(*b));
	b->name = xstrdup(name);
	return b;
}

static void buffer_set_cpus(struct tdat_buffer *b, int n)
{
	b->cpus = xcalloc(n ? n : 1, sizeof(*b->cpus));
	b->ncpus = n;
}

/* Checks that a CPU's data lies inside the file and is page aligned. */
static int check_cpu_data(const struct tdat_file *f, const struct tdat_buffer *b,
			  const struct tdat_cpu *c, struct ta_err *err)
{
	if (c->offset > f->size || c->size > f->size - c->offset)
		return err_set(err, EXIT_BAD_INPUT,
			       "truncated or corrupted trace file: CPU %d data of buffer '%s' "
			       "(offset %llu, %llu bytes) lies beyond the end of the file "
			       "(%zu bytes)", c->cpu, b->name, (unsigned long long)c->offset,
			       (unsigned long long)c->size, f->size);
	if (!f->compressed && c->size && c->offset % f->page_size)
		return err_set(err, EXIT_BAD_INPUT,
			       "corrupted trace file: CPU %d data of buffer '%s' is not page "
			       "aligned (offset %llu)", c->cpu, b->name,
			       (unsigned long long)c->offset);
	return 0;
}

/*
 * CPUSTAT options hold one CPU's stats text each ("CPU: N" first); a text
 * "Buffer: NAME" switches to the stats of that instance.  They come before
 * (v7) or apart from (v6) the buffer descriptions, so they are collected by
 * buffer name and summed once every buffer is known.
 */
struct stat_acc {
	char *name;
	int nstats;
	long long lost;		/* -1 while no loss line was seen */
	struct tdat_cpu_stats *cpus;
	int dup;		/* a CPU seen twice, or -1 */
};

struct stats_list {
	struct stat_acc *v;
	size_t n;
	char *current;		/* buffer the next CPU stats belong to */
};

/* "now ts: S.UUUUUU" (ns clocks, microseconds shown) or "now ts: N" (counters). */
static void stats_now(const char *t, struct tdat_cpu_stats *c)
{
	const char *l = strstr(t, "now ts:");
	if (!l)
		return;
	char *end;
	unsigned long long sec = strtoull(l + 7, &end, 10);
	if (*end != '.') {
		c->now = sec;
		return;
	}
	unsigned long long us = 0;
	int digits = 0;
	for (end++; *end >= '0' && *end <= '9' && digits < 6; end++, digits++)
		us = us * 10 + (*end - '0');
	for (; digits < 6; digits++)
		us *= 10;
	if (sec < UINT64_MAX / 1000000000ULL) {
		c->now = sec * 1000000000ULL + us * 1000;
		c->now_slack = 1000;
	}
}

static long long stat_value(const char *stats, const char *key);

static void stats_add(struct stats_list *l, const char *text, size_t len)
{
	char *t = strndup(text, len);
	const char *b = t + strspn(t, "\n ");
	if (!strncmp(b, "Buffer:", 7)) {
		b += 7;
		b += strspn(b, " ");
		free(l->current);
		l->current = strndup(b, strcspn(b, "\n"));
		free(t);
		return;
	}
	const char *name = l->current ? l->current : "";
	struct stat_acc *a = NULL;
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			a = &l->v[i];
	if (!a) {
		l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
		a = &l->v[l->n++];
		a->name = xstrdup(name);
		a->nstats = 0;
		a->lost = -1;
		a->cpus = NULL;
		a->dup = -1;
	}
	long long lost = tdat_stats_lost(t);
	struct tdat_cpu_stats c = { .cpu = (int)stat_value(t, "CPU"), .records = -1 };
	long long entries = stat_value(t, "entries"), read = stat_value(t, "read events");
	if (entries >= 0 && read >= 0 && entries <= INT64_MAX - read)
		c.records = entries + read;
	stats_now(t, &c);
	for (int i = 0; i < a->nstats && c.cpu >= 0; i++)
		if (a->cpus[i].cpu == c.cpu && a->dup < 0)
			a->dup = c.cpu;
	a->cpus = xrealloc(a->cpus, (a->nstats + 1) * sizeof(*a->cpus));
	a->cpus[a->nstats++] = c;
	if (lost >= 0)
		a->lost = (a->lost < 0 ? 0 : a->lost) + lost;
	free(t);
}

static void stats_apply(struct tdat_file *f, struct stats_list *l)
{
	for (size_t i = 0; i < f->nbuffers; i++) {
		f->buffers[i].lost_events = -1;
		f->buffers[i].dup_stats = -1;
		for (size_t k = 0; k < l->n; k++)
			if (!strcmp(l->v[k].name, f->buffers[i].name) && l->v[k].cpus) {
				f->buffers[i].nstats = l->v[k].nstats;
				f->buffers[i].lost_events = l->v[k].lost;
				f->buffers[i].stats = l->v[k].cpus;
				f->buffers[i].dup_stats = l->v[k].dup;
				l->v[k].cpus = NULL;
			}
	}
	for (size_t k = 0; k < l->n; k++) {
		free(l->v[k].name);
		free(l->v[k].cpus);
	}
	free(l->v);
	free(l->current);
	memset(l, 0, sizeof(*l));
}

/* One CPU's data in the file, for the tiling check. */
struct extent {
	uint64_t lo, hi;
	int cpu;
	const char *buffer;
};

static int extent_cmp(const void *a, const void *b)
{
	const struct extent *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Bytes [lo, hi) between CPU data: shorter than a page, and zeros where zero is set. */
static int check_gap(const struct tdat_file *f, uint64_t lo, uint64_t hi, bool zero,
		     const char *buffer, struct ta_err *err)
{
	if (hi - lo < f->page_size &&
	    (!zero || hi == lo || (!f->map[lo] && !memcmp(f->map + lo, f->map + lo + 1, hi - lo - 1))))
		return 0;
	return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: %llu bytes at offset %llu "
		       "(buffer '%s') belong to no CPU's data: a CPU's offset or size in the index "
		       "is damaged", (unsigned long long)(hi - lo), (unsigned long long)lo, buffer);
}

/*
 * The CPU data in x (n extents) tiles [lo, hi): in order, never overlapping,
 * apart only by zero padding shorter than a page (trace-cmd page-aligns each
 * CPU's data).  zero_lead: the bytes before the first extent are padding too
 * (a v6 index is followed by the trace clock's name instead).  A damaged
 * offset or size in the index otherwise hides data from the reader, or
 * reads bytes twice, without a word.
 */
static int check_tiling(const struct tdat_file *f, struct extent *x, size_t n, uint64_t lo,
			uint64_t hi, bool zero_lead, const char *what, struct ta_err *err)
{
	qsort(x, n, sizeof(*x), extent_cmp);
	uint64_t pos = lo;
	for (size_t i = 0; i < n; i++) {
		/* trace-cmd 3.1 leaves the chunk count out of a compressed size. */
		if (x[i].lo < pos && !(f->compressed && i && pos - x[i].lo == 4))
			return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: the data of CPU %d "
				       "(buffer '%s', offset %llu) overlaps what comes before it",
				       x[i].cpu, x[i].buffer, (unsigned long long)x[i].lo);
		if (x[i].lo > pos && check_gap(f, pos, x[i].lo, zero_lead || i, x[i].buffer, err) < 0)
			return -1;
		pos = x[i].hi;
	}
	if (pos > hi)
		pos = hi;	/* a compressed size that did count the chunk count */
	return check_gap(f, pos, hi, true, what, err);
}

/*
 * Buffers have one name each (a BUFFER option written twice is damage), and
 * every buffer's CPU data tiles its place (see check_tiling).
 */
static int check_layout(struct tdat_file *f, uint64_t v6_data_start, struct ta_err *err)
{
	for (size_t i = 0; i < f->nbuffers; i++)
		for (size_t k = i + 1; k < f->nbuffers; k++)
			if (!strcmp(f->buffers[i].name, f->buffers[k].name))
				return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: two "
					       "buffers are named '%s'", f->buffers[i].name);
	size_t total = 0;
	for (size_t i = 0; i < f->nbuffers; i++)
		total += f->buffers[i].ncpus;
	struct extent *x = xcalloc(total ? total : 1, sizeof(*x));
	int rc = 0;
	size_t n = 0;
	for (size_t i = 0; rc == 0 && i < f->nbuffers; i++) {
		const struct tdat_buffer *b = &f->buffers[i];
		if (f->version == 7)
			n = 0;
		for (int k = 0; k < b->ncpus; k++) {
			const struct tdat_cpu *c = &b->cpus[k];
			if (!c->size)
				continue;
			uint64_t end = c->offset + c->size;
			if (f->compressed && end + 4 <= (f->version == 7 ? b->data_hi : f->size))
				end += 4;
			x[n++] = (struct extent){ c->offset, end, c->cpu, b->name };
		}
		if (f->version == 7)
			rc = check_tiling(f, x, n, b->data_lo, b->data_hi, true, b->name, err);
	}
	if (rc == 0 && f->version == 6)
		rc = check_tiling(f, x, n, v6_data_start, f->size, false, "", err);
	free(x);
	return rc;
}

/* --- version 6 ------------------------------------------------------- */

static int parse_v6(struct tdat_file *f, struct bcur *c, struct stats_list *sl,
		    uint64_t *data_start, struct ta_err *err)
{
	/* A v6 file starts with the tracing-data layout itself. */
	if (evfmt_scan(f->map, f->size, 0, &f->formats, err) < 0)
		return -1;
	c->pos = f->formats.end;
	uint64_t cpus = bcur_num(c, 4);
	if (c->bad)
		return cur_fail(c, err, "the CPU count");
	if (cpus == 0 || cpus > MAX_CPUS)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: a CPU count of %llu "
			       "(at offset %llu)", (unsigned long long)cpus,
			       (unsigned long long)(c->pos - 4));

	struct tdat_buffer *top = buffer_add(f, "");
	buffer_set_cpus(top, (int)cpus);
	struct { uint64_t off; const char *name; } inst[64];
	int ninst = 0;

	const unsigned char *tag = bcur_bytes(c, 10);
	if (tag && !memcmp(tag, "options  ", 10)) {
		for (;;) {
			uint64_t id = bcur_num(c, 2);
			if (c->bad || id == OPT_DONE)
				break;
			if (id >= OPT_ID_LIMIT)
				return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: option "
					       "id %#llx at offset %llu is unknown",
					       (unsigned long long)id,
					       (unsigned long long)(c->pos - 2));
			uint64_t sz = bcur_num(c, 4);
			const unsigned char *d = bcur_bytes(c, sz);
			if (!d)
				break;
			if (id == OPT_CPUSTAT)
				stats_add(sl, (const char *)d, strnlen((const char *)d, sz));
			else if (id == OPT_TRACECLOCK && !top->clock)
				top->clock = strndup((const char *)d, sz);
			else if (id == OPT_BUFFER && sz > 8 && ninst < 64) {
				if (!memchr(d + 8, '\0', sz - 8))
					return err_set(err, EXIT_BAD_INPUT,
						       "corrupted trace file: bad BUFFER option");
				inst[ninst].off = bcur_num_at(d, 8, f->big_endian);
				inst[ninst++].name = (const char *)d + 8;
			}
		}
		tag = bcur_bytes(c, 10);
	}
	if (!tag)
		return cur_fail(c, err, "the options");
	if (!memcmp(tag, "latency  ", 10))
		return err_set(err, EXIT_BAD_INPUT,
			       "this trace file holds latency tracer text, not events");
	if (memcmp(tag, "flyrecord", 10))
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: no flyrecord data");
	for (uint64_t i = 0; i < cpus; i++) {
		top->cpus[i].cpu = (int)i;
		top->cpus[i].offset = bcur_num(c, 8);
		top->cpus[i].size = bcur_num(c, 8);
	}
	if (c->bad)
		return cur_fail(c, err, "the CPU data index");
	*data_start = c->pos;

	/* v6 instances: BUFFER gives where that instance's per-CPU index starts. */
	for (int i = 0; i < ninst; i++) {
		struct bcur ic = { .big_endian = f->big_endian, .p = f->map, .len = f->size, .pos = inst[i].off };
		if (inst[i].off > f->size)
			return err_set(err, EXIT_BAD_INPUT,
				       "corrupted trace file: buffer '%s' lies beyond the end",
				       inst[i].name);
		struct tdat_buffer *b = buffer_add(f, inst[i].name);
		buffer_set_cpus(b, (int)cpus);
		const unsigned char *t = bcur_bytes(&ic, 10);
		if (t && memcmp(t, "flyrecord", 10))
			ic.pos -= 10;	/* some writers omit the tag for instances */
		for (uint64_t k = 0; k < cpus; k++) {
			b->cpus[k].cpu = (int)k;
			b->cpus[k].offset = bcur_num(&ic, 8);
			b->cpus[k].size = bcur_num(&ic, 8);
		}
		if (ic.bad)
			return cur_fail(&ic, err, "a buffer's CPU data index");
		if (ic.pos > *data_start)
			*data_start = ic.pos;
	}
	return 0;
}

/* --- version 7 ------------------------------------------------------- */

/* Section payload: decompressed into *owned when the section is compressed. */
static int section_payload(struct tdat_file *f, uint64_t off, unsigned expect_id,
			   uint32_t max_size, struct bcur *out, void **owned, struct ta_err *err)
{
	struct bcur c = { .big_endian = f->big_endian, .p = f->map, .len = f->size, .pos = off };
	*owned = NULL;
	if (off > f->size)
		return err_set(err, EXIT_BAD_INPUT,
			       "truncated or corrupted trace file: a section at offset %llu "
			       "lies beyond the end (%zu bytes)", (unsigned long long)off, f->size);
	uint64_t id = bcur_num(&c, 2), flags = bcur_num(&c, 2);
	bcur_num(&c, 4);
	uint64_t size = bcur_num(&c, 8);
	if (c.bad)
		return cur_fail(&c, err, "a section header");
	if (id != expect_id)
		return err_set(err, EXIT_BAD_INPUT,
			       "corrupted trace file: expected section %u at offset %llu, found %llu",
			       expect_id, (unsigned long long)off, (unsigned long long)id);
	const unsigned char *data = bcur_bytes(&c, size);
	if (!data)
		return cur_fail(&c, err, "a section");
	*out = (struct bcur){ .big_endian = f->big_endian, .p = data, .len = size, .base = off + 16 };
	if (!(flags & 1))
		return 0;
	if (strcmp(f->compression, "zstd"))
		return err_set(err, EXIT_BAD_INPUT,
			       "trace file compressed with '%s': only zstd is supported "
			       "(convert it with 'trace-cmd convert --compression none')",
			       f->compression);
	struct bcur h = *out;
	uint64_t csize = bcur_num(&h, 4), usize = bcur_num(&h, 4);
	const unsigned char *z = bcur_bytes(&h, csize);
	if (!z)
		return cur_fail(&h, err, "a compressed section");
	if (usize > max_size)
		return err_set(err, EXIT_BAD_INPUT,
			       "corrupted trace file: section at offset %llu claims %llu bytes",
			       (unsigned long long)off, (unsigned long long)usize);
	void *buf = xmalloc(usize ? usize : 1);
	size_t got = ZSTD_decompress(buf, usize, z, csize);
	if (ZSTD_isError(got) || got != usize) {
		free(buf);
		return err_set(err, EXIT_BAD_INPUT,
			       "corrupted trace file: section at offset %llu does not decompress%s%s",
			       (unsigned long long)off, ZSTD_isError(got) ? ": " : "",
			       ZSTD_isError(got) ? ZSTD_getErrorName(got) : "");
	}
	*owned = buf;
	*out = (struct bcur){ .big_endian = f->big_endian, .p = buf, .len = usize };
	return 0;
}

static int parse_buffer_option(struct tdat_file *f, const unsigned char *d, uint64_t sz,
			       uint64_t cpu_count, struct ta_err *err)
{
	struct bcur c = { .big_endian = f->big_endian, .p = d, .len = sz };
	uint64_t fly = bcur_num(&c, 8);	/* the buffer's flyrecord section */
	const char *name = bcur_str(&c);
	const char *clock = bcur_str(&c);
	uint64_t page = bcur_num(&c, 4);
	uint64_t n = bcur_num(&c, 4);
	if (c.bad)
		return cur_fail(&c, err, "a BUFFER option");
	if (n > MAX_CPUS || (cpu_count && n > cpu_count))
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: buffer '%s' has %llu "
			       "CPUs", name, (unsigned long long)n);
	if (page != f->page_size)
		return err_set(err, EXIT_BAD_INPUT,
			       "buffer '%s' uses %llu-byte pages, the file %u: not supported",
			       name, (unsigned long long)page, f->page_size);
	/* The CPU data must lie inside the flyrecord section the option names. */
	struct bcur h = { .big_endian = f->big_endian, .p = f->map, .len = f->size, .pos = fly };
	if (fly > f->size)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: buffer '%s' data at "
			       "offset %llu lies beyond the end", name, (unsigned long long)fly);
	uint64_t sid = bcur_num(&h, 2);
	bcur_num(&h, 2);
	bcur_num(&h, 4);
	uint64_t fsize = bcur_num(&h, 8);
	if (h.bad || sid != OPT_BUFFER || fsize > f->size - h.pos)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: buffer '%s' names no "
			       "valid data section at offset %llu", name, (unsigned long long)fly);
	if (fsize && !n)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: buffer '%s' has %llu "
			       "bytes of data but a CPU count of 0", name,
			       (unsigned long long)fsize);
	uint64_t lo = h.pos, hi = h.pos + fsize;
	struct tdat_buffer *b = buffer_add(f, name);
	b->clock = xstrdup(clock);
	b->data_lo = lo;
	b->data_hi = hi;
	buffer_set_cpus(b, (int)n);
	for (uint64_t i = 0; i < n; i++) {
		b->cpus[i].cpu = (int)bcur_num(&c, 4);
		b->cpus[i].offset = bcur_num(&c, 8);
		b->cpus[i].size = bcur_num(&c, 8);
		if (c.bad)
			break;
		/* trace-cmd 3.1 leaves the 4-byte chunk count out of compressed sizes. */
		uint64_t end = b->cpus[i].offset + b->cpus[i].size;
		if (b->cpus[i].offset < lo || b->cpus[i].offset > hi ||
		    end > hi + (f->compressed ? 4 : 0) || (cpu_count && b->cpus[i].cpu >= (int)cpu_count))
			return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: CPU %d data of "
				       "buffer '%s' (offset %llu, %llu bytes) lies outside its data "
				       "section (offset %llu, %llu bytes)", b->cpus[i].cpu, name,
				       (unsigned long long)b->cpus[i].offset,
				       (unsigned long long)b->cpus[i].size,
				       (unsigned long long)lo, (unsigned long long)fsize);
	}
	if (c.bad)
		return cur_fail(&c, err, "a BUFFER option");
	return 0;
}

/* Section offsets of the event formats' pieces, from the options. */
struct v7_formats {
	uint64_t header_info, event_formats, cmdlines;
};

/* Loads one format section into *owned (always a copy: sections may be compressed). */
static int format_section(struct tdat_file *f, uint64_t off, unsigned id, const char *what,
			  struct bcur *out, struct ta_err *err)
{
	void *owned;
	if (!off)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: no %s section", what);
	if (section_payload(f, off, id, MAX_FORMAT_SECTION, out, &owned, err) < 0)
		return -1;
	if (owned) {
		f->owned = xrealloc(f->owned, (f->nowned + 1) * sizeof(*f->owned));
		f->owned[f->nowned++] = owned;
	}
	return 0;
}

static int v7_load_formats(struct tdat_file *f, const struct v7_formats *v, struct ta_err *err)
{
	struct evfmt_layout *l = &f->formats;
	struct bcur c;
	l->big_endian = f->big_endian;
	l->long_size = f->long_size;
	l->page_size = f->page_size;
	if (format_section(f, v->header_info, OPT_HEADER_INFO, "header info", &c, err) < 0)
		return -1;
	if (evfmt_header_part(&c, "header_page", &l->header_page, &l->header_page_len, err) < 0)
		return -1;
	if (format_section(f, v->event_formats, OPT_EVENT_FORMATS, "event formats", &c, err) < 0)
		return -1;
	l->events = c.p;
	l->events_len = c.len;
	if (v->cmdlines) {
		if (format_section(f, v->cmdlines, OPT_CMDLINES, "saved command lines", &c,
				   err) < 0)
			return -1;
		l->cmdlines_len = bcur_num(&c, 8);
		l->cmdlines = (const char *)bcur_bytes(&c, l->cmdlines_len);
		if (!l->cmdlines)
			return cur_fail(&c, err, "the saved command lines");
	}
	return 0;
}

/*
 * A v7 file is a run of sections from the end of its header to the end of
 * the file, back to back (trace-cmd finds its string sections by walking
 * them so).  Checking that they tile the file catches every truncation and
 * any section size that does not fit, including in sections nothing else
 * points to.
 */
static int v7_sections_tile(const struct tdat_file *f, uint64_t start, struct ta_err *err)
{
	/* Section names are ids into the STRINGS sections, which come last. */
	uint64_t pos = start, max_string = 0, strings = 0, named_at = 0;
	bool strings_compressed = false;
	while (pos < f->size) {
		if (f->size - pos < 16)
			return err_set(err, EXIT_BAD_INPUT, "truncated trace file: a section header "
				       "at offset %llu is cut off", (unsigned long long)pos);
		uint64_t id = bcur_num_at(f->map + pos, 2, f->big_endian);
		uint64_t size = bcur_num_at(f->map + pos + 8, 8, f->big_endian);
		if (size > f->size - pos - 16)
			return err_set(err, EXIT_BAD_INPUT, "truncated or corrupted trace file: "
				       "section %llu at offset %llu (%llu bytes) runs past the end of "
				       "the file (%zu bytes)", (unsigned long long)id,
				       (unsigned long long)pos, (unsigned long long)size, f->size);
		uint64_t flags = bcur_num_at(f->map + pos + 2, 2, f->big_endian);
		uint64_t name = bcur_num_at(f->map + pos + 4, 4, f->big_endian);
		if (id == OPT_STRINGS) {
			strings += size;
			strings_compressed |= flags & 1;
		} else if (name >= max_string) {
			max_string = name;
			named_at = pos;
		}
		pos += 16 + size;
	}
	if (max_string && (strings_compressed ? !strings : max_string >= strings))
		return err_set(err, EXIT_BAD_INPUT, "truncated or corrupted trace file: the section "
			       "at offset %llu is named by string %llu, but the string sections "
			       "hold %llu bytes", (unsigned long long)named_at,
			       (unsigned long long)max_string, (unsigned long long)strings);
	return 0;
}

static int parse_v7(struct tdat_file *f, struct bcur *c, struct stats_list *sl,
		    struct ta_err *err)
{
	const char *zname = bcur_str(c);
	const char *zver = bcur_str(c);
	uint64_t off = bcur_num(c, 8);
	if (c->bad || !zver)
		return cur_fail(c, err, "the header");
	snprintf(f->compression, sizeof(f->compression), "%s", zname);
	f->compressed = zname[0] && strcmp(zname, "none");
	if (f->compressed && strcmp(zname, "zstd"))
		return err_set(err, EXIT_BAD_INPUT,
			       "trace file compressed with '%s': only zstd is supported "
			       "(convert it with 'trace-cmd convert --compression none')", zname);
	if (!off)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: the header's options "
			       "pointer is 0 (at offset %llu)", (unsigned long long)(c->pos - 8));
	if (v7_sections_tile(f, c->pos, err) < 0)
		return -1;

	struct v7_formats fmt = { 0 };
	uint64_t visited[MAX_OPTION_SECTIONS], cpu_count = 0;
	size_t nvisited = 0;
	/* BUFFER options are checked once the CPU count (any section) is known. */
	struct { const unsigned char *d; uint64_t sz; } *bufs = NULL;
	size_t nbufs = 0;
	void **owned_all = NULL;
	size_t nowned = 0;
	int rc = 0;
	while (off && rc == 0) {
		for (size_t i = 0; i < nvisited; i++)
			if (visited[i] == off)
				rc = err_set(err, EXIT_BAD_INPUT, "corrupted trace file: the options "
					     "section at offset %llu points back into the chain",
					     (unsigned long long)off);
		if (rc == 0 && nvisited == MAX_OPTION_SECTIONS)
			rc = err_set(err, EXIT_BAD_INPUT, "corrupted trace file: over %d options "
				     "sections", MAX_OPTION_SECTIONS);
		if (rc < 0)
			break;
		visited[nvisited++] = off;
		struct bcur s;
		void *owned;
		if (section_payload(f, off, OPT_DONE, MAX_OPTIONS_SECTION, &s, &owned, err) < 0) {
			rc = -1;
			break;
		}
		owned_all = xrealloc(owned_all, (nowned + 1) * sizeof(*owned_all));
		owned_all[nowned++] = owned;
		uint64_t at = off;
		off = 0;
		for (;;) {
			uint64_t id = bcur_num(&s, 2), sz = bcur_num(&s, 4);
			const unsigned char *d = bcur_bytes(&s, sz);
			if (!d) {
				rc = cur_fail(&s, err, "an option");
				break;
			}
			if (id == OPT_DONE) {
				off = sz == 8 ? bcur_num_at(d, 8, f->big_endian) : 0;
				break;
			}
			uint64_t ptr = sz == 8 ? bcur_num_at(d, 8, f->big_endian) : 0;
			if (id >= OPT_ID_LIMIT) {
				rc = err_set(err, EXIT_BAD_INPUT, "corrupted trace file: option id "
					     "%#llx in the options section at offset %llu is unknown",
					     (unsigned long long)id, (unsigned long long)at);
				break;
			} else if (id == OPT_BUFFER) {
				bufs = xrealloc(bufs, (nbufs + 1) * sizeof(*bufs));
				bufs[nbufs].d = d;
				bufs[nbufs++].sz = sz;
			} else if (id == OPT_CPUSTAT) {
				stats_add(sl, (const char *)d, strnlen((const char *)d, sz));
			} else if (id == OPT_CPUCOUNT) {
				cpu_count = sz == 4 ? bcur_num_at(d, 4, f->big_endian) : 0;
				if (!cpu_count || cpu_count > MAX_CPUS) {
					rc = err_set(err, EXIT_BAD_INPUT, "corrupted trace file: a CPU "
						     "count of %llu in the options section at offset "
						     "%llu", (unsigned long long)cpu_count,
						     (unsigned long long)at);
					break;
				}
			} else if (id == OPT_HEADER_INFO) {
				fmt.header_info = ptr;
			} else if (id == OPT_EVENT_FORMATS) {
				fmt.event_formats = ptr;
			} else if (id == OPT_CMDLINES) {
				fmt.cmdlines = ptr;
			}
		}
	}
	for (size_t i = 0; rc == 0 && i < nbufs; i++)
		rc = parse_buffer_option(f, bufs[i].d, bufs[i].sz, cpu_count, err);
	if (rc == 0 && !nbufs)
		rc = err_set(err, EXIT_BAD_INPUT, "corrupted trace file: no BUFFER option (trace-cmd "
			     "writes one per buffer, even an empty one); the options chain is cut "
			     "or damaged");
	if (rc == 0)
		rc = v7_load_formats(f, &fmt, err);
	for (size_t i = 0; i < nowned; i++)
		free(owned_all[i]);
	free(owned_all);
	free(bufs);
	return rc;
}

/* Puts the top buffer first so "default" means the usual place. */
static void buffers_order(struct tdat_file *f)
{
	for (size_t i = 1; i < f->nbuffers; i++)
		if (!f->buffers[i].name[0]) {
			struct tdat_buffer t = f->buffers[0];
			f->buffers[0] = f->buffers[i];
			f->buffers[i] = t;
			break;
		}
}

int tdat_open(const char *path, const unsigned char *map, size_t size, struct tdat_file *f,
	      struct ta_err *err)
{
	memset(f, 0, sizeof(*f));
	if (size < 32)
		return err_set(err, EXIT_BAD_INPUT, "%s is neither a trace-cmd trace.dat nor a "
			       "perf.data file (only %zu bytes); " RECORD_HINT, path, size);
	f->map = map;
	f->size = size;

	struct bcur c = { .big_endian = f->big_endian, .p = f->map, .len = f->size };
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const unsigned char *p = bcur_bytes(&c, sizeof(magic));
	if (!p || memcmp(p, magic, sizeof(magic))) {
		tdat_close(f);
		return err_set(err, EXIT_BAD_INPUT,
			       "%s is neither a trace-cmd trace.dat nor a perf.data file (bad "
			       "magic); " RECORD_HINT, path);
	}
	const char *ver = bcur_str(&c);
	const unsigned char *eb = bcur_bytes(&c, 2);
	if (!ver || !eb) {
		tdat_close(f);
		return err_set(err, EXIT_BAD_INPUT, "%s: truncated trace-cmd header", path);
	}
	f->version = atoi(ver);
	f->big_endian = c.big_endian = eb[0] != 0;
	f->long_size = eb[1];
	f->page_size = (uint32_t)bcur_num(&c, 4);
	int rc;
	uint64_t v6_data_start = 0;
	struct stats_list sl = { 0 };
	if (f->version != 6 && f->version != 7)
		rc = err_set(err, EXIT_BAD_INPUT, "trace file version '%.8s' is not supported "
			     "(versions 6 and 7 are)", ver);
	else if (f->long_size != 4 && f->long_size != 8)
		rc = err_set(err, EXIT_BAD_INPUT, "corrupted trace file: long size %d",
			     f->long_size);
	else if (f->page_size < 1024 || f->page_size > (1u << 20) ||
		 (f->page_size & (f->page_size - 1)))
		rc = err_set(err, EXIT_BAD_INPUT, "corrupted trace file: page size %u",
			     f->page_size);
	else if (f->version == 6)
		rc = parse_v6(f, &c, &sl, &v6_data_start, err);
	else
		rc = parse_v7(f, &c, &sl, err);
	for (size_t i = 0; rc == 0 && i < f->nbuffers; i++)
		for (int k = 0; rc == 0 && k < f->buffers[i].ncpus; k++)
			rc = check_cpu_data(f, &f->buffers[i], &f->buffers[i].cpus[k], err);
	if (rc == 0)
		rc = check_layout(f, v6_data_start, err);
	stats_apply(f, &sl);
	if (rc < 0) {
		err_prefix(err, "%s", path);
		tdat_close(f);
		return -1;
	}
	buffers_order(f);
	return 0;
}

void tdat_close(struct tdat_file *f)
{
	for (size_t i = 0; i < f->nowned; i++)
		free(f->owned[i]);
	free(f->owned);
	for (size_t i = 0; i < f->nbuffers; i++) {
		free(f->buffers[i].cpus);
		free(f->buffers[i].name);
		free(f->buffers[i].clock);
		free(f->buffers[i].stats);
	}
	free(f->buffers);
	memset(f, 0, sizeof(*f));
}

static long long stat_value(const char *stats, const char *key)
{
	size_t klen = strlen(key);
	for (const char *l = stats; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, klen) && l[klen] == ':')
			return strtoll(l + klen + 1, NULL, 10);
	return -1;
}

const struct tdat_cpu_stats *tdat_cpu_stats(const struct tdat_buffer *b, int cpu)
{
	for (int i = 0; i < b->nstats; i++)
		if (b->stats[i].cpu == cpu)
			return &b->stats[i];
	return NULL;
}

long long tdat_stats_lost(const char *stats)
{
	static const char *const keys[] = { "overrun", "commit overrun", "dropped events" };
	long long total = 0;
	bool any = false;
	if (!stats)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		long long v = stat_value(stats, keys[i]);
		if (v >= 0) {
			total += v;
			any = true;
		}
	}
	return any ? total : -1;
}
