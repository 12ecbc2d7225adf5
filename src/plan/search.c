/* The model-driven search: the predicted time of candidate plans, the best
 * height for a decomposition (ESTIMATE), the decompositions worth trying. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/model.h"
#include "plan/planner.h"

/* ------------------------------------------------------ automatic choices */

pyr_status_t pyr_plan_note_candidate(candidates_t *cs, pyr_decomp_t d, int64_t h, int slots, double s)
{
    if (!cs) return PYR_OK;
    if (cs->n == cs->cap) {
        int cap = cs->cap ? 2 * cs->cap : 64;
        candidate_t *g = realloc(cs->c, (size_t)cap * sizeof *g);
        if (!g) return pyr_fail(PYR_ERR_NOMEM, "out of host memory planning");
        cs->c = g;
        cs->cap = cap;
    }
    cs->c[cs->n++] = (candidate_t){d, h, slots, s};
    return PYR_OK;
}

/* Predicted seconds of the whole run with (method, decomp, h); fails when it
 * does not fit. */
pyr_status_t pyr_plan_predict_with(pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t h, uint64_t budget,
                                 double *seconds)
{
    PYR_TRY(pyr_plan_build(plan, method, decomp, h, budget));
    pyr_model_prediction_t pr;
    PYR_TRY(pyr_model_predict(plan, &plan->model, plan->model_form, 0, &pr));
    *seconds = pr.seconds;
    return PYR_OK;
}

/* The height with the least predicted run time for one decomposition: a
 * geometric ladder (ratio ~1.15) up to the largest height that fits or the
 * number of steps, then every height between the best rung's neighbours
 * (at most 64 of them, evenly spread when the gap is wider). */
pyr_status_t pyr_plan_search_height(pyr_plan_t *plan, pyr_decomp_t decomp, uint64_t budget, int64_t *best_h, double *best_s,
                                  candidates_t *seen)
{
    const pyr_problem_t *p = &plan->problem;
    int64_t hmax = p->steps > 0 ? p->steps : 1;
    /* passes end at the stopping test's checks: higher pyramids would never be built */
    if (plan->check_every > 0 && plan->check_every < hmax) hmax = plan->check_every;
    int64_t ladder[256];
    int nl = 0, ibest = -1;
    *best_h = 0;
    *best_s = INFINITY;
    int worse = 0;
    for (int64_t h = 1; h <= hmax && nl < 256; h = h + 1 > h * 23 / 20 ? h + 1 : h * 23 / 20) {
        double s;
        if (pyr_plan_predict_with(plan, PYR_METHOD_PYRAMID, decomp, h, budget, &s) != PYR_OK) break; /* higher ones need more memory */
        PYR_TRY(pyr_plan_note_candidate(seen, decomp, h, plan->try_slots, s));
        ladder[nl] = h;
        if (s < *best_s) {
            *best_s = s;
            *best_h = h;
            ibest = nl;
        }
        nl++;
        /* past the optimum the redundant work grows without bound (and the
         * task count with it near the largest height that fits): stop once
         * three rungs in a row are 1.5 times the best */
        worse = s > 1.5 * *best_s ? worse + 1 : 0;
        if (worse == 3) break;
    }
    if (ibest < 0) return pyr_plan_build(plan, PYR_METHOD_PYRAMID, decomp, 1, budget); /* reports why nothing fits */
    pyr_clear_error();
    int64_t lo = ibest > 0 ? ladder[ibest - 1] + 1 : 1;
    int64_t hi = ibest + 1 < nl ? ladder[ibest + 1] - 1 : (ladder[ibest] < hmax ? ladder[ibest] * 23 / 20 + 1 : hmax);
    if (hi > hmax) hi = hmax;
    int64_t span = hi - lo + 1, stride = span > 64 ? (span + 63) / 64 : 1;
    for (int64_t h = lo; h <= hi; h += stride) {
        if (h == ladder[ibest]) continue;
        double s;
        if (pyr_plan_predict_with(plan, PYR_METHOD_PYRAMID, decomp, h, budget, &s) != PYR_OK) {
            pyr_clear_error();
            continue;
        }
        PYR_TRY(pyr_plan_note_candidate(seen, decomp, h, plan->try_slots, s));
        if (s < *best_s) {
            *best_s = s;
            *best_h = h;
        }
    }
    return PYR_OK;
}

int pyr_plan_decomp_candidates(const pyr_problem_t *p, pyr_decomp_t requested, pyr_decomp_t out[2])
{
    if (requested != PYR_DECOMP_AUTO) {
        out[0] = requested;
        return 1;
    }
    if (p->dims == 1) out[0] = PYR_DECOMP_SEGMENTS;
    else if (p->dims == 3) {
        out[0] = PYR_DECOMP_SLABS;
        out[1] = PYR_DECOMP_BLOCKS;
        return 2;
    } else {
        out[0] = PYR_DECOMP_STRIPS;
        out[1] = PYR_DECOMP_BLOCKS;
        return 2;
    }
    return 1;
}

void pyr_plan_add_notice(pyr_plan_t *plan, const char *fmt, ...) PYR_PRINTF(2, 3);
void pyr_plan_add_notice(pyr_plan_t *plan, const char *fmt, ...)
{
    size_t len = strlen(plan->notice);
    if (len + 3 >= sizeof plan->notice) return;
    if (len) {
        strcat(plan->notice, "; ");
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->notice + len, sizeof plan->notice - len, fmt, ap);
    va_end(ap);
}

void pyr_refusal_note(pyr_refusal_t *r, const pyr_plan_t *plan, pyr_status_t status)
{
    if (status == PYR_OK) return;
    const uint64_t need = status == PYR_ERR_BUDGET ? plan->refused_bytes : 0;
    /* the first refusal, else one that names less memory than the kept one (or any, where the kept names none) */
    if (r->status != PYR_OK && (need == 0 || (r->need != 0 && need >= r->need))) return;
    r->status = status;
    r->need = need;
    snprintf(r->message, sizeof r->message, "%s", pyr_last_error());
}

pyr_status_t pyr_refusal_raise(const pyr_refusal_t *r, pyr_plan_t *plan)
{
    plan->refused_bytes = r->need;
    if (r->status == PYR_OK) return pyr_fail(PYR_ERR_INTERNAL, "an automatic choice found no candidate and noted no refusal");
    return pyr_fail(r->status, "%s", r->message);
}
