/* One step of the long-vector method (docs/theory.md#the-long-vector-method; the sequence
 * and its model in plan/longvector.h), written once against four
 * whole-vector operations that a backend supplies: on the CUDA backend they
 * are cuBLAS calls (methods/longvector/cuda/longvector.cu), the tests' plain loops on
 * the CPU (tests/unit/test_longvector_model.c), so the sequence, its ranges and
 * the border it restores are checked bit for bit against the CPU naive
 * method on a machine without a GPU. */
#ifndef PYR_METHODS_LONGVECTOR_STEP_H
#define PYR_METHODS_LONGVECTOR_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Vectors are m elements of the precision (`elem` bytes each) from the
 * given address; every operation rounds each result once. */
typedef struct {
    void *user;
    /* out = a + b (geam with alpha = beta = 1) */
    pyr_status_t (*add)(void *user, int64_t m, const void *a, const void *b, void *out);
    /* y = alpha x + y, alpha = +-1 (axpy) */
    pyr_status_t (*axpy)(void *user, int64_t m, double alpha, const void *x, void *y);
    /* x = alpha x, alpha the scheme's coefficient rounded to the precision (scal) */
    pyr_status_t (*scal)(void *user, int64_t m, double alpha, void *x);
    /* `rows` runs of `width` elements, `pitch` elements apart, from src to dst */
    pyr_status_t (*copy2d)(void *user, void *dst, const void *src, int64_t pitch, int64_t width, int64_t rows);
} pyr_lv_ops_t;

/* One step of u' = u + ((rx*((xm + xp) - (u + u)) + ry*((ym + yp) - (u + u))))
 * from layer src to layer dst over the box whose first node is element
 * `first` of the buffers (rows of `pitch` elements; the box has `rows` rows
 * of `width` nodes; the nodes around it lie in the buffers), with the work
 * buffers t and x (the same layout).  The nodes of the range between the
 * box's rows take src's values. */
pyr_status_t pyr_lv_step(const pyr_lv_ops_t *ops, size_t elem, const void *src, void *dst, void *t, void *x, int64_t first,
                         int64_t pitch, int64_t rows, int64_t width, double rx, double ry);

#ifdef __cplusplus
}
#endif

#endif
