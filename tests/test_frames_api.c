/* The frames API and FITS I/O without Python: a FITS cube round trip (data
 * and header cards), malformed files, option checks, backend = cuda without a
 * GPU, a synthetic jittered star field whose shifts come back, the same
 * result for 1 and 2 threads (fixed-order sums), the same results for the
 * data at any scale, and R singular (identical frames) without NaN. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "frames_scene.h"
#include "io/fits.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"

#define NX 96
#define NY 80

static void fits_roundtrip(void)
{
    const char *path = PYR_BINARY_DIR "/tests/frames_rt.fits";
    char cards[3][81];
    snprintf(cards[0], 81, "%-8s= %20s / %s", "EXPTIME", "12.5", "seconds");
    snprintf(cards[1], 81, "%-8s= '%s' / %s", "DATE-OBS", "2026-11-23T10:20:30", "start");
    snprintf(cards[2], 81, "%-8s= '%s'", "OBJECT", "M51");
    float *data = malloc(NX * NY * 3 * sizeof *data), *back = malloc(NX * NY * sizeof *back);
    for (int i = 0; i < NX * NY * 3; i++) data[i] = (float)(i % 1000) * 0.25f - 17.0f;
    pyr_fits_writer_t *w = NULL;
    const char *hist[1] = {"round trip"};
    CHECK_OK(pyr_fits_writer_open(path, NX, NY, 3, (const char(*)[81])cards, 3, hist, 1, &w));
    CHECK(access(path, F_OK) != 0, "the cube is visible before commit");
    for (int t = 0; t < 3; t++) CHECK_OK(pyr_fits_writer_frame(w, t, data + t * NX * NY));
    CHECK_OK(pyr_fits_writer_commit(&w));
    pyr_fits_reader_t *r = NULL;
    pyr_fits_info_t in;
    CHECK_OK(pyr_fits_open(path, &r, &in));
    CHECK(in.nx == NX && in.ny == NY && in.nframes == 3 && in.bitpix == -32, "shape %lld %lld %lld bitpix %d", (long long)in.nx,
          (long long)in.ny, (long long)in.nframes, in.bitpix);
    char v[80];
    CHECK(pyr_fits_card_value(&in, "EXPTIME", v, sizeof v) && atof(v) == 12.5, "EXPTIME %s", v);
    CHECK(pyr_fits_card_value(&in, "DATE-OBS", v, sizeof v) && !strcmp(v, "2026-11-23T10:20:30"), "DATE-OBS '%s'", v);
    CHECK(pyr_fits_card_value(&in, "OBJECT", v, sizeof v) && !strcmp(v, "M51"), "OBJECT '%s'", v);
    for (int t = 0; t < 3; t++) {
        CHECK_OK(pyr_fits_read_frame(r, t, PYR_FITS_F32, back));
        CHECK(!memcmp(back, data + t * NX * NY, NX * NY * sizeof(float)), "frame %d differs after the round trip", t);
    }
    CHECK_FAILS(pyr_fits_read_frame(r, 3, PYR_FITS_F32, back), PYR_ERR_ARG, "outside");
    CHECK_FAILS(pyr_fits_read_frame(r, 0, PYR_FITS_U16, back), PYR_ERR_ARG, "16-bit");
    pyr_fits_close(&r);
    /* malformed files */
    CHECK_FAILS(pyr_fits_open(PYR_BINARY_DIR "/tests/no_such.fits", &r, &in), PYR_ERR_IO, "no such file");
    const char *junk = PYR_BINARY_DIR "/tests/frames_junk.fits";
    FILE *f = fopen(junk, "wb");
    fputs("SIMPLE  =                    T / truncated header without END", f);
    fclose(f);
    CHECK_FAILS(pyr_fits_open(junk, &r, &in), PYR_ERR_FORMAT, junk);
    printf("malformed FITS -> %s\n", pyr_last_error());
    remove(junk);
    remove(path);
    free(data);
    free(back);
}

/* A star field moved by (sx, sy) with bilinear-free Gaussian stars (exact
 * sub-pixel positions), plus noise from a fixed generator. */
