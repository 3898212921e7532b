/*
 * tdat: the layout of a trace-cmd file (trace.dat), versions 6 and 7.
 *
 * Parses and bounds-checks everything the offline reader relies on before
 * the page walker touches the file: the initial format, every header
 * section (v6) or options section (v7, zstd-compressed or not), where the
 * event formats lie (header_page, event formats and saved cmdlines; kallsyms
 * and printk formats are skipped unread), the per-instance BUFFER
 * descriptions (top buffer and `trace-cmd record -B` buffers, each checked
 * against the data section it names) and the per-CPU stats.  The CPUs'
 * data must tile its place in the file (v7: the buffer's data section; v6:
 * what follows the indexes), apart only by zero padding shorter than a page,
 * so a damaged offset or size cannot hide data from the reader.  Option chains
 * may not loop, option ids and CPU counts must be plausible, decompressed
 * sections are bounded.  A truncated or corrupted file fails here with a
 * message saying what is wrong and at which offset.
 *
 * Formats: trace-cmd.dat.v6(5), trace-cmd.dat.v7(5).
 */
#ifndef TA_TDAT_H
#define TA_TDAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"
#include "evfmt.h"

struct tdat_cpu {
	int cpu;
	uint64_t offset;	/* absolute file offset of the CPU's data */
	uint64_t size;		/* bytes in the file (compressed size for v7 zstd) */
};

/*
 * What a CPU's per_cpu/cpuN/stats said when the recording ended: trace-cmd
 * stops tracing, reads the stats, then drains the buffers, so the file
 * holds exactly entries + read events records of that CPU, none stamped
 * after "now ts".
 */
struct tdat_cpu_stats {
	int cpu;
	long long records;	/* entries + read events; -1: not recorded */
	uint64_t now;		/* "now ts" in trace-clock units; 0: not recorded */
	uint64_t now_slack;	/* its resolution: 1000 when printed in microseconds */
};

struct tdat_buffer {
	char *name;		/* "" for the top-level buffer */
	char *clock;		/* trace clock, or NULL when not recorded */
	struct tdat_cpu *cpus;	/* CPUs with data (v7 lists only those) */
	int ncpus;
	int nstats;		/* CPUs whose per_cpu/cpuN/stats were recorded */
	long long lost_events;	/* summed over those stats; -1: none recorded */
	struct tdat_cpu_stats *stats;	/* nstats of them, in file order */
	int dup_stats;		/* a CPU whose stats appear twice, or -1 */
	uint64_t data_lo, data_hi;	/* v7: the data section its CPUs' data tiles */
};

struct tdat_file {
	const unsigned char *map;	/* the whole file, read-only (the caller's) */
	size_t size;
	int version;			/* 6 or 7 */
	bool big_endian;
	int long_size;			/* user space long size (4 or 8) */
	uint32_t page_size;
	char compression[32];		/* "" or "none": uncompressed; "zstd" */
	bool compressed;		/* CPU data is stored in zstd chunks */
	struct tdat_buffer *buffers;	/* top buffer first when it exists */
	size_t nbuffers;
	struct evfmt_layout formats;	/* header_page, event formats, cmdlines */
	void **owned;			/* decompressed format sections */
	size_t nowned;
};

/*
 * Parses the trace-cmd file in map (size bytes, mapped by the caller and
 * kept until tdat_close; path for messages).  On failure *f is left empty
 * and err says why.
 */
int tdat_open(const char *path, const unsigned char *map, size_t size, struct tdat_file *f,
	      struct ta_err *err);
void tdat_close(struct tdat_file *f);

/*
 * Sum of "overrun", "commit overrun" and "dropped events" in a stats text;
 * -1 when none of those lines is there.
 */
long long tdat_stats_lost(const char *stats);

/* The stats of CPU cpu in b, or NULL. */
const struct tdat_cpu_stats *tdat_cpu_stats(const struct tdat_buffer *b, int cpu);

#endif
