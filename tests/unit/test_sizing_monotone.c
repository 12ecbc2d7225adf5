/* Property test of plan sizing against the memory budget: over random
 * problems (heat 1D/2D/3D, Poisson with and without checks, Maxwell 2D/3D
 * with materials, CPML and sources), precisions, methods, decompositions,
 * heights (fixed or auto), pieces in flight and piece extents, on the CPU's
 * buffer layout and on the CUDA one (rows padded to 128 bytes, three slots:
 * a runtime of the CPU backend with the CUDA layout's parameters, so no GPU
 * is needed; sizing is host code):
 *   - a plan at budget B plans at every budget above B (a user who raises
 *     the budget never loses the plan);
 *   - a refusal's "use memory >= N" names the smallest budget that plans:
 *     N is more than the refused budget and no more than a budget that
 *     plans (and N itself plans).
 * The smallest budget T that plans is found by bisection; budgets close
 * above T (alignment steps), far above it and below it are then tried.
 * Where a GPU is usable, the cases of the CUDA layout also plan on the CUDA
 * runtime itself (its layout and its kernels' work memory).
 *
 *   test_sizing_monotone [cases] [seed]   (defaults: 100 1)
 *
 * PYR_TEST_VERBOSE=1 names each case before it runs. */
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "maxwell_util.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "poisson_util.h"
#include "tune/tune.h"

static pyr_device_ops_t cuda_layout; /* the CPU runtime with the CUDA backend's buffer layout */

typedef struct {
    const pyr_device_ops_t *ops;
    pyr_backend_kind_t model_kind;
} layout_t;

static pyr_status_t plan_at(const pyr_problem_t *p, pyr_options_t o, const layout_t *L, uint64_t budget, pyr_plan_t **out)
{
    o.memory = budget;
    o.backend = L->ops->kind;
    pyr_model_constants_t k = pyr_model_default(L->model_kind, p->dims, p->precision);
    return pyr_plan_create_on(p, &o, L->ops, &k, PYR_MODEL_AUTO, out);
}

/* Whether it plans at `budget`; a refusal's message into msg. */
static int plans(const pyr_problem_t *p, const pyr_options_t *o, const layout_t *L, uint64_t budget, pyr_status_t *st, char *msg,
                 size_t size)
{
    pyr_plan_t *plan = NULL;
    pyr_clear_error();
    *st = plan_at(p, *o, L, budget, &plan);
    if (msg) snprintf(msg, size, "%s", *st == PYR_OK ? "" : pyr_last_error());
    pyr_plan_destroy(&plan);
    pyr_clear_error();
    return *st == PYR_OK;
}

/* The least "memory >= N" a message names (bytes, as formatted: 4 significant digits), 0 if none. */
static double named_need(const char *msg)
{
    double best = 0;
    for (const char *s = strstr(msg, "memory >= "); s; s = strstr(s + 1, "memory >= ")) {
        double v = 0;
        char unit[8] = "";
        if (sscanf(s + 10, "%lf %7[A-Za-z]", &v, unit) != 2) continue;
        double scale = !strcmp(unit, "B") ? 1 : !strcmp(unit, "KiB") ? 1024.0 : !strcmp(unit, "MiB") ? 1048576.0
                     : !strcmp(unit, "GiB") ? 1073741824.0 : !strcmp(unit, "TiB") ? 1099511627776.0 : 0;
        if (scale == 0) continue;
        v *= scale;
        if (best == 0 || v < best) best = v;
    }
    return best;
}

/* pyr_format_bytes keeps 4 significant digits: a named need is within this fraction of the bytes (plus a byte). */
#define FORMAT_TOL 6e-4

/* Where the method or the decomposition is automatic, the refusal is the choice's: methods/pyramid.c,
 * methods/trivial.c (decompositions) and tune/create.c (method = auto) keep their candidates' refusals
 * through pyr_refusal_note (plan/planner.h) and name the least need, so the named need is checked to be
 * the least there too (reporting one candidate's, e.g. slabs' where blocks plan in a budget 25 times
 * smaller, fails here). */

static int g_planned, g_refused_named, g_fixed_h, g_auto_h, g_cases_on[2], g_skipped;

