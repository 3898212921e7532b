/* proctree: containing what a started command runs; see proctree.h. */
#include "proctree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mono.h"
#include "procgroup.h"

#define CGROUP_PREFIX "topoadvisor-"
/* How deep sub-cgroups a command made are looked into (the kernel allows more). */
#define CG_MAX_DEPTH 32

/* What this process found out about the host, once. */
static struct {
	bool paths_known;	/* mount and base looked up */
	bool probed;		/* whether a process can join a cgroup of ours: known */
	bool cgroup;		/* trees are cgroups */
	char *mount;		/* the cgroup2 mount point */
	char *base;		/* our own cgroup's directory: trees go under it */
	char *root;		/* the cgroup path the mount shows as its root ("/") */
	unsigned seq;
	enum proctree_force forced;
	proctree_recorder recorder;
} host;

/* The clock waits read (a test may give another). */
static uint64_t (*clock_ns)(void) = mono_now_ns;

/* The trees between init and release: what is whose in process group mode. */
static struct proctree **live_trees;
static size_t nlive;

void proctree_set_recorder(proctree_recorder fn)
{
	host.recorder = fn;
}

void proctree_set_clock(uint64_t (*now_ns)(void))
{
	clock_ns = now_ns ? now_ns : mono_now_ns;
}

void proctree_force_mode(enum proctree_force f)
{
	host.forced = f;
	free(host.mount);
	free(host.base);
	free(host.root);
	host.mount = host.base = host.root = NULL;
	host.paths_known = host.probed = host.cgroup = false;
}

/* ---- finding cgroup v2 ---------------------------------------------------- */

/* Undoes mountinfo's octal escapes ("\040" for a space) in place. */
static void unescape_octal(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/*
 * The first cgroup2 mount in /proc/self/mountinfo: its mount point and the
 * cgroup path it shows as its root ("/" unless a subtree is mounted).
 */
static int cgroup2_mount(struct strbuf *mnt, struct strbuf *root)
{
	struct strbuf info = STRBUF_INIT;
	int rc = -1;
	if (strbuf_read_file(&info, "/proc/self/mountinfo") < 0)
		goto out;
	for (char *line = info.buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SRC SUPER" */
		char *sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		char *f[5];
		char *save = NULL, *p = line;
		int i;
		for (i = 0; i < 5 && (f[i] = strtok_r(p, " ", &save)); i++)
			p = NULL;
		if (i < 5)
			continue;
		unescape_octal(f[3]);
		unescape_octal(f[4]);
		strbuf_addstr(root, f[3]);
		strbuf_addstr(mnt, f[4]);
		rc = 0;
		break;
	}
out:
	strbuf_release(&info);
	return rc;
}

/*
 * Finds, once, the cgroup2 mount and our own cgroup's directory in it (the
 * "0::PATH" line of /proc/self/cgroup); either stays NULL when there is none.
 */
static void host_paths(void)
{
	if (host.paths_known)
		return;
	host.paths_known = true;
	struct strbuf mnt = STRBUF_INIT, root = STRBUF_INIT, cg = STRBUF_INIT;
	if (cgroup2_mount(&mnt, &root) < 0)
		goto out;
	host.mount = xstrdup(mnt.buf);
	host.root = xstrdup(strcmp(root.buf, "/") ? root.buf : "");
	if (strbuf_read_file(&cg, "/proc/self/cgroup") < 0)
		goto out;
	const char *line = strstr(cg.buf, "0::");
	if (!line || (line != cg.buf && line[-1] != '\n'))
		goto out;
	line += 3;
	size_t len = strcspn(line, "\n");
	/* The path is relative to the namespace's root, which the mount shows. */
	size_t rlen = strcmp(root.buf, "/") ? root.len : 0;
	if (rlen && (strncmp(line, root.buf, rlen) || (line[rlen] != '/' && line[rlen] != '\n')))
		goto out;
	struct strbuf d = STRBUF_INIT;
	strbuf_addstr(&d, mnt.buf);
	strbuf_add(&d, line + rlen, len - rlen);
	while (d.len > 1 && d.buf[d.len - 1] == '/')
		d.buf[--d.len] = '\0';
	host.base = strbuf_detach(&d);
out:
	strbuf_release(&mnt);
	strbuf_release(&root);
	strbuf_release(&cg);
}

/* ---- cgroup files ----------------------------------------------------------- */

static int cg_write(const char *dir, const char *file, const char *value)
{
	struct strbuf p = STRBUF_INIT;
	strbuf_addf(&p, "%s/%s", dir, file);
	int fd = open(p.buf, O_WRONLY | O_CLOEXEC);
	strbuf_release(&p);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, value, strlen(value));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* Appends the pids in dir's cgroup.procs; -1 when it cannot be read (gone). */
static int cg_pids_of(const char *dir, pid_t **pids, size_t *n, size_t *cap)
{
	struct strbuf p = STRBUF_INIT, sb = STRBUF_INIT;
	strbuf_addf(&p, "%s/cgroup.procs", dir);
	int rc = strbuf_read_file(&sb, p.buf);
	for (char *s = sb.buf; rc == 0 && s && *s;) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			*pids = xrealloc(*pids, *cap * sizeof(**pids));
		}
		(*pids)[(*n)++] = (pid_t)v;
		s = end + strspn(end, "\n");
	}
	strbuf_release(&p);
	strbuf_release(&sb);
	return rc;
}

