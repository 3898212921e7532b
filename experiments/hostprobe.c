/*
 * hostprobe: read-only facts about this host.  The contract is in
 * hostprobe.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "../model/knob-table.h"
#include "../util/strbuf.h"
#include "hostprobe.h"
#include "knobs.h"

#define SYS_CPU "/sys/devices/system/cpu"

/* The first line of a sysfs/proc file without its newline, or NULL. */
static char *file_line(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	char *s = strbuf_detach(&sb);
	s[strcspn(s, "\n")] = 0;
	return s;
}

static int file_int(const char *path, int *v)
{
	char *s = file_line(path);
	if (!s)
		return -1;
	char *end;
	long x = strtol(s, &end, 10);
	int rc = end == s ? -1 : 0;
	*v = (int)x;
	free(s);
	return rc;
}

static bool path_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static int cmp_host_cpu_num(const void *a, const void *b)
{
	const struct host_cpu *x = a, *y = b;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

int hostprobe_cpus_read(struct host_cpu **cpus, size_t *n, struct ta_err *err)
{
	*cpus = NULL;
	*n = 0;
	DIR *d = opendir(SYS_CPU);
	if (!d)
		return err_set(err, EXIT_FAILURE_RUN, "%s: %s", SYS_CPU, strerror(errno));
	size_t alloc = 0;
	struct host_cpu *v = NULL;
	struct dirent *e;
	char path[512];
	while ((e = readdir(d))) {
		int cpu;
		char extra;
		if (sscanf(e->d_name, "cpu%d%c", &cpu, &extra) != 1)
			continue;
		int online = 1;
		snprintf(path, sizeof(path), SYS_CPU "/cpu%d/online", cpu);
		file_int(path, &online);	/* absent (cpu0): always online */
		if (!online)
			continue;
		struct host_cpu hc = { .cpu = cpu };
		snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/core_id", cpu);
		int ok = file_int(path, &hc.core);
		snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/physical_package_id", cpu);
		ok |= file_int(path, &hc.package);
		if (ok < 0)
			continue;
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		v[(*n)++] = hc;
	}
	closedir(d);
	if (*n == 0) {
		free(v);
		return err_set(err, EXIT_FAILURE_RUN,
			       "no CPU topology in %s/cpu*/topology (is sysfs mounted?)", SYS_CPU);
	}
	qsort(v, *n, sizeof(*v), cmp_host_cpu_num);
	*cpus = v;
	return 0;
}

/* Sockets, cores per socket and threads per core of the online CPUs. */
static void shape_count(const struct host_cpu *c, size_t n, struct hostprobe *p)
{
	int npkg = 0, ncore = 0;
	for (size_t i = 0; i < n; i++) {
		bool new_pkg = true, new_core = true;
		for (size_t j = 0; j < i; j++) {
			if (c[j].package == c[i].package) {
				new_pkg = false;
				if (c[j].core == c[i].core)
					new_core = false;
			}
		}
		npkg += new_pkg;
		ncore += new_core;
	}
	p->sockets = npkg;
	p->cores_per_socket = npkg ? ncore / npkg : 0;
	p->threads_per_core = ncore ? (int)n / ncore : 0;
}

static char *cpu_model_read(void)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, "/proc/cpuinfo") < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	char *model = NULL;
	for (char *line = sb.buf; line && *line && !model;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		/* x86: "model name"; POWER: "cpu" (e.g. "POWER8E (raw), altivec ..."). */
		if (!strncmp(line, "model name", 10) || !strncmp(line, "cpu\t", 4)) {
			char *colon = strchr(line, ':');
			if (colon)
				model = xstrdup(colon + 1 + (colon[1] == ' '));
		}
		line = nl ? nl + 1 : NULL;
	}
	strbuf_release(&sb);
	return model;
}

/* The first line of a knob's file on this host (the table names it), or NULL. */
static char *knob_file_line(const struct knob *k)
{
	struct strbuf path = STRBUF_INIT;
	strbuf_addf(&path, "/%s", k->rel_path);
	char *v = file_line(strbuf_str(&path));
	strbuf_release(&path);
	return v;
}

