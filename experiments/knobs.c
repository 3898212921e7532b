/* knobs: the host settings registry, apply and restore; see knobs.h. */
#include "knobs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../schema/db-journal.h"
#include "../util/cpuset.h"
#include "../util/safefile.h"
#include "hostprobe.h"

#define CPU_DIR "sys/devices/system/cpu"

/* ---- files ------------------------------------------------------------- */

/*
 * root + "/" + rel with one slash between; root NULL or "" means "/".  The
 * root is made canonical (absolute, symlinks resolved) when it exists: the
 * journal keys its rows by these paths, so a root named relatively in one
 * sweep and absolutely (or through a symlink) in the next is one root.
 */
static char *path_join(const char *root, const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	char *real = root && *root ? realpath(root, NULL) : NULL;
	strbuf_addstr(&sb, real ? real : root && *root ? root : "/");
	free(real);
	while (sb.len > 1 && sb.buf[sb.len - 1] == '/')
		sb.buf[--sb.len] = '\0';
	if (sb.buf[sb.len - 1] != '/')
		strbuf_addch(&sb, '/');
	strbuf_addstr(&sb, rel);
	return strbuf_detach(&sb);
}

static void trim_right(struct strbuf *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->buf[--sb->len] = '\0';
}

/* Opens path for reading or writing with the rules in knobs.h. */
static int open_knob_file(const char *path, int mode)
{
	int fd = open(path, mode | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* Reads a small attribute file, trailing whitespace removed; -1 with errno. */
static int read_attr(const char *path, struct strbuf *out)
{
	int fd = open_knob_file(path, O_RDONLY);
	if (fd < 0)
		return -1;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	strbuf_reset(out);
	strbuf_add(out, buf, (size_t)n);
	trim_right(out);
	return 0;
}

/*
 * Writes text; -1 with errno (EIO for a short write).  A sysfs or procfs
 * attribute takes the value in one write() (they are never truncated); a
 * file under a test root is replaced whole (temporary file + rename), so a
 * controller killed mid-write never leaves it empty or half written.
 */
static int write_attr(const char *path, const char *text)
{
	int fd = open_knob_file(path, O_WRONLY);
	if (fd < 0)
		return -1;
	struct statfs fs;
	struct stat st;
	if (fstatfs(fd, &fs) == 0 && fs.f_type != SYSFS_MAGIC && fs.f_type != PROC_SUPER_MAGIC &&
	    fstat(fd, &st) == 0) {
		close(fd);
		struct ta_err err = { 0 };
		return safefile_replace(path, text, strlen(text), st.st_mode & 07777, &err);
	}
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int saved = n < 0 ? errno : EIO;
	if (close(fd) < 0 && n == (ssize_t)len)
		return -1;
	if (n != (ssize_t)len) {
		errno = saved;
		return -1;
	}
	return 0;
}

static const char *errno_hint(const struct knob *k, int e)
{
	if (e == EBUSY && k->needs_no_guests)
		return ": stop all guests first";
	if (e == EROFS)
		return ": the file system is read-only (a container?)";
	if (e == EACCES || e == EPERM)
		return ": run as root";
	if (e == ELOOP)
		return ": it is a symlink, which is refused";
	return "";
}

static int read_err(const struct knob *k, const char *path, struct ta_err *err)
{
	int e = errno;
	return err_set(err, EXIT_FAILURE_RUN, "%s: reading %s: %s%s", k->name, path,
		       e == EINVAL ? "not a regular file" : strerror(e), errno_hint(k, e));
}

static int write_err(const struct knob *k, const char *path, const char *text,
		     struct ta_err *err)
{
	int e = errno;
	return err_set(err, EXIT_FAILURE_RUN, "%s: writing '%s' to %s: %s%s", k->name, text,
		       path, e == EINVAL ? "invalid value or not a regular file"
		       : e == ENXIO ? "not a regular file" : strerror(e),
		       errno_hint(k, e));
}

/* ---- values ------------------------------------------------------------ */

/* A non-negative decimal integer (no sign, no spaces): 0 and *v, else -1. */
static int parse_uint(const char *s, long *v)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	long x = strtol(s, &end, 10);
	if (errno || *end || x > 1000000)
		return -1;
	*v = x;
	return 0;
}

int knob_validate(const struct knob *k, const char *value, struct strbuf *canonical,
		  struct ta_err *err)
{
	const char *canon = knob_canonical(k, value);
	if (canon) {
		strbuf_addstr(canonical, canon);
		return 0;
	}
	struct strbuf sb = STRBUF_INIT;
	knob_expected(k, &sb);
	err_set(err, EXIT_BAD_INPUT, "%s: '%s' is not a valid value; use %s", k->name, value,
		strbuf_str(&sb));
	strbuf_release(&sb);
	return -1;
}

/*
 * A journalled original in the form it is written back in: words in their
 * canonical spelling (journals written before the knob table held "on"/"off"
 * for the kvm_hv booleans), everything else verbatim.
 */
static const char *journal_value(const struct knob *k, const char *value)
{
	if (k->kind != KNOB_BOOL_YN && k->kind != KNOB_BRACKETED)
		return value;
	const char *canon = knob_canonical(k, value);
	return canon ? canon : value;
}

/*
 * What restore accepts: anything knob_snapshot() can produce, which is
 * wider than the values apply accepts (a host may run numa_balancing=2).
 * Still strict enough that a tampered journal cannot write arbitrary text.
 */
static int restorable(const struct knob *k, const char *value, struct ta_err *err)
{
	long v;
	bool ok = false;
	switch (k->kind) {
	case KNOB_SMT:
		ok = !strcmp(value, "on") || !strcmp(value, "off") ||
		     parse_uint(value, &v) == 0;
		if (!strncmp(value, "online=", 7)) {
			struct cpuset cs;
			if (cpuset_parse(value + 7, &cs, NULL) == 0) {
				cpuset_release(&cs);
				ok = true;
			}
		}
		break;
	case KNOB_SUBCORES:
	case KNOB_INT:
		ok = parse_uint(value, &v) == 0;
		break;
	case KNOB_BOOL_YN:
	case KNOB_BRACKETED:
		ok = knob_canonical(k, value) != NULL;
		break;
	}
	if (!ok)
		return err_set(err, EXIT_BAD_INPUT,
			       "%s: journal value '%s' is not a value this knob can hold",
			       k->name, value);
	return 0;
}

/* ---- SMT ---------------------------------------------------------------- */

/*
 * SMT through smt/control when the kernel has it, else through the
 * per-thread online files (POWER kernels before 6.6 have no smt/control;
 * ppc64_cpu --smt works this way).
 */
struct cpu_state {
	int cpu;
	bool has_online;	/* cpu0 often cannot be offlined: no online file */
	bool online;
};

struct cpu_list {
	struct cpu_state *v;
	size_t n;
};

static int cpu_cmp(const void *a, const void *b)
{
	return ((const struct cpu_state *)a)->cpu - ((const struct cpu_state *)b)->cpu;
}

static char *cpu_file(const char *root, int cpu, const char *name)
{
	char rel[128];
	snprintf(rel, sizeof(rel), CPU_DIR "/cpu%d/%s", cpu, name);
	return path_join(root, rel);
}

/* The cpuN directories under root with their online state. */
static int cpus_scan(const char *root, struct cpu_list *out, struct ta_err *err)
{
	char *dir = path_join(root, CPU_DIR);
	DIR *d = opendir(dir);
	if (!d) {
		err_set(err, EXIT_FAILURE_RUN, "smt: %s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	struct cpu_list l = { NULL, 0 };
	size_t alloc = 0;
	struct dirent *de;
	struct strbuf val = STRBUF_INIT;
	int rc = 0;
	while ((de = readdir(d))) {
		long cpu;
		if (strncmp(de->d_name, "cpu", 3) || parse_uint(de->d_name + 3, &cpu) < 0 ||
		    cpu > CPUSET_MAX_CPU)
			continue;
		if (l.n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			l.v = xrealloc(l.v, alloc * sizeof(*l.v));
		}
		struct cpu_state *c = &l.v[l.n++];
		c->cpu = (int)cpu;
		char *p = cpu_file(root, c->cpu, "online");
		if (read_attr(p, &val) == 0) {
			c->has_online = true;
			c->online = strcmp(val.buf, "0") != 0;
		} else if (errno == ENOENT) {
			c->has_online = false;
			c->online = true;
		} else {
			rc = err_set(err, EXIT_FAILURE_RUN, "smt: reading %s: %s", p,
				     strerror(errno));
		}
		free(p);
		if (rc < 0)
			break;
	}
	closedir(d);
	free(dir);
	strbuf_release(&val);
	if (rc == 0 && l.n == 0)
		rc = err_set(err, EXIT_FAILURE_RUN, "smt: no cpuN directories under %s/" CPU_DIR,
			     root);
	if (rc < 0) {
		free(l.v);
		return -1;
	}
	qsort(l.v, l.n, sizeof(*l.v), cpu_cmp);
	*out = l;
	return 0;
}

static struct cpu_state *cpu_get(struct cpu_list *l, int cpu)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].cpu == cpu)
			return &l->v[i];
	return NULL;
}

