/* The frames pipeline on a GPU: the same steps as
 * pipelines/frames/frames_cpu.c, with the same small-system code
 * (frames_math.h, compiled here for the device), registered as the cuda
 * implementation (frames_internal.h fr_impl_t).  It runs on the CUDA
 * runtime (backend/cuda/cuda_internal.cuh): a context of the device from the
 * context cache gives its streams, its device and pinned memory and the
 * checks of every call (cuda_errors.cuh).
 *
 * Streams: the context's queues - `up` (queue 0) copies frames host ->
 * device, `cs` (queue 1) runs every kernel and the cuFFT transforms in order,
 * `down` (queue 2) copies residuals and per-frame records device -> host.
 * Three input slots and three output slots (pinned host staging + device
 * buffers) let frame t+1 upload and frame t-1 download while frame t
 * computes; events order the hand-overs.  Everything that depends on
 * the data (shifts, weights, noise model, candidates) stays on the device, so
 * the host only queues work and never waits on a frame's results except to
 * deliver them, in order, once their download has finished.
 *
 * Sums: per tile (FR_TILE_ROWS rows) or per spectrum row in double, combined
 * in a fixed order (no atomics in any sum; a counter of the blocks done
 * only picks the block that combines the partials, last_block), so a run is
 * reproducible; the order inside a tile differs from the CPU's, and cuFFT
 * rounds differently from FFTW: the backends agree to the tolerance in
 * docs/frames.md#backends.
 *
 * Scale: as on the CPU, the frames are divided by the sequence's unit
 * (frames_math.h fr_unit, found by the ingest's reduction on the device) and
 * the outputs multiplied by it; the residual is written in the data's units
 * by the whitening kernel itself, so no pass is added.
 *
 * Memory: the history ring (history + 1 frames) and about 19 frame-sized
 * buffers must fit on the GPU; frames larger than that fail with
 * PYR_ERR_DEVICE_NOMEM and the bytes needed (the CPU backend has no such
 * limit).  Frames are not tiled: the shift estimate and registration act on
 * the whole frame. */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.cuh"
#include "pipelines/frames/frames_internal.h"

namespace cg = cooperative_groups;

/* fr_cuda_batch_cap (frames_internal.h): the tests compare batches with frames one at a time */
static int batch_cap = 0;
extern "C" void fr_cuda_batch_cap(int cap) { batch_cap = cap > 0 ? cap : 0; }

#define SLOTS 3
/* Frames whose shift stage runs as one batch (fr_cuda_t B), and the out
 * slots: two batches' frames and one, so a batch's later stages can be
 * queued while the batch before is still being delivered. */
#define FR_BATCH_MAX 32
#define FR_BATCH_PIXELS (INT64_C(1) << 20) /* larger frames go one at a time */
#define OUT_SLOTS (2 * FR_BATCH_MAX + 1)
#define TPB 256
#define REC_CANDS 1024 /* candidates copied with every record; more are fetched on demand */
/* Stage times: events around the stages of one frame in STAGE_EVERY, read
 * when the frame is delivered (its events have passed by then); the sets
 * are a ring twice the slots long, as a slot's frame is delivered only
 * after the next frame in that slot has recorded its first stages. */
#define STAGE_EVERY 8
#define STAGE_SETS (2 * OUT_SLOTS)
#define SHIFT_SETS 4 /* batches whose shift stage is timed, in flight */

namespace {

/* What a frame's record carries back to the host. */
struct frec_t {
    double sx, sy, eps_used, noise_a, noise_c, rms;
    int iterations, coarse, flags, used, ncand, dropped, nonfinite, unit_set;
    long long masked, cleaned;
    float weights[FR_MAX_HISTORY];
};

struct fcand_t {
    long long idx;
    pyr_frames_candidate_t c;
};

/* Device-side state of the sequence. */
struct fstate_t {
    double sx, sy, prev_sx, prev_sy;
    double u, v, w;
    double noise[FR_NOISE_SUMS], S[FR_NOISE_SUMS];
    double A, C, F;
    float a[FR_MAX_HISTORY];
    float bg[3], bg0[3]; /* the background taken out of this frame, and frame 0's */
    int rdone;           /* the shift refinement has stopped */
    float fill;
    /* the sequence's unit (fr_unit; 1 until a frame sets it), this frame's
     * RMS in it; rescale: this frame set it, so its pixels are divided now */
    double unit, rms;
    float inv_unit;
    int unit_set, rescale, nonfinite;
    int iterations, done, flags, used, coarse;
    double eps_used;
    unsigned long long masked, cleaned;
    int ncand, dropped;
};

struct frame_slots_t {
    int slot[FR_MAX_HISTORY + 1]; /* ring slot of h_{t-k} */
};

}  // namespace

struct fr_cuda {
    fr_setup_t s;
    int device;
    pyrcu::ctx_t *rt; /* the runtime's context: queues, memory */
    pyrcu::issuer_t by; /* for the messages of failed calls */
    int64_t np, nch, nh, ntiles;
    cudaStream_t up, cs, down;
    const pyrcu::cufft_api_t *fft; /* loaded on first use (cuda_libs.h) */
    cufftHandle r2c, c2r;
    int plans;
    /* device */
    void *d_raw[SLOTS];
    float *d_in, *d_ring, *d_bh, *d_t1, *d_t2, *d_m, *d_xv, *d_z, *d_maxz, *d_res[OUT_SLOTS], *d_sm;
    float *d_cx, *d_sxt, *d_cy, *d_syt;
    uint8_t *d_bad, *d_valid;
    float *d_rref, *d_rgx, *d_rgy, *d_xt, *d_yt; /* the reference in pixels; the background basis */
    uint8_t *d_refbad, *d_sv, *d_bad0;
    int masked0; /* frame 0 had masked pixels (repaired from frame 1) */
    /* variance planes as the noise model (decided by frame 0): the frame's
     * as given, and registered as its image in the unit squared */
    int var_mode;
    float *d_var, *d_vreg;
    float *h_var;       /* pinned staging of the plane, free again at ev_var */
    cudaEvent_t ev_var;
    double bg_n, bg_sxx, bg_syy;
    cufftComplex *d_F, *d_X, *d_G;
    double *d_D, *d_shx, *d_shy, *d_part, *d_dpart, *d_work, *d_wx, *d_wy;
    int *d_dirty; /* d_wx, d_wy: sin(omega), from the host as on the CPU */
    unsigned *d_count; /* blocks done, per reduction that its last block finishes (last_block) */
    double2 *d_blk;
    double *d_iblk; /* k_ingest's per-block sums */
    long long *d_blkidx;
    fstate_t *d_st;
    /* per out slot: copied on `down` while the next frames find theirs; the
     * residual, record and candidates of a slot lie one after the other
     * (d_res[k] holds the three, at rec_off and cand_off), as do h_res[k],
     * h_rec[k] and h_cand[k] on the host, so that one copy takes them */
    frec_t *d_rec[OUT_SLOTS];
    fcand_t *d_cand[OUT_SLOTS];
    size_t rec_off, cand_off;
    /* host */
    void *h_raw[SLOTS];
    float *h_res[OUT_SLOTS];
    frec_t *h_rec[OUT_SLOTS];
    fcand_t *h_cand[OUT_SLOTS];
    cudaEvent_t ev_up[SLOTS], ev_used[SLOTS], ev_done[OUT_SLOTS], ev_down[OUT_SLOTS];
    int in_use[SLOTS];
    /* frames in flight: out slot j (of nout) holds frame pend_t[j] */
    int nout;
    int64_t pend_t[OUT_SLOTS];
    float *pend_out[OUT_SLOTS];
    int pend_direct[OUT_SLOTS];
    int pending[OUT_SLOTS];
    /* t: frames taken; queued: frames whose work is queued on the device
     * (t less those waiting in the batch); delivered */
    int64_t t, queued, delivered;
    /* The history ring (ring_n frames) and the rows of dot products and
     * shifts (dring): the sequence's rings with room for a batch registered
     * ahead of the frames whose later stages still read them. */
    int ring_n, dring;
    /* Frames in batches (B > 1): the shift stage of B frames at once, on
     * their own buffers (the planes of the arrays below), then every frame's
     * later stages in order.  The frames wait in a pinned staging buffer
     * (two, used in turn: one fills while the other uploads) until B are
     * there or a frame ends a batch (one that makes a new reference), or the
     * sequence ends.  Frames before the sequence's unit is known on the host
     * (frame 0, which sets it, delivered), frames 0 and 1 (the reference and
     * its repair), variance planes and coarse = never (each frame starts
     * from the previous one's shift) go one at a time. */
    int B, unit_known;
    int nq, qtype, cur, q_direct[FR_BATCH_MAX];
    int64_t q0;
    float *q_out[FR_BATCH_MAX];
    void *h_rawb[2], *d_rawb[2];
    cudaEvent_t ev_upb[2], ev_usedb[2], ev_qup;
    int upb_pending[2];
    float *d_inb, *d_t1b, *d_t2b, *d_cxb, *d_sxtb, *d_cyb, *d_sytb;
    uint8_t *d_badb, *d_svb;
    cufftComplex *d_Fb, *d_Xb;
    double *d_partb, *d_iblkb;
    int64_t pstride;
    double2 *d_blkb;
    long long *d_blkidxb;
    unsigned *d_countb; /* FR_COUNTERS per frame: a frame's reductions count on their own */
    fstate_t *d_stb;
    int *d_stop;
    cufftHandle r2cb, c2rb;
    int coop_blocks_b, bpf;
    fr_deliver_t deliver; /* the driver's, for a flush without one (max_snr) */
    void *driver;
    void *pinned[16];
    size_t pinned_bytes[16];
    int npinned;
    int coop_blocks;
    pyr_frames_candidate_t *cand_host;
    /* stage times (fr_impl_t stage_times): shift, weights, whitening, detection;
     * stage_timed: 1 a frame of its own (all four), 2 a frame of a batch
     * (the later three: the batch's shift stage is timed as a whole, ev_shift) */
    cudaEvent_t ev_stage[STAGE_SETS][5];
    int stage_timed[STAGE_SETS];
    double stage_ms[4];
    int64_t stage_frames, shift_frames;
    cudaEvent_t ev_shift[SHIFT_SETS][2];
    int shift_n[SHIFT_SETS], shift_next;
};
typedef struct fr_cuda fr_cuda_t;

/* Every CUDA and cuFFT call checked through the runtime's one translation, with the frames' advice. */
#define CU(call) PYR_CU_BY(g->by, call)
#define FFT(call) PYR_CUFFT_BY(g->by, call)
#define LAUNCHED() CU(cudaGetLastError())

static unsigned grid_for(int64_t n) { return (unsigned)((n + TPB - 1) / TPB); }

/* ---------------------------------------------------------------- kernels */

/* Block-wide sum of a double in a fixed tree order; every thread gets it. */
__device__ double block_sum(double v, double *sh)
{
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

/* Whether this block is the last of its grid to get here; every block's
 * writes before (its partial sums) are then visible to it.  The blocks count
 * themselves on `count`, which the last one sets back to 0 for the next
 * launch.  The last block finishes the reduction from the partials (read
 * past the SM's cache, __ldcg) in the fixed order of the one-block kernel it
 * replaces, so the result does not depend on which block comes last, and
 * the launch of that kernel is saved.  Every thread of every block calls it
 * (of the grid's first nblocks blocks, where a launch does other work in
 * the blocks after them). */
#define FR_COUNTERS 4 /* one per reduction: ingest, argmax, refinement and background, dots */
__device__ int last_block(unsigned *count, unsigned nblocks = 0)
{
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(count, 1u) == (nblocks ? nblocks : gridDim.x) - 1;
        if (last) *count = 0;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

/* Frame of `type` -> float in the sequence's unit; pixels not finite there
 * flagged in bad; per block the count, sum and sum of squares of the finite
 * input values, and the count of those beyond float's range in the unit,
 * into blk[4 block ..]. */
__device__ void fill_value(const double *blk, int nblk, int64_t np, fstate_t *st);
__device__ void ingest_body(const void *raw, int type, int64_t np, float *in, uint8_t *bad, double *blk, unsigned *count,
                            fstate_t *st)
{
    __shared__ double sh[TPB];
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0, q = 0, n = 0, over = 0;
    if (i < np) {
        float v = type == PYR_FRAMES_U16 ? (float)((const uint16_t *)raw)[i]
                  : type == PYR_FRAMES_I16 ? (float)((const int16_t *)raw)[i]
                                           : ((const float *)raw)[i];
        float w = __fmul_rn(v, st->inv_unit);
        bad[i] = !isfinite(w);
        in[i] = w;
        if (isfinite(v)) {
            s = v;
            q = (double)v * v;
            n = 1;
            over = isfinite(w) ? 0 : 1;
        }
    }
    double bs = block_sum(s, sh), bq = block_sum(q, sh), bn = block_sum(n, sh), bo = block_sum(over, sh);
    if (threadIdx.x == 0) {
        blk[4 * blockIdx.x] = bn;
        blk[4 * blockIdx.x + 1] = bs;
        blk[4 * blockIdx.x + 2] = bq;
        blk[4 * blockIdx.x + 3] = bo;
    }
    if (last_block(count)) fill_value(blk, gridDim.x, np, st);
}

__global__ void k_ingest(const void *raw, int type, int64_t np, float *in, uint8_t *bad, double *blk, unsigned *count,
                         fstate_t *st)
{
    ingest_body(raw, type, np, in, bad, blk, count, st);
}

/* The fill value (mean of the finite pixels) and the masked count, from the
 * blocks' partials in order; the sequence's unit from the first frame that
 * is not all zero.  One block of TPB threads (k_ingest's last). */
__device__ void fill_value(const double *blk, int nblk, int64_t np, fstate_t *st)
{
    __shared__ double sh[TPB];
    double n = 0, s = 0, q = 0, over = 0;
    for (int b = threadIdx.x; b < nblk; b += blockDim.x) {
        n += __ldcg(blk + 4 * b);
        s += __ldcg(blk + 4 * b + 1);
        q += __ldcg(blk + 4 * b + 2);
        over += __ldcg(blk + 4 * b + 3);
    }
    n = block_sum(n, sh);
    s = block_sum(s, sh);
    q = block_sum(q, sh);
    over = block_sum(over, sh);
    if (threadIdx.x == 0) {
        st->rescale = !st->unit_set && fr_unit(q, n) > 0;
        if (st->rescale) {
            st->unit_set = 1;
            st->unit = fr_unit(q, n);
            st->inv_unit = (float)(1.0 / st->unit);
        }
        double inv = st->inv_unit;
        st->masked = (unsigned long long)((double)np - n + over);
        st->nonfinite = over > 0;
        st->rms = n > 0 ? sqrt(q / n) * inv : 0;
        st->fill = n > 0 ? (float)(s / n * inv) : 0.0f;
        st->cleaned = 0;
        st->ncand = 0;
        st->dropped = 0;
        st->flags = 0;
    }
}

/* The frame that set the unit is divided by it (the only frame that takes
 * this pass). */
__global__ void k_fill(float *in, const uint8_t *bad, int64_t np, const fstate_t *st)
{
    if (!st->rescale) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= np) return;
    if (!bad[i]) in[i] = __fmul_rn(in[i], st->inv_unit);
}

/* Masked pixels take the mean of their unmasked 4-neighbours
 * (frames_math.h fr_fill_value; they read no masked pixel, so the order of
 * the writes does not matter). */
__device__ void fill_bad_body(float *in, const uint8_t *bad, int64_t nx, int64_t ny, const fstate_t *st)
{
    if (st->masked == 0) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx * ny || !bad[i]) return;
    in[i] = fr_fill_value(in, bad, nx, ny, i, st->fill);
}

__global__ void k_fill_bad(float *in, const uint8_t *bad, int64_t nx, int64_t ny, const fstate_t *st)
{
    fill_bad_body(in, bad, nx, ny, st);
}

/* Masked pixels of the frame take the reference moved to it (g) plus the
 * local level difference (frames_cpu.c refill_masked). */
__device__ void refill_body(float *in, const float *g, const uint8_t *bad, int64_t nx, int64_t ny, const fstate_t *st)
{
    if (st->masked == 0) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx * ny || !bad[i]) return;
    in[i] = fr_refill_value(in, g, bad, nx, ny, i);
}

__global__ void k_refill(float *in, const float *g, const uint8_t *bad, int64_t nx, int64_t ny, const fstate_t *st)
{
    refill_body(in, g, bad, nx, ny, st);
}

/* The reference's pixel images' spectra (frames_math.h fr_ref_coef). */
__global__ void k_refcoef(const cufftComplex *G, cufftComplex *X, int64_t nx, int64_t ny, int64_t nh, int which)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nh * ny) return;
    int64_t ky = i / nh, kx = i - ky * nh;
    double re, im;
    fr_ref_coef(kx, ky, nx, ny, which, G[i].x, G[i].y, &re, &im);
    X[i].x = (float)re;
    X[i].y = (float)im;
}

/* Pixels within 2 of a masked pixel of bad moved by the shift in st
 * (shifted) or by none. */
__global__ void k_nearbad(const uint8_t *bad, uint8_t *out, int64_t nx, int64_t ny, const fstate_t *st, int shifted, int any)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx * ny) return;
    int64_t x = i % nx, y = i / nx;
    uint8_t v = 0;
    if (any) {
        int64_t ox = shifted ? fr_pixel_shift(st->sx) : 0, oy = shifted ? fr_pixel_shift(st->sy) : 0;
        for (int64_t qy = y + oy - 2; qy <= y + oy + 2 && !v; qy++)
            for (int64_t qx = x + ox - 2; qx <= x + ox + 2; qx++)
                if (qy >= 0 && qy < ny && qx >= 0 && qx < nx && bad[qy * nx + qx]) {
                    v = 1;
                    break;
                }
    }
    out[i] = v;
}

/* The refinement's pixels: inside the border, not near the reference's
 * masked pixels nor near the frame's (moved by the spectral estimate). */
