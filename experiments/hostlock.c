/* hostlock: the per-host controller lock; see hostlock.h. */
#include "hostlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/strbuf.h"

const char *hostlock_path(void)
{
	const char *env = getenv("TOPOADVISOR_LOCK");
	return env && *env ? env : HOSTLOCK_DEFAULT_PATH;
}

/* The pid the holder wrote, or 0 when the file has none yet. */
static long holder_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	return pid > 0 && (*end == '\n' || *end == '\0') ? pid : 0;
}

int hostlock_acquire(struct hostlock *lk, const char *path, struct ta_err *err)
{
	lk->fd = -1;
	lk->path = NULL;
	if (!path)
		path = hostlock_path();
	/* O_NOFOLLOW: /run is root's, but a planted symlink must not make us
	 * truncate another file when the lock lives somewhere shared. */
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return err_set(err, EXIT_FAILURE_RUN,
			       "cannot open the host lock %s: %s (set TOPOADVISOR_LOCK to a "
			       "writable path)", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, EXIT_FAILURE_RUN, "host lock %s is not a regular file",
			       path);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		long pid = e == EWOULDBLOCK ? holder_pid(fd) : 0;
		close(fd);
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
	/* A lock file left by another user keeps its mode: make it ours. */
	if ((st.st_mode & 07777) != 0600)
		fchmod(fd, 0600);
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)len, 0) != len) {
		int e = errno;
		close(fd);
		return err_set(err, EXIT_FAILURE_RUN, "writing our pid into %s: %s", path,
			       strerror(e));
	}
	lk->fd = fd;
	lk->path = xstrdup(path);
	return 0;
}

void hostlock_release(struct hostlock *lk)
{
	/* The pid stays in the file: it is read only while a holder exists,
	 * and every holder writes its own first. */
	if (lk->fd >= 0)
		close(lk->fd);
	lk->fd = -1;
	free(lk->path);
	lk->path = NULL;
}
