/* Maxwell's sources, probes, plane-wave boxes and monitors placed in physical
 * coordinates (`at X Y [Z]`), issue #46 item 6:
 *   - the same problem as by node indices: the parsed structs are equal, and a
 *     run's fields, probe series and spectra are the same bits (2D TM with a
 *     point source, probes, dft and flux monitors; 2D TE with a line source and
 *     a plane wave's box; 3D with H components, staggered along two axes);
 *   - the rounding rule: the nearest of the component's Yee positions
 *     (i + s/2) h, half-way goes to the upper one (also for decimals whose
 *     double lies a bit below the half), a staggered component's first and
 *     last half-cells to its first and last position;
 *   - refusals: off the grid, the wrong count of numbers for the grid's
 *     dims, corners given backwards, an axis with one node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "maxwell_util.h"

static void set_ok(pyr_problem_t *p, const char *key, const char *value)
{
    pyr_status_t st = pyr_problem_set(p, key, value);
    CHECK(st == PYR_OK, "set %s = %s: %s", key, value, pyr_last_error());
}

static void base(pyr_problem_t *p, const char *mode, int dims)
{
    pyr_problem_default(p);
    set_ok(p, "scheme.equation", "maxwell");
    set_ok(p, "grid.dims", dims == 3 ? "3" : "2");
    set_ok(p, "grid.nx", dims == 3 ? "17" : "41");
    set_ok(p, "grid.ny", dims == 3 ? "15" : "31");
    set_ok(p, "grid.lx", dims == 3 ? "0.8" : "2");   /* h = 0.05 */
    set_ok(p, "grid.ly", dims == 3 ? "0.7" : "1.5"); /* h = 0.05 */
    if (dims == 3) {
        set_ok(p, "grid.nz", "13");
        set_ok(p, "grid.lz", "0.6");
    }
    if (mode) set_ok(p, "scheme.mode", mode);
    set_ok(p, "scheme.steps", dims == 3 ? "40" : "120");
    set_ok(p, "scheme.courant", "0.5");
    set_ok(p, "scheme.precision", "double");
    set_ok(p, "boundary.kind", "cpml");
    set_ok(p, "boundary.cpml_cells", dims == 3 ? "3" : "5");
}

/* Runs p on the CPU (naive) with spectra attached: fields, probes, every monitor's sums and fluxes. */
typedef struct {
    mx_result_t r;
    double *sums;
    size_t nsums;
} run_t;

static void run(pyr_problem_t *p, run_t *out)
{
    memset(out, 0, sizeof *out);
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(p, &s));
    CHECK_OK(pyr_spectra_attach(p, s));
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.method = PYR_METHOD_NAIVE;
    CHECK(mx_run(p, &o, NULL, &out->r) == PYR_OK, "run: %s", pyr_last_error());
    const int nm = pyr_spectra_count(s);
    for (int m = 0; m < nm; m++) {
        pyr_monitor_info_t info;
        CHECK_OK(pyr_spectra_info(s, m, &info));
        const size_t n = (size_t)info.ncomponents * (size_t)info.nfreq * (size_t)info.nnodes;
        out->sums = realloc(out->sums, (out->nsums + 2 * n + (size_t)info.nfreq) * sizeof(double));
        double *at = out->sums + out->nsums;
        CHECK_OK(pyr_spectra_dft(s, m, at, at + n));
        if (info.flux) CHECK_OK(pyr_spectra_flux(s, m, at + 2 * n));
        else memset(at + 2 * n, 0, (size_t)info.nfreq * sizeof(double));
        out->nsums += 2 * n + (size_t)info.nfreq;
    }
    CHECK(nm > 0 ? out->nsums > 0 : 1, "no sums");
    pyr_spectra_attach(p, NULL);
    pyr_spectra_destroy(&s);
}