__device__ void rsv_body(const uint8_t *bad, const uint8_t *refbad, uint8_t *sv, int64_t nx, int64_t ny, int64_t b, fstate_t *st)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) st->rdone = 0;
    if (i >= nx * ny) return;
    int64_t x = i % nx, y = i / nx;
    uint8_t v = (y >= b && y < ny - b && x >= b && x < nx - b) && !refbad[i];
    if (v && st->masked) {
        int64_t ox = fr_pixel_shift(st->sx), oy = fr_pixel_shift(st->sy);
        for (int64_t qy = y + oy - 2; qy <= y + oy + 2 && v; qy++)
            for (int64_t qx = x + ox - 2; qx <= x + ox + 2; qx++)
                if (qy >= 0 && qy < ny && qx >= 0 && qx < nx && bad[qy * nx + qx]) {
                    v = 0;
                    break;
                }
    }
    sv[i] = v;
}

__global__ void k_rsv(const uint8_t *bad, const uint8_t *refbad, uint8_t *sv, int64_t nx, int64_t ny, int64_t b, fstate_t *st)
{
    rsv_body(bad, refbad, sv, nx, ny, b, st);
}

/* One refinement step (frames_cpu.c refine_shift): k of FR_REFINE_MAX, from
 * the tiles' sums; one thread. */
__device__ void rstep(const double *part, int64_t ntiles, fstate_t *st, int k, double tol)
{
    if (st->rdone) return;
    double S[5] = {0, 0, 0, 0, 0};
    for (int q = 0; q < 5; q++)
        for (int64_t tile = 0; tile < ntiles; tile++) S[q] += __ldcg(part + tile * 5 + q);
    st->iterations++;
    double dx, dy;
    int stop = 1;
    if (!fr_shift_step(S[0], S[1], S[2], S[3], S[4], &dx, &dy)) {
    } else if (fabs(dx) < tol && fabs(dy) < tol) {
        st->flags &= ~FR_FLAG_NOT_CONVERGED;
    } else if (k == FR_REFINE_MAX - 1) {
        st->flags |= FR_FLAG_NOT_CONVERGED;
    } else {
        st->sx -= dx;
        st->sy -= dy;
        stop = 0;
    }
    if (stop) {
        st->rdone = 1;
        st->prev_sx = st->sx;
        st->prev_sy = st->sy;
    }
}

/* The refinement's sums per tile (frames_cpu.c refine_sums), then its step k
 * by the last block. */
__device__ void rsums_body(const float *h, const float *r, const float *gx, const float *gy, const uint8_t *sv, int64_t nx,
                           int64_t ny, int64_t b, double *part, unsigned *count, fstate_t *st, int k, double tol, double *shx,
                           double *shy, int ring, int64_t t)
{
    __shared__ double sh[TPB];
    int64_t tile = blockIdx.x, ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
    int64_t w = nx - 2 * b, cnt = (yb - ya) * w;
    double acc[5] = {0, 0, 0, 0, 0};
    int64_t sy = blockDim.x / w, sx = blockDim.x % w, y = ya + threadIdx.x / w, x = b + threadIdx.x % w; /* j's (y, x), walked */
    /* once the refinement stopped no step reads the sums (rstep) */
    if (st->rdone) cnt = 0;
    for (int64_t j = threadIdx.x; j < cnt; j += blockDim.x) {
        int64_t i = y * nx + x;
        y += sy;
        x += sx;
        if (x >= b + w) {
            x -= w;
            y++;
        }
        if (!sv[i]) continue;
        double d = (double)fr_smooth5(h, i, nx) - r[i], ax = gx[i], ay = gy[i];
        acc[0] += ay * d;
        acc[1] += ax * d;
        acc[2] += ax * ax;
        acc[3] += ax * ay;
        acc[4] += ay * ay;
    }
    for (int q = 0; q < 5; q++) {
        double v = block_sum(acc[q], sh);
        if (threadIdx.x == 0) part[tile * 5 + q] = v;
    }
    if (last_block(count) && threadIdx.x == 0) {
        rstep(part, gridDim.x, st, k, tol);
        if (k == FR_REFINE_MAX - 1) {
            shx[t % ring] = st->sx;
            shy[t % ring] = st->sy;
        }
    }
}

__global__ void k_rsums(const float *h, const float *r, const float *gx, const float *gy, const uint8_t *sv, int64_t nx,
                        int64_t ny, int64_t b, double *part, unsigned *count, fstate_t *st, int k, double tol, double *shx,
                        double *shy, int ring, int64_t t)
{
    rsums_body(h, r, gx, gy, sv, nx, ny, b, part, count, st, k, tol, shx, shy, ring, t);
}

/* The background (1, x, y) over the interior per tile (frames_cpu.c
 * remove_background), then its coefficients (the last block), then it leaves
 * the frame. */
__device__ void bg_final(const double *part, int64_t ntiles, fstate_t *st, double n, double sxx, double syy, int first);
__device__ void bg_tiles_body(const float *h, const float *xt, const float *yt, int64_t nx, int64_t ny, int64_t b, double *part,
                              unsigned *count, fstate_t *st, double n, double sxx, double syy, int first)
{
    __shared__ double sh[TPB];
    int64_t tile = blockIdx.x, ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
    int64_t w = nx - 2 * b, cnt = (yb - ya) * w;
    double acc[3] = {0, 0, 0};
    int64_t sy = blockDim.x / w, sx = blockDim.x % w, y = ya + threadIdx.x / w, x = b + threadIdx.x % w; /* j's (y, x), walked */
    for (int64_t j = threadIdx.x; j < cnt; j += blockDim.x) {
        double v = h[y * nx + x];
        acc[0] += v;
        acc[1] += (double)xt[x] * v;
        acc[2] += (double)yt[y] * v;
        y += sy;
        x += sx;
        if (x >= b + w) {
            x -= w;
            y++;
        }
    }
    for (int k = 0; k < 3; k++) {
        double v = block_sum(acc[k], sh);
        if (threadIdx.x == 0) part[tile * 3 + k] = v;
    }
    if (last_block(count) && threadIdx.x == 0) bg_final(part, gridDim.x, st, n, sxx, syy, first);
}

__global__ void k_bg_tiles(const float *h, const float *xt, const float *yt, int64_t nx, int64_t ny, int64_t b, double *part,
                           unsigned *count, fstate_t *st, double n, double sxx, double syy, int first)
{
    bg_tiles_body(h, xt, yt, nx, ny, b, part, count, st, n, sxx, syy, first);
}

/* One thread. */
__device__ void bg_final(const double *part, int64_t ntiles, fstate_t *st, double n, double sxx, double syy, int first)
{
    double m[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        for (int64_t tile = 0; tile < ntiles; tile++) m[k] += __ldcg(part + tile * 3 + k);
    st->bg[0] = (float)(m[0] / n);
    st->bg[1] = (float)(m[1] / sxx);
    st->bg[2] = (float)(m[2] / syy);
    if (first)
        for (int k = 0; k < 3; k++) st->bg0[k] = st->bg[k];
}

__device__ void bg_sub_body(float *h, const float *xt, const float *yt, int64_t nx, int64_t np, const fstate_t *st)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= np) return;
    int64_t x = i % nx, y = i / nx;
    float base = __fadd_rn(st->bg[0], __fmul_rn(st->bg[2], yt[y]));
    h[i] = __fsub_rn(h[i], __fadd_rn(base, __fmul_rn(st->bg[1], xt[x])));
}

__global__ void k_bg_sub(float *h, const float *xt, const float *yt, int64_t nx, int64_t np, const fstate_t *st)
{
    bg_sub_body(h, xt, yt, nx, np, st);
}

/* Frame 0's masked pixels from the registered frame 1 (frames_cpu.c
 * repair_first), then frame 0 with its background back in, into out. */
__global__ void k_repair(float *h0, const float *h1, const uint8_t *bad0, int64_t nx, int64_t ny)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx * ny || !bad0[i]) return;
    h0[i] = fr_refill_value(h0, h1, bad0, nx, ny, i);
}

__global__ void k_addbg(const float *h0, float *out, const float *xt, const float *yt, int64_t nx, int64_t np, const fstate_t *st)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= np) return;
    int64_t x = i % nx, y = i / nx;
    out[i] = h0[i] + (st->bg0[0] + st->bg0[2] * yt[y] + st->bg0[1] * xt[x]);
}

/* u, v, w of the smoothed reference's gradient: one block per spectrum row
 * into part[3 ky..], then k_ref_final adds the rows in order. */
__global__ void k_ref_rows(const cufftComplex *G, const float *sm, const double *wxs, const double *wys, int64_t nh, double *part)
{
    __shared__ double sh[TPB];
    int64_t ky = blockIdx.x;
    double wy = wys[ky], ru = 0, rv = 0, rw = 0;
    for (int64_t kx = threadIdx.x; kx < nh; kx += blockDim.x) {
        cufftComplex g = G[ky * nh + kx];
        double a = (double)sm[ky * nh + kx] * ((double)g.x * g.x + (double)g.y * g.y);
        double wx = wxs[kx];
        ru += wx * wx * a;
        rv += wx * wy * a;
        rw += wy * wy * a;
    }
    ru = block_sum(ru, sh);
    rv = block_sum(rv, sh);
    rw = block_sum(rw, sh);
    if (threadIdx.x == 0) {
        part[3 * ky] = ru;
        part[3 * ky + 1] = rv;
        part[3 * ky + 2] = rw;
    }
}

__global__ void k_ref_final(const double *part, int64_t ny, fstate_t *st)
{
    if (threadIdx.x) return;
    double u = 0, v = 0, w = 0;
    for (int64_t ky = 0; ky < ny; ky++) {
        u += part[3 * ky];
        v += part[3 * ky + 1];
        w += part[3 * ky + 2];
    }
    st->u = u;
    st->v = v;
    st->w = w;
}

/* X = F conj(G) / |F conj(G)| (phase correlation). */
__device__ void xpower_body(const cufftComplex *F, const cufftComplex *G, cufftComplex *X, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    /* in double: the squares of products of spectra overflow float for large
     * frames; the same operations as on the CPU */
    double ar = F[i].x, ai = F[i].y, br = G[i].x, bi = -G[i].y;
    double re = __dsub_rn(__dmul_rn(ar, br), __dmul_rn(ai, bi)), im = __dadd_rn(__dmul_rn(ar, bi), __dmul_rn(ai, br));
    double mag = __dsqrt_rn(__dadd_rn(__dmul_rn(re, re), __dmul_rn(im, im))), inv = mag > 0 ? __ddiv_rn(1.0, mag) : 0.0;
    X[i].x = (float)__dmul_rn(re, inv);
    X[i].y = (float)__dmul_rn(im, inv);
}

__global__ void k_xpower(const cufftComplex *F, const cufftComplex *G, cufftComplex *X, int64_t n)
{
    xpower_body(F, G, X, n);
}

/* Per-block maximum (lowest index on ties) of c, then the final one (the
 * last block). */
__device__ void argmax_final(const double2 *blk, const long long *blkidx, int nblk, int64_t nx, int64_t ny, fstate_t *st);
__device__ void argmax_body(const float *c, int64_t np, double2 *blk, long long *blkidx, unsigned *count, int64_t nx, int64_t ny,
                            fstate_t *st)
{
    __shared__ float sv[TPB];
    __shared__ long long si[TPB];
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    float best = -INFINITY;
    long long bi = np;
    for (; i < np; i += (int64_t)gridDim.x * blockDim.x)
        if (c[i] > best) {
            best = c[i];
            bi = i;
        }
    sv[threadIdx.x] = best;
    si[threadIdx.x] = bi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float o = sv[threadIdx.x + s];
            long long oi = si[threadIdx.x + s];
            if (o > sv[threadIdx.x] || (o == sv[threadIdx.x] && oi < si[threadIdx.x])) {
                sv[threadIdx.x] = o;
                si[threadIdx.x] = oi;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        blk[blockIdx.x] = make_double2((double)sv[0], 0);
        blkidx[blockIdx.x] = si[0];
    }
    if (last_block(count)) argmax_final(blk, blkidx, gridDim.x, nx, ny, st);
}

__global__ void k_argmax(const float *c, int64_t np, double2 *blk, long long *blkidx, unsigned *count, int64_t nx, int64_t ny,
                         fstate_t *st)
{
    argmax_body(c, np, blk, blkidx, count, nx, ny, st);
}

/* The blocks' maxima (never NaN) reduced by one block: the largest value
 * and, among its blocks, the lowest index - what a scan in block order
 * finds, whatever the order of the reduction; none above -inf: index 0, as
 * that scan leaves it. */
__device__ void argmax_final(const double2 *blk, const long long *blkidx, int nblk, int64_t nx, int64_t ny, fstate_t *st)
{
    __shared__ double sv[TPB];
    __shared__ long long si[TPB];
    double best = -INFINITY;
    long long bi = LLONG_MAX;
    for (int b = threadIdx.x; b < nblk; b += blockDim.x) {
        double v = __ldcg(&blk[b].x);
        long long vi = __ldcg(blkidx + b);
        if (v > best || (v == best && vi < bi)) {
            best = v;
            bi = vi;
        }
    }
    sv[threadIdx.x] = best;
    si[threadIdx.x] = bi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            double o = sv[threadIdx.x + s];
            long long oi = si[threadIdx.x + s];
            if (o > sv[threadIdx.x] || (o == sv[threadIdx.x] && oi < si[threadIdx.x])) {
                sv[threadIdx.x] = o;
                si[threadIdx.x] = oi;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x) return;
    best = sv[0];
    bi = best > -INFINITY ? si[0] : 0;
    long long ix = bi % nx, iy = bi / nx;
    if (ix > nx / 2) ix -= nx;
    if (iy > ny / 2) iy -= ny;
    st->sx = (double)ix;
    st->sy = (double)iy;
    st->coarse = 1;
}

__global__ void k_start_prev(fstate_t *st)
{
    st->sx = st->prev_sx;
    st->sy = st->prev_sy;
    st->coarse = 0;
}

/* X = sm conj(G) F: the frame's part of the paper's sums. */
__device__ void pprod_body(const cufftComplex *F, const cufftComplex *G, const float *sm, cufftComplex *X, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float gr = G[i].x, gi = -G[i].y, fr = F[i].x, fi = F[i].y, s = sm[i];
    X[i].x = __fmul_rn(s, __fsub_rn(__fmul_rn(gr, fr), __fmul_rn(gi, fi)));
    X[i].y = __fmul_rn(s, __fadd_rn(__fmul_rn(gr, fi), __fmul_rn(gi, fr)));
}

__global__ void k_pprod(const cufftComplex *F, const cufftComplex *G, const float *sm, cufftComplex *X, int64_t n)
{
    pprod_body(F, G, sm, X, n);
}

/* Phase tables of the shift in st: e^{i omega s} per column and row. */
__device__ void phase_tables(int64_t nx, int64_t ny, int64_t nh, double sx, double sy, float *cx, float *sxt, float *cy,
                             float *syt, int64_t first, int64_t stride)
{
    for (int64_t k = first; k < nh + ny; k += stride) {
        if (k < nh) fr_phase(k, nx, sx, &cx[k], &sxt[k]);
        else fr_phase(k - nh, ny, sy, &cy[k - nh], &syt[k - nh]);
    }
}

/* Launches whose work the frame may not need, decided on the device (the
 * host queues them all): FR_UNLESS_DONE, a registration of the refinement
 * after it stopped (it would repeat the last one: its buffers already hold
 * the same values); FR_IF_MASKED, the masked pixels' refill of a frame
 * without any (the spectrum taken after it is the one already there). */
enum { FR_ALWAYS, FR_UNLESS_DONE, FR_IF_MASKED };
__device__ int skipped(const fstate_t *st, int when)
{
    return when == FR_UNLESS_DONE ? st->rdone != 0 : when == FR_IF_MASKED ? st->masked == 0 : 0;
}

/* sign -1: the tables of -s (the reference moved to the frame). */
__device__ void tables_body(int64_t nx, int64_t ny, int64_t nh, const fstate_t *st, float *cx, float *sxt, float *cy, float *syt,
                            double sign, int when)
{
    if (skipped(st, when)) return;
    phase_tables(nx, ny, nh, sign * st->sx, sign * st->sy, cx, sxt, cy, syt, (int64_t)blockIdx.x * blockDim.x + threadIdx.x,
                 (int64_t)gridDim.x * blockDim.x);
}

__global__ void k_tables(int64_t nx, int64_t ny, int64_t nh, const fstate_t *st, float *cx, float *sxt, float *cy, float *syt,
                         double sign = 1.0, int when = FR_ALWAYS)
{
    tables_body(nx, ny, nh, st, cx, sxt, cy, syt, sign, when);
}

/* One gradient iteration's row sums: rows ky = first, first + step, ... of
 * the spectrum X shifted by the phase tables, each summed by this block in
 * block_sum's order into part[2 ky] and part[2 ky + 1] (the tables are read
 * past L1: other blocks of the launch wrote them before the grid's sync). */
__device__ void iterate_rows(const cufftComplex *X, int64_t ny, int64_t nh, const float *cx, const float *sxt, const float *cy,
                             const float *syt, const double *wxs, const double *wys, double *part, int64_t first, int64_t step,
                             double *sh)
{
    for (int64_t ky = first; ky < ny; ky += step) {
        double rp = 0, rq = 0, wy = wys[ky];
        float cyv = __ldcg(cy + ky), syv = __ldcg(syt + ky);
        for (int64_t kx = threadIdx.x; kx < nh; kx += blockDim.x) {
            cufftComplex p = X[ky * nh + kx];
            float cxv = __ldcg(cx + kx), sxv = __ldcg(sxt + kx);
            float phr = __fsub_rn(__fmul_rn(cxv, cyv), __fmul_rn(sxv, syv));
            float phi = __fadd_rn(__fmul_rn(cxv, syv), __fmul_rn(sxv, cyv));
            double im = (double)p.x * phi + (double)p.y * phr;
            rq += wxs[kx] * im;
            rp += wy * im;
        }
        rp = block_sum(rp, sh);
        rq = block_sum(rq, sh);
        if (threadIdx.x == 0) {
            part[2 * ky] = rp;
            part[2 * ky + 1] = rq;
        }
    }
}

