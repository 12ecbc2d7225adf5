/* The Poisson equation -laplace(u) = f with Dirichlet boundary (the boundary
 * nodes keep the initial field's values), solved by Jacobi sweeps
 * (docs/theory.md#the-pyramid-method-for-jacobi-sweeps).  Every kernel evaluates exactly
 *
 *     s  = (cx*(xm + xp) + cy*(ym + yp)) + cz*(zm + zp)     (terms of unused axes left out)
 *     J  = (s + f) * d          (J = s * d when f = 0: no f is stored or moved)
 *     u' = J                    (omega = 1)
 *     u' = u + omega*(J - u)    (omega != 1)
 *     u' = p + w*(J - p)        (Chebyshev, w != 1: p the layer two sweeps back, schemes/poisson.h)
 *
 * with c_a = 1/h_a^2, d = 1 / sum_a 2/h_a^2 and the sweep's weight w rounded
 * once to the precision, in this order, without FMA contraction, so results
 * agree bit for bit across methods, plans and backends.  With equal spacings
 * this is the paper's (1/6)(six neighbours + h^2 f).
 *
 * Stopping: every check_every sweeps the max-norm of the last sweep's change
 * max |u' - u| is reduced over the grid (exactly: a maximum does not depend
 * on the order of its terms); the run stops at the first check below the
 * tolerance.  Passes of the pyramid method end at the checks, so the result
 * and the sweep count depend only on the problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/field.h"
#include "io/field_file.h"
#include "io/npy.h"
#include "io/npy_part.h"
#include "schemes/poisson.h"
#include "schemes/scheme.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The spectral radius of the plain Jacobi iteration for the Dirichlet
 * Laplacian on the whole grid: its eigenvalues are
 * sum_a c_a cos(k_a pi / (N_a - 1)) / sum_a c_a with c_a = 1/h_a^2, k_a = 1
 * .. N_a - 2 (N_a nodes along axis a, boundary included), so the largest in
 * magnitude is rho = sum_a c_a cos(pi / (N_a - 1)) / sum_a c_a. */
double pyr_poisson_jacobi_radius(const pyr_problem_t *p)
{
    double num = 0, den = 0;
    for (int d = 0; d < p->dims; d++) {
        const double h = pyr_problem_h(p, d), c = 1.0 / (h * h);
        const int64_t n = pyr_problem_whole(p, d);
        num += c * (n > 2 ? cos(M_PI / (double)(n - 1)) : 0.0);
        den += c;
    }
    return den > 0 ? num / den : 0;
}

static double jacobi_radius(const pyr_problem_t *p) { return pyr_poisson_jacobi_radius(p); }

/* Chebyshev's weights (schemes/poisson.h): they fall from w_2 towards
 * 2 / (1 + sqrt(1 - rho^2)), reached in double after about 6 (N - 1)
 * sweeps on a grid of N nodes along its longest axis; the table ends where
 * a weight no longer falls, so every later sweep takes its last entry. */
#define CHEBYSHEV_MAX_WEIGHTS ((int64_t)1 << 20)

pyr_status_t pyr_poisson_chebyshev_weights(double rho, double **w, int64_t *n)
{
    *w = NULL;
    *n = 0;
    if (!(rho >= 0 && rho < 1)) return pyr_fail(PYR_ERR_INTERNAL, "Chebyshev weights for a Jacobi radius of %g (needs 0 <= rho < 1)", rho);
    const double r = rho * rho;
    int64_t cap = 64, k = 1;
    double *t = malloc((size_t)cap * sizeof *t);
    if (!t) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    t[0] = 1.0;
    for (;;) {
        const double next = k == 1 ? 1.0 / (1.0 - r / 2.0) : 1.0 / (1.0 - r * t[k - 1] / 4.0);
        if (k >= 2 && !(next < t[k - 1])) break;
        if (k == CHEBYSHEV_MAX_WEIGHTS) break;
        if (k == cap) {
            double *g = realloc(t, (size_t)(2 * cap) * sizeof *t);
            if (!g) {
                free(t);
                return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
            }
            t = g;
            cap *= 2;
        }
        t[k++] = next;
        if (k == 2 && !(next > 1.0)) break; /* rho = 0: every weight is 1 */
    }
    *w = t;
    *n = k;
    return PYR_OK;
}

/* Whether the problem's sweeps are Chebyshev's (scheme.iteration).  They
 * need the layer two sweeps back in the output buffer at every sweep, which
 * only the in-core plan (one resident piece over the whole run) keeps: the
 * streaming methods, the parts of several devices and a restart refuse them
 * (docs/poisson.md). */
static int poisson_chebyshev(const pyr_problem_t *p) { return p->poisson.iteration == PYR_ITER_CHEBYSHEV; }

/* Damped Jacobi u + omega (J - u) has the eigenvalues 1 - omega (1 - mu) for
 * mu in [-rho, rho]: it converges for every 0 < omega <= 1 and above 1 only
 * while omega < 2 / (1 + rho), which is barely above 1 on a fine grid. */
