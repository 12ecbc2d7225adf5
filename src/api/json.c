/* The plan as JSON (pyr_plan_json, the "plan" of run reports): the whole
 * run's info and, over several devices, how the grid was cut and each
 * part's plan, through the public view (plan.c). */
#include "core/error.h"
#include "methods/report.h"
#include "outputs/report.h"
#include "plan/model.h"
#include "plan/plan.h"

void pyr_report_plan(pyr_json_t *j, const char *key, const pyr_plan_t *plan)
{
    pyr_plan_info_t info;
    if (!plan || pyr_plan_get_info(plan, &info) != PYR_OK) {
        pyr_clear_error();
        pyr_json_null(j, key);
        return;
    }
    const int dims = plan->problem.dims;
    pyr_json_object(j, key);
    pyr_report_plan_info(j, &info, dims); /* the whole run */
    pyr_json_int(j, "steps", plan->problem.steps);
    pyr_model_prediction_t me;
    /* (the sweeps' model prices no cycle: a multigrid plan's cost is its "multigrid" member's) */
    if (plan->method != PYR_METHOD_MULTIGRID && pyr_model_predict(plan, &plan->model, plan->model_form, 0, &me) == PYR_OK)
        pyr_json_real(j, "predicted_seconds", me.seconds);
    else pyr_json_null(j, "predicted_seconds");
    pyr_clear_error();
    pyr_json_string(j, "model", plan->model_source);
    pyr_json_string(j, "notice", info.notice ? info.notice : "");
    pyr_report_plan_multigrid(j, "multigrid", plan);
    /* several devices: how the grid was cut, and each part's plan (its local grid) */
    const int nparts = pyr_plan_part_count(plan);
    if (nparts > 1) {
        char text[320];
        pyr_plan_partition(plan, text, sizeof text);
        pyr_json_string(j, "parts", text);
        pyr_json_array(j, "part_plans");
        for (int i = 0; i < nparts; i++) {
            pyr_plan_info_t pi;
            if (pyr_plan_part_info(plan, i, &pi) != PYR_OK) {
                pyr_clear_error();
                pyr_json_null(j, NULL);
                continue;
            }
            pyr_json_object(j, NULL);
            pyr_report_plan_info(j, &pi, dims);
            pyr_json_end(j);
        }
        pyr_json_end(j);
    } else {
        pyr_json_null(j, "parts");
    }
    pyr_json_end(j);
}

size_t pyr_plan_json(const pyr_plan_t *plan, char *text, size_t size)
{
    pyr_json_t j;
    pyr_json_init(&j, 0);
    pyr_report_plan(&j, NULL, plan);
    return pyr_report_finish(&j, text, size);
}
