/* Heat-equation (or Poisson) benchmark on one GPU, side by side on the same
 * grid: naive in-core, trivial out-of-core, and pyramid out-of-core with
 * budgets of 1/4 and 1/16 of the fields (the height the planner picks, and a
 * few others).
 *
 *   bench_heat [--cases 2f,2d,3f,3d] [--steps N] [--trivial-steps N]
 *              [--heights 32,64,128] [--heights3 4,8] [--decomp auto|strips|blocks|slabs]
 *              [--backend cuda|cpu] [--scale k] [--methods naive,trivial,pyramid]
 *              [--slots auto,2,3] [--equation heat|poisson] [--iteration jacobi|chebyshev] [--fractions 4,16]
 *              [--kernel V1/V2/...] [--refine]
 *
 * --kernel: the naive run again with each variant (e.g. fused:1/fused:3,16).
 * --equation poisson: -laplace(u) = f with a sine f (u and f on the device:
 * the budgets are fractions of both), a fixed number of Jacobi sweeps
 * (--iteration chebyshev: Chebyshev-accelerated ones, whose streamed pieces
 * carry the layer two sweeps back too).
 *
 * Cases: 2f = 2D float 32768^2, 2d = 2D double 32768^2, 3f = 3D float
 * 1024^3 (--scale k divides every side by k, for a quick run); --grids
 * f:NXxNY[xNZ],d:... runs the listed shapes (float or double) instead.  Rates are
 * interior nodes x steps / time, in Gcell/s: "e2e" times pyr_execute whole
 * (pinning the grid, first upload, last download included), "steady" the
 * passes between the first progress call and the one before the last (the
 * naive run makes eight compute calls for it).  --slots runs each
 * listed height with each number of pieces in flight (auto = the planner's
 * choice); the auto-height rows always use slots = auto.  The automatic
 * choices use the calibrated constants of the wisdom file ($PYRGRID_WISDOM,
 * else the user's cache; bench_wisdom.h), as the pyrgrid program does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pyrgrid.h"
#include "bench_wisdom.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The steady window runs from the first progress call to the one before the
 * last: the last pass of an in-core run ends with the whole grid's download,
 * which is not stepping. */
typedef struct {
    double t_first, t_last, t_prev;
    int64_t s_first, s_last, s_prev;
    int calls;
} progress_t;

static int on_progress(void *user, int64_t done, int64_t total)
{
    (void)total;
    progress_t *p = user;
    double t = now_s();
    if (p->calls++ == 0) {
        p->t_first = t;
        p->s_first = done;
    }
    p->t_prev = p->t_last;
    p->s_prev = p->s_last;
    p->t_last = t;
    p->s_last = done;
    return 0;
}

typedef struct {
    double e2e, steady; /* Gcell/s */
    int64_t height;
    pyr_plan_info_t info;
    int ok;
} result_t;

static pyr_backend_kind_t g_backend = PYR_BACKEND_CUDA;
static pyr_decomp_t g_decomp = PYR_DECOMP_AUTO;
static const char *g_methods = "naive,trivial,pyramid";
static int g_slots[4] = {0};
static int g_nslots = 1;
static pyr_equation_t g_equation = PYR_EQ_HEAT;
static pyr_iteration_t g_iteration = PYR_ITER_JACOBI; /* --iteration: Poisson's sweeps */
static char g_kernels[256] = ""; /* --kernel: the naive run once per listed variant */
static int g_fractions[4] = {4, 16};
static int g_nfractions = 2;
static pyr_plan_mode_t g_plan_mode = PYR_PLAN_ESTIMATE; /* of the next run_kernel call */
static int g_refine = 0;                               /* --refine: a plan = refine row per budget */

