/*
 * config-int: what the config loader's files (experiments/config*.c)
 * share.  Private to them; the contract for everyone else is config.h.
 *
 * Each section parser reads every key it can and records every error
 * (yr_fail); it returns -1 when any of its values failed, so that checks
 * across sections (the baseline, the metric against parse) run only on
 * what read cleanly and do not repeat an error in other words.
 */
#ifndef TA_CONFIG_INT_H
#define TA_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../model/knob-table.h"
#include "../util/strbuf.h"
#include "config.h"
#include "yaml-reader.h"

/* Indexes a names table, whose last entry is the NULL that ends it. */
#define NAME_OF(table, v) \
	(assert((size_t)(v) < sizeof(table) / sizeof(table[0]) - 1), table[v])

/* The words of `order`, `strategy` and `advisor.objective`, by value; NULL ends. */
extern const char *const config_order_names[];
extern const char *const config_strategy_names[];
extern const char *const config_objective_names[];

/* ---- value readers (config.c) ---- */

/* A host cpuset ("0-3,8"), its CPU count in *ncpus. */
int config_get_cpuset(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out,
		      int *ncpus);
/* Guest vCPUs ("0-1"), numbered from 0 inside the guest; their count in *nvcpus. */
int config_get_vcpus(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out,
		     int *nvcpus);
/* A command: a non-empty list of strings (replacing what out held). */
int config_get_argv(struct yr_reader *L, const yaml_node_t *n, const char *key,
		    struct argv_list *out);
/* Sets a to a copy of words (NULL-terminated). */
void config_argv_set(struct argv_list *a, const char *const *words);
void config_argv_free(struct argv_list *a);
/* A decimal number lo..hi (a plain scalar), e.g. a fraction. */
int config_get_fraction(struct yr_reader *L, const yaml_node_t *v, const char *key, double lo,
			double hi, const char *what, double *out);

/* ---- sections, each reading its part of cfg ---- */

/* libvirt: and guest: (config-guest.c) */
int config_parse_libvirt(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
int config_parse_guest(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);

/* The factors (config-factors.c). */
int config_parse_topology(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
int config_parse_pinning(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
int config_parse_host(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
int config_parse_noise(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
/* A shape as written ("1x2x1", "1x1x2x2" or a mapping) into *s. */
int config_shape_parse(struct yr_reader *L, const yaml_node_t *n, const char *key,
		       struct shape *s);
/* Whether two shapes are the same (dies compared as written). */
bool config_shape_same(const struct shape *a, const struct shape *b);
/* One value of knob k: its canonical text (in the knob table), or NULL after failing. */
const char *config_knob_value_get(struct yr_reader *L, const yaml_node_t *n, const char *key,
				  const struct knob *k);

/* benchmark: (read from the root: its absence is an error) and collect: (config-bench.c) */
int config_parse_benchmark(struct yr_reader *L, const yaml_node_t *root, struct sweep_config *cfg);
int config_parse_collect(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);

/*
 * baseline: names values of the factors, so it is read only once they
 * read cleanly (their own errors are reported already); advisor: and race:
 * (config-decide.c).
 */
int config_parse_baseline(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
int config_parse_advisor(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
int config_parse_race(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);

/*
 * executor: where the sweep's runs go (config-executor.c); its defaults,
 * release and dump lines.
 */
int config_parse_executor(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg);
void config_executor_defaults(struct executor_settings *x);
void config_executor_release(struct executor_settings *x);
void config_executor_dump(const struct executor_settings *x, struct strbuf *out);

/* "KEY: a b c" for a command (config-dump.c). */
void config_dump_argv(struct strbuf *out, const char *key, const struct argv_list *a);

#endif
