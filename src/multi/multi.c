/* A plan over several devices of one process as its own object (multi.h):
 * made from the options' device list, run on the caller's whole fields. */
#include "multi/multi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/field.h"
#include "exec/exec.h"
#include "multi/parts_internal.h"
#include "problem/devices.h"
#include "problem/field_init.h"

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

/* One part's host fields for a run on the caller's fields: those it does not
 * share with the caller made (inputs not given from the problem, the
 * library's auxiliaries at zero) or copied from the caller's grid. */
typedef struct {
    pyr_parts_t *P;
    part_t *pt;
    pyr_field_t *const *given;
    unsigned mask;
    pthread_t thread;
    pyr_status_t st;
    char message[1024];
} setup_t;

static void *setup_part(void *arg)
{
    setup_t *u = arg;
    pyr_parts_t *P = u->P;
    part_t *pt = u->pt;
    const size_t elem = pyr_precision_size(P->problem.precision);
    pyr_box_t grid = {{0, 0, 0}, {P->problem.n[0], P->problem.n[1], P->problem.n[2]}};
    pyr_status_t st = pyr_multi_alloc_part_fields(P, pt);
    if (st == PYR_OK) st = pyr_multi_make_part_fields(P, pt, 0, u->mask);
    for (int f = 0; f < P->scheme->nfields && st == PYR_OK; f++) {
        if (!((u->mask >> f) & 1) || pt->region[f].data) continue;
        pyr_host_region_t to = pyr_multi_region_of(pt, f), from = {u->given[f]->data, grid};
        pyr_host_copy_box(&to, &from, &pt->local, elem);
    }
    u->st = st;
    if (st != PYR_OK) snprintf(u->message, sizeof u->message, "%s", pyr_last_error());
    return NULL;
}

