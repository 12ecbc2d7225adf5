/* The skewed decomposition (decomposition = skewed): pieces of whole planes
 * (3D) or rows (2D) along the grid's last axis, walked from the low end to
 * the high one, whose time layers lean back one plane per step.  Piece p
 * owns the planes [A, B) = [lo + pS, lo + (p + 1)S) of the interior at the
 * pass's first layer and [A - l, B - l) at its layer l: every node of every
 * layer belongs to exactly one piece, so nothing is computed twice across
 * pieces but the few layers inside one compute call (below).
 *
 * A piece computes its layers in calls of c steps (c odd: a call leaves its
 * result in the other buffer; c = the kernel's steps per launch).  Call j
 * starts from layer s (the steps done before it) over the window
 * [A - s - 2c, B - s) and computes the trapezoid shrinking by one plane per
 * step at both ends, ending on the piece's planes [A - s - c, B - s - c) of
 * layer s + c.  The window's lowest 2c planes of layer s are the previous
 * piece's top ones: that piece saved them into a halo store on the device
 * (2c planes per call of a pass, the stores a ring: pyr_skew_store_read),
 * this one copies them in; or, where the kernel can (kernels.h halo: the 3D
 * float CUDA kernels, the CPU's one-step calls), the kernel writes its top
 * planes into one store and reads its low planes from another.  So each
 * value goes up once and down once per pass, whatever the height, and only
 * the c(c - 1) planes of each call's lower trapezoid are computed twice.
 *
 * Device buffers: slots + 1 bundles of S + 3k planes (k the largest call;
 * the slots and a spare, as the executor lends them; two spares where a
 * layer is read back and several pieces are in flight: below), the halo stores, the
 * inputs' ring (below: pyr_skew_ring_planes), and the boundary faces of every axis (resident: every call copies the faces of its
 * window into both time layers, because a piece's planes sit at a fixed
 * place in its buffers while the window slides).  A plane of layer s sits at
 * buffer plane G + (z - (A - s)), G = 2k: the piece's own planes always at
 * [G, G + S); a call reads through a view whose box is its window and whose
 * input buffer starts G - 2c planes in, and writes through a view whose
 * output buffer starts G - c planes in, so its result lands at [G, G + S)
 * for the next call (exec/skewed.c).
 *
 * Read-only inputs (role INPUT: Poisson's f, read only at the updated node)
 * cross to the device once per pass, each plane once: a piece uploads its
 * own planes (those of its state, pyr_skew_upload) beside its state's, into
 * a ring of planes on the device that the slots share.  Its calls read the
 * planes of their first layer boxes, which reach h + c - 1 planes below its
 * own: the pieces' before it uploaded those, and the ring still holds them.
 * A piece's planes sit at one mapping for all its calls (plane z at ring
 * plane z - base, as the state's sit at one place in its buffers), so a
 * kernel reads one strided view; consecutive pieces keep the mapping until a
 * piece's planes would run past the ring's end, and that piece starts again
 * at the ring's start, copying the planes it shares with the ones before
 * there (one device copy of at most h + k planes, once per wrap).
 * A measured change (max |u' - u| of a pass's last sub-step) is reduced per
 * piece over its result and combined in piece order: a maximum is exact, so
 * the stopping sweep and the change are every plan's.
 *
 * A layer read back (plan->previous: Chebyshev's sweep writes, at each
 * node, over the layer two sweeps back that it reads there) must lie where
 * the kernels look for it, in the buffer a sub-step writes, at the place the
 * sub-step writes.  A call's c steps leave layers s + c - 1, s + c - 3, ...
 * in its input buffer, the next call's output, but at the input's mapping,
 * c_{j-1} + c_j planes below the output's: call j's first sub-step reads
 * the layer before there (kernels.h older_shift; launched in chunks of that
 * many planes, the highest first, so no launch overwrites what another
 * still reads), but over the window's low planes, whose layer before comes
 * from the store and lands in place once the part above has read what it
 * overwrites (exec/skewed.c run_call).  So the buffers keep S + 3k planes
 * and nothing moves the layer between calls (h more planes per buffer would
 * give it one mapping: out of core the height is worth more).  The halo stores carry both layers (4k - 1 planes: the newest,
 * then the one before but for the window's lowest plane, never read), saved
 * and filled beside each other; a piece uploads the layer before its first
 * with its planes (the host keeps it) and downloads the last two, the layer
 * before from the buffer it hands on as a spare, which with several pieces
 * in flight the piece two on computes in (so none waits for the downloads
 * of the piece before).  Such
 * calls write their middle layers to the buffers (no last-box-only
 * kernels, no halo in the kernel).
 *
 * Schemes of one ping-pong field, read-only inputs, one sub-step per step,
 * and a reach of at most one node along the last axis qualify (heat,
 * Poisson's Jacobi and Chebyshev sweeps), and schemes of in-place
 * state in two sub-steps, one reading a plane ahead and one a plane behind
 * (Maxwell: pyr_skew_inplace below); pyr_skew_eligible says why another does
 * not. */
