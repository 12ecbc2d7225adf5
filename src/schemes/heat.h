/* The explicit scheme of the heat equation u_t = alpha^2 laplace(u) (SEEDS.md
 * section A, eqs. 1 and 3 and the 7-point 3D analogue), with r_d =
 * alpha^2 dt / h_d^2 per axis.  Every backend evaluates exactly
 *
 *     u' = u + ((rx*((xm + xp) - (u + u)) + ry*((ym + yp) - (u + u))) + rz*((zm + zp) - (u + u)))
 *
 * (terms of unused axes left out), in this order, without FMA contraction, so
 * results agree bit for bit across methods, plans and backends. */
#ifndef PYR_SCHEMES_HEAT_H
#define PYR_SCHEMES_HEAT_H

#include "pyrgrid.h"

typedef struct {
    int dims;
    pyr_precision_t precision;
    double r[3];
} pyr_heat_coef_t;

static inline pyr_heat_coef_t pyr_heat_coef(const pyr_problem_t *p)
{
    pyr_heat_coef_t c;
    c.dims = p->dims;
    c.precision = p->precision;
    for (int d = 0; d < 3; d++) c.r[d] = pyr_problem_r(p, d);
    return c;
}

#endif
