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

const pyr_kernel_t pyr_kernel_cpu_heat = {
    .equation = PYR_EQ_HEAT,
    .backend = PYR_BACKEND_CPU,
    .help = "auto | sweep | wave[:TILE,SLAB,GROUP]",
    .check = pyr_cpu_variant_check,
    .default_variant = pyr_cpu_variant_default,
    .candidates = pyr_cpu_variant_candidates,
    .run = heat_run,
    .last_box_only = heat_last_box_only,
};
