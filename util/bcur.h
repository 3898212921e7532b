/*
 * bcur: bounds-checked reading of a binary file format held in memory.
 *
 * The trace readers (tdat, evfmt, perfdata, the page decoder) read numbers of
 * the file's byte order at any alignment, and walk untrusted layouts where
 * every length must be checked before it is used.  A cursor's first overrun
 * sticks (`bad`), so a parser reads a whole header and checks once; `base` is
 * the file offset of p[0] for messages ("at offset N").
 */
#ifndef TA_BCUR_H
#define TA_BCUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct bcur {
	const unsigned char *p;
	size_t len, pos;
	uint64_t base;		/* file offset of p[0] (0 for decompressed data) */
	bool big_endian;	/* the data's byte order */
	bool bad;		/* a read ran past len */
};

/* A 1, 2, 4 or 8-byte number at p, byte-swapped when swap (no alignment needed). */
static inline uint64_t bcur_load(const void *p, int size, bool swap)
{
	uint8_t v1;
	uint16_t v2;
	uint32_t v4;
	uint64_t v8;
	switch (size) {
	case 1:
		memcpy(&v1, p, 1);
		return v1;
	case 2:
		memcpy(&v2, p, 2);
		return swap ? __builtin_bswap16(v2) : v2;
	case 4:
		memcpy(&v4, p, 4);
		return swap ? __builtin_bswap32(v4) : v4;
	default:
		memcpy(&v8, p, 8);
		return swap ? __builtin_bswap64(v8) : v8;
	}
}

/* True when data of this byte order must be swapped on this host. */
static inline bool bcur_swap(bool big_endian)
{
	return big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

/* A number of the given byte order at p (size 1, 2, 4 or 8). */
static inline uint64_t bcur_num_at(const void *p, int size, bool big_endian)
{
	return bcur_load(p, size, bcur_swap(big_endian));
}

/* The next size-byte number (0 once bad). */
uint64_t bcur_num(struct bcur *c, int size);
/* The next n bytes in place, or NULL (and bad) when fewer are left. */
const unsigned char *bcur_bytes(struct bcur *c, uint64_t n);
/* The next NUL-terminated string in place, or NULL (and bad) when unterminated. */
const char *bcur_str(struct bcur *c);
/* File offset of the cursor, for messages. */
uint64_t bcur_offset(const struct bcur *c);

#endif
