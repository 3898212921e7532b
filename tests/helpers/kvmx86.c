/*
 * kvmx86: a minimal x86 KVM guest making a known number of exits of each
 * kind, for tests/integration/svm-exits.sh (it runs inside an x86 TCG guest
 * with nested SVM, where the kvm:kvm_exit events are real) and
 * tests/integration/trace-kvm-host.sh (this host's own KVM).
 *
 * The KVM ioctls directly, VCPUS vCPUs (one thread each, named vcpuN) in
 * real mode, each running
 *
 *	mov si, CPUIDS ; 1: xor eax, eax ; cpuid ; dec si ; jnz 1b
 *	mov si, OUTS ; mov dx, PORT ; 2: out dx, al ; dec si ; jnz 2b
 *	hlt
 *
 * so the host sees, per vCPU, CPUIDS CPUID exits (handled in the kernel),
 * OUTS IOIO exits, each also a KVM_EXIT_IO to us, and one HLT exit, a
 * KVM_EXIT_HLT (there is no in-kernel irqchip).  Other exits (interrupts,
 * shadow page faults) come as the host pleases and are not counted here.
 *
 * After its first KVM_EXIT_IO each vCPU makes one KVM_RUN with
 * immediate_exit set, as QEMU does to kick a vCPU: it fails with EINTR
 * without entering the guest, and kvm:kvm_userspace_exit records it with
 * errno -4 next to the stale exit_reason of the run before (KVM_EXIT_IO): a
 * reader that ignores errno counts one IO exit too many.
 *
 * usage: kvmx86 OUTS CPUIDS [VCPUS]   (counts 1..65535, VCPUS 1..8, default 1)
 * Prints "kvmx86: pid=P vcpus=V outs=N hlt=1 cpuids=M restarts=1" (counts
 * per vCPU), then "kvmx86: vcpu=I tid=T" for each, and exits 0 when every
 * vCPU did exactly that; exit 1 on any unexpected exit or ioctl failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
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
#define MAX_VCPUS 8

static int die(const char *what)
{
	fprintf(stderr, "kvmx86: %s: %s\n", what, strerror(errno));
	return 1;
}

static long count_arg(const char *s, long max)
{
	char *end;
	long v = strtol(s, &end, 10);
	return *s && !*end && v >= 1 && v <= max ? v : -1;
}

struct vcpu {
	int index, fd;
	struct kvm_run *run;
	pid_t tid;
	long outs, restarts;
	char err[160];		/* empty: the vCPU did what it should */
};

/* One vCPU's thread: runs the guest to its HLT, counting its exits to us. */
static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct kvm_run *run = v->run;
	char name[16];
	snprintf(name, sizeof(name), "vcpu%d", v->index);
	pthread_setname_np(pthread_self(), name);
	v->tid = gettid();
	for (;;) {
		run->immediate_exit = v->outs == 1 && !v->restarts;
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno != EINTR) {
				snprintf(v->err, sizeof(v->err), "KVM_RUN: %s", strerror(errno));
				return NULL;
			}
			if (run->immediate_exit)
				v->restarts++;
			continue;
		}
		if (run->immediate_exit) {
			snprintf(v->err, sizeof(v->err), "KVM_RUN with immediate_exit did not fail");
			return NULL;
		}
		if (run->exit_reason == KVM_EXIT_HLT)
			return NULL;
		if (run->exit_reason != KVM_EXIT_IO || run->io.direction != KVM_EXIT_IO_OUT ||
		    run->io.port != PORT || run->io.count != 1) {
			snprintf(v->err, sizeof(v->err), "unexpected exit %u after %ld outs",
				 run->exit_reason, v->outs);
			return NULL;
		}
		v->outs++;
	}
}

/* A vCPU in real mode at CODE_AT. */
static int vcpu_create(int kvm, int vm, struct vcpu *v)
{
	v->fd = ioctl(vm, KVM_CREATE_VCPU, v->index);
	if (v->fd < 0)
		return die("KVM_CREATE_VCPU");
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(struct kvm_run))
		return die("KVM_GET_VCPU_MMAP_SIZE");
	v->run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED)
		return die("mmap kvm_run");
	struct kvm_sregs sregs;
	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return die("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0)
		return die("KVM_SET_SREGS");
	struct kvm_regs regs = { .rip = CODE_AT, .rflags = 0x2 };
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		return die("KVM_SET_REGS");
	return 0;
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
	long outs = argc == 3 || argc == 4 ? count_arg(argv[1], 65535) : -1;
	long cpuids = argc == 3 || argc == 4 ? count_arg(argv[2], 65535) : -1;
	long nvcpus = argc == 4 ? count_arg(argv[3], MAX_VCPUS) : 1;
	if (outs < 0 || cpuids < 0 || nvcpus < 0) {
		fprintf(stderr, "usage: kvmx86 OUTS CPUIDS [VCPUS] (counts 1..65535, VCPUS 1..%d)\n",
			MAX_VCPUS);
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

	/* The code only reads memory: every vCPU runs the same copy. */
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

	struct vcpu vcpus[MAX_VCPUS] = { 0 };
	pthread_t threads[MAX_VCPUS];
	for (int i = 0; i < nvcpus; i++) {
		vcpus[i].index = i;
		if (vcpu_create(kvm, vm, &vcpus[i]))
			return 1;
	}
	for (int i = 0; i < nvcpus; i++) {
		int rc = pthread_create(&threads[i], NULL, vcpu_thread, &vcpus[i]);
		if (rc) {
			errno = rc;
			return die("pthread_create");
		}
	}
	int failed = 0;
	for (int i = 0; i < nvcpus; i++) {
		struct vcpu *v = &vcpus[i];
		pthread_join(threads[i], NULL);
		if (!v->err[0] && v->outs != outs)
			snprintf(v->err, sizeof(v->err), "%ld outs, expected %ld", v->outs, outs);
		if (!v->err[0] && v->restarts != 1)
			snprintf(v->err, sizeof(v->err), "%ld immediate-exit runs, expected 1",
				 v->restarts);
		if (v->err[0]) {
			fprintf(stderr, "kvmx86: vCPU %d: %s\n", i, v->err);
			failed = 1;
		}
	}
	if (failed)
		return 1;
	printf("kvmx86: pid=%d vcpus=%ld outs=%ld hlt=1 cpuids=%ld restarts=1\n", (int)getpid(),
	       nvcpus, outs, cpuids);
	for (int i = 0; i < nvcpus; i++)
		printf("kvmx86: vcpu=%d tid=%d\n", i, (int)vcpus[i].tid);
	return 0;
}
