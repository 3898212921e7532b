/*
 * truth-bench: a benchmark of known truth for the advisor benchmark through
 * the real command line (tests/bench/advisor-cli.py, `make bench-advisor`).
 * A sweep with the host runner and a fake sysfs root (`run --root DIR`) runs
 * it as its `command` benchmark; it finds out which configuration it is in by
 * reading the host knob files under that root (the controller has just
 * written them) and, for explicit pinnings, the CPUs it may run on (the host
 * runner pins it to them), and prints one value drawn from that
 * configuration's distribution:
 *
 *   throughput: VALUE ops/s
 *
 * Usage:
 *   truth-bench SPEC           one run
 *   truth-bench --boot SPEC    a new "boot": draw its effect (for guest.prepare)
 *
 * SPEC is a text file, one directive a line ('#' starts a comment):
 *   root DIR                   the fake sysfs root the sweep runs with
 *   state DIR                  where the run counters and the boot effect live
 *   seed N                     the sweep's seed (every draw follows from it)
 *   knob NAME RELPATH          a knob whose value is part of the key (in order);
 *                              RELPATH @affinity: the CPUs this process may run
 *                              on, as a list joined by '+' ("0", "0+1")
 *   truth PATTERN PARAM=V ...  the distribution of the configurations whose key
 *                              (the knob values joined by ',') matches the
 *                              fnmatch PATTERN; the first matching line counts
 *   boot_by NAME               boots are per value of knob NAME (a reuse group:
 *                              its sessions interleave with others'), not one
 *                              for the whole sweep
 * PARAM (default):
 *   mean (100)      the arithmetic mean of the log-normal runs
 *   cv (0.05)       their coefficient of variation
 *   tail_p (0)      the share of runs tail_factor times slower (heavy tails)
 *   tail_factor (3)
 *   fail_slow (0)   the share of runs that fail: the slowest draws, so the
 *                   survivors look faster than the truth (informative failures)
 *   fail_p (0)      the probability that a run fails at random, whatever it
 *                   drew (a flaky benchmark: uninformative failures)
 *   drift (0)       relative change of the mean per 100 runs of the sweep
 *   boot_sd (0)     sigma of the log boot effect: the last --boot draw (what
 *                   guest.prepare wrote; per boot_by value), or with boot_every
 *   boot_every (0)  K > 0: the configuration's runs K at a time share a boot
 *                   the benchmark draws itself (runs 0..K-1 the first, ...),
 *                   for builds that have no notion of a host runner's boot
 *
 * Every run appends "KEY K ok|fail VALUE" to state/log: the truth of what ran,
 * independent of what the sweep stored.
 *
 * The k-th run of a configuration draws from (seed, key, k) alone, so a raced
 * and a full sweep of one seed see the same values for the runs both make.
 * A failed run prints to stderr and exits 3; bad usage exits 2.
 *
 * It shares no code with topoadvisor (its own RNG and normal draws): an
 * instrument must not carry the errors of what it measures.
 */
#include <errno.h>
#include <fnmatch.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>
#include <stdint.h>

#define MAX_KNOBS 8
#define MAX_TRUTHS 64

struct truth {
	double mean, cv, tail_p, tail_factor, fail_slow, fail_p, drift, boot_sd, boot_every;
};

struct spec {
	char root[4096], state[4096];
	unsigned long long seed;
	size_t nknobs, ntruths;
	char knob_name[MAX_KNOBS][64], knob_path[MAX_KNOBS][256], knob_value[MAX_KNOBS][256];
	char *truths[MAX_TRUTHS];
	char boot_by[64];
	char key[1024];
	struct truth truth;
};

static void die(int code, const char *fmt, const char *arg)
{
	fprintf(stderr, "truth-bench: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(code);
}

/* The first line of FILE without its line end ("" when it cannot be read). */
static void file_first_line(const char *path, char *out, size_t size)
{
	out[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(out, (int)size, f))
		out[0] = 0;
	fclose(f);
	out[strcspn(out, "\r\n")] = 0;
}

/* The CPUs this process may run on, as "0+1" (the host runner's pinning). */
static void affinity_read(char *out, size_t size)
{
	cpu_set_t set;
	out[0] = 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		die(1, "sched_getaffinity: %s", strerror(errno));
	for (int cpu = 0, n = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set)) {
			size_t len = strlen(out);
			snprintf(out + len, size - len, "%s%d", n++ ? "+" : "", cpu);
		}
}

