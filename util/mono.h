/*
 * mono: the monotonic clock, for timeouts, deadlines and durations (never
 * wall time, which jumps).  One reading each way the tree needs it.
 */
#ifndef TA_MONO_H
#define TA_MONO_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
double mono_now_s(void);
/* The same in nanoseconds. */
uint64_t mono_now_ns(void);
/* Sleeps ms milliseconds (a signal may end it early). */
void mono_sleep_ms(long ms);

/*
 * A condition variable whose timed waits run on this clock, so that a
 * change of the wall clock neither stretches nor cuts them; wait on it
 * with pthread_cond_timedwait up to a mono_deadline_us.
 */
void mono_cond_init(pthread_cond_t *c);
/* The absolute time us microseconds from now, on this clock. */
struct timespec mono_deadline_us(long us);

#endif
