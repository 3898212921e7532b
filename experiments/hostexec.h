/*
 * hostexec: run a command on the host — pinned to a CPU set, its output
 * captured, bounded by a timeout, cancellable — for the `host` runner and
 * for benchmark servers.  No shell: argv goes to execvp as is.
 */
#ifndef TA_HOSTEXEC_H
#define TA_HOSTEXEC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"
#include "../util/strbuf.h"

/*
 * Output kept per stream: its beginning and its last HOSTEXEC_OUTPUT_TAIL
 * bytes (from a whole line on), HOSTEXEC_OUTPUT_CAP in all; what comes
 * between is counted, not kept.
 */
#define HOSTEXEC_OUTPUT_CAP ((size_t)64 << 20)
#define HOSTEXEC_OUTPUT_TAIL ((size_t)1 << 20)

struct hostexec_result {
	int exit_code;		/* when exited normally, else -1 */
	int signal;		/* terminating signal, else 0 */
	bool timed_out;
	bool cancelled;
	double seconds;		/* wall time */
	/* The caller owns the strbufs: hostexec_result_release. */
	struct strbuf out;	/* stdout, at most HOSTEXEC_OUTPUT_CAP bytes */
	struct strbuf errout;	/* stderr, the same */
	size_t out_dropped, errout_dropped;	/* bytes dropped between head and tail */
	size_t out_dropped_lines, errout_dropped_lines;	/* line ends among them */
	int leftovers;		/* processes of its tree alive after it ended */
	struct strbuf leftover_names;	/* "sleep(1234), sh(1233)" */
	bool survivors;		/* some of its tree survived SIGKILL */
};

/*
 * Runs argv (NULL-terminated) pinned to `cpus` (a cpuset string, NULL: any),
 * in a process tree of its own (proctree.h: a cgroup, or its process group
 * and what is reparented to us), waiting at most timeout_s seconds (0: no
 * limit) by the clock, whatever the command does with its descriptors or
 * signals.  On timeout or when *cancel becomes non-zero the whole tree gets
 * SIGTERM, then SIGKILL after 2 s.  When the command itself ends, what its
 * tree still runs a second later is a leftover (counted and named in res),
 * and ended; nothing of the tree outlives the call.  The tree is recorded
 * in the host lock while it runs (hostlock.h), so a controller killed with
 * SIGKILL leaves nothing the next holder does not end.  The command gets
 * /dev/null as stdin and no descriptor of ours but its output pipes.
 * Returns 0 when the command ran (whatever its exit status; see res), -1 when
 * it could not be started (not found, bad CPU set …).
 */
int hostexec_run(char *const argv[], const char *cpus, int timeout_s,
		 volatile sig_atomic_t *cancel, struct hostexec_result *res,
		 struct ta_err *err);

/*
 * hostexec_run for a client tool (sbatch, squeue, scancel) whose work goes
 * on outside it: unpinned, not cancellable, in its own process group (no
 * cgroup), bounded by timeout_s all the same; what it leaves running
 * outside that group when it ends is not ours, so it is neither counted nor
 * ended (a test's fake sbatch starts its jobs on this host so).
 */
int hostexec_run_client(char *const argv[], int timeout_s, struct hostexec_result *res,
			struct ta_err *err);

void hostexec_result_release(struct hostexec_result *res);

/* "exited with status 3", "killed by signal 9", "timed out after 10 s" … */
void hostexec_describe(const struct hostexec_result *res, int timeout_s, struct strbuf *out);

/*
 * "stdout was cut at the 64 MiB limit: 960.0 MiB (100000000 lines) were
 * dropped before its last 1 MiB" for a stream that lost dropped bytes
 * holding `lines` line ends.
 */
void hostexec_describe_cut(const char *stream, size_t dropped, size_t lines,
			   struct strbuf *out);

#endif
