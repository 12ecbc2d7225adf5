/* Sizing: the geometry of a plan for a fixed method, decomposition and
 * height under a device memory budget (split axes, piece counts and extents,
 * the buffers of every field), and the exact counts of the run. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/planner.h"
#include "plan/skewed.h"

/* ------------------------------------------------------------- axis split */

/* The interior of axis a: [fixed low, n - fixed high), the nodes the scheme updates. */
static int64_t interior_of(const pyr_plan_t *plan, int a)
{
    return plan->problem.n[a] - plan->fixed[a][0] - plan->fixed[a][1];
}

static pyr_status_t split_axis(const pyr_plan_t *plan, pyr_axis_split_t *s, int a, int64_t count)
{
    free(s->bounds);
    s->count = count;
    s->bounds = malloc((size_t)(count + 1) * sizeof *s->bounds);
    if (!s->bounds) return pyr_fail(PYR_ERR_NOMEM, "out of host memory planning %lld pieces", (long long)count);
    const int64_t interior = interior_of(plan, a), first = plan->fixed[a][0];
    for (int64_t k = 0; k <= count; k++) s->bounds[k] = first + (int64_t)((__int128)k * interior / count);
    return PYR_OK;
}

/* Largest source extent along axis a cut in `count` pieces, with halos of
 * h steps' reach (clipped to the grid). */
static int64_t max_src_extent(const pyr_plan_t *plan, int a, int64_t count, int64_t h)
{
    const int64_t n = plan->problem.n[a], interior = interior_of(plan, a), first = plan->fixed[a][0];
    const int64_t below = h * plan->reach[a][0], above = h * plan->reach[a][1];
    int64_t best = 0;
    for (int64_t k = 0; k < count; k++) {
        int64_t lo = first + (int64_t)((__int128)k * interior / count);
        int64_t hi = first + (int64_t)((__int128)(k + 1) * interior / count);
        int64_t slo = lo - below > 0 ? lo - below : 0, shi = hi + above < n ? hi + above : n;
        if (shi - slo > best) best = shi - slo;
    }
    return best;
}

/* ------------------------------------------------------------------ sizing */

typedef struct {
    int64_t count[3];
    int64_t ext[3];
    uint64_t bytes;
} sizing_t;

/* State fields (uploaded and downloaded; each keeps its own faces). */
static int state_fields(const pyr_plan_t *plan) { return plan->npp + plan->nfixed - pyr_plan_inputs(plan); }

static uint64_t faces_bytes(const pyr_plan_t *plan, size_t elem)
{
    uint64_t total = 0;
    for (int a = 0; a < plan->problem.dims; a++) {
        if (plan->split[a]) continue;
        for (int side = 0; side < 2; side++) {
            int64_t ext[3] = {plan->problem.n[0], plan->problem.n[1], plan->problem.n[2]};
            ext[a] = plan->fixed[a][side];
            if (ext[a] > 0) total += (uint64_t)state_fields(plan) * pyr_face_layout(ext, elem).layer_bytes;
        }
    }
    return total;
}

/* Device bytes of k pieces in flight with s spare time layers: every
 * ping-pong field in k + s buffers, every other field in one per piece. */
static uint64_t pieces_bytes(const pyr_plan_t *plan, uint64_t layer_bytes, int k, int s)
{
    return ((uint64_t)(k + s) * (uint64_t)plan->npp + (uint64_t)k * (uint64_t)plan->nfixed) * layer_bytes;
}

/* Device memory the kernel variant keeps beside the pieces (kernels.h). */
static uint64_t scratch_of(const pyr_plan_t *plan, uint64_t layer_bytes)
{
    if (!plan->kernel || !plan->kernel->scratch_bytes || (!plan->resident && plan->kernel->scratch_resident_only)) return 0;
    return plan->kernel->scratch_bytes(&plan->variant, layer_bytes);
}

static void size_for_counts(const pyr_plan_t *plan, int64_t h, const int64_t count[3], sizing_t *sz)
{
    size_t elem = pyr_precision_size(plan->problem.precision);
    for (int a = 0; a < 3; a++) {
        sz->count[a] = count[a];
        if (a >= plan->problem.dims) sz->ext[a] = 1;
        else if (plan->split[a]) sz->ext[a] = max_src_extent(plan, a, count[a], h);
        else sz->ext[a] = plan->problem.n[a];
    }
    pyr_piece_layout_t L = pyr_piece_layout(plan->ops, sz->ext, elem);
    sz->bytes = pieces_bytes(plan, L.layer_bytes, plan->slots, plan->spares) + faces_bytes(plan, elem) + scratch_of(plan, L.layer_bytes);
}

