/*
 * config: the sweep schema, built on the checked YAML reader
 * (yaml-reader.h); see config.h and docs/config.md.
 *
 * parse_root() walks the whole schema and fills a `struct sweep_config`,
 * recording every error (FILE:LINE:COL, the dotted key and what was
 * expected) as it goes; the reader reports them together.  Host knobs and
 * their values come from the knob table (model/knob-table.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../collectors/benchparse.h"
#include "../model/knob-table.h"
#include "../util/cpuset.h"
#include "../util/strbuf.h"
#include "yaml-reader.h"

/* A config is a page of text; anything bigger is a mistake (or /dev/zero). */
#define CONFIG_MAX_BYTES (1024 * 1024)

/* --- names ------------------------------------------------------------ */

static const char *const noise_kind_names[] = {
	[NOISE_NONE] = "none", [NOISE_SPIN] = "spin", [NOISE_COMMAND] = "command",
	[NOISE_GUEST] = "guest", NULL
};
static const char *const domain_type_names[] = {
	[DOMAIN_AUTO] = "auto", [DOMAIN_KVM] = "kvm", [DOMAIN_QEMU] = "qemu", NULL
};
/* The host's architecture is resolved by plan; "host" is what we print. */
static const char *const arch_names[] = {
	[ARCH_HOST] = "host", [ARCH_X86_64] = "x86_64", [ARCH_PPC64] = "ppc64", NULL
};
static const char *const arch_words[] = { "x86_64", "ppc64", NULL };
static const char *const runner_names[] = {
	[RUNNER_AGENT] = "agent", [RUNNER_HOST] = "host", NULL
};
static const char *const pin_words[] = {
	[PIN_NONE] = "none", [PIN_COMPACT] = "compact", [PIN_SPREAD] = "spread", NULL
};
static const char *const order_names[] = {
	[ORDER_RANDOMIZED] = "randomized", [ORDER_SEQUENTIAL] = "sequential", NULL
};
static const char *const strategy_names[] = {
	[STRATEGY_FULL] = "full", [STRATEGY_RACE] = "race", NULL
};
static const char *const direction_words[] = { "higher", "lower", NULL };

const char *config_noise_kind_name(enum noise_kind k) { return noise_kind_names[k]; }
const char *config_domain_type_name(enum domain_type t) { return domain_type_names[t]; }
const char *config_arch_name(enum guest_arch a) { return arch_names[a]; }
const char *config_runner_name(enum runner_kind r) { return runner_names[r]; }
const char *config_pin_policy_name(enum pin_policy p)
{
	return p == PIN_EXPLICIT ? "explicit" : pin_words[p];
}

void shape_format(const struct shape *s, char *buf, size_t n)
{
	if (s->dies_given)
		snprintf(buf, n, "%dx%dx%dx%d", s->sockets, s->dies, s->cores, s->threads);
	else
		snprintf(buf, n, "%dx%dx%d", s->sockets, s->cores, s->threads);
}

int shape_vcpus(const struct shape *s)
{
	return s->sockets * s->dies * s->cores * s->threads;
}

int config_cpuset_parse(const char *set, int *ncpus, int *max_cpu)
{
	struct cpuset cs;
	if (cpuset_parse(set, &cs, NULL) < 0)
		return -1;
	if (ncpus)
		*ncpus = (int)cs.n;
	if (max_cpu)
		*max_cpu = cpuset_last(&cs);
	cpuset_release(&cs);
	return 0;
}

/*
 * A CPU list in cpulist syntax: host CPUs, or (guest) vCPUs numbered from 0
 * inside the guest, which plan checks against each shape.
 */
static int get_cpulist(struct yr_reader *L, const yaml_node_t *n, const char *key, bool guest,
		       char **out, int *ncpus)
{
	char *s = NULL;
	if (yr_get_str(L, n, key, &s) < 0)
		return -1;
	if (config_cpuset_parse(s, ncpus, NULL) < 0) {
		free(s);
		if (guest)
			return yr_fail(L, n, key, "expected guest vCPUs like \"0-1\" or \"2,3\" "
				       "(numbered from 0 inside the guest), got %s", YR_DESCRIBE(n));
		return yr_fail(L, n, key, "expected a host cpuset like \"0-3,8\" or \"0-7,^2\" "
			    "(CPU numbers up to %d), got %s", CPUSET_MAX_CPU, YR_DESCRIBE(n));
	}
	free(*out);
	*out = s;
	return 0;
}

static int get_cpuset(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out,
		      int *ncpus)
{
	return get_cpulist(L, n, key, false, out, ncpus);
}

static int get_vcpus(struct yr_reader *L, const yaml_node_t *n, const char *key, char **out,
		     int *nvcpus)
{
	return get_cpulist(L, n, key, true, out, nvcpus);
}

static void argv_set(struct argv_list *a, const char *const *words)
{
	size_t n = 0;
	while (words[n])
		n++;
	a->argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		a->argv[i] = xstrdup(words[i]);
	a->argc = n;
}

static void argv_free(struct argv_list *a)
{
	for (size_t i = 0; i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	a->argv = NULL;
	a->argc = 0;
}

/* A command: a non-empty list of strings. */
static int get_argv(struct yr_reader *L, const yaml_node_t *n, const char *key,
		    struct argv_list *out)
{
	if (n->type == YAML_SCALAR_NODE && !yr_is_null(n))
		return yr_fail(L, n, key, "write the command as a list: [prog, arg, ...]");
	if (yr_expect_type(L, n, key, YAML_SEQUENCE_NODE, "a command as a list [prog, arg, ...]") < 0)
		return -1;
	size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (count == 0)
		return yr_fail(L, n, key, "the command is empty; write it as [prog, arg, ...]");
	argv_free(out);
	out->argv = xcalloc(count + 1, sizeof(char *));
	out->argc = count;
	char child[YR_KEY_MAX];
	int rc = 0;
	for (size_t i = 0; i < count; i++) {
		yr_key_index(child, key, i);
		if (yr_get_str(L, yr_node(L, n->data.sequence.items.start[i]), child,
			       &out->argv[i]) < 0)
			rc = -1;
	}
	if (out->argv[0] && !*out->argv[0])
		rc = yr_fail(L, yr_node(L, n->data.sequence.items.start[0]), key,
			     "the program name is empty");
	return rc;
}

/* --- sections ---------------------------------------------------------------- */

/*
 * Each section reads every key it can and records every error (yr_fail);
 * it returns -1 when any of its values failed, so that checks across
 * sections (the baseline, the metric against parse) only run on what read
 * cleanly and do not repeat an error in other words.
 */

/* NULL when path is a regular file we can read, else why not. */
static const char *file_unreadable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return strerror(errno);
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	close(fd);
	return why;
}

static int parse_template(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg)
{
	char *t = NULL;
	if (yr_get_str(L, v, "libvirt.template", &t) < 0)
		return -1;
	int rc = 0;
	if (strcmp(t, "builtin") != 0) {
		/* Relative to the config file, so a sweep and its XML travel together. */
		const char *slash = strrchr(L->path, '/');
		struct strbuf sb = STRBUF_INIT;
		if (t[0] != '/' && slash)
			strbuf_add(&sb, L->path, (size_t)(slash - L->path) + 1);
		strbuf_addstr(&sb, t);
		cfg->template_path = strbuf_detach(&sb);
		const char *why = NULL;
		if (!*t)
			why = "an empty path";
		else if (cfg->files_checked)
			why = file_unreadable(cfg->template_path);
		if (why)
			rc = yr_fail(L, v, "libvirt.template", "cannot read '%s': %s (give a "
				     "readable domain XML file, relative to the config's "
				     "directory, or builtin)", cfg->template_path, why);
	}
	free(t);
	return rc;
}

static int parse_libvirt(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "uri", "domain_type", "template", "name_prefix",
					    "arch", "memory_mib", NULL };
	if (yr_map_check(L, n, "libvirt", keys, "a mapping (uri, domain_type, ...)") < 0)
		return -1;
	yaml_node_t *v;
	int e, rc = 0;
	if ((v = yr_map_get(L, n, "uri")) && yr_get_str(L, v, "libvirt.uri", &cfg->uri) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "domain_type"))) {
		static const char *const words[] = { "kvm", "qemu", "auto", NULL };
		static const enum domain_type types[] = { DOMAIN_KVM, DOMAIN_QEMU, DOMAIN_AUTO };
		if (yr_get_enum(L, v, "libvirt.domain_type", words, &e) < 0)
			rc = -1;
		else
			cfg->domain_type = types[e];
	}
	if ((v = yr_map_get(L, n, "template")) && parse_template(L, v, cfg) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "name_prefix")) &&
	    yr_get_name(L, v, "libvirt.name_prefix", 32, "_-", &cfg->name_prefix) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "arch"))) {
		if (yr_get_enum(L, v, "libvirt.arch", arch_words, &e) < 0)
			rc = -1;
		else
			cfg->arch = e == 0 ? ARCH_X86_64 : ARCH_PPC64;
	}
	if ((v = yr_map_get(L, n, "memory_mib")) &&
	    yr_get_int(L, v, "libvirt.memory_mib", 64, 1048576, &cfg->memory_mib) < 0)
		rc = -1;
	return rc;
}

