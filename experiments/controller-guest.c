/*
 * controller-guest: the guest side of a run — connect, clear leftovers,
 * build the domain for a configuration, boot it, wait for the agent, check
 * the topology it sees, run commands and background loads, read vCPU
 * statistics, keep (suspended) or destroy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt-qemu.h>

#include "../collectors/guesttopo.h"
#include "../collectors/vcpustats.h"
#include "../util/cpuset.h"
#include "../util/json.h"
#include "../util/warn.h"
#include "agent.h"
#include "controller-int.h"
#include "domain.h"
#include "guest.h"
#include "guestbg.h"
#include "hostprobe.h"

#define TOPOLOGY_TIMEOUT_S 30

struct guest_state {
	struct guest *g;
	struct vcpustats before;
	bool have_before;
	bool suspended;			/* kept for reuse while another guest runs */
	int64_t boot;			/* the run it was booted for: its runs' runs.boot */
	/* Live pinning (plan->live_pin): the pinning its vCPUs have now (NULL:
	 * as booted, unpinned) and its boot run's (its stored domain.xml). */
	const struct pinning *pinning, *boot_pinning;
	bool emulator_pinned;
	struct guestbg load, server;	/* this run's in-guest noise and server */
	/* What the topology check after boot saw, for the runs that reuse it. */
	char *topology;			/* JSON; NULL: not read */
	int topology_ok;		/* -1 unknown */
	int online;			/* online CPUs then; 0: not known */
};

/* One connection and the host CPUs, for the whole sweep. */
static virConnectPtr conn;
static struct host_cpu *host_cpus;
static size_t nhost_cpus;
static enum domain_type resolved_type;
static struct guest_state *noise_guest;

static const char *image_dir(char *buf, size_t n)
{
	const char *cache = getenv("TOPOADVISOR_CACHE");
	snprintf(buf, n, "%s/guest-x86_64", cache && *cache ? cache : "/var/cache/topoadvisor");
	return buf;
}

/* The guests' architecture: libvirt.arch, where "host" means the built-in x86_64 test guest. */
static enum guest_arch guest_arch(const struct sweep_config *cfg)
{
	return cfg->arch == ARCH_HOST ? ARCH_X86_64 : cfg->arch;
}

void controller_guests_describe(struct plan *p)
{
	const struct sweep_config *cfg = p->cfg;
	struct host_facts host;
	host_facts_read(&host);
	enum guest_arch arch = guest_arch(cfg);
	struct domain_cpu cpu = { NULL, NULL };
	if (cfg->runner == RUNNER_AGENT) {
		const char *why;
		domain_cpu_choose(guest_type_resolve(cfg->domain_type, arch, &why), arch, &cpu);
	}
	for (size_t i = 0; i < p->nconfigs; i++) {
		struct config_record *r = &p->configs[i].rec;
		bool guest = cfg->runner == RUNNER_AGENT && !r->host_reference;
		enum guest_arch a = guest ? arch : host.arch;
		free(r->arch);
		free(r->cpu_mode);
		free(r->cpu_model);
		r->arch = a == ARCH_HOST ? NULL : xstrdup(config_arch_name(a));
		r->cpu_mode = guest && cpu.mode ? xstrdup(cpu.mode) : NULL;
		r->cpu_model = guest && cpu.model ? xstrdup(cpu.model) : NULL;
	}
}

