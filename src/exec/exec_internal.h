/* The executor's state, shared by its pass loops: the tasks of a plan
 * (exec/execute.c) and the skewed decomposition's pieces (exec/skewed.c). */
#ifndef PYR_EXEC_INTERNAL_H
#define PYR_EXEC_INTERNAL_H

#include <pthread.h>

#include "backend/kernels.h"
#include "exec/exec.h"
#include "plan/plan.h"

/* Staging buffers for held-back bands, pinned on GPUs.  Pinning costs
 * milliseconds per call and a pass of thousands of small pieces holds
 * thousands of bands at once, so buffers come in size classes (four per
 * octave, from 4 KiB) carved from arenas of about 4 MiB, one allocation per
 * arena; a released buffer goes back on its class's free list. */
#define STAGING_CLASSES 128
#define STAGING_ARENA ((size_t)4 << 20)

typedef struct {
    void *data;
    int cls;   /* size class */
    int next;  /* next free buffer of the class, -1 at the end */
    int owner; /* data starts an arena: host_free it at the end */
} staging_t;

typedef struct {
    int buffer;          /* index into the staging pool */
    int field;
    int older;           /* the field's older layer (exec_t.prev), not its newest */
    pyr_box_t box;
    int64_t last_reader; /* task index */
} pending_band_t;

/* The band writer thread (one per run, when the backend is asynchronous). */
typedef struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    pending_band_t *queue;
    int nqueue, cap_queue;
    int busy, stop, running;
} flusher_t;

#define PYR_EXEC_SKEW_SLOTS 8 /* the most slots a skewed pass tracks (backends keep up to 3) */

typedef struct {
    pyr_plan_t *plan;
    const pyr_device_ops_t *ops;
    void *ctx;
    pyr_field_t *const *fields; /* the host fields, per field of the scheme (NULL where unused) */
    size_t elem;
    int nf;              /* fields of the scheme */
    int role[PYR_MAX_FIELDS]; /* per field: -1 unused, else its pyr_field_role_t */
    int64_t pp_off[PYR_MAX_FIELDS], fixed_off[PYR_MAX_FIELDS]; /* offsets (bytes) in a bundle */
    pyr_piece_t *pieces; /* one per slot */
    void **buffers;      /* slots + spares bundles of one time layer of the ping-pong fields */
    void **fixed;        /* per slot: the bundle of the one-buffer fields */
    void **slot_next;    /* per slot: the bundle its next task uploads into */
    void *spare[2];      /* the bundles the next tasks compute into, oldest first */
    pyr_piece_t faces[6];
    int nfaces;
    double *partial;     /* per task: its share of the stopping test's reduction */
    staging_t *pool;
    int npool, cap_pool;
    int free_head[STAGING_CLASSES]; /* per size class, -1 = none free */
    pending_band_t *pending;
    int npending, cap_pending;
    pyr_box_t *layer_boxes;
    pyr_counters_t count;
    pyr_host_region_t grid[PYR_MAX_FIELDS];
    /* The layer before grid[f] of a ping-pong field whose sub-steps read it
     * too (plan->previous), for streamed pieces: the host's own copy, data
     * NULL where not kept.  Pieces upload it into the buffer their first
     * sub-step writes and download it back from the one their last read. */
    pyr_host_region_t prev[PYR_MAX_FIELDS];
    flusher_t fl; /* fl.running: band writes go to the worker */
    int64_t first, last; /* the steps this call runs, [first, last) of the plan's problem (exec.h: a range) */
    pyr_exec_carry_t *carry; /* a range's carry (NULL: a whole run) */
    int64_t steps_done;
    int checked, converged;
    double change;
    /* the scheme's point terms (schemes/scheme.h): point sources and probes */
    pyr_scheme_points_t pts;
    int points_open;             /* pts was made by the scheme's points hook (points_free it) */
    int nsrc, nprobes;
    pyr_kernel_point_t *src, *probes;
    unsigned char *probe_owned;  /* per probe: on a node this run owns (the scheme's record hook) */
    double *amp;                 /* [pass step][nsrc], this pass's amplitudes */
    double *series;              /* [pass step][pts.nseries], the rows of the sources with terms (NULL: none) */
    uint64_t src_id;             /* the kernels' call's sources_id of src */
    double *probe_pass;          /* [pass step][nprobes], this pass's probe values */
    double *probe_shown;         /* [pass step][nshown], the caller's columns when the scheme keeps probes of its own */
    double **slot_probe_out;     /* per slot: a pinned [pass step][k] buffer of the task's k probes */
    int **slot_probe_idx;        /* per slot: the probes of its last task */
    int *slot_probe_n;
    int64_t probe_steps;         /* the pass's steps (slots' buffers hold this many rows) */
    pyr_kernel_point_t *task_probes; /* scratch */
    void **halo;                 /* skewed plans: the halo stores, one per call of a pass */
    int nhalo;
    void *skew_ring;             /* skewed plans: their inputs' ring of planes and its state (exec/skewed.c) */
    int64_t skew_issued;         /* skewed plans: pieces issued in earlier passes (slot of piece T: T mod slots) */
    pyr_box_t skew_written[PYR_EXEC_SKEW_SLOTS]; /* per slot: the grid box its last piece's download writes, */
    unsigned char skew_pending[PYR_EXEC_SKEW_SLOTS]; /* until the host waits for that slot */
} exec_t;

/* Point a piece's buffers into bundles: the ping-pong fields' two layers in
 * l0 and l1, the other fields in the slot's fixed bundle. */
void pyr_exec_lend(exec_t *e, pyr_piece_t *piece, void *l0, void *l1, void *fixed);
/* Copy the resident boundary faces (and a split axis's fixed planes) into a piece's layers. */
pyr_status_t pyr_exec_prepare_boundary(exec_t *e, int slot, const pyr_piece_t *piece);
/* Its two parts: the copies of the resident faces into the piece's layers
 * (`layers`: 1 the first, 2 the second, 3 both) over the piece, appended to
 * c[n..max) (returns the new count; -1 when they do not fit), and the fixed
 * layers along split axes (issued). */
int pyr_exec_face_copies(const exec_t *e, const pyr_piece_t *piece, int layers, pyr_copy_op_t *c, int n, int max);
pyr_status_t pyr_exec_prepare_fixed(exec_t *e, int slot, const pyr_piece_t *piece);
/* Copies of field f as one operation where the backend has copy_many (their
 * boxes as it requires: no copy reads or writes what another writes), else
 * one by one, last first. */
pyr_status_t pyr_exec_copies(exec_t *e, int slot, int f, const pyr_copy_op_t *c, int n);
/* One pass of a skewed plan (exec/skewed.c); its halo stores are allocated on
 * the first.  With drain 0 it returns with its last pieces in flight, and the
 * next pass's first pieces queue behind them.  reduce: the pass measures the
 * change (the executor's loop decides where, as for every decomposition; a
 * measuring pass drains). */
pyr_status_t pyr_exec_skewed_pass(exec_t *e, int64_t step, int64_t h, int drain, int reduce);
void pyr_exec_skewed_release(exec_t *e);

#endif