static void kvm_hv_params_read(struct hostprobe *p)
{
	const char *dir = "/sys/module/kvm_hv/parameters";
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char *v = file_line(path);
		if (!v)
			continue;
		p->kvm_hv = xrealloc(p->kvm_hv, (p->nkvm_hv + 1) * sizeof(*p->kvm_hv));
		p->kvm_hv[p->nkvm_hv].name = xstrdup(e->d_name);
		p->kvm_hv[p->nkvm_hv].value = v;
		p->nkvm_hv++;
	}
	closedir(d);
	/* Sorted, so the output is stable. */
	for (size_t i = 1; i < p->nkvm_hv; i++)
		for (size_t j = i; j > 0 && strcmp(p->kvm_hv[j - 1].name, p->kvm_hv[j].name) > 0; j--) {
			struct hostprobe_param t = p->kvm_hv[j];
			p->kvm_hv[j] = p->kvm_hv[j - 1];
			p->kvm_hv[j - 1] = t;
		}
}

/* Whether tracefs is mounted on dir, by /proc/mounts (readable by anyone). */
static bool tracefs_mounted_on(const char *dir)
{
	FILE *f = fopen("/proc/mounts", "re");
	if (!f)
		return false;
	char line[1024];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char mnt[512], type[64];
		if (sscanf(line, "%*s %511s %63s", mnt, type) == 2 && !strcmp(type, "tracefs") &&
		    !strcmp(mnt, dir))
			found = true;
	}
	fclose(f);
	return found;
}

static void tracefs_find(struct hostprobe *p)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing",
					    NULL };
	for (int i = 0; dirs[i]; i++) {
		char path[256];
		struct stat st;
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (stat(path, &st) < 0) {
			/* Mounted, but mode 0700: only root may look (not "not mounted"). */
			if ((errno == EACCES || errno == EPERM) && tracefs_mounted_on(dirs[i])) {
				p->tracefs = xstrdup(dirs[i]);
				p->tracefs_denied = true;
				return;
			}
			continue;
		}
		p->tracefs = xstrdup(dirs[i]);
		snprintf(path, sizeof(path), "%s/events/kvm", dirs[i]);
		p->events_kvm = path_exists(path);
		snprintf(path, sizeof(path), "%s/events/kvm_hv", dirs[i]);
		p->events_kvm_hv = path_exists(path);
		return;
	}
}

static enum guest_arch host_arch(void)
{
	struct utsname u;
	if (uname(&u) == 0 && !strncmp(u.machine, "ppc64", 5))
		return ARCH_PPC64;
	return ARCH_X86_64;
}

/*
 * The smallest proof that this /dev/kvm executes guest code: a scratch VM
 * runs a few real-mode instructions and must come back with the exits
 * they make.
 *   x86:   "mov $0x42,%al; mov $0x3f8,%dx; out %al,(%dx); hlt": an OUT of
 *          0x42 to port 0x3f8, then HLT.
 *   POWER: "li r3,H_GET_TERM_CHAR; sc 1" under KVM_CAP_PPC_PAPR (KVM_RUN
 *          fails with EINVAL without it): a hypercall kvm_hv leaves to
 *          user space (KVM_EXIT_PAPR_HCALL).
 * Elsewhere there is no test guest, and KVM is not called usable.
 */
#if defined(__x86_64__)
#define SMOKE_MEM 0x1000UL
#define SMOKE_ADDR 0x1000UL
static const uint8_t smoke_code[] = { 0xb0, 0x42, 0xba, 0xf8, 0x03, 0xee, 0xf4 };
#elif defined(__powerpc64__)
/* Real mode on HV KVM goes through the VRMA, which needs guest address 0
 * in the slot; 64 KiB pages on Debian's kernels. */
#define SMOKE_MEM 0x10000UL
#define SMOKE_ADDR 0UL
#define SMOKE_CODE_OFF 0x100
#define SMOKE_HCALL 0x54	/* H_GET_TERM_CHAR: not handled inside kvm_hv */
static const uint32_t smoke_code[] = {
	0x38600000 | SMOKE_HCALL,	/* li r3, SMOKE_HCALL */
	0x44000022,			/* sc 1 */
	0x4bfffff8,			/* b .-8 */
};
#endif

