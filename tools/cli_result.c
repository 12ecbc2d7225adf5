/* The run's results checked before they are written (cli_run.h): a field
 * or a probe that went non-finite is a diverged run, said with the node and
 * what would help. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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