int ctl_guest_start_sweep(struct ctl *c, struct ta_err *err)
{
	const struct sweep_config *cfg = c->cfg;
	if (!conn) {
		conn = guest_connect(cfg->uri, err);
		if (!conn)
			return -1;
	}
	int n = 0;
	struct strbuf names = STRBUF_INIT;
	int rc = guest_leftovers_destroy(conn, cfg->name_prefix, &n, &names, err);
	if (n && !c->opts->quiet)
		fprintf(stderr, "destroyed %d guest%s left by an earlier sweep: %s\n", n,
			n == 1 ? "" : "s", strbuf_str(&names));
	strbuf_release(&names);
	if (rc < 0)
		return -1;
	free(host_cpus);
	host_cpus = NULL;
	if (hostprobe_cpus_read(&host_cpus, &nhost_cpus, err) < 0)
		return -1;
	const char *why = NULL;
	resolved_type = guest_type_resolve(cfg->domain_type, guest_arch(cfg), &why);
	if (cfg->domain_type == DOMAIN_AUTO && why && !c->opts->quiet)
		fprintf(stderr, "domain type: %s\n", why);
	size_t cap = 1;
	if (cfg->reuse_guest) {
		cap = reuse_capacity(c->plan, host_mem_available_mib());
		if (!c->opts->quiet)
			fprintf(stderr, "guest.reuse: one guest per shape%s for %d "
				"block%s, up to %zu kept (suspended while another runs); %zu boots "
				"if no run fails\n", c->plan->live_pin ? " (booted unpinned, each "
				"run's pinning applied live: one NUMA node)" : " and pinning",
				cfg->reuse_runs, cfg->reuse_runs == 1 ? "" : "s",
				cap, reuse_boots(c->plan, cap, NULL));
	}
	reuse_cache_init(&c->cache, cap);
	c->kept = xcalloc(cap, sizeof(*c->kept));
	return 0;
}

int ctl_guest_check_access(const struct sweep_config *cfg, struct ta_err *err)
{
	struct ta_err cerr = { 0 };
	virConnectPtr probe = guest_connect(cfg->uri, &cerr);
	if (probe) {
		virConnectClose(probe);
		return 0;
	}
	return err_set(err, EXIT_BAD_INPUT, "%s: this sweep runs its benchmark in guests, and "
		       "this user cannot use libvirt here: %s.  Run it as root (sudo topoadvisor "
		       "run ...), or set guest: {runner: host} to run the benchmark on this "
		       "host without guests", cfg->path, cerr.msg);
}

void ctl_guest_end_sweep(struct ctl *c)
{
	ctl_guest_down_all(c);
	ctl_noise_guest_down(c);
	reuse_cache_release(&c->cache);
	free(c->kept);
	c->kept = NULL;
	free(host_cpus);
	host_cpus = NULL;
	nhost_cpus = 0;
	if (conn)
		virConnectClose(conn);
	conn = NULL;
}

/* The domain request for configuration pc (a noise guest uses pc's shape too). */
static void request_fill(struct ctl *c, const struct plan_config *pc, const char *name,
			 int64_t run_id, struct domain_request *req, char *kernel, char *initrd,
			 size_t n)
{
	const struct sweep_config *cfg = c->cfg;
	char dir[512];
	image_dir(dir, sizeof(dir));
	snprintf(kernel, n, "%s/vmlinuz", dir);
	snprintf(initrd, n, "%s/initrd", dir);
	*req = (struct domain_request){
		.name = name,
		.arch = guest_arch(cfg),
		.type = resolved_type,
		.template_path = cfg->template_path,
		.memory_mib = cfg->memory_mib,
		.vcpus = pc->rec.vcpus,
		.sockets = pc->shape.sockets,
		.dies = pc->shape.dies,
		.cores = pc->shape.cores,
		.threads = pc->shape.threads,
		.pin = pc->pinning->policy,
		.host_cpus = host_cpus,
		.nhost_cpus = nhost_cpus,
		.vcpu_cpus = (const char *const *)pc->pinning->vcpu_cpus,
		.nvcpu_cpus = pc->pinning->nvcpu_cpus,
		.emulator_cpus = pc->pinning->emulator_cpus,
		.kernel = cfg->template_path ? NULL : kernel,
		.initrd = cfg->template_path ? NULL : initrd,
		.experiment_id = c->exp_id,
		.run_id = run_id,
	};
}

/*
 * The domain XML for configuration pc: into *xml the domain as its run
 * measures in it, pinned (what the run stores as domain.xml); into *boot,
 * when not NULL, what libvirt boots: the same, unpinned with live pinning
 * (plan->live_pin), the run's pins then applied by apply_pins.
 */
