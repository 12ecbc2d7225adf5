/* plan = refine: a measured choice that wastes no step.  Plan creation
 * makes the model's choice and names the model's best few candidates
 * (tune/create.c); the run computes its first passes with each candidate in
 * turn, each a run of the executor over a range of the run's steps from the
 * fields the one before left (every method gives the same bits, so a change
 * of plan between passes changes none), times each one's steady rate per
 * step, runs the remaining steps with the fastest and records it in the
 * wisdom.  It sits above the executor, whose ranges of a run's steps
 * (pyr_exec_fields_range) continue one run: the hooks see the run's steps,
 * and what the run keeps beside the caller's fields (the library's
 * auxiliary fields, the layer before the fields' of a two-layer iteration,
 * the point terms' state and monitors' sums) goes from one plan to the
 * next. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "exec/exec.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "schemes/scheme.h"
#include "tune/tune.h"

/* Candidates predicted more than this factor slower than the model's best are not tried. */
#define REFINE_SPREAD 1.5
/* Two candidates of one decomposition and slots are both tried only when their heights are this far apart. */
#define REFINE_HEIGHT_RATIO 1.4
/* Trials of two passes each (the second's rate is steady) take at most this share of the run's steps;
 * trials of one pass each may take all of them (no step is wasted: the winner is at least recorded). */
#define REFINE_SHARE 0.5
/* Pass ends the clock of a trial keeps. */
#define REFINE_CLOCK 64

static int cmp_seconds(const void *a, const void *b)
{
    const double x = ((const candidate_t *)a)->seconds, y = ((const candidate_t *)b)->seconds;
    return x < y ? -1 : x > y;
}

int pyr_tune_refine_pick(candidates_t *cs, const candidate_t *first, candidate_t *pick, int max)
{
    if (max < 1) return 0;
    int n = 0;
    pick[n++] = *first;
    if (!cs->n) return n;
    qsort(cs->c, (size_t)cs->n, sizeof *cs->c, cmp_seconds);
    const double best = cs->c[0].seconds;
    for (int i = 0; i < cs->n && n < max; i++) {
        const candidate_t *c = &cs->c[i];
        if (!isfinite(c->seconds) || c->height < 1) continue;
        if (c->seconds > REFINE_SPREAD * best) break;
        int distinct = 1;
        for (int j = 0; j < n && distinct; j++) {
            if (pick[j].decomp != c->decomp || pick[j].slots != c->slots) continue;
            const double hi = (double)(c->height > pick[j].height ? c->height : pick[j].height);
            const double lo = (double)(c->height > pick[j].height ? pick[j].height : c->height);
            distinct = hi >= REFINE_HEIGHT_RATIO * lo;
        }
        if (distinct) pick[n++] = *c;
    }
    return n;
}

static void name_candidate(const candidate_t *c, char *out, size_t size)
{
    snprintf(out, size, "%s h=%lld slots=%d", pyr_decomp_name(c->decomp), (long long)c->height, c->slots);
}

