/* The multigrid kernels on the GPU (solvers/multigrid/mg_internal.h): one
 * thread per unknown (interior and Neumann face nodes), each evaluating mg_internal.h's expressions in
 * mg_cpu.c's order (nvcc --fmad=false: no contraction), so every level holds
 * the CPU's bits.  The residual's maximum is an atomicMax over the bit
 * patterns of |r| as doubles (non-negative doubles order as their bits, and
 * a NaN's bits lie above the infinity's), exact in any order.
 *
 * It runs on the CUDA runtime (backend/cuda/cuda_internal.cuh): a context of
 * the chosen GPU from the context cache gives its stream (queue 0) and device
 * memory through the runtime's allocator. */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.cuh"
#include "solvers/multigrid/mg_internal.h"

namespace {

struct mg_ctx {
    pyrcu::ctx_t *rt;
    cudaStream_t stream;
    pyr_precision_t precision;
    unsigned long long *maxbits; /* one word on the device */
    int device;
    cudaStream_t down;  /* downloads that run beside the stream's work (made on first use) */
    cudaEvent_t issued; /* where the stream stood when the last of them was issued */
    cudaStream_t up;    /* uploads likewise */
    cudaEvent_t before; /* where the stream stood when the last of them was issued */
    cudaEvent_t landed; /* where the uploads stood then */
    pyrcu::issuer_t by;
};

#define MG_TRY(c, call) PYR_CU_BY((c)->by, call)

constexpr int BX = 128;

/* The unknowns as the kernels take them: lo/hi per axis, strides, the Neumann ghosts' offsets. */
struct geo_t {
    int64_t nx, ny, nz, sy, sz;
    int64_t lo[3], hi[3];
    double t[6];
    int dims;
};

geo_t geo_of(const pyr_mg_geom_t *g)
{
    geo_t r;
    r.nx = g->n[0];
    r.ny = g->n[1];
    r.nz = g->n[2];
    r.sy = g->n[0];
    r.sz = g->n[0] * g->n[1];
    for (int a = 0; a < 3; a++) {
        r.lo[a] = pyr_mg_lo(g, a);
        r.hi[a] = pyr_mg_hi(g, a);
    }
    for (int k = 0; k < 6; k++) r.t[k] = g->t[k];
    r.dims = g->used[2] ? 3 : g->used[1] ? 2 : 1;
    return r;
}

dim3 grid_of(const geo_t &q) { return dim3((unsigned)((q.hi[0] - q.lo[0] + BX - 1) / BX), (unsigned)(q.hi[1] - q.lo[1]), (unsigned)(q.hi[2] - q.lo[2])); }

/* s at node i = (x, y, z): a node at an axis's end is on a Neumann face (the only unknowns there) and reads the ghost
 * inner + t in place of its neighbour outside, as mg_cpu.c's face_stencil; elsewhere its plain stencil, the same
 * expression. */
template <typename T>
__device__ __forceinline__ T stencil(const geo_t &q, const T *u, int64_t i, int64_t x, int64_t y, int64_t z, T cx, T cy, T cz)
{
    const T xm = x == 0 ? u[i + 1] + (T)q.t[0] : u[i - 1], xp = x == q.nx - 1 ? u[i - 1] + (T)q.t[1] : u[i + 1];
    if (q.dims == 1) return cx * (xm + xp);
    const T ym = y == 0 ? u[i + q.sy] + (T)q.t[2] : u[i - q.sy], yp = y == q.ny - 1 ? u[i - q.sy] + (T)q.t[3] : u[i + q.sy];
    if (q.dims == 2) return cx * (xm + xp) + cy * (ym + yp);
    const T zm = z == 0 ? u[i + q.sz] + (T)q.t[4] : u[i - q.sz], zp = z == q.nz - 1 ? u[i - q.sz] + (T)q.t[5] : u[i + q.sz];
    return (cx * (xm + xp) + cy * (ym + yp)) + cz * (zm + zp);
}

/* The fine node full weighting reads at offset o from node i of an axis of n nodes: the reflection through a face
 * where i + o lies outside. */
__device__ __forceinline__ int64_t reflect(int64_t i, int o, int64_t n) { return i + o < 0 || i + o >= n ? i - o : i + o; }

template <typename T>
__global__ void smooth_k(geo_t q, const T *u, const T *f, T *out, T cx, T cy, T cz, T d, T gm, T w, int plain, int first)
{
    const int64_t x = q.lo[0] + (int64_t)blockIdx.x * BX + threadIdx.x;
    if (x >= q.hi[0]) return;
    const int64_t y = q.lo[1] + blockIdx.y, z = q.lo[2] + blockIdx.z, i = z * q.sz + y * q.sy + x;
    const T s = stencil(q, u, i, x, y, z, cx, cy, cz);
    const T J = f ? (s + f[i]) * d : s * d;
    const T yv = plain ? J : u[i] + gm * (J - u[i]);
    out[i] = first ? yv : out[i] + w * (yv - out[i]);
}

__device__ __forceinline__ void max_bits(unsigned long long *m, double v)
{
    const double a = fabs(v);
    unsigned long long b = (unsigned long long)__double_as_longlong(a);
    /* the block's largest first, then one atomic per warp */
    for (int o = 16; o > 0; o /= 2) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, b, o);
        b = other > b ? other : b;
    }
    if ((threadIdx.x & 31) == 0 && b) atomicMax(m, b);
}

