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
#include "gang-feed.h"
#include "perfdata.h"
#include "tdat.h"
#include "tsmerge.h"

#define MAX_CHUNK (64u << 20)
/* Pages a CPU stream has read are given back in steps of this size. */
#define DROP_STEP (8u << 20)

/*
 * One CPU's data: a byte source of whole pages (the file mapping, or one
 * decompressed zstd chunk at a time), walked in place, plus what the
 * integrity checks count on the way.
 */
struct cpu_stream {
	int cpu;
	const unsigned char *src;	/* uncompressed pages, or the chunk list */
	uint64_t base;			/* file offset of src */
	uint64_t len, pos;
	uint64_t dropped;		/* bytes of src already given back to the kernel */
	uint64_t extent_end;		/* src offset where the file's data extent ends */
	bool compressed;
	uint64_t chunks_left;
	unsigned char *chunk;		/* current decompressed chunk */
	size_t chunk_cap, chunk_len, chunk_pos;
	ZSTD_DCtx *zctx;		/* reused: one context per CPU, not per chunk */
	struct page_reader pr;
	uint64_t records, first_ts, last_ts;
	uint64_t empty_pages;		/* pages that hold nothing (commit 0), holes included */
	uint64_t backwards;		/* records older than the one before them */
	uint64_t late;			/* records stamped after the stats' "now ts" */
	uint64_t late_after;		/* that bound (UINT64_MAX: none recorded) */
};

struct reader {
	const struct tdat_file *f;
	int fd;				/* the file, for its holes; -1: a buffer */
	struct decoder *dec;
	struct gang_counter *g;
	struct cpu_stream *cpus;
	int ncpus;
	struct tsmerge merge;
	struct ta_err *err;
	const char *path;
	const uint64_t *known_ids;	/* evfmt_event_ids of the file */
	uint64_t unknown;		/* records of a type no format describes */
	uint32_t unknown_id;		/* the last such type */
	bool unknown_types;		/* ... and there were others */
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
	if (!size || size > MAX_CHUNK || size % f->page_size)
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
 * Gives back the mapped pages a stream has read: they are never read again,
 * and keeping them would make the peak RSS follow the file size.
 */
static void stream_drop_behind(struct cpu_stream *s)
{
	if (s->pos - s->dropped < DROP_STEP)
		return;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)(s->src + s->dropped) + pg - 1) & ~(pg - 1);
	uintptr_t hi = (uintptr_t)(s->src + s->pos) & ~(pg - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
	s->dropped = s->pos;
}

/*
 * Past the end of a data extent of the file: skips the whole pages of the
 * hole that follows (SEEK_DATA) without touching them, counted as empty
 * pages, and finds where the next extent ends (SEEK_HOLE).  A sparse file
 * then costs neither memory nor time in proportion to its apparent size.
 */
static void stream_skip_hole(struct reader *rd, struct cpu_stream *s)
{
	uint32_t ps = rd->f->page_size;
	s->extent_end = s->len;
	if (rd->fd < 0 || s->pos >= s->len)
		return;
	off_t at = (off_t)(s->base + s->pos);
	off_t data = lseek(rd->fd, at, SEEK_DATA);
	if (data < 0)
		data = (off_t)(s->base + s->len);	/* ENXIO: a hole to the end */
	uint64_t pages = data > at ? ((uint64_t)data - (uint64_t)at) / ps : 0;
	if (pages > (s->len - s->pos) / ps)
		pages = (s->len - s->pos) / ps;
	s->pos += pages * ps;
	s->dropped = s->pos;
	s->empty_pages += pages;
	off_t hole = s->pos < s->len ? lseek(rd->fd, (off_t)(s->base + s->pos), SEEK_HOLE) : -1;
	if (hole > (off_t)(s->base + s->pos) && (uint64_t)hole - s->base < s->len)
		s->extent_end = (uint64_t)hole - s->base;
}

/*
 * Loads pages until one has a record: 1 = s->pr.ev is valid, 0 = the CPU is
 * exhausted, -1 = corrupt data (err set).
 */
