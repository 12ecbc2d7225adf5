/* Maxwell's equations on the Yee grid (FDTD), in MEEP's units (c = 1,
 * eps0 = mu0 = 1), the explicit leapfrog of Taflove & Hagness; see
 * include/pyrgrid.h for the staggering and the update equations.
 *
 * As a scheme table: six components updated in place (those of the mode in
 * 2D), per-node materials as read-only inputs (eps_r, sigma, mu_r; only when
 * they vary), and the CPML auxiliaries psi (two per component, one per
 * transverse axis) as library-kept fields that are moved only over the
 * absorbing layers.  Two sub-steps per step: H reads E ahead of it (reach
 * one node above along every axis), then E reads H behind it (one node
 * below), so a pyramid shrinks one side per half-step.
 *
 * Every kernel evaluates exactly, per component (here Ex; the others by
 * cycling x -> y -> z):
 *     dy = (Hz[j] - Hz[j-1]) * (1/hy);   cy = dy                          outside the y layers
 *                                        psi = by*psi + ay*dy; cy = dy*(1/ky) + psi   inside them
 *     (cz likewise from Hy along z)
 *     Ex = ca*Ex + cb*(cy - cz)          ca = 1, cb = dt without materials; with them
 *                                        s = sigma*dt / (2*eps), ca = (1 - s)/(1 + s), cb = (dt/eps)/(1 + s)
 *     Ex = Ex + amplitude (sources)
 * and for H: Hx = Hx - dh*(cy - cz) with dh = dt, or dt/mu with materials,
 * the differences taken ahead ((Ez[j+1] - Ez[j]) ...) and the profiles at
 * the half-integer positions.  2D TM (Ez, Hx, Hy) and TE (Hz, Ex, Ey) drop
 * the z terms: a missing term is left out, not added as zero, and a lone
 * negative term is subtracted (Hy = Hy + dh*cx in TM, Ey = ca*Ey - cb*cx in
 * TE).  Each operation is rounded separately (no FMA), so every method,
 * plan and backend gives the same bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/field.h"
#include "io/npy.h"
#include "io/npy_part.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *const component_names[6] = {"Ex", "Ey", "Ez", "Hx", "Hy", "Hz"};

const char *pyr_maxwell_component_name(int c) { return c >= 0 && c < 6 ? component_names[c] : "?"; }

int pyr_maxwell_component_used(const pyr_problem_t *p, int c)
{
    if (p->dims == 3) return 1;
    /* 2D: TM is Ez, Hx, Hy; TE is Hz, Ex, Ey */
    if (p->maxwell.te) return c == PYR_HZ || c == PYR_EX || c == PYR_EY;
    return c == PYR_EZ || c == PYR_HX || c == PYR_HY;
}

/* ----------------------------------------------------------------- regions */

void pyr_maxwell_update_range(const pyr_problem_t *p, int c, int axis, int64_t *lo, int64_t *hi)
{
    const int64_t n = pyr_problem_whole(p, axis);
    const int along = c % 3 == axis, electric = c < 3;
    if (axis >= p->dims) {
        *lo = 0;
        *hi = 1;
    } else if ((p->maxwell.periodic >> axis) & 1) {
        /* periodic: no wall and no unused half-cell, every node is updated (the one past the last is the first) */
        *lo = 0;
        *hi = n;
    } else if (electric) {
        /* E: along its own axis the last half-cell is unused; across, the faces are PEC (tangential E fixed) */
        *lo = along ? 0 : 1;
        *hi = n - 1;
    } else {
        /* H: along its own axis every node; across, the last half-cell is unused */
        *lo = 0;
        *hi = along ? n : n - 1;
    }
}

/* Depth of a position (in cells, from the inner edge of the layer) inside
 * the CPML of axis a, or 0 outside; pos in units of h (i or i + 1/2). */
static double pml_depth(const pyr_problem_t *p, int a, double pos)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    const double L = (double)m->cpml_cells, last = (double)(pyr_problem_whole(p, a) - 1);
    if (L <= 0) return 0;
    double d = 0;
    if (m->cpml_faces & (1u << (2 * a)) && pos < L) d = L - pos;
    if (m->cpml_faces & (1u << (2 * a + 1)) && pos > last - L) {
        double e = pos - (last - L);
        if (e > d) d = e;
    }
    return d;
}

pyr_status_t pyr_maxwell_dt(const pyr_problem_t *p, double *dt)
{
    double s = 0;
    for (int d = 0; d < p->dims; d++) {
        double h = pyr_problem_h(p, d);
        s += 1.0 / (h * h);
    }
    if (!(s > 0) || !isfinite(s)) return pyr_fail(PYR_ERR_CONFIG, "grid spacings this small make 1/h^2 overflow; use larger lengths");
    *dt = p->maxwell.dt > 0 ? p->maxwell.dt : p->maxwell.courant / sqrt(s);
    return PYR_OK;
}

/* The smallest eps_r * mu_r the background and shapes give (files are checked
 * when read): the fastest wave, c / sqrt(eps mu), sets the stability limit. */
static double slowest_product(const pyr_problem_t *p)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    double v = m->eps_r * m->mu_r;
    for (int i = 0; i < m->nshapes; i++)
        if (m->shapes[i].eps_r * m->shapes[i].mu_r < v) v = m->shapes[i].eps_r * m->shapes[i].mu_r;
    return v;
}

static pyr_status_t check_node(const pyr_problem_t *p, const char *what, int i, const int64_t node[3])
{
    for (int a = 0; a < 3; a++) {
        const int64_t lim = a < p->dims ? pyr_problem_whole(p, a) : 1;
        if (node[a] < 0 || node[a] >= lim)
            return pyr_fail(PYR_ERR_CONFIG, "%s %d: node (%lld, %lld, %lld) is outside the %lld x %lld x %lld grid; use indices from 0 to n - 1",
                            what, i + 1, (long long)node[0], (long long)node[1], (long long)node[2], (long long)pyr_problem_whole(p, 0),
                            (long long)pyr_problem_whole(p, 1), (long long)pyr_problem_whole(p, 2));
        if (a < p->dims && p->maxwell.cpml_cells > 0 && pml_depth(p, a, (double)node[a]) > 0)
            return pyr_fail(PYR_ERR_CONFIG,
                            "%s %d: node (%lld, %lld, %lld) lies inside the CPML (%d cells at the faces of axis %c); place it at least "
                            "%d nodes from those faces",
                            what, i + 1, (long long)node[0], (long long)node[1], (long long)node[2], p->maxwell.cpml_cells, "xyz"[a],
                            p->maxwell.cpml_cells + 1);
    }
    return PYR_OK;
}

