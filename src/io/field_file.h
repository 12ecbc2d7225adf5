/* Fields from files, by the file's extension: .h5/.hdf5/.he5 (io/hdf5.h),
 * otherwise .npy (io/npy.h). */
#ifndef PYR_IO_FIELD_FILE_H
#define PYR_IO_FIELD_FILE_H

#include "pyrgrid.h"

/* Read `path` into f (its shape and precision are required of the file);
 * dataset names an HDF5 file's dataset (NULL: "u"). */
pyr_status_t pyr_field_read_file(pyr_field_t *f, const char *path, const char *dataset);

/* Read nodes origin .. origin + part->n - 1 of the grid function in `path`
 * (HDF5 dataset `dataset`, NULL "u", or .npy), which must hold a grid of
 * `dims` dimensions, n[] nodes per axis and part's precision, into part. */
pyr_status_t pyr_field_read_part(pyr_field_t *part, int dims, const int64_t n[3], const char *path, const char *dataset,
                                 const int64_t origin[3]);

#endif
