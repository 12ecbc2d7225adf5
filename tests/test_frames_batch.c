/* Frames on the GPU in batches against the same GPU one frame at a time
 * (fr_cuda_batch_cap(1)): the batched shift stage (one transform for the
 * batch, the frame in blockIdx.y) gives every frame the one-frame path's
 * shifts, weights, residuals and candidates, for frame counts that are not
 * multiples of the batch (1, B - 1, B + 1, 2B + 3, with B = 8 and the
 * pipeline's own size), with a bias, a masked column, saturated hot
 * pixels and badpixels = auto (float frames with masked pixels), with
 * 16-bit frames and poly weights, and with float frames holding NaN pixels,
 * a rolling reference (a batch ends at each new reference) and plain
 * weights.  The batched transforms may round differently from the single
 * ones: the check is the GPU/CPU tolerance of docs/frames.md#backends, and
 * the output says whether every value came out bit for bit the same.  The
 * frames waiting in a batch count for pyr_frames_max_snr.  Exits 77 without
 * a GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frames_scene.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"
#include "pipelines/frames/frames_internal.h"

#define NX 160
#define NY 128
#define TMAX 67 /* 2B + 3 for the pipeline's own B at this size (32) */
#define KEEP 64 /* candidates kept per frame for the comparison */

typedef struct {
    double dx[TMAX], dy[TMAX];
    float w[TMAX][64];
    int used[TMAX], flags[TMAX], ncand[TMAX], delivered;
    pyr_frames_candidate_t cand[TMAX][KEEP];
    float *res;
} collect_t;

static pyr_status_t collect(void *user, const pyr_frames_result_t *r)
{
    collect_t *c = user;
    int t = (int)r->frame;
    if (t < 0 || t >= TMAX) return PYR_OK;
    c->delivered++;
    c->dx[t] = r->dx;
    c->dy[t] = r->dy;
    c->used[t] = r->history_used;
    c->flags[t] = r->flags;
    memcpy(c->w[t], r->weights, (size_t)r->history_used * sizeof(float));
    c->ncand[t] = r->ncandidates;
    if (r->ncandidates) memcpy(c->cand[t], r->candidates, (size_t)(r->ncandidates < KEEP ? r->ncandidates : KEEP) * sizeof *r->candidates);
    memcpy(c->res + (size_t)t * NX * NY, r->residual, NX * NY * sizeof(float));
    return PYR_OK;
}

typedef struct {
    const char *name;
    pyr_frames_dtype_t type;
    pyr_frames_weights_t weights;
    int rolling, masked;
} config_t;

/* The first n frames of seq through the GPU with batches of at most
 * `batch` frames (0: the pipeline's own size); the SNR map after the last
 * push (before finish) into maxz. */
static void run(const config_t *cf, const void *seq, const uint8_t *mask, int n, int batch, collect_t *c, float *maxz)
{
    fr_cuda_batch_cap(batch);
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.history = 12;
    o.weights = cf->weights;
    o.border = 12;
    o.warmup = 2;
    if (cf->rolling) {
        o.reference = PYR_FRAMES_REF_ROLLING;
        o.reference_every = 5;
    }
    if (cf->masked) {
        o.saturation = 50000;
        o.badpixels = 1;
    }
    pyr_frames_t *f = NULL;
    memset(c->ncand, 0, sizeof c->ncand);
    c->delivered = 0;
    CHECK_OK(pyr_frames_create(NX, NY, &o, collect, c, &f));
    fr_cuda_batch_cap(0);
    if (!f) return;
    if (cf->masked) CHECK_OK(pyr_frames_set_mask(f, mask));
    size_t fb = (size_t)NX * NY * (cf->type == PYR_FRAMES_F32 ? sizeof(float) : sizeof(uint16_t));
    for (int t = 0; t < n; t++) CHECK_OK(pyr_frames_push(f, (const char *)seq + (size_t)t * fb, cf->type, NULL));
    CHECK_OK(pyr_frames_max_snr(f, maxz));
    CHECK_OK(pyr_frames_finish(f));
    CHECK(c->delivered == n, "%s, %d frames, batch %d: %d frames delivered", cf->name, n, batch, c->delivered);
    pyr_frames_destroy(&f);
}

