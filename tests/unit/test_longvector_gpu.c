/* The long-vector method on the GPU (issue 23): method = longvector (cuBLAS
 * whole-vector steps on the naive method's resident grid) against the CPU
 * naive method, bit for bit, on random grids of sizes that are multiples of
 * nothing (primes, 2^k + 1, 3 x 3, rectangles), float and double, any number
 * of steps and steps per compute call, snapshots, and wild data (mixed
 * signs and exponents, subnormals, signed zeros) in a field of its own.  On
 * a difference it prints how many values differ and by how many units in
 * the last place at most: the measured difference, should cuBLAS round some
 * operation otherwise.  Also: the plan (method, kernel, device memory of
 * two layers and two work vectors), the counters (the naive method's), and a
 * quick calibration of the method's constants; cuBLAS loaded only when the
 * method first runs.  Skips (77) without a GPU.
 *
 *   test_longvector_gpu [cases [--no-calibration]]   default 40 random cases beside the fixed ones */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "heat_util.h"
#include "plan/longvector.h"
#include "plan/plan.h"
#include "tune/longvector.h"

/* Largest distance in units in the last place between differing values, and how many differ. */
static void compare(const pyr_field_t *a, const pyr_field_t *b, int64_t *ndiff, double *max_ulp, double *max_abs)
{
    *ndiff = 0;
    *max_ulp = 0;
    *max_abs = 0;
    const int64_t n = pyr_field_count(a);
    for (int64_t i = 0; i < n; i++) {
        double x = field_get(a, i), y = field_get(b, i);
        const size_t e = pyr_precision_size(a->precision);
        if (!memcmp((const char *)a->data + i * (int64_t)e, (const char *)b->data + i * (int64_t)e, e)) continue;
        (*ndiff)++;
        double ulp = a->precision == PYR_FLOAT ? (double)(nextafterf((float)fabs(x), INFINITY) - (float)fabs(x))
                                               : nextafter(fabs(x), INFINITY) - fabs(x);
        double d = fabs(x - y);
        if (d / ulp > *max_ulp || isnan(d)) *max_ulp = isnan(d) ? INFINITY : d / ulp;
        if (d > *max_abs || isnan(d)) *max_abs = isnan(d) ? INFINITY : d;
    }
}


typedef struct {
    int64_t every, seen;
} snap_t;

static pyr_status_t on_snapshot(void *user, const pyr_field_t *f, int64_t step)
{
    (void)f;
    snap_t *s = user;
    s->seen += step % s->every == 0;
    return PYR_OK;
}

static int cases_run = 0, cases_equal = 0;
static int64_t worst_ndiff = 0;
static double worst_ulp = 0, worst_abs = 0;

/* Whether a library whose file name contains `name` is mapped into this
 * process (-1: /proc/self/maps cannot be read). */
static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