/* A random problem and options; a label naming them. */
static void draw_case(rng_t *r, pyr_problem_t *p, pyr_options_t *o, char *label, size_t size)
{
    const int eq = (int)rng_range(r, 0, 5); /* 0-2 heat, 3 Poisson, 4-5 Maxwell */
    int dims = eq >= 4 ? (int)rng_range(r, 2, 3) : (int)rng_range(r, 1, 3);
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        const int64_t top = dims == 1 ? 3000 : dims == 2 ? (rng_range(r, 0, 3) ? 120 : 700) : 40;
        n[a] = rng_range(r, eq >= 4 ? 6 : 3, top);
    }
    /* widths whose padded rows sit on the layouts' steps: 2 KiB rows (CPU skew), 128-byte multiples (CUDA) */
    if (dims >= 2 && rng_range(r, 0, 3) == 0) n[0] = (int64_t)rng_range(r, 1, 4) * (rng_range(r, 0, 1) ? 256 : 16) + rng_range(r, -2, 2);
    const pyr_precision_t prec = rng_range(r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    const int64_t steps = rng_range(r, 0, 4) == 0 ? rng_range(r, 60, 200) : rng_range(r, 1, 40);
    if (eq <= 2) {
        make_problem(p, dims, n, prec, steps, PYR_INIT_RANDOM, rng_next(r));
    } else if (eq == 3) {
        const int checks = (int)rng_range(r, 0, 1);
        make_poisson(p, dims, n, NULL, prec, steps, checks ? 1e-6 : 0, checks ? rng_range(r, 1, 30) : 20, PYR_RHS_SINE, PYR_INIT_ZERO,
                     rng_next(r));
    } else {
        double len[3] = {1, 1, 1};
        for (int a = 0; a < dims; a++) len[a] = mx_frac(r, 0.5, 3.0);
        int drawn[3];
        mx_random_problem(r, dims, n, len, prec, p, drawn);
    }
    pyr_options_default(o);
    const int meth = (int)rng_range(r, 0, 9);
    o->method = meth == 0 ? PYR_METHOD_AUTO : meth == 1 ? PYR_METHOD_TRIVIAL : meth == 2 ? PYR_METHOD_NAIVE : PYR_METHOD_PYRAMID;
    const int dpick = (int)rng_range(r, 0, 4);
    if (p->dims == 1) o->decomposition = dpick == 0 ? PYR_DECOMP_AUTO : PYR_DECOMP_SEGMENTS;
    else if (dpick == 0) o->decomposition = PYR_DECOMP_AUTO;
    else if (dpick == 1) o->decomposition = PYR_DECOMP_BLOCKS;
    else if (dpick == 2 && p->equation == PYR_EQ_HEAT) o->decomposition = PYR_DECOMP_SKEWED;
    else o->decomposition = p->dims == 2 ? PYR_DECOMP_STRIPS : PYR_DECOMP_SLABS;
    if (o->method == PYR_METHOD_PYRAMID && rng_range(r, 0, 2)) o->height = rng_range(r, 1, p->steps > 1 ? p->steps : 1);
    if (o->method != PYR_METHOD_NAIVE) o->slots = (int)rng_range(r, 0, 3); /* 0 = the backend's */
    if (o->method == PYR_METHOD_PYRAMID && o->height > 0 && o->decomposition != PYR_DECOMP_AUTO && rng_range(r, 0, 5) == 0)
        o->piece = o->decomposition == PYR_DECOMP_SKEWED ? rng_range(r, 1, 40) : 2 * o->height + rng_range(r, 1, 40);
    o->threads = 1;
    snprintf(label, size, "%s %dD %lldx%lldx%lld %s steps=%lld | %s %s height=%lld slots=%d piece=%lld",
             p->equation == PYR_EQ_HEAT ? "heat" : p->equation == PYR_EQ_POISSON ? "poisson" : "maxwell", p->dims, (long long)p->n[0],
             (long long)p->n[1], (long long)p->n[2], pyr_precision_name(prec), (long long)p->steps, pyr_method_name(o->method),
             pyr_decomp_name(o->decomposition), (long long)o->height, o->slots, (long long)o->piece);
}

