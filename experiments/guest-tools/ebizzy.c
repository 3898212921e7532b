/*
 * ebizzy: topoadvisor's stand-in for the ebizzy benchmark, for the test
 * guest image (Debian packages no ebizzy).  Written here from ebizzy 0.3's
 * documented behaviour, not copied from it.
 *
 * The workload is ebizzy's: it models a web search back end.  `-n` chunks
 * of `-s` bytes each hold sorted records (record i has the value i); each
 * of `-t` threads repeatedly picks a chunk at random, copies it into a
 * freshly allocated buffer, picks a random key and finds it with a binary
 * search (`-z`: linear), then frees the buffer — a large working set, an
 * alloc/copy/free cycle and unpredictable accesses.  After `-S` seconds the
 * threads stop and the program prints the records searched per second and
 * the real, user and system time, in ebizzy 0.3's exact format:
 *
 *   "%u records/s\n" "real %5.2f s\n" "user %5.2f s\n" "sys  %5.2f s\n"
 *
 * so the one ebizzy parser (collectors/parse-time.c) reads this program
 * and the real one alike.  -v prints the settings, -vv each thread's start
 * and end ("[%lx]Thread finished, %f seconds %u records"), -vvv every key.
 *
 * Differences from the real program, none visible to the parser: time is
 * measured with CLOCK_MONOTONIC instead of time(2) (whole seconds), each
 * thread has its own random sequence, and -v names this program as the
 * stand-in.  The options are ebizzy's: -t -S -s -n -m -M -l -p -P -R -T -v
 * -z.  Exit status 1 with a usage message for a bad option.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef size_t record_t;

struct options {
	unsigned chunks, chunk_size, seconds, threads, verbose;
	int always_mmap, never_mmap, no_lib_memcpy, use_permissions, use_holes;
	int random_size, touch_pages, linear;
};

static struct options opt;
static record_t **chunk;
static long page_size;
static atomic_int go;		/* 0 wait, 1 run, 2 stop */
static struct timespec start_ts;

static void usage(const char *prog)
{
	fprintf(stderr, "Usage: %s [options]\n"
		"-T\t\t Just 'touch' the allocated pages\n"
		"-l\t\t Don't use library memcpy\n"
		"-m\t\t Always use mmap instead of malloc\n"
		"-M\t\t Never use mmap\n"
		"-n <num>\t Number of memory chunks to allocate\n"
		"-p \t\t Prevent mmap coalescing using permissions\n"
		"-P \t\t Prevent mmap coalescing using holes\n"
		"-R\t\t Randomize size of memory to copy and search\n"
		"-s <size>\t Size of memory chunks, in bytes\n"
		"-S <seconds>\t Number of seconds to run\n"
		"-t <num>\t Number of threads (2 * number cpus by default)\n"
		"-v[v[v]]\t Be verbose (more v's for more verbose)\n"
		"-z\t\t Linear search instead of binary search\n", prog);
}

/* A positive decimal that fits in unsigned, or 0. */
static unsigned positive(const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > UINT_MAX || *s == '-')
		return 0;
	return (unsigned)v;
}

static int read_options(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	opt.threads = 2 * (unsigned)(ncpu > 0 ? ncpu : 1);
	opt.chunks = 10;
	opt.chunk_size = sizeof(record_t) * 64 * 1024;
	opt.seconds = 10;
	int c;
	opterr = 1;
	while ((c = getopt(argc, argv, "lmMn:pPRs:S:t:vzT")) != -1) {
		unsigned *num = NULL;
		switch (c) {
		case 'l': opt.no_lib_memcpy = 1; break;
		case 'm': opt.always_mmap = 1; break;
		case 'M': opt.never_mmap = 1; break;
		case 'p': opt.use_permissions = 1; break;
		case 'P': opt.use_holes = 1; break;
		case 'R': opt.random_size = 1; break;
		case 'T': opt.touch_pages = 1; break;
		case 'v': opt.verbose++; break;
		case 'z': opt.linear = 1; break;
		case 'n': num = &opt.chunks; break;
		case 's': num = &opt.chunk_size; break;
		case 'S': num = &opt.seconds; break;
		case 't': num = &opt.threads; break;
		default: return -1;
		}
		if (num && !(*num = positive(optarg)))
			return -1;
	}
	if (optind < argc)
		return -1;
	if (opt.always_mmap && opt.never_mmap) {
		fprintf(stderr, "Both -m \"always mmap\" and -M \"never mmap\" option specified\n");
		return -1;
	}
	if (opt.chunk_size < sizeof(record_t)) {
		fprintf(stderr, "Chunk size %u smaller than record size %zu\n", opt.chunk_size,
			sizeof(record_t));
		return -1;
	}
	return 0;
}

