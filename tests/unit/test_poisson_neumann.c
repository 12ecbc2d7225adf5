/* Neumann and mixed faces of the Poisson scheme (issue 48): the [boundary]
 * keys x- .. z+ (parsed, printed back, refused with what would work), the
 * refusals of what is not supported (faces of missing axes, a flux on a
 * Dirichlet face, another equation's [boundary] x-), the spectral radius of
 * the Jacobi iteration with these faces against power iteration on the
 * Jacobi matrix assembled here from the ghost-node definition, the damping
 * of a pure Neumann problem against the same (the constant mode projected
 * out), the compatibility check of pure Neumann data, and which faces a part
 * of a larger grid updates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "poisson_util.h"
#include "problem/config.h"
#include "problem/keys.h"
#include "schemes/poisson.h"
#include "schemes/scheme.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void keys(void)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    CHECK_OK(pyr_problem_set(&p, "scheme.equation", "poisson"));
    CHECK_OK(pyr_problem_set(&p, "boundary.x-", "neumann 0.5"));
    CHECK_OK(pyr_problem_set(&p, "boundary.y+", "  neumann  "));
    CHECK_OK(pyr_problem_set(&p, "boundary.x+", "neumann -1.25e-3"));
    CHECK_OK(pyr_problem_set(&p, "boundary.x+", "dirichlet"));
    CHECK(p.poisson.face[0] == PYR_FACE_NEUMANN && p.poisson.flux[0] == 0.5, "x- = neumann 0.5");
    CHECK(p.poisson.face[3] == PYR_FACE_NEUMANN && p.poisson.flux[3] == 0, "y+ = neumann (zero flux)");
    CHECK(p.poisson.face[1] == PYR_FACE_DIRICHLET && p.poisson.flux[1] == 0, "x+ back to dirichlet, its flux cleared");
    char v[64];
    CHECK_OK(pyr_problem_get(&p, "boundary.x-", v, sizeof v));
    CHECK(!strcmp(v, "neumann 0.5"), "boundary.x- reads back '%s'", v);
    CHECK_OK(pyr_problem_get(&p, "boundary.y+", v, sizeof v));
    CHECK(!strcmp(v, "neumann"), "boundary.y+ reads back '%s'", v);
    CHECK_OK(pyr_problem_get(&p, "boundary.x+", v, sizeof v));
    CHECK(!strcmp(v, "dirichlet"), "boundary.x+ reads back '%s'", v);
    /* the text read back sets the same face */
    pyr_problem_t q;
    pyr_problem_default(&q);
    q.equation = PYR_EQ_POISSON;
    CHECK_OK(pyr_problem_set(&q, "boundary.x-", "neumann 0.1"));
    CHECK_OK(pyr_problem_get(&q, "boundary.x-", v, sizeof v));
    pyr_problem_t r = q;
    CHECK_OK(pyr_problem_set(&r, "boundary.x-", v));
    CHECK(r.poisson.flux[0] == 0.1, "neumann 0.1 round trip: %.17g", r.poisson.flux[0]);

    static const struct {
        const char *key, *value, *want;
    } bad[] = {
        {"boundary.x-", "robin 1", "unknown kind 'robin'"},
        {"boundary.y-", "neumann abc", "not a finite number"},
        {"boundary.y-", "neumann inf", "not a finite number"},
        {"boundary.z+", "neumann 1 2", "not a finite number"},
        {"boundary.x+", "dirichlet 3", "takes no value"},
        {"boundary.x+", "", "is empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pyr_problem_t b = p;
        pyr_status_t st = pyr_problem_set(&b, bad[i].key, bad[i].value);
        CHECK(st == PYR_ERR_CONFIG && strstr(pyr_last_error(), bad[i].want) && !memcmp(&b, &p, sizeof b),
              "%s = '%s' refused with '%s', problem unchanged: %s", bad[i].key, bad[i].value, bad[i].want, pyr_last_error());
    }

    /* a heat problem with [boundary] x- is a mistake, not a setting to ignore */
    pyr_config_t *cfg = malloc(sizeof *cfg);
    pyr_config_default(cfg);
    CHECK_OK(pyr_config_apply(cfg, "scheme", "equation", "heat"));
    CHECK_OK(pyr_config_apply(cfg, "boundary", "x-", "neumann"));
    pyr_status_t st = pyr_config_finish(cfg);
    CHECK(st == PYR_ERR_CONFIG && strstr(pyr_last_error(), "[boundary] x- .. z+ belong to scheme.equation = poisson"),
          "heat with boundary.x- refused: %s", pyr_last_error());
    /* Maxwell's [boundary] keys are still Maxwell's */
    pyr_config_default(cfg);
    CHECK_OK(pyr_config_apply(cfg, "scheme", "equation", "maxwell"));
    CHECK_OK(pyr_config_apply(cfg, "boundary", "kind", "cpml"));
    CHECK(cfg->problem.maxwell.cpml_cells > 0, "boundary.kind = cpml still sets Maxwell's layers");
    free(cfg);

    /* the faces appear among the problem's keys (reports) where one is Neumann, within the grid's axes */
    pyr_problem_t d;
    pyr_problem_default(&d);
    d.equation = PYR_EQ_POISSON;
    int shown = 0;
    for (int i = 0; pyr_problem_keys[i]; i++) shown += !strncmp(pyr_problem_keys[i], "boundary.", 9) && pyr_problem_key_applies(&d, pyr_problem_keys[i]);
    CHECK(shown == 0, "an all-Dirichlet problem shows no face keys (%d)", shown);
    d.poisson.face[2] = PYR_FACE_NEUMANN;
    for (int i = 0; pyr_problem_keys[i]; i++) shown += !strncmp(pyr_problem_keys[i], "boundary.", 9) && pyr_problem_key_applies(&d, pyr_problem_keys[i]);
    CHECK(shown == 4, "a 2D problem with a Neumann face shows its 4 faces (%d)", shown);
}

