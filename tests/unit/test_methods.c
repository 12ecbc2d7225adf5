/* The methods as registered entries (methods/method.h, issue 52): the
 * registry holds one entry per method, named as pyr_method_name names it;
 * method = auto takes the first automatic entry that fits (naive, else
 * pyramid), so that its plan is the one the method asked for by name makes;
 * every plan records which entry made it and why (plan->method_why); a
 * method the registry does not know is refused; the long-vector entry's
 * checks run for every method.  The plans' choices themselves are pinned by
 * tests/repo/methods_expected.txt (test_methods_plans). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "heat_util.h"
#include "methods/method.h"
#include "plan/plan.h"

static pyr_status_t plan_of(const pyr_problem_t *p, pyr_method_t m, uint64_t memory, pyr_plan_t **plan)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 2;
    o.method = m;
    o.memory = memory;
    return pyr_plan_create(p, &o, plan);
}

static void test_registry(void)
{
    const pyr_method_t ids[] = {PYR_METHOD_NAIVE, PYR_METHOD_TRIVIAL, PYR_METHOD_PYRAMID, PYR_METHOD_LONGVECTOR, PYR_METHOD_MULTIGRID};
    CHECK(pyr_method_count() == 5, "%d entries", pyr_method_count());
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const pyr_method_entry_t *e = pyr_method_find(ids[i]);
        CHECK(e && e->id == ids[i] && !strcmp(e->name, pyr_method_name(ids[i])), "entry of %s", pyr_method_name(ids[i]));
        CHECK(e && e->choose && e->build, "%s chooses and builds", pyr_method_name(ids[i]));
    }
    CHECK(pyr_method_find(PYR_METHOD_AUTO) == NULL && pyr_method_at(-1) == NULL && pyr_method_at(pyr_method_count()) == NULL,
          "auto and out-of-range indices have no entry");
    /* method = auto asks naive first, then pyramid, which takes whatever is left */
    const pyr_method_entry_t *autos[4];
    int na = 0;
    for (int i = 0; i < pyr_method_count(); i++)
        if (pyr_method_at(i)->automatic) autos[na++] = pyr_method_at(i);
    CHECK(na == 2 && autos[0]->id == PYR_METHOD_NAIVE && autos[1]->id == PYR_METHOD_PYRAMID && autos[1]->fits == NULL,
          "automatic entries: naive, then pyramid (no fit test)");
}

/* auto's plan is naive's where naive fits, else pyramid's, with the same geometry and budget */
static void test_auto_is_first_fit(void)
{
    rng_t r = {0x5eed52u};
    for (int trial = 0; trial < 24; trial++) {
        const int dims = 1 + (int)rng_range(&r, 0, 2);
        int64_t n[3];
        for (int a = 0; a < 3; a++) n[a] = dims == 1 ? rng_range(&r, 40, 3000) : dims == 2 ? rng_range(&r, 20, 200) : rng_range(&r, 9, 40);
        pyr_problem_t p;
        make_problem(&p, dims, n, trial & 1 ? PYR_FLOAT : PYR_DOUBLE, rng_range(&r, 1, 120), PYR_INIT_RANDOM, 1);
        const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(p.precision);
        const uint64_t memory = grid * (uint64_t)rng_range(&r, 1, 40) / 8; /* from an eighth to five grids */
        pyr_plan_t *a = NULL, *naive = NULL, *pyr = NULL;
        CHECK_OK(plan_of(&p, PYR_METHOD_AUTO, memory, &a));
        const pyr_status_t sn = plan_of(&p, PYR_METHOD_NAIVE, memory, &naive);
        pyr_clear_error();
        const pyr_plan_t *want = naive;
        if (sn != PYR_OK) {
            CHECK_OK(plan_of(&p, PYR_METHOD_PYRAMID, memory, &pyr));
            want = pyr;
        }
        if (a && want) {
            CHECK(a->method == want->method && a->decomp == want->decomp && a->height == want->height &&
                      a->device_bytes == want->device_bytes && a->slots == want->slots && a->budget == want->budget &&
                      !memcmp(&a->predicted, &want->predicted, sizeof a->predicted),
                  "trial %d (%dD, memory %llu): auto made %s %s h %lld, the method by name %s %s h %lld", trial, dims,
                  (unsigned long long)memory, pyr_method_name(a->method), pyr_decomp_name(a->decomp), (long long)a->height,
                  pyr_method_name(want->method), pyr_decomp_name(want->decomp), (long long)want->height);
            const char *head = sn == PYR_OK ? "naive (auto): " : "pyramid (auto; not naive: the naive method keeps the whole grid";
            CHECK(!strncmp(a->method_why, head, strlen(head)), "trial %d: why \"%s\"", trial, a->method_why);
        }
        pyr_plan_destroy(&a);
        pyr_plan_destroy(&naive);
        pyr_plan_destroy(&pyr);
    }
}

static void test_why(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {301, 257, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 700, PYR_INIT_RANDOM, 1);
    pyr_plan_t *plan = NULL;
    CHECK_OK(plan_of(&p, PYR_METHOD_TRIVIAL, 154756, &plan));
    if (plan)
        CHECK(!strncmp(plan->method_why, "trivial (asked for): height 1; ", 31) && strstr(plan->method_why, "predicted fastest of 3"),
              "why \"%s\"", plan->method_why);
    pyr_plan_destroy(&plan);
    CHECK_OK(plan_of(&p, PYR_METHOD_PYRAMID, 154756, &plan));
    if (plan)
        CHECK(!strncmp(plan->method_why, "pyramid (asked for): blocks, height 9, 1 slot: the model's cheapest of ", 71),
              "why \"%s\"", plan->method_why);
    pyr_plan_destroy(&plan);
    CHECK_OK(plan_of(&p, PYR_METHOD_NAIVE, 0, &plan));
    if (plan) CHECK(!strcmp(plan->method_why, "naive (asked for): the whole grid resident, 100 steps per compute call"), "why \"%s\"", plan->method_why);
    pyr_plan_destroy(&plan);
}

static void test_refusals(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {65, 65, 1};
    make_problem(&p, 2, n, PYR_DOUBLE, 10, PYR_INIT_RANDOM, 1);
    pyr_plan_t *plan = NULL;
    /* a method the registry does not know: refused, where it was planned as pyramid before */
    CHECK_FAILS(plan_of(&p, (pyr_method_t)17, 0, &plan), PYR_ERR_CONFIG, "use auto, naive, trivial, pyramid, longvector or multigrid");
    CHECK(plan == NULL, "no plan");
    /* every entry's check runs whatever the method: the long-vector variant without its method */
    pyr_options_t o;
    pyr_options_default(&o);
    o.method = PYR_METHOD_NAIVE;
    snprintf(o.kernel, sizeof o.kernel, "longvector");
    CHECK_FAILS(pyr_methods_check(&p, &o), PYR_ERR_CONFIG, "the long-vector method's variant");
    /* and what the method implies: its variant */
    pyr_options_default(&o);
    o.method = PYR_METHOD_LONGVECTOR;
    o.backend = PYR_BACKEND_CUDA;
    CHECK_OK(pyr_methods_check(&p, &o));
    CHECK(!strcmp(o.kernel, "longvector"), "method = longvector implies its variant, got '%s'", o.kernel);
    o.backend = PYR_BACKEND_CPU;
    CHECK_FAILS(pyr_methods_check(&p, &o), PYR_ERR_UNSUPPORTED, "backend = cpu");
}

int main(void)
{
    test_registry();
    test_auto_is_first_fit();
    test_why();
    test_refusals();
    return check_report();
}
