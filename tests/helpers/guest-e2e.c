/*
 * guest-e2e: the end-to-end driver behind tests/integration/guest-e2e.sh.
 *
 * For every SHAPE argument it boots the test guest image in that shape
 * (domain type auto: TCG here), checks the guest sees the shape, runs a
 * 3-second stress-ng through the agent and parses its bogo ops/s with
 * collectors/benchparse, reads per-vCPU run/wait time around it, verifies
 * the pinning libvirt applied, and destroys the guest, timing boot-to-agent and the whole cycle.  Then it
 * checks that guests which cannot boot fail with a clear error and leave no
 * domain: a wrong kernel path, and an initrd without init (timeout).
 *
 * usage: guest-e2e [--ppc64] [--template XML] IMAGE_DIR WORK_DIR SHAPE...
 *   SHAPE: SxCxT:POLICY, POLICY none|compact|spread|CPUSET/CPUSET/... (one
 *   host cpuset per vCPU, i.e. explicit pinning)
 *   --ppc64: the image is the pseries one (scripts/guest-image.sh --arch
 *   ppc64): no benchmarks in it, so the agent runs nproc instead of
 *   stress-ng, and the failing-boot checks are left to the x86_64 run.
 *   --template: the user domain template to build from instead of the
 *   built-in one (its kernel, initrd, console and <emulator> are used as
 *   they are: tests/integration/pseries-threads.sh runs a private QEMU so).
 * Exit 0 when every check passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/benchparse.h"
#include "collectors/guesttopo.h"
#include "collectors/vcpustats.h"
#include "experiments/agent.h"
#include "experiments/domain.h"
#include "experiments/guest.h"
#include "experiments/hostprobe.h"
#include "util/mono.h"

#define PREFIX DOMAIN_NAME_PREFIX "e2e-"
#define BOOT_TIMEOUT_MS 90000
#define BENCH_SECONDS 3

static int failures;
static enum guest_arch arch = ARCH_X86_64;
static const char *template_path;	/* NULL: the built-in template */

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			printf("FAIL: " __VA_ARGS__);                           \
			printf("\n");                                           \
			failures++;                                             \
		}                                                               \
	} while (0)


/* The pseries image has no benchmarks: the guest's own CPU count will do. */
static void nproc_check(struct guest *g, int vcpus, const char *arg)
{
	const char *argv[] = { "nproc", NULL };
	struct agent_result res;
	struct ta_err err = { 0 };
	if (agent_exec(g->dom, argv, 30, &res, &err) < 0) {
		CHECK(0, "%s: nproc: %s", arg, err.msg);
		return;
	}
	CHECK(res.exitcode == 0 && atoi(res.out) == vcpus, "%s: nproc says '%s' (exit %d), wanted %d",
	      arg, res.out, res.exitcode, vcpus);
	printf("   nproc: %d, %.2f s in the agent\n", atoi(res.out), res.seconds);
	agent_result_release(&res);
}

/* A 3-second stress-ng through the agent; its bogo ops/s must parse. */
static void stressng_run(struct guest *g, int vcpus, const char *arg)
{
	char nbuf[16], tbuf[16];
	snprintf(nbuf, sizeof(nbuf), "%d", vcpus);
	snprintf(tbuf, sizeof(tbuf), "%d", BENCH_SECONDS);
	const char *argv[] = { "stress-ng", "--cpu", nbuf, "-t", tbuf, "--metrics-brief", NULL };
	struct agent_result res;
	struct ta_err err = { 0 };
	if (agent_exec(g->dom, argv, BENCH_SECONDS + 30, &res, &err) < 0) {
		CHECK(0, "%s: stress-ng: %s", arg, err.msg);
		return;
	}
	/* The project's stress-ng parser (collectors/benchparse). */
	struct bench_metrics m = { 0 };
	double rate = -1;
	if (benchparse_run(BENCH_STRESS_NG, NULL, res.out, res.out_len, res.err, res.err_len, &m,
			   &err) == 0) {
		const struct bench_metric *bm = bench_metrics_find(&m, "stress-ng.cpu.bogo_ops_per_s");
		rate = bm ? bm->value : -1;
	}
	CHECK(res.exitcode == 0 && rate > 0, "%s: stress-ng exit %d, rate %.2f (%s):\n%s%s", arg,
	      res.exitcode, rate, err.msg, res.out, res.err);
	printf("   stress-ng cpu: %.2f bogo ops/s (real time), %.1f s in the agent\n", rate,
	       res.seconds);
	bench_metrics_release(&m);
	agent_result_release(&res);
}

