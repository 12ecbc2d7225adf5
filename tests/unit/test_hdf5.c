/* HDF5 field files (io/hdf5.h): a written file reads back bit for bit with
 * its attributes, snapshots and sidecar; the checks of what a reader found
 * (pyr_h5_check) refuse every malformed case with a message; damaged,
 * truncated, foreign and mistyped files are refused by the reader; so are
 * files whose dataset lies elsewhere (external storage, external links,
 * virtual datasets), soft links that loop or dangle, filters this libhdf5
 * lacks, a snapshot whose step is not its name's, and a file locked by a
 * writer, each with its own message; a FIFO is refused as an output and a
 * failed writer leaves nothing behind.  Skipped (77) in a build without
 * HDF5. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* flock() */
#endif
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "io/atomic.h"
#include "io/hdf5.h"
#include "outputs/h5_result.h"

#ifdef PYR_HAVE_HDF5
#include <hdf5.h>

static char dir[1024];

static const char *tpath(const char *name)
{
    static char buf[8][1200];
    static int k = 0;
    char *b = buf[k++ % 8];
    snprintf(b, 1200, "%s/%s", dir, name);
    return b;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = calloc(1, (size_t)n + 1);
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) t[0] = 0;
    fclose(f);
    return t;
}
#endif

static void test_check(void)
{
    pyr_h5_found_t f;
    pyr_h5_info_t info;
    memset(&f, 0, sizeof f);
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "has no dataset 'u'");
    f.has_dataset = 1;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "not a dataset");
    f.is_dataset = 1;
    f.rank = 0;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "a scalar");
    f.rank = 4;
    f.dims[0] = f.dims[1] = f.dims[2] = f.dims[3] = 2;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "has 4 dimensions (2, 2, 2, 2)");
    f.rank = 2;
    f.dims[0] = 0;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "at least one node");
    f.dims[0] = 5;
    f.dims[1] = 7;
    f.type_class = PYR_H5_CLASS_INTEGER;
    f.type_size = 4;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "holds integers");
    f.type_class = PYR_H5_CLASS_FLOAT;
    f.type_size = 2;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "floats of another size");
    f.type_size = 8;
    CHECK_OK(pyr_h5_check("x.h5", "u", &f, &info));
    CHECK(!info.pyrgrid && info.ndim == 2 && info.shape[0] == 5 && info.shape[1] == 7 && info.precision == PYR_DOUBLE, "foreign file info");
    /* a pyrgrid file's attributes */
    f.has_format = 1;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "'format' is not a string");
    f.format_ok = 1;
    snprintf(f.format, sizeof f.format, "netcdf");
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "is not \"pyrgrid-field\"");
    snprintf(f.format, sizeof f.format, "%s", PYR_H5_FORMAT);
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "format_version (it is missing)");
    f.has_version = f.version_ok = 1;
    f.version = 2;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "format_version = 2");
    f.version = 1;
    f.has_step = 1;
    f.step = 3;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "not an integer");
    f.step_ok = 1;
    f.step = -3;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "integer >= 0");
    f.step = 3;
    f.has_t = f.t_ok = 1;
    f.t = NAN;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "finite");
    f.t = 0.5;
    f.has_n = f.n_ok = 1;
    f.n[0] = 7;
    f.n[1] = 6;
    f.n[2] = 1;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "attribute n");
    f.n[1] = 5;
    f.has_dims_attr = f.dims_attr_ok = 1;
    f.dims_attr = 3;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &f, &info), PYR_ERR_FORMAT, "attribute dims");
    f.dims_attr = 2;
    CHECK_OK(pyr_h5_check("x.h5", "u", &f, &info));
    CHECK(info.pyrgrid && info.has_step && info.step == 3 && info.has_t && info.t == 0.5, "pyrgrid file info");

    /* reliability review M1, L2, L3, L17, L18: a dataset reached or stored outside the file, or not
     * decodable here, is refused whatever else is right about it; L15: a snapshot's step is its name's */
    pyr_h5_found_t g = f;
    g.link = PYR_H5_LINK_EXTERNAL;
    snprintf(g.link_name, sizeof g.link_name, "u");
    snprintf(g.link_target, sizeof g.link_target, "/abs/other.h5:/secret");
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "'u' is an external link to /abs/other.h5:/secret");
    snprintf(g.link_name, sizeof g.link_name, "snapshots");
    CHECK_FAILS(pyr_h5_check("x.h5", "snapshots/000001/u", &g, &info), PYR_ERR_FORMAT,
                "'snapshots' (on the way to 'snapshots/000001/u') is an external link");
    g.link = PYR_H5_LINK_DANGLING;
    g.has_dataset = 0;
    snprintf(g.link_name, sizeof g.link_name, "u");
    snprintf(g.link_target, sizeof g.link_target, "/nothing");
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "soft link to '/nothing', which does not exist in the file (a dangling link)");
    CHECK(!info.missing, "a dangling link counted as a missing dataset");
    g.link = PYR_H5_LINK_LOOP;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "form a loop");
    g.link = PYR_H5_LINK_OTHER;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "a link pyrgrid does not follow");
    g.link = PYR_H5_LINK_OK;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "has no dataset 'u'");
    CHECK(info.missing, "a missing dataset is not marked missing");
    g.has_dataset = 1;
    g.external_storage = 2;
    snprintf(g.external_file, sizeof g.external_file, "fifo.bin");
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "outside the file, in external raw storage ('fifo.bin' and others)");
    g.external_storage = -1;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "how dataset 'u' stores its values cannot be read");
    g.external_storage = 0;
    g.virtual_layout = 1;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "is a virtual dataset");
    g.virtual_layout = 0;
    g.missing_filter = 32000;
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "filter 32000 (LZF), which this libhdf5 does not have");
    snprintf(g.filter_name, sizeof g.filter_name, "lzf");
    CHECK_FAILS(pyr_h5_check("x.h5", "u", &g, &info), PYR_ERR_FORMAT, "filter 32000 (lzf)");
    g.missing_filter = 0;
    CHECK_OK(pyr_h5_check("x.h5", "u", &g, &info));
    g.step = 30;
    CHECK_FAILS(pyr_h5_check("x.h5", "snapshots/000020/u", &g, &info), PYR_ERR_FORMAT,
                "has the attribute step = 30, but its name says step 20");
    CHECK_FAILS(pyr_h5_check("x.h5", "/snapshots/000020/u", &g, &info), PYR_ERR_FORMAT, "its name says step 20");
    g.step = 20;
    CHECK_OK(pyr_h5_check("x.h5", "/snapshots/000020/u", &g, &info));
    CHECK_OK(pyr_h5_check("x.h5", "snapshots/latest/u", &g, &info)); /* a name without a step says nothing */
}

