/* tdat: trace-cmd file layout parser; see tdat.h. */
#include "tdat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "../util/strbuf.h"

/* Option ids (trace-cmd.dat.v7(5)). */
enum {
	OPT_DONE = 0,
	OPT_CPUSTAT = 2,
	OPT_BUFFER = 3,
	OPT_TRACECLOCK = 4,
};

#define MAX_CPUS 65536
#define MAX_SECTION (256u << 20)	/* a decompressed options section */

/* A bounds-checked reader over a byte range; the first overrun sticks. */
struct cursor {
	const struct tdat_file *f;
	const unsigned char *p;
	size_t len, pos;
	uint64_t base;		/* file offset of p[0], for messages (0 if decompressed) */
	bool bad;
};

uint64_t tdat_read_num(const struct tdat_file *f, const void *p, int size)
{
	const unsigned char *b = p;
	uint64_t v = 0;
	for (int i = 0; i < size; i++) {
		int idx = f->big_endian ? i : size - 1 - i;
		v = (v << 8) | b[idx];
	}
	return v;
}

static uint64_t cur_num(struct cursor *c, int size)
{
	if (c->bad || c->len - c->pos < (size_t)size) {
		c->bad = true;
		return 0;
	}
	uint64_t v = tdat_read_num(c->f, c->p + c->pos, size);
	c->pos += size;
	return v;
}

static const unsigned char *cur_bytes(struct cursor *c, uint64_t n)
{
	if (c->bad || c->len - c->pos < n) {
		c->bad = true;
		return NULL;
	}
	const unsigned char *p = c->p + c->pos;
	c->pos += n;
	return p;
}

/* A NUL-terminated string inside the range (returned in place). */
static const char *cur_str(struct cursor *c)
{
	if (c->bad)
		return NULL;
	const unsigned char *end = memchr(c->p + c->pos, '\0', c->len - c->pos);
	if (!end) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p + c->pos;
	c->pos = end - c->p + 1;
	return s;
}

static int cur_fail(struct cursor *c, struct ta_err *err, const char *what)
{
	return err_set(err, EXIT_BAD_INPUT,
		       "truncated or corrupted trace file: %s runs past the end (at offset %llu)",
		       what, (unsigned long long)(c->base + c->pos));
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
};

struct stats_list {
	struct stat_acc *v;
	size_t n;
	char *current;		/* buffer the next CPU stats belong to */
};

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
	}
	long long lost = tdat_stats_lost(t);
	a->nstats++;
	if (lost >= 0)
		a->lost = (a->lost < 0 ? 0 : a->lost) + lost;
	free(t);
}

static void stats_apply(struct tdat_file *f, struct stats_list *l)
{
	for (size_t i = 0; i < f->nbuffers; i++) {
		f->buffers[i].lost_events = -1;
		for (size_t k = 0; k < l->n; k++)
			if (!strcmp(l->v[k].name, f->buffers[i].name)) {
				f->buffers[i].nstats = l->v[k].nstats;
				f->buffers[i].lost_events = l->v[k].lost;
			}
	}
	for (size_t k = 0; k < l->n; k++)
		free(l->v[k].name);
	free(l->v);
	free(l->current);
	memset(l, 0, sizeof(*l));
}

/* --- version 6 ------------------------------------------------------- */

static int skip_sized(struct cursor *c, int size_bytes, struct ta_err *err, const char *what)
{
	uint64_t n = cur_num(c, size_bytes);
	if (!cur_bytes(c, n))
		return cur_fail(c, err, what);
	return 0;
}

static int parse_v6(struct tdat_file *f, struct cursor *c, struct stats_list *sl,
		    struct ta_err *err)
{
	const unsigned char *tag = cur_bytes(c, 12);
	if (!tag || memcmp(tag, "header_page", 12))
		return c->bad ? cur_fail(c, err, "the header")
			      : err_set(err, EXIT_BAD_INPUT, "corrupted trace file: no header_page");
	if (skip_sized(c, 8, err, "header_page"))
		return -1;
	tag = cur_bytes(c, 13);
	if (!tag || memcmp(tag, "header_event", 13))
		return c->bad ? cur_fail(c, err, "the header")
			      : err_set(err, EXIT_BAD_INPUT, "corrupted trace file: no header_event");
	if (skip_sized(c, 8, err, "header_event"))
		return -1;

	uint64_t n = cur_num(c, 4);
	for (uint64_t i = 0; i < n && !c->bad; i++)
		if (skip_sized(c, 8, err, "the ftrace event formats"))
			return -1;
	uint64_t nsys = cur_num(c, 4);
	for (uint64_t s = 0; s < nsys && !c->bad; s++) {
		cur_str(c);
		uint64_t nev = cur_num(c, 4);
		for (uint64_t i = 0; i < nev && !c->bad; i++)
			if (skip_sized(c, 8, err, "the event formats"))
				return -1;
	}
	if (c->bad)
		return cur_fail(c, err, "the event formats");
	if (skip_sized(c, 4, err, "kallsyms") || skip_sized(c, 4, err, "printk formats") ||
	    skip_sized(c, 8, err, "the saved command lines"))
		return -1;