static int parse_guest(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "runner", "boot_timeout", "prepare", "reuse",
					    "host_baseline", NULL };
	if (yr_map_check(L, n, "guest", keys, "a mapping (runner, boot_timeout, ...)") < 0)
		return -1;
	yaml_node_t *v;
	int e, rc = 0;
	bool runner_ok = true;
	if ((v = yr_map_get(L, n, "runner"))) {
		if (yr_get_enum(L, v, "guest.runner", runner_names, &e) < 0)
			rc = -1, runner_ok = false;
		else
			cfg->runner = (enum runner_kind)e;
	}
	if ((v = yr_map_get(L, n, "boot_timeout")) &&
	    yr_get_int(L, v, "guest.boot_timeout", 1, 3600, &cfg->boot_timeout) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "prepare"))) {
		if (yr_expect_type(L, v, "guest.prepare", YAML_SEQUENCE_NODE,
				   "a list of commands, each a list [prog, arg, ...]") < 0) {
			rc = -1;
		} else {
			size_t count = (size_t)(v->data.sequence.items.top -
						v->data.sequence.items.start);
			cfg->prepare = xcalloc(count ? count : 1, sizeof(*cfg->prepare));
			cfg->nprepare = count;
			char child[YR_KEY_MAX];
			for (size_t i = 0; i < count; i++) {
				yr_key_index(child, "guest.prepare", i);
				if (get_argv(L, yr_node(L, v->data.sequence.items.start[i]), child,
					     &cfg->prepare[i]) < 0)
					rc = -1;
			}
		}
	}
	if ((v = yr_map_get(L, n, "reuse")) &&
	    yr_get_bool(L, v, "guest.reuse", &cfg->reuse_guest) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "host_baseline"))) {
		if (yr_get_bool(L, v, "guest.host_baseline", &cfg->host_baseline) < 0)
			rc = -1;
		else if (cfg->host_baseline && runner_ok && cfg->runner == RUNNER_HOST)
			rc = yr_fail(L, v, "guest.host_baseline", "with runner host every run is "
				     "on the host already; drop host_baseline or use runner agent");
	}
	return rc;
}

/* "SxCxT" or "SxDxCxT", each part 1..1024. */
static int shape_from_text(struct yr_reader *L, const yaml_node_t *n, const char *key,
			   struct shape *s)
{
	static const char expected[] = "expected a shape \"SxCxT\" or \"SxDxCxT\" "
				       "(sockets x [dies x] cores x threads, each 1..1024), got %s";
	const char *p = yr_text(n);
	long part[5];
	int nparts = 0;
	for (;;) {
		if (!isdigit((unsigned char)*p) || nparts == 4)
			return yr_fail(L, n, key, expected, YR_DESCRIBE(n));
		long v = 0;
		while (isdigit((unsigned char)*p)) {
			v = v * 10 + (*p++ - '0');
			if (v > 1024)
				return yr_fail(L, n, key, "%s: every part must be 1..1024",
					       yr_text(n));
		}
		if (v < 1)
			return yr_fail(L, n, key, "%s: every part must be 1..1024", yr_text(n));
		part[nparts++] = v;
		if (!*p)
			break;
		if (*p != 'x' && *p != 'X')
			return yr_fail(L, n, key, expected, YR_DESCRIBE(n));
		p++;
	}
	if (nparts < 3)
		return yr_fail(L, n, key, expected, YR_DESCRIBE(n));
	s->sockets = (int)part[0];
	s->dies_given = nparts == 4;
	s->dies = s->dies_given ? (int)part[1] : 1;
	s->cores = (int)part[nparts - 2];
	s->threads = (int)part[nparts - 1];
	return 0;
}

static int shape_from_map(struct yr_reader *L, const yaml_node_t *n, const char *key,
			  struct shape *s)
{
	static const char *const keys[] = { "sockets", "dies", "cores", "threads", NULL };
	if (yr_map_check(L, n, key, keys, "a shape") < 0)
		return -1;
	static const char *const required[] = { "sockets", "cores", "threads" };
	int *fields[] = { &s->sockets, &s->cores, &s->threads };
	char child[YR_KEY_MAX];
	int rc = 0;
	for (size_t i = 0; i < 3; i++) {
		yaml_node_t *v = yr_map_get(L, n, required[i]);
		yr_key_child(child, key, required[i]);
		if (!v)
			rc = yr_fail_missing(L, n, child, required[i], " (a shape needs sockets, "
				     "cores and threads; dies is optional)");
		else if (yr_get_int(L, v, child, 1, 1024, fields[i]) < 0)
			rc = -1;
	}
	yaml_node_t *v = yr_map_get(L, n, "dies");
	s->dies = 1;
	s->dies_given = v != NULL;
	yr_key_child(child, key, "dies");
	if (v && yr_get_int(L, v, child, 1, 1024, &s->dies) < 0)
		rc = -1;
	return rc;
}

static int shape_parse(struct yr_reader *L, const yaml_node_t *n, const char *key,
		       struct shape *s)
{
	int rc;
	if (n->type == YAML_MAPPING_NODE)
		rc = shape_from_map(L, n, key, s);
	else if (n->type == YAML_SCALAR_NODE && !yr_is_null(n))
		rc = shape_from_text(L, n, key, s);
	else
		rc = yr_fail(L, n, key, "expected a shape \"SxCxT\" or a mapping {sockets, cores, "
			     "threads}, got %s", YR_DESCRIBE(n));
	s->line = (int)n->start_mark.line + 1;
	s->col = (int)n->start_mark.column + 1;
	if (rc < 0)
		return rc;
	/* Parts of up to 1024 each multiply past any int: bound the product. */
	long long vcpus = (long long)s->sockets * s->dies * s->cores * s->threads;
	if (vcpus > CONFIG_MAX_VCPUS) {
		char text[64];
		shape_format(s, text, sizeof(text));
		return yr_fail(L, n, key, "shape %s has %lld vCPUs; a guest has at most %d "
			       "(QEMU's and KVM's limit)", text, vcpus, CONFIG_MAX_VCPUS);
	}
	return 0;
}

static bool shape_same(const struct shape *a, const struct shape *b)
{
	return a->sockets == b->sockets && a->dies == b->dies && a->cores == b->cores &&
	       a->threads == b->threads;
}

static int parse_generator(struct yr_reader *L, const yaml_node_t *n, struct topology_spec *t)
{
	static const char *const keys[] = { "vcpus", "threads", "sockets", NULL };
	static const char missing[] = " (the generator needs vcpus: [N, ...] and threads: "
				      "[T, ...])";
	if (yr_map_check(L, n, "topology", keys, "a generator {vcpus, threads, sockets}") < 0)
		return -1;
	t->generated = true;
	int rc = 0;
	yaml_node_t *v;
	if (!(v = yr_map_get(L, n, "vcpus")))
		rc = yr_fail_missing(L, n, "topology.vcpus", "vcpus", missing);
	else if (yr_get_int_list(L, v, "topology.vcpus", 1, CONFIG_MAX_VCPUS, &t->vcpus,
				 &t->nvcpus) < 0)
		rc = -1;
	if (!(v = yr_map_get(L, n, "threads")))
		rc = yr_fail_missing(L, n, "topology.threads", "threads", missing);
	else if (yr_get_int_list(L, v, "topology.threads", 1, 1024, &t->threads,
				 &t->nthreads) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "sockets")) &&
	    yr_get_int_list(L, v, "topology.sockets", 1, 1024, &t->sockets, &t->nsockets) < 0)
		rc = -1;
	return rc;
}

static int parse_topology(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	struct topology_spec *t = &cfg->topology;
	/* A mapping is the generator unless it reads as one shape (has cores). */
	if (n->type == YAML_MAPPING_NODE &&
	    (yr_map_get(L, n, "vcpus") || !yr_map_get(L, n, "cores")))
		return parse_generator(L, n, t);
	struct yr_items f;
	if (yr_items(L, n, "topology", &f) < 0) {
		free(f.nodes);
		return -1;
	}
	t->shapes = xcalloc(f.n, sizeof(*t->shapes));
	t->nshapes = f.n;
	bool *ok = xcalloc(f.n, sizeof(*ok));
	int rc = 0;
	char child[YR_KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		yr_item_key(child, "topology", &f, i);
		if (shape_parse(L, f.nodes[i], child, &t->shapes[i]) < 0) {
			rc = -1;
			continue;
		}
		ok[i] = true;
		for (size_t j = 0; j < i; j++)
			if (ok[j] && shape_same(&t->shapes[j], &t->shapes[i])) {
				char text[64];
				shape_format(&t->shapes[i], text, sizeof(text));
				rc = yr_fail(L, f.nodes[i], child, "duplicate shape %s (first at "
					     "%d:%d)", text, t->shapes[j].line, t->shapes[j].col);
				break;
			}
	}
	free(ok);
	free(f.nodes);
	return rc;
}

/*
 * A factor whose items are told apart by name (pinning, noise): a list, or
 * one item standing for a list of one.  parse_item fills one item and
 * returns its name, NULL when it failed; a name given twice fails as
 * "duplicate WHAT 'name' (first at L:C); HINT".  Every item is read, so
 * every error is found.  *items (nitems of size bytes) is set in any case.
 */
typedef const char *named_item_parse(struct yr_reader *L, const yaml_node_t *n,
				     const char *key, void *item);

