/* The straightforward FDTD code (bench/maxwell_peer.h): what a user writes
 * first and what gprMax's CUDA kernels do - an H kernel then an E kernel per
 * step, one thread per cell, each reading its neighbours from global memory;
 * CPML auxiliaries updated where a cell lies in a layer.  3D, or 2D TM or TE
 * where the grid has one plane. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "maxwell_peer.h"

namespace {

struct Grid {
    int nx, ny, nz;
    int64_t nxy;
    double rh[3];
    const double *prof; /* device */
    int64_t nmax;
};

template <typename T> __device__ __forceinline__ T layer(T d, T *psi, int64_t i, const Grid &g, int axis, int half, int pos)
{
    if (!psi) return d;
    const double *base = g.prof + (int64_t)((axis * 2 + half) * 4) * g.nmax;
    if (base[3 * g.nmax + pos] == 0) return d;
    const T p = (T)base[g.nmax + pos] * psi[i] + (T)base[2 * g.nmax + pos] * d;
    psi[i] = p;
    return d * (T)base[pos] + p;
}

/* psi[c][k]: component c's derivative along its k-th other axis ((c + 1 + k) % 3) */
template <typename T> struct Psi {
    T *p[3][2];
};

template <typename T>
__global__ void h_kernel(T *Hx, T *Hy, T *Hz, const T *Ex, const T *Ey, const T *Ez, Grid g, T dh, Psi<T> psi)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= g.nx || y >= g.ny) return;
    const int64_t i = z * g.nxy + (int64_t)y * g.nx + x;
    const T rx = (T)g.rh[0], ry = (T)g.rh[1], rz = (T)g.rh[2];
    if (y < g.ny - 1 && z < g.nz - 1) {
        const T a = layer((Ez[i + g.nx] - Ez[i]) * ry, psi.p[0][0], i, g, 1, 1, y);
        const T b = layer((Ey[i + g.nxy] - Ey[i]) * rz, psi.p[0][1], i, g, 2, 1, z);
        Hx[i] -= dh * (a - b);
    }
    if (x < g.nx - 1 && z < g.nz - 1) {
        const T a = layer((Ex[i + g.nxy] - Ex[i]) * rz, psi.p[1][0], i, g, 2, 1, z);
        const T b = layer((Ez[i + 1] - Ez[i]) * rx, psi.p[1][1], i, g, 0, 1, x);
        Hy[i] -= dh * (a - b);
    }
    if (x < g.nx - 1 && y < g.ny - 1) {
        const T a = layer((Ey[i + 1] - Ey[i]) * rx, psi.p[2][0], i, g, 0, 1, x);
        const T b = layer((Ex[i + g.nx] - Ex[i]) * ry, psi.p[2][1], i, g, 1, 1, y);
        Hz[i] -= dh * (a - b);
    }
}

template <typename T>
__global__ void e_kernel(T *Ex, T *Ey, T *Ez, const T *Hx, const T *Hy, const T *Hz, Grid g, T ca, const T *cb_node, T cb0, Psi<T> psi)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= g.nx - 1 || y >= g.ny - 1 || z >= g.nz - 1) return;
    const int64_t i = z * g.nxy + (int64_t)y * g.nx + x;
    const T rx = (T)g.rh[0], ry = (T)g.rh[1], rz = (T)g.rh[2];
    const T cb = cb_node ? cb_node[i] : cb0;
    if (y > 0 && z > 0) {
        const T a = layer((Hz[i] - Hz[i - g.nx]) * ry, psi.p[0][0], i, g, 1, 0, y);
        const T b = layer((Hy[i] - Hy[i - g.nxy]) * rz, psi.p[0][1], i, g, 2, 0, z);
        Ex[i] = ca * Ex[i] + cb * (a - b);
    }
    if (x > 0 && z > 0) {
        const T a = layer((Hx[i] - Hx[i - g.nxy]) * rz, psi.p[1][0], i, g, 2, 0, z);
        const T b = layer((Hz[i] - Hz[i - 1]) * rx, psi.p[1][1], i, g, 0, 0, x);
        Ey[i] = ca * Ey[i] + cb * (a - b);
    }
    if (x > 0 && y > 0) {
        const T a = layer((Hy[i] - Hy[i - 1]) * rx, psi.p[2][0], i, g, 0, 0, x);
        const T b = layer((Hx[i] - Hx[i - g.nx]) * ry, psi.p[2][1], i, g, 1, 0, y);
        Ez[i] = ca * Ez[i] + cb * (a - b);
    }
}

