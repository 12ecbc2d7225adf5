/* The executor as a part of a larger grid sees it: what the layer of
 * several devices and MPI ranks (multi/) calls down into, and the hook it
 * hands the executor.  exec/ never calls up into multi/: a part's plan
 * carries a pyr_exchange_t (plan->exchange), and the executor calls its
 * at_pass_end at the pass ends named below; why a part's nodes then equal
 * a run of the whole grid, bit for bit, is in multi/exchange.h.
 *
 * The hook reads and writes the host fields of the part's local grid; the
 * executor's state lives on the device between passes only for a resident
 * (naive) plan, and pyr_exec_fetch / pyr_exec_store move it.  Devices in one
 * process may also copy straight between their resident pieces
 * (pyr_exec_resident_piece and the runtime's copy_peer). */
#ifndef PYR_EXEC_PART_IO_H
#define PYR_EXEC_PART_IO_H

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
     * here.  A status other than PYR_OK ends the run with it (the host
     * fields then hold what the hook left there). */
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

#endif
