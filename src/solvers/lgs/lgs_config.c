/* Problem files of `pyrgrid solve`: the INI reader (io/ini.h) calls handle() for every key;
 * --set overrides go through the same function. */
#include "solvers/lgs/lgs_config.h"

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/suggest.h"
#include "io/ini.h"
#include "io/npy.h"

static const char *const sections[] = {"system", "parabolic", "run", "output"};
static const char *const system_keys[] = {"kind",    "N",        "M",         "precision",    "cC",
                                          "aC",      "bC",       "cA",        "cB",           "F",
                                          "ordering", "omega",   "precondition", "tolerance", "max_iterations",
                                          "initial", "initial_file"};
static const char *const parabolic_keys[] = {"tau", "lx", "lz", "a", "f", "u_prev", "boundary"};
static const char *const run_keys[] = {"backend",           "threads",         "check_every", "report_every",
                                       "stagnation_window", "divergence_limit"};
static const char *const output_keys[] = {"solution", "history", "image", "history_image"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct {
    pyr_lgs_config_t *cfg;
    pyr_status_t st;
    char msg[1024];
} parse_t;

static void cfg_free_strings(pyr_lgs_config_t *c)
{
    for (int a = 0; a < 6; a++) free(c->arrays[a]);
    free(c->initial_file);
    free((char *)c->parabolic.a.formula);
    free((char *)c->parabolic.a.path);
    free((char *)c->parabolic.f.formula);
    free((char *)c->parabolic.f.path);
    free((char *)c->parabolic.u_prev.formula);
    free((char *)c->parabolic.u_prev.path);
    free((char *)c->parabolic.boundary.formula);
    free((char *)c->parabolic.boundary.path);
    free(c->solution);
    free(c->history);
    free(c->image);
    free(c->history_image);
}

void pyr_lgs_config_destroy(pyr_lgs_config_t **cfg)
{
    if (!cfg || !*cfg) return;
    cfg_free_strings(*cfg);
    free(*cfg);
    *cfg = NULL;
}

static int bad(parse_t *ps, pyr_status_t st, const char *fmt, ...) PYR_PRINTF(3, 4);
static int bad(parse_t *ps, pyr_status_t st, const char *fmt, ...)
{
    if (ps->st == PYR_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->msg, sizeof ps->msg, fmt, ap);
        va_end(ap);
        ps->st = st;
    }
    return 0;
}

static int set_string(parse_t *ps, char **dst, const char *value)
{
    char *s = strdup(value);
    if (!s) return bad(ps, PYR_ERR_NOMEM, "out of memory");
    free(*dst);
    *dst = s;
    return 1;
}

static int parse_double(parse_t *ps, const char *sec, const char *key, const char *value, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    while (*end == ' ' || *end == '\t') end++;
    if (end == value || *end)
        return bad(ps, PYR_ERR_CONFIG, "%s.%s = \"%s\" is not a number (e.g. %s.%s = 1e-10)", sec, key, value, sec, key);
    if (errno == ERANGE && isinf(v))
        return bad(ps, PYR_ERR_CONFIG, "%s.%s = \"%s\" is too large: doubles end at %.3g", sec, key, value, DBL_MAX);
    if (!isfinite(v))
        return bad(ps, PYR_ERR_CONFIG, "%s.%s = \"%s\" is not a finite number (e.g. %s.%s = 1e-10)", sec, key, value,
                   sec, key);
    /* strtod flags a result below the smallest normal double (subnormal, or 0 for less) */
    if (errno == ERANGE)
        return bad(ps, PYR_ERR_CONFIG, "%s.%s = \"%s\" is too small to compute with: below %.3g, the smallest normal double",
                   sec, key, value, DBL_MIN);
    *out = v;
    return 1;
}

