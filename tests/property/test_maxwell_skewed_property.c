/* Property test of skewed pieces for the Maxwell (Yee) scheme: its state (E, H, the CPML auxiliaries and
 * dispersive terms' states) updated in place in one ring of planes on the device that the slots share,
 * every piece sweeping its planes of each step, H then E.  Random problems (2D TM and TE, 3D; float and
 * double; awkward sizes; random or zero initial fields; materials per node; CPML on random faces, those of
 * the last axis included; point and line sources; probes) under decomposition = skewed at random heights,
 * budgets from the smallest that plans (pieces of a plane or two, the ring wrapping) to a few grids, 1 to 3
 * slots and 1 or 2 threads give the CPU naive method's components and probe series bit for bit; each pass
 * moves every plane of every field once up and the state's once down (the run's counts are the plan's,
 * and those are the fields' grids times the passes); enough cases ran in several pieces and several
 * passes.  Also: a periodic last axis is refused with the reason and what would work, and the model
 * prices every field's planes as they move (a coefficient field per node goes up beside the six
 * components; the CPML auxiliaries up and down over their layers), so decomposition = auto weighs them.
 *
 *   test_maxwell_skewed_property [cases] [seed] [backend]     (defaults: 120 1 cpu) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "maxwell_util.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/skewed.h"

static int several_pieces, several_passes, both, with_cpml, with_sources, with_probes, with_materials;

static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend)
{
    rng_t r = {seed * 48611u + (uint64_t)c * 1299709u};
    const int dims = (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 6, dims == 2 ? 53 : 17);
        len[a] = mx_frac(&r, 0.5, 3.0);
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    pyr_problem_t p;
    int drawn[3];
    mx_random_problem(&r, dims, n, len, prec, &p, drawn);
    with_materials += drawn[0];
    with_cpml += drawn[1];
    with_sources += drawn[2];
    with_probes += p.maxwell.nprobes > 0;
    const pyr_maxwell_params_t *m = &p.maxwell;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.height = rng_range(&r, 0, 4) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CUDA) {
        static const char *const v[] = {"", "tile:1,1", "tile:2,3", "tile:8,64", "tile:4,16", "fused"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 5)]);
    }
    const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec);
    const uint64_t lo = smallest_budget(&p, o, 32 * grid + (4u << 20));
    /* mostly small budgets: a plane or a few per piece */
    o.memory = lo + (rng_range(&r, 0, 2) ? (uint64_t)rng_range(&r, 0, (int64_t)(grid * 2)) : (uint64_t)rng_range(&r, 0, (int64_t)(20 * grid)));
    char label[400];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD%s %lldx%lldx%lld %s steps=%lld courant=%g init=%s shapes=%d cpml=%d/%#x sources=%d probes=%d | skewed "
             "height=%lld slots=%d threads=%d memory=%llu kernel=%s",
             c, (unsigned long long)seed, dims, dims == 2 ? (m->te ? " TE" : " TM") : "", (long long)n[0], (long long)n[1], (long long)n[2],
             pyr_precision_name(prec), (long long)p.steps, m->courant, p.init == PYR_INIT_RANDOM ? "random" : "zero", m->nshapes,
             m->cpml_cells, m->cpml_faces, m->nsources, m->nprobes, (long long)o.height, o.slots, o.threads, (unsigned long long)o.memory,
             o.kernel);

    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    CHECK(st == PYR_OK, "%s: no plan: %s", label, pyr_last_error());
    if (st != PYR_OK) return 1;
    CHECK(plan->decomp == PYR_DECOMP_SKEWED && !plan->resident && pyr_skew_inplace(plan), "%s: not an in-place skewed plan", label);
    const int64_t pieces = pyr_skew_pieces(plan, plan->height), height = plan->height;
    /* every field's planes up once a pass (over its support), the state's down once */
    const pyr_box_t whole = pyr_plan_grid(plan);
    uint64_t up_pass = 0, down_pass = 0;
    for (int f = 0; f < plan->scheme->nfields; f++) {
        if (!pyr_skew_in_ring(plan, f)) continue;
        up_pass += pyr_plan_field_volume(plan, f, &whole);
        if (plan->scheme->field[f].role != PYR_FIELD_INPUT) down_pass += pyr_plan_field_volume(plan, f, &whole);
    }
    pyr_plan_destroy(&plan);
    const int64_t passes = (p.steps + height - 1) / height;

    mx_result_t a = {0}, b = {0};
    const int differ = mx_against_naive(label, &p, &o, &a, &b);
    int bad = differ != 0;
    if (differ >= 0) {
        const pyr_counters_t *rc = &a.run.counts, *pc = &a.info.counts;
        CHECK(rc->uploaded == pc->uploaded && rc->downloaded == pc->downloaded && rc->computed == pc->computed,
              "%s: moved %llu up, %llu down and computed %llu, the plan said %llu, %llu and %llu", label, (unsigned long long)rc->uploaded,
              (unsigned long long)rc->downloaded, (unsigned long long)rc->computed, (unsigned long long)pc->uploaded,
              (unsigned long long)pc->downloaded, (unsigned long long)pc->computed);
        CHECK(rc->uploaded == (uint64_t)passes * up_pass && rc->downloaded == (uint64_t)passes * down_pass,
              "%s: moved %llu up and %llu down over %lld passes, not each plane of each field once a pass (%llu and %llu)", label,
              (unsigned long long)rc->uploaded, (unsigned long long)rc->downloaded, (long long)passes, (unsigned long long)(passes * up_pass),
              (unsigned long long)(passes * down_pass));
        CHECK(rc->redundant == 0, "%s: %llu nodes computed twice", label, (unsigned long long)rc->redundant);
        bad |= rc->uploaded != pc->uploaded || rc->downloaded != pc->downloaded || rc->uploaded != (uint64_t)passes * up_pass;
        several_pieces += pieces > 2;
        several_passes += passes > 1;
        both += pieces > 2 && passes > 1;
    }
    mx_free(&a);
    mx_free(&b);
    return bad;
}

