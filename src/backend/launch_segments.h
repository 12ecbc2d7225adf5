/* How the CUDA stencil kernels (backend/cuda/stencil_fused.cuh) cut a fused
 * launch's streamed axis (rows in 2D, planes in 3D) into segments, one block
 * per tile and segment: as many segments as make the fewest waves of
 * (segment + 2K halo rows), and in 2D shorter ones for the edge tiles, whose
 * rows cost more, so that they end with the others; in 3D the last, partial
 * wave's segments split over the blocks the wave has room for
 * (pyr_segment_split).  Plain C, so that host tests check it
 * (tests/unit/test_launch_segments.c). */
#ifndef PYR_BACKEND_LAUNCH_SEGMENTS_H
#define PYR_BACKEND_LAUNCH_SEGMENTS_H

#include <stdint.h>

/* pyr_seg_split_place runs on the GPU too (the 3D kernels place their blocks with it) */
#ifdef __CUDACC__
#define PYR_SEG_HD __host__ __device__
#else
#define PYR_SEG_HD
#endif

/* A 2D edge tile (its columns reach outside some step's box) runs its outer
 * warp with a select per node, and its warps meet at a barrier every row, so
 * the whole block goes at that warp's pace.  Per row, against an inner tile
 * (kernels alone with every warp in one mode): about 1.2 with a column test
 * per node and step (boxes whose columns differ by step: a piece's sides
 * inside the grid), about 1.06 with each column's test made once (every
 * step's box the same columns: the grid's walls).  In a single wave the edge
 * tiles' blocks set the launch's end, so they take shorter segments
 * (pyr_segment_choose; measured: docs/performance.md#heat-2d-temporal-blocking). */
static const double pyr_edge_row_cost = 1.2;
static const double pyr_edge_row_cost_walls = 1.06;

/* The largest grid dimension the segments of one tile may take (a launch's y in 2D, z in 3D). */
#define PYR_SEGMENTS_MAX 65535

/* The edge tiles of a 2D launch of k steps: tile i covers columns [ox0 + i*ow
 * - k, .. + width) of rows `pitch` wide, and is an inner tile when those lie
 * inside the row and inside every step's box [x0[l], x1[l]) (k_fused2d's
 * test). */
static inline int pyr_edge_tiles(int64_t pitch, const int *x0, const int *x1, int k, int ox0, int ow, int width, int tiles)
{
    int edge = 0;
    for (int i = 0; i < tiles; i++) {
        const int bx0 = ox0 + i * ow - k, bx1 = bx0 + width;
        int inner = bx0 >= 0 && (int64_t)bx1 <= pitch;
        for (int l = 0; l < k && inner; l++) inner = bx0 >= x0[l] && bx1 <= x1[l];
        edge += !inner;
    }
    return edge;
}

/* Segments along an axis of `extent` (>= 1) for `tiles` tiles of which `edge`
 * run their rows edge_cost (>= 1) times slower, with `per_wave` blocks
 * resident at once and k halo rows each side: the segment length seg of the
 * count n minimising waves x (seg + 2k), where the edge tiles take segments
 * of *seg_edge rows, (seg_edge + 2k) x edge_cost <= seg + 2k (at least 1, at
 * most seg), and as many more blocks.  Without edge tiles seg_edge = seg.
 * At most 4096 segments of seg, and PYR_SEGMENTS_MAX of seg_edge.  *cost (when
 * not NULL): the chosen waves x (seg + 2k). */
static inline int pyr_segment_choose(int extent, int tiles, int edge, double edge_cost, int per_wave, int k, int *seg_edge,
                                     double *cost)
{
    int best_seg = extent, best_edge = extent;
    double best = -1;
    const int max_n = extent < 4096 ? extent : 4096;
    for (int n = 1; n <= max_n; n++) {
        const int seg = (extent + n - 1) / n;
        if (n > 1 && (extent + n - 2) / (n - 1) == seg) continue; /* the same length as one segment fewer */
        int se = seg;
        if (edge > 0) {
            se = (int)((seg + 2 * k) / edge_cost) - 2 * k;
            if (se < 1) se = 1;
            if (se > seg) se = seg;
        }
        const int n_edge = (extent + se - 1) / se;
        if (n_edge > PYR_SEGMENTS_MAX) continue;
        const long long blocks = (long long)(tiles - edge) * n + (long long)edge * n_edge;
        const long long waves = (blocks + per_wave - 1) / per_wave;
        const double c = (double)waves * (double)(seg + 2 * k);
        if (best < 0 || c < best) {
            best = c;
            best_seg = seg;
            best_edge = se;
        }
    }
    if (seg_edge) *seg_edge = best_edge;
    if (cost) *cost = best;
    return best_seg;
}

