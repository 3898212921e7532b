/* bench-kind: the benchmark kinds' names; see bench-kind.h. */
#include "bench-kind.h"

#include <stddef.h>

const char *const bench_kind_names[] = {
	[BENCH_EBIZZY] = "ebizzy", [BENCH_REDIS] = "redis",
	[BENCH_STRESS_NG] = "stress-ng", [BENCH_SYSBENCH] = "sysbench",
	[BENCH_KERNEL_BUILD] = "kernel-build", [BENCH_COMMAND] = "command", NULL
};

const char *bench_kind_name(enum bench_kind k)
{
	return bench_kind_names[k];
}
