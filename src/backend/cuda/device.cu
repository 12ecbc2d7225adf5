/* The CUDA runtime: device memory, pinned host memory, transfers, box copies
 * and reductions behind the runtime interface (src/backend/device.h); the
 * schemes' kernels are registered apart (kernels_*.cu).
 *
 * Contexts (cuda_internal.cuh): a context is one user's queues on a device
 * the context cache holds for it (backend/device.h); given back, it keeps its
 * streams, events and staging chunks for the device's next user (the next
 * MEASURE candidate, the next part), until the device's last holder goes.
 *
 * Streams: one per slot.  Every operation of a slot goes on its stream, so the
 * slot's upload -> prepare -> compute -> download run in order, while the
 * executor's three slots in flight overlap: piece i+1 uploads (host-to-device
 * copy engine) while piece i computes (SMs) and piece i-1 downloads
 * (device-to-host engine).  The only data shared between slots are the
 * resident boundary faces, uploaded once on slot 0: an event recorded after
 * every upload lets another slot's copy out of that buffer wait for it.
 *
 * Every CUDA call is checked (cuda_errors.cuh); failures become
 * PYR_ERR_DEVICE (the call and CUDA's message), PYR_ERR_DEVICE_NOMEM (sizes
 * and what to change) or PYR_ERR_NODEVICE (no GPU, driver too old: use
 * backend = cpu). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <new>

#include "backend/cuda/cuda_internal.cuh"
extern "C" {
#include "backend/host_copy.h"
}

#define SLOTS PYR_CUDA_SLOTS
#define MAX_WRITERS PYR_CUDA_MAX_WRITERS
#define CU PYR_CU

namespace pyrcu {

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

} // namespace pyrcu

using namespace pyrcu;

namespace {

typedef pyrcu::ctx_t cuda_ctx_t;

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

} // namespace

namespace pyrcu {

pyr_status_t note_writer_of(ctx_t *c, int slot, const void *ptr) { return note_writer(c, slot, ptr); }

/* Returns the index of the record to close with span_end, or -1. */
int span_begin(cuda_ctx_t *c, int kind, int slot)
{
    device_t *d = c->dev;
    if (!d->timeline_on.load(std::memory_order_relaxed)) return -1;
    std::lock_guard<std::mutex> hold(d->lock);
    if (!d->tl || d->tl_n >= d->tl_cap) return -1;
    span_rec_t *r = &d->tl[d->tl_n];
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
    return d->tl_n++;
}

void span_end(cuda_ctx_t *c, int i, int slot)
{
    if (i < 0) return;
    device_t *d = c->dev;
    std::lock_guard<std::mutex> hold(d->lock);
    if (d->tl && i < d->tl_n && cudaEventRecord(d->tl[i].b, c->stream[slot]) != cudaSuccess) (void)cudaGetLastError();
}

pyr_status_t serial_end(cuda_ctx_t *c, int slot, double t0, std::atomic<long long> *acc, std::atomic<long long> *also)
{
    if (!serial(c)) return PYR_OK;
    CU(cudaStreamSynchronize(c->stream[slot]));
    const long long ns = (long long)((now_s() - t0) * 1e9);
    count(*acc, ns);
    if (also) count(*also, ns);
    return PYR_OK;
}

pyr_status_t check_slot(cuda_ctx_t *c, int slot)
{
    if (slot < 0 || slot >= SLOTS) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: slot %d out of range 0..%d", slot, SLOTS - 1);
    return check_queue(c, slot);
}

pyr_status_t check_queue(cuda_ctx_t *c, int slot)
{
    if (slot < 0 || slot >= PYR_CUDA_QUEUES)
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: queue %d out of range 0..%d", slot, PYR_CUDA_QUEUES - 1);
    if (!c->stream[slot]) {
        CU(cudaSetDevice(c->device));
        CU(cudaStreamCreateWithFlags(&c->stream[slot], cudaStreamNonBlocking));
    }
    return PYR_OK;
}

void *state_of(ctx_t *c, const void *key)
{
    for (int i = 0; i < c->nstates; i++)
        if (c->state[i].key == key) return c->state[i].data;
    return NULL;
}

pyr_status_t state_keep(ctx_t *c, const void *key, void *data, void (*free_fn)(ctx_t *c, void *data))
{
    if (c->nstates == PYR_CUDA_STATES) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: more than %d kernel states in a context", PYR_CUDA_STATES);
    c->state[c->nstates++] = state_t{key, data, free_fn};
    return PYR_OK;
}

pyr_status_t blas_take(ctx_t *c, const cublas_api_t **api, cublasHandle_t *handle, const char *user, const char *instead)
{
    device_t *d = c->dev;
    *handle = NULL;
    {
        std::lock_guard<std::mutex> hold(d->lock);
        if (!d->blas_api) PYR_TRY(cublas_api(&d->blas_api, user, instead));
        *api = d->blas_api;
        if (d->nblas > 0) {
            *handle = d->blas[--d->nblas];
            return PYR_OK;
        }
    }
    CU(cudaSetDevice(c->device));
    PYR_CUBLAS_BY(*api, (issuer_t{c->device, user, "free the GPU or use a smaller grid", instead}), (*api)->Create(handle));
    return PYR_OK;
}