/* The online siblings of an online cpu (itself included), from thread_siblings_list. */
static int cpu_siblings(const char *root, struct cpu_list *l, int cpu, struct cpuset *out,
			struct ta_err *err)
{
	char *p = cpu_file(root, cpu, "topology/thread_siblings_list");
	struct strbuf val = STRBUF_INIT;
	int rc = read_attr(p, &val);
	if (rc < 0)
		err_set(err, EXIT_FAILURE_RUN, "smt: reading %s: %s", p, strerror(errno));
	else if ((rc = cpuset_parse(val.buf, out, err)) < 0)
		err_prefix(err, "smt: %s", p);
	strbuf_release(&val);
	free(p);
	if (rc < 0)
		return -1;
	/* Real kernels list online siblings only; fake trees may list all. */
	size_t j = 0;
	for (size_t i = 0; i < out->n; i++) {
		struct cpu_state *c = cpu_get(l, out->cpus[i]);
		if (c && c->online)
			out->cpus[j++] = out->cpus[i];
	}
	out->n = j;
	return 0;
}

/*
 * smt/control decides SMT unless the kernel says "notimplemented": a kernel
 * without CONFIG_HOTPLUG_SMT has the file but cannot switch through it
 * (Debian's 6.1 ppc64el kernel on POWER8 does this), while its per-thread
 * online files work as they do where smt/control is absent.
 */
