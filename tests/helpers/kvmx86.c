/*
 * kvmx86: a minimal x86 KVM guest making a known number of exits of each
 * kind, for tests/integration/svm-exits.sh (it runs inside an x86 TCG guest
 * with nested SVM, where the kvm:kvm_exit events are real).
 *
 * The KVM ioctls directly, one vCPU in real mode running
 *
 *	mov si, CPUIDS ; 1: xor eax, eax ; cpuid ; dec si ; jnz 1b
 *	mov si, OUTS ; mov dx, PORT ; 2: out dx, al ; dec si ; jnz 2b
 *	hlt
 *
 * so the host sees CPUIDS CPUID exits (handled in the kernel), OUTS IOIO
 * exits, each also a KVM_EXIT_IO to us, and one HLT exit, a KVM_EXIT_HLT
 * (there is no in-kernel irqchip).  Other exits (interrupts, shadow page
 * faults) come as the host pleases and are not counted here.
 *
 * After the first KVM_EXIT_IO one KVM_RUN is made with immediate_exit set,
 * as QEMU does to kick a vCPU: it fails with EINTR without entering the
 * guest, and kvm:kvm_userspace_exit records it with errno -4 next to the
 * stale exit_reason of the run before (KVM_EXIT_IO): a reader that ignores
 * errno counts one IO exit too many.
 *
 * usage: kvmx86 OUTS CPUIDS   (each 1..65535)
 * Prints "kvmx86: pid=P outs=N hlt=1 cpuids=M restarts=1" and exits 0 when
 * the guest did exactly that; exit 1 on any unexpected exit or ioctl
 * failure.
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
#include <unistd.h>

#define GUEST_MEM (64 * 1024)
#define CODE_AT 0x1000
#define PORT 0x10

static int die(const char *what)
{
	fprintf(stderr, "kvmx86: %s: %s\n", what, strerror(errno));
	return 1;
}

static long count_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return *s && !*end && v >= 1 && v <= 65535 ? v : -1;
}

/* The guest code above, with its two counts, at code; returns its length. */
static size_t code_emit(unsigned char *code, uint16_t outs, uint16_t cpuids)
{
	const unsigned char prog[] = {
		0xbe, cpuids & 0xff, cpuids >> 8,	/* mov si, cpuids */
		0x66, 0x31, 0xc0,			/* 1: xor eax, eax */
		0x0f, 0xa2,				/* cpuid */
		0x4e,					/* dec si */
		0x75, 0xf8,				/* jnz 1b */
		0xbe, outs & 0xff, outs >> 8,		/* mov si, outs */
		0xba, PORT, 0x00,			/* mov dx, PORT */
		0xee,					/* 2: out dx, al */
		0x4e,					/* dec si */
		0x75, 0xfc,				/* jnz 2b */
		0xf4,					/* hlt */
	};
	memcpy(code, prog, sizeof(prog));
	return sizeof(prog);
}

int main(int argc, char **argv)
{
	long outs = argc == 3 ? count_arg(argv[1]) : -1;
	long cpuids = argc == 3 ? count_arg(argv[2]) : -1;
	if (outs < 0 || cpuids < 0) {
		fprintf(stderr, "usage: kvmx86 OUTS CPUIDS (each 1..65535)\n");
		return 2;
	}

	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return die("open /dev/kvm");
	if (ioctl(kvm, KVM_GET_API_VERSION, 0) != KVM_API_VERSION) {
		fprintf(stderr, "kvmx86: unexpected KVM API version\n");
		return 1;
	}
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return die("KVM_CREATE_VM");

	unsigned char *mem = mmap(NULL, GUEST_MEM, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return die("mmap guest memory");
	code_emit(mem + CODE_AT, (uint16_t)outs, (uint16_t)cpuids);
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = GUEST_MEM,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return die("KVM_SET_USER_MEMORY_REGION");

	int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return die("KVM_CREATE_VCPU");
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(struct kvm_run))
		return die("KVM_GET_VCPU_MMAP_SIZE");
	struct kvm_run *run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
				   vcpu, 0);
	if (run == MAP_FAILED)
		return die("mmap kvm_run");

	struct kvm_sregs sregs;
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		return die("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		return die("KVM_SET_SREGS");
	struct kvm_regs regs = { .rip = CODE_AT, .rflags = 0x2 };
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		return die("KVM_SET_REGS");

	long seen_outs = 0, restarts = 0;
	for (;;) {
		run->immediate_exit = seen_outs == 1 && !restarts;
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno != EINTR)
				return die("KVM_RUN");
			if (run->immediate_exit)
				restarts++;
			continue;
		}
		if (run->immediate_exit) {
			fprintf(stderr, "kvmx86: KVM_RUN with immediate_exit did not fail\n");
			return 1;
		}
		if (run->exit_reason == KVM_EXIT_HLT)
			break;
		if (run->exit_reason != KVM_EXIT_IO || run->io.direction != KVM_EXIT_IO_OUT ||
		    run->io.port != PORT || run->io.count != 1) {
			fprintf(stderr, "kvmx86: unexpected exit %u after %ld outs\n",
				run->exit_reason, seen_outs);
			return 1;
		}
		seen_outs++;
	}
	if (seen_outs != outs) {
		fprintf(stderr, "kvmx86: %ld outs, expected %ld\n", seen_outs, outs);
		return 1;
	}
	if (restarts != 1) {
		fprintf(stderr, "kvmx86: %ld immediate-exit runs, expected 1\n", restarts);
		return 1;
	}
	printf("kvmx86: pid=%d outs=%ld hlt=1 cpuids=%ld restarts=%ld\n", (int)getpid(),
	       seen_outs, cpuids, restarts);
	return 0;
}