static int parse_named_items(struct yr_reader *L, const yaml_node_t *n, const char *key,
			     const char *what, const char *hint, size_t size,
			     named_item_parse *parse_item, void **items, size_t *nitems)
{
	*items = NULL;
	*nitems = 0;
	struct yr_items f;
	if (yr_items(L, n, key, &f) < 0) {
		free(f.nodes);
		return -1;
	}
	char *v = xcalloc(f.n, size);
	const char **names = xcalloc(f.n, sizeof(*names));
	int rc = 0;
	char child[YR_KEY_MAX];
	for (size_t i = 0; i < f.n; i++) {
		yr_item_key(child, key, &f, i);
		if (!(names[i] = parse_item(L, f.nodes[i], child, v + i * size))) {
			rc = -1;
			continue;
		}
		for (size_t j = 0; j < i; j++)
			if (names[j] && !strcmp(names[j], names[i])) {
				rc = yr_fail(L, f.nodes[i], child, "duplicate %s '%s' (first at "
					     "%zu:%zu); %s", what, names[i],
					     f.nodes[j]->start_mark.line + 1,
					     f.nodes[j]->start_mark.column + 1, hint);
				break;
			}
	}
	*items = v;
	*nitems = f.n;
	free(names);
	free(f.nodes);
	return rc;
}

static const char *const reserved_pin_names[] = { "none", "compact", "spread", NULL };

static int parse_explicit_pinning(struct yr_reader *L, const yaml_node_t *n, const char *key,
				  struct pinning *p)
{
	static const char *const keys[] = { "name", "vcpus", "emulator", NULL };
	if (yr_map_check(L, n, key, keys, "a pinning") < 0)
		return -1;
	p->policy = PIN_EXPLICIT;
	int rc = 0;
	char child[YR_KEY_MAX];
	yaml_node_t *v = yr_map_get(L, n, "name");
	yr_key_child(child, key, "name");
	if (!v) {
		rc = yr_fail_missing(L, n, child, "name", " (an explicit pinning needs a name "
			     "and vcpus: [cpuset per vCPU])");
	} else if (yr_get_name(L, v, child, 64, "._-", &p->name) < 0) {
		rc = -1;
	} else {
		for (size_t i = 0; reserved_pin_names[i]; i++)
			if (!strcmp(p->name, reserved_pin_names[i]))
				rc = yr_fail(L, v, child, "'%s' is a built-in policy; give the "
					     "explicit pinning another name", p->name);
	}
	yr_key_child(child, key, "vcpus");
	if (!(v = yr_map_get(L, n, "vcpus"))) {
		rc = yr_fail_missing(L, n, child, "vcpus", " (one host cpuset per vCPU, e.g. "
			     "vcpus: [\"0\", \"1\"])");
	} else if (yr_expect_type(L, v, child, YAML_SEQUENCE_NODE, "a list with one host "
				  "cpuset per vCPU, e.g. [\"0\", \"1\"]") < 0) {
		rc = -1;
	} else {
		size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
		if (count == 0)
			rc = yr_fail(L, v, child, "empty list; give one host cpuset per vCPU");
		p->vcpu_cpus = xcalloc(count ? count : 1, sizeof(char *));
		p->nvcpu_cpus = count;
		char item[YR_KEY_MAX];
		for (size_t i = 0; i < count; i++) {
			yr_key_index(item, child, i);
			if (get_cpuset(L, yr_node(L, v->data.sequence.items.start[i]), item,
				       &p->vcpu_cpus[i], NULL) < 0)
				rc = -1;
		}
	}
	yr_key_child(child, key, "emulator");
	if ((v = yr_map_get(L, n, "emulator")) &&
	    get_cpuset(L, v, child, &p->emulator_cpus, NULL) < 0)
		rc = -1;
	return rc;
}

static const char *parse_pinning_item(struct yr_reader *L, const yaml_node_t *n,
				      const char *key, void *item)
{
	struct pinning *p = item;
	p->line = (int)n->start_mark.line + 1;
	p->col = (int)n->start_mark.column + 1;
	if (n->type == YAML_MAPPING_NODE)
		return parse_explicit_pinning(L, n, key, p) < 0 ? NULL : p->name;
	int e;
	if (yr_get_enum(L, n, key, pin_words, &e) < 0)
		return NULL;
	p->policy = (enum pin_policy)e;
	p->name = xstrdup(pin_words[e]);
	return p->name;
}

static int parse_pinning(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	void *items;
	int rc = parse_named_items(L, n, "pinning", "pinning", "names must be unique",
				   sizeof(struct pinning), parse_pinning_item, &items,
				   &cfg->npinnings);
	cfg->pinnings = items;
	return rc;
}

/* One value of knob k: its canonical text (in the knob table), or NULL after failing. */
static const char *knob_value_get(struct yr_reader *L, const yaml_node_t *n, const char *key,
				  const struct knob *k)
{
	const char *canon = n->type == YAML_SCALAR_NODE && !yr_is_null(n)
				    ? knob_canonical(k, yr_text(n)) : NULL;
	if (!canon) {
		struct strbuf sb = STRBUF_INIT;
		knob_expected(k, &sb);
		yr_fail(L, n, key, "expected %s, got %s", strbuf_str(&sb), YR_DESCRIBE(n));
		strbuf_release(&sb);
	}
	return canon;
}

/* The values of one knob (a factor); -1 when any is bad or repeated. */
static int parse_knob_values(struct yr_reader *L, const yaml_node_t *v, const struct knob *def,
			     struct knob_factor *kf)
{
	char key[YR_KEY_MAX], child[YR_KEY_MAX];
	yr_key_child(key, "host", def->name);
	struct yr_items f;
	if (yr_items(L, v, key, &f) < 0) {
		free(f.nodes);
		return -1;
	}
	kf->values = xcalloc(f.n, sizeof(char *));
	const yaml_node_t **at = xcalloc(f.n, sizeof(*at));
	int rc = 0;
	for (size_t j = 0; j < f.n; j++) {
		yr_item_key(child, key, &f, j);
		const char *norm = knob_value_get(L, f.nodes[j], child, def);
		size_t m;
		for (m = 0; norm && m < kf->nvalues && strcmp(kf->values[m], norm); m++)
			;
		if (!norm) {
			rc = -1;
		} else if (m < kf->nvalues) {
			rc = yr_fail(L, f.nodes[j], child, "duplicate value %s (first at %zu:%zu)",
				     norm, at[m]->start_mark.line + 1, at[m]->start_mark.column + 1);
		} else {
			at[kf->nvalues] = f.nodes[j];
			kf->values[kf->nvalues++] = xstrdup(norm);
		}
	}
	free(at);
	free(f.nodes);
	return rc;
}

static int parse_host(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	size_t nknobs = knob_count();
	const char **names = xcalloc(nknobs + 1, sizeof(char *));
	for (size_t i = 0; i < nknobs; i++)
		names[i] = knob_at(i)->name;
	int rc = yr_map_check(L, n, "host", names, "a mapping knob -> values");
	free(names);
	if (rc < 0)
		return -1;
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	cfg->knobs = xcalloc(count ? count : 1, sizeof(*cfg->knobs));
	for (size_t i = 0; i < count; i++) {
		yaml_node_pair_t *pair = &n->data.mapping.pairs.start[i];
		yaml_node_t *k = yr_node(L, pair->key);
		/* Unknown and repeated knobs were reported by yr_map_check. */
		const struct knob *def = yr_map_pair_first(L, n, pair)
						 ? knob_find(yr_text(k)) : NULL;
		if (!def) {
			rc = -1;
			continue;
		}
		struct knob_factor *kf = &cfg->knobs[cfg->nknobs++];
		kf->name = xstrdup(def->name);
		kf->line = (int)k->start_mark.line + 1;
		kf->col = (int)k->start_mark.column + 1;
		if (parse_knob_values(L, yr_node(L, pair->value), def, kf) < 0)
			rc = -1;
	}
	return rc;
}

