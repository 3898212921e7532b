/*
 * hostlock: one controller per host, and what it leaves running.
 *
 * Everything that changes the host — run, resume, rerun, restore-host, a
 * distributed block's worker — holds the lock of the host it drives first,
 * before it opens (and perhaps migrates) the database.  The lock belongs to
 * what it protects, never to a path the caller chose:
 *
 *   the anchor	an exclusive flock() on the protected directory itself: the
 *		fake root given with --root, or, for the real host,
 *		/run/topoadvisor (root's, mode 0700).  Whatever the
 *		environment, two controllers of one host meet here.
 *   the file	DIR/KEY.lock, flock()ed too, holding what is written below;
 *		KEY names the host ("host", or "root-MAJ.MIN-INODE" for a
 *		fake root: its device and inode), DIR is /run/topoadvisor or
 *		$TOPOADVISOR_LOCK, which relocates the files (e.g. for a user
 *		who is not root, with a fake root) but cannot split a host
 *		into two locks: the anchor stays.
 *
 * Taking it never waits: a second controller fails at once with the
 * holder's pid (from the file, or /proc/locks for the anchor) and what to
 * do.  The kernel drops the lock when the holder's descriptor closes, so
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

#include <stdbool.h>

#define HOSTLOCK_DEFAULT_DIR "/run/topoadvisor"

struct hostlock {
	int fd;		/* -1 when not held */
	int anchor_fd;	/* the protected directory's, when anchored */
	bool anchored;
	char *path;
	int leftovers;		/* processes of an earlier holder ended on acquiring */
	int stale_instances;	/* trace instances of dead holders removed on acquiring */
	struct strbuf leftover_names;	/* "sleep(1234), sh(1233)" */
	int survivor_group;	/* a group of theirs that survived SIGKILL, else 0 */
	char *survivor_cgroup;	/* a cgroup of theirs whose processes survived, or NULL */
};

/* The directory of the lock files: $TOPOADVISOR_LOCK, else HOSTLOCK_DEFAULT_DIR. */
const char *hostlock_dir(void);
/*
 * The name of the host a controller with --root `root` drives: "host" for
 * the real one (root NULL, empty, or the same directory as /), else
 * "root-MAJ.MIN-INODE" of the root directory (symlinks resolved), so two
 * spellings of one root name one host.  A per-node root (Slurm's "%n" in
 * it) names the directory that holds the node roots: what its controller
 * protects.  -1 when root is not a directory.
 */
int hostlock_key(const char *root, struct strbuf *key, struct ta_err *err);
/* hostlock_dir()/KEY.lock: the lock file of that host. */
int hostlock_path_for(const char *root, struct strbuf *path, struct ta_err *err);

/*
 * Takes the lock of the host under root (NULL: the real host): its anchor,
 * then the lock file at path (NULL: hostlock_path_for(root), its directory
 * made 0700 when missing), as hostlock_acquire does.  Fails without waiting
 * when another process holds either, naming it.
 */
int hostlock_acquire_host(struct hostlock *lk, const char *root, const char *path,
			  struct ta_err *err);

/*
 * Takes the lock file at path (NULL: hostlock_dir()/host.lock) alone,
 * without the anchor (a Slurm node's worker lock, tests, and readers that
 * only migrate the database), and ends the process
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
/*
 * Lets go of the host this process's lock anchors (the real host's, or a
 * fake root's), keeping its lock file: a distributed sweep's controller
 * drives its nodes, not this machine, and a node that is this machine (a
 * test cluster in network namespaces, a login node that also takes jobs)
 * takes the host for its block; two controllers still exclude each other
 * through the lock file.  No-op when nothing is held or anchored.
 */
void hostlock_leave_host(void);
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
