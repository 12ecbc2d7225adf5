/* Task geometry: pieces, source regions, shrinking layers, bands, counts. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "plan/plan.h"
#include "plan/skewed.h"

pyr_box_t pyr_plan_grid(const pyr_plan_t *plan)
{
    pyr_box_t b;
    for (int a = 0; a < 3; a++) {
        b.lo[a] = 0;
        b.hi[a] = plan->problem.n[a];
    }
    return b;
}

pyr_status_t pyr_plan_set_scheme(pyr_plan_t *plan)
{
    const pyr_problem_t *p = &plan->problem;
    const pyr_scheme_t *s = pyr_scheme_of(p->equation);
    plan->scheme = s;
    plan->fields = s->fields_used(p);
    plan->npp = plan->nfixed = 0;
    for (int f = 0; f < s->nfields; f++) {
        if (!((plan->fields >> f) & 1)) continue;
        if (s->field[f].role == PYR_FIELD_PINGPONG) plan->npp++;
        else plan->nfixed++;
    }
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            plan->reach[a][side] = a < p->dims ? pyr_scheme_step_reach(s, a, side) : 0;
            plan->fixed[a][side] = a < p->dims ? pyr_scheme_fixed(s, p, a, side) : 0;
        }
    plan->check_every = s->tolerance(p) > 0 ? s->check_every(p) : 0;
    plan->previous = s->reads_previous ? s->reads_previous(p) != 0 : 0;
    s->coefficients(p, &plan->coef);
    for (int f = 0; f < s->nfields; f++) plan->nsupport[f] = s->support ? s->support(p, f, plan->support[f], 2) : -1;
    if (s->aux_coefficients) {
        double *aux = NULL;
        int64_t naux = 0;
        PYR_TRY(s->aux_coefficients(p, &aux, &naux));
        plan->coef.aux = aux;
        plan->coef.naux = naux;
    }
    return PYR_OK;
}

int pyr_plan_field_boxes(const pyr_plan_t *plan, int f, const pyr_box_t *box, pyr_box_t out[2])
{
    if (pyr_box_empty(box)) return 0;
    if (plan->nsupport[f] < 0) {
        out[0] = *box;
        return 1;
    }
    int n = 0;
    for (int k = 0; k < plan->nsupport[f]; k++) {
        pyr_box_t b = pyr_box_intersect(box, &plan->support[f][k]);
        if (!pyr_box_empty(&b)) out[n++] = b;
    }
    return n;
}

uint64_t pyr_plan_field_volume(const pyr_plan_t *plan, int f, const pyr_box_t *box)
{
    pyr_box_t b[2];
    const int n = pyr_plan_field_boxes(plan, f, box, b);
    uint64_t v = 0;
    for (int k = 0; k < n; k++) v += (uint64_t)pyr_box_volume(&b[k]);
    return v;
}

pyr_box_t pyr_plan_interior(const pyr_plan_t *plan)
{
    pyr_box_t b = pyr_plan_grid(plan);
    for (int a = 0; a < plan->problem.dims; a++) {
        b.lo[a] = plan->fixed[a][0];
        b.hi[a] = plan->problem.n[a] - plan->fixed[a][1];
    }
    return b;
}

/* The nodes sub-step k of a step updates. */
static pyr_box_t update_box(const pyr_plan_t *plan, int k)
{
    pyr_box_t b = pyr_plan_grid(plan);
    for (int a = 0; a < plan->problem.dims; a++) {
        b.lo[a] = pyr_scheme_margin(plan->scheme, &plan->problem, k, a, 0);
        b.hi[a] = plan->problem.n[a] - pyr_scheme_margin(plan->scheme, &plan->problem, k, a, 1);
    }
    return b;
}

uint64_t pyr_plan_useful(const pyr_plan_t *plan, int64_t steps)
{
    uint64_t per_step = 0;
    for (int k = 0; k < plan->scheme->nsub; k++) {
        pyr_box_t b = update_box(plan, k);
        per_step += (uint64_t)pyr_box_volume(&b);
    }
    return per_step * (uint64_t)steps;
}

int64_t pyr_plan_layers(const pyr_plan_t *plan, int64_t h) { return h * plan->scheme->nsub; }

