/* Physics of the Maxwell (Yee) scheme (issue 21), in double on the CPU:
 *   - PEC cavity modes (2D TM, 2D TE, 3D TM110 and TE101): the frequency
 *     measured from a probe's series matches the discrete dispersion relation
 *     sin^2(w dt/2)/dt^2 = sum_d sin^2(k_d h_d/2)/h_d^2 to 1e-4 relative
 *     (and approaches the continuous one);
 *   - energy: from random fields in a lossless PEC cavity, the Yee scheme's
 *     invariant |E^n|^2 + <H^(n-1/2), H^(n+1/2)> holds over 10^5 steps and the
 *     plain energy stays bounded;
 *   - a lossy cavity mode decays at exactly sqrt(ca) per step (the recurrence
 *     u(n+1) = (1 + ca - cb dt lambda) u(n) - ca u(n-1));
 *   - a plane wave in a lossy medium (TE between PEC plates: a TEM wave)
 *     decays at the attenuation of the discrete dispersion relation, and
 *     within 2% of the continuous medium's;
 *   - CPML: a normally incident Gaussian pulse on 10 cells reflects at
 *     <= -40 dB; a point source's cylindrical wave in 2D too;
 *   - refusals of bad input with messages that name the fix. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/npy.h"
#include "maxwell_util.h"
#include "schemes/maxwell.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void naive_cpu(pyr_options_t *o)
{
    pyr_options_default(o);
    o->backend = PYR_BACKEND_CPU;
    o->method = PYR_METHOD_NAIVE;
    o->threads = 2;
}

/* cos(w dt) from a series obeying u(n+1) + u(n-1) = 2 cos(w dt) u(n) (least squares). */
static double fit_cos(const double *u, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 1; i + 1 < n; i++) {
        num += u[i] * (u[i + 1] + u[i - 1]);
        den += 2 * u[i] * u[i];
    }
    return num / den;
}

/* One cavity mode: component `comp` set to prod sin(pi m_d x_d / L_d) over the
 * axes `on`; the probe's series gives w, compared with the dispersion relation. */
static void cavity_mode(const char *name, int dims, int te, const int64_t n[3], const double len[3], int comp, const int modes[3])
{
    pyr_problem_t p;
    make_maxwell(&p, dims, n, len, te, PYR_DOUBLE, 3000, 0.9);
    p.maxwell.nprobes = 1;
    p.maxwell.probes[0].component = (pyr_component_t)comp;
    for (int a = 0; a < 3; a++) p.maxwell.probes[0].node[a] = a < dims ? n[a] / 3 : 0;
    pyr_field_t *given[6] = {NULL};
    CHECK_OK(pyr_field_create(&p, &given[comp]));
    double lambda = 0; /* sum_d (2/h sin(k h/2))^2 */
    double cont = 0;
    for (int a = 0; a < dims; a++) {
        if (!modes[a]) continue;
        const double h = pyr_problem_h(&p, a), k = M_PI * modes[a] / len[a];
        lambda += pow(2 / h * sin(k * h / 2), 2);
        cont += k * k;
    }
    /* the mode's shape at the component's own positions: sin along the axes of `modes`, constant along the others */
    for (int64_t z = 0; z < p.n[2]; z++)
        for (int64_t y = 0; y < p.n[1]; y++)
            for (int64_t x = 0; x < p.n[0]; x++) {
                const int64_t idx[3] = {x, y, z};
                double v = 1;
                for (int a = 0; a < dims; a++)
                    if (modes[a]) v *= sin(M_PI * modes[a] * (double)idx[a] / (double)(p.n[a] - 1));
                ((double *)given[comp]->data)[(z * p.n[1] + y) * p.n[0] + x] = v;
            }
    pyr_options_t o;
    naive_cpu(&o);
    mx_result_t r = {0};
    CHECK_OK(mx_run(&p, &o, given, &r));
    if (r.nseries == p.steps) {
        double *u = malloc((size_t)(p.steps + 1) * sizeof *u);
        const int64_t *q = p.maxwell.probes[0].node;
        u[0] = mx_get(given[comp], q[0], q[1], q[2]);
        memcpy(u + 1, r.probes, (size_t)p.steps * sizeof *u);
        double dt = 0;
        pyr_maxwell_dt(&p, &dt);
        const double w = acos(fit_cos(u, p.steps + 1)) / dt;
        const double wd = 2 / dt * asin(dt / 2 * sqrt(lambda)), wc = sqrt(cont);
        const double rel = fabs(w - wd) / wd;
        printf("%-28s w = %.12f  discrete %.12f (rel %.1e)  continuous %.8f (rel %.1e)\n", name, w, wd, rel, wc, fabs(w - wc) / wc);
        CHECK(rel <= 1e-4, "%s: frequency %.12g, the discrete dispersion relation gives %.12g (rel %.2e)", name, w, wd, rel);
        CHECK(fabs(w - wc) / wc < 0.01, "%s: frequency %.8g far from the continuous %.8g", name, w, wc);
        /* the other components of a pure mode stay zero (none of their updates is fed) or follow it: amplitude bounded */
        double umax = 0;
        for (int64_t i = 0; i <= p.steps; i++) umax = fmax(umax, fabs(u[i]));
        CHECK(umax <= 1.0 + 1e-9, "%s: amplitude grew to %g", name, umax);
        free(u);
    } else {
        CHECK(0, "%s: %lld probe values for %lld steps", name, (long long)r.nseries, (long long)p.steps);
    }
    mx_free(&r);
    pyr_field_destroy(&given[comp]);
}

