/* slurm: sbatch, squeue and scancel through argv arrays; see slurm.h. */
#include "slurm.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostexec.h"

/* The fields slurm_queue asks squeue for, in slurm_job's order. */
#define QUEUE_FORMAT "%i|%j|%T|%N|%r"

/*
 * Runs a Slurm tool, bounded by SLURM_TOOL_TIMEOUT.  0 when it exited 0
 * (its stdout in *out); else -1 with err naming the tool, how it ended
 * and the end of what it said.
 */
static int run_tool(char *const argv[], struct strbuf *out, struct ta_err *err)
{
	struct hostexec_result res;
	if (hostexec_run_client(argv, SLURM_TOOL_TIMEOUT, &res, err) < 0) {
		err_prefix(err, "%s", argv[0]);
		return -1;
	}
	int rc = 0;
	if (res.exit_code != 0) {
		struct strbuf what = STRBUF_INIT;
		hostexec_describe(&res, SLURM_TOOL_TIMEOUT, &what);
		const struct strbuf *said = res.errout.len ? &res.errout : &res.out;
		size_t len = said->len;
		while (len && (said->buf[len - 1] == '\n' || said->buf[len - 1] == ' '))
			len--;
		/* Its last 300 bytes, lines joined: one message. */
		size_t from = len > 300 ? len - 300 : 0;
		struct strbuf tail = STRBUF_INIT;
		for (size_t i = from; i < len; i++)
			if (said->buf[i] == '\n')
				strbuf_addstr(&tail, "; ");
			else
				strbuf_addch(&tail, said->buf[i]);
		rc = err_set(err, EXIT_FAILURE_RUN, "%s %s%s%s", argv[0], strbuf_str(&what),
			     len ? ": " : "", strbuf_str(&tail));
		strbuf_release(&tail);
		strbuf_release(&what);
	} else {
		strbuf_add(out, res.out.buf ? res.out.buf : "", res.out.len);
	}
	hostexec_result_release(&res);
	return rc;
}

/* A growable argv of owned strings. */
struct args {
	char **v;
	size_t n;
};

static void args_add(struct args *a, const char *s)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

static void args_addf(struct args *a, const char *opt, const char *value)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s=%s", opt, value);
	args_add(a, strbuf_str(&sb));
	strbuf_release(&sb);
}

static void args_release(struct args *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

char *slurm_submit_parse(const char *text)
{
	size_t skip = strspn(text, " \t\n");
	size_t len = strspn(text + skip, "0123456789");
	char end = text[skip + len];
	if (!len || (end && end != ';' && end != '\n' && end != ' '))
		return NULL;
	char *id = xmalloc(len + 1);
	memcpy(id, text + skip, len);
	id[len] = '\0';
	return id;
}

int slurm_submit(const struct slurm_submit *s, char **job_id, struct ta_err *err)
{
	struct args a = { 0 };
	args_add(&a, "sbatch");
	args_add(&a, "--parsable");
	args_add(&a, "--exclusive");
	args_add(&a, "--no-requeue");
	args_addf(&a, "--job-name", s->job_name);
	if (s->partition)
		args_addf(&a, "--partition", s->partition);
	if (s->exclude)
		args_addf(&a, "--exclude", s->exclude);
	args_addf(&a, "--output", s->output);
	args_addf(&a, "--chdir", s->chdir);
	for (char *const *e = s->extra; e && *e; e++)
		args_add(&a, *e);
	args_add(&a, s->script);
	for (char *const *e = s->args; *e; e++)
		args_add(&a, *e);
	struct strbuf out = STRBUF_INIT;
	int rc = run_tool(a.v, &out, err);
	args_release(&a);
	if (rc == 0) {
		*job_id = slurm_submit_parse(strbuf_str(&out));
		if (!*job_id)
			rc = err_set(err, EXIT_FAILURE_RUN, "sbatch printed no job id: '%.200s'",
				     strbuf_str(&out));
	}
	strbuf_release(&out);
	return rc;
}

/* The next '|'-separated field of [*p, end), as a new string; the last takes the rest. */
static char *next_field(const char **p, const char *end, bool last)
{
	const char *f = *p;
	const char *bar = last ? NULL : memchr(f, '|', (size_t)(end - f));
	const char *stop = bar ? bar : end;
	char *s = xmalloc((size_t)(stop - f) + 1);
	memcpy(s, f, (size_t)(stop - f));
	s[stop - f] = '\0';
	*p = bar ? bar + 1 : end;
	return s;
}

int slurm_queue_parse(const char *text, struct slurm_job **jobs, size_t *njobs,
		      struct ta_err *err)
{
	struct slurm_job *v = NULL;
	size_t n = 0;
	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n");
		const char *end = line + len, *next = end + (*end == '\n');
		if (strspn(line, " \t") >= len) {
			line = next;
			continue;
		}
		if (!memchr(line, '|', len) || line[0] == '|') {
			slurm_jobs_free(v, n);
			return err_set(err, EXIT_FAILURE_RUN, "squeue printed '%.*s', not "
				       "'id|name|state|nodes|reason'", (int)(len > 200 ? 200 : len),
				       line);
		}
		v = xrealloc(v, (n + 1) * sizeof(*v));
		struct slurm_job *j = &v[n++];
		const char *p = line;
		j->id = next_field(&p, end, false);
		j->name = next_field(&p, end, false);
		j->state = next_field(&p, end, false);
		j->nodes = next_field(&p, end, false);
		j->reason = next_field(&p, end, true);	/* a reason may hold '|' */
		line = next;
	}
	*jobs = v;
	*njobs = n;
	return 0;
}