static result_t run_kernel(const pyr_problem_t *prob, pyr_field_t *f, pyr_method_t method, uint64_t memory, int64_t height, int slots,
                           const char *kernel)
{
    result_t r;
    memset(&r, 0, sizeof r);
    pyr_options_t o;
    pyr_options_default(&o);
    snprintf(o.kernel, sizeof o.kernel, "%s", kernel ? kernel : "");
    o.backend = g_backend;
    o.method = method;
    o.memory = memory;
    o.height = height;
    o.slots = slots;
    o.plan_mode = g_plan_mode;
    if (method != PYR_METHOD_NAIVE) o.decomposition = g_decomp;
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(prob, &o, &plan) != PYR_OK) {
        printf("    (%s, height %lld: %s)\n", pyr_method_name(method), (long long)height, pyr_last_error());
        return r;
    }
    pyr_plan_get_info(plan, &r.info);
    r.height = r.info.height;
    progress_t pg;
    memset(&pg, 0, sizeof pg);
    pyr_hooks_t hooks = {.progress = on_progress, .user = &pg};
    double t0 = now_s();
    pyr_status_t st = pyr_execute(plan, f, &hooks, NULL);
    double t1 = now_s();
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) {
        printf("    (%s failed: %s)\n", pyr_method_name(method), pyr_last_error());
        return r;
    }
    double cells = (double)pyr_problem_interior(prob);
    r.e2e = cells * (double)prob->steps / (t1 - t0) * 1e-9;
    if (pg.calls > 2 && pg.t_prev > pg.t_first) r.steady = cells * (double)(pg.s_prev - pg.s_first) / (pg.t_prev - pg.t_first) * 1e-9;
    else r.steady = r.e2e;
    r.ok = 1;
    return r;
}

static result_t run(const pyr_problem_t *prob, pyr_field_t *f, pyr_method_t method, uint64_t memory, int64_t height, int slots)
{
    return run_kernel(prob, f, method, memory, height, slots, NULL);
}

static void print_row(const char *what, const result_t *r, double naive, double trivial)
{
    if (!r->ok) {
        printf("  %-30s  failed\n", what);
        return;
    }
    char pieces[64];
    snprintf(pieces, sizeof pieces, "%lldx%lldx%lld", (long long)r->info.pieces[0], (long long)r->info.pieces[1],
             (long long)r->info.pieces[2]);
    printf("  %-30s %7s %6lld %5d %12s %7.3f %9.1f %9.1f %8.2f %8.2f\n", what,
           r->info.method == PYR_METHOD_NAIVE ? "-" : pyr_decomp_name(r->info.decomposition), (long long)r->height, r->info.slots, pieces,
           r->info.redundancy, r->e2e, r->steady, naive > 0 ? r->steady / naive : 0, trivial > 0 ? r->steady / trivial : 0);
    fflush(stdout);
}