void blas_give(ctx_t *c, cublasHandle_t handle)
{
    if (!handle) return;
    device_t *d = c->dev;
    {
        std::lock_guard<std::mutex> hold(d->lock);
        if (d->nblas < PYR_CUDA_POOLED_BLAS) {
            d->blas[d->nblas++] = handle;
            return;
        }
    }
    cudaSetDevice(c->device);
    d->blas_api->Destroy(handle);
    (void)cudaGetLastError();
}

} // namespace pyrcu

namespace {

/* ------------------------------------------------------ runtime kernels */

/* Box copies between piece buffers, several in one launch (copy, copy_many): the copies' units (copy_units)
 * in a row, one block per unit (a 2D window's few rows of 32767 values keep
 * as many blocks busy as a 3D one's thousands of rows, and no block is
 * launched for nothing).  A unit of a wide box is COPY_VALS values of one
 * row, each thread loading its COPY_PER before it stores any.  On the halo
 * copies of a 3D skewed pass (a few planes per copy, tens of microseconds
 * each) this ran faster than one value per thread and unit with 64-bit index
 * arithmetic; 16-byte vectors ran no faster, and four units' loads in flight
 * per thread slower (fewer blocks than two full waves; measured:
 * docs/performance.md#skewed-pieces-out-of-core). */
#define COPY_PER 4
#define COPY_VALS (256 * COPY_PER)
struct copy_desc {
    const void *s;
    void *d0, *d1;
    int64_t sp, splane, dp, dplane;
    int w, ny, nz;
    int pieces; /* units per row of a wide box */
};
struct copy_list {
    copy_desc d[PYR_COPY_MANY_MAX];
    int64_t start[PYR_COPY_MANY_MAX + 1]; /* copy i takes the units [start[i], start[i + 1]) */
    int n;
};

/* A copy's units: 256 rows of a narrow box (a thread per row), or COPY_VALS
 * values of one row of a wide one. */
__host__ __device__ inline int64_t copy_units(const copy_desc &c)
{
    const int64_t rows = (int64_t)c.ny * c.nz;
    return c.w < 32 ? (rows + 255) / 256 : rows * c.pieces;
}

template <typename W> __global__ void __launch_bounds__(256) k_copy_many(copy_list L)
{
    int i = 0;
    for (int64_t u = blockIdx.x; u < L.start[L.n]; u += gridDim.x) {
        while (u >= L.start[i + 1]) i++; /* units rise with u: the copy only moves on */
        const copy_desc &c = L.d[i];
        const W *s = static_cast<const W *>(c.s);
        W *d0 = static_cast<W *>(c.d0), *d1 = static_cast<W *>(c.d1);
        const int64_t k = u - L.start[i];
        if (c.w < 32) {
            const int64_t r = k * 256 + threadIdx.x;
            if (r >= (int64_t)c.ny * c.nz) continue;
            const int64_t y = r % c.ny, z = r / c.ny;
            const W *sr = s + z * c.splane + y * c.sp;
            const int64_t o = z * c.dplane + y * c.dp;
            for (int x = 0; x < c.w; x++) {
                const W v = sr[x];
                if (d0) d0[o + x] = v;
                if (d1) d1[o + x] = v;
            }
            continue;
        }
        /* rows * pieces < 2^31 per copy (cuda_copy_many checks): 32-bit division */
        const unsigned ku = (unsigned)k, pc = (unsigned)c.pieces;
        const unsigned r = ku / pc, ny = (unsigned)c.ny;
        const int x0 = (int)(ku - r * pc) * COPY_VALS + (int)threadIdx.x;
        const int64_t y = r % ny, z = r / ny;
        const W *sr = s + z * c.splane + y * c.sp;
        const int64_t o = z * c.dplane + y * c.dp;
        W v[COPY_PER];
#pragma unroll
        for (int j = 0; j < COPY_PER; j++)
            if (x0 + 256 * j < c.w) v[j] = sr[x0 + 256 * j];
#pragma unroll
        for (int j = 0; j < COPY_PER; j++)
            if (x0 + 256 * j < c.w) {
                if (d0) d0[o + x0 + 256 * j] = v[j];
                if (d1) d1[o + x0 + 256 * j] = v[j];
            }
    }
}

/* max |a - b| over a box into *out, as the bits of a non-negative float or
 * double (which order as unsigned integers, so atomicMax gives the exact
 * maximum whatever the order); a NaN counts as an infinity. */
template <typename T> __device__ __forceinline__ unsigned long long ordered_bits(T v);
template <> __device__ __forceinline__ unsigned long long ordered_bits<float>(float v) { return (unsigned long long)__float_as_uint(v); }
template <> __device__ __forceinline__ unsigned long long ordered_bits<double>(double v)
{
    return (unsigned long long)__double_as_longlong(v);
}

template <typename T>
__global__ void k_maxdiff(const T *__restrict__ a, const T *__restrict__ b, int64_t pitch, int64_t plane, int x0, int w, int y0, int ny,
                          int z0, int nz, unsigned long long *out)
{
    T m = 0;
    for (int z = z0 + (int)blockIdx.z; z < z0 + nz; z += (int)gridDim.z)
        for (int y = y0 + (int)blockIdx.y; y < y0 + ny; y += (int)gridDim.y)
            for (int x = x0 + (int)(blockIdx.x * blockDim.x + threadIdx.x); x < x0 + w; x += (int)(gridDim.x * blockDim.x)) {
                const int64_t i = (int64_t)z * plane + (int64_t)y * pitch + x;
                T d = a[i] - b[i];
                d = d < 0 ? -d : d;
                if (d != d) d = (T)INFINITY;
                m = d > m ? d : m;
            }
    for (int off = 16; off > 0; off >>= 1) {
        T o = __shfl_down_sync(0xffffffffu, m, off);
        m = o > m ? o : m;
    }
    if ((threadIdx.x & 31) == 0 && m > 0) atomicMax(out, ordered_bits<T>(m));
}

int imin_(int a, int b) { return a < b ? a : b; }
int ceil_div_(int a, int b) { return (a + b - 1) / b; }

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

/* The shared state of a device (the runtime's open): what is learnt about
 * the GPU once, for the process. */
pyr_status_t cuda_open(int device, void **shared)
{
    *shared = NULL;
    int count = 0;
    PYR_TRY(probe_devices(&count));
    if (device < 0 || device >= count)
        return count == 1 ? pyr_fail(PYR_ERR_NODEVICE, "run.device = %d: this machine has 1 GPU (device 0); use device = 0", device)
                          : pyr_fail(PYR_ERR_NODEVICE, "run.device = %d: this machine has %d GPUs (devices 0 to %d); use one of those",
                                     device, count, count - 1);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return fail_cuda(e, "cudaSetDevice", device);
    cudaDeviceProp prop;
    e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) return fail_cuda(e, "cudaGetDeviceProperties", device);
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, reinterpret_cast<const void *>(&k_copy_many<unsigned>));
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return pyr_fail(PYR_ERR_NODEVICE,
                        "GPU %d (%s, compute capability %d.%d) cannot run this build's kernels (%s); rebuild with "
                        "-DCMAKE_CUDA_ARCHITECTURES=%d%d, or use backend = cpu",
                        device, prop.name, prop.major, prop.minor, cudaGetErrorString(e), prop.major, prop.minor);
    }
    device_t *d = new (std::nothrow) device_t();
    if (!d) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    d->device = device;
    d->sms = prop.multiProcessorCount;
    d->cooperative = prop.cooperativeLaunch;
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    *shared = d;
    return PYR_OK;
}