/* Counts along split axes for a result side of `side` nodes. */
static void counts_for_side(const pyr_plan_t *plan, int64_t side, int64_t count[3])
{
    for (int a = 0; a < 3; a++) {
        count[a] = 1;
        if (a < plan->problem.dims && plan->split[a]) {
            int64_t interior = interior_of(plan, a);
            int64_t s = side < interior ? side : interior;
            count[a] = (interior + s - 1) / s;
        }
    }
}

/* Largest result side whose pieces fit the budget (0 if even side 1 does not). */
static int64_t largest_side(const pyr_plan_t *plan, int64_t h, uint64_t budget)
{
    int64_t hi = 1;
    for (int a = 0; a < plan->problem.dims; a++)
        if (plan->split[a] && interior_of(plan, a) > hi) hi = interior_of(plan, a);
    int64_t lo = 0;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        int64_t count[3];
        sizing_t sz;
        counts_for_side(plan, mid, count);
        size_for_counts(plan, h, count, &sz);
        if (sz.bytes <= budget) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* counts_for_side gives every split axis the same result side; rounding the
 * counts up can leave pieces well below the budget (1024^3 at 1 GiB, height
 * 40: 4 x 4 x 4 cubes of side 256 where 3 x 3 x 4 pieces fit).  Lower the
 * counts one axis at a time, x first (longer rows copy and compute better),
 * while the pieces still fit: larger pieces mean less redundant work and
 * fewer values moved per step. */
static void relax_counts(const pyr_plan_t *plan, int64_t h, uint64_t budget, int64_t count[3])
{
    int nsplit = 0;
    for (int a = 0; a < plan->problem.dims; a++) nsplit += plan->split[a] ? 1 : 0;
    if (nsplit < 2) return; /* one split axis: largest_side already chose the fewest pieces */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int a = 0; a < plan->problem.dims; a++) {
            if (!plan->split[a] || count[a] <= 1) continue;
            count[a]--;
            sizing_t sz;
            size_for_counts(plan, h, count, &sz);
            if (sz.bytes <= budget) changed = 1;
            else count[a]++;
        }
    }
}

void pyr_format_bytes(uint64_t b, char *out, size_t size)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0) snprintf(out, size, "%llu B", (unsigned long long)b);
    else snprintf(out, size, "%.4g %s", v, unit[u]);
}

static const char *piece_word(pyr_decomp_t d)
{
    switch (d) {
    case PYR_DECOMP_SEGMENTS: return "segment nodes";
    case PYR_DECOMP_STRIPS: return "strip rows";
    case PYR_DECOMP_BLOCKS: return "block side";
    case PYR_DECOMP_SLABS: return "slab planes";
    case PYR_DECOMP_SKEWED: return "skewed planes";
    default: return "nodes";
    }
}

/* Device bytes of a skewed plan with pieces of S planes and calls of at most
 * k steps, for height h (plan/skewed.h): three bundles of S + 3k planes,
 * the halo stores (2k planes each, 4k - 1 with two layers), the inputs' ring, every axis's boundary faces. */
static uint64_t skewed_bytes(pyr_plan_t *plan, int64_t S, int k, int64_t h, pyr_piece_layout_t *L)
{
    const pyr_problem_t *p = &plan->problem;
    const int a = p->dims - 1;
    const size_t elem = pyr_precision_size(p->precision);
    int64_t ext[3] = {p->n[0], p->n[1], p->n[2]};
    plan->skew_size = S;
    plan->skew_k = k;
    ext[a] = pyr_skew_buffer_planes(plan, h);
    *L = pyr_piece_layout(plan->ops, ext, elem);
    ext[a] = pyr_skew_store_planes(plan);
    pyr_piece_layout_t H = pyr_piece_layout(plan->ops, ext, elem);
    return (uint64_t)(plan->slots + plan->spares) * (uint64_t)plan->npp * L->layer_bytes +
           (uint64_t)plan->nfixed * pyr_skew_ring_bytes(plan, h) + (uint64_t)pyr_skew_stores(plan, h) * H.layer_bytes +
           faces_bytes(plan, elem) + scratch_of(plan, L->layer_bytes);
}