static const char *parse_noise_item(struct yr_reader *L, const yaml_node_t *n,
				    const char *key, void *item)
{
	struct noise *z = item;
	z->line = (int)n->start_mark.line + 1;
	z->col = (int)n->start_mark.column + 1;
	int e;
	if (n->type != YAML_MAPPING_NODE) {
		if (yr_get_enum(L, n, key, noise_kind_names, &e) < 0)
			return NULL;
		z->kind = (enum noise_kind)e;
		if (z->kind == NOISE_COMMAND || z->kind == NOISE_GUEST) {
			yr_fail(L, n, key, "noise '%s' needs a command: write {kind: %s, argv: "
				"[prog, arg, ...]}", noise_kind_names[e], noise_kind_names[e]);
			return NULL;
		}
		z->name = xstrdup(noise_kind_names[e]);
		z->threads = z->kind == NOISE_SPIN ? 1 : 0;
		return z->name;
	}
	static const char *const keys[] = { "kind", "name", "cpus", "vcpus", "threads", "argv",
					    NULL };
	if (yr_map_check(L, n, key, keys, "a noise load") < 0)
		return NULL;
	char child[YR_KEY_MAX];
	yaml_node_t *v = yr_map_get(L, n, "kind");
	yr_key_child(child, key, "kind");
	if (!v) {
		yr_fail_missing(L, n, child, "kind", " (none, spin, command or guest)");
		return NULL;
	}
	/* Which keys apply depends on the kind: without one, say no more. */
	if (yr_get_enum(L, v, child, noise_kind_names, &e) < 0)
		return NULL;
	z->kind = (enum noise_kind)e;
	int rc = 0;

	yr_key_child(child, key, "name");
	if ((v = yr_map_get(L, n, "name"))) {
		if (yr_get_name(L, v, child, 64, "._-", &z->name) < 0)
			rc = -1;
	} else {
		z->name = xstrdup(noise_kind_names[e]);
	}

	int ncpus = 0;
	yr_key_child(child, key, "cpus");
	if ((v = yr_map_get(L, n, "cpus"))) {
		if (z->kind == NOISE_NONE)
			rc = yr_fail(L, yr_map_key(L, n, "cpus"), child,
				     "noise kind none takes no cpus");
		else if (get_cpuset(L, v, child, &z->cpus, &ncpus) < 0)
			rc = -1;
	}
	yr_key_child(child, key, "vcpus");
	if ((v = yr_map_get(L, n, "vcpus"))) {
		if (z->kind != NOISE_SPIN && z->kind != NOISE_COMMAND)
			rc = yr_fail(L, yr_map_key(L, n, "vcpus"), child, "only spin and command "
				     "loads run inside the measured guest (on its vcpus)");
		else if (z->cpus)
			rc = yr_fail(L, yr_map_key(L, n, "vcpus"), child, "a load runs either on "
				     "host cpus or inside the guest on vcpus, not both");
		else if (get_vcpus(L, v, child, &z->vcpus, &ncpus) < 0)
			rc = -1;
	}

	yr_key_child(child, key, "threads");
	if ((v = yr_map_get(L, n, "threads"))) {
		if (z->kind != NOISE_SPIN)
			rc = yr_fail(L, yr_map_key(L, n, "threads"), child,
				     "only spin noise uses threads");
		else if (yr_get_int(L, v, child, 1, 1024, &z->threads) < 0)
			rc = -1;
	} else if (z->kind == NOISE_SPIN) {
		z->threads = ncpus ? ncpus : 1;
	}

	yr_key_child(child, key, "argv");
	v = yr_map_get(L, n, "argv");
	if (z->kind == NOISE_COMMAND || z->kind == NOISE_GUEST) {
		if (!v)
			rc = yr_fail_missing(L, n, child, "argv", " (noise %s runs argv: "
				     "[prog, arg, ...])", noise_kind_names[e]);
		else if (get_argv(L, v, child, &z->argv) < 0)
			rc = -1;
	} else if (v) {
		rc = yr_fail(L, yr_map_key(L, n, "argv"), child,
			     "only command and guest noise use argv");
	}
	return rc < 0 ? NULL : z->name;
}

static int parse_noise(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	void *items;
	int rc = parse_named_items(L, n, "noise", "noise name", "give each load its own name",
				   sizeof(struct noise), parse_noise_item, &items, &cfg->nnoises);
	cfg->noises = items;
	return rc;
}

/* The per-kind defaults documented in docs/config.md. */
struct bench_defaults {
	const char *metric, *unit;
	bool higher;
};

static const struct bench_defaults bench_defaults[] = {
	[BENCH_EBIZZY] = { "records_per_s", "records/s", true },
	[BENCH_REDIS] = { "requests_per_s", "requests/s", true },
	[BENCH_STRESS_NG] = { "bogo_ops_per_s", "bogo-ops/s", true },
	[BENCH_SYSBENCH] = { "events_per_s", "events/s", true },
	[BENCH_KERNEL_BUILD] = { "real_s", "s", false },
	[BENCH_COMMAND] = { NULL, NULL, true },
};

/* Default argv for kind; the benchmark runs for `duration` seconds. */
static void bench_default_argv(struct benchmark *b)
{
	char secs[32], secs_s[40], time_opt[48];
	int d = b->duration ? b->duration : 10;
	snprintf(secs, sizeof(secs), "%d", d);
	snprintf(secs_s, sizeof(secs_s), "%ds", d);
	snprintf(time_opt, sizeof(time_opt), "--time=%d", d);
	switch (b->kind) {
	case BENCH_EBIZZY:
		argv_set(&b->argv, (const char *[]){ "ebizzy", "-S", secs, NULL });
		break;
	case BENCH_REDIS:
		argv_set(&b->argv, (const char *[]){ "redis-benchmark", "-q", "-n", "100000", "-t",
				"set,get,incr,lpush,lpop,sadd,spop,mset", NULL });
		break;
	case BENCH_STRESS_NG:
		argv_set(&b->argv, (const char *[]){ "stress-ng", "--cpu", "0", "--timeout", secs_s,
				"--metrics-brief", NULL });
		break;
	case BENCH_SYSBENCH:
		argv_set(&b->argv, (const char *[]){ "sysbench", "cpu", time_opt, "run", NULL });
		break;
	case BENCH_KERNEL_BUILD:
		/* `time -p` prints the real/user/sys seconds the parser reads. */
		argv_set(&b->argv, (const char *[]){ "time", "-p", "make", "-C", "/root/linux",
				"-s", "vmlinux", "-j", NULL });
		break;
	case BENCH_COMMAND:
		break;
	}
}

