/* What a plan will do, beyond pyr_plan_print's text (methods/report.c): a multigrid plan's own facts as JSON, its
 * hierarchy, what stays on the device and what is streamed, and the cost of a cycle, for the "plan" object of
 * pyrgrid plan --json and the run reports (api/json.c's pyr_report_plan). */
#ifndef PYR_METHODS_REPORT_H
#define PYR_METHODS_REPORT_H

#include "io/json.h"
#include "plan/plan.h"

/* The member `key` of the object being built: an object for a plan of method = multigrid, null for any other. */
void pyr_report_plan_multigrid(pyr_json_t *j, const char *key, const pyr_plan_t *plan);

#endif
