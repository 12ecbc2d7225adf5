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
 * absorber, so that nothing of the run comes back from its end.
 *
 * Tilted (oblique incidence in the plane of two axes), no 1D grid is exact:
 * its spacing is chosen so that its dispersion agrees with the grid's along
 * k to fourth order, its eps and mu are scaled so that they agree exactly at
 * one frequency, the polarisation and H follow the grid's discrete wave
 * vector, and the values at the face nodes are interpolated (cubic) along k;
 * what leaks is then the small drift of a pulse's other frequencies. */
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
    double lead; /* the waveform's time at the first node runs ahead of the grid's by this */
    int64_t step; /* e holds time layer `step`, h layer step - 1/2 */
} pw_grid_t;

/* A correction is a term of the points' series (schemes/scheme.h): amplitude =
 * coef * (h or e of a plane wave's 1D grid at index k; h for an E source, e
 * for an H source), oblique the sum of w[j] v[k + j], a cubic interpolation
 * over 4 nodes.  A step's row of the series holds each plane wave's e (at the
 * step's time layer, what H's corrections read) and then its h (half a step
 * later, E's), at the offsets `off`. */

/* A plane wave's direction, polarisation and 1D grid: unit k, E's and H's
 * directions (H = k x E); oblique: the 1D grid's spacing h1, the position
 * along k of its first node xi0 and the factor on its eps and mu that
 * matches its dispersion to the grid's along k. */
typedef struct {
    double k[3], e[3], h[3];
    int oblique;
    double h1, xi0, xi1, scale;
} pw_geom_t;

struct pyr_maxwell_planewaves {
    int npw;
    pw_geom_t geom[PYR_MAXWELL_MAX_PLANEWAVES];
    pw_grid_t grid[PYR_MAXWELL_MAX_PLANEWAVES];
    int64_t nterms;
    pyr_scheme_term_t *term; /* one per source, in the sources' order (the point sources': k = -1) */
    int64_t off[PYR_MAXWELL_MAX_PLANEWAVES], nseries;
    double *row; /* a step's row, where the caller gives no series */
};

/* The Levi-Civita symbol of three axes. */
static int levi(int i, int j, int k)
{
    if (i == j || j == k || i == k) return 0;
    return (i + 1) % 3 == j ? 1 : -1;
}

/* Whether component c lies half a cell above its node along axis t. */
static int half_along(int c, int t) { return c < 3 ? t == c : t != c - 3; }

/* Whether the box spans periodic axis a whole (nodes 0 .. n - 1): it then
 * has no faces along a, the wave's own continuing across the wrap. */
static int spans_periodic(const pyr_problem_t *p, const pyr_planewave_t *w, int a)
{
    return a < p->dims && ((p->maxwell.periodic >> a) & 1) && w->lo[a] == 0 && w->hi[a] == pyr_problem_whole(p, a) - 1;
}

/* Whether component c at whole-grid node g lies in the box (closed, in positions). */
static int in_box(const pyr_problem_t *p, const pyr_planewave_t *w, int c, const int64_t g[3])
{
    for (int t = 0; t < p->dims; t++) {
        if (spans_periodic(p, w, t)) continue;
        const int64_t top = half_along(c, t) ? w->hi[t] - 1 : w->hi[t];
        if (g[t] < w->lo[t] || g[t] > top) return 0;
    }
    return 1;
}

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The frequency the 1D grid's dispersion is matched at (oblique incidence). */
static double match_frequency(const pyr_planewave_t *w)
{
    return w->frequency > 0 ? w->frequency : 1.0 / (2 * M_PI * w->width);
}

/* The numerical wavenumber of the grid along unit vector k at angular
 * frequency om (the Yee scheme's dispersion relation in the background,
 * by Newton's method from the exact one); 0 when the grid carries no such
 * wave (past its cut-off in that direction). */
