/* Frames: variance planes as the detection's noise model through the C API
 * (pyr_frames_set_variance, frames.noise).  On a star field whose right half
 * is four times as noisy as its left, with its true variance given:
 *  - the key noise = auto | model | variance, and its refusal of others;
 *  - noise = variance without a plane refuses the frame (and takes the next
 *    one that has it), and a sequence may not switch between planes and none;
 *  - noise = model ignores the planes: the same residuals as without them;
 *  - with the planes the fitted factor a is about 1 plus the history's share
 *    and the SNR map's RMS is 1 in both halves, where the single model's is
 *    far from 1 in each (the matched filter's noise is known per pixel);
 *  - the same SNR maps when the frames are multiplied by 1e10 and their
 *    variance by 1e20 (the planes are taken in the sequence's unit);
 *  - pixels of a variance that is not positive and finite are masked. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/error.h"
#include "frames_scene.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"

#define NX 128
#define NY 112
#define T 16
#define NOISE_L 4.0
#define NOISE_R 16.0

static double stars[80][3];
static float seq[T][NX * NY], var[NX * NY];

static void make(void)
{
    fs_stars(stars, 80, 4, NX - 8, 4, NY - 8, 300, 4000, 2);
    for (int i = 0; i < NX * NY; i++) var[i] = (float)(i % NX < NX / 2 ? NOISE_L * NOISE_L : NOISE_R * NOISE_R);
    static double v[NX * NY];
    for (int t = 0; t < T; t++) {
        double sx, sy;
        fs_jitter(t, 3, &sx, &sy);
        fs_sky(v, NX, NY, 100, stars, 80, sx, sy, 1.3, 0);
        for (int i = 0; i < NX * NY; i++) seq[t][i] = (float)(v[i] + sqrt(var[i]) * gauss());
    }
}

typedef struct {
    int n;
    double noise_a;      /* the last frame's */
    double zz[2], nz[2]; /* sum of z^2 and count per half, over the frames after the warm-up */
    float res[T][NX * NY];
    int64_t masked;
} run_t;

static pyr_frames_t *cur;
static float snr_map[NX * NY];

static pyr_status_t sink(void *user, const pyr_frames_result_t *r)
{
    run_t *u = user;
    u->n++;
    u->noise_a = r->noise_a;
    u->masked += r->masked;
    memcpy(u->res[r->frame], r->residual, sizeof u->res[0]);
    return PYR_OK;
}

/* One run: frames times scale, the planes (var times scale^2) per frame when
 * with_var; the SNR of every pixel from the residual and the noise model is
 * not handed out, so the z statistics come from the maximum-SNR map of the
 * last frame alone (a run of one detecting frame: warmup = T - 2). */
static pyr_status_t run(const pyr_frames_options_t *o, int with_var, double scale, const float *plane, run_t *u)
{
    memset(u, 0, sizeof *u);
    static float f[NX * NY], v[NX * NY];
    pyr_status_t st = pyr_frames_create(NX, NY, o, sink, u, &cur);
    for (int t = 0; t < T && st == PYR_OK; t++) {
        for (int i = 0; i < NX * NY; i++) {
            f[i] = (float)(seq[t][i] * scale);
            v[i] = (float)(plane[i] * scale * scale);
        }
        if (with_var) st = pyr_frames_set_variance(cur, v);
        if (st == PYR_OK) st = pyr_frames_push(cur, f, PYR_FRAMES_F32, NULL);
    }
    if (st == PYR_OK) st = pyr_frames_finish(cur);
    if (st == PYR_OK) st = pyr_frames_max_snr(cur, snr_map);
    pyr_frames_destroy(&cur);
    return st;
}

/* RMS of the last frame's SNR over each half's interior (the map of a run
 * whose only detecting frame is the last: its SNR, positive and negative
 * peaks alike as |z| is not kept, so the RMS of max(z, 0) * sqrt(2)). */
static void half_rms(const pyr_frames_options_t *o, double rms[2])
{
    double s[2] = {0, 0}, n[2] = {0, 0};
    int b = o->border + 2;
    for (int y = b; y < NY - b; y++)
        for (int x = b; x < NX - b; x++) {
            if (x > NX / 2 - 4 && x < NX / 2 + 4) continue; /* the step between the halves */
            int h = x >= NX / 2;
            s[h] += 2.0 * (double)snr_map[y * NX + x] * snr_map[y * NX + x];
            n[h] += 1;
        }
    for (int h = 0; h < 2; h++) rms[h] = sqrt(s[h] / n[h]);
}

