/* Conformance (ggml's test-backend-ops is the model): every kernel of every
 * scheme registered for a backend that can run here, with each of its
 * variants, in the naive method and in pyramid plans of a small budget, on
 * 1D, 2D and 3D grids in float and double, gives the CPU naive method's
 * result with the CPU kernel's default variant bit for bit.  A new scheme or
 * backend is tested by registering its kernel (backend/kernels.h). */
#include <stdio.h>
#include <string.h>

#include "backend/kernels.h"
#include "maxwell_util.h"
#include "poisson_util.h"

static void make_case(pyr_equation_t eq, int dims, pyr_precision_t prec, uint64_t seed, pyr_problem_t *p)
{
    rng_t r = {seed};
    int64_t n[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) n[a] = rng_range(&r, dims == 1 ? 50 : dims == 2 ? 20 : 9, dims == 1 ? 300 : dims == 2 ? 64 : 20);
    if (eq == PYR_EQ_HEAT) {
        make_problem(p, dims, n, prec, rng_range(&r, 5, 24), PYR_INIT_RANDOM, seed);
    } else if (eq == PYR_EQ_POISSON) {
        make_poisson(p, dims, n, NULL, prec, rng_range(&r, 5, 24), 0, rng_range(&r, 2, 9), PYR_RHS_SINE, PYR_INIT_RANDOM, seed);
        if (rng_range(&r, 0, 1)) p->poisson.omega = 0.8;
    } else {
        /* random fields, a lossy dielectric sphere, CPML on two faces, a source and a probe */
        make_maxwell(p, dims, n, NULL, (int)(seed & 1), prec, rng_range(&r, 5, 24), 0.9);
        p->init = PYR_INIT_RANDOM;
        p->seed = seed;
        pyr_maxwell_params_t *m = &p->maxwell;
        m->nshapes = 1;
        m->shapes[0].kind = PYR_SHAPE_SPHERE;
        for (int a = 0; a < 3; a++) m->shapes[0].lo[a] = 0.5;
        m->shapes[0].r = 0.3;
        m->shapes[0].eps_r = 3;
        m->shapes[0].sigma = 0.5;
        m->shapes[0].mu_r = 1.5;
        m->cpml_cells = 2;
        m->cpml_faces = 0x1 | (dims == 3 ? 0x20 : 0x8);
        const int comp = dims == 3 ? PYR_EY : m->te ? PYR_HZ : PYR_EZ;
        m->nsources = m->nprobes = 1;
        m->sources[0].component = (pyr_component_t)comp;
        m->probes[0].component = dims == 3 ? PYR_HX : m->te ? PYR_EX : PYR_HY;
        for (int a = 0; a < dims; a++) {
            m->sources[0].node[a] = m->sources[0].node_end[a] = n[a] / 2;
            m->probes[0].node[a] = n[a] / 2 - 1;
        }
        m->sources[0].waveform = PYR_WAVE_RICKER;
        m->sources[0].amplitude = 1;
        m->sources[0].frequency = 1;
    }
}

/* The state fields of a run (one, or Maxwell's components) and its probes. */
typedef struct {
    pyr_field_t *f[6];
    int n;
    double *probes;
    int64_t nprobes;
    pyr_run_info_t ri;
} state_t;

static void state_free(state_t *s)
{
    for (int i = 0; i < 6; i++) pyr_field_destroy(&s->f[i]);
    free(s->probes);
    memset(s, 0, sizeof *s);
}

/* Runs p under o; returns 0 on success. */
static int run(const pyr_problem_t *p, const pyr_options_t *o, state_t *s)
{
    memset(s, 0, sizeof *s);
    if (p->equation == PYR_EQ_MAXWELL) {
        mx_result_t r = {0};
        pyr_status_t st = mx_run(p, o, NULL, &r);
        for (int c = 0; c < 6; c++) s->f[c] = r.c[c];
        s->n = 6;
        s->probes = r.probes;
        s->nprobes = r.nseries * r.nprobes;
        s->ri = r.run;
        if (st != PYR_OK) state_free(s);
        return st != PYR_OK;
    }
    pyr_plan_t *plan = NULL;
    pyr_field_t *u = NULL;
    pyr_status_t st = pyr_plan_create(p, o, &plan);
    if (st == PYR_OK) st = pyr_field_create(p, &u);
    if (st == PYR_OK) st = pyr_field_init(u, p);
    pyr_field_t *fields[8] = {u};
    if (st == PYR_OK) st = pyr_execute_fields(plan, fields, pyr_scheme_field_count(p->equation), NULL, &s->ri);
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) pyr_field_destroy(&u);
    s->f[0] = u;
    s->n = 1;
    return st != PYR_OK;
}

