/* Frame sequences on disk for the frames pipeline: a FITS cube (NAXIS3 =
 * frames), a list of 2D FITS files (one frame each), or a .npy stack
 * (T, ny, nx) of uint16, int16, float32 or float64 — read one frame at a time.
 * A FITS file in the layout of survey calibrated exposures (extensions
 * EXTNAME = IMAGE, MASK, VARIANCE: the science plane, an integer bit mask
 * and the variance; one exposure per file, or cubes of the three planes) is
 * recognised by its extension names: the science plane is the frame, and
 * the mask and variance planes are read beside it;
 * and the residual written one frame at a time as a FITS cube or a .npy
 * stack, atomically (nothing at the path until commit). */
#ifndef PYR_PIPELINES_FRAMES_IO_H
#define PYR_PIPELINES_FRAMES_IO_H

#include <stdint.h>

#include "io/fits.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"

typedef struct fr_source fr_source_t;

typedef struct {
    int64_t nx, ny, nframes;
    pyr_frames_dtype_t type; /* what fr_source_read delivers */
    const char *kind;        /* "FITS cube", "FITS files", "npy stack" */
    const char *notice;      /* a fallback taken while opening (mixed pixel types), or "" */
    const pyr_fits_info_t *fits; /* the first FITS file's header (cards), NULL for .npy */
    int has_mask, has_variance;  /* calexp layout: MASK / VARIANCE planes beside the science plane */
} fr_source_info_t;

/* Open the inputs: one .npy stack, one FITS cube, or several 2D FITS files
 * (all of one size; mixed pixel types are read as float, with a notice).
 * Errors name the file and what is wrong. */
pyr_status_t fr_source_open(const char *const *paths, int npaths, fr_source_t **src, fr_source_info_t *info);
/* Frame i into buf (nx*ny values of info.type). */
pyr_status_t fr_source_read(fr_source_t *src, int64_t i, void *buf);
/* Which bits of the MASK plane mark a pixel bad: "all" (the default), a
 * number (decimal or 0x hex), or a comma-separated list of numbers and of
 * mask plane names that the MASK header defines (MP_BAD = 0, MP_SAT = 1, ...
 * in every file of the sequence).  Errors name the file and the names it
 * defines. */
pyr_status_t fr_source_set_mask_bits(fr_source_t *src, const char *spec);
/* Frame i's bad pixels (info.has_mask): mask[k] = 1 where the MASK plane has
 * one of the chosen bits, else 0. */
pyr_status_t fr_source_read_mask(fr_source_t *src, int64_t i, uint8_t *mask);
/* Frame i's variance plane (info.has_variance), nx*ny floats. */
pyr_status_t fr_source_read_variance(fr_source_t *src, int64_t i, float *variance);
/* Frame i's header (the cube's, or its own file's science plane with the
 * primary HDU's cards); NULL for .npy or a file that can no longer be read.
 * Valid until the next call or fr_source_close. */
const pyr_fits_info_t *fr_source_frame_header(fr_source_t *src, int64_t i);
/* The file frame i is in (the cube's, or its own). */
const char *fr_source_frame_path(const fr_source_t *src, int64_t i);
/* DATE-OBS and EXPTIME of frame i (from its own FITS file, or the cube's
 * header); "" / NAN when absent. */
void fr_source_frame_keys(const fr_source_t *src, int64_t i, char date_obs[25], double *exptime);
void fr_source_close(fr_source_t **src);

size_t fr_dtype_size(pyr_frames_dtype_t t);

/* A float32 .npy stack (T, ny, nx) written frame by frame in order. */
typedef struct fr_npy_writer fr_npy_writer_t;
pyr_status_t fr_npy_writer_open(const char *path, int64_t nframes, int64_t ny, int64_t nx, fr_npy_writer_t **w);
pyr_status_t fr_npy_writer_frame(fr_npy_writer_t *w, const float *data);
pyr_status_t fr_npy_writer_commit(fr_npy_writer_t **w);
void fr_npy_writer_abort(fr_npy_writer_t **w);

#endif