int slurm_queue(const char *const *names, size_t nnames, struct slurm_job **jobs,
		size_t *njobs, struct ta_err *err)
{
	*jobs = NULL;
	*njobs = 0;
	if (!nnames)
		return 0;
	struct strbuf list = STRBUF_INIT;
	for (size_t i = 0; i < nnames; i++)
		strbuf_addf(&list, "%s%s", i ? "," : "", names[i]);
	struct args a = { 0 };
	args_add(&a, "squeue");
	args_add(&a, "--noheader");
	args_add(&a, "--states=all");
	args_addf(&a, "--name", strbuf_str(&list));
	args_addf(&a, "--format", QUEUE_FORMAT);
	struct strbuf out = STRBUF_INIT;
	int rc = run_tool(a.v, &out, err);
	if (rc == 0)
		rc = slurm_queue_parse(strbuf_str(&out), jobs, njobs, err);
	strbuf_release(&out);
	args_release(&a);
	strbuf_release(&list);
	return rc;
}

void slurm_jobs_free(struct slurm_job *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].id);
		free(v[i].name);
		free(v[i].state);
		free(v[i].nodes);
		free(v[i].reason);
	}
	free(v);
}

bool slurm_state_active(const char *state)
{
	static const char *const final[] = {
		"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
		"BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED", "SPECIAL_EXIT", NULL
	};
	for (const char *const *f = final; *f; f++)
		if (!strcmp(state, *f))
			return false;
	/* "CANCELLED by 0" in some outputs */
	return strncmp(state, "CANCELLED", 9) != 0;
}

int slurm_cancel(const char *const *ids, size_t nids, const char *const *names, size_t nnames,
		 struct ta_err *err)
{
	int rc = 0;
	if (nids) {
		struct args a = { 0 };
		args_add(&a, "scancel");
		for (size_t i = 0; i < nids; i++)
			args_add(&a, ids[i]);
		struct strbuf out = STRBUF_INIT;
		rc = run_tool(a.v, &out, err);
		strbuf_release(&out);
		args_release(&a);
	}
	for (size_t i = 0; i < nnames; i++) {
		struct args a = { 0 };
		args_add(&a, "scancel");
		args_addf(&a, "--name", names[i]);
		struct strbuf out = STRBUF_INIT;
		if (run_tool(a.v, &out, err) < 0)
			rc = -1;
		strbuf_release(&out);
		args_release(&a);
	}
	return rc;
}

