/* How the CUDA stencil kernels (backend/cuda/stencil_fused.cuh) cut a fused
 * launch's streamed axis (rows in 2D, planes in 3D) into segments, one block
 * per tile and segment: as many segments as make the fewest waves of
 * (segment + 2K halo rows), and in 2D shorter ones for the edge tiles, whose
 * rows cost more, so that they end with the others.  Plain C, so that host
 * tests check it (tests/test_launch_segments.c). */
#ifndef PYR_BACKEND_LAUNCH_SEGMENTS_H
#define PYR_BACKEND_LAUNCH_SEGMENTS_H

#include <stdint.h>

/* A 2D edge tile (its columns reach outside some step's box) runs its outer
 * warp with a select per node, and its warps meet at a barrier every row, so
 * the whole block goes at that warp's pace.  Per row, against an inner tile
 * (H200, kernels alone with every warp in one mode, double seven steps and
 * float eleven, 4096 and 32768 wide; bench/NOTES-cuda.md v16): 1.20-1.25
 * with a column test per node and step (boxes whose columns differ by step:
 * a piece's sides inside the grid), 1.05-1.08 with each column's test made
 * once (every step's box the same columns: the grid's walls).  In a single
 * wave the edge tiles' blocks set the launch's end (2D double 4096 x 16384:
 * 889 Gcell/s against 1023 with no tile tested), so they take shorter
 * segments (pyr_segment_choose). */
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

#endif