	uint64_t cpus = cur_num(c, 4);
	if (c->bad)
		return cur_fail(c, err, "the CPU count");
	if (cpus > MAX_CPUS)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: %llu CPUs",
			       (unsigned long long)cpus);

	struct tdat_buffer *top = buffer_add(f, "");
	buffer_set_cpus(top, (int)cpus);
	struct { uint64_t off; const char *name; } inst[64];
	int ninst = 0;

	tag = cur_bytes(c, 10);
	if (tag && !memcmp(tag, "options  ", 10)) {
		for (;;) {
			uint64_t id = cur_num(c, 2);
			if (c->bad || id == OPT_DONE)
				break;
			uint64_t sz = cur_num(c, 4);
			const unsigned char *d = cur_bytes(c, sz);
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
				inst[ninst].off = tdat_read_num(f, d, 8);
				inst[ninst++].name = (const char *)d + 8;
			}
		}
		tag = cur_bytes(c, 10);
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
		top->cpus[i].offset = cur_num(c, 8);
		top->cpus[i].size = cur_num(c, 8);
	}
	if (c->bad)
		return cur_fail(c, err, "the CPU data index");

	/* v6 instances: BUFFER gives where that instance's per-CPU index starts. */
	for (int i = 0; i < ninst; i++) {
		struct cursor ic = { .f = f, .p = f->map, .len = f->size, .pos = inst[i].off };
		if (inst[i].off > f->size)
			return err_set(err, EXIT_BAD_INPUT,
				       "corrupted trace file: buffer '%s' lies beyond the end",
				       inst[i].name);
		struct tdat_buffer *b = buffer_add(f, inst[i].name);
		buffer_set_cpus(b, (int)cpus);
		const unsigned char *t = cur_bytes(&ic, 10);
		if (t && memcmp(t, "flyrecord", 10))
			ic.pos -= 10;	/* some writers omit the tag for instances */
		for (uint64_t k = 0; k < cpus; k++) {
			b->cpus[k].cpu = (int)k;
			b->cpus[k].offset = cur_num(&ic, 8);
			b->cpus[k].size = cur_num(&ic, 8);
		}
		if (ic.bad)
			return cur_fail(&ic, err, "a buffer's CPU data index");
	}
	return 0;
}

/* --- version 7 ------------------------------------------------------- */

/* Section payload: decompressed into *owned when the section is compressed. */
static int section_payload(struct tdat_file *f, uint64_t off, unsigned expect_id,
			   struct cursor *out, void **owned, struct ta_err *err)
{
	struct cursor c = { .f = f, .p = f->map, .len = f->size, .pos = off };
	*owned = NULL;
	if (off > f->size)
		return err_set(err, EXIT_BAD_INPUT,
			       "truncated or corrupted trace file: a section at offset %llu "
			       "lies beyond the end (%zu bytes)", (unsigned long long)off, f->size);
	uint64_t id = cur_num(&c, 2), flags = cur_num(&c, 2);
	cur_num(&c, 4);
	uint64_t size = cur_num(&c, 8);
	if (c.bad)
		return cur_fail(&c, err, "a section header");
	if (id != expect_id)
		return err_set(err, EXIT_BAD_INPUT,
			       "corrupted trace file: expected section %u at offset %llu, found %llu",
			       expect_id, (unsigned long long)off, (unsigned long long)id);
	const unsigned char *data = cur_bytes(&c, size);
	if (!data)
		return cur_fail(&c, err, "a section");
	*out = (struct cursor){ .f = f, .p = data, .len = size, .base = off + 16 };
	if (!(flags & 1))
		return 0;
	if (strcmp(f->compression, "zstd"))
		return err_set(err, EXIT_BAD_INPUT,
			       "trace file compressed with '%s': only zstd is supported "
			       "(convert it with 'trace-cmd convert --compression none')",
			       f->compression);
	struct cursor h = *out;
	uint64_t csize = cur_num(&h, 4), usize = cur_num(&h, 4);
	const unsigned char *z = cur_bytes(&h, csize);
	if (!z)
		return cur_fail(&h, err, "a compressed section");
	if (usize > MAX_SECTION)
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
	*out = (struct cursor){ .f = f, .p = buf, .len = usize };
	return 0;
}

