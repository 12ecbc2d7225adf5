/* One small case of each CUDA kernel (plain 1D, fused 2D and 3D at several
 * fusion depths, both precisions, shrinking pyramid boxes, box copies), each
 * compared bit for bit with the CPU.  Small enough to run under
 * compute-sanitizer (memcheck, racecheck). */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_api.h"
#include "backend/device.h"
#include "heat_util.h"

static void one(int dims, int64_t nx, int64_t ny, int64_t nz, pyr_precision_t prec, int64_t steps, pyr_method_t method,
                pyr_decomp_t decomp, int64_t height, int64_t piece, const char *k2d, const char *k3d)
{
    int64_t n[3] = {nx, ny, nz};
    pyr_problem_t p;
    make_problem(&p, dims, n, prec, steps, PYR_INIT_RANDOM, (uint64_t)(nx * 31 + ny * 7 + nz + steps));
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = method;
    o.decomposition = decomp;
    o.height = height;
    o.piece = piece;
    /* the steps per fused launch of this dimension's kernel */
    snprintf(o.kernel, sizeof o.kernel, "fused:%s", dims == 2 ? k2d : dims == 3 ? k3d : "1");
    if (piece) o.memory = 1ull << 28;
    pyr_status_t s1, s2;
    pyr_field_t *a = run_problem(&p, &o, NULL, NULL, &s1);
    pyr_field_t *b = naive_reference(&p, &s2);
    char label[200];
    snprintf(label, sizeof label, "%dD %lldx%lldx%lld %s %s %s h=%lld piece=%lld K2D=%s K3D=%s", dims, (long long)nx, (long long)ny,
             (long long)nz, pyr_precision_name(prec), pyr_method_name(method), pyr_decomp_name(decomp), (long long)height,
             (long long)piece, k2d, k3d);
    CHECK(a && b, "%s: run failed: %s", label, pyr_last_error());
    if (a && b) {
        int64_t i = first_difference(a, b);
        CHECK(i < 0, "%s: differs at node %lld", label, (long long)i);
        printf("%s: %s\n", label, i < 0 ? "bit-identical" : "DIFFERS");
    }
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
}

/* A grid of awkward values (fill_wild: mixed signs and exponents, subnormals,
 * signed zeros; and every ninth node at +-0.24 of the precision's largest
 * number: u + u and a neighbours' sum reach half of it, s - (u + u) all of
 * it, short of overflowing in any order of the operations), one
 * case on the CUDA backend against the CPU's naive method, bit for bit: the
 * 1D and 2D kernels compute s - (u + u) as one fused multiply-add
 * (src/schemes/heat.c), which must round as the CPU's two operations do. */
static void wild(int dims, int64_t nx, int64_t ny, int64_t nz, pyr_precision_t prec, int64_t steps, pyr_method_t method, const char *k)
{
    int64_t n[3] = {nx, ny, nz};
    pyr_problem_t p;
    make_problem(&p, dims, n, prec, steps, PYR_INIT_RANDOM, 5);
    pyr_field_t *a = NULL, *b = NULL;
    CHECK_OK(pyr_field_create(&p, &a));
    CHECK_OK(pyr_field_create(&p, &b));
    if (!a || !b) return;
    fill_wild(a, (uint64_t)(nx * 13 + ny + steps));
    const double big = 0.24 * (prec == PYR_FLOAT ? (double)FLT_MAX : DBL_MAX);
    for (int64_t i = 0; i < pyr_field_count(a); i += 9) {
        if (prec == PYR_FLOAT) ((float *)a->data)[i] = (float)(i % 2 ? big : -big);
        else ((double *)a->data)[i] = i % 2 ? big : -big;
    }
    memcpy(b->data, a->data, (size_t)pyr_field_count(a) * pyr_precision_size(prec));
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    pyr_plan_t *pc = NULL, *pg = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &pc));
    o.backend = PYR_BACKEND_CUDA;
    o.method = method;
    snprintf(o.kernel, sizeof o.kernel, "fused:%s", k);
    if (method == PYR_METHOD_PYRAMID) o.memory = (uint64_t)pyr_field_count(a) * pyr_precision_size(prec) / 2;
    CHECK_OK(pyr_plan_create(&p, &o, &pg));
    if (pc && pg) {
        CHECK_OK(pyr_execute(pc, b, NULL, NULL));
        CHECK_OK(pyr_execute(pg, a, NULL, NULL));
        int64_t i = first_difference(a, b);
        CHECK(i < 0, "wild %dD %s %s: differs at node %lld", dims, pyr_precision_name(prec), pyr_method_name(method), (long long)i);
        printf("wild values %dD %lldx%lldx%lld %s %s fused:%s: %s\n", dims, (long long)nx, (long long)ny, (long long)nz,
               pyr_precision_name(prec), pyr_method_name(method), k, i < 0 ? "bit-identical" : "DIFFERS");
    }
    pyr_plan_destroy(&pc);
    pyr_plan_destroy(&pg);
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
}

