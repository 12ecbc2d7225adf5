/* Tests of src/io/png.c, plot.c and font.c: images are valid PNGs of the
 * expected size with varied pixels; odd fields (constant, NaN, inf) work;
 * failures leave nothing behind.  The images stay in
 * <build>/test_png_out/ for a person to look at. */
#include <dirent.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "io/font.h"
#include "io/plot.h"
#include "io/png.h"

static char outdir[1024];

static const char *opath(const char *name)
{
    static char buf[4][1200];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", outdir, name);
    return buf[k];
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Read a PNG back as RGB; returns the pixels (free them) or NULL. */
static uint8_t *read_png(const char *path, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) {
        fprintf(stderr, "%s: %s\n", path, img.message);
        return NULL;
    }
    img.format = PNG_FORMAT_RGB;
    uint8_t *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
        fprintf(stderr, "%s: %s\n", path, img.message);
        free(px);
        png_image_free(&img);
        return NULL;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    return px;
}

/* Distinct colours in the image (up to a cap), to tell a drawing from a blank. */
static int distinct_colours(const uint8_t *px, int w, int h)
{
    static uint8_t seen[1 << 15];
    memset(seen, 0, sizeof seen);
    int n = 0;
    for (long i = 0; i < (long)w * h; i++) {
        unsigned key = (unsigned)(px[3 * i] >> 3) << 10 | (unsigned)(px[3 * i + 1] >> 3) << 5 | px[3 * i + 2] >> 3;
        if (!seen[key]) {
            seen[key] = 1;
            n++;
        }
    }
    return n;
}

static int count_colour(const uint8_t *px, int w, int h, uint8_t r, uint8_t g, uint8_t b)
{
    int n = 0;
    for (long i = 0; i < (long)w * h; i++)
        if (px[3 * i] == r && px[3 * i + 1] == g && px[3 * i + 2] == b) n++;
    return n;
}

/* Check a written PNG; returns its pixels for further checks (free them). */
static uint8_t *check_png(const char *name, int min_w, int max_w, int min_h, int max_h, int min_colours, int *w,
                          int *h)
{
    uint8_t *px = read_png(opath(name), w, h);
    CHECK(px != NULL, "%s is not a readable PNG", name);
    if (!px) return NULL;
    CHECK(*w >= min_w && *w <= max_w && *h >= min_h && *h <= max_h, "%s is %d x %d, expected %d..%d x %d..%d",
          name, *w, *h, min_w, max_w, min_h, max_h);
    int nc = distinct_colours(px, *w, *h);
    CHECK(nc >= min_colours, "%s has %d distinct colours, expected >= %d", name, nc, min_colours);
    return px;
}

static int count_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------ heat maps */

