/*
 * vcpustats: per-vCPU run and wait time of a domain over a window.
 *
 * libvirt's domain stats give, per vCPU, "vcpu.N.time" (ns the vCPU thread
 * ran on a host CPU) and "vcpu.N.delay" (ns it was runnable but waited for
 * a host CPU: steal, as the guest would call it).  Both work under TCG too.
 * Read once before and once after a benchmark window; the difference is
 * what the window cost.  delay needs schedstats in the host kernel; when
 * absent, has_delay is false and delays are 0.
 */
#ifndef TA_VCPUSTATS_H
#define TA_VCPUSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "../util/err.h"
#include "../util/strbuf.h"

struct vcpustats {
	size_t n;		/* vCPUs */
	uint64_t *time_ns;
	uint64_t *delay_ns;
	bool has_delay;
};

int vcpustats_read(virDomainPtr dom, struct vcpustats *s, struct ta_err *err);
/* after - before, per vCPU (a counter that went backwards gives 0). */
int vcpustats_diff(const struct vcpustats *before, const struct vcpustats *after,
		   struct vcpustats *d, struct ta_err *err);
void vcpustats_release(struct vcpustats *s);
/* {"vcpus":[{"time_ns":..,"delay_ns":..},..],"has_delay":true} */
void vcpustats_json(const struct vcpustats *s, struct strbuf *out);

#endif