#ifdef PYR_HAVE_HDF5

static void fill(pyr_field_t *f, double k)
{
    double *d = f->data;
    for (int64_t i = 0; i < pyr_field_count(f); i++) d[i] = sin(k * (double)i) / 3.0;
}

static void test_roundtrip(void)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.equation = PYR_EQ_POISSON;
    p.n[0] = 9;
    p.n[1] = 6;
    p.length[0] = 2.0;
    p.poisson.rhs = PYR_RHS_SINE;
    p.poisson.tolerance = 1e-9;
    p.steps = 500;
    pyr_field_t *u = NULL, *f = NULL;
    CHECK_OK(pyr_field_create(&p, &u));
    CHECK_OK(pyr_field_create(&p, &f));
    fill(f, 0.7);
    pyr_h5_desc_t d;
    memset(&d, 0, sizeof d);
    d.problem = &p;
    d.nfields = 2;
    d.name[0] = "u";
    d.name[1] = "f";
    d.updated[0] = 1;
    d.compression = 4;
    d.plan_json = "{\"method\":\"naive\"}";
    d.initial = "zero";
    d.end_step = 500;
    d.xdmf = 1;
    pyr_h5_writer_t *w = NULL;
    CHECK_OK(pyr_h5_writer_open(tpath("r.h5"), &d, &w));
    CHECK(!exists(tpath("r.h5")), "the file appeared before its commit");
    CHECK_OK(pyr_h5_writer_input(w, 1, f));
    const pyr_field_t *fs[2] = {u, f};
    for (int s = 1; s <= 3; s++) {
        fill(u, 0.1 * s);
        CHECK_OK(pyr_h5_writer_snapshot(w, fs, 100 * s, 0));
    }
    CHECK_OK(pyr_h5_writer_final(w, fs, 300, 0, "{\"steps\":300}"));
    CHECK_OK(pyr_h5_writer_commit(&w));
    CHECK(w == NULL && exists(tpath("r.h5")) && exists(tpath("r.xmf")), "file and sidecar committed");

    pyr_h5_info_t info;
    CHECK_OK(pyr_h5_read_info(tpath("r.h5"), NULL, &info));
    CHECK(info.pyrgrid && info.ndim == 2 && info.shape[0] == 6 && info.shape[1] == 9 && info.has_step && info.step == 300 &&
              !strcmp(info.equation, "poisson"),
          "info of u: pyrgrid %d, shape (%lld, %lld), step %lld, equation %s", info.pyrgrid, (long long)info.shape[0],
          (long long)info.shape[1], (long long)info.step, info.equation);
    CHECK_OK(pyr_h5_read_info(tpath("r.h5"), "snapshots/000200/u", &info));
    CHECK(info.has_step && info.step == 200, "snapshot step %lld", (long long)info.step);
    double back[54];
    int64_t shape[2] = {6, 9};
    CHECK_OK(pyr_h5_read_expect(tpath("r.h5"), "f", 2, shape, PYR_DOUBLE, back));
    CHECK(!memcmp(back, f->data, sizeof back), "f does not read back bit for bit");
    CHECK_OK(pyr_h5_read_expect(tpath("r.h5"), "u", 2, shape, PYR_DOUBLE, back));
    CHECK(!memcmp(back, u->data, sizeof back), "u does not read back bit for bit");
    CHECK_OK(pyr_h5_read_expect(tpath("r.h5"), "snapshots/000100/u", 2, shape, PYR_DOUBLE, back));
    fill(u, 0.1);
    CHECK(!memcmp(back, u->data, sizeof back), "snapshot 100 does not read back");
    /* a part (several devices, MPI ranks): nodes x 2..6, y 1..4 of f, only those */
    {
        const int64_t n[3] = {9, 6, 1}, origin[3] = {2, 1, 0}, count[3] = {5, 4, 1};
        double part[20];
        CHECK_OK(pyr_h5_read_part(tpath("r.h5"), "f", 2, n, origin, count, PYR_DOUBLE, part));
        int same = 1;
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 5; x++) same &= part[y * 5 + x] == ((const double *)f->data)[(y + 1) * 9 + x + 2];
        CHECK(same, "a part of f does not read back bit for bit");
        const int64_t past[3] = {5, 4, 1};
        CHECK_FAILS(pyr_h5_read_part(tpath("r.h5"), "f", 2, n, past, count, PYR_DOUBLE, part), PYR_ERR_ARG, "nodes 4..7 of axis 1 are outside the grid of 6 nodes");
        const int64_t wrong[3] = {9, 7, 1};
        CHECK_FAILS(pyr_h5_read_part(tpath("r.h5"), "f", 2, wrong, origin, count, PYR_DOUBLE, part), PYR_ERR_FORMAT,
                    "has shape (6, 9), expected (7, 9)");
    }
    /* wrong expectations */
    int64_t other[2] = {9, 6};
    float fb[54];
    CHECK_FAILS(pyr_h5_read_expect(tpath("r.h5"), "u", 2, other, PYR_DOUBLE, back), PYR_ERR_FORMAT, "has shape (6, 9), expected (9, 6)");
    CHECK_FAILS(pyr_h5_read_expect(tpath("r.h5"), "u", 2, shape, PYR_FLOAT, fb), PYR_ERR_FORMAT, "holds float64, needs float32");
    CHECK_FAILS(pyr_h5_read_expect(tpath("r.h5"), "v", 2, shape, PYR_DOUBLE, back), PYR_ERR_FORMAT, "has no dataset 'v'");
    CHECK_FAILS(pyr_h5_read_info(tpath("r.h5"), "snapshots/000150/u", &info), PYR_ERR_FORMAT, "has no dataset");
    CHECK_FAILS(pyr_h5_read_info(tpath("r.h5"), "snapshots", &info), PYR_ERR_FORMAT, "is not a dataset");
    /* the sidecar names every step and both fields */
    char *x = slurp(tpath("r.xmf"));
    CHECK(x && strstr(x, "r.h5:/snapshots/000100/u") && strstr(x, "r.h5:/snapshots/000300/u") && strstr(x, "r.h5:/f") &&
              strstr(x, "2DCoRectMesh\" Dimensions=\"6 9\"") && strstr(x, "<Time Value=\"300\"/>") && strstr(x, "0.20000000000000001 0.25"),
          "sidecar:\n%s", x ? x : "(none)");
    free(x);
    pyr_field_destroy(&u);
    pyr_field_destroy(&f);
}

