/* In-place host update: with the process's address space capped at the grid
 * plus a quarter of it, the pyramid method still solves the problem (it keeps
 * no second full-size host copy), gives the naive result bit for bit, and the
 * cap is real: the naive method (two more grids) fails cleanly under it. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "heat_util.h"

#if !defined(__SANITIZE_ADDRESS__)
static long vm_kib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (!fp) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, "VmSize:", 7)) sscanf(line + 7, "%ld", &kib);
    fclose(fp);
    return kib;
}
#endif

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
    printf("AddressSanitizer reserves terabytes of address space: skipped\n");
    return 77;
#else
    pyr_problem_t p;
    int64_t n[3] = {2049, 2049, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 12, PYR_INIT_RANDOM, 11);
    size_t grid_bytes = (size_t)pyr_problem_nodes(&p) * 8; /* 32 MiB */

    /* Reference first, before the cap. */
    pyr_options_t naive;
    pyr_options_default(&naive);
    naive.backend = PYR_BACKEND_CPU;
    naive.method = PYR_METHOD_NAIVE;
    naive.threads = 2;
    pyr_field_t *ref = run_problem(&p, &naive, NULL, NULL, NULL);
    CHECK(ref != NULL, "reference run: %s", pyr_last_error());

    pyr_options_t pyr;
    pyr_options_default(&pyr);
    pyr.backend = PYR_BACKEND_CPU;
    pyr.method = PYR_METHOD_PYRAMID;
    pyr.decomposition = PYR_DECOMP_BLOCKS;
    pyr.height = 4;
    pyr.memory = 2 << 20;
    pyr.threads = 2;
    pyr_plan_t *plan = NULL, *naive_plan = NULL;
    pyr_field_t *f = NULL;
    CHECK_OK(pyr_plan_create(&p, &pyr, &plan));
    CHECK_OK(pyr_plan_create(&p, &naive, &naive_plan));
    CHECK_OK(pyr_field_create(&p, &f));
    CHECK_OK(pyr_field_init(f, &p));
    if (!plan || !f || !ref) return check_report();

    /* Everything the run needs beyond this point must fit in a quarter grid. */
    long now = vm_kib();
    CHECK(now > 0, "cannot read VmSize");
    struct rlimit lim;
    lim.rlim_cur = lim.rlim_max = (rlim_t)now * 1024 + grid_bytes / 4;
    CHECK(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit");
    printf("address space capped at %.1f MiB (in use %.1f MiB, grid %.1f MiB)\n", (double)lim.rlim_cur / 1048576.0,
           (double)now / 1024.0, (double)grid_bytes / 1048576.0);

    pyr_status_t st = pyr_execute(naive_plan, f, NULL, NULL);
    CHECK(st == PYR_ERR_NOMEM, "naive under the cap should run out of memory, got %s", pyr_status_name(st));
    printf("naive under the cap: %s\n", pyr_last_error());
    CHECK_OK(pyr_field_init(f, &p));
    st = pyr_execute(plan, f, NULL, NULL);
    CHECK(st == PYR_OK, "pyramid under the cap: %s", pyr_last_error());
    if (st == PYR_OK) CHECK(first_difference(f, ref) < 0, "pyramid result under the cap differs from naive");
    printf("pyramid (blocks, height 4, 2 MiB budget) completed in place under the cap\n");
    pyr_plan_destroy(&plan);
    pyr_plan_destroy(&naive_plan);
    pyr_field_destroy(&f);
    pyr_field_destroy(&ref);
    return check_report();
#endif
}
