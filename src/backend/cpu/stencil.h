/* The CPU kernels' common machinery, shared by every scheme whose sub-step
 * is one ping-pong stencil reading one node each way (heat, Poisson): a
 * sweep per layer, and several layers in one wavefront over the piece.  A
 * scheme gives the stencil on one row segment; every compute path goes
 * through it, so the order in which rows are computed changes no bit of
 * the result.
 *
 * Variants (pyr_options_t.kernel):
 *   auto             a compute call of several layers (2D, 3D) whose region does not fit the threads'
 *                    L2 caches runs as a wavefront of tiles, else layer by layer (the default)
 *   sweep            a sweep over the box per layer
 *   wave[:T,S,G]     the wavefront whatever the size, with tile width T, slab thickness S and layers per
 *                    sweep G (0 = from the L2 size)
 *
 * A scheme's file defines ROW functions
 *     static inline void NAME(const T *s, T *d, const T *f, int64_t n, int dims, const T *cf, int64_t pitch, int64_t plane)
 * (s and d point at the segment's first node in the layer read and the layer
 * written, f at the same node of the scheme's input field or NULL, cf at
 * the coefficients rounded to T) and instantiates PYR_CPU_KERNEL.  A scheme
 * whose rows depend on where they lie (Poisson's Neumann faces) defines ROWX
 * functions instead, ROW's arguments followed by the segment's first node
 *     int64_t x, int64_t y, int64_t z, const void *ext
 * (ext: the scheme's own table, handed through unchanged), and instantiates
 * PYR_CPU_KERNEL_X, whose PREFIX##_run_x takes ext; every path (sweep and
 * wavefront) then calls them, so the peeled rows take the fast paths too. */
#ifndef PYR_BACKEND_CPU_STENCIL_H
#define PYR_BACKEND_CPU_STENCIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall(): include this header first */
#endif

#include <limits.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "backend/cpu/cpu_internal.h"
#include "backend/kernels.h"
#include "core/error.h"

/* Variant modes and the wavefront's settings. */
enum { PYR_CPU_SWEEP = 0, PYR_CPU_AUTO = 1, PYR_CPU_WAVE = 2 };

typedef struct {
    int mode;
    int64_t tile, slab, group; /* 0 = from the L2 size */
    int64_t min_work;          /* least work worth a second thread */
} pyr_cpu_wave_t;

static inline int64_t pyr_cpu_rows_of(const pyr_box_t *b) { return b->hi[1] - b->lo[1]; }

/* One sub-step on `box`: reads `in` (and f), writes `out`.  Threads take
 * whole rows (or, for a single long row, chunks of it). */
#define PYR_CPU_DEFINE_STEP(NAME, ROW, T)                                                                      \
    static void NAME(const pyr_cpu_ctx_t *c, const pyr_piece_t *piece, const T *in, T *out, const T *fbase,   \
                     const pyr_box_t *box, int dims, const T *cf, const void *ext)                              \
    {                                                                                                          \
        const int64_t pitch = piece->pitch, plane = piece->pitch * pyr_cpu_rows_of(&piece->box);               \
        const int64_t ny = pyr_box_extent(box, 1), nz = pyr_box_extent(box, 2);                                \
        const int64_t w = pyr_box_extent(box, 0);                                                              \
        int64_t chunks = 1;                                                                                    \
        if (ny * nz < 4 * c->threads && w > 16384) chunks = 4 * c->threads;                                   \
        const int64_t items = ny * nz * chunks;                                                                \
        _Pragma("omp parallel for schedule(static) num_threads(c->threads) if (items * w > 8192)")            \
        for (int64_t it = 0; it < items; it++) {                                                               \
            int64_t row = it / chunks, ch = it % chunks;                                                       \
            int64_t y = box->lo[1] + row % ny, z = box->lo[2] + row / ny;                                      \
            int64_t x0 = box->lo[0] + w * ch / chunks, x1 = box->lo[0] + w * (ch + 1) / chunks;                \
            const int64_t base = pyr_piece_index(piece, x0, y, z);                                             \
            ROW(in + base, out + base, fbase ? fbase + base : NULL, x1 - x0, dims, cf, pitch, plane, x0, y, z, ext); \
        }                                                                                                      \
    }