static int build_xml(struct ctl *c, const struct plan_config *pc, const char *name,
		     int64_t run_id, struct strbuf *xml, struct strbuf *boot, struct ta_err *err)
{
	char kernel[600], initrd[600];
	struct domain_request req;
	request_fill(c, pc, name, run_id, &req, kernel, initrd, sizeof(kernel));
	if (domain_xml_build(&req, xml, err) < 0)
		return -1;
	if (!boot)
		return 0;
	if (!c->plan->live_pin) {
		strbuf_add(boot, xml->buf, xml->len);
		return 0;
	}
	req.pin = PIN_NONE;
	req.vcpu_cpus = NULL;
	req.nvcpu_cpus = 0;
	req.emulator_cpus = NULL;
	return domain_xml_build(&req, boot, err);
}

/* One vCPU (vcpu >= 0) or the emulator (-1) allowed on the host CPUs in cpus (NULL: all online). */
static int pin_one(virDomainPtr dom, int vcpu, const char *cpus, struct ta_err *err)
{
	int ncpus = 0;
	for (size_t i = 0; i < nhost_cpus; i++)
		if (host_cpus[i].cpu + 1 > ncpus)
			ncpus = host_cpus[i].cpu + 1;
	struct cpuset cs = { 0 };
	if (cpus) {
		if (cpuset_parse(cpus, &cs, err) < 0)
			return -1;
		if (cpuset_last(&cs) + 1 > ncpus)
			ncpus = cpuset_last(&cs) + 1;
	}
	int maplen = VIR_CPU_MAPLEN(ncpus);
	unsigned char *map = xcalloc((size_t)maplen, 1);
	if (cpus)
		for (size_t i = 0; i < cs.n; i++)
			VIR_USE_CPU(map, cs.cpus[i]);
	else
		for (size_t i = 0; i < nhost_cpus; i++)
			VIR_USE_CPU(map, host_cpus[i].cpu);
	int rc = vcpu >= 0
		? virDomainPinVcpuFlags(dom, (unsigned)vcpu, map, maplen, VIR_DOMAIN_AFFECT_LIVE)
		: virDomainPinEmulator(dom, map, maplen, VIR_DOMAIN_AFFECT_LIVE);
	free(map);
	cpuset_release(&cs);
	if (rc < 0) {
		virErrorPtr e = virGetLastError();
		char what[32];
		snprintf(what, sizeof(what), vcpu >= 0 ? "vCPU %d" : "the emulator", vcpu);
		return err_set(err, EXIT_FAILURE_RUN, "pinning %s to host CPUs %s: %s", what,
			       cpus ? cpus : "(all)", e && e->message ? e->message : "?");
	}
	return 0;
}

static struct guest_state *boot(struct ctl *c, const struct plan_config *pc, int64_t run_id,
				struct strbuf *xml, struct ta_err *err)
{
	char *name = guest_name_new(c->cfg->name_prefix);
	int rc = build_xml(c, pc, name, run_id, xml, NULL, err);
	struct guest *g = rc < 0 ? NULL
		: guest_boot(conn, strbuf_str(xml), c->cfg->boot_timeout * 1000, NULL, err);
	free(name);
	if (!g)
		return NULL;
	struct guest_state *gs = xcalloc(1, sizeof(*gs));
	gs->g = g;
	return gs;
}

static void destroy(struct guest_state *gs)
{
	if (!gs)
		return;
	struct ta_err err = { 0 };
	if (guest_destroy(gs->g, &err) < 0)
		warn_emit("%s", err.msg);
	if (gs->have_before)
		vcpustats_release(&gs->before);
	guestbg_release(&gs->load);
	guestbg_release(&gs->server);
	free(gs->topology);
	free(gs);
}

/*
 * Live pinning (plan->live_pin): gives the guest's vCPUs and emulator the
 * pins of pc's pinning (all online host CPUs where it has none) unless
 * they have them already.  Before a run measures; a paused guest takes
 * them too.
 */
