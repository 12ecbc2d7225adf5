/* A pass of the skewed decomposition (plan/skewed.h for the geometry).
 *
 * Pieces go one after another along the grid's last axis, on k slots (two
 * or three, as the planner weighs them) with k + 1 bundles as the task loop
 * lends them (exec/execute.c): piece t uploads its planes into the bundle
 * that held piece t - k's result (on the same slot, downloaded by then),
 * computes with the spare (piece t - 1's other bundle, once its calls are
 * done: the halo stores it filled are needed too), and downloads its result
 * on its slot while the next piece computes.  With two slots a slot's
 * download of piece t - 2 and upload of piece t stand in line between two
 * of its computes, so a pass runs at best one compute and both transfers per
 * two pieces; three slots take smaller pieces to lift that.  Nothing waits
 * on the host grid: a piece's result planes lie below every later piece's
 * first-layer planes.
 *
 * Each call of c steps works on views of the two bundles whose box is the
 * call's window: plane z of the input (layer s) at buffer plane
 * G + z - (A - s), of the output (layer s + c) at G + z - (A - s - c), so
 * the piece's planes stay at [G, G + S) of whichever bundle holds them.
 *
 * Passes follow each other without draining: pieces are numbered across the
 * run (piece T on slot T mod k), so the next pass's first pieces wait for the
 * last ones as any piece waits for the one before, and their uploads queue
 * while the last downloads run.  Only the host grid is new there: a first
 * piece may read planes a last piece still writes (on a grid of few pieces),
 * so before a piece's upload and download the host waits for any other slot
 * whose download in flight writes planes that box touches.  Within a pass
 * that never happens (result planes lie below later pieces' input).
 *
 * Read-only inputs (role INPUT, read only at the updated node: Poisson's f)
 * go up once per pass, each plane once: a piece uploads its own planes
 * beside its state's, on its slot, into a ring of planes that the slots
 * share (one buffer per input, pyr_skew_ring_planes), and its calls read the
 * planes of their first layer boxes, which reach about h planes below its
 * own: those the pieces before it uploaded, handed over on the device by
 * staying in the ring.  A ring rather than per-slot buffers because a
 * plane is read by the h / S or so pieces after the one that uploads it,
 * on every slot; one mapping per piece (plane z at ring plane z - base for
 * all its calls, whose views then point into the ring as into a buffer of
 * their window) because the kernels take one strided view per field.  A
 * pass's pieces keep the mapping of the one before while their planes fit;
 * the first that would run past the ring's end (and a pass's first piece)
 * takes a new one, and copies the planes it shares with the pieces before
 * from the old mapping to the new (once per wrap, on its slot after the
 * previous piece's compute, which follows every earlier upload).  Order:
 * a piece's reads follow its own upload (its slot) and the earlier pieces'
 * (through the previous piece's compute, as every compute follows the one
 * before); a write into the ring follows the reads of the planes it
 * overwrites: the pieces of its own slot are done (the host waited for it),
 * and for a piece still in flight on another slot whose planes it touches
 * (those its views span, and those its move read) the write waits for that
 * piece's compute (its slot's mark).  The new
 * mappings are placed clear of the pieces in flight where the ring has room
 * for that, so with the ring the planner sizes no upload waits in a steady
 * pass.
 *
 * A pass that measures the change (the stopping test, the run's reported
 * change: max |u' - u| of its last sub-step) runs the last sub-step of each
 * piece's last call as a kernel call of its own, so the two buffers hold its
 * input and its output, and reduces over the piece's planes of the last
 * layer (its result): each interior node in one piece's.  The pieces' maxima
 * are combined in piece order; a maximum is exact, so the change and the
 * stopping sweep are every plan's.
 *
 * In-place state (plan/skewed.h pyr_skew_inplace: Maxwell's E and H, its
 * auxiliaries beside them) has no two layers to lean between: every field,
 * state and inputs alike, lives in the ring, a piece uploads its own planes
 * there, sweeps its plane ranges of every step in one kernel call (sub-steps
 * in order) over a view of the ring from h + 1 planes below its own, and
 * downloads its planes of the last layer; what it leaves below its planes is
 * the next piece's input, in place.  Its sources are the kernel's (each node
 * in one piece's range at each step); its probes are recorded after every
 * step of the call and kept for the steps whose range held their node
 * (inplace_probes).  A ring write waits for the pieces in flight that read
 * those planes until their downloads are done (a mark after each). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "exec/exec_internal.h"
#include "exec/part_io.h"
#include "plan/skewed.h"

/* The one ping-pong field of a skewed plan. */
static int state_field(const exec_t *e)
{
    for (int f = 0; f < e->nf; f++)
        if (e->role[f] == PYR_FIELD_PINGPONG) return f;
    return -1;
}

/* A view of bundles l0 (and l1, may be NULL) over `box`, plane z of l0 at
 * buffer plane z - base0 and of l1 at z - base1. */
static pyr_status_t view(exec_t *e, pyr_piece_t *v, const pyr_box_t *box, void *l0, int64_t base0, void *l1, int64_t base1,
                         int64_t planes)
{
    const pyr_plan_t *plan = e->plan;
    const int a = pyr_skew_axis(plan), f = state_field(e);
    const int64_t plane_bytes = pyr_skew_plane_elems(plan) * (int64_t)e->elem;
    pyr_skew_view_shape(plan, box, v);
    int64_t first0 = box->lo[a] - base0, first1 = box->lo[a] - base1;
    const int64_t ext = pyr_box_extent(box, a);
    if (ext <= 0) first0 = first1 = 0; /* a window past the grid's end: nothing is read or written through it */
    if (first0 < 0 || first0 + ext > planes || (l1 && (first1 < 0 || first1 + ext > planes)))
        return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: planes [%lld, %lld) outside a buffer of %lld", (long long)first0,
                        (long long)(first0 + ext), (long long)planes);
    v->buf[f][0] = (char *)l0 + e->pp_off[f] + first0 * plane_bytes;
    if (l1) v->buf[f][1] = (char *)l1 + e->pp_off[f] + first1 * plane_bytes;
    return PYR_OK;
}

/* The inputs' ring and where its planes stand (the top comment), at e->skew_ring: with the halo
 * stores, the passes' device state, made on the first. */
typedef struct {
    void *buf;                 /* the inputs' rings, one after another (NULL: no input) */
    int64_t planes;            /* of one ring */
    int64_t field_bytes;       /* bytes of one ring */
    int index[PYR_MAX_FIELDS]; /* per field: its ring (-1: not an input) */
    int64_t base;              /* the latest piece's mapping: plane z at ring plane z - base */
    int64_t prev[2];           /* the ring planes the latest piece's views span */
    int64_t busy[PYR_EXEC_SKEW_SLOTS][2][2];    /* per slot: the ring planes its latest piece reads (its views', and
                                                   those its move read: two ranges), */
    unsigned char pending[PYR_EXEC_SKEW_SLOTS]; /* until the host waits for that slot */
    int64_t probe_ab[PYR_EXEC_SKEW_SLOTS][2];   /* in-place state: per slot, its latest piece's [A, B) (its probes') */
} skew_ring_t;

static skew_ring_t *ring_of(const exec_t *e) { return (skew_ring_t *)e->skew_ring; }

/* The host waits for slot q (and forgets its download in flight and its piece's reads of the ring). */
static pyr_status_t wait_slot(exec_t *e, int q)
{
    PYR_TRY(e->ops->wait(e->ctx, q));
    e->skew_pending[q] = 0;
    if (e->skew_ring) ring_of(e)->pending[q] = 0;
    return PYR_OK;
}

