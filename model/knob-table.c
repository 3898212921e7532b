/* knob-table: the host knob table and its pure helpers; see knob-table.h. */
#include "knob-table.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../util/number.h"

#define CPU_DIR "sys/devices/system/cpu"
#define KVM_HV_DIR "sys/module/kvm_hv/parameters/"
#define KVM_HV_WHY "needs the kvm_hv module loaded on a POWER host (modprobe kvm_hv)"

static const char *const smt_values[] = { "off", "on", "2", "4", "8", NULL };
static const char *const subcores_values[] = { "1", "2", "4", NULL };
static const char *const yn_values[] = { "Y", "N", NULL };
static const char *const zero_one_values[] = { "0", "1", NULL };
static const char *const thp_values[] = { "always", "madvise", "never", NULL };
static const char *const dynamic_mt_values[] = { "0", "2", "4", "6", NULL };
static const char *const target_smt_values[] = { "0", "1", "2", "4", "8", NULL };

/* One thread per core is SMT off, as with ppc64_cpu --smt=1. */
static const struct knob_spelling smt_spellings[] = {
	{ "1", "off" }, { "true", "on" }, { "yes", "on" }, { "false", "off" }, { "no", "off" },
	{ NULL, NULL }
};
static const struct knob_spelling yn_spellings[] = {
	{ "yes", "Y" }, { "1", "Y" }, { "true", "Y" }, { "on", "Y" },
	{ "no", "N" }, { "0", "N" }, { "false", "N" }, { "off", "N" }, { NULL, NULL }
};
static const struct knob_spelling zero_one_spellings[] = {
	{ "on", "1" }, { "yes", "1" }, { "true", "1" },
	{ "off", "0" }, { "no", "0" }, { "false", "0" }, { NULL, NULL }
};

/* In apply order: SMT before split-core, generic knobs, kvm_hv last. */
static const struct knob knob_table[] = {
	{ .name = "smt", .kind = KNOB_SMT, .values = smt_values, .spellings = smt_spellings,
	  .numeric = true, .rel_path = CPU_DIR "/smt/control", .order = 10,
	  .why_missing = "needs a CPU with SMT (hardware threads)",
	  .db_column = "smt", .db_type = KNOB_COLUMN_TEXT,
	  .command = KNOB_COMMAND_PPC64_CPU, .command_option = "--smt" },
	{ .name = "subcores_per_core", .kind = KNOB_SUBCORES, .values = subcores_values,
	  .numeric = true, .rel_path = CPU_DIR "/subcores_per_core", .order = 20,
	  .needs_no_guests = true, .why_missing = "split-core needs a bare-metal POWER8 host",
	  .db_column = "subcores_per_core", .db_type = KNOB_COLUMN_INTEGER,
	  .kernel_default = "1",
	  .command = KNOB_COMMAND_PPC64_CPU, .command_option = "--subcores-per-core" },
	{ .name = "thp", .kind = KNOB_BRACKETED, .values = thp_values,
	  .rel_path = "sys/kernel/mm/transparent_hugepage/enabled", .order = 30,
	  .why_missing = "needs a kernel with transparent hugepages" },
	{ .name = "ksm", .kind = KNOB_INT, .values = zero_one_values,
	  .spellings = zero_one_spellings, .numeric = true,
	  .rel_path = "sys/kernel/mm/ksm/run", .order = 30,
	  .why_missing = "needs a kernel with KSM (CONFIG_KSM)" },
	{ .name = "numa_balancing", .kind = KNOB_INT, .values = zero_one_values,
	  .spellings = zero_one_spellings, .numeric = true,
	  .rel_path = "proc/sys/kernel/numa_balancing", .order = 30,
	  .why_missing = "needs a NUMA kernel with automatic NUMA balancing" },
	{ .name = "sched_autogroup", .kind = KNOB_INT, .values = zero_one_values,
	  .spellings = zero_one_spellings, .numeric = true,
	  .rel_path = "proc/sys/kernel/sched_autogroup_enabled", .order = 30,
	  .why_missing = "needs a kernel with CONFIG_SCHED_AUTOGROUP" },
	{ .name = "kvm_hv.dynamic_mt_modes", .kind = KNOB_INT, .values = dynamic_mt_values,
	  .numeric = true, .rel_path = KVM_HV_DIR "dynamic_mt_modes", .order = 40,
	  .why_missing = KVM_HV_WHY,
	  .db_column = "dynamic_mt_modes", .db_type = KNOB_COLUMN_INTEGER,
	  .kernel_default = "6" },
	{ .name = "kvm_hv.target_smt_mode", .kind = KNOB_INT, .values = target_smt_values,
	  .numeric = true, .rel_path = KVM_HV_DIR "target_smt_mode", .order = 40,
	  .why_missing = KVM_HV_WHY,
	  .db_column = "target_smt_mode", .db_type = KNOB_COLUMN_INTEGER,
	  .kernel_default = "0" },
	/* book3s_hv.c: indep_threads_mode defaults to true. */
	{ .name = "kvm_hv.indep_threads_mode", .kind = KNOB_BOOL_YN, .values = yn_values,
	  .spellings = yn_spellings, .rel_path = KVM_HV_DIR "indep_threads_mode",
	  .order = 40, .why_missing = "needs kvm_hv on POWER9 with a kernel of about 4.17 to 5.13",
	  .db_column = "indep_threads_mode", .db_type = KNOB_COLUMN_TEXT,
	  .kernel_default = "Y" },
	{ .name = "kvm_hv.one_vm_per_core", .kind = KNOB_BOOL_YN, .values = yn_values,
	  .spellings = yn_spellings, .rel_path = KVM_HV_DIR "one_vm_per_core", .order = 40,
	  .why_missing = KVM_HV_WHY,
	  .db_column = "one_vm_per_core", .db_type = KNOB_COLUMN_TEXT,
	  .kernel_default = "N" },
};