static void test_heatmaps(void)
{
    int w, h;
    uint8_t *px;

    /* A smooth double field with a title. */
    int64_t nx = 300, ny = 200;
    double *f = malloc(sizeof(double) * (size_t)(nx * ny));
    for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
            double x = (double)i / nx - 0.35, y = (double)j / ny - 0.5;
            f[j * nx + i] = 100.0 * exp(-(x * x + y * y) * 12.0) + 10.0 * sin(6.0 * x);
        }
    pyr_heatmap_opts_t o = {.title = "heat, t = 0.25 (300 x 200)"};
    CHECK_OK(pyr_png_write_heatmap(opath("heat_double.png"), f, PYR_DOUBLE, nx, ny, &o));
    px = check_png("heat_double.png", 300, 600, 200, 400, 60, &w, &h);
    if (px) {
        /* top-left corner of the map (row 0) and bottom-left (last row) */
        uint8_t a[3], b[3];
        pyr_colormap(0, a);
        pyr_colormap(1, b);
        CHECK(count_colour(px, w, h, a[0], a[1], a[2]) > 0, "minimum colour absent");
        CHECK(count_colour(px, w, h, b[0], b[1], b[2]) > 0, "maximum colour absent");
    }
    free(px);
    free(f);

    /* A large float field is reduced to max_pixels on its long side. */
    nx = 3000;
    ny = 1000;
    float *g = malloc(sizeof(float) * (size_t)(nx * ny));
    for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) g[j * nx + i] = (float)(sin(i * 0.004) * cos(j * 0.01) * 1e-3);
    CHECK_OK(pyr_png_write_heatmap(opath("heat_big.png"), g, PYR_FLOAT, nx, ny, NULL));
    px = check_png("heat_big.png", 1024, 1024 + 300, 341, 341 + 200, 60, &w, &h);
    free(px);
    pyr_heatmap_opts_t small = {.max_pixels = 200};
    CHECK_OK(pyr_png_write_heatmap(opath("heat_big_200.png"), g, PYR_FLOAT, nx, ny, &small));
    px = check_png("heat_big_200.png", 200, 200 + 300, 66, 66 + 300, 50, &w, &h);
    free(px);
    free(g);

    /* A tiny field is enlarged by replication. */
    double tiny[4 * 5];
    for (int i = 0; i < 20; i++) tiny[i] = i;
    CHECK_OK(pyr_png_write_heatmap(opath("heat_tiny.png"), tiny, PYR_DOUBLE, 5, 4, NULL));
    px = check_png("heat_tiny.png", 256, 256 + 300, 204, 204 + 300, 20, &w, &h);
    free(px);

    /* Constant, NaN-containing, all-NaN, infinite and 1-row fields. */
    double cst[64 * 64];
    for (int i = 0; i < 64 * 64; i++) cst[i] = 3.5;
    CHECK_OK(pyr_png_write_heatmap(opath("heat_constant.png"), cst, PYR_DOUBLE, 64, 64, NULL));
    px = check_png("heat_constant.png", 256, 600, 256, 600, 3, &w, &h);
    free(px);
    for (int j = 0; j < 64; j++)
        for (int i = 0; i < 64; i++) cst[j * 64 + i] = (i > 20 && i < 40 && j > 10 && j < 30) ? NAN : i + j;
    pyr_heatmap_opts_t nt = {.title = "with NaN"};
    CHECK_OK(pyr_png_write_heatmap(opath("heat_nan.png"), cst, PYR_DOUBLE, 64, 64, &nt));
    px = check_png("heat_nan.png", 256, 600, 256, 600, 50, &w, &h);
    if (px) {
        uint8_t grey[3];
        pyr_colormap(NAN, grey);
        CHECK(count_colour(px, w, h, grey[0], grey[1], grey[2]) > 19 * 19 * 16, "NaN block is not grey");
    }
    free(px);
    for (int i = 0; i < 64 * 64; i++) cst[i] = NAN;
    CHECK_OK(pyr_png_write_heatmap(opath("heat_all_nan.png"), cst, PYR_DOUBLE, 64, 64, NULL));
    px = check_png("heat_all_nan.png", 256, 600, 256, 600, 3, &w, &h);
    free(px);
    for (int i = 0; i < 64 * 64; i++) cst[i] = i % 3 == 0 ? INFINITY : i % 3 == 1 ? -INFINITY : i;
    CHECK_OK(pyr_png_write_heatmap(opath("heat_inf.png"), cst, PYR_DOUBLE, 64, 64, NULL));
    px = check_png("heat_inf.png", 256, 600, 256, 600, 3, &w, &h);
    free(px);
    float row[1000];
    for (int i = 0; i < 1000; i++) row[i] = (float)i;
    CHECK_OK(pyr_png_write_heatmap(opath("heat_row.png"), row, PYR_FLOAT, 1000, 1, NULL));
    px = check_png("heat_row.png", 1000, 1400, 24, 400, 50, &w, &h);
    free(px);

    char long_title[400];
    memset(long_title, 'x', sizeof long_title - 1);
    long_title[sizeof long_title - 1] = '\0';
    pyr_heatmap_opts_t lt = {.title = long_title};
    CHECK_OK(pyr_png_write_heatmap(opath("heat_long_title.png"), tiny, PYR_DOUBLE, 5, 4, &lt));
    px = check_png("heat_long_title.png", 256, 1600, 204, 600, 20, &w, &h);
    free(px);

    /* Errors. */
    CHECK_FAILS(pyr_png_write_heatmap(opath("bad.png"), tiny, PYR_DOUBLE, 0, 4, NULL), PYR_ERR_ARG, "0 x 4");
    CHECK_FAILS(pyr_png_write_heatmap(opath("bad.png"), NULL, PYR_DOUBLE, 5, 4, NULL), PYR_ERR_ARG, "NULL");
    CHECK(!file_exists(opath("bad.png")), "bad.png written");
    CHECK_FAILS(pyr_png_write_heatmap("/nonexistent_pyr_dir/x.png", tiny, PYR_DOUBLE, 5, 4, NULL), PYR_ERR_IO,
                "does not exist");
    char missing[1300];
    snprintf(missing, sizeof missing, "%s/missing/x.png", outdir);
    CHECK_FAILS(pyr_png_write_heatmap(missing, tiny, PYR_DOUBLE, 5, 4, NULL), PYR_ERR_IO, "missing");
    snprintf(missing, sizeof missing, "%s/missing", outdir);
    CHECK(!file_exists(missing), "%s was created", missing);
}

/* ------------------------------------------------------------------ plots */

