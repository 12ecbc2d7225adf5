/* Problem files of `pyrgrid solve` (INI, read by io/ini.h):
 *
 *   [system]     kind = test1 | test2 | laplace | parabolic | files
 *                N = 1024  M = 1024  precision = double
 *                cC = c.npy  aC = a.npy  bC = b.npy  cA = ca.npy  cB = cb.npy  F = f.npy   (kind = files)
 *                ordering = lexicographic | redblack   omega = 1.0   precondition = none | jacobi
 *                tolerance = 1e-10   max_iterations = 100000   initial = zero | file   initial_file = y0.npy
 *   [parabolic]  tau = 1e-3  lx = 1  lz = 1  a = 1  f = 0  u_prev = 0  boundary = 0
 *                (a, f, u_prev: a number, a formula in x and z, or an N×M .npy file;
 *                 boundary: a number or a formula)
 *   [run]        backend = auto | cpu | cuda   threads = 0   check_every = 10   report_every = 1000
 *                stagnation_window = 20000   divergence_limit = 1e8
 *   [output]     solution = y.npy   history = residuals.csv   image = y.png
 *                history_image = residuals.png   (default: the history's name with .png)
 *
 * Keys are case-insensitive.  Input files named in the file (the arrays,
 * initial_file, parabolic fields) are relative to its folder; outputs and
 * paths given with --set are relative to the current directory.
 * `--set section.key=value` overrides are applied after the file. */
#ifndef PYR_SOLVERS_LGS_CONFIG_H
#define PYR_SOLVERS_LGS_CONFIG_H

#include "pyrgrid.h"

typedef struct {
    char kind[16];
    int64_t n, m;
    pyr_precision_t precision;
    char *arrays[6]; /* cC aC bC cA cB F */
    int initial_file_set;
    char *initial_file;
    int initial_from_file;
    pyr_lgs_parabolic_t parabolic; /* strings owned by the config */
    pyr_lgs_options_t options;
    char *solution, *history, *image, *history_image;
} pyr_lgs_config_t;

/* Parse `path` then apply the `nsets` overrides ("section.key=value").  Errors
 * (PYR_ERR_CONFIG, PYR_ERR_IO) name the file and line or the override, and
 * suggest the closest known key or section.  Free with pyr_lgs_config_destroy. */
pyr_status_t pyr_lgs_config_load(const char *path, const char *const *sets, int nsets, pyr_lgs_config_t **cfg);
/* The same with the file's text in memory (text NULL: no file; `path` names
 * it in messages). */
pyr_status_t pyr_lgs_config_load_text(const char *text, size_t len, const char *path, const char *const *sets, int nsets,
                                      pyr_lgs_config_t **cfg);
void pyr_lgs_config_destroy(pyr_lgs_config_t **cfg);

/* Build the system the config describes. */
pyr_status_t pyr_lgs_config_system(const pyr_lgs_config_t *cfg, pyr_lgs_system_t **sys);

/* Fill y (n*m) with the initial guess: zeros, or initial_file. */
pyr_status_t pyr_lgs_config_initial(const pyr_lgs_config_t *cfg, const pyr_lgs_system_t *sys, double *y);

/* The history image's path: history_image, or history with its extension
 * replaced by .png, or NULL.  Owned by the caller (free). */
char *pyr_lgs_config_history_image(const pyr_lgs_config_t *cfg);

#endif
