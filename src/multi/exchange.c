/* The halo swaps of every exchange (why they make the result bit-identical:
 * exchange.h). */
#include "multi/exchange.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "exec/exec.h"

/* Halos of every message touching this process: packed and posted to other
 * ranks, copied between local parts (device to device where both keep their
 * grids resident), unpacked from other ranks.  A failure is kept for the
 * next point, where every rank hears of it: the messages of this exchange
 * are all still sent, so no rank waits for one that never comes. */
void pyr_multi_note_pending(pyr_parts_t *P, pyr_status_t st)
{
    if (st == PYR_OK || P->pending != PYR_OK) return;
    P->pending = st;
    snprintf(P->pending_message, sizeof P->pending_message, "halo exchange: %s", pyr_last_error());
}

void pyr_multi_swap_halos(pyr_parts_t *P)
{
    const size_t elem = pyr_precision_size(P->problem.precision);
    const int nf = P->scheme->nfields;
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        if (g->mode != MSG_SEND) continue;
        const part_t *src = pyr_multi_local_part(P, g->from);
        char *at = g->buf;
        for (int f = 0; f < nf; f++) {
            if (!P->exchanged[f]) continue;
            pyr_host_region_t to = {at, g->box}, from = pyr_multi_region_of(src, f);
            pyr_host_copy_box(&to, &from, &g->box, elem);
            at += (size_t)pyr_box_volume(&g->box) * elem;
        }
    }
    if (P->t && (P->nwsend || P->nwrecv)) pyr_multi_note_pending(P, P->t->start(P->t, P->wsend, P->nwsend, P->wrecv, P->nwrecv));
    int waits[PYR_PARTS_MAX_DEVICES] = {0};
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        part_t *src = g->mode == MSG_HOST || g->mode == MSG_PEER ? pyr_multi_local_part(P, g->from) : NULL;
        part_t *dst = src ? pyr_multi_local_part(P, g->to) : NULL;
        if (!src) continue;
        if (g->mode == MSG_HOST) {
            for (int f = 0; f < nf; f++) {
                /* both parts on the caller's grid: the sender's download is already the receiver's to upload */
                if (!P->exchanged[f] || (dst->region[f].data && src->region[f].data)) continue;
                pyr_host_region_t to = pyr_multi_region_of(dst, f), from = pyr_multi_region_of(src, f);
                pyr_host_copy_box(&to, &from, &g->box, elem);
            }
            continue;
        }
        /* device to device, in the receiving part's coordinates */
        const pyr_device_ops_t *ops;
        void *dctx, *sctx;
        const pyr_piece_t *dp = pyr_exec_resident_piece(dst->io, &ops, &dctx), *sp = pyr_exec_resident_piece(src->io, NULL, &sctx);
        if (!dp || !sp) {
            pyr_multi_note_pending(P, pyr_fail(PYR_ERR_INTERNAL, "a device-to-device halo between parts that do not both keep their grid resident"));
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
            pyr_multi_note_pending(P, ops->copy_peer(dctx, 0, dp, f, 3, sctx, &shifted, layer, &b));
        }
        waits[dst - P->part] = 1;
    }
    for (int i = 0; i < P->ndev; i++) {
        if (!waits[i]) continue;
        const pyr_device_ops_t *ops;
        void *ctx;
        pyr_exec_resident_piece(P->part[i].io, &ops, &ctx);
        pyr_multi_note_pending(P, ops->wait(ctx, 0));
    }
    if (P->t && (P->nwsend || P->nwrecv)) pyr_multi_note_pending(P, P->t->finish(P->t));
    for (int m = 0; m < P->nmsg; m++) {
        msg_t *g = &P->msg[m];
        const uint64_t values = (uint64_t)pyr_box_volume(&g->box) * (uint64_t)P->nstate;
        if (g->mode != MSG_RECV) P->sent += pyr_multi_is_local(P, g->from) ? values : 0;
        if (g->mode != MSG_SEND) P->received += pyr_multi_is_local(P, g->to) ? values : 0;
        if (g->mode != MSG_RECV) continue;
        part_t *dst = pyr_multi_local_part(P, g->to);
        const char *at = g->buf;
        for (int f = 0; f < nf; f++) {
            if (!P->exchanged[f]) continue;
            pyr_host_region_t to = pyr_multi_region_of(dst, f), from = {(void *)at, g->box};
            pyr_host_copy_box(&to, &from, &g->box, elem);
            at += (size_t)pyr_box_volume(&g->box) * elem;
        }
    }
    P->exchanges++;
}
