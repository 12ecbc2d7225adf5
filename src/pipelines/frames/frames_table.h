/* The candidates of `pyrgrid frames` as a table, chosen by the output's
 * name: .ecsv (astropy's Enhanced CSV: column types, units and descriptions
 * in a YAML header), .fits / .fit (a binary table CANDIDATES with TUNITn and
 * TCOMMn), anything else the plain CSV frame,x,y,flux,snr.  Written
 * atomically: nothing at the path until commit, which hands the file to an
 * active stage (pyr_atomic_stage_begin). */
#ifndef PYR_PIPELINES_FRAMES_TABLE_H
#define PYR_PIPELINES_FRAMES_TABLE_H

#include <stdint.h>

#include "pyrgrid.h"

typedef struct {
    int64_t frame;
    double mjd;     /* NAN: unknown */
    double x, y;    /* pixels, 0-based: the centre of the first pixel is (0, 0) */
    double ra, dec; /* degrees (with sky) */
    double flux, snr;
} fr_table_row_t;

typedef struct {
    int sky;               /* ra and dec columns */
    int mjd;               /* an mjd column */
    const char *wcs;       /* the WCS's axes and frame, for the descriptions ("RA---TAN DEC--TAN ICRS") */
    const char *positions; /* whose pixel grid x, y are in, for the description */
} fr_table_opts_t;

typedef struct fr_table fr_table_t;

/* 1 when the name asks for a table of units and sky positions (.ecsv,
 * .fits, .fit), 0 for the plain CSV. */
int fr_table_is_rich(const char *path);
pyr_status_t fr_table_open(const char *path, const fr_table_opts_t *opts, fr_table_t **table);
pyr_status_t fr_table_add(fr_table_t *table, const fr_table_row_t *row);
pyr_status_t fr_table_commit(fr_table_t **table);
void fr_table_abort(fr_table_t **table);

#endif
