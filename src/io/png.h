/* PNG output: a colour heat map of a 2D field, and the RGB canvas with the
 * drawing primitives that the heat map and the line plots (plot.h) share. */
#ifndef PYR_IO_PNG_H
#define PYR_IO_PNG_H

#include <stdint.h>

#include "pyrgrid.h"

/* ---------------------------------------------------------------- heat map */

typedef struct {
    const char *title; /* optional line above the map; NULL for none */
    int max_pixels;    /* longest side of the map itself; 0 -> 1024 */
} pyr_heatmap_opts_t;

/* Colour heat map of a width x height field (row 0 at the top, x fastest in
 * memory, i.e. a NumPy (height, width) array) with a colour bar on the right
 * labelled with the minimum, the maximum and a few ticks, and an optional
 * title.  Big fields are box-averaged down so the map is at most max_pixels
 * on its longer side; small ones are enlarged by pixel replication to about
 * 256 pixels.  NaN is drawn grey; +-inf take the end colours; a constant
 * field is drawn in the middle colour.  opts may be NULL.  Written atomically. */
pyr_status_t pyr_png_write_heatmap(const char *path, const void *data, pyr_precision_t p, int64_t width,
                                   int64_t height, const pyr_heatmap_opts_t *opts);

/* The colour of t in [0, 1] in the heat map's colour map (dark purple ->
 * blue -> teal -> green -> yellow, lightness rising throughout).  t outside
 * [0, 1] is clamped; NaN gives grey. */
void pyr_colormap(double t, uint8_t rgb[3]);

/* ---------------------------------------------------------------- canvas */

typedef struct {
    uint8_t r, g, b;
} pyr_rgb_t;

/* An 8-bit RGB image, rows top to bottom, 3 bytes a pixel. */
typedef struct {
    uint8_t *px;
    int w, h;
} pyr_canvas_t;

/* Allocate w x h (1..32768 each) filled with bg. */
pyr_status_t pyr_canvas_init(pyr_canvas_t *c, int w, int h, pyr_rgb_t bg);
void pyr_canvas_free(pyr_canvas_t *c);

/* Drawing clips to the canvas. */
static inline void pyr_canvas_put(pyr_canvas_t *c, int x, int y, pyr_rgb_t col)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    uint8_t *q = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    q[0] = col.r;
    q[1] = col.g;
    q[2] = col.b;
}
void pyr_canvas_fill_rect(pyr_canvas_t *c, int x, int y, int w, int h, pyr_rgb_t col);
/* Outline of a rectangle, 1 pixel wide, covering x..x+w-1, y..y+h-1. */
void pyr_canvas_rect(pyr_canvas_t *c, int x, int y, int w, int h, pyr_rgb_t col);
/* Bresenham line of about `thickness` pixels (a square pen). */
void pyr_canvas_line(pyr_canvas_t *c, int x0, int y0, int x1, int y1, int thickness, pyr_rgb_t col);

/* Write the canvas as an 8-bit RGB PNG, atomically. */
pyr_status_t pyr_canvas_write_png(const pyr_canvas_t *c, const char *path);

#endif
