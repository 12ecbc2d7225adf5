/* pyrgrid — line (block) Gauss–Seidel with the Thomas algorithm for
 * block-tridiagonal systems of 2D parabolic equations
 * (docs/theory.md#block-gauss-seidel-with-thomas).
 *
 * A system of order N·M: unknowns y[i, k], 0 <= i < N (block rows),
 * 0 <= k < M (position inside a block), and for every row (i, k)
 *
 *   cA[i,k]·y[i−1,k] + aC[i,k]·y[i,k−1] + cC[i,k]·y[i,k]
 *                    + bC[i,k]·y[i,k+1] + cB[i,k]·y[i+1,k] = F[i,k].
 *
 * Entries that do not exist in the matrix (aC[:,0], bC[:,M−1], cA[0,:],
 * cB[N−1,:]) are ignored, whatever they hold.  All arrays are N×M, C order
 * (row i = block row i, k fastest).
 *
 * One iteration updates every block row i by solving the tridiagonal system
 * C_i·Y_i = F_i − A_i·Y_{i−1} − B_i·Y_{i+1} with the Thomas algorithm (no block
 * is ever inverted), then relaxes: Y_i ← Y_i + ω·(Ỹ_i − Y_i) when ω ≠ 1.
 *
 *   lexicographic: block rows 0, 1, …, N−1 in turn (sequential; the degree
 *                  paper's reference); CPU only.
 *   redblack:      even block rows, then odd block rows; the rows of one colour
 *                  are independent, so they run in parallel (OpenMP on the CPU,
 *                  one warp per block row on CUDA).  CPU and CUDA compute the
 *                  same iterates bit for bit.
 *
 * Both orderings use the same LU factors of each C_i, computed once; within a
 * block the red–black method evaluates the Thomas recurrences in chunks (a
 * scan of affine maps, 32 chunks per block row) so that a GPU warp can share a
 * row, and the CPU evaluates exactly the same expressions in the same order.
 *
 * This header is included by pyrgrid.h; it may also be included on its own. */
#ifndef PYRGRID_LGS_H
#define PYRGRID_LGS_H

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ system */

/* An owned system.  The arrays are n*m doubles each, allocated by the
 * builders below and freed by pyr_lgs_system_destroy; callers may change their
 * contents between solves.  Only double precision is supported. */
typedef struct {
    int64_t n, m;              /* N block rows, M unknowns per block */
    pyr_precision_t precision; /* PYR_DOUBLE */
    double *cC, *aC, *bC;      /* diagonal, sub- and super-diagonal of C_i */
    double *cA, *cB;           /* diagonals of A_i (couples row i−1) and B_i (row i+1) */
    double *F;                 /* right side */
    char description[160];     /* e.g. "test system 1", "files c.npy ..." */
} pyr_lgs_system_t;

/* A zero-filled n×m system (every array 0).  n, m >= 1.  The caller owns the
 * result and releases it with pyr_lgs_system_destroy.  Fails with PYR_ERR_SIZE
 * when n·m·8 bytes overflow, PYR_ERR_NOMEM when memory runs out. */
PYR_API pyr_status_t pyr_lgs_system_create(int64_t n, int64_t m, pyr_lgs_system_t **sys);
PYR_API void pyr_lgs_system_destroy(pyr_lgs_system_t **sys);

/* The degree paper's test system 1: cC = 4, and aC, bC, cA, cB = (2i+k)/(2N+M) with
 * 1-based i, k where the entry exists; F = A·(1, …, 1), so the exact
 * solution is all ones.  n, m >= 1. */
PYR_API pyr_status_t pyr_lgs_system_test1(int64_t n, int64_t m, pyr_lgs_system_t **sys);

/* The degree paper's test system 2 (Laplacian-like): interior cC = −4, a = b = cA =
 * cB = 1; edge rows drop the missing neighbour (cC = −5 at k = 0, M−1 of
 * interior block rows, −3 at interior k of the first/last block row, −4 in
 * the corners); F = −2 at k = 0 and k = M−1, 0 elsewhere; exact solution all
 * ones.  n, m >= 2. */
PYR_API pyr_status_t pyr_lgs_system_test2(int64_t n, int64_t m, pyr_lgs_system_t **sys);

/* The 5-point Dirichlet Laplacian: cC = 4, a = b = cA = cB = −1 where the
 * neighbour exists (missing neighbours are boundary values 0 moved to the
 * right side), F = A·(1, …, 1), so the exact solution is all ones.  Line
 * Gauss–Seidel on it converges with the factor (cos πh_N / (2 − cos πh_M))²,
 * h_N = 1/(N+1), h_M = 1/(M+1).  n, m >= 1. */
