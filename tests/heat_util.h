/* Helpers shared by the heat-equation tests: random problems, runs, bitwise
 * comparison.  Header-only so each test stays one program. */
#ifndef PYR_TESTS_HEAT_UTIL_H
#define PYR_TESTS_HEAT_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pyrgrid.h"

typedef struct {
    uint64_t s;
} rng_t;

static inline uint64_t rng_next(rng_t *r)
{
    uint64_t x = (r->s += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform integer in [lo, hi]. */
static inline int64_t rng_range(rng_t *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* A stable heat problem (sum of r_d = 0.45 * 1/2 ... 0.5 spread over axes). */
static inline void make_problem(pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec, int64_t steps,
                                pyr_init_kind_t init, uint64_t seed)
{
    pyr_problem_default(p);
    p->dims = dims;
    for (int d = 0; d < 3; d++) {
        p->n[d] = d < dims ? n[d] : 1;
        p->length[d] = 1.0;
    }
    p->precision = prec;
    p->steps = steps;
    p->init = init;
    p->seed = seed;
    p->heat.alpha = 1.0;
    double s = 0;
    for (int d = 0; d < dims; d++) {
        double h = 1.0 / (double)(p->n[d] - 1);
        s += 1.0 / (h * h);
    }
    p->heat.dt = 0.45 / s; /* sum of r_d = 0.45 */
}

/* Run a problem from its initial field; returns the final field (caller
 * destroys) or NULL, with counters and plan info when asked. */
static inline pyr_field_t *run_problem(const pyr_problem_t *p, const pyr_options_t *o, pyr_counters_t *counts,
                                       pyr_plan_info_t *info, pyr_status_t *status)
{
    pyr_plan_t *plan = NULL;
    pyr_field_t *f = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st == PYR_OK) st = pyr_field_create(p, &f);
    if (st == PYR_OK) st = pyr_field_init(f, p);
    if (st == PYR_OK && info) st = pyr_plan_get_info(plan, info);
    if (st == PYR_OK) st = pyr_execute(plan, f, NULL, counts);
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) pyr_field_destroy(&f);
    if (status) *status = st;
    return f;
}

/* The reference every bitwise test compares with: the naive method on the
 * CPU backend (NULL on failure, status in *status when given). */
static inline pyr_field_t *naive_reference(const pyr_problem_t *p, pyr_status_t *status)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_NAIVE;
    return run_problem(p, &o, NULL, NULL, status);
}

/* Index of the first differing node, or -1 when bitwise equal. */
/* The smallest memory budget (bytes) for which problem p plans with options
 * o (bisection; a failed try leaves its error set).  `hi` is a first guess:
 * while it is refused for the budget it is doubled (up to 2^40 bytes), so
 * the bisection starts from a budget that plans; a bound below every plan's
 * need would otherwise come back unchecked, as if it planned. */
static inline uint64_t smallest_budget(const pyr_problem_t *p, pyr_options_t o, uint64_t hi)
{
    for (;;) {
        o.memory = hi;
        pyr_plan_t *pl = NULL;
        const pyr_status_t st = pyr_plan_create(p, &o, &pl);
        pyr_plan_destroy(&pl);
        if (st != PYR_ERR_BUDGET || hi >= (1ull << 40)) break;
        hi *= 2;
    }
    uint64_t lo = 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        o.memory = mid;
        pyr_plan_t *pl = NULL;
        if (pyr_plan_create(p, &o, &pl) == PYR_OK) hi = mid;
        else lo = mid + 1;
        pyr_plan_destroy(&pl);
    }
    return lo;
}

static inline int64_t first_difference(const pyr_field_t *a, const pyr_field_t *b)
{
    size_t elem = pyr_precision_size(a->precision);
    int64_t n = pyr_field_count(a);
    if (memcmp(a->data, b->data, (size_t)n * elem) == 0) return -1;
    for (int64_t i = 0; i < n; i++)
        if (memcmp((char *)a->data + i * (int64_t)elem, (char *)b->data + i * (int64_t)elem, elem)) return i;
    return -1;
}

static inline double field_get(const pyr_field_t *f, int64_t i)
{
    return f->precision == PYR_DOUBLE ? ((double *)f->data)[i] : ((float *)f->data)[i];
}

/* Mixed signs and exponents, subnormals and signed zeros: values a kernel
 * rounding differently (or flushing subnormals) would not reproduce. */
static inline void fill_wild(pyr_field_t *f, uint64_t seed)
{
    rng_t r = {seed};
    const int64_t n = pyr_field_count(f);
    for (int64_t i = 0; i < n; i++) {
        uint64_t b = rng_next(&r);
        double v;
        switch (b % 8) {
        case 0: v = 0.0; break;
        case 1: v = -0.0; break;
        case 2: v = ldexp((double)(b >> 20 & 0xffff) + 1, f->precision == PYR_FLOAT ? -149 + (int)(b >> 40 & 7) : -1074 + (int)(b >> 40 & 7)); break;
        default: v = ldexp((double)(int64_t)(b >> 11) / 9007199254740992.0 - 0.5, (int)(b >> 3 & 63) - 32); break;
        }
        if (f->precision == PYR_FLOAT) ((float *)f->data)[i] = (float)v;
        else ((double *)f->data)[i] = v;
    }
}

#endif