/* One gradient iteration's step, after iterate_rows' sums (read past L1:
 * other blocks wrote them before the grid's sync): P and Q, the rows added
 * in order by every block (the same totals in each), and the shift (*x, *y)
 * moved by the step they give; *it counts the iteration.  Returns 0 where
 * the iterations stop: no step (fr_shift_step), or a step below tol
 * (*done = 1). */
__device__ int iterate_step(const double *part, int64_t ny, double u, double v, double w, double tol, double *x, double *y, int *it,
                            int *done, double *sh)
{
    double P = 0, Q = 0;
    for (int64_t ky = threadIdx.x; ky < ny; ky += blockDim.x) {
        P += __ldcg(part + 2 * ky);
        Q += __ldcg(part + 2 * ky + 1);
    }
    P = block_sum(P, sh);
    Q = block_sum(Q, sh);
    (*it)++;
    double dx, dy;
    if (!fr_shift_step(P, Q, u, v, w, &dx, &dy)) return 0;
    *x -= dx;
    *y -= dy;
    if (fabs(dx) < tol && fabs(dy) < tol) {
        *done = 1;
        return 0;
    }
    return 1;
}

/* The iterations' outcome into the frame's state (by one thread). */
__device__ void iterate_store(fstate_t *st, double x, double y, int it, int done)
{
    st->sx = x;
    st->sy = y;
    st->prev_sx = x;
    st->prev_sy = y;
    st->iterations = it;
    if (!done) st->flags |= FR_FLAG_NOT_CONVERGED;
}

/* The gradient iterations, all in one cooperative launch: every iteration
 * writes the phase tables, sums each spectrum row (part[2 ky], [2 ky + 1]),
 * then every block adds the rows in the same order and takes the same step. */
__global__ void k_iterate(const cufftComplex *X, int64_t nx, int64_t ny, int64_t nh, float *cx, float *sxt, float *cy,
                          float *syt, const double *wxs, const double *wys, double *part, fstate_t *st, int max_it, double tol)
{
    cg::grid_group g = cg::this_grid();
    __shared__ double sh[TPB];
    double x = st->sx, y = st->sy, u = st->u, v = st->v, w = st->w;
    int it = 0, done = 0;
    int64_t gt = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, gs = (int64_t)gridDim.x * blockDim.x;
    while (it < max_it) {
        phase_tables(nx, ny, nh, x, y, cx, sxt, cy, syt, gt, gs);
        g.sync();
        iterate_rows(X, ny, nh, cx, sxt, cy, syt, wxs, wys, part, blockIdx.x, gridDim.x, sh);
        g.sync();
        if (!iterate_step(part, ny, u, v, w, tol, &x, &y, &it, &done, sh)) break;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) iterate_store(st, x, y, it, done);
}

/* X = F e^{i omega s} (tables already written for st's shift). */
__device__ void shiftmul_body(const cufftComplex *F, cufftComplex *X, cufftComplex *G2, int64_t nh, int64_t n, const float *cx,
                              const float *sxt, const float *cy, const float *syt, const fstate_t *st, int when)
{
    if (when != FR_ALWAYS && skipped(st, when)) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t ky = i / nh, kx = i - ky * nh;
    float phr = __fsub_rn(__fmul_rn(cx[kx], cy[ky]), __fmul_rn(sxt[kx], syt[ky]));
    float phi = __fadd_rn(__fmul_rn(cx[kx], syt[ky]), __fmul_rn(sxt[kx], cy[ky]));
    float fr = F[i].x, fi = F[i].y;
    cufftComplex r;
    r.x = __fsub_rn(__fmul_rn(fr, phr), __fmul_rn(fi, phi));
    r.y = __fadd_rn(__fmul_rn(fr, phi), __fmul_rn(fi, phr));
    X[i] = r;
    if (G2) G2[i] = r;
}

__global__ void k_shiftmul(const cufftComplex *F, cufftComplex *X, cufftComplex *G2, int64_t nh, int64_t n, const float *cx,
                           const float *sxt, const float *cy, const float *syt, const fstate_t *st = NULL, int when = FR_ALWAYS)
{
    shiftmul_body(F, X, G2, nh, n, cx, sxt, cy, syt, st, when);
}

__device__ void scale_body(const float *in, float *out, int64_t np, float s, const fstate_t *st, int when)
{
    if (when != FR_ALWAYS && skipped(st, when)) return;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < np) out[i] = __fmul_rn(in[i], s);
}

__global__ void k_scale(const float *in, float *out, int64_t np, float s, const fstate_t *st = NULL, int when = FR_ALWAYS)
{
    scale_body(in, out, np, s, st, when);
}

__global__ void k_store_shift(fstate_t *st, double *shx, double *shy, int ring, int64_t t, int zero)
{
    if (zero) {
        st->sx = st->sy = st->prev_sx = st->prev_sy = 0;
        st->iterations = 0;
        st->coarse = 0;
    }
    shx[t % ring] = st->sx;
    shy[t % ring] = st->sy;
}

/* Dot products of h_t with h_{t-k}, k = 0..n, over the frame less its
 * border: one block per tile and k (block tile * (n+1) + k: the blocks of a
 * tile run together and share its pixels of h_t in the cache) into
 * part[tile * (n+1) + k] (kept in their own buffer); every thread adds its
 * pixels j = thread, thread + blockDim, ... of the tile in that order, and the
 * block adds the threads' sums in block_sum's order, whatever the grid.
 * `only_if_cleaned`: again for the tiles whose pixels of h_t were replaced,
 * so the row equals a full recomputation.  The last block adds the tiles'
 * sums into the row of D (dots_final). */
__device__ void dots_tile(const float *ring, int64_t np, frame_slots_t sl, int64_t tile, int k, int64_t nx, int64_t ny, int64_t b,
                          double *part, int n, int only_if_cleaned, int *dirty);
__device__ void dots_final(const double *part, int64_t ntiles, int n, double *D, int dot_ring, int span, int64_t t,
                           const fstate_t *st, int only_if_cleaned);
__device__ void adopt_state(const fstate_t *f, fstate_t *st);
__device__ void write_record(const fstate_t *st, frec_t *rec, int64_t t, int var_mode);
/* Also, by block 0's first thread, where given: the frame's state from the
 * shift stage of its batch taken into st (adopt; no block reads st when
 * only_if_cleaned is 0), or the frame's record written (rec; every kernel
 * before has finished with the state).  The weights are solved by a launch
 * of their own (k_solve): the solve needs far more registers than the dot
 * products, and a kernel holding both would run every block of the dot
 * products at the solve's occupancy. */
__global__ void k_dots(const float *ring, int64_t np, frame_slots_t sl, int n, int64_t nx, int64_t ny, int64_t b, double *part,
                       fstate_t *st, int only_if_cleaned, int *dirty, unsigned *count, double *D, int dot_ring, int span,
                       int64_t t, const fstate_t *adopt = NULL, frec_t *rec = NULL, int var_mode = 0)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (adopt) adopt_state(adopt, st);
        if (rec) write_record(st, rec, t, var_mode);
    }
    int64_t tile = blockIdx.x / (n + 1);
    int k = (int)(blockIdx.x % (n + 1));
    if (!(only_if_cleaned && (st->cleaned == 0 || !dirty[tile])))
        dots_tile(ring, np, sl, tile, k, nx, ny, b, part, n, only_if_cleaned, dirty);
    if (last_block(count)) dots_final(part, gridDim.x / (n + 1), n, D, dot_ring, span, t, st, only_if_cleaned);
}

/* The weights (frames_math.h) by one block of TPB threads: the same
 * arithmetic as the one-thread solve, its sums spread over the block's
 * threads; the Gram matrix in global memory (work), the factor and vectors
 * in the dynamic shared memory (fast_words doubles) where they fit. */
__global__ void k_solve(const double *D, const double *shx, const double *shy, int dot_ring, int span, int64_t t, int N, int deg,
                        int window, double eps, double *work, int64_t fast_words, fstate_t *st)
{
    extern __shared__ double fast[];
    fr_dots_t d = {D, shx, shy, dot_ring, span};
    int flags = fr_weights_solve_block(&d, t, N, deg, window, eps, work, fast_words ? fast : NULL, fast_words, st->a, &st->used,
                                       &st->eps_used);
    if (threadIdx.x == 0) st->flags |= flags;
}

/* fr_cuda_dots_occupancy (frames_internal.h) */
extern "C" int fr_cuda_dots_occupancy(void)
{
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_dots, TPB, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return blocks * TPB;
}

/* The dot product of tile `tile` with h_{t-k}: one block. */
__device__ void dots_tile(const float *ring, int64_t np, frame_slots_t sl, int64_t tile, int k, int64_t nx, int64_t ny, int64_t b,
                          double *part, int n, int only_if_cleaned, int *dirty)
{
    if (!only_if_cleaned && k == 0 && threadIdx.x == 0) dirty[tile] = 0;
    __shared__ double sh[TPB];
    int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
    int64_t w = nx - 2 * b, cnt = (yb - ya) * w;
    const float *ht = ring + (int64_t)sl.slot[0] * np, *hk = ring + (int64_t)sl.slot[k] * np;
    /* (y, x) of j walked by steps of blockDim.x: no division per pixel */
    int64_t sy = blockDim.x / w, sx = blockDim.x % w, y = ya + threadIdx.x / w, x = b + threadIdx.x % w;
    double acc = 0;
    for (int64_t j = threadIdx.x; j < cnt; j += blockDim.x) {
        acc += (double)ht[y * nx + x] * (double)hk[y * nx + x];
        y += sy;
        x += sx;
        if (x >= b + w) {
            x -= w;
            y++;
        }
    }
    acc = block_sum(acc, sh);
    if (threadIdx.x == 0) part[tile * (n + 1) + k] = acc;
}

/* Thread k of k = 0..n (of the last block). */
__device__ void dots_final(const double *part, int64_t ntiles, int n, double *D, int dot_ring, int span, int64_t t,
                           const fstate_t *st, int only_if_cleaned)
{
    if (only_if_cleaned && st->cleaned == 0) return;
    int k = threadIdx.x;
    if (k > n) return;
    double s = 0;
    for (int64_t tile = 0; tile < ntiles; tile++) s += __ldcg(part + tile * (n + 1) + k);
    D[(t % dot_ring) * (span + 1) + k] = s;
}


__device__ uint8_t valid_at(const uint8_t *bad, int64_t i, int64_t nx, int64_t ny, int64_t b, const fstate_t *st, int align,
                            const uint8_t *refbad);
/* e = h_t - sum_k a_k h_{t-k} into e in the data's units (the unit is a
 * power of two: k_mfh divides it out again without a rounding), the
 * prediction into bh in the sequence's unit; a value of e that is not finite
 * marks the frame.  And the pixel's valid (valid_at). */
__global__ void k_whiten(const float *ring, int64_t np, frame_slots_t sl, fstate_t *st, float *e, float *bh, const uint8_t *bad,
                         uint8_t *valid, int64_t nx, int64_t ny, int64_t b, int align, const uint8_t *refbad)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= np) return;
    valid[i] = valid_at(bad, i, nx, ny, b, st, align, refbad);
    float h0 = ring[(int64_t)sl.slot[0] * np + i], v = h0;
    int n = st->used;
    for (int k = 1; k <= n; k++) v = __fsub_rn(v, __fmul_rn(st->a[k - 1], ring[(int64_t)sl.slot[k] * np + i]));
    float r = __fmul_rn(v, (float)st->unit);
    e[i] = r;
    if (!(fabsf(r) <= FLT_MAX)) atomicOr(&st->nonfinite, 1);
    bh[i] = __fsub_rn(h0, v);
}

/* valid = inside the border, no masked pixel within 2 of where this pixel
 * came from, and not near the reference's masked pixels. */
__device__ uint8_t valid_at(const uint8_t *bad, int64_t i, int64_t nx, int64_t ny, int64_t b, const fstate_t *st, int align,
                            const uint8_t *refbad)
{
    int64_t x = i % nx, y = i / nx;
    uint8_t v = (y >= b && y < ny - b && x >= b && x < nx - b) && !refbad[i];
    if (v && st->masked) {
        int64_t ox = align ? fr_pixel_shift(st->sx) : 0, oy = align ? fr_pixel_shift(st->sy) : 0;
        for (int64_t qy = y + oy - 2; qy <= y + oy + 2 && v; qy++)
            for (int64_t qx = x + ox - 2; qx <= x + ox + 2; qx++)
                if (qy >= 0 && qy < ny && qx >= 0 && qx < nx && bad[qy * nx + qx]) {
                    v = 0;
                    break;
                }
    }
    return v;
}

struct taps_t {
    float k[FR_MAX_TAPS], k2[FR_MAX_TAPS];
};

/* The matched filter's rows; e is in the data's units, t1 in the unit. */
__global__ void k_mfh(const float *e, const float *bh, float *t1, float *t2, int64_t nx, int64_t ny, int64_t b, int r, taps_t tp,
                      const fstate_t *st)
{
    int64_t w = nx - 2 * b, rows = ny - 2 * b + 2 * r;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= w * rows) return;
    int64_t y = b - r + i / w, x = b + i % w;
    float s1 = 0, s2 = 0;
    for (int j = -r; j <= r; j++) {
        s1 = __fadd_rn(s1, __fmul_rn(tp.k[j + r], e[y * nx + x + j]));
        s2 = __fadd_rn(s2, __fmul_rn(tp.k2[j + r], bh[y * nx + x + j]));
    }
    t1[y * nx + x] = __fmul_rn(s1, st->inv_unit);
    t2[y * nx + x] = s2;
}

/* x of the noise model: K^2 * (prediction + background); the background is a
 * plane, which the symmetric filter gives back times its sum k2sum.  With
 * variance planes (var_mode) t2 holds the variance's rows: x = K^2 * variance. */
__device__ void noise_step(const double *part, int64_t ntiles, fstate_t *st, int mode, double lam);
/* fit: also the noise model's fit from its running sums (noise_step mode 2,
 * block 0's first thread; no thread here reads the model). */
__global__ void k_mfv(const float *t1, const float *t2, float *m, float *xv, int64_t nx, int64_t ny, int64_t b, int r, taps_t tp,
                      fstate_t *st, const float *xt, const float *yt, float k2sum, int var_mode, int fit, double lam)
{
    if (fit && blockIdx.x == 0 && threadIdx.x == 0) noise_step(NULL, 0, st, 2, lam);
    int64_t w = nx - 2 * b, rows = ny - 2 * b;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= w * rows) return;
    int64_t y = b + i / w, x = b + i % w;
    float s1 = 0, s2 = 0;
    for (int j = -r; j <= r; j++) {
        s1 = __fadd_rn(s1, __fmul_rn(tp.k[j + r], t1[(y + j) * nx + x]));
        s2 = __fadd_rn(s2, __fmul_rn(tp.k2[j + r], t2[(y + j) * nx + x]));
    }
    m[y * nx + x] = s1;
    float base = st->bg[0] + st->bg[2] * yt[y];
    xv[y * nx + x] = var_mode ? s2 : s2 + fr_noise_bg(k2sum, base, st->bg[1], xt[x]);
}

/* The frame's variance plane registered as its image, in the unit squared
 * (frames_cpu.c, where the frame becomes pending). */
__global__ void k_varreg(const float *var, float *vreg, int64_t nx, int64_t ny, const fstate_t *st, int align)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx * ny) return;
    int64_t ox = align ? fr_pixel_shift(st->sx) : 0, oy = align ? fr_pixel_shift(st->sy) : 0;
    vreg[i] = fr_var_at(var, nx, ny, i % nx, i / nx, ox, oy, st->inv_unit * st->inv_unit);
}

/* Noise-model sums per tile (frames_cpu.c noise_sums): the sums of the
 * fit over the valid pixels not clipped, and those over the valid pixels
 * where no source is predicted (fr_noise_sky; with variance planes, all),
 * clipped or not. */
__device__ void noise_step(const double *part, int64_t ntiles, fstate_t *st, int mode, double lam);
__device__ void noise_tile(const float *m, const float *xv, const uint8_t *valid, int64_t nx, int64_t ny, int64_t b, fstate_t *st,
                           int clip, int var_mode, const float *xt, const float *yt, float k2sum, double *part, unsigned *count,
                           int mode, double lam, int64_t tile, unsigned ntiles)
{
    __shared__ double sh[TPB];
    int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
    int64_t w = nx - 2 * b, cnt = (yb - ya) * w;
    double acc[FR_NOISE_SUMS] = {0};
    double A = st->A, C = st->C, F = st->F;
    int64_t sy = blockDim.x / w, sx = blockDim.x % w, py = ya + threadIdx.x / w, px = b + threadIdx.x % w; /* j's (y, x), walked */
    for (int64_t j = threadIdx.x; j < cnt; j += blockDim.x) {
        const int64_t y = py, i = y * nx + px, col = px;
        py += sy;
        px += sx;
        if (px >= b + w) {
            px -= w;
            py++;
        }
        if (!valid[i]) continue;
        double mm = m[i], x = xv[i] > 0 ? xv[i] : 0.0f;
        double y2 = mm * mm;
        float base = st->bg[0] + st->bg[2] * yt[y];
        if (var_mode || fr_noise_sky(xv[i], fr_noise_bg(k2sum, base, st->bg[1], xt[col]))) {
            acc[5] += 1;
            acc[6] += x;
            acc[7] += y2;
            acc[8] += x * x;
        }
        if (clip && y2 > 25.0 * (double)fr_noise_var(A, C, F, (float)x)) continue;
        acc[0] += 1;
        acc[1] += x;
        acc[2] += x * x;
        acc[3] += y2;
        acc[4] += x * y2;
    }
    for (int s = 0; s < FR_NOISE_SUMS; s++) {
        double v = block_sum(acc[s], sh);
        if (threadIdx.x == 0) part[tile * FR_NOISE_SUMS + s] = v;
    }
    /* the last block takes the noise model's step (every block has read
     * A, C, F and bg above) */
    if (last_block(count, ntiles) && threadIdx.x == 0) noise_step(part, ntiles, st, mode, lam);
}

