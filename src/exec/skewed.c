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
 * the piece's planes stay at [G, G + S) of whichever bundle holds them. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "exec/exec_internal.h"
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
    memset(v, 0, sizeof *v);
    v->box = *box;
    v->pitch = plan->layout.pitch;
    v->xpad = pyr_piece_xpad(e->ops, box->lo[0], e->elem);
    v->nfields = e->nf;
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

static pyr_status_t alloc_halo(exec_t *e)
{
    pyr_plan_t *plan = e->plan;
    const pyr_problem_t *p = &plan->problem;
    int64_t ext[3] = {p->n[0], p->n[1], p->n[2]};
    ext[pyr_skew_axis(plan)] = 2 * (int64_t)plan->skew_k;
    const pyr_piece_layout_t H = pyr_piece_layout(e->ops, ext, e->elem);
    if (H.pitch != plan->layout.pitch) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: halo stores and buffers differ in pitch");
    const int n = pyr_skew_stores(plan, plan->height);
    e->halo = calloc((size_t)n, sizeof *e->halo);
    if (!e->halo) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    e->nhalo = n;
    for (int j = 0; j < n; j++) PYR_TRY(e->ops->dev_alloc(e->ctx, H.layer_bytes, &e->halo[j]));
    return PYR_OK;
}

void pyr_exec_skewed_release(exec_t *e)
{
    if (!e->halo) return;
    for (int j = 0; j < e->nhalo; j++)
        if (e->halo[j]) e->ops->dev_free(e->ctx, e->halo[j]);
    free(e->halo);
    e->halo = NULL;
    e->nhalo = 0;
}

