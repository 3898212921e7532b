/*
 * mkstore: fills a database with big stored experiments for `make bench`
 * (the store's part: list, export, rank, report, compare at 100 k+ runs),
 * written the way a sweep writes them — db_experiment_insert, db_plan_store
 * with configuration records, then one db_run_store per run — so the rows,
 * indexes and any summary the schema maintains are the ones a real sweep
 * leaves.
 *
 *   mkstore DB EXPERIMENTS CONFIGURATIONS REPETITIONS host|guest [SEED]
 *
 * Adds EXPERIMENTS experiments to DB (created when missing), each with
 * CONFIGURATIONS configurations (shapes of 4, then 2 vCPUs x pinning x
 * noise, at most 54) and REPETITIONS runs of each, in randomized blocks.
 * About one run in a hundred fails.  Two kinds of run:
 *   host   what a `guest.runner: host` sweep of a command benchmark stores,
 *          the kind of sweep that reaches 100 000 runs (25 ms each): its
 *          metric (ops), a latency, the benchmark window, stdout, host state;
 *   guest  what a guest run with vCPU statistics and a POWER host's exit
 *          counts hold together: the primary metric (records_per_s), time
 *          and per-vCPU figures, gang exits, kvm_hv exit reasons per vCPU,
 *          stdout, host state and guest topology, and with the first run of
 *          a configuration its domain XML (one boot with guest.reuse).
 * Values are seeded: the same arguments give the same database.  Prints the
 * experiment ids, one a line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide/stats.h"
#include "model/config-record.h"
#include "schema/db-plan.h"
#include "schema/db-runs.h"

#define MAX_VCPUS 4

struct shape {
	int sockets, cores, threads;
};

/* Every sockets x cores x threads of 4, then 2 vCPUs with power-of-two threads. */
static size_t shapes_make(struct shape *out)
{
	size_t n = 0;
	for (int v = MAX_VCPUS; v >= 2; v /= 2)
		for (int t = 1; t <= v; t *= 2)
			for (int c = 1; c * t <= v; c++)
				if (v % (c * t) == 0)
					out[n++] = (struct shape){ v / (c * t), c, t };
	return n;
}

static const char *const pinnings[] = { "none", "compact", "spread" };
static const char *const noises[] = { "none", "spin" };

static void die(const struct ta_err *err)
{
	fprintf(stderr, "mkstore: %s\n", err->msg);
	exit(1);
}

/* Uniform in [0, 1). */
static double uniform(struct stats_rng *rng)
{
	return (double)(stats_rng_next(rng) >> 11) / 9007199254740992.0;
}

/* Roughly normal (Irwin-Hall of 4), mean 0, sd 1. */
static double normalish(struct stats_rng *rng)
{
	double s = 0;
	for (int i = 0; i < 4; i++)
		s += uniform(rng);
	return (s - 2.0) * 1.7320508075688772;
}

static void record_make(struct config_record *r, size_t idx, const struct shape *sh, bool guest)
{
	memset(r, 0, sizeof(*r));
	const char *pin = pinnings[(idx / 2) % 3];
	const char *noise = noises[idx % 2];
	char topology[32];
	snprintf(topology, sizeof(topology), "%dx%dx%d", sh->sockets, sh->cores, sh->threads);
	r->index = idx;
	r->topology = xstrdup(topology);
	r->vcpus = sh->sockets * sh->cores * sh->threads;
	r->sockets = sh->sockets;
	r->dies = 1;
	r->cores = sh->cores;
	r->threads = sh->threads;
	r->pinning = xstrdup(pin);
	r->pinning_policy = xstrdup(pin);
	r->noise = xstrdup(noise);
	r->noise_kind = xstrdup(noise);
	r->runner = xstrdup(guest ? "agent" : "host");
	r->arch = xstrdup("x86_64");
	r->cpu_mode = xstrdup("custom");
	r->cpu_model = xstrdup("Westmere");
	r->baseline = idx == 0;
	config_record_name(r, NULL, 0);
}

struct run_values {
	struct db_metric m[8 + 2 * MAX_VCPUS];
	char names[2 * MAX_VCPUS][24];
	struct db_exit_count x[3 * MAX_VCPUS];
	struct db_artifact a[2];
	char stdout_text[128];
	char topology[160];
};