static double stars[60][3];
static void star_field(float *out, double sx, double sy, double noise)
{
    static double v[NX * NY];
    fs_sky(v, NX, NY, 100, stars, 60, sx, sy, 1.3, 0);
    for (int i = 0; i < NX * NY; i++) out[i] = (float)(v[i] + noise * gauss());
}

typedef struct {
    double dx[64], dy[64];
    float res[64][NX * NY];
    int flags[64];
    int n;
} collect_t;

static pyr_status_t collect(void *user, const pyr_frames_result_t *r)
{
    collect_t *c = user;
    c->dx[r->frame] = r->dx;
    c->dy[r->frame] = r->dy;
    c->flags[r->frame] = r->flags;
    memcpy(c->res[r->frame], r->residual, sizeof c->res[0]);
    c->n++;
    for (int64_t i = 0; i < NX * NY; i++)
        if (!isfinite(r->residual[i])) return pyr_fail(PYR_ERR_NUMERIC, "frame %lld: NaN in the residual", (long long)r->frame);
    return PYR_OK;
}

/* Reliability review M7: the pipeline must not depend on the data's absolute
 * scale.  A jittered star field with a slow mover, multiplied by c from 1e-30
 * to 1e30 (float values, as flux-calibrated or scaled data arrive): the same
 * shifts, the same candidates (flux scaled by c), the residual and the noise
 * model scaled by c (c^2 for its constant term), and never a NaN. */
#define SC_T 16
typedef struct {
    double dx[SC_T], dy[SC_T], na[SC_T], nc[SC_T];
    int ncand[SC_T];
    pyr_frames_candidate_t cand[SC_T][32];
    float res[SC_T][NX * NY];
    int n, nonfinite;
} scale_run_t;

static pyr_status_t scale_collect(void *user, const pyr_frames_result_t *r)
{
    scale_run_t *c = user;
    int t = (int)r->frame;
    c->dx[t] = r->dx;
    c->dy[t] = r->dy;
    c->na[t] = r->noise_a;
    c->nc[t] = r->noise_c;
    c->ncand[t] = r->ncandidates < 32 ? r->ncandidates : 32;
    if (c->ncand[t]) memcpy(c->cand[t], r->candidates, (size_t)c->ncand[t] * sizeof *r->candidates);
    memcpy(c->res[t], r->residual, sizeof c->res[0]);
    for (int64_t i = 0; i < NX * NY; i++) c->nonfinite += !isfinite(r->residual[i]);
    c->n++;
    return PYR_OK;
}