PYR_API pyr_status_t pyr_lgs_system_laplace(int64_t n, int64_t m, pyr_lgs_system_t **sys);

/* A field of the parabolic system: a constant, a formula in x and z (and pi,
 * e; + − * / ^, sin cos tan exp log sqrt abs sinh cosh tanh atan), or an N×M
 * double .npy file (name ending in ".npy").  Exactly one of the three is used:
 * path if non-NULL, else formula if non-NULL, else value. */
typedef struct {
    double value;
    const char *formula;
    const char *path;
} pyr_lgs_field_spec_t;

/* One backward-Euler step of u_t = a(x,z)·(u_xx + u_zz) + f(x,z) on
 * [0, lx] × [0, lz] with Dirichlet boundary values g(x, z): N×M interior nodes
 * x_i = (i+1)·lx/(N+1) (block rows) and z_k = (k+1)·lz/(M+1), so
 *   (1 + 2τa/hx² + 2τa/hz²)·u − τa/hx²·(u[i±1,k]) − τa/hz²·(u[i,k±1])
 *       = u_prev + τ·f  (+ τa/h²·g for boundary neighbours). */
typedef struct {
    double tau, lx, lz;             /* > 0 */
    pyr_lgs_field_spec_t a;         /* diffusivity, > 0 at every node */
    pyr_lgs_field_spec_t f;         /* source */
    pyr_lgs_field_spec_t u_prev;    /* the previous time layer */
    pyr_lgs_field_spec_t boundary;  /* g(x, z); path not allowed */
} pyr_lgs_parabolic_t;

/* Defaults: tau = 1e-3, lx = lz = 1, a = 1, f = 0, u_prev = 0, boundary = 0. */
PYR_API void pyr_lgs_parabolic_default(pyr_lgs_parabolic_t *par);
PYR_API pyr_status_t pyr_lgs_system_parabolic(int64_t n, int64_t m, const pyr_lgs_parabolic_t *par,
                                      pyr_lgs_system_t **sys);

/* Load the six N×M float64 .npy arrays (cC, aC, bC, cA, cB, F, in this
 * order in `paths`).  Shapes must agree: the first file fixes N×M, or, when
 * n and m are > 0, they are required.  Errors name the file, the shape found
 * and the shape needed. */
PYR_API pyr_status_t pyr_lgs_system_load(const char *const paths[6], int64_t n, int64_t m,
                                 pyr_lgs_system_t **sys);

/* Check a system without solving it: sizes, finiteness of every existing
 * entry (PYR_ERR_ARG naming the array and the entry), nonzero diagonals.
 * On success, if warning is non-NULL, it receives "" or a warning about
 * diagonal dominance (rows where |cC| < |aC| + |bC|, where the Thomas
 * algorithm may be unstable, or |cC| < |aC| + |bC| + |cA| + |cB|, where Gauss–
 * Seidel may fail to converge), naming the first such row. */
PYR_API pyr_status_t pyr_lgs_system_check(const pyr_lgs_system_t *sys, char *warning, size_t warning_size);

/* ------------------------------------------------------------------ options */

typedef enum { PYR_LGS_LEXICOGRAPHIC = 0, PYR_LGS_REDBLACK = 1 } pyr_lgs_ordering_t;
typedef enum { PYR_LGS_PRECOND_NONE = 0, PYR_LGS_PRECOND_JACOBI = 1 } pyr_lgs_precond_t;

/* Called every report_every iterations (and at the end) with the relative
 * residual.  A nonzero return cancels the solve (PYR_ERR_CANCELLED). */
typedef int (*pyr_lgs_progress_fn)(void *user, int64_t iteration, double rel_residual);

typedef struct {
    pyr_lgs_ordering_t ordering;   /* default redblack */
    double omega;                  /* relaxation, 0 < ω < 2; 1 = Gauss–Seidel */
    /* jacobi: divide every row by its diagonal cC before iterating.  The
     * iterates are the same in exact arithmetic (a block solve is invariant to
     * row scaling); the residual then measured is that of the scaled system
     * ‖D⁻¹(F − AY)‖ / ‖D⁻¹F‖, as in the degree paper. */
    pyr_lgs_precond_t precondition;
    double tolerance;              /* stop when ‖F − AY‖₂/‖F‖₂ <= tolerance; 0: never */
    int64_t max_iterations;        /* >= 0 */
    int64_t check_every;           /* residual checked every k iterations (>= 1) */
    int64_t report_every;          /* progress every k iterations; 0: only at the end */
    pyr_backend_kind_t backend;    /* auto: CUDA for redblack when a GPU is usable */
    int threads;                   /* CPU threads; 0: all cores, but at most one per 8192 unknowns */
    /* Divergence: relative residual above divergence_limit (or not finite).
     * Stagnation: no 0.1% improvement of the best residual during the last
     * stagnation_window iterations (0: never). */
    double divergence_limit;
    int64_t stagnation_window;
    pyr_lgs_progress_fn progress;
    void *progress_user;
} pyr_lgs_options_t;

