/* One grid over several devices and MPI ranks: the decomposition, the
 * model that chooses it and H, a plan per part, and the exchanges (parts.h
 * says what and why; exec/exchange.h why the result is bit-identical). */
#include "core/clock.h"
#include "exec/parts.h"

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/field.h"
#include "exec/exec.h"
#include "plan/model.h"
#include "problem/devices.h"
#include "problem/field_init.h"

/* ------------------------------------------------------------ small helpers */

static int64_t imin64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Non-negative doubles as unsigned integers of the same order (a NaN above
 * every number), so that a maximum over parts and ranks is exact and does
 * not depend on the order it is taken in. */
static uint64_t ordered_bits(double v)
{
    if (v != v) return UINT64_MAX;
    if (v < 0) v = 0;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static double from_ordered(uint64_t u)
{
    if (u == UINT64_MAX) return NAN;
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* ------------------------------------------------------------------- model */

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

/* ------------------------------------------------------------------ layout */

typedef struct {
    int from, to;   /* part indices */
    pyr_box_t box;  /* global nodes */
    int mode;
    void *buf;      /* MSG_SEND / MSG_RECV: packed values of every exchanged field */
    size_t bytes;
} msg_t;

enum { MSG_PEER = 0, MSG_HOST, MSG_SEND, MSG_RECV };

typedef struct part {
    struct pyr_parts *owner;
    int index, device;
    pyr_box_t own, local;
    pyr_problem_t problem;
    pyr_plan_t *plan;
    pyr_field_t *fields[PYR_MAX_FIELDS];
    pyr_exchange_t xch;
    pyr_exec_io_t *io;
    const pyr_hooks_t *hooks;
    double change;
    pyr_status_t status;
    char message[1024];
    pyr_run_info_t run;
    int *sends, nsends, *recvs, nrecvs; /* messages from and to this part */
    pthread_t thread;
    pyr_hooks_t part_hooks;             /* the executor's hooks of this part (progress: part 0's only) */
    int owned[PYR_MAXWELL_MAX_PROBES];  /* the probes on nodes this part owns */
    int nowned;
} part_t;

struct pyr_parts {
    pyr_problem_t problem;
    pyr_options_t options;
    const pyr_scheme_t *scheme;
    pyr_backend_kind_t kind;
    pyr_transport_t *t;
    int rank, ranks;
    int nparts, ndev;           /* all parts; parts per rank */
    int devices[PYR_PARTS_MAX_DEVICES];
    int count[3], cdev[3];      /* parts per axis; per axis within a rank */
    int64_t *bounds[3];         /* count + 1 cuts of each axis (own boxes) */
    int64_t H, depth[3][2];
    int fixed[3][2];            /* per axis and side: nodes no sub-step updates */
    unsigned fields;            /* fields the problem uses */
    int nstate;                 /* of which exchanged (updated) */
    int exchanged[PYR_MAX_FIELDS];
    pyr_box_t changing;         /* nodes some sub-step updates */
    part_t *part;               /* this process's parts (ndev) */
    int plan0_external;         /* part[0].plan belongs to the caller (a devices plan) */
    msg_t *msg;
    int nmsg, cap_msg;
    pyr_wire_t *wsend, *wrecv;
    int nwsend, nwrecv;
    /* the collective points, and the start of the part threads */
    pthread_barrier_t arrive, leave;
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int gate_open, gate_abort;
    int stopped, swapped;
    pyr_status_t stop_status;
    char stop_message[1200];
    pyr_status_t pending;       /* a failure of the coordinator, reported at the next point */
    char pending_message[1024];
    double change;
    int64_t exchanges;
    uint64_t sent, received;
    double predicted;
    char why[160];
    /* Probes (Maxwell's): each part records those on nodes it owns into
     * rows, steps probe_base .. probe_upto - 1; at a collective point the
     * owner's rank gives every rank its values, and part 0's thread hands
     * them (out) to the caller's hook. */
    const pyr_hooks_t *user_hooks;
    int nprobes, probe_rank[PYR_MAXWELL_MAX_PROBES];
    int64_t probe_cap, probe_base, probe_upto, out_first, out_rows;
    double *probe_rows, *probe_out, *probe_col;
};

/* Own range of piece k of c along an axis of n nodes whose interior is
 * [f0, n - f1): the first and last pieces take the boundary nodes too. */
static void cut(int64_t n, int64_t f0, int64_t f1, int64_t c, int64_t k, int64_t *lo, int64_t *hi)
{
    const int64_t interior = n - f0 - f1;
    *lo = k == 0 ? 0 : f0 + (int64_t)((__int128)k * interior / c);
    *hi = k == c - 1 ? n : f0 + (int64_t)((__int128)(k + 1) * interior / c);
}

typedef struct {
    int count[3];
    int64_t H, depth[3][2];
} geometry_t;

static void part_index3(const int count[3], int p, int idx[3])
{
    idx[0] = p % count[0];
    idx[1] = (p / count[0]) % count[1];
    idx[2] = p / (count[0] * count[1]);
}

static pyr_box_t own_box(const pyr_problem_t *pr, const int fixed[3][2], const int count[3], int p)
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

static pyr_box_t local_box(const pyr_problem_t *pr, const pyr_box_t *own, const int64_t depth[3][2])
{
    pyr_box_t b = *own;
    for (int a = 0; a < pr->dims; a++) {
        if (own->lo[a] > 0) b.lo[a] = imax64(0, own->lo[a] - depth[a][0]);
        if (own->hi[a] < pr->n[a]) b.hi[a] = imin64(pr->n[a], own->hi[a] + depth[a][1]);
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

/* Calls fn(from, to, box) for every message into part `to`: the nodes of its
 * local grid that another part owns and the scheme updates. */
typedef int (*msg_fn)(void *user, int from, int to, const pyr_box_t *box);

static int each_message_into(const pyr_problem_t *pr, const int fixed[3][2], const pyr_box_t *changing, const geometry_t *g, int to,
                             msg_fn fn, void *user)
{
    const pyr_box_t own = own_box(pr, fixed, g->count, to);
    const pyr_box_t loc = local_box(pr, &own, g->depth);
    int k0[3], k1[3];
    for (int a = 0; a < 3; a++) parts_meeting(pr, fixed, g->count, a, loc.lo[a], loc.hi[a], &k0[a], &k1[a]);
    for (int z = k0[2]; z < k1[2]; z++)
        for (int y = k0[1]; y < k1[1]; y++)
            for (int x = k0[0]; x < k1[0]; x++) {
                const int from = (z * g->count[1] + y) * g->count[0] + x;
                if (from == to) continue;
                pyr_box_t o = own_box(pr, fixed, g->count, from);
                pyr_box_t b = pyr_box_intersect(&o, &loc);
                b = pyr_box_intersect(&b, changing);
                if (pyr_box_empty(&b)) continue;
                if (fn(user, from, to, &b)) return 1;
            }
    return 0;
}

/* ------------------------------------------------------------------- model */

/* Link constants of one kind of message: seconds per message and per value. */
typedef struct {
    double latency, per_value;
} link_t;

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
static int rank_of_part(const int count[3], const int cdev[3], int p)
{
    int idx[3];
    part_index3(count, p, idx);
    const int cr0 = count[0] / cdev[0], cr1 = count[1] / cdev[1];
    return ((idx[2] / cdev[2]) * cr1 + idx[1] / cdev[1]) * cr0 + idx[0] / cdev[0];
}

/* Device slot (0 .. devices per rank - 1) of part p within its rank. */
static int device_of_part(const int count[3], const int cdev[3], int p)
{
    int idx[3];
    part_index3(count, p, idx);
    return ((idx[2] % cdev[2]) * cdev[1] + idx[1] % cdev[1]) * cdev[0] + idx[0] % cdev[0];
}

static int add_cost(void *user, int from, int to, const pyr_box_t *box)
{
    cost_ctx_t *c = user;
    const int same = rank_of_part(c->g->count, c->cdev, from) == rank_of_part(c->g->count, c->cdev, to);
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
    for (int to = 0; to < n; to++) each_message_into(&P->problem, P->fixed, &P->changing, g, to, add_cost, &c);
    const double tau_a = pyr_model_compute_cost(k, g->H);
    double worst = 0;
    for (int p = 0; p < n; p++) {
        pyr_box_t own = own_box(&P->problem, P->fixed, g->count, p), loc = local_box(&P->problem, &own, g->depth);
        double t = local_work(P, &loc) * tau_a + cost[p] / (double)g->H;
        if (t > worst) worst = t;
    }
    return worst;
}

static void set_depths(const pyr_parts_t *P, geometry_t *g)
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
static pyr_status_t choose(pyr_parts_t *P, const link_t *local, const link_t *remote, const pyr_model_constants_t *k, int64_t forced_h,
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
    const int64_t hmax = pr->steps > 0 ? imin64(pr->steps, (int64_t)1 << 20) : 1;
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
                    set_depths(P, &g);
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
static link_t local_link(pyr_backend_kind_t kind, const pyr_model_constants_t *k, size_t elem)
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

static link_t remote_link(const pyr_transport_t *t, pyr_backend_kind_t kind, const pyr_model_constants_t *k, size_t elem)
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
static void measure_peer(const pyr_parts_t *P, link_t *l, size_t elem)
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

/* ---------------------------------------------------------------- creation */

static int is_local(const pyr_parts_t *P, int p) { return rank_of_part(P->count, P->cdev, p) == P->rank; }

static part_t *local_part(pyr_parts_t *P, int p)
{
    for (int i = 0; i < P->ndev; i++)
        if (P->part[i].index == p) return &P->part[i];
    return NULL;
}

static int note_message(void *user, int from, int to, const pyr_box_t *box)
{
    pyr_parts_t *P = user;
    const int lf = is_local(P, from), lt = is_local(P, to);
    if (!lf && !lt) return 0;
    if (P->nmsg == P->cap_msg) {
        int cap = P->cap_msg ? 2 * P->cap_msg : 32;
        msg_t *g = realloc(P->msg, (size_t)cap * sizeof *g);
        if (!g) return 1;
        P->msg = g;
        P->cap_msg = cap;
    }
    msg_t *m = &P->msg[P->nmsg++];
    memset(m, 0, sizeof *m);
    m->from = from;
    m->to = to;
    m->box = *box;
    m->mode = lf && lt ? MSG_HOST : lf ? MSG_SEND : MSG_RECV;
    return 0;
}

static void free_messages(pyr_parts_t *P)
{
    for (int i = 0; i < P->nmsg; i++) free(P->msg[i].buf);
    P->nmsg = 0;
    for (int i = 0; P->part && i < P->ndev; i++) {
        free(P->part[i].sends);
        free(P->part[i].recvs);
        P->part[i].sends = P->part[i].recvs = NULL;
        P->part[i].nsends = P->part[i].nrecvs = 0;
    }
    free(P->wsend);
    free(P->wrecv);
    P->wsend = P->wrecv = NULL;
    P->nwsend = P->nwrecv = 0;
}

/* The parts of this process and every message touching them, for geometry g. */
static pyr_status_t lay_out(pyr_parts_t *P, const geometry_t *g, const int cdev[3])
{
    memcpy(P->count, g->count, sizeof P->count);
    memcpy(P->cdev, cdev, sizeof P->cdev);
    P->H = g->H;
    memcpy(P->depth, g->depth, sizeof P->depth);
    const int n = P->nparts;
    for (int p = 0; p < n; p++) {
        if (!is_local(P, p)) continue;
        part_t *pt = &P->part[device_of_part(P->count, P->cdev, p)];
        pt->owner = P;
        pt->index = p;
        pt->device = P->devices[device_of_part(P->count, P->cdev, p)];
        pt->own = own_box(&P->problem, P->fixed, P->count, p);
        pt->local = local_box(&P->problem, &pt->own, P->depth);
    }
    free_messages(P);
    for (int to = 0; to < n; to++)
        if (each_message_into(&P->problem, P->fixed, &P->changing, g, to, note_message, P))
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    for (int i = 0; i < P->ndev; i++) {
        part_t *pt = &P->part[i];
        int ns = 0, nr = 0;
        for (int m = 0; m < P->nmsg; m++) ns += P->msg[m].from == pt->index, nr += P->msg[m].to == pt->index;
        pt->sends = malloc((size_t)(ns ? ns : 1) * sizeof(int));
        pt->recvs = malloc((size_t)(nr ? nr : 1) * sizeof(int));
        if (!pt->sends || !pt->recvs) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        for (int m = 0; m < P->nmsg; m++) {
            if (P->msg[m].from == pt->index) pt->sends[pt->nsends++] = m;
            if (P->msg[m].to == pt->index) pt->recvs[pt->nrecvs++] = m;
        }
    }
    return PYR_OK;
}

static void destroy_part_plan(pyr_parts_t *P, int i)
{
    if (i == 0 && P->plan0_external) return;
    pyr_plan_destroy(&P->part[i].plan);
}

/* A plan for every local part on its local grid.  `height` > 0 forces the
 * pyramid height (steps per compute call for a naive plan). */
static pyr_status_t plan_parts(pyr_parts_t *P, int64_t height)
{
    /* a GPU listed k times: each of its parts plans for 1/k of its memory */
    uint64_t budget[PYR_PARTS_MAX_DEVICES] = {0};
    if (P->options.memory == 0 && P->kind == PYR_BACKEND_CUDA) {
        const pyr_device_ops_t *ops = pyr_device_get(P->kind);
        for (int i = 0; i < P->ndev; i++) {
            int same = 0;
            for (int j = 0; j < P->ndev; j++) same += P->devices[j] == P->devices[i];
            if (same < 2) continue;
            pyr_options_t o = P->options;
            o.device = P->devices[i];
            void *ctx = NULL;
            uint64_t fr = 0, total = 0;
            PYR_TRY(ops->create(&o, P->problem.precision, &ctx));
            pyr_status_t st = ops->mem_info(ctx, &fr, &total);
            ops->destroy(ctx);
            PYR_TRY(st);
            uint64_t margin = total / 32 > (256ull << 20) ? total / 32 : (256ull << 20);
            budget[i] = (fr > margin ? fr - margin : 0) / (uint64_t)same;
        }
    }
    for (int i = 0; i < P->ndev; i++) {
        part_t *pt = &P->part[i];
        destroy_part_plan(P, i);
        /* the part's own problem: its nodes as a window on the whole grid */
        pt->problem = P->problem;
        for (int a = 0; a < 3; a++) {
            pt->problem.whole[a] = pyr_problem_whole(&P->problem, a);
            pt->problem.origin[a] = P->problem.origin[a] + pt->local.lo[a];
            pt->problem.n[a] = pyr_box_extent(&pt->local, a);
        }
        pyr_options_t o = P->options;
        o.devices[0] = 0;
        o.partition[0] = 0;
        o.exchange = 0;
        o.device = pt->device;
        if (budget[i]) o.memory = budget[i];
        if (height > 0) o.height = height;
        if (P->kind == PYR_BACKEND_CPU && o.threads == 0) o.threads = omp_get_max_threads() / P->ndev > 1 ? omp_get_max_threads() / P->ndev : 1;
        pyr_status_t st = pyr_plan_create(&pt->problem, &o, &pt->plan);
        if (st != PYR_OK) {
            if (P->ndev > 1) return pyr_fail_context(st, "device %d (part %d of %d): ", pt->device, pt->index, P->nparts);
            return st;
        }
    }
    return PYR_OK;
}

/* The parts' plans as parts: the whole grid's coefficients (the local
 * problem's spacings differ), passes ending at the exchanges, the hook. */
static pyr_status_t at_pass_end(void *user, pyr_exec_io_t *io, int64_t step, int exchange, int reduced, double *change, int last);

static void attach(pyr_parts_t *P)
{
    for (int i = 0; i < P->ndev; i++) {
        part_t *pt = &P->part[i];
        /* (the scheme's extra coefficients stay the part's own: made for its window) */
        const double *aux = pt->plan->coef.aux;
        const int64_t naux = pt->plan->coef.naux;
        P->scheme->coefficients(&P->problem, &pt->plan->coef);
        pt->plan->coef.aux = aux;
        pt->plan->coef.naux = naux;
        pt->plan->exchange_every = P->H;
        pt->xch.every = P->H;
        pt->xch.reduce_box = pyr_box_intersect(&pt->own, &P->changing);
        for (int a = 0; a < 3; a++) {
            pt->xch.reduce_box.lo[a] -= pt->local.lo[a];
            pt->xch.reduce_box.hi[a] -= pt->local.lo[a];
        }
        pt->xch.at_pass_end = at_pass_end;
        pt->xch.user = pt;
        pt->plan->exchange = &pt->xch;
    }
    /* device to device where both parts keep their grid resident on one runtime that can */
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        if (g->mode != MSG_HOST) continue;
        const pyr_plan_t *a = local_part(P, g->from)->plan, *b = local_part(P, g->to)->plan;
        if (a->resident && b->resident && a->ops == b->ops && a->ops->copy_peer) g->mode = MSG_PEER;
    }
}

/* Buffers of the messages to and from other ranks (every exchanged field, packed). */
static pyr_status_t wire_up(pyr_parts_t *P)
{
    const size_t elem = pyr_precision_size(P->problem.precision);
    int ns = 0, nr = 0;
    for (int m = 0; m < P->nmsg; m++) ns += P->msg[m].mode == MSG_SEND, nr += P->msg[m].mode == MSG_RECV;
    P->wsend = calloc((size_t)(ns ? ns : 1), sizeof *P->wsend);
    P->wrecv = calloc((size_t)(nr ? nr : 1), sizeof *P->wrecv);
    if (!P->wsend || !P->wrecv) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        if (g->mode != MSG_SEND && g->mode != MSG_RECV) continue;
        g->bytes = (size_t)pyr_box_volume(&g->box) * elem * (size_t)P->nstate;
        g->buf = malloc(g->bytes ? g->bytes : 1);
        if (!g->buf) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for halo buffers (%zu bytes)", g->bytes);
        /* Both sides list the messages between two ranks in the same order (by
         * receiving part, then sending part), so even tags that repeat match
         * in order (MPI does not let messages of one tag overtake). */
        pyr_wire_t w = {rank_of_part(P->count, P->cdev, g->mode == MSG_SEND ? g->to : g->from), (g->from * 131 + g->to) & 0x7fff, g->buf,
                        g->bytes};
        if (g->mode == MSG_SEND) P->wsend[P->nwsend++] = w;
        else P->wrecv[P->nwrecv++] = w;
    }
    return PYR_OK;
}

/* Collective over the ranks: a local failure (status, message) becomes every
 * rank's.  Returns the agreed status, with the failing rank's message. */
static pyr_status_t agree(pyr_parts_t *P, pyr_status_t mine)
{
    if (!P->t) return mine;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mine != PYR_OK ? pyr_last_error() : "");
    pyr_status_t st = PYR_OK;
    int who = -1;
    PYR_TRY(P->t->agree(P->t, mine, msg, sizeof msg, &st, &who));
    if (who < 0) return PYR_OK;
    /* a failure agreed on before already names its rank */
    if (P->ranks > 1 && strncmp(msg, "rank ", 5)) return pyr_fail(st, "rank %d: %s", who, msg);
    return pyr_fail(st, "%s", msg);
}

static int64_t streaming_height(const pyr_parts_t *P)
{
    int64_t h = INT64_MAX;
    for (int i = 0; i < P->ndev; i++)
        if (!P->part[i].plan->resident && P->part[i].plan->height < h) h = P->part[i].plan->height;
    return h;
}

/* The long-vector method steps one resident grid as whole-vector cuBLAS
 * operations over the range of its interior, on one GPU; a part's local grid
 * would need its halo kept out of those ranges and exchanged between them.
 * n: the devices of each rank (-1: "all", not yet counted). */
static pyr_status_t refuse_longvector(const pyr_parts_t *P, int n)
{
    char parts[48] = "several parts";
    if (n >= 0) snprintf(parts, sizeof parts, "%d parts", (n > 0 ? n : 1) * P->ranks);
    char where[120];
    if (P->options.devices[0])
        snprintf(where, sizeof where, "run.devices = %s, %d MPI rank%s", P->options.devices, P->ranks, P->ranks == 1 ? "" : "s");
    else snprintf(where, sizeof where, "%d MPI ranks", P->ranks);
    return pyr_fail(PYR_ERR_UNSUPPORTED,
                    "method = longvector runs on one GPU, and this run cuts the grid into %s (%s); run it on one device (leave "
                    "run.devices out, or name one) in one process, or use method = naive (the same result with the stencil "
                    "kernels) over several devices or ranks",
                    parts, where);
}

pyr_status_t pyr_parts_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_transport_t *t, pyr_parts_t **out)
{
    *out = NULL;
    pyr_status_t st = pyr_problem_validate(problem);
    pyr_parts_t *P = calloc(1, sizeof *P);
    if (!P) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    P->problem = *problem;
    if (options) P->options = *options;
    else pyr_options_default(&P->options);
    P->t = t;
    P->rank = t ? t->rank : 0;
    P->ranks = t ? t->size : 1;
    P->scheme = pyr_scheme_of(problem->equation);
    if (st == PYR_OK) {
        const pyr_scheme_t *s = P->scheme;
        P->fields = s->fields_used(problem);
        for (int f = 0; f < s->nfields; f++) {
            P->exchanged[f] = ((P->fields >> f) & 1) && s->field[f].role != PYR_FIELD_INPUT;
            P->nstate += P->exchanged[f];
            if (((P->fields >> f) & 1) && s->field[f].role == PYR_FIELD_INPUT && !s->init_input_part && !s->windowed)
                st = pyr_fail(PYR_ERR_UNSUPPORTED, "the %s scheme cannot run over several devices or ranks: its input field %s cannot be made "
                              "per part; run it on one device", s->name, s->field[f].name);
        }
        /* A scheme whose kernels and initial state place things by position on
         * the whole grid (Maxwell: CPML layers, sources, probes, PEC walls)
         * cannot yet take a part's local grid for the whole one. */
        if (st == PYR_OK && s->init_state && !s->windowed)
            st = pyr_fail(PYR_ERR_UNSUPPORTED, "the %s scheme cannot run over several devices or MPI ranks yet (its absorbing layers, sources, "
                          "probes and walls are placed on the whole grid); run it on one device: out of core (run.method = pyramid) when "
                          "it does not fit",
                          s->name);
        for (int a = 0; a < 3; a++) {
            P->changing.lo[a] = 0;
            P->changing.hi[a] = problem->n[a];
            for (int side = 0; side < 2; side++) P->fixed[a][side] = a < problem->dims ? pyr_scheme_fixed(s, a, side) : 0;
            if (a < problem->dims) {
                P->changing.lo[a] = P->fixed[a][0];
                P->changing.hi[a] = problem->n[a] - P->fixed[a][1];
            }
        }
    }
    if (st == PYR_OK && P->options.snapshot_every > 0)
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "output.every (snapshots) is not supported over several devices or MPI ranks yet; leave it out, or "
                      "run on one device");
    if (st == PYR_OK && P->options.exchange < 0)
        st = pyr_fail(PYR_ERR_CONFIG, "run.exchange = %lld: use a number of steps >= 1 (or auto)", (long long)P->options.exchange);
    /* the long-vector method: one part only, refused before any device is
     * looked at (the same answer on every machine) */
    if (st == PYR_OK && P->options.method == PYR_METHOD_LONGVECTOR) {
        int devs[PYR_PARTS_MAX_DEVICES], n = 0;
        if (pyr_parts_parse_devices(P->options.devices, devs, PYR_PARTS_MAX_DEVICES, &n) == PYR_OK) {
            if (n > 1 || P->ranks > 1) st = refuse_longvector(P, n);
        } else {
            pyr_clear_error(); /* the list's own message comes below */
        }
    }
    /* the backend, and the devices of each rank */
    if (st == PYR_OK) {
        P->kind = P->options.backend;
        if (P->kind == PYR_BACKEND_AUTO) P->kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
        if (!pyr_device_get(P->kind))
            st = pyr_fail(PYR_ERR_NODEVICE, "backend = cuda: this pyrgrid was built without CUDA; rebuild with nvcc, or use backend = cpu");
    }
    if (st == PYR_OK) {
        int n = 0;
        st = pyr_parts_parse_devices(P->options.devices, P->devices, PYR_PARTS_MAX_DEVICES, &n);
        if (st == PYR_OK && n == -1) {
            n = P->kind == PYR_BACKEND_CUDA ? pyr_gpu_count() : 1;
            if (n < 1) st = pyr_fail(PYR_ERR_NODEVICE, "run.devices = all: no usable GPU found; use backend = cpu");
            if (n > PYR_PARTS_MAX_DEVICES) n = PYR_PARTS_MAX_DEVICES;
            for (int i = 0; i < n; i++) P->devices[i] = i;
        }
        if (st == PYR_OK && n == 0) {
            n = 1;
            P->devices[0] = P->options.device;
        }
        /* "all" on several GPUs (a list of several is refused above) */
        if (st == PYR_OK && P->options.method == PYR_METHOD_LONGVECTOR && n * P->ranks > 1) st = refuse_longvector(P, n);
        const int gpus = P->kind == PYR_BACKEND_CUDA ? pyr_gpu_count() : 1;
        for (int i = 0; i < n && st == PYR_OK; i++)
            if (P->devices[i] >= gpus) {
                if (P->kind == PYR_BACKEND_CPU)
                    st = pyr_fail(PYR_ERR_CONFIG, "run.devices = %s: the CPU backend has one device, 0 (devices = 0,0 runs two parts on it)",
                                  P->options.devices);
                else if (gpus == 0)
                    st = pyr_fail(PYR_ERR_NODEVICE, "run.devices = %s: no usable GPU found; use backend = cpu", P->options.devices);
                else
                    st = pyr_fail(PYR_ERR_NODEVICE, "run.devices = %s: GPU %d does not exist; this machine has %d GPU%s (%s%d)", P->options.devices,
                                  P->devices[i], gpus, gpus == 1 ? "" : "s", gpus == 1 ? "device " : "devices 0 to ", gpus - 1);
            }
        P->ndev = n;
        P->nparts = n * P->ranks;
    }
    if (t) {
        /* every rank must run as many parts ("all" counts each host's GPUs) */
        uint64_t most = st == PYR_OK ? (uint64_t)P->ndev : 0, least = st == PYR_OK ? (uint64_t)P->ndev : UINT64_MAX;
        pyr_status_t rs = t->reduce_u64(t, &most, 1);
        if (rs == PYR_OK) rs = t->reduce_u64(t, &least, 0);
        if (st == PYR_OK) st = rs;
        if (st == PYR_OK && most != least)
            st = pyr_fail(PYR_ERR_CONFIG, "run.devices = %s gives the ranks different numbers of devices (%llu to %llu): every rank must run "
                          "as many parts; list the devices (run.devices = 0,1) instead", P->options.devices, (unsigned long long)least,
                          (unsigned long long)most);
    }
    geometry_t g;
    int cdev[3] = {1, 1, 1};
    pyr_model_constants_t k = pyr_model_default(P->kind, problem->dims, problem->precision);
    const size_t elem = pyr_precision_size(problem->precision);
    if (st == PYR_OK) {
        P->part = calloc((size_t)P->ndev, sizeof *P->part);
        if (!P->part) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    link_t ll = local_link(P->kind, &k, elem), rl = remote_link(t, P->kind, &k, elem);
    if (st == PYR_OK && P->kind == PYR_BACKEND_CUDA) measure_peer(P, &ll, elem);
    /* H beyond the run's steps changes nothing but the halo's width */
    const int64_t forced = P->options.exchange > 0 ? imin64(P->options.exchange, imax64(problem->steps, 1)) : 0;
    if (st == PYR_OK) st = choose(P, &ll, &rl, &k, forced, &g, cdev);
    if (st == PYR_OK) {
        snprintf(P->why, sizeof P->why, "%s", P->options.exchange > 0 ? "given (run.exchange)" : "the model's");
        st = lay_out(P, &g, cdev);
    }
    if (st == PYR_OK) st = plan_parts(P, 0);
    st = agree(P, st);
    /* Streaming parts exchange once per pyramid pass: H = their height (the
     * least over all parts); resident parts keep the model's H, now with
     * the constants of this machine's wisdom when it has them. */
    if (st == PYR_OK && P->options.exchange == 0) {
        uint64_t h = (uint64_t)streaming_height(P);
        if (h == (uint64_t)INT64_MAX) {
            geometry_t g2 = g;
            const pyr_model_constants_t *pk = &P->part[0].plan->model;
            link_t l2 = local_link(P->kind, pk, elem), r2 = remote_link(t, P->kind, pk, elem);
            if (P->kind == PYR_BACKEND_CUDA) l2.per_value = ll.per_value; /* the peer link as measured */
            pyr_parts_t *Q = P; /* choose() over H only: the counts are fixed now */
            char keep[32];
            snprintf(keep, sizeof keep, "%dx%dx%d", g.count[0], g.count[1], g.count[2]);
            pyr_options_t saved = Q->options;
            snprintf(Q->options.partition, sizeof Q->options.partition, "%s", keep);
            int cd2[3];
            st = choose(Q, &l2, &r2, pk, 0, &g2, cd2);
            Q->options = saved;
            h = st == PYR_OK ? (uint64_t)g2.H : (uint64_t)g.H;
            st = PYR_OK;
        } else {
            snprintf(P->why, sizeof P->why, "the pyramid height of the parts that stream pieces");
        }
        if (t) st = t->reduce_u64(t, &h, 0);
        if (st == PYR_OK && (int64_t)h != g.H) {
            g.H = (int64_t)h;
            set_depths(P, &g);
            st = lay_out(P, &g, cdev);
            if (st == PYR_OK) st = plan_parts(P, g.H);
            st = agree(P, st);
        }
    }
    if (st == PYR_OK) {
        attach(P);
        st = wire_up(P);
    }
    st = agree(P, st);
    if (st != PYR_OK) {
        pyr_parts_destroy(&P);
        return st;
    }
    *out = P;
    return PYR_OK;
}

void pyr_parts_destroy(pyr_parts_t **pp)
{
    if (!pp || !*pp) return;
    pyr_parts_t *P = *pp;
    free_messages(P);
    free(P->msg);
    if (P->part)
        for (int i = 0; i < P->ndev; i++) {
            destroy_part_plan(P, i);
            for (int f = 0; f < PYR_MAX_FIELDS; f++) pyr_field_destroy(&P->part[i].fields[f]);
        }
    free(P->part);
    free(P->probe_rows);
    free(P->probe_out);
    free(P->probe_col);
    free(P);
    *pp = NULL;
}

/* ------------------------------------------------------- local host fields */

static pyr_host_region_t region_of(const part_t *pt, int f)
{
    pyr_host_region_t r = {pt->fields[f]->data, pt->local};
    return r;
}

static void free_fields(pyr_parts_t *P)
{
    for (int i = 0; i < P->ndev; i++)
        for (int f = 0; f < PYR_MAX_FIELDS; f++) pyr_field_destroy(&P->part[i].fields[f]);
}

static pyr_status_t alloc_fields(pyr_parts_t *P)
{
    for (int i = 0; i < P->ndev; i++) {
        part_t *pt = &P->part[i];
        for (int f = 0; f < P->scheme->nfields; f++) {
            if (!((P->fields >> f) & 1) || pt->fields[f]) continue;
            PYR_TRY(pyr_field_create(&pt->problem, &pt->fields[f]));
        }
    }
    return PYR_OK;
}

/* Part pt's inputs (and, when `initial`, its state) made from the problem
 * over its local grid. */
static pyr_status_t make_part_fields(pyr_parts_t *P, part_t *pt, int initial)
{
    const int64_t *origin = pt->local.lo;
    for (int f = 0; f < P->scheme->nfields; f++) {
        if (!((P->fields >> f) & 1)) continue;
        pyr_field_t *fl = pt->fields[f];
        const pyr_field_role_t role = P->scheme->field[f].role;
        if (role == PYR_FIELD_INPUT) {
            if (P->scheme->init_input_part) PYR_TRY(P->scheme->init_input_part(&P->problem, f, origin, fl));
            else PYR_TRY(P->scheme->init_input(&pt->problem, f, fl)); /* a windowed scheme's, on the part's problem */
        } else if (role == PYR_FIELD_AUX) {
            /* the library's own state starts at zero in every run */
            memset(fl->data, 0, (size_t)pyr_field_count(fl) * pyr_precision_size(fl->precision));
        } else if (initial) {
            if (P->scheme->init_state && P->scheme->windowed) PYR_TRY(P->scheme->init_state(&pt->problem, f, fl));
            /* the problem's initial field is the first state field's; any other starts at zero */
            else if (f == 0) PYR_TRY(pyr_field_init_part(fl, &P->problem, origin));
            else memset(fl->data, 0, (size_t)pyr_field_count(fl) * pyr_precision_size(fl->precision));
        }
    }
    return PYR_OK;
}

pyr_status_t pyr_parts_init(pyr_parts_t *P)
{
    pyr_status_t st = alloc_fields(P);
    for (int i = 0; i < P->ndev && st == PYR_OK; i++) {
        st = make_part_fields(P, &P->part[i], 1);
        if (st != PYR_OK && P->ndev > 1) st = pyr_fail_context(st, "device %d (part %d of %d): ", P->part[i].device, P->part[i].index, P->nparts);
    }
    return agree(P, st);
}

pyr_box_t pyr_parts_process_box(const pyr_parts_t *P)
{
    pyr_box_t boxes[PYR_PARTS_MAX_DEVICES];
    for (int i = 0; i < P->ndev; i++) boxes[i] = P->part[i].own;
    return pyr_box_hull(boxes, P->ndev);
}

pyr_status_t pyr_parts_copy_out(const pyr_parts_t *P, int f, const pyr_box_t *box, void *dst)
{
    if (f < 0 || f >= P->scheme->nfields || !P->exchanged[f]) return pyr_fail(PYR_ERR_ARG, "field %d is not an updated field of the scheme", f);
    const size_t elem = pyr_precision_size(P->problem.precision);
    pyr_host_region_t to = {dst, *box};
    for (int i = 0; i < P->ndev; i++) {
        const part_t *pt = &P->part[i];
        if (!pt->fields[f]) return pyr_fail(PYR_ERR_ARG, "the parts hold no values yet (pyr_parts_init)");
        pyr_box_t b = pyr_box_intersect(&pt->own, box);
        if (pyr_box_empty(&b)) continue;
        pyr_host_region_t from = region_of(pt, f);
        pyr_host_copy_box(&to, &from, &b, elem);
    }
    return PYR_OK;
}

/* ------------------------------------------------------ collective points */

/* Halos of every message touching this process: packed and posted to other
 * ranks, copied between local parts (device to device where both keep their
 * grids resident), unpacked from other ranks.  A failure is kept for the
 * next point, where every rank hears of it: the messages of this exchange
 * are all still sent, so no rank waits for one that never comes. */
static void note_pending(pyr_parts_t *P, pyr_status_t st)
{
    if (st == PYR_OK || P->pending != PYR_OK) return;
    P->pending = st;
    snprintf(P->pending_message, sizeof P->pending_message, "halo exchange: %s", pyr_last_error());
}

static void swap_halos(pyr_parts_t *P)
{
    const size_t elem = pyr_precision_size(P->problem.precision);
    const int nf = P->scheme->nfields;
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        if (g->mode != MSG_SEND) continue;
        const part_t *src = local_part(P, g->from);
        char *at = g->buf;
        for (int f = 0; f < nf; f++) {
            if (!P->exchanged[f]) continue;
            pyr_host_region_t to = {at, g->box}, from = region_of(src, f);
            pyr_host_copy_box(&to, &from, &g->box, elem);
            at += (size_t)pyr_box_volume(&g->box) * elem;
        }
    }
    if (P->t && (P->nwsend || P->nwrecv)) note_pending(P, P->t->start(P->t, P->wsend, P->nwsend, P->wrecv, P->nwrecv));
    int waits[PYR_PARTS_MAX_DEVICES] = {0};
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        part_t *src = g->mode == MSG_HOST || g->mode == MSG_PEER ? local_part(P, g->from) : NULL;
        part_t *dst = src ? local_part(P, g->to) : NULL;
        if (!src) continue;
        if (g->mode == MSG_HOST) {
            for (int f = 0; f < nf; f++) {
                if (!P->exchanged[f]) continue;
                pyr_host_region_t to = region_of(dst, f), from = region_of(src, f);
                pyr_host_copy_box(&to, &from, &g->box, elem);
            }
            continue;
        }
        /* device to device, in the receiving part's coordinates */
        const pyr_device_ops_t *ops;
        void *dctx, *sctx;
        const pyr_piece_t *dp = pyr_exec_resident_piece(dst->io, &ops, &dctx), *sp = pyr_exec_resident_piece(src->io, NULL, &sctx);
        if (!dp || !sp) {
            note_pending(P, pyr_fail(PYR_ERR_INTERNAL, "a device-to-device halo between parts that do not both keep their grid resident"));
            continue;
        }
        pyr_piece_t shifted = *sp;
        pyr_box_t b = g->box;
        for (int a = 0; a < 3; a++) {
            shifted.box.lo[a] += src->local.lo[a] - dst->local.lo[a];
            shifted.box.hi[a] += src->local.lo[a] - dst->local.lo[a];
            b.lo[a] -= dst->local.lo[a];
            b.hi[a] -= dst->local.lo[a];
        }
        for (int f = 0; f < nf; f++) {
            if (!P->exchanged[f]) continue;
            const int layer = sp->buf[f][1] ? sp->cur : 0;
            note_pending(P, ops->copy_peer(dctx, 0, dp, f, 3, sctx, &shifted, layer, &b));
        }
        waits[dst - P->part] = 1;
    }
    for (int i = 0; i < P->ndev; i++) {
        if (!waits[i]) continue;
        const pyr_device_ops_t *ops;
        void *ctx;
        pyr_exec_resident_piece(P->part[i].io, &ops, &ctx);
        note_pending(P, ops->wait(ctx, 0));
    }
    if (P->t && (P->nwsend || P->nwrecv)) note_pending(P, P->t->finish(P->t));
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        const uint64_t values = (uint64_t)pyr_box_volume(&g->box) * (uint64_t)P->nstate;
        if (g->mode != MSG_RECV) P->sent += is_local(P, g->from) ? values : 0;
        if (g->mode != MSG_SEND) P->received += is_local(P, g->to) ? values : 0;
        if (g->mode != MSG_RECV) continue;
        part_t *dst = local_part(P, g->to);
        const char *at = g->buf;
        for (int f = 0; f < nf; f++) {
            if (!P->exchanged[f]) continue;
            pyr_host_region_t to = region_of(dst, f), from = {(void *)at, g->box};
            pyr_host_copy_box(&to, &from, &g->box, elem);
            at += (size_t)pyr_box_volume(&g->box) * elem;
        }
    }
    P->exchanges++;
}

