/* CPU side of the line Gauss–Seidel solver: the prepared form and the
 * iterations (lgs_cpu.c). */
#ifndef PYR_SOLVERS_LGS_CPU_H
#define PYR_SOLVERS_LGS_CPU_H

#include <stddef.h>

#include "pyrgrid.h"
#include "solvers/lgs/lgs_internal.h"

/* Factor every block of s (after dividing rows by cC when jacobi).  Fails with
 * PYR_ERR_NUMERIC naming the row of a zero pivot.  Free with
 * pyr_lgs_prep_destroy. */
pyr_status_t pyr_lgs_prep_create(const pyr_lgs_system_t *s, int jacobi, pyr_lgs_prep_t **prep);
void pyr_lgs_prep_destroy(pyr_lgs_prep_t **prep);

/* Doubles of scratch each thread needs. */
size_t pyr_lgs_cpu_scratch_per_thread(const pyr_lgs_prep_t *p);

/* `iterations` sweeps over the padded n×mpad iterate y.  Lexicographic runs
 * on one thread; red–black on `threads` threads (scratch holds threads ×
 * pyr_lgs_cpu_scratch_per_thread doubles). */
void pyr_lgs_cpu_iterate(const pyr_lgs_prep_t *p, pyr_lgs_ordering_t ordering, double omega, int threads,
                         double *y, double *scratch, int64_t iterations);

/* Row sums of squared residuals (rows: n doubles) and their sum in row order. */
pyr_status_t pyr_lgs_cpu_residual2(const pyr_lgs_prep_t *p, const double *y, int threads, double *rows,
                                   double *total);

#endif
