/* Dispersive materials of the Maxwell scheme: Drude, Lorentz and Debye terms
 * by auxiliary differential equations, E kept as the state (no D field).
 *
 * Per term a polarisation current J = dP/dt (and, where the term needs it,
 * the polarisation P) per E component, at E's nodes, advanced at the E
 * sub-step from E^n, before E (J at n + 1/2, P at n + 1):
 *     Lorentz  P'' + G P' + W0^2 P = deps W0^2 E   (MEEP's centred form):
 *              (J+ - J-)/dt + G (J+ + J-)/2 + W0^2 P^n = deps W0^2 E^n
 *              J+ = cj J- + cp P^n + ce E^n,  cj = (1 - G dt/2)/(1 + G dt/2),
 *              cp = -W0^2 dt/(1 + G dt/2),  ce = deps W0^2 dt/(1 + G dt/2)
 *     Drude    P'' + G P' = Wp^2 E: the same with W0 = 0, deps W0^2 -> Wp^2 (no P needed)
 *     P+ = P + dt J+, and eps_inf (E+ - E)/dt + sigma (E+ + E)/2 = curl H - sum J+, i.e.
 *     E+ = (ca E + cb curl H) - cb sum J+ (ca, cb of eps_inf and sigma as without terms).
 *     Debye    tau P' + P = deps E by the trapezoidal rule, semi-implicit in E (an explicit form
 *              driven by E^n alone, centred at n, grows when coupled to the fields):
 *              P+ (1 + a) = (1 - a) P + a deps (E+ + E), a = dt / (2 tau), so that
 *              (P+ - P)/dt = -kp P + s (E+ + E)/2, kp = 1/(tau + dt/2), s = deps/(tau + dt/2):
 *              s joins sigma in ca and cb (pyr_maxwell_disp_sigma), J = -kp P^n is the term's
 *              current, and P+ = c1 P + c2 E^n before E's update, P+ += c2 E+ after it,
 *              c1 = (tau - dt/2)/(tau + dt/2), c2 = deps dt/(2 tau + dt).
 * W = 2 pi f for the frequencies given (the monitors' units), G = 2 pi gamma.
 *
 * Stability: eliminating H and the terms for a plane wave of the grid whose
 * curl curl has the eigenvalue K^2 (0 .. 4 sum 1/h^2) gives, with z the
 * growth per step and kappa = K^2 dt^2 / mu_r,
 *     [eps (z-1)^2 + sigma dt/2 (z^2-1) + kappa z] prod_q D_q(z) + sum_q n_q(z) prod_{r != q} D_r(z) = 0,
 *     D_q = (z-1)(z-cj) - cp dt z, n_q = ce dt z (z-1)^2   (Drude: D_q = z - cj, n_q = ce dt z (z-1);
 *     Debye: D_q = (1 + a) z - (1 - a), n_q = a deps (z+1)(z-1)^2),
 * and the scheme is stable when every root has |z| <= 1 for every kappa.
 * validate checks this for each dispersive material (roots by Durand-Kerner)
 * and names the largest stable dt (bisection) when it fails.  Without terms
 * it is the Courant limit; a lone Lorentz term needs W0 dt < 2.
 *
 * Where the terms' states live: in CPML auxiliary slots (field roles AUX) the
 * problem leaves unused (the components a 2D mode lacks, the axes without a
 * layer), so the scheme keeps its field count; the material of each node is
 * a run-length map along x of the problem's grid in the coefficient table
 * (maxwell.h), so no per-node input is moved. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "schemes/maxwell.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static const char *const kind_names[4] = {"?", "drude", "lorentz", "debye"};

int pyr_maxwell_dispersive(const pyr_problem_t *p)
{
    if (p->equation != PYR_EQ_MAXWELL) return 0;
    const pyr_maxwell_params_t *m = &p->maxwell;
    if (m->npoles > 0) return 1;
    for (int i = 0; i < m->nshapes; i++)
        if (m->shapes[i].npoles > 0) return 1;
    for (int i = 0; i < m->nlabels && m->map_file[0]; i++)
        if (m->labels[i].npoles > 0) return 1;
    return 0;
}

/* The materials the table numbers: 1 the background, 2 + k shape k, then the map's labels 1 .. nlabels. */
static int materials(const pyr_problem_t *p) { return 2 + p->maxwell.nshapes + (p->maxwell.map_file[0] ? p->maxwell.nlabels : 0); }

