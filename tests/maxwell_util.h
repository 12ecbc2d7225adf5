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

/* Run a against run b (`what` names b in messages), bit for bit: every component either holds, and the
 * probe series.  Returns 0 where they agree. */
static inline int mx_compare(const char *label, const char *what, const mx_result_t *a, const mx_result_t *b)
{
    int bad = 0;
    for (int k = 0; k < 6; k++) {
        if (!a->c[k] && !b->c[k]) continue;
        if (!a->c[k] || !b->c[k]) {
            CHECK(0, "%s: component %d present in one run only", label, k);
            return 1;
        }
        int64_t i = first_difference(a->c[k], b->c[k]);
        CHECK(i < 0, "%s: component %d differs from %s at node %lld (%.17g vs %.17g)", label, k, what, (long long)i,
              i >= 0 ? field_get(a->c[k], i) : 0, i >= 0 ? field_get(b->c[k], i) : 0);
        bad |= i >= 0;
    }
    const int64_t np = a->nseries * a->nprobes;
    CHECK(a->nseries == b->nseries && a->nprobes == b->nprobes, "%s: probe series of %lld and %lld steps (%d and %d probes)", label,
          (long long)a->nseries, (long long)b->nseries, a->nprobes, b->nprobes);
    const int same_shape = a->nseries == b->nseries && a->nprobes == b->nprobes;
    if (same_shape && np && memcmp(a->probes, b->probes, (size_t)np * sizeof(double))) {
        CHECK(0, "%s: probe series differ from %s", label, what);
        bad = 1;
    }
    return bad || !same_shape;
}

/* p run with options o (into *a) against the CPU's naive method (into *b), compared as mx_compare does, the
 * probe series also of every step where p has probes.  Returns -1 where a run failed (said), else 0 where
 * they agree; *a and *b keep the runs for the caller's own checks (mx_free both). */
