/*
 * perfdata: ganged exits and exit reasons from a perf recording (perf.data),
 * e.g. `perf record -e kvm_hv:kvm_guest_exit -e kvm_hv:kvmppc_run_core -a`,
 * the seed's own workflow.
 *
 * Reads both byte orders, file mode ("PERFILE2" header with attribute,
 * data and feature sections) and pipe mode (`perf record -o -`: attributes
 * and tracing data arrive as HEADER_ATTR / HEADER_TRACING_DATA records).
 * Event formats come from the tracing-data feature via evfmt.h (our four
 * formats only, no kallsyms).  PERF_RECORD_SAMPLE is parsed as each
 * attribute's sample_type says (IDENTIFIER / ID pick the attribute when they
 * differ); its RAW payload is the tracepoint record the decoder reads, with
 * tid, time and cpu from the sample.  COMM records name processes.  Loss:
 * perf 6.x ends a recording with LOST_SAMPLES records holding the kernel's
 * exact per-event count of dropped samples; when they are there, those of
 * the tracepoint events are the loss (the ring buffer's LOST records count
 * the same samples again, plus side-band records); older recordings have
 * only LOST records, whose sum is the loss.
 *
 * Order: perf writes each CPU's ring buffer in time order, one round of all
 * CPUs at a time, then a FINISHED_ROUND record.  Events are queued and, at
 * each FINISHED_ROUND, those not newer than the newest event of the round
 * before are fed to the counter (perf's own ordered_events rule, so
 * `--algorithm seed` sees what `perf script` sees).  Memory is bounded by
 * two rounds of our events, and by PERFDATA_QUEUE_MAX events in any case
 * (a file without rounds then flushes the oldest half, as perf does).
 *
 * Every structural inconsistency (a record running past the data, a size
 * that cannot be, a section outside the file, a sample without an
 * attribute) fails with EXIT_BAD_INPUT saying what and at which offset.
 */
#ifndef TA_PERFDATA_H
#define TA_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"
#include "gang.h"

#define PERFDATA_QUEUE_MAX (1u << 20)

struct perfdata_info {
	bool pipe_mode;
	bool big_endian;
	uint64_t records;		/* PERF_RECORD_SAMPLE records */
	uint64_t unordered;		/* events older than an already flushed one */
};

/* True when the first 8 bytes of a file are a perf.data magic. */
bool perfdata_magic(const unsigned char *head, size_t len);

/*
 * Analyses the perf.data held in map (size bytes; path for messages) into
 * *res (release with gang_result_release) and *info.  The caller maps the file;
 * this reads it front to back and drops the pages it has read.  A recording
 * whose samples are all in time order is read once; any other is read a
 * second time from the start when the first step back in time shows up, and
 * so pages dropped in the first read must come back: file says map is a
 * file's private mapping (they do); when it is other memory, the first read
 * keeps every page.
 */
int perfdata_analyze(const char *path, const unsigned char *map, size_t size, bool file,
		     enum gang_algorithm algo, struct gang_result *res,
		     struct perfdata_info *info, struct ta_err *err);

#endif