__global__ void k_noise_tiles(const float *m, const float *xv, const uint8_t *valid, int64_t nx, int64_t ny, int64_t b,
                              fstate_t *st, int clip, int var_mode, const float *xt, const float *yt, float k2sum,
                              double *part, unsigned *count, int mode, double lam)
{
    noise_tile(m, xv, valid, nx, ny, b, st, clip, var_mode, xt, yt, k2sum, part, count, mode, lam, blockIdx.x, gridDim.x);
}

/* mode 0: S = sums, fit A, C from S alone (first frame, unclipped);
 * mode 1: noise = S (first frame, clipped); mode 2: fit A, C from noise;
 * mode 3: noise = lambda noise + S.  One thread: k_noise_tiles' last block's,
 * or k_noise's for mode 2. */
__device__ void noise_step(const double *part, int64_t ntiles, fstate_t *st, int mode, double lam)
{
    double S[FR_NOISE_SUMS];
    if (mode != 2)
        for (int s = 0; s < FR_NOISE_SUMS; s++) {
            double v = 0;
            for (int64_t t = 0; t < ntiles; t++) v += __ldcg(part + t * FR_NOISE_SUMS + s);
            S[s] = v;
        }
    if (mode == 0) fr_noise_fit(S, &st->A, &st->C, &st->F);
    if (mode == 1)
        for (int s = 0; s < FR_NOISE_SUMS; s++) st->noise[s] = S[s];
    if (mode == 2) fr_noise_fit(st->noise, &st->A, &st->C, &st->F);
    if (mode == 3)
        for (int s = 0; s < FR_NOISE_SUMS; s++) st->noise[s] = lam * st->noise[s] + S[s];
}

__global__ void k_noise(fstate_t *st, double lam)
{
    if (threadIdx.x == 0) noise_step(NULL, 0, st, 2, lam);
}

/* Also the residual res 0 at the interior's pixels that are not valid
 * (nothing after reads the residual but its download). */
__global__ void k_snr(const float *m, const float *xv, const uint8_t *valid, float *z, float *maxz, int64_t nx, int64_t ny,
                      int64_t b, const fstate_t *st, int detecting, float *res)
{
    int64_t w = nx - 2 * b, i0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i0 >= w * (ny - 2 * b)) return;
    int64_t i = (b + i0 / w) * nx + b + i0 % w;
    float v = 0;
    if (valid[i]) v = m[i] / sqrtf(fr_noise_var(st->A, st->C, st->F, xv[i]));
    else res[i] = 0;
    z[i] = v;
    if (detecting && v > maxz[i]) maxz[i] = v;
}

/* Local maxima of z above kmin (frames_cpu.c detect) appended to the list. */
__device__ void peak_at(const float *z, const float *m, int64_t nx, int64_t ny, int64_t b, float kmin, double sum_k2, fcand_t *list,
                        fstate_t *st, int64_t i0)
{
    int64_t w = nx - 2 * b - 2;
    if (w <= 0 || i0 >= w * (ny - 2 * b - 2)) return;
    int64_t y = b + 1 + i0 / w, x = b + 1 + i0 % w, i = y * nx + x;
    float zc = z[i];
    if (!(zc > kmin)) return;
    if (!(zc > z[i - nx - 1] && zc > z[i - nx] && zc > z[i - nx + 1] && zc > z[i - 1] && zc >= z[i + 1] && zc >= z[i + nx - 1] &&
          zc >= z[i + nx] && zc >= z[i + nx + 1]))
        return;
    int slot = atomicAdd(&st->ncand, 1);
    if (slot >= FR_DEVICE_CANDIDATES) {
        atomicAdd(&st->dropped, 1);
        return;
    }
    float zl = z[i - 1], zr = z[i + 1], zu = z[i - nx], zd = z[i + nx];
    float ddx = zl - 2 * zc + zr, ddy = zu - 2 * zc + zd;
    float ox = ddx < 0 ? 0.5f * (zl - zr) / ddx : 0.0f, oy = ddy < 0 ? 0.5f * (zu - zd) / ddy : 0.0f;
    ox = fminf(0.5f, fmaxf(-0.5f, ox));
    oy = fminf(0.5f, fmaxf(-0.5f, oy));
    fcand_t c;
    c.idx = i;
    c.c.x = (float)x + ox;
    c.c.y = (float)y + oy;
    c.c.flux = (float)(m[i] / sum_k2 * st->unit);
    c.c.snr = zc;
    list[slot] = c;
}

/* The peaks (blocks from ntiles on), and in the first ntiles blocks the
 * noise model's sums of the frame and its step (k_noise_tiles); neither
 * reads what the other writes. */
__global__ void k_peaks(const float *z, const float *m, int64_t nx, int64_t ny, int64_t b, float kmin, double sum_k2, fcand_t *list,
                        fstate_t *st, unsigned ntiles, const float *xv, const uint8_t *valid, int var_mode, const float *xt,
                        const float *yt, float k2sum, double *part, unsigned *count, double lam)
{
    if (blockIdx.x < ntiles) {
        noise_tile(m, xv, valid, nx, ny, b, st, 1, var_mode, xt, yt, k2sum, part, count, 3, lam, blockIdx.x, ntiles);
        return;
    }
    peak_at(z, m, nx, ny, b, kmin, sum_k2, list, st, (int64_t)(blockIdx.x - ntiles) * blockDim.x + threadIdx.x);
}

/* Where the dot products look: the tiles whose pixels changed are summed
 * again (the others keep their partial sums). */
struct dirty_t {
    int *tile;
    int64_t nx, ny, b;
};

__device__ void clean_pixel(float *h, const float *bh, int64_t j, fstate_t *st, dirty_t dt)
{
    int nb = __float_as_int(bh[j]);
    int old = atomicExch((int *)&h[j], nb);
    if (old != nb) {
        atomicAdd(&st->cleaned, 1ull);
        int64_t x = j % dt.nx, y = j / dt.nx;
        if (x >= dt.b && x < dt.nx - dt.b && y >= dt.b && y < dt.ny - dt.b) dt.tile[(y - dt.b) / FR_TILE_ROWS] = 1;
    }
}

/* Disks around the peaks above clean_thr take the prediction in h_t; a
 * block per peak (blocks first, first + stride, ...). */
__device__ void clean_disks(float *h, const float *bh, const fcand_t *list, fstate_t *st, int64_t nx, int64_t ny, double r, float thr,
                            dirty_t dt, int first, int stride)
{
    int n = min(st->ncand, FR_DEVICE_CANDIDATES);
    for (int ci = first; ci < n; ci += stride) {
        fcand_t c = list[ci];
        if (!(c.c.snr > thr)) continue;
        int64_t px = c.idx % nx, py = c.idx / nx, ir = (int64_t)floor(r), side = 2 * ir + 1;
        for (int64_t j = threadIdx.x; j < side * side; j += blockDim.x) {
            int64_t x = px - ir + j % side, y = py - ir + j / side;
            if (y < 0 || y >= ny || x < 0 || x >= nx) continue;
            if ((double)((x - px) * (x - px) + (y - py) * (y - py)) > r * r) continue;
            clean_pixel(h, bh, y * nx + x, st, dt);
        }
    }
}

/* Pixels next to replaced input pixels take the prediction in h_t: pixel i. */
__device__ void clean_bad_pixel(float *h, const float *bh, const uint8_t *bad, int64_t nx, int64_t ny, fstate_t *st, int align,
                                dirty_t dt, int64_t i)
{
    if (st->masked == 0) return;
    if (i >= nx * ny) return;
    int64_t x = i % nx, y = i / nx;
    int64_t ox = align ? fr_pixel_shift(st->sx) : 0, oy = align ? fr_pixel_shift(st->sy) : 0;
    for (int64_t qy = y + oy - 1; qy <= y + oy + 1; qy++)
        for (int64_t qx = x + ox - 1; qx <= x + ox + 1; qx++)
            if (qy >= 0 && qy < ny && qx >= 0 && qx < nx && bad[qy * nx + qx]) {
                clean_pixel(h, bh, i, st, dt);
                return;
            }
}

/* Both cleanings in one launch: blocks 0 .. pix_blocks - 1 the pixels next
 * to replaced ones, the blocks after them the disks (none where cleaning is
 * off).  A pixel takes the same value whichever writes it, and counts once
 * (clean_pixel), so the order does not matter. */
__global__ void k_cleans(float *h, const float *bh, const uint8_t *bad, const fcand_t *list, fstate_t *st, int64_t nx, int64_t ny,
                         int align, unsigned pix_blocks, double r, float thr, dirty_t dt)
{
    if (blockIdx.x < pix_blocks) {
        clean_bad_pixel(h, bh, bad, nx, ny, st, align, dt, (int64_t)blockIdx.x * blockDim.x + threadIdx.x);
        return;
    }
    clean_disks(h, bh, list, st, nx, ny, r, thr, dt, (int)(blockIdx.x - pix_blocks), (int)(gridDim.x - pix_blocks));
}

__global__ void k_record(const fstate_t *st, frec_t *rec, int64_t t, int var_mode)
{
    if (threadIdx.x == 0) write_record(st, rec, t, var_mode);
}

__device__ void write_record(const fstate_t *st, frec_t *rec, int64_t t, int var_mode)
{
    rec->sx = t ? st->sx : 0;
    rec->sy = t ? st->sy : 0;
    rec->eps_used = st->eps_used;
    rec->noise_a = var_mode ? st->A : st->A * st->unit; /* with variance planes A is a pure number */
    rec->noise_c = st->C * st->unit * st->unit;
    rec->rms = st->rms;
    rec->nonfinite = st->nonfinite;
    rec->unit_set = st->unit_set;
    rec->iterations = t ? st->iterations : 0;
    rec->coarse = t ? st->coarse : 0;
    rec->flags = st->flags;
    rec->used = st->used;
    rec->ncand = min(st->ncand, FR_DEVICE_CANDIDATES);
    rec->dropped = st->dropped;
    rec->masked = (long long)st->masked;
    rec->cleaned = (long long)st->cleaned;
    for (int k = 0; k < FR_MAX_HISTORY; k++) rec->weights[k] = k < st->used ? st->a[k] : 0.0f;
}

/* ---------------------------------------------------------------- frames in batches
 * The shift stage of several frames at once (fr_cuda_t's batch): each
 * kernel below runs the one-frame kernel's body above for frame
 * blockIdx.y of the batch, on that frame's buffers (planes of the batch's
 * arrays, its own state in stb, its own block counters), so every frame
 * gets the one-frame path's values; the ring slots the frames register into
 * come as a list. */
struct fptrs_t {
    float *p[FR_BATCH_MAX];
};

/* The sequence's state at the start of the batch into every frame's state. */
__global__ void kb_init(const fstate_t *st, fstate_t *stb, int *stop)
{
    if (threadIdx.x) return;
    stb[blockIdx.x] = *st;
    stop[blockIdx.x] = 0;
}

/* The frame's results of the shift stage into the sequence's state, for the
 * stages after it (which keep their own running values). */
__global__ void k_adopt(const fstate_t *f, fstate_t *st)
{
    if (threadIdx.x == 0) adopt_state(f, st);
}

__device__ void adopt_state(const fstate_t *f, fstate_t *st)
{
    st->sx = f->sx;
    st->sy = f->sy;
    st->prev_sx = f->prev_sx;
    st->prev_sy = f->prev_sy;
    for (int k = 0; k < 3; k++) st->bg[k] = f->bg[k];
    st->rdone = f->rdone;
    st->fill = f->fill;
    st->rms = f->rms;
    st->rescale = f->rescale;
    st->nonfinite = f->nonfinite;
    st->iterations = f->iterations;
    st->flags = f->flags;
    st->coarse = f->coarse;
    st->masked = f->masked;
    st->cleaned = f->cleaned;
    st->ncand = f->ncand;
    st->dropped = f->dropped;
}

__global__ void kb_ingest(const void *raw, size_t frame_bytes, int type, int64_t np, float *in, uint8_t *bad, double *blk,
                          unsigned *count, fstate_t *stb)
{
    int64_t f = blockIdx.y;
    ingest_body((const char *)raw + f * (int64_t)frame_bytes, type, np, in + f * np, bad + f * np, blk + f * 4 * (int64_t)gridDim.x,
                count + f, stb + f);
}

__global__ void kb_fill_bad(float *in, const uint8_t *bad, int64_t nx, int64_t ny, const fstate_t *stb)
{
    int64_t f = blockIdx.y, np = nx * ny;
    fill_bad_body(in + f * np, bad + f * np, nx, ny, stb + f);
}

__global__ void kb_xpower(const cufftComplex *F, const cufftComplex *G, cufftComplex *X, int64_t n)
{
    int64_t f = blockIdx.y;
    xpower_body(F + f * n, G, X + f * n, n);
}

__global__ void kb_argmax(const float *c, int64_t np, double2 *blk, long long *blkidx, unsigned *count, int64_t nx, int64_t ny,
                          fstate_t *stb)
{
    int64_t f = blockIdx.y, nb = gridDim.x;
    argmax_body(c + f * np, np, blk + f * nb, blkidx + f * nb, count + f, nx, ny, stb + f);
}

__global__ void kb_pprod(const cufftComplex *F, const cufftComplex *G, const float *sm, cufftComplex *X, int64_t n)
{
    int64_t f = blockIdx.y;
    pprod_body(F + f * n, G, sm, X + f * n, n);
}

/* Each frame's phase tables: nh + ny of them per frame. */
__global__ void kb_tables(int64_t nx, int64_t ny, int64_t nh, const fstate_t *stb, float *cx, float *sxt, float *cy, float *syt,
                          double sign, int when)
{
    int64_t f = blockIdx.y;
    tables_body(nx, ny, nh, stb + f, cx + f * nh, sxt + f * nh, cy + f * ny, syt + f * ny, sign, when);
}

/* F_stride: 0 where every frame multiplies the same spectrum (the reference's). */
__global__ void kb_shiftmul(const cufftComplex *F, int64_t F_stride, cufftComplex *X, int64_t nh, int64_t ny, const float *cx,
                            const float *sxt, const float *cy, const float *syt, const fstate_t *stb, int when)
{
    int64_t f = blockIdx.y, n = nh * ny;
    shiftmul_body(F + f * F_stride, X + f * n, (cufftComplex *)NULL, nh, n, cx + f * nh, sxt + f * nh, cy + f * ny, syt + f * ny,
                  stb + f, when);
}

__global__ void kb_scale(const float *in, fptrs_t out, int64_t np, float s, const fstate_t *stb, int when)
{
    int64_t f = blockIdx.y;
    scale_body(in + f * np, out.p[f], np, s, stb + f, when);
}

__global__ void kb_refill(float *in, const float *g, const uint8_t *bad, int64_t nx, int64_t ny, const fstate_t *stb)
{
    int64_t f = blockIdx.y, np = nx * ny;
    refill_body(in + f * np, g + f * np, bad + f * np, nx, ny, stb + f);
}

__global__ void kb_rsv(const uint8_t *bad, const uint8_t *refbad, uint8_t *sv, int64_t nx, int64_t ny, int64_t b, fstate_t *stb)
{
    int64_t f = blockIdx.y, np = nx * ny;
    rsv_body(bad + f * np, refbad, sv + f * np, nx, ny, b, stb + f);
}

__global__ void kb_rsums(fptrs_t h, const float *r, const float *gx, const float *gy, const uint8_t *sv, int64_t nx, int64_t ny,
                         int64_t b, double *part, int64_t pstride, unsigned *count, fstate_t *stb, int k, double tol, double *shx,
                         double *shy, int ring, int64_t t0)
{
    int64_t f = blockIdx.y;
    rsums_body(h.p[f], r, gx, gy, sv + f * nx * ny, nx, ny, b, part + f * pstride, count + f, stb + f, k, tol, shx, shy, ring,
               t0 + f);
}

__global__ void kb_copy(const float *in, fptrs_t h, int64_t np)
{
    int64_t f = blockIdx.y, i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < np) h.p[f][i] = in[f * np + i];
}

__global__ void kb_bg_tiles(fptrs_t h, const float *xt, const float *yt, int64_t nx, int64_t ny, int64_t b, double *part,
                            int64_t pstride, unsigned *count, fstate_t *stb, double n, double sxx, double syy)
{
    int64_t f = blockIdx.y;
    bg_tiles_body(h.p[f], xt, yt, nx, ny, b, part + f * pstride, count + f, stb + f, n, sxx, syy, 0);
}

__global__ void kb_bg_sub(fptrs_t h, const float *xt, const float *yt, int64_t nx, int64_t np, const fstate_t *stb)
{
    int64_t f = blockIdx.y;
    bg_sub_body(h.p[f], xt, yt, nx, np, stb + f);
}

/* k_iterate for the frames of a batch in one cooperative launch: frame f
 * has blocks f bpf .. f bpf + bpf - 1 (blocks past the frames only take
 * part in the grid's syncs).  Each frame's iterations are those of
 * k_iterate, whose sums do not depend on the grid (a row is summed by one
 * block in block_sum's order, the rows in order by every block of the
 * frame); a frame that stopped waits, and the launch ends when every frame
 * has stopped (stop[f], read after a sync) or after max_it rounds. */
