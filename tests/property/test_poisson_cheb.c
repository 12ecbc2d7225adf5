/* Chebyshev-accelerated Jacobi for the Poisson equation (schemes/poisson.h),
 * in core on the CPU:
 *   - bits: the library's sweeps equal a reference written here from the
 *     recurrence (u_1 = J u_0, u_{k+1} = u_{k-1} + w_{k+1} (J u_k -
 *     u_{k-1}), the weights computed here from rho in closed form) bit for
 *     bit, in float and double, 1D/2D/3D with unequal spacings, for every CPU
 *     kernel variant and for passes cut at different checks (the measured
 *     last sweep of a pass is a kernel call of its own, with its own sweep
 *     index);
 *   - the converged result equals a direct solve of the linear system
 *     (LAPACK dgbsv) to 1e-10 relative, random f and boundary, unequal
 *     spacings;
 *   - with the argument "slow", the sweeps to a tolerance:
 *     examples/poisson2d.ini (257^2, change below 1e-9) in at most 1/50 of
 *     plain Jacobi's 149,150 sweeps (docs/methods.md), and 129^2 beside
 *     plain Jacobi measured here.
 * With the argument "cuda" the bits on the GPU instead (the in-core plan of
 * every CUDA variant against the same reference; 77 without a GPU).
 * The problem has no key choosing Chebyshev's sweeps yet: the test sets the
 * in-core plan's coefficients as the scheme would (c[6] = 1, the weights in
 * coef.aux). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "poisson_util.h"
#include "schemes/poisson.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

void dgbsv_(const int *n, const int *kl, const int *ku, const int *nrhs, double *ab, const int *ldab, int *ipiv, double *b,
            const int *ldb, int *info);

static pyr_backend_kind_t backend = PYR_BACKEND_CPU;

static pyr_options_t cpu_naive(const char *kernel)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_NAIVE;
    if (kernel) snprintf(o.kernel, sizeof o.kernel, "%s", kernel);
    return o;
}

/* A run of the problem from its initial field (f given, or the problem's),
 * Chebyshev's sweeps when cheb; NULL on failure. */
static pyr_field_t *solve(const pyr_problem_t *p, const pyr_options_t *o, pyr_field_t *f, int cheb, pyr_run_info_t *run)
{
    pyr_plan_t *plan = NULL;
    pyr_field_t *u = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st == PYR_OK && cheb) {
        CHECK(plan->resident, "Chebyshev needs the in-core (resident) plan");
        double *w = NULL;
        int64_t nw = 0;
        st = pyr_poisson_chebyshev_weights(pyr_poisson_jacobi_radius(p), &w, &nw);
        free((void *)plan->coef.aux);
        plan->coef.aux = w;
        plan->coef.naux = nw;
        plan->coef.c[PYR_POISSON_CHEBYSHEV_COEF] = 1;
    }
    if (st == PYR_OK) st = pyr_field_create(p, &u);
    if (st == PYR_OK) st = pyr_field_init(u, p);
    pyr_field_t *fields[2] = {u, f};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, 2, NULL, run);
    CHECK(st == PYR_OK, "run: %s", pyr_last_error());
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) pyr_field_destroy(&u);
    return u;
}

/* ------------------------------------------------------------------ reference */

/* rho and the weights from their definitions, independently of the library. */
static double radius(const pyr_problem_t *p)
{
    double num = 0, den = 0;
    for (int d = 0; d < p->dims; d++) {
        const double h = p->length[d] / (double)(p->n[d] - 1), c = 1.0 / (h * h);
        num += c * cos(M_PI / (double)(p->n[d] - 1));
        den += c;
    }
    return num / den;
}

static double weight(double rho, int64_t sweep)
{
    double w = 1;
    for (int64_t k = 1; k <= sweep; k++) w = k == 1 ? 1.0 / (1.0 - rho * rho / 2.0) : 1.0 / (1.0 - rho * rho * w / 4.0);
    return w;
}

