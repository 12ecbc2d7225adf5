/* The core's functions that the CUDA plug-in's code calls, as a table the
 * core's loader (src/api/plugin.c) hands to the plug-in's entry
 * (backend/plugin.h).  In the plug-in, src/api/cuda/plugin_core.c defines
 * each under its usual name by forwarding through this table, so the CUDA
 * code calls pyr_fail() and the rest as it would in one library, and the
 * state behind them (the error, the device cache, the variants) is the
 * core's own.  A function the CUDA code starts to call is added here: the
 * plug-in is linked with every symbol resolved, so a missing one fails the
 * build, not a run. */
#ifndef PYR_API_PLUGIN_CORE_H
#define PYR_API_PLUGIN_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/device.h"
#include "backend/host_copy.h"
#include "backend/kernels.h"
#include "backend/plugin.h"
#include "methods/longvector/longvector_step.h"
#include "pyrgrid.h"
#include "schemes/maxwell.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pyr_cuda_core {
    int abi;             /* PYR_CUDA_PLUGIN_ABI */
    const char *version; /* PYR_VERSION_STRING of the core */
    pyr_status_t (*fail_text)(pyr_status_t status, const char *text); /* pyr_fail(status, "%s", text) */
    pyr_status_t (*device_acquire)(pyr_backend_kind_t kind, int device, pyr_device_t **out);
    void (*device_release)(pyr_device_t *dev);
    void *(*device_shared)(const pyr_device_t *dev);
    int (*kernel_extra_register)(const pyr_kernel_extra_t *x);
    const pyr_kernel_extra_t *(*kernel_extra_find)(pyr_equation_t equation, pyr_backend_kind_t backend, const char *name);
    void (*host_copy_rows)(void *dst, size_t dp, const void *src, size_t sp, size_t bytes, int64_t rows, int threads);
    pyr_status_t (*lv_step)(const pyr_lv_ops_t *ops, size_t elem, const void *src, void *dst, void *t, void *x, int64_t first,
                            int64_t pitch, int64_t rows, int64_t width, double rx, double ry);
    int (*maxwell_psi_field)(int c, int axis);
    void (*options_default)(pyr_options_t *options);
    size_t (*precision_size)(pyr_precision_t p);
} pyr_cuda_core_t;

/* The table's functions become the plug-in's (variants the plug-in
 * registered as it loaded are handed on now); a no-op where the CUDA code is
 * linked with the core. */
pyr_status_t pyr_cuda_core_attach(const pyr_cuda_core_t *core);

#ifdef __cplusplus
}
#endif

#endif
