/* The long-vector method without a GPU (issue 23):
 *  1. the model's staircase: the sizes where ceil(M / threads) grows, from
 *     pyr_lv_staircase (a bisection per step), equal a brute-force scan of
 *     M(N) over every N, for several thread counts and row paddings; with
 *     unpadded rows M is the seed's N(N+2) - 2 and the first step is the
 *     first N with N(N+2) - 2 > threads; the modelled step time jumps there
 *     by exactly one wave of every operation and is flat in between;
 *  2. the model of a plan: pyr_model_predict of a long-vector plan is the
 *     transfers plus steps x t_step(M) with M from the plan's own layout;
 *  3. the fit of calibration recovers the thread count and the constants of
 *     synthetic op times drawn from the staircase with 1% noise, and its knee
 *     (where the operations' time leaves the launch floor) lies where
 *     launch-bound synthetic times start to rise;
 *  4. the wisdom's longvector= field round-trips, and malformed ones are
 *     rejected; the default constants carry none;
 *  5. the step itself (methods/longvector/longvector_step.c, the sequence the CUDA
 *     backend issues to cuBLAS) with the four operations emulated on the CPU
 *     -- axpy both fused (fma) and unfused -- on padded buffers whose
 *     padding holds NaN, gives the CPU naive method's field bit for bit, for
 *     random and for wild data (mixed signs and exponents, subnormals, signed
 *     zeros), float and double, grids of sizes that are multiples of
 *     nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods/longvector/longvector_step.h"
#include "check.h"
#include "heat_util.h"
#include "plan/longvector.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "tune/longvector.h"
#include "tune/wisdom.h"

/* ------------------------------------------------------------ staircase */

static int64_t brute_length(int64_t n, int64_t align)
{
    int64_t pitch = n + 2;
    if (align > 1) pitch = (pitch + align - 1) / align * align;
    return (n - 1) * pitch + n;
}

static int64_t brute_waves(int64_t m, int64_t t) { return (m + t - 1) / t; }

static void test_staircase(void)
{
    const int64_t threads[] = {1000, 3999, 4000, 32768, 65537, 270336, 132 * 2048 * 3 + 7};
    const int64_t aligns[] = {1, 16, 32, 64};
    int64_t *pos = malloc(20000 * sizeof *pos);
    for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++)
        for (size_t ai = 0; ai < sizeof aligns / sizeof aligns[0]; ai++) {
            const int64_t T = threads[ti], A = aligns[ai], lo = 10, hi = 7000;
            int n = pyr_lv_staircase((double)T, A, lo, hi, pos, 20000);
            CHECK(n >= 0 && n <= 20000, "staircase count %d", n);
            int k = 0, bad = 0;
            for (int64_t N = lo + 1; N <= hi; N++) {
                CHECK(pyr_lv_grid_length(N, A) == brute_length(N, A), "M(%lld) align %lld", (long long)N, (long long)A);
                int grows = brute_waves(brute_length(N, A), T) > brute_waves(brute_length(N - 1, A), T);
                if (grows) {
                    if (k >= n || pos[k] != N) bad++;
                    k++;
                }
            }
            CHECK(bad == 0 && k == n, "threads %lld align %lld: %d positions, brute force %d, %d differ", (long long)T, (long long)A,
                  n, k, bad);
            if (A == 1) {
                /* the seed's unpadded vector: the first step is the first N with N(N+2) - 2 > threads */
                int64_t first = (int64_t)floor(sqrt((double)T + 3.0)) - 1;
                while (first > 1 && first * (first + 2) - 2 > T) first--;
                while (first * (first + 2) - 2 <= T) first++;
                CHECK(n > 0 && pos[0] == first, "threads %lld: first step at %lld, closed form %lld", (long long)T,
                      (long long)(n ? pos[0] : -1), (long long)first);
            }
            /* the modelled step time: flat between positions, one wave of every op more at each */
            pyr_lv_constants_t k4 = {3e-6, 0.7e-6, 0.8e-6, 0.5e-6, (double)T};
            const double wave = pyr_lv_wave_seconds(&k4);
            CHECK(fabs(wave - (3 * 0.7e-6 + 4 * 0.8e-6 + 2 * 0.5e-6)) < 1e-15, "wave seconds %g", wave);
            int p = 0, jumps_bad = 0;
            for (int64_t N = lo + 1; N <= hi; N++) {
                double d = pyr_lv_step_seconds(&k4, pyr_lv_grid_length(N, A)) - pyr_lv_step_seconds(&k4, pyr_lv_grid_length(N - 1, A));
                int64_t dw = brute_waves(brute_length(N, A), T) - brute_waves(brute_length(N - 1, A), T);
                if (fabs(d - (double)dw * wave) > 1e-9 * wave) jumps_bad++;
                if (p < n && pos[p] == N) p++;
            }
            CHECK(jumps_bad == 0, "threads %lld align %lld: %d steps of the time differ from waves x wave seconds", (long long)T,
                  (long long)A, jumps_bad);
        }
    /* the seed's lengths: the interior of an unpadded (N+2)^2 grid is N(N+2) - 2 long */
    for (int64_t N = 1; N <= 5000; N += 7) CHECK(pyr_lv_grid_length(N, 1) == N * (N + 2) - 2, "M(%lld)", (long long)N);
    CHECK(pyr_lv_waves(0, 100) == 0 && pyr_lv_waves(1, 100) == 1 && pyr_lv_waves(100, 100) == 1 && pyr_lv_waves(101, 100) == 2,
          "waves at the edges");
    CHECK(pyr_lv_staircase(0, 1, 10, 100, pos, 10) == 0, "no threads, no staircase");
    free(pos);
}

