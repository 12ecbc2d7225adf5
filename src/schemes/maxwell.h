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

/* With dispersive materials (c[7] = 1) their table follows the CPML profiles
 * in aux, its length L (itself included) in aux's last element: the profiles'
 * length, to pass to pyr_maxwell_profile, is then naux - L.  (The length
 * travels with aux, as a part of a larger grid keeps its own aux.) */
static inline int64_t pyr_maxwell_disp_length(const pyr_coef_t *k)
{
    return k->c[7] > 0 && k->aux && k->naux > 0 ? (int64_t)k->aux[k->naux - 1] : 0;
}
static inline int64_t pyr_maxwell_cpml_naux(const pyr_coef_t *k) { return k->naux - pyr_maxwell_disp_length(k); }
static inline const double *pyr_maxwell_disp_table(const pyr_coef_t *k)
{
    return pyr_maxwell_disp_length(k) > 0 ? k->aux + (k->naux - pyr_maxwell_disp_length(k)) : 0;
}

/* Layout of the dispersive table D (maxwell_dispersive.c; all numbers exact in a double; its last element L):
 *   D[0] poles per material (slots), D[1] materials (0: none), D[2] dt, D[3] rows (n[1] n[2]),
 *   D[4] n[1], D[5] the offset of the rows' starts, D[6] the offset of the runs, D[7] the bits of
 *   the fields below that a layer's psi uses too (at other nodes: the layer's, apart from the runs')
 *   D[8 + (q * 3 + c) * 2 + w]  the field of slot q's J (w = 0) or P (w = 1) for E component c, -1: none
 *   D[32 + (m * slots + q) * 4 + k]  material m's slot q: its form (0 none, 1 J, 2 Debye), then cj, cp, ce
 *   D[D[5] + r] .. D[D[5] + r + 1]  row r = z n[1] + y's runs (of the problem's grid), each
 *   D[D[6] + 3 j ..]  x0, x1, m: the nodes x0 <= x < x1 of the row are of material m >= 1.
 * Per E node of material m, before E's update, for each slot q in order:
 *   form 1:  J = (cj * J + cp * P) + ce * E      (without a P field: J = cj * J + ce * E)
 *            P = P + dt * J
 *   form 2:  J = cp * P;  P = cj * P + ce * E
 *   form 0:  nothing (J stays 0)
 * and after E's update (before the sources): E = E - cb * ((J_0 + J_1) + ...), then for each
 * slot q of form 2: P = P + ce * E. */
enum { PYR_MAXWELL_DISP_FIELDS = 8, PYR_MAXWELL_DISP_COEF = 32 };
static inline int pyr_maxwell_disp_field(const double *D, int q, int c, int w) { return (int)D[PYR_MAXWELL_DISP_FIELDS + (q * 3 + c) * 2 + w]; }
static inline const double *pyr_maxwell_disp_coef(const double *D, int m, int q)
{
    return D + PYR_MAXWELL_DISP_COEF + ((int64_t)m * (int64_t)D[0] + q) * 4;
}
/* Whether field f holds a dispersive state and no layer's psi (a slot no layer uses). */
static inline int pyr_maxwell_disp_owns(const double *D, int f)
{
    if (!D || f < 0 || (((unsigned)D[7] >> f) & 1u)) return 0;
    for (int i = 0; i < 24; i++)
        if ((int)D[PYR_MAXWELL_DISP_FIELDS + i] == f) return 1;
    return 0;
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
 * with the state that gives their amplitudes (NULL without plane waves)
 * and their terms of out's series (out->terms, nseries); the amplitudes of
 * sources from .. nsources - 1 (those points appended), for consecutive
 * ranges of steps as the amplitudes hook is called, or, where series is not
 * NULL, the series' rows of those steps instead (amp left as it is). */
typedef struct pyr_maxwell_planewaves pyr_maxwell_planewaves_t;
pyr_status_t pyr_maxwell_planewaves_check(const pyr_problem_t *p);
/* The first node g of plane wave i's box faces (and the nodes just outside
 * them; faces on a wall the polarisation allows are none) for which bad(p, g)
 * holds: 1 and g, or 0. */
int pyr_maxwell_planewave_face_find(const pyr_problem_t *p, int i, int (*bad)(const pyr_problem_t *p, const int64_t g[3]), int64_t g[3]);
pyr_status_t pyr_maxwell_planewaves_points(const pyr_problem_t *p, pyr_scheme_points_t *out, pyr_maxwell_planewaves_t **state);
pyr_status_t pyr_maxwell_planewaves_amplitudes(const pyr_problem_t *p, pyr_maxwell_planewaves_t *st, const pyr_scheme_point_t *src, int from,
                                               int nsources, int64_t first, int64_t count, double *amp, double *series);
void pyr_maxwell_planewaves_free(pyr_maxwell_planewaves_t *st);
/* Material `which` (0 eps_r, 1 sigma, 2 mu_r) of whole-grid node g from the
 * background, the material map's labels and the shapes (not the value files). */
double pyr_maxwell_shapes_material(const pyr_problem_t *p, int which, const int64_t g[3]);

/* Dispersive materials (maxwell_dispersive.c): whether the problem has any;
 * their refusals (called by validate: the terms' parameters, the stability of
 * each material's scheme at dt, the fields they need); the fields they use
 * (bits); field f's support (-1 everywhere, or 1 box, when f is theirs; 0 when
 * not theirs); their table (appended to the CPML profiles of *aux, whose
 * length grows). */
int pyr_maxwell_dispersive(const pyr_problem_t *p);
pyr_status_t pyr_maxwell_disp_check(const pyr_problem_t *p);
unsigned pyr_maxwell_disp_fields(const pyr_problem_t *p);
int pyr_maxwell_disp_support(const pyr_problem_t *p, int f, pyr_box_t *box);
pyr_status_t pyr_maxwell_disp_table_append(const pyr_problem_t *p, double **aux, int64_t *naux);
/* The dispersive material (0 none, 1 the background, 2 + k shape k, 2 + nshapes + l - 1 map label l, as
 * numbered by the table)
 * at whole-grid node g. */
int pyr_maxwell_disp_material(const pyr_problem_t *p, const int64_t g[3]);
/* The conductivity that material m's Debye terms add to sigma in E's coefficients ca and cb. */
double pyr_maxwell_disp_sigma(const pyr_problem_t *p, int m);
/* The index of the last shape that holds whole-grid node g, or -1. */
int pyr_maxwell_shape_at(const pyr_problem_t *p, const int64_t g[3]);
/* The per-node label map (maxwell_map.c): its refusals (called by validate: with eps_file & co.,
 * labels without a map, the file's dtype and shape, labels it holds that are not defined); the
 * label of whole-grid node g (0 without a map; after validate); the whole-grid nodes [lo, hi)
 * holding the labels of mask (bit l: label l), 0 when none does. */
pyr_status_t pyr_maxwell_map_check(const pyr_problem_t *p);
int pyr_maxwell_map_label(const pyr_problem_t *p, const int64_t g[3]);
int pyr_maxwell_map_bbox(const pyr_problem_t *p, unsigned mask, int64_t lo[3], int64_t hi[3]);
/* The CPML psi fields the problem uses (bits), without the dispersive states. */
unsigned pyr_maxwell_psi_used(const pyr_problem_t *p);

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
