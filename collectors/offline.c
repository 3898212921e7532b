/* offline: trace-cmd file analysis; see offline.h. */
#include "offline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "../util/bcur.h"
#include "../util/strbuf.h"
#include "decode.h"
#include "evfmt.h"
#include "perfdata.h"
#include "tdat.h"

#define MAX_CHUNK (64u << 20)
/* Pages a CPU stream has read are given back in steps of this size. */
#define DROP_STEP (8u << 20)

/* One CPU's data: a byte source of whole pages plus the page walker. */
struct cpu_stream {
	int cpu;
	const unsigned char *src;	/* uncompressed data, or the chunk list */
	uint64_t len, pos;
	uint64_t dropped;		/* bytes of src already given back to the kernel */
	bool compressed;
	uint64_t chunks_left;
	unsigned char *chunk;		/* current decompressed chunk */
	size_t chunk_cap, chunk_len, chunk_pos;
	ZSTD_DCtx *zctx;		/* reused: one context per CPU, not per chunk */
	struct page_reader pr;
	bool done;
};

struct reader {
	const struct tdat_file *f;
	struct decoder *dec;
	struct gang_counter *g;
	struct cpu_stream *cpus;
	int ncpus;
	int *heap;			/* CPU stream indices, min timestamp first */
	int nheap;
	uint64_t records, first_ts, last_ts;
	struct ta_err *err;
	const char *path;
};

static int stream_fail(struct reader *rd, struct cpu_stream *s, const char *what)
{
	return err_set(rd->err, EXIT_BAD_INPUT,
		       "%s: corrupted trace data on CPU %d: %s; the file may be truncated or "
		       "damaged (re-record it, or check it with 'trace-cmd report')",
		       rd->path, s->cpu, what);
}

/* Decompresses the next chunk of a v7 zstd stream into s->chunk. */
static int stream_next_chunk(struct reader *rd, struct cpu_stream *s)
{
	const struct tdat_file *f = rd->f;
	if (s->len - s->pos < 8)
		return stream_fail(rd, s, "a compressed chunk header is cut off");
	uint32_t zsize = (uint32_t)bcur_num_at(s->src + s->pos, 4, f->big_endian);
	uint32_t size = (uint32_t)bcur_num_at(s->src + s->pos + 4, 4, f->big_endian);
	s->pos += 8;
	if (zsize > s->len - s->pos)
		return stream_fail(rd, s, "a compressed chunk runs past its data");
	if (size > MAX_CHUNK || size % f->page_size)
		return stream_fail(rd, s, "a compressed chunk has an impossible size");
	if (size > s->chunk_cap) {
		free(s->chunk);
		s->chunk = xmalloc(size);
		s->chunk_cap = size;
	}
	if (!s->zctx && !(s->zctx = ZSTD_createDCtx()))
		return stream_fail(rd, s, "no memory for a zstd context");
	size_t got = ZSTD_decompressDCtx(s->zctx, s->chunk, size, s->src + s->pos, zsize);
	if (ZSTD_isError(got) || got != size)
		return stream_fail(rd, s, "a compressed chunk does not decompress");
	s->pos += zsize;
	s->chunk_len = size;
	s->chunk_pos = 0;
	s->chunks_left--;
	return 0;
}

/*
 * Loads pages until one has a record: 1 = s->pr.ev is valid, 0 = the CPU is
 * exhausted, -1 = corrupt data (err set).
 */
/*
 * Gives back the mapped pages a stream has read: they are never read again,
 * and keeping them would make the peak RSS follow the file size.
 */
static void stream_drop_behind(struct reader *rd, struct cpu_stream *s)
{
	if (s->pos - s->dropped < DROP_STEP)
		return;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)(s->src + s->dropped) + pg - 1) & ~(pg - 1);
	uintptr_t hi = (uintptr_t)(s->src + s->pos) & ~(pg - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
	s->dropped = s->pos;
	(void)rd;
}