static void test_plots(void)
{
    int w, h;
    uint8_t *px;

    /* Residual histories on a log axis, one with a zero and a NaN. */
    enum { N = 400 };
    double it[N], r1[N], r2[N], r3[N];
    for (int i = 0; i < N; i++) {
        it[i] = i;
        r1[i] = pow(10.0, -i / 40.0) * (1 + 0.3 * sin(i * 0.3));
        r2[i] = 0.5 * pow(10.0, -i / 70.0);
        r3[i] = 2e-2 * pow(10.0, -i / 120.0);
    }
    r3[100] = 0;   /* left out on a log axis */
    r3[200] = NAN; /* left out everywhere */
    pyr_plot_series_t s[3] = {
        {"multigrid V(2,2)", it, r1, N, 0},
        {"Jacobi", it, r2, N, 0},
        {"SOR omega=1.9", it, r3, N, 0},
    };
    pyr_plot_opts_t o = {"Residual history, 1025 x 1025 Poisson", "iteration", "||r|| / ||r0||", 1, 0, 0, 0};
    CHECK_OK(pyr_plot_write_png(opath("plot_residual.png"), s, 3, &o));
    px = check_png("plot_residual.png", 900, 900, 600, 600, 6, &w, &h);
    if (px) {
        CHECK(count_colour(px, w, h, 31, 100, 190) > 200, "first series (blue) hardly drawn");
        CHECK(count_colour(px, w, h, 230, 120, 20) > 200, "second series (orange) hardly drawn");
    }
    free(px);

    /* Measured vs predicted: markers and lines, linear axes, custom size. */
    double n[7] = {256, 512, 1024, 2048, 4096, 8192, 16384}, meas[7], pred[7];
    for (int i = 0; i < 7; i++) {
        pred[i] = 1.5e-9 * n[i] * n[i];
        meas[i] = pred[i] * (1.0 + 0.08 * sin(i * 1.7));
    }
    pyr_plot_series_t t[2] = {{"measured", n, meas, 7, 1}, {"predicted", n, pred, 7, 2}};
    pyr_plot_opts_t o2 = {"Time per step vs grid size", "n (grid is n x n)", "seconds", 0, 800, 500, 0};
    CHECK_OK(pyr_plot_write_png(opath("plot_sweep.png"), t, 2, &o2));
    px = check_png("plot_sweep.png", 800, 800, 500, 500, 4, &w, &h);
    free(px);
    o2.log_x = 1;
    o2.log_y = 1;
    o2.title = "Time per step vs grid size (log-log)";
    CHECK_OK(pyr_plot_write_png(opath("plot_sweep_loglog.png"), t, 2, &o2));
    px = check_png("plot_sweep_loglog.png", 800, 800, 500, 500, 4, &w, &h);
    free(px);

    /* Degenerate data: nothing, one point, constant, all non-positive on log. */
    CHECK_OK(pyr_plot_write_png(opath("plot_empty.png"), NULL, 0, NULL));
    px = check_png("plot_empty.png", 900, 900, 600, 600, 2, &w, &h);
    free(px);
    double one_x = 3, one_y = 7;
    pyr_plot_series_t one = {"one point", &one_x, &one_y, 1, 0};
    CHECK_OK(pyr_plot_write_png(opath("plot_one.png"), &one, 1, NULL));
    double cx[3] = {1, 2, 3}, cy[3] = {5, 5, 5}, zy[3] = {0, -1, 0};
    pyr_plot_series_t cs = {"constant", cx, cy, 3, 2};
    CHECK_OK(pyr_plot_write_png(opath("plot_constant.png"), &cs, 1, NULL));
    pyr_plot_series_t zs = {"", cx, zy, 3, 2};
    pyr_plot_opts_t lo = {NULL, NULL, NULL, 1, 0, 0, 0};
    CHECK_OK(pyr_plot_write_png(opath("plot_nonpositive_log.png"), &zs, 1, &lo));
    double narrow_y[3] = {3.1, 3.2, 3.3};
    pyr_plot_series_t ns = {"narrow", cx, narrow_y, 3, 2};
    CHECK_OK(pyr_plot_write_png(opath("plot_narrow_log.png"), &ns, 1, &lo));
    double dec_y[3] = {2e-3, 1e-2, 4e-2};
    pyr_plot_series_t ds = {"1.3 decades", cx, dec_y, 3, 2};
    CHECK_OK(pyr_plot_write_png(opath("plot_short_log.png"), &ds, 1, &lo));
    double wide_y[3] = {1e-300, 1, 1e300};
    pyr_plot_series_t ws = {"wide", cx, wide_y, 3, 2};
    CHECK_OK(pyr_plot_write_png(opath("plot_wide_log.png"), &ws, 1, &lo));
    px = check_png("plot_wide_log.png", 900, 900, 600, 600, 3, &w, &h);
    free(px);

    /* Errors leave nothing. */
    pyr_plot_series_t bad = {"bad", NULL, cy, 3, 0};
    CHECK_FAILS(pyr_plot_write_png(opath("bad_plot.png"), &bad, 1, NULL), PYR_ERR_ARG, "NULL x or y");
    pyr_plot_opts_t tiny = {NULL, NULL, NULL, 0, 50, 50, 0};
    CHECK_FAILS(pyr_plot_write_png(opath("bad_plot.png"), &cs, 1, &tiny), PYR_ERR_ARG, "50 x 50");
    CHECK(!file_exists(opath("bad_plot.png")), "bad_plot.png written");
    CHECK_FAILS(pyr_plot_write_png("/nonexistent_pyr_dir/p.png", &cs, 1, NULL), PYR_ERR_IO, "does not exist");
}

