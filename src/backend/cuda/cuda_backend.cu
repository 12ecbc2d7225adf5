/* The CUDA backend: device memory, pinned host memory, transfers and the
 * heat kernels behind the backend interface (src/backend/backend.h).
 *
 * Streams: one per slot.  Every operation of a slot goes on its stream, so the
 * slot's upload -> prepare -> compute -> download run in order, while the
 * executor's three slots in flight overlap: piece i+1 uploads (host-to-device
 * copy engine) while piece i computes (SMs) and piece i-1 downloads
 * (device-to-host engine).  The only data shared between slots are the
 * resident boundary faces, uploaded once on slot 0: an event recorded after
 * every upload lets another slot's copy out of that buffer wait for it.
 *
 * Every CUDA call is checked; failures become PYR_ERR_DEVICE (the call and
 * CUDA's message), PYR_ERR_DEVICE_NOMEM (sizes and what to change) or
 * PYR_ERR_NODEVICE (no GPU, driver too old: use backend = cpu). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "backend/backend.h"
#include "core/error.h"
}
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/kernels_heat.cuh"

#define SLOTS 3
#define MAX_WRITERS 32

namespace {

struct writer_t {
    const void *ptr;
    cudaEvent_t ev;
    int slot;
};

struct cuda_ctx_t {
    int device;
    pyr_precision_t precision;
    size_t elem;
    cudaStream_t stream[SLOTS];
    cudaEvent_t marks[SLOTS][PYR_MARKS]; /* mark(): events per slot and kind, recorded again at each mark */
    writer_t writers[MAX_WRITERS];
    int nwriters;
    void *registered[8]; /* host ranges we registered (to unregister) */
    int nregistered;
    pyr_ktune_t tune;
    int plain; /* force the one-step kernel (experiments) */
    char name[256];
};

/* Process-wide test hooks (cuda_api.h). */
int g_serial = 0;
int g_fail_alloc = 0;
pyr_cuda_stats_t g_stats;

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

pyr_status_t fail_cuda(cudaError_t e, const char *call, int device)
{
    (void)cudaGetLastError(); /* clear non-sticky errors */
    if (e == cudaErrorMemoryAllocation)
        return pyr_fail(PYR_ERR_DEVICE_NOMEM, "GPU %d: %s: out of device memory; use a smaller memory budget (run.memory) or free the GPU",
                        device, call);
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
        return pyr_fail(PYR_ERR_NODEVICE, "%s: %s; use backend = cpu", call, cudaGetErrorString(e));
    return pyr_fail(PYR_ERR_DEVICE,
                    "GPU %d: %s failed: %s (%s)%s", device, call, cudaGetErrorString(e), cudaGetErrorName(e),
                    e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorAssert
                        ? "; the GPU context is now unusable: restart the program (this is a pyrgrid bug: please report it with "
                          "the problem file; backend = cpu gives the answer meanwhile)"
                        : "");
}

#define CU(call)                                                                                                                   \
    do {                                                                                                                           \
        cudaError_t cu_e_ = (call);                                                                                                \
        if (cu_e_ != cudaSuccess) return fail_cuda(cu_e_, #call, c->device);                                                       \
    } while (0)

int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    return atoi(v);
}

/* Per-slot bookkeeping of the last upload into a buffer. */
pyr_status_t note_writer(cuda_ctx_t *c, int slot, const void *ptr)
{
    int i = 0;
    while (i < c->nwriters && c->writers[i].ptr != ptr) i++;
    if (i == c->nwriters) {
        if (i == MAX_WRITERS) return PYR_OK; /* table full: copies fall back to a device sync */
        CU(cudaEventCreateWithFlags(&c->writers[i].ev, cudaEventDisableTiming));
        c->writers[i].ptr = ptr;
        c->nwriters++;
    }
    c->writers[i].slot = slot;
    CU(cudaEventRecord(c->writers[i].ev, c->stream[slot]));
    return PYR_OK;
}

