/* MEASURE (FFTW's word): time the few best candidates of the model, and the
 * kernel's variants, on cut-down copies of the problem with the executor,
 * and keep the fastest.  It sits above the executor; the planner below
 * neither runs nor times anything. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "exec/exec.h"
#include "plan/model.h"
#include "plan/planner.h"
#include "tune/tune.h"

/* ------------------------------------------------------------- MEASURE */

int pyr_pass_clock_hook(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    pyr_pass_clock_t *pc = user;
    if (pc->n < (int)(sizeof pc->t / sizeof pc->t[0])) pc->t[pc->n++] = pyr_now_s();
    return 0;
}

/* Time a candidate briefly on a copy of the problem cut down along the split
 * axes to a few pieces per axis (same pieces, same spacing), three passes of
 * which the last two are timed; the measured/predicted ratio there scales
 * the model's prediction of the full run.  The candidate's plan borrows its
 * context from the context cache (backend/device.h), where the plan being
 * created holds the device: the candidates are lent one context in turn,
 * its queues and staging made once. */
static pyr_status_t measure_candidate(const pyr_plan_t *full, double *seconds)
{
    const pyr_problem_t *p = &full->problem;
    int nsplit = 0;
    for (int a = 0; a < p->dims; a++) nsplit += full->split[a];
    pyr_problem_t q = *p;
    pyr_options_t o = full->options;
    int64_t h = full->height;
    for (int a = 0; a < p->dims; a++) {
        if (!full->split[a]) continue;
        const pyr_axis_split_t *s = &full->axis[a];
        int64_t side = 0;
        for (int64_t k = 0; k < s->count; k++)
            if (s->bounds[k + 1] - s->bounds[k] > side) side = s->bounds[k + 1] - s->bounds[k];
        int64_t keep = nsplit == 1 ? 8 : 3;
        if (s->count > keep) {
            q.n[a] = 2 + keep * side;
            q.length[a] = p->length[a] * (double)(q.n[a] - 1) / (double)(p->n[a] - 1);
        }
        o.piece = side + 2 * h;
    }
    q.steps = 3 * h;
    q.init = PYR_INIT_RANDOM;
    q.seed = 1;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = full->decomp;
    o.height = h;
    o.memory = full->budget;
    o.slots = full->slots; /* the candidate's: more pieces in flight would not fit its budget */
    o.snapshot_every = 0;
    o.plan_mode = PYR_PLAN_ESTIMATE;
    pyr_variant_format(&full->variant, o.kernel, sizeof o.kernel);
    pyr_plan_t *small = NULL;
    pyr_field_t *f = NULL;
    pyr_status_t st = pyr_plan_create_with_model(&q, &o, &full->model, full->model_form, &small);
    if (st == PYR_OK) st = pyr_field_create(&q, &f);
    if (st == PYR_OK) st = pyr_field_init(f, &q);
    double best = INFINITY;
    for (int r = 0; r < 2 && st == PYR_OK; r++) {
        pyr_pass_clock_t pt = {{0}, 0};
        pyr_hooks_t hooks = {.progress = pyr_pass_clock_hook, .user = &pt};
        pyr_field_t *fs[PYR_MAX_FIELDS] = {f};
        st = pyr_exec_fields(small, fs, small->scheme->nfields, &hooks, NULL);
        if (st == PYR_OK && pt.n >= 3 && pt.t[2] - pt.t[0] < best) best = pt.t[2] - pt.t[0];
    }
    pyr_model_prediction_t ps, pf;
    if (st == PYR_OK) st = pyr_model_predict_pass(small, &full->model, full->model_form, h, &ps);
    if (st == PYR_OK) st = pyr_model_predict(full, &full->model, full->model_form, 0, &pf);
    if (st == PYR_OK) *seconds = isfinite(best) && ps.seconds > 0 ? pf.seconds * best / (2 * ps.seconds) : pf.seconds;
    pyr_field_destroy(&f);
    pyr_plan_free(&small);
    return st;
}

static int cmp_candidate(const void *a, const void *b)
{
    double x = ((const candidate_t *)a)->seconds, y = ((const candidate_t *)b)->seconds;
    return x < y ? -1 : x > y;
}

/* FFTW_MEASURE: time the best predicted candidate of each decomposition and
 * the next best overall (at most 4), keep the fastest. */
pyr_status_t pyr_tune_measure_best(pyr_plan_t *plan, candidates_t *cs, uint64_t budget, pyr_decomp_t *decomp, int64_t *h, int *slots)
{
    qsort(cs->c, (size_t)cs->n, sizeof *cs->c, cmp_candidate);
    candidate_t pick[4];
    int np = 0;
    for (int i = 0; i < cs->n && np < 4; i++) {
        int have_decomp = 0, dup = 0;
        for (int j = 0; j < np; j++) {
            have_decomp |= pick[j].decomp == cs->c[i].decomp;
            dup |= pick[j].decomp == cs->c[i].decomp && pick[j].height == cs->c[i].height && pick[j].slots == cs->c[i].slots;
        }
        if (dup) continue;
        if (!have_decomp || np < 3) pick[np++] = cs->c[i];
    }
    double best = INFINITY;
    char refused[512] = "";
    for (int i = 0; i < np; i++) {
        double s;
        plan->try_slots = pick[i].slots;
        /* the search prices pieces by the model; the exact sizing can still find one over the budget
         * (its slots, the halo's rounding): such a candidate is left out, not the whole measure */
        pyr_status_t st = pyr_plan_build(plan, PYR_METHOD_PYRAMID, pick[i].decomp, pick[i].height, budget);
        if (st == PYR_OK) st = measure_candidate(plan, &s);
        if (st == PYR_ERR_BUDGET) {
            if (!refused[0]) snprintf(refused, sizeof refused, "%s", pyr_last_error());
            pyr_clear_error();
            continue;
        }
        PYR_TRY(st);
        if (s < best) {
            best = s;
            *decomp = pick[i].decomp;
            *h = pick[i].height;
            *slots = pick[i].slots;
        }
    }
    if (!isfinite(best)) /* every candidate over the budget: the first one's reason */
        return pyr_fail(PYR_ERR_BUDGET, "no candidate of plan = measure fits the memory budget: %s", refused);
    /* then the kernel's variants on the winner (unless the caller chose one) */
    if (plan->options.kernel[0]) return PYR_OK;
    plan->try_slots = *slots;
    PYR_TRY(pyr_plan_build(plan, PYR_METHOD_PYRAMID, *decomp, *h, budget));
    pyr_variant_t cand[16], keep = plan->variant;
    const int nv = plan->kernel->candidates(plan->problem.dims, plan->problem.precision, cand, 16);
    for (int i = 0; i < nv; i++) {
        if (!memcmp(&cand[i], &keep, sizeof keep)) continue; /* timed above */
        double s;
        plan->variant = cand[i];
        const pyr_status_t st = measure_candidate(plan, &s);
        if (st == PYR_ERR_BUDGET) { /* this variant's pieces do not fit: not a choice */
            pyr_clear_error();
            continue;
        }
        PYR_TRY(st);
        if (s < best) {
            best = s;
            keep = cand[i];
        }
    }
    plan->variant = keep;
    return PYR_OK;
}
