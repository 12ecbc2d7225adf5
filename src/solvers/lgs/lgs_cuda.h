/* Host-callable side of the CUDA red–black line Gauss–Seidel
 * (src/backend/cuda/lgs_cuda.cu).  Declared only in builds with CUDA
 * (PYR_HAVE_CUDA); the kernels compute the same iterates as lgs_cpu.c's
 * red–black sweep, bit for bit. */
#ifndef PYR_SOLVERS_LGS_CUDA_H
#define PYR_SOLVERS_LGS_CUDA_H

#include "solvers/lgs/lgs_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef PYR_HAVE_CUDA

typedef struct pyr_lgs_cuda pyr_lgs_cuda_t;

/* PYR_OK when a device can run the kernels; PYR_ERR_NODEVICE with the reason. */
pyr_status_t pyr_lgs_cuda_probe(char *name, size_t name_size);

/* Upload the prepared system and the padded n×mpad initial iterate.  The
 * caller keeps ownership of prep and y; the context is freed with
 * pyr_lgs_cuda_destroy.  PYR_ERR_DEVICE_NOMEM names the sizes. */
pyr_status_t pyr_lgs_cuda_create(const pyr_lgs_prep_t *prep, const double *y_padded, double omega,
                                 pyr_lgs_cuda_t **ctx);
/* Run `iterations` red–black iterations and wait for them. */
pyr_status_t pyr_lgs_cuda_iterate(pyr_lgs_cuda_t *ctx, int64_t iterations);
/* Per-row residual sums of squares (n values) in pyr_lgs_row_residual2's order. */
pyr_status_t pyr_lgs_cuda_residual_rows(pyr_lgs_cuda_t *ctx, double *rows);
/* Copy the iterate back as a padded n×mpad array. */
pyr_status_t pyr_lgs_cuda_download(pyr_lgs_cuda_t *ctx, double *y_padded);
void pyr_lgs_cuda_destroy(pyr_lgs_cuda_t **ctx);

#endif

#ifdef __cplusplus
}
#endif

#endif