static pyr_status_t alloc_ring(exec_t *e, skew_ring_t *r)
{
    const pyr_plan_t *plan = e->plan;
    const pyr_problem_t *p = &plan->problem;
    int n = 0;
    for (int f = 0; f < e->nf; f++) r->index[f] = pyr_skew_in_ring(e->plan, f) ? n++ : -1;
    if (n == 0) return PYR_OK;
    int64_t ext[3] = {p->n[0], p->n[1], p->n[2]};
    ext[pyr_skew_axis(plan)] = r->planes = pyr_skew_ring_planes(plan, plan->height);
    const pyr_piece_layout_t L = pyr_piece_layout(e->ops, ext, e->elem);
    if (L.pitch != plan->layout.pitch) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: the inputs' ring and the buffers differ in pitch");
    r->field_bytes = (int64_t)L.layer_bytes;
    return e->ops->dev_alloc(e->ctx, (size_t)n * L.layer_bytes, &r->buf);
}

static pyr_status_t alloc_halo(exec_t *e)
{
    pyr_plan_t *plan = e->plan;
    const pyr_problem_t *p = &plan->problem;
    int64_t ext[3] = {p->n[0], p->n[1], p->n[2]};
    ext[pyr_skew_axis(plan)] = pyr_skew_store_planes(plan);
    const pyr_piece_layout_t H = pyr_piece_layout(e->ops, ext, e->elem);
    if (H.pitch != plan->layout.pitch) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: halo stores and buffers differ in pitch");
    const int n = pyr_skew_stores(plan, plan->height);
    e->halo = calloc(n > 0 ? (size_t)n : 1, sizeof *e->halo);
    skew_ring_t *r = calloc(1, sizeof *r);
    if (!e->halo || !r) {
        free(e->halo);
        e->halo = NULL;
        free(r);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    e->nhalo = n;
    e->skew_ring = r;
    for (int j = 0; j < n; j++) PYR_TRY(e->ops->dev_alloc(e->ctx, H.layer_bytes, &e->halo[j]));
    return alloc_ring(e, r);
}

void pyr_exec_skewed_release(exec_t *e)
{
    if (!e->halo) return;
    for (int j = 0; j < e->nhalo; j++)
        if (e->halo[j]) e->ops->dev_free(e->ctx, e->halo[j]);
    skew_ring_t *r = ring_of(e);
    if (r && r->buf) e->ops->dev_free(e->ctx, r->buf);
    free(r);
    e->skew_ring = NULL;
    free(e->halo);
    e->halo = NULL;
    e->nhalo = 0;
}

/* One piece's calls: its bundles (call j reads b[j & 1] and writes the
 * other), the layers done before each call, and where its planes sit. */
typedef struct {
    exec_t *e;
    int64_t t, np, A, G, planes, step;
    int older;   /* a layer read back (plan->previous): it moves with each call's output, stores of two layers */
    int64_t hs;  /* planes of one layer of a halo store (2k) */
    pyr_grid_dims_t grid;
    int f, ncalls;
    const int *steps;
    const int64_t *sj; /* sj[j]: layers done before call j */
    void *b[2];
    pyr_box_t interior;
    unsigned char *only; /* only[j]: call j's kernel writes nothing but its result (last_box_only) */
    unsigned char *kin;  /* kin[j]: call j's kernel takes its halo itself, save and fill (kernels.h halo) */
    int64_t base;        /* the inputs' ring: plane z at ring plane z - base */
} piece_calls_t;

/* Where layer l's planes sit in the piece's buffers: plane z at buffer plane z - base, the piece's own
 * planes at [G, G + S) whatever the layer (plan/skewed.h). */
static int64_t layer_base(const piece_calls_t *P, int64_t l) { return P->A - l - P->G; }

static pyr_status_t call_view(const piece_calls_t *P, int j, pyr_skew_call_t *call, pyr_piece_t *v)
{
    const int64_t s = P->sj[j];
    const int c = P->steps[j];
    pyr_skew_call(P->e->plan, P->t, s, c, call);
    return view(P->e, v, &call->window, P->b[j & 1], layer_base(P, s), P->b[(j & 1) ^ 1], layer_base(P, s + c), P->planes);
}

/* Layer `older` (0: the newest, 1: the one before, with a layer read back) of halo store i. */
static void *store_layer(const piece_calls_t *P, int i, int older)
{
    const int64_t plane_bytes = pyr_skew_plane_elems(P->e->plan) * (int64_t)P->e->elem;
    return (char *)P->e->halo[i] + (older ? P->hs * plane_bytes : 0);
}

/* The older layer's part of a call's save or fill box: all but its lowest plane (box's unclipped low end
 * lo), the 2c - 1 planes the next piece's call reads below its own and does not compute itself (plan/skewed.h). */
static pyr_box_t older_part(const pyr_plan_t *plan, const pyr_box_t *box, int64_t lo)
{
    const int a = pyr_skew_axis(plan);
    pyr_box_t b = *box;
    if (b.lo[a] < lo + 1) b.lo[a] = lo + 1;
    if (b.hi[a] < b.lo[a]) b.hi[a] = b.lo[a];
    return b;
}

/* Views of the halo stores of call j (whole planes: the stores' layout): the one it saves into over its
 * save box, the one it fills from over its fill box (plan/skewed.h: a ring), at their layer `older` (over
 * older_part of the box: the older layer's part of a store holds 2k - 1 planes). */
static pyr_status_t save_view(const piece_calls_t *P, int j, const pyr_skew_call_t *call, pyr_piece_t *hs, int older)
{
    void *store = store_layer(P, pyr_skew_store_read(P->t + 1, j, P->e->nhalo), older);
    const int64_t lo = call->b - P->sj[j] - 2 * P->steps[j];
    if (!older) return view(P->e, hs, &call->save, store, lo, NULL, 0, P->hs);
    const pyr_box_t b = older_part(P->e->plan, &call->save, lo);
    return view(P->e, hs, &b, store, lo + 1, NULL, 0, P->hs - 1);
}

static pyr_status_t fill_view(const piece_calls_t *P, int j, const pyr_skew_call_t *call, pyr_piece_t *hf, int older)
{
    void *store = store_layer(P, pyr_skew_store_read(P->t, j, P->e->nhalo), older);
    if (!older) return view(P->e, hf, &call->fill, store, call->win_lo, NULL, 0, P->hs);
    const pyr_box_t b = older_part(P->e->plan, &call->fill, call->win_lo);
    return view(P->e, hf, &b, store, call->win_lo + 1, NULL, 0, P->hs - 1);
}

/* The store views of call j's halo as its kernel would take it: hs over its save box where there is a next
 * piece and something to save, hf over its fill box where it fills; a view without one has no buffer. */
static pyr_status_t halo_views(const piece_calls_t *P, int j, const pyr_skew_call_t *call, pyr_piece_t *hs, pyr_piece_t *hf)
{
    memset(hs, 0, sizeof *hs);
    memset(hf, 0, sizeof *hf);
    if (P->t + 1 < P->np && !pyr_box_empty(&call->save) && !pyr_box_empty(&call->result)) PYR_TRY(save_view(P, j, call, hs, 0));
    const pyr_box_t fill = pyr_skew_kernel_fill(P->e->plan, call);
    if (!pyr_box_empty(&fill)) PYR_TRY(fill_view(P, j, call, hf, 0));
    return PYR_OK;
}

/* Call j's kernel call (its layer boxes in the executor's array, its halo
 * through the store views hs and hf where the kernel takes it); *computes =
 * 0 when it computes nothing. */
static pyr_status_t kernel_call(const piece_calls_t *P, int j, pyr_skew_call_t *call, pyr_piece_t *v, pyr_piece_t *hs, pyr_piece_t *hf,
                                pyr_kernel_call_t *kc, int *computes)
{
    exec_t *e = P->e;
    const pyr_plan_t *plan = e->plan;
    PYR_TRY(call_view(P, j, call, v));
    *computes = !pyr_box_empty(&call->result);
    if (!*computes) return PYR_OK;
    for (int i = 1; i <= P->steps[j]; i++) e->layer_boxes[i - 1] = pyr_skew_layer_box(plan, call, i);
    *kc = (pyr_kernel_call_t){.piece = v,
                              .coef = &plan->coef,
                              .boxes = e->layer_boxes,
                              .nboxes = P->steps[j],
                              .variant = &plan->variant,
                              .step = P->step + P->sj[j],
                              .grid = &P->grid};
    if (P->kin[j]) {
        if (halo_views(P, j, call, hs, hf) != PYR_OK) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: %s", pyr_last_error());
        if (hs->buf[P->f][0]) {
            kc->save_to = hs;
            kc->save = pyr_skew_kernel_save(call);
        }
        if (hf->buf[P->f][0]) {
            kc->fill_from = hf;
            kc->fill = pyr_skew_kernel_fill(plan, call);
        }
    }
    return PYR_OK;
}

/* A view of input field fi's ring over the whole planes of `box` (the buffers'
 * layout), plane z at ring plane z - base. */
static pyr_status_t ring_view(exec_t *e, int fi, const pyr_box_t *box, int64_t base, pyr_piece_t *w)
{
    const pyr_plan_t *plan = e->plan;
    skew_ring_t *r = ring_of(e);
    const int a = pyr_skew_axis(plan);
    const int64_t first = box->lo[a] - base, ext = pyr_box_extent(box, a);
    pyr_box_t whole = pyr_plan_grid(plan);
    whole.lo[a] = box->lo[a];
    whole.hi[a] = box->hi[a];
    pyr_skew_view_shape(plan, &whole, w);
    if (r->index[fi] < 0 || first < 0 || first + ext > r->planes)
        return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: input planes [%lld, %lld) outside a ring of %lld", (long long)first,
                        (long long)(first + ext), (long long)r->planes);
    w->buf[fi][0] = (char *)r->buf + (int64_t)r->index[fi] * r->field_bytes + first * pyr_skew_plane_elems(plan) * (int64_t)e->elem;
    return PYR_OK;
}

