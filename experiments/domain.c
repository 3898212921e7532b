/*
 * domain: build a libvirt domain XML from a template with libxml2.
 * The contract, including the pinning policies, is in domain.h.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../util/cpuset.h"
#include "../util/procgroup.h"
#include "../util/safefile.h"
#include "domain.h"

/*
 * Built-in templates for direct kernel boot of the test guest image.  Only
 * what the builder does not set itself is here; blanks are dropped on
 * parsing so the output indents cleanly.
 */
static const char template_x86_64[] =
	"<domain type='qemu'>"
	"<name>template</name>"
	"<memory unit='MiB'>512</memory>"
	"<vcpu placement='static'>1</vcpu>"
	"<os>"
	"<type arch='x86_64' machine='pc'>hvm</type>"
	"<kernel/><initrd/>"
	/* Boot time under TCG (2.2-2.6 s where it was ~3.9): no crypto
	 * self-tests (cryptomgr.notests; the KDF one runs regardless, so its
	 * initcall is skipped), no delay-loop calibration of each vCPU (lpj=;
	 * it failed under TCG anyway, "Probably due to long platform
	 * interrupts", ~0.1 s each). */
	"<cmdline>console=ttyS0 panic=-1 quiet cryptomgr.notests "
	"initcall_blacklist=crypto_kdf108_init lpj=10000000</cmdline>"
	"</os>"
	/* Without ACPI the kernel finds no MP table and brings up one CPU. */
	"<features><acpi/><apic/></features>"
	"<clock offset='utc'/>"
	"<devices>"
	"<serial type='pty'/>"
	"<memballoon model='none'/>"
	"</devices>"
	"</domain>";

/* Debian's ppc64el guests are little-endian: libvirt calls that ppc64le. */
static const char template_ppc64[] =
	"<domain type='qemu'>"
	"<name>template</name>"
	"<memory unit='MiB'>1024</memory>"
	"<vcpu placement='static'>1</vcpu>"
	"<os>"
	"<type arch='ppc64le' machine='pseries'>hvm</type>"
	"<kernel/><initrd/>"
	"<cmdline>console=hvc0 panic=-1 quiet</cmdline>"
	"</os>"
	"<clock offset='utc'/>"
	"<devices>"
	"<console type='pty'><target type='serial'/></console>"
	"<memballoon model='none'/>"
	"</devices>"
	"</domain>";

