/* Property test of the Maxwell scheme's dispersive materials (issue 46, item
 * 2): random problems as test_maxwell_property draws them (2D TM and TE, 3D;
 * float and double; shapes; CPML on random faces; sources; probes) with
 * Drude, Lorentz and Debye terms on the background or on shapes, under
 * random plans (naive, trivial, pyramid; every decomposition, skewed pieces
 * too (the terms' states in place in its ring); heights;
 * budgets from the smallest that fits to above the grid; 1 to 3 slots; 1 or
 * 2 threads; several parts of the grid: run.devices = 0,0,...) give the CPU
 * naive method's components and probe series bit for bit, and the terms do
 * change the fields (a run without them differs); a plane wave (TF/SF) on
 * dispersive shapes likewise, and a 3D grid with CPML on every face whose
 * terms share the layers' slots.
 *
 *   test_maxwell_dispersive_property [cases] [seed] [backend]   (defaults: 80 1 cpu) */
#include <stdio.h>
#include <string.h>

#include "maxwell_util.h"
#include "schemes/maxwell.h"

static int skewed, pyramids, parts, lorentz, debye, drude, on_shapes, refused_fields, shared_slots;

static void random_poles(rng_t *r, double dt, pyr_pole_t *pl, int *np, int max)
{
    *np = (int)rng_range(r, 1, max);
    for (int q = 0; q < *np; q++) {
        pyr_pole_t *t = &pl[q];
        memset(t, 0, sizeof *t);
        t->kind = (pyr_pole_kind_t)rng_range(r, PYR_POLE_DRUDE, PYR_POLE_DEBYE);
        /* frequencies of 2 to 40 steps per period */
        const double f = mx_frac(r, 0.025, 0.5) / dt;
        if (t->kind == PYR_POLE_DRUDE) {
            t->p[0] = f, t->p[1] = rng_range(r, 0, 2) ? mx_frac(r, 0, 0.3) * f : 0;
            drude++;
        } else if (t->kind == PYR_POLE_LORENTZ) {
            t->p[0] = mx_frac(r, 0.1, 3), t->p[1] = f, t->p[2] = mx_frac(r, 0, 0.5) * f;
            lorentz++;
        } else {
            t->p[0] = mx_frac(r, 0.1, 5), t->p[1] = mx_frac(r, 0.3, 30) * dt;
            debye++;
        }
    }
}

/* Terms on the problem (the background's or its shapes'), stable at its dt:
 * frequencies halved until validate takes them; 0 when the grid has no room
 * for their fields (3D with the CPML on every axis: refused, as it should be). */
static int add_poles(rng_t *r, pyr_problem_t *p)
{
    pyr_maxwell_params_t *m = &p->maxwell;
    double dt = 0;
    if (pyr_maxwell_dt(p, &dt) != PYR_OK) return 0;
    const int max = p->dims == 3 ? 1 : p->maxwell.te ? 2 : 3;
    if (m->nshapes == 0 || rng_range(r, 0, 2) == 0) {
        random_poles(r, dt, m->poles, &m->npoles, max);
    } else {
        on_shapes++;
        for (int i = 0; i < m->nshapes; i++)
            if (rng_range(r, 0, 2)) random_poles(r, dt, m->shapes[i].poles, &m->shapes[i].npoles, max);
        if (!pyr_maxwell_dispersive(p)) random_poles(r, dt, m->shapes[0].poles, &m->shapes[0].npoles, max);
    }
    m->nplanewaves = 0;
    for (int tries = 0; tries < 20; tries++) {
        pyr_status_t st = pyr_maxwell_disp_check(p);
        if (st == PYR_OK) return 1;
        const char *why = pyr_last_error();
        if (st != PYR_ERR_UNSTABLE) {
            CHECK(strstr(why, "auxiliary fields") != NULL, "unexpected refusal: %s", why);
            pyr_clear_error();
            return 0;
        }
        CHECK(strstr(pyr_last_error(), "largest stable dt") != NULL, "an unstable material's message: %s", pyr_last_error());
        pyr_clear_error();
        for (int i = -1; i < m->nshapes; i++) {
            pyr_pole_t *pl = i < 0 ? m->poles : m->shapes[i].poles;
            const int np = i < 0 ? m->npoles : m->shapes[i].npoles;
            for (int q = 0; q < np; q++) {
                if (pl[q].kind == PYR_POLE_DRUDE) pl[q].p[0] *= 0.5;
                else if (pl[q].kind == PYR_POLE_LORENTZ) pl[q].p[1] *= 0.5;
                else pl[q].p[1] *= 2;
            }
        }
    }
    char terms[512] = "";
    for (int i = -1; i < m->nshapes; i++) {
        const pyr_pole_t *pl = i < 0 ? m->poles : m->shapes[i].poles;
        const int np = i < 0 ? m->npoles : m->shapes[i].npoles;
        for (int q = 0; q < np; q++)
            snprintf(terms + strlen(terms), sizeof terms - strlen(terms), " [%d: %d %g %g %g; eps %g sigma %g mu %g]", i, pl[q].kind,
                     pl[q].p[0], pl[q].p[1], pl[q].p[2], i < 0 ? m->eps_r : m->shapes[i].eps_r, i < 0 ? m->sigma : m->shapes[i].sigma,
                     i < 0 ? m->mu_r : m->shapes[i].mu_r);
    }
    CHECK(0, "no stable frequencies found for the terms (dt %g):%s", dt, terms);
    return 0;
}

