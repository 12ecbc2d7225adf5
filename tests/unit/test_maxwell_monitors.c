/* Maxwell's frequency-domain monitors (problem keys monitor.dftN and
 * monitor.fluxN, pyr_spectra_*): issue #46 item 3.
 *   - a point monitor's transform equals the DFT the test computes itself from
 *     the caller's probe series at that node (E at (n+1) dt, H at (n+1/2) dt);
 *   - spectra (dft boxes, points, planes and fluxes) are bit-identical under
 *     the naive method, pyramids of several heights, budgets and slots, and
 *     over several parts (naive and pyramid), 2D TM, 2D TE and 3D;
 *   - a flux plane in vacuum between a source and the absorbing layer sees the
 *     same power as a second plane further on;
 *   - the refusals: a monitor off the grid or in the CPML, a frequency above
 *     the Nyquist frequency or below what the run resolves, a component not of
 *     the grid's mode, a flux plane spanning no cell, spectra of another problem;
 *   - pyr_problem_get gives every monitor back as a line that sets the same
 *     monitor (round trip); the CSV of the spectra; output.spectra's suffix.
 * usage: test_maxwell_monitors h5 DIR   writes DIR/r2.h5, r3.h5 (HDF5 results with
 *     the monitors' groups) and r2.csv, r3.csv for test_maxwell_monitors_h5.py.
 * usage: test_maxwell_monitors [cpu|cuda]   (cuda: skipped, 77, without a GPU) */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "maxwell_util.h"
#include "pyrgrid_output.h"
#include "schemes/maxwell.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static pyr_backend_kind_t backend = PYR_BACKEND_CPU;

/* Every monitor's transforms and fluxes of a run of p under o, concatenated. */
typedef struct {
    double *v;
    size_t n;
    int64_t steps;
} spectra_t;

static pyr_status_t run_spectra(const pyr_problem_t *p0, const pyr_options_t *o, spectra_t *out, mx_result_t *r)
{
    memset(out, 0, sizeof *out);
    pyr_problem_t p = *p0;
    pyr_spectra_t *s = NULL;
    PYR_TRY(pyr_spectra_create(&p, &s));
    pyr_status_t st = pyr_spectra_attach(&p, s);
    if (st == PYR_OK) st = mx_run(&p, o, NULL, r);
    for (int m = 0; m < pyr_spectra_count(s) && st == PYR_OK; m++) {
        pyr_monitor_info_t info;
        st = pyr_spectra_info(s, m, &info);
        if (st != PYR_OK) break;
        const size_t k = (size_t)(info.ncomponents * info.nfreq * info.nnodes), add = 2 * k + (info.flux ? (size_t)info.nfreq : 0);
        double *g = realloc(out->v, (out->n + add) * sizeof *g);
        if (!g) {
            st = pyr_fail(PYR_ERR_NOMEM, "test");
            break;
        }
        out->v = g;
        st = pyr_spectra_dft(s, m, g + out->n, g + out->n + k);
        if (st == PYR_OK && info.flux) st = pyr_spectra_flux(s, m, g + out->n + 2 * k);
        out->n += add;
        out->steps = info.steps;
    }
    pyr_spectra_destroy(&s);
    return st;
}

static void compare_plans(const char *label, const pyr_problem_t *p)
{
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU; /* the reference of every backend */
    o.threads = 1;
    o.method = PYR_METHOD_NAIVE;
    spectra_t ref;
    mx_result_t r;
    memset(&r, 0, sizeof r);
    CHECK(run_spectra(p, &o, &ref, &r) == PYR_OK, "%s: naive: %s", label, pyr_last_error());
    mx_free(&r);
    CHECK(ref.n > 0 && ref.steps == p->steps, "%s: the spectra hold %zu values of %lld steps", label, ref.n, (long long)ref.steps);
    double peak = 0;
    for (size_t i = 0; i < ref.n; i++) peak = fmax(peak, fabs(ref.v[i]));
    CHECK(peak > 0, "%s: the monitors saw nothing", label);

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
        spectra_t got;
        memset(&r, 0, sizeof r);
        pyr_status_t st = run_spectra(p, &o, &got, &r);
        for (int tries = 0; st == PYR_ERR_BUDGET && o.memory && tries < 10; tries++) {
            o.memory *= 2;
            mx_free(&r);
            free(got.v);
            st = run_spectra(p, &o, &got, &r);
        }
        mx_free(&r);
        CHECK(st == PYR_OK, "%s: %s: %s", label, cases[c].name, pyr_last_error());
        if (st == PYR_OK) {
            CHECK(got.n == ref.n && got.steps == ref.steps, "%s: %s: %zu values, %lld steps", label, cases[c].name, got.n, (long long)got.steps);
            if (got.n == ref.n) {
                size_t first = got.n;
                for (size_t i = 0; i < got.n && first == got.n; i++)
                    if (memcmp(&got.v[i], &ref.v[i], sizeof(double))) first = i;
                CHECK(first == got.n, "%s: %s: the spectra differ from the naive run's (value %zu: %.17g vs %.17g)", label, cases[c].name, first,
                      first < got.n ? got.v[first] : 0.0, first < got.n ? ref.v[first] : 0.0);
            }
        }
        free(got.v);
    }
    free(ref.v);
}

