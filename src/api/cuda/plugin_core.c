/* The core's functions as the CUDA plug-in's code calls them: each defined
 * here under its usual name, forwarding to the core the plug-in was loaded
 * into through the table its loader handed over (api/plugin_core.h), so the
 * errors, the device cache and the registered variants are the core's.
 * Linked into libpyrgrid_cuda.so only; where the CUDA objects are linked with
 * the core, the core's own definitions serve. */
#include <stdarg.h>
#include <stdio.h>

#include "api/plugin_core.h"
#include "core/error.h"

static const pyr_cuda_core_t *core;

/* Variants the CUDA code registers as the plug-in loads (before its entry
 * runs): kept until the core's table comes. */
#define QUEUED_EXTRAS 8
static const pyr_kernel_extra_t *queued[QUEUED_EXTRAS];
static int nqueued;

pyr_status_t pyr_cuda_core_attach(const pyr_cuda_core_t *c)
{
    if (core) return PYR_OK;
    core = c;
    for (int i = 0; i < nqueued; i++)
        if (!core->kernel_extra_register(queued[i]))
            return pyr_fail(PYR_ERR_INTERNAL, "the CUDA plug-in's kernel variant %s could not be registered", queued[i]->name);
    return PYR_OK;
}

pyr_status_t pyr_fail(pyr_status_t status, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return core ? core->fail_text(status, text) : status;
}

pyr_status_t pyr_device_acquire(pyr_backend_kind_t kind, int device, pyr_device_t **out)
{
    if (!core) {
        *out = NULL;
        return PYR_ERR_INTERNAL;
    }
    return core->device_acquire(kind, device, out);
}

void pyr_device_release(pyr_device_t *dev)
{
    if (core) core->device_release(dev);
}

void *pyr_device_shared(const pyr_device_t *dev) { return core ? core->device_shared(dev) : NULL; }

int pyr_kernel_extra_register(const pyr_kernel_extra_t *x)
{
    if (core) return core->kernel_extra_register(x);
    if (nqueued == QUEUED_EXTRAS) return 0;
    queued[nqueued++] = x;
    return 1;
}

const pyr_kernel_extra_t *pyr_kernel_extra_find(pyr_equation_t equation, pyr_backend_kind_t backend, const char *name)
{
    return core ? core->kernel_extra_find(equation, backend, name) : NULL;
}

/* Called only once the table is there: the plug-in's code runs after its entry. */
void pyr_host_copy_rows(void *dst, size_t dp, const void *src, size_t sp, size_t bytes, int64_t rows, int threads)
{
    core->host_copy_rows(dst, dp, src, sp, bytes, rows, threads);
}

pyr_status_t pyr_lv_step(const pyr_lv_ops_t *ops, size_t elem, const void *src, void *dst, void *t, void *x, int64_t first,
                         int64_t pitch, int64_t rows, int64_t width, double rx, double ry)
{
    return core->lv_step(ops, elem, src, dst, t, x, first, pitch, rows, width, rx, ry);
}

int pyr_maxwell_psi_field(int c, int axis) { return core->maxwell_psi_field(c, axis); }

void pyr_options_default(pyr_options_t *options) { core->options_default(options); }

size_t pyr_precision_size(pyr_precision_t p) { return core->precision_size(p); }
