/* Running the parts: a thread per local part, each part's executor with
 * the hook of the collective points (exec/part_io.h), probes, and what
 * the parts report. */
#include "multi/parts_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "exec/exec.h"

static void note_failure(part_t *pt, pyr_status_t st)
{
    if (pt->status != PYR_OK) return;
    pt->status = st;
    snprintf(pt->message, sizeof pt->message, "%s", pyr_last_error());
}

/* The executor's hook (exec/part_io.h) for part pt.  Part 0's thread is the
 * caller's: it asks the caller's progress and cancel hooks here, before the
 * point, so that a stop is agreed on there and every part (and rank) stops
 * at this same step; a part stopping alone would leave the others waiting
 * at the next exchange. */
pyr_status_t pyr_multi_at_pass_end(void *user, pyr_exec_io_t *io, int64_t step, int exchange, int reduced, double *change, int last)
{
    part_t *pt = user;
    pyr_parts_t *P = pt->owner;
    /* parts sharing the caller's grid: no part writes into it before every part has uploaded from it */
    if (P->shared && !pt->ready) {
        pt->ready = 1;
        pthread_barrier_wait(&P->uploaded);
    }
    pt->io = io;
    pt->change = reduced ? *change : 0;
    if (pt == &P->part[0]) {
        P->probe_upto = step;
        const pyr_hooks_t *h = P->user_hooks;
        int stop = h && h->progress && h->progress(h->user, step, P->problem.steps);
        if (!stop && !last && h && h->cancel) stop = h->cancel(h->user, step, P->problem.steps);
        P->cancel_vote = stop;
    }
    /* what goes through host memory leaves a resident grid first */
    if (exchange)
        for (int k = 0; k < pt->nsends && pt->status == PYR_OK; k++) {
            const msg_t *g = &P->msg[pt->sends[k]];
            if (g->mode == MSG_PEER) continue;
            pyr_box_t b = g->box;
            for (int a = 0; a < 3; a++) b.lo[a] -= pt->local.lo[a], b.hi[a] -= pt->local.lo[a];
            note_failure(pt, pyr_exec_fetch(io, &b));
        }
    pyr_multi_meet(pt, exchange, reduced, step);
    if (P->stopped) {
        pyr_status_t st = PYR_OK;
        if (P->cancelled) {
            /* stopped as asked: the host fields hold this step over the box the part owns */
            pyr_box_t own = pt->own;
            for (int a = 0; a < 3; a++) own.lo[a] -= pt->local.lo[a], own.hi[a] -= pt->local.lo[a];
            st = pyr_exec_fetch(io, &own);
            if (st == PYR_OK && pt == &P->part[0] && P->out_rows > 0 && P->user_hooks && P->user_hooks->probe)
                st = P->user_hooks->probe(P->user_hooks->user, P->out_first, P->out_rows, P->probe_out, P->nprobes);
            if (st != PYR_OK) note_failure(pt, st);
        }
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
    /* the caller's grid shared: the halos it held for this exchange are uploaded everywhere before any
     * part downloads the next ones into it (every part that left the point unstopped waits here) */
    if (P->swapped && P->shared) pthread_barrier_wait(&P->uploaded);
    pt->io = NULL;
    return st;
}

/* A part's run: its executor, then the end point (unless the run stopped). */
static void run_part(part_t *pt)
{
    pyr_parts_t *P = pt->owner;
    pyr_status_t st = pyr_exec_fields_made(pt->plan, pt->fields, pt->region, pt->recipe, P->scheme->nfields, pt->hooks, &pt->run);
    /* a part that failed before its first point still lets the others past theirs */
    if (P->shared && !pt->ready) {
        pt->ready = 1;
        pthread_barrier_wait(&P->uploaded);
    }
    if (P->stopped) return;
    if (st != PYR_OK) note_failure(pt, st);
    pyr_multi_meet(pt, 0, 0, pt->run.steps);
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
uint64_t pyr_multi_useful_owned(const pyr_parts_t *P, int64_t steps)
{
    uint64_t v = 0;
    for (int i = 0; i < P->ndev; i++)
        for (int k = 0; k < P->scheme->nsub; k++) {
            pyr_box_t u = P->part[i].own;
            for (int a = 0; a < P->problem.dims; a++) {
                u.lo[a] = pyr_multi_imax(u.lo[a], pyr_scheme_margin(P->scheme, &P->problem, k, a, 0));
                u.hi[a] = pyr_multi_imin(u.hi[a], P->problem.n[a] - pyr_scheme_margin(P->scheme, &P->problem, k, a, 1));
            }
            v += (uint64_t)pyr_box_volume(&u);
        }
    return v * (uint64_t)steps;
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

/* The caller's probes of the whole grid (the scheme's points hook): their nodes. */
static pyr_status_t shown_probes(const pyr_parts_t *P, pyr_scheme_point_t **out, int *n)
{
    *out = NULL;
    *n = 0;
    const pyr_scheme_t *s = P->scheme;
    if (!s->points) return PYR_OK;
    pyr_scheme_points_t pts;
    memset(&pts, 0, sizeof pts);
    PYR_TRY(s->points(&P->problem, &pts));
    pyr_status_t st = PYR_OK;
    if (pts.nshown > 0) {
        *out = malloc((size_t)pts.nshown * sizeof **out);
        if (*out) {
            memcpy(*out, pts.probes, (size_t)pts.nshown * sizeof **out);
            *n = pts.nshown;
        } else st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes");
    }
    s->points_free(&pts);
    return st;
}

/* Each probe's owning part and rank; the rows between two points (at most H). */
static pyr_status_t setup_probes(pyr_parts_t *P, const pyr_hooks_t *hooks)
{
    P->user_hooks = hooks;
    P->nprobes = 0;
    P->probe_base = P->probe_upto = P->out_rows = 0;
    for (int i = 0; i < P->ndev; i++) P->part[i].nowned = 0;
    const pyr_problem_t *p = &P->problem;
    pyr_scheme_point_t *probes = NULL;
    int np = 0;
    PYR_TRY(shown_probes(P, &probes, &np));
    if (np == 0) return PYR_OK;
    free(P->probe_rank);
    P->probe_rank = malloc((size_t)np * sizeof *P->probe_rank);
    int fits = P->probe_rank != NULL;
    for (int i = 0; i < P->ndev; i++) {
        free(P->part[i].owned);
        P->part[i].owned = malloc((size_t)np * sizeof *P->part[i].owned);
        fits &= P->part[i].owned != NULL;
    }
    if (!fits) {
        free(probes);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes");
    }
    for (int i = 0; i < np; i++) {
        const int64_t *nd = probes[i].node;
        P->probe_rank[i] = -1;
        for (int q = 0; q < P->nparts; q++) {
            const pyr_box_t own = pyr_multi_own_box(p, P->fixed, P->count, q);
            int in = 1;
            for (int a = 0; a < 3; a++) in &= nd[a] >= own.lo[a] && nd[a] < own.hi[a];
            if (!in) continue;
            P->probe_rank[i] = pyr_multi_rank_of_part(P->count, P->cdev, q);
            if (pyr_multi_is_local(P, q)) {
                part_t *pt = &P->part[pyr_multi_device_of_part(P->count, P->cdev, q)];
                pt->owned[pt->nowned++] = i;
            }
            break;
        }
        if (P->probe_rank[i] < 0) {
            free(probes);
            return pyr_fail(PYR_ERR_INTERNAL, "probe %d lies on no part", i + 1);
        }
    }
    free(probes);
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
            if (((P->fields >> f) & 1) && !P->part[i].fields[f] && !P->part[i].region[f].data)
                return pyr_fail(PYR_ERR_ARG, "the parts hold no fields yet (pyr_parts_init)");
    if (pthread_barrier_init(&P->arrive, NULL, (unsigned)P->ndev)) return pyr_fail(PYR_ERR_NOMEM, "cannot create a barrier for the parts");
    if (pthread_barrier_init(&P->leave, NULL, (unsigned)P->ndev)) {
        pthread_barrier_destroy(&P->arrive);
        return pyr_fail(PYR_ERR_NOMEM, "cannot create a barrier for the parts");
    }
    if (pthread_barrier_init(&P->uploaded, NULL, (unsigned)P->ndev)) {
        pthread_barrier_destroy(&P->arrive);
        pthread_barrier_destroy(&P->leave);
        return pyr_fail(PYR_ERR_NOMEM, "cannot create a barrier for the parts");
    }
    pthread_mutex_init(&P->gate_mu, NULL);
    pthread_cond_init(&P->gate_cv, NULL);
    P->gate_open = P->gate_abort = 0;
    P->stopped = P->swapped = 0;
    P->cancel_vote = P->cancelled = 0;
    P->stop_step = 0;
    P->pending = PYR_OK;
    P->exchanges = 0;
    P->sent = P->received = 0;
    P->change = 0;
    pyr_status_t pst = setup_probes(P, hooks);
    if (pst != PYR_OK) {
        pthread_barrier_destroy(&P->arrive);
        pthread_barrier_destroy(&P->leave);
        pthread_barrier_destroy(&P->uploaded);
        pthread_mutex_destroy(&P->gate_mu);
        pthread_cond_destroy(&P->gate_cv);
        return pyr_multi_agree(P, pst);
    }
    for (int i = 0; i < P->ndev; i++) {
        part_t *pt = &P->part[i];
        pt->status = PYR_OK;
        pt->message[0] = 0;
        pt->io = NULL;
        pt->ready = 0;
        memset(&pt->part_hooks, 0, sizeof pt->part_hooks);
        pt->part_hooks.user = pt;
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
    pthread_barrier_destroy(&P->uploaded);
    pthread_mutex_destroy(&P->gate_mu);
    pthread_cond_destroy(&P->gate_cv);
    if (st != PYR_OK) {
        /* no part ran; other ranks must still hear of it */
        return pyr_multi_agree(P, st);
    }
    if (P->stopped && P->cancelled)
        for (int i = 0; i < P->ndev; i++)
            if (P->part[i].status != PYR_OK) { /* a part could not bring its values back: a failure, not a stop */
                if (P->ndev > 1)
                    return pyr_fail(P->part[i].status, "device %d (part %d of %d): %.900s", P->part[i].device, P->part[i].index, P->nparts,
                                    P->part[i].message);
                return pyr_fail(P->part[i].status, "%s", P->part[i].message);
            }
    if (P->stopped && !P->cancelled) return pyr_fail(P->stop_status, "%s", P->stop_message);
    if (run) {
        const pyr_run_info_t *r0 = &P->part[0].run;
        for (int i = 0; i < P->ndev; i++) {
            run->counts.uploaded += P->part[i].run.counts.uploaded;
            run->counts.downloaded += P->part[i].run.counts.downloaded;
            run->counts.computed += P->part[i].run.counts.computed;
        }
        const uint64_t useful = pyr_multi_useful_owned(P, r0->steps);
        run->counts.redundant = run->counts.computed > useful ? run->counts.computed - useful : 0;
        run->steps = r0->steps;
        run->checked = r0->checked;
        run->change = r0->change;
        run->converged = r0->converged;
        if (P->cancelled) run->steps = P->stop_step;
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
    /* stopped as asked: every part's host fields hold step stop_step over its box */
    if (P->cancelled) return pyr_fail(P->stop_status, "%s", P->stop_message);
    return PYR_OK;
}


/* ------------------------------------------------------------------ reports */

const pyr_plan_t *pyr_parts_local_plan(const pyr_parts_t *P, int i) { return i >= 0 && i < P->ndev ? P->part[i].plan : NULL; }

uint64_t pyr_parts_useful(const pyr_parts_t *P, int64_t steps) { return pyr_multi_useful_owned(P, steps); }

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
    pyr_box_t o = pyr_multi_own_box(&P->problem, P->fixed, P->count, i);
    if (own) *own = o;
    if (local) *local = pyr_multi_local_box(&P->problem, &o, P->depth);
    if (rank) *rank = pyr_multi_rank_of_part(P->count, P->cdev, i);
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
        for (int s = 0; s < 2; s++) g = pyr_multi_imax(g, P->depth[a][s]);
    snprintf(depth, sizeof depth, "%lld", (long long)g);
    snprintf(out, size, "%d parts (%d rank%s x %d device%s, %s %dx%dx%d), H = %lld (%s), halos %s nodes deep", P->nparts, P->ranks,
             P->ranks == 1 ? "" : "s", P->ndev, P->ndev == 1 ? "" : "s", shape, P->count[0], P->count[1], P->count[2], (long long)P->H, P->why,
             depth);
}
