/*
 * db-results: everything an experiment produced, read in one go as plain
 * structs for the advisor (rank, recommend, report, export).
 *
 * The advisor reads an experiment whole (configurations x repetitions runs,
 * a few dozen metrics each); export walks it run by run.  The advisor
 * never touches SQL.  The
 * fixture insert API the tests use to build databases lives here too, so
 * that all SQL stays in schema/.
 */
#ifndef TA_DB_RESULTS_H
#define TA_DB_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/metricdir.h"
#include "db-plan.h"
#include "db.h"

struct db_results_metric {
	char *name;
	double value;
	char *unit;		/* NULL: none stored */
	int higher_is_better;	/* -1: not stored (direction none or unknown) */
	enum metric_dir dir;	/* metrics.direction; UNKNOWN when NULL */
};

/* Exits per run and reason, summed over vCPUs (the vcpu NULL row when present). */
struct db_results_exit {
	char *source;		/* 'kvm_hv' | 'kvm' | ... */
	char *reason;
	int64_t count;
	int64_t time_pairs;	/* exits timed (migration 11), summed as count is; 0: none */
	int64_t time_ns;	/* their summed handling time */
};

struct db_results_run {
	int64_t id;
	int repetition;
	int order_index;
	char *status;		/* planned|running|ok|failed|interrupted */
	char *error;
	char *started_at, *finished_at;
	char *host;		/* where it ran (NULL: not recorded) */
	int topology_ok;	/* -1: not checked */
	int64_t lost_events;	/* -1: not recorded */
	int64_t boot;		/* the run whose guest boot it ran in; 0: not recorded */
	double loadavg;		/* the host's 1-minute load average at the run's end; NAN: none */
	int host_cpus;		/* the host's online CPUs (the run's, else the experiment's); 0: unknown */
	struct db_results_metric *metrics;
	size_t nmetrics;
	struct db_results_exit *exits;
	size_t nexits;
};

/* A configuration: its record (schema/db-config.h reads it) and its runs. */
struct db_results_config {
	int64_t id;
	struct config_record rec;
	struct db_results_run *runs;		/* by repetition */
	size_t nruns;
	/* a raced sweep's elimination of this configuration; 0: not eliminated */
	int eliminated_block;
	const char *eliminated_against;	/* the key of the best it lost to (points into configs) */
	double eliminated_p;
};

struct db_results {
	struct db_experiment exp;
	struct db_results_config *configs;	/* by idx */
	size_t nconfigs;
	/* strategy: race (schema/db-race.h) */
	bool raced;
	int race_first_test, race_max_blocks;
	char *race_stop_reason;		/* NULL while the race goes on */
	int race_stopped_after;
};

/* Reads experiment id_or_name whole.  Not found: EXIT_BAD_INPUT. */
int db_results_load(struct db *db, const char *id_or_name, struct db_results *out,
		    struct ta_err *err);
void db_results_release(struct db_results *r);

/*
 * The same run by run, for writers whose output grows with the store
 * (export): db_results_open reads the experiment, its configurations and
 * race into *out with no runs, and a cursor; db_results_next_run then gives
 * one run at a time, in configuration then repetition order, with its
 * metrics (and exit counts when `exits` was set), so memory stays flat
 * however many runs there are.  next returns 1 with *run filled (the
 * caller's: db_results_run_release) and *config its configuration in *out,
 * 0 after the last run, -1 on error.  Close the cursor before releasing *out.
 */
struct db_results_cursor;
int db_results_open(struct db *db, const char *id_or_name, bool exits, struct db_results *out,
		    struct db_results_cursor **cur, struct ta_err *err);
int db_results_next_run(struct db_results_cursor *cur, struct db_results_run *run,
			struct db_results_config **config, struct ta_err *err);
void db_results_cursor_close(struct db_results_cursor *cur);
void db_results_run_release(struct db_results_run *run);

/* Looks a metric up in a run; NULL when the run has none of that name. */
const struct db_results_metric *db_results_run_metric(const struct db_results_run *run, const char *name);

#endif
