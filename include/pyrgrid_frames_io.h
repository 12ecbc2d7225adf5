/* pyrgrid frames' files: what `pyrgrid frames` reads its frames and its
 * configuration with and writes its results with, for C programs that run
 * the frames pipeline (pyrgrid_frames.h) on files of their own.
 *
 *  - a configuration: the [frames] section of an INI file and its
 *    "frames.key=value" overrides, the pipeline's options and the files
 *    (input, residual, shifts, candidates, snr_image, max_snr, mask_bits,
 *    tracks) and the linking's link_* keys;
 *  - a source: a FITS cube (NAXIS3 = frames), a list of 2D FITS files, a
 *    survey's calibrated exposures (extensions IMAGE, MASK, VARIANCE: one per
 *    file, or cubes of the three planes) or a .npy stack (T, ny, nx) of
 *    uint16, int16, float32 or float64, read one frame at a time, with each
 *    frame's MASK and VARIANCE planes, time and sky coordinates (WCS);
 *  - a cube: the residual (or any float sequence) written frame by frame as
 *    a FITS cube that keeps the source's header cards and gains a FRAMES
 *    table of the shifts, or as a float32 .npy stack;
 *  - a table: the candidates as CSV, astropy's ECSV or a FITS binary table,
 *    with units, times (MJD) and sky positions (RA, Dec);
 *  - tracks: the candidates linked into straight lines at constant velocity,
 *    as a table of the same kinds.
 *
 * Every output is written as pyrgrid_output.h describes: under a temporary
 * name, renamed over its path on commit (or handed to the stage active on
 * the thread), never half-written, and an abort leaves the old file as it
 * was.  Failures return a status and leave a message for pyr_last_error()
 * naming the file and what would work.
 *
 * Part of builds with the frames pipeline only (PYR_WITH_FRAMES=ON, the
 * default): a library built without it has none of these functions.
 * Include it after pyrgrid.h and pyrgrid_frames.h. */
#ifndef PYRGRID_FRAMES_IO_H
#define PYRGRID_FRAMES_IO_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"
#include "pyrgrid_frames.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------- configuration */

/* The [frames] section: every key of pyr_frames_options_set and the
 * program's files.  docs/frames.md lists the keys. */
typedef struct pyr_frames_config pyr_frames_config_t;

/* The defaults (pyr_frames_options_default, the program's default file
 * names); the caller owns the result. */
PYR_API pyr_status_t pyr_frames_config_create(pyr_frames_config_t **config);
PYR_API void pyr_frames_config_destroy(pyr_frames_config_t **config);
/* Read an INI file's [frames] section over what config holds (another
 * section is an error naming the file and line). */
PYR_API pyr_status_t pyr_frames_config_load(pyr_frames_config_t *config, const char *path);
/* One "frames.key=value" (the section may be left out). */
PYR_API pyr_status_t pyr_frames_config_set(pyr_frames_config_t *config, const char *assignment);
/* The pipeline's options it holds; valid while config is. */
PYR_API const pyr_frames_options_t *pyr_frames_config_options(const pyr_frames_config_t *config);
/* A file key's text: "input" (paths or glob patterns separated by spaces),
 * "residual", "shifts", "candidates", "snr_image", "max_snr", "tracks" (""
 * for none) or "mask_bits"; NULL for any other key.  Valid while config is
 * and until it is next changed. */
PYR_API const char *pyr_frames_config_text(const pyr_frames_config_t *config, const char *key);
/* The linking's options (the link_* keys; pyr_frames_link); valid while
 * config is. */
typedef struct pyr_frames_link_options_s pyr_frames_link_options_t;
PYR_API const pyr_frames_link_options_t *pyr_frames_config_link_options(const pyr_frames_config_t *config);

/* ------------------------------------------------------------------ source */

typedef struct pyr_frames_source pyr_frames_source_t;

/* What a source holds.  Zero-initialise: members are only ever added at the
 * end (pyr_struct_size("pyr_frames_source_info_t")). */
typedef struct {
    int64_t nx, ny, nframes;
    pyr_frames_dtype_t type;  /* what pyr_frames_source_read delivers */
    const char *kind;         /* "FITS cube", "FITS files", "calexp cube", "calexp files", "npy stack" */
    const char *notice;       /* a fallback taken while opening (mixed pixel types are read as float), or "" */
    int has_mask;             /* MASK planes beside the science plane (pyr_frames_source_read_mask) */
    int has_variance;         /* VARIANCE planes (pyr_frames_source_read_variance) */
    int has_header;           /* FITS headers: cards, times and WCS (0 for .npy) */
} pyr_frames_source_info_t;