/* Material m's description (NULL: the background's, in p->maxwell). */
static const pyr_shape_t *material_shape(const pyr_problem_t *p, int m)
{
    const pyr_maxwell_params_t *x = &p->maxwell;
    if (m >= 2 && m - 2 < x->nshapes) return &x->shapes[m - 2];
    if (m >= 2 + x->nshapes && m < materials(p)) return &x->labels[m - 2 - x->nshapes];
    return NULL;
}

/* Material m's terms (m = 1 the background, 2 + k shape k, 2 + nshapes + l - 1 map label l). */
static const pyr_pole_t *material_poles(const pyr_problem_t *p, int m, int *n)
{
    const pyr_maxwell_params_t *x = &p->maxwell;
    if (m == 1) {
        *n = x->npoles;
        return x->poles;
    }
    const pyr_shape_t *s = material_shape(p, m);
    *n = s ? s->npoles : 0;
    return s ? s->poles : NULL;
}

int pyr_maxwell_disp_material(const pyr_problem_t *p, const int64_t g[3])
{
    const int k = pyr_maxwell_shape_at(p, g);
    const int l = k >= 0 ? 0 : pyr_maxwell_map_label(p, g);
    const int m = k >= 0 ? 2 + k : l > 0 ? 2 + p->maxwell.nshapes + l - 1 : 1;
    int n = 0;
    material_poles(p, m, &n);
    return n > 0 ? m : 0;
}

/* Terms per material and whether slot q needs a P field (a Lorentz or Debye term there). */
static int slots(const pyr_problem_t *p, int need_p[PYR_MAXWELL_MAX_POLES])
{
    int ns = 0;
    for (int q = 0; q < PYR_MAXWELL_MAX_POLES; q++) need_p[q] = 0;
    for (int m = 1; m < materials(p); m++) {
        int n = 0;
        const pyr_pole_t *pl = material_poles(p, m, &n);
        if (n > ns) ns = n;
        for (int q = 0; q < n; q++)
            if (pl[q].kind != PYR_POLE_DRUDE) need_p[q] = 1;
    }
    return ns;
}

unsigned pyr_maxwell_psi_used(const pyr_problem_t *p)
{
    unsigned used = 0;
    if (p->maxwell.cpml_cells > 0 && p->maxwell.cpml_faces)
        for (int c = 0; c < 6; c++) {
            if (!pyr_maxwell_component_used(p, c)) continue;
            for (int a = 0; a < p->dims; a++) {
                if (a == c % 3) continue;
                if ((p->maxwell.cpml_faces >> (2 * a)) & 3) used |= 1u << pyr_maxwell_psi_field(c, a);
            }
        }
    return used;
}

/* The nodes of axis a (whole grid) whose positions i h lie in [lo, hi], widened by a node. */
static void node_span(const pyr_problem_t *p, int a, double lo, double hi, int64_t *i0, int64_t *i1)
{
    const double h = pyr_problem_h(p, a);
    const double a0 = floor(lo / h) - 1, a1 = ceil(hi / h) + 2;
    const double n = (double)pyr_problem_whole(p, a);
    *i0 = a0 < 0 ? 0 : a0 > n ? (int64_t)n : (int64_t)a0;
    *i1 = a1 < 0 ? 0 : a1 > n ? (int64_t)n : (int64_t)a1;
}

/* The whole-grid nodes [lo, hi) that hold every dispersive node: the union of the dispersive
 * shapes' bounding boxes, widened by a node; 0 when the background is dispersive (everywhere). */
