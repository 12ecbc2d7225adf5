/* Property test of skewed pieces for the Poisson scheme: its input field f
 * streamed beside the state and its change measured per piece.  Random 2D
 * and 3D problems (float and double, f zero, a sine or random values, damped
 * or not, some Neumann faces, fixed sweep counts and tolerance stops at
 * random check intervals, awkward sizes) under decomposition = skewed at
 * every height, budgets from the smallest that plans up to a few grids (so
 * one plane per piece, several pieces and several passes), 1 to 3 slots and
 * the kernel variants, give the CPU naive method's field bit for bit, the
 * same sweep count and the same final change, and a run of every sweep
 * moves the values its plan counted.  f goes up once per pass, each plane
 * once (its device ring hands the planes pieces share over on the device):
 * a run's upload less the same run's without f is its passes times one grid
 * of f, over slots 1 to 3, several heights and the smallest budgets (pieces
 * of a plane or two, the ring wrapping many times a pass).  Chebyshev's
 * sweeps (they read u two sweeps back where they write) run the same random
 * cases again: their pieces carry both layers of u, in buffers of one
 * mapping a pass and halo stores of two layers, and must give the naive
 * method's bits, sweeps and change too, moving twice u's values each way.
 * Also: a 1D problem is refused with the reason, and the model prices f's
 * planes as they move (the auto plans weigh skewed pieces for Poisson beside
 * the others) and the older layer's beside u's.
 *
 *   test_skewed_poisson [cases] [seed] [backend] [jacobi|chebyshev]     (defaults: 200 1 cpu jacobi) */
#include <stdio.h>
#include <string.h>

#include "plan/model.h"
#include "plan/skewed.h"
#include "poisson_util.h"
#include "schemes/poisson.h"
#include "schemes/scheme.h"

static int stopped_early, several_pieces, several_passes, with_f; /* what the cases exercised */

