/* Line plots drawn on a canvas with the bitmap font, written as PNG. */
#include "io/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/canvas.h"
#include "io/font.h"

#define MAX_TICKS 64
#define MAX_MINOR 160
#define TICK_LEN 6

static const pyr_rgb_t WHITE = {255, 255, 255};
static const pyr_rgb_t INK = {30, 30, 30};
static const pyr_rgb_t FRAME = {70, 70, 70};
static const pyr_rgb_t GRID = {222, 222, 222};
static const pyr_rgb_t GRID_MINOR = {240, 240, 240};
static const pyr_rgb_t LEGEND_EDGE = {170, 170, 170};

/* Series colours, chosen to be told apart from one another. */
static const pyr_rgb_t palette[] = {
    {31, 100, 190},  /* blue */
    {230, 120, 20},  /* orange */
    {40, 150, 60},   /* green */
    {200, 40, 45},   /* red */
    {130, 80, 185},  /* purple */
    {140, 90, 55},   /* brown */
    {220, 95, 170},  /* pink */
    {100, 100, 100}, /* grey */
    {165, 165, 25},  /* olive */
    {20, 170, 195},  /* cyan */
};
#define NPALETTE ((int)(sizeof palette / sizeof palette[0]))

typedef struct {
    double v; /* position in axis units (log10 of the value on a log axis) */
    char text[32];
} tick_t;

typedef struct {
    int log;
    double lo, hi; /* axis units */
    tick_t ticks[MAX_TICKS];
    int nticks;
    double minor[MAX_MINOR]; /* grid lines without labels */
    int nminor;
    int label_w; /* widest tick label */
    int ts;      /* text scale of its labels */
} axis_t;

static int point_ok(double v, int log) { return isfinite(v) && (!log || v > 0); }
static double to_axis(double v, int log) { return log ? log10(v) : v; }

static void add_tick(axis_t *a, double v, const char *text)
{
    if (a->nticks >= MAX_TICKS) return;
    tick_t *t = &a->ticks[a->nticks++];
    t->v = v;
    snprintf(t->text, sizeof t->text, "%s", text);
    int w = pyr_font_text_width(t->text, a->ts);
    if (w > a->label_w) a->label_w = w;
}

/* Linear ticks over [dmin, dmax] with about `target` intervals; the axis is
 * widened to whole steps. */
static void build_linear(axis_t *a, double dmin, double dmax, int target)
{
    a->nticks = a->nminor = a->label_w = 0;
    double step = pyr_nice_step(dmax - dmin, target);
    double k0 = floor(dmin / step + 1e-9), k1 = ceil(dmax / step - 1e-9);
    if (k1 <= k0) k1 = k0 + 1;
    while (k1 - k0 + 1 > MAX_TICKS) { /* cannot happen with sane targets */
        step *= 2;
        k0 = floor(dmin / step + 1e-9);
        k1 = ceil(dmax / step - 1e-9);
    }
    a->lo = k0 * step;
    a->hi = k1 * step;
    for (double k = k0; k <= k1; k++) {
        char t[32];
        pyr_format_tick(t, sizeof t, k * step, step);
        add_tick(a, k * step, t);
    }
}

/* m x 10^d as people write it: 0.002, 5, 100, 20000; powers beyond that
 * range as 1e-05, 2e+06. */
static void log_label(char *t, size_t size, int m, int d)
{
    double v = (double)m * pow(10.0, (double)d);
    if (d >= -4 && d <= 5) snprintf(t, size, "%.*f", d < 0 ? -d : 0, v);
    else snprintf(t, size, "%.0e", v);
}

/* Log axis over [dmin, dmax] (log10 units): the data range with a little
 * room, reaching out to a whole decade when one is near; decades labelled
 * "1e-3", every `every` decades so that at most max_labels fit; on short
 * axes 2 and 5 times a decade are labelled too. */