bool slurm_error_permanent(const char *msg)
{
	/* sbatch's words (Slurm 20-24) for a request no retry can satisfy. */
	static const char *const permanent[] = {
		"invalid partition", "Invalid partition", "Invalid account",
		"Invalid qos", "Invalid QOS", "Requested node configuration is not available",
		"Node count specification invalid", "More processors requested than permitted",
		"Invalid feature specification", "Invalid node name specified",
		"Job violates accounting/QOS policy", "Invalid generic resource",
		"unrecognized option", "invalid option", NULL
	};
	for (const char *const *p = permanent; *p; p++)
		if (strstr(msg, *p))
			return true;
	return false;
}

/* Whether `tool` is an executable file in a directory of PATH. */
static bool on_path(const char *tool)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb, "%.*s/%s", (int)len, len ? p : ".", tool);
		bool ok = access(strbuf_str(&sb), X_OK) == 0;
		strbuf_release(&sb);
		if (ok)
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

int slurm_tools_check(struct ta_err *err)
{
	static const char *const tools[] = { "sbatch", "squeue", "scancel", "sinfo", NULL };
	for (const char *const *t = tools; *t; t++)
		if (!on_path(*t))
			return err_set(err, EXIT_BAD_INPUT, "%s is not on PATH: a Slurm sweep needs "
				       "Slurm's client tools (Debian: slurm-client) where it is "
				       "started", *t);
	return 0;
}

bool slurm_node_state_usable(const char *state)
{
	static const char *const bad[] = { "down", "drain", "drng", "fail", "futr", "inval",
					   "maint", "unk", "boot_fail", "reboot_issued", NULL };
	size_t len = strlen(state);
	if (!len || state[len - 1] == '*')	/* not responding */
		return false;
	for (const char *const *b = bad; *b; b++)
		if (!strncmp(state, *b, strlen(*b)))
			return false;
	return true;
}

int slurm_nodes_parse(const char *text, const char *partition, struct slurm_node **nodes,
		      size_t *n, struct ta_err *err)
{
	struct slurm_node *v = NULL;
	size_t count = 0;
	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n");
		const char *end = line + len, *next = end + (*end == '\n');
		if (strspn(line, " \t") >= len) {
			line = next;
			continue;
		}
		const char *p = line;
		if (!memchr(line, '|', len)) {
			slurm_nodes_free(v, count);
			return err_set(err, EXIT_FAILURE_RUN, "sinfo printed '%.*s', not "
				       "'node|state|partition'", (int)(len > 200 ? 200 : len), line);
		}
		char *name = next_field(&p, end, false);
		char *state = next_field(&p, end, false);
		char *part = next_field(&p, end, true);
		size_t pl = strlen(part);
		bool mine = partition ? (!strcmp(part, partition) ||
					 (pl && part[pl - 1] == '*' && pl - 1 == strlen(partition) &&
					  !strncmp(part, partition, pl - 1)))
				      : pl && part[pl - 1] == '*';
		for (size_t i = 0; mine && i < count; i++)
			mine = strcmp(v[i].name, name) != 0;
		if (mine && *name) {
			v = xrealloc(v, (count + 1) * sizeof(*v));
			v[count++] = (struct slurm_node){ .name = name, .state = state,
							  .usable = slurm_node_state_usable(state) };
		} else {
			free(name);
			free(state);
		}
		free(part);
		line = next;
	}
	*nodes = v;
	*n = count;
	return 0;
}

int slurm_nodes(const char *partition, struct slurm_node **nodes, size_t *n,
		struct ta_err *err)
{
	*nodes = NULL;
	*n = 0;
	struct args a = { 0 };
	args_add(&a, "sinfo");
	args_add(&a, "--noheader");
	args_add(&a, "--Node");
	if (partition)
		args_addf(&a, "--partition", partition);
	args_addf(&a, "--format", "%N|%t|%P");
	struct strbuf out = STRBUF_INIT;
	int rc = run_tool(a.v, &out, err);
	if (rc == 0)
		rc = slurm_nodes_parse(strbuf_str(&out), partition, nodes, n, err);
	strbuf_release(&out);
	args_release(&a);
	return rc;
}

void slurm_nodes_free(struct slurm_node *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].state);
	}
	free(v);
}
