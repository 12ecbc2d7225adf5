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
    /* the lane (device.c): copies issued there, run when a slot waits for them */
    struct pyr_cpu_lane_op *lane_q;
    int lane_n, lane_cap, lane_done;
    int lane_mark[4]; /* per mark kind (PYR_MARKS, checked in device.c): ops issued on the lane at its last mark */
    /* the Maxwell kernel's order of the last list of sources it ran (kernels_maxwell.c), under its sources_id */
    uint64_t src_id;
    int *src_order;
} pyr_cpu_ctx_t;

#endif
