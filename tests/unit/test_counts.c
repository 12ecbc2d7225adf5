/* Counters equal the closed forms of the pyramid geometry
 * (docs/theory.md#per-task-bounds): values uploaded, downloaded and computed by segments, strips, blocks and
 * slabs, for full passes and a shorter last pass; and the trivial method moves
 * exactly the paper's wd = K(I-1)R/(R-2), wh = wa = K(I-1). */
#include <math.h>
#include <stdio.h>

#include "heat_util.h"

/* One pass of height h over mu pieces of r result nodes along a split axis
 * (r >= h): sum of source extents, and of computed extents at layer l. */
static double src_sum(int64_t mu, int64_t r, int64_t h) { return (double)((mu - 2) * (r + 2 * h) + 2 * (r + h + 1)); }
static double layer_sum(int64_t mu, int64_t r, int64_t h, int64_t l) { return (double)(mu * r + 2 * (mu - 1) * (h - l)); }

typedef struct {
    double up, down, comp;
} counts_t;

static counts_t pass_counts(pyr_decomp_t d, const int64_t n[3], int64_t mu, int64_t r, int64_t h)
{
    counts_t c = {0, 0, 0};
    double w = d == PYR_DECOMP_STRIPS ? (double)(n[0] - 2) : d == PYR_DECOMP_SLABS ? (double)(n[0] - 2) * (double)(n[1] - 2) : 1;
    if (d == PYR_DECOMP_BLOCKS) { /* squares in 2D, cubes in 3D (n[2] > 1) */
        int k = n[2] > 1 ? 3 : 2;
        c.up = pow(src_sum(mu, r, h), k);
        c.down = pow((double)(mu * r), k);
        for (int64_t l = 1; l <= h; l++) c.comp += pow(layer_sum(mu, r, h, l), k);
        return c;
    }
    c.up = src_sum(mu, r, h) * w;
    c.down = (double)(mu * r) * w;
    for (int64_t l = 1; l <= h; l++) c.comp += layer_sum(mu, r, h, l) * w;
    return c;
}

static void check_case(int dims, pyr_decomp_t d, const int64_t n[3], int64_t mu, int64_t r, int64_t h, int64_t steps,
                       pyr_method_t method)
{
    pyr_problem_t p;
    make_problem(&p, dims, n, PYR_DOUBLE, steps, PYR_INIT_RANDOM, 5);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = method;
    o.decomposition = d;
    o.height = method == PYR_METHOD_TRIVIAL ? 0 : h;
    o.piece = r + 2 * h;
    o.memory = 1ull << 40;
    pyr_counters_t got;
    pyr_plan_info_t info;
    pyr_status_t st;
    pyr_field_t *f = run_problem(&p, &o, &got, &info, &st);
    CHECK(f != NULL, "%s run failed: %s", pyr_decomp_name(d), pyr_last_error());
    if (!f) return;
    pyr_field_destroy(&f);
    CHECK(info.tasks_per_pass == (d == PYR_DECOMP_BLOCKS ? (dims == 3 ? mu * mu * mu : mu * mu) : mu), "%s: %lld pieces, expected %lld", pyr_decomp_name(d),
          (long long)info.tasks_per_pass, (long long)mu);
    counts_t full = pass_counts(d, n, mu, r, h), last = {0, 0, 0};
    int64_t passes = steps / h, rem = steps % h;
    if (rem) last = pass_counts(d, n, mu, r, rem);
    double faces = 0;
    if (d == PYR_DECOMP_STRIPS) faces = 2.0 * (double)n[1];
    if (d == PYR_DECOMP_SLABS) faces = 2.0 * (double)(n[2] * n[1]) + 2.0 * (double)(n[2] * n[0]);
    double up = (double)passes * full.up + last.up + faces, down = (double)passes * full.down + last.down,
           comp = (double)passes * full.comp + last.comp;
    CHECK((double)got.uploaded == up, "%s h=%lld: uploaded %llu, closed form %.0f", pyr_decomp_name(d), (long long)h,
          (unsigned long long)got.uploaded, up);
    CHECK((double)got.downloaded == down, "%s h=%lld: downloaded %llu, closed form %.0f", pyr_decomp_name(d), (long long)h,
          (unsigned long long)got.downloaded, down);
    CHECK((double)got.computed == comp, "%s h=%lld: computed %llu, closed form %.0f", pyr_decomp_name(d), (long long)h,
          (unsigned long long)got.computed, comp);
    CHECK(got.uploaded == info.counts.uploaded && got.downloaded == info.counts.downloaded && got.computed == info.counts.computed,
          "%s: run counters differ from the plan's prediction", pyr_decomp_name(d));
    double useful = (double)pyr_problem_interior(&p) * (double)steps;
    CHECK((double)got.redundant == comp - useful, "%s: redundant %llu, expected %.0f", pyr_decomp_name(d),
          (unsigned long long)got.redundant, comp - useful);
    printf("%-8s %-7s mu=%lld r=%lld h=%lld steps=%lld: up %.0f down %.0f computed %.0f  ok\n", pyr_decomp_name(d),
           pyr_method_name(method), (long long)mu, (long long)r, (long long)h, (long long)steps, up, down, comp);
}

