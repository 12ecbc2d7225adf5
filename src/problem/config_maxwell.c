/* Maxwell's problem-file sections (FDTD):
 *
 *   [scheme]   equation = maxwell, courant = 0.5 (or dt), steps, precision, mode = tm | te (2D)
 *   [boundary] kind = pec | cpml, cpml_cells = 10, faces = all | x-,x+,y-,y+,z-,z+,
 *              cpml_order = 3, cpml_sigma_max = 0 (optimum), cpml_kappa_max = 1, cpml_alpha_max = 0.05
 *   [material] eps_r, sigma, mu_r (background), eps_file, sigma_file, mu_file (.npy per node),
 *              shape1 .. shape16 = box X0 X1 Y0 Y1 [Z0 Z1] | sphere CX CY [CZ] R | cylinder AXIS C1 C2 R LO HI,
 *                                  then eps_r=.. sigma=.. mu_r=.. (physical coordinates)
 *                                  and dispersive terms drude=FP GAMMA, lorentz=DEPS F0 GAMMA, debye=DEPS TAU
 *                                  (each may repeat; eps_r is then eps_inf),
 *              drude = FP GAMMA[, FP GAMMA ...], lorentz = DEPS F0 GAMMA[, ...], debye = DEPS TAU[, ...] (background),
 *              map = FILE.npy (an integer label per node), label1 .. label16 = eps_r=.. sigma=.. mu_r=.. and
 *                                  dispersive terms as a shape's (label 0: the background; shapes lie over the map)
 *   [source]   source1 .. source16 = COMPONENT point I J [K] WAVEFORM key=value ...
 *                                  | COMPONENT line I0 J0 [K0] I1 J1 [K1] WAVEFORM key=value ...
 *                                  (or `at X Y [Z]`, `point at X Y [Z]`, `line at X0 Y0 [Z0] X1 Y1 [Z1]`:
 *                                  physical coordinates, see place() below)
 *              WAVEFORM gaussian (width, delay) | ricker (frequency, delay) | sine (frequency, width: the ramp),
 *              and amplitude (1)
 *              planewave1 .. planewave4 = COMPONENT along [+-]AXIS [tilt DEGREES AXIS2] box I0 J0 [K0] I1 J1 [K1] WAVEFORM key=value ...
 *                                  (total-field / scattered-field: the box of nodes is the total-field region)
 *   [probe]    probe1 .. probe32 = COMPONENT I J [K]        (node indices) | COMPONENT at X Y [Z] (physical)
 *   [monitor]  dft1 .. dft8 = COMPONENTS point I J [K] | box I0 J0 [K0] I1 J1 [K1]
 *                             | plane AXIS INDEX [LO HI [LO HI]]   freqs=F1,F2,... | freqs=FMIN:FMAX:N
 *              flux1 .. flux8 = plane AXIS INDEX [LO HI [LO HI]] freqs=...
 *              (COMPONENTS: Ez or Ey,Hz; node indices; a plane's limits along the other axes in order;
 *              `at` before a region's numbers (point at, box at, plane AXIS at, a plane wave's box at):
 *              physical coordinates)
 *   [output]   probes = probes.csv, spectra = spectra.csv, component = Ez (the field of the image)
 *
 * Numbered keys, as a key may be given once in a section. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "problem/config.h"
#include "schemes/maxwell.h"

#define MAXTOK 24

/* Split a value into blank-separated tokens (modifies buf). */
static int tokens(char *buf, char **tok)
{
    int n = 0;
    for (char *s = strtok(buf, " \t,"); s && n < MAXTOK; s = strtok(NULL, " \t,")) tok[n++] = s;
    return n;
}

/* SECTION.KEY's value copied into buf (1024 bytes) and cut into its tokens;
 * where (96 bytes) names the key for messages. */
static pyr_status_t split_line(const char *section, const char *key, const char *value, char *buf, char *where, char **tok, int *n)
{
    snprintf(where, 96, "%s.%s", section, key);
    if (strlen(value) >= 1024) return pyr_fail(PYR_ERR_CONFIG, "%s: too long", where);
    strcpy(buf, value);
    *n = tokens(buf, tok);
    return PYR_OK;
}

/* Written as a number (its range is real_of's to judge, with a message). */
static int is_number(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    (void)v;
    return end != s && *end == 0;
}

static pyr_status_t component_of(const char *where, const char *s, pyr_component_t *c)
{
    for (int k = 0; k < 6; k++)
        if (!strcmp(s, pyr_maxwell_component_name(k))) {
            *c = (pyr_component_t)k;
            return PYR_OK;
        }
    return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a component; use Ex, Ey, Ez, Hx, Hy or Hz", where, s);
}

static pyr_status_t real_of(const char *where, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a number", where, s);
    if (errno == ERANGE && isinf(v))
        return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is too large: doubles end at %.3g", where, s, DBL_MAX);
    if (!isfinite(v)) return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a finite number", where, s);
    /* strtod flags a result below the smallest normal double (subnormal, or 0 for less) */
    if (errno == ERANGE)
        return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is too small to compute with: below %.3g, the smallest normal double", where, s, DBL_MIN);
    *out = v;
    return PYR_OK;
}

static pyr_status_t index_of(const char *where, const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < 0) return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a node index (an integer >= 0)", where, s);
    *out = v;
    return PYR_OK;
}

/* Whether component c is stored half a cell past its node along axis a (the Yee offsets). */
static int staggered(int c, int a) { return c < 3 ? a == c : a != c - 3; }

/* The one rule that turns a physical coordinate into a node index: along axis a
 * the quantity sits at x = (i + s/2) h (s = 1 for a component staggered along a,
 * s = 0 for the nodes), and x goes to the nearest such position, a position
 * within 1e-9 of a cell of halfway between two going to the upper one (so
 * that a decimal written for the half-way point rounds one way whatever its
 * last bit).  x must lie on the grid, 0 <= x <= L (within 1e-9 of a cell);
 * a staggered component's first and last half-cells go to its first and
 * last position (i = 0 and n - 2).  comp < 0: the nodes along every axis. */