/* Planes [lo, hi) of the inputs from the host into the ring at mapping base, on queue q.  Through a view
 * of the whole ring (its buffer the ring's start): a runtime that orders copies after the uploads into
 * their source buffer (the CUDA runtime's writers, a short table) then notes one buffer per input, not one
 * per place in the ring. */
static pyr_status_t ring_upload(exec_t *e, int q, int64_t lo, int64_t hi, int64_t base)
{
    const int a = pyr_skew_axis(e->plan);
    if (hi <= lo) return PYR_OK;
    if (lo < base || hi > base + ring_of(e)->planes)
        return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: input planes [%lld, %lld) outside a ring of %lld", (long long)(lo - base),
                        (long long)(hi - base), (long long)ring_of(e)->planes);
    pyr_box_t b = pyr_plan_grid(e->plan), whole = b;
    b.lo[a] = lo;
    b.hi[a] = hi;
    whole.lo[a] = base;
    whole.hi[a] = base + ring_of(e)->planes;
    for (int fi = 0; fi < e->nf; fi++) {
        if (!pyr_skew_in_ring(e->plan, fi)) continue;
        pyr_box_t parts[2];
        const int n = pyr_plan_field_boxes(e->plan, fi, &b, parts);
        for (int k = 0; k < n; k++) {
            pyr_piece_t w;
            PYR_TRY(ring_view(e, fi, &whole, base, &w));
            PYR_TRY(e->ops->upload(e->ctx, q, &w, fi, &e->grid[fi], &parts[k]));
            e->count.uploaded += (uint64_t)pyr_box_volume(&parts[k]);
        }
    }
    return PYR_OK;
}

static int overlaps(int64_t lo, int64_t hi, const int64_t r[2]) { return lo < hi && lo < r[1] && r[0] < hi; }

/* Planes [lo, hi) of the inputs from mapping `from` to mapping `to` within the ring, on queue q (the two
 * places apart: ring_place keeps a new mapping clear of the previous piece's planes). */
static pyr_status_t ring_move(exec_t *e, int q, int64_t lo, int64_t hi, int64_t from, int64_t to)
{
    const int a = pyr_skew_axis(e->plan);
    const int64_t src[2] = {lo - from, hi - from};
    if (hi <= lo) return PYR_OK;
    if (overlaps(lo - to, hi - to, src))
        return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: ring planes [%lld, %lld) moved onto [%lld, %lld)", (long long)src[0],
                        (long long)src[1], (long long)(lo - to), (long long)(hi - to));
    pyr_box_t b = pyr_plan_grid(e->plan);
    b.lo[a] = lo;
    b.hi[a] = hi;
    for (int fi = 0; fi < e->nf; fi++) {
        if (!pyr_skew_in_ring(e->plan, fi)) continue;
        pyr_box_t parts[2];
        const int n = pyr_plan_field_boxes(e->plan, fi, &b, parts);
        for (int k = 0; k < n; k++) {
            pyr_piece_t sv, dv;
            PYR_TRY(ring_view(e, fi, &parts[k], from, &sv));
            PYR_TRY(ring_view(e, fi, &parts[k], to, &dv));
            PYR_TRY(e->ops->copy(e->ctx, q, &dv, fi, 1, &sv, 0, &parts[k]));
        }
    }
    return PYR_OK;
}

/* Before a write into ring planes [lo, hi) on slot q: it waits for the compute of every piece in flight on
 * another slot that reads any of them (its slot's last compute mark; without marks, one slot: the host).
 * In-place state is read until the piece's download is done: then that mark (PYR_MARK_UPLOAD, which the
 * skewed passes use for nothing else). */
static pyr_status_t ring_claim(exec_t *e, int q, int64_t lo, int64_t hi)
{
    skew_ring_t *r = ring_of(e);
    const int marks = e->ops->mark && e->ops->after_mark;
    const int which = pyr_skew_inplace(e->plan) ? PYR_MARK_UPLOAD : PYR_MARK_COMPUTE;
    for (int o = 0; o < e->plan->slots; o++) {
        if (o == q || !r->pending[o] || !(overlaps(lo, hi, r->busy[o][0]) || overlaps(lo, hi, r->busy[o][1]))) continue;
        if (marks) PYR_TRY(e->ops->after_mark(e->ctx, q, o, which));
        else PYR_TRY(wait_slot(e, o));
    }
    return PYR_OK;
}

/* Where a new mapping puts a piece's `size` ring planes: the lowest of the ring's start and the ends of the
 * planes in flight (and of the previous piece's, where the new mapping copies from them) that keeps clear of
 * all of them; the ring's start where none does (the writes then wait: ring_claim).  The ring's start is
 * clear of the previous piece's planes where a pass's piece takes a new mapping (pyr_skew_ring_planes: they
 * lie in its top part, S + h + k planes above the start at least), so a piece's own upload and its move
 * never touch the planes it moves. */
static int64_t ring_place(const exec_t *e, int q, int64_t size, int avoid_prev)
{
    skew_ring_t *r = ring_of(e);
    int64_t cand[PYR_EXEC_SKEW_SLOTS + 2];
    int nc = 0;
    cand[nc++] = 0;
    for (int o = 0; o < e->plan->slots; o++)
        if (o != q && r->pending[o]) cand[nc++] = r->busy[o][0][1];
    if (avoid_prev) cand[nc++] = r->prev[1];
    int64_t best = -1;
    for (int i = 0; i < nc; i++) {
        const int64_t p = cand[i];
        int clear = p >= 0 && p + size <= r->planes && (best < 0 || p < best);
        for (int o = 0; o < e->plan->slots && clear; o++)
            if (o != q && r->pending[o] && (overlaps(p, p + size, r->busy[o][0]) || overlaps(p, p + size, r->busy[o][1]))) clear = 0;
        if (clear && avoid_prev && overlaps(p, p + size, r->prev)) clear = 0;
        if (clear) best = p;
    }
    return best >= 0 ? best : 0;
}