/* Several layers in one sweep over the piece (temporal blocking inside it),
 * so that the rows a layer reads were written by the layer before a moment
 * ago and are still in the core's L2, instead of one sweep of the whole box
 * per layer from L3 or memory.
 *
 * Axes: a = the slowest axis of the problem (z in 3D, y in 2D), along which
 * the layers advance as a wavefront, and b = the next one (y in 3D, x in 2D),
 * cut into tiles.  Layer l (0-based) is computed
 *   - in slabs of `slab` planes along a, from A0 = the lowest lo[a] of the
 *     boxes: in step S, layer l computes slab S - l;
 *   - in tiles skewed by one node per layer along b, from B0 = the lowest
 *     lo[b]: in tile T, layer l computes [B0 + T*tile - l, B0 + (T+1)*tile - l);
 * each intersected with boxes[l], so every layer computes exactly its box,
 * once.  One thread computes a whole tile: step after step, and in a step
 * the layers in increasing order.
 *
 * Why this gives the layer-by-layer result: layer l reads buffer A = layer
 * (cur + l) % 2 and writes B, the other one.  Where layer l reads A (one node
 * either side of a node it computes, along every axis) A must hold the value
 * of the latest earlier layer that wrote it (layers l - 1, l - 3, ... write A)
 * and no later writer (l + 1, l + 3, ...) may have come yet; and layer l's
 * write of a node of B must come after layer l - 1 read that node's old value
 * and before layer l + 1 reads the new one.  So of two operations of layers
 * j < m on nodes at most one apart along every axis, j's must come first.
 * With T the tile of an operation and S its step:
 *   b' >= b - 1 and m >= j + 1 give b' + m >= b + j, so T_m >= T_j;
 *   the slab of a' >= a - 1 is at most one lower, so S_m >= S_j - 1 + 1 = S_j.
 * In the same tile and step, j's operation comes first (increasing layers).
 * Across tiles, tile T starts step S only once tile T - 1 has finished step S
 * (its progress counter, release / acquire); tile T - 1 started step S only
 * after tile T - 2 had finished it, and so on, so every earlier tile has
 * finished step S, which is all the order needs (progress_wait/_set).  No thread waits for a later
 * tile, so there is no deadlock.
 *
 * Threads: thread k computes tiles k, k + nth, ...  A thread works in its own
 * tile, in its own L2; the nodes two neighbouring tiles share are read by the
 * second soon after the first wrote them. */

/* A tile's progress: the steps it has finished.  Threads spin briefly on the
 * counter of the tile before theirs, then sleep on it (a futex on Linux,
 * short naps elsewhere), so that a thread whose neighbour lost its core does
 * not burn the core the neighbour needs.  One counter per cache line: the
 * counters of neighbouring tiles are written by different threads. */
typedef struct {
    _Atomic int done;
    _Atomic int sleeping; /* its one waiter is in its sleeping phase (set and cleared by the waiter) */
    char pad[64 - 2 * sizeof(int)];
} progress_t;

static inline void pyr_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Until p->done >= v (acquire). */
static inline void progress_wait(progress_t *p, int v)
{
    for (int i = 0; i < 1000; i++) {
        if (atomic_load_explicit(&p->done, memory_order_acquire) >= v) return;
        pyr_cpu_relax();
    }
    /* Sequentially consistent with progress_set: if the load of done below
     * misses a new value, the setter's load of sleeping comes after our store
     * of 1 and wakes us (the futex returns at once if done has changed since
     * our load).  Only the waiter clears sleeping, when it leaves: a setter
     * that cleared it could let the waiter sleep through the next setting. */
    atomic_store(&p->sleeping, 1);
    for (;;) {
        int d = atomic_load(&p->done);
        if (d >= v) break;
#if defined(__linux__)
        syscall(SYS_futex, (int *)&p->done, FUTEX_WAIT_PRIVATE, d, NULL, NULL, 0);
#else
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
#endif
    }
    atomic_store(&p->sleeping, 0);
}