/* Everything of a context, for good (a context that failed, or the device's
 * pool emptied). */
void destroy_ctx(cuda_ctx_t *c)
{
    cudaSetDevice(c->device);
    for (int s = 0; s < PYR_CUDA_QUEUES; s++)
        if (c->stream[s]) {
            cudaStreamSynchronize(c->stream[s]);
            cudaStreamDestroy(c->stream[s]);
        }
    for (int s = 0; s < PYR_CUDA_QUEUES; s++)
        for (int m = 0; m < PYR_MARKS; m++)
            if (c->marks[s][m]) cudaEventDestroy(c->marks[s][m]);
    for (int i = 0; i < c->nwriters; i++) cudaEventDestroy(c->writers[i].ev);
    for (int i = 0; i < c->nregistered; i++) cudaHostUnregister(c->registered[i]);
    if (c->red_dev) cudaFree(c->red_dev);
    if (c->red_host) cudaFreeHost(c->red_host);
    for (int sl = 0; sl < SLOTS; sl++)
        for (int k = 0; k < 2; k++) {
            if (c->stage[sl][k]) cudaFreeHost(c->stage[sl][k]);
            if (c->stage_ev[sl][k]) cudaEventDestroy(c->stage_ev[sl][k]);
        }
    (void)cudaGetLastError();
    free(c);
}

/* The device's last holder has gone: free the contexts given back and the
 * cuBLAS handles kept for the next user (called under the cache's lock). */
void cuda_idle(void *shared)
{
    device_t *d = (device_t *)shared;
    ctx_t *back;
    cublasHandle_t blas[PYR_CUDA_POOLED_BLAS];
    int nblas;
    {
        std::lock_guard<std::mutex> hold(d->lock);
        back = d->given_back;
        d->given_back = NULL;
        nblas = d->nblas;
        for (int i = 0; i < nblas; i++) blas[i] = d->blas[i];
        d->nblas = 0;
    }
    while (back) {
        ctx_t *next = back->next;
        destroy_ctx(back);
        back = next;
    }
    cudaSetDevice(d->device);
    for (int i = 0; i < nblas; i++) d->blas_api->Destroy(blas[i]);
    (void)cudaGetLastError();
}

/* A context of device o->device: one given back earlier (its streams, marks
 * and staging chunks made already), else a new one; the device is held in
 * the context cache until cuda_destroy gives the context back. */
pyr_status_t cuda_create(const pyr_options_t *o, pyr_precision_t precision, void **out)
{
    *out = NULL;
    const int device = o ? o->device : 0;
    pyr_device_t *held = NULL;
    PYR_TRY(pyr_device_acquire(PYR_BACKEND_CUDA, device, &held));
    device_t *d = (device_t *)pyr_device_shared(held);
    cuda_ctx_t *c = NULL;
    {
        std::lock_guard<std::mutex> hold(d->lock);
        c = d->given_back;
        if (c) d->given_back = c->next;
    }
    if (!c) {
        c = (cuda_ctx_t *)calloc(1, sizeof *c);
        if (!c) {
            pyr_device_release(held);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        }
        c->device = device;
        c->dev = d;
        c->sms = d->sms;
    }
    c->next = NULL;
    c->held = held;
    c->precision = precision;
    c->elem = pyr_precision_size(precision);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        const pyr_status_t st = fail_cuda(e, "cudaSetDevice", device);
        c->held = NULL;
        destroy_ctx(c);
        pyr_device_release(held);
        return st;
    }
    *out = c;
    return PYR_OK;
}