/* Check the properties for one problem and options on one layout. */
static int check_case(const pyr_problem_t *p, const pyr_options_t *o, const layout_t *L, const char *label, rng_t *r)
{
    const int before = check_failures_;
    pyr_status_t st;
    char msg[2048];
    /* a budget that plans: double until it does (or give up where nothing can: a setting refused for itself) */
    uint64_t hi = 1u << 16;
    while (!plans(p, o, L, hi, &st, msg, sizeof msg)) {
        if (st != PYR_ERR_BUDGET || hi >= (1ull << 40)) {
            g_skipped++;
            return 0;
        }
        hi *= 2;
    }
    uint64_t lo = 1;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (plans(p, o, L, mid, &st, NULL, 0)) hi = mid;
        else lo = mid + 1;
    }
    const uint64_t T = lo; /* plans (the bisection only ends on a budget that did) */
    g_planned++;
    /* above T: steps of a byte, of the layouts' alignments, of a fraction of T, and far above */
    uint64_t above[32];
    int na = 0;
    const uint64_t small[] = {1, 2, 7, 8, 63, 64, 65, 127, 128, 129, 2047, 2048, 2049};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) above[na++] = T + small[i];
    for (int i = 0; i < 12; i++) above[na++] = T + 1 + (uint64_t)rng_range(r, 0, (int64_t)(T / 2 > 1 ? T / 2 : 1));
    for (int i = 0; i < 5; i++) above[na++] = T + (uint64_t)rng_range(r, 1, (int64_t)(16 * T));
    for (int i = 0; i < na; i++) {
        const int ok = plans(p, o, L, above[i], &st, msg, sizeof msg);
        CHECK(ok, "%s, %s layout: plans at %llu bytes but not at %llu: %s", label, L->ops->name, (unsigned long long)T,
              (unsigned long long)above[i], msg);
        if (!ok) break;
    }
    /* below T: refused, naming a need that plans and no more than T */
    uint64_t below[8];
    int nb = 0;
    if (T > 1) below[nb++] = T - 1;
    for (int i = 0; i < 5 && T > 2; i++) below[nb++] = (uint64_t)rng_range(r, 1, (int64_t)(T - 2));
    for (int i = 0; i < nb; i++) {
        if (plans(p, o, L, below[i], &st, msg, sizeof msg)) {
            CHECK(0, "%s, %s layout: plans at %llu bytes but not at %llu (more)", label, L->ops->name, (unsigned long long)below[i],
                  (unsigned long long)(T - 1));
            break;
        }
        CHECK(st == PYR_ERR_BUDGET, "%s, %s layout: refused at %llu bytes with %s (a budget refusal expected): %s", label, L->ops->name,
              (unsigned long long)below[i], pyr_status_name(st), msg);
        const double need = named_need(msg);
        if (need == 0) continue; /* no need named (e.g. a piece extent that cannot hold the height at all) */
        g_refused_named++;
        CHECK(need <= (double)T * (1 + FORMAT_TOL) + 1, "%s, %s layout: refused at %llu bytes naming memory >= %.0f, but %llu plans: %s",
              label, L->ops->name, (unsigned long long)below[i], need, (unsigned long long)T, msg);
        CHECK(need >= (double)T * (1 - FORMAT_TOL) - 1 && need > (double)below[i] * (1 - FORMAT_TOL),
              "%s, %s layout: refused at %llu bytes naming memory >= %.0f, which does not plan (the least that does: %llu): %s", label,
              L->ops->name, (unsigned long long)below[i], need, (unsigned long long)T, msg);
    }
    return check_failures_ != before;
}

/* The case the CUDA Maxwell property test reported (seed 4, case 54): 18x16x10 double, blocks, height 15,
 * 3 slots on the CUDA layout, refused at 2.077 MiB as needing 2.109 MiB.  The sizing is right there: every
 * budget from the 2.109 MiB it names plans, every one below is refused naming it; the smaller budget that
 * test took for one that plans was its bisection's upper bound (8 x the grid's bytes + 1 MiB = 2.055 MiB),
 * which the bisection returns unchecked when nothing below it plans. */