static void build_log(axis_t *a, double dmin, double dmax, int max_labels, int pixels)
{
    a->nticks = a->nminor = a->label_w = 0;
    double span = dmax - dmin;
    double pad = span > 0 ? 0.05 * span : 0.5;
    double lo = dmin - pad, hi = dmax + pad;
    if (dmin - floor(dmin + 1e-12) < 0.35) lo = fmin(lo, floor(dmin + 1e-12)); /* snap to a near decade */
    if (ceil(dmax - 1e-12) - dmax < 0.35) hi = fmax(hi, ceil(dmax - 1e-12));
    a->lo = lo;
    a->hi = hi;
    int d0 = (int)ceil(lo - 1e-9), d1 = (int)floor(hi + 1e-9);
    int ndec = d1 - d0; /* whole decades inside */
    static const int steps[] = {1, 2, 3, 5, 10, 20, 50, 100};
    int every = 100;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (ndec / steps[i] + 1 <= max_labels) {
            every = steps[i];
            break;
        }
    int label_minor = hi - lo <= 2.5 && every == 1;
    int show_minor = pixels / (hi - lo) >= 60; /* grid lines not too dense */
    for (int d = d0 - 1; d <= d1; d++) {
        if (d >= d0 && ((d % every) + every) % every == 0) {
            char t[32];
            log_label(t, sizeof t, 1, d);
            add_tick(a, d, t);
        }
        for (int m = 2; m <= 9; m++) {
            double v = d + log10((double)m);
            if (v < lo || v > hi) continue;
            if (label_minor && (m == 2 || m == 5)) {
                char t[32];
                log_label(t, sizeof t, m, d);
                add_tick(a, v, t);
            } else if (show_minor && a->nminor < MAX_MINOR) {
                a->minor[a->nminor++] = v;
            }
        }
    }
    if (a->nticks < 2) { /* a narrow range: evenly spaced values instead */
        a->nticks = a->nminor = a->label_w = 0;
        double vlo = pow(10.0, lo), vhi = pow(10.0, hi);
        double step = pyr_nice_step(vhi - vlo, max_labels > 2 ? max_labels - 1 : 2);
        for (double k = ceil(vlo / step - 1e-9); k * step <= vhi * (1 + 1e-12); k++) {
            char t[32];
            pyr_format_tick(t, sizeof t, k * step, step);
            if (k * step > 0) add_tick(a, log10(k * step), t);
        }
    }
}

static int tick_cmp(const void *p, const void *q)
{
    double a = ((const tick_t *)p)->v, b = ((const tick_t *)q)->v;
    return (a > b) - (a < b);
}

static void sort_ticks(axis_t *a) { qsort(a->ticks, (size_t)a->nticks, sizeof a->ticks[0], tick_cmp); }

/* Choose ticks for an axis spanning `pixels`, with labels at least `min_gap`
 * pixels apart along the axis (for x: the widest label plus room). */
static void build_axis(axis_t *a, int log, double dmin, double dmax, int have, int pixels, int is_x)
{
    a->log = log;
    if (!have) {
        dmin = 0; /* 1 .. 10 on a log axis */
        dmax = 1;
    } else if (dmax <= dmin && !log) {
        double d = dmin != 0 ? fabs(dmin) * 0.1 : 1;
        dmin -= d;
        dmax += d;
    }
    int per = (is_x ? 110 : 60) * a->ts / 2; /* pixels per interval to aim for */
    for (int target = pixels / per > 1 ? pixels / per : 2; target >= 1; target--) {
        int max_labels = target + 1;
        if (log) build_log(a, dmin, dmax, max_labels, pixels);
        else build_linear(a, dmin, dmax, target);
        sort_ticks(a);
        /* labels must not touch: check the closest pair */
        double span = a->hi - a->lo, closest = INFINITY;
        for (int i = 1; i < a->nticks; i++) {
            double d = (a->ticks[i].v - a->ticks[i - 1].v) / span * pixels;
            if (d < closest) closest = d;
        }
        int need = is_x ? a->label_w + 16 : pyr_font_text_height(a->ts) + 8;
        if (a->nticks < 2 || closest >= need || target == 1) break;
    }
}

typedef struct {
    int left, top, w, h;
    axis_t *x, *y;
} frame_t;

/* The axis ranges map to the plot area less INSET pixels at each end, so
 * that markers and lines at the ends stay clear of the frame. */
#define INSET 8

static int px_of(const frame_t *f, double xv)
{
    return f->left + INSET + (int)lround((xv - f->x->lo) / (f->x->hi - f->x->lo) * (f->w - 1 - 2 * INSET));
}
static int py_of(const frame_t *f, double yv)
{
    return f->top + INSET + (int)lround((1.0 - (yv - f->y->lo) / (f->y->hi - f->y->lo)) * (f->h - 1 - 2 * INSET));
}

