/* Sources that meet on one node are added in the order of the scheme's list
 * (schemes/scheme.h: the kernels' contract), on every backend and plan: a
 * float sum of amplitudes from 1 to 1e8 with both signs depends on its order,
 * so a kernel that adds a node's sources in another order (a thread per node
 * built by an unstable sort, say) gives other bits.  Ten Ez line sources
 * over the same eight nodes (each node gets ten sources, interleaved in the
 * list with the other nodes') and six Hx lines, one step from rest: the
 * nodes then hold exactly the in-order sums.  A TF/SF box's corrections meet
 * on its edges the same way: after some steps every plan's fields equal the
 * CPU naive method's bit for bit.
 *
 *   test_maxwell_source_order cpu|cuda   (cuda: exits 77 without a GPU) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "maxwell_util.h"
#include "schemes/maxwell.h"

static pyr_backend_kind_t backend = PYR_BACKEND_CPU;

#define NE 10
#define NH 6
#define X0 2
#define X1 9

/* The problem: the lines, their amplitudes' sizes and signs from a fixed sequence. */
static void make(pyr_problem_t *p, int64_t steps, double amp[NE + NH])
{
    const int64_t n[3] = {12, 10, 9};
    make_maxwell(p, 3, n, NULL, 0, PYR_FLOAT, steps, 0.5);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < NE + NH; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        const int decade = (int)((r >> 33) % 9);
        const double mant = 1.0 + (double)((r >> 20) % 1000) / 1000.0;
        amp[i] = ((r >> 60) & 1 ? -1 : 1) * mant * pow(10.0, decade);
        char key[32], v[160];
        snprintf(key, sizeof key, "source.source%d", i + 1);
        /* E's line at y 6, z 5; H's at y 2, z 2, far enough that its curl does not reach E's nodes in a step */
        if (i < NE) snprintf(v, sizeof v, "Ez line %d 6 5 %d 6 5 sine amplitude=%.17g frequency=0.7", X0, X1, amp[i]);
        else snprintf(v, sizeof v, "Hx line %d 2 2 %d 2 2 sine amplitude=%.17g frequency=0.7", X0, X1, amp[i]);
        CHECK_OK(pyr_problem_set(p, key, v));
    }
}

/* The float sum of sources lo .. hi - 1 at time t, in the list's order (dir 1) or backwards (-1). */
static float sum(const pyr_problem_t *p, int lo, int hi, double t, int dir)
{
    volatile float v = 0;
    for (int k = 0; k < hi - lo; k++) {
        const int i = dir > 0 ? lo + k : hi - 1 - k;
        v = v + (float)pyr_maxwell_waveform(&p->maxwell.sources[i], t);
    }
    return v;
}

