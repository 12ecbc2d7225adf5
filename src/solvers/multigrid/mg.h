/* Geometric multigrid for the Poisson equation -laplace(u) = f with
 * Dirichlet faces (their nodes keep the initial field's values) and Neumann
 * faces (their nodes are unknowns closed by schemes/poisson.c's reflected
 * ghost, on every level), in core on one device: V- or F-cycles over a hierarchy of vertex-centred
 * grids, weighted-Jacobi smoothing, full weighting, (bi/tri)linear
 * interpolation, the coarsest level solved by Chebyshev-accelerated Jacobi
 * sweeps (exactly where it has one unknown).  The operator of every level is
 * the scheme's 5/7-point Laplacian at that level's spacings, evaluated in
 * schemes/poisson.c's order without FMA contraction, and every reduction is a
 * maximum (exact in any order): the cycle count and every bit of the result
 * are the same for every thread count and backend.
 *
 * Every face Neumann: the problem is singular (constants are its null space).
 * The coarsest level's right-hand side is made compatible (its trapezoid-
 * weighted mean removed, on the host) before its damped Chebyshev sweeps
 * (schemes/poisson.c's gamma and weights for that level), and the result
 * takes the initial field's trapezoid-weighted mean, the constant the Jacobi
 * and Chebyshev sweeps keep.
 *
 * Coarsening: an axis is coarsened by 2 (n -> (n - 1) / 2 + 1) where its
 * coupling 1/h^2 is within a factor of 2 of the strongest axis's (so that
 * anisotropic spacings are coarsened along their fine axes first,
 * semi-coarsening), it has an odd node count and the coarse axis keeps at
 * least 3 nodes; an axis of 3 nodes (one unknown) never needs it.  The
 * hierarchy stops at the first level where a strongly coupled axis cannot
 * be coarsened; a grid whose coarsest level keeps more than
 * PYR_MG_COARSEST_MAX nodes along an axis is refused, naming sizes that
 * work (m * 2^k + 1 nodes, m <= 32). */
#ifndef PYR_SOLVERS_MULTIGRID_MG_H
#define PYR_SOLVERS_MULTIGRID_MG_H

#include <stdint.h>

#include "pyrgrid.h"

#define PYR_MG_MAX_LEVELS 40
#define PYR_MG_COARSEST_MAX 33

/* One level of the hierarchy (0 = the finest). */
typedef struct {
    int64_t n[3];  /* nodes per axis, boundary included (1 on unused axes) */
    double h[3];   /* spacings */
    int coarsen[3]; /* the axes coarsened on the way to the next level */
    /* the smoother's sweeps u + gamma (J u - u), combined by Chebyshev's weights for sigma (sigma = 0: weighted
     * Jacobi, every sweep a sequence's first) */
    double gamma, sigma;
} pyr_mg_level_t;

typedef struct {
    int dims, nlevels;
    pyr_mg_level_t level[PYR_MG_MAX_LEVELS];
    pyr_smoother_t smoother;
    int neumann[6];        /* faces x-, x+, y-, y+, z-, z+ that are Neumann */
    int pure;              /* every face Neumann */
    int64_t coarse_sweeps; /* sweeps of the coarsest level's solve */
    double coarse_rho;     /* the radius its Chebyshev weights are made for: plain Jacobi's there, or (pure) the damped one's */
    double coarse_gamma;   /* its sweeps' damping u + gamma (J u - u): 1, or pure Neumann's */
    int pre, post;        /* smoothing sweeps */
    pyr_cycle_t cycle;
} pyr_mg_hierarchy_t;

/* The hierarchy of the problem, or a refusal saying which sizes work. */
pyr_status_t pyr_mg_hierarchy(const pyr_problem_t *p, pyr_mg_hierarchy_t *hy);

/* Bytes the solve keeps on its device (every level's arrays). */
uint64_t pyr_mg_bytes(const pyr_problem_t *p, const pyr_mg_hierarchy_t *hy);

