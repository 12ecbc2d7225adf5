/* Block-tridiagonal systems: allocation, the built-in systems, loading from
 * .npy files, and checks of the input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/npy.h"
#include "pyrgrid.h"
#include "solvers/lgs/lgs_expr.h"

#define IDX(i, k) ((size_t)(i) * (size_t)m + (size_t)(k))

pyr_status_t pyr_lgs_system_create(int64_t n, int64_t m, pyr_lgs_system_t **sys)
{
    if (!sys) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_system_create: sys is NULL");
    *sys = NULL;
    if (n < 1 || m < 1)
        return pyr_fail(PYR_ERR_SIZE, "system size N = %lld, M = %lld: both must be at least 1", (long long)n,
                        (long long)m);
    /* 6 arrays of the system + a few of the same size in the solver */
    if (n > (int64_t)(SIZE_MAX / 16 / sizeof(double)) / m)
        return pyr_fail(PYR_ERR_SIZE, "system size N = %lld, M = %lld: N*M = %.3g unknowns overflow this machine's "
                        "addressable memory", (long long)n, (long long)m, (double)n * (double)m);
    pyr_lgs_system_t *s = calloc(1, sizeof *s);
    if (!s) return pyr_fail(PYR_ERR_NOMEM, "out of memory allocating a system");
    s->n = n;
    s->m = m;
    s->precision = PYR_DOUBLE;
    size_t count = (size_t)n * (size_t)m;
    double **arrays[6] = {&s->cC, &s->aC, &s->bC, &s->cA, &s->cB, &s->F};
    for (int a = 0; a < 6; a++) {
        *arrays[a] = calloc(count, sizeof(double));
        if (!*arrays[a]) {
            pyr_lgs_system_destroy(&s);
            return pyr_fail(PYR_ERR_NOMEM, "out of memory: a %lld x %lld system needs 6 arrays of %.1f MiB",
                            (long long)n, (long long)m, (double)count * 8.0 / 1048576.0);
        }
    }
    *sys = s;
    return PYR_OK;
}

void pyr_lgs_system_destroy(pyr_lgs_system_t **sys)
{
    if (!sys || !*sys) return;
    pyr_lgs_system_t *s = *sys;
    free(s->cC);
    free(s->aC);
    free(s->bC);
    free(s->cA);
    free(s->cB);
    free(s->F);
    free(s);
    *sys = NULL;
}

/* F = A·(1, …, 1) over the entries that exist, in the residual's term order. */
static void rhs_of_ones(pyr_lgs_system_t *s)
{
    int64_t n = s->n, m = s->m;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < m; k++) {
            size_t q = IDX(i, k);
            double v = 0.0;
            if (i > 0) v += s->cA[q];
            if (k > 0) v += s->aC[q];
            v += s->cC[q];
            if (k < m - 1) v += s->bC[q];
            if (i < n - 1) v += s->cB[q];
            s->F[q] = v;
        }
}

pyr_status_t pyr_lgs_system_test1(int64_t n, int64_t m, pyr_lgs_system_t **sys)
{
    PYR_TRY(pyr_lgs_system_create(n, m, sys));
    pyr_lgs_system_t *s = *sys;
    double den = (double)(2 * n + m);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < m; k++) {
            size_t q = IDX(i, k);
            double v = (double)(2 * (i + 1) + (k + 1)) / den;
            s->cC[q] = 4.0;
            s->aC[q] = k > 0 ? v : 0.0;
            s->bC[q] = k < m - 1 ? v : 0.0;
            s->cA[q] = i > 0 ? v : 0.0;
            s->cB[q] = i < n - 1 ? v : 0.0;
        }
    rhs_of_ones(s);
    snprintf(s->description, sizeof s->description, "test system 1");
    return PYR_OK;
}

