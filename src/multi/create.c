/* Creating the parts: the checks of what can run over several devices, the
 * devices of each rank, the decomposition (decompose.c), each part's plan
 * through the single-device plan creation (tune/), and the messages. */
#include "multi/parts_internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/plugin.h"
#include "core/error.h"
#include "core/field.h"
#include "plan/model.h"
#include "problem/devices.h"
#include "tune/tune.h"

int pyr_multi_is_local(const pyr_parts_t *P, int p) { return pyr_multi_rank_of_part(P->count, P->cdev, p) == P->rank; }

part_t *pyr_multi_local_part(pyr_parts_t *P, int p)
{
    for (int i = 0; i < P->ndev; i++)
        if (P->part[i].index == p) return &P->part[i];
    return NULL;
}

static int note_message(void *user, int from, int to, const pyr_box_t *box)
{
    pyr_parts_t *P = user;
    const int lf = pyr_multi_is_local(P, from), lt = pyr_multi_is_local(P, to);
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

void pyr_multi_free_messages(pyr_parts_t *P)
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
        if (!pyr_multi_is_local(P, p)) continue;
        part_t *pt = &P->part[pyr_multi_device_of_part(P->count, P->cdev, p)];
        pt->owner = P;
        pt->index = p;
        pt->device = P->devices[pyr_multi_device_of_part(P->count, P->cdev, p)];
        pt->own = pyr_multi_own_box(&P->problem, P->fixed, P->count, p);
        pt->local = pyr_multi_local_box(&P->problem, &pt->own, P->depth);
    }
    pyr_multi_free_messages(P);
    for (int to = 0; to < n; to++)
        if (pyr_multi_each_message_into(&P->problem, P->fixed, &P->changing, g, to, note_message, P))
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
        pyr_plan_free(&P->part[i].plan);
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
        pyr_status_t st = pyr_plan_create_one(&pt->problem, &o, &pt->plan);
        if (st != PYR_OK) {
            if (P->ndev > 1) return pyr_fail_context(st, "device %d (part %d of %d): ", pt->device, pt->index, P->nparts);
            return st;
        }
    }
    return PYR_OK;
}

/* A part whose plan stages its host grid (each value crosses the link about once each way) and whose
 * halos go through that grid (to or from another device's part on the host path, or another rank's) moves
 * those halos too at every exchange: the same rule as a whole grid's (plan/plan.c pyr_plan_host_memory:
 * pinned past 2.5 crossings per host value) decides again with them counted.  Halos copied device to
 * device cross nothing, so resident parts of one runtime keep staging, as one device would. */
static void host_memory_with_halos(const pyr_parts_t *P, part_t *pt)
{
    pyr_plan_t *plan = pt->plan;
    if (plan->host_memory != PYR_HOST_STAGE || !plan->host_once || !plan->host_bytes) return;
    int64_t halo = 0; /* nodes of this part's host-path messages, both ways, per exchange */
    for (int m = 0; m < P->nmsg; m++) {
        const msg_t *g = &P->msg[m];
        if (g->mode != MSG_PEER && (g->from == pt->index || g->to == pt->index)) halo += pyr_box_volume(&g->box);
    }
    if (!halo) return;
    const uint64_t elem = pyr_precision_size(P->problem.precision);
    const double values = (double)plan->host_bytes / (double)elem;
    const double exchanges = P->H > 0 ? (double)P->problem.steps / (double)P->H : 0;
    const double crossings = (double)(plan->predicted.uploaded + plan->predicted.downloaded) / values +
                             (double)halo * (double)P->nstate * exchanges / values;
    if (crossings <= 2.5) return;
    plan->host_memory = PYR_HOST_PIN;
    plan->host_once = 0;
    snprintf(plan->host_why, sizeof plan->host_why, "pinned: with its halos through the host at every exchange the part moves each "
             "byte %.1f times across the link", crossings);
}

/* The parts' plans as parts: the whole grid's coefficients (the local
 * problem's spacings differ), passes ending at the exchanges, the hook. */
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
        pt->xch.at_pass_end = pyr_multi_at_pass_end;
        pt->xch.user = pt;
        pt->plan->exchange = &pt->xch;
    }
    /* device to device where both parts keep their grid resident on one runtime that can */
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        if (g->mode != MSG_HOST) continue;
        const pyr_plan_t *a = pyr_multi_local_part(P, g->from)->plan, *b = pyr_multi_local_part(P, g->to)->plan;
        if (a->resident && b->resident && a->ops == b->ops && a->ops->copy_peer) g->mode = MSG_PEER;
    }
    for (int i = 0; i < P->ndev; i++) host_memory_with_halos(P, &P->part[i]);
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
        pyr_wire_t w = {pyr_multi_rank_of_part(P->count, P->cdev, g->mode == MSG_SEND ? g->to : g->from), (g->from * 131 + g->to) & 0x7fff, g->buf,
                        g->bytes};
        if (g->mode == MSG_SEND) P->wsend[P->nwsend++] = w;
        else P->wrecv[P->nwrecv++] = w;
    }
    return PYR_OK;
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

/* Chebyshev's sweeps read the layer two sweeps back, and a part gets its
 * halo from its neighbours as one layer (docs/poisson.md).  n: the devices
 * of each rank (-1: "all", not yet counted). */