static bool smt_has_control(const char *root)
{
	char *p = path_join(root, knob_of_kind(KNOB_SMT)->rel_path);
	struct strbuf val = STRBUF_INIT;
	bool yes = read_attr(p, &val) == 0 ? strcmp(val.buf, "notimplemented") != 0
					   : access(p, F_OK) == 0;
	strbuf_release(&val);
	free(p);
	return yes;
}

/* "on", "off", "N" (uniform N threads online per core), or "online=LIST". */
static int smt_read_threads(const char *root, bool exact, struct strbuf *value,
			    struct ta_err *err)
{
	struct cpu_list l;
	if (cpus_scan(root, &l, err) < 0)
		return -1;
	bool all = true;
	for (size_t i = 0; i < l.n; i++)
		all &= l.v[i].online;
	strbuf_reset(value);
	if (all) {
		strbuf_addstr(value, "on");
		free(l.v);
		return 0;
	}
	int uniform = 0;
	for (size_t i = 0; !exact && i < l.n && uniform >= 0; i++) {
		if (!l.v[i].online)
			continue;
		struct cpuset sib;
		if (cpu_siblings(root, &l, l.v[i].cpu, &sib, err) < 0) {
			free(l.v);
			return -1;
		}
		int k = (int)sib.n;
		cpuset_release(&sib);
		if (uniform == 0)
			uniform = k;
		else if (uniform != k)
			uniform = -1;
	}
	if (uniform == 1) {
		strbuf_addstr(value, "off");
	} else if (uniform > 1) {
		strbuf_addf(value, "%d", uniform);
	} else {
		struct cpuset on = { xmalloc(l.n * sizeof(int)), 0 };
		for (size_t i = 0; i < l.n; i++)
			if (l.v[i].online)
				on.cpus[on.n++] = l.v[i].cpu;
		strbuf_addstr(value, "online=");
		cpuset_format(&on, value);
		cpuset_release(&on);
	}
	free(l.v);
	return 0;
}

