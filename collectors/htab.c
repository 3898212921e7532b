/* htab: the readers' small hash table; see htab.h. */
#include "htab.h"

#include <stdlib.h>

#include "../util/strbuf.h"

void htab_init(struct htab *t, size_t esize, size_t ksize)
{
	memset(t, 0, sizeof(*t));
	t->esize = esize;
	t->ksize = ksize;
	t->nslots = 64;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
}

void htab_release(struct htab *t)
{
	free(t->slots);
	free(t->entries);
	memset(t, 0, sizeof(*t));
}

/* Doubles the slots, keeping the load under one half. */
static void htab_grow(struct htab *t)
{
	size_t nslots = t->nslots * 2;
	uint32_t *slots = xcalloc(nslots, sizeof(*slots));
	for (size_t i = 0; i < t->n; i++) {
		size_t s = htab_hash(htab_entry(t, i), t->ksize) & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
}

void *htab_insert(struct htab *t, const void *key, size_t s)
{
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 16;
		t->entries = xrealloc(t->entries, t->alloc * t->esize);
	}
	void *e = htab_entry(t, t->n);
	memset(e, 0, t->esize);
	memcpy(e, key, t->ksize);
	t->slots[s] = (uint32_t)(++t->n);
	if (t->n * 2 > t->nslots)
		htab_grow(t);
	return e;
}