/* ------------------------------------------------------------------ energy */

/* |E^n|^2 + <H^(n-1/2), H^(n+1/2)> from the state (E^n, H^(n-1/2)) and one more step. */
static double yee_invariant(const pyr_problem_t *p, pyr_field_t *const *state)
{
    pyr_problem_t q = *p;
    q.steps = 1;
    pyr_options_t o;
    naive_cpu(&o);
    mx_result_t r = {0};
    CHECK_OK(mx_run(&q, &o, state, &r));
    double w = 0;
    for (int c = 0; c < 6; c++) {
        if (!state[c]) continue;
        for (int64_t i = 0; i < pyr_field_count(state[c]); i++) {
            const double a = field_get(state[c], i);
            w += c < 3 ? a * a : a * field_get(r.c[c], i);
        }
    }
    mx_free(&r);
    return w;
}

static void energy(const char *name, int dims, int te, const int64_t n[3], int64_t steps, int64_t chunk)
{
    const double len[3] = {1.3, 1.0, 0.9};
    pyr_problem_t p;
    make_maxwell(&p, dims, n, len, te, PYR_DOUBLE, chunk, 0.99);
    p.init = PYR_INIT_RANDOM;
    p.seed = 11;
    pyr_options_t o;
    naive_cpu(&o);
    mx_result_t cur = {0};
    /* the initial state (random, zero where PEC holds) */
    pyr_problem_t z = p;
    z.steps = 0;
    CHECK_OK(mx_run(&z, &o, NULL, &cur));
    const double w0 = yee_invariant(&p, cur.c), e0 = mx_energy(cur.c);
    double worst = 0, emax = e0, emin = e0;
    for (int64_t s = 0; s < steps; s += chunk) {
        mx_result_t next = {0};
        CHECK_OK(mx_run(&p, &o, cur.c, &next));
        mx_free(&cur);
        cur = next;
        const double w = yee_invariant(&p, cur.c), e = mx_energy(cur.c);
        worst = fmax(worst, fabs(w - w0) / w0);
        emax = fmax(emax, e);
        emin = fmin(emin, e);
    }
    printf("%-28s %lld steps at Courant 0.99: invariant drift %.1e, plain energy in [%.4f, %.4f] x initial\n", name, (long long)steps, worst,
           emin / e0, emax / e0);
    CHECK(worst <= 1e-9, "%s: the Yee invariant drifted by %.2e over %lld steps", name, worst, (long long)steps);
    CHECK(isfinite(emax) && emax <= 4 * e0 && emin >= e0 / 4, "%s: plain energy in [%g, %g] x initial", name, emin / e0, emax / e0);
    mx_free(&cur);
}

/* --------------------------------------------------------------- lossy */

