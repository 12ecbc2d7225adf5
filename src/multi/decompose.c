/* The decomposition of one grid over several devices and ranks, and the
 * model that chooses it: parts per axis, the devices of each rank, the
 * exchange height H and the halo depth it implies, priced by the
 * performance model (plan/model.c) plus the links between parts. */
#include "multi/parts_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "plan/model.h"

/* Nodes at an end of an axis that some field of sub-step u leaves as they were. */
static int frozen(const pyr_substep_t *u, int a, int side)
{
    const int m = side ? u->margin_hi[a] : u->margin_lo[a], e = side ? u->edge_hi[a] : u->edge_lo[a];
    return e > m ? e : m;
}

/* How far (nodes) the error of a frozen edge reaches after `steps` steps
 * along one axis and side: the halo depth g.  A sub-step that does not
 * update the first m nodes of an edge leaves them wrong, and one that reads
 * r nodes that way spreads what is wrong r nodes further; heat and Poisson
 * (m = r = 1) give g = steps. */
static int64_t halo_depth(const pyr_scheme_t *s, int a, int side, int64_t steps)
{
    int maxm = 0, reach = 0;
    for (int k = 0; k < s->nsub; k++) {
        int m = frozen(&s->sub[k], a, side);
        if (m > maxm) maxm = m;
        reach += side ? s->sub[k].reach_hi[a] : s->sub[k].reach_lo[a];
    }
    int64_t w = 0, done = 0;
    for (; done < steps; done++) {
        if (done >= 3 && w >= maxm) break; /* from here on each step adds its reach */
        for (int k = 0; k < s->nsub; k++) {
            int m = frozen(&s->sub[k], a, side);
            int r = side ? s->sub[k].reach_hi[a] : s->sub[k].reach_lo[a];
            int64_t next = w > 0 ? w + r : 0;
            if (m > next) next = m;
            if (w > next) next = w;
            w = next;
        }
    }
    if (done < steps && w > 0) w += (steps - done) * reach;
    return w;
}


/* Own range of piece k of c along an axis of n nodes whose interior is
 * [f0, n - f1): the first and last pieces take the boundary nodes too. */
static void cut(int64_t n, int64_t f0, int64_t f1, int64_t c, int64_t k, int64_t *lo, int64_t *hi)
{
    const int64_t interior = n - f0 - f1;
    *lo = k == 0 ? 0 : f0 + (int64_t)((__int128)k * interior / c);
    *hi = k == c - 1 ? n : f0 + (int64_t)((__int128)(k + 1) * interior / c);
}

static void part_index3(const int count[3], int p, int idx[3])
{
    idx[0] = p % count[0];
    idx[1] = (p / count[0]) % count[1];
    idx[2] = p / (count[0] * count[1]);
}

pyr_box_t pyr_multi_own_box(const pyr_problem_t *pr, const int fixed[3][2], const int count[3], int p)
{
    int idx[3];
    part_index3(count, p, idx);
    pyr_box_t b;
    for (int a = 0; a < 3; a++) {
        if (a >= pr->dims) {
            b.lo[a] = 0;
            b.hi[a] = 1;
            continue;
        }
        cut(pr->n[a], fixed[a][0], fixed[a][1], count[a], idx[a], &b.lo[a], &b.hi[a]);
    }
    return b;
}

pyr_box_t pyr_multi_local_box(const pyr_problem_t *pr, const pyr_box_t *own, const int64_t depth[3][2])
{
    pyr_box_t b = *own;
    for (int a = 0; a < pr->dims; a++) {
        if (own->lo[a] > 0) b.lo[a] = pyr_multi_imax(0, own->lo[a] - depth[a][0]);
        if (own->hi[a] < pr->n[a]) b.hi[a] = pyr_multi_imin(pr->n[a], own->hi[a] + depth[a][1]);
    }
    return b;
}

/* Parts along axis a whose own range meets [lo, hi). */
static void parts_meeting(const pyr_problem_t *pr, const int fixed[3][2], const int count[3], int a, int64_t lo, int64_t hi, int *k0,
                          int *k1)
{
    if (a >= pr->dims) {
        *k0 = 0;
        *k1 = 1;
        return;
    }
    int first = -1, last = -1;
    for (int k = 0; k < count[a]; k++) {
        int64_t l, h;
        cut(pr->n[a], fixed[a][0], fixed[a][1], count[a], k, &l, &h);
        if (l < hi && lo < h) {
            if (first < 0) first = k;
            last = k;
        }
    }
    *k0 = first < 0 ? 0 : first;
    *k1 = first < 0 ? 0 : last + 1;
}



