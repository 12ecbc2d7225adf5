/* Fields from files, by the file's extension (io/field_file.h). */
#include "io/field_file.h"

#include "io/hdf5.h"
#include "io/npy.h"
#include "io/npy_part.h"

pyr_status_t pyr_field_read_file(pyr_field_t *f, const char *path, const char *dataset)
{
    int64_t shape[3];
    for (int d = 0; d < f->dims; d++) shape[d] = f->n[f->dims - 1 - d];
    if (pyr_h5_is_path(path)) return pyr_h5_read_expect(path, dataset, f->dims, shape, f->precision, f->data);
    return pyr_npy_read_expect(path, f->dims, shape, f->precision, f->data);
}

pyr_status_t pyr_field_read_part(pyr_field_t *f, int dims, const int64_t n[3], const char *path, const char *dataset, const int64_t origin[3])
{
    if (pyr_h5_is_path(path)) return pyr_h5_read_part(path, dataset, dims, n, origin, f->n, f->precision, f->data);
    return pyr_npy_read_part(path, dims, n, origin, f->n, f->precision, f->data);
}
