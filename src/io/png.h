/* PNG output: a colour heat map of a 2D field, drawn on the canvas of
 * io/canvas.h that the line plots (plot.h) share. */
#ifndef PYR_IO_PNG_H
#define PYR_IO_PNG_H

#include <stdint.h>

#include "pyrgrid.h"
#include "pyrgrid_output.h"

/* ---------------------------------------------------------------- heat map */

/* pyr_heatmap_opts_t and pyr_png_write_heatmap are public: include/pyrgrid_output.h. */


/* The colour of t in [0, 1] in the heat map's colour map (dark purple ->
 * blue -> teal -> green -> yellow, lightness rising throughout).  t outside
 * [0, 1] is clamped; NaN gives grey. */
void pyr_colormap(double t, uint8_t rgb[3]);

/* The colour of t in [0, 1] in colour map `map` (pyr_colormap_t; auto is
 * viridis here: the heat map resolves it from the field's signs).  The
 * diverging map's middle, t = 0.5, is its neutral near-white (247, 247,
 * 247); gray runs from black to white.  NaN gives grey. */
void pyr_colormap_of(int map, double t, uint8_t rgb[3]);

#endif
