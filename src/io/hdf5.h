/* HDF5 files of grid functions: datasets of 1 to 3 axes in NumPy order with
 * their attributes, written and read; the layout of pyrgrid's results (the
 * attributes at the root, snapshots) is the result writer's
 * (outputs/h5_result.h); what it needs of the format stays here: the name
 * "pyrgrid-field" a result's root carries, its snapshots' names and its
 * XDMF sidecar's.
 *
 * Reading (initial.file = x.h5) takes dataset "u" (the scheme's first field)
 * or a snapshot's; files written by other programs need only that dataset.
 * A reader takes only values stored in the file it is given: it follows
 * hard links and soft links inside the file, and refuses external links,
 * datasets kept in external raw storage or mapped from others (virtual),
 * and filters this libhdf5 lacks, before reading a value.  The checks of
 * what a reader found are apart from the HDF5 calls (pyr_h5_check) so that
 * a fuzzer can drive them.
 *
 * Writing goes to the temporary of io/atomic.h and is renamed into place by
 * pyr_h5_commit (inside a stage: with the other outputs).  HDF5 must seek,
 * so a device or FIFO is refused.  HDF5's own error printing is kept off;
 * its innermost message is quoted in ours, cut to what failed and the
 * system's reason ("file write failed: No space left on device"). */
#ifndef PYR_IO_HDF5_H
#define PYR_IO_HDF5_H

#include <stddef.h>
#include <stdint.h>

#include "pyrgrid.h"

#define PYR_H5_FORMAT "pyrgrid-field"
#define PYR_H5_FORMAT_VERSION 1
#define PYR_H5_MAX_RANK 32 /* HDF5's limit */

/* 1 when pyrgrid was built with HDF5. */
int pyr_h5_available(void);
/* "1.10.8", or "" without HDF5. */
const char *pyr_h5_library_version(void);
/* 1 when path names an HDF5 file by its extension (.h5, .hdf5, .he5, any case). */
int pyr_h5_is_path(const char *path);
/* The XDMF sidecar of an HDF5 path: its extension replaced by .xmf. */
void pyr_h5_sidecar_path(const char *path, char *out, size_t size);
/* "snapshots/000200/u". */
void pyr_h5_snapshot_name(int64_t step, const char *field, char *out, size_t size);

/* ------------------------------------------------------------------ writing */

/* A file being written: its temporary until pyr_h5_commit. */
typedef struct pyr_h5_file pyr_h5_file_t;

/* PYR_OK when this pyrgrid has HDF5, else the message that says how to get
 * it (naming path, which may be NULL). */
pyr_status_t pyr_h5_require(const char *path);
/* 1 when this libhdf5 has the gzip filter. */
int pyr_h5_has_gzip(void);

/* Create path's temporary as an empty HDF5 file (a regular file only).  The
 * caller owns the file: pyr_h5_commit or pyr_h5_abort release it. */
pyr_status_t pyr_h5_create(const char *path, pyr_h5_file_t **file);

/* An attribute: one value (n = 0) or a vector of n (1..3) values. */
enum { PYR_H5_ATTR_I64 = 0, PYR_H5_ATTR_F64, PYR_H5_ATTR_STR };
typedef struct {
    const char *name;
    int type; /* PYR_H5_ATTR_*: int64, float64, a variable-length UTF-8 string */
    int n;
    int64_t i64[3];
    double f64[3];
    const char *str; /* NULL: "" */
} pyr_h5_attr_t;

static inline pyr_h5_attr_t pyr_h5_attr_i64(const char *name, int64_t v)
{
    pyr_h5_attr_t a = {.name = name, .type = PYR_H5_ATTR_I64, .i64 = {v}};
    return a;
}
static inline pyr_h5_attr_t pyr_h5_attr_f64(const char *name, double v)
{
    pyr_h5_attr_t a = {.name = name, .type = PYR_H5_ATTR_F64, .f64 = {v}};
    return a;
}
static inline pyr_h5_attr_t pyr_h5_attr_i64v(const char *name, int n, const int64_t *v)
{
    pyr_h5_attr_t a = {.name = name, .type = PYR_H5_ATTR_I64, .n = n};
    for (int i = 0; i < n && i < 3; i++) a.i64[i] = v[i];
    return a;
}
static inline pyr_h5_attr_t pyr_h5_attr_f64v(const char *name, int n, const double *v)
{
    pyr_h5_attr_t a = {.name = name, .type = PYR_H5_ATTR_F64, .n = n};
    for (int i = 0; i < n && i < 3; i++) a.f64[i] = v[i];
    return a;
}
static inline pyr_h5_attr_t pyr_h5_attr_str(const char *name, const char *v)
{
    pyr_h5_attr_t a = {.name = name, .type = PYR_H5_ATTR_STR, .str = v};
    return a;
}