/* The probe rows since the last point, complete on every rank (each
 * probe's owner gives its column), into probe_out for part 0's thread. */
static void share_probes(pyr_parts_t *P)
{
    const int np = P->nprobes;
    const int64_t rows = P->probe_upto - P->probe_base;
    if (rows <= 0) {
        P->out_rows = 0;
        return;
    }
    if (P->t && P->ranks > 1)
        for (int i = 0; i < np; i++) {
            for (int64_t r = 0; r < rows; r++) P->probe_col[r] = P->probe_rows[r * np + i];
            note_pending(P, P->t->broadcast(P->t, P->probe_col, (size_t)rows * sizeof(double), P->probe_rank[i]));
            for (int64_t r = 0; r < rows; r++) P->probe_rows[r * np + i] = P->probe_col[r];
        }
    memcpy(P->probe_out, P->probe_rows, (size_t)(rows * np) * sizeof(double));
    P->out_first = P->probe_base;
    P->out_rows = rows;
    P->probe_base = P->probe_upto;
}

/* One thread of the process (the last to arrive) acts for all its parts:
 * failures first (every rank learns the lowest failing one's message), then
 * the global change, then the halos unless the run stops here. */
static void coordinate(pyr_parts_t *P, int exchange, int reduced)
{
    pyr_status_t mine = P->pending;
    char msg[1024] = "";
    if (mine != PYR_OK) snprintf(msg, sizeof msg, "%s", P->pending_message);
    P->pending = PYR_OK;
    for (int i = 0; i < P->ndev && mine == PYR_OK; i++)
        if (P->part[i].status != PYR_OK) {
            mine = P->part[i].status;
            if (P->ndev > 1)
                snprintf(msg, sizeof msg, "device %d (part %d of %d): %.900s", P->part[i].device, P->part[i].index, P->nparts, P->part[i].message);
            else snprintf(msg, sizeof msg, "%s", P->part[i].message);
        }
    pyr_status_t st = mine;
    int who = mine != PYR_OK ? P->rank : -1;
    if (P->t && P->t->agree(P->t, mine, msg, sizeof msg, &st, &who) != PYR_OK) {
        who = P->rank;
        st = PYR_ERR_INTERNAL;
        snprintf(msg, sizeof msg, "%s", pyr_last_error());
    }
    P->swapped = 0;
    if (who >= 0) {
        P->stopped = 1;
        P->stop_status = st;
        if (P->ranks > 1) snprintf(P->stop_message, sizeof P->stop_message, "rank %d: %s", who, msg);
        else snprintf(P->stop_message, sizeof P->stop_message, "%s", msg);
        return;
    }
    if (P->nprobes) share_probes(P);
    if (reduced) {
        uint64_t m = 0;
        for (int i = 0; i < P->ndev; i++) {
            uint64_t b = ordered_bits(P->part[i].change);
            if (b > m) m = b;
        }
        if (P->t) note_pending(P, P->t->reduce_u64(P->t, &m, 1));
        P->change = from_ordered(m);
    }
    const double tol = P->scheme->tolerance(&P->problem);
    if (exchange && !(reduced && tol > 0 && P->change < tol)) {
        swap_halos(P);
        P->swapped = 1;
    }
}

