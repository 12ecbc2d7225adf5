/* The public runs: a plan of one device goes to the executor (exec/), or
 * for plan = refine to the trials above it (tune/), a multi plan to its
 * parts (multi/), a method with a loop of its own (multigrid) to it. */
#include <string.h>

#include "core/error.h"
#include "core/field.h"
#include "exec/exec.h"
#include "methods/method.h"
#include "multi/multi.h"
#include "problem/field_init.h"
#include "tune/tune.h"

pyr_status_t pyr_execute_fields(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run)
{
    if (run) memset(run, 0, sizeof *run);
    if (!plan || !fields) return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: plan and fields are required");
    /* the caller's fields in GPU memory: only a plan that computes on them there takes them */
    for (int f = 0; f < nfields && f < PYR_MAX_FIELDS; f++) {
        const pyr_status_t st = fields[f] ? pyr_plan_takes_field(plan, fields[f]) : PYR_OK;
        if (st != PYR_OK) return pyr_fail_context(st, "field %s: ", f < plan->scheme->nfields ? plan->scheme->field[f].name : "beyond the scheme's");
    }
    const pyr_method_entry_t *method = pyr_method_find(plan->method);
    /* a method with a loop of its own reads the host fields as they are: fields whose values are a
     * recipe nobody has made yet (core/field.h) are made here first */
    if (method && method->execute) {
        for (int f = 0; f < nfields && f < PYR_MAX_FIELDS; f++)
            if (fields[f]) PYR_TRY(pyr_field_materialize(fields[f]));
        return method->execute(plan, fields, nfields, hooks, run);
    }
    pyr_multi_t *m = pyr_multi_of(plan);
    if (m) return pyr_multi_execute(m, fields, nfields, hooks, run);
    /* plan = refine: its first passes try the model's best candidates (tune/refine.c) */
    if (plan->options.plan_mode == PYR_PLAN_REFINE) return pyr_tune_refine_execute(plan, fields, nfields, hooks, run);
    return pyr_exec_fields(plan, fields, nfields, hooks, run);
}

pyr_status_t pyr_execute(pyr_plan_t *plan, pyr_field_t *field, const pyr_hooks_t *hooks, pyr_counters_t *counters)
{
    if (counters) memset(counters, 0, sizeof *counters);
    if (!plan || !field) return pyr_fail(PYR_ERR_ARG, "pyr_execute: plan and field are required");
    pyr_field_t *fields[PYR_MAX_FIELDS] = {field};
    pyr_run_info_t run;
    PYR_TRY(pyr_execute_fields(plan, fields, plan->scheme->nfields, hooks, &run));
    if (counters) *counters = run.counts;
    return PYR_OK;
}
