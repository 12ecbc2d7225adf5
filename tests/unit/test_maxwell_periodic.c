/* Maxwell's periodic axes (boundary.periodic): issue 46 item 5 and its
 * refusals (item 7).
 *   - invariance: a 2D TM run periodic in y with a line source uniform in y
 *     is uniform in y bit for bit (Hx stays 0) and equals a 1D Yee run
 *     written here (PEC walls at the x ends), to 1e-12 of its peak, under
 *     the naive method and a pyramid in pieces;
 *   - translation: a random field (with a lossy dielectric box) shifted
 *     along the periodic axes, around the wrap, runs into the result shifted
 *     alike, bit for bit, in 2D TM and TE and 3D;
 *   - the TF/SF plane wave whose box spans the periodic axes whole: nothing
 *     leaks outside the box (<= 1e-12 of the amplitude, double) in 2D TM and
 *     TE periodic in y and 3D periodic in x and y, the wave crossing the
 *     wrap; the incident field inside is uniform across the periodic axes;
 *   - parts over several devices cut along x give the naive bits; a
 *     partition cutting the periodic y is refused;
 *   - the keys: boundary.periodic's spellings and round trip, the default
 *     CPML faces leaving the periodic axes out;
 *   - the refusals: CPML on a periodic axis, a box face on one, a plane wave
 *     along one, oblique incidence, a decomposition cutting only periodic
 *     axes, the far-field transform of a periodic cell, bad spellings.
 * usage: test_maxwell_periodic [cpu|cuda]   (cuda: skipped, 77, without a GPU) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "maxwell_util.h"
#include "schemes/maxwell.h"

static pyr_backend_kind_t backend = PYR_BACKEND_CPU;

static void set_ok(pyr_problem_t *p, const char *key, const char *value)
{
    pyr_status_t st = pyr_problem_set(p, key, value);
    CHECK(st == PYR_OK, "set %s = %s: %s", key, value, pyr_last_error());
}

/* The refusal of p (validation, or the plan under o when o is given) with a message holding `want`. */
static void refused(const char *label, const pyr_problem_t *p, const pyr_options_t *o, const char *want)
{
    pyr_status_t st = pyr_problem_validate(p);
    if (st == PYR_OK && o) {
        pyr_plan_t *pl = NULL;
        st = pyr_plan_create(p, o, &pl);
        pyr_plan_destroy(&pl);
    }
    CHECK(st != PYR_OK && strstr(pyr_last_error(), want), "%s: expected a refusal saying '%s', got %s", label, want,
          st == PYR_OK ? "acceptance" : pyr_last_error());
    if (st != PYR_OK) printf("%s: %s\n", label, pyr_last_error());
}

/* ------------------------------------------------------------- invariance */