static void bench_grid(const char *name, int dims, const int64_t n[3], pyr_precision_t prec, int64_t steps, int64_t trivial_steps,
                       const int64_t *heights, int nheights)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.equation = g_equation;
    p.poisson.rhs = PYR_RHS_SINE;
    p.poisson.iteration = g_iteration;
    p.dims = dims;
    int64_t side = n[0];
    for (int d = 0; d < 3; d++) {
        p.n[d] = d < dims ? n[d] : 1;
        p.length[d] = 1.0;
        if (d < dims && n[d] > side) side = n[d]; /* the finest spacing sets dt */
    }
    p.precision = prec;
    p.init = PYR_INIT_RANDOM;
    p.seed = 7;
    p.heat.alpha = 1.0;
    double h = 1.0 / (double)(side - 1);
    p.heat.dt = 0.4 * h * h / (double)dims; /* sum of r = 0.4 */
    p.steps = steps;
    pyr_field_t *f = NULL;
    if (pyr_field_create(&p, &f) != PYR_OK || pyr_field_init(f, &p) != PYR_OK) {
        printf("%s: %s\n", name, pyr_last_error());
        pyr_field_destroy(&f);
        return;
    }
    /* the fields on the device: u (and Poisson's f) */
    uint64_t grid_bytes = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) * (g_equation == PYR_EQ_POISSON ? 2 : 1);
    char shape[96];
    if (dims == 2) snprintf(shape, sizeof shape, "%lldx%lld", (long long)n[0], (long long)n[1]);
    else snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)n[0], (long long)n[1], (long long)(dims == 3 ? n[2] : 1));
    printf("\n%s %s: %s (x by y by z) %s (%.2f GiB of fields), %lld %s (trivial %lld), backend %s\n", name, pyr_equation_name(g_equation),
           dims == 1 ? "1D" : shape, pyr_precision_name(prec), (double)grid_bytes / (1 << 30), (long long)steps,
           g_equation != PYR_EQ_POISSON ? "steps" : g_iteration == PYR_ITER_CHEBYSHEV ? "Chebyshev sweeps" : "sweeps", (long long)trivial_steps,
           pyr_backend_name(g_backend));
    printf("  %-30s %7s %6s %5s %12s %7s %9s %9s %8s %8s\n", "run", "decomp", "height", "slots", "pieces", "redund", "e2e G/s", "steady",
           "/naive", "/trivial");
    result_t naive, triv;
    memset(&naive, 0, sizeof naive);
    memset(&triv, 0, sizeof triv);
    if (strstr(g_methods, "naive")) {
        /* the planner's steps per call (about 100 in whole launches of the kernel, what a user gets): the steady
         * window has several calls from 400 steps on */
        naive = run(&p, f, PYR_METHOD_NAIVE, 0, 0, 0);
        print_row("naive in-core", &naive, 0, 0);
        char list[256];
        snprintf(list, sizeof list, "%s", g_kernels);
        for (char *save = NULL, *k = strtok_r(list, "/", &save); k; k = strtok_r(NULL, "/", &save)) {
            result_t kr = run_kernel(&p, f, PYR_METHOD_NAIVE, 0, 0, 0, k);
            char what[64];
            snprintf(what, sizeof what, "naive, kernel %s", k);
            print_row(what, &kr, naive.steady, 0);
        }
    }
    if (strstr(g_methods, "trivial")) {
        pyr_problem_t pt = p;
        pt.steps = trivial_steps;
        triv = run(&pt, f, PYR_METHOD_TRIVIAL, grid_bytes / 4, 0, 0);
        print_row("trivial, budget 1/4", &triv, naive.steady, 0);
    }
    for (int fi = 0; fi < g_nfractions && strstr(g_methods, "pyramid"); fi++) {
        const int frac = g_fractions[fi];
        uint64_t budget = grid_bytes / (uint64_t)frac;
        result_t best;
        memset(&best, 0, sizeof best);
        char what[64];
        result_t a = run(&p, f, PYR_METHOD_PYRAMID, budget, 0, 0);
        snprintf(what, sizeof what, "pyramid 1/%d, auto height", frac);
        print_row(what, &a, naive.steady, triv.steady);
        best = a;
        if (g_refine) {
            /* the automatic choice refined by timing its best candidates on the run's first steps (no step wasted):
             * compare its end-to-end rate with the best fixed height's */
            g_plan_mode = PYR_PLAN_REFINE;
            result_t rr = run(&p, f, PYR_METHOD_PYRAMID, budget, 0, 0);
            g_plan_mode = PYR_PLAN_ESTIMATE;
            snprintf(what, sizeof what, "pyramid 1/%d, plan = refine", frac);
            print_row(what, &rr, naive.steady, triv.steady);
        }
        for (int i = 0; i < nheights; i++)
            for (int k = 0; k < g_nslots; k++) {
                result_t b = run(&p, f, PYR_METHOD_PYRAMID, budget, heights[i], g_slots[k]);
                if (g_nslots > 1)
                    snprintf(what, sizeof what, "pyramid 1/%d, h %lld, slots %s", frac, (long long)heights[i], g_slots[k] ? "set" : "auto");
                else
                    snprintf(what, sizeof what, "pyramid 1/%d, height %lld", frac, (long long)heights[i]);
                print_row(what, &b, naive.steady, triv.steady);
                if (b.ok && b.steady > best.steady) best = b;
            }
        snprintf(what, sizeof what, "=> best 1/%d (auto h %lld)", frac, (long long)a.height);
        print_row(what, &best, naive.steady, triv.steady);
    }
    pyr_field_destroy(&f);
}

static void bench_case(const char *name, int dims, int64_t side, pyr_precision_t prec, int64_t steps, int64_t trivial_steps,
                       const int64_t *heights, int nheights)
{
    const int64_t n[3] = {side, side, side};
    bench_grid(name, dims, n, prec, steps, trivial_steps, heights, nheights);
}

