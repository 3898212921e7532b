/*
 * guestbg: background processes in the measured guest; see guestbg.h.
 */
#include "guestbg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cpuset.h"
#include "../util/strbuf.h"
#include "agent.h"

/* Seconds an agent call of these scripts may take (a busy TCG guest is slow). */
#define GUESTBG_AGENT_TIMEOUT_S 60

/* The agent's stderr (else stdout), trimmed, for a message. */
static void agent_excerpt(const struct agent_result *res, struct strbuf *sb)
{
	const char *s = res->err_len ? res->err : res->out ? res->out : "";
	size_t len = strlen(s);
	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	if (len > 400)
		len = 400;	/* the first lines: a tool says what is wrong before its usage */
	for (size_t i = 0; i < len; i++)
		strbuf_addch(sb, s[i] == '\n' ? ' ' : s[i]);
	if (!len)
		strbuf_addf(sb, "exit status %d", res->exitcode);
}

/* Runs `sh -c script sh args...` in the guest; 0 when it exited 0. */
static int run_script(virDomainPtr dom, const char *script, const char *const *args,
		      size_t nargs, struct agent_result *res, struct ta_err *err)
{
	const char **argv = xcalloc(nargs + 5, sizeof(*argv));
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = "sh";
	for (size_t i = 0; i < nargs; i++)
		argv[4 + i] = args[i];
	int rc = agent_exec(dom, argv, GUESTBG_AGENT_TIMEOUT_S, res, err);
	free(argv);
	if (rc < 0)
		return -1;
	if (res->timed_out) {
		agent_result_release(res);
		return err_set(err, EXIT_FAILURE_RUN, "the guest did not finish the command "
			       "within %d s", GUESTBG_AGENT_TIMEOUT_S);
	}
	return 0;
}

static void proc_add(struct guestbg *bg, const char *pid, const char *errfile)
{
	bg->v = xrealloc(bg->v, (bg->n + 1) * sizeof(*bg->v));
	bg->v[bg->n++] = (struct guestbg_proc){ xstrdup(pid), xstrdup(errfile) };
}

int guestbg_start(virDomainPtr dom, const char *sets, char *const argv[], struct guestbg *bg,
		  struct ta_err *err)
{
	size_t argc = 0;
	while (argv[argc])
		argc++;
	const char **args = xcalloc(argc + 2, sizeof(*args));
	args[0] = sets && *sets ? sets : "-";
	for (size_t i = 0; i < argc; i++)
		args[1 + i] = argv[i];
	struct agent_result res;
	int rc = run_script(dom, GUESTBG_START_SCRIPT, args, argc + 1, &res, err);
	free(args);
	if (rc < 0)
		return -1;
	struct guestbg mine = { 0 };
	char pid[32], errfile[256];
	int used;
	for (const char *p = res.exitcode == 0 && res.out ? res.out : "";
	     sscanf(p, " %31[0-9] %255s%n", pid, errfile, &used) == 2; p += used)
		proc_add(&mine, pid, errfile);
	if (res.exitcode != 0 || !mine.n) {
		struct strbuf sb = STRBUF_INIT;
		agent_excerpt(&res, &sb);
		err_set(err, EXIT_FAILURE_RUN, "'%s' did not keep running in the guest%s%s: %s",
			argv[0], sets ? " on vCPUs " : "", sets ? sets : "", strbuf_str(&sb));
		strbuf_release(&sb);
		agent_result_release(&res);
		guestbg_release(&mine);
		return -1;
	}
	for (size_t i = 0; i < mine.n; i++)
		proc_add(bg, mine.v[i].pid, mine.v[i].errfile);
	guestbg_release(&mine);
	agent_result_release(&res);
	return 0;
}

int guestbg_start_noise(virDomainPtr dom, enum noise_kind kind, const char *vcpus, int threads,
			char *const argv[], struct guestbg *bg, struct ta_err *err)
{
	struct cpuset cs;
	if (!vcpus || cpuset_parse(vcpus, &cs, err) < 0)
		return vcpus ? -1 : err_set(err, EXIT_BAD_INPUT, "an in-guest load needs vcpus");
	struct strbuf sets = STRBUF_INIT;
	int rc;
	if (kind == NOISE_SPIN) {
		char *spin[] = GUESTBG_SPIN_ARGV;
		size_t n = threads > 0 ? (size_t)threads : cs.n;
		for (size_t i = 0; i < n; i++)
			strbuf_addf(&sets, "%s%d", i ? " " : "", cs.cpus[i % cs.n]);
		rc = guestbg_start(dom, strbuf_str(&sets), spin, bg, err);
	} else if (kind == NOISE_COMMAND && argv && argv[0]) {
		cpuset_format(&cs, &sets);
		rc = guestbg_start(dom, strbuf_str(&sets), argv, bg, err);
	} else {
		rc = err_set(err, EXIT_BAD_INPUT, "only spin and command loads run inside "
			     "the measured guest");
	}
	strbuf_release(&sets);
	cpuset_release(&cs);
	return rc;
}

int guestbg_stop(virDomainPtr dom, struct guestbg *bg, int grace_ms, struct strbuf *ended,
		 struct ta_err *err)
{
	if (!bg->n)
		return 0;
	char tenths[16];
	snprintf(tenths, sizeof(tenths), "%d", grace_ms > 0 ? (grace_ms + 99) / 100 : 0);
	const char **args = xcalloc(2 * bg->n + 2, sizeof(*args));
	size_t n = 0;
	args[n++] = tenths;
	for (size_t i = 0; i < bg->n; i++) {
		args[n++] = bg->v[i].pid;
		args[n++] = bg->v[i].errfile;
	}
	struct agent_result res;
	int rc = run_script(dom, GUESTBG_STOP_SCRIPT, args, n, &res, err);
	free(args);
	guestbg_release(bg);
	if (rc < 0)
		return -1;
	if (ended) {
		/* "PID: stderr" lines, the last one's newline dropped. */
		const char *o = res.out ? res.out : "";
		size_t len = strlen(o);
		while (len && (o[len - 1] == '\n' || o[len - 1] == ' '))
			len--;
		for (size_t i = 0; i < len; i++) {
			if (o[i] == '\n')
				strbuf_addstr(ended, "; ");
			else
				strbuf_addch(ended, o[i]);
		}
	}
	if (res.exitcode != 0) {
		struct strbuf sb = STRBUF_INIT;
		agent_excerpt(&res, &sb);
		err_set(err, EXIT_FAILURE_RUN, "stopping background processes in the guest: %s",
			strbuf_str(&sb));
		strbuf_release(&sb);
		rc = -1;
	}
	agent_result_release(&res);
	return rc;
}

void guestbg_release(struct guestbg *bg)
{
	for (size_t i = 0; i < bg->n; i++) {
		free(bg->v[i].pid);
		free(bg->v[i].errfile);
	}
	free(bg->v);
	bg->v = NULL;
	bg->n = 0;
}
