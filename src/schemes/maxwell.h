/* The Maxwell (Yee) scheme's layout and helpers shared by its table
 * (maxwell.c), its kernels and the CLI. */
#ifndef PYR_SCHEMES_MAXWELL_H
#define PYR_SCHEMES_MAXWELL_H

#include "pyrgrid.h"
#include "schemes/scheme.h"

/* Fields: the six components (pyr_component_t), the per-node coefficients
 * of the materials (E = ca E + cb curl H, H = H - dh curl E; each kept only
 * where it varies, else the constant pyr_coef_t.c[4], c[5], c[6]), then
 * twelve CPML auxiliaries psi (pyr_maxwell_psi_field). */
enum {
    PYR_MAXWELL_CA = 6,
    PYR_MAXWELL_CB = 7,
    PYR_MAXWELL_DH = 8,
    PYR_MAXWELL_PSI0 = 9,
    PYR_MAXWELL_FIELDS = 21
};

/* Layout of the CPML profile table (pyr_coef_t.aux): for axis a, positions
 * i (half = 0: E's derivatives) or i + 1/2 (half = 1: H's), k = 0 1/kappa,
 * 1 b, 2 a, 3 "inside the layer" (1.0 / 0.0), at aux[((a * 2 + half) * 4 +
 * k) * nmax + i], nmax = naux / 24. */
static inline const double *pyr_maxwell_profile(const double *aux, int64_t naux, int axis, int half, int k)
{
    const int64_t nmax = naux / 24;
    return aux + ((axis * 2 + half) * 4 + k) * nmax;
}

const char *pyr_maxwell_component_name(int c);
/* Whether component c is part of the problem's grid (2D: its mode's). */
int pyr_maxwell_component_used(const pyr_problem_t *p, int c);
/* The index range [lo, hi) along `axis` where component c is updated. */
void pyr_maxwell_update_range(const pyr_problem_t *p, int c, int axis, int64_t *lo, int64_t *hi);
/* The psi field of component c's derivative along `axis` (-1 for its own axis). */
int pyr_maxwell_psi_field(int c, int axis);
/* The time step (given, or from the Courant number). */
pyr_status_t pyr_maxwell_dt(const pyr_problem_t *p, double *dt);
/* A source's waveform at time t (amplitude included). */
double pyr_maxwell_waveform(const pyr_source_t *s, double t);

/* The scheme's point terms (maxwell_points.c; the hooks of schemes/scheme.h):
 * the sources' nodes and waveforms, the probes. */
pyr_status_t pyr_maxwell_points(const pyr_problem_t *p, pyr_scheme_points_t *out);
pyr_status_t pyr_maxwell_amplitudes(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, double *amp);
pyr_status_t pyr_maxwell_record(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, const double *values,
                                const unsigned char *owned, int last);
void pyr_maxwell_points_free(pyr_scheme_points_t *pts);

/* The plane waves (maxwell_planewave.c; pyr_planewave_t): their refusals
 * (called by validate); their face corrections appended to out's sources,
 * with the state that gives their amplitudes (NULL without plane waves);
 * the amplitudes of sources from .. nsources - 1 (those points appended),
 * for consecutive ranges of steps as the amplitudes hook is called. */
typedef struct pyr_maxwell_planewaves pyr_maxwell_planewaves_t;
pyr_status_t pyr_maxwell_planewaves_check(const pyr_problem_t *p);
pyr_status_t pyr_maxwell_planewaves_points(const pyr_problem_t *p, pyr_scheme_points_t *out, pyr_maxwell_planewaves_t **state);
pyr_status_t pyr_maxwell_planewaves_amplitudes(const pyr_problem_t *p, pyr_maxwell_planewaves_t *st, const pyr_scheme_point_t *src, int from,
                                               int nsources, int64_t first, int64_t count, double *amp);
void pyr_maxwell_planewaves_free(pyr_maxwell_planewaves_t *st);
/* Material `which` (0 eps_r, 1 sigma, 2 mu_r) of whole-grid node g from the
 * background and the shapes (not the files). */
double pyr_maxwell_shapes_material(const pyr_problem_t *p, int which, const int64_t g[3]);

/* The monitors (maxwell_monitors.c; pyr_monitor_t): monitor m of the whole
 * grid (dft1 .. dftN, then flux1 .. fluxM) as the nodes and components its
 * transforms are kept for, and its frequencies. */
typedef struct {
    char name[16];
    int flux, ncomp, comp[6], axis;
    int64_t lo[3], hi[3], nnodes;
    int nfreq;
    double *freq; /* owned: pyr_maxwell_monitor_clear */
} pyr_maxwell_monitor_t;

int pyr_maxwell_monitor_count(const pyr_problem_t *p);
pyr_status_t pyr_maxwell_monitor_layout(const pyr_problem_t *p, int m, pyr_maxwell_monitor_t *out);
void pyr_maxwell_monitor_clear(pyr_maxwell_monitor_t *mon);
/* The monitors' refusals (called by the scheme's validate): regions off the
 * grid or in the CPML, components not of the grid's mode, frequencies the run
 * cannot resolve. */
pyr_status_t pyr_maxwell_monitors_check(const pyr_problem_t *p);
/* The nodes of axis a outside the CPML layers: lo .. hi. */
void pyr_maxwell_free_range(const pyr_problem_t *p, int a, int64_t *lo, int64_t *hi);
/* The spectra of a valid Maxwell problem's monitors, zero (pyr_spectra_create
 * checks the arguments and validates the problem, then calls it). */
pyr_status_t pyr_maxwell_spectra_create(const pyr_problem_t *problem, pyr_spectra_t **spectra);
/* A run's sums of monitor m (layout as pyr_spectra_dft's, times nothing: the caller's dt
 * is applied here) into the spectra, for the nodes with own[k] != 0 (k = component *
 * nnodes + node). */
void pyr_maxwell_spectra_store(pyr_spectra_t *s, int m, const double *re, const double *im, const unsigned char *own, double dt, int64_t steps);

#endif