int pyr_plan_launch_steps(const pyr_plan_t *plan)
{
    const pyr_problem_t *p = &plan->problem;
    return plan->kernel && plan->kernel->launch_steps ? plan->kernel->launch_steps(&plan->variant, p->dims, p->precision) : 0;
}

int64_t pyr_plan_tasks(const pyr_plan_t *plan)
{
    if (!plan->resident && plan->decomp == PYR_DECOMP_SKEWED) return pyr_skew_pieces(plan, plan->height);
    return plan->axis[0].count * plan->axis[1].count * plan->axis[2].count;
}

void pyr_plan_task(const pyr_plan_t *plan, int64_t t, int64_t h, pyr_task_t *task)
{
    const pyr_problem_t *p = &plan->problem;
    int64_t idx[3];
    idx[0] = t % plan->axis[0].count;
    idx[1] = (t / plan->axis[0].count) % plan->axis[1].count;
    idx[2] = t / (plan->axis[0].count * plan->axis[1].count);
    for (int a = 0; a < 3; a++) {
        task->index[a] = idx[a];
        if (a >= p->dims) {
            task->result.lo[a] = task->src.lo[a] = task->upload.lo[a] = 0;
            task->result.hi[a] = task->src.hi[a] = task->upload.hi[a] = 1;
            continue;
        }
        const pyr_axis_split_t *s = &plan->axis[a];
        int64_t lo = s->bounds[idx[a]], hi = s->bounds[idx[a] + 1];
        task->result.lo[a] = lo;
        task->result.hi[a] = hi;
        if (plan->split[a]) {
            const int64_t below = h * plan->reach[a][0], above = h * plan->reach[a][1];
            task->src.lo[a] = lo - below > 0 ? lo - below : 0;
            task->src.hi[a] = hi + above < p->n[a] ? hi + above : p->n[a];
            task->upload.lo[a] = task->src.lo[a];
            task->upload.hi[a] = task->src.hi[a];
        } else {
            /* An unsplit axis spans the grid; its boundary faces (the nodes
             * no sub-step updates) stay resident on the device, so only the
             * others travel. */
            task->src.lo[a] = 0;
            task->src.hi[a] = p->n[a];
            task->upload.lo[a] = plan->fixed[a][0];
            task->upload.hi[a] = p->n[a] - plan->fixed[a][1];
        }
    }
    task->input = pyr_plan_layer_box(plan, task, h, 1);
}

pyr_box_t pyr_plan_layer_box(const pyr_plan_t *plan, const pyr_task_t *task, int64_t h, int64_t l)
{
    /* sub-step l of the pass computes the result grown by the reach of every later sub-step */
    const pyr_scheme_t *s = plan->scheme;
    const int64_t total = h * s->nsub;
    const int k = (int)((l - 1) % s->nsub);
    pyr_box_t b = task->result;
    for (int a = 0; a < plan->problem.dims; a++) {
        if (!plan->split[a]) continue;
        int64_t lo = 0, hi = 0;
        if (s->nsub == 1) {
            lo = (total - l) * s->sub[0].reach_lo[a];
            hi = (total - l) * s->sub[0].reach_hi[a];
        } else {
            for (int64_t j = l + 1; j <= total; j++) {
                lo += s->sub[(j - 1) % s->nsub].reach_lo[a];
                hi += s->sub[(j - 1) % s->nsub].reach_hi[a];
            }
        }
        b.lo[a] -= lo;
        b.hi[a] += hi;
    }
    pyr_box_t in = update_box(plan, k);
    return pyr_box_intersect(&b, &in);
}

int64_t pyr_plan_pass_height(const pyr_plan_t *plan, int64_t step)
{
    int64_t end = plan->problem.steps;
    /* exchange_every: a part of a larger grid swaps halos there (exec/exchange.h) */
    const int64_t every[3] = {plan->options.snapshot_every, plan->check_every, plan->exchange_every};
    /* Full passes are counted from the last snapshot, check or exchange, so
     * every segment between them is cut the same way. */
    int64_t base = 0;
    for (int i = 0; i < 3; i++) {
        if (every[i] <= 0) continue;
        int64_t next = (step / every[i] + 1) * every[i];
        if (next < end) end = next;
        int64_t last = (step / every[i]) * every[i];
        if (last > base) base = last;
    }
    int64_t h = end - step;
    int64_t into = (step - base) % plan->height;
    if (plan->height - into < h) h = plan->height - into;
    return h;
}