static int apply_pins(struct ctl *c, struct guest_state *gs, const struct plan_config *pc,
		      struct ta_err *err)
{
	if (!c->plan->live_pin || gs->pinning == pc->pinning)
		return 0;
	char kernel[600], initrd[600];
	struct domain_request req;
	request_fill(c, pc, gs->g->name, gs->boot, &req, kernel, initrd, sizeof(kernel));
	struct domain_pins pins;
	if (domain_pins_compute(&req, &pins, err) < 0)
		return -1;
	int rc = 0;
	/* Booted unpinned and pinned to nothing: nothing to change. */
	if (pins.nvcpu || gs->pinning)
		for (int i = 0; rc == 0 && i < pc->rec.vcpus; i++)
			rc = pin_one(gs->g->dom, i, pins.nvcpu ? pins.vcpu[i] : NULL, err);
	if (rc == 0 && (pins.emulator || gs->emulator_pinned))
		rc = pin_one(gs->g->dom, -1, pins.emulator, err);
	if (rc == 0) {
		gs->pinning = pc->pinning;
		gs->emulator_pinned = pins.emulator != NULL;
	}
	domain_pins_release(&pins);
	return rc;
}

/* Destroys the guest kept in slot (the current one too, if it is that). */
static void slot_destroy(struct ctl *c, size_t slot)
{
	if (!c->kept || slot >= c->cache.cap)
		return;
	if (c->guest && c->guest == c->kept[slot])
		c->guest = NULL;
	destroy(c->kept[slot]);
	c->kept[slot] = NULL;
	reuse_cache_drop(&c->cache, slot);
}

/*
 * A guest booted together with an earlier run of its block, for the first
 * run of its reuse group there (the run it counts as booted for), and
 * suspended until that run takes it.
 */
struct preboot {
	size_t group;
	int block;
	struct guest_state *gs;	/* NULL: its boot failed (error) */
	char *xml;
	char *error;
};

/* Destroys the guests booted ahead that no run took (a new block, a knob that needs no guests). */
static void preboot_clear(struct ctl *c)
{
	for (size_t i = 0; i < c->npreboot; i++) {
		destroy(c->preboot[i].gs);
		free(c->preboot[i].xml);
		free(c->preboot[i].error);
	}
	free(c->preboot);
	c->preboot = NULL;
	c->npreboot = 0;
}

/* Removes the entry for (group, block) from the list into *out; false if none. */
static bool preboot_take(struct ctl *c, size_t group, int block, struct preboot *out)
{
	for (size_t i = 0; i < c->npreboot; i++) {
		if (c->preboot[i].group == group && c->preboot[i].block == block) {
			*out = c->preboot[i];
			c->preboot[i] = c->preboot[--c->npreboot];
			return true;
		}
	}
	return false;
}

/*
 * The runs after the current one in its block whose guests can boot now,
 * together with the current run's (reuse_ahead): their configurations
 * and run ids, at most max.
 */
static size_t preboot_plan(struct ctl *c, int block, const struct plan_config **pcs,
			   int64_t *runs, size_t max)
{
	size_t n = 0;
	while (n < c->nahead && c->ahead[n].repetition == block)
		n++;
	const struct plan_config **next = xcalloc(n + 1, sizeof(*next));
	for (size_t i = 0; i < n; i++)
		next[i] = ctl_config_by_key(c->plan, c->ahead[i].key);
	size_t *idx = xcalloc(max, sizeof(*idx));
	size_t k = reuse_ahead(c->plan, &c->cache, block, c->applied, next, n, idx, max);
	for (size_t i = 0; i < k; i++) {
		pcs[i] = next[idx[i]];
		runs[i] = c->ahead[idx[i]].run_id;
	}
	free(idx);
	free(next);
	return k;
}

/*
 * Boots the current run's guest (pc, run_id) and, at the same time, the
 * block's later guests preboot_plan finds; those wait suspended in
 * c->preboot.  Returns the current run's guest (NULL on failure, err set).
 * No measurement runs meanwhile: every other kept guest is suspended.
 */
