/* The Maxwell scheme's plane waves by total-field / scattered-field (TF/SF;
 * Taflove & Hagness, ch. 5): inside a box of nodes the fields are the total
 * ones, outside only the scattered ones.  Where an update inside reads a
 * component outside (or one outside reads one inside), the incident field
 * of that neighbour is missing (or too much); the correction adds it back as
 * a point source of the scheme (schemes/scheme.h), one per face node and
 * component, its amplitude the update's coefficient times the incident term:
 * E on the faces after the E sub-step, from the incident H half a cell
 * outside; H half a cell outside after the H sub-step, from the incident E on
 * the faces.
 *
 * The incident field comes from a 1D Yee grid along the propagation axis
 * with the 3D grid's spacing along it, its dt and its background, which
 * each run (every part of a larger grid too) advances from step 0 in the
 * amplitudes hook: a uniform plane wave along an axis of the Yee grid obeys
 * exactly this 1D scheme, so the correction cancels what the box's faces
 * would radiate up to rounding.  The 1D grid is driven at its first node (a
 * hard source, one cell before the entry face) and ends in a graded matched
 * absorber, so that nothing of the run comes back from its end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

#define ABSORBER 64 /* cells of the 1D grid's absorbing end */
#define MARGIN 8    /* cells between the box's exit face and the absorber */

/* One plane wave's 1D grid: e at positions k (in cells from the hard source),
 * h at k + 1/2, along the direction of propagation. */
typedef struct {
    int64_t n;
    double *e, *h, *ca, *cb, *da, *db;
    double inv_h;
    pyr_source_t wave;
    int64_t step; /* e holds time layer `step`, h layer step - 1/2 */
} pw_grid_t;

/* A correction: amplitude = coef * (h or e of grid `pw` at index k): h for an
 * E source, e for an H source. */
typedef struct {
    int pw;
    int64_t k;
    double coef;
} pw_term_t;

struct pyr_maxwell_planewaves {
    int npw;
    pw_grid_t grid[PYR_MAXWELL_MAX_PLANEWAVES];
    int64_t nterms;
    pw_term_t *term; /* one per source, in the sources' order */
};

/* The Levi-Civita symbol of three axes. */
static int levi(int i, int j, int k)
{
    if (i == j || j == k || i == k) return 0;
    return (i + 1) % 3 == j ? 1 : -1;
}

/* Whether component c lies half a cell above its node along axis t. */
static int half_along(int c, int t) { return c < 3 ? t == c : t != c - 3; }

/* Whether component c at whole-grid node g lies in the box (closed, in positions). */
static int in_box(const pyr_problem_t *p, const pyr_planewave_t *w, int c, const int64_t g[3])
{
    for (int t = 0; t < p->dims; t++) {
        const int64_t top = half_along(c, t) ? w->hi[t] - 1 : w->hi[t];
        if (g[t] < w->lo[t] || g[t] > top) return 0;
    }
    return 1;
}

/* The incident field's factor on component c: E = p e, H = (k x p) h. */
static double incident_factor(const pyr_planewave_t *w, int c)
{
    if (c < 3) return c == (int)w->component ? 1.0 : 0.0;
    const int b = c - 3, cp = (int)w->component;
    return (double)(w->dir * levi(w->axis, cp, b));
}

/* The 1D index of component c at whole-grid node index x along the propagation axis. */
static int64_t grid_index(const pyr_planewave_t *w, int c, int64_t x)
{
    const int ax = w->axis;
    if (c < 3) return w->dir > 0 ? x - w->lo[ax] + 1 : w->hi[ax] + 1 - x;
    return w->dir > 0 ? x - w->lo[ax] + 1 : w->hi[ax] - x; /* H at x + 1/2 */
}

/* Whether the box's face `side` along axis a lies on a PEC wall across which
 * the incident E points: the wave is then the wall's own (a parallel-plate
 * line's), and that face has no outside to correct. */
static int on_wall(const pyr_problem_t *p, const pyr_planewave_t *w, int a, int side)
{
    if (a != (int)w->component || a == w->axis || a >= p->dims) return 0;
    const int cpml = p->maxwell.cpml_cells > 0 && (p->maxwell.cpml_faces >> (2 * a + side)) & 1;
    return !cpml && (side ? w->hi[a] == pyr_problem_whole(p, a) - 1 : w->lo[a] == 0);
}