static const char domain_xml[] =
	"<domain type='qemu'>\n  <name>topoadvisor-bench</name>\n"
	"  <memory unit='MiB'>384</memory>\n  <vcpu placement='static'>4</vcpu>\n"
	"  <os><type arch='x86_64' machine='pc'>hvm</type><kernel>/var/cache/topoadvisor/"
	"guest-x86_64/vmlinuz</kernel><initrd>/var/cache/topoadvisor/guest-x86_64/"
	"initrd.img</initrd><cmdline>console=ttyS0 quiet</cmdline></os>\n"
	"  <cpu mode='custom' match='exact'><model fallback='forbid'>Westmere</model>"
	"<topology sockets='1' dies='1' cores='2' threads='2'/></cpu>\n"
	"  <devices><channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/>"
	"</channel><serial type='pty'/><console type='pty'/></devices>\n</domain>\n";

static const char *const reasons[] = { "EXTERNAL", "HV_DECREMENTER", "H_DOORBELL" };

/* A run's result with seeded figures around the configuration's mean. */
/* A host-runner run: the command's metric and latency, the window, stdout. */
static void host_run_make(struct db_run_result *res, struct run_values *v, double value,
			  struct stats_rng *rng)
{
	double window = 0.025 + 0.003 * uniform(rng);
	size_t n = 0;
	v->m[n++] = (struct db_metric){ "ops", value, NULL, METRIC_DIR_HIGHER };
	v->m[n++] = (struct db_metric){ "latency_us", 1e6 / value, "us", METRIC_DIR_LOWER };
	v->m[n++] = (struct db_metric){ "benchmark_seconds", window, "s", METRIC_DIR_NONE };
	res->metrics = v->m;
	res->nmetrics = n;
	snprintf(v->stdout_text, sizeof(v->stdout_text), "ops=%.0f latency=%.1fus\n", value,
		 1e6 / value);
	v->a[0] = (struct db_artifact){ "benchmark.stdout", v->stdout_text,
					strlen(v->stdout_text) };
	res->artifacts = v->a;
	res->nartifacts = 1;
}