/* Call j's view of the inputs: the ring at the piece's mapping over its window. */
static pyr_status_t ring_point(const piece_calls_t *P, pyr_piece_t *v)
{
    exec_t *e = P->e;
    for (int fi = 0; fi < e->nf; fi++) {
        if (!pyr_skew_in_ring(e->plan, fi)) continue;
        pyr_piece_t w;
        PYR_TRY(ring_view(e, fi, &v->box, P->base, &w));
        v->buf[fi][0] = w.buf[fi][0];
    }
    return PYR_OK;
}

/* Whether call j's kernel takes its halo itself (kernels.h halo): its save
 * (where there is a next piece) and its fill. */
static int halo_in_kernel(const piece_calls_t *P, int j)
{
    pyr_skew_call_t call;
    pyr_piece_t v, hs, hf;
    if (call_view(P, j, &call, &v) != PYR_OK || halo_views(P, j, &call, &hs, &hf) != PYR_OK) {
        pyr_clear_error(); /* the call itself will say what is wrong */
        return 0;
    }
    return pyr_skew_halo(P->e->plan, P->e->ctx, &call, &v, hs.buf[P->f][0] ? &hs : NULL, hf.buf[P->f][0] ? &hf : NULL,
                         P->step + P->sj[j], &P->grid);
}

/* Whether call j's kernel writes nothing but its result (kernels.h
 * last_box_only; a call that computes nothing writes nothing). */
static int last_box_only(const piece_calls_t *P, int j)
{
    pyr_skew_call_t call;
    pyr_piece_t v;
    if (call_view(P, j, &call, &v) != PYR_OK) {
        pyr_clear_error(); /* the call itself will say what is wrong */
        return 0;
    }
    return pyr_skew_last_box_only(P->e->plan, P->e->ctx, &call, &v, P->step + P->sj[j], &P->grid);
}

/* Whether call j's save runs on the lane beside its kernel (queued after
 * call j - 1's), and call j + 1's fill with it. */
static int save_beside(const piece_calls_t *P, int lane, int j) { return lane >= 0 && j < P->ncalls && P->only[j]; }
static int fill_beside(const piece_calls_t *P, int lane, int j) { return save_beside(P, lane, j) && j + 1 < P->ncalls && P->only[j + 1]; }

/* The planes of call j's window whose layer before comes from the halo store (its fill box's older part;
 * empty where the kernel reads its halo itself or there is none). */
static pyr_box_t older_fill(const piece_calls_t *P, const pyr_skew_call_t *call, int j)
{
    pyr_box_t none;
    memset(&none, 0, sizeof none);
    const pyr_box_t fill = pyr_box_intersect(&call->fill, &P->interior);
    if (!P->older || P->kin[j] || pyr_box_empty(&fill)) return none;
    return older_part(P->e->plan, &fill, call->win_lo);
}

/* With a layer read back, from the second call on: the plane from which up the layer before of call j's
 * window is read where call j - 1 left it (kernels.h older_shift): from the window's lowest plane but one
 * that call j - 1 computed it on, above the store's older planes (older_fill); below it, where those put it,
 * or nothing computes from it. */
static int64_t older_split(const piece_calls_t *P, const pyr_skew_call_t *call, int j)
{
    const int a = pyr_skew_axis(P->e->plan);
    const pyr_box_t ofill = older_fill(P, call, j);
    int64_t lo = call->a - P->sj[j] - 1;
    if (lo < call->window.lo[a]) lo = call->window.lo[a];
    if (!pyr_box_empty(&ofill) && ofill.hi[a] > lo) lo = ofill.hi[a];
    return lo;
}

/* Call j's input before it computes, on queue q: the window's low planes
 * from the previous piece (their interior: the resident faces cover the
 * rest, skewed plans keeping every boundary face on the device; none where
 * the kernel reads them from the store itself), and the boundary faces of its
 * window, as one operation where the backend has one.  The faces go into both buffers where the kernel
 * writes its middle layers there (and reads them back); where it writes only
 * its result, into the input alone: the next call's fill gives this call's
 * output its own, and the piece's last call gives its result them after
 * computing (face_result).  With a layer read back the store's older planes go
 * into the output too, where the first sub-step reads them; from the second
 * call on that output and its faces wait for the first part of that sub-step
 * (run_call: fill_output). */
static pyr_status_t fill_input(const piece_calls_t *P, int q, int j)
{
    if (j >= P->ncalls) return PYR_OK;
    exec_t *e = P->e;
    pyr_skew_call_t call;
    pyr_piece_t v, hf, ho;
    PYR_TRY(call_view(P, j, &call, &v));
    const int later = P->older && j > 0;
    pyr_copy_op_t cops[PYR_COPY_MANY_MAX];
    int nc = 0;
    const pyr_box_t fill = pyr_box_intersect(&call.fill, &P->interior);
    if (!pyr_box_empty(&fill) && !P->kin[j]) { /* kin: the kernel reads them from the store */
        PYR_TRY(fill_view(P, j, &call, &hf, 0));
        cops[nc++] = (pyr_copy_op_t){.dst = &v, .dst_layers = 1, .src = &hf, .src_layer = 0, .box = fill};
    }
    const pyr_box_t ofill = older_fill(P, &call, j);
    if (!later && !pyr_box_empty(&ofill)) { /* the layer before, into the buffer its first sub-step writes */
        PYR_TRY(fill_view(P, j, &call, &ho, 1));
        cops[nc++] = (pyr_copy_op_t){.dst = &v, .dst_layers = 2, .src = &ho, .src_layer = 0, .box = ofill};
    }
    /* the faces also where the call computes nothing: its save passes whole planes on to the next piece's
     * store, whose kernel may read them there, faces included (kernels.h halo) */
    nc = pyr_exec_face_copies(e, &v, P->only[j] || later ? 1 : 3, cops, nc, PYR_COPY_MANY_MAX);
    if (nc < 0) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: more than %d copies in a call", PYR_COPY_MANY_MAX);
    return pyr_exec_copies(e, q, P->f, cops, nc);
}

/* With a layer read back, from call j = 1 on: what fill_input leaves for later, on queue q once the first
 * sub-step's part that reads the layer before where call j - 1 left it has run (it reads the planes these
 * land on): the store's older planes and the boundary faces into the call's output. */
static pyr_status_t fill_output(const piece_calls_t *P, int q, int j)
{
    exec_t *e = P->e;
    pyr_skew_call_t call;
    pyr_piece_t v, ho;
    PYR_TRY(call_view(P, j, &call, &v));
    pyr_copy_op_t cops[PYR_COPY_MANY_MAX];
    int nc = 0;
    const pyr_box_t ofill = older_fill(P, &call, j);
    if (!pyr_box_empty(&ofill)) {
        PYR_TRY(fill_view(P, j, &call, &ho, 1));
        cops[nc++] = (pyr_copy_op_t){.dst = &v, .dst_layers = 2, .src = &ho, .src_layer = 0, .box = ofill};
    }
    nc = pyr_exec_face_copies(e, &v, 2, cops, nc, PYR_COPY_MANY_MAX);
    if (nc < 0) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: more than %d copies in a call", PYR_COPY_MANY_MAX);
    return pyr_exec_copies(e, q, P->f, cops, nc);
}

