/* The frames pipeline's public API (pyrgrid_frames.h): options, the choice
 * of implementation, results delivered in order, statistics.  The work is
 * done by an implementation registered below (frames_internal.h fr_impl_t):
 * frames_cpu.c or, on a GPU, cuda/frames_cuda.cu. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "pipelines/frames/frames_internal.h"

/* The implementations compiled in. */
extern const fr_impl_t fr_impl_cpu; /* frames_cpu.c */
#ifdef PYR_HAVE_CUDA
extern const fr_impl_t fr_impl_cuda; /* cuda/frames_cuda.cu */
#endif

static const fr_impl_t *const impls[] = {
    &fr_impl_cpu,
#ifdef PYR_HAVE_CUDA
    &fr_impl_cuda,
#endif
};

const fr_impl_t *fr_impl_find(pyr_backend_kind_t backend)
{
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
        if (impls[i]->backend == backend) return impls[i];
    return NULL;
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
};

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

    pyr_backend_kind_t b = o.backend;
    if (b == PYR_BACKEND_AUTO) b = pyr_gpu_count() > 0 ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (b == PYR_BACKEND_AUTO || (o.backend == PYR_BACKEND_AUTO && b == PYR_BACKEND_CPU))
        snprintf(f->notice, sizeof f->notice, "no usable GPU: backend = auto runs the frames on the CPU (%d threads)", s->threads);
    const fr_impl_t *impl = fr_impl_find(b == PYR_BACKEND_CUDA ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU);
    pyr_status_t st = impl ? impl->create(s, &f->run)
                           : pyr_fail(PYR_ERR_NODEVICE, "backend = cuda, but this pyrgrid was built without CUDA; use backend = cpu");
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

pyr_status_t pyr_frames_push(pyr_frames_t *f, const void *frame, pyr_frames_dtype_t type, float *residual_out)
{
    if (!f || !frame) return pyr_fail(PYR_ERR_ARG, "pyr_frames_push: NULL argument");
    if (f->failed) return pyr_fail(PYR_ERR_ARG, "pyr_frames_push: an earlier frame failed; create a new pipeline");
    if ((int)type < 0 || type > PYR_FRAMES_I16) return pyr_fail(PYR_ERR_ARG, "pyr_frames_push: unknown pixel type %d", (int)type);
    double t0 = pyr_now_s();
    pyr_status_t st = f->impl->push(f->run, frame, type, residual_out, deliver, f);
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
    free(f);
    *frames = NULL;
}