int main(void)
{
    /* interior = mu * r exactly */
    int64_t seg[3] = {2 + 12 * 20, 1, 1}, strip[3] = {37, 2 + 6 * 11, 1}, block[3] = {2 + 5 * 9, 2 + 5 * 9, 1},
            slab[3] = {9, 11, 2 + 4 * 7}, cube[3] = {2 + 3 * 8, 2 + 3 * 8, 2 + 3 * 8};
    for (int64_t h = 1; h <= 6; h += 5) {
        check_case(1, PYR_DECOMP_SEGMENTS, seg, 12, 20, h, 4 * h + 3 % h + (h > 1 ? 3 : 0), PYR_METHOD_PYRAMID);
        check_case(2, PYR_DECOMP_STRIPS, strip, 6, 11, h, 3 * h + (h > 1 ? 2 : 0), PYR_METHOD_PYRAMID);
        check_case(2, PYR_DECOMP_BLOCKS, block, 5, 9, h, 2 * h + (h > 1 ? 5 : 0), PYR_METHOD_PYRAMID);
        check_case(3, PYR_DECOMP_SLABS, slab, 4, 7, h, 2 * h + (h > 1 ? 1 : 0), PYR_METHOD_PYRAMID);
        check_case(3, PYR_DECOMP_BLOCKS, cube, 3, 8, h, 2 * h + (h > 1 ? 4 : 0), PYR_METHOD_PYRAMID);
    }
    /* trivial against the paper's totals (1D, segments of R = r + 2 nodes) */
    {
        int64_t n[3] = {2 + 10 * 25, 1, 1};
        int64_t K = 13, R = 27;
        check_case(1, PYR_DECOMP_SEGMENTS, n, 10, 25, 1, K, PYR_METHOD_TRIVIAL);
        pyr_problem_t p;
        make_problem(&p, 1, n, PYR_FLOAT, K, PYR_INIT_RANDOM, 2);
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.method = PYR_METHOD_TRIVIAL;
        o.piece = R;
        o.memory = 1 << 30;
        pyr_counters_t c;
        pyr_field_t *f = run_problem(&p, &o, &c, NULL, NULL);
        pyr_field_destroy(&f);
        double I1 = (double)(n[0] - 2);
        CHECK((double)c.uploaded == K * I1 * R / (R - 2), "trivial wd %llu != K(I-1)R/(R-2) = %.0f", (unsigned long long)c.uploaded,
              K * I1 * R / (R - 2));
        CHECK((double)c.downloaded == K * I1 && (double)c.computed == K * I1, "trivial wh, wa != K(I-1)");
    }
    return check_report();
}