/* Call j's window's top planes of its input, on queue q, into the halo store
 * its low planes came from, for the next piece. */
static pyr_status_t save_top(const piece_calls_t *P, int q, int j)
{
    if (j >= P->ncalls || P->t + 1 >= P->np || P->kin[j]) return PYR_OK; /* kin: the kernel saves it */
    pyr_skew_call_t call;
    pyr_piece_t v, hs;
    PYR_TRY(call_view(P, j, &call, &v));
    if (pyr_box_empty(&call.save)) return PYR_OK;
    PYR_TRY(save_view(P, j, &call, &hs, 0));
    PYR_TRY(P->e->ops->copy(P->e->ctx, q, &hs, P->f, 1, &v, 0, &call.save));
    pyr_box_t osave = older_part(P->e->plan, &call.save, call.b - P->sj[j] - 2 * P->steps[j]);
    if (!P->older || pyr_box_empty(&osave)) return PYR_OK;
    /* the layer before, in the buffer the call writes until its kernel runs: at the call's output mapping
     * in the first call (the piece's upload put it there); from the second on, above older_split where call
     * j - 1 left it, at that call's input mapping (kernels.h older_shift), the rest once it is in place
     * (save_older_low) */
    PYR_TRY(save_view(P, j, &call, &hs, 1));
    if (j == 0) return P->e->ops->copy(P->e->ctx, q, &hs, P->f, 1, &v, 1, &osave);
    const int a = pyr_skew_axis(P->e->plan);
    const int64_t split = older_split(P, &call, j);
    if (osave.lo[a] < split) osave.lo[a] = split;
    if (pyr_box_empty(&osave)) return PYR_OK;
    pyr_piece_t w;
    PYR_TRY(view(P->e, &w, &osave, P->b[(j & 1) ^ 1], layer_base(P, P->sj[j - 1]), NULL, 0, P->planes));
    return P->e->ops->copy(P->e->ctx, q, &hs, P->f, 1, &w, 0, &osave);
}

/* With a layer read back, from call j = 1 on: the part of the older layer's save below older_split, from the
 * call's output once fill_output has put it there (before the kernel writes over it). */
static pyr_status_t save_older_low(const piece_calls_t *P, int q, int j)
{
    if (!P->older || j == 0 || j >= P->ncalls || P->t + 1 >= P->np || P->kin[j]) return PYR_OK;
    pyr_skew_call_t call;
    pyr_piece_t v, hs;
    PYR_TRY(call_view(P, j, &call, &v));
    if (pyr_box_empty(&call.save)) return PYR_OK;
    pyr_box_t osave = older_part(P->e->plan, &call.save, call.b - P->sj[j] - 2 * P->steps[j]);
    const int a = pyr_skew_axis(P->e->plan);
    const int64_t split = older_split(P, &call, j);
    if (osave.hi[a] > split) osave.hi[a] = split;
    if (osave.hi[a] <= osave.lo[a] || pyr_box_empty(&osave)) return PYR_OK;
    PYR_TRY(save_view(P, j, &call, &hs, 1));
    return P->e->ops->copy(P->e->ctx, q, &hs, P->f, 1, &v, 1, &osave);
}

/* The boundary faces of the piece's result: into the output of its last
 * computing call, on its slot after the kernel. */
static pyr_status_t face_result(const piece_calls_t *P, int slot)
{
    for (int j = P->ncalls - 1; j >= 0; j--) {
        pyr_skew_call_t call;
        pyr_piece_t v;
        PYR_TRY(call_view(P, j, &call, &v));
        if (pyr_box_empty(&call.result)) continue;
        pyr_copy_op_t cops[PYR_COPY_MANY_MAX];
        const int nc = pyr_exec_face_copies(P->e, &v, 2, cops, 0, PYR_COPY_MANY_MAX);
        if (nc < 0) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: more than %d boundary faces", PYR_COPY_MANY_MAX);
        return pyr_exec_copies(P->e, slot, P->f, cops, nc);
    }
    return PYR_OK;
}

/* Before a piece's access of the host grid's `box` on `slot`: wait for every
 * other slot whose download in flight writes planes of it. */
static pyr_status_t host_order(exec_t *e, int slot, const pyr_box_t *box)
{
    for (int q = 0; q < e->plan->slots; q++) {
        if (q == slot || !e->skew_pending[q]) continue;
        const pyr_box_t x = pyr_box_intersect(&e->skew_written[q], box);
        if (!pyr_box_empty(&x)) PYR_TRY(wait_slot(e, q));
    }
    return PYR_OK;
}

/* The last sub-step of call j (a piece's last) as a kernel call of its own, the one before in another: the
 * buffers then hold the layer before the last and the last (c odd: the first part leaves its layer in the
 * input buffer), and the change of the piece's result goes into *out. */
static pyr_status_t run_measured(const piece_calls_t *P, int slot, const pyr_skew_call_t *call, pyr_piece_t *v,
                                 const pyr_kernel_call_t *kc, double *out)
{
    exec_t *e = P->e;
    const int first = kc->nboxes - 1;
    if (first & 1) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: a measured call of %d steps", kc->nboxes);
    if (first > 0) {
        pyr_kernel_call_t k1 = *kc;
        k1.nboxes = first;
        PYR_TRY(e->plan->kernel->run(e->ctx, slot, &k1));
    }
    pyr_kernel_call_t k2 = *kc;
    k2.boxes = kc->boxes + first;
    k2.nboxes = 1;
    k2.step = kc->step + first;
    PYR_TRY(e->plan->kernel->run(e->ctx, slot, &k2));
    pyr_box_t b = call->result;
    if (e->plan->exchange) b = pyr_box_intersect(&b, &e->plan->exchange->reduce_box);
    *out = 0;
    if (pyr_box_empty(&b)) return PYR_OK;
    pyr_piece_t newest = *v;
    newest.cur = 1; /* the output buffer */
    return e->ops->reduce_change(e->ctx, slot, &newest, P->f, &b, out);
}

/* Call j's kernel call kc on `slot` (through run_measured where *partial takes the piece's change).  With a
 * layer read back, from the second call on, the first sub-step reads that layer where call j - 1 left it: in
 * the same buffer, at that call's input mapping, as many planes below the place it writes as the two calls'
 * steps (kernels.h older_shift), so nothing moves it into place.  Only the window's low planes, whose layer
 * before comes from the store, take theirs in place; the store's planes land where the part above reads its
 * layer before, so the sub-step runs in two: the part above, the store's older planes and the output's faces
 * (fill_output), then the low part with the call's other sub-steps. */
static pyr_status_t run_call(const piece_calls_t *P, int slot, int j, const pyr_skew_call_t *call, pyr_piece_t *v, pyr_kernel_call_t *kc,
                             double *partial)
{
    exec_t *e = P->e;
    if (P->older && j > 0) {
        const int a = pyr_skew_axis(e->plan);
        const pyr_box_t first = kc->boxes[0];
        const int64_t split = older_split(P, call, j);
        pyr_box_t high = first, low = first;
        if (high.lo[a] < split) high.lo[a] = split;
        if (high.hi[a] < high.lo[a]) high.hi[a] = high.lo[a];
        if (low.hi[a] > split) low.hi[a] = split;
        if (low.hi[a] < low.lo[a]) low.hi[a] = low.lo[a];
        if (!pyr_box_empty(&high)) {
            pyr_kernel_call_t k1 = *kc;
            k1.boxes = &high;
            k1.nboxes = 1;
            k1.older_shift = P->steps[j - 1] + P->steps[j];
            PYR_TRY(e->plan->kernel->run(e->ctx, slot, &k1));
        }
        PYR_TRY(fill_output(P, slot, j));
        PYR_TRY(save_older_low(P, slot, j));
        if (kc->boxes != e->layer_boxes) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: a call's boxes elsewhere");
        e->layer_boxes[0] = low;
    }
    if (partial) return run_measured(P, slot, call, v, kc, partial);
    return e->plan->kernel->run(e->ctx, slot, kc);
}

