/* The pyramid method: pieces streamed through the device once per pass of
 * `height` steps, each computing its shrinking layers (segments, strips,
 * slabs, blocks or cubes), or leaning back in time (skewed pieces, where the
 * scheme allows them: plan/skewed.h).  The decomposition, height and pieces
 * in flight are the wisdom's earlier measured choice when it has one, else
 * the model's cheapest of a search over heights for every decomposition that
 * applies (plan/search.c), timed among the best few with plan = measure.
 * method = auto takes it where the naive method does not fit. */
#include <math.h>
#include <stdio.h>

#include "methods/method.h"

/* The wisdom's choice, where it still fits this plan: built, and of the decomposition and slots asked for. */
static int take_known(pyr_plan_t *plan, pyr_method_ctx_t *ctx, const pyr_method_known_t *k)
{
    const pyr_problem_t *p = &plan->problem;
    const pyr_options_t *o = &plan->options;
    return k->height <= (p->steps > 0 ? p->steps : 1) && (o->slots == 0 || k->slots == 0 || k->slots == o->slots) &&
           pyr_plan_build(plan, PYR_METHOD_PYRAMID, k->decomp, k->height, ctx->budget) == PYR_OK &&
           (o->decomposition == PYR_DECOMP_AUTO || o->decomposition == k->decomp);
}

static pyr_status_t pyramid_choose(pyr_plan_t *plan, pyr_method_ctx_t *ctx, pyr_method_choice_t *c)
{
    const pyr_problem_t *problem = &plan->problem;
    const pyr_options_t *opt = &plan->options;
    const uint64_t budget = ctx->budget;
    int64_t h = opt->height;
    pyr_decomp_t decomp = ctx->cands[0];
    c->seconds = NAN;
    c->modelled = 0;
    snprintf(c->why, sizeof c->why, "%s, height %lld as asked", pyr_decomp_name(decomp), (long long)h);
    /* slots = auto where the backend keeps more than two in flight: two larger pieces are weighed too,
     * by measurement (plan = measure), and for skewed pieces by the model as well.  For the other
     * decompositions the model's pipeline of two slots has run slower than predicted, ranking two slots
     * above three where the measurement ranks them the other way round, so their estimates keep three;
     * for skewed pieces the model ranks the two as measured (docs/performance.md#pieces-in-flight).
     * plan = refine notes the two-slot candidates of every decomposition for its run to try, and
     * keeps the model's choice as estimate makes it. */
    const int measuring = opt->plan_mode == PYR_PLAN_MEASURE, refining = opt->plan_mode == PYR_PLAN_REFINE;
    int skew_cand = 0;
    for (int i = 0; i < ctx->ncand; i++) skew_cand |= ctx->cands[i] == PYR_DECOMP_SKEWED;
    const int weigh_slots = opt->slots == 0 && plan->ops->default_slots > 2 && (measuring || refining || skew_cand);
    pyr_method_known_t known;
    const int have_known = h == 0 && ctx->known && ctx->known(ctx, plan, &known);
    if (have_known && opt->slots == 0 && known.slots > 0 && known.slots <= plan->ops->slots) plan->try_slots = known.slots;
    if (have_known && take_known(plan, ctx, &known)) {
        decomp = known.decomp;
        h = known.height;
        if (!opt->kernel[0] && known.kernel[0] &&
            pyr_kernel_variant(plan->kernel, known.kernel, problem->dims, problem->precision, &plan->variant) != PYR_OK)
            pyr_clear_error(); /* keep the variant chosen before */
        pyr_plan_add_notice(plan, "%s, height %lld: measured earlier on this machine (wisdom)", pyr_decomp_name(decomp), (long long)h);
        snprintf(c->why, sizeof c->why, "%s, height %lld: measured earlier on this machine (wisdom)", pyr_decomp_name(decomp),
                 (long long)h);
    } else if (h == 0 || ctx->ncand > 1 || weigh_slots) {
        pyr_clear_error();
        plan->try_slots = pyr_plan_requested_slots(plan);
        double best = INFINITY;
        int64_t best_h = 0;
        int best_slots = plan->try_slots;
        pyr_refusal_t refusal = {PYR_OK, 0, ""};
        /* slots = auto: the backend's most, or two (larger pieces, less
         * overlap) when the model predicts that faster */
        int slot_cands[2] = {plan->try_slots, 2}, nslot = weigh_slots ? 2 : 1;
        for (int si_ = 0; si_ < nslot; si_++) {
            plan->try_slots = slot_cands[si_];
            for (int i = 0; i < ctx->ncand; i++) {
                const pyr_decomp_t d = ctx->cands[i];
                if (si_ > 0 && !measuring && !refining && d != PYR_DECOMP_SKEWED) continue;
                const int pickable = si_ == 0 || measuring || d == PYR_DECOMP_SKEWED;
                int64_t hh = h;
                double s = INFINITY;
                pyr_status_t si;
                if (h == 0) si = pyr_plan_search_height(plan, d, budget, &hh, &s, &ctx->seen);
                else si = pyr_plan_predict_with(plan, PYR_METHOD_PYRAMID, d, h, budget, &s);
                if (si != PYR_OK) {
                    /* of the candidates it could take, the one that needs the least memory (planner.h) */
                    if (pickable) pyr_refusal_note(&refusal, plan, si);
                    continue;
                }
                if (h != 0) PYR_TRY(pyr_plan_note_candidate(&ctx->seen, d, hh, plan->try_slots, s));
                if (s < best && pickable) {
                    best = s;
                    best_h = hh;
                    best_slots = plan->try_slots;
                    decomp = d;
                }
            }
        }
        plan->try_slots = best_slots;
        if (best_h == 0) return pyr_refusal_raise(&refusal, plan);
        pyr_clear_error();
        h = best_h;
        c->modelled = 1;
        c->seconds = best;
        snprintf(c->why, sizeof c->why, "%s, height %lld, %d slot%s: the model's cheapest of %d candidate%s", pyr_decomp_name(decomp),
                 (long long)h, best_slots, best_slots == 1 ? "" : "s", ctx->seen.n > 0 ? ctx->seen.n : ctx->ncand,
                 (ctx->seen.n > 0 ? ctx->seen.n : ctx->ncand) == 1 ? "" : "s");
        if (measuring && ctx->seen.n > 1 && ctx->measure) {
            int ms = plan->try_slots;
            PYR_TRY(ctx->measure(ctx, plan, &decomp, &h, &ms));
            plan->try_slots = ms;
            c->seconds = NAN;
            snprintf(c->why, sizeof c->why, "%s, height %lld, %d slot%s: measured fastest of the model's best candidates",
                     pyr_decomp_name(decomp), (long long)h, ms, ms == 1 ? "" : "s");
        }
    }
    if (problem->steps > 0 && h > problem->steps) h = problem->steps;
    c->decomp = decomp;
    c->height = h;
    return PYR_OK;
}

static pyr_status_t pyramid_build(pyr_plan_t *plan, pyr_method_ctx_t *ctx, const pyr_method_choice_t *c)
{
    return pyr_plan_build(plan, PYR_METHOD_PYRAMID, c->decomp, c->height, ctx->budget);
}

const pyr_method_entry_t pyr_method_pyramid = {
    .id = PYR_METHOD_PYRAMID,
    .name = "pyramid",
    .automatic = 1,
    .check = NULL,
    .device = NULL,
    .fits = NULL,
    .choose = pyramid_choose,
    .build = pyramid_build,
};
