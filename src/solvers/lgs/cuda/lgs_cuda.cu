/* CUDA red–black line Gauss–Seidel (block rows of one colour in parallel).
 *
 * Layout: every n×mpad array is stored row by row, and inside a row each
 * segment of S = 32·J elements is interleaved: natural element
 * (segment s, lane t, j) lives at s·S + j·32 + t.  Lane t of a warp owns J
 * consecutive unknowns of each segment, so a warp's load of "element j of
 * every lane" reads 32 consecutive doubles (one 256-byte transaction).
 *
 * One warp updates one block row: it assembles the right side from the
 * neighbour rows, runs the forward Thomas recurrence as a per-segment scan of
 * affine maps (lgs_internal.h), keeps the forward values in shared memory (in
 * global scratch for very long rows), runs the backward recurrence the same
 * way and writes the relaxed row — one fused kernel per colour.  Every a·b + c
 * is written with __dmul_rn/__dadd_rn, in lgs_cpu.c's order, so the iterates
 * equal the CPU red–black ones bit for bit.  Repeated iterations are replayed
 * from a CUDA graph to avoid per-launch overhead on small grids.
 *
 * It runs on the CUDA runtime (backend/cuda/cuda_internal.cuh): a context of
 * GPU 0 from the context cache gives its stream (queue 0), device memory
 * through the runtime's allocator and the checks of every call
 * (cuda_errors.cuh); registered as the cuda implementation
 * (lgs_internal.h pyr_lgs_impl_t). */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.cuh"
#include "solvers/lgs/lgs_internal.h"

#define FULL_MASK 0xffffffffu
#define GRAPH_ITERATIONS 64
#define LGS_DEVICE 0 /* the solver's options name no device: the first GPU */

/* Who makes the calls, for the messages of failed ones (cuda_errors.cuh). */
static const pyrcu::issuer_t lgs_by = {LGS_DEVICE, "line Gauss-Seidel on the GPU", "use a smaller system or backend = cpu", NULL};
#define CU_TRY(call) PYR_CU_BY(lgs_by, call)

struct kparams {
    int64_t n, m, mpad, nseg;
    double omega;
    const double *alpha, *ft, *cat, *cbt, *gam;
    const double *cC, *aC, *bC, *cA, *cB, *F;
    double *y, *scratch, *rows;
    int use_smem;
};

struct pyr_lgs_cuda {
    kparams p;
    int j, wpb;
    size_t smem;
    double *arrays[11];
    pyrcu::ctx_t *rt; /* the runtime's context: the stream, device memory */
    cudaStream_t stream;
    cudaGraphExec_t graph;
    int graph_iterations;
    double *y_padded; /* the caller's iterate: the initial values, and the result at download */
};
typedef struct pyr_lgs_cuda pyr_lgs_cuda_t;