/* `sweeps` of the recurrence on u (boundary kept), in T, with the
 * expressions of src/schemes/poisson.c. */
#define DEFINE_REFERENCE(NAME, T)                                                                              \
    static void NAME(const pyr_problem_t *p, T *u, const T *f, int64_t sweeps)                                \
    {                                                                                                          \
        const int64_t nx = p->n[0], ny = p->n[1], nz = p->n[2], n = nx * ny * nz, sy = nx, sz = nx * ny;         \
        double cd[3] = {0, 0, 0}, s = 0;                                                                       \
        for (int d = 0; d < p->dims; d++) {                                                                    \
            const double h = pyr_problem_h(p, d);                                                              \
            cd[d] = 1.0 / (h * h);                                                                             \
            s += 2.0 / (h * h);                                                                                \
        }                                                                                                      \
        const T cx = (T)cd[0], cy = (T)cd[1], cz = (T)cd[2], dv = (T)(1.0 / s);                                \
        const double rho = radius(p);                                                                          \
        T *prev = malloc((size_t)n * sizeof *prev), *next = malloc((size_t)n * sizeof *next);                  \
        memcpy(prev, u, (size_t)n * sizeof *u);                                                                \
        memcpy(next, u, (size_t)n * sizeof *u);                                                                \
        for (int64_t k = 0; k < sweeps; k++) {                                                                 \
            const T w = (T)weight(rho, k);                                                                     \
            for (int64_t z = p->dims == 3; z < nz - (p->dims == 3); z++)                                       \
                for (int64_t y = p->dims >= 2; y < ny - (p->dims >= 2); y++)                                   \
                    for (int64_t x = 1; x < nx - 1; x++) {                                                     \
                        const int64_t i = (z * ny + y) * nx + x;                                               \
                        T sum = cx * (u[i - 1] + u[i + 1]);                                                    \
                        if (p->dims >= 2) sum = sum + cy * (u[i - sy] + u[i + sy]);                            \
                        if (p->dims == 3) sum = sum + cz * (u[i - sz] + u[i + sz]);                            \
                        const T j = f ? (sum + f[i]) * dv : sum * dv;                                          \
                        next[i] = w == (T)1 ? j : prev[i] + w * (j - prev[i]);                                 \
                    }                                                                                          \
            memcpy(prev, u, (size_t)n * sizeof *u);                                                            \
            memcpy(u, next, (size_t)n * sizeof *u);                                                            \
        }                                                                                                      \
        free(prev);                                                                                            \
        free(next);                                                                                            \
    }

DEFINE_REFERENCE(reference_f32, float)
DEFINE_REFERENCE(reference_f64, double)

/* A problem with unequal spacings, a random boundary and guess, random f. */
static pyr_field_t *random_case(pyr_problem_t *p, int dims, const int64_t n[3], const double len[3], pyr_precision_t prec,
                                int64_t sweeps, int64_t check_every, uint64_t seed)
{
    make_poisson(p, dims, n, len, prec, sweeps, 1e-300, check_every, PYR_RHS_SINE, PYR_INIT_RANDOM, seed);
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(p, &f));
    rng_t r = {seed * 17 + 3};
    for (int64_t i = 0; f && i < pyr_field_count(f); i++) {
        const double v = (double)(rng_next(&r) % 2000001) / 100000.0 - 10.0;
        if (prec == PYR_DOUBLE) ((double *)f->data)[i] = v;
        else ((float *)f->data)[i] = (float)v;
    }
    return f;
}

