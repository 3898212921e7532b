/*
 * mono: the monotonic clock, for timeouts, deadlines and durations (never
 * wall time, which jumps).  One reading each way the tree needs it.
 */
#ifndef TA_MONO_H
#define TA_MONO_H

#include <stdint.h>

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
double mono_now_s(void);
/* The same in nanoseconds. */
uint64_t mono_now_ns(void);
/* Sleeps ms milliseconds (a signal may end it early). */
void mono_sleep_ms(long ms);

#endif