static void check_invariance(void)
{
    const int64_t nx = 161, ny = 7;
    const int64_t n[3] = {nx, ny, 1};
    const double len[3] = {1.6, 0.07, 1};
    pyr_problem_t p;
    make_maxwell(&p, 2, n, len, 0, PYR_DOUBLE, 220, 0.9);
    set_ok(&p, "boundary.periodic", "y");
    set_ok(&p, "source.source1", "Ez line 60 0 60 6 gaussian amplitude=1 width=0.05 delay=0.2");
    /* the 1D reference: Ez at nodes 0 .. nx-1 (PEC at both ends), Hy at x + 1/2 */
    double dt = 0;
    CHECK_OK(pyr_maxwell_dt(&p, &dt));
    const double hx = len[0] / (double)(nx - 1), rh = 1.0 / hx;
    double *ez = calloc((size_t)nx, sizeof *ez), *hy = calloc((size_t)nx, sizeof *hy);
    for (int64_t s = 0; s < p.steps; s++) {
        for (int64_t x = 0; x + 1 < nx; x++) hy[x] = hy[x] + dt * ((ez[x + 1] - ez[x]) * rh);
        for (int64_t x = 1; x + 1 < nx; x++) ez[x] = 1.0 * ez[x] + dt * ((hy[x] - hy[x - 1]) * rh);
        const double tau = (double)(s + 1) * dt - 0.2;
        ez[60] += exp(-(tau / 0.05) * (tau / 0.05));
    }
    double peak = 0;
    for (int64_t x = 0; x < nx; x++) peak = fmax(peak, fabs(ez[x]));
    for (int k = 0; k < 2; k++) {
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        if (k) {
            o.method = PYR_METHOD_PYRAMID;
            o.decomposition = PYR_DECOMP_BLOCKS;
            o.height = 9;
            o.memory = 2 * smallest_budget(&p, o, 1u << 20); /* pieces of a few columns */
        }
        mx_result_t r = {0};
        pyr_status_t st = mx_run(&p, &o, NULL, &r);
        CHECK(st == PYR_OK, "invariance run %d: %s", k, pyr_last_error());
        if (st != PYR_OK) continue;
        if (k) CHECK(r.info.tasks_per_pass > 1 && r.info.height > 1, "the pyramid ran in %lld pieces of height %lld", (long long)r.info.tasks_per_pass, (long long)r.info.height);
        double err = 0, hxmax = 0;
        int uniform = 1;
        for (int64_t x = 0; x < nx; x++) {
            const double v = mx_get(r.c[PYR_EZ], x, 0, 0);
            err = fmax(err, fabs(v - ez[x]));
            for (int64_t y = 1; y < ny; y++) {
                uniform &= mx_get(r.c[PYR_EZ], x, y, 0) == v && mx_get(r.c[PYR_HY], x, y, 0) == mx_get(r.c[PYR_HY], x, 0, 0);
                hxmax = fmax(hxmax, fabs(mx_get(r.c[PYR_HX], x, y, 0)));
            }
        }
        printf("invariance (%s): Ez against the 1D run %.3g of its peak %.3g; uniform along y: %s; max |Hx| %.3g\n", k ? "pyramid" : "naive",
               err / peak, peak, uniform ? "bit for bit" : "no", hxmax);
        CHECK(peak > 0.01 && err <= 1e-12 * peak, "invariance (%d): Ez differs from the 1D run by %.3g of its peak", k, err / peak);
        CHECK(uniform, "invariance (%d): the fields are not the same along the periodic y", k);
        CHECK(hxmax == 0, "invariance (%d): Hx = %.3g, not 0", k, hxmax);
        mx_free(&r);
    }
    free(ez);
    free(hy);
}

/* ------------------------------------------------------------ translation */

/* A periodic axis has no place: a random field shifted by k nodes along it
 * (and around) runs into the same field shifted alike, bit for bit (a wrong
 * difference at the wrap would tell the ends apart). */