/* ------------------------------------------------------- a plan's model */

static void test_plan_model(void)
{
    /* the model of a long-vector plan, on a CPU naive plan's geometry made to say so: no GPU is needed for arithmetic */
    pyr_problem_t p;
    int64_t n[3] = {1003, 517, 1};
    make_problem(&p, 2, n, PYR_FLOAT, 250, PYR_INIT_RANDOM, 5);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    o.height = 100;
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (!plan) return;
    pyr_model_prediction_t naive;
    CHECK_OK(pyr_model_predict(plan, &plan->model, PYR_MODEL_AUTO, 0, &naive));
    plan->method = PYR_METHOD_LONGVECTOR;
    pyr_lv_constants_t k = {4e-6, 1e-6, 1.1e-6, 0.6e-6, 50000};
    plan->model.lv = k;
    pyr_model_prediction_t lv;
    CHECK_OK(pyr_model_predict(plan, &plan->model, PYR_MODEL_AUTO, 0, &lv));
    const int64_t m = (n[1] - 3) * plan->layout.pitch + (n[0] - 2);
    CHECK(pyr_lv_plan_length(plan) == m, "range %lld, expected %lld", (long long)pyr_lv_plan_length(plan), (long long)m);
    const int64_t waves = (m + 49999) / 50000;
    const double step = 10 * 4e-6 + (3 * 1e-6 + 4 * 1.1e-6 + 2 * 0.6e-6) * (double)waves;
    CHECK(fabs(lv.compute - 250 * step) < 1e-9 * lv.compute, "compute %.9g s, expected 250 x %.9g", lv.compute, step);
    CHECK(fabs(lv.upload - naive.upload) < 1e-15 && fabs(lv.download - naive.download) < 1e-15,
          "the transfers are the naive method's (T_cpugpu)");
    CHECK(fabs(lv.seconds - (lv.upload + lv.compute + lv.download)) < 1e-12 * lv.seconds, "total %.9g", lv.seconds);
    char text[8192] = "";
    FILE *f = fmemopen(text, sizeof text, "w");
    if (f) {
        pyr_lv_plan_print(plan, f);
        fclose(f);
    }
    char want[64];
    snprintf(want, sizeof want, "M = %lld elements", (long long)m);
    CHECK(strstr(text, want) != NULL, "plan print shows the range: %s", text);
    pyr_plan_destroy(&plan);
}

/* ------------------------------------------------------------------ fit */

static double noise(rng_t *r) { return 1.0 + 0.02 * ((double)(rng_next(r) % 1000001) / 1e6 - 0.5); }