static void scale_sweep(void)
{
    static double base[SC_T][NX * NY];
    static float seq[SC_T][NX * NY];
    static scale_run_t ref, run;
    uint64_t keep = rng;
    rng = 0x9e3779b97f4a7c15ull;
    for (int t = 0; t < SC_T; t++) {
        double sx, sy;
        fs_jitter(t, 3, &sx, &sy);
        const double mx = 30 + 0.6 * t + sx, my = 25 + 0.4 * t + sy;
        fs_sky(base[t], NX, NY, 100, stars, 60, sx, sy, 1.3, 0);
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                const double v = base[t][y * NX + x] + fs_blob(x, y, mx, my, 40, 1.1);
                base[t][y * NX + x] = v + 3.0 * gauss();
            }
    }
    rng = keep;
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.border = 8;
    o.history = 6;
    o.warmup = 2;
    const double scales[] = {1, 1e-30, 1e-20, 1e-13, 1e14, 1e16, 1e20, 1e30};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        double c = scales[k];
        scale_run_t *r = k == 0 ? &ref : &run;
        memset(r, 0, sizeof *r);
        for (int t = 0; t < SC_T; t++)
            for (int i = 0; i < NX * NY; i++) seq[t][i] = (float)(base[t][i] * c);
        pyr_frames_t *f = NULL;
        CHECK_OK(pyr_frames_create(NX, NY, &o, scale_collect, r, &f));
        for (int t = 0; t < SC_T && f; t++) CHECK_OK(pyr_frames_push(f, seq[t], PYR_FRAMES_F32, NULL));
        if (f) CHECK_OK(pyr_frames_finish(f));
        pyr_frames_destroy(&f);
        CHECK(r->n == SC_T && r->nonfinite == 0, "scale %g: %d frames delivered, %d non-finite residual values", c, r->n,
              r->nonfinite);
        int ncand = 0;
        for (int t = 0; t < SC_T; t++) ncand += r->ncand[t];
        if (k == 0) {
            printf("scale 1: %d candidates\n", ncand);
            CHECK(ncand >= SC_T / 2, "the mover gives only %d candidates at scale 1", ncand);
            continue;
        }
        double dshift = 0, dres = 0, rmax = 0, dnoise = 0, dcand = 0;
        int same = 1;
        for (int t = 0; t < SC_T; t++) {
            dshift = fmax(dshift, fmax(fabs(r->dx[t] - ref.dx[t]), fabs(r->dy[t] - ref.dy[t])));
            for (int i = 0; i < NX * NY; i++) {
                dres = fmax(dres, fabs(r->res[t][i] / c - ref.res[t][i]));
                rmax = fmax(rmax, fabs(ref.res[t][i]));
            }
            if (t > 0) {
                dnoise = fmax(dnoise, fabs(r->na[t] / c - ref.na[t]) / fmax(fabs(ref.na[t]), 1e-300));
                dnoise = fmax(dnoise, fabs(r->nc[t] / (c * c) - ref.nc[t]) / fmax(fabs(ref.nc[t]), 1e-300));
            }
            if (r->ncand[t] != ref.ncand[t]) {
                same = 0;
                continue;
            }
            for (int j = 0; j < r->ncand[t]; j++) {
                const pyr_frames_candidate_t *a = &r->cand[t][j], *b = &ref.cand[t][j];
                dcand = fmax(dcand, fmax(fabs(a->x - b->x), fabs(a->y - b->y)));
                dcand = fmax(dcand, fabs(a->snr - b->snr) / b->snr);
                dcand = fmax(dcand, fabs(a->flux / c - b->flux) / fabs(b->flux));
            }
        }
        printf("scale %-6g: max |shift - shift(1)| %.2e px, max |res / c - res(1)| %.2e of %.3g, noise model %.2e, "
               "%d candidates (%s, largest difference %.2e)\n",
               c, dshift, dres, rmax, dnoise, ncand, same ? "same frames" : "DIFFERENT", dcand);
        CHECK(dshift < 1e-4, "scale %g: shifts differ from scale 1 by %.3g px", c, dshift);
        CHECK(dres <= 1e-4 * rmax, "scale %g: residual / c differs from scale 1's by %.3g (max %.3g)", c, dres, rmax);
        CHECK(dnoise < 1e-3, "scale %g: noise model differs (relative %.3g)", c, dnoise);
        CHECK(same && dcand < 1e-3, "scale %g: candidates differ from scale 1's (%.3g)", c, dcand);
    }
    /* one frame 1e60 times the first: beyond float's range in the sequence's
     * scale, refused with a message instead of a NaN residual */
    for (int t = 0; t < SC_T; t++)
        for (int i = 0; i < NX * NY; i++) seq[t][i] = (float)(base[t][i] * (t == 2 ? 1e30 : 1e-30));
    memset(&run, 0, sizeof run);
    pyr_frames_t *f = NULL;
    CHECK_OK(pyr_frames_create(NX, NY, &o, scale_collect, &run, &f));
    pyr_status_t st = PYR_OK;
    for (int t = 0; t < SC_T && f && st == PYR_OK; t++) st = pyr_frames_push(f, seq[t], PYR_FRAMES_F32, NULL);
    if (f && st == PYR_OK) st = pyr_frames_finish(f);
    pyr_frames_destroy(&f);
    printf("a frame 1e60 times the first -> %s\n", pyr_last_error());
    CHECK(st == PYR_ERR_NUMERIC && strstr(pyr_last_error(), "frame 2:") && strstr(pyr_last_error(), "share a scale"),
          "a frame off the sequence's scale: %s (%s)", pyr_status_name(st), pyr_last_error());
    CHECK(run.n == 2 && run.nonfinite == 0, "%d frames delivered before it, %d non-finite values", run.n, run.nonfinite);
}

