/*
 * htab: the small open-addressing hash table the readers share, keyed by a
 * pid or tgid (4 bytes) or by a key of whole 8-byte words: gang.c's runners,
 * processes and exit reasons, perfdata.c's thread names, live.c's pid ->
 * tgid cache.
 *
 * Fixed-size entries whose first ksize bytes are the key live in one array
 * (a snapshot is a copy; an entry's index never changes, its address may
 * when the array grows); slots hold entry index + 1, 0 meaning empty.
 * Nothing is ever deleted, which keeps probing trivial.  Look-ups are
 * inlined with the caller's constant key size, so hashing and comparing
 * compile to straight-line code on the per-event path.
 */
#ifndef TA_HTAB_H
#define TA_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct htab {
	uint32_t *slots;
	size_t nslots;		/* power of two */
	char *entries;
	size_t esize, ksize;
	size_t n, alloc;
};

void htab_init(struct htab *t, size_t esize, size_t ksize);
void htab_release(struct htab *t);
/* Adds key at empty slot s (found by htab_find); returns the zeroed entry. */
void *htab_insert(struct htab *t, const void *key, size_t s);

/* Keys are 4 bytes or whole 8-byte words: mix words, not bytes. */
static inline uint64_t htab_hash(const void *key, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL * (len + 1);
	if (len == 4) {
		uint32_t k;
		memcpy(&k, key, 4);
		h ^= k;
	} else {
		for (size_t i = 0; i + 8 <= len; i += 8) {
			uint64_t k;
			memcpy(&k, (const char *)key + i, 8);
			h = (h ^ k) * 0xff51afd7ed558ccdULL;
			h ^= h >> 29;
		}
	}
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 32;
	return h;
}

static inline bool htab_key_eq(const void *a, const void *b, size_t len)
{
	if (len == 4) {
		uint32_t x, y;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		return x == y;
	}
	uint64_t diff = 0;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t x, y;
		memcpy(&x, (const char *)a + i, 8);
		memcpy(&y, (const char *)b + i, 8);
		diff |= x ^ y;
	}
	return diff == 0;
}

/* Entry i (0 <= i < t->n). */
static inline void *htab_entry(const struct htab *t, size_t i)
{
	return t->entries + i * t->esize;
}

/* The entry with this key, or NULL with *slot the empty slot it would take. */
static inline __attribute__((always_inline)) void *htab_find(const struct htab *t,
							      const void *key, size_t ksize,
							      size_t *slot)
{
	size_t s = htab_hash(key, ksize) & (t->nslots - 1);
	while (t->slots[s]) {
		void *e = htab_entry(t, t->slots[s] - 1);
		if (htab_key_eq(e, key, ksize))
			return e;
		s = (s + 1) & (t->nslots - 1);
	}
	*slot = s;
	return NULL;
}

/* The entry with this key, created zeroed (but for the key) when missing. */
static inline __attribute__((always_inline)) void *htab_get(struct htab *t, const void *key,
							     size_t ksize)
{
	size_t s = 0;	/* set by htab_find when it finds nothing */
	void *e = htab_find(t, key, ksize, &s);
	return e ? e : htab_insert(t, key, s);
}

#endif