/* Write attrs[0..n-1] in order (replacing any of the same name) on the
 * root (group NULL) or on a group; the first that fails stops them with
 * "writing PATH: WHAT failed ...". */
pyr_status_t pyr_h5_write_attrs(pyr_h5_file_t *file, const char *group, const pyr_h5_attr_t *attrs, int n, const char *what);
/* A dataset `name` (the groups on its way made) holding the field in NumPy
 * order ((ny, nx), (nz, ny, nx)) as float32 or float64, in chunks of about
 * 1 MiB, gzip + shuffle at level compression > 0; then its attributes. */
pyr_status_t pyr_h5_write_field(pyr_h5_file_t *file, const char *name, const pyr_field_t *field, int compression,
                                const pyr_h5_attr_t *attrs, int nattrs);
/* Fills planes [first, first + count) of the slowest axis (NumPy's axis 0:
 * z in 3D, y in 2D, x in 1D) of a field, in C order, into buf. */
typedef pyr_status_t (*pyr_h5_fill_fn)(void *user, int64_t first, int64_t count, void *buf);
/* The planes of the slowest axis that pyr_h5_write_field puts in one row of
 * chunks for a field of dims and n[] (x, y, z) in precision p. */
int64_t pyr_h5_slab_rows(int dims, const int64_t n[3], pyr_precision_t p);
/* pyr_h5_write_field's dataset (the same chunks, filters and attributes)
 * for a field of dims, n[] and p that no one holds whole: written a row of
 * chunks at a time (pyr_h5_slab_rows planes, the last row what is left),
 * each filled by fill in order, so that every chunk is written once. */
pyr_status_t pyr_h5_write_field_slabs(pyr_h5_file_t *file, const char *name, int dims, const int64_t n[3], pyr_precision_t p, int compression,
                                      const pyr_h5_attr_t *attrs, int nattrs, pyr_h5_fill_fn fill, void *user);
/* A hard link `name` to the object `target`. */
pyr_status_t pyr_h5_link(pyr_h5_file_t *file, const char *target, const char *name, const char *what);
/* 1 when this pyrgrid writes dimension scales (HDF5's high-level library,
 * hdf5_hl, was found at build time): pyr_h5_make_scale and
 * pyr_h5_attach_scales do nothing without it. */
int pyr_h5_has_scales(void);
/* A one-dimensional dataset `name` of n float64 (values) or int64 (ivalues,
 * when values is NULL), then its attributes: a coordinate or a per-step
 * quantity. */
pyr_status_t pyr_h5_write_vector(pyr_h5_file_t *file, const char *name, int64_t n, const double *values, const int64_t *ivalues,
                                 const pyr_h5_attr_t *attrs, int nattrs);
/* Mark the one-dimensional dataset `name` as a dimension scale (H5DS) of the
 * dimension of that name: netCDF-4 readers (xarray, ncdump) take it as the
 * coordinate variable of the dimension. */
pyr_status_t pyr_h5_make_scale(pyr_h5_file_t *file, const char *name);
/* Attach the scales scales[0..rank-1] (datasets made scales, NULL: none) to
 * the dimensions of dataset `name`, slowest first. */
pyr_status_t pyr_h5_attach_scales(pyr_h5_file_t *file, const char *name, int rank, const char *const *scales);
/* A virtual dataset `name` that stacks the datasets sources[0..n-1] of this
 * file (one shape and type, that of sources[0]) along a new leading axis,
 * without copying them, then its attributes.  Readers of HDF5 1.10 or later
 * see an ordinary dataset. */
pyr_status_t pyr_h5_write_stack(pyr_h5_file_t *file, const char *name, int n, const char *const *sources, const pyr_h5_attr_t *attrs,
                                int nattrs);
/* Put what is written so far on disk (a reader of the temporary, or a
 * crash, finds it whole). */
pyr_status_t pyr_h5_flush(pyr_h5_file_t *file, const char *what);
/* Close the file and commit it (atomic.h; staged when a stage is active).
 * Releases the file, also on failure. */
pyr_status_t pyr_h5_commit(pyr_h5_file_t **file);
/* Throw the file away: its temporary is deleted. */
void pyr_h5_abort(pyr_h5_file_t **file);

/* ------------------------------------------------------------------ reading */

