/* The CPU backend: "device memory" is a separate host buffer of the budgeted
 * size, so a pyramid plan gives temporal cache blocking; every operation runs
 * to completion (OpenMP inside) before it returns.
 *
 * A compute call of several layers (2D, 3D) whose region does not fit the
 * threads' L2 caches runs as a wavefront of tiles (DEFINE_WAVE) rather than a
 * sweep per layer, for pieces and for the naive method's whole grid alike;
 * the results are the same bit for bit, only the order of the nodes changes.
 * PYR_CPU_WAVE, for tests and tuning: "off" (a sweep per layer), "on" (the
 * wavefront whatever the size), or "TILE,SLAB,GROUP" (the wavefront with
 * that tile width, slab thickness and layers per sweep; 0 = automatic).
 * PYR_CPU_NOSTREAM=1 turns off the streaming stores of downloads (copy_rows). */
#define _GNU_SOURCE /* syscall() */
#include <limits.h>
#include <omp.h>
#include <stdatomic.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include "backend/backend.h"
#include "core/error.h"

typedef struct {
    int threads;
    pyr_precision_t precision;
    size_t elem;
    /* multi-layer compute (DEFINE_WAVE): on/off; tile width, slab thickness,
     * layers per sweep (0 = from the L2 size); share of L2 to fill; least
     * work worth a second thread */
    int wave;
    int64_t tile, slab, group;
    double fill;
    int64_t min_work;
    int stream;         /* downloads into regions larger than the LLC bypass the cache */
    uint64_t llc_bytes;
    int64_t l2_bytes;
} cpu_ctx_t;

int pyr_cpu_threads(void) { return omp_get_max_threads(); }

static pyr_status_t cpu_create(const pyr_options_t *o, pyr_precision_t precision, void **out)
{
    cpu_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    c->threads = o && o->threads > 0 ? o->threads : omp_get_max_threads();
    c->precision = precision;
    c->elem = pyr_precision_size(precision);
    c->wave = 1;
    c->fill = 1.0;
    c->min_work = 8192;
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    c->l2_bytes = l2 > 0 ? l2 : 1 << 20;
    long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    c->llc_bytes = l3 > 0 ? (uint64_t)l3 : (uint64_t)32 << 20;
    c->stream = !getenv("PYR_CPU_NOSTREAM");
    /* PYR_CPU_WAVE (see the top of this file); a 4th number scales the L2 share */
    const char *e = getenv("PYR_CPU_WAVE");
    if (e && *e) {
        c->wave = 2; /* forced, even where the piece fits the L2 caches or the work is small */
        c->min_work = 0;
        if (!strcmp(e, "off")) c->wave = 0;
        else if (strcmp(e, "on")) {
            long long t = 0, sl = 0, g = 0;
            double f = 0;
            int k = sscanf(e, "%lld,%lld,%lld,%lf", &t, &sl, &g, &f);
            if (k >= 1 && t >= 0) c->tile = t;
            if (k >= 2 && sl > 0) c->slab = sl;
            if (k >= 3 && g >= 0) c->group = g;
            if (k >= 4 && f > 0) c->fill = f;
        }
    }
    *out = c;
    return PYR_OK;
}

static void cpu_destroy(void *ctx) { free(ctx); }

static pyr_status_t cpu_mem_info(void *ctx, uint64_t *fr, uint64_t *total)
{
    (void)ctx;
    long page = sysconf(_SC_PAGESIZE);
    long av = sysconf(_SC_AVPHYS_PAGES), ph = sysconf(_SC_PHYS_PAGES);
    *fr = av > 0 && page > 0 ? (uint64_t)av * (uint64_t)page : 0;
    *total = ph > 0 && page > 0 ? (uint64_t)ph * (uint64_t)page : 0;
    return PYR_OK;
}

static pyr_status_t cpu_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    *ptr = NULL;
    if (bytes == 0) bytes = 64;
    if (posix_memalign(ptr, 64, bytes) != 0)
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory allocating a %.1f MiB buffer; use a smaller memory budget",
                        (double)bytes / 1048576.0);
    return PYR_OK;
}

static void cpu_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static int64_t rows_of(const pyr_box_t *b) { return b->hi[1] - b->lo[1]; }

#if defined(__SSE2__)
#include <emmintrin.h>
#define PYR_CPU_STREAM 1
#else
#define PYR_CPU_STREAM 0
#endif

/* memcpy, but the whole 64-byte lines of dst are written with non-temporal
 * stores (no read of the old line, no cache space taken).  The caller ends
 * with stream_fence() on the same thread. */