int pyr_multi_each_message_into(const pyr_problem_t *pr, const int fixed[3][2], const pyr_box_t *changing, const geometry_t *g, int to,
                             msg_fn fn, void *user)
{
    const pyr_box_t own = pyr_multi_own_box(pr, fixed, g->count, to);
    const pyr_box_t loc = pyr_multi_local_box(pr, &own, g->depth);
    int k0[3], k1[3];
    for (int a = 0; a < 3; a++) parts_meeting(pr, fixed, g->count, a, loc.lo[a], loc.hi[a], &k0[a], &k1[a]);
    for (int z = k0[2]; z < k1[2]; z++)
        for (int y = k0[1]; y < k1[1]; y++)
            for (int x = k0[0]; x < k1[0]; x++) {
                const int from = (z * g->count[1] + y) * g->count[0] + x;
                if (from == to) continue;
                pyr_box_t o = pyr_multi_own_box(pr, fixed, g->count, from);
                pyr_box_t b = pyr_box_intersect(&o, &loc);
                b = pyr_box_intersect(&b, changing);
                if (pyr_box_empty(&b)) continue;
                if (fn(user, from, to, &b)) return 1;
            }
    return 0;
}


typedef struct {
    const geometry_t *g;
    const int *cdev;
    double *cost; /* per part: seconds per exchange of its messages */
    link_t local, remote;
    int nstate;
    const pyr_box_t *changing;
    int dims;
} cost_ctx_t;

/* Rank of part p when each rank takes cdev[a] consecutive parts along every axis. */
int pyr_multi_rank_of_part(const int count[3], const int cdev[3], int p)
{
    int idx[3];
    part_index3(count, p, idx);
    const int cr0 = count[0] / cdev[0], cr1 = count[1] / cdev[1];
    return ((idx[2] / cdev[2]) * cr1 + idx[1] / cdev[1]) * cr0 + idx[0] / cdev[0];
}

/* Device slot (0 .. devices per rank - 1) of part p within its rank. */
int pyr_multi_device_of_part(const int count[3], const int cdev[3], int p)
{
    int idx[3];
    part_index3(count, p, idx);
    return ((idx[2] % cdev[2]) * cdev[1] + idx[1] % cdev[1]) * cdev[0] + idx[0] % cdev[0];
}

static int add_cost(void *user, int from, int to, const pyr_box_t *box)
{
    cost_ctx_t *c = user;
    const int same = pyr_multi_rank_of_part(c->g->count, c->cdev, from) == pyr_multi_rank_of_part(c->g->count, c->cdev, to);
    const link_t *l = same ? &c->local : &c->remote;
    /* A box of part rows is one short run per row in the host fields and on
     * the device (packing, strided copies): priced as twice the values, as
     * the paper's rectangular copies ran slower; whole rows of part planes
     * (3D, cut along y) a quarter more.  So the grid is cut along its
     * slowest axis unless blocks save more than that. */
    const int part_rows = c->dims > 1 && (box->lo[0] > c->changing->lo[0] || box->hi[0] < c->changing->hi[0]);
    const int part_planes = c->dims > 2 && (box->lo[1] > c->changing->lo[1] || box->hi[1] < c->changing->hi[1]);
    const double shape = part_rows ? 2.0 : part_planes ? 1.25 : 1.0;
    const double t = l->latency + (double)pyr_box_volume(box) * (double)c->nstate * l->per_value * shape;
    c->cost[from] += t;
    c->cost[to] += t;
    return 0;
}

/* Values a part computes per step: its local grid less the nodes the
 * local problem's sub-steps do not update. */
static double local_work(const pyr_parts_t *P, const pyr_box_t *loc)
{
    double v = 0;
    for (int k = 0; k < P->scheme->nsub; k++) {
        double w = 1;
        for (int a = 0; a < 3; a++) {
            int64_t e = pyr_box_extent(loc, a);
            if (a < P->problem.dims) e -= P->scheme->sub[k].margin_lo[a] + P->scheme->sub[k].margin_hi[a];
            w *= (double)(e > 0 ? e : 0);
        }
        v += w;
    }
    return v;
}

/* The model: seconds per step of the slowest part, which computes its local
 * interior every step and swaps its halos every H steps. */