/* Give the context back: its work finished, the kernels' states freed, the
 * host ranges it registered unregistered; it keeps its streams, events and
 * staging chunks for the device's next user.  One whose queues failed is
 * destroyed instead. */
void cuda_destroy(void *ctx)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    if (!c) return;
    cudaSetDevice(c->device);
    int healthy = 1;
    for (int s = 0; s < PYR_CUDA_QUEUES; s++)
        if (c->stream[s] && cudaStreamSynchronize(c->stream[s]) != cudaSuccess) healthy = 0;
    while (c->nstates > 0) {
        const state_t st = c->state[--c->nstates];
        st.free(c, st.data);
    }
    for (int i = 0; i < c->nwriters; i++) cudaEventDestroy(c->writers[i].ev);
    c->nwriters = 0;
    for (int i = 0; i < c->nregistered; i++) cudaHostUnregister(c->registered[i]);
    c->nregistered = 0;
    for (int s = 0; s < SLOTS; s++) c->red_out[s] = NULL;
    if (cudaGetLastError() != cudaSuccess) healthy = 0;
    pyr_device_t *held = c->held;
    c->held = NULL;
    if (healthy) {
        device_t *d = c->dev;
        std::lock_guard<std::mutex> hold(d->lock);
        c->next = d->given_back;
        d->given_back = c;
    } else {
        destroy_ctx(c);
    }
    pyr_device_release(held);
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

/* Whether the tests' injected failure (pyr_cuda_fail_alloc_after) is this allocation's. */
bool take_fail(device_t *d)
{
    int n = d->fail_alloc.load();
    while (n > 0 && !d->fail_alloc.compare_exchange_weak(n, n - 1)) {
    }
    return n == 1;
}

pyr_status_t cuda_dev_alloc(void *ctx, size_t bytes, void **ptr)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    *ptr = NULL;
    if (bytes == 0) bytes = 256;
    CU(cudaSetDevice(c->device));
    cudaError_t e;
    if (take_fail(c->dev)) e = cudaErrorMemoryAllocation; /* injected (tests) */
    else e = cudaMalloc(ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *ptr = NULL;
        size_t f = 0, t = 0;
        if (cudaMemGetInfo(&f, &t) != cudaSuccess) (void)cudaGetLastError();
        return pyr_fail(PYR_ERR_DEVICE_NOMEM,
                        "GPU %d (%s): out of device memory allocating %.1f MiB (%.1f MiB free of %.1f MiB; another program may "
                        "be using the GPU); use a memory budget below the free memory (run.memory <= %.0f MiB, or memory = auto)",
                        c->device, c->dev->name, (double)bytes / 1048576.0, (double)f / 1048576.0, (double)t / 1048576.0,
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

/* Pin the user's grid so copies run at full PCIe speed.  Memory the caller
 * pinned already is fine; when the system refuses (locked-memory limits, not
 * enough RAM) the error says so and the executor stages the copies through
 * pinned buffers instead (transfer()), saying that in the run info. */
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
    (void)cudaGetLastError();
    if (e == cudaErrorHostMemoryAlreadyRegistered) return PYR_OK; /* pinned by the caller */
    return pyr_fail(PYR_ERR_NOMEM, "cudaHostRegister of %.1f MiB: %s", (double)bytes / 1048576.0, cudaGetErrorString(e));
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

/* Staged copies: a host region in pageable memory moves through two pinned
 * chunks of the slot, rows packed on the host (by several threads: one
 * thread's memcpy is slower than the link) and sent as one 2D copy per
 * chunk (uploads: packing chunk i+1 overlaps the copy of chunk i; downloads:
 * the copy of chunk i+1 overlaps unpacking chunk i).  Each call returns with
 * its uploads queued (their chunks are waited for before reuse) and its
 * downloads done: the caller's memory is never read or written after. */
#define STAGE_BYTES ((size_t)16 << 20)

/* Where a region's memory lies: pageable host memory (staged), pinned host
 * memory, or device memory (a caller's field on the GPU, pyr_field_wrap_device:
 * the copy stays on the device). */
enum { MEM_PAGEABLE, MEM_PINNED, MEM_DEVICE };
static int memory_of(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return MEM_PAGEABLE;
    }
    if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) return MEM_DEVICE;
    return a.type == cudaMemoryTypeUnregistered ? MEM_PAGEABLE : MEM_PINNED;
}

static pyr_status_t stage_ready(cuda_ctx_t *c, int slot)
{
    for (int k = 0; k < 2; k++) {
        if (!c->stage[slot][k]) {
            cudaError_t e = cudaMallocHost((void **)&c->stage[slot][k], STAGE_BYTES);
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                c->stage[slot][k] = NULL;
                return pyr_fail(PYR_ERR_NOMEM, "out of pinned host memory for the %zu MiB staging buffers of pageable copies (%s)",
                                STAGE_BYTES >> 20, cudaGetErrorString(e));
            }
        }
        if (!c->stage_ev[slot][k]) CU(cudaEventCreateWithFlags(&c->stage_ev[slot][k], cudaEventDisableTiming));
    }
    return PYR_OK;
}

