/* C-callable entry points of the CUDA backend's long-vector variant
 * (longvector.cu): the heat kernel's "longvector" variant, and what
 * calibration measures of it.  The rest of the library never includes
 * CUDA or cuBLAS headers. */
#ifndef PYR_BACKEND_CUDA_LONGVECTOR_API_H
#define PYR_BACKEND_CUDA_LONGVECTOR_API_H

#include <stdint.h>

#include "backend/kernels.h"
#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The variant "longvector" (no parameters, 2D only); the message says what works. */
pyr_status_t pyr_cuda_lv_check(const pyr_variant_t *v, int dims);
/* The heat sub-steps of the call as cuBLAS operations (plan/longvector.h);
 * the first call makes the context's cuBLAS handle and work vectors. */
pyr_status_t pyr_cuda_lv_run(void *ctx, int slot, const pyr_kernel_call_t *call);
/* Work memory of the variant: two vectors of a piece buffer's size. */
uint64_t pyr_cuda_lv_scratch_bytes(const pyr_variant_t *v, uint64_t layer_bytes);

/* Resident threads of a GPU: multiprocessors x most threads per multiprocessor. */
pyr_status_t pyr_cuda_lv_resident_threads(int device, int64_t *threads);
/* Seconds per call of each kind of operation a step issues, on vectors of n
 * elements of the context's precision, called back to back on one stream
 * (`batch` calls timed with CUDA events, the best of `repeats` batches):
 * out[0] a geam add (C = A + B), out[1] axpy (y = -x + y), out[2] scal
 * (x = r x).  The operands rotate over four vectors of the context's work
 * memory (a step touches four: the two layers and the two work vectors). */
pyr_status_t pyr_cuda_lv_time_ops(void *ctx, int64_t n, int batch, int repeats, double out[3]);

#ifdef __cplusplus
}
#endif

#endif
