/* The public plan: pyr_plan_create chooses a plan of one device (tune/) or
 * a multi plan over several devices (multi/), and the other entry points
 * describe and destroy either.
 *
 * The handle of a multi plan is the head of the multi plan's object, a
 * plan of kind PYR_PLAN_PARTS (multi/multi.h), rather than a wrapper around
 * every plan: the single-device path (creation, execution, every layer
 * below api/ that takes a plan) keeps the plan it always had, and gains one
 * test of `kind` here. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "multi/multi.h"
#include "plan/plan.h"
#include "tune/longvector.h"
#include "tune/tune.h"

pyr_status_t pyr_plan_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **out)
{
    if (!out) return pyr_fail(PYR_ERR_ARG, "pyr_plan_create: a place for the plan is required");
    *out = NULL;
    if (!options || !options->devices[0]) return pyr_plan_create_one(problem, options, out);
    /* run.devices: the long-vector method's own refusals (scheme, dims, backend, options) come first */
    if (problem) PYR_TRY(pyr_longvector_check(problem, options));
    int n = 0, first = 0;
    PYR_TRY(pyr_multi_devices(options, &n, &first));
    if (n > 1) return pyr_multi_create(problem, options, out);
    /* one device: its ordinary plan */
    pyr_options_t o = *options;
    o.devices[0] = 0;
    if (n == 1) o.device = first;
    return pyr_plan_create_one(problem, &o, out);
}

void pyr_plan_destroy(pyr_plan_t **plan)
{
    if (!plan || !*plan) return;
    if ((*plan)->kind == PYR_PLAN_PARTS) pyr_multi_destroy(plan);
    else pyr_plan_free(plan);
}

/* The parts of a multi plan, NULL for a plan of one device. */
static const pyr_parts_t *parts_of(const pyr_plan_t *plan)
{
    const pyr_multi_t *m = pyr_multi_of(plan);
    return m ? m->parts : NULL;
}

/* The sum over the parts of what adds up (memory, budgets, counts, tasks),
 * the largest part's shape, and the choices where every part made the same. */
static void whole_info(const pyr_parts_t *parts, pyr_plan_info_t *info)
{
    pyr_parts_info_t pi;
    pyr_parts_get_info(parts, &pi);
    memset(info, 0, sizeof *info);
    int mixed_kernel = 0, any_stage = 0, any_pin = 0;
    for (int i = 0; i < pi.devices; i++) {
        pyr_plan_info_t p;
        pyr_plan_info_single(pyr_parts_local_plan(parts, i), &p);
        if (i == 0) {
            info->method = p.method;
            info->decomposition = p.decomposition;
            info->backend = p.backend;
            info->height = p.height;
            info->notice = p.notice;
            info->fields = p.fields;
            snprintf(info->kernel, sizeof info->kernel, "%s", p.kernel);
        } else {
            if (p.method != info->method) info->method = PYR_METHOD_AUTO;
            if (p.decomposition != info->decomposition) info->decomposition = PYR_DECOMP_AUTO;
            if (p.height != info->height) info->height = 0;
            if (strcmp(p.kernel, info->kernel)) mixed_kernel = 1;
            if ((!info->notice || !info->notice[0]) && p.notice && p.notice[0]) info->notice = p.notice;
        }
        if (p.passes > info->passes) info->passes = p.passes;
        info->tasks_per_pass += p.tasks_per_pass;
        for (int a = 0; a < 3; a++) {
            if (p.pieces[a] > info->pieces[a]) info->pieces[a] = p.pieces[a];
            if (p.piece_extent[a] > info->piece_extent[a]) info->piece_extent[a] = p.piece_extent[a];
            if (p.result_extent[a] > info->result_extent[a]) info->result_extent[a] = p.result_extent[a];
        }
        if (p.slots > info->slots) info->slots = p.slots;
        info->device_bytes += p.device_bytes;
        info->budget_bytes = info->budget_bytes + p.budget_bytes < info->budget_bytes ? UINT64_MAX : info->budget_bytes + p.budget_bytes;
        info->counts.uploaded += p.counts.uploaded;
        info->counts.downloaded += p.counts.downloaded;
        info->counts.computed += p.counts.computed;
        any_stage |= p.host_memory == PYR_HOST_STAGE;
        any_pin |= p.host_memory == PYR_HOST_PIN;
        info->host_bytes += p.host_bytes;
    }
    if (mixed_kernel) snprintf(info->kernel, sizeof info->kernel, "mixed");
    info->host_memory = any_stage ? PYR_HOST_STAGE : any_pin ? PYR_HOST_PIN : PYR_HOST_AUTO;
    const uint64_t useful = pyr_parts_useful(parts, pyr_parts_local_plan(parts, 0)->problem.steps);
    info->counts.redundant = info->counts.computed > useful ? info->counts.computed - useful : 0;
    info->redundancy = useful ? (double)info->counts.computed / (double)useful : 1.0;
    if (!info->notice) info->notice = "";
}

pyr_status_t pyr_plan_get_info(const pyr_plan_t *plan, pyr_plan_info_t *info)
{
    if (!plan || !info) return pyr_fail(PYR_ERR_ARG, "pyr_plan_get_info: a plan and an info struct are required");
    const pyr_parts_t *parts = parts_of(plan);
    if (!parts) return pyr_plan_info_single(plan, info);
    whole_info(parts, info);
    return PYR_OK;
}

int pyr_plan_part_count(const pyr_plan_t *plan)
{
    if (!plan) return 0;
    const pyr_parts_t *parts = parts_of(plan);
    if (!parts) return 1;
    pyr_parts_info_t pi;
    pyr_parts_get_info(parts, &pi);
    return pi.devices;
}

pyr_status_t pyr_plan_part_info(const pyr_plan_t *plan, int part, pyr_plan_info_t *info)
{
    if (!plan || !info) return pyr_fail(PYR_ERR_ARG, "pyr_plan_part_info: a plan and an info struct are required");
    const int n = pyr_plan_part_count(plan);
    if (part < 0 || part >= n)
        return pyr_fail(PYR_ERR_ARG, "pyr_plan_part_info: part %d of a plan of %d part%s; use 0 to %d (pyr_plan_part_count)", part, n,
                        n == 1 ? "" : "s", n - 1);
    const pyr_parts_t *parts = parts_of(plan);
    return pyr_plan_info_single(parts ? pyr_parts_local_plan(parts, part) : plan, info);
}

size_t pyr_plan_partition(const pyr_plan_t *plan, char *text, size_t size)
{
    char line[320] = "";
    const pyr_parts_t *parts = plan ? parts_of(plan) : NULL;
    if (parts) pyr_parts_describe(parts, line, sizeof line);
    const int n = snprintf(text, size, "%s", line);
    return n > 0 ? (size_t)n : 0;
}