static void lossy_cavity(void)
{
    const int64_t n[3] = {41, 31, 1};
    const double len[3] = {2.0, 1.5, 1};
    pyr_problem_t p;
    make_maxwell(&p, 2, n, len, 0, PYR_DOUBLE, 400, 0.7);
    p.maxwell.sigma = 0.8;
    p.maxwell.eps_r = 2.0;
    p.maxwell.nprobes = 1;
    p.maxwell.probes[0].component = PYR_EZ;
    p.maxwell.probes[0].node[0] = 13;
    p.maxwell.probes[0].node[1] = 11;
    pyr_field_t *given[6] = {NULL};
    CHECK_OK(pyr_field_create(&p, &given[PYR_EZ]));
    for (int64_t y = 0; y < n[1]; y++)
        for (int64_t x = 0; x < n[0]; x++)
            ((double *)given[PYR_EZ]->data)[y * n[0] + x] = sin(M_PI * (double)x / (double)(n[0] - 1)) * sin(M_PI * (double)y / (double)(n[1] - 1));
    pyr_options_t o;
    naive_cpu(&o);
    mx_result_t r = {0};
    CHECK_OK(mx_run(&p, &o, given, &r));
    double dt = 0;
    pyr_maxwell_dt(&p, &dt);
    const double s = p.maxwell.sigma * dt / (2 * p.maxwell.eps_r), ca = (1 - s) / (1 + s);
    if (r.nseries == p.steps) {
        /* least squares for u(n+1) = alpha u(n) + beta u(n-1) */
        const double *u = r.probes;
        double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
        for (int64_t i = 1; i + 1 < p.steps; i++) {
            a11 += u[i] * u[i];
            a12 += u[i] * u[i - 1];
            a22 += u[i - 1] * u[i - 1];
            b1 += u[i] * u[i + 1];
            b2 += u[i - 1] * u[i + 1];
        }
        const double det = a11 * a22 - a12 * a12, beta = (a11 * b2 - a12 * b1) / det;
        printf("lossy cavity (sigma 0.8, eps 2)  decay per step sqrt(%.15f), ca = %.15f (rel %.1e); continuous exp(-sigma dt/2eps) = %.10f\n",
               -beta, ca, fabs(-beta - ca) / ca, exp(-p.maxwell.sigma * dt / (2 * p.maxwell.eps_r)));
        CHECK(fabs(-beta - ca) <= 1e-9 * ca, "lossy cavity: the series decays by %.15g per two steps, ca = %.15g", -beta, ca);
    } else {
        CHECK(0, "lossy cavity: no probe series");
    }
    mx_free(&r);
    pyr_field_destroy(&given[PYR_EZ]);
}

/* Amplitude of the frequency-w part of u(t) over samples from `from` (least squares a cos + b sin). */
static double amplitude(const double *u, int64_t from, int64_t to, double w, double dt)
{
    double cc = 0, cs = 0, ss = 0, uc = 0, us = 0;
    for (int64_t i = from; i < to; i++) {
        const double t = (double)(i + 1) * dt, c = cos(w * t), s = sin(w * t);
        cc += c * c;
        cs += c * s;
        ss += s * s;
        uc += u[i] * c;
        us += u[i] * s;
    }
    const double det = cc * ss - cs * cs, a = (uc * ss - us * cs) / det, b = (us * cc - uc * cs) / det;
    return hypot(a, b);
}

/* A TEM wave between PEC plates (2D TE, Ey and Hz uniform in y) along x. */
static void tem_problem(pyr_problem_t *p, int64_t nx, int64_t steps)
{
    const int64_t n[3] = {nx, 4, 1};
    const double len[3] = {(double)(nx - 1), 3.0, 1}; /* h = 1 */
    make_maxwell(p, 2, n, len, 1, PYR_DOUBLE, steps, 0.5);
    p->maxwell.dt = 0.5;
    p->maxwell.cpml_cells = 10;
    p->maxwell.cpml_faces = 0x3; /* x- and x+ */
}

static void tem_source(pyr_problem_t *p, int64_t x, pyr_waveform_t wave, double f, double width, double delay)
{
    pyr_source_t *s = &p->maxwell.sources[p->maxwell.nsources++];
    memset(s, 0, sizeof *s);
    s->component = PYR_EY;
    s->node[0] = s->node_end[0] = x;
    s->node[1] = 0;
    s->node_end[1] = 2;
    s->waveform = wave;
    s->amplitude = 1;
    s->frequency = f;
    s->width = width;
    s->delay = delay;
}

static void tem_probe(pyr_problem_t *p, int64_t x)
{
    pyr_probe_t *q = &p->maxwell.probes[p->maxwell.nprobes++];
    q->component = PYR_EY;
    q->node[0] = x;
    q->node[1] = 1;
    q->node[2] = 0;
}