/* A 3D launch's segments with its last wave split (pyr_segment_split): the
 * pairs (tile, segment) are taken segment by segment (all tiles' first
 * segments, then their second, ...), one block each for the first `full`
 * pairs (whole waves), and the rest, fewer than a wave, `split` blocks each,
 * every one taking an even share of the pair's planes: the last wave ends
 * after ceil(seg / split) + 2k planes, not seg + 2k.  A piece's window of 41
 * planes over 1600 tiles at 264 blocks per wave made 7 waves of 47 planes,
 * the seventh 16 blocks; split, 6 waves and one of 9 planes (0.88 of the
 * time).  In core the 3D kernels gained from it, the skewed windows neither
 * gained nor lost (measured: docs/performance.md#heat-3d-kernels). */
typedef struct {
    int seg;      /* planes per segment */
    int nseg;     /* segments per tile */
    long long full; /* pairs with one block each, in whole waves */
    int split;    /* blocks per remaining pair (1: none split) */
} pyr_seg_split_t;

/* Blocks a split launch makes. */
static inline long long pyr_seg_split_blocks(const pyr_seg_split_t *s, int tiles)
{
    return s->full + ((long long)tiles * s->nseg - s->full) * s->split;
}

/* The segments of `extent` planes (>= 1) for `tiles` tiles with `per_wave`
 * blocks resident at once and k halo planes each side, the last wave split
 * as above: the segment count minimising (waves - 1) x (seg + 2k) +
 * (ceil(seg / split) + 2k) (split = the blocks per wave over the pairs left
 * for the last wave, at most seg; 1 when the last wave is full, whose cost
 * is then waves x (seg + 2k): never more than pyr_segment_choose's).  At
 * most 4096 segments.  *cost (when not NULL): the chosen cost. */
static inline void pyr_segment_split(int extent, int tiles, int per_wave, int k, pyr_seg_split_t *out, double *cost)
{
    double best = -1;
    const int max_n = extent < 4096 ? extent : 4096;
    out->seg = extent;
    out->nseg = 1;
    out->full = 0;
    out->split = 1;
    for (int n = 1; n <= max_n; n++) {
        const int seg = (extent + n - 1) / n;
        if (n > 1 && (extent + n - 2) / (n - 1) == seg) continue; /* the same length as one segment fewer */
        const int nseg = (extent + seg - 1) / seg;
        const long long pairs = (long long)tiles * nseg, waves = (pairs + per_wave - 1) / per_wave;
        const long long full = (waves - 1) * per_wave, left = pairs - full;
        long long m = per_wave / left;
        if (m < 1) m = 1;
        if (m > seg) m = seg;
        const double c = (double)(waves - 1) * (double)(seg + 2 * k) + (double)((seg + m - 1) / m + 2 * k);
        if (best < 0 || c < best) {
            best = c;
            out->seg = seg;
            out->nseg = nseg;
            out->full = m > 1 ? full : pairs;
            out->split = (int)m;
        }
    }
    if (cost) *cost = best;
}

/* The same layout without a split: segments of seg planes (pyr_segment_choose's), one block per pair. */
static inline void pyr_seg_split_whole(int extent, int tiles, int seg, pyr_seg_split_t *out)
{
    out->seg = seg;
    out->nseg = (extent + seg - 1) / seg;
    out->full = (long long)tiles * out->nseg;
    out->split = 1;
}

/* Block b of a split launch: its pair's tile and segment, and the planes
 * [*z0, *z1) it takes of the segment's [lo + si * seg, ..) within [lo, hi)
 * (empty when a split pair has fewer planes than blocks). */
PYR_SEG_HD static inline void pyr_seg_split_place(const pyr_seg_split_t *s, int tiles, long long b, int lo, int hi, int *tile, int *z0, int *z1)
{
    long long i = b;
    int sub = 0, m = 1;
    if (b >= s->full) {
        m = s->split;
        i = s->full + (b - s->full) / m;
        sub = (int)((b - s->full) % m);
    }
    *tile = (int)(i % tiles);
    const int si = (int)(i / tiles);
    int a = lo + si * s->seg, e = a + s->seg < hi ? a + s->seg : hi;
    if (m > 1) {
        const int q = (e - a + m - 1) / m;
        const int a2 = a + sub * q;
        a = a2 < e ? a2 : e;
        e = a + q < e ? a + q : e;
    }
    *z0 = a;
    *z1 = e;
}

#endif
