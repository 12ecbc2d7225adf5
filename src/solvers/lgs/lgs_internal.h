/* Internals of the line Gauss–Seidel solver shared by the CPU code and the
 * CUDA host glue (plain C: the .cu file includes it too).
 *
 * The prepared form.  Every block row i is factored once, C_i = L·U (Thomas),
 * den_k = c_k − a_k·cp_{k−1}, cp_k = b_k/den_k, and the row is scaled by
 * 1/den_k, so that one block solve is two first-order linear recurrences
 *
 *   forward:  d_k = α_k·d_{k−1} + β_k,   β_k = ((F̃_k − ÃA_k·y[i−1,k]) − B̃B_k·y[i+1,k])
 *   backward: ỹ_k = γ_k·ỹ_{k+1} + d_k
 *
 * with α_k = −a_k/den_k, F̃ = F/den, ÃA = cA/den, B̃B = cB/den, γ_k = −cp_k.
 * The A·y[i−1] term is skipped in row 0 and the B·y[i+1] term in row N−1.
 *
 * Rows are padded to mpad = nseg·S, S = 32·J (a "segment": 32 lanes of J
 * consecutive elements each); padding elements have all coefficients 0, so
 * they stay 0 and never couple to real ones.  The red–black method evaluates
 * each recurrence per segment: every lane composes its J affine maps, an
 * inclusive Kogge–Stone scan over the 32 lanes (offsets 1, 2, 4, 8, 16) gives
 * each lane its incoming value from the segment's carry, then the lane runs
 * the recurrence itself.  lgs_cpu.c and lgs_cuda.cu write these expressions
 * identically (two roundings per a·b + c, never an FMA). */
#ifndef PYR_SOLVERS_LGS_INTERNAL_H
#define PYR_SOLVERS_LGS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYR_LGS_LANES 32
#define PYR_LGS_MAX_J 8

/* J for a block of m unknowns: the smallest power of two >= m/32, at most 8. */
static inline int pyr_lgs_chunk(int64_t m)
{
    int j = 1;
    while (j < PYR_LGS_MAX_J && (int64_t)j * PYR_LGS_LANES < m) j *= 2;
    return j;
}

/* Position of natural index k inside a row of the interleaved (device)
 * layout: element (segment s, lane t, j) lives at s·S + j·32 + t. */
static inline int64_t pyr_lgs_interleave(int64_t k, int j)
{
    int64_t s = (int64_t)j * PYR_LGS_LANES;
    int64_t r = k % s;
    return k - r + (r % j) * PYR_LGS_LANES + r / j;
}

typedef struct {
    int64_t n, m;
    int j;          /* elements per lane per segment */
    int64_t seg;    /* S = 32·j */
    int64_t nseg;   /* segments per row */
    int64_t mpad;   /* nseg·S */
    /* n×mpad, natural order within a row, padding 0 */
    double *alpha, *ft, *cat, *cbt, *gam;
    /* The (possibly Jacobi-scaled) system for residuals, n×mpad, entries
     * that do not exist set to 0. */
    double *cC, *aC, *bC, *cA, *cB, *F;
    double f_norm2; /* Σ F² in the residual's summation order */
} pyr_lgs_prep_t;

/* An implementation of the iterations on one backend, registered in
 * lgs_solve.c's list (as the stencil kernels are in backend/registry.c):
 * lgs_cpu.c, and on a GPU cuda/lgs_cuda.cu.  It works on the iterate
 * y_padded (n×mpad, the caller's) from create to destroy, and leaves its
 * latest values there at download. */
typedef struct pyr_lgs_impl {
    pyr_backend_kind_t backend;
    int host_threads; /* the iterations run on the host's threads (the result says how many) */
    /* PYR_OK when this machine can run it, with the device's name in name ("" on the host); else why not. */
    pyr_status_t (*probe)(char *name, size_t size);
    pyr_status_t (*create)(const pyr_lgs_prep_t *prep, double *y_padded, pyr_lgs_ordering_t ordering, double omega, int threads,
                           void **impl);
    /* `iterations` iterations, finished when it returns. */
    pyr_status_t (*iterate)(void *impl, int64_t iterations);
    /* Per-row residual sums of squares (n values, in pyr_lgs_row_residual2's order) and their sum in row order. */
    pyr_status_t (*residual)(void *impl, double *rows, double *total);
    pyr_status_t (*download)(void *impl);
    void (*destroy)(void *impl);
} pyr_lgs_impl_t;

/* The implementation on a backend, or NULL when none is compiled in. */
const pyr_lgs_impl_t *pyr_lgs_impl_find(pyr_backend_kind_t backend);

/* Residual sum of squares of one row in the fixed order both backends use:
 * lane t = (k mod S)/J accumulates (F − ((((cA·yu + aC·yl) + cC·y) + bC·yr) + cB·yd))²
 * over its k in ascending order, then a tree over lanes (offsets 16 .. 1). */
double pyr_lgs_row_residual2(const pyr_lgs_prep_t *p, int64_t i, const double *y);

#ifdef __cplusplus
}
#endif

#endif
