/*
 * Domain XML builder: many shapes and pinnings, x86_64 and ppc64, built-in
 * and user templates, against expected XML in tests/fixtures/domain/; and
 * the requests that must be refused.
 *
 * TA_UPDATE_FIXTURES=1 rewrites the expected files (review the diff!).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <libxml/relaxng.h>

#include "experiments/domain.h"

/* libvirt's own RelaxNG schema for domains (libvirt-daemon ships it). */
#define LIBVIRT_DOMAIN_RNG "/usr/share/libvirt/schemas/domain.rng"
static xmlRelaxNGPtr domain_rng;

/*
 * A host of 2 packages x 2 cores x 2 threads, numbered the way x86 Linux
 * does: CPUs 0-3 are the first threads of the four cores, 4-7 their siblings.
 */
static const struct host_cpu host8[] = {
	{ 0, 0, 0 }, { 1, 0, 1 }, { 2, 1, 0 }, { 3, 1, 1 },
	{ 4, 0, 0 }, { 5, 0, 1 }, { 6, 1, 0 }, { 7, 1, 1 },
};

static char *fixture_path(const char *name)
{
	const char *top = getenv("TA_TOP");
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/tests/fixtures/domain/%s", top && *top ? top : ".", name);
	return strbuf_detach(&sb);
}

static struct domain_request base(enum guest_arch arch, enum domain_type type, int s, int d,
				  int c, int t)
{
	struct domain_request r = {
		.name = "topoadvisor-test-1",
		.arch = arch,
		.type = type,
		.memory_mib = 512,
		.vcpus = s * (d ? d : 1) * c * t,
		.sockets = s, .dies = d, .cores = c, .threads = t,
		.pin = PIN_NONE,
		.host_cpus = host8,
		.nhost_cpus = 8,
		.kernel = "/var/cache/topoadvisor/guest-x86_64/vmlinuz",
		.initrd = "/var/cache/topoadvisor/guest-x86_64/initrd",
		.experiment_id = 7,
		.run_id = 42,
		.owner_pid = 4242,
		.owner_start = 99,
	};
	return r;
}

static void expect_fixture(const struct domain_request *r, const char *name)
{
	struct strbuf out = STRBUF_INIT;
	struct ta_err err = { 0 };
	int rc = domain_xml_build(r, &out, &err);
	if (rc < 0)
		fail_msg("%s: %s", name, err.msg);
	if (domain_rng) {
		xmlDocPtr doc = xmlReadMemory(out.buf, (int)out.len, name, NULL, 0);
		assert_non_null(doc);
		xmlRelaxNGValidCtxtPtr v = xmlRelaxNGNewValidCtxt(domain_rng);
		if (xmlRelaxNGValidateDoc(v, doc) != 0)
			fail_msg("%s: not valid per %s:\n%s", name, LIBVIRT_DOMAIN_RNG, out.buf);
		xmlRelaxNGFreeValidCtxt(v);
		xmlFreeDoc(doc);
	}
	char *path = fixture_path(name);
	if (getenv("TA_UPDATE_FIXTURES")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(strbuf_str(&out), f);
		fclose(f);
	}
	struct strbuf want = STRBUF_INIT;
	if (strbuf_read_file(&want, path) < 0)
		fail_msg("cannot read %s", path);
	if (strcmp(strbuf_str(&want), strbuf_str(&out)))
		fail_msg("%s differs; got:\n%s", name, strbuf_str(&out));
	free(path);
	strbuf_release(&want);
	strbuf_release(&out);
}

static void expect_error(const struct domain_request *r, const char *needle)
{
	struct strbuf out = STRBUF_INIT;
	struct ta_err err = { 0 };
	assert_int_equal(domain_xml_build(r, &out, &err), -1);
	assert_int_equal(err.code, EXIT_BAD_INPUT);
	if (!strstr(err.msg, needle))
		fail_msg("error '%s' lacks '%s'", err.msg, needle);
	assert_int_equal(out.len, 0);
	strbuf_release(&out);
}

static void test_x86_shapes(void **state)
{
	struct domain_request r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 2, 1);
	expect_fixture(&r, "x86-tcg-1x2x1-none.xml");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 1, 2);
	r.pin = PIN_COMPACT;
	r.console_log = "/tmp/console.log";
	expect_fixture(&r, "x86-tcg-1x1x2-compact.xml");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 2, 0, 1, 1);
	r.pin = PIN_SPREAD;
	expect_fixture(&r, "x86-tcg-2x1x1-spread.xml");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 2, 2);
	r.pin = PIN_SPREAD;
	r.cmdline = "console=ttyS0";
	expect_fixture(&r, "x86-tcg-1x2x2-spread.xml");

	/* Every host CPU taken: the emulator shares the vCPUs' CPUs. */
	r = base(ARCH_X86_64, DOMAIN_KVM, 1, 2, 2, 2);
	r.pin = PIN_COMPACT;
	expect_fixture(&r, "x86-kvm-1x2x2x2-compact.xml");

	static const char *const sets[] = { "3", "1,1-1", "7,4-6" };
	r = base(ARCH_X86_64, DOMAIN_KVM, 1, 0, 3, 1);
	r.pin = PIN_EXPLICIT;
	r.vcpu_cpus = sets;
	r.nvcpu_cpus = 3;
	r.emulator_cpus = "0,2";
	expect_fixture(&r, "x86-kvm-1x3x1-explicit.xml");
}