template <typename T>
__global__ void residual_k(geo_t q, const T *u, const T *f, T *r, T cx, T cy, T cz, T D, unsigned long long *m)
{
    const int64_t x = q.lo[0] + (int64_t)blockIdx.x * BX + threadIdx.x;
    double v = 0;
    if (x < q.hi[0]) {
        const int64_t y = q.lo[1] + blockIdx.y, z = q.lo[2] + blockIdx.z, i = z * q.sz + y * q.sy + x;
        const T s = stencil(q, u, i, x, y, z, cx, cy, cz);
        const T val = (f ? s + f[i] : s) - D * u[i];
        r[i] = val;
        v = (double)val;
    }
    if (m) max_bits(m, v);
}

template <typename T>
__global__ void restrict_k(geo_t fq, geo_t cq, int kx, int ky, int kz, const T *rf, T *fc)
{
    const int64_t X = cq.lo[0] + (int64_t)blockIdx.x * BX + threadIdx.x;
    if (X >= cq.hi[0]) return;
    const int64_t Y = cq.lo[1] + blockIdx.y, Z = cq.lo[2] + blockIdx.z;
    const T qq = (T)0.25, hf = (T)0.5;
    const int64_t fx = kx ? 2 * X : X, fy = ky ? 2 * Y : Y, fz = kz ? 2 * Z : Z;
    const int64_t xm = reflect(fx, -1, fq.nx) - fx, xp = reflect(fx, 1, fq.nx) - fx;
    T ty[3];
    for (int oz = kz ? -1 : 0; oz <= (kz ? 1 : 0); oz++) {
        T tx[3];
        for (int oy = ky ? -1 : 0; oy <= (ky ? 1 : 0); oy++) {
            const T *p = rf + reflect(fz, oz, fq.nz) * fq.sz + reflect(fy, oy, fq.ny) * fq.sy + fx;
            tx[oy + 1] = kx ? qq * (p[xm] + p[xp]) + hf * p[0] : p[0];
        }
        ty[oz + 1] = ky ? qq * (tx[0] + tx[2]) + hf * tx[1] : tx[1];
    }
    fc[Z * cq.sz + Y * cq.sy + X] = kz ? qq * (ty[0] + ty[2]) + hf * ty[1] : ty[1];
}

template <typename T>
__global__ void prolong_k(geo_t cq, geo_t fq, int kx, int ky, int kz, const T *ec, T *uf)
{
    const int64_t x = fq.lo[0] + (int64_t)blockIdx.x * BX + threadIdx.x;
    if (x >= fq.hi[0]) return;
    const int64_t y = fq.lo[1] + blockIdx.y, z = fq.lo[2] + blockIdx.z;
    const T hf = (T)0.5;
    const int64_t X = kx ? x / 2 : x, Y = ky ? y / 2 : y, Z = kz ? z / 2 : z;
    const int two_x = kx && (x & 1), two_y = ky && (y & 1), two_z = kz && (z & 1);
    T ty[2];
    for (int jz = 0; jz <= two_z; jz++) {
        T tx[2];
        for (int jy = 0; jy <= two_y; jy++) {
            const T *p = ec + (Z + jz) * cq.sz + (Y + jy) * cq.sy + X;
            tx[jy] = two_x ? hf * (p[0] + p[1]) : p[0];
        }
        ty[jz] = two_y ? hf * (tx[0] + tx[1]) : tx[0];
    }
    const int64_t i = z * fq.sz + y * fq.sy + x;
    uf[i] = uf[i] + (two_z ? hf * (ty[0] + ty[1]) : ty[0]);
}

