/* Task geometry: pieces, source regions, shrinking layers, bands, counts. */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

pyr_box_t pyr_plan_grid(const pyr_plan_t *plan)
{
    pyr_box_t b;
    for (int a = 0; a < 3; a++) {
        b.lo[a] = 0;
        b.hi[a] = plan->problem.n[a];
    }
    return b;
}

pyr_box_t pyr_plan_interior(const pyr_plan_t *plan)
{
    pyr_box_t b = pyr_plan_grid(plan);
    for (int a = 0; a < plan->problem.dims; a++) {
        b.lo[a] = 1;
        b.hi[a] = plan->problem.n[a] - 1;
    }
    return b;
}

int64_t pyr_plan_tasks(const pyr_plan_t *plan)
{
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
            task->src.lo[a] = lo - h > 0 ? lo - h : 0;
            task->src.hi[a] = hi + h < p->n[a] ? hi + h : p->n[a];
            task->upload.lo[a] = task->src.lo[a];
            task->upload.hi[a] = task->src.hi[a];
        } else {
            /* An unsplit axis spans the grid; its two boundary faces stay
             * resident on the device, so only interior nodes travel. */
            task->src.lo[a] = 0;
            task->src.hi[a] = p->n[a];
            task->upload.lo[a] = 1;
            task->upload.hi[a] = p->n[a] - 1;
        }
    }
}

pyr_box_t pyr_plan_layer_box(const pyr_plan_t *plan, const pyr_task_t *task, int64_t h, int64_t l)
{
    pyr_box_t b = task->result;
    for (int a = 0; a < plan->problem.dims; a++)
        if (plan->split[a]) {
            b.lo[a] -= h - l;
            b.hi[a] += h - l;
        }
    pyr_box_t in = pyr_plan_interior(plan);
    return pyr_box_intersect(&b, &in);
}

int64_t pyr_plan_pass_height(const pyr_plan_t *plan, int64_t step)
{
    int64_t end = plan->problem.steps;
    int64_t every = plan->options.snapshot_every;
    if (every > 0) {
        int64_t next = (step / every + 1) * every;
        if (next < end) end = next;
    }
    int64_t h = end - step;
    /* Full passes are counted from the last snapshot, so every segment
     * between snapshots is cut the same way. */
    int64_t base = every > 0 ? (step / every) * every : 0;
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
        int64_t cut = hi - h > lo ? hi - h : lo;
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
            while (k[c] + 1 < s->count && s->bounds[k[c] + 1] - h < band.hi[c]) k[c]++;
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
    return last == t + 1 && whole_rows && plan->slots > 1 && plan->ops && plan->ops->mark && plan->ops->after_mark;
}

void pyr_plan_count_pass(const pyr_plan_t *plan, int64_t h, pyr_counters_t *sum, pyr_counters_t *task_max)
{
    memset(sum, 0, sizeof *sum);
    if (task_max) memset(task_max, 0, sizeof *task_max);
    int64_t nt = pyr_plan_tasks(plan);
    for (int64_t t = 0; t < nt; t++) {
        pyr_task_t task;
        pyr_plan_task(plan, t, h, &task);
        uint64_t up = (uint64_t)pyr_box_volume(&task.upload);
        uint64_t down = (uint64_t)pyr_box_volume(&task.result);
        uint64_t comp = 0;
        for (int64_t l = 1; l <= h; l++) {
            pyr_box_t b = pyr_plan_layer_box(plan, &task, h, l);
            comp += (uint64_t)pyr_box_volume(&b);
        }
        sum->uploaded += up;
        sum->downloaded += down;
        sum->computed += comp;
        sum->redundant += comp - down * (uint64_t)h;
        if (task_max) {
            if (up > task_max->uploaded) task_max->uploaded = up;
            if (down > task_max->downloaded) task_max->downloaded = down;
            if (comp > task_max->computed) task_max->computed = comp;
        }
    }
}
