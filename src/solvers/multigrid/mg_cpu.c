/* The multigrid kernels on the CPU (mg_internal.h): OpenMP over the rows of
 * a level, each node's value by the expressions of mg_internal.h in the
 * same order on every thread, so the thread count changes no bit.  Arrays
 * live in host memory; upload and download are copies. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "solvers/multigrid/mg_internal.h"

/* A transfer issued beside the kernels and not done yet. */
typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
} pending_t;

#define PENDING 8

typedef struct {
    int threads;
    pyr_precision_t precision;
    pending_t up[PENDING], down[PENDING];
    int nup, ndown;
} cpu_ctx_t;

/* Transfers beside the kernels are done when issued, or (late) as late as mg_internal.h lets them: at the join or
 * wait that must see them, so that a pass reading a buffer before its upload is joined, or reusing one before its
 * download is waited for, reads or sends stale values and the tests see it. */
static int late;

void pyr_mg_cpu_late_transfers(int on) { late = on; }

/* Rows worth sharing among threads: below this a level runs on one. */
#define PAR_NODES 32768

static pyr_status_t cpu_create(int device, int threads, pyr_precision_t precision, void **out)
{
    (void)device;
    cpu_ctx_t *c = malloc(sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    memset(c, 0, sizeof *c);
    c->threads = threads > 0 ? threads : omp_get_max_threads();
    c->precision = precision;
    *out = c;
    return PYR_OK;
}

static void cpu_destroy(void *ctx) { free(ctx); }

static pyr_status_t cpu_alloc(void *ctx, size_t bytes, void **buf)
{
    (void)ctx;
    *buf = calloc(1, bytes ? bytes : 1);
    if (!*buf) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for a multigrid level (%.3g GiB)", (double)bytes / 1073741824.0);
    return PYR_OK;
}

static void cpu_release(void *ctx, void *buf)
{
    (void)ctx;
    free(buf);
}

static pyr_status_t cpu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memcpy(dst, src, bytes);
    return PYR_OK;
}

static void flush(pending_t *q, int *n)
{
    for (int i = 0; i < *n; i++) memcpy(q[i].dst, q[i].src, q[i].bytes);
    *n = 0;
}

static pyr_status_t later(pending_t *q, int *n, void *dst, const void *src, size_t bytes)
{
    if (!late) {
        memcpy(dst, src, bytes);
        return PYR_OK;
    }
    if (*n == PENDING) flush(q, n);
    q[(*n)++] = (pending_t){dst, src, bytes};
    return PYR_OK;
}

static pyr_status_t cpu_upload_async(void *ctx, void *dst, const void *src, size_t bytes)
{
    cpu_ctx_t *c = ctx;
    return later(c->up, &c->nup, dst, src, bytes);
}

static pyr_status_t cpu_upload_join(void *ctx)
{
    cpu_ctx_t *c = ctx;
    flush(c->up, &c->nup);
    return PYR_OK;
}

static pyr_status_t cpu_download_async(void *ctx, void *dst, const void *src, size_t bytes)
{
    cpu_ctx_t *c = ctx;
    return later(c->down, &c->ndown, dst, src, bytes);
}

static pyr_status_t cpu_download_wait(void *ctx)
{
    cpu_ctx_t *c = ctx;
    flush(c->down, &c->ndown);
    return PYR_OK;
}

static pyr_status_t cpu_settle(void *ctx)
{
    cpu_ctx_t *c = ctx;
    flush(c->up, &c->nup);
    flush(c->down, &c->ndown);
    return PYR_OK;
}

static pyr_status_t cpu_zero(void *ctx, void *buf, size_t bytes)
{
    (void)ctx;
    memset(buf, 0, bytes);
    return PYR_OK;
}

/* The unknowns of a level along each axis (mg_internal.h). */
#define RANGE(g, a, lo, hi) const int64_t lo = pyr_mg_lo(g, a), hi = pyr_mg_hi(g, a)

/* s of mg_internal.h at node i of u (strides 1, sy, sz), the unused axes' terms left out. */
#define STENCIL(T, u, i, sy, sz)                                                                                                     \
    (dims == 1   ? cx * (u[i - 1] + u[i + 1])                                                                                        \
     : dims == 2 ? cx * (u[i - 1] + u[i + 1]) + cy * (u[i - sy] + u[i + sy])                                                         \
                 : (cx * (u[i - 1] + u[i + 1]) + cy * (u[i - sy] + u[i + sy])) + cz * (u[i - sz] + u[i + sz]))

