/* Problems (what to solve): their defaults and their validation through the
 * scheme tables; the options' names. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "pyrgrid.h"
#include "schemes/scheme.h"

static const char *const axis_names[3] = {"nx", "ny", "nz"};
static const char *const length_names[3] = {"lx", "ly", "lz"};

void pyr_problem_default(pyr_problem_t *p)
{
    memset(p, 0, sizeof *p);
    p->dims = 2;
    p->n[0] = p->n[1] = 1025;
    p->n[2] = 1;
    p->length[0] = p->length[1] = p->length[2] = 1.0;
    p->equation = PYR_EQ_HEAT;
    p->heat.alpha = 1.0;
    p->heat.dt = 5e-8;
    p->steps = 1000;
    p->poisson.tolerance = 0;
    p->poisson.check_every = 20;
    p->poisson.omega = 1.0;
    p->poisson.iteration = PYR_ITER_JACOBI; /* every method runs it, so the result does not depend on the plan */
    p->poisson.cycle = PYR_CYCLE_V;
    p->poisson.pre_smooth = p->poisson.post_smooth = 3;
    p->poisson.smoother = PYR_SMOOTH_CHEBYSHEV;
    p->poisson.rhs = PYR_RHS_ZERO;
    p->maxwell.courant = 0.5;
    p->maxwell.eps_r = 1.0;
    p->maxwell.mu_r = 1.0;
    p->maxwell.cpml_order = 3.0;
    p->maxwell.cpml_kappa_max = 1.0;
    p->maxwell.cpml_alpha_max = 0.05;
    p->precision = PYR_DOUBLE;
    p->init = PYR_INIT_SINE;
    p->seed = 1;
}

pyr_status_t pyr_problem_validate(const pyr_problem_t *p)
{
    if (!p) return pyr_fail(PYR_ERR_ARG, "problem is NULL");
    if (p->dims < 1 || p->dims > 3)
        return pyr_fail(PYR_ERR_CONFIG, "grid.dims = %d: pyrgrid solves 1-, 2- and 3-dimensional grids; use dims = 1, 2 or 3", p->dims);
    const pyr_scheme_t *scheme = pyr_scheme_of(p->equation);
    if (!scheme) return pyr_fail(PYR_ERR_CONFIG, "scheme.equation: unknown equation %d; use heat or poisson", (int)p->equation);
    if (p->precision != PYR_FLOAT && p->precision != PYR_DOUBLE)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.precision must be float or double");
    for (int d = 0; d < 3; d++) {
        if (d < p->dims) {
            if (p->n[d] < 3)
                return pyr_fail(PYR_ERR_SIZE,
                                "grid.%s = %lld: each axis needs at least 3 nodes (two boundary nodes and one interior node); use %s >= 3",
                                axis_names[d], (long long)p->n[d], axis_names[d]);
            if (!(p->length[d] > 0) || !isfinite(p->length[d]))
                return pyr_fail(PYR_ERR_CONFIG, "grid.%s = %g: the length must be a positive finite number",
                                length_names[d], p->length[d]);
        } else if (p->n[d] != 1) {
            return pyr_fail(PYR_ERR_SIZE, "grid.%s = %lld but dims = %d: axes beyond dims must have 1 node (or raise dims)",
                            axis_names[d], (long long)p->n[d], p->dims);
        }
    }
    for (int d = 0; d < 3; d++) {
        if (!p->whole[d] && !p->origin[d]) continue;
        const int64_t w = d < p->dims ? 3 : 1;
        if (p->origin[d] < 0 || p->whole[d] < w || (d >= p->dims && p->whole[d] != 1) || p->origin[d] > p->whole[d] - p->n[d])
            return pyr_fail(PYR_ERR_CONFIG, "a part of a larger grid along %s: nodes %lld .. %lld of %lld do not fit; use 0 <= origin and "
                            "origin + n <= whole (or zero both for the whole grid)",
                            axis_names[d], (long long)p->origin[d], (long long)(p->origin[d] + p->n[d] - 1), (long long)p->whole[d]);
    }
    /* The whole grid must be addressable, with room for a second layer. */
    size_t elem = pyr_precision_size(p->precision);
    uint64_t count = 1;
    for (int d = 0; d < p->dims; d++) {
        if ((uint64_t)p->n[d] > (uint64_t)PTRDIFF_MAX / elem / count)
            return pyr_fail(PYR_ERR_SIZE,
                            "grid of %lld x %lld x %lld %s values does not fit in addressable memory (more than %llu bytes); use fewer nodes",
                            (long long)p->n[0], (long long)p->n[1], (long long)p->n[2],
                            pyr_precision_name(p->precision), (unsigned long long)PTRDIFF_MAX);
        count *= (uint64_t)p->n[d];
    }
    if (p->steps < 0)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.steps = %lld: the number of steps must be >= 0", (long long)p->steps);
    if (p->init < PYR_INIT_SINE || p->init > PYR_INIT_ZERO)
        return pyr_fail(PYR_ERR_CONFIG, "initial.kind: unknown initial field");
    if (p->init == PYR_INIT_FILE && p->init_file[0] == '\0')
        return pyr_fail(PYR_ERR_CONFIG, "initial.kind = file needs initial.file = PATH.npy");
    return scheme->validate(p);
}

