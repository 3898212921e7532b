/* hostlock: the per-host controller lock; see hostlock.h. */
#include "hostlock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../collectors/live.h"
#include "../util/procgroup.h"
#include "../util/proctree.h"
#include "../util/safefile.h"
#include "../util/warn.h"

#define LOCK_MAGIC "topoadvisor host lock\n"
#define LOCK_MAX_CONTENT 65536

/* A tree we run: its cgroup, or (no cgroup) its process group. */
struct tracked_tree {
	char *cgroup;
	pid_t pgid;
	unsigned long long start;
};

/* The lock this process holds (one per process) and the trees it runs. */
static struct hostlock *held;
static struct tracked_tree *trees;
static size_t ntrees;

const char *hostlock_dir(void)
{
	const char *env = getenv("TOPOADVISOR_LOCK");
	return env && *env ? env : HOSTLOCK_DEFAULT_DIR;
}

/*
 * The directory a lock protects, resolved: "/" for the real host (root
 * NULL, empty, or the same directory as "/"), else the fake root's real
 * path, with its identity in *st.
 */
static char *protected_dir(const char *root, struct stat *st, struct ta_err *err)
{
	struct stat slash;
	if (!root || !*root)
		root = "/";
	/* A per-node template (Slurm's %n): the directory that holds the roots. */
	char *tmpl = NULL;
	const char *n = strstr(root, "%n");
	if (n) {
		tmpl = xstrdup(root);
		char *slash_before = memrchr(tmpl, '/', (size_t)(n - root));
		if (!slash_before)
			strcpy(tmpl, ".");
		else if (slash_before == tmpl)
			tmpl[1] = '\0';
		else
			*slash_before = '\0';
		root = tmpl;
	}
	char *real = realpath(root, NULL);
	int bad = !real ? errno : stat(real, st) < 0 ? errno : S_ISDIR(st->st_mode) ? 0 : ENOTDIR;
	if (bad)
		err_set(err, EXIT_FAILURE_RUN, "cannot lock the host under %s: %s", root,
			strerror(bad));
	free(tmpl);
	if (bad) {
		free(real);
		return NULL;
	}
	if (stat("/", &slash) == 0 && slash.st_dev == st->st_dev && slash.st_ino == st->st_ino) {
		free(real);
		*st = slash;
		return xstrdup("/");
	}
	return real;
}

int hostlock_key(const char *root, struct strbuf *key, struct ta_err *err)
{
	struct stat st;
	char *dir = protected_dir(root, &st, err);
	if (!dir)
		return -1;
	strbuf_reset(key);
	if (!strcmp(dir, "/"))
		strbuf_addstr(key, "host");
	else
		strbuf_addf(key, "root-%x.%x-%llu", major(st.st_dev), minor(st.st_dev),
			    (unsigned long long)st.st_ino);
	free(dir);
	return 0;
}

int hostlock_path_for(const char *root, struct strbuf *path, struct ta_err *err)
{
	struct strbuf key = STRBUF_INIT;
	if (hostlock_key(root, &key, err) < 0) {
		strbuf_release(&key);
		return -1;
	}
	strbuf_reset(path);
	strbuf_addf(path, "%s/%s.lock", hostlock_dir(), strbuf_str(&key));
	strbuf_release(&key);
	return 0;
}

static int read_content(int fd, struct strbuf *sb)
{
	strbuf_reset(sb);
	strbuf_grow(sb, LOCK_MAX_CONTENT);
	ssize_t n = pread(fd, sb->buf, LOCK_MAX_CONTENT, 0);
	if (n < 0)
		return -1;
	sb->len = (size_t)n;
	sb->buf[n] = '\0';
	return 0;
}

/* Whether s is only a decimal number and a newline (what older builds wrote). */
static int legacy_pid_file(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++;
	return i > 0 && i + 1 == len && s[i] == '\n';
}

/* The holder's pid from the content, or 0 when it has none yet. */
static long holder_pid(const char *s)
{
	const char *p = strncmp(s, LOCK_MAGIC, strlen(LOCK_MAGIC)) ? s : s + strlen(LOCK_MAGIC);
	if (!strncmp(p, "pid ", 4))
		p += 4;
	char *end;
	long pid = strtol(p, &end, 10);
	return pid > 0 && end != p && (*end == '\n' || *end == '\0') ? pid : 0;
}

/*
 * Opens the lock file without ever truncating or following anything: a new
 * one is created exclusively, an existing one must be ours and a lock.
 */
