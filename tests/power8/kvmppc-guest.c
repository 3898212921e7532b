/*
 * kvmppc-guest: the smallest KVM-HV guest there is, for the emulated POWER8
 * host test (tests/integration/power8-host.sh).  Built static for ppc64le
 * (`make cross-ppc64el`), it runs inside that host.
 *
 * It talks to /dev/kvm directly: KVM_CREATE_VM (KVM_VM_PPC_HV), one memory
 * slot at guest address 0 holding three real-mode instructions
 *
 *     li r3, H_GET_TERM_CHAR ; sc 1 ; b .-8
 *
 * then KVM_CREATE_VCPU, KVM_ENABLE_CAP(KVM_CAP_PPC_PAPR) (without it KVM_RUN
 * fails with EINVAL) and the registers (pc, MSR_SF|MSR_ME|MSR_LE, real mode).
 * kvm_hv handles no H_GET_TERM_CHAR itself, so every `sc 1` is one guest exit
 * with trap 0xc00 (SYSCALL) that comes back to user space as
 * KVM_EXIT_PAPR_HCALL: COUNT hypercalls are exactly COUNT KVM_RUN returns
 * and COUNT SYSCALL exits in the kvm_hv tracepoints.  Other exits (the
 * hypervisor decrementer) are handled in the kernel and never reach here.
 *
 * usage: kvmppc-guest [COUNT]   (default 200)
 * Prints one JSON line {"hcalls": N, "pid": P, "seconds": S}; exit 0 when
 * exactly COUNT hypercalls arrived, 1 on any error (with its reason).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KVM_VM_PPC_HV 1
#define H_GET_TERM_CHAR 0x54
#define GUEST_MEM (2UL << 20)
#define CODE_ADDR 0x1000
#define MSR_SF (1UL << 63)
#define MSR_ME (1UL << 12)
#define MSR_LE 1UL

static int die(const char *what)
{
	fprintf(stderr, "kvmppc-guest: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
	if (count < 1 || count > 100000000) {
		fprintf(stderr, "usage: kvmppc-guest [COUNT 1..100000000]\n");
		return 2;
	}
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return die("/dev/kvm");
	int vm = ioctl(kvm, KVM_CREATE_VM, KVM_VM_PPC_HV);
	if (vm < 0)
		return die("KVM_CREATE_VM (HV)");

	uint32_t *mem = mmap(NULL, GUEST_MEM, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		return die("mmap");
	const uint32_t code[] = {
		0x38600000 | H_GET_TERM_CHAR,	/* li r3, H_GET_TERM_CHAR */
		0x44000022,			/* sc 1 */
		0x4bfffff8,			/* b .-8 */
	};
	memcpy((char *)mem + CODE_ADDR, code, sizeof(code));
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = GUEST_MEM,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return die("KVM_SET_USER_MEMORY_REGION");

	int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return die("KVM_CREATE_VCPU");
	struct kvm_enable_cap cap = { .cap = KVM_CAP_PPC_PAPR };
	if (ioctl(vcpu, KVM_ENABLE_CAP, &cap) < 0)
		return die("KVM_ENABLE_CAP(KVM_CAP_PPC_PAPR)");
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < 0)
		return die("KVM_GET_VCPU_MMAP_SIZE");
	struct kvm_run *run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		return die("mmap kvm_run");

	struct kvm_regs regs;
	if (ioctl(vcpu, KVM_GET_REGS, &regs) < 0)
		return die("KVM_GET_REGS");
	regs.pc = CODE_ADDR;
	regs.msr = MSR_SF | MSR_ME | MSR_LE;
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return die("KVM_SET_REGS");

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long hcalls = 0;
	while (hcalls < count) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			return die("KVM_RUN");
		}
		if (run->exit_reason != KVM_EXIT_PAPR_HCALL) {
			fprintf(stderr, "kvmppc-guest: exit reason %u after %ld hypercalls, wanted %d\n",
				run->exit_reason, hcalls, KVM_EXIT_PAPR_HCALL);
			return 1;
		}
		if (run->papr_hcall.nr != H_GET_TERM_CHAR) {
			fprintf(stderr, "kvmppc-guest: hypercall 0x%llx, wanted 0x%x\n",
				(unsigned long long)run->papr_hcall.nr, H_GET_TERM_CHAR);
			return 1;
		}
		run->papr_hcall.ret = 0;	/* H_SUCCESS */
		hcalls++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("{\"hcalls\": %ld, \"pid\": %ld, \"seconds\": %.3f}\n", hcalls, (long)getpid(),
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
