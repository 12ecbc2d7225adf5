/* The CUDA runtime's contexts and helpers, shared by the runtime (device.cu)
 * and everything that runs on it: the kernels registered for this backend
 * (kernels_*.cu) and the features' CUDA code (frames, line Gauss-Seidel, the
 * long-vector method).  C++; only .cu files include CUDA headers.
 *
 * Two levels, both owned by the runtime through the context cache
 * (backend/device.h, session.c):
 *   device_t  what every context of one GPU shares: what was learnt about it,
 *             the tests' hooks and counters, and pools (contexts given back,
 *             pinned staging chunks, cuBLAS handles) that outlive one user;
 *   ctx_t     one user's (a plan's, a calibration's, a pipeline's): its
 *             queues (a stream per slot and lane), marks and bookkeeping.
 *             Streams stay per context, so that two plans on one GPU driven
 *             from two threads neither serialise nor see each other's marks.
 * A context holds no kernel's or method's own data: those keep theirs in
 * the context's states (state_of / state_keep), freed when it is given back. */
#ifndef PYR_BACKEND_CUDA_INTERNAL_CUH
#define PYR_BACKEND_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <mutex>

extern "C" {
#include "backend/device.h"
#include "backend/kernels.h"
#include "core/error.h"
}
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_errors.cuh"
#include "backend/cuda/cuda_libs.h"

#define PYR_CUDA_SLOTS 3
#define PYR_CUDA_LANES 1 /* device.h: a queue for copies beside the slots' kernels */
#define PYR_CUDA_QUEUES (PYR_CUDA_SLOTS + PYR_CUDA_LANES)
#define PYR_CUDA_MAX_WRITERS 32
#define PYR_CUDA_STATES 4       /* kernels' and methods' states per context */
#define PYR_CUDA_POOLED_STAGE 12 /* pinned staging chunks a device keeps between users */
#define PYR_CUDA_POOLED_BLAS 8   /* cuBLAS handles a device keeps between users */

