/* The run's results (cli_run.h): what a scheme writes, from its fields as
 * the public API describes them, and the writers of its images and probes'
 * series; checked before they are written: a field or a probe that went
 * non-finite is a diverged run, said with the node and what would help. */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"

/* What makes values outgrow the precision's range, and what would help. */
static void diverged_advice(const pyr_problem_t *p, char *out, size_t size)
{
    const int f = p->precision == PYR_FLOAT;
    const char *what = p->equation == PYR_EQ_MAXWELL  ? "the sources' amplitudes or the initial fields"
                       : p->equation == PYR_EQ_POISSON ? "the initial guess or the right-hand side"
                                                       : "the initial data";
    snprintf(out, size, "values this large overflow %s arithmetic (the largest is %.3g): make %s smaller%s", f ? "float" : "double",
             f ? (double)FLT_MAX : DBL_MAX, what, f ? ", or use scheme.precision = double" : "");
}

static const char *nonfinite_name(double v) { return isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf"; }

/* The first value of f that is not finite: its flat index, or -1. */
static int64_t first_nonfinite(const pyr_field_t *f)
{
    const int64_t n = pyr_field_count(f);
    /* a whole block's exponent bits at once: cheap beside the run, and exact (all ones: NaN or an infinity) */
    const int64_t block = 4096;
    for (int64_t b = 0; b < n; b += block) {
        const int64_t e = b + block < n ? b + block : n;
        int bad = 0;
        if (f->precision == PYR_DOUBLE) {
            const double *d = f->data;
            for (int64_t i = b; i < e; i++) {
                uint64_t u;
                memcpy(&u, &d[i], sizeof u);
                bad |= (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull;
            }
        } else {
            const float *d = f->data;
            for (int64_t i = b; i < e; i++) {
                uint32_t u;
                memcpy(&u, &d[i], sizeof u);
                bad |= (u & 0x7f800000u) == 0x7f800000u;
            }
        }
        if (bad)
            for (int64_t i = b; i < e; i++) {
                const double v = f->precision == PYR_DOUBLE ? ((const double *)f->data)[i] : (double)((const float *)f->data)[i];
                if (!isfinite(v)) return i;
            }
    }
    return -1;
}

pyr_status_t pyr_cli_check_finite(const pyr_problem_t *p, const pyr_field_t *f, const char *name, int64_t step, const char *when)
{
    const int64_t k = first_nonfinite(f);
    if (k < 0) return PYR_OK;
    const double v = f->precision == PYR_DOUBLE ? ((const double *)f->data)[k] : (double)((const float *)f->data)[k];
    const int64_t x = k % f->n[0], y = k / f->n[0] % f->n[1], z = k / f->n[0] / f->n[1];
    char node[96], advice[256];
    if (f->dims == 1) snprintf(node, sizeof node, "(x=%lld)", (long long)(x + p->origin[0]));
    else if (f->dims == 2) snprintf(node, sizeof node, "(x=%lld, y=%lld)", (long long)(x + p->origin[0]), (long long)(y + p->origin[1]));
    else
        snprintf(node, sizeof node, "(x=%lld, y=%lld, z=%lld)", (long long)(x + p->origin[0]), (long long)(y + p->origin[1]),
                 (long long)(z + p->origin[2]));
    diverged_advice(p, advice, sizeof advice);
    return pyr_fail(PYR_ERR_NUMERIC, "the fields diverged (non-finite) by %s %lld (%s): %s is %s at node %s; %s",
                    p->equation == PYR_EQ_POISSON ? "sweep" : "step", (long long)step, when, name, nonfinite_name(v), node, advice);
}

pyr_status_t pyr_cli_check_probes(const pyr_cli_config_t *cfg, int64_t first, int64_t count, const double *values, int nprobes)
{
    /* the first step a probe reads a non-finite value: the fields diverged there */
    for (int64_t k = 0; k < count; k++)
        for (int i = 0; i < nprobes; i++) {
            const double v = values[k * nprobes + i];
            if (isfinite(v)) continue;
            const pyr_problem_t *p = &cfg->problem;
            const pyr_probe_t *pr = &p->maxwell.probes[i];
            char advice[256], node[80];
            diverged_advice(p, advice, sizeof advice);
            if (p->dims == 2) snprintf(node, sizeof node, "%lld %lld", (long long)pr->node[0], (long long)pr->node[1]);
            else snprintf(node, sizeof node, "%lld %lld %lld", (long long)pr->node[0], (long long)pr->node[1], (long long)pr->node[2]);
            return pyr_fail(PYR_ERR_NUMERIC, "the fields diverged (non-finite) at step %lld: probe %d (%s %s) reads %s; %s",
                            (long long)pyr_result_step_of(&cfg->out, first + k + 1), i + 1, pyr_scheme_field_name(PYR_EQ_MAXWELL, pr->component), node,
                            nonfinite_name(v), advice);
        }
    return PYR_OK;
}

/* ----------------------------------------------------------- the outputs */

/* The field output.image shows unless output.component says: the one the
 * mode's source usually drives (Maxwell's Ez, a 2D TE mode's Hz), else the
 * scheme's first state field. */
static int default_image(const pyr_problem_t *p)
{
    if (p->equation == PYR_EQ_MAXWELL) return p->dims == 2 && p->maxwell.te ? PYR_HZ : PYR_EZ;
    return 0;
}

pyr_status_t pyr_cli_outputs_of(const pyr_cli_config_t *cfg, pyr_cli_outputs_t *o)
{
    const pyr_problem_t *p = &cfg->problem;
    memset(o, 0, sizeof *o);
    o->h5 = pyr_result_is_h5(&cfg->out);
    if (!o->h5) pyr_result_base(&cfg->out, o->base, sizeof o->base);
    int states = 0;
    for (int i = 0; i < pyr_scheme_field_count(p->equation) && i < PYR_CLI_FIELDS; i++) {
        if (!pyr_scheme_field_updated(p->equation, i)) continue;
        states++;
        if (pyr_problem_field_used(p, i)) o->state[o->nstate++] = i;
    }
    o->several = states > 1;
    o->nprobes = p->maxwell.nprobes;
    o->image = cfg->out.image_component >= 0 ? cfg->out.image_component : default_image(p);
    int shown = 0;
    for (int k = 0; k < o->nstate; k++) shown |= o->state[k] == o->image;
    if (!shown) {
        char names[128] = "";
        for (int k = 0; k < o->nstate; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? " " : "", pyr_scheme_field_name(p->equation, o->state[k]));
        return pyr_fail(PYR_ERR_CONFIG, "output.component = %s is not a component of this grid's mode; use one of %s",
                        pyr_scheme_field_name(p->equation, o->image), names);
    }
    return PYR_OK;
}

void pyr_cli_state_prefix(const pyr_cli_outputs_t *o, const pyr_problem_t *p, int i, char *out, size_t size)
{
    if (o->several) snprintf(out, size, "%s_%s", o->base, pyr_scheme_field_name(p->equation, i));
    else snprintf(out, size, "%s", o->base);
}

void pyr_cli_state_path(const pyr_cli_outputs_t *o, const pyr_problem_t *p, const char *whole, const char *base, int i, int64_t step,
                        char *out, size_t size)
{
    const char *name = pyr_scheme_field_name(p->equation, i);
    if (!o->several && step < 0) snprintf(out, size, "%s", whole);
    else if (!o->several) snprintf(out, size, "%s_%06lld.npy", base, (long long)step);
    else if (step < 0) snprintf(out, size, "%s_%s.npy", base, name);
    else snprintf(out, size, "%s_%s_%06lld.npy", base, name, (long long)step);
}

double pyr_cli_cells(const pyr_problem_t *p)
{
    /* Maxwell's unknowns live on the Yee cells between the nodes */
    if (p->equation != PYR_EQ_MAXWELL) return (double)pyr_problem_interior(p);
    double cells = 1;
    for (int d = 0; d < p->dims; d++) cells *= (double)(p->n[d] - 1);
    return cells;
}

/* The staggered offset, in cells along axis a, of state field i's nodes:
 * half a cell for Yee's components (as result.c lays them out), none for
 * another scheme's. */
static double field_offset(const pyr_problem_t *p, int i, int a)
{
    if (p->equation != PYR_EQ_MAXWELL || i >= 6 || a >= p->dims) return 0.0;
    return (i < 3) == (a == i % 3) ? 0.5 : 0.0;
}

pyr_status_t pyr_cli_write_image_with(const pyr_problem_outputs_t *o, const char *path, const pyr_field_t *f, const pyr_problem_t *p, int i,
                                      int64_t step, double t)
{
    const char *name = pyr_scheme_field_name(p->equation, i);
    const int image_width = o ? o->image_width : 0;
    char title[256], plane[64] = "", when[96];
    double dt = 0;
    if (pyr_problem_time_step(p, &dt) != PYR_OK) pyr_clear_error();
    if (f->dims == 3) snprintf(plane, sizeof plane, ", plane z = %.4g,", ((double)(f->n[2] / 2) + field_offset(p, i, 2)) * pyr_problem_h(p, 2));
    if (dt > 0) snprintf(when, sizeof when, " after %lld steps (t = %.4g)", (long long)step, t);
    else if (p->equation == PYR_EQ_POISSON)
        snprintf(when, sizeof when, " Poisson, after %lld %s", (long long)step,
                 p->poisson.iteration == PYR_ITER_MULTIGRID ? (step == 1 ? "cycle" : "cycles") : step == 1 ? "sweep" : "sweeps");
    else {
        /* a scheme without time: its name ("u, Poisson") */
        snprintf(when, sizeof when, " %s", pyr_equation_name(p->equation));
        when[1] = (char)toupper((unsigned char)when[1]);
    }
    if (dt <= 0 && !plane[0]) snprintf(plane, sizeof plane, ",");
    snprintf(title, sizeof title, "%s%s%s%s", name, f->dims == 1 ? "(x)" : "", plane, when);
    if (f->dims == 1) {
        const int64_t n = f->n[0];
        double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
        if (!x || !y) {
            free(x);
            free(y);
            return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the plot of %s", name);
        }
        for (int64_t k = 0; k < n; k++) {
            x[k] = p->length[0] * (double)k / (double)(n - 1);
            y[k] = f->precision == PYR_DOUBLE ? ((const double *)f->data)[k] : ((const float *)f->data)[k];
        }
        pyr_plot_series_t s = {.label = name, .x = x, .y = y, .n = (int)(n < 2147483647 ? n : 2147483647)};
        pyr_plot_opts_t po = {.title = title, .xlabel = "x", .ylabel = name, .width = image_width, .height = image_width * 2 / 3};
        const pyr_status_t st = pyr_plot_write_png(path, &s, 1, &po);
        free(x);
        free(y);
        return st;
    }
    const char *data = f->data;
    if (f->dims == 3) data += (size_t)(f->n[2] / 2) * (size_t)(f->n[0] * f->n[1]) * pyr_precision_size(f->precision);
    /* in the grid's coordinates (node k at k h, a staggered component's half a cell on), y upward as in a plot */
    const double hx = pyr_problem_h(p, 0), hy = pyr_problem_h(p, 1);
    pyr_heatmap_opts_t ho = {.title = title,
                             .image_width = image_width,
                             .colormap = o ? o->colormap : PYR_COLORMAP_AUTO,
                             .x0 = field_offset(p, i, 0) * hx,
                             .x1 = ((double)(f->n[0] - 1) + field_offset(p, i, 0)) * hx,
                             .y0 = field_offset(p, i, 1) * hy,
                             .y1 = ((double)(f->n[1] - 1) + field_offset(p, i, 1)) * hy,
                             .bar_label = name,
                             .y_up = 1};
    if (!(ho.x1 > ho.x0)) ho.x0 = ho.x1 = 0; /* one node across: no axis there */
    if (!(ho.y1 > ho.y0)) ho.y0 = ho.y1 = 0;
    return pyr_png_write_heatmap(path, data, f->precision, f->n[0], f->n[1], &ho);
}

pyr_status_t pyr_cli_write_image(const char *path, const pyr_field_t *f, const pyr_problem_t *p, int i, int64_t step, double t)
{
    return pyr_cli_write_image_with(NULL, path, f, p, i, step, t);
}

pyr_status_t pyr_cli_write_probes_png(const pyr_problem_outputs_t *o, const char *path, const pyr_problem_t *p, const double *series,
                                      int64_t nseries, double dt)
{
    const int nprobes = p->maxwell.nprobes;
    const int n = (int)(nseries < 2147483647 ? nseries : 2147483647);
    double *t = malloc(((size_t)n + 1) * sizeof *t), *y = malloc(((size_t)n * (size_t)nprobes + 1) * sizeof *y);
    pyr_plot_series_t *s = calloc((size_t)nprobes + 1, sizeof *s);
    char(*labels)[96] = calloc((size_t)nprobes + 1, sizeof *labels);
    if (!t || !y || !s || !labels) {
        free(t);
        free(y);
        free(s);
        free(labels);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the plot of the probes");
    }
    /* after step k + 1: E at t = (k + 1) dt, as the CSV says */
    for (int k = 0; k < n; k++) t[k] = (double)(k + 1) * dt;
    for (int j = 0; j < nprobes; j++) {
        const pyr_probe_t *pr = &p->maxwell.probes[j];
        for (int k = 0; k < n; k++) y[(size_t)j * (size_t)n + (size_t)k] = series[(size_t)k * (size_t)nprobes + (size_t)j];
        if (p->dims == 3)
            snprintf(labels[j], sizeof labels[j], "probe %d: %s at %lld, %lld, %lld", j + 1, pyr_scheme_field_name(p->equation, pr->component),
                     (long long)pr->node[0], (long long)pr->node[1], (long long)pr->node[2]);
        else
            snprintf(labels[j], sizeof labels[j], "probe %d: %s at %lld, %lld", j + 1, pyr_scheme_field_name(p->equation, pr->component),
                     (long long)pr->node[0], (long long)pr->node[1]);
        s[j] = (pyr_plot_series_t){.label = labels[j], .x = t, .y = y + (size_t)j * (size_t)n, .n = n};
    }
    char title[96];
    snprintf(title, sizeof title, "probes over %lld steps", (long long)nseries);
    const int w = o ? o->image_width : 0;
    const pyr_plot_opts_t po = {.title = title, .xlabel = "time t", .ylabel = "field at the probe", .width = w, .height = w * 2 / 3};
    const pyr_status_t st = pyr_plot_write_png(path, s, nprobes, &po);
    free(t);
    free(y);
    free(s);
    free(labels);
    return st;
}

pyr_status_t pyr_cli_write_probes(const char *path, const pyr_problem_t *p, const double *series, int64_t nseries, double dt)
{
    const int nprobes = p->maxwell.nprobes;
    pyr_output_file_t *af = NULL;
    pyr_status_t st = pyr_output_file_open(&af, path);
    if (st != PYR_OK) return st;
    FILE *f = pyr_output_file_stream(af);
    fprintf(f, "step,t");
    for (int i = 0; i < nprobes; i++) {
        const pyr_probe_t *pr = &p->maxwell.probes[i];
        fprintf(f, ",%s(%lld;%lld", pyr_scheme_field_name(p->equation, pr->component), (long long)pr->node[0], (long long)pr->node[1]);
        if (p->dims == 3) fprintf(f, ";%lld", (long long)pr->node[2]);
        fprintf(f, ")");
    }
    fprintf(f, "\n");
    for (int64_t k = 0; k < nseries; k++) {
        /* after step k + 1: E at t = (k + 1) dt (H half a step earlier) */
        fprintf(f, "%lld,%.17g", (long long)(k + 1), (double)(k + 1) * dt);
        for (int i = 0; i < nprobes; i++) fprintf(f, ",%.17g", series[k * nprobes + i]);
        fprintf(f, "\n");
    }
    return pyr_output_file_commit(&af);
}