#ifndef PYR_PLAN_SKEWED_H
#define PYR_PLAN_SKEWED_H

#include "plan/plan.h"

/* The most calls of a pass; the halo stores are one per call. */
#define PYR_SKEW_MAX_CALLS 4096

/* Whether a plan's scheme and problem can be solved skewed; when not, a
 * message into why (may be NULL). */
int pyr_skew_eligible(const pyr_plan_t *plan, char *why, size_t n);

/* Whether the plan's state is updated in place (no ping-pong field: Maxwell's E and H, its auxiliaries in
 * place beside them).  Then a piece sweeps its planes [A - s, B - s) at step s, every sub-step over the
 * whole range in order, in one copy of each plane: the fields of every piece live in one ring of planes on
 * the device that the slots share (the inputs' ring, pyr_skew_ring_planes), and what a piece leaves below
 * A is the next piece's to read there.  With the sub-steps of pyr_skew_eligible (the first reads the plane
 * above, the second the plane below) every read finds its time layer: at step s, the first sub-step at
 * B - s - 1 reads B - s at layer s - 1 (this piece's step s - 1), at A - s it reads A - s as the piece
 * before left it (its last update there was step s - 1); the second at A - s reads A - s - 1 at layer s
 * (the piece before's step s), and no piece updates a plane the piece before will read again.  So there
 * are no halo stores and nothing is computed twice; a piece uploads its planes [A, B) at layer 0 and
 * downloads [A - h, B - h), which no later piece updates, at layer h. */
int pyr_skew_inplace(const pyr_plan_t *plan);
/* Whether field f lives in the ring: the inputs, and with in-place state its state and auxiliaries. */
int pyr_skew_in_ring(const pyr_plan_t *plan, int f);
/* In-place state: the nodes sub-step k (0-based) of step s (1..h) of piece t updates (its plane range
 * clipped to the sub-step's update box). */
pyr_box_t pyr_skew_inplace_box(const pyr_plan_t *plan, int64_t t, int64_t s, int k);

/* The axis the pieces follow: the grid's last. */
static inline int pyr_skew_axis(const pyr_plan_t *plan) { return plan->problem.dims - 1; }

/* Steps of each call of a pass of height h (odd, at most plan->skew_k);
 * returns the number of calls. */
int pyr_skew_calls(const pyr_plan_t *plan, int64_t h, int *steps, int max);

/* Pieces of a pass of height h (those past the grid's end at the first
 * layer compute the planes the others leaned away from). */
int64_t pyr_skew_pieces(const pyr_plan_t *plan, int64_t h);

/* One call of piece p: the layer s it starts from and its c steps. */
typedef struct {
    int64_t a, b;        /* the piece's planes at the pass's first layer, unclipped: [A, B) */
    int64_t s;           /* layers done before the call */
    int c;               /* steps of the call */
    pyr_box_t window;    /* its window clipped to the grid, whole across the other axes */
    int64_t win_lo;      /* the window's low end before clipping: A - s - 2c */
    pyr_box_t fill;      /* planes taken from the halo store (the previous piece's), clipped; may be empty */
    pyr_box_t save;      /* planes saved into the halo store for the next piece, clipped; may be empty */
    pyr_box_t result;    /* interior nodes of the piece at layer s + c (empty: the call computes nothing) */
} pyr_skew_call_t;

void pyr_skew_call(const pyr_plan_t *plan, int64_t p, int64_t s, int c, pyr_skew_call_t *call);

/* Sub-step i (1..c) of a call: the interior nodes of its trapezoid. */
pyr_box_t pyr_skew_layer_box(const pyr_plan_t *plan, const pyr_skew_call_t *call, int i);

/* A view of the bundles over `box` without its buffers: box, pitch, x
 * padding and fields as the executor lays them out (exec/skewed.c sets the
 * buffers). */
void pyr_skew_view_shape(const pyr_plan_t *plan, const pyr_box_t *box, pyr_piece_t *v);

/* Whether a call's kernel writes nothing but its result (kernels.h
 * last_box_only; a call that computes nothing writes nothing), asked with
 * the call's view v (its buffers may be NULL: the model asks before any
 * exist) at global step `step`.  Where it does and the runtime has a lane,
 * the executor runs the call's save and the next call's fill beside it, and
 * the model prices them so. */
