/* pyrgrid run for scheme.equation = maxwell (FDTD): the components of the
 * grid's mode from [initial], the run with a progress bar, and its outputs:
 * one .npy per component (output.field = NAME.npy gives NAME_Ex.npy ...),
 * snapshots every output.every steps (NAME_Ex_000200.npy ...), or one HDF5
 * file (output.field = NAME.h5: every component of the mode and the
 * coefficients that vary, snapshots inside, and the XDMF sidecar NAME.xmf;
 * cli_result.c), the probes' series as CSV (output.probes: step,t,then one
 * column per probe), a PNG of one component (output.component; 3D: the
 * middle z-plane), and the run report (--report).  Every file is staged and
 * committed together at the end (a failure leaves none new). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"

typedef struct {
    const pyr_cli_config_t *cfg;
    char base[PYR_PATH_MAX];
    int h5;                   /* output.field is HDF5: snapshots go into it */
    pyr_result_t *result;
    pyr_cli_progress_t bar;
    /* the probes' series */
    double *series;
    int64_t nseries, cap;
    int nprobes;
} mx_state_t;

static int mx_progress(void *user, int64_t done, int64_t total)
{
    pyr_cli_progress_draw(&((mx_state_t *)user)->bar, done, total);
    return 0;
}

static void shape_of(const pyr_field_t *f, int64_t shape[3])
{
    for (int d = 0; d < f->dims; d++) shape[d] = f->n[f->dims - 1 - d];
}

void pyr_cli_maxwell_path(const char *base, int c, int64_t step, char *out, size_t size)
{
    if (step >= 0) snprintf(out, size, "%s_%s_%06lld.npy", base, pyr_scheme_field_name(PYR_EQ_MAXWELL, c), (long long)step);
    else snprintf(out, size, "%s_%s.npy", base, pyr_scheme_field_name(PYR_EQ_MAXWELL, c));
}

static pyr_status_t mx_snapshot(void *user, pyr_field_t *const *fields, int nfields, int64_t step)
{
    mx_state_t *s = user;
    const int64_t at = pyr_result_step_of(&s->cfg->out, step);
    for (int c = 0; c < 6 && c < nfields; c++)
        if (fields[c]) CLI_TRY(pyr_cli_check_finite(&s->cfg->problem, fields[c], pyr_scheme_field_name(PYR_EQ_MAXWELL, c), at, "at a snapshot"));
    if (s->h5) return pyr_result_snapshot(s->result, step);
    for (int c = 0; c < 6 && c < nfields; c++) {
        if (!fields[c]) continue;
        char path[PYR_PATH_MAX + 64];
        pyr_cli_maxwell_path(s->base, c, step, path, sizeof path);
        int64_t shape[3];
        shape_of(fields[c], shape);
        const pyr_status_t w = pyr_npy_write(path, fields[c]->dims, shape, fields[c]->precision, fields[c]->data);
        if (w != PYR_OK) return pyr_fail_context(w, "output.every: ");
    }
    return PYR_OK;
}

static pyr_status_t mx_probe(void *user, int64_t first, int64_t count, const double *values, int nprobes)
{
    mx_state_t *s = user;
    CLI_TRY(pyr_cli_check_probes(s->cfg, first, count, values, nprobes));
    if (s->nseries + count > s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 1024;
        while (cap < s->nseries + count) cap *= 2;
        double *g = realloc(s->series, (size_t)(cap * nprobes) * sizeof *g);
        if (!g) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the probes' series (%lld steps)", (long long)(s->nseries + count));
        s->series = g;
        s->cap = cap;
    }
    memcpy(s->series + s->nseries * nprobes, values, (size_t)(count * nprobes) * sizeof *values);
    s->nseries += count;
    return PYR_OK;
}

