/* Explicitly rounded float and double arithmetic for the CUDA kernels: each
 * add, subtract and multiply rounds on its own (no FMA contraction, whatever
 * the compiler flags), so a kernel's update is bit for bit the expression of
 * its scheme on the CPU.  Shared by the stencil kernels (stencil_fused.cuh)
 * and the Yee kernels (kernels_maxwell.cu). */
#ifndef PYR_BACKEND_CUDA_ROUNDED_CUH
#define PYR_BACKEND_CUDA_ROUNDED_CUH

namespace {

__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }

} // namespace

#endif