double pyr_poisson_omega_limit(const pyr_problem_t *p) { return 2.0 / (1.0 + jacobi_radius(p)); }

static pyr_status_t poisson_validate(const pyr_problem_t *p)
{
    const pyr_poisson_params_t *q = &p->poisson;
    if (!isfinite(q->omega) || !(q->omega > 0) || !(q->omega < 2))
        return pyr_fail(PYR_ERR_CONFIG, "scheme.omega = %g: damped Jacobi converges only for 0 < omega < 2 / (1 + rho) "
                                        "(rho the plain Jacobi iteration's spectral radius, below 1); use omega = 1 (plain Jacobi) "
                                        "or below 1 to damp",
                        q->omega);
    if (poisson_chebyshev(p) && q->omega != 1)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.omega = %g with Chebyshev-accelerated sweeps: the acceleration chooses every sweep's "
                                        "weight itself; leave omega = 1, or choose plain Jacobi to damp it",
                        q->omega);
    if (!isfinite(q->tolerance) || q->tolerance < 0)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.tolerance = %g: use a positive tolerance (or 0 to run all iterations)", q->tolerance);
    if (p->steps < 1)
        return pyr_fail(PYR_ERR_CONFIG,
                        "scheme.iterations = %lld: the Poisson solver needs the most sweeps to run (>= 1); "
                        "give iterations = N, with tolerance = EPS to stop earlier",
                        (long long)p->steps);
    if (q->check_every < 1)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.check_every = %lld: use a number of sweeps >= 1 between convergence checks (e.g. 20)",
                        (long long)q->check_every);
    if (q->rhs < PYR_RHS_ZERO || q->rhs > PYR_RHS_FILE) return pyr_fail(PYR_ERR_CONFIG, "rhs.kind: unknown right-hand side");
    if (q->rhs == PYR_RHS_FILE && q->rhs_file[0] == 0) return pyr_fail(PYR_ERR_CONFIG, "rhs.kind = file needs rhs.file = PATH.npy");
    double s = 0;
    for (int d = 0; d < p->dims; d++) {
        double h = pyr_problem_h(p, d);
        s += 2.0 / (h * h);
    }
    if (!isfinite(s) || !(s > 0))
        return pyr_fail(PYR_ERR_CONFIG, "grid spacings this small make 1/h^2 overflow; use larger lengths or fewer nodes");
    const double limit = pyr_poisson_omega_limit(p);
    if (q->omega > 1 && !(q->omega < limit)) {
        char grid[80];
        int k = snprintf(grid, sizeof grid, "%lld", (long long)pyr_problem_whole(p, 0));
        for (int d = 1; d < p->dims && k > 0 && k < (int)sizeof grid; d++)
            k += snprintf(grid + k, sizeof grid - (size_t)k, " x %lld", (long long)pyr_problem_whole(p, d));
        return pyr_fail(PYR_ERR_CONFIG,
                        "scheme.omega = %.17g: damped Jacobi on this %s grid converges only for 0 < omega < %.9g "
                        "(= 2 / (1 + rho), rho = %.9g the plain Jacobi iteration's spectral radius there); above that every "
                        "sweep grows the error until the field overflows. omega > 1 never speeds Jacobi up: use omega = 1 "
                        "(plain Jacobi) or below 1 to damp",
                        q->omega, grid, limit, jacobi_radius(p));
    }
    return PYR_OK;
}

static unsigned poisson_fields(const pyr_problem_t *p) { return p->poisson.rhs == PYR_RHS_ZERO ? 1u : 3u; }

static void poisson_coefficients(const pyr_problem_t *p, pyr_coef_t *c)
{
    c->equation = PYR_EQ_POISSON;
    c->dims = p->dims;
    c->precision = p->precision;
    for (int i = 0; i < 8; i++) c->c[i] = 0;
    double s = 0;
    for (int d = 0; d < p->dims; d++) {
        double h = pyr_problem_h(p, d);
        c->c[d] = 1.0 / (h * h);
        s += 2.0 / (h * h);
    }
    c->c[3] = 1.0 / s;
    c->c[4] = p->poisson.omega;
    c->c[5] = p->poisson.rhs != PYR_RHS_ZERO;
    c->c[PYR_POISSON_CHEBYSHEV_COEF] = poisson_chebyshev(p);
}

static pyr_status_t poisson_aux_coefficients(const pyr_problem_t *p, double **aux, int64_t *naux)
{
    *aux = NULL;
    *naux = 0;
    return poisson_chebyshev(p) ? pyr_poisson_chebyshev_weights(jacobi_radius(p), aux, naux) : PYR_OK;
}

static pyr_status_t check_finite(const pyr_field_t *f, const char *what, const int64_t origin[3])
{
    const int64_t n = pyr_field_count(f);
    for (int64_t i = 0; i < n; i++) {
        double v = f->precision == PYR_DOUBLE ? ((const double *)f->data)[i] : (double)((const float *)f->data)[i];
        if (!isfinite(v)) {
            int64_t x = origin[0] + i % f->n[0], y = origin[1] + (i / f->n[0]) % f->n[1], z = origin[2] + i / (f->n[0] * f->n[1]);
            return pyr_fail(PYR_ERR_FORMAT, "%s holds %s at node (x=%lld, y=%lld, z=%lld), flat index %lld; every value must be finite",
                            what, isnan(v) ? "NaN" : "an infinity", (long long)x, (long long)y, (long long)z,
                            (long long)((z * f->n[1] + y) * f->n[0] + x));
        }
    }
    return PYR_OK;
}

