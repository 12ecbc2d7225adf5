/* Copies staged through the CUDA backend's pinned chunks (run.host_memory =
 * stage): shapes that make every kind of chunk, each compared bit for bit
 * with the CPU naive method, and the run saying it staged.  The chunks are
 * 16 MiB: a 1D row of 5 M floats is cut into two pieces of one row; 2D rows
 * of 16 KiB come 1024 to a chunk, so a 2100-row grid takes three; 3D pieces
 * and 2D blocks move strided part rows plane by plane; pyramid passes stage
 * both uploads and downloads many times per run. */
#include <stdio.h>
#include <string.h>

#include "heat_util.h"

static void one(int dims, int64_t nx, int64_t ny, int64_t nz, pyr_precision_t prec, int64_t steps, pyr_method_t method,
                pyr_decomp_t decomp, int64_t height, uint64_t memory)
{
    const int64_t n[3] = {nx, ny, nz};
    pyr_problem_t p;
    make_problem(&p, dims, n, prec, steps, PYR_INIT_RANDOM, (uint64_t)(nx * 13 + ny * 5 + nz + steps));
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.method = method;
    o.decomposition = decomp;
    o.height = height;
    o.memory = memory;
    o.host_memory = PYR_HOST_STAGE;
    char label[200];
    snprintf(label, sizeof label, "%dD %lldx%lldx%lld %s %s %s h=%lld memory=%llu, staged", dims, (long long)nx, (long long)ny,
             (long long)nz, pyr_precision_name(prec), pyr_method_name(method), pyr_decomp_name(decomp), (long long)height,
             (unsigned long long)memory);
    pyr_plan_t *plan = NULL;
    pyr_field_t *f = NULL;
    if (pyr_plan_create(&p, &o, &plan) != PYR_OK || pyr_field_create(&p, &f) != PYR_OK || pyr_field_init(f, &p) != PYR_OK) {
        CHECK(0, "%s: %s", label, pyr_last_error());
        pyr_plan_destroy(&plan);
        pyr_field_destroy(&f);
        return;
    }
    pyr_plan_info_t info;
    CHECK_OK(pyr_plan_get_info(plan, &info));
    CHECK(info.host_memory == PYR_HOST_STAGE, "%s: the plan says %s", label, pyr_host_memory_name(info.host_memory));
    pyr_field_t *fields[1] = {f};
    pyr_run_info_t ri;
    pyr_status_t st = pyr_execute_fields(plan, fields, 1, NULL, &ri);
    CHECK(st == PYR_OK, "%s: run failed: %s", label, pyr_last_error());
    if (st == PYR_OK) CHECK(ri.host_memory == PYR_HOST_STAGE, "%s: the run says %s", label, pyr_host_memory_name(ri.host_memory));
    pyr_status_t s2;
    pyr_field_t *ref = naive_reference(&p, &s2);
    CHECK(ref != NULL, "%s: CPU reference failed: %s", label, pyr_last_error());
    if (st == PYR_OK && ref) {
        const int64_t i = first_difference(f, ref);
        CHECK(i < 0, "%s: differs from the CPU naive method at node %lld", label, (long long)i);
        printf("%s: %s\n", label, i < 0 ? "bit-identical" : "DIFFERS");
    }
    pyr_field_destroy(&ref);
    pyr_field_destroy(&f);
    pyr_plan_destroy(&plan);
}

int main(void)
{
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    one(1, 5000003, 1, 1, PYR_FLOAT, 5, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0);               /* rows cut in pieces */
    one(2, 4099, 2100, 1, PYR_FLOAT, 9, PYR_METHOD_NAIVE, PYR_DECOMP_AUTO, 0, 0);               /* three chunks of rows */
    one(2, 4099, 2100, 1, PYR_FLOAT, 9, PYR_METHOD_PYRAMID, PYR_DECOMP_STRIPS, 4, 8u << 20);    /* strips, bands */
    one(2, 2000, 3000, 1, PYR_DOUBLE, 8, PYR_METHOD_PYRAMID, PYR_DECOMP_BLOCKS, 3, 12u << 20);  /* part rows */
    one(3, 300, 200, 150, PYR_FLOAT, 6, PYR_METHOD_PYRAMID, PYR_DECOMP_SLABS, 3, 24u << 20);    /* planes */
    one(3, 130, 120, 110, PYR_DOUBLE, 6, PYR_METHOD_PYRAMID, PYR_DECOMP_BLOCKS, 2, 8u << 20);   /* cubes */
    return check_report();
}
