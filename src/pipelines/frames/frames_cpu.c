/* The frames pipeline on the CPU: OpenMP over rows, FFTW (float, with its
 * OpenMP threads when available) for the transforms.  One frame at a time,
 * in the order of pyrgrid_frames.h: ingest, spectrum, coarse shift, gradient
 * iterations in the spectral domain, registration, one new row of dot
 * products, weights, residual, matched filter and noise model, candidates,
 * cleaning of the history.
 *
 * Sums over pixels: per tile of FR_TILE_ROWS rows, each row summed in 8
 * lanes (x mod 8) in double from exact float products, lanes and rows added
 * in order, tiles added in order: the same result whatever the thread count. */
#include <fftw3.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "pipelines/frames/frames_internal.h"

typedef struct {
    int active;
    int64_t t;
    fr_out_t out;
    float a[FR_MAX_HISTORY];
    float *res_out;
    int64_t *bad, nbad;
    double sx, sy;
    float bg[3]; /* the background taken out of the frame (remove_background) */
} fr_pending_t;

typedef struct fr_cpu fr_cpu_t;

struct fr_cpu {
    fr_pending_t pend; /* the frame whose whitening waits for the next frame */
    int ring_len;      /* frames of pixels: history + 2 (the pending frame's history and the new frame) */
    fr_setup_t s;
    int64_t np, nch; /* pixels, complex entries of the half spectrum */
    int64_t t;       /* frames pushed */
    float *in;       /* the frame as float */
    int64_t *bad;    /* raw indices of non-finite pixels of the current frame */
    int64_t nbad;
    fftwf_complex *F, *X, *G; /* frame spectrum, scratch, reference spectrum */
    fftwf_plan r2c, c2r;
    float *cx, *sx_, *cy, *sy_; /* phase tables */
    double *wx, *wy;            /* sin(omega) tables */
    double *sm;                 /* S^2 per (ky, kx) as separable parts: S depends on both */
    double u, v, w;             /* reference gradient sums */
    /* the reference in pixels: smoothed (S g) and its gradient (spectral
     * derivatives of S g), for the shift's refinement over the interior */
    float *rref, *rgx, *rgy;
    uint8_t *refbad; /* pixels near the reference's masked pixels */
    /* for frames without masked pixels: the refinement's sums as
     * p = sum wy h - ry, q = sum wx h - rx with w = S^T (gradient over the
     * interior), and u, v, w of the interior, all fixed by the reference */
    float *wgx, *wgy;
    double ref_s[5];
    int ref_masked;  /* refbad marks any */
    uint8_t *sv;     /* pixels of the refinement's sums (interior, away from masked pixels) */
    float *xt, *yt;  /* background basis: x and y centred, in frame widths */
    float bg[3], bg0[3]; /* the background last taken out, and frame 0's */
    int64_t *bad0, nbad0; /* frame 0's masked pixels, repaired from frame 1 */
    double bg_sxx, bg_syy, bg_n; /* its sums over the interior */
    float *ring;                /* pix_ring frames */
    double *D, *shx, *shy;      /* dot products and shifts, dot_ring rows */
    float *e, *bh, *t1, *t2, *m, *xv, *z, *maxz;
    uint8_t *valid;
    int valid_plain; /* valid holds the border alone */
    int64_t *chg_idx, nchg, capchg; /* history pixels changed in this frame */
    float *chg_old;
    int chg_overflow;
    double *part;               /* per-tile partial sums */
    int64_t ntiles;
    double *work;               /* weights solve */
    double noise[FR_NOISE_SUMS];
    int noise_ready;
    int64_t whitened;           /* frames with a residual so far */
    double prev_dx, prev_dy;
    pyr_frames_candidate_t *cand;
    int64_t *cand_idx;
    double stage[4];
    double unit;    /* the sequence's unit (fr_unit); 1 until a frame sets it */
    float inv_unit; /* 1 / unit */
    int unit_set;
    double rms;     /* the current frame's RMS in the unit */
    int64_t over;   /* its finite pixels beyond float's range in the unit */
    /* variance planes as the noise model (decided by frame 0): the pending
     * frame's, registered as its image, in the unit squared */
    int var_mode;
    float *pvar;
};

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

static float *ring_frame(fr_cpu_t *c, int64_t t) { return c->ring + (t % c->ring_len) * c->np; }

static void fr_cpu_destroy(fr_cpu_t **cpu)
{
    if (!cpu || !*cpu) return;
    fr_cpu_t *c = *cpu;
    pthread_mutex_lock(&planner_lock);
    if (c->r2c) fftwf_destroy_plan(c->r2c);
    if (c->c2r) fftwf_destroy_plan(c->c2r);
    pthread_mutex_unlock(&planner_lock);
    fftwf_free(c->F);
    fftwf_free(c->X);
    fftwf_free(c->G);
    fftwf_free(c->in);
    fftwf_free(c->t1);
    fftwf_free(c->rref);
    fftwf_free(c->rgx);
    fftwf_free(c->rgy);
    free(c->wgx);
    free(c->pvar);
    free(c->wgy);
    void *ptrs[] = {c->bad0, c->refbad, c->sv, c->xt, c->yt, c->bad, c->cx, c->sx_, c->cy, c->sy_, c->wx, c->wy, c->sm, c->ring, c->D, c->shx, c->shy,
                    c->e, c->bh, c->t2, c->m, c->xv, c->z, c->maxz, c->valid, c->part, c->work, c->cand, c->cand_idx, c->chg_idx, c->chg_old, c->pend.bad};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) free(ptrs[i]);
    free(c);
    *cpu = NULL;
}