/* f over the nodes origin .. origin + f->n - 1 of the grid (the whole grid,
 * or a part of it: several devices or MPI ranks make only theirs). */
static pyr_status_t poisson_init_input_part(const pyr_problem_t *p, int i, const int64_t origin[3], pyr_field_t *f)
{
    (void)i;
    for (int d = 0; d < 3; d++)
        if (origin[d] < 0 || f->n[d] < 1 || origin[d] + f->n[d] > p->n[d])
            return pyr_fail(PYR_ERR_ARG, "f: field shape does not match the problem");
    if (f->precision != p->precision) return pyr_fail(PYR_ERR_ARG, "f: field precision does not match the problem");
    const int64_t nx = f->n[0], ny = f->n[1], nz = f->n[2];
    if (p->poisson.rhs == PYR_RHS_FILE) {
        /* .npy, or an HDF5 file's dataset "f" (a pyrgrid result holds it); a part reads only its hyperslab */
        int whole = 1;
        for (int d = 0; d < 3; d++) whole = whole && origin[d] == 0 && f->n[d] == p->n[d];
        pyr_status_t st = whole ? pyr_field_read_file(f, p->poisson.rhs_file, "f") : pyr_field_read_part(f, p->dims, p->n, p->poisson.rhs_file, "f", origin);
        if (st != PYR_OK) return pyr_fail_context(st, "rhs.file: ");
        char what[PYR_PATH_MAX + 16];
        snprintf(what, sizeof what, "rhs.file %s", p->poisson.rhs_file);
        return check_finite(f, what, origin);
    }
    /* zero, or the sine mode's right-hand side: separable, one sin per node and axis */
    double *sx[3] = {NULL, NULL, NULL};
    double k2 = 0;
    for (int d = 0; d < 3; d++) {
        sx[d] = malloc((size_t)f->n[d] * sizeof(double));
        if (!sx[d]) {
            for (int e = 0; e < d; e++) free(sx[e]);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        }
        for (int64_t j = 0; j < f->n[d]; j++)
            sx[d][j] = d < p->dims ? sin(M_PI * (double)(origin[d] + j) / (double)(p->n[d] - 1)) : 1.0;
        if (d < p->dims) k2 += (M_PI / p->length[d]) * (M_PI / p->length[d]);
    }
    const double scale = p->poisson.rhs == PYR_RHS_SINE ? k2 : 0.0;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++) {
            const double yz = scale * sx[2][z] * sx[1][y];
            const int64_t row = (z * ny + y) * nx;
            if (f->precision == PYR_DOUBLE)
                for (int64_t x = 0; x < nx; x++) ((double *)f->data)[row + x] = yz * sx[0][x];
            else
                for (int64_t x = 0; x < nx; x++) ((float *)f->data)[row + x] = (float)(yz * sx[0][x]);
        }
    for (int d = 0; d < 3; d++) free(sx[d]);
    return PYR_OK;
}

static pyr_status_t poisson_init_input(const pyr_problem_t *p, int i, pyr_field_t *f)
{
    for (int d = 0; d < 3; d++)
        if (f->n[d] != p->n[d]) return pyr_fail(PYR_ERR_ARG, "f: field shape does not match the problem");
    const int64_t zero[3] = {0, 0, 0};
    return poisson_init_input_part(p, i, zero, f);
}

static int64_t poisson_check_every(const pyr_problem_t *p) { return p->poisson.check_every; }
static double poisson_tolerance(const pyr_problem_t *p) { return p->poisson.tolerance; }

static void poisson_key(const pyr_problem_t *p, char *out, size_t size)
{
    snprintf(out, size, "%s", p->poisson.rhs == PYR_RHS_ZERO ? "f=0" : "f");
}

const pyr_scheme_t pyr_scheme_poisson = {
    .equation = PYR_EQ_POISSON,
    .name = "poisson",
    .nfields = 2,
    .field = {{"u", PYR_FIELD_PINGPONG}, {"f", PYR_FIELD_INPUT}},
    .nsub = 1,
    .sub = {{.reach_lo = {1, 1, 1}, .reach_hi = {1, 1, 1}, .margin_lo = {1, 1, 1}, .margin_hi = {1, 1, 1}}},
    .reduction = PYR_REDUCE_MAX_CHANGE,
    .reads_previous = poisson_chebyshev,
    .validate = poisson_validate,
    .fields_used = poisson_fields,
    .coefficients = poisson_coefficients,
    .aux_coefficients = poisson_aux_coefficients,
    .init_input = poisson_init_input,
    .init_input_part = poisson_init_input_part,
    .check_every = poisson_check_every,
    .tolerance = poisson_tolerance,
    .key = poisson_key,
};
