/* Which backends are compiled in and usable here. */
#include "backend/backend.h"
#include "core/error.h"
#ifdef PYR_HAVE_CUDA
#include "backend/cuda/cuda_api.h"
#endif

const pyr_backend_ops_t *pyr_backend_get(pyr_backend_kind_t kind)
{
    switch (kind) {
    case PYR_BACKEND_CPU: return &pyr_backend_cpu;
#ifdef PYR_HAVE_CUDA
    case PYR_BACKEND_CUDA: return &pyr_backend_cuda;
#endif
    default: return NULL;
    }
}

int pyr_backend_available(pyr_backend_kind_t kind)
{
    if (kind == PYR_BACKEND_CPU) return 1;
    if (kind == PYR_BACKEND_CUDA) return pyr_gpu_count() > 0;
    return 0;
}

int pyr_gpu_count(void)
{
#ifdef PYR_HAVE_CUDA
    return pyr_cuda_device_count();
#else
    return 0;
#endif
}

pyr_status_t pyr_gpu_describe(int device, char *text, size_t size)
{
#ifdef PYR_HAVE_CUDA
    return pyr_cuda_describe(device, text, size);
#else
    (void)text;
    (void)size;
    return pyr_fail(PYR_ERR_NODEVICE, "GPU %d: this pyrgrid was built without CUDA", device);
#endif
}
