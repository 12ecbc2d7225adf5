/* The multigrid level loop (mg.h): the hierarchy and its refusals, the
 * cycles, the stopping test and the cost, over one backend's kernels
 * (mg_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------ out of core: the plan */

/* The slabs' axis: the last one, whose planes are contiguous. */
static int slab_axis(const pyr_mg_hierarchy_t *hy) { return hy->dims - 1; }

/* Nodes per plane of a level (the axes before the slabs'). */
static int64_t plane_nodes(const pyr_mg_level_t *L, int ax)
{
    int64_t v = 1;
    for (int a = 0; a < ax; a++) v *= L->n[a];
    return v;
}

/* Whether level l holds a right-hand side (the finest one only for a given f). */
static int has_rhs(const pyr_problem_t *p, int l) { return l > 0 || p->poisson.rhs != PYR_RHS_ZERO; }

/* One slab of a streamed level l along axis ax: its own planes [a, b) (a partition of the level's planes, a even
 * where the axis is coarsened), and what its passes read and write.  Full weighting of the coarse planes [A, B)
 * reads the residual at fine planes [2A - 1, 2B - 1], which reads u after the pre-smoothing sweeps at
 * [2A - 2, 2B]; each sweep before reads a plane further, so the slab [s0, s1) reaches `halo` planes beyond its own
 * on each side (pyr_mg_stream_t's; s0 even and s1 - 1 even where the axis is coarsened, so that its coarse planes
 * nest in it). */
typedef struct {
    int64_t a, b;           /* own fine planes */
    int64_t A, B;           /* own coarse planes: their right-hand side is this slab's */
    int64_t s0, s1;         /* the slab uploaded */
    int64_t fa, fb, ca, cb; /* the views the residual and full weighting run on: fine [fa, fb) into coarse [ca, cb) */
    int64_t pa, pb;         /* the coarse planes interpolation onto [s0, s1) reads */
} span_t;

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static void span_of(const pyr_mg_hierarchy_t *hy, int ax, int halo, int l, int64_t a, int64_t b, span_t *s)
{
    const int64_t n = hy->level[l].n[ax], nc = hy->level[l + 1].n[ax];
    const int k = hy->level[l].coarsen[ax];
    s->a = a;
    s->b = b;
    s->A = k ? a / 2 : a;
    s->B = k ? (b == n ? nc : b / 2) : b;
    s->s0 = imax(0, a - halo);
    if (k && s->s0 % 2) s->s0--;
    s->s1 = b + halo;
    if (k && s->s1 % 2 == 0) s->s1++;
    s->s1 = imin(n, s->s1);
    if (k) {
        s->fa = imax(0, 2 * s->A - 2);
        s->fb = imin(n, 2 * s->B + 1);
        s->ca = imax(0, s->A - 1);
        s->cb = imin(nc, s->B + 1);
        s->pa = s->s0 / 2;
        s->pb = (s->s1 - 1) / 2 + 1;
    } else {
        s->fa = s->ca = imax(0, a - 1);
        s->fb = s->cb = imin(n, b + 1);
        s->pa = s->s0;
        s->pb = s->s1;
    }
}

/* A coarse level's unknown planes along ax: [lo, hi). */
static void unknown_planes(const pyr_mg_hierarchy_t *hy, int ax, int l, int64_t *lo, int64_t *hi)
{
    *lo = hy->neumann[2 * ax] ? 0 : 1;
    *hi = hy->neumann[2 * ax + 1] ? hy->level[l].n[ax] : hy->level[l].n[ax] - 1;
}

/* Device bytes rounded up so that every buffer carved from the slab region starts aligned. */
static uint64_t aligned(uint64_t b) { return (b + 255) & ~(uint64_t)255; }

/* The widest view [*p0, *p1) of level l's planes within [w0, w1) whose ends nest in the coarse level (even where
 * the axis is coarsened, the grid's ends kept), and the coarse planes [*c0, *c1) interpolation onto it reads. */
static void prolong_view(const pyr_mg_hierarchy_t *hy, int ax, int l, int64_t w0, int64_t w1, int64_t *p0, int64_t *p1, int64_t *c0,
                         int64_t *c1)
{
    *p0 = w0;
    *p1 = w1;
    *c0 = w0;
    *c1 = w1;
    if (!hy->level[l].coarsen[ax]) return;
    if (*p0 % 2) ++*p0;
    if ((*p1 - 1) % 2) --*p1;
    *c0 = *p0 / 2;
    *c1 = (*p1 - 1) / 2 + 1;
}

/* What streaming level l in slabs of t own planes needs and moves: the slab region's bytes (u in two buffers, f,
 * and the coarse level's planes where that level is streamed too) and the bytes a cycle's passes over it move (the
 * finest level: one pass, pass_finest's; a coarser one: a pre- and a post-smoothing pass). */
typedef struct {
    int64_t fine, coarse, own; /* the most planes of a slab, of its coarse planes and of its own */
    uint64_t bytes, moved;
} slab_cost_t;

/* The slab region of level l: u in three buffers (two the slabs' uploads alternate between, so that the next one
 * goes up while this one computes, and the sweeps' other layer), f in two (where it is streamed), the coarse level's
 * planes, the own planes on their way down. */
