/* CPU benchmark: on one grid, in one process, the naive method, the trivial
 * method and the pyramid method (temporal cache blocking: a "device" budget
 * sized to the CPU cache; strips/slabs and blocks/cubes; several heights)
 * side by side: Gcell/s and ratios.
 *
 *   bench_cpu [2d|3d|all] [steps] [budget, e.g. 4MiB]
 * defaults: all, 48 steps; budget 2 x L2 for 2D and half the L3 for 3D (a
 * plane of 384^2 doubles alone is 1.1 MiB). The cases: 2D double
 * 8192^2, 3D double 384^3.  Every configuration is planned once and run in
 * BENCH_CPU_ROUNDS rounds (default 5), one run of each in turn per round, so
 * that a slow spell of a shared machine falls on all of them; the table gives
 * the median run (ratios from medians) and the best one, and the median of
 * the runs' minor page faults: the naive method first-touches its two fresh
 * grid-sized buffers in every run (4 KiB pages), a cost of a fresh run that
 * is not cache blocking and, on a VM, large and variable.
 *
 * The CPU backend computes a call of several layers as a wavefront of tiles
 * that stay in L2 (src/backend/cpu/cpu_backend.c), for pyramid pieces and
 * for the naive method's whole grid alike, so "naive" is itself temporally
 * blocked.  The row "naive, one sweep per step" is the naive method with that
 * turned off (PYR_CPU_WAVE=off): the streaming reference the pyramid method's
 * cache blocking was first measured against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pyrgrid.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One configuration of the table: its plan (made once: the CPU backend reads
 * PYR_CPU_WAVE when the plan creates its context) and its run times. */