/* rows [r0, r0 + k) of the box (row r = y + ny*z, k within one plane) */
static pyr_status_t staged(cuda_ctx_t *c, int slot, char *h, size_t hp, size_t hplane, char *d, size_t dp, size_t dplane, size_t wb,
                           int64_t ny, int64_t nz, int to_device)
{
    PYR_TRY(stage_ready(c, slot));
    cudaStream_t s = c->stream[slot];
    /* chunks: whole rows of one plane, or (a row longer than a chunk) pieces of one row */
    const size_t piece = wb < STAGE_BYTES ? wb : STAGE_BYTES;
    const int64_t per_row = (int64_t)((wb + piece - 1) / piece);
    const int64_t rows_per = wb < STAGE_BYTES ? (int64_t)(STAGE_BYTES / wb) : 1;
    const int64_t row_chunks = (ny + rows_per - 1) / rows_per;
    const int64_t chunks = nz * row_chunks * per_row;
    struct chunk_t {
        char *h, *d;
        size_t bytes;
        int64_t rows;
    };
    auto chunk_of = [&](int64_t i) {
        const int64_t part = i % per_row, rc = i / per_row % row_chunks, z = i / per_row / row_chunks;
        const int64_t y0 = rc * rows_per, rows = ny - y0 < rows_per ? ny - y0 : rows_per;
        const size_t off = (size_t)part * piece, bytes = wb - off < piece ? wb - off : piece;
        chunk_t k = {h + (size_t)z * hplane + (size_t)y0 * hp + off, d + (size_t)z * dplane + (size_t)y0 * dp + off, bytes, rows};
        return k;
    };
    if (to_device) {
        for (int64_t i = 0; i < chunks; i++) {
            const chunk_t k = chunk_of(i);
            char *buf = c->stage[slot][i & 1];
            CU(cudaEventSynchronize(c->stage_ev[slot][i & 1])); /* its last copy is done */
            pyr_host_copy_rows(buf, k.bytes, k.h, hp, k.bytes, k.rows, 0);
            CU(cudaMemcpy2DAsync(k.d, dp, buf, k.bytes, k.bytes, (size_t)k.rows, cudaMemcpyHostToDevice, s));
            CU(cudaEventRecord(c->stage_ev[slot][i & 1], s));
        }
        return PYR_OK;
    }
    for (int64_t i = 0; i < chunks + 1; i++) {
        if (i < chunks) {
            const chunk_t k = chunk_of(i);
            char *buf = c->stage[slot][i & 1];
            CU(cudaEventSynchronize(c->stage_ev[slot][i & 1]));
            CU(cudaMemcpy2DAsync(buf, k.bytes, k.d, dp, k.bytes, (size_t)k.rows, cudaMemcpyDeviceToHost, s));
            CU(cudaEventRecord(c->stage_ev[slot][i & 1], s));
        }
        if (i > 0) {
            const chunk_t k = chunk_of(i - 1);
            const char *buf = c->stage[slot][(i - 1) & 1];
            CU(cudaEventSynchronize(c->stage_ev[slot][(i - 1) & 1]));
            pyr_host_copy_rows(k.h, hp, buf, k.bytes, k.bytes, k.rows, 0);
        }
    }
    return PYR_OK;
}

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
    const int where = memory_of(host->data);
    if (where == MEM_PAGEABLE)
        return staged(c, slot, h, hp, hp * (size_t)hny, d, dp, dp * (size_t)prow, wb, ny, nz, to_device);
    const cudaMemcpyKind up = where == MEM_DEVICE ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    const cudaMemcpyKind down = where == MEM_DEVICE ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
    if (ny == 1 && nz == 1) {
        if (to_device) CU(cudaMemcpyAsync(d, h, wb, up, s));
        else CU(cudaMemcpyAsync(h, d, wb, down, s));
    } else if (nz == 1 || (ny == hny && ny == prow)) {
        /* one 2D copy: rows of consecutive planes follow each other on both sides */
        size_t rows = (size_t)(ny * nz);
        if (to_device) CU(cudaMemcpy2DAsync(d, dp, h, hp, wb, rows, up, s));
        else CU(cudaMemcpy2DAsync(h, hp, d, dp, wb, rows, down, s));
    } else {
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        cudaPitchedPtr hpp = make_cudaPitchedPtr(h, hp, wb, (size_t)hny);
        cudaPitchedPtr dpp = make_cudaPitchedPtr(d, dp, wb, (size_t)prow);
        p.extent = make_cudaExtent(wb, (size_t)ny, (size_t)nz);
        if (to_device) {
            p.srcPtr = hpp;
            p.dstPtr = dpp;
            p.kind = up;
        } else {
            p.srcPtr = dpp;
            p.dstPtr = hpp;
            p.kind = down;
        }
        CU(cudaMemcpy3DAsync(&p, s));
    }
    return PYR_OK;
}

pyr_status_t cuda_upload(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    double t0 = now_s();
    CU(cudaSetDevice(c->device));
    const int span = span_begin(c, PYR_SPAN_UPLOAD, slot);
    PYR_TRY(transfer(c, slot, piece, piece->buf[f][0], host, box, 1));
    span_end(c, span, slot);
    count(c->dev->stats.issue_upload_ns, (long long)((now_s() - t0) * 1e9));
    PYR_TRY(note_writer(c, slot, piece->buf[f][0]));
    return serial_end(c, slot, t0, &c->dev->stats.upload_ns);
}

