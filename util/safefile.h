/*
 * safefile: the one way this tool creates files.
 *
 * Every file topoadvisor writes (the HTML report, a new database, the host
 * lock) is created here, so that a name planted in a shared directory (a
 * symlink, a hard link, a FIFO) can never make it write somewhere else:
 *
 *   safefile_create()  a new file: O_CREAT|O_EXCL|O_NOFOLLOW, never opens
 *                      anything that already exists under that name;
 *   safefile_replace() a whole file's content (the report): written to a
 *                      fresh temporary file in the same directory (made by
 *                      safefile_create), then renamed over path, so readers
 *                      see the old or the new content and a symlink at path
 *                      is replaced, never followed.  A name that is a
 *                      character device (/dev/null, a terminal), or a link
 *                      root or we own to one, or that leads to our own
 *                      stdout/stderr (/dev/stdout, even a pipe) is written
 *                      into and never replaced; a directory, FIFO, socket
 *                      or block device is refused (exit 2);
 *   safefile_open_existing() an existing file to update in place: refuses a
 *                      symlink, anything not a regular file (without opening
 *                      it), and a file with more than one hard link (whose
 *                      other names we would change too).
 *
 * Modes are passed to open() as given, so the umask still applies: 0600 for
 * private files (database, lock), 0644 for what is meant to be shared.
 */
#ifndef TA_SAFEFILE_H
#define TA_SAFEFILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "err.h"
#include "strbuf.h"

/*
 * Creates path, which must not exist, open for writing (O_RDWR, close-on-
 * exec).  Returns the descriptor, or -1 with err set (EEXIST among others:
 * errno is kept for callers that want to tell it apart).
 */
int safefile_create(const char *path, mode_t mode, struct ta_err *err);

/*
 * Replaces the content of path with data[0..len) atomically (temporary file
 * in path's directory + fsync + rename), or writes it into the character
 * device or standard stream path names (see above).  Returns 0, or -1 with
 * err set and nothing left behind.
 */
int safefile_replace(const char *path, const void *data, size_t len, mode_t mode,
		     struct ta_err *err);

/*
 * Opens an existing path (O_RDWR, no O_CREAT, no O_TRUNC, O_NOFOLLOW) and
 * fills *st.  Fails for a symlink, a non-regular file (a device, FIFO,
 * socket or directory is named as such and never opened) or one with other
 * hard links; errno stays ENOENT when path does not exist.
 */
int safefile_open_existing(const char *path, struct stat *st, struct ta_err *err);

/*
 * Opens a file the user named as input (a config, a domain template, a
 * database) read-only, never blocking: anything but a regular file (a FIFO,
 * a device, a socket, a directory) is refused without being opened, *why
 * then saying what it is ("it is a FIFO (named pipe), not a file"), as it
 * says strerror() for other failures.  Returns the descriptor (close-on-
 * exec) or -1 (errno set; EISDIR for a file of the wrong kind).
 */
int safefile_open_input(const char *path, const char **why);

/*
 * Reads such a file whole into sb, refusing one larger than max_bytes (read
 * at most max_bytes + 1, so a huge file is refused quickly).  `what` names
 * it in messages ("the config"); every failure is EXIT_BAD_INPUT.
 */
int safefile_read_input(const char *path, const char *what, size_t max_bytes,
			struct strbuf *sb, struct ta_err *err);

/* "a directory", "a FIFO (named pipe)", "a socket" … for a file's st_mode. */
const char *safefile_kind(mode_t mode);

/* Writes all of data at offset 0 and truncates the file to len; 0 or -1 (errno). */
int safefile_pwrite_all(int fd, const void *data, size_t len);

#endif