static int parse_int(parse_t *ps, const char *sec, const char *key, const char *value, int64_t lo, int64_t hi,
                     int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (*end == 'e' || *end == 'E' || *end == '.') { /* 1e5, 1000.0: accept when integral */
        double d = strtod(value, &end);
        if (d == floor(d) && fabs(d) < 9e18) v = (long long)d;
        else end = (char *)value;
    }
    while (*end == ' ' || *end == '\t') end++;
    if (end == value || *end || errno == ERANGE)
        return bad(ps, PYR_ERR_CONFIG, "%s.%s = \"%s\" is not an integer", sec, key, value);
    if (v < lo || v > hi)
        return bad(ps, PYR_ERR_CONFIG, "%s.%s = %lld is out of range: it must be between %lld and %lld", sec, key, v,
                   (long long)lo, (long long)hi);
    *out = v;
    return 1;
}

/* value must be one of `choices`; returns its index or -1 after bad(). */
static int parse_choice(parse_t *ps, const char *sec, const char *key, const char *value,
                        const char *const *choices, int n)
{
    for (int c = 0; c < n; c++)
        if (!strcasecmp(value, choices[c])) return c;
    const char *hint = pyr_suggest(value, choices, n);
    char list[256] = "";
    for (int c = 0; c < n; c++) {
        strncat(list, choices[c], sizeof list - strlen(list) - 1);
        if (c < n - 1) strncat(list, " | ", sizeof list - strlen(list) - 1);
    }
    bad(ps, PYR_ERR_CONFIG, "%s.%s = \"%s\" is not one of %s%s%s%s", sec, key, value, list,
        hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
    return -1;
}

static int ends_with_npy(const char *s)
{
    size_t n = strlen(s);
    return n >= 4 && !strcasecmp(s + n - 4, ".npy");
}

/* a number, an .npy path or a formula */
static int parse_field(parse_t *ps, pyr_lgs_field_spec_t *f, const char *value)
{
    free((char *)f->formula);
    free((char *)f->path);
    f->formula = f->path = NULL;
    if (ends_with_npy(value)) {
        f->path = strdup(value);
        if (!f->path) return bad(ps, PYR_ERR_NOMEM, "out of memory");
        return 1;
    }
    char *end;
    double v = strtod(value, &end);
    while (*end == ' ' || *end == '\t') end++;
    if (end != value && !*end && isfinite(v)) {
        f->value = v;
        return 1;
    }
    f->formula = strdup(value);
    if (!f->formula) return bad(ps, PYR_ERR_NOMEM, "out of memory");
    return 1;
}

static int unknown_key(parse_t *ps, const char *sec, const char *key, const char *const *keys, int n)
{
    const char *hint = pyr_suggest(key, keys, n);
    char list[512] = "";
    for (int c = 0; c < n; c++) {
        strncat(list, keys[c], sizeof list - strlen(list) - 1);
        if (c < n - 1) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return bad(ps, PYR_ERR_CONFIG, "unknown key \"%s\" in section [%s]%s%s%s; known keys: %s", key, sec,
               hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "", list);
}

static int handle(void *user, const char *sec, const char *key, const char *value)
{
    parse_t *ps = user;
    if (ps->st != PYR_OK) return 0;
    pyr_lgs_config_t *c = ps->cfg;
    pyr_lgs_options_t *o = &c->options;
#define IS(name) (!strcasecmp(key, name))
    if (!strcasecmp(sec, "system")) {
        if (IS("kind")) {
            static const char *const kinds[] = {"test1", "test2", "laplace", "parabolic", "files"};
            int k = parse_choice(ps, sec, key, value, kinds, COUNT(kinds));
            if (k < 0) return 0;
            snprintf(c->kind, sizeof c->kind, "%s", kinds[k]);
            return 1;
        }
        if (IS("N")) return parse_int(ps, sec, "N", value, 1, INT64_C(1) << 40, &c->n);
        if (IS("M")) return parse_int(ps, sec, "M", value, 1, INT64_C(1) << 40, &c->m);
        if (IS("precision")) {
            static const char *const p[] = {"float", "double"};
            int k = parse_choice(ps, sec, key, value, p, 2);
            if (k < 0) return 0;
            c->precision = k ? PYR_DOUBLE : PYR_FLOAT;
            return 1;
        }
        for (int a = 0; a < 6; a++)
            if (IS(system_keys[4 + a])) return set_string(ps, &c->arrays[a], value);
        if (IS("ordering")) {
            static const char *const p[] = {"lexicographic", "redblack"};
            int k = parse_choice(ps, sec, key, value, p, 2);
            if (k < 0) return 0;
            o->ordering = k ? PYR_LGS_REDBLACK : PYR_LGS_LEXICOGRAPHIC;
            return 1;
        }
        if (IS("omega")) return parse_double(ps, sec, key, value, &o->omega);
        if (IS("precondition")) {
            static const char *const p[] = {"none", "jacobi"};
            int k = parse_choice(ps, sec, key, value, p, 2);
            if (k < 0) return 0;
            o->precondition = k ? PYR_LGS_PRECOND_JACOBI : PYR_LGS_PRECOND_NONE;
            return 1;
        }
        if (IS("tolerance")) return parse_double(ps, sec, key, value, &o->tolerance);
        if (IS("max_iterations")) return parse_int(ps, sec, key, value, 0, INT64_MAX / 4, &o->max_iterations);
        if (IS("initial")) {
            static const char *const p[] = {"zero", "file"};
            int k = parse_choice(ps, sec, key, value, p, 2);
            if (k < 0) return 0;
            c->initial_from_file = k;
            return 1;
        }
        if (IS("initial_file")) return set_string(ps, &c->initial_file, value);
        return unknown_key(ps, sec, key, system_keys, COUNT(system_keys));
    }
    if (!strcasecmp(sec, "parabolic")) {
        pyr_lgs_parabolic_t *p = &c->parabolic;
        if (IS("tau")) return parse_double(ps, sec, key, value, &p->tau);
        if (IS("lx")) return parse_double(ps, sec, key, value, &p->lx);
        if (IS("lz")) return parse_double(ps, sec, key, value, &p->lz);
        if (IS("a")) return parse_field(ps, &p->a, value);
        if (IS("f")) return parse_field(ps, &p->f, value);
        if (IS("u_prev")) return parse_field(ps, &p->u_prev, value);
        if (IS("boundary")) return parse_field(ps, &p->boundary, value);
        return unknown_key(ps, sec, key, parabolic_keys, COUNT(parabolic_keys));
    }
    if (!strcasecmp(sec, "run")) {
        if (IS("backend")) {
            static const char *const p[] = {"auto", "cpu", "cuda"};
            int k = parse_choice(ps, sec, key, value, p, 3);
            if (k < 0) return 0;
            o->backend = k == 0 ? PYR_BACKEND_AUTO : k == 1 ? PYR_BACKEND_CPU : PYR_BACKEND_CUDA;
            return 1;
        }
        int64_t v;
        if (IS("threads")) {
            if (!parse_int(ps, sec, key, value, 0, 4096, &v)) return 0;
            o->threads = (int)v;
            return 1;
        }
        if (IS("check_every")) return parse_int(ps, sec, key, value, 1, INT64_MAX / 4, &o->check_every);
        if (IS("report_every")) return parse_int(ps, sec, key, value, 0, INT64_MAX / 4, &o->report_every);
        if (IS("stagnation_window"))
            return parse_int(ps, sec, key, value, 0, INT64_MAX / 4, &o->stagnation_window);
        if (IS("divergence_limit")) return parse_double(ps, sec, key, value, &o->divergence_limit);
        return unknown_key(ps, sec, key, run_keys, COUNT(run_keys));
    }
    if (!strcasecmp(sec, "output")) {
        char **dst = IS("solution") ? &c->solution
                     : IS("history") ? &c->history
                     : IS("image") ? &c->image
                     : IS("history_image") ? &c->history_image
                                           : NULL;
        if (!dst) return unknown_key(ps, sec, key, output_keys, COUNT(output_keys));
        if (!*value) { /* "solution =" switches an output off */
            free(*dst);
            *dst = NULL;
            return 1;
        }
        return set_string(ps, dst, value);
    }
#undef IS
    const char *hint = pyr_suggest(sec, sections, COUNT(sections));
    return bad(ps, PYR_ERR_CONFIG, "unknown section [%s]%s%s%s; known sections: [system], [parabolic], [run], "
               "[output]", sec, hint ? "; did you mean [" : "", hint ? hint : "", hint ? "]?" : "");
}

static void config_defaults(pyr_lgs_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->precision = PYR_DOUBLE;
    pyr_lgs_parabolic_default(&c->parabolic);
    pyr_lgs_options_default(&c->options);
    c->options.report_every = 1000;
}

/* Prefix a relative path with the problem file's folder. */
static pyr_status_t resolve(char **p, const char *path)
{
    if (!*p || !**p || **p == '/') return PYR_OK;
    size_t dir = (size_t)(strrchr(path, '/') - path);
    size_t n = dir + 1 + strlen(*p) + 1;
    char *r = malloc(n);
    if (!r) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    snprintf(r, n, "%.*s/%s", (int)dir, path, *p);
    free(*p);
    *p = r;
    return PYR_OK;
}

static pyr_status_t resolve_inputs(pyr_lgs_config_t *c, const char *path)
{
    for (int a = 0; a < 6; a++) PYR_TRY(resolve(&c->arrays[a], path));
    PYR_TRY(resolve(&c->initial_file, path));
    pyr_lgs_field_spec_t *fs[3] = {&c->parabolic.a, &c->parabolic.f, &c->parabolic.u_prev};
    for (int i = 0; i < 3; i++) {
        char *q = (char *)fs[i]->path;
        PYR_TRY(resolve(&q, path));
        fs[i]->path = q;
    }
    return PYR_OK;
}

pyr_status_t pyr_lgs_config_load(const char *path, const char *const *sets, int nsets, pyr_lgs_config_t **cfg)
{
    if (!cfg) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_config_load: cfg is NULL");
    *cfg = NULL;
    char *text = NULL;
    size_t len = 0;
    if (path) PYR_TRY(pyr_ini_read_file(path, "problem file", &text, &len));
    pyr_status_t st = pyr_lgs_config_load_text(text, len, path, sets, nsets, cfg);
    free(text);
    return st;
}

pyr_status_t pyr_lgs_config_load_text(const char *text, size_t len, const char *path, const char *const *sets, int nsets,
                                      pyr_lgs_config_t **cfg)
{
    if (!cfg) return pyr_fail(PYR_ERR_ARG, "pyr_lgs_config_load: cfg is NULL");
    *cfg = NULL;
    pyr_lgs_config_t *c = malloc(sizeof *c);
    if (!c) return pyr_fail(PYR_ERR_NOMEM, "out of memory");
    config_defaults(c);
    parse_t ps = {c, PYR_OK, ""};
    pyr_status_t st = PYR_OK;
    if (text) {
        int line = 0;
        st = pyr_ini_parse(text, len, PYR_INI_ANY_CASE, handle, &ps, &line);
        if (ps.st != PYR_OK) {
            st = pyr_fail(ps.st, "%s:%d: %s", path ? path : "problem", line, ps.msg);
            goto fail;
        }
        if (st != PYR_OK) {
            st = pyr_fail_context(st, "%s:%d: ", path ? path : "problem", line);
            goto fail;
        }
    }
    /* input files the problem file names are relative to its folder (--set paths: to the current directory) */
    if (text && path && strchr(path, '/') && (st = resolve_inputs(c, path)) != PYR_OK) goto fail;
    for (int s = 0; s < nsets; s++) {
        const char *arg = sets[s];
        const char *eq = strchr(arg, '=');
        const char *dot = strchr(arg, '.');
        if (!eq || !dot || dot > eq || dot == arg || dot + 1 == eq) {
            st = pyr_fail(PYR_ERR_CONFIG, "--set %s: expected section.key=value, e.g. --set system.omega=1.5", arg);
            goto fail;
        }
        char sec[64], key[64];
        size_t ls = (size_t)(dot - arg), lk = (size_t)(eq - dot - 1);
        if (ls >= sizeof sec || lk >= sizeof key) {
            st = pyr_fail(PYR_ERR_CONFIG, "--set %s: section or key name too long", arg);
            goto fail;
        }
        memcpy(sec, arg, ls);
        sec[ls] = '\0';
        memcpy(key, dot + 1, lk);
        key[lk] = '\0';
        handle(&ps, sec, key, eq + 1);
        if (ps.st != PYR_OK) {
            st = pyr_fail(ps.st, "--set %s: %s", arg, ps.msg);
            goto fail;
        }
    }
    if (!c->kind[0]) {
        st = pyr_fail(PYR_ERR_CONFIG, "%s: system.kind is not set; set kind = test1, test2, laplace, parabolic or "
                      "files in [system]", path ? path : "problem");
        goto fail;
    }
    if (strcmp(c->kind, "files") && (c->n <= 0 || c->m <= 0)) {
        st = pyr_fail(PYR_ERR_CONFIG, "%s: system.kind = %s needs the size: set N and M in [system] (e.g. N = 256, "
                      "M = 256)", path ? path : "problem", c->kind);
        goto fail;
    }
    if (c->precision != PYR_DOUBLE) {
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "system.precision = float: the line Gauss-Seidel solver works in double "
                      "only; use precision = double");
        goto fail;
    }
    if (c->initial_from_file && !c->initial_file) {
        st = pyr_fail(PYR_ERR_CONFIG, "system.initial = file needs system.initial_file = Y0.npy (an N x M float64 "
                      "array)");
        goto fail;
    }
    *cfg = c;
    return PYR_OK;
fail:
    pyr_lgs_config_destroy(&c);
    return st;
}

pyr_status_t pyr_lgs_config_system(const pyr_lgs_config_t *c, pyr_lgs_system_t **sys)
{
    if (!strcmp(c->kind, "test1")) return pyr_lgs_system_test1(c->n, c->m, sys);
    if (!strcmp(c->kind, "test2")) return pyr_lgs_system_test2(c->n, c->m, sys);
    if (!strcmp(c->kind, "laplace")) return pyr_lgs_system_laplace(c->n, c->m, sys);
    if (!strcmp(c->kind, "parabolic")) return pyr_lgs_system_parabolic(c->n, c->m, &c->parabolic, sys);
    return pyr_lgs_system_load((const char *const *)c->arrays, c->n, c->m, sys);
}

pyr_status_t pyr_lgs_config_initial(const pyr_lgs_config_t *c, const pyr_lgs_system_t *sys, double *y)
{
    size_t count = (size_t)sys->n * (size_t)sys->m;
    if (!c->initial_from_file) {
        memset(y, 0, count * sizeof *y);
        return PYR_OK;
    }
    int64_t shape[2] = {sys->n, sys->m};
    pyr_status_t st = pyr_npy_read_expect(c->initial_file, 2, shape, PYR_DOUBLE, y);
    if (st != PYR_OK) return pyr_fail_context(st, "system.initial_file: ");
    return PYR_OK;
}

char *pyr_lgs_config_history_image(const pyr_lgs_config_t *c)
{
    if (c->history_image) return strdup(c->history_image);
    if (!c->history) return NULL;
    const char *h = c->history;
    const char *slash = strrchr(h, '/');
    const char *dot = strrchr(h, '.');
    size_t stem = (dot && (!slash || dot > slash) && dot != h) ? (size_t)(dot - h) : strlen(h);
    char *out = malloc(stem + 5);
    if (!out) return NULL;
    memcpy(out, h, stem);
    memcpy(out + stem, ".png", 5);
    return out;
}