static void copy_stream(char *dst, const char *src, size_t n)
{
#if PYR_CPU_STREAM
    size_t head = (size_t)(-(uintptr_t)dst & 63);
    if (head > n) head = n;
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i)), b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 32)), e = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), d);
        _mm_stream_si128((__m128i *)(dst + i + 48), e);
    }
    memcpy(dst + body, src + body, n - body);
#else
    memcpy(dst, src, n);
#endif
}

static void stream_fence(void)
{
#if PYR_CPU_STREAM
    _mm_sfence();
#endif
}

/* Host region <-> piece layer copies, one memcpy per row of the box.  Rows
 * going to a host region larger than the last-level cache are streamed past
 * the cache: they would leave it before anyone read them again, and a normal
 * store would first read each line from memory. */
static void copy_rows(const cpu_ctx_t *c, const pyr_piece_t *piece, void *layer, const pyr_host_region_t *host,
                      const pyr_box_t *box, int to_piece)
{
    const size_t elem = c->elem;
    const int64_t w = pyr_box_extent(box, 0);
    const int64_t hnx = pyr_box_extent(&host->box, 0), hny = rows_of(&host->box);
    const int64_t ny = pyr_box_extent(box, 1), nz = pyr_box_extent(box, 2);
    const int stream = c->stream && !to_piece && (uint64_t)pyr_box_volume(&host->box) * elem > c->llc_bytes &&
                       (uint64_t)w * elem >= 256;
#pragma omp parallel num_threads(c->threads) if (w * ny * nz > 32768)
    {
#pragma omp for collapse(2) schedule(static) nowait
        for (int64_t z = 0; z < nz; z++)
            for (int64_t y = 0; y < ny; y++) {
                int64_t gz = box->lo[2] + z, gy = box->lo[1] + y;
                int64_t hi = ((gz - host->box.lo[2]) * hny + (gy - host->box.lo[1])) * hnx + (box->lo[0] - host->box.lo[0]);
                int64_t pi = pyr_piece_index(piece, box->lo[0], gy, gz);
                char *p = (char *)layer + pi * (int64_t)elem;
                char *h = (char *)host->data + hi * (int64_t)elem;
                if (to_piece) memcpy(p, h, (size_t)w * elem);
                else if (stream) copy_stream(h, p, (size_t)w * elem);
                else memcpy(h, p, (size_t)w * elem);
            }
        if (stream) stream_fence();
    }
}

static pyr_status_t cpu_upload(void *ctx, int slot, const pyr_piece_t *piece, const pyr_host_region_t *host, const pyr_box_t *box)
{
    (void)slot;
    copy_rows(ctx, piece, piece->layer[0], host, box, 1);
    return PYR_OK;
}

static pyr_status_t cpu_download(void *ctx, int slot, const pyr_piece_t *piece, const pyr_host_region_t *host,
                                 const pyr_box_t *box)
{
    (void)slot;
    copy_rows(ctx, piece, piece->layer[piece->cur], host, box, 0);
    return PYR_OK;
}

static pyr_status_t cpu_copy(void *ctx, int slot, const pyr_piece_t *dst, int dst_layers, const pyr_piece_t *src, int src_layer,
                             const pyr_box_t *box)
{
    (void)slot;
    const cpu_ctx_t *c = ctx;
    const size_t elem = c->elem;
    const int64_t w = pyr_box_extent(box, 0);
    for (int64_t z = box->lo[2]; z < box->hi[2]; z++)
        for (int64_t y = box->lo[1]; y < box->hi[1]; y++) {
            const char *s = (const char *)src->layer[src_layer] + pyr_piece_index(src, box->lo[0], y, z) * (int64_t)elem;
            for (int l = 0; l < 2; l++) {
                if (!(dst_layers & (1 << l))) continue;
                char *d = (char *)dst->layer[l] + pyr_piece_index(dst, box->lo[0], y, z) * (int64_t)elem;
                if (d != s) memmove(d, s, (size_t)w * elem);
            }
        }
    return PYR_OK;
}

/* The stencil on one row segment of n nodes: s and d point at its first node
 * in the layer read and the layer written.  Every compute path goes through
 * this one expression (schemes/heat.h), so the order in which rows are
 * computed changes no bit of the result. */
