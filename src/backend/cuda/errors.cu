/* The failures of CUDA, cuFFT and cuBLAS as pyrgrid's statuses and messages
 * (cuda_errors.cuh). */
#include <stdio.h>

#include "backend/cuda/cuda_errors.cuh"

namespace pyrcu {

namespace {

/* "frames on the GPU: " for a feature, "" for the runtime */
struct prefix_t {
    char text[160];
    explicit prefix_t(const issuer_t &by) { snprintf(text, sizeof text, "%s%s", by.who ? by.who : "", by.who ? ": " : ""); }
};

} // namespace

pyr_status_t fail_cuda(cudaError_t e, const char *call, const issuer_t &by)
{
    (void)cudaGetLastError(); /* clear non-sticky errors */
    const prefix_t pre(by);
    if (e == cudaErrorMemoryAllocation)
        return pyr_fail(PYR_ERR_DEVICE_NOMEM, "%sGPU %d: %s: out of device memory; %s", pre.text, by.device, call,
                        by.nomem ? by.nomem : "use a smaller memory budget (run.memory) or free the GPU");
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
        return pyr_fail(PYR_ERR_NODEVICE, "%s%s: %s; use backend = cpu", pre.text, call, cudaGetErrorString(e));
    return pyr_fail(PYR_ERR_DEVICE, "%sGPU %d: %s failed: %s (%s)%s", pre.text, by.device, call, cudaGetErrorString(e),
                    cudaGetErrorName(e),
                    e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorAssert
                        ? "; the GPU context is now unusable: restart the program (this is a pyrgrid bug: please report it with "
                          "the problem file; backend = cpu gives the answer meanwhile)"
                        : "");
}

pyr_status_t fail_cufft(cufftResult r, const char *call, const issuer_t &by)
{
    const prefix_t pre(by);
    if (r == CUFFT_ALLOC_FAILED)
        return pyr_fail(PYR_ERR_DEVICE_NOMEM, "%sGPU %d: %s: cuFFT is out of device memory; %s", pre.text, by.device, call,
                        by.nomem ? by.nomem : "free the GPU");
    return pyr_fail(PYR_ERR_DEVICE, "%sGPU %d: %s failed: cuFFT error %d", pre.text, by.device, call, (int)r);
}

pyr_status_t fail_cublas(const cublas_api_t *api, cublasStatus_t s, const char *call, const issuer_t &by)
{
    const prefix_t pre(by);
    const char *what = api ? api->GetStatusString(s) : "cuBLAS error";
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        return pyr_fail(PYR_ERR_DEVICE_NOMEM, "%sGPU %d: %s: cuBLAS is out of device memory; %s", pre.text, by.device, call,
                        by.nomem ? by.nomem : "free the GPU");
    if (s == CUBLAS_STATUS_NOT_INITIALIZED)
        return pyr_fail(PYR_ERR_DEVICE, "%sGPU %d: %s: cuBLAS could not start (%s); it needs libcublas of the CUDA toolkit and a usable "
                                        "GPU%s%s",
                        pre.text, by.device, call, what, by.instead ? "; " : "", by.instead ? by.instead : "");
    return pyr_fail(PYR_ERR_DEVICE, "%sGPU %d: %s failed: %s", pre.text, by.device, call, what);
}

} // namespace pyrcu
