/* The long-vector method's calibration (see longvector.h). */
#include "tune/longvector.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/device.h"
#include "core/error.h"
#include "backend/plugin.h"

/* ------------------------------------------------------------- the fit */

/* Weighted least squares of t = a + b w with weights 1/t^2 (a, b >= 0);
 * returns the sum of squared relative errors. */
static double fit_line(const double *t, const int64_t *w, int n, double *a_out, double *b_out)
{
    double su = 0, suw = 0, suw2 = 0, sut = 0, sutw = 0;
    for (int i = 0; i < n; i++) {
        const double u = 1.0 / (t[i] * t[i]), x = (double)w[i];
        su += u;
        suw += u * x;
        suw2 += u * x * x;
        sut += u * t[i];
        sutw += u * t[i] * x;
    }
    double a = 0, b = 0;
    const double det = su * suw2 - suw * suw;
    if (det > 1e-12 * su * suw2) {
        a = (sut * suw2 - suw * sutw) / det;
        b = (su * sutw - suw * sut) / det;
    }
    if (!(det > 1e-12 * su * suw2) || a < 0 || b < 0) {
        /* one of them at 0: the better of the two one-parameter fits */
        double b0 = suw2 > 0 ? sutw / suw2 : 0, a0 = su > 0 ? sut / su : 0;
        double r_b = 0, r_a = 0;
        for (int i = 0; i < n; i++) {
            double e1 = (t[i] - b0 * (double)w[i]) / t[i], e2 = (t[i] - a0) / t[i];
            r_b += e1 * e1;
            r_a += e2 * e2;
        }
        if (r_b < r_a) a = 0, b = b0;
        else a = a0, b = 0;
    }
    double r = 0;
    for (int i = 0; i < n; i++) {
        double e = (t[i] - a - b * (double)w[i]) / t[i];
        r += e * e;
    }
    *a_out = a;
    *b_out = b;
    return r;
}

pyr_status_t pyr_lv_fit(const pyr_lv_sample_t *s, int n, const double *threads, int ncand, pyr_lv_constants_t *k, double *rms)
{
    if (n < 2 || ncand < 1) return pyr_fail(PYR_ERR_ARG, "pyr_lv_fit: %d samples and %d thread counts; need at least 2 and 1", n, ncand);
    for (int i = 0; i < n; i++)
        for (int o = 0; o < 3; o++)
            if (!(s[i].t[o] > 0) || !isfinite(s[i].t[o]) || s[i].n < 1)
                return pyr_fail(PYR_ERR_ARG, "pyr_lv_fit: sample %d (n = %lld) has a non-positive time", i, (long long)s[i].n);
    double *t = malloc((size_t)n * sizeof *t);
    int64_t *w = malloc((size_t)n * sizeof *w);
    if (!t || !w) {
        free(t);
        free(w);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory fitting the long-vector model");
    }
    double best_r = INFINITY, first_r = INFINITY;
    pyr_lv_constants_t best = {0, 0, 0, 0, 0}, first = best;
    for (int c = 0; c < ncand; c++) {
        if (!(threads[c] >= 1)) continue;
        const double T = (double)llround(threads[c]);
        for (int i = 0; i < n; i++) w[i] = pyr_lv_waves(s[i].n, T);
        double a[3], b[3], r = 0;
        for (int o = 0; o < 3; o++) {
            for (int i = 0; i < n; i++) t[i] = s[i].t[o];
            r += fit_line(t, w, n, &a[o], &b[o]);
        }
        pyr_lv_constants_t kk;
        kk.threads = T;
        kk.t_kernel = (PYR_LV_ADDS * a[0] + PYR_LV_AXPYS * a[1] + PYR_LV_SCALS * a[2]) / (PYR_LV_ADDS + PYR_LV_AXPYS + PYR_LV_SCALS);
        kk.t_add = b[0];
        kk.t_saxpy = b[1];
        kk.t_scal = b[2];
        if (c == 0) {
            first = kk;
            first_r = r;
        }
        if (r < best_r) {
            best_r = r;
            best = kk;
        }
    }
    free(t);
    free(w);
    if (!isfinite(best_r)) return pyr_fail(PYR_ERR_ARG, "pyr_lv_fit: no thread count >= 1 among the %d candidates", ncand);
    if (first_r <= 1.02 * best_r) {
        best = first;
        best_r = first_r;
    }
    *k = best;
    if (rms) *rms = sqrt(best_r / (3.0 * n));
    return PYR_OK;
}

