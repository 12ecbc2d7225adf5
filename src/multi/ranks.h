/* Runs over the ranks of a transport (parts.h), for libpyrgrid_mpi.
 *
 * MPI lives in its own library (libpyrgrid_mpi: multi/mpi.c, include/pyrgrid_mpi.h), so that
 * libpyrgrid and every program or Python process that loads it for one process maps no MPI.  That
 * library makes a transport of MPI calls (the hook table the parts engine calls at each collective
 * point) and hands it to the core through this table; everything else of an MPI run (the parts,
 * their plans, the result's boxes, the parts files) is the core's.  pyr_private_ranks is the one
 * symbol libpyrgrid exports beyond the public API: the two libraries come from one build and the
 * table is checked (size and version) before use, so that a libpyrgrid_mpi of another build is
 * refused instead of misread.
 *
 * The program's MPI glue (tools/cli_mpi.c's module) links libpyrgrid_mpi, whose exports are exactly
 * pyrgrid_mpi.h's functions; what it needs beyond them (one output file written by every rank) the
 * MPI library hands the core when it is loaded (attach_mpi), and the glue finds it here (mpi).  This
 * header is therefore complete without the core's headers: the transport is named, not defined. */
#ifndef PYR_MULTI_RANKS_H
#define PYR_MULTI_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"

struct pyr_transport; /* multi/parts.h */

/* Every rank's box [lo, hi) (x fastest) of a C-order array whole[] (x, y, z) of `elem`-byte values,
 * written at `offset` bytes into `path` by all ranks at once (MPI-IO; the file exists: rank 0 made
 * it).  Collective; each rank returns its own status, and the caller agrees. */
typedef pyr_status_t (*pyr_ranks_write_box_fn)(struct pyr_transport *t, const char *path, int64_t offset, int dims, const int64_t whole[3],
                                               const int64_t lo[3], const int64_t hi[3], size_t elem, const void *data);

/* What libpyrgrid_mpi hands the core for the program's glue: collective over *(const MPI_Comm *)comm. */
typedef struct {
    size_t size; /* sizeof(pyr_ranks_mpi_t) */
    /* one file at path from every rank's part (its box [lo, hi) of the whole array): a .npy */
    pyr_status_t (*write_one)(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], const void *comm);
} pyr_ranks_mpi_t;

/* An HDF5 result (output.field = NAME.h5) of a run over the ranks, which the core's one-file writer
 * (write_one) writes when it is asked for that very path: rank 0 writes the file (serial HDF5, under
 * a temporary renamed into place), the other ranks send it their boxes a row of chunks at a time, so
 * that no rank holds the whole grid.  Each rank makes its own box's inputs (Maxwell's coefficients,
 * Poisson's f) from the problem, as its parts do. */
typedef struct {
    size_t size;                  /* sizeof(pyr_ranks_h5_t) */
    const char *path;             /* output.field */
    const pyr_problem_t *problem; /* the whole problem (the monitors' spectra attached whole: rank 0 writes them) */
    const pyr_problem_outputs_t *outputs;
    pyr_field_t *const *fields;   /* this rank's parts of the state fields, in the scheme's order (NULL: none) */
    int nfields;
    const pyr_run_info_t *run;    /* this rank's (the steps are every rank's) */
    const char *partition;        /* how the grid is cut over the ranks (the file's plan attribute), may be NULL */
} pyr_ranks_h5_t;

/* The HDF5 result's writer, which lives a floor above (api/result.c) and hands itself to the ranks
 * when the library is loaded (pyr_ranks_attach_h5).  rows fills planes [first, first + count) of the
 * slowest axis of the file's field i, in C order, into buf. */
typedef pyr_status_t (*pyr_ranks_rows_fn)(void *user, int i, int64_t first, int64_t count, void *buf);
typedef struct {
    size_t size; /* sizeof(pyr_ranks_h5_writer_t) */
    /* the fields of fields[] (the scheme's order; only looked at for being there) the file takes, in the
     * order write takes them, the file's index of each in file_index[]: the count, -1 when too many */
    int (*order)(const pyr_problem_t *p, pyr_field_t *const *fields, int nfields, int *order, int *file_index);
    /* the whole file at o->field (a temporary renamed into place), its fields from rows */
    pyr_status_t (*write)(const pyr_problem_t *p, const pyr_problem_outputs_t *o, pyr_field_t *const *fields, int nfields,
                          const pyr_run_info_t *run, const char *plan_json, pyr_ranks_rows_fn rows, void *user);
} pyr_ranks_h5_writer_t;
void pyr_ranks_attach_h5(const pyr_ranks_h5_writer_t *w);

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
    pyr_status_t (*execute)(const pyr_problem_t *problem, const pyr_options_t *options, struct pyr_transport *t, const pyr_ranks_env_t *env,
                            const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields, pyr_ranks_info_t *info);
    /* pyr_write_parts_mpi over t: the rank's box [lo, hi) of the whole array */
    pyr_status_t (*write_parts)(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], struct pyr_transport *t);
    /* one file over t: path (a .npy) from every rank's part, rank 0 its header, each rank its box
     * through write_box, into a temporary that rank 0 renames over path once every rank wrote */
    pyr_status_t (*write_one)(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], struct pyr_transport *t,
                              pyr_ranks_write_box_fn write_box);
    /* libpyrgrid_mpi's table for the program's glue: set when it is loaded (NULL before) */
    void (*attach_mpi)(const pyr_ranks_mpi_t *m);
    const pyr_ranks_mpi_t *(*mpi)(void);
    /* the HDF5 result that write_one writes for job->path (instead of a .npy of its part) until it is
     * set again (NULL: none); the job and what it points to must outlive that write */
    void (*set_h5)(const pyr_ranks_h5_t *job);
    /* a field of the problem's grid that reads as zero and that the executor knows holds zeros
     * (core/field.h pyr_field_alloc_zero): the program's state fields of initial.kind = zero, which a
     * resident plan then sets on the device instead of uploading them; written only by the run */
    pyr_status_t (*field_zero)(const pyr_problem_t *problem, pyr_field_t **out);
    /* state field i of the problem's grid as its initial values' recipe, not yet made (core/field.h
     * pyr_field_alloc_recipe): a resident plan makes the values on each device instead of uploading
     * them, any other run on the host first; whoever reads the field before the run must make them
     * (pyr_field_materialize).  *out NULL where the field is not made so (a file's values, a scheme's
     * own initial state, another field than the first): the caller makes it as before. */
    pyr_status_t (*field_initial)(const pyr_problem_t *problem, int i, pyr_field_t **out);
} pyr_ranks_core_t;

PYR_API const pyr_ranks_core_t *pyr_private_ranks(void);

/* Every rank's status agreed over t (ranks.c; PYR_OK or the lowest failing rank's, "rank 2: ..."). */
pyr_status_t pyr_ranks_agree(struct pyr_transport *t, pyr_status_t mine);
/* core->write_one (ranks_output.c) */
pyr_status_t pyr_ranks_write_one(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], struct pyr_transport *t,
                                 pyr_ranks_write_box_fn write_box);

/* core->set_h5 (ranks_output.c) */
void pyr_ranks_set_h5(const pyr_ranks_h5_t *job);

#endif