static void test_fit(void)
{
    const double hw = 270336;
    double cands[128];
    int nc = 0;
    cands[nc++] = hw;
    for (double x = hw / 64; x <= 8 * hw && nc < 128; x *= 1.090507733) cands[nc++] = floor(x);
    const double truths[] = {hw, cands[40], cands[25]};
    for (int ti = 0; ti < 3; ti++) {
        const pyr_lv_constants_t truth = {3.5e-6, 0.9e-6, 1.0e-6, 0.6e-6, truths[ti]};
        const double a[3] = {3.0e-6, 4.0e-6, 3.2e-6}; /* intercepts per op; t_kernel is their mean over a step's calls */
        pyr_lv_sample_t s[128];
        int ns = 0;
        rng_t r = {42 + (uint64_t)ti};
        for (double x = 1024; x <= 49e6 && ns < 100; x *= 1.189207115) {
            s[ns].n = (int64_t)x;
            const int64_t w = pyr_lv_waves(s[ns].n, truth.threads);
            s[ns].t[0] = (a[0] + truth.t_add * (double)w) * noise(&r);
            s[ns].t[1] = (a[1] + truth.t_saxpy * (double)w) * noise(&r);
            s[ns].t[2] = (a[2] + truth.t_scal * (double)w) * noise(&r);
            ns++;
        }
        pyr_lv_constants_t k;
        double rms = -1;
        CHECK_OK(pyr_lv_fit(s, ns, cands, nc, &k, &rms));
        const double kern = (3 * a[0] + 4 * a[1] + 2 * a[2]) / 9;
        CHECK(fabs(k.threads - truth.threads) <= 0.1 * truth.threads, "fit threads %.0f, truth %.0f", k.threads, truth.threads);
        CHECK(fabs(k.t_add - truth.t_add) < 0.05 * truth.t_add && fabs(k.t_saxpy - truth.t_saxpy) < 0.05 * truth.t_saxpy &&
                  fabs(k.t_scal - truth.t_scal) < 0.05 * truth.t_scal,
              "fit slopes %g %g %g, truth %g %g %g", k.t_add, k.t_saxpy, k.t_scal, truth.t_add, truth.t_saxpy, truth.t_scal);
        CHECK(fabs(k.t_kernel - kern) < 0.1 * kern, "fit t_kernel %g, truth %g", k.t_kernel, kern);
        CHECK(rms >= 0 && rms < 0.02, "rms %g of data with 1%% noise", rms);
        CHECK(pyr_lv_valid(&k), "fitted constants valid");
    }
    pyr_lv_constants_t k;
    CHECK_FAILS(pyr_lv_fit(NULL, 0, cands, nc, &k, NULL), PYR_ERR_ARG, "samples");

    /* the knee: calls bound by the host's launch rate (h) until the device's time (l + c n) passes it */
    const double hs[] = {2.5e-6, 4e-6, 1.5e-6}, ls[] = {1.8e-6, 1.2e-6, 1.4e-6}, cs[] = {4e-12, 1.6e-12, 9e-12};
    for (int q = 0; q < 3; q++) {
        pyr_lv_sample_t s[200];
        int ns = 0;
        for (double x = 1024; x <= 49e6 && ns < 200; x *= 1.090507733) {
            s[ns].n = (int64_t)x;
            for (int o = 0; o < 3; o++) s[ns].t[o] = fmax(hs[q], ls[q] + cs[q] * (double)s[ns].n * (o == 2 ? 0.67 : 1.0));
            ns++;
        }
        /* S(n) = 3 t_add + 4 t_saxpy + 2 t_scal passes 1.05 x its floor 9 h first where the sum of the excesses does */
        int64_t cross = 0;
        for (int i = 0; i < ns && !cross; i++)
            if (3 * s[i].t[0] + 4 * s[i].t[1] + 2 * s[i].t[2] > 9 * hs[q] * (1 + PYR_LV_RISE)) cross = s[i].n;
        const int64_t knee = pyr_lv_knee(s, ns, PYR_LV_RISE);
        int64_t next = 0;
        for (int i = 0; i + 1 < ns; i++)
            if (s[i].n == knee) next = s[i + 1].n;
        CHECK(knee > 0 && next == cross, "knee %lld: the next sample %lld should be the first above the floor, %lld", (long long)knee,
              (long long)next, (long long)cross);
        /* analytically, the axpy and geam terms alone pass the floor at (1.05 h - l) / c: the knee is the sample before or after */
        const double nstar = ((1 + PYR_LV_RISE) * hs[q] - ls[q]) / cs[q];
        CHECK((double)knee < nstar * 1.25 && (double)next > nstar * 0.8, "knee %lld, next %lld around the crossing %.0f", (long long)knee,
              (long long)next, nstar);
    }
    {
        pyr_lv_sample_t flat[10];
        for (int i = 0; i < 10; i++) {
            flat[i].n = 1000 << i;
            flat[i].t[0] = flat[i].t[1] = flat[i].t[2] = 3e-6;
        }
        CHECK(pyr_lv_knee(flat, 10, PYR_LV_RISE) == 0, "no rise, no knee");
        for (int i = 0; i < 10; i++) flat[i].t[0] = 3e-6 * (1 + i);
        CHECK(pyr_lv_knee(flat, 10, PYR_LV_RISE) == 0, "a rise from the start has no knee");
    }
}

