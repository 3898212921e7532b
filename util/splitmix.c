/* splitmix: splitmix64; see splitmix.h. */
#include "splitmix.h"

#include <assert.h>

uint64_t splitmix64_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

size_t splitmix64_below(uint64_t *state, size_t n)
{
	assert(n > 0);
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t r;
	do
		r = splitmix64_next(state);
	while (r >= limit);
	return (size_t)(r % n);
}
