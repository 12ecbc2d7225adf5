/* Geometry of the skewed decomposition (plan/skewed.h). */
#include "plan/skewed.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/kernels.h"
#include "schemes/scheme.h"

/* The read-only inputs (role INPUT) this problem uses: each read only at
 * the updated node, so a piece streams the planes of its calls' windows. */
static int inputs_used(const pyr_plan_t *plan)
{
    int n = 0;
    for (int f = 0; f < plan->scheme->nfields; f++)
        if (((plan->fields >> f) & 1) && plan->scheme->field[f].role == PYR_FIELD_INPUT) n++;
    return n;
}

int pyr_skew_inplace(const pyr_plan_t *plan)
{
    if (plan->npp != 0) return 0;
    for (int f = 0; f < plan->scheme->nfields; f++)
        if (((plan->fields >> f) & 1) && plan->scheme->field[f].role == PYR_FIELD_INPLACE) return 1;
    return 0;
}

int pyr_skew_in_ring(const pyr_plan_t *plan, int f)
{
    if (!((plan->fields >> f) & 1)) return 0;
    const pyr_field_role_t r = plan->scheme->field[f].role;
    return r == PYR_FIELD_INPUT || (pyr_skew_inplace(plan) && (r == PYR_FIELD_INPLACE || r == PYR_FIELD_AUX));
}

/* Why in-place state cannot be swept skewed here (NULL: it can): plan/skewed.h's order holds for a step of
 * two sub-steps along the axis, the first reading only its own plane and the one above, the second only its
 * own and the one below, with no plane fixed at the axis's ends and no wrap across them. */
static const char *inplace_refusal(const pyr_plan_t *plan)
{
    const pyr_scheme_t *s = plan->scheme;
    const int a = pyr_skew_axis(plan);
    if (s->nsub != 2 || s->sub[0].reach_lo[a] != 0 || s->sub[0].reach_hi[a] > 1 || s->sub[1].reach_lo[a] > 1 || s->sub[1].reach_hi[a] != 0)
        return "it sweeps in-place state in two sub-steps, the first reading one plane ahead, the second one behind (blocks or slabs "
               "take this scheme)";
    if (plan->coef.periodic == (1u << plan->problem.dims) - 1u) return "every axis is periodic here; use method = naive";
    if ((plan->coef.periodic >> a) & 1)
        return "its pieces follow the last axis, which is periodic here; use decomposition = blocks (it cuts the other axes), or make "
               "another axis the periodic one";
    if (plan->fixed[a][0] || plan->fixed[a][1])
        return "its in-place sweep updates every plane of the last axis, and this problem fixes some; use blocks or slabs";
    if (s->reduction != PYR_REDUCE_NONE) return "its in-place sweep measures no change; use blocks or slabs";
    if (plan->previous) return "its in-place sweep carries one layer of the state; use blocks or slabs";
    return NULL;
}

int pyr_skew_eligible(const pyr_plan_t *plan, char *why, size_t n)
{
    const pyr_problem_t *p = &plan->problem;
    const int a = p->dims - 1;
    const char *no = NULL;
    if (p->dims < 2) no = "it applies to 2D and 3D grids";
    else if (pyr_skew_inplace(plan)) no = inplace_refusal(plan);
    else if (plan->npp != 1) no = "it moves one ping-pong field, and this scheme has several";
    else if (plan->nfixed != inputs_used(plan))
        no = "it streams read-only inputs beside its one ping-pong field, and this scheme keeps other state in place";
    else if (plan->scheme->nsub != 1) no = "it takes schemes of one sub-step per step";
    else if (plan->reach[a][0] > 1 || plan->reach[a][1] > 1) no = "it leans one node per step, and this scheme reaches further";
    else if (plan->scheme->reduction != PYR_REDUCE_NONE && plan->scheme->reduction != PYR_REDUCE_MAX_CHANGE)
        no = "it measures only the largest change of a sweep";
    if (no && why) snprintf(why, n, "decomposition = skewed does not fit the %s scheme here: %s", plan->scheme->name, no);
    return no == NULL;
}

