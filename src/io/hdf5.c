/* HDF5 files of grid functions: datasets and attributes, written and read (io/hdf5.h). */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* syscall() */
#endif
#include "io/hdf5.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "core/error.h"
#include "io/atomic.h"

/* ------------------------------------------------------ shared by both builds */

int pyr_h5_is_path(const char *path)
{
    if (!path) return 0;
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return 0;
    return !strcasecmp(dot, ".h5") || !strcasecmp(dot, ".hdf5") || !strcasecmp(dot, ".he5");
}

void pyr_h5_sidecar_path(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s", path);
    char *dot = strrchr(out, '.');
    char *slash = strrchr(out, '/');
    if (dot && (!slash || dot > slash)) *dot = 0;
    size_t n = strlen(out);
    if (n + 5 <= size) memcpy(out + n, ".xmf", 5);
}

void pyr_h5_snapshot_name(int64_t step, const char *field, char *out, size_t size)
{
    snprintf(out, size, "snapshots/%06lld/%s", (long long)step, field);
}

static void shape_text(char *out, size_t size, int rank, const uint64_t *dims)
{
    size_t k = (size_t)snprintf(out, size, "(");
    for (int i = 0; i < rank && i < PYR_H5_MAX_RANK && k < size; i++)
        k += (size_t)snprintf(out + k, size - k, "%llu%s", (unsigned long long)dims[i], rank == 1 ? "," : i + 1 < rank ? ", " : "");
    if (k < size) snprintf(out + k, size - k, ")");
}

/* The step in a snapshot's name ("snapshots/000200/u": 200), or -1. */
static int64_t snapshot_step(const char *dataset)
{
    const char *s = dataset[0] == '/' ? dataset + 1 : dataset;
    if (strncmp(s, "snapshots/", 10) != 0) return -1;
    s += 10;
    int64_t step = 0;
    const char *d = s;
    for (; *d >= '0' && *d <= '9'; d++) {
        if (step > (INT64_MAX - 9) / 10) return -1;
        step = step * 10 + (*d - '0');
    }
    return d > s && *d == '/' ? step : -1;
}

/* ", on the way to 'u'" when the link that stopped the walk is not the dataset's own name. */
static const char *on_the_way(const char *dataset, const char *link, char *out, size_t size)
{
    const char *a = dataset[0] == '/' ? dataset + 1 : dataset, *b = link[0] == '/' ? link + 1 : link;
    out[0] = 0;
    if (strcmp(a, b) != 0) snprintf(out, size, " (on the way to '%s')", dataset);
    return out;
}

/* A name for the filters h5py and hdf5plugin use most, where the file gives none. */
static const char *filter_known_name(int id)
{
    switch (id) {
    case 307: return "bzip2";
    case 32000: return "LZF";
    case 32001: return "Blosc";
    case 32004: return "LZ4";
    case 32008: return "Bitshuffle";
    case 32015: return "Zstandard";
    default: return "unnamed";
    }
}

/* Refusals of what a reader must not follow or cannot decode: each before any value is read. */
static pyr_status_t check_reach(const char *path, const char *dataset, const pyr_h5_found_t *f, pyr_h5_info_t *info)
{
    char way[200];
    const char *name = f->link_name[0] ? f->link_name : dataset;
    switch (f->link) {
    case PYR_H5_LINK_OK: break;
    case PYR_H5_LINK_EXTERNAL:
        return pyr_fail(PYR_ERR_FORMAT, "%s: '%s'%s is an external link to %.200s; pyrgrid reads only what is stored in the file it is "
                        "given and follows no link into another file: copy the dataset into %s, or name the other file itself",
                        path, name, on_the_way(dataset, name, way, sizeof way), f->link_target, path);
    case PYR_H5_LINK_DANGLING:
        return pyr_fail(PYR_ERR_FORMAT, "%s: '%s'%s is a soft link to '%.200s', which does not exist in the file (a dangling link); point "
                        "it at the field's dataset, or name the dataset itself", path, name, on_the_way(dataset, name, way, sizeof way),
                        f->link_target);
    case PYR_H5_LINK_LOOP:
        return pyr_fail(PYR_ERR_FORMAT, "%s: '%s' never reaches a dataset: its soft links ('%s' to '%.200s', ...) form a loop (or a "
                        "chain of more than %d); point the link at the field's dataset", path, dataset, name, f->link_target,
                        PYR_H5_MAX_SOFT_LINKS);
    default:
        return pyr_fail(PYR_ERR_FORMAT, "%s: '%s'%s is a link pyrgrid does not follow (%.200s); it reads datasets reached by hard or soft "
                        "links inside the file", path, name, on_the_way(dataset, name, way, sizeof way),
                        f->link_target[0] ? f->link_target : "neither hard, soft nor external");
    }
    if (!f->has_dataset) {
        info->missing = 1;
        return pyr_fail(PYR_ERR_FORMAT, "%s has no dataset '%s'; a field file holds the field as dataset '%s' (h5py: "
                        "f.create_dataset('%s', data=a))", path, dataset, dataset, dataset);
    }
    if (!f->is_dataset)
        return pyr_fail(PYR_ERR_FORMAT, "%s: '%s' is not a dataset (a group?); name the field's dataset", path, dataset);
    if (f->external_storage < 0)
        return pyr_fail(PYR_ERR_FORMAT, "%s: how dataset '%s' stores its values cannot be read (HDF5 refused its creation properties); the "
                        "file may be damaged", path, dataset);
    if (f->external_storage > 0)
        return pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' keeps its values outside the file, in external raw storage ('%.200s'%s); pyrgrid "
                        "reads only values stored in the HDF5 file itself: save them into it (h5py: create_dataset('%s', data=values) "
                        "without external=)", path, dataset, f->external_file, f->external_storage > 1 ? " and others" : "", dataset);
    if (f->virtual_layout)
        return pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' is a virtual dataset (its values are mapped from other datasets, perhaps in "
                        "other files); pyrgrid reads only values stored in the HDF5 file itself: save them as a plain dataset (h5py: "
                        "create_dataset('%s', data=f['%s'][...]))", path, dataset, dataset, dataset);
    if (f->missing_filter)
        return pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' is compressed with HDF5 filter %d (%.60s), which this libhdf5 does not have; "
                        "re-save it with gzip (h5py: compression='gzip') or none (h5repack -f NONE, where the filter is available), or "
                        "install the filter's plugin (HDF5_PLUGIN_PATH)", path, dataset, f->missing_filter,
                        f->filter_name[0] ? f->filter_name : filter_known_name(f->missing_filter));
    return PYR_OK;
}

