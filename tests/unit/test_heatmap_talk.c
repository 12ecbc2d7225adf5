/* Heat maps fit for a talk (issue 49): pyr_png_write_heatmap drawn
 * image_width pixels wide with physical axes (ticks, names with units), y
 * upward, a colour bar that keeps its scale, and the diverging map centred
 * at 0 chosen for a field with both signs.  Decoded with libpng.  The images
 * stay in <build>/test_heatmap_talk_out/. */
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "core/error.h"
#include "io/png.h"

static char dir[1024];

static const char *opath(const char *name)
{
    static char buf[1200];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
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

static const uint8_t *at(const uint8_t *px, int w, int x, int y) { return px + ((size_t)y * (size_t)w + (size_t)x) * 3; }
static int dark(const uint8_t *q) { return q[0] < 80 && q[1] < 80 && q[2] < 80; }
/* a colour of the map or the bar, not white, ink, frame or grey */
static int coloured(const uint8_t *q) { return abs(q[0] - q[2]) > 40 || abs(q[0] - q[1]) > 40; }

/* The bounding box of the map: the coloured pixels left of the colour bar
 * (the first column from the left with coloured pixels starts the map; the
 * map ends at the first column after it with none). */
static void map_box(const uint8_t *px, int w, int h, int *x0, int *x1, int *y0, int *y1)
{
    *x0 = *x1 = *y0 = *y1 = -1;
    for (int x = 0; x < w; x++) {
        int any = 0;
        for (int y = 0; y < h; y++)
            if (coloured(at(px, w, x, y))) {
                any = 1;
                if (*y0 < 0 || y < *y0) *y0 = y;
                if (y > *y1) *y1 = y;
            }
        if (any && *x0 < 0) *x0 = x;
        if (any) *x1 = x;
        if (!any && *x0 >= 0) break;
    }
}

/* The column of the colour bar: right of the map, the one whose pixels
 * take the most distinct colours from top to bottom. */
static int bar_column(const uint8_t *px, int w, int h, int from, int *distinct)
{
    int best = -1;
    *distinct = 0;
    for (int x = from; x < w; x++) {
        int n = 0;
        for (int y = 1; y < h; y++)
            if (coloured(at(px, w, x, y)) && memcmp(at(px, w, x, y), at(px, w, x, y - 1), 3)) n++;
        if (n > *distinct) {
            *distinct = n;
            best = x;
        }
    }
    return best;
}

/* A signed field on 201 x 101 nodes of a 2 x 1 m box: the first third of
 * the rows (y near 0) positive, the last third negative and half as large,
 * the middle third exactly zero. */
static double *signed_field(int64_t nx, int64_t ny)
{
    double *f = malloc(sizeof(double) * (size_t)(nx * ny));
    for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
            const double s = 1.0 + (double)i / (double)nx;
            f[j * nx + i] = j < ny / 3 ? s : j >= 2 * ny / 3 ? -0.5 * s : 0.0;
        }
    return f;
}

