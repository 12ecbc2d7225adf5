/* Problem files of `pyrgrid solve` (a block-tridiagonal system, its options
 * and outputs) behind a handle (pyrgrid_output.h: pyr_lgs_file_t). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "solvers/lgs/lgs_config.h"
#include "pyrgrid_output.h"

struct pyr_lgs_file {
    pyr_lgs_config_t *cfg;
    char *history_image; /* output.history_image, or the history's name with .png */
};

pyr_status_t pyr_lgs_file_load(const char *path, const char *const *sets, int nsets, pyr_lgs_file_t **file)
{
    if (!file) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_file_load: file is NULL");
    *file = NULL;
    if (!path || !path[0]) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_file_load: no problem file named");
    pyr_lgs_file_t *f = calloc(1, sizeof *f);
    if (!f) return pyr_fail(PYR_ERR_NOMEM, "out of host memory reading %s", path);
    pyr_status_t st = pyr_lgs_config_load(path, sets, nsets, &f->cfg);
    if (st == PYR_OK) f->history_image = pyr_lgs_config_history_image(f->cfg);
    if (st != PYR_OK) {
        pyr_lgs_file_destroy(&f);
        return st;
    }
    *file = f;
    return PYR_OK;
}

void pyr_lgs_file_destroy(pyr_lgs_file_t **file)
{
    if (!file || !*file) return;
    pyr_lgs_config_destroy(&(*file)->cfg);
    free((*file)->history_image);
    free(*file);
    *file = NULL;
}

pyr_status_t pyr_lgs_file_system(const pyr_lgs_file_t *file, pyr_lgs_system_t **sys)
{
    if (!file) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_file_system: file is NULL");
    return pyr_lgs_config_system(file->cfg, sys);
}

pyr_status_t pyr_lgs_file_initial(const pyr_lgs_file_t *file, const pyr_lgs_system_t *sys, double *y)
{
    if (!file) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_file_initial: file is NULL");
    return pyr_lgs_config_initial(file->cfg, sys, y);
}

const pyr_lgs_options_t *pyr_lgs_file_options(const pyr_lgs_file_t *file) { return file ? &file->cfg->options : NULL; }

const char *pyr_lgs_file_text(const pyr_lgs_file_t *file, const char *key)
{
    if (!file || !key) return NULL;
    const pyr_lgs_config_t *c = file->cfg;
    if (!strcmp(key, "system.kind")) return c->kind;
    if (!strcmp(key, "output.solution")) return c->solution;
    if (!strcmp(key, "output.history")) return c->history;
    if (!strcmp(key, "output.image")) return c->image;
    if (!strcmp(key, "output.history_image")) return file->history_image;
    return NULL;
}

int pyr_lgs_file_inputs(const pyr_lgs_file_t *file, pyr_named_path_t *inputs, int max)
{
    if (!file) return 0;
    static const char *const array_keys[6] = {"system.cC", "system.aC", "system.bC", "system.cA", "system.cB", "system.F"};
    const pyr_lgs_config_t *c = file->cfg;
    pyr_named_path_t all[10];
    int n = 0;
    if (!strcmp(c->kind, "files"))
        for (int a = 0; a < 6; a++) all[n++] = (pyr_named_path_t){array_keys[a], c->arrays[a]};
    if (c->initial_from_file) all[n++] = (pyr_named_path_t){"system.initial_file", c->initial_file};
    if (!strcmp(c->kind, "parabolic")) {
        all[n++] = (pyr_named_path_t){"parabolic.a", c->parabolic.a.path};
        all[n++] = (pyr_named_path_t){"parabolic.f", c->parabolic.f.path};
        all[n++] = (pyr_named_path_t){"parabolic.u_prev", c->parabolic.u_prev.path};
    }
    for (int i = 0; i < n && i < max && inputs; i++) inputs[i] = all[i];
    return n;
}