static pyr_status_t refuse_chebyshev(const pyr_parts_t *P, int n)
{
    char parts[48] = "several parts";
    if (n >= 0) snprintf(parts, sizeof parts, "%d parts", (n > 0 ? n : 1) * P->ranks);
    return pyr_fail(PYR_ERR_UNSUPPORTED,
                    "scheme.iteration = chebyshev over several devices or MPI ranks (this run cuts the grid into %s): the parts "
                    "exchange one layer of u, and Chebyshev's sweeps read the layer two sweeps back; chebyshev needs one device in one "
                    "process (leave run.devices out; any run.method, out of core too), or use scheme.iteration = jacobi",
                    parts);
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
            for (int side = 0; side < 2; side++) P->fixed[a][side] = a < problem->dims ? pyr_scheme_fixed(s, problem, a, side) : 0;
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
    const int chebyshev = problem->equation == PYR_EQ_POISSON && problem->poisson.iteration == PYR_ITER_CHEBYSHEV;
    if (st == PYR_OK && chebyshev) {
        int devs[PYR_PARTS_MAX_DEVICES], n = 0;
        if (pyr_parts_parse_devices(P->options.devices, devs, PYR_PARTS_MAX_DEVICES, &n) == PYR_OK) {
            if (n > 1 || P->ranks > 1) st = refuse_chebyshev(P, n);
        } else {
            pyr_clear_error(); /* the list's own message comes below */
        }
    }
    /* the backend, and the devices of each rank */
    if (st == PYR_OK) {
        P->kind = P->options.backend;
        if (P->kind == PYR_BACKEND_AUTO) P->kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
        if (!pyr_device_get(P->kind))
            st = pyr_fail(PYR_ERR_NODEVICE, "backend = cuda: %s", pyr_cuda_missing());
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
        if (st == PYR_OK && chebyshev && n * P->ranks > 1) st = refuse_chebyshev(P, n);
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
    link_t ll = pyr_multi_local_link(P->kind, &k, elem), rl = pyr_multi_remote_link(t, P->kind, &k, elem);
    if (st == PYR_OK && P->kind == PYR_BACKEND_CUDA) pyr_multi_measure_peer(P, &ll, elem);
    /* H beyond the run's steps changes nothing but the halo's width */
    const int64_t forced = P->options.exchange > 0 ? pyr_multi_imin(P->options.exchange, pyr_multi_imax(problem->steps, 1)) : 0;
    if (st == PYR_OK) st = pyr_multi_choose(P, &ll, &rl, &k, forced, &g, cdev);
    if (st == PYR_OK) {
        snprintf(P->why, sizeof P->why, "%s", P->options.exchange > 0 ? "given (run.exchange)" : "the model's");
        st = lay_out(P, &g, cdev);
    }
    if (st == PYR_OK) st = plan_parts(P, 0);
    st = pyr_multi_agree(P, st);
    /* Streaming parts exchange once per pyramid pass: H = their height (the
     * least over all parts); resident parts keep the model's H, now with
     * the constants of this machine's wisdom when it has them. */
    if (st == PYR_OK && P->options.exchange == 0) {
        uint64_t h = (uint64_t)streaming_height(P);
        if (h == (uint64_t)INT64_MAX) {
            geometry_t g2 = g;
            const pyr_model_constants_t *pk = &P->part[0].plan->model;
            link_t l2 = pyr_multi_local_link(P->kind, pk, elem), r2 = pyr_multi_remote_link(t, P->kind, pk, elem);
            if (P->kind == PYR_BACKEND_CUDA) l2.per_value = ll.per_value; /* the peer link as measured */
            pyr_parts_t *Q = P; /* pyr_multi_choose() over H only: the counts are fixed now */
            char keep[32];
            snprintf(keep, sizeof keep, "%dx%dx%d", g.count[0], g.count[1], g.count[2]);
            pyr_options_t saved = Q->options;
            snprintf(Q->options.partition, sizeof Q->options.partition, "%s", keep);
            int cd2[3];
            st = pyr_multi_choose(Q, &l2, &r2, pk, 0, &g2, cd2);
            Q->options = saved;
            h = st == PYR_OK ? (uint64_t)g2.H : (uint64_t)g.H;
            st = PYR_OK;
        } else {
            snprintf(P->why, sizeof P->why, "the pyramid height of the parts that stream pieces");
        }
        if (t) st = t->reduce_u64(t, &h, 0);
        if (st == PYR_OK && (int64_t)h != g.H) {
            g.H = (int64_t)h;
            pyr_multi_set_depths(P, &g);
            st = lay_out(P, &g, cdev);
            if (st == PYR_OK) st = plan_parts(P, g.H);
            st = pyr_multi_agree(P, st);
        }
    }
    if (st == PYR_OK) {
        attach(P);
        st = wire_up(P);
    }
    st = pyr_multi_agree(P, st);
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
    pyr_multi_free_messages(P);
    free(P->msg);
    if (P->part)
        for (int i = 0; i < P->ndev; i++) {
            pyr_plan_free(&P->part[i].plan);
            for (int f = 0; f < PYR_MAX_FIELDS; f++) pyr_field_destroy(&P->part[i].fields[f]);
            free(P->part[i].owned);
        }
    free(P->part);
    free(P->probe_rows);
    free(P->probe_out);
    free(P->probe_col);
    free(P->probe_rank);
    free(P);
    *pp = NULL;
}
