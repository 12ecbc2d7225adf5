/* Maxwell's near-to-far-field transform (pyr_spectra_farfield): issue #46 item 4.
 * Independent references, not pyrgrid against itself:
 *   - 3D: a point dipole (an Ez point source, a Ricker pulse) inside a box of six flux
 *     monitors: the far-field power pattern, normalised, is sin^2(theta) to 2%, and the
 *     power it radiates, integrated over the sphere, is the flux out of the box (the six
 *     monitors' own P(f)) to 2%; the fields at r are transverse plane-wave fields whose
 *     |E|^2 / eta r^2 is the power per solid angle;
 *   - 2D TM and TE: a line source's pattern is isotropic to 2%, its integral the flux;
 *   - the far field is the same bits under the naive method, pyramids and parts;
 *   - the refusals: a surface not closed, not of flux monitors, of the wrong count,
 *     theta on a 2D grid, spectra of another problem or before a run.
 * usage: test_maxwell_farfield cpu|cuda [quick|3d]   (quick: the refusals, plans and 2D;
 *     3d: the dipole; neither: all; cuda: skipped, 77, without a GPU) */
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
    CHECK(st == PYR_OK, "%s = %s: %s", key, value, pyr_last_error());
}

/* A box of flux monitors flux1 .. flux(2 dims) around nodes lo .. hi (each axis). */
static void set_box(pyr_problem_t *p, int lo, int hi, const char *freqs)
{
    char key[32], value[160];
    int m = 1;
    for (int a = 0; a < p->dims; a++)
        for (int side = 0; side < 2; side++, m++) {
            int len = snprintf(value, sizeof value, "plane %c %d", "xyz"[a], side ? hi : lo);
            for (int b = 0; b < p->dims; b++)
                if (b != a) len += snprintf(value + len, sizeof value - (size_t)len, " %d %d", lo, hi);
            snprintf(value + len, sizeof value - (size_t)len, " freqs=%s", freqs);
            snprintf(key, sizeof key, "monitor.flux%d", m);
            set_ok(p, key, value);
        }
}

static pyr_status_t run(pyr_problem_t *p, const pyr_options_t *o, pyr_spectra_t **s)
{
    PYR_TRY(pyr_spectra_create(p, s));
    PYR_TRY(pyr_spectra_attach(p, *s));
    mx_result_t r;
    memset(&r, 0, sizeof r);
    pyr_status_t st = mx_run(p, o, NULL, &r);
    mx_free(&r);
    pyr_spectra_attach(p, NULL);
    return st;
}

/* The flux out of the box: the faces' P(f) with their outward signs. */
static void box_flux(const pyr_spectra_t *s, int dims, int nfreq, double *out)
{
    double *pw = malloc((size_t)nfreq * sizeof *pw);
    for (int f = 0; f < nfreq; f++) out[f] = 0;
    for (int m = 0; m < 2 * dims; m++) {
        CHECK_OK(pyr_spectra_flux(s, m, pw));
        for (int f = 0; f < nfreq; f++) out[f] += (m % 2 ? 1.0 : -1.0) * pw[f];
    }
    free(pw);
}

static const int surface3[6] = {0, 1, 2, 3, 4, 5}, surface2[4] = {0, 1, 2, 3};

/* Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n). */
static void gauss_legendre(int n, double *x, double *w)
{
    for (int i = 0; i < n; i++) {
        double z = cos(M_PI * (i + 0.75) / (n + 0.5)), dp = 1;
        for (int it = 0; it < 100; it++) {
            double p0 = 1, p1 = z;
            for (int k = 2; k <= n; k++) {
                const double p2 = ((2.0 * k - 1) * z * p1 - (k - 1.0) * p0) / k;
                p0 = p1;
                p1 = p2;
            }
            dp = n * (z * p1 - p0) / (z * z - 1);
            const double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) < 1e-15) break;
        }
        x[i] = z;
        w[i] = 2.0 / ((1 - z * z) * dp * dp);
    }
}

