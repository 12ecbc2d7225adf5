/* Plans as objects: their model, destruction, report data and siblings. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "plan/model.h"
#include "plan/planner.h"

const pyr_model_constants_t *pyr_plan_model(const pyr_plan_t *plan) { return &plan->model; }
pyr_model_form_t pyr_plan_model_form(const pyr_plan_t *plan) { return plan->model_form; }

void pyr_plan_release(pyr_plan_t *p)
{
    if (!p) return;
    for (int a = 0; a < 3; a++) free(p->axis[a].bounds);
    if (p->ops && p->ctx) p->ops->destroy(p->ctx); /* back to the context cache */
    free((void *)p->coef.aux);
    memset(p, 0, sizeof *p);
}

void pyr_plan_free(pyr_plan_t **plan)
{
    if (!plan || !*plan) return;
    pyr_plan_release(*plan);
    free(*plan);
    *plan = NULL;
}

pyr_status_t pyr_plan_copy_description(const pyr_plan_t *src, pyr_plan_t *dst)
{
    *dst = *src;
    dst->ctx = NULL;
    dst->exchange = NULL;
    dst->coef.aux = NULL;
    for (int a = 0; a < 3; a++) dst->axis[a].bounds = NULL;
    for (int a = 0; a < 3; a++) {
        const size_t bytes = (size_t)(src->axis[a].count + 1) * sizeof *src->axis[a].bounds;
        if (!src->axis[a].bounds) continue;
        dst->axis[a].bounds = malloc(bytes);
        if (!dst->axis[a].bounds) goto nomem;
        memcpy(dst->axis[a].bounds, src->axis[a].bounds, bytes);
    }
    if (src->coef.aux && src->coef.naux > 0) {
        double *aux = malloc((size_t)src->coef.naux * sizeof *aux);
        if (!aux) goto nomem;
        memcpy(aux, src->coef.aux, (size_t)src->coef.naux * sizeof *aux);
        dst->coef.aux = aux;
    }
    return PYR_OK;
nomem:
    pyr_plan_release(dst);
    return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
}

pyr_status_t pyr_plan_info_single(const pyr_plan_t *plan, pyr_plan_info_t *info)
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
    info->host_memory = plan->host_memory;
    info->host_bytes = plan->host_bytes;
    return PYR_OK;
}

const char *pyr_host_memory_name(pyr_host_memory_t h)
{
    return h == PYR_HOST_PIN ? "pinned" : h == PYR_HOST_STAGE ? "staged" : "none";
}

uint64_t pyr_host_ram_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

void pyr_plan_host_memory(pyr_plan_t *plan)
{
    const pyr_scheme_t *scheme = plan->scheme;
    const uint64_t nodes = (uint64_t)pyr_problem_nodes(&plan->problem);
    const uint64_t elem = pyr_precision_size(plan->problem.precision);
    plan->host_bytes = 0;
    /* the fields the executor registers: every field the problem uses; the library's auxiliaries only where
     * pieces stream them (a resident plan sets them on the device) */
    uint64_t aux = 0;
    for (int f = 0; f < scheme->nfields; f++) {
        if (!((plan->fields >> f) & 1)) continue;
        if (scheme->field[f].role == PYR_FIELD_AUX) {
            if (!plan->resident) aux += nodes * elem;
            continue;
        }
        plan->host_bytes += nodes * elem;
        /* streamed pieces of a scheme that reads a layer back: the host's copy of the older layer */
        if (plan->previous && !plan->resident && scheme->field[f].role == PYR_FIELD_PINGPONG) plan->host_bytes += nodes * elem;
    }
    /* the crossings below count the fields moved whole; the auxiliaries move their thin supports only */
    const uint64_t moved = plan->host_bytes;
    plan->host_bytes += aux;
    plan->host_why[0] = 0;
    plan->host_once = 0;
    if (!plan->ops->host_register) {
        plan->host_memory = PYR_HOST_AUTO;
        return;
    }
    if (plan->options.host_memory == PYR_HOST_PIN || plan->options.host_memory == PYR_HOST_STAGE) {
        plan->host_memory = plan->options.host_memory;
        snprintf(plan->host_why, sizeof plan->host_why, "%s as asked (run.host_memory)",
                 plan->host_memory == PYR_HOST_PIN ? "pinned" : "staged");
        return;
    }
    /* Times the host fields' bytes cross the link, from the plan's exact counts.  In core that is at
     * most 2 (one upload, one download; inputs only up): registering would cost as much as the copies it
     * speeds up.  Pieces streamed pass after pass cross 2 per pass (the auxiliaries' thin supports a little
     * more), and are pinned with the auxiliaries. */
    const double values = elem ? (double)moved / (double)elem : 0;
    const double crossings = values > 0 ? (double)(plan->predicted.uploaded + plan->predicted.downloaded) / values : 0;
    if (crossings <= 2.5) {
        plan->host_memory = PYR_HOST_STAGE;
        plan->host_once = 1;
        snprintf(plan->host_why, sizeof plan->host_why,
                 "staged: the plan moves each byte once each way (%.2f crossings), registering would cost more than it saves; "
                 "run.host_memory = pin registers anyway", crossings);
        return;
    }
    const uint64_t ram = pyr_host_ram_bytes(), gib = (uint64_t)1 << 30;
    const uint64_t reserve = ram / 8 > 8 * gib ? ram / 8 : 8 * gib;
    plan->host_memory = PYR_HOST_PIN;
    snprintf(plan->host_why, sizeof plan->host_why, "pinned: the plan moves each byte %.1f times across the link", crossings);
    if (ram && plan->host_bytes > (ram > reserve ? ram - reserve : 0)) {
        plan->host_memory = PYR_HOST_STAGE;
        snprintf(plan->host_why, sizeof plan->host_why, "staged: pinning would lock most of this machine's RAM");
        pyr_plan_add_notice(plan,
                            "the host fields (%.1f GiB) would lock most of this machine's %.1f GiB of RAM: copies go through pinned "
                            "staging buffers, slower than from a pinned grid; run.host_memory = pin locks them anyway",
                            (double)plan->host_bytes / (double)gib, (double)ram / (double)gib);
    }
}

pyr_status_t pyr_plan_sibling(const pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t height, pyr_plan_t **out)
{
    *out = NULL;
    pyr_plan_t *s = calloc(1, sizeof *s);
    if (!s) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    s->problem = plan->problem;
    s->options = plan->options;
    s->options.piece = 0;
    pyr_status_t sst = pyr_plan_set_scheme(s);
    if (sst != PYR_OK) {
        pyr_plan_free(&s);
        return sst;
    }
    s->kernel = plan->kernel;
    s->variant = plan->variant;
    s->ops = plan->ops;
    s->budget = plan->budget;
    s->model = plan->model;
    s->model_form = plan->model_form;
    s->host_memory = plan->host_memory;
    s->host_bytes = plan->host_bytes;
    s->host_once = plan->host_once;
    snprintf(s->host_why, sizeof s->host_why, "%s", plan->host_why);
    snprintf(s->model_source, sizeof s->model_source, "%s", plan->model_source);
    s->try_slots = plan->resident ? pyr_plan_requested_slots(s) : plan->slots;
    pyr_status_t st = pyr_plan_build(s, method, decomp, height, plan->budget);
    if (st != PYR_OK) {
        pyr_plan_free(&s);
        return st;
    }
    *out = s;
    return PYR_OK;
}
