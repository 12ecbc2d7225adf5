/* The executor's hook for a part of a larger grid (several devices, MPI
 * ranks: exec/parts.c).
 *
 * A part owning box B of the grid runs the ordinary single-device executor
 * on a local grid: B grown by g = H x reach nodes on every side that faces
 * another part, whose outermost nodes the scheme holds fixed like a
 * boundary.  After H steps the nodes of B are exactly those of a run on the
 * whole grid (the error that the frozen edge makes travels at most `reach`
 * nodes a step), so the executor's passes end at multiples of H and the
 * hook then replaces the halo ring (the local grid less B) with the
 * neighbours' values.  A pass that ends at the scheme's check reduces the
 * change over B only (reduce_box), and the hook replaces it with the
 * maximum over all parts before the executor compares it with the
 * tolerance, so every part stops at the same sweep as one device would.
 *
 * The hook reads and writes the host fields of the local grid; the
 * executor's state lives on the device between passes only for a resident
 * (naive) plan, and pyr_exec_fetch / pyr_exec_store move it.  Devices in one
 * process may also copy straight between their resident pieces
 * (pyr_exec_resident_piece and the runtime's copy_peer). */
#ifndef PYR_EXEC_EXCHANGE_H
#define PYR_EXEC_EXCHANGE_H

#include "backend/device.h"
#include "core/box.h"

typedef struct pyr_exec_io pyr_exec_io_t; /* the executor as the hook sees it */

typedef struct pyr_exchange {
    int64_t every;        /* H: passes end at multiples of this step (also plan->exchange_every) */
    pyr_box_t reduce_box; /* the stopping test's change is measured over this box only (local coordinates) */
    /* Called at the end of every pass that ends at a multiple of `every`, at
     * a check of the stopping test (reduced = 1: *change holds this part's
     * change and must be replaced by the global one) or at the end of the
     * run (last = 1).  `exchange`: the pass ends at a multiple of `every`
     * before the last step, so halos must be swapped unless the run stops
     * here.  A status other than PYR_OK ends the run with it. */
    pyr_status_t (*at_pass_end)(void *user, pyr_exec_io_t *io, int64_t step, int exchange, int reduced, double *change, int last);
    void *user;
} pyr_exchange_t;

/* The newest values of the state fields over `box` (local coordinates) into
 * the host fields: downloaded from a resident piece (and waited for); a
 * no-op when the host fields already hold them (pieces streamed per pass). */
pyr_status_t pyr_exec_fetch(pyr_exec_io_t *io, const pyr_box_t *box);
/* Values the hook wrote into the host fields over `box` back to the device:
 * into both time layers of a resident piece, and into the boundary faces
 * the executor keeps resident; streamed pieces read the host fields at
 * their next upload anyway. */
pyr_status_t pyr_exec_store(pyr_exec_io_t *io, const pyr_box_t *box);
/* The resident piece (its box in local coordinates) and the runtime holding
 * it, or NULL when the plan streams pieces.  Everything issued on it has
 * finished when the hook is called. */
const pyr_piece_t *pyr_exec_resident_piece(pyr_exec_io_t *io, const pyr_device_ops_t **ops, void **ctx);

/* pyr_execute_fields on the plan of one part itself (the plan of part 0 of
 * several devices holds them all, and pyr_execute_fields runs them all). */
pyr_status_t pyr_exec_part_fields(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks,
                                  pyr_run_info_t *run);

#endif
