/* The backend interface: a table of operations the executor calls.  A backend
 * never decides what to compute (the plan does) and the plan never touches
 * memory (the backend does).
 *
 * Ordering: operations issued for one slot run in issue order (upload, then
 * prepare, then compute, then download); operations of different slots may
 * run concurrently.  wait(slot) returns once every operation issued for the
 * slot has finished and its host-side effects are visible.  The CPU backend
 * runs each operation to completion before returning; the CUDA backend queues
 * them on streams. */
#ifndef PYR_BACKEND_BACKEND_H
#define PYR_BACKEND_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "plan/box.h"
#include "pyrgrid.h"
#include "schemes/heat.h"

/* A region of the grid held in device memory, in one or two time layers.
 * The layers are buffers the executor lends the piece for one task: with k
 * pieces in flight it rotates k + 1 or k + 2 buffers among them (a task holds
 * two while it computes, one while it uploads or downloads).
 * Node p of `box` lives at element
 *     ((p.z - box.lo.z) * rows + (p.y - box.lo.y)) * pitch + xpad + (p.x - box.lo.x)
 * of a layer, where rows = extent of box along y. */
typedef struct {
    pyr_box_t box;
    int64_t pitch; /* elements between consecutive rows (>= xpad + extent x) */
    int64_t xpad;  /* elements before x = box.lo.x in each row (alignment) */
    void *layer[2];
    int cur;       /* layer holding the newest values */
} pyr_piece_t;

/* A host array holding the nodes of `box` contiguously, x fastest (the whole
 * grid, or a band buffer). */
typedef struct {
    void *data;
    pyr_box_t box;
} pyr_host_region_t;

/* Layout of a piece buffer, decided by the backend's alignment needs. */
typedef struct {
    int64_t pitch, xpad;
    uint64_t layer_bytes;
} pyr_piece_layout_t;

typedef struct pyr_backend_ops {
    const char *name;
    pyr_backend_kind_t kind;
    int slots;              /* most piece buffers it can keep in flight */
    int default_slots;      /* slots when the user gives none: with more than 2, the
                               planner also weighs 2 (larger pieces) by the model */
    int concurrent;         /* operations of different slots really run at the same time
                               (the model's overlapped form applies) */
    int64_t pitch_align_bytes; /* row pitch is a multiple of this many bytes (0/1 = none) */
    int64_t xpad_align_bytes;  /* nodes x = 1 (mod this, in elements) start an aligned column (0 = none) */
    int64_t pitch_skew_bytes;  /* added to a row pitch that is a multiple of 2 KiB, so that the rows of
                                  a stencil do not map to the same cache sets (0 = none) */

    pyr_status_t (*create)(const pyr_options_t *options, pyr_precision_t precision, void **ctx);
    void (*destroy)(void *ctx);
    /* Device memory free and total, in bytes (the CPU backend reports host memory). */
    pyr_status_t (*mem_info)(void *ctx, uint64_t *free_bytes, uint64_t *total_bytes);

    pyr_status_t (*dev_alloc)(void *ctx, size_t bytes, void **ptr);
    void (*dev_free)(void *ctx, void *ptr);
    /* Host memory for staging (pinned on GPUs). */
    pyr_status_t (*host_alloc)(void *ctx, size_t bytes, void **ptr);
    void (*host_free)(void *ctx, void *ptr);
    /* Make the user's grid fast to copy from and to (optional, may be NULL). */
    pyr_status_t (*host_register)(void *ctx, void *ptr, size_t bytes);
    void (*host_unregister)(void *ctx, void *ptr);

    /* Copy `box` from host into layer 0 of the piece (box within both). */
    pyr_status_t (*upload)(void *ctx, int slot, const pyr_piece_t *piece, const pyr_host_region_t *host,
                           const pyr_box_t *box);
    /* Copy `box` from layer src_layer of `src` into the layers of `dst` whose
     * bit is set in dst_layers (bit 0: layer 0, bit 1: layer 1).  It follows
     * the latest upload into the source buffer even when that was issued
     * for another slot (the boundary faces are uploaded once, on slot 0). */
    pyr_status_t (*copy)(void *ctx, int slot, const pyr_piece_t *dst, int dst_layers, const pyr_piece_t *src,
                         int src_layer, const pyr_box_t *box);
    /* Advance the piece by nlayers time steps: step l (0-based) reads layer
     * (cur + l) % 2 and writes layer (cur + l + 1) % 2 on box[l] only. */
    pyr_status_t (*compute)(void *ctx, int slot, const pyr_piece_t *piece, const pyr_heat_coef_t *coef,
                            const pyr_box_t *boxes, int nlayers);
    /* Copy `box` from layer piece->cur into the host region. */
    pyr_status_t (*download)(void *ctx, int slot, const pyr_piece_t *piece, const pyr_host_region_t *host,
                             const pyr_box_t *box);
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
} pyr_backend_ops_t;

/* The executor's marks: a task's compute done (its spare buffer is free for
 * another slot), a task's upload done (the grid values it read may be
 * overwritten, the next upload may start). */
enum { PYR_MARK_COMPUTE = 0, PYR_MARK_UPLOAD = 1, PYR_MARKS = 2 };

/* The backends compiled in. */
extern const pyr_backend_ops_t pyr_backend_cpu;
#ifdef PYR_HAVE_CUDA
extern const pyr_backend_ops_t pyr_backend_cuda;
#endif

/* The backend of a kind, or NULL when not compiled in. */
const pyr_backend_ops_t *pyr_backend_get(pyr_backend_kind_t kind);

/* Piece layout able to hold any box of at most `extent` nodes per axis under a
 * backend's alignment rules. */
pyr_piece_layout_t pyr_piece_layout(const pyr_backend_ops_t *ops, const int64_t extent[3], size_t elem);
/* Leading pad of a row for a piece whose box starts at x = lo_x. */
int64_t pyr_piece_xpad(const pyr_backend_ops_t *ops, int64_t lo_x, size_t elem);

/* Element offset of node (x, y, z) in a piece layer. */
static inline int64_t pyr_piece_index(const pyr_piece_t *p, int64_t x, int64_t y, int64_t z)
{
    int64_t rows = p->box.hi[1] - p->box.lo[1];
    return ((z - p->box.lo[2]) * rows + (y - p->box.lo[1])) * p->pitch + p->xpad + (x - p->box.lo[0]);
}

#endif
