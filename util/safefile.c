/* safefile: creating and replacing files safely; see safefile.h. */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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

/* Writes all of data at offset off (< 0: at the descriptor's position); 0 or -1 (errno). */
static int write_all(int fd, const char *p, size_t len, off_t off)
{
	while (len) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		if (off >= 0)
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

/* The file is replaced through a fresh temporary file and rename(). */
/*
 * An unnamed file in path's directory (O_TMPFILE), -1 where the file
 * system has none (errno EOPNOTSUPP, EISDIR or EINVAL: the caller names a
 * temporary instead).  Nothing of it is in the directory until it is
 * linked, so a process killed while writing it leaves nothing behind.
 */
static int open_unnamed(const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	struct strbuf dir = STRBUF_INIT;
	if (!slash)
		strbuf_addstr(&dir, ".");
	else if (slash == path)
		strbuf_addstr(&dir, "/");
	else
		strbuf_add(&dir, path, (size_t)(slash - path));
	int fd;
	do
		fd = open(strbuf_str(&dir), O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
	while (fd < 0 && errno == EINTR);
	strbuf_release(&dir);
	return fd;
}

/* Gives the unnamed file fd the name tmp (which must not exist); 0 or -1 (errno). */
static int link_unnamed(int fd, const char *tmp)
{
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW);
}

/*
 * Replaces path whole: the data is written and synced in an unnamed file
 * of path's directory, which only then gets a temporary name and is
 * renamed over path, so a writer killed at any point (a controller given
 * SIGTERM and then SIGKILL while it restores knobs) leaves either the old
 * file or the new, and at most for the two calls between link and rename
 * a temporary.  Where the file system has no unnamed files, the data goes
 * into the named temporary from the start.
 */
static int replace_regular(const char *path, const void *data, size_t len, mode_t mode,
			   struct ta_err *err)
{
	struct strbuf tmp = STRBUF_INIT;
	int fd = open_unnamed(path, mode);
	bool unnamed = fd >= 0;
	int rc = 0, e = 0;
	if (unnamed) {
		/* O_TMPFILE's mode is masked by the umask as open()'s is. */
		if (write_all(fd, data, len, 0) < 0 || fsync(fd) < 0) {
			rc = -1;
			e = errno;
		}
	}
	/* A name someone planted is skipped, not opened: try a few others. */
	for (int attempt = 0; rc == 0 && attempt < 16; attempt++) {
		temp_name(path, &tmp);
		if (unnamed) {
			if (link_unnamed(fd, strbuf_str(&tmp)) == 0)
				break;
		} else {
			fd = safefile_create(strbuf_str(&tmp), mode, err);
			if (fd >= 0)
				break;
		}
		if (errno != EEXIST || attempt == 15) {
			e = errno;
			if (fd >= 0)
				close(fd);
			err_set(err, EXIT_FAILURE_RUN, "cannot write %s: creating a temporary file "
				"in its directory: %s", path, strerror(e));
			strbuf_release(&tmp);
			errno = e;
			return -1;
		}
	}
	if (rc == 0 && !unnamed && (write_all(fd, data, len, 0) < 0 || fsync(fd) < 0)) {
		rc = -1;
		e = errno;
	}
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		e = errno;
	}
	if (rc == 0 && rename(strbuf_str(&tmp), path) < 0) {
		rc = -1;
		e = errno;
	}
	if (rc < 0) {
		if (tmp.len)
			unlink(strbuf_str(&tmp));
		err_set(err, EXIT_FAILURE_RUN, "cannot write %s: %s", path, strerror(e));
		errno = e;
	}
	strbuf_release(&tmp);
	return rc;
}

/* Writes into a descriptor we hold (stdout, stderr); never replaces anything. */
static int write_into_fd(const char *path, int fd, const void *data, size_t len,
			 struct ta_err *err)
{
	if (write_all(fd, data, len, -1) < 0)
		return err_set(err, EXIT_FAILURE_RUN, "cannot write %s: %s", path,
			       strerror(errno));
	return 0;
}

/* Writes into the character device path names (/dev/null, a terminal): opened, never made. */
static int write_into_device(const char *path, const void *data, size_t len, struct ta_err *err)
{
	int fd;
	do
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return err_set(err, EXIT_FAILURE_RUN, "cannot write %s: %s", path,
			       strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
		close(fd);
		return err_set(err, EXIT_FAILURE_RUN, "cannot write %s: it changed while we "
			       "opened it (no longer a character device)", path);
	}
	int rc = write_into_fd(path, fd, data, len, err);
	if (close(fd) < 0 && rc == 0)
		rc = err_set(err, EXIT_FAILURE_RUN, "cannot write %s: %s", path, strerror(errno));
	return rc;
}