/*
 * The sub-cgroups of dir (a command run as root may make them, and move
 * its processes into them), deepest first, each followed by its parent,
 * dir itself last: the order they can be removed in.  Nothing is followed
 * but directories, CG_MAX_DEPTH levels deep.
 */
static void cg_subtree(const char *dir, int depth, struct strbuf *names, size_t *n)
{
	DIR *d = depth < CG_MAX_DEPTH ? opendir(dir) : NULL;
	struct dirent *de;
	char **subs = NULL;
	size_t nsubs = 0;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		subs = xrealloc(subs, (nsubs + 1) * sizeof(*subs));
		struct strbuf sub = STRBUF_INIT;
		strbuf_addf(&sub, "%s/%s", dir, de->d_name);
		subs[nsubs++] = strbuf_detach(&sub);
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < nsubs; i++) {
		cg_subtree(subs[i], depth + 1, names, n);
		free(subs[i]);
	}
	free(subs);
	strbuf_add(names, dir, strlen(dir) + 1);	/* NUL-separated */
	(*n)++;
}

/* The pids in the cgroup at dir and every sub-cgroup; -1 when dir is gone. */
static int cg_pids(const char *dir, pid_t **pids, size_t *n)
{
	struct strbuf names = STRBUF_INIT;
	size_t ndirs = 0, cap = 0;
	*pids = NULL;
	*n = 0;
	cg_subtree(dir, 0, &names, &ndirs);
	int rc = 0;
	for (const char *d = names.buf; ndirs--; d += strlen(d) + 1)
		if (cg_pids_of(d, pids, n, &cap) < 0 && !strcmp(d, dir))
			rc = -1;
	strbuf_release(&names);
	return rc;
}

/* Removes the cgroup at dir and its sub-cgroups; whether dir is gone. */
static bool cg_remove(const char *dir)
{
	struct strbuf names = STRBUF_INIT;
	size_t ndirs = 0;
	cg_subtree(dir, 0, &names, &ndirs);
	for (const char *d = names.buf; ndirs--; d += strlen(d) + 1)
		rmdir(d);
	strbuf_release(&names);
	struct stat st;
	bool gone = stat(dir, &st) < 0 && errno == ENOENT;
	if (gone && host.recorder)
		host.recorder(dir, false);
	return gone;
}

/* Live members of the cgroup at dir (sub-cgroups too), named in who. */
static int cg_count(const char *dir, struct strbuf *who)
{
	pid_t *pids;
	size_t n;
	cg_pids(dir, &pids, &n);
	int live = 0;
	for (size_t i = 0; i < n; i++) {
		struct proc_info pi;
		if (procgroup_info(pids[i], &pi) < 0 || pi.state == 'Z' || pi.state == 'X')
			continue;
		if (who)
			strbuf_addf(who, "%s%s(%d)", who->len ? ", " : "", pi.comm, (int)pi.pid);
		live++;
	}
	free(pids);
	return live;
}

