/* cuBLAS and cuFFT, loaded on first use (cuda_libs.cu).  The program and the
 * library do not link them: their code is large, and mapping it at start
 * costs every run (CPU runs included) address space that cluster memory
 * limits count, and needs the libraries installed where no GPU method uses
 * them.  Each user asks for the table of the few functions it calls; the
 * first request loads the library (the soname of the toolkit this was built
 * with), and a library that cannot be loaded gives a message that names it,
 * its user and what works without it.  C++ (nvcc). */
#ifndef PYR_BACKEND_CUDA_LIBS_H
#define PYR_BACKEND_CUDA_LIBS_H

#include <cublas_v2.h>
#include <cufft.h>

extern "C" {
#include "core/error.h"
}

namespace pyrcu {

/* X(field, function): the functions used, by their header names (the
 * headers' macros give the exported symbols, cublasCreate_v2 and so on). */
#define PYR_CUBLAS_FUNCTIONS(X)                                                                                                   \
    X(Create, cublasCreate)                                                                                                        \
    X(Destroy, cublasDestroy)                                                                                                      \
    X(SetStream, cublasSetStream)                                                                                                  \
    X(SetPointerMode, cublasSetPointerMode)                                                                                        \
    X(SetMathMode, cublasSetMathMode)                                                                                              \
    X(GetStatusString, cublasGetStatusString)                                                                                      \
    X(Sgeam_64, cublasSgeam_64)                                                                                                    \
    X(Dgeam_64, cublasDgeam_64)                                                                                                    \
    X(Saxpy_64, cublasSaxpy_64)                                                                                                    \
    X(Daxpy_64, cublasDaxpy_64)                                                                                                    \
    X(Sscal_64, cublasSscal_64)                                                                                                    \
    X(Dscal_64, cublasDscal_64)

#define PYR_CUFFT_FUNCTIONS(X)                                                                                                    \
    X(Plan2d, cufftPlan2d)                                                                                                         \
    X(PlanMany, cufftPlanMany)                                                                                                     \
    X(SetStream, cufftSetStream)                                                                                                   \
    X(ExecR2C, cufftExecR2C)                                                                                                       \
    X(ExecC2R, cufftExecC2R)                                                                                                       \
    X(Destroy, cufftDestroy)

#define PYR_LIB_FIELD(field, function) decltype(&function) field;
struct cublas_api_t {
    PYR_CUBLAS_FUNCTIONS(PYR_LIB_FIELD)
};
struct cufft_api_t {
    PYR_CUFFT_FUNCTIONS(PYR_LIB_FIELD)
};
#undef PYR_LIB_FIELD

/* The table, loading the library on the first call (thread-safe; it stays
 * loaded).  `user` names what needs it and `instead` what works without it,
 * for the message: "the long-vector method needs libcublas.so.13 of the CUDA
 * toolkit, which could not be loaded (why): install ..., or use method =
 * naive". */
pyr_status_t cublas_api(const cublas_api_t **api, const char *user, const char *instead);
pyr_status_t cufft_api(const cufft_api_t **api, const char *user, const char *instead);

} // namespace pyrcu

#endif