static pyr_status_t fr_cpu_create(const fr_setup_t *s, fr_cpu_t **cpu)
{
    *cpu = NULL;
    fr_cpu_t *c = calloc(1, sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of memory creating the frames pipeline");
    c->s = *s;
    int64_t nx = s->nx, ny = s->ny, np = nx * ny, nh = nx / 2 + 1;
    c->np = np;
    c->nch = nh * ny;
    c->ntiles = (ny + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    size_t fb = (size_t)np * sizeof(float);
    c->in = fftwf_alloc_real((size_t)np);
    c->t1 = fftwf_alloc_real((size_t)np);
    c->rref = fftwf_alloc_real((size_t)np);
    c->rgx = fftwf_alloc_real((size_t)np);
    c->rgy = fftwf_alloc_real((size_t)np);
    c->refbad = calloc((size_t)np, 1);
    c->wgx = calloc((size_t)np, sizeof(float));
    c->wgy = calloc((size_t)np, sizeof(float));
    c->sv = malloc((size_t)np);
    c->xt = malloc((size_t)nx * sizeof(float));
    c->yt = malloc((size_t)ny * sizeof(float));
    c->F = fftwf_alloc_complex((size_t)c->nch);
    c->X = fftwf_alloc_complex((size_t)c->nch);
    c->G = fftwf_alloc_complex((size_t)c->nch);
    c->bad = malloc((size_t)np * sizeof *c->bad);
    c->cx = malloc((size_t)nh * sizeof(float));
    c->sx_ = malloc((size_t)nh * sizeof(float));
    c->cy = malloc((size_t)ny * sizeof(float));
    c->sy_ = malloc((size_t)ny * sizeof(float));
    c->wx = malloc((size_t)nh * sizeof(double));
    c->wy = malloc((size_t)ny * sizeof(double));
    c->sm = malloc((size_t)c->nch * sizeof(double));
    c->ring_len = s->pix_ring + 1;
    c->ring = malloc((size_t)c->ring_len * fb);
    c->pend.bad = malloc((size_t)np * sizeof *c->pend.bad);
    c->D = calloc((size_t)s->dot_ring * (size_t)(s->o.history + 1), sizeof(double));
    c->shx = calloc((size_t)s->dot_ring, sizeof(double));
    c->shy = calloc((size_t)s->dot_ring, sizeof(double));
    c->e = malloc(fb);
    c->bh = malloc(fb);
    c->t2 = malloc(fb);
    c->m = calloc((size_t)np, sizeof(float));
    c->xv = calloc((size_t)np, sizeof(float));
    c->z = calloc((size_t)np, sizeof(float));
    c->maxz = calloc((size_t)np, sizeof(float));
    c->valid = malloc((size_t)np);
    size_t nparts = (size_t)c->ntiles * (size_t)(s->o.history + 2 + FR_NOISE_SUMS);
    if (nparts < 2 * (size_t)ny) nparts = 2 * (size_t)ny;
    c->part = malloc(nparts * sizeof(double));
    int mterms = s->deg < 0 ? 1 : fr_poly_terms(s->deg);
    c->work = malloc((size_t)fr_weights_work(s->o.history, mterms) * sizeof(double));
    c->cand = malloc(FR_DEVICE_CANDIDATES * sizeof *c->cand);
    c->cand_idx = malloc(FR_DEVICE_CANDIDATES * sizeof *c->cand_idx);
    if (!c->in || !c->t1 || !c->F || !c->X || !c->G || !c->bad || !c->cx || !c->sx_ || !c->cy || !c->sy_ || !c->wx ||
        !c->wy || !c->sm || !c->ring || !c->D || !c->shx || !c->shy || !c->e || !c->bh || !c->t2 || !c->m || !c->xv ||
        !c->z || !c->maxz || !c->valid || !c->part || !c->work || !c->cand || !c->cand_idx || !c->pend.bad ||
        !c->rref || !c->rgx || !c->rgy || !c->refbad || !c->wgx || !c->wgy || !c->sv || !c->xt || !c->yt) {
        double mib = (double)(s->pix_ring + 12) * (double)fb / 1048576.0;
        fr_cpu_destroy(&c);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for frames of %lld x %lld with history %d (about %.0f MiB); "
                                       "use a shorter history",
                        (long long)nx, (long long)ny, s->o.history, mib);
    }
    memset(c->ring, 0, (size_t)c->ring_len * fb);
    c->unit = 1;
    c->inv_unit = 1;
    for (int64_t kx = 0; kx < nh; kx++) c->wx[kx] = sin(fr_omega(kx, nx));
    {
        int64_t b = s->o.border;
        for (int64_t x = 0; x < nx; x++) c->xt[x] = (float)fr_bg_coord(x, nx);
        for (int64_t y = 0; y < ny; y++) c->yt[y] = (float)fr_bg_coord(y, ny);
        for (int64_t x = b; x < nx - b; x++) c->bg_sxx += (double)c->xt[x] * c->xt[x];
        for (int64_t y = b; y < ny - b; y++) c->bg_syy += (double)c->yt[y] * c->yt[y];
        c->bg_n = (double)(nx - 2 * b) * (double)(ny - 2 * b);
        c->bg_sxx *= (double)(ny - 2 * b);
        c->bg_syy *= (double)(nx - 2 * b);
    }
    for (int64_t ky = 0; ky < ny; ky++) c->wy[ky] = sin(fr_omega(ky, ny));
    for (int64_t ky = 0; ky < ny; ky++)
        for (int64_t kx = 0; kx < nh; kx++) {
            double S = fr_smooth(fr_omega(kx, nx), fr_omega(ky, ny));
            c->sm[ky * nh + kx] = S * S * fr_half_weight(kx, nx) / (double)np;
        }
    pthread_mutex_lock(&planner_lock);
    static int fftw_ready = 0;
    if (!fftw_ready) {
#ifdef PYR_HAVE_FFTW_OMP
        fftwf_init_threads();
#endif
        fftw_ready = 1;
    }
#ifdef PYR_HAVE_FFTW_OMP
    fftwf_plan_with_nthreads(s->threads);
#endif
    /* FFTW_ESTIMATE: the same algorithm on every run (MEASURE may pick
     * another one next time, and round differently) */
    c->r2c = fftwf_plan_dft_r2c_2d((int)ny, (int)nx, c->in, c->F, FFTW_ESTIMATE);
    c->c2r = fftwf_plan_dft_c2r_2d((int)ny, (int)nx, c->X, c->t1, FFTW_ESTIMATE);
    pthread_mutex_unlock(&planner_lock);
    if (!c->r2c || !c->c2r) {
        fr_cpu_destroy(&c);
        return pyr_fail(PYR_ERR_INTERNAL, "FFTW could not plan a %lld x %lld transform", (long long)nx, (long long)ny);
    }
    *cpu = c;
    return PYR_OK;
}

/* ---------------------------------------------------------------- pieces */

/* The frame as float in the sequence's unit (fr_unit), set by the first frame
 * that is not all zero: the frames before it are zero in any unit.
 * Non-finite pixels are listed and replaced by the mean of the others.  The
 * count, sum and sum of squares of the finite input values per tile of rows,
 * in 8 lanes (x mod 8) in double, lanes and tiles added in order. */
static void ingest(fr_cpu_t *c, const void *frame, pyr_frames_dtype_t type)
{
    int64_t nx = c->s.nx, np = c->np, ntiles = (c->s.ny + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    float *in = c->in;
    float inv = c->inv_unit;
    double *part = c->part;
    int th = c->s.threads;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        int64_t i0 = tile * FR_TILE_ROWS * nx, i1 = i0 + FR_TILE_ROWS * nx < np ? i0 + FR_TILE_ROWS * nx : np, i = i0;
        double ln[8] = {0, 0, 0, 0, 0, 0, 0, 0}, ls[8] = {0, 0, 0, 0, 0, 0, 0, 0}, lq[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        /* one lane step: the pixel, scaled, and its sums when finite */
#define FR_INGEST(j, value)                                                                                             \
    do {                                                                                                                \
        float v_ = (value);                                                                                             \
        in[i + (j)] = v_ * inv;                                                                                         \
        double ok_ = isfinite(v_) ? 1.0 : 0.0, w_ = isfinite(v_) ? (double)v_ : 0.0;                                    \
        ln[j] += ok_;                                                                                                   \
        ls[j] += w_;                                                                                                    \
        lq[j] += w_ * w_;                                                                                               \
    } while (0)
        if (type == PYR_FRAMES_U16) {
            const uint16_t *p = frame;
            for (; i + 8 <= i1; i += 8)
                for (int j = 0; j < 8; j++) FR_INGEST(j, (float)p[i + j]);
            for (; i < i1; i++) FR_INGEST(0, (float)p[i]);
        } else if (type == PYR_FRAMES_I16) {
            const int16_t *p = frame;
            for (; i + 8 <= i1; i += 8)
                for (int j = 0; j < 8; j++) FR_INGEST(j, (float)p[i + j]);
            for (; i < i1; i++) FR_INGEST(0, (float)p[i]);
        } else {
            const float *p = frame;
            for (; i + 8 <= i1; i += 8)
                for (int j = 0; j < 8; j++) FR_INGEST(j, p[i + j]);
            for (; i < i1; i++) FR_INGEST(0, p[i]);
        }
#undef FR_INGEST
        part[3 * tile] = ((ln[0] + ln[1]) + (ln[2] + ln[3])) + ((ln[4] + ln[5]) + (ln[6] + ln[7]));
        part[3 * tile + 1] = ((ls[0] + ls[1]) + (ls[2] + ls[3])) + ((ls[4] + ls[5]) + (ls[6] + ls[7]));
        part[3 * tile + 2] = ((lq[0] + lq[1]) + (lq[2] + lq[3])) + ((lq[4] + lq[5]) + (lq[6] + lq[7]));
    }
    double n = 0, sum = 0, sq = 0;
    for (int64_t tile = 0; tile < ntiles; tile++) {
        n += part[3 * tile];
        sum += part[3 * tile + 1];
        sq += part[3 * tile + 2];
    }
    if (!c->unit_set && fr_unit(sq, n) > 0) {
        c->unit_set = 1;
        c->unit = fr_unit(sq, n);
        c->inv_unit = (float)(1.0 / c->unit);
        inv = c->inv_unit;
#pragma omp parallel for num_threads(th) schedule(static)
        for (int64_t i = 0; i < np; i++) in[i] *= inv;
    }
    c->rms = n > 0 ? sqrt(sq / n) * inv : 0;
    c->nbad = 0;
    c->over = 0;
    if (n == (double)np && sqrt(sq) * inv <= FLT_MAX) return; /* no value can leave float's range */
    /* non-finite pixels, and finite ones that are not in the unit */
    for (int64_t i = 0; i < np; i++)
        if (!isfinite(in[i])) c->bad[c->nbad++] = i;
    c->over = c->nbad - (np - (int64_t)n);
    float fill = n > 0 ? (float)(sum / n * inv) : 0.0f;
    /* a masked pixel takes the mean of its finite 4-neighbours (the frame's
     * mean where it has none), so that it leaves no step for the Fourier
     * shift to spread; the values go to t1 first so that no filled pixel
     * feeds another */
    float *fv = c->t1;
    int64_t nx_ = c->s.nx, ny_ = c->s.ny;
    for (int64_t b = 0; b < c->nbad; b++) fv[b] = fr_fill_value(in, NULL, nx_, ny_, c->bad[b], fill);
    for (int64_t b = 0; b < c->nbad; b++) in[c->bad[b]] = fv[b];
}

/* Phase tables of a shift (x, y): e^{i omega s} per column and per row. */
static void phase_tables(fr_cpu_t *c, double sx, double sy)
{
    int64_t nh = c->s.nx / 2 + 1;
    for (int64_t kx = 0; kx < nh; kx++) fr_phase(kx, c->s.nx, sx, &c->cx[kx], &c->sx_[kx]);
    for (int64_t ky = 0; ky < c->s.ny; ky++) fr_phase(ky, c->s.ny, sy, &c->cy[ky], &c->sy_[ky]);
}

/* Reference quantities from G: u, v, w of the smoothed reference's gradient. */
static void reference_sums(fr_cpu_t *c)
{
    int64_t nh = c->s.nx / 2 + 1, ny = c->s.ny;
    double u = 0, v = 0, w = 0;
    for (int64_t ky = 0; ky < ny; ky++) {
        double ru = 0, rv = 0, rw = 0;
        for (int64_t kx = 0; kx < nh; kx++) {
            double g2 = (double)c->G[ky * nh + kx][0] * c->G[ky * nh + kx][0] +
                        (double)c->G[ky * nh + kx][1] * c->G[ky * nh + kx][1];
            double a = c->sm[ky * nh + kx] * g2;
            ru += c->wx[kx] * c->wx[kx] * a;
            rv += c->wx[kx] * c->wy[ky] * a;
            rw += c->wy[ky] * c->wy[ky] * a;
        }
        u += ru;
        v += rv;
        w += rw;
    }
    c->u = u;
    c->v = v;
    c->w = w;
}

/* Integer shift by phase correlation: the peak of the inverse transform of
 * F conj(G) / |F conj(G)|. */
static void phase_correlate(fr_cpu_t *c, double *sx, double *sy)
{
    int64_t n = c->nch, nx = c->s.nx, ny = c->s.ny;
    int th = c->s.threads;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        /* in double: the squares of products of spectra overflow float for
         * large frames */
        double ar = c->F[i][0], ai = c->F[i][1], br = c->G[i][0], bi = -c->G[i][1];
        double re = ar * br - ai * bi, im = ar * bi + ai * br;
        double mag = sqrt(re * re + im * im), inv = mag > 0 ? 1.0 / mag : 0.0;
        c->X[i][0] = (float)(re * inv);
        c->X[i][1] = (float)(im * inv);
    }
    fftwf_execute_dft_c2r(c->c2r, c->X, c->t1);
    /* the first maximum in raster order: per block of rows, then blocks in order */
    int64_t nb = c->ntiles, rows = (ny + nb - 1) / nb;
    int64_t *bi = (int64_t *)c->part;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t blk = 0; blk < nb; blk++) {
        int64_t i0 = blk * rows * nx, i1 = (blk + 1) * rows * nx < c->np ? (blk + 1) * rows * nx : c->np, b = i0;
        for (int64_t i = i0 + 1; i < i1; i++)
            if (c->t1[i] > c->t1[b]) b = i;
        bi[blk] = i0 < i1 ? b : -1;
    }
    int64_t best = 0;
    for (int64_t blk = 0; blk < nb; blk++)
        if (bi[blk] >= 0 && c->t1[bi[blk]] > c->t1[best]) best = bi[blk];
    int64_t ix = best % nx, iy = best / nx;
    if (ix > nx / 2) ix -= nx;
    if (iy > ny / 2) iy -= ny;
    *sx = (double)ix;
    *sy = (double)iy;
}