static int lock_open(const char *path, struct strbuf *content, struct ta_err *err)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		struct stat st;
		int fd = safefile_open_existing(path, &st, err);
		if (fd < 0 && errno == ENOENT) {
			fd = safefile_create(path, 0600, err);
			if (fd < 0 && errno == EEXIST)
				continue;	/* another locker created it first */
			if (fd < 0)
				break;
			strbuf_reset(content);
			return fd;
		}
		if (fd < 0)
			break;
		const char *why = NULL;
		if (st.st_uid != geteuid())
			why = "it belongs to another user";
		else if (read_content(fd, content) < 0)
			why = strerror(errno);
		else if (content->len &&
			 strncmp(content->buf, LOCK_MAGIC, strlen(LOCK_MAGIC)) &&
			 !((st.st_mode & 07777) == 0600 && legacy_pid_file(content->buf,
									   content->len)))
			why = "it is not a topoadvisor lock file (it has other content)";
		if (!why)
			return fd;
		close(fd);
		err_set(err, EXIT_FAILURE_RUN, "refusing to use %s as the host lock: %s", path,
			why);
		break;
	}
	/* A lock file has one way out; a different path is none (hostlock.h). */
	size_t len = strlen(err->msg);
	snprintf(err->msg + len, sizeof(err->msg) - len, " (remove that file if it is a stale "
		 "lock; %s)", geteuid() != 0 && !strncmp(path, HOSTLOCK_DEFAULT_DIR "/",
							 strlen(HOSTLOCK_DEFAULT_DIR) + 1)
		 ? "driving a host needs root: run as root" : "the lock belongs to the host: "
		 "TOPOADVISOR_LOCK only relocates it, another one would not make the host "
		 "free");
	err->code = EXIT_FAILURE_RUN;
	return -1;
}

static ssize_t tracked_cgroup(const char *cgroup)
{
	for (size_t i = 0; i < ntrees; i++)
		if (trees[i].cgroup && !strcmp(trees[i].cgroup, cgroup))
			return (ssize_t)i;
	return -1;
}

/* Adds a tree to the list lock_write writes (once for a cgroup). */
static void track(const char *cgroup, pid_t pgid, unsigned long long start)
{
	if (cgroup && tracked_cgroup(cgroup) >= 0)
		return;
	trees = xrealloc(trees, (ntrees + 1) * sizeof(*trees));
	trees[ntrees++] = (struct tracked_tree){ cgroup ? xstrdup(cgroup) : NULL, pgid, start };
}

/* Ends the trees an earlier holder recorded in content and left running. */
static void end_leftovers(struct hostlock *lk, const char *content)
{
	for (const char *line = content; line && *line; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		int pgid;
		unsigned long long start;
		int n;
		if (!strncmp(line, "cgroup /", 8)) {
			char *path = xstrdup(line + 7);
			path[strcspn(path, "\n")] = '\0';
			n = proctree_end_cgroup(path, 5000, &lk->leftover_names);
			if (n < 0) {
				/* Still recorded, for whoever holds the lock next. */
				track(path, 0, 0);
				free(lk->survivor_cgroup);
				lk->survivor_cgroup = path;
			} else {
				free(path);
			}
		} else if (sscanf(line, "group %d %llu", &pgid, &start) == 2 && pgid > 1) {
			n = procgroup_end_leftover(pgid, start, 5000, &lk->leftover_names);
			if (n < 0) {
				track(NULL, pgid, start);
				lk->survivor_group = pgid;
			}
		} else {
			continue;
		}
		if (n > 0)
			lk->leftovers += n;
	}
}

/* Rewrites the held lock's content: header, our pid, the tracked trees. */
static void lock_write(struct hostlock *lk)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, LOCK_MAGIC "pid %ld\n", (long)getpid());
	for (size_t i = 0; i < ntrees; i++) {
		if (trees[i].cgroup)
			strbuf_addf(&sb, "cgroup %s\n", trees[i].cgroup);
		else
			strbuf_addf(&sb, "group %d %llu\n", (int)trees[i].pgid, trees[i].start);
	}
	if (safefile_pwrite_all(lk->fd, sb.buf, sb.len) < 0)
		warn_emit("cannot write to the host lock %s: %s", lk->path, strerror(errno));
	strbuf_release(&sb);
}

/*
 * proctree's recorder: a tree's cgroup is written into the lock before it
 * is made, and forgotten once it is removed, so a SIGKILL at any moment
 * leaves no cgroup the next holder cannot find.
 */
