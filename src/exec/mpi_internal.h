/* Internal helpers of the MPI support (exec/mpi.c) for the program. */
#ifndef PYR_EXEC_MPI_INTERNAL_H
#define PYR_EXEC_MPI_INTERNAL_H

#ifdef PYR_HAVE_MPI
#include <mpi.h>

#include "pyrgrid.h"

/* Collective: each rank passes its status; all return PYR_OK, or the status
 * of the lowest failing rank with its message ("rank 2: ..."). */
pyr_status_t pyr_mpi_agree(MPI_Comm comm, pyr_status_t mine);
/* The same with the message in a buffer: *who = the lowest failing rank
 * (-1 when none), *status its status, `message` its message. */
pyr_status_t pyr_mpi_agree_status(MPI_Comm comm, pyr_status_t mine, char *message, size_t size, pyr_status_t *status, int *who);
#endif

#endif
