/* Helpers of the Maxwell (FDTD) tests: problems, runs through
 * pyr_execute_fields with the probes' series collected, comparison. */
#ifndef PYR_TESTS_MAXWELL_UTIL_H
#define PYR_TESTS_MAXWELL_UTIL_H

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "heat_util.h"

#define MX_FIELDS 21 /* the scheme's fields: six components, three materials, twelve psi */

/* A Maxwell problem on [0, L]^dims in vacuum with PEC walls. */
static inline void make_maxwell(pyr_problem_t *p, int dims, const int64_t n[3], const double len[3], int te, pyr_precision_t prec,
                                int64_t steps, double courant)
{
    pyr_problem_default(p);
    p->equation = PYR_EQ_MAXWELL;
    p->dims = dims;
    for (int d = 0; d < 3; d++) {
        p->n[d] = d < dims ? n[d] : 1;
        p->length[d] = d < dims && len ? len[d] : 1.0;
    }
    p->precision = prec;
    p->steps = steps;
    p->maxwell.te = te;
    p->maxwell.courant = courant;
    p->init = PYR_INIT_ZERO;
}

static inline int mx_used(const pyr_problem_t *p, int c)
{
    if (p->dims == 3) return 1;
    return p->maxwell.te ? (c == PYR_HZ || c == PYR_EX || c == PYR_EY) : (c == PYR_EZ || c == PYR_HX || c == PYR_HY);
}

typedef struct {
    pyr_field_t *c[6]; /* the components (NULL where the mode has none) */
    double *probes;    /* series[s * nprobes + i] */
    int64_t nseries;
    int nprobes;
    pyr_run_info_t run;
    pyr_plan_info_t info;
    /* snapshots: a user callback on the six components */
    pyr_status_t (*on_snapshot)(void *user, pyr_field_t *const *fields, int64_t step);
    void *user;
} mx_result_t;

static inline pyr_status_t mx_probe_cb(void *user, int64_t first, int64_t count, const double *values, int nprobes)
{
    mx_result_t *r = user;
    if (first != r->nseries) return pyr_fail(PYR_ERR_INTERNAL, "probes: steps from %lld, expected %lld", (long long)first, (long long)r->nseries);
    double *g = realloc(r->probes, (size_t)((first + count) * nprobes) * sizeof *g);
    if (!g) return pyr_fail(PYR_ERR_NOMEM, "probes");
    r->probes = g;
    memcpy(g + first * nprobes, values, (size_t)(count * nprobes) * sizeof *values);
    r->nseries = first + count;
    r->nprobes = nprobes;
    return PYR_OK;
}

static inline pyr_status_t mx_snapshot_cb(void *user, pyr_field_t *const *fields, int nfields, int64_t step)
{
    mx_result_t *r = user;
    (void)nfields;
    return r->on_snapshot ? r->on_snapshot(r->user, fields, step) : PYR_OK;
}

static inline void mx_free(mx_result_t *r)
{
    for (int c = 0; c < 6; c++) pyr_field_destroy(&r->c[c]);
    free(r->probes);
    r->probes = NULL;
}

/* Run p from its initial state (or from the given components) under o;
 * fields made from the problem.  Returns the status; r holds the result. */
static inline pyr_status_t mx_run(const pyr_problem_t *p, const pyr_options_t *o, pyr_field_t *const *given, mx_result_t *r)
{
    pyr_status_t (*on_snapshot)(void *, pyr_field_t *const *, int64_t) = r->on_snapshot;
    void *user = r->user;
    memset(r, 0, sizeof *r);
    r->on_snapshot = on_snapshot;
    r->user = user;
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st == PYR_OK) st = pyr_plan_get_info(plan, &r->info);
    pyr_field_t *fields[MX_FIELDS] = {NULL};
    for (int c = 0; c < 6 && st == PYR_OK; c++) {
        if (!mx_used(p, c)) continue;
        st = pyr_field_create(p, &r->c[c]);
        if (st == PYR_OK && given && given[c])
            memcpy(r->c[c]->data, given[c]->data, (size_t)pyr_field_count(given[c]) * pyr_precision_size(p->precision));
        else if (st == PYR_OK) st = pyr_field_init_state(r->c[c], p, c);
        fields[c] = r->c[c];
    }
    pyr_hooks_t hooks = {.user = r, .probe = mx_probe_cb, .snapshot_fields = on_snapshot ? mx_snapshot_cb : NULL};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, MX_FIELDS, &hooks, &r->run);
    pyr_plan_destroy(&plan);
    return st;
}

static inline pyr_status_t mx_reference(const pyr_problem_t *p, pyr_field_t *const *given, mx_result_t *r)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    return mx_run(p, &o, given, r);
}

static inline double mx_get(const pyr_field_t *f, int64_t x, int64_t y, int64_t z)
{
    return field_get(f, (z * f->n[1] + y) * f->n[0] + x);
}

/* Energy sum eps E^2 + mu H^2 over the stored values (vacuum: plain sums). */
static inline double mx_energy(pyr_field_t *const *c)
{
    double e = 0;
    for (int k = 0; k < 6; k++) {
        if (!c[k]) continue;
        for (int64_t i = 0; i < pyr_field_count(c[k]); i++) {
            double v = field_get(c[k], i);
            e += v * v;
        }
    }
    return e;
}

#endif
