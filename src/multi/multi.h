/* A plan over several devices of one process (run.devices): its own
 * object, which owns the parts (multi/parts.h), each with a plan of one
 * device on its local grid.  The public handle (api/) is its head: a plan
 * of kind PYR_PLAN_PARTS, through which the public entry points find it.
 * The head is a description of part 0's plan (no context, nothing runs on
 * it) so that readers of plan internals (the plan printer, the program)
 * keep working on it; the whole run is described by pyr_plan_get_info
 * (api/). */
#ifndef PYR_MULTI_MULTI_H
#define PYR_MULTI_MULTI_H

#include "multi/parts.h"
#include "plan/plan.h"

typedef struct {
    pyr_plan_t head; /* first: the public handle points here */
    pyr_parts_t *parts;
} pyr_multi_t;

/* The multi plan for options naming several devices; *plan its head (a
 * list of one device never comes here: api/ makes that device's plan). */
pyr_status_t pyr_multi_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **plan);
/* The devices options->devices names (after "all" is counted) and the
 * first of them; 0 when the list is empty. */
pyr_status_t pyr_multi_devices(const pyr_options_t *options, int *count, int *first);
/* The multi plan whose head `plan` is, or NULL for a plan of one device. */
pyr_multi_t *pyr_multi_of(const pyr_plan_t *plan);
void pyr_multi_destroy(pyr_plan_t **plan);
/* pyr_execute_fields of a multi plan: fields of the whole grid, cut into
 * the parts' local grids, run, and each part's own box copied back, at the
 * end or at a stop the hooks asked for (then the fields hold that step). */
pyr_status_t pyr_multi_execute(pyr_multi_t *m, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run);

#endif
