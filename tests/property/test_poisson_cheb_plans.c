/* Property test of Chebyshev-accelerated Jacobi out of core (issue 48): the
 * streamed plans carry both layers of u through their pieces (the layer two
 * sweeps back goes up into the buffer a piece's first sweep writes, and the
 * last two come back down), so random problems (1D/2D/3D, float and double,
 * f zero, a sine or random values, fixed sweep counts and tolerance stops at
 * random check intervals) under random streamed plans (trivial, pyramid in
 * every decomposition that applies, method = auto under a budget the grid
 * does not fit in; heights; budgets from the smallest that fits; 1 to 3
 * slots; kernel variants) give the CPU naive method's field bit for bit,
 * the same sweep count and final change, and move the values their plan
 * predicted (both layers each way).  Before the layers were carried these
 * plans were refused; a plan that carried one layer would diverge from the
 * naive result at its second pass.
 *
 *   test_poisson_cheb_plans [cases] [seed] [backend]     (defaults: 120 1 cpu) */
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"
#include "poisson_util.h"
#include "schemes/scheme.h"

static int stopped_early, pyramids, autos, multi_pass;

static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 7727u + (uint64_t)c * 104723u};
    const int dims = rng_range(&r, 0, 7) == 0 ? 1 : (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 3, dims == 1 ? 300 : dims == 2 ? 60 : 20);
        len[a] = 0.5 + (double)rng_range(&r, 0, 100) / 100.0;
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    const int rhs_kind = (int)rng_range(&r, 0, 2); /* 0 zero, 1 sine, 2 random values given */
    pyr_problem_t p;
    make_poisson(&p, dims, n, len, prec, rng_range(&r, 1, 80), 0, rng_range(&r, 1, 25), rhs_kind == 0 ? PYR_RHS_ZERO : PYR_RHS_SINE,
                 rng_range(&r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_ZERO, rng_next(&r));
    p.poisson.iteration = PYR_ITER_CHEBYSHEV;
    pyr_field_t *f = NULL;
    if (rhs_kind == 2) {
        if (pyr_field_create(&p, &f) != PYR_OK) return 1;
        for (int64_t i = 0; i < pyr_field_count(f); i++) {
            double v = (double)(rng_next(&r) % 2001) / 100.0 - 10.0;
            if (prec == PYR_DOUBLE) ((double *)f->data)[i] = v;
            else ((float *)f->data)[i] = (float)v;
        }
    }
    /* a tolerance that stops the run at some check (a fraction of the change a few sweeps in) */
    if (rng_range(&r, 0, 2) == 0) {
        pyr_problem_t q = p;
        q.steps = rng_range(&r, 1, p.steps);
        pyr_run_info_t qr;
        pyr_field_t *qu = poisson_reference(&q, f, &qr, NULL);
        pyr_field_destroy(&qu);
        if (qr.change > 0) p.poisson.tolerance = qr.change * (0.5 + (double)rng_range(&r, 0, 100) / 100.0);
    }

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    const int m = (int)rng_range(&r, 0, 5);
    o.method = m == 0 ? PYR_METHOD_TRIVIAL : m == 1 ? PYR_METHOD_AUTO : PYR_METHOD_PYRAMID;
    if (o.method != PYR_METHOD_AUTO) {
        if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
        else if (rng_range(&r, 0, 3) == 0) o.decomposition = PYR_DECOMP_AUTO;
        else if (dims == 2) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_STRIPS : PYR_DECOMP_BLOCKS;
        else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    }
    if (o.method == PYR_METHOD_PYRAMID) o.height = rng_range(&r, 0, 3) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CPU) {
        static const char *const v[] = {"", "auto", "sweep", "wave", "wave:3,1,2"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 4)]);
    } else {
        static const char *const v[] = {"", "plain", "fused:1"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 2)]);
    }
    const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec);
    uint64_t lo = smallest_budget(&p, o, 4 * grid + (1u << 20));
    pyr_options_t naive = o;
    naive.method = PYR_METHOD_NAIVE;
    const uint64_t in_core = smallest_budget(&p, naive, 8 * grid + (1u << 20));
    if (o.method == PYR_METHOD_AUTO) /* below what the in-core plan needs, so that auto streams the grid */
        o.memory = lo + (in_core > lo + 1 ? (uint64_t)rng_range(&r, 0, (int64_t)(in_core - lo - 1)) : 0);
    else o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(3 * grid));
    /* both bounds are the backend's own (the CUDA layout's are larger: three pieces in flight, rows padded), so that auto
     * streams the grid on either; where no streamed plan needs less than the in-core one, auto would hold it whole: a
     * pyramid then, at no less than its own least budget (auto's was the in-core plan's) */
    if (o.method == PYR_METHOD_AUTO && o.memory >= in_core) {
        o.method = PYR_METHOD_PYRAMID;
        const uint64_t least = smallest_budget(&p, o, 4 * grid + (1u << 20));
        if (o.memory < least) o.memory = least;
    }
    char label[320];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD %lldx%lldx%lld %s f=%s iterations=%lld tolerance=%g check_every=%lld | %s %s height=%lld "
             "slots=%d memory=%llu kernel=%s",
             c, (unsigned long long)seed, dims, (long long)n[0], (long long)n[1], (long long)n[2], pyr_precision_name(prec),
             rhs_kind == 0 ? "0" : rhs_kind == 1 ? "sine" : "random", (long long)p.steps, p.poisson.tolerance,
             (long long)p.poisson.check_every, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)o.height, o.slots,
             (unsigned long long)o.memory, o.kernel);

    pyr_plan_t *plan = NULL;
    pyr_field_t *a = NULL, *b = NULL;
    pyr_run_info_t ra, rb;
    pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    CHECK(st == PYR_OK, "%s: plan refused: %s", label, pyr_last_error());
    int bad = st != PYR_OK;
    if (st == PYR_OK) {
        CHECK(!plan->resident && plan->previous, "%s: a %s plan (resident %d, carries the older layer %d)", label,
              pyr_method_name(plan->method), plan->resident, plan->previous);
        pyr_plan_info_t info;
        CHECK_OK(pyr_plan_get_info(plan, &info));
        if (pyr_field_create(&p, &a) == PYR_OK && pyr_field_init(a, &p) == PYR_OK) {
            pyr_field_t *fields[2] = {a, f};
            st = pyr_execute_fields(plan, fields, 2, NULL, &ra);
            CHECK(st == PYR_OK, "%s: run failed: %s", label, pyr_last_error());
            /* the plan's counts hold the whole run's passes; a run stopped at a check did fewer */
            if (st == PYR_OK && ra.steps == p.steps)
                CHECK(ra.counts.uploaded == info.counts.uploaded && ra.counts.downloaded == info.counts.downloaded,
                      "%s: moved %llu up and %llu down, the plan predicted %llu and %llu", label, (unsigned long long)ra.counts.uploaded,
                      (unsigned long long)ra.counts.downloaded, (unsigned long long)info.counts.uploaded,
                      (unsigned long long)info.counts.downloaded);
            bad |= st != PYR_OK;
        }
        pyramids += plan->method == PYR_METHOD_PYRAMID;
        autos += o.method == PYR_METHOD_AUTO;
        multi_pass += plan->height < p.steps;
    }
    pyr_plan_destroy(&plan);
    if (!bad) {
        pyr_status_t sb;
        b = poisson_reference(&p, f, &rb, &sb);
        CHECK(b != NULL, "%s: the naive run failed: %s", label, pyr_last_error());
    }
    if (a && b && !bad) {
        int64_t i = first_difference(a, b);
        CHECK(i < 0, "%s: differs from the naive method at node %lld", label, (long long)i);
        CHECK(ra.steps == rb.steps, "%s: %lld sweeps, the naive method %lld", label, (long long)ra.steps, (long long)rb.steps);
        CHECK(ra.change == rb.change && ra.converged == rb.converged, "%s: change %.17g (converged %d), the naive method %.17g (%d)", label,
              ra.change, ra.converged, rb.change, rb.converged);
        bad = i >= 0 || ra.steps != rb.steps || ra.change != rb.change;
        stopped_early += rb.converged && rb.steps < p.steps;
    } else {
        bad = 1;
    }
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
    pyr_field_destroy(&f);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 120;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random streamed Chebyshev plans on the %s backend bit-identical to the naive method (seed %llu); %d stopped at a "
           "check before their last sweep, %d were pyramids, %d method = auto out of core, %d ran several passes\n",
           cases - failed, cases, backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed, stopped_early, pyramids, autos,
           multi_pass);
    CHECK(failed > 0 || cases < 20 || (stopped_early >= cases / 10 && pyramids >= cases / 3 && autos >= cases / 10 && multi_pass >= cases / 2),
          "too few cases exercised stops (%d), pyramids (%d), method = auto (%d) or several passes (%d) to mean much", stopped_early,
          pyramids, autos, multi_pass);
    return check_report();
}
