/* Line plots for reports (residual histories, measured-vs-predicted sweeps)
 * written as PNG. */
#ifndef PYR_IO_PLOT_H
#define PYR_IO_PLOT_H

#include "pyrgrid.h"
#include "pyrgrid_output.h"

/* The series, the options and pyr_plot_write_png are public:
 * include/pyrgrid_output.h. */

#endif
