/*
 * splitmix: splitmix64 (Steele, Lea and Flood; Vigna's constants), a small,
 * fully specified generator: the same seed gives the same numbers on every
 * host and build, so a stored seed replays a plan's run order exactly, and
 * it seeds the statistics' xoshiro generator (decide/stats.h).
 */
#ifndef TA_SPLITMIX_H
#define TA_SPLITMIX_H

#include <stddef.h>
#include <stdint.h>

/* The next number of the sequence whose state is *state (advanced). */
uint64_t splitmix64_next(uint64_t *state);
/* Uniform in [0, n) without modulo bias (rejection); n > 0. */
size_t splitmix64_below(uint64_t *state, size_t n);

#endif
