/* The single-device executor as the layers above it call it: a run of one
 * plan, and the pieces of it that calibration measures as the executor uses
 * them.  A part of a larger grid: exec/part_io.h. */
#ifndef PYR_EXEC_EXEC_H
#define PYR_EXEC_EXEC_H

#include "backend/device.h"
#include "pyrgrid.h"

/* pyr_execute_fields of a plan of one device (api/ chooses it, multi/ runs
 * each part's plan with it): fields of the plan's grid, in the scheme's
 * order. */
pyr_status_t pyr_exec_fields(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run);

/* Host-to-host copy of `box` between two host regions (held-back bands are
 * written into the grid with this), with all cores for large boxes. */
void pyr_host_copy_box(pyr_host_region_t *dst, const pyr_host_region_t *src, const pyr_box_t *box, size_t elem);

#endif
