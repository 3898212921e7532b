/*
 * controller: the sweep loop and the host-side steps of a run; the guest
 * side is in controller-guest.c.  See controller.h.
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../collectors/benchparse.h"
#include "../collectors/live.h"
#include "../collectors/traps.h"
#include "../schema/db-controller.h"
#include "../schema/db-race.h"
#include "../schema/db-runs.h"
#include "../util/json.h"
#include "../util/mono.h"
#include "../util/warn.h"
#include "controller-int.h"
#include "hostexec.h"
#include "hostlock.h"
#include "knobs.h"
#include "noise.h"
#include "progress.h"
#include "reuse.h"

static volatile sig_atomic_t cancel_flag;

static void on_signal(int sig)
{
	cancel_flag = sig;
}

/* Frees what a command left in o. */
static void cmd_output_release(struct cmd_output *o)
{
	strbuf_release(&o->out);
	strbuf_release(&o->errout);
	strbuf_release(&o->what);
	strbuf_release(&o->cut);
	strbuf_release(&o->leftover);
}

/* ---- host facts ------------------------------------------------------- */

static void cpu_model(char *buf, size_t n)
{
	buf[0] = '\0';
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		/* x86: "model name"; POWER: "cpu" */
		if (strncmp(line, "model name", 10) && strncmp(line, "cpu\t", 4))
			continue;
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		colon++;
		while (*colon == ' ')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, n, "%s", colon);
		break;
	}
	fclose(f);
}

char *controller_host_facts_json(void)
{
	struct host_facts h;
	host_facts_read(&h);
	struct utsname u;
	char model[256];
	cpu_model(model, sizeof(model));
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &sb, false);
	json_obj_begin(&w);
	json_key(&w, "arch"); json_str(&w, config_arch_name(h.arch));
	if (uname(&u) == 0) {
		json_key(&w, "machine"); json_str(&w, u.machine);
		json_key(&w, "kernel"); json_str(&w, u.release);
		json_key(&w, "hostname"); json_str(&w, u.nodename);
	}
	json_key(&w, "cpu_model"); json_str(&w, model);
	json_key(&w, "online_cpus"); json_int(&w, h.online_cpus);
	json_key(&w, "possible_cpus"); json_int(&w, h.possible_cpus);
	json_key(&w, "threads_per_core"); json_int(&w, h.threads_per_core);
	json_obj_end(&w);
	return strbuf_detach(&sb);
}

/* ---- checks before the sweep ------------------------------------------ */

int controller_check_privileges(const struct sweep_config *cfg,
				const struct controller_opts *opts, struct ta_err *err)
{
	const char *root = opts->sysfs_root ? opts->sysfs_root : "/";
	if (geteuid() == 0)
		return 0;
	if (cfg->nknobs && !strcmp(root, "/"))
		return err_set(err, EXIT_BAD_INPUT, "%s: changing host knobs needs root; run "
			       "as root or remove the host: section", cfg->path);
	/* Kernel tracing needs root: say so now, not after the first guest boots. */
	if (cfg->runner == RUNNER_AGENT && (cfg->collect.gang_exits || cfg->collect.exit_reasons))
		return err_set(err, EXIT_BAD_INPUT, "%s: this sweep traces KVM exits "
			       "(collect.gang_exits / collect.exit_reasons), which needs root; "
			       "run it as root, or set collect: {gang_exits: false, "
			       "exit_reasons: false} to run without tracing", cfg->path);
	return 0;
}

int controller_check_host(const struct plan *plan, const struct controller_opts *opts,
			  bool for_run, struct ta_err *err)
{
	const struct sweep_config *cfg = plan->cfg;
	const char *root = opts->sysfs_root ? opts->sysfs_root : "/";
	for (size_t i = 0; i < cfg->nknobs; i++) {
		const struct knob_factor *f = &cfg->knobs[i];
		const struct knob *k = knob_lookup(f->name, err);
		if (!k || knob_supported(k, root, err) < 0) {
			err_prefix(err, "%s:%d:%d: host.%s: this host cannot sweep this knob",
				   cfg->path, f->line, f->col, f->name);
			err->code = EXIT_BAD_INPUT;
			return -1;
		}
		for (size_t v = 0; v < f->nvalues; v++) {
			struct strbuf canon = STRBUF_INIT;
			int rc = knob_validate(k, f->values[v], &canon, err);
			strbuf_release(&canon);
			if (rc < 0) {
				err_prefix(err, "%s:%d:%d: host.%s", cfg->path, f->line, f->col,
					   f->name);
				return -1;
			}
		}
	}
	if (for_run && controller_check_privileges(cfg, opts, err) < 0)
		return -1;
	/* Root reaches libvirt (or learns the daemon is down when the sweep starts). */
	if (for_run && geteuid() != 0 && cfg->runner == RUNNER_AGENT &&
	    ctl_guest_check_access(cfg, err) < 0)
		return -1;
	for (size_t i = 0; i < cfg->nnoises; i++)
		if ((cfg->noises[i].kind == NOISE_GUEST || cfg->noises[i].vcpus) &&
		    cfg->runner != RUNNER_AGENT)
			return err_set(err, EXIT_BAD_INPUT, "%s:%d:%d: noise '%s': a guest "
				       "noise load needs the agent runner", cfg->path,
				       cfg->noises[i].line, cfg->noises[i].col,
				       cfg->noises[i].name);
	return 0;
}

/* ---- one run ---------------------------------------------------------- */

/*
 * The last lines of a command's stderr (or stdout), for an error message,
 * as a terminal shows them (a progress counter's CR-rewritten line once).
 */
