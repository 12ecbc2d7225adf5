/* Line Gauss–Seidel against a direct banded solve (LAPACK dgbsv) on random
 * diagonally dominant block-tridiagonal systems and on a parabolic step with
 * a variable coefficient: equal within 1e-10 relative. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pyrgrid.h"

void dgbsv_(const int *n, const int *kl, const int *ku, const int *nrhs, double *ab, const int *ldab, int *ipiv,
            double *b, const int *ldb, int *info);

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Solve sys with dgbsv: unknown (i, k) is i*M + k, bandwidths kl = ku = M. */
static int lapack_solve(const pyr_lgs_system_t *s, double *x)
{
    int n = (int)(s->n * s->m), bw = (int)s->m, ldab = 3 * bw + 1, nrhs = 1, info = 0;
    double *ab = calloc((size_t)ldab * (size_t)n, sizeof *ab);
    int *ipiv = malloc((size_t)n * sizeof *ipiv);
    if (!ab || !ipiv) {
        free(ab);
        free(ipiv);
        return -1;
    }
#define AB(r, c) ab[(size_t)(2 * bw + (r) - (c)) + (size_t)(c) * (size_t)ldab]
    for (int64_t i = 0; i < s->n; i++)
        for (int64_t k = 0; k < s->m; k++) {
            int r = (int)(i * s->m + k);
            size_t q = (size_t)r;
            AB(r, r) = s->cC[q];
            if (k > 0) AB(r, r - 1) = s->aC[q];
            if (k < s->m - 1) AB(r, r + 1) = s->bC[q];
            if (i > 0) AB(r, r - bw) = s->cA[q];
            if (i < s->n - 1) AB(r, r + bw) = s->cB[q];
        }
#undef AB
    memcpy(x, s->F, (size_t)n * sizeof *x);
    dgbsv_(&n, &bw, &bw, &nrhs, ab, &ldab, ipiv, x, &n, &info);
    free(ab);
    free(ipiv);
    return info;
}

static void compare(const pyr_lgs_system_t *sys, const char *what)
{
    size_t count = (size_t)sys->n * (size_t)sys->m;
    double *ref = malloc(count * sizeof *ref), *y = malloc(count * sizeof *y);
    int info = lapack_solve(sys, ref);
    CHECK(info == 0, "%s: dgbsv info = %d", what, info);
    double scale = 0;
    for (size_t q = 0; q < count; q++) scale = fmax(scale, fabs(ref[q]));
    for (int variant = 0; variant < 4; variant++) {
        pyr_lgs_options_t o;
        pyr_lgs_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.tolerance = 1e-14;
        o.check_every = 1;
        o.ordering = variant == 0 ? PYR_LGS_LEXICOGRAPHIC : PYR_LGS_REDBLACK;
        if (variant == 2) o.omega = 1.2;
        if (variant == 3) o.precondition = PYR_LGS_PRECOND_JACOBI;
        memset(y, 0, count * sizeof *y);
        pyr_lgs_result_t *r = NULL;
        CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
        double err = 0;
        for (size_t q = 0; q < count; q++) err = fmax(err, fabs(y[q] - ref[q]));
        CHECK(err <= 1e-10 * scale, "%s %lldx%lld variant %d: max |y - y_lapack| = %g (scale %g), %lld iterations",
              what, (long long)sys->n, (long long)sys->m, variant, err, scale, r ? (long long)r->iterations : -1LL);
        CHECK(r && r->stop == PYR_LGS_CONVERGED, "%s: converged", what);
        pyr_lgs_result_destroy(&r);
    }
    free(ref);
    free(y);
}

int main(void)
{
    int64_t sizes[][2] = {{20, 17}, {33, 40}, {1, 50}, {50, 1}, {7, 64}, {5, 300}, {2, 2}};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int64_t n = sizes[c][0], m = sizes[c][1];
        pyr_lgs_system_t *sys = NULL;
        CHECK_OK(pyr_lgs_system_create(n, m, &sys));
        if (!sys) continue;
        for (size_t q = 0; q < (size_t)(n * m); q++) {
            sys->aC[q] = urand();
            sys->bC[q] = urand();
            sys->cA[q] = urand();
            sys->cB[q] = urand();
            sys->F[q] = 10.0 * urand();
            /* dominant by a margin; the sign varies */
            double off = fabs(sys->aC[q]) + fabs(sys->bC[q]) + fabs(sys->cA[q]) + fabs(sys->cB[q]);
            double d = off + 0.5 + fabs(urand());
            sys->cC[q] = urand() < 0 ? -d : d;
        }
        char warn[512];
        CHECK_OK(pyr_lgs_system_check(sys, warn, sizeof warn));
        CHECK(warn[0] == '\0', "random dominant system: no warning (%s)", warn);
        compare(sys, "random");
        pyr_lgs_system_destroy(&sys);
    }
    /* a parabolic step with variable diffusivity, source and boundary */
    pyr_lgs_parabolic_t par;
    pyr_lgs_parabolic_default(&par);
    par.tau = 5e-3;
    par.lx = 2.0;
    par.a.formula = "0.5 + x*x*z";
    par.f.formula = "sin(3*x) * exp(-z)";
    par.u_prev.formula = "x*(2-x)*z*(1-z)";
    par.boundary.formula = "1 + 0.25*x - z";
    pyr_lgs_system_t *sys = NULL;
    CHECK_OK(pyr_lgs_system_parabolic(24, 31, &par, &sys));
    if (sys) compare(sys, "parabolic");
    pyr_lgs_system_destroy(&sys);
    return check_report();
}