pyr_status_t wait_writer(cuda_ctx_t *c, int slot, const void *ptr)
{
    for (int i = 0; i < c->nwriters; i++)
        if (c->writers[i].ptr == ptr) {
            if (c->writers[i].slot != slot) CU(cudaStreamWaitEvent(c->stream[slot], c->writers[i].ev, 0));
            return PYR_OK;
        }
    if (c->nwriters == MAX_WRITERS) CU(cudaDeviceSynchronize());
    return PYR_OK;
}

void forget_writer(cuda_ctx_t *c, const void *ptr)
{
    for (int i = 0; i < c->nwriters; i++)
        if (c->writers[i].ptr == ptr) {
            cudaEventDestroy(c->writers[i].ev);
            c->writers[i] = c->writers[--c->nwriters];
            return;
        }
}

/* The timeline (cuda_api.h): pairs of timing events around operations. */
struct span_rec_t {
    cudaEvent_t a, b;
    int kind, slot;
};
span_rec_t *g_tl = NULL;
int g_tl_cap = 0, g_tl_n = 0;

/* Returns the index of the record to close with span_end, or -1. */
int span_begin(cuda_ctx_t *c, int kind, int slot)
{
    if (!g_tl || g_tl_n >= g_tl_cap) return -1;
    span_rec_t *r = &g_tl[g_tl_n];
    if (cudaEventCreate(&r->a) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    if (cudaEventCreate(&r->b) != cudaSuccess || cudaEventRecord(r->a, c->stream[slot]) != cudaSuccess) {
        (void)cudaGetLastError();
        cudaEventDestroy(r->a);
        if (r->b) cudaEventDestroy(r->b);
        r->a = r->b = NULL;
        return -1;
    }
    r->kind = kind;
    r->slot = slot;
    return g_tl_n++;
}

void span_end(cuda_ctx_t *c, int i, int slot)
{
    if (i >= 0 && cudaEventRecord(g_tl[i].b, c->stream[slot]) != cudaSuccess) (void)cudaGetLastError();
}

/* Serial mode: finish the operation and charge its time. */
pyr_status_t serial_end(cuda_ctx_t *c, int slot, double t0, double *acc)
{
    if (!g_serial) return PYR_OK;
    CU(cudaStreamSynchronize(c->stream[slot]));
    *acc += now_s() - t0;
    return PYR_OK;
}

/* Streams are made on first use, so a context made only to plan costs little. */
pyr_status_t check_slot(cuda_ctx_t *c, int slot)
{
    if (slot < 0 || slot >= SLOTS) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: slot %d out of range 0..%d", slot, SLOTS - 1);
    if (!c->stream[slot]) {
        CU(cudaSetDevice(c->device));
        CU(cudaStreamCreateWithFlags(&c->stream[slot], cudaStreamNonBlocking));
    }
    return PYR_OK;
}

pyr_klayout_t layout_of(const pyr_piece_t *p)
{
    pyr_klayout_t L;
    L.pitch = p->pitch;
    L.rows = (int)pyr_box_extent(&p->box, 1);
    L.planes = (int)pyr_box_extent(&p->box, 2);
    return L;
}

/* A grid box in the piece's local coordinates. */
pyr_kbox_t local_box(const pyr_piece_t *p, const pyr_box_t *b)
{
    pyr_kbox_t k;
    k.lo[0] = (int)(p->xpad + b->lo[0] - p->box.lo[0]);
    k.hi[0] = (int)(p->xpad + b->hi[0] - p->box.lo[0]);
    for (int a = 1; a < 3; a++) {
        k.lo[a] = (int)(b->lo[a] - p->box.lo[a]);
        k.hi[a] = (int)(b->hi[a] - p->box.lo[a]);
    }
    return k;
}

/* ------------------------------------------------------------ lifecycle */

pyr_status_t probe_devices(int *count)
{
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e == cudaSuccess && *count > 0) return PYR_OK;
    (void)cudaGetLastError();
    *count = 0;
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    (void)cudaGetLastError();
    if (e == cudaErrorInsufficientDriver && driver == 0)
        return pyr_fail(PYR_ERR_NODEVICE, "backend = cuda: no NVIDIA driver found (no GPU on this machine?); use backend = cpu (or auto)");
    if (e == cudaErrorInsufficientDriver)
        return pyr_fail(PYR_ERR_NODEVICE,
                        "backend = cuda: the NVIDIA driver is older than this build's CUDA runtime %d.%d needs; update the driver, "
                        "or use backend = cpu",
                        CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
    if (e == cudaSuccess || e == cudaErrorNoDevice)
        return pyr_fail(PYR_ERR_NODEVICE, "backend = cuda: no CUDA GPU found on this machine; use backend = cpu (or auto)");
    return pyr_fail(PYR_ERR_NODEVICE, "backend = cuda: the CUDA driver could not be used (%s); use backend = cpu",
                    cudaGetErrorString(e));
}

void cuda_destroy(void *ctx);

pyr_status_t cuda_create(const pyr_options_t *o, pyr_precision_t precision, void **out)
{
    *out = NULL;
    int count = 0;
    PYR_TRY(probe_devices(&count));
    int device = o ? o->device : 0;
    if (device < 0 || device >= count)
        return count == 1 ? pyr_fail(PYR_ERR_NODEVICE, "run.device = %d: this machine has 1 GPU (device 0); use device = 0", device)
                          : pyr_fail(PYR_ERR_NODEVICE, "run.device = %d: this machine has %d GPUs (devices 0 to %d); use one of those",
                                     device, count, count - 1);
    cuda_ctx_t *c = (cuda_ctx_t *)calloc(1, sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    c->device = device;
    c->precision = precision;
    c->elem = pyr_precision_size(precision);
    pyr_status_t st = PYR_OK;
    do {
        cudaError_t e = cudaSetDevice(device);
        if (e != cudaSuccess) {
            st = fail_cuda(e, "cudaSetDevice", device);
            break;
        }
        /* What is learnt about a device once (properties, whether our
         * kernels run on it) is kept for the process. */
        static struct {
            int known, sms;
            char name[256];
        } seen[64];
        if (device < 64 && seen[device].known) {
            snprintf(c->name, sizeof c->name, "%s", seen[device].name);
            c->tune.sms = seen[device].sms;
        } else {
            cudaDeviceProp prop;
            e = cudaGetDeviceProperties(&prop, device);
            if (e != cudaSuccess) {
                st = fail_cuda(e, "cudaGetDeviceProperties", device);
                break;
            }
            snprintf(c->name, sizeof c->name, "%s", prop.name);
            cudaFuncAttributes fa;
            e = cudaFuncGetAttributes(&fa, pyr_k_probe_symbol());
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                st = pyr_fail(PYR_ERR_NODEVICE,
                              "GPU %d (%s, compute capability %d.%d) cannot run this build's kernels (%s); rebuild with "
                              "-DCMAKE_CUDA_ARCHITECTURES=%d%d, or use backend = cpu",
                              device, prop.name, prop.major, prop.minor, cudaGetErrorString(e), prop.major, prop.minor);
                break;
            }
            c->tune.sms = prop.multiProcessorCount;
            if (device < 64) {
                seen[device].sms = prop.multiProcessorCount;
                snprintf(seen[device].name, sizeof seen[device].name, "%s", prop.name);
                seen[device].known = 1;
            }
        }
        c->tune.kmax2d = env_int("PYR_CUDA_K2D", 5);
        /* 3D: three steps per launch in shared memory.  As fast in core as the one-step streaming
         * kernel (355 vs 350 Gcell/s), and beside a pass's copies far better: the streaming kernel's
         * L2 traffic starves the host-to-device copy engine (cube uploads at ~32 GB/s instead of ~50;
         * bench/NOTES-cuda.md v6). */
        c->tune.kmax3d = env_int("PYR_CUDA_K3D", 3);
        c->tune.nt2d = env_int("PYR_CUDA_NT2D", 256);
        c->tune.nty3d = env_int("PYR_CUDA_NTY3D", 32);
        c->tune.stream3d = env_int("PYR_CUDA_STREAM3D", 1);
        c->plain = env_int("PYR_CUDA_PLAIN", 0);
        if (c->tune.kmax2d < 1 || c->tune.kmax2d > PYR_CUDA_KMAX || !(c->tune.kmax2d & 1)) c->tune.kmax2d = 5;
        if (c->tune.kmax3d < 1 || c->tune.kmax3d > 5 || !(c->tune.kmax3d & 1)) c->tune.kmax3d = 3;
        if (c->tune.nt2d != 128 && c->tune.nt2d != 256) c->tune.nt2d = 256;
        if (c->tune.nty3d < 8 || c->tune.nty3d > 32) c->tune.nty3d = 32;
    } while (0);
    if (st != PYR_OK) {
        cuda_destroy(c);
        return st;
    }
    *out = c;
    return PYR_OK;
}

void cuda_destroy(void *ctx)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    if (!c) return;
    cudaSetDevice(c->device);
    for (int s = 0; s < SLOTS; s++)
        if (c->stream[s]) {
            cudaStreamSynchronize(c->stream[s]);
            cudaStreamDestroy(c->stream[s]);
        }
    for (int s = 0; s < SLOTS; s++)
        for (int m = 0; m < PYR_MARKS; m++)
            if (c->marks[s][m]) cudaEventDestroy(c->marks[s][m]);
    for (int i = 0; i < c->nwriters; i++) cudaEventDestroy(c->writers[i].ev);
    for (int i = 0; i < c->nregistered; i++) cudaHostUnregister(c->registered[i]);
    (void)cudaGetLastError();
    free(c);
}