static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 6007u + (uint64_t)c * 130363u};
    const int dims = rng_range(&r, 0, 3) ? 2 : 3;
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 6, dims == 2 ? 48 : 16);
        len[a] = mx_frac(&r, 0.5, 3.0);
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, dims, n, len, prec, &p, drawn);
    if (dims == 3 && p.maxwell.cpml_cells > 0) {
        /* room for the terms' fields: often the CPML on one axis only; else the terms share the layers'
         * slots where the shapes keep clear of them (or are refused, below) */
        if (rng_range(&r, 0, 2)) p.maxwell.cpml_faces &= 3u << (2 * rng_range(&r, 0, 2));
        if (!p.maxwell.cpml_faces) p.maxwell.cpml_cells = 0;
    }
    if (!add_poles(&r, &p)) {
        refused_fields++;
        return 0;
    }
    shared_slots += (pyr_maxwell_disp_fields(&p) & pyr_maxwell_psi_used(&p)) != 0;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    const int meth = (int)rng_range(&r, 0, 6);
    o.method = meth == 0 ? PYR_METHOD_NAIVE : meth == 1 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    if (dims == 2) o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_STRIPS : PYR_DECOMP_BLOCKS;
    else o.decomposition = rng_range(&r, 0, 1) ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
    if (o.method == PYR_METHOD_PYRAMID) o.height = rng_range(&r, 0, 3) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CUDA) {
        static const char *const v[] = {"", "tile:1,1", "tile:2,3", "tile:8,64", "fused", "fused:2,3"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 5)]);
    }
    /* skewed pieces a quarter of the pyramids (drawn apart, so the other draws stay as they were) */
    rng_t rs = {seed * 2654435761u + (uint64_t)c * 97u + 11u};
    if (o.method == PYR_METHOD_PYRAMID && meth != 6 && rng_range(&rs, 0, 3) == 0) {
        o.decomposition = PYR_DECOMP_SKEWED;
        skewed++;
    }
    int nparts = 1;
    if (meth == 6 && n[dims - 1] >= 8) {
        /* several parts of the grid on one device, cut along the last axis */
        nparts = (int)rng_range(&r, 2, 3);
        snprintf(o.devices, sizeof o.devices, nparts == 2 ? "0,0" : "0,0,0");
        o.method = PYR_METHOD_PYRAMID;
        o.threads = 1;
        parts++;
    } else if (o.method != PYR_METHOD_NAIVE) {
        uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) * 8;
        uint64_t lo = smallest_budget(&p, o, 8 * grid + (1u << 20));
        o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(2 * grid));
    }
    const pyr_maxwell_params_t *m = &p.maxwell;
    int terms = m->npoles;
    for (int i = 0; i < m->nshapes; i++) terms += m->shapes[i].npoles;
    char label[400];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD%s %lldx%lldx%lld %s steps=%lld courant=%g shapes=%d terms=%d (background %d) cpml=%d/%#x sources=%d "
             "| %s %s height=%lld slots=%d memory=%llu devices=%s kernel=%s",
             c, (unsigned long long)seed, dims, dims == 2 ? (m->te ? " TE" : " TM") : "", (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)p.steps, m->courant, m->nshapes, terms, m->npoles, m->cpml_cells, m->cpml_faces,
             m->nsources, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)o.height, o.slots,
             (unsigned long long)o.memory, o.devices, o.kernel);

    mx_result_t a = {0}, b = {0};
    const int differ = mx_against_naive(label, &p, &o, &a, &b);
    int bad = differ != 0;
    if (differ >= 0) {
        pyramids += o.method == PYR_METHOD_PYRAMID && a.info.height > 1;
    }
    mx_free(&a);
    mx_free(&b);
    return bad;
}