static void meet(part_t *pt, int exchange, int reduced)
{
    pyr_parts_t *P = pt->owner;
    if (pthread_barrier_wait(&P->arrive) == PTHREAD_BARRIER_SERIAL_THREAD) coordinate(P, exchange, reduced);
    pthread_barrier_wait(&P->leave);
}

static void note_failure(part_t *pt, pyr_status_t st)
{
    if (pt->status != PYR_OK) return;
    pt->status = st;
    snprintf(pt->message, sizeof pt->message, "%s", pyr_last_error());
}

/* The executor's hook (exchange.h) for part pt. */
static pyr_status_t at_pass_end(void *user, pyr_exec_io_t *io, int64_t step, int exchange, int reduced, double *change, int last)
{
    part_t *pt = user;
    pyr_parts_t *P = pt->owner;
    (void)step;
    (void)last;
    pt->io = io;
    pt->change = reduced ? *change : 0;
    if (pt == &P->part[0]) P->probe_upto = step;
    /* what goes through host memory leaves a resident grid first */
    if (exchange)
        for (int k = 0; k < pt->nsends && pt->status == PYR_OK; k++) {
            const msg_t *g = &P->msg[pt->sends[k]];
            if (g->mode == MSG_PEER) continue;
            pyr_box_t b = g->box;
            for (int a = 0; a < 3; a++) b.lo[a] -= pt->local.lo[a], b.hi[a] -= pt->local.lo[a];
            note_failure(pt, pyr_exec_fetch(io, &b));
        }
    meet(pt, exchange, reduced);
    if (P->stopped) {
        pt->io = NULL;
        return pyr_fail(P->stop_status, "%s", P->stop_message);
    }
    if (reduced) *change = P->change;
    pyr_status_t st = PYR_OK;
    /* this point's probe rows to the caller, in its thread */
    if (pt == &P->part[0] && P->out_rows > 0 && P->user_hooks && P->user_hooks->probe) {
        st = P->user_hooks->probe(P->user_hooks->user, P->out_first, P->out_rows, P->probe_out, P->nprobes);
        P->out_rows = 0;
    }
    if (P->swapped)
        for (int k = 0; k < pt->nrecvs && st == PYR_OK; k++) {
            const msg_t *g = &P->msg[pt->recvs[k]];
            if (g->mode == MSG_PEER) continue;
            pyr_box_t b = g->box;
            for (int a = 0; a < 3; a++) b.lo[a] -= pt->local.lo[a], b.hi[a] -= pt->local.lo[a];
            st = pyr_exec_store(io, &b);
        }
    pt->io = NULL;
    return st;
}

