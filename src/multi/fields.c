/* The parts' host fields: each part's local grid, made from the problem
 * or copied from the whole fields given, and copied out. */
#include "multi/parts_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/field.h"
#include "exec/exec.h"
#include "problem/field_init.h"

pyr_host_region_t pyr_multi_region_of(const part_t *pt, int f)
{
    if (pt->region[f].data) return pt->region[f];
    pyr_host_region_t r = {pt->fields[f]->data, pt->local};
    return r;
}

void pyr_multi_free_fields(pyr_parts_t *P)
{
    for (int i = 0; i < P->ndev; i++)
        for (int f = 0; f < PYR_MAX_FIELDS; f++) pyr_field_destroy(&P->part[i].fields[f]);
}

pyr_status_t pyr_multi_alloc_part_fields(pyr_parts_t *P, part_t *pt)
{
    for (int f = 0; f < P->scheme->nfields; f++) {
        if (!((P->fields >> f) & 1) || pt->fields[f] || pt->region[f].data) continue;
        /* the library's auxiliaries start at zero: pages that read so untouched (a resident part sets them on its device) */
        if (P->scheme->field[f].role == PYR_FIELD_AUX)
            PYR_TRY(pyr_field_alloc_zero(pt->problem.dims, pt->problem.n, pt->problem.precision, &pt->fields[f]));
        else PYR_TRY(pyr_field_create(&pt->problem, &pt->fields[f]));
    }
    return PYR_OK;
}

pyr_status_t pyr_multi_alloc_fields(pyr_parts_t *P)
{
    for (int i = 0; i < P->ndev; i++) PYR_TRY(pyr_multi_alloc_part_fields(P, &P->part[i]));
    return PYR_OK;
}

/* Part pt's field f (its first state field) replaced by one marked with the problem's initial
 * kind as its recipe over the part's local grid (core/field.h), when the kind has one and the
 * scheme has no initial state of its own: a resident part then makes it on its device, any other
 * on the host before its run.  Returns whether it was; out of memory, the field made as before. */
static int recipe_part(pyr_parts_t *P, part_t *pt, int f)
{
    const pyr_recipe_kind_t kind = pyr_recipe_of_init(P->problem.init);
    if (kind == PYR_RECIPE_NONE || P->scheme->init_state) return 0;
    pyr_recipe_t r = {kind, P->problem.dims, {P->problem.n[0], P->problem.n[1], P->problem.n[2]}, {0, 0, 0}, P->problem.seed};
    for (int a = 0; a < 3; a++) r.origin[a] = pt->local.lo[a];
    pyr_field_t *made = NULL;
    if (pyr_field_alloc_recipe(&r, P->problem.precision, pt->fields[f]->n, &made) != PYR_OK) {
        pyr_clear_error();
        return 0;
    }
    pyr_field_destroy(&pt->fields[f]);
    pt->fields[f] = made;
    return 1;
}

/* Part pt's inputs (and, when `initial`, its state) made from the problem
 * over its local grid. */
pyr_status_t pyr_multi_make_part_fields(pyr_parts_t *P, part_t *pt, int initial, unsigned given)
{
    const int64_t *origin = pt->local.lo;
    for (int f = 0; f < P->scheme->nfields; f++) {
        if (!((P->fields >> f) & 1) || ((given >> f) & 1) || !pt->fields[f]) continue;
        pyr_field_t *fl = pt->fields[f];
        const pyr_field_role_t role = P->scheme->field[f].role;
        if (role == PYR_FIELD_INPUT) {
            if (P->scheme->init_input_part) PYR_TRY(P->scheme->init_input_part(&P->problem, f, origin, fl));
            else PYR_TRY(P->scheme->init_input(&pt->problem, f, fl)); /* a windowed scheme's, on the part's problem */
        } else if (role == PYR_FIELD_AUX) {
            /* the library's own state starts at zero in every run */
            if (!pyr_field_is_zero(fl)) memset(fl->data, 0, (size_t)pyr_field_count(fl) * pyr_precision_size(fl->precision));
        } else if (initial) {
            if (P->scheme->init_state && P->scheme->windowed) PYR_TRY(P->scheme->init_state(&pt->problem, f, fl));
            /* the problem's initial field is the first state field's; any other starts at zero */
            else if (f == 0 && recipe_part(P, pt, f)) continue;
            else if (f == 0) PYR_TRY(pyr_field_init_part(fl, &P->problem, origin));
            else memset(fl->data, 0, (size_t)pyr_field_count(fl) * pyr_precision_size(fl->precision));
        }
    }
    return PYR_OK;
}

pyr_status_t pyr_parts_init(pyr_parts_t *P)
{
    pyr_status_t st = pyr_multi_alloc_fields(P);
    for (int i = 0; i < P->ndev && st == PYR_OK; i++) {
        st = pyr_multi_make_part_fields(P, &P->part[i], 1, 0);
        if (st != PYR_OK && P->ndev > 1) st = pyr_fail_context(st, "device %d (part %d of %d): ", P->part[i].device, P->part[i].index, P->nparts);
    }
    return pyr_multi_agree(P, st);
}

pyr_box_t pyr_parts_process_box(const pyr_parts_t *P)
{
    pyr_box_t boxes[PYR_PARTS_MAX_DEVICES];
    for (int i = 0; i < P->ndev; i++) boxes[i] = P->part[i].own;
    return pyr_box_hull(boxes, P->ndev);
}

pyr_status_t pyr_parts_copy_out(const pyr_parts_t *P, int f, const pyr_box_t *box, void *dst)
{
    if (f < 0 || f >= P->scheme->nfields || !P->exchanged[f]) return pyr_fail(PYR_ERR_ARG, "field %d is not an updated field of the scheme", f);
    const size_t elem = pyr_precision_size(P->problem.precision);
    pyr_host_region_t to = {dst, *box};
    for (int i = 0; i < P->ndev; i++) {
        const part_t *pt = &P->part[i];
        if (!pt->fields[f]) return pyr_fail(PYR_ERR_ARG, "the parts hold no values yet (pyr_parts_init)");
        pyr_box_t b = pyr_box_intersect(&pt->own, box);
        if (pyr_box_empty(&b)) continue;
        pyr_host_region_t from = pyr_multi_region_of(pt, f);
        pyr_host_copy_box(&to, &from, &b, elem);
    }
    return PYR_OK;
}