/*
 * A command that outlives its timeout is killed in the guest: agent_exec
 * returns after about the timeout with timed_out set, and no such process
 * is left running.
 */
static void agent_timeout_check(struct guest *g, const char *arg)
{
	const char *argv[] = { "sleep", "37", NULL };
	struct agent_result res;
	struct ta_err err = { 0 };
	if (agent_exec(g->dom, argv, 1, &res, &err) < 0) {
		CHECK(0, "%s: sleep: %s", arg, err.msg);
		return;
	}
	CHECK(res.timed_out && res.exitcode == -1, "%s: sleep 37 with a 1 s timeout: timed_out %d "
	      "exitcode %d", arg, res.timed_out, res.exitcode);
	CHECK(res.seconds < 10, "%s: the timed-out command took %.1f s to return", arg, res.seconds);
	printf("   agent timeout: sleep 37 killed after %.1f s (signal %d)\n", res.seconds,
	       res.signal);
	agent_result_release(&res);
	const char *ps_argv[] = { "sh", "-c", "ps | grep -c '[s]leep 37'", NULL };
	if (agent_exec(g->dom, ps_argv, 10, &res, &err) < 0) {
		CHECK(0, "%s: ps: %s", arg, err.msg);
		return;
	}
	CHECK(atoi(res.out) == 0, "%s: 'sleep 37' still runs in the guest after the timeout", arg);
	agent_result_release(&res);
}

struct shape_arg {
	int s, c, t;
	enum pin_policy pin;
	char *sets[64];
	size_t nsets;
};

static int shape_arg_parse(const char *arg, struct shape_arg *a)
{
	memset(a, 0, sizeof(*a));
	char pol[256];
	if (sscanf(arg, "%dx%dx%d:%255s", &a->s, &a->c, &a->t, pol) != 4)
		return -1;
	if (!strcmp(pol, "none"))
		a->pin = PIN_NONE;
	else if (!strcmp(pol, "compact"))
		a->pin = PIN_COMPACT;
	else if (!strcmp(pol, "spread"))
		a->pin = PIN_SPREAD;
	else {
		a->pin = PIN_EXPLICIT;
		for (char *tok = strtok(pol, "/"); tok && a->nsets < 64; tok = strtok(NULL, "/"))
			a->sets[a->nsets++] = strdup(tok);
	}
	return 0;
}