static void check_translation(void)
{
    for (int kase = 0; kase < 3; kase++) {
        const int dims = kase < 2 ? 2 : 3, te = kase == 1;
        const int64_t n[3] = {dims == 2 ? 30 : 12, 9, dims == 2 ? 1 : 10};
        const double len[3] = {1.5, 0.7, 0.8};
        pyr_problem_t p;
        make_maxwell(&p, dims, n, len, te, PYR_DOUBLE, 40, 0.8);
        p.init = PYR_INIT_RANDOM;
        p.seed = 17 + (uint64_t)kase;
        set_ok(&p, "boundary.periodic", dims == 2 ? "y" : "x y");
        set_ok(&p, "boundary.cpml_cells", "3");
        set_ok(&p, "material.shape1", "box 0.3 0.6 0.2 0.4 0.1 0.5 eps_r=3 sigma=0.5");
        pyr_field_t *given[6] = {NULL}, *shifted[6] = {NULL};
        const int64_t k[3] = {dims == 3 ? 5 : 0, 4, 0};
        for (int c = 0; c < 6; c++) {
            if (!mx_used(&p, c)) continue;
            CHECK_OK(pyr_field_create(&p, &given[c]));
            CHECK_OK(pyr_field_init_state(given[c], &p, c));
            CHECK_OK(pyr_field_create(&p, &shifted[c]));
            for (int64_t z = 0; z < n[2]; z++)
                for (int64_t y = 0; y < n[1]; y++)
                    for (int64_t x = 0; x < n[0]; x++) {
                        const int64_t sx = (x + k[0]) % n[0], sy = (y + k[1]) % n[1];
                        ((double *)shifted[c]->data)[(z * n[1] + sy) * n[0] + sx] = ((double *)given[c]->data)[(z * n[1] + y) * n[0] + x];
                    }
        }
        /* the materials move with the field: the shape shifted by k nodes */
        pyr_problem_t q = p;
        for (int a = 0; a < 2; a++) {
            const double h = len[a] / (double)(n[a] - 1);
            q.maxwell.shapes[0].lo[a] += (double)k[a] * h;
            q.maxwell.shapes[0].hi[a] += (double)k[a] * h;
        }
        mx_result_t r1 = {0}, r2 = {0};
        pyr_status_t st = mx_reference(&p, given, &r1);
        CHECK(st == PYR_OK, "translation %d: %s", kase, pyr_last_error());
        if (st == PYR_OK) st = mx_reference(&q, shifted, &r2);
        CHECK(st == PYR_OK, "translation %d (shifted): %s", kase, pyr_last_error());
        int64_t bad = 0;
        double peak = 0;
        for (int c = 0; c < 6 && st == PYR_OK; c++) {
            if (!r1.c[c]) continue;
            for (int64_t z = 0; z < n[2]; z++)
                for (int64_t y = 0; y < n[1]; y++)
                    for (int64_t x = 0; x < n[0]; x++) {
                        const double v = mx_get(r1.c[c], x, y, z);
                        peak = fmax(peak, fabs(v));
                        bad += v != mx_get(r2.c[c], (x + k[0]) % n[0], (y + k[1]) % n[1], z);
                    }
        }
        printf("translation (%s): %lld values differ from the shifted run's (peak %.3g)\n", dims == 3 ? "3D, periodic x y" : te ? "TE" : "TM",
               (long long)bad, peak);
        CHECK(st == PYR_OK && bad == 0 && peak > 0.1, "translation %d: %lld values differ", kase, (long long)bad);
        for (int c = 0; c < 6; c++) {
            pyr_field_destroy(&given[c]);
            pyr_field_destroy(&shifted[c]);
        }
        mx_free(&r1);
        mx_free(&r2);
    }
}

/* ------------------------------------------------------------------ parts */

/* Parts over several devices: cut along x only (each spans the periodic y
 * whole) they give the naive bits; a partition cutting y is refused. */
static void check_parts(void)
{
    const int64_t n[3] = {48, 10, 1};
    const double len[3] = {1.2, 0.5, 1};
    pyr_problem_t p;
    make_maxwell(&p, 2, n, len, 0, PYR_DOUBLE, 30, 0.8);
    p.init = PYR_INIT_RANDOM;
    p.seed = 5;
    set_ok(&p, "boundary.periodic", "y");
    set_ok(&p, "boundary.cpml_cells", "4");
    set_ok(&p, "material.shape1", "box 0.4 0.7 0.1 0.3 eps_r=2.5");
    set_ok(&p, "source.planewave1", "Ez along -x box 10 0 38 9 gaussian width=0.1 delay=0.2");
    mx_result_t ref = {0};
    CHECK_OK(mx_reference(&p, NULL, &ref));
    const char *const partitions[2] = {"3x1x1", "2x2x1"};
    for (int k = 0; k < 2; k++) {
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = k ? PYR_METHOD_NAIVE : PYR_METHOD_PYRAMID;
        snprintf(o.devices, sizeof o.devices, "%s", k ? "0,0,0,0" : "0,0,0");
        snprintf(o.partition, sizeof o.partition, "%s", partitions[k]);
        o.exchange = 4;
        mx_result_t got = {0};
        pyr_status_t st = mx_run(&p, &o, NULL, &got);
        if (k == 0) {
            CHECK(st == PYR_OK, "parts 3x1 (x cut): %s", pyr_last_error());
            for (int c = 0; c < 6 && st == PYR_OK; c++)
                if (ref.c[c]) CHECK(first_difference(got.c[c], ref.c[c]) < 0, "parts 3x1: component %d differs from the naive run's", c);
        } else {
            CHECK(st != PYR_OK && strstr(pyr_last_error(), "cuts the periodic axis y"), "parts 2x2 (y cut): %s",
                  st == PYR_OK ? "accepted" : pyr_last_error());
            if (st != PYR_OK) printf("parts cutting y: %s\n", pyr_last_error());
        }
        mx_free(&got);
    }
    mx_free(&ref);
}

