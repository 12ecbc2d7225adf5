/* CPU vs CUDA on the same frames: shifts, weights, residuals and candidates
 * agree to the stated tolerance (README: shifts within 1e-3 px, residual
 * within 1e-4 of the frames' largest value, RMS within 1e-3 of the noise,
 * the same candidates).  The FFTs of FFTW and cuFFT round differently; every
 * pixel sum is per tile in double on both.  Also the same frames as float,
 * multiplied by 1e-20 .. 1e20 (reliability review M7): the GPU gives the
 * results of scale 1 (shifts within 1e-4 px, the same candidates, the
 * residual scaled, no NaN) and agrees with the CPU at each scale.  cuFFT is
 * loaded by the first GPU pipeline, not at start.  And the paths of real
 * camera frames (a bias, a sky that varies, a dead column given as a mask,
 * saturated hot pixels, badpixels = auto, non-periodic frames): the refined
 * shifts, the refill of masked pixels, the background term and the noise
 * model's free offset agree, and no candidate lies near a bad pixel on
 * either backend.  And variance planes as the noise model: the same
 * candidates and SNRs.  Exits 77 without a GPU.
 *   test_frames_gpu [--probe]   (--probe: only exit 0 with a GPU, 77 without) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frames_scene.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"

#define NX 300
#define NY 260
#define T 48

typedef struct {
    double dx[T], dy[T];
    float w[T][64];
    int used[T], flags[T], ncand[T];
    pyr_frames_candidate_t cand[T][64];
    float *res;
    int64_t nonfinite;
} collect_t;

static pyr_status_t collect(void *user, const pyr_frames_result_t *r)
{
    collect_t *c = user;
    int t = (int)r->frame;
    c->dx[t] = r->dx;
    c->dy[t] = r->dy;
    c->used[t] = r->history_used;
    c->flags[t] = r->flags;
    memcpy(c->w[t], r->weights, (size_t)r->history_used * sizeof(float));
    c->ncand[t] = r->ncandidates;
    if (r->ncandidates) memcpy(c->cand[t], r->candidates, (size_t)(r->ncandidates < 64 ? r->ncandidates : 64) * sizeof *r->candidates);
    memcpy(c->res + (size_t)t * NX * NY, r->residual, NX * NY * sizeof(float));
    for (size_t i = 0; i < (size_t)NX * NY; i++) c->nonfinite += !isfinite(r->residual[i]);
    return PYR_OK;
}

/* Whether a library whose file name contains `name` is mapped into this
 * process (-1: /proc/self/maps cannot be read). */
static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

/* the real-data options of the next runs: a static mask, a saturation level, badpixels */
static const uint8_t *run_mask;
static double run_saturation;
static int run_badpixels;
static const float *run_var; /* a variance plane for every frame (pyr_frames_set_variance) */

static void run(pyr_backend_kind_t b, pyr_frames_weights_t w, const void *seq, pyr_frames_dtype_t type, collect_t *c, double *secs)
{
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = b;
    o.weights = w;
    o.history = 12;
    o.saturation = run_saturation;
    o.badpixels = run_badpixels;
    pyr_frames_t *f = NULL;
    CHECK_OK(pyr_frames_create(NX, NY, &o, collect, c, &f));
    if (!f) return;
    if (run_mask) CHECK_OK(pyr_frames_set_mask(f, run_mask));
    if (run_var) CHECK_OK(pyr_frames_set_variance(f, run_var));
    size_t frame = (size_t)NX * NY * (type == PYR_FRAMES_F32 ? sizeof(float) : sizeof(uint16_t));
    for (int t = 0; t < T; t++) CHECK_OK(pyr_frames_push(f, (const char *)seq + (size_t)t * frame, type, NULL));
    CHECK_OK(pyr_frames_finish(f));
    pyr_frames_stats_t st;
    pyr_frames_get_stats(f, &st);
    *secs = st.seconds;
    pyr_frames_destroy(&f);
}

