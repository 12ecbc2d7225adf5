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
 * And whether host memory traffic slows the copy engines (xfer_probe cpu):
 * the 2D blocks moved while T host threads copy 1 KiB rows between two other
 * buffers, as the executor's band writer does (pyr_host_copy_box).
 *
 * And the executor's 2D blocks pass replayed (xfer_probe replay): 8 x 8 blocks
 * of a 32769^2 float grid, height 64, each uploaded into a slot's piece,
 * touched by a kernel, its result downloaded, every operation timed alone
 * (as bench_stages' serial mode does), removing one ingredient at a time.
 *
 *   xfer_probe [GiB]      (default 4)
 *   xfer_probe 3d
 *   xfer_probe cpu
 * And the executor's 3D cubes pass, replayed overlapped (xfer_probe replay3d):
 * 4 x 4 x 4 cubes of a 1025^3 float grid, height 48, three slots in flight,
 * each slot's upload, kernel and download on its stream, the host waiting
 * for a slot before reusing it; ingredients removed one at a time.
 *
 *   xfer_probe replay
 *   xfer_probe replay3d */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <sys/mman.h>

#include "backend/cuda/stencil_fused.cuh" /* the real stencil kernels, for the replays */
#include "backend/cuda/ops_heat.cuh"
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
    /* uploads (and downloads) of the 8 boxes split over k streams at once, as the executor's
     * slots issue them: does the aggregate rate drop when several copies of one direction overlap? */
    {
        cudaStream_t ss[4];
        char *devs[4];
        for (int i = 0; i < 4; i++) {
            CK(cudaStreamCreateWithFlags(&ss[i], cudaStreamNonBlocking));
            CK(cudaMalloc(&devs[i], dpitch * c * c));
        }
        for (int up = 1; up >= 0; up--)
            for (int k = 1; k <= 4; k *= 2) {
                double best = 0;
                for (int round = 0; round < 3; round++) {
                    CK(cudaDeviceSynchronize());
                    double t0 = now();
                    for (int i = 0; i < 8; i++) {
                        size_t x0 = (i & 1) * 500, y0 = ((i >> 1) & 1) * 500, z0 = (i >> 2) * 500;
                        char *hp = host + ((z0 * n + y0) * n + x0) * 4;
                        CK(copy3d(0, hp, n, n, devs[i % k], dpitch, c, c, c, c, up, ss[i % k]));
                    }
                    CK(cudaDeviceSynchronize());
                    double gbs = 8.0 * c * c * c * 4 / (now() - t0) * 1e-9;
                    if (gbs > best) best = gbs;
                }
                printf("  %-8s split over %d stream(s) at once   %6.1f GB/s in all\n", up ? "uploads" : "downloads", k, best);
            }
        for (int i = 0; i < 4; i++) {
            cudaFree(devs[i]);
            cudaStreamDestroy(ss[i]);
        }
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

/* ---- host memory traffic beside the copies ---- */

typedef struct {
    char *src, *dst;
    size_t rows, row_bytes, pitch;
    volatile int *stop;
    double bytes;
} hog_t;

static void *hog_main(void *arg)
{
    hog_t *h = (hog_t *)arg;
    while (!*h->stop)
        for (size_t r = 0; r < h->rows && !*h->stop; r++) {
            memcpy(h->dst + r * h->pitch, h->src + r * h->pitch, h->row_bytes);
            h->bytes += (double)h->row_bytes;
        }
    return NULL;
}

static int probe_cpu(void)
{
    const size_t nx = 32768, ny = 16384, bytes = nx * ny * 4; /* 2 GiB grid */
    const int bs = 4096;
    static int blocks[64][4];
    int nb = 0;
    for (size_t by = 0; by + bs <= ny; by += bs)
        for (size_t bx = 0; bx + bs <= nx; bx += bs) blocks[nb][0] = (int)bx, blocks[nb][1] = (int)by, blocks[nb][2] = bs, blocks[nb++][3] = bs;
    char *host = NULL;
    if (posix_memalign((void **)&host, 4096, bytes)) return 1;
    memset(host, 1, bytes);
    CK(cudaHostRegister(host, bytes, cudaHostRegisterPortable));
    const size_t hog_bytes = (size_t)1 << 30; /* each of source and destination */
    char *hsrc = NULL, *hdst = NULL;
    CK(cudaHostAlloc((void **)&hsrc, hog_bytes, cudaHostAllocPortable)); /* band staging buffers are pinned */
    if (posix_memalign((void **)&hdst, 4096, hog_bytes)) return 1;
    memset(hsrc, 2, hog_bytes);
    memset(hdst, 3, hog_bytes);
    char *dev = NULL;
    size_t dpitch = (size_t)(bs + 128) * 4;
    CK(cudaMalloc(&dev, dpitch * bs));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("cpu: %d blocks of %d^2 floats out of a %zu x %zu pinned grid, while T host threads copy 1 KiB rows\n"
           "     (4 KiB apart) from a pinned buffer to a pageable one; GB/s, best of 3\n", nb, bs, nx, ny);
    static const int threads[] = {0, 1, 2, 4, 8, 16};
    for (int ti = 0; ti < 6; ti++) {
        int T = threads[ti];
        volatile int stop = 0;
        pthread_t th[16];
        hog_t hog[16];
        for (int i = 0; i < T; i++) {
            size_t share = hog_bytes / (size_t)T;
            hog[i].src = hsrc + (size_t)i * share;
            hog[i].dst = hdst + (size_t)i * share;
            hog[i].pitch = 4096;
            hog[i].row_bytes = 1024;
            hog[i].rows = share / 4096;
            hog[i].stop = &stop;
            hog[i].bytes = 0;
            pthread_create(&th[i], NULL, hog_main, &hog[i]);
        }
        double r[2] = {0, 0}, both = 0;
        double t0 = now();
        for (int round = 0; round < 3; round++)
            for (int up = 0; up < 2; up++) {
                double g = run(host, nx, dev, dpitch, blocks, nb, up, s);
                if (g > r[up]) r[up] = g;
            }
        /* both directions at once (two streams), as an overlapped pass runs */
        {
            cudaStream_t s2;
            char *dev2 = NULL;
            CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
            CK(cudaMalloc(&dev2, dpitch * bs));
            for (int round = 0; round < 3; round++) {
                CK(cudaDeviceSynchronize());
                double t1 = now();
                for (int i = 0; i < nb; i++) {
                    char *hp = host + ((size_t)blocks[i][1] * nx + (size_t)blocks[i][0]) * 4;
                    char *hq = host + ((size_t)blocks[nb - 1 - i][1] * nx + (size_t)blocks[nb - 1 - i][0]) * 4;
                    CK(cudaMemcpy2DAsync(dev, dpitch, hp, nx * 4, (size_t)bs * 4, bs, cudaMemcpyHostToDevice, s));
                    CK(cudaMemcpy2DAsync(hq, nx * 4, dev2, dpitch, (size_t)bs * 4, bs, cudaMemcpyDeviceToHost, s2));
                }
                CK(cudaDeviceSynchronize());
                double g = (double)nb * bs * bs * 4 / (now() - t1) * 1e-9;
                if (g > both) both = g;
            }
            cudaFree(dev2);
            cudaStreamDestroy(s2);
        }
        double dt = now() - t0;
        stop = 1;
        double moved = 0;
        for (int i = 0; i < T; i++) {
            pthread_join(th[i], NULL);
            moved += hog[i].bytes;
        }
        printf("  T=%2d  upload %6.1f  download %6.1f  both at once %6.1f each way   host copies %6.1f GB/s\n", T, r[1], r[0], both,
               moved / dt * 1e-9);
        fflush(stdout);
    }
    cudaFree(dev);
    cudaFreeHost(hsrc);
    free(hdst);
    CK(cudaHostUnregister(host));
    free(host);
    return 0;
}

/* ---- the executor's 2D blocks pass, replayed ---- */

/* Along one axis of N nodes cut into pieces of R result nodes: piece c's
 * result [r0, r1) (interior nodes only) and its source [s0, s1) with h
 * halo nodes each side, clipped to the grid, as the pyramid plans make them. */
static void axis_piece(size_t N, size_t R, size_t h, size_t c, size_t *r0, size_t *r1, size_t *s0, size_t *s1)
{
    *r0 = 1 + c * R;
    *r1 = *r0 + R < N - 1 ? *r0 + R : N - 1;
    *s0 = *r0 > h ? *r0 - h : 0;
    *s1 = *r1 + h < N ? *r1 + h : N;
}

__global__ void touch_kernel(const float *__restrict__ in, float *__restrict__ out, size_t n, int streaming)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = in[i] * 0.5f;
        if (streaming) __stcs(out + i, v);
        else out[i] = v;
    }
}