/* The naive method's call: about 100 steps in whole launches of the kernel
 * it runs (a launch depth K: the largest multiple of K up to 100), the height
 * when one is given. */
static void chunk(int dims, pyr_precision_t prec, const char *kernel, int64_t height)
{
    int64_t n[3] = {dims == 3 ? 40 : 300, dims >= 2 ? 70 : 1, dims == 3 ? 30 : 1};
    pyr_problem_t p;
    make_problem(&p, dims, n, prec, 1000, PYR_INIT_RANDOM, 3);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_NAIVE;
    o.height = height;
    snprintf(o.kernel, sizeof o.kernel, "%s", kernel);
    pyr_plan_t *plan = NULL;
    pyr_plan_info_t info;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (!plan) return;
    CHECK_OK(pyr_plan_get_info(plan, &info));
    int k = 1;
    if (!strncmp(info.kernel, "fused:", 6)) k = atoi(info.kernel + 6);
    const int64_t want = height > 0 ? height : k > 1 ? 100 / k * k : 100;
    CHECK(info.height == want, "%dD %s naive, kernel %s, height %lld: %lld steps per call, want %lld", dims, pyr_precision_name(prec),
          info.kernel, (long long)height, (long long)info.height, (long long)want);
    printf("%dD %s naive, kernel %s, height given %lld: %lld steps per call\n", dims, pyr_precision_name(prec), info.kernel,
           (long long)height, (long long)info.height);
    pyr_plan_destroy(&plan);
}

/* The 3D cases: the streaming kernel (one step), the fused kernels at three and five steps, tiles sized to
 * the box (200 interior columns take 2 tiles (float) or 4 (double) of fewer than 32 threads across, and
 * then one tile of 35 rows: a narrower block takes more rows), skewed pieces, awkward values. */
static void cases_3d(void)
{
    one(3, 140, 20, 12, PYR_FLOAT, 9, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "9", "1");
    one(3, 140, 20, 12, PYR_FLOAT, 9, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "9", "3");
    one(3, 140, 20, 12, PYR_DOUBLE, 9, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "9", "3");
    one(3, 40, 40, 30, PYR_FLOAT, 11, PYR_METHOD_PYRAMID, PYR_DECOMP_SLABS, 5, 14, "9", "5");
    one(3, 202, 31, 16, PYR_FLOAT, 9, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "9", "3");
    one(3, 202, 31, 16, PYR_DOUBLE, 9, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "9", "3");
    one(3, 202, 31, 16, PYR_DOUBLE, 9, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "9", "5");
    one(3, 60, 48, 20, PYR_FLOAT, 20, PYR_METHOD_PYRAMID, PYR_DECOMP_SKEWED, 6, 8, "9", "3");
    /* skewed calls of five steps, their windows' ten halo planes read and saved by the kernel (kernels.h halo) */
    one(3, 60, 48, 31, PYR_FLOAT, 20, PYR_METHOD_PYRAMID, PYR_DECOMP_SKEWED, 10, 12, "9", "5");
    one(3, 60, 48, 20, PYR_DOUBLE, 20, PYR_METHOD_PYRAMID, PYR_DECOMP_SKEWED, 6, 8, "9", "3");
    wild(3, 60, 30, 20, PYR_FLOAT, 9, PYR_METHOD_NAIVE, "3");
}

