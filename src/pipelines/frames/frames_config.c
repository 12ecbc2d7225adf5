/* The [frames] section (frames_config.h), read with the project's INI reader (io/ini.h). */
#include "pipelines/frames/frames_config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "io/ini.h"
#include "core/suggest.h"

static const char *const keys[] = {"history", "epsilon", "weights", "poly_degree", "poly_window", "reference",
                                   "reference_every", "coarse", "max_iterations", "tolerance", "border", "threshold",
                                   "psf_fwhm", "clean", "clean_radius", "clean_threshold", "noise_frames", "warmup", "max_candidates",
                                   "saturation", "badpixels", "backend", "device", "threads", "input", "residual", "shifts", "candidates",
                                   "snr_image", "max_snr", "mask_bits", "noise", "tracks", "link_min_detections",
                                   "link_max_gap", "link_max_speed", "link_min_speed", "link_max_residual"};
#define NKEYS ((int)(sizeof keys / sizeof keys[0]))

void fr_config_default(fr_config_t *c)
{
    memset(c, 0, sizeof *c);
    pyr_frames_options_default(&c->o);
    snprintf(c->residual, sizeof c->residual, "residual.fits");
    snprintf(c->shifts, sizeof c->shifts, "shifts.csv");
    snprintf(c->candidates, sizeof c->candidates, "candidates.csv");
    snprintf(c->snr_image, sizeof c->snr_image, "max_snr.png");
    snprintf(c->mask_bits, sizeof c->mask_bits, "all");
    pyr_frames_link_options_default(&c->link);
}

static pyr_status_t as_int(const char *key, const char *v, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    while (*end == ' ') end++;
    if (end == v || *end || errno || x < -1000000000L || x > 1000000000L)
        return pyr_fail(PYR_ERR_CONFIG, "frames.%s = \"%s\" is not an integer", key, v);
    *out = (int)x;
    return PYR_OK;
}

static pyr_status_t as_double(const char *key, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    while (*end == ' ') end++;
    if (end == v || *end) return pyr_fail(PYR_ERR_CONFIG, "frames.%s = \"%s\" is not a number", key, v);
    if (errno == ERANGE && isinf(x))
        return pyr_fail(PYR_ERR_CONFIG, "frames.%s = \"%s\" is too large: doubles end at %.3g", key, v, DBL_MAX);
    if (!isfinite(x)) return pyr_fail(PYR_ERR_CONFIG, "frames.%s = \"%s\" is not a finite number", key, v);
    /* strtod flags a result below the smallest normal double (subnormal, or 0 for less) */
    if (errno == ERANGE)
        return pyr_fail(PYR_ERR_CONFIG, "frames.%s = \"%s\" is too small to compute with: below %.3g, the smallest normal double", key, v,
                        DBL_MIN);
    *out = x;
    return PYR_OK;
}

static pyr_status_t as_choice(const char *key, const char *v, const char *const *choices, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(v, choices[i])) {
            *out = i;
            return PYR_OK;
        }
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
        if (i < n - 1) strncat(list, " | ", sizeof list - strlen(list) - 1);
    }
    const char *hint = pyr_suggest(v, choices, n);
    return pyr_fail(PYR_ERR_CONFIG, "frames.%s = \"%s\" is not one of %s%s%s%s", key, v, list, hint ? "; did you mean \"" : "",
                    hint ? hint : "", hint ? "\"?" : "");
}

static pyr_status_t set_path(char *dst, const char *key, const char *v)
{
    if (strlen(v) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_CONFIG, "frames.%s: path longer than %d bytes", key, PYR_PATH_MAX - 1);
    snprintf(dst, PYR_PATH_MAX, "%s", v);
    return PYR_OK;
}

