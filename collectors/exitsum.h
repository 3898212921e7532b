/*
 * exitsum: the report of a gang/exit-reason count, as text or JSON.
 *
 * Shared by `topoadvisor exits` (a file) and `topoadvisor trace` (live) so
 * both print exactly the same thing.  JSON keys: algorithm, events,
 * lost_events, span_seconds, processes [{tgid, comm, gang_exits, core_runs,
 * bailouts, guest_exits, cedes, gang_exits_per_second}], exit_reasons
 * [{source, reason, name, count}], applicable (+ why when false), plus
 * lost_events_exact, counts_are_lower_bounds, damage (what is wrong with a
 * damaged recording, else null), records, source, buffer, clock,
 * x86_per_thread (the tgid of x86 entries is a thread id: true for
 * recordings with x86 exits, which name no thread groups) and
 * exit_reasons_by_vcpu [{tgid, vcpu, source, reason, name, count}].  The
 * text report lists guest exits per process (per thread in a recording)
 * when ganged exits are not applicable.
 */
#ifndef TA_EXITSUM_H
#define TA_EXITSUM_H

#include <stdint.h>

#include "../util/strbuf.h"
#include "gang.h"

struct exitsum_meta {
	const char *source;	/* file path, or "live" */
	const char *buffer;	/* buffer / instance read, "" = top */
	const char *clock;	/* trace clock, or NULL */
};


/* What every table and column of the reports means (for --help). */
extern const char exitsum_help[];

void exitsum_text(struct strbuf *out, const struct gang_result *r,
		  const struct exitsum_meta *m, int verbose);
void exitsum_json(struct strbuf *out, const struct gang_result *r,
		  const struct exitsum_meta *m);

#endif
