/*
 * trace: ganged exits and exit reasons on this host, live, for a while
 * (`trace -d SECS`) or while a command runs (`trace -- CMD ARGS...`).  Same
 * report as `exits`; the session lives in its own tracefs instance, removed
 * on exit, on error and on SIGINT/SIGTERM.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <math.h>

#include "../collectors/exitsum.h"
#include "../collectors/live.h"
#include "../util/mono.h"
#include "cmd.h"

extern char **environ;

static const char *duration;
static const char *algorithm = "vcore";
static int buffer_kib;
static int only_tgid;

static const struct option trace_options[] = {
	OPT_STRING('d', "duration", &duration, "SECS", "trace for SECS seconds"),
	OPT_STRING(0, "algorithm", &algorithm, "RULE",
		   "vcore (state per runner thread, default) or seed (the RFC's per-tgid rule)"),
	OPT_INT(0, "buffer-kib", &buffer_kib, "KIB",
		"per-CPU trace buffer size (default: 256 MiB / CPUs, 1-16 MiB)"),
	OPT_INT('p', "pid", &only_tgid, "TGID", "report only this process (a QEMU pid)"),
	OPT_END(),
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* No SA_RESTART: a signal must interrupt waitpid and the sleep so we clean up. */
static void signals_install(struct sigaction *old_int, struct sigaction *old_term)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, old_int);
	sigaction(SIGTERM, &sa, old_term);
}

static int parse_duration(const char *s, double *out, struct ta_err *err)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (errno || end == s || *end || !(d > 0) || d > 86400 * 365)
		return err_set(err, EXIT_BAD_INPUT,
			       "-d expects a positive number of seconds, not '%s'", s);
	*out = d;
	return 0;
}

static void sleep_for(double secs)
{
	double start = mono_now_s();
	while (!interrupted) {
		double left = secs - (mono_now_s() - start);
		if (left <= 0)
			return;
		mono_sleep_ms(left < 0.2 ? (long)ceil(left * 1000) : 200);
	}
}

/*
 * Runs argv[0..argc) to completion; returns its wait status, or -1 (err set).
 * The option parser compacts argv in place, so it is not NULL-terminated.
 * The command's name as it ended is read while it is a zombie and given to
 * the session (live_name): the reader may meet its records only after it
 * is reaped, when /proc cannot say and the kernel's saved_cmdlines may
 * still hold our own name, which it had before exec.
 */
static int run_command(int argc, char **argv, struct live_session *s, struct ta_err *err)
{
	pid_t pid;
	char **args = xcalloc(argc + 1, sizeof(*args));
	memcpy(args, argv, argc * sizeof(*args));
	/* The command gets stdin/stdout/stderr, not our trace descriptors. */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	int rc = posix_spawnp(&pid, args[0], &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(args);
	if (rc)
		return err_set(err, EXIT_BAD_INPUT, "cannot run '%s': %s", argv[0], strerror(rc));
	int status = 0;
	bool forwarded = false;
	siginfo_t info;
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0) {
		if (errno != EINTR)
			return err_set(err, EXIT_FAILURE_RUN, "waiting for '%s': %s", argv[0],
				       strerror(errno));
		if (interrupted && !forwarded) {
			kill(pid, interrupted);
			forwarded = true;
		}
	}
	live_name(s, (int32_t)pid);	/* a zombie now: its name as it ended */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(err, EXIT_FAILURE_RUN, "waiting for '%s': %s", argv[0],
				       strerror(errno));
	return status;
}

static int cmd_trace_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct ta_err err = { 0 };
	struct live_opts opts = { .buffer_kib = buffer_kib };
	double secs = 0;
	int32_t tgid = only_tgid;

	if (gang_algorithm_parse(algorithm, &opts.algorithm) < 0) {
		err_set(&err, EXIT_BAD_INPUT, "--algorithm must be 'vcore' or 'seed', not '%s'",
			algorithm);
		return cmd_fail(&err);
	}
	if ((duration != NULL) == (argc > 0)) {
		err_set(&err, EXIT_BAD_INPUT, "give either -d SECS or a command to run "
			"('topoadvisor trace -d 10' or 'topoadvisor trace -- CMD ARGS...')");
		return cmd_fail(&err);
	}
	if (duration && parse_duration(duration, &secs, &err) < 0)
		return cmd_fail(&err);
	if (buffer_kib < 0) {
		err_set(&err, EXIT_BAD_INPUT, "--buffer-kib must be positive");
		return cmd_fail(&err);
	}
	if (only_tgid) {
		opts.tgids = &tgid;
		opts.ntgids = 1;
	}

	struct sigaction old_int, old_term;
	signals_install(&old_int, &old_term);
	struct live_session *s;
	if (live_start(&opts, &s, &err) < 0)
		return cmd_fail(&err);
	if (ctx->verbose)
		fprintf(stderr, "topoadvisor: tracing in instance %s\n", live_instance_name(s));

	int status = 0;
	if (argc > 0) {
		status = run_command(argc, argv, s, &err);
		if (status < 0) {
			live_abort(s);
			return cmd_fail(&err);
		}
	} else {
		sleep_for(secs);
	}
	if (interrupted) {
		live_abort(s);
		fprintf(stderr, "topoadvisor: interrupted; the trace instance was removed\n");
		return 128 + interrupted;
	}

	struct gang_result res;
	if (live_stop(s, &res, &err) < 0)
		return cmd_fail(&err);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);

	struct exitsum_meta meta = { .source = "live", .buffer = "", .clock = "mono" };
	struct strbuf out = STRBUF_INIT;
	if (ctx->json)
		exitsum_json(&out, &res, &meta);
	else
		exitsum_text(&out, &res, &meta, ctx->verbose);
	cmd_print(&out);
	strbuf_release(&out);
	gang_result_release(&res);

	if (argc > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		if (WIFEXITED(status))
			warn_emit("'%s' exited with status %d", argv[0], WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			warn_emit("'%s' was killed by signal %d", argv[0], WTERMSIG(status));
		return EXIT_FAILURE_RUN;
	}
	return EXIT_OK;
}

const struct cmd_entry cmd_trace_entry = {
	.no_db = 1,
	.name = "trace",
	.summary = "ganged exits and exit reasons on this host, live",
	.args_usage = "[-d SECS | -- CMD ARGS...]",
	.options = trace_options,
	.help = exitsum_help,
	.min_args = 0,
	.max_args = -1,
	.stop_at_arg = 1,
	.exec = cmd_trace_exec,
};
