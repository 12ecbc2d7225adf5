/* The Poisson equation with Jacobi sweeps (issue 19): physics and numerics.
 *   - a manufactured solution, u = prod sin(pi x_d / L_d) with f = |k|^2 u,
 *     converges at second order in h (errors on three grids, 2D and 3D);
 *   - the converged discrete solution equals a direct solve of the same
 *     linear system (LAPACK dgbsv) to 1e-10 relative, on grids with unequal
 *     spacings, random f and a random boundary;
 *   - the change norm after k sweeps of the lowest mode follows the Jacobi
 *     factor rho = sum_d cos(pi/(n_d-1))/h_d^2 / sum_d 1/h_d^2: the change of
 *     sweep k is rho^(k-1) (1 - rho) max|mode|, within 1%;
 *   - damping, stopping at checks, and what the library refuses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poisson_util.h"
#include "schemes/scheme.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

void dgbsv_(const int *n, const int *kl, const int *ku, const int *nrhs, double *ab, const int *ldab, int *ipiv, double *b,
            const int *ldb, int *info);

static pyr_options_t cpu_naive(void)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    return o;
}

/* Max-norm error against prod sin(pi x_d / L_d) after converging. */
static double manufactured_error(int dims, int64_t n)
{
    int64_t nn[3] = {n, n, n};
    double len[3] = {1.0, 0.8, 1.3};
    pyr_problem_t p;
    make_poisson(&p, dims, nn, len, PYR_DOUBLE, 200000, 1e-13, 50, PYR_RHS_SINE, PYR_INIT_ZERO, 0);
    pyr_options_t o = cpu_naive();
    pyr_run_info_t run;
    pyr_status_t st;
    pyr_field_t *u = solve_poisson(&p, &o, NULL, &run, &st);
    CHECK(st == PYR_OK && u, "%dD n=%lld: %s", dims, (long long)n, pyr_last_error());
    if (!u) return NAN;
    CHECK(run.converged, "%dD n=%lld: did not converge (change %g after %lld sweeps)", dims, (long long)n, run.change, (long long)run.steps);
    double err = 0;
    for (int64_t z = 0; z < p.n[2]; z++)
        for (int64_t y = 0; y < p.n[1]; y++)
            for (int64_t x = 0; x < p.n[0]; x++) {
                int64_t idx[3] = {x, y, z};
                double exact = 1;
                for (int d = 0; d < dims; d++) exact *= sin(M_PI * (double)idx[d] / (double)(p.n[d] - 1));
                double e = fabs(((double *)u->data)[(z * p.n[1] + y) * p.n[0] + x] - exact);
                if (e > err) err = e;
            }
    pyr_field_destroy(&u);
    return err;
}

static void test_second_order(void)
{
    for (int dims = 2; dims <= 3; dims++) {
        const int64_t ns[3] = {9, 17, 33};
        double e[3];
        for (int i = 0; i < 3; i++) e[i] = manufactured_error(dims, ns[i]);
        for (int i = 0; i < 2; i++) {
            double order = log2(e[i] / e[i + 1]);
            printf("%dD manufactured solution: n = %lld error %.4g, n = %lld error %.4g: order %.3f\n", dims, (long long)ns[i], e[i],
                   (long long)ns[i + 1], e[i + 1], order);
            CHECK(order > 1.9 && order < 2.1, "%dD: convergence order %.3f between n = %lld and %lld, expected 2", dims, order,
                  (long long)ns[i], (long long)ns[i + 1]);
        }
    }
}

/* The discrete system on the interior, banded with the lexicographic order
 * (x fastest): solve A u = b with dgbsv.  A's row of node p: sum_d
 * (u[p-e_d] + u[p+e_d] - 2 u[p]) / h_d^2 = -f[p]; boundary neighbours move
 * to the right-hand side. */
