/* Schemes as data.  One table per difference scheme (FFTW's problem_adt is the
 * model): the fields it updates and reads, its sub-steps and how far each
 * reaches, the reductions it needs, its validation and coefficients.  The
 * planner, the executor, the model and the backends read these tables and
 * nothing else about an equation; kernels are registered per scheme and
 * backend (backend/kernels.h).
 *
 * Geometry from reach: a sub-step computes node p from the nodes at most
 * reach_lo[a] below and reach_hi[a] above p along axis a.  To finish a
 * result region after the sub-steps g = 0 .. G-1 of a pass, sub-step g must
 * compute the result region grown by the reach of every later sub-step,
 * and the piece must hold the result grown by the reach of all of them (the
 * pyramid).  Heat and Poisson reach one node each way; the Yee scheme's two
 * half-steps reach one way each (H reads E ahead, E reads H behind). */
#ifndef PYR_SCHEMES_SCHEME_H
#define PYR_SCHEMES_SCHEME_H

#include <stddef.h>
#include <stdint.h>

#include "core/box.h"
#include "pyrgrid.h"

#define PYR_MAX_FIELDS 24
#define PYR_MAX_SUBSTEPS 4

typedef enum {
    PYR_FIELD_PINGPONG = 0, /* state: each sub-step reads one layer and writes the other (two buffers while computing) */
    PYR_FIELD_INPLACE,      /* state updated in place (one buffer) */
    PYR_FIELD_INPUT,        /* read-only input, read only at the node being updated: uploaded, never downloaded */
    PYR_FIELD_AUX           /* state updated in place that the library keeps itself (zero at the start; Maxwell's
                               CPML auxiliaries): moved only over its support, never given to the caller */
} pyr_field_role_t;

typedef struct {
    const char *name;
    pyr_field_role_t role;
} pyr_scheme_field_t;

typedef struct {
    int reach_lo[3], reach_hi[3];   /* nodes read below / above a computed node, per axis (axes < dims) */
    int margin_lo[3], margin_hi[3]; /* nodes at the low / high end of an axis the sub-step never updates */
    int edge_lo[3], edge_hi[3];     /* nodes at an end that some field of the sub-step does not update, when more than
                                       the margin (a part's frozen edge: multi/) */
} pyr_substep_t;

typedef enum {
    PYR_REDUCE_NONE = 0,
    PYR_REDUCE_MAX_CHANGE /* max |new - old| of the ping-pong state over the last sub-step: exact, so the
                             combination in task order gives the same bits whatever the decomposition */
} pyr_reduction_t;

/* Coefficients a kernel needs, in double; a kernel rounds each to its
 * precision once.  Meaning per scheme (heat: c[0..2] = r_x, r_y, r_z;
 * poisson: c[0..2] = 1/h_d^2, c[3] = 1 / sum_d 2/h_d^2, c[4] = omega,
 * c[5] = 1 when f is present). */
typedef struct {
    pyr_equation_t equation;
    int dims;
    pyr_precision_t precision;
    double c[8];
    const double *aux; /* more coefficients, scheme-specific (Maxwell: the CPML profiles), owned by the plan */
    int64_t naux;
    /* Axes along which the grid wraps around (bit a): the node past the last
     * is the first, so a sub-step at one end reads the other.  The planner
     * never cuts such an axis (a piece spans it whole and wraps within
     * itself); a kernel wraps where this says. */
    unsigned periodic;
} pyr_coef_t;

/* A node of one of the scheme's fields: a point source or a probe, in the
 * coordinates of the problem's grid (a part's window: its own).  The
 * kernels' pyr_kernel_point_t (backend/kernels.h) has this layout. */
typedef struct {
    int field;
    int64_t node[3];
} pyr_scheme_point_t;

/* A source whose amplitude in each step is a weighted sum of a few values
 * of that step's row of a series (the points' `series`): nw = 1: coef *
 * x[k]; nw = 4: coef * (w[0] x[k] + w[1] x[k + 1] + w[2] x[k + 2] + w[3]
 * x[k + 3]), summed in that order (pyr_scheme_term_value: a kernel that
 * computes it elsewhere keeps this expression, so the bits are the same).
 * k < 0: not such a source (its amplitude is in amp). */
typedef struct {
    int64_t k;
    int nw;
    double coef;
    double w[4];
} pyr_scheme_term_t;

static inline double pyr_scheme_term_value(const pyr_scheme_term_t *t, const double *x)
{
    if (t->nw == 1) return t->coef * x[t->k];
    const double *v = x + t->k;
    return t->coef * (t->w[0] * v[0] + t->w[1] * v[1] + t->w[2] * v[2] + t->w[3] * v[3]);
}