static void test_ppc64_shapes(void **state)
{
	struct domain_request r = base(ARCH_PPC64, DOMAIN_QEMU, 1, 0, 1, 4);
	expect_fixture(&r, "ppc64-tcg-1x1x4-none.xml");

	r = base(ARCH_PPC64, DOMAIN_KVM, 1, 0, 2, 2);
	r.pin = PIN_COMPACT;
	expect_fixture(&r, "ppc64-kvm-1x2x2-compact.xml");

	r = base(ARCH_PPC64, DOMAIN_QEMU, 2, 0, 1, 8);
	r.memory_mib = 0;	/* keep the template's */
	expect_fixture(&r, "ppc64-tcg-2x1x8-none.xml");
}

static void test_user_template(void **state)
{
	struct domain_request r = base(ARCH_X86_64, DOMAIN_KVM, 1, 0, 2, 2);
	char *path = fixture_path("user-template.xml");
	r.template_path = path;
	r.kernel = r.initrd = NULL;
	r.pin = PIN_SPREAD;
	r.memory_mib = 0;
	expect_fixture(&r, "user-template-kvm-1x2x2-spread.xml");

	/* Pins of the template go even when the new policy is none. */
	r.pin = PIN_NONE;
	r.type = DOMAIN_QEMU;
	r.memory_mib = 4096;
	expect_fixture(&r, "user-template-tcg-1x2x2-none.xml");
	free(path);
}

static void test_invalid(void **state)
{
	struct domain_request r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 2, 1);
	r.vcpus = 3;
	expect_error(&r, "must be equal");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 0, 1);
	expect_error(&r, ">= 1");

	r = base(ARCH_PPC64, DOMAIN_QEMU, 1, 0, 1, 3);
	expect_error(&r, "1, 2, 4 or 8");

	r = base(ARCH_PPC64, DOMAIN_QEMU, 1, 0, 1, 16);
	expect_error(&r, "1, 2, 4 or 8");

	r = base(ARCH_PPC64, DOMAIN_QEMU, 1, 2, 1, 2);
	expect_error(&r, "no dies");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 9, 1);
	r.pin = PIN_COMPACT;
	expect_error(&r, "needs 9 host CPUs");

	static const char *const two[] = { "0", "1" };
	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 3, 1);
	r.pin = PIN_EXPLICIT;
	r.vcpu_cpus = two;
	r.nvcpu_cpus = 2;
	expect_error(&r, "one per vCPU");

	static const char *const bad[] = { "0", "1-" };
	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 2, 1);
	r.pin = PIN_EXPLICIT;
	r.vcpu_cpus = bad;
	r.nvcpu_cpus = 2;
	expect_error(&r, "vCPU 1: cpuset '1-'");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 2, 1);
	r.name = "bad name";
	expect_error(&r, "letters, digits");

	r = base(ARCH_X86_64, DOMAIN_AUTO, 1, 0, 2, 1);
	expect_error(&r, "resolve 'auto'");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 2, 1);
	r.kernel = "vmlinuz";
	expect_error(&r, "absolute kernel");

	r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, 2, 1);
	char *path = fixture_path("not-a-domain.xml");
	r.template_path = path;
	expect_error(&r, "not <domain>");
	free(path);

	r.template_path = "/nonexistent/template.xml";
	expect_error(&r, "/nonexistent/template.xml");
}

static void pins_expect(enum pin_policy p, int vcpus, const char *want_vcpus,
			const char *want_emulator)
{
	struct domain_request r = base(ARCH_X86_64, DOMAIN_QEMU, 1, 0, vcpus, 1);
	r.pin = p;
	struct domain_pins pins;
	struct ta_err err = { 0 };
	assert_int_equal(domain_pins_compute(&r, &pins, &err), 0);
	struct strbuf got = STRBUF_INIT;
	for (size_t i = 0; i < pins.nvcpu; i++)
		strbuf_addf(&got, "%s%s", i ? " " : "", pins.vcpu[i]);
	assert_string_equal(strbuf_str(&got), want_vcpus);
	assert_string_equal(pins.emulator, want_emulator);
	strbuf_release(&got);
	domain_pins_release(&pins);
}

/* The policies' definitions from domain.h, on the 2x2x2 host. */
static void test_pin_policies(void **state)
{
	/* compact: both threads of core (0,0), then core (0,1), ... */
	pins_expect(PIN_COMPACT, 2, "0 4", "1-3,5-7");
	pins_expect(PIN_COMPACT, 5, "0 4 1 5 2", "3,6-7");
	/* spread: one per core first (4 cores), then the siblings. */
	pins_expect(PIN_SPREAD, 2, "0 1", "2-7");
	pins_expect(PIN_SPREAD, 5, "0 1 2 3 4", "5-7");
	pins_expect(PIN_SPREAD, 8, "0 1 2 3 4 5 6 7", "0-7");
}

int main(void)
{
	if (access(LIBVIRT_DOMAIN_RNG, R_OK) == 0) {
		xmlRelaxNGParserCtxtPtr pc = xmlRelaxNGNewParserCtxt(LIBVIRT_DOMAIN_RNG);
		domain_rng = xmlRelaxNGParse(pc);
		xmlRelaxNGFreeParserCtxt(pc);
	} else {
		printf("note: %s missing; XML checked against fixtures only\n",
		       LIBVIRT_DOMAIN_RNG);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_shapes),
		cmocka_unit_test(test_ppc64_shapes),
		cmocka_unit_test(test_user_template),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_pin_policies),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (domain_rng)
		xmlRelaxNGFree(domain_rng);
	return rc;
}
