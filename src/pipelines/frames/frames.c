/* The frames pipeline's public API (pyrgrid_frames.h): options, the choice
 * of implementation, results delivered in order, statistics.  The work is
 * done by an implementation registered below (frames_internal.h fr_impl_t):
 * frames_cpu.c or, on a GPU, cuda/frames_cuda.cu. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "backend/plugin.h"
#include "core/error.h"
#include "pipelines/frames/frames_internal.h"

/* The CPU's implementation; the CUDA one (cuda/frames_cuda.cu) comes with the
 * CUDA backend's table (backend/plugin.h). */
extern const fr_impl_t fr_impl_cpu; /* frames_cpu.c */

const fr_impl_t *fr_impl_find(pyr_backend_kind_t backend)
{
    if (backend == PYR_BACKEND_CPU) return &fr_impl_cpu;
    const pyr_cuda_plugin_t *cuda = backend == PYR_BACKEND_CUDA ? pyr_cuda_plugin(PYR_CUDA_ASK) : NULL;
    return cuda ? cuda->frames : NULL;
}

struct pyr_frames {
    fr_setup_t s;
    pyr_frames_sink_t sink;
    void *user;
    const fr_impl_t *impl;
    void *run; /* the implementation's state */
    pyr_frames_stats_t st;
    char notice[768];
    int failed;
    /* masked pixels (detector coordinates): the caller's mask and the hot,
     * dead and stuck pixels found in the first frames; such pixels and those
     * at or above the saturation level reach the implementation as NaN */
    uint8_t *mask;    /* nx*ny, or NULL while nothing is masked */
    int64_t nmask;    /* pixels the mask marks */
    uint8_t *user_mask; /* the caller's (pyr_frames_set_mask), or NULL */
    float *var;       /* the caller's variance plane (pyr_frames_set_variance), or NULL */
    int var_set;      /* var holds one for the frames pushed next */
    int var_mode;     /* -1 until frame 0 decides; 1: the variance planes are the noise model, 0: the fitted model */
    float *conv;      /* the frame as float with its masked pixels NaN */
    float *prev;      /* the previous frame, for the stuck-pixel test */
    uint8_t *same;    /* frames in a row a pixel kept its value */
    uint8_t *seen;    /* frames in which a pixel was found bad */
    uint8_t *flag;    /* found bad in this frame */
    int64_t nflag;
    int64_t t;        /* frames pushed */
};

/* Frames the automatic bad-pixel search looks at: a pixel is bad from the
 * frame it is found in on. */
#define FR_AUTO_FRAMES 5

void pyr_frames_options_default(pyr_frames_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->history = 20;
    o->epsilon = 1e-6;
    o->weights = PYR_FRAMES_ALIGN;
    o->poly_degree = 1;
    o->poly_window = 20;
    o->reference = PYR_FRAMES_REF_FIRST;
    o->reference_every = 50;
    o->coarse = PYR_FRAMES_COARSE_ALWAYS;
    o->max_iterations = 20;
    o->tolerance = 1e-3;
    o->border = 16;
    o->threshold = 5.0;
    o->psf_fwhm = 2.5;
    o->clean = 1;
    o->clean_radius = 0;
    o->clean_threshold = 3.5;
    o->noise_frames = 20;
    o->warmup = 3;
    o->max_candidates = 1000;
    o->backend = PYR_BACKEND_AUTO;
    o->device = 0;
    o->threads = 0;
    o->saturation = 0;
    o->badpixels = 0;
    o->noise = PYR_FRAMES_NOISE_AUTO;
}

const char *pyr_frames_weights_name(pyr_frames_weights_t w)
{
    return w == PYR_FRAMES_ALIGN ? "align" : w == PYR_FRAMES_POLY ? "poly" : w == PYR_FRAMES_PLAIN ? "plain" : "?";
}

