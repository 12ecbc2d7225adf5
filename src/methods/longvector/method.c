/* The long-vector method's entry (see method.h): its checks, its backend,
 * its model constants, and its plans (the naive method's resident piece and
 * chunks of steps, stepped by the variant longvector). */
#include "methods/longvector/method.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "backend/plugin.h"
#include "core/error.h"
#include "methods/method.h"

static const char *const other_methods = "use method = naive (the same result with the stencil kernels), pyramid or auto";

pyr_status_t pyr_longvector_check(const pyr_problem_t *p, const pyr_options_t *o)
{
    const int asked_variant = !strcmp(o->kernel, "longvector") || !strncmp(o->kernel, "longvector:", 11);
    if (o->method != PYR_METHOD_LONGVECTOR) {
        if (asked_variant)
            return pyr_fail(PYR_ERR_CONFIG,
                            "run.kernel = %s is the long-vector method's variant; use method = longvector (with run.kernel = auto), "
                            "or another kernel variant (pyrgrid info lists them) with method = %s",
                            o->kernel, pyr_method_name(o->method));
        return PYR_OK;
    }
    if (p->equation != PYR_EQ_HEAT)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "method = longvector is the paper's long-vector algorithm of the heat equation; for "
                        "equation = %s %s", pyr_equation_name(p->equation), other_methods);
    if (p->dims != 2)
        return pyr_fail(PYR_ERR_UNSUPPORTED,
                        "method = longvector steps 2D grids (the paper's (N+2)^2 vector); this grid is %dD: %s", p->dims, other_methods);
    if (o->backend == PYR_BACKEND_CPU)
        return pyr_fail(PYR_ERR_UNSUPPORTED,
                        "method = longvector runs on the CUDA backend (cuBLAS), not on backend = cpu; use backend = cuda (or auto) "
                        "on a machine with a GPU, or method = naive for the same result on the CPU");
    if (o->kernel[0] && !asked_variant)
        return pyr_fail(PYR_ERR_CONFIG,
                        "run.kernel = %s with method = longvector: the long-vector method runs its own operations (cuBLAS); "
                        "leave run.kernel = auto, or use method = naive to run %s",
                        o->kernel, o->kernel);
    if (o->decomposition != PYR_DECOMP_AUTO)
        return pyr_fail(PYR_ERR_CONFIG,
                        "run.decomposition = %s with method = longvector: the long-vector method keeps the whole grid on the device "
                        "(no pieces); leave decomposition = auto, or use method = pyramid to cut the grid in %s",
                        pyr_decomp_name(o->decomposition), pyr_decomp_name(o->decomposition));
    if (o->piece > 0)
        return pyr_fail(PYR_ERR_CONFIG,
                        "a piece size (run.rows / run.block = %lld) with method = longvector: the long-vector method keeps the whole "
                        "grid on the device (no pieces); leave rows and block = auto, or use method = pyramid",
                        (long long)o->piece);
    return PYR_OK;
}

pyr_status_t pyr_longvector_check_backend(int built_with_cuda)
{
    if (!built_with_cuda)
        return pyr_fail(PYR_ERR_NODEVICE, "method = longvector runs on the CUDA backend, and this pyrgrid was built without CUDA (no "
                        "CUDA compiler at build time); rebuild with nvcc, or use method = naive for the same result on the CPU");
    return pyr_fail(PYR_ERR_NODEVICE, "method = longvector runs on the CUDA backend (cuBLAS), and no usable GPU was found; use "
                    "method = naive for the same result on the CPU");
}

void pyr_longvector_constants(pyr_plan_t *plan)
{
    size_t n = strlen(plan->model_source);
    if (pyr_lv_valid(&plan->model.lv)) {
        snprintf(plan->model_source + n, sizeof plan->model_source - n, "; long-vector constants calibrated");
        return;
    }
    int64_t threads = 0;
    /* a plan on the GPU has loaded the CUDA backend already */
    const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_IF_LOADED);
    if (cuda && cuda->lv_resident_threads(plan->options.device, &threads) != PYR_OK) {
        pyr_clear_error();
        threads = 0;
    }
    const int known = threads > 0;
    if (!known) threads = 132 * 2048; /* the device is unknown: a fallback of 132 SMs of 2048 resident threads */
    pyr_lv_defaults(&plan->model.lv, pyr_precision_size(plan->problem.precision), (double)threads);
    snprintf(plan->model_source + n, sizeof plan->model_source - n,
             "; long-vector constants: defaults for %lld resident threads%s (run 'pyrgrid calibrate --backend cuda --dims 2')",
             (long long)threads, known ? " (this GPU's)" : " (assumed)");
}

/* ------------------------------------------------------------- the entry */

/* Refuses what does not fit, and sets the variant the method steps with. */
static pyr_status_t lv_check(const pyr_problem_t *p, pyr_options_t *o)
{
    PYR_TRY(pyr_longvector_check(p, o));
    if (o->method == PYR_METHOD_LONGVECTOR) snprintf(o->kernel, sizeof o->kernel, "longvector");
    return PYR_OK;
}

static pyr_status_t lv_device(pyr_backend_kind_t kind)
{
    if (kind == PYR_BACKEND_CUDA && pyr_backend_available(PYR_BACKEND_CUDA)) return PYR_OK;
    return pyr_longvector_check_backend(pyr_cuda_built());
}

/* The naive method's resident piece and chunks of steps; the paper's model prices each step. */
static pyr_status_t lv_choose(pyr_plan_t *plan, pyr_method_ctx_t *ctx, pyr_method_choice_t *c)
{
    c->decomp = ctx->cands[0];
    c->height = pyr_method_resident_chunk(plan);
    c->seconds = NAN;
    c->modelled = 0;
    snprintf(c->why, sizeof c->why, "the whole grid resident as one vector, %lld steps per compute call", (long long)c->height);
    return PYR_OK;
}

static pyr_status_t lv_build(pyr_plan_t *plan, pyr_method_ctx_t *ctx, const pyr_method_choice_t *c)
{
    PYR_TRY(pyr_plan_build(plan, PYR_METHOD_LONGVECTOR, c->decomp, c->height, ctx->budget));
    pyr_longvector_constants(plan);
    return PYR_OK;
}

const pyr_method_entry_t pyr_method_longvector = {
    .id = PYR_METHOD_LONGVECTOR,
    .name = "longvector",
    .automatic = 0,
    .check = lv_check,
    .device = lv_device,
    .fits = NULL,
    .choose = lv_choose,
    .build = lv_build,
};
