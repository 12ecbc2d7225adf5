/* pyrgrid output files: what the pyrgrid program writes its results with,
 * for C programs that write theirs the same way.
 *
 * Every output is written so that it never destroys what it must not.  What
 * is at an output's path decides how it is written:
 *   - nothing, or a regular file: a temporary ".NAME.tmp.PID@HOST.XXXXXX" is
 *     written next to it and renamed over it, so that a reader never sees a
 *     half-written file and a failed write leaves the old file as it was (a
 *     symbolic link is followed: its target is replaced, the link stays);
 *   - a character device (/dev/null as a discard sink) or a FIFO: written in
 *     place, never replaced (a FIFO that no reader has open is refused at
 *     once rather than waited for);
 *   - anything else (a directory, a block device, a socket): refused.
 * Several outputs of one command are committed together with a stage: their
 * temporaries are all written first and renamed only when every one is
 * complete; a failure removes the new temporaries and leaves every old output
 * as it was.  Every writer below (the .npy and PNG writers, pyr_output_file_t)
 * takes part in the stage that is active on its thread.
 *
 * Failures return a status and leave a message for pyr_last_error() that
 * says what is in the way and what would work. */
#ifndef PYRGRID_OUTPUT_H
#define PYRGRID_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "pyrgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ stages */

typedef struct pyr_output_stage pyr_output_stage_t;

/* From now on, outputs committed on this thread wait in *stage (at most 16)
 * instead of replacing their paths.  Stages nest: the innermost collects. */
PYR_API pyr_status_t pyr_output_stage_begin(pyr_output_stage_t **stage);
/* Rename every staged temporary over its path, in order, end the stage and
 * free it (*stage becomes NULL). */
PYR_API pyr_status_t pyr_output_stage_commit(pyr_output_stage_t **stage);
/* Remove every staged temporary (old outputs stay as they are), end the stage
 * and free it.  Safe on NULL and after a commit. */
PYR_API void pyr_output_stage_abort(pyr_output_stage_t **stage);

/* ------------------------------------------------------------------- files */

/* A text or binary file of the caller's own format (CSV, a log) written as
 * described above. */
typedef struct pyr_output_file pyr_output_file_t;

PYR_API pyr_status_t pyr_output_file_open(pyr_output_file_t **file, const char *path);
/* The stream to write to ("wb"), valid until commit or abort. */
PYR_API FILE *pyr_output_file_stream(const pyr_output_file_t *file);
/* Flush, check for write errors (a full disk), sync and close, then rename
 * the temporary over the path, or hand it to the active stage.  Always frees
 * the file (*file becomes NULL). */
PYR_API pyr_status_t pyr_output_file_commit(pyr_output_file_t **file);
/* Close and remove the temporary, free the file.  Safe on NULL. */
PYR_API void pyr_output_file_abort(pyr_output_file_t **file);

/* Install handlers that remove the temporaries of outputs still being
 * written and then end the process with the signal's default action, for
 * SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGXFSZ, where the signal's
 * disposition is still the default.  For programs; the library never
 * installs handlers by itself. */
PYR_API void pyr_atomic_cleanup_on_signals(void);

/* ------------------------------------------------------------------ checks */

/* A path and what it is called in messages ("output.field", "--csv"). */
typedef struct {
    const char *name;
    const char *path;
} pyr_named_path_t;

/* A command's files, checked before it computes anything: every output
 * writable (pyr_check_writable), no two outputs the same file (character
 * devices excepted), no output the same file as an input.  NULL or "" paths
 * are skipped. */
PYR_API pyr_status_t pyr_check_outputs(const pyr_named_path_t *outputs, int noutputs, const pyr_named_path_t *inputs, int ninputs);
/* Check, without creating anything, that `path` could be written (its name
 * fits the file system; its directory exists and is writable; it is not a
 * directory, block device, socket or a loop of links), so that a program
 * fails before a long run rather than after. */
PYR_API pyr_status_t pyr_check_writable(const char *path);
/* 1 when paths a and b name the same file, existing or not yet created, else 0. */
PYR_API int pyr_same_file(const char *a, const char *b);
/* 1 when path is a character device (written in place, harmless to name twice). */
PYR_API int pyr_is_char_device(const char *path);
/* Open an input file for reading ("rb"), refusing what is not a regular file
 * with a message naming `what` ("sweep CSV").  *size: its size in bytes (may
 * be NULL); *missing (may be NULL): 1 when it does not exist. */