static void check_dipole_3d(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {61, 61, 61};
    const double len[3] = {3, 3, 3};
    make_maxwell(&p, 3, n, len, 0, PYR_DOUBLE, 300, 0.9);
    set_ok(&p, "boundary.kind", "cpml");
    set_ok(&p, "boundary.cpml_cells", "10");
    set_ok(&p, "source.source1", "Ez point 30 30 30 ricker frequency=0.8 delay=2");
    enum { NF = 3 };
    const double fr[NF] = {0.5, 0.65, 0.8}; /* 25 to 40 cells per wavelength */
    set_box(&p, 15, 45, "0.5,0.65,0.8");
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    pyr_spectra_t *s = NULL;
    CHECK_OK(run(&p, &o, &s));
    if (!s) return;

    /* the pattern in the plane phi = 0.3 from theta = 0 to pi */
    enum { NT = 37 };
    double theta[NT], phi[NT], u[NF * NT];
    for (int d = 0; d < NT; d++) theta[d] = M_PI * d / (NT - 1), phi[d] = 0.3;
    CHECK_OK(pyr_spectra_farfield(&p, s, 6, surface3, NT, theta, phi, 0, u, NULL, NULL));
    for (int f = 0; f < NF; f++) {
        double peak = 0, worst = 0;
        for (int d = 0; d < NT; d++) peak = fmax(peak, u[f * NT + d]);
        for (int d = 0; d < NT; d++) worst = fmax(worst, fabs(u[f * NT + d] / peak - pow(sin(theta[d]), 2)));
        CHECK(peak > 0 && worst <= 0.02, "f = %.2f: the dipole's pattern is %.4f off sin^2(theta)", fr[f], worst);
        printf("3D f = %.2f: pattern within %.4f of sin^2(theta)\n", fr[f], worst);
    }

    /* the power over the sphere (Gauss-Legendre in cos theta, even in phi) against the box's flux */
    enum { NC = 16, NP = 16 };
    double x[NC], w[NC], th[NC * NP], ph[NC * NP], us[NF * NC * NP];
    gauss_legendre(NC, x, w);
    for (int i = 0; i < NC; i++)
        for (int j = 0; j < NP; j++) th[i * NP + j] = acos(x[i]), ph[i * NP + j] = 2 * M_PI * j / NP;
    CHECK_OK(pyr_spectra_farfield(&p, s, 6, surface3, NC * NP, th, ph, 0, us, NULL, NULL));
    double flux[NF];
    box_flux(s, 3, NF, flux);
    for (int f = 0; f < NF; f++) {
        double total = 0;
        for (int i = 0; i < NC; i++)
            for (int j = 0; j < NP; j++) total += us[f * NC * NP + i * NP + j] * w[i] * 2 * M_PI / NP;
        CHECK(flux[f] > 0 && fabs(total - flux[f]) <= 0.02 * flux[f], "f = %.2f: %.6g radiated to the far field, %.6g through the box", fr[f],
              total, flux[f]);
        printf("3D f = %.2f: far field %.6g, box flux %.6g (%.4f)\n", fr[f], total, flux[f], total / flux[f] - 1);
    }

    /* the fields at r: transverse, H = rhat x E / eta, r^2 |E|^2 / eta = the power per solid angle */
    const double r = 1000;
    double re[NF * NT * 6], im[NF * NT * 6], u2[NF * NT];
    CHECK_OK(pyr_spectra_farfield(&p, s, 6, surface3, NT, theta, phi, r, u2, re, im));
    CHECK(!memcmp(u, u2, sizeof u), "the power differs when the fields are asked too");
    double worst = 0;
    for (int f = 0; f < NF; f++)
        for (int d = 1; d < NT - 1; d++) {
            const double *er = re + (f * NT + d) * 6, *ei = im + (f * NT + d) * 6;
            const double rh[3] = {sin(theta[d]) * cos(phi[d]), sin(theta[d]) * sin(phi[d]), cos(theta[d])};
            double e2 = 0, radial = 0, mismatch = 0;
            for (int a = 0; a < 3; a++) e2 += er[a] * er[a] + ei[a] * ei[a];
            radial = hypot(er[0] * rh[0] + er[1] * rh[1] + er[2] * rh[2], ei[0] * rh[0] + ei[1] * rh[1] + ei[2] * rh[2]);
            for (int a = 0; a < 3; a++) {
                const int b = (a + 1) % 3, c = (a + 2) % 3;
                mismatch += pow(er[3 + a] - (rh[b] * er[c] - rh[c] * er[b]), 2) + pow(ei[3 + a] - (rh[b] * ei[c] - rh[c] * ei[b]), 2);
            }
            worst = fmax(worst, fabs(r * r * e2 / u[f * NT + d] - 1));
            worst = fmax(worst, radial / sqrt(e2));
            worst = fmax(worst, sqrt(mismatch / e2));
        }
    CHECK(worst < 1e-9, "the far fields at r are %.3g off a transverse wave of the power per solid angle", worst);
    pyr_spectra_destroy(&s);
}

