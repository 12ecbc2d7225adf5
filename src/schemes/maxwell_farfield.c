/* The Maxwell scheme's near-to-far-field transform (pyr_spectra_farfield):
 * the far field of a closed surface of flux monitors by the surface
 * equivalence principle.  Each face's tangential E and H, averaged to its
 * cells' centres as the flux is, give the currents J = n x H and M = -n x E
 * (n the outward normal), whose radiation vectors N and L give the fields and
 * the power at each direction.  The sums run over the faces in the caller's
 * order and the cells in the grid's, so the far field is the same bits
 * whenever the spectra are. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "schemes/maxwell.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define WHAT "pyr_spectra_farfield"

/* One face of the surface: its cells' currents per frequency. */
typedef struct {
    int axis;       /* the normal */
    double sign;    /* the outward normal along +axis (1) or -axis (-1) */
    int64_t lo[3];  /* the first cell (its lower nodes), the plane's node along the normal */
    int64_t cnt[3]; /* cells along each axis (1 along the normal and unused axes) */
    double dA;
    double complex *j, *m; /* [(f * ncells + cell) * 3 + axis] */
} face_t;

static int half_along(int c, int x) { return c < 3 ? x == c : x != c - 3; }

/* Component c of a flux monitor (values v over its nodes lo .. hi) averaged to
 * the centre of the cell whose lower corner on the plane is node `at`, as the
 * flux monitor's own sums average it. */
static double complex cell_value(const pyr_monitor_info_t *info, int dims, int c, const double *re, const double *im, const int64_t at[3])
{
    const int64_t nx = info->hi[0] - info->lo[0] + 1, ny = info->hi[1] - info->lo[1] + 1;
    int64_t span[3][2];
    int cnt[3];
    for (int a = 0; a < 3; a++) {
        span[a][0] = span[a][1] = at[a] - info->lo[a];
        cnt[a] = 1;
        if (a >= dims) continue;
        if (a == info->axis) {
            if (half_along(c, a)) span[a][0] = span[a][1] - 1, cnt[a] = 2;
        } else if (!half_along(c, a)) {
            span[a][1] = span[a][0] + 1, cnt[a] = 2;
        }
    }
    double sr = 0, si = 0;
    for (int z = 0; z < cnt[2]; z++)
        for (int y = 0; y < cnt[1]; y++)
            for (int x = 0; x < cnt[0]; x++) {
                const int64_t k = (span[2][z] * ny + span[1][y]) * nx + span[0][x];
                sr += re[k];
                si += im[k];
            }
    const double w = 1.0 / (double)(cnt[0] * cnt[1] * cnt[2]);
    return sr * w + I * (si * w);
}

