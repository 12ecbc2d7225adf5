/* Property test: every plan (trivial and pyramid, every decomposition, height,
 * budget and piece size, float and double, 1D/2D/3D) gives the naive method's
 * result bit for bit, moves and computes exactly what its plan predicts, and
 * stays within the per-task bounds of docs/theory.md#per-task-bounds.
 *
 *   test_pyramid [cases] [seed] [backend] [kernel variant]     (defaults: 300 1 cpu, the planner's variant) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "heat_util.h"
#include "plan/plan.h"
#include "plan/skewed.h"

static const char *backend_arg = "cpu";
static const char *kernel_arg = ""; /* the kernel variant (pyr_options_t.kernel), "" = the planner's */

/* Per-task upper bounds (docs/theory.md#per-task-bounds) for a pass of height n, with
 * R (or B) the piece capacity r + 2n and w the size of the unsplit part. */
static void check_bounds(const pyr_plan_t *plan, int64_t n, const char *label)
{
    pyr_counters_t sum, mx;
    pyr_plan_count_pass(plan, n, &sum, &mx);
    const pyr_problem_t *p = &plan->problem;
    double wd, wh, wa;
    int64_t r[3];
    for (int a = 0; a < 3; a++) {
        r[a] = 0;
        for (int64_t k = 0; k < plan->axis[a].count; k++) {
            int64_t e = plan->axis[a].bounds[k + 1] - plan->axis[a].bounds[k];
            if (e > r[a]) r[a] = e;
        }
    }
    switch (plan->decomp) {
    case PYR_DECOMP_SKEWED: {
        /* whole planes of S up and down; per call of c steps the trapezoid c S + c (c - 1) planes of the interior */
        const int a = p->dims - 1;
        double plane = (double)pyr_problem_nodes(p) / (double)p->n[a], inner = 1;
        for (int b = 0; b < p->dims; b++)
            if (b != a) inner *= (double)(p->n[b] - 2);
        int steps[PYR_SKEW_MAX_CALLS];
        int nc = pyr_skew_calls(plan, n, steps, PYR_SKEW_MAX_CALLS);
        double S = (double)plan->skew_size, planes = 0;
        for (int j = 0; j < nc; j++) planes += steps[j] * S + steps[j] * (steps[j] - 1.0);
        wd = wh = S * plane, wa = planes * inner;
        break;
    }
    case PYR_DECOMP_SEGMENTS: {
        double R = (double)(r[0] + 2 * n);
        wd = R, wh = R - 2.0 * n, wa = n * (R - n - 1);
        break;
    }
    case PYR_DECOMP_STRIPS: {
        double R = (double)(r[1] + 2 * n), w = (double)(p->n[0] - 2);
        wd = R * w, wh = (R - 2.0 * n) * w, wa = n * (R - n - 1) * w;
        break;
    }
    case PYR_DECOMP_SLABS: {
        double R = (double)(r[2] + 2 * n), w = (double)(p->n[0] - 2) * (double)(p->n[1] - 2);
        wd = R * w, wh = (R - 2.0 * n) * w, wa = n * (R - n - 1) * w;
        break;
    }
    default: { /* blocks: B = b + 2n with b the largest side */
        int64_t b = r[0] > r[1] ? r[0] : r[1];
        if (p->dims == 3 && r[2] > b) b = r[2];
        double B = (double)(b + 2 * n);
        if (p->dims == 2) {
            wd = B * B, wh = (B - 2.0 * n) * (B - 2.0 * n);
            wa = n * ((B - n) * (B - n) - 2 * (B - n) + (n * (double)n + 2) / 3.0);
        } else { /* cubes: the 3D analogue, summed layer by layer */
            wd = B * B * B, wh = (B - 2.0 * n) * (B - 2.0 * n) * (B - 2.0 * n);
            wa = 0;
            for (int64_t l = 1; l <= n; l++) wa += pow((double)(b + 2 * (n - l)), 3);
        }
        break;
    }
    }
    CHECK((double)mx.uploaded <= wd + 1e-9, "%s: a task uploads %llu > wd = %.0f", label, (unsigned long long)mx.uploaded, wd);
    CHECK((double)mx.downloaded <= wh + 1e-9, "%s: a task downloads %llu > wh = %.0f", label, (unsigned long long)mx.downloaded, wh);
    CHECK((double)mx.computed <= wa + 1e-6, "%s: a task computes %llu > wa = %.1f", label, (unsigned long long)mx.computed, wa);
}