/* --------------------------------------------------------------- wisdom */

/* The default constants carry no long-vector constants (threads = 0: not
 * calibrated), whatever the stack held: a plan would otherwise take them for
 * calibrated ones, and a wisdom record made from them would carry a
 * longvector= field of garbage.  The stack is dirtied first, in a frame the
 * next call reuses. */
__attribute__((noinline)) static void dirty_stack(void)
{
    volatile unsigned char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(0x3f + (i & 1));
}
__attribute__((noinline)) static int default_has_lv(pyr_backend_kind_t b, int dims, pyr_precision_t p)
{
    pyr_model_constants_t k = pyr_model_default(b, dims, p);
    const pyr_lv_constants_t zero = {0, 0, 0, 0, 0};
    return memcmp(&k.lv, &zero, sizeof zero) != 0;
}
static void test_defaults(void)
{
    for (int b = PYR_BACKEND_CPU; b <= PYR_BACKEND_CUDA; b++)
        for (int d = 1; d <= 3; d++)
            for (int p = 0; p < 2; p++) {
                dirty_stack();
                CHECK(!default_has_lv((pyr_backend_kind_t)b, d, p ? PYR_DOUBLE : PYR_FLOAT),
                      "pyr_model_default(%s, %dD, %s) left long-vector constants set", pyr_backend_name((pyr_backend_kind_t)b), d,
                      p ? "double" : "float");
            }
}

