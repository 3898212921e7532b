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
	  .where = { { .gen_min = 8, .gen_max = 8 } },
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
	  .where = { { .gen_min = 7, .gen_max = 8 } },
	  .kernel_default = "6" },
	{ .name = "kvm_hv.target_smt_mode", .kind = KNOB_INT, .values = target_smt_values,
	  .numeric = true, .rel_path = KVM_HV_DIR "target_smt_mode", .order = 40,
	  .why_missing = KVM_HV_WHY,
	  .db_column = "target_smt_mode", .db_type = KNOB_COLUMN_INTEGER,
	  .where = { { .gen_min = 7, .gen_max = 8 } },
	  .kernel_default = "0" },
	/* book3s_hv.c: indep_threads_mode defaults to true; POWER9 only, from
	 * c01015091a77 until aaae8c79 (Linux 5.14) removed it. */
	{ .name = "kvm_hv.indep_threads_mode", .kind = KNOB_BOOL_YN, .values = yn_values,
	  .spellings = yn_spellings, .rel_path = KVM_HV_DIR "indep_threads_mode",
	  .order = 40, .why_missing = "needs kvm_hv on POWER9 with a kernel of about 4.17 to 5.13",
	  .db_column = "indep_threads_mode", .db_type = KNOB_COLUMN_TEXT,
	  .where = { { .gen_min = 9, .gen_max = 9, .kernel_max = KNOB_KV(5, 13) } },
	  .kernel_default = "Y" },
	{ .name = "kvm_hv.one_vm_per_core", .kind = KNOB_BOOL_YN, .values = yn_values,
	  .spellings = yn_spellings, .rel_path = KVM_HV_DIR "one_vm_per_core", .order = 40,
	  .why_missing = KVM_HV_WHY,
	  .db_column = "one_vm_per_core", .db_type = KNOB_COLUMN_TEXT,
	  /* "requires POWER8 or older" since 5.14; before, POWER9 too (with
	   * indep_threads_mode=N). */
	  .where = { { .gen_max = 8 }, { .gen_min = 9, .gen_max = 9,
					 .kernel_max = KNOB_KV(5, 13) } },
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

/* ---- where a knob exists ------------------------------------------------- */

static bool where_set(const struct knob_where *w)
{
	return w->power || w->gen_min || w->gen_max || w->kernel_min || w->kernel_max;
}

static bool where_power(const struct knob_where *w)
{
	return w->power || w->gen_min || w->gen_max;
}

/* Whether the host's CPU fits w; unknown facts fit. */
static bool cpu_fits(const struct knob_where *w, const struct knob_host *h)
{
	if (!where_power(w) || h->cpu == KNOB_CPU_UNKNOWN)
		return true;
	if (h->cpu == KNOB_CPU_OTHER)
		return false;
	if (!h->power_gen)
		return true;
	return (!w->gen_min || h->power_gen >= w->gen_min) &&
	       (!w->gen_max || h->power_gen <= w->gen_max);
}

static bool kernel_fits(const struct knob_where *w, const struct knob_host *h)
{
	return !h->kernel || ((!w->kernel_min || h->kernel >= w->kernel_min) &&
			      (!w->kernel_max || h->kernel <= w->kernel_max));
}

/* "POWER9", "POWER7 or POWER8", "POWER8 and older", "POWER9 and newer", "POWER". */
static void gens_text(const struct knob_where *w, struct strbuf *out)
{
	if (w->gen_min && w->gen_max == w->gen_min)
		strbuf_addf(out, "POWER%d", w->gen_min);
	else if (w->gen_min && w->gen_max == w->gen_min + 1)
		strbuf_addf(out, "POWER%d or POWER%d", w->gen_min, w->gen_max);
	else if (w->gen_min && w->gen_max)
		strbuf_addf(out, "POWER%d to POWER%d", w->gen_min, w->gen_max);
	else if (w->gen_max)
		strbuf_addf(out, "POWER%d and older", w->gen_max);
	else if (w->gen_min)
		strbuf_addf(out, "POWER%d and newer", w->gen_min);
	else
		strbuf_addstr(out, "POWER");
}

static void kv_text(int kv, struct strbuf *out)
{
	strbuf_addf(out, "%d.%d", kv / 1000, kv % 1000);
}

/* The release after kv, the one that dropped a knob (3.19, 4.20 and 5.19
 * were the last of their majors). */
static int kv_next(int kv)
{
	if (kv == KNOB_KV(3, 19) || kv == KNOB_KV(4, 20) || kv == KNOB_KV(5, 19))
		return KNOB_KV(kv / 1000 + 1, 0);
	return kv + 1;
}

bool knob_available(const struct knob *k, const struct knob_host *h, struct strbuf *why)
{
	size_t n = 0;
	while (n < KNOB_WHERE_MAX && where_set(&k->where[n]))
		n++;
	if (!n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (cpu_fits(&k->where[i], h) && kernel_fits(&k->where[i], h))
			return true;
	/* The CPU fits no place: that is the reason. */
	const struct knob_where *cpu_ok = NULL;
	for (size_t i = 0; i < n && !cpu_ok; i++)
		if (cpu_fits(&k->where[i], h))
			cpu_ok = &k->where[i];
	if (!cpu_ok) {
		if (n > 1)
			strbuf_addstr(why, "only on ");
		for (size_t i = 0; i < n; i++) {
			if (i)
				strbuf_addstr(why, i + 1 < n ? ", " : " or ");
			gens_text(&k->where[i], why);
			if (n > 1 && k->where[i].kernel_max) {
				strbuf_addstr(why, " before Linux ");
				kv_text(kv_next(k->where[i].kernel_max), why);
			}
		}
		strbuf_addf(why, "%s (this CPU is %s)", n > 1 ? "" : " only",
			    h->cpu_name[0] ? h->cpu_name : "not POWER");
		return false;
	}
	/* The CPU fits but the kernel does not; name the CPU when places differ by it. */
	if (n > 1 && h->cpu == KNOB_CPU_POWER) {
		strbuf_addstr(why, "on ");
		gens_text(cpu_ok, why);
		strbuf_addstr(why, " ");
	}
	if (cpu_ok->kernel_max && h->kernel > cpu_ok->kernel_max) {
		strbuf_addstr(why, "removed in Linux ");
		kv_text(kv_next(cpu_ok->kernel_max), why);
	} else {
		strbuf_addstr(why, "added in Linux ");
		kv_text(cpu_ok->kernel_min, why);
	}
	strbuf_addstr(why, " (this kernel is ");
	kv_text(h->kernel, why);
	strbuf_addch(why, ')');
	return false;
}

void knob_where_text(const struct knob *k, struct strbuf *out)
{
	size_t before = out->len;
	for (size_t i = 0; i < KNOB_WHERE_MAX && where_set(&k->where[i]); i++) {
		const struct knob_where *w = &k->where[i];
		if (i)
			strbuf_addstr(out, "; ");
		if (where_power(w))
			gens_text(w, out);
		else
			strbuf_addstr(out, "any CPU");
		if (w->kernel_min) {
			strbuf_addstr(out, ", Linux ");
			kv_text(w->kernel_min, out);
			strbuf_addstr(out, " and newer");
		}
		if (w->kernel_max) {
			strbuf_addstr(out, ", Linux ");
			kv_text(w->kernel_max, out);
			strbuf_addstr(out, " and older");
		}
	}
	if (out->len == before)
		strbuf_addstr(out, "wherever its file exists");
}

/* The value of the first "key<spaces/tabs>: value" line of text, into buf. */
static bool info_field(const char *text, const char *key, char *buf, size_t n)
{
	size_t kl = strlen(key);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		/* The key, then only blanks up to the colon ("cpu" is not "cpu cores"). */
		size_t gap = kl;
		while (gap < len && (line[gap] == ' ' || line[gap] == '\t'))
			gap++;
		if (len > gap && !strncmp(line, key, kl) && line[gap] == ':') {
			const char *colon = line + gap;
			{
				const char *v = colon + 1;
				while (v < line + len && (*v == ' ' || *v == '\t'))
					v++;
				size_t vl = (size_t)(line + len - v);
				if (vl >= n)
					vl = n - 1;
				memcpy(buf, v, vl);
				buf[vl] = 0;
				return true;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

void knob_host_parse(struct knob_host *h, const char *cpuinfo, const char *osrelease,
		     const char *machine)
{
	memset(h, 0, sizeof(*h));
	char cpu[128];
	/* POWER: "cpu : POWER9 (raw), altivec supported"; also POWER8E, POWER8NVL. */
	if (cpuinfo && info_field(cpuinfo, "cpu", cpu, sizeof(cpu)) &&
	    !strncasecmp(cpu, "POWER", 5)) {
		h->cpu = KNOB_CPU_POWER;
		int gen = 0, len = 0;
		if (sscanf(cpu + 5, "%d%n", &gen, &len) == 1 && gen > 0 && gen < 100)
			h->power_gen = gen;
		/* By generation, as the table speaks: POWER8E and POWER8NVL are POWER8. */
		if (h->power_gen)
			snprintf(h->cpu_name, sizeof(h->cpu_name), "POWER%d", h->power_gen);
		else
			snprintf(h->cpu_name, sizeof(h->cpu_name), "%.*s",
				 (int)strcspn(cpu, " ,("), cpu);
	} else if (cpuinfo && (info_field(cpuinfo, "vendor_id", cpu, sizeof(cpu)) ||
			       info_field(cpuinfo, "model name", cpu, sizeof(cpu)) ||
			       info_field(cpuinfo, "CPU implementer", cpu, sizeof(cpu)))) {
		h->cpu = KNOB_CPU_OTHER;
		snprintf(h->cpu_name, sizeof(h->cpu_name), "%.31s",
			 machine && *machine ? machine : cpu);
	}
	int major, minor;
	if (osrelease && sscanf(osrelease, "%d.%d", &major, &minor) == 2 && major > 0 &&
	    major < 1000 && minor >= 0 && minor < 1000)
		h->kernel = KNOB_KV(major, minor);
}
