/* pyr_report_plan_multigrid (methods/report.h), the "multigrid" member of a plan's JSON: on grids of 1, 2 and 3
 * dimensions, Dirichlet and Neumann faces (every face Neumann too), V- and F-cycles, both smoothers, with f and
 * without, in core and within budgets that stream the finest levels, it names the levels, the streamed ones' slabs,
 * the device's bytes (the plan's own) and the bytes moved per cycle (pyr_mg_stream_plan's), and a cost per cycle in
 * sweeps of the finest grid that is the run's: the run's sweep equivalents are cycles * cost + 1 (the initial
 * residual).  Any other method's plan gives null. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "outputs/report.h"
#include "plan/plan.h"
#include "methods/report.h"
#include "solvers/multigrid/mg.h"

static char *json_of(const pyr_plan_t *plan)
{
    pyr_json_t j;
    pyr_json_init(&j, 0);
    pyr_json_object(&j, NULL);
    pyr_report_plan_multigrid(&j, "multigrid", plan);
    pyr_json_end(&j);
    static char text[1 << 16];
    pyr_report_finish(&j, text, sizeof text);
    return text;
}

/* The number after "key": in text, NAN where it is missing. */
static double number(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *at = strstr(text, k);
    return at ? strtod(at + strlen(k), NULL) : NAN;
}

/* stream: 0 in core, else a budget of 1/stream of the levels' bytes */
static void one(int dims, const int64_t n[3], int neumann, pyr_cycle_t cycle, pyr_smoother_t smoother, int rhs, int stream)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.equation = PYR_EQ_POISSON;
    p.dims = dims;
    for (int a = 0; a < 3; a++) p.n[a] = a < dims ? n[a] : 1;
    p.precision = PYR_DOUBLE;
    p.poisson.iteration = PYR_ITER_MULTIGRID;
    p.poisson.cycle = cycle;
    p.poisson.smoother = smoother;
    p.poisson.rhs = rhs ? PYR_RHS_SINE : PYR_RHS_ZERO;
    p.init = rhs ? PYR_INIT_ZERO : PYR_INIT_SINE;
    p.poisson.tolerance = 0; /* every cycle */
    p.steps = 3;
    for (int k = 0; k < 2 * dims; k++)
        if (neumann == 2 || (neumann == 1 && k == 1)) p.poisson.face[k] = PYR_FACE_NEUMANN;
    if (neumann == 2 && rhs) p.poisson.rhs = PYR_RHS_ZERO, p.init = PYR_INIT_SINE; /* a compatible problem */
    pyr_mg_hierarchy_t hy;
    CHECK_OK(pyr_mg_hierarchy(&p, &hy));
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.memory = stream ? pyr_mg_bytes(&p, &hy) / (uint64_t)stream : 0; /* a part of the levels' bytes */
    pyr_plan_t *plan = NULL;
    const pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    char what[160];
    snprintf(what, sizeof what, "%dD %lldx%lldx%lld, neumann %d, %s-cycle, %s, f %s, budget %llu", dims, (long long)p.n[0], (long long)p.n[1],
             (long long)p.n[2], neumann, cycle == PYR_CYCLE_F ? "F" : "V", smoother == PYR_SMOOTH_JACOBI ? "jacobi" : "chebyshev",
             p.poisson.rhs == PYR_RHS_ZERO ? "none" : "sine", (unsigned long long)o.memory);
    CHECK(st == PYR_OK, "%s: %s", what, pyr_last_error());
    if (st != PYR_OK) {
        pyr_clear_error();
        return;
    }
    const char *text = json_of(plan);
    pyr_mg_stream_t s;
    CHECK_OK(pyr_mg_stream_plan(&p, &hy, plan->budget, &s));
    CHECK(number(text, "streamed_levels") == s.streamed && (stream ? s.streamed >= 1 : s.streamed == 0), "%s: %s", what, text);
    CHECK(number(text, "device_bytes") == (double)plan->device_bytes && number(text, "moved_bytes_per_cycle") == (double)s.moved &&
              number(text, "host_bytes") == (double)s.host_bytes,
          "%s: %s", what, text);
    CHECK(number(text, "pre_smooth") == hy.pre && number(text, "post_smooth") == hy.post && number(text, "coarsest_sweeps") == hy.coarse_sweeps &&
              strstr(text, cycle == PYR_CYCLE_F ? "\"cycle\":\"f\"" : "\"cycle\":\"v\"") &&
              strstr(text, smoother == PYR_SMOOTH_JACOBI ? "\"smoother\":\"jacobi\"" : "\"smoother\":\"chebyshev\""),
          "%s: %s", what, text);
    /* every level by its nodes, the finest first, and each streamed one's slab */
    const char *at = strstr(text, "\"levels\":[");
    int levels = 0;
    for (const char *q = at; q && (q = strstr(q, "{\"n\":[")) != NULL; q++) {
        char want[96];
        int w = snprintf(want, sizeof want, "{\"n\":[");
        for (int a = 0; a < dims; a++) w += snprintf(want + w, sizeof want - (size_t)w, "%s%lld", a ? "," : "", (long long)hy.level[levels].n[a]);
        snprintf(want + w, sizeof want - (size_t)w, "],\"streamed\":%s", levels < s.streamed ? "true" : "false");
        CHECK(levels < hy.nlevels && !strncmp(q, want, strlen(want)), "%s: level %d is not %s: %s", what, levels, want, text);
        if (levels < s.streamed) {
            const int64_t planes = s.slab[levels] < hy.level[levels].n[s.axis] ? s.slab[levels] : hy.level[levels].n[s.axis];
            CHECK(number(q, "slab_planes") == planes && number(q, "halo_planes") == s.halo[levels], "%s: level %d: %s", what, levels, q);
        }
        levels++;
    }
    CHECK(at && levels == hy.nlevels, "%s: %d levels of %d: %s", what, levels, hy.nlevels, text);
    /* the cost the plan states is the run's */
    const double per = number(text, "sweeps_per_cycle");
    pyr_field_t *u = NULL, *f = NULL;
    CHECK_OK(pyr_field_create(&p, &u));
    CHECK_OK(pyr_field_init(u, &p));
    if (p.poisson.rhs != PYR_RHS_ZERO) {
        CHECK_OK(pyr_field_create(&p, &f));
        CHECK_OK(pyr_field_init_input(f, &p, 1));
    }
    pyr_field_t *fields[2] = {u, f};
    pyr_run_info_t run;
    memset(&run, 0, sizeof run);
    CHECK_OK(pyr_execute_fields(plan, fields, 2, NULL, &run));
    const double want = (double)run.mg_cycles * per + 1;
    CHECK(run.mg_cycles == 3 && fabs(run.mg_sweeps - want) <= 1e-9 * want, "%s: the plan's %.17g sweeps per cycle, the run's %.17g in %lld cycles",
          what, per, run.mg_sweeps, (long long)run.mg_cycles);
    printf("%s: %d levels, %d streamed, %.4g sweeps per cycle, the run %.6g in %lld cycles\n", what, hy.nlevels, s.streamed, per, run.mg_sweeps,
           (long long)run.mg_cycles);
    pyr_field_destroy(&u);
    pyr_field_destroy(&f);
    pyr_plan_destroy(&plan);
}