/* The point terms of one run of a problem (the scheme's points hook makes
 * them; the executor and the layer of several devices read nothing else):
 *
 *   sources  added to their field after the last sub-step of each step that
 *            updates it (the kernels' contract, backend/kernels.h), by the
 *            amount the amplitudes hook gives for that step.  Only those on
 *            the problem's grid (a part keeps the sources on its window).
 *   probes   nodes whose values after every step are recorded: the first
 *            nshown are the caller's series (pyr_hooks_t.probe, in this
 *            order), the rest the scheme's own, seen only by its record
 *            hook.  Every probe of the whole grid, in one order whatever the
 *            window (index i is the same probe on every part), each with its
 *            node in the window's coordinates, possibly outside it (it is
 *            then never recorded there).
 *   state    the scheme's, for the run: what amplitudes and record carry
 *            from one pass to the next. */
typedef struct {
    int nsources;
    pyr_scheme_point_t *sources;
    int nprobes, nshown;
    pyr_scheme_point_t *probes;
    void *state;
    /* (optional) Sources that are weighted sums of a series (many sources
     * from a few values per step: a plane wave's face corrections from its
     * 1D grid): terms[i] for source i (NULL: none), each step's row of
     * nseries values.  Where the caller sets `series` (room for the call's
     * steps), the amplitudes hook writes the rows there, series[s * nseries
     * + j], and leaves amp of the term sources unset: the kernels compute
     * them from the rows (pyr_kernel_call_t.terms). */
    int nseries;
    pyr_scheme_term_t *terms;
    double *series;
} pyr_scheme_points_t;

typedef struct pyr_scheme {
    pyr_equation_t equation;
    const char *name; /* problem files, wisdom keys, reports */
    int nfields;
    pyr_scheme_field_t field[PYR_MAX_FIELDS];
    int nsub; /* sub-steps per step */
    pyr_substep_t sub[PYR_MAX_SUBSTEPS];
    pyr_reduction_t reduction;
    /* (optional, NULL = never) Whether this problem's sub-steps also read the
     * ping-pong fields' layer before their input, at the updated node only
     * (Chebyshev's sweeps read u two sweeps back, where they write): the
     * kernel finds it in the output buffer.  Pieces streamed through a
     * device then carry both layers, and the host keeps the older one. */
    int (*reads_previous)(const pyr_problem_t *p);
    /* (optional, NULL = the table's margins) The margin of sub-step k at
     * one end of an axis for this problem, where boundary conditions decide
     * it (a face whose nodes the sweeps update: 0).  A part's cut edges keep
     * the table's margins: only the whole grid's faces change. */
    int (*margin)(const pyr_problem_t *p, int k, int axis, int high);

    /* The scheme's parameters (the grid is checked already); the message
     * names the value, the limit and what would work. */
    pyr_status_t (*validate)(const pyr_problem_t *p);
    /* Fields this problem uses, bit i for field i (Poisson with f = 0 moves no f). */
    unsigned (*fields_used)(const pyr_problem_t *p);
    void (*coefficients)(const pyr_problem_t *p, pyr_coef_t *c);
    /* Fill input field i from the problem. */
    pyr_status_t (*init_input)(const pyr_problem_t *p, int i, pyr_field_t *out);
    /* (optional; needed to run the scheme's inputs over several devices or
     * MPI ranks, multi/) The same over a part of the grid only: `out`
     * holds the nodes origin .. origin + out->n - 1, with the values those
     * nodes have in init_input's field, made without the rest of the grid. */
    pyr_status_t (*init_input_part)(const pyr_problem_t *p, int i, const int64_t origin[3], pyr_field_t *out);
    /* (optional) Check the input fields a caller gave for the whole grid
     * (given[i]: field i as the caller passed it, NULL where the library
     * made it with init_input, which checks its own): data with which the
     * problem has no solution are refused, saying what would work. */
    pyr_status_t (*check_inputs)(const pyr_problem_t *p, const pyr_field_t *const *given);
    /* Steps between stopping checks (passes end there), 0 = none; and the
     * tolerance the check compares the reduction with (0 = run every step). */
    int64_t (*check_every)(const pyr_problem_t *p);
    double (*tolerance)(const pyr_problem_t *p);
    /* The scheme's part of the key of a measured choice in the wisdom ("" when
     * nothing beyond the grid matters). */
    void (*key)(const pyr_problem_t *p, char *out, size_t size);
    /* Where field i can differ from zero (its support): fills at most max
     * boxes (possibly overlapping), returns how many; -1 = everywhere.  A
     * field is moved only over its support.  (optional: NULL = everywhere) */
    int (*support)(const pyr_problem_t *p, int i, pyr_box_t *boxes, int max);
    /* Extra coefficients (the caller frees *aux with free()).  (optional) */
    pyr_status_t (*aux_coefficients)(const pyr_problem_t *p, double **aux, int64_t *naux);
    /* Initial values of state field i (heat, Poisson: i = 0, the initial field). */
    pyr_status_t (*init_state)(const pyr_problem_t *p, int i, pyr_field_t *out);
    /* Point terms: sources, probes and what a scheme derives from them
     * (optional, all NULL for a scheme without any; the executor calls them
     * for any scheme that has them, knowing none by name).
     *
     * points: the terms of a run of p (the whole grid, or a part's window)
     * into *out (zeroed by the caller); a failure leaves nothing to free.
     * points_free: releases what points made (the lists and the state).
     *
     * amplitudes: amp[s * nsources + i] = the amount source i adds in step
     * first + s (the step from time layer first + s to first + s + 1), for
     * s < count (count at most the plan's height).  Called once per pass,
     * for consecutive ranges in increasing order from the run's first step,
     * so that a scheme may advance state of its own here (an auxiliary grid)
     * and read it back in the next call; every part of a larger grid has a
     * run and a state of its own, and advances it alike.
     *
     * record (may be NULL): after each pass, values[s * nprobes + i] = probe
     * i after step first + s + 1 (time layer first + s + 1), in the same
     * order of ranges.  Only probes with owned[i] != 0 hold values: those on
     * nodes this run owns (on one device every updated node; a part of a
     * larger grid owns its own box, its halo is another part's), each node
     * owned by exactly one part, so that what a part accumulates over its
     * owned nodes, step by step in this order, does not depend on the plan,
     * the decomposition or the device count.  last = 1 on the run's final
     * pass.  The first nshown columns also reach the caller's probe hook
     * (the layer of several devices assembles them from their owners).
     *
     * How the features of a Yee solver use them: a plane wave's total-field /
     * scattered-field correction is a source per node of the TF/SF box's
     * faces, its amplitude the incident field's term (times the node's
     * coefficient) of a 1D auxiliary grid that amplitudes advances in
     * `state`; a frequency-domain monitor over a box, plane or point is
     * probes beyond nshown, one per node and component, whose running
     * Fourier sums record adds step by step into `state` over the nodes the
     * run owns: each node's sums are then one part's alone, the same bits
     * whatever the plan, and a flux is summed from them in the order of the
     * whole grid's nodes.  A plan whose passes carry no point terms (the
     * skewed decomposition's) fails a run that has any. */
    pyr_status_t (*points)(const pyr_problem_t *p, pyr_scheme_points_t *out);
    pyr_status_t (*amplitudes)(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, double *amp);
    pyr_status_t (*record)(const pyr_problem_t *p, pyr_scheme_points_t *pts, int64_t first, int64_t count, const double *values,
                           const unsigned char *owned, int last);
    void (*points_free)(pyr_scheme_points_t *pts);
    /* Whether every function above honours a part's window (problem.origin,
     * .whole): then a part of a larger grid is planned, initialised and run
     * from its own problem, everything placed by position placed on the
     * whole grid (multi/). */
    int windowed;
} pyr_scheme_t;

