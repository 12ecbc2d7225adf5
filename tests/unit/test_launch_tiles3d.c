/* How a 3D fused launch lays out its blocks (backend/launch_tiles3d.h),
 * checked on the host.  Over random boxes, depths, vector widths, rows per
 * thread, thread and shared-memory limits and occupancies: the layout covers
 * the last box (x tiles from a column the kernels' vectors align to, rows'
 * tiles, the streamed axis in segments placing every plane), its blocks fit
 * (at most 32 threads across, the thread limit, the rows the shared memory
 * holds, at least 2K + 1 rows), its cost is the split's measure of its tiles
 * and never above the layout every launch made before (streaming z on the
 * fewest x tiles: rebuilt here from that code's rules), it is the cheapest
 * candidate where that beats the layout of before by the margin and that
 * layout otherwise, and a box symmetric in y and z streams z.  Then the window the
 * header names: streaming y, one tile of rows, one wave. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/launch_tiles3d.h"
#include "heat_util.h"

static rng_t g_rng = {0x9e3779b97f4a7c15ull};
static int rnd(int lo, int hi) { return (int)rng_range(&g_rng, lo, hi); } /* uniform in [lo, hi] */

static int cdiv(int a, int b) { return (a + b - 1) / b; }
static int fdiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* An occupancy model: registers for 64 per thread, 2048 threads and 228 KiB per SM, `row_bytes` of shared
 * memory per row of a block (+ 2 pad rows); `refuse_y`: the kernel streaming y cannot run */
typedef struct {
    int row_bytes, refuse_y, r;
} occ_t;
static int per_sm_model(void *ctx, int stream_y, int bx, int rows)
{
    const occ_t *o = (const occ_t *)ctx;
    if (stream_y && o->refuse_y) return 0;
    const int threads = bx * (rows / o->r);
    int n = 2048 / threads;
    const int by_regs = 65536 / (threads * 64), by_smem = 233472 / ((rows + 2) * o->row_bytes + 1024);
    if (by_regs < n) n = by_regs;
    if (by_smem < n) n = by_smem;
    return n;
}

/* The layout every 3D launch made before this planner (stencil_fused.cuh's plan_tiles3d, rules restated):
 * stream z, the fewest x tiles, rows up to the thread and shared-memory limits; its split cost. */
static double old_cost(const int lo[3], const int hi[3], const pyr_tiles3d_in_t *in)
{
    const int k = in->k, v = in->v, r = in->r;
    const int ox0 = fdiv(lo[0] - k, v) * v + k, span_x = hi[0] - ox0, span_y = hi[1] - lo[1];
    const int tx = cdiv(span_x, (32 * v - 2 * k) / v * v);
    const int OWx = cdiv(cdiv(span_x, tx), v) * v, BX = cdiv(OWx + 2 * k, v);
    const int want = in->want_threads < in->max_threads ? in->want_threads : in->max_threads;
    const int least = cdiv(2 * k + 1, r) * r;
    int rows_max = want / BX * r;
    if (rows_max < least) rows_max = least;
    while (rows_max > least && rows_max > in->rows_smem) rows_max -= r;
    if (BX * (rows_max / r) > in->max_threads || rows_max > in->rows_smem) return -1;
    const int ty = cdiv(span_y, rows_max - 2 * k), OWy = cdiv(span_y, ty), NTY = cdiv(OWy + 2 * k, r);
    const int per_sm = in->per_sm(in->ctx, 0, BX, NTY * r);
    if (per_sm < 1) return -1;
    pyr_seg_split_t sp;
    double c = 0;
    if (in->split) pyr_segment_split(hi[2] - lo[2], tx * ty, per_sm * in->per_wave_sm, k, &sp, &c);
    else pyr_segment_choose(hi[2] - lo[2], tx * ty, 0, 1.0, per_sm * in->per_wave_sm, k, NULL, &c);
    return c;
}

static unsigned char seen[1 << 16];

