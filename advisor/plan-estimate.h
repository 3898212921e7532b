/*
 * plan-estimate: how long a sweep will take, learned from how long this
 * host's stored sweeps took (schema/db-timing.h), or from built-in figures
 * where it has none.
 *
 * A sweep's wall time is modelled as
 *   sweep overhead + sum over runs of (benchmark window + run overhead)
 * where a run's overhead depends on what it does around its benchmark:
 * a host run (guest.runner: host, a host reference), a guest run that
 * boots its guest (every run without guest.reuse, the first of each kept
 * guest with it: boot, topology check, noise, teardown), a run whose guest
 * booted ahead, together with an earlier run's of its block (guest.reuse;
 * experiments/reuse.h reuse_ahead: its boot cost it no wait), and a run in
 * a reused guest.  Each figure is the mean over the stored runs of that
 * kind (a sweep takes the sum of its runs, outliers included).  A stored
 * run that booted waited for its boot when its time outside the window is
 * at least its boot_seconds (the boot lies inside it), else its guest
 * booted ahead.  Where fewer than PLAN_ESTIMATE_MIN_SAMPLES runs of the
 * reused or booted-ahead kind are stored, what the booting runs spent
 * outside their window beyond the boot serves for both (a topology check,
 * the noise loads' start and stop: what such a run still does).  The window
 * is the mean window of stored runs of the same benchmark (kind, argv,
 * duration, runner, architecture and domain type), else the configured
 * duration plus the mean amount by which stored windows of a benchmark of
 * that kind exceeded theirs, else the timeout (an upper bound).  The sweep
 * overhead (start, guests destroyed at the end, between runs) is the mean
 * over stored sweeps of the same runner of wall time minus their runs'
 * time.  A run figure needs PLAN_ESTIMATE_MIN_SAMPLES runs to be
 * learned, the sweep overhead one sweep; otherwise the built-in figure
 * serves (none for the sweep overhead) and the estimate says so.
 */
#ifndef TA_PLAN_ESTIMATE_H
#define TA_PLAN_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "../experiments/plan.h"
#include "../schema/db-timing.h"

/* Built-in overheads (seconds beyond the benchmark window), where nothing is learned. */
/* A guest run that boots: boot, agent, topology check, teardown. */
#define PLAN_BOOT_RUN_OVERHEAD_SECONDS 8.0
/* A run in a guest kept from an earlier run (guest.reuse): resume, check, suspend. */
#define PLAN_REUSED_RUN_OVERHEAD_SECONDS 2.0
/* A host run: knobs, fork and exec, storing (~1.3 ms measured here; noise
 * loads and knob writes cost more). */
#define PLAN_HOST_RUN_OVERHEAD_SECONDS 0.1

#define PLAN_ESTIMATE_MIN_SAMPLES 2

/* One figure of the estimate and whether it was learned. */
struct plan_figure {
	double seconds;
	size_t samples;		/* stored runs (or sweeps) it was learned from; 0: built in */
	bool beyond_boot;	/* learned from booting runs' time beyond their boot */
};

struct plan_estimate {
	double seconds;		/* the sweep's wall time */
	bool upper_bound;	/* the window is the timeout: nothing said how long it takes */
	size_t host_runs, boot_runs, ahead_runs, reused_runs;
	struct plan_figure window;	/* per run */
	bool window_same_benchmark;	/* learned from runs of this very benchmark */
	struct plan_figure host, boot, ahead, reused;	/* run overheads */
	struct plan_figure sweep;	/* once per sweep */
	size_t experiments;	/* stored sweeps read */
};

/*
 * Estimates plan p's wall time with host_runs runs on the host, boot_runs
 * guest runs that wait for their boot, ahead_runs whose guest boots ahead
 * with an earlier one and reused_runs in a reused guest, from history
 * (NULL or empty: the built-in figures).
 */
void plan_estimate(const struct plan *p, size_t host_runs, size_t boot_runs, size_t ahead_runs,
		   size_t reused_runs, const struct db_timing *history,
		   struct plan_estimate *out);

#endif
