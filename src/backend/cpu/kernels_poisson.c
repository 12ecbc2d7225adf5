/* The Poisson (Jacobi) CPU kernel: the expression of src/schemes/poisson.c
 * on one row segment, over the common sweep and wavefront of stencil.h. */
#include <string.h>

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

/* Problems with a Neumann face (schemes/poisson.h): the rows of the common
 * sweep and wavefront, each told where it lies, so that a node on a Neumann
 * face reads the ghost (inner neighbour + t) where its neighbour would be
 * outside the grid.  The node's expression is the one of
 * src/schemes/poisson.c, term for term; a row with no ghost runs the
 * interior's row function (the same expression).  Neighbours stay within one
 * node along every axis, which is all the wavefront's order needs. */
typedef struct {
    int on[6];
    int64_t at[6];
    float t32[6]; /* t = 2 h G rounded once to each precision */
    double t64[6];
} faces_t;

/* One node: xm .. zp its neighbours (a ghost already in place of one
 * outside the grid), the expression of src/schemes/poisson.c. */
#define NEUMANN_NODE(T, XM, XP, YM, YP, ZM, ZP)                                                                \
    do {                                                                                                       \
        T s = cx * ((XM) + (XP));                                                                              \
        if (dims > 1) s = s + cy * ((YM) + (YP));                                                              \
        if (dims > 2) s = s + cz * ((ZM) + (ZP));                                                              \
        const T j = f ? (s + f[x]) * dv : s * dv;                                                              \
        const T u = c0[x];                                                                                     \
        const T d = damp ? u + om * (j - u) : j;                                                               \
        if (cheb) {                                                                                            \
            const T p = o[x];                                                                                  \
            o[x] = p + w * (d - p);                                                                            \
        } else {                                                                                               \
            o[x] = d;                                                                                          \
        }                                                                                                      \
    } while (0)

/* A row segment of n nodes from (x0, y, z): the y and z neighbours' rows
 * chosen once (a face row reads its inner neighbour's row twice, once plus
 * t), the x faces' nodes peeled. */
