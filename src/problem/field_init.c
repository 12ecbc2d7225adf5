/* Fields for a problem: made for its grid, filled with its initial values
 * (analytic, random, or read from .npy and HDF5 files), and the heat
 * scheme's exact solutions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/field.h"
#include "core/recipe.h"
#include "io/field_file.h"
#include "problem/field_init.h"
#include "pyrgrid.h"
#include "schemes/scheme.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

pyr_status_t pyr_field_create(const pyr_problem_t *problem, pyr_field_t **out)
{
    *out = NULL;
    PYR_TRY(pyr_problem_validate(problem));
    return pyr_field_alloc_grid(problem, out);
}

static inline void store(pyr_field_t *f, int64_t i, double v)
{
    if (f->precision == PYR_DOUBLE) ((double *)f->data)[i] = v;
    else ((float *)f->data)[i] = (float)v;
}

/* (x, y, z) are nodes of a grid of dims dimensions and n[] nodes per axis. */
static int on_boundary(int dims, const int64_t n[3], int64_t x, int64_t y, int64_t z)
{
    if (x == 0 || x == n[0] - 1) return 1;
    if (dims >= 2 && (y == 0 || y == n[1] - 1)) return 1;
    if (dims >= 3 && (z == 0 || z == n[2] - 1)) return 1;
    return 0;
}

/* The lowest eigenmode prod_d sin(pi i_d / (n_d - 1)), exactly 0 on the boundary. */
static double sine_mode(int dims, const int64_t n[3], int64_t x, int64_t y, int64_t z)
{
    if (on_boundary(dims, n, x, y, z)) return 0.0;
    int64_t idx[3] = {x, y, z};
    double v = 1.0;
    for (int d = 0; d < dims; d++) v *= sin(M_PI * (double)idx[d] / (double)(n[d] - 1));
    return v;
}

static pyr_status_t check_shape(const pyr_field_t *f, const pyr_problem_t *p)
{
    for (int d = 0; d < 3; d++)
        if (f->n[d] != p->n[d]) return pyr_fail(PYR_ERR_ARG, "field shape does not match the problem");
    if (f->precision != p->precision) return pyr_fail(PYR_ERR_ARG, "field precision does not match the problem");
    return PYR_OK;
}

/* Initial data from a file must be finite: a NaN or an infinity would
 * spread through the whole grid without a word.  Names the first bad value
 * by its NumPy index. */
