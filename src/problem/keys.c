/* Problems and options as handles with problem-file keys (pyrgrid.h,
 * "handles and keys"): the setters apply a key through the problem-file
 * reader (problem/config.c), so a key means the same in a file, after --set and
 * through the API; the getters format the same keys back. */
#include "problem/keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "problem/config.h"
#include "problem/restart.h"
#include "schemes/poisson.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"
#include "pyrgrid_frames_io.h"
#include "pyrgrid_output.h"

/* ------------------------------------------------------------------ handles */

pyr_status_t pyr_problem_create(pyr_problem_t **problem)
{
    if (!problem) return pyr_fail(PYR_ERR_ARG, "pyr_problem_create: problem is NULL");
    *problem = malloc(sizeof **problem);
    if (!*problem) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_problem_default(*problem);
    return PYR_OK;
}

void pyr_problem_destroy(pyr_problem_t **problem)
{
    if (!problem) return;
    free(*problem);
    *problem = NULL;
}

pyr_status_t pyr_options_create(pyr_options_t **options)
{
    if (!options) return pyr_fail(PYR_ERR_ARG, "pyr_options_create: options is NULL");
    *options = malloc(sizeof **options);
    if (!*options) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_options_default(*options);
    return PYR_OK;
}

void pyr_options_destroy(pyr_options_t **options)
{
    if (!options) return;
    free(*options);
    *options = NULL;
}

/* "section.key" into its parts. */
static pyr_status_t split_key(const char *what, const char *full, char *sec, size_t ssize, char *key, size_t ksize)
{
    if (!full) return pyr_fail(PYR_ERR_ARG, "%s: key is NULL", what);
    const char *dot = strchr(full, '.');
    size_t ls = dot ? (size_t)(dot - full) : 0;
    if (!dot || ls == 0 || ls >= ssize || !dot[1] || strlen(dot + 1) >= ksize)
        return pyr_fail(PYR_ERR_CONFIG, "%s: key '%s': write section.key, as in a problem file (\"grid.nx\", \"scheme.alpha\", \"run.memory\")",
                        what, full);
    memcpy(sec, full, ls);
    sec[ls] = 0;
    snprintf(key, ksize, "%s", dot + 1);
    return PYR_OK;
}

pyr_status_t pyr_problem_set(pyr_problem_t *problem, const char *full, const char *value)
{
    char sec[64], key[64];
    if (!problem) return pyr_fail(PYR_ERR_ARG, "pyr_problem_set: problem is NULL");
    PYR_TRY(split_key("pyr_problem_set", full, sec, sizeof sec, key, sizeof key));
    if (!value) return pyr_fail(PYR_ERR_ARG, "pyr_problem_set: %s: value is NULL", full);
    if (!strcmp(sec, "run"))
        return pyr_fail(PYR_ERR_CONFIG, "%s is an option of how to solve, not part of the problem: pyr_options_set(options, \"%s\", \"%s\")",
                        full, full, value);
    if (!strcmp(sec, "output"))
        return pyr_fail(PYR_ERR_CONFIG, "%s names what the pyrgrid program writes; the library writes no files (write the field yourself, "
                        "or run the program)", full);
    if (!strcmp(sec, "initial") && (!strcmp(key, "step") || !strcmp(key, "t")))
        return pyr_fail(PYR_ERR_CONFIG, "%s is a restart key of the pyrgrid program; through the library, run the steps that remain "
                        "(scheme.steps) from the field you hold", full);
    pyr_config_t *cfg = malloc(sizeof *cfg);
    if (!cfg) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_config_default(cfg);
    cfg->problem = *problem;
    pyr_status_t st = pyr_config_apply(cfg, sec, key, value);
    if (st == PYR_OK) {
        pyr_problem_t *q = &cfg->problem;
        if (!strcmp(sec, "grid") && !strcmp(key, "dims"))
            for (int d = q->dims; d < 3; d++) q->n[d] = 1;
        /* the file reader keeps dt aside until it knows the equation (pyr_config_finish); here it is known */
        if (!strcmp(sec, "scheme") && !strcmp(key, "dt")) {
            if (q->equation == PYR_EQ_MAXWELL) q->maxwell.dt = cfg->dt;
            else q->heat.dt = cfg->dt;
        }
        /* Maxwell's fields start at zero (set initial.kind after the equation for another start) */
        if (!strcmp(sec, "scheme") && !strcmp(key, "equation") && q->equation == PYR_EQ_MAXWELL && problem->equation != PYR_EQ_MAXWELL)
            q->init = PYR_INIT_ZERO;
        *problem = cfg->problem;
    }
    free(cfg);
    return st;
}