pyr_status_t pyr_frames_options_validate(const pyr_frames_options_t *o)
{
    if (!o) return pyr_fail(PYR_ERR_ARG, "frames options are NULL");
    if (o->history < 1 || o->history > FR_MAX_HISTORY)
        return pyr_fail(PYR_ERR_CONFIG, "frames.history = %d is out of range: it must be between 1 and %d (20 is usual)",
                        o->history, FR_MAX_HISTORY);
    if (!(o->epsilon >= 0) || !(o->epsilon < 1))
        return pyr_fail(PYR_ERR_CONFIG, "frames.epsilon = %g must be in [0, 1): it is relative to R's mean diagonal (1e-6 is usual)",
                        o->epsilon);
    if ((int)o->weights < 0 || o->weights > PYR_FRAMES_PLAIN)
        return pyr_fail(PYR_ERR_CONFIG, "frames.weights must be align, poly or plain");
    if (o->weights == PYR_FRAMES_POLY) {
        if (o->poly_degree < 0 || o->poly_degree > 2)
            return pyr_fail(PYR_ERR_CONFIG, "frames.poly_degree = %d: the polynomial's degree must be 0, 1 or 2", o->poly_degree);
        if (o->poly_window < 1 || o->poly_window > 256)
            return pyr_fail(PYR_ERR_CONFIG, "frames.poly_window = %d must be between 1 and 256", o->poly_window);
        if (o->history * fr_poly_terms(o->poly_degree) > 192)
            return pyr_fail(PYR_ERR_CONFIG, "frames.history = %d with poly_degree = %d gives %d unknowns; at most 192: "
                                            "lower the history or the degree",
                            o->history, o->poly_degree, o->history * fr_poly_terms(o->poly_degree));
    }
    if (o->reference_every < 1)
        return pyr_fail(PYR_ERR_CONFIG, "frames.reference_every = %d must be at least 1", o->reference_every);
    if (o->max_iterations < 1 || o->max_iterations > 1000)
        return pyr_fail(PYR_ERR_CONFIG, "frames.max_iterations = %d must be between 1 and 1000", o->max_iterations);
    if (!(o->tolerance > 0))
        return pyr_fail(PYR_ERR_CONFIG, "frames.tolerance = %g must be positive (pixels; 1e-3 is usual)", o->tolerance);
    if (!(o->psf_fwhm >= 0.5) || !(o->psf_fwhm <= 12))
        return pyr_fail(PYR_ERR_CONFIG, "frames.psf_fwhm = %g must be between 0.5 and 12 pixels", o->psf_fwhm);
    float taps[FR_MAX_TAPS];
    double sq;
    int r = fr_psf_taps(o->psf_fwhm, taps, &sq);
    if (o->border < r + 2)
        return pyr_fail(PYR_ERR_CONFIG, "frames.border = %d is too small for the matched filter of FWHM %g (radius %d): "
                                        "it must be at least %d",
                        o->border, o->psf_fwhm, r, r + 2);
    if (!(o->threshold > 0))
        return pyr_fail(PYR_ERR_CONFIG, "frames.threshold = %g must be positive (5 is usual)", o->threshold);
    if (!(o->clean_radius >= 0) || o->clean_radius > 64)
        return pyr_fail(PYR_ERR_CONFIG, "frames.clean_radius = %g must be between 0 (automatic) and 64", o->clean_radius);
    if (!(o->clean_threshold > 0))
        return pyr_fail(PYR_ERR_CONFIG, "frames.clean_threshold = %g must be positive (3.5 is usual)", o->clean_threshold);
    if (o->noise_frames < 1)
        return pyr_fail(PYR_ERR_CONFIG, "frames.noise_frames = %d must be at least 1", o->noise_frames);
    if (o->warmup < 0)
        return pyr_fail(PYR_ERR_CONFIG, "frames.warmup = %d must not be negative", o->warmup);
    if (o->max_candidates < 0)
        return pyr_fail(PYR_ERR_CONFIG, "frames.max_candidates = %d must not be negative", o->max_candidates);
    if (o->threads < 0) return pyr_fail(PYR_ERR_CONFIG, "frames.threads = %d must not be negative (0: all cores)", o->threads);
    if (!(o->saturation >= 0) || !isfinite(o->saturation))
        return pyr_fail(PYR_ERR_CONFIG, "frames.saturation = %g must be a level in the data's units (ADU), or 0 / none for no "
                                        "saturation level",
                        o->saturation);
    if (o->badpixels != 0 && o->badpixels != 1)
        return pyr_fail(PYR_ERR_CONFIG, "frames.badpixels = %d must be 1 (auto) or 0 (none)", o->badpixels);
    if ((int)o->noise < 0 || o->noise > PYR_FRAMES_NOISE_VARIANCE)
        return pyr_fail(PYR_ERR_CONFIG, "frames.noise = %d must be auto, model or variance", (int)o->noise);
    return PYR_OK;
}