/* Component c is updated at nodes lo .. hi (a point, or a line's ends)
 * along every axis: elsewhere it is tangential E on a PEC face or the unused
 * last half-cell, which stay 0, so a source there would be lost and a probe
 * would record nothing. */
static pyr_status_t check_updated(const pyr_problem_t *p, const char *what, int i, int c, const int64_t lo_node[3], const int64_t hi_node[3])
{
    for (int a = 0; a < p->dims; a++) {
        int64_t lo, hi;
        pyr_maxwell_update_range(p, c, a, &lo, &hi);
        const int64_t at = lo_node[a] < lo ? lo_node[a] : hi_node[a];
        if (lo_node[a] < lo || hi_node[a] >= hi)
            return pyr_fail(PYR_ERR_CONFIG,
                            "%s %d: %s is not updated at index %lld along %c (%s, where it stays 0); use indices %lld to %lld "
                            "along %c",
                            what, i + 1, pyr_maxwell_component_name(c), (long long)at, "xyz"[a],
                            c < 3 && c % 3 != a ? "a PEC face" : "the unused last half-cell", (long long)lo, (long long)(hi - 1),
                            "xyz"[a]);
    }
    return PYR_OK;
}

/* Periodic axes: axes of the grid, no CPML on their faces, long enough to
 * wrap, and never cut between parts of a larger grid (a part's window would
 * need the halo of the part at the other end). */
static pyr_status_t check_periodic(const pyr_problem_t *p)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    if (m->periodic & ~((1u << p->dims) - 1) || m->periodic > 7)
        return pyr_fail(PYR_ERR_CONFIG, "boundary.periodic names an axis this %dD grid does not have; use %s", p->dims, p->dims == 2 ? "x or y" : "x, y or z");
    for (int a = 0; a < p->dims; a++) {
        if (!((m->periodic >> a) & 1)) continue;
        if (m->cpml_cells > 0 && (m->cpml_faces >> (2 * a)) & 3)
            return pyr_fail(PYR_ERR_CONFIG,
                            "boundary: axis %c is periodic, but boundary.faces puts a CPML on %c%s; a periodic axis has no faces: list the "
                            "faces of the other axes only (e.g. faces = %s)",
                            "xyz"[a], "xyz"[a], (m->cpml_faces >> (2 * a)) & 1 ? "-" : "+", a == 0 ? "y- y+" : "x- x+");
        if (pyr_problem_whole(p, a) < 3)
            return pyr_fail(PYR_ERR_CONFIG, "boundary.periodic: axis %c has %lld nodes; a periodic axis needs at least 3", "xyz"[a],
                            (long long)pyr_problem_whole(p, a));
        if (p->n[a] != pyr_problem_whole(p, a))
            return pyr_fail(PYR_ERR_CONFIG,
                            "boundary.periodic: this part of the grid cuts the periodic axis %c (nodes %lld .. %lld of %lld), whose ends "
                            "join; cut the grid between devices or ranks along an axis that is not periodic",
                            "xyz"[a], (long long)p->origin[a], (long long)(p->origin[a] + p->n[a] - 1), (long long)pyr_problem_whole(p, a));
    }
    return PYR_OK;
}