static void test_bits(int dims, pyr_precision_t prec)
{
    static const int64_t sizes[3][3] = {{301, 1, 1}, {67, 45, 1}, {19, 23, 17}};
    static const double len[3] = {1.0, 2.7, 0.6};
    const int64_t sweeps = 157;
    pyr_problem_t p;
    pyr_field_t *f = random_case(&p, dims, sizes[dims - 1], len, prec, sweeps, 7, 11 + (uint64_t)dims);
    pyr_field_t *ref = NULL;
    CHECK_OK(pyr_field_create(&p, &ref));
    CHECK_OK(pyr_field_init(ref, &p));
    if (!f || !ref) return;
    if (prec == PYR_DOUBLE) reference_f64(&p, ref->data, f->data, sweeps);
    else reference_f32(&p, ref->data, f->data, sweeps);
    static const char *const cpu_kernels[] = {"sweep", "auto", "wave:4,1,3"}, *const cuda_kernels[] = {"plain", "fused:1", "fused:5"};
    const char *const *kernels = backend == PYR_BACKEND_CUDA ? cuda_kernels : cpu_kernels;
    static const int64_t checks[] = {7, 157};
    const size_t bytes = (size_t)pyr_field_count(ref) * (prec == PYR_DOUBLE ? 8 : 4);
    for (size_t k = 0; k < 3; k++)
        for (size_t c = 0; c < sizeof checks / sizeof *checks; c++) {
            if (dims == 1 && k > 1) continue; /* the wavefront and fused launches are 2D and 3D's */
            p.poisson.check_every = checks[c];
            pyr_options_t o = cpu_naive(kernels[k]);
            pyr_run_info_t run;
            pyr_field_t *u = solve(&p, &o, f, 1, &run);
            if (!u) continue;
            CHECK(run.steps == sweeps, "%lld sweeps of %lld", (long long)run.steps, (long long)sweeps);
            int64_t first = -1;
            for (int64_t i = 0; i < pyr_field_count(u) && first < 0; i++)
                if (memcmp((char *)u->data + i * (int64_t)(bytes / (size_t)pyr_field_count(u)),
                           (char *)ref->data + i * (int64_t)(bytes / (size_t)pyr_field_count(u)), bytes / (size_t)pyr_field_count(u)))
                    first = i;
            CHECK(first < 0, "%dD %s, kernel %s, check_every %lld: node %lld differs from the reference recurrence", dims,
                  prec == PYR_DOUBLE ? "double" : "float", kernels[k], (long long)checks[c], (long long)first);
            pyr_field_destroy(&u);
        }
    printf("%dD %s: %lld Chebyshev sweeps equal the reference bit for bit (every kernel variant and pass cut)\n", dims,
           prec == PYR_DOUBLE ? "double" : "float", (long long)sweeps);
    pyr_field_destroy(&f);
    pyr_field_destroy(&ref);
}

/* ------------------------------------------------------------------ direct solve */

/* The converged result against dgbsv on the interior (x fastest):
 * sum_d (u[p-e_d] + u[p+e_d] - 2 u[p]) / h_d^2 = -f[p]. */
