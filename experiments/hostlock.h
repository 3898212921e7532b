/*
 * hostlock: one controller per host.
 *
 * Everything that changes the host — run, resume, rerun, restore-host —
 * holds an exclusive flock() on a lock file first (default
 * /run/topoadvisor.lock; $TOPOADVISOR_LOCK overrides it, e.g. for tests).
 * Taking it never waits: a second controller fails at once with the
 * holder's pid (written into the file) and what to do.  The kernel drops
 * the lock when the holder's descriptor closes, so a crashed or killed
 * controller never leaves a stale lock; the file itself stays (removing it
 * would race with the next locker).  The descriptor is close-on-exec, and
 * children forked without exec must not outlive the controller (the noise
 * module kills its children with the parent) or they would keep the lock.
 */
#ifndef TA_HOSTLOCK_H
#define TA_HOSTLOCK_H

#include "../util/err.h"

#define HOSTLOCK_DEFAULT_PATH "/run/topoadvisor.lock"

struct hostlock {
	int fd;		/* -1 when not held */
	char *path;
};

/* $TOPOADVISOR_LOCK when set and not empty, else HOSTLOCK_DEFAULT_PATH. */
const char *hostlock_path(void);

/*
 * Takes the lock at path (NULL: hostlock_path()), creating the file with
 * mode 0600, and writes our pid into it.  Fails (EXIT_FAILURE_RUN) without
 * waiting when another process holds it, naming that process.
 */
int hostlock_acquire(struct hostlock *lk, const char *path, struct ta_err *err);
/* Releases the lock (no-op when not held). */
void hostlock_release(struct hostlock *lk);

#endif
