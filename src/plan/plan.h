/* Plans: the planner builds them, the executor walks them.  A plan splits the
 * grid's interior into result pieces (a tensor product of per-axis splits),
 * and the time steps into passes of at most `height` steps.  In one pass a
 * task holds its piece's source region on the device (the result region grown
 * by the pass height along split axes, clipped to the grid) and computes the
 * shrinking regions of every layer, so nothing moves between tasks within a
 * pass.  naive, trivial and pyramid are plans of this one kind. */
#ifndef PYR_PLAN_PLAN_H
#define PYR_PLAN_PLAN_H

#include "backend/device.h"
#include "backend/kernels.h"
#include "core/box.h"
#include "plan/model.h"
#include "pyrgrid.h"

/* plan = refine (tune/refine.c): the most candidates a run tries. */
#define PYR_REFINE_MAX 3

typedef enum { PYR_PLAN_ONE = 0, PYR_PLAN_PARTS } pyr_plan_kind_t;

typedef struct {
    int64_t count;   /* pieces along the axis */
    int64_t *bounds; /* count + 1 result boundaries over the interior [1, n - 1) */
} pyr_axis_split_t;

struct pyr_plan {
    pyr_problem_t problem;
    pyr_options_t options;
    const pyr_scheme_t *scheme;
    unsigned fields;          /* fields of the scheme this problem uses (bit i: field i) */
    int npp, nfixed;          /* of which ping-pong (time-layer buffers) and one-buffer fields */
    int previous;             /* the sub-steps also read the ping-pong fields' layer before their input (the scheme's
                                 reads_previous): streamed pieces carry both layers up and down, and the host keeps the
                                 older one beside each ping-pong field */
    int reach[3][2];          /* per axis: reach of one step below ([0]) and above ([1]) */
    int fixed[3][2];          /* per axis: nodes at the low / high end no sub-step updates */
    int64_t check_every;      /* passes end at multiples of this step for the stopping test (0 = none) */
    pyr_coef_t coef;          /* coef.aux: owned by the plan */
    int nsupport[PYR_MAX_FIELDS];          /* per field: boxes of its support, -1 = everywhere */
    pyr_box_t support[PYR_MAX_FIELDS][2];
    const pyr_kernel_t *kernel;
    pyr_variant_t variant;
    pyr_method_t method;
    pyr_decomp_t decomp;
    int split[3];             /* axis carries halos (pieces along it shrink) */
    pyr_axis_split_t axis[3];
    int64_t height;           /* steps of a full pass */
    int64_t skew_size;        /* decomposition = skewed (plan/skewed.h): planes of a piece at a pass's first layer */
    int skew_k;               /* and the most steps of one of its compute calls (odd: the kernel's steps per launch) */
    int resident;             /* one piece, kept on the device between passes (naive) */
    int slots;                /* pieces in flight */
    int spares;               /* device buffers beyond one per piece in flight (see exec/execute.c):
                                 2 with several slots in 1D/2D, else 1 */
    int try_slots;            /* slots of the next build() of a pyramid/trivial plan */
    int64_t alloc_extent[3];  /* largest source region of any task */
    pyr_piece_layout_t layout; /* of one buffer (one field, one time layer) */
    uint64_t faces_bytes;     /* resident boundary faces of unsplit axes (every state field) */
    uint64_t scratch_bytes;   /* the kernel variant's work memory (kernels.h scratch_bytes; longvector: 2 vectors) */
    uint64_t device_bytes;    /* everything the executor (and the kernel's scratch) keeps on the device */
    uint64_t refused_bytes;   /* a build refused for the budget: the least budget that builds it (what its message
                                 names as "use memory >= "); 0 after a build that fits or one refused for another
                                 reason (pyr_refusal_note keeps the least of an automatic choice's candidates) */
    uint64_t budget;
    const pyr_device_ops_t *ops;
    void *ctx;                /* the runtime's context (ops->create): this plan's queues on a device the context
                                 cache lends (backend/device.h); pyr_plan_destroy gives it back */
    pyr_counters_t predicted; /* exact counts for the whole run */
    char notice[512];         /* a choice to tell the user about */
    struct {                  /* plan = refine: the candidates plan creation named (the model's choice first),
                                 which the run tries as named */
        int n;
        pyr_decomp_t decomp[PYR_REFINE_MAX];
        int64_t height[PYR_REFINE_MAX];
        int slots[PYR_REFINE_MAX];
    } refine;
    char method_why[768];     /* which method entry made the plan (methods/method.h), and why: the one asked
                                 for or method = auto's, the automatic entries passed over, how it chose */
    pyr_host_memory_t host_memory; /* PIN or STAGE (AUTO: no device copies), pyr_plan_host_memory */
    uint64_t host_bytes;      /* bytes of the host fields that device copies read and write */
    char host_why[192];       /* why host_memory is what it is (the run's host_note when it runs so) */
    int host_once;            /* staged by auto because each byte crosses once each way */
    pyr_model_constants_t model; /* machine constants of the performance model */
    pyr_model_form_t model_form;
    char model_source[PYR_PATH_MAX + 320]; /* where the constants came from, for reports */
    /* A part of a larger grid (several devices or MPI ranks, multi/): its
     * passes also end at multiples of exchange_every, where `exchange`
     * (exec/part_io.h) swaps halos with the other parts.  0 / NULL for a
     * plan of a whole grid. */
    int64_t exchange_every;
    const struct pyr_exchange *exchange;
    /* What a public handle is (api/): PYR_PLAN_ONE for every plan the
     * layers below api/ make and walk.  A run over several devices is an
     * object of multi/ (multi/multi.h) whose head is a plan of kind
     * PYR_PLAN_PARTS, and the public entry points go there. */
    pyr_plan_kind_t kind;
};