pyr_status_t cuda_download(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host, const pyr_box_t *box)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    double t0 = now_s();
    CU(cudaSetDevice(c->device));
    const int span = span_begin(c, PYR_SPAN_DOWNLOAD, slot);
    PYR_TRY(transfer(c, slot, piece, pyr_piece_current(piece, f), host, box, 0));
    span_end(c, span, slot);
    stats_t &stats = c->dev->stats;
    count(stats.issue_download_ns, (long long)((now_s() - t0) * 1e9));
    /* a band goes to a staging buffer of exactly its size (the grid is larger) */
    return serial_end(c, slot, t0, &stats.download_ns, pyr_box_contains(box, &host->box) ? &stats.download_band_ns : nullptr);
}

pyr_status_t cuda_copy_many(void *ctx, int slot, int f, const pyr_copy_op_t *ops, int n)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_queue(c, slot)); /* a slot or a lane */
    if (n < 0 || n > PYR_COPY_MANY_MAX) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a batch of %d copies", n);
    double t0 = serial(c) ? now_s() : 0;
    CU(cudaSetDevice(c->device));
    copy_list L;
    memset(&L, 0, sizeof L);
    int m = 0;
    for (int i = 0; i < n; i++) {
        const pyr_copy_op_t *op = &ops[i];
        const pyr_box_t *box = &op->box;
        if (pyr_box_empty(box)) continue;
        if (!pyr_box_contains(&op->src->box, box) || !pyr_box_contains(&op->dst->box, box))
            return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: copy box outside its pieces");
        const void *s = op->src->buf[f][op->src_layer];
        PYR_TRY(wait_writer(c, slot, s));
        void *d0 = (op->dst_layers & 1) && op->dst->buf[f][0] != s ? op->dst->buf[f][0] : NULL;
        void *d1 = (op->dst_layers & 2) && op->dst->buf[f][1] != s ? op->dst->buf[f][1] : NULL;
        if (!d0 && !d1) continue;
        copy_desc &d = L.d[m++];
        const int64_t so = pyr_piece_index(op->src, box->lo[0], box->lo[1], box->lo[2]);
        const int64_t doff = pyr_piece_index(op->dst, box->lo[0], box->lo[1], box->lo[2]);
        d.s = static_cast<const char *>(s) + so * c->elem;
        d.d0 = d0 ? static_cast<char *>(d0) + doff * c->elem : NULL;
        d.d1 = d1 ? static_cast<char *>(d1) + doff * c->elem : NULL;
        d.sp = op->src->pitch;
        d.splane = op->src->pitch * pyr_box_extent(&op->src->box, 1);
        d.dp = op->dst->pitch;
        d.dplane = op->dst->pitch * pyr_box_extent(&op->dst->box, 1);
        d.w = (int)pyr_box_extent(box, 0);
        d.ny = (int)pyr_box_extent(box, 1);
        d.nz = (int)pyr_box_extent(box, 2);
        d.pieces = (d.w + COPY_VALS - 1) / COPY_VALS;
        if ((int64_t)d.ny * d.nz * d.pieces >= ((int64_t)1 << 31))
            return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a copy of %lld rows", (long long)d.ny * d.nz);
        L.start[m] = L.start[m - 1] + copy_units(d);
    }
    if (m == 0) return PYR_OK;
    L.n = m;
    const int64_t units = L.start[m];
    const unsigned blocks = (unsigned)(units < 4096 ? units : 4096);
    const int span = span_begin(c, PYR_SPAN_COPY, slot);
    if (c->elem == 8) k_copy_many<unsigned long long><<<blocks, 256, 0, c->stream[slot]>>>(L);
    else k_copy_many<unsigned><<<blocks, 256, 0, c->stream[slot]>>>(L);
    CU(cudaGetLastError());
    span_end(c, span, slot);
    return serial_end(c, slot, t0, &c->dev->stats.copy_ns);
}

pyr_status_t cuda_copy(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src, int src_layer,
                       const pyr_box_t *box)
{
    const pyr_copy_op_t op = {dst, dst_layers, src, src_layer, *box};
    return cuda_copy_many(ctx, slot, f, &op, 1);
}

pyr_status_t cuda_reduce_change(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_box_t *box, double *out)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    if (!piece->buf[f][1]) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: the change of field %d, which has one buffer", f);
    CU(cudaSetDevice(c->device));
    if (!c->red_dev) {
        CU(cudaMalloc(&c->red_dev, SLOTS * sizeof *c->red_dev));
        CU(cudaMallocHost(&c->red_host, SLOTS * sizeof *c->red_host));
    }
    cudaStream_t st = c->stream[slot];
    CU(cudaMemsetAsync(&c->red_dev[slot], 0, sizeof *c->red_dev, st));
    const int w = (int)pyr_box_extent(box, 0), ny = (int)pyr_box_extent(box, 1), nz = (int)pyr_box_extent(box, 2);
    if (w > 0 && ny > 0 && nz > 0) {
        const int64_t pitch = piece->pitch, plane = piece->pitch * pyr_box_extent(&piece->box, 1);
        const int x0 = (int)(box->lo[0] - piece->box.lo[0]), y0 = (int)(box->lo[1] - piece->box.lo[1]),
                  z0 = (int)(box->lo[2] - piece->box.lo[2]);
        const int threads = 256;
        dim3 grid((unsigned)imin_(ceil_div_(w, threads), 4), (unsigned)imin_(ny, 1024), (unsigned)imin_(nz, 64));
        const void *a = piece->buf[f][piece->cur], *b = piece->buf[f][piece->cur ^ 1];
        if (c->elem == 8)
            k_maxdiff<double><<<grid, threads, 0, st>>>((const double *)a, (const double *)b, pitch, plane, x0, w, y0, ny, z0, nz,
                                                        &c->red_dev[slot]);
        else
            k_maxdiff<float><<<grid, threads, 0, st>>>((const float *)a, (const float *)b, pitch, plane, x0, w, y0, ny, z0, nz,
                                                       &c->red_dev[slot]);
        CU(cudaGetLastError());
    }
    CU(cudaMemcpyAsync(&c->red_host[slot], &c->red_dev[slot], sizeof *c->red_host, cudaMemcpyDeviceToHost, st));
    c->red_out[slot] = out;
    return PYR_OK;
}

