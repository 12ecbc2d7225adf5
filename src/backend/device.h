/* The device runtime: memory, pinned host memory, transfers, streams and
 * marks, one table of operations per backend (cpu, cuda).  It knows pieces
 * and their buffers, never what a scheme computes: kernels are registered
 * per scheme and backend apart from it (backend/kernels.h).  The executor,
 * calibration, several devices and the pipelines and solvers (frames, line
 * Gauss-Seidel) use this one interface, and borrow their contexts from one
 * owner of the devices, the context cache below.  A backend never decides
 * what to compute (the plan does) and the plan never touches memory (the
 * runtime does).
 *
 * Ordering: operations issued for one slot run in issue order (upload, then
 * copies, then a kernel, then download); operations of different slots may
 * run concurrently.  wait(slot) returns once every operation issued for the
 * slot has finished and its host-side effects are visible.  The CPU runtime
 * runs each operation to completion before returning; the CUDA runtime
 * queues them on a stream per slot.  A runtime may also keep lanes: queues
 * numbered after the slots (slots .. slots + lanes - 1) that take copies,
 * marks and waits only, for work the executor runs beside a slot's kernels
 * (a skewed pass saves a call's top planes there while the call computes). */
#ifndef PYR_BACKEND_DEVICE_H
#define PYR_BACKEND_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "core/box.h"
#include "core/recipe.h"
#include "pyrgrid.h"
#include "schemes/scheme.h"

/* A region of the grid held in device memory: per field of the scheme one
 * buffer, and a second for the ping-pong fields while the piece computes.
 * The buffers are lent by the executor for one task.  Node p of `box` lives
 * at element
 *     ((p.z - box.lo.z) * rows + (p.y - box.lo.y)) * pitch + (p.x - box.lo.x)
 * of every buffer, where rows = extent of box along y. */
typedef struct {
    pyr_box_t box;
    int64_t pitch; /* elements between consecutive rows (>= extent x) */
    int nfields;
    void *buf[PYR_MAX_FIELDS][2]; /* per field: [0], and [1] for a ping-pong field; NULL for a field not used */
    int cur;       /* buffer of the ping-pong fields holding the newest values */
} pyr_piece_t;

/* The buffer holding field f's newest values. */
static inline void *pyr_piece_current(const pyr_piece_t *p, int f)
{
    return p->buf[f][1] ? p->buf[f][p->cur] : p->buf[f][0];
}

/* A host array holding the nodes of `box` contiguously, x fastest (the whole
 * grid of one field, or a band buffer). */
typedef struct {
    void *data;
    pyr_box_t box;
} pyr_host_region_t;

/* Layout of a piece buffer, decided by the backend's alignment needs. */
typedef struct {
    int64_t pitch;
    uint64_t layer_bytes; /* one buffer (one field, one time layer) */
} pyr_piece_layout_t;

/* One copy of a batch (copy_many): `box` of buffer src_layer of `src` into
 * the buffers of `dst` named by dst_layers. */
#define PYR_COPY_MANY_MAX 16
typedef struct {
    const pyr_piece_t *dst;
    int dst_layers;
    const pyr_piece_t *src;
    int src_layer;
    pyr_box_t box;
} pyr_copy_op_t;

