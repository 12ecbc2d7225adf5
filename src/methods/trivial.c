/* The trivial method: pieces streamed through the device every step (height
 * 1), in the decomposition the model prices fastest.  Only by name: method =
 * auto never takes it (the pyramid method's height 1 is the same plan). */
#include <math.h>
#include <stdio.h>

#include "methods/method.h"

static pyr_status_t trivial_choose(pyr_plan_t *plan, pyr_method_ctx_t *ctx, pyr_method_choice_t *c)
{
    if (plan->options.height > 1)
        return pyr_fail(PYR_ERR_CONFIG, "method = trivial streams every step (height 1); height = %lld asks for the pyramid method",
                        (long long)plan->options.height);
    double best = INFINITY;
    int built = 0;
    pyr_refusal_t refusal = {PYR_OK, 0, ""};
    c->decomp = ctx->cands[0];
    for (int i = 0; i < ctx->ncand; i++) {
        double s;
        const pyr_status_t st = pyr_plan_predict_with(plan, PYR_METHOD_TRIVIAL, ctx->cands[i], 1, ctx->budget, &s);
        pyr_refusal_note(&refusal, plan, st); /* none fits: the one that needs the least memory (planner.h) */
        if (st != PYR_OK) continue;
        built = 1;
        if (s < best) {
            best = s;
            c->decomp = ctx->cands[i];
        }
    }
    if (!built) return pyr_refusal_raise(&refusal, plan);
    pyr_clear_error();
    c->height = 1;
    c->seconds = isfinite(best) ? best : NAN;
    c->modelled = ctx->ncand > 1;
    if (c->modelled)
        snprintf(c->why, sizeof c->why, "height 1; %s predicted fastest of %d decompositions", pyr_decomp_name(c->decomp), ctx->ncand);
    else snprintf(c->why, sizeof c->why, "height 1, %s", pyr_decomp_name(c->decomp));
    return PYR_OK;
}

static pyr_status_t trivial_build(pyr_plan_t *plan, pyr_method_ctx_t *ctx, const pyr_method_choice_t *c)
{
    return pyr_plan_build(plan, PYR_METHOD_TRIVIAL, c->decomp, 1, ctx->budget);
}

const pyr_method_entry_t pyr_method_trivial = {
    .id = PYR_METHOD_TRIVIAL,
    .name = "trivial",
    .automatic = 0,
    .check = NULL,
    .device = NULL,
    .fits = NULL,
    .choose = trivial_choose,
    .build = trivial_build,
};
