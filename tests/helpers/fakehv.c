/*
 * fakehv: fires emulated POWER KVM HV tracepoints from user space, so the
 * collectors can be tested with real kernel tracing on an x86 TCG host
 * (DESIGN §5).
 *
 * Two noinline functions carry a 5-byte NOP at a global label; uprobe events
 * named exactly kvm_hv/kvmppc_run_core and kvm_hv/kvm_guest_exit sit on
 * those NOPs and fetch the real tracepoints' fields from the argument
 * registers (a NOP site makes a uprobe ~50x cheaper than an int3 site).
 *
 *   fakehv probes-create	create both uprobe events (libtracefs)
 *   fakehv probes-remove	remove them (idempotent; used by trap handlers)
 *   fakehv run SCENARIO [REPS]	fire a scripted sequence REPS times
 *   fakehv bench ITERATIONS [THREADS [RATE]]  tight loop: 4 events per
 *				iteration, shared by THREADS runner threads
 *				(default 1); RATE > 0: at most RATE events per
 *				second in all (paced chunk by chunk)
 *   fakehv offsets		print the probe sites' file offsets
 *
 * Scenarios and their answers (per repetition; T = this process's pid):
 *   one-vcore	 tgid T, 1 runner: 2 core runs, 1 gang exit, 4 guest exits,
 *		 1 cede; traps 0x980 x2, 0xc00, 0x500
 *   overlap-reset tgid T, runners A and B overlap, B's Enter after A's cede:
 *		 vcore rule 1 gang exit, seed rule 2
 *   overlap-share tgid T, runners A and B overlap, B's cede before A's Exit:
 *		 vcore rule 1 gang exit, seed rule 0
 *   two-vms	 tgid T (runner A, 4 threads) and T+1000000 (runner B, 1
 *		 thread): T gets 1 gang exit and 1 core run, the other none
 *   bailout	 tgid T: 1 Exit without Enter (n_runnable 8), then a run
 *		 with forced 4: 1 bail-out, 1 core run, 1 gang exit
 *   negative	 tgid -5, n_runnable -3, vcpu -1, trap -1: 1 core run, 0 gang
 *   reasons	 tgid T: one guest exit per DESIGN §4.2 trap code (32 codes)
 *		 plus 0x1234, in one run with n_runnable 1: 0 gang exits
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

/* The probe sites: a 5-byte NOP with the fields already in argument registers. */
#define NOP5 ".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"

extern char fakehv_run_core_site[], fakehv_guest_exit_site[];

__attribute__((noinline)) static void
run_core(int n_runnable, int runner_vcpu, int where, int tgid)
{
	asm volatile(".globl fakehv_run_core_site\nfakehv_run_core_site:\n" NOP5
		     : : "D"(n_runnable), "S"(runner_vcpu), "d"(where), "c"(tgid)
		     : "memory");
}

__attribute__((noinline)) static void
guest_exit(int vcpu_id, int trap, unsigned long pc, unsigned long msr, uint8_t ceded)
{
	register unsigned long r8 asm("r8") = ceded;
	asm volatile(".globl fakehv_guest_exit_site\nfakehv_guest_exit_site:\n" NOP5
		     : : "D"(vcpu_id), "S"(trap), "d"(pc), "c"(msr), "r"(r8)
		     : "memory");
}

/* File offset of a code address: what uprobe_events wants (PATH:OFFSET). */
static long site_offset(const void *addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	long off = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &pgoff) == 3 &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
			off = (long)((uintptr_t)addr - lo + pgoff);
			break;
		}
	}
	fclose(f);
	return off;
}

static int probes_remove(void)
{
	int rc = 0;
	const char *names[] = { "kvmppc_run_core", "kvm_guest_exit" };
	for (int i = 0; i < 2; i++) {
		struct tracefs_dynevent *d =
			tracefs_dynevent_get(TRACEFS_DYNEVENT_UPROBE, "kvm_hv", names[i]);
		if (!d)
			continue;
		if (tracefs_dynevent_destroy(d, true) < 0) {
			fprintf(stderr, "fakehv: cannot remove kvm_hv/%s: %s\n", names[i],
				strerror(errno));
			rc = 1;
		}
		tracefs_dynevent_free(d);
	}
	return rc;
}

