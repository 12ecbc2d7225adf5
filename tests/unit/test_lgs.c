/* Line Gauss–Seidel on the CPU: the degree paper's test systems
 * (docs/theory.md#block-gauss-seidel-with-thomas), the convergence factor of
 * line GS and line SOR on the Dirichlet Laplacian, a parabolic step against
 * its exact discrete solution, and the error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pyrgrid.h"
#include "solvers/lgs/lgs_expr.h"

static const double PI = 3.14159265358979323846;

static double max_err_ones(const double *y, size_t count)
{
    double e = 0.0;
    for (size_t q = 0; q < count; q++) {
        double d = fabs(y[q] - 1.0);
        if (!(d <= e)) e = d; /* NaN propagates */
    }
    return e;
}

/* Solve from zero; return the max error against all ones (or +inf). */
static double solve_ones(const pyr_lgs_system_t *sys, const pyr_lgs_options_t *o, pyr_lgs_result_t **res_out)
{
    size_t count = (size_t)sys->n * (size_t)sys->m;
    double *y = calloc(count, sizeof *y);
    pyr_lgs_result_t *res = NULL;
    pyr_status_t st = pyr_lgs_solve(sys, o, y, &res);
    CHECK_OK(st);
    double e = st == PYR_OK ? max_err_ones(y, count) : INFINITY;
    if (res_out)
        *res_out = res;
    else
        pyr_lgs_result_destroy(&res);
    free(y);
    return e;
}