static void lossy_plane_wave(void)
{
    const double sigma = 0.04, eps = 1.5, f = 0.04, w = 2 * M_PI * f;
    pyr_problem_t p;
    tem_problem(&p, 420, 4000);
    p.maxwell.sigma = sigma;
    p.maxwell.eps_r = eps;
    tem_source(&p, 40, PYR_WAVE_SINE, f, 4 / f, 0);
    tem_probe(&p, 150);
    tem_probe(&p, 250);
    pyr_options_t o;
    naive_cpu(&o);
    mx_result_t r = {0};
    CHECK_OK(mx_run(&p, &o, NULL, &r));
    if (r.nseries != p.steps) {
        CHECK(0, "lossy plane wave: no probe series");
        mx_free(&r);
        return;
    }
    const double dt = p.maxwell.dt;
    double *u1 = malloc((size_t)p.steps * sizeof *u1), *u2 = malloc((size_t)p.steps * sizeof *u2);
    for (int64_t i = 0; i < p.steps; i++) {
        u1[i] = r.probes[i * 2];
        u2[i] = r.probes[i * 2 + 1];
    }
    const int64_t from = p.steps - (int64_t)(10 / f / dt); /* the last ten periods */
    const double a1 = amplitude(u1, from, p.steps, w, dt), a2 = amplitude(u2, from, p.steps, w, dt);
    const double measured = log(a1 / a2) / 100.0;
    /* discrete: (2/h)^2 sin^2(kh/2) = mu eps (2/dt)^2 S (S - i s C), S = sin(w dt/2), C = cos(w dt/2), s = sigma dt/(2 eps) */
    const double S = sin(w * dt / 2), C = cos(w * dt / 2), s = sigma * dt / (2 * eps);
    const double complex rhs = eps * (2 / dt) * (2 / dt) * S * (S - I * s * C);
    const double complex k = 2 * casin(csqrt(rhs) / 2);
    const double discrete = fabs(cimag(k));
    const double complex kc = w * csqrt(eps * (1 - I * sigma / (w * eps)));
    const double continuous = fabs(cimag(kc));
    printf("lossy plane wave (sigma %.2f, eps %.1f, %.0f cells/wavelength): attenuation %.8f per cell, discrete relation %.8f (rel %.1e), "
           "continuous %.8f (rel %.1e)\n",
           sigma, eps, 1 / (f * sqrt(eps)), measured, discrete, fabs(measured - discrete) / discrete, continuous,
           fabs(measured - continuous) / continuous);
    CHECK(fabs(measured - discrete) <= 2e-3 * discrete, "lossy plane wave: attenuation %.8g, the discrete relation gives %.8g", measured,
          discrete);
    CHECK(fabs(measured - continuous) <= 0.02 * continuous, "lossy plane wave: attenuation %.8g, the continuous medium's %.8g", measured,
          continuous);
    free(u1);
    free(u2);
    mx_free(&r);
}

/* ------------------------------------------------------------------ CPML */

/* Reflection (dB) of a pulse: the probe's series in the domain minus that of
 * a domain `pad` cells longer on each side (no reflection reaches its probe
 * in the window), over the peak of the latter. */
static double reflection_db(pyr_problem_t *a, pyr_problem_t *b, int probe)
{
    pyr_options_t o;
    naive_cpu(&o);
    mx_result_t ra = {0}, rb = {0};
    CHECK_OK(mx_run(a, &o, NULL, &ra));
    CHECK_OK(mx_run(b, &o, NULL, &rb));
    double diff = 0, peak = 0;
    if (ra.nseries == a->steps && rb.nseries == a->steps)
        for (int64_t i = 0; i < a->steps; i++) {
            diff = fmax(diff, fabs(ra.probes[i * ra.nprobes + probe] - rb.probes[i * rb.nprobes + probe]));
            peak = fmax(peak, fabs(rb.probes[i * rb.nprobes + probe]));
        }
    mx_free(&ra);
    mx_free(&rb);
    return peak > 0 ? 20 * log10(diff / peak) : 0;
}

