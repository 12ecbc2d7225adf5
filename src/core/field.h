/* Parts of grid functions (several devices, MPI ranks: exec/parts.c). */
#ifndef PYR_CORE_FIELD_H
#define PYR_CORE_FIELD_H

#include "pyrgrid.h"

/* A field of n[] nodes that pyr_field_destroy frees (data uninitialised),
 * for a part of a grid, which no problem describes.  Every field handed to
 * pyr_field_destroy must come from here, pyr_field_create or pyr_field_wrap
 * (its header says whether the data are the library's to free). */
pyr_status_t pyr_field_alloc(int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **out);

/* Host memory for a grid or a buffer the size of one (free() releases it):
 * 64-byte aligned, never NULL for 0 bytes; from 64 MiB on, 2 MiB aligned and
 * advised as transparent huge pages.  NULL when out of memory. */
void *pyr_host_grid_alloc(size_t bytes);

/* Fill `part` with the problem's initial field over the nodes origin ..
 * origin + part->n - 1 of the whole grid (part->n nodes per axis): the same
 * values as those nodes of pyr_field_init's field, made without the rest of
 * the grid (initial.kind = file reads only that hyperslab of the .npy or HDF5 file). */
pyr_status_t pyr_field_init_part(pyr_field_t *part, const pyr_problem_t *problem, const int64_t origin[3]);

/* Read nodes origin .. origin + part->n - 1 of the grid function in `path`
 * (by its extension: HDF5 dataset `dataset`, NULL "u", or .npy), which must
 * have the problem's grid and precision, into part. */
pyr_status_t pyr_field_read_part(pyr_field_t *part, const pyr_problem_t *problem, const char *path, const char *dataset,
                                 const int64_t origin[3]);

#endif
