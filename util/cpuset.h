/*
 * cpuset: host CPU lists in the kernel's "cpulist" notation ("0-3,8").
 *
 * One parser for every place a user names host CPUs (pinning, noise loads):
 * it accepts comma-separated CPU numbers and ascending ranges, tolerates
 * overlaps the way the kernel does, and rejects everything else with a
 * message that quotes the offending text.  The result is a sorted list
 * without duplicates, convertible to a cpu_set_t for sched_setaffinity().
 */
#ifndef TA_CPUSET_H
#define TA_CPUSET_H

#include <sched.h>
#include <stddef.h>

/* cpu_set_t is a GNU extension: the including file must define _GNU_SOURCE
 * before its first system header. */
#ifndef CPU_SETSIZE
#error "util/cpuset.h needs _GNU_SOURCE defined before the first #include"
#endif

#include "err.h"
#include "strbuf.h"

/* The highest CPU number a cpuset may name (cpu_set_t's capacity - 1). */
#define CPUSET_MAX_CPU (CPU_SETSIZE - 1)

struct cpuset {
	int *cpus;	/* sorted ascending, no duplicates */
	size_t n;	/* >= 1 after a successful parse */
};

/*
 * Parses s ("0-3,8", spaces around items allowed) into out.  An empty
 * string, a descending range, a negative or too large CPU number, or stray
 * characters fail with EXIT_BAD_INPUT.  out is untouched on failure.
 */
int cpuset_parse(const char *s, struct cpuset *out, struct ta_err *err);
/* The highest CPU in a parsed set. */
int cpuset_last(const struct cpuset *cs);
/* Fills set with the CPUs of cs. */
void cpuset_to_mask(const struct cpuset *cs, cpu_set_t *set);
/* Appends cs in canonical cpulist form ("0-3,8") to out. */
void cpuset_format(const struct cpuset *cs, struct strbuf *out);
void cpuset_release(struct cpuset *cs);

#endif
