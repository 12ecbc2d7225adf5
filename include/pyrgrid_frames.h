/* pyrgrid frames — shift estimation, temporal whitening and detection of faint
 * moving objects in image sequences (docs/theory.md#frame-whitening), on the CPU (OpenMP, FFTW)
 * and on NVIDIA GPUs (CUDA, cuFFT).
 *
 * Every frame t of a sequence goes through:
 *
 *  1. shift: the frame's global shift s_t = (dx, dy) against the reference
 *     (frame 0, or a rolling reference in frame 0's coordinates), such that
 *     frame_t(x) = reference(x - s_t).  A coarse integer start by phase
 *     correlation, the article's gradient least-squares formula iterated over
 *     the spectrum (the frame seen as periodic), then refined over the
 *     interior: the frame registered at the estimate (Fourier resampling) and
 *     the formula's sums taken over the pixels `border` or more from every
 *     edge and not near a masked pixel, until the step is below `tolerance`,
 *     so that frames whose edges do not wrap (a camera's) shift accurately.
 *     Both images are smoothed by the article's 5-point average and the
 *     gradients are those of the smoothed reference, so that a frame equal to
 *     the reference gives exactly zero shift (see frames_math.h).
 *  2. weights: the frame is predicted from its N = `history` predecessors,
 *     b_t = sum_k a_k h_{t-k}, with (R + eps E) a = rho, R_kl = <h_k, h_l>,
 *     rho_k = <h_k, h_t>, over the frame less a border.  R is kept as a ring
 *     of dot products: each frame adds one row (its dot products with the N
 *     frames before it); nothing is recomputed.  weights = align registers
 *     every frame into the reference's coordinates first (Fourier shift, so
 *     the history is aligned to the current frame); weights = poly leaves the
 *     frames where they are and models a(t) as a polynomial in the frames'
 *     relative shifts (the article's shift-aware weights), fitted over the last
 *     `poly_window` frames with the eps E term; weights = plain uses neither.
 *     A background c0 + c1 x + c2 y fitted over the interior is taken out of
 *     every frame first, so a bias (pedestal) or a sky that drifts reaches
 *     neither R nor the weights.
 *  3. residual: e_t = h_t - b_t (align: in the reference's coordinates).
 *  4. detection: a matched filter (Gaussian PSF of `psf_fwhm`) of e_t divided
 *     by its noise, sigma^2 = A * (K^2 * (b_t + background)) + C (photon + read
 *     noise, A and C fitted over the last `noise_frames` frames, C of any sign
 *     so that a bias is absorbed), or with variance planes
 *     (pyr_frames_set_variance, `noise`) sigma^2 = A * K^2 * variance + C,
 *     the variance moved with the frame; local maxima above
 *     `threshold` are candidates.  Their pixels (within `clean_radius`) are
 *     replaced in the history by the prediction b_t, so that a slow mover does
 *     not subtract itself from the frames after it.
 *
 * Sums over pixels are taken per tile of rows in double and combined in a
 * fixed order on both backends; CPU and CUDA agree to the tolerance stated in
 * docs/frames.md#backends (their FFTs round differently).
 *
 * Masked pixels: those not finite, at or above `saturation`, in the caller's
 * mask (pyr_frames_set_mask) or found by `badpixels` = auto (hot, dead and
 * stuck pixels of the first frames).  Each takes the reference's value there
 * (moved to the frame) plus the local level difference before the frame is
 * registered, and is left out of the shift's sums, of detection (residual 0
 * within 2 pixels of where it lands) and of the history (it takes the
 * prediction there); they are counted (`masked`).  docs/frames.md#masks.
 *
 * This header is not included by pyrgrid.h; include it after it. */