static pyr_status_t maxwell_validate(const pyr_problem_t *p)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    if (p->dims < 2) return pyr_fail(PYR_ERR_CONFIG, "scheme.equation = maxwell needs a 2D or 3D grid (grid.dims = 2 or 3)");
    if (!(m->courant > 0) && !(m->dt > 0))
        return pyr_fail(PYR_ERR_CONFIG, "scheme.courant = %g: give a Courant number in (0, 1] (e.g. 0.5), or dt", m->courant);
    if (!isfinite(m->dt) || m->dt < 0) return pyr_fail(PYR_ERR_CONFIG, "scheme.dt = %g: the time step must be positive", m->dt);
    double mats[3] = {m->eps_r, m->sigma, m->mu_r};
    static const char *const names[3] = {"eps_r", "sigma", "mu_r"};
    for (int k = 0; k < 3; k++)
        if (!isfinite(mats[k]) || (k != 1 && !(mats[k] > 0)) || mats[k] < 0)
            return pyr_fail(PYR_ERR_CONFIG, "material.%s = %g: %s", names[k], mats[k],
                            k == 1 ? "the conductivity must be finite and >= 0" : "must be a finite number > 0");
    for (int i = 0; i < m->nshapes; i++) {
        const pyr_shape_t *s = &m->shapes[i];
        if (!(s->eps_r > 0) || !isfinite(s->eps_r) || !(s->mu_r > 0) || !isfinite(s->mu_r) || !(s->sigma >= 0) || !isfinite(s->sigma))
            return pyr_fail(PYR_ERR_CONFIG, "material shape %d: eps_r = %g, sigma = %g, mu_r = %g; use eps_r > 0, mu_r > 0, sigma >= 0", i + 1,
                            s->eps_r, s->sigma, s->mu_r);
        if ((s->kind == PYR_SHAPE_SPHERE || s->kind == PYR_SHAPE_CYLINDER) && !(s->r > 0))
            return pyr_fail(PYR_ERR_CONFIG, "material shape %d: radius %g; use a positive radius", i + 1, s->r);
        /* reversed bounds hold no node: the shape would vanish without a word */
        for (int a = 0; a < p->dims; a++) {
            if (s->kind == PYR_SHAPE_BOX && !(s->lo[a] <= s->hi[a]))
                return pyr_fail(PYR_ERR_CONFIG, "material shape %d: the box runs from %c = %g to %c = %g, so it is empty; write the smaller "
                                                "coordinate first (box X0 X1 Y0 Y1 [Z0 Z1] with X0 <= X1 ...)",
                                i + 1, "xyz"[a], s->lo[a], "xyz"[a], s->hi[a]);
            if (s->kind == PYR_SHAPE_CYLINDER && a == s->axis && !(s->lo[a] <= s->hi[a]))
                return pyr_fail(PYR_ERR_CONFIG, "material shape %d: the cylinder runs from %c = %g to %c = %g, so it is empty; write "
                                                "LO <= HI (cylinder AXIS C1 C2 R LO HI)",
                                i + 1, "xyz"[a], s->lo[a], "xyz"[a], s->hi[a]);
        }
    }
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    double s = 0;
    for (int d = 0; d < p->dims; d++) {
        double h = pyr_problem_h(p, d);
        s += 1.0 / (h * h);
    }
    const double limit = sqrt(slowest_product(p)) / sqrt(s);
    if (!(dt <= limit))
        return pyr_fail(PYR_ERR_UNSTABLE,
                        "unstable time step: dt = %g exceeds the Yee scheme's limit sqrt(min eps_r mu_r) / sqrt(sum 1/h^2) = %.6g "
                        "(Courant number %.4g); use scheme.courant <= %.4g, or dt <= %.6g",
                        dt, limit, dt * sqrt(s), limit * sqrt(s) * 0.99999, limit);
    if (m->cpml_cells < 0) return pyr_fail(PYR_ERR_CONFIG, "boundary.cpml_cells = %d: use 0 (PEC) or a positive thickness", m->cpml_cells);
    if (m->cpml_cells > 0) {
        for (int a = 0; a < p->dims; a++) {
            const int faces = ((m->cpml_faces >> (2 * a)) & 1) + ((m->cpml_faces >> (2 * a + 1)) & 1);
            const int64_t na = pyr_problem_whole(p, a);
            if (faces && (int64_t)faces * m->cpml_cells + 2 >= na)
                return pyr_fail(PYR_ERR_CONFIG,
                                "boundary.cpml_cells = %d: %d layer%s of %d cells and the interior do not fit the %lld nodes of axis %c; "
                                "use cpml_cells <= %lld or more nodes",
                                m->cpml_cells, faces, faces > 1 ? "s" : "", m->cpml_cells, (long long)na, "xyz"[a],
                                (long long)((na - 3) / faces));
        }
        if (!(m->cpml_order >= 0) || !isfinite(m->cpml_order) || !(m->cpml_kappa_max >= 1) || !(m->cpml_alpha_max >= 0) ||
            !(m->cpml_sigma_max >= 0))
            return pyr_fail(PYR_ERR_CONFIG, "boundary: cpml_order >= 0, cpml_kappa_max >= 1, cpml_alpha_max >= 0 and cpml_sigma_max >= 0 "
                                            "(0: the optimum) are required");
    }
    PYR_TRY(check_periodic(p));
    for (int i = 0; i < m->nsources; i++) {
        const pyr_source_t *src = &m->sources[i];
        if (src->component < PYR_EX || src->component > PYR_HZ || !pyr_maxwell_component_used(p, src->component))
            return pyr_fail(PYR_ERR_CONFIG, "source %d: component %s is not one of this grid's (%s)", i + 1,
                            pyr_maxwell_component_name(src->component),
                            p->dims == 3 ? "Ex Ey Ez Hx Hy Hz" : p->maxwell.te ? "TE: Hz Ex Ey" : "TM: Ez Hx Hy");
        PYR_TRY(check_node(p, "source", i, src->node));
        PYR_TRY(check_node(p, "source", i, src->node_end));
        int differ = 0;
        for (int a = 0; a < 3; a++) {
            if (src->node_end[a] < src->node[a])
                return pyr_fail(PYR_ERR_CONFIG, "source %d: the line's end comes before its start along %c", i + 1, "xyz"[a]);
            differ += src->node_end[a] != src->node[a];
        }
        if (differ > 1) return pyr_fail(PYR_ERR_CONFIG, "source %d: a line source runs along one axis; its ends differ along %d", i + 1, differ);
        PYR_TRY(check_updated(p, "source", i, src->component, src->node, src->node_end));
        if (!isfinite(src->amplitude) || !isfinite(src->frequency) || !isfinite(src->width) || !isfinite(src->delay) ||
            src->frequency < 0 || src->width < 0)
            return pyr_fail(PYR_ERR_CONFIG, "source %d: amplitude, frequency >= 0, width >= 0 and delay must be finite", i + 1);
        if (src->waveform == PYR_WAVE_GAUSSIAN && !(src->width > 0))
            return pyr_fail(PYR_ERR_CONFIG, "source %d: a Gaussian pulse needs width > 0 (in time units)", i + 1);
        if ((src->waveform == PYR_WAVE_RICKER || src->waveform == PYR_WAVE_SINE) && !(src->frequency > 0))
            return pyr_fail(PYR_ERR_CONFIG, "source %d: this waveform needs frequency > 0", i + 1);
    }
    for (int i = 0; i < m->nprobes; i++) {
        const pyr_probe_t *pr = &m->probes[i];
        if (pr->component < PYR_EX || pr->component > PYR_HZ || !pyr_maxwell_component_used(p, pr->component))
            return pyr_fail(PYR_ERR_CONFIG, "probe %d: component %s is not one of this grid's", i + 1, pyr_maxwell_component_name(pr->component));
        PYR_TRY(check_node(p, "probe", i, pr->node));
        PYR_TRY(check_updated(p, "probe", i, pr->component, pr->node, pr->node));
    }
    PYR_TRY(pyr_maxwell_monitors_check(p));
    PYR_TRY(pyr_maxwell_planewaves_check(p));
    PYR_TRY(pyr_maxwell_map_check(p));
    PYR_TRY(pyr_maxwell_disp_check(p));
    if (p->init != PYR_INIT_ZERO && p->init != PYR_INIT_RANDOM && p->init != PYR_INIT_FILE)
        return pyr_fail(PYR_ERR_CONFIG, "initial.kind: the Maxwell scheme starts from zero, random or file fields (file = PREFIX: PREFIX_Ex.npy ...)");
    return PYR_OK;
}