static void cg_signal_each(const char *dir, int sig)
{
	pid_t *pids;
	size_t n;
	cg_pids(dir, &pids, &n);
	for (size_t i = 0; i < n; i++)
		kill(pids[i], sig);
	free(pids);
}

/* Whether cgroup.events says "frozen 1". */
static bool cg_frozen(const char *dir)
{
	struct strbuf p = STRBUF_INIT, sb = STRBUF_INIT;
	strbuf_addf(&p, "%s/cgroup.events", dir);
	bool frozen = strbuf_read_file(&sb, p.buf) == 0 && strstr(sb.buf, "frozen 1");
	strbuf_release(&p);
	strbuf_release(&sb);
	return frozen;
}

/* Whether ms milliseconds have passed since start_ns (the monotonic clock:
 * a sleep a signal cuts short does not count as a whole one). */
static bool elapsed_ms(uint64_t start_ns, int ms)
{
	return clock_ns() - start_ns >= (uint64_t)(ms > 0 ? ms : 0) * 1000000ULL;
}

/*
 * SIGKILL to every member, in sub-cgroups too: cgroup.kill (Linux 5.14) in
 * one step; before it, freeze the cgroup so nothing forks while each member
 * is killed, then thaw (a frozen process still dies of SIGKILL once thawed
 * or even frozen).  Both act on the whole subtree.
 */
static void cg_kill(const char *dir)
{
	if (host.forced != PROCTREE_NO_KILL_FILE && cg_write(dir, "cgroup.kill", "1") == 0)
		return;
	bool freeze = cg_write(dir, "cgroup.freeze", "1") == 0;
	for (uint64_t t0 = clock_ns(); freeze && !cg_frozen(dir) && !elapsed_ms(t0, 1000);)
		mono_sleep_ms(5);
	cg_signal_each(dir, SIGKILL);
	if (freeze)
		cg_write(dir, "cgroup.freeze", "0");
}

/* Whether path names a tree's cgroup: "topoadvisor-*" under the cgroup2 mount. */
static bool cg_ours(const char *path)
{
	host_paths();
	size_t m = host.mount ? strlen(host.mount) : 0;
	const char *base = strrchr(path, '/');
	return m && !strncmp(path, host.mount, m) && path[m] == '/' && !strstr(path, "/..") &&
	       base && !strncmp(base + 1, CGROUP_PREFIX, strlen(CGROUP_PREFIX));
}

/* Kills the cgroup at dir, waits up to ms for it to be empty, removes it
 * with the sub-cgroups a command made in it. */
static bool cg_end(const char *dir, int ms)
{
	cg_kill(dir);
	uint64_t t0 = clock_ns(), last_kill = t0;
	for (;;) {
		if (cg_count(dir, NULL) == 0 && cg_remove(dir))
			return true;
		if (elapsed_ms(t0, ms))
			return false;
		/* No cgroup.kill: catch what forked meanwhile. */
		if (host.forced == PROCTREE_NO_KILL_FILE || elapsed_ms(last_kill, 500)) {
			cg_kill(dir);
			last_kill = clock_ns();
		}
		mono_sleep_ms(10);
	}
}

/* ---- the mode --------------------------------------------------------------- */

/*
 * Makes dir a cgroup for a new tree; the first time, also checks that a
 * process can really be moved into one (a forked child tries and exits).
 */
