/* Which runtimes and kernels are compiled in and usable here.
 *
 * The CPU backend is part of the core.  The CUDA backend is reached through
 * one table (backend/plugin.h): the plug-in libpyrgrid_cuda.so returns it,
 * loaded at run time by src/api/plugin.c from the folder of the library
 * holding the core when CUDA is asked for (backend = cuda, frames or line
 * Gauss-Seidel on cuda) or, for backend = auto, where a GPU may be present;
 * the static libraries (tests, benchmarks) link the CUDA objects in and take
 * the table directly.  The plug-in calls the core back through a table the
 * loader hands it, not by linking libpyrgrid, so the core's state (errors,
 * wisdom, device contexts) has one copy in a process.  A NULL table is "no
 * CUDA here", and pyr_cuda_missing() says why and what would work. */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "backend/plugin.h"
#include "core/error.h"

const pyr_device_ops_t *pyr_device_get(pyr_backend_kind_t kind)
{
    switch (kind) {
    case PYR_BACKEND_CPU: return &pyr_device_cpu;
    case PYR_BACKEND_CUDA: {
        const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_ASK);
        return cuda ? cuda->device : NULL;
    }
    default: return NULL;
    }
}

/* ----------------------------------------------------------------- kernels */

extern const pyr_kernel_t pyr_kernel_cpu_heat, pyr_kernel_cpu_poisson, pyr_kernel_cpu_maxwell;

static const pyr_kernel_t *const cpu_kernels[] = {
    &pyr_kernel_cpu_heat,
    &pyr_kernel_cpu_poisson,
    &pyr_kernel_cpu_maxwell,
};
#define N_CPU_KERNELS ((int)(sizeof cpu_kernels / sizeof cpu_kernels[0]))

/* The CPU's kernels followed by the CUDA backend's, once it is loaded. */
#define PYR_MAX_KERNELS 16
static const pyr_kernel_t *all_kernels[PYR_MAX_KERNELS];
static int n_all_kernels;
static pthread_once_t all_once = PTHREAD_ONCE_INIT;

static void list_all(void)
{
    const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_IF_LOADED);
    int n = 0;
    for (int i = 0; i < N_CPU_KERNELS; i++) all_kernels[n++] = cpu_kernels[i];
    for (int i = 0; cuda && i < cuda->nkernels && n < PYR_MAX_KERNELS; i++) all_kernels[n++] = cuda->kernels[i];
    n_all_kernels = n;
}

/* Variants that methods register from their own folders as the library
 * loads (kernels.h pyr_kernel_extra_t): written under the lock, the count
 * published after its entry, so that a lookup needs no lock. */
#define PYR_KERNEL_EXTRAS 8
static const pyr_kernel_extra_t *extras[PYR_KERNEL_EXTRAS];
static atomic_int nextras;
static pthread_mutex_t extras_lock = PTHREAD_MUTEX_INITIALIZER;