typedef struct pyr_device_ops {
    const char *name;
    pyr_backend_kind_t kind;
    int slots;              /* most pieces it can keep in flight */
    int lanes;              /* queues after the slots for copies, marks and waits (0: none) */
    int default_slots;      /* slots when the user gives none: with more than 2, the
                               planner also weighs 2 (larger pieces) by the model */
    int concurrent;         /* operations of different slots really run at the same time
                               (the model's overlapped form applies) */
    int64_t pitch_align_bytes; /* row pitch is a multiple of this many bytes (0/1 = none) */
    int64_t pitch_skew_bytes;  /* added to a row pitch that is a multiple of 2 KiB, so that the rows of
                                  a stencil do not map to the same cache sets (0 = none) */

    /* A context for one user (a plan, a calibration, a part, a pipeline): its
     * queues and bookkeeping on device options->device, which it holds in the
     * context cache (pyr_device_acquire) until destroy gives it back.  Two
     * contexts may be used from two threads at once. */
    pyr_status_t (*create)(const pyr_options_t *options, pyr_precision_t precision, void **ctx);
    void (*destroy)(void *ctx);
    /* (optional, NULL = none) The state every context of one device shares:
     * open makes it when the cache first acquires the device, and it stays
     * for the process; idle frees what it pools whenever the device's last
     * holder releases it.  Called under the cache's lock. */
    pyr_status_t (*open)(int device, void **shared);
    void (*idle)(void *shared);
    /* Device memory free and total, in bytes (the CPU runtime reports host memory). */
    pyr_status_t (*mem_info)(void *ctx, uint64_t *free_bytes, uint64_t *total_bytes);

    pyr_status_t (*dev_alloc)(void *ctx, size_t bytes, void **ptr);
    void (*dev_free)(void *ctx, void *ptr);
    /* Host memory for staging (pinned on GPUs). */
    pyr_status_t (*host_alloc)(void *ctx, size_t bytes, void **ptr);
    void (*host_free)(void *ctx, void *ptr);
    /* Make the user's grid fast to copy from and to (optional, may be NULL). */
    pyr_status_t (*host_register)(void *ctx, void *ptr, size_t bytes);
    void (*host_unregister)(void *ctx, void *ptr);

    /* Copy `box` from host into buffer 0 of field f of the piece (box within both). */
    pyr_status_t (*upload)(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host,
                           const pyr_box_t *box);
    /* Make field f's values over `box` in buffer 0 of the piece from a recipe (core/recipe.h), in
     * place of an upload of them: node c (the piece's coordinates) takes the value of node
     * recipe->origin + c of the recipe's whole grid.  A tabled kind's factors come from the host
     * (pyr_recipe_tables for the box: tab[d][i] is axis d's factor of node box->lo[d] + i), read
     * before fill returns; the values are the bits the host's fill makes (problem/field_init.c).
     * Ordered as an upload (a copy from another slot waits for it).  Optional: NULL where the
     * values are uploaded instead. */
    pyr_status_t (*fill)(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_recipe_t *recipe, const double *const tab[3],
                         const pyr_box_t *box);
    /* Copy `box` of field f from buffer src_layer of `src` into the buffers of
     * `dst` whose bit is set in dst_layers (bit 0: buffer 0, bit 1: buffer 1).
     * It follows the latest upload into the source buffer even when that was
     * issued for another slot (the boundary faces are uploaded once, on slot 0). */
    pyr_status_t (*copy)(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, const pyr_piece_t *src,
                         int src_layer, const pyr_box_t *box);
    /* The n copies (at most PYR_COPY_MANY_MAX), each as `copy` makes it, as
     * one operation in no particular order: no copy may read what another
     * writes, and where two write the same node they write the same value
     * (optional, may be NULL: pyr_exec_copies issues them one by one). */
    pyr_status_t (*copy_many)(void *ctx, int slot, int f, const pyr_copy_op_t *ops, int n);
    /* Copy `box` of field f's newest values (pyr_piece_current) into the host region. */
    pyr_status_t (*download)(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_host_region_t *host,
                             const pyr_box_t *box);
    /* max |buf[f][cur] - buf[f][cur ^ 1]| over `box` of the ping-pong field f
     * (the change of the last sub-step computed), written to *out once
     * wait(slot) has returned; *out must stay valid until then.  One per slot
     * between waits. */
    pyr_status_t (*reduce_change)(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_box_t *box, double *out);
    /* Block until every operation issued for the slot has finished. */
    pyr_status_t (*wait)(void *ctx, int slot);
    /* Order between slots, for a buffer (or a region of the host grid) one
     * slot's operations hand to another's (NULL where every operation
     * completes as it is issued): mark(slot, which) notes the point the
     * operations issued for the slot so far reach, in one of PYR_MARKS
     * independent marks per slot; after_mark(slot, other, which) makes the
     * operations issued for `slot` from then on wait until `other` has
     * reached its last mark `which`. */
    pyr_status_t (*mark)(void *ctx, int slot, int which);
    pyr_status_t (*after_mark)(void *ctx, int slot, int other, int which);
    /* (optional) Like copy, from a piece of another context of this runtime
     * (another GPU, or a second context of the same one): several devices of
     * one process swap halos this way (exec/parts.c).  The boxes of both
     * pieces are in the same coordinates.  Issued on dst's slot; the source
     * must be idle, and stay unchanged until wait(slot) has returned. */
    pyr_status_t (*copy_peer)(void *ctx, int slot, const pyr_piece_t *dst, int f, int dst_layers, void *src_ctx,
                              const pyr_piece_t *src, int src_layer, const pyr_box_t *box);

    /* The caller's fields in a device's memory (pyr_field_wrap_device), optional (NULL = a runtime without
     * device memory of its own: such fields are refused before they reach it).  upload and download take a
     * host region whose data lie in the context's device memory as well: the copy then stays on the device.
     * `stream` names a stream of the caller's as the CUDA array interface numbers them (0 and 1: the legacy
     * default stream, 2: the per-thread default stream, else the stream's handle).
     * locate: where ptr lies: 1 and *device in the memory of that device, 0 in host memory (pinned or
     * not), or a failure for a pointer the runtime cannot place. */
    pyr_status_t (*locate)(const void *ptr, int *on_device, int *device);
    /* The slot's operations issued from then on start once the work queued on `stream` so far is done
     * (the producer's writes into a field are seen by the run). */
    pyr_status_t (*after_stream)(void *ctx, int slot, uintptr_t stream);
    /* Outside any context: copy `bytes` from src to dst (host or device `device` memory, either side) once
     * the work queued on `stream` so far is done; returns with the copy complete for every stream. */
    pyr_status_t (*copy_linear)(int device, void *dst, const void *src, size_t bytes, uintptr_t stream);
} pyr_device_ops_t;