static void excerpt(const struct cmd_output *o, struct strbuf *sb)
{
	const struct strbuf *src = o->errout.len ? &o->errout : &o->out;
	struct strbuf shown = STRBUF_INIT;
	strbuf_add_overwritten(&shown, strbuf_str(src), src->len);
	const char *s = strbuf_str(&shown);
	size_t len = shown.len;
	if (len > 300) {
		s += len - 300;
		len = 300;
	}
	while (len && s[len - 1] == '\n')
		len--;
	if (len)
		strbuf_addstr(sb, ": ");
	for (size_t i = 0; i < len; i++)
		strbuf_addch(sb, s[i] == '\n' ? ' ' : s[i]);
	strbuf_release(&shown);
}

/* Whether this configuration's benchmark runs in a guest (else on the host). */
static bool in_guest(const struct ctl *c, const struct plan_config *pc)
{
	return c->cfg->runner == RUNNER_AGENT && !pc->rec.host_reference;
}

/*
 * Host CPUs the host runner pins its benchmark to (NULL: unpinned):
 * benchmark.vcpus taken as host CPU numbers (the seeds' host runs pin the
 * benchmark to the CPUs its guest had), else the explicit pinning's CPUs.
 */
static char *host_runner_cpus(const struct ctl *c, const struct plan_config *pc)
{
	const struct pinning *p = pc->pinning;
	if (c->cfg->bench.vcpus)
		return xstrdup(c->cfg->bench.vcpus);
	if (p->policy != PIN_EXPLICIT)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < p->nvcpu_cpus; i++)
		strbuf_addf(&sb, "%s%s", i ? "," : "", p->vcpu_cpus[i]);
	return strbuf_detach(&sb);
}

/*
 * Runs argv where the config's runner says, waiting for it; expect_s: how
 * long it should take (0: unknown), which tells a guest run when to look.
 */
static int run_cmd(struct ctl *c, const struct plan_config *pc, char *const argv[],
		   int timeout_s, double expect_s, struct cmd_output *o, struct ta_err *err)
{
	memset(o, 0, sizeof(*o));
	o->exit_code = -1;
	if (in_guest(c, pc))
		return ctl_guest_exec(c, argv, timeout_s, expect_s, o, err);
	struct hostexec_result res;
	char *cpus = host_runner_cpus(c, pc);
	int rc = hostexec_run(argv, cpus, timeout_s, c->cancel, &res, err);
	free(cpus);
	if (rc < 0)
		return -1;
	o->exit_code = res.signal ? -1 : res.exit_code;
	o->timed_out = res.timed_out;
	o->seconds = res.seconds;
	o->out = res.out;
	o->errout = res.errout;
	o->leftover = res.leftover_names;
	hostexec_describe(&res, timeout_s, &o->what);
	o->out_cut = res.out_dropped > 0;
	if (res.out_dropped)
		hostexec_describe_cut("stdout", res.out_dropped, res.out_dropped_lines, &o->cut);
	if (res.out_dropped && res.errout_dropped)
		strbuf_addstr(&o->cut, "; ");
	if (res.errout_dropped)
		hostexec_describe_cut("stderr", res.errout_dropped, res.errout_dropped_lines,
				      &o->cut);
	if (res.survivors)
		strbuf_addf(&o->leftover, "%sprocesses that survive SIGKILL",
			    o->leftover.len ? ", and " : "");
	return 0;
}

/*
 * Stores a command's output as artifacts NAME.stdout/.stderr, as a terminal
 * shows it (of a line rewritten with CR, its last text: redis-benchmark's
 * progress counter is not kept); output cut at a limit ends with a line
 * that says so, so the artifact never passes for the whole output.
 */
static void store_output(struct run_record *rec, const char *name, const struct cmd_output *o,
			 bool with_stderr)
{
	struct strbuf a = STRBUF_INIT;
	for (int err_stream = 0; err_stream <= (int)with_stderr; err_stream++) {
		const struct strbuf *src = err_stream ? &o->errout : &o->out;
		strbuf_reset(&a);
		strbuf_add_overwritten(&a, src->buf ? src->buf : "", src->len);
		if (o->cut.len)
			strbuf_addf(&a, "%s[topoadvisor: %s]\n",
				    a.len && a.buf[a.len - 1] != '\n' ? "\n" : "", o->cut.buf);
		char key[64];
		snprintf(key, sizeof(key), "%s.%s", name, err_stream ? "stderr" : "stdout");
		runrec_artifact(rec, key, a.buf, a.len);
	}
	strbuf_release(&a);
}

/*
 * What a finished command says beyond its exit status: processes it left
 * running (the run is not clean) and output it lost (its stdout cannot be
 * trusted to hold the result).
 */
static void fail_unclean(struct run_record *rec, const char *what, const struct cmd_output *o)
{
	if (o->leftover.len)
		runrec_fail(rec, "%s left processes running after it ended: %s (ended now; a "
			    "benchmark must wait for what it starts)", what, o->leftover.buf);
	if (o->out_cut)
		runrec_fail(rec, "%s output: %s; its result may be among what was dropped: "
			    "make it print less", what, o->cut.buf);
}

