/*
 * gang: the ganged-exit and exit-reason counter (pure logic, no I/O).
 *
 * Both trace readers (offline.h: trace-cmd files; live.h: a tracefs
 * session) decode records into `struct gang_event` and feed them here one at
 * a time, in timestamp order; the sweep controller gets the same numbers as
 * a `struct gang_result` (via live_stop()).
 *
 * Ganged exits (DESIGN §4.3).  On POWER8 KVM HV every thread of a virtual
 * core leaves the guest when one of them exits; a run of a vcore is bracketed
 * by kvm_hv:kvmppc_run_core Enter (where 0) and Exit (where 1) on the runner
 * thread, with one kvm_hv:kvm_guest_exit per vCPU in between, each saying
 * whether that vCPU had ceded.  forced = n_runnable - cedes; forced > 1 means
 * a thread with work was dragged out: one ganged exit.
 *
 *  GANG_ALGO_VCORE (default): state per runner thread (common_pid of the
 *	run_core events), so vcores of one VM running at once do not disturb
 *	each other.  An Exit with no Enter on that runner is a bail-out (counted
 *	in `bailouts`, never as a core run or gang exit).
 *  GANG_ALGO_SEED: the perf script of the original RFC: cedes kept per tgid,
 *	reset on any Enter of that tgid, pid->tgid learned on the first Enter.
 *	Kept for comparison; it miscounts VMs with several vcores running at
 *	once.  Only gang_exits depends on the rule: core runs, bail-outs, guest
 *	exits and cedes are always counted per runner thread.
 *
 * Attribution: a guest exit is charged to the tgid its runner thread last
 * entered for; on POWER8 with dynamic micro-threading the exits of
 * piggybacked vcores of other VMs are recorded in the runner's context, so
 * they are charged to the runner's VM.
 *
 * x86: kvm:kvm_exit (exit_reason, isa) and kvm:kvm_userspace_exit (reason,
 * or the negative errno of a KVM_RUN that failed) are counted per reason,
 * per tgid (given by the reader; where it is 0, unknown, the recording
 * thread's pid stands in) and per vCPU; there are no ganged exits there.
 *
 * Exit handling time (what perf kvm stat calls the time of an exit): from
 * an exit (kvm:kvm_exit, kvm_hv:kvm_guest_exit) to the next guest entry of
 * the same vCPU (kvm:kvm_entry, kvm_hv:kvm_guest_enter) of the same process
 * (POWER: the runner's VM as for exits; where that is unknown, as on
 * POWER9, the recording thread, which is the vCPU's own thread there).
 * It holds what KVM and user space did for the exit, and any time the vCPU
 * was not runnable (a HLT or H_CEDE blocks until a wake-up), as in perf.
 * Only a reader that says the recording defines an entry event
 * (gang_expect_entries) gets times.  Nothing is guessed: an exit followed by
 * another exit of its vCPU, or by the end of the recording, is unmatched; a
 * pair with a lost-events gap between (gang_lost) is not timed; an entry
 * with no exit before it (each vCPU's first) is counted as unpaired.
 */
#ifndef TA_GANG_H
#define TA_GANG_H

#include <stdbool.h>
#include <stddef.h>

/* How to record what is counted here, for messages about a recording: either reader's. */
#define RECORD_HINT "record one with 'trace-cmd record -e kvm_hv -e kvm sleep 10' or " \
	"'perf record -a -e \"kvm_hv:*\" sleep 10' (x86: -e \"kvm:*\")"
#include <stdint.h>

#include "traps.h"

enum gang_algorithm { GANG_ALGO_VCORE, GANG_ALGO_SEED };

enum gang_event_kind {
	GANG_EV_RUN_CORE,	/* kvm_hv:kvmppc_run_core */
	GANG_EV_GUEST_EXIT,	/* kvm_hv:kvm_guest_exit */
	GANG_EV_KVM_EXIT,	/* kvm:kvm_exit (x86) */
	GANG_EV_USERSPACE_EXIT,	/* kvm:kvm_userspace_exit */
	GANG_EV_GUEST_ENTER,	/* kvm_hv:kvm_guest_enter */
	GANG_EV_KVM_ENTRY,	/* kvm:kvm_entry (x86) */
};

/* VCPU_UNKNOWN: the event carries no vcpu_id (older x86 kvm_exit). */
#define GANG_VCPU_UNKNOWN INT64_MIN

/* One decoded trace record; fields are sign-extended per their format. */
struct gang_event {
	enum gang_event_kind kind;
	int cpu;
	int32_t pid;		/* common_pid: the thread that recorded it */
	int32_t tgid;		/* x86 events: its process if known, else 0 */
	uint64_t ts;		/* trace clock, nanoseconds for the usual clocks */
	union {
		struct {
			int64_t n_runnable, runner_vcpu, where, tgid;
		} run_core;
		struct {
			int64_t vcpu_id, trap, ceded;
		} guest_exit;
		struct {
			int64_t reason, vcpu_id;
			enum exit_source isa;	/* EXIT_SRC_VMX or EXIT_SRC_SVM */
		} kvm_exit;
		struct {
			int64_t reason, vcpu_id;	/* reason < 0: KVM_RUN's errno */
		} userspace_exit;
		struct {
			int64_t vcpu_id;
		} entry;	/* GANG_EV_GUEST_ENTER and GANG_EV_KVM_ENTRY */
	} u;
};