/* cheb: Chebyshev's sweeps instead of (damped) Jacobi's, every other draw the same */
static int run_case(uint64_t seed, int c, pyr_backend_kind_t backend, int cheb)
{
    rng_t r = {seed * 15485863u + (uint64_t)c * 32452843u};
    const int dims = (int)rng_range(&r, 2, 3);
    int64_t n[3] = {1, 1, 1};
    double len[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) {
        n[a] = rng_range(&r, 3, dims == 2 ? 60 : 19);
        len[a] = 0.5 + (double)rng_range(&r, 0, 100) / 100.0;
    }
    const pyr_precision_t prec = rng_range(&r, 0, 1) ? PYR_DOUBLE : PYR_FLOAT;
    const int rhs_kind = (int)rng_range(&r, 0, 2); /* 0 zero, 1 sine, 2 random values given */
    pyr_problem_t p;
    make_poisson(&p, dims, n, len, prec, rng_range(&r, 1, 60), 0, rng_range(&r, 1, 25), rhs_kind == 0 ? PYR_RHS_ZERO : PYR_RHS_SINE,
                 rng_range(&r, 0, 1) ? PYR_INIT_RANDOM : PYR_INIT_ZERO, rng_next(&r));
    if (rng_range(&r, 0, 3) == 0) p.poisson.omega = 0.2 + (pyr_poisson_omega_limit(&p) - 0.2) * (double)rng_range(&r, 0, 160) / 161.0;
    /* some Neumann faces (never all: a pure Neumann problem needs balanced data), the skewed axis's included */
    int neumann = 0;
    if (rng_range(&r, 0, 3) == 0)
        for (int k = 0; k < 2 * dims - 1; k++)
            if (rng_range(&r, 0, 1)) {
                const int face = k == 0 ? 2 * dims - 1 - (int)rng_range(&r, 0, 1) : k - 1; /* often one of the last axis */
                if (p.poisson.face[face] == PYR_FACE_NEUMANN) continue;
                p.poisson.face[face] = PYR_FACE_NEUMANN;
                p.poisson.flux[face] = rng_range(&r, 0, 1) ? (double)(rng_range(&r, 0, 400) - 200) / 100.0 : 0.0;
                neumann++;
            }
    if (neumann && pyr_poisson_pure_neumann(&p)) p.poisson.face[0] = PYR_FACE_DIRICHLET;
    if (cheb) {
        p.poisson.iteration = PYR_ITER_CHEBYSHEV;
        p.poisson.omega = 1; /* the acceleration chooses every sweep's weight */
    }
    pyr_field_t *f = NULL;
    if (rhs_kind == 2) {
        if (pyr_field_create(&p, &f) != PYR_OK) return 1;
        for (int64_t i = 0; i < pyr_field_count(f); i++) {
            double v = (double)(rng_next(&r) % 2001) / 100.0 - 10.0;
            if (prec == PYR_DOUBLE) ((double *)f->data)[i] = v;
            else ((float *)f->data)[i] = (float)v;
        }
    }
    /* a tolerance that stops the run at some check (a fraction of the change a few sweeps in) */
    if (rng_range(&r, 0, 2) == 0) {
        pyr_problem_t q = p;
        q.steps = rng_range(&r, 1, p.steps);
        pyr_run_info_t qr;
        pyr_field_t *qu = poisson_reference(&q, f, &qr, NULL);
        pyr_field_destroy(&qu);
        if (qr.change > 0) p.poisson.tolerance = qr.change * (0.5 + (double)rng_range(&r, 0, 100) / 100.0);
    }

    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.height = rng_range(&r, 0, 4) == 0 ? 0 : rng_range(&r, 1, p.steps);
    o.slots = (int)rng_range(&r, 1, 3);
    o.threads = (int)rng_range(&r, 1, 2);
    if (backend == PYR_BACKEND_CPU) {
        static const char *const v[] = {"", "auto", "sweep", "wave", "wave:3,1,2"};
        snprintf(o.kernel, sizeof o.kernel, "%s", v[rng_range(&r, 0, 4)]);
    } else {
        static const char *const v[] = {"", "plain", "fused:1", "fused:3", "fused:5"};
        const int64_t i = rng_range(&r, 0, 4);
        snprintf(o.kernel, sizeof o.kernel, "%s", v[cheb ? i % 3 : i]); /* Chebyshev's sweeps launch one by one */
    }
    const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * pyr_precision_size(prec);
    const uint64_t lo = smallest_budget(&p, o, 16 * grid + (4u << 20));
    /* mostly small budgets: one plane per piece up to a few */
    o.memory = lo + (rng_range(&r, 0, 2) ? (uint64_t)rng_range(&r, 0, (int64_t)(grid / 4)) : (uint64_t)rng_range(&r, 0, (int64_t)(3 * grid)));
    char label[400];
    snprintf(label, sizeof label,
             "case %d seed %llu: %dD %lldx%lldx%lld %s f=%s %s omega=%g neumann=%d iterations=%lld tolerance=%g check_every=%lld | "
             "skewed height=%lld slots=%d memory=%llu kernel=%s",
             c, (unsigned long long)seed, dims, (long long)n[0], (long long)n[1], (long long)n[2], pyr_precision_name(prec),
             rhs_kind == 0 ? "0" : rhs_kind == 1 ? "sine" : "random", cheb ? "chebyshev" : "jacobi", p.poisson.omega, neumann, (long long)p.steps, p.poisson.tolerance,
             (long long)p.poisson.check_every, (long long)o.height, o.slots, (unsigned long long)o.memory, o.kernel);

    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(&p, &o, &plan);
    CHECK(st == PYR_OK, "%s: no plan: %s", label, pyr_last_error());
    if (st != PYR_OK) {
        pyr_field_destroy(&f);
        return 1;
    }
    CHECK(plan->decomp == PYR_DECOMP_SKEWED && !plan->resident && plan->previous == cheb, "%s: not a skewed plan (carrying %d layers)",
          label, 1 + plan->previous);
    const int64_t pieces = pyr_skew_pieces(plan, plan->height), height = plan->height;
    pyr_plan_info_t info;
    CHECK_OK(pyr_plan_get_info(plan, &info));
    pyr_plan_destroy(&plan);

    pyr_run_info_t ra, rb;
    pyr_status_t sa, sb;
    pyr_field_t *a = solve_poisson(&p, &o, f, &ra, &sa);
    pyr_field_t *b = poisson_reference(&p, f, &rb, &sb);
    int bad = 0;
    CHECK(a && b, "%s: run failed: %s", label, pyr_last_error());
    if (a && b) {
        int64_t i = first_difference(a, b);
        CHECK(i < 0, "%s: differs from the naive method at node %lld (%.17g, naive %.17g)", label, (long long)i, i >= 0 ? field_get(a, i) : 0,
              i >= 0 ? field_get(b, i) : 0);
        CHECK(ra.steps == rb.steps, "%s: %lld sweeps, the naive method %lld", label, (long long)ra.steps, (long long)rb.steps);
        CHECK(ra.change == rb.change && ra.converged == rb.converged && ra.checked == rb.checked,
              "%s: change %.17g (converged %d), the naive method %.17g (%d)", label, ra.change, ra.converged, rb.change, rb.converged);
        /* the plan's counts are the run's (f's planes included, each once a pass) where it ran every sweep */
        CHECK(ra.steps < p.steps || (ra.counts.uploaded == info.counts.uploaded && ra.counts.downloaded == info.counts.downloaded),
              "%s: moved %llu up and %llu down, the plan said %llu and %llu", label, (unsigned long long)ra.counts.uploaded,
              (unsigned long long)ra.counts.downloaded, (unsigned long long)info.counts.uploaded, (unsigned long long)info.counts.downloaded);
        bad = i >= 0 || ra.steps != rb.steps || ra.change != rb.change || ra.converged != rb.converged ||
              (ra.steps == p.steps && ra.counts.uploaded != info.counts.uploaded);
        stopped_early += rb.converged && rb.steps < p.steps;
        several_pieces += pieces > 2;
        several_passes += ra.steps > height;
        with_f += rhs_kind != 0;
    } else {
        bad = 1;
    }
    pyr_field_destroy(&a);
    pyr_field_destroy(&b);
    pyr_field_destroy(&f);
    return bad;
}

