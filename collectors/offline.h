/*
 * offline: ganged exits and exit reasons from a recording: a trace-cmd
 * trace.dat or a perf.data (told apart by their magic; perfdata.h reads the
 * latter).  Only regular files are read: FIFOs, devices and directories are
 * refused before anything is read from them.
 *
 * Reads trace.dat versions 6 and 7, uncompressed or zstd-compressed, from
 * the top buffer or a `trace-cmd record -B NAME` buffer, written on any host
 * (byte order and long size come from the file).  tdat.h checks the layout;
 * evfmt.h builds the event table from our four formats alone (no kallsyms,
 * read by our own parser: libtraceevent never sees them); the event data is read by
 * our own page walker (pages already read are given back to the kernel, so
 * peak memory does not follow the file size):
 * libtracecmd 3.1.6 keeps every decompressed zstd chunk in a list it scans
 * linearly for each new page (its free path never matches), which makes big
 * v7 files read in quadratic time and memory.  We decompress each CPU's
 * chunks ourselves, one chunk at a time, and merge CPUs by timestamp.
 */
#ifndef TA_OFFLINE_H
#define TA_OFFLINE_H

#include "../util/err.h"
#include "gang.h"

struct offline_opts {
	enum gang_algorithm algorithm;
	/* Buffer to read: NULL picks the one holding kvm_hv (else kvm) events;
	 * "top" is the top-level buffer. */
	const char *buffer;
};

struct offline_info {
	char format[48];		/* "trace.dat v7", "perf.data (pipe) big-endian" ... */
	int version;			/* trace.dat: 6 or 7 */
	char compression[32];		/* "none" or "zstd" */
	char buffer[256];		/* the buffer read ("" = top) */
	char clock[32];			/* trace clock of that buffer, if recorded */
	uint64_t records;		/* all records walked, ours or not */
	uint64_t malformed;		/* records too short for their fields */
	uint64_t unordered;		/* perf.data: events that came after a newer one */
};

/*
 * Analyses path into *res (release it with gang_result_release) and *info.  Lost
 * events come from the file's per-CPU stats (res->lost_known) or, when no
 * stats were recorded, from the pages' missed-events markers (a lower
 * bound).  Fails with EXIT_BAD_INPUT for unreadable, truncated or corrupted
 * files.
 */
int offline_analyze(const char *path, const struct offline_opts *opts, struct gang_result *res,
		    struct offline_info *info, struct ta_err *err);

/*
 * The same on a recording already in memory (size bytes; name for
 * messages): the fuzzing harness's entry point.  Pages of map it has read
 * may be dropped with MADV_DONTNEED, so map must be a private mapping or
 * memory the caller will not read again.
 */
int offline_analyze_buffer(const char *name, const unsigned char *map, size_t size,
			   const struct offline_opts *opts, struct gang_result *res,
			   struct offline_info *info, struct ta_err *err);

#endif
