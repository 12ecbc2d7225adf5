/* CPU benchmark: on one grid, in one process, the naive method, the trivial
 * method and the pyramid method (temporal cache blocking: a "device" budget
 * sized to the CPU cache; strips/slabs and blocks/cubes; several heights)
 * side by side: Gcell/s and ratios.
 *
 *   bench_cpu [2d|3d|all] [steps] [budget, e.g. 4MiB]
 * defaults: all, 48 steps; budget 2 x L2 for 2D and half the L3 for 3D (a
 * plane of 384^2 doubles alone is 1.1 MiB). The cases: 2D double
 * 8192^2, 3D double 384^3. Each figure is the best of 2 runs.
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
#include <time.h>
#include <unistd.h>

#include "pyrgrid.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best of `reps` runs, in Gcell/s of useful updates; -1 when it cannot plan. */
static double measure(const pyr_problem_t *p, pyr_options_t o, pyr_field_t *f, int reps, int64_t *height, const char **decomp)
{
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(p, &o, &plan) != PYR_OK) {
        fprintf(stderr, "  (%s)\n", pyr_last_error());
        return -1;
    }
    pyr_plan_info_t info;
    pyr_plan_get_info(plan, &info);
    if (height) *height = info.height;
    if (decomp) *decomp = pyr_decomp_name(info.decomposition);
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        pyr_field_init(f, p);
        double t0 = now();
        pyr_status_t st = pyr_execute(plan, f, NULL, NULL);
        double t = now() - t0;
        if (st != PYR_OK) {
            fprintf(stderr, "  run failed: %s\n", pyr_last_error());
            pyr_plan_destroy(&plan);
            return -1;
        }
        if (t < best) best = t;
    }
    pyr_plan_destroy(&plan);
    return (double)pyr_problem_interior(p) * (double)p->steps / best * 1e-9;
}

static void bench(int dims, int64_t n, int64_t steps, uint64_t budget)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.dims = dims;
    for (int d = 0; d < 3; d++) p.n[d] = d < dims ? n : 1;
    p.precision = PYR_DOUBLE;
    p.init = PYR_INIT_RANDOM;
    p.steps = steps;
    double h = 1.0 / (double)(n - 1);
    p.dt = 0.4 * h * h / dims;
    pyr_field_t *f = NULL;
    if (pyr_field_create(&p, &f) != PYR_OK) {
        fprintf(stderr, "%s\n", pyr_last_error());
        return;
    }
    char grid[64];
    snprintf(grid, sizeof grid, dims == 2 ? "%lld^2" : "%lld^3", (long long)n);
    printf("\n%dD double %s, %lld steps, %d threads, pyramid budget %.1f MiB\n", dims, grid, (long long)steps, pyr_cpu_threads(),
           (double)budget / 1048576.0);
    printf("%-34s %10s %10s\n", "method", "Gcell/s", "vs naive");
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    double naive = measure(&p, o, f, 2, NULL, NULL);
    printf("%-34s %10.3f %10.2f\n", "naive (whole grid, 2 layers)", naive, 1.0);
    const char *env = getenv("PYR_CPU_WAVE");
    char *saved = env ? strdup(env) : NULL;
    setenv("PYR_CPU_WAVE", "off", 1); /* read when the plan creates its backend context */
    double sweep = measure(&p, o, f, 2, NULL, NULL);
    if (saved) setenv("PYR_CPU_WAVE", saved, 1);
    else unsetenv("PYR_CPU_WAVE");
    free(saved);
    printf("%-34s %10.3f %10.2f\n", "naive, one sweep per step", sweep, sweep / naive);
    o.method = PYR_METHOD_TRIVIAL;
    o.memory = budget;
    o.decomposition = PYR_DECOMP_AUTO;
    const char *dec = "";
    double triv = measure(&p, o, f, 1, NULL, &dec);
    char label[64];
    snprintf(label, sizeof label, "trivial (%s)", dec);
    printf("%-34s %10.3f %10.2f\n", label, triv, triv / naive);
    o.method = PYR_METHOD_PYRAMID;
    double best = 0;
    int64_t best_h = 0;
    pyr_decomp_t decs[2] = {dims == 2 ? PYR_DECOMP_STRIPS : PYR_DECOMP_SLABS, PYR_DECOMP_BLOCKS};
    for (int di = 0; di < 2; di++) {
        o.decomposition = decs[di];
        static const int64_t heights[] = {2, 4, 8, 16};
        for (int k = 0; k < 4; k++) {
            o.height = heights[k];
            double g = measure(&p, o, f, 2, NULL, &dec);
            if (g < 0) continue;
            snprintf(label, sizeof label, "pyramid %s height %lld", dec, (long long)heights[k]);
            printf("%-34s %10.3f %10.2f\n", label, g, g / naive);
            if (g > best) best = g, best_h = heights[k];
        }
    }
    o.decomposition = PYR_DECOMP_AUTO;
    o.height = 0;
    int64_t ah = 0;
    double a = measure(&p, o, f, 2, &ah, &dec);
    snprintf(label, sizeof label, "pyramid auto (%s, height %lld)", dec, (long long)ah);
    printf("%-34s %10.3f %10.2f\n", label, a, a / naive);
    printf("best pyramid / naive = %.2f (height %lld); / naive one sweep per step = %.2f; pyramid / trivial = %.2f\n",
           best / naive, (long long)best_h, best / sweep, best / triv);
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
    if (!strcmp(which, "2d") || !strcmp(which, "all")) bench(2, 8192, steps, b2);
    if (!strcmp(which, "3d") || !strcmp(which, "all")) bench(3, 384, steps, b3);
    return 0;
}