static void test_direct_solve(int dims, const int64_t n[3], const double len[3], uint64_t seed)
{
    pyr_problem_t p;
    /* f given by the caller replaces the problem's (any kind but zero, which moves no f) */
    make_poisson(&p, dims, n, len, PYR_DOUBLE, 400000, 1e-15, 100, PYR_RHS_SINE, PYR_INIT_RANDOM, seed);
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(&p, &f));
    if (!f) return;
    rng_t r = {seed * 31 + 7};
    for (int64_t i = 0; i < pyr_field_count(f); i++) ((double *)f->data)[i] = (double)(rng_next(&r) % 2000001) / 100000.0 - 10.0;
    pyr_options_t o = cpu_naive();
    pyr_run_info_t run;
    pyr_status_t st;
    pyr_field_t *u = solve_poisson(&p, &o, f, &run, &st);
    CHECK(st == PYR_OK && u, "direct-solve case: %s", pyr_last_error());
    pyr_field_t *g = NULL; /* the initial field: boundary values */
    CHECK_OK(pyr_field_create(&p, &g));
    CHECK_OK(pyr_field_init(g, &p));
    if (!u || !g) {
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
        double h = pyr_problem_h(&p, d);
        inv[d] = d < dims ? 1.0 / (h * h) : 0;
    }
#define AB(row, col) ab[(size_t)(2 * bw + (row) - (col)) + (size_t)(col) * (size_t)ldab]
    const double *gd = g->data, *fd = f->data;
    for (int64_t z = 0; z < iz; z++)
        for (int64_t y = 0; y < iy; y++)
            for (int64_t x = 0; x < ix; x++) {
                const int row = (int)((z * iy + y) * ix + x);
                const int64_t gx = x + 1, gy = y + 1, gz = dims == 3 ? z + 1 : 0;
                const int64_t gi = (gz * ny + gy) * nx + gx;
                AB(row, row) = -2 * (inv[0] + inv[1] + inv[2]);
                b[row] = -fd[gi];
                const int64_t step[3] = {1, nx, nx * ny}, rstep[3] = {1, ix, ix * iy}, pos[3] = {x, y, z}, ext[3] = {ix, iy, iz};
                for (int d = 0; d < dims; d++)
                    for (int side = -1; side <= 1; side += 2) {
                        const int64_t q = pos[d] + side;
                        if (q < 0 || q >= ext[d]) b[row] -= inv[d] * gd[gi + side * step[d]]; /* a boundary node */
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
                double d = fabs(((double *)u->data)[gi] - b[row]);
                if (d > maxdiff) maxdiff = d;
                if (fabs(b[row]) > scale) scale = fabs(b[row]);
            }
    printf("%dD %lldx%lldx%lld direct solve: %lld sweeps, max |jacobi - dgbsv| = %.3g (relative %.3g)\n", dims, (long long)nx,
           (long long)ny, (long long)nz, (long long)run.steps, maxdiff, maxdiff / scale);
    CHECK(maxdiff <= 1e-10 * scale, "%dD: Jacobi's solution differs from the direct solve by %.3g relative", dims, maxdiff / scale);
    free(ab);
    free(b);
    free(ipiv);
    pyr_field_destroy(&f);
    pyr_field_destroy(&u);
    pyr_field_destroy(&g);
}

/* The lowest mode decays by rho per sweep. */
static void test_jacobi_factor(int dims)
{
    int64_t n[3] = {33, 17, 21};
    double len[3] = {1.0, 0.7, 1.6};
    double num = 0, den = 0;
    pyr_problem_t p;
    make_poisson(&p, dims, n, len, PYR_DOUBLE, 1, 0, 20, PYR_RHS_ZERO, PYR_INIT_SINE, 0);
    for (int d = 0; d < dims; d++) {
        double h = pyr_problem_h(&p, d);
        num += cos(M_PI / (double)(p.n[d] - 1)) / (h * h);
        den += 1.0 / (h * h);
    }
    const double rho = num / den;
    /* max of the mode over the grid (n odd: the middle node, exactly 1) */
    double top = 1;
    const int64_t ks[4] = {1, 10, 100, 400};
    double change[4];
    for (int i = 0; i < 4; i++) {
        p.steps = ks[i];
        pyr_options_t o = cpu_naive();
        pyr_run_info_t run;
        pyr_status_t st;
        pyr_field_t *u = solve_poisson(&p, &o, NULL, &run, &st);
        CHECK(st == PYR_OK && run.checked, "%dD jacobi factor, k = %lld: %s", dims, (long long)ks[i], pyr_last_error());
        change[i] = run.change;
        const double want = pow(rho, (double)(ks[i] - 1)) * (1 - rho) * top;
        printf("%dD lowest mode: change of sweep %lld = %.6g, rho^(k-1) (1 - rho) = %.6g (rho = %.6f)\n", dims, (long long)ks[i],
               change[i], want, rho);
        CHECK(fabs(change[i] / want - 1) < 0.01, "%dD: change of sweep %lld is %.6g, the Jacobi factor says %.6g", dims, (long long)ks[i],
              change[i], want);
        pyr_field_destroy(&u);
    }
}

