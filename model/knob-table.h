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

#endif
