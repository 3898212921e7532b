/*
 * input: a stored experiment (schema/db-results.h) as the engine's input.
 * Pure, like the engine: it reads the structs the database reader filled.
 *
 *  - Factor roles.  Each configuration's record (model/config-record.h)
 *    names its decision and its environment level as the plan wrote them
 *    (never parsed from the key): configurations of one decision are its
 *    levels.  `noise` and the names in advisor.environment are environment
 *    factors; an environment knob or pinning is no choice, so it costs
 *    nothing in the tie-breaks and is never applied.
 *  - The baseline: the configuration marked baseline, else the host's
 *    default shape (sockets = vCPUs, no pinning, every decision knob at
 *    its default), else none (docs/advisor.md, "The baseline").
 *  - Host references (runner host beside guests) are ranked, never raced
 *    nor recommended.
 *  - Runs: the block is the repetition, the boot the run that booted the
 *    guest it ran in (runs.boot), a failed run an outcome, an interrupted
 *    or planned one none.
 */
#ifndef TA_DECIDE_INPUT_H
#define TA_DECIDE_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "../model/knob-table.h"
#include "../schema/db-results.h"
#include "decide.h"

/* Which factors are conditions rather than choices, besides noise (advisor.environment). */
struct decide_roles {
	const char *const *environment;
	size_t nenvironment;
};

/* A run's value of what is decided on: NAN when it has none. */
typedef double (*decide_value_fn)(const struct db_results_run *run, void *ctx);

struct decide_sweep {
	struct decide_input in;
	struct decide_option *decisions;
	char **keys;				/* each decision's key */
	struct decide_config *configs;		/* [i]: res->configs[i] */
	struct decide_run *runs;
	const struct db_results_run **run_of;	/* [i]: the stored run of runs[i] */
	char **levels;				/* each level's label */
	const char *baseline_source;		/* "marked", "host default shape", NULL */
};

/*
 * Builds the engine's input from res: the value of each run from
 * value(run, ctx), higher_is_better its direction.  Never fails.
 */
void decide_sweep_build(const struct db_results *res, decide_value_fn value, void *ctx,
			bool higher_is_better, const struct decide_roles *roles,
			struct decide_sweep *out);
void decide_sweep_release(struct decide_sweep *s);

/* A host knob a configuration sets: its table entry (NULL: unknown knob), name and value. */
struct decide_knob {
	const struct knob *knob;
	const char *name;
	char value[64];
};
/*
 * The decision knobs a configuration sets, in the sweep's order;
 * environment factors left out: they are never applied by the
 * recommendation.  Returns how many.
 */
size_t decide_config_knobs(const struct db_results_config *c, const struct decide_roles *roles,
			   struct decide_knob *out, size_t max);
/* Pinned to explicit host CPUs (the record's pinning CPUs)? */
bool decide_pinning_explicit(const struct db_results_config *c);
/* Distinct host CPUs in cpuset lists ("0-3,8"); -1 when one is malformed. */
DECIDE_MUST_CHECK int decide_cpuset_count(const char *const *sets, size_t n);

#endif
