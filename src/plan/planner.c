/* The planner: chooses method, decomposition, pyramid height and piece sizes
 * under a device memory budget, and predicts the exact counts of the run. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "plan/model.h"
#include "plan/plan.h"

static const char *const axis_letter = "xyz";

/* ----------------------------------------------------------------- layout */

int64_t pyr_piece_xpad(const pyr_backend_ops_t *ops, int64_t lo_x, size_t elem)
{
    int64_t a = ops->xpad_align_bytes / (int64_t)elem;
    if (a <= 1) return 0;
    /* column(x) = xpad + x - lo_x is a multiple of a when x = 1 (mod a). */
    int64_t xpad = (lo_x - 1) % a;
    return xpad < 0 ? xpad + a : xpad;
}

pyr_piece_layout_t pyr_piece_layout(const pyr_backend_ops_t *ops, const int64_t ext[3], size_t elem)
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

static pyr_status_t split_axis(pyr_axis_split_t *s, int64_t n, int64_t count)
{
    free(s->bounds);
    s->count = count;
    s->bounds = malloc((size_t)(count + 1) * sizeof *s->bounds);
    if (!s->bounds) return pyr_fail(PYR_ERR_NOMEM, "out of host memory planning %lld pieces", (long long)count);
    int64_t interior = n - 2;
    for (int64_t k = 0; k <= count; k++) s->bounds[k] = 1 + (int64_t)((__int128)k * interior / count);
    return PYR_OK;
}

/* Largest source extent along an axis of n nodes cut in `count` pieces, with
 * halos of h (clipped to the grid). */