/* A run's result with seeded figures around the configuration's mean. */
static void run_make(struct db_run_result *res, struct run_values *v, int64_t run_id,
		     const struct config_record *c, double mean, bool first, bool guest,
		     struct stats_rng *rng)
{
	memset(res, 0, sizeof(*res));
	res->run_id = run_id;
	res->topology_ok = guest ? 1 : -1;
	res->lost_events = guest ? 0 : -1;
	res->host_state = guest
		? "{\"knobs\":{},\"loadavg\":[1.25,1.5,1.75],\"noise\":\"spin\",\"runner\":\"agent\"}"
		: "{\"knobs\":{},\"loadavg\":[1.25,1.5,1.75],\"noise\":\"spin\",\"runner\":\"host\"}";
	snprintf(v->topology, sizeof(v->topology),
		 "{\"regular\":true,\"sockets\":%d,\"dies\":1,\"cores\":%d,\"threads\":%d}",
		 c->sockets, c->cores, c->threads);
	res->guest_topology = guest ? v->topology : NULL;
	if (uniform(rng) < 0.01) {
		res->status = "failed";
		res->error = guest ? "benchmark timed out after 60 s (guest agent: no answer)"
				   : "benchmark exited with status 1";
		res->topology_ok = -1;
		res->lost_events = -1;
		return;
	}
	res->status = "ok";
	double value = mean * (1 + 0.04 * normalish(rng));
	if (!guest) {
		host_run_make(res, v, value, rng);
		return;
	}
	double real = 3.0 + 0.01 * uniform(rng);
	size_t n = 0;
	v->m[n++] = (struct db_metric){ "records_per_s", value, "records/s", METRIC_DIR_HIGHER };
	v->m[n++] = (struct db_metric){ "real_s", real, "s", METRIC_DIR_LOWER };
	v->m[n++] = (struct db_metric){ "user_s", real * 1.9, "s", METRIC_DIR_LOWER };
	v->m[n++] = (struct db_metric){ "sys_s", real * 0.05, "s", METRIC_DIR_LOWER };
	v->m[n++] = (struct db_metric){ "benchmark_seconds", real + 0.02, "s", METRIC_DIR_NONE };
	v->m[n++] = (struct db_metric){ "gang_exits", value * 0.3, "exits", METRIC_DIR_LOWER };
	v->m[n++] = (struct db_metric){ "gang_exits_per_s", value * 0.1, "exits/s",
					METRIC_DIR_LOWER };
	double run_sum = 0, wait_sum = 0;
	for (int i = 0; i < c->vcpus; i++) {
		double run = real * (0.5 + 0.5 * uniform(rng)), wait = real * 0.2 * uniform(rng);
		run_sum += run;
		wait_sum += wait;
		snprintf(v->names[2 * i], sizeof(v->names[0]), "vcpu%d.run_s", i);
		snprintf(v->names[2 * i + 1], sizeof(v->names[0]), "vcpu%d.wait_s", i);
		v->m[n++] = (struct db_metric){ v->names[2 * i], run, "s", METRIC_DIR_NONE };
		v->m[n++] = (struct db_metric){ v->names[2 * i + 1], wait, "s", METRIC_DIR_NONE };
	}
	v->m[n++] = (struct db_metric){ "vcpu_wait_s", wait_sum, "s", METRIC_DIR_LOWER };
	if (n < sizeof(v->m) / sizeof(*v->m))
		v->m[n++] = (struct db_metric){ "vcpu_run_s", run_sum, "s", METRIC_DIR_NONE };
	res->metrics = v->m;
	res->nmetrics = n;
	size_t nx = 0;
	for (int i = 0; i < c->vcpus; i++)
		for (size_t k = 0; k < 3; k++)
			v->x[nx++] = (struct db_exit_count){ "kvm_hv", i, reasons[k],
				(uint64_t)(value * (k + 1) * (0.9 + 0.2 * uniform(rng))), -1, -1 };
	res->exits = v->x;
	res->nexits = nx;
	snprintf(v->stdout_text, sizeof(v->stdout_text), "%.0f records/s\nreal 3.00 s\n"
		 "user %.2f s\nsys 0.15 s\n", value, real * 1.9);
	size_t na = 0;
	v->a[na++] = (struct db_artifact){ "benchmark.stdout", v->stdout_text,
					   strlen(v->stdout_text) };
	if (first)
		v->a[na++] = (struct db_artifact){ "domain.xml", domain_xml, sizeof(domain_xml) - 1 };
	res->artifacts = v->a;
	res->nartifacts = na;
}

static const char guest_yaml[] =
	"name: store-bench\nlibvirt: {uri: qemu:///system, domain_type: auto, arch: x86_64}\n"
	"guest: {runner: agent, reuse: true}\n"
	"topology: {vcpus: [4, 2]}\npinning: [none, compact, spread]\n"
	"noise: [none, {kind: spin, name: spin, vcpus: \"1\"}]\n"
	"benchmark: {kind: ebizzy, argv: [ebizzy, -S, \"3\"], duration: 3, metric: records_per_s}\n"
	"collect: {vcpu_stats: true, exit_reasons: true, gang_exits: true}\n"
	"order: randomized\n";

static const char host_yaml[] =
	"name: store-host\nguest: {runner: host}\n"
	"topology: {vcpus: [4, 2]}\npinning: [none, compact, spread]\n"
	"noise: [none, {kind: spin, name: spin, cpus: \"1\"}]\n"
	"benchmark: {kind: command, argv: [fake-bench, \"250\"], duration: 1,\n"
	"  parse: 'ops=(?<ops>[0-9.]+) latency=(?<latency_us>[0-9.]+)us', metric: ops}\n"
	"order: randomized\n";

/* One experiment: its plan, then every run stored as the controller stores it. */
static int64_t experiment_make(struct db *db, size_t nconfigs, int reps, bool guest,
			       struct stats_rng *rng)
{
	struct ta_err err = { 0 };
	struct db_experiment_new e = {
		.name = guest ? "store-guest" : "store-host",
		.config_yaml = guest ? guest_yaml : host_yaml,
		.config_len = strlen(guest ? guest_yaml : host_yaml),
		.config_path = "store-bench.yaml", .seed = stats_rng_next(rng),
		.primary_metric = guest ? "records_per_s" : "ops", .higher_is_better = 1,
		.objective = "worst", .equivalence = 0.02,
	};
	int64_t exp;
	if (db_experiment_insert(db, &e, &exp, &err) < 0)
		die(&err);

