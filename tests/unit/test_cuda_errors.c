/* Failure handling of the CUDA backend: a budget above the free device
 * memory, running out of device memory during a run (injected, and real with
 * the memory taken by another allocation), and an invalid device index: each
 * a clear error, no crash, and the backend still usable afterwards. */
#include <stdio.h>
#include <string.h>

#include "backend/device.h"
#include "backend/kernels.h"
#include "backend/cuda/cuda_api.h"
#include "heat_util.h"

static void solve(const pyr_problem_t *p, const pyr_options_t *o, pyr_status_t want, const char *needle, const char *what)
{
    pyr_plan_t *plan = NULL;
    pyr_field_t *f = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st == PYR_OK) {
        CHECK_OK(pyr_field_create(p, &f));
        CHECK_OK(pyr_field_init(f, p));
        st = pyr_execute(plan, f, NULL, NULL);
    }
    CHECK(st == want, "%s: got %s (%s), expected %s", what, pyr_status_name(st), pyr_last_error(), pyr_status_name(want));
    if (st != PYR_OK && needle)
        CHECK(strstr(pyr_last_error(), needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, pyr_last_error(), needle);
    if (st != PYR_OK) printf("%s -> %s: %s\n", what, pyr_status_name(st), pyr_last_error());
    pyr_plan_destroy(&plan);
    pyr_field_destroy(&f);
}

int main(void)
{
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    /* held for its hooks (cuda_api.h): the injected allocation failures */
    pyr_device_t *gpu = NULL;
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &gpu));
    if (!gpu) return check_report();
    char text[256];
    CHECK_OK(pyr_gpu_describe(0, text, sizeof text));
    printf("GPU 0: %s\n", text);
    CHECK(strstr(text, "compute capability") != NULL, "describe: %s", text);

    int64_t n[3] = {4096, 4096, 1};
    pyr_problem_t p;
    make_problem(&p, 2, n, PYR_FLOAT, 24, PYR_INIT_RANDOM, 3);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_PYRAMID;
    o.height = 8;

    /* a budget above what is free */
    o.memory = 1ull << 50;
    solve(&p, &o, PYR_ERR_DEVICE_NOMEM, "free", "budget of 1 PiB");

    /* an invalid device */
    o.memory = 16ull << 20;
    o.device = 999;
    solve(&p, &o, PYR_ERR_NODEVICE, "device", "device = 999");
    o.device = 0;

    /* allocation failures injected at each allocation of a run */
    for (int k = 1; k <= 4; k++) {
        pyr_cuda_fail_alloc_after(gpu, k);
        char what[64];
        snprintf(what, sizeof what, "allocation %d fails", k);
        solve(&p, &o, PYR_ERR_DEVICE_NOMEM, "out of device memory", what);
        pyr_cuda_fail_alloc_after(gpu, 0);
    }

    /* real: plan, then let another allocation take the memory, then run */
    {
        pyr_plan_t *plan = NULL;
        o.memory = 48ull << 20;
        CHECK_OK(pyr_plan_create(&p, &o, &plan));
        void *ctx = NULL;
        CHECK_OK(pyr_device_cuda.create(&o, PYR_FLOAT, &ctx));
        uint64_t fr = 0, total = 0;
        CHECK_OK(pyr_device_cuda.mem_info(ctx, &fr, &total));
        void *hog = NULL;
        size_t take = fr > (24ull << 20) ? (size_t)(fr - (24ull << 20)) : 0;
        pyr_status_t hs = PYR_ERR_DEVICE_NOMEM;
        while (take > (64ull << 20) && (hs = pyr_device_cuda.dev_alloc(ctx, take, &hog)) != PYR_OK) take -= 64ull << 20;
        CHECK(hs == PYR_OK, "could not take the free device memory");
        pyr_field_t *f = NULL;
        CHECK_OK(pyr_field_create(&p, &f));
        CHECK_OK(pyr_field_init(f, &p));
        pyr_status_t st = pyr_execute(plan, f, NULL, NULL);
        CHECK(st == PYR_ERR_DEVICE_NOMEM, "run with the memory taken: got %s (%s)", pyr_status_name(st), pyr_last_error());
        printf("run with the device memory taken -> %s: %s\n", pyr_status_name(st), pyr_last_error());
        if (hog) pyr_device_cuda.dev_free(ctx, hog);
        pyr_device_cuda.destroy(ctx);
        /* the same plan runs once the memory is back */
        CHECK_OK(pyr_field_init(f, &p));
        CHECK_OK(pyr_execute(plan, f, NULL, NULL));
        pyr_field_destroy(&f);
        pyr_plan_destroy(&plan);
    }

    /* still correct after all that */
    pyr_options_t ref;
    pyr_options_default(&ref);
    ref.backend = PYR_BACKEND_CPU;
    ref.method = PYR_METHOD_NAIVE;
    int64_t m[3] = {300, 200, 1};
    make_problem(&p, 2, m, PYR_DOUBLE, 30, PYR_INIT_RANDOM, 4);
    o.memory = 256ull << 10;
    pyr_status_t s1, s2;
    pyr_field_t *a = run_problem(&p, &o, NULL, NULL, &s1), *b = run_problem(&p, &ref, NULL, NULL, &s2);
    CHECK(a && b && first_difference(a, b) < 0, "pyramid after the failures differs from the CPU (%s)", pyr_last_error());
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
    pyr_device_release(gpu);
    return check_report();
}
