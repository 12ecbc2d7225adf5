/* The naive method: the whole grid stays on the device, one piece, stepped
 * by compute calls of about 100 steps with progress between them.  method =
 * auto takes it wherever it fits the budget. */
#include <math.h>
#include <stdio.h>

#include "methods/method.h"

int64_t pyr_method_resident_chunk(const pyr_plan_t *plan)
{
    /* Steps per compute call, progress reported between them: height when given, else about 100 in whole
     * launches of the kernel (launch_steps): 98 for a kernel of seven steps per launch, 99 for eleven.  A call
     * of 100 would cut into launches of 7 and 5 or of 11 and 9 steps (backend/launch_split.h: odd sizes),
     * and shallower launches run slower (measured: docs/performance.md#heat-2d-temporal-blocking). */
    int64_t chunk = plan->options.height;
    if (chunk <= 0) {
        const int k = pyr_plan_launch_steps(plan);
        chunk = k > 1 && k <= 100 ? 100 / k * k : 100;
    }
    if (chunk > plan->problem.steps) chunk = plan->problem.steps;
    return chunk > 0 ? chunk : 1;
}

/* The grid resident in the budget: its two time layers (and input fields, and the kernel's work memory). */
static pyr_status_t naive_fits(pyr_plan_t *plan, pyr_method_ctx_t *ctx)
{
    return pyr_plan_build(plan, PYR_METHOD_NAIVE, ctx->cands[0], 1, ctx->budget);
}

/* Nothing to weigh: one piece, the chunk of steps per call. */
static pyr_status_t naive_choose(pyr_plan_t *plan, pyr_method_ctx_t *ctx, pyr_method_choice_t *c)
{
    c->decomp = ctx->cands[0];
    c->height = pyr_method_resident_chunk(plan);
    c->seconds = NAN;
    c->modelled = 0;
    snprintf(c->why, sizeof c->why, "the whole grid resident, %lld steps per compute call", (long long)c->height);
    return PYR_OK;
}

static pyr_status_t naive_build(pyr_plan_t *plan, pyr_method_ctx_t *ctx, const pyr_method_choice_t *c)
{
    return pyr_plan_build(plan, PYR_METHOD_NAIVE, c->decomp, c->height, ctx->budget);
}

const pyr_method_entry_t pyr_method_naive = {
    .id = PYR_METHOD_NAIVE,
    .name = "naive",
    .automatic = 1,
    .check = NULL,
    .device = NULL,
    .fits = naive_fits,
    .choose = naive_choose,
    .build = naive_build,
};