int pyr_plan_bands(const pyr_plan_t *plan, const pyr_task_t *task, int64_t h, pyr_box_t *main_box,
                   pyr_box_t bands[3], int64_t last_reader[3])
{
    int nb = 0;
    pyr_box_t rest = task->result;
    for (int a = plan->problem.dims - 1; a >= 0; a--) {
        if (!plan->split[a] || task->index[a] + 1 >= plan->axis[a].count) continue;
        int64_t lo = task->result.lo[a], hi = task->result.hi[a];
        /* later tasks along the axis read this far back into the result */
        const int64_t back = h * plan->reach[a][0];
        int64_t cut = hi - back > lo ? hi - back : lo;
        pyr_box_t band = rest;
        band.lo[a] = cut;
        band.hi[a] = hi;
        rest.hi[a] = cut;
        if (pyr_box_empty(&band)) continue;
        /* The last task (in order) whose source meets the band: along every
         * axis, the highest piece whose grown region starts before band.hi. */
        int64_t k[3];
        for (int c = 0; c < 3; c++) {
            k[c] = 0;
            if (c >= plan->problem.dims) continue;
            if (!plan->split[c]) continue;
            const pyr_axis_split_t *s = &plan->axis[c];
            k[c] = task->index[c];
            while (k[c] + 1 < s->count && s->bounds[k[c] + 1] - h * plan->reach[c][0] < band.hi[c]) k[c]++;
        }
        bands[nb] = band;
        last_reader[nb] = (k[2] * plan->axis[1].count + k[1]) * plan->axis[0].count + k[0];
        nb++;
    }
    *main_box = rest;
    return nb;
}

int pyr_plan_band_direct(const pyr_plan_t *plan, const pyr_task_t *task, const pyr_box_t *band, int64_t t, int64_t last)
{
    const int whole_rows = plan->problem.dims == 1 || pyr_box_extent(band, 0) == pyr_box_extent(&task->result, 0);
    /* a task's older layer (plan->previous) sits in the buffer the next task computes in */
    return !plan->previous && last == t + 1 && whole_rows && plan->slots > 1 && plan->ops && plan->ops->concurrent && plan->ops->mark && plan->ops->after_mark;
}

void pyr_plan_count_pass(const pyr_plan_t *plan, int64_t h, pyr_counters_t *sum, pyr_counters_t *task_max)
{
    if (!plan->resident && plan->decomp == PYR_DECOMP_SKEWED) {
        pyr_skew_count_pass(plan, h, sum, task_max);
        return;
    }
    memset(sum, 0, sizeof *sum);
    if (task_max) memset(task_max, 0, sizeof *task_max);
    const int64_t layers = pyr_plan_layers(plan, h);
    const pyr_scheme_t *s = plan->scheme;
    int64_t nt = pyr_plan_tasks(plan);
    for (int64_t t = 0; t < nt; t++) {
        pyr_task_t task;
        pyr_plan_task(plan, t, h, &task);
        uint64_t up = 0, down = 0;
        for (int f = 0; f < s->nfields; f++) {
            if (!((plan->fields >> f) & 1)) continue;
            if (s->field[f].role == PYR_FIELD_INPUT) {
                up += pyr_plan_field_volume(plan, f, &task.input);
            } else {
                /* a ping-pong field read a layer back moves both layers */
                const uint64_t layers = plan->previous && s->field[f].role == PYR_FIELD_PINGPONG ? 2 : 1;
                up += layers * pyr_plan_field_volume(plan, f, &task.upload);
                down += layers * pyr_plan_field_volume(plan, f, &task.result);
            }
        }
        uint64_t comp = 0;
        for (int64_t l = 1; l <= layers; l++) {
            pyr_box_t b = pyr_plan_layer_box(plan, &task, h, l);
            comp += (uint64_t)pyr_box_volume(&b);
        }
        pyr_plan_count_task(sum, task_max, up, down, comp);
    }
    sum->redundant = sum->computed - pyr_plan_useful(plan, h);
}

int pyr_plan_inputs(const pyr_plan_t *plan)
{
    int n = 0;
    for (int f = 0; f < plan->scheme->nfields; f++) n += ((plan->fields >> f) & 1) && plan->scheme->field[f].role == PYR_FIELD_INPUT;
    return n;
}