pyr_status_t cuda_mem_info(void *ctx, uint64_t *fr, uint64_t *total)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    size_t f = 0, t = 0;
    CU(cudaSetDevice(c->device));
    CU(cudaMemGetInfo(&f, &t));
    *fr = f;
    *total = t;
    return PYR_OK;
}

/* --------------------------------------------------------------- memory */

pyr_status_t cuda_dev_alloc(void *ctx, size_t bytes, void **ptr)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    *ptr = NULL;
    if (bytes == 0) bytes = 256;
    CU(cudaSetDevice(c->device));
    cudaError_t e;
    if (g_fail_alloc > 0 && --g_fail_alloc == 0) e = cudaErrorMemoryAllocation; /* injected (tests) */
    else e = cudaMalloc(ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *ptr = NULL;
        size_t f = 0, t = 0;
        if (cudaMemGetInfo(&f, &t) != cudaSuccess) (void)cudaGetLastError();
        return pyr_fail(PYR_ERR_DEVICE_NOMEM,
                        "GPU %d (%s): out of device memory allocating %.1f MiB (%.1f MiB free of %.1f MiB; another program may "
                        "be using the GPU); use a memory budget below the free memory (run.memory <= %.0f MiB, or memory = auto)",
                        c->device, c->name, (double)bytes / 1048576.0, (double)f / 1048576.0, (double)t / 1048576.0,
                        (double)f / 1048576.0 * 0.9);
    }
    if (e != cudaSuccess) return fail_cuda(e, "cudaMalloc", c->device);
    return PYR_OK;
}