/* One case: p from its initial field (or wild data), longvector on the GPU against naive on the CPU. */
static void run_case(const pyr_problem_t *p, int64_t height, int wild, int64_t snapshot_every)
{
    pyr_field_t *ref = NULL, *got = NULL;
    CHECK_OK(pyr_field_create(p, &ref));
    CHECK_OK(pyr_field_create(p, &got));
    if (!ref || !got) return;
    CHECK_OK(pyr_field_init(ref, p));
    if (wild) fill_wild(ref, (uint64_t)p->n[0] * 7919 + (uint64_t)p->n[1]);
    memcpy(got->data, ref->data, (size_t)pyr_field_count(ref) * pyr_precision_size(p->precision));

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    pyr_plan_t *plan = NULL;
    pyr_counters_t cn, cl;
    CHECK_OK(pyr_plan_create(p, &o, &plan));
    if (plan) CHECK_OK(pyr_execute(plan, ref, NULL, &cn));
    pyr_plan_destroy(&plan);

    pyr_options_default(&o);
    o.method = PYR_METHOD_LONGVECTOR;
    o.height = height;
    o.snapshot_every = snapshot_every;
    CHECK_OK(pyr_plan_create(p, &o, &plan));
    if (!plan) {
        pyr_field_destroy(&ref);
        pyr_field_destroy(&got);
        return;
    }
    pyr_plan_info_t info;
    CHECK_OK(pyr_plan_get_info(plan, &info));
    CHECK(info.method == PYR_METHOD_LONGVECTOR && !strcmp(info.kernel, "longvector") && info.backend == PYR_BACKEND_CUDA,
          "plan: method %s kernel %s backend %s", pyr_method_name(info.method), info.kernel, pyr_backend_name(info.backend));
    const uint64_t layer = (uint64_t)plan->layout.pitch * (uint64_t)p->n[1] * pyr_precision_size(p->precision);
    CHECK(info.device_bytes == 4 * layer, "device memory %llu, expected 2 layers + 2 work vectors = %llu",
          (unsigned long long)info.device_bytes, (unsigned long long)(4 * layer));
    snap_t snaps = {snapshot_every > 0 ? snapshot_every : 1, 0};
    pyr_hooks_t hooks = {.snapshot = on_snapshot, .user = &snaps};
    CHECK_OK(pyr_execute(plan, got, snapshot_every > 0 ? &hooks : NULL, &cl));
    pyr_plan_destroy(&plan);
    if (snapshot_every > 0)
        CHECK(snaps.seen == p->steps / snapshot_every, "snapshots %lld, expected %lld", (long long)snaps.seen,
              (long long)(p->steps / snapshot_every));
    if (snapshot_every == 0)
        CHECK(cl.uploaded == cn.uploaded && cl.downloaded == cn.downloaded && cl.computed == cn.computed,
              "counters: uploaded %llu/%llu downloaded %llu/%llu computed %llu/%llu", (unsigned long long)cl.uploaded,
              (unsigned long long)cn.uploaded, (unsigned long long)cl.downloaded, (unsigned long long)cn.downloaded,
              (unsigned long long)cl.computed, (unsigned long long)cn.computed);
    int64_t nd;
    double ulp, ab;
    compare(ref, got, &nd, &ulp, &ab);
    cases_run++;
    cases_equal += nd == 0;
    if (nd > worst_ndiff) worst_ndiff = nd;
    if (ulp > worst_ulp) worst_ulp = ulp;
    if (ab > worst_abs) worst_abs = ab;
    CHECK(nd == 0, "%lldx%lld %s %s, %lld steps (%lld per call%s): %lld of %lld values differ from the CPU naive method, at most "
                   "%.3g ulp (%.3g)",
          (long long)p->n[0], (long long)p->n[1], pyr_precision_name(p->precision), wild ? "wild data" : "random data",
          (long long)p->steps, (long long)height, snapshot_every ? ", snapshots" : "", (long long)nd, (long long)pyr_field_count(ref),
          ulp, ab);
    pyr_field_destroy(&ref);
    pyr_field_destroy(&got);
}

