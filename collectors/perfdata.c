/* perfdata: perf.data reader; see perfdata.h. */
#include "perfdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../util/bcur.h"
#include "../util/strbuf.h"
#include "decode.h"
#include "evfmt.h"
#include "gang-feed.h"
#include "htab.h"
#include "tsmerge.h"

/* tools/perf/Documentation/perf.data-file-format.txt, include/uapi/linux/perf_event.h */
#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16
#define ATTR_SIZE_VER0 64
#define FEAT_TRACING_DATA 1

enum {
	REC_LOST = 2, REC_COMM = 3, REC_SAMPLE = 9, REC_LOST_SAMPLES = 13,
	REC_HEADER_ATTR = 64, REC_HEADER_TRACING_DATA = 66, REC_FINISHED_ROUND = 68,
	REC_AUXTRACE = 71, REC_COMPRESSED = 81,
};

enum {
	S_IP = 1 << 0, S_TID = 1 << 1, S_TIME = 1 << 2, S_ADDR = 1 << 3, S_READ = 1 << 4,
	S_CALLCHAIN = 1 << 5, S_ID = 1 << 6, S_CPU = 1 << 7, S_PERIOD = 1 << 8,
	S_STREAM_ID = 1 << 9, S_RAW = 1 << 10, S_IDENTIFIER = 1 << 16,
	/* Fields laid out after RAW: BRANCH_STACK and everything from bit 12 up. */
	S_AFTER_RAW = ~((1ULL << 11) - 1) & ~(uint64_t)S_IDENTIFIER,
};

enum {
	R_TOTAL_TIME_ENABLED = 1 << 0, R_TOTAL_TIME_RUNNING = 1 << 1, R_ID = 1 << 2,
	R_GROUP = 1 << 3, R_LOST = 1 << 4,
};

#define TYPE_TRACEPOINT 2
/* records_walk's return when a one-pass read meets time going backwards. */
#define DIRECT_OUT_OF_ORDER (-2)
#define MAX_ATTRS 65536
#define MAX_IDS (1u << 20)
#define MAX_COMMS 65536
#define ID_CACHE 64
#define SPARE_RUNS 8
/*
 * Runs waiting to be merged cost a few words each; a file without
 * FINISHED_ROUND records (old or damaged) that keeps time going backwards
 * has everything waiting fed once this many runs wait (perf itself would
 * queue the whole file).
 */
#define PENDING_RUNS 65536
/*
 * Pages already read are dropped from the mapping in steps of DROP_STEP;
 * those of runs still waiting are kept for RESIDENT_WINDOW behind the
 * reader, and past that dropped too (the merge faults them in again from
 * the page cache), so big rounds (perf record -m on many CPUs) cost page
 * faults, not memory.
 */
#define DROP_STEP (16u << 20)
#define RESIDENT_WINDOW (32u << 20)
#define RUN_DROP_STEP (2u << 20)

struct pattr {
	uint32_t type;
	uint64_t config;		/* a tracepoint's event ID */
	uint64_t sample_type, read_format;
	bool sample_id_all;		/* other records end with a sample_id */
	/* Sample layout: offsets in the payload (-1: absent) up to READ. */
	int tid_off, time_off, cpu_off, fixed;
	/*
	 * A tracepoint whose samples have nothing of variable size before RAW:
	 * where the raw size lies from a sample's start (0: not so).  The
	 * merge's second look at such a sample needs no parse.
	 */
	uint32_t raw_off;
	/* raw_off, and tid, time and cpu are sampled: the merge's fast path. */
	bool whole;
};

struct id_map {
	uint64_t id;
	uint32_t attr;
};

/* Thread names from COMM records: pid -> its last comm. */
struct comm_entry {
	int32_t pid;		/* key */
	char comm[16];
};

/*
 * A run: a stretch of the file whose samples are in time order, as perf
 * writes one CPU's part of a round.  Nothing is copied: the first pass
 * over the records only marks where runs begin and end; the runs are then
 * merged in place (a heap of runs keyed by their next event), each sample
 * decoded once, when it is due.  Memory is O(runs), a few per round.
 */
struct run {
	size_t pos, end;	/* the rest of the run: file offsets */
	size_t given_back;	/* the run's pages before this are dropped */
	struct gang_event head;	/* its next event (valid while in the heap) */
	uint64_t id;		/* creation order: equal times keep file order */
	bool in_heap;
};

/* One parsed PERF_RECORD_SAMPLE. */
struct sample_view {
	const struct pattr *a;
	uint64_t ts, pid, cpu;
	const unsigned char *raw;	/* the tracepoint record, NULL if none */
	uint32_t raw_size;
	bool excess;			/* bytes past the last field: a damaged size */
};

struct pd {
	const char *path;
	const unsigned char *map;
	size_t size;
	bool be;
	bool swap;			/* the file's byte order is not ours */
	struct ta_err *err;

	struct pattr *attrs;
	size_t nattrs;
	struct id_map *ids;
	size_t nids;
	bool ids_sorted;
	/* Every sample the lanes take is of a whole attribute (lane_native). */
	bool lanes_whole;
	struct id_cache {
		uint64_t id;
		const struct pattr *attr;
	} id_cache[ID_CACHE];		/* attr_of_id's; cleared when attrs move */
	int id_pos;		/* u64 index of the id in a sample, -1: all attrs alike */

	struct decoder dec;
	bool have_dec;

	struct htab comms;		/* struct comm_entry by pid */

	struct gang_counter *g;
	/*
	 * One pass (perfdata_analyze tries it first): every tracepoint sample
	 * so far came in time order, so the merge would feed them in file
	 * order, and each is decoded and fed where the walk finds it, into
	 * batch.  The first sample older than the one before ends the try
	 * (DIRECT_OUT_OF_ORDER) and the recording is read again the usual way.
	 */
	bool direct;
	bool keep;			/* drop no page (a one-pass try on memory, not a file) */
	struct gang_event batch[GANG_FEED_BATCH];
	size_t nbatch;
	struct tsmerge merge;		/* runs with an event due, by its time */
	struct run *cur;		/* the run the first pass extends */
	uint64_t cur_last;		/* time of its last sample */
	struct run *spare[SPARE_RUNS];	/* finished runs for reuse */
	size_t nspare;
	uint64_t nruns, max_ts, next_flush, last_fed;
	bool fed_any;

	uint64_t samples, first_ts, last_ts;
	uint64_t lost_records;		/* sum of LOST records */
	uint64_t lost_samples;		/* sum of LOST_SAMPLES of tracepoint attributes */
	bool have_lost_samples;
	bool have_ts;
	uint64_t unordered;
	/* What damage looks like (see records_check): counted, said at the end. */
	uint64_t odd_records;		/* of no possible type, or impossible size */
	uint64_t foreign_records;	/* whose sample_id names no attribute */
	uint64_t mismatched;		/* samples whose record is of no tracepoint attribute's event */
	uint64_t last_config;		/* the tracepoint ID tracepoint_config found last */
	uint64_t since_round;		/* samples after the last FINISHED_ROUND */
	struct evfmt_layout formats;	/* the tracing data, for attribute checks */
	char formats_damage[200];	/* evfmt_formats_damage's first finding */
	int damaged_formats;
	size_t drop_checked;		/* reader position of the last drop_behind */
	size_t low_dropped;		/* all below was given back and is never read again */
};

bool perfdata_magic(const unsigned char *head, size_t len)
{
	return len >= 8 && (!memcmp(head, "PERFILE2", 8) || !memcmp(head, "2ELIFREP", 8));
}

/* A number of the file's byte order. */
static inline uint64_t num(const struct pd *p, const unsigned char *at, int size)
{
	return bcur_load(at, size, p->swap);
}