static int cpu_set_online(const char *root, struct cpu_state *c, bool online,
			  const struct knob *k, struct ta_err *err)
{
	if (c->online == online)
		return 0;
	if (!c->has_online)
		return err_set(err, EXIT_FAILURE_RUN,
			       "smt: cpu%d cannot be taken offline (it has no online file)",
			       c->cpu);
	char *p = cpu_file(root, c->cpu, "online");
	int rc = 0;
	if (write_attr(p, online ? "1" : "0") < 0)
		rc = write_err(k, p, online ? "1" : "0", err);
	else
		c->online = online;
	free(p);
	return rc;
}

/*
 * Applies "on", "off", "N" or "online=LIST" per thread.  Everything is
 * brought online first: offline CPUs have no topology on a real kernel, and
 * a state with more CPUs online is always a safe intermediate one.
 */
static int smt_write_threads(const struct knob *k, const char *root, const char *value,
			     struct ta_err *err)
{
	struct cpu_list l;
	struct cpuset keep = { NULL, 0 };
	int rc = 0;
	if (cpus_scan(root, &l, err) < 0)
		return -1;
	if (!strncmp(value, "online=", 7)) {
		if (cpuset_parse(value + 7, &keep, err) < 0) {
			free(l.v);
			return -1;
		}
		for (size_t i = 0; i < keep.n && rc == 0; i++)
			if (!cpu_get(&l, keep.cpus[i]))
				rc = err_set(err, EXIT_FAILURE_RUN,
					     "smt: cpu%d of '%s' does not exist on this host",
					     keep.cpus[i], value);
	}
	for (size_t i = 0; i < l.n && rc == 0; i++)
		rc = cpu_set_online(root, &l.v[i], true, k, err);
	long per_core = 0;
	if (rc == 0 && strcmp(value, "on") && strncmp(value, "online=", 7)) {
		per_core = !strcmp(value, "off") ? 1 : 0;
		if (!per_core && parse_uint(value, &per_core) < 0)
			rc = err_set(err, EXIT_BAD_INPUT, "smt: '%s' is not a valid value", value);
		/* Keep the first per_core threads of every core. */
		keep.cpus = xmalloc(l.n * sizeof(int));
		for (size_t i = 0; i < l.n && rc == 0; i++) {
			struct cpuset sib;
			if ((rc = cpu_siblings(root, &l, l.v[i].cpu, &sib, err)) < 0)
				break;
			if ((long)sib.n < per_core)
				rc = err_set(err, EXIT_FAILURE_RUN,
					     "smt: cpu%d's core has %zu threads; cannot keep %ld",
					     l.v[i].cpu, sib.n, per_core);
			for (size_t j = 0; rc == 0 && j < (size_t)per_core; j++)
				if (sib.cpus[j] == l.v[i].cpu)
					keep.cpus[keep.n++] = l.v[i].cpu;
			cpuset_release(&sib);
		}
	}
	if (rc == 0 && keep.cpus) {
		for (size_t i = 0; i < l.n && rc == 0; i++) {
			bool on = false;
			for (size_t j = 0; j < keep.n; j++)
				on |= keep.cpus[j] == l.v[i].cpu;
			rc = cpu_set_online(root, &l.v[i], on, k, err);
		}
	}
	cpuset_release(&keep);
	free(l.v);
	return rc;
}