int main(void)
{
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    one(1, 700, 1, 1, PYR_FLOAT, 13, PYR_METHOD_PYRAMID, PYR_DECOMP_SEGMENTS, 5, 101, "9", "1");
    one(2, 1100, 37, 1, PYR_FLOAT, 23, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "9", "1");
    one(2, 1100, 37, 1, PYR_DOUBLE, 23, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "15", "1");
    one(2, 150, 90, 1, PYR_FLOAT, 20, PYR_METHOD_PYRAMID, PYR_DECOMP_BLOCKS, 7, 40, "3", "1");
    one(2, 150, 90, 1, PYR_DOUBLE, 20, PYR_METHOD_PYRAMID, PYR_DECOMP_STRIPS, 10, 30, "5", "1");
    one(2, 150, 90, 1, PYR_FLOAT, 6, PYR_METHOD_TRIVIAL, PYR_DECOMP_STRIPS, 0, 9, "9", "1");
    /* held for its hooks (cuda_api.h): the launch counters and the forced axis */
    pyr_device_t *gpu = NULL;
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &gpu));
    if (!gpu) return check_report();
    pyr_cuda_reset_stats(gpu);
    cases_3d();
    pyr_cuda_stats_t st;
    pyr_cuda_get_stats(gpu, &st);
    CHECK(st.saves3d_z > 0 && st.fills3d_z > 0, "3D launches streaming z: %lld, %lld saved a skewed call's halo, %lld filled it",
          st.fused3d_z, st.saves3d_z, st.fills3d_z);
    /* the 3D cases again with every fused launch streaming y, its rows z (launch_tiles3d.h; the planner takes
     * that for boxes thin in z over wide planes, as a skewed window out of core) */
    pyr_cuda_reset_stats(gpu);
    pyr_cuda_force_stream(gpu, 1);
    cases_3d();
    pyr_cuda_force_stream(gpu, -1);
    pyr_cuda_get_stats(gpu, &st);
    CHECK(st.fused3d_y > 0 && st.fused3d_z == 0, "forced to stream y: %lld 3D launches streaming y, %lld z", st.fused3d_y,
          st.fused3d_z);
    CHECK(st.saves3d_y > 0 && st.fills3d_y > 0, "3D launches streaming y: %lld, %lld saved a skewed call's halo, %lld filled it",
          st.fused3d_y, st.saves3d_y, st.fills3d_y);
    /* 2D edge tiles with segments of their own (choose_segment): five tiles across, the two at the walls
     * taking shorter and more segments than the three inner ones (double, 1198 rows, four blocks per SM of
     * an H200: 93 segments of 13 rows, the edge tiles' 109 of 11; shorter at any blocks per SM), in core
     * (each column's test made once) and in pieces of blocks (their inner sides untested: test_boxes) */
    one(2, 1100, 1200, 1, PYR_DOUBLE, 23, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "7", "1");
    one(2, 2100, 700, 1, PYR_FLOAT, 23, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0, "11", "1");
    one(2, 1100, 1200, 1, PYR_DOUBLE, 23, PYR_METHOD_PYRAMID, PYR_DECOMP_BLOCKS, 14, 500, "7", "1");
    wild(1, 900, 1, 1, PYR_FLOAT, 7, PYR_METHOD_NAIVE, "1");
    wild(1, 900, 1, 1, PYR_DOUBLE, 7, PYR_METHOD_NAIVE, "1");
    wild(2, 300, 70, 1, PYR_FLOAT, 23, PYR_METHOD_NAIVE, "11");
    wild(2, 300, 70, 1, PYR_DOUBLE, 23, PYR_METHOD_NAIVE, "7");
    wild(2, 300, 70, 1, PYR_DOUBLE, 23, PYR_METHOD_PYRAMID, "5");
    chunk(2, PYR_FLOAT, "", 0);
    chunk(2, PYR_DOUBLE, "", 0);
    chunk(3, PYR_FLOAT, "", 0);
    chunk(2, PYR_DOUBLE, "fused:7", 0);
    chunk(2, PYR_DOUBLE, "fused:5", 0);
    chunk(2, PYR_FLOAT, "fused:11", 50);
    pyr_device_release(gpu);
    return check_report();
}