/* The paper's sums p, q for the frame spectrum moved by s:
 * q = sum_half sin(wx) S^2 w/N Im(conj(G) F e^{i w s}), p likewise with sin(wy).
 * P = S^2 w/N conj(G) F is computed once per frame into X. */
static void spectral_pq(fr_cpu_t *c, double sx, double sy, double *p, double *q)
{
    int64_t nh = c->s.nx / 2 + 1, ny = c->s.ny;
    phase_tables(c, sx, sy);
    int th = c->s.threads;
    double *part = c->part; /* per row, added in order below: the same sums for any thread count */
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t ky = 0; ky < ny; ky++) {
        double rp = 0, rq = 0;
        float cy = c->cy[ky], sy_ = c->sy_[ky];
        for (int64_t kx = 0; kx < nh; kx++) {
            float pr = c->X[ky * nh + kx][0], pi = c->X[ky * nh + kx][1];
            float phr = c->cx[kx] * cy - c->sx_[kx] * sy_, phi = c->cx[kx] * sy_ + c->sx_[kx] * cy;
            double im = (double)pr * phi + (double)pi * phr;
            rq += c->wx[kx] * im;
            rp += c->wy[ky] * im;
        }
        part[2 * ky] = rp;
        part[2 * ky + 1] = rq;
    }
    double P = 0, Q = 0;
    for (int64_t ky = 0; ky < ny; ky++) {
        P += part[2 * ky];
        Q += part[2 * ky + 1];
    }
    *p = P;
    *q = Q;
}

/* P = S^2 w/N conj(G) F into X: the frame's part of the paper's sums. */
static void spectral_product(fr_cpu_t *c)
{
    int64_t n = c->nch;
    int th = c->s.threads;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float gr = c->G[i][0], gi = -c->G[i][1], fr = c->F[i][0], fi = c->F[i][1];
        float s = (float)c->sm[i];
        c->X[i][0] = s * (gr * fr - gi * fi);
        c->X[i][1] = s * (gr * fi + gi * fr);
    }
}

/* Shift of the current spectrum F against the reference: coarse start, then
 * the paper's step until it is below the tolerance. */
static void estimate_shift(fr_cpu_t *c, double *sx, double *sy, int *iters, int *coarse, int *flags)
{
    const pyr_frames_options_t *o = &c->s.o;
    double x = c->prev_dx, y = c->prev_dy;
    *coarse = 0;
    if (o->coarse == PYR_FRAMES_COARSE_ALWAYS) {
        phase_correlate(c, &x, &y);
        *coarse = 1;
    }
    spectral_product(c);
    double x0 = x, y0 = y;
    int it = 0, done = 0, total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (it = 0; it < o->max_iterations;) {
            double p, q, dx, dy;
            spectral_pq(c, x, y, &p, &q);
            it++;
            if (!fr_shift_step(p, q, c->u, c->v, c->w, &dx, &dy)) break;
            x -= dx;
            y -= dy;
            if (fabs(dx) < o->tolerance && fabs(dy) < o->tolerance) {
                done = 1;
                break;
            }
        }
        total += it;
        int moved = fabs(x - x0) > 1.0 || fabs(y - y0) > 1.0;
        if (o->coarse == PYR_FRAMES_COARSE_AUTO && !*coarse && (!done || moved || it > 6)) {
            /* the iteration left the start's neighbourhood: start again from
             * phase correlation */
            phase_correlate(c, &x, &y);
            *coarse = 1;
            x0 = x;
            y0 = y;
            done = 0;
            spectral_product(c);
            continue;
        }
        break;
    }
    if (!done) *flags |= FR_FLAG_NOT_CONVERGED;
    *sx = x;
    *sy = y;
    *iters = total;
}

static void shift_spectrum(fr_cpu_t *c, fftwf_complex *src, double sx, double sy, float *h);

/* h = the frame moved by s (h(x) = f(x + s)), from its spectrum. */
static void register_frame(fr_cpu_t *c, double sx, double sy, float *h) { shift_spectrum(c, c->F, sx, sy, h); }

/* The masked pixels of the frame (its shift against the reference about
 * (sx, sy)) take the reference's values there, moved to the frame
 * (g(x - s), exact for a band-limited image, where the mean of the
 * neighbours misses a star's peak by half of it), plus the mean difference
 * frame - reference over the unmasked pixels of the 5 x 5 box around (a sky
 * level that moved); then the spectrum again.  A fill that misses would ring
 * through the frame's Fourier shift far beyond the masked pixels. */
static void refill_masked(fr_cpu_t *c, double sx, double sy)
{
    int64_t nx = c->s.nx, ny = c->s.ny;
    float *g = c->t2;
    shift_spectrum(c, c->G, -sx, -sy, g);
    uint8_t *m = c->sv; /* the masked pixels, flagged */
    memset(m, 0, (size_t)c->np);
    for (int64_t i = 0; i < c->nbad; i++) m[c->bad[i]] = 1;
    float *fv = c->t1;
    for (int64_t b = 0; b < c->nbad; b++)
        fv[b] = fr_refill_value(c->in, g, m, nx, ny, c->bad[b]);
    for (int64_t b = 0; b < c->nbad; b++) c->in[c->bad[b]] = fv[b];
    fftwf_execute_dft_r2c(c->r2c, c->in, c->F);
}

/* h(x) = the image of spectrum src at x + s. */
static void shift_spectrum(fr_cpu_t *c, fftwf_complex *src, double sx, double sy, float *h)
{
    int64_t nh = c->s.nx / 2 + 1, ny = c->s.ny, np = c->np;
    phase_tables(c, sx, sy);
    int th = c->s.threads;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t ky = 0; ky < ny; ky++) {
        float cy = c->cy[ky], sy_ = c->sy_[ky];
        for (int64_t kx = 0; kx < nh; kx++) {
            float phr = c->cx[kx] * cy - c->sx_[kx] * sy_, phi = c->cx[kx] * sy_ + c->sx_[kx] * cy;
            float fr = src[ky * nh + kx][0], fi = src[ky * nh + kx][1];
            c->X[ky * nh + kx][0] = fr * phr - fi * phi;
            c->X[ky * nh + kx][1] = fr * phi + fi * phr;
        }
    }
    fftwf_execute_dft_c2r(c->c2r, c->X, h);
    float inv = 1.0f / (float)np;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t i = 0; i < np; i++) h[i] *= inv;
}

/* The reference in pixels from its spectrum G: S g and its x and y
 * derivatives (i omega S G, exact for a band-limited image, so that the
 * refinement converges in a step or two), and the pixels near its masked
 * ones (the current frame's, moved by its shift (sx, sy)). */
