/*
 * hostprobe: what this host offers for experiments, read from sysfs,
 * /proc, tracefs and /dev/kvm.  Read-only: probing never changes a setting
 * (tracefs is reported, not mounted).  Used by `topoadvisor probe`, by the
 * pinning policies (the online CPUs with their cores) and by domain type
 * "auto" (whether KVM can really run a guest).
 */
#ifndef TA_HOSTPROBE_H
#define TA_HOSTPROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "../model/knob-table.h"
#include "../util/err.h"
#include "../util/strbuf.h"
#include "config.h"
#include "domain.h"

struct hostprobe_param {
	char *name, *value;
};

struct hostprobe {
	char arch[65];			/* uname -m (utsname field size) */
	char *cpu_model;		/* /proc/cpuinfo "model name" or "cpu" (POWER) */
	char *online;			/* /sys/devices/system/cpu/online, e.g. "0-7" */
	int online_cpus;
	int sockets, cores_per_socket, threads_per_core;	/* of the online CPUs */
	char *smt_control;		/* smt/control, NULL when absent */
	char *subcores_per_core;	/* POWER8 bare metal only, else NULL */
	struct hostprobe_param *kvm_hv;	/* /sys/module/kvm_hv/parameters/ */
	size_t nkvm_hv;
	bool kvm_dev;			/* /dev/kvm exists */
	bool kvm_usable;		/* a KVM guest really runs here */
	char kvm_why[256];		/* one sentence either way */
	char *tracefs;			/* mount point with events/, NULL if none */
	bool tracefs_denied;		/* mounted, but not readable by us (not root) */
	bool events_kvm, events_kvm_hv;	/* tracepoint systems present */
};

/* Fills p; never fails (unknowns stay 0/NULL).  Release with hostprobe_release. */
void hostprobe_read(struct hostprobe *p);
void hostprobe_release(struct hostprobe *p);

/*
 * The facts that decide where a host knob exists (model/knob-table.h),
 * read from root's own proc/cpuinfo and proc/sys/kernel/osrelease (root "/"
 * is this host).  A file root lacks leaves its fact unknown, and an unknown
 * fact never refuses a knob: a fake root without them is judged by its knob
 * files alone.
 */
void hostprobe_knob_host(const char *root, struct knob_host *h);

/*
 * Whether knob k exists on the host root names: 1 with value set to its
 * current value, or 0 with why set to the reason ("removed in Linux 5.14
 * (this kernel is 6.1)", or the capability its missing file needs).
 */
int hostprobe_knob(const char *root, const struct knob *k, struct strbuf *value,
		   struct strbuf *why);

/*
 * The online host CPUs with package and core ids, sorted by CPU number.
 * Fails when sysfs has no topology for them.
 */
int hostprobe_cpus_read(struct host_cpu **cpus, size_t *n, struct ta_err *err);

/*
 * 1 when KVM can really run a guest of arch here, else 0; why gets the
 * reason.  It runs a few real-mode instructions in a scratch VM and checks
 * the exits they make: on x86 an OUT and a HLT (and it refuses PVM's
 * /dev/kvm, which cannot boot stock guest kernels); on POWER (kvm_hv or
 * kvm_pr loaded) a PAPR hypercall, which is what a pseries guest needs.  A
 * /dev/kvm that only creates VMs is not usable.
 */
int hostprobe_kvm_usable(enum guest_arch arch, char *why, size_t n);

#endif