__device__ __forceinline__ double dmul_(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double dadd_(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double dsub_(double a, double b) { return __dsub_rn(a, b); }

/* One warp per block row i = color + 2·r of the colour.  Reads alpha, ft,
 * cat, cbt, gam of row i and y of rows i±1 (and of row i when ω ≠ 1);
 * writes y of row i.  blockDim.x = 32·(warps per block). */
template <int J>
__global__ void lgs_rb_kernel(kparams p, int color)
{
    extern __shared__ double smem[];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    const int64_t r = (int64_t)blockIdx.x * (blockDim.x >> 5) + wib;
    const int64_t rows = (p.n - color + 1) / 2;
    if (r >= rows) return; /* the whole warp leaves together */
    const int64_t i = color + 2 * r;
    const int64_t mp = p.mpad;
    const int S = 32 * J;
    const size_t o = (size_t)i * (size_t)mp;
    const double *__restrict__ al = p.alpha + o;
    const double *__restrict__ ft = p.ft + o;
    const double *__restrict__ ca = p.cat + o;
    const double *__restrict__ cb = p.cbt + o;
    const double *__restrict__ ga = p.gam + o;
    double *yr = p.y + o;
    const double *yu = i > 0 ? yr - mp : nullptr;
    const double *yd = i < p.n - 1 ? yr + mp : nullptr;
    double *dp = p.use_smem ? smem + (size_t)wib * (size_t)mp : p.scratch + (size_t)r * (size_t)mp;

    double carry = 0.0;
    for (int64_t s = 0; s < p.nseg; s++) {
        const int64_t base = s * S + lane;
        double a[J], b[J];
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int64_t q = base + j * 32;
            a[j] = al[q];
            double bb = ft[q];
            if (yu) bb = dsub_(bb, dmul_(ca[q], yu[q]));
            if (yd) bb = dsub_(bb, dmul_(cb[q], yd[q]));
            b[j] = bb;
        }
        double A = a[0], B = b[0];
#pragma unroll
        for (int j = 1; j < J; j++) {
            B = dadd_(dmul_(a[j], B), b[j]);
            A = dmul_(a[j], A);
        }
#pragma unroll
        for (int off = 1; off < 32; off *= 2) {
            const double Ap = __shfl_up_sync(FULL_MASK, A, off);
            const double Bp = __shfl_up_sync(FULL_MASK, B, off);
            if (lane >= off) {
                B = dadd_(dmul_(A, Bp), B);
                A = dmul_(A, Ap);
            }
        }
        const double Ap = __shfl_up_sync(FULL_MASK, A, 1);
        const double Bp = __shfl_up_sync(FULL_MASK, B, 1);
        const double Al = __shfl_sync(FULL_MASK, A, 31);
        const double Bl = __shfl_sync(FULL_MASK, B, 31);
        double d = lane == 0 ? carry : dadd_(dmul_(Ap, carry), Bp);
#pragma unroll
        for (int j = 0; j < J; j++) {
            d = dadd_(dmul_(a[j], d), b[j]);
            dp[s * S + j * 32 + lane] = d;
        }
        carry = dadd_(dmul_(Al, carry), Bl);
    }

    carry = 0.0;
    const double omega = p.omega;
    for (int64_t s = p.nseg - 1; s >= 0; s--) {
        const int64_t base = s * S + lane;
        double g[J], dv[J];
#pragma unroll
        for (int j = 0; j < J; j++) {
            g[j] = ga[base + j * 32];
            dv[j] = dp[s * S + j * 32 + lane];
        }
        double A = g[J - 1], B = dv[J - 1];
#pragma unroll
        for (int j = J - 2; j >= 0; j--) {
            B = dadd_(dmul_(g[j], B), dv[j]);
            A = dmul_(g[j], A);
        }
#pragma unroll
        for (int off = 1; off < 32; off *= 2) {
            const double An = __shfl_down_sync(FULL_MASK, A, off);
            const double Bn = __shfl_down_sync(FULL_MASK, B, off);
            if (lane + off < 32) {
                B = dadd_(dmul_(A, Bn), B);
                A = dmul_(A, An);
            }
        }
        const double An = __shfl_down_sync(FULL_MASK, A, 1);
        const double Bn = __shfl_down_sync(FULL_MASK, B, 1);
        const double A0 = __shfl_sync(FULL_MASK, A, 0);
        const double B0 = __shfl_sync(FULL_MASK, B, 0);
        double v = lane == 31 ? carry : dadd_(dmul_(An, carry), Bn);
#pragma unroll
        for (int j = J - 1; j >= 0; j--) {
            v = dadd_(dmul_(g[j], v), dv[j]);
            const int64_t q = base + j * 32;
            if (omega == 1.0) {
                yr[q] = v;
            } else {
                const double old = yr[q];
                yr[q] = dadd_(old, dmul_(omega, dsub_(v, old)));
            }
        }
        carry = dadd_(dmul_(A0, carry), B0);
    }
}

template <int J>
__device__ __forceinline__ int64_t interleave(int64_t k)
{
    const int64_t S = 32 * J, rr = k % S;
    return k - rr + (rr % J) * 32 + rr / J;
}

/* One warp per block row (all rows): the row's residual sum of squares in
 * pyr_lgs_row_residual2's order, written to rows[i]. */
template <int J>
__global__ void lgs_residual_kernel(kparams p)
{
    const int lane = threadIdx.x & 31;
    const int64_t i = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (i >= p.n) return;
    const int64_t mp = p.mpad, m = p.m;
    const int S = 32 * J;
    const size_t o = (size_t)i * (size_t)mp;
    const double *y = p.y + o;
    double acc = 0.0;
    for (int64_t s = 0; s < p.nseg; s++) {
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int64_t k = s * S + lane * J + j;
            if (k >= m) continue;
            const int64_t q = s * S + j * 32 + lane;
            double v = 0.0;
            if (i > 0) v = dadd_(v, dmul_(p.cA[o + q], y[q - mp]));
            if (k > 0) v = dadd_(v, dmul_(p.aC[o + q], y[interleave<J>(k - 1)]));
            v = dadd_(v, dmul_(p.cC[o + q], y[q]));
            if (k < m - 1) v = dadd_(v, dmul_(p.bC[o + q], y[interleave<J>(k + 1)]));
            if (i < p.n - 1) v = dadd_(v, dmul_(p.cB[o + q], y[q + mp]));
            const double rr = dsub_(p.F[o + q], v);
            acc = dadd_(acc, dmul_(rr, rr));
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) acc = dadd_(acc, __shfl_down_sync(FULL_MASK, acc, off));
    if (lane == 0) p.rows[i] = acc;
}

/* ------------------------------------------------------------ host side */

/* The GPU the solver runs on, through the context cache (its shared state knows the name). */
static pyr_status_t lgs_probe(char *name, size_t name_size)
{
    pyr_device_t *gpu = NULL;
    PYR_TRY(pyr_device_acquire(PYR_BACKEND_CUDA, LGS_DEVICE, &gpu));
    const pyrcu::device_t *d = (const pyrcu::device_t *)pyr_device_shared(gpu);
    if (name && name_size) snprintf(name, name_size, "%s", d->name);
    pyr_device_release(gpu);
    return PYR_OK;
}

static int pick_j(int j) { return j == 1 || j == 2 || j == 4 || j == 8 ? j : 0; }

template <int J>
static pyr_status_t launch_sweep(pyr_lgs_cuda_t *c)
{
    for (int color = 0; color < 2; color++) {
        const int64_t rows = (c->p.n - color + 1) / 2;
        if (rows <= 0) continue;
        const unsigned blocks = (unsigned)((rows + c->wpb - 1) / c->wpb);
        lgs_rb_kernel<J><<<blocks, 32 * c->wpb, c->smem, c->stream>>>(c->p, color);
        CU_TRY(cudaGetLastError());
    }
    return PYR_OK;
}

static pyr_status_t sweep(pyr_lgs_cuda_t *c)
{
    switch (c->j) {
    case 1: return launch_sweep<1>(c);
    case 2: return launch_sweep<2>(c);
    case 4: return launch_sweep<4>(c);
    default: return launch_sweep<8>(c);
    }
}

template <int J>
static pyr_status_t allow_smem(size_t smem)
{
    CU_TRY(cudaFuncSetAttribute(lgs_rb_kernel<J>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    return PYR_OK;
}

static void lgs_destroy(pyr_lgs_cuda_t *c)
{
    if (!c) return;
    if (c->rt) {
        const pyr_device_ops_t *rt = &pyr_device_cuda;
        cudaSetDevice(LGS_DEVICE);
        if (c->stream) cudaStreamSynchronize(c->stream);
        if (c->graph) cudaGraphExecDestroy(c->graph);
        for (int a = 0; a < 11; a++) rt->dev_free(c->rt, c->arrays[a]);
        rt->dev_free(c->rt, c->p.y);
        rt->dev_free(c->rt, c->p.scratch);
        rt->dev_free(c->rt, c->p.rows);
        (void)cudaGetLastError();
        rt->destroy(c->rt); /* back to the context cache */
    }
    free(c);
}

/* Device memory through the runtime; out of memory names the sizes. */
static pyr_status_t device_alloc(pyr_lgs_cuda_t *c, double **ptr, size_t bytes, size_t total, const pyr_lgs_prep_t *prep)
{
    const pyr_status_t st = pyr_device_cuda.dev_alloc(c->rt, bytes, (void **)ptr);
    if (st != PYR_ERR_DEVICE_NOMEM) return st;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) (void)cudaGetLastError();
    return pyr_fail(PYR_ERR_DEVICE_NOMEM,
                    "out of GPU memory: a %lld x %lld system needs %.1f MiB on the GPU (13 arrays of %lld x "
                    "%lld doubles), %.1f MiB of %.1f MiB are free; use a smaller system or backend = cpu",
                    (long long)prep->n, (long long)prep->m, (double)total / 1048576.0, (long long)prep->n,
                    (long long)prep->mpad, (double)free_b / 1048576.0, (double)total_b / 1048576.0);
}

static pyr_status_t create_inner(pyr_lgs_cuda_t *c, const pyr_lgs_prep_t *prep, const double *y_padded,
                                 double *host)
{
    const int64_t n = prep->n, mp = prep->mpad;
    const size_t count = (size_t)n * (size_t)mp, bytes = count * sizeof(double);
    c->j = pick_j(prep->j);
    if (!c->j) return pyr_fail(PYR_ERR_INTERNAL, "line Gauss-Seidel: chunk J = %d not instantiated", prep->j);
    /* forward values of a row: shared memory when a row fits comfortably */
    const size_t row_bytes = (size_t)mp * sizeof(double);
    c->p.use_smem = row_bytes <= 96 * 1024;
    if (c->p.use_smem) {
        size_t w = (64 * 1024) / row_bytes;
        c->wpb = (int)(w < 1 ? 1 : w > 4 ? 4 : w);
        c->smem = (size_t)c->wpb * row_bytes;
    } else {
        c->wpb = 4;
        c->smem = 0;
    }
    pyr_options_t ro;
    pyr_options_default(&ro);
    ro.backend = PYR_BACKEND_CUDA;
    ro.device = LGS_DEVICE;
    void *rt = NULL;
    PYR_TRY(pyr_device_cuda.create(&ro, PYR_DOUBLE, &rt));
    c->rt = (pyrcu::ctx_t *)rt;
    PYR_TRY(pyrcu::check_queue(c->rt, 0));
    c->stream = c->rt->stream[0];
    const size_t rows_color = (size_t)((n + 1) / 2);
    const size_t total = 12 * bytes + (c->p.use_smem ? 0 : rows_color * row_bytes) + (size_t)n * sizeof(double);
    size_t free_b = 0, total_b = 0;
    CU_TRY(cudaMemGetInfo(&free_b, &total_b));
    if (total > free_b)
        return pyr_fail(PYR_ERR_DEVICE_NOMEM,
                        "out of GPU memory: a %lld x %lld system needs %.1f MiB on the GPU (12 arrays of %lld x "
                        "%lld doubles), only %.1f MiB of %.1f MiB are free; use a smaller system or backend = cpu",
                        (long long)n, (long long)prep->m, (double)total / 1048576.0, (long long)n, (long long)mp,
                        (double)free_b / 1048576.0, (double)total_b / 1048576.0);
    const double *src[11] = {prep->alpha, prep->ft, prep->cat, prep->cbt, prep->gam, prep->cC,
                             prep->aC,    prep->bC, prep->cA,  prep->cB,  prep->F};
    for (int a = 0; a < 12; a++) {
        double *dst = NULL;
        PYR_TRY(device_alloc(c, &dst, bytes, total, prep));
        if (a < 11)
            c->arrays[a] = dst;
        else
            c->p.y = dst;
        const double *from = a < 11 ? src[a] : y_padded;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < mp; k++)
                host[(size_t)i * (size_t)mp + (size_t)pyr_lgs_interleave(k, prep->j)] = from[(size_t)i * (size_t)mp + (size_t)k];
        /* on the solver's stream, so that its kernels follow the copy; from pageable memory the call returns once
         * `host` may be written again */
        CU_TRY(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, c->stream));
    }
    CU_TRY(cudaStreamSynchronize(c->stream));
    if (!c->p.use_smem) PYR_TRY(device_alloc(c, &c->p.scratch, rows_color * row_bytes, total, prep));
    PYR_TRY(device_alloc(c, &c->p.rows, (size_t)n * sizeof(double), total, prep));
    c->p.alpha = c->arrays[0];
    c->p.ft = c->arrays[1];
    c->p.cat = c->arrays[2];
    c->p.cbt = c->arrays[3];
    c->p.gam = c->arrays[4];
    c->p.cC = c->arrays[5];
    c->p.aC = c->arrays[6];
    c->p.bC = c->arrays[7];
    c->p.cA = c->arrays[8];
    c->p.cB = c->arrays[9];
    c->p.F = c->arrays[10];
    if (c->smem > 48 * 1024) {
        switch (c->j) {
        case 1: PYR_TRY(allow_smem<1>(c->smem)); break;
        case 2: PYR_TRY(allow_smem<2>(c->smem)); break;
        case 4: PYR_TRY(allow_smem<4>(c->smem)); break;
        default: PYR_TRY(allow_smem<8>(c->smem)); break;
        }
    }
    return PYR_OK;
}