/* ---- the operations ------------------------------------------------------ */

char *knob_path(const struct knob *k, const char *root)
{
	if (k->kind == KNOB_SMT && !smt_has_control(root))
		return path_join(root, CPU_DIR);
	return path_join(root, k->rel_path);
}

/* Turns what the file shows into the canonical form. */
static int normalise(const struct knob *k, const char *path, struct strbuf *raw,
		     struct ta_err *err)
{
	struct strbuf out = STRBUF_INIT;
	long v;
	int rc = 0;
	switch (k->kind) {
	case KNOB_SUBCORES: {
		char *end;
		errno = 0;
		v = strtol(raw->buf, &end, 16);
		if (errno || end == raw->buf || *end || v < 0)
			rc = -1;
		else
			strbuf_addf(&out, "%ld", v);
		break;
	}
	case KNOB_BOOL_YN:
		if (!strcmp(raw->buf, "Y") || !strcmp(raw->buf, "N"))
			strbuf_addstr(&out, raw->buf);
		else
			rc = -1;
		break;
	case KNOB_INT:
		if (parse_uint(raw->buf, &v) < 0)
			rc = -1;
		else
			strbuf_addf(&out, "%ld", v);
		break;
	case KNOB_BRACKETED: {
		/* The kernel shows every choice, the chosen one bracketed; a file
		 * under a test root holds the one word written to it. */
		const char *l = strchr(raw->buf, '['), *r = l ? strchr(l, ']') : NULL;
		const char *word = l ? NULL : knob_canonical(k, raw->buf);
		if (r)
			strbuf_add(&out, l + 1, (size_t)(r - l - 1));
		else if (word && !strcmp(word, raw->buf))
			strbuf_addstr(&out, word);
		else
			rc = -1;
		break;
	}
	case KNOB_SMT:
		strbuf_addstr(&out, raw->buf);
		break;
	}
	if (rc < 0)
		err_set(err, EXIT_FAILURE_RUN, "%s: %s shows '%s', which is not understood",
			k->name, path, raw->buf);
	else {
		strbuf_reset(raw);
		strbuf_addstr(raw, strbuf_str(&out));
	}
	strbuf_release(&out);
	return rc;
}

static int read_common(const struct knob *k, const char *root, bool exact,
		       struct strbuf *value, struct ta_err *err)
{
	if (k->kind == KNOB_SMT && !smt_has_control(root))
		return smt_read_threads(root, exact, value, err);
	char *path = path_join(root, k->rel_path);
	int rc = read_attr(path, value);
	if (rc < 0)
		read_err(k, path, err);
	else
		rc = normalise(k, path, value, err);
	free(path);
	return rc;
}

int knob_read(const struct knob *k, const char *root, struct strbuf *value,
	      struct ta_err *err)
{
	return read_common(k, root, false, value, err);
}

int knob_snapshot(const struct knob *k, const char *root, struct strbuf *value,
		  struct ta_err *err)
{
	return read_common(k, root, true, value, err);
}