static void check_plan(const int lo[3], const int hi[3], const pyr_tiles3d_in_t *in, const char *what)
{
    const char *fmt = "%s: box [%d,%d)x[%d,%d)x[%d,%d) k %d v %d r %d threads %d/%d rows %d sms %d split %d: %s";
#define ARGS what, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], in->k, in->v, in->r, in->max_threads, in->want_threads, in->rows_smem, \
             in->per_wave_sm, in->split
    pyr_tiles3d_t t;
    memset(&t, 0, sizeof t);
    const int ok = pyr_tiles3d_plan(lo, hi, in, &t);
    const double before = old_cost(lo, hi, in);
    if (!ok) {
        CHECK(before < 0, fmt, ARGS, "no layout, where the old rules made one");
        return;
    }
    const int k = in->k, v = in->v, r = in->r;
    const int a1 = t.stream_y ? 2 : 1, a2 = t.stream_y ? 1 : 2; /* the rows' axis, the streamed axis */
    CHECK(t.OWx % v == 0 && ((t.ox0 - k) % v + v) % v == 0, fmt, ARGS, "x tiles not aligned to the vectors");
    CHECK(t.ox0 <= lo[0] && t.ox0 > lo[0] - v && t.ox0 + t.tx * t.OWx >= hi[0], fmt, ARGS, "x tiles miss the box");
    CHECK(t.BX >= 1 && t.BX <= 32 && t.BX * v >= t.OWx + 2 * k, fmt, ARGS, "a block's threads across do not hold its tile");
    CHECK(t.oy0 == lo[a1] && t.ty * t.OWy >= hi[a1] - lo[a1] && (t.ty - 1) * t.OWy < hi[a1] - lo[a1], fmt, ARGS,
          "rows' tiles miss the box (or one is empty)");
    CHECK(t.NTY * r >= t.OWy + 2 * k && t.NTY * r >= 2 * k + 1 && t.NTY * r <= in->rows_smem && t.BX * t.NTY <= in->max_threads, fmt,
          ARGS, "a block's rows do not fit");
    CHECK(t.lo == lo[a2] && t.hi == hi[a2], fmt, ARGS, "the streamed range is not the box's");
    CHECK(t.per_sm == in->per_sm(in->ctx, t.stream_y, t.BX, t.NTY * r), fmt, ARGS, "blocks per SM not the query's");
    /* every plane of every tile placed once */
    const int extent = t.hi - t.lo, tiles = t.tx * t.ty;
    if ((long long)extent * tiles <= (long long)sizeof seen) {
        memset(seen, 0, (size_t)extent * (size_t)tiles);
        const long long blocks = pyr_seg_split_blocks(&t.sp, tiles);
        int twice = 0, missed = 0;
        for (long long b = 0; b < blocks; b++) {
            int tile, z0, z1;
            pyr_seg_split_place(&t.sp, tiles, b, t.lo, t.hi, &tile, &z0, &z1);
            for (int z = z0; z < z1; z++) twice += seen[(size_t)tile * (size_t)extent + (size_t)(z - t.lo)]++ > 0;
        }
        for (size_t i = 0; i < (size_t)extent * (size_t)tiles; i++) missed += !seen[i];
        CHECK(!twice && !missed, fmt, ARGS, "the segments do not place every plane once");
    }
    /* its cost: the split's measure of its tiles, at most the old layout's and every candidate's */
    pyr_seg_split_t sp;
    double c = 0;
    const int per_wave = t.per_sm * in->per_wave_sm;
    if (in->split) pyr_segment_split(extent, tiles, per_wave, k, &sp, &c);
    else pyr_segment_choose(extent, tiles, 0, 1.0, per_wave, k, NULL, &c);
    CHECK(c == t.cost, fmt, ARGS, "cost not the split's measure");
    if (in->only == 0) CHECK(!t.stream_y && (before < 0 || t.cost <= before), fmt, ARGS, "asked for z: streams y, or dearer than before");
    if (in->only >= 0) return;
    CHECK(before < 0 || t.cost <= before, fmt, ARGS, "dearer than the layout of before");
    /* the cheapest candidate where it beats the first (z, fewest tiles: the layout of before) by the margin */
    double least = -1;
    for (int o = 0; o < 2; o++)
        for (int more = 0; more <= PYR_TILES3D_MORE_X; more++) {
            pyr_tiles3d_t u;
            const int okc = o ? pyr_tiles3d_candidate(lo[0], hi[0], lo[2], hi[2], lo[1], hi[1], 1, more, in, &u)
                              : pyr_tiles3d_candidate(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], 0, more, in, &u);
            if (okc && (least < 0 || u.cost < least)) least = u.cost;
        }
    const double want = before >= 0 && !(least < before * (1.0 - PYR_TILES3D_MARGIN)) ? before : least;
    CHECK(t.cost == want, fmt, ARGS, "not the cheapest candidate by the margin, nor the first");
    if (before >= 0 && t.cost == before) CHECK(!t.stream_y, fmt, ARGS, "the first's cost, yet streams y");