static void reported_case(const layout_t *cuda)
{
    rng_t r = {4 * 7919u + 54u * 104729u};
    const int dims = (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 6, dims == 2 ? 60 : 18);
        len[a] = mx_frac(&r, 0.5, 3.0);
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, dims, n, len, prec, &p, drawn);
    pyr_options_t o;
    pyr_options_default(&o);
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_BLOCKS;
    o.height = 15;
    o.slots = 3;
    o.threads = 1;
    if (p.dims != 3 || p.n[0] != 18 || p.n[1] != 16 || p.n[2] != 10 || p.precision != PYR_DOUBLE || p.steps < 15) {
        /* the helper's draws changed: the shape is gone, the random cases still cover it */
        printf("the reported case's problem is no longer drawn (%lldx%lldx%lld): not checked\n", (long long)p.n[0], (long long)p.n[1],
               (long long)p.n[2]);
        return;
    }
    pyr_status_t st;
    char msg[2048];
    const uint64_t refused = 2178147; /* 2.077 MiB, the budget the property test drew */
    CHECK(!plans(&p, &o, cuda, refused, &st, msg, sizeof msg) && st == PYR_ERR_BUDGET, "reported case: expected a refusal at 2.077 MiB");
    const double need = named_need(msg);
    CHECK(need > (double)refused, "reported case: the refusal names %.0f bytes: %s", need, msg);
    pyr_plan_t *plan = NULL;
    CHECK_OK(plan_at(&p, o, cuda, (uint64_t)(need * (1 + FORMAT_TOL)) + 1, &plan));
    if (plan) {
        CHECK(plan->device_bytes <= (uint64_t)(need * (1 + FORMAT_TOL)) + 1 && (double)plan->device_bytes >= need * (1 - FORMAT_TOL),
              "reported case: the plan keeps %llu bytes, the refusal named %.0f", (unsigned long long)plan->device_bytes, need);
        CHECK(!plans(&p, &o, cuda, plan->device_bytes - 1, &st, NULL, 0), "reported case: plans below its own device bytes");
        CHECK(plans(&p, &o, cuda, plan->device_bytes, &st, NULL, 0), "reported case: refused at its own device bytes");
        pyr_plan_destroy(&plan);
    }
}

int main(int argc, char **argv)
{
    const int cases = argc > 1 ? atoi(argv[1]) : 100;
    const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    cuda_layout = *pyr_device_get(PYR_BACKEND_CPU);
    cuda_layout.name = "cuda-layout";
    cuda_layout.pitch_align_bytes = 128;
    cuda_layout.pitch_skew_bytes = 0;
    cuda_layout.slots = cuda_layout.default_slots = 3;
    const layout_t layouts[2] = {{pyr_device_get(PYR_BACKEND_CPU), PYR_BACKEND_CPU}, {&cuda_layout, PYR_BACKEND_CUDA}};
    const pyr_device_ops_t *gpu = pyr_gpu_count() > 0 ? pyr_device_get(PYR_BACKEND_CUDA) : NULL;
    const layout_t on_gpu = {gpu, PYR_BACKEND_CUDA};
    int gpu_cases = 0;
    reported_case(&layouts[1]);
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) {
        rng_t r = {seed * 6364136223846793005ull + (uint64_t)c * 1442695040888963407ull + 11};
        pyr_problem_t p;
        pyr_options_t o;
        char label[512];
        draw_case(&r, &p, &o, label, sizeof label);
        const int l = (int)rng_range(&r, 0, 1);
        char full[600];
        snprintf(full, sizeof full, "case %d seed %llu: %s", c, (unsigned long long)seed, label);
        if (getenv("PYR_TEST_VERBOSE")) fprintf(stderr, "%s (%s layout)\n", full, layouts[l].ops->name);
        g_cases_on[l]++;
        if (o.height > 0) g_fixed_h++;
        else g_auto_h++;
        failed += check_case(&p, &o, &layouts[l], full, &r);
        if (l == 1 && gpu) {
            rng_t again = r;
            failed += check_case(&p, &o, &on_gpu, full, &again);
            gpu_cases++;
        }
    }
    printf("%d cases (%d on the CPU layout, %d on the CUDA layout; %d with a fixed height): %d planned, %d refusals named a need, "
           "%d skipped (refused for their settings)\n",
           cases, g_cases_on[0], g_cases_on[1], g_fixed_h, g_planned, g_refused_named, g_skipped);
    printf("%d of them also on the CUDA runtime (%s)\n", gpu_cases, gpu ? "a GPU is usable" : "no usable GPU");
    CHECK(failed > 0 || cases < 50 || (g_planned >= cases / 2 && g_refused_named >= cases / 2),
          "too few cases planned (%d) or named a need (%d) to mean much", g_planned, g_refused_named);
    return check_report();
}
