/* The frames pipeline on a GPU (frames_cuda.cu): a small C interface so the
 * backend-neutral driver (pipelines/frames/frames.c) never includes CUDA
 * headers, and so that it can later move onto a shared device runtime.
 * Same steps and the same small-system code (frames_math.h) as the CPU
 * implementation; frames stream through pinned staging buffers with
 * upload, compute and download on separate streams. */
#ifndef PYR_BACKEND_CUDA_FRAMES_CUDA_H
#define PYR_BACKEND_CUDA_FRAMES_CUDA_H

#include <stddef.h>

#include "pipelines/frames/frames_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fr_cuda fr_cuda_t;

/* Allocates everything on device s->o.device (fails with
 * PYR_ERR_DEVICE_NOMEM naming the bytes needed when the frames and history do
 * not fit), plans cuFFT.  Free with fr_cuda_destroy. */
pyr_status_t fr_cuda_create(const fr_setup_t *s, fr_cuda_t **gpu);
/* Copy the frame into pinned staging (or use it in place when pinned) and
 * queue its work; delivers the frames that have finished. */
pyr_status_t fr_cuda_push(fr_cuda_t *gpu, const void *frame, pyr_frames_dtype_t type, float *residual_out,
                          fr_deliver_t deliver, void *driver);
/* Wait for every queued frame and deliver it. */
pyr_status_t fr_cuda_finish(fr_cuda_t *gpu, fr_deliver_t deliver, void *driver);
pyr_status_t fr_cuda_pin(fr_cuda_t *gpu, void *host, size_t bytes);
pyr_status_t fr_cuda_max_snr(fr_cuda_t *gpu, float *out);
void fr_cuda_describe(const fr_cuda_t *gpu, char *text, size_t size);
void fr_cuda_destroy(fr_cuda_t **gpu);

#ifdef __cplusplus
}
#endif

#endif