static void cpml_normal(void)
{
    const int64_t pad = 600, steps = 1000;
    pyr_problem_t a, b;
    tem_problem(&a, 200, steps);
    tem_problem(&b, 200 + 2 * pad, steps);
    /* a Gaussian pulse of width 8 (about 12 cells per wavelength at the spectrum's e^-2 point) */
    tem_source(&a, 60, PYR_WAVE_GAUSSIAN, 0, 8, 40);
    tem_source(&b, 60 + pad, PYR_WAVE_GAUSSIAN, 0, 8, 40);
    tem_probe(&a, 170); /* 19 cells from the layer at x+ */
    tem_probe(&b, 170 + pad);
    tem_probe(&a, 25); /* 14 from the layer at x- */
    tem_probe(&b, 25 + pad);
    const double db1 = reflection_db(&a, &b, 0), db2 = reflection_db(&a, &b, 1);
    printf("CPML, 10 cells, normal incidence: reflection %.1f dB (x+), %.1f dB (x-)\n", db1, db2);
    CHECK(db1 <= -40 && db2 <= -40, "CPML reflection %.1f dB / %.1f dB, above -40 dB", db1, db2);
}

static void cpml_point(void)
{
    const int64_t pad = 260, nn = 120, steps = 480;
    const int64_t na[3] = {nn, nn, 1}, nb[3] = {nn + 2 * pad, nn + 2 * pad, 1};
    const double la[3] = {(double)(nn - 1), (double)(nn - 1), 1}, lb[3] = {(double)(nn + 2 * pad - 1), (double)(nn + 2 * pad - 1), 1};
    pyr_problem_t a, b;
    make_maxwell(&a, 2, na, la, 0, PYR_DOUBLE, steps, 0.5);
    make_maxwell(&b, 2, nb, lb, 0, PYR_DOUBLE, steps, 0.5);
    for (int k = 0; k < 2; k++) {
        pyr_problem_t *p = k ? &b : &a;
        const int64_t off = k ? pad : 0;
        p->maxwell.cpml_cells = 10;
        p->maxwell.cpml_faces = 0xf;
        p->maxwell.nsources = 1;
        pyr_source_t *s = &p->maxwell.sources[0];
        s->component = PYR_EZ;
        s->node[0] = s->node_end[0] = nn / 2 + off;
        s->node[1] = s->node_end[1] = nn / 2 + off;
        s->waveform = PYR_WAVE_GAUSSIAN;
        s->amplitude = 1;
        s->width = 8;
        s->delay = 40;
        p->maxwell.nprobes = 2;
        p->maxwell.probes[0].component = PYR_EZ; /* near the x+ layer, on the axis: normal incidence */
        p->maxwell.probes[0].node[0] = nn - 25 + off;
        p->maxwell.probes[0].node[1] = nn / 2 + off;
        p->maxwell.probes[1].component = PYR_EZ; /* near the corner: oblique (45 degrees) */
        p->maxwell.probes[1].node[0] = nn - 25 + off;
        p->maxwell.probes[1].node[1] = nn - 25 + off;
    }
    const double db1 = reflection_db(&a, &b, 0), db2 = reflection_db(&a, &b, 1);
    printf("CPML, 10 cells, 2D point source: reflection %.1f dB (axis), %.1f dB (towards a corner)\n", db1, db2);
    CHECK(db1 <= -40, "CPML reflection of a cylindrical wave %.1f dB on the axis, above -40 dB", db1);
    CHECK(db2 <= -35, "CPML reflection of a cylindrical wave %.1f dB towards a corner, above -35 dB", db2);
}

/* ---------------------------------------------------------------- refusals */

static pyr_status_t plan_of(const pyr_problem_t *p)
{
    pyr_options_t o;
    naive_cpu(&o);
    pyr_plan_t *plan = NULL;
    pyr_status_t st = pyr_plan_create(p, &o, &plan);
    pyr_plan_destroy(&plan);
    return st;
}