pyr_status_t pyr_cli_maxwell_write_probes(const char *path, const pyr_problem_t *p, const double *series, int64_t nseries, double dt)
{
    const int nprobes = p->maxwell.nprobes;
    pyr_output_file_t *af = NULL;
    CLI_TRY(pyr_output_file_open(&af, path));
    FILE *f = pyr_output_file_stream(af);
    fprintf(f, "step,t");
    for (int i = 0; i < p->maxwell.nprobes; i++) {
        const pyr_probe_t *pr = &p->maxwell.probes[i];
        if (p->dims == 2)
            fprintf(f, ",%s(%lld;%lld)", pyr_scheme_field_name(PYR_EQ_MAXWELL, pr->component), (long long)pr->node[0], (long long)pr->node[1]);
        else
            fprintf(f, ",%s(%lld;%lld;%lld)", pyr_scheme_field_name(PYR_EQ_MAXWELL, pr->component), (long long)pr->node[0], (long long)pr->node[1],
                    (long long)pr->node[2]);
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

static pyr_status_t write_image(const char *path, const pyr_field_t *f, int c, int64_t steps)
{
    const size_t elem = pyr_precision_size(f->precision);
    const char *plane = f->data;
    char title[160];
    if (f->dims == 3) {
        plane += (size_t)(f->n[2] / 2) * (size_t)(f->n[0] * f->n[1]) * elem;
        snprintf(title, sizeof title, "%s, plane z = %lld, after %lld steps", pyr_scheme_field_name(PYR_EQ_MAXWELL, c), (long long)(f->n[2] / 2),
                 (long long)steps);
    } else {
        snprintf(title, sizeof title, "%s after %lld steps", pyr_scheme_field_name(PYR_EQ_MAXWELL, c), (long long)steps);
    }
    pyr_heatmap_opts_t o = {.title = title};
    return pyr_png_write_heatmap(path, plane, f->precision, f->n[0], f->n[1], &o);
}

int pyr_cli_run_maxwell(pyr_cli_config_t *cfg, int quiet, const char *report)
{
    pyr_problem_t *p = &cfg->problem;
    mx_state_t st;
    memset(&st, 0, sizeof st);
    st.cfg = cfg;
    st.h5 = pyr_result_is_h5(&cfg->out);
    char sidecar[PYR_PATH_MAX + 8];
    pyr_result_sidecar(&cfg->problem, &cfg->out, sidecar, sizeof sidecar);
    /* .npy: NAME_Ex.npy ... (st.base is NAME); HDF5: the one file (st.base stays empty) */
    if (!st.h5) pyr_result_base(&cfg->out, st.base, sizeof st.base);
    const int image_c = cfg->out.image_component >= 0 ? cfg->out.image_component : (p->dims == 2 && p->maxwell.te ? PYR_HZ : PYR_EZ);
    if (!pyr_problem_field_used(p, image_c)) {
        fprintf(stderr, "pyrgrid: error: output.component = %s is not a component of this grid's mode; use one of %s\n",
                pyr_scheme_field_name(PYR_EQ_MAXWELL, image_c), p->dims == 3 ? "Ex Ey Ez Hx Hy Hz" : p->maxwell.te ? "Hz Ex Ey" : "Ez Hx Hy");
        return PYR_EXIT_ERROR;
    }
    if (cfg->out.every > 0 && !st.base[0] && !st.h5) {
        fprintf(stderr, "pyrgrid: error: output.every needs output.field = NAME.npy (or NAME.h5) to name the snapshots\n");
        return PYR_EXIT_ERROR;
    }
    if (p->maxwell.nprobes && !cfg->probes[0] && !quiet)
        fprintf(stderr, "pyrgrid: note: [probe] is set but output.probes is not: the probes' series are not written\n");
    /* outputs checked before the run: writable, not an input, not each other */
    {
        pyr_named_path_t outs[12];
        char names[6][PYR_PATH_MAX + 16], sidecar_name[PYR_PATH_MAX + 64];
        int nout = 0;
        if (st.h5) {
            outs[nout].name = "output.field";
            outs[nout++].path = cfg->field;
            snprintf(sidecar_name, sizeof sidecar_name, "the XDMF sidecar of output.field (%s)", cfg->field);
            outs[nout].name = sidecar_name;
            outs[nout++].path = sidecar;
        }
        outs[nout].name = "--report";
        outs[nout++].path = report;
        for (int c = 0; c < 6; c++) {
            if (!st.base[0] || !pyr_problem_field_used(p, c)) continue;
            pyr_cli_maxwell_path(st.base, c, -1, names[c], sizeof names[c]);
            outs[nout].name = "output.field";
            outs[nout++].path = names[c];
        }
        outs[nout].name = "output.image";
        outs[nout++].path = cfg->image;
        outs[nout].name = "output.probes";
        outs[nout++].path = cfg->probes;
        pyr_named_path_t ins[10] = {{"the problem file", cfg->source},
                                    {"material.eps_file", p->maxwell.eps_file},
                                    {"material.sigma_file", p->maxwell.sigma_file},
                                    {"material.mu_file", p->maxwell.mu_file}};
        int nin = 4;
        char init_names[6][PYR_PATH_MAX + 16];
        if (p->init == PYR_INIT_FILE)
            for (int c = 0; c < 6; c++) {
                if (!pyr_problem_field_used(p, c)) continue;
                pyr_cli_maxwell_path(p->init_file, c, -1, init_names[c], sizeof init_names[c]);
                ins[nin].name = "initial.file";
                ins[nin++].path = init_names[c];
            }
        if (pyr_check_outputs(outs, nout, ins, nin) != PYR_OK) return pyr_cli_fail(NULL);
        /* .npy snapshots: NAME_Ez_000010.npy ..., one prefix for each component */
        char prefix_names[6][PYR_PATH_MAX + 16];
        const char *prefixes[6];
        int nprefixes = 0;
        for (int c = 0; c < 6 && cfg->out.every > 0 && st.base[0]; c++) {
            if (!pyr_problem_field_used(p, c)) continue;
            snprintf(prefix_names[nprefixes], sizeof prefix_names[nprefixes], "%s_%s", st.base, pyr_scheme_field_name(PYR_EQ_MAXWELL, c));
            prefixes[nprefixes] = prefix_names[nprefixes];
            nprefixes++;
        }
        if (nprefixes && pyr_result_check_snapshots(&cfg->out, prefixes, nprefixes, outs, nout, ins, nin) != PYR_OK) return pyr_cli_fail(NULL);
    }

    double seconds[4] = {0, 0, 0, 0}, t0 = pyr_seconds_now(); /* plan, initial fields, execute, outputs */
    pyr_cli_wisdom_import();
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(p, &cfg->options, &plan) != PYR_OK) return pyr_cli_fail(NULL);
    pyr_plan_info_t info;
    pyr_plan_get_info(plan, &info);
    if (info.notice && info.notice[0] && !quiet) fprintf(stderr, "pyrgrid: %s\n", info.notice);
    seconds[0] = pyr_seconds_now() - t0;

    pyr_field_t *fields[PYR_CLI_FIELDS] = {NULL};
    int rc = PYR_EXIT_OK;
    for (int c = 0; c < 6 && rc == PYR_EXIT_OK; c++) {
        if (!pyr_problem_field_used(p, c)) continue;
        if (pyr_field_create(p, &fields[c]) != PYR_OK || pyr_field_init_state(fields[c], p, c) != PYR_OK) rc = pyr_cli_fail("initial fields: ");
    }
    /* an HDF5 result stores the coefficients that vary per node (the run then uses these, not its own copies) */
    for (int i = 6; i < pyr_scheme_field_count(p->equation) && rc == PYR_EXIT_OK && st.h5; i++) {
        if (!pyr_scheme_field_input(p->equation, i) || !pyr_problem_field_used(p, i)) continue;
        if (pyr_field_create(p, &fields[i]) != PYR_OK || pyr_field_init_input(fields[i], p, i) != PYR_OK) rc = pyr_cli_fail("materials: ");
    }
    if (rc == PYR_EXIT_OK && st.h5 && pyr_result_open(&st.result, &cfg->problem, &cfg->out, plan, fields, pyr_scheme_field_count(p->equation)) != PYR_OK) rc = pyr_cli_fail(NULL);
    seconds[1] = pyr_seconds_now() - t0 - seconds[0];
    double dt = 0;
    (void)pyr_problem_time_step(p, &dt);
    pyr_run_info_t ri;
    memset(&ri, 0, sizeof ri);
    double secs = 0;
    if (rc == PYR_EXIT_OK) {
        st.nprobes = p->maxwell.nprobes;
        pyr_hooks_t hooks = {.progress = mx_progress,
                             .user = &st,
                             .snapshot_fields = cfg->out.every > 0 ? mx_snapshot : NULL,
                             .probe = st.nprobes ? mx_probe : NULL};
        pyr_cli_progress_begin(&st.bar, quiet);
        pyr_status_t s = pyr_execute_fields(plan, fields, pyr_scheme_field_count(p->equation), &hooks, &ri);
        secs = pyr_cli_progress_end(&st.bar);
        seconds[2] = secs;
        if (s != PYR_OK) rc = pyr_cli_fail(NULL);
        /* the end of the run: no output of diverged fields */
        for (int c = 0; c < 6 && rc == PYR_EXIT_OK; c++)
            if (fields[c] && pyr_cli_check_finite(p, fields[c], pyr_scheme_field_name(PYR_EQ_MAXWELL, c), pyr_result_step_of(&cfg->out, ri.steps),
                                                  "the end of the run") != PYR_OK)
                rc = pyr_cli_fail(NULL);
    }
    /* Yee cells x steps per second */
    double cells = 1;
    for (int d = 0; d < p->dims; d++) cells *= (double)(p->n[d] - 1);
    cells *= (double)ri.steps;
    const double gcells = secs > 0 ? cells / secs * 1e-9 : 0.0;
    if (rc == PYR_EXIT_OK) {
        pyr_output_stage_t *stage = NULL;
        const char *failed = pyr_output_stage_begin(&stage) != PYR_OK ? "" : NULL;
        const double t_out = pyr_seconds_now();
        if (st.h5 && pyr_result_final(st.result, &ri) != PYR_OK) failed = "output.field: ";
        for (int c = 0; c < 6 && !failed; c++) {
            if (!fields[c] || !st.base[0]) continue;
            char path[PYR_PATH_MAX + 16];
            pyr_cli_maxwell_path(st.base, c, -1, path, sizeof path);
            int64_t shape[3];
            shape_of(fields[c], shape);
            if (pyr_npy_write(path, fields[c]->dims, shape, fields[c]->precision, fields[c]->data) != PYR_OK) failed = "output.field: ";
        }
        if (!failed && cfg->image[0] && write_image(cfg->image, fields[image_c], image_c, ri.steps) != PYR_OK) failed = "output.image: ";
        if (!failed && cfg->probes[0] && st.nprobes && pyr_cli_maxwell_write_probes(cfg->probes, p, st.series, st.nseries, dt) != PYR_OK) failed = "output.probes: ";
        if (!failed && report) {
            seconds[3] = pyr_seconds_now() - t_out;
            if (pyr_run_report_write(report, &cfg->problem, &cfg->out, &cfg->options, plan, &ri, seconds, gcells, sidecar, 0) != PYR_OK)
                failed = "--report: ";
        }
        if (!failed && pyr_output_stage_commit(&stage) != PYR_OK) failed = "";
        pyr_output_stage_abort(&stage);
        if (failed) rc = pyr_cli_fail(failed);
    }
    if (st.h5) pyr_result_abort(&st.result);
    pyr_plan_destroy(&plan);
    for (int i = 0; i < PYR_CLI_FIELDS; i++) pyr_field_destroy(&fields[i]);
    free(st.series);
    if (rc != PYR_EXIT_OK) return rc;

    pyr_cli_summary_t sum = {.problem = p, .plan = &info, .backend = info.backend, .run = &ri, .counts = ri.counts, .halo_sent = ri.halo_sent,
                             .halo_received = ri.halo_received, .seconds = secs, .gcells = gcells};
    pyr_cli_print_summary(&sum);
    return PYR_EXIT_OK;
}