static double predict(const pyr_parts_t *P, const geometry_t *g, const int cdev[3], const link_t *local, const link_t *remote,
                      const pyr_model_constants_t *k, double *cost)
{
    const int n = g->count[0] * g->count[1] * g->count[2];
    for (int p = 0; p < n; p++) cost[p] = 0;
    cost_ctx_t c = {g, cdev, cost, *local, *remote, P->nstate, &P->changing, P->problem.dims};
    for (int to = 0; to < n; to++) pyr_multi_each_message_into(&P->problem, P->fixed, &P->changing, g, to, add_cost, &c);
    const double tau_a = pyr_model_compute_cost(k, g->H);
    double worst = 0;
    for (int p = 0; p < n; p++) {
        pyr_box_t own = pyr_multi_own_box(&P->problem, P->fixed, g->count, p), loc = pyr_multi_local_box(&P->problem, &own, g->depth);
        double t = local_work(P, &loc) * tau_a + cost[p] / (double)g->H;
        if (t > worst) worst = t;
    }
    return worst;
}

void pyr_multi_set_depths(const pyr_parts_t *P, geometry_t *g)
{
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) g->depth[a][side] = a < P->problem.dims ? halo_depth(P->scheme, a, side, g->H) : 0;
}

static int64_t interior_of(const pyr_parts_t *P, int a)
{
    return a < P->problem.dims ? P->problem.n[a] - P->fixed[a][0] - P->fixed[a][1] : 1;
}

/* The most parts along axis a: one updated node each, and every local grid
 * at least 3 nodes (an edge part of a scheme that updates the boundary
 * nodes, Maxwell's, needs two of its own beside its halo). */
static int64_t most_along(const pyr_parts_t *P, int a)
{
    const int64_t in = interior_of(P, a);
    if (a >= P->problem.dims || (P->fixed[a][0] > 0 && P->fixed[a][1] > 0)) return in;
    return in / 2 > 1 ? in / 2 : 1;
}

/* Factorisations of n into cdev[0..2] dividing count[a] each; calls fn for each. */
static int device_splits(int n, const int count[3], int out[][3], int max)
{
    int m = 0;
    for (int a = 1; a <= n; a++) {
        if (n % a || count[0] % a) continue;
        for (int b = 1; b <= n / a; b++) {
            if ((n / a) % b || count[1] % b) continue;
            int c = n / a / b;
            if (count[2] % c) continue;
            if (!out) {
                m++;
                continue;
            }
            if (m < max) {
                out[m][0] = a;
                out[m][1] = b;
                out[m][2] = c;
                m++;
            }
        }
    }
    return m;
}

/* The geometry with the least predicted time per step among those the
 * options allow; H too unless forced. */