/* ------------------------------------------------------------------ helpers */

static void check_format(const char *got, const char *want)
{
    CHECK(strcmp(got, want) == 0, "formatted \"%s\", expected \"%s\"", got, want);
}

static void test_helpers(void)
{
    char b[32];
    pyr_format_sig(b, sizeof b, 0.123456, 4);
    check_format(b, "0.1235");
    pyr_format_sig(b, sizeof b, 1234.6, 4);
    check_format(b, "1235");
    pyr_format_sig(b, sizeof b, 1.5e6, 4);
    check_format(b, "1.5e6");
    pyr_format_sig(b, sizeof b, -2e-5, 4);
    check_format(b, "-2e-5");
    pyr_format_sig(b, sizeof b, 0, 4);
    check_format(b, "0");
    pyr_format_sig(b, sizeof b, 3.5, 4);
    check_format(b, "3.5");
    pyr_format_tick(b, sizeof b, 0.2, 0.2);
    check_format(b, "0.2");
    pyr_format_tick(b, sizeof b, 1.0, 0.2);
    check_format(b, "1.0");
    pyr_format_tick(b, sizeof b, -0.6000000000000001, 0.2);
    check_format(b, "-0.6");
    pyr_format_tick(b, sizeof b, 1e-17, 0.2);
    check_format(b, "0");
    pyr_format_tick(b, sizeof b, 3000, 1000);
    check_format(b, "3000");
    pyr_format_tick(b, sizeof b, 2.5e-4, 5e-5);
    check_format(b, "2.5e-4");
    pyr_format_tick(b, sizeof b, 4e6, 2e6);
    check_format(b, "4e6");
    pyr_format_tick(b, sizeof b, 0.25, 0.25);
    check_format(b, "0.25");
    CHECK(pyr_nice_step(1.0, 5) == 0.2, "nice step %g", pyr_nice_step(1.0, 5));
    CHECK(pyr_nice_step(9000, 5) == 2000, "nice step %g", pyr_nice_step(9000, 5));

    CHECK(pyr_font_text_width("abc", 2) == (3 * PYR_FONT_ADVANCE - 1) * 2, "text width");
    CHECK(pyr_font_text_width("", 2) == 0, "empty text width");

    /* The colour map gets lighter all the way (perceptual order). */
    double prev = -1;
    int monotone = 1;
    for (int i = 0; i <= 255; i++) {
        uint8_t c[3];
        pyr_colormap(i / 255.0, c);
        double lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
        if (lum < prev) monotone = 0;
        prev = lum;
    }
    CHECK(monotone, "colour map lightness is not monotone");

    /* Every printable character draws something (space excepted), and
     * characters outside ASCII fall back to '?' without crashing. */
    pyr_canvas_t c;
    CHECK_OK(pyr_canvas_init(&c, 20, 20, (pyr_rgb_t){255, 255, 255}));
    for (int ch = 33; ch < 127; ch++) {
        memset(c.px, 255, 20 * 20 * 3);
        char s[2] = {(char)ch, 0};
        pyr_font_draw(&c, 0, 0, s, 1, (pyr_rgb_t){0, 0, 0});
        int ink = 0;
        for (int i = 0; i < 20 * 20 * 3; i++) ink += c.px[i] == 0;
        CHECK(ink > 0, "glyph '%c' is blank", ch);
    }
    pyr_font_draw(&c, -5, -5, "\xc3\xa9\x01", 3, (pyr_rgb_t){0, 0, 0});
    pyr_font_draw_up(&c, 18, 18, "clipped text", 2, (pyr_rgb_t){0, 0, 0});
    pyr_canvas_line(&c, -100, -50, 300, 70, 3, (pyr_rgb_t){1, 2, 3});
    pyr_canvas_free(&c);
    CHECK_FAILS(pyr_canvas_init(&c, 0, 10, (pyr_rgb_t){0, 0, 0}), PYR_ERR_ARG, "0 x 10");
}

int main(void)
{
    snprintf(outdir, sizeof outdir, "%s/test_png_out", PYR_BINARY_DIR);
    mkdir(outdir, 0777);
    test_helpers();
    test_heatmaps();
    test_plots();
    CHECK(count_temporaries(outdir) == 0, "temporaries left in %s", outdir);
    printf("images in %s\n", outdir);
    return check_report();
}
