/* HDF5 results and inputs (io/hdf5.h). */
#include "io/hdf5.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/atomic.h"
#include "schemes/maxwell.h"

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
    if (!f->has_dataset)
        return pyr_fail(PYR_ERR_FORMAT, "%s has no dataset '%s'; a field file holds the field as dataset '%s' (h5py: "
                        "f.create_dataset('%s', data=a))", path, dataset, dataset, dataset);
    if (!f->is_dataset)
        return pyr_fail(PYR_ERR_FORMAT, "%s: '%s' is not a dataset (a group?); name the field's dataset", path, dataset);
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
pyr_status_t pyr_h5_writer_open(const char *path, const pyr_h5_desc_t *desc, pyr_h5_writer_t **w)
{
    (void)desc;
    *w = NULL;
    return no_hdf5(path);
}
pyr_status_t pyr_h5_writer_input(pyr_h5_writer_t *w, int i, const pyr_field_t *field)
{
    (void)w, (void)i, (void)field;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_writer_snapshot(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t)
{
    (void)w, (void)fields, (void)step, (void)t;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_writer_final(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t, const char *run_json)
{
    (void)w, (void)fields, (void)step, (void)t, (void)run_json;
    return no_hdf5(NULL);
}
pyr_status_t pyr_h5_writer_commit(pyr_h5_writer_t **w)
{
    (void)w;
    return no_hdf5(NULL);
}
void pyr_h5_writer_abort(pyr_h5_writer_t **w) { (void)w; }
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

const char *pyr_h5_library_version(void)
{
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

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    char *out = data;
    if (n == 0 && e->desc) snprintf(out, 256, "%s", e->desc);
    return 0;
}

/* The innermost message of HDF5's error stack ("truncated file: eof = ..."). */
static const char *h5_reason(char out[256])
{
    out[0] = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, out);
    H5Eclear2(H5E_DEFAULT);
    if (!out[0]) snprintf(out, 256, "unknown HDF5 error");
    return out;
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

static pyr_status_t attr_i64(hid_t loc, const char *name, int64_t v) { return attr_write(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 0, &v); }
static pyr_status_t attr_f64(hid_t loc, const char *name, double v) { return attr_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &v); }
static pyr_status_t attr_i64v(hid_t loc, const char *name, int n, const int64_t *v)
{
    return attr_write(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, n, v);
}
static pyr_status_t attr_f64v(hid_t loc, const char *name, int n, const double *v)
{
    return attr_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, v);
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

typedef struct {
    int64_t step;
    double t;
    char group[64]; /* "snapshots/000200", or "" for the root (the final fields) */
} entry_t;

struct pyr_h5_writer {
    pyr_atomic_file_t af;
    char *path;
    hid_t file;
    pyr_h5_desc_t d;
    pyr_problem_t problem;
    char names[PYR_H5_MAX_FIELDS][32];
    int inputs_written; /* bit i */
    entry_t *entries;
    int nentries, cap;
    int final_linked;
};

static pyr_status_t h5_fail(pyr_h5_writer_t *w, const char *what)
{
    char r[256];
    return pyr_fail(PYR_ERR_IO, "writing %s: %s failed (HDF5: %s); check the free space and that the directory is writable", w->path, what,
                    h5_reason(r));
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

static pyr_status_t write_field(pyr_h5_writer_t *w, int i, const char *name, const pyr_field_t *f, int with_time, int64_t step, double t)
{
    const int rank = f->dims;
    hsize_t dims[3], chunk[3];
    for (int i = 0; i < rank; i++) dims[i] = (hsize_t)f->n[rank - 1 - i];
    const int dbl = f->precision == PYR_DOUBLE;
    chunk_dims(rank, dims, dbl ? 8 : 4, chunk);
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    pyr_status_t st = PYR_OK;
    if (space < 0 || dcpl < 0 || lcpl < 0) st = h5_fail(w, "creating a dataspace");
    if (st == PYR_OK) {
        H5Pset_create_intermediate_group(lcpl, 1);
        H5Pset_chunk(dcpl, rank, chunk);
        if (w->d.compression > 0) {
            H5Pset_shuffle(dcpl);
            H5Pset_deflate(dcpl, (unsigned)w->d.compression);
        }
        hid_t ds = H5Dcreate2(w->file, name, dbl ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, space, lcpl, dcpl, H5P_DEFAULT);
        if (ds < 0) st = h5_fail(w, "creating a dataset");
        else {
            if (H5Dwrite(ds, dbl ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, f->data) < 0)
                st = h5_fail(w, "writing a field");
            if (st == PYR_OK && with_time &&
                (attr_i64(ds, "step", step) != PYR_OK || attr_f64(ds, "t", t + (w->d.staggered ? w->d.time_offset[i] : 0.0)) != PYR_OK))
                st = h5_fail(w, "writing attributes");
            if (st == PYR_OK && w->d.staggered && attr_f64v(ds, "offset", 3, w->d.offset[i]) != PYR_OK) st = h5_fail(w, "writing attributes");
            H5Dclose(ds);
        }
    }
    if (lcpl >= 0) H5Pclose(lcpl);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return st;
}

static const char *rhs_name(pyr_rhs_kind_t k)
{
    return k == PYR_RHS_SINE ? "sine" : k == PYR_RHS_FILE ? "file" : "zero";
}

static pyr_status_t root_attributes(pyr_h5_writer_t *w, const char *plan_json, const char *initial)
{
    const pyr_problem_t *p = &w->problem;
    hid_t r = w->file;
    char fields[PYR_H5_MAX_FIELDS * 33] = "";
    for (int i = 0; i < w->d.nfields; i++) {
        if (i) strcat(fields, " ");
        strcat(fields, w->names[i]);
    }
    double h[3];
    for (int a = 0; a < 3; a++) h[a] = pyr_problem_h(p, a);
    pyr_status_t st = PYR_OK;
#define A(x)                                                                                                                            \
    if (st == PYR_OK) st = (x)
    A(attr_str(r, "format", PYR_H5_FORMAT));
    A(attr_i64(r, "format_version", PYR_H5_FORMAT_VERSION));
    A(attr_str(r, "pyrgrid_version", pyr_version()));
    A(attr_str(r, "equation", pyr_equation_name(p->equation)));
    A(attr_str(r, "fields", fields));
    A(attr_i64(r, "dims", p->dims));
    A(attr_i64v(r, "n", 3, p->n));
    A(attr_f64v(r, "lengths", 3, p->length));
    A(attr_f64v(r, "h", 3, h));
    A(attr_str(r, "precision", pyr_precision_name(p->precision)));
    A(attr_i64(r, "steps", w->d.end_step));
    if (p->equation == PYR_EQ_HEAT) {
        A(attr_f64(r, "alpha", p->heat.alpha));
        A(attr_f64(r, "dt", p->heat.dt));
    } else if (p->equation == PYR_EQ_POISSON) {
        A(attr_i64(r, "iterations", w->d.end_step));
        A(attr_f64(r, "tolerance", p->poisson.tolerance));
        A(attr_i64(r, "check_every", p->poisson.check_every));
        A(attr_f64(r, "omega", p->poisson.omega));
        A(attr_str(r, "rhs", rhs_name(p->poisson.rhs)));
        if (p->poisson.rhs == PYR_RHS_FILE) A(attr_str(r, "rhs_file", p->poisson.rhs_file));
    } else if (p->equation == PYR_EQ_MAXWELL) {
        const pyr_maxwell_params_t *m = &p->maxwell;
        double dt = 0;
        if (pyr_maxwell_dt(p, &dt) != PYR_OK) pyr_clear_error();
        A(attr_f64(r, "dt", dt));
        A(attr_f64(r, "courant", m->courant));
        if (p->dims == 2) A(attr_str(r, "mode", m->te ? "te" : "tm"));
        char faces[64] = "";
        static const char *const face[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
        for (int f = 0; f < 2 * p->dims && m->cpml_cells > 0; f++)
            if ((m->cpml_faces >> f) & 1) snprintf(faces + strlen(faces), sizeof faces - strlen(faces), "%s%s", faces[0] ? "," : "", face[f]);
        A(attr_str(r, "boundary", faces[0] ? "cpml" : "pec"));
        if (faces[0]) {
            A(attr_i64(r, "cpml_cells", m->cpml_cells));
            A(attr_str(r, "cpml_faces", faces));
        }
        A(attr_f64(r, "eps_r", m->eps_r));
        A(attr_f64(r, "sigma", m->sigma));
        A(attr_f64(r, "mu_r", m->mu_r));
        A(attr_i64(r, "shapes", m->nshapes));
        A(attr_i64(r, "sources", m->nsources));
        A(attr_i64(r, "probes", m->nprobes));
    }
    if (initial) A(attr_str(r, "initial", initial));
    if (plan_json) A(attr_str(r, "plan", plan_json));
#undef A
    return st == PYR_OK ? PYR_OK : h5_fail(w, "writing the root attributes");
}

static void writer_free(pyr_h5_writer_t *w)
{
    free(w->entries);
    free(w->path);
    free(w);
}

void pyr_h5_writer_abort(pyr_h5_writer_t **wp)
{
    if (!wp || !*wp) return;
    pyr_h5_writer_t *w = *wp;
    if (w->file >= 0) {
        quiet_t q;
        quiet_begin(&q);
        H5Fclose(w->file);
        H5Eclear2(H5E_DEFAULT);
        quiet_end(&q);
    }
    pyr_atomic_abort(&w->af);
    writer_free(w);
    *wp = NULL;
}

pyr_status_t pyr_h5_writer_open(const char *path, const pyr_h5_desc_t *desc, pyr_h5_writer_t **out)
{
    *out = NULL;
    if (!desc || !desc->problem || desc->nfields < 1 || desc->nfields > PYR_H5_MAX_FIELDS)
        return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_open: a problem and 1 to %d fields are needed", PYR_H5_MAX_FIELDS);
    if (desc->compression < 0 || desc->compression > 9)
        return pyr_fail(PYR_ERR_CONFIG, "output.compression = %d: use 0 (none) to 9", desc->compression);
    if (desc->compression > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
        return pyr_fail(PYR_ERR_UNSUPPORTED, "output.compression = %d: this HDF5 has no gzip filter; use output.compression = 0",
                        desc->compression);
    pyr_h5_writer_t *w = calloc(1, sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    w->file = -1;
    w->d = *desc;
    w->problem = *desc->problem;
    w->d.problem = &w->problem;
    for (int i = 0; i < desc->nfields; i++) {
        snprintf(w->names[i], sizeof w->names[i], "%s", desc->name[i] ? desc->name[i] : "u");
        w->d.name[i] = w->names[i];
    }
    w->d.plan_json = NULL; /* written now, not kept */
    w->d.initial = NULL;
    w->path = strdup(path);
    if (!w->path) {
        writer_free(w);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    /* HDF5 seeks and rewrites: a regular file only (the temporary, renamed at commit) */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        writer_free(w);
        return pyr_fail(PYR_ERR_IO, "%s is not a regular file; HDF5 output needs one (it seeks while writing): name a file, or write "
                        ".npy to a FIFO or device", path);
    }
    pyr_status_t st = pyr_atomic_open(&w->af, path);
    if (st != PYR_OK) {
        writer_free(w);
        return st;
    }
    if (!w->af.tmp_path) {
        pyr_atomic_abort(&w->af);
        writer_free(w);
        return pyr_fail(PYR_ERR_IO, "%s is not a regular file; HDF5 output needs one (it seeks while writing)", path);
    }
    quiet_t q;
    quiet_begin(&q);
    /* the temporary is open (empty) through af.fp, which commit syncs and closes */
    w->file = H5Fcreate(w->af.tmp_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (w->file < 0) st = h5_fail(w, "creating the file");
    if (st == PYR_OK) st = root_attributes(w, desc->plan_json, desc->initial);
    quiet_end(&q);
    if (st != PYR_OK) {
        pyr_h5_writer_abort(&w);
        return st;
    }
    *out = w;
    return PYR_OK;
}

static pyr_status_t check_field(pyr_h5_writer_t *w, const pyr_field_t *f, const char *name)
{
    if (!f || !f->data) return pyr_fail(PYR_ERR_ARG, "writing %s: field %s is missing", w->path, name);
    for (int a = 0; a < 3; a++)
        if (f->n[a] != w->problem.n[a] || f->dims != w->problem.dims || f->precision != w->problem.precision)
            return pyr_fail(PYR_ERR_ARG, "writing %s: field %s does not match the problem's grid", w->path, name);
    return PYR_OK;
}

pyr_status_t pyr_h5_writer_input(pyr_h5_writer_t *w, int i, const pyr_field_t *field)
{
    if (!w || i < 0 || i >= w->d.nfields) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_input: no field %d", i);
    PYR_TRY(check_field(w, field, w->names[i]));
    if (w->inputs_written & (1 << i)) return PYR_OK;
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = write_field(w, i, w->names[i], field, 0, 0, 0);
    quiet_end(&q);
    if (st == PYR_OK) w->inputs_written |= 1 << i;
    return st;
}

static pyr_status_t add_entry(pyr_h5_writer_t *w, int64_t step, double t, const char *group)
{
    if (w->nentries == w->cap) {
        int cap = w->cap ? 2 * w->cap : 16;
        entry_t *e = realloc(w->entries, (size_t)cap * sizeof *e);
        if (!e) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        w->entries = e;
        w->cap = cap;
    }
    entry_t *e = &w->entries[w->nentries++];
    e->step = step;
    e->t = t;
    snprintf(e->group, sizeof e->group, "%s", group);
    return PYR_OK;
}

pyr_status_t pyr_h5_writer_snapshot(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t)
{
    if (!w || !fields) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_snapshot: writer and fields are required");
    for (int i = 0; i < w->d.nfields; i++)
        if (w->d.updated[i]) PYR_TRY(check_field(w, fields[i], w->names[i]));
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = PYR_OK;
    char name[128], group[64];
    snprintf(group, sizeof group, "snapshots/%06lld", (long long)step);
    for (int i = 0; i < w->d.nfields && st == PYR_OK; i++) {
        if (!w->d.updated[i]) continue;
        pyr_h5_snapshot_name(step, w->names[i], name, sizeof name);
        st = write_field(w, i, name, fields[i], 1, step, t);
    }
    if (st == PYR_OK) {
        hid_t g = H5Gopen2(w->file, group, H5P_DEFAULT);
        if (g < 0 || attr_i64(g, "step", step) != PYR_OK || attr_f64(g, "t", t) != PYR_OK) st = h5_fail(w, "writing a snapshot's attributes");
        if (g >= 0) H5Gclose(g);
    }
    /* a snapshot is on disk as it is made: a reader of the temporary, or a crash, finds whole ones */
    if (st == PYR_OK && H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0) st = h5_fail(w, "flushing a snapshot");
    quiet_end(&q);
    if (st == PYR_OK) st = add_entry(w, step, t, group);
    return st;
}

pyr_status_t pyr_h5_writer_final(pyr_h5_writer_t *w, const pyr_field_t *const *fields, int64_t step, double t, const char *run_json)
{
    if (!w || !fields) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_final: writer and fields are required");
    for (int i = 0; i < w->d.nfields; i++)
        if (w->d.updated[i]) PYR_TRY(check_field(w, fields[i], w->names[i]));
    quiet_t q;
    quiet_begin(&q);
    pyr_status_t st = PYR_OK;
    /* the last snapshot holds these very fields: link, do not copy */
    const int link = w->nentries > 0 && w->entries[w->nentries - 1].step == step;
    for (int i = 0; i < w->d.nfields && st == PYR_OK; i++) {
        if (!w->d.updated[i]) continue;
        if (link) {
            char name[128];
            pyr_h5_snapshot_name(step, w->names[i], name, sizeof name);
            if (H5Lcreate_hard(w->file, name, w->file, w->names[i], H5P_DEFAULT, H5P_DEFAULT) < 0) st = h5_fail(w, "linking the final field");
        } else {
            st = write_field(w, i, w->names[i], fields[i], 1, step, t);
        }
    }
    if (st == PYR_OK && (attr_i64(w->file, "step", step) != PYR_OK || attr_f64(w->file, "t", t) != PYR_OK ||
                         (run_json && attr_str(w->file, "run", run_json) != PYR_OK)))
        st = h5_fail(w, "writing the root attributes");
    quiet_end(&q);
    if (st == PYR_OK && !link) st = add_entry(w, step, t, "");
    w->final_linked = link;
    return st;
}

/* ------------------------------------------------------------------- XDMF */

static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* Dimensions, origin and spacing are written slowest axis first (z y x),
 * as XDMF's CoRectMesh readers (ParaView, VisIt) take them. */
static pyr_status_t write_xdmf(pyr_h5_writer_t *w, const char *xmf_path)
{
    const pyr_problem_t *p = &w->problem;
    const int rank = p->dims;
    pyr_atomic_file_t af;
    PYR_TRY(pyr_atomic_open(&af, xmf_path));
    FILE *f = af.fp;
    const char *base = strrchr(w->path, '/');
    base = base ? base + 1 : w->path;
    char dims[96] = "", origin[96] = "", spacing[160] = "";
    for (int i = 0; i < rank; i++) {
        int a = rank - 1 - i;
        size_t k = strlen(dims), o = strlen(origin), s = strlen(spacing);
        snprintf(dims + k, sizeof dims - k, "%s%lld", i ? " " : "", (long long)p->n[a]);
        snprintf(origin + o, sizeof origin - o, "%s0", i ? " " : "");
        snprintf(spacing + s, sizeof spacing - s, "%s%.17g", i ? " " : "", pyr_problem_h(p, a));
    }
    const int prec = p->precision == PYR_DOUBLE ? 8 : 4;
    fprintf(f, "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n <Domain>\n");
    fprintf(f, "  <Grid Name=\"%s\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", pyr_equation_name(p->equation));
    for (int e = 0; e < w->nentries; e++) {
        const entry_t *en = &w->entries[e];
        /* Poisson has no time: its sweeps stand for it (Maxwell's is E's; H is half a step earlier) */
        double time = p->equation == PYR_EQ_POISSON ? (double)en->step : en->t;
        fprintf(f, "   <Grid Name=\"step %lld\" GridType=\"Uniform\">\n", (long long)en->step);
        fprintf(f, "    <Time Value=\"%.17g\"/>\n", time);
        fprintf(f, "    <Topology TopologyType=\"%dDCoRectMesh\" Dimensions=\"%s\"/>\n", rank, dims);
        fprintf(f, "    <Geometry GeometryType=\"%s\">\n", rank == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY");
        fprintf(f, "     <DataItem Name=\"Origin\" Dimensions=\"%d\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">%s</DataItem>\n", rank,
                origin);
        fprintf(f, "     <DataItem Name=\"Spacing\" Dimensions=\"%d\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">%s</DataItem>\n", rank,
                spacing);
        fprintf(f, "    </Geometry>\n");
        for (int i = 0; i < w->d.nfields; i++) {
            if (!w->d.updated[i] && !(w->inputs_written & (1 << i))) continue;
            fprintf(f, "    <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n", w->names[i]);
            fprintf(f, "     <DataItem Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%d\" Format=\"HDF\">", dims, prec);
            xml_escaped(f, base);
            if (w->d.updated[i] && en->group[0]) fprintf(f, ":/%s/%s</DataItem>\n", en->group, w->names[i]);
            else fprintf(f, ":/%s</DataItem>\n", w->names[i]);
            fprintf(f, "    </Attribute>\n");
        }
        fprintf(f, "   </Grid>\n");
    }
    fprintf(f, "  </Grid>\n </Domain>\n</Xdmf>\n");
    return pyr_atomic_commit(&af);
}

pyr_status_t pyr_h5_writer_commit(pyr_h5_writer_t **wp)
{
    if (!wp || !*wp) return pyr_fail(PYR_ERR_ARG, "pyr_h5_writer_commit: no writer");
    pyr_h5_writer_t *w = *wp;
    quiet_t q;
    quiet_begin(&q);
    herr_t r = H5Fclose(w->file);
    w->file = -1;
    pyr_status_t st = r < 0 ? h5_fail(w, "closing the file") : PYR_OK;
    quiet_end(&q);
    if (st == PYR_OK) st = pyr_atomic_commit(&w->af);
    else pyr_atomic_abort(&w->af);
    if (st == PYR_OK && w->d.xdmf && w->problem.dims >= 2) {
        char xmf[PYR_PATH_MAX + 8];
        pyr_h5_sidecar_path(w->path, xmf, sizeof xmf);
        st = write_xdmf(w, xmf);
    }
    writer_free(w);
    *wp = NULL;
    return st;
}

/* ---------------------------------------------------------------- reading */

static int is_snapshot_name(const char *dataset, char *group, size_t size)
{
    const char *slash = strrchr(dataset, '/');
    if (strncmp(dataset, "snapshots/", 10) != 0 && strncmp(dataset, "/snapshots/", 11) != 0) return 0;
    if (!slash) return 0;
    size_t n = (size_t)(slash - dataset);
    if (n >= size) return 0;
    memcpy(group, dataset, n);
    group[n] = 0;
    return 1;
}

/* Gather the facts about `dataset` in an open file. */
static void gather(hid_t file, const char *dataset, pyr_h5_found_t *f)
{
    memset(f, 0, sizeof *f);
    f->rank = -1;
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    if (root >= 0) {
        attr_read_str(root, "format", f->format, sizeof f->format, &f->has_format, &f->format_ok);
        attr_read_num(root, "format_version", H5T_NATIVE_INT64, H5T_INTEGER, 1, &f->version, &f->has_version, &f->version_ok);
        attr_read_str(root, "equation", f->equation, sizeof f->equation, &f->has_equation, &f->equation_ok);
        attr_read_num(root, "n", H5T_NATIVE_INT64, H5T_INTEGER, 3, f->n, &f->has_n, &f->n_ok);
        attr_read_num(root, "dims", H5T_NATIVE_INT64, H5T_INTEGER, 1, &f->dims_attr, &f->has_dims_attr, &f->dims_attr_ok);
        H5Gclose(root);
    }
    /* every link on the way must exist (H5Lexists fails on a missing middle) */
    char part[256];
    int exists = 1;
    for (const char *s = dataset; exists && (s = strchr(s + 1, '/')) != NULL;) {
        size_t n = (size_t)(s - dataset);
        if (n == 0 || n >= sizeof part) continue;
        memcpy(part, dataset, n);
        part[n] = 0;
        exists = H5Lexists(file, part, H5P_DEFAULT) > 0;
    }
    if (!exists || H5Lexists(file, dataset, H5P_DEFAULT) <= 0) return;
    f->has_dataset = 1;
    /* (H5Oopen and H5Iget_type: the same on HDF5 1.10 to 1.14, unlike H5Oget_info) */
    hid_t obj = H5Oopen(file, dataset, H5P_DEFAULT);
    if (obj < 0) return;
    f->is_dataset = H5Iget_type(obj) == H5I_DATASET;
    H5Oclose(obj);
    if (!f->is_dataset) return;
    hid_t ds = H5Dopen2(file, dataset, H5P_DEFAULT);
    if (ds < 0) return;
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
    /* the step and time of the dataset (a snapshot's are its group's) */
    char group[128];
    hid_t holder = -1;
    if (is_snapshot_name(dataset, group, sizeof group)) holder = H5Gopen2(file, group, H5P_DEFAULT);
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
        return pyr_fail(PYR_ERR_FORMAT, "%s cannot be opened as HDF5 (HDF5: %s); the file may be truncated or damaged", path, h5_reason(r));
    }
    return PYR_OK;
}

pyr_status_t pyr_h5_read_info(const char *path, const char *dataset, pyr_h5_info_t *info)
{
    memset(info, 0, sizeof *info);
    if (!dataset) dataset = "u";
    quiet_t q;
    quiet_begin(&q);
    hid_t file = -1;
    pyr_status_t st = open_read(path, &file);
    if (st == PYR_OK) {
        pyr_h5_found_t *f = malloc(sizeof *f);
        if (!f) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        else {
            gather(file, dataset, f);
            st = pyr_h5_check(path, dataset, f, info);
            free(f);
        }
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
    quiet_t q;
    quiet_begin(&q);
    hid_t file = -1;
    pyr_status_t st = open_read(path, &file);
    if (st == PYR_OK) {
        pyr_h5_found_t *f = malloc(sizeof *f);
        pyr_h5_info_t info;
        if (!f) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        else {
            gather(file, dataset, f);
            st = pyr_h5_check(path, dataset, f, &info);
            free(f);
        }
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
        }
        if (st == PYR_OK) {
            hid_t ds = H5Dopen2(file, dataset, H5P_DEFAULT);
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