static void cross(const double complex a[3], const double complex b[3], double complex out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* The currents of face i (monitor m) at every cell and frequency. */
static pyr_status_t face_currents(const pyr_problem_t *p, const pyr_spectra_t *s, int m, const pyr_monitor_info_t *info, face_t *face)
{
    const int dims = p->dims, a = info->axis;
    face->axis = a;
    int64_t ncells = 1;
    face->dA = 1;
    for (int x = 0; x < 3; x++) {
        face->lo[x] = x == a ? info->hi[x] : info->lo[x];
        face->cnt[x] = x == a || x >= dims ? 1 : info->hi[x] - info->lo[x];
        if (x != a && x < dims) face->dA *= pyr_problem_h(p, x);
        ncells *= face->cnt[x];
    }
    const size_t values = (size_t)(info->ncomponents * info->nfreq * info->nnodes);
    double *re = malloc(values * sizeof *re), *im = malloc(values * sizeof *im);
    face->j = malloc((size_t)(info->nfreq * ncells * 3) * sizeof *face->j);
    face->m = malloc((size_t)(info->nfreq * ncells * 3) * sizeof *face->m);
    pyr_status_t st = re && im && face->j && face->m ? PYR_OK : pyr_fail(PYR_ERR_NOMEM, "out of host memory for %s's currents", info->name);
    if (st == PYR_OK) st = pyr_spectra_dft(s, m, re, im);
    for (int f = 0; f < info->nfreq && st == PYR_OK; f++) {
        int64_t at[3], cell = 0;
        for (at[2] = face->lo[2]; at[2] < face->lo[2] + face->cnt[2]; at[2]++)
            for (at[1] = face->lo[1]; at[1] < face->lo[1] + face->cnt[1]; at[1]++)
                for (at[0] = face->lo[0]; at[0] < face->lo[0] + face->cnt[0]; at[0]++, cell++) {
                    /* E and H at the cell's centre (components the monitor lacks are not of the grid's mode: zero) */
                    double complex e[3] = {0, 0, 0}, h[3] = {0, 0, 0}, n[3] = {0, 0, 0};
                    for (int ci = 0; ci < info->ncomponents; ci++) {
                        const int c = info->components[ci];
                        const int64_t off = ((int64_t)ci * info->nfreq + f) * info->nnodes;
                        const double complex v = cell_value(info, dims, c, re + off, im + off, at);
                        if (c < 3) e[c] = v;
                        else h[c - 3] = v;
                    }
                    n[a] = face->sign;
                    double complex *j = face->j + (f * ncells + cell) * 3, *mm = face->m + (f * ncells + cell) * 3;
                    cross(n, h, j);
                    cross(n, e, mm);
                    for (int x = 0; x < 3; x++) mm[x] = -mm[x];
                }
    }
    free(re);
    free(im);
    return st;
}

/* The faces given must be the 2 * dims faces of one box: a pair of planes per
 * axis, each spanning exactly the box along the other axes. */
static pyr_status_t check_surface(const pyr_problem_t *p, const pyr_spectra_t *s, int nsurface, const int *surface, pyr_monitor_info_t *info,
                                  double *sign)
{
    const int dims = p->dims, count = pyr_spectra_count(s);
    if (p->maxwell.periodic)
        return pyr_fail(PYR_ERR_ARG, WHAT ": the problem has periodic axes, so its fields are those of an infinite array, which no closed "
                                     "surface encloses; the transform takes a lone scatterer's: run it without boundary.periodic");
    if (nsurface != 2 * dims || !surface)
        return pyr_fail(PYR_ERR_ARG, WHAT ": %d monitors for the surface; a closed surface of a %dD grid is %d flux monitors, the faces of a box "
                                     "(a pair of planes per axis)",
                        nsurface, dims, 2 * dims);
    int64_t plane[3][2];
    int seen[3] = {0, 0, 0}, first[3][2];
    for (int i = 0; i < nsurface; i++) {
        const int m = surface[i];
        if (m < 0 || m >= count) return pyr_fail(PYR_ERR_ARG, WHAT ": surface monitor %d; the spectra hold %d (0 .. %d)", m, count, count - 1);
        for (int k = 0; k < i; k++)
            if (surface[k] == m) return pyr_fail(PYR_ERR_ARG, WHAT ": monitor %d is given twice; give each face of the box once", m);
        PYR_TRY(pyr_spectra_info(s, m, &info[i]));
        if (!info[i].flux || info[i].axis < 0 || info[i].axis >= dims)
            return pyr_fail(PYR_ERR_ARG, WHAT ": %s is not a flux monitor; the surface's faces are flux monitors (monitor.fluxN = plane ...)",
                            info[i].name);
        const int a = info[i].axis;
        if (seen[a] == 2)
            return pyr_fail(PYR_ERR_ARG, WHAT ": three faces normal to %c (%s, %s, %s); a box has two per axis", "xyz"[a],
                            info[first[a][0]].name, info[first[a][1]].name, info[i].name);
        first[a][seen[a]] = i;
        plane[a][seen[a]++] = info[i].hi[a];
    }
    for (int a = 0; a < dims; a++) {
        if (seen[a] != 2) return pyr_fail(PYR_ERR_ARG, WHAT ": %d faces normal to %c; a box has two per axis", seen[a], "xyz"[a]);
        if (plane[a][0] == plane[a][1])
            return pyr_fail(PYR_ERR_ARG, WHAT ": %s and %s are both at node %lld of %c; the box's faces are two different planes", info[first[a][0]].name,
                            info[first[a][1]].name, (long long)plane[a][0], "xyz"[a]);
        if (plane[a][0] > plane[a][1]) {
            const int64_t t = plane[a][0];
            plane[a][0] = plane[a][1];
            plane[a][1] = t;
        }
    }
    for (int i = 0; i < nsurface; i++) {
        const int a = info[i].axis;
        sign[i] = info[i].hi[a] == plane[a][0] ? -1.0 : 1.0;
        for (int b = 0; b < dims; b++) {
            if (b == a) continue;
            if (info[i].lo[b] != plane[b][0] || info[i].hi[b] != plane[b][1])
                return pyr_fail(PYR_ERR_ARG, WHAT ": %s spans nodes %lld .. %lld along %c, but the faces normal to %c lie at nodes %lld and %lld; "
                                             "give each face the limits of the box (plane %c %lld ... with %lld %lld along %c) so that the surface is closed",
                                info[i].name, (long long)info[i].lo[b], (long long)info[i].hi[b], "xyz"[b], "xyz"[b], (long long)plane[b][0],
                                (long long)plane[b][1], "xyz"[a], (long long)info[i].hi[a], (long long)plane[b][0], (long long)plane[b][1], "xyz"[b]);
        }
        if (info[i].nfreq != info[0].nfreq)
            return pyr_fail(PYR_ERR_ARG, WHAT ": %s has %d frequencies, %s %d; give every face the same freqs=", info[i].name, info[i].nfreq,
                            info[0].name, info[0].nfreq);
        if (info[i].steps <= 0)
            return pyr_fail(PYR_ERR_ARG, WHAT ": %s holds no run's transforms yet; attach the spectra (pyr_spectra_attach) and run first", info[i].name);
    }
    return PYR_OK;
}

pyr_status_t pyr_spectra_farfield(const pyr_problem_t *problem, const pyr_spectra_t *spectra, int nsurface, const int *surface, int ndir,
                                  const double *theta, const double *phi, double r, double *power, double *re, double *im)
{
    if (!problem || !spectra) return pyr_fail(PYR_ERR_ARG, WHAT ": problem and spectra are required");
    if (problem->equation != PYR_EQ_MAXWELL || (problem->dims != 2 && problem->dims != 3))
        return pyr_fail(PYR_ERR_ARG, WHAT ": the far field is the Maxwell scheme's, of a 2D or 3D grid");
    const int dims = problem->dims;
    if (ndir < 1 || !phi || (dims == 3 && !theta))
        return pyr_fail(PYR_ERR_ARG, WHAT ": %d directions; give at least one, as %s", ndir,
                        dims == 3 ? "theta (from +z) and phi (from +x towards +y) in radians" : "phi (from +x towards +y) in radians");
    if (dims == 2 && theta)
        return pyr_fail(PYR_ERR_ARG, WHAT ": theta given for a 2D grid; its far field lies in the grid's plane: pass theta = NULL and phi only");
    for (int d = 0; d < ndir; d++)
        if (!isfinite(phi[d]) || (theta && !isfinite(theta[d])))
            return pyr_fail(PYR_ERR_ARG, WHAT ": direction %d is not finite; give angles in radians", d);
    if ((re || im) && !(r > 0 && isfinite(r)))
        return pyr_fail(PYR_ERR_ARG, WHAT ": the fields' distance r = %g; give a finite r > 0 (or re = im = NULL for the power only)", r);
    if (!power && !re && !im) return pyr_fail(PYR_ERR_ARG, WHAT ": nothing to compute; give power, or re and im, or both");
    const pyr_maxwell_params_t *x = &problem->maxwell;
    if (!(x->eps_r > 0) || !(x->mu_r > 0) || x->sigma != 0)
        return pyr_fail(PYR_ERR_ARG, WHAT ": the background is eps_r = %g, mu_r = %g, sigma = %g; the far field is that of a lossless background "
                                     "(sigma = 0, eps_r and mu_r > 0) around the surface",
                        x->eps_r, x->mu_r, x->sigma);
    /* the spectra must be this problem's: its monitors laid out the same */
    PYR_TRY(pyr_maxwell_monitors_check(problem));
    int same = pyr_spectra_count(spectra) == pyr_maxwell_monitor_count(problem);
    for (int m = 0; m < pyr_spectra_count(spectra) && same; m++) {
        pyr_maxwell_monitor_t mon;
        pyr_monitor_info_t info;
        PYR_TRY(pyr_spectra_info(spectra, m, &info));
        PYR_TRY(pyr_maxwell_monitor_layout(problem, m, &mon));
        same = !strcmp(mon.name, info.name) && mon.nfreq == info.nfreq && !memcmp(mon.lo, info.lo, sizeof mon.lo) &&
               !memcmp(mon.hi, info.hi, sizeof mon.hi) && mon.ncomp == info.ncomponents;
        pyr_maxwell_monitor_clear(&mon);
    }
    if (!same) return pyr_fail(PYR_ERR_ARG, WHAT ": the spectra were made for another problem's monitors; pass the problem they were made for");

    pyr_monitor_info_t info[6];
    double sign[6];
    PYR_TRY(check_surface(problem, spectra, nsurface, surface, info, sign));
    const int nfreq = info[0].nfreq;
    double *freq = malloc((size_t)nfreq * sizeof *freq), *other = malloc((size_t)nfreq * sizeof *other);
    face_t face[6];
    memset(face, 0, sizeof face);
    pyr_status_t st = freq && other ? PYR_OK : pyr_fail(PYR_ERR_NOMEM, "out of host memory for the far field");
    if (st == PYR_OK) st = pyr_spectra_freqs(spectra, surface[0], freq);
    for (int i = 1; i < nsurface && st == PYR_OK; i++) {
        st = pyr_spectra_freqs(spectra, surface[i], other);
        if (st == PYR_OK && memcmp(freq, other, (size_t)nfreq * sizeof *freq))
            st = pyr_fail(PYR_ERR_ARG, WHAT ": %s's frequencies differ from %s's; give every face the same freqs=", info[i].name, info[0].name);
    }
    for (int i = 0; i < nsurface && st == PYR_OK; i++) {
        face[i].sign = sign[i];
        st = face_currents(problem, spectra, surface[i], &info[i], &face[i]);
    }
    double h[3] = {1, 1, 1};
    for (int a = 0; a < dims; a++) h[a] = pyr_problem_h(problem, a);
    const double index = sqrt(x->eps_r * x->mu_r), eta = sqrt(x->mu_r / x->eps_r);
    for (int f = 0; f < nfreq && st == PYR_OK; f++) {
        const double k = 2.0 * M_PI * freq[f] * index;
        for (int d = 0; d < ndir; d++) {
            const double th = dims == 3 ? theta[d] : M_PI / 2, ph = phi[d];
            const double rhat[3] = {sin(th) * cos(ph), sin(th) * sin(ph), cos(th)};
            const double that[3] = {cos(th) * cos(ph), cos(th) * sin(ph), -sin(th)}, phat[3] = {-sin(ph), cos(ph), 0};
            /* the radiation vectors N = sum J exp(i k rhat . r') dA, L = sum M exp(...) dA */
            double complex N[3] = {0, 0, 0}, L[3] = {0, 0, 0};
            for (int i = 0; i < nsurface; i++) {
                const face_t *F = &face[i];
                const int64_t ncells = F->cnt[0] * F->cnt[1] * F->cnt[2];
                int64_t at[3], cell = 0;
                for (at[2] = 0; at[2] < F->cnt[2]; at[2]++)
                    for (at[1] = 0; at[1] < F->cnt[1]; at[1]++)
                        for (at[0] = 0; at[0] < F->cnt[0]; at[0]++, cell++) {
                            double dot = 0;
                            for (int a = 0; a < dims; a++) {
                                const double pos = a == F->axis ? (double)F->lo[a] * h[a] : ((double)(F->lo[a] + at[a]) + 0.5) * h[a];
                                dot += rhat[a] * pos;
                            }
                            const double complex w = cexp(I * k * dot) * F->dA;
                            const double complex *j = F->j + (f * ncells + cell) * 3, *m = F->m + (f * ncells + cell) * 3;
                            for (int a = 0; a < 3; a++) {
                                N[a] += j[a] * w;
                                L[a] += m[a] * w;
                            }
                        }
            }
            double complex Nt = 0, Np = 0, Lt = 0, Lp = 0;
            for (int a = 0; a < 3; a++) {
                Nt += N[a] * that[a];
                Np += N[a] * phat[a];
                Lt += L[a] * that[a];
                Lp += L[a] * phat[a];
            }
            double complex E[3] = {0, 0, 0}, H[3] = {0, 0, 0};
            double u;
            const size_t o = (size_t)f * (size_t)ndir + (size_t)d;
            if (dims == 3) {
                /* exp(i omega t) phasors (the transforms' exp(-i omega t)): outgoing exp(-i k r) / (4 pi r) */
                const double complex g = I * k * cexp(-I * k * r) / (4.0 * M_PI * r);
                const double complex et = -g * (Lp + eta * Nt), ep = g * (Lt - eta * Np);
                const double complex ht = g * (Np - Lt / eta), hp = -g * (Nt + Lp / eta);
                for (int a = 0; a < 3; a++) {
                    E[a] = et * that[a] + ep * phat[a];
                    H[a] = ht * that[a] + hp * phat[a];
                }
                u = k * k / (16.0 * M_PI * M_PI * eta) * (creal((Lp + eta * Nt) * conj(Lp + eta * Nt)) + creal((Lt - eta * Np) * conj(Lt - eta * Np)));
            } else {
                /* the 2D Green's function's far form: H0(2)(k rho) / (4 i) ~ C exp(-i k rho) */
                const double complex c = sqrt(2.0 / (M_PI * k * r)) * cexp(-I * (k * r - M_PI / 4)) / (4.0 * I);
                const double complex a = eta * N[2] - Lp, b = L[2] + eta * Np;
                const double complex ez = -I * k * c * a, hz = -I * k * c * b / eta;
                E[2] = ez; /* TM: Ez, H = -(Ez / eta) phi-hat; TE: Hz, E = eta Hz phi-hat */
                H[2] = hz;
                for (int q = 0; q < 2; q++) {
                    H[q] = -ez / eta * phat[q];
                    E[q] = eta * hz * phat[q];
                }
                u = k / (8.0 * M_PI * eta) * (creal(a * conj(a)) + creal(b * conj(b)));
            }
            if (power) power[o] = u;
            for (int a = 0; a < 6; a++) {
                const double complex v = a < 3 ? E[a] : H[a - 3];
                if (re) re[o * 6 + (size_t)a] = creal(v);
                if (im) im[o * 6 + (size_t)a] = cimag(v);
            }
        }
    }
    for (int i = 0; i < 6; i++) {
        free(face[i].j);
        free(face[i].m);
    }
    free(freq);
    free(other);
    return st;
}