#define DEFINE_ROW(NAME, T)                                                                                    \
    static inline void NAME(const T *s, T *d, int64_t n, int dims, T rx, T ry, T rz, int64_t pitch,          \
                            int64_t plane)                                                                     \
    {                                                                                                          \
        if (dims == 1) {                                                                                       \
            for (int64_t x = 0; x < n; x++) {                                                                  \
                T u = s[x];                                                                                    \
                d[x] = u + rx * ((s[x - 1] + s[x + 1]) - (u + u));                                             \
            }                                                                                                  \
        } else if (dims == 2) {                                                                                \
            for (int64_t x = 0; x < n; x++) {                                                                  \
                T u = s[x];                                                                                    \
                d[x] = u + (rx * ((s[x - 1] + s[x + 1]) - (u + u)) + ry * ((s[x - pitch] + s[x + pitch]) - (u + u))); \
            }                                                                                                  \
        } else {                                                                                               \
            for (int64_t x = 0; x < n; x++) {                                                                  \
                T u = s[x];                                                                                    \
                d[x] = u + ((rx * ((s[x - 1] + s[x + 1]) - (u + u)) + ry * ((s[x - pitch] + s[x + pitch]) - (u + u))) + \
                            rz * ((s[x - plane] + s[x + plane]) - (u + u)));                                   \
            }                                                                                                  \
        }                                                                                                      \
    }

DEFINE_ROW(row_f32, float)
DEFINE_ROW(row_f64, double)

/* One time step on `box` (interior nodes only): reads `in`, writes `out`.
 * Threads take whole rows (or, for a single long row, chunks of it). */
#define DEFINE_STEP(NAME, ROW, T)                                                                              \
    static void NAME(const cpu_ctx_t *c, const pyr_piece_t *piece, const T *in, T *out, const pyr_box_t *box,  \
                     const pyr_heat_coef_t *coef)                                                              \
    {                                                                                                          \
        const T rx = (T)coef->r[0], ry = (T)coef->r[1], rz = (T)coef->r[2];                                    \
        const int dims = coef->dims;                                                                           \
        const int64_t pitch = piece->pitch, plane = piece->pitch * rows_of(&piece->box);                       \
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
            ROW(in + base, out + base, x1 - x0, dims, rx, ry, rz, pitch, plane);                               \
        }                                                                                                      \
    }