static int probe_create(const char *exe, const char *event, const void *site,
			const char *fetch)
{
	long off = site_offset(site);
	if (off < 0) {
		fprintf(stderr, "fakehv: cannot find the probe site of %s\n", event);
		return 1;
	}
	struct tracefs_dynevent *d =
		tracefs_uprobe_alloc("kvm_hv", event, exe, (unsigned long long)off, fetch);
	if (!d || tracefs_dynevent_create(d) < 0) {
		char *log = tracefs_error_last(NULL);
		fprintf(stderr, "fakehv: cannot create uprobe kvm_hv/%s: %s%s%s\n", event,
			strerror(errno), log ? "; " : "", log ? log : "");
		free(log);
		tracefs_dynevent_free(d);
		return 1;
	}
	tracefs_dynevent_free(d);
	return 0;
}

static int probes_create(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		perror("fakehv: /proc/self/exe");
		return 1;
	}
	exe[n] = '\0';
	/* A rebuilt binary silently detaches old probes: always start afresh. */
	probes_remove();
	if (probe_create(exe, "kvmppc_run_core", fakehv_run_core_site,
			 "n_runnable=%di:s32 runner_vcpu=%si:s32 where=%dx:s32 tgid=%cx:s32") ||
	    probe_create(exe, "kvm_guest_exit", fakehv_guest_exit_site,
			 "vcpu_id=%di:s32 trap=%si:s32 pc=%dx:u64 msr=%cx:u64 ceded=%r8:u8")) {
		probes_remove();
		return 1;
	}
	return 0;
}

/* --- scripted sequences, each step run by a named thread ---------------- */

enum op { ENTER, EXIT, GEXIT };

struct step {
	int thread;		/* 0 = runner A, 1 = runner B */
	enum op op;
	int a, b, c;		/* ENTER/EXIT: n_runnable, tgid offset, -; GEXIT: vcpu, trap, ceded */
};

#define TGID_SELF 0
#define TGID_OTHER 1000000	/* a second emulated VM */
#define TGID_NEG (-1)		/* literal -5 */

static const struct step one_vcore[] = {
	{ 0, ENTER, 2, TGID_SELF, 0 }, { 0, GEXIT, 0, 0x980, 0 }, { 0, GEXIT, 1, 0xc00, 1 },
	{ 0, EXIT, 2, TGID_SELF, 0 },
	{ 0, ENTER, 2, TGID_SELF, 0 }, { 0, GEXIT, 0, 0x500, 0 }, { 0, GEXIT, 1, 0x980, 0 },
	{ 0, EXIT, 2, TGID_SELF, 0 },
};

static const struct step overlap_reset[] = {
	{ 0, ENTER, 2, TGID_SELF, 0 }, { 0, GEXIT, 0, 0x980, 1 },
	{ 1, ENTER, 2, TGID_SELF, 0 }, { 0, GEXIT, 1, 0x980, 0 },
	{ 0, EXIT, 2, TGID_SELF, 0 },	/* vcore: 2-1 no;  seed: 2-0 yes */
	{ 1, GEXIT, 2, 0x500, 0 }, { 1, GEXIT, 3, 0x500, 0 },
	{ 1, EXIT, 2, TGID_SELF, 0 },	/* vcore: yes; seed: yes */
};

static const struct step overlap_share[] = {
	{ 0, ENTER, 2, TGID_SELF, 0 }, { 1, ENTER, 2, TGID_SELF, 0 },
	{ 1, GEXIT, 2, 0xe00, 1 }, { 0, GEXIT, 0, 0xe00, 0 }, { 0, GEXIT, 1, 0xe00, 0 },
	{ 0, EXIT, 2, TGID_SELF, 0 },	/* vcore: 2 yes; seed: 2-1 no */
	{ 1, GEXIT, 3, 0xe00, 0 },
	{ 1, EXIT, 2, TGID_SELF, 0 },	/* vcore: 2-1 no; seed: 2-1 no */
};