#define DEFINE_NEUMANN_ROW(NAME, T, ROW, TF)                                                                   \
    static inline void NAME(const T *c0, T *o, const T *f, int64_t n, int dims, const T *cf, int64_t pitch,    \
                            int64_t plane, int64_t x0, int64_t y, int64_t z, const void *ext)                  \
    {                                                                                                          \
        const faces_t *fc = ext;                                                                               \
        const T cx = cf[0], cy = cf[1], cz = cf[2], dv = cf[3], om = cf[4], w = cf[6];                         \
        const T *t = fc->TF;                                                                                   \
        const int damp = om != (T)1, cheb = w != (T)1;                                                         \
        const int xlo = fc->on[0] && x0 == fc->at[0], xhi = fc->on[1] && x0 + n - 1 == fc->at[1];              \
        const int ylo = dims > 1 && fc->on[2] && y == fc->at[2], yhi = dims > 1 && fc->on[3] && y == fc->at[3]; \
        const int zlo = dims > 2 && fc->on[4] && z == fc->at[4], zhi = dims > 2 && fc->on[5] && z == fc->at[5]; \
        const int yg = ylo ? 2 : yhi ? 3 : -1, zg = zlo ? 4 : zhi ? 5 : -1;                                    \
        if (!xlo && !xhi && yg < 0 && zg < 0 && !(cheb && damp)) {                                             \
            ROW(c0, o, f, n, dims, cf, pitch, plane);                                                          \
            return;                                                                                            \
        }                                                                                                      \
        const T *ym = dims > 1 ? c0 + (ylo ? pitch : -pitch) : c0, *yp = dims > 1 ? c0 + (yhi ? -pitch : pitch) : c0; \
        const T *zm = dims > 2 ? c0 + (zlo ? plane : -plane) : c0, *zp = dims > 2 ? c0 + (zhi ? -plane : plane) : c0; \
        int64_t a = 0, e = n;                                                                                  \
        if (xlo) {                                                                                             \
            const int64_t x = 0;                                                                               \
            const T xg = c0[x + 1] + t[0];                                                                     \
            const T ya = yg == 2 ? yp[x] + t[2] : ym[x], yb = yg == 3 ? ym[x] + t[3] : yp[x];                   \
            const T za = zg == 4 ? zp[x] + t[4] : zm[x], zb = zg == 5 ? zm[x] + t[5] : zp[x];                   \
            NEUMANN_NODE(T, xg, c0[x + 1], ya, yb, za, zb);                                                    \
            a++;                                                                                               \
        }                                                                                                      \
        if (xhi && e > a) {                                                                                    \
            const int64_t x = n - 1;                                                                           \
            const T xg = c0[x - 1] + t[1];                                                                     \
            const T ya = yg == 2 ? yp[x] + t[2] : ym[x], yb = yg == 3 ? ym[x] + t[3] : yp[x];                   \
            const T za = zg == 4 ? zp[x] + t[4] : zm[x], zb = zg == 5 ? zm[x] + t[5] : zp[x];                   \
            NEUMANN_NODE(T, c0[x - 1], xg, ya, yb, za, zb);                                                    \
            e--;                                                                                               \
        }                                                                                                      \
        if (yg < 0 && zg < 0 && !(cheb && damp)) {                                                             \
            /* no ghost between the peeled ends: the interior's row, the same expression */                    \
            if (e > a) ROW(c0 + a, o + a, f ? f + a : NULL, e - a, dims, cf, pitch, plane);                    \
        } else if (yg < 0 && zg < 0)                                                                           \
            for (int64_t x = a; x < e; x++) NEUMANN_NODE(T, c0[x - 1], c0[x + 1], ym[x], yp[x], zm[x], zp[x]); \
        else if (zg < 0)                                                                                       \
            for (int64_t x = a; x < e; x++) {                                                                  \
                const T ya = yg == 2 ? yp[x] + t[2] : ym[x], yb = yg == 3 ? ym[x] + t[3] : yp[x];               \
                NEUMANN_NODE(T, c0[x - 1], c0[x + 1], ya, yb, zm[x], zp[x]);                                   \
            }                                                                                                  \
        else                                                                                                   \
            for (int64_t x = a; x < e; x++) {                                                                  \
                const T ya = yg == 2 ? yp[x] + t[2] : ym[x], yb = yg == 3 ? ym[x] + t[3] : yp[x];               \
                const T za = zg == 4 ? zp[x] + t[4] : zm[x], zb = zg == 5 ? zm[x] + t[5] : zp[x];               \
                NEUMANN_NODE(T, c0[x - 1], c0[x + 1], ya, yb, za, zb);                                         \
            }                                                                                                  \
    }

DEFINE_NEUMANN_ROW(neumann_row_f32, float, jacobi_row_f32, t32)
DEFINE_NEUMANN_ROW(neumann_row_f64, double, jacobi_row_f64, t64)

PYR_CPU_KERNEL_X(neumann, neumann_row_f32, neumann_row_f64, 7)

/* The faces' table of a problem with a Neumann face, after checking that
 * every node a box holds has its neighbours in the piece, or is a face's
 * node that reads a ghost instead. */
static pyr_status_t neumann_faces(const pyr_kernel_call_t *call, faces_t *fc)
{
    const pyr_coef_t *coef = call->coef;
    const pyr_piece_t *piece = call->piece;
    const int dims = coef->dims;
    if (!coef->aux || coef->naux < PYR_POISSON_FACES_AUX)
        return pyr_fail(PYR_ERR_INTERNAL, "Poisson kernel: Neumann faces without their table");
    for (int k = 0; k < 6; k++) {
        fc->on[k] = coef->aux[3 * k] != 0;
        fc->at[k] = (int64_t)coef->aux[3 * k + 1];
        fc->t64[k] = coef->aux[3 * k + 2];
        fc->t32[k] = (float)coef->aux[3 * k + 2];
    }
    for (int l = 0; l < call->nboxes; l++) {
        const pyr_box_t *b = &call->boxes[l];
        if (pyr_box_empty(b)) continue;
        for (int a = 0; a < dims; a++)
            if ((b->lo[a] < piece->box.lo[a] + 1 && !(fc->on[2 * a] && b->lo[a] == fc->at[2 * a] && b->lo[a] >= piece->box.lo[a])) ||
                (b->hi[a] > piece->box.hi[a] - 1 && !(fc->on[2 * a + 1] && b->hi[a] - 1 == fc->at[2 * a + 1] && b->hi[a] <= piece->box.hi[a])))
                return pyr_fail(PYR_ERR_INTERNAL, "Poisson kernel: layer %d's box leaves its piece", l);
    }
    return PYR_OK;
}

