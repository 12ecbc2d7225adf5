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
    extern size_t DPITCH;
    size_t pitch = (DPITCH && b.w < NX) ? DPITCH : b.w * 4;
    cudaPitchedPtr dp = make_cudaPitchedPtr(dev, pitch, b.w * 4, b.h);
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
size_t DPITCH = 0; // device pitch in bytes for the "other way" boxes (0: dense)
int main(int argc, char **argv)
{
    char *d0, *d1; size_t dbytes = (size_t)600 * 600 * 200 * 4;
    CK(cudaMalloc(&d0, dbytes)); CK(cudaMalloc(&d1, dbytes));
    cudaStream_t s0, s1; CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    grid(1025, 1025, 1025, 1);
    printf("grid 1025^3 float, huge pages; upload: slab of 1025x1025x60 (contiguous); other way: 8 boxes w x w x 150 cycled\n");
    Box up = {0, 0, 0, 1025, 1025, 60};
    const int ws[] = {256, 300, 342, 362, 384, 400, 440, 512};
    const int xs[] = {0, 1, 16, 300};
    for (int pitched = 0; pitched < 2; pitched++) {
        for (int wi = 0; wi < 8; wi++)
            for (int xi = 0; xi < 4; xi++) {
                size_t w = ws[wi], x0 = xs[xi];
                Box bs[8];
                for (int i = 0; i < 8; i++) bs[i] = Box{x0 + (size_t)(i % 2) * (1025 - w - x0), (size_t)(i / 2 % 2) * 513, 200 + (size_t)(i / 4) * 400, w, w, 150};
                char name[96];
                snprintf(name, sizeof name, "down w %3zu x0 %3zu dev pitch %s", w, x0, pitched ? "512-aligned" : "dense");
                DPITCH = pitched ? (w * 4 + 511) / 512 * 512 : 0;
                double v = 1025.0 * 1025 * 60 * 4;
                double alone = timed(d0, d1, &up, 1, 1, bs, 0, s0, s1), both = timed(d0, d1, &up, 1, 1, bs, 8, s0, s1);
                double dalone = timed(d1, d0, bs, 1, 0, &up, 0, s1, s0);
                printf("  %-44s up alone %5.1f GB/s, beside %5.1f (x%.3f); that download alone %5.1f GB/s\n", name, v / alone * 1e-6, v / both * 1e-6,
                       both / alone, (double)w * w * 150 * 4 / dalone * 1e-6);
            }
    }
    return 0;
}