static int stream_fill(struct reader *rd, struct cpu_stream *s)
{
	uint32_t ps = rd->f->page_size;
	stream_drop_behind(rd, s);
	for (;;) {
		const unsigned char *page;
		uint32_t len;
		if (s->compressed) {
			if (s->chunk_pos >= s->chunk_len) {
				if (!s->chunks_left)
					return 0;
				if (stream_next_chunk(rd, s) < 0)
					return -1;
			}
			page = s->chunk + s->chunk_pos;
			len = ps;
			s->chunk_pos += ps;
		} else {
			if (s->pos >= s->len)
				return 0;
			page = s->src + s->pos;
			len = s->len - s->pos < ps ? (uint32_t)(s->len - s->pos) : ps;
			s->pos += ps;
		}
		int rc = page_reader_load(&s->pr, page, len);
		if (rc < 0)
			return stream_fail(rd, s, "a page header is inconsistent");
		if (rc > 0)
			return 1;
	}
}

static int stream_open(struct reader *rd, struct cpu_stream *s, const struct tdat_cpu *c,
		       const struct evfmt_table *t)
{
	memset(s, 0, sizeof(*s));
	s->cpu = c->cpu;
	s->src = rd->f->map + c->offset;
	s->len = c->size;
	s->compressed = rd->f->compressed;
	/* trace-cmd 3.1 records the compressed size without the 4-byte chunk count. */
	if (s->compressed && s->len)
		s->len = c->size + 4 <= rd->f->size - c->offset ? c->size + 4 : c->size;
	if (page_reader_init(&s->pr, t, rd->f->page_size) < 0)
		return err_set(rd->err, EXIT_FAILURE_RUN, "out of memory for a page reader");
	if (s->compressed && s->len) {
		if (s->len < 4)
			return stream_fail(rd, s, "the chunk count is cut off");
		s->chunks_left = bcur_num_at(s->src, 4, rd->f->big_endian);
		s->pos = 4;
		if (s->chunks_left > (s->len - 4) / 8)
			return stream_fail(rd, s, "the chunk count exceeds the data");
	}
	int rc = stream_fill(rd, s);
	if (rc < 0)
		return -1;
	s->done = rc == 0;
	return 0;
}

static void stream_close(struct cpu_stream *s)
{
	page_reader_release(&s->pr);
	free(s->chunk);
	ZSTD_freeDCtx(s->zctx);
}

static bool heap_less(const struct reader *rd, int a, int b)
{
	const struct cpu_stream *x = &rd->cpus[a], *y = &rd->cpus[b];
	if (x->pr.ts != y->pr.ts)
		return x->pr.ts < y->pr.ts;
	return a < b;
}

static void heap_down(struct reader *rd, int i)
{
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < rd->nheap && heap_less(rd, rd->heap[l], rd->heap[m]))
			m = l;
		if (l + 1 < rd->nheap && heap_less(rd, rd->heap[l + 1], rd->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		int t = rd->heap[i];
		rd->heap[i] = rd->heap[m];
		rd->heap[m] = t;
		i = m;
	}
}

/* Feeds every record of the buffer, in timestamp order across CPUs. */
static int reader_run(struct reader *rd)
{
	for (int i = 0; i < rd->ncpus; i++)
		if (!rd->cpus[i].done)
			rd->heap[rd->nheap++] = i;
	for (int i = rd->nheap / 2 - 1; i >= 0; i--)
		heap_down(rd, i);

	struct gang_event ev;
	while (rd->nheap) {
		struct cpu_stream *s = &rd->cpus[rd->heap[0]];
		int size = page_reader_size(&s->pr);
		if (size < 0)
			return stream_fail(rd, s, "a record runs past its page");
		if (rd->records++ == 0)
			rd->first_ts = s->pr.ts;
		rd->last_ts = s->pr.ts;
		if (decoder_decode(rd->dec, s->pr.ev, size, &ev) > 0) {
			ev.cpu = s->cpu;
			ev.ts = s->pr.ts;
			gang_feed(rd->g, &ev);
		}
		if (!page_reader_next(&s->pr)) {
			int rc = stream_fill(rd, s);
			if (rc < 0)
				return -1;
			if (rc == 0) {
				rd->heap[0] = rd->heap[--rd->nheap];
				s->done = true;
			}
		}
		heap_down(rd, 0);
	}
	return 0;
}

struct buffer_result {
	struct gang_result res;
	uint64_t records, missed, malformed, first_ts, last_ts;
};