int pyr_skew_calls(const pyr_plan_t *plan, int64_t h, int *steps, int max)
{
    const int k = plan->skew_k > 0 ? plan->skew_k : 1;
    int n = 0;
    for (int64_t left = h; left > 0 && n < max;) {
        int c = left < k ? (int)left : k;
        if (!(c & 1)) c--; /* odd: the result in the other buffer; an even rest leaves a last call of one step */
        steps[n++] = c;
        left -= c;
    }
    return n;
}

static void axis_range(const pyr_plan_t *plan, int64_t *lo, int64_t *hi)
{
    const int a = pyr_skew_axis(plan);
    *lo = plan->fixed[a][0];
    *hi = plan->problem.n[a] - plan->fixed[a][1];
}

int64_t pyr_skew_pieces(const pyr_plan_t *plan, int64_t h)
{
    int64_t lo, hi;
    axis_range(plan, &lo, &hi);
    const int64_t S = plan->skew_size > 0 ? plan->skew_size : 1;
    return (hi - lo + h + S - 1) / S;
}

/* Whole planes [lo, hi) along the axis, clipped to [clo, chi). */
static pyr_box_t planes(const pyr_plan_t *plan, int64_t lo, int64_t hi, int64_t clo, int64_t chi)
{
    const int a = pyr_skew_axis(plan);
    pyr_box_t b = pyr_plan_grid(plan);
    b.lo[a] = lo > clo ? lo : clo;
    b.hi[a] = hi < chi ? hi : chi;
    if (b.hi[a] < b.lo[a]) b.hi[a] = b.lo[a];
    return b;
}

void pyr_skew_call(const pyr_plan_t *plan, int64_t p, int64_t s, int c, pyr_skew_call_t *call)
{
    const int a = pyr_skew_axis(plan);
    const int64_t n = plan->problem.n[a];
    int64_t lo, hi;
    axis_range(plan, &lo, &hi);
    memset(call, 0, sizeof *call);
    call->a = lo + p * plan->skew_size;
    call->b = call->a + plan->skew_size;
    call->s = s;
    call->c = c;
    call->win_lo = call->a - s - 2 * c;
    call->window = planes(plan, call->win_lo, call->b - s, 0, n);
    call->fill = p > 0 ? planes(plan, call->win_lo, call->a - s, 0, n) : planes(plan, 0, 0, 0, n);
    call->save = planes(plan, call->b - s - 2 * c, call->b - s, 0, n);
    pyr_box_t r = planes(plan, call->a - s - c, call->b - s - c, lo, hi);
    pyr_box_t in = pyr_plan_interior(plan);
    call->result = pyr_box_intersect(&r, &in);
}

pyr_box_t pyr_skew_layer_box(const pyr_plan_t *plan, const pyr_skew_call_t *call, int i)
{
    int64_t lo, hi;
    axis_range(plan, &lo, &hi);
    pyr_box_t b = planes(plan, call->win_lo + i, call->b - call->s - i, lo, hi);
    pyr_box_t in = pyr_plan_interior(plan);
    return pyr_box_intersect(&b, &in);
}

pyr_box_t pyr_skew_upload(const pyr_plan_t *plan, int64_t p)
{
    int64_t lo, hi;
    axis_range(plan, &lo, &hi);
    const int64_t A = lo + p * plan->skew_size;
    return planes(plan, A, A + plan->skew_size, lo, hi);
}

pyr_box_t pyr_skew_download(const pyr_plan_t *plan, int64_t p, int64_t h)
{
    int64_t lo, hi;
    axis_range(plan, &lo, &hi);
    const int64_t A = lo + p * plan->skew_size - h;
    return planes(plan, A, A + plan->skew_size, lo, hi);
}

int64_t pyr_skew_buffer_planes(const pyr_plan_t *plan, int64_t h)
{
    (void)h; /* a layer read back is read where the call before left it (exec/skewed.c run_call): no plane more */
    return plan->skew_size + 3 * (int64_t)plan->skew_k;
}

int64_t pyr_skew_store_planes(const pyr_plan_t *plan)
{
    /* the layer before over 2k - 1 planes: a call reads it over its first sub-step's box, from its window's
     * lowest plane but one, and below its piece's own planes that is the previous piece's (exec/skewed.c
     * older_part) */
    return (plan->previous ? 4 * (int64_t)plan->skew_k - 1 : 2 * (int64_t)plan->skew_k);
}

