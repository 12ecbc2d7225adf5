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

/* a - (b + b) in one rounded operation.  b + b only moves b's exponent, so
 * it is exact and a - (b + b) rounds once, as the fused multiply-add a + (-2)b
 * does: the two are the same number (signed zeros, infinities and NaNs alike)
 * wherever b + b is finite, |b| <= MAX/2.  Beyond that (a grid whose values
 * reach half the largest float or double) a - (b + b) is an infinity or a NaN
 * and the fused form the exact difference: the one place the CPU and CUDA
 * backends may differ (src/schemes/heat.c). */
__device__ __forceinline__ float sub_twice(float a, float b) { return __fmaf_rn(-2.0f, b, a); }
__device__ __forceinline__ double sub_twice(double a, double b) { return __fma_rn(-2.0, b, a); }

} // namespace

#endif