/* ------------------------------------------------------------------ options */

void pyr_options_default(pyr_options_t *o) { memset(o, 0, sizeof *o); }

const char *pyr_method_name(pyr_method_t m)
{
    switch (m) {
    case PYR_METHOD_NAIVE: return "naive";
    case PYR_METHOD_TRIVIAL: return "trivial";
    case PYR_METHOD_PYRAMID: return "pyramid";
    case PYR_METHOD_LONGVECTOR: return "longvector";
    case PYR_METHOD_MULTIGRID: return "multigrid";
    default: return "auto";
    }
}

const char *pyr_decomp_name(pyr_decomp_t d)
{
    switch (d) {
    case PYR_DECOMP_SEGMENTS: return "segments";
    case PYR_DECOMP_STRIPS: return "strips";
    case PYR_DECOMP_BLOCKS: return "blocks";
    case PYR_DECOMP_SLABS: return "slabs";
    case PYR_DECOMP_SKEWED: return "skewed";
    default: return "auto";
    }
}

int pyr_decomp_from_name(const char *name, int allow_auto, pyr_decomp_t *out)
{
    static const pyr_decomp_t all[] = {PYR_DECOMP_AUTO, PYR_DECOMP_SEGMENTS, PYR_DECOMP_STRIPS, PYR_DECOMP_BLOCKS, PYR_DECOMP_SLABS,
                                       PYR_DECOMP_SKEWED};
    for (size_t i = allow_auto ? 0 : 1; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(name, pyr_decomp_name(all[i]))) {
            *out = all[i];
            return 1;
        }
    return 0;
}

int pyr_decomp_fits(pyr_decomp_t d, int dims)
{
    switch (d) {
    case PYR_DECOMP_AUTO: return 1;
    case PYR_DECOMP_SEGMENTS: return dims == 1;
    case PYR_DECOMP_STRIPS: return dims == 2;
    case PYR_DECOMP_BLOCKS: return dims >= 2;
    case PYR_DECOMP_SLABS: return dims == 3;
    case PYR_DECOMP_SKEWED: return dims >= 2;
    default: return 0;
    }
}

const char *pyr_backend_name(pyr_backend_kind_t b)
{
    switch (b) {
    case PYR_BACKEND_CPU: return "cpu";
    case PYR_BACKEND_CUDA: return "cuda";
    default: return "auto";
    }
}

pyr_status_t pyr_parse_bytes(const char *text, uint64_t *bytes)
{
    char *end = NULL;
    if (!text || !*text) return pyr_fail(PYR_ERR_CONFIG, "empty memory size; write e.g. 256MiB");
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0)
        return pyr_fail(PYR_ERR_CONFIG, "memory size '%s' is not a number of bytes; write e.g. 256MiB, 4G or 1048576", text);
    while (*end == ' ') end++;
    double mult = 1;
    char unit[8] = {0};
    size_t k = 0;
    while (end[k] && k < sizeof unit - 1) {
        unit[k] = (char)(end[k] >= 'a' && end[k] <= 'z' ? end[k] - 32 : end[k]);
        k++;
    }
    if (end[k]) return pyr_fail(PYR_ERR_CONFIG, "memory size '%s': unknown unit; use K, M, G, T (or KiB, MiB, GiB, TiB, or B)", text);
    if (!strcmp(unit, "") || !strcmp(unit, "B")) mult = 1;
    else if (!strcmp(unit, "K") || !strcmp(unit, "KB") || !strcmp(unit, "KIB")) mult = 1024.0;
    else if (!strcmp(unit, "M") || !strcmp(unit, "MB") || !strcmp(unit, "MIB")) mult = 1024.0 * 1024;
    else if (!strcmp(unit, "G") || !strcmp(unit, "GB") || !strcmp(unit, "GIB")) mult = 1024.0 * 1024 * 1024;
    else if (!strcmp(unit, "T") || !strcmp(unit, "TB") || !strcmp(unit, "TIB")) mult = 1024.0 * 1024 * 1024 * 1024;
    else return pyr_fail(PYR_ERR_CONFIG, "memory size '%s': unknown unit '%s'; use K, M, G, T (or KiB, MiB, GiB, TiB)", text, end);
    double b = v * mult;
    if (b >= 18446744073709551615.0) return pyr_fail(PYR_ERR_CONFIG, "memory size '%s' is too large", text);
    *bytes = (uint64_t)b;
    return PYR_OK;
}
