/* Parts of grid functions (several devices, MPI ranks: exec/parts.c). */
#ifndef PYR_CORE_FIELD_H
#define PYR_CORE_FIELD_H

#include "pyrgrid.h"

/* Fill `part` with the problem's initial field over the nodes origin ..
 * origin + part->n - 1 of the whole grid (part->n nodes per axis): the same
 * values as those nodes of pyr_field_init's field, made without the rest of
 * the grid (initial.kind = file reads only that hyperslab of the .npy). */
pyr_status_t pyr_field_init_part(pyr_field_t *part, const pyr_problem_t *problem, const int64_t origin[3]);

#endif