void cuda_dev_free(void *ctx, void *ptr)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    if (!ptr) return;
    forget_writer(c, ptr);
    cudaSetDevice(c->device);
    if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();
}

pyr_status_t cuda_host_alloc(void *ctx, size_t bytes, void **ptr)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    *ptr = NULL;
    if (bytes == 0) bytes = 64;
    CU(cudaSetDevice(c->device));
    cudaError_t e = cudaMallocHost(ptr, bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        *ptr = NULL;
        return pyr_fail(PYR_ERR_NOMEM, "out of pinned host memory allocating %.1f MiB (%s); use a smaller memory budget",
                        (double)bytes / 1048576.0, cudaGetErrorString(e));
    }
    return PYR_OK;
}

void cuda_host_free(void *ctx, void *ptr)
{
    (void)ctx;
    if (ptr && cudaFreeHost(ptr) != cudaSuccess) (void)cudaGetLastError();
}

/* Pin the user's grid so copies run at full PCIe speed.  When the system
 * refuses (locked-memory limits), copies still work from pageable memory,
 * only slower. */
pyr_status_t cuda_host_register(void *ctx, void *ptr, size_t bytes)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    if (!ptr || bytes == 0) return PYR_OK;
    CU(cudaSetDevice(c->device));
    cudaError_t e = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
    if (e == cudaSuccess) {
        if (c->nregistered < (int)(sizeof c->registered / sizeof c->registered[0])) c->registered[c->nregistered++] = ptr;
        else cudaHostUnregister(ptr);
        return PYR_OK;
    }
    (void)cudaGetLastError(); /* already registered by the caller, or not allowed: fine either way */
    return PYR_OK;
}