/* Marker of shape `kind` centred on (x, y). */
static void draw_marker(pyr_canvas_t *c, int x, int y, int kind, pyr_rgb_t col)
{
    const int r = 4;
    switch (kind % 5) {
    case 0: /* disc */
        for (int j = -r; j <= r; j++)
            for (int i = -r; i <= r; i++)
                if (i * i + j * j <= r * r + 1) pyr_canvas_put(c, x + i, y + j, col);
        break;
    case 1: /* square */
        pyr_canvas_fill_rect(c, x - r + 1, y - r + 1, 2 * r - 1, 2 * r - 1, col);
        break;
    case 2: /* triangle up */
        for (int j = -r; j <= r; j++) {
            int half = (j + r) / 2 + 1;
            pyr_canvas_fill_rect(c, x - half + 1, y + j, 2 * half - 1, 1, col);
        }
        break;
    case 3: /* diamond */
        for (int j = -r - 1; j <= r + 1; j++) {
            int half = r + 2 - abs(j);
            pyr_canvas_fill_rect(c, x - half + 1, y + j, 2 * half - 1, 1, col);
        }
        break;
    default: /* triangle down */
        for (int j = -r; j <= r; j++) {
            int half = (r - j) / 2 + 1;
            pyr_canvas_fill_rect(c, x - half + 1, y + j, 2 * half - 1, 1, col);
        }
        break;
    }
}

/* Lines (pass 0) or markers (pass 1) of one series: markers go on top of
 * every line. */
static void draw_series(pyr_canvas_t *c, const frame_t *f, const pyr_plot_series_t *s, int idx, int pass)
{
    pyr_rgb_t col = palette[idx % NPALETTE];
    int have_prev = 0, px = 0, py = 0;
    if (pass == 0 && s->markers != 1)
        for (int i = 0; i < s->n; i++) {
            if (!point_ok(s->x[i], f->x->log) || !point_ok(s->y[i], f->y->log)) {
                have_prev = 0;
                continue;
            }
            int X = px_of(f, to_axis(s->x[i], f->x->log)), Y = py_of(f, to_axis(s->y[i], f->y->log));
            if (have_prev) pyr_canvas_line(c, px, py, X, Y, 2, col);
            else if (s->markers == 0) pyr_canvas_fill_rect(c, X - 1, Y - 1, 2, 2, col); /* lone point */
            have_prev = 1;
            px = X;
            py = Y;
        }
    if (pass == 1 && s->markers != 0)
        for (int i = 0; i < s->n; i++) {
            if (!point_ok(s->x[i], f->x->log) || !point_ok(s->y[i], f->y->log)) continue;
            draw_marker(c, px_of(f, to_axis(s->x[i], f->x->log)), py_of(f, to_axis(s->y[i], f->y->log)), idx,
                        col);
        }
}

/* How much of the data lies under a box: points and segment midpoints. */
static int box_score(const frame_t *f, const pyr_plot_series_t *series, int nseries, int bx, int by, int bw,
                     int bh)
{
    int score = 0;
    for (int k = 0; k < nseries; k++) {
        const pyr_plot_series_t *s = &series[k];
        int have_prev = 0, px = 0, py = 0;
        for (int i = 0; i < s->n; i++) {
            if (!point_ok(s->x[i], f->x->log) || !point_ok(s->y[i], f->y->log)) {
                have_prev = 0;
                continue;
            }
            int X = px_of(f, to_axis(s->x[i], f->x->log)), Y = py_of(f, to_axis(s->y[i], f->y->log));
            if (X >= bx && X < bx + bw && Y >= by && Y < by + bh) score += 4;
            if (have_prev && s->markers != 1) { /* points every few pixels along the segment */
                int steps = abs(X - px) > abs(Y - py) ? abs(X - px) : abs(Y - py);
                steps = steps / 6 + 1;
                for (int q = 1; q < steps; q++) {
                    int mx = px + (X - px) * q / steps, my = py + (Y - py) * q / steps;
                    if (mx >= bx && mx < bx + bw && my >= by && my < by + bh) score++;
                }
            }
            have_prev = 1;
            px = X;
            py = Y;
        }
    }
    return score;
}

