/* Maxwell's flux spectra as a PNG (pyr_spectra_write_png, maxwell_monitors.c), issue #46 item 6:
 * the slab of examples/maxwell_slab_spectrum.ini run with and without its slab, the transmittance
 * P / P0 of the transmission plane plotted and read back (libpng): the title, axis labels and tick
 * labels are where they belong (dark pixels), and the line's pixel rows are a falling linear function
 * of the Fabry-Perot transmittance at the frequency of each column (correlation < -0.995, within 4 px);
 * refusals: no run, a reference of other frequencies, no flux monitor. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "maxwell_util.h"

pyr_status_t pyr_spectra_write_png(const pyr_spectra_t *spectra, const char *path, const pyr_spectra_t *reference, int width);

static void set_ok(pyr_problem_t *p, const char *key, const char *value)
{
    pyr_status_t st = pyr_problem_set(p, key, value);
    CHECK(st == PYR_OK, "set %s = %s: %s", key, value, pyr_last_error());
}

static void slab(pyr_problem_t *p, const char *eps, const char *freqs)
{
    pyr_problem_default(p);
    const char *keys[][2] = {
        {"scheme.equation", "maxwell"}, {"grid.dims", "2"}, {"grid.nx", "241"}, {"grid.ny", "4"}, {"grid.lx", "2.4"}, {"grid.ly", "0.3"},
        {"scheme.mode", "te"}, {"scheme.courant", "0.99"}, {"scheme.steps", "1600"}, {"scheme.precision", "double"},
        {"boundary.kind", "cpml"}, {"boundary.cpml_cells", "20"}, {"boundary.faces", "x-,x+"},
        {"source.source1", "Ey line at 0.4 0 0.4 0.3 gaussian width=0.2 delay=1.0"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) set_ok(p, keys[i][0], keys[i][1]);
    char v[128];
    snprintf(v, sizeof v, "box 0.9975 1.4925 -1 1 eps_r=%s", eps);
    set_ok(p, "material.shape1", v);
    snprintf(v, sizeof v, "plane x at 1.8 freqs=%s", freqs);
    set_ok(p, "monitor.flux1", v);
}

static pyr_spectra_t *run(pyr_problem_t *p)
{
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(p, &s));
    CHECK_OK(pyr_spectra_attach(p, s));
    mx_result_t r;
    memset(&r, 0, sizeof r);
    CHECK(mx_reference(p, NULL, &r) == PYR_OK, "run: %s", pyr_last_error());
    mx_free(&r);
    pyr_spectra_attach(p, NULL);
    return s;
}

static uint8_t *read_png(const char *path, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) return NULL;
    img.format = PNG_FORMAT_RGB;
    uint8_t *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
        free(px);
        png_image_free(&img);
        return NULL;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    return px;
}

static int dark_in(const uint8_t *px, int w, int x0, int x1, int y0, int y1)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            const uint8_t *c = px + 3 * ((size_t)y * (size_t)w + (size_t)x);
            n += c[0] < 110 && c[1] < 110 && c[2] < 110;
        }
    return n;
}

int main(void)
{
    pyr_problem_t a, b;
    slab(&a, "4", "0.2:1.0:41");
    slab(&b, "1", "0.2:1.0:41");
    pyr_spectra_t *sa = run(&a), *sb = run(&b);
    char path[4096];
    snprintf(path, sizeof path, "%s/test_maxwell_spectra_png.png", PYR_BINARY_DIR);
    CHECK_OK(pyr_spectra_write_png(sa, path, sb, 900));
    int w = 0, h = 0;
    uint8_t *px = read_png(path, &w, &h);
    CHECK(px && w == 900 && h == 600, "%s: not a 900 x 600 PNG", path);
    if (px) {
        CHECK(dark_in(px, w, w / 4, 3 * w / 4, 0, 35) > 100, "no title");
        CHECK(dark_in(px, w, w / 4, 3 * w / 4, h - 45, h) > 100, "no x label");
        CHECK(dark_in(px, w, 0, 30, h / 4, 3 * h / 4) > 100, "no y label");
        CHECK(dark_in(px, w, 60, w, h - 80, h - 45) > 200, "no tick labels on x");
        /* the line (the first series' blue): the mean row of each column with one run of its pixels */
        double f[41], T[41], P[41], P0[41];
        CHECK_OK(pyr_spectra_flux(sa, 0, P));
        CHECK_OK(pyr_spectra_flux(sb, 0, P0));
        for (int i = 0; i < 41; i++) {
            f[i] = 0.2 + 0.8 * i / 40.0;
            T[i] = P[i] / P0[i];
        }
        double *col = calloc((size_t)w, sizeof *col), *row = calloc((size_t)w, sizeof *row);
        int n = 0;
        for (int x = 0; x < w; x++) {
            int lo = -1, hi = -1, cnt = 0;
            double sum = 0;
            for (int y = 0; y < h; y++) {
                const uint8_t *c = px + 3 * ((size_t)y * (size_t)w + (size_t)x);
                if (c[2] - c[0] > 60 && c[2] > 120) {
                    if (lo < 0) lo = y;
                    hi = y;
                    cnt++;
                    sum += y;
                }
            }
            if (cnt && hi - lo <= cnt + 2) {
                col[n] = x;
                row[n++] = sum / cnt;
            }
        }
        CHECK(n > 500, "the line covers %d columns", n);
        double c0 = col[0], c1 = col[n - 1];
        double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
        double *t = malloc((size_t)n * sizeof *t);
        for (int i = 0; i < n; i++) {
            const double fc = 0.2 + (col[i] - c0) / (c1 - c0) * 0.8;
            int j = (int)floor((fc - 0.2) / 0.02);
            if (j > 39) j = 39;
            if (j < 0) j = 0;
            const double u = (fc - f[j]) / 0.02;
            t[i] = T[j] + u * (T[j + 1] - T[j]);
            sx += t[i];
            sy += row[i];
            sxx += t[i] * t[i];
            syy += row[i] * row[i];
            sxy += t[i] * row[i];
        }
        const double cov = sxy - sx * sy / n, vx = sxx - sx * sx / n, vy = syy - sy * sy / n;
        const double corr = cov / sqrt(vx * vy), slope = cov / vx, icpt = (sy - slope * sx) / n;
        double worst = 0;
        for (int i = 0; i < n; i++) worst = fmax(worst, fabs(row[i] - (icpt + slope * t[i])));
        CHECK(slope < 0 && corr < -0.995, "the line does not follow the transmittance (correlation %.4f)", corr);
        CHECK(worst < 4, "the line strays %.1f px from the transmittance", worst);
        free(t);
        free(col);
        free(row);
        free(px);
    }
    /* power spectra without a reference */
    CHECK_OK(pyr_spectra_write_png(sa, path, NULL, 0));
    /* refusals */
    pyr_problem_t c;
    slab(&c, "1", "0.2:1.0:21");
    pyr_spectra_t *sc = run(&c), *fresh = NULL;
    CHECK_FAILS(pyr_spectra_write_png(sa, path, sc, 0), PYR_ERR_ARG, "the reference has no flux1 of the same frequencies");
    CHECK_OK(pyr_spectra_create(&a, &fresh));
    CHECK_FAILS(pyr_spectra_write_png(fresh, path, NULL, 0), PYR_ERR_ARG, "holds no run's transforms");
    CHECK_FAILS(pyr_spectra_write_png(sa, path, NULL, 50), PYR_ERR_ARG, "200 .. 8000");
    pyr_problem_t d = a;
    pyr_spectra_destroy(&fresh);
    d.maxwell.nflux = 0;
    set_ok(&d, "monitor.dft1", "Ey point at 1.2 0.1 freqs=0.5");
    pyr_spectra_t *sd = run(&d);
    CHECK_FAILS(pyr_spectra_write_png(sd, path, NULL, 0), PYR_ERR_ARG, "no flux monitor");
    pyr_spectra_destroy(&sa);
    pyr_spectra_destroy(&sb);
    pyr_spectra_destroy(&sc);
    pyr_spectra_destroy(&sd);
    remove(path);
    return check_report();
}
