/* The heat scheme's CPU kernel: the expression of src/schemes/heat.c on one
 * row segment, over the common sweep and wavefront of stencil.h. */
#include "backend/cpu/stencil.h"

/* cf = r_x, r_y, r_z rounded to T; f is unused (heat has no input field). */
#define DEFINE_HEAT_ROW(NAME, T)                                                                               \
    static inline void NAME(const T *s, T *d, const T *f, int64_t n, int dims, const T *cf, int64_t pitch,     \
                            int64_t plane)                                                                     \
    {                                                                                                          \
        (void)f;                                                                                               \
        const T rx = cf[0], ry = cf[1], rz = cf[2];                                                            \
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

DEFINE_HEAT_ROW(heat_row_f32, float)
DEFINE_HEAT_ROW(heat_row_f64, double)

PYR_CPU_KERNEL(heat, heat_row_f32, heat_row_f64, 3)

/* kernels.h last_box_only: a call of one step writes its box alone (one of
 * several writes its middle layers into both buffers).  The skewed executor
 * then queues copies beside it on the lane, which the CPU runtime runs as late
 * as its waits allow: the CPU tests check that order with every one-step call. */
static int heat_last_box_only(void *ctx, const pyr_kernel_call_t *call)
{
    (void)ctx;
    return call->nboxes == 1;
}

/* kernels.h saves: a one-step call (last-box-only) copies its save box out of its input before computing, as
 * the CUDA kernels do while they read it, so that the CPU tests run the skewed executor's in-kernel saves. */
static int heat_saves(void *ctx, const pyr_kernel_call_t *call)
{
    (void)ctx;
    const pyr_piece_t *p = call->piece, *st = call->save_to;
    if (!st || call->nboxes != 1 || pyr_box_empty(&call->save)) return 0;
    for (int a = 0; a < 3; a++)
        if (call->save.lo[a] < p->box.lo[a] || call->save.hi[a] > p->box.hi[a] || call->save.lo[a] < st->box.lo[a] ||
            call->save.hi[a] > st->box.hi[a])
            return 0;
    return 1;
}

static pyr_status_t heat_run_saving(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    if (call->save_to) {
        if (!heat_saves(ctx, call)) return pyr_fail(PYR_ERR_INTERNAL, "CPU backend: a save the kernel does not take (kernels.h saves)");
        const pyr_cpu_ctx_t *c = ctx;
        const pyr_piece_t *p = call->piece, *st = call->save_to;
        const pyr_box_t *b = &call->save;
        const size_t row = (size_t)pyr_box_extent(b, 0) * c->elem;
        for (int64_t z = b->lo[2]; z < b->hi[2]; z++)
            for (int64_t y = b->lo[1]; y < b->hi[1]; y++)
                memcpy((char *)st->buf[0][0] + pyr_piece_index(st, b->lo[0], y, z) * (int64_t)c->elem,
                       (const char *)p->buf[0][p->cur] + pyr_piece_index(p, b->lo[0], y, z) * (int64_t)c->elem, row);
    }
    return heat_run(ctx, slot, call);
}

const pyr_kernel_t pyr_kernel_cpu_heat = {
    .equation = PYR_EQ_HEAT,
    .backend = PYR_BACKEND_CPU,
    .help = "auto | sweep | wave[:TILE,SLAB,GROUP]",
    .check = pyr_cpu_variant_check,
    .default_variant = pyr_cpu_variant_default,
    .candidates = pyr_cpu_variant_candidates,
    .run = heat_run_saving,
    .last_box_only = heat_last_box_only,
    .saves = heat_saves,
};