/* A part's run: its executor, then the end point (unless the run stopped). */
static void run_part(part_t *pt)
{
    pyr_parts_t *P = pt->owner;
    pyr_status_t st = pyr_exec_part_fields(pt->plan, pt->fields, P->scheme->nfields, pt->hooks, &pt->run);
    if (P->stopped) return;
    if (st != PYR_OK) note_failure(pt, st);
    meet(pt, 0, 0);
}

static void *part_main(void *arg)
{
    part_t *pt = arg;
    pyr_parts_t *P = pt->owner;
    pthread_mutex_lock(&P->gate_mu);
    while (!P->gate_open) pthread_cond_wait(&P->gate_cv, &P->gate_mu);
    int abort = P->gate_abort;
    pthread_mutex_unlock(&P->gate_mu);
    if (!abort) run_part(pt);
    return NULL;
}

static void open_gate(pyr_parts_t *P, int abort)
{
    pthread_mutex_lock(&P->gate_mu);
    P->gate_open = 1;
    P->gate_abort = abort;
    pthread_cond_broadcast(&P->gate_cv);
    pthread_mutex_unlock(&P->gate_mu);
}

/* Node updates over the boxes the parts own (the useful work of this process). */
static uint64_t useful_owned(const pyr_parts_t *P, int64_t steps)
{
    uint64_t v = 0;
    for (int i = 0; i < P->ndev; i++)
        for (int k = 0; k < P->scheme->nsub; k++) {
            pyr_box_t u = P->part[i].own;
            for (int a = 0; a < P->problem.dims; a++) {
                u.lo[a] = imax64(u.lo[a], P->scheme->sub[k].margin_lo[a]);
                u.hi[a] = imin64(u.hi[a], P->problem.n[a] - P->scheme->sub[k].margin_hi[a]);
            }
            v += (uint64_t)pyr_box_volume(&u);
        }
    return v * (uint64_t)steps;
}

