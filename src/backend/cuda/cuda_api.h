/* C-callable entry points of the CUDA backend for the rest of the library
 * (which never includes CUDA headers). */
#ifndef PYR_BACKEND_CUDA_API_H
#define PYR_BACKEND_CUDA_API_H

#include <stddef.h>

#include "pyrgrid.h"

struct pyr_device; /* backend/device.h: the context cache's entry of a GPU */

#ifdef __cplusplus
extern "C" {
#endif

/* Usable GPUs (0 when there is no driver, no device, or the driver is too
 * old for this build); never fails. */
int pyr_cuda_device_count(void);
/* "NVIDIA <name>, 79.1 GiB (78.5 GiB free), compute capability 9.0". */
pyr_status_t pyr_cuda_describe(int device, char *text, size_t size);

/* ---- for tests and benchmarks: hooks of one GPU -----------------------
 * They act on every context of the device (plans, calibration, parts,
 * pipelines), from any thread.  Reach them by holding the device in the
 * context cache (backend/device.h):
 *     pyr_device_t *gpu;  pyr_device_acquire(PYR_BACKEND_CUDA, 0, &gpu);
 *     ... pyr_cuda_reset_stats(gpu); runs; pyr_cuda_get_stats(gpu, &st); ...
 *     pyr_device_release(gpu); */

/* Time spent in each kind of operation while serial mode is on. */
typedef struct {
    double upload_s, copy_s, compute_s, download_s;
    double download_band_s; /* the part of download_s that went into band staging buffers */
    long long launches; /* compute kernel launches (any mode) */
    long long fused3d_z, fused3d_y; /* 3D fused launches streaming z, and y (launch_tiles3d.h) */
    long long saves3d_z, saves3d_y; /* of them, launches that saved a skewed call's halo (kernels.h halo) */
    long long fills3d_z, fills3d_y; /* and that read its low planes from the previous piece's store */
    /* Host time spent inside the issuing calls, in any mode: an asynchronous
     * copy that blocks its caller shows here (the pipeline then stalls). */
    double issue_upload_s, issue_download_s;
} pyr_cuda_stats_t;

/* Serial mode: every operation waits for its own completion before
 * returning and its time is added to the stats (nothing overlaps). */
void pyr_cuda_set_serial(struct pyr_device *gpu, int on);
void pyr_cuda_get_stats(const struct pyr_device *gpu, pyr_cuda_stats_t *stats);
void pyr_cuda_reset_stats(struct pyr_device *gpu);
/* Timeline (what Nsight Systems would show, where it cannot run): while on,
 * the GPU start and end of every upload, compute, download and device copy are recorded
 * with CUDA events, at most `cap` operations.  Read it once the work is done
 * (after pyr_execute returns); times in ms from the first recorded start. */
typedef enum { PYR_SPAN_UPLOAD, PYR_SPAN_COMPUTE, PYR_SPAN_DOWNLOAD, PYR_SPAN_COPY } pyr_span_kind_t;
typedef struct {
    int kind; /* pyr_span_kind_t */
    int slot;
    double start_ms, end_ms;
} pyr_cuda_span_t;
void pyr_cuda_timeline_start(struct pyr_device *gpu, int cap);
/* Fills up to max spans in issue order, returns how many; turns the timeline off. */
int pyr_cuda_timeline_take(struct pyr_device *gpu, pyr_cuda_span_t *spans, int max);

/* Which axis the 3D fused launches stream (backend/launch_tiles3d.h): -1 (the default) the cheaper layout,
 * 0 z, 1 y wherever a layout can be made - so that the tests run every shape through both kernels. */
void pyr_cuda_force_stream(struct pyr_device *gpu, int axis);

/* Make the n-th device allocation from now (1 = the next) fail as if the
 * device were out of memory; n <= 0 turns this off. */
void pyr_cuda_fail_alloc_after(struct pyr_device *gpu, int n);

#ifdef __cplusplus
}
#endif

#endif
