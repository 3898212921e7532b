/*
 * kvmppc-guest: the smallest KVM-HV guests there are, for the emulated
 * POWER8 host tests (tests/integration/power8-host.sh, power8-smt.sh).
 * Built static for ppc64le (`make cross-ppc64el`), it runs inside that host.
 *
 * It talks to /dev/kvm directly: KVM_CREATE_VM (KVM_VM_PPC_HV), one memory
 * slot at guest address 0 with a few real-mode routines, one vCPU per
 * behaviour (KVM_CREATE_VCPU, KVM_ENABLE_CAP(KVM_CAP_PPC_PAPR) - without it
 * KVM_RUN fails with EINVAL - and pc, MSR_SF|MSR_ME|MSR_LE, r4 = the vCPU's
 * progress counter in guest memory), then LPCR[ILE] so interrupts are taken
 * little-endian: set once all vCPUs exist, because kvmppc_set_lpcr copies
 * ILE only into the vCPUs present at the time.  Each vCPU runs in its own
 * thread; vCPU ids 0..N-1 share one virtual core on a POWER8 host with
 * enough threads per core.  Every routine loops, adding 1 to its counter
 * (ld/addi/std) per round:
 *
 *   hcall  li r3,H_GET_TERM_CHAR; sc 1 - kvm_hv handles no H_GET_TERM_CHAR,
 *          so every round is one guest exit with trap 0xc00 (SYSCALL) and
 *          one KVM_RUN return as KVM_EXIT_PAPR_HCALL (busy, to user space)
 *   spin   nothing else (busy in the guest; it leaves only when the core
 *          does: the hypervisor decrementer, or a sibling's exit)
 *   idle   DEC = 0x7fff0000 (4.2 s); li r3,H_CEDE; sc 1 - a tickless idle
 *          guest CPU: kvm_hv cedes the thread (the exits of its core then
 *          say ceded=1) until something wakes it; the decrementer's
 *          handler at 0x900 puts DEC that far away again and returns
 *
 * Any other interrupt vector reports itself (H_PUT_TERM_CHAR, r4 = vector)
 * and the run fails.
 *
 * usage: kvmppc-guest [COUNT]
 *          one hcall vCPU until exactly COUNT (default 200) hypercalls:
 *          COUNT SYSCALL exits and COUNT user-space exits in the kvm_hv
 *          tracepoints; prints {"hcalls": N, "pid": P, "seconds": S}
 *        kvmppc-guest -s SECONDS BEHAVIOUR...
 *          one vCPU per BEHAVIOUR (hcall, spin, idle; at most 8) for
 *          SECONDS; prints one JSON line: pid, seconds, and per vCPU its id,
 *          behaviour, thread id, counter, counter per second and hypercalls
 *          to user space.
 * Exit 0 on success, 1 on any error (with its reason), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define KVM_VM_PPC_HV 1
#define H_CEDE 0xe0
#define H_GET_TERM_CHAR 0x54
#define H_PUT_TERM_CHAR 0x58
#define GUEST_MEM (2UL << 20)
#define MSR_SF (1UL << 63)
#define MSR_ME (1UL << 12)
#define MSR_LE 1UL
#define LPCR_ILE (1UL << 25)
#define MAX_VCPUS 8

/* Guest layout: vectors 0x100..0xf80, routines, then the counters. */
#define ADDR_HCALL 0x1000
#define ADDR_SPIN 0x1100
#define ADDR_IDLE 0x1200
#define ADDR_COUNTERS 0x10000
#define COUNTER_STRIDE 128	/* one cache line each */

/* Instruction words (little-endian guest, real mode). */
#define LI(rt, v) (0x38000000u | (rt) << 21 | ((v) & 0xffff))
#define LIS(rt, v) (0x3c000000u | (rt) << 21 | ((v) & 0xffff))
#define LD(rt, ra) (0xe8000000u | (rt) << 21 | (ra) << 16)
#define STD(rs, ra) (0xf8000000u | (rs) << 21 | (ra) << 16)
#define ADDI(rt, ra, v) (0x38000000u | (rt) << 21 | (ra) << 16 | ((v) & 0xffff))
#define MTDEC(rs) (0x7c1603a6u | (rs) << 21)
#define SC1 0x44000022u
#define RFID 0x4c000024u
#define B(off) (0x48000000u | ((uint32_t)(off) & 0x03fffffc))

enum behaviour { BEH_HCALL, BEH_SPIN, BEH_IDLE };
static const char *const behaviour_names[] = { "hcall", "spin", "idle" };
static const uint64_t behaviour_pc[] = { ADDR_HCALL, ADDR_SPIN, ADDR_IDLE };