static struct guest_state *boot_block(struct ctl *c, const struct plan_config *pc,
				      int64_t run_id, int block, struct strbuf *xml,
				      struct ta_err *err)
{
	const struct plan_config *more[16];
	int64_t more_runs[16];
	size_t nmore = c->cfg->reuse_guest
		? preboot_plan(c, block, more, more_runs, sizeof(more) / sizeof(more[0])) : 0;
	char *name = guest_name_new(c->cfg->name_prefix);
	struct strbuf bx = STRBUF_INIT;
	int rc = build_xml(c, pc, name, run_id, xml, &bx, err);
	free(name);
	struct guest *g = rc < 0 ? NULL : guest_start(conn, strbuf_str(&bx), err);
	strbuf_release(&bx);
	if (!g)
		return NULL;
	struct guest *mg[16];
	struct preboot *pb = xcalloc(nmore ? nmore : 1, sizeof(*pb));
	for (size_t i = 0; i < nmore; i++) {
		/* Its group's guest whose blocks are used up goes first: no more
		 * guests than the cache's capacity (its slot stays taken until the
		 * run's own take finds it used up, as without booting ahead). */
		size_t old = reuse_cache_slot(&c->cache, reuse_group(c->plan, more[i]->rec.index));
		if (old != REUSE_NO_GROUP && c->kept[old] && c->kept[old] != c->guest) {
			destroy(c->kept[old]);
			c->kept[old] = NULL;
		}
		struct strbuf mx = STRBUF_INIT, mbx = STRBUF_INIT;
		struct ta_err merr = { 0 };
		name = guest_name_new(c->cfg->name_prefix);
		rc = build_xml(c, more[i], name, more_runs[i], &mx, &mbx, &merr);
		free(name);
		mg[i] = rc < 0 ? NULL : guest_start(conn, strbuf_str(&mbx), &merr);
		strbuf_release(&mbx);
		pb[i].group = reuse_group(c->plan, more[i]->rec.index);
		pb[i].block = block;
		pb[i].xml = strbuf_detach(&mx);
		if (!mg[i])
			pb[i].error = xstrdup(merr.msg);
	}
	int ms = c->cfg->boot_timeout * 1000;
	struct guest_state *gs = NULL;
	if (guest_wait_agent(g, ms, NULL, err) == 0) {
		gs = xcalloc(1, sizeof(*gs));
		gs->g = g;
	}
	for (size_t i = 0; i < nmore; i++) {
		struct ta_err merr = { 0 };
		if (!mg[i])
			continue;
		if (guest_wait_agent(mg[i], ms, NULL, &merr) < 0) {
			pb[i].error = xstrdup(merr.msg);
			continue;
		}
		pb[i].gs = xcalloc(1, sizeof(*pb[i].gs));
		pb[i].gs->g = mg[i];
		/* Paused until its run: it must not load the measured guest. */
		if (virDomainSuspend(mg[i]->dom) < 0) {
			destroy(pb[i].gs);
			pb[i].gs = NULL;
			pb[i].error = xstrdup("suspending the guest booted ahead failed");
			continue;
		}
		pb[i].gs->suspended = true;
	}
	c->preboot = xrealloc(c->preboot, (c->npreboot + nmore + 1) * sizeof(*c->preboot));
	for (size_t i = 0; i < nmore; i++)
		c->preboot[c->npreboot++] = pb[i];
	free(pb);
	return gs;
}

/*
 * Reads the topology the guest sees, compares it with the request, and
 * keeps the result with the guest for the runs that reuse it.
 */
static void check_topology(struct ctl *c, const struct plan_config *pc, struct run_record *rec)
{
	struct guest_state *gs = c->guest;
	const char *argv[] = { "sh", "-c", GUESTTOPO_SCRIPT, NULL };
	struct agent_result res;
	struct ta_err err = { 0 };
	free(gs->topology);
	gs->topology = NULL;
	gs->topology_ok = -1;
	gs->online = 0;
	if (agent_exec(gs->g->dom, argv, TOPOLOGY_TIMEOUT_S, &res, &err) < 0) {
		warn_emit("cannot read the guest's topology: %s", err.msg);
		return;
	}
	struct guesttopo t;
	if (guesttopo_parse(res.out ? res.out : "", &t, &err) == 0) {
		struct strbuf js = STRBUF_INIT;
		guesttopo_json(&t, &js);
		gs->topology = strbuf_detach(&js);
		gs->online = (int)t.ncpus;
		if (guesttopo_compare(&t, pc->shape.sockets, pc->shape.dies, pc->shape.cores,
				      pc->shape.threads, &err) < 0) {
			gs->topology_ok = 0;
			warn_emit("topology mismatch in run %lld (%s): %s", (long long)rec->run_id,
				  pc->rec.key, err.msg);
		} else {
			gs->topology_ok = 1;
		}
		guesttopo_release(&t);
	} else {
		warn_emit("guest topology: %s", err.msg);
	}
	agent_result_release(&res);
	free(rec->guest_topology);
	rec->guest_topology = gs->topology ? xstrdup(gs->topology) : NULL;
	rec->topology_ok = gs->topology_ok;
}

