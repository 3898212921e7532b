/* exitsum: text and JSON reports of exit counts; see exitsum.h. */
#include "exitsum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"
#include "traps.h"

const char exitsum_help[] =
"What the report says:\n"
"  N KVM events (M records): events are the records of the exit events counted\n"
"    here (kvm_hv:kvmppc_run_core, kvm_hv:kvm_guest_exit, kvm:kvm_exit,\n"
"    kvm:kvm_userspace_exit; the entries used for timing are not among them);\n"
"    records are all the recording holds, other events included.\n"
"  Ganged exits (POWER7/8), per QEMU process (TGID; COMMAND its name):\n"
"    GANG_EXITS   vcore runs that forced out more than one thread with work\n"
"                 (n_runnable - cedes > 1 when the run ended)\n"
"    CORE_RUNS    vcore runs: kvmppc_run_core Enter..Exit on one runner thread\n"
"    GANG/S       GANG_EXITS per second of the trace span\n"
"    BAILOUTS     Exits with no Enter on that runner: the kernel gave up before\n"
"                 entering the guest (a signal, a request); not runs\n"
"    GUEST_EXITS  the process's exits from the guest (kvm_guest_exit, kvm_exit)\n"
"    CEDES        guest exits of a vCPU that had ceded (H_CEDE: idle), which a\n"
"                 gang exit does not count as forced\n"
"    POWER9/10 (no kvmppc_run_core at all): a vcore holds one vCPU, so these\n"
"    columns are not applicable (JSON null); see the doorbell exits.\n"
"  Exit reasons: source (powerpc trap, vmx/svm exit reason, userspace\n"
"    KVM_EXIT_* of KVM_RUN's return, negative: its errno), name, code, count.\n"
"  Exit handling time, where the recording has kvm:kvm_entry (x86) or\n"
"    kvm_hv:kvm_guest_enter (POWER), as perf kvm stat measures it: from an exit\n"
"    to the next entry of the same vCPU, so it holds user space's handling and\n"
"    the time a vCPU was blocked (HLT, H_CEDE).  COUNT exits, %EXITS of all guest\n"
"    exits, TIMED how many were timed, %TIME of all timed time, TOTAL_S, then\n"
"    MIN/AVG/P50/P99/MAX microseconds (P50/P99: upper ends of quarter-octave\n"
"    buckets, within 19 %).  Never guessed: an exit followed by another exit of\n"
"    its vCPU or by the end, or with lost events before its entry, is not timed;\n"
"    both are counted, as are entries with no exit before them.\n"
"  Doorbell exits (POWER9+): each msgsndp a guest sends to a sibling vCPU traps\n"
"    as H_FAC_UNAVAIL (0xf80), per process and sending vCPU: the cost of guest\n"
"    threads per core where there is no ganging.\n"
"  -v adds every row per process and vCPU; --json holds every field.\n";

/* Why ganged exits are not applicable, or NULL when they are. */
static const char *exitsum_not_applicable(const struct gang_result *r)
{
	if (r->run_core_events)
		return NULL;
	if (!r->run_core_format)
		return "the trace has no kvm_hv:kvmppc_run_core event: not a POWER KVM HV "
		       "host, or the event was not recorded (trace-cmd record -e kvm_hv, or "
		       "perf record -e \"kvm_hv:*\")";
	return "kvm_hv:kvmppc_run_core never fired: POWER9/10 hosts on recent kernels run "
	       "guest threads independently (no ganging), or no guest ran while tracing";
}

/* Exit reasons summed over tgids and vCPUs (the result is sorted by source, code). */
struct reason_total {
	enum exit_source source;
	int64_t code;
	uint64_t count;
	uint64_t time_pairs, time_total, time_min, time_max;	/* ns */
};

/* Adds x's times to t's (the first pair sets min). */
static void times_add(struct reason_total *t, const struct gang_reason *x)
{
	if (!x->time_pairs)
		return;
	if (!t->time_pairs || x->time_min_ns < t->time_min)
		t->time_min = x->time_min_ns;
	if (x->time_max_ns > t->time_max)
		t->time_max = x->time_max_ns;
	t->time_pairs += x->time_pairs;
	t->time_total += x->time_total_ns;
}

