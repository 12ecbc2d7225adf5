/* The Poisson (Jacobi) CPU kernel: the expression of src/schemes/poisson.c
 * on one row segment, over the common sweep and wavefront of stencil.h. */
#include "backend/cpu/stencil.h"
#include "schemes/poisson.h"

/* cf = 1/h_x^2, 1/h_y^2, 1/h_z^2, d = 1 / sum 2/h^2, omega, (unused), w,
 * rounded to T; f points at the right-hand side at the same node, or is
 * NULL (f = 0).  w is the sweep's Chebyshev weight (1: plain or damped
 * Jacobi); with w != 1 the output row holds the layer two sweeps back,
 * read at each node before the node is written. */
/* One loop per dimension and form (with or without f, damped or not), so
 * that each vectorises with the loads its form needs only (a loop that
 * chose the form per node let the compiler load the z neighbours of 2D
 * rows, a plane away, for nothing). */
#define JACOBI_LOOP(T, SUM)                                                                                     \
    do {                                                                                                       \
        if (cheb)                                                                                              \
            for (int64_t x = 0; x < n; x++) {                                                                  \
                const T j = f ? ((SUM) + f[x]) * dv : (SUM) * dv;                                             \
                d[x] = d[x] + w * (j - d[x]);                                                                  \
            }                                                                                                  \
        else if (f && !damp)                                                                                   \
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
        const T cx = cf[0], cy = cf[1], cz = cf[2], dv = cf[3], om = cf[4], w = cf[6];                         \
        const int damp = om != (T)1, cheb = w != (T)1;                                                         \
        if (dims == 1) JACOBI_LOOP(T, cx * (s[x - 1] + s[x + 1]));                                              \
        else if (dims == 2) JACOBI_LOOP(T, cx * (s[x - 1] + s[x + 1]) + cy * (s[x - pitch] + s[x + pitch]));     \
        else                                                                                                   \
            JACOBI_LOOP(T, (cx * (s[x - 1] + s[x + 1]) + cy * (s[x - pitch] + s[x + pitch])) +                    \
                        cz * (s[x - plane] + s[x + plane]));                                                   \
    }

DEFINE_JACOBI_ROW(jacobi_row_f32, float)
DEFINE_JACOBI_ROW(jacobi_row_f64, double)

PYR_CPU_KERNEL(jacobi, jacobi_row_f32, jacobi_row_f64, 7)

/* The call with every layer's coefficient 6 set to its weight: plain and
 * damped Jacobi in one call (weight 1), Chebyshev's sweeps in runs of
 * layers of one weight (each run one call of the common machinery, its
 * layers then in one wavefront; the weights stop changing after the
 * first few thousand sweeps, and from there a call is one run). */
static pyr_status_t poisson_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    pyr_coef_t coef = *call->coef;
    pyr_kernel_call_t sub = *call;
    sub.coef = &coef;
    if (call->coef->c[PYR_POISSON_CHEBYSHEV_COEF] == 0) {
        coef.c[PYR_POISSON_CHEBYSHEV_COEF] = 1;
        return jacobi_run(ctx, slot, &sub);
    }
    if (!call->coef->aux || call->coef->naux < 1)
        return pyr_fail(PYR_ERR_INTERNAL, "Poisson kernel: Chebyshev sweeps without their weights");
    const int is_double = ((const pyr_cpu_ctx_t *)ctx)->precision == PYR_DOUBLE;
    pyr_piece_t piece = *call->piece;
    sub.piece = &piece;
    for (int l = 0; l < call->nboxes;) {
        const double w = pyr_poisson_weight(call->coef->aux, call->coef->naux, call->step + l);
        int k = 1;
        /* layers whose weights round to the same value in the run's precision */
        while (l + k < call->nboxes) {
            const double v = pyr_poisson_weight(call->coef->aux, call->coef->naux, call->step + l + k);
            if (is_double ? v != w : (float)v != (float)w) break;
            k++;
        }
        coef.c[PYR_POISSON_CHEBYSHEV_COEF] = w;
        sub.boxes = call->boxes + l;
        sub.nboxes = k;
        PYR_TRY(jacobi_run(ctx, slot, &sub));
        piece.cur = (piece.cur + k) & 1;
        l += k;
    }
    return PYR_OK;
}

const pyr_kernel_t pyr_kernel_cpu_poisson = {
    .equation = PYR_EQ_POISSON,
    .backend = PYR_BACKEND_CPU,
    .help = "auto | sweep | wave[:TILE,SLAB,GROUP]",
    .check = pyr_cpu_variant_check,
    .default_variant = pyr_cpu_variant_default,
    .candidates = pyr_cpu_variant_candidates,
    .run = poisson_run,
};