/* Brings the host knobs to this configuration's values (journalled first). */
static int apply_knobs(struct ctl *c, const struct plan_config *pc, struct run_record *rec)
{
	const struct sweep_config *cfg = c->cfg;
	if (!cfg->nknobs)
		return 0;
	bool same = c->applied[0] != NULL;
	for (size_t i = 0; i < cfg->nknobs; i++)
		if (!c->applied[i] || strcmp(c->applied[i], pc->knob_values[i]))
			same = false;
	if (same)
		return 0;
	/* The same rule plan's boot count follows (reuse.h); host sessions end too. */
	if (reuse_knobs_clear_guests(c->plan, c->applied, pc->knob_values)) {
		ctl_guest_down_all(c);
		for (size_t i = 0; c->session_boot && i < c->sessions.cap; i++)
			reuse_cache_drop(&c->sessions, i);
	}
	struct knob_journal journal = { c->db, c->exp_id };
	struct ta_err err = { 0 };
	const char **names = xcalloc(cfg->nknobs, sizeof(*names));
	for (size_t i = 0; i < cfg->nknobs; i++)
		names[i] = cfg->knobs[i].name;
	int rc = knobs_apply_set(c->opts->sysfs_root ? c->opts->sysfs_root : "/", names,
				 pc->knob_values, cfg->nknobs, &journal, &err);
	free(names);
	if (rc < 0) {
		runrec_fail(rec, "setting host knobs: %s", err.msg);
		memset(c->applied, 0, cfg->nknobs * sizeof(*c->applied));
		return -1;
	}
	memcpy(c->applied, pc->knob_values, cfg->nknobs * sizeof(*c->applied));
	return 0;
}

/* The host's state during the run: knob values as read back, load average. */
static void record_host_state(struct ctl *c, const struct plan_config *pc,
			      struct run_record *rec)
{
	const struct sweep_config *cfg = c->cfg;
	const char *root = c->opts->sysfs_root ? c->opts->sysfs_root : "/";
	struct strbuf sb = STRBUF_INIT;
	struct json_writer w;
	json_init(&w, &sb, false);
	json_obj_begin(&w);
	json_key(&w, "knobs");
	json_obj_begin(&w);
	for (size_t i = 0; i < cfg->nknobs; i++) {
		const struct knob *k = knob_find(cfg->knobs[i].name);
		struct strbuf v = STRBUF_INIT;
		struct ta_err err = { 0 };
		json_key(&w, cfg->knobs[i].name);
		if (k && knob_read(k, root, &v, &err) == 0)
			json_str(&w, strbuf_str(&v));
		else
			json_null(&w);
		strbuf_release(&v);
	}
	json_obj_end(&w);
	double load[3];
	if (getloadavg(load, 3) == 3) {
		json_key(&w, "loadavg");
		json_arr_begin(&w);
		for (int i = 0; i < 3; i++)
			json_double(&w, load[i]);
		json_arr_end(&w);
		/* what the load is measured against (host_busy): this host's, on a Slurm node too */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (cpus > 0) {
			json_key(&w, "online_cpus");
			json_int(&w, cpus);
		}
	}
	json_key(&w, "noise"); json_str(&w, pc->noise->name);
	json_key(&w, "runner"); json_str(&w, in_guest(c, pc) ? "agent" : "host");
	json_obj_end(&w);
	free(rec->host_state);
	rec->host_state = strbuf_detach(&sb);
}

/*
 * Stores one parsed metric.  What the parser declared stands; a command
 * regex group it cannot know gets the config's metric direction and unit
 * when it is the primary metric, and stays unknown otherwise.
 */
static void record_bench_metric(struct run_record *rec, const struct bench_metric *m,
				const struct metric_spec *primary)
{
	enum metric_dir dir = m->dir;
	const char *unit = m->unit;
	if (!strcmp(m->name, primary->name)) {
		if (dir == METRIC_DIR_UNKNOWN && primary->direction_given)
			dir = primary->higher_is_better ? METRIC_DIR_HIGHER : METRIC_DIR_LOWER;
		if (!unit)
			unit = primary->unit;
	}
	runrec_metric(rec, m->name, m->value, unit, dir);
}

/* Turns a live trace result into metrics and exit counts. */
static void record_trace(struct ctl *c, const struct gang_result *res, double seconds,
			 struct run_record *rec)
{
	rec->lost_events = res->lost_known ? (int64_t)res->lost_events : -1;
	if (rec->lost_events > 0) {
		/* Lost events make every count a lower bound; too many make it useless. */
		double fraction = (double)res->lost_events /
				  ((double)res->events + (double)res->lost_events);
		if (fraction > c->cfg->collect.max_lost_fraction)
			runrec_fail(rec, "the trace lost %lld of %llu events (%.2f %% > %.2f %% "
				    "allowed); raise collect.buffer_kib", (long long)rec->lost_events,
				    (unsigned long long)(res->events + res->lost_events),
				    fraction * 100, c->cfg->collect.max_lost_fraction * 100);
	}
	if (c->cfg->collect.gang_exits && res->run_core_format) {
		uint64_t gang = 0, runs = 0;
		for (size_t i = 0; i < res->nprocs; i++) {
			gang += res->procs[i].gang_exits;
			runs += res->procs[i].core_runs;
		}
		runrec_metric(rec, "gang_exits", (double)gang, "exits", METRIC_DIR_LOWER);
		if (seconds > 0)
			runrec_metric(rec, "gang_exits_per_s", (double)gang / seconds, "exits/s", METRIC_DIR_LOWER);
		runrec_metric(rec, "core_runs", (double)runs, "runs", METRIC_DIR_NONE);
	}
	if (c->cfg->collect.exit_reasons) {
		uint64_t total = 0;
		for (size_t i = 0; i < res->nreasons; i++) {
			const struct gang_reason *r = &res->reasons[i];
			char name[64];
			traps_format(r->source, r->code, name, sizeof(name));
			/* Times only where this trace could take them (gang.h). */
			bool timed = res->timed && !res->time_void[0] &&
				     r->source != EXIT_SRC_USERSPACE;
			runrec_exit(rec, r->source == EXIT_SRC_POWER ? "kvm_hv" : "kvm",
				    r->vcpu == GANG_VCPU_UNKNOWN ? -1 : r->vcpu, name, r->count,
				    timed ? (int64_t)r->time_pairs : -1,
				    timed ? (int64_t)r->time_total_ns : -1);
			total += r->count;
		}
		if (res->nreasons && seconds > 0)
			runrec_metric(rec, "exits_per_s", (double)total / seconds, "exits/s", METRIC_DIR_LOWER);
	}
}