/* The terms act: a problem with a Drude background and a source differs from the plain one. */
static void terms_act(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {40, 30, 1};
    make_maxwell(&p, 2, n, NULL, 0, PYR_DOUBLE, 60, 0.7);
    p.maxwell.nsources = 1;
    pyr_source_t *s = &p.maxwell.sources[0];
    s->component = PYR_EZ;
    s->node[0] = s->node_end[0] = 20, s->node[1] = s->node_end[1] = 15;
    s->waveform = PYR_WAVE_GAUSSIAN, s->amplitude = 1, s->width = 0.05, s->delay = 0.1;
    mx_result_t a = {0}, b = {0};
    CHECK(mx_reference(&p, NULL, &a) == PYR_OK, "plain run: %s", pyr_last_error());
    p.maxwell.npoles = 1;
    p.maxwell.poles[0] = (pyr_pole_t){.kind = PYR_POLE_DRUDE, .p = {2, 0.1}};
    CHECK(mx_reference(&p, NULL, &b) == PYR_OK, "Drude run: %s", pyr_last_error());
    if (a.c[PYR_EZ] && b.c[PYR_EZ]) CHECK(first_difference(a.c[PYR_EZ], b.c[PYR_EZ]) >= 0, "the Drude background changed nothing");
    mx_free(&a);
    mx_free(&b);
}

/* A plane wave (TF/SF) on a Drude disk with a Lorentz shell inside CPML, and probes: every
 * decomposition, several heights and budgets, and two parts, equal the naive method. */
static void tfsf_case(pyr_backend_kind_t backend)
{
    pyr_problem_t p;
    const int64_t n[3] = {64, 56, 1};
    const double len[3] = {0.63, 0.55, 1};
    make_maxwell(&p, 2, n, len, 0, PYR_FLOAT, 60, 0.7);
    CHECK_OK(pyr_problem_set(&p, "boundary.kind", "cpml"));
    CHECK_OK(pyr_problem_set(&p, "boundary.cpml_cells", "8"));
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "sphere 0.31 0.27 0.1 eps_r=2 lorentz=1.5 3 0.5 debye=1 0.02"));
    CHECK_OK(pyr_problem_set(&p, "material.shape2", "sphere 0.31 0.27 0.06 eps_r=1 drude=4 0.3"));
    CHECK_OK(pyr_problem_set(&p, "source.planewave1", "Ez along +x box 14 12 50 44 gaussian width=0.05 delay=0.15"));
    CHECK_OK(pyr_problem_set(&p, "probe.probe1", "Ez 31 27"));
    CHECK_OK(pyr_problem_set(&p, "probe.probe2", "Ez 10 10"));
    mx_result_t ref = {0};
    CHECK_OK(mx_reference(&p, NULL, &ref));
    for (int k = 0; k < 6; k++) {
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = k == 0 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
        o.decomposition = k % 2 ? PYR_DECOMP_STRIPS : PYR_DECOMP_BLOCKS;
        o.height = k > 0 && k < 3 ? 7 : 0;
        o.memory = k == 4 ? 200000 : 0;
        if (k == 5) snprintf(o.devices, sizeof o.devices, "0,0");
        mx_result_t a = {0};
        const pyr_status_t st = mx_run(&p, &o, NULL, &a);
        CHECK(st == PYR_OK, "TF/SF case %d: %s", k, pyr_last_error());
        if (st == PYR_OK && ref.c[PYR_EZ]) {
            for (int c = 0; c < 6; c++)
                if (a.c[c]) CHECK(first_difference(a.c[c], ref.c[c]) < 0, "TF/SF case %d: component %d differs from the naive method", k, c);
            CHECK(a.nseries == ref.nseries && !memcmp(a.probes, ref.probes, (size_t)(a.nseries * 2) * sizeof(double)),
                  "TF/SF case %d: probe series differ", k);
        }
        mx_free(&a);
    }
    /* the scattered field reaches the probe outside the box */
    double peak = 0;
    for (int64_t s = 0; s < ref.nseries; s++) peak = fmax(peak, fabs(ref.probes[s * 2 + 1]));
    CHECK(peak > 1e-4, "no scattered field outside the TF/SF box: %g", peak);
    mx_free(&ref);
}

/* 3D with CPML on every face: the terms' states share the layers' psi slots (the sphere keeps
 * clear of the layers); every decomposition, heights, budgets and two parts equal the naive
 * method. */