static void draw_legend(pyr_canvas_t *c, const frame_t *f, const pyr_plot_series_t *series, int nseries)
{
    const int TS = f->x->ts;
    int th = pyr_font_text_height(TS), sample = 17 * TS, pad = 5 * TS, row_h = th + 4 * TS;
    int n = 0, text_w = 0;
    for (int k = 0; k < nseries; k++)
        if (series[k].label && *series[k].label) {
            n++;
            int w = pyr_font_text_width(series[k].label, TS);
            if (w > text_w) text_w = w;
        }
    if (n == 0) return;
    int bw = pad + sample + 10 + text_w + pad, bh = pad + n * row_h - 8 + pad;
    const int inset = 10;
    int xs[4] = {f->left + f->w - inset - bw, f->left + inset, f->left + f->w - inset - bw, f->left + inset};
    int ys[4] = {f->top + inset, f->top + inset, f->top + f->h - inset - bh, f->top + f->h - inset - bh};
    int best = 0, best_score = -1;
    for (int q = 0; q < 4; q++) {
        int sc = box_score(f, series, nseries, xs[q] - 6, ys[q] - 6, bw + 12, bh + 12);
        if (best_score < 0 || sc < best_score) {
            best = q;
            best_score = sc;
        }
    }
    int bx = xs[best], by = ys[best];
    pyr_canvas_fill_rect(c, bx, by, bw, bh, WHITE);
    pyr_canvas_rect(c, bx, by, bw, bh, LEGEND_EDGE);
    int y = by + pad;
    for (int k = 0; k < nseries; k++) {
        const pyr_plot_series_t *s = &series[k];
        if (!s->label || !*s->label) continue;
        pyr_rgb_t col = palette[k % NPALETTE];
        int ym = y + 7 * TS / 2, x0 = bx + pad;
        if (s->markers != 1) pyr_canvas_line(c, x0, ym, x0 + sample - 1, ym, 2, col);
        if (s->markers != 0) draw_marker(c, x0 + sample / 2, ym, k, col);
        pyr_font_draw(c, x0 + sample + 10, y, s->label, TS, INK);
        y += row_h;
    }
}

/* Draw text centred on cx, shortened with "..." to fit max_w. */
static void draw_centered(pyr_canvas_t *c, int cx, int y, const char *text, int max_w, int bold, int TS)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    size_t len = strlen(buf);
    while (len > 3 && pyr_font_text_width(buf, TS) > max_w) {
        len--;
        memcpy(buf + len - 3, "...", 4);
    }
    int w = pyr_font_text_width(buf, TS);
    pyr_font_draw(c, cx - w / 2, y, buf, TS, INK);
    for (int b = 1; bold && b <= TS / 2; b++) pyr_font_draw(c, cx - w / 2 + b, y, buf, TS, INK); /* bold: strokes as wide as the text is large */
}