pyr_status_t pyr_maxwell_planewaves_check(const pyr_problem_t *p)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    if (m->nplanewaves < 0 || m->nplanewaves > PYR_MAXWELL_MAX_PLANEWAVES)
        return pyr_fail(PYR_ERR_CONFIG, "%d plane waves; at most %d", m->nplanewaves, PYR_MAXWELL_MAX_PLANEWAVES);
    for (int i = 0; i < m->nplanewaves; i++) {
        const pyr_planewave_t *w = &m->planewaves[i];
        const int c = (int)w->component;
        if (w->axis < 0 || w->axis >= p->dims)
            return pyr_fail(PYR_ERR_CONFIG, "planewave%d: it travels along %c, not an axis of this %dD grid; use %s", i + 1,
                            w->axis >= 0 && w->axis < 3 ? "xyz"[w->axis] : '?', p->dims, p->dims == 2 ? "x or y" : "x, y or z");
        if (w->dir != 1 && w->dir != -1) return pyr_fail(PYR_ERR_CONFIG, "planewave%d: the direction must be + or -", i + 1);
        if (c < 0 || c > 2 || !pyr_maxwell_component_used(p, c) || c == w->axis) {
            char ok[32] = "";
            for (int e = 0; e < 3; e++)
                if (e != w->axis && pyr_maxwell_component_used(p, e))
                    snprintf(ok + strlen(ok), sizeof ok - strlen(ok), "%s%s", ok[0] ? " or " : "", pyr_maxwell_component_name(e));
            return pyr_fail(PYR_ERR_CONFIG,
                            "planewave%d: %s is not a polarisation of a wave along %c on this grid: name the incident E, an E component "
                            "of the grid's %s transverse to the direction; use %s%s",
                            i + 1, pyr_maxwell_component_name(c), "xyz"[w->axis], p->dims == 3 ? "3D fields" : m->te ? "TE mode" : "TM mode",
                            ok[0] ? ok : "another direction", ok[0] ? "" : " (TM: Ez along x or y; TE: Ey along x, Ex along y)");
        }
        for (int a = 0; a < 3; a++) {
            if (a >= p->dims) {
                if (w->lo[a] || w->hi[a]) return pyr_fail(PYR_ERR_CONFIG, "planewave%d: a 2D grid's box has no z extent", i + 1);
                continue;
            }
            int64_t flo, fhi;
            pyr_maxwell_free_range(p, a, &flo, &fhi);
            if (!(w->lo[a] < w->hi[a]))
                return pyr_fail(PYR_ERR_CONFIG, "planewave%d: the box runs from node %lld to %lld along %c; give I0 < I1 (the smaller first)", i + 1,
                                (long long)w->lo[a], (long long)w->hi[a], "xyz"[a]);
            if ((w->lo[a] - 1 < flo && !on_wall(p, w, a, 0)) || (w->hi[a] + 1 > fhi && !on_wall(p, w, a, 1)))
                return pyr_fail(PYR_ERR_CONFIG,
                                "planewave%d: the box's faces along %c (nodes %lld and %lld) need a node outside them off the %s: "
                                "use nodes %lld to %lld along %c%s",
                                i + 1, "xyz"[a], (long long)w->lo[a], (long long)w->hi[a],
                                flo > 0 || fhi < pyr_problem_whole(p, a) - 1 ? "CPML and the grid's edge" : "grid's edge (the PEC wall)",
                                (long long)(flo + 1), (long long)(fhi - 1), "xyz"[a],
                                a == (int)c ? ", or end the box on a PEC wall (node 0 or n - 1) across which E points" : "");
        }
        if (!isfinite(w->amplitude) || !isfinite(w->frequency) || !isfinite(w->width) || !isfinite(w->delay) || w->frequency < 0 || w->width < 0)
            return pyr_fail(PYR_ERR_CONFIG, "planewave%d: amplitude, frequency >= 0, width >= 0 and delay must be finite", i + 1);
        if (w->waveform == PYR_WAVE_GAUSSIAN && !(w->width > 0))
            return pyr_fail(PYR_ERR_CONFIG, "planewave%d: a Gaussian pulse needs width > 0 (in time units)", i + 1);
        if ((w->waveform == PYR_WAVE_RICKER || w->waveform == PYR_WAVE_SINE) && !(w->frequency > 0))
            return pyr_fail(PYR_ERR_CONFIG, "planewave%d: this waveform needs frequency > 0", i + 1);
        /* the incident wave is the background's: a face in another material would radiate */
        int64_t g[3], lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = a < p->dims ? w->lo[a] - 1 : 0;
            hi[a] = a < p->dims ? w->hi[a] + 1 : 0;
        }
        for (int a = 0; a < p->dims; a++) {
            if (lo[a] < 0) lo[a] = 0;
            if (hi[a] > pyr_problem_whole(p, a) - 1) hi[a] = pyr_problem_whole(p, a) - 1;
        }
        for (int a = 0; a < p->dims && m->nshapes; a++)
            for (int side = 0; side < 4; side++) {
                if (on_wall(p, w, a, side / 2)) continue;
                const int64_t at = side == 0 ? lo[a] : side == 1 ? w->lo[a] : side == 2 ? w->hi[a] : hi[a];
                for (g[2] = lo[2]; g[2] <= hi[2]; g[2]++)
                    for (g[1] = lo[1]; g[1] <= hi[1]; g[1]++)
                        for (g[0] = lo[0]; g[0] <= hi[0]; g[0]++) {
                            if (g[a] != at) continue;
                            for (int which = 0; which < 3; which++) {
                                const double bg = which == 0 ? m->eps_r : which == 1 ? m->sigma : m->mu_r;
                                if (pyr_maxwell_shapes_material(p, which, g) != bg)
                                    return pyr_fail(PYR_ERR_CONFIG,
                                                    "planewave%d: node (%lld, %lld, %lld) of the box's faces (or the node outside them) is not "
                                                    "in the background medium (a material shape covers it); the incident wave is the "
                                                    "background's, so make the box enclose the shapes with a node of background around them",
                                                    i + 1, (long long)g[0], (long long)g[1], (long long)g[2]);
                            }
                        }
            }
    }
    return PYR_OK;
}