struct vcpu {
	int id;
	enum behaviour beh;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	pid_t tid;
	long hcalls;		/* H_GET_TERM_CHAR to user space */
	long limit;		/* stop after this many hypercalls (0: no limit) */
	char error[160];	/* why the thread stopped early, "" if it did not */
};

static atomic_bool stopping;

static int die(const char *what)
{
	fprintf(stderr, "kvmppc-guest: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Interrupts end a blocked KVM_RUN with EINTR; nothing else to do. */
static void on_stop_signal(int sig)
{
	(void)sig;
}

static void put(uint32_t *mem, uint64_t addr, const uint32_t *code, size_t n)
{
	memcpy((char *)mem + addr, code, n * sizeof(*code));
}

/*
 * The guest's routines and interrupt vectors.  One counter round is the
 * same three instructions in every routine, so the counters of different
 * behaviours count comparable work.
 */
static void guest_code_write(uint32_t *mem)
{
	const uint32_t hcall[] = {
		LD(5, 4), ADDI(5, 5, 1), STD(5, 4),
		LI(3, H_GET_TERM_CHAR), SC1, B(-20),
	};
	const uint32_t spin[] = { LD(5, 4), ADDI(5, 5, 1), STD(5, 4), B(-12) };
	const uint32_t idle[] = {
		LD(5, 4), ADDI(5, 5, 1), STD(5, 4),
		LIS(6, 0x7fff), MTDEC(6), LI(3, H_CEDE), SC1, B(-28),
	};
	const uint32_t dec[] = { LIS(0, 0x7fff), MTDEC(0), RFID };
	static const uint16_t vectors[] = {
		0x100, 0x200, 0x300, 0x380, 0x400, 0x480, 0x500, 0x600, 0x700, 0x800,
		0x980, 0xa00, 0xb00, 0xc00, 0xd00, 0xe00, 0xe20, 0xe40, 0xe60, 0xe80,
		0xea0, 0xf00, 0xf20, 0xf40, 0xf60, 0xf80,
	};
	for (size_t i = 0; i < sizeof(vectors) / sizeof(*vectors); i++) {
		const uint32_t report[] = { LI(4, vectors[i]), LI(3, H_PUT_TERM_CHAR), SC1, B(0) };
		put(mem, vectors[i], report, 4);
	}
	put(mem, 0x900, dec, 3);
	put(mem, ADDR_HCALL, hcall, 6);
	put(mem, ADDR_SPIN, spin, 4);
	put(mem, ADDR_IDLE, idle, 8);
}

/* One vCPU's thread: KVM_RUN until stopped, answering its hypercalls. */
static void *vcpu_loop(void *arg)
{
	struct vcpu *v = arg;
	v->tid = gettid();
	while (!atomic_load(&stopping)) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(v->error, sizeof(v->error), "KVM_RUN: %s", strerror(errno));
			break;
		}
		struct kvm_run *r = v->run;
		if (r->exit_reason != KVM_EXIT_PAPR_HCALL) {
			snprintf(v->error, sizeof(v->error), "exit reason %u, wanted %d",
				 r->exit_reason, KVM_EXIT_PAPR_HCALL);
			break;
		}
		if (r->papr_hcall.nr == H_PUT_TERM_CHAR) {
			snprintf(v->error, sizeof(v->error), "unexpected interrupt at vector 0x%llx",
				 (unsigned long long)r->papr_hcall.args[0]);
			break;
		}
		if (r->papr_hcall.nr != H_GET_TERM_CHAR) {
			snprintf(v->error, sizeof(v->error), "hypercall 0x%llx, wanted 0x%x",
				 (unsigned long long)r->papr_hcall.nr, H_GET_TERM_CHAR);
			break;
		}
		r->papr_hcall.ret = 0;	/* H_SUCCESS */
		if (++v->hcalls == v->limit)
			break;
	}
	return NULL;
}

static int vcpu_create(int vm, struct vcpu *v, int run_size)
{
	v->fd = ioctl(vm, KVM_CREATE_VCPU, v->id);
	if (v->fd < 0)
		return die("KVM_CREATE_VCPU");
	struct kvm_enable_cap cap = { .cap = KVM_CAP_PPC_PAPR };
	if (ioctl(v->fd, KVM_ENABLE_CAP, &cap) < 0)
		return die("KVM_ENABLE_CAP(KVM_CAP_PPC_PAPR)");
	v->run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED)
		return die("mmap kvm_run");
	struct kvm_regs regs;
	if (ioctl(v->fd, KVM_GET_REGS, &regs) < 0)
		return die("KVM_GET_REGS");
	regs.pc = behaviour_pc[v->beh];
	regs.msr = MSR_SF | MSR_ME | MSR_LE;
	regs.gpr[4] = ADDR_COUNTERS + (uint64_t)v->id * COUNTER_STRIDE;
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		return die("KVM_SET_REGS");
	return 0;
}

