/* plan = refine (issue 51): the run's first passes try the model's best
 * candidates, the rest runs with the fastest, the winner goes into the
 * wisdom.  Every check on the CPU backend: the same bits as a plain run
 * (heat 2D and 3D, Poisson with checks and a tolerance, Chebyshev with and
 * without them, Maxwell with CPML, point sources, TF/SF plane waves, probes
 * and DFT/flux monitors in 2D and 3D: fields, probe series and spectra),
 * every step run exactly once, the notice naming the candidates and their
 * times, the second run of the shape taking the wisdom's choice without
 * trials, and the refusals.  And the executor's ranges themselves
 * (pyr_exec_fields_range): a run split into 2 to 5 random ranges, each with
 * a plan of its own (naive, pyramid heights, decompositions), gives one
 * run's bits, probes and spectra, and ranges out of order are refused. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "maxwell_util.h"
#include "plan/plan.h"
#include "plan/model.h"
#include "poisson_util.h"
#include "tune/tune.h"
#include "tune/wisdom.h"

/* The backend of the Chebyshev, Maxwell and range tests (test_refine cuda: the CUDA runtime's, each
 * against a naive run on it), and how many of their refine runs chose among candidates there. */
static pyr_backend_kind_t backend = PYR_BACKEND_CPU;
static int chose_on_device;

/* On a GPU the pieces need more buffers than on the CPU: the budget doubled until the plan fits. */
static void fit_budget(const pyr_problem_t *p, pyr_options_t *o)
{
    for (int k = 0; k < 12 && backend != PYR_BACKEND_CPU; k++, o->memory *= 2) {
        pyr_plan_t *pl = NULL;
        const pyr_status_t st = pyr_plan_create(p, o, &pl);
        pyr_plan_destroy(&pl);
        pyr_clear_error();
        if (st != PYR_ERR_BUDGET) return;
    }
}

/* Whether a refine run chose among candidates: required on the CPU; on a GPU (budgets fitted to its pieces)
 * counted, and main requires one case at least. */
static void check_chose(const char *what, const char *notice)
{
    const int chose = strstr(notice, "; chose ") != NULL;
    if (backend == PYR_BACKEND_CPU) CHECK(chose, "%s: refine chose no candidate: '%s'", what, notice);
    else if (chose) chose_on_device++;
    else fprintf(stderr, "%s: refine tried nothing on this device: '%s'\n", what, notice);
}

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

/* Chebyshev sweeps (weights from the sweep index, the layer two sweeps back carried from one plan to the
 * next): refine tries its candidates and gives the naive bits, sweeps and change, with one check at the
 * end, with checks every 50 sweeps, and with a tolerance the run reaches after its trials. */