static void refusals(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {9, 7, 1};
    make_poisson(&p, 2, n, NULL, PYR_DOUBLE, 100, 0, 10, PYR_RHS_ZERO, PYR_INIT_ZERO, 1);
    pyr_problem_t b = p;
    b.poisson.face[4] = PYR_FACE_NEUMANN;
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "no z faces"), "z- on a 2D grid: %s", pyr_last_error());
    b = p;
    b.poisson.flux[1] = 2;
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "write neumann 2"), "a flux on a dirichlet face: %s",
          pyr_last_error());
    b = p;
    b.poisson.face[0] = PYR_FACE_NEUMANN;
    b.poisson.flux[0] = NAN;
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "not finite"), "a NaN flux: %s", pyr_last_error());
    b = p;
    b.poisson.face[0] = (pyr_face_kind_t)7;
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "unknown kind 7"), "kind 7: %s", pyr_last_error());
    b = p;
    b.poisson.face[0] = PYR_FACE_NEUMANN;
    b.poisson.iteration = (pyr_iteration_t)(PYR_ITER_MULTIGRID + 1); /* an unknown iteration */
    CHECK(pyr_problem_validate(&b) != PYR_OK, "neumann faces with another iteration refused: %s", pyr_last_error());

    /* pure Neumann: plain Jacobi refused (the checkerboard mode), incompatible data refused naming the mismatch */
    b = p;
    for (int k = 0; k < 4; k++) b.poisson.face[k] = PYR_FACE_NEUMANN;
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "checkerboard") && strstr(pyr_last_error(), "omega < 1"),
          "pure Neumann, plain Jacobi: %s", pyr_last_error());
    b.poisson.iteration = PYR_ITER_CHEBYSHEV;
    b.poisson.rhs = PYR_RHS_SINE; /* f > 0 inside, no flux: sum W f > 0 */
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "balance the fluxes") && strstr(pyr_last_error(), "Subtract"),
          "pure Neumann, sine f without fluxes: %s", pyr_last_error());
    b.poisson.rhs = PYR_RHS_ZERO;
    b.poisson.flux[0] = 1; /* outward derivative 1 on x- (length 1): sum = 1 */
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "0 + 1 = 1"), "pure Neumann, one flux: %s", pyr_last_error());
    b.poisson.flux[1] = -1; /* balanced */
    pyr_status_t st = pyr_problem_validate(&b);
    CHECK(st == PYR_OK || !strstr(pyr_last_error(), "balance"), "balanced fluxes pass the check: %s", st == PYR_OK ? "ok" : pyr_last_error());
    /* the sine balanced by fluxes: sum W f = k2 prod_a sum_i w_i sin(pi i / (N - 1)) */
    b.poisson.rhs = PYR_RHS_SINE;
    double prod = 1, k2 = 0;
    for (int a = 0; a < 2; a++) {
        const double h = 1.0 / (double)(n[a] - 1);
        double t = 0;
        for (int64_t i = 1; i < n[a] - 1; i++) t += h * sin(M_PI * (double)i / (double)(n[a] - 1));
        prod *= t;
        k2 += M_PI * M_PI;
    }
    b.poisson.flux[0] = b.poisson.flux[1] = -k2 * prod / 2; /* x faces of area 1 */
    st = pyr_problem_validate(&b);
    CHECK(st == PYR_OK || !strstr(pyr_last_error(), "balance"), "the sine balanced by fluxes passes: %s", st == PYR_OK ? "ok" : pyr_last_error());
    b.poisson.flux[0] *= 1 + 1e-6;
    CHECK(pyr_problem_validate(&b) == PYR_ERR_CONFIG && strstr(pyr_last_error(), "balance"), "off by 1e-6: %s", pyr_last_error());
}

