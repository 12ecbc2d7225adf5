/* Maxwell's total-field / scattered-field plane waves (source.planewaveN):
 * issue #46 item 1.
 *   - leakage: with nothing in the box, the fields outside it stay at
 *     rounding level (double: <= 1e-12 of the amplitude; float: <= -60 dB)
 *     while the wave crosses the box, for 2D TM and TE, 3D, every direction
 *     sign and propagation axes x, y and z; tilted (oblique incidence in a
 *     plane of two axes): <= -60 dB;
 *   - the incident field inside the box against the analytic plane wave (along
 *     an axis and tilted): a
 *     Gaussian pulse's series at a node inside matches
 *     A exp(-((t - delay - d / c) / w)^2), d the distance from the driven node,
 *     to 1% of A; a sine's amplitude after its ramp matches A to 1%;
 *   - the same bits under the naive method, pyramids of several heights,
 *     budgets and slots, and over several parts, with a scatterer in the box
 *     (2D TM, TE and 3D): fields and probe series;
 *   - the refusals (a box in the CPML or at the grid's edge, a polarisation
 *     along the direction or not of the mode, a face in a material shape, a
 *     reversed box, malformed lines) and pyr_problem_get's round trip.
 * usage: test_maxwell_planewave [cpu|cuda]   (cuda: skipped, 77, without a GPU) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "maxwell_util.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static pyr_backend_kind_t backend = PYR_BACKEND_CPU;

static void set_ok(pyr_problem_t *p, const char *key, const char *value)
{
    pyr_status_t st = pyr_problem_set(p, key, value);
    CHECK(st == PYR_OK, "set %s = %s: %s", key, value, pyr_last_error());
}

/* Whether component c at node (x, y, z) lies in the closed box lo .. hi (positions). */
static int in_box(const pyr_problem_t *p, int c, const int64_t lo[3], const int64_t hi[3], const int64_t g[3])
{
    for (int t = 0; t < p->dims; t++) {
        const int half = c < 3 ? t == c : t != c - 3;
        if (g[t] < lo[t] || g[t] > (half ? hi[t] - 1 : hi[t])) return 0;
    }
    return 1;
}

/* Runs p (with plane wave 1's box lo .. hi) and returns the largest |value| outside and inside the box. */
static void leak_case(const char *label, const pyr_problem_t *p, double limit)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    mx_result_t r;
    memset(&r, 0, sizeof r);
    pyr_status_t st = mx_run(p, &o, NULL, &r);
    CHECK(st == PYR_OK, "%s: %s", label, pyr_last_error());
    const pyr_planewave_t *w = &p->maxwell.planewaves[0];
    double out = 0, in = 0;
    for (int c = 0; c < 6 && st == PYR_OK; c++) {
        if (!r.c[c]) continue;
        int64_t g[3];
        for (g[2] = 0; g[2] < p->n[2]; g[2]++)
            for (g[1] = 0; g[1] < p->n[1]; g[1]++)
                for (g[0] = 0; g[0] < p->n[0]; g[0]++) {
                    const double v = fabs(mx_get(r.c[c], g[0], g[1], g[2]));
                    if (in_box(p, c, w->lo, w->hi, g)) in = fmax(in, v);
                    else out = fmax(out, v);
                }
    }
    printf("%s: inside %.6g, outside %.3g\n", label, in, out);
    CHECK(in > 0.9 * w->amplitude && in < 1.1 * w->amplitude, "%s: the wave inside the box peaks at %.6g (amplitude %g)", label, in, w->amplitude);
    CHECK(out <= limit * w->amplitude, "%s: %.3g outside the box, more than %.3g of the amplitude", label, out, limit);
    mx_free(&r);
}