/* Field layout: the six components, then eps_r, sigma, mu_r, then the
 * twelve psi (component c, derivative axis a != c % 3: psi index by c and the
 * two other axes in increasing order). */
int pyr_maxwell_psi_field(int c, int axis)
{
    const int own = c % 3;
    int k = 0;
    for (int a = 0; a < 3; a++) {
        if (a == own) continue;
        if (a == axis) return PYR_MAXWELL_PSI0 + 2 * c + k;
        k++;
    }
    return -1;
}

/* Whether material `which` (0 eps_r, 1 sigma, 2 mu_r) differs between nodes. */
static int material_varies(const pyr_problem_t *p, int which)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    const char *file = which == 0 ? m->eps_file : which == 1 ? m->sigma_file : m->mu_file;
    if (file[0]) return 1;
    const double bg = which == 0 ? m->eps_r : which == 1 ? m->sigma : m->mu_r;
    for (int i = 0; i < m->nshapes; i++) {
        const double v = which == 0 ? m->shapes[i].eps_r : which == 1 ? m->shapes[i].sigma : m->shapes[i].mu_r;
        if (v != bg) return 1;
    }
    for (int i = 0; i < m->nlabels && m->map_file[0]; i++) {
        const double v = which == 0 ? m->labels[i].eps_r : which == 1 ? m->labels[i].sigma : m->labels[i].mu_r;
        if (v != bg) return 1;
    }
    return 0;
}

/* Whether the conductivity that Debye terms add to E's coefficients differs between nodes. */
static int disp_sigma_varies(const pyr_problem_t *p)
{
    if (!pyr_maxwell_dispersive(p)) return 0;
    const double bg = p->maxwell.sigma + pyr_maxwell_disp_sigma(p, 1);
    for (int i = 0; i < p->maxwell.nshapes; i++)
        if (p->maxwell.shapes[i].sigma + pyr_maxwell_disp_sigma(p, 2 + i) != bg) return 1;
    for (int i = 0; i < p->maxwell.nlabels && p->maxwell.map_file[0]; i++)
        if (p->maxwell.labels[i].sigma + pyr_maxwell_disp_sigma(p, 2 + p->maxwell.nshapes + i) != bg) return 1;
    return 0;
}

/* E's coefficients at a node of eps_r and sigma, H's of mu_r, in double
 * (stored per node in the grid's precision, or passed as constants). */
static void e_coefficients(double eps, double sigma, double dt, double *ca, double *cb)
{
    const double s = sigma * dt / (2 * eps);
    *ca = (1 - s) / (1 + s);
    *cb = (dt / eps) / (1 + s);
}

static unsigned maxwell_fields(const pyr_problem_t *p)
{
    unsigned used = 0;
    for (int c = 0; c < 6; c++)
        if (pyr_maxwell_component_used(p, c)) used |= 1u << c;
    /* per-node coefficients only where the materials vary: ca with sigma (1 without loss), cb with
     * eps_r or sigma, dh with mu_r; uniform ones are constants of the kernel (pyr_coef_t.c[4..6]) */
    const int eps = material_varies(p, 0), sigma = material_varies(p, 1) || disp_sigma_varies(p), mu = material_varies(p, 2);
    if (sigma || (eps && p->maxwell.sigma + pyr_maxwell_disp_sigma(p, 1) != 0)) used |= 1u << PYR_MAXWELL_CA;
    if (eps || sigma) used |= 1u << PYR_MAXWELL_CB;
    if (mu) used |= 1u << PYR_MAXWELL_DH;
    /* the dispersive terms' states take psi slots no layer uses */
    return used | pyr_maxwell_psi_used(p) | pyr_maxwell_disp_fields(p);
}

static void maxwell_coefficients(const pyr_problem_t *p, pyr_coef_t *c)
{
    memset(c, 0, sizeof *c);
    c->equation = PYR_EQ_MAXWELL;
    c->dims = p->dims;
    c->precision = p->precision;
    for (int d = 0; d < 3; d++) c->c[d] = d < p->dims ? 1.0 / pyr_problem_h(p, d) : 0;
    double dt = 0;
    (void)pyr_maxwell_dt(p, &dt);
    c->c[3] = dt;
    /* the background's coefficients (used where no per-node field is kept) */
    e_coefficients(p->maxwell.eps_r, p->maxwell.sigma + pyr_maxwell_disp_sigma(p, 1), dt, &c->c[4], &c->c[5]);
    c->c[6] = dt / p->maxwell.mu_r;
    /* the dispersive table follows the CPML profiles in aux (maxwell_aux) */
    c->c[7] = pyr_maxwell_dispersive(p) ? 1 : 0;
    c->periodic = p->maxwell.periodic & ((1u << p->dims) - 1);
}

/* The CPML profiles: per axis a, for integer positions (E's derivatives) and
 * half-integer ones (H's), three arrays of n[a] values each, kinv = 1/kappa,
 * b and a (Roden-Gedney), laid out as aux[((a * 2 + half) * 4 + k) * nmax + i]
 * with nmax the largest axis; plus a flag array in_pml (1.0 / 0.0) per
 * position.  Outside the layers kinv = 1, b = a = 0, flag 0. */