static void check_step(void)
{
    pyr_problem_t p;
    double amp[NE + NH];
    make(&p, 1, amp);
    double dt = 0;
    CHECK_OK(pyr_problem_time_step(&p, &dt));
    /* E's sources at time dt, H's at dt / 2 (maxwell_points.c) */
    const float want_e = sum(&p, 0, NE, dt, 1), want_h = sum(&p, NE, NE + NH, 0.5 * dt, 1);
    CHECK(want_e != sum(&p, 0, NE, dt, -1) || want_h != sum(&p, NE, NE + NH, 0.5 * dt, -1),
          "the test's sums do not depend on their order (E %.9g, H %.9g): it could not fail", want_e, want_h);
    printf("in order: Ez %.9g (backwards %.9g), Hx %.9g (backwards %.9g)\n", want_e, sum(&p, 0, NE, dt, -1), want_h,
           sum(&p, NE, NE + NH, 0.5 * dt, -1));
    struct {
        const char *name, *kernel;
        int method, height, divide;
    } cases[] = {
        {"naive", "", PYR_METHOD_NAIVE, 0, 0},
        {"naive fused", "fused", PYR_METHOD_NAIVE, 0, 0},
        {"pyramid blocks, budget 1/3", "", PYR_METHOD_PYRAMID, 1, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        if (backend == PYR_BACKEND_CPU && cases[c].kernel[0]) continue;
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = cases[c].method;
        o.height = cases[c].height;
        snprintf(o.kernel, sizeof o.kernel, "%s", cases[c].kernel);
        if (cases[c].divide) {
            o.decomposition = PYR_DECOMP_BLOCKS;
            o.memory = (uint64_t)pyr_problem_nodes(&p) * sizeof(float) * MX_FIELDS / (uint64_t)cases[c].divide;
        }
        mx_result_t r;
        memset(&r, 0, sizeof r);
        const pyr_status_t st = mx_run(&p, &o, NULL, &r);
        CHECK(st == PYR_OK, "%s: %s", cases[c].name, pyr_last_error());
        if (st != PYR_OK) {
            mx_free(&r);
            continue;
        }
        int bad = 0;
        for (int64_t x = X0; x <= X1; x++) {
            const double e = mx_get(r.c[PYR_EZ], x, 6, 5), h = mx_get(r.c[PYR_HX], x, 2, 2);
            CHECK(e == (double)want_e && h == (double)want_h, "%s: node x = %lld holds Ez %.9g, Hx %.9g; in the list's order %.9g, %.9g",
                  cases[c].name, (long long)x, e, h, want_e, want_h);
            bad |= e != (double)want_e || h != (double)want_h;
        }
        printf("%s: %s\n", cases[c].name, bad ? "out of order" : "every node in the list's order");
        mx_free(&r);
    }
}

/* A TF/SF box (its edges: two faces' corrections on one node) with the lines inside, several steps: every plan
 * against the CPU naive method, bit for bit. */
static void check_box(void)
{
    pyr_problem_t p;
    double amp[NE + NH];
    make(&p, 9, amp);
    CHECK_OK(pyr_problem_set(&p, "source.planewave1", "Ez along +x box 1 1 1 10 8 7 gaussian width=0.1 delay=0.3 amplitude=1e4"));
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    o.threads = 1;
    mx_result_t ref;
    memset(&ref, 0, sizeof ref);
    const pyr_status_t st = mx_run(&p, &o, NULL, &ref);
    CHECK(st == PYR_OK, "box: CPU naive: %s", pyr_last_error());
    if (st != PYR_OK) {
        mx_free(&ref);
        return;
    }
    const int heights[] = {0, 4, 3};
    for (int c = 0; c < 3; c++) {
        pyr_options_default(&o);
        o.backend = backend;
        o.method = c ? PYR_METHOD_PYRAMID : PYR_METHOD_NAIVE;
        o.height = heights[c];
        if (c) {
            o.decomposition = PYR_DECOMP_BLOCKS;
            /* a fraction of the fields, or the least budget the backend's layout plans this height in (a GPU's
             * rows are padded and it keeps more pieces in flight): pieces either way */
            const uint64_t part = (uint64_t)pyr_problem_nodes(&p) * sizeof(float) * MX_FIELDS / (uint64_t)(c + 2);
            const uint64_t least = smallest_budget(&p, o, part);
            o.memory = least > part ? least : part;
        }
        mx_result_t r;
        memset(&r, 0, sizeof r);
        const pyr_status_t rs = mx_run(&p, &o, NULL, &r);
        CHECK(rs == PYR_OK, "box, plan %d: %s", c, pyr_last_error());
        if (rs == PYR_OK) {
            char label[64];
            snprintf(label, sizeof label, "box, plan %d (%s height %lld)", c, c ? "pyramid" : "naive", (long long)r.info.height);
            const int bad = mx_compare(label, "the CPU naive method", &r, &ref);
            printf("box, plan %d: %s\n", c, bad ? "differs from the CPU naive method" : "the same bits as the CPU naive method");
        }
        mx_free(&r);
    }
    mx_free(&ref);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (pyr_gpu_count() < 1) {
            printf("no GPU: skipped\n");
            return 77;
        }
        backend = PYR_BACKEND_CUDA;
    }
    check_step();
    check_box();
    return check_report();
}
