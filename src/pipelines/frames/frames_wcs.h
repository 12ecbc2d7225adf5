/* Sky positions and times of frames from their FITS headers: the celestial
 * WCS through wcslib (TAN, SIN, ZEA, ... with SIP or TPV distortions, as
 * wcslib reads them), and the time of observation as an MJD. */
#ifndef PYR_PIPELINES_FRAMES_WCS_H
#define PYR_PIPELINES_FRAMES_WCS_H

#include "io/fits.h"
#include "pyrgrid.h"

typedef struct fr_wcs fr_wcs_t;

/* The celestial WCS of a header's cards.  *wcs = NULL (and PYR_OK) when the
 * header has no WCS keywords (CTYPEn, CRVALn, CDi_j, PCi_j) or its axes are
 * not celestial; PYR_ERR_FORMAT, naming `where` and wcslib's reason, when
 * it has them and wcslib cannot read them. */
pyr_status_t fr_wcs_open(const pyr_fits_info_t *header, const char *where, fr_wcs_t **wcs);
/* RA and Dec (degrees, the WCS's frame: RADESYS) of the 0-based pixel
 * position (x, y): x along NAXIS1, y along NAXIS2, the centre of the first
 * pixel at (0, 0), as FITS's 1-based (x + 1, y + 1) and astropy's
 * pixel_to_world(x, y).  PYR_ERR_NUMERIC where the projection has no sky. */
pyr_status_t fr_wcs_sky(fr_wcs_t *wcs, double x, double y, double *ra, double *dec);
/* The axis names ("RA---TAN-SIP") and the frame ("ICRS") for a notice or a
 * table's description. */
const char *fr_wcs_describe(const fr_wcs_t *wcs);
void fr_wcs_close(fr_wcs_t **wcs);

/* The header's time of observation as a Modified Julian Date: MJD-OBS, or
 * DATE-OBS (ISO 8601, "2026-11-27T03:14:15.9"; a date alone takes its time
 * from TIME-OBS or UT), in the header's own time scale (TIMESYS, UTC when
 * absent).  0 when the header gives neither. */
int fr_header_mjd(const pyr_fits_info_t *header, double *mjd);
/* ISO 8601 date (and time) to MJD; 0 when the text is not one. */
int fr_iso_to_mjd(const char *iso, double *mjd);

#endif