static int disp_bbox(const pyr_problem_t *p, int64_t lo[3], int64_t hi[3])
{
    if (p->maxwell.npoles > 0) return 0;
    for (int a = 0; a < 3; a++) lo[a] = INT64_MAX, hi[a] = INT64_MIN;
    for (int k = 0; k < p->maxwell.nshapes; k++) {
        const pyr_shape_t *s = &p->maxwell.shapes[k];
        if (s->npoles == 0) continue;
        for (int a = 0; a < 3; a++) {
            int64_t i0 = 0, i1 = 1;
            if (a < p->dims) {
                double l = s->lo[a], h = s->hi[a];
                if (s->kind == PYR_SHAPE_SPHERE || (s->kind == PYR_SHAPE_CYLINDER && a != s->axis)) l = s->lo[a] - s->r, h = s->lo[a] + s->r;
                node_span(p, a, l, h, &i0, &i1);
            }
            if (i0 < lo[a]) lo[a] = i0;
            if (i1 > hi[a]) hi[a] = i1;
        }
    }
    /* the map's dispersive labels: the nodes holding them, widened by a node */
    unsigned mask = 0;
    for (int l = 0; l < p->maxwell.nlabels && p->maxwell.map_file[0]; l++)
        if (p->maxwell.labels[l].npoles > 0) mask |= 1u << (l + 1);
    int64_t ml[3], mh[3];
    if (mask && pyr_maxwell_map_bbox(p, mask, ml, mh))
        for (int a = 0; a < 3; a++) {
            const int64_t i0 = ml[a] - 1 < 0 ? 0 : ml[a] - 1, i1 = mh[a] + 1 > pyr_problem_whole(p, a) ? pyr_problem_whole(p, a) : mh[a] + 1;
            if (i0 < lo[a]) lo[a] = i0;
            if (i1 > hi[a]) hi[a] = i1;
        }
    return 1;
}

/* Whether psi field i, used by a layer, can hold a dispersive state too: the layer's nodes
 * (those its psi moves over) and the dispersive nodes are apart along the layer's axis. */
static int shareable(const pyr_problem_t *p, int i)
{
    const int k = i - PYR_MAXWELL_PSI0, c = k / 2, which = k % 2;
    int axis = -1, seen = 0;
    for (int a = 0; a < 3; a++) {
        if (a == c % 3) continue;
        if (seen++ == which) axis = a;
    }
    int64_t lo[3], hi[3];
    if (axis < 0 || axis >= p->dims || !disp_bbox(p, lo, hi)) return 0;
    const int64_t L = p->maxwell.cpml_cells, n = pyr_problem_whole(p, axis);
    /* the layers' nodes, as maxwell.c's support: below L + 1 on the low side, from n - 2 - L on the high side */
    if ((p->maxwell.cpml_faces >> (2 * axis)) & 1 && lo[axis] < L + 1) return 0;
    if ((p->maxwell.cpml_faces >> (2 * axis + 1)) & 1 && hi[axis] > n - 2 - L) return 0;
    return 1;
}

/* The fields of the terms' states: f[(q * 3 + c) * 2 + w] (-1 none); returns how
 * many are needed, *free how many slots the problem offers (more needed: the
 * caller refuses), *shared the bits of those assigned that a layer's psi also
 * uses (apart in space). */
static int layout(const pyr_problem_t *p, int f[24], int *nfree, unsigned *shared)
{
    for (int i = 0; i < 24; i++) f[i] = -1;
    *shared = 0;
    int need_p[PYR_MAXWELL_MAX_POLES];
    const int ns = slots(p, need_p);
    /* the slots: first those no layer uses (of components the grid's mode lacks, then of axes without a
     * layer), then those of layers that keep clear of the dispersive shapes */
    int cand[12], nc = 0;
    unsigned share = 0;
    const unsigned used = pyr_maxwell_psi_used(p);
    for (int pass = 0; pass < 3; pass++)
        for (int i = PYR_MAXWELL_PSI0; i < PYR_MAXWELL_PSI0 + 12; i++) {
            const int comp = (i - PYR_MAXWELL_PSI0) / 2;
            if (pass == 2) {
                if ((used & (1u << i)) && shareable(p, i)) cand[nc++] = i, share |= 1u << i;
                continue;
            }
            if (used & (1u << i)) continue;
            if ((pass == 0) == !pyr_maxwell_component_used(p, comp)) cand[nc++] = i;
        }
    *nfree = nc;
    int k = 0;
    for (int q = 0; q < ns; q++)
        for (int c = 0; c < 3; c++) {
            if (!pyr_maxwell_component_used(p, c)) continue;
            for (int w = 0; w < 1 + need_p[q]; w++) {
                if (k < nc) {
                    f[(q * 3 + c) * 2 + w] = cand[k];
                    *shared |= share & (1u << cand[k]);
                }
                k++;
            }
        }
    return k;
}