static void test_direct(int dims, const int64_t n[3], const double len[3], uint64_t seed)
{
    pyr_problem_t p;
    pyr_field_t *f = random_case(&p, dims, n, len, PYR_DOUBLE, 200000, 10, seed);
    p.poisson.tolerance = 1e-12;
    pyr_options_t o = cpu_naive(NULL);
    pyr_run_info_t run;
    pyr_field_t *u = solve(&p, &o, f, 1, &run);
    pyr_field_t *g = NULL;
    CHECK_OK(pyr_field_create(&p, &g));
    CHECK_OK(pyr_field_init(g, &p));
    if (!u || !g || !f) {
        pyr_field_destroy(&f);
        pyr_field_destroy(&u);
        pyr_field_destroy(&g);
        return;
    }
    CHECK(run.converged, "did not converge: change %g after %lld sweeps", run.change, (long long)run.steps);
    const int64_t nx = p.n[0], ny = p.n[1], nz = p.n[2];
    const int64_t ix = nx - 2, iy = ny - 2, iz = dims == 3 ? nz - 2 : 1;
    const int N = (int)(ix * iy * iz), bw = (int)(dims == 3 ? ix * iy : ix), ldab = 3 * bw + 1, nrhs = 1;
    double *ab = calloc((size_t)ldab * (size_t)N, sizeof *ab), *b = calloc((size_t)N, sizeof *b);
    int *ipiv = malloc((size_t)N * sizeof *ipiv);
    double inv[3];
    for (int d = 0; d < 3; d++) {
        const double h = pyr_problem_h(&p, d);
        inv[d] = d < dims ? 1.0 / (h * h) : 0;
    }
#define AB(row, col) ab[(size_t)(2 * bw + (row) - (col)) + (size_t)(col) * (size_t)ldab]
    const double *gd = g->data, *fd = f->data;
    for (int64_t z = 0; z < iz; z++)
        for (int64_t y = 0; y < iy; y++)
            for (int64_t x = 0; x < ix; x++) {
                const int row = (int)((z * iy + y) * ix + x);
                const int64_t gi = ((dims == 3 ? z + 1 : 0) * ny + y + 1) * nx + x + 1;
                AB(row, row) = -2 * (inv[0] + inv[1] + inv[2]);
                b[row] = -fd[gi];
                const int64_t step[3] = {1, nx, nx * ny}, rstep[3] = {1, ix, ix * iy}, pos[3] = {x, y, z}, ext[3] = {ix, iy, iz};
                for (int d = 0; d < dims; d++)
                    for (int side = -1; side <= 1; side += 2) {
                        const int64_t q = pos[d] + side;
                        if (q < 0 || q >= ext[d]) b[row] -= inv[d] * gd[gi + side * step[d]];
                        else AB(row, row + side * (int)rstep[d]) = inv[d];
                    }
            }
#undef AB
    int info = 0;
    dgbsv_(&N, &bw, &bw, &nrhs, ab, &ldab, ipiv, b, &N, &info);
    CHECK(info == 0, "dgbsv info %d", info);
    double maxdiff = 0, scale = 0;
    for (int64_t z = 0; z < iz; z++)
        for (int64_t y = 0; y < iy; y++)
            for (int64_t x = 0; x < ix; x++) {
                const int row = (int)((z * iy + y) * ix + x);
                const int64_t gi = ((dims == 3 ? z + 1 : 0) * ny + y + 1) * nx + x + 1;
                const double d = fabs(((double *)u->data)[gi] - b[row]);
                if (d > maxdiff) maxdiff = d;
                if (fabs(b[row]) > scale) scale = fabs(b[row]);
            }
    printf("%dD %lldx%lldx%lld direct solve: %lld Chebyshev sweeps, max |u - dgbsv| = %.3g (relative %.3g)\n", dims, (long long)nx,
           (long long)ny, (long long)nz, (long long)run.steps, maxdiff, maxdiff / scale);
    CHECK(maxdiff <= 1e-10 * scale, "%dD: the Chebyshev solution differs from the direct solve by %.3g relative", dims, maxdiff / scale);
    free(ab);
    free(b);
    free(ipiv);
    pyr_field_destroy(&f);
    pyr_field_destroy(&u);
    pyr_field_destroy(&g);
}

/* ------------------------------------------------------------------ sweeps to a tolerance */

/* examples/poisson2d.ini at n x n: f such that u = sin(pi x) sin(pi y), from 0. */
static int64_t sweeps_to(int64_t n, int cheb, double *err)
{
    const int64_t nn[3] = {n, n, 1};
    pyr_problem_t p;
    make_poisson(&p, 2, nn, NULL, PYR_DOUBLE, 300000, 1e-9, 50, PYR_RHS_SINE, PYR_INIT_ZERO, 0);
    pyr_options_t o = cpu_naive(NULL);
    pyr_run_info_t run;
    pyr_field_t *u = solve(&p, &o, NULL, cheb, &run);
    if (!u) return -1;
    CHECK(run.converged && run.change < 1e-9, "%lld^2 %s: change %g after %lld sweeps", (long long)n, cheb ? "Chebyshev" : "Jacobi",
          run.change, (long long)run.steps);
    double e = 0;
    for (int64_t y = 0; y < n; y++)
        for (int64_t x = 0; x < n; x++) {
            const double exact = sin(M_PI * (double)x / (double)(n - 1)) * sin(M_PI * (double)y / (double)(n - 1));
            e = fmax(e, fabs(((double *)u->data)[y * n + x] - exact));
        }
    *err = e;
    pyr_field_destroy(&u);
    return run.steps;
}

