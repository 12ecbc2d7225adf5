/* What programs print about a plan and about the library beside the plan's
 * info struct: where the model's constants came from, and the kernels that
 * are registered with their variants (`pyrgrid info`). */
#include <stdio.h>
#include <string.h>

#include "backend/kernels.h"
#include "core/error.h"
#include "plan/plan.h"

size_t pyr_plan_model_source(const pyr_plan_t *plan, char *text, size_t size)
{
    const int n = snprintf(text, size, "%s", plan ? plan->model_source : "");
    return n > 0 ? (size_t)n : 0;
}

int pyr_kernel_count(void)
{
    const pyr_kernel_t *const *k = NULL;
    return pyr_kernel_all(&k);
}

size_t pyr_kernel_describe(int i, char *text, size_t size)
{
    const pyr_kernel_t *const *k = NULL;
    const int nk = pyr_kernel_all(&k);
    if (i < 0 || i >= nk) {
        if (text && size) text[0] = '\0';
        return 0;
    }
    pyr_variant_t v2, v3;
    char d2[32], d3[32];
    k[i]->default_variant(2, PYR_FLOAT, &v2);
    k[i]->default_variant(3, PYR_FLOAT, &v3);
    pyr_variant_format(&v2, d2, sizeof d2);
    pyr_variant_format(&v3, d3, sizeof d3);
    const int n = snprintf(text, size, "%s on %s: run.kernel = %s; default 2D %s, 3D %s", pyr_equation_name(k[i]->equation),
                           pyr_backend_name(k[i]->backend), k[i]->help, d2, d3);
    return n > 0 ? (size_t)n : 0;
}
