/*
 * live: count ganged exits and exit reasons on this host while something
 * runs (a tracefs session).
 *
 * The session owns a tracefs instance named topoadvisor-PID-N (never the
 * top-level buffer), enables kvm_hv:kvmppc_run_core, kvm_hv:kvm_guest_exit,
 * kvm:kvm_exit and kvm:kvm_userspace_exit where this kernel has them — only
 * those opts.events asks for: a session that counts no ganged exits never
 * touches (nor depends on) kvmppc_run_core — sets
 * the per-CPU buffer size, the "mono" clock and non-overwrite mode, and
 * drains the per-CPU buffers from a background thread while the workload
 * runs, feeding the gang counter in timestamp order (a CPU's records go
 * once every other CPU has a newer one queued; while some CPU has nothing
 * queued, records newer than a 20 ms watermark wait for the next round, so
 * a slower CPU cannot be overtaken).  Losses are read exactly from
 * per_cpu/cpuN/stats.
 *
 * Use (the sweep controller, `topoadvisor trace`):
 *
 *	struct live_session *s;
 *	if (live_start(&opts, &s, &err) < 0) ...;
 *	run the benchmark ...
 *	struct gang_result res;
 *	if (live_stop(s, &res, &err) < 0) ...;	(always frees s)
 *	... res.procs (per tgid), res.reasons (per tgid and vCPU) ...
 *	gang_result_release(&res);
 *
 * live_stop() and live_abort() remove the instance on every path.  Signals:
 * the caller's SIGINT/SIGTERM handler should only set a flag; the caller
 * then calls live_abort() (or live_stop()).  live_start() mounts tracefs if
 * it is not mounted and fails clearly when not root.
 */
#ifndef TA_LIVE_H
#define TA_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/err.h"
#include "gang.h"

/*
 * Default per-CPU buffer: 256 MiB in all, at most 16 MiB and at least 1 MiB
 * per CPU.  16 MiB copes with 2 M events/s on one CPU while the reader is
 * descheduled for ~150 ms; a 160-CPU POWER host gets 1.6 MiB per CPU
 * instead of 2.5 GiB in all.
 */
#define LIVE_TOTAL_BUFFER_KIB (256 * 1024)
#define LIVE_MAX_CPU_BUFFER_KIB 16384
#define LIVE_MIN_CPU_BUFFER_KIB 1024

/* What a session collects; each enables only the events it needs. */
enum live_events {
	LIVE_EV_ALL = 0,		/* both (the default) */
	LIVE_EV_GANG = 1u << 0,		/* kvm_hv: kvmppc_run_core, kvm_guest_exit */
	LIVE_EV_REASONS = 1u << 1,	/* kvm_hv:kvm_guest_exit, kvm: kvm_exit,
					   kvm_userspace_exit */
};

struct live_opts {
	unsigned events;		/* enum live_events mask; LIVE_EV_ALL: both */
	enum gang_algorithm algorithm;
	int buffer_kib;			/* per CPU; 0: the default above */
	const int32_t *tgids;		/* report only these processes; NULL: all */
	size_t ntgids;
};

struct live_session;

int live_start(const struct live_opts *opts, struct live_session **out, struct ta_err *err);

/*
 * Stops tracing, drains what is left, reads the losses, removes the instance
 * and fills *res (release it with gang_result_release).  s is freed in every case.
 */
int live_stop(struct live_session *s, struct gang_result *res, struct ta_err *err);

/* Removes the instance and frees s without a result (error paths). */
void live_abort(struct live_session *s);

/*
 * Removes tracefs instances of this tool whose process is shown to be gone
 * (a controller killed with SIGKILL cannot remove its own): tracefs is
 * host-wide, so each instance carries its owner's token in its name,
 * "topoadvisor-PID-SERIAL-PIDNS-START" (the PID namespace's inode and the
 * process's start time), and live_instance_owner() judges it, never a
 * kill(PID, 0) in a namespace where PID means another process.  live_start()
 * and the sweep controller call it; returns how many were removed.
 */
int live_cleanup_stale(void);

/* Whose an instance is, as live_instance_owner() can tell from here. */
enum live_owner {
	LIVE_OWNER_NOT_OURS,	/* not a name this tool makes */
	LIVE_OWNER_ALIVE,	/* its process runs */
	LIVE_OWNER_GONE,	/* its process is shown to be gone: stale */
	LIVE_OWNER_UNKNOWN,	/* cannot be told from this PID namespace: kept */
};
/*
 * Judges instance name by its token: in our PID namespace, alive when PID
 * runs with that start time; in another, alive when (seen from the initial
 * namespace, which sees every process) a process of that namespace has
 * that pid there and that start time, else unknown.  A name of an older
 * build ("topoadvisor-PID-SERIAL") is judged by its pid from the initial
 * namespace only.  Unknown too when /proc is not our namespace's.
 */
enum live_owner live_instance_owner(const char *name);

/* This process's token: pid, PID namespace inode, start time. */
struct live_token {
	pid_t pid;
	unsigned long long pidns, start;
};
void live_instance_token(struct live_token *tok);

/*
 * Keeps process pid's name as /proc says it now, for the result should the
 * reader meet its records only after it is gone: `trace -- CMD` calls it
 * while its child is a zombie.  Preferred to the kernel's saved_cmdlines,
 * which may still hold the name the process had before exec (the
 * tracer's own, for a child of ours).
 */
void live_name(struct live_session *s, int32_t pid);

/* The instance's name (for messages and tests). */
const char *live_instance_name(const struct live_session *s);

#endif
