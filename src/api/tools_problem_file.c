/* Problem files as the pyrgrid program reads them: the problem and options,
 * and the keys only a program acts on ([output], the restart's step and
 * time), behind a handle (pyrgrid.h: pyr_problem_file_t). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "problem/config.h"
#include "problem/restart.h"

struct pyr_problem_file {
    pyr_config_t cfg;
};

pyr_status_t pyr_problem_file_load(const char *path, const char *const *sets, int nsets, pyr_problem_file_t **file)
{
    if (!file) return pyr_fail(PYR_ERR_ARG, "pyr_problem_file_load: file is NULL");
    *file = NULL;
    if (!path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_problem_file_load: no problem file named");
    if (nsets < 0 || (nsets > 0 && !sets)) return pyr_fail(PYR_ERR_ARG, "pyr_problem_file_load: %d overrides but no list of them", nsets);
    pyr_problem_file_t *f = malloc(sizeof *f);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of host memory reading %s", path);
    pyr_config_default(&f->cfg);
    pyr_status_t st = pyr_config_load(&f->cfg, path);
    for (int i = 0; i < nsets && st == PYR_OK; i++) st = pyr_config_set(&f->cfg, sets[i]);
    if (st == PYR_OK) st = pyr_config_finish(&f->cfg);
    if (st != PYR_OK) {
        free(f);
        return st;
    }
    *file = f;
    return PYR_OK;
}

pyr_status_t pyr_problem_file_read_inputs(pyr_problem_file_t *file)
{
    if (!file) return pyr_fail(PYR_ERR_ARG, "pyr_problem_file_read_inputs: file is NULL");
    return pyr_config_finish_inputs(&file->cfg);
}

void pyr_problem_file_destroy(pyr_problem_file_t **file)
{
    if (!file) return;
    free(*file);
    *file = NULL;
}

pyr_problem_t *pyr_problem_file_problem(pyr_problem_file_t *file) { return file ? &file->cfg.problem : NULL; }

pyr_options_t *pyr_problem_file_options(pyr_problem_file_t *file) { return file ? &file->cfg.options : NULL; }

pyr_status_t pyr_problem_file_outputs(const pyr_problem_file_t *file, pyr_problem_outputs_t *out)
{
    if (!file || !out) return pyr_fail(PYR_ERR_ARG, "pyr_problem_file_outputs: a file and an outputs struct are required");
    const pyr_config_t *c = &file->cfg;
    memset(out, 0, sizeof *out);
    out->source = c->source;
    out->field = c->field;
    out->image = c->image;
    out->probes = c->probes;
    out->spectra = c->spectra;
    out->every = c->every;
    out->image_component = c->image_component;
    out->compression = c->compression;
    out->start_step = c->start_step;
    out->start_t = c->start_t;
    out->end_step = c->end_step;
    out->start_dataset = c->start_dataset;
    out->image_width = c->image_width;
    out->colormap = c->colormap;
    out->probes_png = c->probes_png;
    out->spectra_png = c->spectra_png;
    return PYR_OK;
}
