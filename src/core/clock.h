/* The library's one wall clock: seconds on CLOCK_MONOTONIC. */
#ifndef PYR_CORE_CLOCK_H
#define PYR_CORE_CLOCK_H

#include <time.h>

static inline double pyr_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
