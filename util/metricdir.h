/*
 * metricdir: which way a metric is better.
 *
 * Every producer of a metric (the benchmark parsers, the controller's own
 * figures, the tracer) declares one, and the database stores it with the
 * metric (metrics.direction, migration 3), so that a ranking by any stored
 * metric knows whether to sort up or down.
 *
 * The values are the old `higher_is_better` integers (1 higher, 0 lower,
 * -1 "not a figure of merit"), so an int written the old way still means
 * the same; UNKNOWN is for a figure whose direction nobody declared (a
 * `command` regex group the config does not name, rows stored before
 * migration 3).
 */
#ifndef TA_METRICDIR_H
#define TA_METRICDIR_H

enum metric_dir {
	METRIC_DIR_UNKNOWN = -2,
	METRIC_DIR_NONE = -1,	/* a figure, not a figure of merit (boot time, run count) */
	METRIC_DIR_LOWER = 0,
	METRIC_DIR_HIGHER = 1,
};

/* "higher", "lower", "none"; NULL for UNKNOWN (stored as SQL NULL). */
const char *metric_dir_name(enum metric_dir d);
/* The inverse; NULL or any other word gives UNKNOWN. */
enum metric_dir metric_dir_from_name(const char *s);

#endif