static inline int mx_against_naive(const char *label, const pyr_problem_t *p, const pyr_options_t *o, mx_result_t *a, mx_result_t *b)
{
    const pyr_status_t sa = mx_run(p, o, NULL, a);
    CHECK(sa == PYR_OK, "%s: run failed: %s", label, pyr_last_error());
    const pyr_status_t sb = mx_reference(p, NULL, b);
    CHECK(sb == PYR_OK, "%s: reference failed: %s", label, pyr_last_error());
    if (sa != PYR_OK || sb != PYR_OK) return -1;
    CHECK(a->nseries == (p->maxwell.nprobes ? p->steps : 0), "%s: probe series of %lld steps for a run of %lld", label, (long long)a->nseries,
          (long long)p->steps);
    return mx_compare(label, "the naive method", a, b);
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


static inline double mx_frac(rng_t *r, double lo, double hi) { return lo + (hi - lo) * (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* A node at least `margin` from every face of the used axes. */
static inline void mx_random_node(rng_t *r, const pyr_problem_t *p, int margin, int64_t node[3])
{
    for (int a = 0; a < 3; a++) node[a] = a < p->dims ? rng_range(r, margin, p->n[a] - 1 - margin) : 0;
}

/* A random Maxwell problem on a dims-D grid of n nodes and lengths len:
 * mode, steps, Courant number, initial state, materials (background,
 * shapes), CPML on random faces, point and line sources, probes.  drawn[]:
 * whether it has materials, CPML, sources. */
static inline void mx_random_problem(rng_t *r, int dims, const int64_t n[3], const double len[3], pyr_precision_t prec, pyr_problem_t *p,
                                     int drawn[3])
{
    drawn[0] = drawn[1] = drawn[2] = 0;
    make_maxwell(p, dims, n, len, dims == 2 ? (int)rng_range(r, 0, 1) : 0, prec, rng_range(r, 1, 36), mx_frac(r, 0.3, 0.99));
    pyr_maxwell_params_t *m = &p->maxwell;
    if (rng_range(r, 0, 1)) {
        p->init = PYR_INIT_RANDOM;
        p->seed = rng_next(r);
    }
    /* materials: a background and shapes (eps_r mu_r >= 1 keeps the Courant number stable) */
    if (rng_range(r, 0, 2)) {
        drawn[0] = 1;
        if (rng_range(r, 0, 2) == 0) m->eps_r = mx_frac(r, 1, 4);
        if (rng_range(r, 0, 3) == 0) m->sigma = mx_frac(r, 0, 2);
        if (rng_range(r, 0, 3) == 0) m->mu_r = mx_frac(r, 1, 2);
        m->nshapes = (int)rng_range(r, 0, 3);
        for (int i = 0; i < m->nshapes; i++) {
            pyr_shape_t *s = &m->shapes[i];
            s->kind = (pyr_shape_kind_t)rng_range(r, 0, 2);
            for (int a = 0; a < 3; a++) {
                s->lo[a] = mx_frac(r, -0.2, 0.8) * len[a];
                s->hi[a] = s->lo[a] + mx_frac(r, 0.1, 0.7) * len[a];
            }
            s->r = mx_frac(r, 0.1, 0.5) * len[0];
            s->axis = dims == 3 ? (int)rng_range(r, 0, 2) : 2;
            s->eps_r = mx_frac(r, 1, 9);
            s->sigma = rng_range(r, 0, 1) ? mx_frac(r, 0, 5) : 0;
            s->mu_r = rng_range(r, 0, 2) ? 1 : mx_frac(r, 1, 3);
        }
    }
    /* CPML on random faces, thin enough to leave an interior */
    int64_t nmin = n[0];
    for (int a = 1; a < dims; a++)
        if (n[a] < nmin) nmin = n[a];
    if (rng_range(r, 0, 2) && nmin >= 8) {
        drawn[1] = 1;
        m->cpml_cells = (int)rng_range(r, 1, (nmin - 4) / 2 < 8 ? (nmin - 4) / 2 : 8);
        m->cpml_faces = (unsigned)rng_range(r, 1, (1 << (2 * dims)) - 1);
        if (rng_range(r, 0, 2) == 0) m->cpml_kappa_max = mx_frac(r, 1, 8);
        if (rng_range(r, 0, 2) == 0) m->cpml_order = mx_frac(r, 1, 4);
    }
    const int margin = m->cpml_cells + 1;
    int comps[6], ncomp = 0;
    for (int k = 0; k < 6; k++)
        if (mx_used(p, k)) comps[ncomp++] = k;
    if (rng_range(r, 0, 3)) {
        drawn[2] = 1;
        m->nsources = (int)rng_range(r, 1, 3);
        for (int i = 0; i < m->nsources; i++) {
            pyr_source_t *s = &m->sources[i];
            s->component = (pyr_component_t)comps[rng_range(r, 0, ncomp - 1)];
            mx_random_node(r, p, margin, s->node);
            memcpy(s->node_end, s->node, sizeof s->node);
            if (rng_range(r, 0, 2) == 0) {
                const int a = (int)rng_range(r, 0, dims - 1);
                s->node_end[a] = rng_range(r, s->node[a], p->n[a] - 1 - margin);
            }
            s->waveform = (pyr_waveform_t)rng_range(r, 0, 2);
            s->amplitude = mx_frac(r, -2, 2);
            s->frequency = mx_frac(r, 0.2, 2);
            s->width = mx_frac(r, 0.05, 1);
            s->delay = mx_frac(r, 0, 1);
        }
    }
    m->nprobes = (int)rng_range(r, 0, 4);
    for (int i = 0; i < m->nprobes; i++) {
        m->probes[i].component = (pyr_component_t)comps[rng_range(r, 0, ncomp - 1)];
        mx_random_node(r, p, margin, m->probes[i].node);
    }

}

/* A random Maxwell problem for the tests over parts and ranks, from the
 * grid they drew for every scheme: a 1D draw becomes a thin 2D grid
 * (Maxwell needs two or three axes), and every axis gets at least
 * min_nodes nodes. */
static inline void mx_random_part_case(rng_t *r, pyr_problem_t *p, int dims, const int64_t n[3], pyr_precision_t prec, int64_t min_nodes)
{
    int64_t m[3] = {n[0], n[1], n[2]};
    if (dims == 1) {
        if (m[0] > 48) m[0] = rng_range(r, 12, 48);
        m[1] = rng_range(r, 6, 16);
        dims = 2;
    }
    for (int a = 0; a < dims; a++)
        if (m[a] < min_nodes) m[a] = min_nodes;
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) len[a] = mx_frac(r, 0.5, 3.0);
    int drawn[3];
    mx_random_problem(r, dims, m, len, prec, p, drawn);
}

#endif
