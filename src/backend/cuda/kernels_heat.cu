/* The heat scheme's CUDA kernel: the expression of src/schemes/heat.c with
 * explicitly rounded operations, over the shared stencil kernels; and the
 * variant "longvector", the same expression as whole-vector cuBLAS
 * operations (longvector.cu), which method = longvector runs. */
#include "backend/cuda/stencil_fused.cuh"
#include "backend/cuda/ops_heat.cuh"
#include "backend/cuda/longvector_api.h"

namespace {

int is_longvector(const pyr_variant_t *v) { return !strcmp(v->name, "longvector"); }

pyr_status_t heat_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    if (is_longvector(call->variant)) return pyr_cuda_lv_run(ctx, slot, call);
    return run_stencil<HeatOp, 15, 5>(ctx, slot, call);
}

pyr_status_t heat_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    if (is_longvector(v)) return pyr_cuda_lv_check(v, dims);
    return stencil_variant_check<15, 5>(v, dims, precision);
}

int heat_last_box_only(void *ctx, const pyr_kernel_call_t *call)
{
    return !is_longvector(call->variant) && stencil_last_box_only<15, 5>(ctx, call);
}

int heat_halo(void *ctx, const pyr_kernel_call_t *call)
{
    return !is_longvector(call->variant) && stencil_halo<15, 5>(ctx, call);
}

} // namespace

extern "C" const pyr_kernel_t pyr_kernel_cuda_heat = {
    PYR_EQ_HEAT,
    PYR_BACKEND_CUDA,
    "fused[:K[,T]] (K odd steps per launch: 2D 1-15, 3D 1-5; T threads: 2D 128|256, 3D 8-32 rows) | plain"
    " (and longvector, 2D, which method = longvector sets)",
    heat_check,
    stencil_variant_default,
    stencil_variant_candidates<15, 5>,
    heat_run,
    pyr_cuda_lv_scratch_bytes,
    stencil_launch_steps,
    heat_last_box_only,
    heat_halo,
};
