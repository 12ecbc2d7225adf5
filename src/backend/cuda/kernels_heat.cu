/* The heat scheme's CUDA kernel: the expression of src/schemes/heat.c with
 * explicitly rounded operations, over the shared stencil kernels. */
#include "backend/cuda/stencil_fused.cuh"
#include "backend/cuda/ops_heat.cuh"

namespace {

pyr_status_t heat_run(void *ctx, int slot, const pyr_kernel_call_t *call) { return run_stencil<HeatOp, 15, 5>(ctx, slot, call); }

} // namespace

extern "C" const pyr_kernel_t pyr_kernel_cuda_heat = {
    PYR_EQ_HEAT,
    PYR_BACKEND_CUDA,
    "fused[:K[,T]] (K odd steps per launch: 2D 1-15, 3D 1-5; T threads: 2D 128|256, 3D 8-32 rows) | plain",
    stencil_variant_check<15, 5>,
    stencil_variant_default,
    stencil_variant_candidates<15, 5>,
    heat_run,
};