static int bad(struct pd *p, uint64_t off, const char *fmt, const char *what)
{
	char msg[512], at[48] = "";
	snprintf(msg, sizeof(msg), fmt, what);
	if (off)	/* 0: not about one place in the file */
		snprintf(at, sizeof(at), " (at offset %llu)", (unsigned long long)off);
	return err_set(p->err, EXIT_BAD_INPUT,
		       "%s: corrupted perf.data: %s%s; the file may be truncated or damaged "
		       "(check it with 'perf report --header-only -i %s')", p->path, msg, at, p->path);
}

/* --- attributes and ids ---------------------------------------------- */

static int attr_add(struct pd *p, const unsigned char *a, size_t len, uint64_t off)
{
	if (len < ATTR_SIZE_VER0)
		return bad(p, off, "%s", "an event attribute is shorter than the smallest "
			   "perf_event_attr");
	if (p->nattrs >= MAX_ATTRS)
		return bad(p, off, "%s", "more than 65536 event attributes");
	p->attrs = xrealloc(p->attrs, (p->nattrs + 1) * sizeof(*p->attrs));
	memset(p->id_cache, 0, sizeof(p->id_cache));
	struct pattr *t = &p->attrs[p->nattrs++];
	t->type = (uint32_t)num(p, a, 4);
	t->config = num(p, a + 8, 8);
	/* Bit 18 of the flags; a big-endian host numbers bit-fields from the top. */
	t->sample_id_all = num(p, a + 40, 8) >> (p->be ? 45 : 18) & 1;
	t->sample_type = num(p, a + 24, 8);
	t->read_format = num(p, a + 32, 8);
	/* Everything before READ has a fixed size: IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD. */
	uint64_t st = t->sample_type;
	int at = 0;
	at += st & S_IDENTIFIER ? 8 : 0;
	at += st & S_IP ? 8 : 0;
	t->tid_off = st & S_TID ? at : -1;
	at += st & S_TID ? 8 : 0;
	t->time_off = st & S_TIME ? at : -1;
	at += st & S_TIME ? 8 : 0;
	at += (st & S_ADDR ? 8 : 0) + (st & S_ID ? 8 : 0) + (st & S_STREAM_ID ? 8 : 0);
	t->cpu_off = st & S_CPU ? at : -1;
	at += st & S_CPU ? 8 : 0;
	at += st & S_PERIOD ? 8 : 0;
	t->fixed = at;
	t->raw_off = t->type == TYPE_TRACEPOINT && st & S_RAW && !(st & (S_READ | S_CALLCHAIN))
			     ? 8 + (uint32_t)at : 0;
	t->whole = t->raw_off && t->tid_off >= 0 && t->time_off >= 0 && t->cpu_off >= 0;
	return 0;
}

static int ids_add(struct pd *p, const unsigned char *ids, uint64_t n, uint64_t off)
{
	if (n > MAX_IDS - p->nids)
		return bad(p, off, "%s", "more than a million sample ids");
	p->ids = xrealloc(p->ids, (p->nids + n + 1) * sizeof(*p->ids));
	for (uint64_t i = 0; i < n; i++) {
		p->ids[p->nids].id = num(p, ids + 8 * i, 8);
		p->ids[p->nids++].attr = (uint32_t)(p->nattrs - 1);
	}
	p->ids_sorted = false;
	memset(p->id_cache, 0, sizeof(p->id_cache));
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct id_map *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Index of the sample's id among its leading u64s, or -1 when it has none. */
static int attr_id_pos(const struct pattr *a)
{
	uint64_t st = a->sample_type;
	if (st & S_IDENTIFIER)
		return 0;
	if (!(st & S_ID))
		return -1;
	return !!(st & S_IP) + !!(st & S_TID) + !!(st & S_TIME) + !!(st & S_ADDR);
}

/* How samples name their attribute: all alike (-1) or an id at one place. */
static int attrs_settle(struct pd *p, uint64_t off)
{
	qsort(p->ids, p->nids, sizeof(*p->ids), id_cmp);
	p->ids_sorted = true;
	p->id_pos = -1;
	bool alike = true;
	for (size_t i = 1; i < p->nattrs; i++)
		if (p->attrs[i].sample_type != p->attrs[0].sample_type ||
		    p->attrs[i].read_format != p->attrs[0].read_format)
			alike = false;
	if (alike) {
		p->lanes_whole = p->nattrs && p->attrs[0].whole;
		return 0;
	}
	p->lanes_whole = true;
	for (size_t i = 0; i < p->nattrs; i++)
		if (p->attrs[i].type == TYPE_TRACEPOINT && !p->attrs[i].whole)
			p->lanes_whole = false;
	int pos = attr_id_pos(&p->attrs[0]);
	for (size_t i = 1; i < p->nattrs && pos >= 0; i++)
		if (attr_id_pos(&p->attrs[i]) != pos)
			pos = -1;
	if (pos < 0)
		return bad(p, off, "%s", "the event attributes have different sample layouts "
			   "and their samples carry no common id");
	p->id_pos = pos;
	return 0;
}

static inline const struct pattr *attr_of_id(struct pd *p, uint64_t id)
{
	/* A few ids (events x CPUs) take turns: a direct-mapped cache. */
	struct id_cache *c = &p->id_cache[id % ID_CACHE];
	if (c->attr && c->id == id)
		return c->attr;
	size_t lo = 0, hi = p->nids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nids || p->ids[lo].id != id)
		return NULL;
	c->id = id;
	return c->attr = &p->attrs[p->ids[lo].attr];
}

/* --- the event table ------------------------------------------------- */

static int formats_load(struct pd *p, const unsigned char *data, size_t len, uint64_t off)
{
	struct evfmt_layout l;
	struct evfmt_table t;
	if (p->have_dec)
		return bad(p, off, "%s", "a second tracing-data record");
	if (evfmt_scan(data, len, off, &l, p->err) < 0 || evfmt_table_build(&l, &t, p->err) < 0 ||
	    decoder_init(&p->dec, &t, p->err) < 0) {
		err_prefix(p->err, "%s", p->path);
		return -1;
	}
	if (l.big_endian != p->be)
		return bad(p, off, "%s", "the tracing data's byte order is not the file's");
	p->have_dec = true;
	p->formats = l;
	p->damaged_formats = evfmt_formats_damage(&l, &t, p->formats_damage,
						  sizeof(p->formats_damage));
	return 0;
}

/* --- ordering -------------------------------------------------------- */

/* A run joins the merge with its next event due. */
static void run_wait(struct pd *p, struct run *r)
{
	tsmerge_push(&p->merge, (uintptr_t)r, r->head.ts, r->id);
	r->in_heap = true;
}

/* Retires a finished run: into the spare pool, or freed when that is full. */
static void run_retire(struct pd *p, struct run *r)
{
	if (p->nspare < SPARE_RUNS)
		p->spare[p->nspare++] = r;
	else
		free(r);
}

static struct run *run_new(struct pd *p, size_t pos)
{
	struct run *r = p->nspare ? p->spare[--p->nspare] : xmalloc(sizeof(*r));
	memset(r, 0, sizeof(*r));
	r->pos = r->end = r->given_back = pos;
	r->id = p->nruns++;
	return r;
}

/* --- records --------------------------------------------------------- */

/*
 * The walks go through the file's records in order, but each record's
 * place follows from the size in the one before, so the CPU loads them one
 * after another and waits for memory at every cache line the hardware
 * prefetcher has not fetched yet (it stops at each 4 KiB page).  Asking
 * for the lines a page ahead hides that wait: 25-30 % of `exits` on a
 * 78 k-event perf.data read after another program filled the caches
 * (README, "Benchmarks").  Two lines, as a sample of a tracepoint takes
 * up to 128 bytes; a prefetch is a hint and never faults, past the end of
 * the mapping or on a page not mapped yet.
 */
