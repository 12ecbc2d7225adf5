/* Which runtimes and kernels are compiled in and usable here. */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "core/error.h"
#ifdef PYR_HAVE_CUDA
#include "backend/cuda/cuda_api.h"
#endif

const pyr_device_ops_t *pyr_device_get(pyr_backend_kind_t kind)
{
    switch (kind) {
    case PYR_BACKEND_CPU: return &pyr_device_cpu;
#ifdef PYR_HAVE_CUDA
    case PYR_BACKEND_CUDA: return &pyr_device_cuda;
#endif
    default: return NULL;
    }
}

/* ----------------------------------------------------------------- kernels */

extern const pyr_kernel_t pyr_kernel_cpu_heat, pyr_kernel_cpu_poisson, pyr_kernel_cpu_maxwell;
#ifdef PYR_HAVE_CUDA
extern const pyr_kernel_t pyr_kernel_cuda_heat, pyr_kernel_cuda_poisson, pyr_kernel_cuda_maxwell;
#endif

static const pyr_kernel_t *const kernels[] = {
    &pyr_kernel_cpu_heat,
    &pyr_kernel_cpu_poisson,
    &pyr_kernel_cpu_maxwell,
#ifdef PYR_HAVE_CUDA
    &pyr_kernel_cuda_heat,
    &pyr_kernel_cuda_poisson,
    &pyr_kernel_cuda_maxwell,
#endif
};

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
    *out = kernels;
    return (int)(sizeof kernels / sizeof kernels[0]);
}

const pyr_kernel_t *pyr_kernel_find(pyr_equation_t equation, pyr_backend_kind_t backend)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (kernels[i]->equation == equation && kernels[i]->backend == backend) return kernels[i];
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