static void test_wisdom(void)
{
    pyr_lv_constants_t k = {3.25e-6, 9.5e-7, 1.0000000000000002e-6, 6e-7, 270336}, back;
    char text[256];
    pyr_lv_format(&k, text, sizeof text);
    CHECK(pyr_lv_parse(text, &back) && !memcmp(&k, &back, sizeof k), "round trip of '%s'", text);
    const char *bad[] = {"", "1,2,3,4", "1e-6,1e-6,1e-6,1e-6,0", "1e-6,1e-6,1e-6,1e-6,100.5", "-1e-6,1e-6,1e-6,1e-6,100",
                         "1e-6,1e-6,1e-6,1e-6,100,", "1e-6,,1e-6,1e-6,100", "a,b,c,d,e", "1e-6,1e-6,1e-6,nan,100"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(!pyr_lv_parse(bad[i], &back), "'%s' should be rejected", bad[i]);

    pyr_wisdom_t *w = malloc(sizeof *w), *r = malloc(sizeof *r);
    pyr_wisdom_init(w);
    pyr_wisdom_constants_t c;
    memset(&c, 0, sizeof c);
    c.backend = PYR_BACKEND_CUDA;
    snprintf(c.device, sizeof c.device, "NVIDIA H200, 139.8 GiB, cc 9.0");
    snprintf(c.version, sizeof c.version, "%s", PYR_VERSION_STRING);
    c.precision = PYR_FLOAT;
    c.dims = 2;
    c.k = pyr_model_default(PYR_BACKEND_CUDA, 2, PYR_FLOAT);
    c.k.lv = k;
    CHECK_OK(pyr_wisdom_put_constants(w, &c));
    c.dims = 3;
    c.k.lv = (pyr_lv_constants_t){0, 0, 0, 0, 0}; /* not measured: no field */
    CHECK_OK(pyr_wisdom_put_constants(w, &c));
    char *t = NULL;
    CHECK_OK(pyr_wisdom_to_text(w, &t));
    CHECK(t && strstr(t, "\tlongvector=") != NULL, "the wisdom text carries the field");
    int fields = 0;
    for (const char *q = t; q && (q = strstr(q, "longvector=")); q++) fields++;
    CHECK(fields == 1, "one record carries longvector= (found %d)", fields);
    CHECK_OK(pyr_wisdom_from_text(t, "test", r));
    const pyr_wisdom_constants_t *f2 = pyr_wisdom_find_constants(r, PYR_BACKEND_CUDA, c.device, "heat", PYR_FLOAT, 2);
    const pyr_wisdom_constants_t *f3 = pyr_wisdom_find_constants(r, PYR_BACKEND_CUDA, c.device, "heat", PYR_FLOAT, 3);
    CHECK(f2 && !memcmp(&f2->k.lv, &k, sizeof k), "the 2D record's long-vector constants come back");
    CHECK(f3 && f3->k.lv.threads == 0, "a record without the field has none");
    free(t);
    free(w);
    free(r);
}

/* ------------------------------------------------- the step, emulated */

typedef struct {
    int elem;
    int fused; /* axpy as one fma (as a library may), else a product then a sum */
} emu_t;

static pyr_status_t emu_add(void *user, int64_t m, const void *a, const void *b, void *out)
{
    const emu_t *e = user;
    for (int64_t i = 0; i < m; i++) {
        if (e->elem == 4) ((float *)out)[i] = ((const float *)a)[i] + ((const float *)b)[i];
        else ((double *)out)[i] = ((const double *)a)[i] + ((const double *)b)[i];
    }
    return PYR_OK;
}

static pyr_status_t emu_axpy(void *user, int64_t m, double alpha, const void *x, void *y)
{
    const emu_t *e = user;
    for (int64_t i = 0; i < m; i++) {
        if (e->elem == 4) {
            float a = (float)alpha, xv = ((const float *)x)[i], *yv = (float *)y + i;
            if (e->fused) *yv = fmaf(a, xv, *yv);
            else {
                float prod = a * xv;
                *yv = prod + *yv;
            }
        } else {
            double xv = ((const double *)x)[i], *yv = (double *)y + i;
            if (e->fused) *yv = fma(alpha, xv, *yv);
            else {
                double prod = alpha * xv;
                *yv = prod + *yv;
            }
        }
    }
    return PYR_OK;
}

static pyr_status_t emu_scal(void *user, int64_t m, double alpha, void *x)
{
    const emu_t *e = user;
    for (int64_t i = 0; i < m; i++) {
        if (e->elem == 4) ((float *)x)[i] = (float)alpha * ((float *)x)[i];
        else ((double *)x)[i] = alpha * ((double *)x)[i];
    }
    return PYR_OK;
}

static pyr_status_t emu_copy2d(void *user, void *dst, const void *src, int64_t pitch, int64_t width, int64_t rows)
{
    const emu_t *e = user;
    for (int64_t r = 0; r < rows; r++)
        memcpy((char *)dst + r * pitch * e->elem, (const char *)src + r * pitch * e->elem, (size_t)(width * e->elem));
    return PYR_OK;
}


/* Steps of the emulated long-vector method on padded buffers, from the
 * field's values; the result back into `out`. */
static void emulate(const pyr_problem_t *p, const pyr_field_t *in, pyr_field_t *out, int64_t align, int fused)
{
    const int64_t nx = p->n[0], ny = p->n[1];
    const int elem = (int)pyr_precision_size(p->precision);
    int64_t pitch = nx;
    if (align > 1) pitch = (pitch + align - 1) / align * align;
    const size_t bytes = (size_t)(pitch * ny * elem);
    unsigned char *buf[4];
    for (int i = 0; i < 4; i++) {
        buf[i] = malloc(bytes);
        /* the padding and the work vectors hold NaN: nothing of it may reach a node */
        for (size_t j = 0; j < bytes / (size_t)elem; j++) {
            if (elem == 4) ((float *)buf[i])[j] = NAN;
            else ((double *)buf[i])[j] = NAN;
        }
    }
    for (int l = 0; l < 2; l++)
        for (int64_t y = 0; y < ny; y++) memcpy(buf[l] + (size_t)(y * pitch * elem), (const char *)in->data + y * nx * elem, (size_t)(nx * elem));
    emu_t e = {elem, fused};
    pyr_lv_ops_t ops = {&e, emu_add, emu_axpy, emu_scal, emu_copy2d};
    pyr_coef_t coef;
    pyr_scheme_heat.coefficients(p, &coef);
    int cur = 0;
    for (int64_t s = 0; s < p->steps; s++) {
        CHECK_OK(pyr_lv_step(&ops, (size_t)elem, buf[cur], buf[cur ^ 1], buf[2], buf[3], pitch + 1, pitch, ny - 2, nx - 2, coef.c[0], coef.c[1]));
        cur ^= 1;
    }
    for (int64_t y = 0; y < ny; y++) memcpy((char *)out->data + y * nx * elem, buf[cur] + (size_t)(y * pitch * elem), (size_t)(nx * elem));
    for (int i = 0; i < 4; i++) free(buf[i]);
}

static void test_emulated_step(void)
{
    const int64_t sizes[][2] = {{3, 3}, {4, 3}, {3, 5}, {5, 7}, {37, 41}, {130, 97}, {257, 66}, {101, 3}, {1031, 13}};
    int cases = 0, equal = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int pi = 0; pi < 2; pi++)
            for (int wild = 0; wild < 2; wild++) {
                const pyr_precision_t prec = pi ? PYR_DOUBLE : PYR_FLOAT;
                int64_t n[3] = {sizes[si][0], sizes[si][1], 1};
                pyr_problem_t p;
                make_problem(&p, 2, n, prec, 1 + (int64_t)((si * 7 + (size_t)pi * 3 + (size_t)wild) % 9), PYR_INIT_RANDOM, 100 + si);
                /* unequal r per axis, so that a swapped rx / ry shows */
                p.length[1] = 1.7;
                pyr_field_t *init = NULL, *ref = NULL, *got = NULL;
                CHECK_OK(pyr_field_create(&p, &init));
                CHECK_OK(pyr_field_create(&p, &ref));
                CHECK_OK(pyr_field_create(&p, &got));
                if (!init || !ref || !got) return;
                CHECK_OK(pyr_field_init(init, &p));
                if (wild) fill_wild(init, 7 + si);
                memcpy(ref->data, init->data, (size_t)pyr_field_count(init) * pyr_precision_size(prec));
                pyr_options_t o;
                pyr_options_default(&o);
                o.backend = PYR_BACKEND_CPU;
                o.method = PYR_METHOD_NAIVE;
                pyr_plan_t *plan = NULL;
                CHECK_OK(pyr_plan_create(&p, &o, &plan));
                if (plan) CHECK_OK(pyr_execute(plan, ref, NULL, NULL));
                pyr_plan_destroy(&plan);
                for (int variant = 0; variant < 4; variant++) {
                    const int64_t align = variant & 1 ? (prec == PYR_FLOAT ? 32 : 16) : 1;
                    emulate(&p, init, got, align, variant >> 1);
                    int64_t d = first_difference(ref, got);
                    cases++;
                    equal += d < 0;
                    CHECK(d < 0, "%lldx%lld %s %s, %lld steps, align %lld, axpy %s: node %lld differs (%.17g vs %.17g)", (long long)n[0],
                          (long long)n[1], pyr_precision_name(prec), wild ? "wild" : "random", (long long)p.steps, (long long)align,
                          variant >> 1 ? "fused" : "unfused", (long long)d, d >= 0 ? field_get(got, d) : 0.0,
                          d >= 0 ? field_get(ref, d) : 0.0);
                }
                pyr_field_destroy(&init);
                pyr_field_destroy(&ref);
                pyr_field_destroy(&got);
            }
    printf("emulated long-vector step: %d of %d cases bit-identical to the CPU naive method\n", equal, cases);
}

int main(void)
{
    test_staircase();
    test_plan_model();
    test_fit();
    test_defaults();
    test_wisdom();
    test_emulated_step();
    return check_report();
}