pyr_status_t pyr_options_set(pyr_options_t *options, const char *full, const char *value)
{
    char sec[64], key[64];
    if (!options) return pyr_fail(PYR_ERR_ARG, "pyr_options_set: options is NULL");
    PYR_TRY(split_key("pyr_options_set", full, sec, sizeof sec, key, sizeof key));
    if (!value) return pyr_fail(PYR_ERR_ARG, "pyr_options_set: %s: value is NULL", full);
    if (strcmp(sec, "run") != 0)
        return pyr_fail(PYR_ERR_CONFIG, "%s is not an option: options are the keys of [run] (run.memory, run.backend, ...)%s", full,
                        !strcmp(sec, "output") ? "" : "; problem keys go to pyr_problem_set");
    pyr_config_t *cfg = malloc(sizeof *cfg);
    if (!cfg) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_config_default(cfg);
    cfg->options = *options;
    pyr_status_t st = pyr_config_apply(cfg, sec, key, value);
    if (st == PYR_OK) {
        /* rows and block are the piece's extent along the split axis (pyr_config_finish's rule) */
        if (!strcmp(key, "rows")) cfg->options.piece = cfg->rows;
        if (!strcmp(key, "block")) {
            cfg->options.piece = cfg->block;
            if (cfg->block > 0 && cfg->options.decomposition == PYR_DECOMP_AUTO) cfg->options.decomposition = PYR_DECOMP_BLOCKS;
        }
        *options = cfg->options;
    }
    free(cfg);
    return st;
}

/* ------------------------------------------------------------------ getters */

static const char *const init_names[] = {"sine", "gauss", "random", "file", "zero"};
static const char *const rhs_names[] = {"zero", "sine", "file"};

static int fmt_int(char *out, size_t size, int64_t v) { return snprintf(out, size, "%lld", (long long)v); }
static int fmt_real(char *out, size_t size, double v) { return snprintf(out, size, "%.17g", v); }
static int fmt_text(char *out, size_t size, const char *v) { return snprintf(out, size, "%s", v); }

