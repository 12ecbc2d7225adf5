/* One translation of the failures of the CUDA runtime, cuFFT and cuBLAS into
 * pyrgrid's statuses and messages, for the runtime (device.cu), its kernels
 * and every feature that runs on it (frames, line Gauss-Seidel, the
 * long-vector method).  A message names the GPU and the call; a feature says
 * who it is, what frees device memory for it and what works without the
 * library (issuer_t), so that the advice fits the user's knobs.
 *
 * Failures become PYR_ERR_DEVICE (the call and CUDA's message, and for the
 * errors that break the GPU context, that the program must restart),
 * PYR_ERR_DEVICE_NOMEM (out of memory, and what to change) or
 * PYR_ERR_NODEVICE (no GPU, driver too old: use backend = cpu).  C++. */
#ifndef PYR_BACKEND_CUDA_ERRORS_CUH
#define PYR_BACKEND_CUDA_ERRORS_CUH

#include <cuda_runtime.h>

extern "C" {
#include "core/error.h"
}
#include "backend/cuda/cuda_libs.h"

namespace pyrcu {

/* Who made the call: the GPU; for a feature on the runtime, its name ("frames
 * on the GPU"), what frees device memory for it and what works without
 * cuBLAS or cuFFT (NULL: the runtime's own words, about run.memory). */
struct issuer_t {
    int device;
    const char *who;
    const char *nomem;
    const char *instead;
};

pyr_status_t fail_cuda(cudaError_t e, const char *call, const issuer_t &by);
inline pyr_status_t fail_cuda(cudaError_t e, const char *call, int device)
{
    return fail_cuda(e, call, issuer_t{device, nullptr, nullptr, nullptr});
}
pyr_status_t fail_cufft(cufftResult r, const char *call, const issuer_t &by);
pyr_status_t fail_cublas(const cublas_api_t *api, cublasStatus_t s, const char *call, const issuer_t &by);

} // namespace pyrcu

/* Check a CUDA call made for `by` (an issuer_t, or a device number). */
#define PYR_CU_BY(by, call)                                                                                                        \
    do {                                                                                                                           \
        cudaError_t pyr_cu_e_ = (call);                                                                                            \
        if (pyr_cu_e_ != cudaSuccess) return pyrcu::fail_cuda(pyr_cu_e_, #call, by);                                               \
    } while (0)
/* In the runtime and its kernels: the call of context `c`. */
#define PYR_CU(call) PYR_CU_BY(c->device, call)
#define PYR_CUFFT_BY(by, call)                                                                                                     \
    do {                                                                                                                           \
        cufftResult pyr_fft_r_ = (call);                                                                                           \
        if (pyr_fft_r_ != CUFFT_SUCCESS) return pyrcu::fail_cufft(pyr_fft_r_, #call, by);                                          \
    } while (0)
#define PYR_CUBLAS_BY(api, by, call)                                                                                               \
    do {                                                                                                                           \
        cublasStatus_t pyr_blas_s_ = (call);                                                                                       \
        if (pyr_blas_s_ != CUBLAS_STATUS_SUCCESS) return pyrcu::fail_cublas(api, pyr_blas_s_, #call, by);                          \
    } while (0)

#endif
