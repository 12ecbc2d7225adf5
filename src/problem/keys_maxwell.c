/* The getters' side of Maxwell's sections ([boundary], [material], [source],
 * [probe], [monitor]): each value formatted as a problem file writes it, so that
 * setting the text back (pyr_problem_set) gives the same problem. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problem/keys.h"

static const char *const component_names[] = {"Ex", "Ey", "Ez", "Hx", "Hy", "Hz"};
static const char *const wave_names[] = {"gaussian", "ricker", "sine"};
static const char *const face_names[] = {"x-", "x+", "y-", "y+", "z-", "z+"};

/* Appends snprintf-style; *n counts what the whole text needs. */
static void put(char *out, size_t size, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *out, size_t size, int *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const size_t at = (size_t)*n < size ? (size_t)*n : size;
    const int k = vsnprintf(out + at, size - at, fmt, ap);
    va_end(ap);
    if (k > 0) *n += k;
}

/* N of "stemN" with 1 <= N <= max; 0 when key is not one. */
static int numbered(const char *key, const char *stem, int max)
{
    const size_t l = strlen(stem);
    if (strncmp(key, stem, l) || !key[l] || strspn(key + l, "0123456789") != strlen(key + l) || key[l] == '0') return 0;
    const long v = strtol(key + l, NULL, 10);
    return v >= 1 && v <= max ? (int)v : 0;
}

static const char *component_name(pyr_component_t c) { return (unsigned)c < 6 ? component_names[c] : "?"; }

static const char *const pole_words[4] = {"?", "drude", "lorentz", "debye"};

static int pole_numbers(const pyr_pole_t *q) { return q->kind == PYR_POLE_LORENTZ ? 3 : 2; }

/* The background's terms of one kind as its key takes them: "FP GAMMA, FP GAMMA" ... */
static int poles_text(const pyr_maxwell_params_t *m, pyr_pole_kind_t kind, char *out, size_t size)
{
    int n = 0, first = 1;
    if (size) out[0] = 0;
    for (int i = 0; i < m->npoles; i++) {
        const pyr_pole_t *q = &m->poles[i];
        if (q->kind != kind) continue;
        if (!first) put(out, size, &n, ", ");
        first = 0;
        for (int j = 0; j < pole_numbers(q); j++) put(out, size, &n, j ? " %.17g" : "%.17g", q->p[j]);
    }
    return n;
}

static int shape_text(const pyr_problem_t *p, const pyr_shape_t *s, char *out, size_t size)
{
    int n = 0;
    const int dims = p->dims == 3 ? 3 : 2;
    if (s->kind == PYR_SHAPE_BOX) {
        put(out, size, &n, "box");
        for (int a = 0; a < dims; a++) put(out, size, &n, " %.17g %.17g", s->lo[a], s->hi[a]);
    } else if (s->kind == PYR_SHAPE_SPHERE) {
        put(out, size, &n, "sphere");
        for (int a = 0; a < dims; a++) put(out, size, &n, " %.17g", s->lo[a]);
        put(out, size, &n, " %.17g", s->r);
    } else {
        const int ax = s->axis >= 0 && s->axis < 3 ? s->axis : 2;
        put(out, size, &n, "cylinder %c", 'x' + ax);
        for (int a = 0; a < 3; a++)
            if (a != ax) put(out, size, &n, " %.17g", s->lo[a]);
        put(out, size, &n, " %.17g %.17g %.17g", s->r, s->lo[ax], s->hi[ax]);
    }
    put(out, size, &n, " eps_r=%.17g sigma=%.17g mu_r=%.17g", s->eps_r, s->sigma, s->mu_r);
    for (int i = 0; i < s->npoles && i < PYR_MAXWELL_MAX_POLES; i++) {
        const pyr_pole_t *q = &s->poles[i];
        put(out, size, &n, " %s=", (unsigned)q->kind < 4 ? pole_words[q->kind] : "?");
        for (int j = 0; j < pole_numbers(q); j++) put(out, size, &n, j ? " %.17g" : "%.17g", q->p[j]);
    }
    return n;
}

static int source_text(const pyr_problem_t *p, const pyr_source_t *s, char *out, size_t size)
{
    int n = 0;
    const int dims = p->dims == 3 ? 3 : 2;
    int line = 0;
    for (int a = 0; a < dims; a++) line |= s->node_end[a] != s->node[a];
    put(out, size, &n, "%s %s", component_name(s->component), line ? "line" : "point");
    for (int a = 0; a < dims; a++) put(out, size, &n, " %lld", (long long)s->node[a]);
    if (line)
        for (int a = 0; a < dims; a++) put(out, size, &n, " %lld", (long long)s->node_end[a]);
    put(out, size, &n, " %s amplitude=%.17g frequency=%.17g width=%.17g delay=%.17g",
        (unsigned)s->waveform < 3 ? wave_names[s->waveform] : "?", s->amplitude, s->frequency, s->width, s->delay);
    return n;
}