/* Upload the prepared system and the padded n×mpad initial iterate (the
 * caller keeps both, and reads the iterate back from y_padded at download). */
static pyr_status_t lgs_create(const pyr_lgs_prep_t *prep, double *y_padded, pyr_lgs_ordering_t ordering, double omega, int threads,
                               void **impl)
{
    (void)threads;
    *impl = NULL;
    if (ordering != PYR_LGS_REDBLACK)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "ordering = lexicographic is sequential and runs on the CPU only; use ordering = "
                                             "redblack with backend = cuda, or backend = cpu");
    pyr_lgs_cuda_t *c = (pyr_lgs_cuda_t *)calloc(1, sizeof *c);
    double *host = (double *)malloc((size_t)prep->n * (size_t)prep->mpad * sizeof(double));
    if (!c || !host) {
        free(c);
        free(host);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory staging the system for the GPU");
    }
    c->p.n = prep->n;
    c->p.m = prep->m;
    c->p.mpad = prep->mpad;
    c->p.nseg = prep->nseg;
    c->p.omega = omega;
    c->y_padded = y_padded;
    pyr_status_t st = create_inner(c, prep, y_padded, host);
    free(host);
    if (st != PYR_OK) {
        lgs_destroy(c);
        return st;
    }
    *impl = c;
    return PYR_OK;
}