/* The 2D modes (nz = 1): TM's Hx, Hy from Ez and Ez from them; TE's Hz
 * from Ex, Ey and they from it (pyrgrid's update ranges: a component is
 * updated where its differences stay on the grid, and E not on the walls
 * across it). */
template <typename T, bool TE>
__global__ void h_kernel_2d(T *Hx, T *Hy, T *Hz, const T *Ex, const T *Ey, const T *Ez, Grid g, T dh, Psi<T> psi)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= g.nx || y >= g.ny) return;
    const int64_t i = (int64_t)y * g.nx + x;
    const T rx = (T)g.rh[0], ry = (T)g.rh[1];
    if (TE) {
        if (x < g.nx - 1 && y < g.ny - 1) {
            const T a = layer((Ey[i + 1] - Ey[i]) * rx, psi.p[2][0], i, g, 0, 1, x);
            const T b = layer((Ex[i + g.nx] - Ex[i]) * ry, psi.p[2][1], i, g, 1, 1, y);
            Hz[i] -= dh * (a - b);
        }
    } else {
        if (y < g.ny - 1) Hx[i] -= dh * layer((Ez[i + g.nx] - Ez[i]) * ry, psi.p[0][0], i, g, 1, 1, y);
        if (x < g.nx - 1) Hy[i] += dh * layer((Ez[i + 1] - Ez[i]) * rx, psi.p[1][1], i, g, 0, 1, x);
    }
}

template <typename T, bool TE>
__global__ void e_kernel_2d(T *Ex, T *Ey, T *Ez, const T *Hx, const T *Hy, const T *Hz, Grid g, T ca, const T *cb_node, T cb0, Psi<T> psi)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= g.nx || y >= g.ny) return;
    const int64_t i = (int64_t)y * g.nx + x;
    const T rx = (T)g.rh[0], ry = (T)g.rh[1];
    const T cb = cb_node ? cb_node[i] : cb0;
    if (TE) {
        if (y > 0 && y < g.ny - 1) Ex[i] = ca * Ex[i] + cb * layer((Hz[i] - Hz[i - g.nx]) * ry, psi.p[0][0], i, g, 1, 0, y);
        if (x > 0 && x < g.nx - 1) Ey[i] = ca * Ey[i] - cb * layer((Hz[i] - Hz[i - 1]) * rx, psi.p[1][1], i, g, 0, 0, x);
    } else if (x > 0 && y > 0 && x < g.nx - 1 && y < g.ny - 1) {
        const T a = layer((Hy[i] - Hy[i - 1]) * rx, psi.p[2][0], i, g, 0, 0, x);
        const T b = layer((Hx[i] - Hx[i - g.nx]) * ry, psi.p[2][1], i, g, 1, 0, y);
        Ez[i] = ca * Ez[i] + cb * (a - b);
    }
}

template <typename T> __global__ void add_source(T *f, int64_t i, double a) { f[i] += (T)a; }