static int cg_create(char **dir)
{
	if (host.forced == PROCTREE_NO_CGROUP || (host.probed && !host.cgroup))
		return -1;
	host_paths();
	if (!host.base) {
		host.probed = true;
		return -1;
	}
	struct strbuf d = STRBUF_INIT;
	int rc;
	/* A name taken (a killed controller with our pid, never cleaned up) is skipped. */
	for (int attempt = 0; attempt < 64; attempt++) {
		strbuf_reset(&d);
		strbuf_addf(&d, "%s/" CGROUP_PREFIX "%d-%u", host.base, (int)getpid(),
			    ++host.seq);
		/* Recorded before it exists: whenever we are killed, the next
		 * lock holder knows the name of what we may have made. */
		if (host.recorder)
			host.recorder(d.buf, true);
		rc = mkdir(d.buf, 0755);
		int e = errno;
		if (rc < 0 && host.recorder)
			host.recorder(d.buf, false);
		errno = e;
		if (rc == 0 || errno != EEXIST)
			break;
	}
	if (rc < 0) {
		strbuf_release(&d);
		host.probed = true;
		return -1;
	}
	if (!host.probed) {
		host.probed = true;
		struct strbuf procs = STRBUF_INIT;
		strbuf_addf(&procs, "%s/cgroup.procs", d.buf);
		int fd = open(procs.buf, O_WRONLY | O_CLOEXEC);
		strbuf_release(&procs);
		pid_t pid = fd < 0 ? -1 : fork();
		if (pid == 0)
			_exit(write(fd, "0", 1) == 1 ? 0 : 1);
		int status = 1;
		if (pid > 0)
			waitpid(pid, &status, 0);
		if (fd >= 0)
			close(fd);
		host.cgroup = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (!host.cgroup) {
			cg_remove(d.buf);
			strbuf_release(&d);
			return -1;
		}
	}
	*dir = strbuf_detach(&d);
	return 0;
}

/* ---- trees ------------------------------------------------------------------ */

static bool is_child(const struct proctree *t, pid_t pid)
{
	for (size_t i = 0; i < t->nchildren; i++)
		if (t->children[i] == pid)
			return true;
	return false;
}

static bool is_escapee(const struct proctree *t, const struct proc_info *pi)
{
	for (size_t i = 0; i < t->nescaped; i++)
		if (t->escaped[i].pid == pi->pid && t->escaped[i].start == pi->start)
			return true;
	return false;
}

/*
 * Whether process pid is in the cgroup at dir or below it, by the "0::"
 * line of /proc/PID/cgroup (relative to the mount's root).
 */
static bool in_cgroup(pid_t pid, const char *dir)
{
	struct strbuf p = STRBUF_INIT, sb = STRBUF_INIT;
	strbuf_addf(&p, "/proc/%d/cgroup", (int)pid);
	bool in = false;
	size_t m = strlen(host.mount), r = strlen(host.root);
	char *line = strbuf_read_file(&sb, p.buf) == 0 ? strstr(sb.buf, "0::") : NULL;
	if (line && (line == sb.buf || line[-1] == '\n') && !strncmp(dir, host.mount, m)) {
		line += 3;
		line[strcspn(line, "\n")] = '\0';
		const char *rel = dir + m;	/* "/topoadvisor-1-2" below the mount */
		size_t len = strlen(rel);
		if (!strncmp(line, host.root, r) && !strncmp(line + r, rel, len) &&
		    (line[r + len] == '\0' || line[r + len] == '/'))
			in = true;
	}
	strbuf_release(&p);
	strbuf_release(&sb);
	return in;
}

/* Whether a live tree other than t holds pi by its own rules. */
static bool other_tree_holds(const struct proctree *t, const struct proc_info *pi)
{
	for (size_t i = 0; i < nlive; i++) {
		const struct proctree *u = live_trees[i];
		if (u != t && (is_child(u, pi->pid) || (u->pgid > 0 && pi->pgrp == u->pgid) ||
			       is_escapee(u, pi) || (u->cgroup && in_cgroup(pi->pid, u->cgroup))))
			return true;
	}
	return false;
}

/* A child of ours (we are a subreaper) that no tree started and not of our group. */
static bool stray_child(const struct proc_info *pi)
{
	return pi->ppid == getpid() && pi->pgrp != getpgrp();
}