/* f crosses to the device once per pass, each plane once (its ring hands the planes a piece shares with
 * the ones before over on the device): a run's upload with f less the same run's without is its passes
 * times f's interior planes, whatever the slots, the height and the budget; the smallest budgets make
 * pieces of a plane or two and wrap the ring many times a pass.  Each run also equals the naive method
 * bit for bit. */
static void f_once_per_pass(pyr_backend_kind_t backend)
{
    static const struct {
        int dims;
        int64_t n[3];
        int64_t h;
        int slots;
        pyr_precision_t prec;
    } cs[] = {
        {3, {6, 7, 90}, 5, 1, PYR_FLOAT},   {3, {6, 7, 90}, 5, 2, PYR_DOUBLE}, {3, {6, 7, 90}, 5, 3, PYR_FLOAT},
        {3, {5, 9, 73}, 12, 2, PYR_DOUBLE}, {3, {4, 5, 59}, 1, 3, PYR_FLOAT},  {2, {9, 170, 1}, 3, 3, PYR_DOUBLE},
        {2, {9, 170, 1}, 20, 1, PYR_FLOAT}, {2, {13, 150, 1}, 7, 2, PYR_FLOAT},
    };
    int64_t wraps = 0;
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
        for (int doubled = 0; doubled < 2; doubled++) {
            pyr_problem_t p;
            pyr_options_t o;
            pyr_options_default(&o);
            o.backend = backend;
            o.method = PYR_METHOD_PYRAMID;
            o.decomposition = PYR_DECOMP_SKEWED;
            o.height = cs[c].h;
            o.slots = cs[c].slots;
            make_poisson(&p, cs[c].dims, cs[c].n, NULL, cs[c].prec, 2 * cs[c].h + 3, 0, 2 * cs[c].h, PYR_RHS_SINE, PYR_INIT_RANDOM,
                         (uint64_t)c + 7);
            o.memory = smallest_budget(&p, o, 64u << 20) << doubled;
            char label[160];
            snprintf(label, sizeof label, "f once a pass: %dD %lldx%lldx%lld height %lld slots %d memory %llu", cs[c].dims,
                     (long long)cs[c].n[0], (long long)cs[c].n[1], (long long)cs[c].n[2], (long long)cs[c].h, cs[c].slots,
                     (unsigned long long)o.memory);
            pyr_plan_t *plan = NULL;
            if (pyr_plan_create(&p, &o, &plan) != PYR_OK) {
                CHECK(0, "%s: no plan: %s", label, pyr_last_error());
                continue;
            }
            pyr_plan_info_t info;
            CHECK_OK(pyr_plan_get_info(plan, &info));
            const int a = pyr_skew_axis(plan);
            const int64_t planes = p.n[a] - plan->fixed[a][0] - plan->fixed[a][1];
            const uint64_t f_grid = (uint64_t)(planes * (pyr_problem_nodes(&p) / p.n[a]));
            /* the ring's new mappings a pass, as the executor takes them in a steady pass */
            const int64_t R = pyr_skew_ring_planes(plan, plan->height);
            int64_t base = 0;
            for (int64_t t = 0; t < pyr_skew_pieces(plan, plan->height); t++) wraps += pyr_skew_ring_next(plan, t, plan->height, R, &base) > 0;
            pyr_plan_destroy(&plan);
            pyr_problem_t q = p;
            q.poisson.rhs = PYR_RHS_ZERO;
            pyr_run_info_t rf, r0, rn;
            pyr_status_t sf, s0, sn;
            pyr_field_t *uf = solve_poisson(&p, &o, NULL, &rf, &sf), *u0 = solve_poisson(&q, &o, NULL, &r0, &s0);
            pyr_field_t *un = poisson_reference(&p, NULL, &rn, &sn);
            CHECK(uf && u0 && un, "%s: run failed: %s", label, pyr_last_error());
            if (uf && u0 && un) {
                const uint64_t f_up = rf.counts.uploaded - r0.counts.uploaded;
                CHECK(f_up == (uint64_t)info.passes * f_grid, "%s: f moved %llu values up in %lld passes, %llu a pass (one grid of f: %llu)",
                      label, (unsigned long long)f_up, (long long)info.passes, (unsigned long long)(f_up / (uint64_t)info.passes),
                      (unsigned long long)f_grid);
                const int64_t i = first_difference(uf, un);
                CHECK(i < 0 && rf.steps == rn.steps && rf.change == rn.change, "%s: differs from the naive method at node %lld", label,
                      (long long)i);
            }
            pyr_field_destroy(&uf);
            pyr_field_destroy(&u0);
            pyr_field_destroy(&un);
        }
    CHECK(wraps > 50, "the cases took only %lld new mappings of f's ring past a pass's first piece", (long long)wraps);
}