static void test_systems_converge(void)
{
    struct {
        const char *name;
        int kind;
        int64_t n, m;
    } cases[] = {{"test1", 1, 64, 48}, {"test1", 1, 33, 1}, {"test1", 1, 1, 40}, {"test2", 2, 16, 20}, {"test2", 2, 9, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pyr_lgs_system_t *sys = NULL;
        if (cases[c].kind == 1)
            CHECK_OK(pyr_lgs_system_test1(cases[c].n, cases[c].m, &sys));
        else
            CHECK_OK(pyr_lgs_system_test2(cases[c].n, cases[c].m, &sys));
        if (!sys) continue;
        for (int ord = 0; ord < 2; ord++)
            for (int variant = 0; variant < 3; variant++) {
                pyr_lgs_options_t o;
                pyr_lgs_options_default(&o);
                o.backend = PYR_BACKEND_CPU;
                o.ordering = ord ? PYR_LGS_REDBLACK : PYR_LGS_LEXICOGRAPHIC;
                o.tolerance = 1e-14;
                o.check_every = 1;
                o.max_iterations = 200000;
                if (variant == 1) o.omega = 1.3;
                if (variant == 2) o.precondition = PYR_LGS_PRECOND_JACOBI;
                pyr_lgs_result_t *res = NULL;
                double e = solve_ones(sys, &o, &res);
                CHECK(e <= 1e-10, "%s %lldx%lld %s variant %d: max error %g after %lld iterations", cases[c].name,
                      (long long)cases[c].n, (long long)cases[c].m, pyr_lgs_ordering_name(o.ordering), variant, e,
                      res ? (long long)res->iterations : -1LL);
                CHECK(res && res->stop == PYR_LGS_CONVERGED && res->backend == PYR_BACKEND_CPU, "%s: stop %s",
                      cases[c].name, res ? pyr_lgs_stop_name(res->stop) : "none");
                CHECK(res && res->history_len >= 2 && res->history_iteration[0] == 0 &&
                          res->history_residual[res->history_len - 1] == res->rel_residual,
                      "history is recorded");
                pyr_lgs_result_destroy(&res);
            }
        pyr_lgs_system_destroy(&sys);
    }
}

/* Red–black iterates do not depend on the thread count, and the reported
 * residual equals an independent computation. */
static void test_threads_identical(void)
{
    pyr_lgs_system_t *sys = NULL;
    CHECK_OK(pyr_lgs_system_test1(37, 301, &sys));
    if (!sys) return;
    size_t count = (size_t)37 * 301;
    double *y1 = calloc(count, sizeof *y1), *y2 = calloc(count, sizeof *y2);
    pyr_lgs_options_t o;
    pyr_lgs_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.tolerance = 0;
    o.max_iterations = 5;
    o.omega = 1.2;
    pyr_lgs_result_t *r1 = NULL, *r2 = NULL;
    o.threads = 1;
    CHECK_OK(pyr_lgs_solve(sys, &o, y1, &r1));
    o.threads = 3;
    CHECK_OK(pyr_lgs_solve(sys, &o, y2, &r2));
    CHECK(!memcmp(y1, y2, count * sizeof *y1), "red-black iterates differ between 1 and 3 threads");
    CHECK(r1 && r1->iterations == 5, "5 iterations were asked for");
    double rel = 0;
    CHECK_OK(pyr_lgs_residual(sys, y1, &rel));
    CHECK(r1 && fabs(rel - r1->rel_residual) <= 1e-12 * rel, "residual %g vs independent %g",
          r1 ? r1->rel_residual : -1, rel);
    /* lexicographic and red-black iterates differ (different orderings) but both approach ones */
    o.ordering = PYR_LGS_LEXICOGRAPHIC;
    double *y3 = calloc(count, sizeof *y3);
    pyr_lgs_result_t *r3 = NULL;
    CHECK_OK(pyr_lgs_solve(sys, &o, y3, &r3));
    CHECK(memcmp(y1, y3, count * sizeof *y1) != 0, "orderings should give different iterates");
    CHECK(r3 && r3->threads == 1, "lexicographic runs on one thread");
    pyr_lgs_result_destroy(&r1);
    pyr_lgs_result_destroy(&r2);
    pyr_lgs_result_destroy(&r3);
    free(y1);
    free(y2);
    free(y3);
    pyr_lgs_system_destroy(&sys);
}

/* Asymptotic factor (r_b / r_a)^(1/(b-a)) from a history with check_every = 1. */
static double measured_factor(const pyr_lgs_result_t *r, int64_t a, int64_t b)
{
    return pow(r->history_residual[b] / r->history_residual[a], 1.0 / (double)(b - a));
}

static void test_convergence_factor(void)
{
    int64_t sizes[2][2] = {{32, 32}, {40, 24}};
    for (int s = 0; s < 2; s++) {
        int64_t n = sizes[s][0], m = sizes[s][1];
        pyr_lgs_system_t *sys = NULL;
        CHECK_OK(pyr_lgs_system_laplace(n, m, &sys));
        if (!sys) continue;
        double rj = cos(PI / (double)(n + 1)) / (2.0 - cos(PI / (double)(m + 1)));
        double rho = rj * rj;
        for (int ord = 0; ord < 2; ord++) {
            pyr_lgs_options_t o;
            pyr_lgs_options_default(&o);
            o.backend = PYR_BACKEND_CPU;
            o.ordering = ord ? PYR_LGS_REDBLACK : PYR_LGS_LEXICOGRAPHIC;
            o.tolerance = 0;
            o.max_iterations = 700;
            o.check_every = 1;
            double *y = calloc((size_t)(n * m), sizeof *y);
            pyr_lgs_result_t *r = NULL;
            CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
            if (r && r->history_len == 701) {
                double f = measured_factor(r, 500, 700);
                CHECK(fabs(f - rho) <= 0.02 * rho, "%lldx%lld %s: factor %.6f vs theory %.6f", (long long)n,
                      (long long)m, pyr_lgs_ordering_name(o.ordering), f, rho);
                /* the rate -ln(rho) too, which tells line from point GS (cos^2(pi h)) */
                CHECK(fabs(log(f) / log(rho) - 1.0) <= 0.02, "%lldx%lld %s: rate %.6f vs theory %.6f", (long long)n,
                      (long long)m, pyr_lgs_ordering_name(o.ordering), -log(f), -log(rho));
            } else {
                CHECK(0, "history has %lld entries, expected 701", r ? (long long)r->history_len : -1LL);
            }
            pyr_lgs_result_destroy(&r);
            free(y);
        }
        pyr_lgs_system_destroy(&sys);
    }
}

/* Line SOR with the optimal omega needs at least 20x fewer iterations than
 * line GS at 256 x 256: GS is run for 20x SOR's count and must still be short
 * of the tolerance. */
static void test_sor_speedup(void)
{
    const int64_t n = 256;
    pyr_lgs_system_t *sys = NULL;
    CHECK_OK(pyr_lgs_system_laplace(n, n, &sys));
    if (!sys) return;
    double *y = calloc((size_t)(n * n), sizeof *y);
    pyr_lgs_options_t o;
    pyr_lgs_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.tolerance = 1e-8;
    o.check_every = 1;
    o.omega = pyr_lgs_omega_laplace(n, n);
    pyr_lgs_result_t *r = NULL;
    CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
    int64_t sor = r ? r->iterations : 0;
    CHECK(r && r->stop == PYR_LGS_CONVERGED, "SOR converges");
    CHECK(max_err_ones(y, (size_t)(n * n)) < 1e-5, "SOR solution close to ones");
    pyr_lgs_result_destroy(&r);
    memset(y, 0, (size_t)(n * n) * sizeof *y);
    o.omega = 1.0;
    o.max_iterations = 20 * sor;
    o.check_every = 20 * sor;
    CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
    CHECK(r && r->stop == PYR_LGS_MAX_ITERATIONS && r->rel_residual > 1e-8,
          "line GS reached %g in %lld iterations = 20x SOR's %lld", r ? r->rel_residual : -1.0,
          r ? (long long)r->iterations : -1LL, (long long)sor);
    if (r && r->rel_residual > 0) {
        /* GS's iterations to 1e-8 extrapolated at its theoretical rate */
        double rj = cos(PI / (double)(n + 1)) / (2.0 - cos(PI / (double)(n + 1)));
        double more = log(1e-8 / r->rel_residual) / log(rj * rj);
        printf("line SOR (omega %.4f): %lld iterations; line GS: about %.0f (%.0fx)\n", pyr_lgs_omega_laplace(n, n),
               (long long)sor, (double)r->iterations + more, ((double)r->iterations + more) / (double)sor);
    }
    pyr_lgs_result_destroy(&r);
    free(y);
    pyr_lgs_system_destroy(&sys);
}

/* Backward Euler on sin(pi x/lx) sin(pi z/lz) with constant a, f = 0, g = 0:
 * the discrete solution is u_prev / (1 + tau a (lambda_x + lambda_z)). */
static void test_parabolic_mode(void)
{
    const int64_t n = 30, m = 45;
    pyr_lgs_parabolic_t par;
    pyr_lgs_parabolic_default(&par);
    par.tau = 2e-3;
    par.lx = 1.0;
    par.lz = 2.0;
    par.a.value = 0.7;
    par.u_prev.formula = "sin(pi*x)*sin(pi*z/2)";
    pyr_lgs_system_t *sys = NULL;
    CHECK_OK(pyr_lgs_system_parabolic(n, m, &par, &sys));
    if (!sys) return;
    double hx = 1.0 / (double)(n + 1), hz = 2.0 / (double)(m + 1);
    double lx = 4.0 / (hx * hx) * pow(sin(PI * hx / 2.0), 2), lz = 4.0 / (hz * hz) * pow(sin(PI * hz / 4.0), 2);
    double g = 1.0 / (1.0 + par.tau * 0.7 * (lx + lz));
    for (int ord = 0; ord < 2; ord++) {
        double *y = calloc((size_t)(n * m), sizeof *y);
        pyr_lgs_options_t o;
        pyr_lgs_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.ordering = ord ? PYR_LGS_REDBLACK : PYR_LGS_LEXICOGRAPHIC;
        o.tolerance = 1e-14;
        pyr_lgs_result_t *r = NULL;
        CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
        double err = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < m; k++) {
                double exact = g * sin(PI * (double)(i + 1) * hx) * sin(PI * (double)(k + 1) * hz / 2.0);
                err = fmax(err, fabs(y[i * m + k] - exact));
            }
        CHECK(err <= 1e-12, "parabolic eigenmode: max error %g", err);
        CHECK(r && r->warning[0] == '\0', "a parabolic step is diagonally dominant");
        pyr_lgs_result_destroy(&r);
        free(y);
    }
    /* boundary values enter the right side: u = 1 everywhere solves g = 1, f = 0, u_prev = 1 */
    pyr_lgs_system_destroy(&sys);
    pyr_lgs_parabolic_default(&par);
    par.a.formula = "1 + x*z";
    par.u_prev.value = 1.0;
    par.boundary.value = 1.0;
    CHECK_OK(pyr_lgs_system_parabolic(12, 17, &par, &sys));
    if (sys) {
        pyr_lgs_options_t o;
        pyr_lgs_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.tolerance = 1e-14;
        CHECK(solve_ones(sys, &o, NULL) <= 1e-12, "constant solution with Dirichlet boundary 1");
    }
    pyr_lgs_system_destroy(&sys);
    /* a bad diffusivity and a bad formula are reported */
    pyr_lgs_parabolic_default(&par);
    par.a.formula = "x - 0.5";
    CHECK_FAILS(pyr_lgs_system_parabolic(8, 8, &par, &sys), PYR_ERR_CONFIG, "diffusivity must be positive");
    par.a.formula = "1 + sinn(x)";
    CHECK_FAILS(pyr_lgs_system_parabolic(8, 8, &par, &sys), PYR_ERR_CONFIG, "unknown name \"sinn\"");
    CHECK(sys == NULL, "no system on failure");
}