/* The caller's progress hook, from part 0's executor. */
static int part_progress(void *user, int64_t done, int64_t total)
{
    const part_t *pt = user;
    const pyr_hooks_t *h = pt->owner->user_hooks;
    return h->progress(h->user, done, total);
}

/* A part's probe values of a pass: those it owns, into the rows. */
static pyr_status_t part_probe(void *user, int64_t first, int64_t count, const double *values, int nprobes)
{
    part_t *pt = user;
    pyr_parts_t *P = pt->owner;
    if (nprobes != P->nprobes || first < P->probe_base || first + count - P->probe_base > P->probe_cap)
        return pyr_fail(PYR_ERR_INTERNAL, "probe rows %lld .. %lld outside the parts' table (%lld .. %lld)", (long long)first,
                        (long long)(first + count - 1), (long long)P->probe_base, (long long)(P->probe_base + P->probe_cap - 1));
    for (int64_t s = 0; s < count; s++)
        for (int k = 0; k < pt->nowned; k++) {
            const int i = pt->owned[k];
            P->probe_rows[(first - P->probe_base + s) * nprobes + i] = values[s * nprobes + i];
        }
    return PYR_OK;
}

/* Each probe's owning part and rank; the rows between two points (at most H). */
static pyr_status_t setup_probes(pyr_parts_t *P, const pyr_hooks_t *hooks)
{
    P->user_hooks = hooks;
    P->nprobes = 0;
    P->probe_base = P->probe_upto = P->out_rows = 0;
    for (int i = 0; i < P->ndev; i++) P->part[i].nowned = 0;
    const pyr_problem_t *p = &P->problem;
    if (p->equation != PYR_EQ_MAXWELL || p->maxwell.nprobes == 0) return PYR_OK;
    const int np = p->maxwell.nprobes;
    for (int i = 0; i < np; i++) {
        const int64_t *nd = p->maxwell.probes[i].node;
        P->probe_rank[i] = -1;
        for (int q = 0; q < P->nparts; q++) {
            const pyr_box_t own = own_box(p, P->fixed, P->count, q);
            int in = 1;
            for (int a = 0; a < 3; a++) in &= nd[a] - p->origin[a] >= own.lo[a] && nd[a] - p->origin[a] < own.hi[a];
            if (!in) continue;
            P->probe_rank[i] = rank_of_part(P->count, P->cdev, q);
            if (is_local(P, q)) {
                part_t *pt = &P->part[device_of_part(P->count, P->cdev, q)];
                pt->owned[pt->nowned++] = i;
            }
            break;
        }
        if (P->probe_rank[i] < 0) return pyr_fail(PYR_ERR_INTERNAL, "probe %d lies on no part", i + 1);
    }
    P->probe_cap = P->H > 0 ? P->H : 1;
    if (P->probe_cap > p->steps && p->steps > 0) P->probe_cap = p->steps;
    free(P->probe_rows);
    free(P->probe_out);
    free(P->probe_col);
    P->probe_rows = calloc((size_t)(P->probe_cap * np), sizeof(double));
    P->probe_out = calloc((size_t)(P->probe_cap * np), sizeof(double));
    P->probe_col = calloc((size_t)P->probe_cap, sizeof(double));
    if (!P->probe_rows || !P->probe_out || !P->probe_col) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes");
    P->nprobes = np;
    return PYR_OK;
}

