/*
 * config-record: one configuration of a sweep as data — the record the plan
 * writes, the database stores whole and the advisor reads back.  Plain
 * data and pure functions: no I/O, includes nothing beyond util/.
 *
 * A configuration is its factors: the shape (topology), the pinning and the
 * CPUs it gives, each host knob, the noise load; then what the controller
 * decided for it: whether a guest runs it (runner), the guest's
 * architecture and the <cpu> mode and model its domain had.  Each factor
 * is a *decision* (what a user deploys) or an *environment* factor (a
 * condition: noise always, and what advisor.environment names).
 *
 * Three strings identify a configuration, all written here, once, from the
 * fields (config_record_name), and never parsed back for meaning:
 *   key          "1x2x1/pin=none/smt=off/noise=spin" (host references:
 *                "host/pin=none/noise=none"): unique in an experiment;
 *   decision     the key without its environment factors ("1x2x1/smt=off"
 *                when pinning is environment): what the race races and
 *                rank ranks;
 *   environment  its environment level, "noise=spin" then "/NAME=VALUE"
 *                for each other environment factor in advisor.environment
 *                order ("noise=spin/pinning=compact").
 *
 * Its members as JSON (config_record_json) are what `plan --json`, the
 * stored `factors` column, `rank --json` and `export` write;
 * config_record_visit walks them in that order for table writers.
 */
#ifndef TA_CONFIG_RECORD_H
#define TA_CONFIG_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/strbuf.h"

/* A NAME=VALUE of a record: a host knob it sets, a host default. */
struct config_setting {
	char *name;
	char *value;
};

struct config_record {
	size_t index;		/* its position in the plan, 0-based */
	char *key, *decision, *environment;	/* see above */
	char *topology;		/* "1x2x1", or SxDxCxT when dies were given */
	int vcpus, sockets, dies, cores, threads;
	char *pinning;		/* the pinning's name */
	char *pinning_policy;	/* none | compact | spread | explicit */
	char **pinning_cpus;	/* explicit: one host cpuset per vCPU */
	size_t npinning_cpus;
	char *emulator_cpus;	/* explicit: the emulator's cpuset, NULL: not pinned */
	struct config_setting *knobs;	/* the host knobs it sets, in the sweep's order */
	size_t nknobs;
	char *noise;		/* the noise load's name */
	char *noise_kind;	/* none | spin | command | guest */
	char *runner;		/* agent (in a guest) | host */
	/* x86_64 | ppc64: the guest's (the host's for host runs); NULL: not
	 * recorded (stored before schema 7) */
	char *arch;
	/* the <cpu> mode and model the guest's domain had (NULL: none set,
	 * e.g. pseries under TCG, or no guest) */
	char *cpu_mode, *cpu_model;
	/* the host's default value of knobs (importers); "default" values and
	 * the knob table's kernel default serve otherwise */
	struct config_setting *host_defaults;
	size_t nhost_defaults;
	bool baseline;
	bool host_reference;	/* guest.host_baseline: the benchmark on the host itself */
};

/* Frees the strings of r and zeroes it. */
void config_record_release(struct config_record *r);
/* A deep copy of src into dst. */
void config_record_copy(struct config_record *dst, const struct config_record *src);

/* Appends a knob setting (copies name and value). */
void config_record_knob_add(struct config_record *r, const char *name, const char *value);
/* The value r sets for knob `name`, NULL when it sets none. */
const char *config_record_knob(const struct config_record *r, const char *name);
/* The host default a record carries for knob `name`, NULL when none. */
const char *config_record_host_default(const struct config_record *r, const char *name);

/*
 * Is factor `name` ("pinning", a knob's name; "noise" always is) an
 * environment factor among env[0..nenv)?
 */
bool config_factor_is_environment(const char *name, const char *const *env, size_t nenv);

/*
 * Writes r's key, decision and environment (replacing earlier ones) from
 * its fields, with env[0..nenv) the environment factors besides noise
 * (advisor.environment).  The one writer of all three.
 */
void config_record_name(struct config_record *r, const char *const *env, size_t nenv);

/*
 * The record's members in order, for writers of other formats: text
 * members (NULL value: none), integers, and lists (pinning_cpus).  Knobs
 * come as text members named by the knob; host_defaults (a nested object)
 * is left to config_record_json.
 */
struct config_record_visitor {
	void (*text)(void *data, const char *name, const char *value);
	void (*integer)(void *data, const char *name, long long value);
	void (*list)(void *data, const char *name, char *const *values, size_t n);
};
void config_record_visit(const struct config_record *r, const struct config_record_visitor *v,
			 void *data);

/*
 * Writes r's members into the JSON object w has open: topology, vcpus,
 * sockets, dies, cores, threads, pinning, pinning_policy [, pinning_cpus,
 * emulator_cpus], one member per host knob, runner, noise, noise_kind,
 * arch, cpu_mode, cpu_model [, host_defaults].
 */
struct json_writer;
void config_record_json(struct json_writer *w, const struct config_record *r);
/* The same as one compact JSON object (free it): the stored `factors`. */
char *config_record_json_text(const struct config_record *r);

#endif