static pyr_status_t fit_skewed(pyr_plan_t *plan, int64_t h, uint64_t budget)
{
    const pyr_problem_t *p = &plan->problem;
    char why[256];
    if (!pyr_skew_eligible(plan, why, sizeof why)) return pyr_fail(PYR_ERR_CONFIG, "%s; use another decomposition (or auto)", why);
    const int a = p->dims - 1;
    int k = pyr_plan_launch_steps(plan);
    if (k == 0) k = 3;
    if (k < 1) k = 1;
    if (!(k & 1)) k--;
    if (h < k) k = (int)(h & 1 ? h : h - 1 > 0 ? h - 1 : 1);
    if (h / k + 2 > PYR_SKEW_MAX_CALLS)
        return pyr_fail(PYR_ERR_CONFIG, "height %lld makes more than %d compute calls of %d steps per skewed pass; use a lower height",
                        (long long)h, PYR_SKEW_MAX_CALLS, k);
    const int64_t interior = interior_of(plan, a);
    pyr_piece_layout_t L;
    int64_t S;
    if (plan->options.piece > 0) {
        S = plan->options.piece;
        uint64_t need = skewed_bytes(plan, S, k, h, &L);
        if (need > budget) {
            plan->refused_bytes = need;
            char nb[32], hb[32];
            pyr_format_bytes(need, nb, sizeof nb);
            pyr_format_bytes(budget, hb, sizeof hb);
            return pyr_fail(PYR_ERR_BUDGET, "skewed planes = %lld with height %lld needs %s of device memory, more than the budget of %s; "
                            "use memory >= %s or fewer planes", (long long)S, (long long)h, nb, hb, nb);
        }
    } else {
        int64_t lo = 0, hi = interior > 0 ? interior : 1;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            if (skewed_bytes(plan, mid, k, h, &L) <= budget) lo = mid;
            else hi = mid - 1;
        }
        if (lo < 1) {
            char nb[32], hb[32], ring[64] = "";
            plan->refused_bytes = skewed_bytes(plan, 1, k, h, &L);
            pyr_format_bytes(plan->refused_bytes, nb, sizeof nb);
            pyr_format_bytes(budget, hb, sizeof hb);
            if (plan->nfixed) snprintf(ring, sizeof ring, ", a ring of %lld planes per input", (long long)pyr_skew_ring_planes(plan, h));
            if (pyr_skew_inplace(plan)) /* no buffers nor stores: every field in the ring */
                return pyr_fail(PYR_ERR_BUDGET,
                                "memory budget %s is too small for skewed pieces of height %lld: one plane per piece (a ring of %lld planes "
                                "per field, the boundary faces) needs %s; use memory >= %s, a lower height, or blocks",
                                hb, (long long)h, (long long)pyr_skew_ring_planes(plan, h), nb, nb);
            return pyr_fail(PYR_ERR_BUDGET,
                            "memory budget %s is too small for skewed pieces of height %lld: one plane per piece (%d buffers of "
                            "%lld planes, %d halo stores of %lld planes%s, the boundary faces) needs %s; use memory >= %s or a lower height",
                            hb, (long long)h, plan->slots + plan->spares, (long long)pyr_skew_buffer_planes(plan, h), pyr_skew_stores(plan, h),
                            (long long)pyr_skew_store_planes(plan), ring, nb, nb);
        }
        /* as many pieces as the most planes need, spread evenly */
        const int64_t count = (interior + lo - 1) / lo;
        S = (interior + count - 1) / count;
    }
    plan->device_bytes = skewed_bytes(plan, S, k, h, &L);
    plan->layout = L;
    plan->faces_bytes = faces_bytes(plan, pyr_precision_size(p->precision));
    plan->scratch_bytes = scratch_of(plan, L.layer_bytes);
    /* for reports: the pieces' planes at a pass's first layer */
    for (int b = 0; b < 3; b++) {
        const int64_t c = b == a ? (interior + S - 1) / S : 1;
        free(plan->axis[b].bounds);
        plan->axis[b].count = c;
        plan->axis[b].bounds = malloc((size_t)(c + 1) * sizeof(int64_t));
        if (!plan->axis[b].bounds) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        for (int64_t q = 0; q <= c; q++) {
            if (b != a) plan->axis[b].bounds[q] = q ? (b < p->dims ? p->n[b] : 1) : 0;
            else plan->axis[b].bounds[q] = plan->fixed[a][0] + (q * S < interior ? q * S : interior);
        }
        int64_t e = b < p->dims ? p->n[b] : 1;
        /* in-place state: a piece's view of the ring spans its planes and the h + 1 below them it reads and sweeps */
        const int64_t span = pyr_skew_inplace(plan) ? (S + h + 1 < e ? S + h + 1 : e) : pyr_skew_buffer_planes(plan, h);
        plan->alloc_extent[b] = b == a ? span : e;
    }
    plan->height = h;
    return PYR_OK;
}

