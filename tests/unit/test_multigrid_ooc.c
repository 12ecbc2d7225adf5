/* Multigrid out of core (pyr_mg_stream_t): the finest levels streamed in slabs within a device budget give the
 * in-core solve's cycles, residual, cost and every bit of the field (with the transfers beside the kernels done when
 * issued and as late as allowed), on random awkward grids (m * 2^k + 1 nodes,
 * anisotropic spacings, semi-coarsening), 1D, 2D and 3D, float and double, V- and F-cycles, Chebyshev and Jacobi
 * smoothing, pre- or post-smoothing alone, Dirichlet, Neumann (with fluxes) and every face Neumann, with f and
 * without; budgets from just below in core down to the smallest that streams (several levels streamed, slabs of
 * two planes).  The plan's bytes moved per cycle are the bytes the passes move; a budget below the smallest is
 * refused naming it; the method's plan says what it streams and its run gives the level loop's bits.
 * `test_multigrid_ooc gpu` (77 without one): the GPU streamed within a small budget holds the CPU's in-core bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "methods/multigrid.h"
#include "poisson_util.h"
#include "solvers/multigrid/mg.h"
#include "solvers/multigrid/mg_internal.h"

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }

static pyr_field_t *random_f(const pyr_problem_t *p)
{
    pyr_field_t *f = NULL;
    if (pyr_field_create(p, &f) != PYR_OK) return NULL;
    for (int64_t i = 0; i < pyr_field_count(f); i++) {
        const double v = (double)(next() >> 11) / 9007199254740992.0 * 2 - 1;
        if (f->precision == PYR_DOUBLE) ((double *)f->data)[i] = v;
        else ((float *)f->data)[i] = (float)v;
    }
    return f;
}

static int same_bits(const pyr_field_t *a, const pyr_field_t *b) { return a && b && first_difference(a, b) < 0; }

static pyr_status_t solve(const pyr_problem_t *p, pyr_backend_kind_t backend, uint64_t budget, const pyr_field_t *f, pyr_field_t **u,
                          pyr_mg_result_t *res)
{
    pyr_status_t st = poisson_initial_field(p, u);
    if (st == PYR_OK) st = pyr_mg_solve_within(p, backend, 0, 0, budget, *u, f, NULL, res);
    return st;
}

/* m * 2^k + 1 nodes, m in [2, 6], in [least, most] */
static int64_t awkward(int64_t least, int64_t most)
{
    for (;;) {
        const int64_t m = pick(2, 6), k = pick(2, 6), n = m * ((int64_t)1 << k) + 1;
        if (n >= least && n <= most) return n;
    }
}

/* A random problem: sizes, spacings, faces (Dirichlet, Neumann with a flux or without, every face Neumann),
 * smoothing, cycle, precision, f or none. */
static void random_problem(pyr_problem_t *p, int dims, int *with_f)
{
    /* the slabs' axis (the last) longer, so that slabs with their halos are thinner than the grid */
    const int64_t n[3] = {awkward(dims == 1 ? 65 : 9, dims == 3 ? 33 : dims == 2 ? 129 : 1025),
                          awkward(dims == 2 ? 65 : 9, dims == 3 ? 33 : 257), awkward(65, 129)};
    double len[3];
    for (int a = 0; a < 3; a++) len[a] = (double)(n[a] - 1) * (next() % 3 == 0 ? 0.5 + (double)(next() % 1000) / 500.0 : 1.0);
    make_poisson(p, dims, n, len, next() % 2 ? PYR_DOUBLE : PYR_FLOAT, 4, 0, 20, PYR_RHS_FILE, PYR_INIT_RANDOM, next());
    snprintf(p->poisson.rhs_file, sizeof p->poisson.rhs_file, "(given)");
    p->poisson.iteration = PYR_ITER_MULTIGRID;
    p->poisson.cycle = next() % 3 == 0 ? PYR_CYCLE_F : PYR_CYCLE_V;
    p->poisson.smoother = next() % 3 == 0 ? PYR_SMOOTH_JACOBI : PYR_SMOOTH_CHEBYSHEV;
    p->poisson.pre_smooth = (int)pick(0, 3);
    p->poisson.post_smooth = (int)pick(p->poisson.pre_smooth ? 0 : 1, 3);
    const int pure = next() % 5 == 0;
    for (int k = 0; k < 2 * dims; k++) {
        const int neumann = pure || next() % 3 == 0;
        p->poisson.face[k] = neumann ? PYR_FACE_NEUMANN : PYR_FACE_DIRICHLET;
        p->poisson.flux[k] = neumann && !pure && next() % 2 ? (double)(next() % 1000) / 250.0 - 2 : 0;
    }
    *with_f = next() % 4 != 0;
    if (!*with_f) p->poisson.rhs = PYR_RHS_ZERO;
}