/*
 * A reused guest's topology: what its check after boot saw, as long as the
 * same CPUs are still online (guest-get-vcpus, answered by the agent
 * without starting a process: ~10 ms where the check's shell took 0.2-0.5 s
 * under TCG); a CPU taken offline or brought back since (a benchmark may
 * do that) means a full check again.
 */
static void recheck_topology(struct ctl *c, const struct plan_config *pc,
			     struct run_record *rec)
{
	struct guest_state *gs = c->guest;
	struct ta_err err = { 0 };
	if (!gs->topology || gs->online != agent_online_vcpus(gs->g->dom, &err)) {
		check_topology(c, pc, rec);
		return;
	}
	free(rec->guest_topology);
	rec->guest_topology = xstrdup(gs->topology);
	rec->topology_ok = gs->topology_ok;
}

/*
 * The current guest (gs, in c->guest_slot) takes pc's pins (apply_pins);
 * a run in a guest booted for another pinning stores the domain XML it
 * measures in (its boot run's, with its own pins).  On failure the guest
 * is destroyed: its pins are unknown.
 */
static int pins_take(struct ctl *c, struct guest_state *gs, const struct plan_config *pc,
		     struct run_record *rec, struct ta_err *err)
{
	if (apply_pins(c, gs, pc, err) < 0) {
		slot_destroy(c, c->guest_slot);
		return -1;
	}
	if (c->plan->live_pin && pc->pinning != gs->boot_pinning) {
		struct strbuf xml = STRBUF_INIT;
		struct ta_err xerr = { 0 };
		if (build_xml(c, pc, gs->g->name, gs->boot, &xml, NULL, &xerr) == 0)
			runrec_artifact(rec, "domain.xml", xml.buf, xml.len);
		strbuf_release(&xml);
	}
	return 0;
}

