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

/* Anchors of the diverging map: blue below zero, red above, the same
 * lightness either side at equal distances, a near-white neutral at the
 * middle (0 of a symmetric range). */
static const double div_anchor[][3] = {
    {33, 102, 172},  /* blue */
    {103, 169, 207}, /* light blue */
    {209, 229, 240}, /* pale blue */
    {247, 247, 247}, /* neutral */
    {253, 219, 199}, /* pale red */
    {239, 138, 98},  /* light red */
    {178, 24, 43},   /* red */
};
#define DIV_N ((int)(sizeof div_anchor / sizeof div_anchor[0]))

static void interpolate(const double (*anchor)[3], int n, double t, uint8_t rgb[3])
{
    double pos = t * (n - 1);
    int k = (int)pos;
    if (k >= n - 1) k = n - 2;
    double f = pos - k;
    for (int i = 0; i < 3; i++) {
        double v = anchor[k][i] + f * (anchor[k + 1][i] - anchor[k][i]);
        rgb[i] = (uint8_t)(v + 0.5);
    }
}

void pyr_colormap_of(int map, double t, uint8_t rgb[3])
{
    if (isnan(t) || map == PYR_COLORMAP_VIRIDIS || map == PYR_COLORMAP_AUTO) {
        pyr_colormap(t, rgb);
        return;
    }
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    if (map == PYR_COLORMAP_GRAY) rgb[0] = rgb[1] = rgb[2] = (uint8_t)(t * 255 + 0.5);
    else interpolate(div_anchor, DIV_N, t, rgb);
}

/* ---------------------------------------------------------------- heat map */

static const pyr_rgb_t WHITE = {255, 255, 255};
static const pyr_rgb_t INK = {30, 30, 30};
static const pyr_rgb_t FRAME = {90, 90, 90};

#define MAX_AXIS_TICKS 48

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

/* The ticks of one physical axis of the map: values a nice step apart
 * between the first and the last node's coordinate, as many as fit their
 * labels without crowding. */
typedef struct {
    double v[MAX_AXIS_TICKS];
    char text[MAX_AXIS_TICKS][32];
    int n;
    int label_w; /* widest label */
} ticks_t;

static void build_ticks(ticks_t *t, double a, double b, int pixels, int is_x, int S)
{
    t->n = 0;
    t->label_w = 0;
    const double lo = fmin(a, b), hi = fmax(a, b);
    if (!(hi > lo) || !isfinite(hi - lo) || pixels < 2) return;
    const int per = (is_x ? 100 : 60) * S / 2; /* pixels per interval to aim for */
    for (int target = pixels / per > 1 ? pixels / per : 2; target >= 1; target--) {
        const double step = pyr_nice_step(hi - lo, target);
        t->n = 0;
        t->label_w = 0;
        for (double k = ceil(lo / step - 1e-9); k * step <= hi + 1e-9 * step && t->n < MAX_AXIS_TICKS; k++) {
            t->v[t->n] = k * step;
            pyr_format_tick(t->text[t->n], sizeof t->text[t->n], k * step, step);
            const int w = pyr_font_text_width(t->text[t->n], S);
            if (w > t->label_w) t->label_w = w;
            t->n++;
        }
        const double gap = t->n > 1 ? step / (hi - lo) * pixels : pixels;
        const int need = is_x ? t->label_w + 8 * S : pyr_font_text_height(S) + 4 * S;
        if (gap >= need) break;
    }
}

/* Pixel offset, from the map's first column or row, of coordinate v on an
 * axis whose n nodes run from a (first) to b (last), each node a cell of
 * pixels / n pixels: the node's value at the cell's centre. */
static double axis_offset(double v, double a, double b, int64_t n, int pixels)
{
    const double u = n > 1 ? (v - a) / (b - a) * (double)(n - 1) : 0.0;
    return (u + 0.5) * pixels / (double)n;
}

/* "x [m]", or the name alone. */
static void axis_title(char *buf, size_t cap, const char *name, const char *units)
{
    if (units && *units) snprintf(buf, cap, "%s [%s]", name, units);
    else snprintf(buf, cap, "%s", name);
}

