/* The device-context cache (backend/device.h): one entry per runtime and
 * device.  An entry is made when its device is first acquired and kept for
 * the process, so that what a runtime learns about a device once (its name,
 * whether this build's kernels run on it) is not asked again by every plan;
 * what the runtime pools for the device (released contexts, pinned staging,
 * library handles) is trimmed whenever its last holder lets go. */
#include <pthread.h>
#include <stdlib.h>

#include "backend/device.h"
#include "backend/plugin.h"
#include "core/error.h"

struct pyr_device {
    const pyr_device_ops_t *ops;
    int device;
    int holders;
    void *shared; /* the runtime's (ops->open); NULL for a runtime without */
    struct pyr_device *next;
};

/* Taken before any lock of a runtime's shared state, never after one. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pyr_device *cache;

pyr_status_t pyr_device_acquire(pyr_backend_kind_t kind, int device, pyr_device_t **out)
{
    *out = NULL;
    const pyr_device_ops_t *ops = pyr_device_get(kind);
    if (!ops && kind == PYR_BACKEND_CUDA)
        return pyr_fail(PYR_ERR_NODEVICE, "backend = cuda: %s", pyr_cuda_missing());
    if (!ops) return pyr_fail(PYR_ERR_ARG, "backend %d has no device runtime: use cpu or cuda", (int)kind);
    pthread_mutex_lock(&cache_lock);
    struct pyr_device *d = cache;
    while (d && (d->ops != ops || d->device != device)) d = d->next;
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d) {
            pthread_mutex_unlock(&cache_lock);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        }
        d->ops = ops;
        d->device = device;
        pyr_status_t st = ops->open ? ops->open(device, &d->shared) : PYR_OK;
        if (st != PYR_OK) {
            pthread_mutex_unlock(&cache_lock);
            free(d);
            return st;
        }
        d->next = cache;
        cache = d;
    }
    d->holders++;
    pthread_mutex_unlock(&cache_lock);
    *out = d;
    return PYR_OK;
}

void pyr_device_release(pyr_device_t *dev)
{
    if (!dev) return;
    pthread_mutex_lock(&cache_lock);
    if (--dev->holders == 0 && dev->ops->idle) dev->ops->idle(dev->shared);
    pthread_mutex_unlock(&cache_lock);
}

void *pyr_device_shared(const pyr_device_t *dev) { return dev->shared; }

int pyr_device_index(const pyr_device_t *dev) { return dev->device; }