#ifdef SMOKE_MEM
/* Registers for the first instruction; 0 or -1 (errno set). */
static int smoke_regs(int vcpu)
{
#if defined(__x86_64__)
	struct kvm_sregs sregs;
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return -1;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		return -1;
	struct kvm_regs regs = { .rip = 0x1000, .rflags = 0x2 };
	return ioctl(vcpu, KVM_SET_REGS, &regs) < 0 ? -1 : 0;
#else
	struct kvm_enable_cap cap = { .cap = KVM_CAP_PPC_PAPR };
	if (ioctl(vcpu, KVM_ENABLE_CAP, &cap) < 0)
		return -1;
	struct kvm_regs regs;
	if (ioctl(vcpu, KVM_GET_REGS, &regs) < 0)
		return -1;
	regs.pc = SMOKE_CODE_OFF;
	regs.msr = 1UL << 63 | 1UL << 12 | 1UL;	/* SF | ME | LE, real mode */
	return ioctl(vcpu, KVM_SET_REGS, &regs) < 0 ? -1 : 0;
#endif
}

/* One exit judged: 1 = the guest did all it should, 0 = run on, -1 = wrong. */
static int smoke_exit(const struct kvm_run *run, bool *progress)
{
#if defined(__x86_64__)
	if (run->exit_reason == KVM_EXIT_IO && run->io.direction == KVM_EXIT_IO_OUT &&
	    run->io.port == 0x3f8 && *((const uint8_t *)run + run->io.data_offset) == 0x42) {
		*progress = true;
		return 0;
	}
	return run->exit_reason == KVM_EXIT_HLT && *progress ? 1 : -1;
#else
	(void)progress;
	return run->exit_reason == KVM_EXIT_PAPR_HCALL && run->papr_hcall.nr == SMOKE_HCALL ? 1 : -1;
#endif
}
#endif

static int kvm_smoke(int kvm, char *why, size_t n)
{
#ifndef SMOKE_MEM
	(void)kvm;
	snprintf(why, n, "no KVM test guest for this architecture");
	return 0;
#else
	int rc = 0, vm = -1, vcpu = -1;
	void *mem = MAP_FAILED, *run_map = MAP_FAILED;
	long map_size = 0;

	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		snprintf(why, n, "KVM_CREATE_VM failed: %s", strerror(errno));
		goto out;
	}
	mem = mmap(NULL, SMOKE_MEM, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		goto sys_fail;
#ifdef SMOKE_CODE_OFF
	memcpy((char *)mem + SMOKE_CODE_OFF, smoke_code, sizeof(smoke_code));
#else
	memcpy(mem, smoke_code, sizeof(smoke_code));
#endif
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = SMOKE_ADDR, .memory_size = SMOKE_MEM,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		goto sys_fail;
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	map_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vcpu < 0 || map_size <= 0)
		goto sys_fail;
	run_map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run_map == MAP_FAILED)
		goto sys_fail;
	if (smoke_regs(vcpu) < 0)
		goto sys_fail;
	const struct kvm_run *run = run_map;
	bool progress = false;
	for (int i = 0; i < 8; i++) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			snprintf(why, n, "KVM_RUN failed: %s", strerror(errno));
			goto out;
		}
		int v = smoke_exit(run, &progress);
		if (v > 0) {
			rc = 1;
			snprintf(why, n, "KVM ran a test guest (/dev/kvm works)");
			goto out;
		}
		if (v < 0) {
			snprintf(why, n, "KVM test guest exited with reason %u instead of running",
				 run->exit_reason);
			goto out;
		}
	}
	snprintf(why, n, "KVM test guest never finished");
	goto out;
sys_fail:
	snprintf(why, n, "setting up a KVM test guest failed: %s", strerror(errno));
out:
	if (run_map != MAP_FAILED)
		munmap(run_map, map_size);
	if (vcpu >= 0)
		close(vcpu);
	if (mem != MAP_FAILED)
		munmap(mem, SMOKE_MEM);
	if (vm >= 0)
		close(vm);
	return rc;
#endif
}

