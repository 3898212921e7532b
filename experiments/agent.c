/*
 * agent: guest-exec / guest-exec-status through virDomainQemuAgentCommand.
 * The contract is in agent.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>
#include <json-c/json.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

/* util/json.h is a writer only and its json_bool clashes with json-c's type:
 * requests are built with json-c too. */
#include "../util/mono.h"
#include "../util/strbuf.h"
#include "agent.h"

/* Seconds libvirt waits for one agent reply; commands themselves run async. */
#define AGENT_REPLY_TIMEOUT 10

static const char *lv_msg(void)
{
	const char *m = virGetLastErrorMessage();
	return m ? m : "unknown libvirt error";
}

int agent_ping(virDomainPtr dom, struct ta_err *err)
{
	char *r = virDomainQemuAgentCommand(dom, "{\"execute\":\"guest-ping\"}", 2, 0);
	if (!r)
		return err_set(err, EXIT_FAILURE_RUN, "%s", lv_msg());
	free(r);
	return 0;
}

void agent_exec_request(struct strbuf *out, const char *const *argv)
{
	json_object *root = json_object_new_object(), *args = json_object_new_object(),
		    *arg = json_object_new_array();
	json_object_object_add(root, "execute", json_object_new_string("guest-exec"));
	json_object_object_add(args, "path", json_object_new_string(argv[0]));
	for (size_t i = 1; argv[i]; i++)
		json_object_array_add(arg, json_object_new_string(argv[i]));
	json_object_object_add(args, "arg", arg);
	json_object_object_add(args, "capture-output", json_object_new_boolean(1));
	json_object_object_add(root, "arguments", args);
	strbuf_addstr(out, json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

/* The "return" object of an agent reply, or NULL. */
static json_object *reply_return(json_object *root)
{
	json_object *ret;
	if (!root || !json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "return", &ret) ||
	    !json_object_is_type(ret, json_type_object))
		return NULL;
	return ret;
}

/* Decodes the base64 member `key` of ret into *buf (always NUL-terminated). */
static void b64_member(json_object *ret, const char *key, char **buf, size_t *len)
{
	json_object *v;
	if (!json_object_object_get_ex(ret, key, &v) || !json_object_is_type(v, json_type_string)) {
		*buf = xstrdup("");
		*len = 0;
		return;
	}
	gsize n = 0;
	guchar *d = g_base64_decode(json_object_get_string(v), &n);
	*buf = xmalloc(n + 1);
	if (n)
		memcpy(*buf, d, n);
	(*buf)[n] = 0;
	*len = n;
	g_free(d);
}

static bool bool_member(json_object *ret, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(ret, key, &v) && json_object_get_boolean(v);
}

int agent_vcpus_parse(const char *reply, struct ta_err *err)
{
	json_object *root = json_tokener_parse(reply), *ret;
	if (!root || !json_object_object_get_ex(root, "return", &ret) ||
	    !json_object_is_type(ret, json_type_array)) {
		json_object_put(root);
		return err_set(err, EXIT_FAILURE_RUN, "guest-get-vcpus: unexpected reply: %.200s",
			       reply);
	}
	int online = 0;
	for (size_t i = 0; i < json_object_array_length(ret); i++) {
		json_object *v = json_object_array_get_idx(ret, i);
		online += json_object_is_type(v, json_type_object) && bool_member(v, "online");
	}
	json_object_put(root);
	return online;
}

int agent_online_vcpus(virDomainPtr dom, struct ta_err *err)
{
	char *r = virDomainQemuAgentCommand(dom, "{\"execute\":\"guest-get-vcpus\"}",
					    AGENT_REPLY_TIMEOUT, 0);
	if (!r)
		return err_set(err, EXIT_FAILURE_RUN, "guest-get-vcpus: %s", lv_msg());
	int n = agent_vcpus_parse(r, err);
	free(r);
	return n;
}

int agent_status_parse(const char *reply, struct agent_result *res, struct ta_err *err)
{
	json_object *root = json_tokener_parse(reply);
	json_object *ret = reply_return(root);
	if (!ret) {
		json_object_put(root);
		return err_set(err, EXIT_FAILURE_RUN, "guest-exec-status: unexpected reply: %.200s",
			       reply);
	}
	if (!bool_member(ret, "exited")) {
		json_object_put(root);
		return 0;
	}
	json_object *v;
	res->exitcode = json_object_object_get_ex(ret, "exitcode", &v) ? json_object_get_int(v) : -1;
	res->signal = json_object_object_get_ex(ret, "signal", &v) ? json_object_get_int(v) : 0;
	free(res->out);
	free(res->err);
	b64_member(ret, "out-data", &res->out, &res->out_len);
	b64_member(ret, "err-data", &res->err, &res->err_len);
	res->out_truncated = bool_member(ret, "out-truncated");
	res->err_truncated = bool_member(ret, "err-truncated");
	json_object_put(root);
	return 1;
}

/* Starts argv in the guest; returns its guest pid or -1. */
static long long exec_start(virDomainPtr dom, const char *const *argv, struct ta_err *err)
{
	struct strbuf req = STRBUF_INIT;
	agent_exec_request(&req, argv);
	char *r = virDomainQemuAgentCommand(dom, strbuf_str(&req), AGENT_REPLY_TIMEOUT, 0);
	strbuf_release(&req);
	if (!r)
		return err_set(err, EXIT_FAILURE_RUN, "guest-exec %s: %s", argv[0], lv_msg());
	json_object *root = json_tokener_parse(r);
	json_object *ret = reply_return(root), *pid;
	long long p = -1;
	if (ret && json_object_object_get_ex(ret, "pid", &pid))
		p = json_object_get_int64(pid);
	else
		err_set(err, EXIT_FAILURE_RUN, "guest-exec %s: unexpected reply: %.200s", argv[0], r);
	json_object_put(root);
	free(r);
	return p;
}

/* One guest-exec-status call; see agent_status_parse for the result. */
static int exec_status(virDomainPtr dom, long long pid, struct agent_result *res,
		       struct ta_err *err)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd),
		 "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":%lld}}", pid);
	char *r = virDomainQemuAgentCommand(dom, cmd, AGENT_REPLY_TIMEOUT, 0);
	if (!r)
		return err_set(err, EXIT_FAILURE_RUN, "guest-exec-status %lld: %s", pid, lv_msg());
	int rc = agent_status_parse(r, res, err);
	free(r);
	return rc;
}