void cuda_host_unregister(void *ctx, void *ptr)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    for (int i = 0; i < c->nregistered; i++)
        if (c->registered[i] == ptr) {
            cudaSetDevice(c->device);
            if (cudaHostUnregister(ptr) != cudaSuccess) (void)cudaGetLastError();
            c->registered[i] = c->registered[--c->nregistered];
            return;
        }
}

/* ------------------------------------------------------------ transfers */

/* Copy `box` between a host region and a piece layer. */
pyr_status_t transfer(cuda_ctx_t *c, int slot, const pyr_piece_t *piece, void *layer, const pyr_host_region_t *host,
                      const pyr_box_t *box, int to_device)
{
    if (pyr_box_empty(box)) return PYR_OK;
    const size_t elem = c->elem;
    const int64_t w = pyr_box_extent(box, 0), ny = pyr_box_extent(box, 1), nz = pyr_box_extent(box, 2);
    const int64_t hnx = pyr_box_extent(&host->box, 0), hny = pyr_box_extent(&host->box, 1);
    const int64_t prow = pyr_box_extent(&piece->box, 1);
    char *h = (char *)host->data + (((box->lo[2] - host->box.lo[2]) * hny + (box->lo[1] - host->box.lo[1])) * hnx +
                                    (box->lo[0] - host->box.lo[0])) *
                                       (int64_t)elem;
    char *d = (char *)layer + pyr_piece_index(piece, box->lo[0], box->lo[1], box->lo[2]) * (int64_t)elem;
    cudaStream_t s = c->stream[slot];
    const size_t hp = (size_t)hnx * elem, dp = (size_t)piece->pitch * elem, wb = (size_t)w * elem;
    if (ny == 1 && nz == 1) {
        if (to_device) CU(cudaMemcpyAsync(d, h, wb, cudaMemcpyHostToDevice, s));
        else CU(cudaMemcpyAsync(h, d, wb, cudaMemcpyDeviceToHost, s));
    } else if (nz == 1 || (ny == hny && ny == prow)) {
        /* one 2D copy: rows of consecutive planes follow each other on both sides */
        size_t rows = (size_t)(ny * nz);
        if (to_device) CU(cudaMemcpy2DAsync(d, dp, h, hp, wb, rows, cudaMemcpyHostToDevice, s));
        else CU(cudaMemcpy2DAsync(h, hp, d, dp, wb, rows, cudaMemcpyDeviceToHost, s));
    } else {
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        cudaPitchedPtr hpp = make_cudaPitchedPtr(h, hp, wb, (size_t)hny);
        cudaPitchedPtr dpp = make_cudaPitchedPtr(d, dp, wb, (size_t)prow);
        p.extent = make_cudaExtent(wb, (size_t)ny, (size_t)nz);
        if (to_device) {
            p.srcPtr = hpp;
            p.dstPtr = dpp;
            p.kind = cudaMemcpyHostToDevice;
        } else {
            p.srcPtr = dpp;
            p.dstPtr = hpp;
            p.kind = cudaMemcpyDeviceToHost;
        }
        CU(cudaMemcpy3DAsync(&p, s));
    }
    return PYR_OK;
}

pyr_status_t cuda_upload(void *ctx, int slot, const pyr_piece_t *piece, const pyr_host_region_t *host, const pyr_box_t *box)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    double t0 = now_s();
    CU(cudaSetDevice(c->device));
    const int span = span_begin(c, PYR_SPAN_UPLOAD, slot);
    PYR_TRY(transfer(c, slot, piece, piece->layer[0], host, box, 1));
    span_end(c, span, slot);
    g_stats.issue_upload_s += now_s() - t0;
    PYR_TRY(note_writer(c, slot, piece->layer[0]));
    return serial_end(c, slot, t0, &g_stats.upload_s);
}

