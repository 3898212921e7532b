/*
 * host_facts_read: the few facts about this host that plan needs (the
 * architecture, online CPUs, threads per core, NUMA nodes, free memory).
 * Kept apart from plan.c so
 * plan stays pure; the full probe is `topoadvisor probe`.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "plan.h"

/*
 * Counts the CPUs in a cpulist such as "0-3,8" read from path (0 on error);
 * *max_out (if given) gets the highest CPU id + 1.
 */
static int count_cpulist(const char *path, int *max_out)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int count = 0, a, b;
	char sep;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		sep = (char)fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%d", &b) != 1)
				break;
			sep = (char)fgetc(f);
		}
		if (b >= a)
			count += b - a + 1;
		if (max_out && b + 1 > *max_out)
			*max_out = b + 1;
		if (sep != ',')
			break;
	}
	fclose(f);
	return count;
}

long host_mem_available_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	char line[256];
	long kib = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib > 0 ? kib / 1024 : 0;
}

void host_facts_read(struct host_facts *h)
{
	memset(h, 0, sizeof(*h));
	struct utsname u;
	h->arch = ARCH_HOST;
	if (uname(&u) == 0) {
		if (!strcmp(u.machine, "x86_64"))
			h->arch = ARCH_X86_64;
		else if (!strncmp(u.machine, "ppc64", 5))
			h->arch = ARCH_PPC64;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	h->online_cpus = n > 0 ? (int)n : 0;
	count_cpulist("/sys/devices/system/cpu/possible", &h->possible_cpus);
	h->threads_per_core =
		count_cpulist("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", NULL);
	h->numa_nodes = count_cpulist("/sys/devices/system/node/online", NULL);
}