/* The Jacobi iteration matrix over the unknowns of a grid with faces `neu`
 * (1 = Neumann), from the ghost-node definition; dense, row-major. */
static double *jacobi_matrix(int dims, const int64_t n[3], const double len[3], const int neu[6], int64_t *m, int64_t **map)
{
    const int64_t total = n[0] * n[1] * n[2];
    int64_t *id = malloc((size_t)total * sizeof *id);
    int64_t count = 0;
    for (int64_t i = 0; i < total; i++) {
        const int64_t at[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
        int fixed = 0;
        for (int a = 0; a < dims; a++) fixed |= (at[a] == 0 && !neu[2 * a]) || (at[a] == n[a] - 1 && !neu[2 * a + 1]);
        id[i] = fixed ? -1 : count++;
    }
    double *J = calloc((size_t)(count * count), sizeof *J);
    double c[3], s = 0;
    for (int a = 0; a < dims; a++) {
        const double h = len[a] / (double)(n[a] - 1);
        c[a] = 1 / (h * h);
        s += 2 * c[a];
    }
    for (int64_t i = 0; i < total; i++) {
        if (id[i] < 0) continue;
        const int64_t at[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
        int64_t stride = 1;
        for (int a = 0; a < dims; a++) {
            for (int side = 0; side < 2; side++) {
                int64_t nb = side ? at[a] + 1 : at[a] - 1;
                if (nb < 0) nb = 1;            /* the ghost: the mirror node */
                if (nb > n[a] - 1) nb = n[a] - 2;
                const int64_t j = i + (nb - at[a]) * stride;
                if (id[j] >= 0) J[id[i] * count + id[j]] += c[a] / s;
            }
            stride *= n[a];
        }
    }
    *m = count;
    *map = id;
    return J;
}

/* The largest |eigenvalue| of A (m x m) by power iteration on A^2 (the spectrum is symmetric, so A alone
 * alternates), from a seeded vector; with w, the w-weighted mean is removed at each step. */
static double power_radius(const double *A, int64_t m, const double *w)
{
    double *v = malloc((size_t)m * sizeof *v), *t = malloc((size_t)m * sizeof *t);
    rng_t r = {12345};
    for (int64_t i = 0; i < m; i++) v[i] = (double)(rng_next(&r) % 1000) / 1000.0 - 0.5;
    double lambda = 0;
    for (int it = 0; it < 20000; it++) {
        for (int k = 0; k < 2; k++) {
            for (int64_t i = 0; i < m; i++) {
                double acc = 0;
                for (int64_t j = 0; j < m; j++) acc += A[i * m + j] * v[j];
                t[i] = acc;
            }
            if (w) {
                double sw = 0, sv = 0;
                for (int64_t i = 0; i < m; i++) sw += w[i], sv += w[i] * t[i];
                for (int64_t i = 0; i < m; i++) t[i] -= sv / sw;
            }
            memcpy(v, t, (size_t)m * sizeof *v);
        }
        double norm = 0;
        for (int64_t i = 0; i < m; i++) norm += v[i] * v[i];
        norm = sqrt(norm);
        const double next = sqrt(norm);
        for (int64_t i = 0; i < m; i++) v[i] /= norm;
        if (it > 50 && fabs(next - lambda) < 1e-14) {
            lambda = next;
            break;
        }
        lambda = next;
    }
    free(v);
    free(t);
    return lambda;
}

static void radius(void)
{
    rng_t r = {48};
    for (int c = 0; c < 10; c++) {
        const int dims = c < 6 ? 2 : 3;
        int64_t n[3] = {1, 1, 1};
        double len[3] = {1, 1, 1};
        for (int a = 0; a < dims; a++) {
            n[a] = rng_range(&r, 3, dims == 2 ? 10 : 6);
            len[a] = 0.3 + (double)rng_range(&r, 0, 300) / 100.0;
        }
        int neu[6] = {0};
        for (int k = 0; k < 2 * dims; k++) neu[k] = (int)rng_range(&r, 0, 1);
        if (c == 0) neu[0] = neu[1] = neu[2] = neu[3] = 0;
        const int pure = c == 4 || c == 9;
        if (pure)
            for (int k = 0; k < 2 * dims; k++) neu[k] = 1;
        pyr_problem_t p;
        make_poisson(&p, dims, n, len, PYR_DOUBLE, 10, 0, 5, PYR_RHS_ZERO, PYR_INIT_ZERO, 1);
        for (int k = 0; k < 6; k++) p.poisson.face[k] = neu[k] ? PYR_FACE_NEUMANN : PYR_FACE_DIRICHLET;
        int64_t m, *map;
        double *J = jacobi_matrix(dims, n, len, neu, &m, &map);
        const double rho = pyr_poisson_jacobi_radius(&p);
        char faces[16] = "";
        for (int k = 0; k < 2 * dims; k++) faces[k] = neu[k] ? 'N' : 'D';
        if (!pure) {
            const double want = power_radius(J, m, NULL);
            CHECK(fabs(rho - want) < 1e-9, "%dD %lldx%lldx%lld faces %s: rho %.15f, power iteration %.15f", dims, (long long)n[0],
                  (long long)n[1], (long long)n[2], faces, rho, want);
        } else {
            CHECK(rho == 1, "pure Neumann: rho %.17g (1)", rho);
            /* damped by gamma, the constant mode projected out (W-weighted mean): the radius is sigma */
            const double g = pyr_poisson_neumann_gamma(&p);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < m; j++) J[i * m + j] = (i == j ? 1 - g : 0) + g * J[i * m + j];
            double *w = malloc((size_t)m * sizeof *w);
            for (int64_t i = 0; i < m; i++) {
                const int64_t at[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
                w[i] = 1;
                for (int a = 0; a < dims; a++) w[i] *= at[a] == 0 || at[a] == n[a] - 1 ? 0.5 : 1;
            }
            const double sigma = power_radius(J, m, w);
            /* gamma = 2 / (3 - rho'), sigma = (1 + rho') / (3 - rho') = 1 - gamma (1 - rho') */
            const double inner = 3 - 2 / g, want = (1 + inner) / (3 - inner);
            CHECK(fabs(sigma - want) < 1e-9 && sigma < 1, "%dD %lldx%lldx%lld pure Neumann: damped radius %.15f, expected %.15f (gamma %.6f)",
                  dims, (long long)n[0], (long long)n[1], (long long)n[2], sigma, want, g);
            free(w);
        }
        free(J);
        free(map);
    }
}

static void part_faces(void)
{
    pyr_problem_t p;
    const int64_t n[3] = {20, 10, 1};
    make_poisson(&p, 2, n, NULL, PYR_DOUBLE, 10, 0, 5, PYR_RHS_ZERO, PYR_INIT_ZERO, 1);
    p.poisson.face[0] = p.poisson.face[1] = p.poisson.face[3] = PYR_FACE_NEUMANN;
    CHECK(pyr_poisson_fixed(&p, 0, 0) == 0 && pyr_poisson_fixed(&p, 0, 1) == 0 && pyr_poisson_fixed(&p, 1, 0) == 1 &&
              pyr_poisson_fixed(&p, 1, 1) == 0,
          "the whole grid updates its Neumann faces' nodes and keeps its Dirichlet faces'");
    /* a middle part of a grid of 60 x 10 along x holds neither x face; the last holds x+ */
    p.whole[0] = 60, p.whole[1] = 10, p.whole[2] = 1;
    p.origin[0] = 20;
    CHECK(pyr_poisson_fixed(&p, 0, 0) == 1 && pyr_poisson_fixed(&p, 0, 1) == 1, "a middle part: its x ends are the frozen edges of its halo");
    p.origin[0] = 40;
    CHECK(pyr_poisson_fixed(&p, 0, 0) == 1 && pyr_poisson_fixed(&p, 0, 1) == 0, "the last part holds the x+ face");
    CHECK(pyr_poisson_fixed(&p, 2, 0) == 1, "an axis beyond dims is fixed");
}

int main(void)
{
    keys();
    refusals();
    radius();
    part_faces();
    return check_report();
}
