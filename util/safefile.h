/*
 * safefile: the one way this tool creates files.
 *
 * Every file topoadvisor writes (the HTML report, a new database, the host
 * lock) is created here, so that a name planted in a shared directory (a
 * symlink, a hard link, a FIFO) can never make it write somewhere else:
 *
 *   safefile_create()  a new file: O_CREAT|O_EXCL|O_NOFOLLOW, never opens
 *                      anything that already exists under that name;
 *   safefile_replace() a whole file's content: written to a fresh temporary
 *                      file in the same directory (made by safefile_create),
 *                      then renamed over path, so readers see the old or the
 *                      new content and a symlink at path is replaced, never
 *                      followed;
 *   safefile_open_existing() an existing file to update in place: refuses a
 *                      symlink, anything not a regular file, and a file with
 *                      more than one hard link (whose other names we would
 *                      change too).
 *
 * Modes are passed to open() as given, so the umask still applies: 0600 for
 * private files (database, lock), 0644 for what is meant to be shared.
 */
#ifndef TA_SAFEFILE_H
#define TA_SAFEFILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "err.h"

/*
 * Creates path, which must not exist, open for writing (O_RDWR, close-on-
 * exec).  Returns the descriptor, or -1 with err set (EEXIST among others:
 * errno is kept for callers that want to tell it apart).
 */
int safefile_create(const char *path, mode_t mode, struct ta_err *err);

/*
 * Replaces the content of path with data[0..len) atomically (temporary file
 * in path's directory + fsync + rename).  Returns 0, or -1 with err set and
 * nothing left behind.
 */
int safefile_replace(const char *path, const void *data, size_t len, mode_t mode,
		     struct ta_err *err);

/*
 * Opens an existing path (O_RDWR, no O_CREAT, no O_TRUNC, O_NOFOLLOW) and
 * fills *st.  Fails for a symlink, a non-regular file or one with other hard
 * links; errno stays ENOENT when path does not exist.
 */
int safefile_open_existing(const char *path, struct stat *st, struct ta_err *err);

/* Writes all of data at offset 0 and truncates the file to len; 0 or -1 (errno). */
int safefile_pwrite_all(int fd, const void *data, size_t len);

#endif
