/* C-callable entry points of the long-vector method on the CUDA backend
 * (longvector.cu) for its calibration and the sweeps: what is measured of it.
 * Its kernel variant registers itself (backend/kernels.h pyr_kernel_extra_t).
 * The rest of the library never includes CUDA or cuBLAS headers. */
#ifndef PYR_METHODS_LONGVECTOR_CUDA_API_H
#define PYR_METHODS_LONGVECTOR_CUDA_API_H

#include <stdint.h>

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Resident threads of a GPU: multiprocessors x most threads per multiprocessor. */
pyr_status_t pyr_cuda_lv_resident_threads(int device, int64_t *threads);
/* Seconds per call of each kind of operation a step issues, on vectors of n
 * elements of the context's precision, called back to back on one stream
 * (`batch` calls timed with CUDA events, the best of `repeats` batches):
 * out[0] a geam add (C = A + B), out[1] axpy (y = -x + y), out[2] scal
 * (x = r x).  The operands rotate over four vectors of the method's work
 * memory in the context (a step touches four: the two layers and the two
 * work vectors). */
pyr_status_t pyr_cuda_lv_time_ops(void *ctx, int64_t n, int batch, int repeats, double out[3]);

#ifdef __cplusplus
}
#endif

#endif
