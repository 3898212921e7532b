/*
 * procgroup: processes and process groups as /proc shows them.
 *
 * The process-group side of containment (proctree.h uses a cgroup where it
 * can, and a process group plus what is reparented to the controller where
 * it cannot): whether anything of a group still lives, and ending a group
 * for certain — also one whose leader is long gone, such as the orphans a
 * controller killed with SIGKILL leaves under init.  A group is named by
 * its id and the leader's start time, so a group id the kernel has since
 * given to an unrelated process is never signalled.
 */
#ifndef TA_PROCGROUP_H
#define TA_PROCGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"

/* What /proc/PID/stat says about a process. */
struct proc_info {
	pid_t pid, ppid, pgrp;
	char state;			/* 'R', 'S', 'Z' (zombie), 'X' (dead) … */
	unsigned long long start;	/* clock ticks since boot (field 22) */
	char comm[64];
};

/* Reads /proc/PID/stat; -1 when there is no such process. */
int procgroup_info(pid_t pid, struct proc_info *pi);

/* Every process in /proc, zombies included (*list: free() it); -1 on error. */
int procgroup_list(struct proc_info **list, size_t *n);

/* Whether any live (not zombie) process is in group pgid. */
bool procgroup_alive(pid_t pgid);

/*
 * The start time of process pid (clock ticks since boot, /proc/PID/stat
 * field 22); 0 when there is no such process.
 */
unsigned long long procgroup_start_time(pid_t pid);

/*
 * Ends what is left of the group pgid whose leader started at `start`
 * (SIGKILL to the group), unless pgid now names another process (its
 * leader alive with a different start time).  Waits up to wait_ms for the
 * group to be gone.  Returns how many live processes it found (their
 * "comm(pid)" appended to `who` when not NULL), or -1 when some survive.
 */
int procgroup_end_leftover(pid_t pgid, unsigned long long start, int wait_ms,
			   struct strbuf *who);

/* Polls until no live process is in pgid; false after ms by the monotonic clock. */
bool procgroup_wait_gone(pid_t pgid, int ms);

/* Tests: the clock procgroup_wait_gone reads (NULL: mono_now_ns). */
void procgroup_set_clock(uint64_t (*now_ns)(void));

#endif
