/* Property test of the Maxwell scheme's periodic axes (boundary.periodic,
 * issue 46 item 5): random problems (2D TM and TE, 3D; float and double;
 * random or zero initial fields; material shapes; CPML on random faces of the
 * other axes; point and line sources; probes; sometimes a TF/SF plane wave
 * whose box spans the periodic axes whole) with one or more periodic axes,
 * under random plans (naive, trivial, pyramid; every decomposition, skewed
 * pieces too, refused along a periodic last axis; heights;
 * budgets from the smallest that fits; 1 to 3 slots), give the CPU naive
 * method's six components and probe series bit for bit.  A decomposition
 * that would cut only periodic axes is refused, saying which works.
 *
 *   test_maxwell_periodic_property [cases] [seed] [backend]     (defaults: 100 1 cpu) */
#include <stdio.h>
#include <string.h>

#include "maxwell_util.h"

static int pyramids, refused, with_planewave, accepted, skewed;

static unsigned faces_of(unsigned axes)
{
    unsigned f = 0;
    for (int a = 0; a < 3; a++)
        if ((axes >> a) & 1) f |= 3u << (2 * a);
    return f;
}

/* A plane wave along a non-periodic axis whose box spans the periodic axes
 * whole and keeps a node off the CPML on the others; dropped if the problem
 * refuses it (a shape on its faces, a box too small for the grid). */
static void add_planewave(rng_t *r, pyr_problem_t *p)
{
    pyr_maxwell_params_t *m = &p->maxwell;
    int open[3], nopen = 0;
    for (int a = 0; a < p->dims; a++)
        if (!((m->periodic >> a) & 1)) open[nopen++] = a;
    if (!nopen) return;
    pyr_planewave_t *w = &m->planewaves[0];
    memset(w, 0, sizeof *w);
    w->axis = open[rng_range(r, 0, nopen - 1)];
    w->dir = rng_range(r, 0, 1) ? 1 : -1;
    int comps[3], nc = 0;
    for (int c = 0; c < 3; c++)
        if (c != w->axis && mx_used(p, c)) comps[nc++] = c;
    if (!nc) return;
    w->component = (pyr_component_t)comps[rng_range(r, 0, nc - 1)];
    for (int a = 0; a < p->dims; a++) {
        if ((m->periodic >> a) & 1) {
            w->lo[a] = 0;
            w->hi[a] = p->n[a] - 1;
            continue;
        }
        const int64_t L = m->cpml_cells > 0 ? m->cpml_cells : 0, lo = L + 2, hi = p->n[a] - 3 - L;
        if (hi - lo < 2) return;
        w->lo[a] = rng_range(r, lo, hi - 2);
        w->hi[a] = rng_range(r, w->lo[a] + 1, hi);
    }
    w->waveform = (pyr_waveform_t)rng_range(r, 0, 2);
    w->amplitude = mx_frac(r, 0.5, 2);
    w->frequency = mx_frac(r, 0.3, 1.5);
    w->width = mx_frac(r, 0.1, 0.6);
    w->delay = mx_frac(r, 0, 1);
    m->nplanewaves = 1;
    if (pyr_problem_validate(p) != PYR_OK) m->nplanewaves = 0;
    else with_planewave++;
}