/* A problem of given size with the caller's f. */
static void fixed_problem(pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec, int64_t cycles, double tol, uint64_t seed)
{
    make_poisson(p, dims, n, NULL, prec, cycles, tol, 20, PYR_RHS_FILE, PYR_INIT_RANDOM, seed);
    snprintf(p->poisson.rhs_file, sizeof p->poisson.rhs_file, "(given)");
    p->poisson.iteration = PYR_ITER_MULTIGRID;
}

static const char *describe(const pyr_problem_t *p, char *text, size_t size)
{
    snprintf(text, size, "%dD %lld x %lld x %lld %s %s-cycle %s %d+%d faces %c%c%c%c%c%c", p->dims, (long long)p->n[0], (long long)p->n[1],
             (long long)p->n[2], pyr_precision_name(p->precision), p->poisson.cycle == PYR_CYCLE_F ? "F" : "V",
             p->poisson.smoother == PYR_SMOOTH_JACOBI ? "jacobi" : "chebyshev", p->poisson.pre_smooth, p->poisson.post_smooth,
             p->poisson.face[0] == PYR_FACE_NEUMANN ? 'n' : 'd', p->poisson.face[1] == PYR_FACE_NEUMANN ? 'n' : 'd',
             p->dims > 1 ? (p->poisson.face[2] == PYR_FACE_NEUMANN ? 'n' : 'd') : '-', p->dims > 1 ? (p->poisson.face[3] == PYR_FACE_NEUMANN ? 'n' : 'd') : '-',
             p->dims > 2 ? (p->poisson.face[4] == PYR_FACE_NEUMANN ? 'n' : 'd') : '-', p->dims > 2 ? (p->poisson.face[5] == PYR_FACE_NEUMANN ? 'n' : 'd') : '-');
    return text;
}

/* The smallest budget that plans (found by bisection over the plan). */
static uint64_t least_budget(const pyr_problem_t *p, const pyr_mg_hierarchy_t *hy)
{
    uint64_t lo = 0, hi = pyr_mg_bytes(p, hy);
    pyr_mg_stream_t s;
    while (lo + 1 < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (pyr_mg_stream_plan(p, hy, mid, &s) == PYR_OK) hi = mid;
        else lo = mid;
        pyr_clear_error();
    }
    return hi;
}

/* Plans that kept the finest level's f on the device. */
static int resident;

/* One problem at several budgets on the backend against its in-core solve on the CPU: same status, cycles,
 * residual, cost and bits. */
static int compare(const pyr_problem_t *p, const pyr_field_t *f, const char *what, pyr_backend_kind_t backend)
{
    pyr_mg_hierarchy_t hy;
    if (pyr_mg_hierarchy(p, &hy) != PYR_OK) {
        pyr_clear_error();
        return 0;
    }
    pyr_field_t *ref = NULL;
    pyr_mg_result_t rr;
    const pyr_status_t sr = solve(p, PYR_BACKEND_CPU, UINT64_MAX, f, &ref, &rr);
    pyr_clear_error();
    const uint64_t full = pyr_mg_bytes(p, &hy), least = least_budget(p, &hy);
    const uint64_t budgets[] = {full - 1, full / 2, full / 5, least + (full - least) / 8, least};
    int streamed_most = 0;
    for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
        if (budgets[b] < least || budgets[b] >= full) continue; /* a tiny grid's slabs may need more than its levels */
        pyr_mg_stream_t s;
        CHECK_OK(pyr_mg_stream_plan(p, &hy, budgets[b], &s));
        CHECK(s.streamed >= 1 && s.device_bytes <= budgets[b], "%s: budget %llu of %llu: %d levels streamed, %llu device bytes", what,
              (unsigned long long)budgets[b], (unsigned long long)full, s.streamed, (unsigned long long)s.device_bytes);
        pyr_field_t *u = NULL;
        pyr_mg_result_t r;
        const pyr_status_t st = solve(p, backend, budgets[b], f, &u, &r);
        pyr_clear_error();
        CHECK(st == sr && r.cycles == rr.cycles && (r.residual == rr.residual || (isnan(r.residual) && isnan(rr.residual))) &&
                  r.sweeps == rr.sweeps && r.node_updates == rr.node_updates && r.streamed == s.streamed,
              "%s: budget %llu (%d levels streamed, slabs of %lld planes): %s %lld cycles residual %.17g sweeps %.17g, in core %s %lld "
              "cycles %.17g sweeps %.17g",
              what, (unsigned long long)budgets[b], s.streamed, (long long)s.slab[0], pyr_status_name(st), (long long)r.cycles, r.residual,
              r.sweeps, pyr_status_name(sr), (long long)rr.cycles, rr.residual, rr.sweeps);
        CHECK(same_bits(u, ref), "%s: budget %llu (%d levels streamed, slabs of %lld planes): the field differs from the in-core solve's", what,
              (unsigned long long)budgets[b], s.streamed, (long long)s.slab[0]);
        if (s.streamed > streamed_most) streamed_most = s.streamed;
        resident += s.f_resident;
        pyr_field_destroy(&u);
    }
    pyr_field_destroy(&ref);
    return streamed_most;
}