/* The configuration's key: its knob values as the controller wrote them. */
static void spec_key_read(struct spec *s)
{
	for (size_t i = 0; i < s->nknobs; i++) {
		char path[8192];
		char *value = s->knob_value[i];
		snprintf(path, sizeof(path), "%s/%s", s->root, s->knob_path[i]);
		if (!strcmp(s->knob_path[i], "@affinity"))
			affinity_read(value, sizeof(s->knob_value[i]));
		else
			file_first_line(path, value, sizeof(s->knob_value[i]));
		if (!value[0])
			die(2, "cannot read knob file %s", path);
		size_t len = strlen(s->key);
		if (snprintf(s->key + len, sizeof(s->key) - len, "%s%s", i ? "," : "", value) >=
		    (int)(sizeof(s->key) - len))
			die(2, "knob values too long: %s", path);
	}
}

/* Whether a "truth" line matches the key; if so its parameters are the truth. */
static bool spec_truth_apply(struct spec *s, char *rest)
{
	char *pattern = strtok(rest, " \t");
	if (!pattern)
		die(2, "%s", "a truth line needs a pattern");
	if (fnmatch(pattern, s->key, 0))
		return false;
	for (char *p = strtok(NULL, " \t"); p; p = strtok(NULL, " \t")) {
		char *eq = strchr(p, '=');
		if (!eq)
			die(2, "bad truth parameter '%s' (want NAME=VALUE)", p);
		*eq = 0;
		char *end;
		double v = strtod(eq + 1, &end);
		if (*end || end == eq + 1)
			die(2, "bad number in truth parameter '%s'", p);
		struct { const char *name; double *field; } params[] = {
			{ "mean", &s->truth.mean }, { "cv", &s->truth.cv },
			{ "tail_p", &s->truth.tail_p }, { "tail_factor", &s->truth.tail_factor },
			{ "fail_slow", &s->truth.fail_slow }, { "fail_p", &s->truth.fail_p },
			{ "drift", &s->truth.drift },
			{ "boot_sd", &s->truth.boot_sd }, { "boot_every", &s->truth.boot_every },
		};
		size_t i;
		for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
			if (!strcmp(params[i].name, p)) {
				*params[i].field = v;
				break;
			}
		if (i == sizeof(params) / sizeof(params[0]))
			die(2, "unknown truth parameter '%s'", p);
	}
	return true;
}

/* Reads SPEC, then the configuration's key; with want_truth, its truth. */
static void spec_load(struct spec *s, const char *path, bool want_truth)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die(2, "cannot open spec %s", path);
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\r\n")] = 0;
		char *word = strtok(line, " \t");
		char *rest = strtok(NULL, "");
		if (!word)
			continue;
		if (!rest)
			die(2, "directive '%s' needs a value", word);
		rest += strspn(rest, " \t");
		if (!strcmp(word, "root")) {
			snprintf(s->root, sizeof(s->root), "%s", rest);
		} else if (!strcmp(word, "state")) {
			snprintf(s->state, sizeof(s->state), "%s", rest);
		} else if (!strcmp(word, "seed")) {
			s->seed = strtoull(rest, NULL, 10);
		} else if (!strcmp(word, "knob")) {
			char *name = strtok(rest, " \t"), *rel = strtok(NULL, " \t");
			if (!name || !rel || s->nknobs == MAX_KNOBS)
				die(2, "bad knob line (want: knob NAME RELPATH, at most 8): %s", rest);
			snprintf(s->knob_name[s->nknobs], sizeof(s->knob_name[0]), "%s", name);
			snprintf(s->knob_path[s->nknobs++], sizeof(s->knob_path[0]), "%s", rel);
		} else if (!strcmp(word, "boot_by")) {
			snprintf(s->boot_by, sizeof(s->boot_by), "%s", rest);
		} else if (!strcmp(word, "truth")) {
			if (s->ntruths == MAX_TRUTHS || !(s->truths[s->ntruths++] = strdup(rest)))
				die(2, "%s", "too many truth lines (at most 64)");
		} else {
			die(2, "unknown directive '%s'", word);
		}
	}
	fclose(f);
	if (!s->state[0] || !s->root[0])
		die(2, "%s: needs root and state lines", path);
	spec_key_read(s);
	bool matched = false;
	for (size_t i = 0; i < s->ntruths; i++) {
		if (want_truth && !matched)
			matched = spec_truth_apply(s, s->truths[i]);
		free(s->truths[i]);
	}
	if (want_truth && !matched)
		die(2, "no truth line matches configuration '%s'", s->key);
}

/*
 * The file holding the current boot's effect: one per value of the boot_by
 * knob (its reuse group's session), else one for the sweep.
 */
static void boot_path(const struct spec *s, char *out, size_t size)
{
	for (size_t i = 0; s->boot_by[0] && i < s->nknobs; i++)
		if (!strcmp(s->knob_name[i], s->boot_by)) {
			snprintf(out, size, "%s/boot-%s", s->state, s->knob_value[i]);
			return;
		}
	if (s->boot_by[0])
		die(2, "boot_by names no knob line: %s", s->boot_by);
	snprintf(out, size, "%s/boot", s->state);
}

