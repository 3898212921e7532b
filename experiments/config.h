/*
 * config: the sweep configuration, loaded from YAML and validated.
 *
 * config_load() turns a file into a `struct sweep_config` or fails with
 * every error of the file (up to 20, in file order, one a line), each
 * naming file:line:column, the key, what was expected and, for unknown
 * keys, a did-you-mean.  Everything after this point works on the
 * validated struct; no later stage looks at YAML.  The full key reference is
 * docs/config.md.
 *
 * Lists marked "factor" below are the sweep's factors: the plan is their
 * cross product (see plan.h).
 */
#ifndef TA_CONFIG_H
#define TA_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "../model/bench-kind.h"
#include "../util/err.h"

enum domain_type { DOMAIN_AUTO, DOMAIN_KVM, DOMAIN_QEMU };
enum guest_arch { ARCH_HOST, ARCH_X86_64, ARCH_PPC64 };
enum runner_kind { RUNNER_AGENT, RUNNER_HOST };
enum pin_policy { PIN_NONE, PIN_COMPACT, PIN_SPREAD, PIN_EXPLICIT };
enum noise_kind { NOISE_NONE, NOISE_SPIN, NOISE_COMMAND, NOISE_GUEST };
enum run_order { ORDER_RANDOMIZED, ORDER_SEQUENTIAL };
enum strategy { STRATEGY_FULL, STRATEGY_RACE };

/* A NULL-terminated argument vector (owned). */
struct argv_list {
	char **argv;
	size_t argc;
};

/*
 * The most vCPUs a shape may have (sockets x dies x cores x threads, and a
 * generator's vcpus): QEMU's largest machines and KVM_MAX_VCPUS on x86 stop
 * near here, and the product of four parts of up to 1024 each would
 * overflow an int long before.
 */
#define CONFIG_MAX_VCPUS 1024

/* One guest CPU shape; dies is 1 unless given. */
struct shape {
	int sockets, dies, cores, threads;
	bool dies_given;	/* the user wrote dies: keep it in XML and keys */
	int line, col;		/* where it was written (for plan messages) */
};

/* Topology: an explicit list of shapes, or a generator. */
struct topology_spec {
	bool generated;
	struct shape *shapes;	/* explicit list */
	size_t nshapes;
	int *vcpus;		/* generator: vCPU counts */
	size_t nvcpus;
	int *threads;		/* generator: allowed threads per core */
	size_t nthreads;
	int *sockets;		/* generator: allowed sockets (NULL: any divisor) */
	size_t nsockets;
};

/*
 * Factor items the user did not write (the default [none] pinning and noise)
 * have line == 0.
 */

/* One pinning choice (factor). */
struct pinning {
	enum pin_policy policy;
	char *name;		/* "none", "compact", "spread" or the user's name */
	char **vcpu_cpus;	/* explicit: one host cpuset string per vCPU */
	size_t nvcpu_cpus;
	char *emulator_cpus;	/* explicit: optional emulator cpuset */
	int line, col;
};

/* One host knob and the values to sweep (factor). */
struct knob_factor {
	char *name;		/* e.g. "subcores_per_core", "kvm_hv.dynamic_mt_modes" */
	char **values;		/* as written, normalised: "on"/"off", decimal */
	size_t nvalues;
	int line, col;
};

/* One noise load (factor). */
struct noise {
	enum noise_kind kind;
	char *name;		/* unique; defaults to the kind */
	char *cpus;		/* host cpuset the load is pinned to (NULL: unpinned) */
	char *vcpus;		/* spin, command: run inside the measured guest on these
				   guest vCPUs instead (NULL: on the host); never with cpus */
	int threads;		/* spin: busy threads (default: one per CPU in cpus or
				   vcpus, 1 when neither is set); 0 for other kinds */
	struct argv_list argv;	/* command: the load; guest: run in the noise guest */
	int line, col;
};

struct metric_spec {
	char *name;		/* primary metric */
	bool higher_is_better;
	bool direction_given;	/* false: the parser's declared direction decides
				   (another metric of a parsing kind, no direction written) */
	char *unit;
};

struct benchmark {
	enum bench_kind kind;
	struct argv_list argv;		/* the client / the benchmark */
	struct argv_list server_argv;	/* client/server benchmarks (redis) */
	char *vcpus;			/* guest vCPUs the benchmark (and its server) run
					   on, with taskset; NULL: unpinned */
	int duration;			/* seconds; 0 = as long as it takes */
	int timeout;			/* seconds before a run is failed */
	struct metric_spec metric;
	char *parse_regex;		/* command: PCRE2 syntax; named groups (?<name>…) */
	char **parse_groups;		/* [i]: name of capture group i+1, NULL if unnamed */
	size_t nparse_groups;		/* capture groups of parse_regex */
};

/* A baseline: factor name -> value that together pick one configuration. */
struct baseline_item {
	char *factor;		/* "topology", "pinning", "noise" or a knob name */
	char *value;		/* canonical text (shape "SxCxT", pinning/noise name, knob value) */
	int line, col;
};

struct collect {
	bool gang_exits;
	bool exit_reasons;
	bool vcpu_stats;
	int buffer_kib;		/* per-CPU trace buffer size */
	double max_lost_fraction;	/* a run losing more events fails */
};

/* executor: where a sweep's runs go (docs/config.md, "executor"). */
enum executor_kind { EXECUTOR_LOCAL, EXECUTOR_SLURM, EXECUTOR_SSH };

