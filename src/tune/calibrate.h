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
    struct pyr_calibrate_pass *pass; /* may be NULL: receives what the pass of cubes measured (below) */
    int64_t *lv_threads;        /* may be NULL: the GPU's resident threads where the long-vector constants were
                                   measured (the CUDA 2D heat set), else 0 */
} pyr_calibrate_opts_t;

/* The pass of cubes timed for up_row_both (pyr_calibrate_pass): n = 0 when none ran. */
typedef struct pyr_calibrate_pass {
    int64_t n, height;      /* an n^3 grid, the pass's height */
    double measured;        /* seconds per pass, best of two runs of three timed passes */
    double model;           /* the model's seconds per pass without up_row_both */
    int fitted;             /* 0: slower than this cost can make it (uploads beside downloads at half their rate): left 0 */
    char note[200];         /* why none ran where memory was short (the calibration goes on without it), else "" */
} pyr_calibrate_pass_t;

/* The backend a calibration for `backend` measures (auto: CUDA where a GPU
 * is usable, else the CPU), refused with PYR_ERR_NODEVICE where it was not
 * built or has no usable device. */
pyr_status_t pyr_calibrate_backend(pyr_backend_kind_t backend, pyr_backend_kind_t *kind);

/* The plain problem of a scheme, dimension and precision whose
 * coefficients and fields the micro-runs use (unit-spaced, 11 nodes an axis),
 * as the scheme validates it: PYR_ERR_UNSUPPORTED with the scheme's reason
 * where it takes no grid of that dimension. */
pyr_status_t pyr_calibrate_problem(pyr_equation_t equation, int dims, pyr_precision_t precision, pyr_problem_t *q);

/* What pyr_calibrate checks before it measures anything: the dimension, the
 * backend (built, usable), the scheme's problem (pyr_calibrate_problem), a
 * kernel of the scheme on the backend and the variant asked for.
 * PYR_ERR_UNSUPPORTED where the set does not exist (the scheme takes no grid
 * of that dimension, the backend has no kernel for it); other errors for
 * what the options ask that cannot be (a variant the kernel lacks).  The
 * message says which. */
pyr_status_t pyr_calibrate_check(const pyr_calibrate_opts_t *o);

/* Measure every constant of the model for one backend, scheme, precision and
 * dimension, with a variant of the scheme's kernel (written to kernel, may
 * be NULL): the default, or the one asked for, which a record of the wisdom
 * then makes the planner's choice.  A variant is chosen by timing on the
 * pieces of a real plan, by plan = measure.  Takes about effort seconds. */
pyr_status_t pyr_calibrate(const pyr_calibrate_opts_t *opts, pyr_model_constants_t *k, char *kernel, size_t ksize);

/* The part-row upload cost beside downloads that only a real pass shows
 * (model.h: up_row_both): on backends whose slots copy concurrently from the
 * user's pinned grid, for 3D, a short pass of cubes on a grid of about 1 GiB
 * at a quarter of it on the device, with the scheme and kernel variant of
 * the record and k's other constants, fitted into k->up_row_both (0 where
 * the model already prices the pass as slow, where the pass ran slower than
 * it can explain, and elsewhere); what it timed in *out (may be NULL).  A
 * few seconds. */
pyr_status_t pyr_calibrate_pass(const pyr_calibrate_opts_t *o, const char *kernel, pyr_model_constants_t *k, pyr_calibrate_pass_t *out);

/* The CPU backend's default budget: its L2 cache per thread times threads. */
uint64_t pyr_cpu_cache_budget(int threads);

#endif