static pyr_status_t deliver(void *driver, const fr_out_t *out)
{
    pyr_frames_t *f = driver;
    pyr_frames_stats_t *st = &f->st;
    /* the arithmetic runs in the sequence's unit (frames_math.h fr_unit), so
     * this happens only for a frame far off the others' scale or values near
     * float's limit: refuse it rather than hand on NaN */
    if (out->nonfinite || !isfinite(out->dx) || !isfinite(out->dy))
        return pyr_fail(PYR_ERR_NUMERIC, "frame %lld: its residual or shift is not a finite number: the frame's RMS is about "
                                         "%.3g times that of the first frame, which sets the scale of the float arithmetic, "
                                         "and its values must stay within float's range (3.4e38) there; frames of one "
                                         "sequence must share a scale: rescale or leave out this frame",
                        (long long)out->frame, out->rms);
    st->frames++;
    if (out->flags & FR_FLAG_ILL_CONDITIONED) st->ill_conditioned++;
    if (out->flags & FR_FLAG_REGULARISED) st->regularised++;
    if (out->flags & FR_FLAG_REDUCED) st->reduced++;
    if (out->flags & FR_FLAG_FALLBACK) st->fallback++;
    if (out->flags & FR_FLAG_NOT_CONVERGED) st->not_converged++;
    st->masked_pixels += out->masked;
    st->candidates += out->ncand;
    st->cleaned_pixels += out->cleaned;
    if (!f->sink) return PYR_OK;
    pyr_frames_result_t r;
    memset(&r, 0, sizeof r);
    r.frame = out->frame;
    r.dx = out->dx;
    r.dy = out->dy;
    r.iterations = out->iterations;
    r.coarse_used = out->coarse_used;
    r.flags = out->flags;
    r.history_used = out->used;
    r.epsilon_used = out->eps_used;
    r.weights = out->weights;
    r.masked = out->masked;
    r.cleaned = out->cleaned;
    r.detecting = out->detecting;
    r.noise_a = out->noise_a;
    r.noise_c = out->noise_c;
    r.residual = out->residual;
    r.candidates = out->cand;
    r.ncandidates = out->ncand;
    r.candidates_dropped = out->dropped;
    return f->sink(f->user, &r);
}