static double grid_wavenumber(const pyr_problem_t *p, const double k[3], double om, double dt)
{
    const double v = 1.0 / sqrt(p->maxwell.eps_r * p->maxwell.mu_r), rhs = sin(om * dt / 2) / (v * dt);
    double kap = om / v;
    for (int it = 0; it < 100; it++) {
        double f = -rhs * rhs, df = 0;
        for (int a = 0; a < p->dims; a++) {
            const double h = pyr_problem_h(p, a), x = kap * k[a] * h / 2;
            f += (sin(x) / h) * (sin(x) / h);
            df += sin(2 * x) * k[a] / (2 * h);
        }
        if (!(df > 0)) return 0;
        const double step = f / df;
        kap -= step;
        if (!(kap > 0)) return 0;
        if (fabs(step) <= 1e-15 * kap) return kap;
    }
    return 0;
}

/* Plane wave w's direction, polarisation and, oblique, its 1D grid's placing
 * (dt the grid's); fails when the grid carries no wave of the matching
 * frequency along k. */
static pyr_status_t geometry(const pyr_problem_t *p, const pyr_planewave_t *w, int i, double dt, pw_geom_t *g)
{
    memset(g, 0, sizeof *g);
    const int ax = w->axis, cp = (int)w->component;
    g->scale = 1;
    g->h1 = pyr_problem_h(p, ax);
    if (w->angle == 0) {
        g->k[ax] = w->dir;
        g->e[cp] = 1;
    } else {
        const double th = w->angle * M_PI / 180, c = cos(th), s = sin(th);
        g->oblique = 1;
        g->k[ax] = w->dir * c;
        g->k[w->tilt] = s;
        if (cp == w->tilt) {
            g->e[w->tilt] = c;
            g->e[ax] = -w->dir * s;
        } else {
            g->e[cp] = 1;
        }
    }
    for (int b = 0; b < 3; b++) g->h[b] = g->k[(b + 1) % 3] * g->e[(b + 2) % 3] - g->k[(b + 2) % 3] * g->e[(b + 1) % 3];
    if (!g->oblique) return PYR_OK;
    /* the spacing whose 1D dispersion agrees with the grid's along k to fourth order in k h (the grid's
     * sum_a sin^2(k k_a h_a / 2) / h_a^2 and the 1D sin^2(k h1 / 2) / h1^2 expand alike when
     * h1^2 = sum_a h_a^2 k_a^4), so that a pulse's frequencies away from the matched one drift apart
     * slowly; within the 1D grid's own Courant limit */
    const double v = 1.0 / sqrt(p->maxwell.eps_r * p->maxwell.mu_r);
    double h2 = 0;
    for (int a = 0; a < p->dims; a++) h2 += pyr_problem_h(p, a) * pyr_problem_h(p, a) * pow(g->k[a], 4);
    g->h1 = fmax(sqrt(h2), v * dt / 0.9);
    const double om = 2 * M_PI * match_frequency(w), kap = grid_wavenumber(p, g->k, om, dt);
    if (!(kap > 0) || !(kap * g->h1 < M_PI))
        return pyr_fail(PYR_ERR_CONFIG,
                        "planewave%d: the grid carries no wave of frequency %g along the tilted direction (past its cut-off); use a lower "
                        "frequency or a finer grid",
                        i + 1, match_frequency(w));
    g->scale = v * dt * sin(kap * g->h1 / 2) / (g->h1 * sin(om * dt / 2));
    /* the grid's own plane wave has E normal to, and H along K x E for, the discrete wave vector
     * K_a = 2 sin(k_a h_a / 2) / h_a rather than k: with k's, the face terms would leak O((k h)^2) */
    double K[3] = {0, 0, 0}, norm = 0;
    for (int a = 0; a < p->dims; a++) {
        const double h = pyr_problem_h(p, a);
        K[a] = 2 * sin(kap * g->k[a] * h / 2) / h;
        norm += K[a] * K[a];
    }
    for (int a = 0; a < 3; a++) K[a] /= sqrt(norm);
    if (cp == w->tilt) {
        g->e[ax] = -w->dir * K[w->tilt];
        g->e[w->tilt] = w->dir * K[ax];
    }
    for (int b = 0; b < 3; b++) g->h[b] = K[(b + 1) % 3] * g->e[(b + 2) % 3] - K[(b + 2) % 3] * g->e[(b + 1) % 3];
    /* the first node two 1D cells before the box (grown by a cell) begins along k */
    double lo = INFINITY, hi = -INFINITY;
    for (int corner = 0; corner < 8; corner++) {
        double xi = 0;
        for (int a = 0; a < p->dims; a++) xi += g->k[a] * (double)((corner >> a) & 1 ? w->hi[a] + 1 : w->lo[a] - 1) * pyr_problem_h(p, a);
        lo = fmin(lo, xi);
        hi = fmax(hi, xi);
    }
    g->xi0 = lo - 2 * g->h1;
    g->xi1 = hi;
    return PYR_OK;
}

