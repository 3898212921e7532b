/* safefile: creating and replacing files safely; see safefile.h. */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "strbuf.h"

int safefile_create(const char *path, mode_t mode, struct ta_err *err)
{
	int fd;
	do
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			  mode);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		int e = errno;
		err_set(err, EXIT_FAILURE_RUN, "cannot create %s: %s%s", path, strerror(e),
			e == EEXIST ? " (something else is already there under that name)" : "");
		errno = e;
	}
	return fd;
}

static int write_all(int fd, const char *p, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int safefile_pwrite_all(int fd, const void *data, size_t len)
{
	if (write_all(fd, data, len, 0) < 0)
		return -1;
	return ftruncate(fd, (off_t)len);
}

/* "DIR/.NAME.XXXXXX" next to path, with random letters. */
static void temp_name(const char *path, struct strbuf *out)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
		/* Unpredictable enough: a taken name only costs another try. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		unsigned long long v = (unsigned long long)ts.tv_nsec ^
			((unsigned long long)getpid() << 32) ^ (unsigned long long)ts.tv_sec;
		memcpy(rnd, &v, sizeof(rnd));
	}
	const char *slash = strrchr(path, '/');
	strbuf_reset(out);
	if (slash)
		strbuf_add(out, path, (size_t)(slash - path + 1));
	strbuf_addf(out, ".%s.", slash ? slash + 1 : path);
	for (size_t i = 0; i < sizeof(rnd); i++)
		strbuf_addch(out, letters[rnd[i] % (sizeof(letters) - 1)]);
}

int safefile_replace(const char *path, const void *data, size_t len, mode_t mode,
		     struct ta_err *err)
{
	struct strbuf tmp = STRBUF_INIT;
	int fd = -1;
	/* A name someone planted is skipped, not opened: try a few others. */
	for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
		temp_name(path, &tmp);
		fd = safefile_create(strbuf_str(&tmp), mode, err);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err_set(err, EXIT_FAILURE_RUN, "cannot write %s: creating a temporary file "
			"in its directory: %s", path, strerror(errno));
		strbuf_release(&tmp);
		return -1;
	}
	int rc = write_all(fd, data, len, 0) < 0 || fsync(fd) < 0 ? -1 : 0;
	int e = errno;
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc == 0 && rename(strbuf_str(&tmp), path) < 0) {
		rc = -1;
		e = errno;
	}
	if (rc < 0) {
		unlink(strbuf_str(&tmp));
		err_set(err, EXIT_FAILURE_RUN, "cannot write %s: %s", path, strerror(e));
	}
	strbuf_release(&tmp);
	return rc;
}

int safefile_open_existing(const char *path, struct stat *st, struct ta_err *err)
{
	int fd;
	do
		fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		int e = errno;
		err_set(err, EXIT_FAILURE_RUN, "cannot open %s: %s", path,
			e == ELOOP ? "it is a symbolic link" : strerror(e));
		errno = e;
		return -1;
	}
	const char *why = NULL;
	if (fstat(fd, st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st->st_mode))
		why = "it is not a regular file";
	else if (st->st_nlink != 1)
		why = "it has other hard links";
	if (why) {
		close(fd);
		err_set(err, EXIT_FAILURE_RUN, "refusing to use %s: %s", path, why);
		errno = EPERM;
		return -1;
	}
	/* O_NONBLOCK only kept a FIFO from blocking the open. */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}