int hostprobe_kvm_usable(enum guest_arch arch, char *why, size_t n)
{
	enum guest_arch host = host_arch();
	if (arch == ARCH_HOST)
		arch = host;
	if (arch != host) {
		snprintf(why, n, "KVM cannot run a %s guest on a %s host; using TCG",
			 arch == ARCH_PPC64 ? "ppc64" : "x86_64",
			 host == ARCH_PPC64 ? "ppc64" : "x86_64");
		return 0;
	}
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		snprintf(why, n, "/dev/kvm: %s; using TCG", strerror(errno));
		return 0;
	}
	int rc = 0;
	int api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (api != KVM_API_VERSION) {
		snprintf(why, n, "/dev/kvm API version %d, not %d; using TCG", api, KVM_API_VERSION);
	} else if (arch == ARCH_X86_64) {
		bool vmx = path_exists("/sys/module/kvm_intel") || path_exists("/sys/module/kvm_amd");
		if (!vmx && path_exists("/sys/module/kvm_pvm")) {
			snprintf(why, n, "/dev/kvm is PVM (kvm_pvm), which cannot boot stock guest "
				 "kernels; using TCG");
		} else {
			rc = kvm_smoke(kvm, why, n);
			if (!rc)
				strncat(why, "; using TCG", n - strlen(why) - 1);
		}
	} else {
		bool hv = path_exists("/sys/module/kvm_hv");
		if (!hv && !path_exists("/sys/module/kvm_pr")) {
			snprintf(why, n, "neither kvm_hv nor kvm_pr is loaded; using TCG");
		} else {
			rc = kvm_smoke(kvm, why, n);
			size_t l = strlen(why);
			snprintf(why + l, n - l, rc ? " (%s)" : " (%s); using TCG",
				 hv ? "kvm_hv" : "kvm_pr");
		}
	}
	close(kvm);
	return rc;
}

void hostprobe_read(struct hostprobe *p)
{
	memset(p, 0, sizeof(*p));
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(p->arch, sizeof(p->arch), "%s", u.machine);
	p->cpu_model = cpu_model_read();
	p->online = file_line(SYS_CPU "/online");
	struct host_cpu *cpus;
	size_t n;
	struct ta_err err = { 0 };
	if (hostprobe_cpus_read(&cpus, &n, &err) == 0) {
		p->online_cpus = (int)n;
		shape_count(cpus, n, p);
		free(cpus);
	}
	p->smt_control = knob_file_line(knob_of_kind(KNOB_SMT));
	p->subcores_per_core = knob_file_line(knob_of_kind(KNOB_SUBCORES));
	kvm_hv_params_read(p);
	p->kvm_dev = path_exists("/dev/kvm");
	p->kvm_usable = hostprobe_kvm_usable(ARCH_HOST, p->kvm_why, sizeof(p->kvm_why));
	tracefs_find(p);
}

void hostprobe_release(struct hostprobe *p)
{
	free(p->cpu_model);
	free(p->online);
	free(p->smt_control);
	free(p->subcores_per_core);
	for (size_t i = 0; i < p->nkvm_hv; i++) {
		free(p->kvm_hv[i].name);
		free(p->kvm_hv[i].value);
	}
	free(p->kvm_hv);
	free(p->tracefs);
	memset(p, 0, sizeof(*p));
}

/* ---- host knobs and where they exist ------------------------------------ */

/* The text of root/rel, or NULL when it cannot be read. */
static char *root_file(const char *root, const char *rel)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	strbuf_addf(&path, "%s%s%s", root, root[0] && root[strlen(root) - 1] == '/' ? "" : "/",
		    rel);
	int rc = strbuf_read_file(&text, strbuf_str(&path));
	strbuf_release(&path);
	if (rc < 0) {
		strbuf_release(&text);
		return NULL;
	}
	return strbuf_detach(&text);
}

void hostprobe_knob_host(const char *root, struct knob_host *h)
{
	char *cpuinfo = root_file(root, "proc/cpuinfo");
	char *osrelease = root_file(root, "proc/sys/kernel/osrelease");
	/* uname names this machine, not a fake root's. */
	struct utsname u;
	bool here = !strcmp(root, "/") && uname(&u) == 0;
	knob_host_parse(h, cpuinfo, osrelease, here ? u.machine : NULL);
	free(cpuinfo);
	free(osrelease);
}

int hostprobe_knob(const char *root, const struct knob *k, struct strbuf *value,
		   struct strbuf *why)
{
	struct knob_host h;
	hostprobe_knob_host(root, &h);
	struct strbuf reason = STRBUF_INIT;
	int ok = 1;
	struct ta_err err = { 0 };
	if (!knob_available(k, &h, &reason)) {
		strbuf_addstr(why, strbuf_str(&reason));
		ok = 0;
	} else if (knob_read(k, root, value, &err) < 0) {
		strbuf_addstr(why, k->why_missing);
		ok = 0;
	} else if (k->kind == KNOB_SMT && !knob_canonical(k, strbuf_str(value))) {
		/* smt/control says "notsupported", "forceoff", ... */
		strbuf_addf(why, "SMT control says '%s'", strbuf_str(value));
		strbuf_reset(value);
		ok = 0;
	}
	strbuf_release(&reason);
	return ok;
}
