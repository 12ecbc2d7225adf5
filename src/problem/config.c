#include "problem/config.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/suggest.h"
#include "io/ini.h"
#include "problem/devices.h"
#include "schemes/poisson.h"
#include "pyrgrid_output.h"

static const char *const sections[] = {"grid", "scheme", "initial", "rhs", "run", "output", "boundary", "material", "source", "probe", "monitor"};
static const char *const keys_grid[] = {"dims", "nx", "ny", "nz", "lx", "ly", "lz"};
static const char *const keys_scheme[] = {"equation", "alpha", "dt", "steps", "precision",
                                          "iterations", "tolerance", "check_every", "omega", "iteration", "courant", "mode",
                                          "cycle", "pre_smooth", "post_smooth", "smoother"};
static const char *const keys_initial[] = {"kind", "file", "seed", "step", "t"};
static const char *const keys_rhs[] = {"kind", "file"};
static const char *const keys_run[] = {"backend", "method", "decomposition", "height", "memory", "rows", "block", "threads", "device", "plan", "slots", "kernel",
                                       "devices", "partition", "exchange", "host_memory"};
static const char *const keys_output[] = {"field", "image", "every", "probes", "spectra", "component", "compression",
                                          "image_width", "colormap", "probes_png", "spectra_png"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

void pyr_config_default(pyr_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    pyr_problem_default(&cfg->problem);
    pyr_options_default(&cfg->options);
    cfg->dt = cfg->problem.heat.dt;
    cfg->image_component = -1;
    cfg->colormap = PYR_COLORMAP_AUTO;
}

typedef struct {
    pyr_config_t *cfg;
    const char *where; /* "heat2d.ini" or "--set" */
    pyr_status_t status;
    int line;
    char base[PYR_PATH_MAX]; /* the problem file's folder ("" = the current one): inputs it names are relative to it */
} parse_t;

static pyr_status_t parse_int(const char *sec, const char *key, const char *v, int64_t lo, int64_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (*end && isspace((unsigned char)*end)) end++;
    if (end == v || *end || errno)
        return pyr_fail(PYR_ERR_CONFIG, "%s.%s = '%s' is not an integer", sec, key, v);
    if (x < lo) return pyr_fail(PYR_ERR_CONFIG, "%s.%s = %lld: must be >= %lld", sec, key, x, (long long)lo);
    *out = x;
    return PYR_OK;
}

static pyr_status_t parse_real(const char *sec, const char *key, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    while (*end && isspace((unsigned char)*end)) end++;
    if (end == v || *end) return pyr_fail(PYR_ERR_CONFIG, "%s.%s = '%s' is not a number", sec, key, v);
    if (isnan(x)) return pyr_fail(PYR_ERR_CONFIG, "%s.%s = %s: NaN is not allowed", sec, key, v);
    /* strtod's range errors: past the largest double, or below the smallest normal one (subnormal, or 0 for less) */
    if (errno == ERANGE && isinf(x)) return pyr_fail(PYR_ERR_CONFIG, "%s.%s = '%s' is too large: doubles end at %.3g", sec, key, v, DBL_MAX);
    if (errno == ERANGE)
        return pyr_fail(PYR_ERR_CONFIG, "%s.%s = '%s' is too small to compute with: below %.3g, the smallest normal double", sec, key, v,
                        DBL_MIN);
    *out = x;
    return PYR_OK;
}

/* value must be one of names[]; *out = its index. */
static pyr_status_t parse_choice(const char *sec, const char *key, const char *v, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return PYR_OK;
        }
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n) strncat(list, " | ", sizeof list - strlen(list) - 1);
    }
    const char *near = pyr_suggest(v, names, n);
    if (near) return pyr_fail(PYR_ERR_CONFIG, "%s.%s = '%s' is not one of %s; did you mean '%s'?", sec, key, v, list, near);
    return pyr_fail(PYR_ERR_CONFIG, "%s.%s = '%s' is not one of %s", sec, key, v, list);
}

