/* Timing of pyramid passes for GPU tests and benchmarks: a progress hook that
 * notes the wall time and the serial-mode stats of the GPU `gpu` (held by the
 * caller, cuda_api.h) at the first and the last progress call (pass ends), so
 * pinning the grid and the first pass stay out of what is measured. */
#ifndef PYR_TESTS_PASS_CLOCK_H
#define PYR_TESTS_PASS_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "backend/cuda/cuda_api.h"

typedef struct {
    struct pyr_device *gpu;
    double t_first, t_last;
    int calls;
    pyr_cuda_stats_t at_first, at_last;
} pass_clock_t;

static inline double pass_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A pyr_hooks_t progress callback; user = a pass_clock_t, zero but for gpu. */
static inline int pass_clock_hook(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    pass_clock_t *c = user;
    double t = pass_clock_now();
    if (c->calls++ == 0) {
        c->t_first = t;
        pyr_cuda_get_stats(c->gpu, &c->at_first);
    }
    c->t_last = t;
    pyr_cuda_get_stats(c->gpu, &c->at_last);
    return 0;
}

#endif