/* Waits until the kind's benchmark server answers (model/bench-kind.c: redis PING). */
static int wait_server(struct ctl *c, const struct plan_config *pc, struct ta_err *err)
{
	const struct bench_server *s = bench_kind_info(c->cfg->bench.kind)->server;
	if (!s) {
		mono_sleep_ms(1000);
		return 0;
	}
	double deadline = mono_now_s() + s->ready_timeout_s;
	while (mono_now_s() < deadline && !*c->cancel) {
		struct cmd_output o;
		if (run_cmd(c, pc, (char *const *)s->ready_argv, 5, 0, &o, err) == 0 &&
		    strstr(strbuf_str(&o.out), s->ready_output)) {
			cmd_output_release(&o);
			return 0;
		}
		cmd_output_release(&o);
		mono_sleep_ms(200);
	}
	if (*c->cancel)
		return err_set(err, EXIT_FAILURE_RUN, "interrupted by signal %d while waiting for "
			       "the %s server to answer %s", (int)*c->cancel,
			       bench_kind_name(c->cfg->bench.kind), s->ready_what);
	return err_set(err, EXIT_FAILURE_RUN, "the %s server did not answer %s within %d s",
		       bench_kind_name(c->cfg->bench.kind), s->ready_what, s->ready_timeout_s);
}

/*
 * The host runner's session for this run (guest.reuse with runner host):
 * served like a kept guest — one per reuse group, for guest.reuse_runs
 * blocks, ended by a failed run and by a knob that needs no guests — so a
 * sweep of the host runner has boots as a level of replication too
 * (docs/config.md).  rec->boot gets the run the session began with.
 * Returns whether this run begins one (guest.prepare runs then).
 */
static bool host_session(struct ctl *c, const struct plan_config *pc,
			 const struct db_run_todo *t, struct run_record *rec)
{
	if (!c->session_boot) {
		rec->boot = t->run_id;
		return true;
	}
	bool hit, evict;
	size_t slot = reuse_cache_take(&c->sessions, reuse_group(c->plan, pc->rec.index),
				       t->repetition, c->cfg->reuse_runs, &hit, &evict);
	if (!hit)
		c->session_boot[slot] = t->run_id;
	rec->boot = c->session_boot[slot];
	return !hit;
}

/* Ends the host session of pc's reuse group (its run failed). */
static void host_session_end(struct ctl *c, const struct plan_config *pc)
{
	size_t g = reuse_group(c->plan, pc->rec.index);
	for (size_t i = 0; c->session_boot && i < c->sessions.cap; i++)
		if (c->sessions.group[i] == g)
			reuse_cache_drop(&c->sessions, i);
}

/*
 * The commands a run starts on the host (a host-run benchmark, preparation
 * and server, host noise loads) learn which configuration they serve from
 * the environment: a benchmark that drives its own VM from outside
 * (tests/power8/kvmppc-guest under guest.runner: host) places the noise
 * load itself, since there is no guest to run it in.
 */
static void host_env_set(const struct plan_config *pc)
{
	setenv("TOPOADVISOR_CONFIG", pc->rec.key, 1);
	setenv("TOPOADVISOR_NOISE", pc->noise->name, 1);
}

/* ---- one run, step by step -------------------------------------------- */

/*
 * What a run has started and must stop at whichever step it ends
 * (run_end): host noise load and benchmark server, trace, noise guest.
 */
struct run_live {
	struct noise_load *noise, *server;
	struct live_session *trace;
	bool noise_guest;
};

/* Step: the host for this configuration — environment, knobs, their state. */
static int run_host_set(struct ctl *c, const struct plan_config *pc, struct run_record *rec)
{
	host_env_set(pc);
	if (apply_knobs(c, pc, rec) < 0)
		return -1;
	record_host_state(c, pc, rec);
	return 0;
}

/*
 * Step: the place the benchmark runs — the guest (booted or resumed), or
 * the host runner's session.  *prepare: whether guest.prepare runs now
 * (always in a guest; on the host when the run begins a session).
 */
static int run_place_up(struct ctl *c, const struct plan_config *pc,
			const struct db_run_todo *t, struct run_record *rec, bool *prepare)
{
	struct ta_err err = { 0 };
	*prepare = true;
	if (!in_guest(c, pc)) {
		ctl_guest_park(c);	/* a guest kept for reuse must not load the host run */
		*prepare = host_session(c, pc, t, rec);
		return 0;
	}
	if (ctl_guest_up(c, pc, t->run_id, t->repetition, rec, &err) < 0) {
		runrec_fail(rec, "guest: %s", err.msg);
		return -1;
	}
	return 0;
}

/*
 * Step: guest.prepare's commands in order, each stored as an artifact; the
 * first that fails, or leaves processes behind, ends the run.
 */