/* Bad pixels (issue: frames on real camera frames): the keys, and a dead
 * column reading garbage plus hot pixels, given as a static mask
 * (pyr_frames_set_mask) and by a saturation level: no candidate near them,
 * no NaN, the masked pixels counted, the same for 1 and 2 threads. */
typedef struct {
    int n, near_bad, nonfinite;
    double dx[32], dy[32];
    float res[32][NX * NY];
} mask_run_t;

static pyr_status_t mask_collect(void *user, const pyr_frames_result_t *r)
{
    mask_run_t *c = user;
    int t = (int)r->frame;
    c->dx[t] = r->dx;
    c->dy[t] = r->dy;
    memcpy(c->res[t], r->residual, sizeof c->res[0]);
    for (int64_t i = 0; i < NX * NY; i++) c->nonfinite += !isfinite(r->residual[i]);
    for (int j = 0; j < r->ncandidates; j++) {
        double x = r->candidates[j].x + r->dx; /* back in the frame's pixels */
        if (fabs(x - 40) < 4 || (fabs(x - 70) < 4 && fabs(r->candidates[j].y + r->dy - 30) < 4)) c->near_bad++;
    }
    c->n++;
    return PYR_OK;
}

static void masks_and_keys(void)
{
    pyr_frames_options_t *ko = NULL;
    CHECK_OK(pyr_frames_options_create(&ko));
    CHECK_OK(pyr_frames_options_set(ko, "saturation", "none"));
    CHECK(ko->saturation == 0, "saturation = none gives %g", ko->saturation);
    CHECK_OK(pyr_frames_options_set(ko, "frames.saturation", "60000"));
    CHECK(ko->saturation == 60000, "saturation = 60000 gives %g", ko->saturation);
    CHECK_FAILS(pyr_frames_options_set(ko, "saturation", "-3"), PYR_ERR_CONFIG, "frames.saturation");
    CHECK_OK(pyr_frames_options_set(ko, "badpixels", "auto"));
    CHECK(ko->badpixels == 1, "badpixels = auto gives %d", ko->badpixels);
    CHECK_FAILS(pyr_frames_options_set(ko, "badpixels", "sometimes"), PYR_ERR_CONFIG, "none | auto");
    pyr_frames_options_destroy(&ko);
    CHECK_FAILS(pyr_frames_set_mask(NULL, NULL), PYR_ERR_ARG, "NULL");

    enum { MT = 16 };
    static float seq[MT][NX * NY];
    static uint8_t mask[NX * NY];
    for (int y = 0; y < NY; y++) mask[y * NX + 40] = 1;
    for (int t = 0; t < MT; t++) {
        double sx, sy;
        fs_jitter(t, 4, &sx, &sy);
        star_field(seq[t], sx, sy, 3.0);
        for (int y = 0; y < NY; y++) seq[t][y * NX + 40] = (float)(1e6 * urand()); /* a column reading garbage */
        seq[t][30 * NX + 70] = 5e5f;                                                /* a hot pixel, saturated */
    }
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.border = 8;
    o.history = 6;
    o.saturation = 1e5;
    static mask_run_t m1, m2;
    mask_run_t *ms[2] = {&m1, &m2};
    for (int k = 0; k < 2; k++) {
        o.threads = k + 1;
        pyr_frames_t *f = NULL;
        CHECK_OK(pyr_frames_create(NX, NY, &o, mask_collect, ms[k], &f));
        if (!f) return;
        CHECK_OK(pyr_frames_set_mask(f, mask));
        for (int t = 0; t < MT; t++) CHECK_OK(pyr_frames_push(f, seq[t], PYR_FRAMES_F32, NULL));
        CHECK_OK(pyr_frames_finish(f));
        pyr_frames_stats_t st;
        pyr_frames_get_stats(f, &st);
        CHECK(st.masked_pixels == (int64_t)MT * (NY + 1), "%lld pixels masked, expected %d", (long long)st.masked_pixels,
              MT * (NY + 1));
        pyr_frames_destroy(&f);
    }
    printf("a garbage column (masked) and a saturated hot pixel: %d candidates near them, %d non-finite values\n", m1.near_bad,
           m1.nonfinite);
    CHECK(m1.n == MT && m1.near_bad == 0 && m1.nonfinite == 0, "masked pixels: %d frames, %d candidates near them, %d NaN", m1.n,
          m1.near_bad, m1.nonfinite);
    CHECK(!memcmp(m1.res, m2.res, sizeof m1.res) && !memcmp(m1.dx, m2.dx, sizeof m1.dx), "masked run: 1 and 2 threads differ");
}