static void test_random(int cases)
{
    int deepest = 0, thin = 0;
    for (int c = 0; c < cases; c++) {
        pyr_problem_t p;
        int with_f;
        random_problem(&p, c % 5 == 4 ? 1 : c % 2 ? 3 : 2, &with_f);
        pyr_field_t *f = with_f ? random_f(&p) : NULL;
        char what[160];
        describe(&p, what, sizeof what);
        /* every other problem with the transfers beside the kernels done as late as their contract lets them: a pass
         * that reads an upload before joining it, or reuses a buffer before its download is waited for, fails */
        pyr_mg_cpu_late_transfers(c % 4 >= 2);
        const int s = compare(&p, f, what, PYR_BACKEND_CPU);
        pyr_mg_cpu_late_transfers(0);
        printf("%-70s %s%s: up to %d levels streamed\n", what, with_f ? "f" : "no f", c % 4 >= 2 ? ", late transfers" : "", s);
        if (s > deepest) deepest = s;
        thin += s > 0;
        pyr_field_destroy(&f);
    }
    CHECK(deepest >= 2 && thin >= cases / 2 && resident > 0, "the random cases streamed at most %d levels, %d of %d streamed at all, %d "
          "plans kept f on the device", deepest, thin, cases, resident);
    printf("%d of the streamed plans kept the finest level's f on the device\n", resident);
}

/* Converging to a tolerance: the same cycle count and stop. */
static void test_tolerance(void)
{
    const int64_t n[3] = {97, 65, 1};
    for (int prec = 0; prec < 2; prec++) {
        pyr_problem_t p;
        fixed_problem(&p, 2, n, prec ? PYR_DOUBLE : PYR_FLOAT, 50, prec ? 1e-10 : 1e-2, 3);
        pyr_field_t *f = random_f(&p), *a = NULL, *b = NULL;
        pyr_mg_result_t ra, rb;
        pyr_mg_hierarchy_t hy;
        CHECK_OK(pyr_mg_hierarchy(&p, &hy));
        CHECK_OK(solve(&p, PYR_BACKEND_CPU, UINT64_MAX, f, &a, &ra));
        CHECK_OK(solve(&p, PYR_BACKEND_CPU, least_budget(&p, &hy) + (pyr_mg_bytes(&p, &hy) - least_budget(&p, &hy)) / 3, f, &b, &rb));
        CHECK(ra.converged && rb.converged && ra.cycles == rb.cycles && ra.residual == rb.residual && rb.streamed >= 1 && same_bits(a, b),
              "to a tolerance (%s): in core %lld cycles %.17g, streamed (%d levels) %lld cycles %.17g", prec ? "double" : "float",
              (long long)ra.cycles, ra.residual, rb.streamed, (long long)rb.cycles, rb.residual);
        printf("tolerance %s: %lld cycles, residual %.3g, in core and with %d levels streamed\n", prec ? "double" : "float", (long long)rb.cycles,
               rb.residual, rb.streamed);
        pyr_field_destroy(&a);
        pyr_field_destroy(&b);
        pyr_field_destroy(&f);
    }
}

/* Cancelled after a cycle: the field holds that cycle's result, streamed as in core. */
static int64_t cancel_at;
static int on_cancel(void *user, int64_t done, int64_t total)
{
    (void)user, (void)total;
    return done >= cancel_at;
}