static pyr_status_t check_finite(const pyr_field_t *f, const char *path, const int64_t origin[3])
{
    int64_t n = pyr_field_count(f), bad = -1;
    double v = 0;
    if (f->precision == PYR_DOUBLE) {
        const double *d = f->data;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (!isfinite(d[i])) bad = i, v = d[i];
    } else {
        const float *d = f->data;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (!isfinite(d[i])) bad = i, v = d[i];
    }
    if (bad < 0) return PYR_OK;
    int64_t x = origin[0] + bad % f->n[0], y = origin[1] + bad / f->n[0] % f->n[1], z = origin[2] + bad / f->n[0] / f->n[1];
    char index[96];
    if (f->dims == 1) snprintf(index, sizeof index, "[%lld]", (long long)x);
    else if (f->dims == 2) snprintf(index, sizeof index, "[%lld, %lld]", (long long)y, (long long)x);
    else snprintf(index, sizeof index, "[%lld, %lld, %lld]", (long long)z, (long long)y, (long long)x);
    return pyr_fail(PYR_ERR_FORMAT, "initial.file: %s holds %s at index %s (the first of its values that is not a finite "
                    "number); initial data must be finite (numpy.isfinite(a).all())",
                    path, isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf", index);
}

pyr_status_t pyr_field_init_file(pyr_field_t *f, const pyr_problem_t *p, const char *path, const char *dataset)
{
    PYR_TRY(check_shape(f, p));
    /* an HDF5 file holds the scheme's first field under its name */
    const pyr_scheme_t *scheme = pyr_scheme_of(p->equation);
    if (!dataset) dataset = scheme ? scheme->field[0].name : "u";
    pyr_status_t st = pyr_field_read_file(f, path, dataset);
    if (st != PYR_OK) return pyr_fail_context(st, "initial.file: ");
    const int64_t zero[3] = {0, 0, 0};
    return check_finite(f, path, zero);
}

pyr_status_t pyr_field_init_state(pyr_field_t *f, const pyr_problem_t *p, int i)
{
    const pyr_scheme_t *scheme = p ? pyr_scheme_of(p->equation) : NULL;
    if (!f || !scheme) return pyr_fail(PYR_ERR_ARG, "pyr_field_init_state: a field and a valid problem are required");
    if (i < 0 || i >= scheme->nfields || scheme->field[i].role == PYR_FIELD_INPUT)
        return pyr_fail(PYR_ERR_ARG, "pyr_field_init_state: field %d of the %s scheme is not a state field", i, scheme->name);
    if (scheme->init_state) return scheme->init_state(p, i, f);
    return pyr_field_init(f, p);
}

pyr_status_t pyr_field_init(pyr_field_t *f, const pyr_problem_t *p)
{
    PYR_TRY(check_shape(f, p));
    const pyr_scheme_t *scheme = pyr_scheme_of(p->equation);
    if (scheme && scheme->init_state) return scheme->init_state(p, 0, f);
    if (p->init == PYR_INIT_FILE) return pyr_field_init_file(f, p, p->init_file, NULL);
    const int64_t zero[3] = {0, 0, 0};
    return pyr_field_init_part(f, p, zero);
}

/* Every value is a function of the node's place in the whole grid (and the
 * seed), so a part made on its own (an MPI rank's, a device's) holds the
 * same bits as that part of the whole field. */
pyr_status_t pyr_field_init_part(pyr_field_t *f, const pyr_problem_t *p, const int64_t origin[3])
{
    for (int d = 0; d < 3; d++)
        if (origin[d] < 0 || f->n[d] < 1 || origin[d] + f->n[d] > p->n[d])
            return pyr_fail(PYR_ERR_ARG, "part of a field: nodes %lld..%lld of axis %d are outside the grid of %lld nodes",
                            (long long)origin[d], (long long)(origin[d] + f->n[d] - 1), d, (long long)p->n[d]);
    if (f->precision != p->precision) return pyr_fail(PYR_ERR_ARG, "field precision does not match the problem");
    if (p->init == PYR_INIT_FILE) {
        /* an HDF5 file holds the scheme's first field under its name */
        const pyr_scheme_t *scheme = pyr_scheme_of(p->equation);
        pyr_status_t st = pyr_field_read_part(f, p->dims, p->n, p->init_file, scheme ? scheme->field[0].name : "u", origin);
        if (st != PYR_OK) return pyr_fail_context(st, "initial.file: ");
        return check_finite(f, p->init_file, origin);
    }
    const int dims = p->dims;
    const int64_t *gn = p->n;
    const int64_t nx = f->n[0], ny = f->n[1], nz = f->n[2];
    const int dbl = f->precision == PYR_DOUBLE;
    if (p->init == PYR_INIT_SINE || p->init == PYR_INIT_GAUSS) {
        /* Separable: each axis's factor once per index (sin(pi i / (n - 1)), 0 on the boundary; or
         * the Gaussian's exp(-u^2)), a node's value their product in axis order, ((x) * y) * z, so a
         * part holds the same bits as the whole field; per node two multiplies and a store, at
         * memory speed. */
        static const double one = 1.0;
        const pyr_recipe_t r = {pyr_recipe_of_init(p->init), dims, {gn[0], gn[1], gn[2]}, {origin[0], origin[1], origin[2]}, p->seed};
        const int64_t lo[3] = {0, 0, 0};
        double *tab[3];
        PYR_TRY(pyr_recipe_tables(&r, lo, f->n, tab));
        const double *tx = tab[0];
#pragma omp parallel for collapse(2) schedule(static)
        for (int64_t z = 0; z < nz; z++)
            for (int64_t y = 0; y < ny; y++) {
                const double ty = dims >= 2 ? tab[1][y] : one, tz = dims >= 3 ? tab[2][z] : one;
                const int64_t row = (z * ny + y) * nx;
                /* the products, as the per-node loop makes them: 1 * tx is tx, then * ty, then * tz */
                if (dbl) {
                    double *o = (double *)f->data + row;
                    if (dims == 1) for (int64_t x = 0; x < nx; x++) o[x] = tx[x];
                    else if (dims == 2) for (int64_t x = 0; x < nx; x++) o[x] = tx[x] * ty;
                    else for (int64_t x = 0; x < nx; x++) o[x] = tx[x] * ty * tz;
                } else {
                    float *o = (float *)f->data + row;
                    if (dims == 1) for (int64_t x = 0; x < nx; x++) o[x] = (float)tx[x];
                    else if (dims == 2) for (int64_t x = 0; x < nx; x++) o[x] = (float)(tx[x] * ty);
                    else for (int64_t x = 0; x < nx; x++) o[x] = (float)(tx[x] * ty * tz);
                }
            }
        for (int d = 0; d < 3; d++) free(tab[d]);
        return PYR_OK;
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                const int64_t i = (z * ny + y) * nx + x;
                double v = 0;
                if (p->init == PYR_INIT_RANDOM) {
                    const int64_t gx = origin[0] + x, gy = origin[1] + y, gz = origin[2] + z;
                    const int64_t gi = (gz * gn[1] + gy) * gn[0] + gx; /* the node's index in the whole grid */
                    v = pyr_recipe_random(p->seed, gi);
                }
                store(f, i, v);
            }
    return PYR_OK;
}

pyr_status_t pyr_field_materialize(pyr_field_t *f)
{
    pyr_recipe_t r;
    /* taken first: a caller's zero field's page map is read once (a failure below fails the run that asked) */
    if (!pyr_field_take_recipe(f, &r)) return PYR_OK;
    /* the zeros are the pages as mapped; any other kind is made as that part of its whole grid */
    if (r.kind != PYR_RECIPE_ZERO) {
        static const pyr_init_kind_t init[] = {[PYR_RECIPE_SINE] = PYR_INIT_SINE, [PYR_RECIPE_GAUSS] = PYR_INIT_GAUSS,
                                               [PYR_RECIPE_RANDOM] = PYR_INIT_RANDOM};
        pyr_problem_t whole;
        memset(&whole, 0, sizeof whole);
        whole.dims = r.dims;
        for (int d = 0; d < 3; d++) whole.n[d] = r.whole[d];
        whole.precision = f->precision;
        whole.init = init[r.kind];
        whole.seed = r.seed;
        PYR_TRY(pyr_field_init_part(f, &whole, r.origin));
    }
    return PYR_OK;
}

/* Per-step amplification of the sine mode by the explicit scheme. */
static double sine_factor(const pyr_problem_t *p)
{
    double lambda = 1.0;
    for (int d = 0; d < p->dims; d++) {
        double s = sin(M_PI / (2.0 * (double)(p->n[d] - 1)));
        lambda -= 4.0 * pyr_problem_r(p, d) * s * s;
    }
    return lambda;
}

static pyr_status_t fill_scaled_sine(pyr_field_t *f, const pyr_problem_t *p, double amplitude)
{
    PYR_TRY(check_shape(f, p));
    const int64_t nx = f->n[0], ny = f->n[1], nz = f->n[2];
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) store(f, (z * ny + y) * nx + x, amplitude * sine_mode(f->dims, f->n, x, y, z));
    return PYR_OK;
}

pyr_status_t pyr_field_sine_discrete(pyr_field_t *f, const pyr_problem_t *p, int64_t steps)
{
    return fill_scaled_sine(f, p, pow(sine_factor(p), (double)steps));
}

pyr_status_t pyr_field_sine_continuous(pyr_field_t *f, const pyr_problem_t *p, int64_t steps)
{
    double k = 0;
    for (int d = 0; d < p->dims; d++) k += 1.0 / (p->length[d] * p->length[d]);
    double t = (double)steps * p->heat.dt;
    return fill_scaled_sine(f, p, exp(-p->heat.alpha * p->heat.alpha * M_PI * M_PI * k * t));
}