int main(void)
{
    fits_roundtrip();

    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.border = 8;
    o.history = 6;
    pyr_frames_t *f = NULL;
    pyr_frames_options_t bad = o;
    bad.history = 0;
    CHECK_FAILS(pyr_frames_create(NX, NY, &bad, NULL, NULL, &f), PYR_ERR_CONFIG, "frames.history");
    bad = o;
    bad.border = 2;
    CHECK_FAILS(pyr_frames_create(NX, NY, &bad, NULL, NULL, &f), PYR_ERR_CONFIG, "frames.border");
    CHECK_FAILS(pyr_frames_create(20, NY, &o, NULL, NULL, &f), PYR_ERR_SIZE, "too small");
    if (pyr_gpu_count() == 0) {
        bad = o;
        bad.backend = PYR_BACKEND_CUDA;
        CHECK_FAILS(pyr_frames_create(NX, NY, &bad, NULL, NULL, &f), PYR_ERR_NODEVICE, "backend = cpu");
    }

    fs_stars(stars, 60, 4, NX - 8, 4, NY - 8, 200, 3000, 2);
    enum { T = 14 };
    static float seq[T][NX * NY];
    double truth[T][2];
    for (int t = 0; t < T; t++) {
        fs_jitter(t, 3, &truth[t][0], &truth[t][1]);
        star_field(seq[t], truth[t][0], truth[t][1], 3.0);
    }
    static collect_t c1, c2;
    int threads[2] = {1, 2};
    collect_t *cs[2] = {&c1, &c2};
    for (int k = 0; k < 2; k++) {
        o.threads = threads[k];
        CHECK_OK(pyr_frames_create(NX, NY, &o, collect, cs[k], &f));
        for (int t = 0; t < T && f; t++) CHECK_OK(pyr_frames_push(f, seq[t], PYR_FRAMES_F32, NULL));
        if (f) CHECK_OK(pyr_frames_finish(f));
        pyr_frames_destroy(&f);
    }
    CHECK(c1.n == T && c2.n == T, "frames delivered %d, %d", c1.n, c2.n);
    double se = 0;
    for (int t = 1; t < T; t++) se += pow(c1.dx[t] - truth[t][0], 2) + pow(c1.dy[t] - truth[t][1], 2);
    double rms = sqrt(se / (2 * (T - 1)));
    printf("star field (not periodic), jitter +-1.5 px: shift RMS error %.4f px\n", rms);
    CHECK(rms < 0.05, "shift RMS %.4f px", rms);
    CHECK(!memcmp(c1.res, c2.res, sizeof c1.res) && !memcmp(c1.dx, c2.dx, sizeof c1.dx), "1 and 2 threads differ");

    scale_sweep();
    masks_and_keys();

    /* identical frames: R is singular but for the eps term; no NaN (collect checks) */
    o.threads = 0;
    static collect_t c3;
    CHECK_OK(pyr_frames_create(NX, NY, &o, collect, &c3, &f));
    for (int t = 0; t < 9 && f; t++) CHECK_OK(pyr_frames_push(f, seq[0], PYR_FRAMES_F32, NULL));
    pyr_frames_stats_t st;
    if (f) pyr_frames_get_stats(f, &st);
    pyr_frames_destroy(&f);
    printf("identical frames: ill-conditioned in %lld frames, regularised %lld, reduced %lld, fallback %lld\n",
           (long long)st.ill_conditioned, (long long)st.regularised, (long long)st.reduced, (long long)st.fallback);
    CHECK(st.ill_conditioned + st.regularised + st.reduced + st.fallback > 0, "singular R was not reported");
    return check_report();
}