pyr_status_t launched(mg_ctx *c)
{
    MG_TRY(c, cudaGetLastError());
    return PYR_OK;
}

pyr_status_t cu_create(int device, int threads, pyr_precision_t precision, void **out)
{
    (void)threads;
    mg_ctx *c = (mg_ctx *)calloc(1, sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    c->precision = precision;
    c->device = device;
    c->by = pyrcu::issuer_t{device, "multigrid on the GPU", "use a smaller grid or backend = cpu", NULL};
    pyr_options_t ro;
    pyr_options_default(&ro);
    ro.backend = PYR_BACKEND_CUDA;
    ro.device = device;
    void *rt = NULL;
    pyr_status_t st = pyr_device_cuda.create(&ro, precision, &rt);
    if (st != PYR_OK) {
        free(c);
        return st;
    }
    c->rt = (pyrcu::ctx_t *)rt;
    st = pyrcu::check_queue(c->rt, 0);
    if (st == PYR_OK) {
        c->stream = c->rt->stream[0];
        st = pyr_device_cuda.dev_alloc(c->rt, sizeof(unsigned long long), (void **)&c->maxbits);
    }
    if (st != PYR_OK) {
        pyr_device_cuda.destroy(c->rt);
        free(c);
        return st;
    }
    *out = c;
    return PYR_OK;
}

void cu_destroy(void *ctx)
{
    mg_ctx *c = (mg_ctx *)ctx;
    if (!c) return;
    cudaStreamSynchronize(c->stream);
    if (c->down) {
        cudaStreamSynchronize(c->down);
        cudaStreamDestroy(c->down);
        cudaEventDestroy(c->issued);
    }
    if (c->up) {
        cudaStreamSynchronize(c->up);
        cudaStreamDestroy(c->up);
        cudaEventDestroy(c->before);
        cudaEventDestroy(c->landed);
    }
    if (c->maxbits) pyr_device_cuda.dev_free(c->rt, c->maxbits);
    pyr_device_cuda.destroy(c->rt); /* back to the context cache */
    free(c);
}

pyr_status_t cu_alloc(void *ctx, size_t bytes, void **buf)
{
    mg_ctx *c = (mg_ctx *)ctx;
    PYR_TRY(pyr_device_cuda.dev_alloc(c->rt, bytes ? bytes : 1, buf));
    MG_TRY(c, cudaMemsetAsync(*buf, 0, bytes, c->stream));
    return PYR_OK;
}

void cu_release(void *ctx, void *buf)
{
    mg_ctx *c = (mg_ctx *)ctx;
    cudaStreamSynchronize(c->stream);
    pyr_device_cuda.dev_free(c->rt, buf);
}

pyr_status_t cu_upload(void *ctx, void *dst, const void *src, size_t bytes)
{
    mg_ctx *c = (mg_ctx *)ctx;
    MG_TRY(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream));
    MG_TRY(c, cudaStreamSynchronize(c->stream));
    return PYR_OK;
}

pyr_status_t cu_download(void *ctx, void *dst, const void *src, size_t bytes)
{
    mg_ctx *c = (mg_ctx *)ctx;
    MG_TRY(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream));
    MG_TRY(c, cudaStreamSynchronize(c->stream));
    return PYR_OK;
}

pyr_status_t cu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    mg_ctx *c = (mg_ctx *)ctx;
    MG_TRY(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream));
    return PYR_OK;
}

pyr_status_t cu_zero(void *ctx, void *buf, size_t bytes)
{
    mg_ctx *c = (mg_ctx *)ctx;
    MG_TRY(c, cudaMemsetAsync(buf, 0, bytes, c->stream));
    return PYR_OK;
}

