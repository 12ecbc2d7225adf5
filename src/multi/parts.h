/* One grid over several devices and MPI ranks (docs/multi-gpu-and-mpi.md).
 *
 * The grid is cut into parts (slabs or blocks; uneven where the sizes do not
 * divide), one per device of each rank.  A part runs the ordinary single
 * device machinery (exec/execute.c, any method and backend) on its local
 * grid, its box grown by the halo depth g (H steps' reach) on every side
 * that faces another part, and every H steps the parts swap those halos:
 * between devices of one process by copies (device to device when both keep
 * their grid resident, else through the host fields), between ranks through
 * a transport (MPI, multi/mpi.c).  Why the result is the one of a single
 * device, bit for bit, is in multi/exchange.h; tests/test_parts.c and
 * tests/test_mpi.c check it over random shapes, part counts, H and methods.
 *
 * Every collective point (setup, each exchange or check, the end) begins
 * with an agreement on failures: a part (or rank) that failed says so there
 * instead of taking part in the exchange, and every part stops with the
 * message of the lowest failing one.  No part ever waits for a message a
 * failed part will not send. */
#ifndef PYR_MULTI_PARTS_H
#define PYR_MULTI_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "exec/part_io.h"
#include "plan/plan.h"
#include "problem/devices.h"

#define PYR_PARTS_MAX_DEVICES PYR_DEVICES_MAX

typedef struct pyr_parts pyr_parts_t;

/* ---------------------------------------------------------------- transport */

/* A buffer sent to or received from another rank. */
typedef struct {
    int peer; /* rank */
    int tag;
    void *data;
    size_t bytes;
} pyr_wire_t;

/* The other processes of a run (MPI: multi/mpi.c).  Every call is collective
 * over the ranks except start/finish, which pair with the peers' calls. */
typedef struct pyr_transport {
    int rank, size;
    /* Each rank passes its status (PYR_OK or a failure with its message);
     * all learn the lowest failing rank (*who, -1 when none), its status and
     * its message (in `message`). */
    pyr_status_t (*agree)(struct pyr_transport *t, pyr_status_t mine, char *message, size_t size, pyr_status_t *status, int *who);
    /* The maximum (max = 1) or minimum (max = 0) of *v over the ranks, into *v. */
    pyr_status_t (*reduce_u64)(struct pyr_transport *t, uint64_t *v, int max);
    /* root's bytes to every rank. */
    pyr_status_t (*broadcast)(struct pyr_transport *t, void *data, size_t bytes, int root);
    /* Post every send and receive; finish waits for all of them. */
    pyr_status_t (*start)(struct pyr_transport *t, const pyr_wire_t *sends, int nsend, const pyr_wire_t *recvs, int nrecv);
    pyr_status_t (*finish)(struct pyr_transport *t);
    double latency;  /* seconds per message (measured at start) */
    double per_byte; /* seconds per byte */
    void *impl;
} pyr_transport_t;

/* ------------------------------------------------------------------- parts */

void pyr_parts_destroy(pyr_parts_t **parts);

/* The parts of this process (collective over the transport's ranks when t
 * is given): the decomposition, H, a plan per local part.  The caller owns
 * the result. */
pyr_status_t pyr_parts_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_transport_t *t, pyr_parts_t **out);
/* Fill every local part's fields from the problem (initial field, inputs),
 * each part making only its local grid (collective: agrees on failures). */
pyr_status_t pyr_parts_init(pyr_parts_t *parts);
/* Run every local part (collective).  hooks: progress, cancel and probe,
 * asked in the caller's thread (part 0's) at the collective points only;
 * a stop they ask for is agreed on there, so that every part of every rank
 * stops at the same step: then PYR_ERR_CANCELLED ("run cancelled after K
 * of N steps"), run->steps = K, and every part's host fields hold step K
 * over the box it owns (pyr_parts_copy_out). */
pyr_status_t pyr_parts_run(pyr_parts_t *parts, const pyr_hooks_t *hooks, pyr_run_info_t *run);

/* The box of the grid this process owns (the union of its parts' boxes),
 * and the values of updated field f over a box inside it into dst (x
 * fastest). */
pyr_box_t pyr_parts_process_box(const pyr_parts_t *parts);
pyr_status_t pyr_parts_copy_out(const pyr_parts_t *parts, int f, const pyr_box_t *box, void *dst);

/* What was decided, for reports and tests. */
typedef struct {
    int nparts, ranks, devices; /* devices: parts per rank */
    int count[3];               /* parts along each axis */
    int count_device[3];        /* of which, per axis, within one rank */
    int64_t exchange;           /* H */
    int64_t depth[3][2];        /* halo depth g per axis and side (low, high) */
    int streaming;              /* parts of this process whose plans stream pieces (not resident) */
    double predicted;           /* the model's seconds per step of the slowest part */
    char why[160];              /* how H was chosen */
} pyr_parts_info_t;
void pyr_parts_get_info(const pyr_parts_t *parts, pyr_parts_info_t *info);
/* Part i: the box it owns, its local grid, its rank; and message i: from
 * part, to part, the nodes sent (global coordinates) for messages touching
 * this process (returns 0 past the end). */
int pyr_parts_part(const pyr_parts_t *parts, int i, pyr_box_t *own, pyr_box_t *local, int *rank);
int pyr_parts_message(const pyr_parts_t *parts, int i, int *from, int *to, pyr_box_t *box);
/* A line describing the decomposition ("2 parts (slabs 1x1x2), H = 8, halo 8 ..."). */
void pyr_parts_describe(const pyr_parts_t *parts, char *out, size_t size);
/* The plan of this process's part i (0 .. devices - 1; NULL past them). */
const pyr_plan_t *pyr_parts_local_plan(const pyr_parts_t *parts, int i);
/* Node updates over the boxes this process's parts own in `steps` steps
 * (their useful work). */
uint64_t pyr_parts_useful(const pyr_parts_t *parts, int64_t steps);

#endif