/* ------------------------------------------------------------ in-place state (plan/skewed.h) */

/* Planes [lo, hi) of the ring's state fields (not the inputs) at mapping base into the host grid, on slot q. */
static pyr_status_t ring_download(exec_t *e, int q, const pyr_box_t *box, int64_t base)
{
    const int a = pyr_skew_axis(e->plan);
    pyr_box_t whole = pyr_plan_grid(e->plan);
    whole.lo[a] = base;
    whole.hi[a] = base + ring_of(e)->planes;
    for (int fi = 0; fi < e->nf; fi++) {
        if (!pyr_skew_in_ring(e->plan, fi) || e->role[fi] == PYR_FIELD_INPUT) continue;
        pyr_box_t parts[2];
        const int n = pyr_plan_field_boxes(e->plan, fi, box, parts);
        for (int k = 0; k < n; k++) {
            pyr_piece_t w;
            PYR_TRY(ring_view(e, fi, &whole, base, &w));
            PYR_TRY(e->ops->download(e->ctx, q, &w, fi, &e->grid[fi], &parts[k]));
            e->count.downloaded += (uint64_t)pyr_box_volume(&parts[k]);
        }
    }
    return PYR_OK;
}

/* The probes of slot q's last piece (planes [A, B) at the pass's first layer; valid after the host waited
 * for q) into the pass's table: probe j's row s only where its node lay in the piece's planes of step
 * s + 1, [A - s - 1, B - s - 1) (the kernel records every probe of its call after every step). */
static void inplace_probes(exec_t *e, int q, int64_t h)
{
    const int k = e->slot_probe_n[q], a = pyr_skew_axis(e->plan);
    const int64_t A = ring_of(e)->probe_ab[q][0], B = ring_of(e)->probe_ab[q][1];
    for (int j = 0; j < k; j++) {
        const int i = e->slot_probe_idx[q][j];
        const int64_t z = e->probes[i].node[a];
        for (int64_t s = 0; s < h; s++)
            if (z >= A - s - 1 && z < B - s - 1) e->probe_pass[s * e->nprobes + i] = e->slot_probe_out[q][s * k + j];
    }
    e->slot_probe_n[q] = 0;
}

/* The host waits for slot q, then takes its piece's probes. */
static pyr_status_t inplace_wait(exec_t *e, int q, int64_t h)
{
    PYR_TRY(wait_slot(e, q));
    if (e->nprobes) inplace_probes(e, q, h);
    return PYR_OK;
}

/* A pass of in-place state: piece t uploads its planes of every ring field into the ring on its slot, sweeps
 * steps 1..h over its plane ranges in one kernel call once the piece before has computed (what that piece
 * left below A is in the ring, at the same mapping or moved to this piece's new one), and downloads its
 * planes of layer h.  The ring's writes wait for the pieces in flight on other slots that read the planes
 * (until their downloads are done: ring_claim); the host grid's order is the ping-pong pass's. */
static pyr_status_t inplace_pass(exec_t *e, int64_t step, int64_t h, int drain)
{
    pyr_plan_t *plan = e->plan;
    const pyr_device_ops_t *ops = e->ops;
    const int slots = plan->slots, a = pyr_skew_axis(plan), nsub = plan->scheme->nsub;
    if (slots < 1 || slots > PYR_EXEC_SKEW_SLOTS) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: a plan it cannot run");
    if (!e->halo) PYR_TRY(alloc_halo(e));
    skew_ring_t *ring = ring_of(e);
    if (!ring->buf) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: in-place state without a ring");
    const int64_t np = pyr_skew_pieces(plan, h);
    const pyr_grid_dims_t grid = {{plan->problem.n[0], plan->problem.n[1], plan->problem.n[2]}};
    const int marks = slots > 1 && ops->mark && ops->after_mark;
    const pyr_box_t interior = pyr_plan_interior(plan);
    for (int64_t t = 0; t < np; t++) {
        const int64_t T = e->skew_issued + t;
        const int slot = (int)(T % slots);
        if (T >= slots) PYR_TRY(inplace_wait(e, slot, h));
        int64_t foot[2], need[2], move[2] = {0, 0}, from = 0;
        pyr_skew_input_planes(plan, t, h, foot, need);
        const pyr_box_t ub = pyr_skew_upload(plan, t);
        if (t == 0 || foot[0] - ring->base < 0 || foot[1] - ring->base > ring->planes) {
            if (t > 0) {
                move[0] = need[0];
                move[1] = need[1];
            }
            from = ring->base;
            ring->base = foot[0] - ring_place(e, slot, foot[1] - foot[0], move[1] > move[0]);
            const int64_t src[2] = {move[0] - from, move[1] - from};
            if (move[1] > move[0] && overlaps(ub.lo[a] - ring->base, ub.hi[a] - ring->base, src))
                return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: piece %lld's planes would overwrite the ring planes it moves", (long long)t);
        }
        const int64_t base = ring->base;
        if (!pyr_box_empty(&ub)) {
            PYR_TRY(host_order(e, slot, &ub));
            PYR_TRY(ring_claim(e, slot, ub.lo[a] - base, ub.hi[a] - base));
            PYR_TRY(ring_upload(e, slot, ub.lo[a], ub.hi[a], base));
        }
        /* what the pieces before left below A: theirs to write until the piece before has computed */
        if (T > 0 && marks) PYR_TRY(ops->after_mark(e->ctx, slot, (int)((T - 1) % slots), PYR_MARK_COMPUTE));
        if (move[1] > move[0]) {
            PYR_TRY(ring_claim(e, slot, move[0] - base, move[1] - base));
            PYR_TRY(ring_move(e, slot, move[0], move[1], from, base));
        }
        /* its steps, without those where its planes lie off the grid (at a pass's ends) */
        int64_t s0 = 0, s1 = 0;
        for (int64_t s = 1; s <= h; s++) {
            int any = 0;
            for (int k = 0; k < nsub && !any; k++) {
                const pyr_box_t b = pyr_skew_inplace_box(plan, t, s, k);
                any = !pyr_box_empty(&b);
            }
            if (!any) continue;
            if (!s0) s0 = s;
            s1 = s;
        }
        if (s0 > 0 && foot[1] > foot[0]) {
            for (int64_t s = s0; s <= s1; s++)
                for (int k = 0; k < nsub; k++) {
                    pyr_box_t *b = &e->layer_boxes[(s - s0) * nsub + k];
                    *b = pyr_skew_inplace_box(plan, t, s, k);
                    e->count.computed += (uint64_t)pyr_box_volume(b);
                }
            pyr_box_t win = pyr_plan_grid(plan);
            win.lo[a] = foot[0];
            win.hi[a] = foot[1];
            pyr_piece_t v;
            pyr_skew_view_shape(plan, &win, &v);
            for (int fi = 0; fi < e->nf; fi++) {
                if (!pyr_skew_in_ring(plan, fi)) continue;
                pyr_piece_t w;
                PYR_TRY(ring_view(e, fi, &win, base, &w));
                v.buf[fi][0] = w.buf[fi][0];
            }
            pyr_kernel_call_t kc = {.piece = &v,
                                    .coef = &plan->coef,
                                    .boxes = e->layer_boxes,
                                    .nboxes = (int)((s1 - s0 + 1) * nsub),
                                    .variant = &plan->variant,
                                    .step = step + s0 - 1,
                                    .grid = &grid,
                                    .nsources = e->nsrc,
                                    .sources = e->src,
                                    .amplitudes = e->nsrc ? e->amp + (s0 - 1) * e->nsrc : NULL,
                                    .terms = e->series ? e->pts.terms : NULL,
                                    .series = e->series ? e->series + (s0 - 1) * e->pts.nseries : NULL,
                                    .nseries = e->pts.nseries,
                                    .sources_id = e->src_id};
            if (e->nprobes) {
                /* the probes on the planes it sweeps, recorded after each of its steps (inplace_probes keeps
                 * the rows where the node was its own) */
                int k = 0;
                for (int i = 0; i < e->nprobes; i++) {
                    const int64_t *nd = e->probes[i].node;
                    int in = nd[a] >= foot[0] && nd[a] < foot[1];
                    for (int d = 0; d < 3 && in; d++) in = nd[d] >= interior.lo[d] && nd[d] < interior.hi[d];
                    if (!in) continue;
                    e->task_probes[k] = e->probes[i];
                    e->slot_probe_idx[slot][k++] = i;
                }
                e->slot_probe_n[slot] = k;
                ring_of(e)->probe_ab[slot][0] = interior.lo[a] + t * plan->skew_size;
                ring_of(e)->probe_ab[slot][1] = ring_of(e)->probe_ab[slot][0] + plan->skew_size;
                kc.nprobes = k;
                kc.probes = e->task_probes;
                kc.probes_out = e->slot_probe_out[slot] + (s0 - 1) * k;
            }
            PYR_TRY(plan->kernel->run(e->ctx, slot, &kc));
        }
        if (marks) PYR_TRY(ops->mark(e->ctx, slot, PYR_MARK_COMPUTE));
        const pyr_box_t db = pyr_skew_download(plan, t, h);
        if (!pyr_box_empty(&db)) {
            PYR_TRY(host_order(e, slot, &db));
            PYR_TRY(ring_download(e, slot, &db, base));
            e->skew_written[slot] = db;
            e->skew_pending[slot] = 1;
        }
        if (marks) PYR_TRY(ops->mark(e->ctx, slot, PYR_MARK_UPLOAD));
        /* the ring planes it reads and writes, busy until its download is done (and those its move read) */
        ring->prev[0] = ring->busy[slot][0][0] = foot[0] - base;
        ring->prev[1] = ring->busy[slot][0][1] = foot[1] - base;
        ring->busy[slot][1][0] = move[0] - from;
        ring->busy[slot][1][1] = move[1] - from;
        ring->pending[slot] = 1;
    }
    e->skew_issued += np;
    if (drain || e->nprobes)
        for (int q = 0; q < slots; q++) PYR_TRY(inplace_wait(e, q, h));
    return PYR_OK;
}

