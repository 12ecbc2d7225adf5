/* The Poisson (Jacobi) CPU kernel: the expression of src/schemes/poisson.c
 * on one row segment, over the common sweep and wavefront of stencil.h. */
#include "backend/cpu/stencil.h"

/* cf = 1/h_x^2, 1/h_y^2, 1/h_z^2, d = 1 / sum 2/h^2, omega, rounded to T; f
 * points at the right-hand side at the same node, or is NULL (f = 0). */
/* One loop per dimension and form (with or without f, damped or not), so
 * that each vectorises with the loads its form needs only (a loop that
 * chose the form per node let the compiler load the z neighbours of 2D
 * rows, a plane away, for nothing). */
#define JACOBI_LOOP(T, SUM)                                                                                     \
    do {                                                                                                       \
        if (f && !damp)                                                                                        \
            for (int64_t x = 0; x < n; x++) d[x] = ((SUM) + f[x]) * dv;                                       \
        else if (!damp)                                                                                        \
            for (int64_t x = 0; x < n; x++) d[x] = (SUM) * dv;                                                \
        else                                                                                                   \
            for (int64_t x = 0; x < n; x++) {                                                                  \
                const T j = f ? ((SUM) + f[x]) * dv : (SUM) * dv;                                             \
                d[x] = s[x] + om * (j - s[x]);                                                                 \
            }                                                                                                  \
    } while (0)

#define DEFINE_JACOBI_ROW(NAME, T)                                                                             \
    static inline void NAME(const T *s, T *d, const T *f, int64_t n, int dims, const T *cf, int64_t pitch,     \
                            int64_t plane)                                                                     \
    {                                                                                                          \
        const T cx = cf[0], cy = cf[1], cz = cf[2], dv = cf[3], om = cf[4];                                    \
        const int damp = om != (T)1;                                                                           \
        if (dims == 1) JACOBI_LOOP(T, cx * (s[x - 1] + s[x + 1]));                                              \
        else if (dims == 2) JACOBI_LOOP(T, cx * (s[x - 1] + s[x + 1]) + cy * (s[x - pitch] + s[x + pitch]));     \
        else                                                                                                   \
            JACOBI_LOOP(T, (cx * (s[x - 1] + s[x + 1]) + cy * (s[x - pitch] + s[x + pitch])) +                    \
                        cz * (s[x - plane] + s[x + plane]));                                                   \
    }

DEFINE_JACOBI_ROW(jacobi_row_f32, float)
DEFINE_JACOBI_ROW(jacobi_row_f64, double)

PYR_CPU_KERNEL(jacobi, jacobi_row_f32, jacobi_row_f64, 5)

const pyr_kernel_t pyr_kernel_cpu_poisson = {
    .equation = PYR_EQ_POISSON,
    .backend = PYR_BACKEND_CPU,
    .help = "auto | sweep | wave[:TILE,SLAB,GROUP]",
    .check = pyr_cpu_variant_check,
    .default_variant = pyr_cpu_variant_default,
    .candidates = pyr_cpu_variant_candidates,
    .run = jacobi_run,
};