static int parse_buffer_option(struct tdat_file *f, const unsigned char *d, uint64_t sz,
			       struct tdat_buffer **made, struct ta_err *err)
{
	struct cursor c = { .f = f, .p = d, .len = sz };
	cur_num(&c, 8);		/* the flyrecord section; CPU offsets below are absolute */
	const char *name = cur_str(&c);
	const char *clock = cur_str(&c);
	uint64_t page = cur_num(&c, 4);
	uint64_t n = cur_num(&c, 4);
	if (c.bad)
		return cur_fail(&c, err, "a BUFFER option");
	if (n > MAX_CPUS)
		return err_set(err, EXIT_BAD_INPUT, "corrupted trace file: buffer '%s' has %llu CPUs",
			       name, (unsigned long long)n);
	if (page != f->page_size)
		return err_set(err, EXIT_BAD_INPUT,
			       "buffer '%s' uses %llu-byte pages, the file %u: not supported",
			       name, (unsigned long long)page, f->page_size);
	struct tdat_buffer *b = buffer_add(f, name);
	b->clock = xstrdup(clock);
	buffer_set_cpus(b, (int)n);
	for (uint64_t i = 0; i < n; i++) {
		b->cpus[i].cpu = (int)cur_num(&c, 4);
		b->cpus[i].offset = cur_num(&c, 8);
		b->cpus[i].size = cur_num(&c, 8);
	}
	if (c.bad)
		return cur_fail(&c, err, "a BUFFER option");
	*made = b;
	return 0;
}

static int parse_v7(struct tdat_file *f, struct cursor *c, struct stats_list *sl,
		    struct ta_err *err)
{
	const char *zname = cur_str(c);
	const char *zver = cur_str(c);
	uint64_t off = cur_num(c, 8);
	if (c->bad || !zver)
		return cur_fail(c, err, "the header");
	snprintf(f->compression, sizeof(f->compression), "%s", zname);
	f->compressed = zname[0] && strcmp(zname, "none");
	if (f->compressed && strcmp(zname, "zstd"))
		return err_set(err, EXIT_BAD_INPUT,
			       "trace file compressed with '%s': only zstd is supported "
			       "(convert it with 'trace-cmd convert --compression none')", zname);

	struct tdat_buffer *made;
	for (int sections = 0; off; sections++) {
		if (sections > 4096)
			return err_set(err, EXIT_BAD_INPUT,
				       "corrupted trace file: options sections form a loop");
		struct cursor s;
		void *owned;
		if (section_payload(f, off, OPT_DONE, &s, &owned, err) < 0)
			return -1;
		off = 0;
		for (;;) {
			uint64_t id = cur_num(&s, 2), sz = cur_num(&s, 4);
			const unsigned char *d = cur_bytes(&s, sz);
			if (!d) {
				int rc = cur_fail(&s, err, "an option");
				free(owned);
				return rc;
			}
			if (id == OPT_DONE) {
				off = sz == 8 ? tdat_read_num(f, d, 8) : 0;
				break;
			}
			if (id == OPT_BUFFER) {
				if (parse_buffer_option(f, d, sz, &made, err) < 0) {
					free(owned);
					return -1;
				}
			} else if (id == OPT_CPUSTAT) {
				stats_add(sl, (const char *)d, strnlen((const char *)d, sz));
			}
		}
		free(owned);
	}
	/* A recording without a single event has no BUFFER option at all. */
	if (!f->nbuffers)
		buffer_set_cpus(buffer_add(f, ""), 0);
	return 0;
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

int tdat_open(const char *path, struct tdat_file *f, struct ta_err *err)
{
	memset(f, 0, sizeof(*f));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(err, err_open_code(errno), "cannot open %s: %s", path,
			       strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, EXIT_BAD_INPUT, "%s is not a regular file", path);
	}
	if (st.st_size < 32) {
		close(fd);
		return err_set(err, EXIT_BAD_INPUT,
			       "%s is not a trace-cmd file (only %lld bytes)", path,
			       (long long)st.st_size);
	}
	void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return err_set(err, EXIT_FAILURE_RUN, "cannot map %s: %s", path, strerror(errno));
	f->map = m;
	f->size = st.st_size;

	struct cursor c = { .f = f, .p = f->map, .len = f->size };
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const unsigned char *p = cur_bytes(&c, sizeof(magic));
	if (!p || memcmp(p, magic, sizeof(magic))) {
		tdat_close(f);
		return err_set(err, EXIT_BAD_INPUT,
			       "%s is not a trace-cmd file (bad magic); record one with "
			       "'trace-cmd record -e kvm_hv ...'", path);
	}
	const char *ver = cur_str(&c);
	const unsigned char *eb = cur_bytes(&c, 2);
	if (!ver || !eb) {
		tdat_close(f);
		return err_set(err, EXIT_BAD_INPUT, "%s: truncated trace-cmd header", path);
	}
	f->version = atoi(ver);
	f->big_endian = eb[0] != 0;
	f->long_size = eb[1];
	f->page_size = (uint32_t)cur_num(&c, 4);
	int rc;
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
		rc = parse_v6(f, &c, &sl, err);
	else
		rc = parse_v7(f, &c, &sl, err);
	for (size_t i = 0; rc == 0 && i < f->nbuffers; i++)
		for (int k = 0; rc == 0 && k < f->buffers[i].ncpus; k++)
			rc = check_cpu_data(f, &f->buffers[i], &f->buffers[i].cpus[k], err);
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
	if (f->map)
		munmap((void *)f->map, f->size);
	for (size_t i = 0; i < f->nbuffers; i++) {
		free(f->buffers[i].cpus);
		free(f->buffers[i].name);
		free(f->buffers[i].clock);
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
