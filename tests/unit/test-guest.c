/*
 * Guest lifecycle against libvirt's in-process test:///default driver:
 * leftover cleanup touches only our domains whose owner process is gone, a guest whose agent never
 * answers times out and is destroyed, pinning reads back through the API.
 * (The test driver has no vCPU stats: the e2e test covers vcpustats_read.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "experiments/domain.h"
#include "experiments/guest.h"

#define PREFIX DOMAIN_NAME_PREFIX "ut-"

static virConnectPtr conn;

static int setup(void **state)
{
	struct ta_err err = { 0 };
	conn = guest_connect("test:///default", &err);
	if (!conn)
		fprintf(stderr, "%s\n", err.msg);
	return conn ? 0 : -1;
}

static int teardown(void **state)
{
	virConnectClose(conn);
	return 0;
}

/* A pid that no process has right now (a child we started and reaped). */
static long dead_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	return p;
}

/*
 * Our XML for a 2-vCPU guest with explicit pins 0 and 1-2, owned by
 * owner_pid (0: this process) started at owner_start.
 */
static char *our_xml_owned(const char *name, long owner_pid, unsigned long long owner_start)
{
	static const char *const sets[] = { "0", "1-2" };
	struct domain_request r = {
		.name = name, .arch = ARCH_X86_64, .type = DOMAIN_QEMU, .memory_mib = 128,
		.vcpus = 2, .sockets = 1, .cores = 1, .threads = 2,
		.pin = PIN_EXPLICIT, .vcpu_cpus = sets, .nvcpu_cpus = 2, .emulator_cpus = "3",
		.kernel = "/boot/vmlinuz", .initrd = "/boot/initrd",
		.experiment_id = 3, .run_id = 9,
		.owner_pid = owner_pid, .owner_start = owner_start,
	};
	struct strbuf sb = STRBUF_INIT;
	struct ta_err err = { 0 };
	if (domain_xml_build(&r, &sb, &err) < 0)
		fail_msg("%s", err.msg);
	return strbuf_detach(&sb);
}

static char *our_xml(const char *name)
{
	return our_xml_owned(name, 0, 0);
}

static virDomainPtr create(const char *xml)
{
	virDomainPtr d = virDomainCreateXML(conn, xml, 0);
	if (!d)
		fail_msg("create: %s", virGetLastErrorMessage());
	return d;
}

static bool exists(const char *name)
{
	virDomainPtr d = virDomainLookupByName(conn, name);
	if (d)
		virDomainFree(d);
	return d != NULL;
}

static void test_leftovers(void **state)
{
	char *ours = our_xml_owned(PREFIX "crashed", dead_pid(), 12345);
	/* Our pid, but another start time: the pid was reused, owner gone. */
	char *reused = our_xml_owned(PREFIX "pid-reused", getpid(), 1);
	/* A live run's guest (this process) is not a leftover. */
	char *live = our_xml(PREFIX "live");
	char *other_with_md = our_xml_owned("someone-elses", dead_pid(), 1);
	const char *plain = "<domain type='test'><name>" PREFIX "no-metadata</name>"
			    "<memory>131072</memory><vcpu>1</vcpu>"
			    "<os><type>hvm</type></os></domain>";
	virDomainFree(create(ours));
	virDomainFree(create(reused));
	virDomainFree(create(live));
	virDomainFree(create(other_with_md));
	virDomainFree(create(plain));

	struct ta_err err = { 0 };
	int n = -1;
	struct strbuf names = STRBUF_INIT;
	assert_int_equal(guest_leftovers_destroy(conn, PREFIX, &n, &names, &err), 0);
	assert_int_equal(n, 2);
	/* resume says which guests it destroyed, by name. */
	assert_non_null(strstr(strbuf_str(&names), PREFIX "crashed"));
	assert_non_null(strstr(strbuf_str(&names), PREFIX "pid-reused"));
	strbuf_release(&names);
	assert_false(exists(PREFIX "crashed"));
	assert_false(exists(PREFIX "pid-reused"));
	assert_true(exists(PREFIX "live"));
	/* Prefix without metadata, metadata without prefix, the driver's own
	 * "test" domain: all untouched. */
	assert_true(exists(PREFIX "no-metadata"));
	assert_true(exists("someone-elses"));
	assert_true(exists("test"));

	/* Idempotent. */
	assert_int_equal(guest_leftovers_destroy(conn, PREFIX, &n, NULL, &err), 0);
	assert_int_equal(n, 0);

	for (const char *const *nm = (const char *const[]){ PREFIX "no-metadata", PREFIX "live",
							     "someone-elses", NULL }; *nm; nm++) {
		virDomainPtr d = virDomainLookupByName(conn, *nm);
		virDomainDestroy(d);
		virDomainFree(d);
	}
	free(ours);
	free(reused);
	free(live);
	free(other_with_md);
}

