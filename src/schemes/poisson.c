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
 * Neumann faces ([boundary] x- = neumann G; docs/poisson.md): the face's
 * nodes are unknowns, and where a node's neighbour along the face's axis
 * lies outside the grid the kernel reads a ghost reflected through the node,
 *
 *     ghost = inner + t         (inner the neighbour inside, t = 2 h_a G rounded once)
 *
 * for du/dn = G (the outward normal derivative), in place of that
 * neighbour in s; the rest of the expression is the same.  Pure Neumann
 * problems (every face Neumann) run the sweeps damped by a fixed gamma
 * (schemes/poisson.h), Chebyshev's as u' = p + w*((u + gamma*(J - u)) - p).
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

/* The spectral radius of the plain Jacobi iteration on the whole grid: its
 * eigenvalues are sum_a c_a m_a / sum_a c_a with c_a = 1/h_a^2 and m_a an
 * eigenvalue of the 1D Jacobi matrix along axis a (N_a nodes, boundary
 * included): cos(k pi / (N_a - 1)), k = 1 .. N_a - 2, between two Dirichlet
 * faces; cos((2k + 1) pi / (2 (N_a - 1))), k = 0 .. N_a - 2, between a
 * Dirichlet and a Neumann face (the ghost reflection makes the node's
 * neighbour its mirror); cos(k pi / (N_a - 1)), k = 0 .. N_a - 1, between
 * two Neumann faces.  The spectrum is symmetric (the grid is bipartite), so
 * rho = sum_a c_a r_a / sum_a c_a with r_a the largest m_a: 1 on an axis
 * between two Neumann faces, and rho = 1 exactly when every face is one. */
static int face_neumann(const pyr_problem_t *p, int a, int high)
{
    return a < p->dims && p->poisson.face[2 * a + high] == PYR_FACE_NEUMANN;
}

static double axis_radius(const pyr_problem_t *p, int a)
{
    const int64_t n = pyr_problem_whole(p, a);
    const int k = face_neumann(p, a, 0) + face_neumann(p, a, 1);
    if (k == 2) return 1.0;
    if (k == 1) return cos(M_PI / (2.0 * (double)(n - 1)));
    return n > 2 ? cos(M_PI / (double)(n - 1)) : 0.0;
}

double pyr_poisson_jacobi_radius(const pyr_problem_t *p)
{
    double num = 0, den = 0;
    for (int d = 0; d < p->dims; d++) {
        const double h = pyr_problem_h(p, d), c = 1.0 / (h * h);
        num += c * axis_radius(p, d);
        den += c;
    }
    return den > 0 ? num / den : 0;
}

int pyr_poisson_pure_neumann(const pyr_problem_t *p)
{
    for (int a = 0; a < p->dims; a++)
        if (!face_neumann(p, a, 0) || !face_neumann(p, a, 1)) return 0;
    return 1;
}

int pyr_poisson_has_neumann(const pyr_problem_t *p)
{
    for (int a = 0; a < p->dims; a++)
        if (face_neumann(p, a, 0) || face_neumann(p, a, 1)) return 1;
    return 0;
}

/* Pure Neumann: the eigenvalues 1 (constants) and -1 (the checkerboard)
 * aside, the largest is one axis's k = 1 with every other k = 0: rho' =
 * 1 - min_b c_b (1 - cos(pi / (N_b - 1))) / sum_a c_a. */
static double neumann_inner_radius(const pyr_problem_t *p)
{
    double den = 0, least = -1;
    for (int d = 0; d < p->dims; d++) {
        const double h = pyr_problem_h(p, d), c = 1.0 / (h * h);
        const double gap = c * (1.0 - cos(M_PI / (double)(pyr_problem_whole(p, d) - 1)));
        if (least < 0 || gap < least) least = gap;
        den += c;
    }
    return den > 0 ? 1.0 - least / den : 0;
}

double pyr_poisson_neumann_gamma(const pyr_problem_t *p) { return 2.0 / (3.0 - neumann_inner_radius(p)); }

static double jacobi_radius(const pyr_problem_t *p) { return pyr_poisson_jacobi_radius(p); }

/* The radius the Chebyshev weights are made for: plain Jacobi's, or for a
 * pure Neumann problem the damped iteration's on the compatible subspace:
 * gamma maps [-1, rho'] onto [-sigma, sigma], sigma = (1 + rho') / (3 - rho'). */
static double chebyshev_radius(const pyr_problem_t *p)
{
    if (!pyr_poisson_pure_neumann(p)) return jacobi_radius(p);
    const double r = neumann_inner_radius(p);
    return (1.0 + r) / (3.0 - r);
}

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

static const char *const face_names[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};