int pyr_skew_stores(const pyr_plan_t *plan, int64_t h)
{
    if (pyr_skew_inplace(plan)) return 0; /* the ring hands every plane over */
    int most = 0, steps[PYR_SKEW_MAX_CALLS];
    /* a pass's calls: k steps each, then an odd rest (and one step after an even one) */
    for (int64_t g = h; g >= 1 && g > h - 2 * plan->skew_k - 2; g--) {
        int c = pyr_skew_calls(plan, g, steps, PYR_SKEW_MAX_CALLS);
        if (c > most) most = c;
    }
    return most + 1; /* the ring: pyr_skew_store_read */
}

int64_t pyr_skew_plane_elems(const pyr_plan_t *plan)
{
    return plan->problem.dims == 3 ? plan->layout.pitch * plan->problem.n[1] : plan->layout.pitch;
}

pyr_box_t pyr_skew_inplace_box(const pyr_plan_t *plan, int64_t t, int64_t s, int k)
{
    const pyr_problem_t *p = &plan->problem;
    const int a = pyr_skew_axis(plan);
    int64_t lo, hi;
    axis_range(plan, &lo, &hi);
    const int64_t A = lo + t * plan->skew_size;
    pyr_box_t b = planes(plan, A - s, A + plan->skew_size - s, lo, hi);
    for (int d = 0; d < p->dims; d++) { /* the nodes sub-step k updates */
        const int64_t m0 = pyr_scheme_margin(plan->scheme, p, k, d, 0), m1 = p->n[d] - pyr_scheme_margin(plan->scheme, p, k, d, 1);
        if (b.lo[d] < m0) b.lo[d] = m0;
        if (b.hi[d] > m1) b.hi[d] = m1;
        if (b.hi[d] < b.lo[d]) b.hi[d] = b.lo[d];
    }
    (void)a;
    return b;
}

void pyr_skew_input_planes(const pyr_plan_t *plan, int64_t t, int64_t h, int64_t foot[2], int64_t need[2])
{
    const int a = pyr_skew_axis(plan);
    if (pyr_skew_inplace(plan)) {
        /* step s updates [A - s, B - s) and reads one plane either side: [A - h - 1, B) over the pass, of which
         * the planes below A the pieces before left there */
        int64_t lo, hi;
        axis_range(plan, &lo, &hi);
        const int64_t n = plan->problem.n[a], A = lo + t * plan->skew_size, B = A + plan->skew_size;
        foot[0] = need[0] = A - h - 1 > 0 ? A - h - 1 : 0;
        foot[1] = B < n ? B : n;
        need[1] = A < n ? A : n;
        if (foot[0] >= foot[1]) foot[0] = foot[1] = need[0] = need[1] = 0;
        if (need[1] < need[0]) need[1] = need[0];
        return;
    }
    int steps[PYR_SKEW_MAX_CALLS];
    const int ncalls = pyr_skew_calls(plan, h, steps, PYR_SKEW_MAX_CALLS);
    foot[0] = need[0] = INT64_MAX;
    foot[1] = need[1] = INT64_MIN;
    int64_t s = 0;
    for (int j = 0; j < ncalls; s += steps[j], j++) {
        pyr_skew_call_t call;
        pyr_skew_call(plan, t, s, steps[j], &call);
        if (pyr_box_empty(&call.window)) continue;
        if (call.window.lo[a] < foot[0]) foot[0] = call.window.lo[a];
        if (call.window.hi[a] > foot[1]) foot[1] = call.window.hi[a];
        const pyr_box_t first = pyr_skew_layer_box(plan, &call, 1);
        if (pyr_box_empty(&call.result) || pyr_box_empty(&first)) continue;
        if (first.lo[a] < need[0]) need[0] = first.lo[a];
        if (first.hi[a] > need[1]) need[1] = first.hi[a];
    }
    if (foot[0] >= foot[1]) foot[0] = foot[1] = 0;
    if (need[0] >= need[1]) need[0] = need[1] = foot[0];
}

