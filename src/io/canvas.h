/* An 8-bit RGB canvas with the drawing primitives that the heat map
 * (png.h), the line plots (plot.h) and the font (font.h) share, written as
 * a PNG. */
#ifndef PYR_IO_CANVAS_H
#define PYR_IO_CANVAS_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"

typedef struct {
    uint8_t r, g, b;
} pyr_rgb_t;

/* An 8-bit RGB image, rows top to bottom, 3 bytes a pixel. */
typedef struct {
    uint8_t *px;
    int w, h;
} pyr_canvas_t;

#define PYR_CANVAS_MAX 32768 /* pixels of a side */

/* Allocate w x h (1..PYR_CANVAS_MAX each) filled with bg. */
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