#undef ARGS
}

int main(void)
{
    for (int t = 0; t < 4000; t++) {
        occ_t occ;
        pyr_tiles3d_in_t in;
        in.k = 2 * rnd(0, 2) + 1;
        in.v = rnd(0, 1) ? 4 : 2;
        in.r = rnd(0, 3) ? 1 : 2;
        in.max_threads = rnd(0, 2) ? 1024 : 512;
        in.want_threads = rnd(0, 1) ? 1024 : 32 * rnd(8, 32);
        occ.r = in.r;
        occ.row_bytes = rnd(0, 1) ? 4608 : 1024 * rnd(1, 8);
        occ.refuse_y = rnd(0, 9) == 0;
        in.rows_smem = (233472 - 1024) / occ.row_bytes - 2;
        if (rnd(0, 4) == 0) in.rows_smem = rnd(1, 40);
        in.per_wave_sm = rnd(0, 3) ? 132 : rnd(1, 200);
        in.split = rnd(0, 3) != 0;
        in.per_sm = per_sm_model;
        in.ctx = &occ;
        in.only = -1;
        int lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = rnd(1, 20);
            const int n = t % 5 == 0 ? rnd(1, 2000) : rnd(1, 300);
            hi[a] = lo[a] + n;
        }
        if (t % 7 == 0) hi[2] = lo[2] + rnd(1, 40); /* thin in z: a skewed window */
        check_plan(lo, hi, &in, "random");
        /* symmetric in y and z: the same costs either way, so z (the first) */
        int slo[3] = {lo[0], lo[1], lo[1]}, shi[3] = {hi[0], hi[1], hi[1]};
        pyr_tiles3d_t s;
        memset(&s, 0, sizeof s);
        if (pyr_tiles3d_plan(slo, shi, &in, &s)) {
            check_plan(slo, shi, &in, "symmetric");
            CHECK(!s.stream_y, "symmetric box [%d,%d)^2 x [%d,%d): streams y", slo[1], shi[1], slo[0], shi[0]);
        }
        /* the tests' hook: z only (the layout of before), or y wherever one can be made */
        pyr_tiles3d_in_t fz = in, fy = in;
        fz.only = 0;
        fy.only = 1;
        check_plan(lo, hi, &fz, "only z");
        check_plan(lo, hi, &fy, "only y");
        int any_y = 0;
        for (int more = 0; more <= PYR_TILES3D_MORE_X; more++) {
            pyr_tiles3d_t u;
            any_y |= pyr_tiles3d_candidate(lo[0], hi[0], lo[2], hi[2], lo[1], hi[1], 1, more, &in, &u);
        }
        pyr_tiles3d_t w;
        if (pyr_tiles3d_plan(lo, hi, &fy, &w)) CHECK(w.stream_y == any_y, "only y: streams y %d where a layout of y %s", w.stream_y,
                                                      any_y ? "exists" : "does not");
    }
    {
        /* the header's window: 3D float, three steps, the 1022^2 in-plane nodes of a 1024^2 grid and 28
         * planes of result, 132 SMs, one block of ~1000 threads per SM (shared planes: 4608 bytes a row) */
        occ_t occ = {4608, 0, 1};
        pyr_tiles3d_in_t in = {3, 4, 1, 1024, 1024, (233472 - 1024) / 4608 - 2, 132, 1, -1, per_sm_model, &occ};
        const int lo[3] = {1, 1, 6}, hi[3] = {1023, 1023, 34};
        pyr_tiles3d_t t;
        memset(&t, 0, sizeof t);
        CHECK(pyr_tiles3d_plan(lo, hi, &in, &t), "window: no layout");
        const double before = old_cost(lo, hi, &in);
        CHECK(t.stream_y && t.ty == 1 && t.NTY == 34 && pyr_seg_split_blocks(&t.sp, t.tx * t.ty) <= 132,
              "window: stream_y %d, %d x %d tiles of %d rows, %lld blocks", t.stream_y, t.tx, t.ty, t.NTY,
              pyr_seg_split_blocks(&t.sp, t.tx * t.ty));
        CHECK(before == 3 * 34 && t.cost < 0.85 * before, "window: cost %g against %g streaming z", t.cost, before);
        printf("window 1022^2 x 28: streaming y %d x %d tiles (%d x %d threads), cost %g; streaming z %g\n", t.tx, t.ty, t.BX, t.NTY,
               t.cost, before);
    }
    return check_report();
}
