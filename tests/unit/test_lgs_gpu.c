/* Red–black line Gauss–Seidel on CUDA against the CPU: bit-identical iterates
 * and residual histories, every chunk width J (M from 7 to 13000, including
 * rows too long for shared memory), with and without relaxation and Jacobi
 * scaling, through direct launches and CUDA-graph replay; and the test
 * systems converge to all ones.  Exit 77 (skip) without a usable GPU. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pyrgrid.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static double urand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void compare_backends(const pyr_lgs_system_t *sys, const char *what)
{
    size_t count = (size_t)sys->n * (size_t)sys->m;
    double *yc = malloc(count * sizeof *yc), *yg = malloc(count * sizeof *yg);
    const int64_t iters[3] = {1, 7, 70}; /* 70 = one graph of 64 + 6 launches */
    for (int variant = 0; variant < 3; variant++)
        for (int t = 0; t < 3; t++) {
            pyr_lgs_options_t o;
            pyr_lgs_options_default(&o);
            o.tolerance = 0;
            o.max_iterations = iters[t];
            o.check_every = t == 2 ? 35 : 1;
            if (variant == 1) o.omega = 1.17;
            if (variant == 2) o.precondition = PYR_LGS_PRECOND_JACOBI;
            for (size_t q = 0; q < count; q++) yc[q] = yg[q] = 0.25 * urand();
            pyr_lgs_result_t *rc = NULL, *rg = NULL;
            o.backend = PYR_BACKEND_CPU;
            CHECK_OK(pyr_lgs_solve(sys, &o, yc, &rc));
            o.backend = PYR_BACKEND_CUDA;
            CHECK_OK(pyr_lgs_solve(sys, &o, yg, &rg));
            if (!rc || !rg) continue;
            CHECK(rg->backend == PYR_BACKEND_CUDA, "ran on cuda");
            size_t diff = 0, first = 0;
            for (size_t q = 0; q < count; q++)
                if (memcmp(&yc[q], &yg[q], sizeof(double))) {
                    if (!diff) first = q;
                    diff++;
                }
            CHECK(diff == 0, "%s %lldx%lld variant %d, %lld iterations: %zu values differ (first [%zu, %zu]: cpu %.17g, "
                  "cuda %.17g)", what, (long long)sys->n, (long long)sys->m, variant, (long long)iters[t], diff,
                  first / (size_t)sys->m, first % (size_t)sys->m, yc[first], yg[first]);
            int64_t hd = -1;
            for (int64_t q = 0; q < rc->history_len && q < rg->history_len && hd < 0; q++)
                if (memcmp(&rc->history_residual[q], &rg->history_residual[q], sizeof(double))) hd = q;
            CHECK(rc->history_len == rg->history_len && hd < 0,
                  "%s %lldx%lld variant %d, %lld iterations: residual histories differ (lengths %lld, %lld; first "
                  "difference at entry %lld: cpu %a, cuda %a)",
                  what, (long long)sys->n, (long long)sys->m, variant, (long long)iters[t], (long long)rc->history_len,
                  (long long)rg->history_len, (long long)hd, hd >= 0 ? rc->history_residual[hd] : 0.0,
                  hd >= 0 ? rg->history_residual[hd] : 0.0);
            pyr_lgs_result_destroy(&rc);
            pyr_lgs_result_destroy(&rg);
        }
    free(yc);
    free(yg);
}

int main(void)
{
    if (pyr_lgs_cuda_usable() != PYR_OK) {
        printf("skipped: %s\n", pyr_last_error());
        return 77;
    }
    int64_t sizes[][2] = {{5, 20}, {8, 50}, {9, 100}, {6, 300}, {33, 1000}, {4, 13000}, {1, 7}, {7, 1}, {64, 64}};
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
            double off = fabs(sys->aC[q]) + fabs(sys->bC[q]) + fabs(sys->cA[q]) + fabs(sys->cB[q]);
            sys->cC[q] = (urand() < 0 ? -1 : 1) * (off * (1.3 + 0.3 * fabs(urand())) + 1e-3);
        }
        compare_backends(sys, "random");
        pyr_lgs_system_destroy(&sys);
    }
    /* the test systems converge to all ones on the GPU */
    for (int kind = 1; kind <= 2; kind++) {
        pyr_lgs_system_t *sys = NULL;
        int64_t n = kind == 1 ? 300 : 16, m = kind == 1 ? 257 : 20;
        if (kind == 1)
            CHECK_OK(pyr_lgs_system_test1(n, m, &sys));
        else
            CHECK_OK(pyr_lgs_system_test2(n, m, &sys));
        if (!sys) continue;
        compare_backends(sys, kind == 1 ? "test1" : "test2");
        for (int variant = 0; variant < 3; variant++) {
            double *y = calloc((size_t)(n * m), sizeof *y);
            pyr_lgs_options_t o;
            pyr_lgs_options_default(&o);
            o.backend = PYR_BACKEND_CUDA;
            o.tolerance = 1e-14;
            o.max_iterations = 200000;
            if (variant == 1) o.omega = 1.3;
            if (variant == 2) o.precondition = PYR_LGS_PRECOND_JACOBI;
            pyr_lgs_result_t *r = NULL;
            CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
            double e = 0;
            for (size_t q = 0; q < (size_t)(n * m); q++) e = fmax(e, fabs(y[q] - 1.0));
            CHECK(e <= 1e-10 && r && r->stop == PYR_LGS_CONVERGED, "test%d on cuda variant %d: max error %g", kind,
                  variant, e);
            pyr_lgs_result_destroy(&r);
            free(y);
        }
        pyr_lgs_system_destroy(&sys);
    }
    return check_report();
}