/* 2D: a line source's isotropic pattern, its integral against the box's flux. */
static void check_line_2d(int te)
{
    pyr_problem_t p;
    const int64_t n[3] = {121, 121, 1};
    const double len[3] = {6, 6, 1};
    make_maxwell(&p, 2, n, len, te, PYR_DOUBLE, 300, 0.9);
    set_ok(&p, "boundary.kind", "cpml");
    set_ok(&p, "boundary.cpml_cells", "15");
    set_ok(&p, "source.source1", te ? "Hz point 60 60 ricker frequency=0.8 delay=2" : "Ez point 60 60 ricker frequency=0.8 delay=2");
    /* at 33 to 50 cells per wavelength: the Yee grid's own anisotropy stays well below 2% */
    enum { NF = 3, ND = 72 };
    const double fr[NF] = {0.4, 0.5, 0.6};
    set_box(&p, 45, 75, "0.4,0.5,0.6");
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    pyr_spectra_t *s = NULL;
    CHECK_OK(run(&p, &o, &s));
    if (!s) return;
    double phi[ND], u[NF * ND], flux[NF];
    for (int d = 0; d < ND; d++) phi[d] = 2 * M_PI * d / ND;
    CHECK_OK(pyr_spectra_farfield(&p, s, 4, surface2, ND, NULL, phi, 0, u, NULL, NULL));
    box_flux(s, 2, NF, flux);
    for (int f = 0; f < NF; f++) {
        double lo = INFINITY, hi = 0, total = 0;
        for (int d = 0; d < ND; d++) {
            lo = fmin(lo, u[f * ND + d]);
            hi = fmax(hi, u[f * ND + d]);
            total += u[f * ND + d] * 2 * M_PI / ND;
        }
        CHECK(lo > 0 && hi / lo - 1 <= 0.02, "%s f = %.2f: the line source's pattern runs from %.6g to %.6g", te ? "TE" : "TM", fr[f], lo, hi);
        CHECK(flux[f] > 0 && fabs(total - flux[f]) <= 0.02 * flux[f], "%s f = %.2f: %.6g radiated to the far field, %.6g through the box",
              te ? "TE" : "TM", fr[f], total, flux[f]);
        printf("2D %s f = %.2f: pattern max/min - 1 = %.4f, far field %.6g, box flux %.6g\n", te ? "TE" : "TM", fr[f], hi / lo - 1, total,
               flux[f]);
    }
    pyr_spectra_destroy(&s);
}

/* The far field of every plan's spectra is the naive run's, bit for bit. */
static void check_plans(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {61, 41, 1};
    const double len[3] = {3, 2, 1};
    make_maxwell(&p, 2, n, len, 0, PYR_DOUBLE, 120, 0.9);
    set_ok(&p, "boundary.kind", "cpml");
    set_ok(&p, "boundary.cpml_cells", "6");
    set_ok(&p, "source.source1", "Ez point 25 20 ricker frequency=0.8 delay=2");
    set_ok(&p, "monitor.flux1", "plane x 12 10 30 freqs=0.5,0.9");
    set_ok(&p, "monitor.flux2", "plane x 40 10 30 freqs=0.5,0.9");
    set_ok(&p, "monitor.flux3", "plane y 10 12 40 freqs=0.5,0.9");
    set_ok(&p, "monitor.flux4", "plane y 30 12 40 freqs=0.5,0.9");
    enum { ND = 9 };
    double phi[ND], ref[2 * ND * 13];
    for (int d = 0; d < ND; d++) phi[d] = 0.7 * d;
    const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * sizeof(double);
    for (int c = 0; c < 4; c++) {
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = c == 0 ? PYR_BACKEND_CPU : backend;
        o.threads = 1;
        o.method = c == 0 ? PYR_METHOD_NAIVE : c == 3 ? PYR_METHOD_NAIVE : PYR_METHOD_PYRAMID;
        if (c == 1 || c == 2) {
            o.decomposition = PYR_DECOMP_BLOCKS;
            o.height = c == 1 ? 3 : 7;
            o.memory = grid / (uint64_t)(c == 1 ? 2 : 4);
        }
        if (c == 3) {
            snprintf(o.devices, sizeof o.devices, "0,0,0,0");
            snprintf(o.partition, sizeof o.partition, "2x2x1");
            o.exchange = 3;
        }
        pyr_spectra_t *s = NULL;
        pyr_status_t st = run(&p, &o, &s);
        for (int tries = 0; st == PYR_ERR_BUDGET && o.memory && tries < 6; tries++) {
            pyr_spectra_destroy(&s);
            o.memory *= 2;
            st = run(&p, &o, &s);
        }
        CHECK(st == PYR_OK, "plan %d: %s", c, pyr_last_error());
        double got[2 * ND * 13];
        if (st == PYR_OK) CHECK_OK(pyr_spectra_farfield(&p, s, 4, surface2, ND, NULL, phi, 3.5, got, got + 2 * ND, got + 2 * ND + 12 * ND));
        if (c == 0) memcpy(ref, got, sizeof ref);
        else CHECK(!memcmp(ref, got, sizeof ref), "plan %d: the far field differs from the naive run's", c);
        CHECK(ref[0] > 0, "the far field is %g", ref[0]);
        pyr_spectra_destroy(&s);
    }
}