static void test_sweeps(void)
{
    double ec, ej;
    const int64_t cheb = sweeps_to(257, 1, &ec);
    /* plain Jacobi: 149,150 sweeps on this problem (docs/methods.md) */
    printf("257^2 to a change of 1e-9: %lld Chebyshev sweeps (plain Jacobi 149150), error against sin sin %.3g\n", (long long)cheb, ec);
    CHECK(cheb > 0 && cheb * 50 <= 149150, "257^2: %lld Chebyshev sweeps, more than 1/50 of plain Jacobi's 149150", (long long)cheb);
    /* the discretisation error of the 257^2 grid, about (pi h)^2 / 12 = 1.3e-5, not the iteration's */
    CHECK(ec < 2e-5, "257^2: error %.3g against the exact solution", ec);
    const int64_t c129 = sweeps_to(129, 1, &ec), j129 = sweeps_to(129, 0, &ej);
    printf("129^2 to a change of 1e-9: %lld Chebyshev sweeps, %lld plain Jacobi sweeps; errors %.3g, %.3g\n", (long long)c129,
           (long long)j129, ec, ej);
    CHECK(c129 > 0 && j129 > 0 && c129 * 50 <= j129, "129^2: %lld Chebyshev sweeps against %lld plain Jacobi sweeps", (long long)c129,
          (long long)j129);
    /* plain Jacobi stops with an iteration error up to change / (1 - rho), 3.3e-6 here: the two agree within it */
    const double rho = cos(M_PI / 128);
    CHECK(fabs(ec - ej) < 2 * 1e-9 / (1 - rho), "129^2: the two solutions' errors %.3g and %.3g differ", ec, ej);
}

int main(int argc, char **argv)
{
    const int slow = argc > 1 && !strcmp(argv[1], "slow");
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (pyr_gpu_count() == 0) {
            printf("no usable GPU: skipped\n");
            return 77;
        }
        backend = PYR_BACKEND_CUDA;
        for (int dims = 1; dims <= 3; dims++) {
            test_bits(dims, PYR_DOUBLE);
            test_bits(dims, PYR_FLOAT);
        }
        return check_report();
    }
    /* the weights: w_1 = 1, then falling towards 2 / (1 + sqrt(1 - rho^2)) */
    double *w = NULL;
    int64_t nw = 0;
    const double rho = cos(M_PI / 256);
    CHECK_OK(pyr_poisson_chebyshev_weights(rho, &w, &nw));
    if (w) {
        CHECK(w[0] == 1 && nw > 2 && w[1] == 1.0 / (1.0 - rho * rho / 2.0), "the first weights: %g, %g", w[0], nw > 1 ? w[1] : 0);
        const double limit = 2.0 / (1.0 + sqrt(1.0 - rho * rho));
        CHECK(fabs(w[nw - 1] - limit) < 1e-13, "the weights end at %.17g, not at %.17g", w[nw - 1], limit);
        for (int64_t k = 0; k < nw; k += 97) CHECK(fabs(w[k] - weight(rho, k)) <= 1e-15 * w[k], "weight %lld", (long long)k);
        printf("weights for rho = cos(pi/256): %lld of them, from 1 to %.17g\n", (long long)nw, w[nw - 1]);
        free(w);
    }
    for (int dims = 1; dims <= 3; dims++) {
        test_bits(dims, PYR_DOUBLE);
        test_bits(dims, PYR_FLOAT);
    }
    const int64_t n2[3] = {97, 61, 1}, n3[3] = {17, 13, 11};
    const double l2[3] = {1.0, 1.9, 1.0}, l3[3] = {0.7, 1.0, 1.6};
    test_direct(2, n2, l2, 5);
    test_direct(3, n3, l3, 6);
    if (slow) test_sweeps();
    return check_report();
}