static void test_talk_map(void)
{
    const int64_t nx = 201, ny = 101;
    double *f = signed_field(nx, ny);
    const pyr_heatmap_opts_t o = {.title = "Ez after 400 steps (t = 1.2e-9)", .image_width = 1920, .colormap = PYR_COLORMAP_AUTO,
                                  .x0 = 0, .x1 = 2, .y0 = 0, .y1 = 1, .units = "m", .bar_label = "Ez [V/m]", .y_up = 1};
    CHECK_OK(pyr_png_write_heatmap(opath("talk_signed.png"), f, PYR_DOUBLE, nx, ny, &o));
    int w = 0, h = 0;
    uint8_t *px = read_png(opath("talk_signed.png"), &w, &h);
    CHECK(px != NULL, "talk_signed.png read back");
    if (!px) {
        free(f);
        return;
    }
    CHECK(w == 1920, "the image is %d pixels wide, want image_width 1920", w);
    int mx0, mx1, my0, my1;
    map_box(px, w, h, &mx0, &mx1, &my0, &my1);
    const int mw = mx1 - mx0 + 1, mh = my1 - my0 + 1;
    CHECK(mx0 > 0 && mw > w / 2, "the map fills most of the width: columns %d..%d of %d", mx0, mx1, w);
    /* 2 m by 1 m with equal spacings: twice as wide as tall */
    CHECK(fabs((double)mw / mh - 2.0) < 0.05, "the map is %d x %d pixels; the extents' 2:1", mw, mh);
    /* the middle third is zero: the diverging map's neutral colour, by default for a field with both signs */
    const uint8_t *mid = at(px, w, mx0 + mw / 2, my0 + mh / 2);
    uint8_t neutral[3];
    pyr_colormap_of(PYR_COLORMAP_DIVERGING, 0.5, neutral);
    CHECK(mid[0] == 247 && mid[1] == 247 && mid[2] == 247 && !memcmp(mid, neutral, 3),
          "the zero band is (%d, %d, %d), want the diverging map's neutral (247, 247, 247)", mid[0], mid[1], mid[2]);
    /* y up: row 0 (positive) at the bottom, red; the last rows (negative) at the top, blue */
    const uint8_t *bottom = at(px, w, mx1 - 3, my1 - 3), *topq = at(px, w, mx1 - 3, my0 + 3);
    CHECK(bottom[0] > bottom[2] + 60, "the map's bottom (row 0, positive) is (%d, %d, %d), want red", bottom[0], bottom[1], bottom[2]);
    CHECK(topq[2] > topq[0] + 40, "the map's top (the last rows, negative) is (%d, %d, %d), want blue", topq[0], topq[1], topq[2]);
    /* symmetric range +-2: the negative half (at most -1) is paler than the positive end */
    const uint8_t *right_bottom = at(px, w, mx1 - 3, my1 - 3);
    CHECK(right_bottom[0] > 150 && right_bottom[2] < 80, "the largest value (2, the range's top) is (%d, %d, %d), want the red end",
          right_bottom[0], right_bottom[1], right_bottom[2]);
    /* the colour bar right of the map varies along it, red at the top, blue at the bottom */
    int distinct = 0;
    const int bx = bar_column(px, w, h, mx1 + 2, &distinct);
    CHECK(bx > mx1 && distinct > 100, "the colour bar (column %d) takes %d colours along it, want > 100", bx, distinct);
    if (bx > mx1) {
        int by0 = -1, by1 = -1;
        for (int y = 0; y < h; y++)
            if (coloured(at(px, w, bx, y))) {
                if (by0 < 0) by0 = y;
                by1 = y;
            }
        CHECK(by0 >= 0 && at(px, w, bx, by0)[0] > at(px, w, bx, by0)[2] && at(px, w, bx, by1)[2] > at(px, w, bx, by1)[0],
              "the bar runs from red (top) to blue (bottom)");
        /* its scale beside it: dark labels right of the bar */
        int ink = 0;
        for (int y = by0; y <= by1; y++)
            for (int x = bx + 8; x < w; x++) ink += dark(at(px, w, x, y));
        CHECK(ink > 200, "the colour bar's labels: %d dark pixels right of it", ink);
    }
    /* axes: tick labels and names below and left of the map */
    int below = 0, left = 0;
    for (int y = my1 + 4; y < h; y++)
        for (int x = mx0; x <= mx1; x++) below += dark(at(px, w, x, y));
    for (int y = my0; y <= my1; y++)
        for (int x = 0; x < mx0 - 4; x++) left += dark(at(px, w, x, y));
    CHECK(below > 400, "the x axis's labels and name: %d dark pixels below the map", below);
    CHECK(left > 400, "the y axis's labels and name: %d dark pixels left of the map", left);
    free(px);

    /* the same without axes and y down (the zero options' drawing): nothing below or left of the map, positive rows on top */
    const pyr_heatmap_opts_t plain = {.colormap = PYR_COLORMAP_AUTO};
    CHECK_OK(pyr_png_write_heatmap(opath("plain_signed.png"), f, PYR_DOUBLE, nx, ny, &plain));
    px = read_png(opath("plain_signed.png"), &w, &h);
    CHECK(px != NULL, "plain_signed.png read back");
    if (px) {
        map_box(px, w, h, &mx0, &mx1, &my0, &my1);
        below = left = 0;
        for (int y = my1 + 4; y < h; y++)
            for (int x = mx0; x <= mx1; x++) below += dark(at(px, w, x, y));
        for (int y = my0; y <= my1; y++)
            for (int x = 0; x < mx0 - 4; x++) left += dark(at(px, w, x, y));
        CHECK(below == 0 && left == 0, "no axes without extents: %d, %d dark pixels", below, left);
        const uint8_t *t = at(px, w, (mx0 + mx1) / 2, my0 + 3);
        CHECK(t[0] > t[2] + 60, "y down: row 0 (positive) on top, red; it is (%d, %d, %d)", t[0], t[1], t[2]);
        free(px);
    }

    /* gray: every pixel of the map grey */
    const pyr_heatmap_opts_t gray = {.colormap = PYR_COLORMAP_GRAY, .x0 = 0, .x1 = 2, .y0 = 0, .y1 = 1, .y_up = 1};
    CHECK_OK(pyr_png_write_heatmap(opath("gray.png"), f, PYR_DOUBLE, nx, ny, &gray));
    px = read_png(opath("gray.png"), &w, &h);
    if (px) {
        int coloured_px = 0;
        for (int i = 0; i < w * h; i++) coloured_px += coloured(px + 3 * (size_t)i);
        CHECK(coloured_px == 0, "gray: %d coloured pixels", coloured_px);
        free(px);
    }
    free(f);
}