int knob_supported(const struct knob *k, const char *root, struct ta_err *err)
{
	/* Where the knob exists by the host's CPU and kernel (hostprobe.c). */
	struct knob_host host;
	hostprobe_knob_host(root, &host);
	struct strbuf why = STRBUF_INIT;
	if (!knob_available(k, &host, &why)) {
		err_set(err, EXIT_FAILURE_RUN, "%s: not on this host: %s", k->name, why.buf);
		strbuf_release(&why);
		return -1;
	}
	strbuf_release(&why);
	if (k->kind == KNOB_SMT && !smt_has_control(root)) {
		/* Per-thread: there must be threads to take offline. */
		struct cpu_list l;
		if (cpus_scan(root, &l, err) < 0)
			return -1;
		bool offlinable = false, smt = false;
		for (size_t i = 0; i < l.n; i++) {
			offlinable |= l.v[i].has_online;
			smt |= !l.v[i].online;
			if (l.v[i].online && !smt) {
				struct cpuset sib;
				if (cpu_siblings(root, &l, l.v[i].cpu, &sib, NULL) == 0) {
					smt |= sib.n > 1;
					cpuset_release(&sib);
				}
			}
		}
		free(l.v);
		if (!offlinable || !smt)
			return err_set(err, EXIT_FAILURE_RUN,
				       "smt: no CPU under %s has SMT siblings that can be "
				       "taken offline: %s", root, k->why_missing);
		return 0;
	}
	char *path = path_join(root, k->rel_path);
	struct strbuf val = STRBUF_INIT;
	int rc = 0;
	if (read_attr(path, &val) < 0) {
		if (errno == ENOENT)
			rc = err_set(err, EXIT_FAILURE_RUN, "%s: %s does not exist: %s", k->name,
				     path, k->why_missing);
		else
			rc = read_err(k, path, err);
	} else if (access(path, W_OK) < 0) {
		int e = errno;
		rc = err_set(err, EXIT_FAILURE_RUN, "%s: %s is not writable: %s%s", k->name, path,
			     strerror(e), errno_hint(k, e));
	} else if (k->kind == KNOB_SMT && strcmp(val.buf, "on") && strcmp(val.buf, "off") &&
		   !isdigit((unsigned char)val.buf[0])) {
		rc = err_set(err, EXIT_FAILURE_RUN, "smt: %s says '%s': %s", path, val.buf,
			     !strcmp(val.buf, "forceoff")
				     ? "SMT was forced off on the kernel command line "
				       "(nosmt=force); reboot without it"
				     : !strcmp(val.buf, "notsupported")
				     ? "this CPU (or its hypervisor) offers no SMT to switch"
				     : "this kernel cannot switch SMT");
	} else {
		rc = normalise(k, path, &val, err);
	}
	strbuf_release(&val);
	free(path);
	return rc;
}

/* Writes a value already checked (by knob_validate or restorable). */
static int write_value(const struct knob *k, const char *root, const char *value,
		       struct ta_err *err)
{
	if (k->kind == KNOB_SMT && !smt_has_control(root))
		return smt_write_threads(k, root, value, err);
	char text[64];
	if (k->kind == KNOB_SUBCORES)
		snprintf(text, sizeof(text), "%lx", strtol(value, NULL, 10));
	else
		snprintf(text, sizeof(text), "%s", value);
	char *path = path_join(root, k->rel_path);
	int rc = 0;
	if (write_attr(path, text) < 0)
		rc = write_err(k, path, text, err);
	free(path);
	return rc;
}

/* Reads back after a write: the kernel may accept a value and keep another. */
static int verify(const struct knob *k, const char *root, const char *want, bool exact,
		  struct ta_err *err)
{
	struct strbuf now = STRBUF_INIT;
	int rc = read_common(k, root, exact, &now, err);
	if (rc == 0 && strcmp(now.buf, want)) {
		char *path = knob_path(k, root);
		rc = err_set(err, EXIT_FAILURE_RUN, "%s: wrote '%s' to %s but it reads '%s'",
			     k->name, want, path, now.buf);
		free(path);
	}
	strbuf_release(&now);
	return rc;
}

int knob_apply(const struct knob *k, const char *root, const char *value,
	       struct ta_err *err)
{
	struct strbuf canon = STRBUF_INIT;
	int rc = knob_validate(k, value, &canon, err);
	if (rc == 0)
		rc = write_value(k, root, canon.buf, err);
	if (rc == 0)
		rc = verify(k, root, canon.buf, false, err);
	strbuf_release(&canon);
	return rc;
}

/*
 * Puts back a value knob_snapshot() returned (which may lie outside the
 * values apply accepts, e.g. numa_balancing=2).  Writes nothing when the
 * knob already holds it.  Not journalled.
 */