pyr_status_t cuda_wait(void *ctx, int slot)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    if (slot < 0 || slot >= PYR_CUDA_QUEUES || !c->stream[slot]) return PYR_OK; /* nothing was issued */
    CU(cudaSetDevice(c->device));
    cudaError_t e = cudaStreamSynchronize(c->stream[slot]);
    if (e != cudaSuccess) return fail_cuda(e, "a queued GPU operation (cudaStreamSynchronize)", c->device);
    if (slot < SLOTS && c->red_out[slot]) {
        const unsigned long long bits = c->red_host[slot];
        if (c->elem == 8) {
            double v;
            memcpy(&v, &bits, sizeof v);
            *c->red_out[slot] = v;
        } else {
            const unsigned u = (unsigned)bits;
            float v;
            memcpy(&v, &u, sizeof v);
            *c->red_out[slot] = (double)v;
        }
        c->red_out[slot] = NULL;
    }
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
    PYR_TRY(check_queue(c, slot));
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
    PYR_TRY(check_queue(c, slot));
    PYR_TRY(check_queue(c, other));
    PYR_TRY(check_mark(which));
    if (other == slot || !c->marks[other][which]) return PYR_OK; /* in order already / nothing marked */
    CU(cudaSetDevice(c->device));
    CU(cudaStreamWaitEvent(c->stream[slot], c->marks[other][which], 0));
    return PYR_OK;
}

} // namespace

/* ------------------------------------------------------------ C entry points */

/* ------------------------------------------ the caller's fields on the GPU */

namespace {

/* A stream of the caller's as the CUDA array interface numbers them: 1 the
 * legacy default stream (0 names it too), 2 the per-thread default stream,
 * else the stream's handle; these are the runtime's own values. */
static cudaStream_t caller_stream(uintptr_t stream) { return stream == 0 ? cudaStreamLegacy : (cudaStream_t)stream; }

pyr_status_t cuda_locate(const void *ptr, int *on_device, int *device)
{
    *on_device = 0;
    *device = -1;
    cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, ptr);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return pyr_fail(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? PYR_ERR_NODEVICE : PYR_ERR_DEVICE,
                        "CUDA cannot tell where address %p lies (%s)", ptr, cudaGetErrorString(e));
    }
    if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) {
        *on_device = 1;
        *device = a.device;
    }
    return PYR_OK;
}

pyr_status_t cuda_after_stream(void *ctx, int slot, uintptr_t stream)
{
    cuda_ctx_t *c = (cuda_ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    CU(cudaSetDevice(c->device));
    cudaEvent_t ev;
    CU(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    cudaError_t e = cudaEventRecord(ev, caller_stream(stream));
    if (e == cudaSuccess) e = cudaStreamWaitEvent(c->stream[slot], ev, 0);
    cudaEventDestroy(ev); /* the wait holds what it needs */
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return pyr_fail(PYR_ERR_DEVICE, "waiting for the caller's stream %#llx on GPU %d: %s (a stream of this device, "
                                        "or 1 for the legacy default stream, was expected)",
                        (unsigned long long)stream, c->device, cudaGetErrorString(e));
    }
    return PYR_OK;
}

static pyr_status_t copy_linear_on(int device, void *dst, const void *src, size_t bytes, uintptr_t stream)
{
    PYR_CU_BY(device, cudaSetDevice(device));
    PYR_CU_BY(device, cudaStreamSynchronize(caller_stream(stream)));
    PYR_CU_BY(device, cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    /* a copy from pageable host memory may return before it reaches the device */
    PYR_CU_BY(device, cudaStreamSynchronize(cudaStreamLegacy));
    return PYR_OK;
}

/* The caller's thread keeps its current device (CuPy and PyTorch allocate on it). */
pyr_status_t cuda_copy_linear(int device, void *dst, const void *src, size_t bytes, uintptr_t stream)
{
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) (void)cudaGetLastError(), current = -1;
    const pyr_status_t st = copy_linear_on(device, dst, src, bytes, stream);
    if (current >= 0 && current != device && cudaSetDevice(current) != cudaSuccess) (void)cudaGetLastError();
    return st;
}

} // namespace

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

/* The shared state of a device the caller holds (cuda_api.h). */
static device_t *hooks_of(const pyr_device_t *gpu) { return (device_t *)pyr_device_shared(gpu); }

static double seconds(const std::atomic<long long> &ns) { return 1e-9 * (double)ns.load(); }

extern "C" void pyr_cuda_set_serial(pyr_device_t *gpu, int on) { hooks_of(gpu)->serial = on != 0; }