#define PREFETCH_AHEAD 4096

static inline __attribute__((always_inline)) void prefetch_ahead(const unsigned char *rec)
{
	__builtin_prefetch(rec + PREFETCH_AHEAD);
	__builtin_prefetch(rec + PREFETCH_AHEAD + 64);
}

static void comm_set(struct pd *p, int32_t pid, const char *comm)
{
	if (pid <= 0)
		return;
	size_t slot;
	struct comm_entry *e = htab_find(&p->comms, &pid, sizeof(pid), &slot);
	if (!e) {
		if (p->comms.n >= MAX_COMMS)
			return;	/* names are cosmetic; the table stays bounded */
		e = htab_insert(&p->comms, &pid, slot);
	}
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
}

static const char *comm_get(void *ctx, int32_t pid)
{
	const struct pd *p = ctx;
	size_t slot;
	const struct comm_entry *e = pid > 0 ? htab_find(&p->comms, &pid, sizeof(pid), &slot) : NULL;
	return e ? e->comm : NULL;
}

/* Bytes a PERF_SAMPLE_READ block takes, or -1 when it would not fit in left. */
static int64_t read_size(struct pd *p, uint64_t rf, const unsigned char *at, uint64_t left)
{
	uint64_t per = 8 + (rf & R_ID ? 8 : 0) + (rf & R_LOST ? 8 : 0);
	uint64_t times = (rf & R_TOTAL_TIME_ENABLED ? 8 : 0) + (rf & R_TOTAL_TIME_RUNNING ? 8 : 0);
	if (!(rf & R_GROUP))
		return per + times <= left ? (int64_t)(per + times) : -1;
	if (left < 8)
		return -1;
	uint64_t nr = num(p, at, 8);
	if (nr > (left - 8 - (times < left - 8 ? times : left - 8)) / per || 8 + times > left)
		return -1;
	return (int64_t)(8 + times + nr * per);
}

/*
 * Parses a sample (rec, size bytes, at file offset off) as its attribute's
 * sample_type says, checking every length against the record.
 */
static inline __attribute__((always_inline)) int
sample_parse(struct pd *p, const unsigned char *rec, uint32_t size, uint64_t off,
	     struct sample_view *v)
{
	const unsigned char *q = rec + 8;
	uint64_t left = size - 8;
	if (!p->nattrs)
		return bad(p, off, "%s", "a sample comes before any event attribute");
	if (!p->ids_sorted && attrs_settle(p, off) < 0)
		return -1;
	const struct pattr *a = &p->attrs[0];
	if (p->id_pos >= 0) {
		if (left < 8 * (uint64_t)(p->id_pos + 1))
			return bad(p, off, "%s", "a sample is too short for its id");
		uint64_t id = num(p, q + 8 * p->id_pos, 8);
		if (!(a = attr_of_id(p, id)))
			return bad(p, off, "%s", "a sample's id belongs to no event attribute");
	}
	uint64_t st = a->sample_type;
	if (left < (uint64_t)a->fixed)
		return bad(p, off, "%s", "a sample is shorter than its sample_type says");
	v->a = a;
	v->pid = a->tid_off >= 0 ? num(p, q + a->tid_off, 4) : 0;
	v->ts = a->time_off >= 0 ? num(p, q + a->time_off, 8) : 0;
	v->cpu = a->cpu_off >= 0 ? num(p, q + a->cpu_off, 4) : 0;
	v->raw = NULL;
	q += a->fixed;
	left -= a->fixed;
	if (st & S_READ) {
		int64_t n = read_size(p, a->read_format, q, left);
		if (n < 0)
			return bad(p, off, "%s", "a sample's read values run past the record");
		q += n;
		left -= n;
	}
	if (st & S_CALLCHAIN) {
		uint64_t nr = left >= 8 ? num(p, q, 8) : UINT64_MAX;
		if (left < 8 || nr > (left - 8) / 8)
			return bad(p, off, "%s", "a sample's call chain runs past the record");
		q += 8 + 8 * nr;
		left -= 8 + 8 * nr;
	}
	if (!(st & S_RAW) || a->type != TYPE_TRACEPOINT)
		return 0;
	if (left < 4)
		return bad(p, off, "%s", "a sample's raw data is cut off");
	uint64_t raw = num(p, q, 4);
	if (raw > left - 4)
		return bad(p, off, "%s", "a sample's raw data runs past the record");
	v->raw = q + 4;
	v->raw_size = (uint32_t)raw;
	/* Nothing follows RAW unless a later field is sampled: more is a damaged size. */
	v->excess = !(st & S_AFTER_RAW) && left - 4 > raw;
	return 0;
}

/*
 * sample_parse for the common sample: its attribute settled, a tracepoint
 * whose layout puts nothing of variable size before RAW (raw_off), read at
 * fixed offsets with only the checks that can fail (the record holds the
 * raw size, the raw data fits).  Fills what the first pass uses (not pid or
 * cpu); false when the sample needs sample_parse, which then says what is
 * wrong with it.
 */
static inline __attribute__((always_inline)) bool
sample_quick(struct pd *p, const unsigned char *rec, uint32_t size, struct sample_view *v)
{
	if (!p->ids_sorted || !p->nattrs)
		return false;	/* (no attribute yet: sample_parse says so) */
	const struct pattr *a = p->attrs;
	if (p->id_pos >= 0) {
		if (size < 16 + 8 * (uint32_t)p->id_pos ||
		    !(a = attr_of_id(p, num(p, rec + 8 + 8 * p->id_pos, 8))))
			return false;
	}
	if (!a->raw_off || size < a->raw_off + 4)
		return false;
	uint32_t raw = (uint32_t)num(p, rec + a->raw_off, 4), left = size - a->raw_off - 4;
	if (raw > left)
		return false;
	v->a = a;
	v->ts = a->time_off >= 0 ? num(p, rec + 8 + a->time_off, 8) : 0;
	v->raw = rec + a->raw_off + 4;
	v->raw_size = raw;
	v->excess = !(a->sample_type & S_AFTER_RAW) && left > raw;
	return true;
}

