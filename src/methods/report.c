/* pyr_plan_print: what a plan will do, next to the trivial method; a multigrid plan's hierarchy, its streamed levels
 * and the cost of a cycle (the solver's, solvers/multigrid/mg.h: hence here, above plan/ and solvers/), and those
 * facts as JSON for the plan's reports (report.h). */
#include "methods/report.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "plan/longvector.h"
#include "plan/plan.h"
#include "plan/skewed.h"
#include "schemes/poisson.h"
#include "solvers/multigrid/mg.h"

static const char *piece_noun(const pyr_plan_t *p)
{
    if (p->resident) return "whole grid";
    switch (p->decomp) {
    case PYR_DECOMP_SEGMENTS: return "segments";
    case PYR_DECOMP_STRIPS: return "strips";
    case PYR_DECOMP_BLOCKS: return "blocks";
    case PYR_DECOMP_SKEWED: return "skewed";
    default: return "slabs";
    }
}

static void print_extent(FILE *out, const pyr_plan_t *p, const int64_t e[3])
{
    /* C order as NumPy shows it: (z,) y, x */
    for (int a = p->problem.dims - 1; a >= 0; a--) fprintf(out, "%lld%s", (long long)e[a], a ? " x " : "");
}

/* Paper's redundancy factor of the split axis: (R - n) / (R - 2n) per split
 * axis (product for blocks), R the piece capacity r + 2n. */
static double paper_redundancy(const pyr_plan_t *p, const pyr_plan_info_t *info)
{
    double f = 1.0;
    for (int a = 0; a < p->problem.dims; a++) {
        if (!p->split[a] || p->resident) continue;
        double R = (double)(info->result_extent[a] + 2 * p->height), n = (double)p->height;
        f *= (R - n) / (R - 2 * n);
    }
    return f;
}

static void print_counts(FILE *out, const char *indent, const pyr_counters_t *c, int64_t steps)
{
    double k = steps > 0 ? (double)steps : 1;
    fprintf(out, "%svalues uploaded   %.6g (%.4g per step)\n", indent, (double)c->uploaded, (double)c->uploaded / k);
    fprintf(out, "%svalues downloaded %.6g (%.4g per step)\n", indent, (double)c->downloaded, (double)c->downloaded / k);
    fprintf(out, "%svalues computed   %.6g (of which redundant %.6g)\n", indent, (double)c->computed, (double)c->redundant);
}