/* The first differing node of any state field (-1: none), or a probe's difference (-2). */
static int64_t state_difference(const state_t *a, const state_t *b)
{
    for (int i = 0; i < a->n; i++) {
        if (!a->f[i] && !b->f[i]) continue;
        if (!a->f[i] || !b->f[i]) return 0;
        int64_t d = first_difference(a->f[i], b->f[i]);
        if (d >= 0) return d;
    }
    if (a->nprobes != b->nprobes || (a->nprobes && memcmp(a->probes, b->probes, (size_t)a->nprobes * sizeof(double)))) return -2;
    return -1;
}

/* test_conformance [cpu|cuda]: the kernels of that backend only (CTest runs
 * the CPU's without the gpu label and the GPU's with it); none: every backend
 * usable here.  The GPU's half exits 77 (skipped) where no GPU is usable. */
int main(int argc, char **argv)
{
    pyr_backend_kind_t only = PYR_BACKEND_AUTO;
    if (argc > 1) {
        if (!strcmp(argv[1], "cpu")) only = PYR_BACKEND_CPU;
        else if (!strcmp(argv[1], "cuda")) only = PYR_BACKEND_CUDA;
        else {
            fprintf(stderr, "usage: %s [cpu|cuda] (unknown backend '%s')\n", argv[0], argv[1]);
            return 2;
        }
        if (!pyr_backend_available(only)) {
            printf("backend %s not usable here: skipped\n", pyr_backend_name(only));
            return 77;
        }
    }
    const pyr_kernel_t *const *all = NULL;
    const int nk = pyr_kernel_all(&all);
    int ran = 0, kernels_run = 0;
    for (int k = 0; k < nk; k++) {
        const pyr_kernel_t *K = all[k];
        if (only != PYR_BACKEND_AUTO && K->backend != only) continue;
        if (!pyr_backend_available(K->backend)) {
            printf("%s kernel on %s: skipped (backend not usable here)\n", pyr_equation_name(K->equation), pyr_backend_name(K->backend));
            continue;
        }
        kernels_run++;
        int cases = 0, same = 0;
        for (int dims = K->equation == PYR_EQ_MAXWELL ? 2 : 1; dims <= 3; dims++)
            for (int pi = 0; pi < 2; pi++) {
                const pyr_precision_t prec = pi ? PYR_DOUBLE : PYR_FLOAT;
                pyr_problem_t p;
                make_case(K->equation, dims, prec, (uint64_t)(k * 97 + dims * 13 + pi + 1), &p);
                pyr_options_t ro;
                pyr_options_default(&ro);
                ro.backend = PYR_BACKEND_CPU;
                ro.method = PYR_METHOD_NAIVE;
                state_t ref;
                const int refbad = run(&p, &ro, &ref);
                CHECK(!refbad, "reference %s %dD %s: %s", pyr_equation_name(K->equation), dims, pyr_precision_name(prec), pyr_last_error());
                if (refbad) continue;
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
                            if (o.height > p.steps) o.height = p.steps;
                            o.memory = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) * (uint64_t)ref.n / 2 + (64u << 10);
                            /* at least the smallest budget this height plans in (a backend's alignment can raise it) */
                            const uint64_t least = smallest_budget(&p, o, 64 * o.memory);
                            if (o.memory < least) o.memory = least;
                        }
                        state_t u;
                        const int bad = run(&p, &o, &u);
                        char label[200];
                        snprintf(label, sizeof label, "%s kernel on %s, variant '%s', %dD %s, %s", pyr_equation_name(K->equation),
                                 pyr_backend_name(K->backend), o.kernel[0] ? o.kernel : "(default)", dims, pyr_precision_name(prec),
                                 pyr_method_name(o.method));
                        CHECK(!bad, "%s: %s", label, pyr_last_error());
                        cases++;
                        if (!bad) {
                            int64_t d = state_difference(&u, &ref);
                            CHECK(d == -1 && u.ri.steps == ref.ri.steps && u.ri.change == ref.ri.change,
                                  "%s: differs from the CPU naive method at node %lld (-2: the probes)", label, (long long)d);
                            same += d == -1;
                        }
                        state_free(&u);
                    }
                state_free(&ref);
            }
        printf("%s kernel on %s: %d of %d runs (every variant, naive and pyramid, 1D-3D, float and double) bit-identical\n",
               pyr_equation_name(K->equation), pyr_backend_name(K->backend), same, cases);
        CHECK(cases > 0 && same == cases, "%s kernel on %s: %d of %d", pyr_equation_name(K->equation), pyr_backend_name(K->backend), same, cases);
        ran += cases;
    }
    CHECK(kernels_run >= 2 && ran > 0, "no kernel could run (%d kernels, %d runs)", kernels_run, ran);
    return check_report();
}