static uint64_t region_bytes(const slab_cost_t *c, int rhs, uint64_t fp, uint64_t cp)
{
    return (rhs ? 5 : 3) * aligned((uint64_t)c->fine * fp) + aligned((uint64_t)c->coarse * cp) + aligned((uint64_t)c->own * fp);
}

/* f0: the finest level's right-hand side: F0_NONE, F0_STREAMED with u, or F0_RESIDENT on the device. */
enum { F0_NONE, F0_STREAMED, F0_RESIDENT };

static void slab_cost(const pyr_problem_t *p, const pyr_mg_hierarchy_t *hy, int f0, int streamed, int halo, int l, int64_t t, slab_cost_t *c)
{
    const int ax = slab_axis(hy);
    const uint64_t e = pyr_precision_size(p->precision), fp = (uint64_t)plane_nodes(&hy->level[l], ax) * e,
                   cp = (uint64_t)plane_nodes(&hy->level[l + 1], ax) * e;
    const int64_t n = hy->level[l].n[ax];
    const int rhs = l > 0 || f0 == F0_STREAMED, down = l + 1 < streamed; /* f in the slab region, uploaded */
    int64_t clo, chi;
    unknown_planes(hy, ax, l + 1, &clo, &chi);
    memset(c, 0, sizeof *c);
    for (int64_t a = 0; a < n; a += t) {
        span_t s;
        span_of(hy, ax, halo, l, a, imin(n, a + t), &s);
        const int64_t planes = s.s1 - s.s0;
        c->fine = imax(c->fine, planes);
        c->own = imax(c->own, s.b - s.a);
        if (down) c->coarse = imax(c->coarse, imax(s.cb - s.ca, s.pb - s.pa));
        /* u and f (unless resident) up, the coarse correction's planes up and the coarse right-hand side down (the
         * coarse level streamed), u's own planes down */
        const uint64_t load = (uint64_t)planes * fp * (rhs ? 2 : 1), own = (uint64_t)(s.b - s.a) * fp,
                       rhs_down = down ? (uint64_t)imax(0, imin(s.B, chi) - imax(s.A, clo)) * cp : 0;
        if (l == 0) {
            int64_t p0, p1, c0, c1;
            prolong_view(hy, ax, l, s.s0 > 0 ? s.s0 + hy->pre : 0, s.s1 < n ? s.s1 - hy->pre : n, &p0, &p1, &c0, &c1);
            c->moved += load + own + rhs_down + (down ? (uint64_t)(c1 - c0) * cp : 0);
        } else {
            c->moved += load + (hy->pre > 0 ? own : 0) + rhs_down;
            c->moved += load + own + (down ? (uint64_t)(s.pb - s.pa) * cp : 0);
        }
    }
    c->bytes = region_bytes(c, rhs, fp, cp);
}

/* The passes a cycle of this type starting at level l makes over each level. */
static void visits(const pyr_mg_hierarchy_t *hy, int l, pyr_cycle_t type, int64_t *v)
{
    if (l == hy->nlevels - 1) return;
    v[l]++;
    if (type == PYR_CYCLE_F && l + 2 < hy->nlevels) {
        visits(hy, l + 1, PYR_CYCLE_F, v);
        visits(hy, l + 1, PYR_CYCLE_V, v);
    } else {
        visits(hy, l + 1, PYR_CYCLE_V, v);
    }
}

/* The plan with levels 0 .. S - 1 streamed and the finest level's f as f0 says, in the budget left beside the
 * in-core levels (room): 0 where even slabs of two planes do not fit (*thinnest: what they need). */
static int plan_streamed(const pyr_problem_t *p, const pyr_mg_hierarchy_t *hy, int S, int f0, uint64_t room, pyr_mg_stream_t *s,
                         uint64_t *thinnest)
{
    const uint64_t e = pyr_precision_size(p->precision);
    *thinnest = 0;
    for (int l = 0; l < S; l++) {
        slab_cost_t c;
        slab_cost(p, hy, f0, S, s->halo[l], l, 2, &c);
        if (c.bytes > *thinnest) *thinnest = c.bytes;
    }
    if (*thinnest > room) return 0;
    uint64_t region = 0;
    s->streamed = S;
    s->f_resident = f0 == F0_RESIDENT;
    s->moved = 0;
    s->host_bytes = 0;
    int64_t v[PYR_MG_MAX_LEVELS] = {0};
    visits(hy, 0, hy->cycle, v);
    for (int l = 0; l < S; l++) {
        /* the thickest even slab that fits: the cost grows with the thickness */
        const int64_t n = hy->level[l].n[s->axis];
        int64_t lo = 2, hi = n + (n % 2);
        while (lo < hi) {
            const int64_t mid = (lo + hi + 2) / 2 / 2 * 2;
            slab_cost_t c;
            slab_cost(p, hy, f0, S, s->halo[l], l, mid, &c);
            if (c.bytes <= room) lo = mid;
            else hi = mid - 2;
        }
        slab_cost_t c;
        slab_cost(p, hy, f0, S, s->halo[l], l, lo, &c);
        s->slab[l] = lo;
        if (c.bytes > region) region = c.bytes;
        s->moved += (uint64_t)v[l] * c.moved;
        /* u twice and f; the finest level's u and f are the caller's, its second u the solve's */
        s->host_bytes += (uint64_t)(l > 0 ? 3 : 1) * (uint64_t)nodes(&hy->level[l]) * e;
    }
    s->device_bytes = region;
    return 1;
}