static void reference_images(fr_cpu_t *c, double sx, double sy)
{
    int64_t nx = c->s.nx, ny = c->s.ny, nh = nx / 2 + 1, np = c->np;
    float *dst[3] = {c->rref, c->rgx, c->rgy};
    int th = c->s.threads;
    for (int which = 0; which < 3; which++) {
#pragma omp parallel for num_threads(th) schedule(static)
        for (int64_t ky = 0; ky < ny; ky++)
            for (int64_t kx = 0; kx < nh; kx++) {
                double re, im;
                fr_ref_coef(kx, ky, nx, ny, which, c->G[ky * nh + kx][0], c->G[ky * nh + kx][1], &re, &im);
                c->X[ky * nh + kx][0] = (float)re;
                c->X[ky * nh + kx][1] = (float)im;
            }
        fftwf_execute_dft_c2r(c->c2r, c->X, dst[which]);
    }
    memset(c->refbad, 0, (size_t)np);
    int64_t ox = fr_pixel_shift(sx), oy = fr_pixel_shift(sy);
    for (int64_t i = 0; i < c->nbad; i++) {
        int64_t qx = c->bad[i] % nx - ox, qy = c->bad[i] / nx - oy;
        for (int64_t y = qy - 2; y <= qy + 2; y++)
            for (int64_t x = qx - 2; x <= qx + 2; x++)
                if (y >= 0 && y < ny && x >= 0 && x < nx) c->refbad[y * nx + x] = 1;
    }
    c->ref_masked = c->nbad > 0;
    /* w = S^T (g' on the interior): sum_I g'_i (S h)_i = sum_j w_j h_j */
    int64_t b = c->s.o.border;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t y = b - 1; y <= ny - b; y++)
        for (int64_t x = b - 1; x <= nx - b; x++) {
            int64_t j = y * nx + x, nb[5] = {j, j - 1, j + 1, j - nx, j + nx};
            float sx_ = 0, sy_ = 0;
            for (int k = 0; k < 5; k++) {
                int64_t i = nb[k], ix = i % nx, iy = i / nx;
                if (ix < b || ix >= nx - b || iy < b || iy >= ny - b) continue;
                sx_ += c->rgx[i];
                sy_ += c->rgy[i];
            }
            c->wgx[j] = 0.2f * sx_;
            c->wgy[j] = 0.2f * sy_;
        }
    /* the constant parts: sum_I g' S g and the gradient's Gram sums */
    double *part = c->part;
    int64_t ntiles = (ny - 2 * b + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        double acc[5] = {0, 0, 0, 0, 0};
        int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
        for (int64_t y = ya; y < yb; y++)
            for (int64_t x = b; x < nx - b; x++) {
                int64_t i = y * nx + x;
                double r = c->rref[i], ax = c->rgx[i], ay = c->rgy[i];
                acc[0] += ay * r;
                acc[1] += ax * r;
                acc[2] += ax * ax;
                acc[3] += ax * ay;
                acc[4] += ay * ay;
            }
        for (int k = 0; k < 5; k++) part[tile * 5 + k] = acc[k];
    }
    for (int k = 0; k < 5; k++) {
        double v = 0;
        for (int64_t tile = 0; tile < ntiles; tile++) v += part[tile * 5 + k];
        c->ref_s[k] = v;
    }
}

/* The refinement's sums for a frame without masked pixels (nor the
 * reference): p and q from the fixed weights (two products per pixel), u, v,
 * w the reference's; the same sums as refine_sums over the interior. */
static void refine_sums_plain(fr_cpu_t *c, const float *h, double S[5])
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border;
    int64_t y0 = b - 1, y1 = ny - b + 1, ntiles = (y1 - y0 + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    const float *wx = c->wgx, *wy = c->wgy;
    int th = c->s.threads;
    double *part = c->part;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        double ap = 0, aq = 0;
        int64_t ya = y0 + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < y1 ? ya + FR_TILE_ROWS : y1;
        for (int64_t y = ya; y < yb; y++) {
            const float *hr = h + y * nx, *xr = wx + y * nx, *yr = wy + y * nx;
            double lp[8] = {0, 0, 0, 0, 0, 0, 0, 0}, lq[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            int64_t x = b - 1;
            for (; x + 8 <= nx - b + 1; x += 8)
                for (int j = 0; j < 8; j++) {
                    lp[j] += (double)yr[x + j] * (double)hr[x + j];
                    lq[j] += (double)xr[x + j] * (double)hr[x + j];
                }
            for (int j = 0; x < nx - b + 1; x++, j++) {
                lp[j] += (double)yr[x] * (double)hr[x];
                lq[j] += (double)xr[x] * (double)hr[x];
            }
            ap += ((lp[0] + lp[1]) + (lp[2] + lp[3])) + ((lp[4] + lp[5]) + (lp[6] + lp[7]));
            aq += ((lq[0] + lq[1]) + (lq[2] + lq[3])) + ((lq[4] + lq[5]) + (lq[6] + lq[7]));
        }
        part[2 * tile] = ap;
        part[2 * tile + 1] = aq;
    }
    double P = 0, Q = 0;
    for (int64_t tile = 0; tile < ntiles; tile++) {
        P += part[2 * tile];
        Q += part[2 * tile + 1];
    }
    S[0] = P - c->ref_s[0];
    S[1] = Q - c->ref_s[1];
    S[2] = c->ref_s[2];
    S[3] = c->ref_s[3];
    S[4] = c->ref_s[4];
}

/* The refinement's sums over the interior (and sv's pixels when given):
 * d = S h - S g with S h the 5-point average of the registered frame,
 * p = sum gy d, q = sum gx d, u = sum gx^2, v = sum gx gy, w = sum gy^2;
 * per tile of rows in double, tiles in order. */
static void refine_sums(fr_cpu_t *c, const float *h, const uint8_t *sv, double S[5])
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border; /* >= 3 (validated): the 5-point average stays inside */
    int64_t ntiles = (ny - 2 * b + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    const float *r = c->rref, *gx = c->rgx, *gy = c->rgy;
    int th = c->s.threads;
    double *part = c->part;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        double acc[5] = {0, 0, 0, 0, 0};
        int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
        for (int64_t y = ya; y < yb; y++) {
            double l[5] = {0, 0, 0, 0, 0};
            for (int64_t x = b; x < nx - b; x++) {
                int64_t i = y * nx + x;
                if (sv && !sv[i]) continue;
                double d = (double)fr_smooth5(h, i, nx) - r[i], ax = gx[i], ay = gy[i];
                l[0] += ay * d;
                l[1] += ax * d;
                l[2] += ax * ax;
                l[3] += ax * ay;
                l[4] += ay * ay;
            }
            for (int k = 0; k < 5; k++) acc[k] += l[k];
        }
        for (int k = 0; k < 5; k++) part[tile * 5 + k] = acc[k];
    }
    for (int k = 0; k < 5; k++) {
        double v = 0;
        for (int64_t tile = 0; tile < ntiles; tile++) v += part[tile * 5 + k];
        S[k] = v;
    }
}

/* The shift refined over the interior from the spectral estimate (x, y):
 * the frame registered at the shift into h, then the paper's step from the
 * sums over the frame less its border and less the pixels near masked ones
 * (the frame's, moved with it, and the reference's); repeated while the step
 * is above the tolerance, at most FR_REFINE_MAX registrations.  h holds the
 * frame registered at the returned shift.  The spectral sums see the frame as
 * periodic, so its edges pull them; these see only the interior. */
static void refine_shift(fr_cpu_t *c, double *sx, double *sy, float *h, int *iters, int *flags)
{
    const pyr_frames_options_t *o = &c->s.o;
    int64_t nx = c->s.nx, ny = c->s.ny;
    double x = *sx, y = *sy;
    const uint8_t *sv = NULL;
    if (c->nbad || c->ref_masked) {
        int64_t ox = fr_pixel_shift(x), oy = fr_pixel_shift(y);
        for (int64_t i = 0; i < c->np; i++) c->sv[i] = !c->refbad[i];
        for (int64_t i = 0; i < c->nbad; i++) {
            int64_t qx = c->bad[i] % nx - ox, qy = c->bad[i] / nx - oy;
            for (int64_t yy = qy - 2; yy <= qy + 2; yy++)
                for (int64_t xx = qx - 2; xx <= qx + 2; xx++)
                    if (yy >= 0 && yy < ny && xx >= 0 && xx < nx) c->sv[yy * nx + xx] = 0;
        }
        sv = c->sv;
    }
    for (int k = 0; k < FR_REFINE_MAX; k++) {
        register_frame(c, x, y, h);
        double S[5], dx, dy;
        if (sv) refine_sums(c, h, sv, S);
        else refine_sums_plain(c, h, S);
        (*iters)++;
        if (!fr_shift_step(S[0], S[1], S[2], S[3], S[4], &dx, &dy)) break;
        if (fabs(dx) < o->tolerance && fabs(dy) < o->tolerance) {
            *flags &= ~FR_FLAG_NOT_CONVERGED;
            break;
        }
        if (k == FR_REFINE_MAX - 1) {
            *flags |= FR_FLAG_NOT_CONVERGED;
            break;
        }
        x -= dx;
        y -= dy;
    }
    *sx = x;
    *sy = y;
}

