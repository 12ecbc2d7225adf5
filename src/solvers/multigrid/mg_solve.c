/* The multigrid level loop (mg.h): the hierarchy and its refusals, the
 * cycles, the stopping test and the cost, over one backend's kernels
 * (mg_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/plugin.h"
#include "core/error.h"
#include "schemes/poisson.h"
#include "solvers/multigrid/mg.h"
#include "solvers/multigrid/mg_internal.h"

/* The coarsest level's solve reduces its error by this factor (Chebyshev's bound): far below what one cycle
 * leaves on the finer levels, so the cycle converges as with an exact coarse solve. */
#define COARSE_REDUCTION 1e-4
/* Cycles in a row that each leave more than this fraction of the residual before them: the iteration stands
 * at its rounding floor. */
#define STALL_FACTOR 0.9
#define STALL_CYCLES 3

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char axis_name[3] = {'x', 'y', 'z'};

/* The Neumann faces (0, 1 or 2) of axis a. */
static int neumann_faces(const pyr_mg_hierarchy_t *hy, int a) { return hy->neumann[2 * a] + hy->neumann[2 * a + 1]; }

/* The largest eigenvalue of the 1D Jacobi matrix along an axis of n nodes with k Neumann faces (schemes/poisson.c):
 * cos(pi / (n - 1)) between two Dirichlet faces, cos(pi / (2 (n - 1))) between one of each, 1 between two Neumann
 * faces; the spectrum is symmetric, so D^-1 A's largest eigenvalue is 1 + sum_a c_a r_a / sum_a c_a. */
static double axis_radius(int64_t n, int k)
{
    if (k == 2) return 1.0;
    if (k == 1) return cos(M_PI / (2.0 * (double)(n - 1)));
    return n > 2 ? cos(M_PI / (double)(n - 1)) : 0.0;
}

/* The sizes of m * 2^k + 1 nodes (2 <= m <= PYR_MG_COARSEST_MAX - 1) nearest to n, below and above. */
static void nearest_sizes(int64_t n, int64_t *below, int64_t *above)
{
    *below = 3;
    *above = INT64_MAX;
    for (int64_t m = 2; m < PYR_MG_COARSEST_MAX; m++)
        for (int64_t p = 1; p <= ((int64_t)1 << 40); p *= 2) {
            const int64_t s = m * p + 1;
            if (s <= n && s > *below) *below = s;
            if (s >= n && s < *above) *above = s;
            if (s > n) break;
        }
}