static const struct step two_vms[] = {
	{ 0, ENTER, 4, TGID_SELF, 0 }, { 1, ENTER, 1, TGID_OTHER, 0 },
	{ 0, GEXIT, 0, 0x980, 0 }, { 1, GEXIT, 0, 0x980, 0 }, { 0, GEXIT, 1, 0x980, 1 },
	{ 0, GEXIT, 2, 0x980, 1 }, { 0, GEXIT, 3, 0x980, 0 },
	{ 1, EXIT, 1, TGID_OTHER, 0 },	/* one thread: never ganged */
	{ 0, EXIT, 4, TGID_SELF, 0 },	/* 4-2 = 2: gang */
};

static const struct step bailout[] = {
	{ 0, EXIT, 8, TGID_SELF, 0 },	/* no Enter: bail-out */
	{ 0, ENTER, 4, TGID_SELF, 0 }, { 0, EXIT, 4, TGID_SELF, 0 },
};

static const struct step negative[] = {
	{ 0, ENTER, -3, TGID_NEG, 0 }, { 0, GEXIT, -1, -1, 0 }, { 0, GEXIT, 0, 0x7fffffff, 0 },
	{ 0, EXIT, -3, TGID_NEG, 0 },
};

static const int power_traps[] = {
	0x0, 0x100, 0x200, 0x300, 0x380, 0x400, 0x480, 0x500, 0x501, 0x502, 0x600, 0x700,
	0x800, 0x900, 0x980, 0xa00, 0xc00, 0xd00, 0xe00, 0xe20, 0xe40, 0xe60, 0xe80, 0xea0,
	0xf00, 0xf20, 0xf40, 0xf60, 0xf80, 0x1500, 0x1980, 0x5555, 0x1234,
};

struct script {
	const struct step *steps;
	size_t n;
};

static struct script cur;
static long reps = 1;
static sem_t turn[2], done;
static int self_tgid;

static int tgid_of(int code)
{
	if (code == TGID_NEG)
		return -5;
	return self_tgid + code;
}

static void do_step(const struct step *s)
{
	switch (s->op) {
	case ENTER:
		run_core(s->a, 0, 0, tgid_of(s->b));
		break;
	case EXIT:
		run_core(s->a, 0, 1, tgid_of(s->b));
		break;
	case GEXIT:
		guest_exit(s->a, s->b, 0xc000000000001234UL, 0x8000000000001033UL, (uint8_t)s->c);
		break;
	}
}

/*
 * Worker t waits for its turn, runs the step, and hands the baton back to
 * main: the semaphores order the steps across threads exactly.
 */
static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	for (long r = 0; r < reps; r++) {
		for (size_t i = 0; i < cur.n; i++) {
			if (cur.steps[i].thread != t)
				continue;
			while (sem_wait(&turn[t]) < 0 && errno == EINTR)
				;
			do_step(&cur.steps[i]);
			sem_post(&done);
		}
	}
	return NULL;
}

static int run_script(void)
{
	pthread_t th[2];
	sem_init(&done, 0, 0);
	for (int t = 0; t < 2; t++) {
		sem_init(&turn[t], 0, 0);
		if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t)) {
			fprintf(stderr, "fakehv: pthread_create failed\n");
			return 1;
		}
	}
	for (long r = 0; r < reps; r++)
		for (size_t i = 0; i < cur.n; i++) {
			sem_post(&turn[cur.steps[i].thread]);
			while (sem_wait(&done) < 0 && errno == EINTR)
				;
		}
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	return 0;
}

static int run_reasons(void)
{
	size_t n = sizeof(power_traps) / sizeof(power_traps[0]);
	for (long r = 0; r < reps; r++) {
		run_core(1, 0, 0, self_tgid);
		for (size_t i = 0; i < n; i++)
			guest_exit((int)(i % 4), power_traps[i], 0, 0, 0);
		run_core(1, 0, 1, self_tgid);
	}
	return 0;
}