/* Open the inputs: one .npy stack, one FITS cube, or several 2D FITS files
 * of one size.  Errors name the file and what is wrong. */
PYR_API pyr_status_t pyr_frames_source_open(const char *const *paths, int npaths, pyr_frames_source_t **source);
PYR_API void pyr_frames_source_close(pyr_frames_source_t **source);
/* Its info; the strings are valid while the source is. */
PYR_API void pyr_frames_source_get_info(const pyr_frames_source_t *source, pyr_frames_source_info_t *info);
/* Bytes of one value of a frame type. */
PYR_API size_t pyr_frames_dtype_size(pyr_frames_dtype_t type);
/* Frame i into buf: nx*ny values of info.type, x fastest. */
PYR_API pyr_status_t pyr_frames_source_read(pyr_frames_source_t *source, int64_t i, void *buf);
/* Which bits of the MASK planes mark a pixel bad: "all" (the default), a
 * number (decimal or 0x hex), or a comma-separated list of numbers and of the
 * plane names the MASK headers define (MP_BAD = 0, MP_SAT = 1, ...). */
PYR_API pyr_status_t pyr_frames_source_set_mask_bits(pyr_frames_source_t *source, const char *spec);
/* Frame i's bad pixels (info.has_mask): nx*ny bytes, 1 where the MASK plane
 * has one of the chosen bits, else 0 (as pyr_frames_set_mask takes them). */
PYR_API pyr_status_t pyr_frames_source_read_mask(pyr_frames_source_t *source, int64_t i, uint8_t *mask);
/* Frame i's variance plane (info.has_variance): nx*ny floats. */
PYR_API pyr_status_t pyr_frames_source_read_variance(pyr_frames_source_t *source, int64_t i, float *variance);
/* Frame i's DATE-OBS and EXPTIME: "" and NAN where absent (and for .npy). */
PYR_API void pyr_frames_source_frame_keys(const pyr_frames_source_t *source, int64_t i, char date_obs[25], double *exptime);
/* Frame i's time of observation as a Modified Julian Date (MJD-OBS, or
 * DATE-OBS with TIME-OBS or UT, in the header's TIMESYS): NAN when its
 * header gives none (and for .npy); an error when the header can no longer
 * be read. */
PYR_API pyr_status_t pyr_frames_source_frame_mjd(pyr_frames_source_t *source, int64_t i, double *mjd);
/* Where frame i is, for messages: "night1/a.fits (HDU 2)", or the .npy's name. */
PYR_API void pyr_frames_source_frame_name(pyr_frames_source_t *source, int64_t i, char *out, size_t size);

/* --------------------------------------------------------------------- WCS */

/* A frame's celestial WCS, read by wcslib (TAN, SIN, ZEA, ... with SIP or
 * TPV distortions). */
typedef struct pyr_frames_wcs pyr_frames_wcs_t;

/* Frame i's WCS; *wcs = NULL (and PYR_OK) when its header has none, or its
 * axes are not celestial, or the source is a .npy; PYR_ERR_FORMAT, naming the
 * frame's file and HDU and wcslib's reason, when wcslib cannot read it. */
PYR_API pyr_status_t pyr_frames_source_frame_wcs(pyr_frames_source_t *source, int64_t i, pyr_frames_wcs_t **wcs);
/* RA and Dec (degrees, in the WCS's RADESYS) of the 0-based pixel position
 * (x, y): the centre of the first pixel at (0, 0), as astropy's
 * pixel_to_world(x, y).  PYR_ERR_NUMERIC where the projection has no sky. */
PYR_API pyr_status_t pyr_frames_wcs_sky(pyr_frames_wcs_t *wcs, double x, double y, double *ra, double *dec);
/* The axes and frame ("RA---TAN-SIP DEC--TAN-SIP ICRS"); "" for NULL. */
PYR_API const char *pyr_frames_wcs_describe(const pyr_frames_wcs_t *wcs);
PYR_API void pyr_frames_wcs_destroy(pyr_frames_wcs_t **wcs);

/* ----------------------------------------------------------- cubes, images */

/* A float sequence nx x ny x nframes written frame by frame: .npy (a float32
 * stack (nframes, ny, nx), frames in order) or, for any other name, FITS
 * (BITPIX -32, frames in any order, each once). */
typedef struct pyr_frames_cube pyr_frames_cube_t;

