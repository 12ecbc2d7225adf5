/* Why do block transfers out of a large pinned grid run slower than the
 * calibration's part-row boxes?  This probe times, on one 32768 x 32768
 * float grid (4 GiB, malloc'ed and registered as pyrgrid registers a user's
 * grid), the download and upload of:
 *   strips  64 strips of 512 whole rows, in order;
 *   blocks  the 8 x 8 blocks of 4096 x 4096, in order (each row 16 KiB of a
 *           128 KiB host row, as a 2D pyramid plan moves them);
 *   same    one block 64 times (what a best-of-N calibration sees: the GPU's
 *           translations of those pages stay cached);
 * first with 4 KiB pages, then with the grid advised to use transparent huge
 * pages (madvise MADV_HUGEPAGE before the first touch).
 *
 * And for cubes (xfer_probe 3d): 3D boxes moved alone and beside a kernel
 * that keeps every SM busy, with cudaMemcpy3DAsync and with the batch API
 * (cudaMemcpy3DBatchAsync) with and without its prefer-overlap flag.
 *
 *   xfer_probe [GiB]      (default 4)
 *   xfer_probe 3d */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CK(x)                                                                                                                      \
    do {                                                                                                                           \
        cudaError_t e_ = (x);                                                                                                      \
        if (e_ != cudaSuccess) {                                                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                                               \
            exit(1);                                                                                                               \
        }                                                                                                                          \
    } while (0)

/* Moves the boxes (x0, y0, w, h in elements) between host and device; returns GB/s. */
static double run(char *host, size_t nx, char *dev, size_t dpitch, const int (*box)[4], int nbox, int up, cudaStream_t s)
{
    double bytes = 0;
    CK(cudaStreamSynchronize(s));
    double t0 = now();
    for (int i = 0; i < nbox; i++) {
        size_t x0 = (size_t)box[i][0], y0 = (size_t)box[i][1], w = (size_t)box[i][2] * 4, h = (size_t)box[i][3];
        char *hp = host + (y0 * nx + x0) * 4;
        if (up) CK(cudaMemcpy2DAsync(dev, dpitch, hp, nx * 4, w, h, cudaMemcpyHostToDevice, s));
        else CK(cudaMemcpy2DAsync(hp, nx * 4, dev, dpitch, w, h, cudaMemcpyDeviceToHost, s));
        bytes += (double)w * (double)h;
    }
    CK(cudaStreamSynchronize(s));
    return bytes / (now() - t0) * 1e-9;
}

/* ---- 3D: cube boxes out of a 1024^3 float grid, alone and beside a kernel ---- */

__global__ void busy_kernel(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = a[i];
        v.x += 1.0f;
        b[i] = v;
    }
}

/* One cube copy by the chosen method: 0 cudaMemcpy3DAsync, 1 cudaMemcpy3DBatchAsync with the
 * prefer-overlap-with-compute flag, 2 the same batch without the flag. */
static cudaError_t copy3d(int method, char *host, size_t nx, size_t ny, char *dev, size_t dpitch, size_t drows, size_t w, size_t h,
                          size_t d, int up, cudaStream_t s)
{
    cudaPitchedPtr hp = make_cudaPitchedPtr(host, nx * 4, w * 4, ny);
    cudaPitchedPtr dp = make_cudaPitchedPtr(dev, dpitch, w * 4, drows);
    if (method == 0) {
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.srcPtr = up ? hp : dp;
        p.dstPtr = up ? dp : hp;
        p.extent = make_cudaExtent(w * 4, h, d);
        p.kind = up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        return cudaMemcpy3DAsync(&p, s);
    }
    cudaMemcpy3DBatchOp op;
    memset(&op, 0, sizeof op);
    cudaMemcpy3DOperand ho, dvo;
    memset(&ho, 0, sizeof ho);
    memset(&dvo, 0, sizeof dvo);
    ho.type = dvo.type = cudaMemcpyOperandTypePointer;
    ho.op.ptr.ptr = host;
    ho.op.ptr.rowLength = nx;
    ho.op.ptr.layerHeight = ny;
    ho.op.ptr.locHint.type = cudaMemLocationTypeHost;
    dvo.op.ptr.ptr = dev;
    dvo.op.ptr.rowLength = dpitch; /* bytes: pointer operands have 1-byte elements */
    dvo.op.ptr.layerHeight = drows;
    dvo.op.ptr.locHint.type = cudaMemLocationTypeDevice;
    dvo.op.ptr.locHint.id = 0;
    op.src = up ? ho : dvo;
    op.dst = up ? dvo : ho;
    op.extent = make_cudaExtent(w, h, d);
    op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    op.flags = method == 1 ? cudaMemcpyFlagPreferOverlapWithCompute : 0;
    (void)ho;
    return cudaMemcpy3DBatchAsync(1, &op, 0, s);
}