/* The frames as float times c: the GPU against its own run at scale 1 and
 * against the CPU at scale c. */
static void scales(const uint16_t *seq, double fmx)
{
    static collect_t one, gpu, cpu;
    size_t n = (size_t)T * NX * NY;
    float *f = malloc(n * sizeof *f);
    one.res = malloc(n * sizeof(float));
    gpu.res = malloc(n * sizeof(float));
    cpu.res = malloc(n * sizeof(float));
    double secs;
    for (size_t i = 0; i < n; i++) f[i] = seq[i];
    run(PYR_BACKEND_CUDA, PYR_FRAMES_ALIGN, f, PYR_FRAMES_F32, &one, &secs);
    const double cs[] = {1e-20, 1e-13, 1e16, 1e20};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        double c = cs[k];
        for (size_t i = 0; i < n; i++) f[i] = (float)((double)seq[i] * c);
        gpu.nonfinite = cpu.nonfinite = 0;
        run(PYR_BACKEND_CUDA, PYR_FRAMES_ALIGN, f, PYR_FRAMES_F32, &gpu, &secs);
        run(PYR_BACKEND_CPU, PYR_FRAMES_ALIGN, f, PYR_FRAMES_F32, &cpu, &secs);
        double ds1 = 0, dr1 = 0, dsc = 0, drc = 0;
        int same1 = 1, cand_cpu = 0, cand_gpu = 0, cand_match = 0;
        for (int t = 0; t < T; t++) {
            ds1 = fmax(ds1, fmax(fabs(gpu.dx[t] - one.dx[t]), fabs(gpu.dy[t] - one.dy[t])));
            dsc = fmax(dsc, fmax(fabs(gpu.dx[t] - cpu.dx[t]), fabs(gpu.dy[t] - cpu.dy[t])));
            for (size_t i = (size_t)t * NX * NY; i < (size_t)(t + 1) * NX * NY; i++) {
                dr1 = fmax(dr1, fabs(gpu.res[i] / c - one.res[i]));
                drc = fmax(drc, fabs(gpu.res[i] - cpu.res[i]) / c);
            }
            same1 &= gpu.ncand[t] == one.ncand[t];
            for (int i = 0; i < gpu.ncand[t] && i < 64 && gpu.ncand[t] == one.ncand[t]; i++)
                same1 &= fabs(gpu.cand[t][i].x - one.cand[t][i].x) < 1e-3 && fabs(gpu.cand[t][i].y - one.cand[t][i].y) < 1e-3 &&
                         fabs(gpu.cand[t][i].flux / c - one.cand[t][i].flux) <= 1e-3 * fabs(one.cand[t][i].flux);
            cand_cpu += cpu.ncand[t];
            cand_gpu += gpu.ncand[t];
            for (int i = 0; i < cpu.ncand[t] && i < 64; i++)
                for (int j = 0; j < gpu.ncand[t] && j < 64; j++)
                    if (fabs(cpu.cand[t][i].x - gpu.cand[t][j].x) < 0.05 && fabs(cpu.cand[t][i].y - gpu.cand[t][j].y) < 0.05) {
                        cand_match++;
                        break;
                    }
        }
        printf("float frames x %g: GPU vs GPU at scale 1: max |shift diff| %.2e px, max |residual / c diff| %.3g (%.2e of "
               "the frames' max), candidates %s; GPU vs CPU: max |shift diff| %.2e px, max |residual diff| / c %.3g, "
               "candidates CPU %d GPU %d matched %d; non-finite values GPU %lld CPU %lld\n",
               c, ds1, dr1, dr1 / fmx, same1 ? "the same" : "DIFFERENT", dsc, drc, cand_cpu, cand_gpu, cand_match,
               (long long)gpu.nonfinite, (long long)cpu.nonfinite);
        CHECK(gpu.nonfinite == 0 && cpu.nonfinite == 0, "x %g: non-finite residual values (GPU %lld, CPU %lld)", c,
              (long long)gpu.nonfinite, (long long)cpu.nonfinite);
        CHECK(ds1 < 1e-4, "x %g: GPU shifts differ from scale 1 by %.3g px", c, ds1);
        CHECK(dr1 < 1e-4 * fmx, "x %g: GPU residual / c differs from scale 1 by %.3g (> 1e-4 of %.0f)", c, dr1, fmx);
        CHECK(same1, "x %g: GPU candidates differ from scale 1", c);
        CHECK(dsc < 1e-3, "x %g: GPU and CPU shifts differ by %.3g px", c, dsc);
        CHECK(drc < 1e-4 * fmx, "x %g: GPU and CPU residuals differ by %.3g (> 1e-4 of %.0f), over c", c, drc, fmx);
        CHECK(abs(cand_cpu - cand_gpu) <= 1 + cand_cpu / 50 && cand_match >= cand_cpu - 1 - cand_cpu / 50,
              "x %g: candidates CPU %d GPU %d matched %d", c, cand_cpu, cand_gpu, cand_match);
    }
    /* a frame 1e60 times the others: refused, as on the CPU, rather than NaN */
    for (size_t i = 0; i < n; i++) f[i] = (float)((double)seq[i] * (i / ((size_t)NX * NY) == 2 ? 1e30 : 1e-30));
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.history = 12;
    pyr_frames_t *fr = NULL;
    gpu.nonfinite = 0;
    CHECK_OK(pyr_frames_create(NX, NY, &o, collect, &gpu, &fr));
    pyr_status_t st = PYR_OK;
    for (int t = 0; t < T && fr && st == PYR_OK; t++) st = pyr_frames_push(fr, f + (size_t)t * NX * NY, PYR_FRAMES_F32, NULL);
    if (fr && st == PYR_OK) st = pyr_frames_finish(fr);
    pyr_frames_destroy(&fr);
    printf("a frame 1e60 times the first -> %s\n", pyr_last_error());
    CHECK(st == PYR_ERR_NUMERIC && strstr(pyr_last_error(), "frame 2:"), "a frame off the sequence's scale: %s (%s)",
          pyr_status_name(st), pyr_last_error());
    CHECK(gpu.nonfinite == 0, "%lld non-finite residual values delivered", (long long)gpu.nonfinite);
    free(f);
    free(one.res);
    free(gpu.res);
    free(cpu.res);
}