static void drop_range(const struct pd *p, size_t from, size_t to)
{
	if (p->keep)
		return;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)(p->map + from) + pg - 1) & ~(pg - 1);
	uintptr_t hi = (uintptr_t)(p->map + to) & ~(pg - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/*
 * Bytes that follow a record outside its own size: the tracing data after
 * HEADER_TRACING_DATA, the trace data after AUXTRACE (checked by the first
 * pass against the end of the data).
 */
static uint64_t record_payload(const struct pd *p, const unsigned char *rec, uint32_t type,
			       uint32_t size)
{
	if (type == REC_HEADER_TRACING_DATA && size >= 12)
		return num(p, rec + 8, 4);
	if (type == REC_AUXTRACE && size >= 16)
		return num(p, rec + 8, 8);
	return 0;
}

/*
 * Moves r to its next event of ours, decoded into *ev; false when the run
 * has none left.  The records were checked by the first pass.  swap is a
 * constant per instantiation; the run's position is kept in a register
 * (ev's stores could alias it).
 */
static inline __attribute__((always_inline)) bool
sample_event_as(struct pd *p, const unsigned char *rec, uint32_t size, size_t at,
		struct gang_event *ev, const bool swap)
{
	const struct pattr *a = p->id_pos < 0 ? &p->attrs[0]
			      : attr_of_id(p, bcur_load(rec + 8 + 8 * p->id_pos, 8, swap));
	if (a && a->whole) {
		/* Checked by the first pass: only the offsets to follow. */
		const unsigned char *q = rec + 8;
		uint32_t raw = (uint32_t)bcur_load(rec + a->raw_off, 4, swap);
		int cpu = (int)bcur_load(q + a->cpu_off, 4, swap);
		uint64_t ts = bcur_load(q + a->time_off, 8, swap);
		int32_t tgid = (int32_t)bcur_load(q + a->tid_off, 4, swap);
		if (decoder_decode(&p->dec, rec + a->raw_off + 4, (int)raw, ev) <= 0)
			return false;
		ev->cpu = cpu;
		ev->ts = ts;
		ev->tgid = tgid;
		return true;
	}
	struct sample_view v = { 0 };
	if (sample_parse(p, rec, size, at, &v) < 0 || !v.raw ||
	    decoder_decode(&p->dec, v.raw, (int)v.raw_size, ev) <= 0)
		return false;
	ev->cpu = (int)v.cpu;
	ev->ts = v.ts;
	ev->tgid = (int32_t)v.pid;
	return true;
}

/*
 * Moves r to its next event of ours, decoded into *ev; false when the run
 * has none left.  The records were checked by the first pass.  swap is a
 * constant per instantiation; the run's position is kept in a register
 * (ev's stores could alias it).
 */
static inline __attribute__((always_inline)) bool
run_next_as(struct pd *p, struct run *r, struct gang_event *ev, const bool swap)
{
	size_t pos = r->pos;
	const size_t end = r->end;
	/* Runs do not overlap: what a run has read is read by no one again. */
	if (pos - r->given_back >= RUN_DROP_STEP) {
		drop_range(p, r->given_back, pos);
		r->given_back = pos;
	}
	while (pos < end) {
		const unsigned char *rec = p->map + pos;
		prefetch_ahead(rec);
		uint32_t type = (uint32_t)bcur_load(rec, 4, swap);
		uint32_t size = (uint32_t)bcur_load(rec + 6, 2, swap);
		size_t at = pos;
		if (type != REC_SAMPLE) {
			pos += size + record_payload(p, rec, type, size);
			continue;
		}
		pos += size;
		if (sample_event_as(p, rec, size, at, ev, swap)) {
			r->pos = pos;
			return true;
		}
	}
	r->pos = pos;
	return false;
}

/* A one-pass read's sample, checked by sample(): decoded and fed (batched). */
static inline __attribute__((always_inline)) void
direct_feed_as(struct pd *p, const unsigned char *rec, uint32_t size, size_t at, const bool swap)
{
	if (sample_event_as(p, rec, size, at, &p->batch[p->nbatch], swap) &&
	    ++p->nbatch == GANG_FEED_BATCH) {
		gang_feed_many(p->g, p->batch, p->nbatch);
		p->nbatch = 0;
	}
}

/* run_next_as into the run's own head: where a run starts. */
static bool run_advance(struct pd *p, struct run *r)
{
	return p->swap ? run_next_as(p, r, &r->head, true) : run_next_as(p, r, &r->head, false);
}

/*
 * Feeds every waiting event not newer than limit, in time order (equal
 * times: the earlier run first).  The due run feeds on for as long as it
 * stays before every other one, its events decoded straight into the batch
 * the counter takes (a run's head is copied only where it stops).  A run's
 * events are in time order (the first pass cut runs where time went
 * backwards), so only the first of each turn can be older than the event
 * fed before it.
 */
static inline __attribute__((always_inline)) void q_flush_as(struct pd *p, uint64_t limit,
							     const bool swap)
{
	struct tsmerge *m = &p->merge;
	struct gang_event batch[GANG_FEED_BATCH];
	size_t n = 0;
	while (m->n && tsmerge_top_ts(m) <= limit) {
		struct run *r = (struct run *)tsmerge_top(m);
		if (p->fed_any && r->head.ts < p->last_fed)
			p->unordered++;
		p->fed_any = true;
		uint64_t last = r->head.ts;
		/* The runner-up does not move during the turn (in a register: ev's stores). */
		const struct tsmerge_item bound = m->bound;
		batch[n++] = r->head;
		bool more;
		for (;;) {
			if (n == GANG_FEED_BATCH) {
				gang_feed_many(p->g, batch, n);
				n = 0;
			}
			struct gang_event *ev = &batch[n];
			if (!(more = run_next_as(p, r, ev, swap)))
				break;
			uint64_t ts = ev->ts;
			if (ts > limit || !tsmerge_before(&bound, ts, r->id)) {
				r->head = *ev;
				break;
			}
			last = ts;
			n++;
		}
		p->last_fed = last;
		if (more) {
			tsmerge_update_top(m, r->head.ts, r->id);
			continue;
		}
		tsmerge_pop(m);
		r->in_heap = false;
		if (r != p->cur)
			run_retire(p, r);
	}
	gang_feed_many(p->g, batch, n);
}

/* q_flush_as for the file's byte order. */
static void q_flush(struct pd *p, uint64_t limit)
{
	if (p->swap)
		q_flush_as(p, limit, true);
	else
		q_flush_as(p, limit, false);
}

/* Where the earliest waiting run resumes (the file before it is done with). */
static size_t q_low_water(const struct pd *p, size_t walked)
{
	size_t low = walked;
	for (size_t i = 0; i < p->merge.n; i++)
		if (((const struct run *)p->merge.heap[i].src)->pos < low)
			low = ((const struct run *)p->merge.heap[i].src)->pos;
	if (p->cur && p->cur->pos < low)
		low = p->cur->pos;
	return low;
}

/*
 * True when some tracepoint attribute records event ID id.  A sample's raw
 * record must be one of those: samples of attributes alike are not looked
 * up by id (attrs_settle), so the check is against them all, and what it
 * catches is a raw record read from the wrong place (a damaged sample_type
 * or size), whose "type" is then noise.
 */
static bool tracepoint_config(struct pd *p, const struct pattr *a, uint64_t id)
{
	if ((a->type == TYPE_TRACEPOINT && a->config == id) || id == p->last_config)
		return true;	/* the sample's own attribute, as always but for damage */
	for (size_t i = 0; i < p->nattrs; i++)
		if (p->attrs[i].type == TYPE_TRACEPOINT && p->attrs[i].config == id) {
			p->last_config = id;
			return true;
		}
	return false;
}

/*
 * First pass over a sample at pos (next: the record after it): statistics,
 * and the run it belongs to (a new one when time goes backwards).
 */
static int sample(struct pd *p, const unsigned char *rec, uint32_t size, size_t pos, size_t next)
{
	struct sample_view v;
	if (!sample_quick(p, rec, size, &v)) {
		v = (struct sample_view){ 0 };
		if (sample_parse(p, rec, size, pos, &v) < 0)
			return -1;
	}
	p->samples++;
	p->since_round++;
	if (v.excess)
		p->odd_records++;
	if (v.raw && p->have_dec && v.raw_size >= (uint32_t)(p->dec.type.offset + p->dec.type.size) &&
	    !tracepoint_config(p, v.a, (uint64_t)decoder_field(&p->dec, &p->dec.type, v.raw)))
		p->mismatched++;
	if (v.a->time_off >= 0) {
		if (!p->have_ts || v.ts < p->first_ts)
			p->first_ts = v.ts;
		if (!p->have_ts || v.ts > p->last_ts)
			p->last_ts = v.ts;
		p->have_ts = true;
		if (v.ts > p->max_ts)
			p->max_ts = v.ts;
	}
	if (!v.raw)
		return 0;
	if (!p->have_dec)
		return bad(p, pos, "%s", "a tracepoint sample comes before the event formats");
	struct run *r = p->cur;
	if (r && v.ts < p->cur_last) {
		if (p->direct)
			return DIRECT_OUT_OF_ORDER;
		if (!r->in_heap)
			run_retire(p, r);
		r = NULL;
	}
	if (!r)
		r = p->cur = run_new(p, pos);
	p->cur_last = v.ts;
	r->end = next;
	if (p->direct) {
		/* Nothing waits: the pages behind are done with (drop_behind). */
		r->pos = next;
		if (p->swap)
			direct_feed_as(p, rec, size, pos, true);
		else
			direct_feed_as(p, rec, size, pos, false);
		return 0;
	}
	if (!r->in_heap && run_advance(p, r))
		run_wait(p, r);
	if (p->merge.n > PENDING_RUNS)
		q_flush(p, UINT64_MAX);
	return 0;
}

/*
 * What a lane of n samples (times lo to last, in order) that stopped at pos
 * moves: the statistics and the run's end.
 */
static inline __attribute__((always_inline)) void
lane_done(struct pd *p, struct run *r, size_t pos, uint64_t n, uint64_t lo, uint64_t last)
{
	if (!n)
		return;
	p->samples += n;
	p->since_round += n;
	/* Time order: the lane's first time is its least, its last its greatest. */
	if (!p->have_ts || lo < p->first_ts)
		p->first_ts = lo;
	if (!p->have_ts || last > p->last_ts)
		p->last_ts = last;
	p->have_ts = true;
	if (last > p->max_ts)
		p->max_ts = last;
	p->cur_last = last;
	r->end = pos;
	if (p->direct)
		r->pos = pos;
}

/*
 * The first pass over the samples that follow one sample() took, in the
 * run it extended (r, already waiting in the merge): while the records are
 * samples of a tracepoint of a fixed layout (raw_off) with a time, holding
 * exactly their raw record, of the event their attribute names, in time
 * order, none of sample()'s checks can find anything and no run begins, so
 * only the run's end and the statistics move, kept in registers.  Stops
 * at the first record that is anything else (sample() or records_walk takes
 * it), and where drop_behind is next due.  swap is a constant per
 * instantiation.  Returns where it stopped.
 */
static inline __attribute__((always_inline)) size_t
lane_as(struct pd *p, struct run *r, size_t pos, size_t end, const bool swap)
{
	const struct field_ref type = p->dec.type;
	const size_t stop = p->drop_checked + DROP_STEP;
	uint64_t last = p->cur_last, lo = 0, n = 0;
	while (pos < end && end - pos >= 8 && pos < stop) {
		const unsigned char *rec = p->map + pos;
		prefetch_ahead(rec);
		uint32_t size = (uint32_t)bcur_load(rec + 6, 2, swap);
		if (bcur_load(rec, 4, swap) != REC_SAMPLE || size < 16 || size > end - pos)
			break;
		const struct pattr *a = &p->attrs[0];
		if (p->id_pos >= 0 && (size < 16 + 8 * (uint32_t)p->id_pos ||
				       !(a = attr_of_id(p, bcur_load(rec + 8 + 8 * p->id_pos, 8,
								      swap)))))
			break;
		if (!a->raw_off || a->time_off < 0 || size < a->raw_off + 4)
			break;
		uint32_t raw = (uint32_t)bcur_load(rec + a->raw_off, 4, swap);
		if (raw != size - a->raw_off - 4 || raw < (uint32_t)(type.offset + type.size) ||
		    (uint64_t)decoder_field(&p->dec, &type, rec + a->raw_off + 4) != a->config)
			break;
		uint64_t ts = bcur_load(rec + 8 + a->time_off, 8, swap);
		if (ts < last)
			break;
		if (!n)
			lo = ts;
		if (p->direct && a->whole) {
			/* What sample_event_as would read again: a, raw and ts are known. */
			struct gang_event *ev = &p->batch[p->nbatch];
			int cpu = (int)bcur_load(rec + 8 + a->cpu_off, 4, swap);
			int32_t tgid = (int32_t)bcur_load(rec + 8 + a->tid_off, 4, swap);
			if (decoder_decode(&p->dec, rec + a->raw_off + 4, (int)raw, ev) > 0) {
				ev->cpu = cpu;
				ev->ts = ts;
				ev->tgid = tgid;
				if (++p->nbatch == GANG_FEED_BATCH) {
					gang_feed_many(p->g, p->batch, p->nbatch);
					p->nbatch = 0;
				}
			}
		} else if (p->direct) {
			direct_feed_as(p, rec, size, pos, swap);
		}
		last = ts;
		n++;
		pos += size;
	}
	lane_done(p, r, pos, n, lo, last);
	return pos;
}

/* An attribute as lane_native holds it. */
struct lane_attr {
	uint64_t id;		/* the sample id that names it */
	uint64_t config;	/* its tracepoint's ID */
	uint32_t raw_off;	/* where the raw size lies, from the record's start */
	uint32_t time_off, cpu_off, tid_off;	/* the same for TIME, CPU and TID */
};

static void lane_attr_set(struct lane_attr *la, const struct pattr *a, uint64_t id)
{
	*la = (struct lane_attr){ .id = id, .config = a->config, .raw_off = a->raw_off,
				  .time_off = 8 + (uint32_t)a->time_off,
				  .cpu_off = 8 + (uint32_t)a->cpu_off,
				  .tid_off = 8 + (uint32_t)a->tid_off };
}

/*
 * lane_as for a one-pass read in our byte order whose attributes are all
 * whole and whose common_type is an unsigned 2-byte field (what perf writes
 * on every host): the same checks, the same events fed, with what lane_as
 * reads from p and from the attributes for each sample held in locals
 * instead - the attributes of the last two sample ids (our two events take
 * turns), a copy of the decoder: `exits` on a 78 k-event perf.data 16.5 M
 * -> 13.2 M instructions, 8 % less CPU.  Each event goes to the counter
 * where it is decoded, the counter's code inlined (gang-feed.h) and the
 * loop instantiated per rule, instead of in batches of 64: the counting
 * now runs while the walk waits for the recording's memory, 13.1 M -> 10.9
 * M instructions and 12-14 % less CPU; no time kept per sample for the
 * file's or the counter's first (see below): 10.4 M (README, "Benchmarks").
 */
static inline __attribute__((always_inline)) size_t
lane_native_as(struct pd *p, struct run *r, size_t pos, size_t end, const enum gang_algorithm algo)
{
	const size_t stop = p->drop_checked + DROP_STEP;
	const unsigned char *const map = p->map;
	const int id_pos = p->id_pos;
	struct decoder dec = p->dec;
	const uint32_t type_off = (uint32_t)dec.type.offset, type_end = type_off + 2;
	struct gang_counter *const g = p->g;
	if (p->nbatch) {	/* the counter takes events in order */
		gang_feed_many(g, p->batch, p->nbatch);
		p->nbatch = 0;
	}
	/*
	 * Neither the first time of the file nor the counter's first event can
	 * be in the lane (sample() just took a timed sample, the counter has
	 * events, and every time here is at least cur_last): no sample's time
	 * is kept for them.  Otherwise sample() takes the records.
	 */
	if (!p->have_ts || p->cur_last < p->first_ts || !gang_events(g))
		return pos;
	uint64_t fed = 0, fed_last = 0;
	struct lane_attr la[2];
	unsigned have = 0, victim = 0;	/* bit i: la[i] holds an attribute */
	if (id_pos < 0) {
		lane_attr_set(&la[0], &p->attrs[0], 0);
		have = 1;
	}
	const uint64_t lo = p->cur_last;	/* for lane_done: no earlier than first_ts */
	uint64_t last = lo, n = 0;
	/* pos < end, end - pos >= 8 and pos < stop, in one comparison. */
	const size_t limit = end < 8 ? 0 : end - 7 < stop ? end - 7 : stop;
	while (pos < limit) {
		const unsigned char *rec = map + pos;
		prefetch_ahead(rec);
		uint32_t type;
		uint16_t size16;
		memcpy(&type, rec, 4);
		memcpy(&size16, rec + 6, 2);
		uint32_t size = size16;
		if (type != REC_SAMPLE || size < 16 || size > end - pos)
			break;
		const struct lane_attr *a = &la[0];
		if (id_pos >= 0) {
			uint64_t id;
			if (size < 16 + 8 * (uint32_t)id_pos)
				break;
			memcpy(&id, rec + 8 + 8 * id_pos, 8);
			if (!(have & 1) || la[0].id != id) {
				if ((have & 2) && la[1].id == id) {
					a = &la[1];
				} else {
					const struct pattr *pa = attr_of_id(p, id);
					if (!pa || !pa->whole)
						break;
					lane_attr_set(&la[victim], pa, id);
					have |= 1u << victim;
					a = &la[victim];
					victim ^= 1;
				}
			}
		}
		if (size < a->raw_off + 4)
			break;
		uint32_t raw;
		uint16_t id16;
		uint64_t ts;
		memcpy(&raw, rec + a->raw_off, 4);
		if (raw != size - a->raw_off - 4 || raw < type_end)
			break;
		memcpy(&id16, rec + a->raw_off + 4 + type_off, 2);
		if (id16 != a->config)
			break;
		memcpy(&ts, rec + a->time_off, 8);
		if (ts < last)
			break;
		int32_t cpu, tgid;
		memcpy(&cpu, rec + a->cpu_off, 4);
		memcpy(&tgid, rec + a->tid_off, 4);
		struct gang_event ev;
		if (decoder_decode(&dec, rec + a->raw_off + 4, (int)raw, &ev) > 0) {
			ev.cpu = cpu;
			ev.ts = ts;
			ev.tgid = tgid;
			gang_feed_inline(g, &ev, algo);
			fed++;
			fed_last = ts;
		}
		last = ts;
		n++;
		pos += size;
	}
	if (fed)	/* the counter had events: lo is not its first time */
		gang_fed(g, fed, lo, fed_last);
	p->dec.malformed = dec.malformed;
	lane_done(p, r, pos, n, lo, last);
	return pos;
}

/* lane_native_as for the counter's rule. */
static size_t lane_native(struct pd *p, struct run *r, size_t pos, size_t end)
{
	return gang_rule(p->g) == GANG_ALGO_SEED ? lane_native_as(p, r, pos, end, GANG_ALGO_SEED)
						 : lane_native_as(p, r, pos, end, GANG_ALGO_VCORE);
}

/* lane_as for the file's byte order (or lane_native), where a lane can be: see there. */
static size_t samples_lane(struct pd *p, size_t pos, size_t end)
{
	struct run *r = p->cur;
	if (!r || (!r->in_heap && !p->direct) || !p->ids_sorted || !p->have_dec ||
	    !p->dec.type.size)
		return pos;
	if (p->direct && !p->swap && p->lanes_whole && p->dec.type.size == 2 &&
	    !p->dec.type.shift)
		return lane_native(p, r, pos, end);
	return p->swap ? lane_as(p, r, pos, end, true) : lane_as(p, r, pos, end, false);
}

/*
 * The attribute a non-sample record belongs to, from its sample_id trailer
 * (sample_id_all): IDENTIFIER is its last u64, else ID comes before
 * STREAM_ID and CPU.  NULL when the record does not say.
 */
static const struct pattr *trailer_attr(struct pd *p, const unsigned char *rec, uint32_t size)
{
	if (!p->nattrs)
		return NULL;	/* a pipe-mode record before any HEADER_ATTR */
	if (p->nattrs == 1)
		return &p->attrs[0];
	uint64_t st = p->attrs[0].sample_type;
	if (p->id_pos < 0 && p->nattrs)
		return &p->attrs[0];	/* all attributes alike: any will do */
	uint32_t back = st & S_IDENTIFIER ? 8
		      : st & S_ID ? 8 * (1 + !!(st & S_STREAM_ID) + !!(st & S_CPU)) : 0;
	if (!back || size < 16 + back)
		return NULL;
	return attr_of_id(p, num(p, rec + size - back, 8));
}

/*
 * Whether a kernel record's body (len bytes between its header and its
 * sample_id) has the shape its type prescribes (include/uapi/linux/
 * perf_event.h): the fixed-size types their size, the named ones a
 * printable, NUL-ended name.  Unknown types pass.
 */
static bool body_plausible(uint32_t type, const unsigned char *b, uint32_t len)
{
	static const int fixed[] = { [2] = 16, [4] = 24, [5] = 24, [6] = 24, [7] = 24,
				     [11] = 24, [12] = 8, [13] = 8, [14] = 0, [15] = 8,
				     [18] = 16, [21] = 8 };
	if (type < sizeof(fixed) / sizeof(fixed[0]) && (fixed[type] || type == 14))
		return len == (uint32_t)fixed[type];
	uint32_t name = type == 1 ? 32 : type == 3 ? 8 : type == 10 ? 64 : 0;
	if (!name)
		return true;
	if (len <= name)
		return false;
	const unsigned char *nul = memchr(b + name, '\0', len - name);
	if (!nul || nul == b + name)
		return false;
	/* Eight bytes at a time (every mapping's file name): any below 0x20, any 0x7f. */
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	const unsigned char *c = b + name;
	for (; nul - c >= 8; c += 8) {
		uint64_t w, del;
		memcpy(&w, c, 8);
		del = w ^ (0x7f * ones);
		if ((((w - 0x20 * ones) & ~w) | ((del - ones) & ~del)) & highs)
			return false;
	}
	for (; c < nul; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

/*
 * Non-sample records that cannot be: type 0, types past anything perf
 * writes, a FINISHED_ROUND with a body; and, where the attributes promise
 * a sample_id on every kernel record (sample_id_all, with an id in it),
 * kernel records whose id belongs to no attribute or whose body is not the
 * shape of their type.  perf synthesizes the records of threads that
 * existed before it with an all-zero sample_id; those come before the
 * first sample.  Such a record is usually a sample whose header was
 * damaged: counted, so the result says it may miss events.
 */
static void record_check(struct pd *p, const unsigned char *rec, uint32_t type, uint32_t size)
{
	if (!type || type >= 128 || (type == REC_FINISHED_ROUND && size != 8)) {
		p->odd_records++;
		return;
	}
	if (type >= 64 || !p->nattrs || !p->nids || !p->attrs[0].sample_id_all ||
	    (!p->ids_sorted && attrs_settle(p, 0) < 0))
		return;
	uint64_t st = p->attrs[0].sample_type;
	if (!(st & (S_IDENTIFIER | S_ID)))
		return;
	uint32_t trailer = 8 * (!!(st & S_TID) + !!(st & S_TIME) + !!(st & S_ID) +
				!!(st & S_STREAM_ID) + !!(st & S_CPU) + !!(st & S_IDENTIFIER));
	if (size < 8 + trailer) {
		p->foreign_records++;
		return;
	}
	const unsigned char *t = rec + size - trailer;
	uint64_t id = st & S_IDENTIFIER ? num(p, rec + size - 8, 8)
		    : num(p, t + 8 * (!!(st & S_TID) + !!(st & S_TIME)), 8);
	bool zero = !t[0] && !memcmp(t, t + 1, trailer - 1);
	const struct pattr *a = attr_of_id(p, id);
	uint32_t body = size - 8 - trailer;
	/* READ: pid, tid, then the values its read_format lays out. */
	bool read_ok = type != 8 ||
		       (body >= 8 && read_size(p, (a ? a : &p->attrs[0])->read_format, rec + 16,
					       body - 8) == (int64_t)body - 8);
	if ((!a && (!zero || p->samples)) || !read_ok || !body_plausible(type, rec + 8, body))
		p->foreign_records++;
}

/*
 * perf 6.x writes LOST_SAMPLES per event at the end of a recording from the
 * kernel's exact per-event count (read_format LOST); the ring buffer's LOST
 * records count the same losses again, with side-band records mixed in.
 * So when LOST_SAMPLES exist, those of tracepoint events are the loss.
 */
static int lost_samples(struct pd *p, const unsigned char *rec, uint32_t size, uint64_t off)
{
	if (!p->ids_sorted && p->nattrs && attrs_settle(p, off) < 0)
		return -1;
	const struct pattr *a = trailer_attr(p, rec, size);
	p->have_lost_samples = true;
	if (!a || a->type == TYPE_TRACEPOINT)
		p->lost_samples += num(p, rec + 8, 8);
	return 0;
}

/*
 * Gives back the pages behind the reader at pos.  Below the earliest
 * waiting run nothing is read again; between it and RESIDENT_WINDOW behind
 * the reader, pages are dropped too and the merge faults them in again, so
 * that stretch is dropped anew each time (the earliest run only moves on).
 */
static void drop_behind(struct pd *p, size_t pos)
{
	if (pos - p->drop_checked < DROP_STEP)
		return;
	p->drop_checked = pos;
	size_t low = q_low_water(p, pos);
	size_t upto = pos - low > RESIDENT_WINDOW ? pos - RESIDENT_WINDOW : low;
	if (upto > p->low_dropped)
		drop_range(p, p->low_dropped, upto);
	p->low_dropped = low & ~((size_t)sysconf(_SC_PAGESIZE) - 1);
}

/* Walks the records in [pos, end); pipe mode also finds attrs and formats there. */
static int records_walk(struct pd *p, size_t pos, size_t end)
{
	int rc;
	while (pos < end) {
		if (end - pos < 8)
			return bad(p, pos, "%s", "a record header is cut off");
		const unsigned char *rec = p->map + pos;
		uint32_t type = (uint32_t)num(p, rec, 4);
		uint32_t size = (uint32_t)num(p, rec + 6, 2);
		if (size < 8)
			return bad(p, pos, "%s", "a record is shorter than its header");
		if (size > end - pos)
			return bad(p, pos, "%s", "a record runs past the end of the data");
		size_t next = pos + size;
		switch (type) {
		case REC_SAMPLE:
			if ((rc = sample(p, rec, size, pos, next)) < 0)
				return rc;
			next = samples_lane(p, next, end);
			break;
		case REC_COMM: {
			if (size < 17 || !memchr(rec + 16, '\0', size - 16))
				return bad(p, pos, "%s", "a COMM record has no name");
			comm_set(p, (int32_t)num(p, rec + 12, 4), (const char *)rec + 16);
			record_check(p, rec, type, size);
			break;
		}
		case REC_LOST:
			if (size < 24)
				return bad(p, pos, "%s", "a LOST record is cut off");
			p->lost_records += num(p, rec + 16, 8);
			record_check(p, rec, type, size);
			break;
		case REC_LOST_SAMPLES:
			if (size < 16)
				return bad(p, pos, "%s", "a LOST_SAMPLES record is cut off");
			if (lost_samples(p, rec, size, pos) < 0)
				return -1;
			break;
		case REC_FINISHED_ROUND:
			q_flush(p, p->next_flush);
			p->next_flush = p->max_ts;
			p->since_round = 0;
			record_check(p, rec, type, size);
			break;
		case REC_HEADER_ATTR: {
			if (size < 8 + ATTR_SIZE_VER0)
				return bad(p, pos, "%s", "a HEADER_ATTR record is cut off");
			uint64_t asize = num(p, rec + 12, 4);
			if (asize < ATTR_SIZE_VER0 || asize > size - 8 || (size - 8 - asize) % 8)
				return bad(p, pos, "%s", "a HEADER_ATTR record has an impossible "
					   "attribute size");
			if (attr_add(p, rec + 8, asize, pos) < 0 ||
			    ids_add(p, rec + 8 + asize, (size - 8 - asize) / 8, pos) < 0)
				return -1;
			break;
		}
		case REC_HEADER_TRACING_DATA:
		case REC_AUXTRACE: {
			/* Their payload (tracing data, AUX data) follows the record. */
			if (size < (type == REC_AUXTRACE ? 16 : 12))
				return bad(p, pos, "%s", type == REC_AUXTRACE
					   ? "an AUXTRACE record is cut off"
					   : "a tracing-data record is cut off");
			uint64_t extra = record_payload(p, rec, type, size);
			if (extra > end - next)
				return bad(p, pos, "%s", type == REC_AUXTRACE
					   ? "AUXTRACE data runs past the end of the data"
					   : "the tracing data runs past the end of the file");
			if (type == REC_HEADER_TRACING_DATA &&
			    formats_load(p, p->map + next, extra, next) < 0)
				return -1;
			next += extra;
			break;
		}
		case REC_COMPRESSED:
			return err_set(p->err, EXIT_BAD_INPUT,
				       "%s: recorded with 'perf record -z' (compressed records), "
				       "which is not supported; record without -z", p->path);
		default:
			record_check(p, rec, type, size);
			break;
		}
		pos = next;
		drop_behind(p, pos);
	}
	return 0;
}

/* --- file mode ------------------------------------------------------- */

struct section {
	uint64_t off, size;
};

static int section_at(struct pd *p, const unsigned char *at, struct section *s,
		      const char *what, uint64_t where)
{
	s->off = num(p, at, 8);
	s->size = num(p, at + 8, 8);
	if (s->off > p->size || s->size > p->size - s->off)
		return bad(p, where, "the %s section lies beyond the end of the file", what);
	return 0;
}

static int file_mode(struct pd *p, size_t *data_start, size_t *data_end)
{
	if (p->size < FILE_HEADER_SIZE)
		return bad(p, 0, "%s", "the file header is cut off");
	uint64_t hsize = num(p, p->map + 8, 8);
	uint64_t attr_size = num(p, p->map + 16, 8);
	if (hsize != FILE_HEADER_SIZE)
		return bad(p, 8, "%s", "the header size is not 104 (an unknown perf.data version)");
	struct section attrs, data, types;
	if (section_at(p, p->map + 24, &attrs, "attributes", 24) < 0 ||
	    section_at(p, p->map + 40, &data, "data", 40) < 0 ||
	    section_at(p, p->map + 56, &types, "event types", 56) < 0)
		return -1;
	if (attr_size < ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return bad(p, 16, "%s", "the attribute size is impossible");
	if (attrs.size % attr_size)
		return bad(p, 32, "%s", "the attributes section is not a whole number of "
			   "attributes");
	if (attrs.size / attr_size > MAX_ATTRS)
		return bad(p, 32, "%s", "more than 65536 event attributes");
	for (uint64_t off = attrs.off; off < attrs.off + attrs.size; off += attr_size) {
		const unsigned char *a = p->map + off;
		struct section ids;
		if (attr_add(p, a, attr_size - 16, off) < 0 ||
		    section_at(p, a + attr_size - 16, &ids, "ids", off + attr_size - 16) < 0)
			return -1;
		if (ids.size % 8)
			return bad(p, off + attr_size - 16, "%s", "an attribute's id list is not "
				   "a whole number of ids");
		if (ids_add(p, p->map + ids.off, ids.size / 8, ids.off) < 0)
			return -1;
	}

	/* Feature sections follow the data: one {offset, size} per set bit. */
	uint64_t feat = data.off + data.size;
	unsigned nfeat = 0, index = 0;
	bool tracing = false;
	for (int w = 0; w < 4; w++) {
		uint64_t bits = num(p, p->map + 72 + 8 * w, 8);
		for (int b = 0; b < 64; b++)
			if (bits >> b & 1) {
				if (w == 0 && b == FEAT_TRACING_DATA) {
					tracing = true;
					index = nfeat;
				}
				nfeat++;
			}
	}
	if (nfeat && (feat > p->size || (p->size - feat) / 16 < nfeat))
		return bad(p, feat, "%s", "the feature index lies beyond the end of the file");
	for (unsigned i = 0; i < nfeat; i++) {
		struct section fs;
		if (section_at(p, p->map + feat + 16 * i, &fs, "feature", feat + 16 * i) < 0)
			return -1;
	}
	if (tracing) {
		struct section td;
		if (section_at(p, p->map + feat + 16 * index, &td, "tracing data",
			       feat + 16 * index) < 0 ||
		    formats_load(p, p->map + td.off, td.size, td.off) < 0)
			return -1;
	}
	*data_start = data.off;
	*data_end = data.off + data.size;
	return 0;
}

/*
 * The attributes against the tracing data: a tracepoint attribute names its
 * event by ID, which the tracing data must hold; an attribute whose config
 * is the ID of one of our events and that records raw data is a tracepoint
 * whose type was damaged (its samples would be skipped as not ours).
 */
static int attrs_check(struct pd *p)
{
	if (!p->nattrs)
		return bad(p, p->size, "%s", "it holds no event attributes (it is cut off, or "
			   "empty)");
	if (!p->have_dec)
		return 0;
	const int ours[] = { p->dec.id_run_core, p->dec.id_guest_exit, p->dec.id_kvm_exit,
			     p->dec.id_userspace_exit };
	for (size_t i = 0; i < p->nattrs; i++) {
		const struct pattr *a = &p->attrs[i];
		char what[160];
		if (a->type == TYPE_TRACEPOINT && !evfmt_has_event_id(&p->formats, a->config)) {
			snprintf(what, sizeof(what), "event attribute %zu names tracepoint ID %llu, "
				 "which the tracing data has no format for", i,
				 (unsigned long long)a->config);
			return bad(p, 0, "%s", what);
		}
		for (size_t k = 0; a->type == TYPE_TRACEPOINT && !(a->sample_type & S_RAW) && k < 4; k++)
			if (ours[k] >= 0 && a->config == (uint64_t)ours[k]) {
				snprintf(what, sizeof(what), "event attribute %zu (tracepoint ID %llu) "
					 "samples no raw data (perf always does): its sample_type is "
					 "damaged", i, (unsigned long long)a->config);
				return bad(p, 0, "%s", what);
			}
		for (size_t k = 0; a->type != TYPE_TRACEPOINT && a->sample_type & S_RAW && k < 4; k++)
			if (ours[k] >= 0 && a->config == (uint64_t)ours[k]) {
				snprintf(what, sizeof(what), "event attribute %zu has type %u, but its "
					 "config %llu is the ID of a KVM tracepoint it records: its "
					 "type is damaged", i, a->type, (unsigned long long)a->config);
				return bad(p, 0, "%s", what);
			}
	}
	return 0;
}

/* What the walk found wrong: each a damage note (the counts become lower bounds). */
static void damage_notes(const struct pd *p, struct gang_result *res)
{
	const struct {
		uint64_t n;
		const char *what;
	} notes[] = {
		{ p->since_round, "samples follow the last FINISHED_ROUND (the recording was "
				  "cut off)" },
		{ p->odd_records, "records have an impossible type or size" },
		{ p->foreign_records, "records belong to no event attribute or are not the "
				      "shape of their type" },
		{ p->mismatched, "samples hold a record of no recorded tracepoint" },
	};
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (notes[i].n)
			gang_result_damage(res, "%llu %s", (unsigned long long)notes[i].n,
					   notes[i].what);
	if (p->damaged_formats)
		gang_result_damage(res, "%d damaged KVM event format%s in the tracing data: %s",
				   p->damaged_formats, p->damaged_formats == 1 ? "" : "s",
				   p->formats_damage);
	decoder_note_malformed(p->dec.malformed, res);
}

/* perfdata_analyze, read in one pass (direct) or the usual two. */
static int analyze(const char *path, const unsigned char *map, size_t size, bool file,
		   enum gang_algorithm algo, bool direct, struct gang_result *res,
		   struct perfdata_info *info, struct ta_err *err)
{
	struct pd p = { .path = path, .map = map, .size = size, .err = err, .id_pos = -1,
			.last_config = UINT64_MAX, .direct = direct, .keep = direct && !file };
	htab_init(&p.comms, sizeof(struct comm_entry), sizeof(int32_t));
	tsmerge_init(&p.merge);
	memset(res, 0, sizeof(*res));
	memset(info, 0, sizeof(*info));
	if (!perfdata_magic(map, size))
		return err_set(err, EXIT_BAD_INPUT, "%s is not a perf.data file", path);
	p.be = !memcmp(map, "2ELIFREP", 8);
	p.swap = bcur_swap(p.be);
	info->big_endian = p.be;
	p.g = gang_new(algo);
	size_t start = 0, end = 0;
	int rc;
	if (size >= 16 && num(&p, map + 8, 8) == PIPE_HEADER_SIZE) {
		info->pipe_mode = true;
		rc = records_walk(&p, PIPE_HEADER_SIZE, size);
	} else {
		rc = file_mode(&p, &start, &end);
		if (rc == 0)
			rc = records_walk(&p, start, end);
	}
	bool tracepoints = false;
	for (size_t i = 0; i < p.nattrs; i++)
		tracepoints |= p.attrs[i].type == TYPE_TRACEPOINT;
	if (rc == 0 && tracepoints && !p.have_dec)
		rc = bad(&p, size, "%s", "tracepoint events were recorded but the tracing data "
			 "(their formats) is missing");
	if (rc == 0)
		rc = attrs_check(&p);
	if (rc == 0) {
		q_flush(&p, UINT64_MAX);
		gang_feed_many(p.g, p.batch, p.nbatch);
		gang_result_get(p.g, res);
		damage_notes(&p, res);
		res->records = info->records = p.samples;
		res->lost_events = p.have_lost_samples ? p.lost_samples : p.lost_records;
		res->lost_known = true;
		res->run_core_format = p.have_dec && p.dec.id_run_core >= 0;
		res->span_seconds = p.have_ts && p.last_ts > p.first_ts
					    ? (double)(p.last_ts - p.first_ts) / 1e9 : 0;
		decoder_name_procs(res, comm_get, &p);
		info->unordered = p.unordered;
	}
	gang_free(p.g);
	free(p.attrs);
	free(p.ids);
	htab_release(&p.comms);
	for (size_t i = 0; i < p.merge.n; i++)
		if ((struct run *)p.merge.heap[i].src != p.cur)
			free((struct run *)p.merge.heap[i].src);
	free(p.cur);
	for (size_t i = 0; i < p.nspare; i++)
		free(p.spare[i]);
	tsmerge_release(&p.merge);
	return rc;
}

/*
 * One pass first: recordings whose tracepoint samples are all in time order
 * (one CPU's, or perf's own ordering) are done in it; the others fail it at
 * their first step back in time and are read again the usual way, with a
 * new counter (nothing of the try is kept: same result either way).
 */
int perfdata_analyze(const char *path, const unsigned char *map, size_t size, bool file,
		     enum gang_algorithm algo, struct gang_result *res,
		     struct perfdata_info *info, struct ta_err *err)
{
	int rc = analyze(path, map, size, file, algo, true, res, info, err);
	if (rc == DIRECT_OUT_OF_ORDER)
		rc = analyze(path, map, size, file, algo, false, res, info, err);
	return rc;
}