/* A periodic last axis wraps a plane onto the first: refused with the reason and what would work. */
static void refusals(pyr_backend_kind_t backend)
{
    const int64_t n[3] = {12, 10, 14};
    pyr_problem_t p;
    make_maxwell(&p, 3, n, NULL, 0, PYR_FLOAT, 10, 0.5);
    p.maxwell.periodic = 1u << 2;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.memory = 64u << 10;
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    pyr_plan_destroy(&plan);
    CHECK(st == PYR_ERR_CONFIG && strstr(pyr_last_error(), "periodic") && strstr(pyr_last_error(), "blocks"),
          "a periodic last axis: status %d, '%s'", (int)st, pyr_last_error());
    /* the periodic axis another: accepted */
    p.maxwell.periodic = 1u << 0;
    st = pyr_plan_create(&p, &o, &plan);
    CHECK(st == PYR_OK && plan->decomp == PYR_DECOMP_SKEWED, "a periodic first axis: %s", st == PYR_OK ? "not skewed" : pyr_last_error());
    pyr_plan_destroy(&plan);
}

/* The model's pass of a skewed Maxwell plan: its upload in proportion to the fields in the ring (six
 * components, with a dielectric shape a coefficient field more), its download to the state's only; with
 * CPML along the last axis the auxiliaries move too, up and down. */
static void model_prices_fields(void)
{
    const int64_t n[3] = {20, 16, 48};
    pyr_options_t o;
    pyr_options_default(&o);
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.memory = 64u << 20;
    o.piece = 6;
    o.height = 8;
    o.slots = 2;
    const pyr_model_constants_t k = pyr_model_default(PYR_BACKEND_CUDA, 3, PYR_FLOAT);
    pyr_model_prediction_t pr[3] = {{0}};
    int nring[3] = {0}, nstate[3] = {0};
    for (int v = 0; v < 3; v++) {
        pyr_problem_t p;
        make_maxwell(&p, 3, n, NULL, 0, PYR_FLOAT, 16, 0.5);
        if (v >= 1) { /* a dielectric box: eps_r per node */
            p.maxwell.nshapes = 1;
            p.maxwell.shapes[0] = (pyr_shape_t){.kind = PYR_SHAPE_BOX, .lo = {0.2, 0.2, 0.2}, .hi = {0.6, 0.7, 0.5}, .eps_r = 4, .mu_r = 1};
        }
        if (v == 2) {
            p.maxwell.cpml_cells = 4;
            p.maxwell.cpml_faces = 3u << 4; /* z- and z+ */
        }
        pyr_plan_t *plan = NULL;
        CHECK(pyr_plan_create(&p, &o, &plan) == PYR_OK, "skewed Maxwell plan for the model (%d): %s", v, pyr_last_error());
        if (!plan) continue;
        for (int f = 0; f < plan->scheme->nfields; f++) {
            if (!pyr_skew_in_ring(plan, f)) continue;
            nring[v]++;
            nstate[v] += plan->scheme->field[f].role != PYR_FIELD_INPUT;
        }
        CHECK(pyr_model_predict_pass(plan, &k, PYR_MODEL_SERIAL, 8, &pr[v]) == PYR_OK, "model: %s", pyr_last_error());
        pyr_plan_destroy(&plan);
    }
    CHECK(nring[0] == 6 && nring[1] > 6 && nstate[1] == 6 && nstate[2] > 6, "fields in the ring: %d, %d (%d state), %d (%d state)", nring[0],
          nring[1], nstate[1], nring[2], nstate[2]);
    CHECK(pr[0].upload > 0 && fabs(pr[1].upload * nring[0] - pr[0].upload * nring[1]) <= 1e-9 * pr[1].upload &&
              fabs(pr[1].download - pr[0].download) <= 1e-9 * pr[1].download,
          "the model prices the coefficient field: upload %g s (without %g s), download %g s (%g s)", pr[1].upload, pr[0].upload,
          pr[1].download, pr[0].download);
    CHECK(pr[2].upload > pr[1].upload && pr[2].download > pr[1].download && pr[2].upload < pr[1].upload * nring[2] / nring[1],
          "the model prices the auxiliaries over their layers: upload %g s (%g s without), download %g s (%g s)", pr[2].upload,
          pr[1].upload, pr[2].download, pr[1].download);
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 120;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    refusals(backend);
    model_prices_fields();
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend);
    printf("%d of %d random skewed Maxwell plans on the %s backend bit-identical to the naive method (seed %llu): %d in more than two "
           "pieces, %d of several passes, %d both; %d with CPML, %d with sources, %d with probes, %d with materials\n",
           cases - failed, cases, backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed, several_pieces, several_passes, both,
           with_cpml, with_sources, with_probes, with_materials);
    CHECK(failed > 0 || cases < 20 || (both >= cases / 3 && with_cpml >= cases / 4 && with_sources >= cases / 2 && with_probes >= cases / 3),
          "too few cases ran in several pieces and passes (%d), with CPML (%d), sources (%d) or probes (%d) to mean much", both, with_cpml,
          with_sources, with_probes);
    return check_report();
}