int64_t pyr_skew_ring_planes(const pyr_plan_t *plan, int64_t h)
{
    const int64_t S = plan->skew_size > 0 ? plan->skew_size : 1, k = plan->skew_k > 0 ? plan->skew_k : 1;
    const int64_t m = plan->slots > 2 ? plan->slots : 2, n = plan->problem.n[pyr_skew_axis(plan)];
    /* in place: a piece spans S + h + 1 planes (no calls' windows), and a new mapping clears the m - 1 pieces in flight */
    const int64_t r = pyr_skew_inplace(plan) ? (m + 1) * S + 2 * (h + 1) : (m + 1) * S + 2 * (h + k);
    return r < 2 * n ? r : 2 * n;
}

uint64_t pyr_skew_ring_bytes(const pyr_plan_t *plan, int64_t h)
{
    const pyr_problem_t *p = &plan->problem;
    int64_t ext[3] = {p->n[0], p->n[1], p->n[2]};
    ext[pyr_skew_axis(plan)] = pyr_skew_ring_planes(plan, h);
    return pyr_piece_layout(plan->ops, ext, pyr_precision_size(p->precision)).layer_bytes;
}

int64_t pyr_skew_ring_next(const pyr_plan_t *plan, int64_t t, int64_t h, int64_t R, int64_t *base)
{
    int64_t foot[2], need[2], lo, hi;
    pyr_skew_input_planes(plan, t, h, foot, need);
    if (t > 0 && foot[0] - *base >= 0 && foot[1] - *base <= R) return 0;
    *base = foot[0];
    if (t == 0) return 0;
    axis_range(plan, &lo, &hi);
    const int64_t A = lo + t * plan->skew_size, top = need[1] < A ? need[1] : A;
    return top > need[0] ? top - need[0] : 0;
}

void pyr_skew_count_pass(const pyr_plan_t *plan, int64_t h, pyr_counters_t *sum, pyr_counters_t *task_max)
{
    memset(sum, 0, sizeof *sum);
    if (task_max) memset(task_max, 0, sizeof *task_max);
    int steps[PYR_SKEW_MAX_CALLS];
    const int ncalls = pyr_skew_calls(plan, h, steps, PYR_SKEW_MAX_CALLS);
    const int64_t np = pyr_skew_pieces(plan, h);
    for (int64_t p = 0; p < np; p++) {
        pyr_box_t u = pyr_skew_upload(plan, p), d = pyr_skew_download(plan, p, h);
        uint64_t up = (uint64_t)pyr_box_volume(&u), down = (uint64_t)pyr_box_volume(&d), comp = 0;
        if (pyr_skew_inplace(plan)) { /* every field's planes up once (each over its support), the state's down once */
            up = down = 0;
            for (int f = 0; f < plan->scheme->nfields; f++) {
                if (!pyr_skew_in_ring(plan, f)) continue;
                up += pyr_plan_field_volume(plan, f, &u);
                if (plan->scheme->field[f].role != PYR_FIELD_INPUT) down += pyr_plan_field_volume(plan, f, &d);
            }
            for (int64_t s = 1; s <= h; s++)
                for (int k = 0; k < plan->scheme->nsub; k++) {
                    const pyr_box_t b = pyr_skew_inplace_box(plan, p, s, k);
                    comp += (uint64_t)pyr_box_volume(&b);
                }
            pyr_plan_count_task(sum, task_max, up, down, comp);
            continue;
        }
        if (plan->previous) up *= 2, down *= 2; /* the layer before the state's beside it, up and down */
        for (int f = 0; f < plan->scheme->nfields; f++) /* the inputs' own planes, beside the state's */
            if (((plan->fields >> f) & 1) && plan->scheme->field[f].role == PYR_FIELD_INPUT) up += pyr_plan_field_volume(plan, f, &u);
        int64_t s = 0;
        for (int j = 0; j < ncalls; j++) {
            pyr_skew_call_t call;
            pyr_skew_call(plan, p, s, steps[j], &call);
            if (!pyr_box_empty(&call.result))
                for (int i = 1; i <= steps[j]; i++) {
                    pyr_box_t b = pyr_skew_layer_box(plan, &call, i);
                    comp += (uint64_t)pyr_box_volume(&b);
                }
            s += steps[j];
        }
        pyr_plan_count_task(sum, task_max, up, down, comp);
    }
    sum->redundant = sum->computed - pyr_plan_useful(plan, h);
}