static pyr_status_t maxwell_aux(const pyr_problem_t *p, double **out, int64_t *naux)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    int64_t nmax = 1;
    for (int a = 0; a < 3; a++)
        if (p->n[a] > nmax) nmax = p->n[a];
    const int64_t n = 3 * 2 * 4 * nmax;
    double *aux = calloc((size_t)n, sizeof *aux);
    if (!aux) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the CPML profiles");
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    for (int a = 0; a < p->dims; a++) {
        const double h = pyr_problem_h(p, a), L = (double)m->cpml_cells;
        const double order = m->cpml_order;
        /* optimum sigma_max (Taflove 7.67) in units with eta = 1: 0.8 (m + 1) / h */
        const double smax = m->cpml_sigma_max > 0 ? m->cpml_sigma_max : 0.8 * (order + 1) / h;
        for (int half = 0; half < 2; half++)
            for (int64_t i = 0; i < p->n[a]; i++) {
                double *kinv = &aux[((a * 2 + half) * 4 + 0) * nmax];
                double *bb = &aux[((a * 2 + half) * 4 + 1) * nmax];
                double *aa = &aux[((a * 2 + half) * 4 + 2) * nmax];
                double *in = &aux[((a * 2 + half) * 4 + 3) * nmax];
                kinv[i] = 1;
                const double d = L > 0 ? pml_depth(p, a, (double)(i + p->origin[a]) + (half ? 0.5 : 0.0)) : 0;
                if (!(d > 0)) continue;
                const double x = d / L;
                const double sigma = smax * pow(x, order), kappa = 1 + (m->cpml_kappa_max - 1) * pow(x, order);
                const double alpha = m->cpml_alpha_max * (1 - x);
                const double b = exp(-(sigma / kappa + alpha) * dt);
                kinv[i] = 1 / kappa;
                bb[i] = b;
                aa[i] = sigma > 0 ? sigma / (sigma * kappa + kappa * kappa * alpha) * (b - 1) : 0;
                in[i] = 1;
            }
    }
    int64_t total = n;
    pyr_status_t st = pyr_maxwell_disp_table_append(p, &aux, &total);
    if (st != PYR_OK) {
        free(aux);
        return st;
    }
    *out = aux;
    *naux = total;
    return PYR_OK;
}

static int maxwell_support(const pyr_problem_t *p, int f, pyr_box_t *boxes, int max)
{
    if (f < PYR_MAXWELL_PSI0) return -1;
    if (max >= 1) {
        const int d = pyr_maxwell_disp_support(p, f, boxes);
        if (d) return d;
    }
    const int k = f - PYR_MAXWELL_PSI0, c = k / 2, which = k % 2;
    int axis = -1, seen = 0;
    for (int a = 0; a < 3; a++) {
        if (a == c % 3) continue;
        if (seen++ == which) axis = a;
    }
    int nb = 0;
    const int64_t L = p->maxwell.cpml_cells, n = pyr_problem_whole(p, axis), o = p->origin[axis];
    for (int side = 0; side < 2 && nb < max; side++) {
        if (!(p->maxwell.cpml_faces & (1u << (2 * axis + side)))) continue;
        pyr_box_t b;
        for (int a = 0; a < 3; a++) {
            b.lo[a] = 0;
            b.hi[a] = p->n[a];
        }
        /* positions i and i + 1/2 with depth > 0: i < L on the low side, i > n - 2 - L on the high side
         * (whole-grid positions; a part keeps what falls on its nodes, in its own coordinates) */
        int64_t lo = 0, hi = n;
        if (side == 0) hi = L + 1 < n ? L + 1 : n;
        else lo = n - 2 - L > 0 ? n - 2 - L : 0;
        b.lo[axis] = lo - o > 0 ? lo - o : 0;
        b.hi[axis] = hi - o < p->n[axis] ? hi - o : p->n[axis];
        if (b.hi[axis] > b.lo[axis]) boxes[nb++] = b;
    }
    return nb;
}

/* A periodic axis has no boundary nodes: both sub-steps update it from end to end. */
static int maxwell_margin(const pyr_problem_t *p, int k, int axis, int high)
{
    if (axis < p->dims && ((p->maxwell.periodic >> axis) & 1)) return 0;
    return high ? pyr_scheme_maxwell.sub[k].margin_hi[axis] : pyr_scheme_maxwell.sub[k].margin_lo[axis];
}

static int64_t maxwell_check_every(const pyr_problem_t *p)
{
    (void)p;
    return 0;
}

static double maxwell_tolerance(const pyr_problem_t *p)
{
    (void)p;
    return 0;
}

static void maxwell_key(const pyr_problem_t *p, char *out, size_t size)
{
    /* (dispersive terms' states share the psi slots' bits: their problems say so apart) */
    snprintf(out, size, "%s fields=%x%s%s", p->dims == 2 ? (p->maxwell.te ? "te" : "tm") : "3d", maxwell_fields(p),
             pyr_maxwell_dispersive(p) ? " dispersive" : "", p->maxwell.periodic ? " periodic" : "");
}

/* ----------------------------------------------------------------- inputs */

static pyr_status_t check_shape(const pyr_problem_t *p, const pyr_field_t *f)
{
    for (int d = 0; d < 3; d++)
        if (f->n[d] != p->n[d]) return pyr_fail(PYR_ERR_ARG, "field shape does not match the problem");
    if (f->precision != p->precision) return pyr_fail(PYR_ERR_ARG, "field precision does not match the problem");
    return PYR_OK;
}

static inline void store(pyr_field_t *f, int64_t i, double v)
{
    if (f->precision == PYR_DOUBLE) ((double *)f->data)[i] = v;
    else ((float *)f->data)[i] = (float)v;
}

static inline double load(const pyr_field_t *f, int64_t i)
{
    return f->precision == PYR_DOUBLE ? ((const double *)f->data)[i] : (double)((const float *)f->data)[i];
}

static int inside(const pyr_problem_t *p, const pyr_shape_t *s, int64_t x, int64_t y, int64_t z)
{
    const double pos[3] = {(double)x * pyr_problem_h(p, 0), p->dims > 1 ? (double)y * pyr_problem_h(p, 1) : 0,
                           p->dims > 2 ? (double)z * pyr_problem_h(p, 2) : 0};
    switch (s->kind) {
    case PYR_SHAPE_BOX:
        for (int a = 0; a < p->dims; a++)
            if (pos[a] < s->lo[a] || pos[a] > s->hi[a]) return 0;
        return 1;
    case PYR_SHAPE_SPHERE: {
        double r2 = 0;
        for (int a = 0; a < p->dims; a++) r2 += (pos[a] - s->lo[a]) * (pos[a] - s->lo[a]);
        return r2 <= s->r * s->r;
    }
    default: {
        double r2 = 0;
        for (int a = 0; a < p->dims; a++) {
            if (a == s->axis) continue;
            r2 += (pos[a] - s->lo[a]) * (pos[a] - s->lo[a]);
        }
        if (s->axis < p->dims && (pos[s->axis] < s->lo[s->axis] || pos[s->axis] > s->hi[s->axis])) return 0;
        return r2 <= s->r * s->r;
    }
    }
}