/* Runs one shape through the whole cycle; counts failures. */
static void shape_run(virConnectPtr conn, const char *image, const char *work,
		      const struct host_cpu *hc, size_t nhc, const struct shape_arg *a,
		      const char *arg)
{
	double t0 = mono_now_s();
	struct ta_err err = { 0 };
	char kernel[512], initrd[512], console[512];
	snprintf(kernel, sizeof(kernel), "%s/vmlinuz", image);
	snprintf(initrd, sizeof(initrd), "%s/initrd", image);
	char *name = guest_name_new(PREFIX);
	snprintf(console, sizeof(console), "%s/%s.console", work, name);
	const char *why;
	struct domain_request r = {
		.name = name,
		.arch = arch,
		.template_path = template_path,
		.type = guest_type_resolve(DOMAIN_AUTO, arch, &why),
		.memory_mib = arch == ARCH_PPC64 ? 1024 : 384,
		.vcpus = a->s * a->c * a->t,
		.sockets = a->s, .cores = a->c, .threads = a->t,
		.pin = a->pin,
		.host_cpus = hc, .nhost_cpus = nhc,
		.vcpu_cpus = (const char *const *)a->sets, .nvcpu_cpus = a->nsets,
		.emulator_cpus = a->pin == PIN_EXPLICIT ? "0" : NULL,
		.kernel = kernel, .initrd = initrd,
		.console_log = console,
		.experiment_id = 1, .run_id = 1,
	};
	printf("== %s: domain type %s (%s)\n", arg, r.type == DOMAIN_KVM ? "kvm" : "qemu", why);
	struct strbuf xml = STRBUF_INIT;
	struct domain_pins want;
	if (domain_xml_build(&r, &xml, &err) < 0 || domain_pins_compute(&r, &want, &err) < 0) {
		CHECK(0, "%s: %s", arg, err.msg);
		free(name);
		strbuf_release(&xml);
		return;
	}
	struct guest *g = guest_boot(conn, strbuf_str(&xml), BOOT_TIMEOUT_MS, console, &err);
	strbuf_release(&xml);
	if (!g) {
		CHECK(0, "%s: %s", arg, err.msg);
		domain_pins_release(&want);
		free(name);
		return;
	}

	/* The shape, as the guest kernel sees it. */
	const char *topo_argv[] = { "/bin/sh", "-c", GUESTTOPO_SCRIPT, NULL };
	struct agent_result res;
	struct guesttopo topo;
	if (agent_exec(g->dom, topo_argv, 30, &res, &err) < 0) {
		CHECK(0, "%s: topology: %s", arg, err.msg);
	} else {
		CHECK(res.exitcode == 0, "%s: topology script exit %d: %s", arg, res.exitcode,
		      res.err);
		if (guesttopo_parse(res.out, &topo, &err) < 0) {
			CHECK(0, "%s: %s", arg, err.msg);
		} else {
			struct strbuf js = STRBUF_INIT;
			guesttopo_json(&topo, &js);
			printf("   seen: %s\n", strbuf_str(&js));
			strbuf_release(&js);
			CHECK(guesttopo_compare(&topo, a->s, 1, a->c, a->t, &err) == 0, "%s: %s",
			      arg, err.msg);
			guesttopo_release(&topo);
		}
		agent_result_release(&res);
	}

	/* Pinning as libvirt applied it equals what the policy asked for. */
	char **vp, *ep;
	size_t nvp;
	if (guest_pins_read(g, &vp, &nvp, &ep, &err) < 0) {
		CHECK(0, "%s: %s", arg, err.msg);
	} else {
		CHECK(nvp == (size_t)r.vcpus, "%s: %zu vCPU pins for %d vCPUs", arg, nvp, r.vcpus);
		for (size_t i = 0; i < nvp && i < want.nvcpu; i++)
			CHECK(!strcmp(vp[i], want.vcpu[i]), "%s: vCPU %zu pinned to %s, wanted %s",
			      arg, i, vp[i], want.vcpu[i]);
		if (want.emulator)
			CHECK(!strcmp(ep, want.emulator), "%s: emulator pinned to %s, wanted %s",
			      arg, ep, want.emulator);
		printf("   pins:");
		for (size_t i = 0; i < nvp; i++)
			printf(" vcpu%zu=%s", i, vp[i]);
		printf(" emulator=%s\n", ep);
		guest_pins_free(vp, nvp, ep);
	}

	/* A short benchmark (x86_64) or nproc (ppc64), with per-vCPU run and
	 * wait time around it. */
	struct vcpustats before, after, d;
	int have_before = vcpustats_read(g->dom, &before, &err) == 0;
	CHECK(have_before, "%s: %s", arg, err.msg);
	if (arch == ARCH_PPC64)
		nproc_check(g, r.vcpus, arg);
	else
		stressng_run(g, r.vcpus, arg);
	static bool timeout_checked;
	if (!timeout_checked) {
		agent_timeout_check(g, arg);
		timeout_checked = true;
	}
	if (have_before && vcpustats_read(g->dom, &after, &err) == 0) {
		if (vcpustats_diff(&before, &after, &d, &err) == 0) {
			struct strbuf js = STRBUF_INIT;
			vcpustats_json(&d, &js);
			printf("   vcpu window: %s\n", strbuf_str(&js));
			strbuf_release(&js);
			/* stress-ng keeps every vCPU busy; nproc (ppc64) barely one. */
			uint64_t total = 0;
			for (size_t i = 0; i < d.n; i++) {
				total += d.time_ns[i];
				CHECK(arch == ARCH_PPC64 || d.time_ns[i] > 0,
				      "%s: vCPU %zu did not run in the window", arg, i);
			}
			CHECK(total > 0, "%s: no vCPU ran in the window", arg);
			vcpustats_release(&d);
		}
		vcpustats_release(&after);
	}
	if (have_before)
		vcpustats_release(&before);

	double boot = g->boot_seconds;
	CHECK(guest_destroy(g, &err) == 0, "%s: %s", arg, err.msg);
	virDomainPtr left = virDomainLookupByName(conn, name);
	CHECK(!left, "%s: domain %s still exists after destroy", arg, name);
	if (left)
		virDomainFree(left);
	printf("   boot-to-agent %.2f s, whole cycle %.2f s\n", boot, mono_now_s() - t0);
	unlink(console);
	domain_pins_release(&want);
	free(name);
}