static void check_refusals(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {41, 41, 1};
    const double len[3] = {2, 2, 1};
    make_maxwell(&p, 2, n, len, 0, PYR_DOUBLE, 60, 0.9);
    set_ok(&p, "boundary.kind", "cpml");
    set_ok(&p, "boundary.cpml_cells", "5");
    set_ok(&p, "source.source1", "Ez point 20 20 ricker frequency=0.8 delay=2");
    set_ok(&p, "monitor.dft1", "Ez point 20 20 freqs=0.8");
    set_ok(&p, "monitor.flux1", "plane x 10 10 30 freqs=0.8");
    set_ok(&p, "monitor.flux2", "plane x 30 10 30 freqs=0.8");
    set_ok(&p, "monitor.flux3", "plane y 10 10 30 freqs=0.8");
    set_ok(&p, "monitor.flux4", "plane y 30 10 30 freqs=0.8");
    set_ok(&p, "monitor.flux5", "plane y 30 10 29 freqs=0.8");
    set_ok(&p, "monitor.flux6", "plane y 30 10 30 freqs=0.9");
    double phi[1] = {0}, theta[1] = {1}, u[1];
    const int good[4] = {1, 2, 3, 4};
    pyr_spectra_t *s = NULL;
    CHECK_OK(pyr_spectra_create(&p, &s));
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, good, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "run first");
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    pyr_spectra_destroy(&s);
    CHECK_OK(run(&p, &o, &s));
    CHECK_OK(pyr_spectra_farfield(&p, s, 4, good, 1, NULL, phi, 0, u, NULL, NULL));
    const int with_dft[4] = {0, 2, 3, 4}, open[4] = {1, 2, 3, 5}, twice[4] = {1, 1, 3, 4}, freqs[4] = {1, 2, 3, 6}, off[4] = {1, 2, 3, 9};
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 3, good, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "a pair of planes per axis");
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, with_dft, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "not a flux monitor");
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, open, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "closed");
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, twice, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "given twice");
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, off, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "the spectra hold");
    const int three_y[4] = {1, 3, 4, 6};
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, three_y, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "two per axis");
    /* flux6 closes the box as flux4 does, at another frequency */
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, freqs, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "same freqs=");
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, good, 1, theta, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "theta = NULL");
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, good, 0, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "at least one");
    double re[6], im[6];
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, good, 1, NULL, phi, 0, NULL, re, im), PYR_ERR_ARG, "r > 0");
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, good, 1, NULL, phi, 1, NULL, NULL, NULL), PYR_ERR_ARG, "nothing to compute");
    const double nan_phi[1] = {NAN};
    CHECK_FAILS(pyr_spectra_farfield(&p, s, 4, good, 1, NULL, nan_phi, 0, u, NULL, NULL), PYR_ERR_ARG, "not finite");
    pyr_problem_t q = p;
    set_ok(&q, "monitor.flux5", "plane y 30 10 28 freqs=0.8");
    CHECK_FAILS(pyr_spectra_farfield(&q, s, 4, good, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "another problem");
    q = p;
    q.maxwell.sigma = 0.1;
    CHECK_FAILS(pyr_spectra_farfield(&q, s, 4, good, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "lossless background");
    CHECK_FAILS(pyr_spectra_farfield(NULL, s, 4, good, 1, NULL, phi, 0, u, NULL, NULL), PYR_ERR_ARG, "required");
    pyr_spectra_destroy(&s);
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
    const char *only = argc > 2 ? argv[2] : "";
    if (strcmp(only, "3d")) {
        check_refusals();
        check_plans();
        check_line_2d(0);
        check_line_2d(1);
    }
    if (strcmp(only, "quick")) check_dipole_3d();
    return check_report();
}