/* -v: the settings, one "name value" line each, in ebizzy 0.3's order and words. */
static void print_settings(void)
{
	const struct { const char *name; long value; } settings[] = {
		{ "always_mmap", opt.always_mmap }, { "never_mmap", opt.never_mmap },
		{ "chunks", opt.chunks },
		{ "prevent coalescing using permissions", opt.use_permissions },
		{ "prevent coalescing using holes", opt.use_holes },
		{ "random_size", opt.random_size }, { "chunk_size", opt.chunk_size },
		{ "seconds", opt.seconds }, { "threads", opt.threads },
		{ "verbose", opt.verbose }, { "linear", opt.linear },
		{ "touch_pages", opt.touch_pages }, { "page size", page_size },
	};
	printf("ebizzy 0.3 (topoadvisor's ebizzy-compatible stand-in)\n");
	for (size_t i = 0; i < sizeof(settings) / sizeof(*settings); i++)
		printf("%s %ld\n", settings[i].name, settings[i].value);
}

/* malloc or mmap as the options say; NULL when the memory is not there. */
static void *mem_get(size_t size)
{
	if (!opt.always_mmap)
		return malloc(size);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void mem_put(void *p, size_t size)
{
	if (opt.always_mmap)
		munmap(p, size);
	else
		free(p);
}

static int out_of_memory(size_t size)
{
	fprintf(stderr, "Couldn't allocate %zu bytes, try smaller chunks or size options\n"
		"Using -n %u chunks and -s %u size\n", size, opt.chunks, opt.chunk_size);
	return -1;
}

/*
 * The chunks, each holding records 0, 1, 2, … (sorted, so a binary search
 * finds every key).  -P puts a page between chunks and frees it, -p makes
 * every other chunk read-only, both so that the kernel cannot merge the
 * mappings into one.
 */
static int chunks_make(void)
{
	size_t nrec = opt.chunk_size / sizeof(record_t);
	void **holes = NULL;
	chunk = calloc(opt.chunks, sizeof(*chunk));
	if (!chunk)
		return out_of_memory(opt.chunks * sizeof(*chunk));
	if (opt.use_holes && !(holes = calloc(opt.chunks, sizeof(*holes))))
		return out_of_memory(opt.chunks * sizeof(*holes));
	for (unsigned i = 0; i < opt.chunks; i++) {
		if (!(chunk[i] = mem_get(opt.chunk_size)))
			return out_of_memory(opt.chunk_size);
		if (holes && !(holes[i] = mem_get((size_t)page_size)))
			return out_of_memory((size_t)page_size);
	}
	for (unsigned i = 0; holes && i < opt.chunks; i++)
		mem_put(holes[i], (size_t)page_size);
	free(holes);
	if (opt.verbose)
		printf("Allocated memory\n");
	for (unsigned i = 0; i < opt.chunks; i++) {
		for (size_t j = 0; j < nrec; j++)
			chunk[i][j] = (record_t)j;
		if (opt.use_permissions && i % 2 == 0)
			mprotect(chunk[i], opt.chunk_size, PROT_READ);
	}
	if (opt.verbose)
		printf("Wrote memory\n");
	return 0;
}

/* A cheap per-thread generator (64-bit LCG, high bits): quality does not matter. */
static size_t rnd(uint64_t *state, size_t below)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (size_t)((*state >> 33) % below);
}

static int record_cmp(const void *a, const void *b)
{
	record_t x = *(const record_t *)a, y = *(const record_t *)b;
	return (x > y) - (x < y);
}