static void test_chebyshev(void)
{
    const int64_t n[3] = {129, 129, 1};
    const double len[3] = {1, 1, 1};
    const struct {
        int64_t check_every;
        int tolerance;
    } cases[] = {{1200, 0}, {50, 0}, {50, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pyr_wisdom_forget();
        pyr_problem_t p;
        pyr_run_info_t rr, ri;
        pyr_status_t st;
        double tolerance = 0;
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = PYR_METHOD_NAIVE;
        if (cases[c].tolerance) { /* the change at the check of sweep 700: the run stops there or before, after the trials */
            make_poisson(&p, 2, n, len, PYR_DOUBLE, 700, 0, cases[c].check_every, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
            p.poisson.iteration = PYR_ITER_CHEBYSHEV;
            pyr_field_t *r_half = solve_poisson(&p, &o, NULL, &rr, &st);
            tolerance = rr.change * 1.000001;
            pyr_field_destroy(&r_half);
        }
        make_poisson(&p, 2, n, len, PYR_DOUBLE, 1200, tolerance, cases[c].check_every, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
        p.poisson.iteration = PYR_ITER_CHEBYSHEV;
        pyr_field_t *ref = solve_poisson(&p, &o, NULL, &rr, &st);
        o.method = PYR_METHOD_PYRAMID;
        o.memory = 48 << 10;
        o.plan_mode = PYR_PLAN_REFINE;
        fit_budget(&p, &o);
        pyr_plan_t *plan = NULL;
        pyr_field_t *u = NULL;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        if (plan) {
            CHECK_OK(pyr_field_create(&p, &u));
            CHECK_OK(pyr_field_init(u, &p));
            pyr_field_t *fields[2] = {u, NULL};
            CHECK_OK(pyr_execute_fields(plan, fields, 2, NULL, &ri));
            char what[64];
            snprintf(what, sizeof what, "chebyshev (check_every %lld)", (long long)cases[c].check_every);
            check_chose(what, plan->notice);
            fprintf(stderr, "chebyshev (check_every %lld, tolerance %g): %s\n", (long long)cases[c].check_every, tolerance, plan->notice);
        }
        pyr_plan_destroy(&plan);
        CHECK(u && ref && first_difference(u, ref) < 0, "chebyshev (check_every %lld, tolerance %g) refine: not the naive bits",
              (long long)cases[c].check_every, tolerance);
        CHECK(ri.steps == rr.steps && ri.checked == rr.checked && ri.converged == rr.converged && ri.change == rr.change,
              "chebyshev refine: %lld sweeps (converged %d, change %g), naive %lld (%d, %g)", (long long)ri.steps, ri.converged, ri.change,
              (long long)rr.steps, rr.converged, rr.change);
        if (cases[c].tolerance)
            CHECK(rr.converged && rr.steps > 300 && rr.steps <= 700, "the tolerance case should converge after the trials, by sweep 700 (%lld)",
                  (long long)rr.steps);
        pyr_field_destroy(&u);
        pyr_field_destroy(&ref);
    }
}

static void set_ok(pyr_problem_t *p, const char *key, const char *value)
{
    const pyr_status_t st = pyr_problem_set(p, key, value);
    CHECK(st == PYR_OK, "set %s = %s: %s", key, value, pyr_last_error());
}

/* Maxwell with everything a run keeps beside the caller's fields: CPML and a Drude sphere (the library's
 * auxiliaries: the layers' psi, the dispersive terms' states), a point source and a TF/SF plane wave (waveform
 * times, the wave's 1D grid), probes, DFT and flux monitors (sums over the run).  kind 0: 2D TM, 1: 2D TE, 2: 3D. */
static void make_full_maxwell(pyr_problem_t *p, int kind)
{
    if (kind < 2) {
        const int te = kind;
        const int64_t n[3] = {71, 53, 1};
        const double len[3] = {7.0, 5.2, 1};
        make_maxwell(p, 2, n, len, te, PYR_DOUBLE, 160, 0.6);
        set_ok(p, "boundary.kind", "cpml");
        set_ok(p, "boundary.cpml_cells", "8");
        set_ok(p, "boundary.faces", "x-,x+,y+");
        set_ok(p, "source.source1", te ? "Hz point 30 20 ricker frequency=0.6 delay=1.8" : "Ez point 30 20 ricker frequency=0.6 delay=1.8");
        set_ok(p, "source.planewave1", te ? "Ey along +x box 15 12 55 40 ricker frequency=0.6 delay=1.8"
                                          : "Ez along -y box 15 12 55 40 ricker frequency=0.6 delay=1.8");
        set_ok(p, "material.shape1", "sphere 3.5 2.6 0.5 eps_r=2 drude=1 0.1");
        set_ok(p, "probe.probe1", te ? "Hz 10 10" : "Ez 10 10");
        set_ok(p, "probe.probe2", te ? "Ey 30 20" : "Ez 30 20");
        set_ok(p, "monitor.dft1", te ? "Ex,Ey,Hz box 20 10 45 35 freqs=0.3,0.55,0.8" : "Ez,Hx,Hy box 20 10 45 35 freqs=0.3,0.55,0.8");
        set_ok(p, "monitor.dft2", te ? "Hz point 40 30 freqs=0.2:0.9:8" : "Ez point 40 30 freqs=0.2:0.9:8");
        set_ok(p, "monitor.flux1", "plane x 50 freqs=0.2:0.9:15");
        set_ok(p, "monitor.flux2", "plane y 40 12 60 freqs=0.3,0.6");
        return;
    }
    const int64_t n[3] = {29, 23, 19};
    make_maxwell(p, 3, n, NULL, 0, PYR_DOUBLE, 48, 0.5);
    set_ok(p, "boundary.kind", "cpml");
    set_ok(p, "boundary.cpml_cells", "4");
    set_ok(p, "boundary.faces", "x-,x+");
    set_ok(p, "source.source1", "Ey point 12 11 9 ricker frequency=4 delay=0.25");
    set_ok(p, "source.planewave1", "Ez along +y tilt 40 x box 6 4 4 22 17 14 ricker frequency=4 delay=0.25");
    set_ok(p, "material.shape1", "sphere 0.6 0.45 0.45 0.1 eps_r=2 drude=20 2");
    set_ok(p, "probe.probe1", "Ey 5 11 9");
    set_ok(p, "monitor.dft1", "Ex,Hz box 10 8 6 16 14 12 freqs=2,4,6");
    set_ok(p, "monitor.flux1", "plane x 18 freqs=2:8:4");
}

/* Every monitor's transforms (and a flux monitor's power) in one array, *n values. */
static double *spectra_values(const pyr_spectra_t *s, size_t *n)
{
    double *all = NULL;
    *n = 0;
    for (int m = 0; m < pyr_spectra_count(s); m++) {
        pyr_monitor_info_t info;
        if (pyr_spectra_info(s, m, &info) != PYR_OK) break;
        const size_t k = (size_t)(info.ncomponents * info.nfreq * info.nnodes);
        double *g = realloc(all, (*n + 2 * k + (size_t)info.nfreq) * sizeof *g);
        if (!g) break;
        all = g;
        CHECK_OK(pyr_spectra_dft(s, m, all + *n, all + *n + k));
        *n += 2 * k;
        if (info.flux) {
            CHECK_OK(pyr_spectra_flux(s, m, all + *n));
            *n += (size_t)info.nfreq;
        }
    }
    return all;
}

/* A Maxwell run of p under o with its spectra: components, probes, run info in r, the spectra's values in *spec. */
static pyr_status_t mx_run_spectra(const pyr_problem_t *p0, const pyr_options_t *o, mx_result_t *r, double **spec, size_t *nspec, char *notice,
                                   size_t nsize)
{
    pyr_problem_t p = *p0;
    pyr_spectra_t *s = NULL;
    *spec = NULL;
    *nspec = 0;
    PYR_TRY(pyr_spectra_create(&p, &s));
    pyr_status_t st = pyr_spectra_attach(&p, s);
    memset(r, 0, sizeof *r);
    pyr_plan_t *plan = NULL;
    if (st == PYR_OK) st = pyr_plan_create(&p, o, &plan);
    pyr_field_t *fields[MX_FIELDS] = {NULL};
    for (int c = 0; c < 6 && st == PYR_OK; c++) {
        if (!mx_used(&p, c)) continue;
        st = pyr_field_create(&p, &r->c[c]);
        if (st == PYR_OK) st = pyr_field_init_state(r->c[c], &p, c);
        fields[c] = r->c[c];
    }
    pyr_hooks_t hooks = {.user = r, .probe = mx_probe_cb};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, MX_FIELDS, &hooks, &r->run);
    if (plan && notice) snprintf(notice, nsize, "%s", plan->notice);
    pyr_plan_destroy(&plan);
    if (st == PYR_OK) *spec = spectra_values(s, nspec);
    pyr_spectra_destroy(&s);
    return st;
}

/* Whether two runs' components, probe series (of every step) and spectra are the same bits. */
static void mx_compare_spectra(const char *label, const pyr_problem_t *p, const mx_result_t *got, const double *gs, size_t ngs,
                               const mx_result_t *ref, const double *rs, size_t nrs)
{
    CHECK(got->run.steps == p->steps, "%s: %lld steps of %lld", label, (long long)got->run.steps, (long long)p->steps);
    CHECK(got->nseries == p->steps && got->nprobes == ref->nprobes && got->nprobes > 0, "%s: probe series of %lld steps (%d probes) for %lld",
          label, (long long)got->nseries, got->nprobes, (long long)p->steps);
    mx_compare(label, "the naive run", got, ref);
    CHECK(ngs == nrs && nrs > 0 && gs && rs && !memcmp(gs, rs, nrs * sizeof *gs), "%s: the spectra differ from the naive run's (%zu and %zu values)",
          label, ngs, nrs);
}

/* Maxwell: a random field in a PEC box with probes, and the full problems (CPML, sources, plane waves,
 * monitors) in 2D TM, 2D TE and 3D: refine tries candidates, and its fields, probes and spectra are the naive
 * method's bits. */
static void test_maxwell(void)
{
    if (backend == PYR_BACKEND_CPU) {
        pyr_wisdom_forget();
        const int64_t n[3] = {97, 97, 1};
        const double len[3] = {1, 1, 1};
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
        CHECK_OK(mx_run(&p, &o, NULL, &got)); /* mx_probe_cb fails unless each pass's series starts where the last ended */
        CHECK(got.nseries == 240 && ref.nseries == 240 && got.nprobes == 3 &&
                  !memcmp(got.probes, ref.probes, (size_t)(240 * 3) * sizeof *got.probes),
              "maxwell refine: the probe series differ from the naive method's (%lld steps)", (long long)got.nseries);
        for (int c = 0; c < 6; c++)
            if (ref.c[c]) CHECK(got.c[c] && first_difference(got.c[c], ref.c[c]) < 0, "maxwell refine: component %d differs", c);
        CHECK(got.run.steps == 240, "maxwell refine: %lld steps", (long long)got.run.steps);
        mx_free(&ref);
        mx_free(&got);
    }
    static const char *const names[3] = {"2D TM", "2D TE", "3D"};
    for (int kind = 0; kind < 3; kind++) {
        pyr_wisdom_forget();
        pyr_problem_t p;
        make_full_maxwell(&p, kind);
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = PYR_METHOD_NAIVE;
        mx_result_t ref, got;
        double *rs = NULL, *gs = NULL;
        size_t nrs = 0, ngs = 0;
        CHECK_OK(mx_run_spectra(&p, &o, &ref, &rs, &nrs, NULL, 0));
        o.method = PYR_METHOD_PYRAMID;
        o.memory = kind < 2 ? 96 << 10 : 1 << 20;
        o.plan_mode = PYR_PLAN_REFINE;
        fit_budget(&p, &o);
        char notice[1024] = "", label[64];
        CHECK_OK(mx_run_spectra(&p, &o, &got, &gs, &ngs, notice, sizeof notice));
        snprintf(label, sizeof label, "maxwell %s with CPML, sources and monitors", names[kind]);
        check_chose(label, notice);
        fprintf(stderr, "maxwell %s: %s\n", names[kind], notice);
        snprintf(label, sizeof label, "maxwell %s refine", names[kind]);
        mx_compare_spectra(label, &p, &got, gs, ngs, &ref, rs, nrs);
        mx_free(&ref);
        mx_free(&got);
        free(rs);
        free(gs);
    }
}

/* ------------------------------------------------ the executor's ranges */

/* One scheme's state for a run through ranges: the caller's fields, and what the hooks saw. */
typedef struct {
    pyr_problem_t p;
    pyr_spectra_t *spectra;
    pyr_field_t *f[MX_FIELDS];
    int nf;
    mx_result_t r; /* probes (Maxwell) */
} range_run_t;

/* kind 0: heat 2D, 1: heat 3D, 2: Chebyshev (checks every 40), 3: Chebyshev with a tolerance, 4: Jacobi with a tolerance
 * (f streamed beside u, skewed pieces too), 5: Maxwell 2D TM with everything (make_full_maxwell), 6: Maxwell 3D. */
static void range_problem(int kind, pyr_problem_t *p)
{
    const int64_t n2[3] = {129, 97, 1}, n3[3] = {30, 26, 22};
    const double len[3] = {1, 1, 1};
    switch (kind) {
    case 0: make_problem(p, 2, n2, PYR_FLOAT, 150, PYR_INIT_RANDOM, 11); break;
    case 1: make_problem(p, 3, n3, PYR_DOUBLE, 60, PYR_INIT_RANDOM, 12); break;
    case 2:
    case 3:
        make_poisson(p, 2, n2, len, PYR_DOUBLE, 400, kind == 3 ? 1e-3 : 0, 40, PYR_RHS_SINE, PYR_INIT_RANDOM, 13);
        p->poisson.iteration = PYR_ITER_CHEBYSHEV;
        break;
    case 4: make_poisson(p, 2, n2, len, PYR_FLOAT, 120, 1e-4, 15, PYR_RHS_SINE, PYR_INIT_RANDOM, 14); break;
    case 5: make_full_maxwell(p, 0); break;
    default: make_full_maxwell(p, 2); break;
    }
}

static void range_setup(int kind, range_run_t *s)
{
    memset(s, 0, sizeof *s);
    range_problem(kind, &s->p);
    s->nf = kind < 2 ? 1 : kind < 5 ? 2 : MX_FIELDS;
    if (kind >= 5) {
        CHECK_OK(pyr_spectra_create(&s->p, &s->spectra));
        CHECK_OK(pyr_spectra_attach(&s->p, s->spectra));
        for (int c = 0; c < 6; c++) {
            if (!mx_used(&s->p, c)) continue;
            CHECK_OK(pyr_field_create(&s->p, &s->f[c]));
            CHECK_OK(pyr_field_init_state(s->f[c], &s->p, c));
        }
        return;
    }
    CHECK_OK(pyr_field_create(&s->p, &s->f[0]));
    CHECK_OK(pyr_field_init(s->f[0], &s->p));
}

static void range_free(range_run_t *s)
{
    for (int f = 0; f < MX_FIELDS; f++) pyr_field_destroy(&s->f[f]);
    free(s->r.probes);
    pyr_spectra_destroy(&s->spectra);
}

/* A plan of s's problem: naive, or a pyramid plan of a random height and decomposition (skewed where the
 * scheme allows it) on a random budget below the grid's, doubled until it plans (budgets that leave tall
 * pyramids in tiny 3D pieces recompute their halos many times over: slow, and no more telling). */
static pyr_plan_t *range_plan(const range_run_t *s, rng_t *rng, int64_t steps, char *name, size_t size)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    const int dims = s->p.dims, skewed = s->nf <= 2 && s->p.poisson.iteration != PYR_ITER_CHEBYSHEV;
    const pyr_decomp_t decomps[] = {dims == 2 ? PYR_DECOMP_STRIPS : PYR_DECOMP_SLABS, PYR_DECOMP_BLOCKS, PYR_DECOMP_AUTO, PYR_DECOMP_SKEWED};
    static int turn; /* the kinds of plan in turn, so that every scheme's ranges meet each */
    const int pick = turn++ % (skewed ? 5 : 4);
    pyr_plan_t *plan = NULL;
    if (pick == (skewed ? 4 : 3)) {
        o.method = PYR_METHOD_NAIVE; /* (with decomposition = skewed: the option a naive plan ignores) */
        o.decomposition = PYR_DECOMP_SKEWED;
    } else {
        o.method = PYR_METHOD_PYRAMID;
        o.decomposition = decomps[pick];
        const int64_t hmax = dims == 3 ? 6 : 16;
        o.height = rng_range(rng, 1, steps < hmax ? steps : hmax);
        const uint64_t grid = (uint64_t)(s->p.n[0] * s->p.n[1] * s->p.n[2]) * (uint64_t)pyr_precision_size(s->p.precision);
        o.memory = grid * (uint64_t)(s->nf > 2 ? 10 : s->nf) / (uint64_t)rng_range(rng, 2, dims == 3 ? 3 : 8);
        for (int k = 0; k < (backend == PYR_BACKEND_CPU ? 6 : 10) && !plan; k++, o.memory *= 2)
            if (pyr_plan_create(&s->p, &o, &plan) != PYR_OK) pyr_clear_error();
    }
    if (!plan) CHECK_OK(pyr_plan_create(&s->p, &o, &plan));
    if (plan)
        snprintf(name, size, "%s h=%lld%s", plan->resident ? "resident" : pyr_decomp_name(plan->decomp), (long long)plan->height,
                 plan->slots > 1 ? " slots" : "");
    return plan;
}

/* A run of each kind split into 2 to 5 random ranges, each with a plan of its own, against one naive run:
 * fields, steps, change, probe series and spectra the same bits. */
static void test_ranges(void)
{
    rng_t rng = {20261127};
    static const char *const names[] = {"heat 2D", "heat 3D", "chebyshev", "chebyshev with a tolerance", "jacobi", "maxwell 2D", "maxwell 3D"};
    for (int kind = 0; kind < 7; kind++) {
        range_run_t ref, got;
        range_setup(kind, &ref);
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = PYR_METHOD_NAIVE;
        pyr_plan_t *plan = NULL;
        pyr_run_info_t rr, ri;
        memset(&rr, 0, sizeof rr);
        CHECK_OK(pyr_plan_create(&ref.p, &o, &plan));
        pyr_hooks_t hooks = {.user = &ref.r, .probe = kind >= 5 ? mx_probe_cb : NULL};
        if (plan) CHECK_OK(pyr_execute_fields(plan, ref.f, ref.nf, &hooks, &rr));
        pyr_plan_destroy(&plan);
        double *rs = NULL;
        size_t nrs = 0;
        if (ref.spectra) rs = spectra_values(ref.spectra, &nrs);
        const int64_t steps = ref.p.steps;
        for (int trial = 0; trial < 2; trial++) {
            range_setup(kind, &got);
            /* cuts: 1 to 4 distinct steps inside the run, in order */
            const int ncut = (int)rng_range(&rng, 1, 4);
            int64_t cut[6];
            int nc = 0;
            cut[nc++] = 0;
            for (int i = 0; i < ncut; i++) {
                const int64_t c = rng_range(&rng, 1, steps - 1);
                int seen = 0;
                for (int j = 0; j < nc; j++) seen |= cut[j] == c;
                if (!seen) cut[nc++] = c;
            }
            cut[nc++] = steps;
            for (int i = 1; i < nc; i++)
                for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
                    const int64_t t = cut[j];
                    cut[j] = cut[j - 1];
                    cut[j - 1] = t;
                }
            pyr_exec_carry_t *carry = NULL;
            CHECK_OK(pyr_exec_carry_create(&carry));
            char line[1024] = "";
            size_t len = 0;
            pyr_hooks_t gh = {.user = &got.r, .probe = kind >= 5 ? mx_probe_cb : NULL};
            memset(&ri, 0, sizeof ri);
            for (int i = 0; i + 1 < nc && carry; i++) {
                char name[96] = "";
                pyr_plan_t *pl = range_plan(&got, &rng, cut[i + 1] - cut[i], name, sizeof name);
                if (!pl) break;
                if (len < sizeof line)
                    len += (size_t)snprintf(line + len, sizeof line - len, "%s[%lld, %lld) %s", i ? ", " : "", (long long)cut[i],
                                            (long long)cut[i + 1], name);
                pyr_run_info_t part;
                const pyr_status_t st = pyr_exec_fields_range(pl, got.f, got.nf, cut[i], cut[i + 1], carry, &gh, &part);
                pyr_plan_destroy(&pl);
                CHECK(st == PYR_OK, "%s, ranges %s: %s", names[kind], line, pyr_last_error());
                if (st != PYR_OK) break;
                ri = part;
                if (part.converged) break;
            }
            pyr_exec_carry_destroy(&carry);
            fprintf(stderr, "%s: %s\n", names[kind], line);
            CHECK(ri.steps == rr.steps && ri.converged == rr.converged && ri.change == rr.change,
                  "%s, ranges %s: %lld steps (converged %d, change %g), one naive run %lld (%d, %g)", names[kind], line, (long long)ri.steps,
                  ri.converged, ri.change, (long long)rr.steps, rr.converged, rr.change);
            for (int f = 0; f < MX_FIELDS; f++)
                if (ref.f[f])
                    CHECK(got.f[f] && first_difference(got.f[f], ref.f[f]) < 0, "%s, ranges %s: field %d is not one run's bits", names[kind], line, f);
            if (kind >= 5) {
                size_t ngs = 0;
                double *gs = spectra_values(got.spectra, &ngs);
                CHECK(got.r.nseries == steps && got.r.nprobes == ref.r.nprobes &&
                          !memcmp(got.r.probes, ref.r.probes, (size_t)(steps * ref.r.nprobes) * sizeof *ref.r.probes),
                      "%s, ranges %s: the probe series differ from one run's", names[kind], line);
                CHECK(ngs == nrs && nrs > 0 && !memcmp(gs, rs, nrs * sizeof *gs), "%s, ranges %s: the spectra differ from one run's", names[kind], line);
                free(gs);
            }
            range_free(&got);
        }
        if (kind == 3) CHECK(rr.converged && rr.steps < steps, "chebyshev with a tolerance: the reference does not stop early (%lld sweeps)", (long long)rr.steps);
        free(rs);
        range_free(&ref);
    }

    /* ranges out of order, of another problem, after a failed one: refused, saying what works */
    range_run_t s;
    range_setup(0, &s);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    pyr_plan_t *plan = NULL, *other = NULL;
    pyr_exec_carry_t *carry = NULL;
    CHECK_OK(pyr_plan_create(&s.p, &o, &plan));
    pyr_problem_t q = s.p;
    q.steps = 100;
    CHECK_OK(pyr_plan_create(&q, &o, &other));
    CHECK_OK(pyr_exec_carry_create(&carry));
    if (plan && other && carry) {
        CHECK_FAILS(pyr_exec_fields_range(plan, s.f, 1, 10, 20, carry, NULL, NULL), PYR_ERR_ARG, "the ranges run in order, this one from step 0");
        CHECK_OK(pyr_exec_fields_range(plan, s.f, 1, 0, 20, carry, NULL, NULL));
        CHECK_FAILS(pyr_exec_fields_range(plan, s.f, 1, 0, 30, carry, NULL, NULL), PYR_ERR_ARG, "this one from step 20");
        CHECK_FAILS(pyr_exec_fields_range(plan, s.f, 1, 20, 151, carry, NULL, NULL), PYR_ERR_ARG, "of a run of 150");
        CHECK_FAILS(pyr_exec_fields_range(other, s.f, 1, 20, 30, carry, NULL, NULL), PYR_ERR_ARG, "another problem");
        CHECK_FAILS(pyr_exec_fields_range(plan, s.f, 2, 20, 30, carry, NULL, NULL), PYR_ERR_ARG, "has 1 field");
        CHECK_FAILS(pyr_exec_fields_range(plan, s.f, 1, 20, 30, carry, NULL, NULL), PYR_ERR_ARG, "run it again from step 0");
    }
    pyr_exec_carry_destroy(&carry);
    pyr_plan_destroy(&plan);
    pyr_plan_destroy(&other);
    range_free(&s);
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
            if (ref->options.plan_mode == PYR_PLAN_REFINE) {
                char list[400];
                pyr_tune_refine_list(pick, np, list, sizeof list);
                CHECK(strstr(ref->notice, list) != NULL, "case %zu: the run would try %s, not the candidates the notice names: %s", ki, list,
                      ref->notice);
            }
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

/* usage: test_refine [cpu|cuda]   (cuda: the Chebyshev, Maxwell and range tests on the CUDA runtime, each against
 * a naive run there; skipped, 77, without a GPU) */
int main(int argc, char **argv)
{
    char dir[] = "/tmp/pyr-refine-XXXXXX", path[64];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/wisdom", dir);
    setenv("PYRGRID_WISDOM", path, 1);
    const int64_t n2[3] = {257, 257, 1}, n3[3] = {34, 34, 34};
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (pyr_gpu_count() < 1) {
            printf("no GPU: skipped\n");
            rmdir(dir);
            return 77;
        }
        backend = PYR_BACKEND_CUDA;
        TIMED(test_chebyshev());
        TIMED(test_maxwell());
        TIMED(test_ranges());
        CHECK(chose_on_device > 0, "no refine run chose among candidates on the GPU (every budget fitted to its pieces left one)");
        pyr_wisdom_forget();
        unlink(path);
        rmdir(dir);
        return check_report();
    }
    TIMED(test_heat(2, n2, 240, 64 << 10, 0));
    TIMED(test_heat(2, n2, 240, 64 << 10, 40));
    TIMED(test_heat(2, n2, 36, 64 << 10, 0)); /* one pass of each candidate: the trials take most of the run */
    TIMED(test_heat(3, n3, 100, 96 << 10, 0));
    TIMED(test_short());
    TIMED(test_poisson());
    TIMED(test_chebyshev());
    TIMED(test_maxwell());
    TIMED(test_ranges());
    TIMED(test_slots());
    TIMED(test_refused());
    pyr_wisdom_forget();
    unlink(path);
    rmdir(dir);
    return check_report();
}