double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define TRY(x)                                                                                                                             \
    do {                                                                                                                                   \
        cudaError_t e_ = (x);                                                                                                              \
        if (e_ != cudaSuccess) {                                                                                                           \
            snprintf(err, errsize, "%s: %s", #x, cudaGetErrorString(e_));                                                                  \
            rc = 1;                                                                                                                        \
            goto done;                                                                                                                     \
        }                                                                                                                                  \
    } while (0)

template <typename T> int run(const peer_problem_t *q, double *loop, double *all, char *err, size_t errsize)
{
    int rc = 0;
    const double t0 = now_s();
    const int64_t count = q->n[0] * q->n[1] * q->n[2];
    const size_t bytes = (size_t)count * sizeof(T);
    T *f[6] = {NULL}, *cb = NULL;
    Psi<T> psi;
    memset(&psi, 0, sizeof psi);
    double *prof = NULL;
    Grid g;
    g.nx = (int)q->n[0];
    g.ny = (int)q->n[1];
    g.nz = (int)q->n[2];
    g.nxy = q->n[0] * q->n[1];
    for (int a = 0; a < 3; a++) g.rh[a] = q->rh[a];
    g.nmax = q->naux / 24;
    g.prof = NULL;
    const dim3 block(32, 8), grid((unsigned)((g.nx + 31) / 32), (unsigned)((g.ny + 7) / 8), (unsigned)g.nz);
    double t1 = 0;
    const bool flat = g.nz == 1; /* 2D: the mode's three components and the four psi they use */
    for (int c = 0; c < 6; c++) {
        if (flat && (q->te ? c == 2 || c == 3 || c == 4 : c == 0 || c == 1 || c == 5)) continue;
        TRY(cudaMalloc(&f[c], bytes));
        TRY(cudaMemset(f[c], 0, bytes));
    }
    if (q->cb) {
        TRY(cudaMalloc(&cb, bytes));
        TRY(cudaMemcpy(cb, q->cb, bytes, cudaMemcpyHostToDevice));
    }
    if (q->prof) {
        TRY(cudaMalloc(&prof, (size_t)q->naux * sizeof(double)));
        TRY(cudaMemcpy(prof, q->prof, (size_t)q->naux * sizeof(double), cudaMemcpyHostToDevice));
        g.prof = prof;
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 2; k++) {
                if (flat && c + k == 1) continue; /* (psi.p[0][1], p[1][0]: derivatives along z) */
                TRY(cudaMalloc(&psi.p[c][k], 2 * bytes)); /* E's and H's */
                TRY(cudaMemset(psi.p[c][k], 0, 2 * bytes));
            }
    }
    {
        Psi<T> pe = psi, ph = psi;
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 2; k++) ph.p[c][k] = psi.p[c][k] ? psi.p[c][k] + count : NULL;
        TRY(cudaDeviceSynchronize());
        t1 = now_s();
        for (int64_t s = 0; s < q->steps; s++) {
            if (flat && q->te) {
                h_kernel_2d<T, true><<<grid, block>>>(f[3], f[4], f[5], f[0], f[1], f[2], g, (T)q->dh0, ph);
                e_kernel_2d<T, true><<<grid, block>>>(f[0], f[1], f[2], f[3], f[4], f[5], g, (T)q->ca0, cb, (T)q->cb0, pe);
            } else if (flat) {
                h_kernel_2d<T, false><<<grid, block>>>(f[3], f[4], f[5], f[0], f[1], f[2], g, (T)q->dh0, ph);
                e_kernel_2d<T, false><<<grid, block>>>(f[0], f[1], f[2], f[3], f[4], f[5], g, (T)q->ca0, cb, (T)q->cb0, pe);
            } else {
                h_kernel<T><<<grid, block>>>(f[3], f[4], f[5], f[0], f[1], f[2], g, (T)q->dh0, ph);
                e_kernel<T><<<grid, block>>>(f[0], f[1], f[2], f[3], f[4], f[5], g, (T)q->ca0, cb, (T)q->cb0, pe);
            }
            if (q->amp && f[q->src_comp]) add_source<T><<<1, 1>>>(f[q->src_comp], q->src_index, q->amp[s]);
        }
        TRY(cudaGetLastError());
        TRY(cudaDeviceSynchronize());
        *loop = now_s() - t1;
        for (int c = 0; c < 6; c++)
            if (q->out[c] && f[c]) TRY(cudaMemcpy(q->out[c], f[c], bytes, cudaMemcpyDeviceToHost));
    }
done:
    for (int c = 0; c < 6; c++) cudaFree(f[c]);
    cudaFree(cb);
    cudaFree(prof);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 2; k++) cudaFree(psi.p[c][k]);
    *all = now_s() - t0;
    return rc;
}

} // namespace

extern "C" int pyr_bench_maxwell_peer(const peer_problem_t *q, double *loop, double *all, char *err, size_t errsize)
{
    return q->elem == 8 ? run<double>(q, loop, all, err, errsize) : run<float>(q, loop, all, err, errsize);
}