/* Whether whole-grid node g lies on this problem's grid (a part's window, or the whole). */
static int on_grid(const pyr_problem_t *p, const int64_t g[3])
{
    for (int a = 0; a < 3; a++)
        if (g[a] < p->origin[a] || g[a] >= p->origin[a] + p->n[a]) return 0;
    return 1;
}

/* The corrections of plane wave i on this grid, appended to src/term (when
 * not NULL) from index *k on; counts them in *k. */
static void corrections(const pyr_problem_t *p, int i, const pyr_coef_t *co, pyr_scheme_point_t *src, pw_term_t *term, int64_t *k)
{
    const pyr_planewave_t *w = &p->maxwell.planewaves[i];
    for (int c = 0; c < 6; c++) {
        if (!pyr_maxwell_component_used(p, c)) continue;
        const int electric = c < 3, own = c % 3;
        for (int a = 0; a < p->dims; a++) {
            if (a == own) continue;
            const int other = 3 - a - own; /* the neighbour's component: H_other for E_own, E_other for H_own */
            const int nb = electric ? other + 3 : other;
            const double fac = incident_factor(w, nb);
            if (fac == 0) continue;
            const double sig = (double)levi(own, a, other), coef = (electric ? co->c[5] : co->c[6]) * sig * fac * co->c[a];
            for (int side = 0; side < 2; side++) {
                if (on_wall(p, w, a, side)) continue;
                /* E: on the face, its neighbour half a cell outside; H: half a cell outside, its neighbour on the face */
                const int64_t at = electric ? (side ? w->hi[a] : w->lo[a]) : (side ? w->hi[a] : w->lo[a] - 1);
                const double sign = electric ? (side ? 1.0 : -1.0) : (side ? -1.0 : 1.0);
                int64_t lo[3], hi[3], g[3];
                for (int t = 0; t < 3; t++) {
                    lo[t] = t < p->dims ? w->lo[t] : 0;
                    hi[t] = t < p->dims ? w->hi[t] : 0;
                }
                lo[a] = hi[a] = at;
                for (g[2] = lo[2]; g[2] <= hi[2]; g[2]++)
                    for (g[1] = lo[1]; g[1] <= hi[1]; g[1]++)
                        for (g[0] = lo[0]; g[0] <= hi[0]; g[0]++) {
                            /* the node inside: this E, or the E ahead of this H */
                            int64_t in[3] = {g[0], g[1], g[2]};
                            if (!electric && !side) in[a]++;
                            if (!in_box(p, w, electric ? c : nb, in)) continue;
                            if (!on_grid(p, g)) continue;
                            if (src) {
                                /* the neighbour: H below this E (side 0) or at it; E ahead of this H (side 0) or at it */
                                int64_t x = g[w->axis];
                                if (electric && !side && a == w->axis) x--;
                                if (!electric && !side && a == w->axis) x++;
                                src[*k].field = c;
                                for (int t = 0; t < 3; t++) src[*k].node[t] = g[t] - p->origin[t];
                                term[*k].pw = i;
                                term[*k].k = grid_index(w, nb, x);
                                term[*k].coef = sign * coef;
                            }
                            (*k)++;
                        }
            }
        }
    }
}

