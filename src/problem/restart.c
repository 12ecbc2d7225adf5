/* Inputs of a problem file: the grid's size from initial.file, restarts
 * (problem/restart.h). */
#include "problem/restart.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/hdf5.h"
#include "io/npy.h"
#include "schemes/scheme.h"

static void shape_text(char *out, size_t size, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(out, size, "(");
    for (int i = 0; i < ndim && k < size; i++)
        k += (size_t)snprintf(out + k, size - k, "%lld%s", (long long)shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
    if (k < size) snprintf(out + k, size - k, ")");
}

typedef struct {
    int ndim;
    int64_t shape[3];
    int pyrgrid; /* an HDF5 result of pyrgrid for this equation: it knows its step and time */
    int has_step, has_t;
    int64_t step;
    double t;
} found_t;

/* The header of initial.file: its shape, and for pyrgrid's HDF5 results the
 * step and time of the dataset chosen (initial.step picks a snapshot). */
static pyr_status_t read_header(pyr_config_t *cfg, found_t *fd)
{
    pyr_problem_t *p = &cfg->problem;
    const char *path = p->init_file;
    const pyr_scheme_t *scheme = pyr_scheme_of(p->equation);
    const char *first = scheme ? scheme->field[0].name : "u";
    memset(fd, 0, sizeof *fd);
    snprintf(cfg->start_dataset, sizeof cfg->start_dataset, "%s", first);
    if (!pyr_h5_is_path(path)) {
        pyr_npy_info_t info;
        pyr_status_t st = pyr_npy_read_info_as(path, p->precision, &info);
        if (st != PYR_OK) return pyr_fail_context(st, "initial.file: ");
        if (info.ndim < 1 || info.ndim > 3) {
            char s[160];
            shape_text(s, sizeof s, info.ndim, info.shape);
            return pyr_fail(PYR_ERR_FORMAT, "initial.file: %s has shape %s; a field has 1, 2 or 3 dimensions ((nx,), (ny, nx), (nz, ny, nx))",
                            path, s);
        }
        fd->ndim = info.ndim;
        for (int i = 0; i < info.ndim; i++) fd->shape[i] = info.shape[i];
        return PYR_OK;
    }
    pyr_h5_info_t info;
    pyr_status_t st = pyr_h5_read_info(path, first, &info);
    if (st != PYR_OK) return pyr_fail_context(st, "initial.file: ");
    /* a result of another equation is only an initial field: its steps are not this scheme's */
    fd->pyrgrid = info.pyrgrid && (!info.equation[0] || !strcmp(info.equation, pyr_equation_name(p->equation)));
    if (fd->pyrgrid && (cfg->start_given & PYR_GIVEN_START_STEP) && !(info.has_step && info.step == cfg->start_step)) {
        char snap[sizeof cfg->start_dataset];
        pyr_h5_snapshot_name(cfg->start_step, first, snap, sizeof snap);
        pyr_h5_info_t si;
        st = pyr_h5_read_info(path, snap, &si);
        if (st != PYR_OK && si.missing)
            return pyr_fail(PYR_ERR_CONFIG, "initial.step = %lld: %s has no snapshot of that step (its final field is at step %lld; "
                            "snapshots are /snapshots/NNNNNN); leave initial.step out to start from the final field",
                            (long long)cfg->start_step, path, (long long)info.step);
        /* a snapshot that is there but refused (its step attribute not its name's, stored elsewhere, damaged): its own reason */
        if (st != PYR_OK) return pyr_fail_context(st, "initial.step = %lld: ", (long long)cfg->start_step);
        info = si;
        snprintf(cfg->start_dataset, sizeof cfg->start_dataset, "%s", snap);
    }
    fd->ndim = info.ndim;
    for (int i = 0; i < info.ndim; i++) fd->shape[i] = info.shape[i];
    if (fd->pyrgrid) {
        fd->has_step = info.has_step;
        fd->step = info.step;
        fd->has_t = info.has_t;
        fd->t = info.t;
    }
    return PYR_OK;
}

/* The grid's size from the file where the problem file gives none. */
static pyr_status_t take_shape(pyr_config_t *cfg, const found_t *fd)
{
    pyr_problem_t *p = &cfg->problem;
    static const char *const ns[3] = {"nx", "ny", "nz"};
    char s[160];
    shape_text(s, sizeof s, fd->ndim, fd->shape);
    const int dims_given = (cfg->given & PYR_GIVEN_DIMS) != 0;
    if (cfg->n_given == 0 && !dims_given) p->dims = fd->ndim;
    if (p->dims != fd->ndim)
        return pyr_fail(PYR_ERR_CONFIG, "initial.file: %s has shape %s, %d dimension%s, but grid.dims = %d; leave grid.dims (and nx, ny, nz) "
                        "out to take the grid from the file, or give a file of %d dimensions", p->init_file, s, fd->ndim,
                        fd->ndim == 1 ? "" : "s", p->dims, p->dims);
    int64_t want[3];
    int differ = 0;
    for (int a = 0; a < 3; a++) {
        int64_t file_n = a < fd->ndim ? fd->shape[fd->ndim - 1 - a] : 1;
        want[a] = (cfg->n_given & (1 << a)) ? p->n[a] : file_n;
        if (want[a] != file_n) differ = 1;
    }
    if (differ) {
        int64_t wshape[3] = {0, 0, 0};
        for (int i = 0; i < fd->ndim; i++) wshape[i] = want[fd->ndim - 1 - i];
        char w[160], keys[64] = "";
        shape_text(w, sizeof w, fd->ndim, wshape);
        for (int a = 0; a < fd->ndim; a++)
            if (cfg->n_given & (1 << a)) {
                size_t k = strlen(keys);
                snprintf(keys + k, sizeof keys - k, "%sgrid.%s", k ? ", " : "", ns[a]);
            }
        return pyr_fail(PYR_ERR_CONFIG, "initial.file: %s has shape %s, expected %s from %s; leave %s out to take the grid's size from the "
                        "file, or give a file of that shape", p->init_file, s, w, keys, keys);
    }
    for (int a = 0; a < 3; a++) p->n[a] = want[a];
    return PYR_OK;
}

pyr_status_t pyr_config_finish_inputs(pyr_config_t *cfg)
{
    pyr_problem_t *p = &cfg->problem;
    cfg->end_step = p->steps;
    cfg->start_step = (cfg->start_given & PYR_GIVEN_START_STEP) ? cfg->start_step : 0;
    cfg->start_dataset[0] = 0;
    if (p->equation == PYR_EQ_MAXWELL) {
        /* Maxwell's initial.file is a prefix of six component files (its scheme reads them), and its E and H
         * are half a step apart: restarts of it are not done here */
        if (cfg->start_given)
            return pyr_fail(PYR_ERR_UNSUPPORTED, "initial.step and initial.t: restarts of scheme.equation = maxwell are not supported; "
                            "start from its components (initial.kind = file, initial.file = PREFIX) at step 0");
        return PYR_OK;
    }
    if (p->init != PYR_INIT_FILE || !p->init_file[0]) {
        if (cfg->start_given)
            return pyr_fail(PYR_ERR_CONFIG, "initial.step and initial.t are the step and time of initial.file (a restart); set initial.kind = "
                            "file and initial.file = the result to continue from");
        return PYR_OK;
    }
    /* a missing file is reported when the field is read, after the checks of
     * the outputs, unless the grid's size must come from it now */
    struct stat sb;
    int all_given = 1;
    for (int a = 0; a < p->dims; a++) all_given &= (cfg->n_given >> a) & 1;
    found_t fd;
    memset(&fd, 0, sizeof fd);
    if (!(all_given && stat(p->init_file, &sb) != 0 && errno == ENOENT)) {
        PYR_TRY(read_header(cfg, &fd));
        PYR_TRY(take_shape(cfg, &fd));
    }
    if (fd.pyrgrid && (cfg->start_given & PYR_GIVEN_START_T))
        return pyr_fail(PYR_ERR_CONFIG, "initial.t: %s records the time of its fields (t = %.17g); leave initial.t out", p->init_file, fd.t);
    /* a pyrgrid result without its step (or, for heat, its time) is damaged: continuing it from 0 would be wrong */
    if (fd.pyrgrid && (!fd.has_step || (p->equation == PYR_EQ_HEAT && !fd.has_t)))
        return pyr_fail(PYR_ERR_FORMAT, "initial.file: %s is a pyrgrid result, but its field %s lacks the attribute %s; the file is damaged "
                        "or was edited (a restart needs the step and time it holds)", p->init_file, cfg->start_dataset,
                        !fd.has_step ? "step" : "t");
    int64_t step = fd.pyrgrid ? fd.step : cfg->start_step;
    double t;
    if (fd.pyrgrid && fd.has_t) t = fd.t;
    else if (cfg->start_given & PYR_GIVEN_START_T) t = cfg->start_t;
    else t = p->equation == PYR_EQ_HEAT ? (double)step * p->heat.dt : 0.0;
    if (p->equation != PYR_EQ_HEAT && (cfg->start_given & PYR_GIVEN_START_T))
        return pyr_fail(PYR_ERR_CONFIG, "initial.t: the %s equation has no time; give initial.step (the sweeps done) only",
                        pyr_equation_name(p->equation));
    cfg->start_step = step;
    cfg->start_t = t;
    if (step == 0) return PYR_OK;
    /* the file holds one layer, and Chebyshev's next sweep reads the one before it too */
    if (p->equation == PYR_EQ_POISSON && p->poisson.iteration == PYR_ITER_CHEBYSHEV)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "a restart from sweep %lld with scheme.iteration = chebyshev: %s holds one layer of u, and "
                        "Chebyshev's sweeps read the layer two sweeps back (and take their weights from the sweep index); continue with "
                        "scheme.iteration = jacobi, or start from it as a fresh initial guess (initial.step = 0)",
                        (long long)step, p->init_file);
    const char *what = p->equation == PYR_EQ_POISSON ? "scheme.iterations" : "scheme.steps";
    if (step > p->steps)
        return pyr_fail(PYR_ERR_CONFIG, "initial.file %s holds step %lld, past %s = %lld, the step this run ends at: set %s to the step to "
                        "reach (a restart runs %s minus the file's step)", p->init_file, (long long)step, what, (long long)p->steps, what, what);
    if (p->equation == PYR_EQ_POISSON && p->poisson.tolerance > 0 && step % p->poisson.check_every != 0)
        return pyr_fail(PYR_ERR_CONFIG, "a restart from sweep %lld with scheme.check_every = %lld: the straight run checks the tolerance at "
                        "multiples of check_every, which the restart would miss; restart from a multiple of %lld, or set check_every to a "
                        "divisor of %lld", (long long)step, (long long)p->poisson.check_every, (long long)p->poisson.check_every, (long long)step);
    if (cfg->every > 0 && step % cfg->every != 0)
        return pyr_fail(PYR_ERR_CONFIG, "a restart from step %lld with output.every = %lld: snapshots fall at multiples of output.every from "
                        "step 0, which the restart would miss; restart from a snapshot, or set output.every to a divisor of %lld",
                        (long long)step, (long long)cfg->every, (long long)step);
    p->steps -= step;
    return PYR_OK;
}