/* The .npy at `path` (a grid of the whole problem's shape) over this
 * problem's nodes into f: all of it, or a part's box of it only. */
static pyr_status_t read_grid(const pyr_problem_t *p, const char *path, pyr_field_t *f)
{
    int part = 0;
    int64_t whole[3];
    for (int d = 0; d < 3; d++) {
        whole[d] = pyr_problem_whole(p, d);
        part |= whole[d] != p->n[d];
    }
    if (part) return pyr_npy_read_part(path, f->dims, whole, p->origin, f->n, f->precision, f->data);
    int64_t shape[3];
    for (int d = 0; d < f->dims; d++) shape[d] = f->n[f->dims - 1 - d];
    return pyr_npy_read_expect(path, f->dims, shape, f->precision, f->data);
}

/* Material `which` (0 eps_r, 1 sigma, 2 mu_r) at every node, read from its
 * file into *out (a field of the grid's precision; NULL when it comes from
 * the background and shapes) and checked: eps_r and mu_r > 0, sigma >= 0,
 * all finite, the first bad node named. */
static pyr_status_t material_field(const pyr_problem_t *p, int which, pyr_field_t **out)
{
    static const char *const names[3] = {"eps_r", "sigma", "mu_r"};
    const pyr_maxwell_params_t *m = &p->maxwell;
    const char *file = which == 0 ? m->eps_file : which == 1 ? m->sigma_file : m->mu_file;
    *out = NULL;
    if (!file[0]) return PYR_OK;
    pyr_field_t *f = NULL;
    PYR_TRY(pyr_field_alloc_grid(p, &f));
    pyr_status_t st = read_grid(p, file, f);
    if (st != PYR_OK) {
        pyr_field_destroy(&f);
        return pyr_fail_context(st, "material.%s: ", which == 0 ? "eps_file" : which == 1 ? "sigma_file" : "mu_file");
    }
    const int64_t nx = f->n[0], ny = f->n[1], count = pyr_field_count(f);
    for (int64_t k = 0; k < count; k++) {
        const double v = load(f, k);
        if (!isfinite(v) || (which != 1 && !(v > 0)) || v < 0) {
            pyr_field_destroy(&f);
            return pyr_fail(PYR_ERR_FORMAT, "material %s from %s: %g at node (x=%lld, y=%lld, z=%lld); %s", names[which], file, v,
                            (long long)(k % nx + p->origin[0]), (long long)(k / nx % ny + p->origin[1]), (long long)(k / (nx * ny) + p->origin[2]),
                            which == 1 ? "the conductivity must be finite and >= 0" : "every value must be finite and > 0");
        }
    }
    *out = f;
    return PYR_OK;
}

/* Material `which` at node (x, y, z) flat index k: its file's value, or the
 * background (or the map's label there) with the shapes over it (the later ones win). */
static double material_at(const pyr_problem_t *p, int which, const pyr_field_t *file, int64_t x, int64_t y, int64_t z, int64_t k)
{
    if (file) return load(file, k);
    const pyr_maxwell_params_t *m = &p->maxwell;
    double v = which == 0 ? m->eps_r : which == 1 ? m->sigma : m->mu_r;
    if (m->map_file[0]) {
        const int64_t g[3] = {x, y, z};
        const int l = pyr_maxwell_map_label(p, g);
        if (l > 0) v = which == 0 ? m->labels[l - 1].eps_r : which == 1 ? m->labels[l - 1].sigma : m->labels[l - 1].mu_r;
    }
    for (int s = 0; s < m->nshapes; s++)
        if (inside(p, &m->shapes[s], x, y, z)) v = which == 0 ? m->shapes[s].eps_r : which == 1 ? m->shapes[s].sigma : m->shapes[s].mu_r;
    return v;
}

int pyr_maxwell_shape_at(const pyr_problem_t *p, const int64_t g[3])
{
    for (int s = p->maxwell.nshapes - 1; s >= 0; s--)
        if (inside(p, &p->maxwell.shapes[s], g[0], g[1], g[2])) return s;
    return -1;
}

double pyr_maxwell_shapes_material(const pyr_problem_t *p, int which, const int64_t g[3])
{
    return material_at(p, which, NULL, g[0], g[1], g[2], 0);
}

/* The nodes x in [0, nx) of the row (y, z) (global: x + x0) inside shape s,
 * as [*a, *b); empty when *a == *b.  Along a row the test is a monotone
 * function of the rounded position on each side of the shape's centre (a
 * box's or an axial cylinder's interval, a distance from a centre), so the
 * nodes inside are one run: it is found by inside() itself near the centre
 * and at its ends by bisection, giving exactly the nodes the per-node test
 * gives. */
static void row_run(const pyr_problem_t *p, const pyr_shape_t *s, int64_t x0, int64_t nx, int64_t y, int64_t z, int64_t *a, int64_t *b)
{
    *a = *b = 0;
    const double h = pyr_problem_h(p, 0);
    const int along = s->kind == PYR_SHAPE_BOX || (s->kind != PYR_SHAPE_SPHERE && s->axis == 0);
    const double centre = (along ? 0.5 * (s->lo[0] + s->hi[0]) : s->lo[0]) / h - (double)x0;
    int64_t in = -1;
    if (!(centre == centre)) return;
    const int64_t c = centre < -2 ? -2 : centre > (double)nx + 1 ? nx + 1 : (int64_t)floor(centre);
    for (int64_t x = c - 1; x <= c + 2 && in < 0; x++) {
        const int64_t xc = x < 0 ? 0 : x >= nx ? nx - 1 : x;
        if (inside(p, s, xc + x0, y, z)) in = xc;
    }
    if (in < 0) return;
    int64_t lo = -1, hi = in; /* inside(hi); lo outside or before the row */
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (inside(p, s, mid + x0, y, z)) hi = mid;
        else lo = mid;
    }
    *a = hi;
    lo = in, hi = nx; /* inside(lo); hi outside or past the row */
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (inside(p, s, mid + x0, y, z)) lo = mid;
        else hi = mid;
    }
    *b = hi;
}