/* A damped sweep is u + omega (J - u); stopping happens at a check. */
static void test_damping_and_stops(void)
{
    int64_t n[3] = {21, 19, 1};
    pyr_problem_t p;
    make_poisson(&p, 2, n, NULL, PYR_DOUBLE, 1, 0, 20, PYR_RHS_SINE, PYR_INIT_RANDOM, 3);
    pyr_options_t o = cpu_naive();
    pyr_run_info_t r1, r2;
    pyr_field_t *u0 = NULL;
    CHECK_OK(pyr_field_create(&p, &u0));
    CHECK_OK(pyr_field_init(u0, &p));
    pyr_field_t *j = solve_poisson(&p, &o, NULL, &r1, NULL);
    p.poisson.omega = 0.6;
    pyr_field_t *d = solve_poisson(&p, &o, NULL, &r2, NULL);
    CHECK(u0 && j && d, "damping runs failed: %s", pyr_last_error());
    if (u0 && j && d) {
        double worst = 0;
        for (int64_t i = 0; i < pyr_field_count(u0); i++) {
            double a = ((double *)u0->data)[i], jj = ((double *)j->data)[i], dd = ((double *)d->data)[i];
            double want = a + 0.6 * (jj - a);
            if (fabs(dd - want) > worst) worst = fabs(dd - want);
        }
        CHECK(worst < 1e-14, "damped sweep differs from u + omega (J - u) by %.3g", worst);
    }
    pyr_field_destroy(&u0);
    pyr_field_destroy(&j);
    pyr_field_destroy(&d);

    /* stops: at a multiple of check_every, and the reported change is below the tolerance there */
    p.poisson.omega = 1;
    p.steps = 100000;
    p.poisson.tolerance = 1e-6;
    p.poisson.check_every = 7;
    pyr_run_info_t r;
    pyr_field_t *u = solve_poisson(&p, &o, NULL, &r, NULL);
    CHECK(u && r.converged && r.steps % 7 == 0 && r.steps < 100000 && r.change < 1e-6,
          "stopping: converged %d after %lld sweeps (change %g)", r.converged, (long long)r.steps, r.change);
    /* one check interval fewer does not reach the tolerance */
    p.poisson.tolerance = 0;
    p.steps = r.steps - 7;
    pyr_run_info_t before;
    pyr_field_t *v = solve_poisson(&p, &o, NULL, &before, NULL);
    CHECK(v && before.change >= 1e-6, "the check before the stop already had change %g < 1e-6", before.change);
    pyr_field_destroy(&u);
    pyr_field_destroy(&v);
}

/* Damped Jacobi converges only for omega < 2 / (1 + rho): the bound the
 * validation names is that of the grid, runs just under it converge, plain
 * damped Jacobi just over it diverges, and such an omega is refused. */
