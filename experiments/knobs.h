/*
 * knobs: reading, writing and restoring the host settings a sweep may
 * change; the only code that writes them.
 *
 * What the knobs are (names, files, values, order, capabilities) is the
 * table in model/knob-table.h; this module does the I/O for it.  Each knob
 * lives in a file under a ROOT directory ("/" on a real host; tests use a
 * fake sysfs/procfs tree).  Only knobs in the table can be written, and only
 * values it accepts: a config cannot make the tool write arbitrary files or
 * text.  Reads return the table's canonical form (subcores_per_core is read
 * and written in hex by the kernel; this module converts); compare
 * canonical forms only.
 *
 * Safe order (knob->order): SMT first, then split-core, then the generic
 * knobs, kvm_hv parameters last; restores go in the reverse order.  A
 * split-core change fails with EBUSY while any HV guest runs:
 * knob->needs_no_guests tells the caller to stop its guests first.
 *
 * Writes: open(O_WRONLY | O_NOFOLLOW | O_NONBLOCK), never O_CREAT, one
 * write() (sysfs takes one write per value; its attributes are never
 * truncated), then read back to verify.  A file under a test ROOT (any file
 * system but sysfs and procfs) is instead replaced whole through a
 * temporary file and rename() (safefile.h), so a write cut short — the
 * controller killed with SIGKILL — never leaves it empty.
 * O_NOFOLLOW applies to the last path component only, and none of the
 * knob files is a symlink on a real kernel (/sys/devices/... and
 * /sys/module/... are real directories), so it costs nothing there, while
 * under a test ROOT it stops a planted symlink from redirecting the write
 * to an arbitrary file.  Parent directories may be symlinks (ROOT itself
 * may be one).  The opened file must be a regular file (sysfs and procfs
 * attributes are), which refuses FIFOs and devices.
 *
 * Journal: knobs_apply_set() records each knob's original value in the
 * database (committed) before it writes anything, so that after a crash
 * `topoadvisor restore-host` can put the host back.
 *
 * Signals: knobs_restore_all() uses SQLite and stdio, which are not
 * async-signal-safe.  A controller must NOT call it from a signal handler:
 * the SIGINT/SIGTERM handler only sets a `volatile sig_atomic_t` flag; the
 * main loop sees the flag, stops the benchmark, collectors, noise and
 * guests, and only then calls knobs_restore_all() (guests must be gone
 * before split-core can be restored).
 */
#ifndef TA_KNOBS_H
#define TA_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/knob-table.h"
#include "../schema/db.h"
#include "../util/err.h"
#include "../util/strbuf.h"

/*
 * 0 when this host (under root) has the knob and it can be written; else -1
 * with a reason that names the file and what is needed, e.g.
 * "subcores_per_core: /sys/devices/system/cpu/subcores_per_core does not
 * exist: split-core needs a bare-metal POWER8 host".
 */
int knob_supported(const struct knob *k, const char *root, struct ta_err *err);

/* The current value, normalised (canonical form where there is one). */
int knob_read(const struct knob *k, const char *root, struct strbuf *value,
	      struct ta_err *err);

/*
 * The current value in a form restoring puts back exactly.  Equal to
 * knob_read() except for per-thread SMT with a partly offline host, where
 * it is "online=LIST" (the online CPUs) since "off" alone would not say
 * which thread of each core was online.
 */
int knob_snapshot(const struct knob *k, const char *root, struct strbuf *value,
		  struct ta_err *err);

/* Checks value against k->choices (with aliases); appends the canonical form. */
int knob_validate(const struct knob *k, const char *value, struct strbuf *canonical,
		  struct ta_err *err);

/*
 * The file (per-thread SMT: the cpu directory) the knob lives in under root,
 * the root made canonical (absolute, symlinks resolved) when it exists: the
 * path the journal records and matches entries by.
 */
char *knob_path(const struct knob *k, const char *root);

/* Validates value, writes it and reads it back.  Not journalled. */
int knob_apply(const struct knob *k, const char *root, const char *value,
	       struct ta_err *err);

/* Where knobs_apply_set() records originals. */
struct knob_journal {
	struct db *db;
	int64_t experiment_id;	/* 0: none */
};

/*
 * Sets names[i] to values[i] under root, in the safe order whatever the
 * order of the arrays.  First checks every name, value and capability (no
 * write happens when any is wrong), then per knob: reads the original,
 * records it in the journal (committed), writes, verifies.  A knob already
 * at the value is neither written nor journalled.  On a failure midway the
 * knobs already changed stay journalled for knobs_restore_all().
 */
int knobs_apply_set(const char *root, const char *const names[], const char *const values[],
		    size_t n, const struct knob_journal *journal, struct ta_err *err);

enum knob_restore_status {
	KNOB_RESTORED,		/* written back */
	KNOB_WAS_ORIGINAL,	/* already held the original: nothing written */
	KNOB_RESTORE_FAILED,	/* still changed: see error */
	KNOB_OTHER_ROOT,	/* journalled under another ROOT: left alone */
	KNOB_GONE,		/* the file no longer exists (module unloaded,
				 * reboot): nothing to put back, marked restored */
};
#define KNOB_RESTORE_NSTATUS 5

struct knob_restore_item {
	int64_t journal_id;
	int64_t experiment_id;
	char *knob;
	char *path;
	char *original;
	char *applied;
	char *before;		/* value read before restoring (NULL: unreadable) */
	enum knob_restore_status status;
	char *error;		/* FAILED / OTHER_ROOT: why */
};

struct knob_restore_report {
	struct knob_restore_item *items;	/* in the order they were restored */
	size_t n;
	size_t nfailed;
};

/*
 * Restores every unrestored journal entry recorded under root: kvm_hv
 * first, SMT last (the reverse of the apply order), and marks each one
 * restored once the knob holds its original value.  Entries of other ROOTs
 * are left unrestored (restore-host reports them).  Goes on after a
 * failure, so one stuck knob does not keep the others changed.  Returns -1
 * when any entry failed (err says how many and the first reason), else 0.
 * Idempotent.  Not async-signal-safe: see the comment at the top.
 */
int knobs_restore_all(const char *root, const struct knob_journal *journal,
		      struct ta_err *err);
/* The same, also filling report (always initialised; release it with
 * knob_restore_report_release) with what happened to each entry. */
int knobs_restore_report(const char *root, const struct knob_journal *journal,
			 struct knob_restore_report *report, struct ta_err *err);
void knob_restore_report_release(struct knob_restore_report *r);
const char *knob_restore_status_name(enum knob_restore_status s);

#endif
