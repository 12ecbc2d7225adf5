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
 * Jacobi, no weights. */
#ifndef PYR_SCHEMES_POISSON_H
#define PYR_SCHEMES_POISSON_H

#include <stdint.h>

#include "pyrgrid.h"

#define PYR_POISSON_CHEBYSHEV_COEF 6

/* The spectral radius of the plain Jacobi iteration on the problem's whole
 * grid (Dirichlet boundary, anisotropic spacings included). */
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