/*
 * 4 events per iteration: Enter, two guest exits (one ceded), Exit (forced
 * 2).  The threads take iterations in chunks from a shared counter, so they
 * all run to the end: a fixed share each would leave a CPU idle once the
 * thread that a tracer preempted less is done.
 */
#define BENCH_CHUNK 1024

static long bench_total, bench_next;
static double bench_rate;		/* events per second, 0: as fast as it goes */
static struct timespec bench_start;

/* A paced bench: sleeps until the chunk starting at iteration lo is due. */
static void bench_pace(long lo)
{
	double due = 4.0 * (double)lo / bench_rate;
	struct timespec t = bench_start;
	t.tv_sec += (time_t)due;
	t.tv_nsec += (long)((due - (double)(time_t)due) * 1e9);
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static void *bench_loop(void *arg)
{
	(void)arg;
	for (;;) {
		long lo = __atomic_fetch_add(&bench_next, BENCH_CHUNK, __ATOMIC_RELAXED);
		if (lo >= bench_total)
			return NULL;
		if (bench_rate > 0)
			bench_pace(lo);
		long hi = lo + BENCH_CHUNK < bench_total ? lo + BENCH_CHUNK : bench_total;
		for (long i = lo; i < hi; i++) {
			run_core(3, 0, 0, self_tgid);
			guest_exit(0, 0x980, 0, 0, 0);
			guest_exit(1, 0xc00, 0, 0, 1);
			run_core(3, 0, 1, self_tgid);
		}
	}
}

/* THREADS runner threads of one emulated VM, ITERATIONS shared among them. */
static int bench(long iterations, int threads, double rate)
{
	pthread_t th[64];
	if (threads < 1 || threads > 64 || iterations < 0 || !(rate >= 0))
		return 2;
	bench_total = iterations;
	bench_rate = rate;
	clock_gettime(CLOCK_MONOTONIC, &bench_start);
	for (int t = 0; t < threads; t++)
		if (pthread_create(&th[t], NULL, bench_loop, NULL))
			return 1;
	for (int t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	return 0;
}

#define SCRIPT(a) { a, sizeof(a) / sizeof(a[0]) }

int main(int argc, char **argv)
{
	self_tgid = getpid();
	if (argc >= 2 && !strcmp(argv[1], "probes-create"))
		return probes_create();
	if (argc >= 2 && !strcmp(argv[1], "probes-remove"))
		return probes_remove();
	if (argc >= 2 && !strcmp(argv[1], "offsets")) {
		printf("kvmppc_run_core 0x%lx\nkvm_guest_exit 0x%lx\n",
		       site_offset(fakehv_run_core_site), site_offset(fakehv_guest_exit_site));
		return 0;
	}
	if (argc >= 3 && argc <= 5 && !strcmp(argv[1], "bench"))
		return bench(atol(argv[2]), argc >= 4 ? atoi(argv[3]) : 1,
			     argc == 5 ? atof(argv[4]) : 0);
	if (argc >= 3 && !strcmp(argv[1], "run")) {
		static const struct { const char *name; struct script s; } scripts[] = {
			{ "one-vcore", SCRIPT(one_vcore) },
			{ "overlap-reset", SCRIPT(overlap_reset) },
			{ "overlap-share", SCRIPT(overlap_share) },
			{ "two-vms", SCRIPT(two_vms) },
			{ "bailout", SCRIPT(bailout) },
			{ "negative", SCRIPT(negative) },
		};
		reps = argc >= 4 ? atol(argv[3]) : 1;
		if (!strcmp(argv[2], "reasons"))
			return run_reasons();
		for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
			if (!strcmp(argv[2], scripts[i].name)) {
				cur = scripts[i].s;
				return run_script();
			}
	}
	fprintf(stderr, "usage: fakehv probes-create | probes-remove | offsets |\n"
			"       run one-vcore|overlap-reset|overlap-share|two-vms|bailout|"
			"negative|reasons [REPS] | bench ITERATIONS [THREADS [RATE]]\n");
	return 2;
}