static void same_bits(const char *label, pyr_problem_t *a, pyr_problem_t *b)
{
    const pyr_maxwell_params_t *x = &a->maxwell, *y = &b->maxwell;
    CHECK(x->nsources == y->nsources && !memcmp(x->sources, y->sources, sizeof x->sources), "%s: the sources differ", label);
    CHECK(x->nprobes == y->nprobes && !memcmp(x->probes, y->probes, sizeof x->probes), "%s: the probes differ", label);
    CHECK(x->ndft == y->ndft && !memcmp(x->dft, y->dft, sizeof x->dft), "%s: the dft monitors differ", label);
    CHECK(x->nflux == y->nflux && !memcmp(x->flux, y->flux, sizeof x->flux), "%s: the flux monitors differ", label);
    CHECK(x->nplanewaves == y->nplanewaves && !memcmp(x->planewaves, y->planewaves, sizeof x->planewaves), "%s: the plane waves differ", label);
    run_t ra, rb;
    run(a, &ra);
    run(b, &rb);
    for (int c = 0; c < 6; c++) {
        if (!ra.r.c[c]) continue;
        const size_t bytes = (size_t)pyr_field_count(ra.r.c[c]) * sizeof(double);
        CHECK(rb.r.c[c] && !memcmp(ra.r.c[c]->data, rb.r.c[c]->data, bytes), "%s: component %d differs", label, c);
    }
    double peak = 0;
    for (int64_t i = 0; i < ra.r.nseries * ra.r.nprobes; i++) peak = fmax(peak, fabs(ra.r.probes[i]));
    CHECK(peak > 0, "%s: the probes saw nothing", label);
    CHECK(ra.r.nseries == rb.r.nseries && ra.r.nprobes == rb.r.nprobes &&
              !memcmp(ra.r.probes, rb.r.probes, (size_t)(ra.r.nseries * ra.r.nprobes) * sizeof(double)),
          "%s: the probe series differ", label);
    CHECK(ra.nsums == rb.nsums && !memcmp(ra.sums, rb.sums, ra.nsums * sizeof(double)), "%s: the spectra differ", label);
    mx_free(&ra.r);
    mx_free(&rb.r);
    free(ra.sums);
    free(rb.sums);
}

