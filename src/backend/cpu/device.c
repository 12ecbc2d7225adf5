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
/* The CPU runtime: "device memory" is a separate host buffer of the budgeted
 * size, so a pyramid plan gives temporal cache blocking; every operation runs
 * to completion (OpenMP inside) before it returns, but for copies issued on
 * the lane, which wait for a slot to need them (see cpu_copy).  The stencils live in the
 * CPU kernels (kernels_heat.c, kernels_poisson.c, stencil.h). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/device.h"
#include "core/error.h"
#include "core/field.h" /* pyr_host_grid_alloc */

typedef pyr_cpu_ctx_t cpu_ctx_t;

int pyr_cpu_threads(void) { return omp_get_max_threads(); }

static pyr_status_t cpu_create(const pyr_options_t *o, pyr_precision_t precision, void **out)
{
    cpu_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    c->threads = o && o->threads > 0 ? o->threads : omp_get_max_threads();
    c->precision = precision;
    c->elem = pyr_precision_size(precision);
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
    *out = c;
    return PYR_OK;
}

static pyr_status_t lane_run(cpu_ctx_t *c, int upto);

static void cpu_destroy(void *ctx)
{
    cpu_ctx_t *c = ctx;
    if (!c) return;
    free(c->lane_q);
    free(c->src_order);
    free(c);
}

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
    if (!(*ptr = pyr_host_grid_alloc(bytes)))
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
    const int stream = !to_piece && (uint64_t)pyr_box_volume(&host->box) * elem > c->llc_bytes &&
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

static pyr_status_t cpu_upload(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host,
                               const pyr_box_t *box)
{
    (void)slot;
    copy_rows(ctx, piece, piece->buf[f][0], host, box, 1);
    return PYR_OK;
}

static pyr_status_t cpu_download(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host,
                                 const pyr_box_t *box)
{
    (void)slot;
    copy_rows(ctx, piece, pyr_piece_current(piece, f), host, box, 0);
    return PYR_OK;
}

/* Field f's values over `box` from a recipe (device.h fill), as the core's host fill makes them
 * (core/recipe.c: the same products and random words as problem/field_init.c's). */
static pyr_status_t cpu_fill(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_recipe_t *r, const double *const tab[3],
                             const pyr_box_t *box)
{
    (void)slot;
    const cpu_ctx_t *c = ctx;
    if (pyr_box_empty(box)) return PYR_OK;
    if (!pyr_box_contains(&piece->box, box)) return pyr_fail(PYR_ERR_INTERNAL, "CPU backend: fill box outside its piece");
    if (pyr_recipe_tabled(r->kind) && (!tab[0] || (r->dims >= 2 && !tab[1]) || (r->dims >= 3 && !tab[2])))
        return pyr_fail(PYR_ERR_INTERNAL, "CPU backend: a fill of a tabled recipe without its tables");
    const int64_t n[3] = {pyr_box_extent(box, 0), pyr_box_extent(box, 1), pyr_box_extent(box, 2)};
    char *at = (char *)piece->buf[f][0] + pyr_piece_index(piece, box->lo[0], box->lo[1], box->lo[2]) * (int64_t)c->elem;
    pyr_recipe_fill_rows(r, tab, c->elem, at, piece->pitch, piece->pitch * pyr_box_extent(&piece->box, 1), box->lo, n);
    return PYR_OK;
}

/* The lane (device.h): every other operation runs as it is issued, but a
 * copy issued on the lane waits in a queue until a slot waits for a lane
 * mark past it, or for the lane itself - as late as the issuing order
 * allows, where the GPU runs it as early as it may.  So the CPU tests check
 * that an executor's waits for its lane are enough (a missing one leaves a
 * copy to run after what should have followed it). */
#define CPU_LANE 3 /* the queue after the three slots */
_Static_assert(sizeof(((pyr_cpu_ctx_t *)0)->lane_mark) / sizeof(int) == PYR_MARKS, "the lane keeps one count per mark kind");
struct pyr_cpu_lane_op {
    pyr_piece_t dst, src;
    int f, dst_layers, src_layer;
    pyr_box_t box;
};

static pyr_status_t copy_now(const cpu_ctx_t *c, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src, int src_layer,
                             const pyr_box_t *box);

static pyr_status_t lane_run(cpu_ctx_t *c, int upto)
{
    while (c->lane_done < upto && c->lane_done < c->lane_n) {
        const struct pyr_cpu_lane_op *op = &c->lane_q[c->lane_done++];
        PYR_TRY(copy_now(c, &op->dst, op->f, op->dst_layers, &op->src, op->src_layer, &op->box));
    }
    if (c->lane_done == c->lane_n) c->lane_done = c->lane_n = 0; /* all run: the queue starts again */
    for (int m = 0; m < PYR_MARKS; m++)
        if (c->lane_mark[m] > c->lane_n) c->lane_mark[m] = c->lane_n;
    return PYR_OK;
}

static pyr_status_t cpu_mark(void *ctx, int slot, int which)
{
    cpu_ctx_t *c = ctx;
    if (which < 0 || which >= PYR_MARKS) return pyr_fail(PYR_ERR_INTERNAL, "CPU backend: mark %d does not exist", which);
    if (slot == CPU_LANE) c->lane_mark[which] = c->lane_n;
    return PYR_OK;
}

static pyr_status_t cpu_after_mark(void *ctx, int slot, int other, int which)
{
    cpu_ctx_t *c = ctx;
    if (which < 0 || which >= PYR_MARKS) return pyr_fail(PYR_ERR_INTERNAL, "CPU backend: mark %d does not exist", which);
    /* a slot waiting for the lane runs the lane's copies up to its mark; anything else is in order already */
    if (other == CPU_LANE && slot != CPU_LANE) return lane_run(c, c->lane_mark[which]);
    return PYR_OK;
}