/* The frames with a bias of 2000, a sky gradient that turns, a dead column
 * (x = 150, a mask), hot pixels above the saturation level (and found by
 * badpixels = auto): CPU and GPU agree, and neither reports a candidate near
 * a bad pixel. */
static void real_paths(const uint16_t *seq)
{
    size_t n = (size_t)T * NX * NY;
    uint16_t *s2 = malloc(n * sizeof *s2);
    static uint8_t mask[NX * NY];
    int hot[10][2];
    for (int k = 0; k < 10; k++) {
        hot[k][0] = 20 + (int)(urand() * (NX - 40));
        hot[k][1] = 20 + (int)(urand() * (NY - 40));
    }
    for (int y = 0; y < NY; y++) mask[y * NX + 150] = 1;
    double fmx = 0;
    for (int t = 0; t < T; t++) {
        double ph = 6.283185307179586 * t / T;
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                size_t i = (size_t)t * NX * NY + (size_t)y * NX + x;
                double sky = 60 * cos(ph) * (x - NX / 2.0) / NX + 60 * sin(ph) * (y - NY / 2.0) / NY;
                double v = x == 150 ? 0 : seq[i] + 2000 + sky;
                s2[i] = (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v + 0.5);
            }
        for (int k = 0; k < 10; k++) s2[(size_t)t * NX * NY + (size_t)hot[k][1] * NX + hot[k][0]] = 60000;
    }
    for (size_t i = 0; i < n; i++) fmx = s2[i] < 60000 && s2[i] > fmx ? s2[i] : fmx;
    static collect_t a, b;
    a.res = malloc(n * sizeof(float));
    b.res = malloc(n * sizeof(float));
    double ta, tb;
    run_mask = mask;
    run_saturation = 50000;
    run_badpixels = 1;
    run(PYR_BACKEND_CPU, PYR_FRAMES_ALIGN, s2, PYR_FRAMES_U16, &a, &ta);
    run(PYR_BACKEND_CUDA, PYR_FRAMES_ALIGN, s2, PYR_FRAMES_U16, &b, &tb);
    run_mask = NULL;
    run_saturation = 0;
    run_badpixels = 0;
    double dshift = 0, dres = 0;
    int cand_cpu = 0, cand_gpu = 0, cand_match = 0, near = 0;
    for (int t = 0; t < T; t++) {
        dshift = fmax(dshift, fmax(fabs(a.dx[t] - b.dx[t]), fabs(a.dy[t] - b.dy[t])));
        for (size_t i = (size_t)t * NX * NY; i < (size_t)(t + 1) * NX * NY; i++) dres = fmax(dres, fabs(a.res[i] - b.res[i]));
        cand_cpu += a.ncand[t];
        cand_gpu += b.ncand[t];
        collect_t *cs[2] = {&a, &b};
        for (int q = 0; q < 2; q++)
            for (int i = 0; i < cs[q]->ncand[t] && i < 64; i++) {
                double x = cs[q]->cand[t][i].x + cs[q]->dx[t], y = cs[q]->cand[t][i].y + cs[q]->dy[t];
                int bad = fabs(x - 150) < 3;
                for (int k = 0; k < 10; k++) bad |= fabs(x - hot[k][0]) < 3 && fabs(y - hot[k][1]) < 3;
                near += bad;
            }
        for (int i = 0; i < a.ncand[t] && i < 64; i++)
            for (int j = 0; j < b.ncand[t] && j < 64; j++)
                if (fabs(a.cand[t][i].x - b.cand[t][j].x) < 0.05 && fabs(a.cand[t][i].y - b.cand[t][j].y) < 0.05) {
                    cand_match++;
                    break;
                }
    }
    printf("real-data paths (bias, varying sky, masked column, saturated hot pixels, badpixels = auto): max |shift diff| "
           "%.2e px, max |residual diff| %.3g (%.2e of the frames' max), candidates CPU %d GPU %d matched %d, %d near bad "
           "pixels, non-finite CPU %lld GPU %lld\n",
           dshift, dres, dres / fmx, cand_cpu, cand_gpu, cand_match, near, (long long)a.nonfinite, (long long)b.nonfinite);
    CHECK(dshift < 1e-3, "real-data paths: shifts differ by %.3g px", dshift);
    CHECK(dres < 1e-4 * fmx, "real-data paths: residuals differ by %.3g (> 1e-4 of %.0f)", dres, fmx);
    CHECK(abs(cand_cpu - cand_gpu) <= 1 + cand_cpu / 50 && cand_match >= cand_cpu - 1 - cand_cpu / 50,
          "real-data paths: candidates CPU %d GPU %d matched %d", cand_cpu, cand_gpu, cand_match);
    CHECK(cand_cpu > 0 && near == 0, "real-data paths: %d candidates (the mover), %d near bad pixels", cand_cpu, near);
    CHECK(a.nonfinite == 0 && b.nonfinite == 0, "real-data paths: non-finite residual values");
    free(a.res);
    free(b.res);
    free(s2);
}