static void grid_free(pw_grid_t *g)
{
    free(g->e);
    free(g->h);
    free(g->ca);
    free(g->cb);
    free(g->da);
    free(g->db);
    memset(g, 0, sizeof *g);
}

void pyr_maxwell_planewaves_free(pyr_maxwell_planewaves_t *st)
{
    if (!st) return;
    for (int i = 0; i < st->npw; i++) grid_free(&st->grid[i]);
    free(st->term);
    free(st);
}

/* Plane wave i's 1D grid at step 0 (all zero but the hard source). */
static pyr_status_t grid_make(const pyr_problem_t *p, int i, const pyr_coef_t *co, pw_grid_t *g)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    const pyr_planewave_t *w = &m->planewaves[i];
    const int64_t inner = w->hi[w->axis] - w->lo[w->axis] + 3 + MARGIN, n = inner + ABSORBER + 1;
    g->n = n;
    g->e = calloc((size_t)n, sizeof(double));
    g->h = calloc((size_t)n, sizeof(double));
    g->ca = malloc((size_t)n * sizeof(double));
    g->cb = malloc((size_t)n * sizeof(double));
    g->da = malloc((size_t)n * sizeof(double));
    g->db = malloc((size_t)n * sizeof(double));
    if (!g->e || !g->h || !g->ca || !g->cb || !g->da || !g->db) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for plane wave %d's 1D grid", i + 1);
    g->inv_h = co->c[w->axis];
    const double dt = co->c[3], h = 1.0 / co->c[w->axis], eta = sqrt(m->mu_r / m->eps_r);
    /* a polynomial grading of order 3 whose round trip attenuates by e^-40 */
    const double order = 3, smax = 40.0 * (order + 1) / (2.0 * eta * ABSORBER * h);
    for (int64_t k = 0; k < n; k++) {
        const double de = (double)(k - inner) / ABSORBER, dm = ((double)(k - inner) + 0.5) / ABSORBER;
        if (de > 0) {
            const double s = (m->sigma + smax * pow(de, order)) * dt / (2 * m->eps_r);
            g->ca[k] = (1 - s) / (1 + s);
            g->cb[k] = (dt / m->eps_r) / (1 + s);
        } else {
            g->ca[k] = co->c[4];
            g->cb[k] = co->c[5];
        }
        if (dm > 0) {
            const double s = smax * pow(dm, order) / m->eps_r * dt / 2; /* sigma_m / mu dt / 2, sigma_m = sigma mu / eps */
            g->da[k] = (1 - s) / (1 + s);
            g->db[k] = (dt / m->mu_r) / (1 + s);
        } else {
            g->da[k] = 1;
            g->db[k] = co->c[6];
        }
    }
    memset(&g->wave, 0, sizeof g->wave);
    g->wave.waveform = w->waveform;
    g->wave.amplitude = w->amplitude;
    g->wave.frequency = w->frequency;
    g->wave.width = w->width;
    g->wave.delay = w->delay;
    g->e[0] = pyr_maxwell_waveform(&g->wave, 0);
    g->step = 0;
    return PYR_OK;
}

