/*
 * guesttopo: what CPU topology a guest really sees.
 *
 * GUESTTOPO_SCRIPT, run in the guest with /bin/sh (through the agent),
 * prints one "cpuN KEY VALUE" line per topology file of every online CPU
 * (physical_package_id, die_id where the kernel has it, core_id,
 * thread_siblings_list).  guesttopo_parse() turns that text into a
 * struct guesttopo, which derives sockets x dies x cores x threads the way
 * the guest kernel grouped its CPUs.  Pure: no I/O, tested with fixtures.
 */
#ifndef TA_GUESTTOPO_H
#define TA_GUESTTOPO_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/err.h"
#include "../util/strbuf.h"

/*
 * One grep reads every file (a fork per file costs tens of ms in an
 * emulated guest; the shell's `read` cannot be used: it reads a byte at a
 * time, and thread_siblings_list answers a read at offset 1 with nothing).
 * A CPU without a topology directory (offline) has no files to match.
 */
#define GUESTTOPO_SCRIPT \
	"cd /sys/devices/system/cpu || exit 1; " \
	"grep -H . cpu[0-9]*/topology/physical_package_id cpu[0-9]*/topology/die_id " \
	"cpu[0-9]*/topology/core_id cpu[0-9]*/topology/thread_siblings_list 2>/dev/null | " \
	"while IFS=: read p v; do echo \"${p%%/*} ${p##*/} $v\"; done"

struct guesttopo_cpu {
	int cpu, package, die, core;
	char *siblings;		/* thread_siblings_list as the kernel wrote it */
	int nsiblings;
};

struct guesttopo {
	struct guesttopo_cpu *cpus;	/* sorted by CPU number */
	size_t ncpus;
	/* Derived; 0 when the CPUs do not form a regular shape. */
	int sockets, dies, cores, threads;
	bool regular;
};

/* Parses the script's output.  Fails on malformed lines or no CPUs. */
int guesttopo_parse(const char *text, struct guesttopo *t, struct ta_err *err);
void guesttopo_release(struct guesttopo *t);

/*
 * Compares what was seen with the requested shape (dies 0 = 1).  Returns 0
 * when they match, else -1 with a message saying both.
 */
int guesttopo_compare(const struct guesttopo *t, int sockets, int dies, int cores,
		      int threads, struct ta_err *err);

/* Appends what was seen as a JSON object (for the DB). */
void guesttopo_json(const struct guesttopo *t, struct strbuf *out);

#endif