static void test_expr(void)
{
    pyr_expr_t *e = NULL;
    CHECK_OK(pyr_expr_compile("2^3^2 - -x*z/4 + sqrt(abs(-16)) + 2e-1", &e));
    if (e) CHECK(pyr_expr_eval(e, 2.0, 6.0) == 512.0 + 3.0 + 4.0 + 0.2, "value %g", pyr_expr_eval(e, 2.0, 6.0));
    pyr_expr_destroy(&e);
    CHECK(e == NULL, "destroy NULLs");
    CHECK_OK(pyr_expr_compile("(1+x)*(1-z)", &e));
    if (e) CHECK(pyr_expr_eval(e, 0.5, 0.25) == 1.125, "value");
    pyr_expr_destroy(&e);
    CHECK_FAILS(pyr_expr_compile("1 + (x", &e), PYR_ERR_CONFIG, "expected ')'");
    CHECK_FAILS(pyr_expr_compile("1 +", &e), PYR_ERR_CONFIG, "position 4");
    CHECK_FAILS(pyr_expr_compile("x y", &e), PYR_ERR_CONFIG, "expected an operator");

    /* issue 18: nesting is limited (the recursive descent overflowed the stack
     * on 60000 '(' or 100000 '-' and the program died with SIGSEGV), and so is
     * the length; formulas within the limits still compile and evaluate. */
    size_t big = 100000;
    char *t = malloc(2 * big + 2);
    memset(t, '(', big);
    t[big] = 'x';
    memset(t + big + 1, ')', big);
    t[2 * big + 1] = 0;
    CHECK_FAILS(pyr_expr_compile(t, &e), PYR_ERR_CONFIG, "is 200001 characters long");
    memset(t, '-', big);
    t[big] = 'x';
    t[big + 1] = 0;
    CHECK_FAILS(pyr_expr_compile(t + big - 4000, &e), PYR_ERR_CONFIG, "nested more than 200 levels");
    size_t deep = 2000; /* within the length limit, too deep */
    memset(t, '(', deep);
    t[deep] = 'x';
    memset(t + deep + 1, ')', deep);
    t[2 * deep + 1] = 0;
    CHECK_FAILS(pyr_expr_compile(t, &e), PYR_ERR_CONFIG, "nested more than 200 levels");
    CHECK(e == NULL, "no formula on failure");
    strcpy(t, "2");
    for (int k = 0; k < 90; k++) strcat(t, "^(1"); /* 2^(1^(1^...)) = 2: 180 levels, a power and a parenthesis each */
    for (int k = 0; k < 90; k++) strcat(t, ")");
    CHECK_OK(pyr_expr_compile(t, &e));
    if (e) CHECK(pyr_expr_eval(e, 0, 0) == 2.0, "deep power: %g", pyr_expr_eval(e, 0, 0));
    pyr_expr_destroy(&e);
    snprintf(t, 64, "%s", "-(-(-(-(x))))");
    CHECK_OK(pyr_expr_compile(t, &e));
    if (e) CHECK(pyr_expr_eval(e, 3, 0) == 3.0, "signs: %g", pyr_expr_eval(e, 3, 0));
    pyr_expr_destroy(&e);
    free(t);
}

