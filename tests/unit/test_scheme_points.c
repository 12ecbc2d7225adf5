/* The scheme's point hooks (schemes/scheme.h: points, amplitudes, record,
 * points_free) as the executor and the layer of several devices call them,
 * whatever the scheme: a copy of the Maxwell table whose hooks wrap
 * Maxwell's, keeping a second copy of every probe as a probe of its own
 * (beyond nshown), runs a problem with point and line sources and probes
 * under the naive method, pyramids and over several parts.  Checked: the
 * amplitudes are asked for consecutive ranges from step 0 to the end, once
 * per pass; record sees the same ranges, with `last` on the final one only;
 * the probes a run owns are each owned by exactly one part; the scheme's own
 * copies hold the values of the probes they copy; the caller's probe hook
 * sees only the nshown columns, equal to the plain Maxwell table's run.
 * usage: test_scheme_points [cpu|cuda]   (cuda: skipped, 77, without a GPU) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "maxwell_util.h"
#include "multi/multi.h"
#include "plan/plan.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

#define MAX_RUNS 8 /* executors (parts) of one run */

/* What the wrapping hooks saw, per executor run (in the order they opened). */
typedef struct {
    int opened, freed, failures;
    int64_t next_amp, next_rec; /* the step the next range must start at */
    int lasts, nshown, nprobes;
    int owned_count;
    int64_t steps;
    double *own_series; /* [step][nshown]: the scheme's copies, where owned */
    unsigned char *have;  /* [nshown]: owned here */
} run_log_t;

static run_log_t logs[MAX_RUNS];
static int nlogs;
static pthread_mutex_t logs_mu = PTHREAD_MUTEX_INITIALIZER; /* the parts' threads open their points at once */

typedef struct {
    void *inner; /* Maxwell's state */
    run_log_t *log;
} wrap_t;

static pyr_status_t wrap_points(const pyr_problem_t *p, pyr_scheme_points_t *out)
{
    PYR_TRY(pyr_maxwell_points(p, out));
    pthread_mutex_lock(&logs_mu);
    run_log_t *L = nlogs < MAX_RUNS ? &logs[nlogs++] : NULL;
    pthread_mutex_unlock(&logs_mu);
    wrap_t *w = calloc(1, sizeof *w);
    pyr_scheme_point_t *twice = malloc((size_t)(2 * out->nprobes + 1) * sizeof *twice);
    if (!L || !w || !twice) {
        /* a failure leaves nothing to free */
        free(w);
        free(twice);
        pyr_maxwell_points_free(out);
        return L ? pyr_fail(PYR_ERR_NOMEM, "test") : pyr_fail(PYR_ERR_INTERNAL, "more than %d executor runs", MAX_RUNS);
    }
    memcpy(twice, out->probes, (size_t)out->nprobes * sizeof *twice);
    memcpy(twice + out->nprobes, out->probes, (size_t)out->nprobes * sizeof *twice);
    free(out->probes);
    out->probes = twice;
    out->nshown = out->nprobes;
    out->nprobes *= 2;
    memset(L, 0, sizeof *L);
    L->opened = 1;
    L->nshown = out->nshown;
    L->nprobes = out->nprobes;
    L->steps = p->steps;
    L->own_series = calloc((size_t)(p->steps * out->nshown + 1), sizeof(double));
    L->have = calloc((size_t)out->nshown + 1, 1);
    w->inner = out->state;
    w->log = L;
    out->state = w;
    return PYR_OK;
}

static pyr_status_t wrap_amplitudes(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, double *amp)
{
    wrap_t *w = pts->state;
    if (first != w->log->next_amp || count < 1) w->log->failures++;
    w->log->next_amp = first + count;
    pyr_scheme_points_t inner = *pts;
    inner.state = w->inner;
    return pyr_maxwell_amplitudes(p, &inner, first, count, amp);
}

static pyr_status_t wrap_record(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, const double *values,
                                const unsigned char *owned, int last)
{
    (void)p;
    wrap_t *w = pts->state;
    run_log_t *L = w->log;
    if (first != L->next_rec || count < 1 || first + count > L->steps || last != (first + count == L->steps)) L->failures++;
    L->next_rec = first + count;
    L->lasts += last;
    const int ns = pts->nshown;
    for (int i = 0; i < ns; i++) {
        /* the copy and the probe it copies lie on one node: owned together */
        if (owned[i] != owned[ns + i]) L->failures++;
        if (!owned[ns + i]) continue;
        L->have[i] = 1;
        for (int64_t s = 0; s < count; s++) {
            const double a = values[s * pts->nprobes + i], b = values[s * pts->nprobes + ns + i];
            if (memcmp(&a, &b, sizeof a)) L->failures++;
            L->own_series[(first + s) * ns + i] = b;
        }
    }
    return PYR_OK;
}

