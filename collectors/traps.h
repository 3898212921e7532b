/*
 * traps: names of exit reasons, so reports say "HV_DECREMENTER" and not
 * "0x980".
 *
 * Sources: POWER trap codes as recorded in kvm_hv:kvm_guest_exit's `trap`
 * (DESIGN §4.2), x86 VMX basic exit reasons and SVM exit codes as recorded
 * in kvm:kvm_exit's `exit_reason` (with `isa` 1 = VMX, 2 = SVM), and the
 * KVM_EXIT_* codes of kvm:kvm_userspace_exit (negative: the errno of a
 * failed KVM_RUN, -EINTR named RESTART).  Unknown codes have no name:
 * callers print them as hex (traps_format does).
 */
#ifndef TA_TRAPS_H
#define TA_TRAPS_H

#include <stddef.h>
#include <stdint.h>

enum exit_source {
	EXIT_SRC_POWER,		/* kvm_hv:kvm_guest_exit trap */
	EXIT_SRC_VMX,		/* kvm:kvm_exit, isa 1 */
	EXIT_SRC_SVM,		/* kvm:kvm_exit, isa 2 */
	EXIT_SRC_USERSPACE,	/* kvm:kvm_userspace_exit reason */
};

/* "powerpc", "vmx", "svm" or "userspace". */
const char *traps_source_name(enum exit_source src);

/* The symbolic name of code, or NULL when the code is not known. */
const char *traps_name(enum exit_source src, int64_t code);

/*
 * Writes the name, or the code in hex ("0x1234", "-0x1") when unknown, into
 * buf and returns buf.
 */
const char *traps_format(enum exit_source src, int64_t code, char *buf, size_t len);

#endif