static int parse_metric(struct yr_reader *L, const yaml_node_t *n, struct benchmark *b)
{
	const yaml_node_t *name_node = n;
	yaml_node_t *dir = NULL, *unit = NULL;
	if (n->type == YAML_MAPPING_NODE) {
		static const char *const keys[] = { "name", "direction", "unit", NULL };
		if (yr_map_check(L, n, "benchmark.metric", keys, "a metric") < 0)
			return -1;
		if (!(name_node = yr_map_get(L, n, "name")))
			return yr_fail_missing(L, n, "benchmark.metric.name", "name", "; give the metric's name");
		dir = yr_map_get(L, n, "direction");
		unit = yr_map_get(L, n, "unit");
	}
	const char *key = n->type == YAML_MAPPING_NODE ? "benchmark.metric.name" : "benchmark.metric";
	char *name = NULL;
	if (yr_get_str(L, name_node, key, &name) < 0)
		return -1;
	bool ok = isalpha((unsigned char)name[0]) || name[0] == '_';
	for (const char *p = name; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '_' || *p == '.';
	if (!ok || strlen(name) > 64) {
		free(name);
		return yr_fail(L, name_node, key, "expected a metric name of letters, digits, _ "
			       "and . (not starting with a digit), got %s", YR_DESCRIBE(name_node));
	}
	b->metric.name = name;
	/* The kind's own metric keeps its known direction and unit. */
	const struct bench_defaults *d = &bench_defaults[b->kind];
	bool is_default = d->metric && !strcmp(d->metric, name);
	b->metric.higher_is_better = is_default ? d->higher : true;
	/*
	 * Another metric of a parsing kind (redis.GET.p99_ms, latency_avg_ms)
	 * has the direction its parser declares, which only the run knows:
	 * the experiment then records none and ranking reads it off the
	 * stored metric rows.
	 */
	b->metric.direction_given = is_default || dir || b->kind == BENCH_COMMAND;
	if (is_default)
		b->metric.unit = xstrdup(d->unit);
	int rc = 0;
	if (dir) {
		int e;
		if (yr_get_enum(L, dir, "benchmark.metric.direction", direction_words, &e) < 0)
			rc = -1;
		else
			b->metric.higher_is_better = e == 0;
	}
	if (unit && yr_get_str(L, unit, "benchmark.metric.unit", &b->metric.unit) < 0)
		rc = -1;
	return rc;
}

/* kind command: the regex that finds the metric in the output. */
static int parse_command_regex(struct yr_reader *L, const yaml_node_t *n, struct benchmark *b,
			       bool metric_ok)
{
	yaml_node_t *v = yr_map_get(L, n, "parse");
	if (!v)
		return yr_fail_missing(L, n, "benchmark.parse", "parse", " (a regex with a "
			       "named group, e.g. '(?<ops>[0-9.]+) ops/s')");
	if (yr_get_str(L, v, "benchmark.parse", &b->parse_regex) < 0)
		return -1;
	struct ta_err rerr = { 0 };
	if (benchparse_regex_groups(b->parse_regex, &b->parse_groups, &b->nparse_groups,
				    &rerr) < 0)
		return yr_fail(L, v, "benchmark.parse", "%s", rerr.msg);
	if (!metric_ok)
		return 0;
	for (size_t i = 0; i < b->nparse_groups; i++)
		if (b->parse_groups[i] && !strcmp(b->parse_groups[i], b->metric.name))
			return 0;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < b->nparse_groups; i++)
		if (b->parse_groups[i])
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", b->parse_groups[i]);
	yr_fail(L, yr_map_get(L, n, "metric"), "benchmark.metric", "'%s' is not a named group "
		"of parse (its groups: %s)", b->metric.name, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

static int parse_benchmark(struct yr_reader *L, const yaml_node_t *root, struct sweep_config *cfg)
{
	yaml_node_t *n = yr_map_get(L, root, "benchmark");
	if (!n)
		return yr_fail_missing(L, root, "benchmark", "benchmark", "; add e.g. benchmark: "
			       "{kind: stress-ng}");
	static const char *const keys[] = { "kind", "argv", "server_argv", "duration", "timeout",
					    "metric", "parse", "vcpus", NULL };
	if (yr_map_check(L, n, "benchmark", keys, "a mapping (kind, argv, ...)") < 0)
		return -1;
	struct benchmark *b = &cfg->bench;
	yaml_node_t *v = yr_map_get(L, n, "kind");
	int e, rc = 0;
	/* The other keys' meaning depends on the kind: without one, say no more. */
	if (!v)
		return yr_fail_missing(L, n, "benchmark.kind", "kind", " (ebizzy, redis, "
			       "stress-ng, sysbench, kernel-build or command)");
	if (yr_get_enum(L, v, "benchmark.kind", bench_kind_names, &e) < 0)
		return -1;
	b->kind = (enum bench_kind)e;

	if ((v = yr_map_get(L, n, "vcpus"))) {
		int nv;
		if (get_vcpus(L, v, "benchmark.vcpus", &b->vcpus, &nv) < 0)
			rc = -1;
		else if (cfg->runner == RUNNER_HOST)
			rc = yr_fail(L, v, "benchmark.vcpus", "guest vCPUs need the agent runner "
				     "(with runner host, pin through an explicit pinning)");
	}

	b->duration = 10;
	bool duration_ok = true;
	if ((v = yr_map_get(L, n, "duration")) &&
	    yr_get_int(L, v, "benchmark.duration", 0, 86400, &b->duration) < 0)
		rc = -1, duration_ok = false;

	if ((v = yr_map_get(L, n, "argv"))) {
		if (get_argv(L, v, "benchmark.argv", &b->argv) < 0)
			rc = -1;
	} else if (b->kind == BENCH_COMMAND) {
		rc = yr_fail_missing(L, n, "benchmark.argv", "argv", " (kind command runs "
			     "argv: [prog, arg, ...])");
	} else {
		bench_default_argv(b);
	}

	if ((v = yr_map_get(L, n, "server_argv"))) {
		if (b->kind != BENCH_REDIS)
			rc = yr_fail(L, yr_map_key(L, n, "server_argv"), "benchmark.server_argv",
				     "only redis uses server_argv");
		else if (get_argv(L, v, "benchmark.server_argv", &b->server_argv) < 0)
			rc = -1;
	} else if (b->kind == BENCH_REDIS) {
		argv_set(&b->server_argv, (const char *[]){ "redis-server", "--save", "",
				"--appendonly", "no", NULL });
	}

	b->timeout = 0;
	if ((v = yr_map_get(L, n, "timeout"))) {
		if (yr_get_int(L, v, "benchmark.timeout", 0, 604800, &b->timeout) < 0)
			rc = -1;
		else if (duration_ok && b->timeout && b->duration && b->timeout <= b->duration)
			rc = yr_fail(L, v, "benchmark.timeout", "%d s is not longer than the "
				     "duration (%d s); give more, or 0 for the default",
				     b->timeout, b->duration);
	}
	if (b->timeout == 0)
		b->timeout = b->kind == BENCH_KERNEL_BUILD ? 7200 : b->duration * 3 + 60;

	bool metric_ok = true;
	if ((v = yr_map_get(L, n, "metric"))) {
		if (parse_metric(L, v, b) < 0)
			rc = -1, metric_ok = false;
	} else if (b->kind == BENCH_COMMAND) {
		rc = yr_fail_missing(L, n, "benchmark.metric", "metric", " (kind command: name "
			     "the named group of parse that is the result)");
		metric_ok = false;
	} else {
		b->metric.name = xstrdup(bench_defaults[b->kind].metric);
		b->metric.unit = xstrdup(bench_defaults[b->kind].unit);
		b->metric.higher_is_better = bench_defaults[b->kind].higher;
		b->metric.direction_given = true;
	}
	metric_ok = metric_ok && b->metric.name;

	if (b->kind == BENCH_COMMAND) {
		if (parse_command_regex(L, n, b, metric_ok) < 0)
			rc = -1;
	} else if (yr_map_get(L, n, "parse")) {
		rc = yr_fail(L, yr_map_key(L, n, "parse"), "benchmark.parse", "only kind command "
			     "uses parse (the other kinds have built-in parsers)");
	}
	return rc;
}

/* A plain number 0..1. */
/* A decimal number lo..hi (a plain scalar), e.g. a fraction. */
static int get_fraction(struct yr_reader *L, const yaml_node_t *v, const char *key, double lo,
			double hi, const char *what, double *out)
{
	const char *s;
	if (yr_get_plain(L, v, key, what, &s) < 0)
		return -1;
	char *end;
	errno = 0;
	double f = strtod(s, &end);
	if (errno || *end || end == s || !isfinite(f))
		return yr_fail(L, v, key, "expected %s, got %s", what, YR_DESCRIBE(v));
	if (f < lo || f > hi)
		return yr_fail(L, v, key, "%s is out of range; expected %s", s, what);
	*out = f;
	return 0;
}

/* race: {first_test: N}, the blocks a raced sweep runs before its first test. */
static int parse_race(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "first_test", NULL };
	if (yr_map_check(L, n, "race", keys, "a mapping (first_test)") < 0)
		return -1;
	if (cfg->strategy != STRATEGY_RACE)
		return yr_fail(L, n, "race", "only a raced sweep has race settings; add "
			       "strategy: race or remove race:");
	yaml_node_t *v = yr_map_get(L, n, "first_test");
	if (v && yr_get_int(L, v, "race.first_test", 2, 1000, &cfg->race_first_test) < 0)
		return -1;
	if (cfg->race_first_test > cfg->repetitions)
		return yr_fail(L, v ? v : n, "race.first_test", "%d blocks before the first test "
			       "is more than the %d repetitions (the race's maximum); lower it or "
			       "raise repetitions", cfg->race_first_test, cfg->repetitions);
	return 0;
}

/* --- executor ------------------------------------------------------------------ */

static const char *const executor_names[] = { [EXECUTOR_LOCAL] = "local",
					      [EXECUTOR_SLURM] = "slurm", NULL };

const char *config_executor_name(enum executor_kind k) { return executor_names[k]; }

int config_executor_from_name(const char *s, enum executor_kind *out)
{
	for (int i = 0; executor_names[i]; i++)
		if (!strcmp(s, executor_names[i])) {
			*out = (enum executor_kind)i;
			return 0;
		}
	return -1;
}

/*
 * sbatch options the controller sets itself (one job per block, named for
 * the block and attempt, its output beside the results): a user's copy
 * would break the sweep's bookkeeping.
 */
static const char *const executor_sbatch_managed[] = {
	"--job-name", "-J", "--parsable", "--exclusive", "--no-requeue", "--requeue",
	"--array", "-a", "--wrap", "--output", "-o", "--error", "-e", "--export", "--chdir",
	"-D", NULL
};

/* executor.sbatch: a list of sbatch options, none of those the controller sets. */
static int parse_executor_sbatch(struct yr_reader *L, const yaml_node_t *v,
				 struct argv_list *out)
{
	if (yr_expect_type(L, v, "executor.sbatch", YAML_SEQUENCE_NODE,
			   "a list of sbatch options, e.g. [--time=02:00:00, --account=lab]") < 0)
		return -1;
	size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	out->argv = xcalloc(count + 1, sizeof(char *));
	out->argc = count;
	char key[YR_KEY_MAX];
	int rc = 0;
	for (size_t i = 0; i < count; i++) {
		const yaml_node_t *item = yr_node(L, v->data.sequence.items.start[i]);
		yr_key_index(key, "executor.sbatch", i);
		if (yr_get_str(L, item, key, &out->argv[i]) < 0) {
			rc = -1;
			continue;
		}
		const char *a = out->argv[i];
		if (a[0] != '-') {
			rc = yr_fail(L, item, key, "'%s' is not an sbatch option; give options "
				     "only (--name=value), the job script is topoadvisor's", a);
			continue;
		}
		size_t len = strcspn(a, "=");
		for (const char *const *m = executor_sbatch_managed; *m; m++)
			if (strlen(*m) == len && !strncmp(a, *m, len))
				rc = yr_fail(L, item, key, "%s is set by topoadvisor for every block "
					     "(one exclusive job per block, named for it); remove it",
					     *m);
		/* -J NAME, -oFILE: short options glued to their value. */
		if (a[1] && a[1] != '-' && strchr("JaoeD", a[1]))
			rc = yr_fail(L, item, key, "-%c is set by topoadvisor for every block; "
				     "remove it", a[1]);
	}
	return rc;
}

/* An absolute directory path (not checked on this host: it may be a node's). */
static int get_abs_dir(struct yr_reader *L, const yaml_node_t *v, const char *key, char **out)
{
	if (yr_get_str(L, v, key, out) < 0)
		return -1;
	if ((*out)[0] != '/')
		return yr_fail(L, v, key, "'%s' is not an absolute path; the controller and the "
			       "nodes must all find it under the same name", *out);
	return 0;
}

/*
 * executor: where the sweep's runs go.  local (this host, the default) or
 * slurm: one Slurm job per block on the cluster SLURM_CONF names.  A
 * setting of `run` rather than of the experiment (`run --executor`
 * overrides the kind), so shared_dir is required only where a slurm sweep
 * starts, not here.
 */
static int parse_executor(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "kind", "max_hosts", "partition", "sbatch",
					    "shared_dir", "node_dir", "max_attempts",
					    "poll_interval", NULL };
	if (yr_map_check(L, n, "executor", keys, "a mapping (kind, max_hosts, shared_dir, "
			 "...)") < 0)
		return -1;
	struct executor_settings *x = &cfg->executor;
	yaml_node_t *v;
	int e, rc = 0;
	if ((v = yr_map_get(L, n, "kind"))) {
		if (yr_get_enum(L, v, "executor.kind", executor_names, &e) < 0)
			rc = -1;
		else
			x->kind = (enum executor_kind)e;
	}
	if ((v = yr_map_get(L, n, "max_hosts")) &&
	    yr_get_int(L, v, "executor.max_hosts", 1, 10000, &x->max_hosts) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "partition")) &&
	    yr_get_name(L, v, "executor.partition", 64, "_-.", &x->partition) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "sbatch")) && parse_executor_sbatch(L, v, &x->sbatch) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "shared_dir")) &&
	    get_abs_dir(L, v, "executor.shared_dir", &x->shared_dir) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "node_dir")) &&
	    get_abs_dir(L, v, "executor.node_dir", &x->node_dir) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "max_attempts")) &&
	    yr_get_int(L, v, "executor.max_attempts", 1, 100, &x->max_attempts) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "poll_interval")) &&
	    get_fraction(L, v, "executor.poll_interval", 0.01, 600, "seconds, 0.01..600 "
			 "(e.g. 3)", &x->poll_interval) < 0)
		rc = -1;
	return rc;
}

