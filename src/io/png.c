/* The colour map and the heat map (io/png.h). */
#include "io/png.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/canvas.h"
#include "io/font.h"

/* ---------------------------------------------------------------- colours */

/* Anchors of the colour map: lightness rises steadily from a dark purple
 * through blue, teal and green to a light yellow. */
static const double cmap_anchor[][3] = {
    {28, 8, 58},    /* dark purple */
    {62, 38, 128},  /* indigo */
    {42, 96, 160},  /* blue */
    {30, 150, 145}, /* teal */
    {110, 196, 88}, /* green */
    {248, 230, 48}, /* yellow */
};
#define CMAP_N ((int)(sizeof cmap_anchor / sizeof cmap_anchor[0]))

void pyr_colormap(double t, uint8_t rgb[3])
{
    if (isnan(t)) {
        rgb[0] = rgb[1] = rgb[2] = 150;
        return;
    }
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    double pos = t * (CMAP_N - 1);
    int k = (int)pos;
    if (k >= CMAP_N - 1) k = CMAP_N - 2;
    double f = pos - k;
    for (int i = 0; i < 3; i++) {
        double v = cmap_anchor[k][i] + f * (cmap_anchor[k + 1][i] - cmap_anchor[k][i]);
        rgb[i] = (uint8_t)(v + 0.5);
    }
}

/* ---------------------------------------------------------------- heat map */

#define TEXT_SCALE 2
static const pyr_rgb_t WHITE = {255, 255, 255};
static const pyr_rgb_t INK = {30, 30, 30};
static const pyr_rgb_t FRAME = {90, 90, 90};

static double value_at(const void *data, pyr_precision_t p, size_t i)
{
    return p == PYR_DOUBLE ? ((const double *)data)[i] : (double)((const float *)data)[i];
}

/* Box average of the field onto a W x H grid (NaN if any value in the box is
 * NaN).  out has W*H doubles. */
static pyr_status_t resample(const void *data, pyr_precision_t p, int64_t w, int64_t h, int W, int H, double *out)
{
    int64_t *xs0 = malloc(sizeof(int64_t) * (size_t)W * 2);
    double *cnt = calloc((size_t)W, sizeof(double));
    if (!xs0 || !cnt) {
        free(xs0);
        free(cnt);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory resampling a heat map");
    }
    int64_t *xs1 = xs0 + W;
    for (int X = 0; X < W; X++) {
        xs0[X] = (int64_t)X * w / W;
        xs1[X] = (int64_t)(X + 1) * w / W;
        if (xs1[X] <= xs0[X]) xs1[X] = xs0[X] + 1;
    }
    for (int Y = 0; Y < H; Y++) {
        int64_t y0 = (int64_t)Y * h / H, y1 = (int64_t)(Y + 1) * h / H;
        if (y1 <= y0) y1 = y0 + 1;
        double *row = out + (size_t)Y * (size_t)W;
        memset(row, 0, sizeof(double) * (size_t)W);
        memset(cnt, 0, sizeof(double) * (size_t)W);
        for (int64_t y = y0; y < y1; y++) {
            size_t base = (size_t)y * (size_t)w;
            for (int X = 0; X < W; X++) {
                double s = 0;
                for (int64_t x = xs0[X]; x < xs1[X]; x++) s += value_at(data, p, base + (size_t)x);
                row[X] += s;
                cnt[X] += (double)(xs1[X] - xs0[X]);
            }
        }
        for (int X = 0; X < W; X++) row[X] /= cnt[X];
    }
    free(xs0);
    free(cnt);
    return PYR_OK;
}