template <typename T>
pyr_status_t smooth_t(mg_ctx *c, const pyr_mg_geom_t *g, const void *u, const void *f, void *out, double gm, double w, int first)
{
    const geo_t q = geo_of(g);
    smooth_k<T><<<grid_of(q), BX, 0, c->stream>>>(q, (const T *)u, (const T *)f, (T *)out, (T)g->c[0], (T)g->c[1], (T)g->c[2], (T)g->d,
                                                   (T)gm, (T)w, gm == 1.0, first);
    return launched(c);
}

pyr_status_t cu_smooth(void *ctx, const pyr_mg_geom_t *g, const void *u, const void *f, void *out, double gm, double w, int first)
{
    mg_ctx *c = (mg_ctx *)ctx;
    return c->precision == PYR_DOUBLE ? smooth_t<double>(c, g, u, f, out, gm, w, first) : smooth_t<float>(c, g, u, f, out, gm, w, first);
}

template <typename T>
pyr_status_t residual_t(mg_ctx *c, const pyr_mg_geom_t *g, const void *u, const void *f, void *r, double *maxabs)
{
    const geo_t q = geo_of(g);
    if (maxabs) MG_TRY(c, cudaMemsetAsync(c->maxbits, 0, sizeof *c->maxbits, c->stream));
    residual_k<T><<<grid_of(q), BX, 0, c->stream>>>(q, (const T *)u, (const T *)f, (T *)r, (T)g->c[0], (T)g->c[1], (T)g->c[2], (T)g->D,
                                                     maxabs ? c->maxbits : nullptr);
    PYR_TRY(launched(c));
    if (maxabs) {
        unsigned long long bits = 0;
        MG_TRY(c, cudaMemcpyAsync(&bits, c->maxbits, sizeof bits, cudaMemcpyDeviceToHost, c->stream));
        MG_TRY(c, cudaStreamSynchronize(c->stream));
        double v;
        memcpy(&v, &bits, sizeof v);
        *maxabs = isnan(v) ? NAN : v;
    }
    return PYR_OK;
}

pyr_status_t cu_residual(void *ctx, const pyr_mg_geom_t *g, const void *u, const void *f, void *r, double *maxabs)
{
    mg_ctx *c = (mg_ctx *)ctx;
    return c->precision == PYR_DOUBLE ? residual_t<double>(c, g, u, f, r, maxabs) : residual_t<float>(c, g, u, f, r, maxabs);
}

pyr_status_t cu_restrict(void *ctx, const pyr_mg_geom_t *fine, const int k[3], const void *rf, const pyr_mg_geom_t *coarse, void *fc)
{
    mg_ctx *c = (mg_ctx *)ctx;
    const geo_t fq = geo_of(fine), cq = geo_of(coarse);
    if (c->precision == PYR_DOUBLE)
        restrict_k<double><<<grid_of(cq), BX, 0, c->stream>>>(fq, cq, k[0], k[1], k[2], (const double *)rf, (double *)fc);
    else
        restrict_k<float><<<grid_of(cq), BX, 0, c->stream>>>(fq, cq, k[0], k[1], k[2], (const float *)rf, (float *)fc);
    return launched(c);
}

pyr_status_t cu_prolong(void *ctx, const pyr_mg_geom_t *coarse, const int k[3], const void *ec, const pyr_mg_geom_t *fine, void *uf)
{
    mg_ctx *c = (mg_ctx *)ctx;
    const geo_t cq = geo_of(coarse), fq = geo_of(fine);
    if (c->precision == PYR_DOUBLE)
        prolong_k<double><<<grid_of(fq), BX, 0, c->stream>>>(cq, fq, k[0], k[1], k[2], (const double *)ec, (double *)uf);
    else
        prolong_k<float><<<grid_of(fq), BX, 0, c->stream>>>(cq, fq, k[0], k[1], k[2], (const float *)ec, (float *)uf);
    return launched(c);
}

/* A download on a stream of its own, after everything issued on the main one so far: it overlaps the next
 * uploads (the bus carries both directions at once) and kernels. */