unsigned pyr_maxwell_disp_fields(const pyr_problem_t *p)
{
    if (!pyr_maxwell_dispersive(p)) return 0;
    int f[24], nfree = 0;
    unsigned shared = 0;
    if (layout(p, f, &nfree, &shared) > nfree) return 0;
    unsigned bits = 0;
    for (int i = 0; i < 24; i++)
        if (f[i] >= 0) bits |= 1u << f[i];
    return bits;
}

int pyr_maxwell_disp_support(const pyr_problem_t *p, int f, pyr_box_t *box)
{
    int fl[24], nfree = 0;
    unsigned shared = 0;
    if (!pyr_maxwell_dispersive(p) || layout(p, fl, &nfree, &shared) > nfree) return 0;
    int mine = 0;
    for (int i = 0; i < 24; i++) mine |= fl[i] == f;
    if (!mine) return 0;
    int64_t lo[3], hi[3];
    /* a slot shared with a layer's psi holds both: everywhere */
    if (((shared >> f) & 1) || !disp_bbox(p, lo, hi)) return -1;
    for (int a = 0; a < 3; a++) {
        box->lo[a] = lo[a] - p->origin[a] > 0 ? lo[a] - p->origin[a] : 0;
        box->hi[a] = hi[a] - p->origin[a] < p->n[a] ? hi[a] - p->origin[a] : p->n[a];
        if (box->hi[a] <= box->lo[a]) box->lo[a] = box->hi[a] = 0;
    }
    return 1;
}

/* ------------------------------------------------------------ coefficients */

/* A term's kernel form and its numbers (maxwell.h): out[0] = 1 (J-form: lorentz, drude) or 2
 * (debye), then cj, cp, ce (debye: c1, -kp, c2). */
static void pole_coefficients(const pyr_pole_t *q, double dt, double out[4])
{
    const double tw = 2 * M_PI;
    if (q->kind == PYR_POLE_DEBYE) {
        const double tau = q->p[1];
        out[0] = 2;
        out[1] = (tau - dt / 2) / (tau + dt / 2);
        out[2] = -1 / (tau + dt / 2);
        out[3] = q->p[0] * dt / (2 * tau + dt);
        return;
    }
    out[0] = 1;
    out++;
    const double g = tw * (q->kind == PYR_POLE_DRUDE ? q->p[1] : q->p[2]);
    const double d = 1 + g * dt / 2;
    out[0] = (1 - g * dt / 2) / d;
    if (q->kind == PYR_POLE_DRUDE) {
        const double wp = tw * q->p[0];
        out[1] = 0;
        out[2] = wp * wp * dt / d;
    } else {
        const double w0 = tw * q->p[1];
        out[1] = -w0 * w0 * dt / d;
        out[2] = q->p[0] * w0 * w0 * dt / d;
    }
}

double pyr_maxwell_disp_sigma(const pyr_problem_t *p, int m)
{
    int n = 0;
    const pyr_pole_t *pl = m > 0 ? material_poles(p, m, &n) : NULL;
    double s = 0, dt = 0;
    if (n == 0 || pyr_maxwell_dt(p, &dt) != PYR_OK) return 0;
    for (int q = 0; q < n; q++)
        if (pl[q].kind == PYR_POLE_DEBYE) s += pl[q].p[0] / (pl[q].p[1] + dt / 2);
    return s;
}

/* ------------------------------------------------------------ stability */

/* c[0..n] (power i at c[i]) times b[0..m] into r (degree n + m). */
static int poly_mul(const double *a, int n, const double *b, int m, double *r)
{
    for (int i = 0; i <= n + m; i++) r[i] = 0;
    for (int i = 0; i <= n; i++)
        for (int j = 0; j <= m; j++) r[i + j] += a[i] * b[j];
    return n + m;
}

