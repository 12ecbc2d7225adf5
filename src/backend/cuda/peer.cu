/* Copies between pieces of two CUDA contexts: several GPUs of one process
 * swap the halos of their resident local grids this way (exec/parts.c).
 * Between two GPUs it is a 3D peer copy (over NVLink or PCIe peer to peer
 * where the GPUs can reach each other, else staged by the driver); two
 * contexts of one GPU (devices = 0,0) use the runtime's own copy kernel. */
#include <string.h>

#include "backend/cuda/cuda_internal.cuh"

extern "C" pyr_status_t pyr_cuda_copy_peer(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, void *src_ctx,
                                           const pyr_piece_t *src, int src_layer, const pyr_box_t *box)
{
    pyrcu::ctx_t *c = (pyrcu::ctx_t *)ctx;
    const pyrcu::ctx_t *sc = (const pyrcu::ctx_t *)src_ctx;
    if (pyr_box_empty(box)) return PYR_OK;
    if (!pyr_box_contains(&src->box, box) || !pyr_box_contains(&dst->box, box))
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: peer copy box outside its pieces");
    if (sc->device == c->device) return pyr_device_cuda.copy(ctx, slot, dst, f, dst_layers, src, src_layer, box);
    PYR_TRY(pyrcu::check_slot(c, slot));
    PYR_CU(cudaSetDevice(c->device));
    /* Direct access where the GPUs have it (asked once per pair, kept in the
     * destination's shared state; a refusal only means the driver stages the
     * copy). */
    if (sc->device < 64) {
        pyrcu::device_t *d = c->dev;
        std::lock_guard<std::mutex> hold(d->lock);
        if (!d->peer[sc->device]) {
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, c->device, sc->device) == cudaSuccess && can) {
                cudaError_t e = cudaDeviceEnablePeerAccess(sc->device, 0);
                if (e != cudaSuccess) (void)cudaGetLastError(); /* refused, or enabled already */
            }
            d->peer[sc->device] = 1;
        }
    }
    const size_t elem = c->elem;
    const int64_t w = pyr_box_extent(box, 0), ny = pyr_box_extent(box, 1), nz = pyr_box_extent(box, 2);
    const char *s = (const char *)src->buf[f][src_layer] + pyr_piece_index(src, box->lo[0], box->lo[1], box->lo[2]) * (int64_t)elem;
    for (int l = 0; l < 2; l++) {
        if (!(dst_layers & (1 << l)) || !dst->buf[f][l]) continue;
        char *d = (char *)dst->buf[f][l] + pyr_piece_index(dst, box->lo[0], box->lo[1], box->lo[2]) * (int64_t)elem;
        cudaMemcpy3DPeerParms p;
        memset(&p, 0, sizeof p);
        p.srcDevice = sc->device;
        p.dstDevice = c->device;
        p.srcPtr = make_cudaPitchedPtr((void *)s, (size_t)src->pitch * elem, (size_t)w * elem, (size_t)pyr_box_extent(&src->box, 1));
        p.dstPtr = make_cudaPitchedPtr(d, (size_t)dst->pitch * elem, (size_t)w * elem, (size_t)pyr_box_extent(&dst->box, 1));
        p.extent = make_cudaExtent((size_t)w * elem, (size_t)ny, (size_t)nz);
        PYR_CU(cudaMemcpy3DPeerAsync(&p, c->stream[slot]));
    }
    return PYR_OK;
}