static int probe3d(void)
{
    const size_t n = 1024, c = 352; /* a cube with halos, as a 1 GiB budget's plan makes */
    size_t bytes = n * n * n * 4;
    char *host = NULL;
    if (posix_memalign((void **)&host, 4096, bytes)) return 1;
    memset(host, 1, bytes);
    CK(cudaHostRegister(host, bytes, cudaHostRegisterPortable));
    size_t dpitch = 384 * 4;
    char *dev = NULL;
    CK(cudaMalloc(&dev, dpitch * c * c));
    size_t nbig = (size_t)1 << 27; /* 2 GiB of float4 each */
    float4 *a = NULL, *b = NULL;
    CK(cudaMalloc(&a, nbig * sizeof(float4)));
    CK(cudaMalloc(&b, nbig * sizeof(float4)));
    cudaStream_t s, k;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&k, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    /* element bytes here: extent w counts elements of 1 byte for pointer operands (the batch API) */
    printf("3D: 8 cube boxes of %zu^3 floats (rows %zu B) in a %zu^3 grid; GB/s, best of 3\n", c, c * 4, n);
    static const char *const mname[3] = {"cudaMemcpy3DAsync", "3DBatch+overlap flag", "3DBatch, no flag"};
    for (int method = 0; method < 3; method++)
        for (int up = 0; up < 2; up++)
            for (int busy = 0; busy < 2; busy++) {
                double best = 0;
                cudaError_t err = cudaSuccess;
                for (int round = 0; round < 3 && err == cudaSuccess; round++) {
                    CK(cudaDeviceSynchronize());
                    if (busy)
                        for (int r = 0; r < 40; r++) busy_kernel<<<132 * 8, 256, 0, k>>>(a, b, nbig);
                    CK(cudaEventRecord(e0, s));
                    for (int i = 0; i < 8 && err == cudaSuccess; i++) {
                        size_t x0 = (i & 1) * 500, y0 = ((i >> 1) & 1) * 500, z0 = (i >> 2) * 500;
                        char *hp = host + ((z0 * n + y0) * n + x0) * 4;
                        size_t w = method ? c * 4 : c; /* batch: bytes */
                        err = copy3d(method, hp, method ? n * 4 : n, n, dev, method ? dpitch : dpitch, c, method ? w : c, c, c, up, s);
                    }
                    CK(cudaEventRecord(e1, s));
                    CK(cudaEventSynchronize(e1));
                    float ms = 0;
                    CK(cudaEventElapsedTime(&ms, e0, e1));
                    double gbs = 8.0 * c * c * c * 4 / (ms * 1e-3) * 1e-9;
                    if (gbs > best) best = gbs;
                    CK(cudaDeviceSynchronize());
                }
                if (err != cudaSuccess) {
                    printf("  %-22s %-8s %s: %s\n", mname[method], up ? "upload" : "download", busy ? "beside kernel" : "alone", cudaGetErrorString(err));
                    (void)cudaGetLastError();
                } else
                    printf("  %-22s %-8s %-14s %6.1f\n", mname[method], up ? "upload" : "download", busy ? "beside kernel" : "alone", best);
                fflush(stdout);
            }
    /* both directions at once: uploads on one stream, downloads on another (as two slots do) */
    {
        char *dev2 = NULL;
        CK(cudaMalloc(&dev2, dpitch * c * c));
        for (int contiguous = 0; contiguous < 2; contiguous++) {
            double best = 0;
            for (int round = 0; round < 3; round++) {
                CK(cudaDeviceSynchronize());
                CK(cudaEventRecord(e0, s));
                CK(cudaStreamWaitEvent(k, e0, 0));
                for (int i = 0; i < 8; i++) {
                    size_t x0 = (i & 1) * 500, y0 = ((i >> 1) & 1) * 500, z0 = (i >> 2) * 500;
                    char *hp = host + ((z0 * n + y0) * n + x0) * 4;
                    char *hq = host + (((z0 ^ 500) * n + y0) * n + x0) * 4;
                    if (contiguous) {
                        size_t len = c * c * c * 4;
                        CK(cudaMemcpyAsync(dev, host + (size_t)i * len, len, cudaMemcpyHostToDevice, s));
                        CK(cudaMemcpyAsync(host + (size_t)(i + 8) * len, dev2, len, cudaMemcpyDeviceToHost, k));
                    } else {
                        CK(copy3d(0, hp, n, n, dev, dpitch, c, c, c, c, 1, s));
                        CK(copy3d(0, hq, n, n, dev2, dpitch, c, c, c, c, 0, k));
                    }
                }
                cudaEvent_t e2;
                CK(cudaEventCreate(&e2));
                CK(cudaEventRecord(e2, k));
                CK(cudaStreamWaitEvent(s, e2, 0));
                CK(cudaEventRecord(e1, s));
                CK(cudaEventSynchronize(e1));
                cudaEventDestroy(e2);
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                double gbs = 8.0 * c * c * c * 4 / (ms * 1e-3) * 1e-9; /* per direction */
                if (gbs > best) best = gbs;
            }
            printf("  both directions at once, %-10s   %6.1f GB/s each way\n", contiguous ? "contiguous" : "3D boxes", best);
        }
        cudaFree(dev2);
    }
    /* the kernel alone, for reference: how long 40 launches take */
    CK(cudaEventRecord(e0, k));
    for (int r = 0; r < 40; r++) busy_kernel<<<132 * 8, 256, 0, k>>>(a, b, nbig);
    CK(cudaEventRecord(e1, k));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("  (the kernel burst lasts %.0f ms; the copies %.0f ms at 50 GB/s)\n", ms, 8.0 * c * c * c * 4 / 50e9 * 1e3);
    cudaFree(a);
    cudaFree(b);
    cudaFree(dev);
    CK(cudaHostUnregister(host));
    free(host);
    return 0;
}

