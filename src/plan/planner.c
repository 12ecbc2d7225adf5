/* The planner: chooses method, decomposition, pyramid height and piece sizes
 * under a device memory budget, and predicts the exact counts of the run. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "plan/calibrate.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/wisdom.h"

static const char *const axis_letter = "xyz";

/* ----------------------------------------------------------------- layout */

int64_t pyr_piece_xpad(const pyr_device_ops_t *ops, int64_t lo_x, size_t elem)
{
    int64_t a = ops->xpad_align_bytes / (int64_t)elem;
    if (a <= 1) return 0;
    /* column(x) = xpad + x - lo_x is a multiple of a when x = 1 (mod a). */
    int64_t xpad = (lo_x - 1) % a;
    return xpad < 0 ? xpad + a : xpad;
}

pyr_piece_layout_t pyr_piece_layout(const pyr_device_ops_t *ops, const int64_t ext[3], size_t elem)
{
    pyr_piece_layout_t L;
    int64_t a = ops->xpad_align_bytes / (int64_t)elem;
    int64_t pa = ops->pitch_align_bytes / (int64_t)elem;
    int64_t row = ext[0] + (a > 1 ? a - 1 : 0);
    if (pa > 1) row = (row + pa - 1) / pa * pa;
    if (ops->pitch_skew_bytes > 0 && ext[1] > 1 && (row * (int64_t)elem) % 2048 == 0) row += ops->pitch_skew_bytes / (int64_t)elem;
    L.pitch = row;
    L.xpad = 0;
    L.layer_bytes = (uint64_t)row * (uint64_t)ext[1] * (uint64_t)ext[2] * elem;
    return L;
}

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
            if (ext[a] > 0) total += (uint64_t)state_fields(plan) * pyr_piece_layout(plan->ops, ext, elem).layer_bytes;
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
    sz->bytes = pieces_bytes(plan, L.layer_bytes, plan->slots, plan->spares) + faces_bytes(plan, elem);
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
    default: return "nodes";
    }
}