static void test_boot_timeout_leaves_nothing(void **state)
{
	char *name = guest_name_new(PREFIX);
	char *xml = our_xml(name);
	struct ta_err err = { 0 };
	/* The test driver has no guest agent: the wait must time out. */
	struct guest *g = guest_boot(conn, xml, 300, "/tmp/console.log", &err);
	assert_null(g);
	assert_non_null(strstr(err.msg, "did not boot"));
	assert_non_null(strstr(err.msg, name));
	assert_non_null(strstr(err.msg, "/tmp/console.log"));
	assert_false(exists(name));
	free(xml);
	free(name);
}

static void test_boot_pins_destroy(void **state)
{
	char *name = guest_name_new(PREFIX);
	char *xml = our_xml(name);
	struct ta_err err = { 0 };
	struct guest *g = guest_boot(conn, xml, 0, NULL, &err);
	if (!g)
		fail_msg("%s", err.msg);
	assert_string_equal(g->name, name);
	assert_true(exists(name));

	char **v, *emu;
	size_t n;
	assert_int_equal(guest_pins_read(g, &v, &n, &emu, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0], "0");
	assert_string_equal(v[1], "1-2");
	assert_string_equal(emu, "3");
	guest_pins_free(v, n, emu);

	assert_int_equal(guest_destroy(g, &err), 0);
	assert_false(exists(name));

	/* A bad XML is refused with libvirt's reason, nothing created. */
	assert_null(guest_boot(conn, "<domain type='test'><name>x</name></domain>", 0, NULL,
			       &err));
	assert_non_null(strstr(err.msg, "starting the guest failed"));
	free(xml);
	free(name);
}

static void test_names_and_type(void **state)
{
	char *a = guest_name_new(PREFIX), *b = guest_name_new(PREFIX);
	assert_string_not_equal(a, b);
	assert_memory_equal(a, PREFIX, strlen(PREFIX));
	free(a);
	free(b);

	/* The owner identity the leftover check relies on. */
	assert_true(domain_proc_start(getpid()) > 0);
	assert_int_equal(domain_proc_start(dead_pid()), 0);

	const char *why;
	assert_int_equal(guest_type_resolve(DOMAIN_QEMU, ARCH_X86_64, &why), DOMAIN_QEMU);
	assert_int_equal(guest_type_resolve(DOMAIN_KVM, ARCH_X86_64, &why), DOMAIN_KVM);
#if defined(__x86_64__)
	/* KVM never runs a foreign architecture: auto must fall back to TCG. */
	assert_int_equal(guest_type_resolve(DOMAIN_AUTO, ARCH_PPC64, &why), DOMAIN_QEMU);
	assert_non_null(strstr(why, "TCG"));
#endif
	/* Whatever this host answers, it says why, and the second call agrees. */
	enum domain_type t1 = guest_type_resolve(DOMAIN_AUTO, ARCH_HOST, &why);
	assert_true(why[0] != 0);
	assert_int_equal(guest_type_resolve(DOMAIN_AUTO, ARCH_HOST, &why), t1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_boot_timeout_leaves_nothing),
		cmocka_unit_test(test_boot_pins_destroy),
		cmocka_unit_test(test_names_and_type),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
