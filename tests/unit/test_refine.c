/* plan = refine (issue 51): the run's first passes try the model's best
 * candidates, the rest runs with the fastest, the winner goes into the
 * wisdom.  Every check on the CPU backend: the same bits as a plain run
 * (heat 2D and 3D, Poisson with checks and a tolerance, Maxwell's probe
 * series continuous across the changes of plan), every step run exactly
 * once, the notice naming the candidates and their times, the second run of
 * the shape taking the wisdom's choice without trials, and the refusals. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "maxwell_util.h"
#include "plan/plan.h"
#include "plan/model.h"
#include "poisson_util.h"
#include "tune/tune.h"
#include "tune/wisdom.h"

/* What the hooks saw: the pass ends in order, and snapshots. */
typedef struct {
    int64_t last, passes, regressions, total;
    int64_t snaps[64];
    int nsnaps;
} seen_t;

static int on_progress(void *user, int64_t done, int64_t total)
{
    seen_t *s = user;
    if (done <= s->last) s->regressions++;
    s->last = done;
    s->passes++;
    s->total = total;
    return 0;
}

static pyr_status_t on_snapshot(void *user, const pyr_field_t *field, int64_t step)
{
    (void)field;
    seen_t *s = user;
    if (s->nsnaps < 64) s->snaps[s->nsnaps++] = step;
    return PYR_OK;
}

/* A heat run of p under o through pyr_execute_fields; the plan's notice after the run into notice. */
static pyr_field_t *heat_run(const pyr_problem_t *p, const pyr_options_t *o, pyr_run_info_t *run, seen_t *seen, char *notice,
                             size_t nsize, pyr_plan_mode_t *mode_after)
{
    pyr_plan_t *plan = NULL;
    pyr_field_t *u = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    CHECK_OK(st);
    if (st == PYR_OK) st = pyr_field_create(p, &u);
    if (st == PYR_OK) st = pyr_field_init(u, p);
    pyr_hooks_t hooks = {.progress = on_progress, .snapshot = on_snapshot, .user = seen};
    pyr_field_t *fields[1] = {u};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, 1, &hooks, run);
    CHECK_OK(st);
    if (plan && notice) snprintf(notice, nsize, "%s", plan->notice);
    if (plan && mode_after) *mode_after = plan->options.plan_mode;
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) pyr_field_destroy(&u);
    return u;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle)) n++;
    return n;
}