static void set_ok(pyr_problem_t *p, const char *key, const char *value)
{
    pyr_status_t st = pyr_problem_set(p, key, value);
    CHECK(st == PYR_OK, "set %s = %s: %s", key, value, pyr_last_error());
}

/* 2D: a soft source, CPML on three faces, monitors of every kind. */
static void make_2d(pyr_problem_t *p, int te)
{
    const int64_t n[3] = {71, 53, 1};
    const double len[3] = {7.0, 5.2, 1};
    make_maxwell(p, 2, n, len, te, PYR_DOUBLE, 120, 0.6);
    set_ok(p, "boundary.kind", "cpml");
    set_ok(p, "boundary.cpml_cells", "8");
    set_ok(p, "boundary.faces", "x-,x+,y+");
    set_ok(p, "source.source1", te ? "Hz point 30 20 ricker frequency=0.6 delay=1.8" : "Ez point 30 20 ricker frequency=0.6 delay=1.8");
    set_ok(p, "monitor.dft1", te ? "Ex,Ey,Hz box 20 10 45 35 freqs=0.3,0.55,0.8" : "Ez,Hx,Hy box 20 10 45 35 freqs=0.3,0.55,0.8");
    set_ok(p, "monitor.dft2", te ? "Hz point 40 30 freqs=0.2:0.9:8" : "Ez point 40 30 freqs=0.2:0.9:8");
    set_ok(p, "monitor.dft3", te ? "Ey plane y 25 freqs=0.5" : "Ez plane y 25 freqs=0.5");
    set_ok(p, "monitor.flux1", "plane x 50 freqs=0.2:0.9:15");
    set_ok(p, "monitor.flux2", "plane y 40 12 60 freqs=0.3,0.6");
    set_ok(p, "monitor.flux3", "plane x 15 5 40 freqs=0.4");
}

static void make_3d(pyr_problem_t *p)
{
    const int64_t n[3] = {29, 23, 19};
    make_maxwell(p, 3, n, NULL, 0, PYR_DOUBLE, 40, 0.5);
    set_ok(p, "boundary.kind", "cpml");
    set_ok(p, "boundary.cpml_cells", "4");
    set_ok(p, "boundary.faces", "x-,x+");
    set_ok(p, "source.source1", "Ey point 12 11 9 ricker frequency=4 delay=0.25");
    set_ok(p, "monitor.dft1", "Ex,Hz box 10 8 6 16 14 12 freqs=2,4,6");
    set_ok(p, "monitor.flux1", "plane x 18 freqs=2:8:4");
    set_ok(p, "monitor.flux2", "plane z 13 6 20 3 18 freqs=3,5");
}

/* A point monitor against the DFT of the probe series at its node. */
static void check_against_probes(int te)
{
    pyr_problem_t p;
    make_2d(&p, te);
    set_ok(&p, "probe.probe1", te ? "Hz 40 30" : "Ez 40 30");
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_NAIVE;
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(&p, &s));
    CHECK_OK(pyr_spectra_attach(&p, s));
    mx_result_t r;
    memset(&r, 0, sizeof r);
    CHECK_OK(mx_run(&p, &o, NULL, &r));
    double dt = 0;
    CHECK_OK(pyr_problem_time_step(&p, &dt));
    pyr_monitor_info_t info;
    CHECK_OK(pyr_spectra_info(s, 1, &info));
    CHECK(!strcmp(info.name, "dft2") && info.nfreq == 8 && info.nnodes == 1 && info.ncomponents == 1, "dft2's info: %s %d %lld %d", info.name,
          info.nfreq, (long long)info.nnodes, info.ncomponents);
    double freqs[8], re[8], im[8];
    CHECK_OK(pyr_spectra_freqs(s, 1, freqs));
    CHECK_OK(pyr_spectra_dft(s, 1, re, im));
    const double shift = te ? 0.5 : 1.0; /* Hz at (n + 1/2) dt, Ez at (n + 1) dt */
    double worst = 0, scale = 0;
    for (int f = 0; f < 8 && r.nseries == p.steps; f++) {
        CHECK(fabs(freqs[f] - (0.2 + 0.1 * f)) < 1e-12, "frequency %d is %.17g", f, freqs[f]);
        double complex want = 0;
        for (int64_t n = 0; n < p.steps; n++) want += r.probes[n] * cexp(-2.0 * I * M_PI * freqs[f] * ((double)n + shift) * dt) * dt;
        worst = fmax(worst, cabs(want - (re[f] + I * im[f])));
        scale = fmax(scale, cabs(want));
    }
    CHECK(scale > 0 && worst <= 1e-12 * scale, "%s: the point monitor's transform is %.3g off the probe series' DFT (of %.3g)", te ? "TE" : "TM",
          worst, scale);
    mx_free(&r);
    pyr_spectra_destroy(&s);
}

