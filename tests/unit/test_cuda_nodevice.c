/* backend = cuda where no GPU is usable (as in CI) must fail with
 * PYR_ERR_NODEVICE and say what to do, and backend = auto must fall back to
 * the CPU with a notice.  With a GPU, an out-of-range device index must
 * fail the same clear way.  Runs everywhere (no GPU label). */
#include <stdio.h>
#include <string.h>

#include "heat_util.h"

int main(void)
{
    int64_t n[3] = {33, 17, 1};
    pyr_problem_t p;
    make_problem(&p, 2, n, PYR_FLOAT, 5, PYR_INIT_RANDOM, 1);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    pyr_plan_t *plan = NULL;
    if (pyr_gpu_count() == 0) {
        CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_NODEVICE, "backend = cpu");
        printf("backend = cuda without a GPU -> %s\n", pyr_last_error());
        o.backend = PYR_BACKEND_AUTO;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        if (plan) {
            pyr_plan_info_t info;
            CHECK_OK(pyr_plan_get_info(plan, &info));
            CHECK(info.backend == PYR_BACKEND_CPU, "auto without a GPU chose %s", pyr_backend_name(info.backend));
            printf("backend = auto without a GPU -> %s (notice: %s)\n", pyr_backend_name(info.backend), info.notice);
        }
        pyr_plan_destroy(&plan);
        char text[128];
        CHECK(pyr_gpu_describe(0, text, sizeof text) == PYR_ERR_NODEVICE, "describe without a GPU did not fail");
    } else {
        o.device = pyr_gpu_count();
        CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_NODEVICE, "device");
        printf("device = %d -> %s\n", o.device, pyr_last_error());
        o.device = -1;
        CHECK_FAILS(pyr_plan_create(&p, &o, &plan), PYR_ERR_NODEVICE, "device");
    }
    return check_report();
}