pyr_status_t pyr_mg_hierarchy(const pyr_problem_t *p, pyr_mg_hierarchy_t *hy)
{
    memset(hy, 0, sizeof *hy);
    hy->dims = p->dims;
    hy->cycle = p->poisson.cycle;
    hy->pre = p->poisson.pre_smooth;
    hy->post = p->poisson.post_smooth;
    if (hy->pre < 0 || hy->post < 0 || hy->pre + hy->post < 1)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.pre_smooth = %d and post_smooth = %d: multigrid needs at least one smoothing sweep per "
                        "level (the default is 3 and 3)", hy->pre, hy->post);
    if (hy->cycle != PYR_CYCLE_V && hy->cycle != PYR_CYCLE_F) return pyr_fail(PYR_ERR_CONFIG, "scheme.cycle: use v or f");
    hy->smoother = p->poisson.smoother;
    hy->pure = 1;
    for (int a = 0; a < p->dims; a++)
        for (int side = 0; side < 2; side++) {
            hy->neumann[2 * a + side] = p->poisson.face[2 * a + side] == PYR_FACE_NEUMANN;
            hy->pure &= hy->neumann[2 * a + side];
        }
    if (hy->smoother != PYR_SMOOTH_CHEBYSHEV && hy->smoother != PYR_SMOOTH_JACOBI) return pyr_fail(PYR_ERR_CONFIG, "scheme.smoother: use chebyshev or jacobi");
    pyr_mg_level_t *L = &hy->level[0];
    for (int a = 0; a < 3; a++) {
        L->n[a] = a < p->dims ? p->n[a] : 1;
        L->h[a] = a < p->dims ? pyr_problem_h(p, a) : 0;
        if (a < p->dims && p->n[a] < 3)
            return pyr_fail(PYR_ERR_CONFIG, "grid.n%c = %lld: multigrid needs at least 3 nodes along every axis (one unknown)", axis_name[a],
                            (long long)p->n[a]);
    }
    hy->nlevels = 1;
    int stop_axis = -1;
    for (;;) {
        L = &hy->level[hy->nlevels - 1];
        double cmax = 0;
        for (int a = 0; a < p->dims; a++)
            if (L->n[a] > 3 && 1.0 / (L->h[a] * L->h[a]) > cmax) cmax = 1.0 / (L->h[a] * L->h[a]);
        if (cmax == 0) break; /* one unknown along every axis */
        int ok = 1, any = 0;
        for (int a = 0; a < p->dims; a++) {
            L->coarsen[a] = L->n[a] > 3 && 1.0 / (L->h[a] * L->h[a]) >= cmax / 2;
            if (L->coarsen[a] && (L->n[a] - 1) % 2 != 0) {
                ok = 0;
                stop_axis = a;
            }
            any |= L->coarsen[a];
        }
        if (!ok || !any || hy->nlevels == PYR_MG_MAX_LEVELS) {
            for (int a = 0; a < 3; a++) L->coarsen[a] = 0;
            break;
        }
        pyr_mg_level_t *C = &hy->level[hy->nlevels++];
        for (int a = 0; a < 3; a++) {
            C->n[a] = L->coarsen[a] ? (L->n[a] - 1) / 2 + 1 : L->n[a];
            C->h[a] = L->coarsen[a] ? 2 * L->h[a] : L->h[a];
        }
    }
    /* The smoother of each level but the coarsest.  D^-1 A (A the level's operator, D its diagonal) has the
     * eigenvalues 1 - sum_a c_a cos(k_a pi / (n_a - 1)) / sum_a c_a, the largest 1 + rho; the modes the coarser level
     * cannot hold (k_a beyond the middle along a coarsened axis) lie above min over those axes of c_a / sum c.
     * With Neumann faces rho is the faces' (axis_radius: 2 exactly when every face is Neumann, the checkerboard).
     * Chebyshev's sweeps damp the interval [lo, 1 + rho] uniformly, lo 3/4 of that bound: the modes just below
     * it are among those the coarse correction restores worst, and a cycle converged fastest, from smooth and
     * from rough initial errors, on square and cubic grids, with the interval reaching a little below it (much
     * lower, the damping of the top of the spectrum suffers).  Weighted Jacobi takes the weight
     * 2 dims / (2 dims + 1), which damps the upper half of a square grid's spectrum best. */
    for (int l = 0; l + 1 < hy->nlevels; l++) {
        pyr_mg_level_t *V = &hy->level[l];
        if (hy->smoother == PYR_SMOOTH_JACOBI) {
            V->gamma = (2.0 * p->dims) / (2.0 * p->dims + 1.0);
            V->sigma = 0;
            continue;
        }
        double sum = 0, cosines = 0, lo = 1;
        for (int a = 0; a < p->dims; a++) {
            const double c = 1.0 / (V->h[a] * V->h[a]);
            sum += c;
            cosines += c * axis_radius(V->n[a], neumann_faces(hy, a));
        }
        for (int a = 0; a < p->dims; a++)
            if (V->coarsen[a] && 1.0 / (V->h[a] * V->h[a]) / sum < lo) lo = 1.0 / (V->h[a] * V->h[a]) / sum;
        const double hi = 1.0 + cosines / sum;
        lo *= 0.75;
        V->gamma = 2.0 / (lo + hi);
        V->sigma = (hi - lo) / (hi + lo);
    }
    L = &hy->level[hy->nlevels - 1];
    for (int a = 0; a < p->dims; a++)
        if (L->n[a] > PYR_MG_COARSEST_MAX) {
            const int b = stop_axis >= 0 ? stop_axis : a;
            int64_t lo, hi;
            nearest_sizes(p->n[b], &lo, &hi);
            return pyr_fail(PYR_ERR_UNSUPPORTED,
                            "scheme.iteration = multigrid: this %lld-node axis %c (grid.n%c) cannot be coarsened further than %lld nodes, so the "
                            "coarsest level keeps %lld nodes along %c (at most %d solve cheaply); multigrid halves an axis of m * 2^k + 1 nodes "
                            "down to m + 1 nodes: use n%c = %lld or %lld (or another m * 2^k + 1 with m <= %d), or iteration = chebyshev for any "
                            "size",
                            (long long)p->n[b], axis_name[b], axis_name[b], (long long)hy->level[hy->nlevels - 1].n[b], (long long)L->n[a],
                            axis_name[a], PYR_MG_COARSEST_MAX, axis_name[b], (long long)lo, (long long)hi, PYR_MG_COARSEST_MAX - 1);
        }
    /* the coarsest solve: Chebyshev's bound 1 / T_K(1 / rho) below COARSE_REDUCTION; one unknown per axis: one exact sweep.
     * Every face Neumann: schemes/poisson.c's damped sweeps, gamma = 2 / (3 - rho') with rho' the radius without the
     * eigenvalues 1 and -1, and the weights for sigma = (1 + rho') / (3 - rho'), on the compatible subspace. */
    double num = 0, den = 0, least = -1;
    for (int a = 0; a < p->dims; a++) {
        const double c = 1.0 / (L->h[a] * L->h[a]), gap = c * (1.0 - cos(M_PI / (double)(L->n[a] - 1)));
        num += c * axis_radius(L->n[a], neumann_faces(hy, a));
        den += c;
        if (least < 0 || gap < least) least = gap;
    }
    double rho = num / den > 0 ? num / den : 0;
    hy->coarse_gamma = 1;
    if (hy->pure) {
        const double inner = 1.0 - least / den;
        hy->coarse_gamma = 2.0 / (3.0 - inner);
        rho = (1.0 + inner) / (3.0 - inner);
    }
    hy->coarse_rho = rho;
    hy->coarse_sweeps = rho < 1e-12 ? 1 : (int64_t)ceil(acosh(1.0 / COARSE_REDUCTION) / acosh(1.0 / rho));
    if (hy->coarse_sweeps < 1) hy->coarse_sweeps = 1;
    return PYR_OK;
}