/* A pulse's power through two planes of vacuum before the absorbing layer: the same. */
static void check_flux_conserved(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {301, 5, 1};
    const double len[3] = {15.0, 0.2, 1};
    make_maxwell(&p, 2, n, len, 1, PYR_DOUBLE, 1400, 0.5);
    set_ok(&p, "boundary.kind", "cpml");
    set_ok(&p, "boundary.cpml_cells", "20");
    set_ok(&p, "boundary.faces", "x-,x+");
    set_ok(&p, "source.source1", "Ey line 40 0 40 3 gaussian width=1.5 delay=6");
    set_ok(&p, "monitor.flux1", "plane x 80 freqs=0.1:0.5:5");
    set_ok(&p, "monitor.flux2", "plane x 250 freqs=0.1:0.5:5");
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(&p, &s));
    CHECK_OK(pyr_spectra_attach(&p, s));
    mx_result_t r;
    memset(&r, 0, sizeof r);
    CHECK_OK(mx_run(&p, &o, NULL, &r));
    double a[5], b[5];
    CHECK_OK(pyr_spectra_flux(s, 0, a));
    CHECK_OK(pyr_spectra_flux(s, 1, b));
    for (int f = 0; f < 3; f++)
        CHECK(a[f] > 0 && fabs(a[f] - b[f]) <= 1e-4 * a[f], "f = %.1f: %.9g through the first plane, %.9g through the second", 0.1 + 0.1 * f, a[f], b[f]);
    CHECK_FAILS(pyr_spectra_flux(s, 2, a), PYR_ERR_ARG, "monitor 2");
    mx_free(&r);
    pyr_spectra_destroy(&s);
}

