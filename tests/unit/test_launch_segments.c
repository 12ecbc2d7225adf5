/* How the CUDA stencil kernels cut a launch's streamed axis into segments
 * (backend/launch_segments.h), checked on the host: over random extents,
 * tile counts, edge tiles, edge costs, blocks per wave and depths, the choice
 * is a minimum of waves x (segment + 2K) over every segment count (by brute
 * force here), the edge tiles' segments end with the others' ((seg_edge +
 * 2K) x cost <= seg + 2K, at most seg, at least 1) and fit a launch's grid,
 * and without edge tiles seg_edge = seg; the edge tiles of in-core and
 * shrinking (pyramid) boxes over the tilings the 2D launch makes are those at
 * the two ends, at least the first and the last; and the cases the notes and
 * test_cuda_small name.  The 3D launches' split last wave (pyr_segment_split):
 * its cost is the brute-force least of its formula and never above the
 * unsplit choice's, its blocks place every plane of every tile exactly once,
 * its last wave fits in one, and the window case its comment names. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/launch_segments.h"
#include "check.h"

static uint64_t rng_state = 88172645463325252ull;
static int rnd(int lo, int hi) /* uniform in [lo, hi] */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (int)(rng_state % (uint64_t)(hi - lo + 1));
}

static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* waves x (seg + 2k) of segments seg / seg_edge; -1 when the edge tiles' count exceeds a launch's grid */
static double cost_of(int extent, int tiles, int edge, int per_wave, int k, int seg, int seg_edge)
{
    const int n = cdiv(extent, seg), ne = cdiv(extent, seg_edge);
    if (ne > PYR_SEGMENTS_MAX) return -1;
    const long long blocks = (long long)(tiles - edge) * n + (long long)edge * (edge ? ne : 0);
    return (double)((blocks + per_wave - 1) / per_wave) * (double)(seg + 2 * k);
}

/* The brute-force minimum over every segment count up to 4096. */
static double best_cost(int extent, int tiles, int edge, double ecost, int per_wave, int k)
{
    double best = -1;
    for (int n = 1; n <= extent && n <= 4096; n++) {
        const int seg = cdiv(extent, n);
        int se = seg;
        if (edge) {
            se = (int)((seg + 2 * k) / ecost) - 2 * k;
            se = se < 1 ? 1 : se > seg ? seg : se;
        }
        const double c = cost_of(extent, tiles, edge, per_wave, k, seg, se);
        if (c >= 0 && (best < 0 || c < best)) best = c;
    }
    return best;
}

static void check_choice(int extent, int tiles, int edge, double ecost, int per_wave, int k)
{
    int se = -7;
    double c = -7;
    const int seg = pyr_segment_choose(extent, tiles, edge, ecost, per_wave, k, &se, &c);
    const char *fmt = "extent %d tiles %d edge %d cost %.2f per wave %d k %d: seg %d seg_edge %d: %s";
    CHECK(seg >= 1 && seg <= extent && cdiv(extent, seg) <= 4096, fmt, extent, tiles, edge, ecost, per_wave, k, seg, se, "seg out of range");
    CHECK(se >= 1 && se <= seg && cdiv(extent, se) <= PYR_SEGMENTS_MAX, fmt, extent, tiles, edge, ecost, per_wave, k, seg, se,
          "seg_edge out of range");
    if (!edge) CHECK(se == seg, fmt, extent, tiles, edge, ecost, per_wave, k, seg, se, "seg_edge != seg without edge tiles");
    if (edge && se > 1)
        CHECK((se + 2 * k) * ecost <= seg + 2 * k + 1e-9, fmt, extent, tiles, edge, ecost, per_wave, k, seg, se,
              "the edge tiles' segments end after the others'");
    const double mine = cost_of(extent, tiles, edge, per_wave, k, seg, se), best = best_cost(extent, tiles, edge, ecost, per_wave, k);
    CHECK(mine >= 0 && mine == c && mine == best, "extent %d tiles %d edge %d per wave %d k %d: cost %g (reported %g), least %g", extent,
          tiles, edge, per_wave, k, mine, c, best);
}

/* The tiling launch2d makes for the columns [lo, hi) of the last step's box (V values per thread, at most
 * nt threads), and whether each tile is an edge tile, tested against boxes x0/x1 directly. */