static void executor_defaults(struct executor_settings *x)
{
	x->kind = EXECUTOR_LOCAL;
	x->max_hosts = 4;
	x->node_dir = xstrdup("/var/lib/topoadvisor/nodes");
	x->max_attempts = 3;
	x->poll_interval = 3;
}

static void executor_release(struct executor_settings *x)
{
	free(x->partition);
	argv_free(&x->sbatch);
	free(x->shared_dir);
	free(x->node_dir);
}

static int parse_collect(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "gang_exits", "exit_reasons", "vcpu_stats",
					    "buffer_kib", "max_lost_fraction", NULL };
	if (yr_map_check(L, n, "collect", keys, "a mapping (gang_exits, exit_reasons, ...)") < 0)
		return -1;
	struct collect *c = &cfg->collect;
	yaml_node_t *v;
	int rc = 0;
	if ((v = yr_map_get(L, n, "gang_exits")) &&
	    yr_get_bool(L, v, "collect.gang_exits", &c->gang_exits) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "exit_reasons")) &&
	    yr_get_bool(L, v, "collect.exit_reasons", &c->exit_reasons) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "vcpu_stats")) &&
	    yr_get_bool(L, v, "collect.vcpu_stats", &c->vcpu_stats) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "buffer_kib")) &&
	    yr_get_int(L, v, "collect.buffer_kib", 64, 4194304, &c->buffer_kib) < 0)
		rc = -1;
	if ((v = yr_map_get(L, n, "max_lost_fraction")) &&
	    get_fraction(L, v, "collect.max_lost_fraction", 0, 1, "a fraction 0..1 (e.g. 0.001)",
			 &c->max_lost_fraction) < 0)
		rc = -1;
	return rc;
}

static const char *const objective_names[] = { [OBJECTIVE_WORST] = "worst",
					       [OBJECTIVE_MEAN] = "mean", NULL };

/*
 * advisor: objective, equivalence and the environment factors.  An
 * environment factor is noise, pinning or a host knob the sweep varies;
 * topology is what the advisor recommends and cannot be one.
 */
static int parse_advisor(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char *const keys[] = { "objective", "equivalence", "environment", NULL };
	if (yr_map_check(L, n, "advisor", keys, "a mapping (objective, equivalence, "
			 "environment)") < 0)
		return -1;
	struct advisor_settings *a = &cfg->advisor;
	yaml_node_t *v;
	int e, rc = 0;
	if ((v = yr_map_get(L, n, "objective"))) {
		if (yr_get_enum(L, v, "advisor.objective", objective_names, &e) < 0)
			rc = -1;
		else
			a->objective = (enum advisor_objective)e;
	}
	if ((v = yr_map_get(L, n, "equivalence")) &&
	    get_fraction(L, v, "advisor.equivalence", 0.0001, 0.5, "a fraction above 0 and at "
			 "most 0.5 (e.g. 0.02 for +-2 %)", &a->equivalence) < 0)
		rc = -1;
	if (!(v = yr_map_get(L, n, "environment")))
		return rc;
	struct yr_items f;
	if (yr_items(L, v, "advisor.environment", &f) < 0) {
		free(f.nodes);
		return -1;
	}
	a->environment = xcalloc(f.n + 1, sizeof(*a->environment));
	for (size_t i = 0; i < f.n; i++) {
		char key[YR_KEY_MAX];
		const char *name;
		yr_item_key(key, "advisor.environment", &f, i);
		if (yr_get_plain(L, f.nodes[i], key, "a factor name (noise, pinning or a host "
				 "knob)", &name) < 0) {
			rc = -1;
			continue;
		}
		bool known = !strcmp(name, "noise") || !strcmp(name, "pinning");
		for (size_t k = 0; k < cfg->nknobs && !known; k++)
			known = !strcmp(cfg->knobs[k].name, name);
		bool twice = false;
		for (size_t k = 0; k < a->nenvironment && !twice; k++)
			twice = !strcmp(a->environment[k], name);
		if (!known)
			rc = yr_fail(L, f.nodes[i], key, "'%s' is not a factor this sweep varies as "
				     "a condition; name noise, pinning or one of its host knobs "
				     "(topology is what the advisor chooses)", name);
		else if (twice)
			rc = yr_fail(L, f.nodes[i], key, "'%s' is listed twice", name);
		else
			a->environment[a->nenvironment++] = xstrdup(name);
	}
	free(f.nodes);
	return rc;
}

static void baseline_add(struct sweep_config *cfg, const char *factor, const char *value,
			 const yaml_node_t *n)
{
	struct baseline_item *b = &cfg->baseline[cfg->nbaseline++];
	b->factor = xstrdup(factor);
	b->value = xstrdup(value);
	b->line = (int)n->start_mark.line + 1;
	b->col = (int)n->start_mark.column + 1;
}

/* "a, b, c" of the names of a factor, for "expected one of" messages. */
static void baseline_choices(struct strbuf *sb, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", v[i]);
}

