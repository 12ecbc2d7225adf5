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
    int max_pixels;    /* longest side of the map itself; 0 -> 1024 */
} pyr_heatmap_opts_t;

/* A colour heat map (PNG) of a width x height field (row 0 at the top, x
 * fastest in memory: a NumPy (height, width) array) with a labelled colour
 * bar.  Big fields are box-averaged down to max_pixels on the longer side,
 * small ones enlarged; NaN is grey, +-inf the end colours.  opts may be NULL. */
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

#ifdef __cplusplus
}
#endif

#endif