typedef struct {
    char label[64];
    pyr_plan_t *plan;
    double t[64];
    double faults[64]; /* minor page faults of the run */
    int n;
} config_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *x, int n)
{
    double v[64];
    memcpy(v, x, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double median(const config_t *c) { return median_of(c->t, c->n); }

static double best(const config_t *c)
{
    double b = 1e300;
    for (int i = 0; i < c->n; i++)
        if (c->t[i] < b) b = c->t[i];
    return b;
}

/* Plan a configuration; nothing added (and a note) when the planner refuses it. */
static void add(config_t *cs, int *n, const pyr_problem_t *p, const pyr_options_t *o, const char *what)
{
    config_t *c = &cs[*n];
    memset(c, 0, sizeof *c);
    if (pyr_plan_create(p, o, &c->plan) != PYR_OK) {
        fprintf(stderr, "  (%s: %s)\n", what, pyr_last_error());
        return;
    }
    pyr_plan_info_t info;
    pyr_plan_get_info(c->plan, &info);
    if (o->height > 0 && info.height != o->height) { /* capped at the step count: a duplicate */
        pyr_plan_destroy(&c->plan);
        return;
    }
    if (o->method == PYR_METHOD_PYRAMID && o->height == 0)
        snprintf(c->label, sizeof c->label, "pyramid auto (%s, height %lld)", pyr_decomp_name(info.decomposition),
                 (long long)info.height);
    else if (o->method == PYR_METHOD_PYRAMID)
        snprintf(c->label, sizeof c->label, "pyramid %s height %lld", pyr_decomp_name(info.decomposition), (long long)info.height);
    else if (o->method == PYR_METHOD_TRIVIAL)
        snprintf(c->label, sizeof c->label, "trivial (%s)", pyr_decomp_name(info.decomposition));
    else snprintf(c->label, sizeof c->label, "%s", what);
    (*n)++;
}

static void bench(int dims, int64_t n, int64_t steps, uint64_t budget, int rounds)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.dims = dims;
    for (int d = 0; d < 3; d++) p.n[d] = d < dims ? n : 1;
    p.precision = PYR_DOUBLE;
    p.init = PYR_INIT_RANDOM;
    p.steps = steps;
    double h = 1.0 / (double)(n - 1);
    p.heat.dt = 0.4 * h * h / dims;
    pyr_field_t *f = NULL;
    if (pyr_field_create(&p, &f) != PYR_OK) {
        fprintf(stderr, "%s\n", pyr_last_error());
        return;
    }
    char grid[64];
    snprintf(grid, sizeof grid, dims == 2 ? "%lld^2" : "%lld^3", (long long)n);

    config_t cs[16];
    int nc = 0;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    add(cs, &nc, &p, &o, "naive (whole grid, 2 layers)");
    snprintf(o.kernel, sizeof o.kernel, "sweep");
    add(cs, &nc, &p, &o, "naive, one sweep per step");
    o.kernel[0] = 0;
    o.method = PYR_METHOD_TRIVIAL;
    o.memory = budget;
    o.decomposition = PYR_DECOMP_AUTO;
    add(cs, &nc, &p, &o, "trivial");
    const int first_pyramid = nc;
    o.method = PYR_METHOD_PYRAMID;
    pyr_decomp_t decs[2] = {dims == 2 ? PYR_DECOMP_STRIPS : PYR_DECOMP_SLABS, PYR_DECOMP_BLOCKS};
    for (int di = 0; di < 2; di++) {
        o.decomposition = decs[di];
        static const int64_t heights[] = {2, 4, 8, 12, 16};
        for (int k = 0; k < 5; k++) {
            o.height = heights[k];
            char what[64];
            snprintf(what, sizeof what, "%s height %lld", pyr_decomp_name(decs[di]), (long long)heights[k]);
            add(cs, &nc, &p, &o, what);
        }
    }
    o.decomposition = PYR_DECOMP_AUTO;
    o.height = 0;
    add(cs, &nc, &p, &o, "pyramid auto");

    /* rounds of every configuration in turn, so that a slow spell of a shared
     * machine falls on all of them rather than on one */
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < nc; i++) {
            pyr_field_init(f, &p);
            struct rusage u0, u1;
            getrusage(RUSAGE_SELF, &u0);
            double t0 = now();
            if (pyr_execute(cs[i].plan, f, NULL, NULL) != PYR_OK) {
                fprintf(stderr, "  %s: run failed: %s\n", cs[i].label, pyr_last_error());
                continue;
            }
            cs[i].t[cs[i].n] = now() - t0;
            getrusage(RUSAGE_SELF, &u1);
            cs[i].faults[cs[i].n] = (double)(u1.ru_minflt - u0.ru_minflt);
            cs[i].n++;
        }

    const double cells = (double)pyr_problem_interior(&p) * (double)p.steps * 1e-9;
    printf("\n%dD double %s, %lld steps, %d threads, pyramid budget %.1f MiB, %d rounds (median and best run)\n", dims, grid,
           (long long)steps, pyr_cpu_threads(), (double)budget / 1048576.0, rounds);
    printf("%-34s %9s %9s %10s %12s %9s\n", "method", "Gcell/s", "best", "vs naive", "vs one-sweep", "faults");
    double naive = cs[0].n ? cells / median(&cs[0]) : 0, sweep = cs[1].n ? cells / median(&cs[1]) : 0;
    double top = 0;
    int top_i = -1;
    for (int i = 0; i < nc; i++) {
        if (!cs[i].n) continue;
        double g = cells / median(&cs[i]);
        printf("%-34s %9.3f %9.3f %10.2f %12.2f %8.0fk\n", cs[i].label, g, cells / best(&cs[i]), g / naive, g / sweep,
               median_of(cs[i].faults, cs[i].n) * 1e-3);
        if (i >= first_pyramid && g > top) top = g, top_i = i;
    }
    if (top_i >= 0)
        printf("best pyramid (%s) by median: %.2fx naive, %.2fx naive one sweep per step, %.2fx trivial\n", cs[top_i].label,
               top / naive, top / sweep, cs[2].n ? top * median(&cs[2]) / cells : 0);
    for (int i = 0; i < nc; i++) pyr_plan_destroy(&cs[i].plan);
    pyr_field_destroy(&f);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int64_t steps = argc > 2 ? atoll(argv[2]) : 48;
    uint64_t budget = 0;
    if (argc > 3 && pyr_parse_bytes(argv[3], &budget) != PYR_OK) {
        fprintf(stderr, "%s\n", pyr_last_error());
        return 2;
    }
    long l2 = -1, l3 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
    l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    uint64_t b2 = budget ? budget : (uint64_t)(l2 > 0 ? l2 : 1 << 20) * 2;
    uint64_t b3 = budget ? budget : (l3 > 0 ? (uint64_t)l3 / 2 : (uint64_t)64 << 20);
    if (!budget && b3 > ((uint64_t)96 << 20)) b3 = (uint64_t)96 << 20;
    const char *re = getenv("BENCH_CPU_ROUNDS");
    int rounds = re && atoi(re) > 0 ? atoi(re) : 5;
    if (rounds > 64) rounds = 64;
    if (!strcmp(which, "2d") || !strcmp(which, "all")) bench(2, 8192, steps, b2, rounds);
    if (!strcmp(which, "3d") || !strcmp(which, "all")) bench(3, 384, steps, b3, rounds);
    return 0;
}