const char *safefile_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO (named pipe)";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISCHR(m))
		return "a character device";
	return "not a regular file";
}

/* Whether st is the very file our stdout or stderr is; that descriptor then. */
static int std_stream_of(const struct stat *st)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat fs;
		if (fstat(fd, &fs) == 0 && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

int safefile_replace(const char *path, const void *data, size_t len, mode_t mode,
		     struct ta_err *err)
{
	struct stat lst, st;
	if (lstat(path, &lst) < 0) {
		if (errno != ENOENT)
			return err_set(err, err_open_code(errno), "cannot write %s: %s", path,
				       strerror(errno));
		return replace_regular(path, data, len, mode, err);
	}
	if (S_ISREG(lst.st_mode))
		return replace_regular(path, data, len, mode, err);
	if (S_ISLNK(lst.st_mode)) {
		/* What it leads to decides: our own stdout/stderr (/dev/stdout) or
		 * a device is written into; a file or nothing, the link replaced. */
		if (stat(path, &st) < 0)
			return replace_regular(path, data, len, mode, err);
		int fd = std_stream_of(&st);
		if (fd >= 0)
			return write_into_fd(path, fd, data, len, err);
		if (S_ISREG(st.st_mode))
			return replace_regular(path, data, len, mode, err);
		/* A device only through a link root or we made, never one planted. */
		if (S_ISCHR(st.st_mode) && lst.st_uid != 0 && lst.st_uid != geteuid())
			return err_set(err, EXIT_BAD_INPUT, "refusing to write %s: it is a "
				       "symbolic link of another user to a device", path);
		lst = st;
	}
	if (S_ISCHR(lst.st_mode))
		return write_into_device(path, data, len, err);
	return err_set(err, EXIT_BAD_INPUT, "refusing to write %s: it is %s, not a file; name "
		       "a regular file (or /dev/stdout)", path, safefile_kind(lst.st_mode));
}

/*
 * What is not a regular file (a symlink aside: O_NOFOLLOW names it) is
 * refused before it is opened, since opening a device can act on it (a tape
 * rewinds, a terminal becomes ours); the fstat() after the open catches a
 * swap in between.
 */
int safefile_open_existing(const char *path, struct stat *st, struct ta_err *err)
{
	struct stat lst;
	if (lstat(path, &lst) == 0 && !S_ISREG(lst.st_mode) && !S_ISLNK(lst.st_mode)) {
		err_set(err, EXIT_FAILURE_RUN, "refusing to use %s: it is %s, not a file", path,
			safefile_kind(lst.st_mode));
		errno = EPERM;
		return -1;
	}
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

int safefile_open_input(const char *path, const char **why)
{
	static char kind[64];
	struct stat st;
	/* Looked at before it is opened: opening a device can do things. */
	if (stat(path, &st) < 0) {
		*why = strerror(errno);
		return -1;
	}
	int fd = -1;
	if (S_ISREG(st.st_mode)) {
		do
			fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd < 0) {
			*why = strerror(errno);
			return -1;
		}
		if (fstat(fd, &st) < 0)
			st.st_mode = 0;
	}
	if (!S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);	/* swapped since we looked */
		snprintf(kind, sizeof(kind), "it is %s, not a file", safefile_kind(st.st_mode));
		*why = kind;
		errno = EISDIR;
		return -1;
	}
	/* O_NONBLOCK only kept a FIFO swapped in from blocking the open. */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int safefile_read_input(const char *path, const char *what, size_t max_bytes,
			struct strbuf *sb, struct ta_err *err)
{
	const char *why;
	int fd = safefile_open_input(path, &why);
	if (fd < 0)
		return err_set(err, EXIT_BAD_INPUT, "%s: cannot read %s: %s", path, what, why);
	for (;;) {
		strbuf_grow(sb, 65536);
		size_t room = sb->alloc - sb->len - 1;
		ssize_t n = read(fd, sb->buf + sb->len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			close(fd);
			return err_set(err, EXIT_BAD_INPUT, "%s: cannot read %s: %s", path,
				       what, strerror(saved));
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
		if (sb->len > max_bytes) {
			close(fd);
			return err_set(err, EXIT_BAD_INPUT, "%s: %s is larger than %zu bytes; "
				       "is this the right file?", path, what, max_bytes);
		}
	}
	close(fd);
	return 0;
}