static int run_case(int c, uint64_t seed)
{
    rng_t r = {seed * 1000003ull + (uint64_t)c};
    int dims = (int)rng_range(&r, 1, 3);
    int64_t n[3] = {1, 1, 1};
    static const int64_t awkward1[] = {3, 4, 5, 7, 8, 31, 64, 100, 1000, 1023};
    for (int d = 0; d < dims; d++) {
        int64_t cap = dims == 1 ? 1023 : dims == 2 ? 130 : 26;
        int64_t v = rng_range(&r, 0, 3) == 0 ? awkward1[rng_range(&r, 0, 9)] : rng_range(&r, 3, cap);
        if (dims == 2 && v > 300 && rng_range(&r, 0, 1)) v = 300; /* keep runtime sane */
        if (dims == 3 && v > 40) v = rng_range(&r, 3, 40);
        n[d] = v;
    }
    if (dims == 2 && n[0] * n[1] > 40000) n[0] = 40000 / n[1] > 3 ? 40000 / n[1] : 3;
    pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    int64_t steps = rng_range(&r, 1, 40);
    pyr_problem_t p;
    make_problem(&p, dims, n, prec, steps, PYR_INIT_RANDOM, seed + (uint64_t)c);

    pyr_status_t st;
    pyr_field_t *ref = naive_reference(&p, &st);
    if (!ref) {
        CHECK(0, "case %d: naive run failed: %s", c, pyr_last_error());
        return 1;
    }

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = !strcmp(backend_arg, "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    snprintf(o.kernel, sizeof o.kernel, "%s", kernel_arg);
    int trivial = rng_range(&r, 0, 4) == 0;
    o.method = trivial ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
    else if (dims == 3) o.decomposition = rng_range(&r, 0, 2) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_BLOCKS : PYR_DECOMP_STRIPS;
    const int skewed = dims > 1 && rng_range(&r, 0, 2) == 0;
    if (skewed) o.decomposition = PYR_DECOMP_SKEWED;
    int64_t split_n = dims == 1 ? n[0] : o.decomposition == PYR_DECOMP_SLABS ? n[2] : o.decomposition == PYR_DECOMP_STRIPS ? n[1]
                      : skewed ? n[dims - 1] : (n[0] < n[1] ? n[0] : n[1]);
    int64_t hmax = trivial ? 1 : (steps < 24 ? steps : 24);
    int64_t h = trivial ? 1 : (rng_range(&r, 0, 3) == 0 ? hmax : rng_range(&r, 1, hmax));
    o.height = trivial ? 0 : h;
    o.slots = (int)rng_range(&r, 0, 3); /* 0 = auto (1 on the CPU); 2, 3: the multi-slot paths and the band writer thread */
    int mode = (int)rng_range(&r, 0, 2);
    char how[160];
    if (mode == 0) {
        /* explicit piece extent: from the smallest (2h + 1) up to past the grid */
        /* skewed: the piece's planes, from one up to past the grid */
        int64_t lo = skewed ? 1 : 2 * h + 1, hi = skewed ? split_n + 2 : split_n + 2 * h + 2;
        o.piece = rng_range(&r, 0, 2) == 0 ? lo : rng_range(&r, lo, hi);
        /* no budget limit beyond the piece: all of a GPU's free memory */
        o.memory = o.backend == PYR_BACKEND_CUDA ? 0 : 1ull << 40;
        snprintf(how, sizeof how, "piece=%lld", (long long)o.piece);
    } else {
        /* budget: the smallest that works, barely more, or anything up to above the grid */
        uint64_t lo = smallest_budget(&p, o, 1ull << 36);
        uint64_t grid_bytes = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) * 8;
        if (mode == 1) o.memory = lo + (uint64_t)rng_range(&r, 0, 64);
        else o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(grid_bytes > lo ? grid_bytes - lo : 1));
        snprintf(how, sizeof how, "memory=%llu (min %llu)", (unsigned long long)o.memory, (unsigned long long)lo);
    }
    char label[512];
    snprintf(label, sizeof label, "case %d seed %llu: %dD %lldx%lldx%lld %s steps=%lld %s %s height=%lld slots=%d %s", c,
             (unsigned long long)seed, dims, (long long)n[0], (long long)n[1], (long long)n[2], pyr_precision_name(prec),
             (long long)steps, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)h, o.slots, how);

    pyr_plan_t *plan = NULL;
    st = pyr_plan_create(&p, &o, &plan);
    if (st != PYR_OK) {
        CHECK(0, "%s: plan failed: %s", label, pyr_last_error());
        pyr_field_destroy(&ref);
        return 1;
    }
    pyr_plan_info_t info;
    pyr_plan_get_info(plan, &info);
    CHECK(info.device_bytes <= info.budget_bytes, "%s: plan uses %llu bytes > budget", label, (unsigned long long)info.device_bytes);
    check_bounds(plan, plan->height, label);
    int64_t last = steps % plan->height;
    if (last) check_bounds(plan, last, label);

    pyr_field_t *f = NULL;
    pyr_counters_t cnt;
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_OK(pyr_field_init(f, &p));
    st = pyr_execute(plan, f, NULL, &cnt);
    int bad = 0;
    if (st != PYR_OK) {
        CHECK(0, "%s: execute failed: %s", label, pyr_last_error());
        bad = 1;
    } else {
        int64_t i = first_difference(ref, f);
        CHECK(i < 0, "%s: differs from naive at node %lld (%.17g vs %.17g)", label, (long long)i, i < 0 ? 0 : field_get(f, i),
              i < 0 ? 0 : field_get(ref, i));
        CHECK(cnt.uploaded == info.counts.uploaded && cnt.downloaded == info.counts.downloaded &&
                  cnt.computed == info.counts.computed && cnt.redundant == info.counts.redundant,
              "%s: counters up %llu down %llu comp %llu red %llu != plan %llu %llu %llu %llu", label,
              (unsigned long long)cnt.uploaded, (unsigned long long)cnt.downloaded, (unsigned long long)cnt.computed,
              (unsigned long long)cnt.redundant, (unsigned long long)info.counts.uploaded, (unsigned long long)info.counts.downloaded,
              (unsigned long long)info.counts.computed, (unsigned long long)info.counts.redundant);
        bad = i >= 0;
    }
    pyr_plan_destroy(&plan);
    pyr_field_destroy(&f);
    pyr_field_destroy(&ref);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 300;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (argc > 3) backend_arg = argv[3];
    if (argc > 4) kernel_arg = argv[4];
    if (!strcmp(backend_arg, "cuda") && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int failed = 0;
    for (int c = 0; c < cases; c++) failed += run_case(c, seed);
    printf("%d of %d random cases bit-identical to naive (seed %llu, backend %s)\n", cases - failed, cases,
           (unsigned long long)seed, backend_arg);
    return check_report();
}