pyr_status_t pyr_lgs_system_test2(int64_t n, int64_t m, pyr_lgs_system_t **sys)
{
    if (sys) *sys = NULL;
    if (n < 2 || m < 2)
        return pyr_fail(PYR_ERR_SIZE, "test system 2 needs N >= 2 and M >= 2 (got N = %lld, M = %lld)",
                        (long long)n, (long long)m);
    PYR_TRY(pyr_lgs_system_create(n, m, sys));
    pyr_lgs_system_t *s = *sys;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < m; k++) {
            size_t q = IDX(i, k);
            int nb = 0;
            s->aC[q] = k > 0 ? (nb++, 1.0) : 0.0;
            s->bC[q] = k < m - 1 ? (nb++, 1.0) : 0.0;
            s->cA[q] = i > 0 ? (nb++, 1.0) : 0.0;
            s->cB[q] = i < n - 1 ? (nb++, 1.0) : 0.0;
            int kedge = (k == 0 || k == m - 1);
            /* the degree paper's diagonal (docs/theory.md#block-gauss-seidel-with-thomas): -4 inside,
             * -5 at k edges of interior block rows, -3 at interior k of the first/last block row, -4 corners */
            s->F[q] = kedge ? -2.0 : 0.0;
            s->cC[q] = s->F[q] - (double)nb;
        }
    snprintf(s->description, sizeof s->description, "test system 2");
    return PYR_OK;
}

pyr_status_t pyr_lgs_system_laplace(int64_t n, int64_t m, pyr_lgs_system_t **sys)
{
    PYR_TRY(pyr_lgs_system_create(n, m, sys));
    pyr_lgs_system_t *s = *sys;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < m; k++) {
            size_t q = IDX(i, k);
            s->cC[q] = 4.0;
            s->aC[q] = k > 0 ? -1.0 : 0.0;
            s->bC[q] = k < m - 1 ? -1.0 : 0.0;
            s->cA[q] = i > 0 ? -1.0 : 0.0;
            s->cB[q] = i < n - 1 ? -1.0 : 0.0;
        }
    rhs_of_ones(s);
    snprintf(s->description, sizeof s->description, "Dirichlet Laplacian");
    return PYR_OK;
}

/* ------------------------------------------------------------ parabolic */

void pyr_lgs_parabolic_default(pyr_lgs_parabolic_t *par)
{
    memset(par, 0, sizeof *par);
    par->tau = 1e-3;
    par->lx = 1.0;
    par->lz = 1.0;
    par->a.value = 1.0;
}

/* Evaluate a field spec on the N×M interior nodes into out. */
static pyr_status_t field_fill(const char *name, const pyr_lgs_field_spec_t *spec, int64_t n, int64_t m,
                               double hx, double hz, double *out)
{
    if (spec->path) {
        int64_t shape[2] = {n, m};
        pyr_status_t st = pyr_npy_read_expect(spec->path, 2, shape, PYR_DOUBLE, out);
        if (st != PYR_OK) return pyr_fail_context(st, "parabolic %s: ", name);
        return PYR_OK;
    }
    if (spec->formula) {
        pyr_expr_t *e = NULL;
        pyr_status_t st = pyr_expr_compile(spec->formula, &e);
        if (st != PYR_OK) return pyr_fail_context(st, "parabolic %s: ", name);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < m; k++)
                out[IDX(i, k)] = pyr_expr_eval(e, (double)(i + 1) * hx, (double)(k + 1) * hz);
        pyr_expr_destroy(&e);
        return PYR_OK;
    }
    for (size_t q = 0; q < (size_t)n * (size_t)m; q++) out[q] = spec->value;
    return PYR_OK;
}