/* ------------------------------------------------------ plane wave, wrap */

/* Whether component c at node g lies in the box lo .. hi (positions), periodic axes always in. */
static int in_box(const pyr_problem_t *p, int c, const int64_t lo[3], const int64_t hi[3], const int64_t g[3])
{
    for (int t = 0; t < p->dims; t++) {
        if ((p->maxwell.periodic >> t) & 1) continue;
        const int half = c < 3 ? t == c : t != c - 3;
        if (g[t] < lo[t] || g[t] > (half ? hi[t] - 1 : hi[t])) return 0;
    }
    return 1;
}

static void leak_case(const char *label, const pyr_problem_t *p, int pyramid)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    if (pyramid) {
        o.method = PYR_METHOD_PYRAMID;
        o.decomposition = PYR_DECOMP_AUTO;
        o.height = 5;
        o.memory = 2 * smallest_budget(p, o, 1u << 20);
    }
    mx_result_t r = {0};
    pyr_status_t st = mx_run(p, &o, NULL, &r);
    CHECK(st == PYR_OK, "%s: %s", label, pyr_last_error());
    if (st != PYR_OK) return;
    if (pyramid) CHECK(r.info.tasks_per_pass > 1, "%s: the pyramid ran in %lld pieces", label, (long long)r.info.tasks_per_pass);
    const pyr_planewave_t *w = &p->maxwell.planewaves[0];
    double out = 0, in = 0, spread = 0;
    for (int c = 0; c < 6; c++) {
        if (!r.c[c]) continue;
        int64_t g[3];
        for (g[2] = 0; g[2] < p->n[2]; g[2]++)
            for (g[1] = 0; g[1] < p->n[1]; g[1]++)
                for (g[0] = 0; g[0] < p->n[0]; g[0]++) {
                    const double v = mx_get(r.c[c], g[0], g[1], g[2]);
                    if (in_box(p, c, w->lo, w->hi, g)) in = fmax(in, fabs(v));
                    else out = fmax(out, fabs(v));
                    /* across the periodic axes the wave is the same: against the line through the origin of those axes */
                    int64_t o0[3] = {g[0], g[1], g[2]};
                    for (int a = 0; a < p->dims; a++)
                        if ((p->maxwell.periodic >> a) & 1) o0[a] = 0;
                    spread = fmax(spread, fabs(v - mx_get(r.c[c], o0[0], o0[1], o0[2])));
                }
    }
    printf("%s: inside %.6g, outside %.3g, across the periodic axes %.3g\n", label, in, out, spread);
    CHECK(in > 0.9 * w->amplitude && in < 1.1 * w->amplitude, "%s: the wave inside the box peaks at %.6g (amplitude %g)", label, in, w->amplitude);
    CHECK(out <= 1e-12 * w->amplitude, "%s: %.3g outside the box", label, out);
    CHECK(spread == 0, "%s: the fields differ by %.3g across the periodic axes", label, spread);
    mx_free(&r);
}

