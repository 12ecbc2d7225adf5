/* A problem's initial fields, whole or a part of the grid at a time
 * (pyr_field_init and friends of pyrgrid.h are the public ones). */
#ifndef PYR_PROBLEM_FIELD_INIT_H
#define PYR_PROBLEM_FIELD_INIT_H

#include "pyrgrid.h"

/* Fill `part` with the problem's initial field over the nodes origin ..
 * origin + part->n - 1 of the whole grid (part->n nodes per axis): the same
 * values as those nodes of pyr_field_init's field, made without the rest of
 * the grid (initial.kind = file reads only that hyperslab of the .npy or HDF5 file). */
pyr_status_t pyr_field_init_part(pyr_field_t *part, const pyr_problem_t *problem, const int64_t origin[3]);

/* The values of a field marked with a recipe (core/field.h
 * pyr_field_alloc_recipe) made on the host, as pyr_field_init_part makes that
 * part of the whole grid, and the mark removed: for whoever reads the field's
 * data before a run would have made them on a device.  Any other field: left
 * as it is (PYR_OK). */
pyr_status_t pyr_field_materialize(pyr_field_t *field);

/* The problem's initial field from `path` (dataset NULL: the scheme's first
 * field's name), finite values required, errors prefixed "initial.file: ". */
pyr_status_t pyr_field_init_file(pyr_field_t *f, const pyr_problem_t *p, const char *path, const char *dataset);

#endif