int ctl_guest_up(struct ctl *c, const struct plan_config *pc, int64_t run_id, int block,
		 struct run_record *rec, struct ta_err *err)
{
	size_t slot = 0;
	if (!c->cfg->reuse_guest) {
		ctl_guest_down_all(c);
	} else {
		/* Guests booted ahead for a block that is over were not taken. */
		for (size_t i = 0; i < c->npreboot; i++)
			if (c->preboot[i].block != block) {
				preboot_clear(c);
				break;
			}
		size_t group = reuse_group(c->plan, pc->rec.index);
		if (c->guest && c->cache.group[c->guest_slot] != group)
			ctl_guest_park(c);
		bool hit, evict;
		slot = reuse_cache_take(&c->cache, group, block, c->cfg->reuse_runs, &hit, &evict);
		if (evict) {
			/* It may be the current guest (its group's, blocks used up). */
			if (c->guest == c->kept[slot])
				c->guest = NULL;
			destroy(c->kept[slot]);
			c->kept[slot] = NULL;
		}
		struct guest_state *gs = hit ? c->kept[slot] : NULL;
		if (gs && gs->suspended) {
			if (virDomainResume(gs->g->dom) < 0) {
				virErrorPtr e = virGetLastError();
				warn_emit("resuming the kept guest failed (%s); booting a new one",
					  e && e->message ? e->message : "?");
				destroy(gs);
				c->kept[slot] = gs = NULL;
			} else {
				gs->suspended = false;
			}
		}
		if (gs) {
			/* Reused: the guest must still see its shape. */
			c->guest = gs;
			c->guest_slot = slot;
			rec->boot = gs->boot;
			if (pins_take(c, gs, pc, rec, err) < 0)
				return -1;
			recheck_topology(c, pc, rec);
			return 0;
		}
	}
	struct strbuf xml = STRBUF_INIT;
	struct guest_state *gs;
	struct preboot pre;
	if (c->cfg->reuse_guest &&
	    preboot_take(c, reuse_group(c->plan, pc->rec.index), block, &pre)) {
		/* Booted with an earlier run of this block. */
		strbuf_addstr(&xml, pre.xml);
		free(pre.xml);
		gs = pre.gs;
		if (!gs)
			err_set(err, EXIT_FAILURE_RUN, "%s", pre.error);
		else if (virDomainResume(gs->g->dom) < 0) {
			virErrorPtr e = virGetLastError();
			err_set(err, EXIT_FAILURE_RUN, "resuming the guest booted for this run "
				"failed: %s", e && e->message ? e->message : "?");
			destroy(gs);
			gs = NULL;
		} else {
			gs->suspended = false;
		}
		free(pre.error);
	} else {
		gs = c->cfg->reuse_guest ? boot_block(c, pc, run_id, block, &xml, err)
					 : boot(c, pc, run_id, &xml, err);
	}
	runrec_artifact(rec, "domain.xml", xml.buf, xml.len);
	strbuf_release(&xml);
	if (!gs) {
		reuse_cache_drop(&c->cache, slot);
		return -1;
	}
	c->kept[slot] = gs;
	c->guest = gs;
	c->guest_slot = slot;
	gs->boot = rec->boot = run_id;
	gs->boot_pinning = pc->pinning;
	runrec_metric(rec, "boot_seconds", gs->g->boot_seconds, "s", METRIC_DIR_NONE);
	if (pins_take(c, gs, pc, rec, err) < 0)
		return -1;
	check_topology(c, pc, rec);
	return 0;
}

void ctl_guest_down(struct ctl *c)
{
	if (c->guest)
		slot_destroy(c, c->guest_slot);
}

void ctl_guest_down_all(struct ctl *c)
{
	preboot_clear(c);
	for (size_t i = 0; c->kept && i < c->cache.cap; i++)
		slot_destroy(c, i);
	c->guest = NULL;
}

void ctl_guest_park(struct ctl *c)
{
	struct guest_state *gs = c->guest;
	if (!gs)
		return;
	if (!c->cfg->reuse_guest || virDomainSuspend(gs->g->dom) < 0) {
		ctl_guest_down(c);
		return;
	}
	gs->suspended = true;
	c->guest = NULL;
}

int ctl_noise_guest_up(struct ctl *c, const struct plan_config *pc, struct ta_err *err)
{
	struct strbuf xml = STRBUF_INIT;
	noise_guest = boot(c, pc, 0, &xml, err);
	strbuf_release(&xml);
	if (!noise_guest)
		return -1;
	const struct noise *n = pc->noise;
	if (agent_spawn(noise_guest->g->dom, (const char *const *)n->argv.argv, err) < 0) {
		ctl_noise_guest_down(c);
		return -1;
	}
	return 0;
}

void ctl_noise_guest_down(struct ctl *c)
{
	destroy(noise_guest);
	noise_guest = NULL;
}

int ctl_guest_exec(struct ctl *c, char *const argv[], int timeout_s, double expect_s,
		   struct cmd_output *o, struct ta_err *err)
{
	struct agent_result res;
	if (agent_exec_cancellable(c->guest->g->dom, (const char *const *)argv, timeout_s,
				   expect_s, c->cancel, &res, err) < 0)
		return -1;
	o->exit_code = res.exitcode;
	o->timed_out = res.timed_out;
	o->seconds = res.seconds;
	strbuf_add(&o->out, res.out ? res.out : "", res.out_len);
	strbuf_add(&o->errout, res.err ? res.err : "", res.err_len);
	/* The agent says that it cut, not how much (qemu-ga keeps 16 MiB). */
	o->out_cut = res.out_truncated;
	if (res.out_truncated || res.err_truncated)
		strbuf_addf(&o->cut, "%s%s%s was cut at the guest agent's output limit",
			    res.out_truncated ? "stdout" : "",
			    res.out_truncated && res.err_truncated ? " and " : "",
			    res.err_truncated ? "stderr" : "");
	if (res.cancelled)
		strbuf_addstr(&o->what, "interrupted");
	else if (res.timed_out)
		strbuf_addf(&o->what, "timed out after %d s", timeout_s);
	else if (res.signal)
		strbuf_addf(&o->what, "killed by signal %d", res.signal);
	else
		strbuf_addf(&o->what, "exited with status %d", res.exitcode);
	agent_result_release(&res);
	return 0;
}

