/* The frames pipeline inside the library: what the backend-neutral driver
 * (frames.c) hands to an implementation (frames_cpu.c, and the CUDA one
 * behind backend/cuda/frames_cuda.h), and what it gets back per frame.
 * Plain C, included by nvcc too. */
#ifndef PYR_PIPELINES_FRAMES_INTERNAL_H
#define PYR_PIPELINES_FRAMES_INTERNAL_H

#include <stdint.h>

#include "pipelines/frames/frames_math.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"

/* Rows per tile of every pixel sum: per-tile partial sums in double, tiles
 * combined in order, on every backend. */
#define FR_TILE_ROWS 16
/* Candidates kept per frame before the cap of max_candidates (the history is
 * cleaned around all of these). */
#define FR_DEVICE_CANDIDATES 16384

/* Everything an implementation needs to know, fixed at creation. */
typedef struct {
    int64_t nx, ny;
    pyr_frames_options_t o;
    int align;      /* register frames (weights = align) */
    int deg;        /* -1: one-frame LS (align/plain); >= 0 poly degree */
    int window;     /* frames in the weights fit (1 unless poly) */
    int pix_ring;   /* frames of pixels kept: history + 1 */
    int dot_ring;   /* rows of dot products kept: history + window */
    int radius;     /* matched filter radius */
    float taps[FR_MAX_TAPS], taps2[FR_MAX_TAPS]; /* k and k^2 */
    double sum_k2;  /* sum over the 2D filter of K^2 */
    double clean_radius;
    int threads;
} fr_setup_t;

/* One finished frame, as an implementation reports it. */
typedef struct {
    int64_t frame;
    double dx, dy;
    int iterations, coarse_used, flags, used;
    double eps_used;
    float weights[FR_MAX_HISTORY];
    int64_t masked, cleaned;
    int detecting;
    double noise_a, noise_c; /* in the data's units, as everything here */
    const float *residual;
    const pyr_frames_candidate_t *cand;
    int ncand, dropped;
    /* the residual holds values that are not finite; the driver refuses the
     * frame.  rms: the frame's RMS in the sequence's unit (fr_unit), for the
     * message */
    int nonfinite;
    double rms;
} fr_out_t;

typedef pyr_status_t (*fr_deliver_t)(void *driver, const fr_out_t *out);

/* ---- the CPU implementation (frames_cpu.c) ---- */
typedef struct fr_cpu fr_cpu_t;
pyr_status_t fr_cpu_create(const fr_setup_t *s, fr_cpu_t **cpu);
pyr_status_t fr_cpu_push(fr_cpu_t *cpu, const void *frame, pyr_frames_dtype_t type, float *residual_out,
                         fr_deliver_t deliver, void *driver);
/* The last frame waits for the next one (its whitening shares a pass with
 * the next frame's dot products); finish delivers it. */
pyr_status_t fr_cpu_finish(fr_cpu_t *cpu, fr_deliver_t deliver, void *driver);
pyr_status_t fr_cpu_max_snr(fr_cpu_t *cpu, float *out);
void fr_cpu_stage_times(const fr_cpu_t *cpu, double t[4]);
void fr_cpu_destroy(fr_cpu_t **cpu);

/* The candidate at pixel (x, y) of the SNR map z (nx*ny) and the matched
 * filter m: a sub-pixel position from a parabola through the neighbours, the
 * flux m / sum_k2 in the data's units (m is in the sequence's unit). */
void fr_candidate_at(const float *z, const float *m, int64_t nx, int64_t x, int64_t y, double sum_k2, double unit,
                     pyr_frames_candidate_t *c);
int fr_candidate_cmp(const void *a, const void *b);

#endif
