/* The collective points of the parts: where every part of every rank meets,
 * agrees on failures and on a stop asked for, reduces the change and swaps
 * halos (parts.h says why every point begins with the agreement). */
#include "multi/parts_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

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
            pyr_multi_note_pending(P, P->t->broadcast(P->t, P->probe_col, (size_t)rows * sizeof(double), P->probe_rank[i]));
            for (int64_t r = 0; r < rows; r++) P->probe_rows[r * np + i] = P->probe_col[r];
        }
    memcpy(P->probe_out, P->probe_rows, (size_t)(rows * np) * sizeof(double));
    P->out_first = P->probe_base;
    P->out_rows = rows;
    P->probe_base = P->probe_upto;
}

/* One thread of the process (the last to arrive) acts for all its parts:
 * failures first (every rank learns the lowest failing one's message), a
 * stop the caller asked for agreed on the same way (as the status
 * PYR_ERR_CANCELLED, below any failure of this process), then the global
 * change, then the halos unless the run stops here. */
static void coordinate(pyr_parts_t *P, int exchange, int reduced, int64_t step)
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
    if (mine == PYR_OK && P->cancel_vote) {
        mine = PYR_ERR_CANCELLED;
        snprintf(msg, sizeof msg, "run cancelled after %lld of %lld steps", (long long)step, (long long)P->problem.steps);
    }
    P->cancel_vote = 0;
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
        P->stop_step = step;
        /* a stop asked for (here or on the rank that said so first): every
         * part's host fields hold this step, and the probes up to it go out */
        P->cancelled = st == PYR_ERR_CANCELLED;
        if (P->ranks > 1) snprintf(P->stop_message, sizeof P->stop_message, "rank %d: %s", who, msg);
        else snprintf(P->stop_message, sizeof P->stop_message, "%s", msg);
        if (P->cancelled && P->nprobes) share_probes(P);
        return;
    }
    if (P->nprobes) share_probes(P);
    if (reduced) {
        uint64_t m = 0;
        for (int i = 0; i < P->ndev; i++) {
            uint64_t b = ordered_bits(P->part[i].change);
            if (b > m) m = b;
        }
        if (P->t) pyr_multi_note_pending(P, P->t->reduce_u64(P->t, &m, 1));
        P->change = from_ordered(m);
    }
    const double tol = P->scheme->tolerance(&P->problem);
    if (exchange && !(reduced && tol > 0 && P->change < tol)) {
        pyr_multi_swap_halos(P);
        P->swapped = 1;
    }
}

void pyr_multi_meet(part_t *pt, int exchange, int reduced, int64_t step)
{
    pyr_parts_t *P = pt->owner;
    if (pthread_barrier_wait(&P->arrive) == PTHREAD_BARRIER_SERIAL_THREAD) coordinate(P, exchange, reduced, step);
    pthread_barrier_wait(&P->leave);
}

/* Collective over the ranks: a local failure (status, message) becomes every
 * rank's.  Returns the agreed status, with the failing rank's message. */
pyr_status_t pyr_multi_agree(pyr_parts_t *P, pyr_status_t mine)
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