static void check_leakage(void)
{
    static const struct {
        int dims, te;
        const char *pw;
    } cases[] = {
        {2, 0, "Ez along +x box 30 25 90 60 gaussian width=0.4 delay=1.6 amplitude=2"},
        {2, 0, "Ez along -y box 30 25 90 60 gaussian width=0.4 delay=1.6"},
        {2, 1, "Ey along -x box 30 25 90 60 ricker frequency=1 delay=1.2"},
        {2, 1, "Ex along +y box 30 25 90 60 gaussian width=0.4 delay=1.6"},
        {3, 0, "Ey along +x box 9 11 10 30 27 28 gaussian width=0.4 delay=1.6"},
        {3, 0, "Ex along -z box 9 11 10 30 27 28 gaussian width=0.4 delay=1.6"},
        {3, 0, "Ez along +y box 9 11 10 30 27 28 gaussian width=0.4 delay=1.6"},
        /* oblique incidence: -60 dB */
        {2, 0, "Ez along +x tilt 30 y box 30 25 90 60 gaussian width=0.4 delay=1.6"},
        {2, 0, "Ez along -y tilt 60 x box 30 25 90 60 sine frequency=0.8 width=2"},
        {2, 1, "Ey along -x tilt -30 y box 30 25 90 60 gaussian width=0.4 delay=1.6"},
        {2, 1, "Ex along +y tilt 20 x box 30 25 90 60 ricker frequency=0.8 delay=1.6"},
        {3, 0, "Ey along +x tilt 25 z box 9 11 10 30 27 28 gaussian width=0.4 delay=1.6"},
        {3, 0, "Ez along +x tilt -35 y box 9 11 10 30 27 28 gaussian width=0.4 delay=1.6"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int prec = 0; prec < 2; prec++) {
            if (prec && (cases[i].dims == 3 || strstr(cases[i].pw, "tilt"))) continue;
            pyr_problem_t p;
            const int64_t n2[3] = {121, 86, 1}, n3[3] = {40, 38, 39};
            const int three = cases[i].dims == 3;
            make_maxwell(&p, cases[i].dims, three ? n3 : n2, NULL, cases[i].te, prec ? PYR_FLOAT : PYR_DOUBLE, three ? 70 : 130, 0.5);
            for (int a = 0; a < p.dims; a++) p.length[a] = (double)(p.n[a] - 1) * (three ? 0.1 : 0.05);
            set_ok(&p, "boundary.kind", "cpml");
            set_ok(&p, "boundary.cpml_cells", three ? "6" : "10");
            set_ok(&p, "source.planewave1", cases[i].pw);
            char label[160];
            snprintf(label, sizeof label, "%s %s %s", three ? "3D" : cases[i].te ? "TE" : "TM", prec ? "float" : "double", cases[i].pw);
            leak_case(label, &p, prec || strstr(cases[i].pw, "tilt") ? 1e-3 : 1e-12);
        }
}

/* The incident field in the box against the analytic plane wave, at 40 cells per wavelength, along x and
 * tilted 30 degrees towards y (the waveform given on the plane normal to k through the corner of the box,
 * grown by a node, that the wave reaches first: node (39, 11)). */
static void check_analytic(void)
{
    for (int c = 0; c < 4; c++) {
        const int wave = c % 2, tilt = c / 2;
        pyr_problem_t p;
        const int64_t n[3] = {241, 41, 1};
        const double h = 0.025;
        make_maxwell(&p, 2, n, NULL, 0, PYR_DOUBLE, wave ? 1700 : 800, 0.5);
        p.length[0] = 240 * h;
        p.length[1] = 40 * h;
        set_ok(&p, "boundary.kind", "cpml");
        set_ok(&p, "boundary.cpml_cells", "10");
        char line[160];
        snprintf(line, sizeof line, "Ez along +x %s box 40 12 200 28 %s amplitude=0.5", tilt ? "tilt 30 y" : "",
                 wave ? "sine frequency=1 width=3" : "gaussian width=0.6 delay=2.4");
        set_ok(&p, "source.planewave1", line);
        set_ok(&p, "probe.probe1", "Ez 120 20");
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        mx_result_t r;
        memset(&r, 0, sizeof r);
        CHECK_OK(mx_run(&p, &o, NULL, &r));
        double dt = 0;
        CHECK_OK(pyr_problem_time_step(&p, &dt));
        const double d = tilt ? ((120 - 39) * cos(M_PI / 6) + (20 - 11) * 0.5) * h : (120 - 39) * h;
        double worst = 0, top = 0;
        for (int64_t s = 0; s < r.nseries; s++) {
            const double t = (double)(s + 1) * dt, v = r.probes[s];
            if (!wave) {
                const double want = 0.5 * exp(-((t - 2.4 - d) / 0.6) * ((t - 2.4 - d) / 0.6));
                worst = fmax(worst, fabs(v - want));
                top = fmax(top, v);
            } else if (t > d + 3 + 2) {
                top = fmax(top, fabs(v)); /* after the ramp has passed the node */
            }
        }
        CHECK(r.nseries == p.steps, "%lld steps of series", (long long)r.nseries);
        if (!wave) {
            printf("%s pulse: peak %.6g, largest difference from the analytic pulse %.3g\n", tilt ? "tilted" : "", top, worst);
            CHECK(worst <= 0.01 * 0.5 && top > 0.49, "the pulse in the box differs from the analytic plane wave by %.3g (peak %.6g; amplitude 0.5)", worst, top);
        } else {
            printf("%s sine: amplitude %.6g\n", tilt ? "tilted" : "", top);
            CHECK(fabs(top - 0.5) <= 0.01 * 0.5, "the sine's amplitude in the box is %.6g, the plane wave's 0.5", top);
        }
        mx_free(&r);
    }
}

static void compare_plans(const char *label, const pyr_problem_t *p)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU; /* the reference of every backend */
    o.threads = 1;
    o.method = PYR_METHOD_NAIVE;
    mx_result_t ref;
    memset(&ref, 0, sizeof ref);
    CHECK(mx_run(p, &o, NULL, &ref) == PYR_OK, "%s: naive: %s", label, pyr_last_error());
    double peak = 0;
    for (int64_t i = 0; ref.c[2] && i < pyr_field_count(ref.c[2]); i++) peak = fmax(peak, fabs(field_get(ref.c[2], i)));
    for (int64_t i = 0; ref.c[5] && i < pyr_field_count(ref.c[5]); i++) peak = fmax(peak, fabs(field_get(ref.c[5], i)));
    CHECK(peak > 0.1, "%s: the wave did not come in (%.3g)", label, peak);
    const uint64_t grid = (uint64_t)pyr_problem_nodes(p) * sizeof(double);
    struct {
        const char *name;
        int method, height, slots, divide, parts;
    } cases[] = {
        {"naive, passes of 7", PYR_METHOD_NAIVE, 7, 0, 0, 0},  {"pyramid h=3 1 slot", PYR_METHOD_PYRAMID, 3, 1, 2, 0},
        {"pyramid h=5 3 slots", PYR_METHOD_PYRAMID, 5, 3, 3, 0}, {"pyramid h=8 small budget", PYR_METHOD_PYRAMID, 8, 2, 5, 0},
        {"parts 3x2 naive", PYR_METHOD_NAIVE, 0, 0, 0, 1},      {"parts 3x2 pyramid", PYR_METHOD_PYRAMID, 0, 0, 8, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        pyr_options_default(&o);
        o.backend = backend;
        o.threads = 1;
        o.method = cases[c].method;
        if (cases[c].method == PYR_METHOD_PYRAMID) o.decomposition = PYR_DECOMP_BLOCKS;
        o.height = cases[c].height;
        o.slots = cases[c].slots;
        if (cases[c].divide) o.memory = grid / (uint64_t)cases[c].divide;
        if (cases[c].parts) {
            snprintf(o.devices, sizeof o.devices, "0,0,0,0,0,0");
            snprintf(o.partition, sizeof o.partition, "3x2x1");
            o.exchange = 3;
        }
        mx_result_t got;
        memset(&got, 0, sizeof got);
        pyr_status_t st = mx_run(p, &o, NULL, &got);
        for (int tries = 0; st == PYR_ERR_BUDGET && o.memory && tries < 10; tries++) {
            o.memory *= 2;
            mx_free(&got);
            st = mx_run(p, &o, NULL, &got);
        }
        CHECK(st == PYR_OK, "%s: %s: %s", label, cases[c].name, pyr_last_error());
        if (st == PYR_OK) {
            for (int k = 0; k < 6; k++) {
                if (!ref.c[k]) continue;
                const size_t bytes = (size_t)pyr_field_count(ref.c[k]) * pyr_precision_size(p->precision);
                CHECK(got.c[k] && !memcmp(got.c[k]->data, ref.c[k]->data, bytes), "%s: %s: component %d differs from the naive run's", label,
                      cases[c].name, k);
            }
            CHECK(got.nseries == ref.nseries && got.nprobes == ref.nprobes &&
                      !memcmp(got.probes, ref.probes, (size_t)(ref.nseries * ref.nprobes) * sizeof(double)),
                  "%s: %s: the probe series differ from the naive run's", label, cases[c].name);
        }
        mx_free(&got);
    }
    mx_free(&ref);
}

static void check_plans(void)
{
    pyr_problem_t p;
    for (int te = 0; te < 2; te++) {
        const int64_t n[3] = {71, 53, 1};
        const double len[3] = {7.0, 5.2, 1};
        make_maxwell(&p, 2, n, len, te, PYR_DOUBLE, 120, 0.6);
        set_ok(&p, "boundary.kind", "cpml");
        set_ok(&p, "boundary.cpml_cells", "8");
        set_ok(&p, "boundary.faces", "x-,x+,y+");
        set_ok(&p, "source.planewave1", te ? "Ey along +x box 15 12 55 40 ricker frequency=0.6 delay=1.8"
                                           : "Ez along -y box 15 12 55 40 ricker frequency=0.6 delay=1.8");
        set_ok(&p, "source.planewave2", te ? "Ex along -y tilt -20 x box 20 5 50 30 gaussian width=0.5 delay=1.5"
                                           : "Ez along +x tilt 30 y box 20 5 50 30 gaussian width=0.5 delay=1.5");
        set_ok(&p, "material.shape1", "sphere 3.5 2.0 0.5 eps_r=3 sigma=0.1");
        set_ok(&p, "probe.probe1", te ? "Hz 10 10" : "Ez 10 10");
        set_ok(&p, "probe.probe2", te ? "Ey 30 20" : "Ez 30 20");
        compare_plans(te ? "2D TE" : "2D TM", &p);
    }
    const int64_t n3[3] = {29, 23, 19};
    make_maxwell(&p, 3, n3, NULL, 0, PYR_DOUBLE, 40, 0.5);
    set_ok(&p, "boundary.kind", "cpml");
    set_ok(&p, "boundary.cpml_cells", "4");
    set_ok(&p, "boundary.faces", "x-,x+");
    set_ok(&p, "source.planewave1", "Ey along +x box 6 4 4 22 17 14 ricker frequency=4 delay=0.25");
    set_ok(&p, "source.planewave2", "Ez along +y tilt 40 x box 6 4 4 22 17 14 ricker frequency=4 delay=0.25");
    set_ok(&p, "material.shape1", "box 0.45 0.6 0.3 0.55 0.3 0.5 eps_r=4");
    set_ok(&p, "probe.probe1", "Ey 5 11 9");
    compare_plans("3D", &p);
}

static void check_refusals(void)
{
    pyr_problem_t p, q;
    const int64_t n[3] = {71, 53, 1};
    const double len[3] = {7.0, 5.2, 1};
    make_maxwell(&p, 2, n, len, 0, PYR_DOUBLE, 50, 0.6);
    set_ok(&p, "boundary.kind", "cpml");
    set_ok(&p, "boundary.cpml_cells", "8");
    set_ok(&p, "boundary.faces", "x-,x+,y+");
    set_ok(&p, "source.planewave1", "Ez along +x box 15 12 55 40 gaussian width=0.5 delay=1.5");
    CHECK_OK(pyr_problem_validate(&p));
    static const struct {
        const char *line, *needle;
    } bad[] = {
        {"Ez along +x box 8 12 55 40 gaussian width=0.5", "off the CPML"},       /* face on the layer's edge */
        {"Ez along +x box 15 12 62 40 gaussian width=0.5", "use nodes 9 to 61"}, /* into the x+ layer */
        {"Ez along +x box 15 0 55 40 gaussian width=0.5", "grid's edge"},        /* on the PEC wall, E along it */
        {"Ez along +x box 15 12 55 45 gaussian width=0.5", "along y"},           /* into the y+ layer */
        {"Ex along +y box 15 12 55 40 gaussian width=0.5", "use Ez"},            /* TM has no Ex */
        {"Ez along +x box 55 12 15 40 gaussian width=0.5", "I0 < I1"},           /* reversed */
        {"Ez along +x box 15 12 55 40 gaussian width=0", "width > 0"},
        {"Ez along +x box 15 12 55 40 sine", "frequency > 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        q = p;
        set_ok(&q, "source.planewave1", bad[i].line);
        CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, bad[i].needle);
    }
    q = p;
    set_ok(&q, "material.shape1", "box 2.0 3.0 0 5.2 eps_r=2"); /* crosses the y faces */
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "background");
    q = p;
    set_ok(&q, "material.shape1", "box 2.0 3.0 1.5 3.0 eps_r=2"); /* inside: fine */
    CHECK_OK(pyr_problem_validate(&q));
    q = p;
    set_ok(&q, "source.planewave1", "Ez along +z box 15 12 55 40 gaussian width=0.5");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "not an axis");
    /* the TE parallel-plate line: the box on both y walls, E across them */
    make_maxwell(&q, 2, n, len, 1, PYR_DOUBLE, 50, 0.6);
    set_ok(&q, "boundary.kind", "cpml");
    set_ok(&q, "boundary.cpml_cells", "8");
    set_ok(&q, "boundary.faces", "x-,x+");
    set_ok(&q, "source.planewave1", "Ey along +x box 15 0 55 52 gaussian width=0.5 delay=1.5");
    CHECK_OK(pyr_problem_validate(&q));
    set_ok(&q, "source.planewave1", "Ex along +y box 15 0 55 52 gaussian width=0.5 delay=1.5");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "edge");
    /* 3D: E along the direction */
    const int64_t n3[3] = {29, 23, 19};
    make_maxwell(&q, 3, n3, NULL, 0, PYR_DOUBLE, 40, 0.5);
    set_ok(&q, "source.planewave1", "Ex along -x box 6 4 4 22 17 14 gaussian width=0.5");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "transverse");
    set_ok(&q, "source.planewave1", "Hz along -x box 6 4 4 22 17 14 gaussian width=0.5");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "name the incident E");
    /* tilted */
    q = p;
    set_ok(&q, "source.planewave1", "Ez along +x tilt 95 y box 15 12 55 40 gaussian width=0.5");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "between -90 and 90");
    set_ok(&q, "source.planewave1", "Ez along +x tilt 30 x box 15 12 55 40 gaussian width=0.5");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "not another axis");
    set_ok(&q, "source.planewave1", "Ez along +x tilt 30 z box 15 12 55 40 gaussian width=0.5");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "not another axis");
    set_ok(&q, "source.planewave1", "Ez along +x tilt 30 y box 15 12 55 40 sine frequency=40");
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "cut-off");
    set_ok(&q, "source.planewave1", "Ez along +x tilt 30 y box 15 12 55 40 sine frequency=1");
    CHECK_OK(pyr_problem_validate(&q));
    make_maxwell(&q, 2, n, len, 1, PYR_DOUBLE, 50, 0.6);
    set_ok(&q, "boundary.kind", "cpml");
    set_ok(&q, "boundary.cpml_cells", "8");
    set_ok(&q, "boundary.faces", "x-,x+");
    set_ok(&q, "source.planewave1", "Ey along +x tilt 10 y box 15 0 55 52 gaussian width=0.5 delay=1.5"); /* the wall is no longer the wave's */
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "edge");
    /* malformed lines */
    static const struct {
        const char *line, *needle;
    } syntax[] = {
        {"Ez towards +x box 15 12 55 40 gaussian width=0.5", "COMPONENT along"},
        {"Ez along x+ box 15 12 55 40 gaussian width=0.5", "not a direction"},
        {"Ez along +x box 15 12 55 gaussian width=0.5", "I0 J0 I1 J1"},
        {"Ez along +x box 15 12 55 40", "waveform is missing"},
        {"Ez along +x box 15 12 55 40 gaussian speed=2", "unknown option"},
        {"Qz along +x box 15 12 55 40 gaussian width=1", "not a component"},
        {"Ez along +x tilt 30 w box 15 12 55 40 gaussian width=1", "the axis k turns towards"},
        {"Ez along +x tilt up y box 15 12 55 40 gaussian width=1", "not a number"},
    };
    for (size_t i = 0; i < sizeof syntax / sizeof *syntax; i++) {
        q = p;
        CHECK_FAILS(pyr_problem_set(&q, "source.planewave1", syntax[i].line), PYR_ERR_CONFIG, syntax[i].needle);
    }
    CHECK_FAILS(pyr_problem_set(&q, "source.planewave5", "Ez along +x box 15 12 55 40 gaussian width=1"), PYR_ERR_CONFIG, "planewave1 .. planewave4");
}