pyr_status_t pyr_parts_run(pyr_parts_t *P, const pyr_hooks_t *hooks, pyr_run_info_t *run)
{
    if (run) memset(run, 0, sizeof *run);
    for (int i = 0; i < P->ndev; i++)
        for (int f = 0; f < P->scheme->nfields; f++)
            if (((P->fields >> f) & 1) && !P->part[i].fields[f]) return pyr_fail(PYR_ERR_ARG, "the parts hold no fields yet (pyr_parts_init)");
    if (pthread_barrier_init(&P->arrive, NULL, (unsigned)P->ndev)) return pyr_fail(PYR_ERR_NOMEM, "cannot create a barrier for the parts");
    if (pthread_barrier_init(&P->leave, NULL, (unsigned)P->ndev)) {
        pthread_barrier_destroy(&P->arrive);
        return pyr_fail(PYR_ERR_NOMEM, "cannot create a barrier for the parts");
    }
    pthread_mutex_init(&P->gate_mu, NULL);
    pthread_cond_init(&P->gate_cv, NULL);
    P->gate_open = P->gate_abort = 0;
    P->stopped = P->swapped = 0;
    P->pending = PYR_OK;
    P->exchanges = 0;
    P->sent = P->received = 0;
    P->change = 0;
    pyr_status_t pst = setup_probes(P, hooks);
    if (pst != PYR_OK) {
        pthread_barrier_destroy(&P->arrive);
        pthread_barrier_destroy(&P->leave);
        pthread_mutex_destroy(&P->gate_mu);
        pthread_cond_destroy(&P->gate_cv);
        return agree(P, pst);
    }
    for (int i = 0; i < P->ndev; i++) {
        part_t *pt = &P->part[i];
        pt->status = PYR_OK;
        pt->message[0] = 0;
        pt->io = NULL;
        memset(&pt->part_hooks, 0, sizeof pt->part_hooks);
        pt->part_hooks.user = pt;
        if (i == 0 && hooks && hooks->progress) pt->part_hooks.progress = part_progress;
        if (P->nprobes) pt->part_hooks.probe = part_probe;
        pt->hooks = &pt->part_hooks;
    }
    /* part 0 in this thread (the caller's progress hook runs here), the others in their own */
    int started = 1;
    pyr_status_t st = PYR_OK;
    for (int i = 1; i < P->ndev; i++) {
        if (pthread_create(&P->part[i].thread, NULL, part_main, &P->part[i])) {
            st = pyr_fail(PYR_ERR_NOMEM, "cannot start a thread for device %d", P->part[i].device);
            break;
        }
        started++;
    }
    open_gate(P, st != PYR_OK);
    if (st == PYR_OK) run_part(&P->part[0]);
    for (int i = 1; i < started; i++) pthread_join(P->part[i].thread, NULL);
    pthread_barrier_destroy(&P->arrive);
    pthread_barrier_destroy(&P->leave);
    pthread_mutex_destroy(&P->gate_mu);
    pthread_cond_destroy(&P->gate_cv);
    if (st != PYR_OK) {
        /* no part ran; other ranks must still hear of it */
        return agree(P, st);
    }
    if (P->stopped) return pyr_fail(P->stop_status, "%s", P->stop_message);
    if (run) {
        const pyr_run_info_t *r0 = &P->part[0].run;
        for (int i = 0; i < P->ndev; i++) {
            run->counts.uploaded += P->part[i].run.counts.uploaded;
            run->counts.downloaded += P->part[i].run.counts.downloaded;
            run->counts.computed += P->part[i].run.counts.computed;
        }
        const uint64_t useful = useful_owned(P, r0->steps);
        run->counts.redundant = run->counts.computed > useful ? run->counts.computed - useful : 0;
        run->steps = r0->steps;
        run->checked = r0->checked;
        run->change = r0->change;
        run->converged = r0->converged;
        run->parts = P->nparts;
        run->ranks = P->ranks;
        run->exchange_height = P->H;
        run->exchanges = P->exchanges;
        run->halo_sent = P->sent;
        run->halo_received = P->received;
        /* the host memory of this process's parts: staged if any part's was, the slowest pinning */
        run->host_memory = r0->host_memory;
        for (int i = 0; i < P->ndev; i++) {
            const pyr_run_info_t *ri = &P->part[i].run;
            if (ri->host_memory == PYR_HOST_STAGE && run->host_memory != PYR_HOST_STAGE) {
                run->host_memory = PYR_HOST_STAGE;
                snprintf(run->host_note, sizeof run->host_note, "device %d: %.150s", P->part[i].device, ri->host_note);
            }
            if (ri->pin_seconds > run->pin_seconds) run->pin_seconds = ri->pin_seconds;
            if (ri->unpin_seconds > run->unpin_seconds) run->unpin_seconds = ri->unpin_seconds;
        }
    }
    return PYR_OK;
}