/* Heat: bits, steps, counts, notice; then the wisdom's choice and no trials. */
static void test_heat(int dims, const int64_t n[3], int64_t steps, uint64_t memory, int64_t snapshot_every)
{
    pyr_wisdom_forget();
    pyr_problem_t p;
    make_problem(&p, dims, n, PYR_FLOAT, steps, PYR_INIT_RANDOM, 7);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_PYRAMID;
    o.memory = memory;
    o.snapshot_every = snapshot_every;
    o.plan_mode = PYR_PLAN_REFINE;

    /* the plan names its candidates before the run */
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan) {
        CHECK(strstr(plan->notice, "refine: candidates ") && plan->options.plan_mode == PYR_PLAN_REFINE,
              "%dD: the plan does not name refine's candidates: '%s'", dims, plan->notice);
        CHECK(count_of(plan->notice, " h=") >= 2, "%dD: fewer than two candidates: '%s'", dims, plan->notice);
    }
    pyr_plan_destroy(&plan);

    pyr_status_t st;
    pyr_field_t *ref = naive_reference(&p, &st);
    seen_t seen = {0}, plain_seen = {0};
    pyr_run_info_t run, plain;
    char notice[1024] = "";
    pyr_plan_mode_t after = PYR_PLAN_REFINE;
    pyr_field_t *u = heat_run(&p, &o, &run, &seen, notice, sizeof notice, &after);
    CHECK(u && ref && first_difference(u, ref) < 0, "%dD refine: not the naive method's bits (first difference at %lld)", dims,
          u && ref ? (long long)first_difference(u, ref) : -1LL);
    /* every step run once: the steps, the pass ends in order ending at the last step, exactly the useful node updates */
    CHECK(run.steps == steps && seen.last == steps && seen.regressions == 0 && seen.total == steps,
          "%dD refine: %lld steps run, pass ends up to %lld of %lld, %lld out of order", dims, (long long)run.steps, (long long)seen.last,
          (long long)seen.total, (long long)seen.regressions);
    uint64_t interior = 1;
    for (int a = 0; a < dims; a++) interior *= (uint64_t)(n[a] - 2);
    CHECK(run.counts.computed - run.counts.redundant == interior * (uint64_t)steps,
          "%dD refine: %llu useful node updates, expected %llu (a step repeated or lost)", dims,
          (unsigned long long)(run.counts.computed - run.counts.redundant), (unsigned long long)(interior * (uint64_t)steps));
    CHECK(strstr(notice, "refine: candidates ") && strstr(notice, "; chose ") && strstr(notice, "ms/step vs ") &&
              strstr(notice, "recorded in the wisdom"),
          "%dD refine: the notice after the run does not say what was chosen and why: '%s'", dims, notice);
    fprintf(stderr, "%dD heat: %s\n", dims, notice);
    CHECK(after == PYR_PLAN_ESTIMATE, "%dD refine: the plan still tries candidates after its run", dims);
    /* snapshots at the same steps as a plain run's */
    pyr_options_t oe = o;
    oe.plan_mode = PYR_PLAN_ESTIMATE;
    pyr_field_t *e = heat_run(&p, &oe, &plain, &plain_seen, NULL, 0, NULL);
    CHECK(seen.nsnaps == plain_seen.nsnaps && !memcmp(seen.snaps, plain_seen.snaps, (size_t)seen.nsnaps * sizeof seen.snaps[0]),
          "%dD refine: %d snapshots, the plain run %d (or at other steps)", dims, seen.nsnaps, plain_seen.nsnaps);
    pyr_field_destroy(&e);

    /* recorded: the next plan of this shape takes it and its run tries nothing */
    pyr_plan_t *again = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &again));
    if (again) {
        CHECK(strstr(again->notice, "measured earlier on this machine (wisdom)") && !strstr(again->notice, "refine: candidates") &&
                  again->options.plan_mode == PYR_PLAN_ESTIMATE,
              "%dD refine: the second plan did not take the wisdom's choice: '%s'", dims, again->notice);
        char chosen[128];
        const char *c = strstr(notice, "; chose ");
        snprintf(chosen, sizeof chosen, "%s", c ? c + 8 : "");
        char *cut = strstr(chosen, " (");
        if (cut) *cut = 0;
        char mine[128];
        snprintf(mine, sizeof mine, "%s h=%lld slots=%d", pyr_decomp_name(again->decomp), (long long)again->height, again->slots);
        CHECK(!strcmp(chosen, mine), "%dD refine: the wisdom's choice %s is not the winner %s", dims, mine, chosen);
    }
    pyr_plan_destroy(&again);
    seen_t seen2 = {0};
    pyr_field_t *u2 = heat_run(&p, &o, &run, &seen2, notice, sizeof notice, NULL);
    CHECK(u2 && ref && first_difference(u2, ref) < 0, "%dD refine with the wisdom's choice: not the naive bits", dims);
    CHECK(!strstr(notice, "chose") && !strstr(notice, "refine:"), "%dD: the second run tried candidates again: '%s'", dims, notice);
    pyr_field_destroy(&u2);
    pyr_field_destroy(&u);
    pyr_field_destroy(&ref);
}

/* A run too short for the trials keeps the model's choice and says so. */
static void test_short(void)
{
    pyr_wisdom_forget();
    pyr_problem_t p;
    const int64_t n[3] = {257, 257, 1};
    make_problem(&p, 2, n, PYR_FLOAT, 3, PYR_INIT_RANDOM, 3);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_PYRAMID;
    o.memory = 64 << 10;
    o.plan_mode = PYR_PLAN_REFINE;
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan)
        CHECK(plan->options.plan_mode == PYR_PLAN_ESTIMATE && strstr(plan->notice, "refine: ") &&
                  (strstr(plan->notice, "too short") || strstr(plan->notice, "one candidate")),
              "a 3-step run: '%s'", plan->notice);
    pyr_plan_destroy(&plan);
    pyr_status_t st;
    pyr_field_t *ref = naive_reference(&p, &st);
    seen_t seen = {0};
    pyr_run_info_t run;
    pyr_field_t *u = heat_run(&p, &o, &run, &seen, NULL, 0, NULL);
    CHECK(u && ref && first_difference(u, ref) < 0 && run.steps == 3, "a short refine run: not the naive bits");
    pyr_field_destroy(&u);
    pyr_field_destroy(&ref);
}