static void test_omega_limit(void)
{
    int64_t n[3] = {33, 17, 1};
    double len[3] = {1.0, 0.7, 1.0};
    pyr_problem_t p;
    make_poisson(&p, 2, n, len, PYR_DOUBLE, 200, 0, 50, PYR_RHS_ZERO, PYR_INIT_RANDOM, 5);
    double num = 0, den = 0;
    for (int d = 0; d < 2; d++) {
        double h = pyr_problem_h(&p, d);
        num += cos(M_PI / (double)(p.n[d] - 1)) / (h * h);
        den += 1.0 / (h * h);
    }
    const double rho = num / den, lim = 2 / (1 + rho);
    CHECK(fabs(pyr_poisson_omega_limit(&p) - lim) < 1e-15, "omega limit %.17g, 2 / (1 + rho) = %.17g", pyr_poisson_omega_limit(&p), lim);
    /* just under: the change keeps falling */
    p.poisson.omega = 1 + 0.95 * (lim - 1);
    CHECK_OK(pyr_problem_validate(&p));
    pyr_run_info_t r1, r2;
    pyr_status_t st;
    pyr_field_t *u = poisson_reference(&p, NULL, &r1, &st);
    pyr_field_destroy(&u);
    p.steps = 2000;
    u = poisson_reference(&p, NULL, &r2, &st);
    CHECK(st == PYR_OK && r2.change < 0.5 * r1.change, "omega %.9g under the limit %.9g: change %g after 200 sweeps, %g after 2000",
          p.poisson.omega, lim, r1.change, r2.change);
    pyr_field_destroy(&u);
    /* just over: u + omega (J - u) on the same grid, written out here, grows */
    const int nx = 33, ny = 17;
    const double hx = pyr_problem_h(&p, 0), hy = pyr_problem_h(&p, 1), cx = 1 / (hx * hx), cy = 1 / (hy * hy), dd = 1 / (2 * cx + 2 * cy);
    static double a[17][33], b[17][33];
    uint64_t seed = 99;
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            a[y][x] = (y == 0 || x == 0 || y == ny - 1 || x == nx - 1) ? 0 : (double)(seed >> 11) / 9007199254740992.0 - 0.5;
        }
    const double over = lim * 1.01;
    double first = 0, last = 0;
    for (int k = 0; k < 3000; k++) {
        double mx = 0;
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++) {
                double j = (cx * (a[y][x - 1] + a[y][x + 1]) + cy * (a[y - 1][x] + a[y + 1][x])) * dd;
                b[y][x] = a[y][x] + over * (j - a[y][x]);
                if (fabs(b[y][x] - a[y][x]) > mx) mx = fabs(b[y][x] - a[y][x]);
            }
        for (int y = 1; y < ny - 1; y++) memcpy(&a[y][1], &b[y][1], (size_t)(nx - 2) * sizeof(double));
        if (k == 10) first = mx;
        last = mx;
    }
    CHECK(last > 10 * first, "damped Jacobi with omega %.9g over the limit %.9g: change %g at sweep 10, %g at sweep 3000 (it should grow)",
          over, lim, first, last);
    p.poisson.omega = over;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, "converges only for 0 < omega <");
    /* a fine grid: omega = 1.5 is far over its limit, which the message gives */
    int64_t m[3] = {257, 257, 1};
    make_poisson(&p, 2, m, NULL, PYR_DOUBLE, 10, 0, 5, PYR_RHS_ZERO, PYR_INIT_ZERO, 0);
    p.poisson.omega = 1.5;
    char want[64];
    snprintf(want, sizeof want, "0 < omega < %.9g", 2 / (1 + cos(M_PI / 256)));
    const char *needle = want;
    CHECK_FAILS(pyr_problem_validate(&p), PYR_ERR_CONFIG, needle);
    p.poisson.omega = 1.0;
    CHECK_OK(pyr_problem_validate(&p));
}

