/*
 * bench-kind: the benchmark kinds, shared by the config loader
 * (experiments/config.c reads `benchmark.kind`) and the output parsers
 * (collectors/benchparse.h), so neither includes the other's headers.
 * Plain data, no I/O.
 */
#ifndef TA_BENCH_KIND_H
#define TA_BENCH_KIND_H

enum bench_kind {
	BENCH_EBIZZY, BENCH_REDIS, BENCH_STRESS_NG, BENCH_SYSBENCH,
	BENCH_KERNEL_BUILD, BENCH_COMMAND
};

/* The names used in configs, keys, messages and the DB, indexed by kind; NULL ends. */
extern const char *const bench_kind_names[];

const char *bench_kind_name(enum bench_kind k);

#endif