/* Before a long run: .npy names pass; a FITS output must be a regular file
 * or not exist yet (cfitsio seeks while writing: a character device or a
 * FIFO is refused, saying what would work). */
PYR_API pyr_status_t pyr_frames_cube_check_output(const char *path);
/* header (may be NULL): a FITS cube copies the source's first header cards
 * (the instrument's, the WCS) into its primary header; then `history` lines
 * (nhistory, may be 0) as HISTORY cards.  Nothing is at the path until commit. */
PYR_API pyr_status_t pyr_frames_cube_open(const char *path, int64_t nx, int64_t ny, int64_t nframes, const pyr_frames_source_t *header,
                                          const char *const *history, int nhistory, pyr_frames_cube_t **cube);
/* Frame `index` (nx*ny floats). */
PYR_API pyr_status_t pyr_frames_cube_write(pyr_frames_cube_t *cube, int64_t index, const float *data);
/* A FITS cube's FRAMES table, one row per frame: FRAME, DX, DY, ITER and,
 * when the source's headers give them (source may be NULL), DATE-OBS and
 * EXPTIME.  A .npy stack has no table: nothing is written. */
PYR_API pyr_status_t pyr_frames_cube_shifts(pyr_frames_cube_t *cube, int64_t nframes, const float *dx, const float *dy,
                                            const int *iterations, const pyr_frames_source_t *source);
/* Close and rename onto the path (or hand it to the active stage); frees
 * the cube (*cube becomes NULL).  Every frame must have been written. */
PYR_API pyr_status_t pyr_frames_cube_commit(pyr_frames_cube_t **cube);
/* Drop what was written; safe on NULL. */
PYR_API void pyr_frames_cube_abort(pyr_frames_cube_t **cube);
/* One nx x ny float image, whole: .npy (ny, nx), or FITS (NAXIS 2) with the
 * header's cards and history lines as pyr_frames_cube_open takes them. */
PYR_API pyr_status_t pyr_frames_image_write(const char *path, int64_t nx, int64_t ny, const float *data, const pyr_frames_source_t *header,
                                            const char *const *history, int nhistory);

/* ------------------------------------------------------------------- table */

/* A candidate's row.  Zero-initialise: members are only ever added at the
 * end (pyr_struct_size("pyr_frames_table_row_t")). */
typedef struct {
    int64_t frame;
    double mjd;     /* NAN: unknown */
    double x, y;    /* pixels, 0-based: the centre of the first pixel is (0, 0) */
    double ra, dec; /* degrees (tables with sky) */
    double flux, snr;
    int64_t track;  /* the track it belongs to (pyr_frames_link), -1: none; written where opts.track is set */
} pyr_frames_table_row_t;

/* What a rich table holds.  Zero-initialise: members are only ever added at
 * the end (pyr_struct_size("pyr_frames_table_opts_t")). */
typedef struct {
    int sky;               /* ra and dec columns */
    int mjd;               /* an mjd column */
    const char *wcs;       /* the WCS's axes and frame, for the descriptions (pyr_frames_wcs_describe) */
    const char *positions; /* whose pixel grid x, y are in, for the description */
    int track;             /* a track column (the rows' track: pyr_frames_link) */
} pyr_frames_table_opts_t;

/* The candidates, by the output's name: .ecsv (astropy's Enhanced CSV: types,
 * units and descriptions in a YAML header), .fits / .fit (a binary table
 * CANDIDATES with TUNITn and TCOMMn), anything else the plain CSV
 * frame,x,y,flux,snr. */
typedef struct pyr_frames_table pyr_frames_table_t;

/* 1 when the name asks for a table of units and sky positions (.ecsv, .fits,
 * .fit), 0 for the plain CSV. */
PYR_API int pyr_frames_table_is_rich(const char *path);
/* opts may be NULL (no sky, no mjd). */
PYR_API pyr_status_t pyr_frames_table_open(const char *path, const pyr_frames_table_opts_t *opts, pyr_frames_table_t **table);
PYR_API pyr_status_t pyr_frames_table_add(pyr_frames_table_t *table, const pyr_frames_table_row_t *row);
/* Write out and rename onto the path (or hand it to the active stage);
 * frees the table (*table becomes NULL). */
PYR_API pyr_status_t pyr_frames_table_commit(pyr_frames_table_t **table);
/* Drop it; safe on NULL. */
PYR_API void pyr_frames_table_abort(pyr_frames_table_t **table);

