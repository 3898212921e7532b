/*
 * readfloor: the cost of reading a file at all, for `make bench`: maps it
 * the way `exits` maps a recording of up to 32 MiB (MAP_PRIVATE |
 * MAP_POPULATE), loads one byte of every 64-byte cache line in order and
 * does nothing else.  Linked static against the front's C library (the
 * Makefile), so its start-up costs what the front's does.  `exits
 * --algorithm seed` on a perf.data recording cannot be cheaper than this;
 * bench.sh prints both against the seed's perf script.
 *
 *   readfloor FILE	prints "BYTES LINES SUM" (SUM keeps the loads)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	int fd = argc == 2 ? open(argv[1], O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		fprintf(stderr, "usage: readfloor FILE (a readable, non-empty regular file)\n");
		return 2;
	}
	size_t size = (size_t)st.st_size;
	const volatile unsigned char *m = mmap(NULL, size, PROT_READ,
					       MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (m == MAP_FAILED) {
		perror("readfloor: mmap");
		return 1;
	}
	uint64_t sum = 0, lines = 0;
	for (size_t i = 0; i < size; i += 64, lines++)
		sum += m[i];
	printf("%zu %llu %llu\n", size, (unsigned long long)lines, (unsigned long long)sum);
	return 0;
}