static int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static void check_edges(int64_t pitch, const int *x0, const int *x1, int k, int v, int nt, const char *what)
{
    const int lo = x0[k - 1], hi = x1[k - 1];
    const int ox0 = floor_div(lo - k, v) * v + k, span = hi - ox0;
    const int owmax = (nt * v - 2 * k) / v * v;
    const int share = cdiv(span, cdiv(span, owmax));
    int NT = cdiv(cdiv(share + 2 * k, v), 32) * 32;
    if (NT > nt) NT = nt;
    const int ow = (NT * v - 2 * k) / v * v, tiles = cdiv(span, ow);
    const int edge = pyr_edge_tiles(pitch, x0, x1, k, ox0, ow, NT * v, tiles);
    /* each tile's flag from the definition: its columns [ox0 + i*ow - k, + NT*v) inside the row and every box */
    int count = 0, first_inner = -1, last_inner = -1, gaps = 0;
    for (int i = 0; i < tiles; i++) {
        const int b0 = ox0 + i * ow - k, b1 = b0 + NT * v;
        int inner = b0 >= 0 && b1 <= pitch;
        for (int l = 0; l < k; l++)
            if (b0 < x0[l] || b1 > x1[l]) inner = 0;
        if (!inner) count++;
        else {
            if (last_inner >= 0 && last_inner != i - 1) gaps++;
            if (first_inner < 0) first_inner = i;
            last_inner = i;
        }
    }
    CHECK(edge == count, "%s: pitch %lld k %d v %d nt %d: %d edge tiles, %d by their definition", what, (long long)pitch, k, v, nt, edge,
          count);
    CHECK(gaps == 0, "%s: pitch %lld k %d: the inner tiles are not one run", what, (long long)pitch, k);
    CHECK(first_inner != 0 && (last_inner < 0 || last_inner < tiles - 1), "%s: pitch %lld k %d v %d: tiles %d, inner %d..%d: an end tile inner",
          what, (long long)pitch, k, v, tiles, first_inner, last_inner);
}


/* (waves - 1) x (seg + 2k) + (ceil(seg / m) + 2k) of n segments, m as pyr_segment_split takes it */
static double split_cost(int extent, int tiles, int per_wave, int k, int n)
{
    const int seg = cdiv(extent, n), nseg = cdiv(extent, seg);
    const long long pairs = (long long)tiles * nseg, waves = (pairs + per_wave - 1) / per_wave, left = pairs - (waves - 1) * per_wave;
    long long m = per_wave / left;
    m = m < 1 ? 1 : m > seg ? seg : m;
    return (double)(waves - 1) * (seg + 2 * k) + (double)((seg + m - 1) / m + 2 * k);
}

static unsigned char cover[1 << 20];

/* Blocks of layout sp that misplace planes [lo, lo + extent) of `tiles` tiles: outside them, empty where
 * `empty_ok` is 0, or not covering every (tile, plane) exactly once (0: all placed once). */
static int misplaced(const pyr_seg_split_t *sp, int tiles, int extent, int empty_ok)
{
    const int lo = 5, hi = lo + extent;
    memset(cover, 0, (size_t)tiles * (size_t)extent);
    int bad = 0;
    for (long long b = 0; b < pyr_seg_split_blocks(sp, tiles); b++) {
        int tile, z0, z1;
        pyr_seg_split_place(sp, tiles, b, lo, hi, &tile, &z0, &z1);
        if (tile < 0 || tile >= tiles || z0 < lo || z1 > hi || z0 > z1 || (!empty_ok && z0 == z1)) {
            bad++;
            continue;
        }
        for (int z = z0; z < z1; z++) cover[(size_t)tile * extent + (size_t)(z - lo)]++;
    }
    for (long long i = 0; i < (long long)tiles * extent && !bad; i++)
        if (cover[i] != 1) bad++;
    return bad;
}

static void check_split(int extent, int tiles, int per_wave, int k)
{
    pyr_seg_split_t sp;
    double c = -1;
    pyr_segment_split(extent, tiles, per_wave, k, &sp, &c);
    const char *fmt = "split: extent %d tiles %d per wave %d k %d: seg %d nseg %d full %lld split %d: %s";
    CHECK(sp.seg >= 1 && sp.seg <= extent && sp.nseg == cdiv(extent, sp.seg) && sp.nseg <= 4096 && sp.split >= 1 && sp.split <= sp.seg,
          fmt, extent, tiles, per_wave, k, sp.seg, sp.nseg, sp.full, sp.split, "out of range");
    const long long pairs = (long long)tiles * sp.nseg, blocks = pyr_seg_split_blocks(&sp, tiles);
    if (sp.split > 1)
        CHECK(sp.full % per_wave == 0 && sp.full < pairs && blocks - sp.full <= per_wave, fmt, extent, tiles, per_wave, k, sp.seg, sp.nseg,
              sp.full, sp.split, "the split pairs are not one last wave");
    else CHECK(sp.full == pairs, fmt, extent, tiles, per_wave, k, sp.seg, sp.nseg, sp.full, sp.split, "unsplit, yet not every pair whole");
    double least = -1;
    for (int n = 1; n <= extent && n <= 4096; n++) {
        const double x = split_cost(extent, tiles, per_wave, k, n);
        if (least < 0 || x < least) least = x;
    }
    double unsplit = -1;
    pyr_segment_choose(extent, tiles, 0, 1.0, per_wave, k, NULL, &unsplit);
    CHECK(c == least && c <= unsplit, "split: extent %d tiles %d per wave %d k %d: cost %g, least %g, unsplit %g", extent, tiles, per_wave,
          k, c, least, unsplit);
    /* every (tile, plane) exactly once */
    if ((long long)tiles * extent > (long long)sizeof cover) return;
    CHECK(!misplaced(&sp, tiles, extent, 1), fmt, extent, tiles, per_wave, k, sp.seg, sp.nseg, sp.full, sp.split,
          "blocks do not place every plane once");
    /* the unsplit layout of pyr_segment_choose's segments places them once too */
    pyr_seg_split_t w;
    pyr_seg_split_whole(extent, tiles, pyr_segment_choose(extent, tiles, 0, 1.0, per_wave, k, NULL, NULL), &w);
    CHECK(!misplaced(&w, tiles, extent, 0) && w.split == 1 && w.full == pyr_seg_split_blocks(&w, tiles), fmt, extent, tiles, per_wave, k,
          w.seg, w.nseg, w.full, w.split,
          "the unsplit layout does not place every plane once");
}