/* LPCR[ILE] on the vcore, with every vCPU created (see the top). */
static int lpcr_ile_set(const struct vcpu *v)
{
	uint64_t lpcr;
	struct kvm_one_reg reg = { .id = KVM_REG_PPC_LPCR_64, .addr = (uintptr_t)&lpcr };
	if (ioctl(v->fd, KVM_GET_ONE_REG, &reg) < 0)
		return die("KVM_GET_ONE_REG(LPCR)");
	lpcr |= LPCR_ILE;
	if (ioctl(v->fd, KVM_SET_ONE_REG, &reg) < 0)
		return die("KVM_SET_ONE_REG(LPCR)");
	return 0;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: kvmppc-guest [COUNT 1..100000000]\n"
			"       kvmppc-guest -s SECONDS BEHAVIOUR...  (hcall, spin, idle; 1..%d)\n",
		MAX_VCPUS);
	return 2;
}

int main(int argc, char **argv)
{
	struct vcpu vcpus[MAX_VCPUS];
	int nvcpus = 0;
	double seconds = 0;
	long count = 0;

	memset(vcpus, 0, sizeof(vcpus));
	if (argc > 1 && !strcmp(argv[1], "-s")) {
		char *end;
		seconds = argc > 2 ? strtod(argv[2], &end) : 0;
		if (argc < 4 || *end || !(seconds > 0 && seconds <= 3600) || argc - 3 > MAX_VCPUS)
			return usage();
		for (int i = 3; i < argc; i++) {
			int b = 0;
			while (b < 3 && strcmp(argv[i], behaviour_names[b]))
				b++;
			if (b == 3)
				return usage();
			vcpus[nvcpus] = (struct vcpu){ .id = nvcpus, .beh = (enum behaviour)b };
			nvcpus++;
		}
	} else {
		count = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
		if (count < 1 || count > 100000000 || argc > 2)
			return usage();
		vcpus[0] = (struct vcpu){ .id = 0, .beh = BEH_HCALL, .limit = count };
		nvcpus = 1;
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
	guest_code_write(mem);
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = GUEST_MEM,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return die("KVM_SET_USER_MEMORY_REGION");
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < 0)
		return die("KVM_GET_VCPU_MMAP_SIZE");
	for (int i = 0; i < nvcpus; i++)
		if (vcpu_create(vm, &vcpus[i], run_size))
			return 1;
	if (lpcr_ile_set(&vcpus[0]))
		return 1;

	/* SIGUSR1 ends a vCPU's KVM_RUN: no SA_RESTART. */
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0)
		return die("sigaction");
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < nvcpus; i++) {
		errno = pthread_create(&vcpus[i].thread, NULL, vcpu_loop, &vcpus[i]);
		if (errno)
			return die("pthread_create");
	}
	if (seconds > 0) {
		struct timespec d = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
		while (nanosleep(&d, &d) < 0 && errno == EINTR)
			;
		/* immediate_exit makes a KVM_RUN entered after the signal return at once. */
		atomic_store(&stopping, true);
		for (int i = 0; i < nvcpus; i++) {
			vcpus[i].run->immediate_exit = 1;
			pthread_kill(vcpus[i].thread, SIGUSR1);
		}
	}
	for (int i = 0; i < nvcpus; i++)
		pthread_join(vcpus[i].thread, NULL);
	double took = elapsed(&t0);

	int rc = 0;
	for (int i = 0; i < nvcpus; i++)
		if (vcpus[i].error[0]) {
			fprintf(stderr, "kvmppc-guest: vCPU %d (%s): %s\n", i,
				behaviour_names[vcpus[i].beh], vcpus[i].error);
			rc = 1;
		}
	if (seconds == 0) {
		if (rc == 0 && vcpus[0].hcalls != count)
			return 1;
		printf("{\"hcalls\": %ld, \"pid\": %ld, \"seconds\": %.3f}\n", vcpus[0].hcalls,
		       (long)getpid(), took);
		return rc;
	}
	printf("{\"pid\": %ld, \"seconds\": %.3f, \"vcpus\": [", (long)getpid(), took);
	for (int i = 0; i < nvcpus; i++) {
		uint64_t counter;
		memcpy(&counter, (char *)mem + ADDR_COUNTERS + (size_t)i * COUNTER_STRIDE,
		       sizeof(counter));
		printf("%s{\"vcpu\": %d, \"behaviour\": \"%s\", \"tid\": %ld, \"counter\": %llu, "
		       "\"per_s\": %.1f, \"hcalls\": %ld}", i ? ", " : "", i,
		       behaviour_names[vcpus[i].beh], (long)vcpus[i].tid,
		       (unsigned long long)counter, (double)counter / took, vcpus[i].hcalls);
	}
	printf("]}\n");
	return rc;
}
