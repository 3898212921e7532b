/*
 * Internal to the controller (controller.c and controller-guest.c): the
 * sweep's state and the guest-side steps.  Not a public interface.
 */
#ifndef TA_CONTROLLER_INT_H
#define TA_CONTROLLER_INT_H

#include <signal.h>

#include "../util/strbuf.h"
#include "controller.h"
#include "reuse.h"
#include "runrec.h"

struct guest_state;	/* controller-guest.c */
struct preboot;		/* controller-guest.c */
struct db_run_todo;

struct ctl {
	struct db *db;
	const struct plan *plan;
	const struct sweep_config *cfg;
	int64_t exp_id;
	const struct controller_opts *opts;
	volatile sig_atomic_t *cancel;
	const char **applied;		/* knob values now on the host (NULL: untouched) */
	struct guest_state *guest;	/* the current run's guest, or NULL */
	size_t guest_slot;		/* its slot in kept[] */
	struct reuse_cache cache;	/* guest.reuse: which group each slot holds */
	struct guest_state **kept;	/* [cache.cap]: booted guests, running or suspended */
	/* guest.reuse with runner host: the host-runner sessions, one per reuse
	 * group, served like kept guests; session_boot[slot]: the run it began with */
	struct reuse_cache sessions;
	int64_t *session_boot;
	bool trace_host_runs;		/* trace benchmarks run on the host (root only) */
	/* The runs after the current one, in order (for booting a block's
	 * guests together) */
	const struct db_run_todo *ahead;
	size_t nahead;
	/* Guests booted with an earlier run of their block for a later run
	 * (controller-guest.c), not yet in the reuse cache */
	struct preboot *preboot;
	size_t npreboot;
};

/* The plan's configuration with that key, or NULL. */
const struct plan_config *ctl_config_by_key(const struct plan *p, const char *key);

/* Output of one command, wherever it ran. */
struct cmd_output {
	int exit_code;		/* -1 when it did not exit normally */
	bool timed_out;
	double seconds;
	struct strbuf out, errout;
	struct strbuf what;	/* "exited with status 3", … (for messages) */
	bool out_cut;		/* stdout lost output beyond a limit */
	struct strbuf cut;	/* "stdout was cut at …" when any stream lost output */
	struct strbuf leftover;	/* what it left running when it ended (since ended) */
};

/* Guest side (controller-guest.c). */
int ctl_guest_start_sweep(struct ctl *c, struct ta_err *err);
/* Destroys what is left (guests, noise guest) and closes the connection. */
void ctl_guest_end_sweep(struct ctl *c);
/*
 * Makes the guest for pc current: resumes the kept guest of its reuse group
 * (guest.reuse) while it may serve this block (guest.reuse_runs), or boots
 * one, suspending the previous guest when it is kept.  rec->boot gets the
 * run the guest was booted for.
 */
int ctl_guest_up(struct ctl *c, const struct plan_config *pc, int64_t run_id, int block,
		 struct run_record *rec, struct ta_err *err);
int ctl_guest_exec(struct ctl *c, char *const argv[], int timeout_s, double expect_s,
		   struct cmd_output *o, struct ta_err *err);
/*
 * Background processes in the current guest (guestbg.h): an in-guest noise
 * load (noise.vcpus), the benchmark server (on benchmark.vcpus), checked
 * after the benchmark and stopped, verified gone, before the guest is kept
 * or destroyed.  A guest whose processes would not stop is destroyed.
 */
int ctl_guest_load_start(struct ctl *c, const struct noise *n, struct ta_err *err);
int ctl_guest_server_start(struct ctl *c, char *const argv[], const char *vcpus,
			   struct ta_err *err);
/*
 * Stops the in-guest load right after the benchmark, checking in the same
 * agent call that it ran until then: `ended` names what had ended.  -1 when
 * it would not stop (the guest is destroyed).
 */
int ctl_guest_load_stop(struct ctl *c, struct strbuf *ended, struct ta_err *err);
int ctl_guest_bg_stop(struct ctl *c, struct ta_err *err);
void ctl_guest_stats_begin(struct ctl *c);
void ctl_guest_stats_end(struct ctl *c, struct run_record *rec);
/* The QEMU process id of the guest (for the trace filter), 0 if unknown. */
int ctl_guest_qemu_pid(struct ctl *c);
/* Destroys the current guest. */
void ctl_guest_down(struct ctl *c);
/* Destroys every guest, kept ones included (a knob change needs no guests). */
void ctl_guest_down_all(struct ctl *c);
/* Suspends the current guest when it is kept for reuse, else destroys it. */
void ctl_guest_park(struct ctl *c);
int ctl_noise_guest_up(struct ctl *c, const struct plan_config *pc, struct ta_err *err);
void ctl_noise_guest_down(struct ctl *c);
/*
 * Whether this user may drive guests through the sweep's libvirt URI,
 * tried with one connection before anything is stored: a user it refuses
 * gets EXIT_BAD_INPUT and what to do instead.
 */
int ctl_guest_check_access(const struct sweep_config *cfg, struct ta_err *err);

#endif
