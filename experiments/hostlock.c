/* hostlock: the per-host controller lock; see hostlock.h. */
#include "hostlock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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

const char *hostlock_path(void)
{
	const char *env = getenv("TOPOADVISOR_LOCK");
	return env && *env ? env : HOSTLOCK_DEFAULT_PATH;
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
	/* Every way this fails has the same way out. */
	size_t len = strlen(err->msg);
	snprintf(err->msg + len, sizeof(err->msg) - len, " (%sset TOPOADVISOR_LOCK to a "
		 "writable path of its own, or remove that file if it is a stale lock)",
		 geteuid() != 0 && !strcmp(path, HOSTLOCK_DEFAULT_PATH)
		 ? "driving a host needs root: run as root, or " : "");
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

int hostlock_acquire(struct hostlock *lk, const char *path, struct ta_err *err)
{
	memset(lk, 0, sizeof(*lk));
	lk->fd = -1;
	if (!path)
		path = hostlock_path();
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

int hostlock_held(void)
{
	return held != NULL;
}

void hostlock_release(struct hostlock *lk)
{
	if (lk->fd >= 0) {
		/* Groups still recorded stay in the file for the next holder. */
		close(lk->fd);
	}
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