DEFINE_STEP(step_f32, row_f32, float)
DEFINE_STEP(step_f64, row_f64, double)

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

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Until p->done >= v (acquire). */
static void progress_wait(progress_t *p, int v)
{
    for (int i = 0; i < 1000; i++) {
        if (atomic_load_explicit(&p->done, memory_order_acquire) >= v) return;
        cpu_relax();
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

static void progress_set(progress_t *p, int v)
{
    atomic_store(&p->done, v);
#if defined(__linux__)
    if (atomic_load(&p->sleeping)) syscall(SYS_futex, (int *)&p->done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
#endif
}

#define DEFINE_WAVE(NAME, ROW, T)                                                                              \
    static int NAME(const cpu_ctx_t *c, const pyr_piece_t *piece, const pyr_heat_coef_t *coef,                \
                    const pyr_box_t *boxes, int nlayers, int64_t tile, int64_t slab)                           \
    {                                                                                                          \
        const T rx = (T)coef->r[0], ry = (T)coef->r[1], rz = (T)coef->r[2];                                    \
        const int dims = coef->dims, a = dims - 1, b = dims - 2;                                               \
        const int64_t pitch = piece->pitch, plane = piece->pitch * rows_of(&piece->box);                       \
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
        if (work < c->min_work) nth = 1;                                                                       \
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
                        const T *in = piece->layer[(cur + l) & 1];                                             \
                        T *out = piece->layer[(cur + l + 1) & 1];                                              \
                        for (int64_t z = za; z < zb; z++) {                                                    \
                            if (dims == 3) {                                                                   \
                                const int64_t w = bx->hi[0] - bx->lo[0];                                       \
                                for (int64_t y = ya; y < yb; y++) {                                            \
                                    const int64_t at = pyr_piece_index(piece, bx->lo[0], y, z);                \
                                    ROW(in + at, out + at, w, 3, rx, ry, rz, pitch, plane);                    \
                                }                                                                              \
                            } else {                                                                           \
                                const int64_t at = pyr_piece_index(piece, ya, z, bx->lo[2]);                   \
                                ROW(in + at, out + at, yb - ya, 2, rx, ry, rz, pitch, plane);                  \
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

DEFINE_WAVE(wave_f32, row_f32, float)
DEFINE_WAVE(wave_f64, row_f64, double)

/* Layers per sweep, tile width and slab thickness of the wavefront.  A tile
 * keeps about 4 slabs per layer in flight (the three a layer reads and the
 * one it writes), each (tile width x the other extents): that should fit one
 * core's L2.  When all the layers together would leave tiles narrower than 8
 * rows (3D) or 64 nodes (2D), the layers go in several sweeps, each reading
 * the piece once more from L3 or memory.  The tiles are then evened out so
 * that every thread gets as many. */
static void wave_shape(const cpu_ctx_t *c, int dims, const pyr_box_t *boxes, int nlayers, int *group, int64_t *tile,
                       int64_t *slab)
{
    const int b = dims - 2;
    const pyr_box_t hull = pyr_box_hull(boxes, nlayers);
    const int64_t b0 = hull.lo[b], b1 = hull.hi[b];
    /* nodes per tile node and slab plane (the layers' boxes are nested: the hull's x extent is the widest) */
    const int64_t across = dims == 3 ? pyr_box_extent(&hull, 0) + 2 : 1;
    const int64_t least = dims == 3 ? 8 : 64;
    int m = c->group > 0 && c->group < nlayers ? (int)c->group : nlayers;
    *slab = c->slab > 0 ? c->slab : 1;
    int64_t t = c->tile;
    if (t <= 0) {
        for (;;) {
            t = (int64_t)((double)c->l2_bytes * c->fill / (4.0 * (double)*slab * (double)m * (double)across * (double)c->elem));
            if (t >= least || m <= 2 || c->group > 0) break;
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
static int fits_l2(const cpu_ctx_t *c, int dims, const pyr_box_t *boxes, int nlayers)
{
    const pyr_box_t u = pyr_box_hull(boxes, nlayers);
    if (pyr_box_empty(&u)) return 1; /* nothing to compute */
    double v = 1;
    for (int a = 0; a < 3; a++) v *= (double)(u.hi[a] - u.lo[a] + (a < dims ? 2 : 0));
    return 2.0 * v * (double)c->elem <= (double)c->l2_bytes * (double)c->threads;
}

static pyr_status_t cpu_compute(void *ctx, int slot, const pyr_piece_t *piece, const pyr_heat_coef_t *coef,
                                const pyr_box_t *boxes, int nlayers)
{
    (void)slot;
    const cpu_ctx_t *c = ctx;
    int l = 0, cur = piece->cur;
    if (nlayers > 1 && coef->dims > 1 && c->wave && (c->wave > 1 || !fits_l2(c, coef->dims, boxes, nlayers))) {
        pyr_piece_t pc = *piece;
        int m;
        int64_t tile, slab;
        wave_shape(c, coef->dims, boxes, nlayers, &m, &tile, &slab);
        for (; l < nlayers; l += m) {
            int k = nlayers - l < m ? nlayers - l : m;
            pc.cur = cur;
            int ok = c->precision == PYR_DOUBLE ? wave_f64(c, &pc, coef, boxes + l, k, tile, slab)
                                                : wave_f32(c, &pc, coef, boxes + l, k, tile, slab);
            if (!ok) break; /* no memory for the progress counters: the rest layer by layer */
            cur = (cur + k) & 1;
        }
    }
    for (; l < nlayers; l++) {
        const void *in = piece->layer[cur];
        void *out = piece->layer[cur ^ 1];
        if (c->precision == PYR_DOUBLE) step_f64(c, piece, in, out, &boxes[l], coef);
        else step_f32(c, piece, in, out, &boxes[l], coef);
        cur ^= 1;
    }
    return PYR_OK;
}

static pyr_status_t cpu_wait(void *ctx, int slot)
{
    (void)ctx;
    (void)slot;
    return PYR_OK;
}

static pyr_status_t cpu_host_alloc(void *ctx, size_t bytes, void **ptr) { return cpu_alloc(ctx, bytes, ptr); }

const pyr_backend_ops_t pyr_backend_cpu = {
    .name = "cpu",
    .kind = PYR_BACKEND_CPU,
    /* Operations run to completion, so one slot is all the CPU needs; more
     * (run.slots) exercise the executor's multi-slot paths in the tests. */
    .slots = 3,
    .default_slots = 1,
    .concurrent = 0,
    .pitch_align_bytes = 0,
    .xpad_align_bytes = 0,
    .pitch_skew_bytes = 64,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .mem_info = cpu_mem_info,
    .dev_alloc = cpu_alloc,
    .dev_free = cpu_free,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_free,
    .host_register = NULL,
    .host_unregister = NULL,
    .upload = cpu_upload,
    .copy = cpu_copy,
    .compute = cpu_compute,
    .download = cpu_download,
    .wait = cpu_wait,
};