static void shared_case(pyr_backend_kind_t backend)
{
    pyr_problem_t p;
    const int64_t n[3] = {22, 20, 20};
    const double len[3] = {0.21, 0.19, 0.19};
    make_maxwell(&p, 3, n, len, 0, PYR_DOUBLE, 24, 0.6);
    CHECK_OK(pyr_problem_set(&p, "boundary.kind", "cpml"));
    CHECK_OK(pyr_problem_set(&p, "boundary.cpml_cells", "4"));
    CHECK_OK(pyr_problem_set(&p, "material.shape1", "sphere 0.1 0.09 0.09 0.025 eps_r=2 lorentz=1.5 4 0.5 drude=3 0.2"));
    CHECK_OK(pyr_problem_set(&p, "source.source1", "Ez point 10 9 9 gaussian width=0.02 delay=0.06"));
    CHECK_OK(pyr_problem_set(&p, "source.source2", "Ex point 8 9 10 ricker frequency=5 delay=0.05"));
    CHECK_OK(pyr_problem_set(&p, "probe.probe1", "Ez 11 9 9"));
    CHECK_OK(pyr_problem_set(&p, "probe.probe2", "Ey 5 9 9"));
    CHECK_OK(pyr_problem_validate(&p));
    const unsigned shared = pyr_maxwell_disp_fields(&p) & pyr_maxwell_psi_used(&p);
    CHECK(shared != 0, "the terms take no layer's slot");
    mx_result_t ref = {0};
    CHECK_OK(mx_reference(&p, NULL, &ref));
    for (int k = 0; k < 5; k++) {
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = k == 0 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
        o.decomposition = k % 2 ? PYR_DECOMP_SLABS : PYR_DECOMP_BLOCKS;
        o.height = k == 1 || k == 2 ? 5 : 0;
        o.memory = k == 3 ? 300000 : 0;
        if (k == 4) snprintf(o.devices, sizeof o.devices, "0,0");
        mx_result_t a = {0};
        pyr_status_t st = mx_run(&p, &o, NULL, &a);
        /* the CUDA layout's pieces hold more buffers (three pieces in flight): raise the budget until its pieces fit */
        for (int tries = 0; st == PYR_ERR_BUDGET && o.memory && tries < 10; tries++) {
            o.memory *= 2;
            mx_free(&a);
            st = mx_run(&p, &o, NULL, &a);
        }
        CHECK(st == PYR_OK, "shared slots, case %d: %s", k, pyr_last_error());
        if (st == PYR_OK && o.memory)
            CHECK(a.info.tasks_per_pass > 1 && a.info.passes > 1, "shared slots, case %d: memory %llu: %lld pieces a pass, %lld passes; expected several of each",
                  k, (unsigned long long)o.memory, (long long)a.info.tasks_per_pass, (long long)a.info.passes);
        if (st == PYR_OK)
            for (int c = 0; c < 6; c++)
                if (a.c[c]) CHECK(first_difference(a.c[c], ref.c[c]) < 0, "shared slots, case %d: component %d differs from the naive method", k, c);
        if (st == PYR_OK) CHECK(a.nseries == ref.nseries && !memcmp(a.probes, ref.probes, (size_t)(a.nseries * 2) * sizeof(double)),
                                "shared slots, case %d: probe series differ", k);
        mx_free(&a);
    }
    /* the terms act (the sphere's probe differs from a run without them), and the field by the layer stays bounded */
    pyr_problem_t q = p;
    q.maxwell.shapes[0].npoles = 0;
    mx_result_t b = {0};
    CHECK_OK(mx_reference(&q, NULL, &b));
    int differs = 0;
    for (int64_t s = 0; s < ref.nseries && s < b.nseries; s++) differs |= ref.probes[2 * s] != b.probes[2 * s];
    CHECK(differs, "the sphere's terms changed nothing at its probe");
    double e = 0;
    for (int64_t s = 0; s < ref.nseries; s++) e = fmax(e, fabs(ref.probes[2 * s + 1]));
    CHECK(isfinite(e) && e < 1e3, "the field by the layer: %g", e);
    mx_free(&b);
    mx_free(&ref);
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 80;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    terms_act();
    tfsf_case(backend);
    shared_case(backend);
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random dispersive Maxwell plans on the %s backend bit-identical to the naive method (seed %llu): %d pyramids of "
           "height > 1, %d skewed, %d over parts, terms: %d drude, %d lorentz, %d debye, %d cases with them on shapes, %d sharing the layers' "
           "slots; %d refused for want of fields\n",
           cases - failed, cases, backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed, pyramids, skewed, parts, drude, lorentz,
           debye, on_shapes, shared_slots, refused_fields);
    CHECK(failed > 0 || cases < 20 || (pyramids >= cases / 5 && parts >= cases / 20 && skewed >= cases / 20 && lorentz > 0 && debye > 0 && drude > 0 &&
                                       refused_fields <= cases / 5),
          "too few cases exercised pyramids (%d), skewed pieces (%d), parts (%d) or each kind of term to mean much", pyramids,
          skewed, parts);
    return check_report();
}