static void test_errors(void)
{
    pyr_lgs_system_t *sys = NULL;
    pyr_lgs_result_t *r = NULL;
    double y[64] = {0};
    pyr_lgs_options_t o;
    pyr_lgs_options_default(&o);
    o.backend = PYR_BACKEND_CPU;

    /* zero pivot: c = 1, a = b = 1 on row i = 2 gives den_1 = 1 - 1*1 = 0 */
    CHECK_OK(pyr_lgs_system_test1(4, 5, &sys));
    for (int k = 0; k < 5; k++) {
        sys->cC[2 * 5 + k] = 1.0;
        sys->aC[2 * 5 + k] = 1.0;
        sys->bC[2 * 5 + k] = 1.0;
    }
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_NUMERIC, "block row i = 2, k = 1");
    CHECK(r == NULL, "no result on a zero pivot");
    /* the same rows are reported by the dominance check as a warning */
    char warn[512];
    CHECK_OK(pyr_lgs_system_check(sys, warn, sizeof warn));
    CHECK(strstr(warn, "not diagonally dominant") && strstr(warn, "i = 2, k = 1"), "warning: %s", warn);
    /* a zero diagonal */
    sys->cC[3 * 5 + 4] = 0.0;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_NUMERIC, "cC[3, 4] = 0");
    pyr_lgs_system_destroy(&sys);

    /* NaN in an entry that exists; NaN in one that does not is ignored */
    CHECK_OK(pyr_lgs_system_test1(4, 5, &sys));
    sys->aC[2 * 5 + 0] = NAN; /* aC[:, 0] is not in the matrix */
    sys->cB[3 * 5 + 1] = INFINITY; /* cB[N-1, :] neither */
    o.tolerance = 1e-12;
    CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
    pyr_lgs_result_destroy(&r);
    sys->bC[1 * 5 + 3] = NAN;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_ARG, "bC[1, 3] is nan");
    sys->bC[1 * 5 + 3] = 0.1;
    sys->F[7] = -INFINITY;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_ARG, "F[1, 2] is -inf");
    sys->F[7] = 1.0;
    y[3] = NAN;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_ARG, "initial guess y[0, 3]");
    y[3] = 0.0;

    /* bad options */
    o.omega = 2.0;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_ARG, "0 < omega < 2");
    o.omega = 1.0;
    o.check_every = 0;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_ARG, "check_every");
    o.check_every = 10;
    o.backend = PYR_BACKEND_CUDA;
    o.ordering = PYR_LGS_LEXICOGRAPHIC;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_UNSUPPORTED, "ordering = redblack");
    o.ordering = PYR_LGS_REDBLACK;
    if (pyr_lgs_cuda_usable() != PYR_OK)
        CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_NODEVICE, "backend = cpu");
    o.backend = PYR_BACKEND_CPU;
    pyr_lgs_system_destroy(&sys);

    /* sizes */
    CHECK_FAILS(pyr_lgs_system_create(0, 5, &sys), PYR_ERR_SIZE, "at least 1");
    CHECK_FAILS(pyr_lgs_system_test2(1, 5, &sys), PYR_ERR_SIZE, "N >= 2");
    CHECK_FAILS(pyr_lgs_system_create(INT64_C(1) << 40, INT64_C(1) << 40, &sys), PYR_ERR_SIZE, "overflow");
    CHECK(sys == NULL, "no system on failure");

    /* divergence: strong block coupling, |cC| = 1 < |cA| + |cB| = 4 */
    CHECK_OK(pyr_lgs_system_create(8, 3, &sys));
    for (int q = 0; q < 24; q++) {
        sys->cC[q] = 1.0;
        sys->cA[q] = 2.0;
        sys->cB[q] = 2.0;
        sys->F[q] = 1.0;
    }
    memset(y, 0, sizeof y);
    o.tolerance = 1e-10;
    o.check_every = 1;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_DIVERGED, "diverged");
    CHECK(r && r->stop == PYR_LGS_DIVERGED && strstr(r->warning, "not diagonally dominant"),
          "result kept with stop = diverged and the warning");
    pyr_lgs_result_destroy(&r);
    pyr_lgs_system_destroy(&sys);

    /* stagnation: a tolerance below what double precision reaches */
    CHECK_OK(pyr_lgs_system_test1(6, 7, &sys));
    memset(y, 0, sizeof y);
    o.tolerance = 1e-30;
    o.stagnation_window = 300;
    o.max_iterations = 1000000;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_DIVERGED, "stagnated");
    CHECK(r && r->stop == PYR_LGS_STAGNATED && r->iterations < 2000, "stopped early: %lld iterations",
          r ? (long long)r->iterations : -1LL);
    CHECK(max_err_ones(y, 42) < 1e-14, "the stagnated iterate is still returned");
    pyr_lgs_result_destroy(&r);

    /* max_iterations reached is not an error */
    memset(y, 0, sizeof y);
    o.tolerance = 1e-12;
    o.max_iterations = 3;
    CHECK_OK(pyr_lgs_solve(sys, &o, y, &r));
    CHECK(r && r->stop == PYR_LGS_MAX_ITERATIONS && r->iterations == 3, "stop at max_iterations");
    pyr_lgs_result_destroy(&r);
    CHECK(r == NULL, "destroy NULLs");
    pyr_lgs_system_destroy(&sys);
    CHECK(sys == NULL, "destroy NULLs");
}

