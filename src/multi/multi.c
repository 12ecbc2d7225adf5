/* A plan over several devices of one process as its own object (multi.h):
 * made from the options' device list, run on the caller's whole fields. */
#include "multi/multi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "exec/exec.h"
#include "multi/parts_internal.h"
#include "problem/devices.h"

pyr_multi_t *pyr_multi_of(const pyr_plan_t *plan) { return plan && plan->kind == PYR_PLAN_PARTS ? (pyr_multi_t *)plan : NULL; }

pyr_status_t pyr_multi_devices(const pyr_options_t *options, int *count, int *first)
{
    int devs[PYR_PARTS_MAX_DEVICES], n = 0;
    *count = 0;
    *first = options->device;
    PYR_TRY(pyr_parts_parse_devices(options->devices, devs, PYR_PARTS_MAX_DEVICES, &n));
    if (n == -1) {
        pyr_backend_kind_t kind = options->backend;
        if (kind == PYR_BACKEND_AUTO) kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
        n = kind == PYR_BACKEND_CUDA ? pyr_gpu_count() : 1;
        devs[0] = 0;
    }
    *count = n;
    if (n >= 1) *first = devs[0];
    return PYR_OK;
}

pyr_status_t pyr_multi_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **out)
{
    *out = NULL;
    pyr_multi_t *m = calloc(1, sizeof *m);
    if (!m) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_status_t st = pyr_parts_create(problem, options, NULL, &m->parts);
    if (st == PYR_OK) st = pyr_plan_copy_description(m->parts->part[0].plan, &m->head);
    if (st != PYR_OK) {
        pyr_parts_destroy(&m->parts);
        free(m);
        return st;
    }
    m->head.kind = PYR_PLAN_PARTS;
    *out = &m->head;
    return PYR_OK;
}

void pyr_multi_destroy(pyr_plan_t **plan)
{
    pyr_multi_t *m = plan ? pyr_multi_of(*plan) : NULL;
    if (!m) return;
    pyr_plan_release(&m->head);
    pyr_parts_destroy(&m->parts);
    free(m);
    *plan = NULL;
}

pyr_status_t pyr_multi_execute(pyr_multi_t *m, pyr_field_t *const *given, int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run)
{
    if (run) memset(run, 0, sizeof *run);
    if (!given) return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: plan and fields are required");
    pyr_parts_t *P = m->parts;
    const pyr_scheme_t *s = P->scheme;
    if (nfields != s->nfields)
        return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: the %s scheme has %d field%s, %d given", s->name, s->nfields, s->nfields == 1 ? "" : "s",
                        nfields);
    if (hooks && hooks->snapshot)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "snapshots are not supported over several devices yet; run without them, or on one device");
    for (int f = 0; f < s->nfields; f++) {
        if (!((P->fields >> f) & 1)) continue;
        const pyr_field_t *g = given[f];
        if (!g || s->field[f].role == PYR_FIELD_AUX) {
            if (!g && s->field[f].role != PYR_FIELD_INPUT && s->field[f].role != PYR_FIELD_AUX)
                return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: field %s of the %s scheme is required", s->field[f].name, s->name);
            continue;
        }
        for (int a = 0; a < 3; a++)
            if (g->n[a] != P->problem.n[a])
                return pyr_fail(PYR_ERR_ARG, "field %s of %lld x %lld x %lld nodes does not match the plan's grid of %lld x %lld x %lld",
                                s->field[f].name, (long long)g->n[0], (long long)g->n[1], (long long)g->n[2], (long long)P->problem.n[0],
                                (long long)P->problem.n[1], (long long)P->problem.n[2]);
        if (g->precision != P->problem.precision || !g->data)
            return pyr_fail(PYR_ERR_ARG, "field %s: precision or data does not match the plan", s->field[f].name);
    }
    const size_t elem = pyr_precision_size(P->problem.precision);
    pyr_box_t grid = {{0, 0, 0}, {P->problem.n[0], P->problem.n[1], P->problem.n[2]}};
    pyr_status_t st = pyr_multi_alloc_fields(P);
    /* each part's local grid from the fields given (inputs not given: made from the problem) */
    for (int i = 0; i < P->ndev && st == PYR_OK; i++) {
        part_t *pt = &P->part[i];
        st = pyr_multi_make_part_fields(P, pt, 0);
        for (int f = 0; f < s->nfields && st == PYR_OK; f++) {
            if (!((P->fields >> f) & 1) || !given[f] || s->field[f].role == PYR_FIELD_AUX) continue;
            pyr_host_region_t to = pyr_multi_region_of(pt, f), from = {given[f]->data, grid};
            pyr_host_copy_box(&to, &from, &pt->local, elem);
        }
    }
    if (st == PYR_OK) st = pyr_parts_run(P, hooks, run);
    /* the parts' own boxes back into the caller's fields: at the end, and at
     * a stop asked for, where every part holds the same step (the fields then
     * hold that time layer, as on one device) */
    const int stopped_as_asked = st == PYR_ERR_CANCELLED && P->cancelled;
    if (st == PYR_OK || stopped_as_asked) {
        char message[1024];
        snprintf(message, sizeof message, "%s", stopped_as_asked ? pyr_last_error() : "");
        for (int i = 0; i < P->ndev; i++)
            for (int f = 0; f < s->nfields; f++) {
                if (!P->exchanged[f] || !given[f] || s->field[f].role == PYR_FIELD_AUX) continue;
                pyr_host_region_t to = {given[f]->data, grid}, from = pyr_multi_region_of(&P->part[i], f);
                pyr_host_copy_box(&to, &from, &P->part[i].own, elem);
            }
        if (stopped_as_asked) pyr_fail(st, "%s", message);
    }
    pyr_multi_free_fields(P);
    return st;
}