extern "C" void pyr_cuda_get_stats(const pyr_device_t *gpu, pyr_cuda_stats_t *out)
{
    const stats_t &s = hooks_of(gpu)->stats;
    memset(out, 0, sizeof *out);
    out->upload_s = seconds(s.upload_ns);
    out->copy_s = seconds(s.copy_ns);
    out->compute_s = seconds(s.compute_ns);
    out->download_s = seconds(s.download_ns);
    out->download_band_s = seconds(s.download_band_ns);
    out->launches = s.launches.load();
    out->fused3d_z = s.fused3d_z.load();
    out->fused3d_y = s.fused3d_y.load();
    out->saves3d_z = s.saves3d_z.load();
    out->saves3d_y = s.saves3d_y.load();
    out->fills3d_z = s.fills3d_z.load();
    out->fills3d_y = s.fills3d_y.load();
    out->issue_upload_s = seconds(s.issue_upload_ns);
    out->issue_download_s = seconds(s.issue_download_ns);
}

extern "C" void pyr_cuda_reset_stats(pyr_device_t *gpu)
{
    stats_t &s = hooks_of(gpu)->stats;
    std::atomic<long long> *all[] = {&s.upload_ns, &s.copy_ns, &s.compute_ns, &s.download_ns, &s.download_band_ns,
                                     &s.launches, &s.fused3d_z, &s.fused3d_y, &s.saves3d_z, &s.saves3d_y,
                                     &s.fills3d_z, &s.fills3d_y, &s.issue_upload_ns, &s.issue_download_ns};
    for (std::atomic<long long> *n : all) n->store(0);
}

extern "C" void pyr_cuda_timeline_start(pyr_device_t *gpu, int cap)
{
    (void)pyr_cuda_timeline_take(gpu, NULL, 0);
    device_t *d = hooks_of(gpu);
    std::lock_guard<std::mutex> hold(d->lock);
    d->tl = cap > 0 ? (span_rec_t *)calloc((size_t)cap, sizeof *d->tl) : NULL;
    d->tl_cap = d->tl ? cap : 0;
    d->tl_n = 0;
    d->timeline_on = d->tl != NULL;
}

extern "C" int pyr_cuda_timeline_take(pyr_device_t *gpu, pyr_cuda_span_t *spans, int max)
{
    device_t *d = hooks_of(gpu);
    std::lock_guard<std::mutex> hold(d->lock);
    d->timeline_on = 0;
    span_rec_t *tl = d->tl;
    const int total = d->tl_n;
    int n = 0, failed = 0;
    /* every time is taken from the first start event: destroy none before all are read */
    for (int i = 0; spans && i < total && n < max; i++) {
        float s = 0, e = 0;
        cudaError_t err = cudaEventSynchronize(tl[i].b);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&s, tl[0].a, tl[i].a);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&e, tl[0].a, tl[i].b);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            if (failed++ == 0) fprintf(stderr, "timeline: span %d of %d unreadable: %s\n", i, total, cudaGetErrorString(err));
            continue;
        }
        spans[n].kind = tl[i].kind;
        spans[n].slot = tl[i].slot;
        spans[n].start_ms = s;
        spans[n].end_ms = e;
        n++;
    }
    for (int i = 0; i < total; i++) {
        cudaEventDestroy(tl[i].a);
        cudaEventDestroy(tl[i].b);
    }
    (void)cudaGetLastError();
    free(tl);
    d->tl = NULL;
    d->tl_cap = d->tl_n = 0;
    return n;
}

extern "C" void pyr_cuda_fail_alloc_after(pyr_device_t *gpu, int n) { hooks_of(gpu)->fail_alloc = n > 0 ? n : 0; }
extern "C" void pyr_cuda_force_stream(pyr_device_t *gpu, int axis) { hooks_of(gpu)->force_stream = axis == 0 || axis == 1 ? axis : -1; }

/* Filled by field name, so new fields of the interface default to zero. */
static pyr_device_ops_t make_ops(void)
{
    pyr_device_ops_t o;
    memset(&o, 0, sizeof o);
    o.name = "cuda";
    o.kind = PYR_BACKEND_CUDA;
    o.slots = SLOTS;
    o.lanes = PYR_CUDA_LANES;
    o.default_slots = SLOTS;
    o.concurrent = 1;
    o.pitch_align_bytes = 128; /* rows start 16-byte aligned for vector loads (and on cache lines) */
    o.create = cuda_create;
    o.destroy = cuda_destroy;
    o.open = cuda_open;
    o.idle = cuda_idle;
    o.mem_info = cuda_mem_info;
    o.dev_alloc = cuda_dev_alloc;
    o.dev_free = cuda_dev_free;
    o.host_alloc = cuda_host_alloc;
    o.host_free = cuda_host_free;
    o.host_register = cuda_host_register;
    o.host_unregister = cuda_host_unregister;
    o.upload = cuda_upload;
    o.fill = pyr_cuda_fill; /* fill.cu */
    o.copy = cuda_copy;
    o.copy_many = cuda_copy_many;
    o.download = cuda_download;
    o.reduce_change = cuda_reduce_change;
    o.wait = cuda_wait;
    o.mark = cuda_mark;
    o.after_mark = cuda_after_mark;
    o.copy_peer = pyr_cuda_copy_peer; /* peer.cu: several GPUs of one process (exec/parts.c) */
    o.locate = cuda_locate;
    o.after_stream = cuda_after_stream;
    o.copy_linear = cuda_copy_linear;
    return o;
}

extern "C" const pyr_device_ops_t pyr_device_cuda = make_ops();