void pyr_tune_refine_list(const candidate_t *pick, int n, char *out, size_t size)
{
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < n && len + 1 < size; i++) {
        char name[96];
        name_candidate(&pick[i], name, sizeof name);
        const int k = snprintf(out + len, size - len, "%s%s", i ? ", " : "", name);
        if (k < 0) break;
        len += (size_t)k < size - len ? (size_t)k : size - len - 1;
    }
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Steps a change of plan may happen at: multiples of the checks and snapshots (counted from step 0,
 * where every plan's passes end). */
static int64_t refine_align(const pyr_plan_t *plan)
{
    int64_t a = 1;
    const int64_t every[2] = {plan->check_every, plan->options.snapshot_every};
    for (int i = 0; i < 2; i++) {
        if (every[i] <= 0) continue;
        const int64_t g = gcd64(a, every[i]);
        if (a / g > INT64_MAX / every[i]) return INT64_MAX;
        a = a / g * every[i];
    }
    return a;
}

int pyr_tune_refine_layout(const pyr_plan_t *plan, candidate_t *pick, int *n, int64_t *len, char *why, size_t size)
{
    why[0] = 0;
    if (*n < 2) return snprintf(why, size, "the model sees one candidate only"), 0;
    const int64_t steps = plan->problem.steps, align = refine_align(plan);
    /* two passes of each, else one; else fewer candidates */
    for (int passes = 2; passes >= 1; passes--)
        for (int k = *n; k >= 2; k--) {
            const int64_t room = passes == 2 ? (int64_t)(REFINE_SHARE * (double)steps) : steps;
            int64_t total = 0;
            for (int i = 0; i < k; i++) {
                const int64_t want = passes * pick[i].height;
                len[i] = align >= steps ? steps : (want + align - 1) / align * align;
                total += len[i];
            }
            if (total <= room) {
                *n = k;
                return 1;
            }
        }
    char list[400];
    pyr_tune_refine_list(pick, *n, list, sizeof list);
    int64_t least = 0;
    for (int i = 0; i < 2; i++) least += align >= steps ? steps : (pick[i].height + align - 1) / align * align;
    snprintf(why, size, "the run's %lld steps are too short to try %s (one pass of the first two takes %lld steps%s)", (long long)steps,
             list, (long long)least, align > 1 ? ", ending at checks and snapshots" : "");
    return 0;
}

/* --------------------------------------------------------------- the run */

/* The caller's hooks (the run's steps, as the executor's ranges tell them), and the clock of a range's pass ends. */
typedef struct {
    const pyr_hooks_t *user;
    int64_t first; /* the range's first step */
    double t[REFINE_CLOCK];
    int64_t at[REFINE_CLOCK]; /* steps into the range */
    int n;
} range_hooks_t;

static int range_progress(void *u, int64_t done, int64_t total)
{
    range_hooks_t *r = u;
    if (r->n < REFINE_CLOCK) {
        r->t[r->n] = pyr_now_s();
        r->at[r->n++] = done - r->first;
    }
    const pyr_hooks_t *h = r->user;
    return h && h->progress ? h->progress(h->user, done, total) : 0;
}

static int range_cancel(void *u, int64_t done, int64_t total)
{
    range_hooks_t *r = u;
    return r->user->cancel(r->user->user, done, total);
}

static pyr_status_t range_snapshot(void *u, const pyr_field_t *field, int64_t step)
{
    range_hooks_t *r = u;
    return r->user->snapshot(r->user->user, field, step);
}

static pyr_status_t range_snapshot_fields(void *u, pyr_field_t *const *fields, int nfields, int64_t step)
{
    range_hooks_t *r = u;
    return r->user->snapshot_fields(r->user->user, fields, nfields, step);
}

static pyr_status_t range_probe(void *u, int64_t first, int64_t count, const double *values, int nprobes)
{
    range_hooks_t *r = u;
    return r->user->probe(r->user->user, first, count, values, nprobes);
}

/* A plan of the candidate for the plan's problem (the whole run: its ranges run `steps` steps at most), on its
 * device, budget, constants and variant. */
static pyr_status_t candidate_plan(const pyr_plan_t *plan, const candidate_t *c, int64_t steps, pyr_plan_t **out)
{
    const pyr_problem_t q = plan->problem;
    pyr_options_t o = plan->options;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = c->decomp;
    o.height = c->height < steps ? c->height : steps;
    o.slots = c->slots;
    o.memory = plan->budget;
    o.plan_mode = PYR_PLAN_ESTIMATE;
    if (plan->host_memory == PYR_HOST_PIN || plan->host_memory == PYR_HOST_STAGE) o.host_memory = plan->host_memory;
    pyr_variant_format(&plan->variant, o.kernel, sizeof o.kernel);
    return pyr_plan_create_on(&q, &o, plan->ops, &plan->model, plan->model_form, out);
}

/* Steps [s0, s0 + steps) with candidate c, continuing the run that `carry` holds; *rate: its seconds per
 * step, from the passes after its first where it made several (the first carries the range's setup), else
 * from its one pass. */
static pyr_status_t run_range(const pyr_plan_t *plan, const candidate_t *c, int64_t s0, int64_t steps, pyr_field_t *const *fields,
                              int nfields, pyr_exec_carry_t *carry, const pyr_hooks_t *hooks, pyr_run_info_t *ri, double *rate)
{
    pyr_plan_t *sub = NULL;
    PYR_TRY(candidate_plan(plan, c, steps, &sub));
    range_hooks_t r;
    memset(&r, 0, sizeof r);
    r.user = hooks;
    r.first = s0;
    pyr_hooks_t h = {.progress = range_progress, .user = &r};
    if (hooks && hooks->cancel) h.cancel = range_cancel;
    if (hooks && hooks->snapshot) h.snapshot = range_snapshot;
    if (hooks && hooks->snapshot_fields) h.snapshot_fields = range_snapshot_fields;
    if (hooks && hooks->probe) h.probe = range_probe;
    const double t0 = pyr_now_s();
    pyr_status_t st = pyr_exec_fields_range(sub, fields, nfields, s0, s0 + steps, carry, &h, ri);
    pyr_plan_free(&sub);
    PYR_TRY(st);
    if (rate) {
        if (r.n >= 2 && r.at[r.n - 1] > r.at[0]) *rate = (r.t[r.n - 1] - r.t[0]) / (double)(r.at[r.n - 1] - r.at[0]);
        else if (r.n >= 1 && r.at[0] > 0) *rate = (r.t[0] - t0 - ri->pin_seconds) / (double)r.at[0];
        else *rate = (pyr_now_s() - t0) / (double)(steps > 0 ? steps : 1);
    }
    return PYR_OK;
}

/* A range's run info into the whole run's. */
static void add_range(pyr_run_info_t *run, const pyr_run_info_t *ri, int first)
{
    run->counts.uploaded += ri->counts.uploaded;
    run->counts.downloaded += ri->counts.downloaded;
    run->counts.computed += ri->counts.computed;
    run->counts.redundant += ri->counts.redundant;
    run->steps = ri->steps;
    if (ri->checked) {
        run->checked = 1;
        run->change = ri->change;
        run->converged = ri->converged;
    }
    if (first) {
        run->host_memory = ri->host_memory;
        snprintf(run->host_note, sizeof run->host_note, "%s", ri->host_note);
    }
    run->pin_seconds += ri->pin_seconds;
    run->unpin_seconds += ri->unpin_seconds;
    run->parts = run->ranks = 1;
}

/* The plan's notice with its "refine: ..." part (the last one plan creation added) replaced by `text`. */
static void set_refine_notice(pyr_plan_t *plan, const char *text)
{
    char *at = strstr(plan->notice, "refine: ");
    if (at) {
        char rest[sizeof plan->notice] = "";
        const char *end = strstr(at, "; ");
        if (end) snprintf(rest, sizeof rest, "%s", end);
        *at = 0;
        const size_t len = strlen(plan->notice);
        snprintf(plan->notice + len, sizeof plan->notice - len, "%s%s", text, rest);
        return;
    }
    pyr_plan_add_notice(plan, "%s", text);
}

/* The caller's fields pinned once for all of the run's ranges when its plan pins them: each range's executor
 * would otherwise register and unregister the whole grid again (a range's executor leaves memory registered
 * before it as it found it), which for short trials costs as much as their steps.  Returns how many it pinned;
 * pin[f] says which, for unpin_fields. */
static int pin_fields(const pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, int pin[PYR_MAX_FIELDS], double *seconds)
{
    const double t0 = pyr_now_s();
    int n = 0;
    memset(pin, 0, sizeof(int) * PYR_MAX_FIELDS);
    if (!plan->ctx || !plan->ops->host_register || !plan->ops->host_unregister || plan->host_memory != PYR_HOST_PIN) return 0;
    for (int f = 0; f < nfields && f < plan->scheme->nfields && f < PYR_MAX_FIELDS; f++) {
        if (!((plan->fields >> f) & 1) || !fields[f] || !fields[f]->data || plan->scheme->field[f].role == PYR_FIELD_AUX) continue;
        const size_t bytes = (size_t)pyr_field_count(fields[f]) * pyr_precision_size(fields[f]->precision);
        if (plan->ops->host_register(plan->ctx, fields[f]->data, bytes) != PYR_OK) {
            pyr_clear_error(); /* each range decides for itself again, as without refine */
            continue;
        }
        pin[f] = 1;
        n++;
    }
    *seconds = pyr_now_s() - t0;
    return n;
}

static double unpin_fields(const pyr_plan_t *plan, pyr_field_t *const *fields, const int pin[PYR_MAX_FIELDS])
{
    const double t0 = pyr_now_s();
    for (int f = 0; f < PYR_MAX_FIELDS; f++)
        if (pin[f]) plan->ops->host_unregister(plan->ctx, fields[f]->data);
    return pyr_now_s() - t0;
}

pyr_status_t pyr_tune_refine_execute(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks,
                                     pyr_run_info_t *run)
{
    pyr_run_info_t whole, ri;
    memset(&whole, 0, sizeof whole);
    candidate_t pick[PYR_REFINE_MAX];
    int64_t len[PYR_REFINE_MAX];
    int n = 0;
    char why[1024] = "";
    PYR_TRY(pyr_tune_refine_candidates(plan, pick, PYR_REFINE_MAX, &n));
    if (!pyr_tune_refine_layout(plan, pick, &n, len, why, sizeof why)) {
        /* nothing to try after all (plan creation saw the same): the model's choice */
        char text[1200];
        snprintf(text, sizeof text, "refine: %.1000s; the model's choice ran", why);
        set_refine_notice(plan, text);
        plan->options.plan_mode = PYR_PLAN_ESTIMATE;
        return pyr_exec_fields(plan, fields, nfields, hooks, run);
    }
    double rate[PYR_REFINE_MAX];
    int64_t step = 0;
    int tried = 0, stopped = 0;
    const int64_t steps = plan->problem.steps;
    /* one run over every range: what it keeps beside the fields goes from each plan to the next */
    pyr_exec_carry_t *carry = NULL;
    pyr_status_t st = pyr_exec_carry_create(&carry);
    int pinned[PYR_MAX_FIELDS];
    double pin_s = 0;
    if (st == PYR_OK) pin_fields(plan, fields, nfields, pinned, &pin_s);
    else memset(pinned, 0, sizeof pinned);
    for (int i = 0; i < n && st == PYR_OK && !stopped; i++) {
        st = run_range(plan, &pick[i], step, len[i], fields, nfields, carry, hooks, &ri, &rate[i]);
        if (st != PYR_OK) break;
        add_range(&whole, &ri, i == 0);
        stopped = ri.converged || ri.steps < step + len[i]; /* the stopping test ended the run during the trials */
        step = whole.steps;
        tried++;
    }
    char list[400], text[1600];
    pyr_tune_refine_list(pick, n, list, sizeof list);
    int best = 0;
    for (int i = 1; i < tried; i++)
        if (rate[i] < rate[best]) best = i;
    if (st == PYR_OK && !stopped && step < steps && hooks && hooks->cancel && hooks->cancel(hooks->user, step, steps))
        st = pyr_fail(PYR_ERR_CANCELLED, "run cancelled after %lld of %lld steps", (long long)step, (long long)steps);
    if (st == PYR_OK && !stopped && step < steps) {
        st = run_range(plan, &pick[best], step, steps - step, fields, nfields, carry, hooks, &ri, NULL);
        if (st == PYR_OK) add_range(&whole, &ri, 0);
    }
    pyr_exec_carry_destroy(&carry);
    whole.unpin_seconds += unpin_fields(plan, fields, pinned);
    whole.pin_seconds += pin_s;
    PYR_TRY(st);
    if (stopped) {
        snprintf(text, sizeof text, "refine: candidates %s; the run stopped at step %lld, within the trials (nothing recorded)", list,
                 (long long)whole.steps);
        set_refine_notice(plan, text);
        if (run) *run = whole;
        return PYR_OK;
    }
    /* the winner: recorded, and the plan is now its plan (its info and a later run's) */
    char rec[1024] = "";
    const int recorded = pyr_tune_record_choice(plan, pick[best].decomp, pick[best].height, pick[best].slots, rec, sizeof rec) == PYR_OK;
    char winner[96], others[400] = "";
    name_candidate(&pick[best], winner, sizeof winner);
    for (int i = 0; i < n; i++) {
        if (i == best) continue;
        const size_t l = strlen(others);
        snprintf(others + l, sizeof others - l, "%s%.3g", l ? ", " : "", rate[i] * 1e3);
    }
    snprintf(text, sizeof text, "refine: candidates %s; chose %s (%.3g ms/step vs %s over their trials; %lld steps in trials, %lld with "
             "it%s%.200s)", list, winner, rate[best] * 1e3, others, (long long)(step), (long long)(steps - step),
             recorded ? ", recorded in the wisdom" : ", not recorded: ", recorded ? "" : rec);
    set_refine_notice(plan, text);
    const pyr_decomp_t was_decomp = plan->decomp;
    const int64_t was_height = plan->height;
    const int was_slots = plan->slots;
    plan->try_slots = pick[best].slots;
    if (pyr_plan_build(plan, PYR_METHOD_PYRAMID, pick[best].decomp, pick[best].height, plan->budget) == PYR_OK) {
        plan->options.plan_mode = PYR_PLAN_ESTIMATE;
    } else { /* the model's choice again, and a later run of this plan tries again */
        pyr_clear_error();
        plan->try_slots = was_slots;
        if (pyr_plan_build(plan, PYR_METHOD_PYRAMID, was_decomp, was_height, plan->budget) != PYR_OK) pyr_clear_error();
    }
    if (run) *run = whole;
    return PYR_OK;
}