static int64_t nodes(const pyr_mg_level_t *L) { return L->n[0] * L->n[1] * L->n[2]; }

/* A level's unknowns: its interior and its Neumann faces' nodes. */
static double interior(const pyr_mg_hierarchy_t *hy, const pyr_mg_level_t *L)
{
    double v = 1;
    for (int a = 0; a < hy->dims; a++) v *= (double)(L->n[a] - 2 + neumann_faces(hy, a));
    return v;
}

uint64_t pyr_mg_bytes(const pyr_problem_t *p, const pyr_mg_hierarchy_t *hy)
{
    const uint64_t e = pyr_precision_size(p->precision);
    uint64_t b = 0;
    for (int l = 0; l < hy->nlevels; l++) {
        const int arrays = l > 0 ? 3 : p->poisson.rhs != PYR_RHS_ZERO ? 3 : 2;
        b += (uint64_t)arrays * (uint64_t)nodes(&hy->level[l]) * e;
    }
    return b;
}

int pyr_mg_backend_built(pyr_backend_kind_t backend)
{
    if (backend == PYR_BACKEND_CUDA) return pyr_cuda_plugin(PYR_CUDA_ASK) != NULL;
    return backend == PYR_BACKEND_CPU;
}

/* ------------------------------------------------------------------ the solve */

typedef struct {
    const pyr_mg_ops_t *ops;
    void *ctx;
    const pyr_mg_hierarchy_t *hy;
    pyr_mg_geom_t g[PYR_MG_MAX_LEVELS];
    void *u[PYR_MG_MAX_LEVELS], *t[PYR_MG_MAX_LEVELS], *f[PYR_MG_MAX_LEVELS];
    double *cheb;          /* the coarsest solve's weights */
    void *host;            /* every face Neumann: the coarsest level's right-hand side on the host */
    int64_t ncheb;
    double inner[PYR_MG_MAX_LEVELS]; /* a level's interior nodes */
    size_t elem;
    double sweeps;
    uint64_t updates;
} mg_t;

static void count(mg_t *m, int l, double times)
{
    m->sweeps += times * m->inner[l] / m->inner[0];
    m->updates += (uint64_t)(times * m->inner[l]);
}

static void swap(void **a, void **b)
{
    void *t = *a;
    *a = *b;
    *b = t;
}

/* Chebyshev's weights w_1 = 1, w_2 = 1 / (1 - sigma^2 / 2), w_{k+1} = 1 / (1 - sigma^2 w_k / 4) (schemes/poisson.h
 * for sigma = rho), in double on the host, so that every backend rounds the same weight. */