PYR_API pyr_status_t pyr_open_input(const char *path, const char *what, FILE **fp, int64_t *size, int *missing);

/* ----------------------------------------------------------------- writers */

/* A NumPy .npy file (version 1.0, little-endian '<f4' or '<f8', C order):
 * ndim 0..8 axes of `shape`, slowest first (a field is (ny, nx)); the data
 * are the product of shape values of the precision, in native byte order. */
PYR_API pyr_status_t pyr_npy_write(const char *path, int ndim, const int64_t *shape, pyr_precision_t p, const void *data);

/* Options of a heat map.  Zero-initialise: members are only ever added at
 * the end, and zero keeps the default. */
typedef struct {
    const char *title; /* optional line above the map; NULL for none */
    int max_pixels;    /* longest side of the map itself; 0 -> 1024 (ignored when image_width is given) */
    int image_width;   /* the whole image's width in pixels (300..8192), the map filling what the axes and the colour
                          bar leave, text growing with it as a line plot's does; 0: as wide as the map needs */
    int colormap;      /* pyr_colormap_t; 0: viridis */
    /* Physical extents: the first and the last column's x, the first and the last row's y.  Axes with ticks and
     * labels are drawn around the map when x0 != x1 or y0 != y1 (all 0: none), and the map keeps the extents'
     * aspect ratio (square cells for equal spacings). */
    double x0, x1, y0, y1;
    const char *xlabel, *ylabel; /* the axes' names; NULL: "x", "y" */
    const char *units;           /* the extents' unit, shown beside each axis's name ("x [m]"); NULL: none */
    const char *bar_label;       /* the colour bar's name (the field's, and its unit), above the bar; NULL: none */
    int y_up;                    /* row 0 at the bottom, y rising upward (a plot's, a FITS viewer's way); 0: row 0 on top */
} pyr_heatmap_opts_t;

/* The heat map's colour maps. */
typedef enum {
    PYR_COLORMAP_VIRIDIS = 0, /* sequential: dark purple, blue, teal, green, yellow (lightness rising) */
    PYR_COLORMAP_AUTO,        /* diverging for a field with both signs, else viridis */
    PYR_COLORMAP_GRAY,        /* sequential: black to white */
    PYR_COLORMAP_DIVERGING    /* blue, white at 0, red, over the symmetric range +-max|v| */
} pyr_colormap_t;

/* A colour heat map (PNG) of a width x height field (row 0 at the top unless
 * y_up, x fastest in memory: a NumPy (height, width) array) with a labelled
 * colour bar.  Big fields are box-averaged down to the map's pixels, small
 * ones enlarged; NaN is grey, +-inf the end colours.  opts may be NULL. */
PYR_API pyr_status_t pyr_png_write_heatmap(const char *path, const void *data, pyr_precision_t p, int64_t width, int64_t height,
                                           const pyr_heatmap_opts_t *opts);

/* One series of a line plot. */
typedef struct {
    const char *label; /* legend text; NULL or "" leaves the series out of the legend */
    const double *x;
    const double *y;
    int n;
    int markers; /* 0 lines, 1 markers, 2 both */
} pyr_plot_series_t;

/* Options of a line plot.  Zero-initialise: members are only ever added at
 * the end, and zero keeps the default. */
typedef struct {
    const char *title, *xlabel, *ylabel; /* each may be NULL */
    int log_y;                           /* logarithmic y axis; y <= 0 points are left out */
    int width, height;                   /* 0 -> 900 x 600 */
    int log_x;                           /* logarithmic x axis; x <= 0 points are left out */
} pyr_plot_opts_t;

/* A line plot (PNG) of the series, each in its own colour and marker shape,
 * with axes, ticks, titles and a legend.  Non-finite points (and
 * non-positive ones on a log axis) are skipped and the line breaks there.
 * opts may be NULL. */
PYR_API pyr_status_t pyr_plot_write_png(const char *path, const pyr_plot_series_t *series, int nseries, const pyr_plot_opts_t *opts);

/* The names an MPI run writes for output PATH: the part of a rank,
 * PATH.rankNNNN.npy, and the index, PATH.parts.json (PATH less a ".npy"
 * ending).  NULL outputs are skipped. */
