/*
 * guest: the libvirt lifecycle of one experiment guest.
 *
 * Guests are transient (virDomainCreateXML): nothing is defined on the host,
 * so a crash of ours leaves at most a running domain, never a definition.
 * Such leftovers are found by name prefix AND our <metadata> element (see
 * domain.h) and destroyed by guest_leftovers_destroy(); a domain missing
 * either mark is never touched, nor one whose owner process (pid and start
 * time in the metadata) is still alive: that is a concurrent run's guest,
 * not a leftover.  (The pid check assumes libvirt runs on this host.)
 *
 * guest_boot() creates the domain and waits for its guest agent, polling
 * every GUEST_POLL_MS; a guest that stops or never answers within the
 * timeout is destroyed before the error returns, so a failed boot leaves no
 * domain behind.
 */
#ifndef TA_GUEST_H
#define TA_GUEST_H

#include <stddef.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "../util/err.h"
#include "../util/strbuf.h"
#include "config.h"

#define GUEST_POLL_MS 100

struct guest {
	virConnectPtr conn;	/* not owned */
	virDomainPtr dom;
	char *name;
	double boot_seconds;	/* create -> agent answered */
	double started;		/* when it was created (mono_now_s) */
};

/*
 * Opens uri (NULL: qemu:///system).  Also routes libvirt's errors into our
 * messages instead of its default printing to stderr.
 */
virConnectPtr guest_connect(const char *uri, struct ta_err *err);

/* A fresh domain name: prefix + pid + a per-process counter + time. */
char *guest_name_new(const char *prefix);

/*
 * Destroys running domains whose name starts with prefix, that carry our
 * metadata element and whose owner process is gone; *n (if not NULL) gets
 * how many, and names (if not NULL) their names, comma-separated.  Others
 * stay untouched.
 */
int guest_leftovers_destroy(virConnectPtr conn, const char *prefix, int *n,
			    struct strbuf *names, struct ta_err *err);

/*
 * Creates a transient domain from xml and waits up to timeout_ms for its
 * guest agent (0: do not wait).  On failure nothing is left running.
 * console_log (may be NULL) is named in the timeout message.
 */
struct guest *guest_boot(virConnectPtr conn, const char *xml, int timeout_ms,
			 const char *console_log, struct ta_err *err);

/*
 * guest_boot in two halves, so that several guests boot at once: start
 * creates the domain and returns at once; wait_agent waits until
 * timeout_ms after the start for its agent (0: not at all) and sets
 * boot_seconds, or destroys the domain, frees g and fails.
 */
struct guest *guest_start(virConnectPtr conn, const char *xml, struct ta_err *err);
int guest_wait_agent(struct guest *g, int timeout_ms, const char *console_log,
		     struct ta_err *err);

/* Destroys the domain (if still running) and frees g.  NULL is fine. */
int guest_destroy(struct guest *g, struct ta_err *err);

/* The QEMU process running the guest (for tracing its exits), 0 if unknown. */
int guest_qemu_pid(const struct guest *g);

/*
 * The pinning libvirt reports for the running domain, as cpusets
 * ("0-1,3"): one per vCPU, and the emulator's.  Free with guest_pins_free.
 */
int guest_pins_read(const struct guest *g, char ***vcpu, size_t *nvcpu, char **emulator,
		    struct ta_err *err);
void guest_pins_free(char **vcpu, size_t nvcpu, char *emulator);

/*
 * Resolves DOMAIN_AUTO: kvm when this host can really run a KVM guest of
 * arch (hostprobe_kvm_usable), else qemu (TCG).  The probe runs once per
 * process.  *why gets a sentence for the user (static storage).
 */
enum domain_type guest_type_resolve(enum domain_type want, enum guest_arch arch,
				    const char **why);

#endif