int ctl_guest_load_start(struct ctl *c, const struct noise *n, struct ta_err *err)
{
	return guestbg_start_noise(c->guest->g->dom, n->kind, n->vcpus, n->threads, n->argv.argv,
				   &c->guest->load, err);
}

int ctl_guest_server_start(struct ctl *c, char *const argv[], const char *vcpus,
			   struct ta_err *err)
{
	return guestbg_start(c->guest->g->dom, vcpus, argv, &c->guest->server, err);
}

int ctl_guest_load_stop(struct ctl *c, struct strbuf *ended, struct ta_err *err)
{
	struct guest_state *gs = c->guest;
	if (!gs || guestbg_stop(gs->g->dom, &gs->load, 2000, ended, err) == 0)
		return 0;
	/* Something may still run in it: never measure in this guest again. */
	ctl_guest_down(c);
	return -1;
}

int ctl_guest_bg_stop(struct ctl *c, struct ta_err *err)
{
	struct guest_state *gs = c->guest;
	if (!gs)
		return 0;
	struct ta_err e1 = { 0 }, e2 = { 0 };
	int r1 = guestbg_stop(gs->g->dom, &gs->server, 2000, NULL, &e1);
	int r2 = guestbg_stop(gs->g->dom, &gs->load, 2000, NULL, &e2);
	if (r1 == 0 && r2 == 0)
		return 0;
	/* Something may still run in it: never measure in this guest again. */
	ctl_guest_down(c);
	return err_set(err, EXIT_FAILURE_RUN, "%s%s%s", r1 < 0 ? e1.msg : "",
		       r1 < 0 && r2 < 0 ? "; " : "", r2 < 0 ? e2.msg : "");
}

int ctl_guest_qemu_pid(struct ctl *c)
{
	return c->guest ? guest_qemu_pid(c->guest->g) : 0;
}

void ctl_guest_stats_begin(struct ctl *c)
{
	struct ta_err err = { 0 };
	c->guest->have_before = vcpustats_read(c->guest->g->dom, &c->guest->before, &err) == 0;
}

void ctl_guest_stats_end(struct ctl *c, struct run_record *rec)
{
	struct guest_state *gs = c->guest;
	struct vcpustats after, d;
	struct ta_err err = { 0 };
	if (!gs || !gs->have_before)
		return;
	if (vcpustats_read(gs->g->dom, &after, &err) == 0) {
		if (vcpustats_diff(&gs->before, &after, &d, &err) == 0) {
			uint64_t run = 0, wait = 0;
			for (size_t i = 0; i < d.n; i++) {
				char name[48];
				snprintf(name, sizeof(name), "vcpu%zu.run_s", i);
				runrec_metric(rec, name, (double)d.time_ns[i] / 1e9, "s", METRIC_DIR_NONE);
				run += d.time_ns[i];
				if (d.has_delay) {
					snprintf(name, sizeof(name), "vcpu%zu.wait_s", i);
					runrec_metric(rec, name, (double)d.delay_ns[i] / 1e9, "s", METRIC_DIR_NONE);
					wait += d.delay_ns[i];
				}
			}
			runrec_metric(rec, "vcpu_run_s", (double)run / 1e9, "s", METRIC_DIR_NONE);
			if (d.has_delay)
				runrec_metric(rec, "vcpu_wait_s", (double)wait / 1e9, "s", METRIC_DIR_LOWER);
			vcpustats_release(&d);
		}
		vcpustats_release(&after);
	}
	vcpustats_release(&gs->before);
	gs->have_before = false;
}