static void record_cgroup(const char *cgroup, bool made)
{
	ssize_t i = tracked_cgroup(cgroup);
	if (!held || made == (i >= 0))
		return;
	if (made) {
		track(cgroup, 0, 0);
	} else {
		free(trees[i].cgroup);
		trees[i] = trees[--ntrees];
	}
	lock_write(held);
}

/* Takes the lock file at path into lk (already cleared). */
static int acquire_file(struct hostlock *lk, const char *path, struct ta_err *err)
{
	struct strbuf content = STRBUF_INIT;
	int fd = lock_open(path, &content, err);
	if (fd < 0) {
		strbuf_release(&content);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		long pid = e == EWOULDBLOCK && read_content(fd, &content) == 0
			? holder_pid(content.buf) : 0;
		close(fd);
		strbuf_release(&content);
		if (e != EWOULDBLOCK)
			return err_set(err, EXIT_FAILURE_RUN, "cannot lock %s: %s", path,
				       strerror(e));
		char who[48] = "another process";
		if (pid)
			snprintf(who, sizeof(who), "process %ld", pid);
		return err_set(err, EXIT_FAILURE_RUN,
			       "this host is being driven by another topoadvisor (%s holds "
			       "%s); wait for it to finish, or stop it (it restores the host "
			       "on SIGINT/SIGTERM) and try again", who, path);
	}
	lk->fd = fd;
	lk->path = xstrdup(path);
	for (size_t i = 0; i < ntrees; i++)
		free(trees[i].cgroup);
	free(trees);
	trees = NULL;
	ntrees = 0;
	/* What the last holder wrote, read again now that it cannot change. */
	if (read_content(fd, &content) == 0)
		end_leftovers(lk, content.buf);
	strbuf_release(&content);
	/* Its trace instances are named for a pid that is gone. */
	if (geteuid() == 0)
		lk->stale_instances = live_cleanup_stale();
	held = lk;
	lock_write(lk);
	proctree_set_recorder(record_cgroup);
	return 0;
}

static int lock_dir_ready(const char *dir, struct ta_err *err);

int hostlock_acquire(struct hostlock *lk, const char *path, struct ta_err *err)
{
	memset(lk, 0, sizeof(*lk));
	lk->fd = -1;
	if (path)
		return acquire_file(lk, path, err);
	if (lock_dir_ready(hostlock_dir(), err) < 0)
		return -1;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/host.lock", hostlock_dir());
	int rc = acquire_file(lk, strbuf_str(&sb), err);
	strbuf_release(&sb);
	return rc;
}

/*
 * Makes sure dir is a directory only we (or root) can write, creating it
 * (mode 0700) when it is missing.
 */
static int lock_dir_ready(const char *dir, struct ta_err *err)
{
	struct stat st;
	if (lstat(dir, &st) < 0 && errno == ENOENT && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		if (geteuid() != 0 && (e == EACCES || e == EPERM || e == EROFS))
			return err_set(err, EXIT_FAILURE_RUN, "cannot create %s, where the host locks "
				       "are kept: %s (driving the real host needs root: run as root; "
				       "a sweep on a fake root given with --root may keep its lock in "
				       "a directory of yours: set TOPOADVISOR_LOCK to it — the lock "
				       "stays one per root whatever the directory)", dir, strerror(e));
		return err_set(err, EXIT_FAILURE_RUN, "cannot create %s, where the host locks are "
			       "kept: %s", dir, strerror(e));
	}
	if (lstat(dir, &st) < 0)
		return err_set(err, EXIT_FAILURE_RUN, "%s, where the host locks are kept: %s", dir,
			       strerror(errno));
	const char *why = !S_ISDIR(st.st_mode) ? "it is not a directory (TOPOADVISOR_LOCK names "
					       "the directory the host locks are kept in)"
		: st.st_uid != geteuid() && st.st_uid != 0 ? "it belongs to another user"
		: st.st_mode & 022 && !(st.st_mode & S_ISVTX) ? "others may write into it"
		: NULL;
	if (why)
		return err_set(err, EXIT_FAILURE_RUN, "refusing to keep the host locks in %s: %s",
			       dir, why);
	return 0;
}

/*
 * The process (not us) holding a flock on the file dev/ino, from
 * /proc/locks; 0 when none is found.
 */
static long flock_holder(dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	char line[256];
	long found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char type[16];
		long pid;
		unsigned maj, min;
		unsigned long long i;
		/* "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; blocked waiters
		 * ("1: -> FLOCK ...") do not match. */
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", type, &pid, &maj, &min,
			   &i) == 5 && !strcmp(type, "FLOCK") && pid != (long)getpid() &&
		    maj == major(dev) && min == minor(dev) && i == (unsigned long long)ino)
			found = pid;
	}
	fclose(f);
	return found;
}