pyr_status_t pyr_exec_skewed_pass(exec_t *e, int64_t step, int64_t h, int drain, int reduce)
{
    pyr_plan_t *plan = e->plan;
    if (pyr_skew_inplace(plan)) {
        if (reduce) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: in-place state measures no change");
        return inplace_pass(e, step, h, drain);
    }
    const pyr_device_ops_t *ops = e->ops;
    const int f = state_field(e), slots = plan->slots, older = plan->previous;
    if (f < 0 || plan->spares != (older && slots > 1 ? 2 : 1) || slots < 1 || slots > PYR_EXEC_SKEW_SLOTS)
        return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: a plan it cannot run");
    /* the change: one partial per piece (e->partial holds the pieces of the plan's height, the most) */
    const int64_t ntasks = pyr_plan_tasks(plan);
    if (reduce && pyr_skew_pieces(plan, h) > ntasks)
        return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: %lld pieces, %lld partial changes", (long long)pyr_skew_pieces(plan, h),
                        (long long)ntasks);
    if (!e->halo) PYR_TRY(alloc_halo(e));
    int steps[PYR_SKEW_MAX_CALLS];
    int64_t sj[PYR_SKEW_MAX_CALLS];
    unsigned char only[PYR_SKEW_MAX_CALLS], kin[PYR_SKEW_MAX_CALLS];
    const int ncalls = pyr_skew_calls(plan, h, steps, PYR_SKEW_MAX_CALLS);
    if (ncalls > e->nhalo) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: %d calls, %d halo stores", ncalls, e->nhalo);
    for (int j = 0; j < ncalls; j++) sj[j] = j ? sj[j - 1] + steps[j - 1] : 0;
    if (older && !e->prev[f].data) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: no host copy of the layer before");
    const int64_t G = 2 * (int64_t)plan->skew_k, planes = pyr_skew_buffer_planes(plan, plan->height);
    const int64_t np = pyr_skew_pieces(plan, h);
    const pyr_grid_dims_t grid = {{plan->problem.n[0], plan->problem.n[1], plan->problem.n[2]}};
    const int marks = slots > 1 && ops->mark && ops->after_mark;
    const int a = pyr_skew_axis(plan);
    skew_ring_t *ring = ring_of(e);
    /* The copies between calls.  Call j's save reads the top planes of its input, which call j - 1's
     * kernel wrote and call j + 1's overwrites; call j + 1's fill writes the low planes and faces of call
     * j's output, which call j - 1 read.  So where call j's kernel writes nothing but its result (kernels.h
     * last_box_only) both may run beside it: on a lane (a queue for copies beside the slots) after call
     * j - 1's kernel, with call j + 1 waiting for them - the fill only when call j + 1's faces go into its
     * input alone (its kernel is last-box-only too).  A kernel of several launches writes its middle
     * layers into both buffers: then the save runs on the slot before it and the fill after it, the order
     * on a runtime without a lane.  Where call j's kernel takes its halo itself (kernels.h halo: kin[j]),
     * there is no save copy and its fill copies only the window's faces: the kernel reads its low planes from
     * one store and writes its top planes into another (plan/skewed.h: a ring), the one call j - 1 read. */
    const int lane = ops->lanes > 0 && ops->mark && ops->after_mark ? ops->slots : -1;
    for (int64_t t = 0; t < np; t++) {
        const int64_t T = e->skew_issued + t; /* the piece's number in the run */
        const int slot = (int)(T % slots);
        if (T >= slots) PYR_TRY(wait_slot(e, slot));
        pyr_skew_call_t call;
        pyr_skew_call(plan, t, 0, steps[0], &call);
        piece_calls_t P = {.e = e,
                           .t = t,
                           .np = np,
                           .A = call.a,
                           .G = G,
                           .planes = planes,
                           .older = older,
                           .hs = 2 * (int64_t)plan->skew_k,
                           .f = f,
                           .ncalls = ncalls,
                           .steps = steps,
                           .sj = sj,
                           .b = {e->slot_next[slot], e->spare[0]},
                           .interior = pyr_plan_interior(plan),
                           .step = step,
                           .grid = grid,
                           .only = only,
                           .kin = kin};
        pyr_piece_t v, hs, hf;
        pyr_kernel_call_t kc;
        const pyr_box_t ub = pyr_skew_upload(plan, t);
        /* the inputs' mapping: the piece before's while this one's planes fit in the ring, else a new one,
         * to which the planes below its own that the pieces before uploaded move (the top comment) */
        int64_t foot[2] = {0, 0}, need[2] = {0, 0}, move[2] = {0, 0}, from = 0;
        if (ring->buf) {
            pyr_skew_input_planes(plan, t, h, foot, need);
            if (t == 0 || foot[0] - ring->base < 0 || foot[1] - ring->base > ring->planes) {
                if (t > 0) {
                    move[0] = need[0];
                    move[1] = need[1] < P.A ? need[1] : P.A;
                }
                from = ring->base;
                ring->base = foot[0] - ring_place(e, slot, foot[1] - foot[0], move[1] > move[0]);
                const int64_t src[2] = {move[0] - from, move[1] - from};
                if (move[1] > move[0] && overlaps(ub.lo[a] - ring->base, ub.hi[a] - ring->base, src))
                    return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: piece %lld's inputs would overwrite the ring planes it moves",
                                    (long long)t);
            }
            P.base = ring->base;
        }
        if (!pyr_box_empty(&ub)) {
            PYR_TRY(host_order(e, slot, &ub));
            PYR_TRY(view(e, &v, &ub, P.b[0], layer_base(&P, 0), NULL, 0, planes));
            PYR_TRY(ops->upload(e->ctx, slot, &v, f, &e->grid[f], &ub));
            e->count.uploaded += (uint64_t)pyr_box_volume(&ub);
            /* the inputs' own planes beside the state's, before the piece waits for the previous one */
            if (ring->buf) {
                PYR_TRY(ring_claim(e, slot, ub.lo[a] - P.base, ub.hi[a] - P.base));
                PYR_TRY(ring_upload(e, slot, ub.lo[a], ub.hi[a], P.base));
            }
        }
        if (older) {
            /* the layer before its first, into the spare at its first call's output mapping: the spare held the
             * layer before piece T - spares' result until that piece's download of it (marked apart from its
             * compute); with two spares that piece is long done, so this goes up beside the rest */
            const int64_t handed = T - plan->spares;
            if (handed >= 0 && marks && (int)(handed % slots) != slot)
                PYR_TRY(ops->after_mark(e->ctx, slot, (int)(handed % slots), PYR_MARK_UPLOAD));
            if (!pyr_box_empty(&ub)) {
                PYR_TRY(view(e, &v, &ub, P.b[1], layer_base(&P, steps[0]), NULL, 0, planes));
                PYR_TRY(ops->upload(e->ctx, slot, &v, f, &e->prev[f], &ub));
                e->count.uploaded += (uint64_t)pyr_box_volume(&ub);
            }
        }
        /* the halo stores (and a single spare) were piece T - 1's (this pass's or the last one's) until its calls
         * ended; its compute followed every earlier piece's, uploads included */
        if (T > 0 && marks) PYR_TRY(ops->after_mark(e->ctx, slot, (int)((T - 1) % slots), PYR_MARK_COMPUTE));
        if (move[1] > move[0]) {
            PYR_TRY(ring_claim(e, slot, move[0] - P.base, move[1] - P.base));
            PYR_TRY(ring_move(e, slot, move[0], move[1], from, P.base));
        }
        for (int j = 0; j < ncalls; j++) {
            only[j] = (unsigned char)last_box_only(&P, j);
            kin[j] = (unsigned char)halo_in_kernel(&P, j);
        }
        /* a measured last call is two kernel calls, writing its middle layers into both buffers (pyr_skew_last_box_only
         * and pyr_skew_halo say no to every call where a layer is read back) */
        if (reduce) only[ncalls - 1] = kin[ncalls - 1] = 0;
        if (reduce) e->partial[t] = 0;
        PYR_TRY(fill_input(&P, slot, 0));
        for (int j = -1; j < ncalls; j++) {
            if (j >= 0) {
                if (!save_beside(&P, lane, j)) PYR_TRY(save_top(&P, slot, j));
                int computes;
                PYR_TRY(kernel_call(&P, j, &call, &v, &hs, &hf, &kc, &computes));
                if (computes) {
                    for (int i = 0; i < kc.nboxes; i++) e->count.computed += (uint64_t)pyr_box_volume(&kc.boxes[i]);
                    if (ring->buf) PYR_TRY(ring_point(&P, &v));
                    PYR_TRY(pyr_exec_prepare_fixed(e, slot, &v));
                    PYR_TRY(run_call(&P, slot, j, &call, &v, &kc, reduce && j == ncalls - 1 ? &e->partial[t] : NULL));
                } else if (older && j > 0) {
                    PYR_TRY(fill_output(&P, slot, j)); /* its save passes whole planes on: faces included */
                    PYR_TRY(save_older_low(&P, slot, j));
                }
                /* call j + 1 computes once the lane's copies before it (call j's save, its fill) are done */
                if (lane >= 0) PYR_TRY(ops->after_mark(e->ctx, slot, lane, PYR_MARK_LANE));
                if (!fill_beside(&P, lane, j)) PYR_TRY(fill_input(&P, slot, j + 1));
            }
            /* call j + 1's save and call j + 2's fill beside call j + 1's kernel, where it writes only its result */
            if (lane >= 0) {
                PYR_TRY(ops->mark(e->ctx, slot, PYR_MARK_CALL));
                PYR_TRY(ops->after_mark(e->ctx, lane, slot, PYR_MARK_CALL));
            }
            if (save_beside(&P, lane, j + 1)) PYR_TRY(save_top(&P, lane, j + 1));
            if (fill_beside(&P, lane, j + 1)) PYR_TRY(fill_input(&P, lane, j + 2));
            if (lane >= 0) PYR_TRY(ops->mark(e->ctx, lane, PYR_MARK_LANE));
        }
        PYR_TRY(face_result(&P, slot));
        if (marks) PYR_TRY(ops->mark(e->ctx, slot, PYR_MARK_COMPUTE));
        if (ring->buf) { /* the ring planes its views span, read until its compute is done */
            ring->prev[0] = ring->busy[slot][0][0] = foot[0] - P.base;
            ring->prev[1] = ring->busy[slot][0][1] = foot[1] - P.base;
            ring->busy[slot][1][0] = move[0] - from; /* empty where it moved nothing */
            ring->busy[slot][1][1] = move[1] - from;
            ring->pending[slot] = 1;
        }
        void *result = P.b[ncalls & 1]; /* the last call's output */
        e->slot_next[slot] = result;
        if (plan->spares == 2) e->spare[0] = e->spare[1];
        e->spare[plan->spares - 1] = P.b[(ncalls & 1) ^ 1];
        const pyr_box_t db = pyr_skew_download(plan, t, h);
        if (!pyr_box_empty(&db)) PYR_TRY(host_order(e, slot, &db));
        if (older) {
            /* the layer before the result, the last call's input, over the same planes: from the spare handed
             * on, first, the writes of the piece it goes to waiting for this mark only (PYR_MARK_UPLOAD, which
             * the ping-pong skewed passes use for nothing else) */
            if (!pyr_box_empty(&db)) {
                PYR_TRY(view(e, &v, &db, P.b[(ncalls & 1) ^ 1], layer_base(&P, sj[ncalls - 1]), NULL, 0, planes)); /* the last call's input mapping */
                PYR_TRY(ops->download(e->ctx, slot, &v, f, &e->prev[f], &db));
                e->count.downloaded += (uint64_t)pyr_box_volume(&db);
            }
            if (marks) PYR_TRY(ops->mark(e->ctx, slot, PYR_MARK_UPLOAD));
        }
        if (!pyr_box_empty(&db)) {
            PYR_TRY(view(e, &v, &db, result, layer_base(&P, h), NULL, 0, planes));
            PYR_TRY(ops->download(e->ctx, slot, &v, f, &e->grid[f], &db));
            e->count.downloaded += (uint64_t)pyr_box_volume(&db);
            e->skew_written[slot] = db;
            e->skew_pending[slot] = 1;
        }
    }
    e->skew_issued += np;
    if (drain)
        for (int q = 0; q < slots; q++) PYR_TRY(wait_slot(e, q));
    if (reduce) {
        /* the pieces' changes in piece order, into every partial the executor combines (execute.c) */
        double m = 0;
        for (int64_t t = 0; t < np && m == m; t++) /* a NaN stays */
            if (!(e->partial[t] <= m)) m = e->partial[t];
        for (int64_t t = 0; t < ntasks; t++) e->partial[t] = m;
    }
    return PYR_OK;
}