static pyr_status_t smooth(mg_t *m, int l, int sweeps)
{
    const pyr_mg_level_t *V = &m->hy->level[l];
    const double s2 = V->sigma * V->sigma;
    double w = 1;
    for (int s = 0; s < sweeps; s++) {
        if (s == 1) w = 1.0 / (1.0 - s2 / 2.0);
        else if (s > 1) w = 1.0 / (1.0 - s2 * w / 4.0);
        PYR_TRY(m->ops->smooth(m->ctx, &m->g[l], m->u[l], m->f[l], m->t[l], V->gamma, w, V->sigma == 0 || s == 0));
        swap(&m->u[l], &m->t[l]);
    }
    count(m, l, sweeps);
    return PYR_OK;
}

/* The trapezoid weight (halved at each end of every used axis) of node i of a level: the left null vector of the
 * operator with every face Neumann (the sum of a face node's equation counts half). */
static double trapezoid(const pyr_mg_geom_t *g, int64_t i)
{
    const int64_t x = i % g->n[0], y = (i / g->n[0]) % g->n[1], z = i / (g->n[0] * g->n[1]);
    const int64_t at[3] = {x, y, z};
    double w = 1;
    for (int a = 0; a < 3; a++)
        if (g->used[a] && (at[a] == 0 || at[a] == g->n[a] - 1)) w *= 0.5;
    return w;
}

/* The trapezoid-weighted mean of a level's values, summed in index order (on the host, so every backend's
 * result moves by the same constant). */
static double weighted_mean(const pyr_mg_geom_t *g, const void *v, pyr_precision_t precision)
{
    const int64_t n = g->n[0] * g->n[1] * g->n[2];
    double sum = 0, weights = 0;
    for (int64_t i = 0; i < n; i++) {
        const double w = trapezoid(g, i), x = precision == PYR_DOUBLE ? ((const double *)v)[i] : (double)((const float *)v)[i];
        sum += w * x;
        weights += w;
    }
    return sum / weights;
}

static void add_constant(int64_t n, void *v, pyr_precision_t precision, double c)
{
    for (int64_t i = 0; i < n; i++) {
        if (precision == PYR_DOUBLE) ((double *)v)[i] = ((double *)v)[i] + c;
        else ((float *)v)[i] = (float)((double)((float *)v)[i] + c);
    }
}

static pyr_status_t coarse_solve(mg_t *m, int l)
{
    if (m->hy->pure) {
        /* the singular level has a solution only for a right-hand side of zero weighted sum: the restricted residual
         * has one up to rounding (full weighting with the reflection keeps the sum), which is removed here */
        const pyr_precision_t prec = m->elem == sizeof(double) ? PYR_DOUBLE : PYR_FLOAT;
        const int64_t n = m->g[l].n[0] * m->g[l].n[1] * m->g[l].n[2];
        PYR_TRY(m->ops->download(m->ctx, m->host, m->f[l], (size_t)n * m->elem));
        add_constant(n, m->host, prec, -weighted_mean(&m->g[l], m->host, prec));
        PYR_TRY(m->ops->upload(m->ctx, m->f[l], m->host, (size_t)n * m->elem));
    }
    for (int64_t k = 0; k < m->hy->coarse_sweeps; k++) {
        /* t holds the layer two sweeps back (zero, as u, before the first) */
        PYR_TRY(m->ops->smooth(m->ctx, &m->g[l], m->u[l], m->f[l], m->t[l], m->hy->coarse_gamma, pyr_poisson_weight(m->cheb, m->ncheb, k),
                               k == 0));
        swap(&m->u[l], &m->t[l]);
    }
    count(m, l, (double)m->hy->coarse_sweeps);
    return PYR_OK;
}

