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
#include "pyrgrid_frames.h"
#include "pyrgrid_frames_io.h"

/* The public row and options (pyrgrid_frames_io.h), under the names the
 * pipeline's files use. */
typedef pyr_frames_table_row_t fr_table_row_t;
typedef pyr_frames_table_opts_t fr_table_opts_t;

typedef struct fr_table fr_table_t;

/* 1 when the name asks for a table of units and sky positions (.ecsv,
 * .fits, .fit), 0 for the plain CSV. */
int fr_table_is_rich(const char *path);
pyr_status_t fr_table_open(const char *path, const fr_table_opts_t *opts, fr_table_t **table);
pyr_status_t fr_table_add(fr_table_t *table, const fr_table_row_t *row);
pyr_status_t fr_table_commit(fr_table_t **table);
void fr_table_abort(fr_table_t **table);

#endif