int hostlock_acquire_host(struct hostlock *lk, const char *root, const char *path,
			  struct ta_err *err)
{
	memset(lk, 0, sizeof(*lk));
	lk->fd = -1;
	struct stat st;
	char *dir = protected_dir(root, &st, err);
	if (!dir)
		return -1;
	bool real = !strcmp(dir, "/");
	/* The real host's anchor is the default lock directory (root's alone);
	 * a fake root's is the root itself. */
	const char *anchor = real ? HOSTLOCK_DEFAULT_DIR : dir;
	struct strbuf derived = STRBUF_INIT;
	int afd = -1;
	if (real && lock_dir_ready(HOSTLOCK_DEFAULT_DIR, err) < 0)
		goto fail;
	afd = open(anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (afd < 0) {
		err_set(err, EXIT_FAILURE_RUN, "cannot lock %s: %s%s", anchor, strerror(errno),
			real && geteuid() != 0 ? " (driving the real host needs root: run as root)"
			: "");
		goto fail;
	}
	if (flock(afd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		struct stat ast;
		long pid = e == EWOULDBLOCK && fstat(afd, &ast) == 0
			? flock_holder(ast.st_dev, ast.st_ino) : 0;
		if (e != EWOULDBLOCK) {
			err_set(err, EXIT_FAILURE_RUN, "cannot lock %s: %s", anchor, strerror(e));
			goto fail;
		}
		char who[48] = "another process";
		if (pid)
			snprintf(who, sizeof(who), "process %ld", pid);
		err_set(err, EXIT_FAILURE_RUN, "%s%s is being driven by another topoadvisor (%s "
			"holds its lock on %s, whatever TOPOADVISOR_LOCK says); wait for it to "
			"finish, or stop it (it restores the host on SIGINT/SIGTERM) and try again",
			real ? "this host" : "the fake root ", real ? "" : dir, who, anchor);
		goto fail;
	}
	if (!path) {
		struct strbuf key = STRBUF_INIT;
		if (lock_dir_ready(hostlock_dir(), err) < 0 || hostlock_key(dir, &key, err) < 0) {
			strbuf_release(&key);
			goto fail;
		}
		strbuf_addf(&derived, "%s/%s.lock", hostlock_dir(), strbuf_str(&key));
		strbuf_release(&key);
		path = strbuf_str(&derived);
	}
	if (acquire_file(lk, path, err) < 0)
		goto fail;
	lk->anchor_fd = afd;
	lk->anchored = true;
	strbuf_release(&derived);
	free(dir);
	return 0;
fail:
	if (afd >= 0)
		close(afd);
	strbuf_release(&derived);
	free(dir);
	return -1;
}

int hostlock_held(void)
{
	return held != NULL;
}

void hostlock_leave_host(void)
{
	if (held && held->anchored) {
		close(held->anchor_fd);
		held->anchor_fd = -1;
		held->anchored = false;
	}
}

void hostlock_release(struct hostlock *lk)
{
	if (lk->fd >= 0) {
		/* Groups still recorded stay in the file for the next holder. */
		close(lk->fd);
	}
	if (lk->anchored)
		close(lk->anchor_fd);
	lk->anchored = false;
	if (held == lk) {
		held = NULL;
		proctree_set_recorder(NULL);
	}
	lk->fd = -1;
	free(lk->path);
	lk->path = NULL;
	strbuf_release(&lk->leftover_names);
	free(lk->survivor_cgroup);
	lk->survivor_cgroup = NULL;
}

void hostlock_track_tree(const struct proctree *t)
{
	if (!held || (!t->cgroup && t->pgid <= 1) || (t->cgroup && tracked_cgroup(t->cgroup) >= 0))
		return;
	track(t->cgroup, t->pgid, t->start);
	lock_write(held);
}

void hostlock_untrack_tree(const struct proctree *t)
{
	for (size_t i = 0; i < ntrees; i++) {
		/* By what the file says, not by address: a tree that survived
		 * SIGKILL stays recorded after its struct is gone. */
		if (t->cgroup ? !trees[i].cgroup || strcmp(trees[i].cgroup, t->cgroup)
			      : trees[i].cgroup || trees[i].pgid != t->pgid ||
				trees[i].start != t->start)
			continue;
		free(trees[i].cgroup);
		trees[i] = trees[--ntrees];
		if (held)
			lock_write(held);
		return;
	}
}