int main(void)
{
    make();
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    CHECK(o.noise == PYR_FRAMES_NOISE_AUTO, "the default noise is %d, not auto", (int)o.noise);
    o.backend = PYR_BACKEND_CPU;
    o.border = 10;
    o.history = 8;
    o.warmup = T - 2; /* the maximum-SNR map is the last frame's */
    o.threshold = 1000;
    o.clean = 0;

    /* the key */
    pyr_frames_options_t *ko = NULL;
    CHECK_OK(pyr_frames_options_create(&ko));
    CHECK_OK(pyr_frames_options_set(ko, "noise", "variance"));
    CHECK(ko->noise == PYR_FRAMES_NOISE_VARIANCE, "noise = variance gives %d", (int)ko->noise);
    CHECK_OK(pyr_frames_options_set(ko, "frames.noise", "model"));
    CHECK(ko->noise == PYR_FRAMES_NOISE_MODEL, "noise = model gives %d", (int)ko->noise);
    CHECK_FAILS(pyr_frames_options_set(ko, "noise", "varaince"), PYR_ERR_CONFIG, "auto | model | variance; did you mean \"variance\"");
    pyr_frames_options_destroy(&ko);

    /* noise = variance needs a plane per frame; a frame refused for it is not taken */
    pyr_frames_options_t ov = o;
    ov.noise = PYR_FRAMES_NOISE_VARIANCE;
    run_t *u = calloc(1, sizeof *u), *w = calloc(1, sizeof *w);
    CHECK_OK(pyr_frames_create(NX, NY, &ov, sink, u, &cur));
    CHECK_FAILS(pyr_frames_push(cur, seq[0], PYR_FRAMES_F32, NULL), PYR_ERR_ARG, "no variance plane was given");
    CHECK_OK(pyr_frames_set_variance(cur, var));
    CHECK_OK(pyr_frames_push(cur, seq[0], PYR_FRAMES_F32, NULL));
    CHECK_OK(pyr_frames_push(cur, seq[1], PYR_FRAMES_F32, NULL));
    CHECK_OK(pyr_frames_set_variance(cur, NULL));
    CHECK_FAILS(pyr_frames_push(cur, seq[2], PYR_FRAMES_F32, NULL), PYR_ERR_ARG, "no variance plane");
    CHECK_OK(pyr_frames_finish(cur));
    CHECK(u->n == 2, "%d frames delivered, 2 taken", u->n);
    pyr_frames_destroy(&cur);
    /* auto: the first frame decides, later frames follow it */
    CHECK_OK(pyr_frames_create(NX, NY, &o, sink, u, &cur));
    CHECK_OK(pyr_frames_push(cur, seq[0], PYR_FRAMES_F32, NULL));
    CHECK_OK(pyr_frames_set_variance(cur, var));
    CHECK_FAILS(pyr_frames_push(cur, seq[1], PYR_FRAMES_F32, NULL), PYR_ERR_ARG, "the frames before it had none");
    pyr_frames_destroy(&cur);
    CHECK_OK(pyr_frames_create(NX, NY, &o, sink, u, &cur));
    CHECK_OK(pyr_frames_set_variance(cur, var));
    CHECK_OK(pyr_frames_push(cur, seq[0], PYR_FRAMES_F32, NULL));
    CHECK_OK(pyr_frames_set_variance(cur, NULL));
    CHECK_FAILS(pyr_frames_push(cur, seq[1], PYR_FRAMES_F32, NULL), PYR_ERR_ARG, "had one");
    pyr_frames_destroy(&cur);

    /* noise = model ignores the planes */
    pyr_frames_options_t om = o;
    om.noise = PYR_FRAMES_NOISE_MODEL;
    double rms_model[2], rms_var[2], rms_scaled[2];
    CHECK_OK(run(&om, 0, 1, var, w));
    half_rms(&o, rms_model);
    CHECK_OK(run(&om, 1, 1, var, u));
    CHECK(u->n == T && !memcmp(u->res, w->res, sizeof u->res), "noise = model: the planes changed the residuals");

    /* the planes: z of unit variance in both halves */
    CHECK_OK(run(&o, 1, 1, var, u));
    half_rms(&o, rms_var);
    double a = u->noise_a;
    static float scaled_map[NX * NY];
    memcpy(scaled_map, snr_map, sizeof scaled_map);
    CHECK_OK(run(&o, 1, 1e10, var, w));
    half_rms(&o, rms_scaled);
    double maxd = 0;
    for (int i = 0; i < NX * NY; i++) maxd = fmax(maxd, fabs((double)snr_map[i] - scaled_map[i]));
    printf("SNR RMS (left, right halves, noise %g and %g): single model %.3f, %.3f; variance planes %.3f, %.3f (a = %.3f); "
           "frames x 1e10: %.3f, %.3f (a = %.3f), largest SNR difference %.2g\n",
           NOISE_L, NOISE_R, rms_model[0], rms_model[1], rms_var[0], rms_var[1], a, rms_scaled[0], rms_scaled[1], w->noise_a, maxd);
    for (int h = 0; h < 2; h++)
        CHECK(fabs(rms_var[h] - 1) < 0.12, "variance planes: the SNR's RMS in half %d is %.3f, not 1", h, rms_var[h]);
    CHECK(rms_model[0] < 0.75 && rms_model[1] > 1.2, "single model: the SNR's RMS %.3f, %.3f (the scene shows no defect)", rms_model[0],
          rms_model[1]);
    CHECK(a > 0.95 && a < 1.4, "with the planes a = %.3f: 1 plus the history's share", a);
    CHECK(fabs(w->noise_a - a) < 1e-3 * a && maxd < 1e-3, "x 1e10: a %.6f against %.6f, SNR differs by %.3g", w->noise_a, a, maxd);

    /* pixels of no variance are masked */
    static float holes[NX * NY];
    memcpy(holes, var, sizeof holes);
    holes[50 * NX + 40] = 0;
    holes[60 * NX + 70] = -1;
    holes[70 * NX + 30] = NAN;
    holes[80 * NX + 90] = INFINITY;
    CHECK_OK(run(&o, 1, 1, holes, u));
    CHECK(u->masked == 4 * T, "%lld pixels masked, 4 per frame", (long long)u->masked);
    free(u);
    free(w);
    return check_report();
}
