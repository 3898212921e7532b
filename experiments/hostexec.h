/*
 * hostexec: run a command on the host — pinned to a CPU set, its output
 * captured, bounded by a timeout, cancellable — for the `host` runner and
 * for benchmark servers.  No shell: argv goes to execvp as is.
 */
#ifndef TA_HOSTEXEC_H
#define TA_HOSTEXEC_H

#include <signal.h>
#include <stdbool.h>

#include "../util/err.h"
#include "../util/strbuf.h"

struct hostexec_result {
	int exit_code;		/* when exited normally, else -1 */
	int signal;		/* terminating signal, else 0 */
	bool timed_out;
	bool cancelled;
	double seconds;		/* wall time */
	struct strbuf out;	/* stdout (the caller owns both: strbuf_release them) */
	struct strbuf errout;	/* stderr */
};

/*
 * Runs argv (NULL-terminated) pinned to `cpus` (a cpuset string, NULL: any),
 * in its own process group, waiting at most timeout_s seconds (0: no limit).
 * On timeout or when *cancel becomes non-zero, the whole group gets SIGTERM,
 * then SIGKILL after 2 s; when it ends, whatever it left in its group is
 * killed and verified gone.  The group is recorded in the host lock while
 * it runs (hostlock.h), so a controller killed with SIGKILL leaves nothing
 * the next holder does not end.  Output beyond 64 MiB per stream is dropped.
 * Returns 0 when the command ran (whatever its exit status; see res), -1 when
 * it could not be started (not found, bad CPU set …).
 */
int hostexec_run(char *const argv[], const char *cpus, int timeout_s,
		 volatile sig_atomic_t *cancel, struct hostexec_result *res,
		 struct ta_err *err);

/* "exited with status 3", "killed by signal 9", "timed out after 10 s" … */
void hostexec_describe(const struct hostexec_result *res, int timeout_s, struct strbuf *out);

#endif