	struct shape shapes[64];
	size_t nshapes = shapes_make(shapes);
	struct config_record *recs = xcalloc(nconfigs, sizeof(*recs));
	for (size_t i = 0; i < nconfigs; i++)
		record_make(&recs[i], i, &shapes[(i / 6) % nshapes], guest);
	size_t nruns = nconfigs * (size_t)reps;
	struct db_plan_run *runs = xcalloc(nruns, sizeof(*runs));
	for (int rep = 0; rep < reps; rep++) {
		struct db_plan_run *block = runs + (size_t)rep * nconfigs;
		for (size_t i = 0; i < nconfigs; i++)
			block[i] = (struct db_plan_run){ i, rep, 0 };
		for (size_t i = nconfigs; i > 1; i--) {	/* a randomized block */
			size_t j = (size_t)(uniform(rng) * (double)i);
			struct db_plan_run t = block[i - 1];
			block[i - 1] = block[j];
			block[j] = t;
		}
		for (size_t i = 0; i < nconfigs; i++)
			block[i].order = (size_t)rep * nconfigs + i;
	}
	int64_t *ids = xcalloc(nconfigs, sizeof(*ids));
	if (db_plan_store(db, exp, recs, nconfigs, runs, nruns, ids, &err) < 0)
		die(&err);

	double *means = xcalloc(nconfigs, sizeof(*means));
	for (size_t i = 0; i < nconfigs; i++)
		means[i] = 20000 * (0.8 + 0.4 * uniform(rng));
	struct db_run_todo *todo;
	size_t ntodo;
	if (db_experiment_set_status(db, exp, "running", &err) < 0 ||
	    db_runs_list(db, exp, true, &todo, &ntodo, &err) < 0)
		die(&err);
	struct run_values *v = xcalloc(1, sizeof(*v));
	for (size_t k = 0; k < ntodo; k++) {
		size_t ci = 0;
		while (ids[ci] != todo[k].configuration_id)
			ci++;
		struct db_run_result res;
		run_make(&res, v, todo[k].run_id, &recs[ci], means[ci], todo[k].repetition == 0,
			 guest, rng);
		if (db_run_store(db, &res, &err) < 0)
			die(&err);
	}
	if (db_experiment_set_status(db, exp, "done", &err) < 0)
		die(&err);
	free(v);
	db_runs_free(todo, ntodo);
	free(means);
	free(ids);
	free(runs);
	for (size_t i = 0; i < nconfigs; i++)
		config_record_release(&recs[i]);
	free(recs);
	return exp;
}

int main(int argc, char **argv)
{
	if (argc < 6 || argc > 7 || (strcmp(argv[5], "host") && strcmp(argv[5], "guest"))) {
		fprintf(stderr, "usage: mkstore DB EXPERIMENTS CONFIGURATIONS REPETITIONS "
			"host|guest [SEED]\n");
		return 2;
	}
	long nexp = strtol(argv[2], NULL, 10), nconf = strtol(argv[3], NULL, 10),
	     reps = strtol(argv[4], NULL, 10);
	struct shape shapes[64];
	size_t max_configs = shapes_make(shapes) * 6;
	if (nexp < 1 || nconf < 1 || (size_t)nconf > max_configs || reps < 1) {
		fprintf(stderr, "mkstore: need EXPERIMENTS >= 1, 1 <= CONFIGURATIONS <= %zu, "
			"REPETITIONS >= 1\n", max_configs);
		return 2;
	}
	struct stats_rng rng;
	stats_rng_seed(&rng, argc == 7 ? strtoull(argv[6], NULL, 10) : 22);
	bool guest = !strcmp(argv[5], "guest");
	struct ta_err err = { 0 };
	struct db *db = db_open(argv[1], true, &err);
	if (!db)
		die(&err);
	/* A generated store need not survive a power cut: no syncs at checkpoints. */
	sqlite3_stmt *st = db_prepare(db, "PRAGMA synchronous = OFF", &err);
	if (!st || sqlite3_step(st) != SQLITE_DONE)
		die(&err);
	sqlite3_finalize(st);
	for (long i = 0; i < nexp; i++)
		printf("%" PRId64 "\n", experiment_make(db, (size_t)nconf, (int)reps, guest, &rng));
	db_close(db);
	return 0;
}