/* Fix the split axes, piece counts and allocation for height h. */
static pyr_status_t fit_pieces(pyr_plan_t *plan, int64_t h, uint64_t budget)
{
    const pyr_problem_t *p = &plan->problem;
    int64_t count[3] = {1, 1, 1};
    sizing_t sz;
    if (!plan->resident && plan->decomp == PYR_DECOMP_SKEWED) return fit_skewed(plan, h, budget);
    if (plan->resident) {
        size_for_counts(plan, h, count, &sz);
        for (int a = 0; a < 3; a++) sz.ext[a] = p->n[a];
        pyr_piece_layout_t L = pyr_piece_layout(plan->ops, sz.ext, pyr_precision_size(p->precision));
        sz.bytes = pieces_bytes(plan, L.layer_bytes, 1, 1) + scratch_of(plan, L.layer_bytes);
        if (sz.bytes > budget) {
            char need[32], have[32];
            plan->refused_bytes = sz.bytes;
            pyr_format_bytes(sz.bytes, need, sizeof need);
            pyr_format_bytes(budget, have, sizeof have);
            return pyr_fail(PYR_ERR_BUDGET,
                            "the %s method keeps the whole grid on the device (two time layers%s%s), %s, more than the budget of %s; "
                            "use memory >= %s, or method = pyramid (or auto) to solve it in pieces",
                            pyr_method_name(plan->method), plan->nfixed ? " and its input fields" : "",
                            scratch_of(plan, L.layer_bytes) ? " and the kernel's work vectors" : "", need, have, need);
        }
    } else if (plan->options.piece > 0) {
        /* A requested device extent: result side = extent - 2h. */
        int64_t side = plan->options.piece - 2 * h;
        if (side < 1)
            return pyr_fail(PYR_ERR_BUDGET,
                            "%s = %lld cannot hold a pyramid of height %lld: it needs at least 2*height + 1 = %lld; "
                            "use a larger piece or a lower height",
                            piece_word(plan->decomp), (long long)plan->options.piece, (long long)h, (long long)(2 * h + 1));
        counts_for_side(plan, side, count);
        size_for_counts(plan, h, count, &sz);
        if (sz.bytes > budget) {
            char need[32], have[32];
            plan->refused_bytes = sz.bytes;
            pyr_format_bytes(sz.bytes, need, sizeof need);
            pyr_format_bytes(budget, have, sizeof have);
            return pyr_fail(PYR_ERR_BUDGET, "%s = %lld with height %lld needs %s of device memory, more than the budget of %s; "
                            "use memory >= %s or a smaller piece",
                            piece_word(plan->decomp), (long long)plan->options.piece, (long long)h, need, have, need);
        }
    } else {
        int64_t side = largest_side(plan, h, budget);
        if (side < 1) {
            counts_for_side(plan, 1, count);
            size_for_counts(plan, h, count, &sz);
            plan->refused_bytes = sz.bytes;
            char need[32], have[32], need1[32];
            pyr_format_bytes(sz.bytes, need, sizeof need);
            pyr_format_bytes(budget, have, sizeof have);
            sizing_t sz1;
            size_for_counts(plan, 1, count, &sz1);
            pyr_format_bytes(sz1.bytes, need1, sizeof need1);
            return pyr_fail(PYR_ERR_BUDGET,
                            "memory budget %s is too small for %s of height %lld on the %lld x %lld x %lld %s grid: the smallest piece "
                            "(1 result node plus 2 x %lld halo nodes along each split axis, in %llu buffers of that size: the %s scheme's "
                            "fields for %d piece%s in flight%s) needs %s; "
                            "use memory >= %s, or a lower height (height 1 needs %s)",
                            have, pyr_decomp_name(plan->decomp), (long long)h, (long long)p->n[0], (long long)p->n[1],
                            (long long)p->n[2], pyr_precision_name(p->precision), (long long)h,
                            (unsigned long long)pieces_bytes(plan, 1, plan->slots, plan->spares), plan->scheme->name, plan->slots,
                            plan->slots > 1 ? "s" : "", plan->faces_bytes ? ", resident boundary faces" : "", need, need, need1);
        }
        counts_for_side(plan, side, count);
        relax_counts(plan, h, budget, count);
        size_for_counts(plan, h, count, &sz);
    }
    for (int a = 0; a < 3; a++) {
        int64_t c = a < p->dims ? count[a] : 1;
        if (a < p->dims) PYR_TRY(split_axis(plan, &plan->axis[a], a, c));
        else {
            free(plan->axis[a].bounds);
            plan->axis[a].count = 1;
            plan->axis[a].bounds = malloc(2 * sizeof(int64_t));
            if (!plan->axis[a].bounds) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
            plan->axis[a].bounds[0] = 0;
            plan->axis[a].bounds[1] = 1;
        }
        plan->alloc_extent[a] = plan->resident ? p->n[a] : sz.ext[a];
    }
    size_t elem = pyr_precision_size(p->precision);
    plan->layout = pyr_piece_layout(plan->ops, plan->alloc_extent, elem);
    plan->faces_bytes = faces_bytes(plan, elem);
    plan->scratch_bytes = scratch_of(plan, plan->layout.layer_bytes);
    plan->device_bytes = pieces_bytes(plan, plan->layout.layer_bytes, plan->slots, plan->spares) + plan->faces_bytes + plan->scratch_bytes;
    plan->height = h;
    return PYR_OK;
}