/* ----------------------------------------------------------------- linking */

/* Detections of one mover in successive frames joined into a track that
 * moves in a straight line at constant velocity (docs/frames.md#tracks).
 * Zero-initialise: members are only ever added at the end. */
struct pyr_frames_link_options_s {
    int min_detections; /* detections a track needs (3), >= 3 */
    int max_gap;        /* frames a track may skip between two detections (2), 0..1000 */
    double max_speed;   /* pixels per frame (10) */
    double min_speed;   /* pixels per frame (0.1): slower tracks are stationary objects, not movers */
    double max_residual; /* pixels (1): every detection within this of the fitted line */
};

PYR_API void pyr_frames_link_options_default(pyr_frames_link_options_t *options);
/* By the [frames] keys link_min_detections, link_max_gap, link_max_speed,
 * link_min_speed and link_max_residual ("frames." may lead), checked as a
 * configuration file's line is. */
PYR_API pyr_status_t pyr_frames_link_options_set(pyr_frames_link_options_t *options, const char *key, const char *value);
/* Checks ranges; the message names the key and what would work. */
PYR_API pyr_status_t pyr_frames_link_options_validate(const pyr_frames_link_options_t *options);

/* A track: a least-squares line through its detections' positions against
 * frame index (and against MJD, where every detection has one). */
typedef struct {
    int64_t id;                     /* 0, 1, ...: by first frame, then y0, then x0 */
    int64_t n;                      /* detections */
    int64_t first_frame, last_frame;
    double first_mjd, last_mjd;     /* NAN: unknown */
    double x0, y0;                  /* the fitted position at first_frame, 0-based pixels as the rows' */
    double vx, vy;                  /* pixels per frame */
    double vx_day, vy_day;          /* pixels per day (NAN without every MJD) */
    double ra, dec;                 /* degrees at (x0, y0) by the WCS (NAN without) */
    double rate, pa;                /* arcsec per hour and position angle (degrees east of north) on the sky,
                                     * between the fitted positions at the first and last frames (NAN
                                     * without a WCS and the two MJDs) */
    double rms;                     /* root mean square distance of the detections from the line, pixels */
    double snr_mean;                /* mean SNR of the detections */
} pyr_frames_track_t;

/* Link the candidates rows[0..n) (any order: frame, x, y, mjd and snr are
 * read; x, y in one pixel grid for the whole run): track_of[i] (n values,
 * may be NULL) gets row i's track id or -1, *tracks (freed with
 * pyr_frames_tracks_free; NULL when none) and *ntracks the tracks.  wcs (may
 * be NULL) gives ra, dec, rate and pa.  The result does not depend on the
 * rows' order (docs/frames.md#tracks gives the rule that breaks ties). */
PYR_API pyr_status_t pyr_frames_link(const pyr_frames_table_row_t *rows, int64_t n, const pyr_frames_link_options_t *options,
                                     pyr_frames_wcs_t *wcs, int64_t *track_of, pyr_frames_track_t **tracks, int64_t *ntracks);
PYR_API void pyr_frames_tracks_free(pyr_frames_track_t **tracks);
/* The tracks as a table, chosen by the name as the candidates' (.ecsv, .fits
 * / .fit: a binary table TRACKS; anything else a plain CSV), one row per
 * track; opts (may be NULL) as the candidates': mjd adds first_mjd,
 * last_mjd, vx_day and vy_day, sky ra and dec, both rate and pa.  Written
 * whole and atomically (handed to an active stage). */
PYR_API pyr_status_t pyr_frames_tracks_write(const char *path, const pyr_frames_track_t *tracks, int64_t ntracks,
                                             const pyr_frames_table_opts_t *opts);

/* ------------------------------------------------------------------ report */

/* `pyrgrid frames`'s JSON report (--report FILE.json; docs/cli.md), written
 * as an output (staged when a stage is active): inputs, sequence, options,
 * seconds, counts (with the tracks linked: ntracks >= 0; -1 where the
 * candidates were not linked), outputs (residual, shifts, candidates,
 * snr_image, max_snr, tracks; NULL or "" for none), versions and machine. */
PYR_API pyr_status_t pyr_frames_report_write(const char *path, const char *config, const char *const *inputs, int ninputs, int64_t nx,
                                             int64_t ny, int64_t nframes, const pyr_frames_options_t *o, const pyr_frames_stats_t *fs,
                                             double seconds, const char *const outputs[6], int64_t ntracks);

#ifdef __cplusplus
}
#endif

#endif