static void refusals(void)
{
    const int64_t n[3] = {20, 16, 12};
    const double len[3] = {1, 1, 1};
    pyr_problem_t p;
    make_maxwell(&p, 3, n, len, 0, PYR_DOUBLE, 10, 1.2);
    CHECK_FAILS(plan_of(&p), PYR_ERR_UNSTABLE, "courant <=");
    make_maxwell(&p, 3, n, len, 0, PYR_DOUBLE, 10, 0.9);
    p.maxwell.shapes[0].kind = PYR_SHAPE_SPHERE;
    p.maxwell.shapes[0].r = 0.2;
    p.maxwell.shapes[0].eps_r = 0.5; /* a faster medium: the limit drops */
    p.maxwell.shapes[0].mu_r = 1;
    p.maxwell.nshapes = 1;
    CHECK_FAILS(plan_of(&p), PYR_ERR_UNSTABLE, "limit");
    make_maxwell(&p, 3, n, len, 0, PYR_DOUBLE, 10, 0.5);
    p.maxwell.eps_r = 0;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "eps_r");
    p.maxwell.eps_r = NAN;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "eps_r");
    make_maxwell(&p, 3, n, len, 0, PYR_DOUBLE, 10, 0.5);
    p.maxwell.cpml_cells = 6;
    p.maxwell.cpml_faces = 0x3f;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "cpml_cells <=");
    p.maxwell.cpml_cells = 3;
    p.maxwell.nsources = 1;
    p.maxwell.sources[0].component = PYR_EZ;
    p.maxwell.sources[0].node[0] = p.maxwell.sources[0].node_end[0] = 2;
    p.maxwell.sources[0].node[1] = p.maxwell.sources[0].node_end[1] = 8;
    p.maxwell.sources[0].node[2] = p.maxwell.sources[0].node_end[2] = 6;
    p.maxwell.sources[0].waveform = PYR_WAVE_RICKER;
    p.maxwell.sources[0].frequency = 1;
    p.maxwell.sources[0].amplitude = 1;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "inside the CPML");
    p.maxwell.sources[0].node[0] = p.maxwell.sources[0].node_end[0] = 8;
    CHECK_OK(plan_of(&p));
    p.maxwell.nprobes = 1;
    p.maxwell.probes[0].component = PYR_HX;
    p.maxwell.probes[0].node[0] = 20;
    p.maxwell.probes[0].node[1] = 3;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "outside the");
    p.maxwell.nprobes = 0;
    const int64_t n2[3] = {20, 16, 1};
    make_maxwell(&p, 2, n2, len, 0, PYR_DOUBLE, 10, 0.5);
    p.maxwell.nsources = 1;
    p.maxwell.sources[0].component = PYR_HZ; /* not a TM component */
    p.maxwell.sources[0].node[0] = p.maxwell.sources[0].node_end[0] = 5;
    p.maxwell.sources[0].node[1] = p.maxwell.sources[0].node_end[1] = 5;
    p.maxwell.sources[0].waveform = PYR_WAVE_GAUSSIAN;
    p.maxwell.sources[0].width = 1;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "TM: Ez Hx Hy");
    p.maxwell.sources[0].component = PYR_EZ;
    p.maxwell.sources[0].node[0] = p.maxwell.sources[0].node_end[0] = 0; /* on the PEC face */
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "PEC face");
    p.maxwell.sources[0].node[0] = p.maxwell.sources[0].node_end[0] = 5;
    CHECK_OK(plan_of(&p));
    /* reliability review L7: a probe where its component is never updated (tangential E on a
     * PEC face, H's unused last half-cell) records only zeros; refused as sources are */
    p.maxwell.nprobes = 1;
    p.maxwell.probes[0].component = PYR_EZ;
    p.maxwell.probes[0].node[0] = 0;
    p.maxwell.probes[0].node[1] = 0;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "probe 1: Ez is not updated at index 0 along x (a PEC face");
    p.maxwell.probes[0].node[0] = 7;
    p.maxwell.probes[0].node[1] = 15; /* the last node of y: the PEC face y+ */
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "index 15 along y (a PEC face");
    p.maxwell.probes[0].component = PYR_HX; /* Hx at y = ny - 1: the unused last half-cell */
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "the unused last half-cell");
    p.maxwell.probes[0].node[1] = 14;
    CHECK_OK(plan_of(&p));
    p.maxwell.cpml_cells = 3; /* CPML on x- only: the other faces stay PEC */
    p.maxwell.cpml_faces = 0x1;
    p.maxwell.probes[0].component = PYR_EZ;
    p.maxwell.probes[0].node[1] = 0;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "index 0 along y (a PEC face");
    p.maxwell.probes[0].node[1] = 1;
    CHECK_OK(plan_of(&p));
    p.maxwell.nprobes = 0;
    p.maxwell.cpml_cells = 0;
    /* reliability review L8: a box or cylinder with reversed bounds holds no node */
    p.maxwell.nshapes = 1;
    pyr_shape_t *sh = &p.maxwell.shapes[0];
    memset(sh, 0, sizeof *sh);
    sh->kind = PYR_SHAPE_BOX;
    sh->eps_r = 4;
    sh->mu_r = 1;
    sh->lo[0] = 0.7, sh->hi[0] = 0.1, sh->lo[1] = 0.2, sh->hi[1] = 0.6;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "the box runs from x = 0.7 to x = 0.1, so it is empty");
    sh->lo[0] = 0.1, sh->hi[0] = 0.7, sh->lo[1] = 0.6, sh->hi[1] = 0.2;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "from y = 0.6 to y = 0.2");
    sh->hi[1] = 0.6; /* a plane of nodes is a shape */
    CHECK_OK(plan_of(&p));
    make_maxwell(&p, 3, n, len, 0, PYR_DOUBLE, 10, 0.5);
    p.maxwell.nshapes = 1;
    memset(sh, 0, sizeof *sh);
    sh->kind = PYR_SHAPE_CYLINDER;
    sh->axis = 2;
    sh->r = 0.2;
    sh->eps_r = 4;
    sh->mu_r = 1;
    sh->lo[0] = sh->lo[1] = 0.5;
    sh->lo[2] = 0.9, sh->hi[2] = 0.3;
    CHECK_FAILS(plan_of(&p), PYR_ERR_CONFIG, "the cylinder runs from z = 0.9 to z = 0.3, so it is empty");
    sh->lo[2] = 0.3, sh->hi[2] = 0.9;
    CHECK_OK(plan_of(&p));

    /* material files: wrong shape, eps <= 0, a NaN; each named, no run */
    char dir[] = "/tmp/pyr_mx_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/eps.npy", dir);
    make_maxwell(&p, 2, n2, len, 0, PYR_DOUBLE, 10, 0.5);
    snprintf(p.maxwell.eps_file, sizeof p.maxwell.eps_file, "%s", path);
    double vals[20 * 16];
    for (int i = 0; i < 320; i++) vals[i] = 2;
    const int64_t wrong[2] = {20, 16}, right[2] = {16, 20};
    CHECK_OK(pyr_npy_write(path, 2, wrong, PYR_DOUBLE, vals));
    pyr_options_t o;
    naive_cpu(&o);
    mx_result_t r = {0};
    CHECK_FAILS(mx_run(&p, &o, NULL, &r), PYR_ERR_FORMAT, "material.eps_file");
    mx_free(&r);
    vals[37] = -1;
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_DOUBLE, vals));
    CHECK_FAILS(mx_run(&p, &o, NULL, &r), PYR_ERR_FORMAT, "x=17, y=1");
    mx_free(&r);
    vals[37] = NAN;
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_DOUBLE, vals));
    CHECK_FAILS(mx_run(&p, &o, NULL, &r), PYR_ERR_FORMAT, "finite");
    mx_free(&r);
    vals[37] = 0.25; /* faster than light in vacuum at Courant 0.5 with eps 0.25: limit 0.5 */
    p.maxwell.courant = 0.6;
    CHECK_OK(pyr_npy_write(path, 2, right, PYR_DOUBLE, vals));
    CHECK_FAILS(mx_run(&p, &o, NULL, &r), PYR_ERR_UNSTABLE, "courant");
    mx_free(&r);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    {
        const int64_t n[3] = {33, 25, 1};
        const double len[3] = {2.0, 1.5, 1};
        const int m11[3] = {1, 1, 0}, m21[3] = {2, 1, 0}, m10[3] = {1, 0, 0};
        cavity_mode("2D TM (1,1) cavity", 2, 0, n, len, PYR_EZ, m11);
        cavity_mode("2D TM (2,1) cavity", 2, 0, n, len, PYR_EZ, m21);
        cavity_mode("2D TE (1,0) cavity", 2, 1, n, len, PYR_EY, m10);
        const int64_t n3[3] = {21, 17, 13};
        const double l3[3] = {1.4, 1.0, 0.8};
        const int tm110[3] = {1, 1, 0}, te101[3] = {1, 0, 1};
        cavity_mode("3D TM110 cavity", 3, 0, n3, l3, PYR_EZ, tm110);
        cavity_mode("3D TE101 cavity", 3, 0, n3, l3, PYR_EY, te101);
    }
    {
        const int64_t n[3] = {24, 19, 1}, n3[3] = {9, 8, 7};
        energy("2D TM random fields", 2, 0, n, 100000, 5000);
        energy("2D TE random fields", 2, 1, n, 100000, 5000);
        energy("3D random fields", 3, 0, n3, 100000, 10000);
    }
    lossy_cavity();
    lossy_plane_wave();
    cpml_normal();
    cpml_point();
    refusals();
    return check_report();
}