#ifndef PYRGRID_FRAMES_H
#define PYRGRID_FRAMES_H

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { PYR_FRAMES_ALIGN = 0, PYR_FRAMES_POLY, PYR_FRAMES_PLAIN } pyr_frames_weights_t;
typedef enum { PYR_FRAMES_REF_FIRST = 0, PYR_FRAMES_REF_ROLLING } pyr_frames_reference_t;
/* always: phase correlation before every frame's iterations; never: iterate
 * from the previous frame's shift (jitter well under a pixel); auto: on the
 * CPU, phase correlation only when the iteration from the previous shift
 * moves more than one pixel or does not converge in 6 steps (the GPU always
 * runs it: it costs little there). */
typedef enum { PYR_FRAMES_COARSE_ALWAYS = 0, PYR_FRAMES_COARSE_NEVER, PYR_FRAMES_COARSE_AUTO } pyr_frames_coarse_t;
/* The detection's noise: auto: a frame's variance plane where one is given
 * (pyr_frames_set_variance), else the fitted model; model: the photon + read
 * noise model fitted to the residuals, sigma^2 = A * K^2 * (prediction +
 * background) + C; variance: the variance planes (every frame needs one). */
typedef enum { PYR_FRAMES_NOISE_AUTO = 0, PYR_FRAMES_NOISE_MODEL, PYR_FRAMES_NOISE_VARIANCE } pyr_frames_noise_t;
/* Pixel types a frame can be pushed as. */
typedef enum { PYR_FRAMES_F32 = 0, PYR_FRAMES_U16, PYR_FRAMES_I16 } pyr_frames_dtype_t;

typedef struct {
    int history;          /* N previous frames that predict a frame (20), 1..64 */
    double epsilon;       /* Tikhonov term: R + epsilon * mean(diag R) * E (1e-6) */
    pyr_frames_weights_t weights;
    int poly_degree;      /* poly: degree of a(t) in the relative shifts (1), 0..2 */
    int poly_window;      /* poly: frames whose prediction errors the fit minimises (20) */
    pyr_frames_reference_t reference;
    int reference_every;  /* rolling: frames between reference updates (50) */
    pyr_frames_coarse_t coarse;
    int max_iterations;   /* gradient iterations per frame (20) */
    double tolerance;     /* stop when both components of a step are below this, pixels (1e-3) */
    int border;           /* pixels at each edge left out of every sum and of detection (16) */
    double threshold;     /* detection threshold k in matched-filter sigma (5) */
    double psf_fwhm;      /* matched filter: Gaussian FWHM in pixels (2.5) */
    int clean;            /* 1: replace detected objects in the history by their prediction (1) */
    double clean_radius;  /* pixels around a candidate that are replaced; 0: 1.5 * psf_fwhm + 1 */
    double clean_threshold; /* peaks above this SNR are cleaned from the history, reported or not, from the
                             * first whitened frame on (3.5: lower than threshold, so that a faint mover
                             * is taken out before it is bright enough to report) */
    int noise_frames;     /* time constant of the noise model, frames (20) */
    int warmup;           /* whitened frames before candidates are reported (3) */
    int max_candidates;   /* candidates reported per frame (1000); more are counted as dropped */
    pyr_backend_kind_t backend; /* auto: cuda when a GPU is usable */
    int device;           /* GPU index */
    int threads;          /* CPU threads, 0 = all */
    double saturation;    /* pixels at or above this level (input units) are masked; 0: none (0) */
    int badpixels;        /* 1 (auto): mask hot, dead and stuck pixels found in the first 5 frames; 0 (none) (0) */
    pyr_frames_noise_t noise; /* the detection's noise: auto (variance planes where given) | model | variance (auto) */
} pyr_frames_options_t;

PYR_API void pyr_frames_options_default(pyr_frames_options_t *options);
/* Options by the keys of the [frames] section ("history" = "20", "weights" =
 * "poly"; "frames.history" too), checked as a configuration file's line is,
 * for callers that must not depend on this struct's layout (the Python
 * module).  The program's file keys (input, residual, ...) are refused.
 * create gives the defaults; the caller owns the result. */