/* The trapezoid-weighted sum of f over the whole grid (weights prod_a h_a,
 * halved at each end of every axis): the discrete integral that the ghost
 * reflection's equations add up to.  *size gets the sum of |f| alike.  f:
 * the field (rhs file), or NULL for the analytic right-hand sides. */
static void weighted_sum(const pyr_problem_t *p, const pyr_field_t *f, double *sum, double *size)
{
    *sum = *size = 0;
    if (!f && p->poisson.rhs == PYR_RHS_SINE) {
        /* separable: prod_a (sum_i w_i sin(pi i / (N_a - 1))), all terms >= 0 */
        double prod = 1, k2 = 0;
        for (int a = 0; a < p->dims; a++) {
            const int64_t n = p->n[a];
            const double h = pyr_problem_h(p, a);
            double t = 0;
            for (int64_t i = 0; i < n; i++) t += (i == 0 || i == n - 1 ? 0.5 * h : h) * sin(M_PI * (double)i / (double)(n - 1));
            prod *= t;
            k2 += (M_PI / p->length[a]) * (M_PI / p->length[a]);
        }
        *sum = *size = k2 * prod;
        return;
    }
    if (!f) return;
    const int64_t nx = p->n[0], ny = p->n[1], nz = p->n[2];
    const double hx = pyr_problem_h(p, 0), hy = p->dims > 1 ? pyr_problem_h(p, 1) : 1, hz = p->dims > 2 ? pyr_problem_h(p, 2) : 1;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++) {
            const double wyz = (p->dims > 2 && (z == 0 || z == nz - 1) ? 0.5 * hz : hz) * (p->dims > 1 && (y == 0 || y == ny - 1) ? 0.5 * hy : hy);
            double row = 0, arow = 0;
            for (int64_t x = 0; x < nx; x++) {
                const int64_t i = (z * ny + y) * nx + x;
                const double v = f->precision == PYR_DOUBLE ? ((const double *)f->data)[i] : (double)((const float *)f->data)[i];
                const double w = x == 0 || x == nx - 1 ? 0.5 * hx : hx;
                row += w * v;
                arow += w * fabs(v);
            }
            *sum += wyz * row;
            *size += wyz * arow;
        }
}

/* A pure Neumann problem has a solution only where the sources balance the
 * fluxes: sum_i W_i f_i + sum_faces G A = 0 (W the trapezoid weights, A a
 * face's area), exactly the sum of the discrete equations.  f: the whole
 * grid's right-hand side as read from its file, or NULL (zero, sine). */
static pyr_status_t check_compatible(const pyr_problem_t *p, const pyr_field_t *f)
{
    double fs = 0, fsize = 0, gs = 0, gsize = 0, volume = 1;
    weighted_sum(p, f, &fs, &fsize);
    for (int a = 0; a < p->dims; a++) {
        double area = 1;
        for (int b = 0; b < p->dims; b++)
            if (b != a) area *= p->length[b];
        for (int side = 0; side < 2; side++) {
            gs += p->poisson.flux[2 * a + side] * area;
            gsize += fabs(p->poisson.flux[2 * a + side]) * area;
        }
        volume *= p->length[a];
    }
    const double mismatch = fs + gs, size = fsize + gsize, rel = p->precision == PYR_DOUBLE ? 1e-10 : 1e-5;
    if (!(fabs(mismatch) <= rel * size))
        return pyr_fail(PYR_ERR_CONFIG,
                        "every face is neumann, and then -laplace(u) = f has a solution only if the sources balance the fluxes: "
                        "sum of f (trapezoid weights) + sum of flux x face area must be 0, but it is %.6g + %.6g = %.6g "
                        "(%.2g of their size; at most %.0e allowed). Subtract %.6g (the mismatch over the volume %.6g) from f "
                        "everywhere, change a face's flux, or make a face dirichlet",
                        fs, gs, mismatch, size > 0 ? fabs(mismatch) / size : 0.0, rel, mismatch / volume, volume);
    return PYR_OK;
}

void pyr_poisson_faces_text(const pyr_problem_t *p, char *out, size_t size)
{
    size_t at = 0;
    if (size) out[0] = 0;
    for (int k = 0; k < 2 * p->dims && at < size; k++) {
        const int neumann = p->poisson.face[k] == PYR_FACE_NEUMANN;
        char flux[40] = "";
        if (neumann && p->poisson.flux[k] != 0) snprintf(flux, sizeof flux, " %.17g", p->poisson.flux[k]);
        const int w = snprintf(out + at, size - at, "%s%s = %s%s", k ? ", " : "", face_names[k], neumann ? "neumann" : "dirichlet", flux);
        if (w < 0) break;
        at += (size_t)w;
    }
}

int pyr_poisson_face_index(const char *key)
{
    for (int k = 0; k < 6; k++)
        if (key && !strcmp(key, face_names[k])) return k;
    return -1;
}