/* The background (1, x, y) fitted over the interior and taken out of h (the
 * whole frame): the whitening then predicts what moves with the sky, and a
 * bias or a sky level that drifts leaves neither R nor the noise model. */
static void remove_background(fr_cpu_t *c, float *h)
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border;
    int64_t ntiles = (ny - 2 * b + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    const float *xt = c->xt, *yt = c->yt;
    int th = c->s.threads;
    double *part = c->part;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        double acc[3] = {0, 0, 0};
        int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
        for (int64_t y = ya; y < yb; y++) {
            const float *row = h + y * nx;
            double s0 = 0, s1 = 0;
            for (int64_t x = b; x < nx - b; x++) {
                s0 += row[x];
                s1 += (double)xt[x] * row[x];
            }
            acc[0] += s0;
            acc[1] += s1;
            acc[2] += (double)yt[y] * s0;
        }
        for (int k = 0; k < 3; k++) part[tile * 3 + k] = acc[k];
    }
    double m[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        for (int64_t tile = 0; tile < ntiles; tile++) m[k] += part[tile * 3 + k];
    float c0 = (float)(m[0] / c->bg_n), c1 = (float)(m[1] / c->bg_sxx), c2 = (float)(m[2] / c->bg_syy);
    c->bg[0] = c0;
    c->bg[1] = c1;
    c->bg[2] = c2;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t y = 0; y < ny; y++) {
        float base = c0 + c2 * yt[y];
        float *row = h + y * nx;
        for (int64_t x = 0; x < nx; x++) row[x] -= base + c1 * xt[x];
    }
}

static void dots_row(fr_cpu_t *c, int64_t t, int n);

/* Frame 0's masked pixels, which no earlier frame could fill, take the
 * registered frame 1's values there (h1, before its background is taken
 * out) plus the local level difference, in the history and in the reference
 * (its spectrum, with frame 0's background back in, its sums and pixel
 * images, and R's first row): otherwise their fill would stay in the
 * history and in every frame's refill. */
static void repair_first(fr_cpu_t *c, const float *h1)
{
    int64_t nx = c->s.nx, ny = c->s.ny;
    float *h0 = ring_frame(c, 0);
    uint8_t *m = c->sv;
    memset(m, 0, (size_t)c->np);
    for (int64_t i = 0; i < c->nbad0; i++) m[c->bad0[i]] = 1;
    for (int64_t i = 0; i < c->nbad0; i++) c->t1[i] = fr_refill_value(h0, h1, m, nx, ny, c->bad0[i]);
    for (int64_t i = 0; i < c->nbad0; i++) h0[c->bad0[i]] = c->t1[i];
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++)
            c->t1[y * nx + x] = h0[y * nx + x] + (c->bg0[0] + c->bg0[2] * c->yt[y] + c->bg0[1] * c->xt[x]);
    fftwf_execute_dft_r2c(c->r2c, c->t1, c->G);
    reference_sums(c);
    int64_t *bad = c->bad, nbad = c->nbad;
    c->bad = c->bad0;
    c->nbad = c->nbad0;
    reference_images(c, 0, 0);
    c->bad = bad;
    c->nbad = nbad;
    dots_row(c, 0, 0);
}

/* Row t of the dot ring: <h_t, h_{t-k}>, k = 0..n, over the frame less its
 * border. */
static void dots_row(fr_cpu_t *c, int64_t t, int n)
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border;
    int64_t x0 = b, x1 = nx - b, y0 = b, y1 = ny - b;
    int64_t ntiles = (y1 - y0 + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    int stride = n + 1;
    const float *ht = ring_frame(c, t);
    const float *hk[FR_MAX_HISTORY + 1];
    for (int k = 0; k <= n; k++) hk[k] = ring_frame(c, t - k);
    int th = c->s.threads;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        double acc[FR_MAX_HISTORY + 1];
        for (int k = 0; k <= n; k++) acc[k] = 0;
        int64_t ya = y0 + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < y1 ? ya + FR_TILE_ROWS : y1;
        for (int64_t y = ya; y < yb; y++) {
            const float *a = ht + y * nx;
            for (int k = 0; k <= n; k++) {
                const float *bk = hk[k] + y * nx;
                double l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                int64_t x = x0;
                for (; x + 8 <= x1; x += 8)
                    for (int j = 0; j < 8; j++) l[j] += (double)a[x + j] * (double)bk[x + j];
                for (int j = 0; x < x1; x++, j++) l[j] += (double)a[x] * (double)bk[x];
                acc[k] += ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
            }
        }
        for (int k = 0; k <= n; k++) c->part[tile * stride + k] = acc[k];
    }
    double *row = c->D + (t % c->s.dot_ring) * (c->s.o.history + 1);
    for (int k = 0; k <= n; k++) {
        double s = 0;
        for (int64_t tile = 0; tile < ntiles; tile++) s += c->part[tile * stride + k];
        row[k] = s;
    }
}

/* Valid pixels of the residual: inside the border, away from masked pixels
 * (moved as the frame was, and widened by 2) and from the reference's
 * (whose estimates stay in the history). */
static void valid_map(fr_cpu_t *c, double sx, double sy)
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border;
    if (c->nbad == 0 && !c->ref_masked && c->valid_plain) return; /* still the border alone */
    c->valid_plain = c->nbad == 0 && !c->ref_masked;
    int th = c->s.threads;
    const uint8_t *rb = c->ref_masked ? c->refbad : NULL;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++)
            c->valid[y * nx + x] = (y >= b && y < ny - b && x >= b && x < nx - b) && !(rb && rb[y * nx + x]);
    int64_t ox = c->s.align ? fr_pixel_shift(sx) : 0, oy = c->s.align ? fr_pixel_shift(sy) : 0;
    for (int64_t i = 0; i < c->nbad; i++) {
        int64_t qx = c->bad[i] % nx - ox, qy = c->bad[i] / nx - oy;
        for (int64_t y = qy - 2; y <= qy + 2; y++)
            for (int64_t x = qx - 2; x <= qx + 2; x++)
                if (y >= 0 && y < ny && x >= 0 && x < nx) c->valid[y * nx + x] = 0;
    }
}

/* Matched filter over the frame less its border: m = K * e and
 * x = K^2 * (prediction + background) (the noise model's argument: the
 * photon noise follows the sky that remove_background took out), or with
 * variance planes x = K^2 * variance (registered as the frame). */
static void matched_filter(fr_cpu_t *c)
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border;
    int r = c->s.radius;
    const float *k = c->s.taps, *k2 = c->s.taps2;
    int th = c->s.threads;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t y = b - r; y < ny - b + r; y++) {
        const float *e = c->e + y * nx, *p = (c->var_mode ? c->pvar : c->bh) + y * nx;
        float *o1 = c->t1 + y * nx, *o2 = c->t2 + y * nx;
        /* taps outermost so that x vectorises; each sum still adds its taps in order */
        for (int64_t x = b; x < nx - b; x++) {
            o1[x] = 0;
            o2[x] = 0;
        }
        for (int j = -r; j <= r; j++) {
            float kj = k[j + r], k2j = k2[j + r];
            for (int64_t x = b; x < nx - b; x++) {
                o1[x] += kj * e[x + j];
                o2[x] += k2j * p[x + j];
            }
        }
    }
    /* the background is a plane: the symmetric filter gives it back times
     * its sum */
    const float *bg = c->pend.bg, *xt = c->xt;
    float k2sum = (float)c->s.sum_k2;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t y = b; y < ny - b; y++) {
        float *o1 = c->m + y * nx, *o2 = c->xv + y * nx;
        float base = bg[0] + bg[2] * c->yt[y];
        for (int64_t x = b; x < nx - b; x++) {
            o1[x] = 0;
            o2[x] = 0;
        }
        for (int j = -r; j <= r; j++) {
            const float *i1 = c->t1 + (y + j) * nx, *i2 = c->t2 + (y + j) * nx;
            float kj = k[j + r], k2j = k2[j + r];
            for (int64_t x = b; x < nx - b; x++) {
                o1[x] += kj * i1[x];
                o2[x] += k2j * i2[x];
            }
        }
        if (!c->var_mode)
            for (int64_t x = b; x < nx - b; x++) o2[x] += fr_noise_bg(k2sum, base, bg[1], xt[x]);
    }
}

/* Noise-model sums of one row's valid pixels (|z| < 5 under (A, C) when
 * clip): n, sum x, sum x^2, sum y, sum x y with y = m^2, and n, sum x, sum y
 * of those where no source is predicted (fr_noise_sky; the background is
 * base + slope * xt over the row; with variance planes, all), in 8 lanes. */