/* Exact counts of the whole run. */
static void predict_counts(pyr_plan_t *plan)
{
    pyr_counters_t total = {0, 0, 0, 0};
    const pyr_problem_t *p = &plan->problem;
    if (plan->resident) {
        pyr_box_t grid = pyr_plan_grid(plan), in = pyr_plan_interior(plan);
        int64_t every = plan->options.snapshot_every;
        int64_t downloads = 1;
        if (every > 0 && p->steps > 0) downloads = (p->steps - 1) / every + 1;
        if (p->steps == 0) downloads = 0;
        /* as the executor moves them: state fields up over the grid and down over the interior, inputs up
         * over the nodes the first sub-step updates, each over its support */
        pyr_task_t whole;
        memset(&whole, 0, sizeof whole);
        whole.result = in;
        const pyr_box_t input = pyr_plan_layer_box(plan, &whole, 1, 1);
        uint64_t up = 0, down = 0;
        for (int f = 0; f < plan->scheme->nfields; f++) {
            if (!((plan->fields >> f) & 1)) continue;
            if (plan->scheme->field[f].role == PYR_FIELD_INPUT) {
                up += pyr_plan_field_volume(plan, f, &input);
            } else {
                up += pyr_plan_field_volume(plan, f, &grid);
                down += pyr_plan_field_volume(plan, f, &in);
            }
        }
        total.uploaded = p->steps > 0 ? up : 0;
        total.downloaded = (uint64_t)downloads * down;
        total.computed = pyr_plan_useful(plan, p->steps);
        plan->predicted = total;
        return;
    }
    /* Passes come in at most a few distinct heights: count each once. */
    int64_t memo_h[8];
    pyr_counters_t memo_c[8];
    int nmemo = 0;
    for (int64_t step = 0; step < p->steps;) {
        int64_t h = pyr_plan_pass_height(plan, step);
        int m = 0;
        while (m < nmemo && memo_h[m] != h) m++;
        if (m == nmemo) {
            if (nmemo == 8) m = 7; /* cannot happen: heights are h, a remainder, snapshot cuts */
            else nmemo++;
            memo_h[m] = h;
            pyr_plan_count_pass(plan, h, &memo_c[m], NULL);
        }
        total.uploaded += memo_c[m].uploaded;
        total.downloaded += memo_c[m].downloaded;
        total.computed += memo_c[m].computed;
        total.redundant += memo_c[m].redundant;
        step += h;
    }
    if (p->steps > 0) {
        /* resident faces travel once per run */
        for (int a = 0; a < p->dims; a++)
            if (!plan->split[a])
                total.uploaded += (uint64_t)(plan->fixed[a][0] + plan->fixed[a][1]) * (uint64_t)(pyr_problem_nodes(p) / p->n[a]) *
                                  (uint64_t)state_fields(plan);
    }
    plan->predicted = total;
}