int64_t pyr_lv_knee(const pyr_lv_sample_t *s, int n, double rise)
{
    if (n < 3) return 0;
    double floor_t = INFINITY;
    for (int i = 0; i < n && i < 4; i++)
        floor_t = fmin(floor_t, PYR_LV_ADDS * s[i].t[0] + PYR_LV_AXPYS * s[i].t[1] + PYR_LV_SCALS * s[i].t[2]);
    const double thr = floor_t * (1.0 + rise);
    for (int i = 1; i < n; i++) {
        const double si = PYR_LV_ADDS * s[i].t[0] + PYR_LV_AXPYS * s[i].t[1] + PYR_LV_SCALS * s[i].t[2];
        const double sn = i + 1 < n ? PYR_LV_ADDS * s[i + 1].t[0] + PYR_LV_AXPYS * s[i + 1].t[1] + PYR_LV_SCALS * s[i + 1].t[2] : si;
        if (si > thr && sn > thr) return i >= 2 ? s[i - 1].n : 0;
    }
    return 0;
}

/* ------------------------------------------------------- calibration */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Seconds per call of each op at length n: a short pilot, then batches of
 * about `target` seconds. */
static pyr_status_t time_length(const pyr_cuda_plugin_t *cuda, void *ctx, int64_t n, double target, double out[3])
{
    double pilot[3];
    PYR_TRY(cuda->lv_time_ops(ctx, n, 3, 1, pilot));
    const double slow = fmax(pilot[0], fmax(pilot[1], pilot[2]));
    int batch = (int)fmin(2000.0, fmax(3.0, target / fmax(slow, 1e-7)));
    return cuda->lv_time_ops(ctx, n, batch, 3, out);
}

pyr_status_t pyr_calibrate_longvector(const pyr_calibrate_opts_t *o, pyr_lv_constants_t *k, int64_t *hardware, double *rms)
{
    const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_ASK);
    if (!cuda) return pyr_fail(PYR_ERR_NODEVICE, "the long-vector method's calibration needs the CUDA backend: %s", pyr_cuda_missing());
    const pyr_device_ops_t *ops = cuda->device;
    if (!pyr_backend_available(PYR_BACKEND_CUDA))
        return pyr_fail(PYR_ERR_NODEVICE, "calibrating the long-vector method needs a usable GPU");
    int64_t hw = 0;
    PYR_TRY(cuda->lv_resident_threads(o->device, &hw));
    if (hardware) *hardware = hw;
    pyr_options_t opt;
    pyr_options_default(&opt);
    opt.backend = PYR_BACKEND_CUDA;
    opt.device = o->device;
    void *ctx = NULL;
    PYR_TRY(ops->create(&opt, o->precision, &ctx));
    const size_t elem = pyr_precision_size(o->precision);
    uint64_t fr = 0, total = 0;
    pyr_status_t st = ops->mem_info(ctx, &fr, &total);
    /* lengths: geometric from 1 Ki elements, and those of square grids N = 10..7000 evenly (the paper's sweep) */
    int64_t nmax = pyr_lv_grid_length(7000, 1);
    const int64_t fit_mem = (int64_t)(fr / 4 / (3 * elem));
    if (nmax > fit_mem) nmax = fit_mem;
    int64_t lens[256];
    int nl = 0;
    /* 2^(1/8) apart below 8 M elements (where the staircase starts), 2^(1/4) above */
    for (double x = 1024; x <= (double)nmax && nl < 220; x *= x < 8e6 ? 1.090507733 : 1.189207115) lens[nl++] = (int64_t)x;
    for (int i = 0; i < 20; i++) {
        int64_t len = pyr_lv_grid_length(10 + (int64_t)i * (7000 - 10) / 19, 1);
        if (len <= nmax) lens[nl++] = len;
    }
    qsort(lens, (size_t)nl, sizeof lens[0], cmp_i64);
    pyr_lv_sample_t samples[256];
    int ns = 0;
    const double target = 1.5e-3 * (o->effort > 0 ? o->effort : 1.0);
    /* longest first: the work vectors are allocated once, and the GPU's clocks are up before the short calls */
    for (int i = nl - 1; i >= 0 && st == PYR_OK; i--) {
        if (ns > 0 && samples[ns - 1].n == lens[i]) continue;
        samples[ns].n = lens[i];
        st = time_length(cuda, ctx, lens[i], target, samples[ns].t);
        ns++;
    }
    ops->destroy(ctx);
    if (st != PYR_OK) return pyr_fail_context(st, "calibrating the long-vector method: ");
    if (ns < 4) return pyr_fail(PYR_ERR_DEVICE_NOMEM, "calibrating the long-vector method: too little free GPU memory to time vectors");
    /* measured longest first: in increasing length for the knee */
    for (int i = 0, j = ns - 1; i < j; i++, j--) {
        pyr_lv_sample_t t = samples[i];
        samples[i] = samples[j];
        samples[j] = t;
    }
    /* a wave: where the measured staircase starts, else the GPU's resident threads */
    const int64_t knee = pyr_lv_knee(samples, ns, PYR_LV_RISE);
    double threads = (double)(knee > 0 ? knee : hw);
    return pyr_lv_fit(samples, ns, &threads, 1, k, rms);
}