pyr_status_t pyr_png_write_heatmap(const char *path, const void *data, pyr_precision_t p, int64_t width,
                                   int64_t height, const pyr_heatmap_opts_t *opts)
{
    if (!path) return pyr_fail(PYR_ERR_ARG, "pyr_png_write_heatmap: path is NULL");
    if (!data) return pyr_fail(PYR_ERR_ARG, "writing heat map %s: data is NULL", path);
    if (p != PYR_FLOAT && p != PYR_DOUBLE)
        return pyr_fail(PYR_ERR_ARG, "writing heat map %s: precision %d is neither PYR_FLOAT nor PYR_DOUBLE",
                        path, (int)p);
    if (width < 1 || height < 1 || width > INT64_MAX / height || (uint64_t)(width * height) > SIZE_MAX / 8)
        return pyr_fail(PYR_ERR_ARG, "writing heat map %s: field size %lld x %lld; each side must be >= 1",
                        path, (long long)width, (long long)height);
    int maxpx = opts && opts->max_pixels > 0 ? opts->max_pixels : 1024;
    if (maxpx < 16) maxpx = 16;
    if (maxpx > 4096) maxpx = 4096;
    const char *title = opts && opts->title && *opts->title ? opts->title : NULL;

    /* Range of the finite values. */
    size_t n = (size_t)(width * height);
    double lo = INFINITY, hi = -INFINITY;
    size_t nan_count = 0;
    for (size_t i = 0; i < n; i++) {
        double v = value_at(data, p, i);
        if (isnan(v)) nan_count++;
        else if (isfinite(v)) {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    int have_range = lo <= hi;
    int constant = have_range && lo == hi;

    /* Size of the map in pixels. */
    int64_t longest = width > height ? width : height;
    int W, H;
    if (longest > maxpx) {
        W = (int)(width * maxpx / longest);
        H = (int)(height * maxpx / longest);
    } else {
        int64_t rep = (256 + longest - 1) / longest;
        if (rep * longest > maxpx) rep = maxpx / longest;
        if (rep < 1) rep = 1;
        W = (int)(width * rep);
        H = (int)(height * rep);
    }
    const int min_side = 24; /* a 1-pixel strip would be invisible */
    if (W < min_side) W = min_side;
    if (H < min_side) H = min_side;

    double *img = malloc(sizeof(double) * (size_t)W * (size_t)H);
    if (!img) return pyr_fail(PYR_ERR_NOMEM, "writing heat map %s: out of memory for %d x %d pixels", path, W, H);
    pyr_status_t st = resample(data, p, width, height, W, H, img);
    if (st != PYR_OK) {
        free(img);
        return st;
    }

    /* Colour bar labels. */
    const int S = TEXT_SCALE, th = pyr_font_text_height(S);
    char lo_text[32], hi_text[32];
    if (have_range) {
        pyr_format_sig(lo_text, sizeof lo_text, lo, 4);
        pyr_format_sig(hi_text, sizeof hi_text, hi, 4);
    } else {
        snprintf(lo_text, sizeof lo_text, "all NaN");
        hi_text[0] = '\0';
    }
    double step = have_range && !constant ? pyr_nice_step(hi - lo, 5) : 0;
    int label_w = pyr_font_text_width(lo_text, S);
    if (pyr_font_text_width(hi_text, S) > label_w) label_w = pyr_font_text_width(hi_text, S);
    if (step > 0)
        for (double k = ceil(lo / step); k * step <= hi; k++) {
            char t[32];
            pyr_format_tick(t, sizeof t, k * step, step);
            if (pyr_font_text_width(t, S) > label_w) label_w = pyr_font_text_width(t, S);
        }
    if (constant && pyr_font_text_width("constant", S) > label_w) label_w = pyr_font_text_width("constant", S);
    if (nan_count && pyr_font_text_width("NaN", S) + 2 * S * 4 > label_w)
        label_w = pyr_font_text_width("NaN", S) + 2 * S * 4;

    /* Layout. */
    const int margin = 16, gap = 24, bar_w = 22, tick_len = 6;
    int top = margin + (title ? th + 14 : 0);
    int bar_h = H > 200 ? H : 200;
    int body_h = bar_h + (nan_count ? th + 16 : 0);
    if (H > body_h) body_h = H;
    int bar_x = margin + W + gap;
    int cw = bar_x + bar_w + tick_len + 6 + label_w + margin;
    int title_w = title ? pyr_font_text_width(title, S) + 2 * margin : 0;
    if (cw < title_w) cw = title_w < 1600 ? title_w : (cw > 1600 ? cw : 1600); /* longer titles are cut */
    if (cw > PYR_CANVAS_MAX) cw = PYR_CANVAS_MAX;
    int ch = top + body_h + th / 2 + margin;

    pyr_canvas_t c;
    st = pyr_canvas_init(&c, cw, ch, WHITE);
    if (st != PYR_OK) {
        free(img);
        return st;
    }
    /* Map, centred vertically on the bar when it is shorter. */
    int map_y = top + (bar_h > H ? (bar_h - H) / 2 : 0);
    for (int Y = 0; Y < H; Y++)
        for (int X = 0; X < W; X++) {
            double v = img[(size_t)Y * (size_t)W + (size_t)X];
            double t = isnan(v) ? NAN : constant ? 0.5 : isinf(v) ? (v > 0 ? 1 : 0) : (v - lo) / (hi - lo);
            if (!have_range && !isnan(v)) t = v > 0 ? 1 : 0; /* only infinities */
            uint8_t rgb[3];
            pyr_colormap(t, rgb);
            pyr_canvas_put(&c, margin + X, map_y + Y, (pyr_rgb_t){rgb[0], rgb[1], rgb[2]});
        }
    free(img);
    pyr_canvas_rect(&c, margin - 1, map_y - 1, W + 2, H + 2, FRAME);

    /* Colour bar: top = hi. */
    int bar_y = top;
    for (int j = 0; j < bar_h; j++) {
        double t = constant ? 0.5 : 1.0 - (double)j / (bar_h - 1);
        uint8_t rgb[3];
        pyr_colormap(have_range ? t : NAN, rgb);
        pyr_canvas_fill_rect(&c, bar_x, bar_y + j, bar_w, 1, (pyr_rgb_t){rgb[0], rgb[1], rgb[2]});
    }
    pyr_canvas_rect(&c, bar_x - 1, bar_y - 1, bar_w + 2, bar_h + 2, FRAME);
    int lx = bar_x + bar_w + tick_len + 6;
    if (!have_range || constant) {
        int yc = bar_y + bar_h / 2;
        pyr_canvas_fill_rect(&c, bar_x + bar_w, yc, tick_len, 2, FRAME);
        pyr_font_draw(&c, lx, yc - 7 * S / 2, lo_text, S, INK);
        if (constant) pyr_font_draw(&c, lx, yc - 7 * S / 2 + th + 4, "constant", S, INK);
    } else {
        int ylo = bar_y + bar_h - 1, yhi = bar_y;
        pyr_canvas_fill_rect(&c, bar_x + bar_w, yhi, tick_len, 2, FRAME);
        pyr_canvas_fill_rect(&c, bar_x + bar_w, ylo - 1, tick_len, 2, FRAME);
        pyr_font_draw(&c, lx, yhi - 7 * S / 2, hi_text, S, INK);
        pyr_font_draw(&c, lx, ylo - 7 * S / 2, lo_text, S, INK);
        for (double k = ceil(lo / step); k * step <= hi; k++) {
            double v = k * step;
            int y = bar_y + (int)lround((1.0 - (v - lo) / (hi - lo)) * (bar_h - 1));
            if (abs(y - ylo) < th + 4 || abs(y - yhi) < th + 4) continue;
            char t[32];
            pyr_format_tick(t, sizeof t, v, step);
            pyr_canvas_fill_rect(&c, bar_x + bar_w, y, tick_len - 2, 1, FRAME);
            pyr_font_draw(&c, lx, y - 7 * S / 2, t, S, INK);
        }
    }
    if (nan_count) {
        int y = bar_y + bar_h + 14, sw = 4 * S;
        uint8_t g[3];
        pyr_colormap(NAN, g);
        pyr_canvas_fill_rect(&c, lx, y + (7 * S - sw) / 2, sw, sw, (pyr_rgb_t){g[0], g[1], g[2]});
        pyr_canvas_rect(&c, lx, y + (7 * S - sw) / 2, sw, sw, FRAME);
        pyr_font_draw(&c, lx + sw + 2 * S * 2, y, "NaN", S, INK);
    }
    if (title) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", title);
        size_t len = strlen(buf);
        while (len > 3 && pyr_font_text_width(buf, S) > cw - 2 * margin) {
            len--;
            memcpy(buf + len - 3, "...", 4);
        }
        int tw = pyr_font_text_width(buf, S);
        int tx = (cw - tw) / 2;
        if (tx < margin) tx = margin;
        pyr_font_draw(&c, tx, margin, buf, S, INK);
    }
    st = pyr_canvas_write_png(&c, path);
    pyr_canvas_free(&c);
    return st;
}
