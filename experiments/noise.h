/*
 * noise: background loads on the host, started before a run's benchmark
 * and stopped after it (the `noise:` factor of a sweep).
 *
 *   spin     `threads` busy processes; process i is pinned to CPU i modulo
 *            the cpuset's size (one per CPU by default), so each CPU of the
 *            set carries a known load.  Processes, not threads of the
 *            controller: they can be killed as a group and share nothing.
 *   command  argv, run with fork+execvp, the whole process pinned to the
 *            cpuset (its children inherit the affinity).
 *
 * The guest kind (a second guest running a load) is the controller's job,
 * with the guest module; noise_start() refuses it.
 *
 * Every load runs in a process tree of its own (proctree.h: a cgroup where
 * cgroup v2 is usable, else its process group and what is reparented to
 * the controller), so stopping reaches every process it starts, also ones
 * that leave the group (setsid) or daemonize; a terminal's Ctrl-C reaches
 * only the controller, which then stops the load itself.  Stopping sends
 * SIGTERM to the tree, waits up to a grace period, then SIGKILL, and reaps,
 * and the tree is verified gone (its cgroup removed).  Loads die with the
 * controller (PR_SET_PDEATHSIG) so a crashed controller leaves no spinning
 * CPUs (nor a host lock held by a forked copy); PDEATHSIG does not reach
 * what a command forks, so every tree is also recorded in the host lock
 * (hostlock_track_tree) and the next holder ends what a killed controller
 * left.  Children start with default signal dispositions and an empty
 * signal mask, whatever the controller set up for its own SIGINT/SIGTERM
 * handling, and without the controller's file descriptors.
 *
 * A failure in the child before the load runs (a bad CPU, a program that
 * cannot be executed) comes back through a close-on-exec pipe: noise_start
 * fails with the reason, and nothing is left running.
 */
#ifndef TA_NOISE_H
#define TA_NOISE_H

#include <stddef.h>
#include <sys/types.h>

#include "../util/err.h"
#include "config.h"

struct noise_load;

/*
 * Starts a load.  cpus: a cpuset string ("1", "0-3,8") every CPU of which
 * must be online, or NULL for unpinned.  threads (spin): the number of busy
 * processes, <= 0 for one per CPU of cpus (per online CPU when unpinned).
 * argv (command): NULL-terminated, argv[0] looked up in PATH.  NOISE_NONE
 * gives a load that does nothing, so callers need no special case.
 * Returns NULL with err set (EXIT_BAD_INPUT for a bad cpuset or argv).
 */
struct noise_load *noise_start(enum noise_kind kind, const char *cpus, int threads,
			       char *const argv[], struct ta_err *err);

/* noise_start() with the fields of a validated config's noise entry. */
struct noise_load *noise_start_config(const struct noise *n, struct ta_err *err);

/* The process group (0 for NOISE_NONE) and the processes we started. */
pid_t noise_pgid(const struct noise_load *nl);
size_t noise_pids(const struct noise_load *nl, const pid_t **pids);

/*
 * 0 while every process we started still runs; -1 when one has exited (a
 * command that ended or crashed: the noise is no longer there), with its
 * exit status in err.  Does not reap, so the process group stays ours.
 */
int noise_check(struct noise_load *nl, struct ta_err *err);

/*
 * Stops the load: SIGTERM to the group, SIGKILL after grace_ms, reaps our
 * children and waits until no process of the group is alive.  Frees nl
 * (also on failure).  Fails only when something survives SIGKILL.
 */
int noise_stop(struct noise_load *nl, int grace_ms, struct ta_err *err);

#endif