PYR_API void pyr_npy_part_names(const char *path, int rank, char *part, size_t part_size, char *index, size_t index_size);
/* One .npy at `out` from the parts an index names (`pyrgrid assemble`):
 * checks that they tile the array exactly once (each part a file of its own,
 * none a link leading out of the index's directory, none the output) and
 * match its dtype, then streams them row by row (one row in memory). */
PYR_API pyr_status_t pyr_npy_assemble(const char *index_path, const char *out);

/* ------------------------------------------------------ solve problem files */

/* A problem file of `pyrgrid solve` held whole: the block-tridiagonal system
 * it describes, the solver's options and the outputs it names
 * (docs/lgs.md). */
typedef struct pyr_lgs_file pyr_lgs_file_t;
/* Read `path` with the overrides "section.key=value" in order (sets: nsets
 * of them, may be NULL for 0); messages name the file, line and a fix. */
PYR_API pyr_status_t pyr_lgs_file_load(const char *path, const char *const *sets, int nsets, pyr_lgs_file_t **file);
PYR_API void pyr_lgs_file_destroy(pyr_lgs_file_t **file);
/* The system it describes (the caller destroys it with pyr_lgs_system_destroy),
 * and the initial iterate (n x m values) for it. */
PYR_API pyr_status_t pyr_lgs_file_system(const pyr_lgs_file_t *file, pyr_lgs_system_t **sys);
PYR_API pyr_status_t pyr_lgs_file_initial(const pyr_lgs_file_t *file, const pyr_lgs_system_t *sys, double *y);
/* The solver's options it gives (owned by the file). */
PYR_API const pyr_lgs_options_t *pyr_lgs_file_options(const pyr_lgs_file_t *file);
/* A key's text: "system.kind", "output.solution", "output.history",
 * "output.image", "output.history_image" (given, or the history's name with
 * .png); NULL when not given or not one of these.  Valid while the file is. */
PYR_API const char *pyr_lgs_file_text(const pyr_lgs_file_t *file, const char *key);
/* The input files it names, labelled by their keys, for pyr_check_outputs:
 * at most max into inputs; returns how many there are. */
PYR_API int pyr_lgs_file_inputs(const pyr_lgs_file_t *file, pyr_named_path_t *inputs, int max);

/* ----------------------------------------------------------------- results */

/* A run's results as a problem file's [output] section names them
 * (pyr_problem_file_outputs): output.field by its extension, .npy (the
 * state field) or .h5 (every field of the scheme with the problem's
 * attributes, snapshots inside, and an XDMF sidecar beside it for 2D and 3D
 * grids), and .npy snapshots NAME_000200.npy every output.every steps,
 * numbered from a restart's step. */
typedef struct pyr_result pyr_result_t;

/* 1 when output.field is HDF5. */
PYR_API int pyr_result_is_h5(const pyr_problem_outputs_t *outputs);
/* The XDMF sidecar of an HDF5 output.field, or "". */
PYR_API void pyr_result_sidecar(const pyr_problem_t *problem, const pyr_problem_outputs_t *outputs, char *out, size_t size);
/* output.field less a ".npy" ending: what .npy snapshots (NAME_000010.npy)
 * and Maxwell's components (NAME_Ez.npy) are named after. */
PYR_API void pyr_result_base(const pyr_problem_outputs_t *outputs, char *out, size_t size);
/* The step and time a run reaches after `done` steps of its own (a
 * restart's step and time added). */
PYR_API int64_t pyr_result_step_of(const pyr_problem_outputs_t *outputs, int64_t done);
PYR_API double pyr_result_time_of(const pyr_problem_t *problem, const pyr_problem_outputs_t *outputs, int64_t done);
/* Before a run that writes .npy snapshots every output.every steps, named
 * PREFIX_000010.npy ... for each of `prefixes`: refuses (PYR_ERR_IO) a
 * snapshot that is the same file as an input or another output, named as one
 * or reached through symbolic links, one that exists already as a link to an
 * input or output, and one that is a link to another snapshot. */
PYR_API pyr_status_t pyr_result_check_snapshots(const pyr_problem_outputs_t *outputs, const char *const *prefixes, int nprefixes,
                                                const pyr_named_path_t *outs, int nout, const pyr_named_path_t *ins, int nin);