enum { PYR_H5_CLASS_OTHER = 0, PYR_H5_CLASS_FLOAT, PYR_H5_CLASS_INTEGER, PYR_H5_CLASS_STRING };

/* What stopped the walk from the name to the dataset, link by link. */
enum {
    PYR_H5_LINK_OK = 0,   /* hard links (and soft links inside the file) all the way */
    PYR_H5_LINK_EXTERNAL, /* an external link: into another file */
    PYR_H5_LINK_OTHER,    /* a link of another class (user-defined), or one that cannot be read */
    PYR_H5_LINK_DANGLING, /* a soft link to a name that does not exist */
    PYR_H5_LINK_LOOP      /* soft links that never reach an object */
};
#define PYR_H5_MAX_SOFT_LINKS 16 /* soft links followed on the way to one dataset (HDF5's default) */

/* What a reader found: the dataset's type and shape, and the root's
 * attributes as they are (present, of the expected kind, value). */
typedef struct {
    int link;                       /* PYR_H5_LINK_*: how the walk to the dataset ended */
    char link_name[128];            /* the link that stopped it ("u", "snapshots/000020") */
    char link_target[256];          /* where that link points ("/v", "other.h5:/secret") */
    int has_dataset;
    int is_dataset;                 /* the name is a dataset (not a group or a datatype) */
    /* how the dataset keeps its values: only inside the file, through filters this libhdf5 has */
    int external_storage;           /* files of external raw storage (-1: the dataset's properties cannot be read) */
    char external_file[256];        /* the first of them */
    int virtual_layout;             /* a virtual dataset: its values are mapped from other datasets */
    int missing_filter;             /* a filter of its pipeline that this libhdf5 lacks (its id), 0: none */
    char filter_name[64];           /* that filter's name as the file gives it */
    int type_class;                 /* PYR_H5_CLASS_* */
    size_t type_size;
    int rank;                       /* -1: not a simple dataspace */
    uint64_t dims[PYR_H5_MAX_RANK]; /* the first min(rank, PYR_H5_MAX_RANK) */
    /* attributes of the root (present / of the right kind / value) */
    int has_format, format_ok;
    char format[64];
    int has_version, version_ok;
    int64_t version;
    int has_equation, equation_ok;
    char equation[32];
    int has_step, step_ok;
    int64_t step;
    int has_t, t_ok;
    double t;
    int has_n, n_ok;
    int64_t n[3];
    int has_dims_attr, dims_attr_ok;
    int64_t dims_attr;
} pyr_h5_found_t;

typedef struct {
    int missing;          /* refused because the file has no object of that name (and no link on the way is broken) */
    int pyrgrid;          /* the root says format = pyrgrid-field */
    int ndim;             /* 1..3 */
    int64_t shape[3];     /* NumPy order */
    pyr_precision_t precision;
    int has_step, has_t;  /* pyrgrid files: the step and time of the dataset */
    int64_t step;
    double t;
    char equation[32];    /* "" when the file does not say */
} pyr_h5_info_t;

/* Judge what was found in `path` (dataset `dataset`): a field of 1 to 3
 * dimensions of float32 or float64, reached and stored inside the file (see
 * "Reading" above), and, when the root says it is a pyrgrid file,
 * attributes of the right kinds and values that agree with the dataset (a
 * snapshot's step with its group's name).  The message names the file, the
 * dataset or attribute, what was found and what would work. */
pyr_status_t pyr_h5_check(const char *path, const char *dataset, const pyr_h5_found_t *found, pyr_h5_info_t *info);

/* Open `path` and describe `dataset` (NULL: "u"); the step and time are
 * those of the snapshot group for a snapshot's dataset. */
pyr_status_t pyr_h5_read_info(const char *path, const char *dataset, pyr_h5_info_t *info);
/* Read `dataset` (NULL: "u"), which must have exactly this shape and precision. */
pyr_status_t pyr_h5_read_expect(const char *path, const char *dataset, int ndim, const int64_t *shape, pyr_precision_t p,
                                void *data);
/* Read nodes origin .. origin + count - 1 (x, y, z order, as the grid's
 * axes) of `dataset` (NULL: "u"), which must hold a grid of `dims`
 * dimensions, n[] nodes per axis and precision p, into data (x fastest):
 * a part of a field (several devices, MPI ranks), as pyr_npy_read_part. */
pyr_status_t pyr_h5_read_part(const char *path, const char *dataset, int dims, const int64_t n[3], const int64_t origin[3],
                              const int64_t count[3], pyr_precision_t p, void *data);

#endif
