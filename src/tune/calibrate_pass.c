/* The one constant no micro-run gives: how much slower a pass of cubes
 * uploads its part rows while downloads run beside them.  Timed on a short
 * real pass of the executor (a grid of about 1 GiB at a quarter of it on the
 * device), then fitted into the model (pyr_model_fit_up_row_both).  Such
 * uploads run slower inside a pass than alone at every grid size, which no
 * isolated probe reproduced (part-row or staged downloads beside them, one
 * 3D copy or many, 4 KiB or 2 MiB host pages), and without this constant
 * the cube sweeps were priced fast (measured:
 * docs/performance.md#copies-beside-kernels; docs/model-and-wisdom.md#the-constants). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "core/error.h"
#include "exec/exec.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "schemes/scheme.h"
#include "tune/calibrate.h"
#include "tune/tune.h"

pyr_status_t pyr_calibrate_pass(const pyr_calibrate_opts_t *o, const char *kernel, pyr_model_constants_t *k, pyr_calibrate_pass_t *out)
{
    k->up_row_both = 0;
    if (out) memset(out, 0, sizeof *out);
    const pyr_device_ops_t *ops = pyr_device_get(o->backend);
    /* only where copies run beside each other and part rows move from the user's pinned grid; 3D
     * only: the per-row cost fitted to a pass of 2D blocks on one grid priced the blocks of a larger
     * grid slow: no one per-row cost holds across 2D grids */
    if (o->dims != 3 || !ops || !ops->concurrent || ops->default_slots < 2 || !ops->host_register) return PYR_OK;
    pyr_problem_t q;
    pyr_problem_default(&q);
    q.equation = o->equation;
    q.dims = 3;
    q.precision = o->precision;
    q.poisson.rhs = PYR_RHS_SINE;
    q.poisson.tolerance = 0;
    /* about 1 GiB of grid over the fields the scheme moves: 641^3 floats of one field, 513^3 doubles */
    const pyr_scheme_t *scheme = pyr_scheme_of(o->equation);
    int nf = 0;
    for (unsigned u = scheme->fields_used(&q); u; u >>= 1) nf += (int)(u & 1);
    if (nf < 1) nf = 1;
    const int64_t n = (int64_t)cbrt(1073741824.0 / (double)(nf * pyr_precision_size(o->precision))) | 1;
    for (int a = 0; a < 3; a++) {
        q.n[a] = n;
        q.length[a] = 1.0;
    }
    q.heat.dt = 0.1 / ((double)(n - 1) * (double)(n - 1)); /* r = 0.1 per axis */
    q.init = PYR_INIT_RANDOM;
    q.seed = 1;
    pyr_options_t opt;
    pyr_options_default(&opt);
    opt.backend = o->backend;
    opt.device = o->device;
    opt.threads = o->threads;
    opt.method = PYR_METHOD_PYRAMID;
    opt.decomposition = PYR_DECOMP_BLOCKS;
    opt.plan_mode = PYR_PLAN_ESTIMATE;
    opt.snapshot_every = 0;
    const uint64_t grid_bytes = (uint64_t)(n * n * n) * pyr_precision_size(o->precision) * (uint64_t)nf;
    opt.memory = grid_bytes / 4;
    if (kernel) snprintf(opt.kernel, sizeof opt.kernel, "%s", kernel);
    /* The height the planner picks for a long run of it from the constants measured so far (a run's
     * steps bound its height), halved until the model's uploads set the pass's pace (a cost of
     * uploads is timed where they are what the pass waits for, not where the model's compute may
     * err by more); then four passes of it, the last three timed. */
    q.steps = 4096;
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create_with_model(&q, &opt, k, PYR_MODEL_AUTO, &plan);
    if (st != PYR_OK) return pyr_fail_context(st, "timing a pass of cubes: ");
    int64_t h = plan->height;
    for (;;) {
        pyr_model_prediction_t pr;
        st = pyr_model_predict_pass(plan, k, PYR_MODEL_OVERLAPPED, h, &pr);
        pyr_plan_free(&plan);
        if (st != PYR_OK || pr.upload >= pr.compute || h == 1) break;
        h /= 2;
        opt.height = h;
        st = pyr_plan_create_with_model(&q, &opt, k, PYR_MODEL_AUTO, &plan);
        if (st != PYR_OK) break;
    }
    q.steps = 4 * h;
    opt.height = h;
    if (st == PYR_OK) st = pyr_plan_create_with_model(&q, &opt, k, PYR_MODEL_AUTO, &plan);
    if (st == PYR_OK && plan->resident) st = pyr_fail(PYR_ERR_INTERNAL, "the plan of a %lld^3 grid at a quarter of it is resident", (long long)n);
    /* the scheme's state fields, from the problem's initial kind; inputs and auxiliaries the library makes */
    pyr_field_t *fields[PYR_MAX_FIELDS] = {NULL};
    const int nfields = pyr_scheme_field_count(o->equation);
    for (int i = 0; i < nfields && st == PYR_OK; i++) {
        if (!pyr_scheme_field_updated(o->equation, i) || !pyr_problem_field_used(&q, i)) continue;
        st = pyr_field_create(&q, &fields[i]);
        if (st == PYR_OK) st = pyr_field_init_state(fields[i], &q, i);
    }
    double best = INFINITY;
    for (int r = 0; r < 2 && st == PYR_OK; r++) {
        pyr_pass_clock_t pc = {{0}, 0};
        pyr_hooks_t hooks = {.progress = pyr_pass_clock_hook, .user = &pc};
        st = pyr_exec_fields(plan, fields, nfields, &hooks, NULL);
        if (st == PYR_OK && pc.n >= 4 && (pc.t[3] - pc.t[0]) / 3 < best) best = (pc.t[3] - pc.t[0]) / 3;
    }
    if (st == PYR_OK && isfinite(best)) {
        double fit = 0;
        pyr_model_prediction_t pr;
        st = pyr_model_predict_pass(plan, k, PYR_MODEL_OVERLAPPED, h, &pr);
        /* the excess counts as this cost only where the model's uploads beside downloads at no less
         * than half their rate reach it (the slowdowns observed are well within that:
         * docs/performance.md#copies-beside-kernels); Maxwell's 3D pass, over twice its prediction,
         * would need tens of microseconds per row: its kernels, not its copies */
        int explained = 0;
        if (st == PYR_OK) st = pyr_model_fit_up_row_both(plan, k, h, best, &fit, &explained);
        if (st == PYR_OK) k->up_row_both = fit;
        if (st == PYR_OK && out) {
            out->n = n;
            out->height = h;
            out->measured = best;
            out->model = pr.seconds;
            out->fitted = explained;
        }
    }
    for (int i = 0; i < nfields; i++) pyr_field_destroy(&fields[i]);
    pyr_plan_free(&plan);
    return st == PYR_OK ? PYR_OK : pyr_fail_context(st, "timing a pass of cubes: ");
}