int main(int argc, char **argv)
{
    if (!pyr_backend_available(PYR_BACKEND_CUDA)) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    const int random_cases = argc > 1 ? atoi(argv[1]) : 40;
    /* --no-calibration: the cases only (compute-sanitizer runs them; the calibration's timing loops would take minutes there) */
    const int calibration = !(argc > 2 && !strcmp(argv[2], "--no-calibration"));
    /* fixed cases: the smallest grid, rows shorter than a pitch alignment, primes, 2^k + 1, rectangles both ways */
    const int64_t fixed[][4] = {
        /* nx, ny, steps, steps per call */
        {3, 3, 5, 2},     {4, 3, 3, 100},   {3, 7, 4, 1},      {5, 5, 1, 100},     {17, 33, 10, 3},   {33, 17, 11, 100},
        {97, 131, 25, 7}, {257, 129, 9, 4}, {1031, 23, 13, 5}, {23, 1031, 13, 100}, {1025, 1025, 20, 6}, {2053, 1999, 8, 100},
    };
    /* reliability review L9: cuBLAS is loaded when the method first runs, not at start */
    CHECK(mapped("/libcublas.so") != 1, "cuBLAS was loaded before the long-vector method ran");
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        for (int pi = 0; pi < 2; pi++) {
            pyr_problem_t p;
            int64_t n[3] = {fixed[i][0], fixed[i][1], 1};
            make_problem(&p, 2, n, pi ? PYR_DOUBLE : PYR_FLOAT, fixed[i][2], PYR_INIT_RANDOM, 11 + i);
            p.length[1] = 1.3; /* rx != ry */
            run_case(&p, fixed[i][3], 0, 0);
            run_case(&p, fixed[i][3], 1, 0);
            if (i == 0 && pi == 0) CHECK(mapped("/libcublas.so") != 0, "the long-vector method ran without cuBLAS loaded");
        }
    /* snapshots end compute calls early (the executor's chunks) */
    {
        pyr_problem_t p;
        int64_t n[3] = {301, 199, 1};
        make_problem(&p, 2, n, PYR_FLOAT, 30, PYR_INIT_GAUSS, 3);
        run_case(&p, 7, 0, 4);
    }
    /* random sizes, steps and calls */
    rng_t r = {2323};
    for (int c = 0; c < random_cases; c++) {
        pyr_problem_t p;
        int64_t n[3] = {rng_range(&r, 3, 700), rng_range(&r, 3, 700), 1};
        make_problem(&p, 2, n, rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT, rng_range(&r, 1, 60), PYR_INIT_RANDOM, (uint64_t)c + 1);
        p.length[0] = 0.5 + (double)rng_range(&r, 0, 100) / 50.0;
        /* the time step again for the new spacing (sum of r_d = 0.45, as make_problem sets it) */
        double s = 0;
        for (int d = 0; d < 2; d++) s += 1.0 / (pyr_problem_h(&p, d) * pyr_problem_h(&p, d));
        p.heat.dt = 0.45 / (p.heat.alpha * p.heat.alpha * s);
        run_case(&p, rng_range(&r, 1, 20), (int)rng_range(&r, 0, 1), 0);
    }
    printf("longvector: %d of %d cases bit-identical to the CPU naive method", cases_equal, cases_run);
    if (cases_equal < cases_run) printf("; the worst: %lld values differ, at most %.3g ulp (%.3g)", (long long)worst_ndiff, worst_ulp, worst_abs);
    printf("\n");

    if (!calibration) return check_report();

    /* the calibration of the method's constants, briefly */
    pyr_calibrate_opts_t co;
    memset(&co, 0, sizeof co);
    co.backend = PYR_BACKEND_CUDA;
    co.precision = PYR_FLOAT;
    co.dims = 2;
    co.effort = 0.2;
    pyr_lv_constants_t k;
    int64_t hw = 0;
    double rms = -1;
    CHECK_OK(pyr_calibrate_longvector(&co, &k, &hw, &rms));
    CHECK(pyr_lv_valid(&k) && hw > 0 && k.t_kernel > 0, "calibrated: t_kernel %g t_add %g t_saxpy %g t_scal %g threads %.0f (hardware %lld)",
          k.t_kernel, k.t_add, k.t_saxpy, k.t_scal, k.threads, (long long)hw);
    printf("calibrated (float, effort 0.2): t_kernel %.3g us, per wave of %.0f elements t_add %.3g us, t_saxpy %.3g us, t_scal %.3g us; "
           "resident threads %lld; fit RMS %.3f\n",
           1e6 * k.t_kernel, k.threads, 1e6 * k.t_add, 1e6 * k.t_saxpy, 1e6 * k.t_scal, (long long)hw, rms);
    return check_report();
}