static void test_refusals(void)
{
    int64_t n[3] = {11, 12, 1};
    pyr_problem_t p;
    make_poisson(&p, 2, n, NULL, PYR_DOUBLE, 10, 0, 5, PYR_RHS_ZERO, PYR_INIT_ZERO, 0);
    CHECK_OK(pyr_problem_validate(&p));
    pyr_problem_t q = p;
    q.poisson.omega = 2.0;
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "omega");
    q = p;
    q.poisson.omega = 0;
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "0 < omega < 2");
    q = p;
    q.poisson.tolerance = -1;
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "tolerance");
    q = p;
    q.steps = 0;
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "iterations");
    q = p;
    q.poisson.check_every = 0;
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "check_every");
    q = p;
    q.poisson.rhs = PYR_RHS_FILE;
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "rhs.file");

    /* f of the wrong shape, dtype, or with a NaN: nothing runs */
    char dir[] = "/tmp/pyr_poissonXXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/f.npy", dir);
    pyr_problem_t wrong = p;
    wrong.n[0] = 12;
    pyr_field_t *wf = NULL;
    CHECK_OK(pyr_field_create(&wrong, &wf));
    if (wf) memset(wf->data, 0, (size_t)pyr_field_count(wf) * 8);
    FILE *fp = NULL;
    (void)fp;
    /* write with the library's own writer through the CLI-free path: a field of another shape */
    extern pyr_status_t pyr_npy_write(const char *, int, const int64_t *, pyr_precision_t, const void *);
    int64_t shape_wrong[2] = {12, 12};
    CHECK_OK(pyr_npy_write(path, 2, shape_wrong, PYR_DOUBLE, wf ? wf->data : NULL));
    q = p;
    q.poisson.rhs = PYR_RHS_FILE;
    snprintf(q.poisson.rhs_file, sizeof q.poisson.rhs_file, "%s", path);
    pyr_options_t o = cpu_naive();
    pyr_status_t st;
    pyr_field_t *u = solve_poisson(&q, &o, NULL, NULL, &st);
    CHECK(st == PYR_ERR_FORMAT && !u && strstr(pyr_last_error(), "rhs.file"), "f of the wrong shape: %s (%s)", pyr_status_name(st),
          pyr_last_error());
    pyr_field_destroy(&u);
    int64_t shape_ok[2] = {12, 11};
    CHECK_OK(pyr_npy_write(path, 2, shape_ok, PYR_FLOAT, wf ? wf->data : NULL));
    u = solve_poisson(&q, &o, NULL, NULL, &st);
    CHECK(st == PYR_ERR_FORMAT && !u, "f of float dtype for a double problem: %s (%s)", pyr_status_name(st), pyr_last_error());
    pyr_field_destroy(&u);
    if (wf) ((double *)wf->data)[5 * 11 + 4] = NAN;
    CHECK_OK(pyr_npy_write(path, 2, shape_ok, PYR_DOUBLE, wf ? wf->data : NULL));
    u = solve_poisson(&q, &o, NULL, NULL, &st);
    CHECK(st == PYR_ERR_FORMAT && !u && strstr(pyr_last_error(), "NaN") && strstr(pyr_last_error(), "x=4, y=5"),
          "f with a NaN: %s (%s)", pyr_status_name(st), pyr_last_error());
    pyr_field_destroy(&u);
    pyr_field_destroy(&wf);
    remove(path);
    remove(dir);

    /* the wrong number of fields */
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    pyr_field_t *uu = NULL;
    CHECK_OK(pyr_field_create(&p, &uu));
    pyr_field_t *one[1] = {uu};
    CHECK_FAILS(pyr_execute_fields(plan, one, 1, NULL, NULL), PYR_ERR_ARG, "2 fields");
    pyr_field_t *none[2] = {NULL, NULL};
    CHECK_FAILS(pyr_execute_fields(plan, none, 2, NULL, NULL), PYR_ERR_ARG, "u");
    pyr_field_destroy(&uu);
    pyr_plan_destroy(&plan);
}

int main(void)
{
    test_second_order();
    const int64_t n2[3] = {23, 17, 1}, n3[3] = {9, 8, 7};
    const double l2[3] = {1.0, 0.6, 1.0}, l3[3] = {1.0, 0.9, 1.3};
    test_direct_solve(2, n2, l2, 1);
    test_direct_solve(3, n3, l3, 2);
    test_jacobi_factor(2);
    test_jacobi_factor(3);
    test_damping_and_stops();
    test_refusals();
    test_omega_limit();
    return check_report();
}