/* Variance planes as the noise model (a plane whose right half is twice
 * the left's, and a few pixels of no variance, masked): CPU and GPU agree on
 * shifts, residuals and candidates, SNRs included. */
static void variance_paths(const uint16_t *seq, double fmx)
{
    size_t n = (size_t)T * NX * NY;
    static float var[NX * NY];
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) var[y * NX + x] = (float)((seq[(size_t)y * NX + x] + 25.0) * (x < NX / 2 ? 1 : 2));
    var[100 * NX + 100] = 0;
    var[120 * NX + 200] = NAN;
    static collect_t a, b;
    a.res = malloc(n * sizeof(float));
    b.res = malloc(n * sizeof(float));
    double ta, tb;
    run_var = var;
    run(PYR_BACKEND_CPU, PYR_FRAMES_ALIGN, seq, PYR_FRAMES_U16, &a, &ta);
    run(PYR_BACKEND_CUDA, PYR_FRAMES_ALIGN, seq, PYR_FRAMES_U16, &b, &tb);
    run_var = NULL;
    double dshift = 0, dres = 0, dsnr = 0;
    int cand_cpu = 0, cand_gpu = 0, cand_match = 0;
    for (int t = 0; t < T; t++) {
        dshift = fmax(dshift, fmax(fabs(a.dx[t] - b.dx[t]), fabs(a.dy[t] - b.dy[t])));
        for (size_t i = (size_t)t * NX * NY; i < (size_t)(t + 1) * NX * NY; i++) dres = fmax(dres, fabs(a.res[i] - b.res[i]));
        cand_cpu += a.ncand[t];
        cand_gpu += b.ncand[t];
        for (int i = 0; i < a.ncand[t] && i < 64; i++)
            for (int j = 0; j < b.ncand[t] && j < 64; j++)
                if (fabs(a.cand[t][i].x - b.cand[t][j].x) < 0.05 && fabs(a.cand[t][i].y - b.cand[t][j].y) < 0.05) {
                    cand_match++;
                    dsnr = fmax(dsnr, fabs(a.cand[t][i].snr - b.cand[t][j].snr) / a.cand[t][i].snr);
                    break;
                }
    }
    printf("variance planes: max |shift diff| %.2e px, max |residual diff| %.3g (%.2e of the frames' max), candidates CPU %d "
           "GPU %d matched %d, SNRs within %.2e\n",
           dshift, dres, dres / fmx, cand_cpu, cand_gpu, cand_match, dsnr);
    CHECK(dshift < 1e-3, "variance planes: shifts differ by %.3g px", dshift);
    CHECK(dres < 1e-4 * fmx, "variance planes: residuals differ by %.3g (> 1e-4 of %.0f)", dres, fmx);
    CHECK(cand_cpu > 0 && abs(cand_cpu - cand_gpu) <= 1 + cand_cpu / 50 && cand_match >= cand_cpu - 1 - cand_cpu / 50,
          "variance planes: candidates CPU %d GPU %d matched %d", cand_cpu, cand_gpu, cand_match);
    CHECK(dsnr < 1e-3, "variance planes: SNRs differ by %.3g of the CPU's", dsnr);
    free(a.res);
    free(b.res);
}

