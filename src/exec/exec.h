/* Pieces of the executor that calibration measures as the executor uses them. */
#ifndef PYR_EXEC_EXEC_H
#define PYR_EXEC_EXEC_H

#include "backend/device.h"

/* Host-to-host copy of `box` between two host regions (held-back bands are
 * written into the grid with this), with all cores for large boxes. */
void pyr_host_copy_box(pyr_host_region_t *dst, const pyr_host_region_t *src, const pyr_box_t *box, size_t elem);

#endif