/* The largest |root| of c[0..n] (c[n] != 0), by Durand-Kerner (complex arithmetic written out:
 * validate runs this for every dispersive material at a few dozen wave numbers). */
static double largest_root(const double *c, int n)
{
    while (n > 0 && c[n] == 0) n--;
    if (n < 1) return 0;
    double zr[16], zi[16];
    /* starting points on a circle of the roots' scale, off the axes */
    double scale = 0;
    for (int i = 0; i < n; i++) scale = fmax(scale, pow(fabs(c[i] / c[n]), 1.0 / (n - i)));
    if (!(scale > 0) || !isfinite(scale)) scale = 1;
    for (int i = 0; i < n; i++) {
        const double a = 2 * M_PI * i / n + 0.4;
        zr[i] = scale * cos(a), zi[i] = scale * sin(a);
    }
    for (int it = 0; it < 600; it++) {
        double change = 0;
        for (int i = 0; i < n; i++) {
            /* v = p(z_i) / c[n] by Horner; d = prod_{j != i} (z_i - z_j) */
            double vr = 1, vi = 0;
            for (int k = n - 1; k >= 0; k--) {
                const double t = vr * zr[i] - vi * zi[i] + c[k] / c[n];
                vi = vr * zi[i] + vi * zr[i];
                vr = t;
            }
            double dr = 1, di = 0;
            for (int j = 0; j < n; j++) {
                if (j == i) continue;
                const double er = zr[i] - zr[j], ei = zi[i] - zi[j];
                const double t = dr * er - di * ei;
                di = dr * ei + di * er;
                dr = t;
            }
            const double m = dr * dr + di * di;
            if (!(m > 0)) {
                zr[i] += 1e-8 * scale, zi[i] += 1e-8 * scale;
                change = INFINITY;
                continue;
            }
            const double sr = (vr * dr + vi * di) / m, si = (vi * dr - vr * di) / m;
            zr[i] -= sr, zi[i] -= si;
            change = fmax(change, fabs(sr) + fabs(si));
        }
        if (change < 1e-14 * scale) break;
    }
    double r = 0;
    for (int i = 0; i < n; i++) r = fmax(r, sqrt(zr[i] * zr[i] + zi[i] * zi[i]));
    return r;
}

/* Whether material (eps, sigma, mu, poles) is stable at dt on a grid of sum 1/h^2 = s. */
static int stable_at(double eps, double sigma, double mu, const pyr_pole_t *pl, int np, double s, double dt)
{
    double D[PYR_MAXWELL_MAX_POLES][3], N[PYR_MAXWELL_MAX_POLES][4];
    int dd[PYR_MAXWELL_MAX_POLES], dn[PYR_MAXWELL_MAX_POLES];
    for (int q = 0; q < np; q++) {
        double kk[4], *k = kk + 1;
        pole_coefficients(&pl[q], dt, kk);
        if (pl[q].kind == PYR_POLE_DEBYE) {
            const double a = dt / (2 * pl[q].p[1]), g = a * pl[q].p[0];
            D[q][0] = -(1 - a), D[q][1] = 1 + a, dd[q] = 1;
            N[q][0] = g, N[q][1] = -g, N[q][2] = -g, N[q][3] = g, dn[q] = 3; /* g (z + 1)(z - 1)^2 */
        } else if (pl[q].kind == PYR_POLE_DRUDE) {
            D[q][0] = -k[0], D[q][1] = 1, dd[q] = 1;
            N[q][0] = 0, N[q][1] = -k[2] * dt, N[q][2] = k[2] * dt, dn[q] = 2;
        } else {
            D[q][0] = k[0], D[q][1] = -(1 + k[0] + k[1] * dt), D[q][2] = 1, dd[q] = 2;
            N[q][0] = 0, N[q][1] = k[2] * dt, N[q][2] = -2 * k[2] * dt, N[q][3] = k[2] * dt, dn[q] = 3;
        }
    }
    const int samples = 32;
    for (int j = 1; j <= samples; j++) {
        const double kappa = 4 * s * dt * dt / mu * (double)j / samples;
        double A[3] = {eps - sigma * dt / 2, -2 * eps + kappa, eps + sigma * dt / 2};
        double total[16] = {0}, t1[16], t2[16];
        /* A prod D */
        int n = 2;
        memcpy(t1, A, sizeof A);
        for (int q = 0; q < np; q++) {
            n = poly_mul(t1, n, D[q], dd[q], t2);
            memcpy(t1, t2, sizeof(double) * (size_t)(n + 1));
        }
        for (int i = 0; i <= n; i++) total[i] += t1[i];
        int deg = n;
        for (int q = 0; q < np; q++) {
            int m = dn[q];
            memcpy(t1, N[q], sizeof(double) * (size_t)(m + 1));
            for (int r = 0; r < np; r++) {
                if (r == q) continue;
                m = poly_mul(t1, m, D[r], dd[r], t2);
                memcpy(t1, t2, sizeof(double) * (size_t)(m + 1));
            }
            for (int i = 0; i <= m; i++) total[i] += t1[i];
            if (m > deg) deg = m;
        }
        /* z = 1 exactly: a lossless Drude term's free current, constant without a field, one per such
         * term (not a growth): divided out, as a root finder resolves a multiple root poorly */
        double scale = 0;
        for (int i = 0; i <= deg; i++) scale = fmax(scale, fabs(total[i]));
        for (;;) {
            double at1 = 0;
            for (int i = 0; i <= deg; i++) at1 += total[i];
            if (deg < 1 || fabs(at1) > 1e-13 * scale) break;
            double q[16], carry = 0;
            for (int i = deg; i >= 1; i--) {
                carry = total[i] + carry;
                q[i - 1] = carry;
            }
            memcpy(total, q, sizeof(double) * (size_t)deg);
            deg--;
        }
        if (!(largest_root(total, deg) <= 1 + 1e-6)) return 0;
    }
    return 1;
}

