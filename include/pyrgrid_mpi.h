/* pyrgrid over MPI ranks: one grid cut into parts, one (or one per device,
 * run.devices) per rank; no rank ever holds the whole grid.  Each part runs
 * the single-device machinery on its box grown by H steps' reach and swaps
 * those halos with its neighbours every H steps (non-blocking MPI), and the
 * result is the same bits as on one device, whatever the rank count.
 * Apart from pyrgrid.h so that programs without MPI never see mpi.h, and
 * in a library of its own, libpyrgrid_mpi, so that libpyrgrid links no MPI:
 * programs that use this header link both (mpicc ... -lpyrgrid_mpi -lpyrgrid;
 * pkg-config pyrgrid_mpi; CMake: pyrgrid::pyrgrid_mpi).
 *
 *     MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
 *     pyr_field_t *part = NULL;
 *     pyr_mpi_info_t info;
 *     if (pyr_execute_mpi(&problem, &options, MPI_COMM_WORLD, NULL, &part, &info) == PYR_OK)
 *         pyr_write_parts_mpi("result.npy", part, &info, MPI_COMM_WORLD);   // result.rank0000.npy ... + result.parts.json
 *     pyr_field_destroy(&part);
 *
 * Every function here is collective over the communicator: every rank calls
 * it, and every rank returns the same status; a failure on one rank (a part
 * that cannot be read, a GPU error, a cancelled run) stops all of them with
 * that rank's message ("rank 3: ...") instead of leaving them waiting.
 * Several devices per rank (run.devices) need MPI_THREAD_SERIALIZED. */
#ifndef PYRGRID_MPI_H
#define PYRGRID_MPI_H

#include <mpi.h>

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where this rank's part lies and what the run did. */
typedef struct {
    int rank, ranks;
    int64_t lo[3], hi[3];  /* the nodes this rank owns: [lo, hi) along x, y, z (its part of the result) */
    pyr_run_info_t run;    /* steps, change and converged are the same on every rank; the counts and
                              the halo counters (values sent to and received from other ranks' and
                              devices' parts) are this rank's */
    int parts_per_axis[3]; /* the grid was cut into this many parts along x, y, z (all ranks and devices) */
    char partition[256];   /* how the grid was cut ("4 parts (4 ranks x 1 device, slabs 1x1x4), H = 8 ...") */
} pyr_mpi_info_t;

/* Solve `problem` over the ranks of comm.  Each rank makes its part of the
 * initial field and inputs itself (initial.kind = file and rhs.file: it
 * reads its hyperslab of the .npy).  On success *part (the caller destroys
 * it) holds the rank's box of the result (field 0 of the scheme, u), of
 * info->hi - info->lo nodes, and *info says where it lies (the first state
 * field the problem uses; Maxwell: pyr_execute_mpi_fields).  hooks: progress
 * (called on every rank) and probe.  With the CUDA backend and no run.device or
 * run.devices, rank r takes GPU (r's rank on its host) mod the host's GPUs. */
PYR_API pyr_status_t pyr_execute_mpi(const pyr_problem_t *problem, const pyr_options_t *options, MPI_Comm comm,
                                     const pyr_hooks_t *hooks, pyr_field_t **part, pyr_mpi_info_t *info);

/* The same for every field of the scheme: parts[i] (room for nfields >= the
 * scheme's field count) gets the rank's box of state field i where the
 * problem uses it, NULL elsewhere (inputs, the library's auxiliaries,
 * components a 2D Maxwell mode lacks).  hooks: progress and probe (Maxwell's
 * probes: every rank gets every probe's series, from the rank owning its
 * node). */
PYR_API pyr_status_t pyr_execute_mpi_fields(const pyr_problem_t *problem, const pyr_options_t *options, MPI_Comm comm,
                                            const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields, pyr_mpi_info_t *info);

/* Agree on failures (collective): each rank passes its status (PYR_OK, or
 * the status of a failure whose message pyr_last_error holds); every rank
 * returns PYR_OK when all passed PYR_OK, else the status of the lowest
 * failing rank with its message ("rank 2: ...") as pyr_last_error, so that
 * ranks that go on to a collective step go on together. */
PYR_API pyr_status_t pyr_mpi_agree(MPI_Comm comm, pyr_status_t mine);

/* Each rank writes its part to PATH.rankNNNN.npy (PATH less a ".npy"
 * ending) and rank 0 an index PATH.parts.json naming every part with its
 * offset in the whole array (NumPy order); `pyrgrid assemble INDEX OUT.npy`
 * streams them into one .npy.  The parts are written under temporary names
 * and renamed only once every rank has written its own; the index comes
 * last. */
PYR_API pyr_status_t pyr_write_parts_mpi(const char *path, const pyr_field_t *part, const pyr_mpi_info_t *info, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif
