/* Line plots for reports (residual histories, measured-vs-predicted sweeps)
 * written as PNG. */
#ifndef PYR_IO_PLOT_H
#define PYR_IO_PLOT_H

#include "pyrgrid.h"

typedef struct {
    const char *label; /* legend text; NULL or "" leaves the series out of the legend */
    const double *x;
    const double *y;
    int n;
    int markers; /* 0 lines, 1 markers, 2 both */
} pyr_plot_series_t;

typedef struct {
    const char *title, *xlabel, *ylabel; /* each may be NULL */
    int log_y;                           /* logarithmic y axis; y <= 0 points are left out */
    int width, height;                   /* 0 -> 900 x 600 */
    int log_x;                           /* logarithmic x axis; x <= 0 points are left out */
} pyr_plot_opts_t;

/* Draw the series (each in its own colour and marker shape) with axes, tick
 * labels, axis titles, a title and a legend, and write a PNG atomically.
 * Non-finite points (and non-positive ones on a log axis) are skipped, and
 * the line breaks there.  opts may be NULL. */
pyr_status_t pyr_plot_write_png(const char *path, const pyr_plot_series_t *series, int nseries,
                                const pyr_plot_opts_t *opts);

#endif
