/* Recipes' per-axis factor tables (core/recipe.h): made on the host with
 * its sin and exp, for the host's fill (problem/field_init.c) and the
 * device's (uploaded by the runtimes' fill op) alike, so both multiply the
 * same factors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/recipe.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

pyr_recipe_kind_t pyr_recipe_of_init(pyr_init_kind_t init)
{
    switch (init) {
    case PYR_INIT_SINE: return PYR_RECIPE_SINE;
    case PYR_INIT_GAUSS: return PYR_RECIPE_GAUSS;
    case PYR_INIT_RANDOM: return PYR_RECIPE_RANDOM;
    case PYR_INIT_ZERO: return PYR_RECIPE_ZERO;
    default: return PYR_RECIPE_NONE;
    }
}

pyr_status_t pyr_recipe_tables(const pyr_recipe_t *r, const int64_t lo[3], const int64_t n[3], double *tab[3])
{
    for (int d = 0; d < 3; d++) tab[d] = NULL;
    if (!pyr_recipe_tabled(r->kind)) return PYR_OK;
    for (int d = 0; d < r->dims; d++) {
        tab[d] = malloc((size_t)(n[d] > 0 ? n[d] : 1) * sizeof(double));
        if (!tab[d]) {
            for (int e = 0; e < d; e++) free(tab[e]), tab[e] = NULL;
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the initial field's factors");
        }
        const int64_t gn = r->whole[d];
        for (int64_t i = 0; i < n[d]; i++) {
            const int64_t g = r->origin[d] + lo[d] + i;
            if (r->kind == PYR_RECIPE_SINE) {
                tab[d][i] = g == 0 || g == gn - 1 ? 0.0 : sin(M_PI * (double)g / (double)(gn - 1));
            } else {
                const double u = ((double)g / (double)(gn - 1) - 0.5) / 0.1;
                tab[d][i] = exp(-(u * u));
            }
        }
    }
    return PYR_OK;
}

void pyr_recipe_fill_rows(const pyr_recipe_t *r, const double *const tab[3], size_t elem, void *base, int64_t pitch, int64_t plane,
                          const int64_t lo[3], const int64_t n[3])
{
    const int dbl = elem == 8, dims = r->dims;
    const int64_t w = n[0], ny = n[1], nz = n[2];
#pragma omp parallel for collapse(2) schedule(static) if (w * ny * nz > 32768)
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++) {
            char *row = (char *)base + (z * plane + y * pitch) * (int64_t)elem;
            if (r->kind == PYR_RECIPE_ZERO) {
                memset(row, 0, (size_t)w * elem);
            } else if (r->kind == PYR_RECIPE_RANDOM) {
                const int64_t gy = r->origin[1] + lo[1] + y, gz = r->origin[2] + lo[2] + z;
                const int64_t g0 = (gz * r->whole[1] + gy) * r->whole[0] + r->origin[0] + lo[0];
                for (int64_t x = 0; x < w; x++) {
                    const double v = pyr_recipe_random(r->seed, g0 + x);
                    if (dbl) ((double *)row)[x] = v;
                    else ((float *)row)[x] = (float)v;
                }
            } else {
                /* the host's order: ((tx * ty) * tz), then rounded to the precision */
                const double *tx = tab[0];
                for (int64_t x = 0; x < w; x++) {
                    double v = tx[x];
                    if (dims >= 2) v = v * tab[1][y];
                    if (dims >= 3) v = v * tab[2][z];
                    if (dbl) ((double *)row)[x] = v;
                    else ((float *)row)[x] = (float)v;
                }
            }
        }
}

pyr_status_t pyr_recipe_fill_outside(const pyr_recipe_t *r, size_t elem, void *data, const pyr_box_t *host, const pyr_box_t *inner,
                                     const pyr_box_t *keep)
{
    const int64_t hx = pyr_box_extent(host, 0), hy = pyr_box_extent(host, 1);
    for (int a = 0; a < r->dims; a++)
        for (int side = 0; side < 2; side++) {
            /* the slab on this side of `inner` along axis a, across the others (corners twice: the same values) */
            pyr_box_t b = *keep;
            if (side == 0) b.hi[a] = inner->lo[a] < b.hi[a] ? inner->lo[a] : b.hi[a];
            else b.lo[a] = inner->hi[a] > b.lo[a] ? inner->hi[a] : b.lo[a];
            b = pyr_box_intersect(&b, host);
            if (pyr_box_empty(&b)) continue;
            int64_t n[3];
            double *tab[3];
            for (int d = 0; d < 3; d++) n[d] = pyr_box_extent(&b, d);
            PYR_TRY(pyr_recipe_tables(r, b.lo, n, tab));
            const int64_t at = ((b.lo[2] - host->lo[2]) * hy + (b.lo[1] - host->lo[1])) * hx + (b.lo[0] - host->lo[0]);
            pyr_recipe_fill_rows(r, (const double *const *)tab, elem, (char *)data + at * (int64_t)elem, hx, hx * hy, b.lo, n);
            for (int d = 0; d < 3; d++) free(tab[d]);
        }
    return PYR_OK;
}
