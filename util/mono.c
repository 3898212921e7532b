/* mono: the monotonic clock; see mono.h. */
#include "mono.h"

#include <time.h>

uint64_t mono_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void mono_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

double mono_now_s(void)
{
	return (double)mono_now_ns() / 1e9;
}
