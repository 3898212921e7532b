/*
 * hostlock: one controller per host, and what it leaves running.
 *
 * Everything that changes the host — run, resume, rerun, restore-host —
 * holds an exclusive flock() on a lock file first (default
 * /run/topoadvisor.lock; $TOPOADVISOR_LOCK overrides it, e.g. for tests),
 * before it opens (and perhaps migrates) the database.  Taking it never
 * waits: a second controller fails at once with the holder's pid and what
 * to do.  The kernel drops the lock when the holder's descriptor closes, so
 * a crashed or killed controller never leaves a stale lock; the file itself
 * stays (removing it would race with the next locker).
 *
 * The file is created safely (safefile.h) with mode 0600.  An existing file
 * is used only when it is a regular file with a single link, owned by us,
 * and empty or already a topoadvisor lock: it is never truncated, chmod-ed
 * or written when it holds anything else, so pointing TOPOADVISOR_LOCK at a
 * file by mistake (or by malice) cannot destroy it.  Content:
 *
 *	topoadvisor host lock
 *	pid PID
 *	cgroup PATH		one line per process tree the holder runs
 *	group PGID START	(proctree.h): its cgroup, or its process group
 *				where there is no usable cgroup v2
 *
 * The holder records each process tree it starts (noise loads, host
 * benchmarks, preparation commands, servers: hostlock_track_tree; a
 * tree's cgroup is recorded before it is made, through proctree's
 * recorder, so a SIGKILL at any moment leaves nothing unnamed) and
 * forgets it once it has ended it; a tree that survives SIGKILL stays
 * recorded for the next holder.  A controller killed with SIGKILL cannot
 * end them: the next holder does, when it takes the lock — the whole cgroup
 * (daemonized descendants included), or the process group — and removes
 * the cgroup, so `resume` (or any later sweep, or restore-host) leaves
 * nothing of an earlier sweep running, and says what it ended.
 *
 * The descriptor is close-on-exec, and children forked without exec close
 * it (noise.h), so no child keeps the lock.
 */
#ifndef TA_HOSTLOCK_H
#define TA_HOSTLOCK_H

#include <sys/types.h>

#include "../util/err.h"
#include "../util/strbuf.h"

#define HOSTLOCK_DEFAULT_PATH "/run/topoadvisor.lock"

struct hostlock {
	int fd;		/* -1 when not held */
	char *path;
	int leftovers;		/* processes of an earlier holder ended on acquiring */
	int stale_instances;	/* trace instances of dead holders removed on acquiring */
	struct strbuf leftover_names;	/* "sleep(1234), sh(1233)" */
	int survivor_group;	/* a group of theirs that survived SIGKILL, else 0 */
	char *survivor_cgroup;	/* a cgroup of theirs whose processes survived, or NULL */
};

/* $TOPOADVISOR_LOCK when set and not empty, else HOSTLOCK_DEFAULT_PATH. */
const char *hostlock_path(void);

/*
 * Takes the lock at path (NULL: hostlock_path()) and ends the process
 * trees an earlier holder recorded and left running (counted in
 * lk->leftovers); as root also removes the tracefs instances a killed
 * controller left (live_cleanup_stale(), counted in lk->stale_instances),
 * so every holder tidies tracefs, also one that then refuses to go on.
 * Fails (EXIT_FAILURE_RUN) without waiting when another process holds it,
 * naming that process, and when the file is not one we may use (see
 * above), saying what to do.
 */
int hostlock_acquire(struct hostlock *lk, const char *path, struct ta_err *err);
/* Whether this process holds a host lock. */
int hostlock_held(void);
/* Releases the lock (no-op when not held). */
void hostlock_release(struct hostlock *lk);

/*
 * Records that tree t (after its first proctree_add) belongs to this
 * holder, so that a later holder ends it should we die first; and forgets
 * it once it has been ended.  No-ops when no lock is held.
 */
struct proctree;
void hostlock_track_tree(const struct proctree *t);
void hostlock_untrack_tree(const struct proctree *t);

#endif