pyr_status_t pyr_maxwell_planewaves_points(const pyr_problem_t *p, pyr_scheme_points_t *out, pyr_maxwell_planewaves_t **state)
{
    *state = NULL;
    const pyr_maxwell_params_t *m = &p->maxwell;
    if (!m->nplanewaves) return PYR_OK;
    pyr_coef_t co;
    pyr_scheme_maxwell.coefficients(p, &co);
    pyr_maxwell_planewaves_t *st = calloc(1, sizeof *st);
    if (!st) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the plane waves");
    int64_t total = 0;
    for (int i = 0; i < m->nplanewaves; i++) corrections(p, i, &co, NULL, NULL, &total);
    if (out->nsources + total > (1 << 24)) {
        free(st);
        return pyr_fail(PYR_ERR_CONFIG, "the plane waves' boxes have %lld face nodes on this grid; at most 16777216 sources in all", (long long)total);
    }
    pyr_scheme_point_t *all = realloc(out->sources, (size_t)(out->nsources + total + 1) * sizeof *all);
    if (all) out->sources = all;
    st->term = malloc((size_t)(out->nsources + total + 1) * sizeof *st->term);
    if (!all || !st->term) {
        pyr_maxwell_planewaves_free(st);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the plane waves' sources");
    }
    int64_t k = out->nsources;
    for (int i = 0; i < m->nplanewaves; i++) corrections(p, i, &co, all, st->term, &k);
    st->nterms = k;
    st->npw = m->nplanewaves;
    for (int i = 0; i < st->npw; i++) {
        pyr_status_t s = grid_make(p, i, &co, &st->grid[i]);
        if (s != PYR_OK) {
            pyr_maxwell_planewaves_free(st);
            return s;
        }
    }
    out->nsources = (int)k;
    *state = st;
    return PYR_OK;
}

/* A 1D grid's half-steps: h to step + 1/2, then e to step + 1 (the hard source at its first node). */
static void grid_h(pw_grid_t *g)
{
    for (int64_t k = 0; k < g->n - 1; k++) g->h[k] = g->da[k] * g->h[k] - g->db[k] * ((g->e[k + 1] - g->e[k]) * g->inv_h);
}

static void grid_e(pw_grid_t *g, double dt)
{
    for (int64_t k = 1; k < g->n - 1; k++) g->e[k] = g->ca[k] * g->e[k] - g->cb[k] * ((g->h[k] - g->h[k - 1]) * g->inv_h);
    g->step++;
    g->e[0] = pyr_maxwell_waveform(&g->wave, (double)g->step * dt);
}

pyr_status_t pyr_maxwell_planewaves_amplitudes(const pyr_problem_t *p, pyr_maxwell_planewaves_t *st, const pyr_scheme_point_t *src, int from,
                                               int nsources, int64_t first, int64_t count, double *amp)
{
    if (!st) return PYR_OK;
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    for (int i = 0; i < st->npw; i++) {
        pw_grid_t *g = &st->grid[i];
        if (first < g->step) return pyr_fail(PYR_ERR_INTERNAL, "plane wave %d: step %lld asked after step %lld", i + 1, (long long)first, (long long)g->step);
        while (g->step < first) {
            grid_h(g);
            grid_e(g, dt);
        }
    }
    for (int64_t s = 0; s < count; s++) {
        /* H's corrections of step first + s read E at that time layer, E's read H half a step later */
        for (int i = from; i < nsources; i++)
            if (src[i].field >= 3) amp[s * nsources + i] = st->term[i].coef * st->grid[st->term[i].pw].e[st->term[i].k];
        for (int w = 0; w < st->npw; w++) grid_h(&st->grid[w]);
        for (int i = from; i < nsources; i++)
            if (src[i].field < 3) amp[s * nsources + i] = st->term[i].coef * st->grid[st->term[i].pw].h[st->term[i].k];
        for (int w = 0; w < st->npw; w++) grid_e(&st->grid[w], dt);
    }
    return PYR_OK;
}