/* The executor's marks: a task's compute done (its spare buffer is free for
 * another slot), a task's upload done (the grid values it read may be
 * overwritten, the next upload may start); a skewed call's kernel issued
 * (the copies on a lane that wait for it may start), and the lane's copies
 * so far done (the next call may compute). */
enum { PYR_MARK_COMPUTE = 0, PYR_MARK_UPLOAD = 1, PYR_MARK_CALL = 2, PYR_MARK_LANE = 3, PYR_MARKS = 4 };

/* The runtimes compiled in. */
extern const pyr_device_ops_t pyr_device_cpu;
#ifdef PYR_HAVE_CUDA
extern const pyr_device_ops_t pyr_device_cuda;
#endif

/* The runtime of a kind, or NULL when not compiled in. */
const pyr_device_ops_t *pyr_device_get(pyr_backend_kind_t kind);

/* The device-context cache (session.c): one entry per runtime and device,
 * holding the runtime's shared state of the device (ops->open).  A runtime's
 * create acquires the device of the context it makes and its destroy
 * releases it; tests acquire a device to reach its hooks (cuda_api.h).
 * Thread-safe. */
typedef struct pyr_device pyr_device_t;
pyr_status_t pyr_device_acquire(pyr_backend_kind_t kind, int device, pyr_device_t **out);
void pyr_device_release(pyr_device_t *dev);
void *pyr_device_shared(const pyr_device_t *dev);
int pyr_device_index(const pyr_device_t *dev);

/* Piece layout able to hold any box of at most `extent` nodes per axis under a
 * runtime's alignment rules. */
pyr_piece_layout_t pyr_piece_layout(const pyr_device_ops_t *ops, const int64_t extent[3], size_t elem);
/* Layout of a resident boundary face: rows packed (no pitch alignment: faces
 * are only copied from, and an x face's rows are one node wide, which an
 * aligned pitch would blow up 32-fold). */
pyr_piece_layout_t pyr_face_layout(const int64_t ext[3], size_t elem);

/* Element offset of node (x, y, z) in a piece buffer. */
static inline int64_t pyr_piece_index(const pyr_piece_t *p, int64_t x, int64_t y, int64_t z)
{
    int64_t rows = p->box.hi[1] - p->box.lo[1];
    return ((z - p->box.lo[2]) * rows + (y - p->box.lo[1])) * p->pitch + (x - p->box.lo[0]);
}

#endif
