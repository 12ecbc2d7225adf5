/* A small bitmap font (5 x 7 glyphs with 2 rows of descenders, printable
 * ASCII) drawn at integer scale on a canvas, and the number formatting and
 * tick choice shared by the heat map and the plots. */
#ifndef PYR_IO_FONT_H
#define PYR_IO_FONT_H

#include <stddef.h>

#include "io/canvas.h"

#define PYR_FONT_GLYPH_W 5 /* pixels of ink across */
#define PYR_FONT_ADVANCE 6 /* glyph + 1 column of space */
#define PYR_FONT_CELL_H 9  /* 7 rows above the baseline + 2 of descenders */

/* Size of a one-line string drawn at `scale`. */
int pyr_font_text_width(const char *s, int scale);
int pyr_font_text_height(int scale);

/* Draw s with its cell's top-left corner at (x, y).  Characters outside
 * printable ASCII are drawn as '?'. */
void pyr_font_draw(pyr_canvas_t *c, int x, int y, const char *s, int scale, pyr_rgb_t col);

/* Draw s turned 90 degrees counter-clockwise (reading bottom to top) inside
 * the box whose top-left corner is (x, y): the box is text_height wide and
 * text_width tall. */
void pyr_font_draw_up(pyr_canvas_t *c, int x, int y, const char *s, int scale, pyr_rgb_t col);

/* Format v with about `sig` significant digits, compactly: "0.1235", "1235",
 * "1.5e6", "2e-5", "0". */
void pyr_format_sig(char *buf, size_t cap, double v, int sig);

/* Format a tick value v from a sequence with spacing `step`, with just the
 * digits that tell the ticks apart ("0.2", "1000", "2.5e-4"). */
void pyr_format_tick(char *buf, size_t cap, double v, double step);

/* The text scale of an image `width` pixels across, shared by the plots and
 * the heat maps: text grows with the image so that one shown full-screen
 * (1920 pixels across on a projector) stays as readable as the 900-pixel
 * default on a desk: 2 up to 1279 pixels, 3 at 1920, 4 at 2560 ... 8. */
int pyr_text_scale(int width);

/* A "nice" step (1, 2 or 5 times a power of ten) giving about `target`
 * intervals over `range` (> 0). */
double pyr_nice_step(double range, int target);

#endif