/* Before the run (pyr_result_open checks it too): output.field, output.image
 * and output.probes each name a kind of file the program writes (.npy or
 * .h5/.hdf5/.he5; .png; .csv) rather than one it would write in another
 * format under that name; PYR_ERR_CONFIG lists what works.  A path that
 * exists and is no regular file (a device, a FIFO) is left to
 * pyr_check_outputs. */
PYR_API pyr_status_t pyr_result_check_names(const pyr_problem_t *problem, const pyr_problem_outputs_t *outputs);
/* Before the run: output.field's writer (an HDF5 file's temporary, its
 * attributes and inputs).  fields: every field of the scheme in its order
 * (as pyr_execute_fields takes them); problem, outputs and fields must
 * outlive the result. */
PYR_API pyr_status_t pyr_result_open(pyr_result_t **result, const pyr_problem_t *problem, const pyr_problem_outputs_t *outputs,
                                     const pyr_plan_t *plan, pyr_field_t **fields, int nfields);
/* A snapshot at step `done` of this run (a snapshot hook calls it). */
PYR_API pyr_status_t pyr_result_snapshot(pyr_result_t *result, int64_t done);
/* After the run: the final fields (inside the caller's stage, if any). */
PYR_API pyr_status_t pyr_result_final(pyr_result_t *result, const pyr_run_info_t *run);
/* Instead of pyr_result_final, for a run stopped after `done` steps of its
 * own (an interrupt: the fields hold that step): an HDF5 output.field is
 * closed with what it has (its snapshots, and the fields of the step reached
 * as its final ones), marked incomplete (root attributes complete = 0 and
 * steps_done) and committed (inside the caller's stage, if any); a .npy
 * output.field is left as it was (its snapshots are whole).  note (may be
 * NULL) receives the line to show: "interrupted at step N; restart with
 * initial.kind=file initial.file=F initial.step=K ..." naming the latest step
 * a restart accepts (problem-files.md), or why there is none. */
PYR_API pyr_status_t pyr_result_interrupted(pyr_result_t *result, int64_t done, char *note, size_t size);
/* Remove what was not committed and free the result.  Safe on NULL. */
PYR_API void pyr_result_abort(pyr_result_t **result);

/* -------------------------------------------------------------- interrupts */

/* For programs (the library never installs handlers by itself): from now on
 * the first SIGINT (Ctrl-C) only sets a flag that pyr_interrupt_requested
 * reports, so that a cancel hook (pyr_hooks_t.cancel) stops the run and its
 * results are closed with pyr_result_interrupted; a second SIGINT is handled
 * as before the catch (pyr_atomic_cleanup_on_signals' handler, if installed:
 * temporaries removed, the process ended).  pyr_interrupt_release puts the
 * earlier handler back. */
PYR_API void pyr_interrupt_catch(void);
PYR_API void pyr_interrupt_release(void);
/* 1 once a SIGINT arrived since pyr_interrupt_catch. */
PYR_API int pyr_interrupt_requested(void);

/* ----------------------------------------------------------------- reports */

/* The JSON reports of the pyrgrid program's commands (--report FILE.json;
 * docs/cli.md describes them), written as outputs (staged when a stage is
 * active).  A run: problem, options, restart, plan, run, step and time,
 * seconds (plan, initial, execute, output), the rate (cell updates per
 * second), outputs, exit status, versions and machine. */
PYR_API pyr_status_t pyr_run_report_write(const char *path, const pyr_problem_t *problem, const pyr_problem_outputs_t *outputs,
                                          const pyr_options_t *options, const pyr_plan_t *plan, const pyr_run_info_t *run,
                                          const double seconds[4], double gcells, const char *sidecar, int exit_status);
/* The problem, options and plan as one JSON object (`pyrgrid plan --json`),
 * snprintf-style as pyr_plan_json. */
PYR_API size_t pyr_plan_report_json(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_plan_t *plan, char *text,
                                    size_t size);
/* `pyrgrid solve`'s report: the system, options, result, seconds, outputs
 * (solution, history, image, history_image; NULL or "" for none). */
PYR_API pyr_status_t pyr_solve_report_write(const char *path, const char *problem_file, const char *kind, const pyr_lgs_system_t *sys,
                                            const pyr_lgs_options_t *opt, const pyr_lgs_result_t *res, const char *const outputs[4],
                                            int exit_status);
/* `pyrgrid frames`'s report is pyr_frames_report_write (pyrgrid_frames_io.h):
 * a library built without the frames pipeline has none. */

#ifdef __cplusplus
}
#endif

#endif