static pyr_status_t check_poles(const char *what, const pyr_pole_t *pl, int n)
{
    for (int q = 0; q < n; q++) {
        const pyr_pole_t *t = &pl[q];
        for (int i = 0; i < (t->kind == PYR_POLE_LORENTZ ? 3 : 2); i++)
            if (!isfinite(t->p[i])) return pyr_fail(PYR_ERR_CONFIG, "%s: %s term %d: a parameter is not finite", what, kind_names[t->kind], q + 1);
        switch (t->kind) {
        case PYR_POLE_DRUDE:
            if (!(t->p[0] > 0) || !(t->p[1] >= 0))
                return pyr_fail(PYR_ERR_CONFIG, "%s: drude term %d: plasma frequency %g, damping %g; use a plasma frequency > 0 and a damping >= 0",
                                what, q + 1, t->p[0], t->p[1]);
            break;
        case PYR_POLE_LORENTZ:
            if (!(t->p[0] > 0) || !(t->p[1] > 0) || !(t->p[2] >= 0))
                return pyr_fail(PYR_ERR_CONFIG,
                                "%s: lorentz term %d: strength %g, resonance frequency %g, damping %g; use a strength > 0, a resonance "
                                "frequency > 0 and a damping >= 0",
                                what, q + 1, t->p[0], t->p[1], t->p[2]);
            break;
        case PYR_POLE_DEBYE:
            if (!(t->p[0] > 0) || !(t->p[1] > 0))
                return pyr_fail(PYR_ERR_CONFIG, "%s: debye term %d: strength %g, relaxation time %g; use a strength > 0 and a relaxation time > 0",
                                what, q + 1, t->p[0], t->p[1]);
            break;
        default: return pyr_fail(PYR_ERR_CONFIG, "%s: term %d is of no known kind; use drude, lorentz or debye", what, q + 1);
        }
    }
    return PYR_OK;
}

/* A plane wave's box faces (and the node outside them) lie in the background, which the
 * incident wave is of (maxwell_planewave.c checks eps_r, sigma and mu_r): a dispersive
 * shape there would radiate too. */