/* ------------------------------------------------ several devices, one process */

const pyr_parts_t *pyr_plan_parts(const pyr_plan_t *plan) { return plan ? plan->parts : NULL; }

pyr_status_t pyr_parts_plan_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **out)
{
    *out = NULL;
    int devs[PYR_PARTS_MAX_DEVICES], n = 0;
    PYR_TRY(pyr_parts_parse_devices(options->devices, devs, PYR_PARTS_MAX_DEVICES, &n));
    if (n == -1) {
        pyr_backend_kind_t kind = options->backend;
        if (kind == PYR_BACKEND_AUTO) kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
        n = kind == PYR_BACKEND_CUDA ? pyr_gpu_count() : 1;
        devs[0] = 0;
    }
    if (n <= 1) {
        /* one device: its ordinary plan */
        pyr_options_t o = *options;
        o.devices[0] = 0;
        if (n == 1) o.device = devs[0];
        return pyr_plan_create(problem, &o, out);
    }
    pyr_parts_t *P = NULL;
    PYR_TRY(pyr_parts_create(problem, options, NULL, &P));
    pyr_plan_t *plan = P->part[0].plan;
    P->plan0_external = 1;
    plan->parts = P;
    plan->parts_destroy = pyr_parts_destroy;
    *out = plan;
    return PYR_OK;
}