/* Predicted seconds of a sibling plan, or a negative number when it does not fit. */
static double predict_sibling(const pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t d, int64_t h)
{
    pyr_plan_t *s = NULL;
    double t = -1;
    if (pyr_plan_sibling(plan, method, d, h, &s) == PYR_OK) {
        pyr_model_prediction_t pr;
        if (pyr_model_predict(s, &plan->model, plan->model_form, 0, &pr) == PYR_OK) t = pr.seconds;
    }
    pyr_plan_free(&s);
    pyr_clear_error();
    return t;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The model's view: predicted time of this plan, of the trivial method, and
 * per height around the chosen one for each decomposition that applies. */
static void print_model(const pyr_plan_t *plan, FILE *out)
{
    const pyr_problem_t *pr = &plan->problem;
    pyr_model_prediction_t me;
    if (pyr_model_predict(plan, &plan->model, plan->model_form, 0, &me) != PYR_OK) {
        pyr_clear_error();
        return;
    }
    int overlapped = pyr_model_resolve(plan, plan->model_form) == PYR_MODEL_OVERLAPPED;
    fprintf(out, "model        %s form, %s\n", overlapped ? "overlapped (pipeline of slots)" : "serial", plan->model_source);
    double cells = (double)pyr_problem_interior(pr) * (double)(pr->steps > 0 ? pr->steps : 1);
    fprintf(out, "predicted    %.4g s for the run (%.4g ns per node and step: upload %.3g s, compute %.3g s, download %.3g s, "
                 "band copies %.3g s in sum)\n",
            me.seconds, 1e9 * me.seconds / cells, me.upload, me.compute, me.download, me.host);
    if (plan->method == PYR_METHOD_LONGVECTOR) pyr_lv_plan_print(plan, out); /* the paper's model (plan/longvector.h) */
    if (plan->resident) return;
    double triv = predict_sibling(plan, PYR_METHOD_TRIVIAL, plan->decomp, 1);
    if (triv > 0 && plan->method != PYR_METHOD_TRIVIAL)
        fprintf(out, "             trivial method %.4g s: predicted speedup %.2fx\n", triv, triv / me.seconds);
    if (plan->method != PYR_METHOD_PYRAMID) return;

    pyr_decomp_t ds[3];
    int nd = 1;
    ds[0] = plan->decomp;
    if (pr->dims >= 2) {
        ds[0] = pr->dims == 2 ? PYR_DECOMP_STRIPS : PYR_DECOMP_SLABS;
        ds[1] = PYR_DECOMP_BLOCKS;
        nd = 2;
        if (pyr_skew_eligible(plan, NULL, 0)) ds[nd++] = PYR_DECOMP_SKEWED;
    }
    static const double f[] = {0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0};
    int64_t hs[16];
    int nh = 0;
    int64_t hmax = pr->steps > 0 ? pr->steps : 1;
    for (int i = 0; i < (int)(sizeof f / sizeof f[0]); i++) {
        int64_t h = (int64_t)(f[i] * (double)plan->height + 0.5);
        if (h < 1) h = 1;
        if (h > hmax) h = hmax;
        int dup = 0;
        for (int j = 0; j < nh; j++) dup |= hs[j] == h;
        if (!dup) hs[nh++] = h;
    }
    qsort(hs, (size_t)nh, sizeof hs[0], cmp_i64);
    fprintf(out, "             predicted run time by height (* = this plan):\n             %8s", "height");
    for (int d = 0; d < nd; d++) fprintf(out, " %14s", pyr_decomp_name(ds[d]));
    fprintf(out, "\n");
    for (int i = 0; i < nh; i++) {
        fprintf(out, "             %8lld", (long long)hs[i]);
        for (int d = 0; d < nd; d++) {
            int mine = ds[d] == plan->decomp && hs[i] == plan->height;
            double t = mine ? me.seconds : predict_sibling(plan, PYR_METHOD_PYRAMID, ds[d], hs[i]);
            if (t < 0) fprintf(out, " %14s", "does not fit");
            else fprintf(out, " %12.4g s%s", t, mine ? "*" : " ");
        }
        fprintf(out, "\n");
    }
}

/* ------------------------------------------------------------------ multigrid */

/* The times a cycle of this type starting at level l visits each level (the coarsest: its solves), in the level
 * loop's order (solvers/multigrid/mg_solve.c's cycle and correction). */
static void mg_visits(const pyr_mg_hierarchy_t *hy, int l, pyr_cycle_t type, int64_t *v)
{
    v[l]++;
    if (l == hy->nlevels - 1) return;
    if (type == PYR_CYCLE_F && l + 2 < hy->nlevels) {
        mg_visits(hy, l + 1, PYR_CYCLE_F, v);
        mg_visits(hy, l + 1, PYR_CYCLE_V, v);
    } else {
        mg_visits(hy, l + 1, PYR_CYCLE_V, v);
    }
}

/* A level's unknowns (its interior and its Neumann faces' nodes), the measure of the solver's sweep equivalents. */
static double mg_unknowns(const pyr_mg_hierarchy_t *hy, int l)
{
    double v = 1;
    for (int a = 0; a < hy->dims; a++) v *= (double)(hy->level[l].n[a] - 2 + hy->neumann[2 * a] + hy->neumann[2 * a + 1]);
    return v;
}

/* The cost of one cycle in sweeps of the finest grid, counted as the solver counts its result's (every smoothing
 * sweep, residual, restriction and interpolation of a level weighs its unknowns over the finest level's; the
 * coarsest solve's sweeps; the finest residual's norm after the cycle). */
static double mg_cycle_sweeps(const pyr_mg_hierarchy_t *hy)
{
    int64_t v[PYR_MG_MAX_LEVELS] = {0};
    mg_visits(hy, 0, hy->cycle, v);
    const int last = hy->nlevels - 1;
    const double fine = mg_unknowns(hy, 0);
    double s = 1; /* the norm */
    for (int l = 0; l < last; l++)
        s += (double)v[l] * ((double)(hy->pre + hy->post + 2) * mg_unknowns(hy, l) + mg_unknowns(hy, l + 1)) / fine;
    return s + (double)v[last] * (double)hy->coarse_sweeps * mg_unknowns(hy, last) / fine;
}

static void print_level_extent(FILE *out, const pyr_mg_hierarchy_t *hy, int l)
{
    for (int a = hy->dims - 1; a >= 0; a--) fprintf(out, "%lld%s", (long long)hy->level[l].n[a], a ? " x " : "");
}

/* The hierarchy, what stays on the device and what is streamed, and the cost of a cycle: a multigrid plan takes no
 * pieces, passes or time layers, and the run model of sweeps has nothing to say about it. */
static pyr_status_t print_multigrid(const pyr_plan_t *plan, FILE *out, const char *used, const char *budget)
{
    const pyr_problem_t *pr = &plan->problem;
    pyr_mg_hierarchy_t hy;
    pyr_mg_stream_t s;
    PYR_TRY(pyr_mg_hierarchy(pr, &hy));
    PYR_TRY(pyr_mg_stream_plan(pr, &hy, plan->budget, &s));
    const char *cyc = hy.cycle == PYR_CYCLE_F ? "F" : "V";
    const int last = hy.nlevels - 1;
    const int rhs = pr->poisson.rhs != PYR_RHS_ZERO;
    fprintf(out, "levels       %d:", hy.nlevels);
    for (int l = 0; l < hy.nlevels; l++) {
        fprintf(out, "%s", l ? ", " : " ");
        print_level_extent(out, &hy, l);
    }
    fprintf(out, " (nodes, boundary included)\n");
    fprintf(out, "cycle        %s-cycles: %d pre- and %d post-smoothing %s sweeps per level, full weighting down, %s interpolation up\n",
            cyc, hy.pre, hy.post, hy.smoother == PYR_SMOOTH_JACOBI ? "weighted-Jacobi" : "Chebyshev-accelerated Jacobi",
            hy.dims == 1 ? "linear" : hy.dims == 2 ? "bilinear" : "trilinear");
    fprintf(out, "coarsest     ");
    print_level_extent(out, &hy, last);
    fprintf(out, " solved by %lld Chebyshev-accelerated Jacobi sweep%s%s\n", (long long)hy.coarse_sweeps, hy.coarse_sweeps == 1 ? "" : "s",
            hy.pure ? " (every face Neumann: its right-hand side made compatible first, the result keeps the initial field's mean)" : "");
    if (s.streamed == 0) {
        fprintf(out, "in core      every level on the device (u, the sweeps' second layer%s)\n", rhs ? " and f" : "; f on coarser levels");
    } else {
        char host[32], moved[32];
        pyr_format_bytes(s.host_bytes, host, sizeof host);
        pyr_format_bytes(s.moved, moved, sizeof moved);
        if (s.streamed < hy.nlevels - 1) fprintf(out, "in core      levels %d-%d on the device", s.streamed, last);
        else fprintf(out, "in core      level %d on the device", last);
        if (rhs) fprintf(out, "; the finest level's f %s", s.f_resident ? "stays on the device too (uploaded once)" : "streamed with u");
        fprintf(out, "\n");
        fprintf(out, "streamed     %s from host memory (%s there beside the caller's u and f) in slabs of planes along %c:\n",
                s.streamed > 1 ? "the finest levels" : "the finest level", host, "xyz"[s.axis]);
        int64_t v[PYR_MG_MAX_LEVELS] = {0};
        mg_visits(&hy, 0, hy.cycle, v);
        for (int l = 0; l < s.streamed; l++) {
            /* the finest level's one pass per cycle does both of its visits' work; a coarser level's visit takes two */
            const int64_t passes = l ? 2 * v[l] : 1;
            const int64_t n = hy.level[l].n[s.axis];
            if (s.slab[l] >= n) fprintf(out, "             level %d: its %lld planes in one slab", l, (long long)n);
            else fprintf(out, "             level %d: %lld of its %lld planes per slab, %d halo planes each side recomputed", l, (long long)s.slab[l],
                         (long long)n, s.halo[l]);
            fprintf(out, ", %lld pass%s per cycle\n", (long long)passes, passes == 1 ? "" : "es");
        }
        fprintf(out, "moved        %s to and from the device per cycle\n", moved);
    }
    fprintf(out, "device       %s of budget %s: %s\n", used, budget,
            s.streamed ? "the in-core levels' arrays and the slab buffers" : "every level's arrays");
    fprintf(out, "cost         %.4g sweeps of the finest grid per cycle (smoothing, residuals, transfers, the coarsest solve, the "
                 "residual's norm), and one for the initial residual\n",
            mg_cycle_sweeps(&hy));
    return PYR_OK;
}

pyr_status_t pyr_plan_print(const pyr_plan_t *plan, FILE *out)
{
    pyr_plan_info_t info;
    PYR_TRY(pyr_plan_info_single(plan, &info));
    const pyr_problem_t *pr = &plan->problem;
    char used[32], budget[32];
    pyr_format_bytes(info.device_bytes, used, sizeof used);
    if (plan->budget == UINT64_MAX) snprintf(budget, sizeof budget, "unlimited");
    else pyr_format_bytes(plan->budget, budget, sizeof budget);

    const int poisson = pr->equation == PYR_EQ_POISSON;
    fprintf(out, "problem      %dD %s, ", pr->dims, plan->scheme->name);
    int64_t n[3] = {pr->n[0], pr->n[1], pr->n[2]};
    print_extent(out, plan, n);
    const int mg = plan->method == PYR_METHOD_MULTIGRID;
    fprintf(out, " %s nodes, %s%lld %s", pyr_precision_name(pr->precision), poisson ? "at most " : "", (long long)pr->steps,
            mg ? (pr->poisson.cycle == PYR_CYCLE_F ? "F-cycles" : "V-cycles") : poisson ? "Jacobi sweeps" : "steps");
    if (mg && pr->poisson.tolerance > 0)
        fprintf(out, ", stop once the relative residual max|f + lap u| / %s is below %g (checked every cycle)",
                pr->poisson.rhs != PYR_RHS_ZERO ? "max|f|" : "(the initial field's)", pr->poisson.tolerance);
    else if (poisson && plan->check_every > 0)
        fprintf(out, ", stop once a sweep changes u by less than %g (checked every %lld sweeps)", pr->poisson.tolerance,
                (long long)plan->check_every);
    if (poisson && pyr_poisson_has_neumann(pr)) {
        char faces[512];
        pyr_poisson_faces_text(pr, faces, sizeof faces);
        fprintf(out, "; faces %s", faces);
    }
    fprintf(out, "\n");
    fprintf(out, "fields       ");
    for (int f = 0, k = 0; f < plan->scheme->nfields; f++) {
        if (!((plan->fields >> f) & 1)) continue;
        fprintf(out, "%s%s (%s)", k++ ? ", " : "", plan->scheme->field[f].name,
                plan->scheme->field[f].role == PYR_FIELD_INPUT ? "input: uploaded, never downloaded" : "state");
    }
    fprintf(out, "\n");
    if (mg) fprintf(out, "method       %s on the %s backend, its own smoothing, residual and transfer kernels\n", pyr_method_name(plan->method),
                    plan->ops->name);
    else fprintf(out, "method       %s on the %s backend, kernel %s\n", pyr_method_name(plan->method), plan->ops->name, info.kernel);
    if (info.host_memory != PYR_HOST_AUTO) {
        char hb[32];
        pyr_format_bytes(info.host_bytes, hb, sizeof hb);
        if (info.host_memory == PYR_HOST_PIN)
            fprintf(out, "host memory  the %s of host fields pinned (registered) for full-speed copies; staged through pinned "
                         "buffers if registering fails (the run says which)%s%s\n", hb, plan->host_why[0] ? "; " : "", plan->host_why);
        else
            fprintf(out, "host memory  the %s of host fields stay pageable: every copy staged through pinned buffers%s%s\n", hb,
                    plan->host_why[0] ? "; " : "", plan->host_why);
    }
    if (mg) return print_multigrid(plan, out, used, budget);
    if (plan->resident) {
        fprintf(out, "pieces       the whole grid stays on the device (%lld steps per chunk)\n", (long long)plan->height);
    } else {
        fprintf(out, "decomposition %s: %lld pieces per pass", piece_noun(plan), (long long)info.tasks_per_pass);
        if (plan->decomp == PYR_DECOMP_BLOCKS) {
            fprintf(out, " (");
            print_extent(out, plan, info.pieces);
            fprintf(out, ")");
        }
        if (plan->decomp == PYR_DECOMP_SKEWED && pyr_skew_inplace(plan))
            fprintf(out, "\nskewed       %lld planes per piece at a pass's first layer, leaning back one per step; each piece sweeps its "
                         "planes of every step in place (one kernel call), the planes below them handed to the next in the ring",
                    (long long)plan->skew_size);
        else if (plan->decomp == PYR_DECOMP_SKEWED)
            fprintf(out, "\nskewed       %lld planes per piece at a pass's first layer, leaning back one per step; calls of %d steps "
                         "(the kernel's launch), %d halo stores of %lld planes%s",
                    (long long)plan->skew_size, plan->skew_k, pyr_skew_stores(plan, plan->height), (long long)pyr_skew_store_planes(plan),
                    plan->previous ? " (two layers: the sweeps read the layer before)" : "");
        fprintf(out, "\npiece        on device ");
        print_extent(out, plan, info.piece_extent);
        fprintf(out, ", result ");
        int64_t r[3];
        for (int a = 0; a < 3; a++)
            r[a] = plan->split[a] || plan->decomp == PYR_DECOMP_SKEWED ? info.result_extent[a] : info.piece_extent[a];
        print_extent(out, plan, r);
        fprintf(out, " (largest)\n");
        int64_t last = pr->steps % plan->height;
        fprintf(out, "height       %lld steps per pass, %lld passes", (long long)plan->height, (long long)info.passes);
        if (last && plan->options.snapshot_every == 0) fprintf(out, " (last pass %lld steps)", (long long)last);
        fprintf(out, "\n");
    }
    if (plan->resident)
        fprintf(out, "device       %s of budget %s: the grid in 2 time layers%s%s", used, budget, plan->nfixed ? " and its inputs" : "",
                plan->scratch_bytes ? " and 2 work vectors of its size (cuBLAS operands)" : "");
    else if (plan->decomp == PYR_DECOMP_SKEWED && pyr_skew_inplace(plan)) {
        fprintf(out, "device       %s of budget %s: a ring of %lld planes per field (state, auxiliaries, inputs) for %d piece%s in flight", used,
                budget, (long long)pyr_skew_ring_planes(plan, plan->height), info.slots, info.slots > 1 ? "s" : "");
    } else {
        fprintf(out, "device       %s of budget %s: %d buffers of one time layer for %d piece%s in flight", used, budget,
                info.slots + plan->spares, info.slots, info.slots > 1 ? "s" : "");
        /* skewed pieces share one ring of each input's planes; the other decompositions give each piece an input buffer */
        if (plan->nfixed && plan->decomp == PYR_DECOMP_SKEWED)
            fprintf(out, ", and a ring of %lld planes per input", (long long)pyr_skew_ring_planes(plan, plan->height));
        else if (plan->nfixed)
            fprintf(out, ", with an input buffer each");
    }
    if (plan->faces_bytes) {
        char fb[32];
        pyr_format_bytes(plan->faces_bytes, fb, sizeof fb);
        fprintf(out, " + %s resident boundary faces", fb);
    }
    fprintf(out, "\n");
    print_counts(out, "             ", &info.counts, pr->steps);
    fprintf(out, "redundancy   computed/useful %.4f", info.redundancy);
    if (!plan->resident) fprintf(out, "; paper's (R-n)/(R-2n)%s = %.4f", plan->decomp == PYR_DECOMP_BLOCKS ? " per axis, product" : "",
                                paper_redundancy(plan, &info));
    fprintf(out, "\n");

    if (!plan->resident && plan->method != PYR_METHOD_TRIVIAL) {
        pyr_plan_t *triv = NULL;
        if (pyr_plan_sibling(plan, PYR_METHOD_TRIVIAL, plan->decomp, 1, &triv) == PYR_OK) {
            pyr_plan_info_t ti;
            pyr_plan_info_single(triv, &ti);
            fprintf(out, "trivial      same budget, height 1: %lld pieces per pass, piece ", (long long)ti.tasks_per_pass);
            print_extent(out, triv, ti.piece_extent);
            fprintf(out, "\n");
            print_counts(out, "             ", &ti.counts, pr->steps);
            double moved_p = (double)(info.counts.uploaded + info.counts.downloaded);
            double moved_t = (double)(ti.counts.uploaded + ti.counts.downloaded);
            fprintf(out, "versus trivial the pyramid moves %.3gx fewer values and computes %.3gx as many\n",
                    moved_p > 0 ? moved_t / moved_p : 0.0, ti.counts.computed ? (double)info.counts.computed / (double)ti.counts.computed : 0.0);
            pyr_plan_free(&triv);
        } else {
            fprintf(out, "trivial      does not fit the same budget: %s\n", pyr_last_error());
        }
    }
    print_model(plan, out);
    return PYR_OK;
}

void pyr_report_plan_multigrid(pyr_json_t *j, const char *key, const pyr_plan_t *plan)
{
    pyr_mg_hierarchy_t hy;
    pyr_mg_stream_t s;
    if (!plan || plan->method != PYR_METHOD_MULTIGRID || pyr_mg_hierarchy(&plan->problem, &hy) != PYR_OK ||
        pyr_mg_stream_plan(&plan->problem, &hy, plan->budget, &s) != PYR_OK) {
        pyr_clear_error();
        pyr_json_null(j, key);
        return;
    }
    pyr_json_object(j, key);
    pyr_json_string(j, "cycle", hy.cycle == PYR_CYCLE_F ? "f" : "v");
    pyr_json_string(j, "smoother", hy.smoother == PYR_SMOOTH_JACOBI ? "jacobi" : "chebyshev");
    pyr_json_int(j, "pre_smooth", hy.pre);
    pyr_json_int(j, "post_smooth", hy.post);
    pyr_json_int(j, "coarsest_sweeps", hy.coarse_sweeps);
    int64_t v[PYR_MG_MAX_LEVELS] = {0};
    mg_visits(&hy, 0, hy.cycle, v);
    pyr_json_array(j, "levels"); /* the finest first */
    for (int l = 0; l < hy.nlevels; l++) {
        pyr_json_object(j, NULL);
        pyr_json_array(j, "n"); /* x, y, z as the plan's extents */
        for (int a = 0; a < hy.dims; a++) pyr_json_int(j, NULL, hy.level[l].n[a]);
        pyr_json_end(j);
        pyr_json_bool(j, "streamed", l < s.streamed);
        if (l < s.streamed) {
            const int64_t n = hy.level[l].n[s.axis];
            pyr_json_int(j, "slab_planes", s.slab[l] < n ? s.slab[l] : n);
            pyr_json_int(j, "halo_planes", s.halo[l]);
            pyr_json_int(j, "passes_per_cycle", l ? 2 * v[l] : 1);
        }
        pyr_json_end(j);
    }
    pyr_json_end(j);
    pyr_json_int(j, "streamed_levels", s.streamed);
    if (s.streamed) {
        pyr_json_string(j, "slab_axis", (const char[]){"xyz"[s.axis], 0});
        if (plan->problem.poisson.rhs != PYR_RHS_ZERO) pyr_json_bool(j, "f_on_device", s.f_resident);
        else pyr_json_null(j, "f_on_device");
    } else {
        pyr_json_null(j, "slab_axis");
        pyr_json_bool(j, "f_on_device", plan->problem.poisson.rhs != PYR_RHS_ZERO);
    }
    pyr_json_uint(j, "device_bytes", s.device_bytes);
    pyr_json_uint(j, "host_bytes", s.host_bytes);
    pyr_json_uint(j, "moved_bytes_per_cycle", s.moved);
    pyr_json_real(j, "sweeps_per_cycle", mg_cycle_sweeps(&hy));
    pyr_json_end(j);
}