static int run_prepare(struct ctl *c, const struct plan_config *pc, struct run_record *rec)
{
	const struct sweep_config *cfg = c->cfg;
	for (size_t i = 0; i < cfg->nprepare; i++) {
		const char *cmd = cfg->prepare[i].argv[0];
		struct ta_err err = { 0 };
		struct cmd_output o;
		if (run_cmd(c, pc, cfg->prepare[i].argv, cfg->bench.timeout, 0, &o, &err) < 0) {
			runrec_fail(rec, "preparation '%s': %s", cmd, err.msg);
			return -1;
		}
		char name[48];
		snprintf(name, sizeof(name), "prepare%zu", i + 1);
		store_output(rec, name, &o, false);
		snprintf(name, sizeof(name), "preparation '%s'", cmd);
		bool failed = o.leftover.len || o.exit_code != 0;
		if (o.leftover.len) {
			fail_unclean(rec, name, &o);
		} else if (o.exit_code != 0) {
			struct strbuf m = STRBUF_INIT;
			excerpt(&o, &m);
			runrec_fail(rec, "preparation '%s' %s%s", cmd, strbuf_str(&o.what),
				    strbuf_str(&m));
			strbuf_release(&m);
		}
		cmd_output_release(&o);
		if (failed)
			return -1;
	}
	return 0;
}

/*
 * Step: the configuration's noise — a noise guest, a load in the guest, or
 * a load on the host (a host reference runs an in-guest load on the host
 * CPUs of those numbers).  It starts only after the guest booted and its
 * topology was checked, so that neither boot time nor the check depends on it.
 */
static int run_noise_start(struct ctl *c, const struct plan_config *pc,
			   struct run_record *rec, struct run_live *live)
{
	const struct noise *z = pc->noise;
	struct ta_err err = { 0 };
	if (z->kind == NOISE_GUEST) {
		if (ctl_noise_guest_up(c, pc, &err) < 0) {
			runrec_fail(rec, "noise guest: %s", err.msg);
			return -1;
		}
		live->noise_guest = true;
	} else if (z->vcpus && in_guest(c, pc)) {
		if (ctl_guest_load_start(c, z, &err) < 0) {
			runrec_fail(rec, "noise '%s' in the guest: %s", z->name, err.msg);
			return -1;
		}
	} else if (z->kind != NOISE_NONE) {
		live->noise = z->vcpus ? noise_start(z->kind, z->vcpus, z->threads, z->argv.argv, &err)
				       : noise_start_config(z, &err);
		if (!live->noise) {
			runrec_fail(rec, "noise '%s': %s", z->name, err.msg);
			return -1;
		}
	}
	return 0;
}

/* Step: benchmark.server, started where the benchmark runs and waited for. */
static int run_server_start(struct ctl *c, const struct plan_config *pc,
			    struct run_record *rec, struct run_live *live)
{
	const struct sweep_config *cfg = c->cfg;
	struct ta_err err = { 0 };
	int rc;
	if (in_guest(c, pc)) {
		rc = ctl_guest_server_start(c, cfg->bench.server_argv.argv, cfg->bench.vcpus, &err);
	} else {
		char *cpus = host_runner_cpus(c, pc);
		live->server = noise_start(NOISE_COMMAND, cpus, 0, cfg->bench.server_argv.argv, &err);
		free(cpus);
		rc = live->server ? 0 : -1;
	}
	if (rc < 0 || wait_server(c, pc, &err) < 0) {
		runrec_fail(rec, "benchmark server: %s", err.msg);
		return -1;
	}
	return 0;
}

/*
 * Step: collection begins — the exit trace and the guest's vCPU counters.
 * A guest's exits are its QEMU process's; a benchmark run on the host
 * (guest.runner: host, host references) is traced host-wide, since it may
 * be a KVM program itself and its pid is not known before it runs.
 */
static int run_collect_start(struct ctl *c, const struct plan_config *pc,
			     struct run_record *rec, struct run_live *live)
{
	const struct sweep_config *cfg = c->cfg;
	if ((in_guest(c, pc) || c->trace_host_runs) &&
	    (cfg->collect.gang_exits || cfg->collect.exit_reasons)) {
		int32_t tgid = in_guest(c, pc) ? ctl_guest_qemu_pid(c) : 0;
		/* Only the events asked for: a sweep must not fail on an event
		 * it does not use appearing or vanishing (kvm_hv reloaded). */
		struct live_opts lo = { .events = (cfg->collect.gang_exits ? LIVE_EV_GANG : 0) |
					 (cfg->collect.exit_reasons ? LIVE_EV_REASONS : 0),
					.algorithm = GANG_ALGO_VCORE,
					.buffer_kib = cfg->collect.buffer_kib,
					.tgids = tgid ? &tgid : NULL, .ntgids = tgid ? 1 : 0 };
		struct ta_err err = { 0 };
		if (live_start(&lo, &live->trace, &err) < 0) {
			runrec_fail(rec, "tracing: %s", err.msg);
			return -1;
		}
	}
	if (in_guest(c, pc) && cfg->collect.vcpu_stats)
		ctl_guest_stats_begin(c);
	return 0;
}

/*
 * Step: the benchmark itself, timed (*seconds) between the "collect" and
 * "window" marks; benchmark.vcpus in the guest runs it under taskset
 * (busybox has it).
 */