pyr_status_t pyr_h5_check(const char *path, const char *dataset, const pyr_h5_found_t *f, pyr_h5_info_t *info)
{
    memset(info, 0, sizeof *info);
    if (f->has_format) {
        if (!f->format_ok)
            return pyr_fail(PYR_ERR_FORMAT, "%s: the root attribute 'format' is not a string; a pyrgrid file says format = \"%s\"", path,
                            PYR_H5_FORMAT);
        if (strcmp(f->format, PYR_H5_FORMAT) != 0)
            return pyr_fail(PYR_ERR_FORMAT, "%s: the root attribute format = \"%.60s\" is not \"%s\"; pyrgrid reads its own files and files "
                            "without a 'format' attribute that hold the dataset '%s'", path, f->format, PYR_H5_FORMAT, dataset);
        info->pyrgrid = 1;
        if (!f->has_version || !f->version_ok)
            return pyr_fail(PYR_ERR_FORMAT, "%s: a pyrgrid file needs the integer root attribute format_version (%s); the file may be damaged",
                            path, f->has_version ? "it is not an integer" : "it is missing");
        if (f->version < 1 || f->version > PYR_H5_FORMAT_VERSION)
            return pyr_fail(PYR_ERR_FORMAT, "%s: format_version = %lld; this pyrgrid reads version 1 to %d (a newer pyrgrid wrote it?)", path,
                            (long long)f->version, PYR_H5_FORMAT_VERSION);
    }
    PYR_TRY(check_reach(path, dataset, f, info));
    if (f->rank < 1 || f->rank > 3) {
        char s[160] = "(a scalar or null dataspace)";
        if (f->rank > 0) shape_text(s, sizeof s, f->rank, f->dims);
        return pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' has %d dimensions %s; a field has 1, 2 or 3 ((nx,), (ny, nx) or (nz, ny, nx))",
                        path, dataset, f->rank < 0 ? 0 : f->rank, s);
    }
    char s[160];
    shape_text(s, sizeof s, f->rank, f->dims);
    for (int i = 0; i < f->rank; i++)
        if (f->dims[i] == 0 || f->dims[i] > (uint64_t)INT64_MAX / 16)
            return pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' has shape %s; every axis needs at least one node", path, dataset, s);
    if (f->type_class != PYR_H5_CLASS_FLOAT || (f->type_size != 4 && f->type_size != 8)) {
        const char *what = f->type_class == PYR_H5_CLASS_INTEGER ? "integers"
                           : f->type_class == PYR_H5_CLASS_STRING ? "strings"
                           : f->type_class == PYR_H5_CLASS_FLOAT  ? "floats of another size"
                                                                  : "values of another kind";
        return pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' holds %s (%zu bytes each); fields are float32 or float64 (convert with "
                        "a.astype(numpy.float64))", path, dataset, what, f->type_size);
    }
    info->ndim = f->rank;
    for (int i = 0; i < f->rank; i++) info->shape[i] = (int64_t)f->dims[i];
    info->precision = f->type_size == 8 ? PYR_DOUBLE : PYR_FLOAT;
    if (!info->pyrgrid) return PYR_OK;
    /* a pyrgrid file: its attributes must be what its writer wrote */
    if (f->has_equation) {
        if (!f->equation_ok) return pyr_fail(PYR_ERR_FORMAT, "%s: the root attribute 'equation' is not a string", path);
        snprintf(info->equation, sizeof info->equation, "%s", f->equation);
    }
    if (f->has_step) {
        if (!f->step_ok || f->step < 0)
            return pyr_fail(PYR_ERR_FORMAT, "%s: the attribute step of '%s' must be an integer >= 0%s", path, dataset,
                            f->step_ok ? "" : " (it is not an integer)");
        const int64_t named = snapshot_step(dataset);
        if (named >= 0 && f->step != named)
            return pyr_fail(PYR_ERR_FORMAT, "%s: the group of snapshot '%s' has the attribute step = %lld, but its name says step %lld; the "
                            "file was edited or is damaged (a restart needs the step it holds)", path, dataset, (long long)f->step,
                            (long long)named);
        info->has_step = 1;
        info->step = f->step;
    }
    if (f->has_t) {
        if (!f->t_ok || !isfinite(f->t))
            return pyr_fail(PYR_ERR_FORMAT, "%s: the attribute t of '%s' must be a finite number", path, dataset);
        info->has_t = 1;
        info->t = f->t;
    }
    if (f->has_dims_attr) {
        if (!f->dims_attr_ok || f->dims_attr != f->rank)
            return pyr_fail(PYR_ERR_FORMAT, "%s: the root attribute dims does not match dataset '%s' of %d dimensions %s", path, dataset,
                            f->rank, s);
    }
    if (f->has_n) {
        int same = f->n_ok;
        for (int a = 0; same && a < 3; a++) {
            int64_t want = a < f->rank ? (int64_t)f->dims[f->rank - 1 - a] : 1;
            same = f->n[a] == want;
        }
        if (!same)
            return pyr_fail(PYR_ERR_FORMAT, "%s: the root attribute n (nodes per axis x, y, z) does not match dataset '%s' of shape %s; the "
                            "file is damaged or was edited", path, dataset, s);
    }
    return PYR_OK;
}

#ifndef PYR_HAVE_HDF5

static pyr_status_t no_hdf5(const char *path)
{
    return pyr_fail(PYR_ERR_UNSUPPORTED, "%s: this pyrgrid was built without HDF5; install libhdf5-dev and build again "
                    "(bash scripts/setup.sh), or use .npy files", path ? path : "HDF5");
}