pyr_status_t pyr_exec_skewed_pass(exec_t *e, int64_t step, int64_t h)
{
    pyr_plan_t *plan = e->plan;
    const pyr_device_ops_t *ops = e->ops;
    const int f = state_field(e), slots = plan->slots;
    if (f < 0 || plan->spares != 1 || slots < 1) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: a plan it cannot run");
    if (!e->halo) PYR_TRY(alloc_halo(e));
    int steps[PYR_SKEW_MAX_CALLS];
    const int ncalls = pyr_skew_calls(plan, h, steps, PYR_SKEW_MAX_CALLS);
    if (ncalls > e->nhalo) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: %d calls, %d halo stores", ncalls, e->nhalo);
    const int64_t G = 2 * (int64_t)plan->skew_k, planes = pyr_skew_buffer_planes(plan), store = G;
    const int64_t np = pyr_skew_pieces(plan, h);
    const pyr_grid_dims_t grid = {{plan->problem.n[0], plan->problem.n[1], plan->problem.n[2]}};
    const int marks = slots > 1 && ops->mark && ops->after_mark;
    /* A call's save runs on a lane where the runtime has one, beside the call's kernel: after the call's
     * fill (the planes it reads were written by the call before, and the halo store it writes was read by
     * the fill), before the next call's copies (which write faces into the buffer it reads, as the next
     * kernel writes its planes).  The piece's compute ends with its last save. */
    const int lane = ops->lanes > 0 && ops->mark && ops->after_mark ? ops->slots : -1;
    const pyr_box_t interior = pyr_plan_interior(plan);
    for (int64_t t = 0; t < np; t++) {
        const int slot = (int)(t % slots);
        if (t >= slots) PYR_TRY(ops->wait(e->ctx, slot));
        void *in = e->slot_next[slot], *out = e->spare[0];
        pyr_skew_call_t call;
        pyr_skew_call(plan, t, 0, steps[0], &call);
        const int64_t A = call.a;
        pyr_piece_t v, hf, hs;
        const pyr_box_t ub = pyr_skew_upload(plan, t);
        if (!pyr_box_empty(&ub)) {
            PYR_TRY(view(e, &v, &ub, in, A - G, NULL, 0, planes));
            PYR_TRY(ops->upload(e->ctx, slot, &v, f, &e->grid[f], &ub));
            e->count.uploaded += (uint64_t)pyr_box_volume(&ub);
        }
        /* the spare and the halo stores were piece t - 1's until its calls ended */
        if (t > 0 && marks) PYR_TRY(ops->after_mark(e->ctx, slot, (int)((t - 1) % slots), PYR_MARK_COMPUTE));
        int64_t s = 0;
        int saving = 0; /* a save on the lane not yet waited for */
        for (int j = 0; j < ncalls; j++) {
            const int c = steps[j];
            pyr_skew_call(plan, t, s, c, &call);
            PYR_TRY(view(e, &v, &call.window, in, A - s - G, out, A - s - c - G, planes));
            /* The window's low planes from the previous piece (their interior: the resident faces cover the
             * rest, skewed plans keeping every boundary face on the device), with those faces into both
             * layers when the call computes, as one operation where the backend has one; then the window's
             * top planes for the next piece, into the same halo store the low planes came from. */
            pyr_copy_op_t cops[PYR_COPY_MANY_MAX];
            int nc = 0;
            const int computes = !pyr_box_empty(&call.result);
            const pyr_box_t fill = computes ? pyr_box_intersect(&call.fill, &interior) : call.fill;
            if (!pyr_box_empty(&fill)) {
                PYR_TRY(view(e, &hf, &call.fill, e->halo[j], call.win_lo, NULL, 0, store)); /* whole planes: the store's layout */
                cops[nc++] = (pyr_copy_op_t){.dst = &v, .dst_layers = 1, .src = &hf, .src_layer = 0, .box = fill};
            }
            if (computes) {
                nc = pyr_exec_face_copies(e, &v, cops, nc, PYR_COPY_MANY_MAX);
                if (nc < 0) return pyr_fail(PYR_ERR_INTERNAL, "skewed executor: more than %d copies in a call", PYR_COPY_MANY_MAX);
            }
            if (saving) { /* the call's copies and kernel write the buffer the last save reads */
                PYR_TRY(ops->after_mark(e->ctx, slot, lane, PYR_MARK_SAVED));
                saving = 0;
            }
            PYR_TRY(pyr_exec_copies(e, slot, f, cops, nc));
            if (!pyr_box_empty(&call.save) && t + 1 < np) {
                PYR_TRY(view(e, &hs, &call.save, e->halo[j], call.b - s - 2 * c, NULL, 0, store));
                if (lane >= 0) {
                    PYR_TRY(ops->mark(e->ctx, slot, PYR_MARK_FILLED));
                    PYR_TRY(ops->after_mark(e->ctx, lane, slot, PYR_MARK_FILLED));
                    PYR_TRY(ops->copy(e->ctx, lane, &hs, f, 1, &v, 0, &call.save));
                    PYR_TRY(ops->mark(e->ctx, lane, PYR_MARK_SAVED));
                    saving = 1;
                } else {
                    PYR_TRY(ops->copy(e->ctx, slot, &hs, f, 1, &v, 0, &call.save));
                }
            }
            if (computes) {
                PYR_TRY(pyr_exec_prepare_fixed(e, slot, &v));
                for (int i = 1; i <= c; i++) {
                    e->layer_boxes[i - 1] = pyr_skew_layer_box(plan, &call, i);
                    e->count.computed += (uint64_t)pyr_box_volume(&e->layer_boxes[i - 1]);
                }
                pyr_kernel_call_t kc = {.piece = &v,
                                        .coef = &plan->coef,
                                        .boxes = e->layer_boxes,
                                        .nboxes = c,
                                        .variant = &plan->variant,
                                        .step = step + s,
                                        .grid = &grid};
                PYR_TRY(plan->kernel->run(e->ctx, slot, &kc));
            }
            void *swap = in;
            in = out;
            out = swap;
            s += c;
        }
        if (saving) PYR_TRY(ops->after_mark(e->ctx, slot, lane, PYR_MARK_SAVED));
        if (marks) PYR_TRY(ops->mark(e->ctx, slot, PYR_MARK_COMPUTE));
        e->slot_next[slot] = in;
        e->spare[0] = out;
        const pyr_box_t db = pyr_skew_download(plan, t, h);
        if (!pyr_box_empty(&db)) {
            PYR_TRY(view(e, &v, &db, in, A - h - G, NULL, 0, planes));
            PYR_TRY(ops->download(e->ctx, slot, &v, f, &e->grid[f], &db));
            e->count.downloaded += (uint64_t)pyr_box_volume(&db);
        }
    }
    for (int q = 0; q < slots; q++) PYR_TRY(ops->wait(e->ctx, q));
    return PYR_OK;
}