/* s at node i = (x, y, z) on a Neumann face: the ghost inner + t in place of each neighbour outside the grid
 * (only a Neumann face's nodes are unknowns at an axis's ends), the same expression as STENCIL. */
#define DEFINE_FACE_STENCIL(T, SFX)                                                                                                  \
    static inline T face_stencil_##SFX(int dims, const T *u, int64_t i, int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny,     \
                                       int64_t nz, int64_t sy, int64_t sz, T cx, T cy, T cz, const T *tt)                            \
    {                                                                                                                                \
        const T xm = x == 0 ? u[i + 1] + tt[0] : u[i - 1], xp = x == nx - 1 ? u[i - 1] + tt[1] : u[i + 1];                           \
        if (dims == 1) return cx * (xm + xp);                                                                                        \
        const T ym = y == 0 ? u[i + sy] + tt[2] : u[i - sy], yp = y == ny - 1 ? u[i - sy] + tt[3] : u[i + sy];                       \
        if (dims == 2) return cx * (xm + xp) + cy * (ym + yp);                                                                       \
        const T zm = z == 0 ? u[i + sz] + tt[4] : u[i - sz], zp = z == nz - 1 ? u[i - sz] + tt[5] : u[i + sz];                       \
        return (cx * (xm + xp) + cy * (ym + yp)) + cz * (zm + zp);                                                                   \
    }

DEFINE_FACE_STENCIL(double, d)
DEFINE_FACE_STENCIL(float, f)

#define STENCIL_FACE(T, u, i, sy, sz)                                                                                                \
    _Generic((u), const double *: face_stencil_d, double *: face_stencil_d, const float *: face_stencil_f, float *: face_stencil_f)(   \
        dims, u, i, x, y, z, nx, ny, nz, sy, sz, cx, cy, cz, tt)

/* The unknowns of a level row by row: a row on a Neumann face of y or z, and the x faces' nodes of the other rows,
 * through STENCIL_FACE; the rest of a row through STENCIL, branch-free.  NODE(S) writes node i from its s. */
#define FOR_UNKNOWNS(T, NODE, REDUCTION)                                                                                             \
    _Pragma(REDUCTION)                                                                                                               \
    for (int64_t z = z0; z < z1; z++)                                                                                                \
        for (int64_t y = y0; y < y1; y++) {                                                                                          \
            const int64_t row = z * sz + y * sy;                                                                                     \
            const int face_row = (dims > 1 && (y == 0 || y == ny - 1)) || (dims > 2 && (z == 0 || z == nz - 1));                     \
            const int64_t a = face_row ? x1 : x0 > 0 ? x0 : 1, e = face_row ? x1 : x1 < nx ? x1 : nx - 1;                          \
            for (int64_t x = x0; x < a; x++) {                                                                                       \
                const int64_t i = row + x;                                                                                           \
                NODE(STENCIL_FACE(T, u, i, sy, sz));                                                                                 \
            }                                                                                                                        \
            for (int64_t i = row + a; i < row + e; i++) NODE(STENCIL(T, u, i, sy, sz));                                              \
            for (int64_t x = e > a ? e : a; x < x1; x++) {                                                                           \
                const int64_t i = row + x;                                                                                           \
                NODE(STENCIL_FACE(T, u, i, sy, sz));                                                                                 \
            }                                                                                                                        \
        }

/* One sweep over the unknowns (mg_internal.h's smooth), specialised by the call below on the dimensions, f's
 * presence and the update's form (0: out = J, 1: out = u + g (J - u), 2: out = p + w (J - p), 3: out = p + w (y - p)),
 * so that each inner loop is branch-free; every form evaluates the expressions of mg_internal.h. */
#define SMOOTH_NODE(S)                                                                                                               \
    do {                                                                                                                             \
        const T s = (S);                                                                                                             \
        const T J = (F) ? (s + f[i]) * d : s * d;                                                                                    \
        const T yv = ((M) & 1) ? u[i] + gm * (J - u[i]) : J;                                                                         \
        out[i] = ((M) & 2) ? out[i] + w * (yv - out[i]) : yv;                                                                        \
    } while (0)