struct executor_settings {
	enum executor_kind kind;	/* default local: this host */
	int max_hosts;			/* slurm: blocks (jobs) in flight at once */
	char *partition;		/* slurm: NULL for the cluster's default */
	struct argv_list sbatch;	/* slurm: extra sbatch options (may be empty) */
	char *shared_dir;		/* slurm: seen by the controller and every node;
					   NULL: not given (run refuses a slurm sweep) */
	char *node_dir;			/* slurm: node-local state (lock, journal, run
					   directory), one subdirectory per node */
	int max_attempts;		/* slurm: submissions of one block at most */
	double poll_interval;		/* slurm: seconds between squeue polls */
	int exclude_after;		/* slurm: a node failing this many blocks in a row
					   gets no more of the sweep (0: never) */
	struct argv_list hosts;		/* ssh: the hosts, as ssh names them */
	char *ssh_config;		/* ssh: ssh -F FILE; NULL: ssh's own */
};

/* advisor.objective: how a decision's ratios over environment levels combine. */
enum advisor_objective { OBJECTIVE_WORST, OBJECTIVE_MEAN };

/* advisor: how rank and recommend decide (docs/config.md, docs/advisor.md). */
struct advisor_settings {
	enum advisor_objective objective;	/* default worst */
	double equivalence;		/* delta of "equivalent", a fraction; default 0.02 */
	double max_failure_rate;	/* above it a configuration is failing; default 0.2 */
	char **environment;		/* factors that are conditions, besides noise */
	size_t nenvironment;
};

struct sweep_config {
	char *path;		/* file it was read from */
	bool files_checked;	/* referenced files (template) were readable at load */
	char *text;		/* the YAML exactly as read */
	size_t text_len;

	char *name;
	char *description;

	/* libvirt */
	char *uri;
	enum domain_type domain_type;
	char *template_path;	/* NULL: built-in template; else resolved against
				   the config file's directory */
	char *name_prefix;
	enum guest_arch arch;
	int memory_mib;

	/* guest */
	enum runner_kind runner;
	int boot_timeout;
	struct argv_list *prepare;	/* commands run before the benchmark */
	size_t nprepare;
	bool reuse_guest;		/* reuse across repetitions when possible */
	int reuse_runs;			/* a reused boot serves at most this many blocks (default 1) */
	bool host_baseline;		/* also run the benchmark on the host itself */

	struct topology_spec topology;

	struct pinning *pinnings;	/* factor; default: [none] */
	size_t npinnings;

	struct knob_factor *knobs;	/* factors, in the order written */
	size_t nknobs;

	struct noise *noises;		/* factor; default: [none] */
	size_t nnoises;

	struct benchmark bench;

	struct baseline_item *baseline;
	size_t nbaseline;

	struct collect collect;

	struct advisor_settings advisor;

	struct executor_settings executor;

	int repetitions;
	enum run_order order;
	bool seed_given;
	unsigned long long seed;
	enum strategy strategy;
	int race_first_test;		/* strategy race: blocks before the first test */
};

/*
 * Loads and validates path.  On failure returns NULL with err->code =
 * EXIT_BAD_INPUT and one line "FILE:LINE:COL: KEY: what was expected" per
 * error (yaml-reader.h).
 */
struct sweep_config *config_load(const char *path, struct ta_err *err);
/* The same from text already in memory (path is used in messages only). */
struct sweep_config *config_parse(const char *path, const char *text, size_t len,
				  struct ta_err *err);
void config_free(struct sweep_config *cfg);

/*
 * config_parse with flags.  CONFIG_CHECK_FILES: the text is the file at
 * `path` on this host, so files it names (the template) must be readable
 * now.  Without it (a config stored in the DB, replayed by rerun) they are
 * only resolved; the run fails later if they are gone.
 */
enum { CONFIG_CHECK_FILES = 1 };
struct sweep_config *config_parse_flags(const char *path, const char *text, size_t len,
					unsigned flags, struct ta_err *err);

/*
 * Appends the validated config in a canonical, line-per-value text form
 * (defaults filled in, values normalised).  Two configs that mean the same
 * give the same text: tests compare with it, `plan -v` can show it.
 */
struct strbuf;
void config_dump(const struct sweep_config *cfg, struct strbuf *out);

/*
 * Parses a host cpuset in libvirt syntax ("0-3,8,^2"): on success returns 0
 * and, when the pointers are non-NULL, the number of CPUs in the set and
 * the highest one.  Fails (-1) on bad syntax, reversed ranges, CPU numbers
 * above CPUSET_MAX_CPU (util/cpuset.h, which does the parsing), or an empty result.
 */
int config_cpuset_parse(const char *set, int *ncpus, int *max_cpu);

/* Names used in keys, messages and the DB. */
const char *config_noise_kind_name(enum noise_kind k);
const char *config_domain_type_name(enum domain_type t);
const char *config_arch_name(enum guest_arch a);
const char *config_runner_name(enum runner_kind r);
const char *config_executor_name(enum executor_kind k);
/* "local" or "slurm" into *out; -1 for another word. */
int config_executor_from_name(const char *s, enum executor_kind *out);
/* none, compact, spread, explicit */
const char *config_pin_policy_name(enum pin_policy p);

/* Writes "SxCxT" (or "SxDxCxT" when dies were given) into buf. */
void shape_format(const struct shape *s, char *buf, size_t n);
int shape_vcpus(const struct shape *s);

#endif
