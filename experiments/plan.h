/*
 * plan: expand a validated sweep into configurations and ordered runs.
 *
 * The factors (topology shapes, pinning, each host knob, noise) are crossed;
 * combinations that cannot run are dropped with a reason (see plan.c for the
 * rules: vCPU product, ppc64 power-of-two threads, POWER8 threads per
 * subcore, pinning beyond the host's CPUs, …).  Runs are ordered either
 * sequentially or, by default, in randomized blocks: every repetition is one
 * block holding each configuration once, in a seeded random order, so that
 * drift during a sweep favours no configuration.  Pure: no I/O.
 */
#ifndef TA_PLAN_H
#define TA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/config-record.h"
#include "config.h"

/* What plan needs to know about the host it is planning for. */
struct host_facts {
	enum guest_arch arch;	/* ARCH_X86_64 or ARCH_PPC64 */
	int online_cpus;	/* 0: unknown */
	int possible_cpus;	/* CPU ids are 0..possible_cpus-1; 0: unknown */
	int threads_per_core;	/* 0: unknown */
	int numa_nodes;		/* online NUMA nodes; 0: unknown */
};

/*
 * One configuration: its record (model/config-record.h: key, decision and
 * environment level, every factor as data, what is stored) and the parts
 * of the sweep config the controller runs it from.
 */
struct plan_config {
	struct config_record rec;	/* rec.index: its position in configs */
	struct shape shape;
	const struct pinning *pinning;	/* points into the config */
	const struct noise *noise;
	const char **knob_values;	/* parallel to cfg->knobs (points into the config) */
};

struct plan_dropped {
	char *what;	/* the combination, in key form */
	char *reason;
	const struct pinning *pinning;	/* the pinning it was dropped for, else NULL */
};

struct plan_run {
	size_t config;		/* index into configs */
	int repetition;		/* 0-based */
	size_t order;		/* position in the sweep, 0-based */
};

struct plan {
	const struct sweep_config *cfg;
	struct plan_config *configs;
	size_t nconfigs;
	struct plan_dropped *dropped;
	size_t ndropped;
	struct plan_run *runs;	/* in execution order */
	size_t nruns;
	uint64_t seed;
	bool cross_host;	/* planned for another architecture: host checks skipped */
	/*
	 * Guests boot unpinned and take each run's pinning live (guest.reuse on
	 * a host of one NUMA node, where pins cannot change where the guest's
	 * memory lies): one guest then serves every pinning of its shape.
	 */
	bool live_pin;
};

/*
 * The most combinations a plan makes (the topology generator's (vcpus,
 * threads, sockets) values; shapes x pinnings x knob values x noise loads)
 * and the most runs; beyond them plan_expand fails (EXIT_BAD_INPUT) naming
 * the limit.  Expansion is linear in the combinations it makes.
 */
#define PLAN_MAX_COMBINATIONS 100000
#define PLAN_MAX_RUNS 1000000

/*
 * Expands cfg for host `host` with `seed` (used for the randomized order).
 * Fails (EXIT_BAD_INPUT) when nothing can run (naming every reason), when
 * a pinning fits no configuration (a wrong pinning: its reasons, per
 * pinning), or when the baseline does not name exactly one configuration.
 */
struct plan *plan_expand(const struct sweep_config *cfg, const struct host_facts *host,
			 uint64_t seed, struct ta_err *err);
void plan_free(struct plan *p);

/* Reads this host's facts (uname, sysconf, sysfs).  Never fails: unknowns are 0. */
void host_facts_read(struct host_facts *h);
/* MemAvailable in MiB (sizes guest.reuse's kept guests); 0 when unknown. */
long host_mem_available_mib(void);

#endif