/* Format key `full` of the problem into out; -1 when it is no key. */
static int problem_value(const pyr_problem_t *p, const char *full, char *out, size_t size, int *kind)
{
    static const char *const ns[] = {"grid.nx", "grid.ny", "grid.nz"}, *const ls[] = {"grid.lx", "grid.ly", "grid.lz"};
    *kind = PYR_KEY_INT;
    if (!strcmp(full, "grid.dims")) return fmt_int(out, size, p->dims);
    for (int d = 0; d < 3; d++) {
        if (!strcmp(full, ns[d])) return fmt_int(out, size, p->n[d]);
        if (!strcmp(full, ls[d])) return *kind = PYR_KEY_REAL, fmt_real(out, size, p->length[d]);
    }
    if (!strcmp(full, "scheme.steps") || !strcmp(full, "scheme.iterations")) return fmt_int(out, size, p->steps);
    if (!strcmp(full, "scheme.check_every")) return fmt_int(out, size, p->poisson.check_every);
    if (!strcmp(full, "scheme.pre_smooth")) return fmt_int(out, size, p->poisson.pre_smooth);
    if (!strcmp(full, "scheme.post_smooth")) return fmt_int(out, size, p->poisson.post_smooth);
    if (!strcmp(full, "initial.seed")) return fmt_int(out, size, (int64_t)p->seed);
    *kind = PYR_KEY_REAL;
    if (!strcmp(full, "scheme.alpha")) return fmt_real(out, size, p->heat.alpha);
    if (!strcmp(full, "scheme.dt")) return fmt_real(out, size, p->equation == PYR_EQ_MAXWELL ? p->maxwell.dt : p->heat.dt);
    if (!strcmp(full, "scheme.courant")) return fmt_real(out, size, p->maxwell.courant);
    if (!strcmp(full, "scheme.tolerance")) return fmt_real(out, size, p->poisson.tolerance);
    if (!strcmp(full, "scheme.omega")) return fmt_real(out, size, p->poisson.omega);
    *kind = PYR_KEY_TEXT;
    if (!strcmp(full, "scheme.equation")) return fmt_text(out, size, pyr_equation_name(p->equation));
    if (!strcmp(full, "scheme.precision")) return fmt_text(out, size, pyr_precision_name(p->precision));
    if (!strcmp(full, "scheme.mode")) return fmt_text(out, size, p->maxwell.te ? "te" : "tm");
    if (!strcmp(full, "scheme.iteration"))
        return fmt_text(out, size, p->poisson.iteration == PYR_ITER_MULTIGRID ? "multigrid" : p->poisson.iteration == PYR_ITER_CHEBYSHEV ? "chebyshev" : "jacobi");
    if (!strcmp(full, "scheme.cycle")) return fmt_text(out, size, p->poisson.cycle == PYR_CYCLE_F ? "f" : "v");
    if (!strcmp(full, "scheme.smoother")) return fmt_text(out, size, p->poisson.smoother == PYR_SMOOTH_JACOBI ? "jacobi" : "chebyshev");
    if (!strcmp(full, "initial.kind"))
        return fmt_text(out, size, p->init >= PYR_INIT_SINE && p->init <= PYR_INIT_ZERO ? init_names[p->init] : "?");
    if (!strcmp(full, "initial.file")) return fmt_text(out, size, p->init_file);
    if (!strcmp(full, "rhs.kind"))
        return fmt_text(out, size, p->poisson.rhs >= PYR_RHS_ZERO && p->poisson.rhs <= PYR_RHS_FILE ? rhs_names[p->poisson.rhs] : "?");
    if (!strcmp(full, "rhs.file")) return fmt_text(out, size, p->poisson.rhs_file);
    if (!strncmp(full, "boundary.", 9) && pyr_poisson_face_index(full + 9) >= 0)
        return pyr_poisson_face_text(&p->poisson, pyr_poisson_face_index(full + 9), out, size);
    return pyr_problem_maxwell_value(p, full, out, size, kind);
}

static int options_value(const pyr_options_t *o, const char *full, char *out, size_t size, int *kind)
{
    *kind = PYR_KEY_TEXT;
    if (!strcmp(full, "run.backend")) return fmt_text(out, size, pyr_backend_name(o->backend));
    if (!strcmp(full, "run.method")) return fmt_text(out, size, pyr_method_name(o->method));
    if (!strcmp(full, "run.decomposition")) return fmt_text(out, size, pyr_decomp_name(o->decomposition));
    if (!strcmp(full, "run.plan")) return fmt_text(out, size, o->plan_mode == PYR_PLAN_MEASURE  ? "measure"
                                                          : o->plan_mode == PYR_PLAN_REFINE ? "refine"
                                                                                            : "estimate");
    if (!strcmp(full, "run.kernel")) return fmt_text(out, size, o->kernel[0] ? o->kernel : "auto");
    if (!strcmp(full, "run.height") && o->height == 0) return fmt_text(out, size, "auto");
    if (!strcmp(full, "run.memory") && o->memory == 0) return fmt_text(out, size, "auto");
    if (!strcmp(full, "run.slots") && o->slots == 0) return fmt_text(out, size, "auto");
    if ((!strcmp(full, "run.rows") || !strcmp(full, "run.block")) && o->piece == 0) return fmt_text(out, size, "auto");
    /* several devices (exec/parts.c): "" is one device, an empty partition the model's choice */
    if (!strcmp(full, "run.devices")) return fmt_text(out, size, o->devices);
    if (!strcmp(full, "run.partition")) return fmt_text(out, size, o->partition[0] ? o->partition : "auto");
    if (!strcmp(full, "run.exchange") && o->exchange == 0) return fmt_text(out, size, "auto");
    if (!strcmp(full, "run.host_memory"))
        return fmt_text(out, size, o->host_memory == PYR_HOST_PIN ? "pin" : o->host_memory == PYR_HOST_STAGE ? "stage" : "auto");
    *kind = PYR_KEY_INT;
    if (!strcmp(full, "run.height")) return fmt_int(out, size, o->height);
    if (!strcmp(full, "run.memory")) return snprintf(out, size, "%llu", (unsigned long long)o->memory);
    if (!strcmp(full, "run.slots")) return fmt_int(out, size, o->slots);
    if (!strcmp(full, "run.rows") || !strcmp(full, "run.block")) return fmt_int(out, size, o->piece);
    if (!strcmp(full, "run.threads")) return fmt_int(out, size, o->threads);
    if (!strcmp(full, "run.device")) return fmt_int(out, size, o->device);
    if (!strcmp(full, "run.exchange")) return fmt_int(out, size, o->exchange);
    return -1;
}

