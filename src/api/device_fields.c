/* The caller's fields in a GPU's memory (pyr_field_wrap_device): made only
 * where the CUDA backend places the pointer in that device's memory, copied
 * to and from other fields (pyr_field_copy), and taken by the plans that
 * compute on them without a copy through the host: one device keeping the
 * grid resident (the executor then copies them into its pieces and back
 * device to device, exec/execute.c).  Every other plan refuses them, saying
 * why, so that a caller (Python) can fall back on a host copy. */
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "core/error.h"
#include "core/field.h"
#include "methods/method.h"
#include "multi/multi.h"
#include "plan/plan.h"

/* The CUDA runtime when it can place device memory, else a failure naming `who`. */
static pyr_status_t cuda_ops(const char *who, const pyr_device_ops_t **out)
{
    *out = pyr_device_get(PYR_BACKEND_CUDA);
    if (!*out || !(*out)->locate || !(*out)->copy_linear || !(*out)->after_stream)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "%s: this library has no CUDA backend (built without CUDA, or its CUDA library is not "
                                             "installed), so it cannot reach an array in GPU memory; copy the array to host memory "
                                             "(cupy.asnumpy(x), x.cpu().numpy()) and pass that",
                        who);
    return PYR_OK;
}

pyr_status_t pyr_field_wrap_device(int dims, const int64_t n[3], pyr_precision_t precision, void *data, int device, uintptr_t stream,
                                   pyr_field_t **field)
{
    static const char who[] = "pyr_field_wrap_device";
    if (!field) return pyr_fail(PYR_ERR_ARG, "%s: field is NULL", who);
    *field = NULL;
    const pyr_device_ops_t *ops = NULL;
    PYR_TRY(cuda_ops(who, &ops));
    if (!data) return pyr_fail(PYR_ERR_ARG, "%s: data is NULL; give the device pointer of the caller's buffer", who);
    int on_device = 0, at = -1;
    const pyr_status_t st = ops->locate(data, &on_device, &at);
    if (st != PYR_OK) return pyr_fail_context(st, "%s: ", who);
    if (!on_device)
        return pyr_fail(PYR_ERR_ARG, "%s: address %p is host memory, not GPU %d's; wrap a host buffer with pyr_field_wrap", who, data,
                        device);
    if (device >= 0 && at != device)
        return pyr_fail(PYR_ERR_ARG, "%s: address %p lies in GPU %d's memory, not GPU %d's; give device = %d", who, data, at, device, at);
    return pyr_field_wrap_on(dims, n, precision, data, at, stream, field);
}

pyr_status_t pyr_field_copy(pyr_field_t *dst, const pyr_field_t *src)
{
    if (!dst || !src || !dst->data || !src->data) return pyr_fail(PYR_ERR_ARG, "pyr_field_copy: give two fields with data");
    if (dst->n[0] != src->n[0] || dst->n[1] != src->n[1] || dst->n[2] != src->n[2] || dst->precision != src->precision)
        return pyr_fail(PYR_ERR_ARG, "pyr_field_copy: a %lld x %lld x %lld %s field into a %lld x %lld x %lld %s one; the shapes and "
                                     "precisions must match",
                        (long long)src->n[0], (long long)src->n[1], (long long)src->n[2], pyr_precision_name(src->precision),
                        (long long)dst->n[0], (long long)dst->n[1], (long long)dst->n[2], pyr_precision_name(dst->precision));
    const size_t bytes = (size_t)pyr_field_count(src) * pyr_precision_size(src->precision);
    uintptr_t ss = 0, ds = 0;
    const int from = pyr_field_device(src, &ss), to = pyr_field_device(dst, &ds);
    if (from < 0 && to < 0) {
        if (dst->data != src->data) memmove(dst->data, src->data, bytes);
        return PYR_OK;
    }
    const pyr_device_ops_t *ops = NULL;
    PYR_TRY(cuda_ops("pyr_field_copy", &ops));
    /* the work queued on the source's stream is what the copy must follow; into a device field, what
     * its own stream has queued (reads of the old values) */
    return ops->copy_linear(from >= 0 ? from : to, dst->data, src->data, bytes, from >= 0 ? ss : ds);
}

pyr_status_t pyr_plan_takes_field(const pyr_plan_t *plan, const pyr_field_t *field)
{
    if (!plan || !field) return pyr_fail(PYR_ERR_ARG, "pyr_plan_takes_field: plan and field are required");
    const int device = pyr_field_device(field, NULL);
    if (device < 0) return PYR_OK; /* host memory: every plan */
    const pyr_device_ops_t *ops = NULL;
    PYR_TRY(cuda_ops("an array in GPU memory", &ops));
    const pyr_method_entry_t *method = pyr_method_find(plan->method);
    const char *name = method ? method->name : "this";
    if (pyr_multi_of(plan))
        return pyr_fail(PYR_ERR_UNSUPPORTED, "an array in GPU memory: the plan runs over several devices or ranks (run.devices), "
                                             "whose parts meet through host memory; a plan of one device (run.devices unset) computes "
                                             "on the array where it lies");
    if (method && method->execute)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "an array in GPU memory: the %s method runs its own loop, which takes fields in host "
                                             "memory; method = naive computes on the array where it lies",
                        name);
    if (plan->options.plan_mode == PYR_PLAN_REFINE)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "an array in GPU memory: plan = refine times its trials over host memory; plan = "
                                             "estimate or measure with an in-core plan computes on the array where it lies");
    if (!plan->ops || plan->ops->kind != PYR_BACKEND_CUDA)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "an array in GPU memory: the plan runs on the %s backend; run.backend = cuda computes on "
                                             "the array where it lies (or pass an array in host memory)",
                        plan->ops ? plan->ops->name : "CPU");
    if (!plan->resident || plan->exchange)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "an array in GPU memory: the %s plan streams pieces of the grid through host memory (out "
                                             "of core); an in-core plan (method = naive, with a run.memory budget that holds the whole "
                                             "grid) computes on the array where it lies",
                        name);
    if (plan->options.device != device)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "an array in GPU %d's memory: the plan runs on GPU %d; run.device = %d computes on the "
                                             "array where it lies",
                        device, plan->options.device, device);
    return PYR_OK;
}