pyr_status_t pyr_poisson_parse_face(pyr_poisson_params_t *q, int k, const char *value)
{
    char word[16];
    int used = 0;
    const char *v = value;
    while (*v == ' ' || *v == '\t') v++;
    if (sscanf(v, "%15s%n", word, &used) != 1)
        return pyr_fail(PYR_ERR_CONFIG, "boundary.%s is empty; write dirichlet, neumann (zero flux) or neumann FLUX (du/dn, outward)", face_names[k]);
    const char *rest = v + used;
    while (*rest == ' ' || *rest == '\t') rest++;
    if (!strcmp(word, "dirichlet")) {
        if (*rest)
            return pyr_fail(PYR_ERR_CONFIG, "boundary.%s = '%s': a dirichlet face takes no value (its nodes keep the initial field's); "
                                            "write dirichlet, or neumann %s for a flux",
                            face_names[k], value, rest);
        q->face[k] = PYR_FACE_DIRICHLET;
        q->flux[k] = 0;
        return PYR_OK;
    }
    if (strcmp(word, "neumann"))
        return pyr_fail(PYR_ERR_CONFIG, "boundary.%s = '%s': unknown kind '%s'; write dirichlet, neumann (zero flux) or neumann FLUX "
                                        "(du/dn, the outward normal derivative)",
                        face_names[k], value, word);
    double g = 0;
    if (*rest) {
        char *end;
        g = strtod(rest, &end);
        while (*end == ' ' || *end == '\t') end++;
        if (end == rest || *end || !isfinite(g))
            return pyr_fail(PYR_ERR_CONFIG, "boundary.%s = '%s': the flux '%s' is not a finite number; write neumann FLUX, e.g. neumann 0.5",
                            face_names[k], value, rest);
    }
    q->face[k] = PYR_FACE_NEUMANN;
    q->flux[k] = g;
    return PYR_OK;
}

int pyr_poisson_face_text(const pyr_poisson_params_t *q, int k, char *out, size_t size)
{
    if (q->face[k] != PYR_FACE_NEUMANN) return snprintf(out, size, "dirichlet");
    return q->flux[k] == 0 ? snprintf(out, size, "neumann") : snprintf(out, size, "neumann %.17g", q->flux[k]);
}

static pyr_status_t faces_validate(const pyr_problem_t *p)
{
    const pyr_poisson_params_t *q = &p->poisson;
    for (int k = 0; k < 6; k++) {
        if (q->face[k] != PYR_FACE_DIRICHLET && q->face[k] != PYR_FACE_NEUMANN)
            return pyr_fail(PYR_ERR_CONFIG, "boundary.%s: unknown kind %d; use dirichlet or neumann [FLUX]", face_names[k], (int)q->face[k]);
        if (!isfinite(q->flux[k])) return pyr_fail(PYR_ERR_CONFIG, "boundary.%s: the flux %g is not finite", face_names[k], q->flux[k]);
        if (k / 2 >= p->dims && (q->face[k] != PYR_FACE_DIRICHLET || q->flux[k] != 0))
            return pyr_fail(PYR_ERR_CONFIG, "boundary.%s = neumann on a %dD grid, which has no %c faces; leave it out", face_names[k], p->dims,
                            "xyz"[k / 2]);
        if (q->face[k] == PYR_FACE_DIRICHLET && q->flux[k] != 0)
            return pyr_fail(PYR_ERR_CONFIG, "boundary.%s: a flux (%g) on a dirichlet face; the face's values are the initial field's, "
                                            "so write neumann %g to prescribe the flux",
                            face_names[k], q->flux[k], q->flux[k]);
    }
    if (!pyr_poisson_has_neumann(p)) return PYR_OK;
    if (q->iteration != PYR_ITER_JACOBI && q->iteration != PYR_ITER_CHEBYSHEV && q->iteration != PYR_ITER_MULTIGRID)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "neumann faces are solved by Jacobi or Chebyshev sweeps or multigrid only; use "
                                             "scheme.iteration = chebyshev, multigrid or jacobi, or make every face dirichlet");
    if (pyr_poisson_pure_neumann(p)) {
        if (q->iteration == PYR_ITER_JACOBI && !(q->omega < 1))
            return pyr_fail(PYR_ERR_CONFIG, "scheme.omega = %g with every face neumann: plain Jacobi's sweeps never damp the checkerboard "
                                            "mode (eigenvalue -1) there; use omega < 1 (e.g. 0.8), or iteration = chebyshev",
                            q->omega);
        /* a right-hand side from a file is checked as it is read (poisson_init_input) */
        if (q->rhs != PYR_RHS_FILE) PYR_TRY(check_compatible(p, NULL));
    }
    return PYR_OK;
}

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
    return faces_validate(p);
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
    c->c[PYR_POISSON_FACES_COEF] = pyr_poisson_has_neumann(p) ? PYR_POISSON_FACES_AUX : 0;
    if (pyr_poisson_pure_neumann(p) && poisson_chebyshev(p)) c->c[4] = pyr_poisson_neumann_gamma(p);
}

