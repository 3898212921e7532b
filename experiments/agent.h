/*
 * agent: run commands in a guest through the QEMU guest agent.
 *
 * agent_exec() sends guest-exec (argv, captured output), then polls
 * guest-exec-status (agent_poll_delay_ms says when) until the command exits
 * or the timeout passes; on timeout it kills the command in the guest
 * (guest-exec of "kill -9 PID") and reports what output there was.  Output arrives
 * base64-encoded and only once: the status call that says exited:true is the
 * last one allowed for that pid.  Replies are parsed with json-c.
 */
#ifndef TA_AGENT_H
#define TA_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>

#include "../util/err.h"
#include "../util/strbuf.h"

/*
 * Polling guest-exec-status: every call wakes the agent in the guest (CPU
 * taken from what is measured there), and an exit is seen only at the next
 * call.  While a command is expected to run, polls are sparse: half the
 * time it has run so far, at least AGENT_POLL_MIN_MS, at most
 * AGENT_POLL_SPARSE_MS (an early end is still seen soon); from
 * AGENT_POLL_AHEAD_S before its expected end they are dense, every
 * AGENT_POLL_MIN_MS, slowing by a quarter of the time it runs late up to
 * AGENT_POLL_MAX_MS.  A command of unknown length is "expected" to end at
 * once: dense first, slower the longer it runs.
 */
#define AGENT_POLL_MIN_MS 10
#define AGENT_POLL_SPARSE_MS 500
#define AGENT_POLL_MAX_MS 200
#define AGENT_POLL_AHEAD_S 0.05

struct agent_result {
	int exitcode;		/* -1 when killed by a signal or timed out */
	int signal;		/* 0 unless killed by a signal */
	bool timed_out;		/* we killed it after the timeout */
	bool cancelled;		/* we killed it because *cancel was set */
	char *out, *err;	/* NUL-terminated (may contain NULs before) */
	size_t out_len, err_len;
	bool out_truncated, err_truncated;	/* the agent's output cap hit */
	double seconds;		/* exec -> exited, as seen from the host */
};

/* One guest-ping; 0 when the agent answers, else -1 with libvirt's reason. */
int agent_ping(virDomainPtr dom, struct ta_err *err);

/*
 * How many of the guest's logical CPUs are online (guest-get-vcpus: the
 * agent reads sysfs itself, no process is started in the guest); -1 with a
 * reason when the agent fails or answers something else.
 */
int agent_online_vcpus(virDomainPtr dom, struct ta_err *err);

/*
 * Runs argv[0] (searched in the guest's PATH) with argv[1..] (NULL-ended)
 * and waits up to timeout_s seconds.  Returns 0 when the command ran (look
 * at res->exitcode and res->timed_out), -1 when the agent failed.
 */
int agent_exec(virDomainPtr dom, const char *const *argv, int timeout_s,
	       struct agent_result *res, struct ta_err *err);
void agent_result_release(struct agent_result *res);

/*
 * Starts argv in the guest and returns at once, without waiting for it
 * (benchmark servers, noise loads in a guest).  Its output is not read.
 */
/*
 * agent_exec for a command expected to take expect_s seconds (0: unknown),
 * that also kills it as soon as *cancel becomes non-zero (a SIGINT/SIGTERM
 * flag), instead of waiting for it to finish.
 */
int agent_exec_cancellable(virDomainPtr dom, const char *const *argv, int timeout_s,
			   double expect_s, volatile sig_atomic_t *cancel,
			   struct agent_result *res, struct ta_err *err);

int agent_spawn(virDomainPtr dom, const char *const *argv, struct ta_err *err);

/*
 * Pure helpers, exposed for tests: build the guest-exec request, and parse a
 * guest-exec-status reply into res (returns 1 exited, 0 still running,
 * -1 malformed).
 */
void agent_exec_request(struct strbuf *out, const char *const *argv);
/* Milliseconds to wait before the next status call, elapsed_s after the start. */
int agent_poll_delay_ms(double elapsed_s, double expect_s);
int agent_status_parse(const char *reply, struct agent_result *res, struct ta_err *err);
/* Online CPUs in a guest-get-vcpus reply; -1 when it is not one. */
int agent_vcpus_parse(const char *reply, struct ta_err *err);

#endif