const char *const pyr_problem_keys[] = {"grid.dims", "grid.nx", "grid.ny", "grid.nz", "grid.lx", "grid.ly", "grid.lz",
                                        "scheme.equation", "scheme.precision", "scheme.alpha", "scheme.dt", "scheme.courant", "scheme.mode",
                                        "scheme.steps",
                                        "scheme.iterations", "scheme.tolerance", "scheme.check_every", "scheme.omega", "scheme.iteration",
                                        "scheme.cycle", "scheme.pre_smooth", "scheme.post_smooth", "scheme.smoother",
                                        "initial.kind", "initial.file", "initial.seed", "rhs.kind", "rhs.file",
                                        "boundary.x-", "boundary.x+", "boundary.y-", "boundary.y+", "boundary.z-", "boundary.z+", NULL};
const char *const pyr_options_keys[] = {"run.backend", "run.device", "run.method", "run.decomposition", "run.height", "run.memory",
                                        "run.rows", "run.block", "run.threads", "run.plan", "run.slots", "run.kernel",
                                        "run.devices", "run.partition", "run.exchange", "run.host_memory", NULL};

int pyr_problem_key_applies(const pyr_problem_t *p, const char *full)
{
    static const char *const heat_only[] = {"scheme.alpha"};
    static const char *const maxwell_only[] = {"scheme.courant", "scheme.mode"};
    if (!strcmp(full, "scheme.dt") || !strcmp(full, "scheme.steps")) return p->equation != PYR_EQ_POISSON;
    for (size_t i = 0; i < sizeof maxwell_only / sizeof *maxwell_only; i++)
        if (!strcmp(full, maxwell_only[i])) return p->equation == PYR_EQ_MAXWELL && (strcmp(full, "scheme.mode") || p->dims == 2);
    static const char *const poisson_only[] = {"scheme.iterations", "scheme.tolerance", "scheme.check_every", "scheme.omega",
                                               "scheme.iteration", "rhs.kind", "rhs.file"};
    static const char *const multigrid_only[] = {"scheme.cycle", "scheme.pre_smooth", "scheme.post_smooth", "scheme.smoother"};
    for (size_t i = 0; i < sizeof multigrid_only / sizeof *multigrid_only; i++)
        if (!strcmp(full, multigrid_only[i])) return p->equation == PYR_EQ_POISSON && p->poisson.iteration == PYR_ITER_MULTIGRID;
    for (size_t i = 0; i < sizeof heat_only / sizeof *heat_only; i++)
        if (!strcmp(full, heat_only[i])) return p->equation == PYR_EQ_HEAT;
    for (size_t i = 0; i < sizeof poisson_only / sizeof *poisson_only; i++)
        if (!strcmp(full, poisson_only[i])) return p->equation == PYR_EQ_POISSON && (strcmp(full, "rhs.file") || p->poisson.rhs == PYR_RHS_FILE);
    /* a Poisson problem's faces, shown where one is Neumann (all Dirichlet: the problem as it always was) */
    if (!strncmp(full, "boundary.", 9) && pyr_poisson_face_index(full + 9) >= 0)
        return p->equation == PYR_EQ_POISSON && pyr_poisson_has_neumann(p) && pyr_poisson_face_index(full + 9) / 2 < p->dims;
    if (!strcmp(full, "initial.file")) return p->init == PYR_INIT_FILE;
    if (!strcmp(full, "initial.seed")) return p->init == PYR_INIT_RANDOM;
    return 1;
}

