/* placeholder: the CUDA frames pipeline (filled in below in this branch) */
#include <cuda_runtime.h>
#include <stdio.h>
extern "C" {
#include "core/error.h"
}
#include "backend/cuda/frames_cuda.h"
struct fr_cuda { int dummy; };
pyr_status_t fr_cuda_create(const fr_setup_t *, fr_cuda_t **g) { *g = NULL; return pyr_fail(PYR_ERR_UNSUPPORTED, "frames on CUDA: not yet built; use backend = cpu"); }
pyr_status_t fr_cuda_push(fr_cuda_t *, const void *, pyr_frames_dtype_t, float *, fr_deliver_t, void *) { return PYR_ERR_UNSUPPORTED; }
pyr_status_t fr_cuda_finish(fr_cuda_t *, fr_deliver_t, void *) { return PYR_OK; }
pyr_status_t fr_cuda_pin(fr_cuda_t *, void *, size_t) { return PYR_OK; }
pyr_status_t fr_cuda_max_snr(fr_cuda_t *, float *) { return PYR_ERR_UNSUPPORTED; }
void fr_cuda_describe(const fr_cuda_t *, char *t, size_t n) { snprintf(t, n, "?"); }
void fr_cuda_destroy(fr_cuda_t **g) { if (g) *g = NULL; }
