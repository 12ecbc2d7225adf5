/* C-callable entry points of the CUDA backend for the rest of the library
 * (which never includes CUDA headers). */
#ifndef PYR_BACKEND_CUDA_API_H
#define PYR_BACKEND_CUDA_API_H

#include <stddef.h>

#include "pyrgrid.h"

/* Usable GPUs (0 when there is no driver, no device, or the driver is too
 * old for this build); never fails. */
int pyr_cuda_device_count(void);
/* "NVIDIA H200, 139.8 GiB (139.1 GiB free), compute capability 9.0". */
pyr_status_t pyr_cuda_describe(int device, char *text, size_t size);

#endif