int main(void)
{
    const int64_t n1[3] = {129, 1, 1}, n2[3] = {65, 33, 1}, n3[3] = {17, 33, 17}, n3b[3] = {17, 17, 129}, n2b[3] = {129, 129, 1};
    one(1, n1, 0, PYR_CYCLE_V, PYR_SMOOTH_CHEBYSHEV, 1, 0);
    one(2, n2, 1, PYR_CYCLE_F, PYR_SMOOTH_JACOBI, 1, 0);
    one(2, n2b, 0, PYR_CYCLE_V, PYR_SMOOTH_CHEBYSHEV, 1, 3);
    one(2, n2b, 1, PYR_CYCLE_F, PYR_SMOOTH_CHEBYSHEV, 1, 3);
    one(2, n2b, 0, PYR_CYCLE_V, PYR_SMOOTH_JACOBI, 1, 2);
    one(2, n2b, 2, PYR_CYCLE_V, PYR_SMOOTH_JACOBI, 0, 3);
    one(3, n3, 0, PYR_CYCLE_F, PYR_SMOOTH_CHEBYSHEV, 0, 0);
    one(3, n3b, 1, PYR_CYCLE_V, PYR_SMOOTH_JACOBI, 1, 2);
    one(3, n3b, 2, PYR_CYCLE_F, PYR_SMOOTH_CHEBYSHEV, 0, 2);

    /* any other method: null */
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.equation = PYR_EQ_POISSON;
    p.dims = 2;
    p.n[0] = p.n[1] = 33;
    p.steps = 10;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    if (plan) CHECK(strstr(json_of(plan), "\"multigrid\":null") != NULL, "a Jacobi plan: %s", json_of(plan));
    pyr_plan_destroy(&plan);
    return check_report();
}