#define SMOOTH_CASE(T_, D, F_, M_)                                                                                                   \
    case (D) * 8 + (F_) * 4 + (M_): {                                                                                                \
        typedef T_ T;                                                                                                                \
        enum { F = (F_), M = (M_), dims = (D) };                                                                                     \
        FOR_UNKNOWNS(T, SMOOTH_NODE, "omp parallel for collapse(2) schedule(static) num_threads(threads) if ((y1 - y0) * (z1 - z0) * nx > PAR_NODES)") \
        break;                                                                                                                       \
    }

#define RESIDUAL_NODE(S)                                                                                                             \
    do {                                                                                                                             \
        const T s = (S);                                                                                                             \
        const T v = ((F) ? s + f[i] : s) - Dg * u[i];                                                                                \
        r[i] = v;                                                                                                                    \
        const double av = fabs((double)v);                                                                                           \
        nan |= av != av;                                                                                                             \
        m = av > m ? av : m;                                                                                                         \
    } while (0)

#define RESIDUAL_CASE(T_, D, F_)                                                                                                     \
    case (D) * 2 + (F_): {                                                                                                           \
        typedef T_ T;                                                                                                                \
        enum { F = (F_), dims = (D) };                                                                                               \
        FOR_UNKNOWNS(T, RESIDUAL_NODE, "omp parallel for collapse(2) schedule(static) num_threads(threads) reduction(max : m) reduction(| : nan) if ((y1 - y0) * (z1 - z0) * nx > PAR_NODES)") \
        break;                                                                                                                       \
    }

/* The geometry every kernel of a level reads. */
#define LEVEL(T, g)                                                                                                                  \
    const T cx = (T)(g)->c[0], cy = (T)(g)->c[1], cz = (T)(g)->c[2];                                                                 \
    const T tt[6] = {(T)(g)->t[0], (T)(g)->t[1], (T)(g)->t[2], (T)(g)->t[3], (T)(g)->t[4], (T)(g)->t[5]};                         \
    const int64_t nx = (g)->n[0], ny = (g)->n[1], nz = (g)->n[2], sy = nx, sz = nx * ny;                                            \
    RANGE(g, 0, x0, x1);                                                                                                             \
    RANGE(g, 1, y0, y1);                                                                                                             \
    RANGE(g, 2, z0, z1);                                                                                                             \
    (void)tt, (void)nz

/* The fine node that full weighting reads at offset o from fine node i along an axis of n nodes: the reflection
 * through a face (the neighbour inside) where i + o lies outside the grid. */
#define REFLECT(i, o, n) ((i) + (o) < 0 || (i) + (o) >= (n) ? (i) - (o) : (i) + (o))