/* FNV-1a: a stable 64-bit name for a key, to seed its own stream. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Reads the counter in state/NAME and stores it plus one; returns the old value. */
static long counter_bump(const struct spec *s, const char *name)
{
	char path[8192], text[64];
	snprintf(path, sizeof(path), "%s/%s", s->state, name);
	file_first_line(path, text, sizeof(text));
	long n = atol(text);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%ld\n", n + 1) < 0 || fclose(f))
		die(1, "cannot write counter %s", path);
	return n;
}

/* splitmix64 (Steele, Lea, Flood 2014): a small seeded stream of 64-bit draws. */
struct rng {
	uint64_t x;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A stream of its own for each (seed, name, index): the first draw mixes them. */
static struct rng rng_for(uint64_t seed, uint64_t name, uint64_t index)
{
	struct rng r = { seed ^ name };
	r.x ^= rng_next(&r) + index * 0xd1b54a32d192ed03ULL;
	return r;
}

/* Uniform in (0, 1). */
static double uniform(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller). */
static double normal(struct rng *r)
{
	double u1 = uniform(r), u2 = uniform(r);
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* --boot: a fresh boot's standard normal effect, one stream per sweep. */
static int boot_draw(const struct spec *s)
{
	long boot = counter_bump(s, "boots");
	struct rng rng = rng_for(s->seed, 0xb007b007b007ULL, (uint64_t)boot);
	char path[8192];
	boot_path(s, path, sizeof(path));
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%.17g\n", normal(&rng)) < 0 || fclose(f))
		die(1, "cannot write %s", path);
	return 0;
}

/* Appends this run to state/log (one short line, O_APPEND). */
static void run_log(const struct spec *s, long k, bool fail, double value)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/log", s->state);
	FILE *f = fopen(path, "a");
	if (!f || fprintf(f, "%s %ld %s %.6f\n", s->key, k, fail ? "fail" : "ok", value) < 0 ||
	    fclose(f))
		die(1, "cannot append to %s", path);
}

/*
 * The log boot effect of this run: the configuration's own boot k / K when
 * boot_every = K, else the one the last `--boot` (guest.prepare) drew.
 */
static double boot_effect(const struct spec *s, long k)
{
	const struct truth *t = &s->truth;
	if (t->boot_sd <= 0)
		return 0;
	if (t->boot_every >= 1) {
		uint64_t boot = (uint64_t)(k / (long)t->boot_every);
		struct rng rng = rng_for(s->seed, hash_str(s->key) ^ 0xb007b007b007ULL, boot);
		return t->boot_sd * normal(&rng);
	}
	char path[8192], text[64];
	boot_path(s, path, sizeof(path));
	file_first_line(path, text, sizeof(text));
	if (!text[0])
		die(1, "%s", "no boot effect drawn: run truth-bench --boot first (guest.prepare)");
	return t->boot_sd * strtod(text, NULL);
}

static int run_draw(struct spec *s)
{
	const struct truth *t = &s->truth;
	if (t->boot_sd > 0 && t->boot_every < 1)
		boot_effect(s, 0);	/* no boot drawn: fail before counting a run */
	/* A per-configuration counter named by the key's hash (keys hold '/'). */
	char name[64];
	snprintf(name, sizeof(name), "runs-%016llx", (unsigned long long)hash_str(s->key));
	long k = counter_bump(s, name);
	long global = counter_bump(s, "runs");
	struct rng rng = rng_for(s->seed, hash_str(s->key), (uint64_t)k);
	double z = normal(&rng), u_tail = uniform(&rng);
	double sigma = sqrt(log(1 + t->cv * t->cv));
	double value = exp(log(t->mean) - sigma * sigma / 2 + sigma * z + boot_effect(s, k));
	if (u_tail < t->tail_p)
		value /= t->tail_factor;
	value *= 1 + t->drift * (double)global / 100;
	/* The slowest draws fail: the run's quantile in its distribution is Phi(z).
	 * A random failure draws after the others, so values stay as without it. */
	bool fail = 0.5 * erfc(-z / M_SQRT2) < t->fail_slow;
	if (t->fail_p > 0 && uniform(&rng) < t->fail_p)
		fail = true;
	run_log(s, k, fail, value);
	if (fail) {
		fprintf(stderr, "truth-bench: simulated failure of a slow run (%.3f)\n", value);
		return 3;
	}
	printf("progress 50%%\nthroughput: %.6f ops/s\n", value);
	return 0;
}

int main(int argc, char **argv)
{
	bool boot = argc == 3 && !strcmp(argv[1], "--boot");
	if (argc != 2 && !boot) {
		fprintf(stderr, "usage: truth-bench [--boot] SPEC\n");
		return 2;
	}
	struct spec s = { .truth = { .mean = 100, .cv = 0.05, .tail_factor = 3 } };
	spec_load(&s, argv[boot ? 2 : 1], !boot);
	return boot ? boot_draw(&s) : run_draw(&s);
}