pyr_status_t pyr_frames_create(int64_t nx, int64_t ny, const pyr_frames_options_t *options, pyr_frames_sink_t sink,
                               void *user, pyr_frames_t **frames)
{
    if (!frames) return pyr_fail(PYR_ERR_ARG, "pyr_frames_create: frames is NULL");
    *frames = NULL;
    pyr_frames_options_t o;
    if (options) o = *options;
    else pyr_frames_options_default(&o);
    PYR_TRY(pyr_frames_options_validate(&o));
    int64_t minside = 2 * (int64_t)o.border + 8;
    if (nx < minside || ny < minside)
        return pyr_fail(PYR_ERR_SIZE, "frames of %lld x %lld pixels are too small for frames.border = %d: each side needs at "
                                      "least %lld pixels (lower the border)",
                        (long long)nx, (long long)ny, o.border, (long long)minside);
    if (nx > INT32_MAX / 2 || ny > INT32_MAX / 2 || nx * ny > (INT64_C(1) << 34))
        return pyr_fail(PYR_ERR_SIZE, "frames of %lld x %lld pixels are larger than supported (2^34 pixels)", (long long)nx,
                        (long long)ny);
    pyr_frames_t *f = calloc(1, sizeof *f);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    fr_setup_t *s = &f->s;
    s->nx = nx;
    s->ny = ny;
    s->o = o;
    s->align = o.weights == PYR_FRAMES_ALIGN;
    s->deg = o.weights == PYR_FRAMES_POLY ? o.poly_degree : -1;
    s->window = o.weights == PYR_FRAMES_POLY ? o.poly_window : 1;
    s->pix_ring = o.history + 1;
    s->dot_ring = o.history + s->window + 1;
    s->radius = fr_psf_taps(o.psf_fwhm, s->taps, &s->sum_k2);
    s->sum_k2 *= s->sum_k2; /* the 2D filter is the outer product */
    for (int i = 0; i <= 2 * s->radius; i++) s->taps2[i] = s->taps[i] * s->taps[i];
    s->clean_radius = o.clean_radius > 0 ? o.clean_radius : 1.5 * o.psf_fwhm + 1.0;
    s->threads = o.threads > 0 ? o.threads : omp_get_max_threads();
    f->sink = sink;
    f->user = user;
    f->var_mode = -1;

    pyr_backend_kind_t b = o.backend;
    if (b == PYR_BACKEND_AUTO) b = pyr_gpu_count() > 0 ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (b == PYR_BACKEND_AUTO || (o.backend == PYR_BACKEND_AUTO && b == PYR_BACKEND_CPU))
        snprintf(f->notice, sizeof f->notice, "no usable GPU: backend = auto runs the frames on the CPU (%d threads)", s->threads);
    const fr_impl_t *impl = fr_impl_find(b == PYR_BACKEND_CUDA ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU);
    pyr_status_t st = impl ? impl->create(s, &f->run)
                           : pyr_fail(PYR_ERR_NODEVICE, "frames on backend = cuda: %s", pyr_cuda_missing());
    if (st == PYR_ERR_UNSUPPORTED && o.backend == PYR_BACKEND_AUTO && b != PYR_BACKEND_CPU) {
        /* a GPU the frames cannot use (cuFFT not installed, no cooperative launches): auto means the CPU then */
        snprintf(f->notice, sizeof f->notice, "backend = auto runs the frames on the CPU (%d threads): %s", s->threads,
                 pyr_last_error());
        impl = fr_impl_find(PYR_BACKEND_CPU);
        st = impl->create(s, &f->run);
    }
    if (st != PYR_OK) {
        free(f);
        return st;
    }
    f->impl = impl;
    snprintf(f->st.backend, sizeof f->st.backend, "%s", impl->name);
    impl->describe(f->run, f->st.device, sizeof f->st.device);
    *frames = f;
    return PYR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The frame's pixel noise, robustly: the median of |v - (left + right) / 2|
 * over a sample of pixels, as a Gaussian's sigma. */
static double noise_sigma(const float *v, int64_t nx, int64_t ny)
{
    int64_t cap = 20000, n = 0, step = (nx - 2) * (ny - 2) / cap + 1;
    double *d = malloc((size_t)cap * sizeof *d);
    if (!d) return 0;
    for (int64_t k = 0; n < cap; k += step) {
        int64_t y = 1 + k / (nx - 2), x = 1 + k % (nx - 2);
        if (y >= ny - 1) break;
        int64_t i = y * nx + x;
        double a = (double)v[i] - 0.5 * ((double)v[i - 1] + (double)v[i + 1]);
        if (isfinite(a)) d[n++] = fabs(a);
    }
    double sigma = 0;
    if (n) {
        qsort(d, (size_t)n, sizeof *d, cmp_double);
        sigma = 1.4826 * d[n / 2] / sqrt(1.5);
    }
    free(d);
    return sigma;
}

/* Hot, dead and stuck pixels of frame v (as float): a pixel more than 8
 * sigma above the third highest of its 8 neighbours whose middle ones (third
 * highest less third lowest) span less than 0.15 of its height above the
 * third lowest: its neighbours are flat sky, where a star's (sampled with a
 * FWHM of 1.2 pixels or more) follow its peak; or more than 5 sigma and
 * half the span below the third lowest (a band-limited image has no such
 * pits, even in a star; two bad neighbours, as in a dead column, do not hide
 * it); or a pixel that kept its value exactly over the
 * first frames while the frames have noise.  Marked in f->flag for this
 * frame, and in f->mask (every later frame) once found in two frames. */
static void find_bad_pixels(pyr_frames_t *f, const float *v)
{
    int64_t nx = f->s.nx, ny = f->s.ny;
    double sigma = noise_sigma(v, nx, ny);
    memset(f->flag, 0, (size_t)(nx * ny));
    f->nflag = 0;
    if (!(sigma > 0)) return;
    float lim = (float)(8.0 * sigma), lim_low = (float)(5.0 * sigma);
    for (int64_t y = 1; y < ny - 1; y++)
        for (int64_t x = 1; x < nx - 1; x++) {
            int64_t i = y * nx + x;
            float c = v[i], nb[8] = {v[i - nx - 1], v[i - nx], v[i - nx + 1], v[i - 1],
                                     v[i + 1],      v[i + nx - 1], v[i + nx], v[i + nx + 1]};
            int ok = isfinite(c);
            for (int k = 0; k < 8; k++) ok &= isfinite(nb[k]) ? 1 : 0;
            if (!ok) continue;
            for (int k = 1; k < 8; k++) /* insertion sort of 8 */
                for (int j = k; j > 0 && nb[j] < nb[j - 1]; j--) {
                    float t = nb[j];
                    nb[j] = nb[j - 1];
                    nb[j - 1] = t;
                }
            float lo = nb[2], hi = nb[5], spread = hi - lo;
            int bad = (c - hi > lim && spread < 0.15f * (c - lo)) || (lo - c > lim_low && lo - c > 0.5f * spread);
            if (f->t > 0) {
                f->same[i] = c == f->prev[i] ? (uint8_t)(f->same[i] + 1) : 0;
                if (f->same[i] >= FR_AUTO_FRAMES - 1) bad = 1;
            }
            /* in this frame, and from the second frame that shows it on in all (a star
             * that moves with the jitter shows it once) */
            if (bad) {
                f->flag[i] = 1;
                f->nflag++;
                if (f->seen[i] < 255) f->seen[i]++;
            }
            if (f->seen[i] >= 2 && !f->mask[i]) {
                f->mask[i] = 1;
                f->nmask++;
            }
        }
    memcpy(f->prev, v, (size_t)(nx * ny) * sizeof(float));
}

static float pixel_value(const void *frame, pyr_frames_dtype_t type, int64_t i)
{
    return type == PYR_FRAMES_U16 ? (float)((const uint16_t *)frame)[i]
           : type == PYR_FRAMES_I16 ? (float)((const int16_t *)frame)[i]
                                    : ((const float *)frame)[i];
}

pyr_status_t pyr_frames_set_mask(pyr_frames_t *f, const uint8_t *mask)
{
    if (!f) return pyr_fail(PYR_ERR_ARG, "pyr_frames_set_mask: frames is NULL");
    int64_t np = f->s.nx * f->s.ny;
    if (!mask) {
        free(f->user_mask);
        f->user_mask = NULL;
    } else {
        if (!f->user_mask && !(f->user_mask = malloc((size_t)np)))
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for a mask of %lld pixels", (long long)np);
        for (int64_t i = 0; i < np; i++) f->user_mask[i] = mask[i] != 0;
    }
    return PYR_OK;
}

pyr_status_t pyr_frames_set_variance(pyr_frames_t *f, const float *variance)
{
    if (!f) return pyr_fail(PYR_ERR_ARG, "pyr_frames_set_variance: frames is NULL");
    if (!variance) {
        f->var_set = 0;
        return PYR_OK;
    }
    int64_t np = f->s.nx * f->s.ny;
    if (!f->var && !(f->var = malloc((size_t)np * sizeof(float))))
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for a variance plane of %lld pixels", (long long)np);
    memcpy(f->var, variance, (size_t)np * sizeof(float));
    f->var_set = 1;
    return PYR_OK;
}

/* Whether frame t takes the variance plane as its noise model: the first
 * frame decides (noise = auto: variance when it has a plane), and every
 * later frame must be the same, since the model's fit runs over frames. */
static pyr_status_t variance_mode(pyr_frames_t *f)
{
    pyr_frames_noise_t n = f->s.o.noise;
    if (n == PYR_FRAMES_NOISE_MODEL) {
        f->var_mode = 0;
        return PYR_OK;
    }
    if (n == PYR_FRAMES_NOISE_VARIANCE && !f->var_set)
        return pyr_fail(PYR_ERR_ARG, "frame %lld: frames.noise = variance, but no variance plane was given for it: give one "
                                     "per frame (pyr_frames_set_variance, variance= in Python, the VARIANCE plane of a "
                                     "calibrated exposure), or use noise = model (the fitted photon + read noise)",
                        (long long)f->t);
    if (f->var_mode < 0) f->var_mode = f->var_set;
    if (f->var_mode != f->var_set)
        return pyr_fail(PYR_ERR_ARG, "frame %lld %s a variance plane and the frames before it %s: the noise model is "
                                     "fitted over frames, so give every frame's variance (pyr_frames_set_variance before "
                                     "the first frame) or none (frames.noise = model ignores them)",
                        (long long)f->t, f->var_set ? "has" : "has no", f->var_set ? "had none" : "had one");
    return PYR_OK;
}

/* The frame the implementation gets: the caller's, or (when pixels are
 * masked, saturated or searched for, or a variance plane is the noise
 * model) a float copy with those pixels NaN.  A pixel whose variance is not
 * a positive finite number is masked: it has no noise to weigh it by. */
static pyr_status_t mask_frame(pyr_frames_t *f, const void **frame, pyr_frames_dtype_t *type)
{
    int64_t np = f->s.nx * f->s.ny;
    int search = f->s.o.badpixels && f->t < FR_AUTO_FRAMES;
    double sat = f->s.o.saturation;
    const float *var = f->var_mode == 1 ? f->var : NULL;
    if (!search && !f->nmask && !f->user_mask && !(sat > 0) && !var) return PYR_OK;
    if (!f->conv) {
        f->conv = malloc((size_t)np * sizeof(float));
        f->mask = calloc((size_t)np, 1);
        f->prev = malloc((size_t)np * sizeof(float));
        f->same = calloc((size_t)np, 1);
        f->seen = calloc((size_t)np, 1);
        f->flag = calloc((size_t)np, 1);
        if (!f->conv || !f->mask || !f->prev || !f->same || !f->seen || !f->flag)
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the bad-pixel mask of %lld pixels", (long long)np);
    }
    float *v = f->conv;
    for (int64_t i = 0; i < np; i++) v[i] = pixel_value(*frame, *type, i);
    f->nflag = 0;
    if (search) find_bad_pixels(f, v);
    const uint8_t *um = f->user_mask, *fl = f->nflag ? f->flag : NULL;
    float nan = NAN;
    for (int64_t i = 0; i < np; i++)
        if (f->mask[i] || (fl && fl[i]) || (um && um[i]) || (sat > 0 && v[i] >= sat) || (var && !(var[i] > 0 && var[i] <= FLT_MAX)))
            v[i] = nan;
    *frame = v;
    *type = PYR_FRAMES_F32;
    return PYR_OK;
}

pyr_status_t pyr_frames_push(pyr_frames_t *f, const void *frame, pyr_frames_dtype_t type, float *residual_out)
{
    if (!f || !frame) return pyr_fail(PYR_ERR_ARG, "pyr_frames_push: NULL argument");
    if (f->failed) return pyr_fail(PYR_ERR_ARG, "pyr_frames_push: an earlier frame failed; create a new pipeline");
    if ((int)type < 0 || type > PYR_FRAMES_I16) return pyr_fail(PYR_ERR_ARG, "pyr_frames_push: unknown pixel type %d", (int)type);
    /* a frame without the variance its sequence needs is refused before it is taken */
    pyr_status_t st = variance_mode(f);
    if (st != PYR_OK) return st;
    double t0 = pyr_now_s();
    st = mask_frame(f, &frame, &type);
    if (st == PYR_OK) st = f->impl->push(f->run, frame, type, f->var_mode == 1 ? f->var : NULL, residual_out, deliver, f);
    f->t++;
    f->st.seconds += pyr_now_s() - t0;
    if (st != PYR_OK) f->failed = 1;
    return st;
}

pyr_status_t pyr_frames_finish(pyr_frames_t *f)
{
    if (!f) return pyr_fail(PYR_ERR_ARG, "pyr_frames_finish: NULL argument");
    pyr_status_t st = PYR_OK;
    double t0 = pyr_now_s();
    if (!f->failed) st = f->impl->finish(f->run, deliver, f);
    f->st.seconds += pyr_now_s() - t0;
    if (st != PYR_OK) f->failed = 1;
    return st;
}

pyr_status_t pyr_frames_pin(pyr_frames_t *f, void *host, size_t bytes)
{
    if (!f || !host) return pyr_fail(PYR_ERR_ARG, "pyr_frames_pin: NULL argument");
    return f->impl->pin ? f->impl->pin(f->run, host, bytes) : PYR_OK;
}

pyr_status_t pyr_frames_max_snr(pyr_frames_t *f, float *out)
{
    if (!f || !out) return pyr_fail(PYR_ERR_ARG, "pyr_frames_max_snr: NULL argument");
    return f->impl->max_snr(f->run, out);
}

void pyr_frames_get_stats(const pyr_frames_t *f, pyr_frames_stats_t *stats)
{
    *stats = f->st;
    if (f->impl->stage_times) {
        double t[4];
        f->impl->stage_times(f->run, t);
        stats->shift_s = t[0];
        stats->weights_s = t[1];
        stats->whiten_s = t[2];
        stats->detect_s = t[3];
    }
}

const char *pyr_frames_notice(const pyr_frames_t *f) { return f ? f->notice : ""; }

void pyr_frames_destroy(pyr_frames_t **frames)
{
    if (!frames || !*frames) return;
    pyr_frames_t *f = *frames;
    f->impl->destroy(f->run);
    free(f->mask);
    free(f->user_mask);
    free(f->var);
    free(f->conv);
    free(f->prev);
    free(f->same);
    free(f->seen);
    free(f->flag);
    free(f);
    *frames = NULL;
}
