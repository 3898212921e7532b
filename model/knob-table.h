/*
 * knob-table: the one table of host knobs a sweep may change.  Plain data
 * and pure functions over it: no I/O, includes nothing beyond util/.
 *
 * Everything the tool knows about a knob is one entry here: the name a
 * config uses, the values it accepts and how each spelling normalises, the
 * file it lives in, the order it is applied in, its database column, the
 * kernel's default, what a host needs to have it, and how `recommend`
 * prints the command that sets it.  The loader (experiments/config.c), the
 * planner, the writer (experiments/knobs.c), the database (schema/db-plan.c)
 * and the advisor (advisor/rank.c) all read this table; adding a knob is one
 * entry in knob-table.c.  tests/integration/layering.sh fails when a knob's
 * name or file shows up in code outside this module.
 *
 * Canonical values: the table's `values`, compared byte for byte.  Every
 * spelling of a value normalises to one canonical text (knob_canonical), so
 * `smt: [off, 1]` is one value written twice, and only canonical text is
 * stored, keyed and compared.  kvm_hv booleans are "Y"/"N" (what the module
 * shows), SMT is "off", "on" or threads per core, numbers are decimal.
 */
#ifndef TA_KNOB_TABLE_H
#define TA_KNOB_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"
#include "../util/strbuf.h"

/* How the knob's file is read and written (experiments/knobs.c). */
enum knob_kind {
	KNOB_SMT,		/* smt/control, else per-thread online files */
	KNOB_SUBCORES,		/* hex in the file, decimal to the user */
	KNOB_BOOL_YN,		/* module bool parameter: Y/N */
	KNOB_INT,		/* a decimal integer file */
	KNOB_BRACKETED,		/* "always [madvise] never": the bracketed word */
};

/* The type of the knob's own column in `configurations` (schema.sql). */
enum knob_column_type { KNOB_COLUMN_NONE, KNOB_COLUMN_INTEGER, KNOB_COLUMN_TEXT };

/* How `recommend` prints the host command that sets a value. */
enum knob_command {
	KNOB_COMMAND_WRITE,	/* echo VALUE > /rel_path */
	KNOB_COMMAND_PPC64_CPU,	/* ppc64_cpu OPTION=VALUE */
};

/*
 * Where a knob exists: a range of POWER generations (0 = no bound; both 0 =
 * any CPU) and of kernel versions (KNOB_KV(major, minor); 0 = no bound,
 * kernel_max is the last version that has it).  A knob lists up to
 * KNOB_WHERE_MAX places; it exists on a host any of them admits.  A table
 * entry with no place at all exists wherever its file does.
 */
#define KNOB_KV(major, minor) ((major) * 1000 + (minor))
#define KNOB_WHERE_MAX 2
struct knob_where {
	bool power;		/* only on POWER (implied by a generation bound) */
	int gen_min, gen_max;	/* POWER generations, e.g. 7..8 */
	int kernel_min, kernel_max;
};

/*
 * What a host is, as far as knob availability goes: from its /proc/cpuinfo
 * and /proc/sys/kernel/osrelease (under a fake root, that root's own).
 * Every field may be unknown; an unknown fact never refuses a knob.
 */
struct knob_host {
	enum { KNOB_CPU_UNKNOWN, KNOB_CPU_POWER, KNOB_CPU_OTHER } cpu;
	int power_gen;		/* POWERn: n; 0 when unknown (or not POWER) */
	char cpu_name[32];	/* for messages: "POWER9", "x86_64"; "" when unknown */
	int kernel;		/* KNOB_KV(major, minor); 0 when unknown */
};

/* Another accepted spelling (case-insensitive) and the value it means. */
struct knob_spelling {
	const char *spelling;
	const char *canonical;
};

struct knob {
	const char *name;		/* as in the config, e.g. "kvm_hv.target_smt_mode" */
	enum knob_kind kind;
	const char *const *values;	/* canonical values, NULL-terminated */
	const struct knob_spelling *spellings;	/* other spellings, {NULL} ends; may be NULL */
	bool numeric;			/* integers in decimal or 0x hex name the decimal value */
	const char *rel_path;		/* the file, relative to the host root (SMT: the
					   control file; per-thread online files otherwise) */
	int order;			/* apply order, ascending; restore is the reverse */
	bool needs_no_guests;		/* a change fails while HV guests run */
	const char *why_missing;	/* the capability a host needs, for messages */
	const char *db_column;		/* typed column in `configurations`, or NULL */
	enum knob_column_type db_type;
	const char *kernel_default;	/* canonical; NULL when it depends on the host */
	enum knob_command command;
	const char *command_option;	/* KNOB_COMMAND_PPC64_CPU: the option */
	struct knob_where where[KNOB_WHERE_MAX];	/* CPUs and kernels it exists on */
};

/* The table, in apply order. */
size_t knob_count(void);
const struct knob *knob_at(size_t i);
/* NULL for a name not in the table. */
const struct knob *knob_find(const char *name);
/* Like knob_find, but an unknown name fails (EXIT_BAD_INPUT) listing the known ones. */
const struct knob *knob_lookup(const char *name, struct ta_err *err);
/* The first knob of a kind (KNOB_SMT, KNOB_SUBCORES); NULL when none. */
const struct knob *knob_of_kind(enum knob_kind kind);

/*
 * The canonical value text means (a pointer into the table), or NULL when
 * the knob does not accept it.
 */
const char *knob_canonical(const struct knob *k, const char *text);

/* Appends what k accepts, for messages: "1, 2 or 4", "Y or N (or yes, ...)". */
void knob_expected(const struct knob *k, struct strbuf *out);

/*
 * Appends the shell line that sets k to value on a host, e.g.
 * "ppc64_cpu --smt=off" or "echo Y > /sys/module/kvm_hv/parameters/...".
 * value is printed as given: the caller checks it is a plain word.
 */
void knob_host_command(const struct knob *k, const char *value, struct strbuf *out);

/*
 * Whether k exists on a host with these facts: true, or false with why set
 * to the reason in a user's words, e.g. "removed in Linux 5.14 (this kernel
 * is 6.1)" or "POWER9 only (this CPU is POWER8)".  Facts the host leaves
 * unknown never refuse.  Pure.
 */
bool knob_available(const struct knob *k, const struct knob_host *h, struct strbuf *why);

/*
 * Fill h from the text of a /proc/cpuinfo (NULL: unknown), of an osrelease
 * file (NULL: unknown), and the machine name used when cpuinfo names no
 * POWER CPU (uname -m, or NULL: unknown).  Pure.
 */
void knob_host_parse(struct knob_host *h, const char *cpuinfo, const char *osrelease,
		     const char *machine);

/* Appends where k exists, for docs and messages: "POWER9, Linux 5.13 and older". */
void knob_where_text(const struct knob *k, struct strbuf *out);

#endif
