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

/* kernels.h halo: a one-step call (last-box-only) copies its fill box from the store into its input and
 * then its save box out of it before computing, as the CUDA kernels read and write them while they stream
 * the window, so that the CPU tests run the skewed executor's path for them. */
static int heat_halo(void *ctx, const pyr_kernel_call_t *call)
{
    (void)ctx;
    const pyr_piece_t *p = call->piece;
    if ((!call->save_to && !call->fill_from) || call->nboxes != 1) return 0;
    if (call->save_to && (pyr_box_empty(&call->save) || !pyr_box_contains(&p->box, &call->save) ||
                          !pyr_box_contains(&call->save_to->box, &call->save)))
        return 0;
    if (call->fill_from && (pyr_box_empty(&call->fill) || !pyr_box_contains(&p->box, &call->fill) ||
                            !pyr_box_contains(&call->fill_from->box, &call->fill)))
        return 0;
    return 1;
}

/* The nodes of box b from buffer s of view vs to buffer d of view vd. */
static void copy_box(size_t elem, const pyr_piece_t *vd, void *d, const pyr_piece_t *vs, const void *s, const pyr_box_t *b)
{
    const size_t row = (size_t)pyr_box_extent(b, 0) * elem;
    for (int64_t z = b->lo[2]; z < b->hi[2]; z++)
        for (int64_t y = b->lo[1]; y < b->hi[1]; y++)
            memcpy((char *)d + pyr_piece_index(vd, b->lo[0], y, z) * (int64_t)elem,
                   (const char *)s + pyr_piece_index(vs, b->lo[0], y, z) * (int64_t)elem, row);
}

static pyr_status_t heat_run_halo(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    if (call->save_to || call->fill_from) {
        if (!heat_halo(ctx, call)) return pyr_fail(PYR_ERR_INTERNAL, "CPU backend: a halo the kernel does not take (kernels.h halo)");
        const pyr_cpu_ctx_t *c = ctx;
        const pyr_piece_t *p = call->piece;
        void *in = p->buf[0][p->cur];
        if (call->fill_from) copy_box(c->elem, p, in, call->fill_from, call->fill_from->buf[0][0], &call->fill);
        if (call->save_to) copy_box(c->elem, call->save_to, call->save_to->buf[0][0], p, in, &call->save);
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
    .run = heat_run_halo,
    .last_box_only = heat_last_box_only,
    .halo = heat_halo,
};