pyr_status_t cuda_download(void *ctx, int slot, const pyr_piece_t *piece, const pyr_host_region_t *host, const pyr_box_t *box)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    double t0 = now_s();
    CU(cudaSetDevice(c->device));
    const int span = span_begin(c, PYR_SPAN_DOWNLOAD, slot);
    PYR_TRY(transfer(c, slot, piece, piece->layer[piece->cur], host, box, 0));
    span_end(c, span, slot);
    g_stats.issue_download_s += now_s() - t0;
    /* a band goes to a staging buffer of exactly its size (the grid is larger) */
    const double before = g_stats.download_s;
    PYR_TRY(serial_end(c, slot, t0, &g_stats.download_s));
    if (pyr_box_contains(box, &host->box)) g_stats.download_band_s += g_stats.download_s - before;
    return PYR_OK;
}

pyr_status_t cuda_copy(void *ctx, int slot, const pyr_piece_t *dst, int dst_layers, const pyr_piece_t *src, int src_layer,
                       const pyr_box_t *box)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    if (pyr_box_empty(box)) return PYR_OK;
    if (!pyr_box_contains(&src->box, box) || !pyr_box_contains(&dst->box, box))
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: copy box outside its pieces");
    double t0 = g_serial ? now_s() : 0;
    CU(cudaSetDevice(c->device));
    const void *s = src->layer[src_layer];
    PYR_TRY(wait_writer(c, slot, s));
    void *d0 = (dst_layers & 1) && dst->layer[0] != s ? dst->layer[0] : NULL;
    void *d1 = (dst_layers & 2) && dst->layer[1] != s ? dst->layer[1] : NULL;
    pyr_klayout_t SL = layout_of(src), DL = layout_of(dst);
    pyr_kbox_t sb = local_box(src, box), db = local_box(dst, box);
    CU(pyr_k_copy_box(c->elem, s, &SL, &sb, d0, d1, &DL, &db, c->stream[slot]));
    return serial_end(c, slot, t0, &g_stats.copy_s);
}

/* ------------------------------------------------------------- compute */

/* Whether boxes[0..n-1] can be computed by fused launches: all non-empty,
 * inside the piece less its edge, and each nested in the one before with
 * every side either one node in or (at the piece edge) unchanged. */
int fusable(const pyr_piece_t *piece, const pyr_box_t *boxes, int n, int dims)
{
    for (int l = 0; l < n; l++) {
        if (pyr_box_empty(&boxes[l])) return 0;
        if (l == 0) continue;
        const pyr_box_t *b0 = &boxes[l - 1], *b1 = &boxes[l];
        for (int a = 0; a < dims; a++) {
            int lo_ok = b1->lo[a] >= b0->lo[a] + 1 || (b1->lo[a] == b0->lo[a] && b0->lo[a] == piece->box.lo[a] + 1);
            int hi_ok = b1->hi[a] <= b0->hi[a] - 1 || (b1->hi[a] == b0->hi[a] && b0->hi[a] == piece->box.hi[a] - 1);
            if (!lo_ok || !hi_ok || b1->hi[a] <= b1->lo[a]) return 0;
        }
    }
    return 1;
}

