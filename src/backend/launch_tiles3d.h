/* How a 3D fused launch of the CUDA stencil kernels (backend/cuda/
 * stencil_fused.cuh) lays out its blocks: which axis its blocks stream, the
 * tiles across the other two, and the segments of the streamed axis
 * (launch_segments.h).
 *
 * A block owns a tile of BX threads across x (V columns each) by NTY rows of
 * threads, and streams planes of that tile, computing K steps with K halo
 * nodes recomputed on each side of the tile and 2K halo planes streamed per
 * segment.  x is always across (rows are contiguous); the block's rows and
 * streamed planes are y and z, or - for a box thin in z over a wide plane,
 * such as a skewed piece's window of ~30 planes out of core - z and y.
 * Streaming z, that window's 1022^2 in-plane nodes made 342 tiles of 34
 * planes (28 of them written), 2.6 waves run as 3 of 132 blocks; streaming y,
 * the window's planes are one tile's rows, 10 tiles, and its 1022 rows split
 * into segments fill one wave: 85 planes streamed per block against 102.
 * Measured, the windows' compute fell by less than that count says: a block
 * streaming y reads each of its rows from another plane
 * (docs/performance.md#skewed-pieces-out-of-core).
 *
 * The choice is the candidate with the lowest cost in the split launch's
 * measure (waves x planes each block streams: pyr_segment_split's), over
 * both orientations and a few tilings of x (the fewest tiles, and up to
 * three more, narrower, which leave room for more rows), where it is lower
 * than the first candidate's by a margin (PYR_TILES3D_MARGIN).  A block's time per
 * streamed plane is taken as the same for every candidate: they are blocks
 * of 800 to 1024 threads, one per SM, whose pace is set by latency, not by
 * issue (blocks of 930 threads ran as long as blocks of 1023).  The
 * first candidate is streaming z on the fewest tiles, what every launch did
 * before.  A box of a few hundred nodes across takes tiles only
 * as wide and as tall as an even share needs (381 columns: 4 tiles of 96
 * results, 26 threads across, not 4 of 120 with a fourth mostly idle), and
 * narrower blocks take more rows (less of the halo recomputed).  Plain C, so
 * that host tests check it (tests/unit/test_launch_tiles3d.c). */
#ifndef PYR_BACKEND_LAUNCH_TILES3D_H
#define PYR_BACKEND_LAUNCH_TILES3D_H

#include "backend/launch_segments.h"

/* What a launch's planning is given. */
typedef struct {
    int k;           /* steps */
    int v;           /* columns per thread */
    int r;           /* rows per row of threads */
    int max_threads; /* threads a block may have */
    int want_threads; /* threads a block should have at most (the variant's rows; a block takes at least 2k + 1 rows) */
    int rows_smem;   /* rows the shared memory holds (whatever the block's width) */
    int per_wave_sm; /* multiprocessors */
    int split;       /* 1: the last wave split (pyr_segment_split); 0: whole segments (pyr_segment_choose) */
    int only;        /* -1: the cheaper orientation; 0: stream z; 1: stream y where a layout can be made, else z
                      * (the tests' hook pyr_cuda_force_stream, which runs every shape through both kernels) */
    /* blocks of bx x rows / r threads resident per multiprocessor for a launch streaming y (stream_y) or z
     * (< 1: the launch cannot be made) */
    int (*per_sm)(void *ctx, int stream_y, int bx, int rows);
    void *ctx;
} pyr_tiles3d_in_t;

/* The layout chosen. */
typedef struct {
    int stream_y;         /* 1: the blocks stream y; their rows are z */
    int ox0, OWx, BX, tx; /* x: tx tiles of OWx results from column ox0, BX threads across */
    int oy0, OWy, NTY, ty; /* the rows' axis (y, or z when stream_y): ty tiles of OWy results from oy0, NTY rows of threads */
    int lo, hi;           /* the streamed axis's nodes of the last box */
    int per_sm;           /* blocks per multiprocessor */
    pyr_seg_split_t sp;   /* the streamed axis's segments */
    double cost;          /* waves x planes (the split's measure) */
} pyr_tiles3d_t;

/* The candidates beside the fewest x tiles: that many more, narrower tiles. */
#define PYR_TILES3D_MORE_X 3

static inline int pyr_t3_cdiv(int a, int b) { return (a + b - 1) / b; }
static inline int pyr_t3_fdiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* One candidate: x in [lo0, hi0) cut into the fewest tiles plus `more`, the rows' axis [lo1, hi1), the
 * streamed axis [lo2, hi2).  Returns 0 when it cannot be made (too few rows fit, or per_sm < 1). */