/* The incident field's factor on component c: E = e(xi) g.e, H = h(xi) g.h. */
static double incident_factor(const pw_geom_t *g, int c) { return c < 3 ? g->e[c] : g->h[c - 3]; }

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
    if (spans_periodic(p, w, a)) return 1; /* (no face: nothing outside to correct) */
    if (a != (int)w->component || a == w->axis || a >= p->dims || w->angle != 0) return 0;
    const int cpml = p->maxwell.cpml_cells > 0 && (p->maxwell.cpml_faces >> (2 * a + side)) & 1;
    return !cpml && (side ? w->hi[a] == pyr_problem_whole(p, a) - 1 : w->lo[a] == 0);
}

/* Whether whole-grid node g's eps_r, sigma or mu_r is not the background's. */
static int not_background(const pyr_problem_t *p, const int64_t g[3])
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    for (int which = 0; which < 3; which++)
        if (pyr_maxwell_shapes_material(p, which, g) != (which == 0 ? m->eps_r : which == 1 ? m->sigma : m->mu_r)) return 1;
    return 0;
}

int pyr_maxwell_planewave_face_find(const pyr_problem_t *p, int i, int (*bad)(const pyr_problem_t *p, const int64_t g[3]), int64_t g[3])
{
    const pyr_planewave_t *w = &p->maxwell.planewaves[i];
    int64_t lo[3], hi[3];
    for (int a = 0; a < 3; a++) {
        lo[a] = a < p->dims ? w->lo[a] - 1 : 0;
        hi[a] = a < p->dims ? w->hi[a] + 1 : 0;
    }
    for (int a = 0; a < p->dims; a++) {
        if (lo[a] < 0) lo[a] = 0;
        if (hi[a] > pyr_problem_whole(p, a) - 1) hi[a] = pyr_problem_whole(p, a) - 1;
    }
    for (int a = 0; a < p->dims; a++)
        for (int side = 0; side < 4; side++) {
            if (on_wall(p, w, a, side / 2)) continue;
            const int64_t at = side == 0 ? lo[a] : side == 1 ? w->lo[a] : side == 2 ? w->hi[a] : hi[a];
            /* the face's plane only: a sweep of the whole box costs its volume, minutes on large grids */
            int64_t flo[3] = {lo[0], lo[1], lo[2]}, fhi[3] = {hi[0], hi[1], hi[2]};
            flo[a] = fhi[a] = at;
            for (g[2] = flo[2]; g[2] <= fhi[2]; g[2]++)
                for (g[1] = flo[1]; g[1] <= fhi[1]; g[1]++)
                    for (g[0] = flo[0]; g[0] <= fhi[0]; g[0]++)
                        if (bad(p, g)) return 1;
        }
    return 0;
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
        if (w->angle != 0 && m->periodic)
            return pyr_fail(PYR_ERR_CONFIG,
                            "planewave%d: oblique incidence (angle %g) on a grid with periodic axes needs Bloch-periodic boundaries (a phase "
                            "shift across the period), which are not supported; use angle 0 (normal incidence) or no periodic axes",
                            i + 1, w->angle);
        if ((m->periodic >> w->axis) & 1)
            return pyr_fail(PYR_ERR_CONFIG,
                            "planewave%d: it travels along %c, which is periodic (a wave along it never leaves); send it along an axis "
                            "that is not periodic, across the periodic ones",
                            i + 1, "xyz"[w->axis]);
        for (int a = 0; a < p->dims; a++)
            if (((m->periodic >> a) & 1) && !spans_periodic(p, w, a))
                return pyr_fail(PYR_ERR_CONFIG,
                                "planewave%d: the box runs from node %lld to %lld along the periodic axis %c; a box face on a periodic "
                                "axis is not supported: span it whole (nodes 0 to %lld), so that the wave continues across the wrap",
                                i + 1, (long long)w->lo[a], (long long)w->hi[a], "xyz"[a], (long long)(pyr_problem_whole(p, a) - 1));
        if (w->angle != 0) {
            if (!isfinite(w->angle) || !(fabs(w->angle) < 90))
                return pyr_fail(PYR_ERR_CONFIG, "planewave%d: tilt %g: use an angle between -90 and 90 degrees", i + 1, w->angle);
            if (w->tilt < 0 || w->tilt >= p->dims || w->tilt == w->axis)
                return pyr_fail(PYR_ERR_CONFIG, "planewave%d: k tilts from %c towards %c, not another axis of this %dD grid", i + 1, "xyz"[w->axis],
                                w->tilt >= 0 && w->tilt < 3 ? "xyz"[w->tilt] : '?', p->dims);
            if (c != w->tilt && c != 3 - w->axis - w->tilt)
                return pyr_fail(PYR_ERR_CONFIG,
                                "planewave%d: tilted in the %c%c plane, E is either normal to it (%s) or in it (%s, turned with k); not %s",
                                i + 1, "xyz"[w->axis], "xyz"[w->tilt], pyr_maxwell_component_name(3 - w->axis - w->tilt),
                                pyr_maxwell_component_name(w->tilt), pyr_maxwell_component_name(c));
            double dt = 0;
            pw_geom_t geo;
            PYR_TRY(pyr_maxwell_dt(p, &dt));
            PYR_TRY(geometry(p, w, i, dt, &geo));
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
        int64_t g[3];
        if (m->nshapes && pyr_maxwell_planewave_face_find(p, i, not_background, g))
            return pyr_fail(PYR_ERR_CONFIG,
                            "planewave%d: node (%lld, %lld, %lld) of the box's faces (or the node outside them) is not "
                            "in the background medium (a material shape covers it); the incident wave is the "
                            "background's, so make the box enclose the shapes with a node of background around them",
                            i + 1, (long long)g[0], (long long)g[1], (long long)g[2]);
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
static void corrections(const pyr_problem_t *p, int i, const pyr_coef_t *co, const pw_geom_t *geo, pyr_scheme_point_t *src,
                        pyr_scheme_term_t *term, const int64_t off[PYR_MAXWELL_MAX_PLANEWAVES], const int64_t *len, int64_t *k)
{
    const pyr_planewave_t *w = &p->maxwell.planewaves[i];
    for (int c = 0; c < 6; c++) {
        if (!pyr_maxwell_component_used(p, c)) continue;
        const int electric = c < 3, own = c % 3;
        for (int a = 0; a < p->dims; a++) {
            if (a == own) continue;
            const int other = 3 - a - own; /* the neighbour's component: H_other for E_own, E_other for H_own */
            const int nb = electric ? other + 3 : other;
            const double fac = incident_factor(geo, nb);
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
                                /* the row's e of this plane wave, or its h after them */
                                const int64_t base = off[i] + (electric ? len[i] : 0);
                                term[*k].coef = sign * coef;
                                term[*k].nw = geo->oblique ? 4 : 1;
                                if (!geo->oblique) {
                                    term[*k].k = base + grid_index(w, nb, x);
                                } else {
                                    /* the neighbour's position along k, in 1D cells from the first node (H: from h[0]);
                                     * cubic interpolation, as linear's error (k h1)^2 / 8 would leak about -50 dB */
                                    int64_t m[3] = {g[0], g[1], g[2]};
                                    if (electric && !side) m[a]--;
                                    if (!electric && !side) m[a]++;
                                    double xi = 0;
                                    for (int t = 0; t < p->dims; t++)
                                        xi += geo->k[t] * ((double)m[t] + (half_along(nb, t) ? 0.5 : 0.0)) * pyr_problem_h(p, t);
                                    const double u = (xi - geo->xi0) / geo->h1 - (nb >= 3 ? 0.5 : 0.0), j = floor(u), t = u - j;
                                    term[*k].k = base + (int64_t)j - 1;
                                    term[*k].w[0] = -t * (t - 1) * (t - 2) / 6;
                                    term[*k].w[1] = (t + 1) * (t - 1) * (t - 2) / 2;
                                    term[*k].w[2] = -(t + 1) * t * (t - 2) / 2;
                                    term[*k].w[3] = (t + 1) * t * (t - 1) / 6;
                                }
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
    free(st->row);
    free(st);
}

/* Plane wave i's 1D grid at step 0 (all zero but the hard source). */
static pyr_status_t grid_make(const pyr_problem_t *p, int i, const pyr_coef_t *co, const pw_geom_t *geo, pw_grid_t *g)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    const pyr_planewave_t *w = &m->planewaves[i];
    const int64_t inner = geo->oblique ? (int64_t)ceil((geo->xi1 - geo->xi0) / geo->h1) + 2 + MARGIN : w->hi[w->axis] - w->lo[w->axis] + 3 + MARGIN;
    const int64_t n = inner + ABSORBER + 1;
    g->n = n;
    g->e = calloc((size_t)n, sizeof(double));
    g->h = calloc((size_t)n, sizeof(double));
    g->ca = malloc((size_t)n * sizeof(double));
    g->cb = malloc((size_t)n * sizeof(double));
    g->da = malloc((size_t)n * sizeof(double));
    g->db = malloc((size_t)n * sizeof(double));
    if (!g->e || !g->h || !g->ca || !g->cb || !g->da || !g->db) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for plane wave %d's 1D grid", i + 1);
    g->inv_h = geo->oblique ? 1.0 / geo->h1 : co->c[w->axis];
    const double dt = co->c[3], h = geo->oblique ? geo->h1 : 1.0 / co->c[w->axis], eta = sqrt(m->mu_r / m->eps_r);
    /* oblique: eps, mu and sigma scaled alike (the same impedance and loss per time) to match the dispersion */
    const double eps = m->eps_r * geo->scale, mu = m->mu_r * geo->scale, sig = m->sigma * geo->scale;
    double ca0 = co->c[4], cb0 = co->c[5], db0 = co->c[6];
    if (geo->oblique) {
        const double s0 = sig * dt / (2 * eps);
        ca0 = (1 - s0) / (1 + s0);
        cb0 = (dt / eps) / (1 + s0);
        db0 = dt / mu;
    }
    /* a polynomial grading of order 3 whose round trip attenuates by e^-40 */
    const double order = 3, smax = 40.0 * (order + 1) / (2.0 * eta * ABSORBER * h);
    for (int64_t k = 0; k < n; k++) {
        const double de = (double)(k - inner) / ABSORBER, dm = ((double)(k - inner) + 0.5) / ABSORBER;
        if (de > 0) {
            const double s = (sig + smax * eps / m->eps_r * pow(de, order)) * dt / (2 * eps);
            g->ca[k] = (1 - s) / (1 + s);
            g->cb[k] = (dt / eps) / (1 + s);
        } else {
            g->ca[k] = ca0;
            g->cb[k] = cb0;
        }
        if (dm > 0) {
            const double s = smax * pow(dm, order) / m->eps_r * dt / 2; /* sigma_m / mu dt / 2, sigma_m = sigma mu / eps */
            g->da[k] = (1 - s) / (1 + s);
            g->db[k] = (dt / mu) / (1 + s);
        } else {
            g->da[k] = 1;
            g->db[k] = db0;
        }
    }
    memset(&g->wave, 0, sizeof g->wave);
    g->wave.waveform = w->waveform;
    g->wave.amplitude = w->amplitude;
    g->wave.frequency = w->frequency;
    g->wave.width = w->width;
    g->wave.delay = w->delay;
    /* tilted, the first node lies two 1D cells before the plane the waveform is given on */
    g->lead = geo->oblique ? 2 * geo->h1 * sqrt(m->eps_r * m->mu_r) : 0;
    g->e[0] = pyr_maxwell_waveform(&g->wave, g->lead);
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
    for (int i = 0; i < m->nplanewaves; i++) {
        pyr_status_t s = geometry(p, &m->planewaves[i], i, co.c[3], &st->geom[i]);
        if (s != PYR_OK) {
            free(st);
            return s;
        }
    }
    int64_t total = 0, len[PYR_MAXWELL_MAX_PLANEWAVES] = {0};
    for (int i = 0; i < m->nplanewaves; i++) corrections(p, i, &co, &st->geom[i], NULL, NULL, st->off, len, &total);
    if (out->nsources + total > (1 << 24)) {
        free(st);
        return pyr_fail(PYR_ERR_CONFIG, "the plane waves' boxes have %lld face nodes on this grid; at most 16777216 sources in all", (long long)total);
    }
    st->npw = m->nplanewaves;
    for (int i = 0; i < st->npw; i++) {
        pyr_status_t s = grid_make(p, i, &co, &st->geom[i], &st->grid[i]);
        if (s != PYR_OK) {
            pyr_maxwell_planewaves_free(st);
            return s;
        }
        /* the series' row: each plane wave's e, then its h */
        len[i] = st->grid[i].n;
        st->off[i] = st->nseries;
        st->nseries += 2 * len[i];
    }
    pyr_scheme_point_t *all = realloc(out->sources, (size_t)(out->nsources + total + 1) * sizeof *all);
    if (all) out->sources = all;
    st->term = malloc((size_t)(out->nsources + total + 1) * sizeof *st->term);
    st->row = malloc((size_t)st->nseries * sizeof *st->row);
    if (!all || !st->term || !st->row) {
        pyr_maxwell_planewaves_free(st);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the plane waves' sources");
    }
    for (int64_t i = 0; i < out->nsources; i++) {
        memset(&st->term[i], 0, sizeof st->term[i]);
        st->term[i].k = -1; /* a point source: its amplitude in amp */
    }
    int64_t k = out->nsources;
    for (int i = 0; i < m->nplanewaves; i++) corrections(p, i, &co, &st->geom[i], all, st->term, st->off, len, &k);
    st->nterms = k;
    out->nsources = (int)k;
    out->terms = st->term;
    out->nseries = (int)st->nseries;
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
    g->e[0] = pyr_maxwell_waveform(&g->wave, (double)g->step * dt + g->lead);
}

pyr_status_t pyr_maxwell_planewaves_amplitudes(const pyr_problem_t *p, pyr_maxwell_planewaves_t *st, const pyr_scheme_point_t *src, int from,
                                               int nsources, int64_t first, int64_t count, double *amp, double *series)
{
    (void)src;
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
        double *row = series ? series + s * st->nseries : st->row;
        for (int w = 0; w < st->npw; w++) {
            pw_grid_t *g = &st->grid[w];
            memcpy(row + st->off[w], g->e, (size_t)g->n * sizeof *row);
            grid_h(g);
            memcpy(row + st->off[w] + g->n, g->h, (size_t)g->n * sizeof *row);
            grid_e(g, dt);
        }
        if (series) continue; /* the kernels take the terms from the rows */
        for (int i = from; i < nsources; i++) amp[s * nsources + i] = pyr_scheme_term_value(&st->term[i], row);
    }
    return PYR_OK;
}