static void test_cancel(void)
{
    pyr_mg_cpu_late_transfers(1);
    const int64_t n[3] = {33, 17, 65};
    pyr_problem_t p;
    fixed_problem(&p, 3, n, PYR_DOUBLE, 30, 1e-12, 11);
    pyr_field_t *f = random_f(&p), *u[2] = {NULL, NULL};
    pyr_mg_hierarchy_t hy;
    CHECK_OK(pyr_mg_hierarchy(&p, &hy));
    pyr_hooks_t hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.cancel = on_cancel;
    cancel_at = 3;
    for (int k = 0; k < 2; k++) {
        pyr_mg_result_t r;
        CHECK_OK(poisson_initial_field(&p, &u[k]));
        const pyr_status_t st = pyr_mg_solve_within(&p, PYR_BACKEND_CPU, 0, 0, k ? least_budget(&p, &hy) + (pyr_mg_bytes(&p, &hy) - least_budget(&p, &hy)) / 4 : UINT64_MAX,
                                                     u[k], f, &hooks, &r);
        CHECK(st == PYR_ERR_CANCELLED && r.cycles == 3 && r.streamed == (k ? r.streamed : 0) && (!k || r.streamed >= 1),
              "cancelled after 3 cycles (%s): %s after %lld cycles, %d levels streamed", k ? "streamed" : "in core", pyr_status_name(st),
              (long long)r.cycles, r.streamed);
        pyr_clear_error();
    }
    pyr_mg_cpu_late_transfers(0);
    CHECK(same_bits(u[0], u[1]), "cancelled after 3 cycles: the streamed field differs from the in-core one");
    pyr_field_destroy(&u[0]);
    pyr_field_destroy(&u[1]);
    pyr_field_destroy(&f);
}

/* The plan's bytes per cycle are what a cycle's passes move: the difference between 3 and 2 cycles. */
static void test_moved(void)
{
    const int64_t n[3] = {17, 17, 129};
    for (int cyc = 0; cyc < 3; cyc++) {
        pyr_problem_t p;
        fixed_problem(&p, 3, n, PYR_FLOAT, 2, 0, 5);
        p.poisson.cycle = cyc == 1 ? PYR_CYCLE_F : PYR_CYCLE_V;
        pyr_field_t *f = random_f(&p), *a = NULL, *b = NULL;
        pyr_mg_hierarchy_t hy;
        CHECK_OK(pyr_mg_hierarchy(&p, &hy));
        /* the smallest budget (f streamed, several levels); then most of the levels' (f kept on the device) */
        const uint64_t budget = cyc < 2 ? least_budget(&p, &hy) + 4096 : pyr_mg_bytes(&p, &hy) * 9 / 10;
        pyr_mg_stream_t s;
        CHECK_OK(pyr_mg_stream_plan(&p, &hy, budget, &s));
        pyr_mg_result_t r2, r3;
        CHECK_OK(solve(&p, PYR_BACKEND_CPU, budget, f, &a, &r2));
        p.steps = 3;
        CHECK_OK(solve(&p, PYR_BACKEND_CPU, budget, f, &b, &r3));
        const uint64_t per = (r3.uploaded + r3.downloaded) - (r2.uploaded + r2.downloaded);
        CHECK((cyc < 2 ? s.streamed >= 2 && !s.f_resident : s.streamed >= 1 && s.f_resident) && per == s.moved,
              "%s-cycle, %d levels streamed, f %s: the plan says %llu bytes per cycle, the passes moved %llu", cyc == 1 ? "F" : "V", s.streamed,
              s.f_resident ? "on the device" : "streamed", (unsigned long long)s.moved, (unsigned long long)per);
        printf("%s-cycle 17x17x129 float, budget %llu: %d levels streamed, f %s, slabs of %lld planes, %llu bytes per cycle (the grid: %llu)\n",
               cyc == 1 ? "F" : "V", (unsigned long long)budget, s.streamed, s.f_resident ? "on the device" : "streamed", (long long)s.slab[0],
               (unsigned long long)s.moved, (unsigned long long)(17 * 17 * 129 * 4));
        pyr_field_destroy(&a);
        pyr_field_destroy(&b);
        pyr_field_destroy(&f);
    }
}

