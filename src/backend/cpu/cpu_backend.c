/* The CPU backend: "device memory" is a separate host buffer of the budgeted
 * size, so a pyramid plan gives temporal cache blocking; every operation runs
 * to completion (OpenMP inside) before it returns. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "core/error.h"

typedef struct {
    int threads;
    pyr_precision_t precision;
    size_t elem;
} cpu_ctx_t;

int pyr_cpu_threads(void) { return omp_get_max_threads(); }

static pyr_status_t cpu_create(const pyr_options_t *o, pyr_precision_t precision, void **out)
{
    cpu_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    c->threads = o && o->threads > 0 ? o->threads : omp_get_max_threads();
    c->precision = precision;
    c->elem = pyr_precision_size(precision);
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

/* Host region <-> piece layer copies, one memcpy per row of the box. */
static void copy_rows(const cpu_ctx_t *c, const pyr_piece_t *piece, void *layer, const pyr_host_region_t *host,
                      const pyr_box_t *box, int to_piece)
{
    const size_t elem = c->elem;
    const int64_t w = pyr_box_extent(box, 0);
    const int64_t hnx = pyr_box_extent(&host->box, 0), hny = rows_of(&host->box);
    const int64_t ny = pyr_box_extent(box, 1), nz = pyr_box_extent(box, 2);
#pragma omp parallel for collapse(2) schedule(static) num_threads(c->threads) if (w * ny * nz > 32768)
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++) {
            int64_t gz = box->lo[2] + z, gy = box->lo[1] + y;
            int64_t hi = ((gz - host->box.lo[2]) * hny + (gy - host->box.lo[1])) * hnx + (box->lo[0] - host->box.lo[0]);
            int64_t pi = pyr_piece_index(piece, box->lo[0], gy, gz);
            char *p = (char *)layer + pi * (int64_t)elem;
            char *h = (char *)host->data + hi * (int64_t)elem;
            if (to_piece) memcpy(p, h, (size_t)w * elem);
            else memcpy(h, p, (size_t)w * elem);
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
 * this one expression (schemes/heat.h). */
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

static pyr_status_t cpu_compute(void *ctx, int slot, const pyr_piece_t *piece, const pyr_heat_coef_t *coef,
                                const pyr_box_t *boxes, int nlayers)
{
    (void)slot;
    const cpu_ctx_t *c = ctx;
    int cur = piece->cur;
    for (int l = 0; l < nlayers; l++) {
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