static int knob_restore(const struct knob *k, const char *root, const char *original,
			struct ta_err *err)
{
	if (restorable(k, original, err) < 0)
		return -1;
	original = journal_value(k, original);
	struct strbuf now = STRBUF_INIT;
	bool exact = !strncmp(original, "online=", 7) || !strcmp(original, "on");
	int rc = 0;
	/* An unreadable value (e.g. SMT left midway) is no reason not to write. */
	if (knob_snapshot(k, root, &now, NULL) < 0 || strcmp(now.buf, original)) {
		rc = write_value(k, root, original, err);
		if (rc == 0)
			rc = verify(k, root, original, exact, err);
	}
	strbuf_release(&now);
	return rc;
}

/* ---- sets and the journal ------------------------------------------------ */

struct pending {
	const struct knob *k;
	char *value;	/* canonical */
	size_t pos;	/* position in the caller's arrays, to keep ties stable */
};

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->k->order != y->k->order)
		return x->k->order - y->k->order;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int knobs_apply_set(const char *root, const char *const names[], const char *const values[],
		    size_t n, const struct knob_journal *journal, struct ta_err *err)
{
	if (!journal || !journal->db)
		return err_set(err, EXIT_FAILURE_RUN,
			       "host knobs are only changed with a journal to restore them from");
	struct pending *p = xcalloc(n ? n : 1, sizeof(*p));
	int rc = 0;
	/* Everything is checked before the first write. */
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct strbuf canon = STRBUF_INIT;
		p[i].pos = i;
		if (!(p[i].k = knob_lookup(names[i], err)))
			rc = -1;
		for (size_t j = 0; rc == 0 && j < i; j++)
			if (p[j].k == p[i].k)
				rc = err_set(err, EXIT_BAD_INPUT, "%s: set twice in one change",
					     names[i]);
		if (rc == 0)
			rc = knob_validate(p[i].k, values[i], &canon, err);
		if (rc == 0)
			rc = knob_supported(p[i].k, root, err);
		p[i].value = strbuf_detach(&canon);
	}
	if (rc == 0)
		qsort(p, n, sizeof(*p), pending_cmp);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct knob *k = p[i].k;
		struct strbuf now = STRBUF_INIT, original = STRBUF_INIT;
		rc = knob_read(k, root, &now, err);
		if (rc == 0 && strcmp(now.buf, p[i].value)) {
			char *path = knob_path(k, root);
			rc = knob_snapshot(k, root, &original, err);
			if (rc == 0)
				rc = db_journal_record(journal->db, journal->experiment_id, k->name,
						       path, original.buf, p[i].value, NULL, err);
			if (rc == 0)
				rc = write_value(k, root, p[i].value, err);
			if (rc == 0)
				rc = verify(k, root, p[i].value, false, err);
			free(path);
		}
		strbuf_release(&now);
		strbuf_release(&original);
	}
	for (size_t i = 0; i < n; i++)
		free(p[i].value);
	free(p);
	return rc;
}

const char *knob_restore_status_name(enum knob_restore_status s)
{
	switch (s) {
	case KNOB_RESTORED: return "restored";
	case KNOB_WAS_ORIGINAL: return "unchanged";
	case KNOB_RESTORE_FAILED: return "failed";
	case KNOB_OTHER_ROOT: return "other-root";
	case KNOB_GONE: return "gone";
	}
	return "?";
}

static int restore_order_cmp(const void *a, const void *b)
{
	const struct db_journal_entry *x = a, *y = b;
	const struct knob *kx = knob_find(x->knob), *ky = knob_find(y->knob);
	int ox = kx ? kx->order : 0, oy = ky ? ky->order : 0;
	if (ox != oy)
		return oy - ox;
	return y->id < x->id ? -1 : y->id > x->id;
}

/*
 * Whether a journal entry's path is this one (canonical, knob_path).
 * Journals written before roots were canonical hold the root as typed: a
 * relative one counts when it leads to the same file from here.
 */
static bool journal_path_is(const char *journalled, const char *path)
{
	if (!journalled || !strcmp(journalled, path))
		return journalled != NULL;
	if (journalled[0] == '/')
		return false;
	char *real = realpath(journalled, NULL);
	bool same = real && !strcmp(real, path);
	free(real);
	return same;
}

