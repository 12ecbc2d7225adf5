/* Fields from files, by the file's extension: .h5/.hdf5/.he5 (io/hdf5.h),
 * otherwise .npy (io/npy.h). */
#ifndef PYR_CORE_FIELD_FILE_H
#define PYR_CORE_FIELD_FILE_H

#include "pyrgrid.h"

/* Read `path` into f (its shape and precision are required of the file);
 * dataset names an HDF5 file's dataset (NULL: "u"). */
pyr_status_t pyr_field_read_file(pyr_field_t *f, const char *path, const char *dataset);
/* The problem's initial field from `path` (dataset NULL: the scheme's first
 * field's name), finite values required, errors prefixed "initial.file: ". */
pyr_status_t pyr_field_init_file(pyr_field_t *f, const pyr_problem_t *p, const char *path, const char *dataset);

#endif
