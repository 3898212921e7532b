/* proctree: containing what a started command runs; see proctree.h. */
#include "proctree.h"

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

/* What this process found out about the host, once. */
static struct {
	bool paths_known;	/* mount and base looked up */
	bool probed;		/* whether a process can join a cgroup of ours: known */
	bool cgroup;		/* trees are cgroups */
	char *mount;		/* the cgroup2 mount point */
	char *base;		/* our own cgroup's directory: trees go under it */
	unsigned seq;
	enum proctree_force forced;
} host;

/* The trees between init and release: what is whose in process group mode. */
static struct proctree **live_trees;
static size_t nlive;

void proctree_force_mode(enum proctree_force f)
{
	host.forced = f;
	free(host.mount);
	free(host.base);
	host.mount = host.base = NULL;
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

/* The pids in dir's cgroup.procs; -1 when it cannot be read (gone). */
static int cg_pids(const char *dir, pid_t **pids, size_t *n)
{
	struct strbuf p = STRBUF_INIT, sb = STRBUF_INIT;
	strbuf_addf(&p, "%s/cgroup.procs", dir);
	*pids = NULL;
	*n = 0;
	int rc = strbuf_read_file(&sb, p.buf);
	size_t cap = 0;
	for (char *s = sb.buf; rc == 0 && s && *s;) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*pids = xrealloc(*pids, cap * sizeof(**pids));
		}
		(*pids)[(*n)++] = (pid_t)v;
		s = end + strspn(end, "\n");
	}
	strbuf_release(&p);
	strbuf_release(&sb);
	return rc;
}

/* Live members of the cgroup at dir, named in who. */
static int cg_count(const char *dir, struct strbuf *who)
{
	pid_t *pids;
	size_t n;
	if (cg_pids(dir, &pids, &n) < 0)
		return 0;
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
	if (cg_pids(dir, &pids, &n) < 0)
		return;
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

/*
 * SIGKILL to every member: cgroup.kill (Linux 5.14) in one step; before it,
 * freeze the cgroup so nothing forks while each member is killed, then thaw
 * (a frozen process still dies of SIGKILL once thawed or even frozen).
 */
static void cg_kill(const char *dir)
{
	if (host.forced != PROCTREE_NO_KILL_FILE && cg_write(dir, "cgroup.kill", "1") == 0)
		return;
	bool freeze = cg_write(dir, "cgroup.freeze", "1") == 0;
	for (int waited = 0; freeze && !cg_frozen(dir) && waited < 1000; waited += 5)
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

/* Kills the cgroup at dir, waits up to ms for it to be empty, removes it. */
static bool cg_end(const char *dir, int ms)
{
	cg_kill(dir);
	for (int waited = 0;; waited += 10) {
		if (cg_count(dir, NULL) == 0 && (rmdir(dir) == 0 || errno == ENOENT))
			return true;
		if (waited >= ms)
			return false;
		if (host.forced == PROCTREE_NO_KILL_FILE || waited % 500 == 490)
			cg_kill(dir);	/* no cgroup.kill: catch what forked meanwhile */
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
		if ((rc = mkdir(d.buf, 0755)) == 0 || errno != EEXIST)
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
			rmdir(d.buf);
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

/* Whether a live tree other than t holds pi by its own rules. */
static bool other_tree_holds(const struct proctree *t, const struct proc_info *pi)
{
	for (size_t i = 0; i < nlive; i++) {
		const struct proctree *u = live_trees[i];
		if (u != t && (is_child(u, pi->pid) || (u->pgid > 0 && pi->pgrp == u->pgid)))
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

/*
 * Process group mode: marks the members of t in all[] (sorted by pid): its
 * children, its group, the orphans reparented to us no other tree holds,
 * and every descendant of those.
 */
static void group_members(const struct proctree *t, struct proc_info *all, size_t n,
			  bool *member)
{
	for (size_t i = 0; i < n; i++) {
		const struct proc_info *pi = &all[i];
		member[i] = is_child(t, pi->pid) || (t->pgid > 0 && pi->pgrp == t->pgid) ||
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

/* Process group mode: sends sig to the live members; how many there were. */
static int group_visit(const struct proctree *t, int sig, struct strbuf *who)
{
	struct proc_info *all;
	size_t n;
	if (procgroup_list(&all, &n) < 0)
		return 0;
	qsort(all, n, sizeof(*all), by_pid);
	bool *member = xcalloc(n + 1, sizeof(*member));
	group_members(t, all, n, member);
	int live = 0;
	for (size_t i = 0; i < n; i++) {
		if (!member[i] || all[i].state == 'Z' || all[i].state == 'X')
			continue;
		live++;
		if (who)
			strbuf_addf(who, "%s%s(%d)", who->len ? ", " : "", all[i].comm,
				    (int)all[i].pid);
		if (sig)
			kill(all[i].pid, sig);
	}
	if (sig && t->pgid > 0)
		kill(-t->pgid, sig);
	free(member);
	free(all);
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
	return t->cgroup ? cg_count(t->cgroup, who) : group_visit(t, 0, who);
}

void proctree_signal(struct proctree *t, int sig)
{
	if (!t->live)
		return;
	if (t->cgroup && sig == SIGKILL)
		cg_kill(t->cgroup);
	else if (t->cgroup)
		cg_signal_each(t->cgroup, sig);
	else
		group_visit(t, sig, NULL);
}

bool proctree_wait_empty(struct proctree *t, int ms)
{
	for (int waited = 0;; waited += 10) {
		if (proctree_count(t, NULL) == 0)
			return true;
		if (waited >= ms)
			return false;
		mono_sleep_ms(10);
	}
}

int proctree_end(struct proctree *t, int wait_ms, struct strbuf *who)
{
	if (!t->live)
		return 0;
	int found = proctree_count(t, who);
	bool gone;
	if (t->cgroup) {
		if (t->procs_fd >= 0)
			close(t->procs_fd);
		t->procs_fd = -1;
		gone = cg_end(t->cgroup, wait_ms);
	} else {
		group_visit(t, SIGKILL, NULL);
		gone = true;
		for (int waited = 0; group_visit(t, 0, NULL) > 0; waited += 10) {
			if (waited >= wait_ms) {
				gone = false;
				break;
			}
			group_visit(t, SIGKILL, NULL);	/* what forked meanwhile */
			mono_sleep_ms(10);
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