pyr_status_t pyr_multi_choose(pyr_parts_t *P, const link_t *local, const link_t *remote, const pyr_model_constants_t *k, int64_t forced_h,
                           geometry_t *best, int best_cdev[3])
{
    const pyr_problem_t *pr = &P->problem;
    const int n = P->nparts, dims = pr->dims;
    const char *how = P->options.partition[0] ? P->options.partition : "auto";
    int given[3] = {0, 0, 0};
    if (strcmp(how, "auto") && strcmp(how, "slabs") && strcmp(how, "blocks")) {
        int g0 = 0, g1 = 0, g2 = 0;
        char extra;
        int got = sscanf(how, "%dx%dx%d%c", &g0, &g1, &g2, &extra);
        if (got != 3 || g0 < 1 || g1 < 1 || g2 < 1)
            return pyr_fail(PYR_ERR_CONFIG, "run.partition = '%s': write auto, slabs, blocks, or parts per axis AxBxC (x, y, z), e.g. 1x2x2", how);
        given[0] = g0, given[1] = g1, given[2] = g2;
        if ((long)g0 * g1 * g2 != n)
            return pyr_fail(PYR_ERR_CONFIG, "run.partition = %s makes %ld parts, but the run has %d (%d rank%s x %d device%s); give counts "
                            "whose product is %d", how, (long)g0 * g1 * g2, n, P->ranks, P->ranks == 1 ? "" : "s", P->ndev,
                            P->ndev == 1 ? "" : "s", n);
        for (int a = dims; a < 3; a++)
            if (given[a] != 1)
                return pyr_fail(PYR_ERR_CONFIG, "run.partition = %s cuts axis %c of a %dD grid; use 1 there", how, "xyz"[a], dims);
    }
    int64_t ladder[64];
    int nl = 0;
    const int64_t hmax = pr->steps > 0 ? pyr_multi_imin(pr->steps, (int64_t)1 << 20) : 1;
    if (forced_h > 0) ladder[nl++] = forced_h;
    else
        for (int64_t h = 1; h <= hmax && nl < 64; h = h < 4 ? h + 1 : h + h / 2) ladder[nl++] = h;
    if (nl == 0) ladder[nl++] = 1;
    double *cost = malloc((size_t)n * sizeof *cost);
    if (!cost) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    double best_t = INFINITY;
    int any_counts = 0, any_fit = 0, any_kind = 0;
    for (int c2 = 1; c2 <= n; c2++) {
        if (n % c2) continue;
        for (int c1 = 1; c1 <= n / c2; c1++) {
            if ((n / c2) % c1) continue;
            const int c0 = n / c2 / c1;
            const int cnt[3] = {c0, c1, c2};
            int fits = 1, kind = 1, split = 0;
            for (int a = 0; a < 3; a++) {
                if (cnt[a] > most_along(P, a)) fits = 0;
                if (a >= dims && cnt[a] != 1) fits = 0;
                split += cnt[a] > 1;
            }
            if (given[0] && (cnt[0] != given[0] || cnt[1] != given[1] || cnt[2] != given[2])) kind = 0;
            if (!strcmp(how, "slabs") && cnt[dims - 1] != n) kind = 0;
            if (!strcmp(how, "blocks") && dims > 1 && n > 1 && split < 2) kind = 0;
            if (kind) any_kind = 1;
            if (fits && device_splits(P->ndev, cnt, NULL, 0) == 0) fits = 0;
            if (fits) any_fit = 1;
            if (!fits || !kind) continue;
            int splits[64][3];
            int ns = device_splits(P->ndev, cnt, splits, 64);
            any_counts = 1;
            for (int si = 0; si < ns; si++)
                for (int li = 0; li < nl; li++) {
                    geometry_t g;
                    memcpy(g.count, cnt, sizeof g.count);
                    g.H = ladder[li];
                    pyr_multi_set_depths(P, &g);
                    double t = predict(P, &g, splits[si], local, remote, k, cost);
                    /* ties: fewer cut axes, then the cut along the slowest axis (contiguous halos) */
                    if (t < best_t * (1 - 1e-9)) {
                        best_t = t;
                        *best = g;
                        memcpy(best_cdev, splits[si], sizeof splits[si]);
                    }
                }
        }
    }
    free(cost);
    if (!any_counts && any_fit) {
        if (given[0]) {
            for (int a = 0; a < dims; a++)
                if (given[a] > most_along(P, a))
                    return pyr_fail(PYR_ERR_CONFIG, "run.partition = %s cuts axis %c, which has %lld updated nodes, into %d parts; use at most %lld "
                                    "there, or run.partition = auto", how, "xyz"[a], (long long)interior_of(P, a), given[a],
                                    (long long)most_along(P, a));
            return pyr_fail(PYR_ERR_CONFIG, "run.partition = %s does not split evenly among the %d devices of each rank; use run.partition = auto",
                            how, P->ndev);
        }
        if (!strcmp(how, "slabs"))
            return pyr_fail(PYR_ERR_CONFIG, "run.partition = slabs: the slowest axis (%c, %lld updated nodes) holds at most %lld parts, fewer than "
                            "the %d asked for; use at most %lld parts, or run.partition = auto (blocks)", "xyz"[dims - 1],
                            (long long)interior_of(P, dims - 1), (long long)most_along(P, dims - 1), n, (long long)most_along(P, dims - 1));
        if (!strcmp(how, "blocks") && !any_kind)
            return pyr_fail(PYR_ERR_CONFIG, "run.partition = blocks: %d parts cannot be cut along two axes (%d is prime); use slabs or auto", n, n);
        return pyr_fail(PYR_ERR_CONFIG, "run.partition = %s cannot cut this grid into %d parts (%d rank%s x %d device%s); use run.partition = auto",
                        how, n, P->ranks, P->ranks == 1 ? "" : "s", P->ndev, P->ndev == 1 ? "" : "s");
    }
    if (!any_counts) {
        char grid[96], inner[96];
        if (dims == 1) snprintf(grid, sizeof grid, "%lld", (long long)pr->n[0]), snprintf(inner, sizeof inner, "%lld", (long long)interior_of(P, 0));
        else if (dims == 2)
            snprintf(grid, sizeof grid, "%lld x %lld", (long long)pr->n[0], (long long)pr->n[1]),
                snprintf(inner, sizeof inner, "%lld x %lld", (long long)interior_of(P, 0), (long long)interior_of(P, 1));
        else
            snprintf(grid, sizeof grid, "%lld x %lld x %lld", (long long)pr->n[0], (long long)pr->n[1], (long long)pr->n[2]),
                snprintf(inner, sizeof inner, "%lld x %lld x %lld", (long long)interior_of(P, 0), (long long)interior_of(P, 1),
                         (long long)interior_of(P, 2));
        int64_t most = 1;
        if (!strcmp(how, "slabs")) most = most_along(P, dims - 1);
        else
            for (int a = 0; a < dims; a++) most *= most_along(P, a);
        return pyr_fail(PYR_ERR_CONFIG,
                        "too many parts: %d (%d rank%s x %d device%s) cannot cut the %s grid%s%s: its interior has %s nodes and every part "
                        "needs at least one along each axis it is cut along%s; use fewer parts (at most %lld, in counts that fit "
                        "the axes), a larger grid, or another run.partition",
                        n, P->ranks, P->ranks == 1 ? "" : "s", P->ndev, P->ndev == 1 ? "" : "s", grid, strcmp(how, "auto") ? " as " : "",
                        strcmp(how, "auto") ? how : "", inner,
                        P->ndev > 1 ? ", and each rank's devices split its box evenly" : "", (long long)most);
    }
    P->predicted = best_t;
    return PYR_OK;
}