static int run_bench(struct ctl *c, const struct plan_config *pc, struct run_record *rec,
		     struct cmd_output *bench, double *seconds, struct ta_err *err)
{
	const struct sweep_config *cfg = c->cfg;
	struct argv_list pinned = { 0 };
	char *const *bench_argv = cfg->bench.argv.argv;
	if (in_guest(c, pc) && cfg->bench.vcpus) {
		const char **v = xcalloc(cfg->bench.argv.argc + 4, sizeof(*v));
		v[0] = "taskset";
		v[1] = "-c";
		v[2] = cfg->bench.vcpus;
		memcpy(v + 3, cfg->bench.argv.argv, cfg->bench.argv.argc * sizeof(*v));
		pinned.argv = (char **)v;
		pinned.argc = cfg->bench.argv.argc + 3;
		bench_argv = pinned.argv;
	}
	double t0 = mono_now_s();
	runrec_step(rec, "collect", t0);
	int rc = run_cmd(c, pc, bench_argv, cfg->bench.timeout, cfg->bench.duration, bench, err);
	*seconds = mono_now_s() - t0;
	runrec_step(rec, "window", t0 + *seconds);
	free(pinned.argv);	/* the strings are the config's */
	return rc;
}

/* Step: collection ends — the trace turned into metrics, the vCPU counters read. */
static void run_collect_stop(struct ctl *c, const struct plan_config *pc,
			     struct run_record *rec, struct run_live *live, double seconds)
{
	if (live->trace) {
		struct gang_result res;
		struct ta_err err = { 0 };
		if (live_stop(live->trace, &res, &err) == 0) {
			record_trace(c, &res, seconds, rec);
			gang_result_release(&res);
		} else {
			runrec_fail(rec, "tracing: %s", err.msg);
		}
		live->trace = NULL;
	}
	if (in_guest(c, pc) && c->cfg->collect.vcpu_stats)
		ctl_guest_stats_end(c, rec);
}

/*
 * Step: the benchmark's metrics parsed from its whole output; the metrics
 * it did report are stored with a run that lacks the primary one, and named.
 */
static void run_metrics_record(struct ctl *c, const struct cmd_output *bench,
			       struct run_record *rec)
{
	const struct sweep_config *cfg = c->cfg;
	struct bench_metrics bm = { 0 };
	struct ta_err err = { 0 };
	if (benchparse_run(cfg->bench.kind, cfg->bench.parse_regex, bench->out.buf,
			   bench->out.len, bench->errout.buf, bench->errout.len, &bm, &err) < 0) {
		runrec_fail(rec, "benchmark output: %s%s%s", err.msg,
			    bench->cut.len ? "; " : "", strbuf_str(&bench->cut));
		return;
	}
	for (size_t i = 0; i < bm.n; i++)
		record_bench_metric(rec, &bm.v[i], &cfg->bench.metric);
	if (!bench_metrics_find(&bm, cfg->bench.metric.name)) {
		struct strbuf have = STRBUF_INIT;
		for (size_t i = 0; i < bm.n; i++)
			strbuf_addf(&have, "%s%s", i ? ", " : "", bm.v[i].name);
		runrec_fail(rec, "the benchmark output has no '%s' (the primary "
			    "metric); it has %s%s%s", cfg->bench.metric.name,
			    have.len ? have.buf : "no metric at all",
			    bench->cut.len ? "; " : "", strbuf_str(&bench->cut));
		strbuf_release(&have);
	}
	bench_metrics_release(&bm);
}

/*
 * Step: what the finished benchmark says — processes it left, output it
 * lost, its exit status, else its metrics (never parsed from cut output).
 */
static void run_bench_judge(struct ctl *c, const struct cmd_output *bench,
			    struct run_record *rec)
{
	fail_unclean(rec, "the benchmark", bench);
	if (bench->exit_code != 0) {
		struct strbuf m = STRBUF_INIT;
		excerpt(bench, &m);
		runrec_fail(rec, "benchmark %s%s", strbuf_str(&bench->what), strbuf_str(&m));
		strbuf_release(&m);
	} else if (!bench->out_cut) {
		run_metrics_record(c, bench, rec);
	}
}

/*
 * Step: the noise load must have run for the whole benchmark.  An in-guest
 * load is stopped here too, in the agent call that checks it.
 */
static void run_noise_check(struct ctl *c, const struct plan_config *pc,
			    struct run_record *rec, const struct run_live *live)
{
	struct ta_err err = { 0 };
	if (live->noise && noise_check(live->noise, &err) < 0)
		runrec_fail(rec, "noise '%s' stopped during the run: %s", pc->noise->name,
			    err.msg);
	if (in_guest(c, pc) && pc->noise->vcpus) {
		struct strbuf ended = STRBUF_INIT;
		if (ctl_guest_load_stop(c, &ended, &err) < 0)
			runrec_fail(rec, "%s", err.msg);
		if (ended.len)
			runrec_fail(rec, "noise '%s' stopped during the run: ended in the guest "
				    "(pid: its stderr): %s", pc->noise->name, strbuf_str(&ended));
		strbuf_release(&ended);
	}
}

/*
 * Last step, whichever step the run ended at: stops what it started, then
 * in-guest loads and servers (verified gone) before the guest is kept or
 * destroyed; a failed or interrupted run ends its guest or host session.
 */
static void run_end(struct ctl *c, const struct plan_config *pc, struct run_record *rec,
		    struct run_live *live)
{
	const struct sweep_config *cfg = c->cfg;
	struct ta_err err = { 0 };
	if (live->trace)
		live_abort(live->trace);
	if (live->server)
		noise_stop(live->server, 2000, &err);
	if (live->noise)
		noise_stop(live->noise, 2000, &err);
	if (live->noise_guest)
		ctl_noise_guest_down(c);
	runrec_step(rec, "end", mono_now_s());
	if (in_guest(c, pc) && ctl_guest_bg_stop(c, &err) < 0)
		runrec_fail(rec, "%s", err.msg);
	runrec_step(rec, "guest loads", mono_now_s());
	if (*c->cancel) {
		rec->status = "interrupted";
		if (!rec->error.len)
			strbuf_addf(&rec->error, "interrupted by signal %d", (int)*c->cancel);
	}
	if (in_guest(c, pc) && (!cfg->reuse_guest || strcmp(rec->status, "ok") || *c->cancel))
		ctl_guest_down(c);
	if (!in_guest(c, pc) && strcmp(rec->status, "ok"))
		host_session_end(c, pc);
	runrec_step(rec, "guest down", mono_now_s());
}

