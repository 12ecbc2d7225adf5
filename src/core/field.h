/* Host memory of grid functions: fields of a problem's grid or of a part of
 * one (several devices, MPI ranks), and buffers the size of a grid. */
#ifndef PYR_CORE_FIELD_H
#define PYR_CORE_FIELD_H

#include "core/recipe.h"
#include "pyrgrid.h"

/* A field of n[] nodes that pyr_field_destroy frees (data uninitialised),
 * for a part of a grid, which no problem describes.  Every field handed to
 * pyr_field_destroy must come from here, pyr_field_alloc_grid,
 * pyr_field_create or pyr_field_wrap (its header says whether the data are
 * the library's to free). */
pyr_status_t pyr_field_alloc(int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **out);

/* A field of the problem's grid (data uninitialised), its dims, n and
 * precision taken as they are (pyr_field_create validates the problem
 * first).  Out of memory, the message says what the grid needs and what
 * would make it fit. */
pyr_status_t pyr_field_alloc_grid(const pyr_problem_t *problem, pyr_field_t **out);

/* pyr_field_wrap_device's field once its device is checked (api/): a field
 * around data in device `device`'s memory, whose writes the caller queues
 * on `stream`. */
pyr_status_t pyr_field_wrap_on(int dims, const int64_t n[3], pyr_precision_t precision, void *data, int device, uintptr_t stream,
                               pyr_field_t **out);
/* The GPU whose memory holds a field's data (and its caller's stream), or -1
 * for host memory: every field but pyr_field_wrap_device's, those a caller
 * declares itself included. */
int pyr_field_device(const pyr_field_t *field, uintptr_t *stream);

/* A field of n[] nodes whose data read as zero without having been written
 * (fresh pages from the system: free until touched), known to hold zeros
 * until pyr_field_take_zero: the library's own fields that start at zero
 * (Maxwell's CPML and dispersive states), which a resident piece then sets
 * on the device instead of uploading.  pyr_field_destroy releases it. */
pyr_status_t pyr_field_alloc_zero(int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **out);
/* Whether a field holds the zeros pyr_field_alloc_zero made, unwritten since
 * (any field: one a caller declares is not such a field; one of
 * pyr_field_create_zero's, whose caller may write it, while the pages
 * touched since, if any, still read zero).  take: the same,
 * and the field is no longer known so, for whoever is about to write it. */
int pyr_field_is_zero(const pyr_field_t *field);
int pyr_field_take_zero(pyr_field_t *field);

/* A field of n[] nodes whose values are a recipe (core/recipe.h: the field's
 * node 0 at recipe->origin of the whole grid) that nobody has made yet: its
 * data are pyr_field_alloc_zero's pages (free until touched), and it is
 * marked with the recipe until pyr_field_take_recipe.  A resident run makes
 * the values on the device where the piece lives (the runtimes' fill op)
 * instead of uploading them; any reader of the data before the run must
 * call pyr_field_materialize (problem/field_init.h) first, which makes them
 * on the host and removes the mark.  The library's own fields only (the
 * program's initial fields): a caller's field is never marked so.
 * pyr_field_destroy releases it. */
pyr_status_t pyr_field_alloc_recipe(const pyr_recipe_t *recipe, pyr_precision_t precision, const int64_t n[3], pyr_field_t **out);
/* Whether a field is marked with a recipe (pyr_field_alloc_recipe's, or the
 * zeros of pyr_field_alloc_zero and pyr_field_create_zero as PYR_RECIPE_ZERO,
 * under pyr_field_is_zero's rules), the recipe into *out (may be NULL).
 * take: the same, and the mark removed, for whoever makes the values. */
int pyr_field_recipe(const pyr_field_t *field, pyr_recipe_t *out);
int pyr_field_take_recipe(pyr_field_t *field, pyr_recipe_t *out);

/* The page-table entries of host memory a run will write into made ahead of
 * its writes (MADV_POPULATE_WRITE, by a few threads of their own): a field
 * made on the device, whose fresh pages the final download would otherwise
 * fault in one by one inside its copies, is faulted in while the device
 * computes.  The contents are never touched, so writes into the memory
 * meanwhile are safe.  NULL where nothing was started (a small range, no
 * threads); join waits for the threads and frees it (NULL: nothing), before
 * the memory is released.  A system without the advice does nothing. */
typedef struct pyr_prefault pyr_prefault_t;
pyr_prefault_t *pyr_prefault_start(void *data, size_t bytes);
void pyr_prefault_join(pyr_prefault_t **prefault);

/* Host memory for a grid or a buffer the size of one (free() releases it):
 * 64-byte aligned, never NULL for 0 bytes; from 64 MiB on, 2 MiB aligned and
 * advised as transparent huge pages.  NULL when out of memory. */
void *pyr_host_grid_alloc(size_t bytes);

#endif