__global__ void read_kernel(const float4 *__restrict__ in, size_t n, float *sink)
{
    float acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) acc += in[i].x;
    if (acc == 12345.0f) *sink = acc;
}

static int probe_replay(void)
{
    const size_t N = 32769, h = 64;
    const int B = 8;
    const size_t R = (N - 2 + B - 1) / B;
    const size_t bytes = N * N * 4;
    char *grid_malloc = (char *)malloc(bytes), *grid_aligned = NULL;
    const size_t huge = (size_t)2 << 20, hbytes = (bytes + huge - 1) / huge * huge;
    /* "aligned": on 2 MiB boundaries and advised to use transparent huge pages */
    if (!grid_malloc || posix_memalign((void **)&grid_aligned, huge, hbytes)) return 1;
    int adv = madvise(grid_aligned, hbytes, MADV_HUGEPAGE);
    memset(grid_malloc, 1, bytes);
    memset(grid_aligned, 1, bytes);
    CK(cudaHostRegister(grid_malloc, bytes, cudaHostRegisterPortable));
    CK(cudaHostRegister(grid_aligned, bytes, cudaHostRegisterPortable));
    char *grid_pinned = NULL;
    CK(cudaHostAlloc((void **)&grid_pinned, bytes, cudaHostAllocPortable));
    memset(grid_pinned, 1, bytes);
    {
        FILE *m = fopen("/proc/self/smaps_rollup", "r");
        char line[256];
        while (m && fgets(line, sizeof line, m))
            if (!strncmp(line, "AnonHugePages", 13)) printf("(%s", line), printf(")\n");
        if (m) fclose(m);
    }
    const size_t pitch = ((R + 2 * h) * 4 + 127) / 128 * 128;
    float *layer[3][2];
    for (int s = 0; s < 3; s++)
        for (int l = 0; l < 2; l++) CK(cudaMalloc(&layer[s][l], pitch * (R + 2 * h)));
    const size_t nscratch = (size_t)1 << 26; /* 1 GiB of float4: more than the L2 many times over */
    float4 *scratch = NULL;
    float *sink = NULL;
    CK(cudaMalloc(&scratch, nscratch * sizeof(float4)));
    CK(cudaMalloc(&sink, sizeof(float)));
    CK(cudaMemset(scratch, 0, nscratch * sizeof(float4)));
    cudaStream_t st[3];
    for (int s = 0; s < 3; s++) CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    cudaEvent_t ev0, ev1;
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    if (adv) printf("(madvise MADV_HUGEPAGE failed: the huge-page rows below are 4 KiB pages)\n");
    printf("replay: 2D blocks pass, %d x %d blocks of %zu result nodes, height %zu, %zu^2 float grid; ms per pass,\n"
           "every operation timed alone (synchronised), best of 3\n", B, B, R, h, N);
    /* kernel: 0 none, 1 reads layer 0 and writes layer 1 (downloaded), 2 the same then a kernel reading
     * 256 MiB of scratch (evicts the L2), 3 reads layer 1 and writes layer 0, 4 as 1 with streaming stores,
     * 5 as 1 then a 256 MiB memset of scratch, 6 one block of 32 threads, 7 as 1 on another stream,
     * 8 as 1 over 1 MiB only, 9 a 1 ms host sleep instead, 10 as 1 then a 5 ms sleep, 11 read-only
     * over layer 0, 12 as 1 with the download as whole host rows.  aligned: 0 malloc, 1 huge pages,
     * 2 cudaHostAlloc.  queued: 1 downloads only, 2 uploads only, back to back; 3 whole-row downloads. */
    struct {
        const char *name;
        int nstreams, kernel, aligned, queued;
    } const V[] = {
        {"executor-like: 3 streams, kernel, malloc'ed grid", 3, 1, 0, 0},
        {"1 stream", 1, 1, 0, 0},
        {"no kernel", 3, 0, 0, 0},
        {"grid in huge pages", 3, 1, 1, 0},
        {"grid in huge pages, no kernel", 3, 0, 1, 0},
        {"grid from cudaHostAlloc", 3, 1, 2, 0},
        {"kernel, then a read of 256 MiB elsewhere", 3, 2, 0, 0},
        {"kernel writes the layer not downloaded", 3, 3, 0, 0},
        {"kernel with streaming stores (__stcs)", 3, 4, 0, 0},
        {"kernel, then a 256 MiB memset elsewhere", 3, 5, 0, 0},
        {"tiny kernel (one block of 32 threads)", 3, 6, 0, 0},
        {"kernel on another stream (synchronised)", 3, 7, 0, 0},
        {"kernel touching 1 MiB", 3, 8, 0, 0},
        {"no kernel, a 1 ms host sleep instead", 3, 9, 0, 0},
        {"kernel, then a 5 ms host sleep", 3, 10, 0, 0},
        {"read-only kernel over the piece (8 x 67 MB)", 3, 11, 0, 0},
        {"kernel; download as whole rows (same bytes)", 3, 12, 0, 0},
        {"no kernel; download as whole rows", 3, 0, 0, 3},
        {"downloads only, queued back to back", 3, 0, 0, 1},
        {"uploads only, queued back to back", 3, 0, 0, 2},
    };
    for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
        const int nstreams = V[v].nstreams, kernel = V[v].kernel, queued = V[v].queued;
        char *grid = V[v].aligned == 2 ? grid_pinned : V[v].aligned ? grid_aligned : grid_malloc;
        double best_up = 1e30, best_down = 1e30, best_comp = 1e30, best_gdown = 1e30;
        for (int round = 0; round < 3; round++) {
            double up = 0, down = 0, comp = 0, gdown = 0;
            CK(cudaDeviceSynchronize());
            double tq = now();
            for (int by = 0, t = 0; by < B; by++)
                for (int bx = 0; bx < B; bx++, t++) {
                    const int s = t % nstreams;
                    size_t rx0, rx1, sx0, sx1, ry0, ry1, sy0, sy1;
                    axis_piece(N, R, h, (size_t)bx, &rx0, &rx1, &sx0, &sx1);
                    axis_piece(N, R, h, (size_t)by, &ry0, &ry1, &sy0, &sy1);
                    char *d0 = (char *)layer[s][0], *d1 = (char *)layer[s][1];
                    if (queued != 1) {
                        double t0 = now();
                        CK(cudaMemcpy2DAsync(d0, pitch, grid + (sy0 * N + sx0) * 4, N * 4, (sx1 - sx0) * 4, sy1 - sy0,
                                             cudaMemcpyHostToDevice, st[s]));
                        if (!queued || queued == 3) CK(cudaStreamSynchronize(st[s]));
                        up += now() - t0;
                    }
                    if (kernel == 9) {
                        struct timespec ts = {0, 1000000};
                        nanosleep(&ts, NULL);
                    } else if (kernel && !queued) {
                        double t0 = now();
                        size_t n = kernel == 8 ? 262144 : pitch / 4 * (sy1 - sy0);
                        const float *in = (const float *)(kernel == 3 ? d1 : d0);
                        float *out = (float *)(kernel == 3 ? d0 : d1);
                        cudaStream_t ks = kernel == 7 ? st[(s + 1) % 3] : st[s];
                        if (kernel == 6) touch_kernel<<<1, 32, 0, ks>>>(in, out, 32, 0);
                        else if (kernel == 11)
                            for (int k = 0; k < 8; k++) read_kernel<<<132 * 8, 256, 0, ks>>>((const float4 *)in, n / 4, sink);
                        else
                            for (int k = 0; k < 8; k++) touch_kernel<<<132 * 8, 256, 0, ks>>>(in, out, n, kernel == 4);
                        CK(cudaStreamSynchronize(ks));
                        CK(cudaStreamSynchronize(st[s]));
                        comp += now() - t0;
                        if (kernel == 2) read_kernel<<<132 * 8, 256, 0, st[s]>>>(scratch, nscratch / 4, sink);
                        if (kernel == 5) CK(cudaMemsetAsync(scratch, t, nscratch * 4, st[s]));
                        CK(cudaStreamSynchronize(st[s]));
                        if (kernel == 10) {
                            struct timespec ts = {0, 5000000};
                            nanosleep(&ts, NULL);
                        }
                    }
                    if (queued != 2) {
                        double t0 = now();
                        char *src = d1 + (ry0 - sy0) * pitch + (rx0 - sx0) * 4;
                        if (!queued || queued == 3) CK(cudaEventRecord(ev0, st[s]));
                        if (kernel == 12 || queued == 3) {
                            /* the same bytes as whole host rows: a strip's download */
                            size_t rows = (rx1 - rx0) * (ry1 - ry0) / N;
                            CK(cudaMemcpyAsync(grid + (size_t)t % 8 * rows * N * 4, src, rows * N * 4, cudaMemcpyDeviceToHost, st[s]));
                        } else
                            CK(cudaMemcpy2DAsync(grid + (ry0 * N + rx0) * 4, N * 4, src, pitch, (rx1 - rx0) * 4, ry1 - ry0,
                                                 cudaMemcpyDeviceToHost, st[s]));
                        if (!queued || queued == 3) {
                            CK(cudaEventRecord(ev1, st[s]));
                            CK(cudaStreamSynchronize(st[s]));
                            float ms = 0;
                            CK(cudaEventElapsedTime(&ms, ev0, ev1));
                            gdown += ms * 1e-3;
                        }
                        down += now() - t0;
                    }
                }
            CK(cudaDeviceSynchronize());
            if (queued == 1 || queued == 2) (queued == 1 ? down : up) = now() - tq;
            if (up < best_up) best_up = up;
            if (down < best_down) best_down = down;
            if (comp < best_comp) best_comp = comp;
            if (gdown < best_gdown) best_gdown = gdown;
        }
        printf("  %-46s up %7.2f  comp %7.2f  down %7.2f (GPU events %7.2f)\n", V[v].name, best_up * 1e3, best_comp * 1e3,
               best_down * 1e3, best_gdown * 1e3);
        fflush(stdout);
    }
    for (int s = 0; s < 3; s++) {
        cudaFree(layer[s][0]);
        cudaFree(layer[s][1]);
        cudaStreamDestroy(st[s]);
    }
    cudaFree(scratch);
    cudaFree(sink);
    CK(cudaHostUnregister(grid_malloc));
    CK(cudaHostUnregister(grid_aligned));
    free(grid_malloc);
    free(grid_aligned);
    cudaFreeHost(grid_pinned);
    return 0;
}

