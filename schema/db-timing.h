/*
 * db-timing: how long this host's stored sweeps took, read for plan's
 * estimate (experiments/plan-estimate.h learns its figures from it).
 *
 * The newest experiments that ran on a host (host_facts.hostname, not
 * spread over Slurm nodes) and finished, each with its wall time (created_at .. finished_at), how many
 * of its runs ran (ok or failed), its sweep as stored (config_yaml: the
 * benchmark, its duration), and a sample of its successful runs: how long
 * each took (started_at .. finished_at), its benchmark window
 * (benchmark_seconds), whether it ran on the host, and whether it booted
 * its guest (a boot_seconds metric, read with its value).  Reads only what schema 1 already had,
 * so a database of any version serves; costs a bounded number of rows
 * however big the store is.
 */
#ifndef TA_DB_TIMING_H
#define TA_DB_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct db_timing_run {
	bool host;		/* ran on the host (guest.runner: host, a host reference) */
	bool booted;		/* booted its guest (the first run of a reused guest, or any
				   run without guest.reuse) */
	double boot_seconds;	/* its boot_seconds; 0 when it did not boot */
	double span;		/* seconds from started_at to finished_at */
	double window;		/* the benchmark window, seconds (benchmark_seconds) */
};

struct db_timing_experiment {
	int64_t id;
	char *config_yaml;
	double wall;		/* seconds from created_at to finished_at */
	size_t nran;		/* its runs that ran: ok or failed */
	size_t nfailed;		/* of them, failed */
	double failed_span;	/* the failed runs' seconds, summed */
	struct db_timing_run *runs;	/* a sample of its ok runs */
	size_t nruns;
};

struct db_timing {
	struct db_timing_experiment *v;
	size_t n;
};

/*
 * Reads up to max_experiments of the newest finished experiments of host
 * `hostname`, with about `sample` runs of each (the first repetitions of every
 * configuration).
 */
int db_timing_read(struct db *db, const char *hostname, size_t max_experiments, size_t sample,
		   struct db_timing *out, struct ta_err *err);
void db_timing_release(struct db_timing *t);

#endif