__global__ void kb_iterate(const cufftComplex *X, int64_t nx, int64_t ny, int64_t nh, float *cx, float *sxt, float *cy, float *syt,
                           const double *wxs, const double *wys, double *part, int64_t pstride, fstate_t *stb, int *stop, int nfr,
                           int bpf, int max_it, double tol)
{
    cg::grid_group g = cg::this_grid();
    __shared__ double sh[TPB];
    const int f = (int)(blockIdx.x / bpf), lb = (int)(blockIdx.x % bpf);
    const int mine = f < nfr;
    const int64_t fi = mine ? f : 0;
    fstate_t *st = stb + fi;
    const cufftComplex *Xf = X + fi * nh * ny;
    float *cxf = cx + fi * nh, *sxf = sxt + fi * nh, *cyf = cy + fi * ny, *syf = syt + fi * ny;
    double *pf = part + fi * pstride;
    double x = st->sx, y = st->sy, u = st->u, v = st->v, w = st->w;
    int it = 0, done = 0, stopped = !mine;
    int64_t gt = (int64_t)lb * blockDim.x + threadIdx.x, gs = (int64_t)bpf * blockDim.x;
    for (int round = 0; round < max_it; round++) {
        if (!stopped) phase_tables(nx, ny, nh, x, y, cxf, sxf, cyf, syf, gt, gs);
        g.sync();
        if (round > 0) { /* the frames' stops of the round before, the same for every block */
            int all = 1;
            for (int q = 0; q < nfr; q++) all &= __ldcg(stop + q) != 0;
            if (all) break;
        }
        if (!stopped) iterate_rows(Xf, ny, nh, cxf, sxf, cyf, syf, wxs, wys, pf, lb, bpf, sh);
        g.sync();
        if (!stopped) {
            stopped = !iterate_step(pf, ny, u, v, w, tol, &x, &y, &it, &done, sh);
            if (stopped && lb == 0 && threadIdx.x == 0) stop[f] = 1;
        }
    }
    if (mine && lb == 0 && threadIdx.x == 0) iterate_store(st, x, y, it, done);
}

/* ---------------------------------------------------------------- host */

static void fr_cuda_destroy(fr_cuda_t **gpu)
{
    if (!gpu || !*gpu) return;
    fr_cuda_t *g = *gpu;
    const pyr_device_ops_t *rt = &pyr_device_cuda;
    if (g->rt) {
        cudaSetDevice(g->device);
        for (int q = 0; q < 3; q++)
            if (g->rt->stream[q]) cudaStreamSynchronize(g->rt->stream[q]);
        if (g->plans & 1) g->fft->Destroy(g->r2c);
        if (g->plans & 2) g->fft->Destroy(g->c2r);
        if (g->plans & 4) g->fft->Destroy(g->r2cb);
        if (g->plans & 8) g->fft->Destroy(g->c2rb);
        void *dev[] = {g->d_in, g->d_ring, g->d_bh, g->d_t1, g->d_t2, g->d_m, g->d_xv, g->d_z, g->d_maxz, g->d_sm, g->d_cx, g->d_sxt,
                       g->d_cy, g->d_syt, g->d_bad, g->d_valid, g->d_F, g->d_X, g->d_G, g->d_D, g->d_shx, g->d_shy, g->d_part,
                       g->d_work, g->d_blk, g->d_iblk, g->d_blkidx, g->d_st, g->d_wx, g->d_wy, g->d_dpart, g->d_dirty, g->d_count,
                       g->d_rref, g->d_rgx, g->d_rgy, g->d_xt, g->d_yt, g->d_refbad, g->d_sv, g->d_bad0, g->d_var, g->d_vreg,
                       g->d_rawb[0], g->d_rawb[1], g->d_inb, g->d_t1b, g->d_t2b, g->d_cxb, g->d_sxtb, g->d_cyb, g->d_sytb,
                       g->d_badb, g->d_svb, g->d_Fb, g->d_Xb, g->d_partb, g->d_iblkb, g->d_blkb, g->d_blkidxb, g->d_countb,
                       g->d_stb, g->d_stop};
        for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) rt->dev_free(g->rt, dev[i]);
        for (int k = 0; k < SLOTS; k++) {
            rt->dev_free(g->rt, g->d_raw[k]);
            if (g->h_raw[k]) rt->host_free(g->rt, g->h_raw[k]);
            if (g->ev_up[k]) cudaEventDestroy(g->ev_up[k]);
            if (g->ev_used[k]) cudaEventDestroy(g->ev_used[k]);
        }
        for (int k = 0; k < OUT_SLOTS; k++) {
            rt->dev_free(g->rt, g->d_res[k]); /* with the slot's record and candidates */
            if (g->h_res[k]) rt->host_free(g->rt, g->h_res[k]);
            if (g->ev_done[k]) cudaEventDestroy(g->ev_done[k]);
            if (g->ev_down[k]) cudaEventDestroy(g->ev_down[k]);
        }
        for (int k = 0; k < 2; k++) {
            if (g->h_rawb[k]) rt->host_free(g->rt, g->h_rawb[k]);
            if (g->ev_upb[k]) cudaEventDestroy(g->ev_upb[k]);
            if (g->ev_usedb[k]) cudaEventDestroy(g->ev_usedb[k]);
        }
        if (g->ev_qup) cudaEventDestroy(g->ev_qup);
        for (int q = 0; q < SHIFT_SETS; q++)
            for (int e = 0; e < 2; e++)
                if (g->ev_shift[q][e]) cudaEventDestroy(g->ev_shift[q][e]);
        for (int q = 0; q < STAGE_SETS; q++)
            for (int e = 0; e < 5; e++)
                if (g->ev_stage[q][e]) cudaEventDestroy(g->ev_stage[q][e]);
        if (g->h_var) rt->host_free(g->rt, g->h_var);
        if (g->ev_var) cudaEventDestroy(g->ev_var);
        (void)cudaGetLastError();
        rt->destroy(g->rt); /* back to the context cache; the ranges pinned through it unregistered */
    }
    free(g->cand_host);
    free(g);
    *gpu = NULL;
}

/* Device memory through the runtime; out of memory says what the frames need. */
static pyr_status_t dalloc(fr_cuda_t *g, void **p, size_t bytes, double need_mib)
{
    const pyr_status_t st = pyr_device_cuda.dev_alloc(g->rt, bytes ? bytes : 1, p);
    if (st != PYR_ERR_DEVICE_NOMEM) return st;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) (void)cudaGetLastError();
    return pyr_fail(PYR_ERR_DEVICE_NOMEM, "frames on the GPU need about %.0f MiB of device memory (the history ring and ~19 "
                                          "frame buffers), %.0f MiB are free: use a shorter history, or backend = cpu",
                    need_mib, (double)fr / 1048576.0);
}