#define NKNOBS (sizeof(knob_table) / sizeof(knob_table[0]))

size_t knob_count(void)
{
	return NKNOBS;
}

const struct knob *knob_at(size_t i)
{
	assert(i < NKNOBS);
	return &knob_table[i];
}

const struct knob *knob_find(const char *name)
{
	for (size_t i = 0; i < NKNOBS; i++)
		if (!strcmp(knob_table[i].name, name))
			return &knob_table[i];
	return NULL;
}

const struct knob *knob_lookup(const char *name, struct ta_err *err)
{
	const struct knob *k = knob_find(name);
	if (k)
		return k;
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < NKNOBS; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", knob_table[i].name);
	err_set(err, EXIT_BAD_INPUT, "unknown host knob '%s'; known knobs: %s", name,
		strbuf_str(&sb));
	strbuf_release(&sb);
	return NULL;
}

const struct knob *knob_of_kind(enum knob_kind kind)
{
	for (size_t i = 0; i < NKNOBS; i++)
		if (knob_table[i].kind == kind)
			return &knob_table[i];
	return NULL;
}

/* The canonical value of exactly text (case-insensitive), or NULL. */
static const char *match(const struct knob *k, const char *text)
{
	for (size_t i = 0; k->values[i]; i++)
		if (!strcasecmp(text, k->values[i]))
			return k->values[i];
	for (size_t i = 0; k->spellings && k->spellings[i].spelling; i++)
		if (!strcasecmp(text, k->spellings[i].spelling))
			return k->spellings[i].canonical;
	return NULL;
}

const char *knob_canonical(const struct knob *k, const char *text)
{
	assert(k && text);
	const char *hit = match(k, text);
	long long v;
	if (!hit && k->numeric && number_parse_ll(text, &v)) {
		char num[32];
		snprintf(num, sizeof(num), "%lld", v);
		hit = match(k, num);
	}
	return hit;
}

void knob_expected(const struct knob *k, struct strbuf *out)
{
	for (size_t i = 0; k->values[i]; i++)
		strbuf_addf(out, "%s%s", i ? (k->values[i + 1] ? ", " : " or ") : "",
			    k->values[i]);
	for (size_t i = 0; k->spellings && k->spellings[i].spelling; i++)
		strbuf_addf(out, "%s%s", i ? ", " : " (or ", k->spellings[i].spelling);
	if (k->spellings && k->spellings[0].spelling)
		strbuf_addch(out, ')');
}

void knob_host_command(const struct knob *k, const char *value, struct strbuf *out)
{
	if (k->command == KNOB_COMMAND_PPC64_CPU)
		strbuf_addf(out, "ppc64_cpu %s=%s\n", k->command_option, value);
	else
		strbuf_addf(out, "echo %s > /%s\n", value, k->rel_path);
}