static int planewave_text(const pyr_problem_t *p, const pyr_planewave_t *w, char *out, size_t size)
{
    int n = 0;
    const int dims = p->dims == 3 ? 3 : 2;
    put(out, size, &n, "%s along %c%c", component_name(w->component), w->dir < 0 ? '-' : '+', (unsigned)w->axis < 3 ? "xyz"[w->axis] : '?');
    if (w->angle != 0) put(out, size, &n, " tilt %.17g %c", w->angle, (unsigned)w->tilt < 3 ? "xyz"[w->tilt] : '?');
    put(out, size, &n, " box");
    for (int a = 0; a < dims; a++) put(out, size, &n, " %lld", (long long)w->lo[a]);
    for (int a = 0; a < dims; a++) put(out, size, &n, " %lld", (long long)w->hi[a]);
    put(out, size, &n, " %s amplitude=%.17g frequency=%.17g width=%.17g delay=%.17g",
        (unsigned)w->waveform < 3 ? wave_names[w->waveform] : "?", w->amplitude, w->frequency, w->width, w->delay);
    return n;
}

static int probe_text(const pyr_problem_t *p, const pyr_probe_t *pr, char *out, size_t size)
{
    int n = 0;
    put(out, size, &n, "%s", component_name(pr->component));
    for (int a = 0; a < (p->dims == 3 ? 3 : 2); a++) put(out, size, &n, " %lld", (long long)pr->node[a]);
    return n;
}

static int monitor_text(const pyr_problem_t *p, const pyr_monitor_t *d, int flux, char *out, size_t size)
{
    int n = 0;
    const int dims = p->dims == 3 ? 3 : 2;
    if (!flux)
        for (int c = 0; c < 6; c++)
            if ((d->components >> c) & 1) put(out, size, &n, "%s%s", n ? "," : "", component_names[c]);
    if (n) put(out, size, &n, " ");
    if (d->region == PYR_REGION_PLANE) {
        put(out, size, &n, "plane %c %lld", (unsigned)d->axis < 3 ? "xyz"[d->axis] : '?', (long long)d->lo[(unsigned)d->axis < 3 ? d->axis : 0]);
        if (d->limits)
            for (int a = 0; a < dims; a++)
                if (a != d->axis) put(out, size, &n, " %lld %lld", (long long)d->lo[a], (long long)d->hi[a]);
    } else {
        put(out, size, &n, "%s", d->region == PYR_REGION_POINT ? "point" : "box");
        for (int a = 0; a < dims; a++) put(out, size, &n, " %lld", (long long)d->lo[a]);
        if (d->region == PYR_REGION_BOX)
            for (int a = 0; a < dims; a++) put(out, size, &n, " %lld", (long long)d->hi[a]);
    }
    if (d->range) {
        put(out, size, &n, " freqs=%.17g:%.17g:%d", d->freq[0], d->freq[1], d->nfreq);
    } else {
        put(out, size, &n, " freqs=");
        for (int f = 0; f < d->nfreq && f < PYR_MAXWELL_MAX_FREQS; f++) put(out, size, &n, "%s%.17g", f ? "," : "", d->freq[f]);
    }
    return n;
}

static int faces_text(unsigned faces, char *out, size_t size)
{
    if ((faces & 0x3f) == 0x3f) return snprintf(out, size, "all");
    int n = 0;
    for (int f = 0; f < 6; f++)
        if ((faces >> f) & 1) put(out, size, &n, "%s%s", n ? "," : "", face_names[f]);
    return n;
}

