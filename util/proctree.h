/*
 * proctree: the container one started command and everything it starts
 * run in, so that none of it can escape, outlive the run unnoticed, or
 * survive the controller.
 *
 * Where the kernel offers a usable cgroup v2 hierarchy (found in
 * /proc/self/mountinfo, wherever it is mounted: /sys/fs/cgroup, or
 * /sys/fs/cgroup/unified beside v1), each tree is a cgroup of its own,
 * "topoadvisor-PID-N" under the controller's own cgroup: the child joins it
 * before it execs, and every descendant stays in it whatever it does
 * (setsid, double fork, daemon()) — unless it is root and moves itself
 * out (writes its pid into another cgroup's cgroup.procs).  So a tree also
 * holds the descendants of its members wherever their cgroup, the orphans
 * reparented to the controller (a subreaper, below) that no other tree
 * holds, and every process once seen so (by pid and start time): they are
 * counted, named and ended with it.  Sub-cgroups a command makes inside
 * the tree's cgroup are part of it: counted, ended and removed.  Ending a
 * tree writes cgroup.kill (on kernels before 5.14: freezes it, SIGKILLs
 * each member, thaws), SIGKILLs the members outside it, waits (by the
 * monotonic clock) until all are gone and removes the directories.  What
 * root can still do unseen: move a process out and leave it in another
 * PID namespace, or make it a child of a process that is not ours (by
 * ptrace, or a service manager it asks to start it).
 *
 * Elsewhere (no cgroup2 mount, no permission — e.g. not root — or a
 * cgroup the kernel will not move a process into) a tree is the child's
 * process group plus what is reparented to the controller, which becomes
 * a child subreaper (PR_SET_CHILD_SUBREAPER): processes that leave the
 * group (setsid) and whose parent dies are then ours, and a tree claims
 * them with every descendant of its members.  While two trees run at once
 * such an orphan is counted with whichever tree asks first; and after the
 * controller is killed only the process group can still be found.
 *
 * The controller is a child subreaper in both modes, so the processes a
 * tree ends are reaped here (this host's init, for one, never reaps).
 *
 * Every member of a tree is named "comm(pid)" in messages.  Not thread-safe
 * (the controller is single-threaded where it starts processes).
 */
#ifndef TA_PROCTREE_H
#define TA_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "strbuf.h"

struct proctree {
	char *cgroup;		/* its cgroup's directory; NULL: process group mode */
	int procs_fd;		/* its cgroup.procs, for the child to join; -1 */
	pid_t pgid;		/* the group its first child leads; 0 before */
	unsigned long long start;	/* that child's start time (procgroup.h) */
	pid_t *children;	/* the direct children (their owner reaps them) */
	size_t nchildren;
	struct proctree_escapee {	/* members seen outside the cgroup */
		pid_t pid;
		unsigned long long start;
	} *escaped;
	size_t nescaped;
	bool group_only;	/* proctree_init_group: the process group, nothing more */
	bool live;		/* between proctree_init and proctree_release */
};

/*
 * Prepares a tree (creates its cgroup when cgroup v2 is usable) before the
 * first fork.  Fails only when a cgroup that should work cannot be made.
 */
int proctree_init(struct proctree *t, struct ta_err *err);

/*
 * A tree that is only its child's process group and the children: no
 * cgroup, no orphans claimed — for a client tool (sbatch) whose work goes on
 * outside it, which we wait for but whose daemons are not ours.
 */
void proctree_init_group(struct proctree *t);

/*
 * In a freshly forked child, before exec (async-signal-safe): joins the
 * process group pgid (0: leads a new one) and the tree's cgroup.  -1 with
 * errno when the cgroup refused it.
 */
int proctree_child_join(const struct proctree *t, pid_t pgid);

/* In the parent after fork: the child pid is in the tree (sets its group too). */
void proctree_add(struct proctree *t, pid_t pid);

/*
 * How many live processes the tree holds (zombies are dead; direct
 * children included while they run), naming them in who when not NULL.
 */
int proctree_count(struct proctree *t, struct strbuf *who);

/* Sends sig to every member (SIGKILL: cgroup.kill where there is one). */
void proctree_signal(struct proctree *t, int sig);

/* Waits up to ms for the tree to hold no live process. */
bool proctree_wait_empty(struct proctree *t, int ms);

/*
 * Ends the tree for certain: SIGKILL to every member, waits up to wait_ms
 * until none lives, reaps what was reparented to us, removes the cgroup.
 * Returns how many live processes it found (named in who when not NULL),
 * or -1 when some survive SIGKILL (the cgroup then stays).
 */
int proctree_end(struct proctree *t, int wait_ms, struct strbuf *who);

/* Frees what init allocated (does not kill: proctree_end does). */
void proctree_release(struct proctree *t);

/*
 * Ends a tree a controller killed earlier left behind, by its cgroup's
 * path as proctree recorded it: only a "topoadvisor-*" directory inside a
 * cgroup2 mount is touched.  Returns how many live processes it ended
 * (named in who), or -1 when some survive; 0 when the cgroup is gone.
 */
int proctree_end_cgroup(const char *path, int wait_ms, struct strbuf *who);

/*
 * Who keeps a record of the cgroups trees make (the host lock): fn(path,
 * true) before the cgroup is made, so a controller killed at any moment
 * leaves nothing the next lock holder cannot name; fn(path, false) once it
 * is removed (or could not be made).  NULL: no one.
 */
typedef void (*proctree_recorder)(const char *cgroup, bool made);
void proctree_set_recorder(proctree_recorder fn);

/* Test hooks: behave as a kernel without cgroup v2 / without cgroup.kill would. */
enum proctree_force { PROCTREE_AUTO, PROCTREE_NO_CGROUP, PROCTREE_NO_KILL_FILE };
void proctree_force_mode(enum proctree_force f);
/* Test hook: the clock every wait reads (NULL: CLOCK_MONOTONIC, mono.h). */
void proctree_set_clock(uint64_t (*now_ns)(void));

#endif