static int by_pid(const void *a, const void *b)
{
	const struct proc_info *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/*
 * Marks the members of t in all[] (sorted by pid): its children, its
 * group (process group mode) or its cgroup's members (cg[], sorted; cgroup
 * mode), the processes that left its cgroup seen earlier, the orphans
 * reparented to us no other tree holds, and every descendant of those —
 * so that a process that moved itself out of the cgroup (root can) is
 * still the tree's.
 */
static void tree_members(const struct proctree *t, struct proc_info *all, size_t n,
			 const pid_t *cg, size_t ncg, bool *member)
{
	for (size_t i = 0; i < n; i++) {
		const struct proc_info *pi = &all[i];
		member[i] = is_child(t, pi->pid) || (t->pgid > 0 && pi->pgrp == t->pgid) ||
			    (ncg && bsearch(&pi->pid, cg, ncg, sizeof(*cg), pid_cmp)) ||
			    is_escapee(t, pi) ||
			    (!t->group_only && stray_child(pi) && !other_tree_holds(t, pi));
	}
	for (bool grew = !t->group_only; grew;) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			if (member[i])
				continue;
			struct proc_info key = { .pid = all[i].ppid };
			const struct proc_info *parent = bsearch(&key, all, n, sizeof(*all), by_pid);
			if (parent && member[parent - all])
				member[i] = grew = true;
		}
	}
}

/* Remembers pi as a member of t outside its cgroup (by pid and start time). */
static void remember_escapee(struct proctree *t, const struct proc_info *pi)
{
	if (is_escapee(t, pi))
		return;
	t->escaped = xrealloc(t->escaped, (t->nescaped + 1) * sizeof(*t->escaped));
	t->escaped[t->nescaped].pid = pi->pid;
	t->escaped[t->nescaped].start = pi->start;
	t->nescaped++;
}

/*
 * Sends sig to the live members (in cgroup mode, SIGKILL goes through the
 * cgroup, and to each member outside it); how many there were.
 */
static int tree_visit(struct proctree *t, int sig, struct strbuf *who)
{
	struct proc_info *all;
	size_t n;
	if (procgroup_list(&all, &n) < 0)
		return t->cgroup ? cg_count(t->cgroup, who) : 0;
	pid_t *cg = NULL;
	size_t ncg = 0;
	/* Read after the list: a member forked meanwhile is in cg, not in all. */
	if (t->cgroup) {
		cg_pids(t->cgroup, &cg, &ncg);
		if (ncg)
			qsort(cg, ncg, sizeof(*cg), pid_cmp);
	}
	qsort(all, n, sizeof(*all), by_pid);
	bool *member = xcalloc(n + 1, sizeof(*member));
	tree_members(t, all, n, cg, ncg, member);
	int live = 0;
	for (size_t i = 0; i < n; i++) {
		if (!member[i] || all[i].state == 'Z' || all[i].state == 'X')
			continue;
		bool outside = t->cgroup &&
			       !(ncg && bsearch(&all[i].pid, cg, ncg, sizeof(*cg), pid_cmp));
		if (outside)
			remember_escapee(t, &all[i]);
		live++;
		if (who)
			strbuf_addf(who, "%s%s(%d)", who->len ? ", " : "", all[i].comm,
				    (int)all[i].pid);
		if (sig && (outside || !t->cgroup || sig != SIGKILL))
			kill(all[i].pid, sig);
	}
	/* The cgroup's members not in the list (forked after it was read). */
	for (size_t i = 0; i < ncg; i++) {
		struct proc_info key = { .pid = cg[i] }, pi;
		if (bsearch(&key, all, n, sizeof(*all), by_pid) || procgroup_info(cg[i], &pi) < 0 ||
		    pi.state == 'Z' || pi.state == 'X')
			continue;
		live++;
		if (who)
			strbuf_addf(who, "%s%s(%d)", who->len ? ", " : "", pi.comm, (int)pi.pid);
		if (sig && sig != SIGKILL)
			kill(pi.pid, sig);
	}
	if (sig == SIGKILL && t->cgroup)
		cg_kill(t->cgroup);
	if (sig && !t->cgroup && t->pgid > 0)
		kill(-t->pgid, sig);
	free(member);
	free(all);
	free(cg);
	return live;
}

/*
 * Reaps the zombies reparented to us (we are a subreaper) that no live
 * tree's owner waits for: what t (being ended) and ended trees left.
 * Processes our own code forks in our process group are never touched.
 */