static int analyze_buffer(const char *path, const struct tdat_file *f,
			  const struct tdat_buffer *b, const struct evfmt_table *t,
			  struct decoder *dec, enum gang_algorithm algo,
			  struct buffer_result *out, struct ta_err *err)
{
	struct reader rd = { .f = f, .dec = dec, .err = err, .path = path };
	rd.g = gang_new(algo);
	rd.ncpus = b->ncpus;
	rd.cpus = xcalloc(b->ncpus ? b->ncpus : 1, sizeof(*rd.cpus));
	rd.heap = xcalloc(b->ncpus ? b->ncpus : 1, sizeof(*rd.heap));
	uint64_t malformed_before = dec->malformed;
	int rc = 0, opened = 0;
	for (; rc == 0 && opened < b->ncpus; opened++)
		rc = stream_open(&rd, &rd.cpus[opened], &b->cpus[opened], t);
	if (rc == 0)
		rc = reader_run(&rd);
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < opened; i++) {
		out->missed += rd.cpus[i].pr.missed;
		stream_close(&rd.cpus[i]);
	}
	if (rc == 0) {
		gang_result_get(rd.g, &out->res);
		out->records = rd.records;
		out->first_ts = rd.first_ts;
		out->last_ts = rd.last_ts;
		out->malformed = dec->malformed - malformed_before;
	}
	gang_free(rd.g);
	free(rd.cpus);
	free(rd.heap);
	return rc;
}

/* How much a buffer's result says about KVM: run_core first, then any exit. */
static uint64_t buffer_score(const struct buffer_result *r)
{
	return r->res.run_core_events * 4 + (r->res.events - r->res.run_core_events);
}

/* "local global [mono] ..." (v6 TRACECLOCK) or "mono" (v7): the selected one. */
static void clock_name(const char *raw, char *out, size_t len)
{
	const char *open = raw ? strchr(raw, '[') : NULL;
	if (open) {
		size_t n = strcspn(open + 1, "]");
		snprintf(out, len, "%.*s", (int)n, open + 1);
	} else {
		snprintf(out, len, "%s", raw ? raw : "");
	}
}

static const char *layout_comm(void *layout, int32_t pid)
{
	static char buf[64];
	const struct evfmt_layout *l = layout;
	return evfmt_comm(l->cmdlines, l->cmdlines_len, pid, buf, sizeof(buf));
}

/*
 * Maps path read-only after refusing anything but a regular file: a FIFO
 * would block the open (hence O_NONBLOCK) and then the read forever.
 */
static int map_input(const char *path, const unsigned char **map, size_t *size,
		     struct ta_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return err_set(err, err_open_code(errno),
			       "cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, EXIT_BAD_INPUT,
			       "%s is not a regular file (a FIFO, device or directory); give the "
			       "recorded trace.dat or perf.data file", path);
	}
	if (st.st_size < 16) {
		close(fd);
		return err_set(err, EXIT_BAD_INPUT, "%s is not a trace file (only %lld bytes)",
			       path, (long long)st.st_size);
	}
	void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return err_set(err, EXIT_FAILURE_RUN, "cannot map %s: %s", path, strerror(errno));
	*map = m;
	*size = st.st_size;
	return 0;
}

static int analyze_perf(const char *path, const unsigned char *map, size_t size,
			const struct offline_opts *opts, struct gang_result *res,
			struct offline_info *info, struct ta_err *err)
{
	struct perfdata_info pi;
	if (opts->buffer && strcmp(opts->buffer, "top"))
		return err_set(err, EXIT_BAD_INPUT, "%s is a perf.data file, which has no buffer "
			       "'%s' (-B applies to trace-cmd files)", path, opts->buffer);
	if (perfdata_analyze(path, map, size, opts->algorithm, res, &pi, err) < 0)
		return -1;
	snprintf(info->format, sizeof(info->format), "perf.data%s%s",
		 pi.pipe_mode ? " (pipe)" : "", pi.big_endian ? " big-endian" : "");
	snprintf(info->compression, sizeof(info->compression), "none");
	info->records = pi.records;
	info->malformed = pi.malformed;
	info->unordered = pi.unordered;
	return 0;
}

static int analyze_tdat(const char *path, const unsigned char *map, size_t size,
			const struct offline_opts *opts, struct gang_result *res,
			struct offline_info *info, struct ta_err *err);

int offline_analyze_buffer(const char *name, const unsigned char *map, size_t size,
			   const struct offline_opts *opts, struct gang_result *res,
			   struct offline_info *info, struct ta_err *err)
{
	memset(res, 0, sizeof(*res));
	memset(info, 0, sizeof(*info));
	return perfdata_magic(map, size) ? analyze_perf(name, map, size, opts, res, info, err)
					 : analyze_tdat(name, map, size, opts, res, info, err);
}

