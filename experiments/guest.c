/*
 * guest: create, wait for, inspect and destroy transient libvirt domains.
 * The contract is in guest.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "../util/cpuset.h"
#include "../util/mono.h"
#include "../util/strbuf.h"
#include "agent.h"
#include "domain.h"
#include "guest.h"
#include "hostprobe.h"

/* libvirt prints every error to stderr unless told otherwise; we report
 * them ourselves, with context, from virGetLastErrorMessage(). */
static void guest_libvirt_quiet(void *opaque, virErrorPtr e)
{
}

static const char *lv_msg(void)
{
	const char *m = virGetLastErrorMessage();
	return m ? m : "unknown libvirt error";
}

/* Where the system daemon listens (libvirt's default for qemu:///system). */
#define LIBVIRTD_SOCKET "/var/run/libvirt/libvirt-sock"

virConnectPtr guest_connect(const char *uri, struct ta_err *err)
{
	virSetErrorFunc(NULL, guest_libvirt_quiet);
	if (!uri)
		uri = "qemu:///system";
	virConnectPtr c = virConnectOpen(uri);
	if (!c) {
		const char *msg = lv_msg();
		const char *hint = "";
		/* Without root, the daemon's socket refuses us (by mode or polkit,
		 * whose D-Bus may not even exist here): that, not a stopped daemon. */
		if (geteuid() != 0 && strstr(uri, "/system") &&
		    access(LIBVIRTD_SOCKET, F_OK) == 0)
			hint = " (libvirtd runs, but lets only root, or users its polkit or "
			       "unix_sock_group settings allow, use this URI: run as root)";
		else if (!strcmp(uri, "qemu:///system"))
			hint = " (is libvirtd running? scripts/libvirtd-start.sh starts it)";
		err_set(err, EXIT_FAILURE_RUN, "cannot connect to %s: %s%s", uri, msg, hint);
		return NULL;
	}
	return c;
}

char *guest_name_new(const char *prefix)
{
	static unsigned counter;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct strbuf sb = STRBUF_INIT;
	/* pid + counter is unique on this host; the time tells runs apart in logs. */
	strbuf_addf(&sb, "%s%ld-%u-%lx", prefix ? prefix : DOMAIN_NAME_PREFIX, (long)getpid(),
		    ++counter, (unsigned long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000) & 0xffffff);
	return strbuf_detach(&sb);
}

/*
 * True when dom carries our <metadata> element and the process that created
 * it is gone: a pid that is dead, or alive but started at another time (the
 * pid was reused).  Metadata without a pid (older builds) counts as gone.
 */
static bool is_leftover(virDomainPtr dom)
{
	char *md = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, DOMAIN_XMLNS,
					VIR_DOMAIN_AFFECT_LIVE);
	if (!md)
		return false;
	bool gone = true;
	xmlDocPtr doc = xmlReadMemory(md, (int)strlen(md), "metadata.xml", NULL,
				      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	xmlChar *pid_s = root ? xmlGetProp(root, BAD_CAST "pid") : NULL;
	xmlChar *start_s = root ? xmlGetProp(root, BAD_CAST "pid-start") : NULL;
	if (pid_s && start_s) {
		long pid = strtol((const char *)pid_s, NULL, 10);
		unsigned long long start = strtoull((const char *)start_s, NULL, 10);
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM) &&
		    domain_proc_start(pid) == start)
			gone = false;
	}
	xmlFree(pid_s);
	xmlFree(start_s);
	xmlFreeDoc(doc);
	free(md);
	return gone;
}