static void wrap_free(pyr_scheme_points_t *pts)
{
    wrap_t *w = pts->state;
    if (w) {
        w->log->freed++;
        pts->state = w->inner;
        free(w);
    }
    pyr_maxwell_points_free(pts);
}

static pyr_scheme_t wrapped;

static void free_logs(void)
{
    for (int i = 0; i < nlogs; i++) {
        free(logs[i].own_series);
        free(logs[i].have);
    }
    nlogs = 0;
}

/* The problem: 2D TM with a point and a line source and probes spread over the grid. */
static void make_points_problem(pyr_problem_t *p)
{
    const int64_t n[3] = {61, 47, 1};
    make_maxwell(p, 2, n, NULL, 0, PYR_DOUBLE, 37, 0.7);
    pyr_maxwell_params_t *m = &p->maxwell;
    m->nsources = 2;
    m->sources[0] = (pyr_source_t){.component = PYR_EZ, .node = {20, 23, 0}, .node_end = {20, 23, 0}, .waveform = PYR_WAVE_RICKER,
                                   .amplitude = 1, .frequency = 0.9, .delay = 1.5};
    m->sources[1] = (pyr_source_t){.component = PYR_HX, .node = {40, 10, 0}, .node_end = {40, 30, 0}, .waveform = PYR_WAVE_SINE,
                                   .amplitude = 0.5, .frequency = 0.6, .width = 2};
    static const int64_t at[6][2] = {{5, 5}, {30, 23}, {55, 40}, {12, 40}, {50, 8}, {31, 2}};
    m->nprobes = 6;
    for (int i = 0; i < 6; i++) m->probes[i] = (pyr_probe_t){.component = i % 2 ? PYR_HY : PYR_EZ, .node = {at[i][0], at[i][1], 0}};
}

/* Swap the wrapping table into a plan (and a multi plan's parts). */
static void use_wrapped(pyr_plan_t *plan)
{
    pyr_multi_t *multi = pyr_multi_of(plan);
    if (!multi) {
        plan->scheme = &wrapped;
        return;
    }
    for (int i = 0; pyr_parts_local_plan(multi->parts, i); i++) ((pyr_plan_t *)pyr_parts_local_plan(multi->parts, i))->scheme = &wrapped;
}

static void run_case(const char *label, const pyr_problem_t *p, const pyr_options_t *o, const mx_result_t *ref, int want_runs, int64_t min_tasks)
{
    free_logs();
    mx_result_t r;
    memset(&r, 0, sizeof r);
    pyr_plan_t *plan = NULL;
    pyr_options_t opt = *o;
    pyr_status_t st = pyr_plan_create(p, &opt, &plan);
    /* a GPU's smallest piece needs more room than the CPU's: the same case with more budget */
    for (int tries = 0; st == PYR_ERR_BUDGET && opt.backend != PYR_BACKEND_CPU && opt.memory && tries < 4; tries++) {
        opt.memory *= 2;
        st = pyr_plan_create(p, &opt, &plan);
    }
    CHECK(st == PYR_OK, "%s: plan: %s", label, pyr_last_error());
    if (st != PYR_OK) return;
    pyr_plan_info_t info;
    CHECK_OK(pyr_plan_part_info(plan, 0, &info));
    if (opt.memory == o->memory)
        CHECK(info.tasks_per_pass >= min_tasks && info.passes > 1, "%s: %lld passes of %lld tasks: the case does not cut the run as meant",
              label, (long long)info.passes, (long long)info.tasks_per_pass);
    use_wrapped(plan);
    pyr_field_t *fields[MX_FIELDS] = {NULL};
    for (int c = 0; c < 6 && st == PYR_OK; c++) {
        if (!mx_used(p, c)) continue;
        st = pyr_field_create(p, &r.c[c]);
        if (st == PYR_OK) st = pyr_field_init_state(r.c[c], p, c);
        fields[c] = r.c[c];
    }
    pyr_hooks_t hooks = {.user = &r, .probe = mx_probe_cb};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, MX_FIELDS, &hooks, &r.run);
    CHECK(st == PYR_OK, "%s: run: %s", label, pyr_last_error());
    pyr_plan_destroy(&plan);
    CHECK(nlogs == want_runs, "%s: %d executor runs opened the points, expected %d", label, nlogs, want_runs);
    const int ns = p->maxwell.nprobes;
    /* the caller's columns only, equal to the plain table's run */
    CHECK(r.nprobes == ns && r.nseries == p->steps, "%s: the probe hook saw %lld steps of %d probes, expected %lld of %d", label,
          (long long)r.nseries, r.nprobes, (long long)p->steps, ns);
    if (r.nprobes == ns && r.nseries == p->steps)
        CHECK(!memcmp(r.probes, ref->probes, (size_t)(p->steps * ns) * sizeof(double)), "%s: the probe series differ from the plain run's",
              label);
    for (int c = 0; c < 6; c++)
        if (r.c[c]) CHECK(!memcmp(r.c[c]->data, ref->c[c]->data, (size_t)pyr_field_count(r.c[c]) * sizeof(double)), "%s: %s differs", label,
                          pyr_maxwell_component_name(c));
    /* every probe owned by exactly one executor run, its copies there equal to the series */
    int owners[PYR_MAXWELL_MAX_PROBES] = {0};
    for (int k = 0; k < nlogs; k++) {
        const run_log_t *L = &logs[k];
        CHECK(L->failures == 0, "%s: run %d: %d broken expectations in the hooks' calls", label, k, L->failures);
        CHECK(L->freed == 1, "%s: run %d: points_free called %d times", label, k, L->freed);
        CHECK(L->next_amp == p->steps && L->next_rec == p->steps && L->lasts == 1, "%s: run %d: amplitudes to %lld, record to %lld, %d last",
              label, k, (long long)L->next_amp, (long long)L->next_rec, L->lasts);
        CHECK(L->nshown == ns && L->nprobes == 2 * ns, "%s: run %d: %d of %d probes shown", label, k, L->nshown, L->nprobes);
        for (int i = 0; i < ns && L->nshown == ns; i++) {
            if (!L->have[i]) continue;
            owners[i]++;
            for (int64_t s = 0; s < p->steps; s++) {
                const double a = L->own_series[s * ns + i], b = ref->probes[s * ns + i];
                if (memcmp(&a, &b, sizeof a)) {
                    CHECK(0, "%s: run %d: probe %d's copy differs at step %lld (%.17g vs %.17g)", label, k, i, (long long)s, a, b);
                    break;
                }
            }
        }
    }
    for (int i = 0; i < ns; i++) CHECK(owners[i] == 1, "%s: probe %d owned by %d runs", label, i, owners[i]);
    mx_free(&r);
}

