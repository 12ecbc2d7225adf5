/* Chebyshev semi-iterative acceleration of the Poisson scheme's Jacobi
 * sweeps (src/schemes/poisson.c), as the kernels and tests see it.
 *
 * With J the plain Jacobi sweep and u_0 the initial field, the sweeps are
 *
 *     u_1     = J u_0
 *     u_{k+1} = u_{k-1} + w_{k+1} (J u_k - u_{k-1})      (k >= 1)
 *
 * with w_1 = 1, w_2 = 1 / (1 - rho^2 / 2), w_{k+1} = 1 / (1 - rho^2 w_k / 4):
 * the Chebyshev polynomials of the Jacobi matrix, whose eigenvalues lie in
 * [-rho, rho] (rho in closed form for the Dirichlet Laplacian,
 * pyr_poisson_jacobi_radius).  The weights depend only on the sweep index
 * and rho, so a sweep needs no inner product, only the layer two sweeps
 * back: with ping-pong buffers that is what the output buffer holds before
 * the sweep writes it, so a kernel reads out[i] and then writes out[i].
 *
 * Coefficients (pyr_coef_t): c[6] = 1 when the sweeps are Chebyshev's, and
 * coef.aux then holds the weights w_1, w_2, ... in double up to where they
 * stop changing (the last one then serves every later sweep); a kernel
 * rounds a sweep's weight once to its precision.  c[6] = 0: plain or damped
 * Jacobi, no weights.
 *
 * Neumann faces (src/schemes/poisson.c): c[7] = PYR_POISSON_FACES_AUX when
 * a face of the problem's grid is Neumann (else 0), and coef.aux then
 * starts with that many values, three per face x-, x+, y-, y+, z-, z+:
 * 1 when the face is Neumann and on this problem's grid (else 0), the
 * coordinate of its nodes along its axis, and t = 2 h G (the ghost is the
 * node's inner neighbour + t, rounded once to the precision); the weights
 * follow.  On such a problem a sweep's box reaches the Neumann faces, and
 * c[4] holds the damping gamma of a pure Neumann problem's Chebyshev sweeps
 * (u' = p + w*((u + gamma*(J - u)) - p); with w = 1, u + gamma*(J - u)). */
#ifndef PYR_SCHEMES_POISSON_H
#define PYR_SCHEMES_POISSON_H

#include <stdint.h>

#include "pyrgrid.h"
#include "schemes/scheme.h"

#define PYR_POISSON_CHEBYSHEV_COEF 6
#define PYR_POISSON_FACES_COEF 7
#define PYR_POISSON_FACES_AUX 18

/* Chebyshev's weights in coef.aux (after the faces' table, if any). */
static inline const double *pyr_poisson_weights(const pyr_coef_t *c, int64_t *n)
{
    const int64_t head = (int64_t)c->c[PYR_POISSON_FACES_COEF];
    *n = c->aux ? c->naux - head : 0;
    return c->aux ? c->aux + head : NULL;
}

/* Whether some face / every face of the problem's grid is Neumann. */
int pyr_poisson_has_neumann(const pyr_problem_t *p);
int pyr_poisson_pure_neumann(const pyr_problem_t *p);
/* The grid's faces as the [boundary] section writes them, one per face of
 * the problem's axes: "x- = neumann, x+ = neumann 0.5, y- = dirichlet, ...". */
void pyr_poisson_faces_text(const pyr_problem_t *p, char *out, size_t size);
/* The damping of a pure Neumann problem's Chebyshev sweeps: 2 / (3 - rho'),
 * rho' the plain Jacobi radius without the eigenvalues 1 and -1. */
double pyr_poisson_neumann_gamma(const pyr_problem_t *p);
/* Nodes at the low (high = 0) or high end of an axis that no sweep updates:
 * 1, or 0 on a Neumann face of the problem's grid (a part of a larger grid
 * holds a face only where its window reaches it). */
int pyr_poisson_fixed(const pyr_problem_t *p, int axis, int high);

/* [boundary] keys x- .. z+: the face's index 0 .. 5 (-1: not a face);
 * "dirichlet" | "neumann" | "neumann FLUX" into q; and the value's text. */
int pyr_poisson_face_index(const char *key);
pyr_status_t pyr_poisson_parse_face(pyr_poisson_params_t *q, int k, const char *value);
int pyr_poisson_face_text(const pyr_poisson_params_t *q, int k, char *out, size_t size);

/* The spectral radius of the plain Jacobi iteration on the problem's whole
 * grid (its faces' kinds and anisotropic spacings included; 1 when every
 * face is Neumann). */
double pyr_poisson_jacobi_radius(const pyr_problem_t *p);

/* The weights w_1 .. w_n for the radius rho (0 <= rho < 1) into a new
 * array (free() it); at most 1 << 20 of them. */
pyr_status_t pyr_poisson_chebyshev_weights(double rho, double **w, int64_t *n);

/* The weight of 0-based sweep `sweep` (the one that makes u_{sweep+1}). */
static inline double pyr_poisson_weight(const double *w, int64_t n, int64_t sweep)
{
    return sweep < n ? w[sweep] : w[n - 1];
}

#endif
