/* The multigrid method (methods/multigrid.c): its entry in the registry,
 * and the run of its plans, which the executor's caller hands to it (the
 * level loop of solvers/multigrid/ runs the cycles, not the pass loop). */
#ifndef PYR_METHODS_MULTIGRID_H
#define PYR_METHODS_MULTIGRID_H

#include "methods/method.h"
#include "plan/plan.h"

extern const pyr_method_entry_t pyr_method_multigrid;

/* pyr_execute_fields of a plan whose method is PYR_METHOD_MULTIGRID: the
 * cycles to the tolerance; run->steps counts the cycles, run->change is the
 * relative residual, run->counts.computed the nodes written at every level.
 * The hooks' progress and cancel are asked after every cycle (no snapshots:
 * the method refuses them). */
pyr_status_t pyr_method_multigrid_execute(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks,
                                          pyr_run_info_t *run);

#endif