static void check_refusals(void)
{
    pyr_problem_t p, q;
    make_2d(&p, 0);
    CHECK_OK(pyr_problem_validate(&p));
    double dt = 0;
    CHECK_OK(pyr_problem_time_step(&p, &dt));
    char text[256];
    struct {
        const char *key, *value, *needle;
        pyr_status_t st;
    } bad[] = {
        {"monitor.dft4", "Ez point 75 20 freqs=0.5", "outside the grid", PYR_ERR_CONFIG},
        {"monitor.dft4", "Ez point 3 20 freqs=0.5", "CPML", PYR_ERR_CONFIG},
        {"monitor.dft4", "Ez box 20 10 45 50 freqs=0.5", "CPML", PYR_ERR_CONFIG},
        {"monitor.flux4", "plane x 62 freqs=0.5", "CPML", PYR_ERR_CONFIG},
        {"monitor.flux4", "plane x 8 freqs=0.5", "CPML", PYR_ERR_CONFIG},
        {"monitor.flux4", "plane y 30 20 20 freqs=0.5", "no cell", PYR_ERR_CONFIG},
        {"monitor.flux4", "plane z 3 freqs=0.5", "2D grid", PYR_ERR_CONFIG},
        {"monitor.dft4", "Hz point 30 30 freqs=0.5", "not one of this grid's", PYR_ERR_CONFIG},
        {"monitor.dft4", "Ez point 30 30 freqs=0.5,20", "Nyquist", PYR_ERR_CONFIG},
        {"monitor.dft4", "Ez point 30 30 freqs=0.001:0.5:3", "more steps", PYR_ERR_CONFIG},
        {"monitor.dft4", "Ez point 30 30 freqs=0.5:0.3:3", "fmin < fmax", PYR_ERR_CONFIG},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        q = p;
        pyr_status_t st = pyr_problem_set(&q, bad[i].key, bad[i].value);
        if (st == PYR_OK) st = pyr_problem_validate(&q);
        CHECK(st == bad[i].st && strstr(pyr_last_error(), bad[i].needle), "%s = %s: %s (%s), expected '%s'", bad[i].key, bad[i].value,
              pyr_status_name(st), pyr_last_error(), bad[i].needle);
    }
    /* the limits of the frequencies themselves are allowed */
    q = p;
    snprintf(text, sizeof text, "Ez point 30 30 freqs=%.17g,%.17g", 1.0 / ((double)q.steps * dt), 1.0 / (2.0 * dt));
    CHECK_OK(pyr_problem_set(&q, "monitor.dft4", text));
    CHECK_OK(pyr_problem_validate(&q));
    /* the syntax */
    q = p;
    CHECK_FAILS(pyr_problem_set(&q, "monitor.dft4", "Ez point 30 30"), PYR_ERR_CONFIG, "freqs=");
    CHECK_FAILS(pyr_problem_set(&q, "monitor.dft4", "Ez ball 30 30 freqs=1"), PYR_ERR_CONFIG, "not a region");
    CHECK_FAILS(pyr_problem_set(&q, "monitor.dft4", "Ez,Qx point 30 30 freqs=1"), PYR_ERR_CONFIG, "not a component");
    CHECK_FAILS(pyr_problem_set(&q, "monitor.flux4", "box 1 1 3 3 freqs=1"), PYR_ERR_CONFIG, "not a region");
    CHECK_FAILS(pyr_problem_set(&q, "monitor.flux4", "plane x 30 freqs=1:2"), PYR_ERR_CONFIG, "FMIN:FMAX:N");
    CHECK_FAILS(pyr_problem_set(&q, "monitor.dft9", "Ez point 30 30 freqs=1"), PYR_ERR_CONFIG, "dft1 .. dft8");
    /* spectra belong to the problem they were made for */
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(&p, &s));
    q = p;
    q.steps += 1;
    CHECK_FAILS(pyr_spectra_attach(&q, s), PYR_ERR_ARG, "pyr_spectra_create");
    q = p;
    CHECK_OK(pyr_problem_set(&q, "monitor.flux1", "plane x 51 freqs=0.2:0.9:15"));
    CHECK_FAILS(pyr_spectra_attach(&q, s), PYR_ERR_ARG, "another");
    CHECK_OK(pyr_spectra_attach(&p, s));
    CHECK_FAILS(pyr_spectra_info(s, 6, &(pyr_monitor_info_t){0}), PYR_ERR_ARG, "0 .. 5");
    pyr_spectra_destroy(&s);
    pyr_problem_default(&q);
    CHECK_FAILS(pyr_spectra_create(&q, &s), PYR_ERR_ARG, "Maxwell");
}

static void check_round_trip(void)
{
    const char *keys[] = {"monitor.dft1", "monitor.dft2", "monitor.dft3", "monitor.flux1", "monitor.flux2", "monitor.flux3"};
    pyr_problem_t p, q;
    make_2d(&p, 0);
    CHECK_OK(pyr_problem_set(&p, "monitor.flux2", "plane y 40 12 60 freqs=0.1,0.30000000000000004,0.6"));
    make_maxwell(&q, 2, p.n, p.length, 0, PYR_DOUBLE, 120, 0.6);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char a[4096], b[4096];
        CHECK_OK(pyr_problem_get(&p, keys[i], a, sizeof a));
        CHECK_OK(pyr_problem_set(&q, keys[i], a));
        CHECK_OK(pyr_problem_get(&q, keys[i], b, sizeof b));
        CHECK(!strcmp(a, b), "%s: '%s' read back as '%s'", keys[i], a, b);
    }
    char a[256];
    CHECK_OK(pyr_problem_get(&p, "monitor.dft2", a, sizeof a));
    CHECK(!strcmp(a, "Ez point 40 30 freqs=0.20000000000000001:0.90000000000000002:8"), "dft2 reads '%s'", a);
    CHECK_OK(pyr_problem_get(&p, "monitor.flux1", a, sizeof a));
    CHECK(!strcmp(a, "plane x 50 freqs=0.20000000000000001:0.90000000000000002:15"), "flux1 reads '%s'", a);
    CHECK_OK(pyr_problem_get(&p, "monitor.dft5", a, sizeof a));
    CHECK(a[0] == 0, "dft5 (not given) reads '%s'", a);
    CHECK(q.maxwell.ndft == p.maxwell.ndft && q.maxwell.nflux == p.maxwell.nflux && !memcmp(q.maxwell.dft, p.maxwell.dft, sizeof p.maxwell.dft) &&
              !memcmp(q.maxwell.flux, p.maxwell.flux, sizeof p.maxwell.flux),
          "the monitors set back from their text differ");
}