int main(int argc, char **argv)
{
    const int cuda = argc > 1 && !strcmp(argv[1], "cuda");
    if (cuda && pyr_gpu_count() < 1) {
        printf("no GPU: skipped\n");
        return 77;
    }
    const pyr_backend_kind_t backend = cuda ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    wrapped = pyr_scheme_maxwell;
    wrapped.points = wrap_points;
    wrapped.amplitudes = wrap_amplitudes;
    wrapped.record = wrap_record;
    wrapped.points_free = wrap_free;

    pyr_problem_t p;
    make_points_problem(&p);
    CHECK_OK(pyr_problem_validate(&p));
    mx_result_t ref;
    memset(&ref, 0, sizeof ref);
    CHECK_OK(mx_reference(&p, NULL, &ref));
    CHECK(ref.nseries == p.steps && ref.nprobes == p.maxwell.nprobes, "reference: %lld steps of %d probes", (long long)ref.nseries, ref.nprobes);
    double peak = 0;
    for (int64_t k = 0; k < ref.nseries * ref.nprobes; k++) peak = fabs(ref.probes[k]) > peak ? fabs(ref.probes[k]) : peak;
    CHECK(peak > 0, "the reference's probes saw no wave");

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.threads = 1;
    o.method = PYR_METHOD_NAIVE;
    o.height = 5; /* passes of 5 steps: several ranges */
    run_case("naive", &p, &o, &ref, 1, 1);

    const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * sizeof(double);
    for (int slots = 1; slots <= 3; slots += 2) {
        pyr_options_default(&o);
        o.backend = backend;
        o.threads = 1;
        o.method = PYR_METHOD_PYRAMID;
        o.decomposition = PYR_DECOMP_BLOCKS;
        o.height = 4;
        o.slots = slots;
        o.memory = grid / 2; /* pieces of a fraction of the three fields: several per pass */
        char label[64];
        snprintf(label, sizeof label, "pyramid blocks, %d slot%s", slots, slots > 1 ? "s" : "");
        run_case(label, &p, &o, &ref, 1, 4);
    }

    /* three parts along x and two along y, pyramids in each */
    pyr_options_default(&o);
    o.backend = backend;
    o.threads = 1;
    snprintf(o.devices, sizeof o.devices, "0,0,0,0,0,0");
    snprintf(o.partition, sizeof o.partition, "3x2x1");
    o.exchange = 3;
    run_case("parts 3x2, naive", &p, &o, &ref, 6, 1);
    o.method = PYR_METHOD_PYRAMID;
    o.memory = grid / 8;
    run_case("parts 3x2, pyramid", &p, &o, &ref, 6, 2);

    free_logs();
    mx_free(&ref);
    return check_report();
}