static void noise_row(const float *m, const float *xv, const uint8_t *valid, int64_t x0, int64_t x1, double A, double C, double F, int clip,
                      int var_mode, float k2sum, float base, float slope, const float *xt, double acc[FR_NOISE_SUMS])
{
    double l[FR_NOISE_SUMS][8];
    memset(l, 0, sizeof l);
    int64_t x = x0;
    for (; x < x1; x += 8) {
        int nl = x1 - x < 8 ? (int)(x1 - x) : 8;
        for (int j = 0; j < nl; j++) {
            float xx = xv[x + j] > 0 ? xv[x + j] : 0.0f;
            double y2 = (double)m[x + j] * (double)m[x + j];
            double w = valid[x + j] && !(clip && y2 > 25.0 * (double)fr_noise_var(A, C, F, xx)) ? 1.0 : 0.0;
            double w0 = valid[x + j] && (var_mode || fr_noise_sky(xv[x + j], fr_noise_bg(k2sum, base, slope, xt[x + j]))) ? 1.0 : 0.0;
            l[0][j] += w;
            l[1][j] += w * xx;
            l[2][j] += w * ((double)xx * xx);
            l[3][j] += w * y2;
            l[4][j] += w * (xx * y2);
            l[5][j] += w0;
            l[6][j] += w0 * xx;
            l[7][j] += w0 * y2;
            l[8][j] += w0 * ((double)xx * xx);
        }
    }
    for (int s = 0; s < FR_NOISE_SUMS; s++)
        acc[s] += ((l[s][0] + l[s][1]) + (l[s][2] + l[s][3])) + ((l[s][4] + l[s][5]) + (l[s][6] + l[s][7]));
}

/* noise_row over row y of the pending frame */
static void noise_row_y(fr_cpu_t *c, int64_t y, double A, double C, double F, int clip, double acc[FR_NOISE_SUMS])
{
    int64_t nx = c->s.nx, b = c->s.o.border;
    const float *bg = c->pend.bg;
    noise_row(c->m + y * nx, c->xv + y * nx, c->valid + y * nx, b, nx - b, A, C, F, clip, c->var_mode, (float)c->s.sum_k2,
              bg[0] + bg[2] * c->yt[y], bg[1], c->xt, acc);
}

/* Noise-model sums of this frame, per tile, tiles in order. */
static void noise_sums(fr_cpu_t *c, double A, double C, double F, int clip, double S[FR_NOISE_SUMS])
{
    int64_t ny = c->s.ny, b = c->s.o.border;
    int64_t ntiles = (ny - 2 * b + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    int th = c->s.threads;
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        double acc[FR_NOISE_SUMS] = {0};
        int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
        for (int64_t y = ya; y < yb; y++) noise_row_y(c, y, A, C, F, clip, acc);
        for (int s = 0; s < FR_NOISE_SUMS; s++) c->part[tile * FR_NOISE_SUMS + s] = acc[s];
    }
    for (int s = 0; s < FR_NOISE_SUMS; s++) {
        double v = 0;
        for (int64_t tile = 0; tile < ntiles; tile++) v += c->part[tile * FR_NOISE_SUMS + s];
        S[s] = v;
    }
}

void fr_candidate_at(const float *z, const float *m, int64_t nx, int64_t x, int64_t y, double sum_k2, double unit,
                     pyr_frames_candidate_t *c)
{
    int64_t i = y * nx + x;
    float zc = z[i], zl = z[i - 1], zr = z[i + 1], zu = z[i - nx], zd = z[i + nx];
    float ddx = zl - 2 * zc + zr, ddy = zu - 2 * zc + zd;
    float ox = ddx < 0 ? 0.5f * (zl - zr) / ddx : 0.0f, oy = ddy < 0 ? 0.5f * (zu - zd) / ddy : 0.0f;
    if (ox > 0.5f) ox = 0.5f;
    if (ox < -0.5f) ox = -0.5f;
    if (oy > 0.5f) oy = 0.5f;
    if (oy < -0.5f) oy = -0.5f;
    c->x = (float)x + ox;
    c->y = (float)y + oy;
    c->flux = (float)(m[i] / sum_k2 * unit);
    c->snr = zc;
}

int fr_candidate_cmp(const void *a, const void *b)
{
    const pyr_frames_candidate_t *p = a, *q = b;
    int64_t yp = (int64_t)lroundf(p->y), yq = (int64_t)lroundf(q->y);
    if (yp != yq) return yp < yq ? -1 : 1;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return 0;
}

/* z = m / sigma on valid pixels (0 elsewhere), the maximum-SNR map, and the
 * local maxima above min(threshold, clean_threshold) in raster order
 * (<= FR_DEVICE_CANDIDATES; the rest are counted in *dropped). */
static int detect(fr_cpu_t *c, double A, double C, double F, int detecting, int *dropped, double *S)
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border;
    float k = (float)(c->s.o.threshold < c->s.o.clean_threshold ? c->s.o.threshold : c->s.o.clean_threshold);
    int th = c->s.threads;
    int64_t ntiles = (ny - 2 * b + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    /* per tile: z and the maximum-SNR map, and (S != NULL) the noise sums of
     * the same rows, as noise_sums(c, A, C, 1) adds them */
#pragma omp parallel for num_threads(th) schedule(static)
    for (int64_t tile = 0; tile < ntiles; tile++) {
        double acc[FR_NOISE_SUMS] = {0};
        int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
        for (int64_t y = ya; y < yb; y++) {
            for (int64_t x = b; x < nx - b; x++) {
                int64_t i = y * nx + x;
                float z = c->m[i] / sqrtf(fr_noise_var(A, C, F, c->xv[i]));
                z = c->valid[i] ? z : 0.0f;
                c->z[i] = z;
                if (detecting && z > c->maxz[i]) c->maxz[i] = z;
            }
            if (S) noise_row_y(c, y, A, C, F, 1, acc);
        }
        for (int s = 0; s < FR_NOISE_SUMS; s++) c->part[tile * FR_NOISE_SUMS + s] = acc[s];
    }
    if (S)
        for (int s = 0; s < FR_NOISE_SUMS; s++) {
            double v = 0;
            for (int64_t tile = 0; tile < ntiles; tile++) v += c->part[tile * FR_NOISE_SUMS + s];
            S[s] = v;
        }
    int n = 0;
    *dropped = 0;
    for (int64_t y = b + 1; y < ny - b - 1; y++)
        for (int64_t x = b + 1; x < nx - b - 1; x++) {
            int64_t i = y * nx + x;
            float z = c->z[i];
            if (!(z > k)) continue;
            /* a strict maximum over earlier neighbours, not below later ones */
            if (!(z > c->z[i - nx - 1] && z > c->z[i - nx] && z > c->z[i - nx + 1] && z > c->z[i - 1] &&
                  z >= c->z[i + 1] && z >= c->z[i + nx - 1] && z >= c->z[i + nx] && z >= c->z[i + nx + 1]))
                continue;
            if (n == FR_DEVICE_CANDIDATES) {
                (*dropped)++;
                continue;
            }
            c->cand_idx[n] = i;
            fr_candidate_at(c->z, c->m, nx, x, y, c->s.sum_k2, c->unit, &c->cand[n]);
            n++;
        }
    return n;
}

/* h_t[j] takes the prediction; a change inside the border is remembered
 * (index, old value) so that row t of the dot products can be corrected. */
static int64_t replace_pixel(fr_cpu_t *c, float *h, int64_t j)
{
    if (h[j] == c->bh[j]) return 0;
    int64_t nx = c->s.nx, x = j % nx, y = j / nx, b = c->s.o.border;
    if (x >= b && x < nx - b && y >= b && y < c->s.ny - b) {
        if (c->nchg == c->capchg) {
            int64_t cap = c->capchg ? 2 * c->capchg : 4096;
            int64_t *i2 = realloc(c->chg_idx, (size_t)cap * sizeof *i2);
            if (i2) c->chg_idx = i2;
            float *o2 = realloc(c->chg_old, (size_t)cap * sizeof *o2);
            if (o2) c->chg_old = o2;
            if (!i2 || !o2) {
                c->chg_overflow = 1;
                h[j] = c->bh[j];
                return 1;
            }
            c->capchg = cap;
        }
        c->chg_idx[c->nchg] = j;
        c->chg_old[c->nchg++] = h[j];
    }
    h[j] = c->bh[j];
    return 1;
}

/* Row t of the dot products after pixels of h_t changed: the changes' part
 * only (exact products in double, in the order they were made). */
static void dots_correct(fr_cpu_t *c, int64_t t, int n)
{
    double *row = c->D + (t % c->s.dot_ring) * (c->s.o.history + 1);
    const float *h = ring_frame(c, t);
    for (int k = 0; k <= n; k++) {
        const float *hk = ring_frame(c, t - k);
        double d = 0;
        for (int64_t i = 0; i < c->nchg; i++) {
            int64_t j = c->chg_idx[i];
            double old = c->chg_old[i], now_ = h[j];
            d += k == 0 ? now_ * now_ - old * old : (now_ - old) * (double)hk[j];
        }
        row[k] += d;
    }
}

/* Replace detected objects of h_t by the prediction.  Returns the pixels
 * changed. */