PYR_API pyr_status_t pyr_frames_options_create(pyr_frames_options_t **options);
PYR_API void pyr_frames_options_destroy(pyr_frames_options_t **options);
PYR_API pyr_status_t pyr_frames_options_set(pyr_frames_options_t *options, const char *key, const char *value);
/* Checks ranges; the message names the option and what would work. */
PYR_API pyr_status_t pyr_frames_options_validate(const pyr_frames_options_t *options);

typedef struct {
    float x, y;     /* position in the residual's coordinates (pixels, 0-based, sub-pixel) */
    float flux;     /* matched-filter flux estimate (input units x pixels) */
    float snr;      /* matched-filter signal to noise */
} pyr_frames_candidate_t;

/* Flags of a frame's weights solve. */
#define PYR_FRAMES_FLAG_NO_HISTORY 1    /* frame 0: nothing to predict from, residual 0 */
#define PYR_FRAMES_FLAG_SHORT_HISTORY 2 /* fewer than N frames before it */
#define PYR_FRAMES_FLAG_ILL_CONDITIONED 4 /* the eps term dominated a direction of R */
#define PYR_FRAMES_FLAG_REGULARISED 8   /* Cholesky failed; eps raised (epsilon_used) */
#define PYR_FRAMES_FLAG_REDUCED 16      /* Cholesky failed; fewer history frames used */
#define PYR_FRAMES_FLAG_FALLBACK 32     /* no stable solution: weights set to 0 (residual = frame) */
#define PYR_FRAMES_FLAG_NOT_CONVERGED 64 /* shift iteration stopped at max_iterations */

/* What a frame gave; delivered to the sink in frame order.  Pointers are valid
 * during the call only. */
typedef struct {
    int64_t frame;
    double dx, dy;          /* shift against the reference, pixels */
    int iterations;         /* gradient iterations */
    int coarse_used;        /* phase correlation ran for this frame */
    int flags;              /* PYR_FRAMES_FLAG_* */
    int history_used;       /* frames in the prediction */
    double epsilon_used;
    const float *weights;   /* history_used weights a_1 (previous frame) .. */
    int64_t masked;         /* masked pixels of the frame (non-finite, saturated, in a mask) */
    int64_t cleaned;        /* history pixels replaced by the prediction */
    int detecting;          /* 0 during the warm-up */
    double noise_a, noise_c; /* noise of the matched filter: var = a * x + c, x = K^2 * (prediction + background) (input
                              * units), or with variance planes x = K^2 * variance (a then a pure number: 1 plus the
                              * history's share, and what the planes miss) */
    const float *residual;  /* ny*nx; the caller's buffer when one was pushed with the frame */
    const pyr_frames_candidate_t *candidates; /* sorted by y, then x */
    int ncandidates;
    int candidates_dropped; /* beyond max_candidates */
} pyr_frames_result_t;

/* Called once per frame, in order.  A non-OK return stops the sequence and is
 * returned by the push or finish call that delivered it. */
typedef pyr_status_t (*pyr_frames_sink_t)(void *user, const pyr_frames_result_t *result);

typedef struct pyr_frames pyr_frames_t;

/* A pipeline for frames of nx x ny pixels (each >= 2 * border + 8).  The sink
 * may be NULL.  backend = cuda without a GPU fails with PYR_ERR_NODEVICE;
 * auto falls back to the CPU (notice in pyr_frames_notice).  The caller owns
 * the result; release it with pyr_frames_destroy. */
PYR_API pyr_status_t pyr_frames_create(int64_t nx, int64_t ny, const pyr_frames_options_t *options, pyr_frames_sink_t sink,
                               void *user, pyr_frames_t **frames);
