/* Runs over the ranks of a transport (parts.h), for libpyrgrid_mpi.
 *
 * MPI lives in its own library (libpyrgrid_mpi: multi/mpi.c, include/pyrgrid_mpi.h), so that
 * libpyrgrid and every program or Python process that loads it for one process maps no MPI.  That
 * library makes a transport of MPI calls (the hook table the parts engine calls at each collective
 * point) and hands it to the core through this table; everything else of an MPI run (the parts,
 * their plans, the result's boxes, the parts files) is the core's.  pyr_private_ranks is the one
 * symbol libpyrgrid exports beyond the public API: the two libraries come from one build and the
 * table is checked (size and version) before use, so that a libpyrgrid_mpi of another build is
 * refused instead of misread. */
#ifndef PYR_MULTI_RANKS_H
#define PYR_MULTI_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "multi/parts.h"
#include "pyrgrid.h"

/* What the communicator knows that the transport does not carry. */
typedef struct {
    int local_rank, local_size; /* this rank among the ranks of its host (GPUs and cores are shared per host) */
    int serialized;             /* the transport may be called from several threads, one at a time */
} pyr_ranks_env_t;

/* pyr_mpi_info_t (pyrgrid_mpi.h), field for field, without mpi.h. */
typedef struct {
    int rank, ranks;
    int64_t lo[3], hi[3];
    pyr_run_info_t run;
    int parts_per_axis[3];
    char partition[256];
} pyr_ranks_info_t;

typedef struct {
    size_t size;         /* sizeof(pyr_ranks_core_t) in the core */
    const char *version; /* PYR_VERSION_STRING of the core */
    /* pyr_execute_mpi_fields over t (collective; every rank returns the same status) */
    pyr_status_t (*execute)(const pyr_problem_t *problem, const pyr_options_t *options, pyr_transport_t *t, const pyr_ranks_env_t *env,
                            const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields, pyr_ranks_info_t *info);
    /* pyr_write_parts_mpi over t: the rank's box [lo, hi) of the whole array */
    pyr_status_t (*write_parts)(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], pyr_transport_t *t);
} pyr_ranks_core_t;

PYR_API const pyr_ranks_core_t *pyr_private_ranks(void);

#endif