static inline void progress_set(progress_t *p, int v)
{
    atomic_store(&p->done, v);
#if defined(__linux__)
    if (atomic_load(&p->sleeping)) syscall(SYS_futex, (int *)&p->done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
#endif
}

#define PYR_CPU_DEFINE_WAVE(NAME, ROW, T)                                                                      \
    static int NAME(const pyr_cpu_ctx_t *c, const pyr_cpu_wave_t *wv, const pyr_piece_t *piece, const T *fbase, \
                    int dims, const T *cf, const pyr_box_t *boxes, int nlayers, int64_t tile, int64_t slab,     \
                    const void *ext)                                                                           \
    {                                                                                                          \
        const int a = dims - 1, b = dims - 2;                                                                  \
        const int64_t pitch = piece->pitch, plane = piece->pitch * pyr_cpu_rows_of(&piece->box);               \
        const pyr_box_t hull = pyr_box_hull(boxes, nlayers);                                                   \
        const int64_t a0 = hull.lo[a], a1 = hull.hi[a], b0 = hull.lo[b], b1 = hull.hi[b];                      \
        int64_t work = 0;                                                                                      \
        for (int l = 0; l < nlayers; l++) work += pyr_box_volume(&boxes[l]);                                   \
        if (work == 0) return 1;                                                                               \
        if (tile < 1) tile = 1;                                                                                \
        if (slab < 1) slab = 1;                                                                                \
        const int64_t tiles = (b1 - b0 + nlayers - 1 + tile - 1) / tile;                                       \
        const int64_t steps = (a1 - a0 + slab - 1) / slab + (int64_t)(nlayers - 1);                            \
        int nth = c->threads;                                                                                  \
        if (nth > tiles) nth = (int)tiles;                                                                     \
        if (work < wv->min_work) nth = 1;                                                                      \
        if (steps >= INT_MAX) return 0;                                                                        \
        progress_t *done = NULL;                                                                               \
        if (posix_memalign((void **)&done, 64, (size_t)tiles * sizeof *done)) return 0;                        \
        for (int64_t t = 0; t < tiles; t++) atomic_init(&done[t].done, 0), atomic_init(&done[t].sleeping, 0);  \
        const int cur = piece->cur;                                                                            \
        _Pragma("omp parallel num_threads(nth)")                                                               \
        {                                                                                                      \
            const int n_th = omp_get_num_threads(), tid = omp_get_thread_num();                                \
            for (int64_t t = tid; t < tiles; t += n_th) {                                                      \
                for (int64_t s = 0; s < steps; s++) {                                                          \
                    if (t > 0) progress_wait(&done[t - 1], (int)s + 1);                                        \
                    for (int l = 0; l < nlayers; l++) {                                                        \
                        const pyr_box_t *bx = &boxes[l];                                                       \
                        const int64_t j = s - (int64_t)l;                                                      \
                        int64_t za = a0 + j * slab, zb = za + slab;                                            \
                        int64_t ya = b0 + t * tile - l, yb = ya + tile;                                        \
                        if (za < bx->lo[a]) za = bx->lo[a];                                                    \
                        if (zb > bx->hi[a]) zb = bx->hi[a];                                                    \
                        if (ya < bx->lo[b]) ya = bx->lo[b];                                                    \
                        if (yb > bx->hi[b]) yb = bx->hi[b];                                                    \
                        if (za >= zb || ya >= yb || pyr_box_empty(bx)) continue;                               \
                        const T *in = piece->buf[0][(cur + l) & 1];                                            \
                        T *out = piece->buf[0][(cur + l + 1) & 1];                                             \
                        for (int64_t z = za; z < zb; z++) {                                                    \
                            if (dims == 3) {                                                                   \
                                const int64_t w = bx->hi[0] - bx->lo[0];                                       \
                                for (int64_t y = ya; y < yb; y++) {                                            \
                                    const int64_t at = pyr_piece_index(piece, bx->lo[0], y, z);                \
                                    ROW(in + at, out + at, fbase ? fbase + at : NULL, w, 3, cf, pitch, plane,  \
                                        bx->lo[0], y, z, ext);                                                 \
                                }                                                                              \
                            } else {                                                                           \
                                const int64_t at = pyr_piece_index(piece, ya, z, bx->lo[2]);                   \
                                ROW(in + at, out + at, fbase ? fbase + at : NULL, yb - ya, 2, cf, pitch,     \
                                    plane, ya, z, bx->lo[2], ext);                                             \
                            }                                                                                  \
                        }                                                                                      \
                    }                                                                                          \
                    progress_set(&done[t], (int)s + 1);                                                        \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        free(done);                                                                                            \
        return 1;                                                                                              \
    }

/* Layers per sweep, tile width and slab thickness of the wavefront.  A tile
 * keeps about 4 slabs per layer in flight (the three a layer reads and the
 * one it writes), each (tile width x the other extents): that should fit one
 * core's L2.  When all the layers together would leave tiles narrower than 8
 * rows (3D) or 64 nodes (2D), the layers go in several sweeps, each reading
 * the piece once more from L3 or memory.  The tiles are then evened out so
 * that every thread gets as many. */
static inline void wave_shape(const pyr_cpu_ctx_t *c, const pyr_cpu_wave_t *wv, size_t elem, int dims, const pyr_box_t *boxes,
                              int nlayers, int *group, int64_t *tile, int64_t *slab)
{
    const int b = dims - 2;
    const pyr_box_t hull = pyr_box_hull(boxes, nlayers);
    const int64_t b0 = hull.lo[b], b1 = hull.hi[b];
    /* nodes per tile node and slab plane (the layers' boxes are nested: the hull's x extent is the widest) */
    const int64_t across = dims == 3 ? pyr_box_extent(&hull, 0) + 2 : 1;
    const int64_t least = dims == 3 ? 8 : 64;
    int m = wv->group > 0 && wv->group < nlayers ? (int)wv->group : nlayers;
    *slab = wv->slab > 0 ? wv->slab : 1;
    int64_t t = wv->tile;
    if (t <= 0) {
        for (;;) {
            t = (int64_t)((double)c->l2_bytes / (4.0 * (double)*slab * (double)m * (double)across * (double)elem));
            if (t >= least || m <= 2 || wv->group > 0) break;
            m = (m + 1) / 2;
        }
        if (t < 1) t = 1;
        const int64_t span = b1 > b0 ? b1 - b0 + m - 1 : 1;
        int64_t tiles = (span + t - 1) / t;
        tiles = (tiles + c->threads - 1) / c->threads * c->threads;
        t = (span + tiles - 1) / tiles;
    }
    *group = m;
    *tile = t;
}

/* Whether both layers of the region the boxes read fit the threads' L2
 * caches together: then each layer's sweep finds the last one's values in
 * cache anyway, and the wavefront would only add its overheads. */
static inline int fits_l2(const pyr_cpu_ctx_t *c, size_t elem, int dims, const pyr_box_t *boxes, int nlayers)
{
    const pyr_box_t u = pyr_box_hull(boxes, nlayers);
    if (pyr_box_empty(&u)) return 1; /* nothing to compute */
    double v = 1;
    for (int a = 0; a < 3; a++) v *= (double)(u.hi[a] - u.lo[a] + (a < dims ? 2 : 0));
    return 2.0 * v * (double)elem <= (double)c->l2_bytes * (double)c->threads;
}


/* The variant's wavefront settings, and the variants themselves. */
static inline pyr_status_t pyr_cpu_variant_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    (void)dims;
    (void)precision;
    if (!strcmp(v->name, "auto") || !strcmp(v->name, "sweep")) {
        if (v->p[0] || v->p[1] || v->p[2]) return pyr_fail(PYR_ERR_CONFIG, "the CPU variant %s takes no parameters; wave:T,S,G does", v->name);
        return PYR_OK;
    }
    if (!strcmp(v->name, "wave")) return PYR_OK;
    return pyr_fail(PYR_ERR_CONFIG, "no CPU kernel variant '%s'; use auto, sweep or wave[:TILE,SLAB,GROUP]", v->name);
}

static inline void pyr_cpu_variant_default(int dims, pyr_precision_t precision, pyr_variant_t *v)
{
    (void)dims;
    (void)precision;
    memset(v, 0, sizeof *v);
    strcpy(v->name, "auto");
}

static inline int pyr_cpu_variant_candidates(int dims, pyr_precision_t precision, pyr_variant_t *v, int max)
{
    static const char *const names[] = {"auto", "sweep", "wave"};
    int n = 0;
    (void)dims;
    (void)precision;
    for (int i = 0; i < 3 && n < max; i++, n++) {
        memset(&v[n], 0, sizeof v[n]);
        strcpy(v[n].name, names[i]);
    }
    return n;
}

static inline pyr_cpu_wave_t pyr_cpu_wave_of(const pyr_variant_t *v)
{
    pyr_cpu_wave_t w = {PYR_CPU_AUTO, 0, 0, 0, 8192};
    if (!v || !strcmp(v->name, "auto")) return w;
    if (!strcmp(v->name, "sweep")) {
        w.mode = PYR_CPU_SWEEP;
        return w;
    }
    /* wave: forced, even where the piece fits the L2 caches or the work is small */
    w.mode = PYR_CPU_WAVE;
    w.tile = v->p[0];
    w.slab = v->p[1];
    w.group = v->p[2];
    w.min_work = 0;
    return w;
}

/* The kernel of a scheme: the compute entry point over the ROWX functions of
 * both precisions, with the coefficients (NCOEF of them) rounded once, and
 * ext handed to every row. */
#define PYR_CPU_KERNEL_X(PREFIX, ROW32, ROW64, NCOEF)                                                          \
    PYR_CPU_DEFINE_STEP(PREFIX##_step_f32, ROW32, float)                                                       \
    PYR_CPU_DEFINE_STEP(PREFIX##_step_f64, ROW64, double)                                                      \
    PYR_CPU_DEFINE_WAVE(PREFIX##_wave_f32, ROW32, float)                                                       \
    PYR_CPU_DEFINE_WAVE(PREFIX##_wave_f64, ROW64, double)                                                      \
    static pyr_status_t PREFIX##_run_x(void *ctx, int slot, const pyr_kernel_call_t *call, const void *ext)    \
    {                                                                                                          \
        (void)slot;                                                                                            \
        const pyr_cpu_ctx_t *c = ctx;                                                                          \
        const pyr_piece_t *piece = call->piece;                                                                \
        const pyr_box_t *boxes = call->boxes;                                                                  \
        const int nlayers = call->nboxes, dims = call->coef->dims;                                             \
        const pyr_cpu_wave_t wv = pyr_cpu_wave_of(call->variant);                                              \
        const void *fbase = piece->nfields > 1 ? piece->buf[1][0] : NULL;                                      \
        float cf32[NCOEF];                                                                                     \
        double cf64[NCOEF];                                                                                    \
        for (int i = 0; i < NCOEF; i++) cf32[i] = (float)call->coef->c[i], cf64[i] = call->coef->c[i];         \
        int l = 0, cur = piece->cur;                                                                           \
        if (nlayers > 1 && dims > 1 && wv.mode != PYR_CPU_SWEEP &&                                             \
            (wv.mode == PYR_CPU_WAVE || !fits_l2(c, c->elem, dims, boxes, nlayers))) {                         \
            pyr_piece_t pc = *piece;                                                                           \
            int m;                                                                                             \
            int64_t tile, slab;                                                                                \
            wave_shape(c, &wv, c->elem, dims, boxes, nlayers, &m, &tile, &slab);                               \
            for (; l < nlayers; l += m) {                                                                      \
                int k = nlayers - l < m ? nlayers - l : m;                                                     \
                pc.cur = cur;                                                                                  \
                int ok = c->precision == PYR_DOUBLE                                                            \
                             ? PREFIX##_wave_f64(c, &wv, &pc, fbase, dims, cf64, boxes + l, k, tile, slab, ext) \
                             : PREFIX##_wave_f32(c, &wv, &pc, fbase, dims, cf32, boxes + l, k, tile, slab, ext); \
                if (!ok) break; /* no memory for the progress counters: the rest layer by layer */            \
                cur = (cur + k) & 1;                                                                           \
            }                                                                                                  \
        }                                                                                                      \
        for (; l < nlayers; l++) {                                                                             \
            const void *in = piece->buf[0][cur];                                                               \
            void *out = piece->buf[0][cur ^ 1];                                                                \
            if (c->precision == PYR_DOUBLE) PREFIX##_step_f64(c, piece, in, out, fbase, &boxes[l], dims, cf64, ext); \
            else PREFIX##_step_f32(c, piece, in, out, fbase, &boxes[l], dims, cf32, ext);                      \
            cur ^= 1;                                                                                          \
        }                                                                                                      \
        return PYR_OK;                                                                                         \
    }

/* A ROW function as a ROWX one (the position and ext unused), and the
 * kernel of ROW functions: PREFIX##_run. */
#define PYR_CPU_DEFINE_ROWX(NAME, ROW, T)                                                                      \
    static inline void NAME(const T *s, T *d, const T *f, int64_t n, int dims, const T *cf, int64_t pitch,     \
                            int64_t plane, int64_t x, int64_t y, int64_t z, const void *ext)                   \
    {                                                                                                          \
        (void)x, (void)y, (void)z, (void)ext;                                                                  \
        ROW(s, d, f, n, dims, cf, pitch, plane);                                                               \
    }

#define PYR_CPU_KERNEL(PREFIX, ROW32, ROW64, NCOEF)                                                            \
    PYR_CPU_DEFINE_ROWX(PREFIX##_rowx_f32, ROW32, float)                                                       \
    PYR_CPU_DEFINE_ROWX(PREFIX##_rowx_f64, ROW64, double)                                                      \
    PYR_CPU_KERNEL_X(PREFIX, PREFIX##_rowx_f32, PREFIX##_rowx_f64, NCOEF)                                      \
    static pyr_status_t PREFIX##_run(void *ctx, int slot, const pyr_kernel_call_t *call)                       \
    {                                                                                                          \
        return PREFIX##_run_x(ctx, slot, call, NULL);                                                          \
    }

#endif