pyr_status_t pyr_parts_execute(pyr_plan_t *plan, pyr_field_t *const *given, int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run)
{
    pyr_parts_t *P = plan->parts;
    const pyr_scheme_t *s = P->scheme;
    if (nfields != s->nfields)
        return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: the %s scheme has %d field%s, %d given", s->name, s->nfields, s->nfields == 1 ? "" : "s",
                        nfields);
    if (hooks && hooks->snapshot)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "snapshots are not supported over several devices yet; run without them, or on one device");
    for (int f = 0; f < s->nfields; f++) {
        if (!((P->fields >> f) & 1)) continue;
        const pyr_field_t *g = given[f];
        if (!g || s->field[f].role == PYR_FIELD_AUX) {
            if (!g && s->field[f].role != PYR_FIELD_INPUT && s->field[f].role != PYR_FIELD_AUX)
                return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: field %s of the %s scheme is required", s->field[f].name, s->name);
            continue;
        }
        for (int a = 0; a < 3; a++)
            if (g->n[a] != P->problem.n[a])
                return pyr_fail(PYR_ERR_ARG, "field %s of %lld x %lld x %lld nodes does not match the plan's grid of %lld x %lld x %lld",
                                s->field[f].name, (long long)g->n[0], (long long)g->n[1], (long long)g->n[2], (long long)P->problem.n[0],
                                (long long)P->problem.n[1], (long long)P->problem.n[2]);
        if (g->precision != P->problem.precision || !g->data)
            return pyr_fail(PYR_ERR_ARG, "field %s: precision or data does not match the plan", s->field[f].name);
    }
    const size_t elem = pyr_precision_size(P->problem.precision);
    pyr_box_t grid = {{0, 0, 0}, {P->problem.n[0], P->problem.n[1], P->problem.n[2]}};
    pyr_status_t st = alloc_fields(P);
    /* each part's local grid from the fields given (inputs not given: made from the problem) */
    for (int i = 0; i < P->ndev && st == PYR_OK; i++) {
        part_t *pt = &P->part[i];
        st = make_part_fields(P, pt, 0);
        for (int f = 0; f < s->nfields && st == PYR_OK; f++) {
            if (!((P->fields >> f) & 1) || !given[f] || s->field[f].role == PYR_FIELD_AUX) continue;
            pyr_host_region_t to = region_of(pt, f), from = {given[f]->data, grid};
            pyr_host_copy_box(&to, &from, &pt->local, elem);
        }
    }
    if (st == PYR_OK) st = pyr_parts_run(P, hooks, run);
    if (st == PYR_OK)
        for (int i = 0; i < P->ndev; i++)
            for (int f = 0; f < s->nfields; f++) {
                if (!P->exchanged[f] || !given[f] || s->field[f].role == PYR_FIELD_AUX) continue;
                pyr_host_region_t to = {given[f]->data, grid}, from = region_of(&P->part[i], f);
                pyr_host_copy_box(&to, &from, &P->part[i].own, elem);
            }
    free_fields(P);
    return st;
}

/* ------------------------------------------------------------------ reports */

const pyr_plan_t *pyr_parts_local_plan(const pyr_parts_t *P, int i) { return i >= 0 && i < P->ndev ? P->part[i].plan : NULL; }

uint64_t pyr_parts_useful(const pyr_parts_t *P, int64_t steps) { return useful_owned(P, steps); }

void pyr_parts_get_info(const pyr_parts_t *P, pyr_parts_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->nparts = P->nparts;
    info->ranks = P->ranks;
    info->devices = P->ndev;
    memcpy(info->count, P->count, sizeof info->count);
    memcpy(info->count_device, P->cdev, sizeof info->count_device);
    info->exchange = P->H;
    memcpy(info->depth, P->depth, sizeof info->depth);
    for (int i = 0; i < P->ndev; i++) info->streaming += !P->part[i].plan->resident;
    info->predicted = P->predicted;
    snprintf(info->why, sizeof info->why, "%s", P->why);
}

int pyr_parts_part(const pyr_parts_t *P, int i, pyr_box_t *own, pyr_box_t *local, int *rank)
{
    if (i < 0 || i >= P->nparts) return 0;
    pyr_box_t o = own_box(&P->problem, P->fixed, P->count, i);
    if (own) *own = o;
    if (local) *local = local_box(&P->problem, &o, P->depth);
    if (rank) *rank = rank_of_part(P->count, P->cdev, i);
    return 1;
}

int pyr_parts_message(const pyr_parts_t *P, int i, int *from, int *to, pyr_box_t *box)
{
    if (i < 0 || i >= P->nmsg) return 0;
    if (from) *from = P->msg[i].from;
    if (to) *to = P->msg[i].to;
    if (box) *box = P->msg[i].box;
    return 1;
}

void pyr_parts_describe(const pyr_parts_t *P, char *out, size_t size)
{
    const int dims = P->problem.dims;
    int cut = 0;
    for (int a = 0; a < dims; a++) cut += P->count[a] > 1;
    const char *shape = cut <= 1 ? (dims == 1 ? "segments" : "slabs") : "blocks";
    char depth[64];
    int64_t g = 0;
    for (int a = 0; a < dims; a++)
        for (int s = 0; s < 2; s++) g = imax64(g, P->depth[a][s]);
    snprintf(depth, sizeof depth, "%lld", (long long)g);
    snprintf(out, size, "%d parts (%d rank%s x %d device%s, %s %dx%dx%d), H = %lld (%s), halos %s nodes deep", P->nparts, P->ranks,
             P->ranks == 1 ? "" : "s", P->ndev, P->ndev == 1 ? "" : "s", shape, P->count[0], P->count[1], P->count[2], (long long)P->H, P->why,
             depth);
}
