/* Helpers of the Poisson tests: problems, runs through pyr_execute_fields. */
#ifndef PYR_TESTS_POISSON_UTIL_H
#define PYR_TESTS_POISSON_UTIL_H

#include <math.h>
#include <string.h>

#include "heat_util.h"

/* The problem's initial field (its values, Dirichlet faces' included), whatever its faces: made as for the problem
 * with Dirichlet faces (the values do not depend on the faces), so that a solver is tested whatever the scheme's own
 * check accepts. */
static inline pyr_status_t poisson_initial_field(const pyr_problem_t *p, pyr_field_t **u)
{
    pyr_problem_t q = *p;
    for (int k = 0; k < 6; k++) q.poisson.face[k] = PYR_FACE_DIRICHLET, q.poisson.flux[k] = 0;
    *u = NULL;
    pyr_status_t st = pyr_field_create(&q, u);
    if (st == PYR_OK) st = pyr_field_init(*u, &q);
    return st;
}

/* A Poisson problem on [0, L]^dims with the given nodes and right-hand side. */
static inline void make_poisson(pyr_problem_t *p, int dims, const int64_t n[3], const double len[3], pyr_precision_t prec,
                                int64_t iterations, double tolerance, int64_t check_every, pyr_rhs_kind_t rhs, pyr_init_kind_t init,
                                uint64_t seed)
{
    pyr_problem_default(p);
    p->equation = PYR_EQ_POISSON;
    p->dims = dims;
    for (int d = 0; d < 3; d++) {
        p->n[d] = d < dims ? n[d] : 1;
        p->length[d] = d < dims && len ? len[d] : 1.0;
    }
    p->precision = prec;
    p->steps = iterations;
    p->poisson.tolerance = tolerance;
    p->poisson.check_every = check_every;
    p->poisson.rhs = rhs;
    p->init = init;
    p->seed = seed;
}

/* Solve from the problem's initial field (and f from the problem, or `f`
 * when given); the caller destroys the result. */
static inline pyr_field_t *solve_poisson(const pyr_problem_t *p, const pyr_options_t *o, pyr_field_t *f, pyr_run_info_t *run,
                                         pyr_status_t *status)
{
    pyr_plan_t *plan = NULL;
    pyr_field_t *u = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st == PYR_OK) st = pyr_field_create(p, &u);
    if (st == PYR_OK) st = pyr_field_init(u, p);
    pyr_field_t *fields[2] = {u, f};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, 2, NULL, run);
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) pyr_field_destroy(&u);
    if (status) *status = st;
    return u;
}

/* The CPU naive method: the reference of the bitwise tests. */
static inline pyr_field_t *poisson_reference(const pyr_problem_t *p, pyr_field_t *f, pyr_run_info_t *run, pyr_status_t *status)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    return solve_poisson(p, &o, f, run, status);
}

#endif