/*
 * One run of one configuration: its steps in order, each marked with
 * runrec_step (run -vv shows them), ending at the first that fails.
 */
static void run_one(struct ctl *c, const struct plan_config *pc, const struct db_run_todo *t,
		    struct run_record *rec)
{
	struct run_live live = { 0 };
	struct cmd_output bench = { 0 };
	struct ta_err err = { 0 };
	bool prepare;

	if (run_host_set(c, pc, rec) < 0)
		goto out;
	runrec_step(rec, "begin", mono_now_s());
	if (run_place_up(c, pc, t, rec, &prepare) < 0)
		goto out;
	runrec_step(rec, "guest", mono_now_s());
	if (*c->cancel)
		goto out;
	if (prepare && run_prepare(c, pc, rec) < 0)
		goto out;
	runrec_step(rec, "prepare", mono_now_s());
	if (run_noise_start(c, pc, rec, &live) < 0)
		goto out;
	runrec_step(rec, "noise", mono_now_s());
	if (c->cfg->bench.server_argv.argc) {
		if (run_server_start(c, pc, rec, &live) < 0)
			goto out;
		runrec_step(rec, "server", mono_now_s());
	}
	if (run_collect_start(c, pc, rec, &live) < 0)
		goto out;
	double seconds;
	int rc = run_bench(c, pc, rec, &bench, &seconds, &err);
	run_collect_stop(c, pc, rec, &live, seconds);
	runrec_step(rec, "stats", mono_now_s());
	if (rc < 0) {
		runrec_fail(rec, "benchmark: %s", err.msg);
		goto out;
	}
	store_output(rec, "benchmark", &bench, true);
	runrec_metric(rec, "benchmark_seconds", seconds, "s", METRIC_DIR_NONE);
	if (*c->cancel)
		goto out;
	run_bench_judge(c, &bench, rec);
	run_noise_check(c, pc, rec, &live);
out:
	cmd_output_release(&bench);
	run_end(c, pc, rec, &live);
}

/* ---- the sweep -------------------------------------------------------- */

const struct plan_config *ctl_config_by_key(const struct plan *p, const char *key)
{
	for (size_t i = 0; i < p->nconfigs; i++)
		if (!strcmp(p->configs[i].rec.key, key))
			return &p->configs[i];
	return NULL;
}

/*
 * Reads again the runs still to do after the scheduler changed them, keeping
 * only those after last_order (a run that failed this time is not retried).
 */
static int todo_reload(struct db *db, int64_t exp_id, int64_t last_order,
		       struct db_run_todo **todo, size_t *ntodo, struct ta_err *err)
{
	db_runs_free(*todo, *ntodo);
	*todo = NULL;
	*ntodo = 0;
	struct db_run_todo *all;
	size_t n;
	if (db_runs_list(db, exp_id, true, &all, &n, err) < 0)
		return -1;
	size_t skip = 0;
	for (; skip < n && all[skip].order_index <= last_order; skip++) {
		free(all[skip].key);
		free(all[skip].status);
	}
	*todo = xcalloc(n - skip + 1, sizeof(**todo));
	if (n > skip)
		memcpy(*todo, all + skip, (n - skip) * sizeof(**todo));
	free(all);
	*ntodo = n - skip;
	return 0;
}

static int restore_knobs(struct ctl *c, struct ta_err *err)
{
	struct knob_journal journal = { c->db, 0 };
	if (c->applied)
		memset(c->applied, 0, c->cfg->nknobs * sizeof(*c->applied));
	return knobs_restore_all(c->opts->sysfs_root ? c->opts->sysfs_root : "/", &journal,
				 err);
}

/*
 * Records this process as experiment exp_id's controller on the host it
 * drives (the machine, and the root's lock key), refused while another
 * experiment of the database runs there (db-controller.h).
 */
static int claim_host(struct db *db, int64_t exp_id, const char *machine, const char *root,
		      struct ta_err *err)
{
	struct strbuf key = STRBUF_INIT, host = STRBUF_INIT;
	int rc = hostlock_key(root, &key, err);
	if (rc == 0) {
		strbuf_addf(&host, "%s:%s", machine ? machine : "?", strbuf_str(&key));
		rc = db_controller_claim(db, exp_id, strbuf_str(&host), err);
	}
	strbuf_release(&key);
	strbuf_release(&host);
	return rc;
}

int controller_run(struct db *db, const struct plan *plan, int64_t exp_id,
		   const struct controller_opts *opts, struct controller_summary *summary,
		   struct ta_err *err)
{
	struct ctl c = { .db = db, .plan = plan, .cfg = plan->cfg, .exp_id = exp_id,
			 .opts = opts, .cancel = &cancel_flag };
	struct db_run_todo *todo = NULL;
	size_t ntodo = 0;
	int rc = -1;
	struct progress prog;
	bool prog_on = false;
	memset(summary, 0, sizeof(*summary));
	cancel_flag = 0;

	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	c.applied = xcalloc(c.cfg->nknobs + 1, sizeof(*c.applied));
	struct utsname uts;
	const char *host = opts->host ? opts->host : uname(&uts) == 0 ? uts.nodename : NULL;

