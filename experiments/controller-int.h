/*
 * Internal to the controller (controller.c and controller-guest.c): the
 * sweep's state and the guest-side steps.  Not a public interface.
 */
#ifndef TA_CONTROLLER_INT_H
#define TA_CONTROLLER_INT_H

#include <signal.h>

#include "../util/strbuf.h"
#include "controller.h"
#include "runrec.h"

struct guest_state;	/* controller-guest.c */

struct ctl {
	struct db *db;
	const struct plan *plan;
	const struct sweep_config *cfg;
	int64_t exp_id;
	const struct controller_opts *opts;
	volatile sig_atomic_t *cancel;
	const char **applied;		/* knob values now on the host (NULL: untouched) */
	struct guest_state *guest;	/* the guest kept for reuse, or NULL */
	size_t guest_config;		/* its configuration index */
	bool trace_host_runs;		/* trace benchmarks run on the host (root only) */
};

/* Output of one command, wherever it ran. */
struct cmd_output {
	int exit_code;		/* -1 when it did not exit normally */
	bool timed_out;
	double seconds;
	struct strbuf out, errout;
	struct strbuf what;	/* "exited with status 3", … (for messages) */
};

void cmd_output_release(struct cmd_output *o);

/* Guest side (controller-guest.c). */
int ctl_guest_start_sweep(struct ctl *c, struct ta_err *err);
/* Destroys what is left (guests, noise guest) and closes the connection. */
void ctl_guest_end_sweep(struct ctl *c);
int ctl_guest_up(struct ctl *c, const struct plan_config *pc, int64_t run_id,
		 struct run_record *rec, struct ta_err *err);
int ctl_guest_exec(struct ctl *c, char *const argv[], int timeout_s, struct cmd_output *o,
		   struct ta_err *err);
/* Starts argv in the guest without waiting (benchmark servers). */
int ctl_guest_spawn(struct ctl *c, char *const argv[], struct ta_err *err);
void ctl_guest_stats_begin(struct ctl *c);
void ctl_guest_stats_end(struct ctl *c, struct run_record *rec);
/* The QEMU process id of the guest (for the trace filter), 0 if unknown. */
int ctl_guest_qemu_pid(struct ctl *c);
/* Destroys the current guest (and a noise guest). */
void ctl_guest_down(struct ctl *c);
int ctl_noise_guest_up(struct ctl *c, const struct plan_config *pc, struct ta_err *err);
void ctl_noise_guest_down(struct ctl *c);

#endif
