/* NumPy .npy files: write version 1.0, read 1.0, 2.0 and 3.0.  Little-endian
 * float32 ('<f4') and float64 ('<f8') arrays in C order.  Shapes are given as
 * NumPy gives them: slowest axis first, e.g. (ny, nx). */
#ifndef PYR_IO_NPY_H
#define PYR_IO_NPY_H

#include <stdint.h>

#include "pyrgrid.h"
#include "pyrgrid_output.h"

#define PYR_NPY_MAX_NDIM 8

typedef struct {
    int ndim;                          /* 0 (a scalar) .. PYR_NPY_MAX_NDIM */
    int64_t shape[PYR_NPY_MAX_NDIM];   /* slowest axis first */
    pyr_precision_t precision;
    int64_t count;                     /* product of shape */
    long data_offset;                  /* byte offset of the data in the file */
} pyr_npy_info_t;

/* pyr_npy_write (an array written atomically) is public: include/pyrgrid_output.h. */

/* Read and check the header only.  Fails (PYR_ERR_FORMAT) for anything the
 * readers below would not accept, including data shorter than the header
 * promises. */
pyr_status_t pyr_npy_read_info(const char *path, pyr_npy_info_t *info);

/* The same for a file that must hold precision p (any shape): a reader that
 * knows the precision it needs, so that a refusal names the one dtype that
 * would be read (a float problem given '>f8' is told '<f4'). */
pyr_status_t pyr_npy_read_info_as(const char *path, pyr_precision_t p, pyr_npy_info_t *info);

/* Read an array that must have exactly this ndim, shape and precision into the
 * caller's buffer (count values).  Errors say what was found, what is needed
 * and how to convert it with NumPy. */
pyr_status_t pyr_npy_read_expect(const char *path, int ndim, const int64_t *shape, pyr_precision_t p,
                                 void *data);

/* Read any float32/float64 C-order array into a new buffer (free() it).  On
 * failure *data is NULL. */
pyr_status_t pyr_npy_read_alloc(const char *path, pyr_npy_info_t *info, void **data);

/* Read an integer array (int8 .. int64, uint8 .. uint64, little-endian, C order) that must have
 * exactly this ndim and shape into a new int32 buffer (free() it; values beyond int32 are clamped
 * to its ends, out of any label's range).  Floats are refused with the conversion that works. */
pyr_status_t pyr_npy_read_labels(const char *path, int ndim, const int64_t *shape, int32_t **labels);

#endif