pyr_status_t pyr_plot_write_png(const char *path, const pyr_plot_series_t *series, int nseries,
                                const pyr_plot_opts_t *opts)
{
    if (!path) return pyr_fail(PYR_ERR_ARG, "pyr_plot_write_png: path is NULL");
    if (nseries < 0 || (nseries > 0 && !series))
        return pyr_fail(PYR_ERR_ARG, "plot %s: %d series given with %s series array", path, nseries,
                        series ? "a" : "a NULL");
    for (int k = 0; k < nseries; k++) {
        const pyr_plot_series_t *s = &series[k];
        if (s->n < 0 || (s->n > 0 && (!s->x || !s->y)))
            return pyr_fail(PYR_ERR_ARG, "plot %s: series %d (%s) has n = %d with %s; needs n >= 0 and x, y arrays",
                            path, k, s->label ? s->label : "unlabelled", s->n,
                            s->n < 0 ? "a negative count" : "a NULL x or y");
        if (s->markers < 0 || s->markers > 2)
            return pyr_fail(PYR_ERR_ARG, "plot %s: series %d has markers = %d; use 0 (lines), 1 (markers) or 2 (both)",
                            path, k, s->markers);
    }
    int width = opts && opts->width > 0 ? opts->width : 900;
    int height = opts && opts->height > 0 ? opts->height : 600;
    if (width < 300 || height < 200 || width > 8192 || height > 8192)
        return pyr_fail(PYR_ERR_ARG, "plot %s: size %d x %d pixels; use 300..8192 by 200..8192 (0 for 900 x 600)",
                        path, width, height);
    int log_x = opts && opts->log_x, log_y = opts && opts->log_y;
    const char *title = opts && opts->title && *opts->title ? opts->title : NULL;
    const char *xlabel = opts && opts->xlabel && *opts->xlabel ? opts->xlabel : NULL;
    const char *ylabel = opts && opts->ylabel && *opts->ylabel ? opts->ylabel : NULL;

    /* Data ranges in axis units. */
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (int k = 0; k < nseries; k++)
        for (int i = 0; i < series[k].n; i++) {
            double x = series[k].x[i], y = series[k].y[i];
            if (!point_ok(x, log_x) || !point_ok(y, log_y)) continue;
            x = to_axis(x, log_x);
            y = to_axis(y, log_y);
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            ymin = fmin(ymin, y);
            ymax = fmax(ymax, y);
        }
    int have = xmin <= xmax;

    /* Layout: vertical first (independent of the ticks), then the y ticks
     * decide the left margin, then the x ticks. */
    const int TS = pyr_text_scale(width); /* text grows with the image (font.h) */
    int th = pyr_font_text_height(TS);
    int top = title ? 16 + th + 16 : 24;
    int bottom = TICK_LEN + 8 + th + (xlabel ? 14 + th : 0) + 14;
    int ph = height - top - bottom;
    axis_t *xa = malloc(sizeof *xa), *ya = malloc(sizeof *ya); /* a few KiB each */
    if (!xa || !ya) {
        free(xa);
        free(ya);
        return pyr_fail(PYR_ERR_NOMEM, "plot %s: out of memory", path);
    }
    xa->ts = ya->ts = TS;
    build_axis(ya, log_y, ymin, ymax, have, ph, 0);
    int left = 14 + (ylabel ? th + 14 : 0) + ya->label_w + 8 + TICK_LEN;
    int right = 30;
    int pw = width - left - right;
    if (pw < 60 || ph < 60) {
        free(xa);
        free(ya);
        return pyr_fail(PYR_ERR_ARG, "plot %s: %d x %d pixels leave no room for the plot area; make it larger",
                        path, width, height);
    }
    build_axis(xa, log_x, xmin, xmax, have, pw, 1);

    pyr_canvas_t c;
    pyr_status_t st = pyr_canvas_init(&c, width, height, WHITE);
    if (st != PYR_OK) {
        free(xa);
        free(ya);
        return st;
    }
    frame_t f = {left, top, pw, ph, xa, ya};

    /* Grid. */
    for (int i = 0; i < xa->nminor; i++) pyr_canvas_fill_rect(&c, px_of(&f, xa->minor[i]), top, 1, ph, GRID_MINOR);
    for (int i = 0; i < ya->nminor; i++) pyr_canvas_fill_rect(&c, left, py_of(&f, ya->minor[i]), pw, 1, GRID_MINOR);
    for (int i = 0; i < xa->nticks; i++) pyr_canvas_fill_rect(&c, px_of(&f, xa->ticks[i].v), top, 1, ph, GRID);
    for (int i = 0; i < ya->nticks; i++) pyr_canvas_fill_rect(&c, left, py_of(&f, ya->ticks[i].v), pw, 1, GRID);

    /* Data. */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < nseries; k++) draw_series(&c, &f, &series[k], k, pass);

    /* Frame, ticks and their labels. */
    pyr_canvas_rect(&c, left - 1, top - 1, pw + 2, ph + 2, FRAME);
    for (int i = 0; i < xa->nticks; i++) {
        int x = px_of(&f, xa->ticks[i].v);
        pyr_canvas_fill_rect(&c, x, top + ph + 1, 1, TICK_LEN, FRAME);
        int w = pyr_font_text_width(xa->ticks[i].text, TS);
        pyr_font_draw(&c, x - w / 2, top + ph + 1 + TICK_LEN + 6, xa->ticks[i].text, TS, INK);
    }
    for (int i = 0; i < ya->nticks; i++) {
        int y = py_of(&f, ya->ticks[i].v);
        pyr_canvas_fill_rect(&c, left - 1 - TICK_LEN, y, TICK_LEN, 1, FRAME);
        int w = pyr_font_text_width(ya->ticks[i].text, TS);
        pyr_font_draw(&c, left - 1 - TICK_LEN - 6 - w, y - 7 * TS / 2, ya->ticks[i].text, TS, INK);
    }

    draw_legend(&c, &f, series, nseries);

    /* Titles. */
    if (title) draw_centered(&c, width / 2, 16, title, width - 20, 1, TS);
    if (xlabel) draw_centered(&c, left + pw / 2, top + ph + 1 + TICK_LEN + 6 + th + 14, xlabel, width - 20, 0, TS);
    if (ylabel) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", ylabel);
        size_t len = strlen(buf);
        while (len > 3 && pyr_font_text_width(buf, TS) > ph) {
            len--;
            memcpy(buf + len - 3, "...", 4);
        }
        int w = pyr_font_text_width(buf, TS);
        pyr_font_draw_up(&c, 14, top + ph / 2 - w / 2, buf, TS, INK);
    }
    free(xa);
    free(ya);
    st = pyr_canvas_write_png(&c, path);
    pyr_canvas_free(&c);
    return st;
}