static void check_planewave(void)
{
    const double len2[3] = {1.0, 0.1, 1};
    const int64_t n2[3] = {101, 11, 1};
    for (int te = 0; te < 2; te++)
        for (int pyramid = 0; pyramid < 2; pyramid++) {
            pyr_problem_t p;
            make_maxwell(&p, 2, n2, len2, te, PYR_DOUBLE, 95, 0.7);
            set_ok(&p, "boundary.periodic", "y");
            set_ok(&p, "boundary.kind", "cpml");
            set_ok(&p, "boundary.cpml_cells", "10");
            CHECK((p.maxwell.cpml_faces & 0xf) == 0x3, "periodic y with the default faces: CPML on %#x, expected x- x+ only", p.maxwell.cpml_faces);
            set_ok(&p, "source.planewave1", te ? "Ey along +x box 30 0 70 10 gaussian width=0.06 delay=0.25" : "Ez along +x box 30 0 70 10 gaussian width=0.06 delay=0.25");
            char label[64];
            snprintf(label, sizeof label, "2D %s periodic y, plane wave along +x (%s)", te ? "TE" : "TM", pyramid ? "pyramid" : "naive");
            leak_case(label, &p, pyramid);
        }
    /* 3D: periodic in x and y, the wave along -z */
    const double len3[3] = {0.1, 0.12, 0.6};
    const int64_t n3[3] = {6, 7, 61};
    for (int pyramid = 0; pyramid < 2; pyramid++) {
        pyr_problem_t p;
        make_maxwell(&p, 3, n3, len3, 0, PYR_DOUBLE, 52, 0.6);
        set_ok(&p, "boundary.cpml_cells", "8");
        set_ok(&p, "boundary.periodic", "x y");
        CHECK(p.maxwell.cpml_faces == 0x30, "periodic x y: CPML on %#x, expected z- z+ only", p.maxwell.cpml_faces);
        set_ok(&p, "source.planewave1", "Ex along -z box 0 0 20 5 6 40 gaussian width=0.04 delay=0.15");
        leak_case(pyramid ? "3D periodic x y, plane wave along -z (pyramid)" : "3D periodic x y, plane wave along -z (naive)", &p, pyramid);
    }
}

/* --------------------------------------------------------- keys, refusals */

