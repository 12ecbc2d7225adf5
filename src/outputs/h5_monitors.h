/* Maxwell's monitors in an HDF5 result: a group per monitor under /monitors
 * (pyr_spectra_t, maxwell_monitors.c):
 *
 *   /monitors/NAME          attributes kind ("dft" or "flux"), components ("Ey Hz"), lo, hi (the nodes
 *                           transformed, x y z), axis (a plane's normal: x, y or z; "" otherwise), steps
 *   /monitors/NAME/freqs    the frequencies
 *   /monitors/NAME/flux     a flux monitor's power spectrum P(f)
 *   /monitors/NAME/C_re, C_im  component C's transforms, float64 in NumPy order (nfreq, ny, nx) on a 2D
 *                           grid; on a 3D grid (nfreq * nz, ny, nx) with the attribute nfreq: reshape to
 *                           (nfreq, nz, ny, nx) */
#ifndef PYR_OUTPUTS_H5_MONITORS_H
#define PYR_OUTPUTS_H5_MONITORS_H

#include "io/hdf5.h"
#include "outputs/h5_result.h"
#include "pyrgrid.h"

pyr_status_t pyr_h5_write_monitors(pyr_h5_file_t *file, const pyr_spectra_t *spectra, int dims, int compression);
/* The file an open writer writes (h5_result.c). */
pyr_h5_file_t *pyr_h5_writer_file(pyr_h5_writer_t *w);

#endif
