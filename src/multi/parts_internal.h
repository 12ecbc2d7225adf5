/* The insides of the parts (multi/parts.h) shared by the files of multi/:
 * the decomposition and its model (decompose.c), creation (create.c), the
 * parts' host fields (fields.c), the halo swaps (exchange.c), the
 * collective points (collective.c) and the run (run.c). */
#ifndef PYR_MULTI_PARTS_INTERNAL_H
#define PYR_MULTI_PARTS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "exec/part_io.h"
#include "multi/parts.h"
#include "schemes/scheme.h"

static inline int64_t pyr_multi_imin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t pyr_multi_imax(int64_t a, int64_t b) { return a > b ? a : b; }

typedef struct {
    int from, to;   /* part indices */
    pyr_box_t box;  /* global nodes */
    int mode;
    void *buf;      /* MSG_SEND / MSG_RECV: packed values of every exchanged field */
    size_t bytes;
} msg_t;

enum { MSG_PEER = 0, MSG_HOST, MSG_SEND, MSG_RECV };

typedef struct part {
    struct pyr_parts *owner;
    int index, device;
    pyr_box_t own, local;
    pyr_problem_t problem;
    pyr_plan_t *plan;
    pyr_field_t *fields[PYR_MAX_FIELDS];
    pyr_host_region_t region[PYR_MAX_FIELDS]; /* or a field's host grid is the caller's (data set: pyr_multi_execute) */
    pyr_recipe_t recipe[PYR_MAX_FIELDS];      /* a region's values as a recipe nobody has made (kind set: pyr_multi_execute),
                                                 which the resident part makes on its device */
    int ready;                          /* past the point where every part has uploaded from the caller's grid */
    pyr_exchange_t xch;
    pyr_exec_io_t *io;
    const pyr_hooks_t *hooks;
    double change;
    pyr_status_t status;
    char message[1024];
    pyr_run_info_t run;
    int *sends, nsends, *recvs, nrecvs; /* messages from and to this part */
    pthread_t thread;
    pyr_hooks_t part_hooks;             /* the executor's hooks of this part (probes only: progress and cancel
                                           are asked at the collective points) */
    int *owned;                         /* the probes on nodes this part owns */
    int nowned;
} part_t;

struct pyr_parts {
    pyr_problem_t problem;
    pyr_options_t options;
    const pyr_scheme_t *scheme;
    pyr_backend_kind_t kind;
    pyr_transport_t *t;
    int rank, ranks;
    int nparts, ndev;           /* all parts; parts per rank */
    int devices[PYR_PARTS_MAX_DEVICES];
    int count[3], cdev[3];      /* parts per axis; per axis within a rank */
    int64_t *bounds[3];         /* count + 1 cuts of each axis (own boxes) */
    int64_t H, depth[3][2];
    int fixed[3][2];            /* per axis and side: nodes no sub-step updates */
    unsigned fields;            /* fields the problem uses */
    int nstate;                 /* of which exchanged (updated) */
    int exchanged[PYR_MAX_FIELDS];
    pyr_box_t changing;         /* nodes some sub-step updates */
    part_t *part;               /* this process's parts (ndev) */
    msg_t *msg;
    int nmsg, cap_msg;
    pyr_wire_t *wsend, *wrecv;
    int nwsend, nwrecv;
    /* the collective points, and the start of the part threads */
    pthread_barrier_t arrive, leave;
    /* Parts sharing the caller's grid (shared): none writes into it before
     * every part has uploaded its local grid from it, and none goes on
     * computing from an exchange until every part has uploaded its halos
     * (the next download writes the nodes those read). */
    int shared;
    pthread_barrier_t uploaded;
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int gate_open, gate_abort;
    int stopped, swapped;
    int cancel_vote;            /* part 0's caller asked to stop at this point (progress or cancel hook) */
    int cancelled;              /* the run stopped there on every part and rank: the host fields hold step stop_step */
    int64_t stop_step;
    pyr_status_t stop_status;
    char stop_message[1200];
    pyr_status_t pending;       /* a failure of the coordinator, reported at the next point */
    char pending_message[1024];
    double change;
    int64_t exchanges;
    uint64_t sent, received;
    double predicted;
    char why[160];
    /* Probes (the caller's series of the scheme's points, schemes/scheme.h):
     * each part records those on nodes it owns into rows, steps probe_base
     * .. probe_upto - 1; at a collective point the owner's rank gives every
     * rank its values, and part 0's thread hands them (out) to the caller's
     * hook. */
    const pyr_hooks_t *user_hooks;
    int nprobes, *probe_rank;   /* per probe: the rank of the part that owns its node */
    int64_t probe_cap, probe_base, probe_upto, out_first, out_rows;
    double *probe_rows, *probe_out, *probe_col;
};

