/* Parts of .npy files, for runs in which no process holds the whole grid
 * (MPI ranks, exec/parts.c): read a hyperslab, write the header of an array
 * whose data are streamed in afterwards, and `pyrgrid assemble` (one .npy
 * from the parts files and their index, never holding the whole array). */
#ifndef PYR_IO_NPY_PART_H
#define PYR_IO_NPY_PART_H

#include <stdint.h>
#include <stdio.h>

#include "pyrgrid.h"

/* Read nodes origin .. origin + count - 1 (x, y, z order, as the grid's
 * axes) of the .npy at `path`, which must hold a grid of `dims` dimensions,
 * n[] nodes per axis (NumPy shape (n[2], n[1], n[0]) for 3D) and precision
 * p, into `data` (count[0] * count[1] * count[2] values, x fastest).  Only
 * those values are read. */
pyr_status_t pyr_npy_read_part(const char *path, int dims, const int64_t n[3], const int64_t origin[3], const int64_t count[3],
                               pyr_precision_t p, void *data);

/* The header of a .npy version 1.0 array (shape in NumPy order) to fp; the
 * count * elem bytes of data must follow. */
pyr_status_t pyr_npy_write_header(FILE *fp, const char *path, int ndim, const int64_t *shape, pyr_precision_t p);

/* The index rank 0 writes beside the parts of an MPI run:
 *   {"format": "pyrgrid-parts", "version": 1, "dims": D, "shape": [..NumPy order..], "dtype": "<f8",
 *    "parts": [{"file": "NAME.rank0000.npy", "offset": [..], "shape": [..]}, ...]}
 * offsets and shapes in NumPy order; file names relative to the index's directory, in it or below it
 * (never absolute, never through ".."), a byte of a name that is not UTF-8 written \udcXX. */
typedef struct {
    char file[4096];
    int64_t offset[3], shape[3]; /* NumPy order (slowest axis first), dims entries */
} pyr_npy_part_t;

typedef struct {
    int dims;
    int64_t shape[3]; /* NumPy order */
    pyr_precision_t precision;
    int nparts;
    pyr_npy_part_t *parts;
} pyr_npy_index_t;

/* Write / read an index (read: the caller frees index->parts).  Reading
 * checks what assembling relies on: every part inside the array, the array's
 * size in bytes a file size, part names confined as above, nesting at most
 * 200 levels deep. */
pyr_status_t pyr_npy_index_write(const char *path, const pyr_npy_index_t *index);
pyr_status_t pyr_npy_index_read(const char *path, pyr_npy_index_t *index);

/* The names an MPI run writes for output PATH: the part of a rank,
 * PATH.rankNNNN.npy, and the index, PATH.parts.json (PATH less a ".npy"
 * ending).  NULL outputs are skipped. */
void pyr_npy_part_names(const char *path, int rank, char *part, size_t part_size, char *index, size_t index_size);

/* One .npy at `out` from the parts an index names: checks that they tile the
 * array exactly once (each part a file of its own, none a link leading out of
 * the index's directory, none the output) and match its dtype, then streams
 * them row by row (the output is written in order, so it may be a FIFO;
 * memory: one row). */
pyr_status_t pyr_npy_assemble(const char *index_path, const char *out);

#endif