static void set_split(pyr_plan_t *plan)
{
    for (int a = 0; a < 3; a++) plan->split[a] = 0;
    if (plan->resident) {
        for (int a = 0; a < plan->problem.dims; a++) plan->split[a] = 1;
        return;
    }
    switch (plan->decomp) {
    case PYR_DECOMP_SEGMENTS: plan->split[0] = 1; break;
    case PYR_DECOMP_STRIPS: plan->split[1] = 1; break;
    case PYR_DECOMP_BLOCKS: plan->split[0] = plan->split[1] = 1, plan->split[2] = plan->problem.dims == 3; break;
    case PYR_DECOMP_SLABS: plan->split[2] = 1; break;
    default: break; /* skewed: no axis carries halos; every boundary face stays on the device */
    }
    /* a periodic axis is never cut: a piece spans it whole and wraps within itself */
    for (int a = 0; a < 3; a++)
        if ((plan->coef.periodic >> a) & 1) plan->split[a] = 0;
}

/* A decomposition that cuts only periodic axes has no pieces: refused, naming one that cuts another axis. */
static pyr_status_t check_periodic_split(const pyr_plan_t *plan)
{
    const pyr_problem_t *p = &plan->problem;
    if (plan->resident || !plan->coef.periodic || plan->decomp == PYR_DECOMP_SKEWED) return PYR_OK;
    for (int a = 0; a < p->dims; a++)
        if (plan->split[a]) return PYR_OK;
    const int all = plan->coef.periodic == (1u << p->dims) - 1;
    return pyr_fail(PYR_ERR_CONFIG,
                    "decomposition = %s cuts only the periodic axes of this grid, which are never cut (a piece spans a periodic axis "
                    "whole, as its ends join); use %s",
                    pyr_decomp_name(plan->decomp),
                    all ? "method = naive (every axis is periodic)" : "decomposition = blocks (it cuts the axes that are not periodic) or auto");
}

/* Pieces in flight when nothing else decides: the user's run.slots, else the backend's default. */
int pyr_plan_requested_slots(const pyr_plan_t *plan)
{
    return plan->options.slots ? plan->options.slots : plan->ops->default_slots;
}

pyr_status_t pyr_plan_check_decomp(const pyr_problem_t *p, pyr_decomp_t d)
{
    if (pyr_decomp_fits(d, p->dims)) return PYR_OK;
    const char *fit = p->dims == 1 ? "segments" : p->dims == 2 ? "strips or blocks" : "slabs or blocks";
    return pyr_fail(PYR_ERR_CONFIG, "decomposition = %s does not apply to a %dD grid; use %s (or auto)", pyr_decomp_name(d), p->dims,
                    fit);
}

/* Build the geometry of a plan for a fixed method, decomposition and height. */
pyr_status_t pyr_plan_build(pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t h, uint64_t budget)
{
    plan->method = method;
    plan->decomp = decomp;
    plan->resident = method == PYR_METHOD_NAIVE || method == PYR_METHOD_LONGVECTOR; /* longvector: naive's resident piece */
    plan->slots = plan->resident ? 1 : plan->try_slots;
    /* Two spares with several slots in 1D and 2D: a task then computes into
     * the buffer freed two tasks back, so its kernels may start while the
     * previous task's last ones finish, which measured faster.  In 3D the
     * larger pieces of one spare weigh more: volume over surface, and cubes
     * ran faster with one (docs/architecture.md#inside-the-executor).  A
     * plan that carries a layer back keeps two in 3D too: the spare then
     * holds the previous task's older layer until its download, and with one
     * every task's sweeps would wait for the previous task's downloads.
     * Skewed pieces keep one, but for the same reason two where a layer is
     * carried back (exec/skewed.c). */
    plan->spares = plan->slots >= 2 && (plan->problem.dims < 3 || plan->previous) && (decomp != PYR_DECOMP_SKEWED || plan->previous) ? 2 : 1;
    set_split(plan);
    PYR_TRY(check_periodic_split(plan));
    plan->faces_bytes = 0;
    plan->refused_bytes = 0;
    PYR_TRY(fit_pieces(plan, h, budget));
    predict_counts(plan);
    return PYR_OK;
}