static pyr_status_t finish_get(const char *what, const char *full, int n, size_t size)
{
    if (n < 0) return pyr_fail(PYR_ERR_CONFIG, "%s: unknown key '%s'", what, full);
    if ((size_t)n >= size) return pyr_fail(PYR_ERR_ARG, "%s: the value of %s needs %d bytes; the buffer has %zu", what, full, n + 1, size);
    return PYR_OK;
}

pyr_status_t pyr_problem_value(const pyr_problem_t *p, const char *full, char *value, size_t size, int *kind)
{
    char scratch[1];
    int n = problem_value(p, full, value && size ? value : scratch, value && size ? size : 1, kind);
    return finish_get("pyr_problem_get", full, n, size);
}

pyr_status_t pyr_options_value(const pyr_options_t *o, const char *full, char *value, size_t size, int *kind)
{
    char scratch[1];
    int n = options_value(o, full, value && size ? value : scratch, value && size ? size : 1, kind);
    return finish_get("pyr_options_get", full, n, size);
}

pyr_status_t pyr_problem_get(const pyr_problem_t *problem, const char *key, char *value, size_t size)
{
    int kind;
    if (!problem || !key) return pyr_fail(PYR_ERR_ARG, "pyr_problem_get: problem and key are required");
    return pyr_problem_value(problem, key, value, size, &kind);
}

pyr_status_t pyr_options_get(const pyr_options_t *options, const char *key, char *value, size_t size)
{
    int kind;
    if (!options || !key) return pyr_fail(PYR_ERR_ARG, "pyr_options_get: options and key are required");
    return pyr_options_value(options, key, value, size, &kind);
}

/* ---------------------------------------------------------------- files */

pyr_status_t pyr_problem_load_file(pyr_problem_t *problem, pyr_options_t *options, const char *path)
{
    if (!problem || !path) return pyr_fail(PYR_ERR_ARG, "pyr_problem_load_file: problem and path are required");
    pyr_config_t *cfg = malloc(sizeof *cfg);
    if (!cfg) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    pyr_config_default(cfg);
    pyr_status_t st = pyr_config_load(cfg, path);
    if (st == PYR_OK) st = pyr_config_finish(cfg);
    if (st == PYR_OK) st = pyr_config_finish_inputs(cfg);
    if (st == PYR_OK) {
        *problem = cfg->problem;
        if (options) *options = cfg->options;
    }
    free(cfg);
    return st;
}

/* ---------------------------------------------------------------- sizes */

size_t pyr_struct_size(const char *name)
{
#define S(T)                                                                                                                            \
    if (!strcmp(name, #T)) return sizeof(T)
    if (!name) return 0;
    S(pyr_problem_t);
    S(pyr_heat_params_t);
    S(pyr_poisson_params_t);
    S(pyr_maxwell_params_t);
    S(pyr_source_t);
    S(pyr_probe_t);
    S(pyr_shape_t);
    S(pyr_options_t);
    S(pyr_field_t);
    S(pyr_counters_t);
    S(pyr_plan_info_t);
    S(pyr_hooks_t);
    S(pyr_run_info_t);
    S(pyr_lgs_system_t);
    S(pyr_lgs_field_spec_t);
    S(pyr_lgs_parabolic_t);
    S(pyr_lgs_options_t);
    S(pyr_lgs_result_t);
    S(pyr_frames_options_t);
    S(pyr_frames_candidate_t);
    S(pyr_frames_result_t);
    S(pyr_frames_stats_t);
    S(pyr_frames_source_info_t);
    S(pyr_frames_table_row_t);
    S(pyr_frames_table_opts_t);
    S(pyr_frames_link_options_t);
    S(pyr_frames_track_t);
    S(pyr_problem_outputs_t);
    S(pyr_prediction_t);
    S(pyr_longvector_model_t);
    S(pyr_heatmap_opts_t);
    S(pyr_plot_series_t);
    S(pyr_plot_opts_t);
    S(pyr_named_path_t);
#undef S
    return 0;
}