static void test_plan(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {257, 257, 1};
    fixed_problem(&p, 2, n, PYR_DOUBLE, 30, 1e-9, 9);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_MULTIGRID;
    o.memory = 1 << 20; /* the levels need 1.5 MiB */
    pyr_plan_t *plan = NULL;
    const pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    CHECK(st == PYR_OK && plan && strstr(plan->method_why, "streamed") && strstr(plan->method_why, "planes") && plan->device_bytes <= o.memory,
          "257^2 within 1 MiB: %s \"%s\", why \"%s\"", pyr_status_name(st), pyr_last_error(), plan ? plan->method_why : "");
    if (plan) printf("plan: %s\n", plan->method_why);
    if (plan) {
        /* pyrgrid plan and run say it as the plan's notice */
        pyr_plan_info_t info;
        CHECK_OK(pyr_plan_get_info(plan, &info));
        CHECK(info.notice && strstr(info.notice, "1 of its 8 levels streamed") && strstr(info.notice, "slabs of") &&
                  strstr(info.notice, "moved to and from the device per cycle"),
              "the plan's notice: \"%s\"", info.notice ? info.notice : "(none)");
    }
    pyr_clear_error();
    /* its run is the level loop's, within the same budget */
    pyr_field_t *f = random_f(&p), *u = NULL, *ref = NULL;
    if (st == PYR_OK) {
        pyr_field_t *fields[2] = {NULL, f};
        CHECK_OK(poisson_initial_field(&p, &u));
        fields[0] = u;
        pyr_run_info_t run;
        CHECK_OK(pyr_execute_fields(plan, fields, 2, NULL, &run));
        pyr_mg_result_t rr;
        CHECK_OK(solve(&p, PYR_BACKEND_CPU, UINT64_MAX, f, &ref, &rr));
        CHECK(run.converged && run.mg_cycles == rr.cycles && same_bits(u, ref) && run.counts.uploaded > (uint64_t)pyr_field_count(u) * 2,
              "the streamed plan's run: %lld cycles (in core %lld), %llu values uploaded", (long long)run.mg_cycles, (long long)rr.cycles,
              (unsigned long long)run.counts.uploaded);
    }
    pyr_plan_destroy(&plan);
    /* below the smallest budget that streams: refused naming it */
    o.memory = 16 << 10;
    const pyr_status_t bad = pyr_plan_create(&p, &o, &plan);
    CHECK(bad == PYR_ERR_BUDGET && strstr(pyr_last_error(), "needs at least") && strstr(pyr_last_error(), "use memory >="),
          "257^2 within 16 KiB: %s \"%s\"", pyr_status_name(bad), pyr_last_error());
    pyr_clear_error();
    pyr_plan_destroy(&plan);
    pyr_field_destroy(&u);
    pyr_field_destroy(&ref);
    pyr_field_destroy(&f);
}

/* The GPU streaming within budgets down to the smallest holds the CPU's in-core bits (random problems as above). */
static int test_gpu(void)
{
    if (!pyr_backend_available(PYR_BACKEND_CUDA)) {
        printf("no usable GPU (or built without CUDA): skipped\n");
        return 77;
    }
    resident = 0;
    for (int c = 0; c < 16; c++) {
        pyr_problem_t p;
        int with_f;
        random_problem(&p, c % 5 == 4 ? 1 : c % 2 ? 3 : 2, &with_f);
        pyr_field_t *f = with_f ? random_f(&p) : NULL;
        char what[160];
        describe(&p, what, sizeof what);
        printf("%-70s %s: up to %d levels streamed on the GPU\n", what, with_f ? "f" : "no f", compare(&p, f, what, PYR_BACKEND_CUDA));
        pyr_field_destroy(&f);
    }
    printf("%d of the streamed plans kept the finest level's f on the device\n", resident);
    /* a larger grid (thick slabs, many thread blocks per plane): streamed within a third of its levels' bytes */
    const int64_t n[3] = {129, 97, 257};
    for (int prec = 0; prec < 2; prec++) {
        pyr_problem_t p;
        fixed_problem(&p, 3, n, prec ? PYR_DOUBLE : PYR_FLOAT, 4, 0, 13);
        pyr_field_t *f = random_f(&p), *uc = NULL, *ug = NULL;
        pyr_mg_hierarchy_t hy;
        CHECK_OK(pyr_mg_hierarchy(&p, &hy));
        pyr_mg_result_t rc, rg;
        CHECK_OK(solve(&p, PYR_BACKEND_CPU, UINT64_MAX, f, &uc, &rc));
        CHECK_OK(solve(&p, PYR_BACKEND_CUDA, pyr_mg_bytes(&p, &hy) / 3, f, &ug, &rg));
        CHECK(rg.streamed >= 1 && rc.cycles == rg.cycles && rc.residual == rg.residual && same_bits(uc, ug),
              "129 x 97 x 257 %s: the GPU streamed (%d levels) %lld cycles %.17g, the CPU in core %lld cycles %.17g, same field %d",
              prec ? "double" : "float", rg.streamed, (long long)rg.cycles, rg.residual, (long long)rc.cycles, rc.residual, same_bits(uc, ug));
        pyr_field_destroy(&uc);
        pyr_field_destroy(&ug);
        pyr_field_destroy(&f);
    }
    return check_report();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "gpu")) return test_gpu();
    test_random(argc > 1 ? atoi(argv[1]) : 14);
    test_tolerance();
    test_cancel();
    test_moved();
    test_plan();
    return check_report();
}
