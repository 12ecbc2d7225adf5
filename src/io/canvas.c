/* An RGB canvas, its drawing primitives and its PNG encoding (io/canvas.h). */
#include "io/canvas.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/atomic.h"

pyr_status_t pyr_canvas_init(pyr_canvas_t *c, int w, int h, pyr_rgb_t bg)
{
    c->px = NULL;
    c->w = c->h = 0;
    if (w < 1 || h < 1 || w > PYR_CANVAS_MAX || h > PYR_CANVAS_MAX)
        return pyr_fail(PYR_ERR_ARG, "image size %d x %d; each side must be 1..%d pixels", w, h, PYR_CANVAS_MAX);
    size_t n = (size_t)w * (size_t)h;
    c->px = malloc(n * 3);
    if (!c->px) return pyr_fail(PYR_ERR_NOMEM, "out of memory for a %d x %d image", w, h);
    for (size_t i = 0; i < n; i++) {
        c->px[3 * i] = bg.r;
        c->px[3 * i + 1] = bg.g;
        c->px[3 * i + 2] = bg.b;
    }
    c->w = w;
    c->h = h;
    return PYR_OK;
}

void pyr_canvas_free(pyr_canvas_t *c)
{
    if (!c) return;
    free(c->px);
    c->px = NULL;
    c->w = c->h = 0;
}

void pyr_canvas_fill_rect(pyr_canvas_t *c, int x, int y, int w, int h, pyr_rgb_t col)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int j = y0; j < y1; j++)
        for (int i = x0; i < x1; i++) pyr_canvas_put(c, i, j, col);
}

void pyr_canvas_rect(pyr_canvas_t *c, int x, int y, int w, int h, pyr_rgb_t col)
{
    pyr_canvas_fill_rect(c, x, y, w, 1, col);
    pyr_canvas_fill_rect(c, x, y + h - 1, w, 1, col);
    pyr_canvas_fill_rect(c, x, y, 1, h, col);
    pyr_canvas_fill_rect(c, x + w - 1, y, 1, h, col);
}

void pyr_canvas_line(pyr_canvas_t *c, int x0, int y0, int x1, int y1, int thickness, pyr_rgb_t col)
{
    if (thickness < 1) thickness = 1;
    int off = (thickness - 1) / 2;
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        if (thickness == 1) pyr_canvas_put(c, x0, y0, col);
        else pyr_canvas_fill_rect(c, x0 - off, y0 - off, thickness, thickness, col);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

pyr_status_t pyr_canvas_write_png(const pyr_canvas_t *c, const char *path)
{
    if (!c || !c->px) return pyr_fail(PYR_ERR_ARG, "writing %s: no image", path ? path : "(null)");
    pyr_atomic_file_t af;
    PYR_TRY(pyr_atomic_open(&af, path));
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)c->w;
    img.height = (png_uint_32)c->h;
    img.format = PNG_FORMAT_RGB;
    int ok = png_image_write_to_stdio(&img, af.fp, 0, c->px, (png_int_32)(c->w * 3), NULL);
    if (!ok) {
        int err = errno;
        char msg[80];
        snprintf(msg, sizeof msg, "%s", img.message);
        png_image_free(&img);
        pyr_atomic_abort(&af);
        return pyr_fail(PYR_ERR_IO, "writing %s: libpng failed: %s%s%s (nothing was written)", path, msg,
                        err ? "; " : "", err ? strerror(err) : "");
    }
    png_image_free(&img);
    return pyr_atomic_commit(&af);
}