typedef struct {
    int count[3];
    int64_t H, depth[3][2];
} geometry_t;

/* Link constants of one kind of message: seconds per message and per value. */
typedef struct {
    double latency, per_value;
} link_t;

/* Calls fn(from, to, box) for every message into part `to`: the nodes of its
 * local grid that another part owns and the scheme updates. */
typedef int (*msg_fn)(void *user, int from, int to, const pyr_box_t *box);

/* ------------------------------------------------------- decompose.c */

pyr_box_t pyr_multi_own_box(const pyr_problem_t *pr, const int fixed[3][2], const int count[3], int p);
pyr_box_t pyr_multi_local_box(const pyr_problem_t *pr, const pyr_box_t *own, const int64_t depth[3][2]);
int pyr_multi_each_message_into(const pyr_problem_t *pr, const int fixed[3][2], const pyr_box_t *changing, const geometry_t *g, int to,
                                msg_fn fn, void *user);
/* Rank of part p when each rank takes cdev[a] consecutive parts along every
 * axis, and its device slot (0 .. devices per rank - 1) within the rank. */
int pyr_multi_rank_of_part(const int count[3], const int cdev[3], int p);
int pyr_multi_device_of_part(const int count[3], const int cdev[3], int p);
/* The halo depths of geometry g (its H). */
void pyr_multi_set_depths(const pyr_parts_t *P, geometry_t *g);
/* The geometry with the least predicted time per step among those the
 * options allow; H too unless forced (> 0). */
pyr_status_t pyr_multi_choose(pyr_parts_t *P, const link_t *local, const link_t *remote, const pyr_model_constants_t *k, int64_t forced_h,
                              geometry_t *best, int best_cdev[3]);
/* Links between devices of one process and between ranks, and the peer
 * link of two GPUs measured (left as it was when that fails). */
link_t pyr_multi_local_link(pyr_backend_kind_t kind, const pyr_model_constants_t *k, size_t elem);
link_t pyr_multi_remote_link(const pyr_transport_t *t, pyr_backend_kind_t kind, const pyr_model_constants_t *k, size_t elem);
void pyr_multi_measure_peer(const pyr_parts_t *P, link_t *l, size_t elem);

/* ---------------------------------------------------------- create.c */

int pyr_multi_is_local(const pyr_parts_t *P, int p);
part_t *pyr_multi_local_part(pyr_parts_t *P, int p);
void pyr_multi_free_messages(pyr_parts_t *P);

/* ---------------------------------------------------------- fields.c */

/* Field f of part pt as a host region of its local grid: the caller's grid
 * where the part shares it, else the part's own host field. */
pyr_host_region_t pyr_multi_region_of(const part_t *pt, int f);
pyr_status_t pyr_multi_alloc_fields(pyr_parts_t *P);
/* Part pt's host fields of the fields the problem uses, but those it
 * shares with the caller (pt->region). */
pyr_status_t pyr_multi_alloc_part_fields(pyr_parts_t *P, part_t *pt);
void pyr_multi_free_fields(pyr_parts_t *P);
/* Part pt's inputs (and, when `initial`, its state) made from the problem
 * over its local grid, but those the caller gives (bit f of `given`: copied
 * in instead) and those the part shares with the caller. */
pyr_status_t pyr_multi_make_part_fields(pyr_parts_t *P, part_t *pt, int initial, unsigned given);

/* -------------------------------------------------------- exchange.c */

/* A failure of the coordinator, kept for the next point. */
void pyr_multi_note_pending(pyr_parts_t *P, pyr_status_t st);
/* The halos of every message touching this process (multi/exchange.h). */
void pyr_multi_swap_halos(pyr_parts_t *P);

/* ------------------------------------------------------ collective.c */

/* Collective over the ranks: a local failure (status, message) becomes every
 * rank's.  Returns the agreed status, with the failing rank's message. */
pyr_status_t pyr_multi_agree(pyr_parts_t *P, pyr_status_t mine);
/* A collective point of part pt: every local part arrives, one thread
 * coordinates for all (failures, a stop asked for, the change, the halos),
 * all leave together. */
void pyr_multi_meet(part_t *pt, int exchange, int reduced, int64_t step);

/* ------------------------------------------------------------- run.c */

/* The executor's hook (exec/part_io.h) of a part. */
pyr_status_t pyr_multi_at_pass_end(void *user, pyr_exec_io_t *io, int64_t step, int exchange, int reduced, double *change, int last);
/* Node updates over the boxes this process's parts own in `steps` steps. */
uint64_t pyr_multi_useful_owned(const pyr_parts_t *P, int64_t steps);

#endif
