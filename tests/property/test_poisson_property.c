/* Property test of the Poisson scheme (issue 19): random problems (1D/2D/3D,
 * float and double, f zero, a sine or random values, damped or not, fixed
 * sweep counts and tolerance stops at random check intervals) under random
 * plans (naive, trivial, pyramid; every decomposition; heights; budgets from
 * the smallest that fits to above the grid; 1 to 3 slots; kernel variants)
 * give the CPU naive method's field bit for bit, and the same sweep count
 * and final change.
 *
 *   test_poisson_property [cases] [seed] [backend]     (defaults: 200 1 cpu) */
#include <stdio.h>
#include <string.h>

#include "poisson_util.h"
#include "schemes/scheme.h"

static int stopped_early, pyramids; /* cases that stopped at a check before the last sweep; pyramid plans */

static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 104729u + (uint64_t)c * 7919u};
    const int dims = rng_range(&r, 0, 9) == 0 ? 1 : (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 3, dims == 1 ? 400 : dims == 2 ? 70 : 22);
        len[a] = 0.5 + (double)rng_range(&r, 0, 100) / 100.0;
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    const int rhs_kind = (int)rng_range(&r, 0, 2); /* 0 zero, 1 sine, 2 random values given */
    pyr_problem_t p;
    make_poisson(&p, dims, n, len, prec, rng_range(&r, 1, 60), 0, rng_range(&r, 1, 25), rhs_kind == 0 ? PYR_RHS_ZERO : PYR_RHS_SINE,
                 rng_range(&r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_ZERO, rng_next(&r));
    if (rng_range(&r, 0, 3) == 0) p.poisson.omega = 0.2 + (pyr_poisson_omega_limit(&p) - 0.2) * (double)rng_range(&r, 0, 160) / 161.0;
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
    o.method = m == 0 ? PYR_METHOD_NAIVE : m == 1 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (dims == 1) o.decomposition = PYR_DECOMP_SEGMENTS;
    else if (dims == 2) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_STRIPS : PYR_DECOMP_BLOCKS;
    else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    if (o.method == PYR_METHOD_PYRAMID) o.height = rng_range(&r, 0, 3) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CPU) {
        static const char *const v[] = {"", "auto", "sweep", "wave", "wave:3,1,2"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 4)]);
    } else {
        static const char *const v[] = {"", "plain", "fused:1", "fused:3", "fused:5"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 4)]);
        if (dims == 2 && rng_range(&r, 0, 3) == 0) snprintf(o.kernel, sizeof o.kernel, "fused:7,128");
    }
    if (o.method != PYR_METHOD_NAIVE) {
        uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec);
        pyr_options_t lo_o = o;
        uint64_t lo = smallest_budget(&p, lo_o, 4 * grid + (1u << 20));
        o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(3 * grid));
    }
    char label[320];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD %lldx%lldx%lld %s f=%s omega=%g iterations=%lld tolerance=%g check_every=%lld | %s %s height=%lld "
             "slots=%d memory=%llu kernel=%s",
             c, (unsigned long long)seed, dims, (long long)n[0], (long long)n[1], (long long)n[2], pyr_precision_name(prec),
             rhs_kind == 0 ? "0" : rhs_kind == 1 ? "sine" : "random", p.poisson.omega, (long long)p.steps, p.poisson.tolerance,
             (long long)p.poisson.check_every, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)o.height, o.slots,
             (unsigned long long)o.memory, o.kernel);

    pyr_run_info_t ra, rb;
    pyr_status_t sa, sb;
    pyr_field_t *a = solve_poisson(&p, &o, f, &ra, &sa);
    pyr_field_t *b = poisson_reference(&p, f, &rb, &sb);
    int bad = 0;
    CHECK(a && b, "%s: run failed: %s", label, pyr_last_error());
    if (a && b) {
        int64_t i = first_difference(a, b);
        CHECK(i < 0, "%s: differs from the naive method at node %lld", label, (long long)i);
        CHECK(ra.steps == rb.steps, "%s: %lld sweeps, the naive method %lld", label, (long long)ra.steps, (long long)rb.steps);
        CHECK(ra.change == rb.change && ra.converged == rb.converged, "%s: change %.17g (converged %d), the naive method %.17g (%d)", label,
              ra.change, ra.converged, rb.change, rb.converged);
        bad = i >= 0 || ra.steps != rb.steps || ra.change != rb.change;
        stopped_early += rb.converged && rb.steps < p.steps;
        pyramids += o.method == PYR_METHOD_PYRAMID;
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
    int cases = argc > 1 ? atoi(argv[1]) : 200;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random Poisson plans on the %s backend bit-identical to the naive method (seed %llu); %d stopped at a check "
           "before their last sweep, %d were pyramids\n",
           cases - failed, cases, backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed, stopped_early, pyramids);
    CHECK(failed > 0 || cases < 20 || (stopped_early >= cases / 10 && pyramids >= cases / 3),
          "too few cases exercised stops (%d) or pyramids (%d) to mean much", stopped_early, pyramids);
    return check_report();
}
