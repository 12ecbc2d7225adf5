/* The heat scheme's CUDA kernel: the expression of src/schemes/heat.c with
 * explicitly rounded operations, over the shared stencil kernels; and the
 * variants methods register for the scheme (backend/kernels.h
 * pyr_kernel_extra_t: "longvector", the same expression as whole-vector
 * cuBLAS operations, which method = longvector runs), handed to them. */
#include "backend/cuda/stencil_fused.cuh"
#include "backend/cuda/ops_heat.cuh"

namespace {

const pyr_kernel_extra_t *extra(const pyr_variant_t *v) { return pyr_kernel_extra_find(PYR_EQ_HEAT, PYR_BACKEND_CUDA, v->name); }

pyr_status_t heat_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    if (const pyr_kernel_extra_t *x = extra(call->variant)) return x->run(ctx, slot, call);
    return run_stencil<HeatOp, 15, 5>(ctx, slot, call);
}

pyr_status_t heat_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    if (const pyr_kernel_extra_t *x = extra(v)) return x->check(v, dims, precision);
    return stencil_variant_check<15, 5>(v, dims, precision);
}

uint64_t heat_scratch_bytes(const pyr_variant_t *v, uint64_t layer_bytes)
{
    const pyr_kernel_extra_t *x = extra(v);
    return x && x->scratch_bytes ? x->scratch_bytes(v, layer_bytes) : 0;
}

int heat_last_box_only(void *ctx, const pyr_kernel_call_t *call)
{
    return !extra(call->variant) && stencil_last_box_only<15, 5>(ctx, call);
}

int heat_halo(void *ctx, const pyr_kernel_call_t *call)
{
    return !extra(call->variant) && stencil_halo<15, 5>(ctx, call);
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
    heat_scratch_bytes,
    stencil_launch_steps,
    heat_last_box_only,
    heat_halo,
    0, /* its work memory (longvector's) on every plan */
};