static pyr_status_t place(const char *where, const pyr_problem_t *p, int a, const char *text, int comp, int64_t *out)
{
    double x = 0;
    PYR_TRY(real_of(where, text, &x));
    const int64_t n = pyr_problem_whole(p, a);
    const double h = pyr_problem_h(p, a);
    if (!(h > 0) || !isfinite(h))
        return pyr_fail(PYR_ERR_CONFIG, "%s: %s along %c: the grid has %lld node(s) and length %g along %c, so a position has no node; give "
                                        "[grid] (n%c >= 2, l%c > 0) before the key, or write node indices",
                        where, text, 'x' + a, (long long)n, p->length[a], 'x' + a, 'x' + a, 'x' + a);
    const double len = h * (double)(n - 1), tol = 1e-9;
    if (x < -tol * h || x > len + tol * h)
        return pyr_fail(PYR_ERR_CONFIG, "%s: %c = %s lies off the grid, which spans %c = 0 .. %.12g (nodes 0 .. %lld, h = %.12g); give a "
                                        "position inside it",
                        where, 'x' + a, text, 'x' + a, len, (long long)(n - 1), h);
    const int s = comp >= 0 && staggered(comp, a);
    const double u = x / h - 0.5 * s;
    int64_t i = (int64_t)floor(u + 0.5 + tol);
    const int64_t top = n - 1 - s;
    if (i > top) i = top;
    if (i < 0) i = 0;
    *out = i;
    return PYR_OK;
}

/* k physical coordinates tok[0 .. k - 1] (one point, or two corners: lo's then
 * hi's) into lo (and hi), each axis by place(); the count must be the grid's dims. */
static pyr_status_t place_points(const char *where, const pyr_problem_t *p, char **tok, int k, int corners, int comp, int64_t *lo, int64_t *hi)
{
    const int dims = p->dims == 3 ? 3 : 2;
    if (k != corners * dims)
        return pyr_fail(PYR_ERR_CONFIG, "%s: 'at' takes %s on this %dD grid (physical coordinates); %d number(s) given", where,
                        corners == 1 ? (dims == 3 ? "X Y Z" : "X Y") : dims == 3 ? "X0 Y0 Z0 X1 Y1 Z1" : "X0 Y0 X1 Y1", dims, k);
    for (int a = 0; a < dims; a++) {
        PYR_TRY(place(where, p, a, tok[a], comp, &lo[a]));
        if (corners == 2) PYR_TRY(place(where, p, a, tok[dims + a], comp, &hi[a]));
    }
    if (corners == 2)
        for (int a = 0; a < dims; a++)
            if (lo[a] > hi[a])
                return pyr_fail(PYR_ERR_CONFIG, "%s: the corners' %c (%s, %s) run backwards; give the lower corner first", where, 'x' + a,
                                tok[a], tok[dims + a]);
    return PYR_OK;
}

/* The leading numbers of tok[from..n) (up to the first key=value or word). */
static int count_numbers(char **tok, int from, int n)
{
    int k = from;
    while (k < n && is_number(tok[k])) k++;
    return k - from;
}