extern const pyr_scheme_t pyr_scheme_heat;
extern const pyr_scheme_t pyr_scheme_poisson;
/* The largest omega < 2 for which damped Jacobi converges on the problem's
 * whole grid (exclusive): 2 / (1 + rho), rho plain Jacobi's spectral radius. */
double pyr_poisson_omega_limit(const pyr_problem_t *p);
extern const pyr_scheme_t pyr_scheme_maxwell;

/* The table of an equation, or NULL. */
const pyr_scheme_t *pyr_scheme_of(pyr_equation_t equation);
/* The registered schemes, in a fixed order: pyr_scheme_at(0 .. count - 1). */
int pyr_scheme_count(void);
const pyr_scheme_t *pyr_scheme_at(int i);

/* Reach of one step (the sum over sub-steps) along an axis, below and above. */
int pyr_scheme_step_reach(const pyr_scheme_t *s, int axis, int high);

/* Nodes at the low / high end of the whole grid's axis that sub-step k
 * does not update for this problem (the table's margin, or the scheme's
 * margin hook where boundary conditions decide it). */
int pyr_scheme_margin(const pyr_scheme_t *s, const pyr_problem_t *p, int k, int axis, int high);

/* Nodes at the low / high end of the whole grid's axis that no sub-step
 * updates for this problem (the boundary a piece keeps resident or
 * mirrors). */
int pyr_scheme_fixed(const pyr_scheme_t *s, const pyr_problem_t *p, int axis, int high);

/* Bytes of one node of the fields this problem uses, counting a ping-pong
 * field once (the executor's time-layer buffers), and the values moved per
 * node up (every field) and down (updated fields only). */
int pyr_scheme_values_up(const pyr_scheme_t *s, unsigned used);
int pyr_scheme_values_down(const pyr_scheme_t *s, unsigned used);

#endif