int pyr_poisson_fixed(const pyr_problem_t *p, int axis, int high)
{
    if (axis >= p->dims || !face_neumann(p, axis, high)) return 1;
    /* a part of a larger grid holds the face only where its window reaches the grid's end */
    const int64_t whole = pyr_problem_whole(p, axis);
    const int holds = high ? p->origin[axis] + p->n[axis] == whole : p->origin[axis] == 0;
    return holds ? 0 : 1;
}

/* The scheme's margin hook: a Neumann face's nodes are updated (0), every
 * other face's and a part's cut edges are not (1). */
static int poisson_margin(const pyr_problem_t *p, int k, int axis, int high)
{
    (void)k;
    return pyr_poisson_fixed(p, axis, high);
}

/* aux: the faces' table (schemes/poisson.h) when a face of this problem's
 * grid is Neumann, then Chebyshev's weights. */
static pyr_status_t poisson_aux_coefficients(const pyr_problem_t *p, double **aux, int64_t *naux)
{
    *aux = NULL;
    *naux = 0;
    double *w = NULL;
    int64_t nw = 0;
    if (poisson_chebyshev(p)) PYR_TRY(pyr_poisson_chebyshev_weights(chebyshev_radius(p), &w, &nw));
    if (!pyr_poisson_has_neumann(p)) {
        *aux = w;
        *naux = nw;
        return PYR_OK;
    }
    const int64_t head = PYR_POISSON_FACES_AUX;
    double *t = malloc((size_t)(head + nw) * sizeof *t);
    if (!t) {
        free(w);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    for (int k = 0; k < 6; k++) {
        const int a = k / 2, high = k % 2;
        const int on = a < p->dims && face_neumann(p, a, high) && pyr_poisson_fixed(p, a, high) == 0;
        t[3 * k] = on;
        t[3 * k + 1] = on ? (high ? (double)(p->n[a] - 1) : 0.0) : -1.0;
        t[3 * k + 2] = on ? 2.0 * pyr_problem_h(p, a) * p->poisson.flux[k] : 0.0;
    }
    if (nw) memcpy(t + head, w, (size_t)nw * sizeof *w);
    free(w);
    *aux = t;
    *naux = head + nw;
    return PYR_OK;
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
        PYR_TRY(check_finite(f, what, origin));
        /* the whole grid's f (a part's slice cannot say; nor can a caller's own array, which is never read here) */
        if (whole && pyr_poisson_pure_neumann(p) && p->origin[0] == 0 && p->origin[1] == 0 && p->origin[2] == 0) {
            st = check_compatible(p, f);
            if (st != PYR_OK) return pyr_fail_context(st, "rhs.file %s: ", p->poisson.rhs_file);
        }
        return PYR_OK;
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

/* A caller's own f (pyr_execute_fields, Python arrays), never read by
 * init_input: the same compatibility check as a file's. */
static pyr_status_t poisson_check_inputs(const pyr_problem_t *p, const pyr_field_t *const *given)
{
    if (!given[1] || !pyr_poisson_pure_neumann(p) || p->origin[0] != 0 || p->origin[1] != 0 || p->origin[2] != 0) return PYR_OK;
    for (int d = 0; d < 3; d++)
        if (given[1]->n[d] != p->n[d]) return PYR_OK; /* not the whole grid's: the field checks say so */
    const pyr_status_t st = check_compatible(p, given[1]);
    return st == PYR_OK ? st : pyr_fail_context(st, "f (the caller's array): ");
}

static int64_t poisson_check_every(const pyr_problem_t *p) { return p->poisson.check_every; }
static double poisson_tolerance(const pyr_problem_t *p) { return p->poisson.tolerance; }

static void poisson_key(const pyr_problem_t *p, char *out, size_t size)
{
    snprintf(out, size, "%s%s", p->poisson.rhs == PYR_RHS_ZERO ? "f=0" : "f", pyr_poisson_has_neumann(p) ? ",neumann" : "");
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
    .margin = poisson_margin,
    .validate = poisson_validate,
    .fields_used = poisson_fields,
    .coefficients = poisson_coefficients,
    .aux_coefficients = poisson_aux_coefficients,
    .init_input = poisson_init_input,
    .init_input_part = poisson_init_input_part,
    .check_inputs = poisson_check_inputs,
    .check_every = poisson_check_every,
    .tolerance = poisson_tolerance,
    .key = poisson_key,
};
