/* FITS images through cfitsio: read 2D images and 3D cubes frame by frame,
 * write float cubes frame by frame, atomically (temporary + rename, as every
 * pyrgrid output; io/atomic.h).  File names are taken as they are, never
 * as cfitsio's extended syntax ("run(1).fits" and "x[1].fits" are plain
 * names).
 *
 * Reading opens the first HDU that holds an image of two or more axes (the
 * primary HDU, or the first image extension when the primary is empty).
 * NAXIS1 = nx (fastest), NAXIS2 = ny, NAXIS3 = frames (1 for a 2D image); more
 * axes of length > 1 are refused.  BSCALE/BZERO are applied; integer BLANK
 * pixels read as NaN.  16-bit images with BSCALE = 1 and BZERO = 0 or 32768
 * can also be read without conversion (int16 / uint16) so that they move to a
 * GPU at half the bytes.
 *
 * The header cards that describe the observation (everything but the
 * structural keywords: SIMPLE, BITPIX, NAXISn, EXTEND, BSCALE, BZERO, BLANK,
 * XTENSION, PCOUNT, GCOUNT, CHECKSUM, DATASUM, and the extension's name:
 * EXTNAME, EXTVER, INHERIT) are kept as 80-character cards
 * so that a writer can copy them (EXPTIME, DATE-OBS, OBJECT, WCS, ...). */
#ifndef PYR_IO_FITS_H
#define PYR_IO_FITS_H

#include <stdint.h>

#include "pyrgrid.h"

typedef enum {
    PYR_FITS_F32 = 0, /* float (any BITPIX, scaled) */
    PYR_FITS_U16,     /* BITPIX 16, BZERO 32768, BSCALE 1: unsigned 16-bit counts */
    PYR_FITS_I16      /* BITPIX 16, BZERO 0, BSCALE 1 */
} pyr_fits_type_t;

typedef struct {
    int64_t nx, ny, nframes;
    int bitpix;
    double bscale, bzero;
    pyr_fits_type_t native; /* the cheapest exact type to read the pixels as */
    int hdu;                /* 1-based HDU number of the image */
    int tile_compressed;    /* the image is tile-compressed (RICE_1, GZIP_1, ...): cfitsio decodes the tiles */
    int ncards;
    char (*cards)[81]; /* kept header cards, NUL-terminated */
} pyr_fits_info_t;

typedef struct pyr_fits_reader pyr_fits_reader_t;

/* Open `path` for reading; fills info (cards owned by the reader).  A
 * gzip-compressed file (cube.fits.gz) is read too: cfitsio unpacks it into
 * memory.  Errors (PYR_ERR_IO for a missing or unreadable file, or one that
 * is not a regular file; PYR_ERR_FORMAT for a file that is not FITS, has no
 * image, an image of unsupported shape, or a header that promises more data
 * than the file holds) name the file and the reason.  Close with
 * pyr_fits_close. */
pyr_status_t pyr_fits_open(const char *path, pyr_fits_reader_t **reader, pyr_fits_info_t *info);
/* The image HDUs (1-based) whose EXTNAME is names[i] (case-insensitive), in
 * hdus[i]; 0 where the file has none (the first of several).  Every header
 * is checked as pyr_fits_open checks it before cfitsio reads it. */
pyr_status_t pyr_fits_find_extensions(const char *path, const char *const *names, int n, int *hdus);
/* pyr_fits_open at image HDU `hdu` (1-based) rather than the first image;
 * its cards are its own and those of the primary HDU. */
pyr_status_t pyr_fits_open_hdu(const char *path, int hdu, pyr_fits_reader_t **reader, pyr_fits_info_t *info);
/* Read frame `index` (0-based) as `type` into out (nx*ny values).  Reading a
 * 16-bit type from a file whose native type differs fails (PYR_ERR_ARG). */
pyr_status_t pyr_fits_read_frame(pyr_fits_reader_t *reader, int64_t index, pyr_fits_type_t type, void *out);
/* Frame `index` of an integer image as 32-bit patterns (a bit mask: 8-, 16-
 * or 32-bit, unscaled, or unsigned by BZERO 32768 / 2^31); any other
 * BITPIX, BSCALE or BZERO is refused (PYR_ERR_FORMAT) naming the HDU. */
pyr_status_t pyr_fits_read_bits(pyr_fits_reader_t *reader, int64_t index, uint32_t *out);
void pyr_fits_close(pyr_fits_reader_t **reader);

/* Value of a kept card's keyword ("EXPTIME", or "HIERARCH MP_DETECTED" for
 * a long one) as text (quotes removed) into buf; returns 0 when absent. */
int pyr_fits_card_value(const pyr_fits_info_t *info, const char *key, char *buf, size_t size);

typedef struct pyr_fits_writer pyr_fits_writer_t;

/* A FITS output must be a regular file (or not exist yet): cfitsio seeks
 * while writing, so a character device or a FIFO is refused, with a message
 * saying what would work.  Lets a program refuse it before computing. */
pyr_status_t pyr_fits_check_output(const char *path);

/* Start a float (BITPIX -32) image: a cube nx x ny x nframes (nframes 1: a 2D
 * image).  `cards` (may be NULL) are copied into the primary header, then
 * `history` lines as HISTORY cards.  Nothing appears at `path` until
 * pyr_fits_writer_commit (which hands the file to an active stage,
 * pyr_atomic_stage_begin).  pyr_fits_check_output's rule applies. */
pyr_status_t pyr_fits_writer_open(const char *path, int64_t nx, int64_t ny, int64_t nframes, const char (*cards)[81],
                                  int ncards, const char *const *history, int nhistory, pyr_fits_writer_t **writer);
/* Write frame `index` (any order; every frame must be written once). */
pyr_status_t pyr_fits_writer_frame(pyr_fits_writer_t *writer, int64_t index, const float *data);
/* Add a binary table extension "FRAMES" with one row per frame: FRAME (J),
 * DX, DY (E), ITER (J), and, when given, DATE-OBS (24A) and EXPTIME (D). */
pyr_status_t pyr_fits_writer_frames_table(pyr_fits_writer_t *writer, int64_t n, const float *dx, const float *dy,
                                          const int *iterations, const char (*date_obs)[25], const double *exptime);
/* Close and rename onto the path; frees the writer (sets it to NULL). */
pyr_status_t pyr_fits_writer_commit(pyr_fits_writer_t **writer);
/* Drop everything written; safe on NULL. */
void pyr_fits_writer_abort(pyr_fits_writer_t **writer);

/* A column of a binary table: type 'J' (int32), 'E' (float) or 'D' (double),
 * nrows values at data; unit and description (TCOMMn) may be NULL. */
typedef struct {
    const char *name, *unit, *description;
    char type;
    const void *data;
} pyr_fits_column_t;

/* A file of an empty primary HDU (with `cards`, may be NULL) and one binary
 * table `extname`, written whole and atomically (handed to an active stage,
 * pyr_atomic_stage_begin); pyr_fits_check_output's rule applies. */
pyr_status_t pyr_fits_write_table(const char *path, const char *extname, const pyr_fits_column_t *cols, int ncols, int64_t nrows,
                                  const char (*cards)[81], int ncards);

#endif