static pyr_status_t planewave_faces(const pyr_problem_t *p)
{
    for (int i = 0; i < p->maxwell.nplanewaves; i++) {
        int64_t g[3];
        if (pyr_maxwell_planewave_face_find(p, i, pyr_maxwell_disp_material, g))
            return pyr_fail(PYR_ERR_CONFIG,
                            "planewave%d: node (%lld, %lld, %lld) of the box's faces (or the node outside them) lies in "
                            "a dispersive material; the incident wave is the background's, so make the box enclose "
                            "the shapes with a node of background around them",
                            i + 1, (long long)g[0], (long long)g[1], (long long)g[2]);
    }
    return PYR_OK;
}

pyr_status_t pyr_maxwell_disp_check(const pyr_problem_t *p)
{
    const pyr_maxwell_params_t *m = &p->maxwell;
    if (m->npoles < 0 || m->npoles > PYR_MAXWELL_MAX_POLES)
        return pyr_fail(PYR_ERR_CONFIG, "material: %d dispersive terms; give at most %d", m->npoles, PYR_MAXWELL_MAX_POLES);
    PYR_TRY(check_poles("material (background)", m->poles, m->npoles));
    for (int i = 0; i < m->nshapes; i++) {
        char what[48];
        snprintf(what, sizeof what, "material shape %d", i + 1);
        if (m->shapes[i].npoles < 0 || m->shapes[i].npoles > PYR_MAXWELL_MAX_POLES)
            return pyr_fail(PYR_ERR_CONFIG, "%s: %d dispersive terms; give at most %d", what, m->shapes[i].npoles, PYR_MAXWELL_MAX_POLES);
        PYR_TRY(check_poles(what, m->shapes[i].poles, m->shapes[i].npoles));
    }
    for (int i = 0; i < m->nlabels && m->map_file[0]; i++) {
        char what[48];
        snprintf(what, sizeof what, "material.label%d", i + 1);
        if (m->labels[i].npoles < 0 || m->labels[i].npoles > PYR_MAXWELL_MAX_POLES)
            return pyr_fail(PYR_ERR_CONFIG, "%s: %d dispersive terms; give at most %d", what, m->labels[i].npoles, PYR_MAXWELL_MAX_POLES);
        PYR_TRY(check_poles(what, m->labels[i].poles, m->labels[i].npoles));
    }
    if (!pyr_maxwell_dispersive(p)) return PYR_OK;
    if (m->eps_file[0] || m->sigma_file[0] || m->mu_file[0])
        return pyr_fail(PYR_ERR_CONFIG, "material: dispersive terms (drude, lorentz, debye) come with the background, the shapes and the "
                                        "labels of a material map, not with per-node files (eps_file, sigma_file, mu_file); give the "
                                        "materials as a label map (material.map with label1 .. labelN) or shapes, or leave the terms out");
    if (m->npoles > 0 && m->nplanewaves > 0)
        return pyr_fail(PYR_ERR_CONFIG, "source.planewave1: a plane wave runs through the background medium, which here is dispersive; give "
                                        "the dispersive terms to shapes and keep the background plain");
    PYR_TRY(planewave_faces(p));
    int f[24], nfree = 0;
    unsigned shared = 0;
    const int need = layout(p, f, &nfree, &shared);
    if (need > nfree)
        return pyr_fail(PYR_ERR_CONFIG,
                        "the dispersive terms need %d auxiliary fields here (per term one per E component, two for lorentz and debye), "
                        "and this grid offers %d (the CPML auxiliaries of axes without a layer%s, and those of layers that the "
                        "dispersive shapes keep clear of); use fewer terms, keep the dispersive shapes a node off the CPML layers "
                        "(the background without terms), or keep the CPML off an axis (boundary.faces)",
                        need, nfree, p->dims == 2 ? ", of the components the 2D mode lacks" : "");
    double dt = 0, s = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    for (int d = 0; d < p->dims; d++) s += 1.0 / (pyr_problem_h(p, d) * pyr_problem_h(p, d));
    for (int mat = 1; mat < materials(p); mat++) {
        int n = 0;
        const pyr_pole_t *pl = material_poles(p, mat, &n);
        if (n == 0) continue;
        const pyr_shape_t *sh = material_shape(p, mat);
        const double eps = sh ? sh->eps_r : m->eps_r, sigma = sh ? sh->sigma : m->sigma, mu = sh ? sh->mu_r : m->mu_r;
        if (stable_at(eps, sigma, mu, pl, n, s, dt)) continue;
        double lo = 0, hi = dt;
        for (int it = 0; it < 60; it++) {
            const double mid = 0.5 * (lo + hi);
            if (stable_at(eps, sigma, mu, pl, n, s, mid)) lo = mid;
            else hi = mid;
        }
        char what[80];
        if (mat == 1) snprintf(what, sizeof what, "the background");
        else if (mat - 2 < m->nshapes) snprintf(what, sizeof what, "shape %d", mat - 1);
        else snprintf(what, sizeof what, "map label %d (material.label%d)", mat - 1 - m->nshapes, mat - 1 - m->nshapes);
        return pyr_fail(PYR_ERR_UNSTABLE,
                        "unstable time step: the dispersive material of %s (eps_r = %g with %d term%s) grows at dt = %g; the largest "
                        "stable dt is about %.6g: use scheme.dt <= %.6g or scheme.courant <= %.4g",
                        what, eps, n, n == 1 ? "" : "s", dt, lo, lo * 0.999, lo * 0.999 * sqrt(s));
    }
    return PYR_OK;
}