static void check_same_as_indices(void)
{
    pyr_problem_t a, b;
    /* 2D TM: Ez sits on the nodes in x and y; Hy half a cell along x */
    base(&a, "tm", 2);
    base(&b, "tm", 2);
    set_ok(&a, "source.source1", "Ez point 20 15 gaussian width=0.1 delay=0.4");
    set_ok(&b, "source.source1", "Ez point at 1.0 0.75 gaussian width=0.1 delay=0.4");
    set_ok(&a, "source.source2", "Ez point 12 9 gaussian width=0.1 delay=0.5");
    set_ok(&b, "source.source2", "Ez at 0.6 0.45 gaussian width=0.1 delay=0.5");
    set_ok(&a, "probe.probe1", "Ez 30 15");
    set_ok(&b, "probe.probe1", "Ez at 1.5 0.75");
    set_ok(&a, "probe.probe2", "Hy 25 20");
    set_ok(&b, "probe.probe2", "Hy at 1.275 1.0"); /* x = (25 + 1/2) h */
    set_ok(&a, "monitor.dft1", "Hy point 25 20 freqs=0.5,1");
    set_ok(&b, "monitor.dft1", "Hy point at 1.27 1.01 freqs=0.5,1");
    set_ok(&a, "monitor.dft2", "Ez,Hx box 8 6 30 24 freqs=0.7");
    set_ok(&b, "monitor.dft2", "Ez,Hx box at 0.4 0.3 1.5 1.2 freqs=0.7");
    set_ok(&a, "monitor.flux1", "plane x 32 freqs=0.5:1.2:7");
    set_ok(&b, "monitor.flux1", "plane x at 1.6 freqs=0.5:1.2:7");
    set_ok(&a, "monitor.flux2", "plane y 22 8 33 freqs=0.5");
    set_ok(&b, "monitor.flux2", "plane y at 1.1 0.4 1.65 freqs=0.5");
    same_bits("2D TM", &a, &b);

    /* 2D TE: a line source of Ey (half a cell along y), a plane wave's box of nodes */
    base(&a, "te", 2);
    base(&b, "te", 2);
    set_ok(&a, "material.shape1", "sphere 1 0.75 0.15 eps_r=3");
    set_ok(&b, "material.shape1", "sphere 1 0.75 0.15 eps_r=3");
    set_ok(&a, "source.planewave1", "Ey along +x box 10 8 30 22 gaussian width=0.1 delay=0.4");
    set_ok(&b, "source.planewave1", "Ey along +x box at 0.5 0.4 1.5 1.1 gaussian width=0.1 delay=0.4");
    set_ok(&a, "source.source1", "Ey line 6 8 6 20 gaussian width=0.1 delay=0.6 amplitude=0.5");
    set_ok(&b, "source.source1", "Ey line at 0.3 0.425 0.3 1.025 gaussian width=0.1 delay=0.6 amplitude=0.5");
    set_ok(&a, "probe.probe1", "Hz 33 15");
    set_ok(&b, "probe.probe1", "Hz at 1.675 0.775");
    set_ok(&a, "monitor.flux1", "plane x 33 freqs=0.5,0.9");
    set_ok(&b, "monitor.flux1", "plane x at 1.65 freqs=0.5,0.9");
    same_bits("2D TE", &a, &b);

    /* 3D: Hx is half a cell along y and z, Ex along x */
    base(&a, NULL, 3);
    base(&b, NULL, 3);
    set_ok(&a, "source.source1", "Ez point 8 7 6 gaussian width=0.1 delay=0.4");
    set_ok(&b, "source.source1", "Ez point at 0.4 0.35 0.325 gaussian width=0.1 delay=0.4");
    set_ok(&a, "probe.probe1", "Hx 10 7 8");
    set_ok(&b, "probe.probe1", "Hx at 0.5 0.375 0.425");
    set_ok(&a, "probe.probe2", "Ex 10 9 7");
    set_ok(&b, "probe.probe2", "Ex at 0.525 0.45 0.35");
    set_ok(&a, "monitor.flux1", "plane z 6 4 10 4 9 freqs=2");
    set_ok(&b, "monitor.flux1", "plane z at 0.3 0.2 0.5 0.2 0.45 freqs=2");
    same_bits("3D", &a, &b);
}

/* The node a probe of `comp` at (x, y) lands on along x. */
static int64_t probe_x(pyr_problem_t *p, const char *comp, const char *x)
{
    char v[128];
    snprintf(v, sizeof v, "%s at %s 0.5", comp, x);
    pyr_status_t st = pyr_problem_set(p, "probe.probe1", v);
    CHECK(st == PYR_OK, "probe %s: %s", v, pyr_last_error());
    return st == PYR_OK ? p->maxwell.probes[0].node[0] : -1;
}