/* Links: between devices of one process (peer copies, host copies) and
 * between ranks (the transport's measured latency and bandwidth, plus the
 * trip through host memory when the grid stays on a GPU). */
link_t pyr_multi_local_link(pyr_backend_kind_t kind, const pyr_model_constants_t *k, size_t elem)
{
    link_t l;
    if (kind == PYR_BACKEND_CPU) {
        l.latency = 5e-6; /* two barriers of the part threads */
        l.per_value = k->host > 0 ? k->host : (double)elem / 4e9;
    } else {
        l.latency = 3e-5;                /* barriers, a copy call and a stream wait per device */
        l.per_value = (double)elem / 1e11; /* a peer copy (NVLink class; PCIe peer copies are slower) */
    }
    return l;
}

link_t pyr_multi_remote_link(const pyr_transport_t *t, pyr_backend_kind_t kind, const pyr_model_constants_t *k, size_t elem)
{
    link_t l = {1e-5, (double)elem / 1e9};
    if (t) {
        l.latency = t->latency;
        l.per_value = t->per_byte * (double)elem;
    }
    l.per_value += kind == PYR_BACKEND_CPU ? 2 * (k->host > 0 ? k->host : (double)elem / 4e9) : k->up + k->down;
    return l;
}

/* The peer link of the first two distinct GPUs, measured: a few copies of
 * 32 MiB between two buffers, in milliseconds.  Leaves *l as it was when
 * anything fails (the defaults stand). */
void pyr_multi_measure_peer(const pyr_parts_t *P, link_t *l, size_t elem)
{
    int a = P->devices[0], b = -1;
    for (int i = 1; i < P->ndev && b < 0; i++)
        if (P->devices[i] != a) b = P->devices[i];
    const pyr_device_ops_t *ops = pyr_device_get(P->kind);
    if (b < 0 || !ops || !ops->copy_peer) return;
    pyr_options_t oa = P->options, ob = P->options;
    oa.device = a;
    ob.device = b;
    void *ca = NULL, *cb = NULL, *ba = NULL, *bb = NULL;
    const int64_t w = 4096, rows = ((int64_t)32 << 20) / (w * (int64_t)elem);
    const size_t bytes = (size_t)(w * rows) * elem;
    if (ops->create(&oa, P->problem.precision, &ca) == PYR_OK && ops->create(&ob, P->problem.precision, &cb) == PYR_OK &&
        ops->dev_alloc(ca, bytes, &ba) == PYR_OK && ops->dev_alloc(cb, bytes, &bb) == PYR_OK) {
        pyr_piece_t src, dst;
        memset(&src, 0, sizeof src);
        src.box = (pyr_box_t){{0, 0, 0}, {w, rows, 1}};
        src.pitch = w;
        src.nfields = 1;
        dst = src;
        src.buf[0][0] = ba;
        dst.buf[0][0] = bb;
        double best = INFINITY;
        for (int rep = 0; rep < 4; rep++) {
            double t0 = pyr_now_s();
            if (ops->copy_peer(cb, 0, &dst, 0, 1, ca, &src, 0, &src.box) != PYR_OK || ops->wait(cb, 0) != PYR_OK) {
                best = INFINITY;
                break;
            }
            double dt = pyr_now_s() - t0;
            if (rep > 0 && dt < best) best = dt; /* the first pays for enabling peer access */
        }
        if (isfinite(best) && best > 0) l->per_value = best / (double)(w * rows);
    }
    pyr_clear_error();
    if (ba) ops->dev_free(ca, ba);
    if (bb) ops->dev_free(cb, bb);
    if (ca) ops->destroy(ca);
    if (cb) ops->destroy(cb);
}