pyr_status_t pyr_maxwell_disp_table_append(const pyr_problem_t *p, double **aux, int64_t *naux)
{
    if (!pyr_maxwell_dispersive(p)) return PYR_OK;
    int f[24], nfree = 0;
    unsigned shared = 0;
    if (layout(p, f, &nfree, &shared) > nfree) return pyr_fail(PYR_ERR_INTERNAL, "dispersive terms without their fields (validate refuses them)");
    int need_p[PYR_MAXWELL_MAX_POLES];
    const int ns = slots(p, need_p), nmat = materials(p);
    double dt = 0;
    PYR_TRY(pyr_maxwell_dt(p, &dt));
    const int64_t n0 = p->n[0], n1 = p->n[1], n2 = p->n[2], rows = n1 * n2;
    const int64_t starts = PYR_MAXWELL_DISP_COEF + (int64_t)nmat * ns * 4, runs = starts + rows + 1;
    /* the runs: counted, then written */
    int64_t nruns = 0;
    double *D = NULL;
    for (int pass = 0; pass < 2; pass++) {
        int64_t j = 0;
        for (int64_t z = 0; z < n2; z++)
            for (int64_t y = 0; y < n1; y++) {
                if (pass) D[starts + z * n1 + y] = (double)j;
                int prev = 0;
                for (int64_t x = 0; x < n0; x++) {
                    const int64_t g[3] = {x + p->origin[0], y + p->origin[1], z + p->origin[2]};
                    const int mat = pyr_maxwell_disp_material(p, g);
                    if (mat != prev && mat) {
                        if (pass) D[runs + 3 * j] = (double)x, D[runs + 3 * j + 2] = mat;
                        j++;
                    }
                    if (pass && mat) D[runs + 3 * (j - 1) + 1] = (double)(x + 1);
                    prev = mat;
                }
            }
        if (pass) {
            D[starts + rows] = (double)j;
            break;
        }
        nruns = j;
        const int64_t len = runs + 3 * nruns + 1;
        double *grown = realloc(*aux, (size_t)(*naux + len) * sizeof **aux);
        if (!grown) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for the dispersive materials' table");
        *aux = grown;
        D = grown + *naux;
        *naux += len;
        memset(D, 0, (size_t)len * sizeof *D);
        D[len - 1] = (double)len;
        D[0] = ns, D[1] = nmat, D[2] = dt, D[3] = (double)rows, D[4] = (double)n1, D[5] = (double)starts, D[6] = (double)runs;
        D[7] = (double)shared;
        for (int i = 0; i < 24; i++) D[PYR_MAXWELL_DISP_FIELDS + i] = f[i];
        for (int m = 1; m < nmat; m++) {
            int np = 0;
            const pyr_pole_t *pl = material_poles(p, m, &np);
            for (int q = 0; q < ns && q < np; q++) pole_coefficients(&pl[q], dt, D + PYR_MAXWELL_DISP_COEF + ((int64_t)m * ns + q) * 4);
        }
    }
    return PYR_OK;
}