static pyr_status_t set_key(fr_config_t *c, const char *key, const char *v)
{
    pyr_frames_options_t *o = &c->o;
    int i;
#define IS(name) (!strcasecmp(key, name))
    if (IS("history")) return as_int(key, v, &o->history);
    if (IS("epsilon")) return as_double(key, v, &o->epsilon);
    if (IS("weights")) {
        static const char *const w[] = {"align", "poly", "plain"};
        PYR_TRY(as_choice(key, v, w, 3, &i));
        o->weights = (pyr_frames_weights_t)i;
        return PYR_OK;
    }
    if (IS("poly_degree")) return as_int(key, v, &o->poly_degree);
    if (IS("poly_window")) return as_int(key, v, &o->poly_window);
    if (IS("reference")) {
        static const char *const r[] = {"first", "rolling"};
        PYR_TRY(as_choice(key, v, r, 2, &i));
        o->reference = (pyr_frames_reference_t)i;
        return PYR_OK;
    }
    if (IS("reference_every")) return as_int(key, v, &o->reference_every);
    if (IS("coarse")) {
        static const char *const r[] = {"always", "never", "auto"};
        PYR_TRY(as_choice(key, v, r, 3, &i));
        o->coarse = (pyr_frames_coarse_t)i;
        return PYR_OK;
    }
    if (IS("max_iterations")) return as_int(key, v, &o->max_iterations);
    if (IS("tolerance")) return as_double(key, v, &o->tolerance);
    if (IS("border")) return as_int(key, v, &o->border);
    if (IS("threshold")) return as_double(key, v, &o->threshold);
    if (IS("psf_fwhm")) return as_double(key, v, &o->psf_fwhm);
    if (IS("clean")) {
        static const char *const b[] = {"no", "yes", "false", "true", "0", "1", "off", "on"};
        PYR_TRY(as_choice(key, v, b, 8, &i));
        o->clean = i % 2;
        return PYR_OK;
    }
    if (IS("clean_radius")) return as_double(key, v, &o->clean_radius);
    if (IS("clean_threshold")) return as_double(key, v, &o->clean_threshold);
    if (IS("noise_frames")) return as_int(key, v, &o->noise_frames);
    if (IS("warmup")) return as_int(key, v, &o->warmup);
    if (IS("max_candidates")) return as_int(key, v, &o->max_candidates);
    if (IS("saturation")) {
        if (!strcasecmp(v, "none")) {
            o->saturation = 0;
            return PYR_OK;
        }
        PYR_TRY(as_double(key, v, &o->saturation));
        if (!(o->saturation >= 0))
            return pyr_fail(PYR_ERR_CONFIG, "frames.saturation = \"%s\" must be a level in the data's units (ADU) or none", v);
        return PYR_OK;
    }
    if (IS("badpixels")) {
        static const char *const b[] = {"none", "auto"};
        return as_choice(key, v, b, 2, &o->badpixels);
    }
    if (IS("noise")) {
        static const char *const b[] = {"auto", "model", "variance"};
        PYR_TRY(as_choice(key, v, b, 3, &i));
        o->noise = (pyr_frames_noise_t)i;
        return PYR_OK;
    }
    if (IS("backend")) {
        static const char *const b[] = {"auto", "cpu", "cuda"};
        PYR_TRY(as_choice(key, v, b, 3, &i));
        o->backend = (pyr_backend_kind_t)i;
        return PYR_OK;
    }
    if (IS("device")) return as_int(key, v, &o->device);
    if (IS("threads")) return as_int(key, v, &o->threads);
    if (IS("input")) return set_path(c->input, key, v);
    if (IS("residual")) return set_path(c->residual, key, v);
    if (IS("shifts")) return set_path(c->shifts, key, v);
    if (IS("candidates")) return set_path(c->candidates, key, v);
    if (IS("snr_image")) return set_path(c->snr_image, key, v);
    if (IS("max_snr")) return set_path(c->max_snr, key, v);
    if (IS("tracks")) return set_path(c->tracks, key, v);
    if (IS("link_min_detections")) return as_int(key, v, &c->link.min_detections);
    if (IS("link_max_gap")) return as_int(key, v, &c->link.max_gap);
    if (IS("link_max_speed")) return as_double(key, v, &c->link.max_speed);
    if (IS("link_min_speed")) return as_double(key, v, &c->link.min_speed);
    if (IS("link_max_residual")) return as_double(key, v, &c->link.max_residual);
    if (IS("mask_bits")) {
        if (!*v || strlen(v) >= sizeof c->mask_bits)
            return pyr_fail(PYR_ERR_CONFIG, "frames.mask_bits = \"%s\": give all, bit values (0x2f) or MASK plane names (BAD,SAT,CR)", v);
        snprintf(c->mask_bits, sizeof c->mask_bits, "%s", v);
        return PYR_OK;
    }
#undef IS
    const char *hint = pyr_suggest(key, keys, NKEYS);
    return pyr_fail(PYR_ERR_CONFIG, "unknown key \"%s\" in section [frames]%s%s%s", key, hint ? "; did you mean \"" : "",
                    hint ? hint : "", hint ? "\"?" : "");
}

