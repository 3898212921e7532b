/*
 * guesttopo: parse and judge the guest's sysfs CPU topology.  The contract
 * is in guesttopo.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"
#include "guesttopo.h"

static int cmp_cpu(const void *a, const void *b)
{
	const struct guesttopo_cpu *x = a, *y = b;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* Counts the CPUs in a list like "0-1,4"; -1 when malformed. */
static int list_count(const char *s)
{
	int n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return -1;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		n += (int)(b - a + 1);
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return n;
}

static struct guesttopo_cpu *cpu_get(struct guesttopo *t, int cpu, size_t *alloc)
{
	for (size_t i = 0; i < t->ncpus; i++)
		if (t->cpus[i].cpu == cpu)
			return &t->cpus[i];
	if (t->ncpus == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 8;
		t->cpus = xrealloc(t->cpus, *alloc * sizeof(*t->cpus));
	}
	struct guesttopo_cpu *c = &t->cpus[t->ncpus++];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->package = c->die = c->core = -1;
	return c;
}

/* Number of distinct values of key() among the CPUs. */
static int distinct(const struct guesttopo *t, long long (*key)(const struct guesttopo_cpu *))
{
	int n = 0;
	for (size_t i = 0; i < t->ncpus; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = key(&t->cpus[j]) == key(&t->cpus[i]);
		n += !seen;
	}
	return n;
}

static long long key_pkg(const struct guesttopo_cpu *c)
{
	return c->package;
}

static long long key_die(const struct guesttopo_cpu *c)
{
	return (long long)c->package << 20 | (c->die < 0 ? 0 : c->die);
}

static long long key_core(const struct guesttopo_cpu *c)
{
	return key_die(c) << 20 | c->core;
}

/* The shape, when every level splits evenly and siblings agree with cores. */
static void derive(struct guesttopo *t)
{
	int npkg = distinct(t, key_pkg), ndie = distinct(t, key_die),
	    ncore = distinct(t, key_core);
	int n = (int)t->ncpus;
	t->regular = npkg > 0 && ndie % npkg == 0 && ncore % ndie == 0 && n % ncore == 0;
	if (!t->regular)
		return;
	t->sockets = npkg;
	t->dies = ndie / npkg;
	t->cores = ncore / ndie;
	t->threads = n / ncore;
	for (size_t i = 0; i < t->ncpus; i++)
		if (t->cpus[i].nsiblings != t->threads)
			t->regular = false;
	if (!t->regular)
		t->sockets = t->dies = t->cores = t->threads = 0;
}

int guesttopo_parse(const char *text, struct guesttopo *t, struct ta_err *err)
{
	memset(t, 0, sizeof(*t));
	size_t alloc = 0;
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xmalloc(len + 1);
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (nl != NULL);
		lineno++;
		if (!*line) {
			free(line);
			continue;
		}
		int cpu, pos = 0;
		char key[32];
		if (sscanf(line, "cpu%d %31s %n", &cpu, key, &pos) != 2 || !pos || cpu < 0) {
			err_set(err, EXIT_FAILURE_RUN, "guest topology line %d: cannot parse '%s'",
				lineno, line);
			free(line);
			guesttopo_release(t);
			return -1;
		}
		const char *val = line + pos;
		struct guesttopo_cpu *c = cpu_get(t, cpu, &alloc);
		int v = atoi(val);
		if (!strcmp(key, "physical_package_id"))
			c->package = v;
		else if (!strcmp(key, "die_id"))
			c->die = v;
		else if (!strcmp(key, "core_id"))
			c->core = v;
		else if (!strcmp(key, "thread_siblings_list")) {
			free(c->siblings);
			c->siblings = xstrdup(val);
			c->nsiblings = list_count(val);
		}
		free(line);
	}
	for (size_t i = 0; i < t->ncpus; i++) {
		struct guesttopo_cpu *c = &t->cpus[i];
		if (c->package < 0 || c->core < 0 || !c->siblings || c->nsiblings < 1) {
			err_set(err, EXIT_FAILURE_RUN,
				"guest topology: cpu%d lacks package, core or valid thread siblings",
				c->cpu);
			guesttopo_release(t);
			return -1;
		}
	}
	if (t->ncpus == 0) {
		guesttopo_release(t);
		return err_set(err, EXIT_FAILURE_RUN, "guest topology: no CPUs listed");
	}
	qsort(t->cpus, t->ncpus, sizeof(*t->cpus), cmp_cpu);
	derive(t);
	return 0;
}

void guesttopo_release(struct guesttopo *t)
{
	for (size_t i = 0; i < t->ncpus; i++)
		free(t->cpus[i].siblings);
	free(t->cpus);
	memset(t, 0, sizeof(*t));
}

int guesttopo_compare(const struct guesttopo *t, int sockets, int dies, int cores,
		      int threads, struct ta_err *err)
{
	if (dies < 1)
		dies = 1;
	int want = sockets * dies * cores * threads;
	if (t->regular && t->sockets == sockets && t->dies == dies && t->cores == cores &&
	    t->threads == threads && (int)t->ncpus == want)
		return 0;
	if (!t->regular)
		return err_set(err, EXIT_FAILURE_RUN,
			       "TOPOLOGY MISMATCH: requested %dx%dx%dx%d (sockets x dies x cores x "
			       "threads) but the guest's %zu CPUs form no regular shape",
			       sockets, dies, cores, threads, t->ncpus);
	return err_set(err, EXIT_FAILURE_RUN,
		       "TOPOLOGY MISMATCH: requested %dx%dx%dx%d (sockets x dies x cores x "
		       "threads) but the guest sees %dx%dx%dx%d on %zu CPUs",
		       sockets, dies, cores, threads, t->sockets, t->dies, t->cores, t->threads,
		       t->ncpus);
}

void guesttopo_json(const struct guesttopo *t, struct strbuf *out)
{
	struct json_writer w;
	json_init(&w, out, false);
	json_obj_begin(&w);
	json_key(&w, "regular"); json_bool(&w, t->regular);
	json_key(&w, "sockets"); json_int(&w, t->sockets);
	json_key(&w, "dies"); json_int(&w, t->dies);
	json_key(&w, "cores"); json_int(&w, t->cores);
	json_key(&w, "threads"); json_int(&w, t->threads);
	json_key(&w, "cpus");
	json_arr_begin(&w);
	for (size_t i = 0; i < t->ncpus; i++) {
		const struct guesttopo_cpu *c = &t->cpus[i];
		json_obj_begin(&w);
		json_key(&w, "cpu"); json_int(&w, c->cpu);
		json_key(&w, "package"); json_int(&w, c->package);
		json_key(&w, "die");
		if (c->die < 0)
			json_null(&w);
		else
			json_int(&w, c->die);
		json_key(&w, "core"); json_int(&w, c->core);
		json_key(&w, "thread_siblings"); json_str(&w, c->siblings);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
}