/* A field of one sign keeps the sequential map under auto; diverging asked
 * for is centred at 0 all the same. */
static void test_one_sign(void)
{
    double g[32 * 16];
    for (int i = 0; i < 32 * 16; i++) g[i] = (i % 32 < 8) ? 0.0 : 1.0 + i % 32;
    int w, h;
    const pyr_heatmap_opts_t a = {.colormap = PYR_COLORMAP_AUTO, .image_width = 640};
    CHECK_OK(pyr_png_write_heatmap(opath("positive_auto.png"), g, PYR_DOUBLE, 32, 16, &a));
    uint8_t *px = read_png(opath("positive_auto.png"), &w, &h);
    if (px) {
        CHECK(w == 640, "%d pixels wide, want 640", w);
        uint8_t v0[3], n[3] = {247, 247, 247};
        pyr_colormap(0, v0);
        int lowest = 0, neutral = 0;
        for (int i = 0; i < w * h; i++) {
            lowest += !memcmp(px + 3 * (size_t)i, v0, 3);
            neutral += !memcmp(px + 3 * (size_t)i, n, 3);
        }
        CHECK(lowest > 1000 && neutral == 0, "auto on a field >= 0: viridis (its lowest colour at the zeros: %d pixels, the diverging "
              "map's neutral: %d)", lowest, neutral);
        free(px);
    }
    const pyr_heatmap_opts_t d = {.colormap = PYR_COLORMAP_DIVERGING};
    CHECK_OK(pyr_png_write_heatmap(opath("positive_diverging.png"), g, PYR_DOUBLE, 32, 16, &d));
    px = read_png(opath("positive_diverging.png"), &w, &h);
    if (px) {
        int found = 0;
        for (int x = 0; x < w && !found; x++)
            for (int y = 0; y < h && !found; y++) {
                const uint8_t *q = at(px, w, x, y);
                found = q[0] == 247 && q[1] == 247 && q[2] == 247;
            }
        CHECK(found, "diverging on a field >= 0: its zeros in the neutral colour");
        free(px);
    }
}

static void test_refusals(void)
{
    double t[4] = {0, 1, 2, 3};
    pyr_heatmap_opts_t o = {.image_width = 120};
    CHECK_FAILS(pyr_png_write_heatmap(opath("bad.png"), t, PYR_DOUBLE, 2, 2, &o), PYR_ERR_ARG, "300..8192");
    o.image_width = 0;
    o.colormap = 7;
    CHECK_FAILS(pyr_png_write_heatmap(opath("bad.png"), t, PYR_DOUBLE, 2, 2, &o), PYR_ERR_ARG, "colour map 7");
    o.colormap = 0;
    o.x1 = NAN;
    CHECK_FAILS(pyr_png_write_heatmap(opath("bad.png"), t, PYR_DOUBLE, 2, 2, &o), PYR_ERR_ARG, "x1");
    struct stat sb;
    CHECK(stat(opath("bad.png"), &sb) != 0, "a refused heat map leaves no file");
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/test_heatmap_talk_out", PYR_BINARY_DIR);
    mkdir(dir, 0777);
    test_talk_map();
    test_one_sign();
    test_refusals();
    return check_report();
}