/* Every part's set-up at once, a thread per part (part 0 in the caller's). */
static pyr_status_t setup_parts(pyr_parts_t *P, pyr_field_t *const *given, unsigned mask)
{
    setup_t u[PYR_PARTS_MAX_DEVICES];
    int started[PYR_PARTS_MAX_DEVICES] = {0};
    for (int i = 0; i < P->ndev; i++) {
        u[i] = (setup_t){.P = P, .pt = &P->part[i], .given = given, .mask = mask, .st = PYR_OK};
        u[i].message[0] = 0;
    }
    for (int i = 1; i < P->ndev; i++) started[i] = pthread_create(&u[i].thread, NULL, setup_part, &u[i]) == 0;
    for (int i = 0; i < P->ndev; i++)
        if (!started[i]) setup_part(&u[i]); /* part 0, and any whose thread would not start */
    for (int i = 1; i < P->ndev; i++)
        if (started[i]) pthread_join(u[i].thread, NULL);
    for (int i = 0; i < P->ndev; i++) {
        if (u[i].st == PYR_OK) continue;
        if (P->ndev > 1) return pyr_fail(u[i].st, "device %d (part %d of %d): %.900s", P->part[i].device, P->part[i].index, P->nparts, u[i].message);
        return pyr_fail(u[i].st, "%s", u[i].message);
    }
    return PYR_OK;
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
    pyr_box_t grid = {{0, 0, 0}, {P->problem.n[0], P->problem.n[1], P->problem.n[2]}};
    unsigned mask = 0; /* the fields the caller gives (its auxiliaries are not read: the library's start at zero) */
    for (int f = 0; f < s->nfields; f++)
        if (((P->fields >> f) & 1) && given[f] && s->field[f].role != PYR_FIELD_AUX) mask |= 1u << f;
    /* A part that keeps its grid resident reads and writes the caller's grid in place: a region onto it
     * in the part's local coordinates, into which it writes back only its own box.  A part streaming
     * pieces writes every piece's nodes, its halo's too, so it keeps a host grid of its own. */
    P->shared = 0;
    for (int i = 0; i < P->ndev; i++) {
        part_t *pt = &P->part[i];
        memset(pt->region, 0, sizeof pt->region);
        if (!pt->plan->resident) continue;
        for (int f = 0; f < s->nfields; f++) {
            if (!((mask >> f) & 1)) continue;
            pt->region[f].data = given[f]->data;
            pt->region[f].box = grid;
            for (int a = 0; a < 3; a++) pt->region[f].box.lo[a] -= pt->local.lo[a], pt->region[f].box.hi[a] -= pt->local.lo[a];
            P->shared = 1;
        }
    }
    /* The caller's fields whose values are a recipe nobody has made (core/field.h): where every part
     * keeps its grid resident on the caller's and can make values on its device, each makes its own
     * there and nothing is uploaded; else they are made on the host now, for the parts to read. */
    int device_made = P->problem.steps > 0;
    for (int i = 0; i < P->ndev; i++) {
        memset(P->part[i].recipe, 0, sizeof P->part[i].recipe);
        if (!P->part[i].plan->resident || !P->part[i].plan->ops->fill) device_made = 0;
    }
    pyr_status_t st = PYR_OK;
    for (int f = 0; f < s->nfields && st == PYR_OK; f++) {
        pyr_recipe_t r;
        if (!((mask >> f) & 1)) continue;
        if (!device_made) {
            st = pyr_field_materialize(given[f]);
            continue;
        }
        if (!pyr_field_take_recipe(given[f], &r)) continue;
        for (int i = 0; i < P->ndev; i++) P->part[i].recipe[f] = r;
        /* the parts write back their shares of the interior: the boundary the field holds from the
         * start is made here */
        if (P->exchanged[f] && r.kind != PYR_RECIPE_ZERO)
            st = pyr_recipe_fill_outside(&r, pyr_precision_size(P->problem.precision), given[f]->data, &grid, &P->changing, &grid);
    }
    if (st == PYR_OK) st = setup_parts(P, given, mask);
    /* parts on the caller's grid that would each pin their host grid (run.host_memory = pin): that grid
     * pinned once, portably (every device's copies then go straight), not a part's share at a time */
    const pyr_device_ops_t *ops = P->part[0].plan->ops;
    int pin = P->shared && ops->host_register && ops->host_unregister;
    for (int i = 0; i < P->ndev && pin; i++)
        for (int f = 0; f < s->nfields; f++)
            if (P->part[i].region[f].data && P->part[i].plan->host_memory != PYR_HOST_PIN) pin = 0;
    void *pinned[PYR_MAX_FIELDS] = {NULL};
    double pin_s = 0;
    if (st == PYR_OK && pin) {
        const double t0 = pyr_now_s();
        const size_t bytes = (size_t)pyr_box_volume(&grid) * pyr_precision_size(P->problem.precision);
        for (int f = 0; f < s->nfields && pin; f++) {
            if (!((mask >> f) & 1)) continue;
            if (ops->host_register(P->part[0].plan->ctx, given[f]->data, bytes) == PYR_OK) pinned[f] = given[f]->data;
            else pin = 0; /* staged, as each part's copies would then be */
        }
        if (!pin) {
            pyr_clear_error();
            for (int f = 0; f < s->nfields; f++)
                if (pinned[f]) ops->host_unregister(P->part[0].plan->ctx, pinned[f]), pinned[f] = NULL;
        }
        pin_s = pyr_now_s() - t0;
    }
    if (st == PYR_OK) st = pyr_parts_run(P, hooks, run);
    if (pin) {
        const double t1 = pyr_now_s();
        for (int f = 0; f < s->nfields; f++)
            if (pinned[f]) ops->host_unregister(P->part[0].plan->ctx, pinned[f]);
        if (run && st == PYR_OK) {
            run->host_memory = PYR_HOST_PIN;
            snprintf(run->host_note, sizeof run->host_note, "the caller's grid pinned once for every part");
            if (pin_s > run->pin_seconds) run->pin_seconds = pin_s;
            run->unpin_seconds = pyr_now_s() - t1;
        }
    }
    /* the own boxes of the parts with host grids of their own back into the caller's fields: at the
     * end, and at a stop asked for, where every part holds the same step (the fields then hold that
     * time layer, as on one device) */
    const int stopped_as_asked = st == PYR_ERR_CANCELLED && P->cancelled;
    if (st == PYR_OK || stopped_as_asked) {
        const size_t elem = pyr_precision_size(P->problem.precision);
        char message[1024];
        snprintf(message, sizeof message, "%s", stopped_as_asked ? pyr_last_error() : "");
        for (int i = 0; i < P->ndev; i++)
            for (int f = 0; f < s->nfields; f++) {
                if (!P->exchanged[f] || !((mask >> f) & 1) || P->part[i].region[f].data) continue;
                pyr_host_region_t to = {given[f]->data, grid}, from = pyr_multi_region_of(&P->part[i], f);
                pyr_host_copy_box(&to, &from, &P->part[i].own, elem);
            }
        if (stopped_as_asked) pyr_fail(st, "%s", message);
    }
    for (int i = 0; i < P->ndev; i++) {
        memset(P->part[i].region, 0, sizeof P->part[i].region);
        memset(P->part[i].recipe, 0, sizeof P->part[i].recipe);
    }
    P->shared = 0;
    pyr_multi_free_fields(P);
    return st;
}