int main(int argc, char **argv)
{
    const char *cases = "2f,2d,3f";
    const char *grids = NULL; /* --grids f:4096x16384,d:640x640x640,...: these shapes instead of the cases */
    int64_t steps = 512, trivial_steps = 4, scale = 1;
    int64_t heights[16] = {32, 64, 128, 256};
    int nheights = 4;
    int64_t heights3[16] = {4, 8, 12, 16};
    int nheights3 = 4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cases") && v) cases = argv[++i];
        else if (!strcmp(a, "--steps") && v) steps = atoll(argv[++i]);
        else if (!strcmp(a, "--trivial-steps") && v) trivial_steps = atoll(argv[++i]);
        else if (!strcmp(a, "--scale") && v) scale = atoll(argv[++i]);
        else if (!strcmp(a, "--methods") && v) g_methods = argv[++i];
        else if (!strcmp(a, "--kernel") && v) snprintf(g_kernels, sizeof g_kernels, "%s", argv[++i]);
        else if (!strcmp(a, "--refine")) g_refine = 1;
        else if (!strcmp(a, "--grids") && v) grids = argv[++i];
        else if (!strcmp(a, "--equation") && v) {
            if (!pyr_equation_from_name(argv[++i], &g_equation)) {
                fprintf(stderr, "--equation %s: use heat or poisson\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--iteration") && v) {
            const char *it = argv[++i];
            if (strcmp(it, "jacobi") && strcmp(it, "chebyshev")) {
                fprintf(stderr, "--iteration %s: use jacobi or chebyshev\n", it);
                return 2;
            }
            g_iteration = strcmp(it, "chebyshev") ? PYR_ITER_JACOBI : PYR_ITER_CHEBYSHEV;
        } else if (!strcmp(a, "--fractions") && v) {
            g_nfractions = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *t = strtok(buf, ","); t && g_nfractions < 4; t = strtok(NULL, ",")) g_fractions[g_nfractions++] = atoi(t);
        }
        else if (!strcmp(a, "--slots") && v) {
            g_nslots = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *t = strtok(buf, ","); t && g_nslots < 4; t = strtok(NULL, ",")) g_slots[g_nslots++] = strcmp(t, "auto") ? atoi(t) : 0;
        }
        else if (!strcmp(a, "--backend") && v) {
            g_backend = !strcmp(argv[++i], "cpu") ? PYR_BACKEND_CPU : PYR_BACKEND_CUDA;
        } else if (!strcmp(a, "--decomp") && v) {
            const char *d = argv[++i];
            if (!pyr_decomp_from_name(d, 1, &g_decomp)) {
                fprintf(stderr, "--decomp %s: use auto, strips, blocks, slabs or skewed\n", d);
                return 2;
            }
        } else if (!strcmp(a, "--heights3") && v) {
            nheights3 = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *t = strtok(buf, ","); t && nheights3 < 16; t = strtok(NULL, ",")) heights3[nheights3++] = atoll(t);
        } else if (!strcmp(a, "--heights") && v) {
            nheights = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *t = strtok(buf, ","); t && nheights < 16; t = strtok(NULL, ",")) heights[nheights++] = atoll(t);
        } else {
            fprintf(stderr, "usage: %s [--cases 2f,2d,3f] [--steps N] [--trivial-steps N] [--heights a,b,c] [--heights3 a,b] "
                            "[--decomp auto|strips|blocks] [--backend cuda|cpu] [--scale k] [--methods naive,trivial,pyramid] [--slots auto,2,3]\n", argv[0]);
            return 2;
        }
    }
    if (scale < 1) scale = 1;
    if (g_backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU\n");
        return 77;
    }
    if (g_backend == PYR_BACKEND_CUDA) {
        char text[256];
        if (pyr_gpu_describe(0, text, sizeof text) == PYR_OK) printf("GPU 0: %s\n", text);
    }
    bench_wisdom_import();
    if (grids) {
        char list[1024];
        snprintf(list, sizeof list, "%s", grids);
        for (char *save = NULL, *g = strtok_r(list, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
            int64_t n[3] = {1, 1, 1};
            char prec = 0;
            int got = sscanf(g, "%c:%lldx%lldx%lld", &prec, (long long *)&n[0], (long long *)&n[1], (long long *)&n[2]);
            if (got < 3 || (prec != 'f' && prec != 'd')) {
                fprintf(stderr, "--grids: '%s' is not f:NXxNY[xNZ] or d:NXxNY[xNZ]\n", g);
                return 2;
            }
            const int dims = got - 1;
            char name[64];
            snprintf(name, sizeof name, "%dD %s", dims, prec == 'f' ? "float" : "double");
            bench_grid(name, dims, n, prec == 'f' ? PYR_FLOAT : PYR_DOUBLE, steps, trivial_steps, dims == 3 ? heights3 : heights,
                       dims == 3 ? nheights3 : nheights);
        }
        return 0;
    }
    if (strstr(cases, "2f")) bench_case("2D float", 2, 32768 / scale, PYR_FLOAT, steps, trivial_steps, heights, nheights);
    if (strstr(cases, "2d")) bench_case("2D double", 2, 32768 / scale, PYR_DOUBLE, steps, trivial_steps, heights, nheights);
    if (strstr(cases, "3f")) bench_case("3D float", 3, 1024 / scale, PYR_FLOAT, steps, trivial_steps, heights3, nheights3);
    if (strstr(cases, "3d")) bench_case("3D double", 3, 1024 / scale, PYR_DOUBLE, steps, trivial_steps, heights3, nheights3);
    return 0;
}