static pyr_status_t cpu_copy(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src,
                             int src_layer, const pyr_box_t *box)
{
    cpu_ctx_t *c = ctx;
    if (slot != CPU_LANE) return copy_now(c, dst, f, dst_layers, src, src_layer, box);
    if (c->lane_n == c->lane_cap) {
        const int cap = c->lane_cap ? 2 * c->lane_cap : 64;
        struct pyr_cpu_lane_op *q = realloc(c->lane_q, (size_t)cap * sizeof *q);
        if (!q) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        c->lane_q = q;
        c->lane_cap = cap;
    }
    c->lane_q[c->lane_n++] = (struct pyr_cpu_lane_op){*dst, *src, f, dst_layers, src_layer, *box};
    return PYR_OK;
}

static pyr_status_t copy_now(const cpu_ctx_t *c, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src, int src_layer,
                             const pyr_box_t *box)
{
    const size_t elem = c->elem;
    const int64_t w = pyr_box_extent(box, 0);
    for (int64_t z = box->lo[2]; z < box->hi[2]; z++)
        for (int64_t y = box->lo[1]; y < box->hi[1]; y++) {
            const char *s = (const char *)src->buf[f][src_layer] + pyr_piece_index(src, box->lo[0], y, z) * (int64_t)elem;
            for (int l = 0; l < 2; l++) {
                if (!(dst_layers & (1 << l)) || !dst->buf[f][l]) continue;
                char *d = (char *)dst->buf[f][l] + pyr_piece_index(dst, box->lo[0], y, z) * (int64_t)elem;
                if (d != s) memmove(d, s, (size_t)w * elem);
            }
        }
    return PYR_OK;
}

/* max |a - b| over the box, a NaN counting as an infinity (a diverged run). */
#define DEFINE_MAXDIFF(NAME, T)                                                                                  \
    static double NAME(const cpu_ctx_t *c, const pyr_piece_t *piece, const T *a, const T *b, const pyr_box_t *box) \
    {                                                                                                            \
        const int64_t w = pyr_box_extent(box, 0), ny = pyr_box_extent(box, 1), nz = pyr_box_extent(box, 2);     \
        double m = 0;                                                                                            \
        _Pragma("omp parallel for collapse(2) reduction(max : m) num_threads(c->threads) if (w * ny * nz > 32768)") \
        for (int64_t z = 0; z < nz; z++)                                                                         \
            for (int64_t y = 0; y < ny; y++) {                                                                   \
                const int64_t at = pyr_piece_index(piece, box->lo[0], box->lo[1] + y, box->lo[2] + z);          \
                T r = 0;                                                                                         \
                for (int64_t x = 0; x < w; x++) {                                                                \
                    T d = a[at + x] - b[at + x];                                                                 \
                    d = d < 0 ? -d : d;                                                                          \
                    if (d != d) d = (T)INFINITY;                                                                 \
                    r = d > r ? d : r;                                                                           \
                }                                                                                                \
                if ((double)r > m) m = (double)r;                                                                \
            }                                                                                                    \
        return m;                                                                                                \
    }

DEFINE_MAXDIFF(maxdiff_f32, float)
DEFINE_MAXDIFF(maxdiff_f64, double)

static pyr_status_t cpu_reduce_change(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_box_t *box, double *out)
{
    (void)slot;
    const cpu_ctx_t *c = ctx;
    *out = 0;
    if (pyr_box_empty(box)) return PYR_OK;
    if (!piece->buf[f][1]) return pyr_fail(PYR_ERR_INTERNAL, "CPU runtime: the change of field %d, which has one buffer", f);
    const void *a = piece->buf[f][piece->cur], *b = piece->buf[f][piece->cur ^ 1];
    *out = c->precision == PYR_DOUBLE ? maxdiff_f64(c, piece, a, b, box) : maxdiff_f32(c, piece, a, b, box);
    return PYR_OK;
}

static pyr_status_t cpu_wait(void *ctx, int slot)
{
    if (slot == CPU_LANE) return lane_run(ctx, ((cpu_ctx_t *)ctx)->lane_n);
    return PYR_OK;
}

static pyr_status_t cpu_host_alloc(void *ctx, size_t bytes, void **ptr) { return cpu_alloc(ctx, bytes, ptr); }

/* Another CPU context's pieces are host memory too (several parts on the
 * CPU, exec/parts.c). */
static pyr_status_t cpu_copy_peer(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, void *src_ctx, const pyr_piece_t *src,
                                  int src_layer, const pyr_box_t *box)
{
    (void)src_ctx;
    return cpu_copy(ctx, slot, dst, f, dst_layers, src, src_layer, box);
}

const pyr_device_ops_t pyr_device_cpu = {
    .name = "cpu",
    .kind = PYR_BACKEND_CPU,
    /* Operations run to completion, so one slot is all the CPU needs; more
     * (run.slots) exercise the executor's multi-slot paths in the tests. */
    .slots = 3,
    .lanes = 1,
    .default_slots = 1,
    .concurrent = 0,
    .pitch_align_bytes = 0,
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
    .fill = cpu_fill,
    .copy = cpu_copy,
    .download = cpu_download,
    .reduce_change = cpu_reduce_change,
    .wait = cpu_wait,
    .mark = cpu_mark,
    .after_mark = cpu_after_mark,
    .copy_peer = cpu_copy_peer,
};
