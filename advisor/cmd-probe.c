/*
 * probe: what this host supports for experiments - architecture, CPU model
 * and topology, SMT control, POWER8 subcores and kvm_hv parameters, whether
 * KVM can really run a guest (else sweeps use TCG), tracefs and the kvm /
 * kvm_hv tracepoints, the libvirt version and whether the URI answers, and
 * each host knob of the table: its value, or why this host has none (its
 * CPU, its kernel, or a missing file; --root judges a fake tree instead).
 * Read-only: probing changes nothing on the host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "../experiments/guest.h"
#include "../experiments/hostprobe.h"
#include "../model/knob-table.h"
#include "../util/json.h"
#include "cmd.h"

static const char *probe_uri;
static const char *probe_root;

static const struct option probe_options[] = {
	OPT_STRING(0, "uri", &probe_uri, "URI", "libvirt URI to check (default qemu:///system)"),
	OPT_STRING(0, "root", &probe_root, "DIR",
		   "judge host knobs under DIR instead of / (a fake tree with its own "
		   "proc/cpuinfo and proc/sys/kernel/osrelease, for tests)"),
	OPT_END(),
};

/* What libvirt says about itself and the URI. */
struct probe_libvirt {
	char lib_version[32];
	bool answers;
	char hv_version[32];	/* the hypervisor behind the URI */
	char hv_type[32];
	char error[sizeof(((struct ta_err *)0)->msg)];	/* why the URI did not answer */
};

