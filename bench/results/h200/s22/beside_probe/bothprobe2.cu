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
static char *host = NULL;
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
static void grid(size_t nx, size_t ny, size_t nz, int huge)
{
    if (host) { CK(cudaHostUnregister(host)); free(host); }
    NX = nx; NY = ny; NZ = nz;
    size_t bytes = NX * NY * NZ * 4, al = (bytes + (2 << 20) - 1) & ~((size_t)(2 << 20) - 1);
    host = (char *)aligned_alloc(2 << 20, al);
    if (huge) madvise(host, al, MADV_HUGEPAGE);
    memset(host, 1, bytes);
    CK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
}
int main(int argc, char **argv)
{
    char *d0, *d1; size_t dbytes = (size_t)440 * 440 * 440 * 4;
    CK(cudaMalloc(&d0, dbytes)); CK(cudaMalloc(&d1, dbytes));
    cudaStream_t s0, s1; CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    const size_t W = 362;
    for (int huge = 0; huge < 2; huge++) {
        printf("== %s pages\n", huge ? "huge" : "4 KiB");
        grid(4 * W, 4 * W, 64, huge);
        printf(" calibration's array %zux%zux%zu\n", NX, NY, NZ);
        Box a = {2 * W, 0, 0, W, W, 64}, b = {2 * W, 2 * W, 0, W, W, 64};
        report("362x362x64, other way one box y+724", d0, d1, &a, 1, &b, 1, s0, s1);
        Box bs[4] = {{0, 2 * W, 0, W, W, 64}, {W, 2 * W, 0, W, W, 64}, {2 * W, 3 * W, 0, W, W, 64}, {3 * W, W, 0, W, W, 64}};
        report("362x362x64, other way 4 boxes cycled", d0, d1, &a, 1, bs, 4, s0, s1);
        Box as[4] = {{0, 0, 0, W, W, 64}, {W, 0, 0, W, W, 64}, {2 * W, 0, 0, W, W, 64}, {3 * W, W, 0, W, W, 64}};
        report("4 boxes up, other way 4 boxes cycled", d0, d1, as, 4, bs, 4, s0, s1);
        grid(1025, 1025, 1025, huge);
        printf(" grid %zux%zux%zu\n", NX, NY, NZ);
        Box g1 = {300, 0, 0, W, W, 64}, g2 = {300, 400, 500, W, W, 64};
        report("362x362x64, other way one box elsewhere", d0, d1, &g1, 1, &g2, 1, s0, s1);
        Box gs[8]; for (int i = 0; i < 8; i++) gs[i] = Box{(size_t)(i % 2) * 600, (size_t)(i / 2 % 2) * 600, (size_t)(i / 4) * 400 + 100, W, W, 64};
        report("362x362x64, other way 8 boxes cycled", d0, d1, &g1, 1, gs, 8, s0, s1);
        Box G1 = {300, 0, 0, W, W, 362}, G2 = {300, 400, 500, W, W, 362};
        report("362^3, other way one 362^3 elsewhere", d0, d1, &G1, 1, &G2, 1, s0, s1);
        Box Gs[8]; for (int i = 0; i < 8; i++) Gs[i] = Box{(size_t)(i % 2) * 600, (size_t)(i / 2 % 2) * 600, (size_t)(i / 4) * 600, W, W, 362};
        report("362^3, other way 8 boxes 362^3 cycled", d0, d1, &G1, 1, Gs, 8, s0, s1);
        report("8 boxes 362^3 up, other way 8 boxes cycled", d0, d1, Gs, 8, Gs + 1, 7, s0, s1);
    }
    return 0;
}