/* A refusal that stays: a 1D grid; Chebyshev's sweeps (they read u two sweeps back) plan. */
static void refusals(void)
{
    int64_t n[3] = {40, 30, 1};
    pyr_problem_t p;
    pyr_options_t o;
    pyr_options_default(&o);
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.memory = 1u << 20;
    pyr_plan_t *plan = NULL;
    make_poisson(&p, 1, n, NULL, PYR_DOUBLE, 10, 0, 5, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
    CHECK(pyr_plan_create(&p, &o, &plan) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "1D grid"), "1D skewed Poisson: %s",
          pyr_last_error());
    pyr_plan_destroy(&plan);
    make_poisson(&p, 2, n, NULL, PYR_DOUBLE, 10, 0, 5, PYR_RHS_SINE, PYR_INIT_ZERO, 1);
    p.poisson.iteration = PYR_ITER_CHEBYSHEV;
    CHECK(pyr_plan_create(&p, &o, &plan) == PYR_OK && plan->previous && plan->decomp == PYR_DECOMP_SKEWED, "Chebyshev skewed: %s",
          pyr_last_error());
    pyr_plan_destroy(&plan);
    /* Jacobi plans, f and its change included */
    p.poisson.iteration = PYR_ITER_JACOBI;
    CHECK(pyr_plan_create(&p, &o, &plan) == PYR_OK, "Jacobi skewed: %s", pyr_last_error());
    pyr_plan_destroy(&plan);
}