/* Fix the split axes, piece counts and allocation for height h. */
static pyr_status_t fit_pieces(pyr_plan_t *plan, int64_t h, uint64_t budget)
{
    const pyr_problem_t *p = &plan->problem;
    int64_t count[3] = {1, 1, 1};
    sizing_t sz;
    if (plan->resident) {
        size_for_counts(plan, h, count, &sz);
        for (int a = 0; a < 3; a++) sz.ext[a] = p->n[a];
        pyr_piece_layout_t L = pyr_piece_layout(plan->ops, sz.ext, pyr_precision_size(p->precision));
        sz.bytes = pieces_bytes(plan, L.layer_bytes, 1, 1);
        if (sz.bytes > budget) {
            char need[32], have[32];
            pyr_format_bytes(sz.bytes, need, sizeof need);
            pyr_format_bytes(budget, have, sizeof have);
            return pyr_fail(PYR_ERR_BUDGET,
                            "the naive method keeps the whole grid on the device (two time layers%s), %s, more than the budget of %s; "
                            "use memory >= %s, or method = pyramid (or auto) to solve it in pieces",
                            plan->nfixed ? " and its input fields" : "", need, have, need);
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
            char need[32], have[32], need1[32];
            pyr_format_bytes(sz.bytes, need, sizeof need);
            pyr_format_bytes(budget, have, sizeof have);
            sizing_t sz1;
            size_for_counts(plan, 1, count, &sz1);
            pyr_format_bytes(sz1.bytes, need1, sizeof need1);
            return pyr_fail(PYR_ERR_BUDGET,
                            "memory budget %s is too small for %s of height %lld on the %lld x %lld x %lld %s grid: the smallest piece "
                            "(1 result node plus 2 x %lld halo nodes along each split axis, in %d buffers of one time layer%s for %d piece%s in flight%s) "
                            "needs %s; "
                            "use memory >= %s, or a lower height (height 1 needs %s)",
                            have, pyr_decomp_name(plan->decomp), (long long)h, (long long)p->n[0], (long long)p->n[1],
                            (long long)p->n[2], pyr_precision_name(p->precision), (long long)h, plan->slots + plan->spares,
                            plan->nfixed ? " and an input buffer each" : "", plan->slots,
                            plan->slots > 1 ? "s" : "", plan->faces_bytes ? ", resident boundary faces" : "", need, need,
                            need1);
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
    plan->device_bytes = pieces_bytes(plan, plan->layout.layer_bytes, plan->slots, plan->spares) + plan->faces_bytes;
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
        const uint64_t nstate = (uint64_t)state_fields(plan), ninput = (uint64_t)pyr_plan_inputs(plan);
        total.uploaded = p->steps > 0 ? (uint64_t)pyr_box_volume(&grid) * nstate + (uint64_t)pyr_box_volume(&in) * ninput : 0;
        total.downloaded = (uint64_t)downloads * (uint64_t)pyr_box_volume(&in) * nstate;
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
    default: break;
    }
}

/* Pieces in flight when nothing else decides: the user's run.slots, else the backend's default. */
static int requested_slots(const pyr_plan_t *plan)
{
    return plan->options.slots ? plan->options.slots : plan->ops->default_slots;
}

static pyr_status_t check_decomp(const pyr_problem_t *p, pyr_decomp_t d)
{
    if (pyr_decomp_fits(d, p->dims)) return PYR_OK;
    const char *fit = p->dims == 1 ? "segments" : p->dims == 2 ? "strips or blocks" : "slabs or blocks";
    return pyr_fail(PYR_ERR_CONFIG, "decomposition = %s does not apply to a %dD grid; use %s (or auto)", pyr_decomp_name(d), p->dims,
                    fit);
}

/* Build the geometry of a plan for a fixed method, decomposition and height. */
static pyr_status_t build(pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t h, uint64_t budget)
{
    plan->method = method;
    plan->decomp = decomp;
    plan->resident = method == PYR_METHOD_NAIVE;
    plan->slots = plan->resident ? 1 : plan->try_slots;
    /* Two spares with several slots in 1D and 2D: a task then computes into
     * the buffer freed two tasks back, so its kernels may start while the
     * previous task's last ones finish (H200, 2D float at 1 GiB, strips h128
     * 799 -> 878 Gcell/s).  In 3D the larger pieces of one spare weigh more:
     * volume over surface (cubes at 1 GiB best 224 with one, 214 with two;
     * bench/NOTES-cuda.md v9). */
    plan->spares = plan->slots >= 2 && plan->problem.dims < 3 ? 2 : 1;
    set_split(plan);
    plan->faces_bytes = 0;
    PYR_TRY(fit_pieces(plan, h, budget));
    predict_counts(plan);
    return PYR_OK;
}

/* ------------------------------------------------------ automatic choices */

/* A candidate the search looked at. */
typedef struct {
    pyr_decomp_t decomp;
    int64_t height;
    int slots;
    double seconds; /* predicted for the whole run */
} candidate_t;

typedef struct {
    candidate_t *c;
    int n, cap;
} candidates_t;

static pyr_status_t note_candidate(candidates_t *cs, pyr_decomp_t d, int64_t h, int slots, double s)
{
    if (!cs) return PYR_OK;
    if (cs->n == cs->cap) {
        int cap = cs->cap ? 2 * cs->cap : 64;
        candidate_t *g = realloc(cs->c, (size_t)cap * sizeof *g);
        if (!g) return pyr_fail(PYR_ERR_NOMEM, "out of host memory planning");
        cs->c = g;
        cs->cap = cap;
    }
    cs->c[cs->n++] = (candidate_t){d, h, slots, s};
    return PYR_OK;
}

/* Predicted seconds of the whole run with (method, decomp, h); fails when it
 * does not fit. */
static pyr_status_t predict_with(pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t h, uint64_t budget,
                                 double *seconds)
{
    PYR_TRY(build(plan, method, decomp, h, budget));
    pyr_model_prediction_t pr;
    PYR_TRY(pyr_model_predict(plan, &plan->model, plan->model_form, 0, &pr));
    *seconds = pr.seconds;
    return PYR_OK;
}

/* The height with the least predicted run time for one decomposition: a
 * geometric ladder (ratio ~1.15) up to the largest height that fits or the
 * number of steps, then every height between the best rung's neighbours
 * (at most 64 of them, evenly spread when the gap is wider). */
static pyr_status_t search_height(pyr_plan_t *plan, pyr_decomp_t decomp, uint64_t budget, int64_t *best_h, double *best_s,
                                  candidates_t *seen)
{
    const pyr_problem_t *p = &plan->problem;
    int64_t hmax = p->steps > 0 ? p->steps : 1;
    /* passes end at the stopping test's checks: higher pyramids would never be built */
    if (plan->check_every > 0 && plan->check_every < hmax) hmax = plan->check_every;
    int64_t ladder[256];
    int nl = 0, ibest = -1;
    *best_h = 0;
    *best_s = INFINITY;
    int worse = 0;
    for (int64_t h = 1; h <= hmax && nl < 256; h = h + 1 > h * 23 / 20 ? h + 1 : h * 23 / 20) {
        double s;
        if (predict_with(plan, PYR_METHOD_PYRAMID, decomp, h, budget, &s) != PYR_OK) break; /* higher ones need more memory */
        PYR_TRY(note_candidate(seen, decomp, h, plan->try_slots, s));
        ladder[nl] = h;
        if (s < *best_s) {
            *best_s = s;
            *best_h = h;
            ibest = nl;
        }
        nl++;
        /* past the optimum the redundant work grows without bound (and the
         * task count with it near the largest height that fits): stop once
         * three rungs in a row are 1.5 times the best */
        worse = s > 1.5 * *best_s ? worse + 1 : 0;
        if (worse == 3) break;
    }
    if (ibest < 0) return build(plan, PYR_METHOD_PYRAMID, decomp, 1, budget); /* reports why nothing fits */
    pyr_clear_error();
    int64_t lo = ibest > 0 ? ladder[ibest - 1] + 1 : 1;
    int64_t hi = ibest + 1 < nl ? ladder[ibest + 1] - 1 : (ladder[ibest] < hmax ? ladder[ibest] * 23 / 20 + 1 : hmax);
    if (hi > hmax) hi = hmax;
    int64_t span = hi - lo + 1, stride = span > 64 ? (span + 63) / 64 : 1;
    for (int64_t h = lo; h <= hi; h += stride) {
        if (h == ladder[ibest]) continue;
        double s;
        if (predict_with(plan, PYR_METHOD_PYRAMID, decomp, h, budget, &s) != PYR_OK) {
            pyr_clear_error();
            continue;
        }
        PYR_TRY(note_candidate(seen, decomp, h, plan->try_slots, s));
        if (s < *best_s) {
            *best_s = s;
            *best_h = h;
        }
    }
    return PYR_OK;
}

static int decomp_candidates(const pyr_problem_t *p, pyr_decomp_t requested, pyr_decomp_t out[2])
{
    if (requested != PYR_DECOMP_AUTO) {
        out[0] = requested;
        return 1;
    }
    if (p->dims == 1) out[0] = PYR_DECOMP_SEGMENTS;
    else if (p->dims == 3) {
        out[0] = PYR_DECOMP_SLABS;
        out[1] = PYR_DECOMP_BLOCKS;
        return 2;
    } else {
        out[0] = PYR_DECOMP_STRIPS;
        out[1] = PYR_DECOMP_BLOCKS;
        return 2;
    }
    return 1;
}

static void add_notice(pyr_plan_t *plan, const char *fmt, ...) PYR_PRINTF(2, 3);
static void add_notice(pyr_plan_t *plan, const char *fmt, ...)
{
    size_t len = strlen(plan->notice);
    if (len + 3 >= sizeof plan->notice) return;
    if (len) {
        strcat(plan->notice, "; ");
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->notice + len, sizeof plan->notice - len, fmt, ap);
    va_end(ap);
}

/* The machine constants: from the process's wisdom (pyr_wisdom_import_file;
 * no file is read here) when it has them for this device, scheme, precision
 * and dimension, else the documented defaults.  *why gets what a person
 * should hear when the defaults are used; *kernel the variant the record
 * names ("" for the kernel's default). */
static void load_model(pyr_plan_t *plan, pyr_wisdom_t *w, int *have_wisdom, char *device, size_t dsize, char *why, size_t wsize,
                       char *kernel, size_t ksize)
{
    const pyr_problem_t *p = &plan->problem;
    kernel[0] = 0;
    plan->model = pyr_model_default(plan->ops->kind, p->dims, p->precision);
    plan->model_form = PYR_MODEL_AUTO;
    snprintf(plan->model_source, sizeof plan->model_source, "default constants");
    *have_wisdom = 0;
    why[0] = 0;
    if (pyr_wisdom_device(plan->ops->kind, plan->options.device, plan->options.threads, device, dsize) != PYR_OK) {
        snprintf(why, wsize, "%s", pyr_last_error());
        pyr_clear_error();
        device[0] = 0;
        return;
    }
    char source[PYR_PATH_MAX], rejected[1024];
    pyr_wisdom_store_get(w, source, sizeof source, rejected, sizeof rejected);
    *have_wisdom = 1;
    const pyr_wisdom_constants_t *c = pyr_wisdom_find_constants(w, plan->ops->kind, device, plan->scheme->name, p->precision, p->dims);
    if (c) {
        plan->model = c->k;
        snprintf(kernel, ksize, "%s", c->kernel);
        snprintf(plan->model_source, sizeof plan->model_source, "calibrated, from %s", source);
        return;
    }
    if (rejected[0]) snprintf(why, wsize, "%s", rejected);
    else
        snprintf(why, wsize, "no calibration of the %s backend (%s, %s, %s, %dD) in the wisdom (%s)", plan->ops->name, device,
                 plan->scheme->name, pyr_precision_name(p->precision), p->dims, source);
}

static void note_defaults(pyr_plan_t *plan, const char *why)
{
    if (why[0]) snprintf(plan->model_source, sizeof plan->model_source, "default constants (%s; run 'pyrgrid calibrate')", why);
}

/* ------------------------------------------------------------- MEASURE */

typedef struct {
    double t[4];
    int n;
} pass_times_t;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int on_pass(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    pass_times_t *pt = user;
    if (pt->n < 4) pt->t[pt->n++] = wall();
    return 0;
}

/* Time a candidate briefly on a copy of the problem cut down along the split
 * axes to a few pieces per axis (same pieces, same spacing), three passes of
 * which the last two are timed; the measured/predicted ratio there scales
 * the model's prediction of the full run. */
static pyr_status_t measure_candidate(const pyr_plan_t *full, double *seconds)
{
    const pyr_problem_t *p = &full->problem;
    int nsplit = 0;
    for (int a = 0; a < p->dims; a++) nsplit += full->split[a];
    pyr_problem_t q = *p;
    pyr_options_t o = full->options;
    int64_t h = full->height;
    for (int a = 0; a < p->dims; a++) {
        if (!full->split[a]) continue;
        const pyr_axis_split_t *s = &full->axis[a];
        int64_t side = 0;
        for (int64_t k = 0; k < s->count; k++)
            if (s->bounds[k + 1] - s->bounds[k] > side) side = s->bounds[k + 1] - s->bounds[k];
        int64_t keep = nsplit == 1 ? 8 : 3;
        if (s->count > keep) {
            q.n[a] = 2 + keep * side;
            q.length[a] = p->length[a] * (double)(q.n[a] - 1) / (double)(p->n[a] - 1);
        }
        o.piece = side + 2 * h;
    }
    q.steps = 3 * h;
    q.init = PYR_INIT_RANDOM;
    q.seed = 1;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = full->decomp;
    o.height = h;
    o.memory = full->budget;
    o.snapshot_every = 0;
    o.plan_mode = PYR_PLAN_ESTIMATE;
    pyr_variant_format(&full->variant, o.kernel, sizeof o.kernel);
    pyr_plan_t *small = NULL;
    pyr_field_t *f = NULL;
    pyr_status_t st = pyr_plan_create_with_model(&q, &o, &full->model, full->model_form, &small);
    if (st == PYR_OK) st = pyr_field_create(&q, &f);
    if (st == PYR_OK) st = pyr_field_init(f, &q);
    double best = INFINITY;
    for (int r = 0; r < 2 && st == PYR_OK; r++) {
        pass_times_t pt = {{0}, 0};
        pyr_hooks_t hooks = {on_pass, NULL, &pt};
        st = pyr_execute(small, f, &hooks, NULL);
        if (st == PYR_OK && pt.n >= 3 && pt.t[2] - pt.t[0] < best) best = pt.t[2] - pt.t[0];
    }
    pyr_model_prediction_t ps, pf;
    if (st == PYR_OK) st = pyr_model_predict_pass(small, &full->model, full->model_form, h, &ps);
    if (st == PYR_OK) st = pyr_model_predict(full, &full->model, full->model_form, 0, &pf);
    if (st == PYR_OK) *seconds = isfinite(best) && ps.seconds > 0 ? pf.seconds * best / (2 * ps.seconds) : pf.seconds;
    pyr_field_destroy(&f);
    pyr_plan_destroy(&small);
    return st;
}

static int cmp_candidate(const void *a, const void *b)
{
    double x = ((const candidate_t *)a)->seconds, y = ((const candidate_t *)b)->seconds;
    return x < y ? -1 : x > y;
}

/* FFTW_MEASURE: time the best predicted candidate of each decomposition and
 * the next best overall (at most 4), keep the fastest. */
static pyr_status_t measure_best(pyr_plan_t *plan, candidates_t *cs, uint64_t budget, pyr_decomp_t *decomp, int64_t *h, int *slots)
{
    qsort(cs->c, (size_t)cs->n, sizeof *cs->c, cmp_candidate);
    candidate_t pick[4];
    int np = 0;
    for (int i = 0; i < cs->n && np < 4; i++) {
        int have_decomp = 0, dup = 0;
        for (int j = 0; j < np; j++) {
            have_decomp |= pick[j].decomp == cs->c[i].decomp;
            dup |= pick[j].decomp == cs->c[i].decomp && pick[j].height == cs->c[i].height && pick[j].slots == cs->c[i].slots;
        }
        if (dup) continue;
        if (!have_decomp || np < 3) pick[np++] = cs->c[i];
    }
    double best = INFINITY;
    for (int i = 0; i < np; i++) {
        double s;
        plan->try_slots = pick[i].slots;
        PYR_TRY(build(plan, PYR_METHOD_PYRAMID, pick[i].decomp, pick[i].height, budget));
        PYR_TRY(measure_candidate(plan, &s));
        if (s < best) {
            best = s;
            *decomp = pick[i].decomp;
            *h = pick[i].height;
            *slots = pick[i].slots;
        }
    }
    /* then the kernel's variants on the winner (unless the caller chose one) */
    if (plan->options.kernel[0]) return PYR_OK;
    plan->try_slots = *slots;
    PYR_TRY(build(plan, PYR_METHOD_PYRAMID, *decomp, *h, budget));
    pyr_variant_t cand[16], keep = plan->variant;
    const int nv = plan->kernel->candidates(plan->problem.dims, plan->problem.precision, cand, 16);
    for (int i = 0; i < nv; i++) {
        if (!memcmp(&cand[i], &keep, sizeof keep)) continue; /* timed above */
        double s;
        plan->variant = cand[i];
        PYR_TRY(measure_candidate(plan, &s));
        if (s < best) {
            best = s;
            keep = cand[i];
        }
    }
    plan->variant = keep;
    return PYR_OK;
}

static pyr_status_t create_plan(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_model_constants_t *given,
                                pyr_model_form_t form, pyr_plan_t **out)
{
    *out = NULL;
    PYR_TRY(pyr_problem_validate(problem));
    pyr_options_t opt;
    if (options) opt = *options;
    else pyr_options_default(&opt);
    if (opt.height < 0) return pyr_fail(PYR_ERR_CONFIG, "run.height = %lld: use a height >= 1 (or auto)", (long long)opt.height);
    if (opt.piece < 0) return pyr_fail(PYR_ERR_CONFIG, "piece size %lld: use a positive size (or auto)", (long long)opt.piece);
    if (opt.snapshot_every < 0) return pyr_fail(PYR_ERR_CONFIG, "output.every must be >= 0");
    if (opt.threads < 0) return pyr_fail(PYR_ERR_CONFIG, "run.threads = %d: use 0 (all cores) or a positive count", opt.threads);
    if (opt.plan_mode != PYR_PLAN_ESTIMATE && opt.plan_mode != PYR_PLAN_MEASURE)
        return pyr_fail(PYR_ERR_CONFIG, "plan mode %d: use estimate or measure", (int)opt.plan_mode);
    if (opt.decomposition != PYR_DECOMP_AUTO) PYR_TRY(check_decomp(problem, opt.decomposition));

    pyr_plan_t *plan = calloc(1, sizeof *plan);
    pyr_wisdom_t *wisdom = malloc(sizeof *wisdom);
    candidates_t seen = {NULL, 0, 0};
    if (!plan || !wisdom) {
        free(plan);
        free(wisdom);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    plan->problem = *problem;
    plan->options = opt;
    pyr_plan_set_scheme(plan);
    pyr_status_t st = PYR_OK;

    /* Backend. */
    pyr_backend_kind_t kind = opt.backend;
    if (kind == PYR_BACKEND_AUTO) {
        kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
        if (kind == PYR_BACKEND_CPU && pyr_device_get(PYR_BACKEND_CUDA)) add_notice(plan, "no usable GPU found; running on the CPU backend");
    }
    plan->ops = pyr_device_get(kind);
    if (!plan->ops) {
        free(wisdom);
        pyr_plan_destroy(&plan);
        return pyr_fail(PYR_ERR_NODEVICE,
                        "backend = cuda: this pyrgrid was built without CUDA (no CUDA compiler at build time); "
                        "rebuild on a machine with nvcc, or use backend = cpu");
    }
    plan->kernel = pyr_kernel_find(problem->equation, kind);
    if (!plan->kernel) {
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "the %s backend has no kernel for the %s equation; use another backend", plan->ops->name,
                      plan->scheme->name);
        goto fail;
    }
    st = pyr_kernel_variant(plan->kernel, opt.kernel, problem->dims, problem->precision, &plan->variant);
    if (st != PYR_OK) goto fail;
    st = plan->ops->create(&opt, problem->precision, &plan->ctx);
    if (st != PYR_OK) goto fail;

    /* Budget. */
    uint64_t budget = opt.memory;
    if (budget == 0) {
        if (kind == PYR_BACKEND_CPU) {
            budget = opt.method == PYR_METHOD_NAIVE || opt.method == PYR_METHOD_AUTO ? UINT64_MAX
                                                                                     : pyr_cpu_cache_budget(pyr_cpu_threads());
        } else {
            uint64_t fr = 0, total = 0;
            st = plan->ops->mem_info(plan->ctx, &fr, &total);
            if (st != PYR_OK) goto fail;
            uint64_t margin = total / 32 > (256ull << 20) ? total / 32 : (256ull << 20);
            budget = fr > margin ? fr - margin : 0;
        }
    } else if (kind != PYR_BACKEND_CPU) {
        uint64_t fr = 0, total = 0;
        st = plan->ops->mem_info(plan->ctx, &fr, &total);
        if (st != PYR_OK) goto fail;
        if (budget > fr) {
            char want[32], have[32];
            pyr_format_bytes(budget, want, sizeof want);
            pyr_format_bytes(fr, have, sizeof have);
            st = pyr_fail(PYR_ERR_DEVICE_NOMEM, "run.memory = %s is more than the %s of device memory free on GPU %d; "
                          "use memory <= %s, or memory = auto", want, have, opt.device, have);
            goto fail;
        }
    }
    plan->budget = budget;
    if (opt.slots < 0 || opt.slots > plan->ops->slots) {
        st = pyr_fail(PYR_ERR_CONFIG, "run.slots = %d: the %s backend keeps 1 to %d pieces in flight; use one of those (or auto)", opt.slots,
                      plan->ops->name, plan->ops->slots);
        goto fail;
    }
    plan->try_slots = requested_slots(plan);

    /* Model constants. */
    char device[PYR_WISDOM_KEY] = "", why[PYR_PATH_MAX + 256] = "", wise_kernel[32] = "";
    int have_wisdom = 0;
    if (given) {
        plan->model = *given;
        plan->model_form = form;
        snprintf(plan->model_source, sizeof plan->model_source, "given constants");
        pyr_wisdom_init(wisdom);
    } else {
        load_model(plan, wisdom, &have_wisdom, device, sizeof device, why, sizeof why, wise_kernel, sizeof wise_kernel);
        note_defaults(plan, why);
        /* the variant calibration found fastest on this machine, unless the caller chose one */
        if (!opt.kernel[0] && wise_kernel[0] &&
            pyr_kernel_variant(plan->kernel, wise_kernel, problem->dims, problem->precision, &plan->variant) != PYR_OK) {
            pyr_clear_error();
            pyr_kernel_variant(plan->kernel, "", problem->dims, problem->precision, &plan->variant);
        }
    }

    /* Method. */
    pyr_decomp_t cands[2];
    int ncand = decomp_candidates(problem, opt.decomposition, cands);
    pyr_method_t method = opt.method;
    if (method == PYR_METHOD_AUTO) {
        st = build(plan, PYR_METHOD_NAIVE, cands[0], 1, budget);
        method = st == PYR_OK ? PYR_METHOD_NAIVE : PYR_METHOD_PYRAMID;
        pyr_clear_error();
        st = PYR_OK;
    }
    int modelled = 0; /* a choice was made from the model */
    pyr_decomp_t decomp = cands[0];
    if (method == PYR_METHOD_NAIVE) {
        /* steps per compute call, progress reported between them: height when given, else 100 */
        int64_t chunk = opt.height > 0 ? opt.height : 100;
        if (chunk > problem->steps) chunk = problem->steps;
        st = build(plan, PYR_METHOD_NAIVE, decomp, chunk > 0 ? chunk : 1, budget);
    } else if (method == PYR_METHOD_TRIVIAL) {
        if (opt.height > 1) {
            st = pyr_fail(PYR_ERR_CONFIG, "method = trivial streams every step (height 1); height = %lld asks for the pyramid method",
                          (long long)opt.height);
            goto fail;
        }
        double best = INFINITY;
        for (int i = 0; i < ncand; i++) {
            double s;
            if (predict_with(plan, PYR_METHOD_TRIVIAL, cands[i], 1, budget, &s) == PYR_OK && s < best) {
                best = s;
                decomp = cands[i];
            }
        }
        modelled = ncand > 1;
        pyr_clear_error();
        st = build(plan, PYR_METHOD_TRIVIAL, decomp, 1, budget);
    } else {
        int64_t h = opt.height;
        /* slots = auto where the backend keeps more than two in flight: two larger pieces are weighed too,
         * by measurement only (plan = measure).  The model's pipeline of two slots has run 10-20% slower
         * than predicted on the H200 in every session (bench/NOTES-cuda.md v7: strips h128 232 ms per pass
         * with two slots, 200 with three, predicted the other way round), so estimates keep three. */
        int weigh_slots = opt.slots == 0 && plan->ops->default_slots > 2 && opt.plan_mode == PYR_PLAN_MEASURE;
        const pyr_wisdom_choice_t *known = NULL;
        char key[PYR_WISDOM_KEY];
        pyr_wisdom_problem_key(problem, &opt, budget, key, sizeof key);
        if (h == 0 && have_wisdom && device[0]) known = pyr_wisdom_find_choice(wisdom, kind, device, key);
        if (known && opt.slots == 0 && known->slots > 0 && known->slots <= plan->ops->slots) plan->try_slots = known->slots;
        if (known && known->height <= (problem->steps > 0 ? problem->steps : 1) &&
            (opt.slots == 0 || known->slots == 0 || known->slots == opt.slots) &&
            build(plan, PYR_METHOD_PYRAMID, known->decomp, known->height, budget) == PYR_OK &&
            (opt.decomposition == PYR_DECOMP_AUTO || opt.decomposition == known->decomp)) {
            decomp = known->decomp;
            h = known->height;
            if (!opt.kernel[0] && known->kernel[0] &&
                pyr_kernel_variant(plan->kernel, known->kernel, problem->dims, problem->precision, &plan->variant) != PYR_OK)
                pyr_clear_error(); /* keep the variant chosen before */
            add_notice(plan, "%s, height %lld: measured earlier on this machine (wisdom)", pyr_decomp_name(decomp), (long long)h);
        } else if (h == 0 || ncand > 1 || weigh_slots) {
            pyr_clear_error();
            plan->try_slots = requested_slots(plan);
            double best = INFINITY;
            int64_t best_h = 0;
            int best_slots = plan->try_slots;
            char first_error[1024] = "";
            /* slots = auto: the backend's most, or two (larger pieces, less
             * overlap) when the model predicts that faster */
            int slot_cands[2] = {plan->try_slots, 2}, nslot = weigh_slots ? 2 : 1;
            for (int si_ = 0; si_ < nslot; si_++) {
                plan->try_slots = slot_cands[si_];
                for (int i = 0; i < ncand; i++) {
                    int64_t hh = h;
                    double s = INFINITY;
                    pyr_status_t si;
                    if (h == 0) si = search_height(plan, cands[i], budget, &hh, &s, &seen);
                    else si = predict_with(plan, PYR_METHOD_PYRAMID, cands[i], h, budget, &s);
                    if (si != PYR_OK) {
                        /* keep the message of the smallest pieces tried (two slots when auto) */
                        if (!first_error[0] || (i == 0 && si_ == nslot - 1)) snprintf(first_error, sizeof first_error, "%s", pyr_last_error());
                        if (i == 0) st = si;
                        continue;
                    }
                    if (h != 0 && (st = note_candidate(&seen, cands[i], hh, plan->try_slots, s)) != PYR_OK) goto fail;
                    if (s < best) {
                        best = s;
                        best_h = hh;
                        best_slots = plan->try_slots;
                        decomp = cands[i];
                    }
                }
            }
            plan->try_slots = best_slots;
            if (best_h == 0) {
                st = pyr_fail(st != PYR_OK ? st : PYR_ERR_BUDGET, "%s", first_error);
                goto fail;
            }
            pyr_clear_error();
            st = PYR_OK;
            h = best_h;
            modelled = 1;
            if (opt.plan_mode == PYR_PLAN_MEASURE && seen.n > 1) {
                int ms = plan->try_slots;
                st = measure_best(plan, &seen, budget, &decomp, &h, &ms);
                if (st != PYR_OK) goto fail;
                plan->try_slots = ms;
                if (!given && device[0]) {
                    pyr_wisdom_choice_t ch;
                    memset(&ch, 0, sizeof ch);
                    ch.backend = kind;
                    snprintf(ch.device, sizeof ch.device, "%s", device);
                    snprintf(ch.version, sizeof ch.version, "%s", PYR_VERSION_STRING);
                    snprintf(ch.problem, sizeof ch.problem, "%s", key);
                    ch.decomp = decomp;
                    ch.height = h;
                    ch.slots = plan->try_slots;
                    pyr_variant_format(&plan->variant, ch.kernel, sizeof ch.kernel);
                    /* into the process's wisdom; a program exports it (pyr_wisdom_export_file) */
                    if (pyr_wisdom_store_put_choice(&ch) == PYR_OK)
                        add_notice(plan, "measured: %s, height %lld (recorded in the wisdom)", pyr_decomp_name(decomp), (long long)h);
                    else
                        add_notice(plan, "measured: %s, height %lld (not recorded: %s)", pyr_decomp_name(decomp), (long long)h,
                                   pyr_last_error());
                    pyr_clear_error();
                }
            }
        }
        if (problem->steps > 0 && h > problem->steps) h = problem->steps;
        st = build(plan, PYR_METHOD_PYRAMID, decomp, h, budget);
    }
    if (st != PYR_OK) goto fail;
    if (modelled && why[0] && opt.plan_mode == PYR_PLAN_ESTIMATE)
        add_notice(plan, "%s; the model uses default constants, so the choice of %s may be off: run 'pyrgrid calibrate'", why,
                   opt.height == 0 ? "height" : "decomposition");
    (void)axis_letter;
    free(seen.c);
    free(wisdom);
    *out = plan;
    return PYR_OK;
fail:
    free(seen.c);
    free(wisdom);
    pyr_plan_destroy(&plan);
    return st;
}

pyr_status_t pyr_plan_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **out)
{
    return create_plan(problem, options, NULL, PYR_MODEL_AUTO, out);
}

