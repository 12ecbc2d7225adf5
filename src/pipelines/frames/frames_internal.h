/* The frames pipeline inside the library: what the backend-neutral driver
 * (frames.c) hands to an implementation (frames_cpu.c, and on a GPU
 * cuda/frames_cuda.cu), how the implementations register (fr_impl_t), and
 * what the driver gets back per frame.  Plain C, included by nvcc too. */
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

/* An implementation of the pipeline on one backend, registered in frames.c's
 * list (as the stencil kernels are in backend/registry.c); the driver looks
 * up the backend's and calls it through this table only. */
typedef struct fr_impl {
    pyr_backend_kind_t backend;
    const char *name; /* the statistics' backend */
    /* Everything for frames of s (on device s->o.device where there are
     * devices).  PYR_ERR_UNSUPPORTED: this machine cannot run it (a library
     * or a device feature missing), where backend = auto takes the CPU. */
    pyr_status_t (*create)(const fr_setup_t *s, void **impl);
    /* Take the frame (the caller may reuse it on return) and deliver, in
     * order, the frames that have finished.  var: the frame's variance plane
     * (nx*ny, the input's units squared, positive where the frame is not
     * NaN) as the noise model, or NULL for the fitted model; every frame of
     * a sequence has one or none. */
    pyr_status_t (*push)(void *impl, const void *frame, pyr_frames_dtype_t type, const float *var, float *residual_out,
                         fr_deliver_t deliver, void *driver);
    /* Deliver every frame still held. */
    pyr_status_t (*finish)(void *impl, fr_deliver_t deliver, void *driver);
    /* (optional, NULL: nothing to gain) Make a host range fast to copy. */
    pyr_status_t (*pin)(void *impl, void *host, size_t bytes);
    pyr_status_t (*max_snr)(void *impl, float *out);
    /* Where it runs, for the statistics ("GPU 0: <name>", "8 threads"). */
    void (*describe)(const void *impl, char *text, size_t size);
    /* (optional, NULL: not measured) Seconds in the shift, weights, whitening and detection stages. */
    void (*stage_times)(const void *impl, double t[4]);
    void (*destroy)(void *impl);
} fr_impl_t;

/* The implementation on a backend, or NULL when none is compiled in. */
const fr_impl_t *fr_impl_find(pyr_backend_kind_t backend);
#ifdef PYR_HAVE_CUDA
/* For tests (frames_cuda.cu): GPU pipelines created after the call take at most `cap` frames per batch (0:
 * their own size), so that batched results can be compared with frames taken one at a time. */
#ifdef __cplusplus
extern "C" void fr_cuda_batch_cap(int cap);
#else
void fr_cuda_batch_cap(int cap);
#endif
/* For tests: the threads of the dot products' kernel that one multiprocessor of the current GPU holds at once (-1 on
 * an error); the kernel reads every pixel of the history, so it needs many in flight. */
#ifdef __cplusplus
extern "C" int fr_cuda_dots_occupancy(void);
#else
int fr_cuda_dots_occupancy(void);
#endif
#endif

/* The candidate at pixel (x, y) of the SNR map z (nx*ny) and the matched
 * filter m: a sub-pixel position from a parabola through the neighbours, the
 * flux m / sum_k2 in the data's units (m is in the sequence's unit). */
void fr_candidate_at(const float *z, const float *m, int64_t nx, int64_t x, int64_t y, double sum_k2, double unit,
                     pyr_frames_candidate_t *c);
int fr_candidate_cmp(const void *a, const void *b);

#endif