/* Text shortened with "..." to fit max_w pixels. */
static void fit_text(char *buf, size_t cap, const char *text, int max_w, int S)
{
    snprintf(buf, cap, "%s", text);
    size_t len = strlen(buf);
    while (len > 3 && pyr_font_text_width(buf, S) > max_w) {
        len--;
        memcpy(buf + len - 3, "...", 4);
    }
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
    const pyr_heatmap_opts_t none = {0};
    if (!opts) opts = &none;
    const int image_width = opts->image_width;
    if (image_width != 0 && (image_width < 300 || image_width > 8192))
        return pyr_fail(PYR_ERR_ARG, "writing heat map %s: image width %d pixels; use 300..8192 (0: as wide as the map needs)",
                        path, image_width);
    if (opts->colormap < PYR_COLORMAP_VIRIDIS || opts->colormap > PYR_COLORMAP_DIVERGING)
        return pyr_fail(PYR_ERR_ARG, "writing heat map %s: colour map %d; use a pyr_colormap_t (viridis, auto, gray, diverging)",
                        path, opts->colormap);
    const double ex[4] = {opts->x0, opts->x1, opts->y0, opts->y1};
    for (int k = 0; k < 4; k++)
        if (!isfinite(ex[k]))
            return pyr_fail(PYR_ERR_ARG, "writing heat map %s: the extent %s is %g; the extents must be finite", path,
                            (const char *const[]){"x0", "x1", "y0", "y1"}[k], ex[k]);
    const int axes = opts->x0 != opts->x1 || opts->y0 != opts->y1;
    int maxpx = opts->max_pixels > 0 ? opts->max_pixels : 1024;
    if (maxpx < 16) maxpx = 16;
    if (maxpx > 4096) maxpx = 4096;
    const char *title = opts->title && *opts->title ? opts->title : NULL;
    const char *bar_label = opts->bar_label && *opts->bar_label ? opts->bar_label : NULL;
    const int y_up = opts->y_up != 0;

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
    /* A diverging map is centred on 0: the range made symmetric, so that the
     * neutral colour is zero and equal colours either side are equal sizes. */
    int map = opts->colormap;
    if (map == PYR_COLORMAP_AUTO) map = have_range && lo < 0 && hi > 0 ? PYR_COLORMAP_DIVERGING : PYR_COLORMAP_VIRIDIS;
    if (map == PYR_COLORMAP_DIVERGING && have_range) {
        const double m = fmax(fabs(lo), fabs(hi));
        lo = -m;
        hi = m;
    }
    int constant = have_range && lo == hi;

    /* Text scale, and the colour bar's labels (they decide the right margin). */
    const int S = image_width ? pyr_text_scale(image_width) : 2, th = pyr_font_text_height(S);
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

    /* Layout, in units that grow with the text: the map at the left (with
     * its axes' ticks and names left of and below it), the colour bar at
     * the right. */
    const int margin = 8 * S, gap = 12 * S, bar_w = 11 * S, tick_len = 3 * S;
    char xname[160], yname[160];
    axis_title(xname, sizeof xname, opts->xlabel && *opts->xlabel ? opts->xlabel : "x", opts->units);
    axis_title(yname, sizeof yname, opts->ylabel && *opts->ylabel ? opts->ylabel : "y", opts->units);
    int right_w = gap + bar_w + tick_len + 6 + label_w + margin;
    if (bar_label && right_w < gap + pyr_font_text_width(bar_label, S) + margin)
        right_w = gap + pyr_font_text_width(bar_label, S) + margin;
    if (image_width && right_w > image_width / 3) right_w = image_width / 3; /* a long bar label is cut */
    const int below = axes ? tick_len + 3 * S + th + 5 * S + th + margin : th / 2 + margin;

    /* The map's pixels: its aspect ratio is the extents' (or the field's
     * cells', square), and its width what the image leaves, or the field's
     * enlarged or reduced to max_pixels. */
    double aspect = (double)height / (double)width;
    if (axes && width > 1 && height > 1 && opts->x0 != opts->x1 && opts->y0 != opts->y1) {
        const double dx = fabs(opts->x1 - opts->x0) / (double)(width - 1), dy = fabs(opts->y1 - opts->y0) / (double)(height - 1);
        aspect = (double)height * dy / ((double)width * dx);
    }
    const int min_side = 24; /* a 1-pixel strip would be invisible */
    ticks_t *xt = malloc(sizeof *xt), *yt = malloc(sizeof *yt);
    if (!xt || !yt) {
        free(xt);
        free(yt);
        return pyr_fail(PYR_ERR_NOMEM, "writing heat map %s: out of memory", path);
    }
    xt->n = yt->n = 0;
    xt->label_w = yt->label_w = 0;
    int W = 0, H = 0, left = margin;
    /* the y ticks' labels decide the left margin, which decides the map's
     * width when the image's is given, which decides the y ticks: a few
     * rounds settle it */
    for (int round = 0; round < 3; round++) {
        left = margin + (axes ? th + 5 * S + yt->label_w + 3 * S + tick_len : 0);
        if (image_width) {
            W = image_width - left - right_w;
            if (W < 4 * min_side) {
                free(xt);
                free(yt);
                return pyr_fail(PYR_ERR_ARG, "writing heat map %s: an image %d pixels wide leaves %d for the map beside its axes and "
                                "colour bar; make it wider", path, image_width, W);
            }
            double hh = W * aspect;
            if (hh > 8192) { /* a tall, thin field: the map narrower than the space */
                W = (int)fmax(min_side, 8192 / aspect);
                hh = 8192;
            }
            H = (int)lround(hh);
        } else {
            int64_t longest = width > height ? width : height;
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
            if (axes && aspect != (double)height / (double)width) H = (int)fmin(8192, lround(W * aspect));
        }
        if (W < min_side) W = min_side;
        if (H < min_side) H = min_side;
        if (!axes) break;
        const int before = yt->label_w;
        build_ticks(yt, opts->y0, opts->y1, H, 0, S);
        if (yt->label_w <= before && round > 0) break;
    }
    if (axes) build_ticks(xt, opts->x0, opts->x1, W, 1, S);

    double *img = malloc(sizeof(double) * (size_t)W * (size_t)H);
    if (!img) {
        free(xt);
        free(yt);
        return pyr_fail(PYR_ERR_NOMEM, "writing heat map %s: out of memory for %d x %d pixels", path, W, H);
    }
    pyr_status_t st = resample(data, p, width, height, W, H, img);
    if (st != PYR_OK) {
        free(img);
        free(xt);
        free(yt);
        return st;
    }

    /* the bar's name above its top label, which reaches 7 S / 2 above it */
    const int bar_label_h = bar_label ? th + 6 * S : 0;
    int top = margin + (title ? th + 7 * S : 0) + bar_label_h;
    int bar_h = H > 100 * S ? H : 100 * S;
    int body_h = bar_h + (nan_count ? th + 8 * S : 0);
    if (H > body_h) body_h = H;
    int bar_x = left + W + gap;
    int cw = image_width ? image_width : bar_x + right_w - gap;
    if (!image_width) {
        int title_w = title ? pyr_font_text_width(title, S) + 2 * margin : 0;
        if (cw < title_w) cw = title_w < 1600 ? title_w : (cw > 1600 ? cw : 1600); /* longer titles are cut */
    }
    if (cw > PYR_CANVAS_MAX) cw = PYR_CANVAS_MAX;
    /* Map, centred vertically on the bar when it is shorter. */
    int map_y = top + (bar_h > H ? (bar_h - H) / 2 : 0);
    int ch = top + body_h + th / 2 + margin;
    if (ch < map_y + H + 1 + below) ch = map_y + H + 1 + below;

    pyr_canvas_t c;
    st = pyr_canvas_init(&c, cw, ch, WHITE);
    if (st != PYR_OK) {
        free(img);
        free(xt);
        free(yt);
        return st;
    }
    for (int Y = 0; Y < H; Y++) {
        const double *row = img + (size_t)(y_up ? H - 1 - Y : Y) * (size_t)W;
        for (int X = 0; X < W; X++) {
            double v = row[X];
            double t = isnan(v) ? NAN : constant ? 0.5 : isinf(v) ? (v > 0 ? 1 : 0) : (v - lo) / (hi - lo);
            if (!have_range && !isnan(v)) t = v > 0 ? 1 : 0; /* only infinities */
            uint8_t rgb[3];
            pyr_colormap_of(map, t, rgb);
            pyr_canvas_put(&c, left + X, map_y + Y, (pyr_rgb_t){rgb[0], rgb[1], rgb[2]});
        }
    }
    free(img);
    pyr_canvas_rect(&c, left - 1, map_y - 1, W + 2, H + 2, FRAME);

    /* Axes: ticks outside the frame, labels below and left, names. */
    if (axes) {
        const int lw = S / 2 > 1 ? S / 2 : 1;
        for (int i = 0; i < xt->n; i++) {
            const int x = left + (int)floor(axis_offset(xt->v[i], opts->x0, opts->x1, width, W));
            pyr_canvas_fill_rect(&c, x, map_y + H + 1, lw, tick_len, FRAME);
            const int w = pyr_font_text_width(xt->text[i], S);
            pyr_font_draw(&c, x - w / 2, map_y + H + 1 + tick_len + 3 * S, xt->text[i], S, INK);
        }
        for (int i = 0; i < yt->n; i++) {
            const double off = axis_offset(yt->v[i], opts->y0, opts->y1, height, H);
            const int y = map_y + (y_up ? H - 1 - (int)floor(off) : (int)floor(off));
            pyr_canvas_fill_rect(&c, left - 1 - tick_len, y, tick_len, lw, FRAME);
            const int w = pyr_font_text_width(yt->text[i], S);
            pyr_font_draw(&c, left - 1 - tick_len - 3 * S - w, y - 7 * S / 2, yt->text[i], S, INK);
        }
        char buf[256];
        fit_text(buf, sizeof buf, xname, W + right_w, S);
        int w = pyr_font_text_width(buf, S);
        pyr_font_draw(&c, left + W / 2 - w / 2, map_y + H + 1 + tick_len + 3 * S + th + 5 * S, buf, S, INK);
        fit_text(buf, sizeof buf, yname, H > 100 * S ? H : ch - 2 * margin, S);
        w = pyr_font_text_width(buf, S);
        int yy = map_y + H / 2 - w / 2;
        if (yy < margin) yy = margin;
        pyr_font_draw_up(&c, margin, yy, buf, S, INK);
    }
    free(xt);
    free(yt);

    /* Colour bar: top = hi. */
    int bar_y = top;
    for (int j = 0; j < bar_h; j++) {
        double t = constant ? 0.5 : 1.0 - (double)j / (bar_h - 1);
        uint8_t rgb[3];
        pyr_colormap_of(map, have_range ? t : NAN, rgb);
        pyr_canvas_fill_rect(&c, bar_x, bar_y + j, bar_w, 1, (pyr_rgb_t){rgb[0], rgb[1], rgb[2]});
    }
    pyr_canvas_rect(&c, bar_x - 1, bar_y - 1, bar_w + 2, bar_h + 2, FRAME);
    if (bar_label) {
        char buf[256];
        fit_text(buf, sizeof buf, bar_label, cw - bar_x - margin / 2, S);
        pyr_font_draw(&c, bar_x, bar_y - bar_label_h, buf, S, INK);
    }
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
            if (abs(y - ylo) < th + 4 || abs(y - yhi) < th + 4) continue; /* the ends' labels keep their room */
            char t[32];
            pyr_format_tick(t, sizeof t, v, step);
            pyr_canvas_fill_rect(&c, bar_x + bar_w, y, tick_len - 2, 1, FRAME);
            pyr_font_draw(&c, lx, y - 7 * S / 2, t, S, INK);
        }
    }
    if (nan_count) {
        int y = bar_y + bar_h + 7 * S, sw = 4 * S;
        uint8_t g[3];
        pyr_colormap(NAN, g);
        pyr_canvas_fill_rect(&c, lx, y + (7 * S - sw) / 2, sw, sw, (pyr_rgb_t){g[0], g[1], g[2]});
        pyr_canvas_rect(&c, lx, y + (7 * S - sw) / 2, sw, sw, FRAME);
        pyr_font_draw(&c, lx + sw + 2 * S * 2, y, "NaN", S, INK);
    }
    if (title) {
        char buf[256];
        fit_text(buf, sizeof buf, title, cw - 2 * margin, S);
        int tw = pyr_font_text_width(buf, S);
        int tx = (cw - tw) / 2;
        if (tx < margin) tx = margin;
        for (int b = 0; b <= (S > 2 ? S / 2 : 0); b++) pyr_font_draw(&c, tx + b, margin, buf, S, INK); /* bold on large images */
    }
    st = pyr_canvas_write_png(&c, path);
    pyr_canvas_free(&c);
    return st;
}