/* The kernel call of a computing call, its layer boxes in `boxes` (at most 64), for the kernel's questions
 * (last_box_only, saves); 0 where it has more layers than that. */
static int question_call(const pyr_plan_t *plan, const pyr_skew_call_t *call, const pyr_piece_t *v, int64_t step,
                         const pyr_grid_dims_t *grid, pyr_box_t boxes[64], pyr_kernel_call_t *kc)
{
    if (call->c < 1 || call->c > 64) return 0;
    for (int i = 1; i <= call->c; i++) boxes[i - 1] = pyr_skew_layer_box(plan, call, i);
    *kc = (pyr_kernel_call_t){.piece = v, .coef = &plan->coef, .boxes = boxes, .nboxes = call->c, .variant = &plan->variant,
                              .step = step, .grid = grid};
    return 1;
}

int pyr_skew_last_box_only(const pyr_plan_t *plan, void *ctx, const pyr_skew_call_t *call, const pyr_piece_t *v, int64_t step,
                           const pyr_grid_dims_t *grid)
{
    /* a layer read back: the middle layers are the older ones of the layers after, in the buffers, and
     * every call's copies stay on its slot in order (the older layer's fill writes the buffer a call reads) */
    if (plan->previous) return 0;
    if (pyr_box_empty(&call->result)) return 1;
    const pyr_kernel_t *k = plan->kernel;
    pyr_box_t boxes[64];
    pyr_kernel_call_t kc;
    if (!k || !k->last_box_only || !question_call(plan, call, v, step, grid, boxes, &kc)) return 0;
    return k->last_box_only(ctx, &kc);
}

pyr_box_t pyr_skew_kernel_save(const pyr_skew_call_t *call)
{
    if (pyr_box_empty(&call->result)) return (pyr_box_t){{0, 0, 0}, {0, 0, 0}};
    return call->save;
}

pyr_box_t pyr_skew_kernel_fill(const pyr_plan_t *plan, const pyr_skew_call_t *call)
{
    pyr_box_t b = call->fill;
    if (pyr_box_empty(&call->result) || pyr_box_empty(&b)) return (pyr_box_t){{0, 0, 0}, {0, 0, 0}};
    const int a = pyr_skew_axis(plan);
    const pyr_box_t in = pyr_plan_interior(plan);
    if (b.lo[a] < in.lo[a]) b.lo[a] = in.lo[a];
    if (b.hi[a] > in.hi[a]) b.hi[a] = in.hi[a];
    return pyr_box_empty(&b) ? (pyr_box_t){{0, 0, 0}, {0, 0, 0}} : b;
}

int pyr_skew_halo(const pyr_plan_t *plan, void *ctx, const pyr_skew_call_t *call, const pyr_piece_t *v, const pyr_piece_t *st,
                  const pyr_piece_t *fs, int64_t step, const pyr_grid_dims_t *grid)
{
    const pyr_kernel_t *k = plan->kernel;
    const pyr_box_t save = st ? pyr_skew_kernel_save(call) : (pyr_box_t){{0, 0, 0}, {0, 0, 0}};
    const pyr_box_t fill = fs ? pyr_skew_kernel_fill(plan, call) : (pyr_box_t){{0, 0, 0}, {0, 0, 0}};
    pyr_box_t boxes[64];
    pyr_kernel_call_t kc;
    if (plan->previous) return 0; /* the stores carry two layers, by copies */
    if (!k || !k->halo || (pyr_box_empty(&save) && pyr_box_empty(&fill)) || !question_call(plan, call, v, step, grid, boxes, &kc)) return 0;
    if (!pyr_box_empty(&save)) {
        kc.save_to = st;
        kc.save = save;
    }
    if (!pyr_box_empty(&fill)) {
        kc.fill_from = fs;
        kc.fill = fill;
    }
    return k->halo(ctx, &kc);
}

void pyr_skew_view_shape(const pyr_plan_t *plan, const pyr_box_t *box, pyr_piece_t *v)
{
    memset(v, 0, sizeof *v);
    v->box = *box;
    v->pitch = plan->layout.pitch;
    v->nfields = plan->scheme ? plan->scheme->nfields : 1;
}