static void copy_bytes(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const unsigned char *s = src;
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

struct worker {
	pthread_t tid;
	uint64_t seed;
	unsigned records;
	int failed;
};

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	size_t nrec = opt.chunk_size / sizeof(record_t);
	uint64_t state = w->seed;
	if (opt.verbose > 1)
		printf("[%lx]Thread started\n", (unsigned long)pthread_self());
	while (atomic_load_explicit(&go, memory_order_acquire) == 0)
		;
	unsigned n = 0;
	while (atomic_load_explicit(&go, memory_order_relaxed) == 1) {
		const record_t *src = chunk[rnd(&state, opt.chunks)];
		size_t nsearch = opt.random_size ? rnd(&state, nrec) + 1 : nrec;
		size_t bytes = nsearch * sizeof(record_t);
		record_t *copy = mem_get(bytes);
		if (!copy) {
			out_of_memory(bytes);
			w->failed = 1;
			break;
		}
		if (opt.touch_pages) {
			for (size_t off = 0; off < bytes; off += (size_t)page_size)
				((volatile char *)copy)[off] = (char)0xff;
		} else {
			if (opt.no_lib_memcpy)
				copy_bytes(copy, src, bytes);
			else
				memcpy(copy, src, bytes);
			record_t key = rnd(&state, nsearch), *hit = NULL;
			if (opt.verbose > 2)
				printf("[%lx]Search key %zu, copy size %zu\n",
				       (unsigned long)pthread_self(), key, bytes);
			if (opt.linear) {
				for (size_t j = 0; j < nsearch && !hit; j++)
					if (copy[j] == key)
						hit = &copy[j];
			} else {
				hit = bsearch(&key, copy, nsearch, sizeof(record_t), record_cmp);
			}
			if (!hit) {
				/* Records are never changed: a miss is memory corruption. */
				fprintf(stderr, "Couldn't find key %zu\n", key);
				w->failed = 1;
				mem_put(copy, bytes);
				break;
			}
		}
		mem_put(copy, bytes);
		n++;
	}
	w->records = n;
	if (opt.verbose > 1)
		printf("[%lx]Thread finished, %f seconds %u records\n",
		       (unsigned long)pthread_self(), seconds_since(&start_ts), n);
	return NULL;
}

static double tv_diff(const struct timeval *a, const struct timeval *b)
{
	return (double)(a->tv_sec - b->tv_sec) + (a->tv_usec - b->tv_usec) / 1e6;
}

static int run_threads(void)
{
	struct worker *w = calloc(opt.threads, sizeof(*w));
	if (!w)
		return out_of_memory(opt.threads * sizeof(*w));
	if (opt.verbose)
		printf("Threads starting\n");
	unsigned started = 0;
	for (; started < opt.threads; started++) {
		w[started].seed = 0x0c0ffee0ULL + 7919ULL * started;
		if (pthread_create(&w[started].tid, NULL, worker_run, &w[started])) {
			fprintf(stderr, "Error creating thread %u\n", started);
			break;
		}
	}
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	clock_gettime(CLOCK_MONOTONIC, &start_ts);
	atomic_store_explicit(&go, started == opt.threads ? 1 : 2, memory_order_release);
	if (started == opt.threads) {
		struct timespec len = { .tv_sec = opt.seconds }, rest;
		while (nanosleep(&len, &rest) < 0 && errno == EINTR)
			len = rest;
		atomic_store_explicit(&go, 2, memory_order_relaxed);
	}
	double elapsed = seconds_since(&start_ts);
	getrusage(RUSAGE_SELF, &ru1);
	double total = 0;
	int failed = started != opt.threads;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(w[i].tid, NULL);
		total += w[i].records;
		failed |= w[i].failed;
	}
	free(w);
	if (failed)
		return -1;
	if (opt.verbose)
		printf("Threads finished\n");
	printf("%u records/s\n", (unsigned)(total / elapsed));
	printf("real %5.2f s\n", elapsed);
	printf("user %5.2f s\n", tv_diff(&ru1.ru_utime, &ru0.ru_utime));
	printf("sys  %5.2f s\n", tv_diff(&ru1.ru_stime, &ru0.ru_stime));
	return 0;
}

int main(int argc, char **argv)
{
	page_size = sysconf(_SC_PAGESIZE);
	if (read_options(argc, argv) < 0) {
		usage(argv[0]);
		return 1;
	}
	if (opt.verbose)
		print_settings();
	if (opt.never_mmap)
		mallopt(M_MMAP_MAX, 0);
	if (chunks_make() < 0 || run_threads() < 0)
		return 1;
	return fflush(stdout) == 0 ? 0 : 1;
}
