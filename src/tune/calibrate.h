/* Calibration: the model's machine constants measured by short micro-runs
 * of a backend's own operations (upload, download, compute, ...) on a piece
 * of the size plans use there (the cache-sized buffer of the CPU backend, a
 * 16 Mi-value piece on a GPU). */
#ifndef PYR_TUNE_CALIBRATE_H
#define PYR_TUNE_CALIBRATE_H

#include "plan/model.h"
#include "pyrgrid.h"

typedef struct {
    pyr_backend_kind_t backend; /* cpu or cuda (auto: cuda when usable) */
    int device;
    int threads;                /* CPU threads, 0 = all */
    pyr_precision_t precision;
    int dims;                   /* 1, 2 or 3 */
    double effort;              /* 1 = default (about a second per set); less is quicker and noisier */
    pyr_equation_t equation;    /* the scheme whose kernel is timed (heat = 0) */
    char kernel[32];            /* its variant; "" = the kernel's default (what estimated plans run) */
} pyr_calibrate_opts_t;

/* Measure every constant of the model for one backend, scheme, precision and
 * dimension, with a variant of the scheme's kernel (written to kernel, may
 * be NULL): the default, or the one asked for, which a record of the wisdom
 * then makes the planner's choice.  A variant is chosen by timing on the
 * pieces of a real plan, by plan = measure.  Takes about effort seconds. */
pyr_status_t pyr_calibrate(const pyr_calibrate_opts_t *opts, pyr_model_constants_t *k, char *kernel, size_t ksize);

/* The CPU backend's default budget: its L2 cache per thread times threads. */
uint64_t pyr_cpu_cache_budget(int threads);

#endif