/* Geometry of one task in a pass of height h. */
typedef struct {
    int64_t index[3];
    pyr_box_t result; /* interior nodes finalised by the task */
    pyr_box_t src;    /* nodes held in the piece buffer */
    pyr_box_t upload; /* nodes of the state fields uploaded: src less the resident faces */
    pyr_box_t input;  /* nodes of the input fields uploaded: those the first sub-step updates */
} pyr_task_t;

/* pyr_plan_get_info of a plan of one device (the public one, api/, also
 * describes a run over several devices). */
pyr_status_t pyr_plan_info_single(const pyr_plan_t *plan, pyr_plan_info_t *info);
/* pyr_plan_destroy of a plan of one device: its context back to the cache,
 * its memory freed; pyr_plan_release frees what the plan owns but not the
 * struct itself (a plan inside another object). */
void pyr_plan_free(pyr_plan_t **plan);
void pyr_plan_release(pyr_plan_t *plan);
/* A copy of `src` that describes it (geometry, model, counts) without
 * running anything: no context, no exchange.  Release it with
 * pyr_plan_release. */
pyr_status_t pyr_plan_copy_description(const pyr_plan_t *src, pyr_plan_t *dst);

/* Decide how the executor reaches the host fields (options.host_memory
 * overrides), saying why in host_why.  Auto decides from the plan's
 * predicted copies: registering costs about what a staged copy of the
 * same bytes does, so it pays only where the bytes cross the link several
 * times (pieces streamed pass after pass, a part's halos); a plan that
 * moves each byte once each way (in core: one upload, one download) stages.
 * Pinning that would lock most of the host's RAM stages too, with a notice. */
void pyr_plan_host_memory(pyr_plan_t *plan);
uint64_t pyr_host_ram_bytes(void);