static int stream_fill(struct reader *rd, struct cpu_stream *s)
{
	uint32_t ps = rd->f->page_size;
	for (;;) {
		unsigned char *page;
		uint32_t len;
		if (s->compressed) {
			if (s->chunk_pos >= s->chunk_len) {
				stream_drop_behind(s);
				if (!s->chunks_left)
					return 0;
				if (stream_next_chunk(rd, s) < 0)
					return -1;
			}
			page = s->chunk + s->chunk_pos;
			len = ps;
			s->chunk_pos += ps;
		} else {
			if (s->pos >= s->extent_end)
				stream_skip_hole(rd, s);
			if (s->pos >= s->len)
				return 0;
			stream_drop_behind(s);
			/* Walked in place: the walker never writes, the mapping is read-only. */
			page = (unsigned char *)s->src + s->pos;
			len = s->len - s->pos < ps ? (uint32_t)(s->len - s->pos) : ps;
			s->pos += len;
			/*
			 * The next page's first lines, asked for while this one is
			 * walked: the hardware prefetcher stops at the page's end.
			 * A hint, which never faults.
			 */
			__builtin_prefetch(page + ps);
			__builtin_prefetch(page + ps + 64);
		}
		int rc = page_reader_attach(&s->pr, page, len);
		if (rc < 0)
			return stream_fail(rd, s, "a page header is inconsistent");
		if (rc > 0)
			return 1;
		if (!s->pr.data_len)
			s->empty_pages++;
	}
}

static int stream_open(struct reader *rd, struct cpu_stream *s, const struct tdat_cpu *c,
		       const struct tdat_buffer *b, const struct evfmt_table *t)
{
	memset(s, 0, sizeof(*s));
	s->cpu = c->cpu;
	s->base = c->offset;
	s->src = rd->f->map + c->offset;
	s->len = c->size;
	s->compressed = rd->f->compressed;
	const struct tdat_cpu_stats *st = tdat_cpu_stats(b, c->cpu);
	s->late_after = st && st->now ? st->now + st->now_slack : UINT64_MAX;
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
	if (stream_fill(rd, s) < 0)
		return -1;
	s->first_ts = s->last_ts = s->pr.ts;
	return 0;
}

static void stream_close(struct cpu_stream *s)
{
	page_reader_release(&s->pr);
	free(s->chunk);
	ZSTD_freeDCtx(s->zctx);
}

/*
 * Feeds every record of the buffer, in timestamp order across CPUs (ties:
 * the lower CPU stream first).  The stream that is due runs on for as long
 * as its records come before every other stream's next one.  Each event
 * goes to the counter where it is decoded, its code inlined (gang-feed.h),
 * the loop instantiated per rule.
 */
static inline __attribute__((always_inline)) int reader_run_as(struct reader *rd,
								const enum gang_algorithm algo)
{
	for (int i = 0; i < rd->ncpus; i++)
		if (rd->cpus[i].pr.ev)
			tsmerge_push(&rd->merge, (uint32_t)i, rd->cpus[i].pr.ts, (uint64_t)i);
	struct gang_counter *const g = rd->g;
	uint64_t fed = 0, fed_first = 0, fed_last = 0;
	while (rd->merge.n) {
		uint32_t i = (uint32_t)tsmerge_top(&rd->merge);
		struct cpu_stream *s = &rd->cpus[i];
		/* The integrity counts in registers while this stream runs on. */
		uint64_t last = s->last_ts, late_after = s->late_after, n = 0, back = 0, late = 0;
		int more;
		do {
			int size = page_reader_size(&s->pr);
			uint64_t ts = s->pr.ts;
			if (size < 0)
				return stream_fail(rd, s, "a record runs past its page");
			n++;
			back += ts < last;
			late += ts > late_after;
			last = ts;
			struct gang_event ev;
			if (decoder_decode(rd->dec, s->pr.ev, size, &ev) > 0) {
				ev.cpu = s->cpu;
				ev.ts = ts;
				gang_feed_inline(g, &ev, algo);
				if (!fed++)
					fed_first = ts;
				fed_last = ts;
			} else if (rd->dec->type.size && size >= rd->dec->type.offset +
							      rd->dec->type.size) {
				/* Not ours: but an event the file describes? */
				uint32_t id = (uint32_t)bcur_num_at(s->pr.ev + rd->dec->type.offset,
								    rd->dec->type.size,
								    rd->f->big_endian);
				if (id >= 65536 || !(rd->known_ids[id / 64] >> (id % 64) & 1)) {
					rd->unknown_types |= rd->unknown && id != rd->unknown_id;
					rd->unknown++;
					rd->unknown_id = id;
				}
			}
			more = page_reader_next(&s->pr) ? 1 : stream_fill(rd, s);
			if (more < 0)
				return -1;	/* the counter goes with the error */
		} while (more && tsmerge_runs_on(&rd->merge, s->pr.ts, i));
		s->records += n;
		s->backwards += back;
		s->late += late;
		s->last_ts = last;
		if (more)
			tsmerge_update_top(&rd->merge, s->pr.ts, i);
		else
			tsmerge_pop(&rd->merge);
	}
	if (fed)
		gang_fed(g, fed, fed_first, fed_last);
	return 0;
}

/* reader_run_as for the counter's rule. */
static int reader_run(struct reader *rd)
{
	return gang_rule(rd->g) == GANG_ALGO_SEED ? reader_run_as(rd, GANG_ALGO_SEED)
						  : reader_run_as(rd, GANG_ALGO_VCORE);
}

