/* Recipes: the built-in initial fields as functions of a node's place in the
 * whole grid, so that a field (or a part of one, or a piece of a part) can be
 * made wherever it is needed: on the host (problem/field_init.c), or on the
 * device where the piece is resident (the runtimes' fill op, backend/device.h).
 * Every kind is made from IEEE multiplies and integer operations only, so
 * every place makes the same bits:
 *   zero    all bits zero;
 *   sine    prod_d sin(pi g_d / (n_d - 1)) (0 on the boundary), gauss
 *           prod_d exp(-u_d^2): per-axis factors made on the host (its sin
 *           and exp, pyr_recipe_tables), a node's value ((tx * ty) * tz) in
 *           double, rounded to the precision;
 *   random  splitmix64 of the seed and the node's index in the whole grid
 *           (pyr_recipe_random), uniform in [0, 1).
 * This header is C and CUDA: the random formula is compiled by both from
 * this one text. */
#ifndef PYR_CORE_RECIPE_H
#define PYR_CORE_RECIPE_H

#include <stdint.h>

#ifdef __CUDACC__
#define PYR_RECIPE_FN __host__ __device__ static inline
#else
#define PYR_RECIPE_FN static inline
#endif

typedef enum {
    PYR_RECIPE_NONE = 0, /* not a recipe: the values are in memory */
    PYR_RECIPE_ZERO,
    PYR_RECIPE_SINE,
    PYR_RECIPE_GAUSS,
    PYR_RECIPE_RANDOM,
} pyr_recipe_kind_t;

/* What a field's values are: a kind, and where node 0 of the field lies in
 * the whole grid whose values the kind defines (a part of a grid is made as
 * that part of the whole). */
typedef struct {
    pyr_recipe_kind_t kind;
    int dims;
    int64_t whole[3];  /* nodes of the whole grid per axis (1 beyond dims) */
    int64_t origin[3]; /* the field's node 0 in the whole grid */
    uint64_t seed;     /* random */
} pyr_recipe_t;

/* The kinds with per-axis factor tables. */
PYR_RECIPE_FN int pyr_recipe_tabled(pyr_recipe_kind_t kind) { return kind == PYR_RECIPE_SINE || kind == PYR_RECIPE_GAUSS; }

/* splitmix64's finaliser: a fixed, well-mixed function of its word. */
PYR_RECIPE_FN uint64_t pyr_recipe_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The random kind's value of the node whose index in the whole grid (x
 * fastest) is gi: 53 bits of the mixed word, exact in a double. */
PYR_RECIPE_FN double pyr_recipe_random(uint64_t seed, int64_t gi)
{
    return (double)(pyr_recipe_mix64(seed * 0x100000001B3ull ^ pyr_recipe_mix64((uint64_t)gi)) >> 11) * 0x1.0p-53;
}

#ifndef __CUDACC__
#include <stddef.h>
/* The factors of a tabled kind for nodes lo[d] .. lo[d] + n[d] - 1 of the
 * field's axes d < dims: tab[d][i] for the field's node lo[d] + i (in the
 * whole grid origin[d] + lo[d] + i); tab[d] for d >= dims is NULL.  The
 * caller frees each with free().  Out of memory: PYR_ERR_NOMEM, nothing
 * left allocated. */
#include "pyrgrid.h"
pyr_status_t pyr_recipe_tables(const pyr_recipe_t *r, const int64_t lo[3], const int64_t n[3], double *tab[3]);
/* The values of nodes lo .. lo + n - 1 (the field's coordinates) of a recipe
 * into memory of `elem`-byte values (8: double, 4: float) where node lo + (x,
 * y, z) lies at element z * plane + y * pitch + x of base; tab as
 * pyr_recipe_tables makes it for lo and n (NULL for an untabled kind).  Rows
 * in parallel.  The CPU runtime's fill and the executor's host-side values
 * (a resident field's boundary) use it. */
void pyr_recipe_fill_rows(const pyr_recipe_t *r, const double *const tab[3], size_t elem, void *base, int64_t pitch, int64_t plane,
                          const int64_t lo[3], const int64_t n[3]);
/* The values of the nodes of `keep` that lie outside `inner` (a grid's
 * boundary shell, where a run writes back only the interior) into the host
 * array `data` holding box `host` (x fastest); the boxes in the recipe's
 * field coordinates. */
#include "core/box.h"
pyr_status_t pyr_recipe_fill_outside(const pyr_recipe_t *r, size_t elem, void *data, const pyr_box_t *host, const pyr_box_t *inner,
                                     const pyr_box_t *keep);
/* The recipe kind of an initial kind (PYR_RECIPE_NONE for a file's). */
pyr_recipe_kind_t pyr_recipe_of_init(pyr_init_kind_t init);
#endif

#endif
