/* Every weights mode on the scene of test_frames_gpu (stars with a slow
 * mover, 16-bit counts, jitter +-2 px, frames not registered in poly and
 * plain), on the CPU: align finds the mover in about every frame, and poly
 * and plain, whose residual near each star holds the star's misprediction,
 * report about as few candidates, never the sky's own noise by the thousand
 * (the noise model's free constant let its line fall below the sky there:
 * tens of thousands of candidates).
 *   test_frames_modes */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "frames_scene.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"

#define NX 300
#define NY 260
#define T 48

static double jx[T], jy[T];

typedef struct {
    int total, on_mover, detecting;
} count_t;

static pyr_status_t collect(void *user, const pyr_frames_result_t *r)
{
    count_t *c = user;
    int t = (int)r->frame;
    double mx = 120 + 0.3 * t + jx[t], my = 100 + 0.2 * t + jy[t];
    c->total += r->ncandidates;
    c->detecting += r->ncandidates > 0;
    for (int i = 0; i < r->ncandidates; i++)
        if (hypot(r->candidates[i].x - mx, r->candidates[i].y - my) < 3) {
            c->on_mover++;
            break;
        }
    return PYR_OK;
}

static count_t run(const uint16_t *seq, pyr_frames_weights_t w)
{
    count_t c = {0, 0, 0};
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.weights = w;
    o.history = 12;
    pyr_frames_t *f = NULL;
    CHECK_OK(pyr_frames_create(NX, NY, &o, collect, &c, &f));
    if (!f) return c;
    for (int t = 0; t < T; t++) CHECK_OK(pyr_frames_push(f, seq + (size_t)t * NX * NY, PYR_FRAMES_U16, NULL));
    CHECK_OK(pyr_frames_finish(f));
    pyr_frames_destroy(&f);
    return c;
}

int main(void)
{
    /* test_frames_gpu's scene */
    static double stars[150][3];
    fs_stars(stars, 150, 0, NX, 0, NY, 100, 5000, 3);
    uint16_t *seq = malloc((size_t)T * NX * NY * sizeof *seq);
    double *val = malloc((size_t)NX * NY * sizeof *val);
    for (int t = 0; t < T; t++) {
        fs_mover_frame(val, NX, NY, stars, 150, t, 120, 100, &jx[t], &jy[t]);
        for (size_t i = 0; i < (size_t)NX * NY; i++) seq[(size_t)t * NX * NY + i] = fs_u16(val[i]);
    }
    free(val);
    count_t al = run(seq, PYR_FRAMES_ALIGN), po = run(seq, PYR_FRAMES_POLY), pl = run(seq, PYR_FRAMES_PLAIN);
    printf("candidates: align %d (%d frames on the mover), poly %d, plain %d\n", al.total, al.on_mover, po.total, pl.total);
    /* 44 frames after the warm-up, one mover */
    CHECK(al.on_mover >= 36 && al.total <= 60, "align: %d candidates, %d frames with the mover", al.total, al.on_mover);
    CHECK(po.total <= 2 * al.total, "poly: %d candidates (align %d): the sky's noise detected", po.total, al.total);
    CHECK(pl.total <= 2 * al.total, "plain: %d candidates (align %d): the sky's noise detected", pl.total, al.total);
    free(seq);
    return check_report();
}