static pyr_status_t cycle(mg_t *m, int l, pyr_cycle_t type)
{
    const int last = m->hy->nlevels - 1;
    if (l == last) return coarse_solve(m, l);
    const int *k = m->hy->level[l].coarsen;
    PYR_TRY(smooth(m, l, m->hy->pre));
    PYR_TRY(m->ops->residual(m->ctx, &m->g[l], m->u[l], m->f[l], m->t[l], NULL));
    count(m, l, 1);
    PYR_TRY(m->ops->restrict_fw(m->ctx, &m->g[l], k, m->t[l], &m->g[l + 1], m->f[l + 1]));
    count(m, l + 1, 1);
    /* the correction starts at zero in both buffers (Chebyshev's layer two sweeps back on the coarsest) */
    const size_t bytes = (size_t)nodes(&m->hy->level[l + 1]) * m->elem;
    PYR_TRY(m->ops->zero(m->ctx, m->u[l + 1], bytes));
    PYR_TRY(m->ops->zero(m->ctx, m->t[l + 1], bytes));
    if (type == PYR_CYCLE_F && l + 1 < last) {
        PYR_TRY(cycle(m, l + 1, PYR_CYCLE_F));
        PYR_TRY(cycle(m, l + 1, PYR_CYCLE_V));
    } else {
        PYR_TRY(cycle(m, l + 1, PYR_CYCLE_V));
    }
    PYR_TRY(m->ops->prolong_add(m->ctx, &m->g[l + 1], k, m->u[l + 1], &m->g[l], m->u[l]));
    count(m, l, 1);
    return smooth(m, l, m->hy->post);
}

static const pyr_mg_ops_t *ops_of(pyr_backend_kind_t backend)
{
    if (backend == PYR_BACKEND_CUDA) {
        const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_ASK);
        return cuda ? cuda->mg : NULL;
    }
    return backend == PYR_BACKEND_CPU ? &pyr_mg_ops_cpu : NULL;
}

static double max_abs(const pyr_field_t *f)
{
    const int64_t n = pyr_field_count(f);
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        const double v = fabs(f->precision == PYR_DOUBLE ? ((const double *)f->data)[i] : (double)((const float *)f->data)[i]);
        if (v > m || isnan(v)) m = v;
        if (isnan(m)) break;
    }
    return m;
}

static pyr_status_t run_cycles(mg_t *m, const pyr_problem_t *p, const pyr_hooks_t *hooks, pyr_mg_result_t *res)
{
    const double tol = p->poisson.tolerance;
    double r = 0;
    PYR_TRY(m->ops->residual(m->ctx, &m->g[0], m->u[0], m->f[0], m->t[0], &r));
    count(m, 0, 1);
    if (!(res->initial > 0)) res->initial = r; /* f = 0: relative to the initial residual */
    res->residual = res->initial > 0 ? r / res->initial : 0;
    if (isnan(res->residual)) return pyr_fail(PYR_ERR_DIVERGED, "the initial field's residual is not a number");
    int stalled = 0;
    while (res->cycles < p->steps && !(tol > 0 && res->residual < tol) && res->residual > 0) {
        const double before = res->residual;
        PYR_TRY(cycle(m, 0, m->hy->cycle));
        PYR_TRY(m->ops->residual(m->ctx, &m->g[0], m->u[0], m->f[0], m->t[0], &r));
        count(m, 0, 1);
        res->cycles++;
        res->residual = r / res->initial;
        if (!isfinite(res->residual))
            return pyr_fail(PYR_ERR_DIVERGED, "multigrid cycle %lld made the residual %s; the field holds non-finite values", (long long)res->cycles,
                            isnan(res->residual) ? "not a number" : "infinite");
        stalled = res->residual > STALL_FACTOR * before ? stalled + 1 : 0;
        if (stalled >= STALL_CYCLES && tol > 0 && !(res->residual < tol))
            return pyr_fail(PYR_ERR_DIVERGED,
                            "multigrid stagnated at a relative residual of %.3g after %lld cycles (%d cycles in a row each left more than "
                            "%.0f%% of the residual): that is the rounding floor of %s on this grid; use tolerance >= %.1g%s",
                            res->residual, (long long)res->cycles, STALL_CYCLES, 100 * STALL_FACTOR, pyr_precision_name(p->precision),
                            3 * res->residual, p->precision == PYR_FLOAT ? ", or precision = double" : "");
        const int done = tol > 0 && res->residual < tol;
        if (hooks && hooks->progress && hooks->progress(hooks->user, res->cycles, p->steps) && !done)
            return pyr_fail(PYR_ERR_CANCELLED, "run cancelled after %lld of %lld cycles", (long long)res->cycles, (long long)p->steps);
        if (hooks && hooks->cancel && !done && res->cycles < p->steps && hooks->cancel(hooks->user, res->cycles, p->steps))
            return pyr_fail(PYR_ERR_CANCELLED, "run cancelled after %lld of %lld cycles", (long long)res->cycles, (long long)p->steps);
    }
    res->converged = tol > 0 && res->residual < tol;
    return PYR_OK;
}