struct buffer_result {
	struct gang_result res;
	uint64_t records, missed, first_ts, last_ts;
};

/*
 * What the pages and the per-CPU stats say is missing or wrong: every
 * reason is a damage note on the result (the counts become lower bounds).
 */
static void buffer_check(const struct reader *rd, int opened, const struct tdat_buffer *b,
			 uint64_t malformed, struct gang_result *res)
{
	for (int i = 0; i < opened; i++) {
		const struct cpu_stream *s = &rd->cpus[i];
		if (s->empty_pages)
			gang_result_damage(res, "CPU %d: %llu pages hold no records (commit 0)",
					   s->cpu, (unsigned long long)s->empty_pages);
		if (s->backwards)
			gang_result_damage(res, "CPU %d: time goes backwards %llu times", s->cpu,
					   (unsigned long long)s->backwards);
		if (s->late)
			gang_result_damage(res, "CPU %d: %llu records are stamped after the recording "
					   "ended (its stats' now ts)", s->cpu,
					   (unsigned long long)s->late);
	}
	for (int k = 0; k < b->nstats; k++) {
		const struct tdat_cpu_stats *st = &b->stats[k];
		uint64_t n = 0;
		for (int i = 0; i < opened; i++)
			if (rd->cpus[i].cpu == st->cpu)
				n += rd->cpus[i].records;
		if (st->records >= 0 && n < (uint64_t)st->records)
			gang_result_damage(res, "CPU %d: the file holds %llu records where the CPU's "
					   "stats at the end of the recording counted %lld", st->cpu,
					   (unsigned long long)n, st->records);
	}
	if (b->dup_stats >= 0)
		gang_result_damage(res, "the stats of CPU %d appear twice", b->dup_stats);
	if (rd->unknown)
		gang_result_damage(res, "%llu records are of an event no format in the file "
				   "describes (type %u%s)", (unsigned long long)rd->unknown,
				   rd->unknown_id, rd->unknown_types ? " among others" : "");
	decoder_note_malformed(malformed, res);
}

static int analyze_buffer(const char *path, int fd, const struct tdat_file *f,
			  const struct tdat_buffer *b, const struct evfmt_table *t,
			  struct decoder *dec, const uint64_t *known_ids, enum gang_algorithm algo,
			  struct buffer_result *out, struct ta_err *err)
{
	struct reader rd = { .f = f, .fd = fd, .dec = dec, .err = err, .path = path,
			     .known_ids = known_ids };
	rd.g = gang_new(algo);
	rd.ncpus = b->ncpus;
	rd.cpus = xcalloc(b->ncpus ? b->ncpus : 1, sizeof(*rd.cpus));
	tsmerge_init(&rd.merge);
	uint64_t malformed_before = dec->malformed;
	int rc = 0, opened = 0;
	for (; rc == 0 && opened < b->ncpus; opened++)
		rc = stream_open(&rd, &rd.cpus[opened], &b->cpus[opened], b, t);
	if (rc == 0)
		rc = reader_run(&rd);
	memset(out, 0, sizeof(*out));
	if (rc == 0) {
		gang_result_get(rd.g, &out->res);
		buffer_check(&rd, opened, b, dec->malformed - malformed_before, &out->res);
		out->first_ts = UINT64_MAX;
		for (int i = 0; i < opened; i++) {
			const struct cpu_stream *s = &rd.cpus[i];
			out->records += s->records;
			if (s->records && s->first_ts < out->first_ts)
				out->first_ts = s->first_ts;
			if (s->records && s->last_ts > out->last_ts)
				out->last_ts = s->last_ts;
		}
	}
	for (int i = 0; i < opened; i++) {
		out->missed += rd.cpus[i].pr.missed;
		stream_close(&rd.cpus[i]);
	}
	gang_free(rd.g);
	tsmerge_release(&rd.merge);
	free(rd.cpus);
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
 * would block the open (hence O_NONBLOCK) and then the read forever.  *fd
 * stays open: the reader asks it where the file's holes are.
 */
static int map_input(const char *path, int *fdp, const unsigned char **map, size_t *size,
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
		return err_set(err, EXIT_BAD_INPUT, "%s is not a trace file (only %lld bytes); "
			       RECORD_HINT, path, (long long)st.st_size);
	}
	/* A small file is mapped in one go (page cache to page table without a
	 * fault per 64 KiB: 10-15 % of `exits` on an 8 MB perf.data); a large
	 * one is faulted in as read, so RSS stays bounded (offline.h). */
	void *m = mmap(NULL, st.st_size, PROT_READ,
		       MAP_PRIVATE | (st.st_size <= (32 << 20) ? MAP_POPULATE : 0), fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return err_set(err, EXIT_FAILURE_RUN, "cannot map %s: %s", path, strerror(errno));
	}
	*fdp = fd;
	*map = m;
	*size = st.st_size;
	return 0;
}

