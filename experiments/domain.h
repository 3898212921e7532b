/*
 * domain: the libvirt domain XML for one configuration.
 *
 * domain_xml_build() takes a plain request (shape, pinning, arch, domain type,
 * template, ids) and produces the XML to hand to virDomainCreateXML.  The
 * template is either built in (direct kernel boot of the test guest image:
 * x86_64 "pc" or ppc64 "pseries") or the user's own domain XML; either way
 * the XML is edited with libxml2, never pasted together from strings.  What
 * the builder sets, replacing whatever the template had:
 *
 *   - domain type (kvm|qemu), <name>, no <uuid> (libvirt makes one);
 *   - <metadata><ta:run experiment=".." run=".." pid=".." pid-start=".."/> in
 *     DOMAIN_XMLNS: how leftovers of a crashed run are recognised, and (pid
 *     and its start time) how a live run's guests are told from them (see
 *     guest.h);
 *   - <memory> (when memory_mib > 0), <vcpu>N</vcpu>;
 *   - <cpu>: under TCG (qemu) an Intel model (Westmere) on x86_64, because
 *     QEMU's default CPU model hides SMT threads from the guest; under KVM
 *     host-passthrough; on ppc64 no model (pseries takes the host's or
 *     QEMU's default); always <topology sockets dies cores threads/>;
 *   - <cputune> vcpupin/emulatorpin from the pinning policy (below);
 *   - on_poweroff/on_reboot/on_crash = destroy, so a dying guest leaves
 *     nothing behind;
 *   - a virtio guest agent channel (org.qemu.guest_agent.0) if absent.
 *
 * Pinning policies, over the host CPUs given in host_cpus (online CPUs with
 * their package and core ids).  A host core is one (package, core) pair;
 * cores are ordered by (package, core), a core's threads by CPU number.
 *   - none:    no <cputune> pins; the host scheduler places vCPUs.
 *   - compact: vCPU i goes to the i-th CPU in the order "all threads of the
 *              first core, then all threads of the next core, ...": sibling
 *              threads of a host core are filled first.
 *   - spread:  vCPU i goes to the i-th CPU in the order "thread 0 of every
 *              core, then thread 1 of every core, ...": one vCPU per host
 *              core first, siblings only when every core has one.
 *   - explicit: the caller's cpuset per vCPU (and optionally the emulator).
 * compact and spread pin each vCPU to exactly one host CPU and need at least
 * as many host CPUs as vCPUs.  Their emulator threads go to the host CPUs no
 * vCPU uses, or, when every CPU is taken, to the union of the vCPUs' CPUs.
 */
#ifndef TA_DOMAIN_H
#define TA_DOMAIN_H

#include <stddef.h>

#include "../util/err.h"
#include "../util/strbuf.h"
#include "config.h"

#define DOMAIN_XMLNS "https://topoadvisor.invalid/xmlns/1"
#define DOMAIN_XMLNS_PREFIX "ta"
#define DOMAIN_NAME_PREFIX "topoadvisor-"
/* The CPU model that makes TCG show SMT threads to an x86 guest. */
#define DOMAIN_TCG_X86_MODEL "Westmere"
#define DOMAIN_AGENT_CHANNEL "org.qemu.guest_agent.0"

/* One online host CPU. */
struct host_cpu {
	int cpu;	/* logical CPU number */
	int package;	/* physical_package_id */
	int core;	/* core_id (unique within the package) */
};

struct domain_request {
	const char *name;		/* the whole domain name ([A-Za-z0-9_.-]) */
	enum guest_arch arch;		/* ARCH_X86_64 or ARCH_PPC64 */
	enum domain_type type;		/* DOMAIN_KVM or DOMAIN_QEMU (resolve auto first) */
	const char *template_path;	/* NULL: the built-in template */
	int memory_mib;			/* 0: keep the template's (built-in: 512) */
	int vcpus;
	int sockets, dies, cores, threads;	/* dies: 0 or 1 means one die */
	enum pin_policy pin;
	const struct host_cpu *host_cpus;	/* compact/spread */
	size_t nhost_cpus;
	const char *const *vcpu_cpus;	/* explicit: one cpuset per vCPU */
	size_t nvcpu_cpus;
	const char *emulator_cpus;	/* explicit: optional */
	const char *kernel, *initrd;	/* built-in template: absolute paths */
	const char *cmdline;		/* NULL: the built-in default */
	const char *console_log;	/* NULL: serial on a pty; else a file */
	long long experiment_id, run_id;
	/* The process that owns the guest: 0 means this one (its pid and start
	 * time are read from /proc/self/stat); tests pass fixed values. */
	long owner_pid;
	unsigned long long owner_start;	/* /proc/PID/stat field 22 */
};

/* Process pid's start time in clock ticks since boot (0 if unknown). */
unsigned long long domain_proc_start(long pid);

/* The cpusets a pinning policy gives (see above). */
struct domain_pins {
	char **vcpu;		/* nvcpu entries, NULL for policy none */
	size_t nvcpu;
	char *emulator;		/* NULL: not pinned */
};

/*
 * Checks req and writes the domain XML to out.  Bad requests (shape product,
 * ppc64 threads not a power of two, too few host CPUs, bad cpusets, a
 * template that is not a <domain>) fail with EXIT_BAD_INPUT.
 */
int domain_xml_build(const struct domain_request *req, struct strbuf *out,
		     struct ta_err *err);

/* Computes the cpusets of req's pinning policy; release them with domain_pins_release. */
int domain_pins_compute(const struct domain_request *req, struct domain_pins *pins,
			struct ta_err *err);
void domain_pins_release(struct domain_pins *pins);

/*
 * The guest <cpu> rule (the one place it is decided): under KVM
 * host-passthrough; under TCG on x86_64 mode custom with model
 * DOMAIN_TCG_X86_MODEL (QEMU's default model hides SMT threads); on ppc64
 * under TCG neither (pseries takes QEMU's default).  The builder applies
 * it, the plan store records it, `recommend` prints what was recorded.
 */
struct domain_cpu {
	const char *mode;	/* NULL: no mode */
	const char *model;	/* NULL: no model */
};
void domain_cpu_choose(enum domain_type type, enum guest_arch arch, struct domain_cpu *out);

#endif