static size_t reason_totals(const struct gang_result *r, struct reason_total **out)
{
	struct reason_total *v = xcalloc(r->nreasons ? r->nreasons : 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < r->nreasons; i++) {
		const struct gang_reason *x = &r->reasons[i];
		if (n && v[n - 1].source == x->source && v[n - 1].code == x->code) {
			v[n - 1].count += x->count;
			times_add(&v[n - 1], x);
			continue;
		}
		v[n] = (struct reason_total){ x->source, x->code, x->count, 0, 0, 0, 0 };
		times_add(&v[n++], x);
	}
	*out = v;
	return n;
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct reason_total *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return (x->code > y->code) - (x->code < y->code);
}

static double rate(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

static bool lower_bounds(const struct gang_result *r)
{
	return r->lost_events > 0 || r->damage[0];
}

/*
 * POWER9-class: POWER guest exits but no kvmppc_run_core at all.  There a
 * vcore holds one vCPU (threads_per_vcore() is 1 on ARCH_300): the ganged
 * columns mean nothing, which is not the same as 0.
 */
static bool power9_class(const struct gang_result *r)
{
	if (r->run_core_events)
		return false;
	for (size_t i = 0; i < r->nreasons; i++)
		if (r->reasons[i].source == EXIT_SRC_POWER)
			return true;
	return false;
}

#define P9_GANG_NA "not applicable on POWER9+ (one vCPU per vcore)"

/* Exits that end in a guest entry: the kernel's, not user space's returns. */
static bool timeable(enum exit_source src)
{
	return src != EXIT_SRC_USERSPACE;
}

/* Why the exits of r carry no times, or NULL when they do. */
static const char *times_why(const struct gang_result *r)
{
	if (!r->timed)
		return "no entry events in this recording: record kvm:kvm_entry (x86) or "
		       "kvm_hv:kvm_guest_enter (POWER) with the exits";
	if (r->time_void[0])
		return r->time_void;
	return NULL;
}

/* The H_FAC_UNAVAIL trap: on POWER9+ a guest's msgsndp to a sibling thread. */
#define TRAP_H_FAC_UNAVAIL 0xf80

static bool is_doorbell(const struct gang_reason *x)
{
	return x->source == EXIT_SRC_POWER && x->code == TRAP_H_FAC_UNAVAIL;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const struct gang_time_hist *hist_of(const struct gang_result *r,
					    enum exit_source src, int64_t code)
{
	for (size_t i = 0; i < r->nhists; i++)
		if (r->hists[i].source == src && r->hists[i].code == code)
			return &r->hists[i];
	return NULL;
}

/* Microseconds with a width, or "-" when nothing was timed. */
static void us_cell(struct strbuf *out, bool any, double ns)
{
	if (any)
		strbuf_addf(out, " %10.2f", ns / 1e3);
	else
		strbuf_addf(out, " %10s", "-");
}

static void times_text(struct strbuf *out, const struct gang_result *r,
		       const struct reason_total *t, size_t n, int verbose)
{
	uint64_t exits = 0, total = 0;
	for (size_t i = 0; i < n; i++)
		if (timeable(t[i].source)) {
			exits += t[i].count;
			total += t[i].time_total;
		}
	if (!exits)
		return;
	const char *why = times_why(r);
	if (why) {
		strbuf_addf(out, "Exit handling time: not timed (%s)\n", why);
		return;
	}
	strbuf_addf(out, "Exit handling time (exit to the next entry of its vCPU; %llu of %llu "
		    "exits timed)\n", (unsigned long long)r->time_pairs,
		    (unsigned long long)exits);
	strbuf_addf(out, "  %-10s %-26s %10s %7s %10s %7s %12s %10s %10s %10s %10s %10s\n",
		    "SOURCE", "REASON", "COUNT", "%EXITS", "TIMED", "%TIME", "TOTAL_S", "MIN_US",
		    "AVG_US", "P50_US", "P99_US", "MAX_US");
	for (size_t i = 0; i < n; i++) {
		const struct reason_total *x = &t[i];
		if (!timeable(x->source))
			continue;
		char name[48];
		traps_format(x->source, x->code, name, sizeof(name));
		bool any = x->time_pairs > 0;
		const struct gang_time_hist *h = hist_of(r, x->source, x->code);
		strbuf_addf(out, "  %-10s %-26s %10llu %7.2f %10llu %7.2f %12.6f",
			    traps_source_name(x->source), name, (unsigned long long)x->count,
			    pct(x->count, exits), (unsigned long long)x->time_pairs,
			    pct(x->time_total, total), (double)x->time_total / 1e9);
		us_cell(out, any, (double)x->time_min);
		us_cell(out, any, any ? (double)x->time_total / (double)x->time_pairs : 0);
		us_cell(out, any && h, h ? (double)gang_hist_quantile(h, x->time_pairs, 0.5,
								      x->time_max) : 0);
		us_cell(out, any && h, h ? (double)gang_hist_quantile(h, x->time_pairs, 0.99,
								      x->time_max) : 0);
		us_cell(out, any, (double)x->time_max);
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "Not timed: %llu exits with no entry of their vCPU before its next exit or "
		    "the recording's end, %llu across lost events; %llu entries had no exit before "
		    "them (each vCPU's first).  P50/P99: upper ends of quarter-octave buckets.\n",
		    (unsigned long long)r->time_unmatched, (unsigned long long)r->time_gap,
		    (unsigned long long)r->time_unpaired_entries);
	if (!verbose)
		return;
	strbuf_addstr(out, r->x86_per_thread ? "Exit handling time per process and vCPU (x86: "
		      "per thread, tid)\n" : "Exit handling time per process and vCPU\n");
	for (size_t i = 0; i < r->nreasons; i++) {
		const struct gang_reason *x = &r->reasons[i];
		if (!timeable(x->source))
			continue;
		char name[48], vcpu[24];
		traps_format(x->source, x->code, name, sizeof(name));
		if (x->vcpu == GANG_VCPU_UNKNOWN)
			snprintf(vcpu, sizeof(vcpu), "?");
		else
			snprintf(vcpu, sizeof(vcpu), "%lld", (long long)x->vcpu);
		bool any = x->time_pairs > 0;
		strbuf_addf(out, "  %-4s %-8d vcpu %-5s %-10s %-26s %10llu %10llu %12.6f",
			    r->x86_per_thread && x->source != EXIT_SRC_POWER ? "tid" : "tgid",
			    x->tgid, vcpu, traps_source_name(x->source), name,
			    (unsigned long long)x->count, (unsigned long long)x->time_pairs,
			    (double)x->time_total_ns / 1e9);
		us_cell(out, any, (double)x->time_min_ns);
		us_cell(out, any, any ? (double)x->time_total_ns / (double)x->time_pairs : 0);
		us_cell(out, any, (double)x->time_max_ns);
		strbuf_addch(out, '\n');
	}
}

/*
 * POWER9+ doorbells: each msgsndp a guest kernel sends to a sibling vCPU of
 * its virtual core traps to the hypervisor (H_FAC_UNAVAIL, 0xf80) and is
 * emulated there: what giving a guest several threads per core costs where
 * there is no ganging.  Per process and vCPU (the sender).
 */
static void doorbells_text(struct strbuf *out, const struct gang_result *r)
{
	uint64_t total = 0;
	for (size_t i = 0; i < r->nreasons; i++)
		if (is_doorbell(&r->reasons[i]))
			total += r->reasons[i].count;
	if (!total)
		return;
	strbuf_addf(out, "Doorbell exits (msgsndp to a sibling vCPU, trapped as H_FAC_UNAVAIL "
		    "0xf80 on POWER9+): %llu\n%8s  %-6s %12s %12s\n", (unsigned long long)total,
		    "TGID", "VCPU", "DOORBELLS", "TIME_S");
	for (size_t i = 0; i < r->nreasons; i++) {
		const struct gang_reason *x = &r->reasons[i];
		if (!is_doorbell(x))
			continue;
		char vcpu[24], secs[24];
		if (x->vcpu == GANG_VCPU_UNKNOWN)
			snprintf(vcpu, sizeof(vcpu), "?");
		else
			snprintf(vcpu, sizeof(vcpu), "%lld", (long long)x->vcpu);
		if (times_why(r))
			snprintf(secs, sizeof(secs), "-");
		else
			snprintf(secs, sizeof(secs), "%.6f", (double)x->time_total_ns / 1e9);
		strbuf_addf(out, "%8d  %-6s %12llu %12s\n", x->tgid, vcpu,
			    (unsigned long long)x->count, secs);
	}
}

/* Without ganging, which process exits how often is still worth a line each. */
static void guest_exits_text(struct strbuf *out, const struct gang_result *r)
{
	bool any = false;
	for (size_t i = 0; i < r->nprocs; i++)
		any |= r->procs[i].guest_exits > 0;
	if (!any)
		return;
	strbuf_addf(out, "Guest exits per %s\n%8s  %-16s %12s\n",
		    r->x86_per_thread ? "thread (a recording names no processes)" : "process",
		    r->x86_per_thread ? "TID" : "TGID", "COMMAND", "GUEST_EXITS");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct gang_proc *p = &r->procs[i];
		if (p->guest_exits)
			strbuf_addf(out, "%8d  %-16s %12llu\n", p->tgid, p->comm[0] ? p->comm : "-",
				    (unsigned long long)p->guest_exits);
	}
}

void exitsum_text(struct strbuf *out, const struct gang_result *r,
		  const struct exitsum_meta *m, int verbose)
{
	const char *why = exitsum_not_applicable(r);
	strbuf_addf(out, "%s: %llu KVM events (%llu records) over %.3f s", m->source,
		    (unsigned long long)r->events, (unsigned long long)r->records, r->span_seconds);
	if (m->buffer && m->buffer[0])
		strbuf_addf(out, ", buffer %s", m->buffer);
	strbuf_addch(out, '\n');
	if (r->lost_events)
		strbuf_addf(out, "WARNING: %llu events were lost%s: every count below is a "
			    "lower bound (use a bigger buffer)\n",
			    (unsigned long long)r->lost_events,
			    r->lost_known ? "" : " (at least; the trace has no per-CPU stats)");
	if (r->damage[0])
		strbuf_addf(out, "WARNING: the recording is damaged: %s: every count below is a "
			    "lower bound\n", r->damage);

	if (why) {
		strbuf_addf(out, "Ganged exits: not applicable: %s\n", why);
		guest_exits_text(out, r);
		if (power9_class(r))
			strbuf_addstr(out, "GANG_EXITS, CORE_RUNS, GANG/S, BAILOUTS: " P9_GANG_NA
				      "; see the doorbell exits instead\n");
	} else {
		strbuf_addf(out, "Ganged exits (%s rule)\n", r->algorithm == GANG_ALGO_SEED
			    ? "seed per-tgid" : "per-vcore");
		strbuf_addf(out, "%8s  %-16s %12s %10s %12s %9s %12s %9s\n", "TGID", "COMMAND",
			    "GANG_EXITS", "CORE_RUNS", "GANG/S", "BAILOUTS", "GUEST_EXITS", "CEDES");
		for (size_t i = 0; i < r->nprocs; i++) {
			const struct gang_proc *p = &r->procs[i];
			strbuf_addf(out, "%8d  %-16s %12llu %10llu %12.1f %9llu %12llu %9llu\n",
				    p->tgid, p->comm[0] ? p->comm : "-",
				    (unsigned long long)p->gang_exits,
				    (unsigned long long)p->core_runs,
				    rate(p->gang_exits, r->span_seconds),
				    (unsigned long long)p->bailouts,
				    (unsigned long long)p->guest_exits,
				    (unsigned long long)p->cedes);
		}
		strbuf_addstr(out, "Note: with dynamic micro-threading (POWER8) exits of "
			      "piggybacked vcores of other VMs are charged to the runner's VM.\n");
	}

	struct reason_total *t;
	size_t n = reason_totals(r, &t);
	qsort(t, n, sizeof(*t), cmp_count_desc);
	if (n)
		strbuf_addstr(out, "Exit reasons\n");
	for (size_t i = 0; i < n; i++) {
		char name[48];
		traps_format(t[i].source, t[i].code, name, sizeof(name));
		strbuf_addf(out, "  %-10s %-26s %6s0x%-6llx %12llu\n", traps_source_name(t[i].source),
			    name, t[i].code < 0 ? "-" : "",
			    (unsigned long long)(t[i].code < 0 ? -(uint64_t)t[i].code
							       : (uint64_t)t[i].code),
			    (unsigned long long)t[i].count);
	}

	if (verbose && r->nreasons) {
		strbuf_addstr(out, r->x86_per_thread ? "Exit reasons per process and vCPU (x86: per "
			      "thread, tid; a recording names no processes)\n"
			      : "Exit reasons per process and vCPU\n");
		for (size_t i = 0; i < r->nreasons; i++) {
			const struct gang_reason *x = &r->reasons[i];
			char name[48], vcpu[24];
			traps_format(x->source, x->code, name, sizeof(name));
			if (x->vcpu == GANG_VCPU_UNKNOWN)
				snprintf(vcpu, sizeof(vcpu), "?");
			else
				snprintf(vcpu, sizeof(vcpu), "%lld", (long long)x->vcpu);
			/* A recording's x86 entries are per thread (it names no processes). */
			bool tid = r->x86_per_thread && (x->source == EXIT_SRC_VMX ||
							 x->source == EXIT_SRC_SVM ||
							 x->source == EXIT_SRC_USERSPACE);
			strbuf_addf(out, "  %-4s %-8d vcpu %-5s %-10s %-26s %12llu\n",
				    tid ? "tid" : "tgid", x->tgid, vcpu,
				    traps_source_name(x->source), name,
				    (unsigned long long)x->count);
		}
	}
	/* After what was printed before times existed, so that stays a prefix. */
	times_text(out, r, t, n, verbose);
	doorbells_text(out, r);
	free(t);
}

/* Seconds of ns, or null when nothing was timed (or cannot be). */
static void json_secs(struct json_writer *w, bool any, double ns)
{
	if (any)
		json_double(w, ns / 1e9);
	else
		json_null(w);
}

/*
 * time_total_s, time_min_s, time_avg_s, time_max_s, time_pairs: null when
 * the exit cannot be timed (user-space exits; a recording without entries),
 * min/avg/max null when no pair was.
 */
static void json_times(struct json_writer *w, const struct gang_result *r,
		       enum exit_source src, uint64_t pairs, uint64_t total, uint64_t min,
		       uint64_t max)
{
	bool can = timeable(src) && !times_why(r), any = can && pairs;
	json_key(w, "time_total_s"); json_secs(w, can, (double)total);
	json_key(w, "time_min_s"); json_secs(w, any, (double)min);
	json_key(w, "time_avg_s"); json_secs(w, any, any ? (double)total / (double)pairs : 0);
	json_key(w, "time_max_s"); json_secs(w, any, (double)max);
	json_key(w, "time_pairs");
	if (can)
		json_uint(w, pairs);
	else
		json_null(w);
}

static void json_reason(struct json_writer *w, enum exit_source src, int64_t code)
{
	char name[48];
	json_key(w, "source"); json_str(w, traps_source_name(src));
	json_key(w, "reason"); json_int(w, code);
	json_key(w, "name"); json_str(w, traps_format(src, code, name, sizeof(name)));
}

/*
 * exit_times: whether exits were timed and why not, what was left untimed,
 * and per reason the shares and percentiles (the sums are in exit_reasons).
 */
static void times_json(struct json_writer *w, const struct gang_result *r,
		       const struct reason_total *t, size_t n)
{
	const char *why = times_why(r);
	uint64_t exits = 0, total = 0;
	for (size_t i = 0; i < n; i++)
		if (timeable(t[i].source)) {
			exits += t[i].count;
			total += t[i].time_total;
		}
	json_key(w, "exit_times");
	json_obj_begin(w);
	json_key(w, "timed"); json_bool(w, why == NULL);
	json_key(w, "why");
	if (why)
		json_str(w, why);
	else
		json_null(w);
	json_key(w, "entry_events"); json_uint(w, r->entry_events);
	json_key(w, "pairs"); json_uint(w, r->time_pairs);
	json_key(w, "unmatched_exits"); json_uint(w, r->time_unmatched);
	json_key(w, "across_lost_events"); json_uint(w, r->time_gap);
	json_key(w, "unpaired_entries"); json_uint(w, r->time_unpaired_entries);
	json_key(w, "reasons");
	json_arr_begin(w);
	for (size_t i = 0; i < n && !why; i++) {
		const struct reason_total *x = &t[i];
		if (!timeable(x->source))
			continue;
		const struct gang_time_hist *h = hist_of(r, x->source, x->code);
		bool q = h && x->time_pairs;
		json_obj_begin(w);
		json_reason(w, x->source, x->code);
		json_key(w, "share_of_exits"); json_double(w, pct(x->count, exits) / 100);
		json_key(w, "share_of_time"); json_double(w, pct(x->time_total, total) / 100);
		json_key(w, "time_p50_s");
		json_secs(w, q, q ? (double)gang_hist_quantile(h, x->time_pairs, 0.5, x->time_max) : 0);
		json_key(w, "time_p99_s");
		json_secs(w, q, q ? (double)gang_hist_quantile(h, x->time_pairs, 0.99, x->time_max)
				  : 0);
		json_obj_end(w);
	}
	json_arr_end(w);
	json_obj_end(w);
}

void exitsum_json(struct strbuf *out, const struct gang_result *r,
		  const struct exitsum_meta *m)
{
	struct json_writer w;
	const char *why = exitsum_not_applicable(r);
	bool p9 = power9_class(r);
	json_init(&w, out, true);
	json_obj_begin(&w);
	json_key(&w, "source"); json_str(&w, m->source);
	json_key(&w, "buffer"); json_str(&w, m->buffer ? m->buffer : "");
	json_key(&w, "clock"); json_str(&w, m->clock);
	json_key(&w, "algorithm"); json_str(&w, gang_algorithm_name(r->algorithm));
	json_key(&w, "events"); json_uint(&w, r->events);
	json_key(&w, "records"); json_uint(&w, r->records);
	json_key(&w, "lost_events"); json_uint(&w, r->lost_events);
	json_key(&w, "lost_events_exact"); json_bool(&w, r->lost_known);
	json_key(&w, "counts_are_lower_bounds"); json_bool(&w, lower_bounds(r));
	json_key(&w, "damage");
	if (r->damage[0])
		json_str(&w, r->damage);
	else
		json_null(&w);
	json_key(&w, "span_seconds"); json_double(&w, r->span_seconds);
	json_key(&w, "x86_per_thread"); json_bool(&w, r->x86_per_thread);
	json_key(&w, "applicable"); json_bool(&w, why == NULL);
	if (why) {
		json_key(&w, "why"); json_str(&w, why);
	}
	json_key(&w, "processes");
	json_arr_begin(&w);
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct gang_proc *p = &r->procs[i];
		json_obj_begin(&w);
		json_key(&w, "tgid"); json_int(&w, p->tgid);
		json_key(&w, "comm");
		if (p->comm[0])
			json_str(&w, p->comm);
		else
			json_null(&w);
		json_key(&w, "gang_exits");
		if (why)
			json_null(&w);
		else
			json_uint(&w, p->gang_exits);
		json_key(&w, "core_runs");
		if (p9)
			json_null(&w);
		else
			json_uint(&w, p->core_runs);
		json_key(&w, "bailouts");
		if (p9)
			json_null(&w);
		else
			json_uint(&w, p->bailouts);
		json_key(&w, "guest_exits"); json_uint(&w, p->guest_exits);
		json_key(&w, "cedes"); json_uint(&w, p->cedes);
		json_key(&w, "gang_exits_per_second");
		if (why)
			json_null(&w);
		else
			json_double(&w, rate(p->gang_exits, r->span_seconds));
		if (p9) {
			json_key(&w, "gang_columns_why"); json_str(&w, P9_GANG_NA);
		}
		json_obj_end(&w);
	}
	json_arr_end(&w);

	struct reason_total *t;
	size_t n = reason_totals(r, &t);
	json_key(&w, "exit_reasons");
	json_arr_begin(&w);
	for (size_t i = 0; i < n; i++) {
		json_obj_begin(&w);
		json_reason(&w, t[i].source, t[i].code);
		json_key(&w, "count"); json_uint(&w, t[i].count);
		json_times(&w, r, t[i].source, t[i].time_pairs, t[i].time_total, t[i].time_min,
			   t[i].time_max);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	times_json(&w, r, t, n);
	free(t);

	json_key(&w, "exit_reasons_by_vcpu");
	json_arr_begin(&w);
	for (size_t i = 0; i < r->nreasons; i++) {
		const struct gang_reason *x = &r->reasons[i];
		json_obj_begin(&w);
		json_key(&w, "tgid"); json_int(&w, x->tgid);
		json_key(&w, "vcpu");
		if (x->vcpu == GANG_VCPU_UNKNOWN)
			json_null(&w);
		else
			json_int(&w, x->vcpu);
		json_reason(&w, x->source, x->code);
		json_key(&w, "count"); json_uint(&w, x->count);
		json_times(&w, r, x->source, x->time_pairs, x->time_total_ns, x->time_min_ns,
			   x->time_max_ns);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_key(&w, "doorbells");
	json_arr_begin(&w);
	for (size_t i = 0; i < r->nreasons; i++) {
		const struct gang_reason *x = &r->reasons[i];
		if (!is_doorbell(x))
			continue;
		json_obj_begin(&w);
		json_key(&w, "tgid"); json_int(&w, x->tgid);
		json_key(&w, "vcpu");
		if (x->vcpu == GANG_VCPU_UNKNOWN)
			json_null(&w);
		else
			json_int(&w, x->vcpu);
		json_key(&w, "count"); json_uint(&w, x->count);
		json_times(&w, r, x->source, x->time_pairs, x->time_total_ns, x->time_min_ns,
			   x->time_max_ns);
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
}