/* The progress callback is called every report_every iterations and can cancel. */
static int count_calls(void *user, int64_t it, double rel)
{
    (void)rel;
    int *calls = user;
    calls[0]++;
    calls[1] = (int)it;
    return calls[0] >= 3;
}

static void test_progress(void)
{
    pyr_lgs_system_t *sys = NULL;
    CHECK_OK(pyr_lgs_system_test2(10, 10, &sys));
    if (!sys) return;
    double y[100] = {0};
    int calls[2] = {0, 0};
    pyr_lgs_options_t o;
    pyr_lgs_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.report_every = 7;
    o.progress = count_calls;
    o.progress_user = calls;
    pyr_lgs_result_t *r = NULL;
    CHECK_FAILS(pyr_lgs_solve(sys, &o, y, &r), PYR_ERR_CANCELLED, "cancelled");
    CHECK(calls[0] == 3 && calls[1] == 21, "3 calls, the last at 21 (got %d, %d)", calls[0], calls[1]);
    CHECK(r && r->stop == PYR_LGS_CANCELLED && r->iterations == 21, "stopped at 21");
    pyr_lgs_result_destroy(&r);
    pyr_lgs_system_destroy(&sys);
}

int main(void)
{
    test_expr();
    test_errors();
    test_progress();
    test_threads_identical();
    test_systems_converge();
    test_convergence_factor();
    test_parabolic_mode();
    test_sor_speedup();
    return check_report();
}