static pyr_status_t build_graph(pyr_lgs_cuda_t *c)
{
    cudaGraph_t g = NULL;
    CU_TRY(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
    pyr_status_t st = PYR_OK;
    for (int it = 0; it < GRAPH_ITERATIONS && st == PYR_OK; it++) st = sweep(c);
    cudaError_t err = cudaStreamEndCapture(c->stream, &g);
    if (st != PYR_OK) {
        if (g) cudaGraphDestroy(g);
        return st;
    }
    CU_TRY(err);
    err = cudaGraphInstantiate(&c->graph, g, 0);
    cudaGraphDestroy(g);
    CU_TRY(err);
    c->graph_iterations = GRAPH_ITERATIONS;
    return PYR_OK;
}

/* `iterations` red–black iterations, waited for. */
static pyr_status_t lgs_iterate(void *impl, int64_t iterations)
{
    pyr_lgs_cuda_t *c = (pyr_lgs_cuda_t *)impl;
    CU_TRY(cudaSetDevice(LGS_DEVICE));
    if (iterations >= GRAPH_ITERATIONS && !c->graph) PYR_TRY(build_graph(c));
    while (c->graph && iterations >= c->graph_iterations) {
        CU_TRY(cudaGraphLaunch(c->graph, c->stream));
        iterations -= c->graph_iterations;
    }
    for (int64_t it = 0; it < iterations; it++) PYR_TRY(sweep(c));
    CU_TRY(cudaStreamSynchronize(c->stream));
    return PYR_OK;
}

template <int J>
static pyr_status_t launch_residual(pyr_lgs_cuda_t *c)
{
    const int wpb = 4;
    const unsigned blocks = (unsigned)((c->p.n + wpb - 1) / wpb);
    lgs_residual_kernel<J><<<blocks, 32 * wpb, 0, c->stream>>>(c->p);
    CU_TRY(cudaGetLastError());
    return PYR_OK;
}

/* Per-row residual sums of squares in pyr_lgs_row_residual2's order, and their sum in row order. */
static pyr_status_t lgs_residual(void *impl, double *rows, double *total)
{
    pyr_lgs_cuda_t *c = (pyr_lgs_cuda_t *)impl;
    CU_TRY(cudaSetDevice(LGS_DEVICE));
    switch (c->j) {
    case 1: PYR_TRY(launch_residual<1>(c)); break;
    case 2: PYR_TRY(launch_residual<2>(c)); break;
    case 4: PYR_TRY(launch_residual<4>(c)); break;
    default: PYR_TRY(launch_residual<8>(c)); break;
    }
    CU_TRY(cudaMemcpyAsync(rows, c->p.rows, (size_t)c->p.n * sizeof(double), cudaMemcpyDeviceToHost, c->stream));
    CU_TRY(cudaStreamSynchronize(c->stream));
    double t = 0.0;
    for (int64_t i = 0; i < c->p.n; i++) t += rows[i];
    *total = t;
    return PYR_OK;
}

/* The iterate back into the caller's padded array. */
static pyr_status_t lgs_download(void *impl)
{
    pyr_lgs_cuda_t *c = (pyr_lgs_cuda_t *)impl;
    double *y_padded = c->y_padded;
    const int64_t n = c->p.n, mp = c->p.mpad;
    const size_t count = (size_t)n * (size_t)mp;
    double *host = (double *)malloc(count * sizeof(double));
    if (!host) return pyr_fail(PYR_ERR_NOMEM, "out of host memory downloading the solution");
    cudaError_t err = cudaSetDevice(LGS_DEVICE);
    if (err == cudaSuccess) err = cudaMemcpyAsync(host, c->p.y, count * sizeof(double), cudaMemcpyDeviceToHost, c->stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(c->stream);
    if (err != cudaSuccess) {
        free(host);
        return pyrcu::fail_cuda(err, "copying the solution back (cudaMemcpyAsync)", lgs_by);
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < mp; k++)
            y_padded[(size_t)i * (size_t)mp + (size_t)k] = host[(size_t)i * (size_t)mp + (size_t)pyr_lgs_interleave(k, c->j)];
    free(host);
    return PYR_OK;
}

static void lgs_free(void *impl) { lgs_destroy((pyr_lgs_cuda_t *)impl); }

extern "C" const pyr_lgs_impl_t pyr_lgs_impl_cuda = {
    PYR_BACKEND_CUDA, 0, lgs_probe, lgs_create, lgs_iterate, lgs_residual, lgs_download, lgs_free,
};
