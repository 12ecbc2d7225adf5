/* Heat-equation kernels of the CUDA backend and their launchers (C++, used
 * by cuda_backend.cu only).  Coordinates here are piece-local: column c =
 * xpad + (x - piece.lo.x), row = y - piece.lo.y, plane = z - piece.lo.z;
 * boxes are half-open [lo, hi) in those coordinates. */
#ifndef PYR_BACKEND_CUDA_KERNELS_HEAT_CUH
#define PYR_BACKEND_CUDA_KERNELS_HEAT_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* The largest number of time steps one fused launch may take. */
#define PYR_CUDA_KMAX 15

typedef struct {
    int lo[3], hi[3];
} pyr_kbox_t;

/* Geometry of one piece layer. */
typedef struct {
    int64_t pitch; /* elements per row */
    int rows;      /* rows per plane */
    int planes;
} pyr_klayout_t;

/* Tuning knobs, chosen per device (and overridable for experiments). */
typedef struct {
    int kmax2d;   /* steps per fused launch, 2D (odd, <= PYR_CUDA_KMAX) */
    int kmax3d;   /* steps per fused launch, 3D (odd) */
    int nt2d;     /* threads per block of the 2D fused kernel (multiple of 32) */
    int nty3d;    /* rows per block of the 3D fused kernel */
    int stream3d; /* one-step 3D launches use the shared-memory-free streaming kernel */
    int sms;      /* multiprocessors */
} pyr_ktune_t;

/* One step on `box` with the plain kernel (reads src, writes dst on box only).
 * elem 4 = float, 8 = double. */
cudaError_t pyr_k_step_plain(size_t elem, int dims, const void *src, void *dst, const pyr_klayout_t *L, const pyr_kbox_t *box,
                             const double r[3], cudaStream_t stream);

/* k (odd) steps in one launch, from src to dst; boxes[0..k-1] are the boxes
 * of the k steps (nested, shrinking on every side that is not at the piece
 * edge).  Writes dst on boxes[k-1] only. */
cudaError_t pyr_k_fused(size_t elem, int dims, const void *src, void *dst, const pyr_klayout_t *L, const pyr_kbox_t *boxes, int k,
                        const double r[3], const pyr_ktune_t *tune, cudaStream_t stream);

/* Copy `box` (in source-piece coordinates sbox, destination coordinates
 * dbox: the same nodes) from src into dst0 and/or dst1 (NULL to skip). */
cudaError_t pyr_k_copy_box(size_t elem, const void *src, const pyr_klayout_t *SL, const pyr_kbox_t *sbox, void *dst0, void *dst1,
                           const pyr_klayout_t *DL, const pyr_kbox_t *dbox, cudaStream_t stream);

/* A kernel symbol to probe that this build has code for the device. */
const void *pyr_k_probe_symbol(void);

#endif