/* The model prices f's planes as the executor moves them: the same pieces with f upload twice what they
 * upload without (f's planes beside the state's, once), and compute no less but hardly more (the ring's
 * moves once per wrap, not a move and an upload per call). */
static void model_prices_f(void)
{
    int64_t n[3] = {24, 20, 60};
    pyr_problem_t p;
    pyr_options_t o;
    pyr_options_default(&o);
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SKEWED;
    o.memory = 64u << 20;
    o.piece = 8;
    o.height = 9;
    o.slots = 2;
    pyr_model_prediction_t with = {0}, without = {0};
    const pyr_model_constants_t k = pyr_model_default(PYR_BACKEND_CUDA, 3, PYR_DOUBLE);
    for (int rhs = 0; rhs < 2; rhs++) {
        make_poisson(&p, 3, n, NULL, PYR_DOUBLE, 18, 0, 9, rhs ? PYR_RHS_SINE : PYR_RHS_ZERO, PYR_INIT_ZERO, 1);
        pyr_plan_t *plan = NULL;
        CHECK(pyr_plan_create(&p, &o, &plan) == PYR_OK, "skewed plan for the model: %s", pyr_last_error());
        if (plan) CHECK(pyr_model_predict_pass(plan, &k, PYR_MODEL_SERIAL, 9, rhs ? &with : &without) == PYR_OK, "model: %s", pyr_last_error());
        pyr_plan_destroy(&plan);
    }
    CHECK(fabs(with.upload - 2 * without.upload) <= 1e-9 * with.upload && with.compute >= without.compute &&
              with.compute < 1.05 * without.compute,
          "the model prices f: upload %g s (without f %g s), compute %g s (%g s)", with.upload, without.upload, with.compute,
          without.compute);
}

int main(int argc, char **argv)
{
    int cases = argc > 1 ? atoi(argv[1]) : 200;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    pyr_backend_kind_t backend = argc > 3 && !strcmp(argv[3], "cuda") ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
    if (argc > 4 && strcmp(argv[4], "chebyshev") && strcmp(argv[4], "jacobi")) {
        fprintf(stderr, "test_skewed_poisson: the sweeps are jacobi or chebyshev, not %s\n", argv[4]);
        return 2;
    }
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    refusals();
    model_prices_f();
    f_once_per_pass(backend);
    const int cheb = argc > 4 && !strcmp(argv[4], "chebyshev");
    int failed = 0;
    for (int c = 0; c < cases && failed < 5; c++) failed += run_case(seed, c, backend, cheb);
    printf("%d of %d random skewed Poisson plans (%s) on the %s backend bit-identical to the naive method (seed %llu); %d stopped at a "
           "check before their last sweep, %d had more than two pieces a pass, %d several passes, %d an f\n",
           cases - failed, cases, cheb ? "chebyshev" : "jacobi", backend == PYR_BACKEND_CUDA ? "cuda" : "cpu", (unsigned long long)seed,
           stopped_early, several_pieces, several_passes, with_f);
    CHECK(failed > 0 || cases < 20 ||
              (stopped_early >= cases / 10 && several_pieces >= cases / 2 && several_passes >= cases / 3 && with_f >= cases / 2),
          "too few cases exercised stops (%d), several pieces (%d), several passes (%d) or an f (%d) to mean much", stopped_early,
          several_pieces, several_passes, with_f);
    return check_report();
}