int pyr_kernel_extra_register(const pyr_kernel_extra_t *x)
{
    pthread_mutex_lock(&extras_lock);
    const int n = atomic_load_explicit(&nextras, memory_order_relaxed);
    int ok = n < PYR_KERNEL_EXTRAS;
    for (int i = 0; ok && i < n; i++) ok = extras[i] != x;
    if (ok) {
        extras[n] = x;
        atomic_store_explicit(&nextras, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&extras_lock);
    return ok;
}

const pyr_kernel_extra_t *pyr_kernel_extra_find(pyr_equation_t equation, pyr_backend_kind_t backend, const char *name)
{
    const int n = atomic_load_explicit(&nextras, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (extras[i]->equation == equation && extras[i]->backend == backend && !strcmp(extras[i]->name, name)) return extras[i];
    return NULL;
}

int pyr_kernel_all(const pyr_kernel_t *const **out)
{
    /* with the CUDA backend's where it is (or may be) usable */
    if (!pyr_cuda_plugin(PYR_CUDA_PROBE)) {
        *out = cpu_kernels;
        return N_CPU_KERNELS;
    }
    pthread_once(&all_once, list_all);
    *out = all_kernels;
    return n_all_kernels;
}

const pyr_kernel_t *pyr_kernel_find(pyr_equation_t equation, pyr_backend_kind_t backend)
{
    if (backend == PYR_BACKEND_CUDA) {
        const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_ASK);
        for (int i = 0; cuda && i < cuda->nkernels; i++)
            if (cuda->kernels[i]->equation == equation) return cuda->kernels[i];
        return NULL;
    }
    for (int i = 0; i < N_CPU_KERNELS; i++)
        if (cpu_kernels[i]->equation == equation && cpu_kernels[i]->backend == backend) return cpu_kernels[i];
    return NULL;
}

pyr_status_t pyr_variant_parse(const char *text, pyr_variant_t *out)
{
    memset(out, 0, sizeof *out);
    const char *colon = strchr(text, ':');
    size_t n = colon ? (size_t)(colon - text) : strlen(text);
    if (n == 0 || n >= sizeof out->name)
        return pyr_fail(PYR_ERR_CONFIG, "kernel variant '%s': write a name, or name:N[,N[,N]] (e.g. fused:5)", text);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)text[i]) && text[i] != '-' && text[i] != '_')
            return pyr_fail(PYR_ERR_CONFIG, "kernel variant '%s': the name may hold letters, digits, - and _ only", text);
    memcpy(out->name, text, n);
    out->name[n] = 0;
    if (!colon) return PYR_OK;
    const char *s = colon + 1;
    for (int k = 0; k < PYR_VARIANT_PARAMS; k++) {
        char *end = NULL;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 1 << 20)
            return pyr_fail(PYR_ERR_CONFIG, "kernel variant '%s': parameters are non-negative integers separated by commas", text);
        out->p[k] = (int)v;
        if (*end == 0) return PYR_OK;
        if (*end != ',') break;
        s = end + 1;
    }
    return pyr_fail(PYR_ERR_CONFIG, "kernel variant '%s': at most %d parameters, separated by commas", text, PYR_VARIANT_PARAMS);
}

void pyr_variant_format(const pyr_variant_t *v, char *out, size_t size)
{
    int last = PYR_VARIANT_PARAMS - 1;
    while (last >= 0 && v->p[last] == 0) last--;
    int len = snprintf(out, size, "%s", v->name);
    for (int k = 0; k <= last && len >= 0 && (size_t)len < size; k++)
        len += snprintf(out + len, size - (size_t)len, "%c%d", k ? ',' : ':', v->p[k]);
}

pyr_status_t pyr_kernel_variant(const pyr_kernel_t *k, const char *text, int dims, pyr_precision_t precision, pyr_variant_t *out)
{
    if (!text || !text[0]) {
        k->default_variant(dims, precision, out);
        return PYR_OK;
    }
    PYR_TRY(pyr_variant_parse(text, out));
    pyr_status_t st = k->check(out, dims, precision);
    if (st != PYR_OK) return pyr_fail_context(st, "run.kernel = %s: ", text);
    return PYR_OK;
}

/* ------------------------------------------------------------- discovery */

int pyr_backend_available(pyr_backend_kind_t kind)
{
    if (kind == PYR_BACKEND_CPU) return 1;
    if (kind == PYR_BACKEND_CUDA) return pyr_gpu_count() > 0;
    return 0;
}

int pyr_gpu_count(void)
{
    /* backend = auto asks this: where no GPU may be present, the plug-in stays unloaded */
    const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_PROBE);
    return cuda ? cuda->device_count() : 0;
}

pyr_status_t pyr_gpu_describe(int device, char *text, size_t size)
{
    const pyr_cuda_plugin_t *cuda = pyr_cuda_plugin(PYR_CUDA_ASK);
    if (!cuda) return pyr_fail(PYR_ERR_NODEVICE, "GPU %d: %s", device, pyr_cuda_missing());
    return cuda->describe(device, text, size);
}
