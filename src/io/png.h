/* PNG output: a colour heat map of a 2D field, drawn on the canvas of
 * io/canvas.h that the line plots (plot.h) share. */
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

#endif