static int analyze_perf(const char *path, bool file, const unsigned char *map, size_t size,
			const struct offline_opts *opts, struct gang_result *res,
			struct offline_info *info, struct ta_err *err)
{
	struct perfdata_info pi;
	if (opts->buffer && strcmp(opts->buffer, "top"))
		return err_set(err, EXIT_BAD_INPUT, "%s is a perf.data file, which has no buffer "
			       "'%s' (-B applies to trace-cmd files)", path, opts->buffer);
	if (perfdata_analyze(path, map, size, file, opts->algorithm, res, &pi, err) < 0)
		return -1;
	snprintf(info->format, sizeof(info->format), "perf.data%s%s",
		 pi.pipe_mode ? " (pipe)" : "", pi.big_endian ? " big-endian" : "");
	snprintf(info->compression, sizeof(info->compression), "none");
	info->records = pi.records;
	info->unordered = pi.unordered;
	return 0;
}

static int analyze_tdat(const char *path, int fd, const unsigned char *map, size_t size,
			const struct offline_opts *opts, struct gang_result *res,
			struct offline_info *info, struct ta_err *err);

/*
 * Either reader; a damaged recording where not one event could be read is
 * refused (there is no lower bound to give), with what is wrong.
 */
static int analyze(const char *name, int fd, const unsigned char *map, size_t size,
		   const struct offline_opts *opts, struct gang_result *res,
		   struct offline_info *info, struct ta_err *err)
{
	memset(res, 0, sizeof(*res));
	memset(info, 0, sizeof(*info));
	int rc = perfdata_magic(map, size)
			 ? analyze_perf(name, fd >= 0, map, size, opts, res, info, err)
			 : analyze_tdat(name, fd, map, size, opts, res, info, err);
	if (rc == 0 && res->damage[0] && !res->events) {
		err_set(err, EXIT_BAD_INPUT, "%s: no KVM event could be read from this damaged "
			"recording: %s", name, res->damage);
		gang_result_release(res);
		return -1;
	}
	return rc;
}

int offline_analyze_buffer(const char *name, const unsigned char *map, size_t size,
			   const struct offline_opts *opts, struct gang_result *res,
			   struct offline_info *info, struct ta_err *err)
{
	return analyze(name, -1, map, size, opts, res, info, err);
}

int offline_analyze(const char *path, const struct offline_opts *opts, struct gang_result *res,
		    struct offline_info *info, struct ta_err *err)
{
	const unsigned char *map = NULL;
	size_t size = 0;
	int fd = -1;
	memset(res, 0, sizeof(*res));
	memset(info, 0, sizeof(*info));
	if (map_input(path, &fd, &map, &size, err) < 0)
		return -1;
	int rc = analyze(path, fd, map, size, opts, res, info, err);
	munmap((void *)map, size);
	close(fd);
	return rc;
}

/*
 * Formats of a KVM system that a kernel cannot have written (evfmt.h): their
 * records would be read as some other event, or as none, so the counts are
 * lower bounds (or, with no event left, the recording is refused).
 */
static void formats_check(const struct evfmt_layout *l, const struct evfmt_table *t,
			  struct gang_result *res)
{
	char why[200];
	int n = evfmt_formats_damage(l, t, why, sizeof(why));
	if (n)
		gang_result_damage(res, "%d damaged KVM event format%s: %s", n, n == 1 ? "" : "s",
				   why);
}

static int analyze_tdat(const char *path, int fd, const unsigned char *map, size_t size,
			const struct offline_opts *opts, struct gang_result *res,
			struct offline_info *info, struct ta_err *err)
{
	struct tdat_file f;
	struct evfmt_table table;
	struct decoder dec;
	uint64_t *known_ids = NULL;
	int rc = -1;

	if (tdat_open(path, map, size, &f, err) < 0)
		return -1;
	if (evfmt_table_build(&f.formats, &table, err) < 0 || decoder_init(&dec, &table, err) < 0) {
		err_prefix(err, "%s", path);
		goto out;
	}
	snprintf(info->format, sizeof(info->format), "trace.dat v%d", f.version);
	known_ids = xmalloc(EVFMT_ID_WORDS * sizeof(*known_ids));
	evfmt_event_ids(&f.formats, known_ids);

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
		if (analyze_buffer(path, fd, &f, &f.buffers[i], &table, &dec, known_ids,
				   opts->algorithm, &br, err) < 0) {
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
	formats_check(&f.formats, &table, res);
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
	rc = 0;
out:
	free(known_ids);
	tdat_close(&f);
	return rc;
}
