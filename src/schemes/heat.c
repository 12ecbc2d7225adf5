/* The explicit scheme of the heat equation u_t = alpha^2 laplace(u)
 * (docs/theory.md#explicit-schemes: the paper's eqs. 1 and 3 and the 7-point
 * 3D analogue), with r_d = alpha^2 dt / h_d^2 per axis.  Every kernel evaluates exactly
 *
 *     u' = u + ((rx*((xm + xp) - (u + u)) + ry*((ym + yp) - (u + u))) + rz*((zm + zp) - (u + u)))
 *
 * (terms of unused axes left out), in this order, without FMA contraction, so
 * results agree bit for bit across methods, plans and backends.  u + u is
 * exact, so s - (u + u) is s - 2u rounded once, and the CUDA kernels of 1D and
 * 2D compute it as one fused multiply-add (one operation fewer per node): the
 * same value wherever u + u is finite.  Only a grid whose values pass half the
 * precision's largest number (|u| > 8.9e307 double, 1.7e38 float) could tell
 * the two apart: there the CPU's u + u overflows to an infinity. */
#include <math.h>
#include <stdio.h>

#include "core/error.h"
#include "schemes/scheme.h"

/* The heat scheme's ratio r_d of its parameters to the grid's spacing. */
double pyr_problem_r(const pyr_problem_t *p, int axis)
{
    if (axis >= p->dims) return 0.0;
    double h = pyr_problem_h(p, axis);
    return p->heat.alpha * p->heat.alpha * p->heat.dt / (h * h);
}

static pyr_status_t heat_validate(const pyr_problem_t *p)
{
    const double alpha = p->heat.alpha, dt = p->heat.dt;
    if (!isfinite(alpha) || alpha < 0)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.alpha = %g: the diffusivity must be a finite number >= 0", alpha);
    if (!isfinite(dt) || !(dt > 0))
        return pyr_fail(PYR_ERR_CONFIG, "scheme.dt = %g: the time step must be a positive finite number", dt);
    /* Stability of the explicit scheme: sum_d alpha^2 dt / h_d^2 <= 1/2. */
    double sum_r = 0, sum_inv_h2 = 0;
    for (int d = 0; d < p->dims; d++) {
        double h = pyr_problem_h(p, d);
        sum_r += pyr_problem_r(p, d);
        sum_inv_h2 += 1.0 / (h * h);
    }
    if (!isfinite(sum_r) || sum_r > 0.5) {
        double rate = alpha * alpha * sum_inv_h2, dt_max = 0.5 / rate;
        if (!isfinite(rate) || !(dt_max > 0)) { /* alpha^2 or 1/h^2 overflows: no dt is stable */
            double hmin = INFINITY;
            for (int d = 0; d < p->dims; d++)
                if (pyr_problem_h(p, d) < hmin) hmin = pyr_problem_h(p, d);
            return pyr_fail(PYR_ERR_UNSTABLE,
                            "unstable for every time step: alpha^2 * sum over axes of 1/h^2 overflows a double (alpha = %g, "
                            "smallest h = %g); use a smaller alpha, or longer axes or fewer nodes (a larger h)",
                            alpha, hmin);
        }
        return pyr_fail(PYR_ERR_UNSTABLE,
                        "unstable time step: sum over axes of alpha^2*dt/h^2 = %.6g exceeds 1/2 (dt = %g, alpha = %g); "
                        "use dt <= %.6g, or fewer nodes, or a smaller alpha",
                        sum_r, dt, alpha, dt_max);
    }
    return PYR_OK;
}

static unsigned heat_fields(const pyr_problem_t *p)
{
    (void)p;
    return 1u;
}

static void heat_coefficients(const pyr_problem_t *p, pyr_coef_t *c)
{
    c->equation = PYR_EQ_HEAT;
    c->dims = p->dims;
    c->precision = p->precision;
    for (int i = 0; i < 8; i++) c->c[i] = 0;
    for (int d = 0; d < 3; d++) c->c[d] = pyr_problem_r(p, d);
}

static int64_t heat_check_every(const pyr_problem_t *p)
{
    (void)p;
    return 0;
}

static double heat_tolerance(const pyr_problem_t *p)
{
    (void)p;
    return 0;
}

static void heat_key(const pyr_problem_t *p, char *out, size_t size)
{
    (void)p;
    if (size) out[0] = 0;
}

const pyr_scheme_t pyr_scheme_heat = {
    .equation = PYR_EQ_HEAT,
    .name = "heat",
    .nfields = 1,
    .field = {{"u", PYR_FIELD_PINGPONG}},
    .nsub = 1,
    .sub = {{.reach_lo = {1, 1, 1}, .reach_hi = {1, 1, 1}, .margin_lo = {1, 1, 1}, .margin_hi = {1, 1, 1}}},
    .reduction = PYR_REDUCE_NONE,
    .validate = heat_validate,
    .fields_used = heat_fields,
    .coefficients = heat_coefficients,
    .init_input = NULL,
    .check_every = heat_check_every,
    .tolerance = heat_tolerance,
    .key = heat_key,
};