/* Process the next frame (nx*ny values of `type`, x fastest).  The frame is
 * copied (or uploaded) before the call returns.  `residual_out` (nx*ny floats,
 * may be NULL) receives the frame's residual before its result is delivered;
 * on a GPU it is written directly when it lies in memory given to
 * pyr_frames_pin.  Results may be delivered during later calls (the GPU keeps
 * up to two batches of frames in flight, dozens of small frames): give each
 * frame its own residual_out until its result is delivered;
 * pyr_frames_finish delivers the rest.
 * Results do not depend on the data's scale: the sequence is computed in one
 * power-of-two unit taken from its first frame that is not all zero, and
 * outputs are given back in the data's unit.  A frame whose values leave
 * float's range in that unit (or whose residual or shift is not finite)
 * stops the run with PYR_ERR_NUMERIC, naming the frame, from either call. */
PYR_API pyr_status_t pyr_frames_push(pyr_frames_t *frames, const void *frame, pyr_frames_dtype_t type, float *residual_out);
PYR_API pyr_status_t pyr_frames_finish(pyr_frames_t *frames);
/* A static mask of bad pixels (nx*ny bytes, nonzero = bad, in the frames'
 * own pixel coordinates) for the frames pushed after the call; it is copied.
 * NULL removes the caller's mask (the pixels found by badpixels = auto stay
 * masked).  Masked pixels are left out of the shift sums, the whitening fits
 * and detection; see the top of this file. */
PYR_API pyr_status_t pyr_frames_set_mask(pyr_frames_t *frames, const uint8_t *mask);
/* The variance of each pixel of the frames pushed after the call (nx*ny
 * floats, the input's units squared, in the frames' own pixel coordinates,
 * as a calibrated exposure's VARIANCE plane); it is copied, so give each
 * frame's before pushing it.  With frames.noise = auto or variance it is the
 * detection's noise model: the matched filter's variance at a pixel is
 * a * K^2 * variance + c, the variance moved with the frame as its image is
 * (to the nearest pixel), a and c fitted over the frames as the model's are
 * (a takes the history's share of the residual's noise, about 1 + sum of
 * the weights squared, and c what the planes miss).  So the SNR follows the
 * noise wherever it changes: bright sky, a star's photon noise, a chip's
 * amplifiers.  A pixel whose variance is not a positive finite number is
 * masked.  NULL: no variance for the frames pushed next.  The first frame
 * decides: a sequence whose first frame had a variance plane needs one for
 * every frame, and one whose first frame had none takes none later
 * (PYR_ERR_ARG from pyr_frames_push, the frame not taken). */
PYR_API pyr_status_t pyr_frames_set_variance(pyr_frames_t *frames, const float *variance);
/* Register host memory (input frames or residual buffers) for direct
 * transfers on the GPU; a no-op on the CPU.  Unregistered on destroy. */
PYR_API pyr_status_t pyr_frames_pin(pyr_frames_t *frames, void *host, size_t bytes);
/* The maximum matched-filter SNR of every pixel over the frames so far
 * (nx*ny floats; 0 where nothing was measured). */
PYR_API pyr_status_t pyr_frames_max_snr(pyr_frames_t *frames, float *out);

typedef struct {
    int64_t frames;
    double seconds;          /* wall time inside push and finish */
    double shift_s, weights_s, whiten_s, detect_s; /* time per stage; GPU: device time from events on one frame in 8, scaled to all */
    int64_t ill_conditioned, regularised, reduced, fallback, not_converged;
    int64_t masked_pixels, candidates, cleaned_pixels;
    char backend[16];        /* "cpu" or "cuda" */
    char device[128];        /* "2 threads" or the GPU's name */
} pyr_frames_stats_t;
PYR_API void pyr_frames_get_stats(const pyr_frames_t *frames, pyr_frames_stats_t *stats);
/* A notice about the setup ("no GPU: backend = auto chose the CPU"), or "". */
PYR_API const char *pyr_frames_notice(const pyr_frames_t *frames);
PYR_API void pyr_frames_destroy(pyr_frames_t **frames);

PYR_API const char *pyr_frames_weights_name(pyr_frames_weights_t w);

#ifdef __cplusplus
}
#endif

#endif
