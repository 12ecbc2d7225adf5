/* Kernel lab: the fused heat kernels of the CUDA backend alone, on one
 * in-core grid, against the one-step plain kernel (bit for bit), timed with
 * CUDA events.  A developer's tool for comparing kernel versions side by side
 * (each build of this file is one version); the figures users see come from
 * bench_heat / bench_incore, through pyr_execute.
 *
 *   kernel_lab 2|3 f|d NX NY [NZ] K STEPS [T [PAD]]   (PAD: elements added to the row pitch)
 *
 * Prints the kernel-only rate in Gcell/s (interior cells x steps / s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "backend/cuda/stencil_fused.cuh"
#include "backend/cuda/ops_heat.cuh"


#define CK(x)                                                                                                         \
    do {                                                                                                              \
        cudaError_t e_ = (x);                                                                                         \
        if (e_ != cudaSuccess) {                                                                                      \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                        \
            exit(1);                                                                                                  \
        }                                                                                                             \
    } while (0)

template <typename T> static int lab(int dims, int nx, int ny, int nz, int K, int steps, int tparam, int pad)
{
    const int64_t pitch = (nx + 31) / 32 * 32 + pad;
    pyr_klayout_t L;
    L.pitch = pitch;
    L.rows = ny;
    L.planes = dims == 3 ? nz : 1;
    const size_t n = (size_t)pitch * ny * L.planes;
    std::vector<T> h(n);
    for (size_t i = 0; i < n; i++) {
        uint64_t s = (uint64_t)i * 6364136223846793005ull + 1442695040888963407ull;
        s ^= s >> 29;
        h[i] = (T)((double)((s * 0xBF58476D1CE4E5B9ull) >> 11) * 0x1.0p-53);
    }
    T *a, *b, *ra, *rb;
    CK(cudaMalloc(&a, n * sizeof(T)));
    CK(cudaMalloc(&b, n * sizeof(T)));
    CK(cudaMalloc(&ra, n * sizeof(T)));
    CK(cudaMalloc(&rb, n * sizeof(T)));
    CK(cudaMemcpy(a, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, a, n * sizeof(T), cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(ra, a, n * sizeof(T), cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(rb, a, n * sizeof(T), cudaMemcpyDeviceToDevice));
    pyr_kbox_t box;
    box.lo[0] = 1;
    box.hi[0] = nx - 1;
    box.lo[1] = 1;
    box.hi[1] = ny - 1;
    box.lo[2] = dims == 3 ? 1 : 0;
    box.hi[2] = dims == 3 ? nz - 1 : 1;
    pyr_kbox_t boxes[PYR_CUDA_KMAX];
    for (int l = 0; l < K; l++) boxes[l] = box;
    HeatOp<T> op;
    op.rx = (T)0.1;
    op.ry = (T)0.13;
    op.rz = (T)0.07;
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    pyr_ktune_t tune;
    memset(&tune, 0, sizeof tune);
    tune.kmax = K;
    tune.nt2d = dims == 2 && tparam ? tparam : 256;
    tune.nty3d = dims == 3 && tparam ? tparam : 32;
    tune.sms = sms;
    /* check: 2K steps fused vs plain (2K launches), on grids of at most 2^28 values */
    if (n <= ((size_t)1 << 28)) {
        T *x = a, *y = b;
        for (int i = 0; i < 2; i++) {
            CK((fused_launch<T, (sizeof(T) == 4 ? 4 : 2), (sizeof(T) == 4 ? 4 : 2), HeatOp<T>, 15, 5>(dims, x, y, &L, boxes, K, op, &tune, NULL, 0)));
            T *t = x;
            x = y;
            y = t;
        }
        T *p = ra, *q = rb;
        for (int i = 0; i < 2 * K; i++) {
            CK((plain_launch<T, HeatOp<T>>(dims, p, q, &L, &box, op, 0)));
            T *t = p;
            p = q;
            q = t;
        }
        CK(cudaDeviceSynchronize());
        std::vector<T> g(n), r(n);
        CK(cudaMemcpy(g.data(), x, n * sizeof(T), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(r.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t xx = (int64_t)(i % pitch);
            if (xx >= nx) continue;
            if (memcmp(&g[i], &r[i], sizeof(T))) {
                if (!bad) first = i;
                bad++;
            }
        }
        if (bad) {
            printf("MISMATCH %zu nodes (first at %zu)\n", bad, first);
            return 1;
        }
    }
    const int launches = (steps + K - 1) / K;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int rep = 0; rep < 2; rep++) {
        T *x = a, *y = b;
        CK(cudaEventRecord(e0));
        for (int i = 0; i < launches; i++) {
            CK((fused_launch<T, (sizeof(T) == 4 ? 4 : 2), (sizeof(T) == 4 ? 4 : 2), HeatOp<T>, 15, 5>(dims, x, y, &L, boxes, K, op, &tune, NULL, 0)));
            T *t = x;
            x = y;
            y = t;
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        double cells = (double)(nx - 2) * (ny - 2) * (dims == 3 ? nz - 2 : 1);
        if (rep == 1)
            printf("%dD %s %dx%dx%d K=%d T=%d pitch=%lld: %.1f Gcell/s (%d steps in %.1f ms)\n", dims, sizeof(T) == 4 ? "float" : "double", nx, ny,
                   dims == 3 ? nz : 1, K, tparam, (long long)pitch, cells * launches * K / (ms * 1e-3) * 1e-9, launches * K, ms);
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(ra);
    cudaFree(rb);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s 2|3 f|d NX NY [NZ] K STEPS [T]\n", argv[0]);
        return 2;
    }
    int dims = atoi(argv[1]);
    int i = 3;
    int nx = atoi(argv[i++]), ny = atoi(argv[i++]), nz = dims == 3 ? atoi(argv[i++]) : 1;
    int K = atoi(argv[i++]), steps = atoi(argv[i++]);
    int T = i < argc ? atoi(argv[i]) : 0;
    i++;
    int pad = i < argc ? atoi(argv[i]) : 0; /* elements added to the row pitch (a multiple of 4) */
    if (argv[2][0] == 'd') return lab<double>(dims, nx, ny, nz, K, steps, T, pad);
    return lab<float>(dims, nx, ny, nz, K, steps, T, pad);
}