static int64_t max_src_extent(int64_t n, int64_t count, int64_t h)
{
    int64_t interior = n - 2, best = 0;
    for (int64_t k = 0; k < count; k++) {
        int64_t lo = 1 + (int64_t)((__int128)k * interior / count);
        int64_t hi = 1 + (int64_t)((__int128)(k + 1) * interior / count);
        int64_t slo = lo - h > 0 ? lo - h : 0, shi = hi + h < n ? hi + h : n;
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

static uint64_t faces_bytes(const pyr_plan_t *plan, size_t elem)
{
    uint64_t total = 0;
    for (int a = 0; a < plan->problem.dims; a++) {
        if (plan->split[a]) continue;
        int64_t ext[3] = {plan->problem.n[0], plan->problem.n[1], plan->problem.n[2]};
        ext[a] = 1;
        total += 2 * pyr_piece_layout(plan->ops, ext, elem).layer_bytes;
    }
    return total;
}

static void size_for_counts(const pyr_plan_t *plan, int64_t h, const int64_t count[3], sizing_t *sz)
{
    size_t elem = pyr_precision_size(plan->problem.precision);
    for (int a = 0; a < 3; a++) {
        sz->count[a] = count[a];
        if (a >= plan->problem.dims) sz->ext[a] = 1;
        else if (plan->split[a]) sz->ext[a] = max_src_extent(plan->problem.n[a], count[a], h);
        else sz->ext[a] = plan->problem.n[a];
    }
    pyr_piece_layout_t L = pyr_piece_layout(plan->ops, sz->ext, elem);
    sz->bytes = (uint64_t)plan->slots * 2 * L.layer_bytes + faces_bytes(plan, elem);
}

/* Counts along split axes for a result side of `side` nodes. */
static void counts_for_side(const pyr_plan_t *plan, int64_t side, int64_t count[3])
{
    for (int a = 0; a < 3; a++) {
        count[a] = 1;
        if (a < plan->problem.dims && plan->split[a]) {
            int64_t interior = plan->problem.n[a] - 2;
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
        if (plan->split[a] && plan->problem.n[a] - 2 > hi) hi = plan->problem.n[a] - 2;
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
        sz.bytes = 2 * L.layer_bytes;
        if (sz.bytes > budget) {
            char need[32], have[32];
            pyr_format_bytes(sz.bytes, need, sizeof need);
            pyr_format_bytes(budget, have, sizeof have);
            return pyr_fail(PYR_ERR_BUDGET,
                            "the naive method keeps the whole grid on the device in two time layers, %s, more than the budget of %s; "
                            "use memory >= %s, or method = pyramid (or auto) to solve it in pieces",
                            need, have, need);
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
                            "(1 result node plus 2 x %lld halo nodes along each split axis, 2 time layers, %d buffer%s%s) needs %s; "
                            "use memory >= %s, or a lower height (height 1 needs %s)",
                            have, pyr_decomp_name(plan->decomp), (long long)h, (long long)p->n[0], (long long)p->n[1],
                            (long long)p->n[2], pyr_precision_name(p->precision), (long long)h, plan->slots,
                            plan->slots > 1 ? "s" : "", plan->faces_bytes ? ", resident boundary faces" : "", need, need,
                            need1);
        }
        counts_for_side(plan, side, count);
        size_for_counts(plan, h, count, &sz);
    }
    for (int a = 0; a < 3; a++) {
        int64_t c = a < p->dims ? count[a] : 1;
        if (a < p->dims) PYR_TRY(split_axis(&plan->axis[a], p->n[a], c));
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
    plan->device_bytes = (uint64_t)plan->slots * 2 * plan->layout.layer_bytes + plan->faces_bytes;
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
        total.uploaded = p->steps > 0 ? (uint64_t)pyr_box_volume(&grid) : 0;
        total.downloaded = (uint64_t)downloads * (uint64_t)pyr_box_volume(&in);
        total.computed = (uint64_t)pyr_box_volume(&in) * (uint64_t)p->steps;
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
            if (!plan->split[a]) total.uploaded += 2 * (uint64_t)(pyr_problem_nodes(p) / p->n[a]);
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
    case PYR_DECOMP_BLOCKS: plan->split[0] = plan->split[1] = 1; break;
    case PYR_DECOMP_SLABS: plan->split[2] = 1; break;
    default: break;
    }
}

static pyr_status_t check_decomp(const pyr_problem_t *p, pyr_decomp_t d)
{
    int ok = (d == PYR_DECOMP_SEGMENTS && p->dims == 1) || ((d == PYR_DECOMP_STRIPS || d == PYR_DECOMP_BLOCKS) && p->dims == 2) ||
             (d == PYR_DECOMP_SLABS && p->dims == 3);
    if (ok) return PYR_OK;
    const char *fit = p->dims == 1 ? "segments" : p->dims == 2 ? "strips or blocks" : "slabs";
    return pyr_fail(PYR_ERR_CONFIG, "decomposition = %s does not apply to a %dD grid; use %s (or auto)", pyr_decomp_name(d), p->dims,
                    fit);
}

/* Build the geometry of a plan for a fixed method, decomposition and height. */
static pyr_status_t build(pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t h, uint64_t budget)
{
    plan->method = method;
    plan->decomp = decomp;
    plan->resident = method == PYR_METHOD_NAIVE;
    plan->slots = plan->resident ? 1 : plan->ops->slots;
    set_split(plan);
    plan->faces_bytes = 0;
    PYR_TRY(fit_pieces(plan, h, budget));
    predict_counts(plan);
    return PYR_OK;
}

/* Default height until the model chooses: the height with the least serial
 * model time under the backend's default constants, over a geometric ladder
 * of candidates (1, 2, 3, 4, 6, 8, 11, 16, ...) up to what fits. */
static pyr_status_t choose_height(pyr_plan_t *plan, pyr_decomp_t decomp, uint64_t budget, int64_t *best_h)
{
    const pyr_problem_t *p = &plan->problem;
    pyr_model_constants_t k = pyr_model_default(plan->ops->kind, p->dims, p->precision);
    double best = -1;
    *best_h = 0;
    int64_t hmax = p->steps > 0 ? p->steps : 1;
    if (hmax > 1024) hmax = 1024;
    for (int64_t h = 1; h <= hmax; h = h < 4 ? h + 1 : h + h / 2) {
        pyr_status_t st = build(plan, PYR_METHOD_PYRAMID, decomp, h, budget);
        if (st != PYR_OK) break; /* higher pyramids need more memory still */
        pyr_counters_t one;
        pyr_plan_count_pass(plan, h, &one, NULL);
        double per_step = pyr_model_serial(&one, &k) / (double)h;
        if (best < 0 || per_step < best) {
            best = per_step;
            *best_h = h;
        }
    }
    if (*best_h == 0) return build(plan, PYR_METHOD_PYRAMID, decomp, 1, budget); /* reports the error */
    return PYR_OK;
}

static uint64_t cpu_cache_budget(int threads)
{
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    if (l2 <= 0) l2 = 1 << 20;
    return (uint64_t)l2 * (uint64_t)(threads > 0 ? threads : 1);
}

pyr_status_t pyr_plan_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **out)
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
    if (opt.decomposition != PYR_DECOMP_AUTO) PYR_TRY(check_decomp(problem, opt.decomposition));

    pyr_plan_t *plan = calloc(1, sizeof *plan);
    if (!plan) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    plan->problem = *problem;
    plan->options = opt;
    pyr_status_t st = PYR_OK;

    /* Backend. */
    pyr_backend_kind_t kind = opt.backend;
    if (kind == PYR_BACKEND_AUTO) {
        kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
        if (kind == PYR_BACKEND_CPU && pyr_backend_get(PYR_BACKEND_CUDA))
            snprintf(plan->notice, sizeof plan->notice, "no usable GPU found; running on the CPU backend");
    }
    plan->ops = pyr_backend_get(kind);
    if (!plan->ops) {
        pyr_plan_destroy(&plan);
        return pyr_fail(PYR_ERR_NODEVICE,
                        "backend = cuda: this pyrgrid was built without CUDA (no CUDA compiler at build time); "
                        "rebuild on a machine with nvcc, or use backend = cpu");
    }
    st = plan->ops->create(&opt, problem->precision, &plan->ctx);
    if (st != PYR_OK) goto fail;

    /* Budget. */
    uint64_t budget = opt.memory;
    if (budget == 0) {
        if (kind == PYR_BACKEND_CPU) {
            budget = opt.method == PYR_METHOD_NAIVE || opt.method == PYR_METHOD_AUTO ? UINT64_MAX
                                                                                     : cpu_cache_budget(pyr_cpu_threads());
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

    /* Method and decomposition. */
    pyr_decomp_t decomp = opt.decomposition;
    if (decomp == PYR_DECOMP_AUTO)
        decomp = problem->dims == 1 ? PYR_DECOMP_SEGMENTS : problem->dims == 2 ? PYR_DECOMP_STRIPS : PYR_DECOMP_SLABS;
    pyr_method_t method = opt.method;
    if (method == PYR_METHOD_AUTO) {
        st = build(plan, PYR_METHOD_NAIVE, decomp, 1, budget);
        method = st == PYR_OK ? PYR_METHOD_NAIVE : PYR_METHOD_PYRAMID;
        pyr_clear_error();
    }
    if (method == PYR_METHOD_NAIVE) {
        int64_t chunk = problem->steps < 100 ? problem->steps : 100; /* progress between chunks */
        st = build(plan, PYR_METHOD_NAIVE, decomp, chunk > 0 ? chunk : 1, budget);
    } else if (method == PYR_METHOD_TRIVIAL) {
        if (opt.height > 1) {
            st = pyr_fail(PYR_ERR_CONFIG, "method = trivial streams every step (height 1); height = %lld asks for the pyramid method",
                          (long long)opt.height);
            goto fail;
        }
        st = build(plan, PYR_METHOD_TRIVIAL, decomp, 1, budget);
    } else {
        int64_t h = opt.height;
        if (h == 0) {
            st = choose_height(plan, decomp, budget, &h);
            if (st != PYR_OK) goto fail;
            /* 2D strips that cannot hold a useful pyramid: try blocks. */
        }
        if (problem->steps > 0 && h > problem->steps) h = problem->steps;
        st = build(plan, PYR_METHOD_PYRAMID, decomp, h, budget);
        if (st != PYR_OK && opt.decomposition == PYR_DECOMP_AUTO && decomp == PYR_DECOMP_STRIPS) {
            char first[1024];
            snprintf(first, sizeof first, "%s", pyr_last_error());
            if (build(plan, PYR_METHOD_PYRAMID, PYR_DECOMP_BLOCKS, h, budget) == PYR_OK) st = PYR_OK;
            else st = pyr_fail(PYR_ERR_BUDGET, "%s", first);
        }
    }
    if (st != PYR_OK) goto fail;
    (void)axis_letter;
    *out = plan;
    return PYR_OK;
fail:
    pyr_plan_destroy(&plan);
    return st;
}

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
    uint64_t useful = (uint64_t)pyr_problem_interior(&plan->problem) * (uint64_t)plan->problem.steps;
    info->redundancy = useful ? (double)plan->predicted.computed / (double)useful : 1.0;
    info->notice = plan->notice;
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
    s->ops = plan->ops;
    s->budget = plan->budget;
    pyr_status_t st = build(s, method, decomp, height, plan->budget);
    if (st != PYR_OK) {
        pyr_plan_destroy(&s);
        return st;
    }
    *out = s;
    return PYR_OK;
}