#define DEFINE_KERNELS(T, SFX)                                                                                                       \
    static void smooth_##SFX(const cpu_ctx_t *c, const pyr_mg_geom_t *g, const T *u, const T *f, T *out, double g_, double w_,      \
                             int first)                                                                                              \
    {                                                                                                                                \
        const int nd = g->used[2] ? 3 : g->used[1] ? 2 : 1, threads = c->threads;                                                    \
        LEVEL(T, g);                                                                                                                 \
        const T d = (T)g->d, gm = (T)g_, w = (T)w_;                                                                                  \
        const int form = (g_ == 1.0 ? 0 : 1) + (first ? 0 : 2);                                                                      \
        switch (nd * 8 + (f ? 4 : 0) + form) {                                                                                       \
            SMOOTH_CASE(T, 1, 0, 0) SMOOTH_CASE(T, 1, 0, 1) SMOOTH_CASE(T, 1, 0, 2) SMOOTH_CASE(T, 1, 0, 3)                          \
            SMOOTH_CASE(T, 1, 1, 0) SMOOTH_CASE(T, 1, 1, 1) SMOOTH_CASE(T, 1, 1, 2) SMOOTH_CASE(T, 1, 1, 3)                          \
            SMOOTH_CASE(T, 2, 0, 0) SMOOTH_CASE(T, 2, 0, 1) SMOOTH_CASE(T, 2, 0, 2) SMOOTH_CASE(T, 2, 0, 3)                          \
            SMOOTH_CASE(T, 2, 1, 0) SMOOTH_CASE(T, 2, 1, 1) SMOOTH_CASE(T, 2, 1, 2) SMOOTH_CASE(T, 2, 1, 3)                          \
            SMOOTH_CASE(T, 3, 0, 0) SMOOTH_CASE(T, 3, 0, 1) SMOOTH_CASE(T, 3, 0, 2) SMOOTH_CASE(T, 3, 0, 3)                          \
            SMOOTH_CASE(T, 3, 1, 0) SMOOTH_CASE(T, 3, 1, 1) SMOOTH_CASE(T, 3, 1, 2) SMOOTH_CASE(T, 3, 1, 3)                          \
        default: break;                                                                                                              \
        }                                                                                                                            \
    }                                                                                                                                \
    static double residual_##SFX(const cpu_ctx_t *c, const pyr_mg_geom_t *g, const T *u, const T *f, T *r)                          \
    {                                                                                                                                \
        const int nd = g->used[2] ? 3 : g->used[1] ? 2 : 1, threads = c->threads;                                                   \
        LEVEL(T, g);                                                                                                                 \
        const T Dg = (T)g->D;                                                                                                        \
        double m = 0;                                                                                                                \
        int nan = 0;                                                                                                                 \
        switch (nd * 2 + (f ? 1 : 0)) {                                                                                              \
            RESIDUAL_CASE(T, 1, 0) RESIDUAL_CASE(T, 1, 1) RESIDUAL_CASE(T, 2, 0) RESIDUAL_CASE(T, 2, 1) RESIDUAL_CASE(T, 3, 0)        \
            RESIDUAL_CASE(T, 3, 1)                                                                                                   \
        default: break;                                                                                                              \
        }                                                                                                                            \
        return nan ? NAN : m;                                                                                                        \
    }                                                                                                                                \
    static void restrict_##SFX(const cpu_ctx_t *c, const pyr_mg_geom_t *fg, const int k[3], const T *rf, const pyr_mg_geom_t *cg,  \
                               T *fc)                                                                                                \
    {                                                                                                                                \
        const T q = (T)0.25, hf = (T)0.5;                                                                                            \
        const int64_t fsy = fg->n[0], fsz = fg->n[0] * fg->n[1], csy = cg->n[0], csz = cg->n[0] * cg->n[1];                          \
        RANGE(cg, 0, x0, x1);                                                                                                        \
        RANGE(cg, 1, y0, y1);                                                                                                        \
        RANGE(cg, 2, z0, z1);                                                                                                        \
        _Pragma("omp parallel for collapse(2) schedule(static) num_threads(c->threads) if ((y1 - y0) * (z1 - z0) * cg->n[0] > PAR_NODES)") \
        for (int64_t Z = z0; Z < z1; Z++)                                                                                            \
            for (int64_t Y = y0; Y < y1; Y++)                                                                                        \
                for (int64_t X = x0; X < x1; X++) {                                                                                  \
                    const int64_t fx = k[0] ? 2 * X : X, fy = k[1] ? 2 * Y : Y, fz = k[2] ? 2 * Z : Z;                               \
                    const int64_t xm = REFLECT(fx, -1, fg->n[0]) - fx, xp = REFLECT(fx, 1, fg->n[0]) - fx;                           \
                    T ty[3];                                                                                                         \
                    for (int oz = k[2] ? -1 : 0; oz <= (k[2] ? 1 : 0); oz++) {                                                       \
                        T tx[3];                                                                                                     \
                        for (int oy = k[1] ? -1 : 0; oy <= (k[1] ? 1 : 0); oy++) {                                                   \
                            const T *p = rf + REFLECT(fz, oz, fg->n[2]) * fsz + REFLECT(fy, oy, fg->n[1]) * fsy + fx;                \
                            tx[oy + 1] = k[0] ? q * (p[xm] + p[xp]) + hf * p[0] : p[0];                                              \
                        }                                                                                                            \
                        ty[oz + 1] = k[1] ? q * (tx[0] + tx[2]) + hf * tx[1] : tx[1];                                                \
                    }                                                                                                                \
                    fc[Z * csz + Y * csy + X] = k[2] ? q * (ty[0] + ty[2]) + hf * ty[1] : ty[1];                                     \
                }                                                                                                                    \
    }                                                                                                                                \
    static void prolong_##SFX(const cpu_ctx_t *c, const pyr_mg_geom_t *cg, const int k[3], const T *ec, const pyr_mg_geom_t *fg,    \
                              T *uf)                                                                                                 \
    {                                                                                                                                \
        const T hf = (T)0.5;                                                                                                         \
        const int64_t fsy = fg->n[0], fsz = fg->n[0] * fg->n[1], csy = cg->n[0], csz = cg->n[0] * cg->n[1];                          \
        RANGE(fg, 0, x0, x1);                                                                                                        \
        RANGE(fg, 1, y0, y1);                                                                                                        \
        RANGE(fg, 2, z0, z1);                                                                                                        \
        _Pragma("omp parallel for collapse(2) schedule(static) num_threads(c->threads) if ((y1 - y0) * (z1 - z0) * fg->n[0] > PAR_NODES)") \
        for (int64_t z = z0; z < z1; z++)                                                                                            \
            for (int64_t y = y0; y < y1; y++)                                                                                        \
                for (int64_t x = x0; x < x1; x++) {                                                                                  \
                    const int64_t X = k[0] ? x / 2 : x, Y = k[1] ? y / 2 : y, Z = k[2] ? z / 2 : z;                                  \
                    const int two_x = k[0] && (x & 1), two_y = k[1] && (y & 1), two_z = k[2] && (z & 1);                             \
                    T ty[2];                                                                                                         \
                    for (int jz = 0; jz <= two_z; jz++) {                                                                            \
                        T tx[2];                                                                                                     \
                        for (int jy = 0; jy <= two_y; jy++) {                                                                        \
                            const T *p = ec + (Z + jz) * csz + (Y + jy) * csy + X;                                                   \
                            tx[jy] = two_x ? hf * (p[0] + p[1]) : p[0];                                                              \
                        }                                                                                                            \
                        ty[jz] = two_y ? hf * (tx[0] + tx[1]) : tx[0];                                                               \
                    }                                                                                                                \
                    const int64_t i = z * fsz + y * fsy + x;                                                                         \
                    uf[i] = uf[i] + (two_z ? hf * (ty[0] + ty[1]) : ty[0]);                                                          \
                }                                                                                                                    \
    }

