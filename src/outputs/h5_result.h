/* HDF5 results: one file per run with the scheme's fields as datasets, the
 * grid, scheme, parameters, step, time, precision, version and plan as
 * attributes, snapshots as a time series in the same file, and an XDMF
 * sidecar (NAME.xmf, outputs/xdmf.h) that ParaView and VisIt open directly.
 * The file format's calls are io/hdf5.h's.
 *
 * Layout (format "pyrgrid-field", version 1; docs/hdf5-and-outputs.md#hdf5-results):
 *
 *   /                     attributes: format, format_version, pyrgrid_version, equation, fields ("u f"),
 *                         dims, n (int64[3], x y z), lengths (double[3]), h (double[3]), precision,
 *                         step, t (of the final fields), steps (the run's last step), complete (1: the
 *                         run reached its end; 0: it was interrupted), steps_done (the step the final
 *                         fields hold, from step 0), the scheme's
 *                         parameters (heat: alpha, dt; poisson: iterations, tolerance, check_every,
 *                         omega, rhs; maxwell: dt, courant, mode, boundary, cpml_cells, eps_r, sigma,
 *                         mu_r, shapes, sources, probes), initial, plan (JSON), run (JSON)
 *   /u, /f, ...           the final fields in NumPy order ((ny, nx), (nz, ny, nx)), float32 or float64,
 *                         chunked (about 1 MiB), gzip + shuffle when compression > 0; updated
 *                         fields carry step and t; Maxwell's: /Ex ../Hz (the components of its
 *                         mode) and the coefficients that vary per node (/ca /cb /dh), each with
 *                         its Yee offset (attribute offset, x y z in cells; H's t half a step
 *                         before E's)
 *   /snapshots/000200/u   output.every: the updated fields at step 200 (group attributes step, t);
 *                         the final field is a hard link to the last snapshot when they coincide
 *   /x /y /z              the nodes' coordinates (i h), dimension scales of every field's axes
 *                         (x_half ..: half a cell on, a staggered field's); units, long_name on all
 *   /time /step, /u_series  the steps written as a time axis, and each updated field's steps
 *                         stacked along it (a virtual dataset of the datasets above: no copy)
 *
 * The file is written to a temporary and renamed into place by
 * pyr_h5_writer_commit (inside a stage: with the other outputs). */
#ifndef PYR_OUTPUTS_H5_RESULT_H
#define PYR_OUTPUTS_H5_RESULT_H

#include <stdint.h>

#include "pyrgrid.h"

#define PYR_H5_MAX_FIELDS 16

typedef struct {
    const pyr_problem_t *problem; /* steps: those of this run (a restart's remaining ones) */
    int nfields;
    const char *name[PYR_H5_MAX_FIELDS];
    int updated[PYR_H5_MAX_FIELDS]; /* 1: state (snapshots, step and t), 0: input (written once) */
    int compression;                /* gzip level 0..9 */
    const char *plan_json;          /* may be NULL */
    const char *initial;            /* the initial field: its kind, or the file a restart read */
    int64_t end_step;               /* the run's last step (scheme.steps) */
    int xdmf;                       /* write NAME.xmf beside the file (2D and 3D) */
    /* staggered grids (Maxwell's Yee grid): field i's value at index (i, j, k) lies at ((i, j, k) +
     * offset[i]) * h and, for an updated field, at time t + time_offset[i] (H half a step before E);
     * written as the datasets' attributes "offset" (x y z, in cells) and "t" */
    int staggered;
    double offset[PYR_H5_MAX_FIELDS][3];
    double time_offset[PYR_H5_MAX_FIELDS];
} pyr_h5_desc_t;

typedef struct pyr_h5_writer pyr_h5_writer_t;

/* Create the file's temporary and its root attributes.  The caller owns the
 * writer: pyr_h5_writer_commit or pyr_h5_writer_abort release it. */
pyr_status_t pyr_h5_writer_open(const char *path, const pyr_h5_desc_t *desc, pyr_h5_writer_t **w);
/* Write input field i (not updated by the scheme) once. */
pyr_status_t pyr_h5_writer_input(pyr_h5_writer_t *w, int i, const pyr_field_t *field);
/* A snapshot of every updated field (fields[i] for i < nfields; inputs may be NULL). */
pyr_status_t pyr_h5_writer_snapshot(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t);
/* The final updated fields, with the step and time they hold and the run's description (JSON, may be NULL). */
pyr_status_t pyr_h5_writer_final(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t,
                                 const char *run_json);
/* After pyr_h5_writer_final for a run that was stopped before its end (an
 * interrupt): marks the file incomplete (complete = 0) with the step its
 * final fields hold (steps_done).  Its snapshots and final fields are whole. */
pyr_status_t pyr_h5_writer_incomplete(pyr_h5_writer_t *w, int64_t step);
/* Close the file and commit it and its sidecar (atomic.h; staged when a stage
 * is active).  Releases the writer, also on failure. */
pyr_status_t pyr_h5_writer_commit(pyr_h5_writer_t **w);
void pyr_h5_writer_abort(pyr_h5_writer_t **w);

/* Planes [first, first + count) of the slowest axis of the file's field i,
 * in C order, into buf (io/hdf5.h: pyr_h5_fill_fn). */
typedef pyr_status_t (*pyr_h5_slab_fn)(void *user, int i, int64_t first, int64_t count, void *buf);
/* From now on the writer's fields come from slab, a row of chunks at a time
 * (pyr_h5_write_field_slabs), for fields no process holds whole (the parts
 * of a run over MPI ranks): the fields given to the calls above are then
 * only looked at for being there. */
void pyr_h5_writer_slabs(pyr_h5_writer_t *w, pyr_h5_slab_fn slab, void *user);

/* An HDF5 result (output.field = NAME.h5) of a run over ranks, written from
 * slabs on the one process that writes it: the fields the file holds are
 * those of fields[] (the scheme's, in its order; only looked at for being
 * there) that pyr_result_h5_order lists, in that order, each a row of
 * chunks at a time through slab; then the monitors' spectra attached to p
 * and the commit (under a temporary renamed into place).  plan_json says
 * how the ranks ran (may be NULL). */
pyr_status_t pyr_result_write_h5_slabs(const pyr_problem_t *p, const pyr_problem_outputs_t *o, pyr_field_t *const *fields, int nfields,
                                       const pyr_run_info_t *run, const char *plan_json, pyr_h5_slab_fn slab, void *user);
/* The scheme's fields (indexes into fields[]) in the order that
 * pyr_result_write_h5_slabs writes them, the file's index of each in
 * file_index[]: the count (at most PYR_H5_MAX_FIELDS), -1 when too many. */
int pyr_result_h5_order(const pyr_problem_t *p, pyr_field_t *const *fields, int nfields, int order[PYR_H5_MAX_FIELDS],
                        int file_index[PYR_H5_MAX_FIELDS]);

#endif