static void reap_strays(const struct proctree *t)
{
	struct proc_info *all;
	size_t n;
	if (procgroup_list(&all, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (all[i].state == 'Z' && stray_child(&all[i]) && !is_child(t, all[i].pid) &&
		    !other_tree_holds(t, &all[i]))
			waitpid(all[i].pid, NULL, WNOHANG);
	free(all);
}

static void tree_register(struct proctree *t)
{
	live_trees = xrealloc(live_trees, (nlive + 1) * sizeof(*live_trees));
	live_trees[nlive++] = t;
	t->live = true;
}

int proctree_init(struct proctree *t, struct ta_err *err)
{
	memset(t, 0, sizeof(*t));
	t->procs_fd = -1;
	/* Orphans come to us, not to an init that may never reap them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (cg_create(&t->cgroup) == 0) {
		struct strbuf p = STRBUF_INIT;
		strbuf_addf(&p, "%s/cgroup.procs", t->cgroup);
		t->procs_fd = open(p.buf, O_WRONLY | O_CLOEXEC);
		strbuf_release(&p);
		if (t->procs_fd < 0) {
			int e = errno;
			rmdir(t->cgroup);
			err_set(err, EXIT_FAILURE_RUN, "cannot open %s/cgroup.procs: %s",
				t->cgroup, strerror(e));
			free(t->cgroup);
			t->cgroup = NULL;
			return -1;
		}
	}
	tree_register(t);
	return 0;
}

void proctree_init_group(struct proctree *t)
{
	memset(t, 0, sizeof(*t));
	t->procs_fd = -1;
	t->group_only = true;
	tree_register(t);
}

int proctree_child_join(const struct proctree *t, pid_t pgid)
{
	setpgid(0, pgid);
	if (t->procs_fd >= 0 && write(t->procs_fd, "0", 1) != 1)
		return -1;
	return 0;
}

void proctree_add(struct proctree *t, pid_t pid)
{
	/* Also from here, so the group exists whichever side runs first (the
	 * child sets it too; EACCES here only means it already exec'd). */
	setpgid(pid, t->pgid ? t->pgid : pid);
	if (!t->pgid) {
		t->pgid = pid;
		t->start = procgroup_start_time(pid);
	}
	t->children = xrealloc(t->children, (t->nchildren + 1) * sizeof(*t->children));
	t->children[t->nchildren++] = pid;
}

int proctree_count(struct proctree *t, struct strbuf *who)
{
	if (!t->live)
		return 0;
	return tree_visit(t, 0, who);
}

void proctree_signal(struct proctree *t, int sig)
{
	if (t->live)
		tree_visit(t, sig, NULL);
}

bool proctree_wait_empty(struct proctree *t, int ms)
{
	for (uint64_t t0 = clock_ns();; mono_sleep_ms(10)) {
		if (proctree_count(t, NULL) == 0)
			return true;
		if (elapsed_ms(t0, ms))
			return false;
	}
}

int proctree_end(struct proctree *t, int wait_ms, struct strbuf *who)
{
	if (!t->live)
		return 0;
	int found = proctree_count(t, who);
	if (t->procs_fd >= 0)
		close(t->procs_fd);
	t->procs_fd = -1;
	bool gone;
	for (uint64_t t0 = clock_ns();; mono_sleep_ms(10)) {
		tree_visit(t, SIGKILL, NULL);	/* again: what forked meanwhile */
		if (tree_visit(t, 0, NULL) == 0 && (!t->cgroup || cg_remove(t->cgroup))) {
			gone = true;
			break;
		}
		if (elapsed_ms(t0, wait_ms)) {
			gone = false;
			break;
		}
	}
	reap_strays(t);
	return gone ? found : -1;
}

void proctree_release(struct proctree *t)
{
	if (!t->live)
		return;
	for (size_t i = 0; i < nlive; i++) {
		if (live_trees[i] == t) {
			live_trees[i] = live_trees[--nlive];
			break;
		}
	}
	if (t->procs_fd >= 0)
		close(t->procs_fd);
	free(t->cgroup);
	free(t->children);
	free(t->escaped);
	memset(t, 0, sizeof(*t));
	t->procs_fd = -1;
}

int proctree_end_cgroup(const char *path, int wait_ms, struct strbuf *who)
{
	struct stat st;
	if (!cg_ours(path) || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	int found = cg_count(path, who);
	return cg_end(path, wait_ms) ? found : -1;
}