int offline_analyze(const char *path, const struct offline_opts *opts, struct gang_result *res,
		    struct offline_info *info, struct ta_err *err)
{
	const unsigned char *map = NULL;
	size_t size = 0;
	memset(res, 0, sizeof(*res));
	memset(info, 0, sizeof(*info));
	if (map_input(path, &map, &size, err) < 0)
		return -1;
	int rc = offline_analyze_buffer(path, map, size, opts, res, info, err);
	munmap((void *)map, size);
	return rc;
}

static int analyze_tdat(const char *path, const unsigned char *map, size_t size,
			const struct offline_opts *opts, struct gang_result *res,
			struct offline_info *info, struct ta_err *err)
{
	struct tdat_file f;
	struct evfmt_table table;
	struct decoder dec;
	int rc = -1;

	if (tdat_open(path, map, size, &f, err) < 0)
		return -1;
	if (evfmt_table_build(&f.formats, &table, err) < 0 || decoder_init(&dec, &table, err) < 0) {
		err_prefix(err, "%s", path);
		goto out;
	}
	snprintf(info->format, sizeof(info->format), "trace.dat v%d", f.version);

	info->version = f.version;
	snprintf(info->compression, sizeof(info->compression), "%s",
		 f.compressed ? f.compression : "none");

	/* Which buffers to read. */
	const char *want = opts->buffer;
	size_t first = 0, last = f.nbuffers;
	if (want) {
		const char *name = strcmp(want, "top") ? want : "";
		size_t i;
		for (i = 0; i < f.nbuffers && strcmp(f.buffers[i].name, name); i++)
			;
		if (i == f.nbuffers) {
			struct strbuf names = STRBUF_INIT;
			for (size_t k = 0; k < f.nbuffers; k++)
				strbuf_addf(&names, "%s'%s'", k ? ", " : "",
					    f.buffers[k].name[0] ? f.buffers[k].name : "top");
			err_set(err, EXIT_BAD_INPUT, "%s has no buffer '%s'; it has: %s", path, want,
				strbuf_str(&names));
			strbuf_release(&names);
			goto out;
		}
		first = i;
		last = i + 1;
	}

	struct buffer_result best = { 0 };
	size_t best_idx = first;
	bool have_best = false;
	for (size_t i = first; i < last; i++) {
		struct buffer_result br;
		if (analyze_buffer(path, &f, &f.buffers[i], &table, &dec, opts->algorithm, &br,
				   err) < 0) {
			if (have_best)
				gang_result_release(&best.res);
			goto out;
		}
		if (!have_best || buffer_score(&br) > buffer_score(&best)) {
			if (have_best)
				gang_result_release(&best.res);
			best = br;
			best_idx = i;
			have_best = true;
		} else {
			gang_result_release(&br.res);
		}
	}
	if (!have_best) {
		err_set(err, EXIT_BAD_INPUT, "%s holds no trace buffer", path);
		goto out;
	}

	const struct tdat_buffer *b = &f.buffers[best_idx];
	*res = best.res;
	res->run_core_format = dec.id_run_core >= 0;
	/* The file names no thread groups: its kvm:* entries are threads (gang.h). */
	for (size_t i = 0; i < res->nreasons; i++)
		if (res->reasons[i].source != EXIT_SRC_POWER &&
		    (res->reasons[i].source != EXIT_SRC_USERSPACE || !res->run_core_events))
			res->x86_per_thread = true;
	if (b->lost_events >= 0) {
		res->lost_events = (uint64_t)b->lost_events;
		res->lost_known = true;
	} else {
		res->lost_events = best.missed;
		res->lost_known = false;
	}
	res->span_seconds = best.last_ts > best.first_ts
				    ? (double)(best.last_ts - best.first_ts) / 1e9 : 0;
	decoder_name_procs(res, layout_comm, &f.formats);
	snprintf(info->buffer, sizeof(info->buffer), "%s", b->name);
	clock_name(b->clock, info->clock, sizeof(info->clock));
	info->records = best.records;
	res->records = best.records;
	info->malformed = best.malformed;
	rc = 0;
out:
	tdat_close(&f);
	return rc;
}