int guest_leftovers_destroy(virConnectPtr conn, const char *prefix, int *n,
			    struct strbuf *names, struct ta_err *err)
{
	virDomainPtr *doms = NULL;
	int count = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (n)
		*n = 0;
	if (count < 0)
		return err_set(err, EXIT_FAILURE_RUN, "listing domains: %s", lv_msg());
	int rc = 0;
	size_t plen = strlen(prefix);
	for (int i = 0; i < count; i++) {
		const char *name = virDomainGetName(doms[i]);
		if (rc == 0 && name && !strncmp(name, prefix, plen) && is_leftover(doms[i])) {
			if (virDomainDestroy(doms[i]) < 0 && virDomainIsActive(doms[i]) == 1)
				rc = err_set(err, EXIT_FAILURE_RUN,
					     "destroying leftover domain %s: %s", name, lv_msg());
			else {
				if (n)
					(*n)++;
				if (names)
					strbuf_addf(names, "%s%s", names->len ? ", " : "", name);
			}
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	return rc;
}

struct guest *guest_start(virConnectPtr conn, const char *xml, struct ta_err *err)
{
	double t0 = mono_now_s();
	virDomainPtr dom = virDomainCreateXML(conn, xml, VIR_DOMAIN_NONE);
	if (!dom) {
		err_set(err, EXIT_FAILURE_RUN, "starting the guest failed: %s", lv_msg());
		return NULL;
	}
	struct guest *g = xcalloc(1, sizeof(*g));
	g->conn = conn;
	g->dom = dom;
	g->name = xstrdup(virDomainGetName(dom));
	g->started = t0;
	return g;
}

/* Frees g without touching its domain (it is gone or destroyed already). */
static void guest_free(struct guest *g)
{
	virDomainFree(g->dom);
	free(g->name);
	free(g);
}

int guest_wait_agent(struct guest *g, int timeout_ms, const char *console_log,
		     struct ta_err *err)
{
	struct ta_err last = { 0 };
	bool up = timeout_ms <= 0;
	while (!up) {
		/* A transient domain that powered off, crashed or rebooted (all
		 * "destroy") is gone: no point waiting for its agent. */
		if (virDomainIsActive(g->dom) != 1) {
			err_set(err, EXIT_FAILURE_RUN,
				"guest %s stopped before its agent answered (kernel panic or no "
				"init?)%s%s", g->name, console_log ? "; its console is in " : "",
				console_log ? console_log : "");
			guest_free(g);
			return -1;
		}
		if (agent_ping(g->dom, &last) == 0) {
			up = true;
			break;
		}
		if ((mono_now_s() - g->started) * 1000 >= timeout_ms)
			break;
		mono_sleep_ms(GUEST_POLL_MS);
	}
	if (!up) {
		err_set(err, EXIT_FAILURE_RUN,
			"guest %s did not boot: no guest agent after %.1f s (last: %s); check the "
			"kernel, initrd and that qemu-ga runs in the guest%s%s", g->name,
			timeout_ms / 1000.0, last.msg[0] ? last.msg : "no answer",
			console_log ? "; console: " : "", console_log ? console_log : "");
		struct ta_err derr = { 0 };
		guest_destroy(g, &derr);
		return -1;
	}
	g->boot_seconds = mono_now_s() - g->started;
	return 0;
}

struct guest *guest_boot(virConnectPtr conn, const char *xml, int timeout_ms,
			 const char *console_log, struct ta_err *err)
{
	struct guest *g = guest_start(conn, xml, err);
	return g && guest_wait_agent(g, timeout_ms, console_log, err) == 0 ? g : NULL;
}

int guest_qemu_pid(const struct guest *g)
{
	/* qemu:///system keeps the QEMU pid in its state directory. */
	char path[512];
	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", g->name);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int pid = 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

int guest_destroy(struct guest *g, struct ta_err *err)
{
	if (!g)
		return 0;
	int rc = 0;
	if (virDomainIsActive(g->dom) == 1 && virDomainDestroy(g->dom) < 0 &&
	    virDomainIsActive(g->dom) == 1)
		rc = err_set(err, EXIT_FAILURE_RUN, "destroying %s: %s", g->name, lv_msg());
	guest_free(g);
	return rc;
}

/* Turns a libvirt CPU map into a cpuset string. */
static char *cpumap_format(const unsigned char *map, int maplen)
{
	int *cpus = xmalloc((size_t)maplen * 8 * sizeof(*cpus));
	size_t n = 0;
	for (int c = 0; c < maplen * 8; c++)
		if (VIR_CPU_USABLE(map, maplen, 0, c))
			cpus[n++] = c;
	struct cpuset cs = { cpus, n };
	struct strbuf sb = STRBUF_INIT;
	cpuset_format(&cs, &sb);
	free(cpus);
	return strbuf_detach(&sb);
}

int guest_pins_read(const struct guest *g, char ***vcpu, size_t *nvcpu, char **emulator,
		    struct ta_err *err)
{
	*vcpu = NULL;
	*nvcpu = 0;
	*emulator = NULL;
	int ncpus = virNodeGetCPUMap(g->conn, NULL, NULL, 0);
	virDomainInfo info;
	if (ncpus < 0 || virDomainGetInfo(g->dom, &info) < 0)
		return err_set(err, EXIT_FAILURE_RUN, "%s: reading CPU info: %s", g->name,
			       lv_msg());
	int maplen = VIR_CPU_MAPLEN(ncpus);
	unsigned char *maps = xcalloc(info.nrVirtCpu, maplen);
	int n = virDomainGetVcpuPinInfo(g->dom, info.nrVirtCpu, maps, maplen,
					VIR_DOMAIN_AFFECT_LIVE);
	if (n < 0) {
		free(maps);
		return err_set(err, EXIT_FAILURE_RUN, "%s: reading vCPU pinning: %s", g->name,
			       lv_msg());
	}
	char **v = xcalloc(n ? n : 1, sizeof(*v));
	for (int i = 0; i < n; i++)
		v[i] = cpumap_format(maps + (size_t)i * maplen, maplen);
	unsigned char *emap = xcalloc(1, maplen);
	if (virDomainGetEmulatorPinInfo(g->dom, emap, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0) {
		free(emap);
		free(maps);
		guest_pins_free(v, n, NULL);
		return err_set(err, EXIT_FAILURE_RUN, "%s: reading emulator pinning: %s",
			       g->name, lv_msg());
	}
	*emulator = cpumap_format(emap, maplen);
	free(emap);
	free(maps);
	*vcpu = v;
	*nvcpu = n;
	return 0;
}

void guest_pins_free(char **vcpu, size_t nvcpu, char *emulator)
{
	for (size_t i = 0; i < nvcpu; i++)
		free(vcpu[i]);
	free(vcpu);
	free(emulator);
}

enum domain_type guest_type_resolve(enum domain_type want, enum guest_arch arch,
				    const char **why)
{
	static int cached[3] = { -1, -1, -1 };	/* per arch: 1 usable, 0 not */
	static char reason[3][256];
	if (want != DOMAIN_AUTO) {
		*why = want == DOMAIN_KVM ? "kvm requested" : "qemu (TCG) requested";
		return want;
	}
	int a = arch >= 0 && arch < 3 ? (int)arch : 0;
	if (cached[a] < 0)
		cached[a] = hostprobe_kvm_usable(arch, reason[a], sizeof(reason[a]));
	*why = reason[a];
	return cached[a] ? DOMAIN_KVM : DOMAIN_QEMU;
}
