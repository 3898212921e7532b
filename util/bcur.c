/* bcur: bounds-checked binary reading; see bcur.h. */
#include "bcur.h"

uint64_t bcur_num(struct bcur *c, int size)
{
	if (c->bad || c->len - c->pos < (size_t)size) {
		c->bad = true;
		return 0;
	}
	uint64_t v = bcur_num_at(c->p + c->pos, size, c->big_endian);
	c->pos += size;
	return v;
}

const unsigned char *bcur_bytes(struct bcur *c, uint64_t n)
{
	if (c->bad || c->len - c->pos < n) {
		c->bad = true;
		return NULL;
	}
	const unsigned char *p = c->p + c->pos;
	c->pos += n;
	return p;
}

const char *bcur_str(struct bcur *c)
{
	if (c->bad)
		return NULL;
	const unsigned char *end = memchr(c->p + c->pos, '\0', c->len - c->pos);
	if (!end) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p + c->pos;
	c->pos = end - c->p + 1;
	return s;
}

uint64_t bcur_offset(const struct bcur *c)
{
	return c->base + c->pos;
}