static pyr_status_t copy_path(const char *sec, const char *key, const char *v, char *dst)
{
    if (strlen(v) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_CONFIG, "%s.%s: path longer than %d bytes", sec, key, PYR_PATH_MAX - 1);
    strcpy(dst, v);
    return PYR_OK;
}

static pyr_status_t unknown_key(const char *sec, const char *key, const char *const *keys, int n)
{
    const char *near = pyr_suggest(key, keys, n);
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, keys[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    if (near) return pyr_fail(PYR_ERR_CONFIG, "unknown key '%s' in [%s]; did you mean '%s'?", key, sec, near);
    return pyr_fail(PYR_ERR_CONFIG, "unknown key '%s' in [%s]; the keys of [%s] are %s", key, sec, sec, list);
}

static pyr_status_t apply(pyr_config_t *cfg, const char *sec, const char *key, const char *v)
{
    pyr_problem_t *p = &cfg->problem;
    pyr_options_t *o = &cfg->options;
    int64_t i64;
    int choice = 0;
    int handled = 0;
    /* [boundary] x- .. z+: the Poisson problem's faces (Maxwell's [boundary] has other keys) */
    if (!strcmp(sec, "boundary") && pyr_poisson_face_index(key) >= 0)
        return cfg->given |= PYR_GIVEN_POISSON, pyr_poisson_parse_face(&p->poisson, pyr_poisson_face_index(key), v);
    pyr_status_t mst = pyr_config_apply_maxwell(cfg, sec, key, v, &handled);
    if (handled) return mst;
    if (!strcmp(sec, "grid")) {
        if (!strcmp(key, "dims")) {
            PYR_TRY(parse_int(sec, key, v, 1, &i64));
            if (i64 > 3) return pyr_fail(PYR_ERR_CONFIG, "grid.dims = %lld: use 1, 2 or 3", (long long)i64);
            p->dims = (int)i64;
            cfg->given |= PYR_GIVEN_DIMS;
            return PYR_OK;
        }
        static const char *const ns[] = {"nx", "ny", "nz"}, *const ls[] = {"lx", "ly", "lz"};
        for (int d = 0; d < 3; d++) {
            if (!strcmp(key, ns[d])) {
                cfg->n_given |= 1 << d;
                return parse_int(sec, key, v, 1, &p->n[d]);
            }
            if (!strcmp(key, ls[d])) return parse_real(sec, key, v, &p->length[d]);
        }
        return unknown_key(sec, key, keys_grid, COUNT(keys_grid));
    }
    if (!strcmp(sec, "scheme")) {
        if (!strcmp(key, "equation")) {
            static const char *const eq[] = {"heat", "poisson", "maxwell"};
            PYR_TRY(parse_choice(sec, key, v, eq, 3, &choice));
            p->equation = choice == 2 ? PYR_EQ_MAXWELL : choice ? PYR_EQ_POISSON : PYR_EQ_HEAT;
            return PYR_OK;
        }
        if (!strcmp(key, "alpha")) return cfg->given |= PYR_GIVEN_HEAT, parse_real(sec, key, v, &p->heat.alpha);
        if (!strcmp(key, "dt")) return cfg->given |= PYR_GIVEN_DT, parse_real(sec, key, v, &cfg->dt);
        if (!strcmp(key, "steps")) return cfg->given |= PYR_GIVEN_STEPS, parse_int(sec, key, v, 0, &p->steps);
        if (!strcmp(key, "iterations")) return cfg->given |= PYR_GIVEN_POISSON | PYR_GIVEN_ITERATIONS, parse_int(sec, key, v, 1, &p->steps);
        if (!strcmp(key, "tolerance")) {
            cfg->given |= PYR_GIVEN_POISSON;
            PYR_TRY(parse_real(sec, key, v, &p->poisson.tolerance));
            if (!(p->poisson.tolerance > 0) || !isfinite(p->poisson.tolerance))
                return pyr_fail(PYR_ERR_CONFIG, "scheme.tolerance = %s: use a positive finite tolerance (e.g. 1e-8), or leave it out to run all iterations", v);
            return PYR_OK;
        }
        if (!strcmp(key, "check_every")) return cfg->given |= PYR_GIVEN_POISSON, parse_int(sec, key, v, 1, &p->poisson.check_every);
        if (!strcmp(key, "omega")) return cfg->given |= PYR_GIVEN_POISSON, parse_real(sec, key, v, &p->poisson.omega);
        if (!strcmp(key, "iteration")) {
            static const char *const it[] = {"jacobi", "chebyshev", "multigrid"}; /* pyr_iteration_t's order */
            cfg->given |= PYR_GIVEN_POISSON;
            PYR_TRY(parse_choice(sec, key, v, it, 3, &choice));
            p->poisson.iteration = (pyr_iteration_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "cycle")) {
            static const char *const cy[] = {"v", "f"}; /* pyr_cycle_t's order */
            cfg->given |= PYR_GIVEN_POISSON;
            PYR_TRY(parse_choice(sec, key, v, cy, 2, &choice));
            p->poisson.cycle = (pyr_cycle_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "smoother")) {
            static const char *const sm[] = {"chebyshev", "jacobi"}; /* pyr_smoother_t's order */
            cfg->given |= PYR_GIVEN_POISSON;
            PYR_TRY(parse_choice(sec, key, v, sm, 2, &choice));
            p->poisson.smoother = (pyr_smoother_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "pre_smooth") || !strcmp(key, "post_smooth")) {
            int64_t k = 0;
            cfg->given |= PYR_GIVEN_POISSON;
            PYR_TRY(parse_int(sec, key, v, 0, &k));
            if (k > 64) return pyr_fail(PYR_ERR_CONFIG, "scheme.%s = %s: use 0 to 64 smoothing sweeps per level (3 is the default)", key, v);
            *(key[1] == 'r' ? &p->poisson.pre_smooth : &p->poisson.post_smooth) = (int)k;
            return PYR_OK;
        }
        if (!strcmp(key, "precision")) {
            static const char *const pr[] = {"float", "double"};
            PYR_TRY(parse_choice(sec, key, v, pr, 2, &choice));
            p->precision = choice ? PYR_DOUBLE : PYR_FLOAT;
            return PYR_OK;
        }
        return unknown_key(sec, key, keys_scheme, COUNT(keys_scheme));
    }
    if (!strcmp(sec, "rhs")) {
        cfg->given |= PYR_GIVEN_POISSON;
        if (!strcmp(key, "kind")) {
            static const char *const kinds[] = {"zero", "sine", "file"};
            PYR_TRY(parse_choice(sec, key, v, kinds, 3, &choice));
            p->poisson.rhs = (pyr_rhs_kind_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "file")) return copy_path(sec, key, v, p->poisson.rhs_file);
        return unknown_key(sec, key, keys_rhs, COUNT(keys_rhs));
    }
    if (!strcmp(sec, "initial")) {
        if (!strcmp(key, "kind")) {
            static const char *const kinds[] = {"sine", "gauss", "random", "file", "zero"};
            PYR_TRY(parse_choice(sec, key, v, kinds, 5, &choice));
            cfg->given |= PYR_GIVEN_INIT;
            p->init = (pyr_init_kind_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "file")) return copy_path(sec, key, v, p->init_file);
        if (!strcmp(key, "seed")) {
            PYR_TRY(parse_int(sec, key, v, 0, &i64));
            p->seed = (uint64_t)i64;
            return PYR_OK;
        }
        /* restarts (problem/restart.c): the step and time of initial.file */
        if (!strcmp(key, "step")) return cfg->start_given |= PYR_GIVEN_START_STEP, parse_int(sec, key, v, 0, &cfg->start_step);
        if (!strcmp(key, "t")) {
            PYR_TRY(parse_real(sec, key, v, &cfg->start_t));
            if (!isfinite(cfg->start_t)) return pyr_fail(PYR_ERR_CONFIG, "initial.t = %s: use a finite time", v);
            cfg->start_given |= PYR_GIVEN_START_T;
            return PYR_OK;
        }
        return unknown_key(sec, key, keys_initial, COUNT(keys_initial));
    }
    if (!strcmp(sec, "run")) {
        if (!strcmp(key, "backend")) {
            static const char *const b[] = {"auto", "cpu", "cuda"};
            PYR_TRY(parse_choice(sec, key, v, b, 3, &choice));
            o->backend = (pyr_backend_kind_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "method")) {
            static const char *const m[] = {"auto", "naive", "trivial", "pyramid", "longvector", "multigrid"}; /* pyr_method_t's order */
            PYR_TRY(parse_choice(sec, key, v, m, 6, &choice));
            o->method = (pyr_method_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "decomposition")) {
            static const char *const d[] = {"auto", "segments", "strips", "blocks", "slabs", "skewed"}; /* pyr_decomp_t's order */
            PYR_TRY(parse_choice(sec, key, v, d, 6, &choice));
            o->decomposition = (pyr_decomp_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "height")) {
            if (!strcmp(v, "auto")) {
                o->height = 0;
                return PYR_OK;
            }
            return parse_int(sec, key, v, 1, &o->height);
        }
        if (!strcmp(key, "memory")) {
            if (!strcmp(v, "auto")) {
                o->memory = 0;
                return PYR_OK;
            }
            pyr_status_t st = pyr_parse_bytes(v, &o->memory);
            if (st != PYR_OK) return pyr_fail_context(st, "run.memory: ");
            if (o->memory == 0) return pyr_fail(PYR_ERR_CONFIG, "run.memory = %s: use a positive size or auto", v);
            return PYR_OK;
        }
        if (!strcmp(key, "rows")) {
            if (!strcmp(v, "auto")) return cfg->rows = 0, PYR_OK;
            return parse_int(sec, key, v, 1, &cfg->rows);
        }
        if (!strcmp(key, "block")) {
            if (!strcmp(v, "auto")) return cfg->block = 0, PYR_OK;
            return parse_int(sec, key, v, 1, &cfg->block);
        }
        if (!strcmp(key, "threads")) {
            PYR_TRY(parse_int(sec, key, v, 0, &i64));
            if (i64 > 4096) return pyr_fail(PYR_ERR_CONFIG, "run.threads = %lld: too many; use 0 for all cores", (long long)i64);
            o->threads = (int)i64;
            return PYR_OK;
        }
        if (!strcmp(key, "plan")) {
            static const char *const modes[] = {"estimate", "measure", "refine"};
            PYR_TRY(parse_choice(sec, key, v, modes, 3, &choice));
            o->plan_mode = choice == 2 ? PYR_PLAN_REFINE : choice ? PYR_PLAN_MEASURE : PYR_PLAN_ESTIMATE;
            return PYR_OK;
        }
        if (!strcmp(key, "slots")) {
            if (!strcmp(v, "auto")) return o->slots = 0, PYR_OK;
            PYR_TRY(parse_int(sec, key, v, 1, &i64));
            if (i64 > 64) return pyr_fail(PYR_ERR_CONFIG, "run.slots = %lld: too many; use auto or a small count (1 to 3)", (long long)i64);
            o->slots = (int)i64;
            return PYR_OK;
        }
        if (!strcmp(key, "kernel")) {
            if (!strcmp(v, "auto")) return o->kernel[0] = 0, PYR_OK;
            if (strlen(v) >= sizeof o->kernel)
                return pyr_fail(PYR_ERR_CONFIG, "run.kernel = '%s' is too long; write a variant such as fused:5, plain, sweep or wave", v);
            snprintf(o->kernel, sizeof o->kernel, "%s", v);
            return PYR_OK;
        }
        /* several devices and MPI ranks (exec/parts.c; the list: problem/devices.c) */
        if (!strcmp(key, "devices")) {
            int devs[PYR_DEVICES_MAX], n = 0;
            PYR_TRY(pyr_parts_parse_devices(v, devs, PYR_DEVICES_MAX, &n));
            if (strlen(v) >= sizeof o->devices) return pyr_fail(PYR_ERR_CONFIG, "run.devices = '%s' is too long", v);
            snprintf(o->devices, sizeof o->devices, "%s", v);
            return PYR_OK;
        }
        if (!strcmp(key, "partition")) {
            int a, b, c;
            char extra;
            if (strcmp(v, "auto") && strcmp(v, "slabs") && strcmp(v, "blocks") &&
                (sscanf(v, "%dx%dx%d%c", &a, &b, &c, &extra) != 3 || a < 1 || b < 1 || c < 1 || strlen(v) >= sizeof o->partition))
                return pyr_fail(PYR_ERR_CONFIG, "run.partition = '%s': use auto, slabs, blocks, or parts per axis AxBxC (x, y, z), e.g. 1x2x2", v);
            snprintf(o->partition, sizeof o->partition, "%s", strcmp(v, "auto") ? v : "");
            return PYR_OK;
        }
        if (!strcmp(key, "exchange")) {
            if (!strcmp(v, "auto")) return o->exchange = 0, PYR_OK;
            return parse_int(sec, key, v, 1, &o->exchange);
        }
        if (!strcmp(key, "host_memory")) {
            /* how device copies reach the host grid (pyr_host_memory_t) */
            static const char *const ways[] = {"auto", "pin", "stage"};
            PYR_TRY(parse_choice(sec, key, v, ways, 3, &choice));
            o->host_memory = (pyr_host_memory_t)choice;
            return PYR_OK;
        }
        if (!strcmp(key, "device")) {
            PYR_TRY(parse_int(sec, key, v, 0, &i64));
            if (i64 > 1024) return pyr_fail(PYR_ERR_CONFIG, "run.device = %lld is not a GPU index", (long long)i64);
            o->device = (int)i64;
            return PYR_OK;
        }
        return unknown_key(sec, key, keys_run, COUNT(keys_run));
    }
    if (!strcmp(sec, "output")) {
        if (!strcmp(key, "field")) return copy_path(sec, key, v, cfg->field);
        if (!strcmp(key, "image")) return copy_path(sec, key, v, cfg->image);
        if (!strcmp(key, "every")) return parse_int(sec, key, v, 0, &cfg->every);
        if (!strcmp(key, "compression")) {
            PYR_TRY(parse_int(sec, key, v, 0, &i64));
            if (i64 > 9) return pyr_fail(PYR_ERR_CONFIG, "output.compression = %lld: use 0 (none) to 9 (gzip levels of HDF5 outputs)", (long long)i64);
            cfg->compression = (int)i64;
            return PYR_OK;
        }
        if (!strcmp(key, "image_width")) {
            PYR_TRY(parse_int(sec, key, v, 0, &i64));
            if (i64 != 0 && (i64 < 300 || i64 > 8192))
                return pyr_fail(PYR_ERR_CONFIG, "output.image_width = %lld pixels: use 300..8192 (1920 fills a projector), or 0 for the "
                                "default size", (long long)i64);
            cfg->image_width = (int)i64;
            return PYR_OK;
        }
        if (!strcmp(key, "colormap")) {
            /* in pyr_colormap_t's order */
            static const char *const maps[] = {"viridis", "auto", "gray", "diverging"};
            PYR_TRY(parse_choice(sec, key, v, maps, COUNT(maps), &choice));
            cfg->colormap = choice;
            return PYR_OK;
        }
        if (!strcmp(key, "probes_png")) {
            cfg->given |= PYR_GIVEN_MAXWELL; /* a plot of the probes' series */
            return copy_path(sec, key, v, cfg->probes_png);
        }
        return unknown_key(sec, key, keys_output, COUNT(keys_output));
    }
    const char *near = pyr_suggest(sec, sections, COUNT(sections));
    if (near) return pyr_fail(PYR_ERR_CONFIG, "unknown section [%s]; did you mean [%s]?", sec, near);
    return pyr_fail(PYR_ERR_CONFIG,
                    "unknown section [%s]; the sections are [grid], [scheme], [initial], [rhs], [run], [output], and Maxwell's "
                    "[boundary], [material], [source], [probe], [monitor]",
                    sec);
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    parse_t *ps = user;
    if (!section || !*section) {
        ps->status = pyr_fail(PYR_ERR_CONFIG, "key '%s' appears before any [section]; put it under [grid], [scheme], [initial], [rhs], [run] or [output]", name);
        return 0;
    }
    ps->status = apply(ps->cfg, section, name, value);
    /* inputs named by a problem file are relative to its folder (outputs,
     * and paths given with --set, to the current directory) */
    if (ps->status == PYR_OK && ps->base[0] && value[0] && value[0] != '/') {
        pyr_problem_t *p = &ps->cfg->problem;
        const int material = !strcmp(section, "material");
        char *dst = !strcmp(name, "file") && !strcmp(section, "initial") ? p->init_file
                    : !strcmp(name, "file") && !strcmp(section, "rhs")   ? p->poisson.rhs_file
                    : material && !strcmp(name, "eps_file")              ? p->maxwell.eps_file
                    : material && !strcmp(name, "sigma_file")            ? p->maxwell.sigma_file
                    : material && !strcmp(name, "mu_file")               ? p->maxwell.mu_file
                    : material && !strcmp(name, "map")                   ? p->maxwell.map_file
                                                                         : NULL;
        if (dst && snprintf(dst, PYR_PATH_MAX, "%s/%s", ps->base, value) >= PYR_PATH_MAX)
            ps->status = pyr_fail(PYR_ERR_CONFIG, "%s.%s: %s/%s is longer than %d bytes", section, name, ps->base, value, PYR_PATH_MAX - 1);
    }
    return ps->status == PYR_OK;
}

static pyr_status_t load_text(pyr_config_t *cfg, const char *text, size_t len, const char *source, const char *base)
{
    parse_t ps = {cfg, source, PYR_OK, 0, ""};
    if (base) snprintf(ps.base, sizeof ps.base, "%s", base);
    int line = 0;
    pyr_status_t st = pyr_ini_parse(text, len, 0, on_entry, &ps, &line);
    if (st != PYR_OK) return pyr_fail_context(ps.status != PYR_OK ? ps.status : st, "%s line %d: ", source, line);
    snprintf(cfg->source, sizeof cfg->source, "%s", source);
    return PYR_OK;
}

pyr_status_t pyr_config_load_text(pyr_config_t *cfg, const char *text, size_t len, const char *source)
{
    return load_text(cfg, text, len, source, NULL);
}

pyr_status_t pyr_config_load(pyr_config_t *cfg, const char *path)
{
    if (strlen(path) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_IO, "problem file path too long");
    char *text = NULL;
    size_t len = 0;
    PYR_TRY(pyr_ini_read_file(path, "problem file", &text, &len));
    char base[PYR_PATH_MAX];
    snprintf(base, sizeof base, "%s", path);
    char *slash = strrchr(base, '/');
    if (slash) *(slash == base ? slash + 1 : slash) = 0;
    pyr_status_t st = load_text(cfg, text, len, path, slash ? base : NULL);
    free(text);
    return st;
}

pyr_status_t pyr_config_apply(pyr_config_t *cfg, const char *section, const char *key, const char *value)
{
    return apply(cfg, section, key, value);
}

pyr_status_t pyr_config_set(pyr_config_t *cfg, const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    const char *dot = strchr(assignment, '.');
    if (!eq || !dot || dot > eq)
        return pyr_fail(PYR_ERR_CONFIG, "--set '%s': write section.key=value, e.g. --set scheme.steps=200", assignment);
    char sec[64], key[64];
    size_t ls = (size_t)(dot - assignment), lk = (size_t)(eq - dot - 1);
    if (ls == 0 || ls >= sizeof sec || lk == 0 || lk >= sizeof key)
        return pyr_fail(PYR_ERR_CONFIG, "--set '%s': write section.key=value, e.g. --set scheme.steps=200", assignment);
    memcpy(sec, assignment, ls);
    sec[ls] = 0;
    memcpy(key, dot + 1, lk);
    key[lk] = 0;
    pyr_status_t st = apply(cfg, sec, key, eq + 1);
    if (st != PYR_OK) return pyr_fail_context(st, "--set %s: ", assignment);
    return PYR_OK;
}

pyr_status_t pyr_config_finish(pyr_config_t *cfg)
{
    pyr_options_t *o = &cfg->options;
    pyr_problem_t *p = &cfg->problem;
    /* keys of another scheme are mistakes, not settings to ignore */
    if (p->equation == PYR_EQ_POISSON && (cfg->given & (PYR_GIVEN_HEAT | PYR_GIVEN_DT | PYR_GIVEN_STEPS)))
        return pyr_fail(PYR_ERR_CONFIG,
                        "scheme.equation = poisson takes iterations, tolerance, check_every, omega and iteration (and [rhs]), not the heat "
                        "equation's alpha, dt or steps; remove those keys (the most sweeps is iterations = N)");
    if (p->equation != PYR_EQ_POISSON && (cfg->given & PYR_GIVEN_POISSON))
        return pyr_fail(PYR_ERR_CONFIG,
                        "iterations, tolerance, check_every, omega, iteration, [rhs] and [boundary] x- .. z+ belong to scheme.equation = poisson; "
                        "the %s equation takes %s (or set equation = poisson)",
                        pyr_equation_name(p->equation), p->equation == PYR_EQ_HEAT ? "alpha, dt and steps" : "courant or dt, and steps");
    if (p->equation != PYR_EQ_MAXWELL && (cfg->given & PYR_GIVEN_MAXWELL))
        return pyr_fail(PYR_ERR_CONFIG,
                        "courant, mode, [boundary], [material], [source], [probe], [monitor], output.probes, output.probes_png, output.spectra, output.spectra_png and output.component belong to "
                        "scheme.equation = maxwell; remove them or set equation = maxwell");
    if (p->equation == PYR_EQ_MAXWELL && (cfg->given & PYR_GIVEN_HEAT))
        return pyr_fail(PYR_ERR_CONFIG, "scheme.alpha belongs to the heat equation; scheme.equation = maxwell takes courant (or dt) and steps");
    /* Maxwell's fields start at zero unless the file says otherwise */
    if (p->equation == PYR_EQ_MAXWELL && !(cfg->given & PYR_GIVEN_INIT)) p->init = PYR_INIT_ZERO;
    if (cfg->given & PYR_GIVEN_DT) {
        if (p->equation == PYR_EQ_MAXWELL) p->maxwell.dt = cfg->dt;
        else p->heat.dt = cfg->dt;
    }
    if (p->equation == PYR_EQ_POISSON && !(cfg->given & PYR_GIVEN_ITERATIONS)) {
        if (!(p->poisson.tolerance > 0))
            return pyr_fail(PYR_ERR_CONFIG,
                            "scheme.equation = poisson needs a way to stop: give tolerance = EPS (stop once a sweep changes u by "
                            "less than EPS) and/or iterations = N (the most sweeps)");
        p->steps = PYR_CONFIG_POISSON_ITERATIONS;
    }
    /* axes beyond dims that the file does not mention have one node */
    for (int d = p->dims; d < 3; d++)
        if (!(cfg->n_given & (1 << d))) p->n[d] = 1;
    o->snapshot_every = cfg->every;
    pyr_decomp_t d = o->decomposition;
    if (d == PYR_DECOMP_AUTO && cfg->block > 0 && cfg->rows == 0 && p->dims == 2) d = o->decomposition = PYR_DECOMP_BLOCKS;
    o->piece = d == PYR_DECOMP_BLOCKS ? cfg->block : cfg->rows;
    return PYR_OK;
}