pyr_status_t pyr_lgs_system_parabolic(int64_t n, int64_t m, const pyr_lgs_parabolic_t *par,
                                      pyr_lgs_system_t **sys)
{
    if (sys) *sys = NULL;
    if (!par || !sys) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_system_parabolic: NULL argument");
    if (!(par->tau > 0) || !isfinite(par->tau))
        return pyr_fail(PYR_ERR_CONFIG, "parabolic tau = %g: the time step must be positive and finite", par->tau);
    if (!(par->lx > 0) || !(par->lz > 0) || !isfinite(par->lx) || !isfinite(par->lz))
        return pyr_fail(PYR_ERR_CONFIG, "parabolic lx = %g, lz = %g: the lengths must be positive and finite",
                        par->lx, par->lz);
    if (par->boundary.path)
        return pyr_fail(PYR_ERR_CONFIG, "parabolic boundary = %s: the boundary takes a number or a formula in x "
                        "and z, not a file", par->boundary.path);
    PYR_TRY(pyr_lgs_system_create(n, m, sys));
    pyr_lgs_system_t *s = *sys;
    double hx = par->lx / (double)(n + 1), hz = par->lz / (double)(m + 1);
    /* a -> cC, f -> F, u_prev -> cA (scratch until the coefficients are set) */
    pyr_status_t st = field_fill("a", &par->a, n, m, hx, hz, s->cC);
    if (st == PYR_OK) st = field_fill("f", &par->f, n, m, hx, hz, s->F);
    if (st == PYR_OK) st = field_fill("u_prev", &par->u_prev, n, m, hx, hz, s->cA);
    pyr_expr_t *g = NULL;
    if (st == PYR_OK && par->boundary.formula) {
        st = pyr_expr_compile(par->boundary.formula, &g);
        if (st != PYR_OK) pyr_fail_context(st, "parabolic boundary: ");
    }
    if (st != PYR_OK) {
        pyr_lgs_system_destroy(sys);
        return st;
    }
    const char *names[3] = {"a", "f", "u_prev"};
    const double *vals[3] = {s->cC, s->F, s->cA};
    for (int f = 0; f < 3; f++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < m; k++) {
                double v = vals[f][IDX(i, k)];
                if (!isfinite(v) || (f == 0 && !(v > 0))) {
                    pyr_expr_destroy(&g);
                    pyr_lgs_system_destroy(sys);
                    return pyr_fail(PYR_ERR_CONFIG, "parabolic %s at node i = %lld, k = %lld (x = %g, z = %g) is %g; "
                                    "%s", names[f], (long long)i, (long long)k, (double)(i + 1) * hx,
                                    (double)(k + 1) * hz, v, f == 0 ? "the diffusivity must be positive and finite"
                                                                    : "it must be finite");
                }
            }
    double ix2 = 1.0 / (hx * hx), iz2 = 1.0 / (hz * hz);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < m; k++) {
            size_t q = IDX(i, k);
            double x = (double)(i + 1) * hx, z = (double)(k + 1) * hz;
            double ta = par->tau * s->cC[q];
            double rx = ta * ix2, rz = ta * iz2;
            double rhs = s->cA[q] + par->tau * s->F[q];
            double gv = par->boundary.value;
            if (i == 0) rhs += rx * (g ? pyr_expr_eval(g, 0.0, z) : gv);
            if (i == n - 1) rhs += rx * (g ? pyr_expr_eval(g, par->lx, z) : gv);
            if (k == 0) rhs += rz * (g ? pyr_expr_eval(g, x, 0.0) : gv);
            if (k == m - 1) rhs += rz * (g ? pyr_expr_eval(g, x, par->lz) : gv);
            s->F[q] = rhs;
            s->cC[q] = 1.0 + 2.0 * rx + 2.0 * rz;
            s->aC[q] = k > 0 ? -rz : 0.0;
            s->bC[q] = k < m - 1 ? -rz : 0.0;
            s->cA[q] = i > 0 ? -rx : 0.0;
            s->cB[q] = i < n - 1 ? -rx : 0.0;
        }
    pyr_expr_destroy(&g);
    snprintf(s->description, sizeof s->description, "parabolic step (tau = %g)", par->tau);
    return PYR_OK;
}

/* ------------------------------------------------------------ files */

pyr_status_t pyr_lgs_system_load(const char *const paths[6], int64_t n, int64_t m, pyr_lgs_system_t **sys)
{
    static const char *const names[6] = {"cC", "aC", "bC", "cA", "cB", "F"};
    if (!sys) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_system_load: sys is NULL");
    *sys = NULL;
    for (int a = 0; a < 6; a++)
        if (!paths || !paths[a] || !*paths[a])
            return pyr_fail(PYR_ERR_CONFIG, "system kind = files needs all six arrays; %s is not given (set "
                            "system.%s = FILE.npy)", names[a], names[a]);
    if (n <= 0 || m <= 0) {
        pyr_npy_info_t info;
        pyr_status_t st = pyr_npy_read_info(paths[0], &info);
        if (st != PYR_OK) return pyr_fail_context(st, "system.cC: ");
        if (info.ndim != 2)
            return pyr_fail(PYR_ERR_FORMAT, "system.cC = %s has %d dimensions; the coefficient arrays must be 2D, "
                            "shape (N, M)", paths[0], info.ndim);
        if (n <= 0) n = info.shape[0];
        if (m <= 0) m = info.shape[1];
    }
    PYR_TRY(pyr_lgs_system_create(n, m, sys));
    pyr_lgs_system_t *s = *sys;
    double *arrays[6] = {s->cC, s->aC, s->bC, s->cA, s->cB, s->F};
    int64_t shape[2] = {n, m};
    for (int a = 0; a < 6; a++) {
        pyr_status_t st = pyr_npy_read_expect(paths[a], 2, shape, PYR_DOUBLE, arrays[a]);
        if (st != PYR_OK) {
            pyr_lgs_system_destroy(sys);
            return pyr_fail_context(st, "system.%s (all six arrays must be float64 of shape (%lld, %lld)): ",
                                    names[a], (long long)n, (long long)m);
        }
    }
    snprintf(s->description, sizeof s->description, "files (%s, ...)", paths[0]);
    return PYR_OK;
}

