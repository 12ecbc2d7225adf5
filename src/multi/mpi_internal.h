/* Internal helpers of the MPI support (multi/mpi.c); pyr_mpi_agree is
 * public (pyrgrid_mpi.h). */
#ifndef PYR_MULTI_MPI_INTERNAL_H
#define PYR_MULTI_MPI_INTERNAL_H

#ifdef PYR_HAVE_MPI
#include <mpi.h>

#include "pyrgrid.h"

/* pyr_mpi_agree (pyrgrid_mpi.h) with the message in a buffer: *who = the lowest failing rank
 * (-1 when none), *status its status, `message` its message. */
pyr_status_t pyr_mpi_agree_status(MPI_Comm comm, pyr_status_t mine, char *message, size_t size, pyr_status_t *status, int *who);
#endif

#endif
