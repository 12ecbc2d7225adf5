/* The multigrid kernels of one backend (mg_cpu.c, cuda/mg_cuda.cu), as the
 * level loop (mg_solve.c) calls them.  Every array is a level's whole grid,
 * x fastest, of the problem's precision; a kernel writes the unknowns only:
 * the interior and the nodes of Neumann faces (a Dirichlet face keeps what it
 * holds: the fine level's values, zero on the coarser levels' corrections;
 * where a Dirichlet face meets a Neumann one the edge is Dirichlet).
 * Coefficients arrive in double and each kernel rounds them once to the
 * precision, as the Poisson kernels do.
 *
 * Every kernel evaluates (terms of unused axes left out)
 *     s  = (cx*(xm + xp) + cy*(ym + yp)) + cz*(zm + zp)
 *     J  = (s + f) * d                      (J = s * d without f)
 *     y  = u + g*(J - u)                    (y = J when g = 1)
 *     smooth:    out = y on a sequence's first sweep, else out = p + w*(y - p)
 *                (p = out before the sweep: the layer two sweeps back, Chebyshev's recurrence)
 *     residual:  r = (s + f) - D*u          (D = 2 (cx + cy + cz), rounded)
 * A Neumann face's node reads, in place of its neighbour outside the grid, the
 * ghost reflected through it, ghost = inner + t (inner its neighbour inside
 * along that axis, t rounded once: 2 h G on the finest level, 0 on the
 * coarser levels, whose corrections have zero flux), as schemes/poisson.c's
 * sweeps do.  Full weighting reads, at a coarse face node, the fine neighbour
 * inside in place of the one outside (the reflection with zero flux), so the
 * coarse problem has the same faces; interpolation covers the face nodes.
 * full weighting nests [1/4 1/2 1/4] as t = 0.25*(a + c) + 0.5*b along x, then y, then z (the coarsened
 * axes only), linear interpolation as t = 0.5*(a + b) between two coarse nodes in that order too. */
#ifndef PYR_SOLVERS_MULTIGRID_MG_INTERNAL_H
#define PYR_SOLVERS_MULTIGRID_MG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One level's geometry and coefficients as the kernels take them. */
typedef struct {
    int64_t n[3];
    int used[3];    /* the axis has more than one node (the scheme's dims) */
    double c[3];    /* 1 / h^2 (0 on unused axes) */
    double d, D;    /* 1 / sum 2 c, and sum 2 c */
    int neumann[6]; /* faces x-, x+, y-, y+, z-, z+ whose nodes are unknowns */
    double t[6];    /* their ghosts' offsets (0 on the other faces) */
} pyr_mg_geom_t;

/* The unknowns along axis a: [lo, hi) (node 0 of an unused axis). */
static inline int64_t pyr_mg_lo(const pyr_mg_geom_t *g, int a) { return g->used[a] && !g->neumann[2 * a] ? 1 : 0; }
static inline int64_t pyr_mg_hi(const pyr_mg_geom_t *g, int a)
{
    return g->used[a] ? (g->neumann[2 * a + 1] ? g->n[a] : g->n[a] - 1) : 1;
}

typedef struct pyr_mg_ops {
    pyr_backend_kind_t backend;
    pyr_status_t (*create)(int device, int threads, pyr_precision_t precision, void **ctx);
    void (*destroy)(void *ctx);
    pyr_status_t (*alloc)(void *ctx, size_t bytes, void **buf); /* zero-filled */
    void (*release)(void *ctx, void *buf);
    pyr_status_t (*upload)(void *ctx, void *dst, const void *src, size_t bytes);
    pyr_status_t (*download)(void *ctx, void *dst, const void *src, size_t bytes);
    pyr_status_t (*copy)(void *ctx, void *dst, const void *src, size_t bytes);
    pyr_status_t (*zero)(void *ctx, void *buf, size_t bytes);
    /* One sweep (f may be NULL: zero): weighted Jacobi is first = 1 with g its weight; Chebyshev's sweeps
     * after the first read out's old value. */
    pyr_status_t (*smooth)(void *ctx, const pyr_mg_geom_t *geom, const void *u, const void *f, void *out, double g, double w, int first);
    /* r = f + lap u at the interior; *maxabs (when not NULL) = max |r| (NaN when a value is NaN). */
    pyr_status_t (*residual)(void *ctx, const pyr_mg_geom_t *g, const void *u, const void *f, void *r, double *maxabs);
    /* fc (the coarse interior) = full weighting of rf along the coarsened axes. */
    pyr_status_t (*restrict_fw)(void *ctx, const pyr_mg_geom_t *fine, const int coarsen[3], const void *rf, const pyr_mg_geom_t *coarse,
                                void *fc);
    /* uf (the fine interior) += linear interpolation of ec along the coarsened axes. */
    pyr_status_t (*prolong_add)(void *ctx, const pyr_mg_geom_t *coarse, const int coarsen[3], const void *ec, const pyr_mg_geom_t *fine,
                                void *uf);
    /* Host memory that copies to and from the device fast, for the streamed levels (optional, NULL: the heap's;
     * a refusal falls back to it): zero-filled arrays of the solve's own, and the caller's u and f pinned for the
     * time of the solve. */
    pyr_status_t (*host_alloc)(void *ctx, size_t bytes, void **buf);
    void (*host_free)(void *ctx, void *buf);
    pyr_status_t (*host_pin)(void *ctx, void *buf, size_t bytes);
    void (*host_unpin)(void *ctx, void *buf);
    /* Transfers beside the kernels.  A download starts once everything issued before it is done and runs while the
     * device goes on (its source stays unwritten until download_wait, which returns once every one issued has
     * landed).  An upload starts once everything issued before it is done and runs beside what is issued after it
     * (its destination stays unread until upload_join, after which the work issued waits for every upload issued
     * before the join).  settle returns once every transfer issued is done. */
    pyr_status_t (*download_async)(void *ctx, void *dst, const void *src, size_t bytes);
    pyr_status_t (*download_wait)(void *ctx);
    pyr_status_t (*upload_async)(void *ctx, void *dst, const void *src, size_t bytes);
    pyr_status_t (*upload_join)(void *ctx);
    pyr_status_t (*settle)(void *ctx);
} pyr_mg_ops_t;

extern const pyr_mg_ops_t pyr_mg_ops_cpu;
/* The CPU's transfers beside the kernels done as late as the ops' contract lets them (on: the tests' check that the
 * passes join and wait where they must), or when issued (off, the default). */
void pyr_mg_cpu_late_transfers(int on);
#ifdef PYR_HAVE_CUDA
extern const pyr_mg_ops_t pyr_mg_ops_cuda;
#endif

#ifdef __cplusplus
}
#endif

#endif