static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 6007u + (uint64_t)c * 92821u};
    const int dims = (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 6, dims == 2 ? 50 : 16);
        len[a] = mx_frac(&r, 0.5, 3.0);
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, dims, n, len, prec, &p, drawn);
    pyr_maxwell_params_t *m = &p.maxwell;
    /* mostly one periodic axis (a grating's), else any non-empty set */
    m->periodic = rng_range(&r, 0, 3) ? 1u << rng_range(&r, 0, dims - 1) : (unsigned)rng_range(&r, 1, (1 << dims) - 1);
    m->cpml_faces &= ~faces_of(m->periodic);
    if (rng_range(&r, 0, 2) == 0) add_planewave(&r, &p);
    pyr_status_t sv = pyr_problem_validate(&p);
    CHECK(sv == PYR_OK, "case %d: the drawn problem is refused: %s", c, pyr_last_error());
    if (sv != PYR_OK) return 1;

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    const int meth = (int)rng_range(&r, 0, 5);
    o.method = meth == 0 ? PYR_METHOD_NAIVE : meth == 1 ? PYR_METHOD_TRIVIAL : PYR_METHOD_PYRAMID;
    /* mostly a decomposition that cuts some axis that is not periodic (blocks then cuts only those) */
    const unsigned one = dims == 2 ? 2u : 4u;
    int pick = (int)rng_range(&r, 0, 2);
    if (rng_range(&r, 0, 4) && ((pick == 0 && (m->periodic & one)) || (pick == 1 && m->periodic == (1u << dims) - 1))) pick = 2;
    if (dims == 2) o.decomposition = pick == 0 ? PYR_DECOMP_STRIPS : pick == 1 ? PYR_DECOMP_BLOCKS : PYR_DECOMP_AUTO;
    else o.decomposition = pick == 0 ? PYR_DECOMP_SLABS : pick == 1 ? PYR_DECOMP_BLOCKS : PYR_DECOMP_AUTO;
    /* skewed pieces a quarter of the pyramids (drawn apart, so the other draws stay as they were): refused where
     * the last axis, the one they follow, is periodic */
    rng_t rs = {seed * 2654435761u + (uint64_t)c * 89u + 5u};
    const int skew = o.method == PYR_METHOD_PYRAMID && rng_range(&rs, 0, 3) == 0;
    if (skew) o.decomposition = PYR_DECOMP_SKEWED;
    if (o.method == PYR_METHOD_PYRAMID) o.height = rng_range(&r, 0, 3) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CUDA) {
        static const char *const v[] = {"", "tile:1,1", "tile:2,3", "tile:8,64", "fused"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 4)]);
    }
    /* a decomposition that cuts only periodic axes (strips: y; slabs: z; blocks: every axis periodic) */
    const unsigned cuts = o.decomposition == PYR_DECOMP_STRIPS ? 2u : o.decomposition == PYR_DECOMP_SLABS ? 4u : (1u << dims) - 1;
    const int only_periodic = o.method != PYR_METHOD_NAIVE && o.decomposition != PYR_DECOMP_AUTO && !(cuts & ~m->periodic);
    const int all_periodic = m->periodic == (1u << dims) - 1;
    if (skew && ((m->periodic >> (dims - 1)) & 1)) {
        pyr_plan_t *pl = NULL;
        const pyr_status_t st = pyr_plan_create(&p, &o, &pl);
        pyr_plan_destroy(&pl);
        CHECK(st == PYR_ERR_CONFIG && strstr(pyr_last_error(), "periodic") &&
                  strstr(pyr_last_error(), all_periodic ? "method = naive" : "decomposition = blocks"),
              "case %d seed %llu: skewed pieces along a periodic last axis (periodic=%#x): %s", c, (unsigned long long)seed, m->periodic,
              st == PYR_OK ? "accepted" : pyr_last_error());
        refused++;
        return st == PYR_OK;
    }
    char label[400];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD%s %lldx%lldx%lld %s steps=%lld periodic=%#x shapes=%d cpml=%d/%#x sources=%d probes=%d planewave=%d | %s "
             "%s height=%lld slots=%d kernel=%s",
             c, (unsigned long long)seed, dims, dims == 2 ? (m->te ? " TE" : " TM") : "", (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)p.steps, m->periodic, m->nshapes, m->cpml_cells, m->cpml_faces, m->nsources, m->nprobes,
             m->nplanewaves, pyr_method_name(o.method), pyr_decomp_name(o.decomposition), (long long)o.height, o.slots, o.kernel);
    if (only_periodic || (all_periodic && o.method != PYR_METHOD_NAIVE)) {
        /* refused whatever the budget, naming what works */
        pyr_plan_t *pl = NULL;
        const pyr_status_t st = pyr_plan_create(&p, &o, &pl);
        pyr_plan_destroy(&pl);
        CHECK(st != PYR_OK && strstr(pyr_last_error(), "periodic") &&
                  strstr(pyr_last_error(), all_periodic ? "method = naive" : "decomposition = blocks"),
              "%s: a plan that cuts only periodic axes: %s", label, st == PYR_OK ? "accepted" : pyr_last_error());
        refused++;
        return !(st != PYR_OK);
    }
    if (o.method != PYR_METHOD_NAIVE) {
        uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec) * 6;
        /* from the least budget that plans on the backend in use (the CUDA layout's is larger: three pieces
         * in flight, rows padded) up to twice the grid's fields above it, so that pieces happen on either */
        uint64_t lo = smallest_budget(&p, o, 8 * grid + (1u << 20));
        o.memory = lo + (uint64_t)rng_range(&r, 0, (int64_t)(2 * grid));
    }
    mx_result_t a = {0}, b = {0};
    const int differ = mx_against_naive(label, &p, &o, &a, &b);
    int bad = differ != 0;
    if (differ >= 0) {
        accepted++;
        pyramids += o.method == PYR_METHOD_PYRAMID && a.info.height > 1 && a.info.tasks_per_pass > 1;
        skewed += skew && a.info.tasks_per_pass > 1;
    }
    mx_free(&a);
    mx_free(&b);
    return bad;
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 100;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random periodic Maxwell cases on the %s backend right (seed %llu): %d plans bit-identical to naive (%d pyramids of height > 1 "
           "in several pieces, %d of them skewed, %d with a plane wave), %d refused as cutting only periodic axes or skewed along one\n",
           cases - failed, cases, backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed, accepted, pyramids, skewed,
           with_planewave, refused);
    CHECK(failed > 0 || cases < 20 || (pyramids >= cases / 12 && refused >= 1 && with_planewave >= 1 && skewed >= 1),
          "too few cases exercised pyramids in pieces (%d), skewed pieces (%d), refusals (%d) or plane waves (%d) to mean much", pyramids,
          skewed, refused, with_planewave);
    return check_report();
}