DEFINE_KERNELS(double, d)
DEFINE_KERNELS(float, f)

static pyr_status_t cpu_smooth(void *ctx, const pyr_mg_geom_t *geom, const void *u, const void *f, void *out, double g, double w, int first)
{
    const cpu_ctx_t *c = ctx;
    if (c->precision == PYR_DOUBLE) smooth_d(c, geom, u, f, out, g, w, first);
    else smooth_f(c, geom, u, f, out, g, w, first);
    return PYR_OK;
}

static pyr_status_t cpu_residual(void *ctx, const pyr_mg_geom_t *g, const void *u, const void *f, void *r, double *maxabs)
{
    const cpu_ctx_t *c = ctx;
    const double m = c->precision == PYR_DOUBLE ? residual_d(c, g, u, f, r) : residual_f(c, g, u, f, r);
    if (maxabs) *maxabs = m;
    return PYR_OK;
}

static pyr_status_t cpu_restrict(void *ctx, const pyr_mg_geom_t *fine, const int k[3], const void *rf, const pyr_mg_geom_t *coarse, void *fc)
{
    const cpu_ctx_t *c = ctx;
    if (c->precision == PYR_DOUBLE) restrict_d(c, fine, k, rf, coarse, fc);
    else restrict_f(c, fine, k, rf, coarse, fc);
    return PYR_OK;
}

static pyr_status_t cpu_prolong(void *ctx, const pyr_mg_geom_t *coarse, const int k[3], const void *ec, const pyr_mg_geom_t *fine, void *uf)
{
    const cpu_ctx_t *c = ctx;
    if (c->precision == PYR_DOUBLE) prolong_d(c, coarse, k, ec, fine, uf);
    else prolong_f(c, coarse, k, ec, fine, uf);
    return PYR_OK;
}

const pyr_mg_ops_t pyr_mg_ops_cpu = {
    .backend = PYR_BACKEND_CPU,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_copy,
    .download = cpu_copy,
    .copy = cpu_copy,
    .zero = cpu_zero,
    .smooth = cpu_smooth,
    .residual = cpu_residual,
    .restrict_fw = cpu_restrict,
    .prolong_add = cpu_prolong,
    .download_async = cpu_download_async,
    .download_wait = cpu_download_wait,
    .upload_async = cpu_upload_async,
    .upload_join = cpu_upload_join,
    .settle = cpu_settle,
};