static void restore_one(const char *root, const struct knob_journal *journal,
			const struct db_journal_entry *e, struct knob_restore_item *it)
{
	struct ta_err err = { 0 };
	struct strbuf before = STRBUF_INIT;
	const struct knob *k = knob_lookup(e->knob, &err);
	char *path = k ? knob_path(k, root) : NULL;
	it->status = KNOB_RESTORE_FAILED;
	if (k && !journal_path_is(e->path, path)) {
		it->status = KNOB_OTHER_ROOT;
		err_set(&err, EXIT_FAILURE_RUN,
			"journalled at %s, not under root %s: run restore-host with the "
			"matching --root", e->path ? e->path : "(no path)", root);
	} else if (k && k->kind != KNOB_SMT && access(path, F_OK) < 0 && errno == ENOENT) {
		/* A module parameter vanishes with its module and comes back with
		 * its defaults: there is nothing left to restore. */
		it->status = KNOB_GONE;
	} else if (k) {
		if (knob_snapshot(k, root, &before, NULL) == 0)
			it->before = xstrdup(before.buf);
		if (it->before && !strcmp(it->before, journal_value(k, e->original_value)))
			it->status = KNOB_WAS_ORIGINAL;
		else if (knob_restore(k, root, e->original_value, &err) == 0)
			it->status = KNOB_RESTORED;
	}
	if ((it->status == KNOB_RESTORED || it->status == KNOB_WAS_ORIGINAL ||
	     it->status == KNOB_GONE) &&
	    db_journal_mark_restored(journal->db, e->id, &err) < 0)
		it->status = KNOB_RESTORE_FAILED;
	if (it->status == KNOB_RESTORE_FAILED || it->status == KNOB_OTHER_ROOT)
		it->error = xstrdup(err.msg);
	strbuf_release(&before);
	free(path);
}

int knobs_restore_all(const char *root, const struct knob_journal *journal,
		      struct ta_err *err)
{
	return knobs_restore_report(root, journal, NULL, err);
}

int knobs_restore_report(const char *root, const struct knob_journal *journal,
			 struct knob_restore_report *report, struct ta_err *err)
{
	struct db_journal_entry *v;
	size_t n;
	if (report)
		*report = (struct knob_restore_report){ NULL, 0, 0 };
	if (db_journal_unrestored(journal->db, &v, &n, err) < 0)
		return -1;
	if (n)
		qsort(v, n, sizeof(*v), restore_order_cmp);
	struct knob_restore_report r = { xcalloc(n ? n : 1, sizeof(*r.items)), n, 0 };
	const char *first = NULL;
	for (size_t i = 0; i < n; i++) {
		struct knob_restore_item *it = &r.items[i];
		it->journal_id = v[i].id;
		it->experiment_id = v[i].experiment_id;
		it->knob = xstrdup(v[i].knob);
		it->path = v[i].path ? xstrdup(v[i].path) : NULL;
		it->original = xstrdup(v[i].original_value);
		it->applied = xstrdup(v[i].applied_value);
		restore_one(root, journal, &v[i], it);
		if (it->status == KNOB_RESTORE_FAILED) {
			r.nfailed++;
			if (!first)
				first = it->error;
		}
	}
	int rc = 0;
	if (r.nfailed)
		rc = err_set(err, EXIT_FAILURE_RUN,
			     "%zu host knob%s not restored; first: %s (fix that and run "
			     "'topoadvisor restore-host' again)",
			     r.nfailed, r.nfailed == 1 ? "" : "s", first);
	db_journal_entries_free(v, n);
	if (report)
		*report = r;
	else
		knob_restore_report_release(&r);
	return rc;
}

void knob_restore_report_release(struct knob_restore_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].knob);
		free(r->items[i].path);
		free(r->items[i].original);
		free(r->items[i].applied);
		free(r->items[i].before);
		free(r->items[i].error);
	}
	free(r->items);
	r->items = NULL;
	r->n = r->nfailed = 0;
}