static int baseline_topology(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg)
{
	const struct topology_spec *t = &cfg->topology;
	struct shape s;
	memset(&s, 0, sizeof(s));
	if (shape_parse(L, v, "baseline.topology", &s) < 0)
		return -1;
	char text[64];
	if (t->generated) {
		/* The generator makes dies-less shapes: name them the way plan keys them. */
		if (s.dies != 1)
			return yr_fail(L, v, "baseline.topology", "the generator makes shapes with "
				       "one die; write the baseline as SxCxT");
		s.dies_given = false;
		int vc = shape_vcpus(&s);
		bool ok_v = false, ok_t = false, ok_s = !t->sockets;
		for (size_t i = 0; i < t->nvcpus; i++)
			ok_v |= t->vcpus[i] == vc;
		for (size_t i = 0; i < t->nthreads; i++)
			ok_t |= t->threads[i] == s.threads;
		for (size_t i = 0; i < t->nsockets; i++)
			ok_s |= t->sockets[i] == s.sockets;
		shape_format(&s, text, sizeof(text));
		if (!ok_v || !ok_t || !ok_s)
			return yr_fail(L, v, "baseline.topology", "%s is not a shape the generator "
				       "makes (%s)", text, !ok_v ? "its vCPU count is not in vcpus" :
				       !ok_t ? "its threads are not in threads" :
				       "its sockets are not in sockets");
		baseline_add(cfg, "topology", text, v);
		return 0;
	}
	for (size_t i = 0; i < t->nshapes; i++)
		if (shape_same(&t->shapes[i], &s)) {
			/* Written as the topology list writes it, so plan can compare text. */
			shape_format(&t->shapes[i], text, sizeof(text));
			baseline_add(cfg, "topology", text, v);
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < t->nshapes; i++) {
		shape_format(&t->shapes[i], text, sizeof(text));
		strbuf_addf(&sb, "%s%s", i ? ", " : "", text);
	}
	shape_format(&s, text, sizeof(text));
	yr_fail(L, v, "baseline.topology", "%s is not in topology (%s)", text, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

static int baseline_named(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg,
			  const char *factor, const char *const *names, size_t n)
{
	char key[YR_KEY_MAX];
	yr_key_child(key, "baseline", factor);
	char *s = NULL;
	if (yr_get_str(L, v, key, &s) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], s)) {
			baseline_add(cfg, factor, s, v);
			free(s);
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	baseline_choices(&sb, names, n);
	yr_fail(L, v, key, "'%s' is not one of this sweep's %s values (%s)", s, factor,
		strbuf_str(&sb));
	strbuf_release(&sb);
	free(s);
	return -1;
}

static int baseline_knob(struct yr_reader *L, const yaml_node_t *v, struct sweep_config *cfg,
			 const char *factor)
{
	const struct knob_factor *kf = NULL;
	for (size_t j = 0; j < cfg->nknobs; j++)
		if (!strcmp(cfg->knobs[j].name, factor))
			kf = &cfg->knobs[j];
	char key[YR_KEY_MAX];
	yr_key_child(key, "baseline", factor);
	const char *norm = knob_value_get(L, v, key, knob_find(factor));
	if (!norm)
		return -1;
	for (size_t j = 0; j < kf->nvalues; j++)
		if (!strcmp(kf->values[j], norm)) {
			baseline_add(cfg, factor, norm, v);
			return 0;
		}
	struct strbuf sb = STRBUF_INIT;
	baseline_choices(&sb, (const char *const *)kf->values, kf->nvalues);
	yr_fail(L, v, key, "%s is not one of this sweep's values (%s)", norm, strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

/*
 * The baseline names values of the factors, so it is read only once they
 * read cleanly (their own errors are reported already).
 */
static int parse_baseline(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	/* Allowed keys: the three fixed factors, then the knobs this sweep has. */
	const char **allowed = xcalloc(cfg->nknobs + 4, sizeof(char *));
	allowed[0] = "topology";
	allowed[1] = "pinning";
	allowed[2] = "noise";
	for (size_t i = 0; i < cfg->nknobs; i++)
		allowed[3 + i] = cfg->knobs[i].name;
	int rc = 0;
	if (n->type == YAML_MAPPING_NODE) {
		/* A known knob the sweep does not vary deserves a clearer word. */
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yr_node(L, p->key);
			if (k->type != YAML_SCALAR_NODE || !knob_find(yr_text(k)))
				continue;
			size_t i;
			for (i = 0; i < cfg->nknobs && strcmp(cfg->knobs[i].name, yr_text(k)); i++)
				;
			if (i == cfg->nknobs) {
				char key[YR_KEY_MAX];
				yr_key_child(key, "baseline", yr_text(k));
				rc = yr_fail(L, k, key, "'%s' is not a factor of this sweep; add it "
					     "under host: or drop it here", yr_text(k));
			}
		}
	}
	if (rc < 0 || yr_map_check(L, n, "baseline", allowed, "a mapping factor -> value") < 0) {
		free(allowed);
		return -1;
	}
	size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	cfg->baseline = xcalloc(count ? count : 1, sizeof(*cfg->baseline));
	for (size_t i = 0; i < count; i++) {
		yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];
		yaml_node_t *v = yr_node(L, p->value);
		if (!yr_map_pair_first(L, n, p) || !yr_word_in(yr_text(yr_node(L, p->key)),
								allowed)) {
			rc = -1;	/* reported by yr_map_check */
			continue;
		}
		const char *factor = yr_text(yr_node(L, p->key));
		if (!strcmp(factor, "topology")) {
			if (baseline_topology(L, v, cfg) < 0)
				rc = -1;
		} else if (!strcmp(factor, "pinning") || !strcmp(factor, "noise")) {
			bool pin = factor[0] == 'p';
			size_t nnames = pin ? cfg->npinnings : cfg->nnoises;
			const char **names = xcalloc(nnames + 1, sizeof(char *));
			for (size_t j = 0; j < nnames; j++)
				names[j] = pin ? cfg->pinnings[j].name : cfg->noises[j].name;
			if (baseline_named(L, v, cfg, factor, names, nnames) < 0)
				rc = -1;
			free(names);
		} else if (baseline_knob(L, v, cfg, factor) < 0) {
			rc = -1;
		}
	}
	free(allowed);
	return rc;
}

static int parse_seed(struct yr_reader *L, const yaml_node_t *n, struct sweep_config *cfg)
{
	static const char what[] = "an unsigned 64-bit integer";
	const char *s;
	if (yr_get_plain(L, n, "seed", what, &s) < 0)
		return -1;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return yr_fail(L, n, "seed", "expected %s, got %s", what, YR_DESCRIBE(n));
	errno = 0;
	unsigned long long v = strtoull(s, NULL, 10);
	if (errno == ERANGE)
		return yr_fail(L, n, "seed", "%s is out of range; expected %s", s, what);
	cfg->seed = v;
	cfg->seed_given = true;
	return 0;
}

static void config_defaults(struct sweep_config *cfg)
{
	cfg->uri = xstrdup("qemu:///system");
	cfg->domain_type = DOMAIN_AUTO;
	cfg->name_prefix = xstrdup("ta-");
	cfg->arch = ARCH_HOST;
	cfg->memory_mib = 512;
	cfg->runner = RUNNER_AGENT;
	cfg->boot_timeout = 120;
	cfg->collect = (struct collect){ .gang_exits = true, .exit_reasons = true,
					 .vcpu_stats = true, .buffer_kib = 8192,
					 .max_lost_fraction = 0.001 };
	cfg->repetitions = 3;
	cfg->order = ORDER_RANDOMIZED;
	cfg->strategy = STRATEGY_FULL;
	cfg->race_first_test = 3;
	cfg->advisor.objective = OBJECTIVE_WORST;
	cfg->advisor.equivalence = 0.02;
	executor_defaults(&cfg->executor);
}

/* Walks the whole schema, recording every error; -1 when there was any. */
static int parse_root(struct yr_reader *L, const yaml_node_t *root, struct sweep_config *cfg)
{
	static const char *const keys[] = { "name", "description", "libvirt", "guest",
					    "topology", "pinning", "host", "noise", "benchmark",
					    "baseline", "collect", "repetitions", "order", "seed",
					    "strategy", "race", "advisor", "executor", NULL };
	if (yr_map_check(L, root, "", keys, "a mapping with at least name, topology and "
			 "benchmark") < 0)
		return -1;
	yaml_node_t *v;
	int e;
	if (!(v = yr_map_get(L, root, "name")))
		yr_fail_missing(L, root, "name", "name", "; add e.g. name: my-sweep");
	else
		yr_get_name(L, v, "name", 64, "._-", &cfg->name);
	if ((v = yr_map_get(L, root, "description")))
		yr_get_str(L, v, "description", &cfg->description);
	if ((v = yr_map_get(L, root, "libvirt")))
		parse_libvirt(L, v, cfg);
	if ((v = yr_map_get(L, root, "guest")))
		parse_guest(L, v, cfg);
	int factors = 0;
	if (!(v = yr_map_get(L, root, "topology")))
		factors = yr_fail_missing(L, root, "topology", "topology", "; add e.g. topology: "
				  "[1x2x1, 1x1x2]");
	else if (parse_topology(L, v, cfg) < 0)
		factors = -1;
	if ((v = yr_map_get(L, root, "pinning"))) {
		if (parse_pinning(L, v, cfg) < 0)
			factors = -1;
	} else {
		cfg->pinnings = xcalloc(1, sizeof(*cfg->pinnings));
		cfg->npinnings = 1;
		cfg->pinnings[0].policy = PIN_NONE;
		cfg->pinnings[0].name = xstrdup("none");
	}
	if ((v = yr_map_get(L, root, "host")) && parse_host(L, v, cfg) < 0)
		factors = -1;
	if ((v = yr_map_get(L, root, "noise"))) {
		if (parse_noise(L, v, cfg) < 0)
			factors = -1;
	} else {
		cfg->noises = xcalloc(1, sizeof(*cfg->noises));
		cfg->nnoises = 1;
		cfg->noises[0].kind = NOISE_NONE;
		cfg->noises[0].name = xstrdup("none");
	}
	parse_benchmark(L, root, cfg);
	if ((v = yr_map_get(L, root, "baseline")) && factors == 0)
		parse_baseline(L, v, cfg);
	if ((v = yr_map_get(L, root, "collect")))
		parse_collect(L, v, cfg);
	if ((v = yr_map_get(L, root, "repetitions")))
		yr_get_int(L, v, "repetitions", 1, 1000, &cfg->repetitions);
	if ((v = yr_map_get(L, root, "order")) && yr_get_enum(L, v, "order", order_names, &e) == 0)
		cfg->order = (enum run_order)e;
	if ((v = yr_map_get(L, root, "seed")))
		parse_seed(L, v, cfg);
	if ((v = yr_map_get(L, root, "strategy")) &&
	    yr_get_enum(L, v, "strategy", strategy_names, &e) == 0)
		cfg->strategy = (enum strategy)e;
	if ((v = yr_map_get(L, root, "race")))
		parse_race(L, v, cfg);
	if ((v = yr_map_get(L, root, "advisor")) && factors == 0)
		parse_advisor(L, v, cfg);
	if ((v = yr_map_get(L, root, "executor")))
		parse_executor(L, v, cfg);
	return L->nfailed ? -1 : 0;
}

struct sweep_config *config_parse_flags(const char *path, const char *text, size_t len,
					unsigned flags, struct ta_err *err)
{
	struct yr_reader L;
	if (yr_load(&L, path, text, len, "a mapping with at least name, topology and benchmark",
		    err) < 0)
		return NULL;
	struct sweep_config *cfg = xcalloc(1, sizeof(*cfg));
	cfg->path = xstrdup(path);
	cfg->files_checked = flags & CONFIG_CHECK_FILES;
	cfg->text = xmalloc(len + 1);
	memcpy(cfg->text, text, len);
	cfg->text[len] = '\0';
	cfg->text_len = len;
	config_defaults(cfg);
	int rc = parse_root(&L, yr_root(&L), cfg);
	if (yr_finish(&L) < 0)
		rc = -1;
	if (rc < 0) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

struct sweep_config *config_parse(const char *path, const char *text, size_t len,
				  struct ta_err *err)
{
	return config_parse_flags(path, text, len, 0, err);
}

struct sweep_config *config_load(const char *path, struct ta_err *err)
{
	struct strbuf sb = STRBUF_INIT;
	if (yr_read_file(path, CONFIG_MAX_BYTES, "the config", &sb, err) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	struct sweep_config *cfg = config_parse_flags(path, strbuf_str(&sb), sb.len,
						      CONFIG_CHECK_FILES, err);
	strbuf_release(&sb);
	return cfg;
}

void config_free(struct sweep_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->path);
	free(cfg->text);
	for (size_t i = 0; i < cfg->advisor.nenvironment; i++)
		free(cfg->advisor.environment[i]);
	free(cfg->advisor.environment);
	executor_release(&cfg->executor);
	free(cfg->name);
	free(cfg->description);
	free(cfg->uri);
	free(cfg->template_path);
	free(cfg->name_prefix);
	for (size_t i = 0; i < cfg->nprepare; i++)
		argv_free(&cfg->prepare[i]);
	free(cfg->prepare);
	free(cfg->topology.shapes);
	free(cfg->topology.vcpus);
	free(cfg->topology.threads);
	free(cfg->topology.sockets);
	for (size_t i = 0; i < cfg->npinnings; i++) {
		struct pinning *p = &cfg->pinnings[i];
		free(p->name);
		for (size_t j = 0; j < p->nvcpu_cpus; j++)
			free(p->vcpu_cpus[j]);
		free(p->vcpu_cpus);
		free(p->emulator_cpus);
	}
	free(cfg->pinnings);
	for (size_t i = 0; i < cfg->nknobs; i++) {
		for (size_t j = 0; j < cfg->knobs[i].nvalues; j++)
			free(cfg->knobs[i].values[j]);
		free(cfg->knobs[i].values);
		free(cfg->knobs[i].name);
	}
	free(cfg->knobs);
	for (size_t i = 0; i < cfg->nnoises; i++) {
		free(cfg->noises[i].name);
		free(cfg->noises[i].cpus);
		free(cfg->noises[i].vcpus);
		argv_free(&cfg->noises[i].argv);
	}
	free(cfg->noises);
	struct benchmark *b = &cfg->bench;
	argv_free(&b->argv);
	argv_free(&b->server_argv);
	free(b->vcpus);
	free(b->metric.name);
	free(b->metric.unit);
	free(b->parse_regex);
	for (size_t i = 0; i < b->nparse_groups; i++)
		free(b->parse_groups[i]);
	free(b->parse_groups);
	for (size_t i = 0; i < cfg->nbaseline; i++) {
		free(cfg->baseline[i].factor);
		free(cfg->baseline[i].value);
	}
	free(cfg->baseline);
	free(cfg);
}

/* --- canonical dump ------------------------------------------------------------ */

static void dump_argv(struct strbuf *out, const char *key, const struct argv_list *a)
{
	strbuf_addf(out, "%s: [", key);
	for (size_t i = 0; i < a->argc; i++)
		strbuf_addf(out, "%s\"%s\"", i ? ", " : "", a->argv[i]);
	strbuf_addstr(out, "]\n");
}

static void dump_ints(struct strbuf *out, const char *key, const int *v, size_t n)
{
	strbuf_addf(out, "%s: [", key);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(out, "%s%d", i ? ", " : "", v[i]);
	strbuf_addstr(out, "]\n");
}

static void executor_dump(const struct executor_settings *x, struct strbuf *out)
{
	strbuf_addf(out, "executor: kind=%s max_hosts=%d partition=%s shared_dir=%s "
		    "node_dir=%s max_attempts=%d poll_interval=%g\n", executor_names[x->kind],
		    x->max_hosts, x->partition ? x->partition : "default",
		    x->shared_dir ? x->shared_dir : "none", x->node_dir, x->max_attempts,
		    x->poll_interval);
	if (x->sbatch.argc)
		dump_argv(out, "executor.sbatch", &x->sbatch);
}

void config_dump(const struct sweep_config *cfg, struct strbuf *out)
{
	strbuf_addf(out, "name: %s\n", cfg->name);
	if (cfg->description)
		strbuf_addf(out, "description: %s\n", cfg->description);
	strbuf_addf(out, "libvirt.uri: %s\n", cfg->uri);
	strbuf_addf(out, "libvirt.domain_type: %s\n", domain_type_names[cfg->domain_type]);
	strbuf_addf(out, "libvirt.template: %s\n",
		    cfg->template_path ? cfg->template_path : "builtin");
	strbuf_addf(out, "libvirt.name_prefix: %s\n", cfg->name_prefix);
	strbuf_addf(out, "libvirt.arch: %s\n", arch_names[cfg->arch]);
	strbuf_addf(out, "libvirt.memory_mib: %d\n", cfg->memory_mib);
	strbuf_addf(out, "guest.runner: %s\n", runner_names[cfg->runner]);
	strbuf_addf(out, "guest.boot_timeout: %d\n", cfg->boot_timeout);
	for (size_t i = 0; i < cfg->nprepare; i++) {
		char key[48];
		snprintf(key, sizeof(key), "guest.prepare[%zu]", i);
		dump_argv(out, key, &cfg->prepare[i]);
	}
	strbuf_addf(out, "guest.reuse: %s\n", cfg->reuse_guest ? "true" : "false");
	strbuf_addf(out, "guest.host_baseline: %s\n", cfg->host_baseline ? "true" : "false");
	const struct topology_spec *t = &cfg->topology;
	if (t->generated) {
		dump_ints(out, "topology.vcpus", t->vcpus, t->nvcpus);
		dump_ints(out, "topology.threads", t->threads, t->nthreads);
		if (t->sockets)
			dump_ints(out, "topology.sockets", t->sockets, t->nsockets);
	} else {
		strbuf_addstr(out, "topology: [");
		for (size_t i = 0; i < t->nshapes; i++) {
			char text[64];
			shape_format(&t->shapes[i], text, sizeof(text));
			strbuf_addf(out, "%s%s", i ? ", " : "", text);
		}
		strbuf_addstr(out, "]\n");
	}
	for (size_t i = 0; i < cfg->npinnings; i++) {
		const struct pinning *p = &cfg->pinnings[i];
		strbuf_addf(out, "pinning[%zu]: %s", i, p->name);
		if (p->policy == PIN_EXPLICIT) {
			strbuf_addstr(out, " vcpus=");
			for (size_t j = 0; j < p->nvcpu_cpus; j++)
				strbuf_addf(out, "%s%s", j ? "/" : "", p->vcpu_cpus[j]);
			if (p->emulator_cpus)
				strbuf_addf(out, " emulator=%s", p->emulator_cpus);
		}
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < cfg->nknobs; i++) {
		strbuf_addf(out, "host.%s: [", cfg->knobs[i].name);
		for (size_t j = 0; j < cfg->knobs[i].nvalues; j++)
			strbuf_addf(out, "%s%s", j ? ", " : "", cfg->knobs[i].values[j]);
		strbuf_addstr(out, "]\n");
	}
	for (size_t i = 0; i < cfg->nnoises; i++) {
		const struct noise *z = &cfg->noises[i];
		strbuf_addf(out, "noise[%zu]: %s kind=%s", i, z->name, noise_kind_names[z->kind]);
		if (z->cpus)
			strbuf_addf(out, " cpus=%s", z->cpus);
		if (z->vcpus)
			strbuf_addf(out, " vcpus=%s", z->vcpus);
		if (z->kind == NOISE_SPIN)
			strbuf_addf(out, " threads=%d", z->threads);
		strbuf_addch(out, '\n');
		if (z->argv.argc) {
			char key[48];
			snprintf(key, sizeof(key), "noise[%zu].argv", i);
			dump_argv(out, key, &z->argv);
		}
	}
	const struct benchmark *b = &cfg->bench;
	strbuf_addf(out, "benchmark.kind: %s\n", bench_kind_names[b->kind]);
	dump_argv(out, "benchmark.argv", &b->argv);
	if (b->server_argv.argc)
		dump_argv(out, "benchmark.server_argv", &b->server_argv);
	if (b->vcpus)
		strbuf_addf(out, "benchmark.vcpus: %s\n", b->vcpus);
	strbuf_addf(out, "benchmark.duration: %d\n", b->duration);
	strbuf_addf(out, "benchmark.timeout: %d\n", b->timeout);
	strbuf_addf(out, "benchmark.metric: %s %s%s%s\n", b->metric.name,
		    !b->metric.direction_given ? "as-parsed" :
		    b->metric.higher_is_better ? "higher" : "lower", b->metric.unit ? " " : "",
		    b->metric.unit ? b->metric.unit : "");
	if (b->parse_regex)
		strbuf_addf(out, "benchmark.parse: %s\n", b->parse_regex);
	for (size_t i = 0; i < cfg->nbaseline; i++)
		strbuf_addf(out, "baseline.%s: %s\n", cfg->baseline[i].factor,
			    cfg->baseline[i].value);
	const struct collect *c = &cfg->collect;
	strbuf_addf(out, "collect: gang_exits=%d exit_reasons=%d vcpu_stats=%d buffer_kib=%d "
		    "max_lost_fraction=%g\n", c->gang_exits, c->exit_reasons, c->vcpu_stats,
		    c->buffer_kib, c->max_lost_fraction);
	strbuf_addf(out, "repetitions: %d\n", cfg->repetitions);
	strbuf_addf(out, "order: %s\n", order_names[cfg->order]);
	if (cfg->seed_given)
		strbuf_addf(out, "seed: %llu\n", cfg->seed);
	strbuf_addf(out, "strategy: %s\n", strategy_names[cfg->strategy]);
	if (cfg->strategy == STRATEGY_RACE)
		strbuf_addf(out, "race.first_test: %d\n", cfg->race_first_test);
	strbuf_addf(out, "advisor: objective=%s equivalence=%g environment=noise",
		    objective_names[cfg->advisor.objective], cfg->advisor.equivalence);
	for (size_t i = 0; i < cfg->advisor.nenvironment; i++)
		strbuf_addf(out, ",%s", cfg->advisor.environment[i]);
	strbuf_addch(out, '\n');
	executor_dump(&cfg->executor, out);
}
