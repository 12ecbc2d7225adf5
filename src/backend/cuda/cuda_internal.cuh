/* The CUDA runtime's context and helpers, shared by the runtime
 * (device.cu) and the kernels registered for this backend (kernels_*.cu).
 * C++; only this folder includes CUDA headers. */
#ifndef PYR_BACKEND_CUDA_INTERNAL_CUH
#define PYR_BACKEND_CUDA_INTERNAL_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "backend/device.h"
#include "backend/kernels.h"
#include "core/error.h"
}
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_libs.h"

#define PYR_CUDA_SLOTS 3
#define PYR_CUDA_LANES 1 /* device.h: a queue for copies beside the slots' kernels */
#define PYR_CUDA_QUEUES (PYR_CUDA_SLOTS + PYR_CUDA_LANES)
#define PYR_CUDA_MAX_WRITERS 32

namespace pyrcu {

struct writer_t {
    const void *ptr;
    cudaEvent_t ev;
    int slot;
};

struct ctx_t {
    int device;
    pyr_precision_t precision;
    size_t elem;
    int sms; /* multiprocessors: launches are planned in waves of resident blocks */
    cudaStream_t stream[PYR_CUDA_QUEUES]; /* the slots', then the lanes' */
    cudaEvent_t marks[PYR_CUDA_QUEUES][PYR_MARKS]; /* mark(): events per queue and kind, recorded again at each mark */
    writer_t writers[PYR_CUDA_MAX_WRITERS];
    int nwriters;
    void *registered[32]; /* host ranges we registered (to unregister): a scheme's fields */
    int nregistered;
    /* reduce_change: a device word per slot, its pinned host copy, and where wait() delivers it */
    unsigned long long *red_dev;  /* PYR_CUDA_SLOTS words */
    unsigned long long *red_host; /* PYR_CUDA_SLOTS words, pinned */
    double *red_out[PYR_CUDA_SLOTS];
    char name[256];
    /* the heat kernel's longvector variant (longvector.cu): cuBLAS (loaded on first use, cuda_libs.h),
     * the handle, made on first use and destroyed with the context, and its work memory */
    const cublas_api_t *blas_api;
    cublasHandle_t blas;
    void *lv_scratch;
    size_t lv_scratch_bytes;
    /* a read-only table of the scheme's (pyr_coef_t.aux: Maxwell's CPML
     * profiles), uploaded once per plan (the plan owns ctx and table alike) */
    const double *table_src;
    int64_t table_n;
    double *table_dev;
    /* copies from and to pageable host memory (an unregistered grid: run.host_memory = stage, or
     * registering failed) go through two pinned chunks per slot, made on first use (device.cu) */
    char *stage[PYR_CUDA_SLOTS][2];
    cudaEvent_t stage_ev[PYR_CUDA_SLOTS][2];
};

/* Process-wide test hooks (cuda_api.h). */
extern int g_serial;
extern int g_force_stream; /* pyr_cuda_force_stream */
extern pyr_cuda_stats_t g_stats;

double now_s(void);
pyr_status_t fail_cuda(cudaError_t e, const char *call, int device);
/* Streams are made on first use, so a context made only to plan costs little. */
pyr_status_t check_slot(ctx_t *c, int slot);
/* A slot or a lane (copies, marks, waits). */
pyr_status_t check_queue(ctx_t *c, int q);
/* Serial mode: finish the operation and charge its time. */
pyr_status_t serial_end(ctx_t *c, int slot, double t0, double *acc);
/* Destroy the context's cuBLAS handle and free the long-vector work memory (longvector.cu). */
void blas_release(ctx_t *c);
/* The timeline (cuda_api.h): returns the record to close with span_end, or -1. */
int span_begin(ctx_t *c, int kind, int slot);
void span_end(ctx_t *c, int i, int slot);
/* The device copy of the scheme's table `host` of n doubles (made on first use). */
pyr_status_t device_table(ctx_t *c, const double *host, int64_t n, const double **dev);

} // namespace pyrcu

/* peer.cu: copy_peer of the runtime (several GPUs of one process, exec/parts.c). */
extern "C" pyr_status_t pyr_cuda_copy_peer(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, void *src_ctx,
                                           const pyr_piece_t *src, int src_layer, const pyr_box_t *box);

#define PYR_CU(call)                                                                                                               \
    do {                                                                                                                           \
        cudaError_t cu_e_ = (call);                                                                                                \
        if (cu_e_ != cudaSuccess) return pyrcu::fail_cuda(cu_e_, #call, c->device);                                                \
    } while (0)

#endif