static int64_t clean_history(fr_cpu_t *c, int64_t t, int ncand)
{
    int64_t nx = c->s.nx, ny = c->s.ny, changed = 0;
    float *h = ring_frame(c, t);
    double r = c->s.clean_radius;
    int64_t ir = (int64_t)floor(r);
    if (c->s.o.clean)
        for (int i = 0; i < ncand; i++) {
            if (!(c->cand[i].snr > c->s.o.clean_threshold)) continue;
            int64_t px = c->cand_idx[i] % nx, py = c->cand_idx[i] / nx;
            for (int64_t y = py - ir; y <= py + ir; y++)
                for (int64_t x = px - ir; x <= px + ir; x++) {
                    if (y < 0 || y >= ny || x < 0 || x >= nx) continue;
                    if ((double)((x - px) * (x - px) + (y - py) * (y - py)) > r * r) continue;
                    changed += replace_pixel(c, h, y * nx + x);
                }
        }
    return changed;
}

/* ---------------------------------------------------------------- a frame */

/* Frame p's residual and prediction, and (t >= 0) row t of the dot products
 * in the same pass over the history: p = t - 1 is whitened while frame t is
 * correlated with the frames before it, so that each history frame is read
 * once per frame instead of twice.  Per row: e = h_p - sum_k a_k h_{p-k}
 * (k in order), b = h_p - e; the dots as in dots_row (same tiles, rows,
 * lanes), so the values equal dots_row's. */
static void whiten_dots(fr_cpu_t *c, int64_t p, const float *a, int np_, int64_t t, int nt)
{
    int64_t nx = c->s.nx, ny = c->s.ny, b = c->s.o.border;
    const float *hp[FR_MAX_HISTORY + 1], *ht[FR_MAX_HISTORY + 1];
    for (int k = 0; k <= np_; k++) hp[k] = ring_frame(c, p - k);
    for (int k = 0; t >= 0 && k <= nt; k++) ht[k] = ring_frame(c, t - k);
    int th = c->s.threads;
    int64_t ntiles = (ny - 2 * b + FR_TILE_ROWS - 1) / FR_TILE_ROWS;
    int stride = nt + 1;
#pragma omp parallel num_threads(th)
    {
#pragma omp for schedule(static) nowait
        for (int64_t y = 0; y < ny; y++) {
            if (y >= b && y < ny - b) continue;
            float *e = c->e + y * nx, *bh = c->bh + y * nx;
            const float *h0 = hp[0] + y * nx;
            for (int64_t x = 0; x < nx; x++) e[x] = h0[x];
            for (int k = 1; k <= np_; k++) {
                const float *h = hp[k] + y * nx;
                float ak = a[k - 1];
                for (int64_t x = 0; x < nx; x++) e[x] -= ak * h[x];
            }
            for (int64_t x = 0; x < nx; x++) bh[x] = h0[x] - e[x];
        }
#pragma omp for schedule(static)
        for (int64_t tile = 0; tile < ntiles; tile++) {
            double acc[FR_MAX_HISTORY + 1];
            for (int k = 0; k <= nt; k++) acc[k] = 0;
            int64_t ya = b + tile * FR_TILE_ROWS, yb = ya + FR_TILE_ROWS < ny - b ? ya + FR_TILE_ROWS : ny - b;
            for (int64_t y = ya; y < yb; y++) {
                float *e = c->e + y * nx, *bh = c->bh + y * nx;
                const float *h0 = hp[0] + y * nx;
                for (int64_t x = 0; x < nx; x++) e[x] = h0[x];
                for (int k = 1; k <= np_; k++) {
                    const float *h = hp[k] + y * nx;
                    float ak = a[k - 1];
                    for (int64_t x = 0; x < nx; x++) e[x] -= ak * h[x];
                }
                for (int64_t x = 0; x < nx; x++) bh[x] = h0[x] - e[x];
                if (t < 0) continue;
                const float *av = ht[0] + y * nx;
                for (int k = 0; k <= nt; k++) {
                    const float *bk = ht[k] + y * nx;
                    double l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    int64_t x = b;
                    for (; x + 8 <= nx - b; x += 8)
                        for (int j = 0; j < 8; j++) l[j] += (double)av[x + j] * (double)bk[x + j];
                    for (int j = 0; x < nx - b; x++, j++) l[j] += (double)av[x] * (double)bk[x];
                    acc[k] += ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
                }
            }
            if (t >= 0)
                for (int k = 0; k <= nt; k++) c->part[tile * stride + k] = acc[k];
        }
    }
    if (t < 0) return;
    double *row = c->D + (t % c->s.dot_ring) * (c->s.o.history + 1);
    for (int k = 0; k <= nt; k++) {
        double sum = 0;
        for (int64_t tile = 0; tile < ntiles; tile++) sum += c->part[tile * stride + k];
        row[k] = sum;
    }
}

/* Everything after the residual of the pending frame p: valid pixels,
 * matched filter, noise model, candidates, cleaning of h_p (row p of the dot
 * products, and the entry (t, p) when frame t = p + 1 is already in, corrected
 * for the changes), the residual copied out; then it is delivered. */
static pyr_status_t finish_frame(fr_cpu_t *c, int64_t t, fr_deliver_t deliver, void *driver)
{
    const fr_setup_t *s = &c->s;
    const pyr_frames_options_t *o = &s->o;
    fr_pending_t *pd = &c->pend;
    int64_t p = pd->t;
    fr_out_t *out = &pd->out;
    double t3 = pyr_now_s();
    /* the pending frame's replaced pixels */
    int64_t *bad = c->bad, nbad = c->nbad;
    c->bad = pd->bad;
    c->nbad = pd->nbad;
    valid_map(c, pd->sx, pd->sy);
    matched_filter(c);
    c->whitened++;
    out->detecting = c->whitened > o->warmup;
    double S[FR_NOISE_SUMS], A, C, F;
    if (!c->noise_ready) {
        noise_sums(c, 0, 0, 0, 0, S);
        fr_noise_fit(S, &A, &C, &F);
        noise_sums(c, A, C, F, 1, S);
        for (int i = 0; i < FR_NOISE_SUMS; i++) c->noise[i] = S[i];
        c->noise_ready = 1;
    }
    fr_noise_fit(c->noise, &A, &C, &F);
    out->noise_a = c->var_mode ? A : A * c->unit; /* with variance planes A is a pure number */
    out->noise_c = C * c->unit * c->unit;
    int ncand = detect(c, A, C, F, out->detecting, &out->dropped, c->whitened > 1 ? S : NULL);
    if (c->whitened > 1) {
        double lam = 1.0 - 1.0 / (double)o->noise_frames;
        for (int i = 0; i < FR_NOISE_SUMS; i++) c->noise[i] = lam * c->noise[i] + S[i];
    }
    /* masked pixels of h_p take the prediction too */
    float *hh = ring_frame(c, p);
    int64_t ox = s->align ? fr_pixel_shift(pd->sx) : 0, oy = s->align ? fr_pixel_shift(pd->sy) : 0;
    int64_t changed = 0;
    c->nchg = 0;
    c->chg_overflow = 0;
    for (int64_t i = 0; i < c->nbad; i++) {
        int64_t qx = c->bad[i] % s->nx - ox, qy = c->bad[i] / s->nx - oy;
        for (int64_t y = qy - 1; y <= qy + 1; y++)
            for (int64_t x = qx - 1; x <= qx + 1; x++)
                if (y >= 0 && y < s->ny && x >= 0 && x < s->nx) changed += replace_pixel(c, hh, y * s->nx + x);
    }
    changed += clean_history(c, p, ncand);
    /* R's rows for the frames after p: corrected for the changes (recomputed
     * when they are many) */
    int np_ = (int)(p < o->history ? p : o->history);
    if (changed && (c->chg_overflow || c->nchg > c->np / 16)) {
        dots_row(c, p, np_);
        if (t >= 0) dots_row(c, t, (int)(t < o->history ? t : o->history));
    } else if (c->nchg) {
        dots_correct(c, p, np_);
        if (t >= 0) { /* entry (t, p) */
            const float *ht = ring_frame(c, t), *h = ring_frame(c, p);
            double d = 0;
            for (int64_t i = 0; i < c->nchg; i++) {
                int64_t j = c->chg_idx[i];
                d += ((double)h[j] - (double)c->chg_old[i]) * (double)ht[j];
            }
            c->D[(t % s->dot_ring) * (o->history + 1) + 1] += d;
        }
    }
    out->cleaned = changed;
    float *res = pd->res_out ? pd->res_out : c->e;
    {
        const uint8_t *v = c->valid;
        int64_t nx = s->nx, ny = s->ny, b = o->border, np = c->np, nonfinite = 0;
        int th = s->threads;
        float unit = (float)c->unit;
        const float *e = c->e;
        /* back in the data's units; a value beyond float's range there (or
         * one that was not finite already) makes the driver refuse the frame */
#pragma omp parallel for num_threads(th) schedule(static) reduction(+ : nonfinite)
        for (int64_t i = 0; i < np; i++) {
            float r = e[i] * unit;
            res[i] = r;
            nonfinite += fabsf(r) <= FLT_MAX ? 0 : 1;
        }
        out->nonfinite |= nonfinite > 0;
        if (c->nbad || c->ref_masked) {
#pragma omp parallel for num_threads(th) schedule(static)
            for (int64_t y = b; y < ny - b; y++)
                for (int64_t x = b; x < nx - b; x++)
                    if (!v[y * nx + x]) res[y * nx + x] = 0;
        }
    }
    c->bad = bad;
    c->nbad = nbad;
    /* report the peaks above the threshold (after the warm-up), in order */
    int nrep = 0;
    if (out->detecting)
        for (int i = 0; i < ncand; i++)
            if (c->cand[i].snr > o->threshold) {
                if (nrep < o->max_candidates) c->cand[nrep++] = c->cand[i];
                else out->dropped++;
            }
    if (!out->detecting) out->dropped = 0;
    out->cand = c->cand;
    out->ncand = nrep;
    out->residual = res;
    pd->active = 0;
    c->stage[3] += pyr_now_s() - t3;
    return deliver(driver, out);
}