/* Element order libvirt itself writes; new elements go where they belong. */
static const char *const domain_order[] = {
	"name", "uuid", "title", "description", "metadata", "maxMemory", "memory",
	"currentMemory", "blkiotune", "memtune", "memoryBacking", "vcpu", "vcpus",
	"iothreads", "cputune", "numatune", "resource", "sysinfo", "bootloader",
	"bootloader_args", "os", "idmap", "features", "cpu", "clock",
	"on_poweroff", "on_reboot", "on_crash", "on_lockfailure", "pm",
	"perf", "devices", "seclabel", NULL,
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

void domain_pins_release(struct domain_pins *pins)
{
	for (size_t i = 0; i < pins->nvcpu; i++)
		free(pins->vcpu[i]);
	free(pins->vcpu);
	free(pins->emulator);
	memset(pins, 0, sizeof(*pins));
}

static int cmp_host_cpu(const void *a, const void *b)
{
	const struct host_cpu *x = a, *y = b;
	if (x->package != y->package)
		return x->package < y->package ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/*
 * Orders the host CPUs for compact (core by core) or spread (thread rank by
 * thread rank across all cores), writing CPU numbers into order[].
 */
static void pins_order(const struct host_cpu *hc, size_t n, bool spread, int *order)
{
	struct host_cpu *s = xmalloc(n * sizeof(*s));
	memcpy(s, hc, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_host_cpu);
	if (!spread) {
		for (size_t i = 0; i < n; i++)
			order[i] = s[i].cpu;
		free(s);
		return;
	}
	/* rank[i]: which thread of its core s[i] is (0 for the first). */
	int *rank = xmalloc(n * sizeof(*rank));
	int maxrank = 0;
	for (size_t i = 0; i < n; i++) {
		bool same = i > 0 && s[i].package == s[i - 1].package && s[i].core == s[i - 1].core;
		rank[i] = same ? rank[i - 1] + 1 : 0;
		if (rank[i] > maxrank)
			maxrank = rank[i];
	}
	size_t k = 0;
	for (int r = 0; r <= maxrank; r++)
		for (size_t i = 0; i < n; i++)
			if (rank[i] == r)
				order[k++] = s[i].cpu;
	free(rank);
	free(s);
}

static char *cpuset_single(int cpu)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%d", cpu);
	return strbuf_detach(&sb);
}

/* Normalises a user's cpuset ("3,1-2" -> "1-3"), or fails naming it. */
static char *cpuset_normalise(const char *s, const char *what, struct ta_err *err)
{
	struct cpuset cs;
	if (cpuset_parse(s, &cs, err) < 0) {
		err_prefix(err, "%s", what);
		return NULL;
	}
	struct strbuf sb = STRBUF_INIT;
	cpuset_format(&cs, &sb);
	cpuset_release(&cs);
	return strbuf_detach(&sb);
}

int domain_pins_compute(const struct domain_request *req, struct domain_pins *pins,
			struct ta_err *err)
{
	memset(pins, 0, sizeof(*pins));
	if (req->pin == PIN_NONE)
		return 0;
	if (req->pin == PIN_EXPLICIT) {
		if (req->nvcpu_cpus != (size_t)req->vcpus)
			return err_set(err, EXIT_BAD_INPUT,
				       "explicit pinning gives %zu cpusets for %d vCPUs; give one per vCPU",
				       req->nvcpu_cpus, req->vcpus);
		pins->vcpu = xcalloc(req->vcpus, sizeof(*pins->vcpu));
		pins->nvcpu = req->vcpus;
		for (int i = 0; i < req->vcpus; i++) {
			char what[32];
			snprintf(what, sizeof(what), "vCPU %d", i);
			pins->vcpu[i] = cpuset_normalise(req->vcpu_cpus[i], what, err);
			if (!pins->vcpu[i])
				goto fail;
		}
		if (req->emulator_cpus) {
			pins->emulator = cpuset_normalise(req->emulator_cpus, "emulator", err);
			if (!pins->emulator)
				goto fail;
		}
		return 0;
	}

	size_t n = req->nhost_cpus;
	if (!req->host_cpus || n == 0)
		return err_set(err, EXIT_FAILURE_RUN,
			       "%s pinning needs the host's CPU topology, which is unknown",
			       config_pin_policy_name(req->pin));
	if ((size_t)req->vcpus > n)
		return err_set(err, EXIT_BAD_INPUT,
			       "%s pinning of %d vCPUs needs %d host CPUs; this host has %zu online "
			       "(use fewer vCPUs or pinning: none)",
			       config_pin_policy_name(req->pin), req->vcpus, req->vcpus, n);
	int *order = xmalloc(n * sizeof(*order));
	pins_order(req->host_cpus, n, req->pin == PIN_SPREAD, order);
	pins->vcpu = xcalloc(req->vcpus, sizeof(*pins->vcpu));
	pins->nvcpu = req->vcpus;
	for (int i = 0; i < req->vcpus; i++)
		pins->vcpu[i] = cpuset_single(order[i]);

	/* Emulator: the CPUs no vCPU got, else all the vCPUs' CPUs. */
	size_t nrest = n - req->vcpus;
	int *set = order + (nrest ? (size_t)req->vcpus : 0);
	size_t nset = nrest ? nrest : n;
	qsort(set, nset, sizeof(*set), cmp_int);
	struct cpuset cs = { set, nset };
	struct strbuf sb = STRBUF_INIT;
	cpuset_format(&cs, &sb);
	pins->emulator = strbuf_detach(&sb);
	free(order);
	return 0;
fail:
	domain_pins_release(pins);
	return -1;
}

static bool is_pow2(int v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

static int request_check(const struct domain_request *r, struct ta_err *err)
{
	if (!r->name || !*r->name)
		return err_set(err, EXIT_BAD_INPUT, "domain name is empty");
	for (const char *p = r->name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			return err_set(err, EXIT_BAD_INPUT,
				       "domain name '%s': use only letters, digits, '_', '.' and '-'",
				       r->name);
	if (r->arch != ARCH_X86_64 && r->arch != ARCH_PPC64)
		return err_set(err, EXIT_BAD_INPUT,
			       "domain arch must be x86_64 or ppc64 (resolve 'host' first)");
	if (r->type != DOMAIN_KVM && r->type != DOMAIN_QEMU)
		return err_set(err, EXIT_BAD_INPUT,
			       "domain type must be kvm or qemu (resolve 'auto' with guest_type_resolve)");
	int dies = r->dies > 0 ? r->dies : 1;
	if (r->sockets < 1 || r->cores < 1 || r->threads < 1 || r->dies < 0)
		return err_set(err, EXIT_BAD_INPUT,
			       "topology %dx%dx%dx%d: sockets, dies, cores and threads must be >= 1",
			       r->sockets, dies, r->cores, r->threads);
	long long product = (long long)r->sockets * dies * r->cores * r->threads;
	if (r->vcpus < 1 || product != r->vcpus)
		return err_set(err, EXIT_BAD_INPUT,
			       "%d vCPUs but sockets*dies*cores*threads = %dx%dx%dx%d = %lld; "
			       "they must be equal", r->vcpus, r->sockets, dies, r->cores,
			       r->threads, product);
	if (r->vcpus > 1024)
		return err_set(err, EXIT_BAD_INPUT, "%d vCPUs: at most 1024", r->vcpus);
	if (r->arch == ARCH_PPC64) {
		if (!is_pow2(r->threads) || r->threads > 8)
			return err_set(err, EXIT_BAD_INPUT,
				       "ppc64 (pseries) needs threads per core to be 1, 2, 4 or 8, not %d",
				       r->threads);
		if (dies != 1)
			return err_set(err, EXIT_BAD_INPUT,
				       "ppc64 (pseries) has no dies; use dies: 1");
	}
	if (r->memory_mib < 0 || (r->memory_mib > 0 && r->memory_mib < 64))
		return err_set(err, EXIT_BAD_INPUT, "memory %d MiB: use at least 64",
			       r->memory_mib);
	if (!r->template_path) {
		if (!r->kernel || r->kernel[0] != '/' || !r->initrd || r->initrd[0] != '/')
			return err_set(err, EXIT_BAD_INPUT,
				       "the built-in template needs absolute kernel and initrd paths "
				       "(run 'make guest-image')");
	}
	return 0;
}

static xmlNodePtr child_find(xmlNodePtr parent, const char *name)
{
	for (xmlNodePtr c = parent->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && !xmlStrcmp(c->name, BAD_CAST name))
			return c;
	return NULL;
}

static void children_remove(xmlNodePtr parent, const char *name)
{
	xmlNodePtr c = parent->children;
	while (c) {
		xmlNodePtr next = c->next;
		if (c->type == XML_ELEMENT_NODE && !xmlStrcmp(c->name, BAD_CAST name)) {
			xmlUnlinkNode(c);
			xmlFreeNode(c);
		}
		c = next;
	}
}

static int order_index(const char *const *order, const xmlChar *name)
{
	for (int i = 0; order[i]; i++)
		if (!xmlStrcmp(name, BAD_CAST order[i]))
			return i;
	return -1;
}

/*
 * Returns the child element `name` of the domain root, creating it at the
 * place libvirt's own order gives it (so output reads like libvirt's).
 */
static xmlNodePtr domain_child(xmlNodePtr root, const char *name)
{
	xmlNodePtr c = child_find(root, name);
	if (c)
		return c;
	c = xmlNewNode(NULL, BAD_CAST name);
	int want = order_index(domain_order, BAD_CAST name);
	for (xmlNodePtr s = root->children; s; s = s->next) {
		if (s->type != XML_ELEMENT_NODE)
			continue;
		int idx = order_index(domain_order, s->name);
		if (idx > want)
			return xmlAddPrevSibling(s, c);
	}
	return xmlAddChild(root, c);
}

static void node_set_text(xmlNodePtr n, const char *text)
{
	xmlNodeSetContent(n, NULL);
	xmlNodeAddContent(n, BAD_CAST text);
}

static void set_int_text(xmlNodePtr n, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	node_set_text(n, buf);
}

static void set_int_prop(xmlNodePtr n, const char *name, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	xmlSetProp(n, BAD_CAST name, BAD_CAST buf);
}

unsigned long long domain_proc_start(long pid)
{
	struct proc_info pi;	/* /proc/PID/stat read in one place: util/procgroup */
	return procgroup_info((pid_t)pid, &pi) == 0 ? pi.start : 0;
}

static void set_metadata(xmlNodePtr root, const struct domain_request *r)
{
	xmlNodePtr md = domain_child(root, "metadata");
	/* Drop an old element of ours (a template made from a dumped domain). */
	xmlNodePtr c = md->children;
	while (c) {
		xmlNodePtr next = c->next;
		if (c->type == XML_ELEMENT_NODE && c->ns &&
		    !xmlStrcmp(c->ns->href, BAD_CAST DOMAIN_XMLNS)) {
			xmlUnlinkNode(c);
			xmlFreeNode(c);
		}
		c = next;
	}
	xmlNodePtr run = xmlNewChild(md, NULL, BAD_CAST "run", NULL);
	xmlNsPtr ns = xmlNewNs(run, BAD_CAST DOMAIN_XMLNS, BAD_CAST DOMAIN_XMLNS_PREFIX);
	xmlSetNs(run, ns);
	set_int_prop(run, "experiment", r->experiment_id);
	set_int_prop(run, "run", r->run_id);
	long pid = r->owner_pid ? r->owner_pid : (long)getpid();
	unsigned long long start = r->owner_pid ? r->owner_start : domain_proc_start(pid);
	set_int_prop(run, "pid", pid);
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", start);
	xmlSetProp(run, BAD_CAST "pid-start", BAD_CAST buf);
}

void domain_cpu_choose(enum domain_type type, enum guest_arch arch, struct domain_cpu *out)
{
	*out = (struct domain_cpu){ NULL, NULL };
	if (type == DOMAIN_KVM) {
		out->mode = "host-passthrough";
	} else if (arch == ARCH_X86_64) {
		out->mode = "custom";
		out->model = DOMAIN_TCG_X86_MODEL;
	}
}

static void set_cpu(xmlNodePtr root, const struct domain_request *r)
{
	children_remove(root, "cpu");
	xmlNodePtr cpu = domain_child(root, "cpu");
	struct domain_cpu want;
	domain_cpu_choose(r->type, r->arch, &want);
	if (want.mode) {
		xmlSetProp(cpu, BAD_CAST "mode", BAD_CAST want.mode);
		if (want.model)
			xmlSetProp(cpu, BAD_CAST "match", BAD_CAST "exact");
		xmlSetProp(cpu, BAD_CAST "check", BAD_CAST "none");
	}
	if (want.model) {
		xmlNodePtr m = xmlNewChild(cpu, NULL, BAD_CAST "model", BAD_CAST want.model);
		xmlSetProp(m, BAD_CAST "fallback", BAD_CAST "forbid");
	}
	xmlNodePtr t = xmlNewChild(cpu, NULL, BAD_CAST "topology", NULL);
	set_int_prop(t, "sockets", r->sockets);
	set_int_prop(t, "dies", r->dies > 0 ? r->dies : 1);
	set_int_prop(t, "cores", r->cores);
	set_int_prop(t, "threads", r->threads);
	if (r->arch == ARCH_PPC64)
		xmlUnsetProp(t, BAD_CAST "dies");
}

/* Adds n to parent before `before`, or at the end when before is NULL. */
static void insert_before(xmlNodePtr parent, xmlNodePtr before, xmlNodePtr n)
{
	if (before)
		xmlAddPrevSibling(before, n);
	else
		xmlAddChild(parent, n);
}

static void set_cputune(xmlNodePtr root, const struct domain_pins *pins)
{
	xmlNodePtr ct = child_find(root, "cputune");
	if (ct) {
		children_remove(ct, "vcpupin");
		children_remove(ct, "emulatorpin");
	}
	if (!pins->nvcpu && !pins->emulator) {
		if (ct && !xmlFirstElementChild(ct)) {
			xmlUnlinkNode(ct);
			xmlFreeNode(ct);
		}
		return;
	}
	if (!ct)
		ct = domain_child(root, "cputune");
	/* Pins go first, before any tuning knobs the template had. */
	xmlNodePtr first = ct->children;
	for (size_t i = 0; i < pins->nvcpu; i++) {
		xmlNodePtr p = xmlNewNode(NULL, BAD_CAST "vcpupin");
		set_int_prop(p, "vcpu", (long long)i);
		xmlSetProp(p, BAD_CAST "cpuset", BAD_CAST pins->vcpu[i]);
		insert_before(ct, first, p);
	}
	if (pins->emulator) {
		xmlNodePtr p = xmlNewNode(NULL, BAD_CAST "emulatorpin");
		xmlSetProp(p, BAD_CAST "cpuset", BAD_CAST pins->emulator);
		insert_before(ct, first, p);
	}
}

static bool has_agent_channel(xmlNodePtr devices)
{
	for (xmlNodePtr c = devices->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, BAD_CAST "channel"))
			continue;
		xmlNodePtr t = child_find(c, "target");
		if (!t)
			continue;
		xmlChar *name = xmlGetProp(t, BAD_CAST "name");
		bool yes = name && !xmlStrcmp(name, BAD_CAST DOMAIN_AGENT_CHANNEL);
		xmlFree(name);
		if (yes)
			return true;
	}
	return false;
}

static void set_devices(xmlNodePtr root, const struct domain_request *r)
{
	xmlNodePtr dev = domain_child(root, "devices");
	if (!has_agent_channel(dev)) {
		xmlNodePtr ch = xmlNewNode(NULL, BAD_CAST "channel");
		xmlSetProp(ch, BAD_CAST "type", BAD_CAST "unix");
		xmlNodePtr t = xmlNewChild(ch, NULL, BAD_CAST "target", NULL);
		xmlSetProp(t, BAD_CAST "type", BAD_CAST "virtio");
		xmlSetProp(t, BAD_CAST "name", BAD_CAST DOMAIN_AGENT_CHANNEL);
		/* Before the memballoon, where libvirt lists channels. */
		xmlNodePtr mb = child_find(dev, "memballoon");
		insert_before(dev, mb, ch);
	}
	if (r->console_log && !r->template_path) {
		/* The built-in serial/console goes to a file for boot diagnosis. */
		xmlNodePtr s = child_find(dev, r->arch == ARCH_PPC64 ? "console" : "serial");
		if (s) {
			xmlSetProp(s, BAD_CAST "type", BAD_CAST "file");
			children_remove(s, "source");
			xmlNodePtr src = xmlNewNode(NULL, BAD_CAST "source");
			xmlSetProp(src, BAD_CAST "path", BAD_CAST r->console_log);
			insert_before(s, s->children, src);
		}
	}
}

static int set_boot(xmlNodePtr root, const struct domain_request *r, struct ta_err *err)
{
	xmlNodePtr os = child_find(root, "os");
	xmlNodePtr k = os ? child_find(os, "kernel") : NULL;
	xmlNodePtr i = os ? child_find(os, "initrd") : NULL;
	if (!k || !i)
		return err_set(err, EXIT_FAILURE_RUN, "built-in template lacks <kernel>/<initrd>");
	node_set_text(k, r->kernel);
	node_set_text(i, r->initrd);
	if (r->cmdline)
		node_set_text(domain_child(os, "cmdline"), r->cmdline);
	return 0;
}

static xmlDocPtr template_load(const struct domain_request *r, struct ta_err *err)
{
	int flags = XML_PARSE_NOBLANKS | XML_PARSE_NONET | XML_PARSE_NOERROR |
		    XML_PARSE_NOWARNING;
	xmlDocPtr doc;
	if (r->template_path) {
		/* Opened here so that a FIFO or device put in its place never blocks. */
		const char *why;
		int fd = safefile_open_input(r->template_path, &why);
		if (fd < 0) {
			err_set(err, EXIT_BAD_INPUT, "%s: cannot read the domain template: %s",
				r->template_path, why);
			return NULL;
		}
		doc = xmlReadFd(fd, r->template_path, NULL, flags);
		close(fd);
		if (!doc) {
			const xmlError *e = xmlGetLastError();
			err_set(err, EXIT_BAD_INPUT, "%s:%d: not a readable XML file: %s",
				r->template_path, e ? e->line : 0,
				e && e->message ? e->message : "parse error");
			/* libxml2's message ends in a newline; drop it. */
			size_t len = strlen(err->msg);
			if (len && err->msg[len - 1] == '\n')
				err->msg[len - 1] = 0;
			return NULL;
		}
	} else {
		const char *t = r->arch == ARCH_PPC64 ? template_ppc64 : template_x86_64;
		doc = xmlReadMemory(t, (int)strlen(t), "builtin.xml", NULL, flags);
		if (!doc) {
			err_set(err, EXIT_FAILURE_RUN, "built-in template does not parse");
			return NULL;
		}
	}
	xmlNodePtr root = xmlDocGetRootElement(doc);
	if (!root || xmlStrcmp(root->name, BAD_CAST "domain")) {
		err_set(err, EXIT_BAD_INPUT, "%s: the root element is not <domain>",
			r->template_path ? r->template_path : "builtin");
		xmlFreeDoc(doc);
		return NULL;
	}
	return doc;
}

int domain_xml_build(const struct domain_request *r, struct strbuf *out, struct ta_err *err)
{
	if (request_check(r, err) < 0)
		return -1;
	struct domain_pins pins;
	if (domain_pins_compute(r, &pins, err) < 0)
		return -1;
	xmlDocPtr doc = template_load(r, err);
	if (!doc) {
		domain_pins_release(&pins);
		return -1;
	}
	xmlNodePtr root = xmlDocGetRootElement(doc);
	int rc = -1;

	xmlSetProp(root, BAD_CAST "type", BAD_CAST(r->type == DOMAIN_KVM ? "kvm" : "qemu"));
	node_set_text(domain_child(root, "name"), r->name);
	children_remove(root, "uuid");
	set_metadata(root, r);
	if (r->memory_mib > 0) {
		children_remove(root, "currentMemory");
		xmlNodePtr m = domain_child(root, "memory");
		xmlSetProp(m, BAD_CAST "unit", BAD_CAST "MiB");
		set_int_text(m, r->memory_mib);
	}
	/* A template's vcpu attributes (current=, cpuset=) would fight the shape. */
	children_remove(root, "vcpu");
	children_remove(root, "vcpus");
	xmlNodePtr vcpu = domain_child(root, "vcpu");
	xmlSetProp(vcpu, BAD_CAST "placement", BAD_CAST "static");
	set_int_text(vcpu, r->vcpus);
	set_cputune(root, &pins);
	set_cpu(root, r);
	node_set_text(domain_child(root, "on_poweroff"), "destroy");
	node_set_text(domain_child(root, "on_reboot"), "destroy");
	node_set_text(domain_child(root, "on_crash"), "destroy");
	set_devices(root, r);
	if (!r->template_path && set_boot(root, r, err) < 0)
		goto out;

	xmlChar *mem = NULL;
	int len = 0;
	xmlDocDumpFormatMemoryEnc(doc, &mem, &len, "UTF-8", 1);
	/* Skip the XML declaration: libvirt does not need it and dumps none. */
	const char *body = (const char *)mem;
	if (!strncmp(body, "<?xml", 5)) {
		const char *nl = strchr(body, '\n');
		body = nl ? nl + 1 : body;
	}
	strbuf_addstr(out, body);
	xmlFree(mem);
	rc = 0;
out:
	xmlFreeDoc(doc);
	domain_pins_release(&pins);
	return rc;
}