/* Files made with HDF5 directly: what other programs (or damage) produce. */
static void make_file(const char *name, hid_t type, int rank, const hsize_t *dims, const char *format, long long version, const char *dset)
{
    hid_t file = H5Fcreate(tpath(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(file, dset, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    char *zeros = calloc((size_t)n, 8);
    H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros);
    free(zeros);
    if (format) {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, strlen(format) + 1);
        hid_t sc = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(file, "format", st, sc, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(a, st, format);
        H5Aclose(a);
        a = H5Acreate2(file, "format_version", H5T_STD_I32LE, sc, H5P_DEFAULT, H5P_DEFAULT);
        int v = (int)version;
        H5Awrite(a, H5T_NATIVE_INT, &v);
        H5Aclose(a);
        H5Sclose(sc);
        H5Tclose(st);
    }
    H5Dclose(ds);
    H5Sclose(space);
    H5Fclose(file);
}

static void test_bad_files(void)
{
    pyr_h5_info_t info;
    double buf[64];
    int64_t shape[2] = {4, 4};
    hsize_t d2[2] = {4, 4}, d3[3] = {2, 2, 2}, d4[4] = {1, 2, 2, 2};
    /* a foreign file with u of the right kind is read (no format attribute needed) */
    make_file("foreign.h5", H5T_IEEE_F64LE, 2, d2, NULL, 0, "u");
    CHECK_OK(pyr_h5_read_expect(tpath("foreign.h5"), NULL, 2, shape, PYR_DOUBLE, buf));
    CHECK_OK(pyr_h5_read_info(tpath("foreign.h5"), NULL, &info));
    CHECK(!info.pyrgrid && !info.has_step, "a foreign file claims a step");
    make_file("ints.h5", H5T_STD_I32LE, 2, d2, NULL, 0, "u");
    CHECK_FAILS(pyr_h5_read_expect(tpath("ints.h5"), NULL, 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT, "holds integers");
    make_file("rank4.h5", H5T_IEEE_F64LE, 4, d4, NULL, 0, "u");
    CHECK_FAILS(pyr_h5_read_info(tpath("rank4.h5"), NULL, &info), PYR_ERR_FORMAT, "4 dimensions");
    make_file("noU.h5", H5T_IEEE_F64LE, 3, d3, NULL, 0, "field");
    CHECK_FAILS(pyr_h5_read_info(tpath("noU.h5"), NULL, &info), PYR_ERR_FORMAT, "f.create_dataset('u', data=a)");
    make_file("other.h5", H5T_IEEE_F64LE, 2, d2, "netcdf4", 1, "u");
    CHECK_FAILS(pyr_h5_read_info(tpath("other.h5"), NULL, &info), PYR_ERR_FORMAT, "is not \"pyrgrid-field\"");
    make_file("newer.h5", H5T_IEEE_F64LE, 2, d2, PYR_H5_FORMAT, 7, "u");
    CHECK_FAILS(pyr_h5_read_info(tpath("newer.h5"), NULL, &info), PYR_ERR_FORMAT, "format_version = 7");
    /* not HDF5 at all, empty, truncated */
    FILE *f = fopen(tpath("text.h5"), "w");
    fputs("not an hdf5 file\n", f);
    fclose(f);
    CHECK_FAILS(pyr_h5_read_info(tpath("text.h5"), NULL, &info), PYR_ERR_FORMAT, "is not an HDF5 file");
    f = fopen(tpath("empty.h5"), "w");
    fclose(f);
    CHECK_FAILS(pyr_h5_read_info(tpath("empty.h5"), NULL, &info), PYR_ERR_FORMAT, "is not an HDF5 file");
    CHECK_FAILS(pyr_h5_read_info(tpath("missing.h5"), NULL, &info), PYR_ERR_IO, "missing.h5");
    /* truncated copies of a good file, at several lengths */
    char *whole = NULL;
    FILE *g = fopen(tpath("r.h5"), "rb");
    CHECK(g != NULL, "r.h5 missing");
    if (g) {
        fseek(g, 0, SEEK_END);
        long n = ftell(g);
        fseek(g, 0, SEEK_SET);
        whole = malloc((size_t)n);
        if (fread(whole, 1, (size_t)n, g) != (size_t)n) n = 0;
        fclose(g);
        long cuts[] = {8, 100, 512, n / 2, n - 16};
        int refused = 0;
        for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
            FILE *t = fopen(tpath("cut.h5"), "wb");
            fwrite(whole, 1, (size_t)cuts[c], t);
            fclose(t);
            double u[54];
            int64_t s2[2] = {6, 9};
            pyr_status_t st = pyr_h5_read_expect(tpath("cut.h5"), "u", 2, s2, PYR_DOUBLE, u);
            refused += st != PYR_OK;
            CHECK(st == PYR_OK || st == PYR_ERR_FORMAT, "truncated at %ld: %s: %s", cuts[c], pyr_status_name(st), pyr_last_error());
            CHECK(st == PYR_OK || strstr(pyr_last_error(), "cut.h5"), "the message does not name the file: %s", pyr_last_error());
        }
        CHECK(refused >= 4, "only %d of 5 truncated files refused", refused);
        free(whole);
    }
}

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(tpath(name), "wb");
    CHECK(f && fwrite(data, 1, n, f) == n, "writing %s", name);
    if (f) fclose(f);
}

/* A file with dataset "u" (4 x 4 float64) made by `dcpl` (values not written: they live elsewhere). */
static void make_with(const char *name, hid_t dcpl)
{
    const hsize_t d2[2] = {4, 4};
    hid_t file = H5Fcreate(tpath(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(2, d2, NULL);
    hid_t ds = H5Dcreate2(file, "u", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(ds >= 0, "making %s", name);
    H5Dclose(ds);
    H5Sclose(space);
    H5Fclose(file);
}

static int never_read(const double *buf, int n)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != -7.0) return 0;
    return 1;
}

/* reliability review M1, L2, L3, L15, L17, L18, L19: files made to read what is not theirs, or
 * misleadingly described, are refused before a value is read, each with its own reason. */
static void test_hostile_files(void)
{
    pyr_h5_info_t info;
    double buf[16], secret[16];
    int64_t shape[2] = {4, 4};
    const hsize_t d2[2] = {4, 4};
    for (int i = 0; i < 16; i++) secret[i] = 1000.0 + i, buf[i] = -7.0;
    write_bytes("secret.bin", secret, sizeof secret);

    /* external raw storage: another file's bytes as the field (M1), by absolute name */
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, tpath("secret.bin"), 0, sizeof secret);
    make_with("ext.h5", dcpl);
    H5Pclose(dcpl);
    CHECK_FAILS(pyr_h5_read_expect(tpath("ext.h5"), NULL, 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "keeps its values outside the file, in external raw storage");
    CHECK(never_read(buf, 16), "the external file was read into the field");
    CHECK_FAILS(pyr_h5_read_info(tpath("ext.h5"), NULL, &info), PYR_ERR_FORMAT, "secret.bin");
    const int64_t n4[3] = {4, 4, 1}, at0[3] = {0, 0, 0}, two[3] = {2, 2, 1};
    CHECK_FAILS(pyr_h5_read_part(tpath("ext.h5"), NULL, 2, n4, at0, two, PYR_DOUBLE, buf), PYR_ERR_FORMAT, "external raw storage");
    CHECK(never_read(buf, 16), "a part of the external file was read into the field");
    /* ... and a FIFO without a writer (L2): refused at once, not a hang */
    CHECK(mkfifo(tpath("fifo.bin"), 0600) == 0, "mkfifo");
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, tpath("fifo.bin"), 0, sizeof secret);
    make_with("extfifo.h5", dcpl);
    H5Pclose(dcpl);
    alarm(60); /* a hang fails the test (SIGALRM) instead of stalling it */
    CHECK_FAILS(pyr_h5_read_expect(tpath("extfifo.h5"), NULL, 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT, "fifo.bin')");
    alarm(0);
    CHECK(never_read(buf, 16), "the FIFO was read into the field");

    /* another file, with a secret dataset and a group */
    hid_t other = H5Fcreate(tpath("other.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(2, d2, NULL);
    hid_t ds = H5Dcreate2(other, "secret", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, secret);
    H5Dclose(ds);
    hid_t grp = H5Gcreate2(other, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ds = H5Dcreate2(grp, "u", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, secret);
    H5Dclose(ds);
    H5Gclose(grp);
    H5Fclose(other);

    /* external links (L3): the dataset itself, a group on the way, and a soft link through one */
    hid_t file = H5Fcreate(tpath("elink.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_external(tpath("other.h5"), "/secret", file, "u", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_external(tpath("other.h5"), "/g", file, "snapshots", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_soft("/snapshots/u", file, "v", H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(file);
    CHECK_FAILS(pyr_h5_read_expect(tpath("elink.h5"), NULL, 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT, "'u' is an external link to ");
    CHECK(strstr(pyr_last_error(), "other.h5:/secret") != NULL, "the link's target is not named: %s", pyr_last_error());
    CHECK(never_read(buf, 16), "the external link was followed");
    CHECK_FAILS(pyr_h5_read_expect(tpath("elink.h5"), "snapshots/u", 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "'snapshots' (on the way to 'snapshots/u') is an external link");
    CHECK_FAILS(pyr_h5_read_expect(tpath("elink.h5"), "v", 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT, "is an external link");
    CHECK(never_read(buf, 16), "an external link on the way was followed");

    /* a virtual dataset mapped from the other file (M1) */
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t src = H5Screate_simple(2, d2, NULL);
    H5Pset_virtual(dcpl, space, tpath("other.h5"), "/secret", src);
    H5Sclose(src);
    make_with("vds.h5", dcpl);
    H5Pclose(dcpl);
    CHECK_FAILS(pyr_h5_read_expect(tpath("vds.h5"), NULL, 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT, "is a virtual dataset");
    CHECK(never_read(buf, 16), "the virtual dataset was read");

    /* a filter this libhdf5 lacks (h5py's LZF, 32000; optional, so that HDF5 writes the file here) (L18) */
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, d2);
    H5Pset_filter(dcpl, 32000, H5Z_FLAG_OPTIONAL, 0, NULL);
    make_with("lzf.h5", dcpl);
    H5Pclose(dcpl);
    CHECK_FAILS(pyr_h5_read_expect(tpath("lzf.h5"), NULL, 2, shape, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "is compressed with HDF5 filter 32000 (LZF), which this libhdf5 does not have");
    CHECK(!strstr(pyr_last_error(), "damaged") && !strstr(pyr_last_error(), "plugins"), "the filter message: %s", pyr_last_error());

    /* soft links inside the file are followed; a loop or a dangling one is named as such (L17) */
    file = H5Fcreate(tpath("soft.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    grp = H5Gcreate2(file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ds = H5Dcreate2(grp, "data", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, secret);
    H5Dclose(ds);
    H5Lcreate_soft("data", grp, "rel", H5P_DEFAULT, H5P_DEFAULT); /* relative to g */
    H5Gclose(grp);
    H5Lcreate_soft("/g/data", file, "u", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_soft("/g", file, "h", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_soft("/b", file, "a", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_soft("/a", file, "b", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_soft("self", file, "self", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_soft("/nothing", file, "d", H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(file);
    CHECK_OK(pyr_h5_read_expect(tpath("soft.h5"), "u", 2, shape, PYR_DOUBLE, buf));
    CHECK(!memcmp(buf, secret, sizeof buf), "a soft link inside the file does not read its dataset");
    memset(buf, 0, sizeof buf);
    CHECK_OK(pyr_h5_read_expect(tpath("soft.h5"), "h/rel", 2, shape, PYR_DOUBLE, buf));
    CHECK(!memcmp(buf, secret, sizeof buf), "soft links on the way (a group, a relative target) do not read the dataset");
    CHECK_FAILS(pyr_h5_read_info(tpath("soft.h5"), "a", &info), PYR_ERR_FORMAT, "form a loop");
    CHECK(!strstr(pyr_last_error(), "a group?"), "a loop called a group: %s", pyr_last_error());
    CHECK_FAILS(pyr_h5_read_info(tpath("soft.h5"), "self", &info), PYR_ERR_FORMAT, "form a loop");
    CHECK_FAILS(pyr_h5_read_info(tpath("soft.h5"), "d", &info), PYR_ERR_FORMAT, "'d' is a soft link to '/nothing', which does not exist");
    CHECK_FAILS(pyr_h5_read_info(tpath("soft.h5"), "h/nothing", &info), PYR_ERR_FORMAT, "has no dataset 'h/nothing'");
    CHECK(info.missing, "a name missing below a good soft link is not marked missing");

    /* a snapshot whose group's step attribute was edited (L15) */
    FILE *in = fopen(tpath("r.h5"), "rb"), *out = fopen(tpath("edited.h5"), "wb");
    CHECK(in && out, "copying r.h5");
    for (int c; in && out && (c = fgetc(in)) != EOF;) fputc(c, out);
    if (in) fclose(in);
    if (out) fclose(out);
    file = H5Fopen(tpath("edited.h5"), H5F_ACC_RDWR, H5P_DEFAULT);
    grp = H5Gopen2(file, "snapshots/000200", H5P_DEFAULT);
    hid_t a = H5Aopen(grp, "step", H5P_DEFAULT);
    long long step = 250;
    CHECK(H5Awrite(a, H5T_NATIVE_LLONG, &step) >= 0, "editing the step");
    H5Aclose(a);
    H5Gclose(grp);
    H5Fclose(file);
    CHECK_FAILS(pyr_h5_read_info(tpath("edited.h5"), "snapshots/000200/u", &info), PYR_ERR_FORMAT,
                "has the attribute step = 250, but its name says step 200");
    CHECK_OK(pyr_h5_read_info(tpath("edited.h5"), "snapshots/000100/u", &info));

    /* a file a writer holds (its lock) is locked, not damaged (L19) */
    int fd = open(tpath("r.h5"), O_RDWR);
    CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "locking r.h5");
    CHECK_FAILS(pyr_h5_read_info(tpath("r.h5"), NULL, &info), PYR_ERR_IO, "is locked: another process has it open for writing");
    CHECK(!strstr(pyr_last_error(), "damaged") && strstr(pyr_last_error(), "HDF5_USE_FILE_LOCKING"), "the lock message: %s",
          pyr_last_error());
    if (fd >= 0) close(fd);
    CHECK_OK(pyr_h5_read_info(tpath("r.h5"), NULL, &info));

    H5Sclose(space);
    const char *names[] = {"secret.bin", "fifo.bin", "ext.h5", "extfifo.h5", "other.h5", "elink.h5", "vds.h5", "lzf.h5", "soft.h5",
                           "edited.h5"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tpath(names[i]));
}

static void test_refused_outputs(void)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.n[0] = p.n[1] = 5;
    pyr_h5_desc_t d;
    memset(&d, 0, sizeof d);
    d.problem = &p;
    d.nfields = 1;
    d.name[0] = "u";
    d.updated[0] = 1;
    pyr_h5_writer_t *w = NULL;
    CHECK(mkfifo(tpath("fifo.h5"), 0600) == 0, "mkfifo");
    CHECK_FAILS(pyr_h5_writer_open(tpath("fifo.h5"), &d, &w), PYR_ERR_IO, "not a regular file");
    CHECK_FAILS(pyr_h5_writer_open(tpath("no/such/dir.h5"), &d, &w), PYR_ERR_IO, "does not exist");
    d.compression = 12;
    CHECK_FAILS(pyr_h5_writer_open(tpath("c.h5"), &d, &w), PYR_ERR_CONFIG, "compression");
    d.compression = 0;
    /* an aborted writer leaves neither the file nor a temporary */
    CHECK_OK(pyr_h5_writer_open(tpath("aborted.h5"), &d, &w));
    pyr_h5_writer_abort(&w);
    CHECK(!exists(tpath("aborted.h5")) && w == NULL, "an aborted file was left");
    /* a field of the wrong shape is refused */
    pyr_problem_t q = p;
    q.n[0] = 6;
    pyr_field_t *u = NULL;
    CHECK_OK(pyr_field_create(&q, &u));
    CHECK_OK(pyr_h5_writer_open(tpath("wrong.h5"), &d, &w));
    const pyr_field_t *fs[1] = {u};
    CHECK_FAILS(pyr_h5_writer_final(w, fs, 1, 0, NULL), PYR_ERR_ARG, "does not match");
    pyr_h5_writer_abort(&w);
    pyr_field_destroy(&u);
    unlink(tpath("fifo.h5"));
}
#endif

int main(void)
{
    test_check();
    if (!pyr_h5_available()) {
        printf("built without HDF5: only the checks ran\n");
        return check_report() ? 1 : 77;
    }
#ifdef PYR_HAVE_HDF5
    snprintf(dir, sizeof dir, "%s/test_hdf5_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    unsetenv("HDF5_USE_FILE_LOCKING"); /* the lock test needs HDF5's locks */
    test_roundtrip();
    test_bad_files();
    test_hostile_files();
    test_refused_outputs();
    const char *names[] = {"r.h5", "r.xmf", "foreign.h5", "ints.h5", "rank4.h5", "noU.h5", "other.h5", "newer.h5", "text.h5", "empty.h5", "cut.h5"};
    int temps = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tpath(names[i]));
    temps = rmdir(dir) != 0;
    CHECK(!temps, "files left in %s", dir);
#endif
    return check_report();
}