int pyr_skew_last_box_only(const pyr_plan_t *plan, void *ctx, const pyr_skew_call_t *call, const pyr_piece_t *v, int64_t step,
                           const pyr_grid_dims_t *grid);

/* A computing call's halo as its kernel takes it where it can (kernels.h halo): the save box (whole planes,
 * as a copy saves them) and the fill box (the planes of call->fill inside the interior along the axis,
 * whole across the others: the kernel reads whole rows from the store); empty where the call computes
 * nothing. */
pyr_box_t pyr_skew_kernel_save(const pyr_skew_call_t *call);
pyr_box_t pyr_skew_kernel_fill(const pyr_plan_t *plan, const pyr_skew_call_t *call);

/* Whether call's kernel takes its halo (kernels.h halo), asked as pyr_skew_last_box_only is, with st a view
 * of the store it saves into and fs of the one it fills from over their boxes (either may be NULL: no
 * save, no fill; their buffers may be NULL: the model asks before any exist). */
int pyr_skew_halo(const pyr_plan_t *plan, void *ctx, const pyr_skew_call_t *call, const pyr_piece_t *v, const pyr_piece_t *st,
                  const pyr_piece_t *fs, int64_t step, const pyr_grid_dims_t *grid);

/* The halo stores are a ring of one more than the most calls of a pass: piece t's call j fills from store
 * pyr_skew_store_read(t, j) and saves into pyr_skew_store_read(t + 1, j), the one its call j - 1 filled
 * from (call 0: the one it never reads), so a kernel may read one store while it writes another. */
static inline int pyr_skew_store_read(int64_t t, int j, int stores)
{
    const int64_t r = ((int64_t)j - t) % stores;
    return (int)(r < 0 ? r + stores : r);
}

/* Nodes of piece p uploaded at the start of a pass (whole planes of the
 * interior's range along the axis) and downloaded at its end (height h). */
pyr_box_t pyr_skew_upload(const pyr_plan_t *plan, int64_t p);
pyr_box_t pyr_skew_download(const pyr_plan_t *plan, int64_t p, int64_t h);

/* Planes of one buffer for passes up to height h (S + 3k) and of
 * one halo store (2k; 4k - 1 for two layers); the halo stores a plan of height h needs (one more than the
 * most calls of any pass up to h: pyr_skew_store_read's ring). */
int64_t pyr_skew_buffer_planes(const pyr_plan_t *plan, int64_t h);
int64_t pyr_skew_store_planes(const pyr_plan_t *plan);
int pyr_skew_stores(const pyr_plan_t *plan, int64_t h);
/* Elements between consecutive planes of a piece buffer (rows x pitch in 3D, the pitch in 2D). */
int64_t pyr_skew_plane_elems(const pyr_plan_t *plan);

/* The planes of the inputs piece t of a pass of height h touches: foot, those its calls' views span (their
 * windows, clipped to the grid), and need, of those the ones its sub-steps read (its computing calls'
 * first layer boxes; empty where none computes).  The planes of need below the piece's own are the pieces'
 * before it. */
void pyr_skew_input_planes(const pyr_plan_t *plan, int64_t t, int64_t h, int64_t foot[2], int64_t need[2]);

/* Planes of the inputs' ring (one per input field) for a plan of height h: with m = max(slots, 2), the
 * planes of the m + 1 latest pieces and twice the h + k below a piece's own (its reads; and room to start
 * again at the ring's start while the pieces still in flight read near its end), so the uploads never
 * wait for a piece's reads in a steady pass; at most twice the planes of the grid along the axis. */
int64_t pyr_skew_ring_planes(const pyr_plan_t *plan, int64_t h);
/* Device bytes of one input field's ring (the pieces' pitch). */
uint64_t pyr_skew_ring_bytes(const pyr_plan_t *plan, int64_t h);

/* The ring's mapping as the executor keeps it where nothing in flight is in the way (the model's view;
 * exec/skewed.c may start a mapping elsewhere in the ring to keep clear of pieces still reading): piece t
 * keeps the mapping of the piece before (plane z at ring plane z - *base) while its foot fits in the ring
 * of R planes, else, and at a pass's first piece, its foot starts at the ring's start.  Returns the planes
 * it then copies within the ring (those of its need below its own planes), 0 where it keeps the mapping. */
int64_t pyr_skew_ring_next(const pyr_plan_t *plan, int64_t t, int64_t h, int64_t R, int64_t *base);

/* Counts of one pass of height h, summed over its pieces, and per-piece maxima (the inputs' planes
 * counted as they go up: each piece's own, once). */
void pyr_skew_count_pass(const pyr_plan_t *plan, int64_t h, pyr_counters_t *sum, pyr_counters_t *task_max);

#endif