/* key=value options after the positional tokens. */
static pyr_status_t options(const char *where, char **tok, int from, int n, const char *const *keys, double **dst, int nkeys)
{
    unsigned given = 0;
    for (int i = from; i < n; i++) {
        char *eq = strchr(tok[i], '=');
        if (!eq) return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a key=value option", where, tok[i]);
        *eq = 0;
        int k = 0;
        while (k < nkeys && strcmp(tok[i], keys[k])) k++;
        if (k == nkeys) {
            char list[160] = "";
            for (int j = 0; j < nkeys; j++) {
                strncat(list, keys[j], sizeof list - strlen(list) - 1);
                if (j + 1 < nkeys) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return pyr_fail(PYR_ERR_CONFIG, "%s: unknown option '%s'; the options are %s", where, tok[i], list);
        }
        /* one value each: a repeated option is a typo or a copy left behind, and neither value is surely the meant one */
        if (given & (1u << k)) return pyr_fail(PYR_ERR_CONFIG, "%s: the option %s is given twice; give it once", where, keys[k]);
        given |= 1u << k;
        PYR_TRY(real_of(where, eq + 1, dst[k]));
    }
    return PYR_OK;
}

/* keyN with 1 <= N <= max: N, else 0. */
static int numbered(const char *key, const char *stem, int max)
{
    size_t l = strlen(stem);
    if (strncmp(key, stem, l) || !key[l]) return 0;
    for (const char *c = key + l; *c; c++)
        if (!isdigit((unsigned char)*c)) return 0;
    long v = strtol(key + l, NULL, 10);
    return v >= 1 && v <= max ? (int)v : 0;
}

static const char *const pole_names[4] = {"", "drude", "lorentz", "debye"};

static int pole_arity(pyr_pole_kind_t kind) { return kind == PYR_POLE_LORENTZ ? 3 : 2; }

/* One dispersive term of kind `kind` from the numbers tok[0 .. arity - 1] appended to
 * poles (at most PYR_MAXWELL_MAX_POLES per material). */
static pyr_status_t add_pole(const char *where, pyr_pole_kind_t kind, char **tok, int ntok, pyr_pole_t *poles, int *npoles)
{
    static const char *const usage[4] = {"", "drude FP GAMMA (plasma frequency, damping)",
                                         "lorentz DEPS F0 GAMMA (strength, resonance frequency, damping)",
                                         "debye DEPS TAU (strength, relaxation time)"};
    const int k = pole_arity(kind);
    if (ntok < k) return pyr_fail(PYR_ERR_CONFIG, "%s: a %s term takes %d numbers: %s", where, pole_names[kind], k, usage[kind]);
    if (*npoles >= PYR_MAXWELL_MAX_POLES)
        return pyr_fail(PYR_ERR_CONFIG, "%s: more than %d dispersive terms in one material; give at most %d", where, PYR_MAXWELL_MAX_POLES,
                        PYR_MAXWELL_MAX_POLES);
    pyr_pole_t *q = &poles[(*npoles)++];
    memset(q, 0, sizeof *q);
    q->kind = kind;
    for (int i = 0; i < k; i++) PYR_TRY(real_of(where, tok[i], &q->p[i]));
    return PYR_OK;
}

static pyr_pole_kind_t pole_kind(const char *name)
{
    for (int k = PYR_POLE_DRUDE; k <= PYR_POLE_DEBYE; k++)
        if (!strcmp(name, pole_names[k])) return (pyr_pole_kind_t)k;
    return (pyr_pole_kind_t)0;
}

/* The background's terms of one kind (the key's value: groups of numbers, several terms
 * separated by commas), replacing those of that kind given before. */
static pyr_status_t parse_background_poles(const char *key, const char *value, pyr_maxwell_params_t *m)
{
    char buf[1024], where[96], *tok[MAXTOK];
    int n = 0;
    PYR_TRY(split_line("material", key, value, buf, where, tok, &n));
    const pyr_pole_kind_t kind = pole_kind(key);
    const int k = pole_arity(kind);
    if (n == 0 || n % k)
        return pyr_fail(PYR_ERR_CONFIG, "%s: give %d numbers per term (%s), several terms separated by commas", where, k,
                        kind == PYR_POLE_LORENTZ ? "DEPS F0 GAMMA" : kind == PYR_POLE_DRUDE ? "FP GAMMA" : "DEPS TAU");
    pyr_pole_t kept[PYR_MAXWELL_MAX_POLES];
    int nkept = 0;
    for (int i = 0; i < m->npoles; i++)
        if (m->poles[i].kind != kind) kept[nkept++] = m->poles[i];
    for (int i = 0; i < n; i += k) PYR_TRY(add_pole(where, kind, tok + i, n - i, kept, &nkept));
    memcpy(m->poles, kept, sizeof kept);
    m->npoles = nkept;
    return PYR_OK;
}

static pyr_status_t material_options(const char *where, char **tok, int at, int n, pyr_shape_t *s);

/* A shape's or a label's line split into tok, and *s a vacuum until its options say more. */
static pyr_status_t material_line(const char *key, const char *value, char *buf, char *where, char **tok, int *n, pyr_shape_t *s)
{
    PYR_TRY(split_line("material", key, value, buf, where, tok, n));
    memset(s, 0, sizeof *s);
    s->eps_r = 1;
    s->mu_r = 1;
    return PYR_OK;
}

/* labelN = eps_r=.. sigma=.. mu_r=.. drude=.. lorentz=.. debye=.. (a map label's material: a shape's options, no geometry) */
static pyr_status_t parse_label(const char *key, const char *value, pyr_shape_t *s)
{
    char buf[1024], where[96], *tok[MAXTOK];
    int n = 0;
    PYR_TRY(material_line(key, value, buf, where, tok, &n, s));
    if (n < 1) return pyr_fail(PYR_ERR_CONFIG, "%s: give the label's material, e.g. eps_r=2 sigma=0 mu_r=1 drude=FP GAMMA", where);
    return material_options(where, tok, 0, n, s);
}

static pyr_status_t parse_shape(const char *key, const char *value, pyr_shape_t *s)
{
    char buf[1024], where[96], *tok[MAXTOK];
    int n = 0;
    PYR_TRY(material_line(key, value, buf, where, tok, &n, s));
    if (n < 1) return pyr_fail(PYR_ERR_CONFIG, "%s: write box, sphere or cylinder and its coordinates", where);
    int at = 1;
    if (!strcmp(tok[0], "box")) {
        const int k = count_numbers(tok, 1, n);
        if (k != 4 && k != 6) return pyr_fail(PYR_ERR_CONFIG, "%s: a box takes X0 X1 Y0 Y1 (2D) or X0 X1 Y0 Y1 Z0 Z1 (3D)", where);
        for (int a = 0; a < k / 2; a++) {
            PYR_TRY(real_of(where, tok[1 + 2 * a], &s->lo[a]));
            PYR_TRY(real_of(where, tok[2 + 2 * a], &s->hi[a]));
        }
        s->kind = PYR_SHAPE_BOX;
        at = 1 + k;
    } else if (!strcmp(tok[0], "sphere")) {
        const int k = count_numbers(tok, 1, n);
        if (k != 3 && k != 4) return pyr_fail(PYR_ERR_CONFIG, "%s: a sphere takes CX CY R (2D: a disk) or CX CY CZ R", where);
        for (int a = 0; a < k - 1; a++) PYR_TRY(real_of(where, tok[1 + a], &s->lo[a]));
        PYR_TRY(real_of(where, tok[k], &s->r));
        s->kind = PYR_SHAPE_SPHERE;
        at = 1 + k;
    } else if (!strcmp(tok[0], "cylinder")) {
        if (n < 7 || strlen(tok[1]) != 1 || !strchr("xyz", tok[1][0]))
            return pyr_fail(PYR_ERR_CONFIG, "%s: a cylinder takes AXIS (x, y or z) C1 C2 R LO HI: the centre on the other two axes, "
                                            "the radius and its extent along AXIS",
                            where);
        s->kind = PYR_SHAPE_CYLINDER;
        s->axis = tok[1][0] - 'x';
        double c[2];
        PYR_TRY(real_of(where, tok[2], &c[0]));
        PYR_TRY(real_of(where, tok[3], &c[1]));
        PYR_TRY(real_of(where, tok[4], &s->r));
        PYR_TRY(real_of(where, tok[5], &s->lo[s->axis]));
        PYR_TRY(real_of(where, tok[6], &s->hi[s->axis]));
        for (int a = 0, j = 0; a < 3; a++)
            if (a != s->axis) s->lo[a] = c[j++];
        at = 7;
    } else {
        return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a shape; use box, sphere or cylinder", where, tok[0]);
    }
    return material_options(where, tok, at, n, s);
}

/* A material's options from tok[at]: eps_r=.. sigma=.. mu_r=.. and its dispersive terms (a shape's
 * after its geometry, a map label's alone). */
static pyr_status_t material_options(const char *where, char **tok, int at, int n, pyr_shape_t *s)
{
    /* the dispersive terms (drude=FP GAMMA ...: the numbers after the first follow as tokens) out of the options */
    int kept = at;
    for (int i = at; i < n; i++) {
        char *eq = strchr(tok[i], '=');
        pyr_pole_kind_t kind = (pyr_pole_kind_t)0;
        if (eq) {
            *eq = 0;
            kind = pole_kind(tok[i]);
            if (!kind) *eq = '=';
        }
        if (!kind) {
            tok[kept++] = tok[i];
            continue;
        }
        char *nums[3];
        int k = 0;
        nums[k++] = eq + 1;
        while (k < pole_arity(kind) && i + 1 < n && is_number(tok[i + 1])) nums[k++] = tok[++i];
        PYR_TRY(add_pole(where, kind, nums, k, s->poles, &s->npoles));
    }
    static const char *const keys[] = {"eps_r", "sigma", "mu_r"};
    double *dst[] = {&s->eps_r, &s->sigma, &s->mu_r};
    return options(where, tok, at, kept, keys, dst, 3);
}

/* The waveform word and its options, from tok[w] (a source's or a plane wave's). */
static pyr_status_t parse_waveform(const char *where, char **tok, int w, int n, pyr_waveform_t *wave, double *amplitude, double *frequency,
                                   double *width, double *delay)
{
    if (w >= n) return pyr_fail(PYR_ERR_CONFIG, "%s: the waveform is missing; use gaussian, ricker or sine", where);
    if (!strcmp(tok[w], "gaussian")) *wave = PYR_WAVE_GAUSSIAN;
    else if (!strcmp(tok[w], "ricker")) *wave = PYR_WAVE_RICKER;
    else if (!strcmp(tok[w], "sine")) *wave = PYR_WAVE_SINE;
    else return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a waveform; use gaussian, ricker or sine", where, tok[w]);
    static const char *const keys[] = {"amplitude", "frequency", "width", "delay"};
    double *dst[] = {amplitude, frequency, width, delay};
    return options(where, tok, w + 1, n, keys, dst, 4);
}

static pyr_status_t parse_source(const pyr_problem_t *p, const char *key, const char *value, pyr_source_t *s)
{
    char buf[1024], where[96], *tok[MAXTOK];
    int n = 0;
    PYR_TRY(split_line("source", key, value, buf, where, tok, &n));
    memset(s, 0, sizeof *s);
    s->amplitude = 1;
    if (n < 3) return pyr_fail(PYR_ERR_CONFIG, "%s: write COMPONENT point I J [K] WAVEFORM options (e.g. Ez point 40 40 ricker frequency=0.05)", where);
    PYR_TRY(component_of(where, tok[0], &s->component));
    if (!strcmp(tok[1], "at")) { /* COMPONENT at X Y [Z]: a point in physical coordinates */
        const int k = count_numbers(tok, 2, n);
        PYR_TRY(place_points(where, p, tok + 2, k, 1, (int)s->component, s->node, NULL));
        memcpy(s->node_end, s->node, sizeof s->node);
        return parse_waveform(where, tok, 2 + k, n, &s->waveform, &s->amplitude, &s->frequency, &s->width, &s->delay);
    }
    const int line = !strcmp(tok[1], "line");
    if (!line && strcmp(tok[1], "point")) return pyr_fail(PYR_ERR_CONFIG, "%s: '%s': write point, line or at", where, tok[1]);
    if (n > 2 && !strcmp(tok[2], "at")) {
        const int k = count_numbers(tok, 3, n);
        PYR_TRY(place_points(where, p, tok + 3, k, line ? 2 : 1, (int)s->component, s->node, s->node_end));
        if (!line) memcpy(s->node_end, s->node, sizeof s->node);
        return parse_waveform(where, tok, 3 + k, n, &s->waveform, &s->amplitude, &s->frequency, &s->width, &s->delay);
    }
    const int k = count_numbers(tok, 2, n);
    const int per = line ? k / 2 : k;
    if ((line && k != 4 && k != 6) || (!line && k != 2 && k != 3))
        return pyr_fail(PYR_ERR_CONFIG, "%s: a %s takes %s node indices", where, line ? "line" : "point",
                        line ? "I0 J0 I1 J1 (2D) or I0 J0 K0 I1 J1 K1 (3D)" : "I J (2D) or I J K (3D)");
    for (int a = 0; a < per; a++) {
        PYR_TRY(index_of(where, tok[2 + a], &s->node[a]));
        s->node_end[a] = s->node[a];
        if (line) PYR_TRY(index_of(where, tok[2 + per + a], &s->node_end[a]));
    }
    return parse_waveform(where, tok, 2 + k, n, &s->waveform, &s->amplitude, &s->frequency, &s->width, &s->delay);
}

/* planewaveN = COMPONENT along [+-]AXIS box I0 J0 [K0] I1 J1 [K1] WAVEFORM options */
static pyr_status_t parse_planewave(const pyr_problem_t *p, const char *key, const char *value, pyr_planewave_t *pw)
{
    char buf[1024], where[96], *tok[MAXTOK];
    int n = 0;
    PYR_TRY(split_line("source", key, value, buf, where, tok, &n));
    memset(pw, 0, sizeof *pw);
    pw->amplitude = 1;
    pw->dir = 1;
    const char *usage = "write COMPONENT along [+-]AXIS [tilt DEGREES AXIS2] box I0 J0 [K0] I1 J1 [K1] WAVEFORM options (e.g. Ez along +x "
                        "box 20 20 80 80 gaussian width=0.5 delay=2)";
    int at = 3;
    if (n > 6 && !strcmp(tok[3], "tilt")) {
        PYR_TRY(real_of(where, tok[4], &pw->angle));
        if (strlen(tok[5]) != 1 || !strchr("xyz", tok[5][0]))
            return pyr_fail(PYR_ERR_CONFIG, "%s: tilt %s '%s': name the axis k turns towards (x, y or z)", where, tok[4], tok[5]);
        pw->tilt = tok[5][0] - 'x';
        at = 6;
    }
    if (n < at + 2 || strcmp(tok[1], "along") || strcmp(tok[at], "box")) return pyr_fail(PYR_ERR_CONFIG, "%s: %s", where, usage);
    PYR_TRY(component_of(where, tok[0], &pw->component));
    const char *ax = tok[2];
    if (*ax == '+' || *ax == '-') pw->dir = *ax++ == '-' ? -1 : 1;
    if (strlen(ax) != 1 || !strchr("xyz", ax[0]))
        return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a direction; write +x, -x, +y, -y, +z or -z", where, tok[2]);
    pw->axis = ax[0] - 'x';
    at++;
    if (at < n && !strcmp(tok[at], "at")) { /* box at X0 Y0 [Z0] X1 Y1 [Z1]: the nodes nearest the corners */
        const int k = count_numbers(tok, at + 1, n);
        PYR_TRY(place_points(where, p, tok + at + 1, k, 2, -1, pw->lo, pw->hi));
        return parse_waveform(where, tok, at + 1 + k, n, &pw->waveform, &pw->amplitude, &pw->frequency, &pw->width, &pw->delay);
    }
    const int k = count_numbers(tok, at, n);
    if (k != 4 && k != 6) return pyr_fail(PYR_ERR_CONFIG, "%s: the box takes I0 J0 I1 J1 (2D) or I0 J0 K0 I1 J1 K1 (3D) node indices", where);
    for (int a = 0; a < k / 2; a++) {
        PYR_TRY(index_of(where, tok[at + a], &pw->lo[a]));
        PYR_TRY(index_of(where, tok[at + k / 2 + a], &pw->hi[a]));
    }
    return parse_waveform(where, tok, at + k, n, &pw->waveform, &pw->amplitude, &pw->frequency, &pw->width, &pw->delay);
}

static pyr_status_t parse_probe(const pyr_problem_t *p, const char *key, const char *value, pyr_probe_t *pr)
{
    char buf[512], where[96];
    snprintf(where, sizeof where, "probe.%s", key);
    if (strlen(value) >= sizeof buf) return pyr_fail(PYR_ERR_CONFIG, "%s: too long", where);
    strcpy(buf, value);
    char *tok[MAXTOK];
    const int n = tokens(buf, tok);
    memset(pr, 0, sizeof *pr);
    if (n >= 2 && !strcmp(tok[1], "at")) {
        PYR_TRY(component_of(where, tok[0], &pr->component));
        if (count_numbers(tok, 2, n) != n - 2) return pyr_fail(PYR_ERR_CONFIG, "%s: write COMPONENT at X Y (2D) or COMPONENT at X Y Z (3D)", where);
        return place_points(where, p, tok + 2, n - 2, 1, (int)pr->component, pr->node, NULL);
    }
    if (n != 3 && n != 4) return pyr_fail(PYR_ERR_CONFIG, "%s: write COMPONENT I J (2D) or COMPONENT I J K (3D)", where);
    PYR_TRY(component_of(where, tok[0], &pr->component));
    for (int a = 0; a < n - 1; a++) PYR_TRY(index_of(where, tok[1 + a], &pr->node[a]));
    return PYR_OK;
}

/* freqs=F1,F2,... (a list) or freqs=FMIN:FMAX:N (N evenly spaced). */
static pyr_status_t parse_freqs(const char *where, char *v, pyr_monitor_t *d)
{
    const char *usage = "write freqs=F1,F2,... (at most 64) or freqs=FMIN:FMAX:N";
    if (strchr(v, ':')) {
        char *a = v, *b = strchr(a, ':'), *c = b ? strchr(b + 1, ':') : NULL;
        if (!b || !c || strchr(c + 1, ':')) return pyr_fail(PYR_ERR_CONFIG, "%s: freqs=%s: %s", where, v, usage);
        *b++ = 0;
        *c++ = 0;
        PYR_TRY(real_of(where, a, &d->freq[0]));
        PYR_TRY(real_of(where, b, &d->freq[1]));
        char *end;
        errno = 0;
        long n = strtol(c, &end, 10);
        if (end == c || *end || errno || n < 1 || n > 100000)
            return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' frequencies: give N from 1 to 100000 in FMIN:FMAX:N", where, c);
        d->nfreq = (int)n;
        d->range = 1;
        return PYR_OK;
    }
    for (char *f = strtok(v, ","); f; f = strtok(NULL, ",")) {
        if (d->nfreq == PYR_MAXWELL_MAX_FREQS)
            return pyr_fail(PYR_ERR_CONFIG, "%s: more than %d frequencies in the list; use a range FMIN:FMAX:N for more", where, PYR_MAXWELL_MAX_FREQS);
        PYR_TRY(real_of(where, f, &d->freq[d->nfreq++]));
    }
    if (!d->nfreq) return pyr_fail(PYR_ERR_CONFIG, "%s: no frequencies; %s", where, usage);
    return PYR_OK;
}

/* A monitor's line (flux: no components, a plane only). */
static pyr_status_t parse_monitor(const pyr_problem_t *p, const char *key, const char *value, int flux, pyr_monitor_t *d)
{
    char buf[2048], where[96];
    snprintf(where, sizeof where, "monitor.%s", key);
    if (strlen(value) >= sizeof buf) return pyr_fail(PYR_ERR_CONFIG, "%s: too long", where);
    strcpy(buf, value);
    char *tok[MAXTOK];
    int n = 0;
    for (char *t = strtok(buf, " \t"); t && n < MAXTOK; t = strtok(NULL, " \t")) tok[n++] = t;
    memset(d, 0, sizeof *d);
    const char *usage = flux ? "write plane AXIS INDEX [LO HI [LO HI]] freqs=... (e.g. plane x 120 freqs=0.05:0.15:50)"
                             : "write COMPONENTS point I J [K] | box I0 J0 [K0] I1 J1 [K1] | plane AXIS INDEX [LO HI [LO HI]], then freqs=... "
                               "(e.g. Ez,Hy point 40 30 freqs=0.1,0.2)";
    int at = 0;
    if (!flux) {
        if (n < 1) return pyr_fail(PYR_ERR_CONFIG, "%s: %s", where, usage);
        char comps[256];
        snprintf(comps, sizeof comps, "%s", tok[0]);
        for (char *c = strtok(comps, ","); c; c = strtok(NULL, ",")) {
            pyr_component_t cc = PYR_EX;
            PYR_TRY(component_of(where, c, &cc));
            d->components |= 1u << cc;
        }
        at = 1;
    }
    if (at >= n) return pyr_fail(PYR_ERR_CONFIG, "%s: %s", where, usage);
    const char *region = tok[at++];
    /* `at`: physical coordinates; a point of one component goes to that component's position, the rest to the nodes */
    int comp = -1;
    for (int c = 0; c < 6; c++)
        if (d->components == 1u << c) comp = c;
    if (at < n && !strcmp(tok[at], "at") && (!strcmp(region, "point") || !strcmp(region, "box")) && !flux) {
        const int point = !strcmp(region, "point"), k = count_numbers(tok, at + 1, n);
        d->region = point ? PYR_REGION_POINT : PYR_REGION_BOX;
        PYR_TRY(place_points(where, p, tok + at + 1, k, point ? 1 : 2, point ? comp : -1, d->lo, d->hi));
        if (point) memcpy(d->hi, d->lo, sizeof d->hi);
        at += 1 + k;
        goto options;
    }
    const int k = count_numbers(tok, at, n);
    if (!strcmp(region, "point") && !flux) {
        if (k != 2 && k != 3) return pyr_fail(PYR_ERR_CONFIG, "%s: a point takes I J (2D) or I J K (3D)", where);
        d->region = PYR_REGION_POINT;
        for (int a = 0; a < k; a++) PYR_TRY(index_of(where, tok[at + a], &d->lo[a]));
        memcpy(d->hi, d->lo, sizeof d->hi);
    } else if (!strcmp(region, "box") && !flux) {
        if (k != 4 && k != 6) return pyr_fail(PYR_ERR_CONFIG, "%s: a box takes I0 J0 I1 J1 (2D) or I0 J0 K0 I1 J1 K1 (3D)", where);
        d->region = PYR_REGION_BOX;
        for (int a = 0; a < k / 2; a++) {
            PYR_TRY(index_of(where, tok[at + a], &d->lo[a]));
            PYR_TRY(index_of(where, tok[at + k / 2 + a], &d->hi[a]));
        }
    } else if (!strcmp(region, "plane")) {
        const char *ax = at < n ? tok[at] : "";
        if (strlen(ax) != 1 || !strchr("xyz", ax[0])) return pyr_fail(PYR_ERR_CONFIG, "%s: a plane takes AXIS (x, y or z: its normal) INDEX", where);
        d->region = PYR_REGION_PLANE;
        d->axis = ax[0] - 'x';
        at++;
        const int phys = at < n && !strcmp(tok[at], "at");
        at += phys;
        const int kk = count_numbers(tok, at, n);
        if (kk != 1 && kk != 3 && kk != 5)
            return pyr_fail(PYR_ERR_CONFIG, "%s: a plane takes AXIS INDEX, then LO HI along each other axis (in order) or nothing (the grid less "
                                            "the CPML)",
                            where);
        if (phys && kk > 1 && kk != 2 * (p->dims == 3 ? 3 : 2) - 1)
            return pyr_fail(PYR_ERR_CONFIG, "%s: a plane at a position takes AXIS at X, then LO HI along each other axis of this %dD grid (in "
                                            "order) or nothing",
                            where, p->dims == 3 ? 3 : 2);
        if (phys) PYR_TRY(place(where, p, d->axis, tok[at], -1, &d->lo[d->axis]));
        else PYR_TRY(index_of(where, tok[at], &d->lo[d->axis]));
        d->hi[d->axis] = d->lo[d->axis];
        d->limits = kk > 1;
        for (int j = 0, a = 0; j < (kk - 1) / 2; j++, a++) {
            if (a == d->axis) a++;
            if (phys) {
                PYR_TRY(place(where, p, a, tok[at + 1 + 2 * j], -1, &d->lo[a]));
                PYR_TRY(place(where, p, a, tok[at + 2 + 2 * j], -1, &d->hi[a]));
            } else {
                PYR_TRY(index_of(where, tok[at + 1 + 2 * j], &d->lo[a]));
                PYR_TRY(index_of(where, tok[at + 2 + 2 * j], &d->hi[a]));
            }
        }
        at += kk;
        goto options;
    } else {
        return pyr_fail(PYR_ERR_CONFIG, "%s: '%s' is not a region; %s", where, region, usage);
    }
    at += k;
options:
    for (; at < n; at++) {
        if (strncmp(tok[at], "freqs=", 6))
            return pyr_fail(PYR_ERR_CONFIG, "%s: '%s': the option is freqs=F1,F2,... or freqs=FMIN:FMAX:N", where, tok[at]);
        if (d->nfreq) return pyr_fail(PYR_ERR_CONFIG, "%s: freqs is given twice", where);
        PYR_TRY(parse_freqs(where, tok[at] + 6, d));
    }
    if (!d->nfreq) return pyr_fail(PYR_ERR_CONFIG, "%s: no frequencies; add freqs=F1,F2,... or freqs=FMIN:FMAX:N", where);
    return PYR_OK;
}

static pyr_status_t parse_faces(const char *value, unsigned *faces)
{
    if (!strcmp(value, "all")) {
        *faces = 0x3f;
        return PYR_OK;
    }
    char buf[256];
    if (strlen(value) >= sizeof buf) return pyr_fail(PYR_ERR_CONFIG, "boundary.faces: too long");
    strcpy(buf, value);
    char *tok[MAXTOK];
    const int n = tokens(buf, tok);
    unsigned f = 0;
    for (int i = 0; i < n; i++) {
        if (strlen(tok[i]) != 2 || !strchr("xyz", tok[i][0]) || (tok[i][1] != '-' && tok[i][1] != '+'))
            return pyr_fail(PYR_ERR_CONFIG, "boundary.faces: '%s' is not a face; use all, or a list of x-, x+, y-, y+, z-, z+", tok[i]);
        f |= 1u << (2 * (tok[i][0] - 'x') + (tok[i][1] == '+'));
    }
    *faces = f;
    return PYR_OK;
}

/* The faces of the periodic axes (bits of cpml_faces). */
static unsigned periodic_faces(unsigned periodic)
{
    unsigned f = 0;
    for (int a = 0; a < 3; a++)
        if ((periodic >> a) & 1) f |= 3u << (2 * a);
    return f;
}

/* boundary.periodic = none, or axes (x, y, z; "x y" or "xy"): the default
 * CPML faces (all) then leave those axes out; faces named explicitly on them
 * are refused by the scheme's validation. */
static pyr_status_t parse_periodic(const char *value, pyr_maxwell_params_t *m)
{
    unsigned axes = 0;
    if (strcmp(value, "none")) {
        for (const char *c = value; *c; c++) {
            if (*c == ' ' || *c == ',' || *c == '\t') continue;
            if (!strchr("xyz", *c) || ((axes >> (*c - 'x')) & 1))
                return pyr_fail(PYR_ERR_CONFIG, "boundary.periodic = '%s': name each periodic axis once, e.g. y, or x y (or none)", value);
            axes |= 1u << (*c - 'x');
        }
        if (!axes) return pyr_fail(PYR_ERR_CONFIG, "boundary.periodic is empty; name the periodic axes, e.g. y, or x y (or none)");
    }
    if (m->cpml_faces == 0x3f) m->cpml_faces &= ~periodic_faces(axes);
    m->periodic = axes;
    return PYR_OK;
}

static pyr_status_t real_key(const char *sec, const char *key, const char *v, double *out)
{
    char where[96];
    snprintf(where, sizeof where, "%s.%s", sec, key);
    return real_of(where, v, out);
}

pyr_status_t pyr_config_apply_maxwell(pyr_config_t *cfg, const char *sec, const char *key, const char *v, int *handled)
{
    pyr_maxwell_params_t *m = &cfg->problem.maxwell;
    const unsigned before = cfg->given;
    *handled = 1;
    cfg->given |= PYR_GIVEN_MAXWELL;
    int k;
    if (!strcmp(sec, "scheme")) {
        if (!strcmp(key, "courant")) {
            pyr_status_t st = real_key(sec, key, v, &m->courant);
            if (st != PYR_OK) {
                char why[512];
                snprintf(why, sizeof why, "%s", pyr_last_error());
                return pyr_fail(st, "%s; use a Courant number in (0, 1], e.g. 0.5", why);
            }
            if (!(m->courant > 0)) return pyr_fail(PYR_ERR_CONFIG, "scheme.courant = %s: use a Courant number in (0, 1]", v);
            return PYR_OK;
        }
        if (!strcmp(key, "mode")) {
            if (!strcmp(v, "tm")) m->te = 0;
            else if (!strcmp(v, "te")) m->te = 1;
            else return pyr_fail(PYR_ERR_CONFIG, "scheme.mode = '%s': use tm (Ez, Hx, Hy) or te (Hz, Ex, Ey)", v);
            return PYR_OK;
        }
    } else if (!strcmp(sec, "boundary")) {
        if (!strcmp(key, "kind")) {
            if (!strcmp(v, "pec")) {
                m->cpml_cells = 0;
                return PYR_OK;
            }
            if (strcmp(v, "cpml")) return pyr_fail(PYR_ERR_CONFIG, "boundary.kind = '%s': use pec or cpml", v);
            if (m->cpml_cells == 0) m->cpml_cells = 10;
            if (!m->cpml_faces) m->cpml_faces = 0x3f & ~periodic_faces(m->periodic);
            return PYR_OK;
        }
        if (!strcmp(key, "cpml_cells")) {
            char *end;
            long c = strtol(v, &end, 10);
            if (end == v || *end || c < 1 || c > 100000)
                return pyr_fail(PYR_ERR_CONFIG, "boundary.cpml_cells = '%s': use a positive number of cells (10 absorbs a normal pulse to "
                                                "below -40 dB)",
                                v);
            m->cpml_cells = (int)c;
            if (!m->cpml_faces) m->cpml_faces = 0x3f & ~periodic_faces(m->periodic);
            return PYR_OK;
        }
        if (!strcmp(key, "faces")) return parse_faces(v, &m->cpml_faces);
        if (!strcmp(key, "periodic")) return parse_periodic(v, m);
        if (!strcmp(key, "cpml_order")) return real_key(sec, key, v, &m->cpml_order);
        if (!strcmp(key, "cpml_sigma_max")) return real_key(sec, key, v, &m->cpml_sigma_max);
        if (!strcmp(key, "cpml_kappa_max")) return real_key(sec, key, v, &m->cpml_kappa_max);
        if (!strcmp(key, "cpml_alpha_max")) return real_key(sec, key, v, &m->cpml_alpha_max);
        return pyr_fail(PYR_ERR_CONFIG, "unknown key '%s' in [boundary]; the keys are kind, cpml_cells, faces, periodic, cpml_order, "
                                        "cpml_sigma_max, cpml_kappa_max, cpml_alpha_max",
                        key);
    } else if (!strcmp(sec, "material")) {
        if (!strcmp(key, "eps_r")) return real_key(sec, key, v, &m->eps_r);
        if (!strcmp(key, "sigma")) return real_key(sec, key, v, &m->sigma);
        if (!strcmp(key, "mu_r")) return real_key(sec, key, v, &m->mu_r);
        char *file = !strcmp(key, "eps_file") ? m->eps_file : !strcmp(key, "sigma_file") ? m->sigma_file : !strcmp(key, "mu_file") ? m->mu_file : NULL;
        if (file) {
            if (strlen(v) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_CONFIG, "material.%s: path too long", key);
            strcpy(file, v);
            return PYR_OK;
        }
        if (!strcmp(key, "map")) {
            if (strlen(v) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_CONFIG, "material.map: path too long");
            strcpy(m->map_file, v);
            return PYR_OK;
        }
        if (pole_kind(key)) return parse_background_poles(key, v, m);
        if ((k = numbered(key, "label", PYR_MAXWELL_MAX_LABELS)) > 0) {
            PYR_TRY(parse_label(key, v, &m->labels[k - 1]));
            if (k > m->nlabels) m->nlabels = k;
            return PYR_OK;
        }
        if ((k = numbered(key, "shape", PYR_MAXWELL_MAX_SHAPES)) > 0) {
            PYR_TRY(parse_shape(key, v, &m->shapes[k - 1]));
            if (k > m->nshapes) m->nshapes = k;
            return PYR_OK;
        }
        return pyr_fail(PYR_ERR_CONFIG, "unknown key '%s' in [material]; the keys are eps_r, sigma, mu_r, eps_file, sigma_file, mu_file, "
                                        "drude, lorentz, debye, shape1 .. shape%d, map and label1 .. label%d",
                        key, PYR_MAXWELL_MAX_SHAPES, PYR_MAXWELL_MAX_LABELS);
    } else if (!strcmp(sec, "source")) {
        if ((k = numbered(key, "source", PYR_MAXWELL_MAX_SOURCES)) > 0) {
            PYR_TRY(parse_source(&cfg->problem, key, v, &m->sources[k - 1]));
            if (k > m->nsources) m->nsources = k;
            return PYR_OK;
        }
        if ((k = numbered(key, "planewave", PYR_MAXWELL_MAX_PLANEWAVES)) > 0) {
            PYR_TRY(parse_planewave(&cfg->problem, key, v, &m->planewaves[k - 1]));
            if (k > m->nplanewaves) m->nplanewaves = k;
            return PYR_OK;
        }
        return pyr_fail(PYR_ERR_CONFIG, "unknown key '%s' in [source]; write source1 .. source%d or planewave1 .. planewave%d", key,
                        PYR_MAXWELL_MAX_SOURCES, PYR_MAXWELL_MAX_PLANEWAVES);
    } else if (!strcmp(sec, "probe")) {
        if ((k = numbered(key, "probe", PYR_MAXWELL_MAX_PROBES)) > 0) {
            PYR_TRY(parse_probe(&cfg->problem, key, v, &m->probes[k - 1]));
            if (k > m->nprobes) m->nprobes = k;
            return PYR_OK;
        }
        return pyr_fail(PYR_ERR_CONFIG, "unknown key '%s' in [probe]; write probe1 .. probe%d", key, PYR_MAXWELL_MAX_PROBES);
    } else if (!strcmp(sec, "monitor")) {
        if ((k = numbered(key, "dft", PYR_MAXWELL_MAX_MONITORS)) > 0) {
            PYR_TRY(parse_monitor(&cfg->problem, key, v, 0, &m->dft[k - 1]));
            if (k > m->ndft) m->ndft = k;
            return PYR_OK;
        }
        if ((k = numbered(key, "flux", PYR_MAXWELL_MAX_MONITORS)) > 0) {
            PYR_TRY(parse_monitor(&cfg->problem, key, v, 1, &m->flux[k - 1]));
            if (k > m->nflux) m->nflux = k;
            return PYR_OK;
        }
        return pyr_fail(PYR_ERR_CONFIG, "unknown key '%s' in [monitor]; write dft1 .. dft%d or flux1 .. flux%d", key, PYR_MAXWELL_MAX_MONITORS,
                        PYR_MAXWELL_MAX_MONITORS);
    } else if (!strcmp(sec, "output")) {
        if (!strcmp(key, "spectra")) {
            if (strlen(v) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_CONFIG, "output.spectra: path too long");
            strcpy(cfg->spectra, v);
            return PYR_OK;
        }
        if (!strcmp(key, "spectra_png")) {
            if (strlen(v) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_CONFIG, "output.spectra_png: path too long");
            strcpy(cfg->spectra_png, v);
            return PYR_OK;
        }
        if (!strcmp(key, "probes")) {
            if (strlen(v) >= PYR_PATH_MAX) return pyr_fail(PYR_ERR_CONFIG, "output.probes: path too long");
            strcpy(cfg->probes, v);
            return PYR_OK;
        }
        if (!strcmp(key, "component")) {
            pyr_component_t c = PYR_EZ;
            PYR_TRY(component_of("output.component", v, &c));
            cfg->image_component = (int)c;
            return PYR_OK;
        }
    }
    *handled = 0;
    cfg->given = before; /* not one of Maxwell's keys */
    return PYR_OK;
}