static inline int pyr_tiles3d_candidate(int lo0, int hi0, int lo1, int hi1, int lo2, int hi2, int stream_y, int more,
                                        const pyr_tiles3d_in_t *in, pyr_tiles3d_t *t)
{
    const int k = in->k, v = in->v, r = in->r;
    t->stream_y = stream_y;
    t->ox0 = pyr_t3_fdiv(lo0 - k, v) * v + k;
    const int span_x = hi0 - t->ox0, span_y = hi1 - lo1;
    const int OWx_max = (32 * v - 2 * k) / v * v;
    t->tx = pyr_t3_cdiv(span_x, OWx_max) + more;
    t->OWx = pyr_t3_cdiv(pyr_t3_cdiv(span_x, t->tx), v) * v;
    if (t->OWx < v) return 0;
    if (more > 0 && (t->tx - 1) * t->OWx >= span_x) return 0; /* the same tiling as one tile fewer */
    t->BX = pyr_t3_cdiv(t->OWx + 2 * k, v);
    /* rows of a block (r per row of threads): at least 2k + 1 (a block of fewer computes nothing) */
    const int least = pyr_t3_cdiv(2 * k + 1, r) * r;
    int rows_max = (in->want_threads < in->max_threads ? in->want_threads : in->max_threads) / t->BX * r;
    if (rows_max < least) rows_max = least;
    if (rows_max > in->rows_smem / r * r) rows_max = in->rows_smem / r * r;
    if (rows_max < least || t->BX * (rows_max / r) > in->max_threads) return 0;
    t->oy0 = lo1;
    t->ty = pyr_t3_cdiv(span_y, rows_max - 2 * k);
    t->OWy = pyr_t3_cdiv(span_y, t->ty);
    t->NTY = pyr_t3_cdiv(t->OWy + 2 * k, r);
    t->per_sm = in->per_sm(in->ctx, stream_y, t->BX, t->NTY * r);
    if (t->per_sm < 1) return 0;
    t->lo = lo2;
    t->hi = hi2;
    const int tiles = t->tx * t->ty, extent = hi2 - lo2, per_wave = t->per_sm * in->per_wave_sm;
    if (in->split) pyr_segment_split(extent, tiles, per_wave, k, &t->sp, &t->cost);
    else pyr_seg_split_whole(extent, tiles, pyr_segment_choose(extent, tiles, 0, 1.0, per_wave, k, NULL, &t->cost), &t->sp);
    return 1;
}

/* Another layout replaces the first candidate (streaming z on the fewest tiles) only when its cost is
 * lower by more than this share: the measure does not resolve a percent (a tiling priced a fraction of a
 * percent cheaper has run slower, ones priced a few percent cheaper and more ran faster). */
#define PYR_TILES3D_MARGIN 0.02

/* The cheapest candidate streaming z (o = 0) or y (o = 1), o in [o0, o1]; *first and *have_first: the first
 * candidate (z on the fewest tiles) where it is among them and can be made.  Returns 0 when none can. */
static inline int pyr_tiles3d_cheapest(const int lo[3], const int hi[3], const pyr_tiles3d_in_t *in, int o0, int o1,
                                       pyr_tiles3d_t *out, pyr_tiles3d_t *first, int *have_first)
{
    int found = 0;
    for (int o = o0; o <= o1; o++)
        for (int more = 0; more <= PYR_TILES3D_MORE_X; more++) {
            pyr_tiles3d_t t;
            const int ok = o == 0 ? pyr_tiles3d_candidate(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], 0, more, in, &t)
                                  : pyr_tiles3d_candidate(lo[0], hi[0], lo[2], hi[2], lo[1], hi[1], 1, more, in, &t);
            if (!ok) continue;
            if (o == 0 && more == 0) {
                *first = t;
                *have_first = 1;
            }
            if (!found || t.cost < out->cost) {
                *out = t;
                found = 1;
            }
        }
    return found;
}

/* The layout of a launch whose last step's box is [lo, hi) (non-empty): the cheapest candidate, or the
 * first where none is cheaper by the margin (in->only restricts the orientation: y takes the cheapest of
 * its own, z where none can be made).  Returns 0 when none can be made. */
static inline int pyr_tiles3d_plan(const int lo[3], const int hi[3], const pyr_tiles3d_in_t *in, pyr_tiles3d_t *out)
{
    pyr_tiles3d_t first;
    int have_first = 0;
    out->cost = 0;
    if (in->only == 1 && pyr_tiles3d_cheapest(lo, hi, in, 1, 1, out, &first, &have_first)) return 1;
    if (!pyr_tiles3d_cheapest(lo, hi, in, 0, in->only >= 0 ? 0 : 1, out, &first, &have_first)) return 0;
    if (have_first && !(out->cost < first.cost * (1.0 - PYR_TILES3D_MARGIN))) *out = first;
    return 1;
}

#endif
