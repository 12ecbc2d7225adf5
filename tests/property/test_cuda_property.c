/* Bitwise property test of the CUDA backend: random problems (1D/2D/3D,
 * float/double), every method (naive, trivial, pyramid), every
 * decomposition, random heights (up to the step count), random budgets
 * (the smallest that plans, barely more, anything above) and piece extents,
 * step counts not divisible by the height; the CUDA result must equal the
 * CPU naive result bit for bit, and the counters the plan's prediction.
 * Grids are sized so the fused kernels see several tiles and segments.
 *
 *   test_cuda_property [cases] [seed] [first]   (defaults: 300 1 0)
 *
 * PYR_TEST_VERBOSE=1 names each case before it runs and says how long it
 * took; `first` starts at that case (the cases do not depend on each other). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cuda/cuda_api.h"
#include "backend/device.h"
#include "heat_util.h"

/* Most tasks (pieces x passes) a case's run may take on the GPU (see the smallest budget below). */
#define MAX_TASKS 20000

static int g_verbose; /* PYR_TEST_VERBOSE: name and time each case (stderr) */
static pyr_device_t *g_gpu; /* held for its hooks (cuda_api.h): the forced axis, the launch counters */

static int run_case(int c, uint64_t seed, int *skipped)
{
    rng_t r = {seed * 7919ull + (uint64_t)c * 104729ull + 17};
    int dims = (int)rng_range(&r, 1, 3);
    int64_t n[3] = {1, 1, 1};
    int wide = rng_range(&r, 0, 4) == 0; /* several tiles along x */
    if (dims == 1) n[0] = rng_range(&r, 0, 2) ? rng_range(&r, 3, 200) : rng_range(&r, 200, 5000);
    else if (dims == 2) {
        n[0] = wide ? rng_range(&r, 1000, 2600) : rng_range(&r, 3, 300);
        n[1] = wide ? rng_range(&r, 3, 90) : rng_range(&r, 3, 300);
    } else {
        n[0] = wide ? rng_range(&r, 120, 300) : rng_range(&r, 3, 40);
        n[1] = rng_range(&r, 3, wide ? 45 : 40);
        n[2] = rng_range(&r, 3, 40);
    }
    pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    int64_t steps = rng_range(&r, 0, 5) == 0 ? rng_range(&r, 90, 230) : rng_range(&r, 1, 60);
    pyr_problem_t p;
    make_problem(&p, dims, n, prec, steps, PYR_INIT_RANDOM, seed * 1000 + (uint64_t)c);

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    int pick = (int)rng_range(&r, 0, 19);
    o.method = pick < 4 ? PYR_METHOD_NAIVE : pick < 7 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
    else if (dims == 3) o.decomposition = rng_range(&r, 0, 2) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_BLOCKS : PYR_DECOMP_STRIPS;
    /* skewed pieces (plan/skewed.h): fused calls through sliding views, halo stores, faces per call */
    const int skewed = dims > 1 && o.method != PYR_METHOD_NAIVE && rng_range(&r, 0, 3) == 0;
    if (skewed) o.decomposition = PYR_DECOMP_SKEWED;
    int64_t min_xy = n[0] < n[1] ? n[0] : n[1], min_xyz = min_xy < n[2] ? min_xy : n[2];
    int64_t split_n = dims == 1                                 ? n[0]
                      : o.decomposition == PYR_DECOMP_SLABS    ? n[2]
                      : o.decomposition == PYR_DECOMP_STRIPS   ? n[1]
                      : skewed                                 ? n[dims - 1]
                      : dims == 3                              ? min_xyz
                                                               : min_xy;
    char how[200] = "";
    int64_t h = 0;
    if (o.method == PYR_METHOD_PYRAMID) {
        int64_t hmax = steps < (split_n - 2) ? steps : (split_n - 2 > 1 ? split_n - 2 : 1);
        int hp = (int)rng_range(&r, 0, 5);
        h = hp == 0 ? 0 : hp == 1 ? hmax : hp == 2 ? (steps > 1 ? steps - 1 : 1) : rng_range(&r, 1, hmax);
        if (h > steps) h = steps;
        o.height = h;
    }
    if (o.method != PYR_METHOD_NAIVE) o.slots = (int)rng_range(&r, 0, 3); /* 0 = auto */
    if (o.method != PYR_METHOD_NAIVE) {
        int mode = (int)rng_range(&r, 0, 2);
        int64_t hh = h > 0 ? h : 1;
        if (mode == 0 && h > 0) {
            int64_t lo = skewed ? 1 : 2 * hh + 1, hi = skewed ? split_n + 2 : split_n + 2 * hh + 2;
            o.piece = rng_range(&r, 0, 2) == 0 ? lo : rng_range(&r, lo, hi);
            o.memory = 1ull << 30;
            snprintf(how, sizeof how, "piece=%lld", (long long)o.piece);
        } else {
            uint64_t lo;
            for (;;) {
                lo = smallest_budget(&p, o, 1ull << 32);
                /* The GPU's row pitch and alignment leave room for pieces of a single result node at
                 * the smallest budget: a 189x37x27 grid then takes ~190 000 tasks per pass (~0.2 ms
                 * each on the H200, minutes per case).  Keep the barely-big-enough budget, on a grid
                 * halved along its longest axis until a run takes at most MAX_TASKS tasks. */
                o.memory = lo;
                pyr_plan_t *pl = NULL;
                int64_t tasks = 0;
                if (pyr_plan_create(&p, &o, &pl) == PYR_OK) {
                    pyr_plan_info_t pi;
                    if (pyr_plan_get_info(pl, &pi) == PYR_OK) tasks = pi.pieces[0] * pi.pieces[1] * pi.pieces[2] * pi.passes;
                } else {
                    pyr_clear_error();
                }
                pyr_plan_destroy(&pl);
                int a = n[1] > n[0] ? 1 : 0;
                if (n[2] > n[a]) a = 2;
                if (tasks <= MAX_TASKS || n[a] < 8) break;
                n[a] = (n[a] + 1) / 2;
                make_problem(&p, dims, n, prec, steps, PYR_INIT_RANDOM, seed * 1000 + (uint64_t)c);
            }
            uint64_t grid_bytes = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) * 8;
            if (mode == 1) o.memory = lo + (uint64_t)rng_range(&r, 0, 64);
            else o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(grid_bytes > lo ? grid_bytes - lo : 1));
            snprintf(how, sizeof how, "memory=%llu (min %llu)", (unsigned long long)o.memory, (unsigned long long)lo);
        }
    }
    /* the kernel variant: the planner's, every fused depth with every block shape (2D: 128 or 256
     * threads; 3D: 8 to 32 rows, tiles narrower than a warp on narrow boxes), or the plain kernel;
     * and the host grid pinned or its copies staged through pinned buffers */
    int kv = (int)rng_range(&r, 0, 3);
    if (kv == 1 && dims >= 2) {
        const int kmax = dims == 3 ? 5 : 15, k = 1 + 2 * (int)rng_range(&r, 0, (kmax - 1) / 2);
        const int t = dims == 2 ? (rng_range(&r, 0, 1) ? 256 : 128) : (int)rng_range(&r, 8, 32);
        snprintf(o.kernel, sizeof o.kernel, "fused:%d,%d", k, t);
    } else if (kv == 2) {
        snprintf(o.kernel, sizeof o.kernel, "plain");
    }
    o.host_memory = rng_range(&r, 0, 3) == 0 ? PYR_HOST_STAGE : PYR_HOST_AUTO;
    /* the axis the 3D fused launches stream: the planner's (half the cases), or y, or z, forced through the
     * tests' hook so that every shape runs through both kernels (drawn apart, so the cases stay as they were) */
    rng_t r2 = {seed * 6151ull + (uint64_t)c * 3079ull + 5};
    const int pick_stream = (int)rng_range(&r2, 0, 7), stream = pick_stream < 4 ? -1 : pick_stream < 7 ? 1 : 0;
    char label[600];
    snprintf(label, sizeof label, "case %d seed %llu: %dD %lldx%lldx%lld %s steps=%lld %s %s height=%lld slots=%d %s kernel=%s host=%s stream=%s", c,
             (unsigned long long)seed, dims, (long long)n[0], (long long)n[1], (long long)n[2], pyr_precision_name(prec),
             (long long)steps, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)h, o.slots, how,
             o.kernel[0] ? o.kernel : "auto", o.host_memory == PYR_HOST_STAGE ? "stage" : "auto", stream < 0 ? "auto" : stream ? "y" : "z");

    if (g_verbose) fprintf(stderr, "%s\n", label); /* where a slow or stuck run is */
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    if (st == PYR_ERR_BUDGET) { /* e.g. a height too tall for any piece */
        (*skipped)++;
        return 0;
    }
    if (st != PYR_OK) {
        CHECK(0, "%s: plan failed: %s", label, pyr_last_error());
        return 1;
    }
    pyr_plan_info_t info;
    CHECK_OK(pyr_plan_get_info(plan, &info));
    pyr_field_t *f = NULL;
    pyr_counters_t cnt;
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_OK(pyr_field_init(f, &p));
    pyr_field_t *fs[1] = {f};
    pyr_run_info_t ri;
    pyr_cuda_force_stream(g_gpu, stream);
    st = pyr_execute_fields(plan, fs, 1, NULL, &ri);
    pyr_cuda_force_stream(g_gpu, -1);
    cnt = ri.counts;
    pyr_plan_destroy(&plan);
    /* the grid reached as asked or as the rule for auto says (registering a small grid does not fail here), and said so */
    if (st == PYR_OK) {
        pyr_host_memory_t want = o.host_memory;
        if (want == PYR_HOST_AUTO) {
            /* the documented rule (docs/model-and-wisdom.md#host-memory): staged where the plan's copies cross
             * the link at most 2.5 times per host value (in core), pinned where pieces cross pass after pass */
            const double values = (double)info.host_bytes / (double)pyr_precision_size(p.precision);
            const double crossings = values > 0 ? (double)(info.counts.uploaded + info.counts.downloaded) / values : 0;
            want = crossings > 2.5 ? PYR_HOST_PIN : PYR_HOST_STAGE;
        }
        CHECK(info.host_memory == want && ri.host_memory == want, "%s: host memory planned %d, run %d (%s), expected %d", label,
              (int)info.host_memory, (int)ri.host_memory, ri.host_note, (int)want);
    }
    int bad = 0;
    if (st != PYR_OK) {
        CHECK(0, "%s: execute failed: %s", label, pyr_last_error());
        bad = 1;
    } else {
        pyr_options_t ref_opt;
        pyr_options_default(&ref_opt);
        ref_opt.backend = PYR_BACKEND_CPU;
        ref_opt.method = PYR_METHOD_NAIVE;
        pyr_field_t *ref = run_problem(&p, &ref_opt, NULL, NULL, &st);
        CHECK(ref != NULL, "%s: CPU naive run failed: %s", label, pyr_last_error());
        if (ref) {
            int64_t i = first_difference(ref, f);
            CHECK(i < 0, "%s: differs from CPU naive at node %lld (x %lld, y %lld, z %lld): %.17g vs %.17g (plan height %lld)",
                  label, (long long)i, (long long)(i < 0 ? 0 : i % n[0]), (long long)(i < 0 ? 0 : (i / n[0]) % n[1]),
                  (long long)(i < 0 ? 0 : i / (n[0] * n[1])), i < 0 ? 0 : field_get(f, i), i < 0 ? 0 : field_get(ref, i),
                  (long long)info.height);
            bad = i >= 0;
            pyr_field_destroy(&ref);
        }
        int same = cnt.uploaded == info.counts.uploaded && cnt.downloaded == info.counts.downloaded &&
                   cnt.computed == info.counts.computed && cnt.redundant == info.counts.redundant;
        CHECK(same, "%s: counters up %llu down %llu comp %llu red %llu != plan %llu %llu %llu %llu", label,
              (unsigned long long)cnt.uploaded, (unsigned long long)cnt.downloaded, (unsigned long long)cnt.computed,
              (unsigned long long)cnt.redundant, (unsigned long long)info.counts.uploaded, (unsigned long long)info.counts.downloaded,
              (unsigned long long)info.counts.computed, (unsigned long long)info.counts.redundant);
        bad |= !same;
    }
    pyr_field_destroy(&f);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 300;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &g_gpu));
    if (!g_gpu) return check_report();
    int first = argc > 3 ? atoi(argv[3]) : 0;
    g_verbose = getenv("PYR_TEST_VERBOSE") != NULL;
    int failed = 0, skipped = 0;
    for (int c = first; c < cases; c++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        failed += run_case(c, seed, &skipped);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (g_verbose) fprintf(stderr, "  %.3f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        if ((c + 1) % 50 == 0) {
            printf("%d cases, %d failed\n", c + 1, failed);
            fflush(stdout);
        }
    }
    printf("%d of %d random cases bit-identical to CPU naive with matching counters (%d skipped as unplannable; seed %llu)\n",
           cases - first - failed - skipped, cases - first - skipped, skipped, (unsigned long long)seed);
    CHECK(skipped * 4 < cases - first, "too many cases skipped (%d of %d)", skipped, cases - first);
    /* both orientations of the 3D fused launches ran (launch_tiles3d.h: boxes thin in z stream y) */
    pyr_cuda_stats_t st;
    pyr_cuda_get_stats(g_gpu, &st);
    printf("3D fused launches: %lld streaming z, %lld streaming y; of them saving a skewed call's halo: %lld, %lld; filling it: %lld, %lld\n",
           st.fused3d_z, st.fused3d_y, st.saves3d_z, st.saves3d_y, st.fills3d_z, st.fills3d_y);
    CHECK(cases - first < 100 || (st.fused3d_z > 0 && st.fused3d_y > 0), "3D fused launches: %lld streaming z, %lld streaming y",
          st.fused3d_z, st.fused3d_y);
    /* and both took the skewed executor's halo themselves (kernels.h halo) */
    CHECK(cases - first < 100 || (st.saves3d_z > 0 && st.saves3d_y > 0), "3D launches saving a halo: %lld streaming z, %lld streaming y",
          st.saves3d_z, st.saves3d_y);
    CHECK(cases - first < 100 || (st.fills3d_z > 0 && st.fills3d_y > 0), "3D launches filling a halo: %lld streaming z, %lld streaming y",
          st.fills3d_z, st.fills3d_y);
    pyr_device_release(g_gpu);
    return check_report();
}
