/* Conformance (ggml's test-backend-ops is the model): every kernel of every
 * scheme registered for a backend that can run here, with each of its
 * variants, in the naive method and in pyramid plans of a small budget, on
 * 1D, 2D and 3D grids in float and double, gives the CPU naive method's
 * result with the CPU kernel's default variant bit for bit.  A new scheme or
 * backend is tested by registering its kernel (backend/kernels.h). */
#include <stdio.h>
#include <string.h>

#include "backend/kernels.h"
#include "poisson_util.h"

static void make_case(pyr_equation_t eq, int dims, pyr_precision_t prec, uint64_t seed, pyr_problem_t *p)
{
    rng_t r = {seed};
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) n[a] = rng_range(&r, dims == 1 ? 50 : dims == 2 ? 20 : 9, dims == 1 ? 300 : dims == 2 ? 64 : 20);
    if (eq == PYR_EQ_HEAT) {
        make_problem(p, dims, n, prec, rng_range(&r, 5, 24), PYR_INIT_RANDOM, seed);
    } else {
        make_poisson(p, dims, n, NULL, prec, rng_range(&r, 5, 24), 0, rng_range(&r, 2, 9), PYR_RHS_SINE, PYR_INIT_RANDOM, seed);
        if (rng_range(&r, 0, 1)) p->poisson.omega = 0.8;
    }
}

/* Runs p under o; returns the field (caller destroys). */
static pyr_field_t *run(const pyr_problem_t *p, const pyr_options_t *o, pyr_run_info_t *ri)
{
    pyr_plan_t *plan = NULL;
    pyr_field_t *u = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st == PYR_OK) st = pyr_field_create(p, &u);
    if (st == PYR_OK) st = pyr_field_init(u, p);
    pyr_field_t *fields[8] = {u};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, pyr_scheme_field_count(p->equation), NULL, ri);
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) pyr_field_destroy(&u);
    return u;
}

int main(void)
{
    const pyr_kernel_t *const *all = NULL;
    const int nk = pyr_kernel_all(&all);
    int ran = 0, kernels_run = 0;
    for (int k = 0; k < nk; k++) {
        const pyr_kernel_t *K = all[k];
        if (!pyr_backend_available(K->backend)) {
            printf("%s kernel on %s: skipped (backend not usable here)\n", pyr_equation_name(K->equation), pyr_backend_name(K->backend));
            continue;
        }
        kernels_run++;
        int cases = 0, same = 0;
        for (int dims = 1; dims <= 3; dims++)
            for (int pi = 0; pi < 2; pi++) {
                const pyr_precision_t prec = pi ? PYR_DOUBLE : PYR_FLOAT;
                pyr_problem_t p;
                make_case(K->equation, dims, prec, (uint64_t)(k * 97 + dims * 13 + pi + 1), &p);
                pyr_options_t ro;
                pyr_options_default(&ro);
                ro.backend = PYR_BACKEND_CPU;
                ro.method = PYR_METHOD_NAIVE;
                pyr_run_info_t rr;
                pyr_field_t *ref = run(&p, &ro, &rr);
                CHECK(ref != NULL, "reference %s %dD %s: %s", pyr_equation_name(K->equation), dims, pyr_precision_name(prec), pyr_last_error());
                if (!ref) continue;
                pyr_variant_t v[24];
                int nv = K->candidates(dims, prec, v, 23);
                memset(&v[nv], 0, sizeof v[nv]); /* and the default ("" name: the planner's) */
                nv++;
                for (int i = 0; i < nv; i++)
                    for (int m = 0; m < 2; m++) {
                        pyr_options_t o;
                        pyr_options_default(&o);
                        o.backend = K->backend;
                        if (v[i].name[0]) pyr_variant_format(&v[i], o.kernel, sizeof o.kernel);
                        o.method = m ? PYR_METHOD_PYRAMID : PYR_METHOD_NAIVE;
                        if (m) {
                            o.height = 1 + (int64_t)(i % 5);
                            o.slots = 1 + i % 3;
                            o.memory = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) / 2 + (64u << 10);
                            if (o.height > p.steps) o.height = p.steps;
                        }
                        pyr_run_info_t ri;
                        pyr_field_t *u = run(&p, &o, &ri);
                        char label[200];
                        snprintf(label, sizeof label, "%s kernel on %s, variant '%s', %dD %s, %s", pyr_equation_name(K->equation),
                                 pyr_backend_name(K->backend), o.kernel[0] ? o.kernel : "(default)", dims, pyr_precision_name(prec),
                                 pyr_method_name(o.method));
                        CHECK(u != NULL, "%s: %s", label, pyr_last_error());
                        cases++;
                        if (u) {
                            int64_t d = first_difference(u, ref);
                            CHECK(d < 0 && ri.steps == rr.steps && ri.change == rr.change, "%s: differs from the CPU naive method at node %lld",
                                  label, (long long)d);
                            same += d < 0;
                        }
                        pyr_field_destroy(&u);
                    }
                pyr_field_destroy(&ref);
            }
        printf("%s kernel on %s: %d of %d runs (every variant, naive and pyramid, 1D-3D, float and double) bit-identical\n",
               pyr_equation_name(K->equation), pyr_backend_name(K->backend), same, cases);
        ran += cases;
    }
    CHECK(kernels_run >= 2 && ran > 0, "no kernel could run (%d kernels, %d runs)", kernels_run, ran);
    return check_report();
}