/* The layers of a call of one weight: the Dirichlet kernel, or the Neumann
 * one with the faces' table. */
static pyr_status_t run_layers(void *ctx, int slot, const pyr_kernel_call_t *call, const faces_t *fc)
{
    return fc ? neumann_run_x(ctx, slot, call, fc) : jacobi_run(ctx, slot, call);
}

/* The layer two back of the call's first sub-step, where it lies older_shift planes (rows in 2D) below
 * the nodes' places in the output buffer (kernels.h older_shift), moved into those places over the
 * sub-step's box, the highest plane first (each move overwrites the layer before of the plane
 * older_shift above, moved already); then the sub-step reads it in place, as every other. */
static void move_older(const pyr_kernel_call_t *call, size_t elem)
{
    const pyr_piece_t *p = call->piece;
    const pyr_box_t *b = &call->boxes[0];
    const int dims = call->coef->dims, a = dims - 1;
    if (pyr_box_empty(b) || call->older_shift <= 0) return;
    char *out = p->buf[0][p->cur ^ 1];
    const int64_t rows = pyr_box_extent(&p->box, 1);
    const int64_t stride = a == 2 ? p->pitch * rows : a == 1 ? p->pitch : 1;
    const size_t bytes = (size_t)pyr_box_extent(b, 0) * elem;
    if (a == 0) { /* 1D: one row, the shift along it */
        char *d = out + (size_t)pyr_piece_index(p, b->lo[0], b->lo[1], b->lo[2]) * elem;
        memmove(d, d - (size_t)call->older_shift * elem, bytes);
        return;
    }
    for (int64_t z = b->hi[2] - 1; z >= b->lo[2]; z--)
        for (int64_t y = b->hi[1] - 1; y >= b->lo[1]; y--) {
            char *d = out + (size_t)pyr_piece_index(p, b->lo[0], y, z) * elem;
            memcpy(d, d - (size_t)(call->older_shift * stride) * elem, bytes);
        }
}

/* The call with every layer's coefficient 6 set to its weight: plain and
 * damped Jacobi in one call (weight 1), Chebyshev's sweeps in runs of
 * layers of one weight (each run one call of the common machinery, its
 * layers then in one wavefront; the weights stop changing after the
 * first few thousand sweeps, and from there a call is one run). */
static pyr_status_t poisson_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    faces_t faces, *fc = NULL;
    if (call->coef->c[PYR_POISSON_FACES_COEF] != 0) {
        PYR_TRY(neumann_faces(call, &faces));
        fc = &faces;
    }
    pyr_coef_t coef = *call->coef;
    pyr_kernel_call_t sub = *call;
    sub.coef = &coef;
    if (call->coef->c[PYR_POISSON_CHEBYSHEV_COEF] == 0) {
        coef.c[PYR_POISSON_CHEBYSHEV_COEF] = 1;
        return run_layers(ctx, slot, &sub, fc);
    }
    int64_t nw = 0;
    const double *wt = pyr_poisson_weights(call->coef, &nw);
    if (!wt || nw < 1) return pyr_fail(PYR_ERR_INTERNAL, "Poisson kernel: Chebyshev sweeps without their weights");
    const int is_double = ((const pyr_cpu_ctx_t *)ctx)->precision == PYR_DOUBLE;
    if (call->nboxes > 0) move_older(call, is_double ? sizeof(double) : sizeof(float));
    pyr_piece_t piece = *call->piece;
    sub.piece = &piece;
    for (int l = 0; l < call->nboxes;) {
        const double w = pyr_poisson_weight(wt, nw, call->step + l);
        int k = 1;
        /* layers whose weights round to the same value in the run's precision */
        while (l + k < call->nboxes) {
            const double v = pyr_poisson_weight(wt, nw, call->step + l + k);
            if (is_double ? v != w : (float)v != (float)w) break;
            k++;
        }
        coef.c[PYR_POISSON_CHEBYSHEV_COEF] = w;
        sub.boxes = call->boxes + l;
        sub.nboxes = k;
        PYR_TRY(run_layers(ctx, slot, &sub, fc));
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