static void check_keys(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {40, 12, 1};
    make_maxwell(&p, 2, n, NULL, 0, PYR_DOUBLE, 10, 0.5);
    set_ok(&p, "boundary.periodic", "y");
    set_ok(&p, "boundary.cpml_cells", "5"); /* given after periodic: its default faces leave y out too */
    CHECK(p.maxwell.periodic == 2 && (p.maxwell.cpml_faces & 0xf) == 0x3, "periodic %#x, faces %#x", p.maxwell.periodic, p.maxwell.cpml_faces);
    char a[64];
    CHECK_OK(pyr_problem_get(&p, "boundary.periodic", a, sizeof a));
    CHECK(!strcmp(a, "y"), "boundary.periodic reads '%s'", a);
    set_ok(&p, "boundary.periodic", "x,y");
    CHECK(p.maxwell.periodic == 3, "periodic = x,y gives %#x", p.maxwell.periodic);
    CHECK_OK(pyr_problem_get(&p, "boundary.periodic", a, sizeof a));
    CHECK(!strcmp(a, "xy"), "boundary.periodic reads '%s'", a);
    set_ok(&p, "boundary.periodic", "none");
    CHECK(p.maxwell.periodic == 0, "periodic = none gives %#x", p.maxwell.periodic);
    const char *bad[] = {"w", "y y", "", "xq"};
    for (int i = 0; i < 4; i++) {
        pyr_status_t st = pyr_problem_set(&p, "boundary.periodic", bad[i]);
        CHECK(st != PYR_OK && strstr(pyr_last_error(), "periodic"), "periodic = '%s' accepted or unclear: %s", bad[i], pyr_last_error());
    }

    /* refusals */
    pyr_problem_t q;
    make_maxwell(&q, 2, n, NULL, 0, PYR_DOUBLE, 10, 0.5);
    set_ok(&q, "boundary.periodic", "y");
    set_ok(&q, "boundary.cpml_cells", "5");
    set_ok(&q, "boundary.faces", "x- y+");
    refused("CPML on the periodic y", &q, NULL, "axis y is periodic, but boundary.faces puts a CPML on y+");

    make_maxwell(&q, 2, n, NULL, 0, PYR_DOUBLE, 10, 0.5);
    set_ok(&q, "boundary.periodic", "z");
    refused("periodic z in 2D", &q, NULL, "an axis this 2D grid does not have");

    make_maxwell(&q, 2, n, NULL, 0, PYR_DOUBLE, 10, 0.5);
    set_ok(&q, "boundary.periodic", "y");
    set_ok(&q, "source.planewave1", "Ez along +x box 10 2 30 9 gaussian width=0.1 delay=0.3");
    refused("a box face on the periodic y", &q, NULL, "a box face on a periodic axis is not supported: span it whole (nodes 0 to 11)");
    set_ok(&q, "source.planewave1", "Ez along +x tilt 20 y box 10 0 30 11 sine frequency=2");
    refused("oblique incidence", &q, NULL, "needs Bloch-periodic boundaries");
    set_ok(&q, "source.planewave1", "Ez along +y box 10 0 30 11 gaussian width=0.1 delay=0.3");
    refused("a plane wave along the periodic y", &q, NULL, "which is periodic");

    /* the near-to-far-field transform of a periodic cell */
    make_maxwell(&q, 2, n, NULL, 0, PYR_DOUBLE, 40, 0.5);
    set_ok(&q, "boundary.periodic", "y");
    set_ok(&q, "monitor.flux1", "plane x 10 freqs=5");
    set_ok(&q, "monitor.flux2", "plane x 30 freqs=5");
    pyr_spectra_t *sp = NULL;
    CHECK_OK(pyr_spectra_create(&q, &sp));
    const int surface[4] = {0, 1, 0, 1};
    const double phi[1] = {0};
    double power[1];
    pyr_status_t fst = pyr_spectra_farfield(&q, sp, 4, surface, 1, NULL, phi, 10, power, NULL, NULL);
    CHECK(fst != PYR_OK && strstr(pyr_last_error(), "periodic axes"), "the far field of a periodic cell: %s", fst == PYR_OK ? "accepted" : pyr_last_error());
    pyr_spectra_destroy(&sp);

    /* plans: strips cut only y */
    make_maxwell(&q, 2, n, NULL, 0, PYR_DOUBLE, 10, 0.5);
    set_ok(&q, "boundary.periodic", "y");
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_STRIPS;
    refused("strips on a grid periodic in y", &q, &o, "use decomposition = blocks");
    set_ok(&q, "boundary.periodic", "x y");
    o.decomposition = PYR_DECOMP_BLOCKS;
    refused("blocks on a grid periodic in x and y", &q, &o, "use method = naive");
    /* auto finds a decomposition that cuts x (a budget of half the grid's fields) */
    set_ok(&q, "boundary.periodic", "y");
    o.decomposition = PYR_DECOMP_AUTO;
    o.memory = 40 * 12 * 8 * 3 / 2;
    pyr_plan_t *pl = NULL;
    pyr_status_t st = pyr_plan_create(&q, &o, &pl);
    /* the CUDA layout's pieces hold more buffers (three in flight, rows padded): raise the budget until its pieces fit */
    for (int tries = 0; st == PYR_ERR_BUDGET && tries < 10; tries++) {
        o.memory *= 2;
        st = pyr_plan_create(&q, &o, &pl);
    }
    CHECK(st == PYR_OK, "auto on a grid periodic in y: %s", pyr_last_error());
    if (st == PYR_OK) {
        pyr_plan_info_t info;
        CHECK_OK(pyr_plan_get_info(pl, &info));
        /* pieces cut x only (y is periodic), small enough to take several passes */
        CHECK(info.pieces[0] > 1 && info.pieces[1] == 1 && info.passes > 1,
              "auto on a grid periodic in y, memory %llu: %lld x %lld pieces in %lld passes; expected pieces along x only, in several passes",
              (unsigned long long)o.memory, (long long)info.pieces[0], (long long)info.pieces[1], (long long)info.passes);
    }
    pyr_plan_destroy(&pl);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (pyr_gpu_count() == 0) {
            printf("no usable GPU: skipped\n");
            return 77;
        }
        backend = PYR_BACKEND_CUDA;
    }
    check_invariance();
    check_translation();
    check_parts();
    check_planewave();
    check_keys();
    return check_report();
}