int main(void)
{
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    /* a star field with a slow mover, jitter +-2 px, a bias of 2000, a dead
     * column (masked) and hot pixels above the saturation level */
    static double stars[80][3];
    fs_stars(stars, 80, 0, NX, 0, NY, 100, 5000, 3);
    size_t np = (size_t)NX * NY, n = (size_t)TMAX * np;
    uint16_t *u = malloc(n * sizeof *u);
    float *f = malloc(n * sizeof *f);
    static uint8_t mask[NX * NY];
    for (int y = 0; y < NY; y++) mask[y * NX + 70] = 1;
    int hot[6][2];
    for (int k = 0; k < 6; k++) {
        hot[k][0] = 15 + (int)(urand() * (NX - 30));
        hot[k][1] = 15 + (int)(urand() * (NY - 30));
    }
    double fmx = 0, *val = malloc(np * sizeof *val), sx, sy;
    for (int t = 0; t < TMAX; t++) {
        fs_mover_frame(val, NX, NY, stars, 80, t, 60, 50, &sx, &sy);
        for (size_t p = 0; p < np; p++) {
            const double v = p % NX == 70 ? 0 : val[p] + 2000;
            u[(size_t)t * np + p] = fs_u16(v);
            f[(size_t)t * np + p] = (float)v;
            fmx = fmax(fmx, v);
        }
        for (int k = 0; k < 6; k++) u[(size_t)t * np + (size_t)hot[k][1] * NX + hot[k][0]] = 60000;
        /* float frames: a few pixels NaN (masked) in every third frame */
        if (t % 3 == 1)
            for (int k = 0; k < 5; k++) f[(size_t)t * np + (size_t)(20 + 17 * k) * NX + 30 + 19 * k] = NAN;
    }
    const config_t cfs[] = {
        {"bias, masked column, saturated hot pixels, badpixels = auto", PYR_FRAMES_U16, PYR_FRAMES_ALIGN, 0, 1},
        {"16-bit frames, poly weights", PYR_FRAMES_U16, PYR_FRAMES_POLY, 0, 0},
        {"float frames with NaN pixels, rolling reference, plain weights", PYR_FRAMES_F32, PYR_FRAMES_PLAIN, 1, 0},
    };
    static collect_t one, bat;
    one.res = malloc(n * sizeof(float));
    bat.res = malloc(n * sizeof(float));
    float *z1 = malloc(np * sizeof(float)), *zb = malloc(np * sizeof(float));
    for (size_t q = 0; q < sizeof cfs / sizeof cfs[0]; q++) {
        const config_t *cf = &cfs[q];
        const void *seq = cf->type == PYR_FRAMES_F32 ? (const void *)f : (const void *)u;
        const int sizes[2] = {8, 0};
        for (int si = 0; si < 2; si++) {
            int B = sizes[si] ? sizes[si] : 32;
            const int counts[4] = {1, B - 1, B + 1, 2 * B + 3};
            for (int ci = 0; ci < 4; ci++) {
                int cnt = counts[ci];
                run(cf, seq, mask, cnt, 1, &one, z1);
                run(cf, seq, mask, cnt, sizes[si], &bat, zb);
                double ds = 0, dw = 0, dr = 0, dz = 0;
                int same_used = 1, cand_one = 0, cand_bat = 0, cand_kept = 0, cand_match = 0, bits = 1;
                for (int t = 0; t < cnt; t++) {
                    ds = fmax(ds, fmax(fabs(one.dx[t] - bat.dx[t]), fabs(one.dy[t] - bat.dy[t])));
                    bits &= one.dx[t] == bat.dx[t] && one.dy[t] == bat.dy[t] && one.flags[t] == bat.flags[t];
                    same_used &= one.used[t] == bat.used[t];
                    for (int k = 0; k < one.used[t] && k < bat.used[t]; k++) {
                        dw = fmax(dw, fabs(one.w[t][k] - bat.w[t][k]));
                        bits &= one.w[t][k] == bat.w[t][k];
                    }
                    for (size_t i = (size_t)t * np; i < (size_t)(t + 1) * np; i++) {
                        dr = fmax(dr, fabs(one.res[i] - bat.res[i]));
                        bits &= memcmp(&one.res[i], &bat.res[i], sizeof(float)) == 0;
                    }
                    cand_one += one.ncand[t];
                    cand_bat += bat.ncand[t];
                    cand_kept += one.ncand[t] < KEEP ? one.ncand[t] : KEEP;
                    bits &= one.ncand[t] == bat.ncand[t];
                    for (int i = 0; i < one.ncand[t] && i < KEEP; i++)
                        for (int j = 0; j < bat.ncand[t] && j < KEEP; j++)
                            if (fabs(one.cand[t][i].x - bat.cand[t][j].x) < 0.05 && fabs(one.cand[t][i].y - bat.cand[t][j].y) < 0.05) {
                                cand_match++;
                                break;
                            }
                }
                for (size_t i = 0; i < np; i++) {
                    dz = fmax(dz, fabs(z1[i] - zb[i]));
                    bits &= z1[i] == zb[i];
                }
                printf("%s, batch %s%d, %d frames: max |shift diff| %.2e px, max |weight diff| %.2e, max |residual diff| %.3g "
                       "(%.2e of the frames' max), max |SNR map diff| %.2e, candidates %d / %d matched %d: %s\n",
                       cf->name, sizes[si] ? "" : "(own) ", B, cnt, ds, dw, dr, dr / fmx, dz, cand_one, cand_bat, cand_match,
                       bits ? "bit for bit the same" : "within the tolerance only");
                CHECK(same_used, "%s, %d frames: the history used differs", cf->name, cnt);
                CHECK(ds < 1e-3, "%s, %d frames: shifts differ by %.3g px", cf->name, cnt, ds);
                CHECK(dr < 1e-4 * fmx, "%s, %d frames: residuals differ by %.3g (> 1e-4 of %.0f)", cf->name, cnt, dr, fmx);
                CHECK(dz < 1e-3 * 5, "%s, %d frames: SNR maps differ by %.3g", cf->name, cnt, dz);
                /* (the first KEEP of each frame's are compared) */
                CHECK(abs(cand_one - cand_bat) <= 1 + cand_one / 50 && cand_match >= cand_kept - 1 - cand_kept / 50,
                      "%s, %d frames: candidates %d (one at a time) vs %d (batches), matched %d of the %d compared", cf->name, cnt,
                      cand_one, cand_bat, cand_match, cand_kept);
                CHECK(cand_kept == cand_one, "%s, %d frames: a frame has more than %d candidates, beyond the comparison", cf->name, cnt,
                      KEEP);
            }
        }
    }
    free(one.res);
    free(bat.res);
    free(z1);
    free(zb);
    free(val);
    free(u);
    free(f);
    return check_report();
}