pyr_status_t pyr_plan_create_with_model(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_model_constants_t *k,
                                        pyr_model_form_t form, pyr_plan_t **out)
{
    if (!k) return pyr_fail(PYR_ERR_ARG, "pyr_plan_create_with_model: constants required");
    return create_plan(problem, options, k, form, out);
}

const pyr_model_constants_t *pyr_plan_model(const pyr_plan_t *plan) { return &plan->model; }
pyr_model_form_t pyr_plan_model_form(const pyr_plan_t *plan) { return plan->model_form; }

void pyr_plan_destroy(pyr_plan_t **plan)
{
    if (!plan || !*plan) return;
    pyr_plan_t *p = *plan;
    for (int a = 0; a < 3; a++) free(p->axis[a].bounds);
    if (p->ops && p->ctx) p->ops->destroy(p->ctx);
    free(p);
    *plan = NULL;
}

pyr_status_t pyr_plan_get_info(const pyr_plan_t *plan, pyr_plan_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->method = plan->method;
    info->decomposition = plan->resident ? PYR_DECOMP_AUTO : plan->decomp;
    info->backend = plan->ops->kind;
    info->height = plan->height;
    int64_t passes = 0;
    for (int64_t s = 0; s < plan->problem.steps; s += pyr_plan_pass_height(plan, s)) passes++;
    info->passes = passes;
    info->tasks_per_pass = pyr_plan_tasks(plan);
    for (int a = 0; a < 3; a++) {
        info->pieces[a] = plan->axis[a].count;
        info->piece_extent[a] = plan->alloc_extent[a];
        int64_t r = 0;
        for (int64_t k = 0; k < plan->axis[a].count; k++) {
            int64_t e = plan->axis[a].bounds[k + 1] - plan->axis[a].bounds[k];
            if (e > r) r = e;
        }
        info->result_extent[a] = r;
    }
    info->slots = plan->slots;
    info->device_bytes = plan->device_bytes;
    info->budget_bytes = plan->budget;
    info->counts = plan->predicted;
    uint64_t useful = pyr_plan_useful(plan, plan->problem.steps);
    info->redundancy = useful ? (double)plan->predicted.computed / (double)useful : 1.0;
    info->notice = plan->notice;
    pyr_variant_format(&plan->variant, info->kernel, sizeof info->kernel);
    info->fields = plan->npp + plan->nfixed;
    return PYR_OK;
}

pyr_status_t pyr_plan_sibling(const pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t height, pyr_plan_t **out)
{
    *out = NULL;
    pyr_plan_t *s = calloc(1, sizeof *s);
    if (!s) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    s->problem = plan->problem;
    s->options = plan->options;
    s->options.piece = 0;
    pyr_plan_set_scheme(s);
    s->kernel = plan->kernel;
    s->variant = plan->variant;
    s->ops = plan->ops;
    s->budget = plan->budget;
    s->model = plan->model;
    s->model_form = plan->model_form;
    snprintf(s->model_source, sizeof s->model_source, "%s", plan->model_source);
    s->try_slots = plan->resident ? requested_slots(s) : plan->slots;
    pyr_status_t st = build(s, method, decomp, height, plan->budget);
    if (st != PYR_OK) {
        pyr_plan_destroy(&s);
        return st;
    }
    *out = s;
    return PYR_OK;
}