typedef struct {
    fr_config_t *c;
    pyr_status_t st;
    char msg[1024];
    int line;
} parse_t;

static int handler(void *user, const char *section, const char *key, const char *value)
{
    parse_t *p = user;
    if (p->st != PYR_OK) return 0;
    pyr_status_t st;
    if (strcasecmp(section, "frames")) {
        static const char *const secs[] = {"frames"};
        const char *hint = pyr_suggest(section, secs, 1);
        st = pyr_fail(PYR_ERR_CONFIG, "unknown section [%s]%s; pyrgrid frames reads only [frames]", section,
                      hint ? "; did you mean [frames]?" : "");
    } else {
        st = set_key(p->c, key, value);
    }
    if (st != PYR_OK) {
        p->st = st;
        snprintf(p->msg, sizeof p->msg, "%s", pyr_last_error());
        return 0;
    }
    return 1;
}

pyr_status_t fr_config_load(fr_config_t *c, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    PYR_TRY(pyr_ini_read_file(path, "frames configuration", &text, &len));
    parse_t p = {c, PYR_OK, "", 0};
    int line = 0;
    pyr_status_t st = pyr_ini_parse(text, len, PYR_INI_ANY_CASE, handler, &p, &line);
    free(text);
    if (p.st != PYR_OK) return pyr_fail(p.st, "%s, line %d: %s", path, line, p.msg);
    if (st != PYR_OK) return pyr_fail_context(st, "%s, line %d: ", path, line);
    return PYR_OK;
}

pyr_status_t fr_config_set(fr_config_t *c, const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    if (!eq) return pyr_fail(PYR_ERR_CONFIG, "--set %s: expected frames.key=value", assignment);
    char key[128];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof key) return pyr_fail(PYR_ERR_CONFIG, "--set %s: key too long", assignment);
    memcpy(key, assignment, n);
    key[n] = 0;
    const char *k = key;
    const char *dot = strchr(key, '.');
    if (dot) {
        if (strncasecmp(key, "frames.", 7))
            return pyr_fail(PYR_ERR_CONFIG, "--set %s: pyrgrid frames has only the section [frames] (frames.key=value)", assignment);
        k = dot + 1;
    }
    pyr_status_t st = set_key(c, k, eq + 1);
    if (st != PYR_OK) return pyr_fail_context(st, "--set %s: ", assignment);
    return PYR_OK;
}

pyr_status_t fr_config_set_one(const char *key, const char *value, pyr_frames_options_t *o, pyr_frames_link_options_t *link)
{
    size_t n = strlen(key) + strlen(value) + 16;
    char *assignment = malloc(n);
    fr_config_t *c = malloc(sizeof *c);
    if (!assignment || !c) {
        free(assignment);
        free(c);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    snprintf(assignment, n, "frames.%s=%s", key, value);
    fr_config_default(c);
    if (o) c->o = *o;
    if (link) c->link = *link;
    pyr_status_t st = fr_config_set(c, assignment);
    if (st == PYR_OK && o) *o = c->o;
    if (st == PYR_OK && link) *link = c->link;
    free(assignment);
    free(c);
    return st;
}