int pyr_problem_maxwell_value(const pyr_problem_t *p, const char *full, char *out, size_t size, int *kind)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    const char *dot = strchr(full, '.');
    if (!dot) return -1;
    const char *key = dot + 1;
    const size_t ls = (size_t)(dot - full);
    int k;
    *kind = PYR_KEY_TEXT;
    if (ls == 8 && !strncmp(full, "boundary", ls)) {
        if (!strcmp(key, "kind")) return snprintf(out, size, "%s", m->cpml_cells > 0 && m->cpml_faces ? "cpml" : "pec");
        if (!strcmp(key, "faces")) return faces_text(m->cpml_faces, out, size);
        if (!strcmp(key, "periodic")) {
            if (!m->periodic) return snprintf(out, size, "none");
            char axes[4] = "";
            for (int a = 0, k = 0; a < 3; a++)
                if ((m->periodic >> a) & 1) axes[k++] = "xyz"[a];
            return snprintf(out, size, "%s", axes);
        }
        *kind = PYR_KEY_INT;
        if (!strcmp(key, "cpml_cells")) return snprintf(out, size, "%d", m->cpml_cells);
        *kind = PYR_KEY_REAL;
        if (!strcmp(key, "cpml_order")) return snprintf(out, size, "%.17g", m->cpml_order);
        if (!strcmp(key, "cpml_sigma_max")) return snprintf(out, size, "%.17g", m->cpml_sigma_max);
        if (!strcmp(key, "cpml_kappa_max")) return snprintf(out, size, "%.17g", m->cpml_kappa_max);
        if (!strcmp(key, "cpml_alpha_max")) return snprintf(out, size, "%.17g", m->cpml_alpha_max);
        return -1;
    }
    if (ls == 8 && !strncmp(full, "material", ls)) {
        if (!strcmp(key, "eps_file")) return snprintf(out, size, "%s", m->eps_file);
        if (!strcmp(key, "sigma_file")) return snprintf(out, size, "%s", m->sigma_file);
        if (!strcmp(key, "mu_file")) return snprintf(out, size, "%s", m->mu_file);
        if (!strcmp(key, "map")) return snprintf(out, size, "%s", m->map_file);
        /* a label's material as its key takes it: the shape's text less the geometry */
        if ((k = numbered(key, "label", PYR_MAXWELL_MAX_LABELS)) > 0) {
            if (k > m->nlabels) return snprintf(out, size, "%s", "");
            char text[2048];
            const int n = shape_text(p, &m->labels[k - 1], text, sizeof text);
            const char *opts = strstr(text, " eps_r=");
            return n < (int)sizeof text && opts ? snprintf(out, size, "%s", opts + 1) : -1;
        }
        if (!strcmp(key, "drude")) return poles_text(m, PYR_POLE_DRUDE, out, size);
        if (!strcmp(key, "lorentz")) return poles_text(m, PYR_POLE_LORENTZ, out, size);
        if (!strcmp(key, "debye")) return poles_text(m, PYR_POLE_DEBYE, out, size);
        /* a shape not given is empty, as a file not given is */
        if ((k = numbered(key, "shape", PYR_MAXWELL_MAX_SHAPES)) > 0)
            return k <= m->nshapes ? shape_text(p, &m->shapes[k - 1], out, size) : snprintf(out, size, "%s", "");
        *kind = PYR_KEY_REAL;
        if (!strcmp(key, "eps_r")) return snprintf(out, size, "%.17g", m->eps_r);
        if (!strcmp(key, "sigma")) return snprintf(out, size, "%.17g", m->sigma);
        if (!strcmp(key, "mu_r")) return snprintf(out, size, "%.17g", m->mu_r);
        return -1;
    }
    if (ls == 6 && !strncmp(full, "source", ls) && (k = numbered(key, "source", PYR_MAXWELL_MAX_SOURCES)) > 0)
        return k <= m->nsources ? source_text(p, &m->sources[k - 1], out, size) : snprintf(out, size, "%s", "");
    if (ls == 6 && !strncmp(full, "source", ls) && (k = numbered(key, "planewave", PYR_MAXWELL_MAX_PLANEWAVES)) > 0)
        return k <= m->nplanewaves ? planewave_text(p, &m->planewaves[k - 1], out, size) : snprintf(out, size, "%s", "");
    if (ls == 5 && !strncmp(full, "probe", ls) && (k = numbered(key, "probe", PYR_MAXWELL_MAX_PROBES)) > 0)
        return k <= m->nprobes ? probe_text(p, &m->probes[k - 1], out, size) : snprintf(out, size, "%s", "");
    if (ls == 7 && !strncmp(full, "monitor", ls) && (k = numbered(key, "dft", PYR_MAXWELL_MAX_MONITORS)) > 0)
        return k <= m->ndft ? monitor_text(p, &m->dft[k - 1], 0, out, size) : snprintf(out, size, "%s", "");
    if (ls == 7 && !strncmp(full, "monitor", ls) && (k = numbered(key, "flux", PYR_MAXWELL_MAX_MONITORS)) > 0)
        return k <= m->nflux ? monitor_text(p, &m->flux[k - 1], 1, out, size) : snprintf(out, size, "%s", "");
    return -1;
}