/* ------------------------------------------------------------ checks */

pyr_status_t pyr_lgs_system_check(const pyr_lgs_system_t *s, char *warning, size_t warning_size)
{
    if (warning && warning_size) warning[0] = '\0';
    if (!s) return pyr_fail(PYR_ERR_ARG, "system is NULL");
    if (s->precision != PYR_DOUBLE)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "precision = %s: the line Gauss-Seidel solver works in double only; "
                        "use precision = double", pyr_precision_name(s->precision));
    int64_t n = s->n, m = s->m;
    if (n < 1 || m < 1)
        return pyr_fail(PYR_ERR_SIZE, "system size N = %lld, M = %lld: both must be at least 1", (long long)n,
                        (long long)m);
    if (!s->cC || !s->aC || !s->bC || !s->cA || !s->cB || !s->F)
        return pyr_fail(PYR_ERR_ARG, "system has a NULL coefficient array");
    static const char *const names[6] = {"cC", "aC", "bC", "cA", "cB", "F"};
    const double *arrays[6] = {s->cC, s->aC, s->bC, s->cA, s->cB, s->F};
    int64_t bad_thomas = 0, bad_gs = 0, first_t = -1, first_g = -1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < m; k++) {
            size_t q = IDX(i, k);
            int exists[6] = {1, k > 0, k < m - 1, i > 0, i < n - 1, 1};
            for (int a = 0; a < 6; a++)
                if (exists[a] && !isfinite(arrays[a][q]))
                    return pyr_fail(PYR_ERR_ARG, "%s[%lld, %lld] is %g; every coefficient and the right side must "
                                    "be finite (entries outside the matrix are ignored)", names[a], (long long)i,
                                    (long long)k, arrays[a][q]);
            if (s->cC[q] == 0.0)
                return pyr_fail(PYR_ERR_NUMERIC, "zero diagonal cC[%lld, %lld] = 0 (row i = %lld, k = %lld): the "
                                "block C_%lld cannot be solved by the Thomas algorithm, which does not pivot",
                                (long long)i, (long long)k, (long long)i, (long long)k, (long long)i);
            double d = fabs(s->cC[q]);
            double t = (k > 0 ? fabs(s->aC[q]) : 0.0) + (k < m - 1 ? fabs(s->bC[q]) : 0.0);
            double g = t + (i > 0 ? fabs(s->cA[q]) : 0.0) + (i < n - 1 ? fabs(s->cB[q]) : 0.0);
            if (d < t) {
                if (!bad_thomas++) first_t = (int64_t)q;
            }
            if (d < g) {
                if (!bad_gs++) first_g = (int64_t)q;
            }
        }
    if (warning && warning_size && (bad_thomas || bad_gs)) {
        int64_t q = bad_thomas ? first_t : first_g;
        int64_t i = q / m, k = q % m;
        if (bad_thomas)
            snprintf(warning, warning_size,
                     "the blocks C_i are not diagonally dominant in %lld of %lld rows (first at i = %lld, k = %lld: "
                     "|cC| = %g < |aC| + |bC| = %g); the Thomas algorithm may be unstable there and Gauss-Seidel "
                     "may not converge",
                     (long long)bad_thomas, (long long)(n * m), (long long)i, (long long)k, fabs(s->cC[q]),
                     (k > 0 ? fabs(s->aC[q]) : 0.0) + (k < m - 1 ? fabs(s->bC[q]) : 0.0));
        else
            snprintf(warning, warning_size,
                     "the system is not diagonally dominant in %lld of %lld rows (first at i = %lld, k = %lld: "
                     "|cC| = %g < |aC| + |bC| + |cA| + |cB|); block Gauss-Seidel may converge slowly or not at all",
                     (long long)bad_gs, (long long)(n * m), (long long)i, (long long)k, fabs(s->cC[q]));
    }
    return PYR_OK;
}