/* A guest that cannot boot must fail with a clear error and leave nothing. */
static void boot_fail(virConnectPtr conn, const char *image, const char *work,
		      const char *what, const char *kernel, const char *initrd,
		      const char *cmdline, int timeout_ms, const char *needle)
{
	struct ta_err err = { 0 };
	char *name = guest_name_new(PREFIX);
	const char *why;
	struct domain_request r = {
		.name = name, .arch = ARCH_X86_64,
		.type = guest_type_resolve(DOMAIN_AUTO, ARCH_X86_64, &why),
		.memory_mib = 256, .vcpus = 1, .sockets = 1, .cores = 1, .threads = 1,
		.kernel = kernel, .initrd = initrd, .cmdline = cmdline,
		.experiment_id = 1, .run_id = 2,
	};
	struct strbuf xml = STRBUF_INIT;
	if (domain_xml_build(&r, &xml, &err) < 0) {
		CHECK(0, "%s: %s", what, err.msg);
		free(name);
		return;
	}
	double t0 = mono_now_s();
	struct guest *g = guest_boot(conn, strbuf_str(&xml), timeout_ms, NULL, &err);
	double took = mono_now_s() - t0;
	strbuf_release(&xml);
	CHECK(!g, "%s: booted although it should not", what);
	if (g)
		guest_destroy(g, &err);
	else
		printf("== %s: failed after %.1f s as expected: %s\n", what, took, err.msg);
	CHECK(strstr(err.msg, needle), "%s: error lacks '%s'", what, needle);
	virDomainPtr left = virDomainLookupByName(conn, name);
	CHECK(!left, "%s: domain %s left behind", what, name);
	if (left)
		virDomainFree(left);
	free(name);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--ppc64")) {
		arch = ARCH_PPC64;
		argv++;
		argc--;
	}
	if (argc > 2 && !strcmp(argv[1], "--template")) {
		template_path = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: guest-e2e [--ppc64] [--template XML] IMAGE_DIR WORK_DIR SHAPE...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *image = argv[1], *work = argv[2];
	struct ta_err err = { 0 };
	virConnectPtr conn = guest_connect(NULL, &err);
	if (!conn) {
		printf("FAIL: %s\n", err.msg);
		return 1;
	}
	int n;
	if (guest_leftovers_destroy(conn, PREFIX, &n, NULL, &err) < 0)
		CHECK(0, "%s", err.msg);
	else if (n)
		printf("destroyed %d leftover e2e domain(s)\n", n);
	struct host_cpu *hc;
	size_t nhc;
	if (hostprobe_cpus_read(&hc, &nhc, &err) < 0) {
		printf("FAIL: %s\n", err.msg);
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		struct shape_arg a;
		if (shape_arg_parse(argv[i], &a) < 0) {
			CHECK(0, "bad shape argument '%s'", argv[i]);
			continue;
		}
		shape_run(conn, image, work, hc, nhc, &a, argv[i]);
		for (size_t k = 0; k < a.nsets; k++)
			free(a.sets[k]);
	}

	if (arch == ARCH_PPC64 || template_path)
		goto done;
	char kernel[512], initrd[512], empty[512];
	snprintf(kernel, sizeof(kernel), "%s/vmlinuz", image);
	snprintf(initrd, sizeof(initrd), "%s/initrd", image);
	boot_fail(conn, image, work, "wrong kernel path", "/nonexistent/vmlinuz", initrd, NULL,
		  20000, "/nonexistent/vmlinuz");
	/* An initrd without /init: the kernel panics and, with panic=0, hangs,
	 * so only the boot timeout can end it. */
	snprintf(empty, sizeof(empty), "%s/empty.initrd", work);
	FILE *f = fopen(empty, "w");
	if (f)
		fclose(f);
	boot_fail(conn, image, work, "no init", kernel, empty, "console=ttyS0 panic=0", 6000,
		  "did not boot");
	unlink(empty);
done:
	free(hc);
	virConnectClose(conn);
	printf("%s (%d failure(s))\n", failures ? "FAILED" : "OK", failures);
	return failures ? 1 : 0;
}