/* Out of core: the finest levels that do not fit the budget live in host memory and every operation on them is a
 * streamed pass over slabs of planes along the last axis, each slab uploaded with `halo` planes beyond its own on
 * each side (the halo is recomputed, shrinking by a plane per sweep, so that its own planes end exactly as in core).
 * A coarser streamed level takes two passes per visit: pre-smoothing, the residual and its full weighting into the
 * next level's right-hand side; then interpolation, the correction and post-smoothing.  The finest level takes one
 * pass per cycle: it recomputes the cycle's pre-smoothing from the last cycle's result (never stored), corrects,
 * post-smooths, takes the residual's norm, and pre-smooths again for the next cycle and restricts, so that a cycle
 * moves u up and down once and f up once.  The levels from `streamed` down stay on the device; the coarsest always
 * does. */
typedef struct {
    int streamed;                    /* levels 0 .. streamed - 1 are streamed (0: every level in core) */
    int axis;                        /* the slabs' axis: the last one */
    int halo[PYR_MG_MAX_LEVELS];     /* planes beyond a slab's own on each side: 2 pre + post + 4 on the finest level,
                                      * the most smoothing sweeps + 2 on the others */
    int64_t slab[PYR_MG_MAX_LEVELS]; /* a streamed level's own planes per slab */
    int f_resident;                  /* the finest level's f stays on the device (where that moves fewer bytes) */
    uint64_t device_bytes;           /* the in-core levels and the slab buffers */
    uint64_t host_bytes;             /* the streamed levels' arrays in host memory (beside the caller's u and f) */
    uint64_t moved;                  /* bytes to and from the device per cycle */
} pyr_mg_stream_t;

/* The plan within `budget` bytes of device memory: every level in core where they fit, else the fewest finest levels
 * streamed in the thickest slabs that fit; a refusal naming the smallest budget that works. */
pyr_status_t pyr_mg_stream_plan(const pyr_problem_t *p, const pyr_mg_hierarchy_t *hy, uint64_t budget, pyr_mg_stream_t *s);

/* What a solve did. */
typedef struct {
    int64_t cycles;
    double residual;       /* the relative residual max|f + lap u| / max|f| (f = 0: over the initial residual's) */
    double initial;        /* that norm's denominator */
    int converged;         /* residual < tolerance */
    double sweeps;         /* the cost in fine-grid sweep equivalents (smoothing, residuals, transfers, coarse sweeps) */
    uint64_t node_updates; /* every node written by a kernel */
    int streamed;          /* the levels streamed (pyr_mg_stream_t) */
    uint64_t uploaded, downloaded; /* bytes moved to and from the device, the initial field and the result included */
} pyr_mg_result_t;

/* Solve the problem on the backend: u holds the initial guess and the boundary values on entry and the result on
 * return, f the right-hand side (NULL: zero).  At most p->steps cycles; stops at the first whose relative residual is
 * below the tolerance (0: every cycle).  device: the GPU's index; threads: CPU threads (0: all).  hooks (may be
 * NULL): progress after every cycle (cycles done, the most), and cancel, which stops the run after a cycle with
 * PYR_ERR_CANCELLED, u holding that cycle's result. */
pyr_status_t pyr_mg_solve(const pyr_problem_t *p, pyr_backend_kind_t backend, int device, int threads, pyr_field_t *u,
                          const pyr_field_t *f, const pyr_hooks_t *hooks, pyr_mg_result_t *res);

/* The same within `budget` bytes of device memory (pyr_mg_stream_plan): the same cycles and every bit of the result
 * as in core. */
pyr_status_t pyr_mg_solve_within(const pyr_problem_t *p, pyr_backend_kind_t backend, int device, int threads, uint64_t budget,
                                 pyr_field_t *u, const pyr_field_t *f, const pyr_hooks_t *hooks, pyr_mg_result_t *res);

/* Whether the backend's multigrid kernels are compiled in. */
int pyr_mg_backend_built(pyr_backend_kind_t backend);

#endif