int pyr_h5_available(void) { return 0; }
const char *pyr_h5_library_version(void) { return ""; }
pyr_status_t pyr_h5_require(const char *path) { return no_hdf5(path); }
int pyr_h5_has_gzip(void) { return 0; }
pyr_status_t pyr_h5_create(const char *path, pyr_h5_file_t **file)
{
    *file = NULL;
    return no_hdf5(path);
}
pyr_status_t pyr_h5_write_attrs(pyr_h5_file_t *file, const char *group, const pyr_h5_attr_t *attrs, int n, const char *what)
{
    (void)file, (void)group, (void)attrs, (void)n, (void)what;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_write_field(pyr_h5_file_t *file, const char *name, const pyr_field_t *field, int compression,
                                const pyr_h5_attr_t *attrs, int nattrs)
{
    (void)file, (void)name, (void)field, (void)compression, (void)attrs, (void)nattrs;
    return no_hdf5(NULL);
}
int64_t pyr_h5_slab_rows(int dims, const int64_t n[3], pyr_precision_t p)
{
    (void)p;
    return dims >= 1 && dims <= 3 && n[dims - 1] > 0 ? n[dims - 1] : 1;
}
pyr_status_t pyr_h5_write_field_slabs(pyr_h5_file_t *file, const char *name, int dims, const int64_t n[3], pyr_precision_t p, int compression,
                                      const pyr_h5_attr_t *attrs, int nattrs, pyr_h5_fill_fn fill, void *user)
{
    (void)file, (void)name, (void)dims, (void)n, (void)p, (void)compression, (void)attrs, (void)nattrs, (void)fill, (void)user;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_link(pyr_h5_file_t *file, const char *target, const char *name, const char *what)
{
    (void)file, (void)target, (void)name, (void)what;
    return no_hdf5(NULL);
}
int pyr_h5_has_scales(void) { return 0; }
pyr_status_t pyr_h5_write_vector(pyr_h5_file_t *file, const char *name, int64_t n, const double *values, const int64_t *ivalues,
                                 const pyr_h5_attr_t *attrs, int nattrs)
{
    (void)file, (void)name, (void)n, (void)values, (void)ivalues, (void)attrs, (void)nattrs;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_make_scale(pyr_h5_file_t *file, const char *name)
{
    (void)file, (void)name;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_attach_scales(pyr_h5_file_t *file, const char *name, int rank, const char *const *scales)
{
    (void)file, (void)name, (void)rank, (void)scales;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_write_stack(pyr_h5_file_t *file, const char *name, int n, const char *const *sources, const pyr_h5_attr_t *attrs,
                                int nattrs)
{
    (void)file, (void)name, (void)n, (void)sources, (void)attrs, (void)nattrs;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_flush(pyr_h5_file_t *file, const char *what)
{
    (void)file, (void)what;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_commit(pyr_h5_file_t **file)
{
    (void)file;
    return no_hdf5(NULL);
}
void pyr_h5_abort(pyr_h5_file_t **file) { (void)file; }
pyr_status_t pyr_h5_read_info(const char *path, const char *dataset, pyr_h5_info_t *info)
{
    (void)dataset;
    memset(info, 0, sizeof *info);
    return no_hdf5(path);
}
pyr_status_t pyr_h5_read_expect(const char *path, const char *dataset, int ndim, const int64_t *shape, pyr_precision_t p, void *data)
{
    (void)dataset, (void)ndim, (void)shape, (void)p, (void)data;
    return no_hdf5(path);
}
pyr_status_t pyr_h5_read_part(const char *path, const char *dataset, int dims, const int64_t n[3], const int64_t origin[3],
                              const int64_t count[3], pyr_precision_t p, void *data)
{
    (void)dataset, (void)dims, (void)n, (void)origin, (void)count, (void)p, (void)data;
    return no_hdf5(path);
}

#else /* PYR_HAVE_HDF5 */

#include <hdf5.h>

int pyr_h5_available(void) { return 1; }

/* libhdf5 closes itself at exit.  After a failed write it cannot: its error
 * paths leave blocks of its free lists in use, and its close prints
 * "infinite loop closing library".  pyrgrid closes every file it opens, so
 * it takes that closing over: at exit, unless a file was thrown away after a
 * failure.  (Where another user of libhdf5 in the process started it first,
 * libhdf5 keeps its own.) */
static int h5_discarded;
static pthread_once_t h5_once = PTHREAD_ONCE_INIT;

static void h5_exit(void)
{
    if (!h5_discarded) H5close();
}

static void h5_start_once(void)
{
    H5dont_atexit();
    atexit(h5_exit);
}

static void h5_start(void) { pthread_once(&h5_once, h5_start_once); }

const char *pyr_h5_library_version(void)
{
    h5_start();
    static char text[32];
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    snprintf(text, sizeof text, "%u.%u.%u", maj, min, rel);
    return text;
}

/* ---------------------------------------------------------------- errors */

/* HDF5 prints its error stack by default; a library must not print.  The
 * handler is per thread in a thread-safe HDF5, restored on the way out. */
typedef struct {
    H5E_auto2_t func;
    void *data;
} quiet_t;

static void quiet_begin(quiet_t *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(const quiet_t *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

/* What HDF5's error stack says: its innermost message, the system's errno
 * where a message carries one, and whether a file lock was refused. */
typedef struct {
    char desc[256];
    int err;
    int lock;
} h5_error_t;

static herr_t walk_error(unsigned n, const H5E_error2_t *e, void *data)
{
    h5_error_t *r = data;
    if (n == 0 && e->desc) snprintf(r->desc, sizeof r->desc, "%s", e->desc);
    const char *no = e->desc ? strstr(e->desc, "errno = ") : NULL;
    if (no && !r->err) r->err = atoi(no + 8);
#ifdef H5E_CANTLOCKFILE
    if (e->min_num == H5E_CANTLOCKFILE) r->lock = 1;
#endif
    return 0;
}

/* The innermost message of HDF5's error stack ("truncated file: eof = ..."),
 * and clear the stack.  A message of a failed system call carries a
 * timestamp, a buffer's address and byte counts: only what failed and the
 * system's reason are kept ("file write failed: No space left on device"). */
static const char *h5_reason_of(char out[256], h5_error_t *e)
{
    memset(e, 0, sizeof *e);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_error, e);
    H5Eclear2(H5E_DEFAULT);
    if (!e->desc[0]) snprintf(e->desc, sizeof e->desc, "unknown HDF5 error");
    const char *no = strstr(e->desc, "errno = ");
    if (no) {
        size_t n = strcspn(e->desc, ",:");
        if (n > (size_t)(no - e->desc)) n = (size_t)(no - e->desc);
        while (n > 0 && e->desc[n - 1] == ' ') n--;
        snprintf(out, 256, "%.*s: %s", (int)n, e->desc, strerror(atoi(no + 8)));
    } else {
        snprintf(out, 256, "%s", e->desc);
    }
    return out;
}

static const char *h5_reason(char out[256])
{
    h5_error_t e;
    return h5_reason_of(out, &e);
}

/* -------------------------------------------------------------- attributes */

static pyr_status_t attr_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int n, const void *value)
{
    hsize_t dim = (hsize_t)n;
    hid_t space = n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
    if (space < 0) return PYR_ERR_IO;
    if (H5Aexists(loc, name) > 0) H5Adelete(loc, name);
    hid_t a = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a >= 0 ? H5Awrite(a, mtype, value) : -1;
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    return r < 0 ? PYR_ERR_IO : PYR_OK;
}

/* A variable-length UTF-8 string: h5py reads it as str. */
static pyr_status_t attr_str(hid_t loc, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return PYR_ERR_IO;
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    const char *v = value ? value : "";
    pyr_status_t st = attr_write(loc, name, t, t, 0, &v);
    H5Tclose(t);
    return st;
}

static pyr_status_t attr_one(hid_t loc, const pyr_h5_attr_t *a)
{
    if (a->type == PYR_H5_ATTR_I64) return attr_write(loc, a->name, H5T_STD_I64LE, H5T_NATIVE_INT64, a->n, a->i64);
    if (a->type == PYR_H5_ATTR_F64) return attr_write(loc, a->name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, a->n, a->f64);
    return attr_str(loc, a->name, a->str);
}

/* Read a numeric attribute of one value (npoints = 1, or n values). */
static void attr_read_num(hid_t loc, const char *name, hid_t mtype, int want_class, int n, void *out, int *has, int *ok)
{
    *has = *ok = 0;
    if (H5Aexists(loc, name) <= 0) return;
    *has = 1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return;
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    if (t >= 0 && s >= 0) {
        H5T_class_t c = H5Tget_class(t);
        int cls_ok = c == H5T_INTEGER || (want_class == H5T_FLOAT && c == H5T_FLOAT);
        if (cls_ok && H5Sget_simple_extent_npoints(s) == n) *ok = H5Aread(a, mtype, out) >= 0;
    }
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    H5Aclose(a);
}

static void attr_read_str(hid_t loc, const char *name, char *out, size_t size, int *has, int *ok)
{
    *has = *ok = 0;
    out[0] = 0;
    if (H5Aexists(loc, name) <= 0) return;
    *has = 1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return;
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    if (t >= 0 && s >= 0 && H5Tget_class(t) == H5T_STRING && H5Sget_simple_extent_npoints(s) == 1) {
        if (H5Tis_variable_str(t) > 0) {
            hid_t m = H5Tcopy(H5T_C_S1);
            H5Tset_size(m, H5T_VARIABLE);
            H5Tset_cset(m, H5Tget_cset(t)); /* HDF5 converts no character set into another */
            char *v = NULL;
            if (H5Aread(a, m, &v) >= 0 && v) {
                snprintf(out, size, "%s", v);
                *ok = 1;
            }
            if (v) H5free_memory(v);
            H5Tclose(m);
        } else {
            size_t n = H5Tget_size(t);
            if (n > 0 && n < 4096) {
                char *buf = calloc(1, n + 1);
                hid_t m = H5Tcopy(H5T_C_S1);
                H5Tset_size(m, n);
                H5Tset_cset(m, H5Tget_cset(t));
                H5Tset_strpad(m, H5T_STR_NULLTERM);
                if (buf && H5Aread(a, m, buf) >= 0) {
                    snprintf(out, size, "%s", buf);
                    *ok = 1;
                }
                H5Tclose(m);
                free(buf);
            }
        }
    }
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    H5Aclose(a);
}

/* ---------------------------------------------------------------- writing */

struct pyr_h5_file {
    pyr_atomic_file_t af;
    char *path;
    hid_t file;
};

static pyr_status_t h5_fail(pyr_h5_file_t *w, const char *what)
{
    char r[256];
    h5_error_t e;
    h5_reason_of(r, &e);
#ifdef EDQUOT
    const int full = e.err == ENOSPC || e.err == EDQUOT;
#else
    const int full = e.err == ENOSPC;
#endif
    if (full)
        return pyr_fail(PYR_ERR_IO, "writing %s: %s failed: %s; free some space, or write the result elsewhere", w->path, what,
                        strerror(e.err));
    if (e.err) return pyr_fail(PYR_ERR_IO, "writing %s: %s failed: %s", w->path, what, strerror(e.err));
    return pyr_fail(PYR_ERR_IO, "writing %s: %s failed (HDF5: %s); check the free space and that the directory is writable", w->path, what, r);
}

pyr_status_t pyr_h5_require(const char *path)
{
    (void)path;
    h5_start();
    return PYR_OK;
}

int pyr_h5_has_gzip(void)
{
    h5_start();
    return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0;
}

/* Chunks of about 1 MiB: whole rows (planes) where they fit. */
static void chunk_dims(int rank, const hsize_t *dims, size_t elem, hsize_t *chunk)
{
    const uint64_t target = (1u << 20) / elem;
    uint64_t vol = 1;
    for (int i = rank - 1; i >= 0; i--) {
        uint64_t room = target / vol;
        if (room < 1) room = 1;
        chunk[i] = dims[i] < room ? dims[i] : room;
        vol *= chunk[i];
    }
}

int64_t pyr_h5_slab_rows(int dims, const int64_t n[3], pyr_precision_t p)
{
    if (dims < 1 || dims > 3) return 1;
    hsize_t d[3], chunk[3];
    for (int i = 0; i < dims; i++) d[i] = (hsize_t)(n[dims - 1 - i] > 0 ? n[dims - 1 - i] : 1);
    chunk_dims(dims, d, p == PYR_DOUBLE ? 8 : 4, chunk);
    return (int64_t)chunk[0];
}

/* The dataset of a field of dims, n[] (x, y, z) and p, written whole (data)
 * or a row of chunks at a time (fill), then its attributes. */
static pyr_status_t write_field(pyr_h5_file_t *w, const char *name, int dims, const int64_t n[3], pyr_precision_t p, int compression,
                                const pyr_h5_attr_t *attrs, int nattrs, const void *data, pyr_h5_fill_fn fill, void *user)
{
    const int rank = dims;
    hsize_t fdims[3], chunk[3];
    for (int i = 0; i < rank; i++) fdims[i] = (hsize_t)n[rank - 1 - i];
    const int dbl = p == PYR_DOUBLE;
    const size_t elem = dbl ? 8 : 4;
    chunk_dims(rank, fdims, elem, chunk);
    quiet_t q;
    quiet_begin(&q);
    hid_t space = H5Screate_simple(rank, fdims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    pyr_status_t st = PYR_OK;
    if (space < 0 || dcpl < 0 || lcpl < 0) st = h5_fail(w, "creating a dataspace");
    if (st == PYR_OK) {
        H5Pset_create_intermediate_group(lcpl, 1);
        H5Pset_chunk(dcpl, rank, chunk);
        if (compression > 0) {
            H5Pset_shuffle(dcpl);
            H5Pset_deflate(dcpl, (unsigned)compression);
        }
        const hid_t mtype = dbl ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
        hid_t ds = H5Dcreate2(w->file, name, dbl ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, space, lcpl, dcpl, H5P_DEFAULT);
        if (ds < 0) st = h5_fail(w, "creating a dataset");
        else {
            if (!fill) {
                if (H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) st = h5_fail(w, "writing a field");
            } else {
                /* a row of chunks at a time: each chunk whole in one write, as the whole field's */
                size_t plane = elem;
                for (int i = 1; i < rank; i++) plane *= (size_t)fdims[i];
                void *buf = malloc(plane * (size_t)chunk[0]);
                if (!buf) st = pyr_fail(PYR_ERR_NOMEM, "writing %s: out of host memory for %llu planes of a field", w->path,
                                        (unsigned long long)chunk[0]);
                for (hsize_t first = 0; first < fdims[0] && st == PYR_OK; first += chunk[0]) {
                    const hsize_t count = fdims[0] - first < chunk[0] ? fdims[0] - first : chunk[0];
                    hsize_t start[3] = {first, 0, 0}, cnt[3] = {count, 0, 0};
                    for (int i = 1; i < rank; i++) cnt[i] = fdims[i];
                    st = fill(user, (int64_t)first, (int64_t)count, buf);
                    if (st != PYR_OK) break;
                    hid_t mem = H5Screate_simple(rank, cnt, NULL);
                    if (mem < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
                        H5Dwrite(ds, mtype, mem, space, H5P_DEFAULT, buf) < 0)
                        st = h5_fail(w, "writing a field");
                    if (mem >= 0) H5Sclose(mem);
                }
                free(buf);
            }
            for (int k = 0; k < nattrs && st == PYR_OK; k++)
                if (attr_one(ds, &attrs[k]) != PYR_OK) st = h5_fail(w, "writing attributes");
            H5Dclose(ds);
        }
    }
    if (lcpl >= 0) H5Pclose(lcpl);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    quiet_end(&q);
    return st;
}

pyr_status_t pyr_h5_write_field(pyr_h5_file_t *w, const char *name, const pyr_field_t *f, int compression, const pyr_h5_attr_t *attrs,
                                int nattrs)
{
    return write_field(w, name, f->dims, f->n, f->precision, compression, attrs, nattrs, f->data, NULL, NULL);
}

pyr_status_t pyr_h5_write_field_slabs(pyr_h5_file_t *w, const char *name, int dims, const int64_t n[3], pyr_precision_t p, int compression,
                                      const pyr_h5_attr_t *attrs, int nattrs, pyr_h5_fill_fn fill, void *user)
{
    if (!w || !name || !fill || dims < 1 || dims > 3) return pyr_fail(PYR_ERR_ARG, "pyr_h5_write_field_slabs: a file, a name, a shape and a fill are required");
    return write_field(w, name, dims, n, p, compression, attrs, nattrs, NULL, fill, user);
}

pyr_status_t pyr_h5_write_attrs(pyr_h5_file_t *w, const char *group, const pyr_h5_attr_t *attrs, int n, const char *what)
{
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = PYR_OK;
    hid_t loc = group ? H5Gopen2(w->file, group, H5P_DEFAULT) : w->file;
    if (loc < 0) st = h5_fail(w, what);
    for (int k = 0; k < n && st == PYR_OK; k++)
        if (attr_one(loc, &attrs[k]) != PYR_OK) st = h5_fail(w, what);
    if (group && loc >= 0) H5Gclose(loc);
    quiet_end(&q);
    return st;
}

pyr_status_t pyr_h5_link(pyr_h5_file_t *w, const char *target, const char *name, const char *what)
{
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = H5Lcreate_hard(w->file, target, w->file, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? h5_fail(w, what) : PYR_OK;
    quiet_end(&q);
    return st;
}

pyr_status_t pyr_h5_write_vector(pyr_h5_file_t *w, const char *name, int64_t n, const double *values, const int64_t *ivalues,
                                 const pyr_h5_attr_t *attrs, int nattrs)
{
    if (n < 1 || (!values && !ivalues)) return pyr_fail(PYR_ERR_ARG, "pyr_h5_write_vector: %s needs n >= 1 values", name);
    const hsize_t dim = (hsize_t)n;
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = PYR_OK;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    if (space < 0) st = h5_fail(w, "creating a dataspace");
    if (st == PYR_OK) {
        hid_t ds = H5Dcreate2(w->file, name, values ? H5T_IEEE_F64LE : H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (ds < 0) st = h5_fail(w, "creating a coordinate");
        else {
            const herr_t r = values ? H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values)
                                    : H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ivalues);
            if (r < 0) st = h5_fail(w, "writing a coordinate");
            for (int k = 0; k < nattrs && st == PYR_OK; k++)
                if (attr_one(ds, &attrs[k]) != PYR_OK) st = h5_fail(w, "writing attributes");
            H5Dclose(ds);
        }
    }
    if (space >= 0) H5Sclose(space);
    quiet_end(&q);
    return st;
}

#ifdef PYR_HAVE_HDF5_HL
#include <hdf5_hl.h>

int pyr_h5_has_scales(void) { return 1; }

pyr_status_t pyr_h5_make_scale(pyr_h5_file_t *w, const char *name)
{
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = PYR_OK;
    hid_t ds = H5Dopen2(w->file, name, H5P_DEFAULT);
    if (ds < 0 || H5DSset_scale(ds, name) < 0) st = h5_fail(w, "making a dimension scale");
    if (ds >= 0) H5Dclose(ds);
    quiet_end(&q);
    return st;
}

pyr_status_t pyr_h5_attach_scales(pyr_h5_file_t *w, const char *name, int rank, const char *const *scales)
{
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = PYR_OK;
    hid_t ds = H5Dopen2(w->file, name, H5P_DEFAULT);
    if (ds < 0) st = h5_fail(w, "attaching dimension scales");
    for (int i = 0; i < rank && st == PYR_OK; i++) {
        if (!scales[i]) continue;
        hid_t sc = H5Dopen2(w->file, scales[i], H5P_DEFAULT);
        if (sc < 0 || H5DSattach_scale(ds, sc, (unsigned)i) < 0) st = h5_fail(w, "attaching dimension scales");
        if (sc >= 0) H5Dclose(sc);
    }
    if (ds >= 0) H5Dclose(ds);
    quiet_end(&q);
    return st;
}
#else
int pyr_h5_has_scales(void) { return 0; }
pyr_status_t pyr_h5_make_scale(pyr_h5_file_t *w, const char *name)
{
    (void)w, (void)name;
    return PYR_OK;
}
pyr_status_t pyr_h5_attach_scales(pyr_h5_file_t *w, const char *name, int rank, const char *const *scales)
{
    (void)w, (void)name, (void)rank, (void)scales;
    return PYR_OK;
}
#endif

pyr_status_t pyr_h5_write_stack(pyr_h5_file_t *w, const char *name, int n, const char *const *sources, const pyr_h5_attr_t *attrs,
                                int nattrs)
{
    if (n < 1 || !sources) return pyr_fail(PYR_ERR_ARG, "pyr_h5_write_stack: %s needs 1 or more sources", name);
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = PYR_OK;
    hid_t first = H5Dopen2(w->file, sources[0], H5P_DEFAULT);
    hid_t type = first >= 0 ? H5Dget_type(first) : -1, src_space = first >= 0 ? H5Dget_space(first) : -1;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = -1;
    int rank = src_space >= 0 ? H5Sget_simple_extent_ndims(src_space) : -1;
    hsize_t dims[4] = {(hsize_t)n, 0, 0, 0}, start[4] = {0}, count[4] = {1, 0, 0, 0};
    if (type < 0 || rank < 1 || rank > 3 || dcpl < 0) st = h5_fail(w, "opening a snapshot for the time series");
    if (st == PYR_OK) {
        H5Sget_simple_extent_dims(src_space, dims + 1, NULL);
        for (int i = 1; i <= rank; i++) count[i] = dims[i];
        space = H5Screate_simple(rank + 1, dims, NULL);
        if (space < 0) st = h5_fail(w, "creating a dataspace");
    }
    for (int k = 0; k < n && st == PYR_OK; k++) {
        start[0] = (hsize_t)k;
        /* "." is this very file, whatever name it ends up with */
        if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Pset_virtual(dcpl, space, ".", sources[k], src_space) < 0)
            st = h5_fail(w, "mapping the time series");
    }
    if (st == PYR_OK) {
        H5Sselect_all(space);
        hid_t ds = H5Dcreate2(w->file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (ds < 0) st = h5_fail(w, "creating the time series");
        for (int k = 0; k < nattrs && st == PYR_OK; k++)
            if (attr_one(ds, &attrs[k]) != PYR_OK) st = h5_fail(w, "writing attributes");
        if (ds >= 0) H5Dclose(ds);
    }
    if (space >= 0) H5Sclose(space);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (src_space >= 0) H5Sclose(src_space);
    if (type >= 0) H5Tclose(type);
    if (first >= 0) H5Dclose(first);
    quiet_end(&q);
    return st;
}

pyr_status_t pyr_h5_flush(pyr_h5_file_t *w, const char *what)
{
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0 ? h5_fail(w, what) : PYR_OK;
    quiet_end(&q);
    return st;
}

static void file_free(pyr_h5_file_t *w)
{
    free(w->path);
    free(w);
}

/* A scratch file for the last writes of a file being thrown away: in memory
 * where the system has such files, else an unlinked temporary. */
static int scratch_fd(void)
{
#ifdef SYS_memfd_create
    int fd = (int)syscall(SYS_memfd_create, "pyrgrid-discarded-h5", 1u /* MFD_CLOEXEC */);
    if (fd >= 0) return fd;
#endif
    FILE *t = tmpfile();
    if (!t) return -1;
    int fd2 = dup(fileno(t));
    fclose(t);
    return fd2;
}

/* Close a file that is being thrown away (its temporary is deleted).  Its
 * close flushes what a failed write left dirty; on a full disk that flush
 * fails too, and libhdf5 before 1.14.1 then frees the file but keeps its ID,
 * which it closes again at exit: a crash after the error message.  So the
 * descriptor of the sec2 driver (the default, which pyrgrid uses) is first
 * pointed at a scratch file, where the flush succeeds. */
static void discard_file(hid_t file)
{
    hid_t fapl = H5Fget_access_plist(file);
    void *handle = NULL;
    if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(file, fapl, &handle) >= 0 && handle) {
        const int fd = *(int *)handle, sink = scratch_fd();
        if (sink >= 0) {
            (void)dup2(sink, fd);
            close(sink);
        }
    }
    if (fapl >= 0) H5Pclose(fapl);
    H5Fclose(file);
    H5Eclear2(H5E_DEFAULT);
    h5_discarded = 1;
}

void pyr_h5_abort(pyr_h5_file_t **wp)
{
    if (!wp || !*wp) return;
    pyr_h5_file_t *w = *wp;
    if (w->file >= 0) {
        quiet_t q;
        quiet_begin(&q);
        discard_file(w->file);
        w->file = -1;
        quiet_end(&q);
    }
    pyr_atomic_abort(&w->af);
    file_free(w);
    *wp = NULL;
}

pyr_status_t pyr_h5_create(const char *path, pyr_h5_file_t **out)
{
    *out = NULL;
    h5_start();
    pyr_h5_file_t *w = calloc(1, sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    w->file = -1;
    w->path = strdup(path);
    if (!w->path) {
        file_free(w);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    /* HDF5 seeks and rewrites: a regular file only (the temporary, renamed at commit) */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        file_free(w);
        return pyr_fail(PYR_ERR_IO, "%s is not a regular file; HDF5 output needs one (it seeks while writing): name a file, or write "
                        ".npy to a FIFO or device", path);
    }
    pyr_status_t st = pyr_atomic_open(&w->af, path);
    if (st != PYR_OK) {
        file_free(w);
        return st;
    }
    if (!w->af.tmp_path) {
        pyr_atomic_abort(&w->af);
        file_free(w);
        return pyr_fail(PYR_ERR_IO, "%s is not a regular file; HDF5 output needs one (it seeks while writing)", path);
    }
    quiet_t q;
    quiet_begin(&q);
    /* the temporary is open (empty) through af.fp, which commit syncs and closes */
    w->file = H5Fcreate(w->af.tmp_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (w->file < 0) st = h5_fail(w, "creating the file");
    quiet_end(&q);
    if (st != PYR_OK) {
        pyr_h5_abort(&w);
        return st;
    }
    *out = w;
    return PYR_OK;
}

pyr_status_t pyr_h5_commit(pyr_h5_file_t **wp)
{
    if (!wp || !*wp) return pyr_fail(PYR_ERR_ARG, "pyr_h5_commit: no file");
    pyr_h5_file_t *w = *wp;
    quiet_t q;
    quiet_begin(&q);
    /* everything is written before the close, whose failure libhdf5 does not survive (discard_file) */
    pyr_status_t st = H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0 ? h5_fail(w, "writing the file's metadata") : PYR_OK;
    if (st != PYR_OK) {
        discard_file(w->file);
    } else if (H5Fclose(w->file) < 0) {
        st = h5_fail(w, "closing the file");
        h5_discarded = 1; /* the file's ID outlives it: libhdf5 must not close it again at exit */
    }
    w->file = -1;
    quiet_end(&q);
    if (st == PYR_OK) st = pyr_atomic_commit(&w->af);
    else pyr_atomic_abort(&w->af);
    file_free(w);
    *wp = NULL;
    return st;
}

/* ---------------------------------------------------------------- reading */

/* Access properties of every open on the way to a dataset.  resolve() walks
 * the links itself and stops at any that leaves the file; these close the
 * other routes: an external link is refused when it is traversed, and the
 * files of external raw data and of virtual datasets (refused by the checks
 * before a value is read) are looked for below a device, where no name
 * resolves (for relative names; libhdf5's environment variables
 * HDF5_EXTFILE_PREFIX and HDF5_VDS_PREFIX win over these). */
#define NOWHERE "/dev/null/pyrgrid-reads-no-other-file"

typedef struct {
    hid_t lapl, gapl, dapl;
} access_t;

static herr_t refuse_external_link(const char *parent_file, const char *parent_group, const char *child_file, const char *child_object,
                                   unsigned *acc_flags, hid_t fapl, void *data)
{
    (void)parent_file, (void)parent_group, (void)child_file, (void)child_object, (void)acc_flags, (void)fapl, (void)data;
    return -1;
}

static void access_close(access_t *a)
{
    if (a->lapl >= 0) H5Pclose(a->lapl);
    if (a->gapl >= 0) H5Pclose(a->gapl);
    if (a->dapl >= 0) H5Pclose(a->dapl);
    a->lapl = a->gapl = a->dapl = -1;
}

static pyr_status_t access_open(access_t *a)
{
    a->lapl = H5Pcreate(H5P_LINK_ACCESS);
    a->gapl = H5Pcreate(H5P_GROUP_ACCESS);
    a->dapl = H5Pcreate(H5P_DATASET_ACCESS);
    int ok = a->lapl >= 0 && a->gapl >= 0 && a->dapl >= 0;
    const hid_t lists[3] = {a->lapl, a->gapl, a->dapl};
    for (int i = 0; ok && i < 3; i++)
        ok = H5Pset_elink_cb(lists[i], refuse_external_link, NULL) >= 0 && H5Pset_elink_prefix(lists[i], NOWHERE) >= 0;
    if (ok) ok = H5Pset_efile_prefix(a->dapl, NOWHERE) >= 0;
#if H5_VERSION_GE(1, 10, 2)
    if (ok) ok = H5Pset_virtual_prefix(a->dapl, NOWHERE) >= 0;
#endif
    if (ok) return PYR_OK;
    access_close(a);
    char r[256];
    return pyr_fail(PYR_ERR_IO, "HDF5 could not make the access properties of a reader (HDF5: %s)", h5_reason(r));
}

/* src, cut to fit */
static void copy_text(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) n = size - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* An HDF5 path without empty or "." parts ("a//./b/" -> "/a/b"); 0 when it does not fit. */
static int normalize(const char *in, char *out, size_t size)
{
    size_t k = 0;
    for (const char *s = in; *s;) {
        while (*s == '/') s++;
        const size_t n = strcspn(s, "/");
        if (n == 0) break;
        if (!(n == 1 && *s == '.')) {
            if (k + n + 2 > size) return 0;
            out[k++] = '/';
            memcpy(out + k, s, n);
            k += n;
        }
        s += n;
    }
    if (k == 0) {
        if (size < 2) return 0;
        out[k++] = '/';
    }
    out[k] = 0;
    return 1;
}

/* Follow `name` link by link through hard links and soft links inside the
 * file (HDF5 would follow external links into other files as readily).
 * What stops the walk is noted in f (link, link_name, link_target); a name
 * that does not exist is not.  Returns 1 with `out` the object's path
 * through hard links only, which every later open uses. */
static int resolve(hid_t file, hid_t lapl, const char *name, char *out, size_t size, pyr_h5_found_t *f)
{
    char cur[1024], next[2048], val[1024], prefix[1024];
    if (!normalize(name, cur, sizeof cur)) return 0;
    int hops = 0;
    size_t soft_end = 0; /* cur[0 .. soft_end) is where the last soft link pointed */
    size_t pos = 1;
    while (pos < strlen(cur)) {
        const size_t end = pos + strcspn(cur + pos, "/");
        memcpy(prefix, cur, end);
        prefix[end] = 0;
        H5L_info_t li;
        if (H5Lexists(file, prefix, lapl) <= 0) {
            if (hops > 0 && end <= soft_end) f->link = PYR_H5_LINK_DANGLING;
            return 0;
        }
        if (H5Lget_info(file, prefix, &li, lapl) < 0) {
            copy_text(f->link_name, sizeof f->link_name, prefix + 1);
            snprintf(f->link_target, sizeof f->link_target, "HDF5 cannot read it");
            f->link = PYR_H5_LINK_OTHER;
            return 0;
        }
        if (li.type == H5L_TYPE_HARD) {
            pos = end + 1;
            continue;
        }
        copy_text(f->link_name, sizeof f->link_name, prefix + 1);
        f->link_target[0] = 0;
        const int readable = li.u.val_size > 0 && li.u.val_size <= sizeof val && H5Lget_val(file, prefix, val, sizeof val, lapl) >= 0;
        if (li.type == H5L_TYPE_SOFT && readable) {
            val[sizeof val - 1] = 0;
            copy_text(f->link_target, sizeof f->link_target, val);
            if (++hops > PYR_H5_MAX_SOFT_LINKS) {
                f->link = PYR_H5_LINK_LOOP;
                return 0;
            }
            /* a relative target is relative to the link's group */
            const char *slash = strrchr(prefix, '/');
            int k = val[0] == '/' ? snprintf(next, sizeof next, "%s", val)
                                  : snprintf(next, sizeof next, "%.*s/%s", (int)(slash - prefix), prefix, val);
            if (k < 0 || (size_t)k >= sizeof next || !normalize(next, next, sizeof next)) {
                f->link = PYR_H5_LINK_OTHER;
                snprintf(f->link_target, sizeof f->link_target, "a soft link to a path too long to follow");
                return 0;
            }
            soft_end = strlen(next);
            k = snprintf(next + soft_end, sizeof next - soft_end, "%s", cur + end);
            if (k < 0 || soft_end + (size_t)k >= sizeof cur || !normalize(next, cur, sizeof cur)) {
                f->link = PYR_H5_LINK_OTHER;
                snprintf(f->link_target, sizeof f->link_target, "a soft link to a path too long to follow");
                return 0;
            }
            pos = 1;
            continue;
        }
        if (li.type == H5L_TYPE_EXTERNAL) {
            const char *ef = NULL, *eo = NULL;
            unsigned flags = 0;
            if (readable && H5Lunpack_elink_val(val, li.u.val_size, &flags, &ef, &eo) >= 0 && ef && eo)
                snprintf(f->link_target, sizeof f->link_target, "%s:%s", ef, eo);
            else snprintf(f->link_target, sizeof f->link_target, "another file");
            f->link = PYR_H5_LINK_EXTERNAL;
            return 0;
        }
        snprintf(f->link_target, sizeof f->link_target, "a %s link of class %d", li.type == H5L_TYPE_SOFT ? "soft" : "user-defined",
                 (int)li.type);
        f->link = PYR_H5_LINK_OTHER;
        return 0;
    }
    snprintf(out, size, "%s", cur);
    return strlen(cur) < size;
}

/* How the dataset keeps its values: in other files (external raw storage,
 * a virtual dataset's sources), or through filters this libhdf5 lacks. */
static void gather_storage(hid_t ds, pyr_h5_found_t *f)
{
    hid_t dcpl = H5Dget_create_plist(ds);
    if (dcpl < 0) {
        f->external_storage = -1;
        return;
    }
    const int n = H5Pget_external_count(dcpl);
    if (n < 0) f->external_storage = -1;
    if (n > 0) {
        off_t offset = 0;
        hsize_t bytes = 0;
        f->external_storage = n;
        if (H5Pget_external(dcpl, 0, sizeof f->external_file, f->external_file, &offset, &bytes) < 0) f->external_file[0] = 0;
        f->external_file[sizeof f->external_file - 1] = 0;
    }
    if (H5Pget_layout(dcpl) == H5D_VIRTUAL) f->virtual_layout = 1;
    const int nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf && !f->missing_filter; i++) {
        unsigned flags = 0, config = 0;
        size_t nvalues = 0;
        char name[64] = "";
        const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nvalues, NULL, sizeof name, name, &config);
        if (id >= 0 && H5Zfilter_avail(id) <= 0) {
            f->missing_filter = id > 0 ? (int)id : -1;
            name[sizeof name - 1] = 0;
            copy_text(f->filter_name, sizeof f->filter_name, name);
        }
    }
    H5Pclose(dcpl);
}

/* Gather the facts about `dataset` in an open file; `path` receives the
 * dataset's path through hard links ("" when it was not reached). */
static void gather(hid_t file, const access_t *acc, const char *dataset, pyr_h5_found_t *f, char *path, size_t size)
{
    memset(f, 0, sizeof *f);
    f->rank = -1;
    path[0] = 0;
    hid_t root = H5Gopen2(file, "/", acc->gapl);
    if (root >= 0) {
        attr_read_str(root, "format", f->format, sizeof f->format, &f->has_format, &f->format_ok);
        attr_read_num(root, "format_version", H5T_NATIVE_INT64, H5T_INTEGER, 1, &f->version, &f->has_version, &f->version_ok);
        attr_read_str(root, "equation", f->equation, sizeof f->equation, &f->has_equation, &f->equation_ok);
        attr_read_num(root, "n", H5T_NATIVE_INT64, H5T_INTEGER, 3, f->n, &f->has_n, &f->n_ok);
        attr_read_num(root, "dims", H5T_NATIVE_INT64, H5T_INTEGER, 1, &f->dims_attr, &f->has_dims_attr, &f->dims_attr_ok);
        H5Gclose(root);
    }
    char at[1024];
    if (!resolve(file, acc->lapl, dataset, at, sizeof at, f)) return;
    f->has_dataset = 1;
    /* (H5Oopen and H5Iget_type: the same on HDF5 1.10 to 1.14, unlike H5Oget_info) */
    hid_t obj = H5Oopen(file, at, acc->lapl);
    if (obj < 0) return;
    f->is_dataset = H5Iget_type(obj) == H5I_DATASET;
    H5Oclose(obj);
    if (!f->is_dataset) return;
    hid_t ds = H5Dopen2(file, at, acc->dapl);
    if (ds < 0) return;
    gather_storage(ds, f);
    if (f->external_storage || f->virtual_layout || f->missing_filter) {
        H5Dclose(ds);
        return;
    }
    snprintf(path, size, "%s", at);
    hid_t t = H5Dget_type(ds), s = H5Dget_space(ds);
    if (t >= 0) {
        H5T_class_t c = H5Tget_class(t);
        f->type_class = c == H5T_FLOAT ? PYR_H5_CLASS_FLOAT : c == H5T_INTEGER ? PYR_H5_CLASS_INTEGER : c == H5T_STRING ? PYR_H5_CLASS_STRING : PYR_H5_CLASS_OTHER;
        f->type_size = H5Tget_size(t);
        H5Tclose(t);
    }
    if (s >= 0) {
        if (H5Sget_simple_extent_type(s) == H5S_SIMPLE) {
            int rank = H5Sget_simple_extent_ndims(s);
            hsize_t dims[H5S_MAX_RANK];
            if (rank >= 0 && rank <= H5S_MAX_RANK && H5Sget_simple_extent_dims(s, dims, NULL) == rank) {
                f->rank = rank;
                for (int i = 0; i < rank && i < PYR_H5_MAX_RANK; i++) f->dims[i] = dims[i];
            }
        } else {
            f->rank = 0;
        }
        H5Sclose(s);
    }
    /* the step and time of the dataset (a snapshot's are those of the group that holds it) */
    hid_t holder = -1;
    char *slash = strrchr(at, '/');
    const char *named = dataset[0] == '/' ? dataset + 1 : dataset;
    if (!strncmp(named, "snapshots/", 10) && slash && slash > at) {
        *slash = 0;
        holder = H5Gopen2(file, at, acc->gapl);
    }
    hid_t from = holder >= 0 ? holder : ds;
    attr_read_num(from, "step", H5T_NATIVE_INT64, H5T_INTEGER, 1, &f->step, &f->has_step, &f->step_ok);
    attr_read_num(from, "t", H5T_NATIVE_DOUBLE, H5T_FLOAT, 1, &f->t, &f->has_t, &f->t_ok);
    if (holder >= 0) H5Gclose(holder);
    H5Dclose(ds);
}

static pyr_status_t open_read(const char *path, hid_t *file)
{
    FILE *fp = NULL;
    PYR_TRY(pyr_open_input(path, "HDF5 input", &fp, NULL, NULL));
    fclose(fp);
#if H5_VERSION_GE(1, 12, 0)
    const htri_t is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
    const htri_t is_h5 = H5Fis_hdf5(path);
#endif
    if (is_h5 <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return pyr_fail(PYR_ERR_FORMAT, "%s is not an HDF5 file (no HDF5 signature: truncated, or another format?); write fields with "
                        "pyrgrid (output.field = NAME.h5) or h5py", path);
    }
    *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*file < 0) {
        char r[256];
        h5_error_t e;
        h5_reason_of(r, &e);
        if (e.lock && (e.err == 0 || e.err == EAGAIN || e.err == EWOULDBLOCK))
            return pyr_fail(PYR_ERR_IO, "%s is locked: another process has it open for writing; wait until that process has closed it "
                            "(HDF5_USE_FILE_LOCKING=FALSE turns locking off, for read-only file systems that cannot lock)", path);
        if (e.lock)
            return pyr_fail(PYR_ERR_IO, "%s cannot be locked for reading (%s); on a read-only file system that cannot lock, set "
                            "HDF5_USE_FILE_LOCKING=FALSE", path, r);
        return pyr_fail(PYR_ERR_FORMAT, "%s cannot be opened as HDF5 (HDF5: %s); the file may be truncated or damaged", path, r);
    }
    return PYR_OK;
}

/* Open `path`, find `dataset` and judge it (pyr_h5_check); `at` receives its path through hard links. */
static pyr_status_t open_dataset(const char *path, const char *dataset, hid_t *file, access_t *acc, pyr_h5_info_t *info, char *at,
                                 size_t size)
{
    *file = -1;
    acc->lapl = acc->gapl = acc->dapl = -1;
    PYR_TRY(open_read(path, file));
    pyr_status_t st = access_open(acc);
    pyr_h5_found_t *f = st == PYR_OK ? malloc(sizeof *f) : NULL;
    if (st == PYR_OK && !f) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    if (st == PYR_OK) {
        gather(*file, acc, dataset, f, at, size);
        st = pyr_h5_check(path, dataset, f, info);
    }
    free(f);
    if (st == PYR_OK && !at[0]) st = pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' cannot be opened; the file may be damaged", path, dataset);
    if (st != PYR_OK) {
        access_close(acc);
        H5Fclose(*file);
        *file = -1;
    }
    return st;
}

pyr_status_t pyr_h5_read_info(const char *path, const char *dataset, pyr_h5_info_t *info)
{
    memset(info, 0, sizeof *info);
    if (!dataset) dataset = "u";
    h5_start();
    quiet_t q;
    quiet_begin(&q);
    hid_t file = -1;
    access_t acc;
    char at[1024];
    pyr_status_t st = open_dataset(path, dataset, &file, &acc, info, at, sizeof at);
    if (st == PYR_OK) {
        access_close(&acc);
        H5Fclose(file);
    }
    H5Eclear2(H5E_DEFAULT);
    quiet_end(&q);
    return st;
}

static void format_shape(char *out, size_t size, int ndim, const int64_t *shape)
{
    uint64_t d[3];
    for (int i = 0; i < ndim && i < 3; i++) d[i] = (uint64_t)shape[i];
    shape_text(out, size, ndim, d);
}

/* Read the hyperslab offset .. offset + count - 1 (NumPy order) of
 * `dataset`, which must have exactly `shape` and precision p. */
static pyr_status_t read_slab(const char *path, const char *dataset, int ndim, const int64_t *shape, const int64_t *offset,
                              const int64_t *count, pyr_precision_t p, void *data)
{
    h5_start();
    quiet_t q;
    quiet_begin(&q);
    hid_t file = -1;
    access_t acc;
    pyr_h5_info_t info;
    char at[1024];
    pyr_status_t st = open_dataset(path, dataset, &file, &acc, &info, at, sizeof at);
    if (st == PYR_OK) {
        int same = info.ndim == ndim;
        for (int i = 0; same && i < ndim; i++) same = info.shape[i] == shape[i];
        if (!same) {
            char found[128], want[128];
            format_shape(found, sizeof found, info.ndim, info.shape);
            format_shape(want, sizeof want, ndim, shape);
            st = pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' has shape %s, expected %s (NumPy order, slowest axis first)", path, dataset,
                          found, want);
        } else if (info.precision != p) {
            st = pyr_fail(PYR_ERR_FORMAT, "%s: dataset '%s' holds %s, needs %s (scheme.precision = %s); convert it, or set "
                          "scheme.precision = %s", path, dataset, info.precision == PYR_DOUBLE ? "float64" : "float32",
                          p == PYR_DOUBLE ? "float64" : "float32", pyr_precision_name(p), pyr_precision_name(info.precision));
        }
        if (st == PYR_OK) {
            hid_t ds = H5Dopen2(file, at, acc.dapl);
            hid_t fspace = -1, mspace = -1; /* (a whole read: H5S_ALL for both) */
            herr_t r = ds < 0 ? -1 : 0;
            if (r >= 0 && offset) {
                hsize_t start[3], cnt[3];
                for (int i = 0; i < ndim; i++) start[i] = (hsize_t)offset[i], cnt[i] = (hsize_t)count[i];
                fspace = H5Dget_space(ds);
                mspace = H5Screate_simple(ndim, cnt, NULL);
                if (fspace < 0 || mspace < 0 || H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0) r = -1;
            }
            if (r >= 0)
                r = H5Dread(ds, p == PYR_DOUBLE ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, offset ? mspace : H5S_ALL, offset ? fspace : H5S_ALL,
                            H5P_DEFAULT, data);
            if (r < 0) {
                char why[256];
                st = pyr_fail(PYR_ERR_FORMAT, "%s: reading dataset '%s' failed (HDF5: %s); the file may be truncated or damaged", path,
                              dataset, h5_reason(why));
            }
            if (fspace >= 0) H5Sclose(fspace);
            if (mspace >= 0) H5Sclose(mspace);
            if (ds >= 0) H5Dclose(ds);
        }
        access_close(&acc);
        H5Fclose(file);
    }
    H5Eclear2(H5E_DEFAULT);
    quiet_end(&q);
    return st;
}

pyr_status_t pyr_h5_read_expect(const char *path, const char *dataset, int ndim, const int64_t *shape, pyr_precision_t p, void *data)
{
    if (!dataset) dataset = "u";
    if (ndim < 1 || ndim > 3 || !shape || !data) return pyr_fail(PYR_ERR_ARG, "pyr_h5_read_expect: 1 to 3 dimensions, a shape and data");
    return read_slab(path, dataset, ndim, shape, NULL, NULL, p, data);
}

pyr_status_t pyr_h5_read_part(const char *path, const char *dataset, int dims, const int64_t n[3], const int64_t origin[3],
                              const int64_t count[3], pyr_precision_t p, void *data)
{
    if (!dataset) dataset = "u";
    if (dims < 1 || dims > 3 || !n || !origin || !count || !data)
        return pyr_fail(PYR_ERR_ARG, "pyr_h5_read_part: 1 to 3 dimensions, the grid, the part and data");
    int64_t shape[3], offset[3], cnt[3];
    for (int i = 0; i < dims; i++) {
        const int a = dims - 1 - i;
        if (origin[a] < 0 || count[a] < 1 || origin[a] + count[a] > n[a])
            return pyr_fail(PYR_ERR_ARG, "pyr_h5_read_part: nodes %lld..%lld of axis %d are outside the grid of %lld nodes", (long long)origin[a],
                            (long long)(origin[a] + count[a] - 1), a, (long long)n[a]);
        shape[i] = n[a], offset[i] = origin[a], cnt[i] = count[a];
    }
    return read_slab(path, dataset, dims, shape, offset, cnt, p, data);
}

#endif /* PYR_HAVE_HDF5 */