static double clamp(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

int agent_poll_delay_ms(double elapsed_s, double expect_s)
{
	double dense_from = expect_s > 0 ? expect_s - AGENT_POLL_AHEAD_S : 0;
	if (elapsed_s < dense_from)
		/* Sparse: half the time so far (an early end is seen within half its
		 * length again), never past the point where polls turn dense. */
		return (int)lround(clamp(fmin(elapsed_s / 2, dense_from - elapsed_s) * 1000,
					 AGENT_POLL_MIN_MS, AGENT_POLL_SPARSE_MS));
	/* Dense, then slower the longer the command runs past its expected end. */
	return (int)lround(clamp((elapsed_s - dense_from) * 1000 / 4, AGENT_POLL_MIN_MS,
				 AGENT_POLL_MAX_MS));
}

int agent_exec(virDomainPtr dom, const char *const *argv, int timeout_s,
	       struct agent_result *res, struct ta_err *err)
{
	return agent_exec_cancellable(dom, argv, timeout_s, 0, NULL, res, err);
}

int agent_exec_cancellable(virDomainPtr dom, const char *const *argv, int timeout_s,
			   double expect_s, volatile sig_atomic_t *cancel,
			   struct agent_result *res, struct ta_err *err)
{
	memset(res, 0, sizeof(*res));
	res->exitcode = -1;
	double t0 = mono_now_s();
	long long pid = exec_start(dom, argv, err);
	if (pid < 0)
		return -1;
	/* The command's own clock starts once the agent has started it. */
	double started = mono_now_s();
	int st = 0;
	for (;;) {
		double now = mono_now_s();
		if (now - t0 >= timeout_s)
			break;
		if (cancel && *cancel) {
			res->cancelled = true;
			break;
		}
		mono_sleep_ms(agent_poll_delay_ms(now - started, expect_s));
		if ((st = exec_status(dom, pid, res, err)) != 0)
			break;
	}
	if (st < 0)
		return -1;
	if (st == 0) {
		/* Timed out or cancelled: kill it, then collect its (partial) output once. */
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "%lld", pid);
		const char *kill_argv[] = { "kill", "-9", pidbuf, NULL };
		struct agent_result kr;
		struct ta_err kerr = { 0 };
		if (agent_exec(dom, kill_argv, 5, &kr, &kerr) == 0)
			agent_result_release(&kr);
		for (int i = 0; i < 40 && (st = exec_status(dom, pid, res, err)) == 0; i++)
			mono_sleep_ms(AGENT_POLL_MAX_MS / 4);
		res->timed_out = !res->cancelled;
		res->exitcode = -1;
		if (st < 0)
			return -1;
	}
	res->seconds = mono_now_s() - t0;
	if (!res->out) {
		res->out = xstrdup("");
		res->err = xstrdup("");
	}
	return 0;
}

int agent_spawn(virDomainPtr dom, const char *const *argv, struct ta_err *err)
{
	return exec_start(dom, argv, err) < 0 ? -1 : 0;
}

void agent_result_release(struct agent_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}
