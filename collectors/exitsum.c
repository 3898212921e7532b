/* exitsum: text and JSON reports of exit counts; see exitsum.h. */
#include "exitsum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"
#include "traps.h"

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
};

static size_t reason_totals(const struct gang_result *r, struct reason_total **out)
{
	struct reason_total *v = xcalloc(r->nreasons ? r->nreasons : 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < r->nreasons; i++) {
		const struct gang_reason *x = &r->reasons[i];
		if (n && v[n - 1].source == x->source && v[n - 1].code == x->code) {
			v[n - 1].count += x->count;
			continue;
		}
		v[n++] = (struct reason_total){ x->source, x->code, x->count };
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
	free(t);

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
}

static void json_reason(struct json_writer *w, enum exit_source src, int64_t code)
{
	char name[48];
	json_key(w, "source"); json_str(w, traps_source_name(src));
	json_key(w, "reason"); json_int(w, code);
	json_key(w, "name"); json_str(w, traps_format(src, code, name, sizeof(name)));
}

void exitsum_json(struct strbuf *out, const struct gang_result *r,
		  const struct exitsum_meta *m)
{
	struct json_writer w;
	const char *why = exitsum_not_applicable(r);
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
		json_key(&w, "core_runs"); json_uint(&w, p->core_runs);
		json_key(&w, "bailouts"); json_uint(&w, p->bailouts);
		json_key(&w, "guest_exits"); json_uint(&w, p->guest_exits);
		json_key(&w, "cedes"); json_uint(&w, p->cedes);
		json_key(&w, "gang_exits_per_second");
		if (why)
			json_null(&w);
		else
			json_double(&w, rate(p->gang_exits, r->span_seconds));
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
		json_obj_end(&w);
	}
	json_arr_end(&w);
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
		json_obj_end(&w);
	}
	json_arr_end(&w);
	json_obj_end(&w);
}