static pyr_status_t fr_cuda_create(const fr_setup_t *s, fr_cuda_t **gpu)
{
    *gpu = NULL;
    const int count = pyr_cuda_device_count();
    if (count == 0) return pyr_fail(PYR_ERR_NODEVICE, "backend = cuda, but no usable GPU was found; use backend = cpu");
    if (s->o.device < 0 || s->o.device >= count)
        return pyr_fail(PYR_ERR_NODEVICE, "device = %d, but there %s %d GPU%s (0..%d); choose one of them", s->o.device,
                        count == 1 ? "is" : "are", count, count == 1 ? "" : "s", count - 1);
    fr_cuda_t *g = (fr_cuda_t *)calloc(1, sizeof *g);
    if (!g) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    g->s = *s;
    g->device = s->o.device;
    g->by = pyrcu::issuer_t{g->device, "frames on the GPU", "use a shorter history, smaller frames, or backend = cpu",
                            "or use backend = cpu"};
    g->np = s->nx * s->ny;
    g->nh = s->nx / 2 + 1;
    g->nch = g->nh * s->ny;
    g->ntiles = (s->ny - 2 * s->o.border + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    g->cand_host = (pyr_frames_candidate_t *)malloc(FR_DEVICE_CANDIDATES * sizeof *g->cand_host);
    pyr_status_t st = PYR_OK;
#define TRY(x)                                                                                                                \
    do {                                                                                                                      \
        st = (x);                                                                                                             \
        if (st != PYR_OK) {                                                                                                   \
            fr_cuda_destroy(&g);                                                                                              \
            return st;                                                                                                        \
        }                                                                                                                     \
    } while (0)
#define CUT(call)                                                                                                             \
    do {                                                                                                                      \
        cudaError_t e_ = (call);                                                                                              \
        if (e_ != cudaSuccess) TRY(pyrcu::fail_cuda(e_, #call, g->by));                                                       \
    } while (0)
    if (!g->cand_host) TRY(pyr_fail(PYR_ERR_NOMEM, "out of memory"));
    TRY(pyrcu::cufft_api(&g->fft, "the frames pipeline on the GPU", "or use backend = cpu"));
    pyr_options_t ro;
    pyr_options_default(&ro);
    ro.backend = PYR_BACKEND_CUDA;
    ro.device = g->device;
    void *rt = NULL;
    TRY(pyr_device_cuda.create(&ro, PYR_FLOAT, &rt));
    g->rt = (pyrcu::ctx_t *)rt;
    const pyrcu::device_t *dev = g->rt->dev;
    if (!dev->cooperative) TRY(pyr_fail(PYR_ERR_UNSUPPORTED, "GPU %s cannot launch cooperative kernels; use backend = cpu", dev->name));
    for (int q = 0; q < 3; q++) TRY(pyrcu::check_queue(g->rt, q));
    g->up = g->rt->stream[0];
    g->cs = g->rt->stream[1];
    g->down = g->rt->stream[2];
    size_t fb = (size_t)g->np * sizeof(float), cb = (size_t)g->nch * sizeof(cufftComplex);
    {
        /* frames per batch: enough that small frames' launches are shared by
         * many (the launches, not the pixels, set their time), within half
         * the free memory; the batch's blocks of the shift iterations must
         * all fit on the GPU at once.  Frames above FR_BATCH_PIXELS go one
         * at a time: a frame's work then takes far longer than its launches,
         * and a batch would only add its costs (its iterations run until
         * the slowest frame of the batch has stopped, each frame on a part
         * of the GPU; the host waits on the batch's upload; more out slots) */
        int per_sm = 0;
        CUT(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kb_iterate, TPB, 0));
        g->coop_blocks_b = per_sm * dev->sms;
        int64_t B = g->np > FR_BATCH_PIXELS ? 1 : (INT64_C(1) << 25) / g->np;
        if (B > FR_BATCH_MAX) B = FR_BATCH_MAX;
        if (B > g->coop_blocks_b) B = g->coop_blocks_b;
        if (s->o.coarse == PYR_FRAMES_COARSE_NEVER) B = 1;
        if (batch_cap >= 1 && batch_cap < B) B = batch_cap;
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) (void)cudaGetLastError();
        double per = 30.0 * (double)g->np + 2.0 * (double)cb + 2.0 * FR_DEVICE_CANDIDATES * sizeof(fcand_t);
        while (B > 1 && (double)B * per > 0.5 * (double)fr) B--;
        if (B < 1) B = 1;
        g->B = (int)B;
        g->nout = B > 1 ? 2 * (int)B + 1 : SLOTS;
        g->ring_n = s->pix_ring + (int)B - 1;
        g->dring = s->dot_ring + (int)B - 1;
        g->bpf = (int)(g->coop_blocks_b / B);
        if (g->bpf > s->ny) g->bpf = (int)s->ny;
        if (g->bpf < 1) g->bpf = 1;
    }
    double need = ((double)(g->ring_n + 16 + 8 * (g->B - 1)) * (double)fb + (3.0 + 2.0 * (g->B - 1)) * (double)cb +
                   5.0 * (double)g->np) / 1048576.0;
    int64_t nblk = grid_for(g->np);
    int span = s->o.history;
    int mterms = s->deg < 0 ? 1 : fr_poly_terms(s->deg);
    TRY(dalloc(g, (void **)&g->d_in, fb, need));
    TRY(dalloc(g, (void **)&g->d_ring, fb * (size_t)g->ring_n, need));
    TRY(dalloc(g, (void **)&g->d_bh, fb, need));
    TRY(dalloc(g, (void **)&g->d_t1, fb, need));
    TRY(dalloc(g, (void **)&g->d_t2, fb, need));
    TRY(dalloc(g, (void **)&g->d_m, fb, need));
    TRY(dalloc(g, (void **)&g->d_xv, fb, need));
    TRY(dalloc(g, (void **)&g->d_z, fb, need));
    TRY(dalloc(g, (void **)&g->d_maxz, fb, need));
    TRY(dalloc(g, (void **)&g->d_sm, (size_t)g->nch * sizeof(float), need));
    TRY(dalloc(g, (void **)&g->d_cx, (size_t)g->nh * sizeof(float), need));
    TRY(dalloc(g, (void **)&g->d_sxt, (size_t)g->nh * sizeof(float), need));
    TRY(dalloc(g, (void **)&g->d_cy, (size_t)s->ny * sizeof(float), need));
    TRY(dalloc(g, (void **)&g->d_syt, (size_t)s->ny * sizeof(float), need));
    TRY(dalloc(g, (void **)&g->d_bad, (size_t)g->np, need));
    TRY(dalloc(g, (void **)&g->d_valid, (size_t)g->np, need));
    TRY(dalloc(g, (void **)&g->d_refbad, (size_t)g->np, need));
    TRY(dalloc(g, (void **)&g->d_sv, (size_t)g->np, need));
    TRY(dalloc(g, (void **)&g->d_bad0, (size_t)g->np, need));
    TRY(dalloc(g, (void **)&g->d_rref, fb, need));
    TRY(dalloc(g, (void **)&g->d_rgx, fb, need));
    TRY(dalloc(g, (void **)&g->d_rgy, fb, need));
    TRY(dalloc(g, (void **)&g->d_xt, (size_t)s->nx * sizeof(float), need));
    TRY(dalloc(g, (void **)&g->d_yt, (size_t)s->ny * sizeof(float), need));
    TRY(dalloc(g, (void **)&g->d_F, cb, need));
    TRY(dalloc(g, (void **)&g->d_X, cb, need));
    TRY(dalloc(g, (void **)&g->d_G, cb, need));
    TRY(dalloc(g, (void **)&g->d_D, (size_t)g->dring * (size_t)(span + 1) * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_shx, (size_t)g->dring * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_shy, (size_t)g->dring * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_wx, (size_t)g->nh * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_wy, (size_t)s->ny * sizeof(double), need));
    size_t nparts = (size_t)g->ntiles * (size_t)(span + 2 + FR_NOISE_SUMS);
    if (nparts < 5 * (size_t)g->ntiles) nparts = 5 * (size_t)g->ntiles;
    if (nparts < 3 * (size_t)s->ny) nparts = 3 * (size_t)s->ny;
    TRY(dalloc(g, (void **)&g->d_part, nparts * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_dpart, (size_t)g->ntiles * (size_t)(span + 1) * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_dirty, (size_t)g->ntiles * sizeof(int), need));
    TRY(dalloc(g, (void **)&g->d_count, FR_COUNTERS * sizeof(unsigned), need));
    TRY(dalloc(g, (void **)&g->d_work, (size_t)fr_weights_work(span, mterms) * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_blk, (size_t)nblk * sizeof(double2), need));
    TRY(dalloc(g, (void **)&g->d_iblk, (size_t)nblk * 4 * sizeof(double), need));
    TRY(dalloc(g, (void **)&g->d_blkidx, (size_t)nblk * sizeof(long long), need));
    TRY(dalloc(g, (void **)&g->d_st, sizeof(fstate_t), need));
    const pyr_device_ops_t *ops = &pyr_device_cuda;
    for (int k = 0; k < SLOTS; k++) {
        TRY(dalloc(g, &g->d_raw[k], fb, need));
        TRY(ops->host_alloc(g->rt, fb, &g->h_raw[k]));
        CUT(cudaEventCreateWithFlags(&g->ev_up[k], cudaEventDisableTiming));
        CUT(cudaEventCreateWithFlags(&g->ev_used[k], cudaEventDisableTiming));
    }
    for (int k = 0; k < g->nout; k++) {
        g->rec_off = (fb + 255) & ~(size_t)255;
        g->cand_off = g->rec_off + ((sizeof(frec_t) + 255) & ~(size_t)255);
        TRY(dalloc(g, (void **)&g->d_res[k], g->cand_off + FR_DEVICE_CANDIDATES * sizeof(fcand_t), need));
        g->d_rec[k] = (frec_t *)((char *)g->d_res[k] + g->rec_off);
        g->d_cand[k] = (fcand_t *)((char *)g->d_res[k] + g->cand_off);
        TRY(ops->host_alloc(g->rt, g->cand_off + REC_CANDS * sizeof(fcand_t), (void **)&g->h_res[k]));
        g->h_rec[k] = (frec_t *)((char *)g->h_res[k] + g->rec_off);
        g->h_cand[k] = (fcand_t *)((char *)g->h_res[k] + g->cand_off);
        CUT(cudaEventCreateWithFlags(&g->ev_done[k], cudaEventDisableTiming));
        CUT(cudaEventCreateWithFlags(&g->ev_down[k], cudaEventDisableTiming));
    }
    for (int q = 0; q < 2 * g->nout; q++)
        for (int e = 0; e < 5; e++) CUT(cudaEventCreate(&g->ev_stage[q][e]));
    if (g->B > 1) {
        size_t B = (size_t)g->B, bytes;
        g->pstride = 5 * g->ntiles > 2 * s->ny ? 5 * g->ntiles : 2 * s->ny;
        for (int k = 0; k < 2; k++) {
            TRY(dalloc(g, &g->d_rawb[k], B * fb, need));
            TRY(ops->host_alloc(g->rt, B * fb, &g->h_rawb[k]));
            CUT(cudaEventCreateWithFlags(&g->ev_upb[k], cudaEventDisableTiming));
            CUT(cudaEventCreateWithFlags(&g->ev_usedb[k], cudaEventDisableTiming));
        }
        CUT(cudaEventCreateWithFlags(&g->ev_qup, cudaEventDisableTiming));
        for (int q = 0; q < SHIFT_SETS; q++)
            for (int e = 0; e < 2; e++) CUT(cudaEventCreate(&g->ev_shift[q][e]));
        /* every plane written before it is read by a transform of the whole
         * batch, also those of a batch shorter than B */
        void **zeroed[] = {(void **)&g->d_inb, (void **)&g->d_t1b, (void **)&g->d_t2b, (void **)&g->d_Fb, (void **)&g->d_Xb};
        size_t zbytes[] = {B * fb, B * fb, B * fb, B * cb, B * cb};
        for (int k = 0; k < 5; k++) {
            TRY(dalloc(g, zeroed[k], zbytes[k], need));
            CUT(cudaMemset(*zeroed[k], 0, zbytes[k]));
        }
        TRY(dalloc(g, (void **)&g->d_badb, B * (size_t)g->np, need));
        TRY(dalloc(g, (void **)&g->d_svb, B * (size_t)g->np, need));
        bytes = B * (size_t)g->nh * sizeof(float);
        TRY(dalloc(g, (void **)&g->d_cxb, bytes, need));
        TRY(dalloc(g, (void **)&g->d_sxtb, bytes, need));
        bytes = B * (size_t)s->ny * sizeof(float);
        TRY(dalloc(g, (void **)&g->d_cyb, bytes, need));
        TRY(dalloc(g, (void **)&g->d_sytb, bytes, need));
        TRY(dalloc(g, (void **)&g->d_partb, B * (size_t)g->pstride * sizeof(double), need));
        TRY(dalloc(g, (void **)&g->d_iblkb, B * (size_t)nblk * 4 * sizeof(double), need));
        TRY(dalloc(g, (void **)&g->d_blkb, B * 1024 * sizeof(double2), need));
        TRY(dalloc(g, (void **)&g->d_blkidxb, B * 1024 * sizeof(long long), need));
        TRY(dalloc(g, (void **)&g->d_countb, B * FR_COUNTERS * sizeof(unsigned), need));
        CUT(cudaMemset(g->d_countb, 0, B * FR_COUNTERS * sizeof(unsigned)));
        TRY(dalloc(g, (void **)&g->d_stb, B * sizeof(fstate_t), need));
        TRY(dalloc(g, (void **)&g->d_stop, B * sizeof(int), need));
    }
    CUT(cudaMemset(g->d_ring, 0, fb * (size_t)g->ring_n));
    CUT(cudaMemset(g->d_maxz, 0, fb));
    CUT(cudaMemset(g->d_z, 0, fb));
    CUT(cudaMemset(g->d_m, 0, fb));
    CUT(cudaMemset(g->d_xv, 0, fb));
    CUT(cudaMemset(g->d_D, 0, (size_t)g->dring * (size_t)(span + 1) * sizeof(double)));
    CUT(cudaMemset(g->d_shx, 0, (size_t)g->dring * sizeof(double)));
    CUT(cudaMemset(g->d_shy, 0, (size_t)g->dring * sizeof(double)));
    CUT(cudaMemset(g->d_count, 0, FR_COUNTERS * sizeof(unsigned)));
    fstate_t st0;
    memset(&st0, 0, sizeof st0);
    st0.unit = 1;
    st0.inv_unit = 1;
    CUT(cudaMemcpy(g->d_st, &st0, sizeof st0, cudaMemcpyHostToDevice));
    /* S^2 w / N as float, exactly as the CPU computes it */
    float *sm = (float *)malloc((size_t)g->nch * sizeof(float));
    if (!sm) TRY(pyr_fail(PYR_ERR_NOMEM, "out of memory"));
    for (int64_t ky = 0; ky < s->ny; ky++)
        for (int64_t kx = 0; kx < g->nh; kx++) {
            double S = fr_smooth(fr_omega(kx, s->nx), fr_omega(ky, s->ny));
            sm[ky * g->nh + kx] = (float)(S * S * fr_half_weight(kx, s->nx) / (double)g->np);
        }
    cudaError_t e = cudaMemcpy(g->d_sm, sm, (size_t)g->nch * sizeof(float), cudaMemcpyHostToDevice);
    free(sm);
    CUT(e);
    {
        /* the background basis, as the CPU computes it */
        int64_t b = s->o.border;
        float *xy = (float *)malloc((size_t)(s->nx + s->ny) * sizeof(float));
        if (!xy) TRY(pyr_fail(PYR_ERR_NOMEM, "out of memory"));
        for (int64_t x = 0; x < s->nx; x++) xy[x] = (float)fr_bg_coord(x, s->nx);
        for (int64_t y = 0; y < s->ny; y++) xy[s->nx + y] = (float)fr_bg_coord(y, s->ny);
        g->bg_sxx = g->bg_syy = 0;
        for (int64_t x = b; x < s->nx - b; x++) g->bg_sxx += (double)xy[x] * xy[x];
        for (int64_t y = b; y < s->ny - b; y++) g->bg_syy += (double)xy[s->nx + y] * xy[s->nx + y];
        g->bg_n = (double)(s->nx - 2 * b) * (double)(s->ny - 2 * b);
        g->bg_sxx *= (double)(s->ny - 2 * b);
        g->bg_syy *= (double)(s->nx - 2 * b);
        e = cudaMemcpy(g->d_xt, xy, (size_t)s->nx * sizeof(float), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemcpy(g->d_yt, xy + s->nx, (size_t)s->ny * sizeof(float), cudaMemcpyHostToDevice);
        free(xy);
        CUT(e);
    }
    CUT(cudaMemset(g->d_refbad, 0, (size_t)g->np));
    double *ws = (double *)malloc((size_t)(g->nh + s->ny) * sizeof(double));
    if (!ws) TRY(pyr_fail(PYR_ERR_NOMEM, "out of memory"));
    for (int64_t kx = 0; kx < g->nh; kx++) ws[kx] = sin(fr_omega(kx, s->nx));
    for (int64_t ky = 0; ky < s->ny; ky++) ws[g->nh + ky] = sin(fr_omega(ky, s->ny));
    e = cudaMemcpy(g->d_wx, ws, (size_t)g->nh * sizeof(double), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(g->d_wy, ws + g->nh, (size_t)s->ny * sizeof(double), cudaMemcpyHostToDevice);
    free(ws);
    CUT(e);
    if (g->fft->Plan2d(&g->r2c, (int)s->ny, (int)s->nx, CUFFT_R2C) != CUFFT_SUCCESS)
        TRY(pyr_fail(PYR_ERR_DEVICE_NOMEM, "cuFFT could not plan a %lld x %lld transform (device memory?); use backend = cpu",
                     (long long)s->nx, (long long)s->ny));
    g->plans |= 1;
    if (g->fft->Plan2d(&g->c2r, (int)s->ny, (int)s->nx, CUFFT_C2R) != CUFFT_SUCCESS)
        TRY(pyr_fail(PYR_ERR_DEVICE_NOMEM, "cuFFT could not plan a %lld x %lld transform (device memory?); use backend = cpu",
                     (long long)s->nx, (long long)s->ny));
    g->plans |= 2;
    if (g->B > 1) {
        /* the batch's transforms, one plane after another */
        int n[2] = {(int)s->ny, (int)s->nx};
        if (g->fft->PlanMany(&g->r2cb, 2, n, NULL, 1, (int)g->np, NULL, 1, (int)g->nch, CUFFT_R2C, g->B) != CUFFT_SUCCESS)
            TRY(pyr_fail(PYR_ERR_DEVICE_NOMEM, "cuFFT could not plan %d %lld x %lld transforms (device memory?); use backend = cpu",
                         g->B, (long long)s->nx, (long long)s->ny));
        g->plans |= 4;
        if (g->fft->PlanMany(&g->c2rb, 2, n, NULL, 1, (int)g->nch, NULL, 1, (int)g->np, CUFFT_C2R, g->B) != CUFFT_SUCCESS)
            TRY(pyr_fail(PYR_ERR_DEVICE_NOMEM, "cuFFT could not plan %d %lld x %lld transforms (device memory?); use backend = cpu",
                         g->B, (long long)s->nx, (long long)s->ny));
        g->plans |= 8;
    }
    cufftResult fs = g->fft->SetStream(g->r2c, g->cs);
    if (fs == CUFFT_SUCCESS) fs = g->fft->SetStream(g->c2r, g->cs);
    if (fs == CUFFT_SUCCESS && g->B > 1) fs = g->fft->SetStream(g->r2cb, g->cs);
    if (fs == CUFFT_SUCCESS && g->B > 1) fs = g->fft->SetStream(g->c2rb, g->cs);
    if (fs != CUFFT_SUCCESS) TRY(pyrcu::fail_cufft(fs, "cufftSetStream", g->by));
    int per_sm = 0;
    CUT(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_iterate, TPB, 0));
    g->coop_blocks = per_sm * dev->sms;
    if (g->coop_blocks > s->ny) g->coop_blocks = (int)s->ny;
    if (g->coop_blocks < 1) TRY(pyr_fail(PYR_ERR_DEVICE, "the shift kernel cannot run on %s", dev->name));
#undef TRY
#undef CUT
    *gpu = g;
    return PYR_OK;
}

static void fr_cuda_describe(const fr_cuda_t *g, char *text, size_t size)
{
    if (g->B > 1) snprintf(text, size, "GPU %d: %.80s, shifts in batches of %d", g->device, g->rt->dev->name, g->B);
    else snprintf(text, size, "GPU %d: %.100s", g->device, g->rt->dev->name);
}

static int is_pinned(const fr_cuda_t *g, const void *p, size_t bytes)
{
    for (int i = 0; i < g->npinned; i++)
        if ((const char *)p >= (const char *)g->pinned[i] && (const char *)p + bytes <= (const char *)g->pinned[i] + g->pinned_bytes[i])
            return 1;
    return 0;
}

static pyr_status_t fr_cuda_pin(fr_cuda_t *g, void *host, size_t bytes)
{
    if (g->npinned == 16) return pyr_fail(PYR_ERR_ARG, "pyr_frames_pin: at most 16 ranges");
    PYR_TRY(pyr_device_cuda.host_register(g->rt, host, bytes)); /* unregistered when the context is given back */
    g->pinned[g->npinned] = host;
    g->pinned_bytes[g->npinned++] = bytes;
    return PYR_OK;
}

/* Deliver the frame in out slot j (its download has finished). */
static pyr_status_t deliver_slot(fr_cuda_t *g, int j, fr_deliver_t deliver, void *driver)
{
    CU(cudaEventSynchronize(g->ev_down[j]));
    const frec_t *r = g->h_rec[j];
    fr_out_t out;
    memset(&out, 0, sizeof out);
    int64_t t = g->pend_t[j];
    int q = (int)(t % (2 * g->nout));
    if (g->stage_timed[q]) { /* recorded on cs before ev_done, which the download waited for */
        for (int e = g->stage_timed[q] == 1 ? 0 : 1; e < 4; e++) {
            float ms = 0;
            CU(cudaEventElapsedTime(&ms, g->ev_stage[q][e], g->ev_stage[q][e + 1]));
            g->stage_ms[e] += ms;
        }
        if (g->stage_timed[q] == 1) g->shift_frames++;
        g->stage_frames++;
        g->stage_timed[q] = 0;
    }
    if (r->unit_set) g->unit_known = 1;
    out.frame = t;
    out.dx = r->sx;
    out.dy = r->sy;
    out.iterations = r->iterations;
    out.coarse_used = r->coarse;
    out.flags = r->flags;
    out.used = r->used;
    out.eps_used = r->eps_used;
    memcpy(out.weights, r->weights, sizeof out.weights);
    out.masked = r->masked;
    out.cleaned = r->cleaned;
    out.detecting = t > 0 && t > g->s.o.warmup;
    out.noise_a = r->noise_a;
    out.noise_c = r->noise_c;
    out.rms = r->rms;
    out.nonfinite = r->nonfinite;
    float *res = g->pend_out[j];
    if (res && !g->pend_direct[j]) memcpy(res, g->h_res[j], (size_t)g->np * sizeof(float));
    out.residual = res ? res : g->h_res[j];
    /* candidates: sort the device's list (filled in any order) by pixel, report those above the threshold */
    int n = r->ncand;
    fcand_t *list = g->h_cand[j];
    fcand_t *all = list;
    fcand_t *big = NULL;
    if (n > REC_CANDS) { /* the first REC_CANDS in the device's (arbitrary) order; the rest count as dropped */
        big = (fcand_t *)malloc((size_t)REC_CANDS * sizeof *big);
        if (!big) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
        memcpy(big, list, REC_CANDS * sizeof *big);
        n = REC_CANDS;
        all = big;
    }
    /* insertion sort by index (lists are short) */
    for (int a = 1; a < n; a++) {
        fcand_t c = all[a];
        int b = a - 1;
        while (b >= 0 && all[b].idx > c.idx) {
            all[b + 1] = all[b];
            b--;
        }
        all[b + 1] = c;
    }
    int nrep = 0, dropped = r->dropped + (r->ncand - n);
    if (out.detecting)
        for (int a = 0; a < n; a++)
            if (all[a].c.snr > g->s.o.threshold) {
                if (nrep < g->s.o.max_candidates) g->cand_host[nrep++] = all[a].c;
                else dropped++;
            }
    if (!out.detecting) dropped = 0;
    out.cand = g->cand_host;
    out.ncand = nrep;
    out.dropped = dropped;
    free(big);
    g->pending[j] = 0;
    g->delivered++;
    return deliver(driver, &out);
}

/* The reference's pixel images from G and the pixels near its masked ones
 * (bad, moved by the shift in the state or by none): frames_cpu.c
 * reference_images. */
static pyr_status_t ref_images(fr_cuda_t *g, const uint8_t *bad, int shifted)
{
    const fr_setup_t *s = &g->s;
    cudaStream_t cs = g->cs;
    float *dst[3] = {g->d_rref, g->d_rgx, g->d_rgy};
    for (int which = 0; which < 3; which++) {
        k_refcoef<<<grid_for(g->nch), TPB, 0, cs>>>(g->d_G, g->d_X, s->nx, s->ny, g->nh, which);
        LAUNCHED();
        FFT(g->fft->ExecC2R(g->c2r, g->d_X, dst[which]));
    }
    k_nearbad<<<grid_for(g->np), TPB, 0, cs>>>(bad, g->d_refbad, s->nx, s->ny, g->d_st, shifted, 1);
    LAUNCHED();
    return PYR_OK;
}

/* Deliver the frames up to frame `last` in order, waiting for their downloads. */
static pyr_status_t deliver_upto(fr_cuda_t *g, int64_t last, fr_deliver_t deliver, void *driver)
{
    for (int64_t d = g->delivered; d <= last && d < g->queued; d++) {
        int j = (int)(d % g->nout);
        if (g->pending[j]) PYR_TRY(deliver_slot(g, j, deliver, driver));
    }
    return PYR_OK;
}

/* Deliver, in order, the frames whose downloads have finished. */
static pyr_status_t deliver_ready(fr_cuda_t *g, fr_deliver_t deliver, void *driver)
{
    for (int64_t d = g->delivered; d < g->queued; d++) {
        int j = (int)(d % g->nout);
        if (!g->pending[j]) continue;
        if (cudaEventQuery(g->ev_down[j]) == cudaErrorNotReady) break;
        (void)cudaGetLastError();
        PYR_TRY(deliver_slot(g, j, deliver, driver));
    }
    return PYR_OK;
}

/* The rolling reference: the frame of spectrum F (its shift in the state),
 * moved into frame 0's coordinates; bad: its masked pixels. */
static pyr_status_t new_reference(fr_cuda_t *g, const cufftComplex *F, const uint8_t *bad)
{
    const fr_setup_t *s = &g->s;
    cudaStream_t cs = g->cs;
    int64_t nx = s->nx, ny = s->ny;
    k_tables<<<grid_for(g->nh + ny), TPB, 0, cs>>>(nx, ny, g->nh, g->d_st, g->d_cx, g->d_sxt, g->d_cy, g->d_syt);
    k_shiftmul<<<grid_for(g->nch), TPB, 0, cs>>>(F, g->d_X, g->d_G, g->nh, g->nch, g->d_cx, g->d_sxt, g->d_cy, g->d_syt);
    k_ref_rows<<<(unsigned)ny, TPB, 0, cs>>>(g->d_G, g->d_sm, g->d_wx, g->d_wy, g->nh, g->d_part);
    k_ref_final<<<1, 32, 0, cs>>>(g->d_part, ny, g->d_st);
    LAUNCHED();
    return ref_images(g, bad, 1);
}

static pyr_status_t tail(fr_cuda_t *g, int64_t t, float *h, const uint8_t *bad, const fstate_t *adopt, const float *var,
                         float *residual_out, int timed, fr_deliver_t deliver, void *driver);

/* One frame, all its stages (the frames before the batches start, or every
 * frame where there are no batches). */
static pyr_status_t push_one(fr_cuda_t *g, const void *frame, pyr_frames_dtype_t type, const float *var, float *residual_out,
                             fr_deliver_t deliver, void *driver)
{
    const fr_setup_t *s = &g->s;
    const pyr_frames_options_t *o = &s->o;
    int64_t t = g->t, nx = s->nx, ny = s->ny, np = g->np, b = o->border;
    int k = (int)(t % SLOTS); /* the input slot */
    /* input: the slot's previous frame must have been converted */
    size_t bytes = (size_t)np * (type == PYR_FRAMES_F32 ? 4u : 2u);
    int wait_up = 0;
    if (g->in_use[k]) CU(cudaEventSynchronize(g->ev_used[k]));
    if (is_pinned(g, frame, bytes)) {
        CU(cudaMemcpyAsync(g->d_raw[k], frame, bytes, cudaMemcpyHostToDevice, g->up));
        CU(cudaEventRecord(g->ev_up[k], g->up));
        wait_up = 1; /* the caller may reuse the frame when we return: waited for once the frame's work is queued */
    } else {
        memcpy(g->h_raw[k], frame, bytes);
        CU(cudaMemcpyAsync(g->d_raw[k], g->h_raw[k], bytes, cudaMemcpyHostToDevice, g->up));
        CU(cudaEventRecord(g->ev_up[k], g->up));
    }
    g->in_use[k] = 1;
    CU(cudaStreamWaitEvent(g->cs, g->ev_up[k], 0));
    cudaStream_t cs = g->cs;
    unsigned gp = grid_for(np), gc = grid_for(g->nch);
    const int timed = t % STAGE_EVERY == 0;
    cudaEvent_t *evs = g->ev_stage[t % (2 * g->nout)];
    if (timed) CU(cudaEventRecord(evs[0], cs));
    /* integer pixels are finite: only float frames can have masked pixels
     * (the driver's masks come as NaN in float frames); an integer pixel
     * beyond float's range in the unit gets the frame refused (nonfinite)
     * whatever is done with it */
    const int may_mask = type == PYR_FRAMES_F32;
    /* 1. ingest */
    k_ingest<<<gp, TPB, 0, cs>>>(g->d_raw[k], (int)type, np, g->d_in, g->d_bad, g->d_iblk, g->d_count, g->d_st);
    k_fill<<<gp, TPB, 0, cs>>>(g->d_in, g->d_bad, np, g->d_st);
    if (may_mask) k_fill_bad<<<gp, TPB, 0, cs>>>(g->d_in, g->d_bad, nx, ny, g->d_st);
    LAUNCHED();
    CU(cudaEventRecord(g->ev_used[k], cs));
    if (t == 0 && may_mask) {
        /* frame 0's masked pixels are repaired from frame 1 (the one time the
         * host waits on the device before a frame's delivery) */
        unsigned long long m0 = 0;
        CU(cudaMemcpyAsync(&m0, &g->d_st->masked, sizeof m0, cudaMemcpyDeviceToHost, cs));
        CU(cudaStreamSynchronize(cs));
        g->masked0 = m0 > 0;
        if (g->masked0) CU(cudaMemcpyAsync(g->d_bad0, g->d_bad, (size_t)np, cudaMemcpyDeviceToDevice, cs));
    }
    /* 2. spectrum, shift, registration */
    FFT(g->fft->ExecR2C(g->r2c, g->d_in, g->d_F));
    int new_ref = t == 0 || (o->reference == PYR_FRAMES_REF_ROLLING && t % o->reference_every == 0);
    float *h = g->d_ring + (t % g->ring_n) * np;
    unsigned gt = grid_for(g->nh + ny);
    if (t == 0) {
        CU(cudaMemcpyAsync(g->d_G, g->d_F, (size_t)g->nch * sizeof(cufftComplex), cudaMemcpyDeviceToDevice, cs));
        k_ref_rows<<<(unsigned)ny, TPB, 0, cs>>>(g->d_G, g->d_sm, g->d_wx, g->d_wy, g->nh, g->d_part);
        k_ref_final<<<1, 32, 0, cs>>>(g->d_part, ny, g->d_st);
        k_store_shift<<<1, 1, 0, cs>>>(g->d_st, g->d_shx, g->d_shy, g->dring, t, 1);
        LAUNCHED();
        PYR_TRY(ref_images(g, g->d_bad, 1));
        if (s->align) {
            k_tables<<<gt, TPB, 0, cs>>>(nx, ny, g->nh, g->d_st, g->d_cx, g->d_sxt, g->d_cy, g->d_syt);
            k_shiftmul<<<gc, TPB, 0, cs>>>(g->d_F, g->d_X, (cufftComplex *)NULL, g->nh, g->nch, g->d_cx, g->d_sxt, g->d_cy, g->d_syt);
            LAUNCHED();
            FFT(g->fft->ExecC2R(g->c2r, g->d_X, g->d_t1));
            k_scale<<<gp, TPB, 0, cs>>>(g->d_t1, h, np, 1.0f / (float)np);
            LAUNCHED();
        } else {
            CU(cudaMemcpyAsync(h, g->d_in, (size_t)np * sizeof(float), cudaMemcpyDeviceToDevice, cs));
        }
    } else {
        if (o->coarse == PYR_FRAMES_COARSE_NEVER) {
            k_start_prev<<<1, 1, 0, cs>>>(g->d_st);
        } else { /* always, and auto (the GPU always has time for it) */
            k_xpower<<<gc, TPB, 0, cs>>>(g->d_F, g->d_G, g->d_X, g->nch);
            FFT(g->fft->ExecC2R(g->c2r, g->d_X, g->d_t1));
            unsigned nb = gp < 1024 ? gp : 1024;
            k_argmax<<<nb, TPB, 0, cs>>>(g->d_t1, np, g->d_blk, g->d_blkidx, g->d_count + 1, nx, ny, g->d_st);
        }
        k_pprod<<<gc, TPB, 0, cs>>>(g->d_F, g->d_G, g->d_sm, g->d_X, g->nch);
        LAUNCHED();
        int max_it = o->max_iterations;
        double tol = o->tolerance;
        int64_t nh = g->nh;
        void *args[] = {&g->d_X, &nx, &ny, &nh, &g->d_cx, &g->d_sxt, &g->d_cy, &g->d_syt, &g->d_wx, &g->d_wy, &g->d_part, &g->d_st, &max_it, &tol};
        CU(cudaLaunchCooperativeKernel((void *)k_iterate, dim3((unsigned)g->coop_blocks), dim3(TPB), args, 0, cs));
        /* masked pixels: the reference moved to the frame, then the spectrum
         * again (frames_cpu.c refill_masked; the kernels do nothing for a
         * frame without masked pixels, whose spectrum comes out the same, so
         * a frame that cannot have any skips them: the buffers written here
         * are written again before they are read) */
        if (may_mask) {
            k_tables<<<gt, TPB, 0, cs>>>(nx, ny, g->nh, g->d_st, g->d_cx, g->d_sxt, g->d_cy, g->d_syt, -1.0, FR_IF_MASKED);
            k_shiftmul<<<gc, TPB, 0, cs>>>(g->d_G, g->d_X, (cufftComplex *)NULL, g->nh, g->nch, g->d_cx, g->d_sxt, g->d_cy, g->d_syt,
                                           g->d_st, FR_IF_MASKED);
            LAUNCHED();
            FFT(g->fft->ExecC2R(g->c2r, g->d_X, g->d_t1));
            k_scale<<<gp, TPB, 0, cs>>>(g->d_t1, g->d_t2, np, 1.0f / (float)np, g->d_st, FR_IF_MASKED);
            k_refill<<<gp, TPB, 0, cs>>>(g->d_in, g->d_t2, g->d_bad, nx, ny, g->d_st);
            LAUNCHED();
            FFT(g->fft->ExecR2C(g->r2c, g->d_in, g->d_F));
        }
        /* the refinement over the interior (frames_cpu.c refine_shift): a
         * fixed number of registrations; those after the step fell below the
         * tolerance repeat the last one */
        float *hr = s->align ? h : g->d_t2;
        k_rsv<<<gp, TPB, 0, cs>>>(g->d_bad, g->d_refbad, g->d_sv, nx, ny, b, g->d_st);
        for (int it = 0; it < FR_REFINE_MAX; it++) {
            k_tables<<<gt, TPB, 0, cs>>>(nx, ny, g->nh, g->d_st, g->d_cx, g->d_sxt, g->d_cy, g->d_syt, 1.0, FR_UNLESS_DONE);
            k_shiftmul<<<gc, TPB, 0, cs>>>(g->d_F, g->d_X, (cufftComplex *)NULL, g->nh, g->nch, g->d_cx, g->d_sxt, g->d_cy,
                                           g->d_syt, g->d_st, FR_UNLESS_DONE);
            LAUNCHED();
            FFT(g->fft->ExecC2R(g->c2r, g->d_X, g->d_t1));
            k_scale<<<gp, TPB, 0, cs>>>(g->d_t1, hr, np, 1.0f / (float)np, g->d_st, FR_UNLESS_DONE);
            /* the last step also stores the frame's shift (k_store_shift) */
            k_rsums<<<(unsigned)g->ntiles, TPB, 0, cs>>>(hr, g->d_rref, g->d_rgx, g->d_rgy, g->d_sv, nx, ny, b, g->d_part,
                                                         g->d_count + 2, g->d_st, it, tol, g->d_shx, g->d_shy, g->dring, t);
            LAUNCHED();
        }
        if (!s->align) CU(cudaMemcpyAsync(h, g->d_in, (size_t)np * sizeof(float), cudaMemcpyDeviceToDevice, cs));
        if (new_ref) PYR_TRY(new_reference(g, g->d_F, g->d_bad));
        if (t == 1 && g->masked0) {
            /* frames_cpu.c repair_first */
            float *h0 = g->d_ring;
            k_repair<<<gp, TPB, 0, cs>>>(h0, h, g->d_bad0, nx, ny);
            k_addbg<<<gp, TPB, 0, cs>>>(h0, g->d_t1, g->d_xt, g->d_yt, nx, np, g->d_st);
            LAUNCHED();
            FFT(g->fft->ExecR2C(g->r2c, g->d_t1, g->d_G));
            k_ref_rows<<<(unsigned)ny, TPB, 0, cs>>>(g->d_G, g->d_sm, g->d_wx, g->d_wy, g->nh, g->d_part);
            k_ref_final<<<1, 32, 0, cs>>>(g->d_part, ny, g->d_st);
            LAUNCHED();
            PYR_TRY(ref_images(g, g->d_bad0, 0));
            frame_slots_t s0;
            s0.slot[0] = 0;
            k_dots<<<(unsigned)g->ntiles, TPB, 0, cs>>>(g->d_ring, np, s0, 0, nx, ny, b, g->d_dpart, g->d_st, 0, g->d_dirty,
                                                        g->d_count + 3, g->d_D, g->dring, o->history, 0);
            LAUNCHED();
        }
    }
    /* the background leaves the frame (frames_cpu.c remove_background) */
    k_bg_tiles<<<(unsigned)g->ntiles, TPB, 0, cs>>>(h, g->d_xt, g->d_yt, nx, ny, b, g->d_part, g->d_count + 2, g->d_st, g->bg_n,
                                                    g->bg_sxx, g->bg_syy, t == 0);
    k_bg_sub<<<gp, TPB, 0, cs>>>(h, g->d_xt, g->d_yt, nx, np, g->d_st);
    LAUNCHED();
    if (timed) CU(cudaEventRecord(evs[1], cs));
    PYR_TRY(tail(g, t, h, g->d_bad, NULL, var, residual_out, timed, deliver, driver));
    g->t++;
    if (wait_up) CU(cudaEventSynchronize(g->ev_up[k]));
    return PYR_OK;
}

/* The stages of frame t after its shift (its registered image h, its
 * masked pixels bad, its shift and the rest in d_st): dot products, weights,
 * whitening, detection, cleaning, its record and its download through out
 * slot t % nout.  adopt: the frame's state from its batch's shift stage,
 * taken into d_st by the first kernel here (NULL: d_st has it).  timed: 1 (a
 * frame of its own, ev_stage's first two events recorded already) or 2 (a
 * frame of a batch: the later three stages only). */
static pyr_status_t tail(fr_cuda_t *g, int64_t t, float *h, const uint8_t *bad, const fstate_t *adopt, const float *var,
                         float *residual_out, int timed, fr_deliver_t deliver, void *driver)
{
    const fr_setup_t *s = &g->s;
    const pyr_frames_options_t *o = &s->o;
    int64_t nx = s->nx, ny = s->ny, np = g->np, b = o->border;
    int k = (int)(t % g->nout);
    cudaStream_t cs = g->cs;
    unsigned gp = grid_for(np);
    cudaEvent_t *evs = g->ev_stage[t % (2 * g->nout)];
    if (timed == 2) CU(cudaEventRecord(evs[1], cs));
    /* 3. dots row, weights */
    int n = (int)(t < o->history ? t : o->history);
    frame_slots_t sl;
    for (int q = 0; q <= n; q++) sl.slot[q] = (int)((t - q) % g->ring_n);
    /* the row of dot products, then the weights */
    k_dots<<<(unsigned)(g->ntiles * (n + 1)), TPB, 0, cs>>>(g->d_ring, np, sl, n, nx, ny, b, g->d_dpart, g->d_st, 0, g->d_dirty,
                                                            g->d_count + 3, g->d_D, g->dring, o->history, t, adopt);
    int64_t nmax = (int64_t)o->history * (s->deg < 0 ? 1 : fr_poly_terms(s->deg)), fast_words = nmax * nmax + 2 * nmax;
    if (fast_words * (int64_t)sizeof(double) > 40 * 1024) fast_words = 0; /* within the default limit of shared memory */
    k_solve<<<1, TPB, (size_t)fast_words * sizeof(double), cs>>>(g->d_D, g->d_shx, g->d_shy, g->dring, o->history, t, o->history,
                                                                 s->deg, s->window, o->epsilon, g->d_work, fast_words, g->d_st);
    LAUNCHED();
    if (timed) CU(cudaEventRecord(evs[2], cs));
    /* out slot k: its previous frame must be delivered (and those before it, in order) */
    if (g->pending[k]) PYR_TRY(deliver_upto(g, g->pend_t[k], deliver, driver));
    float *res = g->d_res[k];
    if (t == 0) {
        CU(cudaMemsetAsync(res, 0, (size_t)np * sizeof(float), cs));
        if (timed) CU(cudaEventRecord(evs[3], cs));
        k_record<<<1, 32, 0, cs>>>(g->d_st, g->d_rec[k], t, g->var_mode);
        LAUNCHED();
    } else {
        k_whiten<<<gp, TPB, 0, cs>>>(g->d_ring, np, sl, g->d_st, res, g->d_bh, bad, g->d_valid, nx, ny, b, s->align, g->d_refbad);
        LAUNCHED();
        if (timed) CU(cudaEventRecord(evs[3], cs));
        if (g->var_mode) {
            /* through pinned staging, once the previous frame's plane has left it */
            CU(cudaEventSynchronize(g->ev_var));
            memcpy(g->h_var, var, (size_t)np * sizeof(float));
            CU(cudaMemcpyAsync(g->d_var, g->h_var, (size_t)np * sizeof(float), cudaMemcpyHostToDevice, cs));
            CU(cudaEventRecord(g->ev_var, cs));
            k_varreg<<<gp, TPB, 0, cs>>>(g->d_var, g->d_vreg, nx, ny, g->d_st, s->align);
            LAUNCHED();
        }
        taps_t tp;
        memcpy(tp.k, s->taps, sizeof tp.k);
        memcpy(tp.k2, s->taps2, sizeof tp.k2);
        int r = s->radius;
        k_mfh<<<grid_for((nx - 2 * b) * (ny - 2 * b + 2 * r)), TPB, 0, cs>>>(res, g->var_mode ? g->d_vreg : g->d_bh, g->d_t1,
                                                                          g->d_t2, nx, ny, b, r, tp, g->d_st);
        /* the noise model's fit (from the frames before) in k_mfv, after frame 1's start below */
        double lam = 1.0 - 1.0 / (double)o->noise_frames;
        k_mfv<<<grid_for((nx - 2 * b) * (ny - 2 * b)), TPB, 0, cs>>>(g->d_t1, g->d_t2, g->d_m, g->d_xv, nx, ny, b, r, tp, g->d_st,
                                                                 g->d_xt, g->d_yt, (float)s->sum_k2, g->var_mode, t > 1, lam);
        LAUNCHED();
        unsigned nt = (unsigned)g->ntiles;
        if (t == 1) {
            k_noise_tiles<<<nt, TPB, 0, cs>>>(g->d_m, g->d_xv, g->d_valid, nx, ny, b, g->d_st, 0, g->var_mode, g->d_xt, g->d_yt,
                                              (float)s->sum_k2, g->d_part, g->d_count + 2, 0, lam);
            k_noise_tiles<<<nt, TPB, 0, cs>>>(g->d_m, g->d_xv, g->d_valid, nx, ny, b, g->d_st, 1, g->var_mode, g->d_xt, g->d_yt,
                                              (float)s->sum_k2, g->d_part, g->d_count + 2, 1, lam);
            k_noise<<<1, 32, 0, cs>>>(g->d_st, lam);
        }
        int detecting = t > o->warmup;
        k_snr<<<grid_for((nx - 2 * b) * (ny - 2 * b)), TPB, 0, cs>>>(g->d_m, g->d_xv, g->d_valid, g->d_z, g->d_maxz, nx, ny, b,
                                                                   g->d_st, detecting, res);
        float kmin = (float)(o->threshold < o->clean_threshold ? o->threshold : o->clean_threshold);
        /* the frames after the first add theirs to the noise model's sums in the same launch */
        unsigned ntb = t > 1 ? nt : 0;
        k_peaks<<<ntb + grid_for((nx - 2 * b) * (ny - 2 * b)), TPB, 0, cs>>>(g->d_z, g->d_m, nx, ny, b, kmin, s->sum_k2,
                                                                           g->d_cand[k], g->d_st, ntb, g->d_xv, g->d_valid,
                                                                           g->var_mode, g->d_xt, g->d_yt, (float)s->sum_k2,
                                                                           g->d_part, g->d_count + 2, lam);
        LAUNCHED();
        dirty_t dt = {g->d_dirty, nx, ny, b};
        k_cleans<<<gp + (o->clean ? 128u : 0u), TPB, 0, cs>>>(h, g->d_bh, bad, g->d_cand[k], g->d_st, nx, ny, s->align, gp,
                                                               s->clean_radius, (float)o->clean_threshold, dt);
        /* the row again over the cleaned tiles, and the frame's record */
        k_dots<<<(unsigned)(g->ntiles * (n + 1)), TPB, 0, cs>>>(g->d_ring, np, sl, n, nx, ny, b, g->d_dpart, g->d_st, 1, g->d_dirty,
                                                                g->d_count + 3, g->d_D, g->dring, o->history, t, NULL,
                                                                g->d_rec[k], g->var_mode);
        LAUNCHED();
    }
    if (timed) CU(cudaEventRecord(evs[4], cs));
    g->stage_timed[t % (2 * g->nout)] = timed;
    CU(cudaEventRecord(g->ev_done[k], cs));
    /* 4. download on its own stream */
    CU(cudaStreamWaitEvent(g->down, g->ev_done[k], 0));
    int direct = residual_out && is_pinned(g, residual_out, (size_t)np * sizeof(float));
    /* the record and the first REC_CANDS candidates, with the residual where
     * it goes to the slot's host buffer: one copy (the slot's list is
     * written again by the next frame in this slot, whose detection is
     * queued only after deliver_slot has waited for this copy) */
    const size_t tail_bytes = g->cand_off + REC_CANDS * sizeof(fcand_t);
    if (direct) {
        CU(cudaMemcpyAsync(residual_out, res, (size_t)np * sizeof(float), cudaMemcpyDeviceToHost, g->down));
        CU(cudaMemcpyAsync(g->h_rec[k], g->d_rec[k], tail_bytes - g->rec_off, cudaMemcpyDeviceToHost, g->down));
    } else {
        CU(cudaMemcpyAsync(g->h_res[k], res, tail_bytes, cudaMemcpyDeviceToHost, g->down));
    }
    CU(cudaEventRecord(g->ev_down[k], g->down));
    g->pend_t[k] = t;
    g->pend_out[k] = residual_out;
    g->pend_direct[k] = direct;
    g->pending[k] = 1;
    g->queued++;
    return PYR_OK;
}

/* The batches' shift-stage times whose events have passed (all, waiting
 * for them, with wait). */
static pyr_status_t shift_times(fr_cuda_t *g, int wait)
{
    for (int q = 0; q < SHIFT_SETS; q++) {
        if (!g->shift_n[q]) continue;
        if (wait) CU(cudaEventSynchronize(g->ev_shift[q][1]));
        else if (cudaEventQuery(g->ev_shift[q][1]) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, g->ev_shift[q][0], g->ev_shift[q][1]));
        g->stage_ms[0] += ms;
        g->shift_frames += g->shift_n[q];
        g->shift_n[q] = 0;
    }
    return PYR_OK;
}

/* The frames waiting in the batch: their shift stage at once (the
 * one-frame path's kernels for each frame, frame index blockIdx.y; one
 * transform of the whole batch for each of the one-frame path's), then each
 * frame's later stages in order (tail). */
static pyr_status_t flush(fr_cuda_t *g, fr_deliver_t deliver, void *driver)
{
    const int n = g->nq;
    if (!n) return PYR_OK;
    const fr_setup_t *s = &g->s;
    const pyr_frames_options_t *o = &s->o;
    int64_t t0 = g->q0, nx = s->nx, ny = s->ny, np = g->np, nch = g->nch, nh = g->nh, b = o->border;
    const int c = g->cur, B = g->B;
    const pyr_frames_dtype_t type = (pyr_frames_dtype_t)g->qtype;
    const size_t fbytes = (size_t)np * (type == PYR_FRAMES_F32 ? 4u : 2u);
    cudaStream_t cs = g->cs;
    /* 1. upload: the frames staged in one copy where all are */
    int staged = 0;
    for (int j = 0; j < n; j++) staged += !g->q_direct[j];
    if (staged == n) {
        CU(cudaMemcpyAsync(g->d_rawb[c], g->h_rawb[c], (size_t)n * fbytes, cudaMemcpyHostToDevice, g->up));
    } else {
        for (int j = 0; j < n; j++)
            if (!g->q_direct[j])
                CU(cudaMemcpyAsync((char *)g->d_rawb[c] + (size_t)j * fbytes, (const char *)g->h_rawb[c] + (size_t)j * fbytes, fbytes,
                                   cudaMemcpyHostToDevice, g->up));
    }
    CU(cudaEventRecord(g->ev_upb[c], g->up));
    g->upb_pending[c] = staged > 0;
    CU(cudaStreamWaitEvent(cs, g->ev_upb[c], 0));
    g->nq = 0;
    g->cur = 1 - c;
    float *q_out[FR_BATCH_MAX];
    memcpy(q_out, g->q_out, sizeof q_out);
    /* the batch's shift stage is timed as a whole */
    PYR_TRY(shift_times(g, 0));
    const int ts = g->shift_next;
    if (g->shift_n[ts]) PYR_TRY(shift_times(g, 1));
    CU(cudaEventRecord(g->ev_shift[ts][0], cs));
    fstate_t *stb = g->d_stb;
    unsigned gp = grid_for(np), gc = grid_for(nch), gtb = grid_for(nh + ny), nt = (unsigned)g->ntiles;
    const unsigned un = (unsigned)n;
    const int may_mask = type == PYR_FRAMES_F32; /* as in push_one */
    /* the planes the frames register into: ring slots, or (weights other
     * than align) the batch's t2 while the frames themselves go to the ring */
    fptrs_t hp, t2;
    for (int j = 0; j < n; j++) {
        hp.p[j] = g->d_ring + ((t0 + j) % g->ring_n) * np;
        t2.p[j] = g->d_t2b + (int64_t)j * np;
    }
    const fptrs_t hr = s->align ? hp : t2;
    /* 2. ingest (the unit is set: no frame of a batch rescales) */
    kb_init<<<un, 32, 0, cs>>>(g->d_st, stb, g->d_stop);
    kb_ingest<<<dim3(gp, un), TPB, 0, cs>>>(g->d_rawb[c], fbytes, (int)type, np, g->d_inb, g->d_badb, g->d_iblkb, g->d_countb, stb);
    LAUNCHED();
    CU(cudaEventRecord(g->ev_usedb[c], cs));
    if (may_mask) kb_fill_bad<<<dim3(gp, un), TPB, 0, cs>>>(g->d_inb, g->d_badb, nx, ny, stb);
    LAUNCHED();
    /* 3. spectra, coarse shifts (coarse = never has no batches), iterations */
    FFT(g->fft->ExecR2C(g->r2cb, g->d_inb, g->d_Fb));
    kb_xpower<<<dim3(gc, un), TPB, 0, cs>>>(g->d_Fb, g->d_G, g->d_Xb, nch);
    LAUNCHED();
    FFT(g->fft->ExecC2R(g->c2rb, g->d_Xb, g->d_t1b));
    unsigned nb = gp < 1024 ? gp : 1024;
    kb_argmax<<<dim3(nb, un), TPB, 0, cs>>>(g->d_t1b, np, g->d_blkb, g->d_blkidxb, g->d_countb + B, nx, ny, stb);
    kb_pprod<<<dim3(gc, un), TPB, 0, cs>>>(g->d_Fb, g->d_G, g->d_sm, g->d_Xb, nch);
    LAUNCHED();
    {
        int max_it = o->max_iterations, nfr = n, bpf = g->coop_blocks_b / n;
        double tol = o->tolerance;
        if (bpf > ny) bpf = (int)ny;
        void *args[] = {&g->d_Xb,   &nx,    &ny,       &nh,        &g->d_cxb, &g->d_sxtb, &g->d_cyb, &g->d_sytb, &g->d_wx,
                        &g->d_wy,   &g->d_partb, &g->pstride, &stb, &g->d_stop, &nfr, &bpf, &max_it, &tol};
        CU(cudaLaunchCooperativeKernel((void *)kb_iterate, dim3((unsigned)(bpf * n)), dim3(TPB), args, 0, cs));
    }
    /* 4. masked pixels: the reference moved to each frame (push_one) */
    if (may_mask) {
        kb_tables<<<dim3(gtb, un), TPB, 0, cs>>>(nx, ny, nh, stb, g->d_cxb, g->d_sxtb, g->d_cyb, g->d_sytb, -1.0, FR_IF_MASKED);
        kb_shiftmul<<<dim3(gc, un), TPB, 0, cs>>>(g->d_G, 0, g->d_Xb, nh, ny, g->d_cxb, g->d_sxtb, g->d_cyb, g->d_sytb, stb,
                                                  FR_IF_MASKED);
        LAUNCHED();
        FFT(g->fft->ExecC2R(g->c2rb, g->d_Xb, g->d_t1b));
        kb_scale<<<dim3(gp, un), TPB, 0, cs>>>(g->d_t1b, t2, np, 1.0f / (float)np, stb, FR_IF_MASKED);
        kb_refill<<<dim3(gp, un), TPB, 0, cs>>>(g->d_inb, g->d_t2b, g->d_badb, nx, ny, stb);
        LAUNCHED();
        FFT(g->fft->ExecR2C(g->r2cb, g->d_inb, g->d_Fb));
    }
    /* 5. the refinement (push_one) */
    double tol = o->tolerance;
    kb_rsv<<<dim3(gp, un), TPB, 0, cs>>>(g->d_badb, g->d_refbad, g->d_svb, nx, ny, b, stb);
    for (int it = 0; it < FR_REFINE_MAX; it++) {
        kb_tables<<<dim3(gtb, un), TPB, 0, cs>>>(nx, ny, nh, stb, g->d_cxb, g->d_sxtb, g->d_cyb, g->d_sytb, 1.0, FR_UNLESS_DONE);
        kb_shiftmul<<<dim3(gc, un), TPB, 0, cs>>>(g->d_Fb, nch, g->d_Xb, nh, ny, g->d_cxb, g->d_sxtb, g->d_cyb, g->d_sytb, stb,
                                                  FR_UNLESS_DONE);
        LAUNCHED();
        FFT(g->fft->ExecC2R(g->c2rb, g->d_Xb, g->d_t1b));
        kb_scale<<<dim3(gp, un), TPB, 0, cs>>>(g->d_t1b, hr, np, 1.0f / (float)np, stb, FR_UNLESS_DONE);
        kb_rsums<<<dim3(nt, un), TPB, 0, cs>>>(hr, g->d_rref, g->d_rgx, g->d_rgy, g->d_svb, nx, ny, b, g->d_partb, g->pstride,
                                               g->d_countb + 2 * B, stb, it, tol, g->d_shx, g->d_shy, g->dring, t0);
        LAUNCHED();
    }
    if (!s->align) kb_copy<<<dim3(gp, un), TPB, 0, cs>>>(g->d_inb, hp, np);
    /* 6. the background leaves each frame */
    kb_bg_tiles<<<dim3(nt, un), TPB, 0, cs>>>(hp, g->d_xt, g->d_yt, nx, ny, b, g->d_partb, g->pstride, g->d_countb + 2 * B, stb,
                                              g->bg_n, g->bg_sxx, g->bg_syy);
    kb_bg_sub<<<dim3(gp, un), TPB, 0, cs>>>(hp, g->d_xt, g->d_yt, nx, np, stb);
    LAUNCHED();
    CU(cudaEventRecord(g->ev_shift[ts][1], cs));
    g->shift_n[ts] = n;
    g->shift_next = (ts + 1) % SHIFT_SETS;
    /* 7. each frame's later stages, in order; a new reference (only the
     * batch's last frame makes one) after those of the frames before it,
     * whose detection still looks at the old one's masked pixels */
    for (int j = 0; j < n; j++) {
        int64_t t = t0 + j;
        const uint8_t *bad = g->d_badb + (int64_t)j * np;
        const fstate_t *adopt = stb + j; /* taken by the tail's first kernel */
        if (o->reference == PYR_FRAMES_REF_ROLLING && t % o->reference_every == 0) {
            k_adopt<<<1, 32, 0, cs>>>(stb + j, g->d_st); /* the new reference reads the frame's shift */
            LAUNCHED();
            PYR_TRY(new_reference(g, g->d_Fb + (int64_t)j * nch, bad));
            adopt = NULL;
        }
        PYR_TRY(tail(g, t, hp.p[j], bad, adopt, NULL, q_out[j], t % STAGE_EVERY == 0 ? 2 : 0, deliver, driver));
    }
    return PYR_OK;
}

/* A frame into the batch (the caller may reuse it on return): copied into
 * the pinned staging, or from the caller's pinned memory straight to the
 * device; the batch runs when full or when this frame ends it. */
static pyr_status_t enqueue(fr_cuda_t *g, const void *frame, pyr_frames_dtype_t type, float *residual_out)
{
    const pyr_frames_options_t *o = &g->s.o;
    int64_t t = g->t;
    if (g->nq && (int)type != g->qtype) PYR_TRY(flush(g, g->deliver, g->driver)); /* a batch has one pixel type */
    const size_t fbytes = (size_t)g->np * (type == PYR_FRAMES_F32 ? 4u : 2u);
    const int c = g->cur, j = g->nq;
    if (j == 0) {
        /* the staging buffer's last upload must have read it, and the
         * device buffer's last batch must have been converted before the
         * next upload writes it */
        if (g->upb_pending[c]) CU(cudaEventSynchronize(g->ev_upb[c]));
        g->upb_pending[c] = 0;
        CU(cudaStreamWaitEvent(g->up, g->ev_usedb[c], 0));
        g->q0 = t;
        g->qtype = (int)type;
    }
    if (is_pinned(g, frame, fbytes)) {
        CU(cudaMemcpyAsync((char *)g->d_rawb[c] + (size_t)j * fbytes, frame, fbytes, cudaMemcpyHostToDevice, g->up));
        CU(cudaEventRecord(g->ev_qup, g->up));
        CU(cudaEventSynchronize(g->ev_qup));
        g->q_direct[j] = 1;
    } else {
        memcpy((char *)g->h_rawb[c] + (size_t)j * fbytes, frame, fbytes);
        g->q_direct[j] = 0;
    }
    g->q_out[j] = residual_out;
    g->nq++;
    g->t++;
    if (g->nq == g->B || (o->reference == PYR_FRAMES_REF_ROLLING && t % o->reference_every == 0))
        PYR_TRY(flush(g, g->deliver, g->driver));
    return PYR_OK;
}

static pyr_status_t fr_cuda_push(fr_cuda_t *g, const void *frame, pyr_frames_dtype_t type, const float *var,
                                 float *residual_out, fr_deliver_t deliver, void *driver)
{
    int64_t t = g->t, np = g->np;
    CU(cudaSetDevice(g->device));
    g->deliver = deliver;
    g->driver = driver;
    if (t == 0) g->var_mode = var != NULL;
    if (g->var_mode && !g->d_var) {
        double need = 2.0 * (double)np * sizeof(float) / 1048576.0;
        PYR_TRY(dalloc(g, (void **)&g->d_var, (size_t)np * sizeof(float), need));
        PYR_TRY(dalloc(g, (void **)&g->d_vreg, (size_t)np * sizeof(float), need));
        PYR_TRY(pyr_device_cuda.host_alloc(g->rt, (size_t)np * sizeof(float), (void **)&g->h_var));
        CU(cudaEventCreateWithFlags(&g->ev_var, cudaEventDisableTiming));
    }
    PYR_TRY(deliver_ready(g, deliver, driver));
    int batch = g->B > 1 && !g->var_mode && t >= 2;
    if (batch && !g->unit_known) {
        /* the frames before have set the unit if any could: wait for them once */
        if (t == 2) PYR_TRY(deliver_upto(g, g->queued - 1, deliver, driver));
        batch = g->unit_known;
    }
    if (batch) return enqueue(g, frame, type, residual_out);
    PYR_TRY(flush(g, deliver, driver));
    return push_one(g, frame, type, var, residual_out, deliver, driver);
}

static pyr_status_t fr_cuda_finish(fr_cuda_t *g, fr_deliver_t deliver, void *driver)
{
    CU(cudaSetDevice(g->device));
    PYR_TRY(flush(g, deliver, driver));
    PYR_TRY(deliver_upto(g, g->queued - 1, deliver, driver));
    CU(cudaStreamSynchronize(g->cs));
    return shift_times(g, 1);
}

/* Device time per stage, from the frames (and batches) timed, scaled to every frame delivered. */
static void fr_cuda_stage_times(const fr_cuda_t *g, double t[4])
{
    double f = g->stage_frames ? (double)g->delivered / (double)g->stage_frames : 0.0;
    double fs = g->shift_frames ? (double)g->delivered / (double)g->shift_frames : 0.0;
    for (int e = 0; e < 4; e++) t[e] = 1e-3 * g->stage_ms[e] * (e == 0 ? fs : f);
}

static pyr_status_t fr_cuda_max_snr(fr_cuda_t *g, float *out)
{
    CU(cudaSetDevice(g->device));
    if (g->nq) PYR_TRY(flush(g, g->deliver, g->driver)); /* the frames waiting in a batch count */
    CU(cudaStreamSynchronize(g->cs));
    CU(cudaMemcpy(out, g->d_maxz, (size_t)g->np * sizeof(float), cudaMemcpyDeviceToHost));
    return PYR_OK;
}

/* ---------------------------------------------------------------- registration (frames_internal.h) */

static pyr_status_t cuda_create(const fr_setup_t *s, void **impl)
{
    fr_cuda_t *g = NULL;
    const pyr_status_t st = fr_cuda_create(s, &g);
    *impl = g;
    return st;
}

static pyr_status_t cuda_push(void *impl, const void *frame, pyr_frames_dtype_t type, const float *var, float *residual_out,
                              fr_deliver_t deliver, void *driver)
{
    return fr_cuda_push((fr_cuda_t *)impl, frame, type, var, residual_out, deliver, driver);
}

static pyr_status_t cuda_finish(void *impl, fr_deliver_t deliver, void *driver) { return fr_cuda_finish((fr_cuda_t *)impl, deliver, driver); }
static pyr_status_t cuda_pin(void *impl, void *host, size_t bytes) { return fr_cuda_pin((fr_cuda_t *)impl, host, bytes); }
static pyr_status_t cuda_max_snr(void *impl, float *out) { return fr_cuda_max_snr((fr_cuda_t *)impl, out); }
static void cuda_describe(const void *impl, char *text, size_t size) { fr_cuda_describe((const fr_cuda_t *)impl, text, size); }
static void cuda_stage_times(const void *impl, double t[4]) { fr_cuda_stage_times((const fr_cuda_t *)impl, t); }

static void cuda_destroy(void *impl)
{
    fr_cuda_t *g = (fr_cuda_t *)impl;
    fr_cuda_destroy(&g);
}

extern "C" const fr_impl_t fr_impl_cuda = {
    PYR_BACKEND_CUDA, "cuda", cuda_create, cuda_push, cuda_finish, cuda_pin, cuda_max_snr, cuda_describe,
    cuda_stage_times,
    cuda_destroy,
};
