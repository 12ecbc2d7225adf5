/* The CUDA backend as the core reaches it: one table, which the plug-in
 * libpyrgrid_cuda.so returns from its one exported function
 * (pyr_cuda_plugin_entry), or which the static libraries link in.
 *
 * The core never calls a CUDA symbol by name: the device runtime, the
 * kernels, the frames, line Gauss-Seidel and multigrid implementations and
 * the long-vector method's device queries all come through this table, so
 * that libpyrgrid.so and the program carry no CUDA code and name no CUDA
 * library, and a CPU run never maps the plug-in.  The plug-in in turn calls
 * the core's functions through the table (api/plugin_core.h) handed to its
 * entry (src/api/cuda/plugin_core.c forwards each by its usual name), so a
 * process holds one copy of the core's state however the core is linked.
 *
 * The loader (src/api/plugin.c) looks for the plug-in in the folder of the
 * file that holds the core (libpyrgrid.so), then in the install's library
 * folder, then by its plain name (the loader's search path); the environment
 * variable PYRGRID_CUDA_PLUGIN names a file to load instead.  The static
 * libraries (a static libpyrgrid, and pyrgrid_internal for the tests and
 * benchmarks) link the CUDA objects in and load nothing. */
#ifndef PYR_BACKEND_PLUGIN_H
#define PYR_BACKEND_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The implementations of the upper floors, by their tags only. */
struct fr_impl;      /* pipelines/frames/frames_internal.h */
struct pyr_lgs_impl; /* solvers/lgs/lgs_internal.h */
struct pyr_mg_ops;   /* solvers/multigrid/mg_internal.h */

/* Raised whenever either table changes layout or meaning: a plug-in of
 * another layout is refused with a message, never called. */
#define PYR_CUDA_PLUGIN_ABI 2
#define PYR_CUDA_PLUGIN_FILE "libpyrgrid_cuda.so"
#define PYR_CUDA_PLUGIN_ENTRY "pyr_cuda_plugin_entry"

/* The core's functions that the plug-in's code calls (api/plugin_core.h). */
struct pyr_cuda_core;

/* The CUDA backend. */
typedef struct {
    int abi;             /* PYR_CUDA_PLUGIN_ABI */
    const char *version; /* PYR_VERSION_STRING the plug-in was built with */
    const pyr_device_ops_t *device;
    const pyr_kernel_t *const *kernels;
    int nkernels;
    int (*device_count)(void);                                  /* usable GPUs; never fails */
    pyr_status_t (*describe)(int device, char *text, size_t size);
    const struct fr_impl *frames; /* NULL when built without the frames pipeline */
    const struct pyr_lgs_impl *lgs;
    const struct pyr_mg_ops *mg;
    pyr_status_t (*lv_resident_threads)(int device, int64_t *threads);
    pyr_status_t (*lv_time_ops)(void *ctx, int64_t n, int batch, int repeats, double out[3]);
} pyr_cuda_plugin_t;

/* The plug-in's one exported function: its table, or NULL (with the reason
 * through core->fail_text) when the core is not the one it was built for. */
const pyr_cuda_plugin_t *pyr_cuda_plugin_entry(const struct pyr_cuda_core *core);
typedef const pyr_cuda_plugin_t *(*pyr_cuda_plugin_entry_fn)(const struct pyr_cuda_core *core);

/* How much a caller wants the CUDA backend. */
typedef enum {
    PYR_CUDA_IF_LOADED = 0, /* only if already loaded: never loads */
    PYR_CUDA_PROBE = 1,     /* backend = auto: load only where a GPU may be present (a driver's device node is
                               there), so that a machine without one never maps the plug-in */
    PYR_CUDA_ASK = 2,       /* CUDA was asked for: load */
} pyr_cuda_want_t;

/* The CUDA backend's table, loaded once per process on the first call that
 * wants it; NULL when there is none: then pyr_cuda_missing() says why. */
const pyr_cuda_plugin_t *pyr_cuda_plugin(pyr_cuda_want_t want);
/* Why there is no CUDA backend, and what would work: "this pyrgrid was built
 * without CUDA ...", "the CUDA plug-in libpyrgrid_cuda.so was not found
 * (looked in ...) ...", "no GPU driver here ..." (a sentence, no prefix). */
const char *pyr_cuda_missing(void);
/* Whether this pyrgrid was built with the CUDA backend (plug-in or linked). */
int pyr_cuda_built(void);

#ifdef __cplusplus
}
#endif

#endif