/* Per process (QEMU tgid) totals. */
struct gang_proc {
	int32_t tgid;
	int32_t runner_pid;	/* a thread that ran its vcores (last seen), 0 if none */
	char comm[32];		/* filled in by the reader where known, else "" */
	uint64_t gang_exits;	/* forced > 1 at a core Exit */
	uint64_t core_runs;	/* Enter..Exit pairs completed */
	uint64_t bailouts;	/* Exit with no Enter on that runner */
	uint64_t guest_exits;	/* kvm_guest_exit / kvm_exit events */
	uint64_t cedes;		/* guest exits with ceded set */
};

/* One exit-reason count for one (source, code, tgid, vcpu). */
struct gang_reason {
	enum exit_source source;
	int64_t code;
	int32_t tgid;
	int64_t vcpu;		/* GANG_VCPU_UNKNOWN when not recorded */
	uint64_t count;
	/* Handling time of the exits that were timed (time_pairs of count), ns. */
	uint64_t time_pairs, time_total_ns, time_min_ns, time_max_ns;
};

/*
 * Handling times of one exit reason over every process and vCPU, in
 * quarter-octave buckets: bucket b holds times in [gang_hist_low(b),
 * gang_hist_low(b + 1)), so a percentile read from it is within 19 %.
 */
#define GANG_HIST_BUCKETS 256
struct gang_time_hist {
	enum exit_source source;
	int64_t code;
	uint64_t bucket[GANG_HIST_BUCKETS];
};
uint64_t gang_hist_low(unsigned b);
/*
 * The upper end of the bucket holding the q-quantile (0 < q <= 1) of h's
 * n times, clamped to max_ns; 0 when n is 0.
 */
uint64_t gang_hist_quantile(const struct gang_time_hist *h, uint64_t n, double q,
			    uint64_t max_ns);

/*
 * A snapshot of the counter.  The readers fill the fields marked (reader);
 * everything else comes from the events.  Sorted: procs by tgid, reasons by
 * source, code, tgid, vcpu.
 */
struct gang_result {
	enum gang_algorithm algorithm;
	uint64_t events;		/* records fed */
	uint64_t records;		/* (reader) all records seen, ours or not */
	uint64_t run_core_events;	/* 0: ganged exits are not applicable */
	uint64_t first_ts, last_ts;	/* of the records fed */
	uint64_t lost_events;		/* (reader) from per-CPU stats */
	bool lost_known;		/* (reader) stats were available */
	bool run_core_format;		/* (reader) the trace defines kvmppc_run_core */
	bool x86_per_thread;		/* (reader) kvm:kvm_exit and
					 * kvm_userspace_exit were counted per
					 * thread: a recording names no thread
					 * groups, so their tgid is a thread id */
	double span_seconds;		/* (reader) trace span, else from timestamps */
	char damage[256];		/* (reader) what is wrong with the recording,
					 * "" when nothing is: a damaged recording's
					 * counts miss what the damage hid, so they
					 * are lower bounds */
	/* Exit handling time (see above); all 0 when !timed. */
	bool timed;			/* the recording defines an entry event */
	char time_void[160];		/* (reader) why no pair may be timed even so
					 * (losses the recording does not place), "" */
	uint64_t entry_events;		/* entries fed (not in events) */
	uint64_t time_pairs;		/* exits timed */
	uint64_t time_unmatched;	/* exits whose vCPU exited again, or the
					 * recording ended, before an entry */
	uint64_t time_gap;		/* exit..entry pairs with lost events between */
	uint64_t time_unpaired_entries;	/* entries with no exit before them */
	struct gang_proc *procs;
	size_t nprocs;
	struct gang_reason *reasons;
	size_t nreasons;
	struct gang_time_hist *hists;	/* per (source, code), sorted so */
	size_t nhists;
};

struct gang_counter;

struct gang_counter *gang_new(enum gang_algorithm algo);
void gang_free(struct gang_counter *g);
/* Feeds one event; events must come in timestamp order. */
void gang_feed(struct gang_counter *g, const struct gang_event *ev);
/*
 * Feeds evs[0..n) in that order: what a reader decoded in a row, in one
 * call (the per-event cost of a call was a sixth of the counter's).
 */
void gang_feed_many(struct gang_counter *g, const struct gang_event *evs, size_t n);
/* What the readers decode in a row before handing it over: a batch. */
#define GANG_FEED_BATCH 64
/*
 * The reader's recording defines kvm_entry or kvm_guest_enter: exits are
 * timed from now on (call before feeding; without it entries are ignored).
 */
void gang_expect_entries(struct gang_counter *g);
/*
 * Events were lost before the reader's next record at until_ts (a page that
 * says so, a LOST record): an exit before until_ts whose entry comes after
 * this call is not timed.
 */
void gang_lost(struct gang_counter *g, uint64_t until_ts);
/* Fills *out (release it with gang_result_release); the counter stays usable. */
void gang_result_get(const struct gang_counter *g, struct gang_result *out);
void gang_result_release(struct gang_result *r);
/*
 * Adds a reason to r->damage ("; "-separated; what does not fit is cut
 * with "...").
 */
void gang_result_damage(struct gang_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Withholds every time of r (its pairs become time_gap): the reader knows
 * events were lost but not where.  why goes into r->time_void.
 */
void gang_result_untime(struct gang_result *r, const char *why);
/* The process entry of tgid in r, or NULL. */
struct gang_proc *gang_result_proc(struct gang_result *r, int32_t tgid);

/* "vcore" / "seed"; gang_algorithm_parse returns -1 for anything else. */
const char *gang_algorithm_name(enum gang_algorithm a);
int gang_algorithm_parse(const char *s, enum gang_algorithm *out);

#endif
