/* One step of the long-vector method (see longvector_step.h).
 *
 * Why each operation reproduces the stencil kernels' rounding: add is
 * round(a + b); axpy with alpha = -1 is round(y - x) and with alpha = +1
 * round(y + x), whether the library multiplies first (1*x is exact) or fuses
 * (an FMA rounds once); scal is round(r * x); a - b is a + (-b) and a + b is
 * b + a in IEEE arithmetic.  So the sequence computes, node by node, the
 * same roundings in the same places as src/schemes/heat.c's expression. */
#include "methods/longvector/longvector_step.h"

#include "core/error.h"
#include "plan/longvector.h"

pyr_status_t pyr_lv_step(const pyr_lv_ops_t *ops, size_t elem, const void *src, void *dst, void *t, void *x, int64_t first,
                         int64_t pitch, int64_t rows, int64_t width, double rx, double ry)
{
    const int64_t m = pyr_lv_length(rows, width, pitch);
    if (m <= 0) return PYR_OK;
    const int64_t e = (int64_t)elem;
    const char *v = (const char *)src + first * e;
    char *w = (char *)dst + first * e, *tt = (char *)t + first * e, *xx = (char *)x + first * e;
    void *u = ops->user;
    PYR_TRY(ops->add(u, m, v, v, tt));                         /* t = u + u */
    PYR_TRY(ops->add(u, m, v - e, v + e, w));                  /* w = xm + xp */
    PYR_TRY(ops->axpy(u, m, -1.0, tt, w));                     /* w = (xm + xp) - (u + u) */
    PYR_TRY(ops->scal(u, m, rx, w));                           /* w = rx*(...) */
    PYR_TRY(ops->add(u, m, v - pitch * e, v + pitch * e, xx)); /* x = ym + yp */
    PYR_TRY(ops->axpy(u, m, -1.0, tt, xx));                    /* x = (ym + yp) - (u + u) */
    PYR_TRY(ops->scal(u, m, ry, xx));                          /* x = ry*(...) */
    PYR_TRY(ops->axpy(u, m, 1.0, xx, w));                      /* w = rx*(...) + ry*(...) */
    PYR_TRY(ops->axpy(u, m, 1.0, v, w));                       /* w = u + (...) */
    /* the nodes between the box's rows (right of row j, the row padding, left of row j + 1) as they were */
    if (rows > 1) PYR_TRY(ops->copy2d(u, w + width * e, v + width * e, pitch, pitch - width, rows - 1));
    return PYR_OK;
}