/* ordering redblack, omega 1, precondition none, tolerance 1e-10,
 * max_iterations 100000, check_every 10, report_every 0, backend auto,
 * threads 0, divergence_limit 1e8, stagnation_window 20000. */
PYR_API void pyr_lgs_options_default(pyr_lgs_options_t *opt);

/* ω_opt = 2 / (1 + sqrt(1 − ρ_J²)) with ρ_J = cos(π/(N+1)) / (2 − cos(π/(M+1))),
 * the optimal line-SOR factor of the N×M Dirichlet Laplacian. */
PYR_API double pyr_lgs_omega_laplace(int64_t n, int64_t m);

PYR_API const char *pyr_lgs_ordering_name(pyr_lgs_ordering_t o);
PYR_API const char *pyr_lgs_precond_name(pyr_lgs_precond_t p);

/* ------------------------------------------------------------------ solve */

typedef enum {
    PYR_LGS_CONVERGED = 0,      /* relative residual <= tolerance */
    PYR_LGS_MAX_ITERATIONS = 1, /* iteration limit reached first */
    PYR_LGS_DIVERGED = 2,       /* residual grew past divergence_limit or NaN/Inf */
    PYR_LGS_STAGNATED = 3,      /* no progress over stagnation_window */
    PYR_LGS_CANCELLED = 4
} pyr_lgs_stop_t;

PYR_API const char *pyr_lgs_stop_name(pyr_lgs_stop_t s);

typedef struct {
    pyr_lgs_stop_t stop;
    int64_t iterations;          /* iterations done */
    double rel_residual;         /* at the end: ‖F − AY‖₂/‖F‖₂ (of the scaled system with jacobi) */
    double f_norm;               /* ‖F‖₂ */
    int64_t history_len;         /* residual checks, the first at iteration 0 */
    int64_t *history_iteration;
    double *history_residual;    /* relative residuals */
    pyr_backend_kind_t backend;  /* the backend that ran (never auto) */
    pyr_lgs_ordering_t ordering;
    int threads;                 /* CPU threads used (1 for lexicographic) */
    double setup_seconds;        /* factorisation, uploads */
    double seconds;              /* the iteration loop, residual checks included */
    double iterate_seconds;      /* iterations only (per-iteration time = this / iterations) */
    char warning[512];           /* "" or the diagonal-dominance warning */
    char device[128];            /* GPU name for cuda, "" otherwise */
} pyr_lgs_result_t;

/* Solve sys with opt (NULL: defaults).  y holds n*m doubles: the initial guess
 * on entry, the last iterate on return.  *result (owned by the caller, freed
 * with pyr_lgs_result_destroy) is set whenever iterations started, also when
 * the solve then fails with PYR_ERR_DIVERGED (diverged or stagnated: the
 * message says which, the residuals and what to try) or PYR_ERR_CANCELLED;
 * otherwise it is NULL.  Reaching max_iterations without meeting the
 * tolerance is not an error: result->stop says so.  Errors before iterating:
 * PYR_ERR_ARG (bad options, non-finite input naming the entry),
 * PYR_ERR_NUMERIC (zero pivot, naming the row), PYR_ERR_UNSUPPORTED,
 * PYR_ERR_NODEVICE (backend cuda without a usable GPU), PYR_ERR_DEVICE_NOMEM,
 * PYR_ERR_NOMEM. */
PYR_API pyr_status_t pyr_lgs_solve(const pyr_lgs_system_t *sys, const pyr_lgs_options_t *opt, double *y,
                           pyr_lgs_result_t **result);
PYR_API void pyr_lgs_result_destroy(pyr_lgs_result_t **result);

/* Relative residual ‖F − A·y‖₂ / ‖F‖₂ of sys at y (‖F − A·y‖₂ when F = 0). */
PYR_API pyr_status_t pyr_lgs_residual(const pyr_lgs_system_t *sys, const double *y, double *rel_residual);

/* PYR_OK when the CUDA backend can run here; otherwise PYR_ERR_NODEVICE with
 * the reason (no CUDA in this build, no device, driver too old). */
PYR_API pyr_status_t pyr_lgs_cuda_usable(void);

#ifdef __cplusplus
}
#endif

#endif
