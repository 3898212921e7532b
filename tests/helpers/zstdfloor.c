/*
 * zstdfloor: the decompression floor of a zstd-compressed trace.dat (v7),
 * for `make bench`: decompresses every zstd chunk of every buffer's event
 * data, one chunk at a time into one reused buffer, and does nothing else.
 * `topoadvisor exits` on the same file is held to a multiple of this.
 *
 *   zstdfloor FILE	prints "CHUNKS BYTES" (chunks, decompressed bytes)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "../../collectors/tdat.h"
#include "../../util/bcur.h"

int main(int argc, char **argv)
{
	struct stat st;
	int fd = argc == 2 ? open(argv[1], O_RDONLY) : -1;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "usage: zstdfloor TRACE.dat (a readable zstd v7 file)\n");
		return 2;
	}
	const unsigned char *map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	struct tdat_file f;
	struct ta_err err;
	if (map == MAP_FAILED || tdat_open(argv[1], map, st.st_size, &f, &err) < 0 || !f.compressed) {
		fprintf(stderr, "zstdfloor: %s\n", map == MAP_FAILED ? "cannot map the file"
			: f.compressed ? err.msg : "not a zstd-compressed trace.dat");
		return 2;
	}
	ZSTD_DCtx *z = ZSTD_createDCtx();
	unsigned char *out = NULL;
	size_t cap = 0, chunks = 0, bytes = 0;
	for (size_t b = 0; b < f.nbuffers; b++)
		for (int c = 0; c < f.buffers[b].ncpus; c++) {
			const unsigned char *p = map + f.buffers[b].cpus[c].offset;
			const unsigned char *end = p + f.buffers[b].cpus[c].size + 4;
			uint64_t n = f.buffers[b].cpus[c].size ? bcur_num_at(p, 4, f.big_endian) : 0;
			for (p += 4; n-- && end - p >= 8; chunks++) {
				size_t zsize = bcur_num_at(p, 4, f.big_endian);
				size_t size = bcur_num_at(p + 4, 4, f.big_endian);
				if (size > cap && !(out = realloc(out, cap = size)))
					return 1;
				size_t got = ZSTD_decompressDCtx(z, out, size, p + 8, zsize);
				if (ZSTD_isError(got) || got != size) {
					fprintf(stderr, "zstdfloor: a chunk does not decompress\n");
					return 1;
				}
				bytes += got;
				p += 8 + zsize;
			}
		}
	printf("%zu %zu\n", chunks, bytes);
	return 0;
}
