/* Field outputs and reports of `pyrgrid run` (cli_result.h). */
#include "cli_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/npy.h"
#include "io/report.h"
#include "plan/plan.h"

int pyr_cli_result_is_h5(const pyr_config_t *cfg) { return cfg->field[0] && pyr_h5_is_path(cfg->field); }

void pyr_cli_result_sidecar(const pyr_config_t *cfg, char *out, size_t size)
{
    out[0] = 0;
    if (pyr_cli_result_is_h5(cfg) && cfg->problem.dims >= 2) pyr_h5_sidecar_path(cfg->field, out, size);
}

int64_t pyr_cli_step_of(const pyr_config_t *cfg, int64_t done) { return cfg->start_step + done; }

double pyr_cli_time_of(const pyr_config_t *cfg, int64_t done)
{
    /* heat: t advances by dt a step from the restart's time; Poisson has none */
    if (cfg->problem.equation != PYR_EQ_HEAT) return 0.0;
    return cfg->start_t + (double)done * cfg->problem.heat.dt;
}

static void shape_of(const pyr_field_t *f, int64_t shape[3])
{
    for (int d = 0; d < f->dims; d++) shape[d] = f->n[f->dims - 1 - d];
}

pyr_status_t pyr_cli_result_open(pyr_cli_result_t *r, const pyr_config_t *cfg, const pyr_plan_t *plan, pyr_field_t **fields, int nfields)
{
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    r->fields = fields;
    r->nfields = nfields;
    r->h5 = pyr_cli_result_is_h5(cfg);
    snprintf(r->snap_base, sizeof r->snap_base, "%s", cfg->field);
    size_t n = strlen(r->snap_base);
    if (n > 4 && !strcmp(r->snap_base + n - 4, ".npy")) r->snap_base[n - 4] = 0;
    if (!r->h5) return PYR_OK;
    const pyr_problem_t *p = &cfg->problem;
    pyr_h5_desc_t d;
    memset(&d, 0, sizeof d);
    d.problem = p;
    d.nfields = nfields;
    for (int i = 0; i < nfields && i < PYR_H5_MAX_FIELDS; i++) {
        d.name[i] = pyr_scheme_field_name(p->equation, i);
        d.updated[i] = pyr_scheme_field_updated(p->equation, i);
    }
    d.compression = cfg->compression;
    d.end_step = cfg->end_step;
    d.xdmf = 1;
    static const char *const kinds[] = {"sine", "gauss", "random", "file", "zero"};
    d.initial = p->init == PYR_INIT_FILE ? p->init_file : p->init <= PYR_INIT_ZERO ? kinds[p->init] : "";
    pyr_json_t j;
    pyr_json_init(&j, 0);
    pyr_report_plan(&j, NULL, plan);
    d.plan_json = pyr_json_text(&j);
    pyr_status_t st = pyr_h5_writer_open(cfg->field, &d, &r->writer);
    pyr_json_free(&j);
    if (st != PYR_OK) return pyr_fail_context(st, "output.field: ");
    /* inputs (Poisson's f) are stored once, when the problem uses them */
    for (int i = 0; i < nfields && st == PYR_OK; i++)
        if (!d.updated[i] && fields[i] && !(p->equation == PYR_EQ_POISSON && p->poisson.rhs == PYR_RHS_ZERO))
            st = pyr_h5_writer_input(r->writer, i, fields[i]);
    if (st != PYR_OK) {
        pyr_h5_writer_abort(&r->writer);
        return pyr_fail_context(st, "output.field: ");
    }
    return PYR_OK;
}

pyr_status_t pyr_cli_result_snapshot(pyr_cli_result_t *r, int64_t done)
{
    const int64_t step = pyr_cli_step_of(r->cfg, done);
    if (r->h5) return pyr_h5_writer_snapshot(r->writer, (const pyr_field_t *const *)r->fields, step, pyr_cli_time_of(r->cfg, done));
    char path[PYR_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s_%06lld.npy", r->snap_base, (long long)step);
    const pyr_field_t *f = r->fields[0];
    int64_t shape[3];
    shape_of(f, shape);
    return pyr_npy_write(path, f->dims, shape, f->precision, f->data);
}

pyr_status_t pyr_cli_result_final(pyr_cli_result_t *r, const pyr_run_info_t *run)
{
    const pyr_field_t *f = r->fields[0];
    if (!r->h5) {
        int64_t shape[3];
        shape_of(f, shape);
        return pyr_npy_write(r->cfg->field, f->dims, shape, f->precision, f->data);
    }
    pyr_json_t j;
    pyr_json_init(&j, 0);
    pyr_report_run(&j, NULL, run);
    const char *run_json = pyr_json_text(&j);
    pyr_status_t st = pyr_h5_writer_final(r->writer, (const pyr_field_t *const *)r->fields, pyr_cli_step_of(r->cfg, run->steps),
                                          pyr_cli_time_of(r->cfg, run->steps), run_json);
    pyr_json_free(&j);
    if (st == PYR_OK) st = pyr_h5_writer_commit(&r->writer);
    else pyr_h5_writer_abort(&r->writer);
    return st;
}

void pyr_cli_result_abort(pyr_cli_result_t *r) { pyr_h5_writer_abort(&r->writer); }

void pyr_cli_report_begin(pyr_json_t *j, const char *command, const char *source)
{
    pyr_json_init(j, 1);
    pyr_json_object(j, NULL);
    pyr_json_string(j, "report", "pyrgrid-run-report");
    pyr_json_int(j, "report_version", 1);
    pyr_json_string(j, "command", command);
    pyr_json_string(j, "problem_file", source && source[0] ? source : NULL);
}

pyr_status_t pyr_cli_report_end(pyr_json_t *j, const char *path, pyr_backend_kind_t backend, int device)
{
    pyr_report_versions(j, "versions");
    pyr_report_machine(j, "machine", backend, device);
    pyr_json_end(j);
    const char *text = pyr_json_text(j);
    pyr_status_t st = text ? pyr_report_write(path, text) : PYR_ERR_NOMEM;
    pyr_json_free(j);
    return st;
}
