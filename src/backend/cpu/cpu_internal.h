/* The CPU runtime's context, shared with the CPU kernels. */
#ifndef PYR_BACKEND_CPU_INTERNAL_H
#define PYR_BACKEND_CPU_INTERNAL_H

#include <stdint.h>

#include "pyrgrid.h"

typedef struct {
    int threads;
    pyr_precision_t precision;
    size_t elem;
    uint64_t llc_bytes; /* downloads into regions larger than the LLC bypass the cache */
    int64_t l2_bytes;   /* per core: the wavefront's tiles are sized to it */
} pyr_cpu_ctx_t;

#endif