static void version_format(char *buf, size_t n, unsigned long v)
{
	snprintf(buf, n, "%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
}

static void probe_libvirt_read(const char *uri, struct probe_libvirt *l)
{
	memset(l, 0, sizeof(*l));
	unsigned long v = 0;
	if (virGetVersion(&v, NULL, NULL) == 0)
		version_format(l->lib_version, sizeof(l->lib_version), v);
	struct ta_err err = { 0 };
	virConnectPtr c = guest_connect(uri, &err);
	if (!c) {
		snprintf(l->error, sizeof(l->error), "%s", err.msg);
		return;
	}
	l->answers = true;
	const char *type = virConnectGetType(c);
	snprintf(l->hv_type, sizeof(l->hv_type), "%s", type ? type : "?");
	if (virConnectGetVersion(c, &v) == 0)
		version_format(l->hv_version, sizeof(l->hv_version), v);
	virConnectClose(c);
}

static void probe_json(struct strbuf *out, const struct hostprobe *p,
		       const struct probe_libvirt *l, const char *uri, const char *root)
{
	struct json_writer w;
	json_init(&w, out, true);
	json_obj_begin(&w);
	json_key(&w, "arch"); json_str(&w, p->arch);
	json_key(&w, "cpu_model"); json_str(&w, p->cpu_model);
	json_key(&w, "online"); json_str(&w, p->online);
	json_key(&w, "online_cpus"); json_int(&w, p->online_cpus);
	json_key(&w, "sockets"); json_int(&w, p->sockets);
	json_key(&w, "cores_per_socket"); json_int(&w, p->cores_per_socket);
	json_key(&w, "threads_per_core"); json_int(&w, p->threads_per_core);
	json_key(&w, "smt_control"); json_str(&w, p->smt_control);
	json_key(&w, knob_of_kind(KNOB_SUBCORES)->name); json_str(&w, p->subcores_per_core);
	json_key(&w, "kvm_hv_parameters");
	if (p->nkvm_hv) {
		json_obj_begin(&w);
		for (size_t i = 0; i < p->nkvm_hv; i++) {
			json_key(&w, p->kvm_hv[i].name);
			json_str(&w, p->kvm_hv[i].value);
		}
		json_obj_end(&w);
	} else {
		json_null(&w);
	}
	json_key(&w, "host_knobs");
	json_obj_begin(&w);
	for (size_t i = 0; i < knob_count(); i++) {
		struct strbuf v = STRBUF_INIT, why = STRBUF_INIT;
		int ok = hostprobe_knob(root, knob_at(i), &v, &why);
		json_key(&w, knob_at(i)->name);
		json_obj_begin(&w);
		json_key(&w, "available"); json_bool(&w, ok);
		json_key(&w, ok ? "value" : "reason"); json_str(&w, ok ? v.buf : why.buf);
		json_obj_end(&w);
		strbuf_release(&v);
		strbuf_release(&why);
	}
	json_obj_end(&w);
	json_key(&w, "kvm_device"); json_bool(&w, p->kvm_dev);
	json_key(&w, "kvm_usable"); json_bool(&w, p->kvm_usable);
	json_key(&w, "kvm_reason"); json_str(&w, p->kvm_why);
	json_key(&w, "tracefs"); json_str(&w, p->tracefs);
	json_key(&w, "tracefs_readable"); json_bool(&w, p->tracefs && !p->tracefs_denied);
	json_key(&w, "events_kvm"); json_bool(&w, p->events_kvm);
	json_key(&w, "events_kvm_hv"); json_bool(&w, p->events_kvm_hv);
	json_key(&w, "libvirt");
	json_obj_begin(&w);
	json_key(&w, "version"); json_str(&w, l->lib_version[0] ? l->lib_version : NULL);
	json_key(&w, "uri"); json_str(&w, uri);
	json_key(&w, "answers"); json_bool(&w, l->answers);
	if (l->answers) {
		json_key(&w, "hypervisor"); json_str(&w, l->hv_type);
		json_key(&w, "hypervisor_version"); json_str(&w, l->hv_version);
	} else {
		json_key(&w, "error"); json_str(&w, l->error);
	}
	json_obj_end(&w);
	json_obj_end(&w);
}

static const char *or_na(const char *s, const char *na)
{
	return s ? s : na;
}

/* One line per knob of the table: its value, or why this host has none. */
static void probe_knobs_text(struct strbuf *out, const char *root)
{
	strbuf_addf(out, "host knobs%s%s:\n", strcmp(root, "/") ? " under " : "",
		    strcmp(root, "/") ? root : "");
	for (size_t i = 0; i < knob_count(); i++) {
		struct strbuf v = STRBUF_INIT, why = STRBUF_INIT;
		int ok = hostprobe_knob(root, knob_at(i), &v, &why);
		strbuf_addf(out, "  %-26s %s%s\n", knob_at(i)->name, ok ? "" : "not on this host: ",
			    ok ? v.buf : why.buf);
		strbuf_release(&v);
		strbuf_release(&why);
	}
}

static void probe_text(struct strbuf *out, const struct hostprobe *p,
		       const struct probe_libvirt *l, const char *uri, const char *root)
{
	strbuf_addf(out, "%-18s %s\n", "arch", p->arch);
	strbuf_addf(out, "%-18s %s\n", "cpu model", or_na(p->cpu_model, "unknown"));
	strbuf_addf(out, "%-18s %d socket(s) x %d core(s) x %d thread(s); %d online CPU(s): %s\n",
		    "host topology", p->sockets, p->cores_per_socket, p->threads_per_core,
		    p->online_cpus, or_na(p->online, "?"));
	strbuf_addf(out, "%-18s %s\n", "smt control",
		    or_na(p->smt_control, "absent (per-thread cpuN/online only)"));
	strbuf_addf(out, "%-18s %s\n", "subcores per core",
		    or_na(p->subcores_per_core, "n/a (not POWER8 bare metal)"));
	strbuf_addf(out, "%-18s", "kvm_hv parameters");
	if (!p->nkvm_hv)
		strbuf_addstr(out, " n/a (kvm_hv not loaded)");
	for (size_t i = 0; i < p->nkvm_hv; i++)
		strbuf_addf(out, " %s=%s", p->kvm_hv[i].name, p->kvm_hv[i].value);
	strbuf_addch(out, '\n');
	strbuf_addf(out, "%-18s %s: %s\n", "kvm guests", p->kvm_usable ? "yes" : "no", p->kvm_why);
	if (p->tracefs_denied)
		strbuf_addf(out, "%-18s %s: mounted, but only root may read it (kvm events "
			    "unknown; tracing needs root: run 'sudo topoadvisor probe')\n",
			    "tracefs", p->tracefs);
	else if (p->tracefs)
		strbuf_addf(out, "%-18s %s (kvm events: %s, kvm_hv events: %s)\n", "tracefs",
			    p->tracefs, p->events_kvm ? "yes" : "no",
			    p->events_kvm_hv ? "yes" : "no");
	else
		strbuf_addf(out, "%-18s not mounted (mount -t tracefs nodev /sys/kernel/tracing)\n",
			    "tracefs");
	strbuf_addf(out, "%-18s %s\n", "libvirt", l->lib_version[0] ? l->lib_version : "?");
	if (l->answers)
		strbuf_addf(out, "%-18s answers (%s %s)\n", uri, l->hv_type, l->hv_version);
	else
		strbuf_addf(out, "%-18s does not answer: %s\n", uri, l->error);
	probe_knobs_text(out, root);
}

static int cmd_probe_exec(const struct cmd_ctx *ctx, int argc, char **argv)
{
	const char *uri = probe_uri ? probe_uri : "qemu:///system";
	struct hostprobe p;
	hostprobe_read(&p);
	struct probe_libvirt l;
	probe_libvirt_read(uri, &l);
	struct strbuf out = STRBUF_INIT;
	if (ctx->json)
		probe_json(&out, &p, &l, uri, probe_root ? probe_root : "/");
	else
		probe_text(&out, &p, &l, uri, probe_root ? probe_root : "/");
	cmd_print(&out);
	strbuf_release(&out);
	hostprobe_release(&p);
	return EXIT_OK;
}

const struct cmd_entry cmd_probe_entry = {
	.no_db = 1,
	.name = "probe",
	.summary = "show what this host supports (topology, KVM, tracing, libvirt)",
	.args_usage = "",
	.options = probe_options,
	.min_args = 0,
	.max_args = 0,
	.exec = cmd_probe_exec,
};
