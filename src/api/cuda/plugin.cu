/* The CUDA backend's one entry (backend/plugin.h): the table of what the
 * core reaches, returned to the core's loader (src/api/plugin.c) by the
 * plug-in libpyrgrid_cuda.so, or taken directly where the CUDA objects are
 * linked into a static library.  The plug-in's calls into the core go
 * through the table the core hands over (api/plugin_core.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/plugin_core.h"
#include "backend/cuda/cuda_api.h"
#include "backend/plugin.h"
#include "methods/longvector/cuda/longvector_api.h"
#include "pipelines/frames/frames_internal.h"
#include "solvers/lgs/lgs_internal.h"
#include "solvers/multigrid/mg_internal.h"

extern "C" {
extern const pyr_kernel_t pyr_kernel_cuda_heat, pyr_kernel_cuda_poisson, pyr_kernel_cuda_maxwell;
extern const pyr_lgs_impl_t pyr_lgs_impl_cuda;
#ifdef PYR_HAVE_FRAMES
extern const fr_impl_t fr_impl_cuda;
#endif
}

static const pyr_kernel_t *const kernels[] = {&pyr_kernel_cuda_heat, &pyr_kernel_cuda_poisson, &pyr_kernel_cuda_maxwell};

extern "C" __attribute__((visibility("default"))) const pyr_cuda_plugin_t *pyr_cuda_plugin_entry(const pyr_cuda_core_t *core)
{
    static pyr_cuda_plugin_t table;
    if (!core || core->abi != PYR_CUDA_PLUGIN_ABI || !core->version || strcmp(core->version, PYR_VERSION_STRING) != 0) {
        if (core && core->abi == PYR_CUDA_PLUGIN_ABI) {
            char text[256];
            snprintf(text, sizeof text, "the CUDA plug-in is of pyrgrid %s, the library of %s: install both from one build",
                     PYR_VERSION_STRING, core->version ? core->version : "?");
            core->fail_text(PYR_ERR_NODEVICE, text);
        }
        return NULL;
    }
    /* the core's functions, for the plug-in's own code (a no-op where the core is linked in) */
    if (pyr_cuda_core_attach(core) != PYR_OK) return NULL;
    table.abi = PYR_CUDA_PLUGIN_ABI;
    table.version = PYR_VERSION_STRING;
    table.device = &pyr_device_cuda;
    table.kernels = kernels;
    table.nkernels = (int)(sizeof kernels / sizeof kernels[0]);
    table.device_count = pyr_cuda_device_count;
    table.describe = pyr_cuda_describe;
#ifdef PYR_HAVE_FRAMES
    table.frames = &fr_impl_cuda;
#endif
    table.lgs = &pyr_lgs_impl_cuda;
    table.mg = &pyr_mg_ops_cuda;
    table.lv_resident_threads = pyr_cuda_lv_resident_threads;
    table.lv_time_ops = pyr_cuda_lv_time_ops;
    return &table;
}