pyr_status_t cuda_compute(void *ctx, int slot, const pyr_piece_t *piece, const pyr_heat_coef_t *coef, const pyr_box_t *boxes,
                          int nlayers)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    if (nlayers <= 0) return PYR_OK;
    const int dims = coef->dims;
    /* Every box must lie inside the piece less its edge (the stencil reads one node further). */
    for (int l = 0; l < nlayers; l++) {
        if (pyr_box_empty(&boxes[l])) continue;
        for (int a = 0; a < 3; a++) {
            int64_t in = a < dims ? 1 : 0;
            if (boxes[l].lo[a] < piece->box.lo[a] + in || boxes[l].hi[a] > piece->box.hi[a] - in)
                return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: layer %d box outside its piece", l);
        }
    }
    double t0 = g_serial ? now_s() : 0;
    CU(cudaSetDevice(c->device));
    cudaStream_t s = c->stream[slot];
    pyr_klayout_t L = layout_of(piece);
    int cur = piece->cur;
    /* the fused kernels move 16-byte vectors: rows must start 16-byte aligned */
    const int aligned = (piece->pitch * (int64_t)c->elem) % 16 == 0 && ((uintptr_t)piece->layer[0] % 16) == 0 &&
                        ((uintptr_t)piece->layer[1] % 16) == 0;
    const int span = span_begin(c, PYR_SPAN_COMPUTE, slot);
    if (dims == 1 || c->plain || !aligned || !fusable(piece, boxes, nlayers, dims)) {
        for (int l = 0; l < nlayers; l++) {
            pyr_kbox_t b = local_box(piece, &boxes[l]);
            CU(pyr_k_step_plain(c->elem, dims, piece->layer[cur], piece->layer[cur ^ 1], &L, &b, coef->r, s));
            g_stats.launches++;
            cur ^= 1;
        }
        span_end(c, span, slot);
        return serial_end(c, slot, t0, &g_stats.compute_s);
    }
    /* Fused launches of odd k (so each goes from one layer to the other):
     * count with the parity of nlayers, sizes as equal as possible. */
    const int kmax = dims == 2 ? c->tune.kmax2d : c->tune.kmax3d;
    int count = (nlayers + kmax - 1) / kmax;
    if ((count ^ nlayers) & 1) count++;
    const int pairs = (nlayers - count) / 2, q = pairs / count, extra = pairs % count;
    pyr_kbox_t kb[PYR_CUDA_KMAX];
    int done = 0;
    for (int i = 0; i < count; i++) {
        const int k = 1 + 2 * (q + (i < extra ? 1 : 0));
        for (int l = 0; l < k; l++) kb[l] = local_box(piece, &boxes[done + l]);
        CU(pyr_k_fused(c->elem, dims, piece->layer[cur], piece->layer[cur ^ 1], &L, kb, k, coef->r, &c->tune, s));
        g_stats.launches++;
        cur ^= 1;
        done += k;
    }
    if (done != nlayers) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: split %d layers into launches of %d", nlayers, done);
    span_end(c, span, slot);
    return serial_end(c, slot, t0, &g_stats.compute_s);
}

pyr_status_t cuda_wait(void *ctx, int slot)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    if (slot < 0 || slot >= SLOTS || !c->stream[slot]) return PYR_OK; /* nothing was issued */
    CU(cudaSetDevice(c->device));
    cudaError_t e = cudaStreamSynchronize(c->stream[slot]);
    if (e != cudaSuccess) return fail_cuda(e, "a queued GPU operation (cudaStreamSynchronize)", c->device);
    return PYR_OK;
}

static pyr_status_t check_mark(int which)
{
    if (which < 0 || which >= PYR_MARKS) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: mark %d does not exist", which);
    return PYR_OK;
}

pyr_status_t cuda_mark(void *ctx, int slot, int which)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    PYR_TRY(check_mark(which));
    CU(cudaSetDevice(c->device));
    cudaEvent_t *ev = &c->marks[slot][which];
    if (!*ev) CU(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
    CU(cudaEventRecord(*ev, c->stream[slot]));
    return PYR_OK;
}

pyr_status_t cuda_after_mark(void *ctx, int slot, int other, int which)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    PYR_TRY(check_slot(c, other));
    PYR_TRY(check_mark(which));
    if (other == slot || !c->marks[other][which]) return PYR_OK; /* in order already / nothing marked */
    CU(cudaSetDevice(c->device));
    CU(cudaStreamWaitEvent(c->stream[slot], c->marks[other][which], 0));
    return PYR_OK;
}

} // namespace

/* ------------------------------------------------------------ C entry points */