/* Poisson with checks every 10 sweeps and a tolerance: the same bits, sweeps and change as the naive method. */
static void test_poisson(void)
{
    pyr_wisdom_forget();
    const int64_t n[3] = {129, 129, 1};
    const double len[3] = {1, 1, 1};
    double tolerance = 0;
    for (int tol = 0; tol < 2; tol++) {
        pyr_wisdom_forget();
        pyr_problem_t p;
        pyr_run_info_t rr, ri;
        pyr_status_t st;
        if (tol) { /* a tolerance the run reaches at its check of sweep 200 */
            make_poisson(&p, 2, n, len, PYR_DOUBLE, 200, 0, 10, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
            pyr_field_t *r_half = poisson_reference(&p, NULL, &rr, &st);
            tolerance = rr.change * 1.000001;
            pyr_field_destroy(&r_half);
        }
        make_poisson(&p, 2, n, len, PYR_DOUBLE, 400, tolerance, 10, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
        pyr_field_t *ref = poisson_reference(&p, NULL, &rr, &st);
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.method = PYR_METHOD_PYRAMID;
        o.memory = 48 << 10;
        o.plan_mode = PYR_PLAN_REFINE;
        pyr_plan_t *plan = NULL;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        if (plan) CHECK(strstr(plan->notice, "refine: candidates "), "poisson: no candidates named: '%s'", plan->notice);
        pyr_plan_destroy(&plan);
        pyr_field_t *u = solve_poisson(&p, &o, NULL, &ri, &st);
        CHECK_OK(st);
        CHECK(u && ref && first_difference(u, ref) < 0, "poisson (tolerance %g) refine: not the naive bits", p.poisson.tolerance);
        CHECK(ri.steps == rr.steps && ri.checked == rr.checked && ri.converged == rr.converged && ri.change == rr.change,
              "poisson refine: %lld sweeps (converged %d, change %g), naive %lld (%d, %g)", (long long)ri.steps, ri.converged, ri.change,
              (long long)rr.steps, rr.converged, rr.change);
        if (tol) CHECK(rr.converged && rr.steps == 200, "the tolerance case should converge at sweep 200 (%lld)", (long long)rr.steps);
        pyr_field_destroy(&u);
        pyr_field_destroy(&ref);
    }
}

/* Chebyshev sweeps (weights from the sweep index, the layer two sweeps back carried by the pieces of
 * one run): refine keeps the model's choice and says why, and the run gives the naive bits (trials in
 * runs of their own restarted both and gave other bits). */
static void test_chebyshev(void)
{
    pyr_wisdom_forget();
    const int64_t n[3] = {129, 129, 1};
    const double len[3] = {1, 1, 1};
    pyr_problem_t p;
    pyr_run_info_t rr, ri;
    pyr_status_t st;
    make_poisson(&p, 2, n, len, PYR_DOUBLE, 3000, 0, 50, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
    p.poisson.iteration = PYR_ITER_CHEBYSHEV;
    pyr_field_t *ref = poisson_reference(&p, NULL, &rr, &st);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_PYRAMID;
    o.memory = 48 << 10;
    o.plan_mode = PYR_PLAN_REFINE;
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan) CHECK(strstr(plan->notice, "sweep index"), "chebyshev refine: the notice does not say why it keeps the model's choice: '%s'",
                    plan->notice);
    pyr_plan_destroy(&plan);
    pyr_field_t *u = solve_poisson(&p, &o, NULL, &ri, &st);
    CHECK_OK(st);
    CHECK(u && ref && first_difference(u, ref) < 0, "chebyshev refine: not the naive bits");
    CHECK(ri.steps == rr.steps && ri.change == rr.change, "chebyshev refine: %lld sweeps (change %g), naive %lld (%g)", (long long)ri.steps,
          ri.change, (long long)rr.steps, rr.change);
    pyr_field_destroy(&u);
    pyr_field_destroy(&ref);
}

/* Maxwell in a PEC box from a random field, with probes: the series continuous across the changes of
 * plan and the same bits as the naive method; with a source the run keeps the model's choice. */
static void test_maxwell(void)
{
    pyr_wisdom_forget();
    const int64_t n[3] = {97, 97, 1};
    const double len[3] = {1, 1, 1};
    for (int with_source = 0; with_source < 2; with_source++) {
        pyr_wisdom_forget();
        pyr_problem_t p;
        make_maxwell(&p, 2, n, len, 0, PYR_DOUBLE, 240, 0.5);
        p.init = PYR_INIT_RANDOM;
        p.seed = 5;
        p.maxwell.nprobes = 3;
        for (int i = 0; i < 3; i++) {
            p.maxwell.probes[i].component = i == 0 ? PYR_EZ : i == 1 ? PYR_HX : PYR_HY;
            p.maxwell.probes[i].node[0] = 15 + 30 * i;
            p.maxwell.probes[i].node[1] = 80 - 25 * i;
        }
        if (with_source) {
            p.maxwell.nsources = 1;
            pyr_source_t *s = &p.maxwell.sources[0];
            memset(s, 0, sizeof *s);
            s->component = PYR_EZ;
            s->node[0] = s->node_end[0] = 48;
            s->node[1] = s->node_end[1] = 48;
            s->waveform = PYR_WAVE_GAUSSIAN;
            s->amplitude = 1;
            s->width = 10 * 0.004;
            s->delay = 30 * 0.004;
        }
        mx_result_t ref, got;
        memset(&ref, 0, sizeof ref);
        memset(&got, 0, sizeof got);
        CHECK_OK(mx_reference(&p, NULL, &ref));
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.method = PYR_METHOD_PYRAMID;
        o.memory = 128 << 10;
        o.plan_mode = PYR_PLAN_REFINE;
        pyr_plan_t *plan = NULL;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        if (plan && !with_source) CHECK(strstr(plan->notice, "refine: candidates "), "maxwell: no candidates named: '%s'", plan->notice);
        if (plan && with_source)
            CHECK(plan->options.plan_mode == PYR_PLAN_ESTIMATE && strstr(plan->notice, "source") && strstr(plan->notice, "restart"),
                  "maxwell with a source: refine should say it keeps the model's choice: '%s'", plan->notice);
        pyr_plan_destroy(&plan);
        CHECK_OK(mx_run(&p, &o, NULL, &got)); /* mx_probe_cb fails unless each pass's series starts where the last ended */
        CHECK(got.nseries == 240 && ref.nseries == 240 && got.nprobes == 3 &&
                  !memcmp(got.probes, ref.probes, (size_t)(240 * 3) * sizeof *got.probes),
              "maxwell (source %d) refine: the probe series differ from the naive method's (%lld steps)", with_source,
              (long long)got.nseries);
        for (int c = 0; c < 6; c++)
            if (ref.c[c]) CHECK(got.c[c] && first_difference(got.c[c], ref.c[c]) < 0, "maxwell refine: component %d differs", c);
        CHECK(got.run.steps == 240, "maxwell refine: %lld steps", (long long)got.run.steps);
        mx_free(&ref);
        mx_free(&got);
    }
}

/* A runtime that keeps three pieces in flight (the CPU runtime with its default raised, as the CUDA
 * runtime's): refine's candidates weigh two slots for every decomposition, while the plan stays the
 * model's choice as estimate makes it; a run of such a plan gives the bits and records nothing (its
 * constants were given). */
static void test_slots(void)
{
    pyr_wisdom_forget();
    pyr_device_ops_t three = pyr_device_cpu;
    three.default_slots = 3;
    const double scale[][2] = {{1, 1}, {4, 1}, {0.25, 1}};
    int two_slots = 0;
    for (size_t ki = 0; ki < sizeof scale / sizeof scale[0]; ki++) {
        pyr_problem_t p;
        const int64_t n[3] = {1025, 1025, 1};
        make_problem(&p, 2, n, PYR_FLOAT, 2000, PYR_INIT_SINE, 0);
        pyr_model_constants_t k = pyr_model_default(PYR_BACKEND_CUDA, 2, PYR_FLOAT);
        k.up *= scale[ki][0], k.down *= scale[ki][0], k.up_both *= scale[ki][0], k.down_both *= scale[ki][0];
        for (int i = 0; i < PYR_MODEL_NLAYERS; i++) k.compute[i] *= scale[ki][1];
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.method = PYR_METHOD_PYRAMID;
        o.memory = (uint64_t)(n[0] * n[1]) * 4 / 4;
        pyr_plan_t *est = NULL, *ref = NULL;
        CHECK_OK(pyr_plan_create_on(&p, &o, &three, &k, PYR_MODEL_OVERLAPPED, &est));
        o.plan_mode = PYR_PLAN_REFINE;
        CHECK_OK(pyr_plan_create_on(&p, &o, &three, &k, PYR_MODEL_OVERLAPPED, &ref));
        if (est && ref) {
            CHECK(est->decomp == ref->decomp && est->height == ref->height && est->slots == ref->slots,
                  "case %zu: refine's plan %s h=%lld slots=%d is not estimate's %s h=%lld slots=%d", ki, pyr_decomp_name(ref->decomp),
                  (long long)ref->height, ref->slots, pyr_decomp_name(est->decomp), (long long)est->height, est->slots);
            candidate_t pick[PYR_REFINE_MAX];
            int np = 0;
            CHECK_OK(pyr_tune_refine_candidates(ref, pick, PYR_REFINE_MAX, &np));
            CHECK(np >= 1 && pick[0].decomp == ref->decomp && pick[0].height == ref->height && pick[0].slots == ref->slots,
                  "case %zu: the first candidate is not the plan's choice", ki);
            for (int i = 0; i < np; i++) two_slots += pick[i].slots == 2 && pick[i].decomp != PYR_DECOMP_SKEWED;
        }
        pyr_plan_destroy(&est);
        pyr_plan_destroy(&ref);
    }
    CHECK(two_slots > 0, "no case tries two slots of strips or blocks");

    /* a small run on that runtime: the bits, and the winner not recorded */
    pyr_problem_t p;
    const int64_t n[3] = {257, 257, 1};
    make_problem(&p, 2, n, PYR_FLOAT, 200, PYR_INIT_RANDOM, 9);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_PYRAMID;
    o.memory = 64 << 10;
    o.plan_mode = PYR_PLAN_REFINE;
    const pyr_model_constants_t k = pyr_model_default(PYR_BACKEND_CPU, 2, PYR_FLOAT);
    pyr_plan_t *plan = NULL;
    pyr_field_t *u = NULL;
    pyr_status_t st;
    pyr_field_t *ref = naive_reference(&p, &st);
    CHECK_OK(pyr_plan_create_on(&p, &o, &three, &k, PYR_MODEL_SERIAL, &plan));
    if (plan && plan->options.plan_mode == PYR_PLAN_REFINE) {
        CHECK_OK(pyr_field_create(&p, &u));
        CHECK_OK(pyr_field_init(u, &p));
        pyr_run_info_t run;
        CHECK_OK(pyr_execute(plan, u, NULL, &run.counts));
        CHECK(u && ref && first_difference(u, ref) < 0, "refine on three slots: not the naive bits");
        CHECK(strstr(plan->notice, "; chose ") && strstr(plan->notice, "not recorded: the plan's constants were given"),
              "refine with given constants: '%s'", plan->notice);
    } else {
        CHECK(0, "the small run on three slots tries nothing: '%s'", plan ? plan->notice : "");
    }
    pyr_field_destroy(&u);
    pyr_field_destroy(&ref);
    pyr_plan_destroy(&plan);
}

/* Over several devices (parts) refine is refused, saying what works. */
static void test_refused(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {257, 257, 1};
    make_problem(&p, 2, n, PYR_FLOAT, 100, PYR_INIT_RANDOM, 3);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.plan_mode = PYR_PLAN_REFINE;
    snprintf(o.devices, sizeof o.devices, "0,0");
    pyr_plan_t *plan = NULL;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_UNSUPPORTED, "run.plan = estimate or measure");
    CHECK(!plan, "a refused plan was returned");
    CHECK(strstr(pyr_last_error(), "several devices or MPI ranks") != NULL, "the refusal does not say why: %s", pyr_last_error());
    o.devices[0] = 0;
    o.plan_mode = (pyr_plan_mode_t)7;
    CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_CONFIG, "use estimate, measure or refine");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define TIMED(call)                                                       \
    do {                                                                  \
        const double t0_ = now_s();                                       \
        call;                                                             \
        fprintf(stderr, "%-40s %.1f s\n", #call, now_s() - t0_);          \
    } while (0)

int main(void)
{
    char dir[] = "/tmp/pyr-refine-XXXXXX", path[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/wisdom", dir);
    setenv("PYRGRID_WISDOM", path, 1);
    const int64_t n2[3] = {257, 257, 1}, n3[3] = {34, 34, 34};
    TIMED(test_heat(2, n2, 240, 64 << 10, 0));
    TIMED(test_heat(2, n2, 240, 64 << 10, 40));
    TIMED(test_heat(2, n2, 36, 64 << 10, 0)); /* one pass of each candidate: the trials take most of the run */
    TIMED(test_heat(3, n3, 100, 96 << 10, 0));
    TIMED(test_short());
    TIMED(test_poisson());
    TIMED(test_chebyshev());
    TIMED(test_maxwell());
    TIMED(test_slots());
    TIMED(test_refused());
    pyr_wisdom_forget();
    unlink(path);
    rmdir(dir);
    return check_report();
}
