/* Overlap check: a pyramid pass with the three slots in flight must take
 * clearly less time than its uploads, computes and downloads one after
 * another (serial mode times each operation alone).  Times are taken between
 * the first and the last progress call, so pinning the grid and the first
 * pass stay out of both.
 *
 *   test_cuda_overlap [n] [height]       (defaults: 8192 16) */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/cuda/cuda_api.h"
#include "backend/device.h"
#include "pass_clock.h"
#include "heat_util.h"


static pyr_status_t run(pyr_device_t *gpu, const pyr_problem_t *p, const pyr_options_t *o, pyr_field_t *f, int serial,
                        pass_clock_t *c)
{
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st != PYR_OK) return st;
    memset(c, 0, sizeof *c);
    c->gpu = gpu;
    pyr_cuda_set_serial(gpu, serial);
    pyr_hooks_t hooks = {.progress = pass_clock_hook, .user = c};
    st = pyr_execute(plan, f, &hooks, NULL);
    pyr_cuda_set_serial(gpu, 0);
    pyr_plan_destroy(&plan);
    return st;
}

int main(int argc, char **argv)
{
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int64_t n = argc > 1 ? atoll(argv[1]) : 8192, h = argc > 2 ? atoll(argv[2]) : 16;
    int64_t nn[3] = {n, n, 1};
    pyr_problem_t p;
    make_problem(&p, 2, nn, PYR_FLOAT, 10 * h, PYR_INIT_RANDOM, 5);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_STRIPS;
    o.height = h;
    o.memory = (uint64_t)n * (uint64_t)n * 4 / 4; /* a quarter of the grid */
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_OK(pyr_field_init(f, &p));
    /* held for its hooks (cuda_api.h): serial mode and its times */
    pyr_device_t *gpu = NULL;
    CHECK_OK(pyr_device_acquire(PYR_BACKEND_CUDA, 0, &gpu));
    if (!gpu) return check_report();
    pass_clock_t ov, se;
    CHECK_OK(run(gpu, &p, &o, f, 0, &ov)); /* warm-up */
    CHECK_OK(run(gpu, &p, &o, f, 1, &se));
    CHECK_OK(run(gpu, &p, &o, f, 0, &ov));
    double t_ov = ov.t_last - ov.t_first, t_se = se.t_last - se.t_first;
    double up = se.at_last.upload_s - se.at_first.upload_s, comp = se.at_last.compute_s - se.at_first.compute_s;
    double down = se.at_last.download_s - se.at_first.download_s, cp = se.at_last.copy_s - se.at_first.copy_s;
    double sum = up + comp + down;
    printf("%lld^2 float, height %lld, 9 passes: alone upload %.1f ms + compute %.1f ms + download %.1f ms = %.1f ms "
           "(copies %.1f ms, serial wall %.1f ms); overlapped %.1f ms = %.2f of the sum\n",
           (long long)n, (long long)h, up * 1e3, comp * 1e3, down * 1e3, sum * 1e3, cp * 1e3, t_se * 1e3, t_ov * 1e3, t_ov / sum);
    CHECK(ov.calls == 10 && se.calls == 10, "expected 10 progress calls, got %d and %d", ov.calls, se.calls);
    CHECK(up > 0 && comp > 0 && down > 0, "serial mode recorded no time");
    CHECK(t_ov < 0.8 * sum, "overlapped pass time %.1f ms is not below 0.8 x (upload + compute + download) = %.1f ms", t_ov * 1e3,
          0.8 * sum * 1e3);
    pyr_field_destroy(&f);
    pyr_device_release(gpu);
    return check_report();
}
