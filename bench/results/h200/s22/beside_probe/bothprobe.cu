// Probe: rate of one copy direction while the other direction runs, for
// contiguous runs and part-row boxes, same host region or different regions.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }

struct Box { size_t x0, y0, z0, w, h, d; };  // in elements (floats)
static size_t NX, NY, NZ;
static char *host;
static void copy(char *dev, const Box &b, int up, cudaStream_t s)
{
    cudaMemcpy3DParms p; memset(&p, 0, sizeof p);
    cudaPitchedPtr hp = make_cudaPitchedPtr(host, NX * 4, NX * 4, NY);
    cudaPitchedPtr dp = make_cudaPitchedPtr(dev, b.w * 4, b.w * 4, b.h);
    p.extent = make_cudaExtent(b.w * 4, b.h, b.d);
    if (up) { p.srcPtr = hp; p.srcPos = make_cudaPos(b.x0 * 4, b.y0, b.z0); p.dstPtr = dp; p.kind = cudaMemcpyHostToDevice; }
    else { p.dstPtr = hp; p.dstPos = make_cudaPos(b.x0 * 4, b.y0, b.z0); p.srcPtr = dp; p.kind = cudaMemcpyDeviceToHost; }
    CK(cudaMemcpy3DAsync(&p, s));
}
// time of `main` copies of box a in direction `up` (stream s0), while stream s1 moves boxes bs (cycling) the other way (if nb>0)
static double timed(char *d0, char *d1, const Box *as, int na, int up, const Box *bs, int nb, cudaStream_t s0, cudaStream_t s1)
{
    double best = 1e30;
    for (int rep = 0; rep < 4; rep++) {
        CK(cudaDeviceSynchronize());
        cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        if (nb) for (int i = 0; i < 3 * na + 6; i++) copy(d1, bs[i % nb], !up, s1);  // cover
        CK(cudaEventRecord(e0, s0));
        for (int i = 0; i < na; i++) copy(d0, as[i], up, s0);
        CK(cudaEventRecord(e1, s0));
        CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        CK(cudaDeviceSynchronize());
        if (ms < best) best = ms;
        cudaEventDestroy(e0); cudaEventDestroy(e1);
    }
    return best;
}
static double vol(const Box *b, int n) { double v = 0; for (int i = 0; i < n; i++) v += (double)b[i].w * b[i].h * b[i].d; return v; }
static void report(const char *name, char *d0, char *d1, const Box *a, int na, const Box *other, int no, cudaStream_t s0, cudaStream_t s1)
{
    double v = vol(a, na) * 4;
    for (int up = 1; up >= 0; up--) {
        double alone = timed(d0, d1, a, na, up, other, 0, s0, s1);
        double both = timed(d0, d1, a, na, up, other, no, s0, s1);
        printf("  %-44s %-4s alone %6.1f GB/s  beside the other way %6.1f GB/s  (x%.3f)\n", name, up ? "up" : "down",
               v / alone * 1e-6, v / both * 1e-6, both / alone);
    }
}
int main(int argc, char **argv)
{
    int huge = argc > 1 && atoi(argv[1]);
    NX = 1025; NY = 1025; NZ = 1025;
    size_t bytes = NX * NY * NZ * 4;
    host = (char *)aligned_alloc(2 << 20, (bytes + (2 << 20) - 1) & ~((size_t)(2 << 20) - 1));
    if (huge) madvise(host, bytes, MADV_HUGEPAGE);
    memset(host, 1, bytes);
    CK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
    char *d0, *d1; size_t dbytes = (size_t)440 * 440 * 440 * 4;
    CK(cudaMalloc(&d0, dbytes)); CK(cudaMalloc(&d1, dbytes));
    cudaStream_t s0, s1; CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    printf("grid 1025^3 float (%s pages), boxes moved with cudaMemcpy3DAsync; best of 4\n", huge ? "huge" : "4 KiB");
    // contiguous slabs of 80 planes
    Box slab[4]; for (int i = 0; i < 4; i++) slab[i] = Box{0, 0, (size_t)i * 200, NX, NY, 80};
    Box slabo[4]; for (int i = 0; i < 4; i++) slabo[i] = Box{0, 0, (size_t)i * 200 + 100, NX, NY, 80};
    report("contiguous slabs, other way same slabs", d0, d1, slab, 4, slab, 4, s0, s1);
    report("contiguous slabs, other way other slabs", d0, d1, slab, 4, slabo, 4, s0, s1);
    // cube boxes 440^3 (h48 uploads) / 342^3 (results)
    Box cu[8]; int n = 0;
    for (int k = 0; k < 2; k++) for (int j = 0; j < 2; j++) for (int i = 0; i < 2; i++) cu[n++] = Box{(size_t)i * 580, (size_t)j * 580, (size_t)k * 580, 440, 440, 440};
    Box cd[8]; n = 0;
    for (int k = 0; k < 2; k++) for (int j = 0; j < 2; j++) for (int i = 0; i < 2; i++) cd[n++] = Box{(size_t)i * 342 + 300, (size_t)j * 342 + 300, (size_t)k * 342 + 300, 342, 342, 342};
    report("cubes 440^3, other way the same boxes", d0, d1, cu, 8, cu, 8, s0, s1);
    report("cubes 440^3, other way 342^3 elsewhere", d0, d1, cu, 8, cd, 8, s0, s1);
    report("cubes 342^3, other way 440^3 elsewhere", d0, d1, cd, 8, cu, 8, s0, s1);
    report("cubes 440^3, other way contiguous slabs", d0, d1, cu, 8, slabo, 4, s0, s1);
    report("contiguous slabs, other way cubes 440^3", d0, d1, slab, 4, cu, 8, s0, s1);
    // thin boxes: 440 x 440 x 48 (bands) and 64-plane boxes
    Box th[8]; for (int i = 0; i < 8; i++) th[i] = Box{(size_t)(i % 2) * 500, (size_t)(i / 2 % 2) * 500, (size_t)(i / 4) * 500, 440, 440, 48};
    report("cubes 440^3, other way bands 440x440x48", d0, d1, cu, 8, th, 8, s0, s1);
    // x-full boxes (rows whole, planes strided): 1025 x 440 x 440
    Box xf[4]; for (int i = 0; i < 4; i++) xf[i] = Box{0, (size_t)(i % 2) * 580, (size_t)(i / 2) * 580, NX, 440, 440};
    report("whole-row boxes 1025x440x440, other way cubes", d0, d1, xf, 4, cd, 8, s0, s1);
    return 0;
}