pyr_status_t pyr_mg_stream_plan(const pyr_problem_t *p, const pyr_mg_hierarchy_t *hy, uint64_t budget, pyr_mg_stream_t *s)
{
    memset(s, 0, sizeof *s);
    s->axis = slab_axis(hy);
    /* the finest level's pass recomputes a cycle's pre-smoothing, post-smooths and pre-smooths again; the others'
     * passes sweep once */
    s->halo[0] = 2 * hy->pre + hy->post + 4;
    for (int l = 1; l < hy->nlevels; l++) s->halo[l] = (hy->pre > hy->post ? hy->pre : hy->post) + 2;
    const uint64_t e = pyr_precision_size(p->precision), f0_bytes = (uint64_t)nodes(&hy->level[0]) * e;
    uint64_t incore[PYR_MG_MAX_LEVELS + 1] = {0}; /* the bytes of levels l .. nlevels - 1 */
    for (int l = hy->nlevels - 1; l >= 0; l--)
        incore[l] = incore[l + 1] + (uint64_t)(l > 0 || has_rhs(p, 0) ? 3 : 2) * (uint64_t)nodes(&hy->level[l]) * e;
    s->device_bytes = incore[0];
    if (incore[0] <= budget) return PYR_OK;
    uint64_t least = UINT64_MAX; /* the smallest budget that streams, for the refusal */
    for (int S = 1; S < hy->nlevels; S++) {
        /* f streamed with u, or kept on the device beside the in-core levels (then a cycle moves only u): the plan that
         * moves fewer bytes per cycle */
        pyr_mg_stream_t a = *s, b = *s;
        uint64_t ta, tb;
        const int fits_a = plan_streamed(p, hy, S, has_rhs(p, 0) ? F0_STREAMED : F0_NONE, incore[S] <= budget ? budget - incore[S] : 0, &a, &ta) &&
                           incore[S] <= budget;
        if (incore[S] + ta < least) least = incore[S] + ta;
        const int fits_b = has_rhs(p, 0) && incore[S] + f0_bytes <= budget &&
                           plan_streamed(p, hy, S, F0_RESIDENT, budget - incore[S] - f0_bytes, &b, &tb);
        if (!fits_a && !fits_b) continue;
        *s = fits_b && (!fits_a || b.moved <= a.moved) ? b : a;
        s->device_bytes += incore[S] + (s->f_resident ? f0_bytes : 0);
        return PYR_OK;
    }
    char want[32], have[32];
    pyr_format_bytes(least, want, sizeof want);
    pyr_format_bytes(budget, have, sizeof have);
    return pyr_fail(PYR_ERR_BUDGET, "method = multigrid needs at least %s of device memory for this grid (its coarsest level in core and "
                    "slabs of 2 planes of the streamed levels with their halos of up to %d planes), more than the budget of %s; use memory >= %s",
                    want, s->halo[0], have, want);
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
    /* out of core (pyr_mg_stream_t): the streamed levels' arrays in host memory (u, the next pass's u, f; the
     * finest level's u and f the caller's) and the device's slab region */
    int streamed, axis, halo[PYR_MG_MAX_LEVELS];
    int64_t slab[PYR_MG_MAX_LEVELS], plane[PYR_MG_MAX_LEVELS];
    slab_cost_t cost[PYR_MG_MAX_LEVELS]; /* a streamed level's slab sizes */
    void *hu[PYR_MG_MAX_LEVELS], *hv[PYR_MG_MAX_LEVELS], *hf[PYR_MG_MAX_LEVELS];
    const void *f_host[PYR_MG_MAX_LEVELS];
    void *owned[3 * PYR_MG_MAX_LEVELS]; /* the host arrays of the solve's own */
    int pinned[3 * PYR_MG_MAX_LEVELS];  /* which of them the backend's host_alloc made */
    int nowned;
    const void *registered[2]; /* the caller's u and f while pinned */
    int pin;                   /* whether the host arrays are to be pinned */
    void *region;
    uint64_t uploaded, downloaded;
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

/* ------------------------------------------------------------------ out of core: the passes */

/* A zero-filled host array of a streamed level: the backend's fast memory where it has some to give, else the heap's. */
static pyr_status_t host_array(mg_t *m, size_t bytes, void **buf)
{
    *buf = NULL;
    int pinned = 0;
    if (m->ops->host_alloc && m->pin) {
        if (m->ops->host_alloc(m->ctx, bytes, buf) == PYR_OK) pinned = 1;
        else pyr_clear_error(); /* pageable copies are slower, not wrong */
    }
    if (!*buf) *buf = calloc(1, bytes ? bytes : 1);
    if (!*buf) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for a streamed multigrid level's array (%.3g GiB)", (double)bytes / 1073741824.0);
    m->owned[m->nowned] = *buf;
    m->pinned[m->nowned++] = pinned;
    return PYR_OK;
}

/* Whether pinning this many bytes leaves most of the host's memory pageable (locking most of it would starve the
 * rest of the system: the copies stay pageable, slower, instead). */
static int pin_fits(uint64_t bytes)
{
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 && bytes <= (uint64_t)pages * (uint64_t)size / 2;
}

/* The caller's array pinned for the solve where the backend can (a refusal leaves it pageable). */
static void pin(mg_t *m, int k, const void *buf, size_t bytes)
{
    if (!m->ops->host_pin || !m->pin || !buf) return;
    if (m->ops->host_pin(m->ctx, (void *)(uintptr_t)buf, bytes) == PYR_OK) m->registered[k] = buf;
    else pyr_clear_error();
}

/* Bytes of `planes` planes of level l, and a pointer that many planes into a buffer of it. */
static size_t plane_bytes(const mg_t *m, int l, int64_t planes) { return (size_t)planes * (size_t)m->plane[l] * m->elem; }
static void *at(const mg_t *m, int l, const void *base, int64_t planes) { return (char *)(uintptr_t)base + plane_bytes(m, l, planes); }

static pyr_status_t up(mg_t *m, void *dst, const void *src, size_t bytes)
{
    m->uploaded += bytes;
    return m->ops->upload(m->ctx, dst, src, bytes);
}

static pyr_status_t down(mg_t *m, void *dst, const void *src, size_t bytes)
{
    m->downloaded += bytes;
    return m->ops->download(m->ctx, dst, src, bytes);
}

/* Level l's geometry restricted to its planes [p0, p1) along the slabs' axis: a side inside the grid is read, never
 * written, as a Dirichlet face is (its plane is a neighbour the kernels take from the buffer), a side on the grid's
 * face keeps that face's kind. */
static pyr_mg_geom_t view(const mg_t *m, int l, int64_t p0, int64_t p1)
{
    pyr_mg_geom_t v = m->g[l];
    const int ax = m->axis;
    if (p0 > 0) v.neumann[2 * ax] = 0, v.t[2 * ax] = 0;
    if (p1 < v.n[ax]) v.neumann[2 * ax + 1] = 0, v.t[2 * ax + 1] = 0;
    v.n[ax] = p1 - p0;
    return v;
}

/* Whether a view has unknowns (a kernel over none would launch an empty grid). */
static int any_unknowns(const pyr_mg_geom_t *g)
{
    for (int a = 0; a < 3; a++)
        if (pyr_mg_hi(g, a) <= pyr_mg_lo(g, a)) return 0;
    return 1;
}

static pyr_status_t cycle(mg_t *m, int l, pyr_cycle_t type);

/* The slab's sweeps: smooth()'s weights and updates on the planes [*w0, *w1) of the slab from s0 that hold the
 * current layer, a plane narrower at each side inside the grid after each sweep (the planes beyond read stale
 * values); on return [*w0, *w1) are the planes that hold the last. */
static pyr_status_t slab_smooth(mg_t *m, int l, int sweeps, int64_t s0, int64_t *w0, int64_t *w1, const void *F, void **X, void **Y)
{
    const pyr_mg_level_t *V = &m->hy->level[l];
    const int64_t n = V->n[m->axis];
    const double s2 = V->sigma * V->sigma;
    double w = 1;
    for (int s = 0; s < sweeps; s++) {
        if (s == 1) w = 1.0 / (1.0 - s2 / 2.0);
        else if (s > 1) w = 1.0 / (1.0 - s2 * w / 4.0);
        const pyr_mg_geom_t g = view(m, l, *w0, *w1);
        if (any_unknowns(&g))
            PYR_TRY(m->ops->smooth(m->ctx, &g, at(m, l, *X, *w0 - s0), F ? at(m, l, F, *w0 - s0) : NULL, at(m, l, *Y, *w0 - s0), V->gamma, w,
                                   V->sigma == 0 || s == 0));
        swap(X, Y);
        if (*w0 > 0) ++*w0;
        if (*w1 < n) --*w1;
    }
    return PYR_OK;
}

/* The slabs of a pass over level l, in order: each one's u (and f) go up into one of two sets of buffers while the
 * slab before computes on the other (region_bytes' layout). */
typedef struct {
    int l;
    int64_t n, next; /* the level's planes along the axis, the next slab's first own plane */
    int k;           /* slabs begun */
    void *up[2], *fup[2], *B, *C, *O;
    span_t s;        /* the current slab */
    void *A, *F;     /* its u (copied to B) and f buffers */
} slabs_t;

static int f_streamed(const mg_t *m, int l) { return m->f_host[l] && !(l == 0 && m->f[0]); }

/* Issue the uploads of the slab whose own planes start at a into set k: after the work issued so far (the slab two
 * before, which read that set). */
static pyr_status_t fetch(mg_t *m, slabs_t *it, int64_t a, int k)
{
    span_t s;
    span_of(m->hy, m->axis, m->halo[it->l], it->l, a, imin(it->n, a + m->slab[it->l]), &s);
    const size_t bytes = plane_bytes(m, it->l, s.s1 - s.s0);
    m->uploaded += bytes;
    PYR_TRY(m->ops->upload_async(m->ctx, it->up[k], at(m, it->l, m->hu[it->l], s.s0), bytes));
    if (f_streamed(m, it->l)) {
        m->uploaded += bytes;
        PYR_TRY(m->ops->upload_async(m->ctx, it->fup[k], at(m, it->l, m->f_host[it->l], s.s0), bytes));
    }
    return PYR_OK;
}

static pyr_status_t slabs_begin(mg_t *m, int l, slabs_t *it)
{
    memset(it, 0, sizeof *it);
    it->l = l;
    it->n = m->hy->level[l].n[m->axis];
    const uint64_t fine = aligned((uint64_t)plane_bytes(m, l, m->cost[l].fine));
    char *r = m->region;
    it->up[0] = r;
    it->up[1] = r + fine;
    it->B = r + 2 * fine;
    const int withF = f_streamed(m, l);
    it->fup[0] = withF ? r + 3 * fine : NULL;
    it->fup[1] = withF ? r + 4 * fine : NULL;
    it->C = r + (withF ? 5 : 3) * fine;
    it->O = (char *)it->C + aligned((uint64_t)plane_bytes(m, l + 1, m->cost[l].coarse));
    return fetch(m, it, 0, 0);
}

/* The next slab (*more = 0 after the last): its uploads waited for, the one after it issued, u copied to B (the
 * boundary in both of the sweeps' buffers). */
static pyr_status_t slabs_next(mg_t *m, slabs_t *it, int *more)
{
    *more = it->next < it->n;
    if (!*more) return PYR_OK;
    span_of(m->hy, m->axis, m->halo[it->l], it->l, it->next, imin(it->n, it->next + m->slab[it->l]), &it->s);
    PYR_TRY(m->ops->upload_join(m->ctx));
    it->A = it->up[it->k % 2];
    it->F = it->fup[it->k % 2];
    it->next += m->slab[it->l];
    if (it->next < it->n) PYR_TRY(fetch(m, it, it->next, (it->k + 1) % 2));
    it->k++;
    return m->ops->copy(m->ctx, it->B, it->A, plane_bytes(m, it->l, it->s.s1 - it->s.s0));
}

/* The slab's own planes of X down into level l's next u: through O on a download that runs beside the next slab's
 * upload and work, once the one before has landed. */
static pyr_status_t put_own(mg_t *m, int l, const span_t *s, const void *X, void *O)
{
    const size_t bytes = plane_bytes(m, l, s->b - s->a);
    PYR_TRY(m->ops->download_wait(m->ctx));
    PYR_TRY(m->ops->copy(m->ctx, O, at(m, l, X, s->a - s->s0), bytes));
    m->downloaded += bytes;
    return m->ops->download_async(m->ctx, at(m, l, m->hv[l], s->a), O, bytes);
}

/* The slab's residual on the planes [s.fa, s.fb) of X (valid there) into Y, and its full weighting into level l + 1's
 * right-hand side: straight into it where that level is in core (this slab's own coarse planes only), else into C
 * and down to the host. */
static pyr_status_t slab_restrict(mg_t *m, int l, const span_t *s, const void *X, const void *Fs, void *Y, void *C)
{
    const int into_host = l + 1 < m->streamed;
    const pyr_mg_geom_t gf = view(m, l, s->fa, s->fb), gc = view(m, l + 1, s->ca, s->cb);
    if (any_unknowns(&gf))
        PYR_TRY(m->ops->residual(m->ctx, &gf, at(m, l, X, s->fa - s->s0), Fs ? at(m, l, Fs, s->fa - s->s0) : NULL, at(m, l, Y, s->fa - s->s0),
                                 NULL));
    void *dst = into_host ? C : at(m, l + 1, m->f[l + 1], s->ca);
    if (any_unknowns(&gc)) PYR_TRY(m->ops->restrict_fw(m->ctx, &gf, m->hy->level[l].coarsen, at(m, l, Y, s->fa - s->s0), &gc, dst));
    if (into_host) {
        int64_t clo, chi;
        unknown_planes(m->hy, m->axis, l + 1, &clo, &chi);
        const int64_t z0 = imax(s->A, clo), z1 = imin(s->B, chi);
        if (z1 > z0) PYR_TRY(down(m, at(m, l + 1, m->hf[l + 1], z0), at(m, l + 1, C, z0 - s->ca), plane_bytes(m, l + 1, z1 - z0)));
    }
    return PYR_OK;
}

/* Interpolation of level l + 1's correction onto the slab's planes [*w0, *w1) of X (valid there), narrowed to a view
 * whose ends nest in the coarse level; on return [*w0, *w1) are the planes it corrected. */
static pyr_status_t slab_prolong(mg_t *m, int l, int64_t s0, int64_t *w0, int64_t *w1, void *X, void *C)
{
    int64_t p0, p1, c0, c1;
    prolong_view(m->hy, m->axis, l, *w0, *w1, &p0, &p1, &c0, &c1);
    const void *E = at(m, l + 1, m->u[l + 1], c0);
    if (l + 1 < m->streamed) {
        PYR_TRY(up(m, C, at(m, l + 1, m->hu[l + 1], c0), plane_bytes(m, l + 1, c1 - c0)));
        E = C;
    }
    const pyr_mg_geom_t gc = view(m, l + 1, c0, c1), gf = view(m, l, p0, p1);
    if (any_unknowns(&gf)) PYR_TRY(m->ops->prolong_add(m->ctx, &gc, m->hy->level[l].coarsen, E, &gf, at(m, l, X, p0 - s0)));
    *w0 = p0 > 0 ? p0 + 1 : 0;
    *w1 = p1 < m->hy->level[l].n[m->axis] ? p1 - 1 : p1;
    return PYR_OK;
}

/* The slab's f as the kernels read it from the slab's first plane (NULL: zero): the resident f's planes, or F. */
static const void *slab_f(const mg_t *m, int l, const span_t *s, const void *F)
{
    if (!m->f_host[l]) return NULL;
    return l == 0 && m->f[0] ? at(m, 0, m->f[0], s->s0) : F;
}

/* A streamed coarser level's pre-smoothing, residual and full weighting into level l + 1's right-hand side. */
static pyr_status_t pass_pre(mg_t *m, int l)
{
    slabs_t it;
    PYR_TRY(slabs_begin(m, l, &it));
    for (int more;;) {
        PYR_TRY(slabs_next(m, &it, &more));
        if (!more) break;
        const span_t s = it.s;
        const void *Fs = slab_f(m, l, &s, it.F);
        void *X = it.A, *Y = it.B;
        int64_t w0 = s.s0, w1 = s.s1;
        PYR_TRY(slab_smooth(m, l, m->hy->pre, s.s0, &w0, &w1, Fs, &X, &Y));
        PYR_TRY(slab_restrict(m, l, &s, X, Fs, Y, it.C));
        if (m->hy->pre > 0) PYR_TRY(put_own(m, l, &s, X, it.O));
    }
    PYR_TRY(m->ops->settle(m->ctx));
    if (m->hy->pre > 0) swap(&m->hu[l], &m->hv[l]);
    return PYR_OK;
}

/* A streamed coarser level's interpolation of the correction, its addition and the post-smoothing sweeps. */
static pyr_status_t pass_post(mg_t *m, int l)
{
    slabs_t it;
    PYR_TRY(slabs_begin(m, l, &it));
    for (int more;;) {
        PYR_TRY(slabs_next(m, &it, &more));
        if (!more) break;
        const span_t s = it.s;
        void *X = it.A, *Y = it.B;
        int64_t w0 = s.s0, w1 = s.s1;
        PYR_TRY(slab_prolong(m, l, s.s0, &w0, &w1, X, it.C));
        PYR_TRY(slab_smooth(m, l, m->hy->post, s.s0, &w0, &w1, slab_f(m, l, &s, it.F), &X, &Y));
        PYR_TRY(put_own(m, l, &s, X, it.O));
    }
    PYR_TRY(m->ops->settle(m->ctx));
    swap(&m->hu[l], &m->hv[l]);
    return PYR_OK;
}

/* The finest level streamed: one pass per cycle.  From u as the last cycle left it (the initial field on the first
 * pass), each slab recomputes that cycle's pre-smoothing sweeps (never stored), adds the interpolated correction,
 * post-smooths (its own planes, the cycle's result, go down), takes the residual's norm and, where another cycle
 * may follow (next), pre-smooths again and restricts that residual into level 1's right-hand side.  The first pass
 * (first) takes the initial field's norm and the first cycle's restriction only.  So a cycle moves u up and down
 * once and f up once. */
static pyr_status_t pass_finest(mg_t *m, int first, int next, double *norm)
{
    const int64_t n = m->hy->level[0].n[m->axis];
    double most = 0;
    slabs_t it;
    PYR_TRY(slabs_begin(m, 0, &it));
    for (int more;;) {
        PYR_TRY(slabs_next(m, &it, &more));
        if (!more) break;
        const span_t s = it.s;
        const void *Fs = slab_f(m, 0, &s, it.F);
        void *X = it.A, *Y = it.B;
        int64_t w0 = s.s0, w1 = s.s1;
        if (!first) {
            PYR_TRY(slab_smooth(m, 0, m->hy->pre, s.s0, &w0, &w1, Fs, &X, &Y));
            PYR_TRY(slab_prolong(m, 0, s.s0, &w0, &w1, X, it.C));
            PYR_TRY(slab_smooth(m, 0, m->hy->post, s.s0, &w0, &w1, Fs, &X, &Y));
        }
        /* the norm over the own planes (their neighbours read) into Y, whose other planes keep the layer before */
        const int64_t r0 = imax(0, s.a - 1), r1 = imin(n, s.b + 1);
        const pyr_mg_geom_t gr = view(m, 0, r0, r1);
        double r = 0;
        if (any_unknowns(&gr))
            PYR_TRY(m->ops->residual(m->ctx, &gr, at(m, 0, X, r0 - s.s0), Fs ? at(m, 0, Fs, r0 - s.s0) : NULL, at(m, 0, Y, r0 - s.s0), &r));
        if (r > most || isnan(r)) most = isnan(most) ? most : r;
        if (!first) PYR_TRY(put_own(m, 0, &s, X, it.O));
        if (next) {
            PYR_TRY(slab_smooth(m, 0, m->hy->pre, s.s0, &w0, &w1, Fs, &X, &Y));
            PYR_TRY(slab_restrict(m, 0, &s, X, Fs, Y, it.C));
        }
    }
    PYR_TRY(m->ops->settle(m->ctx));
    if (!first) swap(&m->hu[0], &m->hv[0]);
    *norm = most;
    return PYR_OK;
}

/* Level l + 1's correction from zero in both buffers (Chebyshev's layer two sweeps back on the coarsest): one
 * cycle there, or an F-cycle's two. */
static pyr_status_t correction(mg_t *m, int l, pyr_cycle_t type)
{
    const int last = m->hy->nlevels - 1;
    const size_t bytes = (size_t)nodes(&m->hy->level[l + 1]) * m->elem;
    if (l + 1 < m->streamed) {
        memset(m->hu[l + 1], 0, bytes); /* the next pass writes every plane of the other */
    } else {
        PYR_TRY(m->ops->zero(m->ctx, m->u[l + 1], bytes));
        PYR_TRY(m->ops->zero(m->ctx, m->t[l + 1], bytes));
    }
    if (type == PYR_CYCLE_F && l + 1 < last) {
        PYR_TRY(cycle(m, l + 1, PYR_CYCLE_F));
        return cycle(m, l + 1, PYR_CYCLE_V);
    }
    return cycle(m, l + 1, PYR_CYCLE_V);
}

static pyr_status_t cycle(mg_t *m, int l, pyr_cycle_t type)
{
    const int last = m->hy->nlevels - 1;
    if (l == last) return coarse_solve(m, l);
    const int *k = m->hy->level[l].coarsen;
    if (l < m->streamed) {
        PYR_TRY(pass_pre(m, l));
        count(m, l, m->hy->pre);
    } else {
        PYR_TRY(smooth(m, l, m->hy->pre));
        PYR_TRY(m->ops->residual(m->ctx, &m->g[l], m->u[l], m->f[l], m->t[l], NULL));
        PYR_TRY(m->ops->restrict_fw(m->ctx, &m->g[l], k, m->t[l], &m->g[l + 1], m->f[l + 1]));
    }
    count(m, l, 1);
    count(m, l + 1, 1);
    PYR_TRY(correction(m, l, type));
    if (l < m->streamed) {
        PYR_TRY(pass_post(m, l));
        count(m, l, 1);
        count(m, l, m->hy->post);
        return PYR_OK;
    }
    PYR_TRY(m->ops->prolong_add(m->ctx, &m->g[l + 1], k, m->u[l + 1], &m->g[l], m->u[l]));
    count(m, l, 1);
    return smooth(m, l, m->hy->post);
}

/* One cycle and the finest level's residual norm after it; streamed, the finest level's passes of this cycle ran
 * with the last one (pass_finest), and `next` says whether another may follow. */
static pyr_status_t cycle_and_norm(mg_t *m, pyr_cycle_t type, int next, double *r)
{
    if (!m->streamed) {
        PYR_TRY(cycle(m, 0, type));
        return m->ops->residual(m->ctx, &m->g[0], m->u[0], m->f[0], m->t[0], r);
    }
    count(m, 0, m->hy->pre); /* the costs in the in-core order, so that the sums are the same */
    count(m, 0, 1);
    count(m, 1, 1);
    PYR_TRY(correction(m, 0, type));
    PYR_TRY(pass_finest(m, 0, next, r));
    count(m, 0, 1);
    count(m, 0, m->hy->post);
    return PYR_OK;
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
    if (m->streamed) PYR_TRY(pass_finest(m, 1, p->steps > 0, &r)); /* with the first cycle's restriction */
    else PYR_TRY(m->ops->residual(m->ctx, &m->g[0], m->u[0], m->f[0], m->t[0], &r));
    count(m, 0, 1);
    if (!(res->initial > 0)) res->initial = r; /* f = 0: relative to the initial residual */
    res->residual = res->initial > 0 ? r / res->initial : 0;
    if (isnan(res->residual)) return pyr_fail(PYR_ERR_DIVERGED, "the initial field's residual is not a number");
    int stalled = 0;
    while (res->cycles < p->steps && !(tol > 0 && res->residual < tol) && res->residual > 0) {
        const double before = res->residual;
        PYR_TRY(cycle_and_norm(m, m->hy->cycle, res->cycles + 1 < p->steps, &r));
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
    return pyr_mg_solve_within(p, backend, device, threads, UINT64_MAX, u, f, hooks, res);
}

pyr_status_t pyr_mg_solve_within(const pyr_problem_t *p, pyr_backend_kind_t backend, int device, int threads, uint64_t budget,
                                 pyr_field_t *u, const pyr_field_t *f, const pyr_hooks_t *hooks, pyr_mg_result_t *res)
{
    memset(res, 0, sizeof *res);
    pyr_mg_hierarchy_t hy;
    PYR_TRY(pyr_mg_hierarchy(p, &hy));
    pyr_mg_stream_t plan;
    PYR_TRY(pyr_mg_stream_plan(p, &hy, budget, &plan));
    const pyr_mg_ops_t *ops = ops_of(backend);
    if (!ops) return pyr_fail(PYR_ERR_NODEVICE, "multigrid: this pyrgrid has no multigrid kernels for the %s backend; use backend = cpu",
                              backend == PYR_BACKEND_CUDA ? "cuda" : "chosen");
    mg_t m;
    memset(&m, 0, sizeof m);
    m.ops = ops;
    m.hy = &hy;
    const size_t e = pyr_precision_size(p->precision);
    m.elem = e;
    m.streamed = plan.streamed;
    m.axis = plan.axis;
    memcpy(m.halo, plan.halo, sizeof m.halo);
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
        m.plane[l] = plane_nodes(L, m.axis);
    }
    pyr_status_t st = ops->create(device, threads, p->precision, &m.ctx);
    if (st != PYR_OK) return st;
    st = pyr_poisson_chebyshev_weights(hy.coarse_rho, &m.cheb, &m.ncheb);
    const size_t fine_bytes = (size_t)nodes(&hy.level[0]) * e;
    for (int l = m.streamed; l < hy.nlevels && st == PYR_OK; l++) {
        const size_t b = (size_t)nodes(&hy.level[l]) * e;
        st = ops->alloc(m.ctx, b, &m.u[l]);
        if (st == PYR_OK) st = ops->alloc(m.ctx, b, &m.t[l]);
        if (st == PYR_OK && (l > 0 || f)) st = ops->alloc(m.ctx, b, &m.f[l]);
    }
    /* the streamed levels: their arrays on the host, one slab region on the device for the passes of each in turn */
    uint64_t region = 0;
    m.pin = m.streamed > 0 && pin_fits(plan.host_bytes + (uint64_t)fine_bytes * (f ? 2 : 1));
    for (int l = 0; l < m.streamed && st == PYR_OK; l++) {
        slab_cost_t c;
        slab_cost(p, &hy, !f ? F0_NONE : plan.f_resident ? F0_RESIDENT : F0_STREAMED, m.streamed, m.halo[l], l, plan.slab[l], &c);
        m.slab[l] = plan.slab[l];
        m.cost[l] = c;
        if (c.bytes > region) region = c.bytes;
        const size_t b = (size_t)nodes(&hy.level[l]) * e;
        if (l == 0) {
            /* the caller's u and f, and a second u */
            m.hu[0] = u->data;
            m.f_host[0] = f ? f->data : NULL;
            pin(&m, 0, u->data, b);
            pin(&m, 1, m.f_host[0], b);
            st = host_array(&m, b, &m.hv[0]);
        } else {
            st = host_array(&m, b, &m.hu[l]);
            if (st == PYR_OK) st = host_array(&m, b, &m.hv[l]);
            if (st == PYR_OK) st = host_array(&m, b, &m.hf[l]);
            m.f_host[l] = m.hf[l];
        }
    }
    if (st == PYR_OK && region) st = ops->alloc(m.ctx, (size_t)region, &m.region);
    /* the finest level's f on the device where the plan keeps it there, uploaded once */
    if (st == PYR_OK && m.streamed && f && plan.f_resident) st = ops->alloc(m.ctx, fine_bytes, &m.f[0]);
    if (st == PYR_OK && m.f[0] && m.streamed) st = up(&m, m.f[0], f->data, fine_bytes);
    if (st == PYR_OK && hy.pure) {
        m.host = malloc((size_t)nodes(&hy.level[hy.nlevels - 1]) * e);
        if (!m.host) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    /* every face Neumann: the solution the sweeps converge to keeps the initial field's weighted mean */
    const double mean = hy.pure ? weighted_mean(&m.g[0], u->data, p->precision) : 0;
    if (!m.streamed) {
        if (st == PYR_OK) st = up(&m, m.u[0], u->data, fine_bytes);
        if (st == PYR_OK) st = ops->copy(m.ctx, m.t[0], m.u[0], fine_bytes); /* the boundary in both buffers */
        if (st == PYR_OK && f) st = up(&m, m.f[0], f->data, fine_bytes);
    }
    if (st == PYR_OK) {
        res->initial = f ? max_abs(f) : 0;
        st = run_cycles(&m, p, hooks, res);
        if (m.streamed) (void)ops->settle(m.ctx); /* a pass stopped by an error leaves no transfer behind */
        /* the field holds the last cycle's result, also when the run stopped with an error after a cycle */
        pyr_status_t got = PYR_OK;
        if (!m.streamed) got = down(&m, u->data, m.u[0], fine_bytes);
        else if (m.hu[0] != u->data) memcpy(u->data, m.hu[0], fine_bytes);
        if (got == PYR_OK && hy.pure) add_constant(nodes(&hy.level[0]), u->data, p->precision, mean - weighted_mean(&m.g[0], u->data, p->precision));
        if (st == PYR_OK) st = got;
    }
    res->sweeps = m.sweeps;
    res->node_updates = m.updates;
    res->streamed = m.streamed;
    res->uploaded = m.uploaded;
    res->downloaded = m.downloaded;
    for (int l = 0; l < hy.nlevels; l++) {
        if (m.u[l]) ops->release(m.ctx, m.u[l]);
        if (m.t[l]) ops->release(m.ctx, m.t[l]);
        if (m.f[l]) ops->release(m.ctx, m.f[l]);
    }
    for (int k = 0; k < m.nowned; k++) {
        if (m.pinned[k]) ops->host_free(m.ctx, m.owned[k]);
        else free(m.owned[k]);
    }
    for (int k = 0; k < 2; k++)
        if (m.registered[k]) ops->host_unpin(m.ctx, (void *)(uintptr_t)m.registered[k]);
    if (m.region) ops->release(m.ctx, m.region);
    free(m.cheb);
    free(m.host);
    ops->destroy(m.ctx);
    return st;
}