extern "C" int pyr_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" pyr_status_t pyr_cuda_describe(int device, char *text, size_t size)
{
    int count = 0;
    PYR_TRY(probe_devices(&count));
    if (device < 0 || device >= count)
        return pyr_fail(PYR_ERR_NODEVICE, "GPU %d does not exist: this machine has %d GPU%s", device, count, count == 1 ? "" : "s");
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) return fail_cuda(e, "cudaGetDeviceProperties", device);
    int prev = 0;
    size_t fr = 0, total = prop.totalGlobalMem;
    int have_free = 0;
    if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(device) == cudaSuccess && cudaMemGetInfo(&fr, &total) == cudaSuccess)
        have_free = 1;
    (void)cudaGetLastError();
    cudaSetDevice(prev);
    const double gib = 1024.0 * 1024.0 * 1024.0;
    if (have_free)
        snprintf(text, size, "%s, %.1f GiB (%.1f GiB free), compute capability %d.%d, %d SMs", prop.name, (double)total / gib,
                 (double)fr / gib, prop.major, prop.minor, prop.multiProcessorCount);
    else
        snprintf(text, size, "%s, %.1f GiB, compute capability %d.%d, %d SMs", prop.name, (double)total / gib, prop.major, prop.minor,
                 prop.multiProcessorCount);
    return PYR_OK;
}

extern "C" void pyr_cuda_set_serial(int on) { g_serial = on; }
extern "C" void pyr_cuda_get_stats(pyr_cuda_stats_t *stats) { *stats = g_stats; }
extern "C" void pyr_cuda_reset_stats(void) { memset(&g_stats, 0, sizeof g_stats); }
extern "C" void pyr_cuda_timeline_start(int cap)
{
    (void)pyr_cuda_timeline_take(NULL, 0);
    g_tl = cap > 0 ? (span_rec_t *)calloc((size_t)cap, sizeof *g_tl) : NULL;
    g_tl_cap = g_tl ? cap : 0;
    g_tl_n = 0;
}

extern "C" int pyr_cuda_timeline_take(pyr_cuda_span_t *spans, int max)
{
    int n = 0, failed = 0;
    /* every time is taken from the first start event: destroy none before all are read */
    for (int i = 0; spans && i < g_tl_n && n < max; i++) {
        float s = 0, e = 0;
        cudaError_t err = cudaEventSynchronize(g_tl[i].b);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&s, g_tl[0].a, g_tl[i].a);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&e, g_tl[0].a, g_tl[i].b);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            if (failed++ == 0) fprintf(stderr, "timeline: span %d of %d unreadable: %s\n", i, g_tl_n, cudaGetErrorString(err));
            continue;
        }
        spans[n].kind = g_tl[i].kind;
        spans[n].slot = g_tl[i].slot;
        spans[n].start_ms = s;
        spans[n].end_ms = e;
        n++;
    }
    for (int i = 0; i < g_tl_n; i++) {
        cudaEventDestroy(g_tl[i].a);
        cudaEventDestroy(g_tl[i].b);
    }
    (void)cudaGetLastError();
    free(g_tl);
    g_tl = NULL;
    g_tl_cap = g_tl_n = 0;
    return n;
}

extern "C" void pyr_cuda_fail_alloc_after(int n) { g_fail_alloc = n > 0 ? n : 0; }

/* Filled by field name, so new fields of the interface default to zero. */
static pyr_backend_ops_t make_ops(void)
{
    pyr_backend_ops_t o;
    memset(&o, 0, sizeof o);
    o.name = "cuda";
    o.kind = PYR_BACKEND_CUDA;
    o.slots = SLOTS;
    o.default_slots = SLOTS;
    o.concurrent = 1;
    o.pitch_align_bytes = 128; /* rows start 16-byte aligned for vector loads (and on cache lines) */
    o.xpad_align_bytes = 0;
    o.create = cuda_create;
    o.destroy = cuda_destroy;
    o.mem_info = cuda_mem_info;
    o.dev_alloc = cuda_dev_alloc;
    o.dev_free = cuda_dev_free;
    o.host_alloc = cuda_host_alloc;
    o.host_free = cuda_host_free;
    o.host_register = cuda_host_register;
    o.host_unregister = cuda_host_unregister;
    o.upload = cuda_upload;
    o.copy = cuda_copy;
    o.compute = cuda_compute;
    o.download = cuda_download;
    o.wait = cuda_wait;
    o.mark = cuda_mark;
    o.after_mark = cuda_after_mark;
    return o;
}

extern "C" const pyr_backend_ops_t pyr_backend_cuda = make_ops();