	/* What a crashed controller left: runs marked running, knobs changed
	 * (once no other controller drives this host for this database). */
	if (claim_host(db, exp_id, host, opts->sysfs_root, err) < 0)
		goto out;
	if (db_runs_mark_stale(db, exp_id, "the controller stopped during this run", err) < 0)
		goto out;
	if (restore_knobs(&c, err) < 0) {
		err_prefix(err, "restoring host knobs left changed by an earlier sweep");
		goto out;
	}
	c.trace_host_runs = geteuid() == 0;
	if (!c.trace_host_runs && (c.cfg->collect.gang_exits || c.cfg->collect.exit_reasons) &&
	    (c.cfg->runner == RUNNER_HOST || c.cfg->host_baseline) && !opts->quiet)
		fprintf(stderr, "not tracing the benchmarks run on the host: tracing needs root\n");
	if (c.cfg->runner == RUNNER_AGENT && ctl_guest_start_sweep(&c, err) < 0)
		goto out;
	if (c.cfg->runner == RUNNER_HOST && c.cfg->reuse_guest) {
		reuse_cache_init(&c.sessions, reuse_groups(plan));
		c.session_boot = xcalloc(c.sessions.cap, sizeof(*c.session_boot));
	}
	if (db_runs_list(db, exp_id, true, &todo, &ntodo, err) < 0 ||
	    db_experiment_set_status(db, exp_id, "running", err) < 0)
		goto out;

	progress_init(&prog, stderr, isatty(2), opts->quiet > 0, ntodo, c.cfg->bench.timeout);
	progress_ticker_start(&prog);
	prog_on = true;
	warn_sink_set(progress_warn, &prog);
	const struct controller_scheduler *sched = opts->scheduler;
	int block = -1;			/* the block the scheduler last looked before */
	int64_t last_order = -1;	/* the last run attempted, in sweep order */
	for (size_t i = 0; i < ntodo && !cancel_flag; i++) {
		const struct db_run_todo *t = &todo[i];
		if (sched && t->repetition > block) {
			block = t->repetition;
			progress_hold(&prog);	/* the race's lines start lines of their own */
			if (sched->between_blocks(sched->data, db, exp_id, block, err) < 0 ||
			    todo_reload(db, exp_id, last_order, &todo, &ntodo, err) < 0)
				goto out;
			progress_left_set(&prog, ntodo);
			i = (size_t)-1;		/* start over on what is left */
			continue;
		}
		struct run_record rec;
		runrec_init(&rec, t->run_id);
		runrec_step(&rec, NULL, mono_now_s());
		progress_run_begin(&prog, t->key, t->repetition);
		const struct plan_config *pc = ctl_config_by_key(plan, t->key);
		c.ahead = todo + i + 1;
		c.nahead = ntodo - i - 1;
		if (db_run_mark_running(db, t->run_id, err) < 0)
			goto out;
		if (!pc)
			runrec_fail(&rec, "configuration %s is not in the plan this host gives "
				    "for the stored config", t->key);
		else
			run_one(&c, pc, t, &rec);
		struct db_run_result r;
		runrec_result(&rec, &r);
		r.host = host;
		if (db_run_store(db, &r, err) < 0) {
			runrec_release(&rec);
			goto out;
		}
		runrec_step(&rec, "store", mono_now_s());
		if (opts->verbose >= 2 && !opts->quiet)
			progress_note(&prog, "run %lld (%s #%d) steps, seconds: %s",
				      (long long)t->run_id, t->key, t->repetition + 1,
				      strbuf_str(&rec.steps));
		summary->attempted++;
		if (!strcmp(rec.status, "ok")) {
			summary->ok++;
		} else if (!strcmp(rec.status, "failed")) {
			summary->failed++;
			if (!opts->quiet) {
				struct strbuf safe = STRBUF_INIT;
				strbuf_add_printable(&safe, rec.error.buf, rec.error.len);
				progress_note(&prog, "run %lld (%s #%d) failed: %s",
					      (long long)t->run_id, t->key, t->repetition + 1,
					      strbuf_str(&safe));
				strbuf_release(&safe);
			}
		}
		runrec_release(&rec);
		progress_run_end(&prog);
		last_order = t->order_index;
	}
	progress_hold(&prog);
	/* The look after the last block (also when a kill came right before it). */
	if (sched && !cancel_flag) {
		int blocks;
		if (db_runs_blocks(db, exp_id, &blocks, err) < 0 ||
		    sched->between_blocks(sched->data, db, exp_id, blocks, err) < 0)
			goto out;
	}
	rc = 0;
out:
	warn_sink_set(NULL, NULL);
	if (prog_on)
		progress_release(&prog);	/* an error printed next starts a line */
	ctl_guest_end_sweep(&c);
	if (c.session_boot) {
		reuse_cache_release(&c.sessions);
		free(c.session_boot);
	}
	{
		struct ta_err rerr = { 0 };
		if (restore_knobs(&c, &rerr) < 0) {
			fprintf(stderr, "topoadvisor: error: restoring host knobs: %s\n"
				"topoadvisor: run 'topoadvisor restore-host' to retry\n", rerr.msg);
			if (rc == 0) {
				*err = rerr;
				rc = -1;
			}
		}
	}
	summary->interrupted = cancel_flag != 0;
	{
		struct ta_err serr = { 0 };
		/* A sweep that could not start or go on says why in `show`. */
		if (rc < 0 && !summary->interrupted)
			db_experiment_fail(db, exp_id, err->msg, &serr);
		else
			db_experiment_set_status(db, exp_id, summary->interrupted
						 ? "interrupted" : "done", &serr);
	}
	db_runs_free(todo, ntodo);
	free(c.applied);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