int64_t pyr_plan_tasks(const pyr_plan_t *plan);
void pyr_plan_task(const pyr_plan_t *plan, int64_t t, int64_t h, pyr_task_t *task);
/* Nodes computed at sub-step l (1..h x the scheme's sub-steps) of a pass of height h. */
pyr_box_t pyr_plan_layer_box(const pyr_plan_t *plan, const pyr_task_t *task, int64_t h, int64_t l);
/* Sub-steps in a pass of height h. */
int64_t pyr_plan_layers(const pyr_plan_t *plan, int64_t h);
/* Steps one launch of the plan's kernel variant takes (kernels.h launch_steps), 0 when the kernel does not say. */
int pyr_plan_launch_steps(const pyr_plan_t *plan);
/* The interior of the grid (the nodes the scheme updates). */
pyr_box_t pyr_plan_interior(const pyr_plan_t *plan);
/* Node updates a run of `steps` steps needs (the useful work). */
uint64_t pyr_plan_useful(const pyr_plan_t *plan, int64_t steps);
/* The whole grid. */
pyr_box_t pyr_plan_grid(const pyr_plan_t *plan);
/* Height of the pass starting at `step` (passes end at multiples of the
 * height counted from the last snapshot or check, at snapshots, at the
 * stopping test's checks and at the end). */
int64_t pyr_plan_pass_height(const pyr_plan_t *plan, int64_t step);

/* Bands of a task's result that later tasks of the same pass still read as
 * old values: their new values are held back until the last reader has
 * uploaded (the in-place host update).  Returns the number of bands (<= 3) and
 * fills bands[], last_reader[]; *main_box gets the rest of the result. */
int pyr_plan_bands(const pyr_plan_t *plan, const pyr_task_t *task, int64_t h, pyr_box_t *main_box,
                   pyr_box_t bands[3], int64_t last_reader[3]);

/* Whether a band of task t (whose last reader is `last`) goes straight into
 * the grid: downloaded on t's slot once task t + 1 (then its only reader) has
 * uploaded, ordered by the backend's mark / after_mark, instead of through a
 * staging buffer and a host copy.  Needs several slots (task t + 1 must not
 * reuse t's buffers), a backend with marks, one layer moved per field (with
 * plan->previous a task's older layer sits in the spare the next task
 * computes in), and a band of whole result rows
 * (strips, slabs, segments: a block's x band is rows of a few hundred bytes,
 * which the copy engine moves slowly one by one, so it keeps its staging
 * buffer).  The executor and the model both ask this. */
int pyr_plan_band_direct(const pyr_plan_t *plan, const pyr_task_t *task, const pyr_box_t *band, int64_t t, int64_t last);

/* Counts of one pass of height h, summed over its tasks; and per-task
 * maxima (for the bounds of docs/theory.md#per-task-bounds). */
void pyr_plan_count_pass(const pyr_plan_t *plan, int64_t h, pyr_counters_t *sum, pyr_counters_t *task_max);

/* One task's counts into a pass's sum and per-task maxima (may be NULL). */
static inline void pyr_plan_count_task(pyr_counters_t *sum, pyr_counters_t *task_max, uint64_t up, uint64_t down, uint64_t comp)
{
    sum->uploaded += up;
    sum->downloaded += down;
    sum->computed += comp;
    if (!task_max) return;
    if (up > task_max->uploaded) task_max->uploaded = up;
    if (down > task_max->downloaded) task_max->downloaded = down;
    if (comp > task_max->computed) task_max->computed = comp;
}

/* A plan for the same problem, backend and budget with another method,
 * decomposition or height, without a backend context (for comparisons and
 * the model).  The caller destroys it. */
pyr_status_t pyr_plan_sibling(const pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t height,
                              pyr_plan_t **out);

/* Input fields of the plan's problem (uploaded, never downloaded). */
int pyr_plan_inputs(const pyr_plan_t *plan);

/* Set a plan's scheme fields (scheme, fields, reach, supports, coefficients)
 * from its problem; fails when the scheme's extra coefficients cannot be
 * made.  pyr_plan_destroy frees what it allocates. */
pyr_status_t pyr_plan_set_scheme(pyr_plan_t *plan);

/* The parts of `box` where field f is moved: the box itself, or its
 * intersections with the field's support (possibly none). */
int pyr_plan_field_boxes(const pyr_plan_t *plan, int f, const pyr_box_t *box, pyr_box_t out[2]);
/* Values of field f over `box` that move (the boxes' volumes). */
uint64_t pyr_plan_field_volume(const pyr_plan_t *plan, int f, const pyr_box_t *box);

/* "1.5 GiB" */
void pyr_format_bytes(uint64_t bytes, char *out, size_t size);

#endif
