/*
 * sshexec: the controller of a sweep run across hosts over SSH (executor:
 * ssh, hosts: [h1, h2, ...]).  As with Slurm (dispatch.h) the unit of work
 * is a block — one repetition, every surviving configuration once, in the
 * stored order — run by the same `topoadvisor run-block` worker (worker.h)
 * with the same per-run code as a local sweep; here the worker is started
 * over ssh as `run-block -`: the request goes on its stdin and the result
 * database comes back on its stdout, so no file system is shared.
 *
 * ssh is run with an argv (no shell here); the remote command is our own
 * words only (the program's path and "run-block -", each checked to be
 * plain path characters and quoted), the host names pass through to ssh,
 * so user, port, identity and jump host come from OpenSSH's own
 * configuration (~/.ssh/config, or executor.ssh_config as ssh -F).  One
 * connection per host is shared (ControlMaster, its socket in a private
 * 0700 directory, ended with the sweep); BatchMode, so a host that asks
 * for a password fails instead of waiting; ServerAlive, so a host that
 * stops answering is lost within ~15 s.
 *
 * One block per host at a time.  A block whose attempt fails (the worker
 * failed, the connection was lost: exit 255, a host killed) is tried again
 * as its next attempt on another host when one is free (a host that failed
 * it is its last choice), up to executor.max_attempts; a host failing
 * SSH_HOST_FAILS attempts in a row is left out of the sweep, said in the
 * progress.  Every attempt is recorded (block_attempts) before ssh starts
 * and the first complete result of a block is ingested in one transaction
 * (db-blocks.h), so a block is never stored twice.  A race asks its
 * scheduler after block k once blocks 1..k are complete, as dispatch
 * does, and runs at most one block per host past the race's last look.
 *
 * A controller killed (SIGKILL) leaves its attempts recorded as away:
 * `resume` marks them failed ("the controller stopped during this
 * attempt") and runs their blocks again (a worker of the killed controller
 * still running on its host holds that host's lock until it ends: the new
 * attempt there waits for it, or fails and goes elsewhere).
 * SIGINT/SIGTERM end the ssh clients and the sweep as interrupted.
 */
#ifndef TA_SSHEXEC_H
#define TA_SSHEXEC_H

#include "../schema/db.h"
#include "config.h"
#include "controller.h"
#include "plan.h"

/* Attempts in a row a host may fail before the sweep goes on without it. */
#define SSH_HOST_FAILS 2

/*
 * Runs (or continues) experiment exp_id on the hosts of x over ssh; opts
 * as for controller_run (sysfs_root goes to the workers, "%n" standing for
 * each host's name).  Result files are kept in a work directory beside the
 * database (executor.shared_dir when given).  0 when the sweep went to its
 * end or was interrupted (see summary), -1 when it could not go on.
 */
int sshexec_run(struct db *db, const struct plan *plan, int64_t exp_id,
		const struct executor_settings *x, const struct controller_opts *opts,
		struct controller_summary *summary, struct ta_err *err);

/* Checks what an ssh sweep needs here: hosts named, an ssh client. */
int sshexec_check(const struct executor_settings *x, struct ta_err *err);

/*
 * The remote command line for words: each word single-quoted; -1 when a
 * word holds anything but letters, digits and "/._+-=:,", none of which
 * needs quoting (so the quoting cannot be escaped).
 */
int sshexec_remote_command(const char *const *words, struct strbuf *out);

#endif