struct span_t {
    float a, b;
};

static double union_ms(span_t *iv, int n)
{
    std::sort(iv, iv + n, [](const span_t &x, const span_t &y) { return x.a < y.a; });
    double busy = 0, lo = -1, hi = -1;
    for (int i = 0; i < n; i++) {
        if (iv[i].a > hi) {
            busy += hi - lo;
            lo = iv[i].a;
            hi = iv[i].b;
        } else if (iv[i].b > hi)
            hi = iv[i].b;
    }
    return busy + (hi - lo);
}

static int probe_replay3d(void)
{
    const size_t N = 1025, h = 48, C = 4;
    const size_t R = (N - 2 + C - 1) / C, S = R + 2 * h;
    const size_t bytes = N * N * N * 4;
    char *grid_malloc = (char *)malloc(bytes), *grid_pinned = NULL;
    if (!grid_malloc) return 1;
    memset(grid_malloc, 1, bytes);
    CK(cudaHostRegister(grid_malloc, bytes, cudaHostRegisterPortable));
    CK(cudaHostAlloc((void **)&grid_pinned, bytes, cudaHostAllocPortable));
    memset(grid_pinned, 1, bytes);
    const size_t pitch = (S * 4 + 127) / 128 * 128;
    float *layer[3][2];
    for (int s = 0; s < 3; s++)
        for (int l = 0; l < 2; l++) CK(cudaMalloc(&layer[s][l], pitch * S * S));
    cudaStream_t st[3];
    for (int s = 0; s < 3; s++) CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    const int T = (int)(C * C * C);
    cudaEvent_t e0, ua[64], ub[64], ka[64], kb[64], da[64], db[64];
    CK(cudaEventCreate(&e0));
    for (int t = 0; t < T; t++) {
        CK(cudaEventCreate(&ua[t]));
        CK(cudaEventCreate(&ub[t]));
        CK(cudaEventCreate(&ka[t]));
        CK(cudaEventCreate(&kb[t]));
        CK(cudaEventCreate(&da[t]));
        CK(cudaEventCreate(&db[t]));
    }
    printf("replay3d: %zu^3 cubes of %zu result nodes, height %zu, %zu^3 float grid, 3 slots; ms per pass (best of 3),\n"
           "busy = union of the operations' spans\n", C, R, h, N);
    struct {
        const char *name;
        int kernel, download, pinned, serial;
    } const V[] = {
        {"executor-like: upload, kernel, download", 1, 1, 0, 0},
        {"the real stencil (48 one-step launches)", 2, 1, 0, 0},
        {"the real stencil, no download", 2, 0, 0, 0},
        {"the real stencil, serial", 2, 1, 0, 1},
        {"no kernel", 0, 1, 0, 0},
        {"no download", 1, 0, 0, 0},
        {"uploads only", 0, 0, 0, 0},
        {"grid from cudaHostAlloc", 1, 1, 1, 0},
        {"serial (each operation alone)", 1, 1, 0, 1},
    };
    for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
        char *grid = V[v].pinned ? grid_pinned : grid_malloc;
        double best[4] = {1e30, 0, 0, 0};
        for (int round = 0; round < 3; round++) {
            CK(cudaDeviceSynchronize());
            CK(cudaEventRecord(e0, st[0]));
            for (int s = 1; s < 3; s++) CK(cudaStreamWaitEvent(st[s], e0, 0));
            for (int t = 0; t < T; t++) {
                const int s = t % 3;
                if (t >= 3) CK(cudaStreamSynchronize(st[s]));
                size_t c[3] = {(size_t)t % C, (size_t)t / C % C, (size_t)t / (C * C)}, r0[3], r1[3], s0[3], s1[3];
                for (int a = 0; a < 3; a++) axis_piece(N, R, h, c[a], &r0[a], &r1[a], &s0[a], &s1[a]);
                char *hsrc = grid + ((s0[2] * N + s0[1]) * N + s0[0]) * 4;
                CK(cudaEventRecord(ua[t], st[s]));
                CK(copy3d(0, hsrc, N, N, (char *)layer[s][0], pitch, S, s1[0] - s0[0], s1[1] - s0[1], s1[2] - s0[2], 1, st[s]));
                CK(cudaEventRecord(ub[t], st[s]));
                if (V[v].serial) CK(cudaStreamSynchronize(st[s]));
                CK(cudaEventRecord(ka[t], st[s]));
                if (V[v].kernel == 2) {
                    pyr_klayout_t L = {(int64_t)(pitch / 4), (int)S, (int)S};
                    pyr_ktune_t tune = {1, 256, 32, 0, 132}; /* one step per launch: the streaming 3D kernel */
                    const HeatOp<float> op = {0.1f, 0.1f, 0.1f};
                    for (int l = 1; l <= (int)h; l++) {
                        pyr_kbox_t b;
                        for (int a = 0; a < 3; a++) {
                            int ext = (int)(s1[a] - s0[a]);
                            b.lo[a] = s0[a] == 0 ? 1 : l;
                            b.hi[a] = s1[a] == N ? ext - 1 : ext - l;
                        }
                        CK((fused_launch<float, 4, 4, HeatOp<float>, 15, 5>(3, (const float *)layer[s][(l - 1) & 1], (float *)layer[s][l & 1], &L,
                                                                        &b, 1, op, &tune, NULL, st[s])));
                    }
                } else if (V[v].kernel) {
                    size_t n = pitch / 4 * S * S;
                    for (int k = 0; k < 32; k++)
                        touch_kernel<<<132 * 8, 256, 0, st[s]>>>(layer[s][k & 1], layer[s][(k & 1) ^ 1], n, 0);
                }
                CK(cudaEventRecord(kb[t], st[s]));
                if (V[v].serial) CK(cudaStreamSynchronize(st[s]));
                CK(cudaEventRecord(da[t], st[s]));
                if (V[v].download) {
                    char *hdst = grid + ((r0[2] * N + r0[1]) * N + r0[0]) * 4;
                    char *dsrc = (char *)layer[s][0] + ((r0[2] - s0[2]) * S + (r0[1] - s0[1])) * pitch + (r0[0] - s0[0]) * 4;
                    CK(copy3d(0, hdst, N, N, dsrc, pitch, S, r1[0] - r0[0], r1[1] - r0[1], r1[2] - r0[2], 0, st[s]));
                }
                CK(cudaEventRecord(db[t], st[s]));
                if (V[v].serial) CK(cudaStreamSynchronize(st[s]));
            }
            CK(cudaDeviceSynchronize());
            static span_t iu[64], ik[64], id[64];
            float end = 0;
            for (int t = 0; t < T; t++) {
                CK(cudaEventElapsedTime(&iu[t].a, e0, ua[t]));
                CK(cudaEventElapsedTime(&iu[t].b, e0, ub[t]));
                CK(cudaEventElapsedTime(&ik[t].a, e0, ka[t]));
                CK(cudaEventElapsedTime(&ik[t].b, e0, kb[t]));
                CK(cudaEventElapsedTime(&id[t].a, e0, da[t]));
                CK(cudaEventElapsedTime(&id[t].b, e0, db[t]));
                if (id[t].b > end) end = id[t].b;
            }
            double up = union_ms(iu, T), comp = union_ms(ik, T), down = union_ms(id, T);
            if (end < best[0]) best[0] = end, best[1] = up, best[2] = comp, best[3] = down;
        }
        printf("  %-42s pass %7.2f   busy: up %7.2f  kernel %7.2f  down %7.2f\n", V[v].name, best[0], best[1], best[2], best[3]);
        fflush(stdout);
    }
    for (int s = 0; s < 3; s++) {
        cudaFree(layer[s][0]);
        cudaFree(layer[s][1]);
    }
    CK(cudaHostUnregister(grid_malloc));
    free(grid_malloc);
    cudaFreeHost(grid_pinned);
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
    if (argc > 1 && !strcmp(argv[1], "cpu")) return probe_cpu();
    if (argc > 1 && !strcmp(argv[1], "replay")) return probe_replay();
    if (argc > 1 && !strcmp(argv[1], "replay3d")) return probe_replay3d();
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