static void check_round_trip(void)
{
    pyr_problem_t p, q;
    const int64_t n3[3] = {29, 23, 19};
    make_maxwell(&p, 3, n3, NULL, 0, PYR_DOUBLE, 40, 0.5);
    make_maxwell(&q, 3, n3, NULL, 0, PYR_DOUBLE, 40, 0.5);
    set_ok(&p, "source.planewave1", "Ey along -x box 6 4 4 22 17 14 sine frequency=0.3 width=2.5 amplitude=0.1");
    set_ok(&p, "source.planewave2", "Ex along z tilt -12.5 y box 6 4 4 22 17 14 gaussian width=0.7 delay=2");
    char a[1024], b[1024];
    for (int k = 1; k <= 2; k++) {
        char key[32];
        snprintf(key, sizeof key, "source.planewave%d", k);
        CHECK_OK(pyr_problem_get(&p, key, a, sizeof a));
        CHECK_OK(pyr_problem_set(&q, key, a));
        CHECK_OK(pyr_problem_get(&q, key, b, sizeof b));
        CHECK(!strcmp(a, b), "%s: '%s' read back as '%s'", key, a, b);
    }
    CHECK_OK(pyr_problem_get(&p, "source.planewave3", a, sizeof a));
    CHECK(a[0] == 0, "planewave3 (not given) reads '%s'", a);
    CHECK_OK(pyr_problem_get(&p, "source.planewave2", a, sizeof a));
    CHECK(!strcmp(a, "Ex along +z tilt -12.5 y box 6 4 4 22 17 14 gaussian amplitude=1 frequency=0 width=0.69999999999999996 delay=2"),
          "planewave2 reads '%s'", a);
    CHECK(q.maxwell.nplanewaves == 2 && !memcmp(q.maxwell.planewaves, p.maxwell.planewaves, sizeof p.maxwell.planewaves),
          "the plane waves set back from their text differ");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (pyr_gpu_count() < 1) {
            printf("no GPU: skipped\n");
            return 77;
        }
        backend = PYR_BACKEND_CUDA;
    }
    check_refusals();
    check_round_trip();
    check_leakage();
    check_analytic();
    check_plans();
    return check_report();
}