/* The per-node coefficients (inputs of the scheme): ca and cb of E from
 * eps_r and sigma, dh = dt / mu_r of H, each computed in double from the
 * node's materials and rounded once to the grid's precision. */
static pyr_status_t maxwell_init_input(const pyr_problem_t *p, int i, pyr_field_t *f)
{
    PYR_TRY(check_shape(p, f));
    double dt = 0, s = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    for (int d = 0; d < p->dims; d++) s += 1.0 / (pyr_problem_h(p, d) * pyr_problem_h(p, d));
    /* the materials this coefficient needs, and eps_r with mu_r for the stability limit */
    const int need_e = i != PYR_MAXWELL_DH, stability = i != PYR_MAXWELL_CA, dispersive = pyr_maxwell_dispersive(p);
    pyr_field_t *file[3] = {NULL, NULL, NULL};
    pyr_status_t st = PYR_OK;
    for (int w = 0; w < 3 && st == PYR_OK; w++)
        if ((w < 2 && need_e) || (w != 1 && stability)) st = material_field(p, w, &file[w]);
    const int64_t nx = f->n[0], ny = f->n[1], nz = f->n[2];
    double fastest = INFINITY; /* the smallest eps_r mu_r */
    if (st == PYR_OK && !file[0] && !file[1] && !file[2] && !dispersive && !p->maxwell.map_file[0]) {
        /* Background and shapes only: each node takes the coefficient of the last shape over it (or the
         * background's), computed once per material from the same values as per node, so the same bits.
         * Per row, each shape's run of nodes from row_run paints an owner per node. */
        const pyr_maxwell_params_t *m = &p->maxwell;
        const int ns = m->nshapes;
        double coef[PYR_MAXWELL_MAX_SHAPES + 1], speed[PYR_MAXWELL_MAX_SHAPES + 1];
        for (int o = 0; o <= ns; o++) {
            const pyr_shape_t *sh = o ? &m->shapes[o - 1] : NULL;
            const double eps = sh ? sh->eps_r : m->eps_r, sigma = sh ? sh->sigma : m->sigma, mu = sh ? sh->mu_r : m->mu_r;
            speed[o] = eps * mu;
            if (i == PYR_MAXWELL_DH) {
                coef[o] = dt / mu;
            } else {
                double ca, cb;
                e_coefficients(eps, sigma, dt, &ca, &cb);
                coef[o] = i == PYR_MAXWELL_CA ? ca : cb;
            }
        }
        int alloc_failed = 0;
#pragma omp parallel reduction(min : fastest) reduction(| : alloc_failed)
        {
            unsigned char *owner = ns ? malloc((size_t)nx) : NULL;
            alloc_failed = ns && !owner;
#pragma omp for collapse(2) schedule(static)
            for (int64_t z = 0; z < nz; z++)
                for (int64_t y = 0; y < ny; y++) {
                    if (alloc_failed) continue;
                    const int64_t k0 = (z * ny + y) * nx, gy = y + p->origin[1], gz = z + p->origin[2];
                    if (owner) {
                        memset(owner, 0, (size_t)nx);
                        for (int o = 1; o <= ns; o++) {
                            int64_t a, b;
                            row_run(p, &m->shapes[o - 1], p->origin[0], nx, gy, gz, &a, &b);
                            if (b > a) memset(owner + a, o, (size_t)(b - a));
                        }
                    }
                    int64_t x = 0;
                    while (x < nx) {
                        const int o = owner ? owner[x] : 0;
                        int64_t e = x + 1;
                        while (e < nx && (owner ? owner[e] : 0) == o) e++;
                        if (speed[o] < fastest) fastest = speed[o];
                        if (f->precision == PYR_DOUBLE) {
                            double *d = (double *)f->data + k0;
                            for (int64_t q = x; q < e; q++) d[q] = coef[o];
                        } else {
                            float *d = (float *)f->data + k0;
                            const float v = (float)coef[o];
                            for (int64_t q = x; q < e; q++) d[q] = v;
                        }
                        x = e;
                    }
                }
            free(owner);
        }
        if (alloc_failed) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    } else if (st == PYR_OK) {
#pragma omp parallel for collapse(2) schedule(static) reduction(min : fastest)
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                const int64_t k = (z * ny + y) * nx + x, gx = x + p->origin[0], gy = y + p->origin[1], gz = z + p->origin[2];
                const double eps = material_at(p, 0, file[0], gx, gy, gz, k), mu = material_at(p, 2, file[2], gx, gy, gz, k);
                if (eps * mu < fastest) fastest = eps * mu;
                double v;
                if (i == PYR_MAXWELL_DH) {
                    v = dt / mu;
                } else {
                    double ca, cb;
                    double sigma = material_at(p, 1, file[1], gx, gy, gz, k);
                    /* Debye terms' share of the conductivity (semi-implicit in E: maxwell_dispersive.c) */
                    if (dispersive) {
                        const int64_t g[3] = {gx, gy, gz};
                        sigma += pyr_maxwell_disp_sigma(p, pyr_maxwell_disp_material(p, g));
                    }
                    e_coefficients(eps, sigma, dt, &ca, &cb);
                    v = i == PYR_MAXWELL_CA ? ca : cb;
                }
                store(f, k, v);
            }
    }
    for (int w = 0; w < 3; w++) pyr_field_destroy(&file[w]);
    PYR_TRY(st);
    if (stability) {
        /* a medium faster than the background's (from a file) tightens the limit */
        const double limit = sqrt(fastest) / sqrt(s);
        if (!(dt <= limit))
            return pyr_fail(PYR_ERR_UNSTABLE, "unstable time step: the materials have eps_r mu_r = %g at some node, so dt must be <= %.6g "
                                              "(dt = %g); use a smaller scheme.courant (<= %.4g)",
                            fastest, limit, dt, limit * sqrt(s) * 0.99999);
    }
    return PYR_OK;
}

/* Initial fields: zero, seeded random values in [-1, 1), or PREFIX_Ex.npy ... */
/* Zero component c where it is never updated: tangential E on the PEC
 * faces and the unused last half-cell (so PEC holds from step 0). */