namespace pyrcu {

/* The counters of cuda_api.h (pyr_cuda_stats_t): times in nanoseconds.
 * Every context of the device adds to them, from the threads of several
 * parts at once. */
struct stats_t {
    std::atomic<long long> upload_ns{0}, copy_ns{0}, compute_ns{0}, download_ns{0}, download_band_ns{0};
    std::atomic<long long> launches{0}, fused3d_z{0}, fused3d_y{0}, saves3d_z{0}, saves3d_y{0}, fills3d_z{0}, fills3d_y{0};
    std::atomic<long long> issue_upload_ns{0}, issue_download_ns{0};
};
inline void count(std::atomic<long long> &n, long long by = 1) { n.fetch_add(by, std::memory_order_relaxed); }

/* The timeline (cuda_api.h): timing events around an operation. */
struct span_rec_t {
    cudaEvent_t a, b;
    int kind, slot;
};

struct ctx_t;

/* What every context of one GPU shares (the runtime's open; kept for the
 * process, its pools emptied by idle when the device's last holder goes). */
struct device_t {
    int device;
    int sms; /* multiprocessors: launches are planned in waves of resident blocks */
    int cooperative; /* cooperative launches (a grid-wide sync) */
    char name[256];
    /* the tests' and benchmarks' hooks (cuda_api.h): they act on every context of the device */
    std::atomic<int> serial{0};        /* every operation waits for itself and is timed */
    std::atomic<int> force_stream{-1}; /* the axis 3D fused launches stream (launch_tiles3d.h), -1: their choice */
    std::atomic<int> fail_alloc{0};    /* the n-th device allocation from now fails */
    stats_t stats;
    std::atomic<int> timeline_on{0};
    std::mutex lock; /* guards what follows */
    span_rec_t *tl = nullptr;
    int tl_cap = 0, tl_n = 0;
    ctx_t *given_back = nullptr; /* contexts released, for the next create */
    char *stage[PYR_CUDA_POOLED_STAGE] = {};
    int nstage = 0;
    const cublas_api_t *blas_api = nullptr;
    cublasHandle_t blas[PYR_CUDA_POOLED_BLAS] = {};
    int nblas = 0;
    unsigned char peer[64] = {}; /* peer access to GPU i asked for */
};

/* A kernel's or method's data kept in a context, found by its owner's key. */
struct state_t {
    const void *key;
    void *data;
    void (*free)(ctx_t *c, void *data);
};

struct writer_t {
    const void *ptr;
    cudaEvent_t ev;
    int slot;
};

/* One user's context (the runtime's create; plain data, pooled by device_t). */
struct ctx_t {
    int device;
    pyr_device_t *held; /* the cache's entry of the device, held while the context is out */
    device_t *dev;      /* its shared state */
    pyr_precision_t precision;
    size_t elem;
    int sms;
    cudaStream_t stream[PYR_CUDA_QUEUES];          /* the slots', then the lanes' (made on first use) */
    cudaEvent_t marks[PYR_CUDA_QUEUES][PYR_MARKS]; /* mark(): events per queue and kind, recorded again at each mark */
    writer_t writers[PYR_CUDA_MAX_WRITERS];
    int nwriters;
    void *registered[32]; /* host ranges we registered (to unregister): a scheme's fields */
    int nregistered;
    /* reduce_change: a device word per slot, its pinned host copy, and where wait() delivers it */
    unsigned long long *red_dev;  /* PYR_CUDA_SLOTS words */
    unsigned long long *red_host; /* PYR_CUDA_SLOTS words, pinned */
    double *red_out[PYR_CUDA_SLOTS];
    /* copies from and to pageable host memory (an unregistered grid: run.host_memory = stage, or
     * registering failed) go through two pinned chunks per slot, from the device's pool on first use */
    char *stage[PYR_CUDA_SLOTS][2];
    cudaEvent_t stage_ev[PYR_CUDA_SLOTS][2];
    state_t state[PYR_CUDA_STATES];
    int nstates;
    ctx_t *next; /* in the device's list of contexts given back */
};

double now_s(void);
/* Streams are made on first use, so a context made only to plan costs little. */
pyr_status_t check_slot(ctx_t *c, int slot);
/* A slot or a lane (copies, marks, waits). */
pyr_status_t check_queue(ctx_t *c, int q);
/* Serial mode (cuda_api.h): on for the context's device. */
inline bool serial(const ctx_t *c) { return c->dev->serial.load(std::memory_order_relaxed) != 0; }
/* Serial mode: finish the operation and add its time to *acc (and *also). */
pyr_status_t serial_end(ctx_t *c, int slot, double t0, std::atomic<long long> *acc, std::atomic<long long> *also = nullptr);
/* The timeline (cuda_api.h): returns the record to close with span_end, or -1. */
int span_begin(ctx_t *c, int kind, int slot);
void span_end(ctx_t *c, int i, int slot);
/* An operation issued on `slot` wrote the buffer at ptr: another slot's copy out of it waits for
 * it, as for an upload (device.h copy). */
pyr_status_t note_writer_of(ctx_t *c, int slot, const void *ptr);
/* The state kept under `key`, or NULL. */
void *state_of(ctx_t *c, const void *key);
/* Keep `data` under `key` until the context is given back, then free(c, data). */
pyr_status_t state_keep(ctx_t *c, const void *key, void *data, void (*free)(ctx_t *c, void *data));
/* A cuBLAS handle of the context's device (from its pool, else made; cuBLAS loaded on first use: `user` and
 * `instead` are for the message when it cannot be), and its table; give it back with blas_give. */
pyr_status_t blas_take(ctx_t *c, const cublas_api_t **api, cublasHandle_t *handle, const char *user, const char *instead);
void blas_give(ctx_t *c, cublasHandle_t handle);

} // namespace pyrcu

/* fill.cu: fill of the runtime (a field's values made on the device from a recipe). */
extern "C" pyr_status_t pyr_cuda_fill(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_recipe_t *recipe,
                                      const double *const tab[3], const pyr_box_t *box);

/* peer.cu: copy_peer of the runtime (several GPUs of one process, exec/parts.c). */
extern "C" pyr_status_t pyr_cuda_copy_peer(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, void *src_ctx,
                                           const pyr_piece_t *src, int src_layer, const pyr_box_t *box);

#endif