pyr_status_t pyr_mg_solve(const pyr_problem_t *p, pyr_backend_kind_t backend, int device, int threads, pyr_field_t *u, const pyr_field_t *f,
                          const pyr_hooks_t *hooks, pyr_mg_result_t *res)
{
    memset(res, 0, sizeof *res);
    pyr_mg_hierarchy_t hy;
    PYR_TRY(pyr_mg_hierarchy(p, &hy));
    const pyr_mg_ops_t *ops = ops_of(backend);
    if (!ops) return pyr_fail(PYR_ERR_NODEVICE, "multigrid: this pyrgrid has no multigrid kernels for the %s backend; use backend = cpu",
                              backend == PYR_BACKEND_CUDA ? "cuda" : "chosen");
    mg_t m;
    memset(&m, 0, sizeof m);
    m.ops = ops;
    m.hy = &hy;
    const size_t e = pyr_precision_size(p->precision);
    m.elem = e;
    for (int l = 0; l < hy.nlevels; l++) {
        const pyr_mg_level_t *L = &hy.level[l];
        pyr_mg_geom_t *g = &m.g[l];
        double s = 0;
        for (int a = 0; a < 3; a++) {
            g->n[a] = L->n[a];
            g->used[a] = a < p->dims;
            g->c[a] = a < p->dims ? 1.0 / (L->h[a] * L->h[a]) : 0;
            s += a < p->dims ? 2.0 / (L->h[a] * L->h[a]) : 0;
        }
        /* the faces of every level; the flux's ghost offset (schemes/poisson.c's t = 2 h G) on the finest only */
        for (int k = 0; k < 6; k++) {
            g->neumann[k] = hy.neumann[k];
            g->t[k] = l == 0 && hy.neumann[k] ? 2.0 * pyr_problem_h(p, k / 2) * p->poisson.flux[k] : 0.0;
        }
        g->d = 1.0 / s;
        g->D = s;
        m.inner[l] = interior(&hy, L);
    }
    pyr_status_t st = ops->create(device, threads, p->precision, &m.ctx);
    if (st != PYR_OK) return st;
    st = pyr_poisson_chebyshev_weights(hy.coarse_rho, &m.cheb, &m.ncheb);
    const size_t fine_bytes = (size_t)nodes(&hy.level[0]) * e;
    for (int l = 0; l < hy.nlevels && st == PYR_OK; l++) {
        const size_t b = (size_t)nodes(&hy.level[l]) * e;
        st = ops->alloc(m.ctx, b, &m.u[l]);
        if (st == PYR_OK) st = ops->alloc(m.ctx, b, &m.t[l]);
        if (st == PYR_OK && (l > 0 || f)) st = ops->alloc(m.ctx, b, &m.f[l]);
    }
    if (st == PYR_OK && hy.pure) {
        m.host = malloc((size_t)nodes(&hy.level[hy.nlevels - 1]) * e);
        if (!m.host) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    /* every face Neumann: the solution the sweeps converge to keeps the initial field's weighted mean */
    const double mean = hy.pure ? weighted_mean(&m.g[0], u->data, p->precision) : 0;
    if (st == PYR_OK) st = ops->upload(m.ctx, m.u[0], u->data, fine_bytes);
    if (st == PYR_OK) st = ops->copy(m.ctx, m.t[0], m.u[0], fine_bytes); /* the boundary in both buffers */
    if (st == PYR_OK && f) st = ops->upload(m.ctx, m.f[0], f->data, fine_bytes);
    if (st == PYR_OK) {
        res->initial = f ? max_abs(f) : 0;
        st = run_cycles(&m, p, hooks, res);
        /* the field holds the last cycle's result, also when the run stopped with an error after a cycle */
        pyr_status_t down = ops->download(m.ctx, u->data, m.u[0], fine_bytes);
        if (down == PYR_OK && hy.pure) add_constant(nodes(&hy.level[0]), u->data, p->precision, mean - weighted_mean(&m.g[0], u->data, p->precision));
        if (st == PYR_OK) st = down;
    }
    res->sweeps = m.sweeps;
    res->node_updates = m.updates;
    for (int l = 0; l < hy.nlevels; l++) {
        if (m.u[l]) ops->release(m.ctx, m.u[l]);
        if (m.t[l]) ops->release(m.ctx, m.t[l]);
        if (m.f[l]) ops->release(m.ctx, m.f[l]);
    }
    free(m.cheb);
    free(m.host);
    ops->destroy(m.ctx);
    return st;
}