static void zero_outside(const pyr_problem_t *p, int c, pyr_field_t *f)
{
    int64_t lo[3], hi[3];
    for (int a = 0; a < 3; a++) pyr_maxwell_update_range(p, c, a, &lo[a], &hi[a]);
    const int64_t *o = p->origin;
    for (int64_t z = 0; z < f->n[2]; z++)
        for (int64_t y = 0; y < f->n[1]; y++)
            for (int64_t x = 0; x < f->n[0]; x++)
                if (x + o[0] < lo[0] || x + o[0] >= hi[0] || y + o[1] < lo[1] || y + o[1] >= hi[1] || z + o[2] < lo[2] || z + o[2] >= hi[2])
                    store(f, (z * f->n[1] + y) * f->n[0] + x, 0.0);
}

static pyr_status_t maxwell_init_state(const pyr_problem_t *p, int i, pyr_field_t *f)
{
    PYR_TRY(check_shape(p, f));
    const int64_t count = pyr_field_count(f);
    if (i >= PYR_MAXWELL_PSI0 || p->init == PYR_INIT_ZERO) {
        memset(f->data, 0, (size_t)count * pyr_precision_size(f->precision));
        return PYR_OK;
    }
    if (p->init == PYR_INIT_FILE) {
        char path[PYR_PATH_MAX + 8];
        snprintf(path, sizeof path, "%s_%s.npy", p->init_file, component_names[i]);
        pyr_status_t st = read_grid(p, path, f);
        if (st != PYR_OK) return pyr_fail_context(st, "initial.file: ");
        for (int64_t k = 0; k < count; k++)
            if (!isfinite(load(f, k)))
                return pyr_fail(PYR_ERR_FORMAT, "initial.file %s: a non-finite value at flat index %lld; every value must be finite", path,
                                (long long)k);
        zero_outside(p, i, f);
        return PYR_OK;
    }
    /* random: a fixed function of (seed, component, index on the whole grid), in [-1, 1) */
    const int64_t nx = f->n[0], ny = f->n[1], wx = pyr_problem_whole(p, 0), wy = pyr_problem_whole(p, 1);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < count; k++) {
        const int64_t g = ((k / (nx * ny) + p->origin[2]) * wy + (k / nx % ny + p->origin[1])) * wx + (k % nx + p->origin[0]);
        uint64_t x = (p->seed * 0x100000001B3ull + (uint64_t)i * 0x9E3779B97F4A7C15ull) ^ (uint64_t)g;
        x += 0x9E3779B97F4A7C15ull;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        x ^= x >> 31;
        store(f, k, (double)(x >> 11) * 0x1.0p-52 - 1.0);
    }
    zero_outside(p, i, f);
    return PYR_OK;
}

double pyr_maxwell_waveform(const pyr_source_t *s, double t)
{
    const double tau = t - s->delay;
    switch (s->waveform) {
    case PYR_WAVE_GAUSSIAN: return s->amplitude * exp(-(tau / s->width) * (tau / s->width));
    case PYR_WAVE_RICKER: {
        const double q = M_PI * s->frequency * tau;
        return s->amplitude * (1 - 2 * q * q) * exp(-q * q);
    }
    default: {
        double ramp = 1;
        if (s->width > 0 && t < s->width) ramp = 0.5 * (1 - cos(M_PI * t / s->width));
        return s->amplitude * ramp * sin(2 * M_PI * s->frequency * t);
    }
    }
}

const pyr_scheme_t pyr_scheme_maxwell = {
    .equation = PYR_EQ_MAXWELL,
    .name = "maxwell",
    .nfields = PYR_MAXWELL_FIELDS,
    .field = {{"Ex", PYR_FIELD_INPLACE},      {"Ey", PYR_FIELD_INPLACE},      {"Ez", PYR_FIELD_INPLACE},
              {"Hx", PYR_FIELD_INPLACE},      {"Hy", PYR_FIELD_INPLACE},      {"Hz", PYR_FIELD_INPLACE},
              {"ca", PYR_FIELD_INPUT},        {"cb", PYR_FIELD_INPUT},        {"dh", PYR_FIELD_INPUT},
              {"psi_Exy", PYR_FIELD_AUX},     {"psi_Exz", PYR_FIELD_AUX},     {"psi_Eyx", PYR_FIELD_AUX},
              {"psi_Eyz", PYR_FIELD_AUX},     {"psi_Ezx", PYR_FIELD_AUX},     {"psi_Ezy", PYR_FIELD_AUX},
              {"psi_Hxy", PYR_FIELD_AUX},     {"psi_Hxz", PYR_FIELD_AUX},     {"psi_Hyx", PYR_FIELD_AUX},
              {"psi_Hyz", PYR_FIELD_AUX},     {"psi_Hzx", PYR_FIELD_AUX},     {"psi_Hzy", PYR_FIELD_AUX}},
    .nsub = 2,
    /* H: reads E one node ahead, updates up to the last node; E: reads H one node behind, never the last node */
    /* (each component's own range: pyr_maxwell_update_range; the transverse H skips the last node of an axis,
     * the transverse E the first: edge_*) */
    .sub = {{.reach_lo = {0, 0, 0}, .reach_hi = {1, 1, 1}, .margin_lo = {0, 0, 0}, .margin_hi = {0, 0, 0}, .edge_hi = {1, 1, 1}},
            {.reach_lo = {1, 1, 1}, .reach_hi = {0, 0, 0}, .margin_lo = {0, 0, 0}, .margin_hi = {1, 1, 1}, .edge_lo = {1, 1, 1}}},
    .reduction = PYR_REDUCE_NONE,
    .margin = maxwell_margin,
    .validate = maxwell_validate,
    .fields_used = maxwell_fields,
    .coefficients = maxwell_coefficients,
    .init_input = maxwell_init_input,
    .check_every = maxwell_check_every,
    .tolerance = maxwell_tolerance,
    .key = maxwell_key,
    .support = maxwell_support,
    .aux_coefficients = maxwell_aux,
    .init_state = maxwell_init_state,
    .points = pyr_maxwell_points,
    .amplitudes = pyr_maxwell_amplitudes,
    .record = pyr_maxwell_record,
    .points_free = pyr_maxwell_points_free,
    .windowed = 1,
};