static pyr_status_t fr_cpu_push(fr_cpu_t *c, const void *frame, pyr_frames_dtype_t type, const float *var, float *residual_out,
                         fr_deliver_t deliver, void *driver)
{
    const fr_setup_t *s = &c->s;
    const pyr_frames_options_t *o = &s->o;
    int64_t t = c->t;
    fr_out_t out;
    memset(&out, 0, sizeof out);
    out.frame = t;
    double t0 = pyr_now_s();
    if (t == 0) c->var_mode = var != NULL;
    if (c->var_mode && !c->pvar && !(c->pvar = malloc((size_t)c->np * sizeof(float))))
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the variance plane of frames of %lld x %lld", (long long)s->nx,
                        (long long)s->ny);
    ingest(c, frame, type);
    out.masked = c->nbad;
    out.rms = c->rms;
    out.nonfinite = c->over > 0;
    fftwf_execute_dft_r2c(c->r2c, c->in, c->F);
    int new_ref = t == 0 || (o->reference == PYR_FRAMES_REF_ROLLING && t % o->reference_every == 0);
    double sx = 0, sy = 0;
    float *h = ring_frame(c, t);
    if (t == 0) {
        memcpy(c->G, c->F, (size_t)c->nch * sizeof *c->G);
        reference_sums(c);
        reference_images(c, 0, 0);
        out.iterations = 0;
        if (s->align) register_frame(c, 0, 0, h);
    } else {
        estimate_shift(c, &sx, &sy, &out.iterations, &out.coarse_used, &out.flags);
        if (c->nbad) refill_masked(c, sx, sy);
        /* registered into h (align) or into scratch for the refinement alone */
        refine_shift(c, &sx, &sy, s->align ? h : c->t2, &out.iterations, &out.flags);
    }
    if (!s->align) memcpy(h, c->in, (size_t)c->np * sizeof(float));
    c->prev_dx = sx;
    c->prev_dy = sy;
    out.dx = sx;
    out.dy = sy;
    if (new_ref && t > 0) {
        /* the rolling reference: this frame, moved into frame 0's coordinates */
        phase_tables(c, sx, sy);
        int64_t nh = s->nx / 2 + 1;
        for (int64_t ky = 0; ky < s->ny; ky++)
            for (int64_t kx = 0; kx < nh; kx++) {
                float phr = c->cx[kx] * c->cy[ky] - c->sx_[kx] * c->sy_[ky];
                float phi = c->cx[kx] * c->sy_[ky] + c->sx_[kx] * c->cy[ky];
                float fr = c->F[ky * nh + kx][0], fi = c->F[ky * nh + kx][1];
                c->G[ky * nh + kx][0] = fr * phr - fi * phi;
                c->G[ky * nh + kx][1] = fr * phi + fi * phr;
            }
        reference_sums(c);
        reference_images(c, sx, sy);
    }
    if (t == 0 && c->nbad) {
        c->bad0 = malloc((size_t)c->nbad * sizeof *c->bad0);
        if (c->bad0) memcpy(c->bad0, c->bad, (size_t)c->nbad * sizeof *c->bad0);
        c->nbad0 = c->bad0 ? c->nbad : 0;
    }
    if (t == 1 && c->nbad0) repair_first(c, h);
    remove_background(c, h);
    if (t == 0) memcpy(c->bg0, c->bg, sizeof c->bg);
    c->shx[t % s->dot_ring] = sx;
    c->shy[t % s->dot_ring] = sy;
    double t1 = pyr_now_s();
    c->stage[0] += t1 - t0;

    /* row t of R: fused with the pending frame's whitening when there is one */
    int n = (int)(t < o->history ? t : o->history);
    pyr_status_t st = PYR_OK;
    if (c->pend.active) {
        whiten_dots(c, c->pend.t, c->pend.a, c->pend.out.used, t, n);
        c->stage[2] += pyr_now_s() - t1;
        st = finish_frame(c, t, deliver, driver);
        if (st != PYR_OK) return st;
    } else {
        dots_row(c, t, n);
    }
    double t2 = pyr_now_s();
    fr_dots_t d = {c->D, c->shx, c->shy, s->dot_ring, o->history};
    float a[FR_MAX_HISTORY];
    out.flags |= fr_weights_solve(&d, t, o->history, s->deg, s->window, o->epsilon, c->work, a, &out.used, &out.eps_used);
    for (int k = 0; k < out.used; k++) out.weights[k] = a[k];
    c->stage[1] += pyr_now_s() - t2;
    c->t++;
    if (t == 0) {
        float *res = residual_out ? residual_out : c->e;
        memset(res, 0, (size_t)c->np * sizeof(float));
        out.residual = res;
        return deliver(driver, &out);
    }
    /* frame t waits for frame t + 1 (or the end) to be whitened */
    fr_pending_t *pd = &c->pend;
    pd->active = 1;
    pd->t = t;
    pd->out = out;
    memcpy(pd->a, a, sizeof a);
    pd->res_out = residual_out;
    pd->sx = sx;
    pd->sy = sy;
    memcpy(pd->bg, c->bg, sizeof pd->bg);
    if (c->var_mode) { /* in the sequence's unit, where the frame went (its residual's coordinates) */
        int64_t nx = s->nx, ny = s->ny;
        int64_t ox = s->align ? fr_pixel_shift(sx) : 0, oy = s->align ? fr_pixel_shift(sy) : 0;
        float scale = c->inv_unit * c->inv_unit;
        int th = s->threads;
#pragma omp parallel for num_threads(th) schedule(static)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) c->pvar[y * nx + x] = fr_var_at(var, nx, ny, x, y, ox, oy, scale);
    }
    int64_t *tmp = pd->bad;
    pd->bad = c->bad;
    pd->nbad = c->nbad;
    c->bad = tmp;
    c->nbad = 0;
    return PYR_OK;
}

static pyr_status_t fr_cpu_finish(fr_cpu_t *c, fr_deliver_t deliver, void *driver)
{
    if (!c->pend.active) return PYR_OK;
    double t1 = pyr_now_s();
    whiten_dots(c, c->pend.t, c->pend.a, c->pend.out.used, -1, 0);
    c->stage[2] += pyr_now_s() - t1;
    return finish_frame(c, -1, deliver, driver);
}

static pyr_status_t fr_cpu_max_snr(fr_cpu_t *c, float *out)
{
    memcpy(out, c->maxz, (size_t)c->np * sizeof(float));
    return PYR_OK;
}

static void fr_cpu_stage_times(const fr_cpu_t *c, double t[4])
{
    for (int i = 0; i < 4; i++) t[i] = c->stage[i];
}

/* ---------------------------------------------------------------- registration (frames_internal.h) */

static pyr_status_t cpu_create(const fr_setup_t *s, void **impl)
{
    fr_cpu_t *c = NULL;
    pyr_status_t st = fr_cpu_create(s, &c);
    *impl = c;
    return st;
}

static pyr_status_t cpu_push(void *impl, const void *frame, pyr_frames_dtype_t type, const float *var, float *residual_out,
                             fr_deliver_t deliver, void *driver)
{
    return fr_cpu_push(impl, frame, type, var, residual_out, deliver, driver);
}

static pyr_status_t cpu_finish(void *impl, fr_deliver_t deliver, void *driver) { return fr_cpu_finish(impl, deliver, driver); }

static pyr_status_t cpu_max_snr(void *impl, float *out) { return fr_cpu_max_snr(impl, out); }

static void cpu_describe(const void *impl, char *text, size_t size)
{
    const fr_cpu_t *c = impl;
    snprintf(text, size, "%d thread%s", c->s.threads, c->s.threads == 1 ? "" : "s");
}

static void cpu_stage_times(const void *impl, double t[4]) { fr_cpu_stage_times(impl, t); }

static void cpu_destroy(void *impl)
{
    fr_cpu_t *c = impl;
    fr_cpu_destroy(&c);
}

const fr_impl_t fr_impl_cpu = {
    .backend = PYR_BACKEND_CPU,
    .name = "cpu",
    .create = cpu_create,
    .push = cpu_push,
    .finish = cpu_finish,
    .pin = NULL, /* the CPU reads the caller's memory where it is */
    .max_snr = cpu_max_snr,
    .describe = cpu_describe,
    .stage_times = cpu_stage_times,
    .destroy = cpu_destroy,
};
