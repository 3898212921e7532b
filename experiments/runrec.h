/*
 * runrec: what one run leaves behind, collected while it runs (owned
 * copies), then handed to db_run_store in one piece.
 */
#ifndef TA_RUNREC_H
#define TA_RUNREC_H

#include <stddef.h>
#include <stdint.h>

#include "../schema/db-runs.h"
#include "../util/metricdir.h"
#include "../util/strbuf.h"

struct run_record {
	int64_t run_id;
	const char *status;		/* "ok", "failed", "interrupted" */
	struct strbuf error;
	char *host_state;		/* JSON */
	char *guest_topology;		/* JSON */
	int topology_ok;		/* -1 unknown */
	int64_t lost_events;		/* -1 unknown */
	int64_t boot;			/* the run whose guest boot (host session) it ran in; 0: none */
	struct db_metric *metrics;	/* names and units owned */
	size_t nmetrics;
	struct db_exit_count *exits;	/* source and reason owned */
	size_t nexits;
	struct db_artifact *artifacts;	/* name and content owned */
	size_t nartifacts;
	/* Where the run's time went ("knobs 0.001, guest 0.310, ..."), for -vv. */
	struct strbuf steps;
	double step_mark;		/* the clock at the last mark */
};

void runrec_init(struct run_record *r, int64_t run_id);
void runrec_release(struct run_record *r);
/* Adds (or replaces) a metric. */
void runrec_metric(struct run_record *r, const char *name, double value, const char *unit,
		   enum metric_dir dir);
/* time_pairs, time_ns < 0: the exits were not timed (db_exit_count). */
void runrec_exit(struct run_record *r, const char *source, int64_t vcpu, const char *reason,
		 uint64_t count, int64_t time_pairs, int64_t time_ns);
/* Adds an artifact; an empty one is skipped.  A second one with the same name replaces it. */
void runrec_artifact(struct run_record *r, const char *name, const void *content, size_t len);
/* Marks the run failed (first reason wins; later ones are appended). */
void runrec_fail(struct run_record *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Closes step `name` at time `now` (seconds, the caller's monotonic clock):
 * appends how long it took since the previous mark.  name NULL only marks
 * (the start).
 */
void runrec_step(struct run_record *r, const char *name, double now);
/* The view db_run_store takes. */
void runrec_result(const struct run_record *r, struct db_run_result *out);

#endif