int main(int argc, char **argv)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("no usable GPU\n");
        return 77;
    }
    if (argc > 1 && !strcmp(argv[1], "3d")) return probe3d();
    size_t gib = argc > 1 ? (size_t)atoi(argv[1]) : 4;
    size_t nx = 32768, ny = gib * 1024 * 1024 * 1024 / 4 / nx;
    size_t bytes = nx * ny * 4;
    int bs = 4096, sr = 512;
    static int strips[1024][4], blocks[1024][4], same[1024][4];
    int ns = 0, nb = 0;
    for (size_t y = 0; y + sr <= ny && ns < 1024; y += sr) strips[ns][0] = 0, strips[ns][1] = (int)y, strips[ns][2] = (int)nx, strips[ns++][3] = sr;
    for (size_t by = 0; by + bs <= ny; by += bs)
        for (size_t bx = 0; bx + bs <= nx && nb < 1024; bx += bs) blocks[nb][0] = (int)bx, blocks[nb][1] = (int)by, blocks[nb][2] = bs, blocks[nb++][3] = bs;
    for (int i = 0; i < nb; i++) memcpy(same[i], blocks[nb / 2], sizeof same[i]);
    char *dev = NULL;
    size_t dpitch = (size_t)bs * 4;
    size_t dbytes = (size_t)nx * 4 * sr > (dpitch + 512) * bs ? (size_t)nx * 4 * sr : (dpitch + 512) * bs;
    CK(cudaMalloc(&dev, dbytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("grid %zu x %zu float (%.1f GiB), %d strips of %d rows, %d blocks of %d^2; GB/s, best of 3 rounds\n", nx, ny,
           (double)bytes / (1 << 30), ns, sr, nb, bs);
    for (int huge = 0; huge < 2; huge++) {
        char *host = NULL;
        if (posix_memalign((void **)&host, 2 << 20, bytes)) {
            printf("no host memory\n");
            return 1;
        }
        int adv = huge ? madvise(host, bytes, MADV_HUGEPAGE) : 0;
        memset(host, 1, bytes);
        CK(cudaHostRegister(host, bytes, cudaHostRegisterPortable));
        for (int up = 0; up < 2; up++) {
            double r[3] = {0, 0, 0};
            for (int round = 0; round < 3; round++) {
                double a = run(host, nx, dev, nx * 4, strips, ns, up, s);
                double b = run(host, nx, dev, dpitch, blocks, nb, up, s);
                double c = run(host, nx, dev, dpitch, same, nb, up, s);
                if (a > r[0]) r[0] = a;
                if (b > r[1]) r[1] = b;
                if (c > r[2]) r[2] = c;
            }
            printf("%-10s %-8s strips %6.1f  blocks %6.1f  same block %6.1f\n", huge ? (adv ? "huge(fail)" : "huge") : "4k pages",
                   up ? "upload" : "download", r[0], r[1], r[2]);
        }
        if (!huge) {
            /* blocks as the executor moves a result: the box inside a wider device piece
             * (halos of 64 on each side), its host rows starting anywhere in a line */
            static int inner[1024][4];
            for (int i = 0; i < nb; i++) {
                memcpy(inner[i], blocks[i], sizeof inner[i]);
                inner[i][0] += 1; /* ragged host rows */
                inner[i][2] -= 128;
            }
            size_t wpitch = (size_t)(bs + 128) * 4;
            for (int up = 0; up < 2; up++) {
                double r[2] = {0, 0};
                for (int round = 0; round < 3; round++) {
                    double a = run(host, nx, dev, wpitch, blocks, nb, up, s);
                    double b = run(host, nx, dev, wpitch, inner, nb, up, s);
                    if (a > r[0]) r[0] = a;
                    if (b > r[1]) r[1] = b;
                }
                printf("4k pages   %-8s blocks, device rows strided %6.1f; and host rows ragged, 128 narrower %6.1f\n", up ? "upload" : "download", r[0], r[1]);
            }
        }
        CK(cudaHostUnregister(host));
        free(host);
    }
    cudaFree(dev);
    return 0;
}