static void check_csv(void)
{
    pyr_problem_t p;
    make_2d(&p, 1);
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(&p, &s));
    CHECK_OK(pyr_spectra_attach(&p, s));
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    mx_result_t r;
    memset(&r, 0, sizeof r);
    CHECK_OK(mx_run(&p, &o, NULL, &r));
    mx_free(&r);
    char path[] = "/tmp/pyr_spectra_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) close(fd);
    CHECK_OK(pyr_spectra_write_csv(s, path));
    FILE *f = fopen(path, "r");
    char line[512];
    int lines = 0, flux1 = 0, dft2 = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (lines++ == 0) CHECK(!strcmp(line, "monitor,frequency,flux,re,im\n"), "the CSV's header is '%s'", line);
        flux1 += !strncmp(line, "flux1,", 6);
        dft2 += !strncmp(line, "dft2.Hz,", 8);
    }
    if (f) fclose(f);
    /* flux1 15, flux2 2, flux3 1, dft2 (a point) 8; the box and the plane are not in the CSV */
    CHECK(lines == 1 + 15 + 2 + 1 + 8 && flux1 == 15 && dft2 == 8, "the CSV has %d lines, %d of flux1, %d of dft2", lines, flux1, dft2);
    remove(path);
    pyr_spectra_destroy(&s);
}

/* The HDF5 result of a run with spectra attached, and the spectra as CSV,
 * into DIR/rDIMS.h5 and DIR/rDIMS.csv (test_maxwell_monitors_h5.py compares
 * them with h5py). */
static void write_h5(const char *dir, int dims)
{
    pyr_problem_t p;
    if (dims == 3) make_3d(&p);
    else make_2d(&p, 0);
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(&p, &s));
    CHECK_OK(pyr_spectra_attach(&p, s));
    char file[512], csv[512];
    snprintf(file, sizeof file, "%s/r%d.h5", dir, dims);
    snprintf(csv, sizeof csv, "%s/r%d.csv", dir, dims);
    pyr_problem_outputs_t out;
    memset(&out, 0, sizeof out);
    out.field = file;
    out.end_step = p.steps;
    out.image_component = -1;
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create(&p, &o, &plan));
    pyr_field_t *fields[MX_FIELDS] = {NULL};
    for (int c = 0; c < 6; c++)
        if (mx_used(&p, c)) {
            CHECK_OK(pyr_field_create(&p, &fields[c]));
            CHECK_OK(pyr_field_init_state(fields[c], &p, c));
        }
    pyr_result_t *res = NULL;
    CHECK_OK(pyr_result_open(&res, &p, &out, plan, fields, MX_FIELDS));
    pyr_run_info_t run;
    CHECK_OK(pyr_execute_fields(plan, fields, MX_FIELDS, NULL, &run));
    CHECK_OK(pyr_result_final(res, &run));
    pyr_result_abort(&res);
    CHECK_OK(pyr_spectra_write_csv(s, csv));
    for (int c = 0; c < 6; c++) pyr_field_destroy(&fields[c]);
    pyr_plan_destroy(&plan);
    pyr_spectra_destroy(&s);
}

static void check_names(void)
{
    pyr_problem_t p;
    make_2d(&p, 0);
    pyr_problem_outputs_t out;
    memset(&out, 0, sizeof out);
    out.spectra = "spectra.txt";
    CHECK_FAILS(pyr_result_check_names(&p, &out), PYR_ERR_CONFIG, ".csv");
    out.spectra = "spectra.csv";
    CHECK_OK(pyr_result_check_names(&p, &out));
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "h5")) {
        write_h5(argv[2], 2);
        write_h5(argv[2], 3);
        return check_report();
    }
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (pyr_gpu_count() < 1) {
            printf("no GPU: skipped\n");
            return 77;
        }
        backend = PYR_BACKEND_CUDA;
    }
    check_refusals();
    check_round_trip();
    check_against_probes(0);
    check_against_probes(1);
    check_flux_conserved();
    check_csv();
    check_names();
    pyr_problem_t p;
    make_2d(&p, 0);
    compare_plans("2D TM", &p);
    make_2d(&p, 1);
    compare_plans("2D TE", &p);
    make_3d(&p);
    compare_plans("3D", &p);
    return check_report();
}