int main(void)
{
    /* random choices, small extents (every count tried) and large ones */
    for (int t = 0; t < 3000; t++) {
        const int extent = t % 3 ? rnd(1, 600) : rnd(600, 70000);
        const int tiles = rnd(1, t % 5 ? 40 : 400);
        const int edge = rnd(0, 2) ? (tiles < 2 ? tiles : rnd(0, 2 < tiles ? 2 : tiles)) : rnd(0, tiles);
        const double ecost = rnd(0, 2) == 0 ? 1.0 : rnd(0, 1) ? pyr_edge_row_cost : pyr_edge_row_cost_walls;
        const int per_wave = rnd(1, 1200), k = 2 * rnd(0, 7) + 1;
        check_choice(extent, tiles, edge, ecost, per_wave, k);
    }
    /* the grid's last rows: one segment of one row each */
    check_choice(1, 3, 2, pyr_edge_row_cost, 528, 15);
    check_choice(70000, 1, 1, pyr_edge_row_cost, 1, 1);

    /* the edge tiles of in-core boxes (every step's box the grid's interior) and of a pyramid's shrinking boxes */
    for (int t = 0; t < 2000; t++) {
        const int k = 2 * rnd(0, 7) + 1, v = rnd(0, 1) ? 2 : 4, nt = rnd(0, 1) ? 128 : 256;
        const int nx = rnd(3, t % 4 ? 3000 : 40000);
        const int64_t pitch = (nx + 31) / 32 * 32;
        int x0[15], x1[15];
        for (int l = 0; l < k; l++) x0[l] = 1, x1[l] = nx - 1;
        check_edges(pitch, x0, x1, k, v, nt, "in core");
        /* a piece inside the grid: the box shrinks by one a step on both sides */
        const int a = rnd(k + 1, 200), w = rnd(2 * k + 2, 4000);
        for (int l = 0; l < k; l++) x0[l] = a + l, x1[l] = a + w - l;
        check_edges(a + w + 300, x0, x1, k, v, nt, "shrinking");
    }

    /* a measured case (docs/performance.md#heat-2d-temporal-blocking): 2D double, seven steps, 4096 x 16384 on an H200 (17 tiles,
     * four blocks of 128 threads per SM): without the edge tiles 31 segments of 529 rows, one wave of 527
     * blocks; with them, still one wave, the edge tiles' segments shorter */
    {
        int se = 0;
        const int seg0 = pyr_segment_choose(16382, 17, 0, 1.0, 4 * 132, 7, &se, NULL);
        CHECK(seg0 == 529 && se == 529, "4096 x 16384 double without edge tiles: seg %d", seg0);
        const int seg = pyr_segment_choose(16382, 17, 2, pyr_edge_row_cost_walls, 4 * 132, 7, &se, NULL);
        const long long blocks = 15LL * cdiv(16382, seg) + 2LL * cdiv(16382, se);
        CHECK(se < seg && blocks <= 4 * 132, "4096 x 16384 double: seg %d, edge %d, %lld blocks", seg, se, blocks);
        /* test_cuda_small's grid: 1100 x 1200 double, seven steps, five tiles, two at the walls */
        const int s2 = pyr_segment_choose(1198, 5, 2, pyr_edge_row_cost_walls, 4 * 132, 7, &se, NULL);
        CHECK(s2 == 13 && se == 11, "1100 x 1200 double: seg %d, edge %d (test_cuda_small says 13 and 11)", s2, se);
    }
    /* the split last wave of 3D launches */
    for (int t = 0; t < 3000; t++) {
        const int extent = t % 3 ? rnd(1, 300) : rnd(300, 5000);
        const int tiles = rnd(1, t % 4 ? 300 : 3000), per_wave = rnd(1, 800), k = 2 * rnd(0, 2) + 1;
        check_split(extent, tiles, per_wave, k);
    }
    {
        /* the comment's window: 41 planes, 1600 tiles, 264 blocks per wave, three steps: 6 waves of 47 planes and one of 9 */
        pyr_seg_split_t sp;
        double c = 0;
        pyr_segment_split(41, 1600, 264, 3, &sp, &c);
        CHECK(c == 6 * 47 + 9 && sp.seg == 41 && sp.full == 1584 && sp.split == 16, "41-plane window: cost %g seg %d full %lld split %d", c,
              sp.seg, sp.full, sp.split);
        double unsplit = 0;
        pyr_segment_choose(41, 1600, 0, 1.0, 264, 3, NULL, &unsplit);
        CHECK(unsplit == 7 * 47, "41-plane window unsplit: cost %g", unsplit);
    }
    return check_report();
}