static void check_rounding(void)
{
    pyr_problem_t p;
    base(&p, "tm", 2); /* h = 0.05, nodes 0 .. 40, x = 0 .. 2 */
    struct {
        const char *comp, *x;
        int64_t want;
    } cases[] = {
        {"Ez", "0.1", 2},    {"Ez", "0.124", 2},  {"Ez", "0.125", 3}, /* half-way (2.5 cells): the upper node */
        {"Ez", "0.126", 3},  {"Ez", "0.175", 4},                      /* 0.175 / 0.05 is 3.4999999999999996 in doubles: still the upper */
        {"Ez", "0", 0},      {"Ez", "2", 40},     {"Ez", "1.999", 40}, {"Ez", "0.02499", 0},
        {"Hy", "0.025", 0},  {"Hy", "0.075", 1},  {"Hy", "0.1", 2},    /* Hy at (i + 1/2) h: 0.1 is half-way between 1 and 2 */
        {"Hy", "0.099", 1},  {"Hy", "0", 0},      {"Hy", "2", 39},     /* the first and last half-cells: positions 0 and n - 2 */
        {"Hx", "0.125", 3},  {"Hx", "0.1", 2},                         /* Hx is on the nodes along x */
        {"Ez", "-1e-12", 0}, {"Ez", "2.00000000001", 40},              /* within 1e-9 of a cell of the ends */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const int64_t got = probe_x(&p, cases[i].comp, cases[i].x);
        CHECK(got == cases[i].want, "%s at x = %s: node %lld, expected %lld", cases[i].comp, cases[i].x, (long long)got, (long long)cases[i].want);
    }
    /* the same rule for the regions (the nodes) */
    set_ok(&p, "monitor.flux1", "plane x at 0.125 freqs=1");
    CHECK(p.maxwell.flux[0].lo[0] == 3, "flux plane at x = 0.125: node %lld, expected 3", (long long)p.maxwell.flux[0].lo[0]);
    set_ok(&p, "monitor.dft1", "Ez,Hy point at 0.1 0.125 freqs=1"); /* several components: the nodes */
    CHECK(p.maxwell.dft[0].lo[0] == 2 && p.maxwell.dft[0].lo[1] == 3, "dft point of two components: node %lld %lld, expected 2 3",
          (long long)p.maxwell.dft[0].lo[0], (long long)p.maxwell.dft[0].lo[1]);
    set_ok(&p, "monitor.dft1", "Hy point at 0.1 0.125 freqs=1"); /* one: its own position (half along x) */
    CHECK(p.maxwell.dft[0].lo[0] == 2 && p.maxwell.dft[0].lo[1] == 3, "dft point of Hy: node %lld %lld, expected 2 3",
          (long long)p.maxwell.dft[0].lo[0], (long long)p.maxwell.dft[0].lo[1]);
    set_ok(&p, "monitor.dft1", "Hy point at 0.075 0.125 freqs=1");
    CHECK(p.maxwell.dft[0].lo[0] == 1, "dft point of Hy at x = 0.075: node %lld, expected 1", (long long)p.maxwell.dft[0].lo[0]);
}

static void check_refusals(void)
{
    pyr_problem_t p;
    base(&p, "tm", 2);
    struct {
        const char *key, *value, *needle;
    } bad[] = {
        {"probe.probe1", "Ez at 2.01 0.5", "off the grid"},
        {"probe.probe1", "Ez at -0.01 0.5", "off the grid"},
        {"probe.probe1", "Ez at 0.5 1.6", "spans y = 0 .. 1.5"},
        {"probe.probe1", "Ez at 0.5", "takes X Y on this 2D grid"},
        {"probe.probe1", "Ez at 0.5 0.5 0.5", "takes X Y on this 2D grid"},
        {"probe.probe1", "Ez at 0.5 zero", "COMPONENT at X Y"},
        {"source.source1", "Ez at 3 0.5 gaussian width=1", "off the grid"},
        {"source.source1", "Ez point at 0.5 gaussian width=1", "takes X Y on this 2D grid"},
        {"source.source1", "Ez line at 0.5 0.5 0.5 gaussian width=1", "takes X0 Y0 X1 Y1"},
        {"source.source1", "Ez line at 0.5 0.9 0.5 0.2 gaussian width=1", "backwards"},
        {"source.source1", "Ez at nan 0.5 gaussian width=1", "not a finite number"},
        {"source.planewave1", "Ez along +x box at 0.5 0.5 2.5 1 gaussian width=1", "off the grid"},
        {"monitor.flux1", "plane x at 2.5 freqs=1", "off the grid"},
        {"monitor.flux1", "plane x at 1 0.2 freqs=1", "LO HI along each other axis"},
        {"monitor.dft1", "Ez box at 0.1 0.1 0.5 1.7 freqs=1", "off the grid"},
        {"monitor.dft1", "Ez point at 0.1 freqs=1", "takes X Y"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pyr_problem_t q = p;
        CHECK_FAILS(pyr_problem_set(&q, bad[i].key, bad[i].value), PYR_ERR_CONFIG, bad[i].needle);
    }
    /* an axis of one node has no positions */
    pyr_problem_t q = p;
    set_ok(&q, "grid.ny", "1");
    CHECK_FAILS(pyr_problem_set(&q, "probe.probe1", "Ez at 0.5 0"), PYR_ERR_CONFIG, "write node indices");
}

int main(void)
{
    check_same_as_indices();
    check_rounding();
    check_refusals();
    return check_report();
}