pyr_status_t cu_download_async(void *ctx, void *dst, const void *src, size_t bytes)
{
    mg_ctx *c = (mg_ctx *)ctx;
    if (!c->down) {
        MG_TRY(c, cudaSetDevice(c->device));
        MG_TRY(c, cudaStreamCreateWithFlags(&c->down, cudaStreamNonBlocking));
        if (cudaEventCreateWithFlags(&c->issued, cudaEventDisableTiming) != cudaSuccess) {
            cudaStreamDestroy(c->down);
            c->down = NULL;
            MG_TRY(c, cudaGetLastError());
        }
    }
    MG_TRY(c, cudaEventRecord(c->issued, c->stream));
    MG_TRY(c, cudaStreamWaitEvent(c->down, c->issued, 0));
    MG_TRY(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->down));
    return PYR_OK;
}

pyr_status_t cu_download_wait(void *ctx)
{
    mg_ctx *c = (mg_ctx *)ctx;
    if (c->down) MG_TRY(c, cudaStreamSynchronize(c->down));
    return PYR_OK;
}

/* An upload on a stream of its own, after everything issued on the main one so far: the next slab goes up while
 * this one's kernels run. */
pyr_status_t cu_upload_async(void *ctx, void *dst, const void *src, size_t bytes)
{
    mg_ctx *c = (mg_ctx *)ctx;
    if (!c->up) {
        MG_TRY(c, cudaSetDevice(c->device));
        MG_TRY(c, cudaStreamCreateWithFlags(&c->up, cudaStreamNonBlocking));
        if (cudaEventCreateWithFlags(&c->before, cudaEventDisableTiming) != cudaSuccess) {
            cudaStreamDestroy(c->up);
            c->up = NULL;
            MG_TRY(c, cudaGetLastError());
        }
        if (cudaEventCreateWithFlags(&c->landed, cudaEventDisableTiming) != cudaSuccess) {
            cudaEventDestroy(c->before);
            cudaStreamDestroy(c->up);
            c->up = NULL;
            MG_TRY(c, cudaGetLastError());
        }
    }
    MG_TRY(c, cudaEventRecord(c->before, c->stream));
    MG_TRY(c, cudaStreamWaitEvent(c->up, c->before, 0));
    MG_TRY(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->up));
    MG_TRY(c, cudaEventRecord(c->landed, c->up));
    return PYR_OK;
}

pyr_status_t cu_upload_join(void *ctx)
{
    mg_ctx *c = (mg_ctx *)ctx;
    if (c->up) MG_TRY(c, cudaStreamWaitEvent(c->stream, c->landed, 0));
    return PYR_OK;
}

pyr_status_t cu_settle(void *ctx)
{
    mg_ctx *c = (mg_ctx *)ctx;
    if (c->up) MG_TRY(c, cudaStreamSynchronize(c->up));
    if (c->down) MG_TRY(c, cudaStreamSynchronize(c->down));
    return PYR_OK;
}

/* Pinned host memory for the streamed levels: transfers at the bus's speed, without staging. */
pyr_status_t cu_host_alloc(void *ctx, size_t bytes, void **buf)
{
    mg_ctx *c = (mg_ctx *)ctx;
    PYR_TRY(pyr_device_cuda.host_alloc(c->rt, bytes, buf));
    memset(*buf, 0, bytes);
    return PYR_OK;
}

void cu_host_free(void *ctx, void *buf) { pyr_device_cuda.host_free(((mg_ctx *)ctx)->rt, buf); }

pyr_status_t cu_host_pin(void *ctx, void *buf, size_t bytes)
{
    mg_ctx *c = (mg_ctx *)ctx;
    return pyr_device_cuda.host_register ? pyr_device_cuda.host_register(c->rt, buf, bytes) : PYR_OK;
}

void cu_host_unpin(void *ctx, void *buf)
{
    mg_ctx *c = (mg_ctx *)ctx;
    if (pyr_device_cuda.host_unregister) pyr_device_cuda.host_unregister(c->rt, buf);
}

} // namespace

extern "C" const pyr_mg_ops_t pyr_mg_ops_cuda = {
    PYR_BACKEND_CUDA, cu_create,   cu_destroy,    cu_alloc,      cu_release,  cu_upload, cu_download,
    cu_copy,          cu_zero,     cu_smooth,     cu_residual,   cu_restrict, cu_prolong, cu_host_alloc,
    cu_host_free,     cu_host_pin, cu_host_unpin, cu_download_async, cu_download_wait, cu_upload_async, cu_upload_join,
    cu_settle,
};