int main(int argc, char **argv)
{
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    if (argc > 1 && !strcmp(argv[1], "--probe")) return 0;
    /* a star field with a slow mover, 16-bit counts, jitter +-2 px */
    static double stars[150][3];
    fs_stars(stars, 150, 0, NX, 0, NY, 100, 5000, 3);
    uint16_t *seq = malloc((size_t)T * NX * NY * sizeof *seq);
    double *val = malloc((size_t)NX * NY * sizeof *val), sx, sy;
    for (int t = 0; t < T; t++) {
        fs_mover_frame(val, NX, NY, stars, 150, t, 120, 100, &sx, &sy);
        for (size_t i = 0; i < (size_t)NX * NY; i++) seq[(size_t)t * NX * NY + i] = fs_u16(val[i]);
    }
    free(val);
    double fmx = 0;
    for (size_t i = 0; i < (size_t)T * NX * NY; i++) fmx = seq[i] > fmx ? seq[i] : fmx;
    pyr_frames_weights_t modes[2] = {PYR_FRAMES_ALIGN, PYR_FRAMES_POLY};
    for (int m = 0; m < 2; m++) {
        static collect_t a, b;
        a.res = malloc((size_t)T * NX * NY * sizeof(float));
        b.res = malloc((size_t)T * NX * NY * sizeof(float));
        double ta = 0, tb = 0;
        run(PYR_BACKEND_CPU, modes[m], seq, PYR_FRAMES_U16, &a, &ta);
        /* reliability review L9: cuFFT is loaded by the first GPU pipeline, not at start */
        if (m == 0) CHECK(mapped("/libcufft.so") != 1, "cuFFT was loaded before a GPU frames pipeline was made");
        run(PYR_BACKEND_CUDA, modes[m], seq, PYR_FRAMES_U16, &b, &tb);
        if (m == 0) CHECK(mapped("/libcufft.so") != 0, "a GPU frames pipeline ran without cuFFT loaded");
        double dshift = 0, dres = 0, sres = 0, snoise = 0, dw = 0;
        int cand_cpu = 0, cand_gpu = 0, cand_match = 0;
        for (int t = 0; t < T; t++) {
            dshift = fmax(dshift, fmax(fabs(a.dx[t] - b.dx[t]), fabs(a.dy[t] - b.dy[t])));
            CHECK(a.used[t] == b.used[t], "frame %d: history used %d vs %d", t, a.used[t], b.used[t]);
            for (int k = 0; k < a.used[t] && k < b.used[t]; k++) dw = fmax(dw, fabs(a.w[t][k] - b.w[t][k]));
            for (size_t i = 0; i < (size_t)NX * NY; i++) {
                double d = fabs(a.res[(size_t)t * NX * NY + i] - b.res[(size_t)t * NX * NY + i]);
                dres = fmax(dres, d);
                sres += d * d;
                snoise += (double)a.res[(size_t)t * NX * NY + i] * a.res[(size_t)t * NX * NY + i];
            }
            cand_cpu += a.ncand[t];
            cand_gpu += b.ncand[t];
            for (int i = 0; i < a.ncand[t] && i < 64; i++)
                for (int j = 0; j < b.ncand[t] && j < 64; j++)
                    if (fabs(a.cand[t][i].x - b.cand[t][j].x) < 0.05 && fabs(a.cand[t][i].y - b.cand[t][j].y) < 0.05) {
                        cand_match++;
                        break;
                    }
        }
        double rms_rel = sqrt(sres / (snoise > 0 ? snoise : 1));
        printf("%s: CPU %.2f ms/frame, GPU %.3f ms/frame (small frames, latency-bound); max |shift diff| %.2e px, "
               "max |weight diff| %.2e, max |residual diff| %.3g (%.2e of the frames' max), RMS diff / residual RMS %.2e, "
               "candidates CPU %d GPU %d matched %d\n",
               pyr_frames_weights_name(modes[m]), 1e3 * ta / T, 1e3 * tb / T, dshift, dw, dres, dres / fmx, rms_rel,
               cand_cpu, cand_gpu, cand_match);
        CHECK(dshift < 1e-3, "shifts differ by %.3g px", dshift);
        CHECK(dres < 1e-4 * fmx, "residuals differ by %.3g (> 1e-4 of %.0f)", dres, fmx);
        CHECK(rms_rel < 1e-3, "residual RMS difference %.3g of the residual", rms_rel);
        CHECK(abs(cand_cpu - cand_gpu) <= 1 + cand_cpu / 50 && cand_match >= cand_cpu - 1 - cand_cpu / 50,
              "candidates CPU %d GPU %d matched %d", cand_cpu, cand_gpu, cand_match);
        free(a.res);
        free(b.res);
    }
    scales(seq, fmx);
    real_paths(seq);
    variance_paths(seq, fmx);
    free(seq);
    return check_report();
}
