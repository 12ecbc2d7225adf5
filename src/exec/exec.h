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

/* The same for a resident part of a larger grid (plan->exchange) whose host
 * grid of some fields is memory another owns: where regions[f].data is set,
 * field f is that region (indexed in the part's local coordinates; fields[f]
 * is not read) instead of fields[f].  The executor writes back only the
 * part's own box (the exchange's reduce box), so parts sharing one grid
 * never write the same nodes; its copies to and from a region are staged.
 * Any other plan refuses regions (an internal error).  Where recipes[f]
 * (kind not PYR_RECIPE_NONE; recipes may be NULL) says that region f's
 * values over the part are that recipe (core/recipe.h, its origin the
 * region's node 0 in the whole grid) and nobody has made them, the resident
 * part makes them on its device instead of uploading them; a plan that could
 * not (not resident, no fill op, no steps) is an internal error: the caller
 * makes the values on the host. */
pyr_status_t pyr_exec_fields_made(pyr_plan_t *plan, pyr_field_t *const *fields, const pyr_host_region_t *regions, const pyr_recipe_t *recipes,
                                  int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run);

/* A run computed in ranges of its steps, each with a plan of its own (any
 * method, decomposition, height or slots: the same bits as one run, which
 * lets tune/refine.c change the plan between passes).  The carry holds what
 * the run keeps beside the caller's fields from one range to the next: the
 * fields the library makes (its auxiliaries, such as Maxwell's CPML and
 * dispersive states, and the inputs it initialises), the layer before the
 * fields' where the sub-steps read it (plan->previous, as host copies), and
 * the scheme's point terms, opened once for the whole run (sources'
 * waveforms and plane waves' 1D grids advance over it, monitors sum over
 * it and store their spectra at its end). */
typedef struct pyr_exec_carry pyr_exec_carry_t;
pyr_status_t pyr_exec_carry_create(pyr_exec_carry_t **out);
void pyr_exec_carry_destroy(pyr_exec_carry_t **carry);

/* Steps [first, last) of the plan's problem, whose steps count the whole
 * run's: the ranges of one carry run in order from step 0, each from the
 * step the last one left the fields at, with plans of one problem (one
 * device; not a part of a larger grid).  The hooks and the kernels see the
 * run's own steps (waveform times, Chebyshev's weights, snapshots, checks,
 * probes); the progress hook is also told at the range's end.  A range
 * whose first step is a multiple of the checks' and snapshots' spacing
 * counts its full passes from there, as a run of its own would.
 * run->steps: the step the fields hold (less than last where the stopping
 * test ended the run). */
pyr_status_t pyr_exec_fields_range(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, int64_t first, int64_t last,
                                   pyr_exec_carry_t *carry, const pyr_hooks_t *hooks, pyr_run_info_t *run);

/* Host-to-host copy of `box` between two host regions (held-back bands are
 * written into the grid with this), with all cores for large boxes. */
void pyr_host_copy_box(pyr_host_region_t *dst, const pyr_host_region_t *src, const pyr_box_t *box, size_t elem);

#endif
